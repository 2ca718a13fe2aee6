"""The `trainplate` command: its tree of Click commands, each defined beside what it runs."""

from collections.abc import Sequence

import click

from infra.cli import (
    audit_commands,
    client_commands,
    event_commands,
    projection_commands,
    service_commands,
)
from infra.cli.in_order import InOrder


@click.group(
    cls=InOrder,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="""Distributed-training templates, Run:ai style.

Run the service (dev, serve, migrate, admin), keep an eye on it (verify, events, contract,
schema, audit, projections) with settings from TRAINPLATE_* variables; or use one over its REST
API (login, templates, workloads), logged in with `login` or given TRAINPLATE_URL and
TRAINPLATE_TOKEN.""",
)
def cli() -> None:
    pass


for command in (
    service_commands.dev,
    service_commands.serve,
    service_commands.migrate,
    service_commands.admin,
    audit_commands.verify,
    event_commands.events,
    event_commands.contract,
    service_commands.schema,
    audit_commands.audit,
    projection_commands.projections,
    client_commands.login,
    client_commands.templates,
    client_commands.workloads,
):
    cli.add_command(command)


def main(argv: Sequence[str] | None = None) -> None:
    """The `trainplate` script (and `python -m infra.cli`): exits with the command's code."""
    cli.main(args=argv, prog_name="trainplate")


if __name__ == "__main__":
    main()
