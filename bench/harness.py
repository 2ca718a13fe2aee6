"""What every benchmark shares: servers (embedded, or BENCH_DATABASE_URL / BENCH_NATS_URL), rounds
that interleave our code with its raw baseline, and a report of medians with min, max and ratio."""

import contextlib
import http.server
import os
import statistics
import tempfile
import threading
from collections.abc import Awaitable, Iterator
from pathlib import Path

import msgspec

from domain.events import Event
from infra.cli.embedded import EmbeddedNats, EmbeddedPostgres
from infra.serialization import EventCodec


class TrainingRunRecorded(Event, tag="bench.run_recorded.v1", frozen=True, kw_only=True):
    """A payload of about 200 bytes, the size the machine's baselines were measured with."""

    name: str
    framework: str
    workers: int
    image: str
    command: str
    labels: dict[str, str]


CODEC = EventCodec([TrainingRunRecorded])


def sample_event(index: int) -> TrainingRunRecorded:
    return TrainingRunRecorded(
        name=f"resnet-{index:08d}",
        framework="pytorch",
        workers=index % 64,
        image="nvcr.io/nvidia/pytorch:24.05-py3",
        command="torchrun --nnodes=$WORLD_SIZE train.py --epochs 90",
        labels={"team": "vision", "queue": "a100"},
    )


@contextlib.contextmanager
def _server(variable: str, embedded: type[EmbeddedPostgres | EmbeddedNats]) -> Iterator[str]:
    """The server named by `variable`, else an embedded one in a temporary directory."""
    if url := os.environ.get(variable):
        yield url
        return
    with tempfile.TemporaryDirectory() as tmp, embedded(Path(tmp) / "data") as server:
        yield server.url


def cpu_seconds(pid: int) -> float:
    """The CPU time (user and system) a process has used so far, from /proc (Linux)."""
    with open(f"/proc/{pid}/stat") as stat:
        # The command name (field 2) may hold spaces; utime and stime follow it as fields 14, 15.
        fields = stat.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def with_server_cpu(
    pid: int, load: Awaitable[tuple[float, list[float]]]
) -> tuple[float, list[float], float]:
    """A load's rate and latencies, and the CPU seconds the server `pid` spent per request while
    it ran: next to the rate, it says whether a ratio is the cost of a request or a wait."""
    before = cpu_seconds(pid)  # (the load starts only when awaited)
    rate, latencies = await load
    return rate, latencies, (cpu_seconds(pid) - before) / len(latencies)


@contextlib.contextmanager
def otlp_sink() -> Iterator[str]:
    """A stand-in OTLP/HTTP collector on this machine that takes every export and keeps
    nothing, so a traced run pays for making and sending its spans, not for a collector."""

    class Taken(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", 0)))
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Taken)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


def postgres() -> contextlib.AbstractContextManager[str]:
    return _server("BENCH_DATABASE_URL", EmbeddedPostgres)


def nats() -> contextlib.AbstractContextManager[str]:
    return _server("BENCH_NATS_URL", EmbeddedNats)


class Figure(msgspec.Struct):
    """One measured thing: events/s per round, ours next to the baseline of the same rounds."""

    name: str
    ours: list[float] = msgspec.field(default_factory=list)
    baseline: list[float] = msgspec.field(default_factory=list)
    target: float | None = 0.8  # None: no target, the ratio is reported for the record

    @property
    def ratio(self) -> float:
        return statistics.median(self.ours) / statistics.median(self.baseline)


def report(
    title: str, baseline_name: str, figures: list[Figure], ours_name: str = "trainplate"
) -> None:
    print(f"\n{title}  (events/s; median [min-max] of {len(figures[0].ours)} rounds)")
    print(f"{'':34} {ours_name:>24} {baseline_name:>24} {'ratio':>7} {'target':>7}")
    for f in figures:
        ours = f"{statistics.median(f.ours):,.0f} [{min(f.ours):,.0f}-{max(f.ours):,.0f}]"
        base = (
            f"{statistics.median(f.baseline):,.0f} [{min(f.baseline):,.0f}-{max(f.baseline):,.0f}]"
        )
        if f.target is None:
            target, verdict = "-", ""
        else:
            target, verdict = f">={f.target}", "ok" if f.ratio >= f.target else "MISSED"
        print(f"{f.name:34} {ours:>24} {base:>24} {f.ratio:>7.2f} {target:>7} {verdict}")
