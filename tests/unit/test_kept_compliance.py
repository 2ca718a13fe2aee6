"""A page's compliance issues are kept per template version and policy; what the page itself
puts into that bounded map must not push out, unseen, an entry it found there (the template
would be shown compliant)."""

from datetime import UTC, datetime
from typing import Any
from uuid import uuid4

import msgspec
import pytest

from domain.bounded import Bounded
from domain.combined import combine
from domain.template_specs import DistributedTemplateSpec
from domain.templates import Template, TemplateBody
from domain.values import ScopeRef, TemplateMeta
from projections.queries import template_reads
from projections.queries.policy_reads import KeptPolicies
from projections.template_catalogue import TemplateRow
from tests.fakes import OnePolicyReads

LINEAGE = (ScopeRef("project", "7"), ScopeRef("tenant", ""))
SPEC = msgspec.convert(
    {"distributedFramework": "PyTorch", "numWorkers": 2, "compute": {"gpuDevicesRequest": 8}},
    DistributedTemplateSpec,
)


def row() -> TemplateRow:
    meta = TemplateMeta(name=f"t{uuid4().hex[:8]}", scope="tenant")
    body = TemplateBody(spec=SPEC)
    template = Template(id=uuid4(), meta=meta, body=body, version=1)
    now = datetime.now(UTC)
    return TemplateRow(template=template, combined=combine(body, {}), created_at=now,
                       created_by="a", updated_at=now, updated_by="a")  # fmt: skip


async def test_a_kept_entry_pushed_out_by_its_own_page_keeps_its_issues(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(template_reads, "_ISSUES", Bounded(2))
    catalogue = OnePolicyReads({"worker.compute.gpuDevicesRequest": {"max": 4}})
    policies = KeptPolicies()
    a, b, c = row(), row(), row()

    async def judged(rows: list[TemplateRow]) -> list[list[Any]]:
        return await template_reads.compliance(catalogue, rows, LINEAGE, policies=policies, epoch=1)

    [issues_a] = await judged([a])
    assert issues_a, "a template above the policy's GPUs has an issue"
    await judged([b])  # a is kept, and now the least recently used
    assert await judged([a, c]) == [issues_a, issues_a]
