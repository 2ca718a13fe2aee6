"""Compute resources: the list (with the templates using each), a new one, an edit that previews
which templates change and how before it is saved, and delete (refused while a template links
it), through the API's actions, so every rule and refusal is the API's, shown at its field."""

from typing import Any, Final
from uuid import UUID

import msgspec
from litestar import get, post
from litestar.di import NamedDependency
from litestar.params import FromPath, FromQuery
from litestar.response import Redirect, Template

from domain.errors import TrainplateError
from domain.specs import ComputeSpec
from domain.tenant_settings import GPU_OPTIMIZATION
from infra.console.asset_pages_common import (
    Shown,
    deleted_or_refused,
    form_values,
    opened,
    previewed_or_saved,
    refusal,
    scope_name,
)
from infra.console.compute_form import (
    META_FIELDS,
    creation_body,
    field_of,
    spec_groups,
    spec_of,
    update_body,
    values_of,
)
from infra.console.form_fields import Field
from infra.console.pages_common import page
from infra.console.scopes import visible_scopes
from infra.http.adapters import Adapters
from infra.http.asset_actions import create_from, one_now, one_visible, usage_of
from infra.http.asset_actions import visible_rows as visible_assets
from infra.http.asset_schemas import ComputeCreationRequest, ComputeUpdateRequest
from infra.http.callers import Caller
from infra.http.setting_actions import switches
from projections.asset_catalogue import AssetFilter, AssetRow

LIST: Final = "/compute-resources"
ONE: Final = "/compute-resources/{asset_id:uuid}"


def _summary(spec: Any) -> str:
    """A compute resource in a line: GPUs, CPU and memory per pod."""
    parts = []
    if isinstance(spec, ComputeSpec):
        if spec.gpu_devices_request is not None:
            parts.append(f"{spec.gpu_devices_request} GPU")
        if spec.cpu_core_request is not None:
            parts.append(f"{spec.cpu_core_request:g} CPU")
        if spec.cpu_memory_request is not None:
            parts.append(f"{spec.cpu_memory_request} memory")
    return ", ".join(parts)


@get(LIST, include_in_schema=False)
async def compute_resources(request: Caller, adapters: NamedDependency[Adapters]) -> Template:
    rows = await visible_assets(request, ("compute",), AssetFilter(), adapters.reads)
    usage = await usage_of(request, adapters.reads, rows, True) or {}
    scopes = {c.value: c.label for c in await visible_scopes(request, adapters)}
    listed = [
        {
            "id": row.asset_id,
            "name": row.meta.name,
            "scope": scope_name(row, scopes),
            "cells": [_summary(row.spec)],
            "templates": [name for _, name in usage.get(row.asset_id, [])],
        }
        for row in rows
    ]
    return page(
        request,
        "asset_list.html.j2",
        title="Compute resources",
        section="computes",
        plural="Compute resources",
        noun="compute resource",
        base=f"/console{LIST}",
        columns=["Per pod"],
        rows=listed,
    )


async def _groups(adapters: Adapters, values: dict[str, str]) -> tuple[tuple[str, Any], ...]:
    gpu_limits = (await switches(adapters)).get(GPU_OPTIMIZATION)
    return (("Compute resource", META_FIELDS), *spec_groups(gpu_limits, values))


def _fields(groups: tuple[tuple[str, Any], ...]) -> tuple[Field, ...]:
    return tuple(f for _, fields in groups for f in fields if f.pointer.startswith("/spec/"))


async def _render(
    request: Caller,
    adapters: Adapters,
    shown: Shown,
    row: AssetRow | None = None,
    status: int = 200,
) -> Template:
    usage = await usage_of(request, adapters.reads, [row], True) if row else None
    scopes = await visible_scopes(request, adapters)
    groups = await _groups(adapters, shown.values)
    return page(
        request,
        "asset_form.html.j2",
        title=f"Compute resource {row.meta.name}" if row else "New compute resource",
        section="computes",
        noun="compute resource",
        plural="Compute resources",
        base=f"/console{LIST}",
        row=row,
        shown=shown,
        groups=groups,
        labels={f.pointer: f.label for _, fields in groups for f in fields},
        preview=True,
        editable=True,
        hidden={},
        scopes=scopes,
        scope=scope_name(row, {c.value: c.label for c in scopes}) if row else "",
        used_by=(usage or {}).get(row.asset_id, []) if row else [],
        status_code=status,
    )


def _known(groups: tuple[tuple[str, Any], ...]) -> set[str]:
    return {"/scope", *(f.pointer for _, fields in groups for f in fields)}


@get(f"{LIST}/new", include_in_schema=False)
async def new_compute(request: Caller, adapters: NamedDependency[Adapters]) -> Template:
    return await _render(request, adapters, Shown(values={}))


@post(f"{LIST}/new", include_in_schema=False)
async def create_compute(
    request: Caller, adapters: NamedDependency[Adapters]
) -> Template | Redirect:
    shown = Shown(values=await form_values(request))
    groups = await _groups(adapters, shown.values)
    fields = _fields(groups)
    rows = spec_of(shown.values, fields)[1]
    try:
        body = creation_body(shown.values, fields)
        data = msgspec.convert(body, ComputeCreationRequest, strict=False)
        spec = data.spec or ComputeSpec()
        created = await create_from(request, data.meta, spec, adapters.streams, adapters.names)
    except (msgspec.ValidationError, TrainplateError) as exc:
        status = refusal(shown, exc, lambda pointer: field_of(pointer, _known(groups), rows))
        return await _render(request, adapters, shown, status=status)
    return Redirect(f"/console{LIST}/{created.state.id}", status_code=303)


def _values_of(row: AssetRow) -> dict[str, str]:
    meta = {"/meta/name": row.meta.name, "/meta/description": row.meta.description or ""}
    return {**meta, **values_of(row.spec)}


@get(ONE, include_in_schema=False)
async def compute_resource(
    request: Caller,
    asset_id: FromPath[UUID],
    adapters: NamedDependency[Adapters],
    saved: FromQuery[bool] = False,
) -> Template:
    row = await one_visible(request, "compute", asset_id, adapters.reads)
    shown = Shown(values=_values_of(row), note="Saved." if saved else "")
    return await _render(request, adapters, shown, row)


@post(ONE, include_in_schema=False)
async def preview_or_save(
    request: Caller, asset_id: FromPath[UUID], adapters: NamedDependency[Adapters]
) -> Template | Redirect:
    """Preview the impact of the form's settings; save them once their preview was shown."""
    row = await one_now(request, "compute", asset_id, adapters.streams)
    values = await form_values(request)
    action = values.pop("action", "preview")
    previewed = values.pop("previewed", "")
    version = opened(values, row)
    shown = Shown(values=values, opened_at=version)
    groups = await _groups(adapters, values)
    fields = _fields(groups)
    rows = spec_of(values, fields)[1]
    try:
        body = update_body(values, fields, msgspec.to_builtins(row.spec))
        data = msgspec.convert(body, ComputeUpdateRequest, strict=False)
        saved = await previewed_or_saved(
            request, adapters, "compute", asset_id, shown, action=action, previewed=previewed,
            body=body, meta=data.meta, spec=data.spec or ComputeSpec(), base=f"/console{LIST}",
            version=version,
        )  # fmt: skip
    except (msgspec.ValidationError, TrainplateError) as exc:
        status = refusal(shown, exc, lambda pointer: field_of(pointer, _known(groups), rows))
        return await _render(request, adapters, shown, row, status)
    return saved or await _render(request, adapters, shown, row)


@post(f"{ONE}/delete", include_in_schema=False)
async def delete_compute(
    request: Caller, asset_id: FromPath[UUID], adapters: NamedDependency[Adapters]
) -> Template | Redirect:
    async def refused(row: AssetRow, why: str, status: int) -> Template:
        shown = Shown(values=_values_of(row), general_error=why)
        return await _render(request, adapters, shown, row, status)

    return await deleted_or_refused(
        request, adapters, "compute", asset_id, listed=f"/console{LIST}", refused=refused
    )


COMPUTE_ROUTES: Final = (
    compute_resources,
    new_compute,
    create_compute,
    compute_resource,
    preview_or_save,
    delete_compute,
)
