"""The submitter's withdrawal of shared data volumes: a durable pull consumer per cluster of the
events after which no namespace may mount a volume any more, retried without end since there is
no workload to fail (docs/decisions/0009-kubernetes-backend-objects.md)."""

import asyncio
import logging
from typing import Final, Protocol, runtime_checkable
from uuid import UUID

from nats.aio.msg import Msg as Message
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig
from nats.js.errors import NotFoundError

from infra.jetstream.outbox_relay import ensure_stream
from infra.jetstream.work_queue import backoff_delay
from infra.settings import NatsSettings, SubmitterSettings

log = logging.getLogger(__name__)
FACTS: Final = ("unshared", "deleted")


@runtime_checkable
class DataVolumeCopies(Protocol):
    """A backend that copies data volumes into the namespaces they are shared into."""

    async def withdraw_data_volume(self, data_volume_id: UUID) -> None: ...


def filter_subjects(nats: NatsSettings) -> list[str]:
    return [f"{nats.subject_prefix}.datavolume.*.{fact}" for fact in FACTS]


def _data_volume_of(subject: str) -> UUID | None:
    """`trainplate.datavolume.<id>.<fact>` -> the id."""
    try:
        return UUID(subject.split(".")[-2])
    except (ValueError, IndexError):
        return None


class DataVolumeWithdrawals:
    def __init__(
        self,
        js: JetStreamContext,
        copies: DataVolumeCopies,
        nats: NatsSettings,
        settings: SubmitterSettings,
    ) -> None:
        self._js = js
        self._copies = copies
        self._nats = nats
        self._settings = settings
        self.durable = f"{settings.durable}-data-volumes"

    async def run(self, stop: asyncio.Event) -> None:
        await ensure_stream(self._js, self._nats)
        config = ConsumerConfig(
            durable_name=self.durable,
            ack_policy=AckPolicy.EXPLICIT,
            ack_wait=self._settings.ack_wait_s,
            filter_subjects=filter_subjects(self._nats),
        )
        try:
            await self._js.consumer_info(self._nats.stream, self.durable)
        except NotFoundError:
            await self._js.add_consumer(self._nats.stream, config)
        subscription = await self._js.pull_subscribe_bind(
            durable=self.durable, stream=self._nats.stream
        )
        try:
            while not stop.is_set():
                try:
                    messages = await subscription.fetch(self._settings.fetch_batch, timeout=1.0)
                except TimeoutError:  # nats-py raises its own and asyncio's: both are this
                    continue
                for message in messages:
                    await self._handle(message)
        finally:
            await subscription.unsubscribe()

    async def _handle(self, message: Message) -> None:
        data_volume_id = _data_volume_of(message.subject)
        if data_volume_id is None:
            await message.term()
            return
        try:
            await self._copies.withdraw_data_volume(data_volume_id)
        except Exception as error:
            delivered = message.metadata.num_delivered
            delay = backoff_delay(self._settings.backoff, delivered)
            log.warning(
                "data volume %s: its copies could not be deleted (attempt %d: %s);"
                " retrying in %.1fs",
                data_volume_id, delivered, error, delay,
            )  # fmt: skip
            await message.nak(delay=delay)
            return
        await message.ack()
