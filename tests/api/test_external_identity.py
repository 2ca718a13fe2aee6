"""Users of an external identity provider: RS256 tokens checked against its JWKS, and roles
given to them by access rules naming their subject."""

import json
import threading
import time
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import asyncpg
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from litestar import Litestar

from infra.bootstrap import Resources, connect_nats
from infra.server.app import create_app
from infra.settings import AuthSettings, NatsSettings, Settings
from tests.api.support import AUTH, CREDENTIALS, call

pytestmark = [pytest.mark.api, pytest.mark.integration]

ISSUER = "https://idp.example.com/realms/ml"
AUDIENCE = "trainplate"
KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
STRANGER = rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture(scope="module")
def jwks_url() -> Iterator[str]:
    """The identity provider's JWKS document, served over HTTP as a real one would be."""
    jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(KEY.public_key()))
    body = json.dumps({"keys": [{**jwk, "kid": "key-1", "use": "sig", "alg": "RS256"}]}).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/certs"
    server.shutdown()
    server.server_close()


def user_token(subject: str, *, key: Any = KEY, kid: str = "key-1", **claims: Any) -> str:
    now = int(time.time())
    body = {"iss": ISSUER, "aud": AUDIENCE, "sub": subject, "iat": now, "exp": now + 300, **claims}
    return jwt.encode(body, key, algorithm="RS256", headers={"kid": kid})


@pytest.fixture
async def app(clean_pool: asyncpg.Pool, nats_url: str, jwks_url: str) -> AsyncIterator[Litestar]:
    auth = AuthSettings(
        signing_key=AUTH.signing_key,
        hash_time_cost=1,
        hash_memory_kib=8192,
        jwks_url=jwks_url,
        external_issuer=ISSUER,
        external_audience=AUDIENCE,
    )
    nc = await connect_nats(NatsSettings(url=nats_url), name="idp-tests")
    try:
        settings = Settings(auth=auth, credentials=CREDENTIALS, consistency_wait_s=0.1)
        yield create_app(settings, resources=Resources(clean_pool, nc, nc.jetstream()))
    finally:
        await nc.close()


async def test_a_user_gets_roles_by_access_rule_and_acts_as_themself(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    alice = user_token("alice@example.com")
    environment = {"meta": {"name": "pt", "scope": "tenant"}, "spec": {"image": "pt:2"}}
    listed = await call(app, "GET", "/api/v1/asset/environment", alice)
    assert listed.status_code == 200, listed.text
    assert (
        await call(app, "POST", "/api/v1/asset/environment", alice, json=environment)
    ).status_code == 403

    rule = {
        "subjectId": "alice@example.com",
        "subjectType": "user",
        "roleId": 2,
        "scopeId": "",
        "scopeType": "tenant",
    }
    granted = await call(app, "POST", "/api/v1/authorization/access-rules", admin, json=rule)
    assert granted.status_code == 201, granted.text
    made = await call(app, "POST", "/api/v1/asset/environment", alice, json=environment)
    assert made.status_code == 202, made.text
    assert made.json()["meta"]["createdBy"] == "alice@example.com"
    actor = await clean_pool.fetchval(
        "SELECT metadata::text FROM events WHERE type = 'environment.created.v1'"
    )
    assert json.loads(actor)["actorKind"] == "user"
    assert json.loads(actor)["actorSubject"] == "alice@example.com"


@pytest.mark.parametrize(
    ("token", "reason"),
    [
        (lambda: user_token("bob", aud="someone-else"), "audience"),
        (lambda: user_token("bob", iss="https://evil.example.com"), "issuer"),
        (lambda: user_token("bob", exp=int(time.time()) - 60), "expired"),
        (lambda: user_token("bob", key=STRANGER), "signature"),
        (lambda: user_token("bob", key=STRANGER, kid="key-2"), "signing key"),
    ],
)
async def test_bad_user_tokens_are_refused_saying_why(
    app: Litestar, token: Any, reason: str
) -> None:
    response = await call(app, "GET", "/api/v1/asset/environment", token())
    assert response.status_code == 401, response.text
    assert reason in response.json()["detail"]


async def test_a_user_whose_subject_is_no_uuid_is_authorised_like_anyone_else(
    app: Litestar, admin: str
) -> None:
    """Every external user's subject is some string: service accounts once answered it 500."""
    carol = user_token("carol@example.com")
    refused = await call(app, "GET", "/api/v1/service-accounts", carol)
    assert refused.status_code == 403, refused.text
    rule = {
        "subjectId": "carol@example.com",
        "subjectType": "user",
        "roleId": 1,  # admin
        "scopeId": "",
        "scopeType": "tenant",
    }
    granted = await call(app, "POST", "/api/v1/authorization/access-rules", admin, json=rule)
    assert granted.status_code == 201, granted.text
    listed = await call(app, "GET", "/api/v1/service-accounts", carol)
    assert listed.status_code == 200, listed.text
