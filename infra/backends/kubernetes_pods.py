"""The pods of every workload, watched cluster-wide by the workload label, as the replicas the
service records (services/pod_reports.py): each change reports the workload's whole set, and a
restarted watch lists every pod again first, so that set is whole again at once."""

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any
from uuid import NAMESPACE_URL, UUID, uuid5

from kubernetes_asyncio import client

from domain.events import ContainerObserved, PodObserved, PodPhase
from infra.backends.kubeflow_jobs import RUN_LABEL
from infra.backends.kubeflow_pods import WORKLOAD_LABEL
from services.ports.workload_backends import PodReports

PHASES: dict[str, PodPhase] = {
    phase: phase for phase in ("Pending", "Running", "Succeeded", "Failed", "Unknown")
}
# Where each Kubeflow API says which replica a pod is: the v1 operators' replica type, and the
# JobSet replicated job of a Trainer v2 TrainJob (`node` is every node, master included).
ROLE_LABELS = ("training.kubeflow.org/replica-type", "jobset.sigs.k8s.io/replicatedjob-name")
WORKER_ROLES = frozenset({"worker", "node"})


class PodWatch:
    def __init__(self, pods: PodReports) -> None:
        self._pods = pods
        self._known: dict[UUID, dict[str, PodObserved]] = {}

    async def seen(self, kind: str, pod: client.V1Pod) -> None:
        """One watch event (ADDED, MODIFIED, DELETED) of one pod."""
        labels: Mapping[str, str] = pod.metadata.labels or {}
        try:
            workload_id = UUID(labels[WORKLOAD_LABEL])
            run = int(labels[RUN_LABEL]) if RUN_LABEL in labels else None
        except (KeyError, ValueError):
            return
        known = self._known.setdefault(workload_id, {})
        if kind == "DELETED":
            known.pop(pod.metadata.name, None)
        else:
            known[pod.metadata.name] = observed(pod)
        await self._pods(workload_id, run, list(known.values()))
        if not known:
            del self._known[workload_id]


def observed(pod: client.V1Pod) -> PodObserved:
    status = pod.status or client.V1PodStatus()
    labels: Mapping[str, str] = pod.metadata.labels or {}
    role = next((labels[label].lower() for label in ROLE_LABELS if label in labels), "worker")
    statuses: dict[str, Any] = {s.name: s for s in status.container_statuses or ()}
    created = pod.metadata.creation_timestamp or datetime.now(UTC)
    containers = tuple(
        ContainerObserved(
            name=c.name, image=c.image or "", started_at=_started(statuses.get(c.name))
        )
        for c in (pod.spec.containers if pod.spec else ())
    )
    finished = [
        s.state.terminated.finished_at
        for s in statuses.values()
        if s.state is not None and s.state.terminated is not None and s.state.terminated.finished_at
    ]
    phase: PodPhase = PHASES.get(status.phase or "", "Unknown")
    changes = [c.last_transition_time for c in status.conditions or () if c.last_transition_time]
    return PodObserved(
        name=pod.metadata.name,
        uid=_uid(pod.metadata),
        role="worker" if role in WORKER_ROLES else "master",
        phase=phase,
        node_name=pod.spec.node_name if pod.spec else None,
        ip=status.pod_ip,
        restarts=sum(s.restart_count or 0 for s in statuses.values()),
        created_at=created,
        completed_at=max(finished) if finished and phase in ("Succeeded", "Failed") else None,
        phase_changed_at=max(changes, default=created),
        containers=containers,
    )


def _uid(metadata: client.V1ObjectMeta) -> UUID:
    """The API server's uid (a UUID); one derived from the name where a server gave none."""
    try:
        return UUID(metadata.uid)
    except (TypeError, ValueError):
        return uuid5(NAMESPACE_URL, f"{metadata.namespace}/{metadata.name}")


def _started(status: Any) -> datetime | None:
    if status is None or status.state is None or status.state.running is None:
        return None
    started: datetime | None = status.state.running.started_at
    return started
