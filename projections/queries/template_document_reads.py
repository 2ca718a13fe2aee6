"""Templates exported as documents (domain/template_exports.py): each template of the scopes
asked for that the caller may see, its scope, assets, data volumes and registries named from
the read models, so that planning the documents again finds nothing to change."""

from collections.abc import Sequence, Set
from uuid import UUID

import msgspec

from domain.combined import DATA_VOLUME
from domain.org_units import UnknownScopeError
from domain.registries import KIND as REGISTRY
from domain.template_documents import NamedScope, TemplateDocument
from domain.template_exports import Names, document_of
from domain.templates import TemplateBody
from domain.values import TENANT, ScopeRef
from projections import asset_catalogue, data_volume_catalogue, org_units, template_catalogue
from projections.executor import Executor
from projections.org_units import OrgUnitRow
from projections.queries import Reads


async def exported(
    reads: Reads, seen: Set[ScopeRef], scopes: Sequence[NamedScope] | None
) -> list[TemplateDocument]:
    """The documents of the templates in `scopes` (None: every scope) the caller may see, by
    scope and name; UnknownScopeError for a scope asked for that names no unit."""
    async with reads.connection() as conn:
        units = await org_units.list_units(conn)
        wanted = seen if scopes is None else {_ref(s, units) for s in scopes} & set(seen)
        rows = await template_catalogue.templates_in(conn, wanted)
        names: dict[UUID, tuple[str, str]] = {}
        for row in rows:
            for kind, asset_id in _assets(row.template.body):
                name = await _name_of(conn, kind, asset_id)
                if name is not None or kind != REGISTRY:  # a registry unnamed stays an id
                    names[asset_id] = (name or str(asset_id), kind)
    documents = [
        document_of(
            row.template.meta.name,
            row.template.meta.description,
            _named(row.template.meta.scope_ref, units),
            row.template.body,
            Names(assets=names),
        )
        for row in rows
    ]
    return sorted(documents, key=lambda d: (d.metadata.scope.label, d.metadata.name))


def _ref(scope: NamedScope, units: list[OrgUnitRow]) -> ScopeRef:
    kind = scope.kind
    if kind == "tenant":
        return TENANT
    clusters = {u.cluster_id: u.name for u in units if u.kind == "cluster"}
    name = {"cluster": scope.cluster, "department": scope.department, "project": scope.project}
    found = [
        u
        for u in units
        if u.kind == kind
        and u.name == name[kind]
        and (kind == "cluster" or scope.cluster in (None, clusters.get(u.cluster_id)))
    ]
    if len(found) != 1:
        raise UnknownScopeError(kind, scope.label, field="scope")
    return ScopeRef(kind, found[0].id)


def _named(scope: ScopeRef, units: list[OrgUnitRow]) -> NamedScope:
    """The scope by name, with its cluster's where another cluster has a unit of that name."""
    if scope.kind == "tenant":
        return NamedScope(tenant=True)
    unit = next((u for u in units if u.kind == scope.kind and u.id == scope.id), None)
    if unit is None:
        return msgspec.convert({scope.kind: scope.id}, NamedScope)
    if scope.kind == "cluster":
        return NamedScope(cluster=unit.name)
    twins = [u for u in units if u.kind == scope.kind and u.name == unit.name]
    cluster = next(
        (u.name for u in units if u.kind == "cluster" and u.cluster_id == unit.cluster_id), None
    )
    named = {scope.kind: unit.name, "cluster": cluster if len(twins) > 1 else None}
    return msgspec.convert(named, NamedScope)


async def _name_of(conn: Executor, kind: str, asset_id: UUID) -> str | None:
    if kind == DATA_VOLUME:
        volume = await data_volume_catalogue.get_one(conn, asset_id)
        return volume.name if volume else None
    found = await asset_catalogue.get_asset(conn, kind, asset_id)
    return found.meta.name if found else None


def _assets(body: TemplateBody) -> list[tuple[str, UUID]]:
    """What the body names by id: its assets, data volumes and registries, with their kinds."""
    found: list[tuple[str, UUID]] = [
        (REGISTRY, spec.image_registry_id)
        for spec in (body.spec, body.master.spec if body.master else None)
        if spec is not None and spec.image_registry_id is not None
    ]
    for links in (body.assets, body.master.assets if body.master else None):
        if links is None:
            continue
        found += [
            (k, i) for k, i in (("environment", links.environment), ("compute", links.compute)) if i
        ]
        found += [(link.kind, link.id) for link in links.datasources or ()]
    return found
