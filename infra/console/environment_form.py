"""An environment's form: its meta fields, the body it says (every spec field at its pointer,
environment_fields.py), the values an environment fills it with, and a refusal's pointer back to
its field. No rule is checked here: the body goes to the API's Structs, then to the domain."""

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any, Final

import msgspec

from domain.tenant_settings import FRAMEWORKS
from infra.console.environment_fields import CONNECTIONS, SOURCES, VARIABLES
from infra.console.form_document import compacted, set_at
from infra.console.form_fields import Field
from infra.console.form_rows import with_unshown
from infra.console.scopes import scope_of
from infra.console.template_detail import flattened, shown

SCOPE_IDS: Final = {"cluster": "clusterId", "department": "departmentId", "project": "projectId"}
# Where the body says what the form's scope became.
ALIASES: Final = {
    "/meta/scope": "/scope",
    **{f"/meta/{member}": "/scope" for member in SCOPE_IDS.values()},
    "/meta/workloadSupportedTypes": "/meta/workloadSupportedTypes/distFramework",
}
FRAMEWORK: Final = "/meta/workloadSupportedTypes/distFramework"
META_FIELDS: Final = (
    Field(pointer="/meta/name", label="Environment name"),
    Field(pointer="/meta/description", label="Description"),
)
NEW_FIELDS: Final = (
    Field(
        pointer=FRAMEWORK,
        label="Distributed framework",
        kind="select",
        options=(("", "None: not for distributed workloads"), *((f, f) for f in FRAMEWORKS)),
    ),
)
# The members of a variable that each give its value; its row's `source` chooses one.
VALUE_MEMBERS: Final = ("value", *(member for member, _ in SOURCES if member))
# The infos of a tool in the container, each for one connection type.
INFOS: Final = {
    "nodePortInfo": "NodePort",
    "externalUrlInfo": "ExternalUrl",
    "servingPortInfo": "ServingPort",
}


class Built(msgspec.Struct, frozen=True, kw_only=True):
    body: dict[str, Any]
    # an item's pointer in the body (moved up once empty rows were left out) -> its row's
    renamed: dict[str, str]
    # a variable's source sent that the form does not offer: its field -> what is wrong
    unknown: dict[str, str] = msgspec.field(default_factory=dict)


def _text(values: Mapping[str, Any], pointer: str) -> str:
    value = values.get(pointer)
    return value.strip() if isinstance(value, str) else ""


def spec_of(
    values: Mapping[str, Any], fields: Sequence[Field], current: Mapping[str, Any] | None = None
) -> tuple[dict[str, Any], dict[str, str]]:
    """The spec the form says: each field with a value at its pointer (an empty row left out),
    what `current` (an edit's spec as it is) holds that no field shows kept; and the rows the
    items moved up from."""
    document: dict[str, Any] = {"spec": {}}
    for field in fields:
        sent = values.get(field.pointer)
        if field.kind == "multi":
            chosen = [sent] if isinstance(sent, str) else list(sent or ())
            if chosen:
                set_at(document, field.pointer, chosen)
        elif text := _text(values, field.pointer):
            set_at(document, field.pointer, text)
    renamed: dict[str, str] = {}
    built = compacted(document, "", renamed)
    shown_at = {f.pointer for f in fields}
    tops = {p.split("/")[2] for p in shown_at}
    kept = {k: v for k, v in (current or {}).items() if k not in tops}
    body = {"spec": {**kept, **built["spec"]}}
    # A list is sent whole: an item keeps what its row does not show.
    with_unshown(body, {"spec": current or {}}, shown_at, renamed)
    _chosen_members(body["spec"])
    return body["spec"], renamed


def _chosen_members(spec: dict[str, Any]) -> None:
    """Keep what each row's choice says: a variable the member of its source, a connection the
    info of its place (in the container or outside it) and of its connection type."""
    for variable in spec.get("environmentVariables") or ():
        source = variable.pop("source", "") if isinstance(variable, dict) else None
        if source in dict(SOURCES):
            keep = source or "value"
            for member in VALUE_MEMBERS:
                if member != keep:
                    variable.pop(member, None)
    for connection in spec.get("connections") or ():
        if not isinstance(connection, dict):
            continue
        external = str(connection.get("isExternal", "")).lower() == "true"
        connection.pop("internalToolInfo" if external else "externalToolInfo", None)
        tool = connection.get("internalToolInfo")
        if isinstance(tool, dict):
            for info, kind in INFOS.items():
                if tool.get("connectionType") != kind:
                    tool.pop(info, None)


def _unknown_sources(values: Mapping[str, Any], fields: Sequence[Field]) -> dict[str, str]:
    """The variables' sources sent that the form does not offer: the body has no member the
    API's Struct could refuse for them."""
    offered = dict(SOURCES)
    return {
        f.pointer: f"Choose among {', '.join(offered.values())}."
        for f in fields
        if f.pointer.startswith(VARIABLES)
        and f.pointer.endswith("/source")
        and values.get(f.pointer, "") not in offered
    }


def creation_meta(values: Mapping[str, Any]) -> dict[str, Any]:
    """Run:ai's creation meta of an asset: the scope chosen, its name and description."""
    kind, scope_id = scope_of(_text(values, "/scope"))
    meta: dict[str, Any] = {"name": _text(values, "/meta/name"), "scope": kind}
    if kind in SCOPE_IDS and scope_id:
        meta[SCOPE_IDS[kind]] = scope_id
    if description := _text(values, "/meta/description"):
        meta["description"] = description
    return meta


def creation_body(values: Mapping[str, Any], fields: Sequence[Field]) -> Built:
    """Run:ai's environment creation body: the scope chosen, name, description, the framework
    it is for, and the spec."""
    meta = creation_meta(values)
    if framework := _text(values, FRAMEWORK):
        meta["workloadSupportedTypes"] = {"distributed": True, "distFramework": framework}
    spec, renamed = spec_of(values, fields)
    unknown = _unknown_sources(values, fields)
    return Built(body={"meta": meta, "spec": spec}, renamed=renamed, unknown=unknown)


def update_body(
    values: Mapping[str, Any], fields: Sequence[Field], current: Mapping[str, Any]
) -> Built:
    """Run:ai's environment update body: name, description and the spec."""
    meta: dict[str, Any] = {"name": _text(values, "/meta/name")}
    if description := _text(values, "/meta/description"):
        meta["description"] = description
    spec, renamed = spec_of(values, fields, current)
    unknown = _unknown_sources(values, fields)
    return Built(body={"meta": meta, "spec": spec}, renamed=renamed, unknown=unknown)


def values_of(name: str, description: str | None, spec: Any) -> dict[str, Any]:
    """The form's values for an environment, as a person reads them: each variable's source
    and each connection's place as its row's choice."""
    values: dict[str, Any] = {"/meta/name": name, "/meta/description": description or ""}
    for pointer, value in flattened(msgspec.to_builtins(spec)):
        at = f"/spec{pointer}"
        if isinstance(value, bool):
            values[at] = "true" if value else "false"
        elif isinstance(value, list | tuple):
            values[at] = [str(v) for v in value]
        elif value is not None:
            values[at] = str(shown(value))
    for i, variable in enumerate(getattr(spec, "environment_variables", None) or ()):
        held = msgspec.to_builtins(variable)
        source = next((m for m in VALUE_MEMBERS if m != "value" and m in held), "")
        values[f"{VARIABLES}/{i}/source"] = source
    for i, connection in enumerate(getattr(spec, "connections", None) or ()):
        values[f"{CONNECTIONS}/{i}/isExternal"] = "true" if connection.is_external else ""
    return values


def digest(body: Any) -> str:
    """What an impact preview was of: saving another body shows its preview first."""
    return hashlib.sha256(msgspec.json.encode(body, order="sorted")).hexdigest()[:32]


def field_at(pointer: str, known: set[str]) -> str | None:
    """The form field a refusal's pointer names (aliases followed, else the nearest enclosing
    one); None when no field holds it."""
    if not pointer.startswith("/"):
        return None
    while pointer:
        for candidate in (pointer, ALIASES.get(pointer)):
            if candidate in known:
                return candidate
        pointer = pointer.rsplit("/", 1)[0]
    return None


def field_of(pointer: str, built: Built, known: set[str]) -> str | None:
    """`field_at` once an item that moved up is put back at its row; a variable or connection
    as a whole is the choice its row makes (its source, its place)."""
    for moved, original in sorted(built.renamed.items(), key=lambda kv: -len(kv[0])):
        if pointer == moved or pointer.startswith(f"{moved}/"):
            pointer = original + pointer[len(moved) :]
            break
    for choice in ("source", "isExternal"):
        if f"{pointer}/{choice}" in known:
            return f"{pointer}/{choice}"
    return field_at(pointer, known)
