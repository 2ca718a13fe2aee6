"""An environment's spec fields, every one of Run:ai's environment asset spec, in the guide's words
where it has them, with a row per variable and per connection (form_rows.py), each named by its
pointer in the asset's body."""

from collections.abc import Mapping
from typing import Any, Final

from infra.console.form_fields import (
    CAPABILITIES,
    PULL_POLICIES,
    UID_SOURCES,
    Field,
    Kind,
    numbered,
)
from infra.console.form_rows import Rows, rows_of
from infra.console.labels import label_of

VARIABLES: Final = "/spec/environmentVariables"
CONNECTIONS: Final = "/spec/connections"
# Where a variable's value comes from: the member of the asset's variable each names.
SOURCES: Final = (
    ("", "Custom value"),
    ("credential", "Credential"),
    ("configMap", "ConfigMap"),
    ("podFieldRef", "A pod field"),
)
# Whether a connection is a tool in the container or outside it (`isExternal`).
PLACES: Final = (("", "A tool in the container"), ("true", "An external tool"))
# A setting Kubernetes leaves to its default unless told: unset, yes or no.
UNSET_YES_NO: Final = (("", "Not set"), ("true", "Yes"), ("false", "No"))
CHOOSE: Final = (("", "Choose"),)
TOOLS: Final = ("jupyter-notebook", "pycharm", "visual-studio-code", "tensorboard", "rstudio",
                "mlflow", "custom", "matlab", "chatbot-ui")  # fmt: skip
INTERNAL_TOOLS: Final = (*CHOOSE, *((t, t) for t in TOOLS))
EXTERNAL_TOOLS: Final = (*CHOOSE, ("wandb", "Weights & Biases"), ("comet", "Comet"))
CONNECTION_TYPES: Final = (*CHOOSE, ("LoadBalancer", "Load balancer"), ("NodePort", "Node port"),
                           ("ExternalUrl", "External URL"),
                           ("ServingPort", "Serving port"))  # fmt: skip
PROTOCOLS: Final = (("", "Not set"), ("http", "HTTP"), ("grpc", "gRPC"))
SECCOMP: Final = (("", "Not set"), ("RuntimeDefault", "Runtime default"),
                  ("Unconfined", "Unconfined"), ("Localhost", "Localhost"))  # fmt: skip
SCHEMES: Final = (("", "Not set"), ("HTTP", "HTTP"), ("HTTPS", "HTTPS"))
NO_CREDENTIAL: Final = (("", "Choose a credential"),)

Group = tuple[str, tuple[Field, ...]]


def _f(
    pointer: str,
    label: str = "",
    kind: Kind = "text",
    *,
    options: tuple[tuple[str, str], ...] = (),
    hint: str = "",
    when: str = "",
    when_values: tuple[str, ...] = (),
) -> Field:
    """A field at `/spec<pointer>`, labelled as the template form labels it unless told."""
    at = f"/spec{pointer}"
    return Field(pointer=at, label=label or label_of(at), kind=kind, options=options, hint=hint,
                 when=when, when_values=when_values)  # fmt: skip


def spec_groups(
    rows: Rows,
    credentials: tuple[tuple[str, str], ...] = (),
    held: Mapping[str, object] | None = None,
) -> tuple[Group, ...]:
    """Every group of the spec's fields, with `rows` rows of variables and connections (form_rows
    `rows_in`); a variable's credential is chosen among `credentials` (id, name), and one that
    `held` (the environment's values) names that is not among them is kept, said so."""
    variables = rows_of(rows, VARIABLES)
    connections = rows_of(rows, CONNECTIONS)
    return (
        ("Image and command", (
            _f("/image", hint="e.g. pytorch/pytorch:2.5"),
            _f("/imagePullPolicy", kind="select", options=PULL_POLICIES),
            _f("/command", hint="Empty: the image's"),
            _f("/args", hint="e.g. --epochs=3"),
            _f("/workingDir"),
        )),
        *(_variable(i, variables, _offered(credentials, held or {}, i)) for i in range(variables)),
        *(_connection(i, connections) for i in range(connections)),
        ("User and security", (
            _f("/uidGidSource", "UID, GID and supplementary groups from", "select",
               options=UID_SOURCES),
            _f("/runAsUid", "UID", "number"),
            _f("/runAsGid", "GID", "number"),
            _f("/supplementalGroups", "Supplementary groups", hint="Comma-separated"),
            _f("/overrideUidGidInWorkspace", "Override the UID and GID in workspaces", "checkbox"),
            _f("/capabilities", "Linux capabilities", "multi", options=CAPABILITIES),
            _f("/allowPrivilegeEscalation", "Allow privilege escalation", "select",
               options=UNSET_YES_NO),
            _f("/seccompProfileType", "Seccomp profile", "select", options=SECCOMP),
            _f("/runAsNonRoot", "Run as a non-root user", "select", options=UNSET_YES_NO),
            _f("/readOnlyRootFilesystem", "Read-only root file system", "select",
               options=UNSET_YES_NO),
            _f("/hostIpc", "Use the host's IPC namespace", "select", options=UNSET_YES_NO),
            _f("/hostNetwork", "Use the host's network", "select", options=UNSET_YES_NO),
        )),
        ("Container runtime", (
            _f("/createHomeDir", "Create a home directory", "select", options=UNSET_YES_NO),
            _f("/stdin", "Keep stdin open", "select", options=UNSET_YES_NO),
            _f("/tty", "Allocate a TTY", "select", options=UNSET_YES_NO, hint="Needs stdin"),
        )),
        ("Readiness probe", _probe("/probes/readiness")),
    )  # fmt: skip


def _offered(
    credentials: tuple[tuple[str, str], ...], held: Mapping[str, object], i: int
) -> tuple[tuple[str, str], ...]:
    kept = str(held.get(f"{VARIABLES}/{i}/credential/assetId") or "")
    unseen = () if not kept or kept in dict(credentials) else ((kept, "Not visible to you: kept"),)
    return (*NO_CREDENTIAL, *credentials, *unseen)


def _variable(i: int, count: int, credentials: tuple[tuple[str, str], ...]) -> Group:
    at = f"/environmentVariables/{i}"
    source = f"/spec{at}/source"

    def by(member: str) -> dict[str, Any]:
        return {"when": source, "when_values": (member,)}

    return (numbered("Environment variable", i, count), (
        _f(f"{at}/name"),
        _f(f"{at}/source", kind="select", options=SOURCES),
        _f(f"{at}/value", **by("")),
        _f(f"{at}/credential/assetId", "Credential", "select", options=credentials,
           **by("credential")),
        _f(f"{at}/credential/key", "Credential key", hint="e.g. password",
           **by("credential")),
        _f(f"{at}/configMap/name", **by("configMap")),
        _f(f"{at}/configMap/key", **by("configMap")),
        _f(f"{at}/podFieldRef/path", "Pod field path", hint="e.g. metadata.name",
           **by("podFieldRef")),
        _f(f"{at}/exclude", "Exclude it (a policy's default) from workloads", "checkbox"),
    ))  # fmt: skip


def _connection(i: int, count: int) -> Group:
    at = f"/connections/{i}"
    place = f"/spec{at}/isExternal"
    kind = f"/spec{at}/internalToolInfo/connectionType"
    inside: dict[str, Any] = {"when": place, "when_values": ("",)}
    outside: dict[str, Any] = {"when": place, "when_values": ("true",)}
    tool = f"{at}/internalToolInfo"
    return (numbered("Connection", i, count), (
        _f(f"{at}/name", "Connection name"),
        _f(f"{at}/isExternal", "Tool", "select", options=PLACES),
        _f(f"{tool}/toolType", "Tool type", "select", options=INTERNAL_TOOLS, **inside),
        _f(f"{tool}/connectionType", "Connection type", "select", options=CONNECTION_TYPES,
           **inside),
        _f(f"{tool}/containerPort", "Container port", "number", **inside),
        _f(f"{tool}/nodePortInfo/isCustomPort", "Custom node port", "checkbox", when=kind,
           when_values=("NodePort",)),
        _f(f"{tool}/externalUrlInfo/isCustomUrl", "Custom URL", "checkbox", when=kind,
           when_values=("ExternalUrl",)),
        _f(f"{tool}/externalUrlInfo/externalUrl", "External URL of the tool", when=kind,
           when_values=("ExternalUrl",)),
        _f(f"{tool}/servingPortInfo/protocol", "Serving protocol", "select", options=PROTOCOLS,
           when=kind, when_values=("ServingPort",)),
        _f(f"{at}/externalToolInfo/toolType", "External tool type", "select",
           options=EXTERNAL_TOOLS, **outside),
        _f(f"{at}/externalToolInfo/externalUrl", "External tool URL", **outside),
    ))  # fmt: skip


def _probe(at: str) -> tuple[Field, ...]:
    get = f"{at}/handler/httpGet"
    return (
        _f(f"{at}/initialDelaySeconds", "Initial delay (seconds)", "number"),
        _f(f"{at}/periodSeconds", "Period (seconds)", "number"),
        _f(f"{at}/timeoutSeconds", "Timeout (seconds)", "number"),
        _f(f"{at}/successThreshold", "Success threshold", "number"),
        _f(f"{at}/failureThreshold", "Failure threshold", "number"),
        _f(f"{get}/path", "HTTP GET path", hint="e.g. /healthz"),
        _f(f"{get}/port", "HTTP GET port", "number"),
        _f(f"{get}/host", "HTTP GET host"),
        _f(f"{get}/scheme", "HTTP GET scheme", "select", options=SCHEMES),
    )
