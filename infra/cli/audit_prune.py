"""`trainplate audit prune --before ISO-DATE`: the audit records logged before the date deleted
(infra/postgres/audit_retention.py), and the anchor of the cut printed, for the operator to keep
apart from the database: `audit verify` then starts the records' chain from it."""

import sys
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import asyncpg
import msgspec

if TYPE_CHECKING:  # the command line's start imports no adapter it may not run
    from infra.postgres.audit_records import RecordsAnchor


def moment(text: str) -> datetime:
    """An ISO 8601 date or time; one without a zone is UTC."""
    try:
        found = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{text!r} is no ISO 8601 date or time") from None
    return found if found.tzinfo is not None else found.replace(tzinfo=UTC)


async def prune(database_url: str, before: datetime) -> int:
    from infra.postgres.audit_retention import BrokenChainError, prune_records

    if before > datetime.now(UTC):
        sys.stderr.write(f"trainplate audit prune: {before.isoformat()} is in the future\n")
        return 2
    conn = await asyncpg.connect(database_url)
    try:
        anchor = await prune_records(conn, before)
    except BrokenChainError as error:
        sys.stderr.write(f"trainplate audit prune: nothing deleted: {error}\n")
        return 1
    finally:
        await conn.close()
    if anchor is None:
        sys.stdout.write(
            f"no audit record was logged before {before.isoformat()}: nothing deleted\n"
        )
        return 0
    sys.stdout.write(
        f"deleted {anchor.deleted} audit records logged before {before.isoformat()};"
        f" {anchor.kept} kept\nanchor (keep it apart from the database):"
        f" {msgspec.json.encode(anchor).decode()}\n"
    )
    return 0


def said(anchor: "RecordsAnchor") -> str:
    """How `audit verify` says where the records' chain starts."""
    return (
        f"audit records start at the anchor of record {anchor.seq} (hash {anchor.hash}),"
        f" pruned {anchor.pruned_at.isoformat()}: {anchor.deleted} logged before"
        f" {anchor.before.isoformat()} deleted"
    )
