"""A workload's history as a use case answers it, against a fake of the log: its events, oldest
first, each with the workload as it left it wherever it moved its phase."""

from datetime import UTC, datetime
from uuid import UUID, uuid4

from domain.events import (
    ApplicationCreated,
    Event,
    EventMetadata,
    RecordedEvent,
    WorkloadFailed,
    WorkloadRunning,
    WorkloadSubmitted,
)
from services.history import workload_history
from tests.workload_samples import RICH, requested_workload

SYSTEM = EventMetadata(actor_subject="setup", actor_kind="system")


class Log:
    """The RecordedHistory port over a list of events of one stream."""

    def __init__(self, stream_id: UUID, events: list[Event]) -> None:
        self.recorded = [
            RecordedEvent(
                position=version,
                event_id=uuid4(),
                stream_type="workload",
                stream_id=stream_id,
                version=version,
                recorded_at=datetime(2026, 1, 1, 0, 0, version, tzinfo=UTC),
                metadata=SYSTEM,
                event=event,
            )
            for version, event in enumerate(events, start=1)
        ]

    async def load_recorded(self, stream_id: UUID) -> list[RecordedEvent]:
        return [r for r in self.recorded if r.stream_id == stream_id]


async def test_each_event_comes_with_the_phase_it_moved_the_workload_to() -> None:
    requested = requested_workload(RICH)
    workload_id = requested.workload_id
    log = Log(
        workload_id,
        [
            requested,
            WorkloadSubmitted(workload_id=workload_id, run=1, backend="dry-run"),
            WorkloadRunning(workload_id=workload_id, run=1),
            WorkloadRunning(workload_id=workload_id, run=1),  # moves nothing
            WorkloadFailed(workload_id=workload_id, run=1, reason="OOM"),
        ],
    )
    entries = await workload_history(workload_id, history=log)
    assert [e.recorded.version for e in entries] == [1, 2, 3, 4, 5]
    moved = [(e.moved.actual, e.moved.reason) if e.moved else None for e in entries]
    assert moved == [("Creating", None), ("Pending", None), ("Running", None), None,
                     ("Failed", "OOM")]  # fmt: skip


async def test_events_of_other_kinds_are_left_out() -> None:
    requested = requested_workload(RICH)
    other = ApplicationCreated(application_id=uuid4(), name="x", client_id="x", grants=())
    log = Log(requested.workload_id, [requested, other])
    entries = await workload_history(requested.workload_id, history=log)
    assert [e.recorded.event for e in entries] == [requested]
