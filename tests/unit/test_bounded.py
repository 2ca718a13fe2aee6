"""The write side's bounded memory (domain/bounded.py): the least recently read or written
entry goes first, and the caller is handed what went."""

from domain.bounded import Bounded


def test_the_least_recently_used_entry_makes_room() -> None:
    kept: Bounded[str, int] = Bounded(2)
    assert kept.put("a", 1) is None
    assert kept.put("b", 2) is None
    assert kept.get("a") == 1  # now the most recently used
    assert kept.put("c", 3) == 2  # "b" goes
    assert ("a" in kept, "b" in kept, "c" in kept) == (True, False, True)
    assert kept.put("a", 4) is None  # a new value for a kept key takes no room
    assert kept.get("a") == 4
    assert kept.pop("c") == 3
    assert kept.pop("c") is None
    assert kept.get("c") is None
