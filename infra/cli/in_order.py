"""A command group whose help lists its commands in the order they were added (running the
service before using it; export, plan, apply before history), not alphabetically."""

import click


class InOrder(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.commands)
