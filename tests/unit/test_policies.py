"""Policies: rules merged down the org tree (tighter wins), loosening refused naming the rule,
defaults checked against the rules in force, and specs checked for compliance, rule kind by
rule kind, on worker and master fields."""

from typing import Any
from uuid import uuid4

import msgspec
import pytest

from domain import policies
from domain.combined import combine
from domain.policies import Effective, InvalidPolicyError, Placement, PolicyBody
from domain.policy_compliance import issues, request_field
from domain.policy_rules import PolicyRule
from domain.template_specs import DistributedTemplateSpec, MasterTemplateSpec
from domain.templates import TemplateBody
from domain.values import ScopeRef

TENANT = ScopeRef("tenant")
DEPARTMENT = ScopeRef("department", "2")
PROJECT = ScopeRef("project", "3")


def body(rules: dict[str, dict[str, Any]] | None = None, **defaults: Any) -> PolicyBody:
    worker = defaults.get("worker")
    master = defaults.get("master")
    return PolicyBody(
        worker_defaults=None
        if worker is None
        else msgspec.convert(worker, DistributedTemplateSpec),
        master_defaults=None if master is None else msgspec.convert(master, MasterTemplateSpec),
        rules={path: msgspec.convert(rule, PolicyRule) for path, rule in (rules or {}).items()},
    )


def under(*chain: tuple[ScopeRef, PolicyBody]) -> Effective:
    return policies.effective(list(chain))


def spec(**values: Any) -> DistributedTemplateSpec:
    return msgspec.convert({"image": "img:1", **values}, DistributedTemplateSpec)


def broken(policy: Effective, worker: DistributedTemplateSpec, master: Any = None) -> list[str]:
    return [f"{i.field}:{i.rule}" for i in issues(policy, worker, master)]


GPU = "worker.compute.gpuDevicesRequest"


@pytest.mark.parametrize(
    ("rule", "kept", "breaking"),
    [
        ({"min": 1}, 1, 0),
        ({"max": 4}, 4, 5),
        ({"min": 2, "step": 2}, 6, 5),
        ({"required": True}, 1, None),
    ],
)
def test_an_integer_field_keeps_its_bounds_step_and_requirement(
    rule: dict[str, Any], kept: int, breaking: int | None
) -> None:
    policy = under((TENANT, body({GPU: rule})))
    assert broken(policy, spec(compute={"gpuDevicesRequest": kept})) == []
    compute = {} if breaking is None else {"gpuDevicesRequest": breaking}
    (name,) = rule.keys() - {"min"} or {"min"}
    assert broken(policy, spec(compute=compute)) == [f"{GPU}:{name}"]


def test_number_and_quantity_fields_compare_as_numbers() -> None:
    policy = under(
        (TENANT, body({"worker.compute.cpuCoreRequest": {"max": 2.5},
                       "worker.compute.cpuMemoryRequest": {"min": "1Gi", "max": "8Gi"}}))
    )  # fmt: skip
    assert broken(policy, spec(compute={"cpuCoreRequest": 2.5, "cpuMemoryRequest": "1024Mi"})) == []
    assert broken(policy, spec(compute={"cpuCoreRequest": 3, "cpuMemoryRequest": "9G"})) == [
        "worker.compute.cpuCoreRequest:max",
        "worker.compute.cpuMemoryRequest:max",
    ]
    assert broken(policy, spec(compute={"cpuMemoryRequest": "500Mi"})) == [
        "worker.compute.cpuMemoryRequest:min"
    ]


def test_string_and_array_fields_keep_their_options() -> None:
    options = {"worker.imagePullPolicy": {"options": [{"value": "IfNotPresent"}]},
               "worker.nodePools": {"options": [{"value": "a"}, {"value": "b"}]}}  # fmt: skip
    policy = under((TENANT, body(options)))
    assert broken(policy, spec(imagePullPolicy="IfNotPresent", nodePools=["a", "b"])) == []
    assert broken(policy, spec(imagePullPolicy="Always", nodePools=["a", "c"])) == [
        "worker.imagePullPolicy:options",
        "worker.nodePools:options",
    ]


def test_a_field_no_one_may_edit_holds_its_default() -> None:
    rules = {"worker.security.runAsNonRoot": {"canEdit": False}}
    policy = under((TENANT, body(rules, worker={"security": {"runAsNonRoot": True}})))
    assert broken(policy, spec(security={"runAsNonRoot": True})) == []
    assert broken(policy, spec(security={"runAsNonRoot": False})) == [
        "worker.security.runAsNonRoot:canEdit"
    ]


def test_items_beyond_the_defaults_and_locked_items_removed_break_the_policy() -> None:
    rules = {"worker.environmentVariables": {"canAdd": False, "locked": ["HOME"]}}
    home = {"name": "HOME", "value": "/home/u"}
    policy = under((TENANT, body(rules, worker={"environmentVariables": [home]})))
    assert broken(policy, spec(environmentVariables=[home])) == []
    assert broken(policy, spec(environmentVariables=[home, {"name": "X", "value": "1"}])) == [
        "worker.environmentVariables:canAdd"
    ]
    assert broken(policy, spec(environmentVariables=[])) == ["worker.environmentVariables:locked"]
    changed = [{"name": "HOME", "value": "/root"}]
    assert broken(policy, spec(environmentVariables=changed)) == [
        "worker.environmentVariables:locked"
    ]


def test_master_rules_rule_the_master_spec_and_only_where_a_master_runs() -> None:
    policy = under((TENANT, body({"master.compute.gpuDevicesRequest": {"max": 0}})))
    worker = spec(compute={"gpuDevicesRequest": 4})
    assert broken(policy, worker, None) == []
    master = msgspec.convert(
        {"image": "m", "compute": {"gpuDevicesRequest": 1}}, MasterTemplateSpec
    )
    assert broken(policy, worker, master) == ["master.compute.gpuDevicesRequest:max"]
    assert (
        request_field("master.compute.gpuDevicesRequest") == "/masterSpec/compute/gpuDevicesRequest"
    )
    assert request_field(GPU) == "/spec/compute/gpuDevicesRequest"


def test_the_tighter_rule_wins_down_the_tree_whatever_was_written_first() -> None:
    tenant = body({GPU: {"min": 1, "max": 8, "step": 1, "canEdit": True},
                   "worker.imagePullPolicy": {"options": [{"value": "Always"},
                                                          {"value": "IfNotPresent"}]},
                   "worker.labels": {"locked": ["team"], "canAdd": True}},
                  worker={"compute": {"gpuDevicesRequest": 2}})  # fmt: skip
    project = body({GPU: {"min": 2, "max": 4, "step": 2, "required": True},
                    "worker.imagePullPolicy": {"options": [{"value": "Always"}]},
                    "worker.labels": {"locked": ["cost"], "canAdd": False}},
                   worker={"compute": {"gpuDevicesRequest": 4}})  # fmt: skip
    merged = under((TENANT, tenant), (PROJECT, project))
    gpu = merged.rules[GPU]
    assert (gpu.min, gpu.max, gpu.step, gpu.required, gpu.can_edit) == (2, 4, 2, True, True)
    assert [o.value for o in merged.rules["worker.imagePullPolicy"].options or ()] == ["Always"]
    labels = merged.rules["worker.labels"]
    assert (labels.locked, labels.can_add) == (("team", "cost"), False)
    assert merged.worker_defaults == {"compute": {"gpuDevicesRequest": 4}}
    assert merged.sources[GPU] == PROJECT
    # Had the project loosened (say it was written before the tenant's), the merge still holds.
    loose = body({GPU: {"min": 0, "max": 16, "canEdit": True}})
    gpu = under((TENANT, tenant), (PROJECT, loose)).rules[GPU]
    assert (gpu.min, gpu.max) == (1, 8)
    assert (
        under((TENANT, body({GPU: {"canEdit": False}})), (PROJECT, loose)).rules[GPU].can_edit
        is False
    )


@pytest.mark.parametrize(
    ("above", "below", "rule"),
    [
        ({"required": True}, {"required": False}, "required"),
        ({"canEdit": False}, {"canEdit": True}, "canEdit"),
        ({"min": 2}, {"min": 1}, "min"),
        ({"max": 4}, {"max": 5}, "max"),
        ({"step": 2}, {"step": 3}, "step"),
    ],
)
def test_a_lower_scope_that_loosens_is_refused_naming_the_rule(
    above: dict[str, Any], below: dict[str, Any], rule: str
) -> None:
    defaults = {"compute": {"gpuDevicesRequest": 2}}
    upper = under((TENANT, body({GPU: above}, worker=defaults)))
    with pytest.raises(InvalidPolicyError) as caught:
        policies.check(body({GPU: below}), upper, PROJECT)
    assert caught.value.rule == rule
    assert caught.value.field.startswith("/policy/rules/worker/compute/gpuDevicesRequest/")
    assert "the tenant's policy" in str(caught.value)
    # The same rule, or a tighter one, is taken.
    policies.check(body({GPU: above}), upper, PROJECT)


def test_options_and_can_add_cannot_be_loosened_either() -> None:
    upper = under((TENANT, body({"worker.imagePullPolicy": {"options": [{"value": "Always"}]},
                                 "worker.tolerations": {"canAdd": False}})))  # fmt: skip
    with pytest.raises(InvalidPolicyError) as caught:
        policies.check(body({"worker.imagePullPolicy": {"options": [{"value": "Never"}]}}),
                       upper, PROJECT)  # fmt: skip
    assert (caught.value.rule, caught.value.field) == (
        "options", "/policy/rules/worker/imagePullPolicy/options"
    )  # fmt: skip
    with pytest.raises(InvalidPolicyError) as caught:
        policies.check(body({"worker.tolerations": {"canAdd": True}}), upper, PROJECT)
    assert caught.value.rule == "canAdd"


@pytest.mark.parametrize(
    ("rules", "defaults", "field"),
    [
        ({GPU: {"min": 4, "max": 2}}, None, "/policy/rules/worker/compute/gpuDevicesRequest/min"),
        ({GPU: {"step": 0}}, None, "/policy/rules/worker/compute/gpuDevicesRequest/step"),
        ({GPU: {"max": 1.5}}, None, "/policy/rules/worker/compute/gpuDevicesRequest/max"),
        ({"worker.imagePullPolicy": {"options": [{"value": "Sometimes"}]}}, None,
         "/policy/rules/worker/imagePullPolicy/options/0/value"),
        ({"worker.imagePullPolicy": {"options": []}}, None,
         "/policy/rules/worker/imagePullPolicy/options"),
        ({GPU: {"max": 2}}, {"compute": {"gpuDevicesRequest": 3}},
         "/policy/defaults/worker/compute/gpuDevicesRequest"),
        ({GPU: {"canEdit": False}}, None, "/policy/rules/worker/compute/gpuDevicesRequest/canEdit"),
        ({"worker.relatedUrls": {"locked": ["x"]}}, None, None),
        ({"worker.compute.cpuMemoryRequest": {"min": "lots"}}, None,
         "/policy/rules/worker/compute/cpuMemoryRequest/min"),
        ({"worker.compute.cpuCoreRequest": {"max": float("inf")}}, None,
         "/policy/rules/worker/compute/cpuCoreRequest/max"),
    ],
)  # fmt: skip
def test_a_policy_that_cannot_be_is_refused_naming_the_field(
    rules: dict[str, Any], defaults: dict[str, Any] | None, field: str | None
) -> None:
    given = body(rules, worker=defaults)
    if field is None:  # related URLs are keyed by name: locking one is a rule like any other
        policies.check(given, policies.NOTHING, PROJECT)
        return
    with pytest.raises(InvalidPolicyError) as caught:
        policies.check(given, policies.NOTHING, PROJECT)
    assert caught.value.field == field


def test_a_lower_default_breaking_an_upper_rule_is_refused() -> None:
    upper = under((TENANT, body({GPU: {"max": 2}})))
    with pytest.raises(InvalidPolicyError) as caught:
        policies.check(body(worker={"compute": {"gpuDevicesRequest": 3}}), upper, PROJECT)
    assert (caught.value.field, caught.value.rule) == (
        "/policy/defaults/worker/compute/gpuDevicesRequest", "max"
    )  # fmt: skip


def test_a_patch_lays_members_over_and_a_reset_clears_a_subtree() -> None:
    current = body({GPU: {"min": 1, "max": 4}, "worker.image": {"required": True}},
                   worker={"image": "a",
                           "compute": {"gpuDevicesRequest": 1, "cpuCoreRequest": 1}})  # fmt: skip
    given = body({GPU: {"max": 2}}, worker={"compute": {"gpuDevicesRequest": 2}})
    merged = policies.changed(current, given, [])
    assert merged.rules[GPU] == PolicyRule(min=1, max=2)
    assert msgspec.to_builtins(merged.worker_defaults) == {
        "image": "a", "compute": {"gpuDevicesRequest": 2, "cpuCoreRequest": 1}
    }  # fmt: skip
    reset = policies.changed(merged, PolicyBody(), ["worker.compute"])
    assert list(reset.rules) == ["worker.image"]
    assert msgspec.to_builtins(reset.worker_defaults) == {"image": "a"}


def test_a_policy_is_applied_whole_once_and_deleted() -> None:
    policy_id = uuid4()
    given = body({GPU: {"max": 2}})
    (applied,) = policies.apply(None, policy_id, "p", PROJECT, Placement(project_id="3"), given)
    state = policies.fold([applied])
    assert state is not None
    assert state.body == given
    assert policies.apply(state, policy_id, "p", PROJECT, Placement(project_id="3"), given) == []
    (deleted,) = policies.delete(state, PROJECT)
    gone = policies.evolve(state, deleted)
    assert policies.live(gone) is None
    with pytest.raises(policies.PolicyNotFoundError):
        policies.delete(gone, PROJECT)
    assert policies.apply(gone, policy_id, "p", PROJECT, Placement(project_id="3"), given)
    assert policies.stream_of("distributed", PROJECT) == policies.stream_of("distributed", PROJECT)
    assert policies.stream_of("distributed", PROJECT) != policies.stream_of("distributed", TENANT)


def test_a_value_beyond_what_a_decimal_divides_is_judged_not_crashed_on() -> None:
    policy = under((TENANT, body({GPU: {"step": 3}})))
    assert broken(policy, spec(compute={"gpuDevicesRequest": 10**40})) == [f"{GPU}:step"]
    assert broken(policy, spec(compute={"gpuDevicesRequest": 9})) == []


def test_a_default_of_one_frameworks_field_lies_beneath_that_frameworks_workloads_only() -> None:
    defaults = {"slotsPerWorker": 4, "minReplicas": 2, "backoffLimit": 1}
    for framework, kept in (("PyTorch", {"minReplicas": 2}), ("MPI", {"slotsPerWorker": 4})):
        body = TemplateBody(spec=spec(distributedFramework=framework, numWorkers=2))
        combined = msgspec.to_builtins(combine(body, {}, worker_defaults=defaults).spec)
        assert combined["backoffLimit"] == 1  # the policy's, not the service's 6
        for name in ("slotsPerWorker", "minReplicas"):
            assert combined.get(name) == kept.get(name), (framework, name)


MASTER_CASES = [
    ("master.compute.gpuDevicesRequest", {"min": 1, "step": 1},
     {"compute": {"gpuDevicesRequest": 1}}, {"compute": {"gpuDevicesRequest": 0}}, "min"),
    ("master.compute.cpuCoreLimit", {"max": 1.5}, {"compute": {"cpuCoreLimit": 1.5}},
     {"compute": {"cpuCoreLimit": 2}}, "max"),
    ("master.compute.cpuMemoryRequest", {"max": "1Gi"}, {"compute": {"cpuMemoryRequest": "1Gi"}},
     {"compute": {"cpuMemoryRequest": "2Gi"}}, "max"),
    ("master.imagePullPolicy", {"options": [{"value": "Never"}]}, {"imagePullPolicy": "Never"},
     {"imagePullPolicy": "Always"}, "options"),
    ("master.nodePools", {"required": True}, {"nodePools": ["a"]}, {}, "required"),
    ("master.stdin", {"canEdit": False}, {"stdin": False}, {"stdin": True}, "canEdit"),
    ("master.labels", {"canAdd": False}, {}, {"labels": [{"name": "x", "value": "y"}]}, "canAdd"),
]  # fmt: skip


@pytest.mark.parametrize(("path", "rule", "kept", "breaking", "name"), MASTER_CASES)
def test_each_rule_kind_rules_a_separate_master(
    path: str, rule: dict[str, Any], kept: dict[str, Any], breaking: dict[str, Any], name: str
) -> None:
    defaults = {"stdin": False} if name == "canEdit" else {}
    policy = under((TENANT, body({path: rule}, master=defaults)))
    worker = spec()
    accepted = msgspec.convert({"image": "m", **kept}, MasterTemplateSpec)
    refused = msgspec.convert({"image": "m", **breaking}, MasterTemplateSpec)
    assert broken(policy, worker, accepted) == []
    assert broken(policy, worker, refused) == [f"{path}:{name}"]
    assert (
        broken(policy, msgspec.convert({"image": "w", **breaking}, DistributedTemplateSpec)) == []
    )
