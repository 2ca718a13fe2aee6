"""A template as the document it is exported as (domain/template_documents.py): its assets,
data volumes and registries by name, so the file plans again on any installation that has
things of those names."""

from collections.abc import Mapping
from typing import TypeVar
from uuid import UUID

import msgspec

from domain.template_documents import (
    API_VERSION,
    KIND,
    DocumentMaster,
    DocumentMetadata,
    NamedAsset,
    NamedAssets,
    NamedDataSource,
    NamedRegistry,
    NamedScope,
    TemplateDocument,
)
from domain.template_specs import DistributedTemplateSpec, MasterTemplateSpec, TemplateAssets
from domain.templates import TemplateBody

_Spec = TypeVar("_Spec", DistributedTemplateSpec, MasterTemplateSpec)


class Names(msgspec.Struct, frozen=True, kw_only=True):
    """What an export names by id: each asset's, data volume's and registry's name and kind."""

    assets: Mapping[UUID, tuple[str, str]]


def document_of(
    name: str, description: str | None, scope: NamedScope, body: TemplateBody, names: Names
) -> TemplateDocument:
    """The document a template is exported as: planned again, it changes nothing. A registry
    or data volume the names lack stays an id, which a plan reads too."""
    master = None
    if body.master is not None:
        own, registry = body.master.spec, None
        if own is not None:
            own, registry = _registry_named(own, names)
        master = DocumentMaster(spec=own, assets=_named(body.master.assets, registry, names))
    spec, registry = _registry_named(body.spec, names)
    return TemplateDocument(
        api_version=API_VERSION,
        kind=KIND,
        metadata=DocumentMetadata(name=name, scope=scope, description=description),
        spec=spec,
        master_spec_same_as_worker=body.master_spec_same_as_worker,
        master=master,
        assets=_named(body.assets, registry, names),
    )


def _registry_named(spec: _Spec, names: Names) -> tuple[_Spec, NamedRegistry | None]:
    """The spec without its registry's id, and that registry by name (when it has one)."""
    registry_id = spec.image_registry_id
    if registry_id is None or registry_id not in names.assets:
        return spec, None
    registry = NamedRegistry(name=names.assets[registry_id][0])
    return msgspec.structs.replace(spec, image_registry_id=None), registry


def _named(
    links: TemplateAssets | None, registry: NamedRegistry | None, names: Names
) -> NamedAssets | None:
    if links is None:
        return None if registry is None else NamedAssets(registry=registry)

    def one(asset_id: UUID | None) -> NamedAsset | None:
        return None if asset_id is None else NamedAsset(name=names.assets[asset_id][0])

    sources = None
    if links.datasources is not None:
        sources = tuple(
            NamedDataSource(
                name=names.assets[link.id][0],
                kind=link.kind,
                container_path=link.overrides.container_path if link.overrides else None,
                sub_path=link.overrides.sub_path if link.overrides else None,
            )
            for link in links.datasources
        )
    return NamedAssets(
        environment=one(links.environment),
        compute=one(links.compute),
        datasources=sources,
        registry=registry,
    )
