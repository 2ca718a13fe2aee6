"""The plan of one template document: its scope and the caller's role there, the names it
resolves, the body checked as a template's would be, and against the live template of its name
what would change, whether it runs, what the policies say, and the write that applies it."""

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any
from uuid import uuid4

import msgspec

from domain import templates
from domain.combined import DATA_VOLUME, combine, diff_values
from domain.data_volumes import DataVolume
from domain.errors import TrainplateError
from domain.events import AssetVersion, EventMetadata
from domain.policy_compliance import issues
from domain.template_documents import Found, InvalidDocumentError, body_of, document_field
from domain.templates import Template, TemplateBody
from domain.values import ScopeRef, TemplateMeta
from services import access
from services.assets import placement
from services.kinds import fold_as
from services.policies import effective_in
from services.ports.event_store import Append, StreamLoader
from services.ports.name_lookups import Lookups, NameHolder
from services.template_names import named_in, scope_named
from services.template_plan_values import (
    Decided,
    Declaration,
    Planned,
    Read,
    ResolvedAsset,
    Role,
    template_read,
)
from services.templates import checked_body, name_claim, name_namespace, uses_of


@contextmanager
def naming(declaration: Declaration) -> Iterator[None]:
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


async def plan_document(
    declaration: Declaration,
    role: Role,
    metadata: EventMetadata,
    streams: StreamLoader,
    lookups: Lookups,
) -> Decided:
    """Its plan, for a caller with `role` in its scope; reads, never writes."""
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
        reads.append(template_read(current, named_scope.label))
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
    return Decided(planned, write, reads)


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
