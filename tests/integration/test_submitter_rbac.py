"""The submitter's ClusterRole against the requests the Kubernetes backend makes to the API server
stand-in, over every operation of both Kubeflow APIs, each read as the authorizer reads it: the
role grants each and nothing else, and taking any one grant away leaves a call refused."""

import asyncio
import time
from collections.abc import Callable, Iterable
from typing import Any
from uuid import UUID, uuid4

import msgspec
import pytest
from kubernetes_asyncio import client

from infra.backends.kubernetes import KubernetesBackend
from tests.integration.test_kubernetes_backend import (
    ClassRecorder,
    PodRecorder,
    Recorder,
    origin,
    plan,
    shared_volume_plan,
)
from tests.kube_stand_in import Call, KubeStandIn, serving
from tests.kustomize import OVERLAYS, one, source_rules

pytestmark = [pytest.mark.integration]

Access = tuple[str, str, str, str]  # verb, API group, resource, subresource
FRAMEWORKS = ("PyTorch", "TF", "XGBoost", "JAX", "MPI")
V1_KINDS = ("pytorchjobs", "tfjobs", "xgboostjobs", "jaxjobs", "mpijobs")


def access_of(call: Call) -> Access:
    """A request as the API server's authorizer sees it (its RequestInfo): the group from the
    path, the namespace segment skipped, the verb from the method, a name and a watch."""
    method, path, query = call
    parts = path.strip("/").split("/")
    group, rest = ("", parts[2:]) if parts[0] == "api" else (parts[1], parts[3:])
    if rest[0] == "namespaces" and len(rest) > 2:
        rest = rest[2:]
    resource, named, subresource = rest[0], len(rest) > 1, rest[2] if len(rest) > 2 else ""
    watching = query.get("watch") in ("true", "True", "1")
    if method == "GET":
        verb = "get" if named else "watch" if watching else "list"
    elif method == "DELETE":
        verb = "delete" if named else "deletecollection"
    else:
        verb = {"POST": "create", "PUT": "update", "PATCH": "patch"}[method]
    return verb, group, resource, subresource


def granted(rules: Iterable[dict[str, Any]]) -> set[Access]:
    """Every (verb, group, resource, subresource) the rules allow; a wildcard, a name list or
    a non-resource URL is refused outright, as it would grant more than the backend names."""
    allowed: set[Access] = set()
    for rule in rules:
        assert set(rule) == {"apiGroups", "resources", "verbs"}, rule
        for verb in rule["verbs"]:
            for group in rule["apiGroups"]:
                for resource in rule["resources"]:
                    assert "*" not in (verb, group, resource), rule
                    name, _, subresource = resource.partition("/")
                    allowed.add((verb, group, name, subresource))
    return allowed


def without(rules: list[dict[str, Any]], removed: Access) -> list[dict[str, Any]]:
    """The rules with one grant taken away, all the others kept."""
    verb, group, resource, subresource = removed
    named = f"{resource}/{subresource}" if subresource else resource
    kept = []
    for rule in rules:
        if group not in rule["apiGroups"] or named not in rule["resources"]:
            kept.append(rule)
            continue
        others = [r for r in rule["resources"] if r != named]
        if others:
            kept.append({**rule, "resources": others})
        verbs = [v for v in rule["verbs"] if v != verb]
        if verbs:
            kept.append({"apiGroups": [group], "resources": [named], "verbs": verbs})
    return kept


async def until(condition: Callable[[], bool], within_s: float = 10) -> None:
    deadline = time.monotonic() + within_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        await asyncio.sleep(0.05)


async def watched(backend: KubernetesBackend, stand_in: KubeStandIn, streams: int) -> None:
    """Run the backend's watch until it has opened `streams` watches and listed the cluster's
    storage classes, then stop it."""
    stop = asyncio.Event()
    watching = asyncio.create_task(backend.watch(stop))
    listed = ("GET", "/apis/storage.k8s.io/v1/storageclasses")
    try:
        await until(
            lambda: (
                len(stand_in._watchers) >= streams
                and any(call[:2] == listed for call in stand_in.calls)
            )
        )
    finally:
        stop.set()
        watching.cancel()
        await asyncio.gather(watching, return_exceptions=True)


async def trainer_v2_calls() -> list[Call]:
    """Every operation of the Trainer v2 flavour: each framework submitted, submitted again,
    suspended, resumed, read, deleted; a data volume shared in and withdrawn; the watches and
    the storage classes' listing."""
    installed = {"trainingruntimes", "trainjobs", "pods", "storageclasses"}
    async with (
        serving(KubeStandIn(installed)) as stand_in,
        client.ApiClient(client.Configuration(host=stand_in.url)) as api,
    ):
        backend = KubernetesBackend(
            api, Recorder(), pods=PodRecorder(), storage_classes=ClassRecorder()
        )
        for framework in FRAMEWORKS:
            first = plan(framework)
            await backend.submit(first)
            await backend.submit(first)  # a redelivery: made already
            await backend.stop(first, suspend=True)
            resumed = msgspec.structs.replace(first, run=2)
            await backend.submit(resumed)
            await backend.status(resumed)
            await backend.stop(resumed)
        pvc, pv = origin(["ReadWriteMany"])
        stand_in.put_core("persistentvolumeclaims", pvc)
        stand_in.put_core("persistentvolumes", pv)
        volume: UUID = uuid4()
        await backend.submit(shared_volume_plan(volume))
        await backend.withdraw_data_volume(volume)
        await watched(backend, stand_in, streams=2)  # TrainJobs and pods
        return stand_in.calls


async def v1_calls() -> list[Call]:
    """Every operation of the Training Operator v1 flavour: each kind submitted, read,
    suspended (deleted: v1 has no suspension) and deleted again; the watch of each kind, and
    the storage classes' listing."""
    async with (
        serving(KubeStandIn({*V1_KINDS, "pods", "storageclasses"})) as stand_in,
        client.ApiClient(client.Configuration(host=stand_in.url)) as api,
    ):
        backend = KubernetesBackend(
            api, Recorder(), kubeflow_api="v1", pods=PodRecorder(), storage_classes=ClassRecorder()
        )
        for framework in FRAMEWORKS:
            job = plan(framework)
            await backend.submit(job)
            await backend.submit(job)
            await backend.status(job)
            await backend.stop(job, suspend=True)
            await backend.stop(job)
        await watched(backend, stand_in, streams=len(V1_KINDS) + 1)
        return stand_in.calls


@pytest.fixture(scope="module")
async def used() -> frozenset[Access]:
    calls = [*await trainer_v2_calls(), *await v1_calls()]
    return frozenset(access_of(call) for call in calls)


def rules_of(overlay: str) -> list[dict[str, Any]]:
    rules: list[dict[str, Any]] = one(overlay, "ClusterRole", "trainplate-submitter")["rules"]
    return rules


def test_the_requests_read_as_the_authorizer_reads_them() -> None:
    watch: Call = ("GET", "/apis/trainer.kubeflow.org/v1alpha1/trainjobs", {"watch": "True"})
    assert access_of(watch) == ("watch", "trainer.kubeflow.org", "trainjobs", "")
    classes: Call = ("GET", "/apis/storage.k8s.io/v1/storageclasses", {"timeoutSeconds": "30"})
    assert access_of(classes) == ("list", "storage.k8s.io", "storageclasses", "")
    created: Call = ("POST", "/api/v1/namespaces/runai-team/persistentvolumeclaims", {})
    assert access_of(created) == ("create", "", "persistentvolumeclaims", "")
    log: Call = ("GET", "/api/v1/namespaces/runai-team/pods/p-0/log", {})
    assert access_of(log) == ("get", "", "pods", "log")
    assert access_of(("GET", "/api/v1/persistentvolumes", {"labelSelector": "a=b"}))[0] == "list"
    assert access_of(("DELETE", "/api/v1/persistentvolumes/pv-1", {}))[0] == "delete"


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_role_grants_every_call_the_backend_makes(
    overlay: str, used: frozenset[Access]
) -> None:
    assert {"create", "get", "patch", "delete", "watch", "list"} <= {a[0] for a in used}
    assert used - granted(rules_of(overlay)) == set()


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_role_grants_nothing_the_backend_does_not_call(
    overlay: str, used: frozenset[Access]
) -> None:
    assert granted(rules_of(overlay)) - used == set()


def _grants() -> list[Access]:
    return sorted(granted(source_rules()))


@pytest.mark.parametrize("removed", _grants(), ids=lambda a: "/".join(p for p in a if p) or "-")
def test_a_role_missing_any_one_grant_is_caught(removed: Access, used: frozenset[Access]) -> None:
    """Each grant taken away in turn: the check above then finds that very call refused."""
    narrower = without(rules_of("production"), removed)
    assert granted(narrower) == granted(rules_of("production")) - {removed}
    assert used - granted(narrower) == {removed}
