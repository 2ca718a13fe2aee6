"""What API tests share: an app over the test servers, callers with tokens, and a way to bring
every read model up to date before a read."""

import re
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from uuid import uuid4

import asyncpg
import httpx
from litestar import Litestar

from domain.commands import CreateApplication
from domain.events import EventMetadata
from domain.values import TENANT_ADMIN, Grant
from infra.bootstrap import Resources, connect_nats
from infra.followers.global_log import load_checkpoint
from infra.followers.log_runner import LogRunner
from infra.postgres.application_registry import PostgresApplicationRegistry
from infra.postgres.streams import PostgresStreams
from infra.postgres.units_of_work import SecretKeys
from infra.security.access_tokens import TokenIssuer
from infra.security.secret_hashing import SecretHasher
from infra.serialization import DOMAIN_CODEC
from infra.server.app import create_app
from infra.settings import (
    AuthSettings,
    CredentialSettings,
    NatsSettings,
    RegistrySettings,
    Settings,
)
from services.applications import create_application
from tests.api.client import client_for
from tests.openapi import assert_answer_matches
from tests.runners import every_runner

AUTH = AuthSettings(signing_key="k" * 48, hash_time_cost=1, hash_memory_kib=8192)
CREDENTIALS = CredentialSettings(encryption_key="c2VhbGluZy1rZXktZm9yLXRlc3RzLW9ubHktMzJieXQ=")
# The same keys and hashing for a `trainplate serve` process (tests/processes.py `serve`).
SERVE_KEYS = {
    "AUTH__SIGNING_KEY": AUTH.signing_key or "",
    "AUTH__HASH_TIME_COST": str(AUTH.hash_time_cost),
    "AUTH__HASH_MEMORY_KIB": str(AUTH.hash_memory_kib),
    "CREDENTIALS__ENCRYPTION_KEY": CREDENTIALS.encryption_key or "",
}


@asynccontextmanager
async def api_app(pool: asyncpg.Pool, nats_url: str) -> AsyncIterator[Litestar]:
    """The app over the test servers (the caller's pool is a clean one). No projector follows
    the log here (tests bring the read models up with `project_all`), so a read after a write
    would wait out the whole read-your-writes bound: it is short."""
    nc = await connect_nats(NatsSettings(url=nats_url), name="api-tests")
    try:
        yield create_app(
            Settings(
                auth=AUTH,
                credentials=CREDENTIALS,
                consistency_wait_s=0.1,
                registries=RegistrySettings(allow_loopback=True),  # the stand-in registries
            ),
            resources=Resources(pool, nc, nc.jetstream()),
        )
    finally:
        await nc.close()


async def token_for(pool: asyncpg.Pool, name: str, grants: tuple[Grant, ...]) -> str:
    """Register an application with these grants and return a bearer token for it."""
    keys = SecretKeys(hasher=SecretHasher(AUTH))
    app_store = PostgresStreams(pool, DOMAIN_CODEC, keys=keys)
    registry = PostgresApplicationRegistry(app_store, pool, keys)
    metadata = EventMetadata(actor_subject="setup", actor_kind="system")
    command = CreateApplication(application_id=uuid4(), name=name, grants=grants, metadata=metadata)
    await create_application(command, secret=f"{name}-secret", store=app_store, registry=registry)
    return TokenIssuer(AUTH).issue(command.application_id, name).access_token


async def call(
    app: Litestar,
    method: str,
    path: str,
    token: str | None,
    headers: dict[str, str] | None = None,
    **kw: object,
) -> httpx.Response:
    """One request, as a client sends it. Every answer whose body Run:ai's document describes
    is checked against it, lists, deletes and refusals included."""
    async with client_for(app) as client:
        return await sent(client, method, path, token, headers, **kw)


async def sent(
    client: httpx.AsyncClient,
    method: str,
    path: str,
    token: str | None,
    headers: dict[str, str] | None = None,
    **kw: object,
) -> httpx.Response:
    """As `call`, through a client that stays open (one app lifespan: one API process, with
    what it keeps in memory from one request to the next)."""
    headers = {**(headers or {}), **({"authorization": f"Bearer {token}"} if token else {})}
    answer = await client.request(method, path, headers=headers, **kw)  # type: ignore[arg-type]
    if answer.content and answer.headers.get("content-type", "").endswith("json"):
        assert_answer_matches(method, path, answer.status_code, answer.json())
    return answer


async def project_all(pool: asyncpg.Pool) -> None:
    """Bring every read model to the end of the log, as the projector process would."""
    # The fan-out first: the template events it appends are then projected too.
    await run_to_the_end(pool, every_runner(pool))


async def run_to_the_end(pool: asyncpg.Pool, runners: Sequence[LogRunner]) -> None:
    """Each of these followers of the log, in turn, to the end of the log as it is now."""
    async with pool.acquire() as conn:
        for runner in runners:
            cursor = await load_checkpoint(conn, runner.checkpoint_name)
            while True:
                cursor, read = await runner.step(conn, cursor)
                if read == 0:
                    break


_CSRF = re.compile(r'name="_csrf_token" value="([^"]+)"')


async def console_admin(client: httpx.AsyncClient, pool: asyncpg.Pool) -> str:
    """A new tenant admin signed in through the console (`console_session`)."""
    name = f"console-{uuid4().hex[:8]}"
    await token_for(pool, name, (TENANT_ADMIN,))
    return await console_session(client, name)


async def console_session(client: httpx.AsyncClient, name: str) -> str:
    """Sign the application `name` in through the console's form (the session stays in
    `client`); a CSRF token for the session's forms."""
    page = await client.get("/console/sign-in")
    found = _CSRF.search(page.text)
    assert found is not None, page.text
    form = {"client_id": name, "client_secret": f"{name}-secret", "_csrf_token": found[1]}
    assert (await client.post("/console/sign-in", data=form)).status_code == 303
    found = _CSRF.search((await client.get("/console/templates")).text)
    assert found is not None
    return found[1]
