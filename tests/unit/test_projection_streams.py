"""A projection that names the streams it applies (its runner decodes no other event and moves
its checkpoint over them) names every stream of every event its module reacts to: an event
class its code names, or a tuple or union of them it names, is of one of those streams."""

import ast
import inspect
import typing
from types import ModuleType

import pytest

from domain import events as domain_events
from domain import workloads
from domain.events import Event, event_tag, stream_type_of
from projections import ALL, Projection

# Where the projections' code finds groups of event classes by a name of their own.
GROUPS = {
    **{name: getattr(domain_events, name) for name in dir(domain_events)},
    "WORKLOAD_EVENTS": workloads.WORKLOAD_EVENTS,
}


def _named_events(module: ModuleType) -> set[type[Event]]:
    tree = ast.parse(inspect.getsource(module))
    names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    names |= {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    found: set[type[Event]] = set()
    for name in names:
        value = GROUPS.get(name)
        members = value if isinstance(value, tuple) else typing.get_args(value) or (value,)
        found |= {
            member
            for member in members
            if isinstance(member, type) and issubclass(member, Event) and member is not Event
        }
    return found


@pytest.mark.parametrize(
    "projection", [p for p in ALL if p.streams is not None], ids=lambda p: p.name
)
def test_a_projection_names_the_streams_of_every_event_it_reacts_to(
    projection: Projection,
) -> None:
    module = inspect.getmodule(projection.apply)
    assert module is not None
    named = _named_events(module)
    assert named, "the scan found no event: it would prove nothing"
    outside = {
        event.__name__
        for event in named
        if stream_type_of(event_tag(event)) not in (projection.streams or ())
    }
    assert not outside, f"{projection.name} reacts to {sorted(outside)} of streams it skips"
