"""Data sources: the list of every kind (with the templates using each), a new one (a PVC of its
scope's cluster's storage classes), an edit saved as the API's PUT, and delete (refused while a
template loads it), through the API's actions. An edit changes no combined spec: no preview."""

from typing import Final
from uuid import UUID

import msgspec
from litestar import get, post
from litestar.di import NamedDependency
from litestar.exceptions import NotFoundException
from litestar.params import FromPath, FromQuery
from litestar.response import Redirect, Template

from domain.errors import TrainplateError
from domain.values import AssetKind
from infra.console.asset_pages_common import (
    Shown,
    deleted_or_refused,
    form_values,
    opened,
    refusal,
    scope_name,
)
from infra.console.data_source_form import (
    BY_SEGMENT,
    KIND_LABELS,
    META_FIELDS,
    MOUNTED_AT,
    SPEC_FIELDS,
    meta_of,
    pvc_fields,
    spec_of,
    values_of,
)
from infra.console.environment_form import creation_meta, field_at
from infra.console.form_fields import Field
from infra.console.form_state import with_held_classes
from infra.console.pages_common import page
from infra.console.scopes import ScopeChoice, visible_scopes
from infra.http.adapters import Adapters
from infra.http.asset_actions import create_from, one_now, one_visible, update_from, usage_of
from infra.http.asset_actions import visible_rows as visible_assets
from infra.http.asset_schemas import AssetCreationMeta, AssetUpdateMeta
from infra.http.callers import Caller
from infra.http.data_source_specs import KINDS, spec_as
from infra.http.storage_class_actions import volume_choices
from projections.asset_catalogue import AssetFilter, AssetRow

LIST: Final = "/data-sources"
KIND: Final = "/data-sources/{segment:str}"
ONE: Final = "/data-sources/{segment:str}/{asset_id:uuid}"


def _kind(segment: str) -> AssetKind:
    if segment not in BY_SEGMENT:
        raise NotFoundException()
    return BY_SEGMENT[segment]


def _base(kind: AssetKind) -> str:
    return f"/console{LIST}/{KINDS[kind][0]}"


@get(LIST, include_in_schema=False)
async def data_sources(request: Caller, adapters: NamedDependency[Adapters]) -> Template:
    rows = await visible_assets(request, tuple(KINDS), AssetFilter(), adapters.reads)
    usage = await usage_of(request, adapters.reads, rows, True) or {}
    scopes = {c.value: c.label for c in await visible_scopes(request, adapters)}
    listed = [
        {
            "id": f"{KINDS[row.kind][0]}/{row.asset_id}",
            "name": row.meta.name,
            "scope": scope_name(row, scopes),
            "cells": [
                KIND_LABELS[row.kind],
                values_of(row.kind, row.spec).get(MOUNTED_AT[row.kind], ""),
            ],
            "templates": [name for _, name in usage.get(row.asset_id, [])],
        }
        for row in rows
        if row.kind in KIND_LABELS
    ]
    return page(
        request,
        "asset_list.html.j2",
        title="Data sources",
        section="data-sources",
        plural="Data sources",
        noun="data source",
        base=f"/console{LIST}",
        columns=["Type", "Container path"],
        rows=listed,
    )


@get(f"{LIST}/new", include_in_schema=False)
async def data_source_kinds(request: Caller) -> Template:
    """The guide's first choice: which kind of data source."""
    kinds = [(KINDS[kind][0], label) for kind, label in KIND_LABELS.items()]
    return page(
        request, "data_source_kinds.html.j2", title="New data source", section="data-sources",
        kinds=kinds,
    )  # fmt: skip


async def _render(
    request: Caller,
    adapters: Adapters,
    kind: AssetKind,
    shown: Shown,
    row: AssetRow | None = None,
    status: int = 200,
) -> Template:
    usage = await usage_of(request, adapters.reads, [row], True) if row else None
    scopes = await visible_scopes(request, adapters)
    label = KIND_LABELS[kind]
    fields = await _spec_fields(request, adapters, kind, shown, row, scopes)
    return page(
        request,
        "asset_form.html.j2",
        title=f"Data source {row.meta.name}" if row else f"New data source: {label}",
        section="data-sources",
        noun="data source",
        plural="Data sources",
        base=_base(kind),
        list_url=f"/console{LIST}",
        action=f"{_base(kind)}/new",
        kind_label=label,
        row=row,
        shown=shown,
        groups=(("Data source", META_FIELDS), (label, fields)),
        labels={f.pointer: f.label for f in (*META_FIELDS, *fields)},
        refresh_scope=kind == "pvc",
        preview=False,
        editable=True,
        hidden={},
        scopes=scopes,
        scope=scope_name(row, {c.value: c.label for c in scopes}) if row else "",
        used_by=(usage or {}).get(row.asset_id, []) if row else [],
        status_code=status,
    )


async def _spec_fields(
    request: Caller,
    adapters: Adapters,
    kind: AssetKind,
    shown: Shown,
    row: AssetRow | None,
    scopes: list[ScopeChoice],
) -> tuple[Field, ...]:
    """The kind's fields; a PVC's offer its cluster's storage classes (a new one's: of the
    scope chosen), and the class it names that the cluster does not have."""
    if kind != "pvc":
        return SPEC_FIELDS[kind]
    scope = shown.values.get("/scope")
    cluster = (
        row.meta.cluster_id if row else next((s.cluster for s in scopes if s.value == scope), None)
    )
    classes = await volume_choices(request, adapters, cluster)
    return pvc_fields(with_held_classes(classes, shown.values))


def _multi(kind: AssetKind) -> set[str]:
    return {f.pointer for f in SPEC_FIELDS[kind] if f.kind == "multi"}


def _known(kind: AssetKind) -> set[str]:
    return {"/scope", *(f.pointer for f in (*META_FIELDS, *SPEC_FIELDS[kind]))}


@get(f"{KIND}/new", include_in_schema=False)
async def new_data_source(
    request: Caller, segment: FromPath[str], adapters: NamedDependency[Adapters]
) -> Template:
    kind = _kind(segment)
    defaults = values_of(kind, spec_as(kind, {}))  # as the API makes one (NFS read-only)
    return await _render(request, adapters, kind, Shown(values=defaults))


@post(f"{KIND}/new", include_in_schema=False)
async def create_data_source(
    request: Caller, segment: FromPath[str], adapters: NamedDependency[Adapters]
) -> Template | Redirect:
    kind = _kind(segment)
    shown = Shown(values=await form_values(request, _multi(kind)))
    if shown.values.pop("action", "") == "refresh":  # the scope chosen: what it offers
        return await _render(request, adapters, kind, shown)
    try:
        meta = msgspec.convert(creation_meta(shown.values), AssetCreationMeta, strict=False)
        spec = spec_as(kind, spec_of(kind, shown.values), lax=True)
        created = await create_from(request, meta, spec, adapters.streams, adapters.names)
    except (msgspec.ValidationError, TrainplateError) as exc:
        status = refusal(shown, exc, lambda pointer: field_at(pointer, _known(kind)))
        return await _render(request, adapters, kind, shown, status=status)
    return Redirect(f"{_base(kind)}/{created.state.id}", status_code=303)


def _values_of(kind: AssetKind, row: AssetRow) -> dict[str, str]:
    meta = {"/meta/name": row.meta.name, "/meta/description": row.meta.description or ""}
    return {**meta, **values_of(kind, row.spec)}


@get(ONE, include_in_schema=False)
async def data_source(
    request: Caller,
    segment: FromPath[str],
    asset_id: FromPath[UUID],
    adapters: NamedDependency[Adapters],
    saved: FromQuery[bool] = False,
) -> Template:
    kind = _kind(segment)
    row = await one_visible(request, kind, asset_id, adapters.reads)
    shown = Shown(values=_values_of(kind, row), note="Saved." if saved else "")
    return await _render(request, adapters, kind, shown, row)


@post(ONE, include_in_schema=False)
async def save_data_source(
    request: Caller,
    segment: FromPath[str],
    asset_id: FromPath[UUID],
    adapters: NamedDependency[Adapters],
) -> Template | Redirect:
    kind = _kind(segment)
    row = await one_now(request, kind, asset_id, adapters.streams)
    values = await form_values(request, _multi(kind))
    values.pop("action", None)
    version = opened(values, row)
    shown = Shown(values=values, opened_at=version)
    try:
        meta = msgspec.convert(meta_of(values), AssetUpdateMeta, strict=False)
        current = msgspec.to_builtins(row.spec)
        spec = spec_as(kind, spec_of(kind, values, current), lax=True)
        await update_from(
            request,
            asset_id,
            meta,
            spec,
            adapters.streams,
            adapters.names,
            expected_version=version,
        )
    except (msgspec.ValidationError, TrainplateError) as exc:
        status = refusal(shown, exc, lambda pointer: field_at(pointer, _known(kind)))
        return await _render(request, adapters, kind, shown, row, status)
    return Redirect(f"{_base(kind)}/{asset_id}?saved=1", status_code=303)


@post(f"{ONE}/delete", include_in_schema=False)
async def delete_data_source(
    request: Caller,
    segment: FromPath[str],
    asset_id: FromPath[UUID],
    adapters: NamedDependency[Adapters],
) -> Template | Redirect:
    kind = _kind(segment)

    async def refused(row: AssetRow, why: str, status: int) -> Template:
        shown = Shown(values=_values_of(kind, row), general_error=why)
        return await _render(request, adapters, kind, shown, row, status)

    return await deleted_or_refused(
        request, adapters, kind, asset_id, listed=f"/console{LIST}", refused=refused
    )


DATA_SOURCE_ROUTES: Final = (
    data_sources,
    data_source_kinds,
    new_data_source,
    create_data_source,
    data_source,
    save_data_source,
    delete_data_source,
)
