"""The submitter process: `trainplate serve submitter`, its backend chosen by
TRAINPLATE_SUBMITTER__BACKEND (local, kubernetes or dry-run). What it decides:
services/submitter.py."""

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from uuid import UUID

from prometheus_client import start_http_server

from domain.cluster_specs import StorageClassSpec
from domain.events import PodObserved
from domain.workloads import Outcome
from infra.backends.dry_run import DryRunBackend
from infra.backends.local import LocalBackend
from infra.backends.local_runtime import default_work_dir
from infra.backends.scheduling import Scheduling
from infra.bootstrap import freeze_start_up, open_resources
from infra.followers.log_follower import keep_following
from infra.jetstream.data_volume_withdrawals import DataVolumeCopies, DataVolumeWithdrawals
from infra.jetstream.work_queue import Submitter
from infra.postgres.migrate import apply_migrations
from infra.postgres.names import name_lookups
from infra.postgres.streams import PostgresStreams
from infra.serialization import DOMAIN_CODEC
from infra.settings import Settings
from infra.telemetry.meters import SubmitterMetrics
from services import pod_reports, submitter
from services.ports.event_store import EventStore
from services.ports.name_lookups import NameHolders
from services.ports.workload_backends import (
    PodReports,
    Reports,
    StorageClassReports,
    WorkloadBackend,
)
from services.storage_class_reports import report_storage_classes

log = logging.getLogger(__name__)


async def run(settings: Settings, stop: asyncio.Event) -> None:
    async with open_resources(settings, role="submitter") as resources:
        async with resources.pool.acquire() as conn:
            await apply_migrations(conn)
        store = PostgresStreams(
            resources.pool, DOMAIN_CODEC, max_event_bytes=settings.sizes.event_bytes
        )
        metrics = SubmitterMetrics()
        if settings.submitter.metrics_port:
            start_http_server(
                settings.submitter.metrics_port,
                addr=settings.submitter.metrics_host,
                registry=metrics.registry,
            )
        holders = name_lookups(resources.pool).holders
        async with backend_for(settings, store, holders) as (backend, watcher):
            worker = Submitter(
                resources.js,
                store,
                backend,
                settings.nats,
                settings.submitter,
                # On the pool: each batch's outcomes commit in their own statement.
                batches=store,
                pool=resources.pool,
                metrics=metrics,
            )
            freeze_start_up()
            async with asyncio.TaskGroup() as group:
                group.create_task(keep_following(worker.run, stop, name="submitter"))
                if watcher is not None:
                    group.create_task(keep_following(watcher, stop, name="job-watch"))
                if isinstance(backend, DataVolumeCopies):  # it makes copies to withdraw
                    withdrawals = DataVolumeWithdrawals(
                        resources.js, backend, settings.nats, settings.submitter
                    )
                    group.create_task(
                        keep_following(withdrawals.run, stop, name="data-volume-withdrawals")
                    )


def reports_to(store: EventStore) -> Reports:
    async def record(
        workload_id: UUID, run: int, outcome: Outcome, reason: str | None = None
    ) -> None:
        await submitter.report(workload_id, run, outcome, reason, store=store)

    return record


def pods_to(store: EventStore) -> PodReports:
    kept = pod_reports.Observed()  # the process's watchers' workloads, between their reports

    async def record(workload_id: UUID, run: int | None, pods: Sequence[PodObserved]) -> None:
        await pod_reports.observed(workload_id, run, pods, store=store, kept=kept)

    return record


def storage_classes_to(
    cluster_id: UUID | None, store: EventStore, holders: NameHolders
) -> StorageClassReports | None:
    """The reports of a submitter's cluster; one serving every cluster knows not which its
    API server is, so it reports none (docs/decisions/0037)."""
    if cluster_id is None:
        log.info("no TRAINPLATE_SUBMITTER__CLUSTER_ID: the cluster's storage classes go unreported")
        return None

    async def record(classes: Mapping[str, StorageClassSpec]) -> None:
        await report_storage_classes(cluster_id, classes, streams=store, holders=holders)

    return record


@contextlib.asynccontextmanager
async def backend_for(
    settings: Settings, store: EventStore, holders: NameHolders
) -> AsyncIterator[tuple[WorkloadBackend, Callable[[asyncio.Event], Awaitable[None]] | None]]:
    """The configured backend, and the task that follows its jobs (when it has one)."""
    chosen = settings.submitter
    scheduling = Scheduling.of(chosen)
    if chosen.backend == "dry-run":
        yield DryRunBackend(kubeflow_api=chosen.kubeflow_api, scheduling=scheduling), None
    elif chosen.backend == "local":
        work_dir = (
            Path(chosen.work_dir) if chosen.work_dir else default_work_dir(Path(settings.data_dir))
        )
        local = LocalBackend(
            work_dir,
            reports_to(store),
            stop_grace_s=chosen.stop_grace_s,
            pods=pods_to(store),
            ids=chosen.local_ids,
            service_dirs=(Path(settings.data_dir),),
            max_processes=chosen.local_max_processes,
        )
        try:
            yield local, None
        finally:
            await local.close()
    else:
        from infra.backends.kubernetes import KubernetesBackend, api_client

        async with api_client(chosen.kubeconfig) as api:
            backend = KubernetesBackend(
                api,
                reports_to(store),
                kubeflow_api=chosen.kubeflow_api,
                scheduling=scheduling,
                pods=pods_to(store),
                storage_classes=storage_classes_to(chosen.cluster_id, store, holders),
                storage_class_period_s=chosen.storage_class_interval_s,
            )
            yield backend, backend.watch
