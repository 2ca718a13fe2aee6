"""The new-template form's fields, in the guide's order and words. Each field is named by the
JSON pointer of its value in Run:ai's creation body (`/spec/image`), so the form becomes that
body field by field, and a refusal that names a pointer is shown next to the field that has it.
The few fields that are choices of the form itself (the scope, the configuration, link or not)
have pointers of their own outside the body (`/scope`, `/configuration`, ...)."""

from typing import Final, Literal, get_args

import msgspec

from domain.specs import Capability
from infra.http.console.labels import label_of

Kind = Literal["text", "number", "select", "checkbox", "multi", "radio"]
Owner = Literal["", "environment", "compute"]


class Field(msgspec.Struct, frozen=True, kw_only=True):
    pointer: str
    label: str
    kind: Kind = "text"
    options: tuple[tuple[str, str], ...] = ()  # (value, what a person reads)
    hint: str = ""
    owner: Owner = ""  # a linked asset of this kind sets the field

    @property
    def id(self) -> str:
        return "f" + self.pointer.replace("/", "-")


class Group(msgspec.Struct, frozen=True, kw_only=True):
    """Fields shown together under a legend (a section, or one item of a list)."""

    legend: str
    fields: tuple[Field, ...]
    intro: str = ""


def _f(pointer: str, kind: Kind = "text", **more: object) -> Field:
    label = str(more.pop("label", label_of(pointer)))
    return msgspec.convert({"pointer": pointer, "label": label, "kind": kind, **more}, Field)


PULL_POLICIES: Final = (("", "Default (if not present)"), ("IfNotPresent", "If not present"),
                        ("Always", "Always"), ("Never", "Never"))  # fmt: skip
CONNECTIONS: Final = (("", "None"), ("NodePort", "Auto generate, or the custom port below"),
                      ("LoadBalancer", "Load balancer"))  # fmt: skip
UID_SOURCES: Final = (("", "Not set"), ("fromTheImage", "From the image"),
                      ("fromIdpToken", "From the identity provider's token"),
                      ("custom", "Custom"))  # fmt: skip
GPU_TYPES: Final = (("", "Off (whole devices)"), ("portion", "% of device"),
                    ("memory", "GPU memory unit (MB/GB)"))  # fmt: skip
OPERATORS: Final = (("", "—"), ("Equal", "Equals"), ("Exists", "Exists"))
EFFECTS: Final = (("", "Any"), ("NoSchedule", "NoSchedule"),
                  ("PreferNoSchedule", "PreferNoSchedule"), ("NoExecute", "NoExecute"))  # fmt: skip
TOPOLOGY: Final = (("", "None"), ("Required", "Required"), ("Preferred", "Preferred"))
MEDIA: Final = (("", "Disk-backed storage"), ("Memory", "Memory-backed storage"))
PREEMPTION: Final = (("", "Default (preemptible)"), ("preemptible", "Preemptible"),
                     ("non-preemptible", "Non-preemptible"))  # fmt: skip
PRIORITIES: Final = (("", "Default (low)"), *((p, p) for p in ("very-low", "low", "medium-low",
                     "medium", "medium-high", "high", "very-high")))  # fmt: skip
CLEANUP: Final = (("", "Framework default"), ("None", "None"), ("Running", "Running pods"),
                  ("All", "All pods"))  # fmt: skip
CAPABILITIES: Final = tuple((c, c) for c in get_args(Capability))
ENV_ROWS: Final = 2
TOLERATION_ROWS: Final = 2
DATA_SOURCE_ROWS: Final = 2
KEY_VALUE_ROWS: Final = 2


def environment_fields(at: str) -> tuple[Group, ...]:
    """The environment's own settings, at `/spec` or `/master/spec`."""
    env: Owner = "environment"
    return (
        Group(legend="Image", fields=(
            _f(f"{at}/image", owner=env, hint="A custom image, e.g. pytorch/pytorch:2.5"),
            _f(f"{at}/imagePullPolicy", "select", options=PULL_POLICIES, owner=env),
        )),
        Group(legend="Connection", fields=(
            _f(f"{at}/ports/0/serviceType", "select", options=CONNECTIONS, owner=env),
            _f(f"{at}/ports/0/container", "number", owner=env),
            _f(f"{at}/ports/0/external", "number", owner=env, hint="Between 30000 and 32767"),
        )),
        Group(legend="Command and arguments", fields=(
            _f(f"{at}/command", owner=env, hint="Empty: the image's entry point"),
            _f(f"{at}/args", owner=env, hint="Separated by spaces, e.g. --arg1=val1"),
        )),
        *(
            Group(legend=f"Environment variable {i + 1}", fields=(
                _f(f"{at}/environmentVariables/{i}/name", owner=env),
                _f(f"{at}/environmentVariables/{i}/value", owner=env, hint="Custom value"),
            ))
            for i in range(ENV_ROWS)
        ),
        Group(legend="Working directory and user", fields=(
            _f(f"{at}/workingDir", owner=env),
            _f(f"{at}/security/uidGidSource", "select", options=UID_SOURCES, owner=env),
            _f(f"{at}/security/runAsUid", "number", owner=env),
            _f(f"{at}/security/runAsGid", "number", owner=env),
            _f(f"{at}/security/supplementalGroups", owner=env, hint="Comma-separated"),
            _f(f"{at}/security/capabilities", "multi", options=CAPABILITIES, owner=env),
        )),
    )  # fmt: skip


def compute_fields(at: str, *, gpu_limits: bool) -> tuple[Group, ...]:
    """The compute resource's own settings (GPU limits only where the tenant enables them)."""
    cmp: Owner = "compute"
    limits = (
        (_f(f"{at}/compute/gpuPortionLimit", "number", owner=cmp),
         _f(f"{at}/compute/gpuMemoryLimit", owner=cmp))
        if gpu_limits else ()
    )  # fmt: skip
    return (
        Group(legend="GPU", fields=(
            _f(f"{at}/compute/gpuDevicesRequest", "number", owner=cmp),
            _f(f"{at}/compute/gpuRequestType", "select", options=GPU_TYPES, owner=cmp),
            _f(f"{at}/compute/gpuPortionRequest", "number", owner=cmp, hint="e.g. 0.5"),
            _f(f"{at}/compute/gpuMemoryRequest", owner=cmp, hint="e.g. 8G"),
            *limits,
        )),
        Group(legend="CPU", fields=(
            _f(f"{at}/compute/cpuCoreRequest", "number", owner=cmp),
            _f(f"{at}/compute/cpuCoreLimit", "number", owner=cmp, hint="Empty: Auto"),
            _f(f"{at}/compute/cpuMemoryRequest", owner=cmp, hint="e.g. 512M or 4G"),
            _f(f"{at}/compute/cpuMemoryLimit", owner=cmp, hint="Empty: Auto"),
        )),
        Group(legend="Extended resources", fields=(
            _f(f"{at}/compute/largeShmRequest", "checkbox", owner=cmp),
            _f(f"{at}/compute/extendedResources/0/resource", owner=cmp),
            _f(f"{at}/compute/extendedResources/0/quantity", owner=cmp),
        )),
    )  # fmt: skip


def scheduling_fields(at: str) -> tuple[Group, ...]:
    """Tolerations and topology: editable even while a compute resource is linked."""
    return (
        *(
            Group(legend=f"Toleration {i + 1}", fields=(
                _f(f"{at}/tolerations/{i}/key"),
                _f(f"{at}/tolerations/{i}/operator", "select", options=OPERATORS),
                _f(f"{at}/tolerations/{i}/value"),
                _f(f"{at}/tolerations/{i}/effect", "select", options=EFFECTS),
            ))
            for i in range(TOLERATION_ROWS)
        ),
        Group(legend="Topology", fields=(
            _f(f"{at}/podAffinity/type", "select", options=TOPOLOGY),
            _f(f"{at}/podAffinity/key", hint="e.g. topology.kubernetes.io/zone"),
        )),
    )  # fmt: skip


def storage_fields(sources: tuple[tuple[str, str], ...]) -> tuple[Group, ...]:
    """Data sources to load (with their overrides), and a one-time EmptyDir."""
    return (
        *(
            Group(legend=f"Data source {i + 1}", fields=(
                _f(f"/assets/datasources/{i}/ref", "select", label="Data source",
                   options=(("", "None"), *sources)),
                _f(f"/assets/datasources/{i}/overrides/containerPath", label="Container path",
                   hint="Empty: the data source's own"),
                _f(f"/assets/datasources/{i}/overrides/subPath", label="ConfigMap sub-path",
                   hint="ConfigMap data sources only"),
            ))
            for i in range(DATA_SOURCE_ROWS)
        ),
        Group(legend="EmptyDir (one-time)", fields=(
            _f("/spec/storage/emptyDirVolume/0/sizeLimit", hint="e.g. 1G"),
            _f("/spec/storage/emptyDirVolume/0/path"),
            _f("/spec/storage/emptyDirVolume/0/medium", "select", options=MEDIA),
        )),
    )  # fmt: skip


def general_fields() -> tuple[Group, ...]:
    return (
        Group(legend="Scheduling and lifecycle", fields=(
            _f("/spec/preemptibility", "select", options=PREEMPTION),
            _f("/spec/priorityClass", "select", options=PRIORITIES),
            _f("/spec/terminationGracePeriodSeconds", "number", hint="0 s to 5 min (300)"),
            _f("/spec/backoffLimit", "number", hint="0 to 100"),
            _f("/spec/autoDeletionTimeAfterCompletionSeconds", "number", hint="0: at once"),
            _f("/spec/sshAuthMountPath", hint="MPI only"),
            _f("/spec/cleanPodPolicy", "select", options=CLEANUP),
        )),
        *(
            Group(legend=f"Annotation and label {i + 1}", fields=(
                _f(f"/spec/annotations/{i}/name"),
                _f(f"/spec/annotations/{i}/value"),
                _f(f"/spec/labels/{i}/name"),
                _f(f"/spec/labels/{i}/value"),
            ))
            for i in range(KEY_VALUE_ROWS)
        ),
    )  # fmt: skip


def master_fields() -> tuple[Group, ...]:
    """The master's own setup when it differs: the same environment and compute settings."""
    return (
        *environment_fields("/master/spec")[:3],
        *compute_fields("/master/spec", gpu_limits=False)[:2],
    )
