"""An edit through the console is a PATCH: the form's fields as filled in, each one it left
empty cleared (a list whole), and whatever the form does not show left alone."""

import asyncio
from datetime import UTC, datetime
from typing import Any, cast
from uuid import UUID, uuid4

import msgspec
import pytest

from domain.combined import credential_secret_name
from domain.specs import ConfigMapRef, CredentialRef, EnvironmentSpec, EnvironmentVariable, NfsSpec
from domain.templates import Template, TemplateBody
from domain.tenant_settings import TenantSettings
from domain.values import AssetMeta, TemplateMeta
from infra.console import form_state
from infra.console.form_document import build
from infra.console.form_fields import Field
from infra.console.form_rows import rows_in
from infra.console.form_state import Form, all_fields, choices_for, load_into, sections_of
from infra.console.template_edit import _patch, built_from, values_of
from infra.http.template_schemas import DistributedTemplate
from projections.asset_catalogue import AssetRow
from services.template_patch import apply
from tests.unit.test_console_form_document import FIELDS


def test_the_patch_sends_what_is_filled_in_and_clears_what_the_form_left_empty() -> None:
    values = {
        "/scope": "project:7",
        "/meta/name": "ddp",
        "/spec/image": "python:3.12",
        "/spec/compute/cpuCoreRequest": "2",
        "/spec/tolerations/1/key": "example.com/dedicated",
        "/spec/tolerations/1/operator": "Exists",
    }
    patch = _patch(FIELDS, build(FIELDS, values), different_master=False)

    assert patch["meta"] == {"name": "ddp"}
    assert patch["spec"]["image"] == "python:3.12"
    assert patch["spec"]["compute"]["cpuCoreRequest"] == 2  # read from the form's text
    assert list(patch["spec"]["tolerations"]) == [
        {"key": "example.com/dedicated", "operator": "Exists"}
    ]
    cleared = patch["fieldsToClear"]
    assert "meta.description" in cleared
    assert "spec.backoffLimit" in cleared
    assert "spec.compute.cpuMemoryRequest" in cleared
    assert "spec.environmentVariables" in cleared  # a list the form left empty, whole
    assert "assets.datasources" in cleared
    assert "spec.image" not in cleared
    assert "spec.tolerations" not in cleared
    assert "spec.compute.cpuCoreRequest" not in cleared
    assert "master" in cleared  # the master inherits the workers' setup
    assert not [p for p in cleared if p.startswith("master.")]
    assert not [p for p in cleared if p.startswith(("spec.slotsPerWorker", "spec.storage.nfs"))]
    assert "spec.storage.pvc" in cleared  # a one-time volume has rows: none filled, none kept


def test_a_master_of_its_own_is_sent_and_its_empty_fields_cleared() -> None:
    values = {
        "/meta/name": "ddp",
        "/differentMaster": "true",
        "/master/spec/compute/cpuCoreRequest": "1",
    }
    patch = _patch(FIELDS, build(FIELDS, values), different_master=True)

    assert patch["masterSpecSameAsWorker"] is False
    assert patch["master"]["spec"]["compute"]["cpuCoreRequest"] == 1
    assert "master" not in patch["fieldsToClear"]
    assert "master.spec.image" in patch["fieldsToClear"]


def test_a_number_that_is_not_one_is_refused_naming_its_field() -> None:
    values = {"/meta/name": "ddp", "/spec/compute/cpuCoreRequest": "two"}
    with pytest.raises(msgspec.ValidationError, match=r"\$\.spec\.compute\.cpuCoreRequest"):
        _patch(FIELDS, build(FIELDS, values), different_master=False)


DATA = ("3fa85f64-5717-4562-b3fc-2c963f66afa6", "5c0b6a2e-1f0e-4a57-9d1e-8a4c3b2d1e0f")
SOURCES = tuple((f"nfs|{d}", f"data {i} (nfs)") for i, d in enumerate(DATA))
# More items in every list than the new-template form has rows for, and members no row shows
# (a toleration's seconds, a variable's description or secret, a port's tool, a volume's name).
BODY: dict[str, Any] = {
    "spec": {
        "distributedFramework": "PyTorch",
        "numWorkers": 2,
        "image": "pytorch/pytorch:2.5",
        "tolerations": [
            {"key": f"example.com/t{i}", "operator": "Exists", "effect": "NoSchedule"}
            for i in range(3)
        ]
        + [{"key": "example.com/t3", "operator": "Equal", "value": "a", "seconds": 30}],
        "environmentVariables": [
            {"name": "MODE", "value": "train"},
            {"name": "SEED", "value": "7", "description": "the run's seed"},
            {"name": "TOKEN", "secret": {"name": "creds", "key": "token"}},
        ],
        "ports": [
            {"container": 8888, "serviceType": "NodePort", "toolType": "jupyter"},
            {"container": 6006, "serviceType": "LoadBalancer", "name": "board"},
        ],
        "compute": {
            "cpuCoreRequest": 2.0,
            "extendedResources": [
                {"resource": "hugepages-2Mi", "quantity": "1Gi"},
                {"resource": "example.com/fpga", "quantity": "1"},
            ],
        },
        "storage": {
            "emptyDirVolume": [
                {"name": "scratch", "path": "/scratch", "sizeLimit": "1G"},
                {"path": "/cache", "medium": "Memory"},
            ],
            "hostPath": [{"name": "host", "path": "/data", "mountPath": "/mnt/data"}],
        },
        "annotations": [{"name": f"a{i}", "value": str(i)} for i in range(3)],
        "labels": [{"name": "team", "value": "vision"}],
        "nodePools": ["a100", "h100"],
    },
    "assets": {
        "datasources": [
            {"id": DATA[0], "kind": "nfs", "overrides": {"containerPath": "/mnt/a"}},
            {"id": DATA[1], "kind": "nfs"},
            {"id": DATA[0], "kind": "nfs", "overrides": {"containerPath": "/mnt/b"}},
        ]
    },
    "masterSpecSameAsWorker": False,
    "master": {
        "spec": {
            "image": "python:3.12",
            "ports": [{"container": 29500}, {"container": 29501, "name": "second"}],
            "environmentVariables": [{"name": f"M{i}", "value": str(i)} for i in range(3)],
            "tolerations": [{"key": f"example.com/m{i}", "operator": "Exists"} for i in range(3)],
        }
    },
}


def _wire(body: dict[str, Any]) -> DistributedTemplate:
    meta = {
        "id": str(uuid4()),
        "name": "ddp",
        "description": None,
        "workloadType": "distributed",
        "scopeType": "project",
        "scopeId": "7",
        "clusterId": None,
        "departmentId": None,
        "projectId": 7,
        "createdBy": "someone",
        "createdAt": "2026-01-01T00:00:00Z",
        "updatedBy": None,
        "updatedAt": None,
    }
    combined = {"runnable": {"isRunnable": True}, "combinedSpec": body["spec"]}
    return msgspec.convert({"meta": meta, **body, **combined}, DistributedTemplate)


def _sent(fields: list[Field], values: dict[str, Any]) -> dict[str, Any]:
    """What a browser sends for the form as rendered and left as it is: every text input and
    select by its name, a blank row's empty."""
    sent = {
        f.pointer: values.get(f.pointer, "") for f in fields if f.kind not in ("multi", "checkbox")
    }
    kept = ("/scope", "/spec/distributedFramework", "/configuration", "/differentMaster")
    return {
        **sent,
        **{k: values[k] for k in kept if k in values},
        "/meta/name": values["/meta/name"],
    }


def test_an_edit_saved_unchanged_keeps_every_list_item_and_what_its_row_does_not_show() -> None:
    wire = _wire(BODY)
    values = values_of(wire)
    rendered = all_fields(sections_of(SOURCES, False, rows_in(values)))
    shown = {f.pointer for f in rendered}
    # A row for every item, then the blank rows the new-template form has for adding.
    assert "/spec/tolerations/5/key" in shown
    assert "/spec/tolerations/6/key" not in shown
    assert "/spec/environmentVariables/4/name" in shown
    assert "/master/spec/ports/2/container" in shown
    assert "/assets/datasources/4/ref" in shown

    sent = _sent(rendered, values)
    fields = all_fields(sections_of(SOURCES, False, rows_in(sent)))  # the save's, from the form
    patch = _patch(fields, built_from(fields, sent, wire), different_master=True)
    current = Template(
        id=uuid4(),
        meta=TemplateMeta(name="ddp", scope="project", project_id=7),
        body=msgspec.convert(BODY, TemplateBody),
    )
    _, _, saved = apply(current, patch)

    assert msgspec.to_builtins(saved) == msgspec.to_builtins(current.body)


def _loaded(*variables: EnvironmentVariable) -> list[dict[str, Any]]:
    """The variables of a template that loads, without linking, an environment that has
    these: its form's values, through the form's fields, into the body."""
    environment = AssetRow(
        asset_id=uuid4(),
        kind="environment",
        meta=AssetMeta(name="env", scope="tenant"),
        spec=EnvironmentSpec(image="python:3.12", environment_variables=variables),
        created_at=datetime.now(UTC),
        created_by="someone",
        updated_at=datetime.now(UTC),
        updated_by="someone",
        version=1,
    )
    rows = {str(environment.asset_id): environment}
    choices: dict[str, Any] = {"rows": rows, "sources": (), "gpu_limits": False, "sections": {}}
    values = {"/assets/environment": str(environment.asset_id), "/environmentUse": "copy"}
    form = Form(step=2, values=dict(values))

    load_into(form, "environment", choices)

    fields = all_fields(choices["sections"])
    assert f"/spec/environmentVariables/{len(variables) + 1}/name" in {f.pointer for f in fields}
    spec = built_from(fields, form.values, _wire({"spec": {}})).body["spec"]
    loaded: list[dict[str, Any]] = spec["environmentVariables"]
    return loaded


def test_an_environment_loaded_without_linking_gets_a_row_for_each_of_its_variables() -> None:
    variables = _loaded(*(EnvironmentVariable(name=f"V{i}", value=str(i)) for i in range(3)))
    assert [v["name"] for v in variables] == ["V0", "V1", "V2"]


def test_a_loaded_variables_source_is_its_rows_choice() -> None:
    credential = uuid4()
    variables = _loaded(
        EnvironmentVariable(name="TOKEN", credential=CredentialRef(asset_id=credential, key="k")),
        EnvironmentVariable(name="MODE", config_map=ConfigMapRef(name="cfg", key="mode")),
    )
    assert variables == [
        {"name": "TOKEN", "secret": {"name": credential_secret_name(credential), "key": "k"}},
        {"name": "MODE", "configMap": {"name": "cfg", "key": "mode"}},
    ]


UNSEEN = "9d7c2b1a-4e3f-4a5b-8c6d-7e8f9a0b1c2d"  # a data source the editor cannot see


def _as_a_browser_sends(fields: list[Field], values: dict[str, Any]) -> dict[str, Any]:
    """`_sent`, but a select whose value has no option sends its first option, as a browser
    does when none is selected."""
    sent = _sent(fields, values)
    for field in fields:
        options = [value for value, _ in field.options]
        if field.kind == "select" and options and sent.get(field.pointer) not in options:
            sent[field.pointer] = options[0]
    return sent


def test_saving_keeps_a_data_source_the_editor_cannot_see(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The data sources the form offers are those the editor sees; one the template loads that
    is not among them has a choice of its own, named as not visible, so saving keeps it."""
    body = {
        "spec": {"distributedFramework": "PyTorch", "numWorkers": 2, "image": "python:3.12"},
        "assets": {
            "datasources": [
                {"id": DATA[0], "kind": "nfs"},
                {"id": UNSEEN, "kind": "s3", "overrides": {"containerPath": "/mnt/s3"}},
            ]
        },
    }

    async def seen(*_: object) -> list[AssetRow]:
        return [
            AssetRow(
                asset_id=UUID(DATA[0]),
                kind="nfs",
                meta=AssetMeta(name="data 0", scope="tenant"),
                spec=NfsSpec(server="nfs.example.com", path="/a", mount_path="/mnt/a"),
                created_at=datetime.now(UTC),
                created_by="someone",
                updated_at=datetime.now(UTC),
                updated_by="someone",
                version=1,
            )
        ]

    async def settings(*_: object) -> TenantSettings:
        return TenantSettings()

    async def scopes(*_: object) -> list[Any]:
        return []

    monkeypatch.setattr(form_state, "loadable", seen)
    monkeypatch.setattr(form_state, "switches", settings)
    monkeypatch.setattr(form_state, "visible_scopes", scopes)
    monkeypatch.setattr(form_state, "usable_registries", lambda *_: _none())
    monkeypatch.setattr(form_state, "pane_items", lambda *_: _no_pane())
    wire = _wire(body)
    values = values_of(wire)

    async def round_trip() -> dict[str, Any]:
        choices = await choices_for(cast(Any, None), cast(Any, None), values, values)
        rendered = all_fields(choices["sections"])
        select = next(f for f in rendered if f.pointer == "/assets/datasources/1/ref")
        assert dict(select.options)[f"s3|{UNSEEN}"] == "Not visible to you (s3): kept as it is"
        sent = _as_a_browser_sends(rendered, values)
        choices = await choices_for(cast(Any, None), cast(Any, None), sent, values)
        fields = all_fields(choices["sections"])
        return _patch(fields, built_from(fields, sent, wire), different_master=False)

    patch = asyncio.run(round_trip())
    current = Template(
        id=uuid4(),
        meta=TemplateMeta(name="ddp", scope="project", project_id=7),
        body=msgspec.convert(body, TemplateBody),
    )
    _, _, saved = apply(current, patch)

    assert saved.assets is not None
    assert [(str(d.id), d.kind) for d in saved.assets.datasources or ()] == [
        (DATA[0], "nfs"),
        (UNSEEN, "s3"),
    ]
    kept = (saved.assets.datasources or ())[1]
    assert kept.overrides is not None
    assert kept.overrides.container_path == "/mnt/s3"


async def _none() -> tuple[tuple[str, str], ...]:
    return ()


async def _no_pane() -> dict[str, tuple[object, ...]]:
    return {"environment": (), "compute": ()}


REGISTRY = "6b1f0c2d-3e4a-4b5c-9d6e-7f8091a2b3c4"  # one the form offers no option for


def test_saving_keeps_an_image_source_the_form_does_not_offer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The NGC catalog while its setting is off, and the NGC private registry with a registry
    the form does not list: each has an option of its own, named as kept, so saving the form
    unchanged sends the image's source (and its registry) back as they were."""
    body = {
        "spec": {
            "distributedFramework": "PyTorch",
            "numWorkers": 2,
            "image": "nvcr.io/nvidia/pytorch:24.05-py3",
            "imageSource": "ngcCatalog",
        },
        "masterSpecSameAsWorker": False,
        "master": {
            "spec": {
                "image": "registry.example.com/team/x:v1",
                "imageSource": "ngcPrivateRegistry",
                "imageRegistryId": REGISTRY,
            }
        },
    }

    async def nothing(*_: object) -> list[Any]:
        return []

    async def settings(*_: object) -> TenantSettings:
        return TenantSettings()  # the NGC catalog is off

    monkeypatch.setattr(form_state, "loadable", nothing)
    monkeypatch.setattr(form_state, "switches", settings)
    monkeypatch.setattr(form_state, "visible_scopes", nothing)
    monkeypatch.setattr(form_state, "usable_registries", lambda *_: _none())
    monkeypatch.setattr(form_state, "pane_items", lambda *_: _no_pane())
    wire = _wire(body)
    values = values_of(wire)

    async def round_trip() -> dict[str, Any]:
        choices = await choices_for(cast(Any, None), cast(Any, None), values, values)
        rendered = {f.pointer: f for f in all_fields(choices["sections"])}
        catalog = dict(rendered["/spec/imageSource"].options)["ngcCatalog"]
        assert catalog == "Select from the NGC catalog (the NGC catalog is off: kept as it is)"
        assert "ngcPrivateRegistry" in dict(rendered["/master/spec/imageSource"].options)
        registry = dict(rendered["/master/spec/imageRegistryId"].options)[REGISTRY]
        assert registry == "Not visible to you: kept as it is"
        sent = _as_a_browser_sends(list(rendered.values()), values)
        choices = await choices_for(cast(Any, None), cast(Any, None), sent, values)
        fields = all_fields(choices["sections"])
        return _patch(fields, built_from(fields, sent, wire), different_master=True)

    patch = asyncio.run(round_trip())
    current = Template(
        id=uuid4(),
        meta=TemplateMeta(name="ddp", scope="project", project_id=7),
        body=msgspec.convert(body, TemplateBody),
    )
    _, _, saved = apply(current, patch)

    assert saved.spec.image_source == "ngcCatalog"
    assert saved.master is not None
    assert saved.master.spec is not None
    assert saved.master.spec.image_source == "ngcPrivateRegistry"
    assert str(saved.master.spec.image_registry_id) == REGISTRY
