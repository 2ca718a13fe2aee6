"""A lineage's effective policy is kept exactly while the policies' epoch holds: the same epoch
reads nothing again, a moved one reads afresh, and without an epoch every read asks."""

from domain.values import ScopeRef
from projections.queries.policy_reads import KeptPolicies
from tests.fakes import OnePolicyReads

LINEAGE = (ScopeRef("project", "7"), ScopeRef("department", "3"), ScopeRef("tenant", ""))
RULES = {"worker.compute.gpuDevicesRequest": {"max": 4}}


async def test_an_epoch_keeps_the_policy_read_under_it() -> None:
    catalogue, kept = OnePolicyReads(RULES), KeptPolicies()
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
    catalogue, kept = OnePolicyReads(RULES), KeptPolicies()
    for reads in (1, 2):
        policy, _ = await kept.effective(catalogue, LINEAGE, None)
        assert policy.rules
        assert catalogue.reads == reads
