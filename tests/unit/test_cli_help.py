"""`trainplate --help` and each group's help list every command beside one whole line saying
what it does, and every command answers `-h`."""

from collections.abc import Iterator

import click
from click.testing import CliRunner

from infra.cli.main import cli


def commands(group: click.Group, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    for name, command in group.commands.items():
        yield (*path, name)
        if isinstance(command, click.Group):
            yield from commands(command, (*path, name))


def listed(help_text: str) -> dict[str, str]:
    """The `Commands:` section of a group's help, name to what it says (a wrapped line shows as
    a name of its own)."""
    found = {}
    for line in help_text.split("Commands:\n", 1)[1].splitlines():
        name, _, says = line.strip().partition(" ")
        found[name] = says.strip()
    return found


def test_every_group_lists_each_command_with_a_whole_line_of_help() -> None:
    runner = CliRunner()
    groups = [()] + [p for p in commands(cli) if isinstance(_command(p), click.Group)]
    for path in groups:
        shown = runner.invoke(cli, [*path, "--help"], prog_name="trainplate")
        assert shown.exit_code == 0, shown.output
        group = _command(path)
        assert isinstance(group, click.Group)
        lines = listed(shown.output)
        assert set(lines) == set(group.commands), path
        for name, text in lines.items():
            assert text.endswith("."), (*path, name, text)
            assert not text.endswith("..."), (*path, name, text)  # cut short


def test_every_command_answers_dash_h() -> None:
    runner = CliRunner()
    for path in commands(cli):
        shown = runner.invoke(cli, [*path, "-h"], prog_name="trainplate")
        assert shown.exit_code == 0, (path, shown.output)
        assert shown.output.startswith(f"Usage: trainplate {' '.join(path)} ")


def _command(path: tuple[str, ...]) -> click.Command:
    command: click.Command = cli
    for name in path:
        assert isinstance(command, click.Group)
        command = command.commands[name]
    return command
