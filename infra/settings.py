"""Settings: one frozen tree, parsed once from the environment at process start, passed down."""

from collections.abc import Mapping
from typing import Annotated, Any, Final, Literal
from urllib.parse import urlsplit, urlunsplit
from uuid import UUID

import msgspec

PREFIX = "TRAINPLATE_"
LAST_ID: Final = 2**32 - 2  # (uid_t) -1 is no id


def redacted(url: str) -> str:
    """A server's URL without its password: database and broker URLs carry one, and neither a
    log, a terminal nor a response may show it."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


class DatabaseSettings(msgspec.Struct, frozen=True, kw_only=True):
    url: str = "postgresql://postgres@127.0.0.1:5432/postgres"
    pool_min: int = 1
    pool_max: int = 10
    # Bounds on every connection, so one stuck statement or transaction cannot stall the readers,
    # which wait for the oldest open transaction before they read past it.
    statement_timeout_ms: int = 30_000
    lock_timeout_ms: int = 10_000
    idle_in_transaction_timeout_ms: int = 60_000
    command_timeout_s: float = 60.0


class NatsSettings(msgspec.Struct, frozen=True, kw_only=True):
    url: str = "nats://127.0.0.1:4222"
    stream: str = "TRAINPLATE"
    subject_prefix: str = "trainplate"
    # Must cover a relay restart: a republish inside the window is dropped by JetStream.
    duplicate_window_s: float = 600.0
    publish_timeout_s: float = 5.0
    # Servers of a NATS cluster that keep a copy of each stream trainplate makes: 1 on a single
    # server; 3 (or 5) on a cluster, which then keeps every stream while one (or two) are down.
    replicas: Annotated[int, msgspec.Meta(ge=1, le=5)] = 1


class RelaySettings(msgspec.Struct, frozen=True, kw_only=True):
    batch_size: int = 1000
    max_in_flight: int = 512
    # Fallback when no NOTIFY arrives, e.g. rows held back by another transaction still open.
    poll_interval_s: float = 0.1
    name: str = "jetstream"
    # Prometheus metrics of this process (events published, batch times); 0: not served.
    metrics_port: int = 0
    metrics_host: str = "127.0.0.1"


class ProjectorSettings(msgspec.Struct, frozen=True, kw_only=True):
    batch_size: int = 500
    poll_interval_s: float = 0.1
    # Prometheus metrics of this process (events applied, batch timings); 0: not served.
    metrics_port: int = 0
    metrics_host: str = "127.0.0.1"


KubeflowApi = Literal["trainer-v2", "v1"]
Queues = Literal["runai", "kai", "kueue"]
Gang = Literal["none", "coscheduling", "volcano"]


class SubmitterSettings(msgspec.Struct, frozen=True, kw_only=True):
    # local: OS processes on this machine; kubernetes: Kubeflow jobs; dry-run: render only.
    backend: Literal["local", "kubernetes", "dry-run"] = "local"
    consumer: str = "submitter"  # the durable JetStream consumer every submitter shares
    # The cluster this submitter serves (its backend, its Kubeflow API, its queues): empty
    # serves every cluster's workloads. A submitter of one cluster leaves the others' workloads
    # to theirs, on a durable consumer of its own (`<consumer>-<cluster id>`).
    cluster_id: UUID | None = None
    max_deliver: int = 5
    # Waits before redelivery 2, 3, ...; after the last delivery fails, the message goes to
    # the dead-letter subject and the workload is recorded as failed.
    backoff_s: str = "1,5,15,30"  # comma-separated seconds
    ack_wait_s: float = 60.0
    fetch_batch: int = 16  # messages per fetch: their workloads are read and written together
    dead_letter_subject: str = "trainplate-dead-letter.submitter"
    # local backend: where replica logs and MPI hostfiles go (default: <data_dir>/workloads)
    work_dir: str = ""
    stop_grace_s: float = 10.0
    # local backend run by root: the ids its workloads run as, each run its own, from
    # `local_id_first` on (docs/decisions/0001-local-workload-identities.md).
    local_id_first: Annotated[int, msgspec.Meta(ge=1, le=LAST_ID)] = 0x7000_0000
    local_id_count: Annotated[int, msgspec.Meta(ge=1)] = 65_536
    # local backend: the most replica processes it runs at once; a larger run fails, naming
    # both counts. 0: 32 per CPU, within the open-files limit (infra/backends/local_capacity.py).
    local_max_processes: int = 0
    # How often every unsettled workload is reconciled, whatever the queue says (also at start).
    sweep_interval_s: float = 300.0
    # kubernetes backend: a kubeconfig path; empty means in-cluster, else ~/.kube/config
    kubeconfig: str = ""
    # kubernetes backend with a cluster_id: how often the cluster's StorageClasses are listed
    # and registered as that cluster's (also at start).
    storage_class_interval_s: Annotated[float, msgspec.Meta(gt=0)] = 60.0
    # kubernetes and dry-run backends, per cluster: trainer-v2 (a TrainingRuntime per template
    # version, a TrainJob per workload; Trainer v2.2+ with JobSet) or v1 (Training Operator v1.7+,
    # MPI Operator v0.4+).
    kubeflow_api: KubeflowApi = "trainer-v2"
    # Whose queues a project's workloads join: runai (Run:ai's scheduler), kai (the KAI
    # scheduler) or kueue; the scheduler name defaults to the one they are scheduled by.
    queues: Queues = "runai"
    scheduler_name: str = ""
    # Trainer v2: the runtime's pod-group policy, for gang scheduling by the coscheduling
    # plugin or Volcano (KAI and Run:ai gang-schedule by themselves).
    gang_scheduling: Gang = "none"
    # Prometheus metrics of this process (backend calls, messages settled); 0: not served.
    metrics_port: int = 0
    metrics_host: str = "127.0.0.1"

    def __post_init__(self) -> None:
        if self.local_id_first + self.local_id_count - 1 > LAST_ID:
            raise ValueError(f"local_id_first + local_id_count - 1 is past {LAST_ID}")

    @property
    def local_ids(self) -> range:
        return range(self.local_id_first, self.local_id_first + self.local_id_count)

    @property
    def durable(self) -> str:
        """The durable consumer's name: one per cluster served, shared by its submitters."""
        return self.consumer if self.cluster_id is None else f"{self.consumer}-{self.cluster_id}"

    @property
    def backoff(self) -> list[float]:
        return [float(part) for part in self.backoff_s.split(",") if part.strip()]


class AuthSettings(msgspec.Struct, frozen=True, kw_only=True):
    # HS256 key for access tokens; every API process must share it. `trainplate dev` generates one
    # and keeps it in its data directory; elsewhere it must be set.
    signing_key: str = ""
    issuer: str = "trainplate"
    audience: str = "trainplate-api"
    token_ttl_s: int = 3600
    # An external identity provider, optional: its users' tokens (RS256 and the like) are
    # verified against the keys it publishes at `jwks_url`, with its issuer and audience.
    jwks_url: str = ""
    external_issuer: str = ""
    external_audience: str = ""
    external_algorithms: str = "RS256"  # comma-separated
    jwks_cache_s: int = 300
    # argon2id cost of application secrets (RFC 9106's second recommendation by default).
    hash_time_cost: int = 3
    hash_memory_kib: int = 65536
    # Failed logins allowed per client id, and per address, within the window (then 429).
    login_failures_per_client: int = 10
    login_failures_per_address: int = 50
    login_window_s: float = 60.0


class CredentialSettings(msgspec.Struct, frozen=True, kw_only=True):
    # Credential values are sealed at rest with a key derived from this one (32 bytes, URL-safe
    # base64); every API process must share it. `trainplate dev` generates one into its data
    # directory; elsewhere it must be set, or creating a credential answers 503.
    encryption_key: str = ""
    key_id: int = 1  # reported as the credential's keyId; bump it when the key is rotated


class RegistrySettings(msgspec.Struct, frozen=True, kw_only=True):
    # Listing a registry's repositories or tags (infra/oci/): how long one call to the registry
    # may wait (connect, each read), how long a whole listing may take, how many pages of how
    # many entries it follows, and how many bytes one answer may hold.
    timeout_s: float = 5.0
    deadline_s: float = 20.0
    page_size: int = 100
    max_pages: int = 100
    max_answer_bytes: int = 4 * 1024 * 1024
    # The service calls the URL an editor gives it, and the token realm the registry names:
    # never a loopback or link-local address (the service's own ports, a cloud's metadata
    # endpoint) unless this says so, as on a laptop whose registry runs beside the service.
    allow_loopback: bool = False


# How large an event and a request body may be (docs/decisions/0002-message-sizes.md): each
# event is one NATS message, and the broker's limit (max_payload, 1 MiB unless configured
# otherwise) must hold it and its headers with room to spare.
EVENT_BYTES: Final = 512 * 1024
BODY_BYTES: Final = 2 * 1024 * 1024


class SizeSettings(msgspec.Struct, frozen=True, kw_only=True):
    event_bytes: int = EVENT_BYTES  # one event, as stored and published (its JSON)
    body_bytes: int = BODY_BYTES  # one request body; larger ones are a 413 before they are read


class Settings(msgspec.Struct, frozen=True, kw_only=True):
    service_name: str = "trainplate"
    log_level: str = "INFO"
    # text: one line a record, for people; json: one JSON object a line, for a log pipeline.
    log_format: Literal["text", "json"] = "text"
    api_host: str = "127.0.0.1"
    api_port: int = 8080
    api_server: Literal["uvicorn", "granian"] = "uvicorn"  # which ASGI server runs the API
    # Proxies whose X-Forwarded-For/-Proto the API believes (addresses or CIDRs, comma-separated);
    # empty: none, so a caller on this machine cannot pose as another address to the login limits.
    api_trusted_proxies: str = ""
    data_dir: str = ".trainplate"
    # The tenant-wide admin application `trainplate dev` creates on first start; the secret is
    # generated (and printed once) unless given. Never log Settings: this may hold a secret.
    admin_app_id: str = "trainplate-admin"
    admin_app_secret: str = ""
    # How long a read sent with X-Trainplate-Min-Position waits for the read models.
    consistency_wait_s: float = 2.0
    database: DatabaseSettings = msgspec.field(default_factory=DatabaseSettings)
    nats: NatsSettings = msgspec.field(default_factory=NatsSettings)
    relay: RelaySettings = msgspec.field(default_factory=RelaySettings)
    projector: ProjectorSettings = msgspec.field(default_factory=ProjectorSettings)
    auth: AuthSettings = msgspec.field(default_factory=AuthSettings)
    credentials: CredentialSettings = msgspec.field(default_factory=CredentialSettings)
    submitter: SubmitterSettings = msgspec.field(default_factory=SubmitterSettings)
    registries: RegistrySettings = msgspec.field(default_factory=RegistrySettings)
    sizes: SizeSettings = msgspec.field(default_factory=SizeSettings)

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> "Settings":
        """`TRAINPLATE_API_PORT` sets `api_port`, `TRAINPLATE_RELAY__BATCH_SIZE` a nested one,
        and `TRAINPLATE_DATABASE_URL` stands for `..._DATABASE__URL` (NATS alike). Unknown names
        are ignored; bad values fail here, at start-up, naming the setting."""
        tree: dict[str, Any] = {}
        for key, value in env.items():
            if not key.startswith(PREFIX):
                continue
            name = key.removeprefix(PREFIX).lower()
            section, sep, field = name.partition("__")
            if not sep and name in _SHORT_FORMS:
                section, field = _SHORT_FORMS[name]
                sep = "__"
            if sep:
                if section in _SECTIONS:
                    tree.setdefault(section, {})[field] = value
            elif section in _TOP_LEVEL:
                tree[section] = value
        return msgspec.convert(tree, cls, strict=False)


_SHORT_FORMS = {"database_url": ("database", "url"), "nats_url": ("nats", "url")}
_SECTIONS = {
    "database", "nats", "relay", "projector", "auth", "credentials", "submitter", "registries",
    "sizes",
}  # fmt: skip
_TOP_LEVEL = {f.name for f in msgspec.structs.fields(Settings)} - _SECTIONS
