"""The event contract: the committed AsyncAPI snapshot is what the code generates, every reference
in it resolves, and no change breaks a subscriber (a removed event type, a removed or retyped
field, a new required field) unless the old tag lives on in domain/legacy_events.py with an
upcaster."""

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from domain.events import event_tag
from domain.legacy_events import LEGACY
from infra.jetstream.asyncapi import asyncapi
from infra.settings import NatsSettings

SNAPSHOT = Path(__file__).parents[1] / "data" / "contract" / "asyncapi.json"
EXPORT = "trainplate contract export --output tests/data/contract/asyncapi.json"
Schema = dict[str, Any]


def current() -> Schema:
    document: Schema = json.loads(json.dumps(asyncapi(), sort_keys=True))
    return document


def breaking_changes(old: Schema, new: Schema, legacy_tags: set[str]) -> list[str]:
    """What a subscriber of `old` would trip over in `new`."""
    found: list[str] = []
    old_messages = old["components"]["messages"]
    new_messages = new["components"]["messages"]
    for key, message in old_messages.items():
        tag = message["name"]
        if key not in new_messages:
            if tag not in legacy_tags:
                found.append(f"{tag}: removed without an upcaster")
            continue
        before = _resolve(old, message["payload"])
        after = _resolve(new, new_messages[key]["payload"])
        _compare(tag, before, after, old, new, found, depth=0)
    return found


def _resolve(document: Schema, node: Schema) -> Schema:
    while "$ref" in node:
        node = document["components"]["schemas"][node["$ref"].rsplit("/", 1)[-1]]
    return node


def _kinds(document: Schema, node: Schema) -> set[str]:
    """The types a node admits, with references named (a field may not change between them)."""
    if "$ref" in node:
        return {node["$ref"].rsplit("/", 1)[-1]}
    if "anyOf" in node:
        return set().union(*(_kinds(document, n) for n in node["anyOf"]))
    kind = node.get("type")
    return {kind} if isinstance(kind, str) else set(kind or ["any"])


def _compare(
    at: str, old: Schema, new: Schema, old_doc: Schema, new_doc: Schema, found: list[str],
    depth: int,
) -> None:  # fmt: skip
    if depth > 12:
        return
    old_props, new_props = old.get("properties", {}), new.get("properties", {})
    for name, old_field in old_props.items():
        if name not in new_props:
            found.append(f"{at}.{name}: removed")
            continue
        before, after = _kinds(old_doc, old_field), _kinds(new_doc, new_props[name])
        if not before <= after:
            found.append(f"{at}.{name}: retyped from {sorted(before)} to {sorted(after)}")
            continue
        inner_old, inner_new = _resolve(old_doc, old_field), _resolve(new_doc, new_props[name])
        if "properties" in inner_old:  # an object (or a reference to one): look inside
            _compare(f"{at}.{name}", inner_old, inner_new, old_doc, new_doc, found, depth + 1)
    added = set(new.get("required", [])) - set(old.get("required", [])) - set(old_props)
    for name in sorted(added):
        found.append(f"{at}.{name}: a new required field (add fields with a default)")


def test_the_committed_snapshot_is_the_generated_contract() -> None:
    snapshot = json.loads(SNAPSHOT.read_text())
    assert snapshot == current(), f"the event contract changed: review it, then run `{EXPORT}`"


def test_nothing_breaks_a_subscriber_of_the_snapshot() -> None:
    legacy = {event_tag(cls) for cls in LEGACY}
    assert breaking_changes(json.loads(SNAPSHOT.read_text()), current(), legacy) == []


def test_the_check_catches_removals_retypes_and_new_required_fields() -> None:
    old = current()
    new = copy.deepcopy(old)
    schemas = new["components"]["schemas"]
    del new["components"]["messages"]["template_deleted_v1"]
    schemas["TemplateLinkedAssetUpdated"]["properties"]["assetVersion"] = {"type": "string"}
    del schemas["WorkloadFailed"]["properties"]["reason"]
    schemas["ClusterRenamed"]["properties"]["region"] = {"type": "string"}
    schemas["ClusterRenamed"]["required"].append("region")
    schemas["WorkloadSnapshot"]["properties"]["templateVersion"] = {"type": "string"}
    found = breaking_changes(old, new, set())
    assert found == [
        "cluster.renamed.v1.region: a new required field (add fields with a default)",
        "template.deleted.v1: removed without an upcaster",
        "template.linked_asset_updated.v1.assetVersion: retyped from ['integer'] to ['string']",
        "workload.failed.v1.reason: removed",
        "workload.requested.v1.snapshot.templateVersion: retyped from ['integer', 'null'] to "
        "['string']",
    ]
    # A removed tag is fine once it is a legacy type with an upcaster.
    assert "template.deleted.v1: removed without an upcaster" not in breaking_changes(
        old, new, {"template.deleted.v1"}
    )


def test_every_reference_resolves_and_every_subject_follows_the_relay() -> None:
    document = current()
    assert document["asyncapi"] == "3.0.0"
    text = json.dumps(document)
    for ref in {part.split('"')[0] for part in text.split('"$ref": "')[1:]}:
        node: Any = document
        for step in ref.removeprefix("#/").split("/"):
            node = node[step]
    channels = document["channels"]
    for key, operation in document["operations"].items():
        assert operation["action"] == "receive"
        assert operation["channel"]["$ref"] == f"#/channels/{key.removeprefix('receive_')}"
    for key, channel in channels.items():
        tag = document["components"]["messages"][key]["name"]
        stream_type, fact, _ = tag.split(".")
        assert channel["address"] == f"trainplate.{stream_type}.{{streamId}}.{fact}"
    assert len(channels) == len(document["components"]["messages"]) >= 40


def test_a_broker_that_asks_for_a_password_is_described_without_it() -> None:
    document = asyncapi(NatsSettings(url="nats://trainplate:s3cret-pw@10.0.0.5:4222"))
    server = document["servers"]["jetstream"]
    assert server["host"] == "10.0.0.5:4222"
    assert server["security"] == [{"$ref": "#/components/securitySchemes/natsUser"}]
    assert document["components"]["securitySchemes"]["natsUser"]["type"] == "userPassword"
    assert "s3cret-pw" not in json.dumps(document)
    assert (
        "security" not in asyncapi(NatsSettings(url="nats://10.0.0.5:4222"))["servers"]["jetstream"]
    )


@pytest.mark.parametrize("tag", ["template.created.v1", "workload.requested.v1"])
def test_a_message_names_its_payload_schema(tag: str) -> None:
    document = current()
    message = document["components"]["messages"][tag.replace(".", "_")]
    payload = _resolve(document, message["payload"])
    assert payload["properties"]["type"]["enum"] == [tag]
