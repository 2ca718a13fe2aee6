"""Named SQL statements, kept as files so they read (and review) as SQL."""

from functools import cache
from importlib import resources
from typing import Final

# Where a statement may carry the log's wake-up: a comment, so the file as written does not.
_NOTIFY_MARK: Final = "/* , notify */"


@cache
def statement(name: str) -> str:
    return resources.files("infra.postgres.sql").joinpath(f"{name}.sql").read_text()


@cache
def notifying(name: str) -> str:
    """The statement with its result also calling pg_notify('trainplate_events') (delivered at
    its commit). A separate text rather than a parameter: a `(SELECT pg_notify(..) WHERE $n)`
    subplan measured as a sizeable share of a one-row insert even when $n is false."""
    text = statement(name)
    if _NOTIFY_MARK not in text:
        raise ValueError(f"{name}.sql has no place for a wake-up ({_NOTIFY_MARK})")
    return text.replace(_NOTIFY_MARK, ", pg_notify('trainplate_events', '')")


def wake_up(name: str, carried_at: float | None) -> str:
    """The statement to send: `notifying(name)` when the append claimed the wake-up
    (CommitNotifier.claim returned a time), else the plain one."""
    return statement(name) if carried_at is None else notifying(name)
