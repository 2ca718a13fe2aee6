"""Names in template documents resolved to what they name, from the write side's own name
holders (never a read model): a scope by its unit's name, an asset by its name in the template's
scope or nearest above it. Also: domain/template_documents.py."""

from collections.abc import Sequence
from uuid import UUID

from domain import assets, org_units
from domain.assets import Asset
from domain.org_units import UnknownScopeError
from domain.template_documents import NamedScope
from domain.template_rules import InvalidTemplateError
from domain.values import TENANT, ScopeRef
from services.assets import name_namespace
from services.errors import InvalidRequestError
from services.kinds import fold_as
from services.ports.event_store import StreamLoader
from services.ports.name_lookups import NameHolder, NameHolders

CLUSTERS = org_units.name_namespace("cluster", None)


async def scope_named(
    scope: NamedScope,
    *,
    streams: StreamLoader,
    holder: NameHolder,
    holders: NameHolders,
    field: str,
) -> ScopeRef:
    """The unit the scope names; UnknownScopeError (naming `field`) when none has that name,
    InvalidRequestError when several clusters have one and the scope names none of them."""
    kind = scope.kind
    if kind == "tenant":
        return TENANT
    if scope.cluster is not None:
        cluster = await holder(CLUSTERS, scope.cluster)
        if cluster is None:
            raise UnknownScopeError("cluster", scope.cluster, field=field)
        clusters: Sequence[UUID] = [cluster]
        if kind == "cluster":
            return ScopeRef("cluster", str(cluster))
    else:
        clusters = sorted(await holders([CLUSTERS]))
    name = scope.project if kind == "project" else scope.department
    assert name is not None
    found = [
        held
        for cluster in clusters
        if (held := await holder(org_units.name_namespace(kind, cluster), name)) is not None
    ]
    if len(found) > 1:
        raise InvalidRequestError(field, f"{len(found)} clusters have a {kind} {name!r}: name one")
    unit = fold_as(org_units.fold, (await streams.load(found[0])).events) if found else None
    if unit is None or unit.deleted:
        raise UnknownScopeError(kind, name, field=field)
    return unit.ref


async def asset_named(
    name: str,
    kinds: Sequence[str],
    lineage: tuple[ScopeRef, ...],
    *,
    streams: StreamLoader,
    holder: NameHolder,
    field: str,
) -> Asset:
    """The live asset of one of these kinds with this name in the scope, or nearest above it;
    InvalidTemplateError naming `field` when there is none."""
    for scope in lineage:
        for kind in kinds:
            held = await holder(name_namespace(kind, scope), name)
            if held is None:
                continue
            asset = fold_as(assets.fold, (await streams.load(held)).events)
            if asset is not None and not asset.deleted:
                return asset
    what = " or ".join(kinds) if len(kinds) < 3 else "data source"
    raise InvalidTemplateError(field, f"no {what} named {name!r} in the template's scope or above")
