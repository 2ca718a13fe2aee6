"""Distributed policies over HTTP in Run:ai's shapes: put, get (what the scope sets and what is in
force there), patch with reset, validateOnly, delete and the list; a lower scope that loosens is
refused naming the rule; admins set, whoever sees the scope reads; and a submission meets its
project's effective policy: defaults filled in beneath the template's values, a rule broken
refused naming the field and the rule, with nothing written."""

from typing import Any

import asyncpg
import pytest
from litestar import Litestar

from domain.events import WorkloadRequested
from domain.values import Grant
from infra.postgres.streams import PostgresStreams
from infra.serialization import DOMAIN_CODEC
from tests.api.support import call, project_all, token_for
from tests.api.test_assets import org  # noqa: F401  # the fixture: a cluster, a department, two projects
from tests.api.test_workloads import WORKLOADS, submission
from tests.api.test_workloads import setup as workload_setup

pytestmark = [pytest.mark.api, pytest.mark.integration]

POLICY = "/api/v2/policy/distributed"
TEMPLATES = "/api/v1/workload-templates/distributed"
GPU_RULE = {"min": 1, "max": 4}


def at_department(units: dict[str, Any], policy: dict[str, Any]) -> dict[str, Any]:
    meta = {"name": "research-gpus", "scope": "department",
            "departmentId": units["department"]["id"]}  # fmt: skip
    return {"meta": meta, "policy": policy}


def at_project(project: dict[str, Any], policy: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {"meta": {"name": "p", "scope": "project", "projectId": project["id"]},
            "policy": policy, **more}  # fmt: skip


async def test_a_policy_round_trips_and_merges_down_the_tree(
    app: Litestar,
    admin: str,
    clean_pool: asyncpg.Pool,
    org: dict[str, Any],  # noqa: F811
) -> None:
    units = org
    llm, _ = units["projects"]
    department_policy = {
        "defaults": {"worker": {"compute": {"gpuDevicesRequest": 2},
                                "environmentVariables": {"instances": [
                                    {"name": "HOME", "value": "/home/u"}]}}},
        "rules": {"worker": {"compute": {"gpuDevicesRequest": GPU_RULE},
                             "environmentVariables": {"instances": {"locked": ["HOME"]}},
                             "imagePullPolicy": {"options": [{"value": "IfNotPresent"},
                                                             {"value": "Always"}]}}},
    }  # fmt: skip
    put = await call(app, "PUT", POLICY, admin, json=at_department(units, department_policy))
    assert put.status_code == 200, put.text
    written = put.json()
    assert written["meta"]["scope"] == "department"
    assert written["meta"]["departmentId"] == units["department"]["id"]
    assert written["policy"]["rules"]["worker"]["compute"]["gpuDevicesRequest"] == GPU_RULE
    await project_all(clean_pool)  # no projector follows the log here
    # The project sees the department's rules in force.
    params = {"scope": "project", "projectId": llm["id"]}
    got = await call(app, "GET", POLICY, admin, params=params)
    assert got.status_code == 200, got.text
    body = got.json()
    assert "policy" not in body  # the project sets nothing of its own
    gpu = body["effective"]["rules"]["worker"]["compute"]["gpuDevicesRequest"]
    assert gpu["max"] == 4
    assert gpu["sourceOfRule"] == {"scope": "department", "departmentId": units["department"]["id"]}
    assert body["effective"]["defaults"]["worker"]["environmentVariables"] == {
        "instances": [{"name": "HOME", "value": "/home/u"}]
    }
    # The project tightens: taken. It loosens: refused naming the rule, nothing written.
    tighter = {"rules": {"worker": {"compute": {"gpuDevicesRequest": {"max": 2}}}}}
    put = await call(app, "PUT", POLICY, admin, json=at_project(llm, tighter))
    assert put.status_code == 200, put.text
    await project_all(clean_pool)
    looser = {"rules": {"worker": {"compute": {"gpuDevicesRequest": {"max": 8}}}}}
    refused = await call(app, "PUT", POLICY, admin, json=at_project(llm, looser))
    assert refused.status_code == 400, refused.text
    problem = refused.json()
    assert problem["rule"] == "max"
    assert problem["errors"][0]["pointer"] == "/policy/rules/worker/compute/gpuDevicesRequest/max"
    got = (await call(app, "GET", POLICY, admin, params=params)).json()
    assert got["policy"]["rules"]["worker"]["compute"]["gpuDevicesRequest"] == {"max": 2}
    assert got["effective"]["rules"]["worker"]["compute"]["gpuDevicesRequest"]["max"] == 2
    # A patch lays its members over; a reset clears a field; validateOnly keeps nothing.
    patch = {"meta": {"name": "p", "scope": "project", "projectId": llm["id"]},
             "policy": {"rules": {"worker": {"image": {"required": True}}}},
             "reset": ["worker.compute"]}  # fmt: skip
    checked = await call(app, "PATCH", POLICY, admin, json=patch, params={"validateOnly": True})
    assert checked.status_code == 200, checked.text
    assert "meta" not in checked.json()
    await project_all(clean_pool)
    got = (await call(app, "GET", POLICY, admin, params=params)).json()
    assert "image" not in got["policy"]["rules"]["worker"]
    patched = await call(app, "PATCH", POLICY, admin, json=patch)
    assert patched.status_code == 200, patched.text
    await project_all(clean_pool)
    got = (await call(app, "GET", POLICY, admin, params=params)).json()
    assert got["policy"]["rules"] == {"worker": {"image": {"required": True}}}
    assert got["effective"]["rules"]["worker"]["compute"]["gpuDevicesRequest"]["max"] == 4
    listed = (await call(app, "GET", "/api/v2/policy", admin)).json()["policies"]
    assert sorted(p["meta"]["scope"] for p in listed) == ["department", "project"]
    only = await call(app, "GET", "/api/v2/policy", admin, params={"scope": "project"})
    assert [str(p["meta"]["projectId"]) for p in only.json()["policies"]] == [llm["id"]]
    # The audit tooling reads the project policy's history, in the project's scope.
    audit = await call(app, "GET", "/api/v1/audit/events", admin,
                       params={"streamType": "policy", "scopeType": "project",
                               "scopeId": llm["id"]})  # fmt: skip
    assert [(e["type"], e["version"]) for e in audit.json()["events"]] == [
        ("policy.applied.v1", 1), ("policy.applied.v1", 2)
    ]  # fmt: skip
    assert audit.json()["events"][1]["data"]["rules"] == {"worker.image": {"required": True}}
    # Deleted: the project's own policy is gone, the department's still in force.
    gone = await call(app, "DELETE", POLICY, admin, params=params)
    assert gone.status_code == 204, gone.text
    again = await call(app, "DELETE", POLICY, admin, params=params)
    assert again.status_code == 404, again.text
    await project_all(clean_pool)
    got = (await call(app, "GET", POLICY, admin, params=params)).json()
    assert "policy" not in got
    assert got["effective"]["rules"]["worker"]["compute"]["gpuDevicesRequest"]["max"] == 4


@pytest.mark.parametrize(
    ("policy", "pointer"),
    [
        ({"rules": {"worker": {"compute": {"gpuDevicesRequest": {"min": "two"}}}}},
         "/policy/rules/worker/compute/gpuDevicesRequest/min"),
        ({"rules": {"worker": {"noSuchField": {"required": True}}}},
         "/policy/rules/worker/noSuchField"),
        ({"rules": {"chief": {}}}, "/policy/rules/chief"),
        ({"rules": {"worker": {"image": {"min": 1}}}}, "/policy/rules/worker/image/min"),
        ({"rules": {"worker": {"tolerations": {"attributes": {"key": {"required": True}}}}}},
         "/policy/rules/worker/tolerations/attributes"),
        ({"defaults": {"worker": {"compute": {"gpuDevicesRequest": -1}}}},
         "/policy/defaults/worker/compute/gpuDevicesRequest"),
        ({"defaults": {"worker": {"tolerations": [{"name": "t"}]}}},
         "/policy/defaults/worker/tolerations"),
        ({"rules": {"worker": {"imagePullPolicy": {"options": [{"value": "Sometimes"}]}}}},
         "/policy/rules/worker/imagePullPolicy/options/0/value"),
        ("not an object", "/policy"),
    ],
)  # fmt: skip
async def test_a_policy_that_cannot_be_is_refused_naming_the_field(
    app: Litestar,
    admin: str,
    clean_pool: asyncpg.Pool,
    org: dict[str, Any],  # noqa: F811
    policy: Any,
    pointer: str,
) -> None:
    llm, _ = org["projects"]
    refused = await call(app, "PUT", POLICY, admin, json=at_project(llm, policy))
    assert refused.status_code == 400, refused.text
    assert refused.json()["errors"][0]["pointer"] == pointer
    await project_all(clean_pool)
    got = await call(app, "GET", POLICY, admin, params={"scope": "project", "projectId": llm["id"]})
    assert "policy" not in got.json()


async def test_admins_set_policies_and_whoever_sees_the_scope_reads_them(
    app: Litestar,
    admin: str,
    clean_pool: asyncpg.Pool,
    org: dict[str, Any],  # noqa: F811
) -> None:
    llm, vision = org["projects"]
    viewer = await token_for(
        clean_pool, "llm-viewer", (Grant(role="viewer", scope_kind="project", scope_id=llm["id"]),)
    )
    project_admin = await token_for(
        clean_pool, "llm-admin", (Grant(role="admin", scope_kind="project", scope_id=llm["id"]),)
    )
    policy = {"rules": {"worker": {"image": {"required": True}}}}
    refused = await call(app, "PUT", POLICY, viewer, json=at_project(llm, policy))
    assert refused.status_code == 403, refused.text
    put = await call(app, "PUT", POLICY, project_admin, json=at_project(llm, policy))
    assert put.status_code == 200, put.text
    await project_all(clean_pool)
    own = {"scope": "project", "projectId": llm["id"]}
    got = await call(app, "GET", POLICY, viewer, params=own)
    assert got.status_code == 200, got.text
    assert got.json()["policy"]["rules"] == policy["rules"]
    # Another project is out of the viewer's sight: as if it did not exist.
    other = {"scope": "project", "projectId": vision["id"]}
    hidden = await call(app, "GET", POLICY, viewer, params=other)
    assert hidden.status_code == 400, hidden.text
    refused = await call(app, "PUT", POLICY, project_admin, json=at_project(vision, policy))
    assert refused.status_code == 400, refused.text
    assert refused.json()["errors"][0]["pointer"] == "/meta/projectId"
    refused = await call(app, "DELETE", POLICY, project_admin, params=other)
    assert refused.json()["errors"][0]["pointer"] == "/projectId"
    missing = await call(app, "GET", POLICY, admin, params={"scope": "project"})
    assert missing.status_code == 400, missing.text
    assert missing.json()["errors"][0]["pointer"] == "/projectId"


async def test_a_submission_takes_its_projects_defaults_and_is_refused_when_it_breaks_a_rule(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    found = await workload_setup(app, admin)  # a template linking 8 GPUs, in project llm
    project = found["project"]
    policy = {
        "defaults": {"worker": {"backoffLimit": 2,
                                "labels": {"instances": [{"name": "team", "value": "llm"}]}}},
        "rules": {"worker": {"backoffLimit": {"max": 3},
                             "compute": {"gpuDevicesRequest": {"max": 8}}}},
    }  # fmt: skip
    put = await call(app, "PUT", POLICY, admin, json=at_project(project, policy))
    assert put.status_code == 200, put.text
    submitted = await call(app, "POST", WORKLOADS, admin, json=submission(found))
    assert submitted.status_code == 202, submitted.text
    store = PostgresStreams(clean_pool, DOMAIN_CODEC)
    (event,) = (await store.load(submitted.json()["workloadId"])).events
    assert isinstance(event, WorkloadRequested)
    spec = event.snapshot.spec
    assert spec.backoff_limit == 2  # the policy's default, not the service's 6
    assert [(label.name, label.value) for label in spec.labels or ()] == [("team", "llm")]
    assert spec.compute is not None
    assert spec.compute.gpu_devices_request == 8  # the linked compute resource's, above it
    refused = await call(app, "POST", WORKLOADS, admin,
                         json=submission(found, name="more", spec={"backoffLimit": 5}))  # fmt: skip
    assert refused.status_code == 400, refused.text
    problem = refused.json()
    assert (problem["errors"][0]["pointer"], problem["rule"]) == ("/spec/backoffLimit", "max")
    assert "no greater than 3" in problem["message"]
    # A rule tightened under a template: its linked compute resource's 8 GPUs are now too many.
    tighter = {"rules": {"worker": {"compute": {"gpuDevicesRequest": {"max": 4}}}}}
    patch = {"meta": {"scope": "project", "projectId": project["id"]}, "policy": tighter}
    assert (await call(app, "PATCH", POLICY, admin, json=patch)).status_code == 200
    before = await clean_pool.fetchval("SELECT count(*) FROM events")
    refused = await call(app, "POST", WORKLOADS, admin, json=submission(found, name="again"))
    assert refused.status_code == 400, refused.text
    problem = refused.json()
    assert problem["errors"][0]["pointer"] == "/spec/compute/gpuDevicesRequest"
    assert problem["rule"] == "max"
    assert await clean_pool.fetchval("SELECT count(*) FROM events") == before


async def test_templates_report_their_compliance_with_a_projects_policy(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    found = await workload_setup(app, admin)  # a template linking 8 GPUs, in project llm
    project, template_id = found["project"], found["template"]["meta"]["id"]
    policy = {"defaults": {"worker": {"backoffLimit": 2}},
              "rules": {"worker": {"compute": {"gpuDevicesRequest": {"max": 4}},
                                   "backoffLimit": {"canEdit": False}},
                        "master": {"image": {"required": True}}}}  # fmt: skip
    put = await call(app, "PUT", POLICY, admin, json=at_project(project, policy))
    assert put.status_code == 200, put.text
    await project_all(clean_pool)
    plain = (await call(app, "GET", TEMPLATES, admin)).json()["entries"]
    assert "complianceIssues" not in plain[0]
    comply = {"complyToProject": project["id"]}
    listed = await call(app, "GET", TEMPLATES, admin, params=comply)
    assert listed.status_code == 200, listed.text
    (entry,) = listed.json()["entries"]
    # 8 GPUs break the max; the backoff limit is the policy's default beneath the template
    # (which sets none), so it keeps canEdit; the master copies the worker, so it has an image.
    assert entry["complianceIssues"] == [
        {"field": "worker.compute.gpuDevicesRequest", "details": "value must be no greater than 4",
         "rule": "max"}
    ]  # fmt: skip
    masters = await call(app, "GET", TEMPLATES, admin,
                         params={**comply, "complyToReplicaType": "Master"})  # fmt: skip
    assert masters.json()["entries"][0]["complianceIssues"] == []
    one = await call(app, "GET", f"{TEMPLATES}/{template_id}", admin, params=comply)
    assert one.status_code == 200, one.text
    assert [i["rule"] for i in one.json()["complianceIssues"]] == ["max"]
    any_type = await call(app, "GET", "/api/v1/workload-templates", admin, params=comply)
    assert [i["rule"] for i in any_type.json()["entries"][0]["complianceIssues"]] == ["max"]
    # The template edited: its new version is judged afresh (what was judged is kept per version).
    edit = {"spec": {"backoffLimit": 5}}
    edited = await call(app, "PATCH", f"{TEMPLATES}/{template_id}", admin, json=edit)
    assert edited.status_code == 200, edited.text
    await project_all(clean_pool)
    listed = await call(app, "GET", TEMPLATES, admin, params=comply)
    rules = [i["rule"] for i in listed.json()["entries"][0]["complianceIssues"]]
    assert sorted(rules) == ["canEdit", "max"], listed.text
    # The policy loosened: only the edited backoff limit breaks it.
    loose = {"meta": {"scope": "project", "projectId": project["id"]},
             "reset": ["worker.compute"]}  # fmt: skip
    assert (await call(app, "PATCH", POLICY, admin, json=loose)).status_code == 200
    await project_all(clean_pool)
    listed = await call(app, "GET", TEMPLATES, admin, params=comply)
    assert [i["rule"] for i in listed.json()["entries"][0]["complianceIssues"]] == ["canEdit"]
    unknown = await call(app, "GET", TEMPLATES, admin, params={"complyToProject": 999})
    assert unknown.status_code == 400, unknown.text
    assert unknown.json()["errors"][0]["pointer"] == "/complyToProject"


async def test_a_policy_change_is_previewed_with_the_templates_it_would_make_non_compliant(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    found = await workload_setup(app, admin)  # a template linking 8 GPUs, in project llm
    project, template = found["project"], found["template"]["meta"]
    await project_all(clean_pool)
    cluster = {"name": "p", "scope": "cluster", "clusterId": found["cluster"]["uuid"]}
    four = {"rules": {"worker": {"compute": {"gpuDevicesRequest": {"max": 4}}}}}
    tighter = {"meta": cluster, "policy": four}
    before = await clean_pool.fetchval("SELECT count(*) FROM events")
    previewed = await call(app, "POST", f"{POLICY}/impact", admin, json=tighter)
    assert previewed.status_code == 200, previewed.text
    assert previewed.json()["templates"] == [
        {"projectId": project["id"], "projectName": "llm", "templateId": template["id"],
         "templateName": template["name"], "compliantNow": True,
         "complianceIssues": [{"field": "worker.compute.gpuDevicesRequest",
                               "details": "value must be no greater than 4", "rule": "max"}]}
    ]  # fmt: skip
    assert await clean_pool.fetchval("SELECT count(*) FROM events") == before
    # Saved, then a looser change previewed: the template would comply again.
    assert (await call(app, "PUT", POLICY, admin, json=tighter)).status_code == 200
    await project_all(clean_pool)
    looser = {**tighter, "policy": {"rules": {"worker": {"compute": {
        "gpuDevicesRequest": {"max": 8}}}}}}  # fmt: skip
    previewed = await call(app, "POST", f"{POLICY}/impact", admin, json=looser)
    (entry,) = previewed.json()["templates"]
    assert (entry["compliantNow"], entry["complianceIssues"]) == (False, [])
    viewer = await token_for(
        clean_pool, "viewer", (Grant(role="viewer", scope_kind="project", scope_id=project["id"]),)
    )
    refused = await call(app, "POST", f"{POLICY}/impact", viewer, json=looser)
    assert refused.status_code == 403, refused.text  # it sees the cluster, but sets nothing
