"""Templates as code: the plan of a set of template documents (per template create, update,
unchanged or, pruned, delete; its diff, runnable and compliance) and its apply, all or none in
one transaction. Also: domain/template_documents.py, infra/http/template_plans.py."""

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Literal, NamedTuple
from uuid import UUID, uuid4

import msgspec

from domain import templates, tenant_settings
from domain.combined import DATA_VOLUME, FieldChange, Runnable, combine, diff_values
from domain.data_volumes import DataVolume
from domain.errors import TrainplateError
from domain.events import AssetVersion, EventMetadata
from domain.policy_compliance import issues
from domain.policy_rules import ComplianceIssue
from domain.template_documents import (
    Found,
    InvalidDocumentError,
    NamedScope,
    TemplateDocument,
    body_of,
    document_field,
)
from domain.templates import Template, TemplateBody
from domain.values import ScopeRef, TemplateMeta
from services import access
from services.assets import placement
from services.errors import NameTakenError, PlanOutdatedError, VersionConflictError
from services.kinds import fold_as
from services.policies import effective_in
from services.ports.event_store import Append, EventStore, StreamLoader, StreamReader, Uses
from services.ports.name_lookups import Lookups, NameHolder
from services.prefetch import actor_stream, prefetch
from services.races import decided_again
from services.template_names import named_in, scope_named
from services.templates import checked_body, name_claim, name_namespace, uses_of

Action = Literal["create", "update", "unchanged", "delete"]


class Declaration(msgspec.Struct, frozen=True):
    """One document, with its place among those sent and the file it came from, if known."""

    index: int
    source: str | None
    document: TemplateDocument


class Declared(msgspec.Struct, frozen=True, kw_only=True):
    """What is to be planned. `scopes`: where a prune may delete (None: the documents')."""

    documents: tuple[Declaration, ...]
    metadata: EventMetadata
    prune: bool = False
    scopes: tuple[NamedScope, ...] | None = None


class ResolvedAsset(msgspec.Struct, frozen=True, kw_only=True):
    field: str  # where the document names it
    name: str
    kind: str
    asset_id: UUID
    scope: ScopeRef
    version: int
    link: bool | None  # None: a data source, always loaded


class Read(msgspec.Struct, frozen=True, kw_only=True):
    """A stream the plan was decided on, at the version it read."""

    stream_id: UUID
    kind: Literal["template", "asset"]
    name: str
    version: int


class Planned(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    scope: ScopeRef
    scope_label: str
    action: Action
    document: int | None  # its place among the documents; None for a deletion
    source: str | None
    template_id: UUID | None  # None: created on apply
    version: int  # the template's version read (0: none yet)
    changes: tuple[FieldChange, ...] = ()
    runnable: Runnable | None = None
    compliance: tuple[ComplianceIssue, ...] = ()
    assets: tuple[ResolvedAsset, ...] = ()


class Plan(msgspec.Struct, frozen=True, kw_only=True):
    templates: tuple[Planned, ...]
    reads: tuple[Read, ...]

    @property
    def versions(self) -> dict[UUID, int]:
        return {read.stream_id: read.version for read in self.reads}

    @property
    def changed(self) -> bool:
        return any(t.action != "unchanged" for t in self.templates)


class Applied(msgspec.Struct, frozen=True, kw_only=True):
    plan: Plan
    written: dict[str, int]  # each template written, by name and scope, with its new version


class _One(NamedTuple):
    planned: Planned
    write: Append | None
    reads: list[Read]


async def plan_templates(declared: Declared, *, streams: StreamReader, lookups: Lookups) -> Plan:
    """What applying the documents would do; writes nothing. The caller must see each scope."""
    plan, _ = await _decided(declared, "viewer", streams, lookups)
    return plan


async def apply_plan(
    declared: Declared,
    versions: Mapping[UUID, int] | None,
    *,
    streams: EventStore,
    lookups: Lookups,
) -> Applied:
    """The plan, decided again and written in one transaction, each template at the version
    the plan read; PlanOutdatedError, writing nothing, when anything read has moved since.
    No `versions`: the documents as decided now, decided again when a write races them."""
    if versions is None:
        return await _applied_now(declared, streams=streams, lookups=lookups)
    plan, writes = await _decided(declared, "editor", streams, lookups)
    moved = _moved(plan, versions)
    if moved:
        raise PlanOutdatedError(moved)
    try:
        return Applied(plan=plan, written=await _written(writes, streams))
    except (VersionConflictError, NameTakenError) as error:
        raise PlanOutdatedError([_what_moved(error, plan, writes)]) from error


@decided_again
async def _applied_now(declared: Declared, *, streams: EventStore, lookups: Lookups) -> Applied:
    plan, writes = await _decided(declared, "editor", streams, lookups)
    return Applied(plan=plan, written=await _written(writes, streams))


async def _written(writes: list[tuple[Planned, Append]], streams: EventStore) -> dict[str, int]:
    """Every write in one transaction: all or none."""
    written: dict[str, int] = {}
    async with streams.transaction() as tx:
        for planned, write in writes:
            result = await tx.append(write)
            written[f"{planned.scope_label}/{planned.name}"] = result.version
    return written


def _moved(plan: Plan, versions: Mapping[UUID, int]) -> list[str]:
    read = plan.versions
    names = {r.stream_id: f"{r.kind} {r.name}" for r in plan.reads}
    found = []
    for stream_id in sorted(set(read) | set(versions)):
        before, now = versions.get(stream_id), read.get(stream_id)
        if before == now:
            continue
        if now is None:
            found.append(f"{stream_id} (read at version {before}) is no longer part of it")
        elif before is None:
            found.append(f"{names[stream_id]} is now part of it (at version {now})")
        else:
            found.append(f"{names[stream_id]} moved from version {before} to {now}")
    return found


def _what_moved(error: Exception, plan: Plan, writes: list[tuple[Planned, Append]]) -> str:
    if isinstance(error, NameTakenError):
        return f"another template took the name {error.name!r} ({error.namespace})"
    assert isinstance(error, VersionConflictError)
    named = {r.stream_id: f"{r.kind} {r.name}" for r in plan.reads}
    named.update({w.stream_id: f"template {p.scope_label}/{p.name}" for p, w in writes})
    return f"{named.get(error.stream_id, str(error.stream_id))} was changed"


async def _decided(
    declared: Declared, role: Literal["viewer", "editor"], store: StreamReader, lookups: Lookups
) -> tuple[Plan, list[tuple[Planned, Append]]]:
    loader = await prefetch(store, [actor_stream(declared.metadata), tenant_settings.STREAM])
    planned: list[Planned] = []
    writes: list[tuple[Planned, Append]] = []
    reads: dict[UUID, Read] = {}
    declared_at: dict[tuple[ScopeRef, str], Declaration] = {}
    for declaration in declared.documents:
        with _naming(declaration):
            one = await _one(declaration, role, declared.metadata, loader, lookups)
        key = (one.planned.scope, one.planned.name)
        if (first := declared_at.get(key)) is not None:
            where = first.source or f"document {first.index + 1}"
            raise InvalidDocumentError(
                declaration.index,
                declaration.source,
                "/metadata/name",
                f"{where} declares {one.planned.name!r} in {one.planned.scope_label} too",
            )
        declared_at[key] = declaration
        _add(one, planned, writes, reads)
    if declared.prune:
        for one in await _pruned(declared, role, set(declared_at), loader, lookups):
            _add(one, planned, writes, reads)
    return Plan(templates=tuple(planned), reads=tuple(reads.values())), writes


def _add(
    one: _One,
    planned: list[Planned],
    writes: list[tuple[Planned, Append]],
    reads: dict[UUID, Read],
) -> None:
    planned.append(one.planned)
    if one.write is not None:
        writes.append((one.planned, one.write))
    reads.update({r.stream_id: r for r in one.reads})


@contextmanager
def _naming(declaration: Declaration) -> Iterator[None]:
    """A refusal of something the document says, naming the document and the field in it."""
    try:
        yield
    except InvalidDocumentError:
        raise
    except TrainplateError as error:
        field = getattr(error, "field", None)
        if not isinstance(field, str):
            raise
        reason = str(error).removeprefix(f"{field}: ")
        at = document_field(field, declaration.document)
        raise InvalidDocumentError(declaration.index, declaration.source, at, reason) from error


async def _one(
    declaration: Declaration,
    role: Literal["viewer", "editor"],
    metadata: EventMetadata,
    streams: StreamLoader,
    lookups: Lookups,
) -> _One:
    document = declaration.document
    named_scope = document.metadata.scope
    field = "/metadata/scope"
    scope = await scope_named(
        named_scope, streams=streams, holder=lookups.holder, holders=lookups.holders, field=field
    )
    action = "plan" if role == "viewer" else "apply"
    lineage = await access.require_in(
        metadata, scope, role, f"{action} templates in {named_scope.label}", streams=streams,
        field=field,
    )  # fmt: skip
    named = await named_in(
        document, lineage, streams=streams, holder=lookups.holder, holders=lookups.holders
    )
    body = templates.normalized(body_of(document, {f: a for f, (a, _) in named.items()}))
    cluster_id, department_id, project_id = placement(lineage, None)
    meta = TemplateMeta(
        name=document.metadata.name,
        description=document.metadata.description,
        scope=scope.kind,
        cluster_id=cluster_id,
        department_id=department_id,
        project_id=project_id,
    )
    body, versions, found = await checked_body(
        body, lineage, cluster_id, streams=streams, names=lookups
    )
    current = await _current(scope, meta.name, streams, lookups.holder)
    template_id = current.id if current is not None else uuid4()
    if current is None:
        events = templates.create(None, template_id, meta, body, versions)
    else:
        events = templates.update(
            current,
            template_id,
            name=meta.name,
            description=meta.description,
            body=body,
            asset_versions=versions,
        )
    read_assets = {a.id: a for a, _ in named.values()} | found
    reads = [Read(stream_id=i, kind="asset", name=a.meta.name, version=a.version)
             for i, a in read_assets.items()]  # fmt: skip
    version = 0 if current is None else current.version
    if current is not None:
        reads.append(_template_read(current, named_scope.label))
    combined = combine(body, found)
    policy = await effective_in(lineage, streams=streams)
    under = combine(
        body,
        found,
        worker_defaults=policy.worker_defaults,
        master_defaults=policy.master_defaults,
    )
    after = _shown(meta.description, body, versions)
    before = (
        _skeleton(after)
        if current is None
        else _shown(current.meta.description, current.body, current.asset_versions)
    )
    planned = Planned(
        name=meta.name,
        scope=scope,
        scope_label=named_scope.label,
        action="create" if current is None else "update" if events else "unchanged",
        document=declaration.index,
        source=declaration.source,
        template_id=None if current is None else template_id,
        version=version,
        changes=tuple(diff_values("", before, after)),
        runnable=combined.runnable,
        compliance=tuple(issues(policy, under.spec, under.master)),
        assets=tuple(_resolved(at, asset, link) for at, (asset, link) in sorted(named.items())),
    )
    write = None
    if events:
        write = Append(
            template_id,
            events,
            expected_version=version,
            metadata=metadata,
            name=name_claim(meta),
            uses=uses_of(meta.name, scope, body),
            checked={r.stream_id: r.version for r in reads if r.kind == "asset"},
        )
    return _One(planned, write, reads)


def _template_read(template: Template, label: str) -> Read:
    return Read(
        stream_id=template.id,
        kind="template",
        name=f"{label}/{template.meta.name}",
        version=template.version,
    )


def _shown(
    description: str | None, body: TemplateBody, versions: Sequence[AssetVersion]
) -> dict[str, Any]:
    """A template as its diff compares it: what a document says, and the asset versions."""
    shown: dict[str, Any] = msgspec.to_builtins(body)
    shown["metadata"] = {"description": description}
    shown["assetVersions"] = {str(v.asset_id): v.version for v in versions}
    return shown


def _skeleton(value: Any) -> Any:
    """What a creation is compared with: the same objects, no values, so each field shows."""
    if isinstance(value, dict):
        return {key: _skeleton(inner) for key, inner in value.items()}
    return None


def _resolved(at: str, asset: Found, link: bool | None) -> ResolvedAsset:
    return ResolvedAsset(
        field=f"{at}/name",
        name=asset.meta.name,
        kind=DATA_VOLUME if isinstance(asset, DataVolume) else asset.kind,
        asset_id=asset.id,
        scope=asset.meta.scope_ref,
        version=asset.version,
        link=link,
    )


async def _current(
    scope: ScopeRef, name: str, streams: StreamLoader, holder: NameHolder
) -> Template | None:
    """The live template of that name in the scope, from the write side's name holders."""
    held = await holder(name_namespace(scope), name)
    if held is None:
        return None
    found = fold_as(templates.fold, (await streams.load(held)).events)
    return None if found is None or found.deleted else found


async def _pruned(
    declared: Declared,
    role: Literal["viewer", "editor"],
    kept: set[tuple[ScopeRef, str]],
    streams: StreamLoader,
    lookups: Lookups,
) -> list[_One]:
    """A deletion of each template of the declared scopes that no document declares."""
    if declared.scopes is None:
        named = {d.document.metadata.scope.label: d.document.metadata.scope
                 for d in declared.documents}  # fmt: skip
        scopes = list(named.values())
    else:
        scopes = list(declared.scopes)
    found: list[_One] = []
    for i, named_scope in enumerate(scopes):
        field = f"/scopes/{i}"
        scope = await scope_named(
            named_scope,
            streams=streams,
            holder=lookups.holder,
            holders=lookups.holders,
            field=field,
        )
        action = "plan" if role == "viewer" else "apply"
        await access.require_in(
            declared.metadata, scope, role, f"{action} templates in {named_scope.label}",
            streams=streams, field=field,
        )  # fmt: skip
        for held in sorted(await lookups.holders([name_namespace(scope)])):
            template = fold_as(templates.fold, (await streams.load(held)).events)
            if template is None or template.deleted or (scope, template.meta.name) in kept:
                continue
            found.append(_deletion(template, scope, named_scope.label, declared.metadata))
    return sorted(found, key=lambda one: (one.planned.scope_label, one.planned.name))


def _deletion(template: Template, scope: ScopeRef, label: str, metadata: EventMetadata) -> _One:
    planned = Planned(
        name=template.meta.name,
        scope=scope,
        scope_label=label,
        action="delete",
        document=None,
        source=None,
        template_id=template.id,
        version=template.version,
    )
    write = Append(
        template.id,
        templates.delete(template, template.id),
        expected_version=template.version,
        metadata=metadata,
        name=None,
        uses=Uses(user=f"template {template.meta.name}"),
    )
    return _One(planned, write, [_template_read(template, label)])
