"""A process's memory of what it read or decided, bounded: the least recently used goes first.

The caches of the write side (the streams and heads a store remembers, the folds kept of them,
what the fan-out and the pod watchers folded) and of the API's access (the tokens verified, the
callers' standing) are all this one mapping."""

from collections import OrderedDict
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class Bounded(Generic[K, V]):
    """At most `capacity` entries; reading or writing one makes it the most recently used."""

    def __init__(self, capacity: int) -> None:
        self._capacity = capacity
        self._entries: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        value = self._entries.get(key)
        if value is not None:
            self._entries.move_to_end(key)
        return value

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def put(self, key: K, value: V) -> V | None:
        """Keep `value` under `key`; the value that made room for it, if one had to go."""
        self._entries[key] = value
        self._entries.move_to_end(key)
        if len(self._entries) > self._capacity:
            return self._entries.popitem(last=False)[1]
        return None

    def pop(self, key: K) -> V | None:
        return self._entries.pop(key, None)
