"""The console's form becomes Run:ai's creation body field by field, and a refusal's pointer
finds its way back to the field that holds it."""

import msgspec
import pytest

from infra.http.console.form_document import build, decode_pointer, decoded, field_of
from infra.http.console.form_fields import (
    Field,
    compute_fields,
    environment_fields,
    general_fields,
    scheduling_fields,
)
from infra.http.console.master_fields import master_fields
from infra.http.console.storage_fields import storage_fields

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
    ],
)
def test_a_pointer_finds_its_field(pointer: str, field: str | None) -> None:
    built = build(FIELDS, {"/scope": "tenant"})
    assert field_of(pointer, built, KNOWN | {"/scope"}) == field
