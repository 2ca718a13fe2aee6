"""What an audit log entry says, worked out without I/O: an event's action and entity, a write's
from its path, the client's address, the record a sign-in or refusal makes, and the download's
cells."""

from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any
from uuid import UUID, uuid4

import pytest

from domain.events import (
    ClusterRenamed,
    EnvironmentDeleted,
    Event,
    EventMetadata,
    PolicyApplied,
    ProjectCreated,
    RecordedEvent,
    TemplateCreated,
    TenantSettingChanged,
    UserRoleRevoked,
    WorkloadPodsChanged,
)
from domain.permissions import actions_of, permitted_scopes
from domain.template_specs import DistributedTemplateSpec
from domain.values import TENANT, Grant, ScopeRef, TemplateMeta
from infra.http.audit_log import _cell, _file_type
from infra.http.audit_trail import (
    AUDITED,
    SUBJECT,
    entity_of,
    note_subject,
    record_of,
    request_id,
    source_of,
)
from infra.http.auth import Principal
from projections.audit_log import SUBJECT_TYPES, described
from services.errors import InvalidRequestError

CLUSTER = uuid4()
ID = str(CLUSTER)
SYSTEM = EventMetadata(actor_subject="submitter", actor_kind="system")


def recorded(event: Event, *, version: int = 1, stream_type: str = "test") -> RecordedEvent:
    return RecordedEvent(
        position=1,
        event_id=uuid4(),
        stream_type=stream_type,
        stream_id=uuid4(),
        version=version,
        recorded_at=datetime.now(UTC),
        metadata=SYSTEM,
        event=event,
    )


def test_an_event_names_its_action_entity_and_what_it_states_of_it() -> None:
    template_id = uuid4()
    meta = TemplateMeta(name="ddp", scope="project", project_id=7, cluster_id=CLUSTER)
    created = TemplateCreated(template_id=template_id, meta=meta, spec=DistributedTemplateSpec())
    found = described(recorded(created, stream_type="template"))
    assert (found.action, found.entity_type, found.entity_id) == (
        "create",
        "template",
        str(template_id),
    )
    assert (found.name, found.cluster_id) == ("ddp", CLUSTER)
    project = ProjectCreated(project_id="7", cluster_id=CLUSTER, name="llm")
    assert described(recorded(project)).cluster_id == CLUSTER
    renamed = described(recorded(ClusterRenamed(cluster_id=CLUSTER, name="west"), version=2))
    assert (renamed.action, renamed.name, renamed.entity_id) == ("update", "west", str(CLUSTER))


def test_a_deletion_names_its_thing_by_id_alone() -> None:
    asset_id = uuid4()
    gone = described(recorded(EnvironmentDeleted(asset_id=asset_id), stream_type="environment"))
    assert (gone.action, gone.entity_type, gone.entity_id, gone.name) == (
        "delete", "environment", str(asset_id), None,
    )  # fmt: skip
    revoked = described(recorded(UserRoleRevoked(subject="ann", rule_id=4)))
    assert (revoked.action, revoked.entity_type, revoked.entity_id) == (
        "delete",
        "access-rule",
        "4",
    )


def test_facts_that_are_no_creation_or_deletion_update() -> None:
    pods = WorkloadPodsChanged(workload_id=uuid4(), run=1, pods=())
    assert described(recorded(pods)).action == "update"
    setting = described(recorded(TenantSettingChanged(key="x.enabled", value=True)))
    assert (setting.action, setting.entity_type, setting.name) == ("update", "setting", "x.enabled")


def test_a_policy_is_created_by_its_first_application_and_updated_by_the_next() -> None:
    policy = PolicyApplied(
        policy_id=uuid4(), name="p", workload_type="distributed", scope="tenant", scope_id=""
    )
    assert described(recorded(policy, version=1)).action == "create"
    assert described(recorded(policy, version=3)).action == "update"


def test_subject_types_are_run_ais_two() -> None:
    assert set(SUBJECT_TYPES.values()) == {"User", "App"}  # the service acts as an application


@pytest.mark.parametrize(
    ("method", "path", "expected"),
    [
        ("POST", "/api/v1/workload-templates/distributed", ("create", "template", "")),
        ("PATCH", f"/api/v1/workload-templates/distributed/{ID}", ("update", "template", ID)),
        ("DELETE", f"/api/v1/asset/datasource/nfs/{ID}", ("delete", "datasource", ID)),
        ("POST", f"/api/v1/service-accounts/{ID}/secret", ("update", "application", ID)),
        ("POST", f"/api/v1/workloads/distributed/{ID}/suspend", ("update", "workload", ID)),
        ("PUT", "/api/v1/org-unit/projects/12", ("update", "project", "12")),
        ("DELETE", "/api/v1/authorization/access-rules/3", ("delete", "access-rule", "3")),
        ("POST", "/api/v1/clustersx", ("create", "", "")),
        ("POST", "/console/environments/new", ("create", "environment", "")),
        ("POST", f"/console/templates/{ID}/workloads", ("create", "workload", "")),
        ("POST", f"/console/templates/{ID}/edit", ("update", "template", ID)),
        ("POST", "/console/projects/12/delete", ("delete", "project", "12")),
    ],
)  # fmt: skip
def test_a_write_names_its_action_and_thing_from_its_path(
    method: str, path: str, expected: tuple[str, str, str]
) -> None:
    assert entity_of(method, path) == expected


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("10.1.2.3", ("10.1.2.3", {})),
        ("::ffff:10.1.2.3", ("10.1.2.3", {})),
        ("2001:db8::1", ("", {"sourceAddress": "2001:db8::1"})),
        ("testclient", ("", {})),
    ],
)
def test_the_source_is_an_ipv4_address_as_run_ai_has_it(
    host: str, expected: tuple[str, dict[str, str]]
) -> None:
    assert source_of({"client": (host, 1)}) == expected


def scope(
    method: str, path: str, *, opt: dict[str, Any] | None = None, **more: Any
) -> dict[str, Any]:
    handler = SimpleNamespace(opt=opt or {})
    return {
        "type": "http", "method": method, "path": path, "headers": [], "state": {},
        "client": ("127.0.0.1", 5), "route_handler": handler, **more,
    }  # fmt: skip


def test_a_sign_in_is_recorded_with_whom_it_named_whatever_its_outcome() -> None:
    asked = scope("POST", "/api/v1/token", opt={AUDITED: "sign-in"})
    assert record_of(asked, 400) is None  # named no one: nothing to say
    note_subject(asked, "ci-bot", None)
    failed = record_of(asked, 401)
    assert failed is not None
    assert (failed.subject, failed.action, failed.result, failed.http_status_code) == (
        "ci-bot", "sign-in", "Failed", 401,
    )  # fmt: skip
    application = str(uuid4())
    note_subject(asked, "ci-bot", application)
    done = record_of(asked, 200)
    assert done is not None
    assert (done.result, done.metadata) == ("Succeeded", {"subjectId": application})
    assert done.source_ip == "127.0.0.1"
    assert asked["state"][SUBJECT] == ("ci-bot", application)


def test_a_refused_write_is_recorded_for_a_caller_who_authenticated_only() -> None:
    caller = Principal(subject=str(CLUSTER), client_id="bot", kind="application")
    path = "/api/v1/clusters"
    refused = record_of(scope("POST", path, user=caller), 403)
    assert refused is not None
    assert (refused.subject, refused.subject_type, refused.entity_type) == ("bot", "App", "cluster")
    assert refused.metadata == {"subjectId": str(CLUSTER)}
    person = Principal(subject="ann@example.com", client_id="", kind="user")
    by_person = record_of(scope("DELETE", f"{path}/{CLUSTER}", user=person), 409)
    assert by_person is not None
    assert (by_person.subject, by_person.subject_type) == ("ann@example.com", "User")
    assert record_of(scope("POST", path, user=caller), 201) is None  # its events say it
    assert record_of(scope("POST", path), 401) is None  # no one authenticated
    assert record_of(scope("GET", path, user=caller), 404) is None  # no write
    question = scope("POST", path, user=caller, opt={"trainplate_reads": True})
    assert record_of(question, 400) is None  # a question asked by POST


def test_a_request_keeps_one_id_a_plain_one_of_its_clients_or_its_own() -> None:
    given = scope("POST", "/", headers=[(b"x-request-id", b"job-7")])
    assert request_id(given) == request_id(given) == "job-7"
    odd = scope("POST", "/", headers=[(b"x-request-id", b"a b")])
    UUID(request_id(odd))


def test_the_download_writes_no_formula_and_takes_its_type_either_way() -> None:
    assert _cell("=SUM(A1)") == "'=SUM(A1)"
    assert _cell("-1") == "'-1"
    assert _cell({"a": "b"}) == '{"a":"b"}'
    assert _cell(None) == ""
    assert _file_type(None, "json") == "JSON"
    assert _file_type(None, None) == "CSV"
    with pytest.raises(InvalidRequestError):
        _file_type("csv", "JSON")


def test_the_audit_log_is_the_tenant_admins() -> None:
    lineages = {TENANT: (TENANT,), ScopeRef("cluster", "c"): (ScopeRef("cluster", "c"), TENANT)}
    assert actions_of("admin", "events-history") == ["read"]
    assert actions_of("viewer", "events-history") == []
    cluster_admin = [Grant(role="admin", scope_kind="cluster", scope_id="c")]
    assert permitted_scopes(cluster_admin, lineages, "events-history", "read") == set()
    tenant_admin = [Grant(role="admin", scope_kind="tenant", scope_id="tenant")]
    assert permitted_scopes(tenant_admin, lineages, "events-history", "read") == {TENANT}
