"""Read side: one module per read model, each with a NAME, an idempotent apply() and its queries.

The runner (infra/followers/projection_runner.py) feeds every registered projection the global
log in order and commits each batch's read-model rows together with the projection's checkpoint.
"""

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from domain.events import RecordedEvent
from projections import (
    access_rules,
    application_catalogue,
    asset_catalogue,
    audit_index,
    audit_log,
    data_volume_catalogue,
    node_pool_catalogue,
    org_units,
    policy_catalogue,
    storage_class_catalogue,
    template_catalogue,
    tenant_settings,
    workload_catalogue,
)
from projections.executor import Executor


@dataclass(frozen=True)
class Projection:
    """`tables`: the read-model tables it alone writes, which a rebuild replaces."""

    name: str
    apply: Callable[[Executor, RecordedEvent], Awaitable[None]]
    tables: tuple[str, ...]
    # Optional: a whole batch at once, with the same effect as `apply` event by event (fewer
    # round trips where many events touch rows alike, as a fan-out's do).
    apply_batch: Callable[[Executor, Sequence[RecordedEvent]], Awaitable[None]] | None = None
    # Optional: the stream types whose events it applies (None: every one). The runner decodes
    # no other event, and passes it by all the same: the checkpoint moves over it.
    streams: frozenset[str] | None = None
    # Which rows `apply` makes: raised whenever a change to it (or to the tables) should reach
    # the rows already there. The projector then rebuilds the read model, blue/green.
    version: int = 1


ALL: tuple[Projection, ...] = (
    Projection(
        application_catalogue.NAME,
        application_catalogue.apply,
        (application_catalogue.NAME,),
        streams=frozenset({"application"}),
        version=1,
    ),
    Projection(
        org_units.NAME,
        org_units.apply,
        (org_units.NAME, "org_units_epoch"),
        streams=frozenset({"cluster", "department", "project"}),
        version=2,  # 2: each unit's totalGpuQuota, as a number and as its text
    ),
    Projection(
        node_pool_catalogue.NAME,
        node_pool_catalogue.apply,
        (node_pool_catalogue.NAME,),
        streams=frozenset({"nodepool"}),
        version=1,
    ),
    Projection(
        storage_class_catalogue.NAME,
        storage_class_catalogue.apply,
        (storage_class_catalogue.NAME, storage_class_catalogue.CONFIGURATIONS),
        streams=frozenset({"storageclass", "storageclassconfig"}),
        version=1,
    ),
    Projection(
        asset_catalogue.NAME,
        asset_catalogue.apply,
        (asset_catalogue.NAME,),
        streams=frozenset({"compute", "credential", "datasource", "environment", "registry"}),
        version=1,
    ),
    Projection(
        access_rules.NAME,
        access_rules.apply,
        (access_rules.NAME,),
        streams=frozenset({"application", "user"}),
        version=1,
    ),
    Projection(
        data_volume_catalogue.NAME,
        data_volume_catalogue.apply,
        (data_volume_catalogue.NAME,),
        streams=frozenset({"datavolume"}),
        version=1,
    ),
    Projection(
        policy_catalogue.NAME,
        policy_catalogue.apply,
        (policy_catalogue.NAME, policy_catalogue.EPOCH),
        streams=frozenset({"policy"}),
        version=1,
    ),
    Projection(
        tenant_settings.NAME,
        tenant_settings.apply,
        (tenant_settings.NAME,),
        streams=frozenset({"tenant"}),
        version=1,
    ),
    Projection(
        template_catalogue.NAME,
        template_catalogue.apply,
        (template_catalogue.NAME, "template_asset_states", "template_cluster_facts"),
        template_catalogue.apply_batch,
        template_catalogue.STREAMS,
        # 2: which rows rest on their cluster's facts (its node pools, storage classes); 3: and
        # on its default class, each class's spec kept (whether it is the default)
        version=3,
    ),
    Projection(
        workload_catalogue.NAME,
        workload_catalogue.apply,
        (workload_catalogue.NAME, "workload_pods"),
        streams=frozenset({"workload"}),
        version=1,
    ),
    Projection(  # every event
        audit_index.NAME, audit_index.apply, audit_index.TABLES, audit_index.apply_batch, version=1
    ),
    Projection(  # every event
        audit_log.NAME, audit_log.apply, audit_log.TABLES, audit_log.apply_batch, version=1
    ),
)
