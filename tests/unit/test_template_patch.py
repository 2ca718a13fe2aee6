"""`fieldsToClear` of a template PATCH: an entry clears the field its dotted path names, and an
entry that names no field is refused, naming the entry."""

from typing import Any

import pytest

from services.errors import InvalidRequestError
from services.template_patch import clear


@pytest.mark.parametrize(
    "path",
    [
        "spec.image",
        "spec.compute.gpuDevicesRequest",
        "spec.storage.pvc",
        "assets.compute",
        "master.spec.security.runAsUid",
        "masterSpecSameAsWorker",
    ],
)
def test_a_path_of_the_body_clears(path: str) -> None:
    body: dict[str, Any] = {"spec": {"image": "x", "compute": {"gpuDevicesRequest": 1}}}
    clear(body, path, "/fieldsToClear/0")
    if path == "spec.image":
        assert "image" not in body["spec"]
    if path == "spec.compute.gpuDevicesRequest":
        assert body["spec"]["compute"] == {}


@pytest.mark.parametrize(
    "path",
    [
        "spec.notAField",
        "spec.compute.noSuchThing",
        "spec.tolerations.0",  # into a list
        "spec.image.tag",  # below a value
        "assets.datasources.id",
        "meta.name",
        "",
        "spec..image",
    ],
)
def test_a_path_that_names_no_field_is_refused(path: str) -> None:
    with pytest.raises(InvalidRequestError) as refused:
        clear({"spec": {}}, path, "/fieldsToClear/3")
    assert refused.value.field == "/fieldsToClear/3"
