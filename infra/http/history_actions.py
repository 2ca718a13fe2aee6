"""A template's versions and changes for a caller who may see it, shared by the API's history
handlers (infra/http/history.py) and the console's template page."""

from uuid import UUID

from domain.combined import FieldChange
from domain.events import RecordedEvent
from domain.templates import TemplateNotFoundError
from infra.http.adapters import Adapters
from infra.http.callers import Caller, seen_scopes
from infra.http.history_schemas import ChangeWire, DiffWire, HistoryWire, VersionWire
from services import history
from services.ports.read_side import RecordedHistory


def versions_of(stream_id: UUID, recorded: list[RecordedEvent]) -> HistoryWire:
    return HistoryWire(
        id=stream_id,
        versions=[
            VersionWire(
                version=v.version, type=v.type, time=v.recorded_at, actor=v.actor,
                actor_kind=v.actor_kind, cause=v.cause, position=v.position,
                asset_id=v.asset_id, asset_version=v.asset_version,
            )
            for v in history.versions(recorded)
        ],
    )  # fmt: skip


def diff_of(stream_id: UUID, old: int, new: int, found: list[FieldChange]) -> DiffWire:
    changes = [ChangeWire(c.field, c.before, c.after) for c in found]
    return DiffWire(id=stream_id, from_version=old, to_version=new, changes=changes)


async def template_events(
    request: Caller, template_id: UUID, store: RecordedHistory
) -> list[RecordedEvent]:
    recorded = await history.template_history(template_id, history=store)
    scope = history.template_at(recorded, len(recorded)).meta.scope_ref
    if scope not in await seen_scopes(request):
        raise TemplateNotFoundError(template_id)  # out of sight: the same answer
    return recorded


async def template_versions(request: Caller, template_id: UUID, adapters: Adapters) -> HistoryWire:
    """A template's versions, for a caller who may see it (the API's and the console's)."""
    return versions_of(template_id, await template_events(request, template_id, adapters.streams))


async def template_changes(
    request: Caller, template_id: UUID, old: int, new: int | None, adapters: Adapters
) -> DiffWire:
    """A template's changes between two versions, for a caller who may see it (the API's and
    the console's)."""
    recorded = await template_events(request, template_id, adapters.streams)
    older = history.upto(recorded, version=old, at=None)
    newer = history.upto(recorded, version=new, at=None)
    found = await history.template_diff(recorded, older, newer, streams=adapters.streams)
    return diff_of(template_id, older, newer, found)
