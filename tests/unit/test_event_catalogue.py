"""The stored schema: every tag is unique and well formed, and every stored shape still decodes."""

import re
from pathlib import Path

from domain.events import DomainEvent, event_tag
from infra.serialization import DOMAIN_CODEC, catalogue

GOLDEN = Path(__file__).parents[1] / "data" / "events"
TAG = re.compile(r"^[a-z_]+\.[a-z_]+\.v\d+$")


def test_tags_are_unique_and_read_stream_fact_version() -> None:
    tags = [event_tag(cls) for cls in catalogue(DomainEvent)]
    assert len(tags) == len(set(tags))
    assert all(TAG.match(tag) for tag in tags), tags


def test_every_tag_has_a_golden_stored_payload_that_still_decodes() -> None:
    files = {path.stem: path for path in GOLDEN.glob("*.json")}
    assert set(files) == DOMAIN_CODEC.tags
    for tag, path in files.items():
        event = DOMAIN_CODEC.decode(path.read_bytes())
        assert event_tag(type(event)) == tag
