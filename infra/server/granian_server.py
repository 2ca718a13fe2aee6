"""The API under granian (`TRAINPLATE_API_SERVER=granian`): one worker process, which builds the
app from the settings `trainplate serve api` resolved, with its own logging and tracing, behind
the same trusted proxies."""

import os
from typing import Any, Final

import msgspec
from granian import Granian
from granian.constants import Interfaces
from granian.log import LogLevels
from granian.utils.proxies import wrap_asgi_with_proxy_headers

from infra.server.app import create_app
from infra.settings import Settings
from infra.telemetry import tracing
from infra.telemetry.log_records import configure_logging

# The resolved settings, handed to the worker process (the parent's own environment otherwise).
HANDED: Final = "TRAINPLATE_API_WORKER_SETTINGS"


def serve(settings: Settings) -> None:
    os.environ[HANDED] = msgspec.json.encode(settings).decode()
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
    settings = msgspec.json.decode(os.environ.pop(HANDED), type=Settings)
    configure_logging(settings.log_level, settings.log_format, process="api")
    tracing.configure(f"{settings.service_name}-api", os.environ)
    app = create_app(settings)
    if not settings.api_trusted_proxies:
        return app
    trusted = [a.strip() for a in settings.api_trusted_proxies.split(",") if a.strip()]
    return wrap_asgi_with_proxy_headers(app, trusted_hosts=trusted)
