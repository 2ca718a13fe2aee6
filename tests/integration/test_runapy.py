"""The official Run:ai Python client (runapy), unmodified, against the running service, used the
way its users write scripts: create something, read it straight back, change it, delete it. No
retries, no sleeps, no special headers: every read must see the writes before it.

Each journey runs TRAINPLATE_RUNAPY_ROUNDS times (default 50) with no miss allowed, against one
API process and against two, the client's calls going to each in turn (as behind a load
balancer), with the projector following the log as in production."""

import asyncio
import itertools
import json
import os
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from uuid import UUID, uuid4

import asyncpg
import httpx
import pytest
from runai.api_client import ApiClient
from runai.configuration import Configuration
from runai.exceptions import ApiException
from runai.models import (
    AssetCreationRequest,
    AssetUpdateRequest,
    ComputeAssetSpec,
    ComputeCreationRequest,
    CredentialKind,
    DatavolumeCreationFields,
    DatavolumePatchFields,
    DatavolumeRequestType,
    DistributedCreationRequest,
    DistributedPolicyChangeRequestV2,
    DistributedPolicyOverwriteRequestV2,
    DistributedTemplatePatchRequest,
    EnvironmentAssetSpec,
    EnvironmentCreationRequest,
    EnvironmentUpdateRequest,
    ImagePullPolicy,
    NFSAssetSpec,
    NFSCreationRequest,
    NodepoolCreateFields,
    RegistryCreationRequest,
    RegistrySpec,
    RegistryUpdateRequest,
    Scope,
    ScopeType2,
    SharedScopeBase,
    SharedScopesPatchRequest,
    StorageClassConfigurationCreationRequest,
    TenantSettingCreationRequest,
)
from runai.runai_client import RunaiClient

from domain.commands import CreateApplication
from domain.events import EventMetadata, PodObserved
from domain.values import TENANT_ADMIN
from infra.cli.embedded import free_port
from infra.postgres.application_registry import PostgresApplicationRegistry
from infra.postgres.streams import PostgresStreams
from infra.postgres.units_of_work import SecretKeys
from infra.security.secret_hashing import SecretHasher
from infra.serialization import DOMAIN_CODEC
from services import pod_reports
from services.applications import create_application
from tests.api.support import AUTH, SERVE_KEYS
from tests.oci_stand_in import OciStandIn, serving
from tests.processes import serve, wait_until_ready

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SECRET = "runapy-secret-value"
ROUNDS = int(os.environ.get("TRAINPLATE_RUNAPY_ROUNDS", "50"))
IMAGE = "nvcr.io/nvidia/pytorch:24.05-py3"


@pytest.fixture
def service(postgres_url: str, nats_url: str, clean_pool: asyncpg.Pool) -> Iterator[list[str]]:
    """Two API processes and the projector, as the production entry points run them."""
    ports = [free_port(), free_port()]
    common = {
        **SERVE_KEYS,
        "PROJECTOR__POLL_INTERVAL_S": "0.05",
        "REGISTRIES__ALLOW_LOOPBACK": "true",  # the stand-in registry
    }
    children = [serve("api", postgres_url, nats_url, API_PORT=str(p), **common) for p in ports]
    children.append(serve("projector", postgres_url, nats_url, **common))
    urls = [f"http://127.0.0.1:{port}" for port in ports]
    try:
        for url, child in zip(urls, children, strict=False):  # the API processes come first
            wait_until_ready(f"{url}/readyz", child, within_s=30)
        yield urls
    finally:
        for child in children:
            child.terminate()
        for child in children:
            child.wait(timeout=15)


def clients_over(
    urls: list[str], client_id: str = "runapy-admin", secret: str = SECRET
) -> Callable[[], RunaiClient]:
    """The client a script would build, one per API process; each call takes the next."""
    built = [
        RunaiClient(
            ApiClient(Configuration(client_id=client_id, client_secret=secret, runai_base_url=url))
        )
        for url in urls
    ]
    turns = itertools.cycle(built)
    return lambda: next(turns)


def missing(call: Callable[[], object]) -> int:
    """The status of a call that must fail (a read after a delete)."""
    try:
        call()
    except ApiException as error:
        return int(error.status)
    return 200


def environment_journey(client: Callable[[], RunaiClient], round_: int) -> None:
    name = f"env-{round_}"
    created = client().workload_assets.environment.create_environment_asset(
        EnvironmentCreationRequest(
            meta=AssetCreationRequest(name=name, scope=Scope.TENANT),
            spec=EnvironmentAssetSpec(image=IMAGE, imagePullPolicy=ImagePullPolicy.IFNOTPRESENT),
        )
    )
    assert created.status_code == 202
    environment_id = created.data["meta"]["id"]
    got = client().workload_assets.environment.get_environment_asset_by_id(environment_id)
    assert got.data["spec"]["image"] == IMAGE, f"round {round_}: {got.data}"
    listed = client().workload_assets.environment.list_environment_assets().data["entries"]
    assert name in [e["meta"]["name"] for e in listed], f"round {round_}: not listed"
    client().workload_assets.environment.update_environment_asset_by_id(
        environment_id,
        EnvironmentUpdateRequest(
            meta=AssetUpdateRequest(name=name, description="2.4"),
            spec=EnvironmentAssetSpec(image=f"{IMAGE}-{round_}"),
        ),
    )
    got = client().workload_assets.environment.get_environment_asset_by_id(environment_id)
    assert got.data["spec"]["image"] == f"{IMAGE}-{round_}", f"round {round_}: old data"
    assert got.data["meta"]["description"] == "2.4"
    client().workload_assets.environment.delete_environment_asset_by_id(environment_id)
    gone = missing(
        lambda: client().workload_assets.environment.get_environment_asset_by_id(environment_id)
    )
    assert gone == 404, f"round {round_}: {gone} after the delete"


def template_journey(client: Callable[[], RunaiClient], round_: int) -> str:
    """A template linking an environment and a compute resource and loading an NFS volume.
    runapy's published creation model has no top-level `assets` block, so that body is passed
    as a plain dict, which the client sends as it is. Returns the template's id."""
    assets = client().workload_assets
    environment = assets.environment.create_environment_asset(
        EnvironmentCreationRequest(
            meta=AssetCreationRequest(name=f"t-env-{round_}", scope=Scope.TENANT),
            spec=EnvironmentAssetSpec(image=IMAGE),
        )
    ).data["meta"]["id"]
    compute = assets.compute.create_compute_asset(
        ComputeCreationRequest(
            meta=AssetCreationRequest(name=f"t-gpu-{round_}", scope=Scope.TENANT),
            spec=ComputeAssetSpec(gpuDevicesRequest=8),
        )
    ).data["meta"]["id"]
    volume = (
        client()
        .workload_assets.nfs.create_nfs_asset(
            NFSCreationRequest(
                meta=AssetCreationRequest(name=f"t-nfs-{round_}", scope=Scope.TENANT),
                spec=NFSAssetSpec(server="nfs.local", path="/datasets", mountPath="/data"),
            )
        )
        .data["meta"]["id"]
    )
    templates = client().workloads.workload_templates
    name = f"ddp-{round_}"
    created = templates.create_distributed_template(
        {
            "meta": {"name": name, "scopeType": "tenant"},
            "spec": {"distributedFramework": "PyTorch", "numWorkers": 2},
            "assets": {
                "environment": environment,
                "compute": compute,
                "datasources": [{"id": volume, "kind": "nfs"}],
            },
        }
    )
    assert created.status_code == 202
    template_id = created.data["meta"]["id"]
    got = client().workloads.workload_templates.get_distributed_template(template_id).data
    assert got["combinedSpec"]["image"] == IMAGE, f"round {round_}: {got}"
    assert got["combinedSpec"]["compute"]["gpuDevicesRequest"] == 8
    listed = client().workloads.workload_templates.list_distributed_templates(
        filter_by=[f"name=={name}"]
    )
    assert [t["meta"]["name"] for t in listed.data["entries"]] == [name], f"round {round_}"
    patch = DistributedTemplatePatchRequest.from_dict({"spec": {"numWorkers": 4}})
    client().workloads.workload_templates.patch_distributed_template(template_id, patch)
    got = client().workloads.workload_templates.get_distributed_template(template_id).data
    assert got["spec"]["numWorkers"] == 4, f"round {round_}: old data"
    assert got["spec"]["distributedFramework"] == "PyTorch"  # a null in the patch is not given
    assert got["assets"]["compute"] == compute
    return str(template_id)


def workload_journey(
    client: Callable[[], RunaiClient], round_: int, template_id: str, org: dict[str, str]
) -> None:
    submitted = client().workloads.distributed.create_distributed(
        DistributedCreationRequest(
            name=f"run-{round_}",
            projectId=org["project"],
            clusterId=org["cluster"],
            templateId=template_id,
        )
    )
    assert submitted.status_code == 202
    workload_id = submitted.data["workloadId"]
    got = client().workloads.distributed.get_distributed(workload_id)
    assert got.data["name"] == f"run-{round_}", f"round {round_}: {got.data}"
    deleted = client().workloads.distributed.delete_distributed(workload_id)
    assert deleted.status_code == 202, f"round {round_}: the new workload could not be deleted"


def settings_journey(client: Callable[[], RunaiClient], round_: int) -> None:
    """A tenant setting turned, and read straight back, one and all."""
    wanted = round_ % 2 == 0
    key = "workloads.ngcCatalog"  # no journey here picks an image from the NGC catalog
    client().organizations.tenant.update_tenant_setting(
        TenantSettingCreationRequest(key=key, value=wanted)
    )
    got = client().organizations.tenant.get_tenant_settings_by_key(key).data
    assert got is wanted, f"round {round_}: {got}"
    listed = {
        s["key"]: s["value"] for s in client().organizations.tenant.get_tenant_settings().data
    }
    assert listed[key] == ("true" if wanted else "false"), f"round {round_}: old data"


async def register_admin(pool: asyncpg.Pool) -> None:
    keys = SecretKeys(hasher=SecretHasher(AUTH))
    app_store = PostgresStreams(pool, DOMAIN_CODEC, keys=keys)
    registry = PostgresApplicationRegistry(app_store, pool, keys)
    command = CreateApplication(
        application_id=uuid4(),
        name="runapy-admin",
        grants=(TENANT_ADMIN,),
        metadata=EventMetadata(actor_subject="setup", actor_kind="system"),
    )
    await create_application(command, secret=SECRET, store=app_store, registry=registry)


def an_org(url: str) -> dict[str, str]:
    """A cluster and a project to submit into (set up over plain HTTP)."""
    with httpx.Client(base_url=url, timeout=30) as http:
        login = {"grantType": "app_token", "AppId": "runapy-admin", "AppSecret": SECRET}
        token = http.post("/api/v1/token", json=login).json()["accessToken"]
        http.headers["authorization"] = f"Bearer {token}"
        cluster = http.post("/api/v1/clusters", json={"name": "east"}).json()["uuid"]
        project = http.post(
            "/api/v1/org-unit/projects", json={"name": "llm", "clusterId": cluster}
        ).json()["id"]
    return {"cluster": cluster, "project": str(project)}


def run_journeys(urls: list[str]) -> int:
    client = clients_over(urls)
    org = an_org(urls[0])
    for round_ in range(ROUNDS):
        environment_journey(client, round_)
        settings_journey(client, round_)
        template_id = template_journey(client, round_)
        workload_journey(client, round_, template_id, org)
        client().workloads.workload_templates.delete_distributed_template(template_id)
    return ROUNDS


@pytest.mark.parametrize("processes", [1, 2], ids=["one API process", "two API processes"])
async def test_runapy_scripts_read_their_own_writes(
    service: list[str], clean_pool: asyncpg.Pool, processes: int
) -> None:
    await register_admin(clean_pool)
    rounds = await asyncio.to_thread(run_journeys, service[:processes])
    assert rounds == ROUNDS
    kinds = await clean_pool.fetch(
        "SELECT type, count(*) AS n FROM events GROUP BY type ORDER BY type"
    )
    counted = {row["type"]: row["n"] for row in kinds}
    assert counted["environment.deleted.v1"] == ROUNDS
    assert counted["tenant.setting_changed.v1"] == ROUNDS
    assert counted["template.deleted.v1"] == ROUNDS
    assert counted["workload.deleted.v1"] == ROUNDS


def registry_journey(client: Callable[[], RunaiClient], round_: int, registry_url: str) -> None:
    """A registry of the team's images: made, read back, asked for its repositories and a
    repository's tags (the service asks the registry itself, logging in as it asks), renamed,
    deleted."""
    name = f"ngc-{round_}"
    created = client().workload_assets.registry.create_registry(
        RegistryCreationRequest(
            meta=AssetCreationRequest(name=name, scope=Scope.TENANT),
            spec=RegistrySpec(
                url=registry_url,
                credentialKind=CredentialKind.PASSWORD,
                user="puller",
                password="pull-secret",
            ),
        )
    )
    assert created.status_code == 201
    registry_id = created.data["meta"]["id"]
    got = client().workload_assets.registry.get_registry_by_id(registry_id)
    assert got.data["spec"]["url"] == registry_url, f"round {round_}: {got.data}"
    listed = client().workload_assets.registry.list_registries(name=name).data["entries"]
    assert [e["meta"]["id"] for e in listed] == [registry_id], f"round {round_}: not listed"
    found = client().workload_assets.registry.get_repositories(registry_id, search_name="nvidia")
    assert found.data == {"repositories": ["nvidia/pytorch", "nvidia/tensorflow"]}
    tags = client().workload_assets.registry.get_repository_tags(
        registry_id, repository="nvidia/pytorch"
    )
    assert tags.data == {"name": "nvidia/pytorch", "tags": ["24.05-py3", "latest"]}
    client().workload_assets.registry.update_registry(
        registry_id, RegistryUpdateRequest(meta=AssetUpdateRequest(name=f"{name}-eu"))
    )
    got = client().workload_assets.registry.get_registry_by_id(registry_id)
    assert got.data["meta"]["name"] == f"{name}-eu", f"round {round_}: old data"
    deleted = client().workload_assets.registry.delete_registry(registry_id)
    assert deleted.status_code == 204
    gone = missing(lambda: client().workload_assets.registry.get_registry_by_id(registry_id))
    assert gone == 404, f"round {round_}: {gone} after the delete"


async def test_runapy_scripts_use_a_registry_of_their_images(
    service: list[str], clean_pool: asyncpg.Pool
) -> None:
    await register_admin(clean_pool)
    images = {"nvidia/pytorch": ["24.05-py3", "latest"], "nvidia/tensorflow": [], "team/x": []}
    async with serving(OciStandIn(images, auth="bearer", page_cap=1)) as registry:
        client = clients_over(service)  # each call to the next of the two API processes

        def journeys() -> None:
            for round_ in range(ROUNDS):
                registry_journey(client, round_, registry.url)

        await asyncio.to_thread(journeys)
    deleted = "SELECT count(*) FROM events WHERE type = 'registry.deleted.v1'"
    assert await clean_pool.fetchval(deleted) == ROUNDS


def data_volume_journey(
    client: Callable[[], RunaiClient], round_: int, org: dict[str, str]
) -> None:
    """A data volume of a project's PVC: made, read back, listed where it is usable, shared
    with the cluster, described anew, its name found taken, deleted."""
    name = f"corpus-{round_}"
    created = client().datavolumes.datavolumes.create_datavolume(
        DatavolumeCreationFields(name=name, projectId=org["project"], originPvcName="pvc-a")
    )
    assert created.status_code == 201
    volume_id = created.data["id"]
    got = client().datavolumes.datavolumes.get_datavolume(volume_id)
    assert got.data["name"] == name, f"round {round_}: {got.data}"
    listed = client().datavolumes.datavolumes.get_datavolumes(
        DatavolumeRequestType.USABLEINPROJECT.value, usable_in_project_id=org["project"]
    )
    ids = [v["id"] for v in listed.data["datavolumes"]]
    assert ids == [volume_id], f"round {round_}: not listed"
    shared = client().datavolumes.datavolumes.patch_datavolume_shared_scopes(
        volume_id,
        SharedScopesPatchRequest(
            add=[SharedScopeBase(scopeType=ScopeType2.CLUSTER, scopeId=org["cluster"])]
        ),
    )
    assert [s["scopeId"] for s in shared.data] == [org["cluster"]]
    scopes = client().datavolumes.datavolumes.get_datavolume_shared_scopes(volume_id)
    assert [s["scopeType"] for s in scopes.data] == ["cluster"], f"round {round_}: {scopes.data}"
    client().datavolumes.datavolumes.patch_datavolume(
        volume_id, DatavolumePatchFields(description=f"round {round_}")
    )
    got = client().datavolumes.datavolumes.get_datavolume(volume_id)
    assert got.data["description"] == f"round {round_}", f"round {round_}: old data"
    counted = client().datavolumes.datavolumes.count_datavolumes(
        DatavolumeRequestType.ORIGINATED.value
    )
    assert counted.data == {"count": 1}, f"round {round_}: {counted.data}"
    taken = missing(
        lambda: client().datavolumes.datavolumes.datavolume_name_availability(name, org["cluster"])
    )
    assert taken == 409
    deleted = client().datavolumes.datavolumes.delete_datavolume(volume_id)
    assert deleted.status_code == 204
    gone = missing(lambda: client().datavolumes.datavolumes.get_datavolume(volume_id))
    assert gone == 404, f"round {round_}: {gone} after the delete"


async def test_runapy_scripts_share_a_data_volume(
    service: list[str], clean_pool: asyncpg.Pool
) -> None:
    await register_admin(clean_pool)
    org = an_org(service[0])
    client = clients_over(service)  # each call to the next of the two API processes

    def journeys() -> None:
        for round_ in range(ROUNDS):
            data_volume_journey(client, round_, org)

    await asyncio.to_thread(journeys)
    deleted = "SELECT count(*) FROM events WHERE type = 'datavolume.deleted.v1'"
    assert await clean_pool.fetchval(deleted) == ROUNDS


def policy_journey(client: Callable[[], RunaiClient], round_: int, org: dict[str, str]) -> None:
    """A project's policy, as an administrator's script keeps it: put, read back, patched, what
    is in force read back, deleted, read back gone; each body built as runapy's models build it
    (every unset member sent as null, MPI's defaults filled in)."""
    policies = client().policies.policy
    project = {"scope": "project", "projectId": int(org["project"])}
    put = policies.overwrite_distributed_policy_v2(
        distributed_policy_overwrite_request_v2=DistributedPolicyOverwriteRequestV2.from_dict(
            {"meta": {"name": f"gpus-{round_}", **project},
             "policy": {"defaults": {"worker": {"backoffLimit": 2}},
                        "rules": {"worker": {"compute": {"gpuDevicesRequest": {"max": 4}}}}}}
        )
    )  # fmt: skip
    assert put.status_code == 200
    got = policies.get_distributed_policy_v2("project", project_id=org["project"]).data
    assert got["meta"]["name"] == f"gpus-{round_}", f"round {round_}: {got}"
    assert got["policy"]["rules"]["worker"]["compute"]["gpuDevicesRequest"] == {"max": 4}
    assert got["policy"]["defaults"] == {"worker": {"backoffLimit": 2}}, f"round {round_}: {got}"
    policies.update_distributed_policy_v2(
        distributed_policy_change_request_v2=DistributedPolicyChangeRequestV2.from_dict(
            {"meta": {"name": f"gpus-{round_}", **project},
             "policy": {"rules": {"worker": {"backoffLimit": {"max": 3}}}}}
        )
    )  # fmt: skip
    got = policies.get_distributed_policy_v2("project", project_id=org["project"]).data
    rules = got["effective"]["rules"]["worker"]
    assert rules["backoffLimit"]["max"] == 3, f"round {round_}: old data {got}"
    assert rules["compute"]["gpuDevicesRequest"]["max"] == 4
    listed = client().policies.policy.list_policies(scope="project").data["policies"]
    assert [p["meta"]["name"] for p in listed] == [f"gpus-{round_}"], f"round {round_}: {listed}"
    deleted = policies.delete_distributed_policy("project", project_id=org["project"])
    assert deleted.status_code == 204
    got = policies.get_distributed_policy_v2("project", project_id=org["project"]).data
    assert "policy" not in got, f"round {round_}: {got} after the delete"


async def test_runapy_scripts_keep_a_projects_policy(
    service: list[str], clean_pool: asyncpg.Pool
) -> None:
    await register_admin(clean_pool)
    org = an_org(service[0])
    client = clients_over(service)  # each call to the next of the two API processes

    def journeys() -> None:
        for round_ in range(ROUNDS):
            policy_journey(client, round_, org)

    await asyncio.to_thread(journeys)
    deleted = "SELECT count(*) FROM events WHERE type = 'policy.deleted.v1'"
    assert await clean_pool.fetchval(deleted) == ROUNDS


async def projected(pool: asyncpg.Pool, within_s: float = 30) -> None:
    """Until the projector has the log's last event in the workload read models: a report of
    the backend is not a write of the script's, so the script has nothing to wait for, but the
    test has (the backend's report is its setup)."""
    deadline = asyncio.get_running_loop().time() + within_s
    while True:
        done = await pool.fetchval(
            "SELECT c.global_position >= (SELECT max(global_position) FROM events)"
            " FROM consumer_checkpoints c WHERE c.name = 'projection:workload_catalogue'"
        )
        if done or asyncio.get_running_loop().time() > deadline:
            return
        await asyncio.sleep(0.05)


async def test_runapy_reads_the_pods_a_backend_reported(
    service: list[str], clean_pool: asyncpg.Pool
) -> None:
    await register_admin(clean_pool)
    client = clients_over(service[:1])
    org = await asyncio.to_thread(an_org, service[0])
    template_id = await asyncio.to_thread(template_journey, client, 0)
    submitted = client().workloads.distributed.create_distributed(
        DistributedCreationRequest(
            name="pods", projectId=org["project"], clusterId=org["cluster"], templateId=template_id
        )
    )
    workload_id = submitted.data["workloadId"]
    at = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
    replicas = [
        PodObserved(
            name=f"pods-{workload_id[:8]}-worker-{index}",
            uid=uuid4(),
            role="worker",
            phase="Running",
            node_name="gpu-1",
            created_at=at,
            phase_changed_at=at,
        )
        for index in range(2)
    ]
    store = PostgresStreams(clean_pool, DOMAIN_CODEC)
    await pod_reports.observed(UUID(workload_id), 1, replicas, store=store)
    await projected(clean_pool)
    pods_api = client().workloads.pods
    got = pods_api.get_workload_pods(workload_id).data["pods"]
    assert sorted(p["name"] for p in got) == sorted(p.name for p in replicas)
    listed = pods_api.list_pods(filter_by=[f"workloadId=={workload_id}"]).data["pods"]
    assert [p["k8sPhase"] for p in listed] == ["Running", "Running"]
    assert pods_api.count_pods(filter_by=["nodeName==gpu-1"]).data == {"count": 2}


def refused_at(call: Callable[[], object]) -> tuple[int, list[str]]:
    """The status of a call that must be refused, and the fields its problem names."""
    try:
        call()
    except ApiException as error:
        body = json.loads(error.body or "{}")
        return int(error.status), [e["pointer"] for e in body.get("errors", [])]
    return 200, []


def storage_journey(client: Callable[[], RunaiClient], round_: int, org: dict[str, str]) -> None:
    """The guide's storage class and node pools, as an administrator's script keeps them: a
    class registered and listed, configured (RWO only, 1-10 GiB); a template's volume of it with
    RWX or 100 GiB refused naming the field, a valid one created; a pool registered, a template
    naming a missing one refused; then all of it removed."""
    cluster, fast, pool = org["cluster"], f"fast-{round_}", f"v100-{round_}"
    classes = f"/v1/k8s/clusters/{cluster}/storage-classes"
    spec = {"provisioner": "ebs.csi.aws.com", "isDefault": False}
    registered = client().api_client.call_api("PUT", f"{classes}/{fast}", body=spec)
    assert registered.status_code == 200
    assets = client().workload_assets
    names = assets.storage_classes.v1_get_storage_classes(cluster).data["storageClasses"]
    assert fast in names, f"round {round_}: {names}"
    listed = assets.storage_classes.get_storage_classes(cluster, name=fast).data["items"]
    assert [i["storage_class_name"] for i in listed] == [fast], f"round {round_}: {listed}"
    rwo = {"readWriteOnce": True, "readOnlyMany": False, "readWriteMany": False}
    configured = assets.storage_class_configuration.create_storage_class_configuration(
        StorageClassConfigurationCreationRequest.from_dict(
            {"scopeType": "cluster", "scopeId": cluster, "name": fast,
             "customization": {"accessMode": {"supportedValues": rwo},
                               "claimSize": {"min": "1Gi", "max": "10Gi"}}}
        )
    )  # fmt: skip
    assert configured.status_code == 201
    v2 = assets.storage_classes.get_storage_classes_v2(cluster, name=fast).data["items"]
    assert v2[0]["customization"]["claimSize"]["max"] == "10Gi", f"round {round_}: {v2}"

    templates = client().workloads.workload_templates

    def template(name: str, **spec: object) -> dict[str, object]:
        return {
            "meta": {"name": name, "scopeType": "project", "scopeId": org["project"]},
            "spec": {"distributedFramework": "PyTorch", "numWorkers": 2, "image": IMAGE, **spec},
        }

    def volume(**claim: object) -> dict[str, object]:
        claim_info = {"storageClass": fast, "size": "5Gi", **claim}
        return {"storage": {"pvc": [{"path": "/scratch", "claimInfo": claim_info}]}}

    at = "/spec/storage/pvc/0/claimInfo"
    cases: list[tuple[dict[str, object], str]] = [
        ({"accessModes": {"readWriteMany": True}}, f"{at}/accessModes/readWriteMany"),
        ({"size": "100Gi"}, f"{at}/size"),
    ]
    for claim, field in cases:
        body = template("vol", **volume(**claim))

        def create(sent: dict[str, object] = body) -> object:
            return templates.create_distributed_template(sent)

        refused = refused_at(create)
        assert refused == (400, [field]), f"round {round_}: {refused}"
    made = templates.create_distributed_template(template(f"vol-{round_}", **volume()))
    assert made.status_code == 202

    pools = client().organizations.node_pools
    created = pools.create_nodepool(
        NodepoolCreateFields.from_dict(
            {"name": pool, "clusterId": cluster, "labelKey": "gpu", "labelValue": pool}
        )
    )
    assert created.status_code == 201
    pool_id = created.data["id"]
    found = pools.get_nodepools(filter_by=[f"name=={pool}"]).data["nodepools"]
    assert [p["id"] for p in found] == [pool_id], f"round {round_}: {found}"
    refused = refused_at(
        lambda: templates.create_distributed_template(template("pools", nodePools=["h100"]))
    )
    assert refused == (400, ["/spec/nodePools/0"]), f"round {round_}: {refused}"
    placed = templates.create_distributed_template(template(f"placed-{round_}", nodePools=[pool]))
    assert placed.status_code == 202

    for template_id in (made.data["meta"]["id"], placed.data["meta"]["id"]):
        templates.delete_distributed_template(template_id)
    assert pools.delete_nodepool(pool_id).status_code in (202, 204)
    assets.storage_class_configuration.delete_storage_class_configuration_by_id(
        configured.data["id"]
    )
    client().api_client.call_api("DELETE", f"{classes}/{fast}")
    names = assets.storage_classes.v1_get_storage_classes(cluster).data["storageClasses"]
    assert fast not in names, f"round {round_}: {names} after the removal"


async def test_runapy_scripts_keep_a_cluster_s_storage_classes_and_node_pools(
    service: list[str], clean_pool: asyncpg.Pool
) -> None:
    await register_admin(clean_pool)
    org = an_org(service[0])
    client = clients_over(service)  # each call to the next of the two API processes

    def journeys() -> None:
        for round_ in range(ROUNDS):
            storage_journey(client, round_, org)

    await asyncio.to_thread(journeys)
    removed = "SELECT count(*) FROM events WHERE type = 'storageclass.removed.v1'"
    assert await clean_pool.fetchval(removed) == ROUNDS
