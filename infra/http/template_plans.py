"""Templates as code (ours): `POST .../template-plans` plans template documents (and, with
`apply: true` and the versions the plan read, applies all or none); `GET .../template-documents`
exports them. Also: services/template_plans.py; docs/decisions/0026-templates-as-code.md."""

from typing import Annotated, Final

from litestar import get, post
from litestar.di import NamedDependency
from litestar.params import JSONBody, QueryParameter

from domain.template_documents import NamedScope, TemplateDocument
from infra.http.adapters import Adapters
from infra.http.callers import Caller, seen_scopes
from infra.http.template_plan_actions import PlanAnswer, PlanRequest, Wire, named_scope, plan_from
from projections.queries import template_document_reads

PREFIX: Final = "/api/v1/trainplate"
PLANS: Final = f"{PREFIX}/template-plans"
DOCUMENTS: Final = f"{PREFIX}/template-documents"


class DocumentShown(Wire, frozen=True, kw_only=True):
    path: str  # where an export puts it: `<scope>/<name>.yaml`
    document: TemplateDocument


class DocumentList(Wire, frozen=True, kw_only=True):
    documents: list[DocumentShown]


@post(PLANS, status_code=200, tags=["Templates as code"])
async def plan_templates(
    request: Caller, data: JSONBody[PlanRequest], adapters: NamedDependency[Adapters]
) -> PlanAnswer:
    """Plan the documents (nothing written) or, `apply: true`, apply them all or none: 409
    when anything the plan read has moved since, naming it."""
    return await plan_from(request, data, adapters)


@get(DOCUMENTS, tags=["Templates as code"])
async def export_templates(
    request: Caller,
    adapters: NamedDependency[Adapters],
    scopes: Annotated[list[str] | None, QueryParameter(name="scope")] = None,
) -> DocumentList:
    """The templates the caller may see as documents, of the scopes named (`project:NAME`,
    `project:NAME@CLUSTER`, `department:NAME`, `cluster:NAME`, `tenant`), else of all."""
    wanted = None if scopes is None else [named_scope(label) for label in scopes]
    found = await template_document_reads.exported(
        adapters.reads, await seen_scopes(request), wanted
    )
    return DocumentList(
        documents=[
            DocumentShown(path=f"{_folder(d.metadata.scope)}/{d.metadata.name}.yaml", document=d)
            for d in found
        ]
    )


def _folder(scope: NamedScope) -> str:
    return scope.label.replace(":", "-").replace("@", "-")


TEMPLATE_PLAN_ROUTES: Final = (plan_templates, export_templates)
