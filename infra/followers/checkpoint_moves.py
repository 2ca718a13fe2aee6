"""Checkpoints of followers that took nothing of a batch, moved together in one statement (most
batches hold one read model's events, the others only move over them). A follower waits for its
move to be written before it goes on, as it did when it wrote its own."""

import asyncio

from infra.followers import global_log
from infra.followers.global_log import Cursor
from infra.postgres.connections import Connection


class CheckpointMoves:
    def __init__(self) -> None:
        self._waiting: dict[str, Cursor] = {}
        self._sent: asyncio.Future[bool] | None = None  # the send the next move joins

    async def move(self, conn: Connection, name: str, cursor: Cursor) -> None:
        """Move `name`'s checkpoint to `cursor` (never back), with whichever moves join it;
        `conn` is the follower's own, free while it waits."""
        self._waiting[name] = max(self._waiting.get(name, cursor), cursor)
        if self._sent is not None:
            if not await asyncio.shield(self._sent):  # its sender failed: this one writes
                await global_log.save_checkpoint(conn, name, cursor)
            return
        sent: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._sent, written = sent, False
        try:
            try:
                await asyncio.sleep(0)  # the followers served by the same read join now
            finally:
                moves, self._waiting, self._sent = self._waiting, {}, None
            await global_log.save_checkpoints(conn, moves)
            written = True
        finally:
            sent.set_result(written)  # unwritten (failed, or cancelled): each writes its own
