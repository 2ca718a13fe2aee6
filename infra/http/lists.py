"""What Run:ai's lists and their counts share: the `filterBy` and `search` query parameters
(projections/list_grammar.py reads them) and the `{"count": n}` body of every `.../count`."""

from typing import Annotated

import msgspec
from litestar.params import QueryParameter

# Sent as one comma-separated value, as Run:ai's clients join a list, or repeated.
FilterBy = Annotated[list[str] | None, QueryParameter(name="filterBy")]
Search = Annotated[str | None, QueryParameter()]


class Count(msgspec.Struct, frozen=True):
    count: int
