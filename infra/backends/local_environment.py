"""The environment each Kubeflow operator injects into a replica, for replicas all on this
machine: hosts become 127.0.0.1 and each task a free port, as the operators' fixed ports would
collide on one host. Names and formats are trainer v1.9's, mpi-operator v2beta1's and Run:ai's."""

import json
from collections.abc import Sequence
from typing import Final

import msgspec

from domain.workload_plans import Role, WorkloadPlan
from infra.backends.pod_templates import words

HOST: Final = "127.0.0.1"
# What the operator injects only into its own container (TF) or its launcher (MPI).
_ORDER: Final[dict[Role, int]] = {"Master": 0, "Chief": 0, "Launcher": 0, "Worker": 1}


class LocalReplica(msgspec.Struct, frozen=True, kw_only=True):
    role: Role
    index: int  # within its role, as in the pod name <job>-<role>-<index>
    rank: int  # across the job: the pod index
    argv: tuple[str, ...]
    env: dict[str, str]
    working_dir: str | None = None

    @property
    def name(self) -> str:
        return f"{self.role.lower()}-{self.index}"


def replicas(
    plan: WorkloadPlan, ports: Sequence[int], *, hostfile: str, node_name: str
) -> list[LocalReplica]:
    """One entry per process to start, masters first. `ports`: one free port per replica (the
    rendezvous uses the first). An MPI job starts its launcher only: mpirun starts the ranks,
    as the workers' sshd would let it on a cluster."""
    slots: list[tuple[Role, int, int]] = []  # role, index, rank
    for group in sorted(plan.groups, key=lambda g: _ORDER[g.role]):
        for index in range(group.replicas):
            slots.append((group.role, index, len(slots)))
    contract = {
        "PyTorch": _pytorch,
        "TF": _tensorflow,
        "XGBoost": _xgboost,
        "JAX": _jax,
        "MPI": _mpi,
    }[plan.framework]
    found = []
    for role, index, rank in slots:
        if plan.framework == "MPI" and role == "Worker":
            continue
        replica_group = plan.group(role)
        assert replica_group is not None
        spec = replica_group.spec
        argv = words(spec.command or "") + words(spec.args or "")
        env = {
            v.name: v.value or ""
            for v in spec.environment_variables or ()
            if not v.exclude and v.value is not None
        }
        env.update(
            {
                "PYTHONUNBUFFERED": "1",
                "JOB_NAME": plan.name,
                "JOB_UUID": str(plan.workload_id),
                "POD_INDEX": str(rank),
                "NODE_NAME": node_name,
                "RUNAI_NUM_OF_GPUS": "0",
            }
        )
        env.update(contract(plan, slots, role, index, rank, ports, hostfile))
        found.append(
            LocalReplica(
                role=role, index=index, rank=rank, argv=argv, env=env, working_dir=spec.working_dir
            )
        )
    return found


Slots = Sequence[tuple[Role, int, int]]


def _pytorch(
    plan: WorkloadPlan, slots: Slots, role: Role, index: int, rank: int, ports: Sequence[int],
    hostfile: str,
) -> dict[str, str]:  # fmt: skip
    env = {"PET_NPROC_PER_NODE": "1", "PET_NNODES": str(len(slots))}
    if plan.group("Master") is not None:
        # The operator's pod-level rank: master 0, worker i -> i + 1.
        env.update(
            {
                "MASTER_ADDR": HOST,
                "MASTER_PORT": str(ports[0]),
                "PET_MASTER_ADDR": HOST,
                "PET_MASTER_PORT": str(ports[0]),
                "WORLD_SIZE": str(len(slots)),
                "RANK": str(rank),
                "PET_NODE_RANK": str(rank),
            }
        )
    return env


def _tensorflow(
    plan: WorkloadPlan, slots: Slots, role: Role, index: int, rank: int, ports: Sequence[int],
    hostfile: str,
) -> dict[str, str]:  # fmt: skip
    if len(slots) == 1:  # the operator sets no TF_CONFIG for a single replica
        return {}
    cluster: dict[str, list[str]] = {}
    for slot_role, _, slot_rank in slots:
        cluster.setdefault(slot_role.lower(), []).append(f"{HOST}:{ports[slot_rank]}")
    config = {
        "cluster": cluster,
        "task": {"type": role.lower(), "index": index},
        "environment": "cloud",
    }
    return {"TF_CONFIG": json.dumps(config, separators=(",", ":"))}


def _xgboost(
    plan: WorkloadPlan, slots: Slots, role: Role, index: int, rank: int, ports: Sequence[int],
    hostfile: str,
) -> dict[str, str]:  # fmt: skip
    env = {
        "MASTER_ADDR": HOST,
        "MASTER_PORT": str(ports[0]),
        "WORLD_SIZE": str(len(slots)),
        "RANK": str(rank),
        # What the operator's examples derive for the Rabit tracker that rank 0 starts.
        "DMLC_TRACKER_URI": HOST,
        "DMLC_TRACKER_PORT": str(ports[0]),
        "DMLC_TASK_ID": str(rank),
        "DMLC_NUM_WORKER": str(len(slots)),
    }
    if len(slots) > 1:
        workers = [HOST] * (len(slots) - 1)
        env.update({"WORKER_PORT": str(ports[1]), "WORKER_ADDRS": ",".join(workers)})
    return env


def _jax(
    plan: WorkloadPlan, slots: Slots, role: Role, index: int, rank: int, ports: Sequence[int],
    hostfile: str,
) -> dict[str, str]:  # fmt: skip
    return {
        "COORDINATOR_ADDRESS": HOST,  # host only, as the operator sets it
        "COORDINATOR_PORT": str(ports[0]),
        "NUM_PROCESSES": str(len(slots)),
        "PROCESS_ID": str(rank),
    }


def _mpi(
    plan: WorkloadPlan, slots: Slots, role: Role, index: int, rank: int, ports: Sequence[int],
    hostfile: str,
) -> dict[str, str]:  # fmt: skip
    return {
        "K_MPI_JOB_ROLE": role.lower(),
        "OMPI_MCA_orte_keep_fqdn_hostnames": "true",
        "OMPI_MCA_orte_default_hostfile": hostfile,
        "OMPI_MCA_plm_rsh_args": "-o ConnectionAttempts=10",
        "OMPI_MCA_orte_set_default_slots": str(plan.slots_per_worker or 1),
    }


def mpi_hostfile(plan: WorkloadPlan) -> str:
    """All workers' slots on this host, in Open MPI's hostfile format."""
    workers = plan.group("Worker")
    count = (workers.replicas if workers else 1) * (plan.slots_per_worker or 1)
    return f"localhost slots={count}\n"
