"""An edit through the console is a PATCH: the form's fields as filled in, each one it left
empty cleared (a list whole), and whatever the form does not show left alone."""

import msgspec
import pytest

from infra.http.console.form_document import build
from infra.http.console.template_edit import _patch
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
    assert not [p for p in cleared if p.startswith(("spec.slotsPerWorker", "spec.storage.pvc"))]


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
