"""Run:ai's audit log: `GET /api/v1/audit/log`, a page of entries in a time range, and `.../file`,
the same as a CSV or JSON download; for holders of `events-history` (tenant admins). Its entries:
projections/audit_log.py, infra/postgres/audit_records.py. See docs/audit.md."""

import csv
import io
import json
from datetime import UTC, datetime
from typing import Annotated, Any, Final, Literal
from uuid import UUID

import msgspec
from litestar import Response, get
from litestar.di import NamedDependency
from litestar.params import QueryParameter

from domain.permissions import CATALOGUE
from domain.values import TENANT
from infra.http.adapters import Adapters
from infra.http.callers import Caller
from infra.http.lists import FilterBy, conditions_of
from infra.http.openapi_document import NOT_NEGATIVE
from infra.http.permissions import TENANT_ID
from projections.audit_log_pages import GRAMMAR, AuditEntry, SortField
from projections.list_grammar import in_utc
from projections.queries import audit_log_reads as queries
from services.access import require_held
from services.errors import InvalidRequestError

BASE: Final = "/api/v1/audit/log"
TAGS: Final = ["AuditLogs"]
OCTETS: Final = "application/octet-stream"  # both downloads, as Run:ai's document has them
# A cell a spreadsheet would take for a formula is written as text (a leading apostrophe).
_FORMULA_STARTS: Final = ("=", "+", "-", "@", "\t", "\r")

# Not optional: the served document keeps a bound only on a parameter that is (Litestar).
SAMPLES: Final = 20
Samples = Annotated[int, QueryParameter(name="numberOfSamples", ge=0, le=1000)]
Limit = Annotated[int, QueryParameter(ge=0, le=1000)]


class AuditLog(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Run:ai's `AuditLog`, its members named as its document names them."""

    id: UUID
    timestamp: datetime
    tenant_id: str
    subject: str
    subject_type: str
    source_ip: str | None = None
    action: str
    http_method: str | None = None
    url: str | None = None
    entity_type: str | None = None
    entity_name: str | None = None
    entity_id: str | None = None
    result: str
    http_status_code: int | None = None
    cluster_name: str | None = None
    cluster_id: UUID | None = None
    request_id: str | None = None
    metadata: dict[str, str] | None = None


class AuditLogPage(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    total: int
    next: int | None = None
    audit_logs: list[AuditLog]


_decode_metadata = msgspec.json.Decoder(dict[str, str]).decode


def shown(entry: AuditEntry) -> AuditLog:
    """An entry on the wire: text it lacks left out; a request id that is no UUID (a client's
    own) goes to the metadata, Run:ai's `request_id` being one."""
    metadata = _decode_metadata(entry.metadata)
    request = entry.request_id or None
    if request is not None and not _is_uuid(request):
        metadata["requestId"], request = request, None
    return AuditLog(
        id=entry.id,
        timestamp=entry.logged_at,
        tenant_id=TENANT_ID,
        subject=entry.subject,
        subject_type=entry.subject_type,
        source_ip=entry.source_ip or None,
        action=entry.action,
        http_method=entry.http_method or None,
        url=entry.url or None,
        entity_type=entry.entity_type or None,
        entity_name=entry.entity_name or None,
        entity_id=entry.entity_id or None,
        result=entry.result,
        http_status_code=entry.http_status_code,
        cluster_name=entry.cluster_name or None,
        cluster_id=entry.cluster_id,
        request_id=request,
        metadata=metadata or None,
    )


def _is_uuid(text: str) -> bool:
    try:
        UUID(text)
    except ValueError:
        return False
    return True


def _range(start: datetime, end: datetime) -> tuple[datetime, datetime]:
    """From `start` up to `end` (a time without a zone is UTC); neither past year 9999."""
    found = []
    for name, moment in (("start", start), ("end", end)):
        moment = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
        if in_utc(moment) is None:
            raise InvalidRequestError(name, "a time whose UTC falls in the years 1 to 9999")
        found.append(moment)
    if found[0] > found[1]:
        raise InvalidRequestError("start", "must not be after end")
    return found[0], found[1]


def _samples(number_of_samples: int, limit: int) -> int:
    """Run:ai's `numberOfSamples` (20 unless given), or `limit` as the other lists call it."""
    if SAMPLES != number_of_samples != limit != SAMPLES:
        raise InvalidRequestError("limit", "is numberOfSamples by another name: send one")
    return number_of_samples if number_of_samples != SAMPLES else limit


def _allowed(request: Caller) -> None:
    """Run:ai's `events-history`: read by a tenant-wide grant of the role it needs."""
    role = CATALOGUE["events-history"]["read"]
    require_held(request.user.grants, (TENANT,), role, "read the audit log")


@get(BASE, tags=TAGS, operation_id="getAuditLogs")
async def get_audit_logs(
    request: Caller,
    adapters: NamedDependency[Adapters],
    start: Annotated[datetime, QueryParameter()],
    end: Annotated[datetime, QueryParameter()],
    offset: Annotated[int, NOT_NEGATIVE] = 0,
    number_of_samples: Samples = SAMPLES,
    limit: Limit = SAMPLES,
    sort_order: Annotated[Literal["asc", "desc"], QueryParameter(name="sortOrder")] = "asc",
    sort_by: Annotated[SortField | None, QueryParameter(name="sortBy")] = None,
    filter_by: FilterBy = None,
) -> AuditLogPage:
    """The entries from `start` up to `end` that `filterBy` selects, in `sortBy` order (the
    time's by default), from `offset`; `total` counts them all, `next` is the next offset."""
    _allowed(request)
    since, until = _range(start, end)
    samples = _samples(number_of_samples, limit)
    entries, more, total = await queries.page(
        adapters.reads,
        since,
        until,
        conditions_of(GRAMMAR, filter_by),
        sort_by=sort_by or "timestamp",
        descending=sort_order == "desc",
        offset=offset,
        limit=samples,
    )
    following = offset + samples if more and samples > 0 else None
    return AuditLogPage(total=total, next=following, audit_logs=[shown(e) for e in entries])


@get(f"{BASE}/file", tags=TAGS, operation_id="downloadAuditLogs", media_type=OCTETS)
async def download_audit_logs(
    request: Caller,
    adapters: NamedDependency[Adapters],
    start: Annotated[datetime, QueryParameter()],
    end: Annotated[datetime, QueryParameter()],
    file_type: Annotated[str | None, QueryParameter(name="file_type")] = None,
    file_type_camel: Annotated[str | None, QueryParameter(name="fileType")] = None,
    number_of_samples: Samples = SAMPLES,
    filter_by: FilterBy = None,
) -> Response[bytes]:
    """The entries `get_audit_logs` would list first, oldest first, as a file: CSV (a header
    row, then one row each; the metadata as JSON) or JSON (an array of Run:ai's AuditLog).
    The document names the type `file_type`; Run:ai's client sends `fileType`: both are read."""
    _allowed(request)
    kind = _file_type(file_type, file_type_camel)
    since, until = _range(start, end)
    entries, _, _ = await queries.page(
        adapters.reads,
        since,
        until,
        conditions_of(GRAMMAR, filter_by),
        sort_by="timestamp",
        descending=False,
        offset=0,
        limit=number_of_samples,
        counted=False,
    )
    logs = [shown(e) for e in entries]
    body = msgspec.json.encode(logs) if kind == "JSON" else _csv(logs)
    name = f"audit-log.{kind.lower()}"
    return Response(
        body,
        media_type=OCTETS,
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )


def _file_type(snake: str | None, camel: str | None) -> Literal["CSV", "JSON"]:
    given = {value.upper() for value in (snake, camel) if value is not None}
    if len(given) > 1:
        raise InvalidRequestError("file_type", "file_type and fileType differ: send one")
    chosen = given.pop() if given else "CSV"
    if chosen == "JSON":
        return "JSON"
    if chosen == "CSV":
        return "CSV"
    raise InvalidRequestError("file_type", "must be CSV or JSON")


def _csv(logs: list[AuditLog]) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(AuditLog.__struct_fields__)
    for log in logs:
        writer.writerow(_cell(getattr(log, field)) for field in AuditLog.__struct_fields__)
    return out.getvalue().encode()


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    text = value.isoformat() if isinstance(value, datetime) else str(value)
    return f"'{text}" if text.startswith(_FORMULA_STARTS) else text


AUDIT_LOG_ROUTES: Final = (get_audit_logs, download_audit_logs)
