"""The Litestar application factory; the lifespan opens (or is handed) the process's resources."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from litestar import Litestar
from litestar.datastructures import State
from litestar.di import Provide

from infra.bootstrap import Resources, open_resources
from infra.http.health import healthz, readyz
from infra.http.problems import EXCEPTION_HANDLERS
from infra.settings import Settings


def create_app(settings: Settings, *, resources: Resources | None = None) -> Litestar:
    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        if resources is not None:  # tests hand in ready-made resources
            app.state.resources = resources
            yield
            return
        async with open_resources(settings, role="api") as opened:
            app.state.resources = opened
            yield

    def provide_resources(state: State) -> Resources:
        provided: Resources = state.resources
        return provided

    def provide_settings() -> Settings:
        return settings

    return Litestar(
        route_handlers=[healthz, readyz],
        lifespan=[lifespan],
        dependencies={
            "resources": Provide(provide_resources, sync_to_thread=False),
            "settings": Provide(provide_settings, sync_to_thread=False),
        },
        exception_handlers=EXCEPTION_HANDLERS,  # type: ignore[arg-type]
        debug=False,
    )
