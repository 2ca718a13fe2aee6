"""Environments: the list, a new one, an edit that previews which templates change and how before
it is saved, and delete; all through the API's actions (`visible_rows`, `create_from`,
`impact_of`, `update_from`, `delete_from`), so every rule and refusal is the API's."""

import re
from collections.abc import Mapping
from typing import Any, Final
from uuid import UUID

import msgspec
from litestar import get, post
from litestar.di import NamedDependency
from litestar.params import FromPath, FromQuery
from litestar.response import Redirect, Template

from domain.errors import TrainplateError
from infra.console.asset_pages_common import (
    Shown,
    deleted_or_refused,
    form_values,
    opened,
    previewed_or_saved,
    refusal,
    scope_name,
)
from infra.console.environment_fields import spec_groups
from infra.console.environment_form import (
    META_FIELDS,
    NEW_FIELDS,
    creation_body,
    field_of,
    update_body,
    values_of,
)
from infra.console.form_fields import Field
from infra.console.form_rows import rows_in
from infra.console.pages_common import page
from infra.console.scopes import visible_scopes
from infra.http.adapters import Adapters
from infra.http.asset_actions import (
    create_from,
    one_now,
    one_visible,
    usage_of,
    visible_credentials,
)
from infra.http.asset_actions import visible_rows as visible_assets
from infra.http.asset_schemas import EnvironmentCreationRequest, EnvironmentUpdateRequest
from infra.http.callers import Caller
from projections.asset_catalogue import AssetFilter, AssetRow

LIST: Final = "/environments"
ONE: Final = "/environments/{asset_id:uuid}"
MULTI: Final = ("/spec/capabilities",)  # the fields that send every value chosen


@get(LIST, include_in_schema=False)
async def environments(request: Caller, adapters: NamedDependency[Adapters]) -> Template:
    rows = await visible_assets(request, ("environment",), AssetFilter(), adapters.reads)
    usage = await usage_of(request, adapters.reads, rows, True) or {}
    scopes = {c.value: c.label for c in await visible_scopes(request, adapters)}
    listed = [
        {
            "id": row.asset_id,
            "name": row.meta.name,
            "scope": scope_name(row, scopes),
            "image": getattr(row.spec, "image", None) or "",
            "templates": [name for _, name in usage.get(row.asset_id, [])],
        }
        for row in rows
    ]
    return page(
        request, "environments.html.j2", title="Environments", section="environments", rows=listed
    )


class _Form(msgspec.Struct, frozen=True, kw_only=True):
    """The form's spec groups for the values it shows, and every field it has."""

    groups: tuple[tuple[str, tuple[Field, ...]], ...]
    fields: tuple[Field, ...]


async def _form(
    request: Caller, adapters: Adapters, values: Mapping[str, Any], held: Mapping[str, Any]
) -> _Form:
    """A row for each variable and connection `values` fill, and blank ones to add more; a
    variable's credential chosen among those the caller sees."""
    credentials = tuple(
        (str(r.asset_id), f"{r.meta.name} ({r.kind})")
        for r in await visible_credentials(request, adapters.reads)
    )
    groups = spec_groups(rows_in(values), credentials, held)
    return _Form(groups=groups, fields=tuple(f for _, fields in groups for f in fields))


def _named(legend: str, field: Field) -> str:
    """A field as the list of refusals names it: a row's with its row (its group's legend)."""
    return f"{legend}: {field.label}" if re.search(r"/\d+/", field.pointer) else field.label


async def _render(
    request: Caller,
    adapters: Adapters,
    shown: Shown,
    row: AssetRow | None = None,
    status: int = 200,
) -> Template:
    usage = await usage_of(request, adapters.reads, [row], True) if row else None
    scopes = await visible_scopes(request, adapters)
    held = _values_of(row) if row else {}
    form = await _form(request, adapters, shown.values, held)
    meta = (*META_FIELDS, *(() if row else NEW_FIELDS))
    types = row.meta.workload_supported_types if row else None
    return page(
        request,
        "asset_form.html.j2",
        title=f"Environment {row.meta.name}" if row else "New environment",
        section="environments",
        noun="environment",
        plural="Environments",
        base=f"/console{LIST}",
        row=row,
        shown=shown,
        groups=(("Environment", meta), *form.groups),
        labels={
            **{f.pointer: f.label for f in meta},
            **{f.pointer: _named(legend, f) for legend, fields in form.groups for f in fields},
        },
        preview=True,
        editable=True,
        hidden={},
        scopes=scopes,
        scope=scope_name(row, {c.value: c.label for c in scopes}) if row else "",
        kind_label=f"For {types.dist_framework} distributed workloads"
        if types and types.dist_framework
        else "",
        used_by=(usage or {}).get(row.asset_id, []) if row else [],
        status_code=status,
    )


@get(f"{LIST}/new", include_in_schema=False)
async def new_environment(request: Caller, adapters: NamedDependency[Adapters]) -> Template:
    return await _render(request, adapters, Shown(values={}))


@post(f"{LIST}/new", include_in_schema=False)
async def create_environment(
    request: Caller, adapters: NamedDependency[Adapters]
) -> Template | Redirect:
    shown = Shown(values=await form_values(request, MULTI))
    form = await _form(request, adapters, shown.values, {})
    known = {"/scope", *(f.pointer for f in (*META_FIELDS, *NEW_FIELDS, *form.fields))}
    built = creation_body(shown.values, form.fields)
    if built.unknown:
        shown.errors.update(built.unknown)
        return await _render(request, adapters, shown, status=400)
    try:
        data = msgspec.convert(built.body, EnvironmentCreationRequest, strict=False)
        created = await create_from(request, data.meta, data.spec, adapters.streams, adapters.names)
    except (msgspec.ValidationError, TrainplateError) as exc:
        status = refusal(shown, exc, lambda pointer: field_of(pointer, built, known))
        return await _render(request, adapters, shown, status=status)
    return Redirect(f"/console/environments/{created.state.id}", status_code=303)


def _values_of(row: AssetRow) -> dict[str, Any]:
    return values_of(row.meta.name, row.meta.description, row.spec)


@get(ONE, include_in_schema=False)
async def environment(
    request: Caller,
    asset_id: FromPath[UUID],
    adapters: NamedDependency[Adapters],
    saved: FromQuery[bool] = False,
) -> Template:
    row = await one_visible(request, "environment", asset_id, adapters.reads)
    shown = Shown(values=_values_of(row), note="Saved." if saved else "")
    return await _render(request, adapters, shown, row)


@post(ONE, include_in_schema=False)
async def preview_or_save(
    request: Caller, asset_id: FromPath[UUID], adapters: NamedDependency[Adapters]
) -> Template | Redirect:
    """Preview the impact of the form's settings; save them once their preview was shown."""
    row = await one_now(request, "environment", asset_id, adapters.streams)
    values = await form_values(request, MULTI)
    action = values.pop("action", "preview")
    previewed = values.pop("previewed", "")
    version = opened(values, row)
    shown = Shown(values=values, opened_at=version)
    form = await _form(request, adapters, values, _values_of(row))
    known = {f.pointer for f in (*META_FIELDS, *form.fields)}
    built = update_body(values, form.fields, msgspec.to_builtins(row.spec))
    if built.unknown:
        shown.errors.update(built.unknown)
        return await _render(request, adapters, shown, row, 400)
    try:
        data = msgspec.convert(built.body, EnvironmentUpdateRequest, strict=False)
        saved = await previewed_or_saved(
            request, adapters, "environment", asset_id, shown, action=action,
            previewed=previewed, body=built.body, version=version, meta=data.meta,
            spec=data.spec, base="/console/environments",
        )  # fmt: skip
    except (msgspec.ValidationError, TrainplateError) as exc:
        status = refusal(shown, exc, lambda pointer: field_of(pointer, built, known))
        return await _render(request, adapters, shown, row, status)
    return saved or await _render(request, adapters, shown, row)


@post(f"{ONE}/delete", include_in_schema=False)
async def delete_environment(
    request: Caller, asset_id: FromPath[UUID], adapters: NamedDependency[Adapters]
) -> Template | Redirect:
    async def refused(row: AssetRow, why: str, status: int) -> Template:
        shown = Shown(values=_values_of(row), general_error=why)
        return await _render(request, adapters, shown, row, status)

    return await deleted_or_refused(
        request, adapters, "environment", asset_id, listed="/console/environments",
        refused=refused,
    )  # fmt: skip


ENVIRONMENT_ROUTES: Final = (
    environments,
    new_environment,
    create_environment,
    environment,
    preview_or_save,
    delete_environment,
)
