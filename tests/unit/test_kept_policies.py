"""A lineage's effective policy is kept exactly while the policies' epoch holds: the same epoch
reads nothing again, a moved one reads afresh, and without an epoch every read asks."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import msgspec

from domain.values import ScopeRef
from projections.queries.policy_reads import KeptPolicies

LINEAGE = (ScopeRef("project", "7"), ScopeRef("department", "3"), ScopeRef("tenant", ""))
RULES = {"worker": {"compute": {"gpuDevicesRequest": {"max": 4}}}}


class Catalogue:
    """The policies' read model as one row at the project, its rules changed by the test."""

    def __init__(self) -> None:
        self.reads = 0
        self.rules: dict[str, Any] = RULES

    async def fetch(self, sql: str, *args: object) -> list[Any]:
        self.reads += 1
        body = msgspec.json.encode({"rules": self.rules}).decode()
        return [{"policy_id": "00000000-0000-0000-0000-000000000001", "name": "p",
                 "scope_kind": "project", "scope_id": "7", "cluster_id": None,
                 "department_id": None, "project_id": "7", "body": body, "created_at": None,
                 "created_by": "a", "updated_at": None, "updated_by": "a"}]  # fmt: skip

    def connection(self, operation: str | None = None) -> Any:
        return self._connection()

    @asynccontextmanager
    async def _connection(self) -> AsyncIterator["Catalogue"]:
        yield self


async def test_an_epoch_keeps_the_policy_read_under_it() -> None:
    catalogue, kept = Catalogue(), KeptPolicies()
    first, digest = await kept.effective(catalogue, LINEAGE, 10)
    assert first.rules
    assert catalogue.reads == 1
    assert (await kept.effective(catalogue, LINEAGE, 10)) == (first, digest)
    assert catalogue.reads == 1
    catalogue.rules = {}
    moved, moved_digest = await kept.effective(catalogue, LINEAGE, 11)
    assert not moved.rules
    assert moved_digest != digest
    assert catalogue.reads == 2


async def test_without_an_epoch_every_read_asks() -> None:
    catalogue, kept = Catalogue(), KeptPolicies()
    for reads in (1, 2):
        policy, _ = await kept.effective(catalogue, LINEAGE, None)
        assert policy.rules
        assert catalogue.reads == reads
