"""Data & storage has the guide's one-time Volume beside the EmptyDir: a new claim's storage
class, access modes, size, volume mode, container path and persistency. A size of 0, which the
domain refuses, is named next to the claim size with nothing written; the edit form shows the
volume as saved and saving it unchanged keeps it."""

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import Service
from tests.browser.journey import fill, refused_next_to
from tests.browser.template_steps import created, entry, new_template

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.browser]

VOLUME = {
    "path": "/data",
    "ephemeral": True,
    "claimInfo": {
        "size": "10Gi",
        "storageClass": "standard",
        "accessModes": {"readWriteMany": True},  # readWriteOnce, on by default, left out
        "volumeMode": "Block",
    },
}


def test_a_one_time_volume_is_claimed_with_the_guides_fields(service: Service) -> None:
    with new_template(service, "one-time-volume", "volume-vision", "volume-ddp") as j:
        page = j.page
        volume = page.get_by_role("group", name="Volume (one-time)")
        fill(volume, {"Storage class": "standard", "Claim size": "0"})
        volume.get_by_label("Access mode(s)").select_option(["readWriteOnce", "readWriteMany"])
        volume.get_by_label("Volume mode").select_option("Block")
        volume.get_by_label("Volume container path").fill("/data")
        persistency = volume.get_by_label("Volume persistency")
        persistency.focus()
        persistency.press("ArrowDown")  # from the keyboard: Ephemeral
        expect(persistency).to_have_value("true")
        j.step("a new volume of size 0")

        page.get_by_role("button", name="Create template").click()
        size = refused_next_to(page, "f-spec-storage-pvc-0-claimInfo-size", "above 0")
        expect(size).to_have_value("0")
        expect(page.locator("#f-spec-storage-pvc-0-claimInfo-volumeMode")).to_have_value("Block")
        assert entry(service, "volume-ddp") == {}  # nothing was written
        j.step("the size refused next to it")

        size.fill("10Gi")
        made = created(j, service, "volume-ddp")
        assert made["spec"]["storage"]["pvc"] == [VOLUME]

        page.goto(f"{service.url}/console/templates/{made['meta']['id']}/edit")
        volume = page.get_by_role("group", name="Volume (one-time)").first
        expect(volume.get_by_label("Claim size")).to_have_value("10Gi")
        modes = volume.get_by_label("Access mode(s)").locator("option:checked")
        expect(modes).to_have_text(["Read-write by one node", "Read-write by many nodes"])
        expect(volume.get_by_label("Volume persistency")).to_have_value("true")
        j.step("the edit form shows the volume")
        page.get_by_role("button", name="Save template").click()
        expect(page.get_by_role("heading", name="volume-ddp", exact=True)).to_be_visible()

    assert entry(service, "volume-ddp")["spec"]["storage"]["pvc"] == [VOLUME]
