"""Tamper evidence: `trainplate audit verify` (also `trainplate verify`) walks every stream's
hash chain and the audit records' chain, exit 1 naming where one breaks; `audit prune` cuts old
audit records under an anchor (infra/cli/audit_prune.py)."""

import asyncio
import sys

import asyncpg
import click

from infra.cli.audit_prune import moment, prune, said
from infra.cli.endpoints import DATABASE, tool_settings
from infra.settings import Settings

STREAM_HELP = "verify only this stream id"


@click.command(help="Verify the hash chain of every stream.")
@click.option("--stream", metavar="ID", help=STREAM_HELP)
def verify(stream: str | None) -> None:
    with tool_settings("verify", needs=DATABASE) as settings:
        sys.exit(asyncio.run(_verify(settings, stream)))


@click.group(help="Tamper evidence: verify hash chains, prune audit records.")
def audit() -> None:
    pass


@audit.command("verify", help="Verify the hash chain of every stream and of the audit records.")
@click.option("--stream", metavar="ID", help=STREAM_HELP)
def audit_verify(stream: str | None) -> None:
    with tool_settings("audit", needs=DATABASE) as settings:
        sys.exit(asyncio.run(_verify(settings, stream)))


@audit.command("prune", help="Delete the audit records logged before a date, under an anchor.")
@click.option(
    "--before",
    "before_text",
    metavar="ISO-DATE",
    required=True,
    help="delete the audit records logged before this ISO 8601 date (UTC unless said)",
)
def audit_prune(before_text: str) -> None:
    try:
        before = moment(before_text)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--before") from None
    with tool_settings("audit", needs=DATABASE) as settings:
        sys.exit(asyncio.run(prune(settings.database.url, before)))


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
        click.echo(
            f"stream {report.stream_id}: broken at version {report.broken_at.version} "
            f"(event {report.broken_at.event_id}): {report.broken_at.reason}"
        )
    click.echo(f"{len(reports)} streams checked, {len(broken)} broken")
    if records is not None and records.anchor is not None:
        click.echo(said(records.anchor))
    if records is not None:
        at = records.broken_at
        state = "intact" if at is None else f"broken at record {at.seq}: {at.reason}"
        click.echo(f"{records.records} audit records checked, {state}")
    return 1 if broken or (records is not None and not records.intact) else 0
