"""`GET /api/v1/workloads/{id}/manifests` (ours): the Kubeflow objects the backend made of a
workload's latest run, here the dry run's Trainer v2 TrainingRuntime and TrainJob, valid
against the upstream CRDs; the workloads of one template version share its runtime, and a
submission's own values ride on its TrainJob."""

from typing import Any
from uuid import UUID

import asyncpg
import pytest
from litestar import Litestar

from infra.backends.dry_run import DryRunBackend
from infra.postgres.streams import PostgresStreams
from infra.serialization import DOMAIN_CODEC
from services import submitter
from tests.api.support import call, project_all
from tests.api.test_workloads import WORKLOADS, setup, submission
from tests.crd_schemas import errors_of, require_crds

pytestmark = [pytest.mark.api, pytest.mark.integration]
require_crds()


async def submitted(app: Litestar, admin: str, body: dict[str, Any]) -> str:
    made = await call(app, "POST", WORKLOADS, admin, json=body)
    assert made.status_code == 202, made.text
    workload_id: str = made.json()["workloadId"]
    return workload_id


async def test_the_manifests_are_what_the_backend_made_of_the_run(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    found = await setup(app, admin)
    template_id = found["template"]["meta"]["id"]
    plain = await submitted(app, admin, submission(found, name="plain"))
    wider = await submitted(
        app, admin, submission(found, name="wider", spec={"numWorkers": 5, "args": "--fast"})
    )
    await project_all(clean_pool)
    path = f"/api/v1/workloads/{plain}/manifests"
    before = await call(app, "GET", path, admin)
    assert before.status_code == 200, before.text
    assert before.json() == {"workloadId": plain, "run": None, "backend": None, "manifests": []}

    store, backend = PostgresStreams(clean_pool, DOMAIN_CODEC), DryRunBackend()
    for workload_id in (plain, wider):
        await submitter.reconcile(UUID(workload_id), store=store, backend=backend)
    await project_all(clean_pool)

    got = await call(app, "GET", path, admin)
    assert got.status_code == 200, got.text
    answer = got.json()
    assert (answer["run"], answer["backend"]) == (1, "dry-run")
    runtime, job = answer["manifests"]
    assert (runtime["kind"], job["kind"]) == ("TrainingRuntime", "TrainJob")
    assert not errors_of(runtime)
    assert not errors_of(job)
    assert runtime["metadata"]["name"].startswith(f"tp-{template_id}-v1-")
    assert runtime["metadata"]["namespace"] == job["metadata"]["namespace"] == "runai-llm"

    other = (await call(app, "GET", f"/api/v1/workloads/{wider}/manifests", admin)).json()
    shared, own = other["manifests"]
    assert shared == runtime  # one template version, one runtime
    assert own["spec"]["trainer"]["numNodes"] == job["spec"]["trainer"]["numNodes"] + 3
    assert own["spec"]["trainer"]["args"] == ["--fast"]


async def test_a_workload_out_of_sight_has_no_manifests_to_show(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    missing = await call(
        app, "GET", "/api/v1/workloads/00000000-0000-4000-8000-000000000000/manifests", admin
    )
    assert missing.status_code == 404


FRAMEWORKS = {
    "PyTorch": {},
    "TF": {},
    "XGBoost": {},
    "JAX": {},
    "MPI": {"slotsPerWorker": 2},
}


async def test_a_workload_of_each_framework_records_crd_valid_trainer_objects(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    found = await setup(app, admin)
    store, backend = PostgresStreams(clean_pool, DOMAIN_CODEC), DryRunBackend()
    made: dict[str, str] = {}
    for framework, extra in FRAMEWORKS.items():
        spec = {
            "distributedFramework": framework,
            "numWorkers": 2,
            "image": "registry.example.com/train:1",
            "command": "python train.py",
            **extra,
        }
        body = submission(found, name=f"each-{framework.lower()}", spec=spec)
        del body["templateId"]
        made[framework] = workload_id = await submitted(app, admin, body)
        await submitter.reconcile(UUID(workload_id), store=store, backend=backend)
    await project_all(clean_pool)
    for framework, workload_id in made.items():
        got = await call(app, "GET", f"/api/v1/workloads/{workload_id}/manifests", admin)
        assert got.status_code == 200, got.text
        runtime, job = got.json()["manifests"]
        assert not errors_of(runtime), framework
        assert not errors_of(job), framework
        assert job["spec"]["runtimeRef"]["name"] == runtime["metadata"]["name"]
        labels = runtime["metadata"]["labels"]
        assert labels["trainer.kubeflow.org/framework"] == {
            "PyTorch": "torch", "TF": "tensorflow", "XGBoost": "xgboost", "JAX": "jax",
            "MPI": "mpi",
        }[framework]  # fmt: skip
