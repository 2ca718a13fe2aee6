"""Templates' compliance with a project's policy (`complyToProject`, `complyToReplicaType`): each
template's `complianceIssues`, judged as a workload of that project would run it; one that does
not comply is still listed. Costs a page: docs/decisions/0029-what-a-request-reads.md."""

from typing import Annotated, Literal

import msgspec
from litestar.params import QueryParameter
from litestar.serialization import encode_json

from domain.org_units import UnknownScopeError
from domain.values import ScopeRef
from infra.http.callers import Caller, visibility
from infra.http.template_schemas import DistributedTemplate
from projections.queries import Reads, template_reads
from projections.template_catalogue import TemplateRow

ComplyToProject = Annotated[int | None, QueryParameter(name="complyToProject")]
ComplyToReplicaType = Annotated[
    Literal["Worker", "Master"] | None, QueryParameter(name="complyToReplicaType")
]
ComplyToWorkloadType = Annotated[
    Literal["Workspace", "Training", "Distributed", "Inference", "DistributedInference"] | None,
    QueryParameter(name="complyToWorkloadType"),
]


class Comply(msgspec.Struct, frozen=True, kw_only=True):
    project_id: int
    replica: Literal["Worker", "Master"] | None = None


class ComplianceIssueShown(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    field: str | None = None
    details: str
    rule: str | None = None


class CompliantTemplate(DistributedTemplate, frozen=True, kw_only=True, rename="camel"):
    """Run:ai's DistributedTemplatesListResponseItem: a template and its compliance issues."""

    compliance_issues: list[ComplianceIssueShown]


def comply_of(project_id: int | None, replica: Literal["Worker", "Master"] | None) -> Comply | None:
    return None if project_id is None else Comply(project_id=project_id, replica=replica)


async def issues_of(
    request: Caller, reads: Reads, rows: list[TemplateRow], comply: Comply
) -> list[list[ComplianceIssueShown]]:
    """Each template's issues in the project `comply` names."""
    project = ScopeRef("project", str(comply.project_id))
    seen, lineages = await visibility(request)
    lineage = lineages.get(project)
    if lineage is None or project not in seen:  # out of sight: as if there were none
        raise UnknownScopeError("project", project.id, field="/complyToProject")
    prefix = None if comply.replica is None else f"{comply.replica.lower()}."
    return [
        [
            ComplianceIssueShown(field=i.field, details=i.details, rule=i.rule)
            for i in found
            if prefix is None or i.field.startswith(prefix)
        ]
        for found in await template_reads.compliance(reads, rows, lineage)
    ]


def with_issues(wire: DistributedTemplate, issues: list[ComplianceIssueShown]) -> CompliantTemplate:
    return CompliantTemplate(**msgspec.structs.asdict(wire), compliance_issues=issues)


def encoded_with_issues(wire: msgspec.Raw, issues: list[ComplianceIssueShown]) -> msgspec.Raw:
    """`with_issues` of an encoded template, encoded: its object with one member more."""
    return msgspec.Raw(
        b"".join((memoryview(wire)[:-1], b',"complianceIssues":', encode_json(issues), b"}"))
    )
