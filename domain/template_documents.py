"""Templates as files (`apiVersion: trainplate/v1`, `kind: DistributedTemplate`): a template's
body with its scope and assets named, not numbered, so one file fits any installation. Also:
domain/template_exports.py, services/template_plans.py, docs/templates-in-git.md."""

from collections.abc import Mapping
from typing import Any, Final, Literal
from uuid import UUID

import msgspec
import msgspec.inspect

from domain.assets import Asset
from domain.combined import DATA_VOLUME, from_environment, overlay
from domain.data_volumes import DataVolume
from domain.errors import DomainError
from domain.pointers import pointer_in
from domain.registries import Registry
from domain.specs import ComputeSpec, EnvironmentSpec, NonEmpty
from domain.template_specs import (
    DataSourceLink,
    DataSourceOverrides,
    DistributedTemplateSpec,
    MasterSection,
    MasterTemplateSpec,
    TemplateAssets,
)
from domain.templates import TemplateBody

API_VERSION: Final = "trainplate/v1"
KIND: Final = "DistributedTemplate"
# What a name in a document resolves to: an asset, a data volume, a registry.
Found = Asset | DataVolume | Registry


class Document(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Base of the file's parts: camelCase, unset fields left out, typos refused."""


class NamedScope(Document, frozen=True, kw_only=True, omit_defaults=True):
    """One of tenant, cluster, department or project; a department or project may name its
    cluster too, where its name is not unique across clusters."""

    tenant: bool | None = None
    cluster: NonEmpty | None = None
    department: NonEmpty | None = None
    project: NonEmpty | None = None

    @property
    def kind(self) -> Literal["tenant", "cluster", "department", "project"]:
        if self.project is not None:
            return "project"
        if self.department is not None:
            return "department"
        return "cluster" if self.cluster is not None else "tenant"

    @property
    def label(self) -> str:
        """How a person reads it: `tenant`, `project:team-a`, `project:team-a@east`."""
        if self.kind == "tenant":
            return "tenant"
        if self.kind == "cluster":
            return f"cluster:{self.cluster}"
        name = self.project if self.kind == "project" else self.department
        return f"{self.kind}:{name}" + (f"@{self.cluster}" if self.cluster else "")


class NamedAsset(Document, frozen=True, kw_only=True):
    """An environment or compute resource by name: linked (its later edits flow into the
    template) or, `link: false`, its values copied into the spec once."""

    name: NonEmpty
    link: bool = True


class NamedRegistry(Document, frozen=True, kw_only=True):
    """The registry the spec's image comes from (`imageSource: ngcPrivateRegistry`)."""

    name: NonEmpty


class NamedDataSource(Document, frozen=True, kw_only=True, omit_defaults=True, rename="camel"):
    """A data source, or a data volume (`kind: data-volume`), by name."""

    name: NonEmpty
    kind: str | None = None  # needed only where two kinds share the name
    container_path: NonEmpty | None = None
    sub_path: NonEmpty | None = None


class NamedAssets(Document, frozen=True, kw_only=True, omit_defaults=True):
    environment: NamedAsset | None = None
    compute: NamedAsset | None = None
    datasources: tuple[NamedDataSource, ...] | None = None
    registry: NamedRegistry | None = None


class DocumentMaster(Document, frozen=True, kw_only=True, omit_defaults=True):
    spec: MasterTemplateSpec | None = None
    assets: NamedAssets | None = None


class DocumentMetadata(Document, frozen=True, kw_only=True, omit_defaults=True):
    name: NonEmpty
    scope: NamedScope
    description: str | None = None


class TemplateDocument(Document, frozen=True, kw_only=True, omit_defaults=True, rename="camel"):
    api_version: str
    kind: str
    metadata: DocumentMetadata
    spec: DistributedTemplateSpec = msgspec.field(default_factory=DistributedTemplateSpec)
    master_spec_same_as_worker: bool | None = None
    master: DocumentMaster | None = None
    assets: NamedAssets | None = None


class InvalidDocumentError(DomainError):
    """A document refused, naming it (its file, else its place) and the field, a JSON pointer
    into the document; `field` points into the request that carried it."""

    slug = "invalid-template-document"

    def __init__(self, index: int, source: str | None, at: str, reason: str) -> None:
        self.document = source or f"document {index + 1}"
        super().__init__(f"{self.document}: {at or '/'}: {reason}")
        self.index = index
        self.document_field = at
        self.field = f"/documents/{index}{at}"
        self.reason = reason


def parse(index: int, source: str | None, raw: object) -> TemplateDocument:
    """The document, or InvalidDocumentError naming the first thing wrong with it."""
    if not isinstance(raw, dict):
        raise InvalidDocumentError(index, source, "", "not a template: a mapping is expected")
    for key, want in (("apiVersion", API_VERSION), ("kind", KIND)):
        if raw.get(key) != want:
            raise InvalidDocumentError(index, source, f"/{key}", f"not a template: not {want!r}")
    try:
        document = msgspec.convert(raw, TemplateDocument)
    except msgspec.ValidationError as error:
        at = pointer_in(str(error))
        raise InvalidDocumentError(index, source, at, str(error).split(" - at ")[0]) from None
    unknown = _unknown_field(raw, _DOCUMENT_TYPE, "")
    if unknown is not None:
        raise InvalidDocumentError(index, source, unknown, "no such field")
    _check_scope(index, source, document.metadata.scope)
    for at, spec, named in _registries(document):
        if spec is not None and spec.image_registry_id is not None and named is not None:
            reason = "spec.imageRegistryId names a registry already: name it once"
            raise InvalidDocumentError(index, source, f"{at}/registry", reason)
    return document


def _registries(
    document: TemplateDocument,
) -> list[tuple[str, MasterTemplateSpec | DistributedTemplateSpec | None, NamedRegistry | None]]:
    """Each section's spec and the registry its assets name, with where those assets sit."""
    master = document.master
    return [
        ("/assets", document.spec, document.assets.registry if document.assets else None),
        (
            "/master/assets",
            master.spec if master else None,
            master.assets.registry if master and master.assets else None,
        ),
    ]


_DOCUMENT_TYPE: Final = msgspec.inspect.type_info(TemplateDocument)


def _unknown_field(raw: Any, info: msgspec.inspect.Type, at: str) -> str | None:
    """The first field the document has that its type does not: the spec's types accept
    unknown fields (events must), but a typo in a file is refused."""
    if isinstance(info, msgspec.inspect.UnionType):
        kinds = [t for t in info.types if not isinstance(t, msgspec.inspect.NoneType)]
        return _unknown_field(raw, kinds[0], at) if len(kinds) == 1 else None
    if isinstance(info, msgspec.inspect.VarTupleType | msgspec.inspect.ListType):
        items = raw if isinstance(raw, list) else []
        return next(
            (
                f
                for i, v in enumerate(items)
                if (f := _unknown_field(v, info.item_type, f"{at}/{i}"))
            ),
            None,
        )
    if not isinstance(info, msgspec.inspect.StructType) or not isinstance(raw, dict):
        return None
    fields = {f.encode_name: f.type for f in info.fields}
    for key, value in raw.items():
        if key not in fields:
            return f"{at}/{key}"
        if (found := _unknown_field(value, fields[key], f"{at}/{key}")) is not None:
            return found
    return None


def _check_scope(index: int, source: str | None, scope: NamedScope) -> None:
    if (reason := scope_problem(scope)) is not None:
        raise InvalidDocumentError(index, source, "/metadata/scope", reason)


def scope_problem(scope: NamedScope) -> str | None:
    """What is wrong with the scope as said (None: it names one unit's kind and name)."""
    named = [k for k in ("tenant", "department", "project") if getattr(scope, k) is not None]
    if scope.tenant is False or len(named) > 1 or (scope.tenant and scope.cluster):
        return "one of tenant: true, cluster, department or project (with its cluster)"
    if not named and scope.cluster is None:
        return "names no scope"
    return None


# Where a body's field is said in a document, for errors found once the names are resolved.
_IN_DOCUMENT: Final = (
    ("/meta/name", "/metadata/name"),
    ("/meta/description", "/metadata/description"),
    ("/meta", "/metadata/scope"),
)


def document_field(body_field: str, document: TemplateDocument | None = None) -> str:
    """A template body's JSON pointer as the document says it (an asset by its name, and the
    registry by its name where the document names it)."""
    for body, said in _IN_DOCUMENT:
        if body_field == body or body_field.startswith(body + "/"):
            return said
    for at, _, named in [] if document is None else _registries(document):
        if named is not None and body_field == at.replace("assets", "spec") + "/imageRegistryId":
            return f"{at}/registry/name"
    parts = body_field.split("/")
    if "assets" in parts and parts[-1] in ("environment", "compute", "registry"):
        return f"{body_field}/name"
    if "datasources" in parts and parts[-1] == "id":
        return "/".join(parts[:-1]) + "/name"
    return body_field


def body_of(document: TemplateDocument, found: Mapping[str, Found]) -> TemplateBody:
    """The body the document makes, `found` holding each thing it names by the pointer that
    names it (`/assets/environment`): linked ones and the registry by id, the others' values
    copied under the document's own."""
    worker = _with_copies(document.spec, document.assets, "/assets", found)
    master = document.master
    section = None
    if master is not None:
        spec = _with_copies(master.spec, master.assets, "/master/assets", found)
        section = MasterSection(
            spec=None if spec is None else msgspec.convert(spec, MasterTemplateSpec),
            assets=_links(master.assets, "/master/assets", found),
        )
    same = document.master_spec_same_as_worker
    return TemplateBody(
        spec=msgspec.convert(worker or {}, DistributedTemplateSpec),
        assets=_links(document.assets, "/assets", found),
        master_spec_same_as_worker=same if same is not None else master is None,
        master=section,
    )


def _with_copies(
    spec: msgspec.Struct | None, named: NamedAssets | None, at: str, found: Mapping[str, Found]
) -> dict[str, Any] | None:
    own: dict[str, Any] | None = None if spec is None else msgspec.to_builtins(spec)
    if named is None:
        return own
    copied: dict[str, Any] = {}
    for which, asset in (("environment", named.environment), ("compute", named.compute)):
        if asset is not None and not asset.link:
            overlay(copied, template_values(found[f"{at}/{which}"]))
    if copied:
        overlay(copied, own or {})
        own = copied
    if named.registry is not None:
        own = {**(own or {}), "imageRegistryId": str(found[f"{at}/registry"].id)}
    return own


def template_values(asset: Found) -> dict[str, Any]:
    """An environment's or compute resource's values in the template spec's shape."""
    if isinstance(asset.spec, EnvironmentSpec):
        return from_environment(asset.spec)
    if isinstance(asset.spec, ComputeSpec):
        return {"compute": msgspec.to_builtins(asset.spec)}
    return {}


def _links(named: NamedAssets | None, at: str, found: Mapping[str, Found]) -> TemplateAssets | None:
    if named is None or (
        named.environment is None and named.compute is None and named.datasources is None
    ):
        return None

    def linked(which: str, asset: NamedAsset | None) -> UUID | None:
        return found[f"{at}/{which}"].id if asset is not None and asset.link else None

    sources = None
    if named.datasources is not None:
        sources = tuple(
            DataSourceLink(
                id=found[f"{at}/datasources/{i}"].id,
                kind=_link_kind(found[f"{at}/datasources/{i}"]),
                overrides=_overrides(source),
            )
            for i, source in enumerate(named.datasources)
        )
    return TemplateAssets(
        environment=linked("environment", named.environment),
        compute=linked("compute", named.compute),
        datasources=sources,
    )


def _link_kind(found: Found) -> str:
    """The kind a template's link says: a data volume's is not its stream's kind."""
    return DATA_VOLUME if isinstance(found, DataVolume) else found.kind


def _overrides(source: NamedDataSource) -> DataSourceOverrides | None:
    if source.container_path is None and source.sub_path is None:
        return None
    return DataSourceOverrides(container_path=source.container_path, sub_path=source.sub_path)
