"""`trainplate login`, `trainplate templates ...` and `trainplate workloads save-template`:
templates as code from a shell or CI, over the service's REST API only. `plan` exits 0 when
nothing would change, 2 when something would, 1 on any error, so a CI job can gate on it."""

import functools
import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import click
from rich.console import Console

from infra.api_client import profile as profiles
from infra.api_client.profile import Profile
from infra.api_client.service import DOCUMENTS, PLANS, SAVED_WORKLOADS, Service
from infra.cli import template_files, template_history, template_submits
from infra.cli.client_runs import CHANGES, FAILED, NOTHING, client_command, service_command
from infra.cli.in_order import InOrder
from infra.cli.plan_tables import show_plan, summary

FORMATS: Final = ("table", "json", "yaml")
SCOPES: Final = "project:NAME[@CLUSTER], tenant, ..."
PATHS: Final = click.Path(path_type=Path)


@click.command(help="Keep a service's URL and an application's login.")
@click.option("--url", required=True, metavar="URL", help="the service, e.g. http://127.0.0.1:8080")
@click.option(
    "--app-id", required=True, metavar="ID", help="the application's client id (its name)"
)
@click.option("--app-secret", required=True, metavar="SECRET", help="the application's secret")
@client_command
def login(console: Console, url: str, app_id: str, app_secret: str) -> int:
    profile = Profile(url=url, app_id=app_id, app_secret=app_secret)
    with Service(profile) as service:
        service.login()  # refused credentials are never kept
    path = profiles.save(profile, os.environ)
    console.print(f"logged in to {url} as {app_id}; profile {path}", markup=False)
    return NOTHING


@click.group(cls=InOrder, help="Templates as code: export, plan, apply.")
def templates() -> None:
    pass


@templates.command(help="Write each template as a YAML document.")
@click.option("--scope", multiple=True, metavar="SCOPE", help=f"{SCOPES} (repeatable)")
@click.option(
    "-o", "--output", type=PATHS, required=True, metavar="DIR", help="the folder to write"
)
@service_command
def export(service: Service, console: Console, scope: tuple[str, ...], output: Path) -> int:
    answer = service.call("GET", DOCUMENTS, params={"scope": list(scope)} if scope else None)
    written = template_files.write(output, answer["documents"])
    console.print(f"{len(written)} templates written under {output}", markup=False)
    return NOTHING


@dataclass(frozen=True, slots=True)
class Declared:
    """What `plan` and `apply` are told: the files, whether and where to prune, and how to
    show the plan."""

    files: tuple[Path, ...]
    prune: bool
    scopes: tuple[str, ...]
    output: str

    def request(self) -> dict[str, Any]:
        if not self.files:
            raise ValueError("name the template files or folders with -f")
        documents, sources = template_files.read(self.files)
        body: dict[str, Any] = {"documents": documents, "sources": sources, "prune": self.prune}
        if self.scopes:
            body["scopes"] = [scope_of(label) for label in self.scopes]
        return body


def _declared(run: Callable[..., None]) -> Callable[..., None]:
    """`run(declared=Declared(...), **the other options)`, with the options that make it."""

    @functools.wraps(run)
    def command(
        files: tuple[Path, ...], prune: bool, scope: tuple[str, ...], output: str, **rest: Any
    ) -> None:
        run(declared=Declared(files, prune, scope, output), **rest)

    options = (
        click.option("-f", "--file", "files", type=PATHS, multiple=True, metavar="PATH",
                     help="a YAML file or folder (repeatable)"),
        click.option("--prune", is_flag=True, help="delete what no file declares"),
        click.option("--scope", multiple=True, metavar="SCOPE", help="where --prune may delete"),
        click.option("-o", "--output", type=click.Choice(FORMATS), default="table",
                     help="how to print it (default: table)"),
    )  # fmt: skip
    for option in reversed(options):  # the last added is listed first
        command = option(command)
    return command


@templates.command(
    help="""Show what applying would do.

Exits 0 when nothing would change, 2 when something would, 1 on any error."""
)
@_declared
@service_command
def plan(service: Service, console: Console, declared: Declared) -> int:
    planned = service.call("POST", PLANS, json=declared.request())
    _show(planned, declared.output, console)
    return CHANGES if planned["changed"] else NOTHING


@templates.command(
    help="""Apply the plan, all of it or nothing.

Asks first, unless --yes; --plan applies a plan saved with `plan -o json` as it is, or nothing
if anything it read has moved since."""
)
@_declared
@click.option(
    "--plan", "saved", type=PATHS, metavar="FILE", help="apply exactly this plan (`plan -o json`)"
)
@click.option("--yes", is_flag=True, help="do not ask before applying")
@service_command
def apply(
    service: Service, console: Console, declared: Declared, saved: Path | None, yes: bool
) -> int:
    output = declared.output
    if saved is not None:
        if not yes:
            raise ValueError("a saved plan is applied with --yes")
        planned = json.loads(saved.read_text())
    else:
        planned = service.call("POST", PLANS, json=declared.request())
        if not planned["changed"]:
            _show(planned, output, console)
            return NOTHING
        if output == "table":
            show_plan(planned, console)
        if not yes and not _confirmed(console):
            console.print("nothing applied")
            return FAILED
    applied = service.call("POST", PLANS, json={**planned, "apply": True})
    if output == "table":
        console.print(f"applied: {summary(applied)}", markup=False)
    else:
        _show(applied, output, console)
    return NOTHING


templates.add_command(template_history.history)
templates.add_command(template_history.diff)
templates.add_command(template_history.rollback)
templates.add_command(template_submits.submit)


@click.group(help="Workloads seen from templates.")
def workloads() -> None:
    pass


@workloads.command("save-template", help="A new template that runs as the workload did.")
@click.argument("workload_id", metavar="ID")
@click.option("--name", required=True, metavar="NAME", help="the new template's name")
@click.option("--scope", metavar="SCOPE", help=f"{SCOPES} (default: its project)")
@click.option("--description", metavar="TEXT", help="the new template's description")
@service_command
def save_template(
    service: Service,
    console: Console,
    workload_id: str,
    name: str,
    scope: str | None,
    description: str | None,
) -> int:
    body: dict[str, Any] = {"name": name}
    if scope:
        body["scope"] = scope_of(scope)
    if description is not None:
        body["description"] = description
    made = service.call("POST", f"{SAVED_WORKLOADS}/{workload_id}/template", json=body)
    console.print(f"template {made['meta']['name']} {made['meta']['id']}", markup=False)
    return NOTHING


def _confirmed(console: Console) -> bool:
    if not sys.stdin.isatty():
        raise ValueError("not applied: pass --yes to apply without a terminal to ask on")
    return console.input("Apply this plan? [y/N] ").strip().lower() in ("y", "yes")


def _show(data: Any, output: str, console: Console) -> None:
    if output == "json":
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    elif output == "yaml":
        sys.stdout.write(template_files.dump(data))
    else:
        show_plan(data, console)


def scope_of(label: str) -> dict[str, Any]:
    """`project:NAME@CLUSTER` and the like as a document's scope."""
    if label == "tenant":
        return {"tenant": True}
    kind, _, rest = label.partition(":")
    name, _, cluster = rest.partition("@")
    if kind not in ("cluster", "department", "project") or not name:
        raise ValueError(
            f"{label!r}: a scope is tenant or KIND:NAME (cluster, department, project)"
        )
    return {kind: name, **({"cluster": cluster} if cluster else {})}
