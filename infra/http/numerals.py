"""Numbers a request writes as text: its path, query, headers and form fields."""


def natural(text: str) -> int | None:
    """The non-negative integer `text` writes in ASCII digits, else None. Not `str.isdigit()`:
    it also admits characters `int()` refuses ("²"), or reads as numbers ("٣")."""
    if text.isascii() and text.isdigit():
        return int(text)
    return None
