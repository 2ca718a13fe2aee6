"""Templates as code in the console: pasted YAML documents planned, then applied all or none at
the versions the plan read, through the API's own action (`plan_from`), so the page shows and
refuses exactly what `POST .../template-plans` answers."""

import re
from typing import Any, Final

import msgspec
import yaml
from litestar import get, post
from litestar.di import NamedDependency
from litestar.response import Template

from domain.errors import TrainplateError
from infra.console.asset_pages_common import form_values
from infra.console.pages_common import page
from infra.http.adapters import Adapters
from infra.http.callers import Caller
from infra.http.problems import status_for
from infra.http.template_plan_actions import (
    MOST_DOCUMENTS,
    PlanAnswer,
    PlanRequest,
    named_scope,
    plan_from,
)
from services.errors import InvalidRequestError

PLANS: Final = "/template-plans"
MOST_CHARACTERS: Final = 4_000_000
TITLES: Final = {403: "Not permitted", 404: "Not found", 409: "Conflict"}


class Sent(msgspec.Struct, kw_only=True):
    """The form as sent: the documents' text, the prune switch and its scopes."""

    text: str = ""
    prune: bool = False
    scopes: str = ""
    applying: bool = False


def _documents(text: str) -> list[Any]:
    """The YAML documents, empty ones left out; a text that is not YAML names where."""
    if len(text) > MOST_CHARACTERS:
        raise InvalidRequestError("/documents", f"at most {MOST_CHARACTERS} characters")
    try:
        found = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = "" if mark is None else f" at line {mark.line + 1}, column {mark.column + 1}"
        problem = getattr(error, "problem", None) or "not YAML"
        raise InvalidRequestError("/documents", f"not YAML{where}: {problem}") from None
    if not found:
        raise InvalidRequestError("/documents", "paste at least one template document")
    if len(found) > MOST_DOCUMENTS:
        raise InvalidRequestError("/documents", f"at most {MOST_DOCUMENTS} documents")
    return found


def _request(sent: Sent, versions_sent: str) -> PlanRequest:
    """Run:ai's body for the plan: the documents as the CLI reads them from files."""
    documents = _documents(sent.text)
    labels = [s for s in re.split(r"[\s,]+", sent.scopes) if s]
    scopes = [named_scope(label) for label in labels] or None
    if not sent.applying:
        return PlanRequest(documents=documents, prune=sent.prune, scopes=scopes)
    try:
        versions = msgspec.json.decode(versions_sent, type=dict[str, int])
    except msgspec.DecodeError:
        raise InvalidRequestError("/versions", "not the plan's versions: plan again") from None
    return PlanRequest(
        documents=documents, prune=sent.prune, scopes=scopes, apply=True, versions=versions
    )


def _shown(value: Any) -> str:
    return "(none)" if value is None else msgspec.json.encode(value).decode()


def _render(
    request: Caller,
    sent: Sent,
    answer: PlanAnswer | None = None,
    problem: tuple[str, str] | None = None,
    status: int = 200,
) -> Template:
    versions = "" if answer is None else msgspec.json.encode(answer.versions).decode()
    return page(
        request, "template_plans.html.j2", title="Template plans", section="plans", sent=sent,
        answer=answer, problem=problem, versions=versions, shown=_shown, status_code=status,
    )  # fmt: skip


@get(PLANS, include_in_schema=False)
async def plans_form(request: Caller) -> Template:
    return _render(request, Sent())


@post(PLANS, include_in_schema=False)
async def plan_documents(request: Caller, adapters: NamedDependency[Adapters]) -> Template:
    """Plan (`action` other than apply) or apply; a refusal is the service's, on the page."""
    values = await form_values(request)
    sent = Sent(
        text=values.get("documents", ""),
        prune=values.get("prune") == "on",
        scopes=values.get("scopes", ""),
        applying=values.get("action") == "apply",
    )
    try:
        answer = await plan_from(request, _request(sent, values.get("versions", "")), adapters)
    except TrainplateError as exc:
        status = status_for(exc)
        return _render(request, sent, problem=(TITLES.get(status, "Refused"), str(exc)),
                       status=status)  # fmt: skip
    return _render(request, sent, answer)


TEMPLATE_PLAN_PAGES: Final = (plans_form, plan_documents)
