"""A person who opens the service's address meets the console's sign-in, which says where the
first administrator's id and secret come from."""

import pytest
from litestar import Litestar

from tests.api.client import client_for

pytestmark = [pytest.mark.api, pytest.mark.integration]


async def test_the_services_address_leads_to_the_console_sign_in(app: Litestar) -> None:
    async with client_for(app) as client:
        root = await client.get("/")
        assert root.status_code == 303, root.text
        assert root.headers["location"] == "/console/templates"
        page = await client.get("/", follow_redirects=True)
    assert page.status_code == 200
    assert page.url.path == "/console/sign-in"
    assert "The first administrator's client ID is <code>trainplate-admin</code>" in page.text
    assert "prints its secret once" in page.text
