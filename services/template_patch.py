"""PATCH of a template, as Run:ai defines it: merge the sent fields into its body, then clear
`fieldsToClear`. JSON `null` means "not given", as runapy sends every unset member."""

import functools
import types
from typing import Annotated, Any, Final, Union, get_args, get_origin

import msgspec

from domain.pointers import pointer_in
from domain.templates import Template, TemplateBody
from services.errors import InvalidRequestError

_MEMBERS: Final = {"meta", "spec", "assets", "masterSpecSameAsWorker", "master", "fieldsToClear"}


def apply(current: Template, patch: dict[str, Any]) -> tuple[str, str | None, TemplateBody]:
    """The name, description and body once patched: the sent fields merged (objects field by
    field, lists and values replaced, a null not sent), then `fieldsToClear` (dotted paths such as
    `spec.image`) cleared. A patch that is not one is refused, naming its field."""
    patch = given(patch)
    if unknown := set(patch) - _MEMBERS:
        raise InvalidRequestError(f"/{sorted(unknown)[0]}", "not a field of a template patch")
    meta = patch.get("meta") or {}
    if not isinstance(meta, dict) or set(meta) - {"name", "description"}:
        raise InvalidRequestError("/meta", "only name and description can be patched")
    for member, value in meta.items():
        if not isinstance(value, str):
            raise InvalidRequestError(f"/meta/{member}", f"a string, not {type(value).__name__}")
    to_clear = patch.get("fieldsToClear") or []
    if not isinstance(to_clear, list) or not all(isinstance(p, str) for p in to_clear):
        raise InvalidRequestError("/fieldsToClear", "a list of dotted field paths")
    merged: dict[str, Any] = msgspec.to_builtins(
        {
            "spec": current.body.spec,
            "assets": current.body.assets,
            "masterSpecSameAsWorker": current.body.master_spec_same_as_worker,
            "master": current.body.master,
        }
    )
    merge(merged, {k: v for k, v in patch.items() if k not in ("meta", "fieldsToClear")})
    description = meta.get("description", current.meta.description)
    for i, path in enumerate(to_clear):
        if path == "meta.description":
            description = None
            continue
        clear(merged, path, f"/fieldsToClear/{i}")
    try:
        body = msgspec.convert(merged, TemplateBody)
    except msgspec.ValidationError as exc:
        raise InvalidRequestError(pointer_in(str(exc)), str(exc)) from None
    return meta.get("name") or current.meta.name, description, body


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


def clear(body: dict[str, Any], path: str, pointer: str) -> None:
    """Clear the field a dotted path names (`spec.compute.gpuDevicesRequest`); a path that
    names no field of a template body is refused, naming its entry."""
    parts = path.split(".")
    if not names_a_field(parts):
        raise InvalidRequestError(pointer, f"{path!r} names no template field")
    node: Any = body
    for part in parts[:-1]:
        node = node.get(part) if isinstance(node, dict) else None
        if node is None:
            return  # already clear
    if isinstance(node, dict):
        node.pop(parts[-1], None)


def names_a_field(parts: list[str]) -> bool:
    """Whether the path follows the fields of a template body, by their wire names, down
    through objects (a list or a value ends it)."""
    kind: Any = TemplateBody
    for part in parts:
        struct = _struct_in(kind)
        if struct is None:
            return False
        field = _fields_by_name(struct).get(part)
        if field is None:
            return False
        kind = field.type
    return bool(parts)


def _struct_in(kind: Any) -> type[msgspec.Struct] | None:
    """The struct type an annotation holds (through `| None` and `Annotated`), if any."""
    if get_origin(kind) is Annotated:
        return _struct_in(get_args(kind)[0])
    if get_origin(kind) in (Union, types.UnionType):
        found = [s for s in map(_struct_in, get_args(kind)) if s is not None]
        return found[0] if len(found) == 1 else None
    if isinstance(kind, type) and issubclass(kind, msgspec.Struct):
        return kind
    return None


@functools.cache
def _fields_by_name(struct: type[msgspec.Struct]) -> dict[str, msgspec.structs.FieldInfo]:
    return {f.encode_name: f for f in msgspec.structs.fields(struct)}
