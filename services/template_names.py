"""Names in template documents resolved to what they name, from the write side's own name
holders (never a read model): a scope by its unit's name; an asset or registry by its name in
the template's scope or nearest above; a data volume by its name in its cluster."""

import functools
from collections.abc import Sequence
from uuid import UUID

from domain import assets, data_volumes, org_units, registries
from domain.assets import Asset
from domain.combined import DATA_VOLUME
from domain.data_volumes import DataVolume
from domain.org_units import UnknownScopeError
from domain.registries import Registry
from domain.template_documents import (
    Found,
    NamedAssets,
    NamedDataSource,
    NamedScope,
    TemplateDocument,
)
from domain.template_rules import InvalidTemplateError
from domain.values import TENANT, ScopeRef
from services.assets import name_namespace
from services.data_volumes import name_namespace as data_volume_namespace
from services.errors import InvalidRequestError
from services.kinds import fold_as
from services.ports.event_store import StreamLoader
from services.ports.name_lookups import NameHolder, NameHolders

CLUSTERS = org_units.name_namespace("cluster", None)
DATA_SOURCE_KINDS = ("nfs", "pvc", "s3", "git", "hostPath", "config-map", "secret-volume")


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


async def registry_named(
    name: str,
    lineage: tuple[ScopeRef, ...],
    *,
    streams: StreamLoader,
    holder: NameHolder,
    field: str,
) -> Registry:
    """The live registry of this name in the scope, or nearest above it; InvalidTemplateError
    naming `field` when there is none."""
    for scope in lineage:
        held = await holder(name_namespace(registries.KIND, scope), name)
        found = (
            None if held is None else fold_as(registries.fold, (await streams.load(held)).events)
        )
        if found is not None and not found.deleted:
            return found
    raise InvalidTemplateError(
        field, f"no registry named {name!r} in the template's scope or above"
    )


async def data_volume_named(
    name: str,
    lineage: tuple[ScopeRef, ...],
    *,
    streams: StreamLoader,
    holder: NameHolder,
    holders: NameHolders,
    field: str,
) -> DataVolume:
    """The data volume of this name usable in the scope (`lineage[0]`): a name is unique in a
    cluster, so the template's cluster's, else any cluster's where exactly one is. Documents
    exported before names were given hold the id, which is read too."""
    clusters = [UUID(s.id) for s in lineage if s.kind == "cluster"] or sorted(
        await holders([CLUSTERS])
    )
    found: list[DataVolume] = []
    for cluster in clusters:
        held = await holder(data_volume_namespace(cluster), name)
        volume = (
            None if held is None else fold_as(data_volumes.fold, (await streams.load(held)).events)
        )
        if volume is not None and data_volumes.usable_in(volume, lineage):
            found.append(volume)
    if not found and (given := _uuid(name)) is not None:
        volume = fold_as(data_volumes.fold, (await streams.load(given)).events)
        found = [volume] if volume is not None and data_volumes.usable_in(volume, lineage) else []
    if len(found) > 1:
        raise InvalidTemplateError(field, f"{len(found)} clusters have a data volume {name!r}")
    if not found:
        raise InvalidTemplateError(
            field, f"no data volume named {name!r} usable in the template's scope"
        )
    return found[0]


def _uuid(text: str) -> UUID | None:
    try:
        return UUID(text)
    except ValueError:
        return None


async def named_in(
    document: TemplateDocument,
    lineage: tuple[ScopeRef, ...],
    *,
    streams: StreamLoader,
    holder: NameHolder,
    holders: NameHolders,
) -> dict[str, tuple[Found, bool | None]]:
    """Each thing the document names, by the pointer that names it, with whether it links
    (None: it is loaded, never linked)."""
    found: dict[str, tuple[Found, bool | None]] = {}
    sections: list[tuple[str, NamedAssets | None]] = [("/assets", document.assets)]
    if document.master is not None:
        sections.append(("/master/assets", document.master.assets))
    for at, named in sections:
        if named is None:
            continue
        for which, asset in (("environment", named.environment), ("compute", named.compute)):
            if asset is not None:
                field = f"{at}/{which}"
                found[field] = (
                    await asset_named(
                        asset.name, (which,), lineage, streams=streams, holder=holder, field=field
                    ),
                    asset.link,
                )
        for i, source in enumerate(named.datasources or ()):
            field = f"{at}/datasources/{i}"
            source_found = await _source_named(source, lineage, streams, holder, holders, field)
            found[field] = (source_found, None)
        if named.registry is not None:
            field = f"{at}/registry"
            registry = await registry_named(
                named.registry.name, lineage, streams=streams, holder=holder, field=field
            )
            found[field] = (registry, None)
    return found


async def _source_named(
    source: NamedDataSource,
    lineage: tuple[ScopeRef, ...],
    streams: StreamLoader,
    holder: NameHolder,
    holders: NameHolders,
    field: str,
) -> Found:
    """A data source by name, or a data volume (`kind: data-volume`, or a name only a data
    volume has)."""
    volume = functools.partial(
        data_volume_named,
        source.name,
        lineage,
        streams=streams,
        holder=holder,
        holders=holders,
        field=field,
    )
    if source.kind == DATA_VOLUME:
        return await volume()
    kinds = DATA_SOURCE_KINDS if source.kind is None else (source.kind,)
    try:
        return await asset_named(
            source.name, kinds, lineage, streams=streams, holder=holder, field=field
        )
    except InvalidTemplateError:
        if source.kind is not None:
            raise
    try:
        return await volume()
    except InvalidTemplateError:
        raise InvalidTemplateError(
            field, f"no data source or data volume named {source.name!r} usable here"
        ) from None
