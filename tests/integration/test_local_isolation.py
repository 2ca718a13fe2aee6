"""A workload runs other people's code: what a hostile replica of the local backend can reach.

The attack as a project editor would make it: a command that prints its environment and its
identity, and tries to read a file of the service's (its signing key, mode 0600).
"""

import os
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from domain.workloads import Workload
from infra.backends.local import LocalBackend
from infra.postgres.streams import PostgresStreams
from infra.serialization import DOMAIN_CODEC
from infra.workers.submitter import reports_to
from services import submitter
from tests.conftest import ACTOR
from tests.integration.test_local_backend import finished
from tests.workload_samples import requested_workload

pytestmark = pytest.mark.integration

SECRET = "the-signing-key-no-workload-may-see-0123456789"
AS_ROOT = pytest.mark.skipif(os.geteuid() != 0, reason="only a root service can change users")


@pytest.fixture
def service_secret(replica_work_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The service's environment and key file, as `trainplate dev` leaves them."""
    monkeypatch.setenv("TRAINPLATE_AUTH__SIGNING_KEY", SECRET)
    monkeypatch.setenv("TRAINPLATE_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/x")
    key = replica_work_dir / "signing.key"
    key.write_text(SECRET)
    key.chmod(0o600)
    return key


async def run(pool: asyncpg.Pool, work_dir: Path, command: str, **spec: Any) -> Workload:
    store = PostgresStreams(pool, DOMAIN_CODEC)
    event = requested_workload(
        {"distributedFramework": "PyTorch", "numWorkers": 1, "command": command, **spec},
        name="probe",
    )
    await store.append(event.workload_id, [event], expected_version=0, metadata=ACTOR)
    backend = LocalBackend(work_dir / "workloads", reports_to(store), stop_grace_s=5)
    await submitter.reconcile(event.workload_id, store=store, backend=backend)
    return await finished(store, event.workload_id, 60)


def log_of(work_dir: Path, state: Workload) -> str:
    assert state.actual != "Failed" or state.reason is None, state.reason
    run_dir = work_dir / "workloads" / state.request.job_name / "run-1"
    return (run_dir / "worker-0.log").read_text()


async def test_a_replica_sees_only_its_own_environment(
    clean_pool: asyncpg.Pool, replica_work_dir: Path, service_secret: Path
) -> None:
    state = await run(
        clean_pool,
        replica_work_dir,
        "env",
        environmentVariables=[{"name": "MINE", "value": "mine"}],
    )
    log = log_of(replica_work_dir, state)
    assert state.actual == "Completed", log
    assert SECRET not in log
    assert "TRAINPLATE_" not in log
    names = {line.split("=", 1)[0] for line in log.splitlines() if "=" in line}
    operator = {"MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK", "PET_NNODES"}
    assert {"PATH", "HOME", "LANG", "MINE", "JOB_NAME", *operator} <= names
    assert names <= {
        "PATH", "HOME", "LANG", "MINE", "PYTHONUNBUFFERED", "JOB_NAME", "JOB_UUID", "POD_INDEX",
        "NODE_NAME", "RUNAI_NUM_OF_GPUS", "PET_NPROC_PER_NODE", "PET_MASTER_ADDR",
        "PET_MASTER_PORT", "PET_NODE_RANK", "PWD", "SHLVL", "_", *operator,
    }  # fmt: skip


@AS_ROOT
async def test_a_replica_of_a_root_service_runs_as_nobody_and_cannot_read_its_keys(
    clean_pool: asyncpg.Pool, replica_work_dir: Path, service_secret: Path
) -> None:
    command = f"sh -c 'id -u; id -g; id -G; pwd; cat {service_secret}; echo exit=$?'"
    state = await run(clean_pool, replica_work_dir, command)
    log = log_of(replica_work_dir, state)
    assert state.actual == "Completed", log
    uid, gid, groups, cwd, *rest = log.splitlines()
    assert (uid, gid, groups) == ("65534", "65534", "65534")  # no group of the service's
    assert SECRET not in log
    assert "Permission denied" in log
    assert rest[-1] == "exit=1"
    home = Path(cwd)
    assert owner_and_mode(home) == (65534, 0o700)  # its own, and no one else's
    assert owner_and_mode(home.parent / "worker-0.log") == (0, 0o600)  # the service's


def owner_and_mode(path: Path) -> tuple[int, int]:
    found = path.stat()
    return found.st_uid, found.st_mode & 0o777


@AS_ROOT
async def test_a_custom_uid_gid_and_groups_are_the_replicas(
    clean_pool: asyncpg.Pool, replica_work_dir: Path
) -> None:
    security = {
        "uidGidSource": "custom",
        "runAsUid": 1234,
        "runAsGid": 2345,
        "supplementalGroups": "3456,4567",
    }
    state = await run(
        clean_pool, replica_work_dir, "sh -c 'id -u; id -g; id -G'", security=security
    )
    log = log_of(replica_work_dir, state)
    assert state.actual == "Completed", log
    assert log.splitlines() == ["1234", "2345", "2345 3456 4567"]


@AS_ROOT
async def test_a_replica_asking_for_root_is_refused(
    clean_pool: asyncpg.Pool, replica_work_dir: Path
) -> None:
    security = {"uidGidSource": "custom", "runAsUid": 0}
    state = await run(clean_pool, replica_work_dir, "id -u", security=security)
    assert state.actual == "Failed"
    assert state.reason is not None
    assert "never runs a replica as root" in state.reason
