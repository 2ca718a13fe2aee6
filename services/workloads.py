"""Workload use cases: a submitter of a project submits workloads into it from a template visible
there, recording the whole snapshot; the submitter process does the rest. Names are unique per
project among live workloads. Also: domain/workloads.py, infra/http/workloads.py."""

import hashlib
from uuid import UUID

import msgspec

from domain import data_volumes, org_units, storage_rules, templates, tenant_settings, workloads
from domain.combined import Combined, combine, credential_secret_name, master_of
from domain.commands import ChangeWorkload, RequestWorkload
from domain.events import (
    DataVolumeClaim,
    Event,
    TemplateSpecs,
    WorkloadRequested,
    WorkloadSnapshot,
)
from domain.org_units import OrgUnit
from domain.policy_compliance import check_submission
from domain.submissions import Overrides, snapshot_of
from domain.values import ScopeRef
from domain.workloads import InvalidWorkloadError, Workload
from services import access, credentials, idempotency, node_pools, storage_classes, uses
from services import registries as registry_assets
from services.errors import IdempotencyKeyReusedError
from services.kinds import fold_as
from services.policies import effective_in, streams_of
from services.ports.event_store import Append, EventStore, NameClaim, Stream, StreamLoader, Uses
from services.ports.name_lookups import Lookups
from services.prefetch import actor_stream, prefetch
from services.races import decided_again
from services.stamps import Stamped, Stamps
from services.templates import combined
from services.tenant_settings import current as settings_of


@decided_again
async def request_workload(
    cmd: RequestWorkload, *, streams: EventStore, names: Lookups
) -> Stamped[Workload]:
    looked_up = False  # the keyed stream found empty just now: not read again before the append
    if cmd.keyed:
        stream = await streams.load(cmd.workload_id)
        if (first := _first_answer(cmd, stream)) is not None:
            return first
        # Not empty: requested before requests were digested, its events are compared.
        looked_up = not stream.version

    async def decide(remembered: bool) -> idempotency.Decision:
        return await _decided(cmd, streams, names, remembered)

    _, creation = await idempotency.create_decided(
        streams,
        cmd.workload_id,
        decide,
        request=None,  # digested in its first event, and looked up above
        keyed=cmd.keyed,
        metadata=cmd.metadata,
        same=_same_submission,
        looked_up=looked_up,
    )
    state = workloads.fold(creation.events)
    assert state is not None
    return Stamped(state=state, stamps=creation.stamps)


def _first_answer(cmd: RequestWorkload, stream: Stream) -> Stamped[Workload] | None:
    """The workload an earlier attempt under the key made, when it is this request (else
    IdempotencyKeyReusedError), found before anything is resolved, so a retry answers it after
    its template's deletion too. None: none yet, or one made before digests (events compared)."""
    first = stream.events[0] if stream.events else None
    if not isinstance(first, WorkloadRequested) or first.request_digest is None:
        return None
    if first.request_digest != _request_digest(cmd):
        raise IdempotencyKeyReusedError(cmd.workload_id)
    state = workloads.fold((first,))
    assert state is not None
    assert stream.first is not None
    return Stamped(state=state, stamps=Stamps(created=stream.first, updated=stream.first))


def _request_digest(cmd: RequestWorkload) -> str:
    """What the submission asked, digested: every field of the command but who asked, in one
    order (keys sorted), so the same request digests the same every time."""
    asked = {k: v for k, v in msgspec.structs.asdict(cmd).items() if k != "metadata"}
    if cmd.template_version is None:  # digests made before pinned versions stay the same
        del asked["template_version"]
    return hashlib.sha256(msgspec.json.encode(asked, order="sorted")).hexdigest()


def _same_submission(first: Event, second: Event) -> bool:
    """The same request (services/idempotency.py), whatever its resolution found: the
    template's and the assets' versions and what they held then are the first attempt's."""
    if (
        isinstance(first, WorkloadRequested)
        and isinstance(second, WorkloadRequested)
        and first.request_digest is not None
    ):
        return (first.workload_id, first.request_digest) == (
            second.workload_id,
            second.request_digest,
        )
    return first == second


async def _decided(
    cmd: RequestWorkload, streams: EventStore, names: Lookups, remembered: bool
) -> idempotency.Decision:
    """The submission's events, once the caller may submit them and they may run there,
    decided on streams read `remembered` or from the store now (services/prefetch.py)."""
    project_ref = ScopeRef("project", cmd.project_id)
    loader = await prefetch(
        streams,
        [
            actor_stream(cmd.metadata),
            org_units.stream_of(project_ref),
            cmd.template_id,
            tenant_settings.STREAM,
        ],
        remembered=remembered,
    )
    project = await _project(project_ref, loader)
    await access.require(
        cmd.metadata,
        project.lineage,
        "submitter",
        "submit workloads",
        streams=loader,
        unseen=org_units.UnknownScopeError("project", cmd.project_id, field="/projectId"),
    )
    if project.cluster_id != cmd.cluster_id:  # told only to who may see the project
        raise InvalidWorkloadError(
            "/clusterId", f"project {cmd.project_id} belongs to cluster {project.cluster_id}"
        )
    name = f"{cmd.name}-{cmd.workload_id.hex[:5]}" if cmd.use_given_name_as_prefix else cmd.name
    workloads.check_name(name)
    settings = await settings_of(loader)
    if cmd.template_id is not None and not settings.get(tenant_settings.FLEXIBLE_SUBMISSION):
        raise tenant_settings.FeatureDisabledError(
            tenant_settings.FLEXIBLE_SUBMISSION, "/templateId", "submitting from a template"
        )
    tenant_settings.check_image_source(settings, "/spec", cmd.overrides.spec)
    tenant_settings.check_image_source(settings, "/masterSpec", cmd.overrides.master_spec)
    own_specs = [("/spec", cmd.overrides.spec), ("/masterSpec", cmd.overrides.master_spec)]
    await registry_assets.check_usable(
        registry_assets.named_in(own_specs),
        project.lineage,
        streams=loader,
        refuse=InvalidWorkloadError,
    )
    # The project's policy: its defaults lie beneath the template's and assets' values, and its
    # rules judge what would run.
    policy = await effective_in(
        project.lineage, streams=await loader.add(streams_of(project.lineage))
    )
    if cmd.template_id is None:
        if cmd.template_version is not None:
            raise InvalidWorkloadError("/templateVersion", "a version of the templateId given")
        if cmd.overrides.spec is None:
            raise InvalidWorkloadError("/spec", "give a templateId, or the whole spec")
        # No template: the submission's own spec, with the defaults filled in.
        body = templates.TemplateBody(spec=cmd.overrides.spec)
        base = combine(
            body,
            {},
            worker_defaults=policy.worker_defaults,
            master_defaults=policy.master_defaults,
        )
        snapshot = snapshot_of(base, True, cmd.overrides)
    else:
        template = await _template(cmd.template_id, project, loader, cmd.template_version)
        base = await combined(template, streams=loader, policy=policy)
        snapshot = snapshot_of(
            base,
            template.body.master_spec_same_as_worker,
            cmd.overrides,
            template_id=template.id,
            template_version=template.version,
            asset_versions=template.asset_versions,
        )
        snapshot = msgspec.structs.replace(
            snapshot,
            template_specs=_template_specs(
                base, template.body.master_spec_same_as_worker, snapshot
            ),
        )
    check_submission(policy, snapshot.spec, snapshot.master)
    tenant_settings.check_framework(
        settings,
        "/spec/distributedFramework" if cmd.template_id is None else "/templateId",
        snapshot.spec.distributed_framework,
        project.cluster_id,
    )
    # What would run, whether the template, the submission or the policy's defaults set it.
    tenant_settings.check_workers(settings, "/spec", snapshot.spec)
    await _check_node_pools(cmd, snapshot, project.cluster_id, names)
    snapshot = await _check_storage(cmd, snapshot, project.cluster_id, loader, names)
    pull = await credentials.pulled_with(project.lineage, holders=names.holders, streams=loader)
    snapshot = msgspec.structs.replace(
        snapshot,
        image_pull_secrets=tuple(credential_secret_name(i) for i in pull),
        data_volume_claims=await _data_volume_claims(snapshot, project, loader),
    )
    requested = WorkloadRequested(
        workload_id=cmd.workload_id,
        name=name,
        requested_name=cmd.name,
        cluster_id=project.cluster_id,
        department_id=project.department_id,
        project_id=project.id,
        project_name=project.name,
        namespace=_namespace(project),
        job_name=workloads.job_name(name, cmd.workload_id),
        snapshot=snapshot,
        request_digest=_request_digest(cmd),
    )
    # It holds its project until it is deleted, finished or not: it is listed there; and the
    # data volumes it mounts, whose PVCs its pods may be using.
    held = uses.of_scope(project_ref, "/projectId") + tuple(
        (c.data_volume_id, "/templateId") for c in snapshot.data_volume_claims
    )
    return idempotency.Decision(
        events=workloads.request(None, requested),
        name=name_claim(project.id, name),
        uses=Uses(user=f"workload {name}", used=held),
        checked=loader.checked,
    )


async def _check_node_pools(
    cmd: RequestWorkload, snapshot: WorkloadSnapshot, cluster_id: UUID, names: Lookups
) -> None:
    """What would run names only pools of the project's cluster (one that has any): a pool the
    submission names is refused at its field, one of the template's at `/templateId`."""
    own = {"/spec": cmd.overrides.spec, "/masterSpec": cmd.overrides.master_spec}

    def refuse(field: str, reason: str) -> InvalidWorkloadError:
        at = field.rsplit("/nodePools/", 1)[0]
        given = own.get(at)
        named = given is not None and given.node_pools is not None
        return InvalidWorkloadError(field if named else "/templateId", reason)

    master = None if snapshot.master_spec_same_as_worker else snapshot.master
    specs = [("/spec", snapshot.spec), ("/masterSpec", master)]
    await node_pools.check_named(specs, cluster_id, names=names, refuse=refuse)


async def _check_storage(
    cmd: RequestWorkload,
    snapshot: WorkloadSnapshot,
    cluster_id: UUID,
    streams: StreamLoader,
    names: Lookups,
) -> WorkloadSnapshot:
    """What would run makes new PVCs only as their storage classes allow, with their defaults:
    refused at the submission's own field when it gives volumes, else at `/templateId`."""
    same = snapshot.master_spec_same_as_worker
    specs = [("/spec", snapshot.spec), ("/masterSpec", None if same else snapshot.master)]
    classes = storage_rules.named_in(specs)
    if not classes:
        return snapshot
    facts = await storage_classes.facts_for(cluster_id, classes, streams=streams, names=names)
    own = {"/spec": cmd.overrides.spec, "/masterSpec": cmd.overrides.master_spec}

    def refuse(field: str, reason: str) -> InvalidWorkloadError:
        given = own.get(field.split("/storage/", 1)[0])
        gives = given is not None and given.storage is not None and bool(given.storage.pvc)
        return InvalidWorkloadError(field if gives else "/templateId", reason)

    spec, issues = storage_rules.spec_checked(snapshot.spec, "/spec", facts)
    storage_classes.refused(issues, refuse)
    assert spec is not None
    master = master_of(spec) if same and snapshot.master is not None else snapshot.master
    if not same:
        master, issues = storage_rules.spec_checked(master, "/masterSpec", facts)
        storage_classes.refused(issues, refuse)
    return msgspec.structs.replace(snapshot, spec=spec, master=master)


@decided_again
async def change_workload(cmd: ChangeWorkload, *, streams: EventStore) -> Workload:
    """Suspend, resume or delete; asking for what already holds writes nothing."""
    stream = await streams.load(cmd.workload_id)
    current = workloads.live(load_workload(stream.events), cmd.workload_id)
    lineage = org_units.lineage(
        "project",
        current.request.project_id,
        current.request.cluster_id,
        current.request.department_id,
    )
    await access.require(
        cmd.metadata,
        lineage,
        "submitter",
        f"{cmd.action} workloads",
        streams=streams,
        unseen=workloads.WorkloadNotFoundError(cmd.workload_id),
    )
    decide = {
        "suspend": workloads.suspend,
        "resume": workloads.resume,
        "delete": workloads.delete,
    }[cmd.action]
    events = decide(current, cmd.workload_id)
    if events:
        claim = (
            None
            if cmd.action == "delete"
            else name_claim(current.request.project_id, current.request.name)
        )
        await streams.append(
            Append(
                cmd.workload_id,
                events,
                expected_version=stream.version,
                metadata=cmd.metadata,
                name=claim,
                uses=Uses(user=f"workload {current.request.name}") if claim is None else None,
            )
        )
    state = workloads.fold((*stream.events, *events))
    assert state is not None
    return state


def load_workload(events: tuple[Event, ...]) -> Workload | None:
    """A stream's workload; a stream of another kind holds none."""
    return fold_as(workloads.fold, events)


def name_claim(project_id: str, name: str) -> NameClaim:
    return NameClaim(namespace=f"workload@project:{project_id}", name=name, field="/name")


async def _project(ref: ScopeRef, streams: StreamLoader) -> OrgUnit:
    try:
        stream_id = org_units.stream_of(ref)
    except ValueError:
        raise org_units.UnknownScopeError("project", ref.id, field="/projectId") from None
    return org_units.parent(
        fold_as(org_units.fold, (await streams.load(stream_id)).events),
        "project",
        ref.id,
        field="/projectId",
    )


async def _template(
    template_id: UUID, project: OrgUnit, streams: StreamLoader, version: int | None
) -> templates.Template:
    """The live template, as it stands or at `version` (its stream's own history, so a pinned
    submission runs exactly what that version was, linked assets' versions included)."""
    events = (await streams.load(template_id)).events
    template = fold_as(templates.fold, events)
    if template is None or template.deleted or template.meta.scope_ref not in project.lineage:
        raise InvalidWorkloadError(
            "/templateId", "no such template in the project's scope or above"
        )
    if version is None or version == template.version:
        return template
    if not 1 <= version <= template.version:
        raise InvalidWorkloadError(
            "/templateVersion", f"template {template_id} has versions 1 to {template.version}"
        )
    pinned = templates.fold(events[:version])
    assert pinned is not None
    return pinned


def _template_specs(
    base: Combined, same_as_worker: bool, snapshot: WorkloadSnapshot
) -> TemplateSpecs | None:
    """The template version resolved without the submission's overrides, kept when they differ
    from the workload's own (when they are the same, the snapshot's specs say it already). A
    template that can run only with the overrides has nothing of its own to share: none."""
    try:
        alone = snapshot_of(base, same_as_worker, Overrides())
    except InvalidWorkloadError:
        return None
    specs = TemplateSpecs(
        spec=alone.spec,
        master_spec_same_as_worker=alone.master_spec_same_as_worker,
        master=alone.master,
    )
    own = TemplateSpecs(
        spec=snapshot.spec,
        master_spec_same_as_worker=snapshot.master_spec_same_as_worker,
        master=snapshot.master,
    )
    return None if specs == own else specs


def _namespace(project: OrgUnit) -> str:
    return project.requested_namespace or f"runai-{project.name}"


async def _data_volume_claims(
    snapshot: WorkloadSnapshot, project: OrgUnit, streams: StreamLoader
) -> tuple[DataVolumeClaim, ...]:
    """Where each data volume the workload mounts is (its origin PVC and that PVC's
    namespace), from the write side's streams; each must still be usable in the project."""
    mounted = sorted(
        {
            volume.id
            for spec in (snapshot.spec, snapshot.master)
            if spec is not None and spec.storage is not None
            for volume in spec.storage.data_volume or ()
            if volume.id is not None and not volume.exclude
        }
    )
    claims = []
    for volume_id in mounted:
        found = fold_as(data_volumes.fold, (await streams.load(volume_id)).events)
        if found is None or not data_volumes.usable_in(found, project.lineage):
            raise InvalidWorkloadError(
                "/templateId", f"the data volume {volume_id} is not usable in the project"
            )
        origin = await _project(ScopeRef("project", str(found.meta.project_id)), streams)
        claims.append(
            DataVolumeClaim(
                data_volume_id=volume_id,
                namespace=_namespace(origin),
                claim_name=found.spec.origin_pvc_name,
            )
        )
    return tuple(claims)
