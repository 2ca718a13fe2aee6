"""A tool reached by a URL says who may access it, in the guide's words: all authenticated
users and service accounts, specific users and service accounts, or specific groups, with the
users or groups listed. A user the domain refuses (an empty one) is named next to the users'
field with nothing written; the edit form shows the list, and the groups replace the users."""

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import Service
from tests.browser.journey import refused_next_to
from tests.browser.template_steps import created, entry, new_template

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.browser]


def test_who_may_access_a_tools_url(service: Service) -> None:
    with new_template(service, "exposed-url", "url-vision", "url-ddp") as j:
        page = j.page
        url = page.get_by_role("group", name="Connection by URL")
        url.get_by_label("Container port of the URL").fill("8888")
        users = url.get_by_label("Specific user(s) and service account(s)")
        expect(users).to_be_hidden()
        url.get_by_label("Who can access the tool").select_option(
            label="Specific user(s) and service account(s)"
        )
        expect(url.get_by_label("Specific group(s)")).to_be_hidden()
        users.fill("alice@example.com, , bob")
        j.step("a URL for specific users, one of them left empty")

        page.get_by_role("button", name="Create template").click()
        field = refused_next_to(page, "f-spec-exposedUrls-0-authorizedUsers", "must not be empty")
        expect(field).to_have_value("alice@example.com, , bob")
        assert entry(service, "url-ddp") == {}  # nothing was written
        j.step("the empty user named next to the users")

        field.fill("alice@example.com, bob")
        made = created(j, service, "url-ddp")
        assert made["spec"]["exposedUrls"] == [
            {
                "container": 8888,
                "authorizationType": "authorizedUsers",
                "authorizedUsers": ["alice@example.com", "bob"],
            }
        ]

        page.goto(f"{service.url}/console/templates/{made['meta']['id']}/edit")
        url = page.get_by_role("group", name="Connection by URL 1")
        expect(url.get_by_label("Specific user(s) and service account(s)")).to_have_value(
            "alice@example.com, bob"
        )
        kind = url.get_by_label("Who can access the tool")
        kind.focus()
        kind.press("ArrowDown")  # from the keyboard: Specific group(s)
        expect(kind).to_have_value("authorizedGroups")
        url.get_by_label("Specific group(s)").fill("ml-team")
        j.step("the edit form: groups instead of users")
        page.get_by_role("button", name="Save template").click()
        expect(page.get_by_role("heading", name="url-ddp", exact=True)).to_be_visible()

    assert entry(service, "url-ddp")["spec"]["exposedUrls"] == [
        {
            "container": 8888,
            "authorizationType": "authorizedGroups",
            "authorizedGroups": ["ml-team"],
        }
    ]
