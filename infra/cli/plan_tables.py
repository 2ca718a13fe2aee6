"""A plan as people read it: one table row per template, then each change field by field and
each asset name with what it resolved to."""

from typing import Any

from rich.console import Console
from rich.table import Table

STYLES = {"create": "green", "update": "yellow", "delete": "red", "unchanged": "dim"}


def show_plan(plan: dict[str, Any], console: Console) -> None:
    table = Table(title="Applied" if plan.get("applied") else "Plan")
    for column in ("action", "template", "scope", "runnable", "policy", "source"):
        table.add_column(column)
    for t in plan["templates"]:
        runnable = t.get("runnable")
        issues = t.get("complianceIssues") or []
        table.add_row(
            f"[{STYLES[t['action']]}]{t['action']}[/]",
            t["name"],
            t["scopeName"],
            ""
            if runnable is None
            else "yes"
            if runnable["isRunnable"]
            else f"no: {runnable['issue']}",
            "" if t["action"] == "delete" else f"{len(issues)} issues" if issues else "complies",
            t.get("source") or "",
        )
    console.print(table)
    for t in plan["templates"]:
        if t["action"] in ("unchanged", "delete"):
            continue
        console.print(f"[bold]{t['action']} {t['scopeName']}/{t['name']}[/]")
        for change in t["changes"]:
            console.print(
                f"  {change['field']}: {_value(change['before'])} -> {_value(change['after'])}"
            )
        for asset in t["assets"]:
            how = {True: "linked", False: "copied", None: "loaded"}[asset["link"]]
            scope = asset["scope"]["kind"] + (
                f" {asset['scope']['id']}" if asset["scope"]["id"] else ""
            )
            console.print(
                f"  {asset['field']}: {asset['name']} is {asset['kind']} {asset['id']}"
                f" ({scope}, version {asset['version']}, {how})"
            )
        for issue in t.get("complianceIssues") or []:
            console.print(f"  policy: {issue['field']}: {issue['details']}")
    console.print(summary(plan))


def summary(plan: dict[str, Any]) -> str:
    counts = dict.fromkeys(STYLES, 0)
    for t in plan["templates"]:
        counts[t["action"]] += 1
    return ", ".join(
        f"{n} to {a}" if a != "unchanged" else f"{n} unchanged" for a, n in counts.items()
    )


def _value(value: Any) -> str:
    return "(none)" if value is None else str(value)


def show_rows(title: str, columns: list[str], rows: list[list[str]], console: Console) -> None:
    table = Table(title=title)
    for column in columns:
        table.add_column(column)
    for row in rows:
        table.add_row(*row)
    console.print(table)
