"""The official Run:ai Python client (runapy), unmodified, against a running service: it logs in
through /api/v1/token and manages environments and compute resources."""

import asyncio
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar
from uuid import uuid4

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
    ComputeUpdateRequest,
    DistributedTemplatePatchRequest,
    DistributedTemplateSpec,
    EnvironmentAssetSpec,
    EnvironmentCreationRequest,
    EnvironmentUpdateRequest,
    ImagePullPolicy,
    Scope,
)
from runai.runai_client import RunaiClient

from domain.commands import CreateApplication
from domain.events import EventMetadata
from domain.values import TENANT_ADMIN
from infra.cli.embedded import free_port
from infra.postgres.application_registry import PostgresApplicationRegistry
from infra.security.secret_hashing import SecretHasher
from services.applications import create_application
from tests.api.support import AUTH, CREDENTIALS
from tests.processes import serve

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SECRET = "runapy-secret-value"
T = TypeVar("T")


@pytest.fixture
def service(postgres_url: str, nats_url: str, clean_pool: asyncpg.Pool) -> Iterator[str]:
    """The API and the projector as the production entry points run them."""
    port = free_port()
    settings = {
        "API_PORT": str(port),
        "AUTH__SIGNING_KEY": AUTH.signing_key,
        "AUTH__HASH_TIME_COST": str(AUTH.hash_time_cost),
        "AUTH__HASH_MEMORY_KIB": str(AUTH.hash_memory_kib),
        "CREDENTIALS__ENCRYPTION_KEY": CREDENTIALS.encryption_key,
        "PROJECTOR__POLL_INTERVAL_S": "0.05",
    }
    children = [serve(role, postgres_url, nats_url, **settings) for role in ("api", "projector")]
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{url}/readyz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        else:
            pytest.fail("the API did not become ready")
        yield url
    finally:
        for child in children:
            child.terminate()
        for child in children:
            child.wait(timeout=15)


def eventually(call: Callable[[], T], within_s: float = 15) -> T:
    """Retry a read until the read model has caught up with the write before it."""
    deadline = time.monotonic() + within_s
    while True:
        try:
            return call()
        except (ApiException, AssertionError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def drive(url: str) -> dict[str, Any]:
    """What a user of runapy would write, run in a worker thread (the client blocks)."""
    config = Configuration(client_id="runapy-admin", client_secret=SECRET, runai_base_url=url)
    client = RunaiClient(ApiClient(config))
    environments = client.workload_assets.environment
    computes = client.workload_assets.compute

    created = environments.create_environment_asset(
        EnvironmentCreationRequest(
            meta=AssetCreationRequest(name="pytorch-ddp", scope=Scope.TENANT),
            spec=EnvironmentAssetSpec(
                image="nvcr.io/nvidia/pytorch:24.05-py3",
                imagePullPolicy=ImagePullPolicy.IFNOTPRESENT,
            ),
        )
    )
    environment_id = created.data["meta"]["id"]

    def listed_environment() -> list[str]:
        names = [e["meta"]["name"] for e in environments.list_environment_assets().data["entries"]]
        assert names == ["pytorch-ddp"], names
        return names

    eventually(listed_environment)
    got = eventually(lambda: environments.get_environment_asset_by_id(environment_id))
    updated = environments.update_environment_asset_by_id(
        environment_id,
        EnvironmentUpdateRequest(
            meta=AssetUpdateRequest(name="pytorch-ddp", description="2.3"),
            spec=EnvironmentAssetSpec(image="nvcr.io/nvidia/pytorch:24.06-py3"),
        ),
    )
    environments.delete_environment_asset_by_id(environment_id)

    compute = computes.create_compute_asset(
        ComputeCreationRequest(
            meta=AssetCreationRequest(name="one-gpu", scope=Scope.TENANT),
            spec=ComputeAssetSpec(gpuDevicesRequest=1, cpuCoreRequest=4.0, cpuMemoryRequest="16G"),
        )
    )
    compute_id = compute.data["meta"]["id"]
    eventually(lambda: computes.get_compute_asset_by_id(compute_id))
    compute_list = computes.list_compute_assets().data["entries"]
    compute_updated = computes.update_compute_asset_by_id(
        compute_id,
        ComputeUpdateRequest(
            meta=AssetUpdateRequest(name="one-gpu"),
            spec=ComputeAssetSpec(gpuDevicesRequest=2),
        ),
    )
    computes.delete_compute_asset_by_id(compute_id)
    return {
        "created": created.status_code,
        "got": got.data,
        "updated": updated.data,
        "compute": compute.data,
        "compute_list": compute_list,
        "compute_updated": compute_updated.data,
    }


async def register_admin(pool: asyncpg.Pool) -> None:
    registry = PostgresApplicationRegistry(pool, SecretHasher(AUTH))
    command = CreateApplication(
        application_id=uuid4(),
        name="runapy-admin",
        grants=(TENANT_ADMIN,),
        metadata=EventMetadata(actor_subject="setup", actor_kind="system"),
    )
    await create_application(command, secret=SECRET, registry=registry)


async def test_the_official_client_manages_environments_and_compute(
    service: str, clean_pool: asyncpg.Pool
) -> None:
    await register_admin(clean_pool)

    seen = await asyncio.to_thread(drive, service)

    assert seen["created"] == 202
    assert seen["got"]["spec"]["image"] == "nvcr.io/nvidia/pytorch:24.05-py3"
    assert seen["updated"]["meta"]["description"] == "2.3"
    assert seen["compute"]["spec"]["gpuDevicesRequest"] == 1
    assert [c["meta"]["name"] for c in seen["compute_list"]] == ["one-gpu"]
    assert seen["compute_updated"]["spec"]["gpuDevicesRequest"] == 2
    types = await clean_pool.fetch("SELECT type FROM events ORDER BY global_position")
    assert [row["type"] for row in types][1:] == [
        "environment.created.v1",
        "environment.updated.v1",
        "environment.deleted.v1",
        "compute.created.v1",
        "compute.updated.v1",
        "compute.deleted.v1",
    ]


def drive_templates(url: str) -> dict[str, Any]:
    """A distributed template linking an environment and a compute resource, through runapy.
    Its published request model has no top-level `assets` block, so the creation body is
    passed as a plain dict, which the client sends as it is."""
    config = Configuration(client_id="runapy-admin", client_secret=SECRET, runai_base_url=url)
    client = RunaiClient(ApiClient(config))
    environment = client.workload_assets.environment.create_environment_asset(
        EnvironmentCreationRequest(
            meta=AssetCreationRequest(name="pytorch-ddp", scope=Scope.TENANT),
            spec=EnvironmentAssetSpec(image="nvcr.io/nvidia/pytorch:24.05-py3"),
        )
    ).data["meta"]["id"]
    compute = client.workload_assets.compute.create_compute_asset(
        ComputeCreationRequest(
            meta=AssetCreationRequest(name="eight-gpus", scope=Scope.TENANT),
            spec=ComputeAssetSpec(gpuDevicesRequest=8),
        )
    ).data["meta"]["id"]
    api = client.workloads.workload_templates
    created = api.create_distributed_template(
        {
            "meta": {"name": "ddp", "scopeType": "tenant"},
            "spec": {"distributedFramework": "PyTorch", "numWorkers": 2},
            "assets": {"environment": environment, "compute": compute},
        }
    )
    template_id = created.data["meta"]["id"]
    got = eventually(lambda: api.get_distributed_template(template_id))

    def listed() -> list[str]:
        entries = api.list_distributed_templates(filter_by=["name==ddp"]).data["entries"]
        names = [t["meta"]["name"] for t in entries]
        assert names == ["ddp"], names
        return names

    eventually(listed)
    patched = api.patch_distributed_template(
        template_id,
        DistributedTemplatePatchRequest(spec=DistributedTemplateSpec(numWorkers=4)),
    )
    api.delete_distributed_template(template_id)
    return {"created": created, "got": got.data, "patched": patched.data}


async def test_the_official_client_manages_a_distributed_template(
    service: str, clean_pool: asyncpg.Pool
) -> None:
    await register_admin(clean_pool)
    seen = await asyncio.to_thread(drive_templates, service)
    assert seen["created"].status_code == 202
    assert seen["got"]["combinedSpec"]["image"] == "nvcr.io/nvidia/pytorch:24.05-py3"
    assert seen["got"]["combinedSpec"]["compute"]["gpuDevicesRequest"] == 8
    assert seen["patched"]["spec"]["numWorkers"] == 4
    assert seen["patched"]["assets"]["compute"] is not None
    deleted = await clean_pool.fetchval(
        "SELECT count(*) FROM events WHERE type = 'template.deleted.v1'"
    )
    assert deleted == 1
