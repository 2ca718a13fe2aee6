"""Read model of Run:ai's audit log (served by infra/http/audit_log.py): an entry for each event,
saying who did what to which thing in which cluster, through which request; it remembers each
thing's name and cluster (`audit_log_names`) for the entries whose event names neither."""

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Final, Literal
from uuid import UUID

import msgspec

from domain.events import (
    ApplicationCreated,
    ApplicationDeleted,
    ApplicationEnablementChanged,
    ApplicationRoleGranted,
    ApplicationRoleRevoked,
    ApplicationSecretRotated,
    ClusterCreated,
    ClusterDeleted,
    ClusterRenamed,
    ComputeCreated,
    ComputeDeleted,
    ComputeUpdated,
    CredentialCreated,
    CredentialDeleted,
    CredentialUpdated,
    DataSourceCreated,
    DataSourceDeleted,
    DataSourceUpdated,
    DataVolumeCreated,
    DataVolumeDeleted,
    DataVolumeShared,
    DataVolumeUnshared,
    DataVolumeUpdated,
    DepartmentCreated,
    DepartmentDeleted,
    DepartmentUpdated,
    EnvironmentCreated,
    EnvironmentDeleted,
    EnvironmentUpdated,
    Event,
    PolicyApplied,
    PolicyDeleted,
    ProjectCreated,
    ProjectDeleted,
    ProjectUpdated,
    RecordedEvent,
    RegistryCreated,
    RegistryDeleted,
    RegistryUpdated,
    TemplateCreated,
    TemplateDeleted,
    TemplateLinkedAssetUpdated,
    TemplateUpdated,
    TenantLimitChanged,
    TenantSettingChanged,
    UserRoleGranted,
    UserRoleRevoked,
    WorkloadDeleted,
    WorkloadFailed,
    WorkloadPodsChanged,
    WorkloadPodsObserved,
    WorkloadRequested,
    WorkloadResumed,
    WorkloadRunning,
    WorkloadStopped,
    WorkloadSubmitted,
    WorkloadSucceeded,
    WorkloadSuspended,
    event_tag,
)
from projections.executor import Executor

NAME: Final = "audit_log"
TABLES: Final = ("audit_log", "audit_log_names")

Action = Literal["create", "update", "delete"]
_CREATING: Final = frozenset({"created", "requested", "role_granted"})
_DELETING: Final = frozenset({"deleted", "role_revoked"})
# Run:ai's subject types are a user's and an application's; the service acts as one of its own.
SUBJECT_TYPES: Final = {"user": "User", "application": "App", "system": "App"}


class Described(msgspec.Struct, frozen=True, kw_only=True):
    """What an event did to which thing; `name` and `cluster_id` where the event states them,
    `client_id` where it names an application's (its subject in later entries)."""

    action: Action
    entity_type: str
    entity_id: str
    name: str | None = None
    cluster_id: UUID | None = None
    client_id: str | None = None


def action_of(event: Event, version: int) -> Action:
    """Run:ai's action, from the fact's name; a policy's first application creates it."""
    if isinstance(event, PolicyApplied):
        return "create" if version == 1 else "update"
    fact = event_tag(type(event)).split(".")[1]
    return "create" if fact in _CREATING else "delete" if fact in _DELETING else "update"


def described(recorded: RecordedEvent) -> Described:
    """The entry's action and entity (an event of a kind not named here: its stream's)."""
    event, kind = recorded.event, recorded.stream_type
    action = action_of(event, recorded.version)

    def of(
        kind: str,
        entity_id: object,
        *,
        name: str | None = None,
        cluster_id: UUID | None = None,
        client_id: str | None = None,
    ) -> Described:
        return Described(
            action=action,
            entity_type=kind,
            entity_id=str(entity_id),
            name=name,
            cluster_id=cluster_id,
            client_id=client_id,
        )

    match event:
        # The commonest first: a match tries its cases in order (no case's class is another's).
        case TemplateCreated():
            return of(
                "template", event.template_id, name=event.meta.name,
                cluster_id=event.meta.cluster_id,
            )  # fmt: skip
        case TemplateUpdated():
            return of("template", event.template_id, name=event.name)
        case TemplateDeleted() | TemplateLinkedAssetUpdated():
            return of("template", event.template_id)
        case WorkloadRequested():
            return of("workload", event.workload_id, name=event.name, cluster_id=event.cluster_id)
        case (
            WorkloadSubmitted() | WorkloadRunning() | WorkloadSucceeded() | WorkloadFailed()
            | WorkloadSuspended() | WorkloadResumed() | WorkloadStopped() | WorkloadPodsObserved()
            | WorkloadPodsChanged() | WorkloadDeleted()
        ):  # fmt: skip
            return of("workload", event.workload_id)
        case ApplicationCreated():
            return of(
                "application", event.application_id, name=event.name, client_id=event.client_id
            )
        case ApplicationDeleted() | ApplicationSecretRotated() | ApplicationEnablementChanged():
            return of("application", event.application_id)
        case ApplicationRoleGranted() | UserRoleGranted():
            return of("access-rule", event.rule.rule_id)
        case ApplicationRoleRevoked() | UserRoleRevoked():
            return of("access-rule", event.rule_id)
        case ClusterCreated() | ClusterRenamed():
            return of("cluster", event.cluster_id, name=event.name, cluster_id=event.cluster_id)
        case ClusterDeleted():
            return of("cluster", event.cluster_id, cluster_id=event.cluster_id)
        case DepartmentCreated():
            return of(
                "department", event.department_id, name=event.name, cluster_id=event.cluster_id
            )
        case DepartmentUpdated() | DepartmentDeleted():
            return of("department", event.department_id)
        case ProjectCreated():
            return of("project", event.project_id, name=event.name, cluster_id=event.cluster_id)
        case ProjectUpdated() | ProjectDeleted():
            return of("project", event.project_id)
        case (
            EnvironmentCreated() | ComputeCreated() | DataSourceCreated() | CredentialCreated()
            | RegistryCreated()
        ):  # fmt: skip
            return of(kind, event.asset_id, name=event.meta.name, cluster_id=event.meta.cluster_id)
        case (
            EnvironmentUpdated() | ComputeUpdated() | DataSourceUpdated() | CredentialUpdated()
            | RegistryUpdated()
        ):  # fmt: skip
            return of(kind, event.asset_id, name=event.name)
        case (
            EnvironmentDeleted() | ComputeDeleted() | DataSourceDeleted() | CredentialDeleted()
            | RegistryDeleted()
        ):  # fmt: skip
            return of(kind, event.asset_id)
        case DataVolumeCreated():
            return of(
                "datavolume", event.datavolume_id, name=event.meta.name,
                cluster_id=event.meta.cluster_id,
            )  # fmt: skip
        case DataVolumeUpdated() | DataVolumeShared() | DataVolumeUnshared() | DataVolumeDeleted():
            return of("datavolume", event.datavolume_id)
        case TenantSettingChanged() | TenantLimitChanged():
            return of("setting", event.key, name=event.key)
        case PolicyApplied():
            return of("policy", event.policy_id, name=event.name, cluster_id=event.cluster_id)
        case PolicyDeleted():
            return of("policy", event.policy_id)
        case _:
            return of(kind, recorded.stream_id)


# A name as `audit_log_names` holds it: the thing's name, and its cluster where one is known.
Named = tuple[str, UUID | None]
Key = tuple[str, str]  # (kind, id)

# The names of the keys given, each with its cluster's name row (clusters it was learned from).
# Looked up key by key (LIMIT 1: a lateral join the planner keeps), not by a hash join that reads
# the whole table per batch.
_NAMES: Final = """
SELECT n.kind, n.id, n.name, n.cluster_id, c.id AS c_id, c.name AS c_name,
       c.cluster_id AS c_cluster_id
  FROM unnest($1::text[], $2::text[]) AS k(kind, id)
 CROSS JOIN LATERAL (SELECT * FROM audit_log_names n
                      WHERE n.kind = k.kind AND n.id = k.id LIMIT 1) AS n
  LEFT JOIN LATERAL (SELECT * FROM audit_log_names c
                      WHERE c.kind = 'cluster' AND c.id = n.cluster_id::text LIMIT 1) AS c ON true
"""
_NAMED: Final = """
INSERT INTO audit_log_names (kind, id, name, cluster_id)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::uuid[])
ON CONFLICT (kind, id) DO UPDATE SET name = EXCLUDED.name, cluster_id = EXCLUDED.cluster_id
"""
_ENTRIES: Final = """
INSERT INTO audit_log (id, logged_at, subject, subject_type, action, http_method, url,
                       entity_type, entity_name, entity_id, result, http_status_code,
                       cluster_id, cluster_name, request_id, metadata)
SELECT e.id, e.logged_at, e.subject, e.subject_type, e.action, e.http_method, e.url,
       e.entity_type, e.entity_name, e.entity_id, 'Succeeded', e.http_status_code,
       e.cluster_id, e.cluster_name, e.request_id, e.metadata
  FROM jsonb_to_recordset($1::jsonb) AS e(id uuid, logged_at timestamptz, subject text,
       subject_type text, action text, http_method text, url text, entity_type text,
       entity_name text, entity_id text, http_status_code integer, cluster_id uuid,
       cluster_name text, request_id text, metadata jsonb)
ON CONFLICT (id) DO NOTHING
"""
_encode = msgspec.json.Encoder().encode


class _Entry(msgspec.Struct, frozen=True, kw_only=True):
    """An entry as the insert takes it (its JSON member names are the columns')."""

    id: UUID
    logged_at: datetime
    subject: str
    subject_type: str
    action: Action
    http_method: str
    url: str
    entity_type: str
    entity_name: str
    entity_id: str
    http_status_code: int | None
    cluster_id: UUID | None
    cluster_name: str
    request_id: str
    metadata: dict[str, str]


def _keys(batch: Sequence[RecordedEvent], found: Sequence[Described]) -> list[Key]:
    """Every name the batch reads or writes: its things', its acting applications', the
    clusters it states."""
    keys: dict[Key, None] = {}
    for recorded, one in zip(batch, found, strict=True):
        keys[one.entity_type, one.entity_id] = None
        if one.client_id is not None:
            keys["subject", one.entity_id] = None
        if one.cluster_id is not None:
            keys["cluster", str(one.cluster_id)] = None
        if recorded.metadata.actor_kind == "application":
            keys["subject", recorded.metadata.actor_subject] = None
    return list(keys)


async def _names(conn: Executor, keys: Sequence[Key]) -> dict[Key, Named]:
    """The stored names of these keys and of the clusters they remember (absent: none)."""
    rows = await conn.fetch(_NAMES, [k for k, _ in keys], [i for _, i in keys])
    names: dict[Key, Named] = {}
    for row in rows:
        names[row["kind"], row["id"]] = (row["name"], row["cluster_id"])
        if row["c_id"] is not None:
            names["cluster", row["c_id"]] = (row["c_name"], row["c_cluster_id"])
    return names


def _entry(recorded: RecordedEvent, found: Described, names: Mapping[Key, Named]) -> _Entry:
    """The entry of an event, its names as they stand after it: the subject an application's
    client id where one is known; the thing's name and cluster (and the cluster's name) as the
    event states them, else as remembered."""
    meta = recorded.metadata
    acting = meta.actor_kind == "application"
    subject = names.get(("subject", meta.actor_subject)) if acting else None
    named = names.get((found.entity_type, found.entity_id))
    cluster_id = found.cluster_id
    if cluster_id is None and named is not None:
        cluster_id = named[1]
    cluster = None if cluster_id is None else names.get(("cluster", str(cluster_id)))
    details = {
        "eventType": event_tag(type(recorded.event)),
        "position": str(recorded.position),
        "version": str(recorded.version),
        "actorKind": meta.actor_kind,
    }
    if subject is not None:
        details["subjectId"] = meta.actor_subject
    return _Entry(
        id=recorded.event_id, logged_at=recorded.recorded_at,
        subject=meta.actor_subject if subject is None else subject[0],
        subject_type=SUBJECT_TYPES[meta.actor_kind], action=found.action,
        http_method=meta.http_method or "", url=meta.http_path or "",
        entity_type=found.entity_type, entity_name="" if named is None else named[0],
        entity_id=found.entity_id, http_status_code=meta.http_status, cluster_id=cluster_id,
        cluster_name="" if cluster is None else cluster[0], request_id=meta.request_id or "",
        metadata=details,
    )  # fmt: skip


async def apply_batch(conn: Executor, batch: Sequence[RecordedEvent]) -> None:
    """A batch's entries as event by event would make them, in at most three round trips: the
    names read once and followed in memory, each entry naming things as of its event; safe to run
    twice (an entry's id is its event's, and the names end as the batch leaves them)."""
    if not batch:
        return
    found = [described(recorded) for recorded in batch]
    names = await _names(conn, _keys(batch, found))
    stored = dict(names)
    entries: list[_Entry] = []
    for recorded, one in zip(batch, found, strict=True):
        # A name replaced, its cluster kept unless one is stated; an application's client id.
        if one.name is not None:
            known = names.get((one.entity_type, one.entity_id))
            kept = known[1] if known is not None and one.cluster_id is None else one.cluster_id
            names[one.entity_type, one.entity_id] = (one.name, kept)
        if one.client_id is not None:
            known = names.get(("subject", one.entity_id))
            names["subject", one.entity_id] = (one.client_id, None if known is None else known[1])
        entries.append(_entry(recorded, one, names))
    moved = [(key, named) for key, named in names.items() if stored.get(key) != named]
    if moved:
        await conn.execute(
            _NAMED,
            [kind for (kind, _), _ in moved], [id_ for (_, id_), _ in moved],
            [name for _, (name, _) in moved], [cluster for _, (_, cluster) in moved],
        )  # fmt: skip
    await conn.execute(_ENTRIES, _encode(entries).decode())


async def apply(conn: Executor, recorded: RecordedEvent) -> None:
    """One event's entry: a batch of one."""
    await apply_batch(conn, [recorded])
