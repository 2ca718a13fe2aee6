"""Edit a template: the new-template form filled in from the template, saved through the API's own
PATCH (`patch_from`) with If-Match at the version it was opened at; the form owns the fields it
shows and keeps what it does not. See docs/decisions/0030-console-forms.md."""

import re
from collections.abc import Mapping
from typing import Any, Final
from uuid import UUID

import msgspec
from litestar import get, post
from litestar.di import NamedDependency
from litestar.params import FromPath
from litestar.response import Redirect, Template

from domain.errors import TrainplateError
from domain.template_rules import camel
from infra.console.form_document import Built, Values, build, decode_pointer
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
    variable_sources,
    with_uses,
)
from infra.console.linked import copied_now
from infra.console.scopes import choice_value
from infra.console.template_detail import flattened
from infra.console.template_form import refused_at, refused_choices, render_form, said
from infra.http.adapters import Adapters
from infra.http.callers import Caller
from infra.http.numerals import natural
from infra.http.problems import status_for
from infra.http.template_actions import patch_from, read_template, template_now
from infra.http.template_schemas import DistributedTemplate, UpdateRequest

EDIT: Final = "/templates/{template_id:uuid}/edit"
# The form's own values that are the template's as it stands, not the body's.
KEPT: Final = ("/scope", "/spec/distributedFramework", "/configuration")
ACCESS_MODE_SWITCH: Final = re.compile(r"^.+/claimInfo/accessModes/\w+$")


def own(wire: DistributedTemplate) -> dict[str, Any]:
    """The template's own body (not what linked assets combine in), as the wire has it."""
    body: dict[str, Any] = msgspec.to_builtins(
        {"spec": wire.spec, "assets": wire.assets, "master": wire.master}
    )
    return body


def built_from(
    fields: list[Field],
    values: Values,
    wire: DistributedTemplate,
    copied: Mapping[str, Any] | None = None,
) -> Built:
    """The body the form says, each list item keeping what the template's item in its row
    holds that the row does not show (a list is sent whole); a list filled in from an
    environment or compute resource used without linking (`copied`) is that one's."""
    return build(fields, values, copied=copied, current=own(wire))


def values_of(wire: DistributedTemplate) -> dict[str, Any]:
    """The form's values for a template: its own settings (not what linked assets combine in),
    what it links and loads, and which configuration it has."""
    values: dict[str, Any] = {
        "/scope": choice_value(wire.meta.scope_type, wire.meta.scope_id),
        "/meta/name": wire.meta.name,
        "/meta/description": wire.meta.description or "",
        **LINKED_AT_FIRST,
    }
    for pointer, value in flattened(own(wire)):
        if value is None:
            continue
        if ACCESS_MODE_SWITCH.match(pointer):  # one list of them, below
            continue
        listed = isinstance(value, list | tuple)
        values[pointer] = [_text(v) for v in value] if listed else _text(value)
    values.update(_access_modes(wire))
    values.update(variable_sources(values))
    master_assets = wire.master.assets if wire.master else None
    for at, assets in (("", wire.assets), ("/master", master_assets)):
        for i, source in enumerate((assets.datasources or ()) if assets else ()):
            values[f"{at}/assets/datasources/{i}/ref"] = f"{source.kind}|{source.id}"
    if wire.master_spec_same_as_worker:
        values["/configuration"] = "workers-and-master"
    elif wire.master is None:
        values["/configuration"] = "workers-only"
    else:
        values["/configuration"] = "workers-and-master"
        values["/differentMaster"] = "true"
    return values


def _access_modes(wire: DistributedTemplate) -> dict[str, list[str]]:
    """Each new volume's access modes as the form's list of them: those switched on, a switch
    left out taking the spec's default (the wire leaves out a default)."""
    found: dict[str, list[str]] = {}
    specs = (("/spec", wire.spec), ("/master/spec", wire.master.spec if wire.master else None))
    for at, spec in specs:
        for i, pvc in enumerate((spec.storage.pvc if spec and spec.storage else None) or ()):
            modes = pvc.claim_info.access_modes if pvc.claim_info else None
            if modes is not None:
                on = {camel(k) for k, v in msgspec.structs.asdict(modes).items() if v}
                found[f"{at}/storage/pvc/{i}/claimInfo/accessModes"] = sorted(on)
    return found


def _text(value: object) -> str:
    """A value as the form holds it; a switch as its fields send it ("true")."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def _to_clear(fields: list[Field], body: dict[str, Any], different_master: bool) -> list[str]:
    """`fieldsToClear` for every field the form shows and left empty: its dotted path, down to
    the list that holds it (a list is sent whole, or cleared whole)."""
    found: list[str] = [] if body.get("meta", {}).get("description") else ["meta.description"]
    for field in fields:
        if not field.pointer.startswith(("/spec/", "/assets/", "/master/")):
            continue
        parts: list[str] = []
        for part in field.pointer.strip("/").split("/"):
            if natural(part) is not None:
                break
            parts.append(part)
        node: Any = body
        for part in parts:
            node = node.get(part) if isinstance(node, dict) else None
        path = ".".join(parts)
        if node is None and path not in found:
            found.append(path)
    if not different_master:
        found = [p for p in found if not p.startswith("master.")] + ["master"]
    return found


def _without_nulls(value: Any) -> Any:
    """In a PATCH a null is a field not sent; the form sends only what it holds."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    return value


def _patch(fields: list[Field], built: Built, different_master: bool) -> dict[str, Any]:
    """The PATCH the form says: its body read by the API's own update Struct (numbers from the
    form's text), without its nulls, with what the form left empty to clear."""
    body = dict(built.body)
    meta = body.pop("meta", {})
    update = {"meta": {k: meta[k] for k in ("name", "description") if k in meta}, **body}
    typed = msgspec.convert(update, UpdateRequest, strict=False)
    patch: dict[str, Any] = _without_nulls(msgspec.to_builtins(typed))
    patch["fieldsToClear"] = _to_clear(fields, built.body, different_master)
    return patch


@get(EDIT, include_in_schema=False)
async def edit_template(
    request: Caller, template_id: FromPath[UUID], adapters: NamedDependency[Adapters]
) -> Template:
    wire, version = await read_template(request, template_id, adapters)
    values = values_of(wire)
    choices = await choices_for(request, adapters, values, values)  # a row for each item
    form = Form(step=2, values=values)
    show_linked(form, choices["rows"])
    editing = {"id": template_id, "name": wire.meta.name, "version": version}
    return render_form(request, form, choices, editing=editing)


@post(EDIT, include_in_schema=False)
async def save_template(
    request: Caller, template_id: FromPath[UUID], adapters: NamedDependency[Adapters]
) -> Template | Redirect:
    # The template as written (else a 404): what the form does not show is kept from it.
    wire, version = await template_now(request, template_id, adapters)
    sent = await request.form()
    current = values_of(wire)
    choices = await choices_for(request, adapters, sent, current)  # a row for each it fills
    fields = all_fields(choices["sections"])
    values = form_values(sent, fields)
    action = str(values.pop("action", "save"))
    values.pop("_csrf_token", None)
    opened_at = str(values.pop("version", version))
    values.update({k: current[k] for k in KEPT if k in current})  # not the form's to change
    form = Form(step=2, values=with_uses(values))
    editing = {"id": template_id, "name": wire.meta.name, "version": opened_at}
    if action.startswith("load-") and action.removeprefix("load-") in LOADS:
        load_into(form, action.removeprefix("load-"), choices)
        show_linked(form, choices["rows"])
        return render_form(request, form, choices, editing=editing)
    now = await copied_now(request, adapters, to_copy(form.values))
    copied, unlinked = copied_values(form.values, now)
    built = built_from(fields, unlinked, wire, copied)
    known = {f.pointer for f in fields}
    if built.unknown:
        return refused_choices(request, form, choices, built, editing)
    different = values.get("/differentMaster") == "true"
    try:
        patch = _patch(fields, built, different)
        await patch_from(request, template_id, patch, opened_at, adapters)
    except msgspec.ValidationError as exc:
        pointer = decode_pointer(exc)
        return refused_at(request, form, choices, pointer, str(exc), 400, built, known, editing)
    except TrainplateError as exc:
        status = status_for(exc)
        if status == 404:
            raise
        at = exc.facts.get("field")
        return refused_at(
            request, form, choices, str(at or ""), said(exc), status, built, known, editing
        )
    return Redirect(f"/console/templates/{template_id}", status_code=303)


EDIT_ROUTES: Final = (edit_template, save_template)
