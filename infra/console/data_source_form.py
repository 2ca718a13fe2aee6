"""A data source's form, for each kind the guide names: its fields in Run:ai's words, each named by
its value's JSON pointer in the body (`/spec/claimInfo/size`), a new PVC's as the Volume step's,
and the spec it says. No rule is checked here: the API's Structs, then the domain, do."""

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

import msgspec

from domain.values import AssetKind
from infra.console.form_fields import Field
from infra.console.storage_fields import ACCESS_MODES, volume_fields
from infra.http.data_source_specs import KINDS
from projections.storage_class_catalogue import StorageClassRow

KIND_LABELS: Final[dict[AssetKind, str]] = {
    "nfs": "NFS",
    "pvc": "PVC",
    "s3": "S3 Bucket",
    "git": "Git",
    "hostPath": "Host path",
    "config-map": "ConfigMap",
    "secret-volume": "Secret",
}
# A kind by the segment of its addresses (the API's: /api/v1/asset/datasource/<segment>).
BY_SEGMENT: Final[dict[str, AssetKind]] = {segment: kind for kind, (segment, _) in KINDS.items()}
META_FIELDS: Final = (
    Field(pointer="/meta/name", label="Data source name"),
    Field(pointer="/meta/description", label="Description"),
)
CONTAINER_PATH: Final = "Container path"
READ_ONLY: Final = "Prevent data modification (read-only)"
DEFAULT_MODE: Final = "Default mode (octal, e.g. 0644)"
PROPAGATION: Final = (("", "None"), ("HostToContainer", "Host to container"))


def _f(member: str, label: str, kind: str = "text", **more: Any) -> Field:
    return msgspec.convert(
        {"pointer": f"/spec/{member}", "label": label, "kind": kind, **more}, Field
    )


# A new PVC's fields (storage_fields.py, the Volume step's) in a data source's words.
NEW_PVC_LABELS: Final = {
    "/spec/claimInfo/storageClass": "Storage class",
    "/spec/claimInfo/accessModes": "Access mode(s)",
    "/spec/claimInfo/size": "Claim size",
    "/spec/claimInfo/volumeMode": "Volume mode",
    "/spec/ephemeral": "Volume persistency",
    "/spec/path": CONTAINER_PATH,
}


def pvc_fields(classes: Sequence[StorageClassRow] = ()) -> tuple[Field, ...]:
    """An existing claim's fields, or a new one's of the cluster's `classes` (those data
    sources may use; none: the class is typed), as the Volume step offers them."""
    new = volume_fields("/spec", classes, use="asset")
    return (
        _f("existingPvc", "Existing PVC", "checkbox"),
        _f("claimName", "Claim name", hint="An existing PVC's name"),
        *(msgspec.structs.replace(f, label=NEW_PVC_LABELS.get(f.pointer, f.label)) for f in new),
        _f("readOnly", READ_ONLY, "checkbox"),
    )


SPEC_FIELDS: Final[dict[AssetKind, tuple[Field, ...]]] = {
    "nfs": (
        _f("server", "NFS server (host name or host IP)"),
        _f("path", "NFS path"),
        _f("mountPath", CONTAINER_PATH),
        _f("readOnly", READ_ONLY, "checkbox"),
    ),
    "pvc": pvc_fields(),
    "s3": (
        _f("bucket", "Bucket name"),
        _f("url", "S3 service URL", hint="Empty: AWS"),
        _f("path", CONTAINER_PATH),
        _f("accessKeyAssetId", "Access key credential", hint="The credential's id"),
    ),
    "git": (
        _f("repository", "Repository URL"),
        _f("branch", "Branch"),
        _f("revision", "Revision", hint="Empty: the branch's latest"),
        _f("path", CONTAINER_PATH),
        _f("credentialId", "Credential", hint="The credential's id, for a private repository"),
    ),
    "hostPath": (
        _f("path", "Host path"),
        _f("mountPath", CONTAINER_PATH),
        _f("mountPropagation", "Mount propagation", "select", options=PROPAGATION),
        _f("readOnly", READ_ONLY, "checkbox"),
    ),
    "config-map": (
        _f("configMap", "ConfigMap name"),
        _f("mountPath", CONTAINER_PATH),
        _f("subPath", "Sub-path", hint="Mount one key of the ConfigMap as a file"),
        _f("defaultMode", DEFAULT_MODE),
    ),
    "secret-volume": (
        _f("credentialAssetId", "Credentials", hint="The credential's id"),
        _f("mountPath", CONTAINER_PATH),
        _f("defaultMode", DEFAULT_MODE),
    ),
}
# Where a kind's container path is, for the list.
MOUNTED_AT: Final = {kind: next(f.pointer for f in SPEC_FIELDS[kind] if f.label == CONTAINER_PATH)
                     for kind in SPEC_FIELDS}  # fmt: skip


_SNAKE: Final = re.compile(r"[A-Z]")


def _text(values: Mapping[str, Any], pointer: str) -> str:
    return str(values.get(pointer) or "").strip()


def _set(spec: dict[str, Any], member: str, value: Any) -> None:
    *outer, last = member.split("/")
    node = spec
    for part in outer:
        inner = node.get(part)
        node[part] = node = dict(inner) if isinstance(inner, dict) else {}
    node[last] = value


def _pop(spec: dict[str, Any], member: str) -> None:
    *outer, last = member.split("/")
    node: Any = spec
    for part in outer:
        inner = node.get(part)
        if not isinstance(inner, dict):
            return
        node[part] = node = dict(inner)
    node.pop(last, None)


def spec_of(
    kind: AssetKind, values: Mapping[str, Any], current: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The spec the form says: `current` (an edit's, its other members kept) with the fields
    shown as filled in, those left empty cleared; an unticked checkbox says "false" (NFS is
    read-only unless), access modes chosen from a list the spec's switches."""
    spec = {k: v for k, v in (current or {}).items() if k != "kind"}
    for field in SPEC_FIELDS[kind]:
        member = field.pointer.removeprefix("/spec/")
        _pop(spec, member)
        if field.kind == "multi":
            chosen = values.get(field.pointer) or []
            if chosen:
                _set(spec, member, {mode: mode in chosen for mode, _ in ACCESS_MODES})
            continue
        text = _text(values, field.pointer)
        if field.kind == "checkbox":
            _set(spec, member, text or "false")
        elif text:
            _set(spec, member, text)
    return spec


def values_of(kind: AssetKind, spec: Any) -> dict[str, Any]:
    """The form's values for a data source's spec, as a person reads them; read from the
    Struct's attributes, as its JSON leaves out the defaults (an NFS read-only)."""
    values: dict[str, Any] = {}
    for field in SPEC_FIELDS[kind]:
        node: Any = spec
        for part in field.pointer.removeprefix("/spec/").split("/"):
            node = getattr(node, _snake(part), None)
        if field.kind == "multi" and node is not None:  # switches: the list of those on
            values[field.pointer] = [
                mode for mode, _ in ACCESS_MODES if getattr(node, _snake(mode))
            ]
        elif node is not None:
            values[field.pointer] = str(node).lower() if isinstance(node, bool) else str(node)
    return values


def _snake(name: str) -> str:
    return _SNAKE.sub(lambda m: f"_{m[0].lower()}", name)


def meta_of(values: Mapping[str, Any]) -> dict[str, Any]:
    """Run:ai's update meta: name and description."""
    meta: dict[str, Any] = {"name": _text(values, "/meta/name")}
    if description := _text(values, "/meta/description"):
        meta["description"] = description
    return meta
