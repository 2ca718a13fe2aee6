"""The tenant always keeps one enabled admin: deleting, disabling or revoking the last one is a
409 that writes nothing, and two admins removing each other at once cannot both succeed."""

import asyncio

import asyncpg
import jwt
import pytest
from litestar import Litestar

from tests.api.client import client_for
from tests.api.support import call
from tests.api.test_access_rules import login

pytestmark = [pytest.mark.api, pytest.mark.integration]

ACCOUNTS = "/api/v1/service-accounts"
RULES = "/api/v1/authorization/access-rules"
ADMIN_ROLE = 1


def account_id(token: str) -> str:
    """The service account a token speaks for (its subject)."""
    return str(jwt.decode(token, options={"verify_signature": False})["sub"])


async def second_admin(app: Litestar, admin: str, name: str) -> tuple[str, str, int]:
    """A service account made tenant admin by an access rule: its id, token and rule id."""
    made = await call(app, "POST", ACCOUNTS, admin, json={"name": name})
    assert made.status_code == 201, made.text
    rule = await call(app, "POST", RULES, admin, json={
        "subjectId": made.json()["id"], "subjectType": "service-account",
        "roleId": ADMIN_ROLE, "scopeType": "tenant", "scopeId": "tenant",
    })  # fmt: skip
    assert rule.status_code == 201, rule.text
    token = await login(app, name, made.json()["clientSecret"])
    return str(made.json()["id"]), token, int(rule.json()["id"])


async def test_the_last_admin_cannot_delete_disable_or_lose_its_role(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    root = account_id(admin)
    before = await clean_pool.fetchval("SELECT count(*) FROM events")
    for method, body in (("DELETE", None), ("PATCH", {"enabled": False})):
        refused = await call(app, method, f"{ACCOUNTS}/{root}", admin, json=body)
        assert refused.status_code == 409, refused.text
        assert refused.json()["type"].endswith("/last-tenant-admin")
    assert await clean_pool.fetchval("SELECT count(*) FROM events") == before

    # With a second admin, the first may go; then the second is the last, its rule included.
    second, token, rule = await second_admin(app, admin, "ops")
    assert (await call(app, "DELETE", f"{ACCOUNTS}/{root}", admin)).status_code < 300
    revoked = await call(app, "DELETE", f"{RULES}/{rule}", token)
    assert revoked.status_code == 409, revoked.text
    disabled = await call(app, "PATCH", f"{ACCOUNTS}/{second}", token, json={"enabled": False})
    assert disabled.status_code == 409, disabled.text
    # ... and it is still the tenant's admin.
    cluster = await call(app, "POST", "/api/v1/clusters", token, json={"name": "east"})
    assert cluster.status_code == 201, cluster.text


async def test_two_admins_disabling_each_other_at_once_leave_one(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    root = account_id(admin)
    second, token, _ = await second_admin(app, admin, "ops")
    async with client_for(app) as client:
        answers = await asyncio.gather(
            client.patch(f"{ACCOUNTS}/{second}", json={"enabled": False},
                         headers={"authorization": f"Bearer {admin}"}),
            client.patch(f"{ACCOUNTS}/{root}", json={"enabled": False},
                         headers={"authorization": f"Bearer {token}"}),
        )  # fmt: skip
    # The second to be decided is refused: as the last admin (409); when the first had committed
    # before it was even authenticated, as a disabled account (401); when the first committed
    # between its authentication and its use case's check of the caller's role, as no longer
    # an admin (403).
    codes = sorted(a.status_code for a in answers)
    assert codes in ([200, 401], [200, 403], [200, 409]), [a.text for a in answers]
    assert await clean_pool.fetchval("SELECT count(*) FROM tenant_admins") == 1
