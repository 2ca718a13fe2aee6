"""Signing in and out of the console, and what a session cookie is like."""

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import ADMIN_ID, Service
from tests.browser.journey import journey, sign_in
from tests.integration.test_dev_smoke import ADMIN_SECRET

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.browser]


def test_a_person_signs_in_with_an_applications_secret_and_out_again(service: Service) -> None:
    with journey("sign-in") as j:
        page = j.page
        page.goto(f"{service.url}/console/templates")
        expect(page).to_have_url(f"{service.url}/console/sign-in")  # not signed in yet
        expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
        j.step("the sign-in page")

        sign_in(page, service.url, ADMIN_ID, "not-the-secret")
        expect(page.get_by_role("alert")).to_contain_text("not right")
        j.step("a wrong secret is refused")

        sign_in(page, service.url, ADMIN_ID, ADMIN_SECRET)
        expect(page).to_have_url(f"{service.url}/console/templates")
        expect(page.get_by_text(f"Signed in as {ADMIN_ID}")).to_be_visible()
        j.step("signed in, the templates")

        cookies = {c["name"]: c for c in page.context.cookies()}
        session = cookies["trainplate-console"]
        assert session["httpOnly"], session
        assert session["sameSite"] == "Strict", session
        assert ADMIN_SECRET not in session["value"]
        assert "eyJ" not in session["value"]  # the token inside is sealed, not merely signed
        assert ADMIN_SECRET not in page.content()

        page.get_by_role("button", name="Sign out").click()
        expect(page).to_have_url(f"{service.url}/console/sign-in")
        page.goto(f"{service.url}/console/templates")
        expect(page).to_have_url(f"{service.url}/console/sign-in")
        j.step("signed out")

        # The old cookie again, as a client replaying it would send it: the server forgot it.
        page.context.add_cookies(
            [{"name": session["name"], "value": session["value"], "url": f"{service.url}/console"}]
        )
        page.goto(f"{service.url}/console/templates")
        expect(page).to_have_url(f"{service.url}/console/sign-in")
