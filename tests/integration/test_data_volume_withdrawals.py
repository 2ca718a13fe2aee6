"""A data volume unshared or deleted has its copies withdrawn by the submitter: its events reach
the withdrawal consumer through the relay and a real JetStream, a failed withdrawal is retried,
and a share (which withdraws nothing) is not handled."""

import asyncio
from collections import Counter
from uuid import UUID, uuid4

import asyncpg
import pytest

from domain.events import DataVolumeDeleted, DataVolumeShared, DataVolumeUnshared
from domain.specs import SharedScope
from infra.cli.embedded import EmbeddedNats
from infra.jetstream.data_volume_withdrawals import DataVolumeWithdrawals
from infra.postgres.streams import PostgresStreams
from infra.serialization import DOMAIN_CODEC
from infra.settings import NatsSettings, SubmitterSettings
from services.ports.event_store import Append
from tests.conftest import ACTOR
from tests.integration.test_submitter import relaying

pytestmark = [pytest.mark.integration]

PROJECT = SharedScope(scope_type="project", scope_id="7")


class Copies:
    """A backend's copies, as the consumer sees them (a fake of the port): each withdrawal
    asked, and a number of first attempts that fail as an unreachable cluster would."""

    def __init__(self, *, failing: int, expected: int) -> None:
        self.asked: list[UUID] = []
        self.all_asked = asyncio.Event()  # once `expected` withdrawals were asked
        self._failing = failing
        self._expected = expected

    async def withdraw_data_volume(self, data_volume_id: UUID) -> None:
        self.asked.append(data_volume_id)
        if len(self.asked) >= self._expected:
            self.all_asked.set()
        if self._failing:
            self._failing -= 1
            raise ConnectionError("the API server is away")


async def test_an_unshared_and_a_deleted_data_volume_are_withdrawn_and_a_share_is_not(
    clean_pool: asyncpg.Pool, broker: EmbeddedNats
) -> None:
    store = PostgresStreams(clean_pool, DOMAIN_CODEC)
    unshared, deleted, shared = uuid4(), uuid4(), uuid4()
    await store.append(Append(shared, [DataVolumeShared(datavolume_id=shared, scope=PROJECT)],
                       expected_version=None, metadata=ACTOR))  # fmt: skip
    await store.append(Append(unshared, [DataVolumeUnshared(datavolume_id=unshared, scope=PROJECT)],
                       expected_version=None, metadata=ACTOR))  # fmt: skip
    await store.append(Append(deleted, [DataVolumeDeleted(datavolume_id=deleted)],
                       expected_version=None, metadata=ACTOR))  # fmt: skip
    # The first attempt fails: the message comes back after the backoff, and succeeds.
    copies = Copies(failing=1, expected=3)
    settings = SubmitterSettings(backend="kubernetes", backoff_s="0.2")
    stop = asyncio.Event()
    async with relaying(clean_pool, broker.url) as js:
        consumer = DataVolumeWithdrawals(js, copies, NatsSettings(url=broker.url), settings)
        task = asyncio.create_task(consumer.run(stop))
        await asyncio.wait_for(copies.all_asked.wait(), timeout=30)
        await asyncio.sleep(0.5)  # time enough for anything asked twice, or of the share
        stop.set()
        await task
        info = await js.consumer_info("TRAINPLATE", consumer.durable)
    # The retry comes after the backoff: another volume's message may be handled first.
    assert Counter(copies.asked) == {unshared: 2, deleted: 1}
    assert info.num_ack_pending == 0  # each acknowledged once done
    assert info.num_pending == 0
