"""What a template's cluster holds that decides whether the template can run there: the names of
its node pools (none registered: none checked, as before pools were kept). The read model keeps
them per cluster (projections/template_catalogue.py); `issues` is what `runnable` says of them."""

from typing import Final

import msgspec

from domain import node_pools
from domain.template_specs import DistributedTemplateSpec, MasterTemplateSpec


class ClusterFacts(msgspec.Struct, frozen=True, kw_only=True):
    node_pools: frozenset[str] = frozenset()


NOTHING: Final = ClusterFacts()


def issues(
    spec: DistributedTemplateSpec,
    master: MasterTemplateSpec | None,
    same_as_worker: bool,
    facts: ClusterFacts,
) -> list[str]:
    """Why combined specs cannot run on their cluster as it now is: pools it no longer has."""
    specs = [("/spec", spec), ("/master/spec", None if same_as_worker else master)]
    return node_pools.missing(specs, facts.node_pools)
