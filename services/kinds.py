"""Folding a stream whose kind the caller only supposes (an id from a request may name any
stream): the state, or None when the events are another kind's."""

from collections.abc import Callable, Iterable
from typing import TypeVar

from domain.errors import InvalidHistoryError
from domain.events import Event

State = TypeVar("State")


def fold_as(
    fold: Callable[[Iterable[Event]], State | None], events: Iterable[Event]
) -> State | None:
    try:
        return fold(events)
    except InvalidHistoryError:  # a stream of another kind
        return None
