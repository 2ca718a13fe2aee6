"""`trainplate events tail`: print events from JetStream as they arrive, one line each, from an
ordered consumer (ephemeral, restarted by nats-py on a gap) on the subjects `--stream ID` and
`--type` allow (the subject carries the fact, the `ce-type` header the version)."""

import asyncio
import json
import sys
from collections.abc import Sequence
from typing import TextIO

from nats.aio.msg import Msg
from nats.js.api import DeliverPolicy

from infra.bootstrap import connect_nats
from infra.jetstream.cloudevents import TYPE_PREFIX
from infra.settings import NatsSettings


def subjects_for(prefix: str, types: Sequence[str], stream: str | None) -> list[str]:
    aggregate = stream or "*"
    if not types:
        return [f"{prefix}.*.{aggregate}.*"]
    found = []
    for tag in types:
        stream_type, fact, _ = tag.split(".")
        found.append(f"{prefix}.{stream_type}.{aggregate}.{fact}")
    return sorted(set(found))


async def tail(
    nats: NatsSettings,
    *,
    types: Sequence[str] = (),
    stream: str | None = None,
    from_start: bool = False,
    count: int | None = None,
    out: TextIO = sys.stdout,
) -> int:
    """Print events until interrupted, or until `count` were printed. Returns how many."""
    nc = await connect_nats(nats, name="trainplate-tail")
    js = nc.jetstream()
    wanted_types = {TYPE_PREFIX + t for t in types}
    queue: asyncio.Queue[tuple[str, dict[str, str], bytes]] = asyncio.Queue()

    async def received(msg: Msg) -> None:
        await queue.put((msg.subject, dict(msg.headers or {}), msg.data))

    policy = DeliverPolicy.ALL if from_start else DeliverPolicy.NEW
    subscriptions = [
        await js.subscribe(
            subject, stream=nats.stream, cb=received, ordered_consumer=True, deliver_policy=policy
        )
        for subject in subjects_for(nats.subject_prefix, types, stream)
    ]
    printed = 0
    try:
        while count is None or printed < count:
            subject, headers, data = await queue.get()
            if wanted_types and headers.get("ce-type") not in wanted_types:
                continue
            body = json.dumps(json.loads(data), separators=(",", ":"))
            out.write(
                f"{headers.get('ce-time', '')} {headers.get('ce-type', '')} {subject} "
                f"v{headers.get('trainplate-version', '?')} {body}\n"
            )
            out.flush()
            printed += 1
    finally:
        for subscription in subscriptions:
            await subscription.unsubscribe()
        await nc.close()
    return printed
