"""The new-template form, step by step as the guide walks it: scope, distributed architecture,
framework, Workers & master or Workers only, a unique name, CONTINUE; then Environment, Compute
resources, Data & storage and General settings (each environment or compute resource loaded
from the ones the scope can use, linked or used without linking, or own settings), the toggle
for a different master setup, and CREATE TEMPLATE.

The form becomes Run:ai's creation body (form_document.py) and goes to the API's own create
(`create_from`): every rule is the domain's, and its refusal is shown next to the field its
JSON pointer names, with nothing written."""

from typing import Any, Final
from uuid import UUID

import msgspec
from litestar import get, post
from litestar.di import NamedDependency
from litestar.response import Redirect, Template

from domain.errors import TrainplateError
from domain.tenant_settings import FRAMEWORKS, GPU_OPTIMIZATION
from domain.values import ScopeKind
from infra.http.adapters import Adapters
from infra.http.callers import Caller
from infra.http.console.form_document import Built, build, decode_pointer, decoded, field_of
from infra.http.console.form_fields import (
    Field,
    Group,
    compute_fields,
    environment_fields,
    general_fields,
    master_fields,
    scheduling_fields,
    storage_fields,
)
from infra.http.console.labels import label_of
from infra.http.console.linked import as_template_values, loadable
from infra.http.console.pages_common import page
from infra.http.console.scopes import scope_of, visible_scopes
from infra.http.console.template_detail import flattened, shown
from infra.http.problems import status_for
from infra.http.templates import check_name_free, create_from
from infra.http.tenant_settings import switches
from projections.asset_catalogue import AssetRow

NEW: Final = "/templates/new"
SCOPE_KINDS: Final[tuple[ScopeKind, ...]] = ("tenant", "cluster", "department", "project")
CONFIGURATIONS: Final = (
    ("workers-and-master", "Workers & master"),
    ("workers-only", "Workers only"),
)
USES: Final = (("link", "Link it"), ("copy", "Use it without linking"))
# (the asset select, link or copy, the pointer its values go under)
LOADS: Final = {
    "environment": ("/assets/environment", "/environmentUse", "/spec"),
    "compute": ("/assets/compute", "/computeUse", "/spec"),
    "master-environment": ("/master/assets/environment", "", "/master/spec"),
    "master-compute": ("/master/assets/compute", "", "/master/spec"),
}


class Form(msgspec.Struct, kw_only=True):
    """Everything a render of the form needs."""

    step: int
    values: dict[str, Any]
    errors: dict[str, str] = msgspec.field(default_factory=dict)
    general_error: str | None = None
    linked: dict[str, Any] = msgspec.field(default_factory=dict)  # pointer -> a linked value
    linked_from: dict[str, str] = msgspec.field(default_factory=dict)  # pointer -> asset name


async def choices_for(request: Caller, adapters: Adapters) -> dict[str, Any]:
    settings = await switches(adapters)
    rows = await loadable(request, adapters)

    def of(*kinds: str) -> tuple[tuple[str, str], ...]:
        return tuple((str(r.asset_id), r.meta.name) for r in rows if r.kind in kinds)

    sources = tuple(
        (f"{r.kind}|{r.asset_id}", f"{r.meta.name} ({r.kind})")
        for r in rows
        if r.kind not in ("environment", "compute")
    )
    sections = {
        "environment": environment_fields("/spec"),
        "compute": compute_fields("/spec", gpu_limits=settings.get(GPU_OPTIMIZATION)),
        "scheduling": scheduling_fields("/spec"),
        "storage": storage_fields(sources),
        "general": general_fields(),
        "master": master_fields(),
    }
    return {
        "scopes": await visible_scopes(request, adapters),
        "frameworks": [f for f in FRAMEWORKS if settings.allows_framework(f, None)],
        "environments": of("environment"),
        "computes": of("compute"),
        "sections": sections,
        "rows": {str(r.asset_id): r for r in rows},
    }


def all_fields(sections: dict[str, tuple[Group, ...]]) -> list[Field]:
    top = [
        Field(pointer="/scope", label="Scope", kind="select"),
        Field(pointer="/spec/distributedFramework", label="Framework", kind="select"),
        Field(pointer="/configuration", label="Distributed configuration", kind="radio"),
        Field(pointer="/meta/name", label="Template name"),
        Field(pointer="/meta/description", label="Description"),
        Field(pointer="/assets/environment", label="Environment", kind="select"),
        Field(pointer="/assets/compute", label="Compute resource", kind="select"),
        Field(pointer="/spec/numWorkers", label="Number of workers", kind="number"),
        Field(pointer="/master/assets/environment", label="Master environment", kind="select"),
        Field(pointer="/master/assets/compute", label="Master compute resource", kind="select"),
    ]
    return top + [f for groups in sections.values() for g in groups for f in g.fields]


def form_values(form: Any, fields: list[Field]) -> dict[str, Any]:
    multi = {f.pointer for f in fields if f.kind == "multi"}
    found: dict[str, Any] = {}
    for key in form:
        found[key] = list(form.getall(key)) if key in multi else str(form.get(key))
    return found


def show_linked(form: Form, rows: dict[str, AssetRow]) -> None:
    """The values each linked asset puts in the spec, shown read-only in its fields."""
    for select, use, under in LOADS.values():
        chosen = form.values.get(select)
        if not chosen or chosen not in rows or (use and form.values.get(use) == "copy"):
            continue
        for pointer, value in flattened(as_template_values(rows[chosen])):
            form.linked[f"{under}{pointer}"] = shown(value)
        owner_prefix = f"{under}/compute" if "compute" in select else under
        form.linked_from[owner_prefix] = rows[chosen].meta.name


def load_into(form: Form, which: str, rows: dict[str, AssetRow]) -> None:
    """LOAD: used without linking, the asset's values become the form's own, editable."""
    select, use, under = LOADS[which]
    chosen = form.values.get(select)
    if not chosen or chosen not in rows or not use or form.values.get(use) != "copy":
        return
    for pointer, value in flattened(as_template_values(rows[chosen])):
        form.values[f"{under}{pointer}"] = value if isinstance(value, list) else str(value)
    form.values[select] = ""


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
        **choices,
    )


@get(NEW, include_in_schema=False)
async def new_template(request: Caller, adapters: NamedDependency[Adapters]) -> Template:
    choices = await choices_for(request, adapters)
    values = {
        "/configuration": "workers-and-master",
        "/environmentUse": "link",
        "/computeUse": "link",
    }
    return render_form(request, Form(step=1, values=values), choices)


@post(NEW, include_in_schema=False)
async def submit_template_form(
    request: Caller, adapters: NamedDependency[Adapters]
) -> Template | Redirect:
    choices = await choices_for(request, adapters)
    fields = all_fields(choices["sections"])
    values = form_values(await request.form(), fields)
    action = str(values.pop("action", "create"))
    values.pop("_csrf_token", None)
    values.setdefault("/environmentUse", "link")  # what the form starts with
    values.setdefault("/computeUse", "link")
    form = Form(step=2, values=values)
    if action == "continue":
        return await _continue(request, adapters, form, choices)
    if action.startswith("load-") and action.removeprefix("load-") in LOADS:
        load_into(form, action.removeprefix("load-"), choices["rows"])
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
    if form.errors or scope_kind is None:
        return render_form(request, form, choices, 400)
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


async def _create(
    request: Caller,
    adapters: Adapters,
    form: Form,
    fields: list[Field],
    choices: dict[str, Any],
) -> Template | Redirect:
    """CREATE TEMPLATE through the API's own create; a refusal goes next to its field."""
    built: Built = build(fields, form.values, copied=copied_values(form, choices["rows"]))
    known = {f.pointer for f in fields}
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


def copied_values(form: Form, rows: dict[str, AssetRow]) -> dict[str, Any]:
    """What an environment or compute resource used without linking puts in the spec; its
    select is emptied, as nothing is linked."""
    copied: dict[str, Any] = {}
    for which in ("environment", "compute"):
        select, use, _ = LOADS[which]
        chosen = form.values.get(select)
        if chosen in rows and form.values.get(use) == "copy":
            copied.update(as_template_values(rows[chosen]))
            form.values[select] = ""
    return copied


def said(exc: TrainplateError) -> str:
    """The refusal as the domain words it, without the pointer it leads with."""
    text = str(exc)
    field = exc.facts.get("field")
    return text.removeprefix(f"{field}: ") if isinstance(field, str) else text


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


FORM_ROUTES: Final = (new_template, submit_template_form)
