"""The template use cases against fakes of their ports (tests/fakes.py), as fast as the domain's
own tests: what a create, an update, a patch and a deletion decide, and that a refusal writes
nothing."""

from typing import Any
from uuid import UUID, uuid4

import msgspec
import pytest

from domain.commands import (
    CreateAsset,
    CreateTemplate,
    DeleteAsset,
    DeleteTemplate,
    PatchTemplate,
    UpdateAsset,
    UpdateTemplate,
)
from domain.events import (
    ApplicationCreated,
    ApplicationRoleGranted,
    EventMetadata,
    TemplateCreated,
    TemplateUpdated,
)
from domain.org_units import UnknownScopeError
from domain.specs import EnvironmentSpec, WorkloadSupportedTypes
from domain.template_rules import InvalidTemplateError
from domain.templates import TemplateBody
from domain.values import AccessRule, Grant, ScopeRef
from services import assets, templates
from services.errors import (
    InvalidRequestError,
    NameTakenError,
    NotPermittedError,
    PreconditionFailedError,
)
from services.ports.event_store import Append
from tests.fakes import InMemoryStreams

SYSTEM = EventMetadata(actor_subject="setup", actor_kind="system")
TENANT = ScopeRef("tenant")


def body(**fields: Any) -> TemplateBody:
    return msgspec.convert(
        {"spec": {"distributedFramework": "PyTorch", "numWorkers": 2}, **fields}, TemplateBody
    )


async def environment(
    streams: InMemoryStreams, name: str = "pt", asset_id: UUID | None = None
) -> UUID:
    command = CreateAsset(
        asset_id=asset_id or uuid4(),
        scope=TENANT,
        name=name,
        spec=EnvironmentSpec(image="nvcr.io/nvidia/pytorch:24.05-py3"),
        workload_supported_types=WorkloadSupportedTypes(distributed=True, dist_framework="PyTorch"),
        metadata=SYSTEM,
    )
    return (await assets.create_asset(command, streams=streams, names=streams.lookups)).state.id


async def create(
    streams: InMemoryStreams,
    name: str = "ddp",
    metadata: EventMetadata = SYSTEM,
    **fields: Any,
) -> templates.TemplateView:
    command = CreateTemplate(
        template_id=uuid4(), scope=TENANT, name=name, body=body(**fields), metadata=metadata
    )
    return await templates.create_template(command, streams=streams, names=streams.lookups)


async def viewer(streams: InMemoryStreams) -> EventMetadata:
    """An application that may see the tenant's templates but not edit them."""
    application_id = uuid4()
    grant = Grant(role="viewer", scope_kind="tenant", scope_id="tenant")
    created = ApplicationCreated(
        application_id=application_id, name="reader", client_id="reader", grants=(grant,)
    )
    await streams.append(Append(application_id, [created], expected_version=0, metadata=SYSTEM))
    return EventMetadata(actor_subject=str(application_id), actor_kind="application")


async def test_a_create_links_its_assets_claims_its_name_and_records_what_it_uses() -> None:
    streams = InMemoryStreams()
    env = await environment(streams)
    view = await create(streams, assets={"environment": str(env)})
    (event,) = (await streams.load(view.template.id)).events
    assert isinstance(event, TemplateCreated)
    assert [v.asset_id for v in event.asset_versions] == [env]
    assert view.combined.spec.image == "nvcr.io/nvidia/pytorch:24.05-py3"
    assert streams.uses[view.template.id] == {env: "template ddp"}
    assert view.stamps.created == view.stamps.updated
    with pytest.raises(NameTakenError) as taken:
        await create(streams)
    assert taken.value.field == "/meta/name"


async def test_a_create_naming_an_asset_that_is_not_there_is_refused_and_writes_nothing() -> None:
    streams = InMemoryStreams()
    with pytest.raises(InvalidTemplateError) as refused:
        await create(streams, assets={"environment": str(uuid4())})
    assert refused.value.field == "/assets/environment"
    assert streams.names == {}


async def test_a_create_decided_on_what_moved_on_since_is_decided_again_from_what_is() -> None:
    streams = InMemoryStreams()
    env = await environment(streams)
    streams.remember(env)  # as a process keeps it after a create read it
    newer = EnvironmentSpec(image="nvcr.io/nvidia/pytorch:25.01-py3")
    await assets.update_asset(
        UpdateAsset(asset_id=env, name="pt", spec=newer, metadata=SYSTEM),
        streams=streams,
        names=streams.lookups,
    )
    view = await create(streams, assets={"environment": str(env)})
    assert view.combined.spec.image == "nvcr.io/nvidia/pytorch:25.01-py3"
    (event,) = (await streams.load(view.template.id)).events
    assert isinstance(event, TemplateCreated)
    assert [v.version for v in event.asset_versions] == [2]


async def test_a_refusal_is_never_made_on_what_may_have_moved_on() -> None:
    streams = InMemoryStreams()
    absent = uuid4()
    streams.remember(absent)  # kept with no events: no such asset, back then
    await environment(streams, asset_id=absent)
    view = await create(streams, assets={"environment": str(absent)})
    assert [v.asset_id for v in view.template.asset_versions] == [absent]


async def test_a_refusal_from_memory_made_good_from_the_store_is_not_made_from_memory_again() -> (
    None
):
    streams = InMemoryStreams()
    reader = await viewer(streams)  # may not create templates...
    actor = UUID(reader.actor_subject)
    streams.remember(actor)
    editor = Grant(role="editor", scope_kind="tenant", scope_id="tenant")
    granted = ApplicationRoleGranted(application_id=actor, rule=AccessRule(rule_id=1, grant=editor))
    await streams.append(
        Append(actor, [granted], expected_version=1, metadata=SYSTEM)
    )  # ...until now
    await create(streams, metadata=reader)  # refused from memory, then made from the store
    assert streams.kept[actor].version == 2  # the fresh read brought memory up to date


async def test_an_asset_a_template_uses_cannot_be_deleted_until_the_template_is() -> None:
    streams = InMemoryStreams()
    env = await environment(streams)
    view = await create(streams, assets={"environment": str(env)})
    deletion = DeleteAsset(asset_id=env, kind="environment", metadata=SYSTEM)
    with pytest.raises(Exception, match="template ddp"):
        await assets.delete_asset(deletion, streams=streams)
    await templates.delete_template(
        DeleteTemplate(template_id=view.template.id, metadata=SYSTEM), streams=streams
    )
    await assets.delete_asset(deletion, streams=streams)
    with pytest.raises(InvalidTemplateError):  # and a deleted asset is no longer linked
        await create(streams, name="later", assets={"environment": str(env)})


async def test_a_patch_merges_what_it_sends_ignores_nulls_and_clears_what_it_names() -> None:
    streams = InMemoryStreams()
    view = await create(
        streams, spec={"distributedFramework": "PyTorch", "numWorkers": 2, "args": "a"}
    )
    patch = {
        "meta": {"name": None, "description": "tuned"},
        "spec": {"numWorkers": 4, "distributedFramework": None},
        "masterSpecSameAsWorker": None,
        "fieldsToClear": ["spec.args"],
    }
    command = PatchTemplate(template_id=view.template.id, patch=patch, metadata=SYSTEM)
    patched = await templates.patch_template(command, streams=streams, names=streams.lookups)
    spec = patched.template.body.spec
    assert (spec.num_workers, spec.distributed_framework, spec.args) == (4, "PyTorch", None)
    assert (patched.template.meta.name, patched.template.meta.description) == ("ddp", "tuned")
    assert isinstance((await streams.load(view.template.id)).events[-1], TemplateUpdated)


@pytest.mark.parametrize(
    ("patch", "field"),
    [
        ({"colour": "red"}, "/colour"),
        ({"meta": {"scopeType": "project"}}, "/meta"),
        ({"fieldsToClear": ["spec.notAField"]}, "/fieldsToClear/0"),
        ({"spec": {"numWorkers": "four"}}, "/spec/numWorkers"),
    ],
)
async def test_a_patch_that_is_not_one_is_refused_naming_its_field(
    patch: dict[str, Any], field: str
) -> None:
    streams = InMemoryStreams()
    view = await create(streams)
    command = PatchTemplate(template_id=view.template.id, patch=patch, metadata=SYSTEM)
    with pytest.raises(InvalidRequestError) as refused:
        await templates.patch_template(command, streams=streams, names=streams.lookups)
    assert refused.value.field == field
    assert (await streams.load(view.template.id)).version == 1


async def test_an_update_after_a_stale_version_or_by_a_viewer_is_refused() -> None:
    streams = InMemoryStreams()
    view = await create(streams)
    stale = UpdateTemplate(
        template_id=view.template.id, name="ddp", body=body(), expected_version=7, metadata=SYSTEM
    )
    with pytest.raises(PreconditionFailedError):
        await templates.update_template(stale, streams=streams, names=streams.lookups)
    by_viewer = msgspec.structs.replace(
        stale, expected_version=None, metadata=await viewer(streams)
    )
    with pytest.raises(NotPermittedError):
        await templates.update_template(by_viewer, streams=streams, names=streams.lookups)
    assert (await streams.load(view.template.id)).version == 1


async def test_an_update_that_changes_nothing_writes_nothing_and_keeps_its_stamps() -> None:
    streams = InMemoryStreams()
    view = await create(streams)
    same = UpdateTemplate(template_id=view.template.id, name="ddp", body=body(), metadata=SYSTEM)
    again = await templates.update_template(same, streams=streams, names=streams.lookups)
    assert (await streams.load(view.template.id)).version == 1
    assert again.stamps == view.stamps


async def test_a_name_is_available_unless_a_template_of_the_scope_holds_it() -> None:
    streams = InMemoryStreams()
    await create(streams, name="ddp")
    fields = ("/scopeId", "/templateName")
    check = templates.check_name_available
    reader = await viewer(streams)
    await check(TENANT, "other", reader, streams=streams, holder=streams.holder, fields=fields)
    with pytest.raises(NameTakenError) as taken:
        await check(TENANT, "ddp", reader, streams=streams, holder=streams.holder, fields=fields)
    assert taken.value.field == "/templateName"
    nowhere = ScopeRef("project", str(uuid4()))  # not there: unknown, its names not told
    with pytest.raises(UnknownScopeError) as unknown:
        await check(nowhere, "ddp", reader, streams=streams, holder=streams.holder, fields=fields)
    assert unknown.value.field == "/scopeId"
