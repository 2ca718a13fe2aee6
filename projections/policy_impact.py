"""What a policy change would change, before it is saved: for each project at or under its scope,
every template usable there judged against its effective policy as is and as proposed (as a
workload would run it), and those whose compliance changes. Also: infra/http/policy_impact.py."""

from collections.abc import Collection, Mapping

import msgspec

from domain import policies
from domain.policies import Effective, PolicyBody
from domain.policy_compliance import issues
from domain.policy_rules import ComplianceIssue
from domain.values import ScopeRef
from projections import policy_catalogue, template_catalogue
from projections.executor import Executor
from projections.template_catalogue import TemplateRow


class Changed(msgspec.Struct, frozen=True, kw_only=True):
    """A template whose compliance in a project the change would change: its issues before
    (none: it complies now) and after (none: it would comply)."""

    project: ScopeRef
    row: TemplateRow
    before: list[ComplianceIssue]
    after: list[ComplianceIssue]


async def changed_by(
    conn: Executor,
    projects: list[ScopeRef],
    lineages: Mapping[ScopeRef, tuple[ScopeRef, ...]],
    seen: Collection[ScopeRef],
    scope: ScopeRef,
    body: PolicyBody,
) -> list[Changed]:
    """The templates of `projects` (their lineages in `lineages`) whose compliance `body` in
    `scope`'s place would change; only templates of scopes in `seen`."""
    found: list[Changed] = []
    for project in projects:
        lineage = lineages[project]
        held = await policy_catalogue.of_scopes(conn, lineage)
        now = policy_catalogue.in_force(lineage, held)
        then = _with(lineage, held, scope, body)
        rows = [r for r in await template_catalogue.templates_in(conn, lineage)
                if r.template.meta.scope_ref in seen]  # fmt: skip
        before = await _judged(conn, rows, now)
        after = await _judged(conn, rows, then)
        found.extend(
            Changed(project=project, row=row, before=was, after=will)
            for row, was, will in zip(rows, before, after, strict=True)
            if was != will
        )
    return found


def _with(
    lineage: tuple[ScopeRef, ...],
    held: dict[ScopeRef, policy_catalogue.PolicyRow],
    scope: ScopeRef,
    body: PolicyBody,
) -> Effective:
    """The effective policy of `lineage` with `body` in `scope`'s place."""
    chain = []
    for ref in reversed(lineage):
        if ref == scope:
            chain.append((ref, body))
        elif ref in held:
            chain.append((ref, held[ref].body))
    return policies.effective(chain)


async def _judged(
    conn: Executor, rows: list[TemplateRow], policy: Effective
) -> list[list[ComplianceIssue]]:
    """Each template's issues under `policy`, as a workload of the project would run it."""
    if not policy.rules:
        return [[] for _ in rows]
    combined = await template_catalogue.combined_under(
        conn, rows, policy.worker_defaults, policy.master_defaults
    )
    return [issues(policy, c.spec, c.master) for c in combined]
