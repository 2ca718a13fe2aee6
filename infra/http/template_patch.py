"""PATCH of a template: merge the sent fields into its body, then clear `fieldsToClear`.

In a patch, JSON `null` means "not given", as Run:ai's clients send it: runapy's models send
every member they have, unset ones as null. Clearing a field is what `fieldsToClear` is for.
"""

from typing import Any, Final

from services.errors import InvalidRequestError


def given(patch: dict[str, Any]) -> dict[str, Any]:
    """The patch without its null members, at any depth of objects (a list is a value, kept
    whole)."""
    return {
        key: given(value) if isinstance(value, dict) else value
        for key, value in patch.items()
        if value is not None
    }


def merge(base: dict[str, Any], top: dict[str, Any]) -> None:
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            merge(base[key], value)
        else:
            base[key] = value


_CLEARABLE: Final = ("spec", "assets", "master", "masterSpecSameAsWorker")


def clear(body: dict[str, Any], path: str, pointer: str) -> None:
    parts = path.split(".")
    if not path or parts[0] not in _CLEARABLE or any(not p for p in parts):
        raise InvalidRequestError(pointer, f"{path!r} names no template field")
    node: Any = body
    for part in parts[:-1]:
        node = node.get(part) if isinstance(node, dict) else None
        if node is None:
            return  # already clear
    if isinstance(node, dict):
        node.pop(parts[-1], None)
