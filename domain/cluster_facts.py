"""What a template's cluster holds that decides whether the template can run there: its node pools
(none registered: none checked) and its storage classes with their configurations. The read model
keeps them per cluster (projections/template_facts.py); `issues` is what `runnable` says."""

from typing import Final

import msgspec

from domain import node_pools, storage_rules
from domain.storage_rules import StorageFacts
from domain.template_specs import DistributedTemplateSpec, MasterTemplateSpec


class ClusterFacts(msgspec.Struct, frozen=True, kw_only=True):
    node_pools: frozenset[str] = frozenset()
    storage: StorageFacts = StorageFacts()


NOTHING: Final = ClusterFacts()


def issues(
    spec: DistributedTemplateSpec,
    master: MasterTemplateSpec | None,
    same_as_worker: bool,
    facts: ClusterFacts,
) -> list[str]:
    """Why combined specs cannot run on their cluster as it now is: pools it no longer has, new
    volumes its storage classes (as now configured) do not allow."""
    own_master = None if same_as_worker else master
    specs = [("/spec", spec), ("/master/spec", own_master)]
    found = node_pools.missing(specs, facts.node_pools)
    for at, replica in specs:
        _, storage = storage_rules.spec_checked(replica, at, facts.storage)
        found += [f"{field}: {reason}" for field, reason in storage]
    return found
