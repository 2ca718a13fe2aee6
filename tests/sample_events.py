"""A small event catalogue for exercising the store and the relay, independent of the domain's."""

import msgspec

from domain.events import EnvironmentCreated, EnvironmentDeleted, EnvironmentUpdated, Event
from infra.serialization import EventCodec


class CounterOpened(Event, tag="counter.opened.v1", frozen=True, kw_only=True):
    name: str


class CounterIncremented(Event, tag="counter.incremented.v1", frozen=True, kw_only=True):
    by: int
    note: str = ""


class CounterLabelled(Event, tag="counter.labelled.v2", frozen=True, kw_only=True):
    labels: dict[str, str] = msgspec.field(default_factory=dict)


CODEC = EventCodec([CounterOpened, CounterIncremented, CounterLabelled])

# The contract tests' events: these, and the domain's environments (whose deletion frees what
# used them).
CONTRACT_CODEC = EventCodec(
    [
        CounterOpened,
        CounterIncremented,
        CounterLabelled,
        EnvironmentCreated,
        EnvironmentUpdated,
        EnvironmentDeleted,
    ]
)
