"""Storage classes over HTTP in Run:ai's shapes: a cluster's classes registered, listed (the
cluster agent's names, v1 and v2) and removed; their configurations created, read, listed,
replaced, patched and deleted; and every new PVC (a template's volume, a PVC data source, a
submission) held to them, refused naming the field, given the defaults, or reported not runnable."""

from typing import Any
from uuid import uuid4

import asyncpg
import pytest
from litestar import Litestar

from domain.values import Grant
from tests.api.support import call, project_all, token_for
from tests.api.test_assets import org  # noqa: F401  # the fixture: a cluster, a department, two projects
from tests.openapi import assert_matches

pytestmark = [pytest.mark.api, pytest.mark.integration]

CONFIGURATIONS = "/api/v1/storage-class-configuration"
TEMPLATES = "/api/v1/workload-templates/distributed"
RWO_ONLY = {"readWriteOnce": True, "readOnlyMany": False, "readWriteMany": False}


def classes(cluster: str) -> str:
    return f"/v1/k8s/clusters/{cluster}/storage-classes"


async def registered(app: Litestar, token: str, cluster: str, name: str, **spec: Any) -> None:
    body = {"isDefault": False, **spec}
    assert_matches("StorageClassSpec", body)
    answer = await call(app, "PUT", f"{classes(cluster)}/{name}", token, json=body)
    assert answer.status_code == 200, answer.text


async def configured(app: Litestar, token: str, body: dict[str, Any]) -> dict[str, Any]:
    assert_matches("StorageClassConfigurationCreationRequest", body)
    answer = await call(app, "POST", CONFIGURATIONS, token, json=body)
    assert answer.status_code == 201, answer.text
    created: dict[str, Any] = answer.json()
    return created


def fast(cluster: str, **customization: Any) -> dict[str, Any]:
    """The guide's example: read-write-once only, 1 to 10 GiB."""
    return {
        "scopeType": "cluster",
        "scopeId": cluster,
        "name": "fast",
        "customization": {
            "accessMode": {"supportedValues": RWO_ONLY, "default": {"readWriteOnce": True}},
            "claimSize": {"min": "1Gi", "max": "10Gi", "default": "5Gi"},
            **customization,
        },
    }


def volume(**claim: Any) -> dict[str, Any]:
    return {
        "name": "scratch",
        "path": "/scratch",
        "existingPvc": False,
        "claimInfo": {"storageClass": "fast", **claim},
    }


def template(name: str, project: dict[str, Any], *volumes: dict[str, Any]) -> dict[str, Any]:
    return {
        "meta": {"name": name, "scopeType": "project", "scopeId": project["id"]},
        "spec": {
            "distributedFramework": "PyTorch",
            "numWorkers": 2,
            "image": "pt:24",
            "storage": {"pvc": list(volumes)},
        },
    }


async def test_a_cluster_s_classes_are_registered_listed_and_removed(
    app: Litestar,
    admin: str,
    clean_pool: asyncpg.Pool,
    org: dict[str, Any],  # noqa: F811
) -> None:
    cluster = org["cluster"]["uuid"]
    await registered(app, admin, cluster, "standard", provisioner="ebs.csi.aws.com", isDefault=True)
    await registered(app, admin, cluster, "fast", allowVolumeExpansion=True)
    await configured(app, admin, fast(cluster))
    await project_all(clean_pool)

    names = await call(app, "GET", classes(cluster), admin, params={"includeNone": "true"})
    assert names.json() == {"storageClasses": ["fast", "standard", "runai-none"]}
    listed = await call(app, "GET", "/api/v1/storage-classes", admin, params={"clusterId": cluster})
    assert listed.status_code == 200, listed.text
    items = {i["storage_class_name"]: i["Spec"] for i in listed.json()["items"]}
    assert items["standard"] == {"provisioner": "ebs.csi.aws.com", "is_default": True}
    v2 = await call(app, "GET", "/api/v2/storage-classes", admin, params={"clusterId": cluster})
    by_name = {i["storageClassName"]: i for i in v2.json()["items"]}
    assert by_name["fast"]["customization"]["claimSize"]["max"] == "10Gi"
    assert "customization" not in by_name["standard"]
    one = {"clusterId": cluster, "name": "standard"}
    named = await call(app, "GET", "/api/v2/storage-classes", admin, params=one)
    assert [i["storageClassName"] for i in named.json()["items"]] == ["standard"]

    await registered(app, admin, cluster, "standard", isDefault=False)  # reported again, changed
    gone = await call(app, "DELETE", f"{classes(cluster)}/fast", admin)
    assert gone.status_code == 204, gone.text
    assert (await call(app, "DELETE", f"{classes(cluster)}/fast", admin)).status_code == 404
    await project_all(clean_pool)
    assert (await call(app, "GET", classes(cluster), admin)).json() == {
        "storageClasses": ["standard"]
    }
    assert (await call(app, "GET", classes(str(uuid4())), admin)).status_code == 404
    unknown = {"clusterId": str(uuid4())}
    assert (
        await call(app, "GET", "/api/v1/storage-classes", admin, params=unknown)
    ).status_code == 400
    bad = await call(app, "PUT", f"{classes(cluster)}/Not_A_Name", admin, json={"isDefault": False})
    assert bad.status_code == 400, bad.text
    assert (await call(app, "PUT", f"{classes(cluster)}/x", admin, json={})).status_code == 400


async def test_a_configuration_round_trips_in_run_ai_shapes(
    app: Litestar,
    admin: str,
    clean_pool: asyncpg.Pool,
    org: dict[str, Any],  # noqa: F811
) -> None:
    cluster = org["cluster"]["uuid"]
    attribute = {"key": "dnsname", "format": "text", "required": True}
    created = await configured(
        app,
        admin,
        {**fast(cluster, attributes=[attribute]), "permissions": {"allowDataSharing": False}},
    )
    assert (created["scopeId"], created["name"], created["tenantId"]) == (cluster, "fast", 1)
    again = await call(app, "POST", CONFIGURATIONS, admin, json=fast(cluster))
    assert again.status_code == 409, again.text  # one configuration per class
    await project_all(clean_pool)
    one = f"{CONFIGURATIONS}/{created['id']}"
    assert (await call(app, "GET", one, admin)).json() == created
    listed = await call(app, "GET", CONFIGURATIONS, admin, params={"filterBy": "name==fast"})
    assert [c["id"] for c in listed.json()["storageClassConfigurations"]] == [created["id"]]

    patch = {"customization": {"claimSize": {"max": "20Gi"}, "attributesToRemove": ["dnsname"]}}
    patched = await call(app, "PATCH", one, admin, json=patch)
    assert patched.status_code == 200, patched.text
    size = patched.json()["customization"]["claimSize"]
    assert (size["min"], size["max"]) == ("1Gi", "20Gi")
    assert "attributes" not in patched.json()["customization"]
    assert patched.json()["permissions"] == {"allowDataSharing": False}
    put = await call(app, "PUT", one, admin, json={"permissions": {"allowedForAssets": False}})
    assert put.status_code == 200, put.text
    assert "customization" not in put.json()
    assert (await call(app, "DELETE", one, admin)).status_code == 204
    await project_all(clean_pool)
    assert (await call(app, "GET", one, admin)).status_code == 404

    for body, pointer in [
        (fast(cluster, claimSize={"min": "10Gi", "max": "1Gi"}), "/customization/claimSize/min"),
        ({**fast(cluster), "scopeId": str(uuid4())}, "/scopeId"),
        ({**fast(cluster), "name": "Fast Disks"}, "/name"),
    ]:
        refused = await call(app, "POST", CONFIGURATIONS, admin, json=body)
        assert refused.status_code == 400, refused.text
        assert pointer in [e["pointer"] for e in refused.json()["errors"]]
    stranger = await token_for(
        clean_pool, "stranger", (Grant(role="admin", scope_kind="cluster", scope_id=str(uuid4())),)
    )
    kept = await configured(app, admin, fast(cluster))
    await project_all(clean_pool)
    hidden = f"{CONFIGURATIONS}/{kept['id']}"
    assert (await call(app, "GET", hidden, stranger)).status_code == 404
    assert (await call(app, "DELETE", hidden, stranger)).status_code == 404
    assert (await call(app, "GET", CONFIGURATIONS, stranger)).json()[
        "storageClassConfigurations"
    ] == []


async def test_a_new_volume_is_held_to_its_class_s_configuration(
    app: Litestar,
    admin: str,
    clean_pool: asyncpg.Pool,
    org: dict[str, Any],  # noqa: F811
) -> None:
    cluster, llm = org["cluster"]["uuid"], org["projects"][0]
    await registered(app, admin, cluster, "fast")
    configuration = await configured(app, admin, fast(cluster))
    cases: list[tuple[dict[str, Any], str]] = [
        ({"size": "5Gi", "accessModes": {"readWriteMany": True}}, "accessModes/readWriteMany"),
        ({"size": "100Gi"}, "size"),
        ({"size": "5Gi", "storageClass": "slow"}, "storageClass"),
    ]
    for claim, pointer in cases:
        refused = await call(
            app, "POST", TEMPLATES, admin, json=template("t", llm, volume(**claim))
        )
        assert refused.status_code == 400, refused.text
        expected = f"/spec/storage/pvc/0/claimInfo/{pointer}"
        assert [e["pointer"] for e in refused.json()["errors"]] == [expected]
    made = await call(app, "POST", TEMPLATES, admin, json=template("ok", llm, volume()))
    assert made.status_code == 202, made.text
    claim = made.json()["spec"]["storage"]["pvc"][0]["claimInfo"]
    assert claim["size"] == "5Gi"  # the defaults: its size, and its access modes (RWO: all unset)
    assert claim["accessModes"] == {}

    # A PVC data source is an asset: its class's assets permission decides.
    await call(
        app, "PATCH", f"{CONFIGURATIONS}/{configuration['id']}", admin,
        json={"permissions": {"allowedForAssets": False}},
    )  # fmt: skip
    pvc = {
        "meta": {"name": "data", "scope": "project", "projectId": int(llm["id"])},
        "spec": {
            "existingPvc": False,
            "path": "/data",
            "claimInfo": {"storageClass": "fast", "size": "2Gi"},
        },
    }
    refused = await call(app, "POST", "/api/v1/asset/datasource/pvc", admin, json=pvc)
    assert refused.status_code == 400, refused.text
    assert [e["pointer"] for e in refused.json()["errors"]] == ["/spec/claimInfo/storageClass"]

    # Configured anew, the stored template says why it cannot run there now.
    await call(
        app, "PATCH", f"{CONFIGURATIONS}/{configuration['id']}", admin,
        json={"customization": {"claimSize": {"max": "2Gi", "default": "1Gi"}}},
    )  # fmt: skip
    await project_all(clean_pool)
    got = (await call(app, "GET", f"{TEMPLATES}/{made.json()['meta']['id']}", admin)).json()
    assert got["runnable"]["isRunnable"] is False
    assert got["runnable"]["issue"].startswith("/spec/storage/pvc/0/claimInfo/size:")
    submitted = await call(
        app, "POST", "/api/v1/workloads/distributed", admin,
        json={"name": "run", "projectId": llm["id"], "clusterId": cluster,
              "templateId": made.json()["meta"]["id"]},
    )  # fmt: skip
    assert submitted.status_code == 400, submitted.text
    assert [e["pointer"] for e in submitted.json()["errors"]] == ["/templateId"]


async def test_a_volume_naming_no_class_is_held_to_the_default_class_and_its_step(
    app: Litestar,
    admin: str,
    clean_pool: asyncpg.Pool,
    org: dict[str, Any],  # noqa: F811
) -> None:
    cluster, llm = org["cluster"]["uuid"], org["projects"][0]
    unnamed = {"name": "scratch", "path": "/scratch", "existingPvc": False,
               "claimInfo": {"size": "3Gi"}}  # fmt: skip
    made = await call(app, "POST", TEMPLATES, admin, json=template("before", llm, unnamed))
    assert made.status_code == 202, made.text  # no default class yet: nothing checked
    await registered(app, admin, cluster, "standard", isDefault=True)
    stepped = {**fast(cluster), "name": "standard"}
    stepped["customization"]["claimSize"] = {"min": "1Gi", "max": "9Gi", "step": "2Gi",
                                             "default": "5Gi"}  # fmt: skip
    standard = await configured(app, admin, stepped)
    refused = await call(
        app, "POST", TEMPLATES, admin,
        json=template("t", llm, {**unnamed, "claimInfo": {"size": "4Gi"}}),
    )  # fmt: skip
    assert refused.status_code == 400, refused.text
    (error,) = refused.json()["errors"]
    assert error["pointer"] == "/spec/storage/pvc/0/claimInfo/size"
    assert "the default class 'standard'" in refused.text
    kept = await call(app, "POST", TEMPLATES, admin, json=template("ok", llm, unnamed))
    assert kept.status_code == 202, kept.text  # 1Gi plus a multiple of 2Gi

    # The stored template of 3Gi, once the default class moves its step, says so.
    await call(
        app, "PATCH", f"{CONFIGURATIONS}/{standard['id']}", admin,
        json={"customization": {"claimSize": {"step": "4Gi"}}},
    )  # fmt: skip
    await project_all(clean_pool)
    got = (await call(app, "GET", f"{TEMPLATES}/{made.json()['meta']['id']}", admin)).json()
    assert got["runnable"]["isRunnable"] is False
    assert got["runnable"]["issue"].startswith("/spec/storage/pvc/0/claimInfo/size:")
