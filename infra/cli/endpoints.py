"""Which servers a `trainplate` tool command talks to: those its environment names, else those of
the local service (`trainplate dev` writes them to `<data dir>/endpoints.json` while it runs).
It never guesses a default port: a service it cannot find is one line saying what to do."""

import contextlib
import json
import os
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Final

import asyncpg
import click
import msgspec
import nats.errors

from infra.settings import Settings, redacted
from infra.telemetry.log_records import configure_logging

_GIVEN = {
    "database": ("TRAINPLATE_DATABASE_URL", "TRAINPLATE_DATABASE__URL"),
    "nats": ("TRAINPLATE_NATS_URL", "TRAINPLATE_NATS__URL"),
}


DATABASE: Final = ("database",)
NATS: Final = ("nats",)


class ServiceNotFoundError(Exception):
    """No server named, and no local service running: what to do, in one line."""


def located(settings: Settings, env: Mapping[str, str], *, needs: tuple[str, ...]) -> Settings:
    """`settings` with the URLs of `needs` ("database", "nats") that the environment leaves
    out taken from the local service's endpoints file."""
    missing = [need for need in needs if not any(env.get(name) for name in _GIVEN[need])]
    if not missing:
        return settings
    path = Path(settings.data_dir) / "endpoints.json"
    try:
        found = json.loads(path.read_text())
    except FileNotFoundError:
        raise ServiceNotFoundError(
            f"no trainplate is running here ({path} is missing): start one with `make run`, "
            f"or name its servers with {' and '.join(_GIVEN[m][0] for m in missing)}"
        ) from None
    except (OSError, ValueError) as error:
        raise ServiceNotFoundError(f"cannot read {path}: {error}") from None
    urls = {need: found.get(need) for need in missing}
    if not all(isinstance(url, str) for url in urls.values()):
        raise ServiceNotFoundError(f"{path} names no {', '.join(missing)} URL")
    if "database" in urls:
        database = msgspec.structs.replace(settings.database, url=urls["database"])
        settings = msgspec.structs.replace(settings, database=database)
    if "nats" in urls:
        nats = msgspec.structs.replace(settings.nats, url=urls["nats"])
        settings = msgspec.structs.replace(settings, nats=nats)
    return settings


@contextlib.contextmanager
def tool_settings(role: str, *, needs: tuple[str, ...] = ()) -> Iterator[Settings]:
    """The settings a tool command runs with, logging set up for `role`; a server it cannot
    find (exit 2) or reach (exit 1) is one line naming it without its password."""
    settings = Settings.from_env(os.environ)
    configure_logging(settings.log_level, settings.log_format, process=role)
    try:
        settings = located(settings, os.environ, needs=needs)
        yield settings
    except ServiceNotFoundError as error:
        click.echo(f"trainplate: {error}", err=True)
        sys.exit(2)
    except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, nats.errors.Error) as error:
        if not needs:
            raise
        where = " and ".join(
            redacted(settings.database.url if need == "database" else settings.nats.url)
            for need in needs
        )
        click.echo(f"trainplate: cannot reach {where}: {error}", err=True)
        sys.exit(1)
