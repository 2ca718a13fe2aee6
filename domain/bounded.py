"""A process's memory of what it read or decided, bounded, least recently used out first: the
write side's streams, heads and folds, the API's tokens and standings, the read side's decoded
rows and their compliance are all this one mapping."""

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
