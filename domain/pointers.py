"""JSON pointers to the field a msgspec validation error names, for errors that name it."""

import re
from typing import Final

# msgspec says where an error is ("- at `$.spec.connections[0].containerPort`") and, for an error
# of an object as a whole, which field ("Object missing required field `name`", "Object contains
# unknown field `extra`"). Litestar passes the message on, keyed by the path or by "data".
_AT: Final = re.compile(r" - at `\$\.?([^`]*)`")
_FIELD: Final = re.compile(r"field `([^`]+)`")
_INDEX: Final = re.compile(r"\[(\d+)\]")


def pointer_in(message: str, base: str = "", key: str = "") -> str:
    """The JSON pointer a msgspec error message names, below `base`."""
    if (at := _AT.search(message)) is not None:
        key = at.group(1)
    if (named := _FIELD.search(message)) is not None:
        key = f"{key}.{named.group(1)}" if key else named.group(1)
    path = _INDEX.sub(r".\1", key)
    return base + ("/" + path.replace(".", "/") if path else "")
