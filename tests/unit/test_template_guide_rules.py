"""The rules of the product guide that relate to what a template may hold: mandatory members,
one-time storage, node affinity, priorities, workload-wide fields, and what `runnable` says.
One accepted and one refused case each (the helpers are test_template_rules.py's)."""

from typing import Any
from uuid import UUID, uuid4

import msgspec
import pytest

from domain import assets as asset_rules
from domain.assets import Asset
from domain.combined import combine, pull_policy
from domain.specs import ConfigMapSpec, PvcSpec, SecretVolumeSpec
from domain.submissions import Overrides, snapshot_of
from domain.template_specs import DistributedTemplateSpec, MasterSection, MasterTemplateSpec
from domain.values import AssetMeta
from domain.workloads import InvalidWorkloadError
from tests.unit.test_template_rules import body, outcome

TOLERATION = {"operator": "Exists", "key": "gpu", "effect": "NoSchedule"}
CUSTOM_IDS = {"uidGidSource": "custom", "runAsUid": 1000, "runAsGid": 100}
ONE_GPU = {"gpuDevicesRequest": 1}
EXPRESSION = "/spec/nodeAffinityRequired/nodeSelectorTerms/0/matchExpressions/0"


def affinity(operator: str, values: list[str] | None) -> dict[str, Any]:
    expression = {"key": "gpu", "operator": operator, "values": values}
    return {"nodeAffinityRequired": {"nodeSelectorTerms": [{"matchExpressions": [expression]}]}}


CASES: list[tuple[str, dict[str, Any], dict[str, Any], str]] = [
    # rule, accepted spec, refused spec, refused field
    (
        "toleration operator",
        {"tolerations": [TOLERATION]},
        {"tolerations": [{"key": "gpu", "effect": "NoSchedule"}]},
        "/spec/tolerations/0/operator",
    ),
    (
        "toleration effect",
        {"tolerations": [TOLERATION]},
        {"tolerations": [{"operator": "Exists", "key": "gpu"}]},
        "/spec/tolerations/0/effect",
    ),
    (
        "an excluded toleration is a name only",
        {"tolerations": [{"name": "inherited", "exclude": True}]},
        {"tolerations": [{"name": "inherited"}]},
        "/spec/tolerations/0/key",
    ),
    (
        "topology type",
        {"podAffinity": {"type": "Required", "key": "topology.kubernetes.io/zone"}},
        {"podAffinity": {"key": "topology.kubernetes.io/zone"}},
        "/spec/podAffinity/type",
    ),
    (
        "topology key",
        {"podAffinity": {"type": "Preferred", "key": "zone"}},
        {"podAffinity": {"type": "Preferred"}},
        "/spec/podAffinity/key",
    ),
    (
        "port container",
        {"ports": [{"container": 6006, "serviceType": "ClusterIP"}]},
        {"ports": [{"serviceType": "ClusterIP"}]},
        "/spec/ports/0/container",
    ),
    (
        "port service type",
        {"ports": [{"container": 6006, "serviceType": "LoadBalancer"}]},
        {"ports": [{"container": 6006}]},
        "/spec/ports/0/serviceType",
    ),
    (
        "exposed URL container",
        {"exposedUrls": [{"container": 8888}]},
        {"exposedUrls": [{"url": "https://nb.example.com"}]},
        "/spec/exposedUrls/0/container",
    ),
    (
        "exposed URL users named",
        {"exposedUrls": [{"container": 8888, "authorizationType": "authenticatedUsers"}]},
        {"exposedUrls": [{"container": 8888, "authorizationType": "authorizedUsers"}]},
        "/spec/exposedUrls/0/authorizedUsers",
    ),
    (
        "related URL type",
        {"relatedUrls": [{"url": "https://wandb.ai/x", "type": "wandb"}]},
        {"relatedUrls": [{"url": "https://wandb.ai/x"}]},
        "/spec/relatedUrls/0/type",
    ),
    (
        "related URL url",
        {"relatedUrls": [{"url": "https://wandb.ai/x", "type": "wandb"}]},
        {"relatedUrls": [{"type": "wandb"}]},
        "/spec/relatedUrls/0/url",
    ),
    (
        "a new volume has an access mode",
        {"storage": {"pvc": [{"path": "/d", "claimInfo": {"size": "1Gi", "accessModes": {}}}]}},
        {
            "storage": {
                "pvc": [
                    {
                        "path": "/d",
                        "claimInfo": {"size": "1Gi", "accessModes": {"readWriteOnce": False}},
                    }
                ]
            }
        },
        "/spec/storage/pvc/0/claimInfo/accessModes",
    ),
    (
        "custom uid and gid given",
        {"security": {"uidGidSource": "custom", "runAsUid": 1000, "runAsGid": 100}},
        {"security": {"uidGidSource": "custom", "runAsUid": 1000}},
        "/spec/security/runAsGid",
    ),
    ("In needs values", affinity("In", ["a100"]), affinity("In", []), f"{EXPRESSION}/values"),
    (
        "NotIn needs values",
        affinity("NotIn", ["t4"]),
        affinity("NotIn", None),
        f"{EXPRESSION}/values",
    ),
    (
        "Exists takes none",
        affinity("Exists", None),
        affinity("Exists", ["x"]),
        f"{EXPRESSION}/values",
    ),
    (
        "DoesNotExist takes none",
        affinity("DoesNotExist", []),
        affinity("DoesNotExist", ["x"]),
        f"{EXPRESSION}/values",
    ),
    (
        "Gt takes one integer",
        affinity("Gt", ["8"]),
        affinity("Gt", ["8", "9"]),
        f"{EXPRESSION}/values",
    ),
    (
        "Lt takes an integer",
        affinity("Lt", ["-3"]),
        affinity("Lt", ["many"]),
        f"{EXPRESSION}/values",
    ),
    (
        "match expression key",
        affinity("Exists", None),
        {
            "nodeAffinityRequired": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": "", "operator": "Exists"}]}]
            }
        },
        f"{EXPRESSION}/key",
    ),
    (
        "priority from the dictionary",
        {"priorityClass": "high"},
        {"priorityClass": "urgent"},
        "/spec/priorityClass",
    ),
    (
        "EmptyDir inline, ConfigMap not",
        {"storage": {"emptyDirVolume": [{"path": "/scratch", "medium": "Memory"}]}},
        {"storage": {"configMapVolume": [{"configMap": "cfg", "mountPath": "/etc/cfg"}]}},
        "/spec/storage/configMapVolume/0",
    ),
    (
        "new volume inline, Secret not",
        {"storage": {"pvc": [{"path": "/d", "claimInfo": {"size": "10Gi"}}]}},
        {"storage": {"secretVolume": [{"secret": "tls", "mountPath": "/etc/tls"}]}},
        "/spec/storage/secretVolume/0",
    ),
    (
        "existing PVC not inline",
        {"storage": {"pvc": [{"path": "/d", "existingPvc": False, "claimInfo": {"size": "1G"}}]}},
        {"storage": {"pvc": [{"path": "/d", "existingPvc": True, "claimName": "ckpt"}]}},
        "/spec/storage/pvc/0/existingPvc",
    ),
    (
        "data volume not inline",
        {"storage": {"nfs": [{"server": "nas", "path": "/x", "mountPath": "/x"}]}},
        {"storage": {"dataVolume": [{"id": str(uuid4()), "mountPath": "/data"}]}},
        "/spec/storage/dataVolume/0",
    ),
    (
        "label names and values as Kubernetes has them",
        {"labels": [{"name": "app.kubernetes.io/part-of", "value": "ddp_1.x"}, {"name": "t"}]},
        {"labels": [{"name": "team", "value": "vision research"}]},
        "/spec/labels/0/value",
    ),
    (
        "a label value of at most 63 characters",
        {"labels": [{"name": "run", "value": "r" * 63}]},
        {"labels": [{"name": "run", "value": "r" * 64}]},
        "/spec/labels/0/value",
    ),
    (
        "a label name is a qualified name",
        {"labels": [{"name": "example.com/owner", "value": "ml"}]},
        {"labels": [{"name": "Example.com/owner", "value": "ml"}]},
        "/spec/labels/0/name",
    ),
    (
        "an annotation name is a qualified name, its value anything",
        {"annotations": [{"name": "example.com/note", "value": "any text, even this!"}]},
        {"annotations": [{"name": "a note", "value": "x"}]},
        "/spec/annotations/0/name",
    ),
    (
        "an excluded label is a name only",
        {"labels": [{"name": "inherited", "exclude": True}]},
        {"labels": [{"name": "inherited", "value": "not a value!"}]},
        "/spec/labels/0/value",
    ),
    (
        "exposed URL users not empty",
        {"exposedUrls": [{"container": 8888, "authorizedUsers": ["ana@example.com"]}]},
        {"exposedUrls": [{"container": 8888, "authorizedUsers": ["ana@example.com", " "]}]},
        "/spec/exposedUrls/0/authorizedUsers/1",
    ),
    (
        "exposed URL groups not empty",
        {"exposedUrls": [{"container": 8888, "authorizedGroups": ["ml-team"]}]},
        {"exposedUrls": [{"container": 8888, "authorizedGroups": [""]}]},
        "/spec/exposedUrls/0/authorizedGroups/0",
    ),
    (
        "a new volume claims some storage",
        {"storage": {"pvc": [{"path": "/d", "claimInfo": {"size": "500Mi"}}]}},
        {"storage": {"pvc": [{"path": "/d", "claimInfo": {"size": "0Gi"}}]}},
        "/spec/storage/pvc/0/claimInfo/size",
    ),
    (
        "a new volume's size is a quantity",
        {"storage": {"pvc": [{"path": "/d", "claimInfo": {"size": "1.5G"}}]}},
        {"storage": {"pvc": [{"path": "/d", "claimInfo": {"size": "1.5.0G"}}]}},
        "/spec/storage/pvc/0/claimInfo/size",
    ),
    (
        "the SSH key directory is an absolute path",
        {"distributedFramework": "MPI", "sshAuthMountPath": "/home/mpiuser/.ssh"},
        {"distributedFramework": "MPI", "sshAuthMountPath": ".ssh"},
        "/spec/sshAuthMountPath",
    ),
    (
        "the SSH key directory is not empty",
        {"distributedFramework": "MPI", "sshAuthMountPath": "/root/.ssh"},
        {"distributedFramework": "MPI", "sshAuthMountPath": ""},
        "/spec/sshAuthMountPath",
    ),
    (
        "a custom uid is a user id",
        {"security": {"uidGidSource": "custom", "runAsUid": 0, "runAsGid": 2**31 - 1}},
        {"security": {"uidGidSource": "custom", "runAsUid": -1, "runAsGid": 100}},
        "/spec/security/runAsUid",
    ),
    (
        "a custom gid is a group id",
        {"security": {"uidGidSource": "custom", "runAsUid": 1000, "runAsGid": 100}},
        {"security": {"uidGidSource": "custom", "runAsUid": 1000, "runAsGid": 2**31}},
        "/spec/security/runAsGid",
    ),
    (
        "supplementary groups are group ids",
        {"security": {**CUSTOM_IDS, "supplementalGroups": "4, 2147483647"}},
        {"security": {**CUSTOM_IDS, "supplementalGroups": "4,2147483648"}},
        "/spec/security/supplementalGroups",
    ),
    (
        "a supplementary group id of any length is read as a number",
        {"security": {**CUSTOM_IDS, "supplementalGroups": "000000000004"}},
        {"security": {**CUSTOM_IDS, "supplementalGroups": "4," + "9" * 5000}},
        "/spec/security/supplementalGroups",
    ),
    (
        "a new volume's size is a quantity a decimal holds",
        {"storage": {"pvc": [{"path": "/d", "claimInfo": {"size": "1e3"}}]}},
        {"storage": {"pvc": [{"path": "/d", "claimInfo": {"size": "1e99999999"}}]}},
        "/spec/storage/pvc/0/claimInfo/size",
    ),
    (
        "a GPU portion is some of a device",
        {"compute": {**ONE_GPU, "gpuRequestType": "portion", "gpuPortionRequest": 0.01}},
        {"compute": {**ONE_GPU, "gpuRequestType": "portion", "gpuPortionRequest": 0}},
        "/spec/compute/gpuPortionRequest",
    ),
    (
        "GPU memory is some of a device's",
        {"compute": {**ONE_GPU, "gpuRequestType": "memory", "gpuMemoryRequest": "1Mi"}},
        {"compute": {**ONE_GPU, "gpuRequestType": "memory", "gpuMemoryRequest": "0G"}},
        "/spec/compute/gpuMemoryRequest",
    ),
    (
        "an extended resource has a quantity",
        {"compute": {"extendedResources": [{"resource": "rdma/hca", "quantity": "1"}]}},
        {"compute": {"extendedResources": [{"resource": "rdma/hca"}]}},
        "/spec/compute/extendedResources/0/quantity",
    ),
    (
        "an excluded extended resource is a resource only",
        {"compute": {"extendedResources": [{"resource": "rdma/hca", "exclude": True}]}},
        {"compute": {"extendedResources": [{"resource": "rdma/hca", "exclude": False}]}},
        "/spec/compute/extendedResources/0/quantity",
    ),
    (
        "an excluded ConfigMap only drops one",
        {"storage": {"configMapVolume": [{"name": "cfg", "exclude": True}]}},
        {"storage": {"configMapVolume": [{"name": "cfg"}]}},
        "/spec/storage/configMapVolume/0",
    ),
]


@pytest.mark.parametrize(("rule", "accepted", "refused", "field"), CASES, ids=[c[0] for c in CASES])
def test_rule(rule: str, accepted: dict[str, Any], refused: dict[str, Any], field: str) -> None:
    assert outcome(body(accepted)) is None, rule
    assert outcome(body(refused)) == field, rule


def test_the_master_spec_has_the_same_rules_and_no_inline_secret() -> None:
    master = {"spec": {"image": "m:1", "tolerations": [TOLERATION]}}
    assert outcome(body(masterSpecSameAsWorker=False, master=master)) is None
    secret = {"secretVolume": [{"secret": "tls", "mountPath": "/etc/tls"}]}
    refused = {"spec": {"image": "m:1", "storage": secret}}
    assert (
        outcome(body(masterSpecSameAsWorker=False, master=refused))
        == "/master/spec/storage/secretVolume/0"
    )


@pytest.mark.parametrize(
    "field",
    [
        "backoffLimit",
        "terminationGracePeriodSeconds",
        "autoDeletionTimeAfterCompletionSeconds",
        "priorityClass",
        "preemptibility",
    ],
)
def test_workload_wide_fields_are_refused_in_the_master_spec(field: str) -> None:
    value = {"priorityClass": "high", "preemptibility": "non-preemptible"}.get(field, 5)
    accepted = body({field: value}, masterSpecSameAsWorker=False, master={"spec": {"image": "m"}})
    assert outcome(accepted) is None
    refused = body(masterSpecSameAsWorker=False, master={"spec": {"image": "m", field: value}})
    assert outcome(refused) == f"/master/spec/{field}"


def test_the_combined_master_spec_shows_the_workload_wide_values_that_run() -> None:
    spec = {"image": "w:1", "backoffLimit": 3, "priorityClass": "high"}
    separate = combine(
        body(spec, masterSpecSameAsWorker=False, master={"spec": {"image": "m"}}), {}
    )
    assert separate.master is not None
    assert (separate.master.backoff_limit, separate.master.priority_class) == (3, "high")
    assert separate.master.termination_grace_period_seconds == 30  # the worker's default
    same = combine(body(spec), {})
    assert same.master is not None
    assert (same.master.backoff_limit, same.master.priority_class) == (3, "high")
    # A master copy kept from before the rule does not show: it never ran.
    old = msgspec.structs.replace(
        body(spec, masterSpecSameAsWorker=False),
        master=MasterSection(spec=MasterTemplateSpec(image="m", backoff_limit=9)),
    )
    kept = combine(old, {})
    assert kept.master is not None
    assert kept.master.backoff_limit == 3


def test_jax_with_a_master_of_its_own_is_refused_and_not_runnable() -> None:
    jax = {"distributedFramework": "JAX", "image": "jax:1"}
    assert outcome(body(jax)) is None  # the master is the worker's copy: one more worker
    assert outcome(body(jax, masterSpecSameAsWorker=False)) is None  # workers only
    separate = body(jax, masterSpecSameAsWorker=False, master={"spec": {"image": "jax:1"}})
    assert outcome(separate) == "/master"
    # One stored before the rule: runnable says what a submission would answer.
    combined = combine(separate, {})
    assert not combined.runnable.is_runnable
    assert "JAX runs workers only" in (combined.runnable.issue or "")
    with pytest.raises(InvalidWorkloadError) as refused:
        snapshot_of(combined, False, Overrides())
    assert refused.value.field == "/masterSpec"


@pytest.mark.parametrize(
    ("spec", "master"),
    [
        ({"priorityClass": "urgent"}, None),  # a value the dictionary lost
        ({"tolerations": [{"operator": "Exists"}]}, None),  # a member now mandatory
        ({"image": None}, None),
        ({}, {"image": None}),
        ({"distributedFramework": "JAX"}, {"image": "m"}),
    ],
)
def test_runnable_agrees_with_submission(
    spec: dict[str, Any], master: dict[str, Any] | None
) -> None:
    """Templates stored before a rule came: `runnable` is false exactly when a submission of the
    template as it is would be refused."""
    old = msgspec.convert(
        {"image": "pt:2", **{"distributedFramework": "PyTorch", "numWorkers": 2}, **spec},
        DistributedTemplateSpec,
    )
    template = msgspec.structs.replace(
        body(),
        spec=old,
        master_spec_same_as_worker=master is None,
        master=None if master is None else msgspec.convert({"spec": master}, MasterSection),
    )
    combined = combine(template, {})
    try:
        snapshot_of(combined, template.master_spec_same_as_worker, Overrides())
        submitted = True
    except InvalidWorkloadError:
        submitted = False
    assert combined.runnable.is_runnable is submitted is False
    assert combine(body({"image": "pt:2"}), {}).runnable.is_runnable


def test_a_submitted_master_spec_may_not_set_workload_wide_fields() -> None:
    base = combine(
        body({"image": "pt:2"}, masterSpecSameAsWorker=False, master={"spec": {"image": "m"}}), {}
    )
    with pytest.raises(InvalidWorkloadError) as refused:
        snapshot_of(base, False, Overrides(master_spec=MasterTemplateSpec(backoff_limit=1)))
    assert refused.value.field == "/masterSpec/backoffLimit"
    raised = Overrides(spec=DistributedTemplateSpec(backoff_limit=1))
    snapshot = snapshot_of(base, False, raised)
    assert snapshot.master is not None
    assert snapshot.master.backoff_limit == snapshot.spec.backoff_limit == 1


def _asset(spec: Any, name: str) -> Asset:
    meta = AssetMeta(name=name, scope="tenant")
    (event,) = asset_rules.create(None, uuid4(), meta, spec)
    state = asset_rules.fold([event])
    assert state is not None
    return state


def test_loaded_data_sources_bring_the_kinds_a_template_may_not_set_itself() -> None:
    loaded = {
        UUID(int=1): _asset(ConfigMapSpec(config_map="cfg", mount_path="/etc/cfg"), "cfg"),
        UUID(int=2): _asset(
            SecretVolumeSpec(credential_asset_id=UUID(int=9), mount_path="/etc/tls"), "tls"
        ),
        UUID(int=3): _asset(PvcSpec(path="/ckpt", existing_pvc=True, claim_name="ckpt"), "ckpt"),
    }
    links = [
        {"id": str(UUID(int=1)), "kind": "config-map"},
        {"id": str(UUID(int=2)), "kind": "secret-volume"},
        {"id": str(UUID(int=3)), "kind": "pvc"},
    ]
    template = body({"image": "pt:2"}, assets={"datasources": links})
    assert outcome(template) is None
    combined = combine(template, loaded)
    assert combined.runnable.is_runnable, combined.runnable.issue
    storage = combined.spec.storage
    assert storage is not None
    assert storage.config_map_volume
    assert storage.secret_volume
    assert storage.pvc
    assert storage.pvc[0].existing_pvc


@pytest.mark.parametrize(
    ("image", "policy"),
    [
        ("pytorch", "Always"),
        ("nvcr.io/nvidia/pytorch:latest", "Always"),
        ("registry:5000/team/pytorch", "Always"),
        ("registry:5000/team/pytorch:24.05", "IfNotPresent"),
        ("pytorch@sha256:" + "a" * 64, "IfNotPresent"),
        ("pytorch:latest@sha256:" + "a" * 64, "Always"),
    ],
)
def test_the_pull_policy_follows_kubernetes_where_the_spec_is_silent(
    image: str, policy: str
) -> None:
    assert pull_policy(image) == policy
    combined = combine(body({"image": image}), {})
    assert combined.spec.image_pull_policy == policy
    assert combined.master is not None
    assert combined.master.image_pull_policy == policy
    said = combine(body({"image": image, "imagePullPolicy": "Never"}), {})
    assert said.spec.image_pull_policy == "Never"


def test_a_separate_master_pulls_by_its_own_image() -> None:
    combined = combine(
        body({"image": "w:1"}, masterSpecSameAsWorker=False, master={"spec": {"image": "m"}}), {}
    )
    assert combined.spec.image_pull_policy == "IfNotPresent"
    assert combined.master is not None
    assert combined.master.image_pull_policy == "Always"


def test_a_sub_path_override_is_for_a_config_map_only() -> None:
    def loaded(kind: str) -> dict[str, Any]:
        link = {"id": str(uuid4()), "kind": kind, "overrides": {"subPath": "hparams.yaml"}}
        return {"datasources": [link]}

    assert outcome(body(assets=loaded("config-map"))) is None
    assert outcome(body(assets=loaded("nfs"))) == "/assets/datasources/0/overrides/subPath"
    master = {"spec": {"image": "m"}, "assets": loaded("git")}
    refused = body(masterSpecSameAsWorker=False, master=master)
    assert outcome(refused) == "/master/assets/datasources/0/overrides/subPath"
