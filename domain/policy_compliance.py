"""A workload's specs against a project's effective policy (domain/policies.py): Run:ai's
`complianceIssues` of a template, and the refusal of a submission. What is checked is what would
run: the combined specs over the policy's defaults (domain/combined.py)."""

from typing import Any

import msgspec

from domain.policies import Effective
from domain.policy_fields import FIELDS, replica_of, spec_path
from domain.policy_rules import ComplianceIssue, item_issues, value_issues, value_of
from domain.template_specs import DistributedTemplateSpec, MasterTemplateSpec
from domain.workloads import InvalidWorkloadError


def issues(
    policy: Effective, spec: DistributedTemplateSpec, master: MasterTemplateSpec | None
) -> list[ComplianceIssue]:
    """Every way the specs break the policy's rules, in the rules' order. (Both specs are taken
    as JSON: lists as lists, as the policy's defaults hold them.)"""
    values = {
        "worker": msgspec.json.decode(msgspec.json.encode(spec)),
        "master": None if master is None else msgspec.json.decode(msgspec.json.encode(master)),
    }
    found: list[ComplianceIssue] = []
    for path, rule in policy.rules.items():
        replica = values[replica_of(path)]
        if replica is None:  # no master runs: its rules have nothing to rule
            continue
        value = value_of(replica, path)
        default = value_of(policy.defaults_of(path), path)
        if FIELDS[path].kind == "items":
            found += item_issues(path, rule, value or [], default or [])
            continue
        if value is None or value == [] or value == ():
            if rule.required:
                found.append(ComplianceIssue(field=path, details="a value is required",
                                             rule="required"))  # fmt: skip
            continue
        if rule.can_edit is False and value != default:
            found.append(
                ComplianceIssue(
                    field=path,
                    details=f"cannot be changed from the policy's default {_shown(default)}",
                    rule="canEdit",
                )
            )
        found += value_issues(path, rule, value)
    return found


def request_field(path: str) -> str:
    """Where a submission gives a policy path's field: "worker.compute.gpuDevicesRequest" ->
    "/spec/compute/gpuDevicesRequest", the master's under "/masterSpec"."""
    head = "/masterSpec" if replica_of(path) == "master" else "/spec"
    return f"{head}/{spec_path(path).replace('.', '/')}"


def _shown(value: Any) -> str:
    return "(none)" if value is None else str(msgspec.json.encode(value), "utf-8")


class PolicyViolationError(InvalidWorkloadError):
    """A submission whose workload would break its project's policy: `field` points at the
    request's field, `policy_field` at the policy's, `rule` names the rule broken."""

    slug = "policy-violation"

    def __init__(self, issue: ComplianceIssue) -> None:
        super().__init__(request_field(issue.field), f"the project's policy: {issue.details}")
        self.rule = issue.rule
        self.policy_field = issue.field


def check_submission(
    policy: Effective, spec: DistributedTemplateSpec, master: MasterTemplateSpec | None
) -> None:
    """Refuse a workload that breaks its project's policy, naming the first field and rule."""
    found = issues(policy, spec, master)
    if found:
        raise PolicyViolationError(found[0])
