"""What a new PVC may ask of its storage class (domain/storage_rules.py), without I/O: a PVC naming
no class is held to the cluster's default class, as Kubernetes binds it, and a size must be the
configuration's minimum plus a whole number of its steps; each refusal names the field."""

from typing import Any

import msgspec
import pytest

from domain import cluster_facts, storage_rules
from domain.cluster_facts import ClusterFacts
from domain.cluster_specs import StorageClassRules
from domain.specs import ClaimInfo, PvcSpec
from domain.storage_classes import InvalidConfigurationError, check_rules
from domain.storage_rules import DEFAULT, StorageFacts
from domain.template_specs import DistributedTemplateSpec, PvcVolume


def rules(**claim_size: Any) -> StorageClassRules:
    given = {"customization": {"claimSize": claim_size, "accessMode": {"required": True}}}
    return msgspec.convert(given, StorageClassRules)


STEPPED = rules(min="1Gi", max="9Gi", step="2Gi", default="5Gi")


def volume(**claim: Any) -> PvcVolume:
    given = {"name": "scratch", "path": "/scratch", "existingPvc": False, "claimInfo": claim}
    return msgspec.convert(given, PvcVolume)


def facts(default: str | None = "standard", **configured: StorageClassRules) -> StorageFacts:
    named = {"standard": STEPPED, **configured}
    return StorageFacts(classes=frozenset({"standard", "fast"}), rules=named, default=default)


def test_the_class_a_volume_makes_a_pvc_of() -> None:
    assert storage_rules.class_of(volume(storageClass="fast")) == "fast"
    assert storage_rules.class_of(volume(size="1Gi")) == DEFAULT
    assert storage_rules.class_of(volume(storageClass="runai-none")) is None
    existing = msgspec.structs.replace(volume(), existing_pvc=True, claim_name="data")
    assert storage_rules.class_of(existing) is None
    assert storage_rules.default_of(["zeta", "alpha"]) == "alpha"
    assert storage_rules.default_of([]) is None


def test_a_volume_naming_no_class_is_held_to_the_default_class_and_given_its_defaults() -> None:
    checked, issues = storage_rules.volume_checked(volume(), "/v", facts(), "workload")
    assert checked.claim_info is not None
    assert checked.claim_info.size == "5Gi"  # the default class's default
    assert checked.claim_info.storage_class is None  # bound as Kubernetes binds it, not pinned
    assert issues == [
        ("/v/claimInfo/accessModes", "the default class 'standard' needs an access mode")
    ]
    _, issues = storage_rules.volume_checked(volume(size="20Gi"), "/v", facts(), "asset")
    assert [field for field, _ in issues] == ["/v/claimInfo/accessModes", "/v/claimInfo/size"]


def test_without_a_default_class_a_volume_naming_none_is_not_checked() -> None:
    given = volume(size="20Gi")
    assert storage_rules.volume_checked(given, "/v", facts(default=None), "workload") == (
        given,
        [],
    )
    named = volume(storageClass="fast", size="20Gi")
    assert storage_rules.volume_checked(named, "/v", facts(), "workload") == (named, [])


@pytest.mark.parametrize(
    ("size", "refused"),
    [("1Gi", False), ("3Gi", False), ("9Gi", False), ("4Gi", True), ("2Gi", True), ("3.5Gi", True)],
)
def test_a_size_is_the_minimum_plus_whole_steps(size: str, refused: bool) -> None:
    claim = {"storageClass": "standard", "size": size, "accessModes": {"readWriteOnce": True}}
    _, issues = storage_rules.volume_checked(volume(**claim), "/v", facts(), "workload")
    expected = [("/v/claimInfo/size", "'standard' takes sizes of 1Gi plus a multiple of 2Gi")]
    assert issues == (expected if refused else [])


def test_a_step_without_a_minimum_counts_from_zero() -> None:
    from_zero = facts(standard=rules(step="500Mi"))
    modes = {"accessModes": {"readWriteOnce": True}}
    spec = PvcSpec(claim_info=msgspec.convert({"size": "1500Mi", **modes}, ClaimInfo))
    assert storage_rules.volume_checked(spec, "/spec", from_zero, "asset")[1] == []
    spec = PvcSpec(claim_info=msgspec.convert({"size": "1Gi", **modes}, ClaimInfo))
    (issue,) = storage_rules.volume_checked(spec, "/spec", from_zero, "asset")[1]
    assert issue[0] == "/spec/claimInfo/size"


@pytest.mark.parametrize(
    ("claim_size", "field"),
    [
        ({"step": "0"}, "step"),
        ({"step": "0.0Gi"}, "step"),
        ({"min": "1Gi", "step": "2Gi", "default": "2Gi"}, "default"),
    ],
)
def test_a_configuration_s_step_is_a_positive_quantity_its_default_on_it(
    claim_size: dict[str, str], field: str
) -> None:
    with pytest.raises(InvalidConfigurationError) as refused:
        check_rules(rules(**claim_size))
    assert refused.value.field == f"/customization/claimSize/{field}"
    check_rules(rules(min="1Gi", step="2Gi", default="3Gi"))


def test_runnable_says_what_the_default_class_does_not_allow() -> None:
    pvc = {"name": "scratch", "path": "/s", "existingPvc": False, "claimInfo": {"size": "4Gi"}}
    spec = msgspec.convert(
        {"distributedFramework": "PyTorch", "numWorkers": 2, "image": "pt:24",
         "storage": {"pvc": [pvc]}},
        DistributedTemplateSpec,
    )  # fmt: skip
    found = cluster_facts.issues(spec, None, True, ClusterFacts(storage=facts()))
    assert "/spec/storage/pvc/0/claimInfo/size: the default class 'standard' takes sizes" in (
        " ".join(found)
    )
    assert cluster_facts.issues(spec, None, True, ClusterFacts(storage=facts(None))) == []
