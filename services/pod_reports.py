"""What the backends see of a run's replicas, recorded on the workload's stream: a
`workload.pods_observed.v1` event each time the set changes (a replica starts, moves phase,
restarts, goes). Backends report the whole set; a set the stream already holds writes nothing,
and two watchers racing to report the same change write it once (the second reads the first's
event after its version conflict, and finds nothing left to say)."""

from collections.abc import Sequence
from uuid import UUID

from domain import workloads
from domain.events import EventMetadata, PodObserved
from domain.workloads import WorkloadNotFoundError
from services.errors import VersionConflictError
from services.ports import Streams
from services.workloads import load_workload

OBSERVER = EventMetadata(actor_subject="submitter", actor_kind="system")
ATTEMPTS = 5


async def observed(
    workload_id: UUID, run: int | None, pods: Sequence[PodObserved], *, store: Streams
) -> None:
    """Record run `run`'s replicas (None: the current run's). A workload the stream does not
    know (a pod left by a workload of another service, say) is not recorded."""
    seen = tuple(sorted(pods, key=lambda pod: pod.name))
    for _ in range(ATTEMPTS):
        stream = await store.load(workload_id)
        try:
            events = workloads.pods_observed(load_workload(stream.events), workload_id, run, seen)
        except WorkloadNotFoundError:
            return
        if not events:
            return
        try:
            await store.append(
                workload_id, events, expected_version=stream.version, metadata=OBSERVER
            )
        except VersionConflictError:
            continue  # someone wrote meanwhile: decide again on what is there now
        return
    raise VersionConflictError(workload_id, expected=None, actual=None)
