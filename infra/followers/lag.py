"""Where each follower of the log stands: its checkpoint and how far the log has moved past it.

Read from the database alone, so any process answers it: `trainplate projections status`, and the
API's `/metrics` for every follower (infra/followers/metrics.py).
"""

from collections.abc import Sequence
from typing import Final

import msgspec

from infra.followers import faults, global_log
from infra.postgres.connections import Connection


class ProjectionStatus(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    position: int
    behind: int  # events committed after the checkpoint
    lag_s: float  # age of the oldest of those, 0 when caught up
    stuck: str | None = None  # where and why it stopped (infra/followers/faults.py), if it did


_STATUS: Final = """
SELECT count(*) AS behind,
       coalesce(extract(epoch FROM now() - min(recorded_at)), 0)::float8 AS lag_s
  FROM events
 WHERE (transaction_id, global_position) > ($1::xid8, $2::bigint)
"""


async def status(conn: Connection, names: Sequence[str]) -> list[ProjectionStatus]:
    """Where each projection stands: its position and how far behind the log it is."""
    return await followers_status(conn, [(name, f"projection:{name}") for name in names])


async def followers_status(
    conn: Connection, followers: Sequence[tuple[str, str]]
) -> list[ProjectionStatus]:
    """Where each follower of the log (a projection, the relay), given as (name, checkpoint),
    stands; the faults are read once for all of them."""
    stuck = await faults.stuck(conn)
    return [await _status_of(conn, checkpoint, name, stuck) for name, checkpoint in followers]


async def _status_of(
    conn: Connection, checkpoint: str, name: str, stuck: dict[str, faults.Fault]
) -> ProjectionStatus:
    cursor = await global_log.load_checkpoint(conn, checkpoint)
    row = await conn.fetchrow(_STATUS, cursor.transaction_id, cursor.position)
    assert row is not None
    fault = stuck.get(checkpoint)
    return ProjectionStatus(
        name=name,
        position=cursor.position,
        behind=row["behind"],
        lag_s=row["lag_s"],
        stuck=None if fault is None else fault.where(),
    )
