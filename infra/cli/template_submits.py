"""`trainplate templates submit NAME --project P`: a workload from a template (`--version V`:
that version of it), with values set on its spec; `--wait` follows its phase to the end (exit
0 on success, 1 on failure)."""

import argparse
import secrets
import time
from typing import Any, Final

import yaml
from rich.console import Console

from infra.api_client.service import Service
from infra.cli.template_history import template_named

WORKLOADS: Final = "/api/v1/workloads/distributed"
FINISHED: Final = {"Completed": 0, "Failed": 1}
POLL_S: Final = 1.0


def add_command(actions: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    submit = actions.add_parser("submit", help="run a workload from the template")
    submit.add_argument("name")
    submit.add_argument("--scope", help="project:NAME and the like, where the name is not unique")
    submit.add_argument("--project", required=True, help="the project to run it in, by name")
    submit.add_argument("--version", type=int, help="run this version (default: the current)")
    submit.add_argument("--workload-name", help="default: the template's name and a suffix")
    submit.add_argument("--set", action="append", default=[], help="spec.numWorkers=3 and such")
    submit.add_argument("--env", action="append", default=[], help="an environment variable K=V")
    submit.add_argument("--wait", action="store_true", help="follow it until it ends")
    submit.add_argument("--timeout", type=float, default=3600.0, help="seconds --wait waits")


def overrides(sets: list[str], env: list[str]) -> dict[str, Any]:
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


def submit(args: argparse.Namespace, service: Service, console: Console) -> int:
    template = template_named(service, args.name, args.scope)
    params = {"filterBy": f"name=={args.project}"}
    listed = service.call("GET", "/api/v1/org-unit/projects", params=params)["projects"]
    projects = [p for p in listed if p["name"] == args.project]
    if len(projects) != 1:
        raise ValueError(f"{len(projects)} projects named {args.project!r} are visible to you")
    body = {
        "name": args.workload_name or f"{args.name}-{secrets.token_hex(3)}",
        "projectId": projects[0]["id"],
        "clusterId": projects[0]["clusterId"],
        "templateId": template["meta"]["id"],
        "spec": overrides(args.set, args.env),
    }
    if args.version is not None:
        body["templateVersion"] = args.version
    workload = service.call("POST", WORKLOADS, json=body)
    console.print(workload["workloadId"], markup=False)
    if not args.wait:
        return 0
    deadline = time.monotonic() + args.timeout
    while time.monotonic() < deadline:
        phase = service.call("GET", f"{WORKLOADS}/{workload['workloadId']}")["actualPhase"]
        if phase in FINISHED:
            console.print(phase, markup=False)
            return FINISHED[phase]
        time.sleep(POLL_S)
    raise ValueError(f"still {phase} after {args.timeout:.0f} s")
