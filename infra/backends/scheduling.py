"""How a cluster schedules distributed workloads, as the submitter's settings say: the project's
queue in the scheduler's own label, the scheduler's name, and (Trainer v2) the pod-group policy
for gang scheduling. Which label goes where: docs/decisions/0009-kubernetes-backend-objects.md."""

from typing import Any, Final

import msgspec

from infra.settings import Gang, Queues, SubmitterSettings

RUNAI_QUEUE_LABEL: Final = "runai/queue"
KAI_QUEUE_LABEL: Final = "kai.scheduler/queue"
KUEUE_QUEUE_LABEL: Final = "kueue.x-k8s.io/queue-name"
PREEMPTIBILITY_LABEL: Final = "kai.scheduler/preemptibility"
SCHEDULERS: Final[dict[Queues, str]] = {
    "runai": "runai-scheduler",
    "kai": "kai-scheduler",
    "kueue": "",  # the cluster's default scheduler
}
COSCHEDULING_TIMEOUT_S: Final = 60  # the Trainer's own default


class Scheduling(msgspec.Struct, frozen=True, kw_only=True):
    queues: Queues = "runai"
    scheduler_name: str = ""  # empty: the one the queues' scheduler is called by
    gang: Gang = "none"

    @property
    def scheduler(self) -> str:
        return self.scheduler_name or SCHEDULERS[self.queues]

    def job_labels(self, queue: str) -> dict[str, str]:
        """On the job object (TrainJob, PyTorchJob, ...)."""
        if self.queues == "kai":
            return {KAI_QUEUE_LABEL: queue}
        if self.queues == "kueue":
            return {KUEUE_QUEUE_LABEL: queue}
        return {RUNAI_QUEUE_LABEL: queue}

    def pod_labels(self, queue: str) -> dict[str, str]:
        """On every pod: Run:ai's scheduler and KAI both read the queue there too."""
        return {} if self.queues == "kueue" else self.job_labels(queue)

    @classmethod
    def of(cls, settings: SubmitterSettings) -> "Scheduling":
        return cls(
            queues=settings.queues,
            scheduler_name=settings.scheduler_name,
            gang=settings.gang_scheduling,
        )

    def pod_group_policy(self) -> dict[str, Any] | None:
        if self.gang == "coscheduling":
            return {"coscheduling": {"scheduleTimeoutSeconds": COSCHEDULING_TIMEOUT_S}}
        if self.gang == "volcano":
            return {"volcano": {}}
        return None
