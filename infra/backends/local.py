"""The local backend: each replica of a run is an OS process on this machine, given nothing of
the service's (infra/backends/local_isolation.py). Why a run starts at most once per machine and
how it is supervised to its outcome: docs/decisions/0010-local-backend-runs.md."""

import asyncio
import contextlib
import errno
import logging
import os
import signal
import socket
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from domain.template_specs import Security
from domain.workload_plans import WorkloadPlan
from domain.workloads import Outcome
from infra.backends import local_traces
from infra.backends.local_capacity import Capacity, LocalBackendBusyError, default_capacity
from infra.backends.local_environment import LocalReplica, mpi_hostfile, replicas
from infra.backends.local_identities import Identities
from infra.backends.local_isolation import (
    Identity,
    IsolationError,
    environment,
    prepare_home,
    prepare_run_dir,
)
from infra.backends.local_pods import Replicas
from infra.backends.local_runtime import programs
from infra.settings import SubmitterSettings
from infra.telemetry import tracing
from services.errors import BackendRejectedError
from services.ports.workload_backends import PodReports, Reports, RunStatus, Submission

log = logging.getLogger(__name__)
# Waits between the tries of an outcome's report; after the last, the sweep records it.
REPORT_RETRIES_S = (0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0, 120.0)
# A replica that cannot start for want of these may start later: the start is retried.
_EXHAUSTED = frozenset({errno.EMFILE, errno.ENFILE, errno.EAGAIN, errno.ENOMEM, errno.ENOSPC})


class ReplicaStartError(LocalBackendBusyError):
    """The machine could not start a replica now (out of processes, files or memory)."""

    slug = "replica-start-failed"


class LocalBackend:
    name = "local"

    def __init__(
        self,
        work_dir: Path,
        reports: Reports,
        *,
        stop_grace_s: float = 10.0,
        pods: PodReports | None = None,
        ids: range = SubmitterSettings().local_ids,
        service_dirs: Sequence[Path] = (),
        max_processes: int = 0,
        python_prefix: Path = Path(sys.prefix),
    ) -> None:
        """`max_processes`: the most replicas it runs at once (0: as many as the machine takes,
        infra/backends/local_capacity.py); `python_prefix`: the Python installation they run."""
        self._prefix = python_prefix
        self._work_dir = work_dir
        self._identities = Identities(work_dir, ids, service_dirs)
        self._reports = reports
        self._pods = pods
        self._grace = stop_grace_s
        self._capacity = Capacity(max_processes or default_capacity())
        self._runs: dict[str, _Run] = {}
        self._programs: dict[str, str] | None = None  # how replicas find its Python, found once
        self._late: set[asyncio.Task[None]] = set()  # reports tried again

    async def submit(self, plan: WorkloadPlan) -> Submission:
        directory = self.run_dir(plan)
        if local_traces.started(directory):
            return Submission(backend=self.name)  # this run was started already
        count = plan.total_replicas
        self._capacity.take(plan.job_name, count)
        try:
            directory.mkdir(parents=True, exist_ok=True)
            lock = local_traces.claim(directory)
            if lock is None:
                self._capacity.give_back(count)
                return Submission(backend=self.name)  # started meanwhile, by another submitter
            try:
                run = await self._start(plan, directory, lock)
            except BaseException:
                local_traces.release(directory, lock)
                raise
        except BaseException:
            self._capacity.give_back(count)
            raise
        self._runs[_key(plan)] = run
        run.done(lambda: self._finished(plan, count))
        return Submission(backend=self.name)

    async def _start(self, plan: WorkloadPlan, directory: Path, lock: int) -> "_Run":
        hostfile = directory / "hostfile"
        if plan.framework == "MPI":
            hostfile.write_text(mpi_hostfile(plan))
        ports = _free_ports(plan.total_replicas + 1)
        planned = replicas(plan, ports, hostfile=str(hostfile), node_name=socket.gethostname())
        missing = [r.name for r in planned if not r.argv]
        if missing:
            raise BackendRejectedError(
                plan.job_name, f"the local backend runs a command; {', '.join(missing)} has none"
            )
        try:
            if self._programs is None:
                self._programs = await asyncio.to_thread(programs, self._prefix)
            prepare_run_dir(directory, self._work_dir)
            held = self._identities.take(
                directory, {r.name: _spec_security(plan, r) for r in planned}
            )
        except IsolationError as error:
            raise BackendRejectedError(plan.job_name, str(error)) from error

        def give_back() -> None:
            self._identities.give_back(held, directory)

        grace = plan.termination_grace_period_seconds
        run = _Run(
            plan,
            planned,
            held.identities,
            directory,
            self._reports,
            self._grace if grace is None else grace,
            self._pods,
            give_back,
            programs=self._programs,
        )
        try:
            await run.start(lock, self._report_later)
        except BaseException:
            give_back()
            raise
        return run

    def _finished(self, plan: WorkloadPlan, count: int) -> None:
        self._runs.pop(_key(plan), None)
        self._capacity.give_back(count)

    def _report_later(self, report: "asyncio.Task[None]") -> None:
        self._late.add(report)
        report.add_done_callback(self._late.discard)

    async def stop(self, plan: WorkloadPlan, *, suspend: bool = False) -> None:
        run = self._runs.get(_key(plan))
        if run is not None:
            await run.stop()
        else:  # left by a submitter before this one, or done
            await local_traces.stop_unsupervised(self.run_dir(plan), self._grace)

    async def status(self, plan: WorkloadPlan) -> RunStatus | None:
        run = self._runs.get(_key(plan))
        if run is not None:
            return RunStatus("running")  # supervised here: it reports the rest itself
        return local_traces.status(self.run_dir(plan))

    async def close(self) -> None:
        """Stop every run this process supervises (the submitter is going away); outcomes not
        reported yet are in their folders, for the next submitter's sweep."""
        await asyncio.gather(*(run.stop(shutting_down=True) for run in list(self._runs.values())))
        for report in self._late:
            report.cancel()
        await asyncio.gather(*self._late, return_exceptions=True)

    def run_dir(self, plan: WorkloadPlan) -> Path:
        return self._work_dir / plan.job_name / f"run-{plan.run}"


def _key(plan: WorkloadPlan) -> str:
    return f"{plan.job_name}/{plan.run}"


def _free_ports(count: int) -> list[int]:
    """Ports nothing listens on now (held open together, so they are distinct)."""
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _spec_security(plan: WorkloadPlan, replica: LocalReplica) -> Security | None:
    group = plan.group(replica.role)
    return None if group is None else group.spec.security


def _working_dir(replica: LocalReplica, default: Path) -> Path:
    """The spec's working directory where this machine has it, else the run's directory."""
    wanted = replica.working_dir
    return Path(wanted) if wanted and Path(wanted).is_dir() else default


def _start_error(job_name: str, replica: str, error: OSError) -> Exception:
    """For good when the replica itself cannot start (its program, its folder); for now when
    the machine is short of processes, files or memory (the queue delivers it again)."""
    reason = f"{replica} could not start: {error}"
    if error.errno in _EXHAUSTED:
        return ReplicaStartError(job_name, reason)
    return BackendRejectedError(job_name, reason)


def _as(identity: Identity | None) -> dict[str, Any]:
    """The user, group and supplementary groups to start as (none inherited from the service)."""
    if identity is None:
        return {}
    return {"user": identity.uid, "group": identity.gid, "extra_groups": list(identity.groups)}


class _Run:
    def __init__(
        self,
        plan: WorkloadPlan,
        planned: list[LocalReplica],
        identities: dict[str, Identity | None],
        directory: Path,
        reports: Reports,
        grace: float,
        pods: PodReports | None = None,
        ended: Callable[[], None] = lambda: None,
        *,
        programs: dict[str, str],
    ) -> None:
        self._plan = plan
        self._programs = programs
        self._ended = ended  # gives the run's identities back
        self._pods = pods
        self._replicas = Replicas(plan, planned)
        self._planned = planned
        self._identities = identities
        self._directory = directory
        self._reports = reports
        self._grace = grace
        self._processes: dict[str, asyncio.subprocess.Process] = {}
        self._stopping = False
        self._shutting_down = False
        self._task: asyncio.Task[None] | None = None
        self._lock = -1  # the supervisor lock (local_traces.claim), held while it supervises
        self._report_later: Callable[[asyncio.Task[None]], None] = lambda _: None
        # The submitter's span that started it (in the workload's trace): its reports go on in it.
        self._trace = tracing.current()

    async def start(self, lock: int, report_later: Callable[[asyncio.Task[None]], None]) -> None:
        """Start every replica, or none: one that cannot start stops those started."""
        await self._spawn_all()
        self._lock, self._report_later = lock, report_later
        self._task = asyncio.create_task(self._supervise(), name=f"local:{self._plan.job_name}")
        self._task.add_done_callback(lambda _: self._ended())

    def done(self, then: Callable[[], None]) -> None:
        """Call `then` once its outcome is kept (and reported, or to be reported later)."""
        assert self._task is not None
        self._task.add_done_callback(lambda _: then())

    async def _spawn_all(self) -> None:
        try:
            await self._spawn()
        except OSError as error:  # a replica's folder or log, before its process
            await self._terminate()
            raise _start_error(self._plan.job_name, "a replica", error) from error
        local_traces.keep_pids(self._directory, {n: p.pid for n, p in self._processes.items()})

    async def _spawn(self) -> None:
        """Start every replica (again, after a failure within the backoff limit)."""
        self._processes = {}
        for replica in self._planned:
            identity = self._identities.get(replica.name)
            home = prepare_home(self._directory, replica.name, identity)
            # The service's file, not the replica's: other users cannot read it.
            log_fd = os.open(
                self._directory / f"{replica.name}.log",
                os.O_WRONLY | os.O_CREAT | os.O_APPEND,
                0o600,
            )
            try:
                self._processes[replica.name] = await asyncio.create_subprocess_exec(
                    *replica.argv,
                    env=environment(replica.env, home, self._programs),
                    cwd=_working_dir(replica, home),
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=log_fd,
                    stderr=asyncio.subprocess.STDOUT,
                    start_new_session=True,  # its own process group: signal the whole tree
                    **_as(identity),
                )
            except OSError as error:
                await self._terminate()
                raise _start_error(self._plan.job_name, replica.name, error) from error
            finally:
                os.close(log_fd)
        self._replicas.started()
        await self._report_pods()

    async def stop(self, *, shutting_down: bool = False) -> None:
        """Stop every replica. A user's stop is reported as Stopped; the submitter shutting
        down fails the run, saying so (no one would ever resume a run it stopped)."""
        self._stopping = True
        self._shutting_down = shutting_down
        await self._terminate()
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)

    async def _supervise(self) -> None:
        """Report Running, then the outcome, kept in the run's folder first; a report that
        fails is tried again after a while, without holding up a stop."""
        try:
            await self._report("running", None)
            outcome, reason = await self._until_done()
            with contextlib.suppress(OSError):  # then the reconcile finds no process behind it
                local_traces.keep_outcome(self._directory, outcome, reason)
        finally:
            os.close(self._lock)
        if not await self._report(outcome, reason):
            self._report_later(asyncio.create_task(self._report_until_recorded(outcome, reason)))

    async def _until_done(self) -> tuple[Outcome, str | None]:
        """Its outcome. A failed attempt restarts every replica while the plan's backoff limit
        allows (as the operator recreates failed pods), then fails."""
        plan = self._plan
        restarts = 0
        while True:
            failure = await self._attempt()
            if failure is None or self._stopping or restarts >= (plan.backoff_limit or 0):
                break
            restarts += 1
            log.info("local run %s/%s: %s; restart %d", plan.job_name, plan.run, failure, restarts)
            try:
                await self._spawn_all()
            except (BackendRejectedError, ReplicaStartError) as error:
                failure = error.reason
                break
        if self._stopping:  # as a cluster deletes a stopped job's pods
            self._replicas.gone()
            await self._report_pods()
        log.info("local run %s/%s finished: %s", plan.job_name, plan.run, failure or "ok")
        if self._shutting_down:
            return "failed", "stopped with the submitter that ran it"
        if self._stopping:
            return "stopped", None
        if failure is not None:
            return "failed", failure + (f" (after {restarts} restarts)" if restarts else "")
        return "succeeded", None

    async def _report_until_recorded(self, outcome: Outcome, reason: str | None) -> None:
        for wait in REPORT_RETRIES_S:
            await asyncio.sleep(wait)
            if await self._report(outcome, reason):
                return
        log.error("%s for %s is not recorded: the sweep will", outcome, self._plan.job_name)

    async def _attempt(self) -> str | None:
        """Wait for every replica; the first to fail stops its siblings. Returns why it failed."""
        waits = {
            asyncio.ensure_future(process.wait()): name for name, process in self._processes.items()
        }
        failure: str | None = None
        pending = set(waits)
        while pending:
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for finished in done:
                code = finished.result()
                self._replicas.exited(waits[finished], code)
                await self._report_pods()
                if code != 0 and failure is None and not self._stopping:
                    failure = f"{waits[finished]} exited with code {code}"
                    await self._terminate()
        return failure

    async def _report(self, outcome: Outcome, reason: str | None) -> bool:
        """Whether it is recorded. The run goes on regardless: its outcome is tried again,
        and the sweep asks what became of it."""
        try:
            with self._span(f"report {outcome}"):
                await self._reports(self._plan.workload_id, self._plan.run, outcome, reason)
        except Exception as error:
            log.warning("could not record %s for %s: %r", outcome, self._plan.job_name, error)
            return False
        return True

    async def _report_pods(self) -> None:
        if self._pods is None:
            return
        try:
            with self._span("report pods"):
                await self._pods(self._plan.workload_id, self._plan.run, self._replicas.observed())
        except Exception:  # the run goes on; the next change reports the whole set again
            log.exception("could not record the pods of %s", self._plan.job_name)

    def _span(self, name: str) -> contextlib.AbstractContextManager[object]:
        attributes: tracing.Attributes = {
            "trainplate.backend": LocalBackend.name,
            "trainplate.workload.id": str(self._plan.workload_id),
            "trainplate.workload.run": self._plan.run,
        }
        parents = (self._trace,) if self._trace is not None else ()
        return tracing.span(f"local {name}", parents=parents, attributes=attributes)

    async def _terminate(self) -> None:
        alive = [p for p in self._processes.values() if p.returncode is None]
        for process in alive:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
        if not alive:
            return
        _, late = await asyncio.wait(
            [asyncio.ensure_future(p.wait()) for p in alive], timeout=self._grace
        )
        for process in alive:
            if process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
        if late:
            await asyncio.wait(late)
