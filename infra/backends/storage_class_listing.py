"""The cluster's StorageClasses (`storage.k8s.io/v1`), listed at start and then on a period and
reported whole, as Run:ai's cluster agent reports them: a listing finds a deletion missed while
the submitter was down, where a watch would need its own resync. Why: docs/decisions/0037."""

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from typing import Final

import aiohttp
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from domain.cluster_specs import StorageClassSpec
from domain.errors import TrainplateError
from services.ports.workload_backends import StorageClassReports

log = logging.getLogger(__name__)
# Kubernetes reads the beta annotation too (storage/util's IsDefaultAnnotation).
DEFAULT_ANNOTATIONS: Final = (
    "storageclass.kubernetes.io/is-default-class",
    "storageclass.beta.kubernetes.io/is-default-class",
)
LIST_TIMEOUT_S: Final = 30
# The API server's refusals, the network's, an answer the client cannot read (ValueError), the
# write side's (the cluster unknown, the store away): each waits for the next period.
_FAILED: Final = (
    ApiException,
    aiohttp.ClientError,
    OSError,
    TimeoutError,
    ValueError,
    TrainplateError,
)


def spec_of(found: client.V1StorageClass) -> StorageClassSpec:
    annotations: Mapping[str, str] = found.metadata.annotations or {}
    return StorageClassSpec(
        provisioner=found.provisioner,
        allow_volume_expansion=found.allow_volume_expansion,
        is_default=any(annotations.get(key) == "true" for key in DEFAULT_ANNOTATIONS),
    )


class StorageClassListing:
    def __init__(self, api: client.ApiClient, reports: StorageClassReports, period_s: float):
        self._storage = client.StorageV1Api(api)
        self._reports = reports
        self._period_s = period_s

    async def once(self) -> None:
        """List every class and report them; a failure is logged, to be tried next period."""
        try:
            async with asyncio.timeout(LIST_TIMEOUT_S + 5):
                found = await self._storage.list_storage_class(timeout_seconds=LIST_TIMEOUT_S)
            await self._reports({item.metadata.name: spec_of(item) for item in found.items})
        except _FAILED as error:
            log.warning("reporting the cluster's storage classes: %s", _reason(error))

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            await self.once()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=self._period_s)


def _reason(error: Exception) -> str:
    if isinstance(error, ApiException):
        return f"{error.status} {error.reason}"
    return str(error) or type(error).__name__
