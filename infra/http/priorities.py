"""The workload priority dictionary in Run:ai's shape (`GET /api/v1/workload-priorities`, with
`sortBy`, `sortOrder` and `filterBy`): it is fixed, so it is filtered and sorted here, in memory.
Also: domain/priorities.py."""

import re
from typing import Annotated, Final, Literal
from uuid import UUID

import msgspec
from litestar import get
from litestar.params import QueryParameter

from domain.priorities import DICTIONARY, Priority
from services.errors import InvalidRequestError

PATH: Final = "/api/v1/workload-priorities"
SOURCE: Final = "Run:ai"  # every priority is one Run:ai ships
_FILTER: Final = re.compile(r"^(name|source|value)(==|!=|<=|>=|=@|!@|=\^|=\$)(.+)$")


class WorkloadPriority(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    id: UUID
    name: str
    value: int
    source: str = SOURCE
    scope_type: str = "tenant"


class Priorities(msgspec.Struct, frozen=True):
    priorities: list[WorkloadPriority]


def _field(priority: Priority, field: str) -> str | int:
    if field == "value":
        return priority.value
    return priority.name if field == "name" else SOURCE


def _matches(priority: Priority, field: str, operator: str, wanted: str, at: str) -> bool:
    value = _field(priority, field)
    if isinstance(value, int) and operator in ("==", "!=", "<=", ">="):
        try:
            number = int(wanted)
        except ValueError:
            raise InvalidRequestError(at, f"{wanted!r} is not a number") from None
        return {
            "==": value == number,
            "!=": value != number,
            "<=": value <= number,
            ">=": value >= number,
        }[operator]
    text = str(value)
    return {
        "==": text == wanted,
        "!=": text != wanted,
        "<=": text <= wanted,
        ">=": text >= wanted,
        "=@": wanted in text,
        "!@": wanted not in text,
        "=^": text.startswith(wanted),
        "=$": text.endswith(wanted),
    }[operator]


@get(PATH, tags=["Workload properties"])
async def list_priorities(
    sort_by: Annotated[
        Literal["name", "source", "value"] | None, QueryParameter(name="sortBy")
    ] = None,
    sort_order: Annotated[Literal["asc", "desc"], QueryParameter(name="sortOrder")] = "asc",
    filter_by: Annotated[str | None, QueryParameter(name="filterBy")] = None,
) -> Priorities:
    """Unsorted, the dictionary is in the order of its values."""
    chosen = list(DICTIONARY)
    for index, item in enumerate(i for i in (filter_by or "").split(",") if i):
        at = f"/filterBy/{index}"
        match = _FILTER.match(item)
        if match is None:
            raise InvalidRequestError(at, f"{item!r} is not <name|source|value><operator><value>")
        field, operator, wanted = match.groups()
        chosen = [p for p in chosen if _matches(p, field, operator, wanted, at)]
    if sort_by is not None:
        chosen.sort(key=lambda p: (_field(p, sort_by), p.value))
    if sort_order == "desc":
        chosen.reverse()
    return Priorities([WorkloadPriority(id=p.id, name=p.name, value=p.value) for p in chosen])


PRIORITY_ROUTES: Final = (list_priorities,)
