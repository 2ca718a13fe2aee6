"""Credentials: every kind over HTTP, and their values found nowhere they must not be."""

import logging
from typing import Any
from uuid import UUID

import asyncpg
import pytest
from litestar import Litestar

from domain.values import Grant
from infra.bootstrap import connect_nats
from infra.followers import global_log
from infra.jetstream.outbox_relay import Relay, ensure_stream
from infra.postgres.credential_vault import PostgresCredentialVault
from infra.postgres.units_of_work import SecretKeys
from infra.security.sealing import Sealer
from infra.settings import NatsSettings, RelaySettings
from tests.api.support import CREDENTIALS, call, project_all, token_for
from tests.jetstream import read_stream
from tests.openapi import assert_matches

pytestmark = [pytest.mark.api, pytest.mark.integration]

BASE = "/api/v1/asset/credentials"
# Each secret value carries this marker, so one search finds any of them anywhere.
MARK = "zz-never-shown"
TENANT = {"scope": "tenant"}

BODIES: dict[str, tuple[str, dict[str, Any], int]] = {
    "access-key": (
        "AccessKeyCreationRequest",
        {"accessKeyId": f"AKIA-{MARK}-1", "secretAccessKey": f"{MARK}-2"},
        202,
    ),
    "password": ("PasswordCreationRequest", {"user": "svc", "password": f"{MARK}-3"}, 202),
    "docker-registry": (
        "DockerRegistryCreationRequest",
        {"user": "$oauthtoken", "password": f"{MARK}-4", "url": "nvcr.io"},
        202,
    ),
    "generic-secret": (
        "GenericSecretCreationRequest",
        {"keyValuePairs": [{"key": "token", "value": f"{MARK}-5"}, {"key": "ssh", "value": MARK}]},
        204,
    ),
    "ngc-api-key": ("NgcApiKeyCreationRequest", {"ngc_api_key": f"{MARK}-6"}, 204),
}


def assert_no_secret(text: str | bytes, where: str) -> None:
    blob = text if isinstance(text, str) else text.decode(errors="replace")
    assert MARK not in blob, f"a credential value leaked into {where}"


async def test_every_kind_round_trips_and_no_value_is_found_anywhere(
    app: Litestar,
    admin: str,
    clean_pool: asyncpg.Pool,
    nats_url: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    responses: list[str] = []
    created: dict[str, str] = {}
    for segment, (schema, spec, _) in BODIES.items():
        body = {"meta": {"name": f"{segment}-cred", **TENANT}, "spec": spec}
        assert_matches(schema, body)
        response = await call(app, "POST", f"{BASE}/{segment}", admin, json=body)
        assert response.status_code == 202, response.text
        responses.append(response.text)
        created[segment] = response.json()["meta"]["id"]
        assert response.json()["spec"]["keyId"] == CREDENTIALS.key_id
        renamed = await call(
            app,
            "PUT",
            f"{BASE}/{segment}/{created[segment]}",
            admin,
            json={"meta": {"name": f"{segment}-renamed", "description": "rotated owner"}},
        )
        assert renamed.status_code == 202, renamed.text
        assert renamed.json()["meta"]["name"] == f"{segment}-renamed"
        responses.append(renamed.text)
    bad = await call(
        app,
        "POST",
        f"{BASE}/ngc-api-key",
        admin,
        json={"meta": {"name": "bad", **TENANT}, "spec": {"ngc_api_key": f"{MARK} with spaces"}},
    )
    assert bad.status_code == 400
    responses.append(bad.text)

    await project_all(clean_pool)
    for segment, asset_id in created.items():
        got = await call(app, "GET", f"{BASE}/{segment}/{asset_id}", admin)
        assert got.status_code == 200, got.text
        responses.append(got.text)
    combined = await call(app, "GET", BASE, admin, params={"usageInfo": "true"})
    assert_matches("CredentialsListResponse", combined.json())
    assert len(combined.json()["entries"]) == len(BODIES)
    responses.append(combined.text)
    generic = await call(app, "GET", f"{BASE}/generic-secret/{created['generic-secret']}", admin)
    assert generic.json()["spec"]["keyValuePairs"] == [{"key": "token"}, {"key": "ssh"}]

    for text in responses:
        assert_no_secret(text, "a response")
    for row in await clean_pool.fetch("SELECT data::text AS d, metadata::text AS m FROM events"):
        assert_no_secret(row["d"], "events.data")
        assert_no_secret(row["m"], "events.metadata")
    for row in await clean_pool.fetch(
        "SELECT meta::text AS m, spec::text AS s FROM asset_catalogue"
    ):
        assert_no_secret(row["m"] + row["s"], "the asset catalogue")
    for row in await clean_pool.fetch("SELECT sealed FROM credential_secrets"):
        assert_no_secret(bytes(row["sealed"]), "the sealed values")
    for message in await _relayed(clean_pool, nats_url):
        assert_no_secret(message, "a JetStream message")
    assert_no_secret(caplog.text, "the logs")

    # The sealed values open to exactly what was sent, and deleting destroys them.
    vault = PostgresCredentialVault(clean_pool, SecretKeys(sealer=Sealer(CREDENTIALS)))
    opened = await vault.open(UUID(created["password"]))
    assert opened == {"password": f"{MARK}-3"}
    for segment, (_, _, status) in BODIES.items():
        deleted = await call(app, "DELETE", f"{BASE}/{segment}/{created[segment]}", admin)
        assert deleted.status_code == status, deleted.text
    assert await clean_pool.fetchval("SELECT count(*) FROM credential_secrets") == 0
    assert await vault.open(UUID(created["password"])) is None


async def _relayed(pool: asyncpg.Pool, nats_url: str) -> list[bytes]:
    """Publish the log as the relay does, to a stream of this test's own, and read it back."""
    settings = NatsSettings(url=nats_url, stream="LEAKCHECK", subject_prefix="leakcheck")
    nc = await connect_nats(settings, name="leak-check")
    try:
        js = nc.jetstream()
        await ensure_stream(js, settings)
        relay = Relay(pool, nc, settings, RelaySettings(name="leak-check"))
        async with pool.acquire() as conn:
            cursor = await global_log.load_checkpoint(conn, relay.checkpoint_name)
            while True:
                cursor, read = await relay.relay_once(conn, cursor)
                if not read:
                    break
        held = await read_stream(js, "LEAKCHECK", "leakcheck.>")
    finally:
        await nc.close()
    assert held, "nothing was relayed"
    return [message.data + repr(message.headers).encode() for message in held]


@pytest.mark.parametrize(
    ("segment", "spec", "pointer"),
    [
        ("access-key", {"accessKeyId": "AKIA"}, "/spec/secretAccessKey"),
        (
            "access-key",
            {"existingSecretName": "s", "secretAccessKey": "x"},
            "/spec/secretAccessKey",
        ),
        ("access-key", {"user": "u"}, "/spec/user"),
        ("password", {"password": "p"}, "/spec/user"),
        ("password", {}, "/spec/password"),
        ("password", {"user": "u", "password": "p", "url": "x"}, "/spec/url"),
        ("docker-registry", {"user": "u", "password": "p"}, "/spec/url"),
        ("docker-registry", {"existingSecretName": "s", "user": "u"}, "/spec/user"),
        ("docker-registry", {"ngc_api_key": "k"}, "/spec/ngc_api_key"),
        ("generic-secret", {"keyValuePairs": []}, "/spec/keyValuePairs"),
        (
            "generic-secret",
            {"keyValuePairs": [{"key": "a", "value": "1"}, {"key": "a", "value": "2"}]},
            "/spec/keyValuePairs/1/key",
        ),
        ("generic-secret", {"keyValuePairs": [{"key": "a"}]}, "/spec/keyValuePairs/0/value"),
        ("ngc-api-key", {}, "/spec/ngc_api_key"),
        ("ngc-api-key", {"ngc_api_key": "has space"}, "/spec/ngc_api_key"),
        ("ngc-api-key", {"existingSecretName": "s"}, "/spec/existingSecretName"),
    ],
)
async def test_invalid_credentials_name_the_field_and_write_nothing(
    app: Litestar,
    admin: str,
    clean_pool: asyncpg.Pool,
    segment: str,
    spec: dict[str, Any],
    pointer: str,
) -> None:
    body = {"meta": {"name": "c", **TENANT}, "spec": spec}
    response = await call(app, "POST", f"{BASE}/{segment}", admin, json=body)
    assert response.status_code == 400, response.text
    assert pointer in [e["pointer"] for e in response.json()["errors"]], response.json()
    assert await clean_pool.fetchval("SELECT count(*) FROM credential_secrets") == 0
    count = "SELECT count(*) FROM events WHERE stream_type = 'credential'"
    assert await clean_pool.fetchval(count) == 0


async def test_a_credential_an_environment_uses_cannot_be_deleted(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    body = {"meta": {"name": "hf", **TENANT}, "spec": {"password": "p", "user": "u"}}
    credential = await call(app, "POST", f"{BASE}/password", admin, json=body)
    credential_id = credential.json()["meta"]["id"]
    variable = {"name": "HF_TOKEN", "credential": {"assetId": credential_id, "key": "password"}}
    environment = {
        "meta": {"name": "pt", **TENANT},
        "spec": {"image": "pt:2", "environmentVariables": [variable]},
    }
    made = await call(app, "POST", "/api/v1/asset/environment", admin, json=environment)
    assert made.status_code == 202, made.text
    # At once, as a script would: the refusal is decided where the deletion is written.
    refused = await call(app, "DELETE", f"{BASE}/password/{credential_id}", admin)
    assert refused.status_code == 412, refused.text
    assert "environment pt" in refused.json()["detail"]
    assert (
        await call(app, "DELETE", f"/api/v1/asset/environment/{made.json()['meta']['id']}", admin)
    ).status_code == 202
    assert (await call(app, "DELETE", f"{BASE}/password/{credential_id}", admin)).status_code == 202


async def test_private_is_only_for_registry_and_generic_credentials_and_viewers_cannot_create(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    body = {"meta": {"name": "k", "private": True, **TENANT}, "spec": {"ngc_api_key": "abc"}}
    refused = await call(app, "POST", f"{BASE}/ngc-api-key", admin, json=body)
    assert refused.status_code == 400
    assert refused.json()["errors"][0]["pointer"] == "/meta/private"
    viewer = await token_for(
        clean_pool, "viewer", (Grant(role="viewer", scope_kind="tenant", scope_id="tenant"),)
    )
    body = {"meta": {"name": "k", **TENANT}, "spec": {"ngc_api_key": "abc"}}
    assert (await call(app, "POST", f"{BASE}/ngc-api-key", viewer, json=body)).status_code == 403


async def test_a_project_editor_sees_and_manages_only_credentials_it_may(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    cluster = (await call(app, "POST", "/api/v1/clusters", admin, json={"name": "east"})).json()
    llm, vision = [
        (
            await call(
                app,
                "POST",
                "/api/v1/org-unit/projects",
                admin,
                json={"name": name, "clusterId": cluster["uuid"]},
            )
        ).json()
        for name in ("llm", "vision")
    ]
    grant = Grant(role="editor", scope_kind="project", scope_id=llm["id"])
    editor = await token_for(clean_pool, "llm-editor", (grant,))

    def body(project: dict[str, Any], name: str) -> dict[str, Any]:
        meta = {"name": name, "scope": "project", "projectId": int(project["id"])}
        return {"meta": meta, "spec": {"user": "u", "password": "p"}}

    mine = await call(app, "POST", f"{BASE}/password", editor, json=body(llm, "mine"))
    assert mine.status_code == 202, mine.text
    denied = await call(app, "POST", f"{BASE}/password", editor, json=body(vision, "theirs"))
    # a project out of the caller's sight answers as one that does not exist
    assert denied.status_code == 400, denied.text
    assert denied.json()["type"].endswith("/unknown-scope")
    theirs = await call(app, "POST", f"{BASE}/password", admin, json=body(vision, "theirs"))
    await project_all(clean_pool)
    hidden = await call(app, "GET", f"{BASE}/password/{theirs.json()['meta']['id']}", editor)
    assert hidden.status_code == 404
    listed = await call(app, "GET", BASE, editor)
    assert [e["meta"]["name"] for e in listed.json()["entries"]] == ["mine"]
    gone = await call(app, "DELETE", f"{BASE}/password/{theirs.json()['meta']['id']}", editor)
    assert gone.status_code == 404  # out of sight: as if missing
