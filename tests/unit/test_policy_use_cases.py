"""The policy use cases against fakes of their ports: a policy merges down the tree and a lower
scope may only tighten it, validating writes nothing, a change lays its body over the policy
and keeps its name, a deletion frees the scope (and a new policy there is made anew), and only
an admin of the scope or above sets one, within sight."""

from uuid import uuid4

import pytest

from domain import policies
from domain.commands import ApplyPolicy, ChangePolicy, DeletePolicy
from domain.events import ApplicationCreated, EventMetadata
from domain.org_units import UnknownScopeError
from domain.policies import InvalidPolicyError, PolicyBody, PolicyNotFoundError
from domain.policy_rules import PolicyRule
from domain.values import Grant, Role, ScopeKind, ScopeRef
from services import access
from services import policies as policy_use_cases
from services.errors import NotPermittedError
from services.ports.event_store import Append
from tests.fakes import InMemoryStreams
from tests.unit.org_tree import tree

SYSTEM = EventMetadata(actor_subject="setup", actor_kind="system")
GPU = "worker.compute.gpuDevicesRequest"


def gpus(*, min: int | None = None, max: int | None = None) -> PolicyBody:
    return PolicyBody(rules={GPU: PolicyRule(min=min, max=max)})


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


async def version_of(streams: InMemoryStreams, scope: ScopeRef) -> int:
    return (await streams.load(policies.stream_of("distributed", scope))).version


async def in_force(streams: InMemoryStreams, scope: ScopeRef) -> policies.Effective:
    lineage = await access.lineage_of(scope, streams=streams, field="")
    return await policy_use_cases.effective_in(lineage, streams=streams)


async def test_a_policy_merges_down_the_tree_and_a_lower_scope_may_only_tighten_it() -> None:
    streams = InMemoryStreams()
    _, department, llm, vision = await tree(streams)
    above, project = ScopeRef("department", department), ScopeRef("project", llm)
    applied = await policy_use_cases.apply_policy(
        ApplyPolicy(scope=above, name="research-gpus", body=gpus(min=1, max=4), metadata=SYSTEM),
        streams=streams,
    )
    assert applied.stamps is not None
    assert applied.stamps.created == applied.stamps.updated
    assert applied.policy.placement.department_id == department
    for below in (project, ScopeRef("project", vision)):
        assert (await in_force(streams, below)).rules[GPU] == PolicyRule(min=1, max=4)
        assert (await in_force(streams, below)).sources[GPU] == above

    tighter = ApplyPolicy(scope=project, name="p", body=gpus(max=2), metadata=SYSTEM)
    assert (await policy_use_cases.apply_policy(tighter, streams=streams)).effective.rules[
        GPU
    ] == PolicyRule(min=1, max=2)
    assert (await in_force(streams, project)).rules[GPU] == PolicyRule(min=1, max=2)
    assert (await in_force(streams, project)).sources[GPU] == project

    written = await version_of(streams, project)
    looser = ApplyPolicy(scope=project, name="p", body=gpus(max=8), metadata=SYSTEM)
    with pytest.raises(InvalidPolicyError) as refused:
        await policy_use_cases.apply_policy(looser, streams=streams)
    assert (refused.value.field, refused.value.rule) == (
        f"/policy/rules/{GPU.replace('.', '/')}/max",
        "max",
    )
    assert await version_of(streams, project) == written


async def test_validating_only_answers_the_policy_and_writes_nothing() -> None:
    streams = InMemoryStreams()
    _, department, _, _ = await tree(streams)
    scope = ScopeRef("department", department)
    command = ApplyPolicy(
        scope=scope, name="gpus", body=gpus(max=4), metadata=SYSTEM, validate_only=True
    )
    checked = await policy_use_cases.apply_policy(command, streams=streams)
    assert checked.stamps is None
    assert checked.effective.rules[GPU] == PolicyRule(max=4)
    assert await version_of(streams, scope) == 0


async def test_applying_the_same_policy_again_writes_nothing_and_keeps_its_stamps() -> None:
    streams = InMemoryStreams()
    _, department, _, _ = await tree(streams)
    scope = ScopeRef("department", department)
    command = ApplyPolicy(scope=scope, name="gpus", body=gpus(max=4), metadata=SYSTEM)
    first = await policy_use_cases.apply_policy(command, streams=streams)
    again = await policy_use_cases.apply_policy(command, streams=streams)
    assert again.stamps == first.stamps
    assert await version_of(streams, scope) == 1


async def test_a_change_lays_its_rules_over_the_policy_keeps_its_name_and_resets_fields() -> None:
    streams = InMemoryStreams()
    _, department, _, _ = await tree(streams)
    scope = ScopeRef("department", department)
    pulls = "worker.imagePullPolicy"
    body = PolicyBody(rules={GPU: PolicyRule(min=1, max=4), pulls: PolicyRule(can_edit=True)})
    made = await policy_use_cases.apply_policy(
        ApplyPolicy(scope=scope, name="gpus", body=body, metadata=SYSTEM), streams=streams
    )
    changer = await holder_of(streams, "admin", "department", department)
    change = ChangePolicy(scope=scope, body=gpus(max=2), reset=(pulls,), metadata=changer)
    changed = await policy_use_cases.change_policy(change, streams=streams)
    assert changed.policy.name == "gpus"
    assert changed.policy.body.rules == {GPU: PolicyRule(min=1, max=2)}
    assert made.stamps is not None
    assert changed.stamps is not None
    assert changed.stamps.created == made.stamps.created
    assert changed.stamps.updated.by == changer.actor_subject
    assert (await in_force(streams, scope)).rules == {GPU: PolicyRule(min=1, max=2)}


async def test_a_deletion_frees_the_scope_and_a_policy_made_there_again_is_new() -> None:
    streams = InMemoryStreams()
    _, department, _, _ = await tree(streams)
    scope = ScopeRef("department", department)
    command = ApplyPolicy(scope=scope, name="gpus", body=gpus(max=4), metadata=SYSTEM)
    await policy_use_cases.apply_policy(command, streams=streams)
    await policy_use_cases.delete_policy(
        DeletePolicy(scope=scope, metadata=SYSTEM), streams=streams
    )
    assert (await in_force(streams, scope)).rules == {}
    with pytest.raises(PolicyNotFoundError):
        await policy_use_cases.delete_policy(
            DeletePolicy(scope=scope, metadata=SYSTEM), streams=streams
        )
    again = await policy_use_cases.apply_policy(command, streams=streams)
    assert again.stamps is not None
    assert again.stamps.created == again.stamps.updated  # made by the event after the deletion
    assert await version_of(streams, scope) == 3


async def test_only_an_admin_of_the_scope_or_above_sets_a_policy_within_sight() -> None:
    streams = InMemoryStreams()
    cluster, department, llm, vision = await tree(streams)
    project = ScopeRef("project", llm)

    def setting(actor: EventMetadata, scope: ScopeRef = project) -> ApplyPolicy:
        return ApplyPolicy(scope=scope, name="p", body=gpus(max=2), metadata=actor)

    for admin in (
        await holder_of(streams, "admin", "project", llm),
        await holder_of(streams, "admin", "department", department),
        await holder_of(streams, "admin", "cluster", str(cluster)),
    ):
        assert (await policy_use_cases.apply_policy(setting(admin), streams=streams)).stamps
    viewer = await holder_of(streams, "viewer", "project", llm)
    with pytest.raises(NotPermittedError):
        await policy_use_cases.apply_policy(setting(viewer), streams=streams)
    stranger = await holder_of(streams, "admin", "project", vision)
    with pytest.raises(UnknownScopeError) as unseen:
        await policy_use_cases.apply_policy(setting(stranger), streams=streams)
    assert unseen.value.field == "/meta/projectId"
    nowhere = ScopeRef("project", "999")
    with pytest.raises(UnknownScopeError):
        await policy_use_cases.apply_policy(setting(SYSTEM, nowhere), streams=streams)
    with pytest.raises(UnknownScopeError) as unseen:
        await policy_use_cases.delete_policy(
            DeletePolicy(scope=project, metadata=stranger), streams=streams
        )
    assert unseen.value.field == "/projectId"
