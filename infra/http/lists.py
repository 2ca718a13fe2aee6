"""What Run:ai's lists and their counts share: the `filterBy` and `search` query parameters,
`filterBy` read in a list's grammar (projections/list_grammar.py) with a bad item refused by
name, and the `{"count": n}` body of every `.../count`."""

from collections.abc import Sequence
from typing import Annotated

import msgspec
from litestar.params import QueryParameter

from projections.list_grammar import Condition, Grammar, InvalidFilterError, split_items
from services.errors import InvalidRequestError

# Sent as one comma-separated value, as Run:ai's clients join a list, or repeated.
FilterBy = Annotated[list[str] | None, QueryParameter(name="filterBy")]
Search = Annotated[str | None, QueryParameter()]


class Count(msgspec.Struct, frozen=True):
    count: int


def conditions_of(grammar: Grammar, filter_by: str | Sequence[str] | None) -> list[Condition]:
    """A request's `filterBy` in the list's grammar; a bad item is a 400 that names it."""
    try:
        return grammar.parse(split_items(filter_by))
    except InvalidFilterError as exc:
        raise InvalidRequestError(f"/filterBy/{exc.index}", str(exc)) from None
