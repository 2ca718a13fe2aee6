"""Every field Run:ai's reference marks mandatory, for the items this service serves, is in one
table, and templates, assets, policies and submissions refuse an item without it alike."""

import json
import re
import typing
from collections.abc import Iterator
from typing import Any
from uuid import uuid4

import msgspec
import pytest

from domain import assets, policies, specs
from domain import template_specs as t
from domain.assets import InvalidAssetError
from domain.combined import combine
from domain.mandatory_fields import MANDATORY, MANDATORY_WHEN, _below, unset
from domain.policies import InvalidPolicyError, PolicyBody
from domain.submissions import Overrides, snapshot_of
from domain.template_specs import DistributedTemplateSpec, MasterTemplateSpec
from domain.values import AssetMeta, ScopeRef
from domain.workloads import InvalidWorkloadError
from projections.asset_catalogue import SPECS
from tests.openapi import DOCUMENT
from tests.unit.test_template_rules import body, outcome

# The request bodies of the routes this service serves (templates, assets, policies, workloads).
ROOTS = (
    "DistributedTemplateCreationRequest",
    "DistributedTemplateUpdateRequest",
    "DistributedTemplatePatchRequest",
    "EnvironmentCreationRequest",
    "ComputeCreationRequest",
    "NFSCreationRequest",
    "PVCCreationRequest",
    "S3CreationRequest",
    "GitCreationRequest",
    "HostPathCreationRequest",
    "ConfigMapCreationRequest",
    "SecretAssetCreationRequest",
    "AccessKeyCreationRequest",
    "PasswordCreationRequest",
    "DockerRegistryCreationRequest",
    "GenericSecretCreationRequest",
    "NgcApiKeyCreationRequest",
    "DistributedPolicyOverwriteRequestV2",
    "DistributedPolicyChangeRequestV2",
    "DistributedCreationRequest",
)
# Which of our item types each reference schema is.
OURS: dict[str, tuple[type[msgspec.Struct], ...]] = {
    "Toleration": (t.Toleration,),
    "Port": (t.PortSpec,),
    "ExposedUrl": (t.ExposedUrl,),
    "RelatedUrl": (t.RelatedUrl,),
    "Annotation": (t.Annotation,),
    "Label": (t.Label,),
    "EnvironmentVariable": (t.TemplateEnvironmentVariable,),
    "EnvironmentVariableSecret": (t.SecretRef,),
    "EnvironmentVariableConfigMap": (t.ConfigMapKeyRef, specs.ConfigMapRef),
    "EnvironmentVariableUserCredential": (t.UserCredentialRef,),
    "EnvironmentVariablePodFieldReference": (t.PodFieldPath, specs.PodFieldRef),
    "EnvironmentVariableOfAsset": (specs.EnvironmentVariable,),
    "EnvironmentVariableCredential": (specs.CredentialRef,),
    "ExtendedResource": (specs.ExtendedResource,),
    "Probe": (specs.Probe,),
    "PodAffinity": (t.PodAffinity,),
    "MatchExpression": (t.MatchExpression,),
    "Nfs": (t.NfsVolume, specs.NfsSpec),
    "HostPath": (t.HostPathVolume, specs.HostPathSpec),
    "PvcFieldsUpdatable": (t.PvcVolume, specs.PvcSpec),
    "GitCommon": (t.GitVolume, specs.GitSpec),
    "S3Common": (t.S3Volume, specs.S3Spec),
    "ConfigMap": (t.ConfigMapVolume, specs.ConfigMapSpec),
    "SecretFieldsNonUpdatable": (t.SecretVolume,),
    "SecretFieldsUpdatable": (t.SecretVolume,),
    "CredentialAsset": (specs.SecretVolumeSpec,),
    "SecretAssetSpec": (specs.SecretVolumeSpec,),
    "EmptyDir": (t.EmptyDirVolume,),
    "DataVolume": (t.DataVolume,),
}
# Said to be mandatory, but no field of an item: each has a rule of its own, tested there.
ELSEWHERE = {
    "image": "a workload needs it to run, not to be saved (template_rules.unset_values)",
    "ClaimInfo.size": "a new PVC needs a size (template_items, data_sources)",
    "required": "a policy rule's member that makes its field mandatory (policy_rules)",
}
MARKED = re.compile("mandatory", re.IGNORECASE)


def _schemas() -> dict[str, Any]:
    schemas: dict[str, Any] = json.loads(DOCUMENT.read_text())["components"]["schemas"]
    return schemas


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref":
                yield value.rsplit("/", 1)[-1]
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


def marked_fields() -> set[tuple[str, str]]:
    """(schema, property) for each property reachable from ROOTS whose description, or its
    referenced schema's, marks it mandatory."""
    schemas = _schemas()
    reached, todo = set(), list(ROOTS)
    while todo:
        name = todo.pop()
        if name not in reached:
            reached.add(name)
            todo.extend(_refs(schemas[name]))
    found = set()
    for name in reached:
        schema = schemas[name]
        members = [schema, *(s for s in schema.get("allOf", ()) if "$ref" not in s)]
        for member in members:
            for prop, node in (member.get("properties") or {}).items():
                text = node.get("description", "")
                if "$ref" in node:
                    text += " " + schemas[node["$ref"].rsplit("/", 1)[-1]].get("description", "")
                if MARKED.search(text):
                    found.add((name, prop))
    return found


def _python_name(kind: type[msgspec.Struct], wire: str) -> str:
    names = {f.encode_name: f.name for f in msgspec.structs.fields(kind)}
    assert wire in names, f"{kind.__name__} has no field {wire}"
    return names[wire]


def test_every_field_the_reference_marks_mandatory_is_in_the_table() -> None:
    marked = marked_fields()
    assert ("Toleration", "key") in marked  # the walk reaches items, and refs' descriptions
    assert ("Probe", "handler") in marked
    conditional = {(kind, name) for kind, rules in MANDATORY_WHEN.items() for name, _, _ in rules}
    covered: set[tuple[type[msgspec.Struct], str]] = set()
    for schema, prop in sorted(marked):
        if prop in ELSEWHERE or f"{schema}.{prop}" in ELSEWHERE:
            continue
        assert schema in OURS, f"{schema}.{prop} is marked mandatory: which item of ours is it?"
        for kind in OURS[schema]:
            name = _python_name(kind, prop)
            assert name in MANDATORY.get(kind, ()) or (kind, name) in conditional, (
                f"{schema}.{prop} is mandatory: {kind.__name__}.{name} is not in the table"
            )
            covered.add((kind, name))
    # and the table asks for nothing the reference does not
    table = {(kind, name) for kind, names in MANDATORY.items() for name in names}
    assert table | conditional == covered


@pytest.mark.parametrize(
    ("spec", "where"),
    [
        ({"tolerations": [{"operator": "Exists", "effect": "Any"}]}, "/tolerations/0/key"),
        (
            {"tolerations": [{"key": "", "operator": "Exists", "effect": "Any"}]},
            "/tolerations/0/key",
        ),
        (
            {"tolerations": [{"key": "k", "operator": "Equal", "effect": "Any"}]},
            "/tolerations/0/value",
        ),
        ({"ports": [{"serviceType": "NodePort"}]}, "/ports/0/container"),
        ({"relatedUrls": [{"url": "https://x", "type": ""}]}, "/relatedUrls/0/type"),
        ({"podAffinity": {"type": "Required"}}, "/podAffinity/key"),
        ({"probes": {"readiness": {"periodSeconds": 5}}}, "/probes/readiness/handler"),
        ({"compute": {"extendedResources": [{"quantity": "1"}]}}, None),  # decoding refuses it
        ({"storage": {"nfs": [{"path": "/p", "mountPath": "/m"}]}}, "/storage/nfs/0/server"),
        ({"storage": {"git": [{"repository": "https://g"}]}}, "/storage/git/0/path"),
        ({"tolerations": [{"name": "inherited", "exclude": True}]}, ""),
        ({"tolerations": [{"key": "k", "operator": "Equal", "value": "", "effect": "Any"}]}, ""),
        ({"tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}]}, ""),
    ],
)
def test_the_first_mandatory_field_left_unset_is_named(
    spec: dict[str, Any], where: str | None
) -> None:
    try:
        value = msgspec.convert(spec, DistributedTemplateSpec)
    except msgspec.ValidationError:
        assert where is None
        return
    found = unset(value)
    assert ("".join(f"/{p}" for p in found[0]) if found else "") == where


def test_in_defaults_and_overrides_only_items_are_held_to_it() -> None:
    """An object there merges field by field with what lies beneath; an item replaces whole."""
    partial = msgspec.convert({"podAffinity": {"type": "Required"}}, DistributedTemplateSpec)
    assert unset(partial) is not None
    assert unset(partial, items_only=True) is None
    item = msgspec.convert(
        {"podAffinity": {"type": "Required"}, "storage": {"s3": [{"bucket": "b"}]}},
        DistributedTemplateSpec,
    )
    assert unset(item, items_only=True) == (("storage", "s3", 0, "path"), "required")


def test_a_template_names_the_field_in_its_own_and_its_master_spec() -> None:
    toleration = {"operator": "Exists", "effect": "NoSchedule"}
    assert outcome(body({"tolerations": [toleration]})) == "/spec/tolerations/0/key"
    master = {"spec": {"image": "m:1", "ports": [{"serviceType": "ClusterIP"}]}}
    separate = body(masterSpecSameAsWorker=False, master=master)
    assert outcome(separate) == "/master/spec/ports/0/container"


def test_an_asset_names_the_field() -> None:
    meta = AssetMeta(name="a", scope="tenant")
    environment = msgspec.convert(
        {"image": "i:1", "probes": {"readiness": {"periodSeconds": 5}}}, specs.EnvironmentSpec
    )
    with pytest.raises(InvalidAssetError) as refused:
        assets.create(None, uuid4(), meta, environment)
    assert refused.value.field == "/spec/probes/readiness/handler"
    with pytest.raises(InvalidAssetError) as refused:
        assets.create(None, uuid4(), meta, specs.NfsSpec(server="nas", mount_path="/m"))
    assert refused.value.field == "/spec/path"


def test_a_policy_default_item_is_complete_and_named_as_the_wire_wraps_it() -> None:
    defaults = {"tolerations": [{"name": "gpu", "operator": "Exists", "effect": "NoSchedule"}]}
    given = PolicyBody(worker_defaults=msgspec.convert(defaults, DistributedTemplateSpec))
    with pytest.raises(InvalidPolicyError) as refused:
        policies.check(given, policies.NOTHING, ScopeRef("tenant"))
    assert refused.value.field == "/policy/defaults/worker/tolerations/instances/0/key"
    with pytest.raises(InvalidPolicyError) as patched:
        policies.changed(PolicyBody(), given, ())
    assert patched.value.field == refused.value.field
    master = {"storage": {"hostPath": [{"path": "/h"}]}}
    wrapped = PolicyBody(master_defaults=msgspec.convert(master, MasterTemplateSpec))
    with pytest.raises(InvalidPolicyError) as refused:
        policies.check(wrapped, policies.NOTHING, ScopeRef("tenant"))
    assert refused.value.field == "/policy/defaults/master/storage/hostPath/instances/0/mountPath"
    partial = {"podAffinity": {"type": "Required"}}  # an object of defaults may be partial
    kept = PolicyBody(worker_defaults=msgspec.convert(partial, DistributedTemplateSpec))
    policies.check(kept, policies.NOTHING, ScopeRef("tenant"))


def test_a_submission_names_the_field_of_its_own_override() -> None:
    template = body(
        {"image": "pt:2", "tolerations": [{"name": "a", "key": "a", "operator": "Exists",
                                           "effect": "NoSchedule"}]}
    )  # fmt: skip
    base = combine(template, {})
    override = {"tolerations": [{"name": "b", "operator": "Exists", "effect": "NoSchedule"}]}
    own = Overrides(spec=msgspec.convert(override, DistributedTemplateSpec))
    with pytest.raises(InvalidWorkloadError) as refused:
        snapshot_of(base, True, own)
    assert refused.value.field == "/spec/tolerations/0/key"  # the request's, not the merged list's
    alone = Overrides(
        spec=msgspec.convert({"podAffinity": {"key": "zone"}}, DistributedTemplateSpec)
    )
    with pytest.raises(InvalidWorkloadError) as refused:
        snapshot_of(base, True, alone)
    assert refused.value.field == "/spec/podAffinity/type"


def _reached(kind: type[msgspec.Struct], fields: Any, seen: set[type]) -> set[type]:
    """The struct types below `kind` through the given fields of each type (all, or `_below`)."""
    found: set[type] = set()
    for name in fields(kind):
        hint = {f.name: f.type for f in msgspec.structs.fields(kind)}[name]
        for inner in _structs_in(hint):
            if inner not in seen:
                found |= {inner} | _reached(inner, fields, seen | {inner})
    return found


def _structs_in(hint: Any) -> set[type]:
    if isinstance(hint, type) and issubclass(hint, msgspec.Struct):
        return {hint}
    if typing.get_origin(hint) is list:  # the walk does not descend lists
        return set()
    return {s for arg in typing.get_args(hint) for s in _structs_in(arg)}


@pytest.mark.parametrize("root", [DistributedTemplateSpec, MasterTemplateSpec, *SPECS.values()])
def test_the_walk_skips_only_fields_that_cannot_hold_a_mandatory_item(
    root: type[msgspec.Struct],
) -> None:
    def every(kind: type[msgspec.Struct]) -> list[str]:
        return [f.name for f in msgspec.structs.fields(kind)]

    def walked(kind: type[msgspec.Struct]) -> list[str]:
        return [name for name, _ in _below(kind)]

    held = set(MANDATORY) | set(MANDATORY_WHEN)
    assert _reached(root, every, {root}) & held == _reached(root, walked, {root}) & held
