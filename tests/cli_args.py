"""What a `trainplate` command line names, as the command parses it, without running it."""

from collections.abc import Sequence
from typing import Any

import click

from infra.cli.main import cli


def parsed(args: Sequence[str]) -> tuple[list[str], dict[str, Any]]:
    """The command path below `trainplate` and that command's parameters; an unknown command or
    a value it refuses raises click.UsageError."""
    group = click.Context(cli, info_name="trainplate")
    command: click.Command = cli
    path: list[str] = []
    rest = list(args)
    while isinstance(command, click.Group):
        name, found, rest = command.resolve_command(group, rest)
        assert name is not None
        assert found is not None
        if isinstance(found, click.Group):
            group = click.Context(found, info_name=name, parent=group)
        path.append(name)
        command = found
    return path, command.make_context(path[-1], rest, parent=group).params
