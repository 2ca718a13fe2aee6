"""Roles nest, and a grant covers its scope and everything below it."""

import pytest

from domain.access import permits, visible_scopes
from domain.values import TENANT, Grant, ScopeRef
from services.access import require_held
from services.errors import NotPermittedError

CLUSTER = ScopeRef("cluster", "c1")
DEPARTMENT = ScopeRef("department", "2")
PROJECT = ScopeRef("project", "3")
OTHER_PROJECT = ScopeRef("project", "4")
LINEAGES = {
    TENANT: (TENANT,),
    CLUSTER: (CLUSTER, TENANT),
    DEPARTMENT: (DEPARTMENT, CLUSTER, TENANT),
    PROJECT: (PROJECT, DEPARTMENT, CLUSTER, TENANT),
    OTHER_PROJECT: (OTHER_PROJECT, CLUSTER, TENANT),
}


def grant(role: str, scope: ScopeRef) -> Grant:
    return Grant(role=role, scope_kind=scope.kind, scope_id=scope.id or "tenant")  # type: ignore[arg-type]


def test_a_grant_covers_descendants_not_ancestors_or_siblings() -> None:
    editor = [grant("editor", DEPARTMENT)]
    assert permits(editor, LINEAGES[PROJECT], "editor")
    assert permits(editor, LINEAGES[DEPARTMENT], "viewer")
    assert not permits(editor, LINEAGES[CLUSTER], "viewer")
    assert not permits(editor, LINEAGES[OTHER_PROJECT], "viewer")


def test_roles_nest_admin_editor_submitter_viewer() -> None:
    assert permits([grant("admin", TENANT)], LINEAGES[PROJECT], "editor")
    assert permits([grant("submitter", PROJECT)], LINEAGES[PROJECT], "viewer")
    assert not permits([grant("submitter", PROJECT)], LINEAGES[PROJECT], "editor")
    assert not permits([grant("viewer", TENANT)], LINEAGES[PROJECT], "submitter")


def test_visible_scopes_are_the_branch_and_its_ancestors() -> None:
    seen = visible_scopes([grant("viewer", DEPARTMENT)], LINEAGES)
    assert seen == {TENANT, CLUSTER, DEPARTMENT, PROJECT}
    assert visible_scopes([], LINEAGES) == set()
    assert visible_scopes([grant("viewer", TENANT)], LINEAGES) == set(LINEAGES)


def test_a_read_of_the_log_needs_the_role_held_on_the_scope_or_above() -> None:
    tenant_viewer, project_admin = grant("viewer", TENANT), grant("admin", PROJECT)
    require_held((tenant_viewer,), (TENANT,), "viewer", "verify the event store")
    with pytest.raises(NotPermittedError) as refused:
        require_held((project_admin,), (TENANT,), "viewer", "verify the event store")
    assert "verify the event store" in str(refused.value)
