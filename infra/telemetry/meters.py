"""The Prometheus metric families of the API and of the relay and submitter processes (the
projector's: infra/followers/metrics.py). Labels name routes, methods, statuses, backends and
reasons: never an id, a name or anything a caller sent."""

from typing import Final

from prometheus_client import CollectorRegistry, Counter, Histogram

REQUEST_BUCKETS: Final = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
CALL_BUCKETS: Final = (0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0, 30.0)
METHODS: Final = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
UNMATCHED: Final = "unmatched"  # the route label of a request no route took


class ApiMetrics:
    """What an API process counts: its requests, and failed logins."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        self.requests = Counter(
            "trainplate_http_requests",
            "HTTP requests answered, by route template, method and status.",
            ["route", "method", "status"],
            registry=self.registry,
        )
        self.seconds = Histogram(
            "trainplate_http_request_duration_seconds",
            "Time from a request's arrival to the end of its answer, by route template.",
            ["route", "method"],
            registry=self.registry,
            buckets=REQUEST_BUCKETS,
        )
        self.login_failures = Counter(
            "trainplate_login_failures",
            "Logins refused: a wrong id or secret (bad_credentials), or too many (throttled).",
            ["reason"],
            registry=self.registry,
        )
        for reason in ("bad_credentials", "throttled"):
            self.login_failures.labels(reason)  # present from the start, at 0

    def observe(self, route: str, method: str, status: int, seconds: float) -> None:
        method = method if method in METHODS else "OTHER"
        self.requests.labels(route, method, str(status)).inc()
        self.seconds.labels(route, method).observe(seconds)


class RelayMetrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        self.published = Counter(
            "trainplate_relay_events_published",
            "Events published to JetStream and acknowledged.",
            registry=self.registry,
        )
        self.batch_seconds = Histogram(
            "trainplate_relay_batch_duration_seconds",
            "Time to publish one batch of events and have it acknowledged.",
            registry=self.registry,
            buckets=CALL_BUCKETS,
        )


class SubmitterMetrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        self.backend_seconds = Histogram(
            "trainplate_backend_call_duration_seconds",
            "Time a backend took to submit, stop or tell the status of a run.",
            ["backend", "call", "result"],
            registry=self.registry,
            buckets=CALL_BUCKETS,
        )
        self.messages = Counter(
            "trainplate_submitter_messages",
            "Workload messages settled: acked, retried, or dead-lettered.",
            ["outcome"],
            registry=self.registry,
        )
