"""The trace context each stream's newest traced event was appended in: for work that takes a
stream up later, with no message to say what asked for it (the submitter's sweep), so it goes
on in that stream's trace (docs/decisions/0033-traces-metrics-logs.md)."""

from collections.abc import Sequence
from typing import Final
from uuid import UUID

from infra.postgres.connections import Connection

NEWEST: Final = """
SELECT DISTINCT ON (stream_id) stream_id, metadata->>'traceparent' AS traceparent,
       metadata->>'tracestate' AS tracestate
  FROM events WHERE stream_id = ANY($1::uuid[]) AND metadata->>'traceparent' IS NOT NULL
 ORDER BY stream_id, version DESC
"""


async def newest_traces(
    conn: Connection, stream_ids: Sequence[UUID]
) -> dict[UUID, tuple[str, str | None]]:
    """By stream: its newest event's `traceparent` and `tracestate` (streams with none left out)."""
    rows = await conn.fetch(NEWEST, list(stream_ids))
    return {row["stream_id"]: (row["traceparent"], row["tracestate"]) for row in rows}
