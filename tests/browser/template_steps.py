"""Steps the template form's journeys share: a project to make templates in and assets in it,
the form's first step for a template of its own settings, and a template as the API lists it."""

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from playwright.sync_api import Page, expect

from tests.browser.conftest import ADMIN_ID, Service
from tests.browser.journey import Journey, journey, sign_in
from tests.integration.test_dev_smoke import ADMIN_SECRET


def project(service: Service, name: str) -> dict[str, Any]:
    """A project of that name, on a cluster of its own."""
    cluster = service.made("/api/v1/clusters", {"name": f"{name}-cluster"})
    return service.made("/api/v1/org-unit/projects", {"name": name, "clusterId": cluster["uuid"]})


def pytorch_environment(
    service: Service, project_id: int, name: str, spec: dict[str, Any]
) -> dict[str, Any]:
    """An environment of that name for distributed PyTorch, in the project."""
    meta = {"scope": "project", "projectId": project_id, "name": name}
    return service.made(
        "/api/v1/asset/environment",
        {
            "meta": {
                **meta,
                "workloadSupportedTypes": {"distributed": True, "distFramework": "PyTorch"},
            },
            "spec": spec,
        },
    )


def compute_resource(
    service: Service, project_id: int, name: str, spec: dict[str, Any]
) -> dict[str, Any]:
    """A compute resource of that name, in the project."""
    meta = {"scope": "project", "projectId": project_id, "name": name}
    return service.made("/api/v1/asset/compute", {"meta": meta, "spec": spec})


def own_settings(
    page: Page, url: str, project: str, name: str, configuration: str = "Workers only"
) -> None:
    """The first step for a PyTorch template in the project, CONTINUE, and a custom image."""
    page.goto(f"{url}/console/templates/new")
    page.get_by_label("Scope").select_option(label=f"Project · {project}")
    page.get_by_label("Framework").select_option("PyTorch")
    page.get_by_label(configuration, exact=True).check()
    page.get_by_label("Template name").fill(name)
    page.get_by_role("button", name="Continue").click()
    page.locator("#f-spec-image").fill("python:3.12")


def entry(service: Service, name: str) -> dict[str, Any]:
    """The template of that name as the API lists it ({} when there is none)."""
    found = service.api.get("/api/v1/workload-templates", params={"filterBy": f"name=={name}"})
    entries: list[dict[str, Any]] = found.json()["entries"]
    return entries[0] if entries else {}


@contextmanager
def new_template(
    service: Service, name: str, in_project: str, template: str, **first_step: str
) -> Iterator[Journey]:
    """A journey `name` that signs in and opens the form's second step for `template` of its
    own settings in a new project `in_project`."""
    project(service, in_project)
    with journey(name) as j:
        sign_in(j.page, service.url, ADMIN_ID, ADMIN_SECRET)
        own_settings(j.page, service.url, in_project, template, **first_step)
        yield j


def created(j: Journey, service: Service, template: str) -> dict[str, Any]:
    """CREATE TEMPLATE, the template's page, and the template as the API lists it."""
    j.page.get_by_role("button", name="Create template").click()
    expect(j.page.get_by_role("heading", name=template, exact=True)).to_be_visible()
    j.step("the template's page")
    return entry(service, template)
