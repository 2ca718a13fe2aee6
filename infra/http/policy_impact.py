"""Impact preview of a policy change (`POST /api/v2/policy/distributed/impact`, ours): checked as
the PUT is, written nowhere, which templates would stop complying, or comply again, in which
projects. How: projections/policy_impact.py, docs/decisions/0029-what-a-request-reads.md."""

from typing import Final

import msgspec
from litestar import post
from litestar.di import NamedDependency
from litestar.params import JSONBody

from domain.commands import ApplyPolicy
from infra.http import policy_schemas as schemas
from infra.http.adapters import Adapters
from infra.http.callers import Caller, actor, visibility
from infra.http.consistency import READS
from infra.http.numerals import natural
from infra.http.policies import PATH, TAGS, OverwriteRequest, scope_of_meta
from infra.http.template_compliance import ComplianceIssueShown
from projections.queries import Viewer
from projections.queries import policy_reads as queries
from services import policies as use_cases


class TemplateCompliance(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    project_id: str
    project_name: str
    template_id: str
    template_name: str
    compliant_now: bool
    # What would break the policy once it is saved (empty: the template would comply).
    compliance_issues: list[ComplianceIssueShown]


class PolicyImpact(msgspec.Struct, frozen=True, kw_only=True):
    """The templates whose compliance the change would change, project by project."""

    templates: list[TemplateCompliance]


@post(
    f"{PATH}/impact",
    status_code=200,
    tags=TAGS,
    operation_id="preview_distributed_policy",
    opt={READS: True},  # a preview: the templates it judges hold the caller's own writes
)
async def preview(
    request: Caller, data: JSONBody[OverwriteRequest], adapters: NamedDependency[Adapters]
) -> PolicyImpact:
    scope = scope_of_meta(data.meta)
    body = schemas.body_of(data.policy)
    command = ApplyPolicy(
        scope=scope, name=data.meta.name or "", body=body, metadata=actor(request),
        validate_only=True,
    )  # fmt: skip
    async with adapters.streams.session() as session:  # admins only; refused as a PUT would be
        await use_cases.apply_policy(command, streams=session)
    seen, lineages = await visibility(request)
    projects = sorted(
        (ref for ref, lineage in lineages.items() if ref.kind == "project" and scope in lineage),
        key=lambda ref: natural(ref.id) or 0,
    )
    names, changed = await queries.impact(
        adapters.reads, projects, Viewer(seen, lineages), scope, body
    )
    return PolicyImpact(
        templates=[
            TemplateCompliance(
                project_id=c.project.id,
                project_name=names.get(c.project.id, ""),
                template_id=str(c.row.template.id),
                template_name=c.row.template.meta.name,
                compliant_now=not c.before,
                compliance_issues=[
                    ComplianceIssueShown(field=i.field, details=i.details, rule=i.rule)
                    for i in c.after
                ],
            )
            for c in changed
        ]
    )


IMPACT_ROUTES: Final = (preview,)
