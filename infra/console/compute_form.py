"""A compute resource's form: the template form's compute fields, named `/spec/compute/<member>` as
in a template, the spec they say, and a refusal's pointer (`/spec/<member>`) back to its field.
No rule is checked here: the body goes to the API's own Structs, then to the domain."""

from collections.abc import Mapping
from typing import Any, Final

import msgspec

from infra.console.environment_form import creation_meta, field_at
from infra.console.form_fields import Field, compute_fields
from infra.console.form_rows import rows_in, with_unshown
from infra.console.template_detail import flattened, shown
from infra.http.numerals import natural

AT: Final = "/spec/compute"
EXTENDED: Final = f"{AT}/extendedResources"
META_FIELDS: Final = (
    Field(pointer="/meta/name", label="Compute resource name"),
    Field(pointer="/meta/description", label="Description"),
)


def spec_groups(gpu_limits: bool, values: Mapping[str, object]) -> tuple[tuple[str, Any], ...]:
    """The spec's fields by the guide's groups (GPU limits only where the tenant enables them),
    with a row for each extended resource `values` fills and a blank one for adding."""
    groups = compute_fields("/spec", gpu_limits=gpu_limits, rows=rows_in(values))
    return tuple((g.legend, g.fields) for g in groups)


def values_of(spec: Any) -> dict[str, str]:
    """The form's values for a compute resource's spec, as a person reads them."""
    found = flattened(msgspec.to_builtins(spec))
    return {f"{AT}{pointer}": str(shown(value)) for pointer, value in found if value is not None}


def _text(values: Mapping[str, str], pointer: str) -> str:
    return (values.get(pointer) or "").strip()


def spec_of(
    values: Mapping[str, str], fields: tuple[Field, ...], current: Mapping[str, Any] | None = None
) -> tuple[dict[str, Any], list[int]]:
    """The spec the form says, `current` (an edit's compute resource as it is) with each field
    the form shows as filled in and those left empty cleared; and the row each extended
    resource sent came from (a blank row is left out, so the items after it move up)."""
    spec = dict(current or {})
    for field in fields:
        key = field.pointer.removeprefix(f"{AT}/")
        if "/" in key:
            continue  # an extended resource's row, below
        spec.pop(key, None)
        if text := _text(values, field.pointer):
            spec[key] = text  # a checkbox ticked sends "true"; the API's Struct reads either
    items, rows = [], []
    for i in range(rows_in(values)[EXTENDED]):
        item = {
            member: text
            for member in ("resource", "quantity")
            if (text := _text(values, f"{EXTENDED}/{i}/{member}"))
        }
        if item:
            items.append(item)
            rows.append(i)
    spec.pop("extendedResources", None)
    if items:
        spec["extendedResources"] = items
    # A list is sent whole: an item keeps what its row does not show (its `exclude`).
    renamed = {f"{EXTENDED}/{k}": f"{EXTENDED}/{row}" for k, row in enumerate(rows)}
    shown_at = {f.pointer for f in fields}
    with_unshown(
        {"spec": {"compute": spec}}, {"spec": {"compute": current or {}}}, shown_at, renamed
    )
    return spec, rows


def creation_body(values: Mapping[str, str], fields: tuple[Field, ...]) -> dict[str, Any]:
    """Run:ai's compute resource creation body: the scope chosen, name, description, spec."""
    return {"meta": creation_meta(values), "spec": spec_of(values, fields)[0]}


def update_body(
    values: Mapping[str, str], fields: tuple[Field, ...], current: Mapping[str, Any]
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": _text(values, "/meta/name")}
    if description := _text(values, "/meta/description"):
        meta["description"] = description
    return {"meta": meta, "spec": spec_of(values, fields, current)[0]}


def field_of(pointer: str, known: set[str], rows: list[int]) -> str | None:
    """The form field a refusal's pointer names: the asset's `/spec/<member>` is the form's
    `/spec/compute/<member>`, an extended resource's item back at the row it came from."""
    if pointer.startswith("/spec/"):
        rest = pointer.removeprefix("/spec/")
        head, _, tail = rest.partition("/")
        if head == "extendedResources" and tail:
            index, _, member = tail.partition("/")
            if (row := natural(index)) is not None and row < len(rows):
                rest = f"{head}/{rows[row]}" + (f"/{member}" if member else "")
        pointer = f"{AT}/{rest}"
    return field_at(pointer, known)
