"""Running the service and setting it up: `trainplate dev`, `serve PROCESS`, `migrate`, `schema`
and `admin create`."""

import asyncio
import logging
import os
import sys
from pathlib import Path

import asyncpg
import click
import msgspec

from infra.cli.endpoints import DATABASE, tool_settings
from infra.cli.processes import PROCESSES
from infra.settings import Settings
from infra.telemetry import tracing

PATHS = click.Path(path_type=Path)


@click.command(help="Run the whole service with embedded PostgreSQL and NATS.")
@click.option(
    "--port", type=int, metavar="PORT", help="API port (default: $TRAINPLATE_API_PORT or 8080)"
)
@click.option(
    "--data-dir", type=PATHS, metavar="DIR", help="data directory (default: .trainplate/)"
)
def dev(port: int | None, data_dir: Path | None) -> None:
    from infra.cli.dev import run_dev

    with tool_settings("dev") as settings:
        overrides: dict[str, object] = {}
        if port is not None:
            overrides["api_port"] = port
        if data_dir is not None:
            overrides["data_dir"] = str(data_dir)
        sys.exit(run_dev(msgspec.structs.replace(settings, **overrides)))


@click.command(
    help=f"""Run one process against external servers.

PROCESS is {", ".join(PROCESSES[:-1])} or {PROCESSES[-1]}."""
)
@click.argument("process", type=click.Choice(PROCESSES), metavar="PROCESS")
def serve(process: str) -> None:
    with tool_settings(process) as settings:
        serve_process(process, settings)


def serve_process(process: str, settings: Settings) -> None:
    try:
        tracing.configure(f"{settings.service_name}-{process}", os.environ)
    except tracing.TracingUnavailableError as error:
        logging.getLogger("trainplate").error("%s", error)
        sys.exit(2)
    try:
        _serve(process, settings)
    finally:
        tracing.shutdown()  # what is still buffered goes out


def _serve(process: str, settings: Settings) -> None:
    if process == "api" and settings.api_server == "granian":
        from infra.server.granian_server import serve as serve_with_granian

        serve_with_granian(settings)
        return
    if process == "api":
        import uvicorn

        from infra.server.app import create_app

        uvicorn.run(
            create_app(settings),
            host=settings.api_host,
            port=settings.api_port,
            log_level=settings.log_level.lower(),
            # JSON: uvicorn's records go through the root logger's handler, as every other.
            log_config=None if settings.log_format == "json" else uvicorn.config.LOGGING_CONFIG,
            lifespan="on",
            proxy_headers=bool(settings.api_trusted_proxies),
            forwarded_allow_ips=settings.api_trusted_proxies or None,
        )
        return

    from infra.workers import projector, relay, submitter
    from infra.workers.lifecycle import run_until_signalled

    worker = {"relay": relay.run, "projector": projector.run, "submitter": submitter.run}[process]
    run_until_signalled(lambda stop: worker(settings, stop))


@click.command(help="Apply pending schema migrations and exit.")
def migrate() -> None:
    with tool_settings("migrate", needs=DATABASE) as settings:
        asyncio.run(_migrate(settings))


async def _migrate(settings: Settings) -> None:
    from infra.postgres.migrate import apply_migrations

    conn = await asyncpg.connect(settings.database.url)
    try:
        applied = await apply_migrations(conn)
    finally:
        await conn.close()
    click.echo(f"applied: {applied}" if applied else "schema is up to date")


@click.command(help="The schema the migrations make, as SQL to read.")
@click.option(
    "--output", type=PATHS, metavar="FILE", help="write it here (default: standard output)"
)
def schema(output: Path | None) -> None:
    from infra.cli.schema_export import export_schema

    with tool_settings("schema"):
        export_schema(output)


@click.group(help="The tenant-wide admin application.")
def admin() -> None:
    pass


@admin.command(
    help="""Make the admin application, unless it exists.

Its id is $TRAINPLATE_ADMIN_APP_ID; its secret $TRAINPLATE_ADMIN_APP_SECRET, else one generated
now and shown this once."""
)
def create() -> None:
    with tool_settings("admin", needs=DATABASE) as settings:
        _create_admin(settings)


def _create_admin(settings: Settings) -> None:
    from infra.cli.admin import create_admin

    made, secret = asyncio.run(
        create_admin(settings.database.url, settings, actor="trainplate-admin-create")
    )
    name = settings.admin_app_id
    if not made:
        click.echo(f"{name} exists already: its secret is as set or shown when it was made")
    elif secret is None:
        click.echo(
            f"made {name}, a tenant admin, with the secret TRAINPLATE_ADMIN_APP_SECRET holds"
        )
    else:
        click.echo(f"made {name}, a tenant admin; its secret, shown this once: {secret}")
