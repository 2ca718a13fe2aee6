"""Templates' compliance with a project's policy (`complyToProject`, `complyToReplicaType`): each
template's `complianceIssues`, judged as a workload of that project would run it; one that does
not comply is still listed. Costs a page: docs/decisions/0029-what-a-request-reads.md."""

from typing import Annotated, Final, Literal

import msgspec
from litestar.params import QueryParameter
from litestar.serialization import encode_json

from domain.bounded import Bounded
from domain.org_units import UnknownScopeError
from domain.policy_rules import ComplianceIssue
from domain.values import ScopeRef
from infra.http.adapters import Adapters
from infra.http.callers import Caller, visibility
from infra.http.template_schemas import DistributedTemplate
from projections.queries import template_reads
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
    request: Caller, adapters: Adapters, rows: list[TemplateRow], comply: Comply
) -> list[list[ComplianceIssueShown]]:
    """Each template's issues in the project `comply` names, as of the request's standing."""
    found, prefix = await _found(request, adapters, rows, comply)
    return [_shown(issues, prefix) for issues in found]


async def encoded_issues_of(
    request: Caller, adapters: Adapters, rows: list[TemplateRow], comply: Comply
) -> list[bytes]:
    """`issues_of`, each template's encoded (kept with what was found, which is kept)."""
    found, prefix = await _found(request, adapters, rows, comply)
    return [_encoded(issues, prefix) for issues in found]


async def _found(
    request: Caller, adapters: Adapters, rows: list[TemplateRow], comply: Comply
) -> tuple[list[list[ComplianceIssue]], str | None]:
    project = ScopeRef("project", str(comply.project_id))
    seen, lineages = await visibility(request)
    lineage = lineages.get(project)
    if lineage is None or project not in seen:  # out of sight: as if there were none
        raise UnknownScopeError("project", project.id, field="/complyToProject")
    prefix = None if comply.replica is None else f"{comply.replica.lower()}."
    found = await template_reads.compliance(
        adapters.reads, rows, lineage, policies=adapters.policies, epoch=request.user.policy_epoch
    )
    return found, prefix


def _shown(found: list[ComplianceIssue], prefix: str | None) -> list[ComplianceIssueShown]:
    return [
        ComplianceIssueShown(field=i.field, details=i.details, rule=i.rule)
        for i in found
        if prefix is None or i.field.startswith(prefix)
    ]


def _encoded(found: list[ComplianceIssue], prefix: str | None) -> bytes:
    if not found:  # (a compliant template's list is made afresh: not kept)
        return b"[]"
    # Keyed by the found list's identity, which the entry keeps alive (so unique while kept).
    key = (id(found), prefix)
    kept = _ENCODED.get(key)
    if kept is not None and kept[0] is found:
        return kept[1]
    encoded = encode_json(_shown(found, prefix))
    _ENCODED.put(key, (found, encoded))
    return encoded


_ENCODED: Final[Bounded[tuple[int, str | None], tuple[list[ComplianceIssue], bytes]]] = Bounded(
    8192
)


def with_issues(wire: DistributedTemplate, issues: list[ComplianceIssueShown]) -> CompliantTemplate:
    return CompliantTemplate(**msgspec.structs.asdict(wire), compliance_issues=issues)


def encoded_with_issues(wire: msgspec.Raw, issues: bytes) -> msgspec.Raw:
    """`with_issues` of an encoded template and its encoded issues: one member more."""
    return msgspec.Raw(b"".join((memoryview(wire)[:-1], b',"complianceIssues":', issues, b"}")))
