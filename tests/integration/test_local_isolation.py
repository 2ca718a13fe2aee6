"""A workload runs other people's code: what a hostile replica of the local backend can reach.

The attacks as a project editor would make them: a command that prints its environment and its
identity, tries to read a file of the service's (its signing key, mode 0600), asks for the
embedded PostgreSQL's user, or goes looking through another live workload and the database's data.
"""

import asyncio
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any, NamedTuple
from uuid import UUID

import asyncpg
import pytest

from domain.template_specs import Security
from domain.workloads import Workload
from infra.backends.local import LocalBackend
from infra.backends.local_identities import LEASES, Identities
from infra.backends.local_isolation import IsolationError
from infra.postgres.streams import PostgresStreams
from infra.serialization import DOMAIN_CODEC
from infra.settings import SubmitterSettings
from infra.workers.submitter import reports_to
from services import submitter
from services.ports.event_store import Append
from tests.conftest import ACTOR
from tests.integration.test_local_backend import finished
from tests.workload_samples import requested_workload

pytestmark = pytest.mark.integration

SECRET = "the-signing-key-no-workload-may-see-0123456789"
AS_ROOT = pytest.mark.skipif(os.geteuid() != 0, reason="only a root service can change users")
IDS = SubmitterSettings().local_ids


@pytest.fixture
def service_secret(replica_work_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The service's environment and key file, as `trainplate dev` leaves them."""
    monkeypatch.setenv("TRAINPLATE_AUTH__SIGNING_KEY", SECRET)
    monkeypatch.setenv("TRAINPLATE_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/x")
    key = replica_work_dir / "signing.key"
    key.write_text(SECRET)
    key.chmod(0o600)
    return key


class Database(NamedTuple):
    data: Path
    uid: int  # its files' owner: the user the server runs as
    gid: int
    pid: str  # the postmaster's


@pytest.fixture
async def database(clean_pool: asyncpg.Pool) -> Database:
    """The test database's files and server, where this machine has them (the embedded one's)."""
    found = Path(await clean_pool.fetchval("SHOW data_directory"))
    if not (found / "PG_VERSION").exists():
        pytest.skip("the test database's data is not on this machine")
    owner = os.stat(found)
    pid = (found / "postmaster.pid").read_text().split()[0]
    return Database(found, owner.st_uid, owner.st_gid, pid)


async def start(store: PostgresStreams, backend: LocalBackend, command: str, **spec: Any) -> UUID:
    event = requested_workload(
        {"distributedFramework": "PyTorch", "numWorkers": 1, "command": command, **spec},
        name="probe",
    )
    await store.append(Append(event.workload_id, [event], expected_version=0, metadata=ACTOR))
    await submitter.reconcile(event.workload_id, store=store, backend=backend)
    return event.workload_id


async def run(
    pool: asyncpg.Pool, work_dir: Path, command: str, ids: range = IDS, **spec: Any
) -> Workload:
    store = PostgresStreams(pool, DOMAIN_CODEC)
    backend = LocalBackend(work_dir / "workloads", reports_to(store), stop_grace_s=5, ids=ids)
    try:
        return await finished(store, await start(store, backend, command, **spec), 60)
    finally:
        await backend.close()  # its runs' ends seen through: their ids given back


def run_dir(work_dir: Path, state: Workload) -> Path:
    return work_dir / "workloads" / state.request.job_name / "run-1"


def log_of(work_dir: Path, state: Workload) -> str:
    assert state.actual != "Failed" or state.reason is None, state.reason
    return (run_dir(work_dir, state) / "worker-0.log").read_text()


async def test_a_replica_sees_only_its_own_environment(
    clean_pool: asyncpg.Pool, replica_work_dir: Path, service_secret: Path
) -> None:
    state = await run(
        clean_pool,
        replica_work_dir,
        "env",
        environmentVariables=[{"name": "MINE", "value": "mine"}],
    )
    log = log_of(replica_work_dir, state)
    assert state.actual == "Completed", log
    assert SECRET not in log
    assert "TRAINPLATE_" not in log
    names = {line.split("=", 1)[0] for line in log.splitlines() if "=" in line}
    operator = {"MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK", "PET_NNODES"}
    assert {"PATH", "HOME", "LANG", "MINE", "JOB_NAME", *operator} <= names
    assert names <= {
        "PATH", "HOME", "LANG", "MINE", "PYTHONUNBUFFERED", "JOB_NAME", "JOB_UUID", "POD_INDEX",
        "NODE_NAME", "RUNAI_NUM_OF_GPUS", "PET_NPROC_PER_NODE", "PET_MASTER_ADDR",
        "PET_MASTER_PORT", "PET_NODE_RANK", "PWD", "SHLVL", "_", "LD_LIBRARY_PATH", *operator,
    }  # fmt: skip


@AS_ROOT
async def test_a_replica_of_a_root_service_runs_under_an_id_of_its_own_and_cannot_read_its_keys(
    clean_pool: asyncpg.Pool, replica_work_dir: Path, service_secret: Path
) -> None:
    command = f"sh -c 'id -u; id -g; id -G; pwd; stat -c %u:%a .; cat {service_secret}; echo $?'"
    state = await run(clean_pool, replica_work_dir, command)
    log = log_of(replica_work_dir, state)
    assert state.actual == "Completed", log
    uid, gid, groups, cwd, home, *rest = log.splitlines()
    assert int(uid) in IDS
    assert gid == groups == uid  # its own group, and none of the service's
    assert home == f"{uid}:700"  # its own, and no one else's
    assert SECRET not in log
    assert "Permission denied" in log
    assert rest[-1] == "1"
    assert owner_and_mode(Path(cwd).parent / "worker-0.log") == (0, 0o600)  # the service's
    # Over: the run's folder is no workload's to pass through any more, its id no one's.
    assert owner_and_mode(Path(cwd).parent) == (0, 0o700)
    assert not (replica_work_dir / "workloads" / LEASES / uid).exists()


def owner_and_mode(path: Path) -> tuple[int, int]:
    found = path.stat()
    return found.st_uid, found.st_mode & 0o777


@AS_ROOT
async def test_custom_ids_inside_the_range_are_the_replicas(
    clean_pool: asyncpg.Pool, replica_work_dir: Path
) -> None:
    uid, gid, one, two = (IDS.start + n for n in (1234, 2345, 3456, 4567))
    security = {
        "uidGidSource": "custom",
        "runAsUid": uid,
        "runAsGid": gid,
        "supplementalGroups": f"{one},{two}",
    }
    state = await run(
        clean_pool, replica_work_dir, "sh -c 'id -u; id -g; id -G'", security=security
    )
    log = log_of(replica_work_dir, state)
    assert state.actual == "Completed", log
    assert log.splitlines() == [f"{uid}", f"{gid}", f"{gid} {one} {two}"]


@AS_ROOT
async def test_a_replica_asking_for_root_is_refused(
    clean_pool: asyncpg.Pool, replica_work_dir: Path
) -> None:
    security = {"uidGidSource": "custom", "runAsUid": 0}
    state = await run(clean_pool, replica_work_dir, "id -u", security=security)
    assert state.actual == "Failed"
    assert state.reason is not None
    assert "runAsUid 0 is not one the local backend runs workloads as" in state.reason
    assert not (run_dir(replica_work_dir, state) / "worker-0.log").exists()  # never run


@AS_ROOT
@pytest.mark.parametrize("ids_hold_it", [False, True], ids=["default ids", "ids holding it"])
async def test_a_replica_asking_for_the_databases_user_is_refused(
    clean_pool: asyncpg.Pool, replica_work_dir: Path, database: Database, ids_hold_it: bool
) -> None:
    """uid and gid 1001 here: the user the embedded PostgreSQL runs as, who owns its files."""
    security = {"uidGidSource": "custom", "runAsUid": database.uid, "runAsGid": database.gid}
    ids = range(min(database.uid, database.gid), max(database.uid, database.gid) + 2)
    state = await run(
        clean_pool,
        replica_work_dir,
        f"sh -c 'cat {database.data}/pg_hba.conf'",
        ids=ids if ids_hold_it else IDS,
        security=security,
    )
    assert state.actual == "Failed"
    assert state.reason is not None
    asked = (f"runAsUid {database.uid} ", f"runAsGid {database.gid} ")
    assert any(field in state.reason for field in asked), state.reason
    assert not (run_dir(replica_work_dir, state) / "worker-0.log").exists()  # never run


@AS_ROOT
async def test_a_replica_reaches_nothing_of_another_live_workload_nor_of_the_database(
    clean_pool: asyncpg.Pool, replica_work_dir: Path, database: Database
) -> None:
    """One workload keeps a file in its home and lives on; another goes looking for it, for the
    database's files and server, and through the workloads folder, and says what it reached."""
    store = PostgresStreams(clean_pool, DOMAIN_CODEC)
    workloads = replica_work_dir / "workloads"
    backend = LocalBackend(workloads, reports_to(store), stop_grace_s=5)
    ready = replica_work_dir / "ready"
    os.mkfifo(ready)
    ready.chmod(0o622)  # any replica may say it is ready; none may read it
    try:
        kept = f"sh -c 'echo kept > secret; echo $$ $PWD > {ready}; exec sleep 120'"
        await start(store, backend, kept)
        pid, home = (await first_line(ready, within_s=30)).split()
        files = [f"{home}/secret", f"{database.data}/PG_VERSION", f"{database.data}/pg_hba.conf"]
        folders = (home, database.data, workloads)
        probe = "; ".join(
            [
                "exec 2>/dev/null",  # what it failed to reach is no news
                'echo mine > "$HOME/mine" && cat "$HOME/mine" >/dev/null && echo "reached $HOME"',
                *(f"cat {f} >/dev/null && echo reached {f}" for f in files),
                *(f"ls {d} >/dev/null && echo listed {d}" for d in folders),
                f"echo planted > {home}/planted && echo wrote {home}",
                f"echo x >> {database.data}/pg_hba.conf && echo wrote pg_hba.conf",
                *(f"kill -0 {p} && echo signalled {p}" for p in (pid, database.pid)),
                "echo done",
            ]
        )
        probing = await start(store, backend, f"sh -c {shlex.quote(probe)}")
        state = await finished(store, probing, 60)
    finally:
        await backend.close()
    log = log_of(replica_work_dir, state)
    assert state.actual == "Completed", log
    # Its own home, and nothing else.
    assert log.splitlines() == [f"reached {run_dir(replica_work_dir, state)}/worker-0", "done"]
    assert (Path(home) / "secret").read_text() == "kept\n"  # it was there to be read


async def first_line(fifo: Path, *, within_s: float) -> str:
    """The first line a replica writes into `fifo`: read as it comes, never polled for."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    ours = os.open(fifo, os.O_WRONLY)  # a writer that stays: no end of file before the line
    transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(fd, "rb", buffering=0)
    )
    try:
        return (await asyncio.wait_for(reader.readline(), within_s)).decode().strip()
    finally:
        transport.close()
        os.close(ours)


# The leases themselves, without processes: ids near the range's end, where no run above goes.
NEAR_END = range(IDS.stop - 8, IDS.stop)


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A work dir and two runs' folders in it."""
    first, second = tmp_path / "work" / "a" / "run-1", tmp_path / "work" / "b" / "run-1"
    for folder in (first, second):
        folder.mkdir(parents=True)
        folder.chmod(0o711)
    return tmp_path / "work", first, second


@AS_ROOT
def test_live_runs_never_share_an_id_and_one_given_back_comes_back_last(
    folders: tuple[Path, Path, Path],
) -> None:
    work_dir, first_run, second_run = folders
    identities = Identities(work_dir, NEAR_END[:3])
    first = identities.take(first_run, {"worker-0": None, "master-0": None})
    second = identities.take(second_run, {"worker-0": None})
    assert first.leased == (NEAR_END[0],)  # both of its replicas run under it
    assert {i.uid for i in first.identities.values() if i} == {NEAR_END[0]}
    assert second.leased == (NEAR_END[1],)
    identities.give_back(first, first_run)
    assert owner_and_mode(first_run)[1] == 0o700  # its files are no later run's to reach
    third = identities.take(first_run, {"worker-0": None})
    assert third.leased == (NEAR_END[2],)  # not the one just given back
    assert identities.take(second_run, {"worker-0": None}).leased == (NEAR_END[0],)
    with pytest.raises(IsolationError, match=f"^no id of {NEAR_END[0]}-{NEAR_END[2]} is free"):
        identities.take(second_run, {"worker-0": None})


@AS_ROOT
def test_a_custom_id_another_live_run_holds_is_refused_until_given_back(
    folders: tuple[Path, Path, Path],
) -> None:
    work_dir, first_run, second_run = folders
    identities = Identities(work_dir, NEAR_END)
    first = identities.take(first_run, {"worker-0": None})
    (held,) = first.leased
    asks = {"worker-0": Security(uid_gid_source="custom", run_as_gid=held)}
    with pytest.raises(IsolationError, match=f"^runAsGid {held} is another live workload's$"):
        identities.take(second_run, asks)
    identities.give_back(first, first_run)
    second = identities.take(second_run, asks)
    assert held in second.leased
    assert second.identities["worker-0"] is not None
    assert second.identities["worker-0"].gid == held


@AS_ROOT
def test_a_lease_whose_holder_is_gone_is_taken_back_and_its_run_closed(
    folders: tuple[Path, Path, Path],
) -> None:
    work_dir, first_run, second_run = folders
    lease = work_dir / LEASES / str(NEAR_END[0])
    lease.parent.mkdir()
    lease.write_text(f"{gone_pid()} 1\n{first_run}\n")
    taken = Identities(work_dir, NEAR_END[:1]).take(second_run, {"worker-0": None})
    assert taken.leased == (NEAR_END[0],)
    assert owner_and_mode(first_run)[1] == 0o700
    assert lease.read_text().splitlines()[1] == str(second_run)


def gone_pid() -> int:
    """The pid of a process that has ended."""
    ended = subprocess.Popen(["true"])
    ended.wait()
    return ended.pid


@AS_ROOT
def test_an_id_that_owns_a_service_folder_or_runs_a_process_is_never_handed_out(
    folders: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    work_dir, first_run, _ = folders
    data = tmp_path / "data"
    (data / "postgres").mkdir(parents=True)
    os.chown(data / "postgres", NEAR_END[0], NEAR_END[0])  # as pgserver owns its data
    running = subprocess.Popen(
        ["sleep", "60"], user=NEAR_END[1], group=NEAR_END[1], extra_groups=[]
    )
    try:
        identities = Identities(work_dir, NEAR_END[:3], (data,))
        assert identities.take(first_run, {"worker-0": None}).leased == (NEAR_END[2],)
        asks = {"worker-0": Security(uid_gid_source="custom", run_as_uid=NEAR_END[1])}
        with pytest.raises(IsolationError, match="is in use by a process of this machine"):
            identities.take(first_run, asks)
        asks = {"worker-0": Security(uid_gid_source="custom", run_as_uid=NEAR_END[0])}
        with pytest.raises(IsolationError, match="belongs to the service or to a user"):
            identities.take(first_run, asks)
    finally:
        running.kill()
        running.wait()


@AS_ROOT
async def test_a_root_service_installed_in_a_private_home_runs_its_python_in_its_replicas(
    clean_pool: asyncpg.Pool, replica_work_dir: Path
) -> None:
    home = replica_work_dir / "root"  # as /root: no one else may pass
    home.mkdir(mode=0o700)
    (home / "key").write_text(SECRET)
    venv = home / "venv"
    made = await asyncio.create_subprocess_exec(sys.executable, "-m", "venv", "--without-pip", venv)
    assert await made.wait() == 0
    store = PostgresStreams(clean_pool, DOMAIN_CODEC)
    work_dir = replica_work_dir / "workloads"
    backend = LocalBackend(work_dir, reports_to(store), stop_grace_s=5, python_prefix=venv)
    command = f"sh -c 'python -c \"import sys; print(sys.prefix)\"; cat {home}/key; echo $?'"
    try:
        state = await finished(store, await start(store, backend, command), 60)
    finally:
        await backend.close()
    log = log_of(replica_work_dir, state)
    assert state.actual == "Completed", log
    prefix, refused, code = log.splitlines()
    assert Path(prefix).parent.parent == Path("/var/cache/trainplate/python")  # not the venv
    assert "Permission denied" in refused
    assert code == "1"
