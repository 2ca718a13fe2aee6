"""Reading back what JetStream holds, to check the relay's promises against the broker itself."""

from uuid import UUID

import msgspec
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy


class Held(msgspec.Struct, frozen=True):
    sequence: int
    msg_id: str
    stream_id: UUID
    version: int
    subject: str
    headers: dict[str, str]
    data: bytes


async def read_stream(js: JetStreamContext, stream: str, subjects: str) -> list[Held]:
    """Every message in `stream` (on `subjects`, e.g. `trainplate.>`), in stream-sequence order."""
    expected = (await js.stream_info(stream)).state.messages
    sub = await js.pull_subscribe(
        subjects,
        stream=stream,
        config=ConsumerConfig(
            ack_policy=AckPolicy.NONE, deliver_policy=DeliverPolicy.ALL, max_waiting=1
        ),
    )
    held: list[Held] = []
    try:
        while len(held) < expected:
            try:
                batch = await sub.fetch(1000, timeout=2)
            except TimeoutError:  # nats-py's own, or asyncio's
                break
            for msg in batch:
                headers = dict(msg.headers or {})
                held.append(
                    Held(
                        sequence=msg.metadata.sequence.stream,
                        msg_id=headers["Nats-Msg-Id"],
                        stream_id=UUID(headers["ce-subject"].split("/", 1)[1]),
                        version=int(headers["trainplate-version"]),
                        subject=msg.subject,
                        headers=headers,
                        data=msg.data,
                    )
                )
    finally:
        await sub.unsubscribe()
    return held
