"""How a cluster schedules distributed workloads, as the submitter's settings say, and what that
puts on a job and its pods: the project's queue in the scheduler's own label, the scheduler's
name, and (Trainer v2) the runtime's pod-group policy for gang scheduling.

- runai: Run:ai's scheduler reads `runai/queue` on every pod (the project is the queue).
- kai: the KAI scheduler (Run:ai's, open-sourced) reads `kai.scheduler/queue` on the job, which
  its pod grouper follows from each pod up the owner chain; pods ask for `kai-scheduler`.
- kueue: Kueue admits a job by `kueue.x-k8s.io/queue-name` on the job itself (the project's
  LocalQueue); the pods keep the default scheduler.
"""

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
