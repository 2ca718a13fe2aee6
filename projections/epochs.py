"""The one-row epoch tables a projection moves with its rows, in the same transaction: readers
keep what they derived from those rows until the epoch moves (migrations 0017 and 0048)."""

from typing import Final, Literal

from projections.executor import Executor

Epoch = Literal["org_units_epoch", "policy_epoch"]

_TOUCH: Final = """
INSERT INTO {table} (epoch) VALUES (pg_current_xact_id()::text::bigint)
ON CONFLICT (only_row) DO UPDATE SET epoch = excluded.epoch
"""


async def touch(conn: Executor, table: Epoch) -> None:
    await conn.execute(_TOUCH.format(table=table))
