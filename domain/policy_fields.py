"""The fields a distributed policy governs, as paths of Run:ai's `DistributedPolicyRulesV2`, and
each one's kind (which rules it takes: docs/api/policies.md). Read off the template spec's own
types, so a field the spec gains is governed with no second list to keep."""

from collections.abc import Mapping
from typing import Final, Literal

import msgspec
from msgspec import inspect

from domain.quantities import PATTERN as QUANTITY_PATTERN
from domain.template_specs import DistributedTemplateSpec, MasterTemplateSpec

Kind = Literal["integer", "number", "quantity", "string", "boolean", "array", "items", "object"]
Replica = Literal["worker", "master"]
# Nested objects whose fields are governed one by one; any other object is governed whole.
_OPENED: Final = frozenset({"compute", "security", "storage"})
# Ours, not Run:ai's: how the image was picked, and the registry it was picked from.
_NOT_GOVERNED: Final = frozenset({"imageSource", "imageRegistryId"})


class Field(msgspec.Struct, frozen=True, kw_only=True):
    kind: Kind
    # The values an enumerated field (or each item of an array) may take; () for any.
    values: tuple[str, ...] = ()
    # The member that names an item of an itemized field (None: its items have no name).
    key: str | None = None


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _kind_of(info: inspect.Type) -> Field | None:
    if isinstance(info, inspect.UnionType):  # `X | None`: the field is X
        found = [t for t in info.types if not isinstance(t, inspect.NoneType)]
        return _kind_of(found[0]) if len(found) == 1 else None
    if isinstance(info, inspect.BoolType):
        return Field(kind="boolean")
    if isinstance(info, inspect.IntType):
        return Field(kind="integer")
    if isinstance(info, inspect.FloatType):
        return Field(kind="number")
    if isinstance(info, inspect.StrType):
        return Field(kind="quantity" if info.pattern == QUANTITY_PATTERN else "string")
    if isinstance(info, inspect.LiteralType):
        return Field(kind="string", values=tuple(str(v) for v in info.values))
    if isinstance(info, inspect.VarTupleType):
        item = info.item_type
        if isinstance(item, inspect.StructType):
            names = {f.encode_name for f in item.fields}
            key = next((k for k in ("name", "resource", "id") if k in names), None)
            return Field(kind="items", key=key)
        inner = _kind_of(item)
        return Field(kind="array", values=inner.values if inner else ())
    if isinstance(info, inspect.StructType):
        return Field(kind="object")
    return None  # a UUID, say: no rule of a policy reaches it


def _fields(spec: type[msgspec.Struct], prefix: str) -> dict[str, Field]:
    found: dict[str, Field] = {}
    info = inspect.type_info(spec)
    assert isinstance(info, inspect.StructType)
    for member in info.fields:
        name = member.encode_name
        if name in _NOT_GOVERNED:
            continue
        inner = member.type
        if isinstance(inner, inspect.UnionType):
            structs = [t for t in inner.types if isinstance(t, inspect.StructType)]
            if name in _OPENED and structs:
                found |= _fields(structs[0].cls, f"{prefix}{name}.")
                continue
        kind = _kind_of(inner)
        if kind is not None:
            found[f"{prefix}{name}"] = kind
    return found


FIELDS: Final[Mapping[str, Field]] = {
    **_fields(DistributedTemplateSpec, "worker."),
    **_fields(MasterTemplateSpec, "master."),
}
RULE_MEMBERS: Final[Mapping[Kind, frozenset[str]]] = {
    "integer": frozenset({"required", "canEdit", "min", "max", "step"}),
    "number": frozenset({"required", "canEdit", "min", "max", "step"}),
    "quantity": frozenset({"required", "canEdit", "min", "max"}),
    "string": frozenset({"required", "canEdit", "options"}),
    "boolean": frozenset({"required", "canEdit"}),
    "array": frozenset({"required", "canEdit", "options"}),
    "items": frozenset({"canAdd", "locked"}),
    "object": frozenset({"required", "canEdit"}),
}


def replica_of(path: str) -> Replica:
    return "master" if path.startswith("master.") else "worker"


def spec_path(path: str) -> str:
    """The field's path inside its replica's spec ("worker.compute.gpuDevicesRequest" ->
    "compute.gpuDevicesRequest")."""
    return path.split(".", 1)[1]
