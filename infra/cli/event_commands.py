"""The events as subscribers see them: `trainplate events tail` (from JetStream as they arrive,
infra/cli/tail.py) and `trainplate contract export` (the AsyncAPI document)."""

import asyncio
import contextlib
import json
import sys
from pathlib import Path

import click

from infra.cli.endpoints import NATS, tool_settings


@click.group(help="The events on NATS JetStream.")
def events() -> None:
    pass


@events.command(help="Print events as they arrive, one line each.")
@click.option(
    "--type", "types", multiple=True, metavar="TAG", help="e.g. template.created.v1 (repeatable)"
)
@click.option("--stream", metavar="ID", help="one aggregate's id")
@click.option("--from-start", is_flag=True, help="from the first event kept")
@click.option("--count", type=int, metavar="N", help="stop after this many events")
def tail(types: tuple[str, ...], stream: str | None, from_start: bool, count: int | None) -> None:
    from infra.cli.tail import tail as tail_events

    with tool_settings("events", needs=NATS) as settings, contextlib.suppress(KeyboardInterrupt):
        asyncio.run(
            tail_events(
                settings.nats, types=types, stream=stream, from_start=from_start, count=count
            )
        )


@click.group(help="The event contract for subscribers.")
def contract() -> None:
    pass


@contract.command(help="Write the AsyncAPI document of the events.")
@click.option(
    "--output",
    type=click.Path(path_type=Path),
    metavar="FILE",
    help="write it here (default: standard output)",
)
def export(output: Path | None) -> None:
    from infra.jetstream.asyncapi import asyncapi

    with tool_settings("contract") as settings:
        text = json.dumps(asyncapi(settings.nats), indent=2, sort_keys=True) + "\n"
        if output is None:
            sys.stdout.write(text)
        else:
            output.write_text(text)
