"""Registries over HTTP in Run:ai's shapes, against a registry stand-in that speaks the OCI
distribution API: create, list, get, update and delete; repositories and tags asked of the
registry itself; a password found nowhere but the vault; callers out of sight answered as for
no registry; and templates that pick their image from a registry, which keep it from being
deleted."""

import json
import logging
from collections.abc import AsyncIterator
from typing import Any
from uuid import UUID, uuid4

import asyncpg
import pytest
from litestar import Litestar

from domain.values import Grant
from infra.cli.embedded import free_port
from infra.postgres.credential_vault import PostgresCredentialVault
from infra.postgres.units_of_work import SecretKeys
from infra.security.sealing import Sealer
from tests.api.support import CREDENTIALS, call, project_all, token_for
from tests.api.test_credentials import _relayed
from tests.api.test_workloads import WORKLOADS, setup, submission
from tests.oci_stand_in import OciStandIn, serving
from tests.openapi import assert_matches

pytestmark = [pytest.mark.api, pytest.mark.integration]

REGISTRIES = "/api/v1/asset/registries"
TEMPLATES = "/api/v1/workload-templates/distributed"
MARK = "zz-registry-password"
IMAGES = {
    "nvidia/pytorch": ["24.05-py3", "24.06-py3", "latest"],
    "nvidia/tensorflow": ["24.05-tf2-py3"],
    "team/trainer": ["v1", "v2"],
}


def registry(name: str, url: str, password: str = MARK, **meta: Any) -> dict[str, Any]:
    return {
        "meta": {"name": name, "scope": "tenant", **meta},
        "spec": {"url": url, "credentialKind": "password", "user": "puller", "password": password},
    }


@pytest.fixture
async def stand_in() -> AsyncIterator[OciStandIn]:
    async with serving(OciStandIn(IMAGES, auth="bearer", password=MARK, page_cap=2)) as found:
        yield found


async def made(app: Litestar, token: str, body: dict[str, Any]) -> dict[str, Any]:
    assert_matches("RegistryCreationRequest", body)
    response = await call(app, "POST", REGISTRIES, token, json=body)
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


async def test_a_registry_round_trips_and_its_password_is_found_nowhere(
    app: Litestar,
    admin: str,
    clean_pool: asyncpg.Pool,
    nats_url: str,
    stand_in: OciStandIn,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    texts: list[str] = []
    created = await made(app, admin, registry("ngc", stand_in.url, description="private NGC"))
    registry_id = created["meta"]["id"]
    await project_all(clean_pool)  # no projector follows the log here
    assert created["meta"]["kind"] == "registry"
    assert created["spec"] == {
        "url": stand_in.url,
        "credentialKind": "password",
        "user": "puller",
        "password": "********",
    }
    got = await call(app, "GET", f"{REGISTRIES}/{registry_id}", admin)
    assert got.status_code == 200, got.text
    assert got.json()["meta"]["description"] == "private NGC"
    listed = await call(app, "GET", REGISTRIES, admin, params={"name": "ngc"})
    assert [e["meta"]["id"] for e in listed.json()["entries"]] == [registry_id]
    assert (await call(app, "GET", REGISTRIES, admin, params={"name": "x"})).json() == {
        "entries": []
    }

    repositories = await call(app, "GET", f"{REGISTRIES}/{registry_id}/repositories", admin)
    assert repositories.status_code == 200, repositories.text
    assert repositories.json() == {"repositories": sorted(IMAGES)}
    searched = await call(
        app, "GET", f"{REGISTRIES}/{registry_id}/repositories", admin, params={"searchName": "NV"}
    )
    assert searched.json() == {"repositories": ["nvidia/pytorch", "nvidia/tensorflow"]}
    tags = await call(
        app,
        "GET",
        f"{REGISTRIES}/{registry_id}/repositories/tags",
        admin,
        params={"repository": "nvidia/pytorch", "searchName": "24"},
    )
    assert tags.status_code == 200, tags.text
    assert tags.json() == {"name": "nvidia/pytorch", "tags": ["24.05-py3", "24.06-py3"]}

    # runapy's update sends the meta alone: the rest stays, the password too.
    renamed = await call(
        app, "PUT", f"{REGISTRIES}/{registry_id}", admin, json={"meta": {"name": "ngc-eu"}}
    )
    assert renamed.status_code == 200, renamed.text
    assert renamed.json()["meta"]["name"] == "ngc-eu"
    assert renamed.json()["meta"]["updateCount"] == 2
    # What a GET showed, sent back, changes nothing (the mask keeps the password).
    same = {"meta": {"name": "ngc-eu"}, "spec": {**created["spec"]}}
    again = await call(app, "PUT", f"{REGISTRIES}/{registry_id}", admin, json=same)
    assert again.json()["meta"]["updateCount"] == 2
    texts += [json.dumps(created), got.text, listed.text, renamed.text, again.text]

    await project_all(clean_pool)
    still = await call(app, "GET", f"{REGISTRIES}/{registry_id}", admin)
    assert still.json()["meta"]["name"] == "ngc-eu"
    texts.append(still.text)

    for text in texts:
        assert MARK not in text, "the password leaked into a response"
    for row in await clean_pool.fetch("SELECT data::text AS d, metadata::text AS m FROM events"):
        assert MARK not in row["d"] + row["m"], "the password leaked into an event"
    for row in await clean_pool.fetch(
        "SELECT meta::text AS m, spec::text AS s FROM asset_catalogue"
    ):
        assert MARK not in row["m"] + row["s"], "the password leaked into the read model"
    for message in await _relayed(clean_pool, nats_url):
        assert MARK.encode() not in message, "the password leaked into a JetStream message"
    assert MARK not in caplog.text, "the password leaked into the logs"

    vault = PostgresCredentialVault(clean_pool, SecretKeys(sealer=Sealer(CREDENTIALS)))
    assert await vault.open(UUID(registry_id)) == {"password": MARK}
    deleted = await call(app, "DELETE", f"{REGISTRIES}/{registry_id}", admin)
    assert deleted.status_code == 204, deleted.text
    assert await vault.open(UUID(registry_id)) is None  # the password is destroyed with it
    await project_all(clean_pool)
    gone = await call(app, "GET", f"{REGISTRIES}/{registry_id}", admin)
    assert gone.status_code == 404
    assert (await call(app, "DELETE", f"{REGISTRIES}/{registry_id}", admin)).status_code == 204


async def test_a_new_url_or_user_needs_the_password_again(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool, stand_in: OciStandIn
) -> None:
    registry_id = (await made(app, admin, registry("ngc", stand_in.url)))["meta"]["id"]
    path = f"{REGISTRIES}/{registry_id}"
    elsewhere = {"meta": {"name": "ngc"}, "spec": {"url": "https://attacker.example.com"}}
    refused = await call(app, "PUT", path, admin, json=elsewhere)
    assert refused.status_code == 400, refused.text
    assert [e["pointer"] for e in refused.json()["errors"]] == ["/spec/password"]
    masked = {"meta": {"name": "ngc"}, "spec": {"user": "other", "password": "********"}}
    assert (await call(app, "PUT", path, admin, json=masked)).status_code == 400
    assert await clean_pool.fetchval("SELECT count(*) FROM events WHERE stream_id = $1", UUID(
        registry_id
    )) == 1  # fmt: skip

    # Moved with a new password: the new login reaches the new place, and only it.
    async with serving(OciStandIn(IMAGES, auth="basic", user="bot", password="new-one")) as moved:
        body = {
            "meta": {"name": "ngc"},
            "spec": {"url": moved.url, "user": "bot", "password": "new-one"},
        }
        changed = await call(app, "PUT", path, admin, json=body)
        assert changed.status_code == 200, changed.text
        assert changed.json()["spec"]["url"] == moved.url
        await project_all(clean_pool)
        listed = await call(app, "GET", f"{path}/repositories", admin)
        assert listed.status_code == 200, listed.text
        assert listed.json()["repositories"] == sorted(IMAGES)
    assert not [h for h in stand_in.authorizations if "new-one" in h]


@pytest.mark.parametrize(
    ("spec", "pointer"),
    [
        ({"url": "ftp://registry.example.com"}, "/spec/url"),
        ({"url": "https://bot:hunter2@registry.example.com"}, "/spec/url"),
        ({"url": "https://registry.example.com/?x=1"}, "/spec/url"),
        ({"url": "https://:5000"}, "/spec/url"),
        ({"url": "https://registry.example.com:99999"}, "/spec/url"),
        ({"url": "https://registry example.com"}, "/spec/url"),
        ({"credentialKind": "token"}, "/spec/credentialKind"),
        ({"password": ""}, "/spec/password"),
        ({"user": None}, "/spec/user"),
    ],
)
async def test_an_invalid_registry_names_the_field_and_writes_nothing(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool, spec: dict[str, Any], pointer: str
) -> None:
    body = registry("bad", "https://registry.example.com")
    body["spec"] = {k: v for k, v in {**body["spec"], **spec}.items() if v is not None}
    response = await call(app, "POST", REGISTRIES, admin, json=body)
    assert response.status_code == 400, response.text
    assert pointer in [e["pointer"] for e in response.json()["errors"]], response.json()
    assert (
        await clean_pool.fetchval("SELECT count(*) FROM events WHERE stream_type = 'registry'") == 0
    )
    assert await clean_pool.fetchval("SELECT count(*) FROM credential_secrets") == 0


async def test_a_private_registry_and_a_taken_name_are_refused(
    app: Litestar, admin: str, stand_in: OciStandIn
) -> None:
    private = await call(
        app, "POST", REGISTRIES, admin, json=registry("p", stand_in.url, private=True)
    )
    assert private.status_code == 400
    assert private.json()["errors"][0]["pointer"] == "/meta/private"
    await made(app, admin, registry("ngc", stand_in.url))
    taken = await call(app, "POST", REGISTRIES, admin, json=registry("ngc", stand_in.url))
    assert taken.status_code == 409, taken.text


async def org(app: Litestar, admin: str) -> dict[str, str]:
    cluster = (await call(app, "POST", "/api/v1/clusters", admin, json={"name": "c"})).json()
    projects = {"cluster": cluster["uuid"]}
    for name in ("a", "b"):
        body = {"name": name, "clusterId": cluster["uuid"]}
        projects[name] = (
            await call(app, "POST", "/api/v1/org-unit/projects", admin, json=body)
        ).json()["id"]
    return projects


async def test_a_caller_out_of_sight_is_answered_as_for_no_registry(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool, stand_in: OciStandIn
) -> None:
    units = await org(app, admin)
    in_b = registry("b-only", stand_in.url, scope="project", projectId=int(units["b"]))
    registry_id = (await made(app, admin, in_b))["meta"]["id"]
    viewer_a = await token_for(
        clean_pool, "a-viewer", (Grant(role="viewer", scope_kind="project", scope_id=units["a"]),)
    )
    viewer_b = await token_for(
        clean_pool, "b-viewer", (Grant(role="viewer", scope_kind="project", scope_id=units["b"]),)
    )
    await project_all(clean_pool)
    one = f"{REGISTRIES}/{registry_id}"
    probes: list[tuple[str, str, dict[str, Any]]] = [
        ("GET", one, {}),
        ("GET", f"{one}/repositories", {}),
        ("GET", f"{one}/repositories/tags", {"params": {"repository": "nvidia/pytorch"}}),
        ("PUT", one, {"json": {"meta": {"name": "mine"}}}),
        ("DELETE", one, {}),
    ]
    for method, path, kw in probes:
        answer = await call(app, method, path, viewer_a, **kw)
        assert answer.status_code == 404, (method, path, answer.text)
    assert (await call(app, "GET", REGISTRIES, viewer_a)).json() == {"entries": []}

    # A viewer of b sees it and may list what it holds, but may not change it.
    assert (await call(app, "GET", one, viewer_b)).status_code == 200
    assert (await call(app, "GET", f"{one}/repositories", viewer_b)).status_code == 200
    refused = await call(app, "PUT", one, viewer_b, json={"meta": {"name": "mine"}})
    assert refused.status_code == 403, refused.text
    assert (await call(app, "DELETE", one, viewer_b)).status_code == 403
    tenant_wide = await call(app, "POST", REGISTRIES, viewer_b, json=registry("t", stand_in.url))
    assert tenant_wide.status_code == 403


async def test_a_registry_that_fails_is_a_named_problem_never_a_server_error(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool, stand_in: OciStandIn
) -> None:
    path = REGISTRIES + "/{}/repositories"
    closed = await made(app, admin, registry("closed", f"http://127.0.0.1:{free_port()}"))
    wrong = await made(app, admin, registry("wrong", stand_in.url, password="not-it"))
    good = (await made(app, admin, registry("good", stand_in.url)))["meta"]["id"]
    await project_all(clean_pool)
    unreachable = await call(app, "GET", path.format(closed["meta"]["id"]), admin)
    assert unreachable.status_code == 502, unreachable.text
    assert unreachable.json()["type"] == "/problems/registry-unreachable"
    assert unreachable.json()["code"] == 502
    assert unreachable.json()["message"]

    refused = await call(app, "GET", path.format(wrong["meta"]["id"]), admin)
    assert refused.status_code == 502
    assert refused.json()["type"] == "/problems/registry-refused"
    assert "not-it" not in refused.text

    tags = f"{REGISTRIES}/{good}/repositories/tags"
    unknown = await call(app, "GET", tags, admin, params={"repository": "nobody/here"})
    assert unknown.status_code == 404, unknown.text
    assert unknown.json()["type"] == "/problems/repository-not-found"
    for bad in ("../../etc", "UPPER", "a//b", "x?n=1", ""):
        invalid = await call(app, "GET", tags, admin, params={"repository": bad})
        assert invalid.status_code == 400, (bad, invalid.text)
        assert invalid.json()["errors"][0]["pointer"] == "repository"
    missing = await call(app, "GET", tags, admin)
    assert missing.status_code == 400

    stand_in.misbehave = "html"
    garbage = await call(app, "GET", path.format(good), admin)
    assert garbage.status_code == 502
    assert garbage.json()["type"] == "/problems/registry-bad-answer"
    assert (
        await call(app, "GET", f"{REGISTRIES}/{uuid4()}/repositories", admin)
    ).status_code == 404


def ngc_template(name: str, registry_id: str | None, **scope: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "distributedFramework": "PyTorch",
        "numWorkers": 2,
        "image": "registry.example.com/nvidia/pytorch:24.05-py3",
        "imageSource": "ngcPrivateRegistry",
    }
    if registry_id is not None:
        spec["imageRegistryId"] = registry_id
    return {"meta": {"name": name, "scopeType": "tenant", **scope}, "spec": spec}


async def test_a_template_picks_its_image_from_a_registry_its_scope_can_use(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool, stand_in: OciStandIn
) -> None:
    units = await org(app, admin)
    in_a = registry("a-ngc", stand_in.url, scope="project", projectId=int(units["a"]))
    registry_a = (await made(app, admin, in_a))["meta"]["id"]
    tenant = (await made(app, admin, registry("ngc", stand_in.url)))["meta"]["id"]
    in_b = {"scopeType": "project", "scopeId": units["b"]}

    for body, pointer in [
        (ngc_template("none", None), "/spec/imageRegistryId"),
        (ngc_template("other", registry_a, **in_b), "/spec/imageRegistryId"),
        (ngc_template("ghost", str(uuid4())), "/spec/imageRegistryId"),
    ]:
        refused = await call(app, "POST", TEMPLATES, admin, json=body)
        assert refused.status_code == 400, refused.text
        assert refused.json()["errors"][0]["pointer"] == pointer
    custom = ngc_template("custom", tenant)
    custom["spec"]["imageSource"] = "custom"
    refused = await call(app, "POST", TEMPLATES, admin, json=custom)
    assert refused.status_code == 400
    assert "only with imageSource ngcPrivateRegistry" in refused.text
    assert (
        await clean_pool.fetchval("SELECT count(*) FROM events WHERE stream_type = 'template'") == 0
    )

    accepted = await call(app, "POST", TEMPLATES, admin, json=ngc_template("pt", tenant, **in_b))
    assert accepted.status_code == 202, accepted.text
    template_id = accepted.json()["meta"]["id"]
    assert accepted.json()["spec"]["imageRegistryId"] == tenant
    # In use, a moment after: the deletion is refused where it is written, naming the template.
    refused = await call(app, "DELETE", f"{REGISTRIES}/{tenant}", admin)
    assert refused.status_code == 409, refused.text
    assert "template pt" in refused.json()["detail"]
    # A template that picks elsewhere frees it at once.
    moved = ngc_template("pt", None)
    moved["meta"] = {"name": "pt"}
    moved["spec"]["imageSource"] = "custom"
    replaced = await call(app, "PUT", f"{TEMPLATES}/{template_id}", admin, json=moved)
    assert replaced.status_code == 200, replaced.text
    assert (await call(app, "DELETE", f"{REGISTRIES}/{tenant}", admin)).status_code == 204
    # A deleted registry cannot be picked.
    late = await call(app, "POST", TEMPLATES, admin, json=ngc_template("late", tenant))
    assert late.status_code == 400, late.text


async def test_a_registrys_history_covers_every_change(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool, stand_in: OciStandIn
) -> None:
    registry_id = (await made(app, admin, registry("ngc", stand_in.url)))["meta"]["id"]
    body = {"meta": {"name": "ngc-eu"}, "spec": {"password": "rotated"}}
    assert (
        await call(app, "PUT", f"{REGISTRIES}/{registry_id}", admin, json=body)
    ).status_code == 200
    history = await call(app, "GET", f"/api/v1/asset/{registry_id}/history", admin)
    assert history.status_code == 200, history.text
    assert [v["type"] for v in history.json()["versions"]] == [
        "registry.created.v1",
        "registry.updated.v1",
    ]
    first = await call(
        app, "GET", f"/api/v1/asset/{registry_id}/as-of", admin, params={"version": 1}
    )
    assert first.json()["meta"]["name"] == "ngc"
    assert first.json()["kind"] == "registry"
    diff = await call(app, "GET", f"/api/v1/asset/{registry_id}/diff", admin, params={"from": 1})
    fields = [change["field"] for change in diff.json()["changes"]]
    assert "/meta/name" in fields
    assert "/spec/secret/fingerprint" in fields
    assert "rotated" not in history.text + first.text + diff.text
    await project_all(clean_pool)
    audit = await call(app, "GET", "/api/v1/audit/events", admin, params={"streamId": registry_id})
    assert audit.status_code == 200, audit.text
    assert [e["scope"] for e in audit.json()["events"]] == [{"type": "tenant", "id": ""}] * 2


async def test_a_submission_picks_its_image_from_a_registry_its_project_can_use(
    app: Litestar, admin: str, stand_in: OciStandIn
) -> None:
    found = await setup(app, admin)
    registry_id = (await made(app, admin, registry("ngc", stand_in.url)))["meta"]["id"]
    picked = {"imageSource": "ngcPrivateRegistry", "image": "registry.example.com/team/x:v1"}
    ghost = submission(found, spec={**picked, "imageRegistryId": str(uuid4())})
    refused = await call(app, "POST", WORKLOADS, admin, json=ghost)
    assert refused.status_code == 400, refused.text
    assert refused.json()["errors"][0]["pointer"] == "/spec/imageRegistryId"
    body = submission(found, spec={**picked, "imageRegistryId": registry_id})
    accepted = await call(app, "POST", WORKLOADS, admin, json=body)
    assert accepted.status_code == 202, accepted.text
    assert accepted.json()["spec"]["imageRegistryId"] == registry_id
