"""The submitter's backend as the submitter calls it: each call timed, and in a span continuing
the trace of the message that asked for its workload (`asked_by`), so a request's trace reaches
the Kubernetes or local run it started."""

import time
from collections.abc import Awaitable
from typing import TypeVar
from uuid import UUID

from opentelemetry.trace import SpanContext, SpanKind

from domain.workload_plans import WorkloadPlan
from infra.telemetry import tracing
from infra.telemetry.meters import SubmitterMetrics
from services.ports.workload_backends import RunStatus, Submission, WorkloadBackend

T = TypeVar("T")


class ObservedBackend:
    def __init__(self, backend: WorkloadBackend, metrics: SubmitterMetrics | None = None) -> None:
        self.name = backend.name
        self._backend = backend
        self._metrics = metrics
        self.asked_by: dict[UUID, SpanContext | None] = {}

    async def submit(self, plan: WorkloadPlan) -> Submission:
        return await self._call("submit", plan, self._backend.submit(plan))

    async def stop(self, plan: WorkloadPlan, *, suspend: bool = False) -> None:
        await self._call("stop", plan, self._backend.stop(plan, suspend=suspend))

    async def status(self, plan: WorkloadPlan) -> RunStatus | None:
        return await self._call("status", plan, self._backend.status(plan))

    async def _call(self, call: str, plan: WorkloadPlan, doing: Awaitable[T]) -> T:
        attributes: tracing.Attributes = {
            "trainplate.backend": self.name,
            "trainplate.workload.id": str(plan.workload_id),
            "trainplate.workload.run": plan.run,
        }
        parent = self.asked_by.get(plan.workload_id)
        started, result = time.perf_counter(), "error"
        try:
            with tracing.span(
                f"backend {call}", parents=[parent] if parent else (), kind=SpanKind.CLIENT,
                attributes=attributes,
            ):  # fmt: skip
                done = await doing
            result = "ok"
            return done
        finally:
            if self._metrics is not None:
                seconds = time.perf_counter() - started
                self._metrics.backend_seconds.labels(self.name, call, result).observe(seconds)
