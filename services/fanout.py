"""The linked-asset fan-out, a process manager: when a linked environment or compute resource
changes, every template linking it records the new version.

It reads the log in order. Which templates link an asset it asks the write side (the uses each
template's append records in its own transaction); the latest version of each asset it keeps
itself, in step with its position in the log. So a template that links an asset while the asset
is being updated still ends up on the asset's latest version: whichever of the two events comes
second in the log does the catching up (the log is read in commit-safe order, so when the update
is read, every template committed before it is among the asset's users, and a template committed
after it is read after it, against the version the update left).

Each template moves on in its own append: a template a user edits meanwhile is read again and
moved on alone, the others are not written twice. Event ids are derived from the triggering
event, so a replay writes nothing twice.
"""

from collections.abc import Sequence
from uuid import UUID, uuid5

from domain import templates
from domain.events import (
    ComputeCreated,
    ComputeUpdated,
    EnvironmentCreated,
    EnvironmentUpdated,
    EventMetadata,
    RecordedEvent,
    TemplateCreated,
    TemplateUpdated,
)
from services.errors import VersionConflictError
from services.ports import BatchAppender, LinkIndex, OneAppend, Stream

ACTOR = "linked-asset-fanout"
BATCH = 500  # templates read and written per statement
ATTEMPTS = 5  # reads of a template its users keep editing, before the batch is tried again


async def handle(recorded: RecordedEvent, *, index: LinkIndex, store: BatchAppender) -> int:
    """Act on one event of the log; returns how many template events it appended."""
    match recorded.event:
        case EnvironmentCreated() | ComputeCreated() as e:
            await index.set_latest_version(e.asset_id, recorded.version)
            return 0
        case EnvironmentUpdated() | ComputeUpdated() as e:
            await index.set_latest_version(e.asset_id, recorded.version)
            using = await index.templates_using(e.asset_id)
            appended = 0
            for start in range(0, len(using), BATCH):
                chunk = using[start : start + BATCH]
                appended += await _follow(recorded, chunk, e.asset_id, recorded.version, store)
            return appended
        case TemplateCreated() | TemplateUpdated() as e:
            # The event names the asset versions the template was written against.
            recorded_versions = {v.asset_id: v.version for v in e.asset_versions}
            latest = await index.latest_versions(sorted(recorded_versions))
            appended = 0
            for asset_id, version in sorted(latest.items()):
                if version > recorded_versions[asset_id]:
                    appended += await _follow(recorded, [e.template_id], asset_id, version, store)
            return appended
        case _:
            return 0


async def _follow(
    cause: RecordedEvent,
    template_ids: Sequence[UUID],
    asset_id: UUID,
    version: int,
    store: BatchAppender,
) -> int:
    """Move each template on to the asset's version: one read and one write for them all, then
    again for those a user wrote to in between (each read anew, the others left alone)."""
    metadata = EventMetadata(
        actor_subject=ACTOR,
        actor_kind="system",
        correlation_id=cause.metadata.correlation_id or cause.event_id,
        causation_id=cause.event_id,
    )
    appended = 0
    pending = list(template_ids)
    for _ in range(ATTEMPTS):
        streams = await store.load_many(pending)
        appends = []
        for template_id in pending:
            stream = streams.get(template_id, Stream(0, ()))
            state = templates.fold(stream.events)
            for event in templates.follow_asset(state, template_id, asset_id, version):
                appends.append(
                    OneAppend(
                        stream_id=template_id,
                        event=event,
                        expected_version=stream.version,
                        event_id=uuid5(cause.event_id, f"{template_id}:{asset_id}"),
                    )
                )
        if not appends:
            return appended
        taken = await store.append_each(appends, metadata=metadata)
        appended += len(taken)
        # Those that took nothing moved on (or hold this very event, from a replay): read anew,
        # follow_asset says what is left to do.
        pending = [a.stream_id for a in appends if a.stream_id not in taken]
        if not pending:
            return appended
    raise VersionConflictError(pending[0], expected=None, actual=None)
