"""CommitNotifier: appends carry the wake-up while they keep coming; a burst's end gets one
trailing NOTIFY of its own. (A recording stand-in for the pool; intervals far above the
event loop's jitter.)"""

import asyncio
from typing import cast

import asyncpg

from infra.postgres.commit_notifier import CommitNotifier

INTERVAL_S = 0.05


class RecordingPool:
    def __init__(self) -> None:
        self.sent: list[str] = []

    async def execute(self, query: str, *args: object) -> str:
        self.sent.append(query)
        return "SELECT 1"


def notifier() -> tuple[CommitNotifier, RecordingPool]:
    pool = RecordingPool()
    return CommitNotifier(cast(asyncpg.Pool, pool), interval_s=INTERVAL_S), pool


async def append(notifying: CommitNotifier) -> bool:
    carried_at = notifying.claim()
    await asyncio.sleep(0.001)  # the statement's round trip
    notifying.committed(carried_at)
    return carried_at is not None


async def test_steady_appends_carry_every_notify_and_the_end_gets_one_trailing() -> None:
    notifying, pool = notifier()
    carriers = 0
    for _ in range(60):  # one append every ~5 ms for ~0.3 s: six intervals
        carriers += await append(notifying)
        await asyncio.sleep(0.004)
    assert carriers >= 4
    assert pool.sent == [], "a trailing NOTIFY went out while appends were still coming"
    while await append(notifying):  # end the burst on an append that carried nothing
        pass
    await asyncio.sleep(3 * INTERVAL_S)
    assert len(pool.sent) == 1, "the burst's last append was left uncovered"


async def test_a_lone_append_without_a_carrier_is_covered_within_two_intervals() -> None:
    notifying, pool = notifier()
    assert await append(notifying)  # the first claims
    assert not await append(notifying)  # within the interval: uncovered
    await asyncio.sleep(4 * INTERVAL_S)
    assert len(pool.sent) == 1
    await asyncio.sleep(2 * INTERVAL_S)
    assert len(pool.sent) == 1, "nothing was left to cover"
