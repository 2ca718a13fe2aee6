"""runapy's AuditLogsApi, unmodified, against the running service (as tests/integration/
test_runapy.py runs it): the admin application's template creation and failed sign-ins read
back, filtered and paged, and downloaded; each entry as runapy's own AuditLog model takes it."""

import asyncio
from datetime import UTC, datetime, timedelta

import asyncpg
import pytest
from runai.api_client import ApiClient
from runai.configuration import Configuration
from runai.models import AuditLog, GetAuditLogs200Response
from runai.runai_client import RunaiClient

from tests.integration.test_runapy import (  # `service`: the processes, a fixture
    clients_over,
    register_admin,
    service,  # noqa: F401
    template_journey,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def failed_sign_in(url: str, client_id: str) -> None:
    """A client built with a wrong secret: its login, the first thing it does, is refused (once:
    the client's own retries, which would send it again after a pause, are off)."""
    settings = Configuration(
        client_id=client_id,
        client_secret="not-the-secret",
        runai_base_url=url,
        retry_enabled=False,
    )
    with pytest.raises(ValueError, match="Failed to get access token"):
        RunaiClient(ApiClient(settings))


async def test_runapy_reads_the_audit_log_filtered_and_paged(
    service: list[str],  # noqa: F811
    clean_pool: asyncpg.Pool,
) -> None:
    await register_admin(clean_pool)
    start = datetime.now(UTC) - timedelta(minutes=5)
    client = clients_over(service[:1])
    template_id = await asyncio.to_thread(template_journey, client, 0)
    await asyncio.to_thread(failed_sign_in, service[0], "runapy-admin")
    await asyncio.to_thread(failed_sign_in, service[0], "intruder")
    end = datetime.now(UTC) + timedelta(minutes=5)
    logs = client().audit.audit_logs

    created = logs.get_audit_logs(
        start, end, filter_by=["entity_type==template", "action==create"], number_of_samples=5
    )
    page = GetAuditLogs200Response.from_dict(created.data)
    assert page is not None
    assert page.total == 1
    assert page.audit_logs is not None
    (entry,) = page.audit_logs
    assert (entry.subject, entry.subject_type, entry.entity_id) == (
        "runapy-admin",
        "App",
        template_id,
    )
    assert (entry.entity_name, entry.result, entry.http_method) == ("ddp-0", "Succeeded", "POST")

    pages: list[AuditLog] = []
    offset: int | None = 0
    while offset is not None:
        answer = logs.get_audit_logs(
            start, end, offset=offset, number_of_samples=1, sort_order="desc",
            sort_by="timestamp", filter_by=["action==sign-in", "result==Failed"],
        )  # fmt: skip
        one = GetAuditLogs200Response.from_dict(answer.data)
        assert one is not None
        assert one.total == 2
        assert one.audit_logs is not None
        pages += one.audit_logs
        offset = one.next
    assert [(e.subject, e.http_status_code) for e in pages] == [
        ("intruder", 401),
        ("runapy-admin", 401),
    ]

    downloaded = logs.download_audit_logs(
        start, end, file_type="JSON", filter_by=["action==sign-in"], number_of_samples=100
    )
    entries = [AuditLog.from_dict(e) for e in downloaded.data]
    assert {(e.subject, e.result) for e in entries} >= {
        ("runapy-admin", "Succeeded"),
        ("runapy-admin", "Failed"),
        ("intruder", "Failed"),
    }
