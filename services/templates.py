"""Distributed-template use cases: editors of a scope manage its templates (names unique per
scope). Its assets must exist, be visible from its scope and fit; their versions are recorded, the
combined spec rebuilt from those. Also: domain/templates.py, infra/http/templates.py."""

from collections.abc import Callable, Iterable, Sequence
from uuid import UUID

import msgspec

from domain import assets, name_rules, policies, storage_rules, templates, tenant_settings
from domain.assets import Asset, AssetSpec
from domain.combined import Combined, FieldChange, changes, combine
from domain.commands import CreateTemplate, DeleteTemplate, PatchTemplate, UpdateTemplate
from domain.events import AssetVersion, Event, EventMetadata, TemplateCreated
from domain.policies import Effective
from domain.specs import EnvironmentSpec, PvcSpec
from domain.template_rules import InvalidTemplateError
from domain.template_specs import ReplicaSpec, TemplateAssets
from domain.templates import Template, TemplateBody
from domain.tenant_settings import FeatureDisabledError, TenantSettings
from domain.values import ScopeRef, TemplateMeta
from services import (
    access,
    data_volumes,
    idempotency,
    node_pools,
    registries,
    stamps,
    storage_classes,
    template_patch,
    uses,
)
from services.assets import placement
from services.errors import PreconditionFailedError
from services.kinds import fold_as
from services.ports.event_store import (
    Append,
    EventStore,
    NameClaim,
    StreamLoader,
    StreamReader,
    Uses,
)
from services.ports.name_lookups import Lookups, NameHolder
from services.prefetch import actor_stream, prefetch, scope_stream
from services.races import decided_again
from services.stamps import Stamps
from services.tenant_settings import current as settings_of

DATA_SOURCE_KINDS = ("nfs", "pvc", "s3", "git", "hostPath", "config-map", "secret-volume")


class TemplateView(msgspec.Struct, frozen=True):
    """A template with its combined specs, and when and by whom it was created and updated."""

    template: Template
    combined: Combined
    stamps: Stamps


class _Decided(idempotency.Decision, frozen=True, kw_only=True):
    """A creation as checked, with the assets it was checked against."""

    found: dict[UUID, Asset]


@decided_again
async def create_template(
    cmd: CreateTemplate, *, streams: EventStore, names: Lookups
) -> TemplateView:
    """Create the template; return it with its combined specs (built from the assets just
    checked, so they are not read twice). `names`: the write side's, for its node pools."""

    async def decide(remembered: bool) -> _Decided:
        # The caller's roles and every asset the body names, read in one round trip, or none.
        loader = await prefetch(
            streams,
            [
                actor_stream(cmd.metadata),
                scope_stream(cmd.scope),
                tenant_settings.STREAM,
                *referenced(cmd.body),
            ],
            remembered=remembered,
        )
        meta, body, versions, found = await _checked_creation(cmd, loader, names)
        return _Decided(
            events=templates.create(None, cmd.template_id, meta, body, versions),
            name=name_claim(meta),
            uses=uses_of(cmd.name, cmd.scope, body),
            checked=loader.checked,
            found=found,
        )

    decision, creation = await idempotency.create_decided(
        streams,
        cmd.template_id,
        decide,
        request=cmd,
        keyed=cmd.keyed,
        metadata=cmd.metadata,
        same=_same_template,
    )
    created = _after((), creation.events)
    if decision is None or not creation.now:  # the first attempt's, combined as it recorded
        return TemplateView(created, await combined(created, streams=streams), creation.stamps)
    return TemplateView(created, combine(created.body, decision.found), creation.stamps)


async def _checked_creation(
    cmd: CreateTemplate, streams: StreamLoader, names: Lookups
) -> tuple[TemplateMeta, TemplateBody, tuple[AssetVersion, ...], dict[UUID, Asset]]:
    """What a creation may be made of, once the caller may make it there: its meta, its body
    as checked, and the versions of the assets it links and the assets themselves."""
    field = "/meta/scopeType" if cmd.scope.kind == "tenant" else "/meta/scopeId"
    lineage = await access.require_in(
        cmd.metadata, cmd.scope, "editor", "create templates", streams=streams, field=field
    )
    cluster_id, department_id, project_id = placement(lineage, None)
    meta = TemplateMeta(
        name=cmd.name,
        description=cmd.description,
        scope=cmd.scope.kind,
        cluster_id=cluster_id,
        department_id=department_id,
        project_id=project_id,
    )
    body, versions, found = await checked_body(
        cmd.body, lineage, cluster_id, streams=streams, names=names
    )
    return meta, body, versions, found


async def checked_body(
    body: TemplateBody,
    lineage: tuple[ScopeRef, ...],
    cluster_id: UUID | None,
    *,
    streams: StreamLoader,
    names: Lookups,
) -> tuple[TemplateBody, tuple[AssetVersion, ...], dict[UUID, Asset]]:
    """What a body may hold in its scope (the tenant's settings, its assets, registries, data
    volumes, its cluster's node pools and storage classes): the body with its classes' defaults,
    the versions of the assets it refers to, and the assets themselves."""
    _allowed(await settings_of(streams), body, cluster_id)
    versions, found = await _linked(body, lineage, streams)
    await _check_registries(body, lineage, streams)
    await _check_data_volumes(body, lineage, streams)
    await node_pools.check_named(
        _replica_specs(body), cluster_id, names=names, refuse=InvalidTemplateError
    )
    body = await _check_storage(body, cluster_id, found, streams, names)
    return body, versions, found


def _same_template(first: Event, second: Event) -> bool:
    """The same request, whichever versions of its assets each attempt found."""

    def request(event: Event) -> Event:
        if isinstance(event, TemplateCreated):
            return msgspec.structs.replace(event, asset_versions=())
        return event

    return request(first) == request(second)


@decided_again
async def update_template(
    cmd: UpdateTemplate, *, streams: EventStore, names: Lookups
) -> TemplateView:
    """Replace the template's name, description and body; return it as it now is, combined
    from the asset versions just checked."""
    return await _edit(
        cmd.template_id,
        lambda _: (cmd.name, cmd.description, cmd.body),
        expected_version=cmd.expected_version,
        metadata=cmd.metadata,
        streams=streams,
        names=names,
    )


@decided_again
async def patch_template(
    cmd: PatchTemplate, *, streams: EventStore, names: Lookups
) -> TemplateView:
    """Apply a PATCH to the template as it stands (read once); return it as it now is."""
    return await _edit(
        cmd.template_id,
        lambda current: template_patch.apply(current, cmd.patch),
        expected_version=cmd.expected_version,
        metadata=cmd.metadata,
        streams=streams,
        names=names,
    )


async def _edit(
    template_id: UUID,
    edit: Callable[[Template], tuple[str, str | None, TemplateBody]],
    *,
    expected_version: int | None,
    metadata: EventMetadata,
    streams: EventStore,
    names: Lookups,
) -> TemplateView:
    """Whatever `edit` makes of the template's name, description and body, once the caller
    may edit it."""
    stream = await streams.load(template_id)
    current = templates.live(templates.fold(stream.events), template_id)
    await access.require(
        metadata,
        current.meta.lineage,
        "editor",
        "update templates",
        streams=streams,
        unseen=templates.TemplateNotFoundError(template_id),
    )
    if expected_version is not None and expected_version != stream.version:
        raise PreconditionFailedError(expected_version, stream.version)
    name, description, body = edit(current)
    body, versions, found = await checked_body(
        body, current.meta.lineage, current.meta.cluster_id, streams=streams, names=names
    )
    events = templates.update(
        current,
        template_id,
        name=name,
        description=description,
        body=body,
        asset_versions=versions,
    )
    if not events:  # nothing changed, the asset versions included
        return TemplateView(current, combine(current.body, found), stamps.loaded(stream))
    updated = _after(stream.events, events)
    result = await streams.append(
        Append(
            template_id,
            events,
            expected_version=stream.version,
            metadata=metadata,
            name=name_claim(updated.meta),
            uses=uses_of(updated.meta.name, updated.meta.scope_ref, body),
        )
    )
    return TemplateView(
        updated, combine(updated.body, found), stamps.appended(stream, result, metadata)
    )


@decided_again
async def delete_template(cmd: DeleteTemplate, *, streams: EventStore) -> None:
    stream = await streams.load(cmd.template_id)
    current = templates.live(templates.fold(stream.events), cmd.template_id)
    await access.require(
        cmd.metadata,
        current.meta.lineage,
        "editor",
        "delete templates",
        streams=streams,
        unseen=templates.TemplateNotFoundError(cmd.template_id),
    )
    if cmd.expected_version is not None and cmd.expected_version != stream.version:
        raise PreconditionFailedError(cmd.expected_version, stream.version)
    events = templates.delete(current, cmd.template_id)
    await streams.append(
        Append(
            cmd.template_id,
            events,
            expected_version=stream.version,
            metadata=cmd.metadata,
            name=None,
            uses=Uses(user=f"template {current.meta.name}"),
        )
    )


async def visible_template(
    template_id: UUID, actor: EventMetadata, *, streams: StreamReader
) -> TemplateView:
    """The template as its stream has it now, combined from the asset versions it records,
    when the actor may see it (else TemplateNotFoundError): what an edit is made on, never the
    catalogue's copy, which may trail the write."""
    missing = templates.TemplateNotFoundError(template_id)
    stream = await access.visible_now(
        template_id, actor, streams=streams, scope_in=live_scope, missing=missing
    )
    current = templates.live(templates.fold(stream.events), template_id)
    return TemplateView(current, await combined(current, streams=streams), stamps.loaded(stream))


def live_scope(events: Iterable[Event]) -> ScopeRef | None:
    """The scope of the live template these are the events of (None: none, or deleted)."""
    found = fold_as(templates.fold, events)
    return None if found is None or found.deleted else found.meta.scope_ref


async def combined(
    template: Template, *, streams: StreamLoader, policy: Effective = policies.NOTHING
) -> Combined:
    """The combined specs, from the asset versions the template records, over the defaults of
    `policy` (a project's, for a workload of it)."""
    return combine(
        template.body,
        await _recorded_assets(template, streams),
        worker_defaults=policy.worker_defaults,
        master_defaults=policy.master_defaults,
    )


async def _recorded_assets(template: Template, streams: StreamLoader) -> dict[UUID, Asset]:
    """The assets the template refers to, each as of the version it records (gone: absent)."""
    found: dict[UUID, Asset] = {}
    for recorded in template.asset_versions:
        history = (await streams.load(recorded.asset_id)).events[: recorded.version]
        asset = fold_as(assets.fold, history)
        if asset is not None and not asset.deleted:
            found[recorded.asset_id] = asset
    return found


class Impact(msgspec.Struct, frozen=True):
    template_id: UUID
    name: str
    changes: list[FieldChange]


async def preview_asset_update(
    asset_id: UUID,
    spec: AssetSpec,
    dependents: list[Template],
    *,
    streams: StreamLoader,
) -> list[Impact]:
    """How each template linking the asset would change if its spec became `spec`: the fields
    of the combined specs (and runnable) that would differ. Writes nothing."""
    latest = assets.fold((await streams.load(asset_id)).events)
    if latest is None or latest.deleted:
        return []
    proposed_asset = msgspec.structs.replace(latest, spec=spec)
    impacts = []
    for template in dependents:
        if asset_id not in templates.linked_ids(template.body):
            continue
        found = await _recorded_assets(template, streams)
        current = combine(template.body, found)
        proposed = combine(template.body, {**found, asset_id: proposed_asset})
        impacts.append(Impact(template.id, template.meta.name, changes(current, proposed)))
    return impacts


def _allowed(settings: TenantSettings, body: TemplateBody, cluster_id: UUID | None) -> None:
    """What the tenant settings allow: templates at all (flexible submission and templates),
    data volumes, the NGC catalog, GPU limits, the framework (tenant-wide and on the
    template's cluster), the number of workers."""
    if not settings.get(tenant_settings.FLEXIBLE_SUBMISSION):
        raise FeatureDisabledError(
            tenant_settings.FLEXIBLE_SUBMISSION,
            "/meta",
            "flexible workload submission, which templates apply to,",
        )
    if not settings.get(tenant_settings.FLEXIBLE_TEMPLATES):
        raise FeatureDisabledError(
            tenant_settings.FLEXIBLE_TEMPLATES, "/meta", "changing flexible workload templates"
        )
    tenant_settings.check_replica(settings, "/spec", body.spec)
    if body.master is not None:
        tenant_settings.check_replica(settings, "/master/spec", body.master.spec)
    framework = body.spec.distributed_framework
    tenant_settings.check_framework(settings, "/spec/distributedFramework", framework, cluster_id)
    tenant_settings.check_workers(settings, "/spec", body.spec)


def name_claim(meta: TemplateMeta) -> NameClaim:
    return NameClaim(namespace=name_namespace(meta.scope_ref), name=meta.name, field="/meta/name")


def name_namespace(scope: ScopeRef) -> str:
    """Where a template's name must be unique: its scope."""
    return f"template@{scope.kind}:{scope.id}"


async def check_name_available(
    scope: ScopeRef,
    name: str,
    actor: EventMetadata,
    *,
    streams: StreamLoader,
    holder: NameHolder,
    fields: tuple[str, str],
) -> None:
    """As a create would decide it, from the write side: UnknownScopeError (naming `fields[0]`)
    for a scope out of sight, whose names are not the actor's to know; NameTakenError or
    InvalidTemplateError (naming `fields[1]`) when a template there holds, or could not hold, it."""
    name_rules.check(name, fields[1], refused=InvalidTemplateError)
    await access.require_name_free(
        scope, name_namespace(scope), name, actor, streams=streams, holder=holder, fields=fields
    )


def uses_of(name: str, scope: ScopeRef, body: TemplateBody) -> Uses:
    """The org unit the template lives in, the assets it links or loads and the registries it
    picks images from, each with the field that names it."""
    found = dict(uses.of_scope(scope, "/meta/scopeId"))
    for field, registry_id in registries.named_in(_replica_specs(body)):
        found.setdefault(registry_id, field)
    for at, links in (("/assets", body.assets), ("/master/assets", _master_links(body))):
        if links is None:
            continue
        for field, asset_id in (("environment", links.environment), ("compute", links.compute)):
            if asset_id is not None:
                found.setdefault(asset_id, f"{at}/{field}")
        for i, link in enumerate(links.datasources or ()):
            found.setdefault(link.id, f"{at}/datasources/{i}/id")
    return Uses(user=f"template {name}", used=tuple(found.items()))


def _master_links(body: TemplateBody) -> TemplateAssets | None:
    return body.master.assets if body.master else None


def _replica_specs(body: TemplateBody) -> list[tuple[str, ReplicaSpec | None]]:
    return [("/spec", body.spec), ("/master/spec", body.master.spec if body.master else None)]


async def _check_registries(
    body: TemplateBody, lineage: tuple[ScopeRef, ...], streams: StreamLoader
) -> None:
    """An image picked from a private registry needs a registry the template's scope can use."""
    named = registries.named_in(_replica_specs(body))
    await registries.check_usable(named, lineage, streams=streams, refuse=InvalidTemplateError)


async def _check_data_volumes(
    body: TemplateBody, lineage: tuple[ScopeRef, ...], streams: StreamLoader
) -> None:
    """A data volume mounted through the assets block must be usable in the template's scope."""
    sections = [("/assets", body.assets), ("/master/assets", _master_links(body))]
    mounted = data_volumes.mounted_in(sections)
    await data_volumes.check_usable(mounted, lineage, streams=streams, refuse=InvalidTemplateError)


async def _check_storage(
    body: TemplateBody,
    cluster_id: UUID | None,
    found: dict[UUID, Asset],
    streams: StreamLoader,
    names: Lookups,
) -> TemplateBody:
    """Its new volumes, and those of the PVC data sources it loads, held to their storage
    classes (domain/storage_rules.py); its own given their classes' defaults."""
    loaded = [
        (f"{at}/datasources/{i}/id", spec)
        for at, links in (("/assets", body.assets), ("/master/assets", _master_links(body)))
        for i, link in enumerate((links.datasources or ()) if links else ())
        if (asset := found.get(link.id)) is not None and isinstance(spec := asset.spec, PvcSpec)
    ]
    classes = storage_rules.named_in(_replica_specs(body)) | {
        name for _, spec in loaded if (name := storage_rules.class_of(spec)) is not None
    }
    if not classes:
        return body
    facts = await storage_classes.facts_for(cluster_id, classes, streams=streams, names=names)
    for field, spec in loaded:
        _, issues = storage_rules.volume_checked(spec, "", facts, "workload")
        storage_classes.refused([(field, reason) for _, reason in issues], InvalidTemplateError)
    worker, issues = storage_rules.spec_checked(body.spec, "/spec", facts)
    storage_classes.refused(issues, InvalidTemplateError)
    assert worker is not None
    master = body.master
    if master is not None:
        master_spec, issues = storage_rules.spec_checked(master.spec, "/master/spec", facts)
        storage_classes.refused(issues, InvalidTemplateError)
        master = msgspec.structs.replace(master, spec=master_spec)
    return msgspec.structs.replace(body, spec=worker, master=master)


def referenced(body: TemplateBody) -> list[UUID]:
    """Every asset id the body names (registries included)."""
    found: list[UUID] = [
        registry_id for _, registry_id in registries.named_in(_replica_specs(body))
    ]
    for links in (body.assets, body.master.assets if body.master else None):
        if links is not None:
            found.extend(i for i in (links.environment, links.compute) if i is not None)
            found.extend(link.id for link in links.datasources or ())
    return found


async def _linked(
    body: TemplateBody, lineage: tuple[ScopeRef, ...], streams: StreamLoader
) -> tuple[tuple[AssetVersion, ...], dict[UUID, Asset]]:
    """Check every asset the body refers to; return the versions it is built from, and the
    assets themselves."""
    framework = body.spec.distributed_framework
    found: dict[UUID, Asset] = {}
    sections = [("/assets", body.assets)]
    if body.master is not None:
        sections.append(("/master/assets", body.master.assets))
    for at, links in sections:
        found.update(await _section_assets(at, links, lineage, framework, streams))
    versions = tuple(AssetVersion(asset_id=i, version=a.version) for i, a in found.items())
    return versions, found


async def _section_assets(
    at: str,
    links: TemplateAssets | None,
    lineage: tuple[ScopeRef, ...],
    framework: str | None,
    streams: StreamLoader,
) -> dict[UUID, Asset]:
    if links is None:
        return {}
    wanted: list[tuple[str, UUID, tuple[str, ...]]] = []
    if links.environment is not None:
        wanted.append((f"{at}/environment", links.environment, ("environment",)))
    if links.compute is not None:
        wanted.append((f"{at}/compute", links.compute, ("compute",)))
    for i, link in enumerate(links.datasources or ()):
        if link.kind == data_volumes.KIND:  # not an asset: checked by _check_data_volumes
            if link.overrides is None or link.overrides.container_path is None:
                raise InvalidTemplateError(
                    f"{at}/datasources/{i}/overrides/containerPath",
                    "a data volume is mounted where this says",
                )
            continue
        if link.kind not in DATA_SOURCE_KINDS:
            raise InvalidTemplateError(
                f"{at}/datasources/{i}/kind", "only data sources are loaded here"
            )
        wanted.append((f"{at}/datasources/{i}/id", link.id, (link.kind,)))
    found = {}
    for field, asset_id, kinds in wanted:
        asset = await _visible_asset(field, asset_id, kinds, lineage, streams)
        if isinstance(asset.spec, EnvironmentSpec):
            _check_fit(field, asset, framework)
        found[asset_id] = asset
    return found


async def _visible_asset(
    field: str,
    asset_id: UUID,
    kinds: tuple[str, ...],
    lineage: tuple[ScopeRef, ...],
    streams: StreamLoader,
) -> Asset:
    asset = fold_as(assets.fold, (await streams.load(asset_id)).events)
    if asset is None or asset.deleted or asset.meta.scope_ref not in lineage:
        raise InvalidTemplateError(field, "no such asset in the template's scope or above")
    if asset.kind not in kinds:
        raise InvalidTemplateError(field, f"a {asset.kind} cannot be used here")
    return asset


def _check_fit(field: str, environment: Asset, framework: str | None) -> None:
    """An environment made for other workloads does not fit a distributed template."""
    types = environment.meta.workload_supported_types
    if types is None:
        return
    if types.distributed is False or (
        types.distributed is None and (types.training or types.workspace or types.inference)
    ):
        raise InvalidTemplateError(field, "the environment does not support distributed training")
    if types.dist_framework is not None and types.dist_framework != framework:
        raise InvalidTemplateError(
            field, f"the environment is for {types.dist_framework}, not {framework}"
        )


def _after(history: Sequence[Event], events: Sequence[Event]) -> Template:
    state = templates.fold((*history, *events))
    assert state is not None
    return state
