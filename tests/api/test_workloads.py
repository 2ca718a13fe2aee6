"""Distributed workloads over HTTP: submitted from a template with per-submission overrides, the
snapshot recorded, refused with the field named when it cannot run, and suspend, resume, delete,
history and events in Run:ai's shapes."""

from typing import Any

import asyncpg
import pytest
from litestar import Litestar

from domain.events import WorkloadRequested
from domain.values import Grant
from infra.postgres.streams import PostgresStreams
from infra.serialization import DOMAIN_CODEC
from tests.api.support import call, project_all, token_for
from tests.api.test_templates import IMAGE, assets, org, template
from tests.openapi import assert_matches

pytestmark = [pytest.mark.api, pytest.mark.integration]

WORKLOADS = "/api/v1/workloads/distributed"
TEMPLATES = "/api/v1/workload-templates/distributed"


async def setup(app: Litestar, admin: str) -> dict[str, Any]:
    units = await org(app, admin)
    linked = await assets(app, admin)
    body = template("ddp", units["project"], linked)
    made = await call(app, "POST", TEMPLATES, admin, json=body)
    assert made.status_code == 202, made.text
    return {**units, "template": made.json(), "linked": linked}


def submission(found: dict[str, Any], name: str = "ddp-run", **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "projectId": found["project"]["id"],
        "clusterId": found["cluster"]["uuid"],
        "templateId": found["template"]["meta"]["id"],
        **extra,
    }


async def test_a_submission_records_the_resolved_snapshot_and_reads_back_in_run_ai_shapes(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    found = await setup(app, admin)
    body = submission(found, spec={"numWorkers": 3, "args": "train.py --epochs 1"})
    assert_matches("DistributedCreationRequest", body)
    submitted = await call(app, "POST", WORKLOADS, admin, json=body)
    assert submitted.status_code == 202, submitted.text
    made = submitted.json()
    assert_matches("DistributedWorkload", made)
    assert (made["desiredPhase"], made["actualPhase"]) == ("Running", "Creating")
    # The template's combined spec, with the submission's values over it.
    assert made["spec"]["image"] == IMAGE
    assert made["spec"]["numWorkers"] == 3
    assert made["spec"]["args"] == "train.py --epochs 1"
    assert made["spec"]["compute"]["gpuDevicesRequest"] == 8
    assert made["spec"]["cleanPodPolicy"] == "None"

    # The event carries the whole snapshot: template version and linked asset versions.
    store = PostgresStreams(clean_pool, DOMAIN_CODEC)
    (event,) = (await store.load(made["workloadId"])).events
    assert isinstance(event, WorkloadRequested)
    assert str(event.snapshot.template_id) == found["template"]["meta"]["id"]
    assert event.snapshot.template_version == 1
    assert {str(v.asset_id) for v in event.snapshot.asset_versions} == set(found["linked"].values())
    assert event.job_name == f"ddp-run-{made['workloadId'].replace('-', '')[:8]}"
    assert event.namespace == "runai-llm"

    await project_all(clean_pool)
    path = f"{WORKLOADS}/{made['workloadId']}"
    got = await call(app, "GET", path, admin)
    assert got.status_code == 200, got.text
    assert_matches("DistributedWorkload", got.json())
    assert got.json()["spec"] == made["spec"]
    any_type = await call(app, "GET", f"/api/v1/workloads/{made['workloadId']}", admin)
    assert any_type.status_code == 200, any_type.text
    assert_matches("WorkloadDetailed", any_type.json())
    assert any_type.json()["phase"] == "Creating"
    assert any_type.json()["projectName"] == "llm"
    assert any_type.json()["distributedFramework"] == "PyTorch"


async def test_a_workload_that_cannot_run_is_refused_naming_why_and_nothing_is_written(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    found = await setup(app, admin)
    no_image = template("bare", found["project"], {})
    bare = (await call(app, "POST", TEMPLATES, admin, json=no_image)).json()
    cases = [
        (submission(found, templateId=bare["meta"]["id"]), "/templateId", "image"),
        (submission(found, name="Not_A_Name"), "/name", "lowercase"),
        (submission(found, projectId="999"), "/projectId", "project"),
        (submission(found, clusterId="00000000-0000-0000-0000-000000000001"), "/clusterId", ""),
        (submission(found, spec={"terminationGracePeriodSeconds": 301}),
         "/spec/terminationGracePeriodSeconds", ""),
        (submission(found, masterSpec={"image": "x"}), "/masterSpec", ""),
        (submission(found, templateId="00000000-0000-0000-0000-000000000002"), "/templateId", ""),
        ({**submission(found), "unknown": 1}, "", "unknown"),
    ]  # fmt: skip
    before = await clean_pool.fetchval("SELECT count(*) FROM events")
    for body, pointer, words in cases:
        answer = await call(app, "POST", WORKLOADS, admin, json=body)
        assert answer.status_code == 400, (body, answer.text)
        problem = answer.json()
        assert problem["code"] == 400
        if pointer:
            assert problem["errors"][0]["pointer"] == pointer, problem
        assert words in problem["message"], problem
    assert await clean_pool.fetchval("SELECT count(*) FROM events") == before


async def test_names_are_unique_per_project_until_the_workload_is_deleted(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    found = await setup(app, admin)
    first = (await call(app, "POST", WORKLOADS, admin, json=submission(found))).json()
    again = await call(app, "POST", WORKLOADS, admin, json=submission(found))
    assert again.status_code == 409, again.text
    prefixed = await call(
        app, "POST", WORKLOADS, admin, json=submission(found, useGivenNameAsPrefix=True)
    )
    assert prefixed.status_code == 202
    assert prefixed.json()["name"].startswith("ddp-run-")
    assert prefixed.json()["requestedName"] == "ddp-run"
    await project_all(clean_pool)
    gone = await call(app, "DELETE", f"{WORKLOADS}/{first['workloadId']}", admin)
    assert gone.status_code == 202, gone.text
    assert gone.json() == {"code": 202, "message": "Request has been accepted."}
    reused = await call(app, "POST", WORKLOADS, admin, json=submission(found))
    assert reused.status_code == 202, reused.text
    await project_all(clean_pool)
    listed = (await call(app, "GET", "/api/v1/workloads", admin)).json()["workloads"]
    assert len(listed) == 2
    deleted = await call(app, "GET", "/api/v1/workloads", admin, params={"deleted": "true"})
    assert [w["id"] for w in deleted.json()["workloads"]] == [first["workloadId"]]
    assert (await call(app, "GET", f"{WORKLOADS}/{first['workloadId']}", admin)).json()[
        "desiredPhase"
    ] == "Deleted"


async def test_suspend_resume_history_and_events(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    found = await setup(app, admin)
    made = (await call(app, "POST", WORKLOADS, admin, json=submission(found))).json()
    path = f"{WORKLOADS}/{made['workloadId']}"
    await project_all(clean_pool)
    assert (await call(app, "POST", f"{path}/resume", admin)).status_code == 202  # no-op
    assert (await call(app, "POST", f"{path}/suspend", admin)).status_code == 202
    await project_all(clean_pool)
    got = (await call(app, "GET", path, admin)).json()
    assert (got["desiredPhase"], got["actualPhase"]) == ("Stopped", "Stopping")
    assert (await call(app, "POST", f"{path}/resume", admin)).status_code == 202
    await project_all(clean_pool)
    got = (await call(app, "GET", path, admin)).json()
    assert (got["desiredPhase"], got["actualPhase"]) == ("Running", "Resuming")

    base = f"/api/v1/workloads/{made['workloadId']}"
    history = await call(app, "GET", f"{base}/history", admin)
    assert history.status_code == 200, history.text
    records = history.json()["records"]
    for record in records:
        assert_matches("HistoryRecord1", record)
    phases = [
        r["spec"]["phaseUpdate"]["phase"] for r in records if r["meta"]["type"] == "PhaseUpdate"
    ]
    assert phases == ["Creating", "Stopping", "Resuming"]
    events = (await call(app, "GET", f"{base}/events", admin, params={"sortOrder": "asc"})).json()
    reasons = [e["reason"] for e in events["events"]]
    assert reasons == ["Requested", "Suspended", "Resumed"]
    for event in events["events"]:
        assert_matches("Event2", event)


async def test_only_callers_with_a_grant_on_the_project_see_or_submit(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    found = await setup(app, admin)
    made = (await call(app, "POST", WORKLOADS, admin, json=submission(found))).json()
    other = (
        await call(app, "POST", "/api/v1/org-unit/projects", admin,
                   json={"name": "other", "clusterId": found["cluster"]["uuid"]})
    ).json()  # fmt: skip
    outsider = await token_for(
        clean_pool, "outsider", (Grant(role="editor", scope_kind="project", scope_id=other["id"]),)
    )
    viewer = await token_for(
        clean_pool,
        "viewer",
        (Grant(role="viewer", scope_kind="project", scope_id=found["project"]["id"]),),
    )
    await project_all(clean_pool)
    path = f"{WORKLOADS}/{made['workloadId']}"
    assert (await call(app, "GET", path, outsider)).status_code == 404
    assert (await call(app, "GET", path, viewer)).status_code == 200
    assert (await call(app, "POST", f"{path}/suspend", viewer)).status_code == 403
    refused = await call(app, "POST", WORKLOADS, viewer, json=submission(found, name="mine"))
    assert refused.status_code == 403
    listed = await call(app, "GET", "/api/v1/workloads", outsider)
    assert listed.json()["workloads"] == []
    filtered = await call(
        app, "GET", "/api/v1/workloads", admin,
        params={"filterBy": f"templateId=={found['template']['meta']['id']}"},
    )  # fmt: skip
    assert [w["id"] for w in filtered.json()["workloads"]] == [made["workloadId"]]


async def test_shared_registry_credentials_become_image_pull_secrets(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    found = await setup(app, admin)
    other = await call(
        app, "POST", "/api/v1/org-unit/projects", admin,
        json={"name": "other", "clusterId": found["cluster"]["uuid"]},
    )  # fmt: skip
    registry = {"user": "$oauthtoken", "password": "not-in-any-event", "url": "nvcr.io"}
    ids = {}
    for name, kind, meta in (
        ("shared", "docker-registry", {"scope": "tenant"}),
        ("mine", "docker-registry", {"scope": "tenant", "private": True}),
        (
            "elsewhere",
            "docker-registry",
            {"scope": "project", "projectId": int(other.json()["id"])},
        ),
        ("gone", "docker-registry", {"scope": "tenant"}),
        ("login", "password", {"scope": "tenant"}),
    ):
        spec = registry if kind == "docker-registry" else {"user": "u", "password": "p"}
        made = await call(
            app, "POST", f"/api/v1/asset/credentials/{kind}", admin,
            json={"meta": {"name": name, **meta}, "spec": spec},
        )  # fmt: skip
        assert made.status_code == 202, made.text
        ids[name] = made.json()["meta"]["id"]
    path = f"/api/v1/asset/credentials/docker-registry/{ids['gone']}"
    assert (await call(app, "DELETE", path, admin)).status_code == 202
    # Decided from the credentials' own streams: no read model need have caught up.
    made = (await call(app, "POST", WORKLOADS, admin, json=submission(found))).json()
    store = PostgresStreams(clean_pool, DOMAIN_CODEC)
    (event,) = (await store.load(made["workloadId"])).events
    assert isinstance(event, WorkloadRequested)
    # Neither the private one, another project's, a deleted one nor another kind.
    assert event.snapshot.image_pull_secrets == (f"credential-{ids['shared']}",)
