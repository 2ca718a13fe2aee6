"""Read side: one module per read model, each with a NAME, an idempotent apply() and its queries.

The runner (infra/projector.py) feeds every registered projection the global log in order and
commits each batch's read-model rows together with the projection's checkpoint.
"""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from domain.events import RecordedEvent
from projections import (
    access_rules,
    application_catalogue,
    asset_catalogue,
    org_units,
    template_catalogue,
    workload_catalogue,
)
from projections.executor import Executor


@dataclass(frozen=True)
class Projection:
    name: str
    apply: Callable[[Executor, RecordedEvent], Awaitable[None]]


ALL: tuple[Projection, ...] = (
    Projection(application_catalogue.NAME, application_catalogue.apply),
    Projection(org_units.NAME, org_units.apply),
    Projection(asset_catalogue.NAME, asset_catalogue.apply),
    Projection(access_rules.NAME, access_rules.apply),
    Projection(template_catalogue.NAME, template_catalogue.apply),
    Projection(workload_catalogue.NAME, workload_catalogue.apply),
)
