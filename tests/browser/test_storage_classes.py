"""The Volume step offers the cluster's storage classes, and a configured class's fields as its
configuration allows them (the guide: "the rest of the fields will appear accordingly"); a size
outside its range is refused next to the claim size. Scheduling offers the cluster's node pools."""

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import ADMIN_ID, Service
from tests.browser.journey import journey, refused_next_to, sign_in
from tests.browser.template_steps import created, entry, own_settings, project
from tests.integration.test_dev_smoke import ADMIN_SECRET

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.browser]

CLAIM = "f-spec-storage-pvc-0-claimInfo"
RWO_ONLY = {"readWriteOnce": True, "readOnlyMany": False, "readWriteMany": False}


def a_configured_cluster(service: Service, cluster: str) -> None:
    """Classes `fast` (RWO only, 1 to 10 GiB, 5 GiB unasked) and `standard` (the default, not
    configured), and a node pool `v100`."""
    for name, default in (("fast", False), ("standard", True)):
        answer = service.api.put(
            f"/v1/k8s/clusters/{cluster}/storage-classes/{name}", json={"isDefault": default}
        )
        assert answer.status_code == 200, answer.text
    service.made(
        "/api/v1/storage-class-configuration",
        {
            "scopeType": "cluster",
            "scopeId": cluster,
            "name": "fast",
            "customization": {
                "accessMode": {"supportedValues": RWO_ONLY},
                "claimSize": {"min": "1Gi", "max": "10Gi", "default": "5Gi"},
            },
        },
    )
    service.made(
        "/api/v1/node-pools",
        {"name": "v100", "clusterId": cluster, "labelKey": "gpu", "labelValue": "v100"},
    )


def test_the_volume_step_offers_the_cluster_s_classes_as_configured(service: Service) -> None:
    made = project(service, "classes-llm")
    a_configured_cluster(service, made["clusterId"])
    with journey("storage-classes") as j:
        page = j.page
        sign_in(page, service.url, ADMIN_ID, ADMIN_SECRET)
        own_settings(page, service.url, "classes-llm", "classes-ddp")
        storage_class = page.locator(f"#{CLAIM}-storageClass")
        expect(storage_class.locator("option")).to_have_text(["None", "fast", "standard (default)"])
        storage_class.select_option("standard")
        expect(page.locator(f"#{CLAIM}-accessModes")).to_be_visible()  # any mode: a choice
        storage_class.select_option("fast")
        expect(page.locator(f"#{CLAIM}-accessModes")).to_be_hidden()
        expect(page.locator(f"#{CLAIM}-accessModes--fast")).to_have_count(0)  # RWO alone
        size = page.locator(f"#{CLAIM}-size--fast")
        expect(page.locator(f"#{CLAIM}-size--fast-hint")).to_contain_text("from 1Gi; to 10Gi")
        size.fill("100Gi")
        page.locator("#f-spec-storage-pvc-0-path").fill("/scratch")
        expect(page.locator("#f-spec-nodePools option")).to_have_text(["v100"])
        page.locator("#f-spec-nodePools").select_option(["v100"])
        j.step("a volume of the configured class, too big")

        page.get_by_role("button", name="Create template").click()
        size = refused_next_to(page, f"{CLAIM}-size--fast", "'fast' takes sizes from 1Gi")
        assert entry(service, "classes-ddp") == {}  # nothing was written
        j.step("the size refused next to it")

        expect(page.locator(f"#{CLAIM}-storageClass")).to_have_value("fast")
        size.fill("")  # the class's default, unasked
        made_template = created(j, service, "classes-ddp")

    spec = made_template["spec"]
    assert spec["nodePools"] == ["v100"]
    assert spec["storage"]["pvc"][0]["claimInfo"]["size"] == "5Gi"
    assert spec["storage"]["pvc"][0]["claimInfo"]["storageClass"] == "fast"
