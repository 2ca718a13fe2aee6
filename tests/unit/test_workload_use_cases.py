"""The workload use cases against fakes of their ports: a submission records its snapshot in its
project under a name unique there until the workload is deleted, a keyed retry answers the first
request, the project's policy fills in defaults and refuses what breaks it with nothing written,
only a submitter of the project or above submits, suspends, resumes and deletes, and asking for
what already holds writes nothing."""

from typing import Any
from uuid import UUID, uuid4

import msgspec
import pytest

from domain.commands import ApplyPolicy, ChangeWorkload, RequestWorkload
from domain.events import ApplicationCreated, EventMetadata
from domain.org_units import UnknownScopeError
from domain.policies import PolicyBody
from domain.policy_compliance import PolicyViolationError
from domain.policy_rules import PolicyRule
from domain.submissions import Overrides
from domain.template_specs import DistributedTemplateSpec
from domain.values import Grant, Role, ScopeKind, ScopeRef
from domain.workloads import InvalidWorkloadError, Workload, WorkloadNotFoundError
from services import policies, workloads
from services.errors import IdempotencyKeyReusedError, NameTakenError, NotPermittedError
from services.ports.event_store import Append
from tests.fakes import InMemoryStreams
from tests.unit.org_tree import tree

SYSTEM = EventMetadata(actor_subject="setup", actor_kind="system")


def spec(**values: Any) -> DistributedTemplateSpec:
    given = {"image": "img:1", "distributedFramework": "PyTorch", "numWorkers": 2, **values}
    return msgspec.convert(given, DistributedTemplateSpec)


def submission(
    cluster: UUID,
    project: str,
    name: str = "ddp",
    *,
    actor: EventMetadata = SYSTEM,
    workload_id: UUID | None = None,
    keyed: bool = False,
    **values: Any,
) -> RequestWorkload:
    return RequestWorkload(
        workload_id=workload_id or uuid4(),
        keyed=keyed,
        name=name,
        cluster_id=cluster,
        project_id=project,
        overrides=Overrides(spec=spec(**values)),
        metadata=actor,
    )


async def submit(streams: InMemoryStreams, command: RequestWorkload) -> Workload:
    made = await workloads.request_workload(command, streams=streams, names=streams.lookups)
    return made.state


async def change(
    streams: InMemoryStreams, workload_id: UUID, action: Any, actor: EventMetadata = SYSTEM
) -> Workload:
    command = ChangeWorkload(workload_id=workload_id, action=action, metadata=actor)
    return await workloads.change_workload(command, streams=streams)


async def holder_of(
    streams: InMemoryStreams, role: Role, kind: ScopeKind, scope_id: str
) -> EventMetadata:
    """An application holding one role on one scope."""
    application_id = uuid4()
    grant = Grant(role=role, scope_kind=kind, scope_id=scope_id)
    created = ApplicationCreated(
        application_id=application_id, name=role, client_id=f"{role}-{scope_id}", grants=(grant,)
    )
    await streams.append(Append(application_id, [created], expected_version=0, metadata=SYSTEM))
    return EventMetadata(actor_subject=str(application_id), actor_kind="application")


async def test_a_submission_records_its_snapshot_in_its_project() -> None:
    streams = InMemoryStreams()
    cluster, department, llm, _ = await tree(streams)
    made = await submit(streams, submission(cluster, llm, numWorkers=3))
    request = made.request
    assert (request.name, request.project_id, request.department_id) == ("ddp", llm, department)
    assert (request.cluster_id, request.namespace) == (cluster, "runai-llm")
    assert request.snapshot.spec.num_workers == 3
    assert (made.desired, made.actual) == ("Running", "Creating")
    assert (await streams.load(made.id)).version == 1


async def test_a_name_is_unique_in_its_project_until_the_workload_is_deleted() -> None:
    streams = InMemoryStreams()
    cluster, _, llm, vision = await tree(streams)
    first = await submit(streams, submission(cluster, llm))
    await submit(streams, submission(cluster, vision))  # another project's names are its own
    with pytest.raises(NameTakenError) as taken:
        await submit(streams, submission(cluster, llm))
    assert taken.value.field == "/name"
    await change(streams, first.id, "suspend")  # a suspended workload keeps its name
    with pytest.raises(NameTakenError):
        await submit(streams, submission(cluster, llm))
    await change(streams, first.id, "delete")
    again = await submit(streams, submission(cluster, llm))
    assert again.request.name == "ddp"
    prefix = msgspec.structs.replace(submission(cluster, llm), use_given_name_as_prefix=True)
    prefixed = await submit(streams, prefix)
    assert prefixed.request.name == f"ddp-{prefixed.id.hex[:5]}"


async def test_a_keyed_retry_answers_the_first_request_and_another_request_is_refused() -> None:
    streams = InMemoryStreams()
    cluster, _, llm, _ = await tree(streams)
    workload_id = uuid4()
    command = submission(cluster, llm, workload_id=workload_id, keyed=True)
    first = await submit(streams, command)
    assert await submit(streams, command) == first
    assert (await streams.load(workload_id)).version == 1
    other = submission(cluster, llm, workload_id=workload_id, keyed=True, numWorkers=5)
    with pytest.raises(IdempotencyKeyReusedError):
        await submit(streams, other)


async def test_the_project_policy_fills_in_defaults_and_refuses_what_breaks_it() -> None:
    streams = InMemoryStreams()
    cluster, department, llm, _ = await tree(streams)
    gpus = "worker.compute.gpuDevicesRequest"
    body = PolicyBody(
        worker_defaults=msgspec.convert(
            {"labels": [{"name": "team", "value": "ml"}]}, DistributedTemplateSpec
        ),
        rules={gpus: PolicyRule(max=4)},
    )
    await policies.apply_policy(
        ApplyPolicy(scope=ScopeRef("department", department), name="d", body=body, metadata=SYSTEM),
        streams=streams,
    )
    made = await submit(streams, submission(cluster, llm, compute={"gpuDevicesRequest": 4}))
    labels = made.request.snapshot.spec.labels or ()
    assert [(label.name, label.value) for label in labels] == [("team", "ml")]
    workload_id = uuid4()
    breaking = submission(
        cluster, llm, "big", workload_id=workload_id, compute={"gpuDevicesRequest": 8}
    )
    with pytest.raises(PolicyViolationError) as refused:
        await submit(streams, breaking)
    assert (refused.value.field, refused.value.rule) == ("/spec/compute/gpuDevicesRequest", "max")
    assert (await streams.load(workload_id)).version == 0


async def test_only_a_submitter_of_the_project_or_above_submits_within_sight() -> None:
    streams = InMemoryStreams()
    cluster, department, llm, vision = await tree(streams)
    grants: list[tuple[Role, ScopeKind, str]] = [
        ("submitter", "project", llm),
        ("admin", "department", department),
        ("submitter", "cluster", str(cluster)),
    ]
    for role, kind, scope_id in grants:
        actor = await holder_of(streams, role, kind, scope_id)
        await submit(streams, submission(cluster, llm, f"by-{role}-{kind}", actor=actor))
    viewer = await holder_of(streams, "viewer", "project", llm)
    with pytest.raises(NotPermittedError):
        await submit(streams, submission(cluster, llm, actor=viewer))
    stranger = await holder_of(streams, "submitter", "project", vision)
    with pytest.raises(UnknownScopeError) as unseen:
        await submit(streams, submission(cluster, llm, actor=stranger))
    assert unseen.value.field == "/projectId"
    with pytest.raises(InvalidWorkloadError) as elsewhere:
        await submit(streams, submission(uuid4(), llm))
    assert elsewhere.value.field == "/clusterId"
    with pytest.raises(UnknownScopeError):
        await submit(streams, submission(cluster, "999"))


async def test_suspend_resume_and_delete_write_only_what_changes_for_a_submitter() -> None:
    streams = InMemoryStreams()
    cluster, _, llm, vision = await tree(streams)
    made = await submit(streams, submission(cluster, llm))
    suspended = await change(streams, made.id, "suspend")
    assert suspended.desired == "Stopped"
    assert (await change(streams, made.id, "suspend")).version == suspended.version
    resumed = await change(streams, made.id, "resume")
    assert (resumed.desired, resumed.run) == ("Running", 2)
    viewer = await holder_of(streams, "viewer", "project", llm)
    with pytest.raises(NotPermittedError):
        await change(streams, made.id, "delete", viewer)
    stranger = await holder_of(streams, "submitter", "project", vision)
    with pytest.raises(WorkloadNotFoundError):
        await change(streams, made.id, "delete", stranger)
    submitter = await holder_of(streams, "submitter", "project", llm)
    assert (await change(streams, made.id, "delete", submitter)).deleted
    with pytest.raises(WorkloadNotFoundError):
        await change(streams, made.id, "resume")
    with pytest.raises(WorkloadNotFoundError):
        await change(streams, uuid4(), "suspend")
