"""Data volumes from their catalogue, with the names of their projects."""

from uuid import UUID

from projections import data_volume_catalogue, org_units
from projections.data_volume_catalogue import DataVolumeRow
from projections.queries import Reads


async def every(reads: Reads) -> tuple[list[DataVolumeRow], dict[str, str]]:
    """Every data volume, and the names of their projects by id."""
    async with reads.connection() as conn:
        rows = await data_volume_catalogue.list_all(conn)
        names = await org_units.names_of(conn, "project", {row.project_id for row in rows})
    return rows, names


async def one(reads: Reads, datavolume_id: UUID) -> DataVolumeRow | None:
    async with reads.connection() as conn:
        return await data_volume_catalogue.get_one(conn, datavolume_id)
