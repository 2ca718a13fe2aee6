"""Folding a stream whose kind the caller only supposes (an id from a request may name any
stream): the state, or None when the events are another kind's; and where a thing of a kind
lives, as a check of who may see it asks.

A fold of a stream's events as the store handed them out (a tuple: `Stream.events`) is kept, for
the tuple's lifetime in the cache: a stream the store remembers (infra/postgres/
remembered_streams.py) is handed out as the same tuple until it moves on, so a create that links
an environment edited a thousand times folds it once rather than on every request (it was 40%
of a create's CPU in the API process, bench/template_create.py --edits 1000). A tuple's events
never change, and the kept tuple is held, so its identity cannot pass to another meanwhile.
"""

from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Any, Final, Protocol, TypeVar

from domain.errors import InvalidHistoryError
from domain.events import Event
from domain.values import AssetMeta, ScopeRef

State = TypeVar("State")


_KEPT: Final = 2_000  # folds, as many as the store remembers streams
_folds: OrderedDict[tuple[object, int], tuple[tuple[Event, ...], Any]] = OrderedDict()


def fold_as(
    fold: Callable[[Iterable[Event]], State | None], events: Iterable[Event]
) -> State | None:
    if type(events) is not tuple:
        return _folded(fold, events)
    key = (fold, id(events))
    kept = _folds.get(key)
    if kept is not None and kept[0] is events:
        _folds.move_to_end(key)
        state: State | None = kept[1]
        return state
    state = _folded(fold, events)
    _folds[key] = (events, state)
    if len(_folds) > _KEPT:
        _folds.popitem(last=False)
    return state


def _folded(
    fold: Callable[[Iterable[Event]], State | None], events: Iterable[Event]
) -> State | None:
    try:
        return fold(events)
    except InvalidHistoryError:  # a stream of another kind
        return None


class Placed(Protocol):
    """A thing with a kind and a scope (an asset, a credential, a registry, a data volume)."""

    @property
    def kind(self) -> str: ...

    @property
    def meta(self) -> AssetMeta: ...

    @property
    def deleted(self) -> bool: ...


P = TypeVar("P", bound=Placed)


def live_scope(
    fold: Callable[[Iterable[Event]], P | None], kind: str
) -> Callable[[Iterable[Event]], ScopeRef | None]:
    """Where the live thing of `kind` that a stream's events make lives; None when they make
    none (nothing, a deleted one, or another kind's)."""

    def scope_in(events: Iterable[Event]) -> ScopeRef | None:
        found = fold_as(fold, events)
        if found is None or found.deleted or found.kind != kind:
            return None
        return found.meta.scope_ref

    return scope_in
