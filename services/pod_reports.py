"""What the backends see of a run's replicas, recorded on the workload's stream as
`workload.pods_changed.v1` events holding only what changed; a set the stream holds already writes
nothing. Why, and what it costs: docs/decisions/0022-process-managers.md."""

from collections.abc import Sequence
from typing import Final
from uuid import UUID

import msgspec

from domain import workloads
from domain.bounded import Bounded
from domain.errors import InvalidHistoryError
from domain.events import EventMetadata, PodObserved, WorkloadEvent, WorkloadPodsChanged
from domain.workloads import Workload, WorkloadNotFoundError
from services.errors import VersionConflictError
from services.ports.event_store import Append, EventStore

OBSERVER = EventMetadata(actor_subject="submitter", actor_kind="system")
ATTEMPTS = 5
_OBSERVED: Final = 1_000  # workloads kept: those whose replicas are being watched


class Observed:
    """What a watcher folded of each workload, at the version it read or wrote (its appends commit
    as they return, on the pool); only the events after it are read again. Bounded, least recently
    used out."""

    def __init__(self, capacity: int = _OBSERVED) -> None:
        self._kept: Bounded[UUID, Workload] = Bounded(capacity)

    def folded(self, workload_id: UUID) -> Workload | None:
        return self._kept.get(workload_id)

    def keep(self, workload_id: UUID, state: Workload | None) -> None:
        if state is None:
            self._kept.pop(workload_id)
        else:
            self._kept.put(workload_id, state)


async def observed(
    workload_id: UUID,
    run: int | None,
    pods: Sequence[PodObserved],
    *,
    store: EventStore,
    kept: Observed | None = None,
) -> None:
    """Record run `run`'s replicas (None: the current run's). A workload the stream does not
    know (a pod left by a workload of another service, say) is not recorded. `kept`: what the
    watcher holds of its workloads between reports (none: the stream is read whole)."""
    kept = kept if kept is not None else Observed()
    seen = tuple(sorted(pods, key=lambda pod: pod.name))
    for _ in range(ATTEMPTS):
        state = await _current(workload_id, store, kept)
        try:
            events = workloads.pods_observed(state, workload_id, run, seen)
        except WorkloadNotFoundError:
            return
        if not events:
            return
        events = in_parts(events, store.max_event_bytes)
        assert state is not None
        try:
            await store.append(
                Append(workload_id, events, expected_version=state.version, metadata=OBSERVER)
            )
        except VersionConflictError:
            continue  # someone wrote meanwhile: decide again on what is there now
        kept.keep(workload_id, workloads.fold_on(state, events))
        return
    raise VersionConflictError(workload_id, expected=None, actual=None)


async def _current(workload_id: UUID, store: EventStore, kept: Observed) -> Workload | None:
    """The workload as its stream now is: what `kept` holds, and the events appended since."""
    known = kept.folded(workload_id)
    after = await store.load_after({workload_id: 0 if known is None else known.version})
    try:
        state = workloads.fold_on(known, after.get(workload_id, ()))
    except InvalidHistoryError:  # a stream of another kind: no workload
        return None
    kept.keep(workload_id, state)
    return state


def in_parts(events: Sequence[WorkloadEvent], max_bytes: int) -> list[WorkloadEvent]:
    """`events`, each change that would pass `max_bytes` encoded split into parts under it:
    its pods, then its names gone, in order, into as few parts as hold them."""
    found: list[WorkloadEvent] = []
    for event in events:
        if not isinstance(event, WorkloadPodsChanged) or len(_encode(event)) <= max_bytes:
            found.append(event)
            continue
        # What every part holds besides its entries, its numbers as wide as they can be.
        frame = _encode(msgspec.structs.replace(event, pods=(), gone=(), part=_WIDEST))
        room = max_bytes - len(frame) - len(str(_WIDEST))
        parts: list[list[PodObserved | str]] = [[]]
        used = 0
        entries: tuple[PodObserved | str, ...] = (*event.pods, *event.gone)
        for entry in entries:
            size = len(_encode(entry)) + 1  # and its comma
            if parts[-1] and used + size > room:
                parts.append([])
                used = 0
            parts[-1].append(entry)
            used += size
        found.extend(
            msgspec.structs.replace(
                event,
                pods=tuple(e for e in part if isinstance(e, PodObserved)),
                gone=tuple(e for e in part if isinstance(e, str)),
                part=number,
                parts=len(parts),
            )
            for number, part in enumerate(parts, start=1)
        )
    return found


_encode: Final = msgspec.json.Encoder().encode
_WIDEST: Final = 10**9  # more parts than any report makes
