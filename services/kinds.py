"""Folding a stream whose kind the caller only supposes (an id from a request may name any
stream): the state, or None when the events are another kind's; and where a thing of a kind
lives, as a check of who may see it asks."""

from collections.abc import Callable, Iterable
from typing import Protocol, TypeVar

from domain.errors import InvalidHistoryError
from domain.events import Event
from domain.values import AssetMeta, ScopeRef

State = TypeVar("State")


def fold_as(
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
