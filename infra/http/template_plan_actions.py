"""What `POST .../template-plans` does, from its body to the plan (or the plan applied) and back
to the wire: shared by the API's handler (infra/http/template_plans.py) and the console's page.
See docs/decisions/0027-console-and-api-share-actions.md."""

from typing import Annotated, Any, Final, Literal
from uuid import UUID

import msgspec

from domain.template_documents import NamedScope, parse, scope_problem
from domain.values import ScopeRef
from infra.http.adapters import Adapters
from infra.http.callers import Caller, actor
from services.errors import InvalidRequestError, PlanOutdatedError
from services.template_plan_applies import apply_plan
from services.template_plan_values import Declaration, Declared, Plan, Planned
from services.template_plans import plan_templates

MOST_DOCUMENTS: Final = 1000


class Wire(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """Base of this extension's bodies: camelCase."""


class PlanRequest(Wire, frozen=True, kw_only=True):
    """Documents to plan, each from the file `sources` names at its place; `prune`: delete the
    templates of `scopes` (else the documents') no document holds; `apply: true` applies the plan
    posted back whole (other members ignored) at its `versions`, or the plan made now."""

    documents: Annotated[list[dict[str, Any]], msgspec.Meta(max_length=MOST_DOCUMENTS)]
    sources: list[str] | None = None
    prune: bool = False
    scopes: list[NamedScope] | None = None
    apply: bool = False
    versions: dict[str, int] | None = None  # by template id, as a plan answers them


class ScopeShown(Wire, frozen=True, kw_only=True):
    kind: str
    id: str


class ChangeShown(Wire, frozen=True, kw_only=True):
    field: str  # a JSON pointer into the document (asset versions under /assetVersions)
    before: Any
    after: Any


class RunnableShown(Wire, frozen=True, kw_only=True):
    is_runnable: bool
    issue: str | None = None


class IssueShown(Wire, frozen=True, kw_only=True):
    field: str
    details: str
    rule: str | None = None


class AssetShown(Wire, frozen=True, kw_only=True):
    field: str
    name: str
    kind: str
    id: UUID
    scope: ScopeShown
    version: int
    link: bool | None


class TemplatePlanShown(Wire, frozen=True, kw_only=True):
    name: str
    scope: ScopeShown
    scope_name: str
    action: Literal["create", "update", "unchanged", "delete"]
    document: int | None
    source: str | None
    template_id: UUID | None
    version: int
    changes: list[ChangeShown]
    runnable: RunnableShown | None
    compliance_issues: list[IssueShown]
    assets: list[AssetShown]


class ReadShown(Wire, frozen=True, kw_only=True):
    stream_id: UUID
    kind: str
    name: str
    version: int


class PlanAnswer(Wire, frozen=True, kw_only=True):
    """The plan, with what it was made from: posted back with `apply: true`, it applies."""

    changed: bool
    applied: bool
    templates: list[TemplatePlanShown]
    versions: dict[UUID, int]
    reads: list[ReadShown]
    documents: list[dict[str, Any]]
    sources: list[str] | None
    prune: bool
    scopes: list[NamedScope] | None
    written: dict[str, int] | None = None  # applied: each template's new version


async def plan_from(request: Caller, data: PlanRequest, adapters: Adapters) -> PlanAnswer:
    """Plan the documents (nothing written) or, `apply: true`, apply them all or none:
    PlanOutdatedError when anything the plan read has moved since, naming it."""
    declared = _declared(request, data)
    lookups = adapters.names
    if not data.apply:
        plan = await plan_templates(declared, streams=adapters.streams, lookups=lookups)
        return _answer(data, plan, None)
    versions = None if data.versions is None else _streams(data.versions)
    applied = await apply_plan(declared, versions, streams=adapters.streams, lookups=lookups)
    return _answer(data, applied.plan, applied.written)


def _streams(versions: dict[str, int]) -> dict[UUID, int]:
    """A key that is no template id names nothing the plan read: the plan is not this one."""
    parsed: dict[UUID, int] = {}
    for key, version in versions.items():
        try:
            parsed[UUID(key)] = version
        except ValueError:
            raise PlanOutdatedError([f"{key!r} names no template the plan read"]) from None
    return parsed


def _declared(request: Caller, data: PlanRequest) -> Declared:
    sources = data.sources or []
    if data.sources is not None and len(sources) != len(data.documents):
        raise InvalidRequestError("/sources", "one source for each document")
    for i, scope in enumerate(data.scopes or ()):
        if (reason := scope_problem(scope)) is not None:  # `{}` must not prune the tenant
            raise InvalidRequestError(f"/scopes/{i}", reason)
    found = []
    for i, raw in enumerate(data.documents):
        source = sources[i] if sources else None
        found.append(Declaration(i, source, parse(i, source, raw)))
    return Declared(
        documents=tuple(found),
        metadata=actor(request),
        prune=data.prune,
        scopes=None if data.scopes is None else tuple(data.scopes),
    )


def _scope(scope: ScopeRef) -> ScopeShown:
    return ScopeShown(kind=scope.kind, id=scope.id)


def _shown(planned: Planned) -> TemplatePlanShown:
    runnable = planned.runnable
    return TemplatePlanShown(
        name=planned.name,
        scope=_scope(planned.scope),
        scope_name=planned.scope_label,
        action=planned.action,
        document=planned.document,
        source=planned.source,
        template_id=planned.template_id,
        version=planned.version,
        changes=[ChangeShown(field=c.field, before=c.before, after=c.after)
                 for c in planned.changes],
        runnable=None if runnable is None else RunnableShown(
            is_runnable=runnable.is_runnable, issue=runnable.issue
        ),
        compliance_issues=[
            IssueShown(field=i.field, details=i.details, rule=i.rule) for i in planned.compliance
        ],
        assets=[
            AssetShown(
                field=a.field, name=a.name, kind=a.kind, id=a.asset_id, scope=_scope(a.scope),
                version=a.version, link=a.link,
            )
            for a in planned.assets
        ],
    )  # fmt: skip


def _answer(data: PlanRequest, plan: Plan, written: dict[str, int] | None) -> PlanAnswer:
    return PlanAnswer(
        changed=plan.changed,
        applied=written is not None,
        templates=[_shown(t) for t in plan.templates],
        versions=plan.versions,
        reads=[
            ReadShown(stream_id=r.stream_id, kind=r.kind, name=r.name, version=r.version)
            for r in plan.reads
        ],
        documents=data.documents,
        sources=data.sources,
        prune=data.prune,
        scopes=data.scopes,
        written=written,
    )


def named_scope(label: str) -> NamedScope:
    """`project:NAME@CLUSTER` and the like as the scope it names."""
    if label == "tenant":
        return NamedScope(tenant=True)
    kind, _, rest = label.partition(":")
    name, _, cluster = rest.partition("@")
    if kind not in ("cluster", "department", "project") or not name:
        raise InvalidRequestError("scope", "tenant, or KIND:NAME (cluster, department, project)")
    if kind == "cluster":
        return NamedScope(cluster=name)
    fields: dict[str, str | None] = {kind: name, "cluster": cluster or None}
    return msgspec.convert(fields, NamedScope)
