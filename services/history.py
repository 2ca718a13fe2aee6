"""History of templates, assets and workloads: each version with who, when and why, the thing at
a version or moment, and changes field by field. A template's combined spec is rebuilt from the
asset versions it recorded, so a linked asset's change shows. Also: infra/http/history.py."""

from datetime import datetime
from typing import Any
from uuid import UUID

import msgspec

from domain import assets, data_volumes, registries, templates, workloads
from domain.assets import Asset
from domain.combined import FieldChange, changes, diff_values
from domain.data_volumes import DataVolume
from domain.events import Event, RecordedEvent, TemplateLinkedAssetUpdated, event_tag
from domain.registries import Registry
from domain.templates import Template, TemplateNotFoundError
from domain.workloads import WORKLOAD_EVENTS, Workload
from services.errors import InvalidRequestError
from services.kinds import fold_as
from services.ports.event_store import StreamLoader
from services.ports.read_side import RecordedHistory
from services.templates import combined


class Version(msgspec.Struct, frozen=True, kw_only=True):
    version: int
    type: str
    recorded_at: datetime
    actor: str
    actor_kind: str
    cause: UUID | None  # the event that led to this one (a linked asset's update), if any
    position: int
    # A linked asset's update: the asset and the version of it the template now combines.
    asset_id: UUID | None = None
    asset_version: int | None = None


def versions(recorded: list[RecordedEvent]) -> list[Version]:
    return [
        Version(
            version=r.version,
            type=event_tag(type(r.event)),
            recorded_at=r.recorded_at,
            actor=r.metadata.actor_subject,
            actor_kind=r.metadata.actor_kind,
            cause=r.metadata.causation_id,
            position=r.position,
            **_followed(r.event),
        )
        for r in recorded
    ]


def _followed(event: Event) -> dict[str, Any]:
    if isinstance(event, TemplateLinkedAssetUpdated):
        return {"asset_id": event.asset_id, "asset_version": event.asset_version}
    return {}


def upto(recorded: list[RecordedEvent], *, version: int | None, at: datetime | None) -> int:
    """How many events make the state asked for: up to `version`, or as of moment `at`."""
    if version is not None:
        if not 1 <= version <= len(recorded):
            raise InvalidRequestError("version", f"1 to {len(recorded)}")
        return version
    if at is not None:
        count = sum(1 for r in recorded if r.recorded_at <= at)
        if count == 0:
            raise InvalidRequestError("time", "before the first version")
        return count
    return len(recorded)


async def template_history(template_id: UUID, *, history: RecordedHistory) -> list[RecordedEvent]:
    recorded = await history.load_recorded(template_id)
    if fold_as(templates.fold, (r.event for r in recorded)) is None:
        raise TemplateNotFoundError(template_id)
    return recorded


def template_at(recorded: list[RecordedEvent], count: int) -> Template:
    state = templates.fold(r.event for r in recorded[:count])
    assert state is not None
    return state


async def template_diff(
    recorded: list[RecordedEvent], old: int, new: int, *, streams: StreamLoader
) -> list[FieldChange]:
    """What differs between versions `old` and `new`: the template's own fields, then its
    combined specs (and whether it can run)."""
    before, after = template_at(recorded, old), template_at(recorded, new)
    found = diff_values("/meta/name", before.meta.name, after.meta.name)
    found += diff_values("/meta/description", before.meta.description, after.meta.description)
    for name in ("spec", "assets", "masterSpecSameAsWorker", "master"):
        field = {"masterSpecSameAsWorker": "master_spec_same_as_worker"}.get(name, name)
        found += diff_values(f"/{name}", getattr(before.body, field), getattr(after.body, field))
    found += changes(
        await combined(before, streams=streams), await combined(after, streams=streams)
    )
    return found


async def asset_history(asset_id: UUID, *, history: RecordedHistory) -> list[RecordedEvent]:
    recorded = await history.load_recorded(asset_id)
    if _fold_any([r.event for r in recorded]) is None:
        raise assets.AssetNotFoundError("asset", asset_id)
    return recorded


def asset_at(recorded: list[RecordedEvent], count: int) -> Asset | Registry | DataVolume:
    state = _fold_any([r.event for r in recorded[:count]])
    assert state is not None
    return state


def _fold_any(events: list[Event]) -> Asset | Registry | DataVolume | None:
    """An environment, compute resource, data source, registry or data volume: whichever the
    stream holds."""
    return (
        fold_as(assets.fold, events)
        or fold_as(registries.fold, events)
        or fold_as(data_volumes.fold, events)
    )


def asset_diff(recorded: list[RecordedEvent], old: int, new: int) -> list[FieldChange]:
    before, after = asset_at(recorded, old), asset_at(recorded, new)
    found = diff_values("/meta/name", before.meta.name, after.meta.name)
    found += diff_values("/meta/description", before.meta.description, after.meta.description)
    found += diff_values("/spec", before.spec, after.spec)
    return found


class WorkloadEntry(msgspec.Struct, frozen=True):
    """One event of a workload's, with the workload as the event left it when the event moved
    its phase (None when it did not)."""

    recorded: RecordedEvent
    moved: Workload | None


async def workload_history(workload_id: UUID, *, history: RecordedHistory) -> list[WorkloadEntry]:
    """The workload's events, oldest first (those of other streams' kinds left out)."""
    entries = []
    state: Workload | None = None
    for entry in await history.load_recorded(workload_id):
        event = entry.event
        if not isinstance(event, WORKLOAD_EVENTS):
            continue
        before = state.actual if state else None
        state = workloads.evolve(state, event)
        entries.append(WorkloadEntry(entry, state if state.actual != before else None))
    return entries
