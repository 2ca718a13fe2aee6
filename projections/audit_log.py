"""Read model of Run:ai's audit log (served by infra/http/audit_log.py): an entry for each event,
saying who did what to which thing in which cluster, through which request; it remembers each
thing's name and cluster (`audit_log_names`) for the entries whose event names neither."""

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
        case TenantSettingChanged() | TenantLimitChanged():
            return of("setting", event.key, name=event.key)
        case PolicyApplied():
            return of("policy", event.policy_id, name=event.name, cluster_id=event.cluster_id)
        case PolicyDeleted():
            return of("policy", event.policy_id)
        case _:
            return of(kind, recorded.stream_id)


_NAMED: Final = """
INSERT INTO audit_log_names (kind, id, name, cluster_id) VALUES ($1, $2, $3, $4)
ON CONFLICT (kind, id) DO UPDATE
   SET name = EXCLUDED.name, cluster_id = coalesce(EXCLUDED.cluster_id, audit_log_names.cluster_id)
"""
# The subject: an application's client id where one is known; the entity's name and cluster
# (with the cluster's name) as the event states them, else as remembered.
_ENTRY: Final = """
INSERT INTO audit_log (id, logged_at, subject, subject_type, action, http_method, url,
                       entity_type, entity_name, entity_id, result, http_status_code,
                       cluster_id, cluster_name, request_id, metadata)
SELECT $1::uuid, $2::timestamptz, coalesce(s.name, $3::text), $4::text, $5::text, $6::text,
       $7::text, $8::text, coalesce(n.name, ''), $9::text, 'Succeeded', $10::integer,
       c.id, coalesce(cn.name, ''), $11::text,
       $12::jsonb || CASE WHEN s.name IS NULL THEN '{}'::jsonb
                          ELSE jsonb_build_object('subjectId', $3::text) END
  FROM (SELECT 1) AS one
  LEFT JOIN audit_log_names s ON $13::boolean AND s.kind = 'subject' AND s.id = $3::text
  LEFT JOIN audit_log_names n ON n.kind = $8::text AND n.id = $9::text
  CROSS JOIN LATERAL (SELECT coalesce($14::uuid, n.cluster_id) AS id) AS c
  LEFT JOIN audit_log_names cn ON cn.kind = 'cluster' AND cn.id = c.id::text
ON CONFLICT (id) DO NOTHING
"""
_encode = msgspec.json.Encoder().encode


async def apply(conn: Executor, recorded: RecordedEvent) -> None:
    """One event's entry; safe to run twice (the event's id is the entry's)."""
    found, meta = described(recorded), recorded.metadata
    if found.name is not None:
        await conn.execute(_NAMED, found.entity_type, found.entity_id, found.name, found.cluster_id)
    if found.client_id is not None:
        await conn.execute(_NAMED, "subject", found.entity_id, found.client_id, None)
    details = {
        "eventType": event_tag(type(recorded.event)),
        "position": str(recorded.position),
        "version": str(recorded.version),
        "actorKind": meta.actor_kind,
    }
    await conn.execute(
        _ENTRY,
        recorded.event_id, recorded.recorded_at, meta.actor_subject,
        SUBJECT_TYPES[meta.actor_kind], found.action, meta.http_method or "",
        meta.http_path or "", found.entity_type, found.entity_id, meta.http_status,
        meta.request_id or "", _encode(details).decode(), meta.actor_kind == "application",
        found.cluster_id,
    )  # fmt: skip
