"""Folding a stream whose kind the caller only supposes (None: another kind's events), and where a
thing lives, for a check of who may see it. The folds of a tuple a store `keep_folds_of` are kept
until `forget_folds_of` (docs/decisions/0021-decisions-on-remembered-streams.md)."""

from collections.abc import Callable, Iterable
from typing import Any, Final, Protocol, TypeVar

from domain.bounded import Bounded
from domain.errors import InvalidHistoryError
from domain.events import Event
from domain.values import AssetMeta, ScopeRef

State = TypeVar("State")


# The tuples whose folds are kept, by identity: the tuple, and its states by fold. Bounded as
# well, should a store be dropped without forgetting its own.
_kept: Final[Bounded[int, tuple[tuple[Event, ...], dict[object, Any]]]] = Bounded(4_000)


def keep_folds_of(events: tuple[Event, ...]) -> None:
    """Keep the folds of these events (a tuple the store will hand out again)."""
    kept = _kept.get(id(events))
    if kept is None or kept[0] is not events:
        _kept.put(id(events), (events, {}))


def forget_folds_of(events: tuple[Event, ...]) -> None:
    """The store hands these events out no more: let their folds go."""
    kept = _kept.get(id(events))
    if kept is not None and kept[0] is events:
        _kept.pop(id(events))


def fold_as(
    fold: Callable[[Iterable[Event]], State | None], events: Iterable[Event]
) -> State | None:
    kept = _kept.get(id(events))
    if kept is None or kept[0] is not events:
        return _folded(fold, events)
    states = kept[1]
    if fold not in states:
        states[fold] = _folded(fold, events)
    state: State | None = states[fold]
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
