"""Liveness and readiness: is the process up, and can it serve (database, broker, schema)?"""

import asyncio
from typing import Any

import asyncpg
import msgspec
from litestar import Request, Response, get
from litestar.di import NamedDependency
from litestar.status_codes import HTTP_200_OK, HTTP_503_SERVICE_UNAVAILABLE
from nats.js.errors import NotFoundError
from prometheus_client import generate_latest

from infra.bootstrap import Resources
from infra.followers import faults
from infra.followers.fanout_runner import NAME as FANOUT
from infra.followers.metrics import CONTENT_TYPE, lag_exposition, workloads_exposition
from infra.http.adapters import Adapters
from infra.http.consistency import STALE_READS
from infra.postgres.migrate import pending_migrations
from infra.settings import Settings
from infra.telemetry.meters import ApiMetrics
from projections import ALL, workload_catalogue

CHECK_TIMEOUT_S = 2.0


class Check(msgspec.Struct, frozen=True, omit_defaults=True):
    ready: bool
    detail: str = ""


class Readiness(msgspec.Struct, frozen=True):
    status: str
    checks: dict[str, Check]


@get("/healthz", sync_to_thread=False, include_in_schema=False, exclude_from_auth=True)
def healthz() -> dict[str, str]:
    return {"status": "ok"}


@get("/readyz", include_in_schema=False, exclude_from_auth=True)
async def readyz(
    request: Request[Any, Any, Any],
    adapters: NamedDependency[Adapters],
) -> Response[Readiness]:
    resources = _resources(request)
    database, migrations, followers = await _database_checks(resources.pool)
    checks = {
        "database": database,
        "migrations": migrations,
        "broker": await _broker(resources, adapters.settings),
        "followers": followers,
    }
    ready = all(check.ready for check in checks.values())
    return Response(
        Readiness("ready" if ready else "not ready", checks),
        status_code=HTTP_200_OK if ready else HTTP_503_SERVICE_UNAVAILABLE,
    )


def _resources(request: Request[Any, Any, Any]) -> Resources:
    resources: Resources = request.app.state.resources  # the wiring's (infra/server/app.py)
    return resources


async def _database_checks(pool: asyncpg.Pool) -> tuple[Check, Check, Check]:
    try:
        async with asyncio.timeout(CHECK_TIMEOUT_S), pool.acquire() as conn:
            pending = await pending_migrations(conn)
            stuck = {} if pending else await faults.stuck(conn)
    except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, TimeoutError) as exc:
        down = Check(False, f"database unreachable: {type(exc).__name__}")
        unknown = Check(False, "unknown: database unreachable")
        return down, unknown, unknown
    migrations = Check(True) if not pending else Check(False, f"pending: {pending}")
    # A read model stuck on an event serves ever older answers: not ready, saying where.
    followers = Check(not stuck, "; ".join(fault.describe() for fault in stuck.values()))
    return Check(True), migrations, followers


async def _broker(resources: Resources, settings: Settings) -> Check:
    if not resources.nc.is_connected:
        return Check(False, "not connected")
    try:
        async with asyncio.timeout(CHECK_TIMEOUT_S):
            await resources.js.stream_info(settings.nats.stream)
    except NotFoundError:
        return Check(True, f"stream {settings.nats.stream} not created yet (the relay creates it)")
    except Exception as exc:  # any broker failure means "not ready", never a 500
        return Check(False, f"JetStream unavailable: {type(exc).__name__}")
    return Check(True)


@get("/metrics", include_in_schema=False, exclude_from_auth=True)
async def metrics(
    request: Request[Any, Any, Any],
    adapters: NamedDependency[Adapters],
) -> Response[bytes]:
    """Prometheus text: this process's requests and failed logins, how far the relay (the outbox
    backlog) and each read model trail the log, and the workloads of each phase. No secret is in
    it, so scrapers need no token."""
    followers = [("relay", f"relay:{adapters.settings.relay.name}")]
    followers += [(name, f"projection:{name}") for name in (*(p.name for p in ALL), FANOUT)]
    async with _resources(request).pool.acquire() as conn:
        body = await lag_exposition(conn, followers)
        body += workloads_exposition(await workload_catalogue.phase_counts(conn))
    api: ApiMetrics = request.app.state.metrics
    body += generate_latest(STALE_READS) + generate_latest(api.registry)
    return Response(body, media_type=CONTENT_TYPE)
