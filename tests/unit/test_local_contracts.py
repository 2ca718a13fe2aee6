"""The environment the local backend gives each replica: each Kubeflow operator's variables, with
this host for every address and a port of its own for every task."""

import json
from uuid import UUID

from domain.workload_plans import WorkloadPlan, plan_for
from infra.backends.local_environment import mpi_hostfile, replicas
from tests.workload_samples import requested_workload

ID = UUID("3f2b8c1d-9a4e-4f6b-8d2c-7e1a5b9c0d4f")
PORTS = [41000, 41001, 41002, 41003, 41004]


def plan(framework: str, *, master: bool = True, **spec: object) -> WorkloadPlan:
    worker = {
        "distributedFramework": framework, "numWorkers": 2, "image": "img",
        "command": "python train.py", "args": "--fast",
        "environmentVariables": [{"name": "MODE", "value": "a"}], **spec,
    }  # fmt: skip
    return plan_for(
        requested_workload(
            worker,
            workload_id=ID,
            same_as_worker=master,
            master={"image": "img", "command": "python train.py"} if master else None,
        )
    )


def test_pytorch_ranks_the_master_first_and_shares_its_port() -> None:
    found = replicas(plan("PyTorch"), PORTS, hostfile="/h", node_name="box")
    assert [(r.name, r.rank) for r in found] == [("master-0", 0), ("worker-0", 1), ("worker-1", 2)]
    worker = found[2].env
    assert {k: worker[k] for k in ("MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK")} == {
        "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "41000", "WORLD_SIZE": "3", "RANK": "2",
    }  # fmt: skip
    assert worker["PET_NNODES"] == "3"
    assert worker["PET_NPROC_PER_NODE"] == "1"
    assert worker["PET_NODE_RANK"] == "2"
    assert worker["PET_MASTER_PORT"] == "41000"
    assert (worker["JOB_NAME"], worker["JOB_UUID"], worker["POD_INDEX"]) == ("job", str(ID), "2")
    assert worker["MODE"] == "a"
    assert worker["PYTHONUNBUFFERED"] == "1"
    # The master is the workers' copy: the same command.
    assert found[0].argv == found[1].argv == ("python", "train.py", "--fast")


def test_pytorch_workers_only_get_no_master_variables() -> None:
    found = replicas(plan("PyTorch", master=False), PORTS, hostfile="/h", node_name="box")
    assert [r.name for r in found] == ["worker-0", "worker-1"]
    assert "MASTER_ADDR" not in found[0].env
    assert found[0].env["PET_NNODES"] == "2"


def test_tensorflow_gets_tf_config_with_a_distinct_port_per_task() -> None:
    found = replicas(plan("TF"), PORTS, hostfile="/h", node_name="box")
    configs = [json.loads(r.env["TF_CONFIG"]) for r in found]
    assert configs[0]["cluster"] == {
        "chief": ["127.0.0.1:41000"],
        "worker": ["127.0.0.1:41001", "127.0.0.1:41002"],
    }
    assert [c["task"] for c in configs] == [
        {"type": "chief", "index": 0}, {"type": "worker", "index": 0},
        {"type": "worker", "index": 1},
    ]  # fmt: skip
    assert all(c["environment"] == "cloud" for c in configs)


def test_jax_gets_a_host_only_coordinator_and_process_ids() -> None:
    found = replicas(plan("JAX", master=False), PORTS, hostfile="/h", node_name="box")
    assert [(r.env["COORDINATOR_ADDRESS"], r.env["COORDINATOR_PORT"]) for r in found] == [
        ("127.0.0.1", "41000"), ("127.0.0.1", "41000"),
    ]  # fmt: skip
    assert [r.env["PROCESS_ID"] for r in found] == ["0", "1"]
    assert found[0].env["NUM_PROCESSES"] == "2"


def test_xgboost_gets_the_operator_variables_and_the_tracker_ones() -> None:
    found = replicas(plan("XGBoost"), PORTS, hostfile="/h", node_name="box")
    worker = found[1].env
    assert (worker["RANK"], worker["WORLD_SIZE"], worker["MASTER_PORT"]) == ("1", "3", "41000")
    assert (worker["DMLC_TASK_ID"], worker["DMLC_NUM_WORKER"]) == ("1", "3")
    assert worker["DMLC_TRACKER_URI"] == "127.0.0.1"
    assert worker["WORKER_PORT"] == "41001"
    assert worker["WORKER_ADDRS"] == "127.0.0.1,127.0.0.1"


def test_mpi_starts_the_launcher_only_with_a_hostfile_of_every_workers_slots() -> None:
    mpi = plan("MPI", slotsPerWorker=2)
    found = replicas(mpi, PORTS, hostfile="/run/hostfile", node_name="box")
    assert [r.name for r in found] == ["launcher-0"]
    env = found[0].env
    assert env["K_MPI_JOB_ROLE"] == "launcher"
    assert env["OMPI_MCA_orte_default_hostfile"] == "/run/hostfile"
    assert env["OMPI_MCA_orte_set_default_slots"] == "2"
    assert mpi_hostfile(mpi) == "localhost slots=4\n"
