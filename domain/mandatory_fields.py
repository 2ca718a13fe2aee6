"""The fields Run:ai's reference marks "(mandatory)", one table per item type, and the walk that
finds the first one a value leaves unset. Templates, assets, policies and submissions refuse
through it alike (docs/decisions/0004-mandatory-fields.md)."""

from collections.abc import Iterator, Mapping
from functools import cache
from typing import Final

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
    fields = _fields(type(value))
    wire = dict(fields)
    if in_list or not items_only:
        for name in MANDATORY.get(type(value), ()):
            if getattr(value, name) in (None, ""):
                yield (*path, wire[name]), "required"
        for name, other, given in MANDATORY_WHEN.get(type(value), ()):
            if getattr(value, other) == given and getattr(value, name) is None:
                yield (*path, wire[name]), f"required with {wire[other]} {given}"
    for name, encoded in fields:
        inner = getattr(value, name)
        if isinstance(inner, msgspec.Struct):
            yield from _unset(inner, (*path, encoded), items_only, in_list=in_list)
        elif isinstance(inner, tuple):
            for i, item in enumerate(inner):
                if isinstance(item, msgspec.Struct):
                    yield from _unset(item, (*path, encoded, i), items_only, in_list=True)


@cache
def _fields(kind: type[msgspec.Struct]) -> tuple[tuple[str, str], ...]:
    return tuple((f.name, f.encode_name) for f in msgspec.structs.fields(kind))
