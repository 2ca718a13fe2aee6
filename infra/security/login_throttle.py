"""Failed logins, counted per client id and per address, refused past a limit (429) before any
secret is checked, so guessing costs the guesser time and us no argon2 work. Kept per API
process; a success does not clear the count (docs/decisions/0015-secrets-at-rest-and-logins.md)."""

import math
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from typing import Final

from infra.errors import InfraError

_KEYS_KEPT: Final = 10_000  # bounded memory: the least recently failing keys are forgotten


class LoginThrottledError(InfraError):
    slug = "too-many-logins"

    def __init__(self, retry_after_s: int) -> None:
        super().__init__(f"too many failed logins: try again in {retry_after_s} s")
        self.retry_after_s = retry_after_s


class LoginThrottle:
    def __init__(
        self,
        *,
        per_client: int,
        per_address: int,
        window_s: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._limits = {"client": per_client, "address": per_address}
        self._window_s = window_s
        self._clock = clock
        self._failures: OrderedDict[tuple[str, str], deque[float]] = OrderedDict()

    def check(self, client_id: str, address: str) -> None:
        """Raise LoginThrottledError if either key is past its limit."""
        now = self._clock()
        waits = [
            self._wait(("client", client_id), now),
            self._wait(("address", address), now),
        ]
        wait = max(waits)
        if wait > 0:
            raise LoginThrottledError(max(1, math.ceil(wait)))

    def failed(self, client_id: str, address: str) -> None:
        now = self._clock()
        for key in (("client", client_id), ("address", address)):
            times = self._failures.pop(key, None) or deque()
            times.append(now)
            self._failures[key] = times
        while len(self._failures) > _KEYS_KEPT:
            self._failures.popitem(last=False)

    def _wait(self, key: tuple[str, str], now: float) -> float:
        times = self._failures.get(key)
        if not times:
            return 0.0
        while times and times[0] <= now - self._window_s:
            times.popleft()
        if len(times) < self._limits[key[0]]:
            return 0.0
        # Refused until enough failures have left the window to fall below the limit.
        return times[len(times) - self._limits[key[0]]] + self._window_s - now
