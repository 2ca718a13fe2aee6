"""Numbers a request writes as text: its path, query, headers and form fields."""

from typing import Final

# Every number a request writes (a log position, an id, a version, a row) fits a 64-bit column.
_MOST: Final = 2**63 - 1
_MOST_DIGITS: Final = len(str(_MOST))


def natural(text: str) -> int | None:
    """The non-negative 64-bit integer `text` writes in ASCII digits, else None. Not
    `str.isdigit()`: it also admits characters `int()` refuses ("²"), or reads as numbers
    ("٣"). Longer numbers are no such integer, and are not converted at all: `int()` refuses
    past 4,300 digits (ValueError), and would spend time on many fewer."""
    if not (text.isascii() and text.isdigit()):
        return None
    digits = text.lstrip("0")
    if len(digits) > _MOST_DIGITS:
        return None
    number = int(digits or "0")
    return number if number <= _MOST else None
