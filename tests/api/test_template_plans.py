"""Templates as code over HTTP: export, plan, apply all or none, bad documents as problems naming
the document and the field; registries and data volumes by name; the endpoints are in the served
OpenAPI document."""

from typing import Any

import asyncpg
import pytest
from litestar import Litestar

from tests.api.support import call, project_all
from tests.api.test_registries import made as made_registry
from tests.api.test_registries import ngc_template, registry, stand_in  # noqa: F401
from tests.api.test_templates import assets, org, template
from tests.oci_stand_in import OciStandIn

pytestmark = [pytest.mark.api, pytest.mark.integration]

PLANS = "/api/v1/trainplate/template-plans"
DOCUMENTS = "/api/v1/trainplate/template-documents"
TEMPLATES = "/api/v1/workload-templates/distributed"


async def exported(app: Litestar, admin: str, pool: asyncpg.Pool) -> list[dict[str, Any]]:
    units = await org(app, admin)
    linked = await assets(app, admin)
    made = await call(
        app, "POST", TEMPLATES, admin, json=template("bert", units["project"], linked)
    )
    assert made.status_code == 202, made.text
    await project_all(pool)
    answer = await call(app, "GET", DOCUMENTS, admin, params={"scope": "project:llm"})
    assert answer.status_code == 200, answer.text
    return [entry["document"] for entry in answer.json()["documents"]]


async def planned(app: Litestar, admin: str, **body: Any) -> Any:
    answer = await call(app, "POST", PLANS, admin, json=body)
    assert answer.status_code == 200, answer.text
    return answer.json()


async def test_an_export_planned_again_changes_nothing_and_one_edit_shows_that_field(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    documents = await exported(app, admin, clean_pool)
    (bert,) = documents
    assert bert["metadata"] == {"name": "bert", "scope": {"project": "llm"}}
    assert bert["assets"]["environment"] == {"name": "env-pytorch", "link": True}
    plan = await planned(app, admin, documents=documents, sources=["bert.yaml"])
    assert not plan["changed"]
    assert [t["action"] for t in plan["templates"]] == ["unchanged"]
    bert["spec"]["numWorkers"] = 7
    plan = await planned(app, admin, documents=[bert])
    (one,) = plan["templates"]
    assert one["action"] == "update"
    assert [c["field"] for c in one["changes"]] == ["/spec/numWorkers"]
    assert one["runnable"]["isRunnable"] is True
    assert {a["name"] for a in one["assets"]} == {"env-pytorch", "gpu-pytorch"}
    applied = await planned(app, admin, **{**plan, "apply": True})
    assert applied["applied"] is True
    assert list(applied["written"].values()) == [2]
    await project_all(clean_pool)
    got = await call(app, "GET", f"{TEMPLATES}/{one['templateId']}", admin)
    assert got.json()["spec"]["numWorkers"] == 7


async def test_an_apply_after_an_edit_is_refused_whole_with_a_409_naming_it(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    (bert,) = await exported(app, admin, clean_pool)
    new = {**bert, "metadata": {"name": "gpt", "scope": {"project": "llm"}}}
    bert["spec"]["numWorkers"] = 5
    plan = await planned(app, admin, documents=[bert, new])
    bert_id = next(t["templateId"] for t in plan["templates"] if t["name"] == "bert")
    patch = {"spec": {"numWorkers": 9}}
    edited = await call(app, "PATCH", f"{TEMPLATES}/{bert_id}", admin, json=patch)
    assert edited.status_code == 200, edited.text
    refused = await call(app, "POST", PLANS, admin, json={**plan, "apply": True})
    assert refused.status_code == 409, refused.text
    assert refused.headers["content-type"] == "application/problem+json"
    assert "template project:llm/bert moved from version 1 to 2" in refused.json()["message"]
    await project_all(clean_pool)
    names = await call(app, "GET", TEMPLATES, admin)
    assert [t["meta"]["name"] for t in names.json()["entries"]] == ["bert"]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"assets": {"environment": {"name": "missing"}}}, "/documents/0/assets/environment/name"),
        (
            {"metadata": {"name": "bert", "scope": {"project": "nope"}}},
            "/documents/0/metadata/scope",
        ),
        ({"kind": "ConfigMap"}, "/documents/0/kind"),
        ({"spec": {"numWorkers": 0}}, "/documents/0/spec/numWorkers"),
        ({"spec": {"numWorkerz": 2}}, "/documents/0/spec/numWorkerz"),
    ],
)
async def test_a_bad_document_is_a_problem_naming_the_document_and_the_field(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool, change: dict[str, Any], field: str
) -> None:
    (bert,) = await exported(app, admin, clean_pool)
    refused = await call(
        app, "POST", PLANS, admin, json={"documents": [{**bert, **change}], "sources": ["a.yaml"]}
    )
    assert refused.status_code == 400, refused.text
    body = refused.json()
    assert body["document"] == "a.yaml"
    assert body["message"].startswith("a.yaml: ")
    assert [e["pointer"] for e in body["errors"]] == [field]


async def test_the_extension_is_in_the_served_openapi_document(app: Litestar, admin: str) -> None:
    document = (await call(app, "GET", "/schema/openapi.json", admin)).json()
    assert "post" in document["paths"][PLANS]
    assert "get" in document["paths"][DOCUMENTS]


async def test_documents_sent_with_apply_and_no_versions_are_planned_and_applied_at_once(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    (bert,) = await exported(app, admin, clean_pool)
    bert["spec"]["numWorkers"] = 5
    applied = await planned(app, admin, documents=[bert], apply=True)
    assert applied["applied"] is True
    (one,) = applied["templates"]
    assert [c["field"] for c in one["changes"]] == ["/spec/numWorkers"]
    await project_all(clean_pool)
    got = await call(app, "GET", f"{TEMPLATES}/{one['templateId']}", admin)
    assert got.json()["spec"]["numWorkers"] == 5


async def test_a_registry_and_a_data_volume_are_exported_by_name_and_planned_again(
    app: Litestar,
    admin: str,
    clean_pool: asyncpg.Pool,
    stand_in: OciStandIn,  # noqa: F811
) -> None:
    units = await org(app, admin)
    registry_id = (await made_registry(app, admin, registry("harbor", stand_in.url)))["meta"]["id"]
    volume = {"name": "corpus", "projectId": units["project"]["id"], "originPvcName": "pvc-a"}
    volume_made = await call(app, "POST", "/api/v1/datavolumes", admin, json=volume)
    assert volume_made.status_code == 201, volume_made.text
    body = ngc_template("bert", registry_id, scopeType="project", scopeId=units["project"]["id"])
    link = {"id": volume_made.json()["id"], "kind": "data-volume"}
    body["assets"] = {"datasources": [{**link, "overrides": {"containerPath": "/data"}}]}
    made = await call(app, "POST", TEMPLATES, admin, json=body)
    assert made.status_code == 202, made.text
    await project_all(clean_pool)

    answer = await call(app, "GET", DOCUMENTS, admin, params={"scope": "project:llm"})
    (document,) = [entry["document"] for entry in answer.json()["documents"]]
    assert "imageRegistryId" not in document["spec"]
    assert document["assets"] == {
        "registry": {"name": "harbor"},
        "datasources": [{"name": "corpus", "kind": "data-volume", "containerPath": "/data"}],
    }
    plan = await planned(app, admin, documents=[document])
    assert [t["action"] for t in plan["templates"]] == ["unchanged"]
    (one,) = plan["templates"]
    assert {(a["field"], a["id"]) for a in one["assets"]} == {
        ("/assets/registry/name", registry_id),
        ("/assets/datasources/0/name", volume_made.json()["id"]),
    }
    document["assets"]["registry"]["name"] = "quay"
    refused = await call(app, "POST", PLANS, admin, json={"documents": [document]})
    assert refused.status_code == 400, refused.text
    assert [e["pointer"] for e in refused.json()["errors"]] == ["/documents/0/assets/registry/name"]


@pytest.mark.parametrize("scope", [{}, {"tenant": False}, {"project": "llm", "department": "d"}])
async def test_a_prune_scope_that_names_no_one_unit_is_refused_before_anything_is_planned(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool, scope: dict[str, Any]
) -> None:
    (bert,) = await exported(app, admin, clean_pool)
    body = {"documents": [bert], "prune": True, "scopes": [scope], "apply": True}
    refused = await call(app, "POST", PLANS, admin, json=body)
    assert refused.status_code == 400, refused.text
    assert [e["pointer"] for e in refused.json()["errors"]] == ["/scopes/0"]
