"""Node pools against fakes of their ports: a cluster's admins register, change and delete them,
names unique per cluster; a template naming a pool its cluster lacks is refused naming the field
(a cluster with no pool registered checks none); one whose pool went later says so in `runnable`,
and a submission of it is refused."""

from typing import Any
from uuid import UUID, uuid4

import msgspec
import pytest

from domain import node_pools
from domain.cluster_facts import ClusterFacts
from domain.cluster_specs import NodePoolChanges, NodePoolSpec
from domain.combined import combine
from domain.commands import (
    CreateCluster,
    CreateNodePool,
    CreateTemplate,
    DeleteNodePool,
    PatchTemplate,
    RequestWorkload,
    UpdateNodePool,
)
from domain.events import ApplicationCreated, EventMetadata, NodePoolDeleted
from domain.node_pools import InvalidNodePoolError, NodePoolNotFoundError
from domain.org_units import UnknownScopeError
from domain.submissions import Overrides
from domain.template_rules import InvalidTemplateError
from domain.templates import TemplateBody
from domain.values import Grant, Role, ScopeKind, ScopeRef
from domain.workloads import InvalidWorkloadError
from services import node_pools as use_cases
from services import org_units, templates, workloads
from services.errors import NameTakenError, NotPermittedError
from services.ports.event_store import Append
from tests.fakes import InMemoryStreams
from tests.unit.org_tree import tree

SYSTEM = EventMetadata(actor_subject="setup", actor_kind="system")
SPEC = NodePoolSpec(label_key="node-type", label_value="a100")


async def caller(
    streams: InMemoryStreams, role: Role, kind: ScopeKind, scope_id: str
) -> EventMetadata:
    application_id = uuid4()
    grant = Grant(role=role, scope_kind=kind, scope_id=scope_id)
    created = ApplicationCreated(
        application_id=application_id, name="caller", client_id=str(application_id), grants=(grant,)
    )
    await streams.append(Append(application_id, [created], expected_version=0, metadata=SYSTEM))
    return EventMetadata(actor_subject=str(application_id), actor_kind="application")


async def pool(
    streams: InMemoryStreams, cluster: UUID, name: str, metadata: EventMetadata = SYSTEM
) -> UUID:
    command = CreateNodePool(
        nodepool_id=uuid4(), cluster_id=cluster, name=name, spec=SPEC, metadata=metadata
    )
    return (await use_cases.create_node_pool(command, streams=streams)).state.id


def body(**spec: Any) -> TemplateBody:
    return msgspec.convert(
        {"spec": {"distributedFramework": "PyTorch", "numWorkers": 2, **spec}}, TemplateBody
    )


async def template(
    streams: InMemoryStreams, scope: ScopeRef, shape: TemplateBody, name: str = "ddp"
) -> templates.TemplateView:
    command = CreateTemplate(
        template_id=uuid4(), scope=scope, name=name, body=shape, metadata=SYSTEM
    )
    return await templates.create_template(command, streams=streams, names=streams.lookups)


async def test_a_cluster_s_admins_register_change_and_delete_its_pools() -> None:
    streams = InMemoryStreams()
    cluster, *_ = await tree(streams)
    admin = await caller(streams, "admin", "cluster", str(cluster))
    a100 = await pool(streams, cluster, "a100", admin)
    with pytest.raises(NameTakenError):
        await pool(streams, cluster, "a100")
    other_cluster = uuid4()
    await org_units.create_cluster(
        CreateCluster(cluster_id=other_cluster, name="west", metadata=SYSTEM), streams=streams
    )
    await pool(streams, other_cluster, "a100")  # names are unique per cluster only

    changes = NodePoolChanges(label_value="a100-80g", over_provisioning_ratio=2)
    patched = await use_cases.update_node_pool(
        UpdateNodePool(nodepool_id=a100, changes=changes, whole=False, metadata=admin),
        streams=streams,
    )
    assert (patched.state.spec.label_key, patched.state.spec.label_value) == (
        "node-type",
        "a100-80g",
    )
    assert patched.state.spec.over_provisioning_ratio == 2
    replaced = await use_cases.update_node_pool(
        UpdateNodePool(
            nodepool_id=a100, changes=NodePoolChanges(label_key="gpu"), whole=True, metadata=admin
        ),
        streams=streams,
    )
    # A PUT unsets what it leaves out, but a pool keeps a label to select its nodes by.
    assert replaced.state.spec == NodePoolSpec(label_key="gpu", label_value="a100-80g")

    await use_cases.delete_node_pool(
        DeleteNodePool(nodepool_id=a100, metadata=admin), streams=streams
    )
    assert isinstance((await streams.load(a100)).events[-1], NodePoolDeleted)
    with pytest.raises(NodePoolNotFoundError):
        await use_cases.delete_node_pool(
            DeleteNodePool(nodepool_id=a100, metadata=admin), streams=streams
        )
    await pool(streams, cluster, "a100")  # its name is free again


async def test_only_the_cluster_s_admins_manage_its_pools_and_others_see_none() -> None:
    streams = InMemoryStreams()
    cluster, _, llm, _ = await tree(streams)
    editor = await caller(streams, "editor", "project", llm)  # sees the cluster, manages nothing
    with pytest.raises(NotPermittedError):
        await pool(streams, cluster, "a100", editor)
    stranger = await caller(streams, "admin", "cluster", str(uuid4()))
    with pytest.raises(UnknownScopeError) as unseen:
        await pool(streams, cluster, "a100", stranger)
    assert unseen.value.field == "/clusterId"
    a100 = await pool(streams, cluster, "a100")
    for actor in (editor, stranger):
        with pytest.raises((NotPermittedError, NodePoolNotFoundError)):
            await use_cases.delete_node_pool(
                DeleteNodePool(nodepool_id=a100, metadata=actor), streams=streams
            )
    with pytest.raises(NodePoolNotFoundError):
        await use_cases.require_visible(a100, stranger, streams)
    await use_cases.require_visible(a100, editor, streams)


async def test_a_pool_s_name_and_label_are_what_kubernetes_can_select_by() -> None:
    with pytest.raises(InvalidNodePoolError) as refused:
        node_pools.create(None, uuid4(), cluster_id=uuid4(), name="A100 GPUs", spec=SPEC)
    assert refused.value.field == "/name"
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({"labelKey": "bad key", "labelValue": "x"}, NodePoolSpec)


async def test_a_template_naming_a_pool_its_cluster_lacks_is_refused_naming_the_field() -> None:
    streams = InMemoryStreams()
    cluster, _, llm, _ = await tree(streams)
    project = ScopeRef("project", llm)
    # No pool registered: nothing is checked, as before pools were kept.
    await template(streams, project, body(nodePools=["a100"]), "unchecked")
    await pool(streams, cluster, "v100")
    with pytest.raises(InvalidTemplateError) as refused:
        await template(streams, project, body(nodePools=["v100", "a100"]), "worker")
    assert refused.value.field == "/spec/nodePools/1"
    master = msgspec.convert(
        {
            "spec": {"distributedFramework": "PyTorch", "numWorkers": 2, "nodePools": ["v100"]},
            "masterSpecSameAsWorker": False,
            "master": {"spec": {"nodePools": ["h100"]}},
        },
        TemplateBody,
    )
    with pytest.raises(InvalidTemplateError) as refused:
        await template(streams, project, master, "master")
    assert refused.value.field == "/master/spec/nodePools/0"
    made = await template(streams, project, body(nodePools=["v100"]), "fits")
    # A tenant's template has no cluster: its pools are any cluster's.
    await template(streams, ScopeRef("tenant"), body(nodePools=["a100"]), "anywhere")

    patch = PatchTemplate(
        template_id=made.template.id, patch={"spec": {"nodePools": ["a100"]}}, metadata=SYSTEM
    )
    with pytest.raises(InvalidTemplateError) as refused:
        await templates.patch_template(patch, streams=streams, names=streams.lookups)
    assert refused.value.field == "/spec/nodePools/0"


def test_runnable_says_which_pools_the_template_s_cluster_no_longer_has() -> None:
    shape = body(nodePools=["v100", "a100"], image="pt:24")
    assert combine(shape, {}).runnable.is_runnable  # a cluster with no pool: nothing checked
    facts = ClusterFacts(node_pools=frozenset({"v100"}))
    runnable = combine(shape, {}, cluster=facts).runnable
    assert not runnable.is_runnable
    assert runnable.issue == "/spec/nodePools/1: the cluster has no node pool 'a100'"
    both = ClusterFacts(node_pools=frozenset({"v100", "a100"}))
    assert combine(shape, {}, cluster=both).runnable.is_runnable


async def test_a_submission_runs_only_on_pools_of_its_project_s_cluster() -> None:
    streams = InMemoryStreams()
    cluster, _, llm, _ = await tree(streams)
    project = ScopeRef("project", llm)
    made = await template(streams, project, body(nodePools=["v100"], image="pt:24"))
    v100 = await pool(streams, cluster, "v100")
    await pool(streams, cluster, "a100")

    def submission(**overrides: Any) -> RequestWorkload:
        return RequestWorkload(
            workload_id=uuid4(),
            name=f"run-{uuid4().hex[:6]}",
            cluster_id=cluster,
            project_id=llm,
            template_id=made.template.id,
            overrides=msgspec.convert(overrides, Overrides),
            metadata=SYSTEM,
        )

    async def submit(command: RequestWorkload) -> None:
        await workloads.request_workload(command, streams=streams, names=streams.lookups)

    await submit(submission())
    with pytest.raises(InvalidWorkloadError) as refused:
        await submit(submission(spec={"nodePools": ["h100"]}))
    assert refused.value.field == "/spec/nodePools/0"
    await use_cases.delete_node_pool(
        DeleteNodePool(nodepool_id=v100, metadata=SYSTEM), streams=streams
    )
    with pytest.raises(InvalidWorkloadError) as refused:
        await submit(submission())  # the template's pool is gone
    assert refused.value.field == "/templateId"
    await submit(submission(spec={"nodePools": ["a100"]}))
