"""Folds of the events a store hands out again (services/kinds.py): made once while the store
keeps the tuple, let go when it forgets it; events read once are folded every time and never
held; events of another kind fold to None, kept as well."""

from collections.abc import Callable, Iterable
from uuid import uuid4

from domain import assets
from domain.errors import InvalidHistoryError
from domain.events import EnvironmentCreated, EnvironmentUpdated, Event
from domain.specs import EnvironmentSpec
from domain.values import AssetMeta
from infra.postgres.units_of_work import RememberedStreams
from services.kinds import fold_as, forget_folds_of, keep_folds_of
from services.ports.event_store import Stream


def counted(folds: list[int]) -> Callable[[Iterable[Event]], assets.Asset | None]:
    """The asset fold, noting each call in `folds`."""

    def fold(events: Iterable[Event]) -> assets.Asset | None:
        folds.append(1)
        return assets.fold(events)

    return fold


def history(edits: int) -> tuple[Event, ...]:
    asset_id = uuid4()
    created = EnvironmentCreated(
        asset_id=asset_id, meta=AssetMeta(name="pt", scope="tenant"), spec=EnvironmentSpec()
    )
    return (
        created,
        *(
            EnvironmentUpdated(asset_id=asset_id, name="pt", spec=EnvironmentSpec(image=f"pt:{n}"))
            for n in range(edits)
        ),
    )


def test_kept_events_are_folded_once_and_answer_the_same_state() -> None:
    folds: list[int] = []
    fold = counted(folds)
    events = history(3)
    keep_folds_of(events)
    first, again = fold_as(fold, events), fold_as(fold, events)
    assert folds == [1]
    assert again is first
    assert first is not None
    assert (first.version, first.spec) == (4, EnvironmentSpec(image="pt:2"))
    forget_folds_of(events)
    assert fold_as(fold, events) == first
    assert len(folds) == 2  # forgotten: folded again


def test_events_not_kept_are_folded_every_time() -> None:
    folds: list[int] = []
    fold = counted(folds)
    events = history(2)
    keep_folds_of(events)
    read_again = (*events,)  # equal events, another tuple the store did not keep
    assert fold_as(fold, read_again) == fold_as(fold, read_again) == fold_as(fold, events)
    assert len(folds) == 3
    fold_as(fold, iter(events))
    assert len(folds) == 4


def test_events_of_another_kind_fold_to_none_once() -> None:
    calls: list[int] = []

    def refusing(events: Iterable[Event]) -> assets.Asset | None:
        calls.append(1)
        raise InvalidHistoryError("not an asset stream")

    events = history(0)
    keep_folds_of(events)
    assert fold_as(refusing, events) is None
    assert fold_as(refusing, events) is None
    assert calls == [1]


def test_the_remembered_streams_keep_the_folds_of_what_they_hold_and_no_longer() -> None:
    folds: list[int] = []
    fold = counted(folds)
    remembered = RememberedStreams(capacity=1)
    stream_id, other = uuid4(), uuid4()
    old = Stream(3, history(2))
    remembered.keep(stream_id, old)
    fold_as(fold, old.events)
    fold_as(fold, old.events)
    assert len(folds) == 1
    new = Stream(4, history(3))
    remembered.keep(stream_id, new)  # read again: the old tuple is handed out no more
    fold_as(fold, old.events)
    assert len(folds) == 2
    fold_as(fold, new.events)
    fold_as(fold, new.events)
    assert len(folds) == 3
    remembered.keep(other, Stream(1, history(0)))  # the capacity is 1: `new` goes
    fold_as(fold, new.events)
    assert len(folds) == 4
