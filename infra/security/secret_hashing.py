"""Application secrets kept as argon2id hashes (argon2-cffi), never as the secret.

Hashing is deliberately slow, so it runs in a thread, off the event loop. Checking a secret for a
client id that does not exist costs as much as for one that does, so timing tells nothing.
"""

import asyncio

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from infra.settings import AuthSettings


class SecretHasher:
    def __init__(self, settings: AuthSettings) -> None:
        self._hasher = PasswordHasher(
            time_cost=settings.hash_time_cost, memory_cost=settings.hash_memory_kib
        )
        # Made on the first unknown id, not at start-up: hashing is deliberately slow.
        self._decoy: str | None = None

    async def hash(self, secret: str) -> str:
        return await asyncio.to_thread(self._hasher.hash, secret)

    async def verify(self, stored: str | None, secret: str) -> bool:
        """Whether `secret` matches the `stored` hash; None (an unknown client) never matches,
        after as much work as a real check."""
        if stored is None and self._decoy is None:
            self._decoy = await self.hash("decoy secret")
        against = self._decoy if stored is None else stored
        assert against is not None
        matches = await asyncio.to_thread(self._check, against, secret)
        return matches and stored is not None

    def _check(self, stored: str, secret: str) -> bool:
        try:
            return self._hasher.verify(stored, secret)
        except (VerificationError, InvalidHashError):
            return False
