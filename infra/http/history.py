"""History of a template or an asset (ours, docs/audit.md): each version with who, when and why, the
thing as of a version or moment, a field diff (combined specs included); read from the event
store itself, so exact, for whoever may see it. Also: services/history.py."""

from datetime import UTC, datetime
from typing import Annotated, Final
from uuid import UUID

import msgspec
from litestar import Response, get
from litestar.di import NamedDependency
from litestar.params import FromPath, QueryParameter

from domain.assets import AssetNotFoundError
from domain.events import RecordedEvent
from domain.values import ScopeRef
from infra.http.adapters import Adapters
from infra.http.callers import Caller, seen_scopes
from infra.http.history_actions import (
    diff_of,
    template_changes,
    template_events,
    template_versions,
    versions_of,
)
from infra.http.history_schemas import AssetAsOf, DiffWire, HistoryWire
from infra.http.template_schemas import DistributedTemplate
from infra.http.template_views import wire_of
from projections.template_catalogue import TemplateRow
from services import history
from services.ports.read_side import RecordedHistory
from services.templates import combined

TEMPLATES: Final = "/api/v1/workload-templates/{template_id:uuid}"
ASSETS: Final = "/api/v1/asset/{asset_id:uuid}"


async def _asset(request: Caller, asset_id: UUID, store: RecordedHistory) -> list[RecordedEvent]:
    recorded = await history.asset_history(asset_id, history=store)
    scope: ScopeRef = history.asset_at(recorded, len(recorded)).meta.scope_ref
    if scope not in await seen_scopes(request):
        raise AssetNotFoundError("asset", asset_id)
    return recorded


Version = Annotated[int | None, QueryParameter(ge=1)]
Moment = Annotated[datetime | None, QueryParameter(name="time")]


def _utc(moment: datetime | None) -> datetime | None:
    """A `time` without a zone is read as UTC (the log's times are all zoned)."""
    return moment.replace(tzinfo=UTC) if moment is not None and moment.tzinfo is None else moment


From = Annotated[int, QueryParameter(name="from", ge=1)]
To = Annotated[int | None, QueryParameter(name="to", ge=1)]


@get(f"{TEMPLATES}/history", tags=["Template history"])
async def template_history(
    request: Caller,
    template_id: FromPath[UUID],
    adapters: NamedDependency[Adapters],
) -> HistoryWire:
    """Every version, oldest first: which event made it, when, by whom (a linked asset's
    update names its cause)."""
    return await template_versions(request, template_id, adapters)


@get(f"{TEMPLATES}/as-of", tags=["Template history"])
async def template_as_of(
    request: Caller,
    template_id: FromPath[UUID],
    adapters: NamedDependency[Adapters],
    version: Version = None,
    moment: Moment = None,
) -> Response[DistributedTemplate]:
    """The template as it was at `version`, or at `time` (ISO 8601), combined specs included."""
    recorded = await template_events(request, template_id, adapters.streams)
    count = history.upto(recorded, version=version, at=_utc(moment))
    template = history.template_at(recorded, count)
    first, last = recorded[0], recorded[count - 1]
    row = TemplateRow(
        template=template,
        combined=await combined(
            template, streams=adapters.streams
        ),  # of the assets as they were then
        created_at=first.recorded_at,
        created_by=first.metadata.actor_subject,
        updated_at=last.recorded_at,
        updated_by=last.metadata.actor_subject,
    )
    wire = wire_of(row)
    return Response(wire, headers={"ETag": f'"{template.version}"'})


@get(f"{TEMPLATES}/diff", tags=["Template history"])
async def template_diff(
    request: Caller,
    template_id: FromPath[UUID],
    adapters: NamedDependency[Adapters],
    old: From,
    new: To = None,
) -> DiffWire:
    """What changed from version `from` to version `to` (default: the latest), field by field,
    as JSON pointers into the template's response."""
    return await template_changes(request, template_id, old, new, adapters)


@get(f"{ASSETS}/history", tags=["Asset history"])
async def asset_history(
    request: Caller,
    asset_id: FromPath[UUID],
    adapters: NamedDependency[Adapters],
) -> HistoryWire:
    """Every version of an environment, compute resource, data source, registry or data
    volume, oldest first."""
    return versions_of(asset_id, await _asset(request, asset_id, adapters.streams))


@get(f"{ASSETS}/as-of", tags=["Asset history"])
async def asset_as_of(
    request: Caller,
    asset_id: FromPath[UUID],
    adapters: NamedDependency[Adapters],
    version: Version = None,
    moment: Moment = None,
) -> AssetAsOf:
    recorded = await _asset(request, asset_id, adapters.streams)
    asset = history.asset_at(recorded, history.upto(recorded, version=version, at=_utc(moment)))
    return AssetAsOf(
        id=asset_id,
        kind=asset.kind,
        version=asset.version,
        deleted=asset.deleted,
        meta=msgspec.to_builtins(asset.meta),
        spec=msgspec.to_builtins(asset.spec),
    )


@get(f"{ASSETS}/diff", tags=["Asset history"])
async def asset_diff(
    request: Caller,
    asset_id: FromPath[UUID],
    adapters: NamedDependency[Adapters],
    old: From,
    new: To = None,
) -> DiffWire:
    recorded = await _asset(request, asset_id, adapters.streams)
    older = history.upto(recorded, version=old, at=None)
    newer = history.upto(recorded, version=new, at=None)
    return diff_of(asset_id, older, newer, history.asset_diff(recorded, older, newer))


HISTORY_ROUTES: Final = (
    template_history,
    template_as_of,
    template_diff,
    asset_history,
    asset_as_of,
    asset_diff,
)
