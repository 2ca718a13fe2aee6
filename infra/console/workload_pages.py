"""Submitting a workload from a template's page (a name and a project), and the workload's page: its
phase as it moves, its pods and each replica's output, suspend, resume and delete, through the
API's own actions (infra/http/workload_actions.py, infra/http/pod_actions.py)."""

from collections.abc import Awaitable
from typing import Any, Final, get_args
from uuid import UUID

import msgspec
from litestar import get, post
from litestar.di import NamedDependency
from litestar.exceptions import NotFoundException
from litestar.params import FromPath, FromQuery
from litestar.response import Redirect, Template

from domain.errors import TrainplateError
from infra.console.pages_common import page
from infra.console.template_detail import template_page_of
from infra.console.template_form import said
from infra.console.workloads_list import template_names
from infra.http.adapters import Adapters
from infra.http.callers import Caller
from infra.http.pod_actions import pods_of
from infra.http.problems import status_for
from infra.http.workload_actions import (
    Change,
    change_from,
    project_cluster,
    replica_logs,
    submit_from,
    visible_workload,
)
from infra.http.workload_schemas import DistributedCreationRequest

# Phases after which nothing moves unless someone acts: the page stops asking.
SETTLED: Final = frozenset({"Completed", "Failed", "Stopped"})
# What the page says once an action was taken, by the action.
DONE: Final = {
    "suspend": "Suspend asked for.",
    "resume": "Resume asked for.",
    "delete": "Delete asked for.",
}


@post("/templates/{template_id:uuid}/workloads", include_in_schema=False)
async def submit_workload(
    request: Caller, template_id: FromPath[UUID], adapters: NamedDependency[Adapters]
) -> Template | Redirect:
    form = await request.form()
    name = str(form.get("name") or "").strip()
    project_id = str(form.get("project") or "")
    # From the project's own stream: a project too new for the read models is found.
    cluster_id = await project_cluster(project_id, adapters) if project_id else None

    def again(field: str, message: str, status: int) -> Awaitable[Template]:
        submission = {"name": name, "project": project_id, "errors": {field: message}}
        return template_page_of(
            request, template_id, adapters, submission=submission, status_code=status
        )

    unchosen = "Choose the project to run it in."
    if cluster_id is None:
        return await again("project", unchosen, 400)
    body = {
        "name": name,
        "projectId": project_id,
        "clusterId": str(cluster_id),
        "templateId": str(template_id),
    }
    try:
        submitted = await submit_from(
            request, msgspec.convert(body, DistributedCreationRequest), adapters
        )
    except msgspec.ValidationError as exc:
        return await again("name", str(exc), 400)
    except TrainplateError as exc:
        field = str(exc.facts.get("field") or "")
        if field == "/projectId" and status_for(exc) == 404:
            # A project out of the caller's sight is answered as one that is not there.
            return await again("project", unchosen, 400)
        return await again("project" if "project" in field.lower() else "name", str(exc),
                           status_for(exc))  # fmt: skip
    return Redirect(f"/console/workloads/{submitted.workload_id}", status_code=303)


async def _view(row: Any, adapters: Adapters) -> dict[str, Any]:
    workload = row.workload
    pods = await pods_of(row, adapters)
    return {
        "id": workload.id,
        "name": workload.request.name,
        "project": workload.request.project_name,
        "template_id": workload.snapshot.template_id,
        "phase": workload.actual,
        "reason": workload.reason,
        "run": workload.run,
        "settled": workload.actual in SETTLED,
        "pods": [(p.name, p.k8s_phase, p.node_name) for p in pods.pods],
        "logs": replica_logs(row, adapters),
    }


async def _page(
    request: Caller,
    workload_id: UUID,
    adapters: Adapters,
    *,
    refused: str = "",
    note: str = "",
    status: int = 200,
) -> Template:
    row = await visible_workload(request, workload_id, adapters)
    view = await _view(row, adapters)
    template_id = view["template_id"]
    if template_id is not None:
        view["template"] = (await template_names(request, adapters, {template_id}))[template_id]
    return page(
        request, "workload.html.j2", title=view["name"], section="workloads", w=view,
        refused=refused, note=note, status_code=status,
    )  # fmt: skip


@get("/workloads/{workload_id:uuid}", include_in_schema=False)
async def workload_page(
    request: Caller,
    workload_id: FromPath[UUID],
    adapters: NamedDependency[Adapters],
    done: FromQuery[str] = "",
) -> Template:
    return await _page(request, workload_id, adapters, note=DONE.get(done, ""))


@get("/workloads/{workload_id:uuid}/status", include_in_schema=False)
async def workload_status(
    request: Caller, workload_id: FromPath[UUID], adapters: NamedDependency[Adapters]
) -> Template:
    """The part of the workload's page that moves, for the page to fetch while it does."""
    row = await visible_workload(request, workload_id, adapters)
    view = await _view(row, adapters)
    return page(request, "workload_status.html.j2", title=view["name"], w=view)


@post("/workloads/{workload_id:uuid}/{action:str}", include_in_schema=False)
async def change_workload(
    request: Caller,
    workload_id: FromPath[UUID],
    action: FromPath[str],
    adapters: NamedDependency[Adapters],
) -> Template | Redirect:
    """Suspend, resume or delete, as the API's own handlers do (`change_from`); a refusal (one
    that does not fit the workload's phase, say) is shown on its page with the API's status."""
    verb = next((v for v in get_args(Change) if v == action), None)
    if verb is None:
        raise NotFoundException()
    try:
        await change_from(request, workload_id, verb, adapters.streams)
    except TrainplateError as exc:
        if status_for(exc) == 404:
            raise
        return await _page(request, workload_id, adapters, refused=said(exc),
                           status=status_for(exc))  # fmt: skip
    if verb == "delete":
        return Redirect("/console/workloads", status_code=303)
    return Redirect(f"/console/workloads/{workload_id}?done={verb}", status_code=303)


WORKLOAD_ROUTES: Final = (submit_workload, workload_page, workload_status, change_workload)
