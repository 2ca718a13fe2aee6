"""The rules of a distributed template that relate fields (reference §17). Each refusal names
the offending field as a JSON pointer into the request."""

from typing import Final

import msgspec

from domain import name_rules
from domain.assets import InvalidAssetError, check_compute
from domain.mandatory_fields import pointer, unset
from domain.priorities import NAMES as PRIORITIES
from domain.specs import POSIX_IDS, SUPPLEMENTAL_GROUPS, ids_out_of_range
from domain.template_errors import InvalidTemplateError, camel
from domain.template_items import NODE_PORT_RANGE, check_items, check_one_time_storage
from domain.template_specs import (
    DistributedTemplateSpec,
    MasterSection,
    MasterTemplateSpec,
    ReplicaSpec,
    TemplateAssets,
)

__all__ = [
    "NODE_PORT_RANGE",
    "WORKLOAD_WIDE",
    "InvalidTemplateError",
    "camel",
    "check_complete",
    "check_master_copies",
    "check_one_time_storage",
    "check_template",
    "runnable_issue",
    "unset_values",
    "without_client_defaults",
]

GRACE_PERIOD_MAX: Final = 300
BACKOFF_LIMIT_MAX: Final = 100
MAX_REPLICAS_MAX: Final = 10_000
DESCRIPTION_MAX: Final = 250
FRAMEWORKS_NEEDING_A_MASTER: Final = ("MPI", "XGBoost")

# Fields a linked asset owns: while it is linked, the template may not set them itself.
ENVIRONMENT_FIELDS: Final = (
    "image",
    "image_source",
    "image_registry_id",
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
# Fields of the whole workload: the worker spec's value applies to the workers and the master
# (reference §5.9, §5.11). The master spec's copies are deprecated in Run:ai's schema.
WORKLOAD_WIDE: Final = (
    "backoff_limit",
    "termination_grace_period_seconds",
    "auto_deletion_time_after_completion_seconds",
    "priority_class",
    "preemptibility",
)


def check_template(
    *,
    name: str,
    description: str | None,
    spec: DistributedTemplateSpec,
    assets: TemplateAssets | None,
    master_spec_same_as_worker: bool,
    master: MasterSection | None,
) -> None:
    name_rules.check(name, "/meta/name", refused=InvalidTemplateError)
    if description is not None and not 1 <= len(description) <= DESCRIPTION_MAX:
        raise InvalidTemplateError("/meta/description", f"1 to {DESCRIPTION_MAX} characters")
    _check_specs(spec, assets, master_spec_same_as_worker, master)


def _check_specs(
    spec: DistributedTemplateSpec,
    assets: TemplateAssets | None,
    master_spec_same_as_worker: bool,
    master: MasterSection | None,
) -> None:
    _check_framework(spec)
    _check_master(spec, master_spec_same_as_worker, master)
    _check_lifecycle(spec)
    _check_links(assets, spec, "/spec")
    _check_loaded(assets, "/assets")
    _check_replica(spec, "/spec")
    if master is not None:
        _check_links(master.assets, master.spec, "/master/spec")
        _check_loaded(master.assets, "/master/assets")
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
    # The MPI operator mounts the SSH keys at this path in the container: it names a directory
    # there (the guide: "the path to the SSH key directory"), as /root/.ssh does by default.
    ssh = spec.ssh_auth_mount_path
    if ssh is not None and not ssh.startswith("/"):
        raise InvalidTemplateError(
            "/spec/sshAuthMountPath", "an absolute path in the container, e.g. /home/user/.ssh"
        )
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
    # The JAX operator has no master role: worker 0 coordinates. A master that is the worker's
    # copy runs as one more worker; a master of its own could never run.
    if spec.distributed_framework == "JAX" and not same_as_worker and master is not None:
        raise InvalidTemplateError(
            "/master", "JAX runs workers only: a master of its own cannot run"
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
    if spec.priority_class is not None and spec.priority_class not in PRIORITIES:
        raise InvalidTemplateError(
            "/spec/priorityClass", f"one of the priorities: {', '.join(PRIORITIES)}"
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


def _check_loaded(assets: TemplateAssets | None, at: str) -> None:
    """A sub-path override picks one key of a ConfigMap: other data sources have none."""
    for i, link in enumerate(assets.datasources or () if assets else ()):
        sub_path = link.overrides.sub_path if link.overrides else None
        if sub_path is not None and link.kind != "config-map":
            raise InvalidTemplateError(
                f"{at}/datasources/{i}/overrides/subPath", "only for a ConfigMap data source"
            )


def _check_replica(spec: ReplicaSpec, at: str) -> None:
    missing = unset(spec)
    if missing is not None:
        raise InvalidTemplateError(pointer(at, missing[0]), missing[1])
    if spec.compute is not None:
        try:
            check_compute(spec.compute, f"{at}/compute")
        except InvalidAssetError as exc:
            raise InvalidTemplateError(exc.field, str(exc).split(": ", 1)[-1]) from None
    if spec.tty and not spec.stdin:
        raise InvalidTemplateError(f"{at}/tty", "a TTY needs stdin: true")
    _check_image_source(spec, at)
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
        else:  # the guide: with Custom, "you'll need to manually enter the UID, GID ..."
            for field in ("run_as_uid", "run_as_gid"):
                value = getattr(security, field)
                if value is None:
                    raise InvalidTemplateError(
                        f"{at}/security/{camel(field)}", "required with uidGidSource: custom"
                    )
                if value not in POSIX_IDS:
                    raise InvalidTemplateError(
                        f"{at}/security/{camel(field)}", f"an id from 0 to {POSIX_IDS[-1]}"
                    )
        groups = security.supplemental_groups
        if groups is not None and not SUPPLEMENTAL_GROUPS.match(groups):
            raise InvalidTemplateError(
                f"{at}/security/supplementalGroups", "group ids separated by commas, e.g. 2,3,5"
            )
        if groups is not None and ids_out_of_range(groups):
            raise InvalidTemplateError(
                f"{at}/security/supplementalGroups", f"group ids from 0 to {POSIX_IDS[-1]}"
            )
    check_items(spec, at)


def _check_image_source(spec: ReplicaSpec, at: str) -> None:
    """An image picked from a private registry names the registry; no other source does."""
    from_registry = spec.image_source == "ngcPrivateRegistry"
    if from_registry and spec.image_registry_id is None:
        raise InvalidTemplateError(
            f"{at}/imageRegistryId", "required with imageSource ngcPrivateRegistry"
        )
    if not from_registry and spec.image_registry_id is not None:
        raise InvalidTemplateError(
            f"{at}/imageRegistryId", "only with imageSource ngcPrivateRegistry"
        )


def check_master_copies(master: MasterTemplateSpec | None, at: str) -> None:
    """A master spec may not set what belongs to the whole workload: the worker spec's value
    is what runs (refused rather than ignored, so a template never shows a value that does not
    apply)."""
    if master is None:
        return
    for field in WORKLOAD_WIDE:
        if getattr(master, field) is not None:
            raise InvalidTemplateError(
                f"{at}/{camel(field)}",
                "set for the whole workload in spec: it applies to the workers and the master",
            )


def unset_values(
    spec: DistributedTemplateSpec, master: MasterTemplateSpec | None, same_as_worker: bool
) -> list[str]:
    """The values a workload cannot run without, that are missing."""
    problems = []
    if spec.image is None:
        problems.append("mandatory image is not provided")
    if master is not None and not same_as_worker and master.image is None:
        problems.append("mandatory master image is not provided")
    if spec.num_workers is None:
        problems.append("numWorkers is not set")
    if spec.distributed_framework is None:
        problems.append("distributedFramework is not set")
    return problems


def check_complete(
    spec: DistributedTemplateSpec, master: MasterTemplateSpec | None, same_as_worker: bool
) -> None:
    """The rules complete specs (a template combined with its assets, or a submission's) are
    held to; InvalidTemplateError naming the field, as for a template's own body (but its
    name and description: a workload's are checked where they are given)."""
    _check_specs(
        spec,
        None,
        same_as_worker,
        MasterSection(spec=master) if master is not None and not same_as_worker else None,
    )


def runnable_issue(
    spec: DistributedTemplateSpec, master: MasterTemplateSpec | None, same_as_worker: bool
) -> str | None:
    """Why specs that are complete (combined) could not be submitted as they are, or None: the
    same rules and mandatory values a submission is held to (domain/submissions.py)."""
    try:
        check_complete(spec, master, same_as_worker)
    except InvalidTemplateError as error:
        return str(error)
    return "; ".join(unset_values(spec, master, same_as_worker)) or None


def without_client_defaults(spec: DistributedTemplateSpec) -> DistributedTemplateSpec:
    """Drop the MPI-only fields a client filled with their defaults for another framework."""
    if spec.distributed_framework == "MPI":
        return spec
    unset = {
        field: None for field, default in CLIENT_DEFAULTS.items() if getattr(spec, field) == default
    }
    return msgspec.structs.replace(spec, **unset) if unset else spec
