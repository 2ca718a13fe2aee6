"""An environment's form: its fields in the guide's words, each named by the JSON pointer of its
value in Run:ai's environment body, the body the form says, and a refusal's pointer back to
the field that holds it. No rule is checked here: the body goes to the API's own Structs and
then to the domain."""

import hashlib
from collections.abc import Mapping
from typing import Any, Final

import msgspec

from domain.tenant_settings import FRAMEWORKS
from infra.console.form_fields import PULL_POLICIES, Field
from infra.console.labels import label_of
from infra.console.scopes import scope_of

SCOPE_IDS: Final = {"cluster": "clusterId", "department": "departmentId", "project": "projectId"}
# Where the body says what the form's scope became.
ALIASES: Final = {
    "/meta/scope": "/scope",
    **{f"/meta/{member}": "/scope" for member in SCOPE_IDS.values()},
    "/meta/workloadSupportedTypes": "/meta/workloadSupportedTypes/distFramework",
}
FRAMEWORK: Final = "/meta/workloadSupportedTypes/distFramework"
# The spec's fields the form shows; an edit keeps the others as they were.
SPEC_FIELDS: Final = (
    Field(pointer="/spec/image", label=label_of("/image"), hint="e.g. pytorch/pytorch:2.5"),
    Field(
        pointer="/spec/imagePullPolicy",
        label=label_of("/imagePullPolicy"),
        kind="select",
        options=PULL_POLICIES,
    ),
    Field(pointer="/spec/command", label=label_of("/command"), hint="Empty: the image's"),
    Field(pointer="/spec/args", label=label_of("/args"), hint="e.g. --epochs=3"),
    Field(pointer="/spec/workingDir", label=label_of("/workingDir")),
)
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


def _text(values: Mapping[str, str], pointer: str) -> str:
    return (values.get(pointer) or "").strip()


def spec_of(values: Mapping[str, str], current: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The spec the form says: `current` (an edit's environment as it is) with the fields the
    form shows as filled in, those left empty cleared."""
    spec = dict(current or {})
    for field in SPEC_FIELDS:
        key = field.pointer.removeprefix("/spec/")
        spec.pop(key, None)
        if text := _text(values, field.pointer):
            spec[key] = text
    return spec


def creation_meta(values: Mapping[str, str]) -> dict[str, Any]:
    """Run:ai's creation meta of an asset: the scope chosen, its name and description."""
    kind, scope_id = scope_of(_text(values, "/scope"))
    meta: dict[str, Any] = {"name": _text(values, "/meta/name"), "scope": kind}
    if kind in SCOPE_IDS and scope_id:
        meta[SCOPE_IDS[kind]] = scope_id
    if description := _text(values, "/meta/description"):
        meta["description"] = description
    return meta


def creation_body(values: Mapping[str, str]) -> dict[str, Any]:
    """Run:ai's environment creation body: the scope chosen, name, description, the framework
    it is for, and the spec."""
    meta = creation_meta(values)
    if framework := _text(values, FRAMEWORK):
        meta["workloadSupportedTypes"] = {"distributed": True, "distFramework": framework}
    return {"meta": meta, "spec": spec_of(values)}


def update_body(values: Mapping[str, str], current: Mapping[str, Any]) -> dict[str, Any]:
    """Run:ai's environment update body: name, description and the spec."""
    meta: dict[str, Any] = {"name": _text(values, "/meta/name")}
    if description := _text(values, "/meta/description"):
        meta["description"] = description
    return {"meta": meta, "spec": spec_of(values, current)}


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
