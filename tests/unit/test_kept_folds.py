"""A fold of the events the store handed out (a tuple) is made once while that tuple lives;
equal events read again are folded again; events of another kind fold to None, kept as well."""

from collections.abc import Callable, Iterable
from uuid import uuid4

from domain import assets
from domain.errors import InvalidHistoryError
from domain.events import EnvironmentCreated, EnvironmentUpdated, Event
from domain.specs import EnvironmentSpec
from domain.values import AssetMeta
from services.kinds import fold_as


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


def test_the_same_events_are_folded_once_and_answer_the_same_state() -> None:
    folds: list[int] = []
    fold = counted(folds)
    events = history(3)
    first, again = fold_as(fold, events), fold_as(fold, events)
    assert folds == [1]
    assert again is first
    assert first is not None
    assert (first.version, first.spec) == (4, EnvironmentSpec(image="pt:2"))


def test_events_read_again_are_folded_again() -> None:
    folds: list[int] = []
    fold = counted(folds)
    events = history(2)
    first = fold_as(fold, events)
    read_again = (*events,)  # equal events, another tuple
    assert fold_as(fold, read_again) == first
    assert len(folds) == 2


def test_events_given_one_by_one_are_never_kept() -> None:
    folds: list[int] = []
    fold = counted(folds)
    events = history(1)
    fold_as(fold, iter(events))
    fold_as(fold, iter(events))
    assert len(folds) == 2


def test_events_of_another_kind_fold_to_none_once() -> None:
    calls: list[int] = []

    def refusing(events: Iterable[Event]) -> assets.Asset | None:
        calls.append(1)
        raise InvalidHistoryError("not an asset stream")

    events = history(0)
    assert fold_as(refusing, events) is None
    assert fold_as(refusing, events) is None
    assert calls == [1]
