"""Environments: the list, a new one, an edit that shows which templates change and how before
it is saved (the API's impact preview), and delete; all through the functions the API's own
handlers call (`visible_rows`, `create_from`, `impact_of`, `update_from`, `delete_from`), so
every rule and refusal is the API's. A refusal is shown next to the field its pointer names."""

from typing import Any, Final
from uuid import UUID

import msgspec
from litestar import get, post
from litestar.di import NamedDependency
from litestar.params import FromPath, FromQuery
from litestar.response import Redirect, Template

from domain.errors import TrainplateError
from infra.http.adapters import Adapters
from infra.http.asset_schemas import EnvironmentCreationRequest, EnvironmentUpdateRequest
from infra.http.assets import create_from, delete_from, one_visible, update_from, usage_of
from infra.http.assets import visible_rows as visible_assets
from infra.http.callers import Caller
from infra.http.console.environment_form import (
    META_FIELDS,
    NEW_FIELDS,
    SPEC_FIELDS,
    creation_body,
    digest,
    field_at,
    update_body,
)
from infra.http.console.form_document import decode_pointer
from infra.http.console.labels import label_of
from infra.http.console.pages_common import page
from infra.http.console.scopes import choice_value, visible_scopes
from infra.http.console.template_form import said
from infra.http.impact import ImpactReport, impact_of
from infra.http.problems import status_for
from projections.asset_catalogue import AssetFilter, AssetRow

LIST: Final = "/environments"
ONE: Final = "/environments/{asset_id:uuid}"


class Shown(msgspec.Struct, kw_only=True):
    """Everything a render of the form needs."""

    values: dict[str, str]
    errors: dict[str, str] = msgspec.field(default_factory=dict)
    general_error: str | None = None
    impact: list[dict[str, Any]] | None = None  # the preview, once asked for
    previewed: str = ""  # the digest of the body previewed
    note: str = ""


async def _form_values(request: Caller) -> dict[str, str]:
    form = await request.form()
    return {str(k): str(form.get(k)) for k in form if k != "_csrf_token"}


def _scope_name(row: AssetRow, scopes: dict[str, str]) -> str:
    ref = row.meta.scope_ref
    return scopes.get(choice_value(ref.kind, ref.id), ref.kind)


@get(LIST, include_in_schema=False)
async def environments(request: Caller, adapters: NamedDependency[Adapters]) -> Template:
    rows = await visible_assets(request, ("environment",), AssetFilter(), adapters.resources)
    usage = await usage_of(request, adapters.resources, rows, True) or {}
    scopes = {c.value: c.label for c in await visible_scopes(request, adapters)}
    listed = [
        {
            "id": row.asset_id,
            "name": row.meta.name,
            "scope": _scope_name(row, scopes),
            "image": getattr(row.spec, "image", None) or "",
            "templates": [name for _, name in usage.get(row.asset_id, [])],
        }
        for row in rows
    ]
    return page(
        request, "environments.html.j2", title="Environments", section="environments", rows=listed
    )


async def _render(
    request: Caller,
    adapters: Adapters,
    shown: Shown,
    row: AssetRow | None = None,
    status: int = 200,
) -> Template:
    usage = await usage_of(request, adapters.resources, [row], True) if row else None
    scopes = await visible_scopes(request, adapters)
    return page(
        request,
        "environment_form.html.j2",
        title=f"Environment {row.meta.name}" if row else "New environment",
        section="environments",
        row=row,
        shown=shown,
        fields=(*META_FIELDS, *SPEC_FIELDS) if row else (*META_FIELDS, *NEW_FIELDS, *SPEC_FIELDS),
        scopes=scopes,
        scope=_scope_name(row, {c.value: c.label for c in scopes}) if row else "",
        used_by=(usage or {}).get(row.asset_id, []) if row else [],
        status_code=status,
    )


def _refusal(shown: Shown, exc: Exception, known: set[str]) -> int:
    """Put the refusal next to its field (else above them all); its status."""
    if isinstance(exc, msgspec.ValidationError):
        pointer, message, status = decode_pointer(exc), str(exc), 400
    elif isinstance(exc, TrainplateError):
        pointer, message, status = str(exc.facts.get("field") or ""), said(exc), status_for(exc)
    else:
        raise exc
    at = field_at(pointer, known)
    if at is None:
        shown.general_error = f"{pointer}: {message}" if pointer else message
    else:
        shown.errors[at] = message
    return status


@get(f"{LIST}/new", include_in_schema=False)
async def new_environment(request: Caller, adapters: NamedDependency[Adapters]) -> Template:
    return await _render(request, adapters, Shown(values={}))


@post(f"{LIST}/new", include_in_schema=False)
async def create_environment(
    request: Caller, adapters: NamedDependency[Adapters]
) -> Template | Redirect:
    shown = Shown(values=await _form_values(request))
    known = {"/scope", *(f.pointer for f in (*META_FIELDS, *NEW_FIELDS, *SPEC_FIELDS))}
    try:
        data = msgspec.convert(
            creation_body(shown.values), EnvironmentCreationRequest, strict=False
        )
        created = await create_from(request, data.meta, data.spec, adapters.streams)
    except (msgspec.ValidationError, TrainplateError) as exc:
        if isinstance(exc, TrainplateError) and status_for(exc) == 404:
            raise
        status = _refusal(shown, exc, known)
        return await _render(request, adapters, shown, status=status)
    return Redirect(f"/console/environments/{created.state.id}", status_code=303)


def _values_of(row: AssetRow) -> dict[str, str]:
    spec = msgspec.to_builtins(row.spec)
    values = {"/meta/name": row.meta.name, "/meta/description": row.meta.description or ""}
    for field in SPEC_FIELDS:
        found = spec.get(field.pointer.removeprefix("/spec/"))
        values[field.pointer] = "" if found is None else str(found)
    return values


@get(ONE, include_in_schema=False)
async def environment(
    request: Caller,
    asset_id: FromPath[UUID],
    adapters: NamedDependency[Adapters],
    saved: FromQuery[bool] = False,
) -> Template:
    row = await one_visible(request, "environment", asset_id, adapters.resources)
    shown = Shown(values=_values_of(row), note="Saved." if saved else "")
    return await _render(request, adapters, shown, row)


def _impact(report: ImpactReport) -> list[dict[str, Any]]:
    """Each template that would change, with its fields by the guide's names."""

    def named(pointer: str) -> str:
        master = pointer.startswith("/combinedMasterSpec")
        field = pointer.removeprefix("/combinedMasterSpec").removeprefix("/combinedSpec")
        label = label_of(field) if field.startswith("/") else pointer
        return f"{label} (master)" if master else label

    return [
        {
            "id": t.id,
            "name": t.name,
            "changes": [
                {"field": named(c.field), "pointer": c.field, "before": c.before, "after": c.after}
                for c in t.changes
            ],
        }
        for t in report.templates
    ]


@post(ONE, include_in_schema=False)
async def preview_or_save(
    request: Caller, asset_id: FromPath[UUID], adapters: NamedDependency[Adapters]
) -> Template | Redirect:
    """Preview the impact of the form's settings; save them once their preview was shown."""
    row = await one_visible(request, "environment", asset_id, adapters.resources)
    values = await _form_values(request)
    action = values.pop("action", "preview")
    previewed = values.pop("previewed", "")
    shown = Shown(values=values)
    known = {f.pointer for f in (*META_FIELDS, *SPEC_FIELDS)}
    try:
        body = update_body(values, msgspec.to_builtins(row.spec))
        data = msgspec.convert(body, EnvironmentUpdateRequest, strict=False)
        if action == "save" and previewed == digest(body):
            await update_from(request, asset_id, data.meta, data.spec, adapters.streams)
            return Redirect(f"/console/environments/{asset_id}?saved=1", status_code=303)
        report = await impact_of(
            request, "environment", asset_id, data.spec, adapters.streams, adapters.resources
        )
    except (msgspec.ValidationError, TrainplateError) as exc:
        if isinstance(exc, TrainplateError) and status_for(exc) == 404:
            raise
        status = _refusal(shown, exc, known)
        return await _render(request, adapters, shown, row, status)
    shown.impact, shown.previewed = _impact(report), digest(body)
    if action == "save":
        shown.note = "The settings changed since their preview: review this one, then save."
    return await _render(request, adapters, shown, row)


@post(f"{ONE}/delete", include_in_schema=False)
async def delete_environment(
    request: Caller, asset_id: FromPath[UUID], adapters: NamedDependency[Adapters]
) -> Template | Redirect:
    row = await one_visible(request, "environment", asset_id, adapters.resources)
    try:
        await delete_from(request, "environment", asset_id, adapters.streams)
    except TrainplateError as exc:
        if status_for(exc) == 404:
            raise
        shown = Shown(values=_values_of(row), general_error=said(exc))
        return await _render(request, adapters, shown, row, status_for(exc))
    return Redirect("/console/environments", status_code=303)


ENVIRONMENT_ROUTES: Final = (
    environments,
    new_environment,
    create_environment,
    environment,
    preview_or_save,
    delete_environment,
)
