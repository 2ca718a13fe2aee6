"""A command is about an outcome, not a version: one whose append loses a race to another writer
(the submitter, the fan-out, another user) is decided again on the streams as they now are.
If-Match is checked in every decision, so only a command sent without one can then succeed."""

import functools
from collections.abc import Awaitable, Callable
from typing import Final, ParamSpec, TypeVar

from services.errors import VersionConflictError

# Each lost race means another writer committed to the stream since the decision read it; a
# run of this many in a row is contention no retry settles, and the conflict is answered.
ATTEMPTS: Final = 10

P = ParamSpec("P")
T = TypeVar("T")


def decided_again(use_case: Callable[P, Awaitable[T]]) -> Callable[P, Awaitable[T]]:
    """The use case, run again from its first read when its append lost a race (nothing it
    decided was written); the last conflict is raised after ATTEMPTS runs. `reads`, what the
    request read before (a guard's), serve the first run only: they are what lost."""

    @functools.wraps(use_case)
    async def deciding(*args: P.args, **kwargs: P.kwargs) -> T:
        for _ in range(ATTEMPTS - 1):
            try:
                return await use_case(*args, **kwargs)
            except VersionConflictError:
                if "reads" in kwargs:
                    kwargs["reads"] = None
        return await use_case(*args, **kwargs)

    deciding.decided_again = True  # type: ignore[attr-defined]
    return deciding


def is_decided_again(use_case: object) -> bool:
    return getattr(use_case, "decided_again", False) is True
