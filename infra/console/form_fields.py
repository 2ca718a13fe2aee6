"""The new-template form's fields, in the guide's order and words, each named by the JSON pointer of
its value in Run:ai's creation body (`/spec/image`), so a refusal is shown at its field; the
form's own choices have pointers outside the body (`/scope`, `/configuration`, ...)."""

from collections.abc import Mapping
from typing import Final, Literal, get_args

import msgspec

from domain.specs import Capability
from infra.console.form_rows import Rows, rows_of
from infra.console.image_choices import CUSTOM, Options
from infra.console.labels import label_of

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
    # One of several fields of one pointer, each shown for other `when_values` (a storage
    # class's fields, as its configuration allows them): its id tells them apart.
    variant: str = ""

    @property
    def id(self) -> str:
        own = "f" + self.pointer.replace("/", "-")
        return f"{own}--{self.variant}" if self.variant else own


class Group(msgspec.Struct, frozen=True, kw_only=True):
    """Fields shown together under a legend (a section, or one item of a list)."""

    legend: str
    fields: tuple[Field, ...]
    intro: str = ""


def spec_field(pointer: str, kind: Kind = "text", **more: object) -> Field:
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


def numbered(name: str, i: int, count: int) -> str:
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
    """The environment's own settings, at `/spec` or `/master/spec`: image sources and registries as
    the tenant's settings and the scope allow (image_choices.py); `held`, an edited template's
    values, keeps a variable's source the form has no fields for."""
    variables = rows_of(rows, f"{at}/environmentVariables")
    return (
        *_image(at, images, registries),
        *_connections(at, rows),
        *_command(at),
        *(_variable(f"{at}/environmentVariables/{i}", i, held or {}) for i in range(variables)),
        Group(legend="Working directory and user", fields=(
            spec_field(f"{at}/workingDir", owner=ENV),
            spec_field(f"{at}/security/uidGidSource", "select", options=UID_SOURCES, owner=ENV),
            spec_field(f"{at}/security/runAsUid", "number", owner=ENV),
            spec_field(f"{at}/security/runAsGid", "number", owner=ENV),
            spec_field(f"{at}/security/supplementalGroups", owner=ENV, hint="Comma-separated"),
            spec_field(f"{at}/security/capabilities", "multi", options=CAPABILITIES, owner=ENV),
        )),
    )  # fmt: skip


def _variable(at: str, i: int, held: Mapping[str, object]) -> Group:
    kept = str(held.get(f"{at}/source") or "")
    sources = (*VARIABLE_SOURCES, *(((kept, KEPT_SOURCES[kept]),) if kept in KEPT_SOURCES else ()))
    source = f"{at}/source"
    return Group(legend=f"Environment variable {i + 1}", fields=(
        spec_field(f"{at}/name", owner=ENV),
        spec_field(source, "select", options=sources, owner=ENV),
        spec_field(f"{at}/value", owner=ENV, when=source, when_values=("",)),
        spec_field(f"{at}/secret/name", owner=ENV, when=source, when_values=("secret",)),
        spec_field(f"{at}/secret/key", owner=ENV, when=source, when_values=("secret",)),
        spec_field(f"{at}/configMap/name", owner=ENV, when=source, when_values=("configMap",)),
        spec_field(f"{at}/configMap/key", owner=ENV, when=source, when_values=("configMap",)),
    ))  # fmt: skip


def _image(at: str, sources: Options, registries: Options) -> tuple[Group, ...]:
    # No registry to pick from: no select that could only say "None".
    pick = (("", "None"), *registries)
    registry = (spec_field(f"{at}/imageRegistryId", "select", options=pick, owner=ENV),)
    return (
        Group(legend="Image", fields=(
            spec_field(f"{at}/imageSource", "select", options=sources, owner=ENV),
            *(registry if registries else ()),
            spec_field(f"{at}/image", owner=ENV, hint="A custom image, e.g. pytorch/pytorch:2.5"),
            spec_field(f"{at}/imagePullPolicy", "select", options=PULL_POLICIES, owner=ENV),
        )),
    )  # fmt: skip


def _connections(at: str, rows: Rows) -> tuple[Group, ...]:
    count = rows_of(rows, f"{at}/ports")
    urls = rows_of(rows, f"{at}/exposedUrls")
    return (
        *(
            Group(legend=numbered("Connection", i, count), fields=(
                spec_field(f"{at}/ports/{i}/serviceType", "select", options=CONNECTIONS, owner=ENV),
                spec_field(f"{at}/ports/{i}/container", "number", owner=ENV),
                spec_field(f"{at}/ports/{i}/external", "number", owner=ENV,
                           hint="Between 30000 and 32767"),
            ))
            for i in range(count)
        ),
        *(_exposed_url(f"{at}/exposedUrls/{i}", numbered("Connection by URL", i, urls))
          for i in range(urls)),
    )  # fmt: skip


def _exposed_url(at: str, legend: str) -> Group:
    """A tool reached by a URL, and who may access it (the guide's "Modify who can access the
    tool")."""
    kind = f"{at}/authorizationType"
    return Group(legend=legend, fields=(
        spec_field(f"{at}/container", "number", owner=ENV),
        spec_field(f"{at}/url", owner=ENV, hint="Empty: auto generate"),
        spec_field(kind, "select", options=ACCESS, owner=ENV),
        spec_field(f"{at}/authorizedUsers", "list", owner=ENV, when=kind,
                   when_values=("authorizedUsers",), hint="Emails or names, separated by commas"),
        spec_field(f"{at}/authorizedGroups", "list", owner=ENV, when=kind,
                   when_values=("authorizedGroups",),
                   hint="As in your identity provider, separated by commas"),
    ))  # fmt: skip


def _command(at: str) -> tuple[Group, ...]:
    return (
        Group(legend="Command and arguments", fields=(
            spec_field(f"{at}/command", owner=ENV, hint="Empty: the image's entry point"),
            spec_field(f"{at}/args", owner=ENV, hint="Separated by spaces, e.g. --arg1=val1"),
        )),
    )  # fmt: skip


def compute_fields(at: str, *, gpu_limits: bool, rows: Rows = NEW) -> tuple[Group, ...]:
    """The compute resource's own settings (GPU limits only where the tenant enables them)."""
    extended = rows_of(rows, f"{at}/compute/extendedResources")
    return (
        *_processors(at, gpu_limits=gpu_limits),
        Group(legend="Extended resources", fields=(
            spec_field(f"{at}/compute/largeShmRequest", "checkbox", owner=CMP),
            *(
                f
                for i in range(extended)
                for f in (
                    spec_field(f"{at}/compute/extendedResources/{i}/resource", owner=CMP),
                    spec_field(f"{at}/compute/extendedResources/{i}/quantity", owner=CMP),
                )
            ),
        )),
    )  # fmt: skip


def _processors(at: str, *, gpu_limits: bool) -> tuple[Group, ...]:
    limits = (
        (spec_field(f"{at}/compute/gpuPortionLimit", "number", owner=CMP),
         spec_field(f"{at}/compute/gpuMemoryLimit", owner=CMP))
        if gpu_limits else ()
    )  # fmt: skip
    return (
        Group(legend="GPU", fields=(
            spec_field(f"{at}/compute/gpuDevicesRequest", "number", owner=CMP),
            spec_field(f"{at}/compute/gpuRequestType", "select", options=GPU_TYPES, owner=CMP),
            spec_field(f"{at}/compute/gpuPortionRequest", "number", owner=CMP, hint="e.g. 0.5"),
            spec_field(f"{at}/compute/gpuMemoryRequest", owner=CMP, hint="e.g. 8G"),
            *limits,
        )),
        Group(legend="CPU", fields=(
            spec_field(f"{at}/compute/cpuCoreRequest", "number", owner=CMP),
            spec_field(f"{at}/compute/cpuCoreLimit", "number", owner=CMP, hint="Empty: Auto"),
            spec_field(f"{at}/compute/cpuMemoryRequest", owner=CMP, hint="e.g. 512M or 4G"),
            spec_field(f"{at}/compute/cpuMemoryLimit", owner=CMP, hint="Empty: Auto"),
        )),
    )  # fmt: skip


def scheduling_fields(at: str, rows: Rows = NEW, pools: Options | None = None) -> tuple[Group, ...]:
    """Node pools, tolerations and topology: editable even while a compute resource is linked.
    `pools`: the template's cluster's, to choose from (None: it has none, so any names)."""
    if pools:
        chosen = spec_field(f"{at}/nodePools", "multi", options=pools,
                            hint="The cluster's pools, in order of preference")  # fmt: skip
    else:
        free = "Comma-separated (the cluster has no pools registered)"
        chosen = spec_field(f"{at}/nodePools", "list", hint=free)
    return (
        Group(legend="Node pools", fields=(chosen,)),
        *(
            Group(legend=f"Toleration {i + 1}", fields=(
                spec_field(f"{at}/tolerations/{i}/key"),
                spec_field(f"{at}/tolerations/{i}/operator", "select", options=OPERATORS),
                spec_field(f"{at}/tolerations/{i}/value"),
                spec_field(f"{at}/tolerations/{i}/effect", "select", options=EFFECTS),
            ))
            for i in range(rows_of(rows, f"{at}/tolerations"))
        ),
        Group(legend="Topology", fields=(
            spec_field(f"{at}/podAffinity/type", "select", options=TOPOLOGY),
            spec_field(f"{at}/podAffinity/key", hint="e.g. topology.kubernetes.io/zone"),
        )),
    )  # fmt: skip


def general_fields(rows: Rows = NEW) -> tuple[Group, ...]:
    return (
        Group(legend="Scheduling and lifecycle", fields=(
            spec_field("/spec/preemptibility", "select", options=PREEMPTION),
            spec_field("/spec/priorityClass", "select", options=PRIORITIES),
            spec_field("/spec/terminationGracePeriodSeconds", "number", hint="0 s to 5 min (300)"),
            spec_field("/spec/backoffLimit", "number", hint="0 to 100"),
            spec_field("/spec/autoDeletionTimeAfterCompletionSeconds", "number", hint="0: at once"),
            spec_field("/spec/sshAuthMountPath", hint="MPI only"),
            spec_field("/spec/cleanPodPolicy", "select", options=CLEANUP),
        )),
        *metadata_fields("/spec", rows),
    )  # fmt: skip


def metadata_fields(at: str, rows: Rows = NEW) -> tuple[Group, ...]:
    """Annotations and labels, at `/spec` or `/master/spec`: an annotation and a label share a
    row; the longer of the two lists sets how many."""
    pairs = max(rows_of(rows, f"{at}/annotations"), rows_of(rows, f"{at}/labels"))
    return tuple(
        Group(legend=f"Annotation and label {i + 1}", fields=(
            spec_field(f"{at}/annotations/{i}/name"),
            spec_field(f"{at}/annotations/{i}/value"),
            spec_field(f"{at}/labels/{i}/name"),
            spec_field(f"{at}/labels/{i}/value"),
        ))
        for i in range(pairs)
    )  # fmt: skip
