"""Numbers a request writes as text: its path, query, headers and form fields."""

from typing import Final

# Every number a request writes (a log position, an id, a version, a row) fits a 64-bit column.
_MOST: Final = 2**63 - 1
_MOST_DIGITS: Final = len(str(_MOST))


def natural(text: str) -> int | None:
    """The non-negative 64-bit integer `text` writes in ASCII digits, else None: `str.isdigit()`
    alone admits "²" and "٣", and a longer number is not converted at all, as `int()` is slow on
    long ones (docs/decisions/0028-http-edge-and-answers.md)."""
    if not (text.isascii() and text.isdigit()):
        return None
    digits = text.lstrip("0")
    if len(digits) > _MOST_DIGITS:
        return None
    number = int(digits or "0")
    return number if number <= _MOST else None
