"""runapy, unmodified, asks what it may do and counts, against the running service: its
ApplicationsApi (the older name of service accounts), AccessRulesApi, MeApi, PermissionsApi,
WorkloadsApi, ProjectsApi and DepartmentsApi. No retries, no sleeps, no special headers: every
read sees the writes its caller made before it, and a role granted is held from the next
request on, with the projector following the log as in production, over one API process and
over two taking the calls in turn."""

import asyncio
from collections.abc import Callable
from typing import Any

import asyncpg
import pytest
from runai.models import (
    AccessRuleCreationFields,
    ApplicationCreationRequest,
    ApplicationPatchRequest,
    DepartmentCreationRequest,
    DistributedCreationRequest,
    GetPermittedScopesRequest,
)
from runai.runai_client import RunaiClient

from tests.integration.test_runapy import (
    an_org,
    clients_over,
    missing,
    register_admin,
    service,
    template_journey,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow]

__all__ = ["service"]  # the fixture, shared with the other runapy journeys

ROUNDS = 5
EDITOR = 2


def application_journey(
    admin: Callable[[], RunaiClient], urls: list[str], round_: int, org: dict[str, str]
) -> None:
    """An application made under the older name, given a role, asks what it may do."""
    name = f"legacy-{round_}"

    def apps() -> Any:  # runapy's types are not checked (pyproject.toml)
        return admin().authentication_and_authorization.applications

    made = apps().create_application(ApplicationCreationRequest(name=name))
    assert made.status_code == 201
    app_id = made.data["id"]
    got = apps().get_application_by_id(app_id)
    assert got.data["name"] == name, f"round {round_}: {got.data}"
    listed = apps().get_applications().data
    assert name in [a["name"] for a in listed], f"round {round_}: not listed"
    apps().update_application_by_id(app_id, ApplicationPatchRequest(enabled=False))
    assert apps().get_application_by_id(app_id).data["enabled"] is False, f"round {round_}"
    apps().update_application_by_id(app_id, ApplicationPatchRequest(enabled=True))
    secret = apps().regenerate_application_secret(app_id).data["secret"]

    rules = admin().authentication_and_authorization.access_rules
    rule = rules.create_access_rule(
        AccessRuleCreationFields(
            subjectId=app_id,
            subjectType="service-account",
            roleId=EDITOR,
            scopeId=org["project"],
            scopeType="project",
        )
    ).data["id"]
    counted = admin().authentication_and_authorization.access_rules.count_access_rules(
        filter_by=[f"subjectId=={app_id}", "roleName==editor"]
    )
    assert counted.data == {"count": 1}, f"round {round_}: {counted.data}"

    own = clients_over(urls, name, secret)
    me = own().authentication_and_authorization.me.get_me_access_rules().data["accessRules"]
    assert [(r.get("id"), r["roleName"], r["scopeName"]) for r in me["accessRules"]] == [
        (rule, "editor", "llm")
    ], f"round {round_}: {me}"
    count = own().authentication_and_authorization.me.count_me_access_rules(search="llm")
    assert count.data == {"count": 1}, f"round {round_}"
    held = own().authentication_and_authorization.permissions.get_permissions().data
    actions = {p["resourceType"]: p["actions"] for p in held}
    assert actions["environments"] == ["create", "read", "update", "delete"], f"round {round_}"
    assert "service-account" not in actions
    scopes = own().authentication_and_authorization.permissions.get_permitted_scopes(
        GetPermittedScopesRequest(resourceType="environments", action="create")
    )
    assert scopes.data["create"]["projects"] == [org["project"]], f"round {round_}"

    admin().authentication_and_authorization.access_rules.delete_access_rule(rule)
    after = own().authentication_and_authorization.me.count_me_access_rules()
    assert after.data == {"count": 0}, f"round {round_}: the revoked role is still held"
    apps().delete_application_by_id(app_id)
    gone = missing(lambda: apps().get_application_by_id(app_id))
    assert gone == 404, f"round {round_}: {gone} after the delete"


def count_journey(
    admin: Callable[[], RunaiClient], round_: int, template_id: str, org: dict[str, str]
) -> None:
    """A workload and a department counted the moment they are made, and after."""
    name = f"count-{round_}"
    submitted = admin().workloads.distributed.create_distributed(
        DistributedCreationRequest(
            name=name, projectId=org["project"], clusterId=org["cluster"], templateId=template_id
        )
    )
    workload_id = submitted.data["workloadId"]
    counted = admin().workloads.workloads.count_workloads(filter_by=[f"name=={name}"])
    assert counted.data == {"count": 1}, f"round {round_}: {counted.data}"
    assert admin().workloads.workloads.count_workloads().data == {"count": 1}
    admin().workloads.distributed.delete_distributed(workload_id)
    assert admin().workloads.workloads.count_workloads().data == {"count": 0}, f"round {round_}"
    deleted = admin().workloads.workloads.count_workloads(deleted=True, search="COUNT")
    assert deleted.data == {"count": round_ + 1}, f"round {round_}: {deleted.data}"

    admin().organizations.departments.create_department(
        DepartmentCreationRequest(name=f"dept-{round_}", clusterId=org["cluster"], resources=[])
    )
    departments = admin().organizations.departments.count_departments(filter_by=["name=^dept-"])
    assert departments.data == {"count": round_ + 1}, f"round {round_}: {departments.data}"
    projects = admin().organizations.projects.count_projects(filter_by=["name==llm"], search="L")
    assert projects.data == {"count": 1}, f"round {round_}"


def run_journeys(urls: list[str]) -> int:
    admin = clients_over(urls)
    org = an_org(urls[0])
    template_id = template_journey(admin, 0)
    for round_ in range(ROUNDS):
        application_journey(admin, urls, round_, org)
        count_journey(admin, round_, template_id, org)
    return ROUNDS


@pytest.mark.parametrize("processes", [1, 2], ids=["one API process", "two API processes"])
async def test_runapy_asks_what_it_may_do_and_counts(
    service: list[str], clean_pool: asyncpg.Pool, processes: int
) -> None:
    await register_admin(clean_pool)
    assert await asyncio.to_thread(run_journeys, service[:processes]) == ROUNDS
    kinds = await clean_pool.fetch("SELECT type, count(*) AS n FROM events GROUP BY type")
    counted = {row["type"]: row["n"] for row in kinds}
    assert counted["application.role_revoked.v1"] == ROUNDS
    assert counted["application.deleted.v1"] == ROUNDS
