"""`trainplate templates submit NAME --project P`: a workload from a template (`--version V`:
that version of it), with values set on its spec; `--wait` follows its phase to the end (exit
0 on success, 1 on failure)."""

import secrets
import time
from collections.abc import Sequence
from typing import Any, Final

import click
import yaml
from rich.console import Console

from infra.api_client.service import Service
from infra.cli.client_runs import NOTHING, service_command
from infra.cli.template_history import named, scoped, template_named

WORKLOADS: Final = "/api/v1/workloads/distributed"
FINISHED: Final = {"Completed": 0, "Failed": 1}
POLL_S: Final = 1.0


def overrides(sets: Sequence[str], env: Sequence[str]) -> dict[str, Any]:
    """The spec the `--set spec.a.b=V` and `--env K=V` options make (V read as YAML)."""
    spec: dict[str, Any] = {}
    for item in sets:
        path, sep, value = item.partition("=")
        parts = path.split(".")
        if not sep or parts[0] != "spec" or len(parts) < 2:
            raise ValueError(f"--set {item!r}: spec.FIELD=VALUE")
        node = spec
        for part in parts[1:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = yaml.safe_load(value)
    variables = []
    for item in env:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise ValueError(f"--env {item!r}: NAME=VALUE")
        variables.append({"name": name, "value": value})
    if variables:
        spec["environmentVariables"] = variables
    return spec


@click.command(help="Run a workload from the template.")
@named
@scoped
@click.option("--project", required=True, metavar="NAME", help="the project to run it in, by name")
@click.option("--version", type=int, metavar="V", help="run this version (default: the current)")
@click.option("--workload-name", metavar="NAME", help="default: the template's name and a suffix")
@click.option(
    "--set",
    "sets",
    multiple=True,
    metavar="FIELD=VALUE",
    help="spec.numWorkers=3 and such (repeatable)",
)
@click.option(
    "--env", multiple=True, metavar="NAME=VALUE", help="an environment variable (repeatable)"
)
@click.option("--wait", is_flag=True, help="follow it until it ends")
@click.option(
    "--timeout",
    type=float,
    default=3600.0,
    metavar="S",
    help="seconds --wait waits (default: 3600)",
)
@service_command
def submit(
    service: Service,
    console: Console,
    name: str,
    scope: str | None,
    project: str,
    version: int | None,
    workload_name: str | None,
    sets: tuple[str, ...],
    env: tuple[str, ...],
    wait: bool,
    timeout: float,
) -> int:
    template = template_named(service, name, scope)
    params = {"filterBy": f"name=={project}"}
    listed = service.call("GET", "/api/v1/org-unit/projects", params=params)["projects"]
    projects = [p for p in listed if p["name"] == project]
    if len(projects) != 1:
        raise ValueError(f"{len(projects)} projects named {project!r} are visible to you")
    body = {
        "name": workload_name or f"{name}-{secrets.token_hex(3)}",
        "projectId": projects[0]["id"],
        "clusterId": projects[0]["clusterId"],
        "templateId": template["meta"]["id"],
        "spec": overrides(sets, env),
    }
    if version is not None:
        body["templateVersion"] = version
    workload = service.call("POST", WORKLOADS, json=body)
    console.print(workload["workloadId"], markup=False)
    if not wait:
        return NOTHING
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        phase = service.call("GET", f"{WORKLOADS}/{workload['workloadId']}")["actualPhase"]
        if phase in FINISHED:
            console.print(phase, markup=False)
            return FINISHED[phase]
        time.sleep(POLL_S)
    raise ValueError(f"still {phase} after {timeout:.0f} s")
