"""The permission catalogue: what each role may do to each resource type, and where the grants
permit it; the roles endpoint, the permissions summary and the permitted scopes all read it."""

from hypothesis import given
from hypothesis import strategies as st

from domain.permissions import ACTIONS, CATALOGUE, actions_of, held_actions, permitted_scopes
from domain.values import TENANT, Grant, Role, ScopeRef
from tests.unit.test_access import CLUSTER, DEPARTMENT, LINEAGES, OTHER_PROJECT, PROJECT, grant

DELETED = ScopeRef("project", "9")  # granted once, gone from the tree since


def test_the_roles_nest_in_the_catalogue() -> None:
    assert actions_of("viewer", "environments") == ["read"]
    assert actions_of("editor", "environments") == ["create", "read", "update", "delete"]
    assert actions_of("submitter", "workloads") == ["create", "read", "delete"]
    assert actions_of("editor", "project") == ["read"]
    assert actions_of("admin", "project") == ["create", "read", "update", "delete"]
    assert actions_of("viewer", "access_rules") == ["read"]  # rules are seen where units are
    assert actions_of("admin", "apps") == actions_of("admin", "service-account")
    assert actions_of("admin", "nodepools") == []  # nothing of the kind is kept here


def test_a_grant_permits_its_scope_and_below_and_reading_its_ancestors() -> None:
    editor = [grant("editor", DEPARTMENT)]
    assert permitted_scopes(editor, LINEAGES, "environments", "create") == {DEPARTMENT, PROJECT}
    assert permitted_scopes(editor, LINEAGES, "environments", "read") == {
        TENANT,
        CLUSTER,
        DEPARTMENT,
        PROJECT,
    }
    assert permitted_scopes(editor, LINEAGES, "project", "create") == set()
    assert permitted_scopes(editor, LINEAGES, "workloads", "update") == set()  # never offered


def test_service_accounts_belong_to_the_tenant_alone() -> None:
    cluster_admin = [grant("admin", CLUSTER)]
    assert permitted_scopes(cluster_admin, LINEAGES, "service-account", "read") == set()
    assert held_actions(cluster_admin, LINEAGES, "service-account") == []
    tenant_admin = [grant("admin", TENANT)]
    assert permitted_scopes(tenant_admin, LINEAGES, "apps", "create") == {TENANT}
    assert permitted_scopes(tenant_admin, LINEAGES, "project", "delete") == set(LINEAGES)


def test_a_grant_on_a_deleted_unit_permits_nothing() -> None:
    gone = [grant("admin", DELETED)]
    assert all(not permitted_scopes(gone, LINEAGES, "templates", a) for a in ACTIONS)
    assert held_actions(gone, LINEAGES, "templates") == []


ROLES: list[Role] = ["viewer", "submitter", "editor", "admin"]
SCOPES = [TENANT, CLUSTER, DEPARTMENT, PROJECT, OTHER_PROJECT, DELETED]
grants = st.lists(
    st.builds(
        lambda role, scope: Grant(role=role, scope_kind=scope.kind, scope_id=scope.id or "tenant"),
        st.sampled_from(ROLES),
        st.sampled_from(SCOPES),
    ),
    max_size=4,
)


@given(grants, st.sampled_from([*CATALOGUE, "apps", "nodes"]))
def test_the_summary_holds_an_action_exactly_where_some_scope_permits_it(
    held: list[Grant], resource: str
) -> None:
    somewhere = [a for a in ACTIONS if permitted_scopes(held, LINEAGES, resource, a)]
    assert held_actions(held, LINEAGES, resource) == somewhere
