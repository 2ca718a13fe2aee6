"""The Kubernetes backend: each run is the Kubeflow objects of infra/backends/manifests.py, made
with kubernetes-asyncio; names derived from the run make a second create 409, which counts as
done. Refusals, suspension and shared volumes: docs/decisions/0009-kubernetes-backend-objects.md."""

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncIterator, Awaitable
from http import HTTPStatus
from typing import Any
from uuid import UUID

from kubernetes_asyncio import client, config, watch
from kubernetes_asyncio.client.exceptions import ApiException

from domain.workload_plans import WorkloadPlan
from domain.workloads import Outcome
from infra.backends import shared_volumes, trainer_v2
from infra.backends.kubeflow_jobs import KINDS, PLURALS, RUN_LABEL
from infra.backends.kubeflow_pods import WORKLOAD_LABEL
from infra.backends.kubernetes_pods import PodWatch
from infra.backends.manifests import render
from infra.backends.scheduling import Scheduling
from infra.backends.storage_class_listing import StorageClassListing
from infra.settings import KubeflowApi
from services.errors import BackendRejectedError
from services.ports.workload_backends import (
    PodReports,
    Reports,
    RunStatus,
    StorageClassReports,
    Submission,
)

log = logging.getLogger(__name__)
PERMANENT = {
    HTTPStatus.BAD_REQUEST,
    HTTPStatus.FORBIDDEN,
    HTTPStatus.NOT_FOUND,
    HTTPStatus.UNPROCESSABLE_ENTITY,
}
MERGE_PATCH = "application/merge-patch+json"


class KubernetesBackend:
    name = "kubernetes"

    def __init__(
        self,
        api: client.ApiClient,
        reports: Reports,
        *,
        kubeflow_api: KubeflowApi = "trainer-v2",
        scheduling: Scheduling | None = None,
        pods: PodReports | None = None,
        storage_classes: StorageClassReports | None = None,
        storage_class_period_s: float = 60.0,
    ) -> None:
        self._client = api
        self._objects = client.CustomObjectsApi(api)
        self._core = client.CoreV1Api(api)
        self._pod_watch = None if pods is None else PodWatch(pods)
        self._storage_classes = (
            None
            if storage_classes is None
            else StorageClassListing(api, storage_classes, storage_class_period_s)
        )
        self._reports = reports
        self._api: KubeflowApi = kubeflow_api
        self._scheduling = scheduling or Scheduling()

    async def submit(self, plan: WorkloadPlan) -> Submission:
        manifests = render(plan, self._api, self._scheduling)
        shared = await self._share_data_volumes(plan)
        *needed, job = manifests
        for manifest in needed:  # the runtime: made once, by the first of its workloads
            await self._create(plan, manifest)
        made = await self._create(plan, job)
        # The workload's TrainJob may exist: made by this run before (a redelivery), or by an
        # earlier run and suspended since. That one is to run on, under this run's labels.
        if not made and self._api == "trainer-v2" and await self._earlier_run(plan):
            try:
                await self._merge_patch(plan, trainer_v2.TRAINJOBS, plan.job_name, _resumed(job))
            except ApiException as error:
                if error.status in PERMANENT:
                    raise BackendRejectedError(plan.job_name, _reason(error)) from error
                raise
        return Submission(backend=self.name, manifests=(*shared, *manifests))

    async def _share_data_volumes(self, plan: WorkloadPlan) -> list[dict[str, Any]]:
        """The read-only copies of the data volumes of other namespaces the workload mounts
        (infra/backends/shared_volumes.py), made before the job whose pods mount them."""
        made: list[dict[str, Any]] = []
        for claim in plan.data_volume_claims:
            if claim.namespace == plan.namespace:
                continue
            try:
                pvc = await self._core.read_namespaced_persistent_volume_claim(
                    claim.claim_name, claim.namespace
                )
                name = shared_volumes.origin_volume(claim, self._plain(pvc))
                origin = self._plain(await self._core.read_persistent_volume(name))
                pv, copy = shared_volumes.copies(claim, plan.namespace, origin)
                # The client sends a plain body as it is (the stubs name only its models).
                await _made_or_there(self._core.create_persistent_volume(pv))  # type: ignore[arg-type]
                await _made_or_there(
                    self._core.create_namespaced_persistent_volume_claim(
                        plan.namespace,
                        copy,  # type: ignore[arg-type]
                    )
                )
            except shared_volumes.NotShareableError as error:
                raise BackendRejectedError(
                    plan.job_name, f"storage.dataVolume: {error.reason}"
                ) from error
            except ApiException as error:
                if error.status in PERMANENT:
                    raise BackendRejectedError(
                        plan.job_name, f"storage.dataVolume: {_reason(error)}"
                    ) from error
                raise
            made += (pv, copy)
        return made

    async def withdraw_data_volume(self, data_volume_id: UUID) -> None:
        """Delete every copy of the data volume (PVCs and their PVs, found by label), so that no
        pod of the namespaces it was shared into mounts it again. Idempotent; a copy a pod still
        mounts goes with that pod (PVC protection), and the PVs retain the storage."""
        selector = f"{shared_volumes.DATA_VOLUME_LABEL}={data_volume_id}"
        claims = await self._core.list_persistent_volume_claim_for_all_namespaces(
            label_selector=selector
        )
        for claim in claims.items:
            await _deleted_or_gone(
                self._core.delete_namespaced_persistent_volume_claim(
                    claim.metadata.name, claim.metadata.namespace
                )
            )
        volumes = await self._core.list_persistent_volume(label_selector=selector)
        for volume in volumes.items:
            await _deleted_or_gone(self._core.delete_persistent_volume(volume.metadata.name))

    def _plain(self, model: Any) -> dict[str, Any]:
        """A client model as the API server's JSON (camelCase members)."""
        found: dict[str, Any] = self._client.sanitize_for_serialization(model)
        return found

    async def _earlier_run(self, plan: WorkloadPlan) -> bool:
        found = await self._objects.get_namespaced_custom_object(
            trainer_v2.GROUP, "v1alpha1", plan.namespace, trainer_v2.TRAINJOBS, plan.job_name
        )
        labels = found.get("metadata", {}).get("labels") or {}
        return labels.get(RUN_LABEL) != str(plan.run) or bool(found["spec"].get("suspend"))

    async def stop(self, plan: WorkloadPlan, *, suspend: bool = False) -> None:
        group, version, plural = _job_kind(plan, self._api)
        try:
            if suspend and self._api == "trainer-v2":
                await self._merge_patch(plan, plural, plan.job_name, {"spec": {"suspend": True}})
            else:
                await self._objects.delete_namespaced_custom_object(
                    group, version, plan.namespace, plural, plan.job_name
                )
        except ApiException as error:
            if error.status != HTTPStatus.NOT_FOUND:  # gone already, or never made: stopped
                raise

    async def status(self, plan: WorkloadPlan) -> RunStatus | None:
        """The run's job as the API server has it now, read as the watch reads it; failed when
        it is gone (deleted outside the service, or after it finished unseen)."""
        group, version, plural = _job_kind(plan, self._api)
        try:
            job = await self._objects.get_namespaced_custom_object(
                group, version, plan.namespace, plural, plan.job_name
            )
        except ApiException as error:
            if error.status != HTTPStatus.NOT_FOUND:
                raise
            return RunStatus("failed", f"its job {plan.namespace}/{plan.job_name} is gone")
        run = (job.get("metadata", {}).get("labels") or {}).get(RUN_LABEL, "1")
        found = _outcome_of_job(job) if run == str(plan.run) else None
        return None if found is None else RunStatus(*found)

    async def _create(self, plan: WorkloadPlan, manifest: dict[str, Any]) -> bool:
        """Whether it was made now (False: it existed)."""
        group, version = manifest["apiVersion"].split("/")
        try:
            await self._objects.create_namespaced_custom_object(
                group, version, plan.namespace, _plural(manifest["kind"]), manifest
            )
        except ApiException as error:
            if error.status == HTTPStatus.CONFLICT:
                return False
            if error.status in PERMANENT:
                raise BackendRejectedError(plan.job_name, _reason(error)) from error
            raise
        return True

    async def _merge_patch(
        self, plan: WorkloadPlan, plural: str, name: str, patch: dict[str, Any]
    ) -> None:
        """A JSON merge patch of a Trainer v2 object (the stubs omit `_content_type`, which
        the client takes: without it, it would send a strategic merge patch, which custom
        objects do not take)."""
        await self._objects.patch_namespaced_custom_object(  # type: ignore[call-arg]
            trainer_v2.GROUP, "v1alpha1", plan.namespace, plural, name, patch,
            _content_type=MERGE_PATCH,
        )  # fmt: skip

    async def watch(self, stop: asyncio.Event) -> None:
        """Follow the jobs that carry a workload label, and their pods; report them (and the
        cluster's storage classes, when asked to)."""
        async with asyncio.TaskGroup() as group:
            if self._pod_watch is not None:
                group.create_task(self._watch_pods(self._pod_watch, stop))
            if self._storage_classes is not None:
                group.create_task(self._storage_classes.run(stop))
            if self._api == "trainer-v2":
                group.create_task(
                    self._watch_kind(trainer_v2.API_VERSION, trainer_v2.TRAINJOBS, stop)
                )
            else:
                for kind, api_version, _, _ in KINDS.values():
                    group.create_task(self._watch_kind(api_version, PLURALS[kind], stop))

    async def _watch_kind(self, api_version: str, plural: str, stop: asyncio.Event) -> None:
        api_group, version = api_version.split("/")
        while not stop.is_set():
            stream = watch.Watch()
            try:
                async for event in stream.stream(
                    self._objects.list_cluster_custom_object,
                    api_group,
                    version,
                    plural,
                    label_selector=WORKLOAD_LABEL,
                    timeout_seconds=30,
                ):
                    await self._observe(event.get("object") or {})
                    if stop.is_set():
                        break
            except ApiException as error:
                if error.status != HTTPStatus.NOT_FOUND:  # a kind whose CRD is not installed
                    log.warning("watching %s: %s", plural, _reason(error))
                await _pause(stop, 5.0)
            finally:
                stream.stop()

    async def _watch_pods(self, pods: PodWatch, stop: asyncio.Event) -> None:
        while not stop.is_set():
            stream = watch.Watch()
            try:
                async for event in stream.stream(
                    self._core.list_pod_for_all_namespaces,
                    label_selector=WORKLOAD_LABEL,
                    timeout_seconds=30,
                ):
                    await pods.seen(event["type"], event["object"])
                    if stop.is_set():
                        break
            except ApiException as error:
                log.warning("watching pods: %s", _reason(error))
                await _pause(stop, 5.0)
            finally:
                stream.stop()

    async def _observe(self, job: dict[str, Any]) -> None:
        labels = job.get("metadata", {}).get("labels", {})
        try:
            workload_id = UUID(labels[WORKLOAD_LABEL])
            run = int(labels.get(RUN_LABEL, "1"))
        except (KeyError, ValueError):
            return
        found = _outcome_of_job(job)
        if found is not None:
            outcome, reason = found
            await self._reports(workload_id, run, outcome, reason)


def _outcome_of_job(job: dict[str, Any]) -> tuple[Outcome, str | None] | None:
    status = job.get("status") or {}
    if job.get("kind") == "TrainJob":
        return train_job_outcome(status)
    return outcome_of(status.get("conditions") or [])


def outcome_of(conditions: list[dict[str, Any]]) -> tuple[Outcome, str | None] | None:
    """The v1 operators' conditions read the robust way: finished when Succeeded or Failed is
    True; otherwise running when Running is True."""
    true = _true(conditions)
    finished = _finished(true, done="Succeeded")
    if finished is None and "Running" in true:
        return "running", None
    return finished


def train_job_outcome(status: dict[str, Any]) -> tuple[Outcome, str | None] | None:
    """A TrainJob's status: finished when Complete or Failed is True (a deadline exceeded is a
    failure like any other); while Suspended, nothing new (the suspension is what the submitter
    recorded); running once any of its jobs has a pod ready or active."""
    true = _true(status.get("conditions") or [])
    finished = _finished(true, done="Complete")
    if finished is not None or "Suspended" in true:
        return finished
    jobs = status.get("jobsStatus") or []
    if any((job.get("ready") or 0) + (job.get("active") or 0) > 0 for job in jobs):
        return "running", None
    return None


def _true(conditions: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {c.get("type", ""): c for c in conditions if c.get("status") == "True"}


def _finished(true: dict[str, dict[str, Any]], *, done: str) -> tuple[Outcome, str | None] | None:
    if "Failed" in true:
        failed = true["Failed"]
        return "failed", failed.get("message") or failed.get("reason") or "failed"
    return ("succeeded", None) if done in true else None


def _resumed(job: dict[str, Any]) -> dict[str, Any]:
    """The merge patch that runs an existing TrainJob as `job` says: its run's labels, not
    suspended (its trainer values and runtime patch are the workload's, the same each run)."""
    return {"metadata": {"labels": job["metadata"]["labels"]}, "spec": {"suspend": False}}


async def _done_unless_other_than(status: HTTPStatus, call: Awaitable[Any]) -> None:
    """The call, with `status` counting as done: a create's 409 (made by an earlier workload),
    a delete's 404 (gone by an earlier attempt)."""
    try:
        await call
    except ApiException as error:
        if error.status != status:
            raise


def _made_or_there(create: Awaitable[Any]) -> Awaitable[None]:
    return _done_unless_other_than(HTTPStatus.CONFLICT, create)


def _deleted_or_gone(delete: Awaitable[Any]) -> Awaitable[None]:
    return _done_unless_other_than(HTTPStatus.NOT_FOUND, delete)


def _job_kind(plan: WorkloadPlan, api: KubeflowApi) -> tuple[str, str, str]:
    if api == "trainer-v2":
        return trainer_v2.GROUP, "v1alpha1", trainer_v2.TRAINJOBS
    kind, api_version, _, _ = KINDS[plan.framework]
    group, version = api_version.split("/")
    return group, version, PLURALS[kind]


def _plural(kind: str) -> str:
    return {"TrainingRuntime": trainer_v2.RUNTIMES, "TrainJob": trainer_v2.TRAINJOBS}.get(
        kind
    ) or PLURALS[kind]


def _reason(error: ApiException) -> str:
    return f"{error.status} {error.reason}"


async def _pause(stop: asyncio.Event, seconds: float) -> None:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), timeout=seconds)


@contextlib.asynccontextmanager
async def api_client(kubeconfig: str) -> AsyncIterator[client.ApiClient]:
    """In a pod, the service account's in-cluster config; elsewhere a kubeconfig (the given path,
    else the default one)."""
    if not kubeconfig and os.environ.get("KUBERNETES_SERVICE_HOST"):
        config.load_incluster_config()  # type: ignore[no-untyped-call]
    else:
        await config.load_kube_config(config_file=kubeconfig or None)
    async with client.ApiClient() as api:
        yield api
