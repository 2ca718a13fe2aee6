"""The console's form becomes Run:ai's creation body field by field, and a refusal's pointer
finds its way back to the field that holds it."""

import msgspec
import pytest

from infra.console.form_document import build, decode_pointer, decoded, field_of
from infra.console.form_fields import (
    Field,
    compute_fields,
    environment_fields,
    general_fields,
    scheduling_fields,
)
from infra.console.master_fields import master_fields
from infra.console.storage_fields import storage_fields

DATA = "3fa85f64-5717-4562-b3fc-2c963f66afa6"
FIELDS = [
    Field(pointer="/meta/name", label="Template name"),
    *(
        f
        for groups in (
            environment_fields("/spec"),
            compute_fields("/spec", gpu_limits=True),
            scheduling_fields("/spec"),
            storage_fields(((f"nfs|{DATA}", "data (nfs)"),)),
            general_fields(),
            *master_fields().values(),
        )
        for g in groups
        for f in g.fields
    ),
]
KNOWN = {f.pointer for f in FIELDS}


def test_the_form_is_the_creation_body_with_numbers_read_from_its_text() -> None:
    built = build(
        FIELDS,
        {
            "/scope": "project:7",
            "/meta/name": " ddp ",
            "/spec/image": "pytorch:2",
            "/spec/ports/0/external": "30001",
            "/spec/compute/cpuCoreRequest": "0.5",
            "/spec/compute/largeShmRequest": "true",
            "/spec/security/capabilities": ["CHOWN", "KILL"],
            "/spec/environmentVariables/1/name": "MODE",  # the first row left empty
            "/assets/datasources/0/ref": f"nfs|{DATA}",
            "/assets/datasources/0/overrides/containerPath": "/mnt/x",
            "/configuration": "workers-and-master",
            "/differentMaster": "true",
            "/master/spec/command": "launch",
            "/spec/command": "",  # empty: not sent
        },
    )
    request = decoded(built)
    assert request.meta.name == "ddp"
    assert (request.meta.scope_type, request.meta.scope_id) == ("project", "7")
    assert request.spec is not None
    assert request.spec.command is None
    assert request.spec.ports is not None
    assert request.spec.ports[0].external == 30001
    assert request.spec.compute is not None
    assert request.spec.compute.cpu_core_request == 0.5
    assert request.spec.compute.large_shm_request is True
    assert request.spec.security is not None
    assert request.spec.security.capabilities == ("CHOWN", "KILL")
    assert request.spec.environment_variables is not None
    assert [v.name for v in request.spec.environment_variables] == ["MODE"]
    assert request.assets is not None
    assert request.assets.datasources is not None
    source = request.assets.datasources[0]
    assert (str(source.id), source.kind) == (DATA, "nfs")
    assert source.overrides is not None
    assert source.overrides.container_path == "/mnt/x"
    assert request.master_spec_same_as_worker is False
    assert request.master is not None
    assert request.master.spec is not None
    assert request.master.spec.command == "launch"
    # A refusal of the item that moved up points back at the row the person filled in.
    moved = field_of("/spec/environmentVariables/0/name", built, KNOWN)
    assert moved == "/spec/environmentVariables/1/name"


@pytest.mark.parametrize(
    ("configuration", "different", "same", "master"),
    [
        ("workers-only", "true", False, False),
        ("workers-and-master", "", True, False),
        ("workers-and-master", "true", False, True),
    ],
)
def test_the_configuration_and_the_master_toggle(
    configuration: str, different: str, same: bool, master: bool
) -> None:
    values = {
        "/scope": "tenant",
        "/meta/name": "t",
        "/configuration": configuration,
        "/differentMaster": different,
        "/master/spec/image": "m:1",
    }
    body = build(FIELDS, values).body
    assert body["masterSpecSameAsWorker"] is same
    assert ("master" in body) is master


def test_a_value_the_decoder_refuses_is_named_at_its_field() -> None:
    built = build(FIELDS, {"/scope": "tenant", "/meta/name": "t", "/spec/backoffLimit": "six"})
    with pytest.raises(msgspec.ValidationError) as refused:
        decoded(built)
    pointer = decode_pointer(refused.value)
    assert field_of(pointer, built, KNOWN) == "/spec/backoffLimit"


@pytest.mark.parametrize(
    ("pointer", "field"),
    [
        ("/meta/scopeId", "/scope"),
        ("/assets/datasources/0/id", "/assets/datasources/0/ref"),
        ("/spec/ports/0/external", "/spec/ports/0/external"),
        ("/spec/tolerations/1/seconds", None),  # no such field, none enclosing it
        ("/spec/environmentVariables/0", "/spec/environmentVariables/0/source"),
        ("/spec/exposedUrls/0/authorizedUsers/2", "/spec/exposedUrls/0/authorizedUsers"),
        ("/master/assets/datasources/0/id", "/master/assets/datasources/0/ref"),
        ("/master/spec/storage/pvc/0/claimInfo/size", "/master/spec/storage/pvc/0/claimInfo/size"),
    ],
)
def test_a_pointer_finds_its_field(pointer: str, field: str | None) -> None:
    built = build(FIELDS, {"/scope": "tenant"})
    assert field_of(pointer, built, KNOWN | {"/scope"}) == field


def test_each_variable_sends_the_source_its_row_chose_and_no_other() -> None:
    at = "/spec/environmentVariables"
    values = {
        "/scope": "tenant",
        "/meta/name": "t",
        **{f"{at}/0/{k}": v for k, v in {"name": "A", "source": "", "value": "1"}.items()},
        # a secret chosen after a value was typed: the value stays in the row, unsent
        **{f"{at}/1/{k}": v for k, v in {"name": "B", "source": "secret", "value": "x",
                                        "secret/name": "s", "secret/key": "k"}.items()},
        **{f"/master{at}/0/{k}": v for k, v in {"name": "C", "source": "configMap",
                                        "configMap/name": "c", "configMap/key": "k"}.items()},
        "/configuration": "workers-and-master",
        "/differentMaster": "true",
    }  # fmt: skip
    built = build(FIELDS, values)
    assert built.unknown == {}
    assert built.body["spec"]["environmentVariables"] == [
        {"name": "A", "value": "1"},
        {"name": "B", "secret": {"name": "s", "key": "k"}},
    ]
    assert built.body["master"]["spec"]["environmentVariables"] == [
        {"name": "C", "configMap": {"name": "c", "key": "k"}}
    ]


def test_a_choice_of_the_forms_own_that_it_does_not_offer_is_named() -> None:
    values: dict[str, str | list[str]] = {
        "/scope": "tenant",
        "/meta/name": "t",
        "/spec/environmentVariables/0/name": "A",
        "/spec/environmentVariables/0/source": "sideways",
        "/spec/storage/pvc/0/claimInfo/accessModes": ["readWriteOnce", "everyone"],
    }
    assert set(build(FIELDS, values).unknown) == {
        "/spec/environmentVariables/0/source",
        "/spec/storage/pvc/0/claimInfo/accessModes",
    }


def test_a_volumes_access_modes_and_a_urls_users_are_the_specs_shapes() -> None:
    values: dict[str, str | list[str]] = {
        "/scope": "tenant",
        "/meta/name": "t",
        "/spec/storage/pvc/0/claimInfo/accessModes": ["readOnlyMany"],
        "/spec/storage/pvc/0/claimInfo/size": "1Gi",
        "/spec/exposedUrls/0/container": "8888",
        "/spec/exposedUrls/0/authorizedUsers": " alice , ,bob ",
    }
    spec = build(FIELDS, values).body["spec"]
    assert spec["storage"]["pvc"][0]["claimInfo"]["accessModes"] == {
        "readWriteOnce": False,
        "readOnlyMany": True,
        "readWriteMany": False,
    }
    assert spec["exposedUrls"][0]["authorizedUsers"] == ["alice", "", "bob"]  # the domain's call
