"""The console's changes are made on the write side, as the API's are: a data source edited or
deleted through its page the moment it was created (no read model has it yet, as nothing here
runs the projections) is found, and an edit is saved on the version its page was opened at, so
one made meanwhile elsewhere is refused, with nothing written; a workload is submitted into a
project just made; a settings save changes only what the person changed on the page."""

from html.parser import HTMLParser
from typing import Any
from uuid import UUID, uuid4

import asyncpg
import pytest
from litestar import Litestar

from domain import assets, tenant_settings
from domain.events import WorkloadRequested
from domain.specs import NfsSpec
from domain.values import TENANT_ADMIN
from infra.postgres.streams import PostgresStreams
from infra.serialization import DOMAIN_CODEC
from tests.api.client import client_for
from tests.api.support import (
    call,
    console_admin,
    console_session,
    project_all,
    sent,
    token_for,
)
from tests.api.test_workloads import setup

pytestmark = [pytest.mark.api, pytest.mark.integration]

NFS = "/api/v1/asset/datasource/nfs"


def _form(csrf: str, version: int, mount_path: str) -> dict[str, Any]:
    return {
        "_csrf_token": csrf,
        "version": str(version),
        "/meta/name": "datasets",
        "/spec/server": "nfs.example.com",
        "/spec/path": "/exports/datasets",
        "/spec/mountPath": mount_path,
        "/spec/readOnly": "true",
    }


async def _events(pool: asyncpg.Pool, stream_id: str) -> int:
    return int(await pool.fetchval("SELECT count(*) FROM events WHERE stream_id = $1", stream_id))


async def test_a_data_source_is_edited_and_deleted_on_the_write_side_at_its_version(
    app: Litestar, clean_pool: asyncpg.Pool
) -> None:
    name = f"console-{uuid4().hex[:8]}"
    token = await token_for(clean_pool, name, (TENANT_ADMIN,))
    async with client_for(app) as client:
        body = {
            "meta": {"name": "datasets", "scope": "tenant"},
            "spec": {"server": "nfs.example.com", "path": "/exports/datasets",
                     "mountPath": "/mnt/datasets"},
        }  # fmt: skip
        made = await sent(client, "POST", NFS, token, json=body)
        assert made.status_code == 202, made.text
        asset_id = made.json()["meta"]["id"]
        page = f"/console/data-sources/nfs/{asset_id}"
        csrf = await console_session(client, name)

        saved = await client.post(page, data=_form(csrf, 1, "/mnt/shared"))
        assert saved.status_code == 303, saved.text
        assert await _events(clean_pool, asset_id) == 2

        # A page opened at version 1 saves nothing over version 2.
        stale = await client.post(page, data=_form(csrf, 1, "/mnt/elsewhere"))
        assert stale.status_code == 412, stale.text
        assert "changed since this page was opened" in stale.text
        assert await _events(clean_pool, asset_id) == 2
        now = assets.fold((await PostgresStreams(clean_pool, DOMAIN_CODEC).load(asset_id)).events)
        assert now is not None
        assert isinstance(now.spec, NfsSpec)
        assert now.spec.mount_path == "/mnt/shared"

        deleted = await client.post(f"{page}/delete", data={"_csrf_token": csrf})
        assert deleted.status_code == 303, deleted.text
        assert await _events(clean_pool, asset_id) == 3


async def test_a_workload_is_submitted_from_the_console_into_a_project_just_made(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    """The project's cluster is its stream's: a project no read model holds yet is found."""
    found = await setup(app, admin)
    async with client_for(app) as client:
        csrf = await console_session(client, "root-admin")
        template_id = found["template"]["meta"]["id"]
        form = {"_csrf_token": csrf, "name": "from-console", "project": found["project"]["id"]}
        answer = await client.post(f"/console/templates/{template_id}/workloads", data=form)
        assert answer.status_code == 303, answer.text
        workload_id = UUID(answer.headers["location"].rsplit("/", 1)[-1])
        (event,) = (await PostgresStreams(clean_pool, DOMAIN_CODEC).load(workload_id)).events
        assert isinstance(event, WorkloadRequested)
        assert event.cluster_id == UUID(found["cluster"]["uuid"])

        await project_all(clean_pool)  # the page shown again with the refusal is a read
        form["project"] = "999999"  # no such project: refused next to the choice
        refused = await client.post(f"/console/templates/{template_id}/workloads", data=form)
        assert refused.status_code == 400, refused.text
        assert "Choose the project to run it in." in refused.text


class _Form(HTMLParser):
    """What a browser would send of a page's form: its hidden inputs, and its ticked boxes."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[tuple[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        name, kind = found.get("name"), found.get("type")
        if tag != "input" or name is None:
            return
        if kind == "hidden" or (kind == "checkbox" and "checked" in found):
            self.sent.append((name, found.get("value") or ""))


async def test_a_settings_save_leaves_a_switch_it_showed_as_someone_else_has_since_set_it(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    async with client_for(app) as client:
        await console_session(client, "root-admin")
        page = _Form()
        page.feed((await client.get("/console/settings")).text)
        assert ("workloads.dataVolumes", "true") in page.sent
        body = {"key": "workloads.dataVolumes", "value": False}
        assert (await sent(client, "PUT", "/v1/k8s/setting", admin, json=body)).status_code == 200
        await project_all(clean_pool)  # the read models hold that change, the page does not
        ticked = [(k, v) for k, v in page.sent if k != "workloads.ngcCatalog"] + [
            ("workloads.ngcCatalog", "true")
        ]  # the one switch the person turned on
        form: dict[str, list[str]] = {}
        for key, value in ticked:
            form.setdefault(key, []).append(value)
        saved = await client.post("/console/settings", data=form)
        assert saved.status_code == 303, saved.text
    stream = await PostgresStreams(clean_pool, DOMAIN_CODEC).load(tenant_settings.STREAM)
    settings = tenant_settings.fold(stream.events)
    assert settings.get("workloads.ngcCatalog") is True
    assert settings.get("workloads.dataVolumes") is False  # as the PUT left it


async def test_an_environment_deleted_a_moment_ago_is_not_copied_into_a_template(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    """ "Use without linking" copies the environment as its stream has it: one deleted since the
    catalogue last showed it is refused, as the link it then is, and no template is made."""
    made = await call(app, "POST", "/api/v1/asset/environment", admin, json={
        "meta": {"name": "gone", "scope": "tenant"}, "spec": {"image": "deleted-image:1"},
    })  # fmt: skip
    asset_id = made.json()["meta"]["id"]
    await project_all(clean_pool)  # the catalogue holds it ...
    deleted = await call(app, "DELETE", f"/api/v1/asset/environment/{asset_id}", admin)
    assert deleted.status_code == 202, deleted.text
    async with client_for(app) as client:  # ... and its deletion is not projected yet
        csrf = await console_admin(client, clean_pool)
        form = {
            "_csrf_token": csrf,
            "action": "create",
            "/scope": "tenant",
            "/meta/name": "copied",
            "/spec/distributedFramework": "PyTorch",
            "/configuration": "workers-only",
            "/assets/environment": asset_id,
            "/environmentUse": "copy",
        }
        answered = await client.post("/console/templates/new", data=form)
    assert answered.status_code in (400, 404, 409), answered.text[:300]
    made_templates = await clean_pool.fetchval(
        "SELECT count(*) FROM events WHERE type = 'template.created.v1'"
    )
    assert made_templates == 0
