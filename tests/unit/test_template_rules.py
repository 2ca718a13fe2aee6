"""Every rule of the template checklist (reference §17): one accepted and one refused case each."""

from typing import Any
from uuid import uuid4

import msgspec
import pytest

from domain import templates
from domain.combined import combine
from domain.template_rules import InvalidTemplateError
from domain.templates import TemplateBody
from domain.values import TemplateMeta

META = TemplateMeta(name="ddp", scope="tenant")
BASE: dict[str, Any] = {"distributedFramework": "PyTorch", "numWorkers": 2}


def body(spec: dict[str, Any] | None = None, **fields: Any) -> TemplateBody:
    return msgspec.convert(
        {"spec": {**BASE, **(spec or {})}, **fields}, TemplateBody, str_keys=True
    )


def outcome(candidate: TemplateBody, meta: TemplateMeta = META) -> str | None:
    """None when accepted, else the refused field."""
    try:
        templates.create(None, uuid4(), meta, candidate, ())
    except InvalidTemplateError as exc:
        return str(exc.field)
    return None


CASES: list[tuple[str, dict[str, Any], dict[str, Any], str]] = [
    # rule, accepted spec, refused spec, refused field
    ("framework chosen", {}, {"distributedFramework": None}, "/spec/distributedFramework"),
    (
        "elastic only for PyTorch",
        {"minReplicas": 1},
        {"distributedFramework": "TF", "minReplicas": 1},
        "/spec/minReplicas",
    ),
    (
        "MPI fields only for MPI",
        {"distributedFramework": "MPI", "slotsPerWorker": 2},
        {"slotsPerWorker": 2},
        "/spec/slotsPerWorker",
    ),
    ("minReplicas within numWorkers", {"minReplicas": 2}, {"minReplicas": 3}, "/spec/minReplicas"),
    ("maxReplicas from numWorkers", {"maxReplicas": 2}, {"maxReplicas": 1}, "/spec/maxReplicas"),
    (
        "maxReplicas at most 10,000",
        {"maxReplicas": 10_000},
        {"maxReplicas": 10_001},
        "/spec/maxReplicas",
    ),
    (
        "grace period 0..300",
        {"terminationGracePeriodSeconds": 300},
        {"terminationGracePeriodSeconds": 301},
        "/spec/terminationGracePeriodSeconds",
    ),
    ("backoff limit 0..100", {"backoffLimit": 0}, {"backoffLimit": -1}, "/spec/backoffLimit"),
    (
        "auto deletion not negative",
        {"autoDeletionTimeAfterCompletionSeconds": 0},
        {"autoDeletionTimeAfterCompletionSeconds": -1},
        "/spec/autoDeletionTimeAfterCompletionSeconds",
    ),
    (
        "no Localhost seccomp",
        {"security": {"seccompProfileType": "RuntimeDefault"}},
        {"security": {"seccompProfileType": "Localhost"}},
        "/spec/security/seccompProfileType",
    ),
    (
        "uid with custom source",
        {"security": {"uidGidSource": "custom", "runAsUid": 1000, "runAsGid": 1000}},
        {"security": {"runAsUid": 1000}},
        "/spec/security/runAsUid",
    ),
    (
        "compute limit at least request",
        {"compute": {"cpuCoreRequest": 2, "cpuCoreLimit": 2}},
        {"compute": {"cpuCoreRequest": 2, "cpuCoreLimit": 1}},
        "/spec/compute/cpuCoreLimit",
    ),
    (
        "memory fraction on one device",
        {
            "compute": {
                "gpuDevicesRequest": 1,
                "gpuRequestType": "memory",
                "gpuMemoryRequest": "10G",
            }
        },
        {
            "compute": {
                "gpuDevicesRequest": 2,
                "gpuRequestType": "memory",
                "gpuMemoryRequest": "10G",
            }
        },
        "/spec/compute/gpuDevicesRequest",
    ),
    (
        "portion with its type",
        {
            "compute": {
                "gpuDevicesRequest": 1,
                "gpuRequestType": "portion",
                "gpuPortionRequest": 0.5,
            }
        },
        {"compute": {"gpuDevicesRequest": 1, "gpuPortionRequest": 0.5}},
        "/spec/compute/gpuRequestType",
    ),
    (
        "one source per variable",
        {"environmentVariables": [{"name": "A", "value": "1"}]},
        {
            "environmentVariables": [
                {"name": "A", "value": "1", "secret": {"name": "s", "key": "k"}}
            ]
        },
        "/spec/environmentVariables/0",
    ),
    (
        "variable names unique",
        {"environmentVariables": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]},
        {"environmentVariables": [{"name": "A", "value": "1"}, {"name": "A", "value": "2"}]},
        "/spec/environmentVariables/1/name",
    ),
    (
        "toleration seconds only NoExecute",
        {"tolerations": [{"operator": "Exists", "key": "k", "effect": "NoExecute", "seconds": 5}]},
        {"tolerations": [{"operator": "Exists", "key": "k", "effect": "NoSchedule", "seconds": 5}]},
        "/spec/tolerations/0/seconds",
    ),
    (
        "Exists takes no value",
        {"tolerations": [{"operator": "Exists", "key": "gpu", "effect": "NoSchedule"}]},
        {"tolerations": [{"operator": "Exists", "key": "gpu", "value": "x", "effect": "Any"}]},
        "/spec/tolerations/0/value",
    ),
    (
        "Equal needs a key",
        {"tolerations": [{"operator": "Equal", "key": "gpu", "value": "a100", "effect": "Any"}]},
        {"tolerations": [{"operator": "Equal", "value": "a100", "effect": "Any"}]},
        "/spec/tolerations/0/key",
    ),
    (
        "custom node port range",
        {"ports": [{"container": 8080, "serviceType": "NodePort", "external": 30080}]},
        {"ports": [{"container": 8080, "serviceType": "NodePort", "external": 8080}]},
        "/spec/ports/0/external",
    ),
    (
        "users or groups, not both",
        {"exposedUrls": [{"container": 8080, "authorizedUsers": ["a"]}]},
        {"exposedUrls": [{"container": 8080, "authorizedUsers": ["a"], "authorizedGroups": ["g"]}]},
        "/spec/exposedUrls/0/authorizedGroups",
    ),
    (
        "nfs paths present",
        {"storage": {"nfs": [{"server": "s", "path": "/p", "mountPath": "/m"}]}},
        {"storage": {"nfs": [{"server": "s", "path": "/p"}]}},
        "/spec/storage/nfs/0/mountPath",
    ),
    (
        "new PVC has a size",
        {"storage": {"pvc": [{"path": "/d", "claimInfo": {"size": "1Gi"}}]}},
        {"storage": {"pvc": [{"path": "/d"}]}},
        "/spec/storage/pvc/0/claimInfo/size",
    ),
    (
        "one mount propagation",
        {
            "storage": {
                "hostPath": [{"path": "/a", "mountPath": "/a"}, {"path": "/b", "mountPath": "/b"}]
            }
        },
        {
            "storage": {
                "hostPath": [
                    {"path": "/a", "mountPath": "/a"},
                    {"path": "/b", "mountPath": "/b", "mountPropagation": "HostToContainer"},
                ]
            }
        },
        "/spec/storage/hostPath",
    ),
    ("tty needs stdin", {"tty": True, "stdin": True}, {"tty": True}, "/spec/tty"),
]


@pytest.mark.parametrize(("rule", "accepted", "refused", "field"), CASES, ids=[c[0] for c in CASES])
def test_rule(rule: str, accepted: dict[str, Any], refused: dict[str, Any], field: str) -> None:
    assert outcome(body(accepted)) is None, rule
    assert outcome(body(refused)) == field, rule


def test_name_and_description() -> None:
    assert outcome(body(), msgspec.structs.replace(META, description="x" * 250)) is None
    assert (
        outcome(body(), msgspec.structs.replace(META, description="x" * 251)) == "/meta/description"
    )
    assert outcome(body(), msgspec.structs.replace(META, name=" ")) == "/meta/name"


def test_master_section_follows_master_spec_same_as_worker() -> None:
    assert outcome(body(masterSpecSameAsWorker=False, master={"spec": {"image": "m:1"}})) is None
    assert outcome(body(masterSpecSameAsWorker=True, master={"spec": {}})) == "/master"
    assert outcome(body(masterSpecSameAsWorker=False)) is None  # workers only: PyTorch may
    mpi = {"distributedFramework": "MPI"}
    assert outcome(body(mpi, masterSpecSameAsWorker=False)) == "/masterSpecSameAsWorker"


def test_linked_fields_are_the_assets_own() -> None:
    linked = {"environment": str(uuid4()), "compute": str(uuid4())}
    assert (
        outcome(
            body(
                {"tolerations": [{"operator": "Exists", "key": "k", "effect": "Any"}]},
                assets=linked,
            )
        )
        is None
    )
    assert outcome(body({"image": "x:1"}, assets=linked)) == "/spec/image"
    assert outcome(body({"compute": {"cpuCoreRequest": 1}}, assets=linked)) == "/spec/compute"
    assert outcome(body({"image": "x:1"}, assets={"compute": linked["compute"]})) is None


def test_a_template_without_image_or_workers_is_not_runnable() -> None:
    combined = combine(body({"numWorkers": None}), {})
    assert not combined.runnable.is_runnable
    assert "image" in (combined.runnable.issue or "")
    assert "numWorkers" in (combined.runnable.issue or "")
    assert combine(body({"image": "pt:2"}), {}).runnable.is_runnable
    missing = {"environment": str(uuid4())}
    gone = combine(body(assets=missing), {})
    assert "no longer exists" in (gone.runnable.issue or "")


def test_mpi_defaults_a_client_fills_in_are_dropped_for_other_frameworks() -> None:
    """The official Run:ai client sends slotsPerWorker 1 and sshAuthMountPath /root/.ssh in
    every spec; they mean nothing for PyTorch, and only other values are refused."""
    filled = body({"slotsPerWorker": 1, "sshAuthMountPath": "/root/.ssh"})
    events = templates.create(None, uuid4(), META, filled, ())
    stored = templates.fold(events)
    assert stored is not None
    assert stored.body.spec.slots_per_worker is None
    assert stored.body.spec.ssh_auth_mount_path is None
    assert outcome(body({"slotsPerWorker": 2})) == "/spec/slotsPerWorker"
    mpi = templates.fold(
        templates.create(
            None, uuid4(), META, body({"distributedFramework": "MPI", "slotsPerWorker": 1}), ()
        )
    )
    assert mpi is not None
    assert mpi.body.spec.slots_per_worker == 1
