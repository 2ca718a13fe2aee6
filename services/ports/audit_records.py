"""The audit log's entries that are no event (sign-ins, sign-outs, refused writes): what one
holds, and the port they are kept through, on a hash chain of their own (decision 0031). The
PostgreSQL adapter: infra/postgres/audit_records.py."""

from typing import Protocol
from uuid import UUID

import msgspec


class AuditRecord(msgspec.Struct, frozen=True, kw_only=True):
    """An entry's content, in Run:ai's `AuditLog` terms; '' where it has no such text. Its JSON
    encoding (fields in this order) is what the chain digests: never reorder them."""

    id: UUID
    subject: str
    subject_type: str
    action: str
    result: str
    source_ip: str = ""
    http_method: str = ""
    url: str = ""
    entity_type: str = ""
    entity_name: str = ""
    entity_id: str = ""
    http_status_code: int | None = None
    cluster_id: UUID | None = None
    cluster_name: str = ""
    request_id: str = ""
    metadata: dict[str, str] = msgspec.field(default_factory=dict)


class AuditTrail(Protocol):
    async def append(self, record: AuditRecord) -> None:
        """Keep the record at the chain's head, with the time it was kept."""
        ...
