"""A local run's replica processes as the pods a cluster would report (`<job>-<role>-<index>`,
Running once started, Succeeded or Failed by exit code, restarts counted); gone when the run is
stopped, as a cluster deletes a stopped job's pods."""

import socket
from datetime import UTC, datetime
from uuid import NAMESPACE_URL, uuid5

import msgspec

from domain.events import ContainerObserved, PodObserved, PodPhase
from domain.workload_plans import WorkloadPlan
from infra.backends.local_environment import LocalReplica


class Replicas:
    def __init__(self, plan: WorkloadPlan, planned: list[LocalReplica]) -> None:
        self._plan = plan
        self._planned = {replica.name: replica for replica in planned}
        self._pods: dict[str, PodObserved] = {}
        self._node = socket.gethostname()

    def started(self) -> None:
        """Every replica (re)started now."""
        now = datetime.now(UTC)
        for name, replica in self._planned.items():
            before = self._pods.get(name)
            group = self._plan.group(replica.role)
            image = (group.spec.image if group is not None else None) or ""
            self._pods[name] = PodObserved(
                name=f"{self._plan.job_name}-{name}",
                uid=uuid5(NAMESPACE_URL, f"{self._plan.workload_id}/{self._plan.run}/{name}"),
                role="worker" if replica.role == "Worker" else "master",
                phase="Running",
                node_name=self._node,
                ip="127.0.0.1",
                restarts=0 if before is None else before.restarts + 1,
                created_at=now if before is None else before.created_at,
                phase_changed_at=now,
                containers=(ContainerObserved(name="main", image=image, started_at=now),),
            )

    def exited(self, name: str, code: int) -> None:
        before = self._pods.get(name)
        if before is None:
            return
        phase: PodPhase = "Succeeded" if code == 0 else "Failed"
        now = datetime.now(UTC)
        self._pods[name] = msgspec.structs.replace(
            before, phase=phase, completed_at=now, phase_changed_at=now
        )

    def gone(self) -> None:
        self._pods = {}

    def observed(self) -> tuple[PodObserved, ...]:
        return tuple(self._pods.values())
