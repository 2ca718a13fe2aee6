"""A decision made on remembered streams (services/prefetch.py `decided`) is made again from the
streams as they are when they had moved on or when it refused, and never after a fault of the
store, whose append may have taken."""

from uuid import uuid4

import pytest

from domain.template_errors import InvalidTemplateError
from infra.errors import StoreUnavailableError
from services.errors import StaleReadError
from services.prefetch import decided


async def attempts(*failures: Exception | None) -> list[bool]:
    """The `remembered` of each decision made, the writes failing as given in turn."""
    made: list[bool] = []
    outcomes = list(failures)

    async def decide(remembered: bool) -> bool:
        made.append(remembered)
        return remembered

    async def write(decision: bool) -> bool:
        failure = outcomes.pop(0)
        if failure is not None:
            raise failure
        return decision

    await decided(decide, write)
    return made


async def test_a_decision_on_streams_that_had_not_moved_is_made_once() -> None:
    assert await attempts(None) == [True]


@pytest.mark.parametrize(
    "refusal",
    [StaleReadError(uuid4()), InvalidTemplateError("/assets/environment", "no such asset")],
    ids=["moved-on", "refused"],
)
async def test_a_decision_that_moved_on_or_refused_is_made_again_from_the_store(
    refusal: Exception,
) -> None:
    assert await attempts(refusal, None) == [True, False]


async def test_a_fault_of_the_store_is_not_decided_again() -> None:
    with pytest.raises(StoreUnavailableError):
        await attempts(StoreUnavailableError("down"), None)
