"""PostgresSignedOutSessions: the console sessions signed out before their token expired
(migration 0032), written on sign-out and asked by authentication through the access cache."""

from datetime import UTC, datetime
from typing import Final
from uuid import UUID

import asyncpg

_SIGN_OUT: Final = """
WITH gone AS (DELETE FROM signed_out_sessions WHERE expires_at < now())
INSERT INTO signed_out_sessions (session_id, expires_at) VALUES ($1, $2)
ON CONFLICT (session_id) DO NOTHING
"""
_ASK: Final = "SELECT EXISTS (SELECT FROM signed_out_sessions WHERE session_id = $1)"


class PostgresSignedOutSessions:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def sign_out(self, session_id: UUID, expires_at: int) -> None:
        """Forget the session whose token expires at `expires_at` (seconds since the epoch);
        the sessions signed out whose tokens have expired since go with it."""
        async with self._pool.acquire() as conn:
            await conn.execute(_SIGN_OUT, session_id, datetime.fromtimestamp(expires_at, UTC))

    async def signed_out(self, session_id: UUID) -> bool:
        async with self._pool.acquire() as conn:
            return bool(await conn.fetchval(_ASK, session_id))
