"""The linked-asset fan-out, a process manager: when a linked environment or compute resource
changes, every template linking it records the new version.

It reads the log in order and keeps its own index (templates by asset, latest asset versions)
in step with it, so a template that links an asset while the asset is being updated still ends
up on the asset's latest version: whichever of the two events comes second in the log does the
catching up. Event ids are derived from the triggering event, so a replay writes nothing twice.
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
    TemplateDeleted,
    TemplateUpdated,
)
from services.ports import BatchAppender, LinkIndex, OneAppend, Stream

ACTOR = "linked-asset-fanout"
BATCH = 500  # templates read and written per statement


async def handle(recorded: RecordedEvent, *, index: LinkIndex, store: BatchAppender) -> int:
    """Act on one event of the log; returns how many template events it appended."""
    match recorded.event:
        case EnvironmentCreated() | ComputeCreated() as e:
            await index.set_latest_version(e.asset_id, recorded.version)
            return 0
        case EnvironmentUpdated() | ComputeUpdated() as e:
            await index.set_latest_version(e.asset_id, recorded.version)
            linking = await index.templates_linking(e.asset_id)
            appended = 0
            for start in range(0, len(linking), BATCH):
                chunk = linking[start : start + BATCH]
                appended += await _follow(recorded, chunk, e.asset_id, recorded.version, store)
            return appended
        case TemplateCreated() | TemplateUpdated() as e:
            template = templates.fold((await store.load(e.template_id)).events)
            if template is None or template.deleted:
                return 0
            linked = templates.linked_ids(template.body)
            await index.set_links(e.template_id, linked)
            appended = 0
            for asset_id in sorted(linked):
                latest = await index.latest_version(asset_id)
                if latest is not None:
                    appended += await _follow(recorded, [e.template_id], asset_id, latest, store)
            return appended
        case TemplateDeleted() as e:
            await index.set_links(e.template_id, frozenset())
            return 0
        case _:
            return 0


async def _follow(
    cause: RecordedEvent,
    template_ids: Sequence[UUID],
    asset_id: UUID,
    version: int,
    store: BatchAppender,
) -> int:
    """Move each template on to the asset's version: one read and one write for them all."""
    streams = await store.load_many(template_ids)
    appends = []
    for template_id in template_ids:
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
    metadata = EventMetadata(
        actor_subject=ACTOR,
        actor_kind="system",
        correlation_id=cause.metadata.correlation_id or cause.event_id,
        causation_id=cause.event_id,
    )
    return await store.append_each(appends, metadata=metadata)
