"""Followers that took nothing of a batch move their checkpoints in one statement
(infra/followers/checkpoint_moves.py); each move is written before its follower goes on, never
backwards; and a move whose shared write failed is written by its own follower."""

import asyncio
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

import asyncpg
import pytest

from infra.followers import global_log
from infra.followers.checkpoint_moves import CheckpointMoves
from infra.followers.global_log import Cursor
from infra.postgres.connections import Connection

pytestmark = pytest.mark.integration


@contextmanager
def counted_writes(monkeypatch: pytest.MonkeyPatch, *, fail: bool = False) -> Iterator[list[int]]:
    """The shared writes sent (the real statement, counted), by how many moves each held."""
    sent: list[int] = []
    real = global_log.save_checkpoints

    async def save_checkpoints(conn: Connection, moves: Mapping[str, Cursor]) -> None:
        sent.append(len(moves))
        if fail:
            raise asyncpg.PostgresConnectionError("the shared write failed")
        await real(conn, moves)

    with monkeypatch.context() as patch:
        patch.setattr(global_log, "save_checkpoints", save_checkpoints)
        yield sent


async def test_moves_made_together_are_one_write_and_each_is_written_when_it_returns(
    clean_pool: asyncpg.Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    moves = CheckpointMoves()
    names = [f"projection:p{i}" for i in range(6)]
    async with clean_pool.acquire() as conn:
        await global_log.save_checkpoint(conn, names[0], Cursor(900, 90))  # ahead already
    connections = [await clean_pool.acquire() for _ in names]
    try:
        with counted_writes(monkeypatch) as sent:
            await asyncio.gather(
                *(
                    moves.move(c, n, Cursor(800, 80))
                    for c, n in zip(connections, names, strict=True)
                )
            )
        assert sent == [6]
        async with clean_pool.acquire() as conn:
            assert await global_log.load_checkpoint(conn, names[0]) == Cursor(900, 90)
            for name in names[1:]:
                assert await global_log.load_checkpoint(conn, name) == Cursor(800, 80)
    finally:
        for conn in connections:
            await clean_pool.release(conn)


async def test_a_move_whose_shared_write_failed_is_written_by_its_follower(
    clean_pool: asyncpg.Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    moves = CheckpointMoves()
    async with clean_pool.acquire() as first, clean_pool.acquire() as second:
        with counted_writes(monkeypatch, fail=True) as sent:
            outcomes = await asyncio.gather(
                moves.move(first, "projection:a", Cursor(5, 5)),
                moves.move(second, "projection:b", Cursor(6, 6)),
                return_exceptions=True,
            )
        assert sent == [2]
        assert isinstance(outcomes[0], asyncpg.PostgresConnectionError)  # the sender's own
        assert outcomes[1] is None
        assert await global_log.load_checkpoint(first, "projection:b") == Cursor(6, 6)
