"""`trainplate login`, `trainplate templates ...` and `trainplate workloads save-template`:
templates as code from a shell or CI, over the service's REST API only. `plan` exits 0 when
nothing would change, 2 when something would, 1 on any error, so a CI job can gate on it."""

import argparse
import json
import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

from rich.console import Console

from infra.api_client import profile as profiles
from infra.api_client.profile import NotLoggedInError, Profile
from infra.api_client.service import DOCUMENTS, PLANS, SAVED_WORKLOADS, Service, ServiceError
from infra.cli import template_files, template_history, template_submits
from infra.cli.plan_tables import show_plan, summary
from infra.cli.template_files import FileError

NOTHING: Final = 0
FAILED: Final = 1
CHANGES: Final = 2
FORMATS: Final = ("table", "json", "yaml")
WIDE: Final = 200


def add_commands(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    login = commands.add_parser("login", help="keep a service's URL and an application's login")
    login.add_argument("--url", required=True, help="the service, e.g. http://127.0.0.1:8080")
    login.add_argument("--app-id", required=True, help="the application's client id (its name)")
    login.add_argument("--app-secret", required=True)
    templates = commands.add_parser("templates", help="templates as code: export, plan, apply")
    actions = templates.add_subparsers(dest="action", required=True)
    export = actions.add_parser("export", help="write each template as a YAML document")
    export.add_argument("--scope", action="append", help="project:NAME[@CLUSTER], tenant, ...")
    export.add_argument("-o", "--output", type=Path, required=True, help="the folder to write")
    for name, text in (("plan", "what applying would do"), ("apply", "apply it, all or none")):
        sub = actions.add_parser(name, help=text)
        sub.add_argument("-f", "--file", type=Path, action="append", default=[])
        sub.add_argument("--prune", action="store_true", help="delete what no file declares")
        sub.add_argument("--scope", action="append", help="where --prune may delete")
        sub.add_argument("-o", "--output", choices=FORMATS, default="table")
    template_history.add_commands(actions)
    template_submits.add_command(actions)
    apply = actions.choices["apply"]
    apply.add_argument("--plan", type=Path, help="apply exactly this plan (`plan -o json`)")
    apply.add_argument("--yes", action="store_true", help="do not ask before applying")
    workloads = commands.add_parser("workloads", help="workloads seen from templates")
    kept = workloads.add_subparsers(dest="action", required=True)
    save = kept.add_parser("save-template", help="a new template that runs as the workload did")
    save.add_argument("workload_id", metavar="ID")
    save.add_argument("--name", required=True, help="the new template's name")
    save.add_argument("--scope", help="project:NAME[@CLUSTER], tenant, ... (default: its project)")
    save.add_argument("--description")


def run(args: argparse.Namespace, environ: Mapping[str, str] = os.environ) -> int:
    # Piped (to a file, a CI log), tables keep whole values rather than Rich's 80 columns.
    width = None if sys.stdout.isatty() else int(environ.get("COLUMNS") or WIDE)
    console = Console(highlight=False, soft_wrap=True, width=width)
    errors = Console(stderr=True, highlight=False, soft_wrap=True)
    try:
        if args.command == "login":
            return _login(args, environ, console)
        with Service(profiles.load(environ)) as service:
            return COMMANDS[args.action](args, service, console)
    except (ServiceError, NotLoggedInError, FileError, OSError, ValueError) as error:
        errors.print(f"trainplate: {error}", markup=False)
        return FAILED


def _login(args: argparse.Namespace, environ: Mapping[str, str], console: Console) -> int:
    profile = Profile(url=args.url, app_id=args.app_id, app_secret=args.app_secret)
    with Service(profile) as service:
        service.login()  # refused credentials are never kept
    path = profiles.save(profile, environ)
    console.print(f"logged in to {args.url} as {args.app_id}; profile {path}", markup=False)
    return NOTHING


def _export(args: argparse.Namespace, service: Service, console: Console) -> int:
    answer = service.call("GET", DOCUMENTS, params={"scope": args.scope} if args.scope else None)
    written = template_files.write(args.output, answer["documents"])
    console.print(f"{len(written)} templates written under {args.output}", markup=False)
    return NOTHING


def _request(args: argparse.Namespace) -> dict[str, Any]:
    if not args.file:
        raise ValueError("name the template files or folders with -f")
    documents, sources = template_files.read(args.file)
    body: dict[str, Any] = {"documents": documents, "sources": sources, "prune": args.prune}
    if args.scope:
        body["scopes"] = [scope_of(label) for label in args.scope]
    return body


def _plan(args: argparse.Namespace, service: Service, console: Console) -> int:
    plan = service.call("POST", PLANS, json=_request(args))
    _show(plan, args.output, console)
    return CHANGES if plan["changed"] else NOTHING


def _apply(args: argparse.Namespace, service: Service, console: Console) -> int:
    if args.plan is not None:
        if not args.yes:
            raise ValueError("a saved plan is applied with --yes")
        plan = json.loads(args.plan.read_text())
    else:
        plan = service.call("POST", PLANS, json=_request(args))
        if not plan["changed"]:
            _show(plan, args.output, console)
            return NOTHING
        if args.output == "table":
            show_plan(plan, console)
        if not args.yes and not _confirmed(console):
            console.print("nothing applied")
            return FAILED
    applied = service.call("POST", PLANS, json={**plan, "apply": True})
    if args.output == "table":
        console.print(f"applied: {summary(applied)}", markup=False)
    else:
        _show(applied, args.output, console)
    return NOTHING


def _save_template(args: argparse.Namespace, service: Service, console: Console) -> int:
    body: dict[str, Any] = {"name": args.name}
    if args.scope:
        body["scope"] = scope_of(args.scope)
    if args.description is not None:
        body["description"] = args.description
    path = f"{SAVED_WORKLOADS}/{args.workload_id}/template"
    made = service.call("POST", path, json=body)
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


COMMANDS: Final[dict[str, Callable[[argparse.Namespace, Service, Console], int]]] = {
    "export": _export,
    "plan": _plan,
    "apply": _apply,
    "history": template_history.history,
    "diff": template_history.diff,
    "rollback": template_history.rollback,
    "submit": template_submits.submit,
    "save-template": _save_template,
}
