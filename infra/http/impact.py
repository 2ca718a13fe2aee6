"""Impact preview: which templates a proposed environment or compute-resource update would
change, and how (`POST .../{id}/impact` with the body an update would send, refused as the
update would refuse it). Writes nothing."""

from typing import Final
from uuid import UUID

from litestar import post
from litestar.di import NamedDependency
from litestar.params import FromPath, JSONBody

from domain.specs import ComputeSpec
from infra.http.adapters import Adapters
from infra.http.asset_schemas import (
    ComputeUpdateRequest,
    EnvironmentUpdateRequest,
)
from infra.http.callers import Caller
from infra.http.consistency import READS
from infra.http.impact_actions import ImpactReport, impact_of


@post(
    "/api/v1/asset/environment/{asset_id:uuid}/impact",
    status_code=200,
    tags=["Environment"],
    opt={READS: True},  # a preview: the templates it names hold the caller's own writes
)
async def environment_impact(
    request: Caller,
    asset_id: FromPath[UUID],
    data: JSONBody[EnvironmentUpdateRequest],
    adapters: NamedDependency[Adapters],
) -> ImpactReport:
    return await impact_of(
        request,
        "environment",
        asset_id,
        data.meta,
        data.spec,
        adapters.streams,
        adapters.reads,
        adapters.names,
    )


@post(
    "/api/v1/asset/compute/{asset_id:uuid}/impact",
    status_code=200,
    tags=["Compute"],
    opt={READS: True},  # a preview: the templates it names hold the caller's own writes
)
async def compute_impact(
    request: Caller,
    asset_id: FromPath[UUID],
    data: JSONBody[ComputeUpdateRequest],
    adapters: NamedDependency[Adapters],
) -> ImpactReport:
    spec = data.spec or ComputeSpec()
    return await impact_of(
        request,
        "compute",
        asset_id,
        data.meta,
        spec,
        adapters.streams,
        adapters.reads,
        adapters.names,
    )


IMPACT_ROUTES: Final = (environment_impact, compute_impact)
