"""The rules of a distributed template that relate fields (reference §17). Each refusal names
the offending field as a JSON pointer into the request."""

from collections.abc import Iterable
from typing import Final

import msgspec

from domain.assets import InvalidAssetError, check_compute
from domain.errors import DomainError
from domain.template_specs import (
    DistributedTemplateSpec,
    MasterSection,
    ReplicaSpec,
    Storage,
    TemplateAssets,
)

GRACE_PERIOD_MAX: Final = 300
BACKOFF_LIMIT_MAX: Final = 100
MAX_REPLICAS_MAX: Final = 10_000
DESCRIPTION_MAX: Final = 250
NODE_PORT_RANGE: Final = range(30000, 32768)
FRAMEWORKS_NEEDING_A_MASTER: Final = ("MPI", "XGBoost")

# Fields a linked asset owns: while it is linked, the template may not set them itself.
ENVIRONMENT_FIELDS: Final = (
    "image",
    "image_pull_policy",
    "command",
    "args",
    "working_dir",
    "create_home_dir",
    "probes",
    "stdin",
    "tty",
    "environment_variables",
    "security",
    "exposed_urls",
    "ports",
    "related_urls",
)
COMPUTE_FIELDS: Final = ("compute",)
MPI_ONLY: Final = ("slots_per_worker", "ssh_auth_mount_path", "mpi_launcher_creation_policy")
# The official Run:ai client fills these MPI fields with their defaults in every spec it sends;
# for another framework such a default means "unset", not a request for an MPI setting.
CLIENT_DEFAULTS: Final = {"slots_per_worker": 1, "ssh_auth_mount_path": "/root/.ssh"}
PYTORCH_ONLY: Final = ("min_replicas", "max_replicas")


class InvalidTemplateError(DomainError):
    slug = "invalid-template"

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field


def camel(name: str) -> str:
    first, *rest = name.split("_")
    return first + "".join(part.title() for part in rest)


def check_template(
    *,
    name: str,
    description: str | None,
    spec: DistributedTemplateSpec,
    assets: TemplateAssets | None,
    master_spec_same_as_worker: bool,
    master: MasterSection | None,
) -> None:
    if not name.strip():
        raise InvalidTemplateError("/meta/name", "must not be empty")
    if description is not None and not 1 <= len(description) <= DESCRIPTION_MAX:
        raise InvalidTemplateError("/meta/description", f"1 to {DESCRIPTION_MAX} characters")
    _check_framework(spec)
    _check_master(spec, master_spec_same_as_worker, master)
    _check_lifecycle(spec)
    _check_links(assets, spec, "/spec")
    _check_replica(spec, "/spec")
    if master is not None:
        _check_links(master.assets, master.spec, "/master/spec")
        if master.spec is not None:
            _check_replica(master.spec, "/master/spec")


def _check_framework(spec: DistributedTemplateSpec) -> None:
    framework = spec.distributed_framework
    if framework is None:
        raise InvalidTemplateError(
            "/spec/distributedFramework", "choose MPI, PyTorch, TF, XGBoost or JAX"
        )
    for fields, only in ((MPI_ONLY, "MPI"), (PYTORCH_ONLY, "PyTorch")):
        for field in fields:
            if getattr(spec, field) is not None and framework != only:
                raise InvalidTemplateError(f"/spec/{camel(field)}", f"only for {only}")
    low, high, workers = spec.min_replicas, spec.max_replicas, spec.num_workers
    if low is not None and (low < 1 or (workers is not None and low > workers)):
        raise InvalidTemplateError("/spec/minReplicas", "must be at least 1 and at most numWorkers")
    if high is not None:
        floor = max(x for x in (low, workers, 1) if x is not None)
        if not floor <= high <= MAX_REPLICAS_MAX:
            raise InvalidTemplateError(
                "/spec/maxReplicas",
                f"must be from minReplicas and numWorkers up to {MAX_REPLICAS_MAX}",
            )


def _check_master(
    spec: DistributedTemplateSpec, same_as_worker: bool, master: MasterSection | None
) -> None:
    if same_as_worker and master is not None:
        raise InvalidTemplateError(
            "/master", "not with masterSpecSameAsWorker: the master is the worker's copy"
        )
    workers_only = not same_as_worker and master is None
    if workers_only and spec.distributed_framework in FRAMEWORKS_NEEDING_A_MASTER:
        raise InvalidTemplateError(
            "/masterSpecSameAsWorker", f"{spec.distributed_framework} needs a master (or launcher)"
        )


def _check_lifecycle(spec: DistributedTemplateSpec) -> None:
    grace = spec.termination_grace_period_seconds
    if grace is not None and not 0 <= grace <= GRACE_PERIOD_MAX:
        raise InvalidTemplateError(
            "/spec/terminationGracePeriodSeconds", f"0 to {GRACE_PERIOD_MAX} seconds"
        )
    backoff = spec.backoff_limit
    if backoff is not None and not 0 <= backoff <= BACKOFF_LIMIT_MAX:
        raise InvalidTemplateError("/spec/backoffLimit", f"0 to {BACKOFF_LIMIT_MAX}")
    deletion = spec.auto_deletion_time_after_completion_seconds
    if deletion is not None and deletion < 0:
        raise InvalidTemplateError(
            "/spec/autoDeletionTimeAfterCompletionSeconds", "must not be negative"
        )


def _check_links(assets: TemplateAssets | None, spec: ReplicaSpec | None, at: str) -> None:
    """While an asset is linked, the fields it owns are its alone."""
    if assets is None or spec is None:
        return
    owned = (ENVIRONMENT_FIELDS if assets.environment else ()) + (
        COMPUTE_FIELDS if assets.compute else ()
    )
    for field in owned:
        if getattr(spec, field) is not None:
            owner = "environment" if field in ENVIRONMENT_FIELDS else "compute resource"
            raise InvalidTemplateError(
                f"{at}/{camel(field)}", f"set by the linked {owner}; unlink it to change this"
            )


def _check_replica(spec: ReplicaSpec, at: str) -> None:
    if spec.compute is not None:
        try:
            check_compute(spec.compute, f"{at}/compute")
        except InvalidAssetError as exc:
            raise InvalidTemplateError(exc.field, str(exc).split(": ", 1)[-1]) from None
    if spec.tty and not spec.stdin:
        raise InvalidTemplateError(f"{at}/tty", "a TTY needs stdin: true")
    security = spec.security
    if security is not None:
        if security.seccomp_profile_type == "Localhost":
            raise InvalidTemplateError(
                f"{at}/security/seccompProfileType", "Localhost profiles are not supported"
            )
        if security.uid_gid_source != "custom":
            for field in ("run_as_uid", "run_as_gid", "supplemental_groups"):
                if getattr(security, field) is not None:
                    raise InvalidTemplateError(
                        f"{at}/security/{camel(field)}", "needs uidGidSource: custom"
                    )
    _check_variables(spec, at)
    _check_tolerations(spec, at)
    _check_network(spec, at)
    if spec.storage is not None:
        _check_storage(spec.storage, f"{at}/storage")


def _check_variables(spec: ReplicaSpec, at: str) -> None:
    seen: set[str] = set()
    for i, v in enumerate(spec.environment_variables or ()):
        sources = [v.value, v.secret, v.config_map, v.pod_field_ref, v.user_credential]
        if sum(s is not None for s in sources) != 1 and not v.exclude:
            raise InvalidTemplateError(
                f"{at}/environmentVariables/{i}",
                "give exactly one of value, secret, configMap, podFieldRef and userCredential",
            )
        if v.name in seen:
            raise InvalidTemplateError(
                f"{at}/environmentVariables/{i}/name", f"{v.name!r} is set twice"
            )
        seen.add(v.name)


def _check_tolerations(spec: ReplicaSpec, at: str) -> None:
    for i, t in enumerate(spec.tolerations or ()):
        where = f"{at}/tolerations/{i}"
        if t.seconds is not None and t.effect != "NoExecute":
            raise InvalidTemplateError(f"{where}/seconds", "only with effect NoExecute")
        if t.operator == "Exists" and t.value:
            raise InvalidTemplateError(f"{where}/value", "operator Exists takes no value")
        if t.operator == "Equal" and not t.key:
            raise InvalidTemplateError(f"{where}/key", "operator Equal needs a key")


def _check_network(spec: ReplicaSpec, at: str) -> None:
    for i, port in enumerate(spec.ports or ()):
        if port.external is not None and port.external not in NODE_PORT_RANGE:
            raise InvalidTemplateError(
                f"{at}/ports/{i}/external", "a custom node port is 30000 to 32767"
            )
    for i, url in enumerate(spec.exposed_urls or ()):
        if url.authorized_users and url.authorized_groups:
            raise InvalidTemplateError(
                f"{at}/exposedUrls/{i}/authorizedGroups", "users or groups, not both"
            )


def _required(items: Iterable[object] | None, at: str, *fields: str) -> None:
    for i, item in enumerate(items or ()):
        if getattr(item, "exclude", None):
            continue
        for field in fields:
            if getattr(item, field) is None:
                raise InvalidTemplateError(f"{at}/{i}/{camel(field)}", "required")


def _check_storage(storage: Storage, at: str) -> None:
    _required(storage.nfs, f"{at}/nfs", "server", "path", "mount_path")
    _required(storage.host_path, f"{at}/hostPath", "path", "mount_path")
    _required(storage.s3, f"{at}/s3", "bucket", "path")
    _required(storage.git, f"{at}/git", "repository", "path")
    _required(storage.config_map_volume, f"{at}/configMapVolume", "config_map", "mount_path")
    _required(storage.secret_volume, f"{at}/secretVolume", "secret", "mount_path")
    _required(storage.data_volume, f"{at}/dataVolume", "id", "mount_path")
    _required(storage.empty_dir_volume, f"{at}/emptyDirVolume", "path")
    _required(storage.pvc, f"{at}/pvc", "path")
    for i, pvc in enumerate(storage.pvc or ()):
        if not pvc.existing_pvc and (pvc.claim_info is None or pvc.claim_info.size is None):
            raise InvalidTemplateError(f"{at}/pvc/{i}/claimInfo/size", "a new PVC needs a size")
        if pvc.existing_pvc and pvc.claim_name is None:
            raise InvalidTemplateError(f"{at}/pvc/{i}/claimName", "an existing PVC is named")
    propagation = {h.mount_propagation or "None" for h in storage.host_path or ()}
    if len(propagation) > 1:
        raise InvalidTemplateError(
            f"{at}/hostPath", "every host path has the same mountPropagation"
        )


def without_client_defaults(spec: DistributedTemplateSpec) -> DistributedTemplateSpec:
    """Drop the MPI-only fields a client filled with their defaults for another framework."""
    if spec.distributed_framework == "MPI":
        return spec
    unset = {
        field: None for field, default in CLIENT_DEFAULTS.items() if getattr(spec, field) == default
    }
    return msgspec.structs.replace(spec, **unset) if unset else spec
