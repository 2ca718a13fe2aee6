"""The admin settings page: the guide's switches (docs/console.md), shown to everyone with their
values, changed by tenant admins alone, each through the function the API's
`PUT /v1/k8s/setting` calls (`set_from`), which is what refuses anyone else."""

from typing import Any, Final
from uuid import UUID

import msgspec
from litestar import get, post
from litestar.di import NamedDependency
from litestar.params import FromQuery
from litestar.response import Redirect, Template

from domain.errors import TrainplateError
from domain.tenant_settings import FIXED, FRAMEWORKS, TenantSettings
from infra.console.pages_common import page
from infra.console.template_form import said
from infra.http.adapters import Adapters
from infra.http.callers import Caller
from infra.http.org_unit_actions import visible_units
from infra.http.problems import status_for
from infra.http.setting_actions import SettingRequest, may_change, set_from, switches

SETTINGS: Final = "/settings"
# The form names the clusters whose switches it shows: a cluster made after the page was opened
# has no box in it, and is not read as every box left unticked.
SHOWN: Final = "clusters"
WAS: Final = "was:"  # before a switch's key: the value the page showed it with


def _switch(key: str, label: str, description: str, on: bool, stage: str = "GA") -> dict[str, Any]:
    return {
        "key": key,
        "id": "s-" + key.replace(".", "-"),
        "label": label,
        "description": description,
        "stage": stage,
        "on": on,
    }


async def _clusters(request: Caller, adapters: Adapters) -> list[tuple[str, str]]:
    """The clusters the caller sees (the API's own org-unit read), by id and name."""
    units = await visible_units(request, "cluster", adapters.reads)
    return [(unit.id, unit.name) for unit in sorted(units, key=lambda u: u.name)]


def _is_uuid(text: str) -> bool:
    try:
        UUID(text)
    except ValueError:
        return False
    return True


def _cluster_keys(cluster_id: str) -> list[tuple[str, str]]:
    return [(f"clusters.{cluster_id}.distributedFrameworks.{f}", f) for f in FRAMEWORKS]


def _cluster_groups(
    clusters: list[tuple[str, str]], settings: TenantSettings
) -> dict[str, list[dict[str, Any]]]:
    """A framework turned off on a cluster is off for that cluster's templates and workloads
    alone; one turned off tenant-wide is off on every cluster, whatever its own switch says."""
    return {
        f"Cluster {name}: distributed frameworks": [
            _switch(
                key,
                f"{framework} on {name}",
                f"Templates and workloads of cluster {name} may use {framework}",
                settings.get(key),
            )
            for key, framework in _cluster_keys(cluster_id)
        ]
        for cluster_id, name in clusters
    }


async def _render(
    request: Caller,
    adapters: Adapters,
    *,
    note: str = "",
    error: str = "",
    status: int = 200,
) -> Template:
    settings = await switches(adapters)
    groups: dict[str, list[dict[str, Any]]] = {}
    for key, info in FIXED.items():
        groups.setdefault(info.category, []).append(
            _switch(key, info.label, info.description, settings.get(key), info.stage)
        )
    clusters = await _clusters(request, adapters)
    groups.update(_cluster_groups(clusters, settings))
    return page(
        request,
        "settings.html.j2",
        title="General settings",
        section="settings",
        groups=groups,
        clusters=[cluster_id for cluster_id, _ in clusters],
        editable=may_change(request),
        note=note,
        error=error,
        status_code=status,
    )


@get(SETTINGS, include_in_schema=False)
async def settings_page(
    request: Caller, adapters: NamedDependency[Adapters], saved: FromQuery[bool] = False
) -> Template:
    return await _render(request, adapters, note="Saved." if saved else "")


@post(SETTINGS, include_in_schema=False)
async def save_settings(
    request: Caller, adapters: NamedDependency[Adapters]
) -> Template | Redirect:
    """Each switch whose value the form changes, set as the PUT sets it (a box left unticked
    is off); a refusal (not a tenant admin, a value other than a box's) is shown above them."""
    form = await request.form()
    shown = set(form.getall(SHOWN)) if SHOWN in form else set()
    keys = [*FIXED]
    # The clusters whose switches the page showed, as it says: not those a read model holds
    # now, which may trail the write (a key naming no cluster is refused as the PUT does).
    for cluster_id in sorted(shown):
        if _is_uuid(cluster_id):  # the page sends none other
            keys.extend(key for key, _ in _cluster_keys(cluster_id))
    sent = {key: str(form.get(key) or "false") for key in keys}
    # Changed: what differs from the value the page showed (sent with it), not from the read model's
    # now, which may trail a change made meanwhile (a switch left as shown stays as it now is). Why:
    # docs/decisions/0030-console-forms.md.
    changed = [(k, v) for k, v in sent.items() if v != form.get(f"{WAS}{k}")]
    try:  # one append: a refusal of any writes none
        asked = [SettingRequest(key=key, value=value) for key, value in changed]
        await set_from(request, asked, adapters)
    except (TrainplateError, msgspec.ValidationError) as exc:
        if isinstance(exc, TrainplateError):
            message, status = said(exc), status_for(exc)
        else:
            message, status = str(exc), 400
        return await _render(request, adapters, error=message, status=status)
    return Redirect(f"/console{SETTINGS}?saved=1", status_code=303)


SETTINGS_ROUTES: Final = (settings_page, save_settings)
