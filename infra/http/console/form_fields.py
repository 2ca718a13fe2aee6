"""The new-template form's fields, in the guide's order and words. Each field is named by the
JSON pointer of its value in Run:ai's creation body (`/spec/image`), so the form becomes that
body field by field, and a refusal that names a pointer is shown next to the field that has it.
The few fields that are choices of the form itself (the scope, the configuration, link or not)
have pointers of their own outside the body (`/scope`, `/configuration`, ...)."""

from collections.abc import Mapping
from typing import Final, Literal, get_args

import msgspec

from domain.specs import Capability
from infra.http.console.form_rows import Rows, rows_of
from infra.http.console.image_choices import CUSTOM, Options
from infra.http.console.labels import label_of

# "list": text holding a list, its items separated by commas
Kind = Literal["text", "number", "select", "checkbox", "multi", "radio", "list"]
Owner = Literal["", "environment", "compute"]


class Field(msgspec.Struct, frozen=True, kw_only=True):
    pointer: str
    label: str
    kind: Kind = "text"
    options: tuple[tuple[str, str], ...] = ()  # (value, what a person reads)
    hint: str = ""
    owner: Owner = ""  # a linked asset of this kind sets the field
    # Shown only while the select at `when` has one of `when_values` (a script hides it
    # otherwise; without scripts every field shows, and the select decides what is sent).
    when: str = ""
    when_values: tuple[str, ...] = ()

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
# Who may access a tool reached by a URL (the spec's authorizationType).
ACCESS: Final = (("", "Default (all authenticated users and service accounts)"),
                 ("authenticatedUsers", "All authenticated users and service accounts"),
                 ("authorizedUsers", "Specific user(s) and service account(s)"),
                 ("authorizedGroups", "Specific group(s)"))  # fmt: skip
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
# A new volume's access modes, each a member of the spec's claimInfo.accessModes.
ACCESS_MODES: Final = (("readWriteOnce", "Read-write by one node"),
                       ("readOnlyMany", "Read-only by many nodes"),
                       ("readWriteMany", "Read-write by many nodes"))  # fmt: skip
VOLUME_MODES: Final = (("", "Default (Filesystem)"), ("Filesystem", "Filesystem"),
                       ("Block", "Block"))  # fmt: skip
PERSISTENCY: Final = (("", "Persistent"), ("true", "Ephemeral"))
PREEMPTION: Final = (("", "Default (preemptible)"), ("preemptible", "Preemptible"),
                     ("non-preemptible", "Non-preemptible"))  # fmt: skip
PRIORITIES: Final = (("", "Default (low)"), *((p, p) for p in ("very-low", "low", "medium-low",
                     "medium", "medium-high", "high", "very-high")))  # fmt: skip
CLEANUP: Final = (("", "Framework default"), ("None", "None"), ("Running", "Running pods"),
                  ("All", "All pods"))  # fmt: skip
CAPABILITIES: Final = tuple((c, c) for c in get_args(Capability))
# Where a variable's value comes from (the guide: "select Custom to define a value manually, or
# choose an existing value from Shared secret or ConfigMap"); the member of the spec's variable
# each names. A source the form has no fields for is offered only to a row that holds it, kept.
VARIABLE_SOURCES: Final = (("", "Custom"), ("secret", "Shared secret"), ("configMap", "ConfigMap"))
KEPT_SOURCES: Final = {
    "userCredential": "My credentials: kept as it is",
    "podFieldRef": "A pod field: kept as it is",
}
ENV: Final[Owner] = "environment"
CMP: Final[Owner] = "compute"
NEW: Final[Rows] = {}  # the new-template form's rows (form_rows.py)


def _legend(name: str, i: int, count: int) -> str:
    """A list's row: numbered when the list has more than one."""
    return name if count == 1 else f"{name} {i + 1}"


def environment_fields(
    at: str,
    rows: Rows = NEW,
    *,
    images: Options = (CUSTOM,),
    registries: Options = (),
    held: Mapping[str, object] | None = None,
) -> tuple[Group, ...]:
    """The environment's own settings, at `/spec` or `/master/spec`: the image's sources and the
    registries to pick from are what the tenant's settings and the scope allow
    (image_choices.py); `held`, an edited template's values, keeps a variable's source that the
    form has no fields for."""
    variables = rows_of(rows, f"{at}/environmentVariables")
    return (
        *_image(at, images, registries),
        *_connections(at, rows),
        *_command(at),
        *(_variable(f"{at}/environmentVariables/{i}", i, held or {}) for i in range(variables)),
        Group(legend="Working directory and user", fields=(
            _f(f"{at}/workingDir", owner=ENV),
            _f(f"{at}/security/uidGidSource", "select", options=UID_SOURCES, owner=ENV),
            _f(f"{at}/security/runAsUid", "number", owner=ENV),
            _f(f"{at}/security/runAsGid", "number", owner=ENV),
            _f(f"{at}/security/supplementalGroups", owner=ENV, hint="Comma-separated"),
            _f(f"{at}/security/capabilities", "multi", options=CAPABILITIES, owner=ENV),
        )),
    )  # fmt: skip


def _variable(at: str, i: int, held: Mapping[str, object]) -> Group:
    kept = str(held.get(f"{at}/source") or "")
    sources = (*VARIABLE_SOURCES, *(((kept, KEPT_SOURCES[kept]),) if kept in KEPT_SOURCES else ()))
    source = f"{at}/source"
    return Group(legend=f"Environment variable {i + 1}", fields=(
        _f(f"{at}/name", owner=ENV),
        _f(source, "select", options=sources, owner=ENV),
        _f(f"{at}/value", owner=ENV, when=source, when_values=("",)),
        _f(f"{at}/secret/name", owner=ENV, when=source, when_values=("secret",)),
        _f(f"{at}/secret/key", owner=ENV, when=source, when_values=("secret",)),
        _f(f"{at}/configMap/name", owner=ENV, when=source, when_values=("configMap",)),
        _f(f"{at}/configMap/key", owner=ENV, when=source, when_values=("configMap",)),
    ))  # fmt: skip


def _image(at: str, sources: Options, registries: Options) -> tuple[Group, ...]:
    # No registry to pick from: no select that could only say "None".
    pick = (("", "None"), *registries)
    registry = (_f(f"{at}/imageRegistryId", "select", options=pick, owner=ENV),)
    return (
        Group(legend="Image", fields=(
            _f(f"{at}/imageSource", "select", options=sources, owner=ENV),
            *(registry if registries else ()),
            _f(f"{at}/image", owner=ENV, hint="A custom image, e.g. pytorch/pytorch:2.5"),
            _f(f"{at}/imagePullPolicy", "select", options=PULL_POLICIES, owner=ENV),
        )),
    )  # fmt: skip


def _connections(at: str, rows: Rows) -> tuple[Group, ...]:
    count = rows_of(rows, f"{at}/ports")
    urls = rows_of(rows, f"{at}/exposedUrls")
    return (
        *(
            Group(legend=_legend("Connection", i, count), fields=(
                _f(f"{at}/ports/{i}/serviceType", "select", options=CONNECTIONS, owner=ENV),
                _f(f"{at}/ports/{i}/container", "number", owner=ENV),
                _f(f"{at}/ports/{i}/external", "number", owner=ENV,
                   hint="Between 30000 and 32767"),
            ))
            for i in range(count)
        ),
        *(_exposed_url(f"{at}/exposedUrls/{i}", _legend("Connection by URL", i, urls))
          for i in range(urls)),
    )  # fmt: skip


def _exposed_url(at: str, legend: str) -> Group:
    """A tool reached by a URL, and who may access it (the guide's "Modify who can access the
    tool")."""
    kind = f"{at}/authorizationType"
    return Group(legend=legend, fields=(
        _f(f"{at}/container", "number", owner=ENV),
        _f(f"{at}/url", owner=ENV, hint="Empty: auto generate"),
        _f(kind, "select", options=ACCESS, owner=ENV),
        _f(f"{at}/authorizedUsers", "list", owner=ENV, when=kind,
           when_values=("authorizedUsers",), hint="Emails or names, separated by commas"),
        _f(f"{at}/authorizedGroups", "list", owner=ENV, when=kind,
           when_values=("authorizedGroups",),
           hint="As in your identity provider, separated by commas"),
    ))  # fmt: skip


def _command(at: str) -> tuple[Group, ...]:
    return (
        Group(legend="Command and arguments", fields=(
            _f(f"{at}/command", owner=ENV, hint="Empty: the image's entry point"),
            _f(f"{at}/args", owner=ENV, hint="Separated by spaces, e.g. --arg1=val1"),
        )),
    )  # fmt: skip


def compute_fields(at: str, *, gpu_limits: bool, rows: Rows = NEW) -> tuple[Group, ...]:
    """The compute resource's own settings (GPU limits only where the tenant enables them)."""
    extended = rows_of(rows, f"{at}/compute/extendedResources")
    return (
        *_processors(at, gpu_limits=gpu_limits),
        Group(legend="Extended resources", fields=(
            _f(f"{at}/compute/largeShmRequest", "checkbox", owner=CMP),
            *(
                f
                for i in range(extended)
                for f in (
                    _f(f"{at}/compute/extendedResources/{i}/resource", owner=CMP),
                    _f(f"{at}/compute/extendedResources/{i}/quantity", owner=CMP),
                )
            ),
        )),
    )  # fmt: skip


def _processors(at: str, *, gpu_limits: bool) -> tuple[Group, ...]:
    limits = (
        (_f(f"{at}/compute/gpuPortionLimit", "number", owner=CMP),
         _f(f"{at}/compute/gpuMemoryLimit", owner=CMP))
        if gpu_limits else ()
    )  # fmt: skip
    return (
        Group(legend="GPU", fields=(
            _f(f"{at}/compute/gpuDevicesRequest", "number", owner=CMP),
            _f(f"{at}/compute/gpuRequestType", "select", options=GPU_TYPES, owner=CMP),
            _f(f"{at}/compute/gpuPortionRequest", "number", owner=CMP, hint="e.g. 0.5"),
            _f(f"{at}/compute/gpuMemoryRequest", owner=CMP, hint="e.g. 8G"),
            *limits,
        )),
        Group(legend="CPU", fields=(
            _f(f"{at}/compute/cpuCoreRequest", "number", owner=CMP),
            _f(f"{at}/compute/cpuCoreLimit", "number", owner=CMP, hint="Empty: Auto"),
            _f(f"{at}/compute/cpuMemoryRequest", owner=CMP, hint="e.g. 512M or 4G"),
            _f(f"{at}/compute/cpuMemoryLimit", owner=CMP, hint="Empty: Auto"),
        )),
    )  # fmt: skip


def scheduling_fields(at: str, rows: Rows = NEW) -> tuple[Group, ...]:
    """Tolerations and topology: editable even while a compute resource is linked."""
    return (
        *(
            Group(legend=f"Toleration {i + 1}", fields=(
                _f(f"{at}/tolerations/{i}/key"),
                _f(f"{at}/tolerations/{i}/operator", "select", options=OPERATORS),
                _f(f"{at}/tolerations/{i}/value"),
                _f(f"{at}/tolerations/{i}/effect", "select", options=EFFECTS),
            ))
            for i in range(rows_of(rows, f"{at}/tolerations"))
        ),
        Group(legend="Topology", fields=(
            _f(f"{at}/podAffinity/type", "select", options=TOPOLOGY),
            _f(f"{at}/podAffinity/key", hint="e.g. topology.kubernetes.io/zone"),
        )),
    )  # fmt: skip


def storage_fields(sources: tuple[tuple[str, str], ...], rows: Rows = NEW) -> tuple[Group, ...]:
    """Data sources to load (with their overrides), and one-time EmptyDirs and new volumes."""
    empty_dirs = rows_of(rows, "/spec/storage/emptyDirVolume")
    pvc = "/spec/storage/pvc"
    volumes = rows_of(rows, pvc)
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
            for i in range(rows_of(rows, "/assets/datasources"))
        ),
        *(
            Group(legend=_legend("EmptyDir (one-time)", i, empty_dirs), fields=(
                _f(f"/spec/storage/emptyDirVolume/{i}/sizeLimit", hint="e.g. 1G"),
                _f(f"/spec/storage/emptyDirVolume/{i}/path"),
                _f(f"/spec/storage/emptyDirVolume/{i}/medium", "select", options=MEDIA),
            ))
            for i in range(empty_dirs)
        ),
        *(
            Group(legend=_legend("Volume (one-time)", i, volumes), fields=(
                _f(f"{at}/storageClass", hint="Empty: None"),
                _f(f"{at}/accessModes", "multi", options=ACCESS_MODES),
                _f(f"{at}/size", hint="e.g. 10Gi"),
                _f(f"{at}/volumeMode", "select", options=VOLUME_MODES),
                _f(f"{pvc}/{i}/path"),
                _f(f"{pvc}/{i}/ephemeral", "select", options=PERSISTENCY,
                   hint="Ephemeral: deleted whenever the workload stops"),
            ))
            for i in range(volumes)
            for at in (f"{pvc}/{i}/claimInfo",)
        ),
    )  # fmt: skip


def general_fields(rows: Rows = NEW) -> tuple[Group, ...]:
    # An annotation and a label share a row; the longer of the two lists sets how many.
    pairs = max(rows_of(rows, "/spec/annotations"), rows_of(rows, "/spec/labels"))
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
            for i in range(pairs)
        ),
    )  # fmt: skip


def master_fields(
    rows: Rows = NEW, *, images: Options = (CUSTOM,), registries: Options = ()
) -> tuple[Group, ...]:
    """The master's own setup when it differs: its image, connections and command, and its
    GPU and CPU."""
    at = "/master/spec"
    return (
        *_image(at, images, registries),
        *_connections(at, rows),
        *_command(at),
        *_processors(at, gpu_limits=False),
    )
