"""The guide's template rules over HTTP: each refusal is a 400 naming the field and writes
nothing; what the rules allow is accepted, and the combined specs show what will run."""

from typing import Any

import asyncpg
import pytest
from litestar import Litestar

from tests.api.support import call, project_all

pytestmark = [pytest.mark.api, pytest.mark.integration]

TEMPLATES = "/api/v1/workload-templates/distributed"
TEMPLATE_EVENTS = "SELECT count(*) FROM events WHERE stream_type = 'template'"
SEPARATE_MASTER: dict[str, Any] = {
    "masterSpecSameAsWorker": False,
    "master": {"spec": {"image": "m:1"}},
}


def body(spec: dict[str, Any] | None = None, **fields: Any) -> dict[str, Any]:
    base = {"distributedFramework": "PyTorch", "numWorkers": 2, "image": "pt:2"}
    return {
        "meta": {"name": "t", "scopeType": "tenant"},
        "spec": {**base, **(spec or {})},
        **fields,
    }


REFUSED: list[tuple[dict[str, Any], str]] = [
    (body({"storage": {"configMapVolume": [{"configMap": "cfg", "mountPath": "/c"}]}}),
     "/spec/storage/configMapVolume/0"),
    (body({"storage": {"secretVolume": [{"secret": "tls", "mountPath": "/t"}]}}),
     "/spec/storage/secretVolume/0"),
    (body({"storage": {"pvc": [{"path": "/d", "existingPvc": True, "claimName": "c"}]}}),
     "/spec/storage/pvc/0/existingPvc"),
    (body({"storage": {"dataVolume": [{"id": "7d1e5f4a-8c6b-4a2d-9e3f-1b0c9d8e7f6a",
                                       "mountPath": "/data"}]}}),
     "/spec/storage/dataVolume/0"),
    (body({"tolerations": [{"key": "k", "effect": "NoSchedule"}]}),
     "/spec/tolerations/0/operator"),
    (body({"tolerations": [{"key": "k", "operator": "Exists"}]}), "/spec/tolerations/0/effect"),
    (body({"tolerations": [{"operator": "Equal", "value": "a", "effect": "Any"}]}),
     "/spec/tolerations/0/key"),
    (body({"podAffinity": {"key": "zone"}}), "/spec/podAffinity/type"),
    (body({"podAffinity": {"type": "Required"}}), "/spec/podAffinity/key"),
    (body({"ports": [{"serviceType": "NodePort"}]}), "/spec/ports/0/container"),
    (body({"ports": [{"container": 22}]}), "/spec/ports/0/serviceType"),
    (body({"exposedUrls": [{"url": "https://x"}]}), "/spec/exposedUrls/0/container"),
    (body({"relatedUrls": [{"url": "https://wandb.ai/x"}]}), "/spec/relatedUrls/0/type"),
    (body({"storage": {"pvc": [{"path": "/d", "claimInfo": {"size": "1G",
                                 "accessModes": {"readWriteOnce": False}}}]}}),
     "/spec/storage/pvc/0/claimInfo/accessModes"),
    (body({"security": {"uidGidSource": "custom", "runAsGid": 100}}), "/spec/security/runAsUid"),
    (body({"nodeAffinityRequired": {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "gpu", "operator": "In"}]}]}}),
     "/spec/nodeAffinityRequired/nodeSelectorTerms/0/matchExpressions/0/values"),
    (body({"nodeAffinityRequired": {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "gpu", "operator": "Gt", "values": ["x"]}]}]}}),
     "/spec/nodeAffinityRequired/nodeSelectorTerms/0/matchExpressions/0/values"),
    (body({"priorityClass": "urgent"}), "/spec/priorityClass"),
    (body(masterSpecSameAsWorker=False, master={"spec": {"image": "m", "backoffLimit": 2}}),
     "/master/spec/backoffLimit"),
    (body(masterSpecSameAsWorker=False, master={"spec": {"image": "m", "priorityClass": "high"}}),
     "/master/spec/priorityClass"),
    (body({"distributedFramework": "JAX"}, **SEPARATE_MASTER), "/master"),
    (body({"security": {"uidGidSource": "custom", "runAsUid": 1, "runAsGid": 1,
                         "supplementalGroups": "wheel"}}),
     "/spec/security/supplementalGroups"),
    (body({"labels": [{"name": "team", "value": "vision research"}]}), "/spec/labels/0/value"),
    (body({"labels": [{"name": "Team/owner", "value": "ml"}]}), "/spec/labels/0/name"),
    (body({"annotations": [{"name": "a note", "value": "x"}]}), "/spec/annotations/0/name"),
    (body({"exposedUrls": [{"container": 8888, "authorizedGroups": [""]}]}),
     "/spec/exposedUrls/0/authorizedGroups/0"),
    (body({"storage": {"pvc": [{"path": "/d", "claimInfo": {"size": "0"}}]}}),
     "/spec/storage/pvc/0/claimInfo/size"),
    (body({"distributedFramework": "MPI", "sshAuthMountPath": "ssh-keys"}, **SEPARATE_MASTER),
     "/spec/sshAuthMountPath"),
    (body({"security": {"uidGidSource": "custom", "runAsUid": -1, "runAsGid": 1}}),
     "/spec/security/runAsUid"),
    (body({"security": {"uidGidSource": "custom", "runAsUid": 1, "runAsGid": 1,
                         "supplementalGroups": "5,4294967296"}}),
     "/spec/security/supplementalGroups"),
    (body({"compute": {"gpuDevicesRequest": 1, "gpuRequestType": "portion",
                       "gpuPortionRequest": 0}}),
     "/spec/compute/gpuPortionRequest"),
    (body({"compute": {"extendedResources": [{"resource": "rdma/hca"}]}}),
     "/spec/compute/extendedResources/0/quantity"),
    (body({"compute": {"cpuMemoryRequest": "1e99999999", "cpuMemoryLimit": "1G"}}),
     "/spec/compute/cpuMemoryRequest"),
    (body({"storage": {"pvc": [{"path": "/d", "claimInfo": {"size": "1e99999999"}}]}}),
     "/spec/storage/pvc/0/claimInfo/size"),
    (body({"security": {"uidGidSource": "custom", "runAsUid": 1, "runAsGid": 1,
                         "supplementalGroups": "9" * 5000}}),
     "/spec/security/supplementalGroups"),
    (body(masterSpecSameAsWorker=False,
          master={"spec": {"image": "m", "labels": [{"name": "role", "value": "master node"}]}}),
     "/master/spec/labels/0/value"),
]  # fmt: skip


@pytest.mark.parametrize(("request_body", "pointer"), REFUSED, ids=[p for _, p in REFUSED])
async def test_a_refused_template_names_the_field_and_writes_nothing(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool, request_body: dict[str, Any], pointer: str
) -> None:
    response = await call(app, "POST", TEMPLATES, admin, json=request_body)
    assert response.status_code == 400, response.text
    assert [e["pointer"] for e in response.json()["errors"]] == [pointer], response.json()
    assert await clean_pool.fetchval(TEMPLATE_EVENTS) == 0


async def test_what_the_rules_allow_is_accepted_and_combined_as_it_runs(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    config = {"meta": {"name": "cfg", "scope": "tenant"},
              "spec": {"configMap": "train-config", "mountPath": "/etc/train"}}  # fmt: skip
    made = await call(app, "POST", "/api/v1/asset/datasource/config-map", admin, json=config)
    assert made.status_code == 202, made.text
    spec = {
        "image": "pt",  # untagged: Kubernetes pulls it always
        "backoffLimit": 3,
        "priorityClass": "high",
        "tolerations": [{"name": "gpu", "key": "nvidia.com/gpu", "operator": "Exists",
                         "effect": "NoSchedule"}],
        "podAffinity": {"type": "Preferred", "key": "topology.kubernetes.io/zone"},
        "ports": [{"name": "tb", "container": 6006, "serviceType": "NodePort", "external": 30606}],
        "relatedUrls": [{"name": "w", "url": "https://wandb.ai/team", "type": "wandb"}],
        "nodeAffinityRequired": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "gpu-count", "operator": "Gt", "values": ["4"]}]}]},
        "storage": {"emptyDirVolume": [{"name": "scratch", "path": "/scratch"}],
                    "pvc": [{"name": "out", "path": "/out", "claimInfo": {"size": "10Gi"}}]},
        "labels": [{"name": "app.kubernetes.io/part-of", "value": "ddp_1.x"}, {"name": "t"}],
        "annotations": [{"name": "example.com/note", "value": "any text, even this!"}],
        "exposedUrls": [{"name": "nb", "container": 8888, "authorizedUsers": ["ana@example.com"]}],
        "security": {"uidGidSource": "custom", "runAsUid": 0, "runAsGid": 2147483647,
                     "supplementalGroups": "4,2147483647"},
        "compute": {"gpuDevicesRequest": 1, "gpuRequestType": "portion",
                    "gpuPortionRequest": 0.01,
                    "extendedResources": [{"resource": "rdma/hca", "quantity": "1"}]},
    }  # fmt: skip
    template = body(
        spec,
        assets={"datasources": [{"id": made.json()["meta"]["id"], "kind": "config-map"}]},
        masterSpecSameAsWorker=False,
        master={"spec": {"image": "coordinator:1.0"}},
    )
    created = await call(app, "POST", TEMPLATES, admin, json=template)
    assert created.status_code == 202, created.text
    await project_all(clean_pool)
    read = (await call(app, "GET", f"{TEMPLATES}/{created.json()['meta']['id']}", admin)).json()
    assert read["runnable"]["isRunnable"], read["runnable"]
    combined, master = read["combinedSpec"], read["combinedMasterSpec"]
    assert combined["storage"]["configMapVolume"][0]["configMap"] == "train-config"
    assert (combined["imagePullPolicy"], master["imagePullPolicy"]) == ("Always", "IfNotPresent")
    workload_wide = {
        "backoffLimit": 3,
        "priorityClass": "high",
        "terminationGracePeriodSeconds": 30,
        "preemptibility": "preemptible",
    }
    for field, value in workload_wide.items():
        assert combined[field] == master[field] == value, field
    assert combined["labels"][0]["value"] == "ddp_1.x"
    assert combined["security"]["runAsGid"] == 2147483647
    assert combined["compute"]["extendedResources"] == [{"resource": "rdma/hca", "quantity": "1"}]


@pytest.mark.parametrize(
    ("entries", "pointer"),
    [
        (["spec.notAField"], "/fieldsToClear/0"),
        (["spec.image", "spec.compute.noSuchThing"], "/fieldsToClear/1"),
        ("spec.image", "/fieldsToClear"),
        ([7], "/fieldsToClear"),
    ],
)
async def test_fields_to_clear_that_name_no_field_are_refused(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool, entries: Any, pointer: str
) -> None:
    made = await call(app, "POST", TEMPLATES, admin, json=body({"compute": {"cpuCoreRequest": 1}}))
    assert made.status_code == 202, made.text
    path = f"{TEMPLATES}/{made.json()['meta']['id']}"
    before = await clean_pool.fetchval(TEMPLATE_EVENTS)
    refused = await call(app, "PATCH", path, admin, json={"fieldsToClear": entries})
    assert refused.status_code == 400, refused.text
    assert [e["pointer"] for e in refused.json()["errors"]] == [pointer]
    assert await clean_pool.fetchval(TEMPLATE_EVENTS) == before
    cleared = await call(app, "PATCH", path, admin, json={"fieldsToClear": ["spec.compute"]})
    assert cleared.status_code == 200, cleared.text
    assert "compute" not in cleared.json()["spec"]


async def test_both_lists_sort_by_sort_by_and_refuse_another_naming_it(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    for name in ("b-second", "c-third", "a-last"):  # created in this order
        made = await call(app, "POST", TEMPLATES, admin, json={**body(), "meta": {
            "name": name, "scopeType": "tenant"}})  # fmt: skip
        assert made.status_code == 202, made.text
    await project_all(clean_pool)
    for path in (TEMPLATES, "/api/v1/workload-templates"):
        by_name = await call(app, "GET", path, admin, params={"sortBy": "name"})
        names = [t["meta"]["name"] for t in by_name.json()["entries"]]
        assert names == ["a-last", "b-second", "c-third"], path
        by_age = await call(
            app, "GET", path, admin, params={"sortBy": "createdAt", "sortOrder": "desc"}
        )
        names = [t["meta"]["name"] for t in by_age.json()["entries"]]
        assert names == ["a-last", "c-third", "b-second"], path
        refused = await call(app, "GET", path, admin, params={"sortBy": "colour"})
        assert refused.status_code == 400, refused.text
        assert refused.json()["errors"] == [
            {"pointer": "sortBy", "detail": "Invalid enum value 'colour'", "source": "query"}
        ]
        assert "sortBy" in refused.json()["message"]


async def test_a_sub_path_override_of_a_data_source_that_is_no_config_map_is_refused(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    nfs = {"meta": {"name": "nas", "scope": "tenant"},
           "spec": {"server": "nas", "path": "/exports", "mountPath": "/data"}}  # fmt: skip
    made = await call(app, "POST", "/api/v1/asset/datasource/nfs", admin, json=nfs)
    assert made.status_code == 202, made.text
    link = {"id": made.json()["meta"]["id"], "kind": "nfs", "overrides": {"subPath": "a.yaml"}}
    refused = await call(app, "POST", TEMPLATES, admin, json=body(assets={"datasources": [link]}))
    assert refused.status_code == 400, refused.text
    assert [e["pointer"] for e in refused.json()["errors"]] == [
        "/assets/datasources/0/overrides/subPath"
    ]
    assert await clean_pool.fetchval(TEMPLATE_EVENTS) == 0
    link["overrides"] = {"containerPath": "/nas"}
    accepted = await call(app, "POST", TEMPLATES, admin, json=body(assets={"datasources": [link]}))
    assert accepted.status_code == 202, accepted.text
