"""The fields Run:ai's reference marks "(mandatory)", one table per item type, and the walk that
finds the first one a value leaves unset. Templates, assets, policies and submissions refuse
through it alike (docs/decisions/0004-mandatory-fields.md)."""

from collections.abc import Iterator, Mapping
from functools import cache
from types import UnionType
from typing import Annotated, Any, Final, Union, get_args, get_origin

import msgspec

from domain import specs
from domain import template_specs as t

Path = tuple[str | int, ...]

# Per item type, its mandatory fields (Python names). Reference schema names in comments.
MANDATORY: Final[Mapping[type[msgspec.Struct], tuple[str, ...]]] = {
    t.Toleration: ("key", "operator", "effect"),  # Toleration
    t.PortSpec: ("container", "service_type"),  # Port
    t.ExposedUrl: ("container",),  # ExposedUrl
    t.RelatedUrl: ("url", "type"),  # RelatedUrl
    t.Annotation: ("name",),  # Annotation
    t.Label: ("name",),  # Label
    t.TemplateEnvironmentVariable: ("name",),  # EnvironmentVariable
    t.SecretRef: ("name", "key"),  # EnvironmentVariableSecret
    t.ConfigMapKeyRef: ("name", "key"),  # EnvironmentVariableConfigMap
    t.UserCredentialRef: ("name", "key"),  # EnvironmentVariableUserCredential
    t.PodFieldPath: ("path",),  # EnvironmentVariablePodFieldReference
    specs.EnvironmentVariable: ("name",),  # EnvironmentVariableOfAsset
    specs.CredentialRef: ("asset_id", "key"),  # EnvironmentVariableCredential
    specs.ConfigMapRef: ("name", "key"),  # EnvironmentVariableConfigMap
    specs.PodFieldRef: ("path",),  # EnvironmentVariablePodFieldReference
    specs.ExtendedResource: ("resource",),  # ExtendedResource
    specs.Probe: ("handler",),  # Probe
    t.PodAffinity: ("type", "key"),  # PodAffinity
    t.MatchExpression: ("key", "operator"),  # MatchExpression
    t.NfsVolume: ("server", "path", "mount_path"),  # Nfs
    specs.NfsSpec: ("server", "path", "mount_path"),
    t.HostPathVolume: ("path", "mount_path"),  # HostPath
    specs.HostPathSpec: ("path", "mount_path"),
    t.PvcVolume: ("path",),  # PvcFieldsUpdatable
    specs.PvcSpec: ("path",),
    t.GitVolume: ("repository", "path"),  # GitCommon
    specs.GitSpec: ("repository", "path"),
    t.S3Volume: ("bucket", "path"),  # S3Common
    specs.S3Spec: ("bucket", "path"),
    t.ConfigMapVolume: ("config_map", "mount_path"),  # ConfigMap
    specs.ConfigMapSpec: ("config_map", "mount_path"),
    t.SecretVolume: ("secret", "mount_path"),  # SecretFieldsNonUpdatable, SecretFieldsUpdatable
    specs.SecretVolumeSpec: ("credential_asset_id", "mount_path"),  # CredentialAsset, ...Spec
    t.EmptyDirVolume: ("path",),  # EmptyDir
    t.DataVolume: ("id", "mount_path"),  # DataVolume
}
# Mandatory while another field of the item has a value: (field, other field, its value). Run:ai
# has Toleration.value "mandatory if operator is Exists, forbidden otherwise"; Kubernetes (and
# Run:ai's own TolerationOperator) have Exists take no value, so it is Equal that needs one.
MANDATORY_WHEN: Final[Mapping[type[msgspec.Struct], tuple[tuple[str, str, str], ...]]] = {
    t.Toleration: (("value", "operator", "Equal"),),
}


def unset(value: msgspec.Struct, *, items_only: bool = False) -> tuple[Path, str] | None:
    """Where (below `value`) the first mandatory field left unset (None or "") is, and why.
    `items_only`: only list items are held to it, as in a policy's defaults or a submission's
    overrides, whose objects merge field by field with what lies beneath."""
    return next(_unset(value, (), items_only, in_list=False), None)


def pointer(at: str, path: Path) -> str:
    return at + "".join(f"/{part}" for part in path)


def _unset(
    value: msgspec.Struct, path: Path, items_only: bool, *, in_list: bool
) -> Iterator[tuple[Path, str]]:
    if getattr(value, "exclude", None):  # it only drops an inherited item: its name is enough
        return
    kind = type(value)
    if in_list or not items_only:
        wire = _wire(kind)
        for name in MANDATORY.get(kind, ()):
            if getattr(value, name) in (None, ""):
                yield (*path, wire[name]), "required"
        for name, other, given in MANDATORY_WHEN.get(kind, ()):
            if getattr(value, other) == given and getattr(value, name) is None:
                yield (*path, wire[name]), f"required with {wire[other]} {given}"
    for name, encoded in _below(kind):
        inner = getattr(value, name)
        if inner is None:  # (most are: checked first)
            continue
        if isinstance(inner, msgspec.Struct):
            yield from _unset(inner, (*path, encoded), items_only, in_list=in_list)
        elif isinstance(inner, tuple):
            for i, item in enumerate(inner):
                if isinstance(item, msgspec.Struct):
                    yield from _unset(item, (*path, encoded, i), items_only, in_list=True)


@cache
def _wire(kind: type[msgspec.Struct]) -> dict[str, str]:
    return {f.name: f.encode_name for f in msgspec.structs.fields(kind)}


@cache
def _below(kind: type[msgspec.Struct]) -> tuple[tuple[str, str], ...]:
    """The fields of `kind` whose value may hold an item with mandatory fields: the walk skips
    the rest (most of a spec's fields are scalars)."""
    return tuple(
        (f.name, f.encode_name) for f in msgspec.structs.fields(kind) if _may_hold(f.type, set())
    )


def _may_hold(annotation: object, seen: set[object]) -> bool:
    """Whether a value of this type may be, or hold in a tuple, a struct with mandatory fields
    somewhere below it; unsure (Any, a type seen on the way) counts as yes."""
    if annotation in seen or annotation is Any or annotation is object:
        return True
    if isinstance(annotation, type) and issubclass(annotation, msgspec.Struct):
        if annotation in MANDATORY or annotation in MANDATORY_WHEN:
            return True
        fields = msgspec.structs.fields(annotation)
        return any(_may_hold(f.type, seen | {annotation}) for f in fields)
    origin = get_origin(annotation)
    if origin is Union or origin is UnionType:
        return any(_may_hold(arg, seen) for arg in get_args(annotation))
    if origin is tuple:
        return any(_may_hold(arg, seen) for arg in get_args(annotation) if arg is not Ellipsis)
    if origin is Annotated:
        return _may_hold(get_args(annotation)[0], seen)
    return False
