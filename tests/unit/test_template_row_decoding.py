"""A template row read again at the same version is the decoding made before (rows are frozen,
and every change to one moves its version, its recombination or, rebuilt, its table); another
is decoded anew."""

from datetime import UTC, datetime
from typing import Any
from uuid import uuid4

import msgspec
import pytest

from domain.combined import combine
from domain.template_specs import DistributedTemplateSpec
from domain.templates import TemplateBody
from domain.values import TemplateMeta
from projections.template_catalogue import StoredBody, row_of

_encode = msgspec.json.Encoder().encode


def record(
    template_id: object, version: int, workers: int, recombined: int = 0, table: int = 16384
) -> Any:
    """A row as the catalogue's query returns it (its JSON columns as text), by column name
    as an asyncpg record is read."""
    spec = DistributedTemplateSpec(distributed_framework="PyTorch", num_workers=workers)
    now = datetime(2026, 1, 1, tzinfo=UTC)
    return {
        "template_id": template_id,
        "version": version,
        "recombined": recombined,
        "tableoid": table,
        "meta": _encode(TemplateMeta(name="ddp", scope="tenant")).decode(),
        "body": _encode(StoredBody(spec=spec)).decode(),
        "combined": _encode(combine(TemplateBody(spec=spec), {}, copy_master=False)).decode(),
        "created_at": now,
        "created_by": "a",
        "updated_at": now,
        "updated_by": "a",
    }


def test_a_version_read_again_is_not_decoded_again_and_a_new_one_is() -> None:
    template_id = uuid4()
    first = row_of(record(template_id, 1, workers=2))
    assert row_of(record(template_id, 1, workers=2)) is first
    moved = row_of(record(template_id, 2, workers=5))
    assert moved.template.version == 2
    assert moved.template.body.spec.num_workers == 5
    assert moved.combined.spec.num_workers == 5
    assert moved.combined.master is not None  # made on read, as the row stores none
    assert first.template.body.spec.num_workers == 2


@pytest.mark.parametrize(
    "moved",
    [{"recombined": 1}, {"table": 16385}],
    ids=["worked out again on its cluster's facts", "of a table a rebuild swapped in"],
)
def test_a_row_at_the_same_version_read_anew_is_decoded_again(moved: dict[str, int]) -> None:
    template_id = uuid4()
    first = row_of(record(template_id, 1, workers=2))
    again = row_of(record(template_id, 1, workers=3, **moved))
    assert again is not first
    assert again.combined.spec.num_workers == 3
