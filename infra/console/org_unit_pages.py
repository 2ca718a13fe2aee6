"""Clusters and projects: the lists, a new one and delete, through the API's actions
(`visible_units`, `create_cluster_from`, `create_project_from`, `delete_from`): a field's refusal
shown next to it, the caller's (not permitted) as the problem page with the API's status."""

from datetime import datetime
from typing import Any, Final
from urllib.parse import quote
from uuid import UUID

import msgspec
from litestar import get, post
from litestar.di import NamedDependency
from litestar.params import FromPath, FromQuery
from litestar.response import Redirect, Template

from domain.errors import TrainplateError
from domain.values import ScopeKind
from infra.console.asset_pages_common import form_values
from infra.console.form_document import decode_pointer
from infra.console.pages_common import page
from infra.console.template_form import said
from infra.http.adapters import Adapters
from infra.http.callers import Caller
from infra.http.org_unit_actions import (
    create_cluster_from,
    create_project_from,
    delete_from,
    visible_units,
)
from infra.http.org_unit_schemas import ClusterCreationRequest, ProjectCreationRequest
from infra.http.problems import status_for

CLUSTERS: Final = "/clusters"
PROJECTS: Final = "/projects"
# A form's fields (the members of Run:ai's creation body) and what a person reads for each.
CLUSTER_FIELDS: Final = {"name": "Cluster name"}
PROJECT_FIELDS: Final = {
    "name": "Project name",
    "clusterId": "Cluster",
    "parentId": "Department",
    "description": "Description",
}


class Sent(msgspec.Struct, kw_only=True):
    """A form as sent, and what was refused of it."""

    values: dict[str, Any] = msgspec.field(default_factory=dict)
    errors: dict[str, str] = msgspec.field(default_factory=dict)
    general_error: str = ""
    action: str = "created"  # what a refusal says was not done


def _when(at: datetime) -> str:
    return at.strftime("%Y-%m-%d %H:%M:%S UTC")


async def _names(request: Caller, adapters: Adapters, kind: ScopeKind) -> dict[str, str]:
    """The units of a kind the caller may see, by id, with their names, in name order."""
    units = await visible_units(request, kind, adapters.reads)
    return {u.id: u.name for u in sorted(units, key=lambda u: u.name)}


async def _clusters(
    request: Caller, adapters: Adapters, sent: Sent, note: str = "", status: int = 200
) -> Template:
    units = await visible_units(request, "cluster", adapters.reads)
    rows = [
        {"id": u.id, "name": u.name, "cells": [_when(u.created_at)]}
        for u in sorted(units, key=lambda u: u.name)
    ]
    return page(
        request, "org_units.html.j2", title="Clusters", section="clusters", noun="cluster",
        base=f"/console{CLUSTERS}", columns=["Created"], rows=rows, sent=sent, note=note,
        fields=[("name", CLUSTER_FIELDS["name"], None)], labels=CLUSTER_FIELDS,
        status_code=status,
    )  # fmt: skip


async def _projects(
    request: Caller, adapters: Adapters, sent: Sent, note: str = "", status: int = 200
) -> Template:
    clusters = await _names(request, adapters, "cluster")
    departments = await _names(request, adapters, "department")
    units = await visible_units(request, "project", adapters.reads)
    rows = [
        {
            "id": u.id,
            "name": u.name,
            "cells": [
                clusters.get(str(u.cluster_id), str(u.cluster_id)),
                departments.get(u.department_id or "", u.department_id or ""),
                _when(u.created_at),
            ],
        }
        for u in sorted(units, key=lambda u: u.name)
    ]
    fields = [
        ("name", PROJECT_FIELDS["name"], None),
        ("clusterId", PROJECT_FIELDS["clusterId"], [("", "Choose a cluster"), *clusters.items()]),
        ("parentId", PROJECT_FIELDS["parentId"],
         [("", "None: directly under its cluster"), *departments.items()]),
        ("description", PROJECT_FIELDS["description"], None),
    ]  # fmt: skip
    return page(
        request, "org_units.html.j2", title="Projects", section="projects", noun="project",
        base=f"/console{PROJECTS}", columns=["Cluster", "Department", "Created"], rows=rows,
        sent=sent, note=note, fields=fields, labels=PROJECT_FIELDS, status_code=status,
    )  # fmt: skip


def _refused(sent: Sent, exc: Exception) -> int:
    """Put the refusal next to its field (else above them all); its status. Not permitted, or
    a unit out of sight that no field names, is the problem page's: raised again."""
    if isinstance(exc, msgspec.ValidationError):
        pointer, message, status = decode_pointer(exc), str(exc), 400
    elif isinstance(exc, TrainplateError):
        pointer, message, status = str(exc.facts.get("field") or ""), said(exc), status_for(exc)
    else:
        raise exc
    field = pointer.removeprefix("/").split("/")[0]
    if status == 403 or (status == 404 and field not in sent.values):
        raise exc
    if field in sent.values:
        sent.errors[field] = message
    else:
        sent.general_error = message
    return status


@get(CLUSTERS, include_in_schema=False)
async def clusters(
    request: Caller, adapters: NamedDependency[Adapters], created: FromQuery[str] = ""
) -> Template:
    note = f"Cluster {created} created." if created else ""
    return await _clusters(request, adapters, Sent(), note)


@post(CLUSTERS, include_in_schema=False)
async def create_cluster(
    request: Caller, adapters: NamedDependency[Adapters]
) -> Template | Redirect:
    values = await form_values(request)
    sent = Sent(values={k: values.get(k, "") for k in CLUSTER_FIELDS})
    try:
        data = msgspec.convert({"name": sent.values["name"].strip()}, ClusterCreationRequest)
        made = await create_cluster_from(request, data, adapters.streams)
    except (msgspec.ValidationError, TrainplateError) as exc:
        return await _clusters(request, adapters, sent, status=_refused(sent, exc))
    return Redirect(f"/console{CLUSTERS}?created={quote(made.name)}", status_code=303)


@post(f"{CLUSTERS}/{{cluster_id:uuid}}/delete", include_in_schema=False)
async def delete_cluster(
    request: Caller, cluster_id: FromPath[UUID], adapters: NamedDependency[Adapters]
) -> Template | Redirect:
    sent = Sent(action="deleted")
    try:
        await delete_from(request, "cluster", str(cluster_id), adapters.streams)
    except TrainplateError as exc:
        return await _clusters(request, adapters, sent, status=_refused(sent, exc))
    return Redirect(f"/console{CLUSTERS}", status_code=303)


@get(PROJECTS, include_in_schema=False)
async def projects(
    request: Caller, adapters: NamedDependency[Adapters], created: FromQuery[str] = ""
) -> Template:
    note = f"Project {created} created." if created else ""
    return await _projects(request, adapters, Sent(), note)


@post(PROJECTS, include_in_schema=False)
async def create_project(
    request: Caller, adapters: NamedDependency[Adapters]
) -> Template | Redirect:
    values = await form_values(request)
    sent = Sent(values={k: values.get(k, "") for k in PROJECT_FIELDS})
    body = {k: v.strip() for k, v in sent.values.items() if v.strip()}
    body.setdefault("name", "")  # so an empty name is refused as the API refuses it
    try:
        data = msgspec.convert(body, ProjectCreationRequest, strict=False)
        made = await create_project_from(request, data, adapters)
    except (msgspec.ValidationError, TrainplateError) as exc:
        return await _projects(request, adapters, sent, status=_refused(sent, exc))
    return Redirect(f"/console{PROJECTS}?created={quote(made.name)}", status_code=303)


@post(f"{PROJECTS}/{{project_id:str}}/delete", include_in_schema=False)
async def delete_project(
    request: Caller, project_id: FromPath[str], adapters: NamedDependency[Adapters]
) -> Template | Redirect:
    sent = Sent(action="deleted")
    try:
        await delete_from(request, "project", project_id, adapters.streams)
    except TrainplateError as exc:
        return await _projects(request, adapters, sent, status=_refused(sent, exc))
    return Redirect(f"/console{PROJECTS}", status_code=303)


ORG_UNIT_ROUTES: Final = (
    clusters,
    create_cluster,
    delete_cluster,
    projects,
    create_project,
    delete_project,
)
