"""The linked-asset fan-out, a process manager: when a linked environment or compute resource
changes, every template linking it records the new version, each in an append of its own. Why it
ends on the latest version, and what it keeps: docs/decisions/0022-process-managers.md."""

from collections.abc import Sequence
from typing import Final
from uuid import UUID, uuid5

from domain import templates
from domain.bounded import Bounded
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
from services.ports.event_store import EventStore, OneAppend
from services.ports.read_side import LinkIndex

ACTOR = "linked-asset-fanout"
# The events that may move templates on; the changes of an asset fan out to all its users.
MOVES_TEMPLATES: Final = (EnvironmentUpdated, ComputeUpdated, TemplateCreated, TemplateUpdated)
FANS_OUT: Final = (EnvironmentUpdated, ComputeUpdated)
BATCH = 500  # templates read and written per statement
ATTEMPTS = 5  # reads of a template its users keep editing, before the batch is tried again
_FOLLOWED: Final = 20_000  # templates kept (about 1 to 5 KB each, by how much their specs hold)


class Followed:
    """What the fan-out folded of each template, at the version read; only later events are read
    again. Its reads may hold its own batch's appends, so a batch's folds are kept once it has
    committed (`commit`), and the next `begin`s without them. Bounded, least recently used out."""

    def __init__(self, capacity: int = _FOLLOWED) -> None:
        self._kept: Bounded[UUID, templates.Template] = Bounded(capacity)
        self._batch: dict[UUID, templates.Template | None] = {}

    def begin(self) -> None:
        """A batch starts: what an earlier one folded and did not commit is forgotten."""
        self._batch = {}

    def commit(self) -> None:
        """The batch committed: what it folded is kept."""
        for template_id, state in self._batch.items():
            if state is not None:
                self._kept.put(template_id, state)
        self._batch = {}

    def folded(self, template_id: UUID) -> templates.Template | None:
        """The template as last folded (None: never, or not yet created then)."""
        if template_id in self._batch:
            return self._batch[template_id]
        return self._kept.get(template_id)

    def fold(self, template_id: UUID, state: templates.Template | None) -> None:
        self._batch[template_id] = state


async def handle(
    recorded: RecordedEvent,
    *,
    index: LinkIndex,
    store: EventStore,
    followed: Followed | None = None,
) -> int:
    """Act on one event of the log; returns how many template events it appended. `followed`:
    what the runner keeps of the templates between events (none: every template read whole)."""
    followed = followed if followed is not None else Followed()
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
                appended += await _follow(
                    recorded, chunk, e.asset_id, recorded.version, store, followed
                )
            return appended
        case TemplateCreated() | TemplateUpdated() as e:
            # The event names the asset versions the template was written against.
            recorded_versions = {v.asset_id: v.version for v in e.asset_versions}
            latest = await index.latest_versions(sorted(recorded_versions))
            appended = 0
            for asset_id, version in sorted(latest.items()):
                if version > recorded_versions[asset_id]:
                    appended += await _follow(
                        recorded, [e.template_id], asset_id, version, store, followed
                    )
            return appended
        case _:
            return 0


async def _follow(
    cause: RecordedEvent,
    template_ids: Sequence[UUID],
    asset_id: UUID,
    version: int,
    store: EventStore,
    followed: Followed,
) -> int:
    """Move each template on to the asset's version: one read and one write for them all, then
    again for those a user wrote to in between (each read anew, the others left alone). Each
    read takes only the events after what `followed` holds of the template."""
    metadata = EventMetadata(
        actor_subject=ACTOR,
        actor_kind="system",
        correlation_id=cause.metadata.correlation_id or cause.event_id,
        causation_id=cause.event_id,
    )
    appended = 0
    pending = list(template_ids)
    for _ in range(ATTEMPTS):
        known = {template_id: followed.folded(template_id) for template_id in pending}
        after = await store.load_after({i: 0 if s is None else s.version for i, s in known.items()})
        appends = []
        for template_id in pending:
            state = templates.fold_on(known[template_id], after.get(template_id, ()))
            followed.fold(template_id, state)
            for event in templates.follow_asset(state, template_id, asset_id, version):
                appends.append(
                    OneAppend(
                        stream_id=template_id,
                        event=event,
                        expected_version=0 if state is None else state.version,
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
