"""The `trainplate` command: `dev`, `serve <process>`, `migrate`, `admin`, `verify`, `audit`,
`projections`, `schema`; and, over any service's REST API, `login`, `templates` and
`workloads` (infra/cli/client_commands.py)."""

import argparse
import asyncio
import contextlib
import json
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Final

import asyncpg
import msgspec
import nats.errors

from infra.cli import client_commands
from infra.cli.audit_prune import moment, prune, said
from infra.cli.endpoints import ServiceNotFoundError, located
from infra.cli.processes import PROCESSES
from infra.settings import Settings, redacted
from infra.telemetry import tracing
from infra.telemetry.log_records import configure_logging


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="trainplate", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    dev = commands.add_parser("dev", help="run the whole service with embedded PostgreSQL and NATS")
    dev.add_argument("--port", type=int, help="API port (default: $TRAINPLATE_API_PORT or 8080)")
    dev.add_argument("--data-dir", type=Path, help="data directory (default: .trainplate/)")

    serve = commands.add_parser("serve", help="run one process against external servers")
    serve.add_argument("process", choices=PROCESSES)

    commands.add_parser("migrate", help="apply pending schema migrations and exit")
    admin = commands.add_parser("admin", help="the tenant-wide admin application")
    admin.add_argument(
        "action",
        choices=["create"],
        help="make it ($TRAINPLATE_ADMIN_APP_ID, secret $TRAINPLATE_ADMIN_APP_SECRET or generated)",
    )
    verify = commands.add_parser("verify", help="verify the hash chain of every stream")
    verify.add_argument("--stream", help="verify only this stream id")
    events = commands.add_parser("events", help="the events on NATS JetStream")
    events.add_argument("action", choices=["tail"])
    events.add_argument("--type", action="append", default=[], help="e.g. template.created.v1")
    events.add_argument("--stream", help="one aggregate's id")
    events.add_argument("--from-start", action="store_true", help="from the first event kept")
    events.add_argument("--count", type=int, help="stop after this many events")
    contract = commands.add_parser("contract", help="the event contract for subscribers")
    contract.add_argument("action", choices=["export"])
    contract.add_argument("--output", type=Path, help="write it here (default: standard output)")
    schema = commands.add_parser("schema", help="the schema the migrations make, as SQL to read")
    schema.add_argument("--output", type=Path, help="write it here (default: standard output)")
    audit = commands.add_parser(
        "audit", help="tamper evidence: walk every hash chain; prune old audit records"
    )
    audit.add_argument("action", choices=["verify", "prune"])
    audit.add_argument("--stream", help="verify only this stream id")
    audit.add_argument(
        "--before",
        type=moment,
        help="prune: delete the audit records logged before this ISO 8601 date (UTC unless said)",
    )
    projections = commands.add_parser(
        "projections", help="read models: where they stand, or rebuild one from zero"
    )
    projections.add_argument("action", choices=["status", "rebuild", "skip"])
    projections.add_argument(
        "name",
        nargs="?",
        help="with rebuild: the read model; with skip: the stuck one (or `relay`)",
    )
    client_commands.add_commands(commands)
    return parser


CLIENT_COMMANDS: Final = ("login", "templates", "workloads")


def main(argv: Sequence[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    if args.command in CLIENT_COMMANDS:  # a client of a service: none of its settings
        sys.exit(client_commands.run(args))
    settings = Settings.from_env(os.environ)
    role = args.process if args.command == "serve" else args.command
    configure_logging(settings.log_level, settings.log_format, process=role)
    needs = _NEEDS.get(args.command, ())
    try:
        settings = located(settings, os.environ, needs=needs)
        _run(args, settings)
    except ServiceNotFoundError as error:
        print(f"trainplate: {error}", file=sys.stderr)
        sys.exit(2)
    except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, nats.errors.Error) as error:
        if not needs:
            raise
        where = " and ".join(
            redacted(settings.database.url if need == "database" else settings.nats.url)
            for need in needs
        )
        print(f"trainplate: cannot reach {where}: {error}", file=sys.stderr)
        sys.exit(1)


# The servers each tool command talks to (infra/cli/endpoints.py finds the local ones).
_NEEDS: Final = {
    "migrate": ("database",),
    "admin": ("database",),
    "verify": ("database",),
    "audit": ("database",),
    "projections": ("database",),
    "events": ("nats",),
}


def _run(args: argparse.Namespace, settings: Settings) -> None:
    if args.command == "dev":
        from infra.cli.dev import run_dev

        overrides: dict[str, object] = {}
        if args.port is not None:
            overrides["api_port"] = args.port
        if args.data_dir is not None:
            overrides["data_dir"] = str(args.data_dir)
        sys.exit(run_dev(msgspec.structs.replace(settings, **overrides)))
    elif args.command == "serve":
        serve_process(args.process, settings)
    elif args.command == "migrate":
        asyncio.run(_migrate(settings))
    elif args.command == "admin":
        _create_admin(settings)
    elif args.command == "events":
        from infra.cli.tail import tail

        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(
                tail(
                    settings.nats,
                    types=args.type,
                    stream=args.stream,
                    from_start=args.from_start,
                    count=args.count,
                )
            )
    elif args.command == "contract":
        _export_contract(settings, args.output)
    elif args.command == "schema":
        from infra.cli.schema_export import export_schema

        export_schema(args.output)
    elif args.command == "projections" and args.action == "rebuild":
        sys.exit(asyncio.run(_rebuild(settings, args.name)))
    elif args.command == "projections" and args.action == "skip":
        sys.exit(asyncio.run(_skip(settings, args.name)))
    elif args.command == "projections":
        asyncio.run(_projections_status(settings))
    elif args.command == "audit" and args.action == "prune":
        if args.before is None:
            print("trainplate audit prune: give --before ISO-DATE", file=sys.stderr)
            sys.exit(2)
        sys.exit(asyncio.run(prune(settings.database.url, args.before)))
    else:
        sys.exit(asyncio.run(_verify(settings, args.stream)))


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
        from infra.server.granian_server import serve

        serve(settings)
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


async def _migrate(settings: Settings) -> None:
    from infra.postgres.migrate import apply_migrations

    conn = await asyncpg.connect(settings.database.url)
    try:
        applied = await apply_migrations(conn)
    finally:
        await conn.close()
    print(f"applied: {applied}" if applied else "schema is up to date")


def _create_admin(settings: Settings) -> None:
    from infra.cli.admin import create_admin

    made, secret = asyncio.run(
        create_admin(settings.database.url, settings, actor="trainplate-admin-create")
    )
    name = settings.admin_app_id
    if not made:
        print(f"{name} exists already: its secret is as set or shown when it was made")
    elif secret is None:
        print(f"made {name}, a tenant admin, with the secret TRAINPLATE_ADMIN_APP_SECRET holds")
    else:
        print(f"made {name}, a tenant admin; its secret, shown this once: {secret}")


async def _projections_status(settings: Settings) -> None:
    from infra.followers import fanout_runner
    from infra.followers.lag import followers_status
    from projections import ALL

    conn = await asyncpg.connect(settings.database.url)
    try:
        names = [projection.name for projection in ALL] + [fanout_runner.NAME]
        followers = [("relay", _relay_checkpoint(settings))]
        followers += [(name, f"projection:{name}") for name in names]
        report = await followers_status(conn, followers)
    finally:
        await conn.close()
    print(f"{'follower':28} {'position':>10} {'behind':>8} {'lag (s)':>8}")
    for line in report:
        print(f"{line.name:28} {line.position:>10} {line.behind:>8} {line.lag_s:>8.2f}")
    for line in report:
        if line.stuck is not None:
            print(f"STUCK {line.name} {line.stuck}")


async def _skip(settings: Settings, name: str | None) -> int:
    from infra.followers import faults

    if not name:
        print("trainplate projections skip: name the stuck projection", file=sys.stderr)
        return 2
    relay = name == "relay"
    if relay:
        checkpoint = _relay_checkpoint(settings)
    else:
        checkpoint = name if ":" in name else f"projection:{name}"
    conn = await asyncpg.connect(settings.database.url)
    try:
        fault = await faults.skip(conn, checkpoint)
    except faults.NothingToSkipError as error:
        print(f"trainplate projections skip: {error}", file=sys.stderr)
        return 1
    finally:
        await conn.close()
    lacks = "JetStream never carries it" if relay else "its read model lacks it until a rebuild"
    print(
        f"{checkpoint} moved past position {fault.cursor.position} (event {fault.event_id},"
        f" {fault.event_type}); {lacks}"
    )
    return 0


def _relay_checkpoint(settings: Settings) -> str:
    from infra.jetstream.outbox_relay import checkpoint_name

    return checkpoint_name(settings.relay)


def _export_contract(settings: Settings, output: Path | None) -> None:
    from infra.jetstream.asyncapi import asyncapi

    text = json.dumps(asyncapi(settings.nats), indent=2, sort_keys=True) + "\n"
    if output is None:
        sys.stdout.write(text)
    else:
        output.write_text(text)


async def _rebuild(settings: Settings, name: str | None) -> int:
    from infra.followers.rebuild import rebuild
    from infra.serialization import DOMAIN_CODEC
    from projections import ALL

    chosen = {projection.name: projection for projection in ALL}
    if name not in chosen:
        print(f"name one of: {', '.join(sorted(chosen))}", file=sys.stderr)
        return 2
    report = await rebuild(
        settings.database.url,
        chosen[name],
        DOMAIN_CODEC,
        settings.projector,
        progress=lambda done: print(f"  {done} events applied", end="\r", flush=True),
    )
    print(
        f"{report.name}: rebuilt from {report.events} events up to position {report.position} "
        f"in {report.seconds:.2f} s; swapped in with the live tables locked for "
        f"{report.swap_seconds:.3f} s"
    )
    return 0


async def _verify(settings: Settings, stream: str | None) -> int:
    from uuid import UUID

    from infra.postgres.audit_records import verify_records
    from infra.postgres.hashchain import first_missing, verify_all, verify_stream

    conn = await asyncpg.connect(settings.database.url)
    try:
        reports = [await verify_stream(conn, UUID(stream))] if stream else await verify_all(conn)
        missing = None if stream else await first_missing(conn)
        if missing is not None:
            reports.append(missing)
        records = None if stream else await verify_records(conn)
    finally:
        await conn.close()
    broken = [r for r in reports if not r.intact]
    for report in broken:
        assert report.broken_at is not None
        print(
            f"stream {report.stream_id}: broken at version {report.broken_at.version} "
            f"(event {report.broken_at.event_id}): {report.broken_at.reason}"
        )
    print(f"{len(reports)} streams checked, {len(broken)} broken")
    if records is not None and records.anchor is not None:
        print(said(records.anchor))
    if records is not None:
        at = records.broken_at
        state = "intact" if at is None else f"broken at record {at.seq}: {at.reason}"
        print(f"{records.records} audit records checked, {state}")
    return 1 if broken or (records is not None and not records.intact) else 0


if __name__ == "__main__":
    main()
