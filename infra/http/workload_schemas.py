"""Request and response bodies of the workload endpoints, in Run:ai's shapes
(DistributedCreationRequest, DistributedWorkload, Workload, HistoryRecord, Event)."""

from datetime import datetime
from typing import Annotated, Any, Literal
from uuid import UUID

import msgspec

from domain.template_specs import DistributedTemplateSpec, MasterTemplateSpec
from infra.http.openapi_document import WorkloadName
from infra.http.template_schemas import RequestBody


class DistributedCreationRequest(RequestBody, frozen=True, kw_only=True):
    name: WorkloadName
    use_given_name_as_prefix: bool = False
    project_id: str
    cluster_id: UUID
    template_id: UUID | None = None
    spec: DistributedTemplateSpec | None = None
    master_spec_same_as_worker: bool | None = None
    master_spec: MasterTemplateSpec | None = None
    # Ours: run this version of the template (its history's), not the current one.
    template_version: Annotated[int, msgspec.Meta(ge=1)] | None = None


class Wire(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """Response bodies: camelCase; absent optional members are sent as null, as Run:ai does."""


class DistributedWorkload(Wire, frozen=True, kw_only=True, omit_defaults=True):
    """`templateId` and `templateVersion` are ours: the template version the snapshot came
    from."""

    name: str
    requested_name: str
    workload_id: UUID
    project_id: str
    cluster_id: UUID
    created_by: str
    created_at: datetime
    desired_phase: Literal["Running", "Stopped", "Deleted"]
    actual_phase: str
    spec: DistributedTemplateSpec
    master_spec_same_as_worker: bool
    department_id: str | None = None
    deleted_at: datetime | None = None
    template_id: UUID | None = None
    template_version: int | None = None
    master_spec: MasterTemplateSpec | None = None


class Condition(Wire, frozen=True, kw_only=True, omit_defaults=True):
    type: str
    status: str
    message: str | None = None
    reason: str | None = None
    last_transition_time: datetime | None = None


class Workload(Wire, frozen=True, kw_only=True, omit_defaults=True):
    """The any-type view (`/api/v1/workloads`)."""

    type: str
    name: str
    id: UUID
    source: Literal["CLI", "Control-plane", "Other"]
    priority: int | None
    priority_class_name: str
    cluster_id: UUID
    project_name: str
    project_id: str
    department_name: str
    department_id: str
    namespace: str
    created_at: datetime
    phase: str
    conditions: list[Condition]
    k8s_phase: str
    tenant_id: int
    running_pods: int
    phase_updated_at: datetime
    k8s_phase_updated_at: datetime
    updated_at: datetime
    deleted_at: datetime | None
    completed_at: datetime | None
    category: str
    submitted_by: str
    images: list[str]
    preemptible: bool | None
    additional_fields: dict[str, Any]
    phase_message: str | None = None
    distributed_framework: str | None = None
    command: str | None = None
    arguments: str | None = None


class WorkloadList(Wire, frozen=True, kw_only=True, omit_defaults=True):
    """On the last page `next` is left out, not null (Run:ai's document types it as an
    integer)."""

    workloads: list[Workload]
    next: int | None = None


class InvolvedObject(Wire, frozen=True, kw_only=True):
    uid: UUID
    kind: str
    name: str
    namespace: str


class WorkloadEventWire(Wire, frozen=True, kw_only=True):
    created_at: datetime
    id: UUID
    type: Literal["Normal", "Warning"]
    cluster_id: UUID
    message: str
    reason: str
    source: str
    involved_object: InvolvedObject


class EventList(Wire, frozen=True, kw_only=True, omit_defaults=True):
    """On the last page `next` is left out, not null (Run:ai's document types it as an
    integer)."""

    events: list[WorkloadEventWire]
    next: int | None = None


class PhaseUpdate(Wire, frozen=True, kw_only=True):
    phase: str
    phase_message: str


class HistorySpec(Wire, frozen=True, kw_only=True, omit_defaults=True):
    event: WorkloadEventWire | None = None
    phase_update: PhaseUpdate | None = None


class HistoryMeta(Wire, frozen=True, kw_only=True):
    creation_timestamp: datetime
    type: Literal["Event", "PhaseUpdate"]


class HistoryRecord(Wire, frozen=True, kw_only=True):
    meta: HistoryMeta
    spec: HistorySpec


class HistoryList(Wire, frozen=True, kw_only=True, omit_defaults=True):
    """On the last page `next` is left out, not null (Run:ai's document types it as an
    integer)."""

    records: list[HistoryRecord]
    next: int | None = None


class WorkloadManifests(Wire, frozen=True, kw_only=True):
    """Ours: the objects the backend made of the workload's latest submitted run (for a dry
    run, the objects it would make), to read and diff; empty before a backend took it and for
    backends that make none (local processes)."""

    workload_id: UUID
    run: int | None
    backend: str | None
    manifests: list[dict[str, Any]]


class PodContainer(Wire, frozen=True, kw_only=True, omit_defaults=True):
    name: str
    image: str
    started_at: datetime | None = None


class Pod(Wire, frozen=True, kw_only=True, omit_defaults=True):
    """A replica of a workload's current run (Run:ai's Pod1)."""

    name: str
    priority_class_name: str
    id: UUID
    workload_id: UUID
    cluster_id: UUID
    project_id: str
    node_name: str | None = None
    created_at: datetime
    completed_at: datetime | None = None
    containers: list[PodContainer]
    requested_node_pools: list[str] | None = None
    requested_resources: dict[str, Any] | None = None
    k8s_phase: str
    ip: str | None = None
    tenant_id: int
    k8s_phase_updated_at: datetime
    updated_at: datetime
    deleted_at: datetime | None = None
    project_name: str | None = None  # with verbosity=full
    workload_name: str | None = None  # with verbosity=full


class PodList(Wire, frozen=True, kw_only=True, omit_defaults=True):
    pods: list[Pod]
    next: int | None = None
