"""The API under granian (`TRAINPLATE_API_SERVER=granian`): one worker process, which builds the
app from the environment as `trainplate serve api` does, behind the same trusted proxies."""

import os
from typing import Any

from granian import Granian
from granian.constants import Interfaces
from granian.log import LogLevels
from granian.utils.proxies import wrap_asgi_with_proxy_headers

from infra.server.app import create_app
from infra.settings import Settings


def serve(settings: Settings) -> None:
    Granian(
        f"{__name__}:app_from_environment",
        address=settings.api_host,
        port=settings.api_port,
        interface=Interfaces.ASGI,
        workers=1,
        factory=True,
        log_level=LogLevels(settings.log_level.lower()),
    ).serve()


def app_from_environment() -> Any:
    """The worker's app: granian imports this in its own process."""
    settings = Settings.from_env(os.environ)
    app = create_app(settings)
    if not settings.api_trusted_proxies:
        return app
    trusted = [a.strip() for a in settings.api_trusted_proxies.split(",") if a.strip()]
    return wrap_asgi_with_proxy_headers(app, trusted_hosts=trusted)
