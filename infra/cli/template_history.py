"""`trainplate templates history | diff | rollback NAME`: a template found by its name (and
`--scope` where the name is in several scopes), over the service's history endpoints."""

from typing import Any, Final

import click
from rich.console import Console

from infra.api_client.service import TEMPLATES, Service, ServiceError
from infra.cli.client_runs import NOTHING, service_command
from infra.cli.plan_tables import show_rows

DISTRIBUTED: Final = f"{TEMPLATES}/distributed"
UNITS: Final = {
    "project": ("/api/v1/org-unit/projects", "projects"),
    "department": ("/api/v1/org-unit/departments", "departments"),
}


named = click.argument("name")
scoped = click.option(
    "--scope",
    metavar="SCOPE",
    help="project:NAME[@CLUSTER], tenant, ... where the name is not unique",
)


def template_named(service: Service, name: str, scope: str | None) -> dict[str, Any]:
    """The one template of that name the caller sees (in `scope`, if given)."""
    params = {"filterBy": f"name=={name}", "limit": 500}
    found = [t for t in service.call("GET", DISTRIBUTED, params=params)["entries"]
             if t["meta"]["name"] == name]  # fmt: skip
    if scope is not None:
        kind, _, unit = scope.partition(":")
        ids = {"": ""} if kind == "tenant" else _unit_ids(service, kind, unit)
        found = [t for t in found if t["meta"]["scopeType"] == kind
                 and (kind == "tenant" or t["meta"]["scopeId"] in ids)]  # fmt: skip
    if not found:
        raise ValueError(f"no template named {name!r}" + (f" in {scope}" if scope else ""))
    if len(found) > 1:
        scopes = ", ".join(f"{t['meta']['scopeType']} {t['meta']['scopeId']}" for t in found)
        raise ValueError(f"{name!r} names a template in each of {scopes}: say which with --scope")
    chosen: dict[str, Any] = found[0]
    return chosen


def _unit_ids(service: Service, kind: str, label: str) -> set[str]:
    """The ids of the units `NAME` or `NAME@CLUSTER` names (a unit's name is unique in its
    cluster only)."""
    name, _, cluster = label.partition("@")
    if kind == "cluster":
        return {
            str(c["uuid"]) for c in service.call("GET", "/api/v1/clusters") if c["name"] == name
        }
    if kind not in UNITS:
        raise ValueError(f"{kind!r}: a scope is tenant, cluster, department or project")
    path, key = UNITS[kind]
    listed = service.call("GET", path, params={"filterBy": f"name=={name}"})[key]
    clusters = _unit_ids(service, "cluster", cluster) if cluster else None
    return {
        str(u["id"])
        for u in listed
        if u["name"] == name and (clusters is None or str(u["clusterId"]) in clusters)
    }


@click.command(help="Every version: when, what and who.")
@named
@scoped
@service_command
def history(service: Service, console: Console, name: str, scope: str | None) -> int:
    template = template_named(service, name, scope)
    answer = service.call("GET", f"{TEMPLATES}/{template['meta']['id']}/history")
    names = _application_names(service)
    rows = [
        [str(v["version"]), v["time"], v["type"], names.get(v["actor"], v["actor"]), v["actorKind"]]
        for v in answer["versions"]
    ]
    show_rows(f"{name}", ["version", "time", "change", "by", "kind"], rows, console)
    return NOTHING


def _application_names(service: Service) -> dict[str, str]:
    """Applications by id, to name who made each version (none where the caller may not list
    them: their ids are shown)."""
    try:
        return {a["id"]: a["name"] for a in service.call("GET", "/api/v1/apps")}
    except ServiceError:
        return {}


@click.command(help="What changed between two versions.")
@named
@click.option("--from", "old", type=int, required=True, metavar="V", help="the older version")
@click.option("--to", "new", type=int, metavar="V", help="the newer version (default: the current)")
@scoped
@service_command
def diff(
    service: Service, console: Console, name: str, old: int, new: int | None, scope: str | None
) -> int:
    template = template_named(service, name, scope)
    params = {"from": old, **({"to": new} if new else {})}
    answer = service.call("GET", f"{TEMPLATES}/{template['meta']['id']}/diff", params=params)
    for change in answer["changes"]:
        console.print(f"{change['field']}: {change['before']} -> {change['after']}", markup=False)
    return NOTHING


@click.command(help="A new version whose body is an older one's.")
@named
@click.option(
    "--to-version", type=int, required=True, metavar="V", help="the version to go back to"
)
@scoped
@service_command
def rollback(
    service: Service, console: Console, name: str, to_version: int, scope: str | None
) -> int:
    """A new version whose name, description and body are those of `--to-version`, written only
    if nobody changed the template meanwhile (If-Match)."""
    template = template_named(service, name, scope)
    template_id = template["meta"]["id"]
    old = service.call("GET", f"{TEMPLATES}/{template_id}/as-of", params={"version": to_version})
    body = {key: old[key] for key in ("spec", "assets", "masterSpecSameAsWorker", "master")
            if old.get(key) is not None}  # fmt: skip
    body["meta"] = {"name": old["meta"]["name"], "description": old["meta"]["description"]}
    current = service.call("GET", f"{DISTRIBUTED}/{template_id}")
    version = _history_length(service, template_id)
    written = service.call(
        "PUT", f"{DISTRIBUTED}/{template_id}", json=body, headers={"If-Match": f'"{version}"'}
    )
    changed = "" if written["spec"] != current["spec"] else " (its spec was already that)"
    console.print(f"{name}: rolled back to version {to_version}{changed}", markup=False)
    return NOTHING


def _history_length(service: Service, template_id: str) -> int:
    return len(service.call("GET", f"{TEMPLATES}/{template_id}/history")["versions"])
