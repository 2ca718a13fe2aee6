"""A write does not ask the database for its caller's standing as it starts: its API process
takes the epochs it last found, and checks them where the write takes effect
(infra/postgres/writer_standing.py). A token revoked through another API process in between is
refused before anything is written, whatever the write: a named creation (checked in its own
statement), any other (checked on the first connection the pool hands it), or one that never
reaches the database (checked before its answer). A token that still holds writes once, however
the epochs moved. Two apps over one database, each kept running across its requests, stand for
two API processes."""

from typing import Any

import asyncpg
import jwt
import pytest
from litestar import Litestar

from domain.values import TENANT_ADMIN
from tests.api.support import sent, token_for
from tests.api.test_console_sign_out import _CSRF, _signed_in, _token_in
from tests.api.test_in_use import ENVIRONMENTS, TEMPLATES, template
from tests.api.test_remembered_reads import environment, two_processes, written

pytestmark = [pytest.mark.api, pytest.mark.integration]

APPS = "/api/v1/apps"
IMAGE = "nvcr.io/nvidia/pytorch:25.01-py3"


def application_of(token: str) -> str:
    return str(jwt.decode(token, options={"verify_signature": False})["sub"])


async def events_of(pool: asyncpg.Pool, stream_id: str) -> int:
    return int(await pool.fetchval("SELECT count(*) FROM events WHERE stream_id = $1", stream_id))


async def logged(pool: asyncpg.Pool) -> int:
    """How many events the log holds."""
    return int(await pool.fetchval("SELECT count(*) FROM events"))


REVOCATIONS: dict[str, tuple[str, str, dict[str, Any] | None]] = {
    "secret regenerated": ("POST", "{app}/secret", None),
    "disabled": ("PATCH", "{app}", {"enabled": False}),
}
# The first write after the revocation, by where its standing is checked: in the creation's own
# statement, on the first connection the pool hands it, before an answer made without one.
WRITES: dict[str, tuple[str, str, dict[str, Any]]] = {
    "create": ("POST", TEMPLATES, template("second")),
    "update": ("PUT", ENVIRONMENTS + "/{env}", {"meta": {"name": "pt"}, "spec": {"image": IMAGE}}),
    "malformed": ("POST", TEMPLATES, {"meta": {"name": 7}}),
}


@pytest.mark.parametrize("write", sorted(WRITES))
@pytest.mark.parametrize("revocation", sorted(REVOCATIONS))
async def test_a_token_revoked_through_another_process_writes_nothing(
    app: Litestar,
    admin: str,
    clean_pool: asyncpg.Pool,
    nats_url: str,
    revocation: str,
    write: str,
) -> None:
    bot = await token_for(clean_pool, "bot", (TENANT_ADMIN,))
    method, path, body = REVOCATIONS[revocation]
    async with two_processes(app, clean_pool, nats_url) as (one, two):
        env = await environment(one, bot)  # `one` now knows the epochs and the bot's standing
        first = await sent(one, "POST", TEMPLATES, bot, json=template("first", environment=env))
        assert first.status_code == 202, first.text
        log = await logged(clean_pool)
        where = f"{APPS}/" + path.format(app=application_of(bot))
        revoked = await sent(two, method, where, admin, json=body)
        assert revoked.is_success, revoked.text
        revocation_written = await logged(clean_pool)

        method, path, body = WRITES[write]
        if write == "create":
            body = {**body, "assets": {"environment": env}}
        refused = await sent(one, method, path.format(env=env), bot, json=body)

        assert refused.status_code == 401, refused.text
        assert "revoked" in refused.json()["message"]
        assert revocation_written == log + 1
        assert await logged(clean_pool) == revocation_written  # nothing since


async def test_a_session_signed_out_through_another_process_creates_nothing_more(
    app: Litestar, clean_pool: asyncpg.Pool, nats_url: str
) -> None:
    """A sign-out moves no stream the creation was decided on (the application's is unchanged):
    the creation's own statement is what finds the epoch moved."""
    await token_for(clean_pool, "console-bot", (TENANT_ADMIN,))
    async with two_processes(app, clean_pool, nats_url) as (one, two):
        held = _token_in(await _signed_in(two, "console-bot"))
        env = await environment(one, held)
        first = await sent(one, "POST", TEMPLATES, held, json=template("first", environment=env))
        assert first.status_code == 202, first.text  # `one` remembers what it was decided on
        csrf = _CSRF.search((await two.get("/console/templates")).text)
        assert csrf is not None
        out = await two.post("/console/sign-out", data={"_csrf_token": csrf[1]})
        assert out.status_code == 303, out.text

        second = await sent(one, "POST", TEMPLATES, held, json=template("second", environment=env))

        assert second.status_code == 401, second.text
        assert "signed out" in second.json()["message"]
        assert await written(clean_pool, "second") == 0


async def test_a_token_that_holds_writes_once_though_the_epochs_moved_in_between(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool, nats_url: str
) -> None:
    async with two_processes(app, clean_pool, nats_url) as (one, two):
        env = await environment(one, admin)
        first = await sent(one, "POST", TEMPLATES, admin, json=template("first", environment=env))
        assert first.status_code == 202, first.text
        # Another application's secret regenerated through `two`: the epoch `one` knows is old.
        other = await token_for(clean_pool, "other", ())
        renewed = await sent(two, "POST", f"{APPS}/{application_of(other)}/secret", admin)
        assert renewed.status_code == 200, renewed.text

        second = await sent(one, "POST", TEMPLATES, admin, json=template("second", environment=env))
        assert second.status_code == 202, second.text
        assert await written(clean_pool, "second") == 1
        moved = await sent(two, "POST", f"{APPS}/{application_of(other)}/secret", admin)
        assert moved.status_code == 200, moved.text
        changed = await sent(one, "PUT", f"{ENVIRONMENTS}/{env}", admin, json={
            "meta": {"name": "pt"}, "spec": {"image": IMAGE},
        })  # fmt: skip
        assert changed.status_code == 202, changed.text
        assert changed.json()["spec"]["image"] == IMAGE
        assert await events_of(clean_pool, env) == 2
