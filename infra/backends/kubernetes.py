"""The Kubernetes backend: each run is a Kubeflow job (infra/backends/kubeflow_jobs.py) created with
kubernetes-asyncio; its conditions, watched cluster-wide, become the run's outcome events.

The job's name is derived from the workload id, so a second create of the same run answers 409
AlreadyExists: that counts as done. A create the API server refuses for good (400, 403, 404 for a
CRD that is not installed, 422) rejects the workload; anything else is retried by the queue.
"""

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncIterator
from http import HTTPStatus
from typing import Any
from uuid import UUID

from kubernetes_asyncio import client, config, watch
from kubernetes_asyncio.client.exceptions import ApiException

from domain.workload_plans import WorkloadPlan
from domain.workloads import Outcome
from infra.backends.kubeflow_jobs import (
    DEFAULT_SCHEDULER,
    KINDS,
    PLURALS,
    RUN_LABEL,
    to_kubeflow_job,
)
from infra.backends.kubeflow_pods import WORKLOAD_LABEL
from services.errors import BackendRejectedError
from services.ports import Reports, Submission

log = logging.getLogger(__name__)
PERMANENT = {
    HTTPStatus.BAD_REQUEST,
    HTTPStatus.FORBIDDEN,
    HTTPStatus.NOT_FOUND,
    HTTPStatus.UNPROCESSABLE_ENTITY,
}


class KubernetesBackend:
    name = "kubernetes"

    def __init__(
        self, api: client.ApiClient, reports: Reports, *, scheduler_name: str = DEFAULT_SCHEDULER
    ) -> None:
        self._objects = client.CustomObjectsApi(api)
        self._reports = reports
        self._scheduler = scheduler_name

    async def submit(self, plan: WorkloadPlan) -> Submission:
        manifest = to_kubeflow_job(plan, scheduler_name=self._scheduler)
        group, version = manifest["apiVersion"].split("/")
        try:
            await self._objects.create_namespaced_custom_object(
                group, version, plan.namespace, PLURALS[manifest["kind"]], manifest
            )
        except ApiException as error:
            if error.status == HTTPStatus.CONFLICT:  # this run's job exists: submitted before
                return Submission(backend=self.name)
            if error.status in PERMANENT:
                raise BackendRejectedError(plan.job_name, _reason(error)) from error
            raise
        return Submission(backend=self.name)

    async def stop(self, plan: WorkloadPlan) -> None:
        kind, api_version, _, _ = KINDS[plan.framework]
        group, version = api_version.split("/")
        try:
            await self._objects.delete_namespaced_custom_object(
                group, version, plan.namespace, PLURALS[kind], plan.job_name
            )
        except ApiException as error:
            if error.status != HTTPStatus.NOT_FOUND:  # gone already: stopped
                raise

    async def watch(self, stop: asyncio.Event) -> None:
        """Follow every kind's jobs that carry a workload label; report their conditions."""
        async with asyncio.TaskGroup() as group:
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

    async def _observe(self, job: dict[str, Any]) -> None:
        labels = job.get("metadata", {}).get("labels", {})
        try:
            workload_id = UUID(labels[WORKLOAD_LABEL])
            run = int(labels.get(RUN_LABEL, "1"))
        except (KeyError, ValueError):
            return
        found = outcome_of(job.get("status", {}).get("conditions") or [])
        if found is not None:
            outcome, reason = found
            await self._reports(workload_id, run, outcome, reason)


def outcome_of(conditions: list[dict[str, Any]]) -> tuple[Outcome, str | None] | None:
    """The operators' conditions read the robust way: finished when Succeeded or Failed is True;
    otherwise running when Running is True."""
    true = {c.get("type"): c for c in conditions if c.get("status") == "True"}
    if "Failed" in true:
        failed = true["Failed"]
        return "failed", failed.get("message") or failed.get("reason") or "failed"
    if "Succeeded" in true:
        return "succeeded", None
    if "Running" in true:
        return "running", None
    return None


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
