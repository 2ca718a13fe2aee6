"""The new-template form, step by step as the guide walks it, to CREATE TEMPLATE: it becomes
Run:ai's creation body (form_document.py) for the API's own create (`create_from`), so every
rule is the domain's, a refusal shown at its field. See docs/decisions/0030-console-forms.md."""

from typing import Annotated, Any, Final
from uuid import UUID

import msgspec
from litestar import get, post
from litestar.di import NamedDependency
from litestar.params import FromQuery, QueryParameter
from litestar.response import Redirect, Template

from domain.errors import TrainplateError
from domain.org_units import UnknownScopeError
from domain.tenant_settings import check_framework
from domain.values import ScopeKind
from infra.console.form_document import Built, build, decode_pointer, decoded, field_of
from infra.console.form_fields import Field
from infra.console.form_state import (
    LINKED_AT_FIRST,
    LOADS,
    Form,
    all_fields,
    choices_for,
    copied_values,
    form_values,
    load_into,
    show_linked,
    to_copy,
    with_uses,
)
from infra.console.labels import label_of
from infra.console.linked import copied_now
from infra.console.pages_common import page
from infra.console.scopes import scope_of
from infra.http.adapters import Adapters
from infra.http.callers import Caller
from infra.http.problems import status_for
from infra.http.template_actions import check_name_free, create_from
from services.errors import NameTakenError

NEW: Final = "/templates/new"
FRAMEWORK: Final = "/spec/distributedFramework"
NAME_CHECK: Final = "/templates/name-check"
SCOPE_KINDS: Final[tuple[ScopeKind, ...]] = ("tenant", "cluster", "department", "project")
CONFIGURATIONS: Final = (
    ("workers-and-master", "Workers & master"),
    ("workers-only", "Workers only"),
)
USES: Final = (("link", "Link it"), ("copy", "Use it without linking"))


def render_form(
    request: Caller,
    form: Form,
    choices: dict[str, Any],
    status: int = 200,
    *,
    editing: dict[str, Any] | None = None,
) -> Template:
    """The form; `editing` (the template's id, name and version) makes it the edit form."""

    def linked_by(field: Any) -> str | None:
        """The linked asset that sets this field, if one does."""
        owner = getattr(field, "owner", "") or ""
        if not owner:
            return None
        under = "/master/spec" if field.pointer.startswith("/master/") else "/spec"
        key = f"{under}/compute" if owner == "compute" else under
        name = form.linked_from.get(key)
        return (
            None
            if name is None
            else f"{'compute resource' if owner == 'compute' else owner} {name}"
        )

    scope = form.values.get("/scope")
    return page(
        request,
        "template_form.html.j2",
        title=f"Edit {editing['name']}" if editing else "New training template",
        section="templates",
        form=form,
        editing=editing,
        configurations=CONFIGURATIONS,
        uses=USES,
        linked_by=linked_by,
        label_of=label_of,
        status_code=status,
        off_here=[f for f, where in choices["frameworks_off"].items() if scope in where],
        **choices,
    )


@get(NEW, include_in_schema=False)
async def new_template(request: Caller, adapters: NamedDependency[Adapters]) -> Template:
    choices = await choices_for(request, adapters)
    values = {"/configuration": "workers-and-master", **LINKED_AT_FIRST}
    return render_form(request, Form(step=1, values=values), choices)


@post(NEW, include_in_schema=False)
async def submit_template_form(
    request: Caller, adapters: NamedDependency[Adapters]
) -> Template | Redirect:
    sent = await request.form()
    choices = await choices_for(request, adapters, sent)  # a row for each one it fills
    fields = all_fields(choices["sections"])
    values = form_values(sent, fields)
    action = str(values.pop("action", "create"))
    values.pop("_csrf_token", None)
    form = Form(step=2, values=with_uses(values))
    if action == "continue":
        return await _continue(request, adapters, form, choices)
    if action.startswith("load-") and action.removeprefix("load-") in LOADS:
        load_into(form, action.removeprefix("load-"), choices)
        show_linked(form, choices["rows"])
        return render_form(request, form, choices)
    return await _create(request, adapters, form, fields, choices)


async def _continue(
    request: Caller, adapters: Adapters, form: Form, choices: dict[str, Any]
) -> Template:
    """CONTINUE: the name must be free in the chosen scope (the API's name-availability)."""
    name = str(form.values.get("/meta/name") or "").strip()
    kind, scope_id = scope_of(str(form.values.get("/scope") or ""))
    form.step = 1
    if not name:
        form.errors["/meta/name"] = "Enter a name for the template."
    scope_kind = next((k for k in SCOPE_KINDS if k == kind), None)
    if scope_kind is None:
        form.errors["/scope"] = "Choose the scope."
    if framework_of(form) not in choices["frameworks"]:
        form.errors[FRAMEWORK] = "Choose the framework."
    if form.errors or scope_kind is None:
        return render_form(request, form, choices, 400)
    # A framework turned off for the scope's cluster is refused here already, by the rule the
    # creation applies (the form shows it disabled where scripts run).
    cluster = next((s.cluster for s in choices["scopes"] if s.value == form.values["/scope"]), None)
    try:
        check_framework(choices["settings"], FRAMEWORK, framework_of(form), cluster)
    except TrainplateError as exc:
        form.errors[FRAMEWORK] = said(exc)
        return render_form(request, form, choices, status_for(exc))
    try:
        await check_name_free(
            request, adapters, name, scope_kind, scope_id, fields=("/scope", "/meta/name")
        )
    except TrainplateError as exc:
        form.errors[str(exc.facts.get("field") or "/meta/name")] = said(exc)
        return render_form(request, form, choices, status_for(exc))
    form.step = 2
    show_linked(form, choices["rows"])
    return render_form(request, form, choices)


class NameCheck(msgspec.Struct, frozen=True):
    """What the name field says as it is typed: `free` is None where nothing can be said yet
    (no name, no scope, a scope the caller may not see)."""

    free: bool | None
    message: str


@get(NAME_CHECK, include_in_schema=False)
async def name_check(
    request: Caller,
    adapters: NamedDependency[Adapters],
    chosen: Annotated[str, QueryParameter(name="scope")] = "",  # `scope` is the ASGI scope's
    name: FromQuery[str] = "",
) -> NameCheck:
    """Whether `name` is free in `scope`, through the API's own name-availability, for the
    script on the name field; CONTINUE checks it again, so a page without scripts loses nothing.
    A read: no CSRF token, as a cross-site page cannot read the answer."""
    kind, scope_id = scope_of(chosen)
    scope_kind = next((k for k in SCOPE_KINDS if k == kind), None)
    if not name.strip() or scope_kind is None:
        return NameCheck(None, "")
    try:
        await check_name_free(
            request, adapters, name.strip(), scope_kind, scope_id, fields=("scope", "name")
        )
    except NameTakenError:
        return NameCheck(False, "This name is taken")
    except UnknownScopeError:
        return NameCheck(None, "")
    return NameCheck(True, "This name is available")


async def _create(
    request: Caller,
    adapters: Adapters,
    form: Form,
    fields: list[Field],
    choices: dict[str, Any],
) -> Template | Redirect:
    """CREATE TEMPLATE through the API's own create; a refusal goes next to its field."""
    now = await copied_now(request, adapters, to_copy(form.values))
    copied, values = copied_values(form.values, now)
    built: Built = build(fields, values, copied=copied)
    known = {f.pointer for f in fields}
    if built.unknown:
        return refused_choices(request, form, choices, built)
    try:
        wire, _ = await create_from(request, decoded(built), adapters)
    except msgspec.ValidationError as exc:
        return refused_at(request, form, choices, decode_pointer(exc), str(exc), 400, built, known)
    except TrainplateError as exc:
        at = exc.facts.get("field")
        return refused_at(
            request, form, choices, str(at or ""), said(exc), status_for(exc), built, known
        )
    return Redirect(f"/console/templates/{UUID(wire.meta.id)}", status_code=303)


def framework_of(form: Form) -> str | None:
    return str(form.values.get(FRAMEWORK) or "") or None


def said(exc: TrainplateError) -> str:
    """The refusal as the domain words it, without the pointer it leads with."""
    text = str(exc)
    field = exc.facts.get("field")
    return text.removeprefix(f"{field}: ") if isinstance(field, str) else text


def refused_choices(
    request: Caller,
    form: Form,
    choices: dict[str, Any],
    built: Built,
    editing: dict[str, Any] | None = None,
) -> Template:
    """The form again, each of its own choices sent with a value it does not offer named."""
    form.errors.update(built.unknown)
    show_linked(form, choices["rows"])
    return render_form(request, form, choices, 400, editing=editing)


def refused_at(
    request: Caller,
    form: Form,
    choices: dict[str, Any],
    pointer: str,
    message: str,
    status: int,
    built: Built,
    known: set[str],
    editing: dict[str, Any] | None = None,
) -> Template:
    """The form again, the refusal next to the field its pointer names (else above them all)."""
    at = field_of(pointer, built, known) if pointer else None
    if at is None:
        form.general_error = f"{pointer}: {message}" if pointer else message
    else:
        form.errors[at] = message
    show_linked(form, choices["rows"])
    return render_form(request, form, choices, status, editing=editing)


FORM_ROUTES: Final = (new_template, submit_template_form, name_check)
