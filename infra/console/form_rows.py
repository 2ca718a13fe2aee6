"""The template form's list rows: how many each list has, and what of an item no row shows. A list
is sent whole, so an edit shows a row for every item the template holds and keeps each item's
members no row holds: docs/decisions/0030-console-forms.md."""

import re
from collections.abc import Collection, Mapping
from typing import Any, Final

from infra.http.numerals import natural
from services.errors import InvalidRequestError

Rows = Mapping[str, int]

# The new-template form's blank rows, by the list's pointer under a spec.
_BLANK: Final = {
    "/ports": 1,
    "/exposedUrls": 1,
    "/environmentVariables": 2,
    "/compute/extendedResources": 1,
    "/tolerations": 2,
    "/storage/emptyDirVolume": 1,
    "/storage/pvc": 1,
    "/annotations": 2,
    "/labels": 2,
}
LISTS: Final[Mapping[str, int]] = {
    **{f"{at}{p}": n for at in ("/spec", "/master/spec") for p, n in _BLANK.items()},
    "/assets/datasources": 2,
    "/master/assets/datasources": 1,
    "/spec/connections": 1,  # an environment's tools (environment_fields.py)
}
_ITEM: Final = re.compile(r"^(?P<list>.+?)/(?P<index>[0-9]+)/")
# The rows a list of a form holds at most. A posted field names its row, so without a bound one
# field (`/spec/environmentVariables/999999999/name`) would have the form made and drawn with a
# billion rows.
MOST_ROWS: Final = 1000
# A data source's row names it by one choice, `<kind>|<id>`: both members are that field's.
_NAMED_BY: Final = {"ref": ("id", "kind")}


def rows_of(rows: Rows, pointer: str) -> int:
    """How many rows the list at `pointer` has (the new-template form's, unless `rows` says)."""
    return rows.get(pointer, LISTS[pointer])


def rows_in(
    values: Mapping[str, object], linked: Mapping[str, object] | None = None
) -> dict[str, int]:
    """Each list's rows for these values: up to the last row they fill (a row sent empty not
    counted), then the blank ones; a list a linked asset fills (`linked`, shown read-only) has a
    row for each of its items. Why: docs/decisions/0030-console-forms.md."""
    filled, shown = _filled(values), _filled(linked or {})
    return {
        pointer: max(filled.get(pointer, 0) + blank, shown.get(pointer, 0))
        for pointer, blank in LISTS.items()
    }


def _filled(values: Mapping[str, object]) -> dict[str, int]:
    """How many items each list has, up to the last one these values fill."""
    filled: dict[str, int] = {}
    for pointer, value in values.items():
        found = _ITEM.match(pointer)
        if found is None or found["list"] not in LISTS or value in ("", None, []):
            continue
        rows = rows_through(found["index"], pointer)
        filled[found["list"]] = max(filled.get(found["list"], 0), rows)
    return filled


def rows_through(text: str, pointer: str) -> int:
    """The rows of a list up to the one `text` (ASCII digits) names in the field at `pointer`;
    past MOST_ROWS, refused, naming the field."""
    index = natural(text)
    if index is None or index >= MOST_ROWS:
        raise InvalidRequestError(pointer, f"a list of this form holds at most {MOST_ROWS} rows")
    return index + 1


def with_unshown(
    body: dict[str, Any],
    current: Mapping[str, Any],
    fields: Collection[str],
    renamed: Mapping[str, str],
    *,
    skip: tuple[str, ...] = (),
) -> None:
    """Give each item of `body`'s lists back the members of `current`'s item in its row (`renamed`:
    moved up past an empty row) that no field of `fields` holds; lists under `skip` (filled from
    elsewhere than their rows) are left as they are."""
    for pointer in LISTS:
        sent, had = at_pointer(body, pointer), at_pointer(current, pointer)
        if (
            not isinstance(sent, list)
            or not isinstance(had, list | tuple)
            or pointer.startswith(skip)
        ):
            continue
        shown = _shown(fields, pointer)
        for i, item in enumerate(sent):
            row = int(renamed.get(f"{pointer}/{i}", f"{pointer}/{i}").rsplit("/", 1)[1])
            if isinstance(item, dict) and row < len(had) and isinstance(had[row], dict):
                sent[i] = _merged(had[row], item, shown)


def at_pointer(document: Mapping[str, Any], pointer: str) -> Any:
    """What `document` holds at `pointer` (None where it holds nothing)."""
    node: Any = document
    for part in pointer.strip("/").split("/"):
        node = node.get(part) if isinstance(node, Mapping) else None
    return node


def _shown(fields: Collection[str], pointer: str) -> set[str]:
    """The members a row of the list holds, as paths within an item (`overrides/subPath`)."""
    shown: set[str] = set()
    for field in fields:
        found = _ITEM.match(field)
        if found is not None and found["list"] == pointer:
            member = field[found.end() :]
            shown.update((member, *_NAMED_BY.get(member, ())))
    return shown


def _merged(had: dict[str, Any], sent: dict[str, Any], shown: set[str], at: str = "") -> Any:
    """`sent`, with each member of `had` that no shown field holds, at any depth."""
    merged = dict(sent)
    for key, value in had.items():
        path = f"{at}{key}"
        if path in shown:
            continue
        if any(s.startswith(f"{path}/") for s in shown):
            inner = merged.get(key)
            if isinstance(value, dict):
                deeper = _merged(value, inner if isinstance(inner, dict) else {}, shown, f"{path}/")
                if deeper:
                    merged[key] = deeper
            continue
        merged.setdefault(key, value)
    return merged
