"""A list page is joined from each template's encoded wire: the bytes are those the objects
encode to, compliance issues included (infra/http/template_compliance.py)."""

from datetime import UTC, datetime

import msgspec
from litestar.serialization import encode_json

from domain.combined import Runnable
from domain.template_specs import DistributedTemplateSpec
from infra.http.template_compliance import (
    ComplianceIssueShown,
    encoded_with_issues,
    with_issues,
)
from infra.http.template_schemas import DistributedTemplate, ResponseMeta

SPEC = msgspec.convert({"command": "python train.py", "numWorkers": 2}, DistributedTemplateSpec)
WIRE = DistributedTemplate(
    meta=ResponseMeta(
        id="5b3c7e8e-2f1a-4d4e-9f7b-0c1d2e3f4a5b",
        name="bert",
        description=None,
        workload_type="Distributed",
        scope_type="project",
        scope_id="7",
        cluster_id=None,
        department_id=None,
        project_id=7,
        created_by="ada",
        created_at=datetime(2026, 1, 2, tzinfo=UTC),
        updated_by=None,
        updated_at=None,
    ),
    spec=SPEC,
    runnable=Runnable(is_runnable=False, issue="no image"),
    combined_spec=SPEC,
)


def test_issues_join_the_encoded_template_as_the_object_would_encode() -> None:
    for issues in (
        [],
        [ComplianceIssueShown(field="worker.command", details='must be "x"', rule="canEdit")],
        [ComplianceIssueShown(details="no rule"), ComplianceIssueShown(details="two")],
    ):
        joined = encoded_with_issues(msgspec.Raw(encode_json(WIRE)), encode_json(issues))
        assert bytes(joined) == encode_json(with_issues(WIRE, issues))
