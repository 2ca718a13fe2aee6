"""A data source's form, for each kind the guide names: its fields in Run:ai's words, each named by
its value's JSON pointer in the body (`/spec/claimInfo/size`), and the spec it says. No rule is
checked here: the body goes to the API's own Structs, then to the domain."""

import re
from collections.abc import Mapping
from typing import Any, Final

import msgspec

from domain.values import AssetKind
from infra.console.form_fields import Field
from infra.http.data_source_specs import KINDS

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
VOLUME_MODES: Final = (("", "Default (Filesystem)"), ("Filesystem", "Filesystem"),
                       ("Block", "Block"))  # fmt: skip
PROPAGATION: Final = (("", "None"), ("HostToContainer", "Host to container"))


def _f(member: str, label: str, kind: str = "text", **more: Any) -> Field:
    return msgspec.convert(
        {"pointer": f"/spec/{member}", "label": label, "kind": kind, **more}, Field
    )


SPEC_FIELDS: Final[dict[AssetKind, tuple[Field, ...]]] = {
    "nfs": (
        _f("server", "NFS server (host name or host IP)"),
        _f("path", "NFS path"),
        _f("mountPath", CONTAINER_PATH),
        _f("readOnly", READ_ONLY, "checkbox"),
    ),
    "pvc": (
        _f("existingPvc", "Existing PVC", "checkbox"),
        _f("claimName", "Claim name", hint="An existing PVC's name"),
        _f("claimInfo/storageClass", "Storage class", hint="A new PVC's"),
        _f("claimInfo/size", "Claim size", hint="e.g. 10G"),
        _f("claimInfo/volumeMode", "Volume mode", "select", options=VOLUME_MODES),
        _f("path", CONTAINER_PATH),
        _f("readOnly", READ_ONLY, "checkbox"),
    ),
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


def _text(values: Mapping[str, str], pointer: str) -> str:
    return (values.get(pointer) or "").strip()


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
    kind: AssetKind, values: Mapping[str, str], current: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The spec the form says: `current` (an edit's data source as it is, its other members
    kept) with the fields the form shows as filled in, those left empty cleared. A checkbox
    left unticked says "false": the kind's default may be true (NFS is read-only unless)."""
    spec = {k: v for k, v in (current or {}).items() if k != "kind"}
    for field in SPEC_FIELDS[kind]:
        member = field.pointer.removeprefix("/spec/")
        _pop(spec, member)
        text = _text(values, field.pointer)
        if field.kind == "checkbox":
            _set(spec, member, text or "false")
        elif text:
            _set(spec, member, text)
    return spec


def values_of(kind: AssetKind, spec: Any) -> dict[str, str]:
    """The form's values for a data source's spec, as a person reads them; read from the
    Struct's attributes, as its JSON leaves out the defaults (an NFS read-only)."""
    values: dict[str, str] = {}
    for field in SPEC_FIELDS[kind]:
        node: Any = spec
        for part in field.pointer.removeprefix("/spec/").split("/"):
            node = getattr(node, _SNAKE.sub(lambda m: f"_{m[0].lower()}", part), None)
        if node is not None:
            values[field.pointer] = str(node).lower() if isinstance(node, bool) else str(node)
    return values


def meta_of(values: Mapping[str, str]) -> dict[str, Any]:
    """Run:ai's update meta: name and description."""
    meta: dict[str, Any] = {"name": _text(values, "/meta/name")}
    if description := _text(values, "/meta/description"):
        meta["description"] = description
    return meta
