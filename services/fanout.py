"""The linked-asset fan-out, a process manager: when a linked environment or compute resource
changes, every template linking it records the new version.

It reads the log in order and keeps its own index (templates by asset, latest asset versions)
in step with it, so a template that links an asset while the asset is being updated still ends
up on the asset's latest version: whichever of the two events comes second in the log does the
catching up. Event ids are derived from the triggering event, so a replay writes nothing twice.
"""

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
    TemplateDeleted,
    TemplateUpdated,
)
from services.ports import EventStore, LinkIndex

ACTOR = "linked-asset-fanout"


async def handle(recorded: RecordedEvent, *, index: LinkIndex, store: EventStore) -> int:
    """Act on one event of the log; returns how many template events it appended."""
    match recorded.event:
        case EnvironmentCreated() | ComputeCreated() as e:
            await index.set_latest_version(e.asset_id, recorded.version)
            return 0
        case EnvironmentUpdated() | ComputeUpdated() as e:
            await index.set_latest_version(e.asset_id, recorded.version)
            appended = 0
            for template_id in await index.templates_linking(e.asset_id):
                appended += await _follow(
                    recorded, template_id, e.asset_id, recorded.version, store
                )
            return appended
        case TemplateCreated() | TemplateUpdated() as e:
            template = templates.fold((await store.load(e.template_id)).events)
            if template is None or template.deleted:
                return 0
            linked = templates.linked_ids(template.body)
            await index.set_links(e.template_id, linked)
            appended = 0
            for asset_id in linked:
                latest = await index.latest_version(asset_id)
                if latest is not None:
                    appended += await _follow(recorded, e.template_id, asset_id, latest, store)
            return appended
        case TemplateDeleted() as e:
            await index.set_links(e.template_id, frozenset())
            return 0
        case _:
            return 0


async def _follow(
    cause: RecordedEvent, template_id: UUID, asset_id: UUID, version: int, store: EventStore
) -> int:
    stream = await store.load(template_id)
    events = templates.follow_asset(templates.fold(stream.events), template_id, asset_id, version)
    if not events:
        return 0
    metadata = EventMetadata(
        actor_subject=ACTOR,
        actor_kind="system",
        correlation_id=cause.metadata.correlation_id or cause.event_id,
        causation_id=cause.event_id,
    )
    event_ids = [uuid5(cause.event_id, f"{template_id}:{asset_id}") for _ in events]
    await store.append(
        template_id,
        events,
        expected_version=stream.version,
        metadata=metadata,
        event_ids=event_ids,
    )
    return len(events)
