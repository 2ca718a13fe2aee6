"""The one-row epoch tables a projection moves with its rows, in the same transaction: readers
keep what they derived from those rows until the epoch moves (migrations 0017 and 0048)."""

from typing import Final, Literal

from projections.executor import Executor

Epoch = Literal["org_units_epoch", "policy_epoch"]

# Random, not the transaction's id: a projection commits without waiting for the disk, and after
# a crash a lost transaction's id is handed out again, to rows that may differ from those read.
_TOUCH: Final = """
INSERT INTO {table} (epoch)
VALUES (('x' || translate(gen_random_uuid()::text, '-', ''))::bit(64)::bigint)
ON CONFLICT (only_row) DO UPDATE SET epoch = excluded.epoch
"""


async def touch(conn: Executor, table: Epoch) -> None:
    await conn.execute(_TOUCH.format(table=table))
