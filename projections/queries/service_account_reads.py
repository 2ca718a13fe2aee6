"""Service accounts (applications) from their catalogue."""

from uuid import UUID

from projections import application_catalogue
from projections.application_catalogue import ApplicationSummary
from projections.queries import Reads


async def every(reads: Reads) -> list[ApplicationSummary]:
    async with reads.connection() as conn:
        return await application_catalogue.list_applications(conn)


async def one(reads: Reads, application_id: UUID) -> ApplicationSummary | None:
    async with reads.connection() as conn:
        return await application_catalogue.get_application(conn, application_id)
