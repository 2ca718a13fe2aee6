"""A command sent without If-Match is about an outcome: when another writer (the fan-out, the
submitter) appends to its stream between its read and its append, it is decided again on the
stream as it now is. With If-Match it is refused, as the version it named has gone."""

import ast
import importlib
import inspect
from collections.abc import Awaitable, Callable
from pathlib import Path
from uuid import UUID

import msgspec
import pytest

import domain.commands
from domain.commands import DeleteTemplate, PatchTemplate, UpdateAsset, UpdateTemplate
from domain.events import TemplateDeleted, TemplateUpdated
from domain.specs import EnvironmentSpec
from services import assets, races, templates
from services.errors import PreconditionFailedError, VersionConflictError
from services.ports.event_store import Append, AppendResult
from tests.fakes import InMemoryStreams
from tests.unit.test_template_use_cases import SYSTEM, body, create, environment

SERVICES = Path(__file__).parents[2] / "services"


class RacedStreams(InMemoryStreams):
    """Streams where, before each of the next `races` appends to `target`, another writer
    appends to it first (as the fan-out does to a template that links a changed asset)."""

    def __init__(self) -> None:
        super().__init__()
        self.target: UUID | None = None
        self.races = 0
        self.racer: Callable[[], Awaitable[None]] | None = None

    async def append(self, asked: Append) -> AppendResult:
        if asked.stream_id == self.target and self.races and self.racer is not None:
            self.races -= 1
            await self.racer()
        return await super().append(asked)


async def raced_template(races_: int) -> tuple[RacedStreams, UUID]:
    """A template whose next `races_` appends each lose to a background edit of its
    description."""
    streams = RacedStreams()
    template_id = (await create(streams)).template.id
    edits = iter(range(1000))

    async def background() -> None:
        current = await InMemoryStreams.load(streams, template_id)
        event = TemplateUpdated(
            template_id=template_id,
            name="ddp",
            description=f"edit {next(edits)}",
            spec=body().spec,
        )
        await InMemoryStreams.append(
            streams,
            Append(template_id, [event], expected_version=current.version, metadata=SYSTEM),
        )

    streams.target, streams.races, streams.racer = template_id, races_, background
    return streams, template_id


async def test_an_edit_without_if_match_that_loses_races_is_decided_again() -> None:
    streams, template_id = await raced_template(3)
    patch = {"spec": {"numWorkers": 4}}
    command = PatchTemplate(template_id=template_id, patch=patch, metadata=SYSTEM)
    patched = await templates.patch_template(command, streams=streams, names=streams.lookups)
    assert patched.template.body.spec.num_workers == 4
    stream = await streams.load(template_id)
    assert stream.version == 1 + 3 + 1  # the create, three background edits, the patch
    last = stream.events[-1]
    assert isinstance(last, TemplateUpdated)
    assert last.description == "edit 2"  # decided on what the last race left


async def test_a_delete_without_if_match_that_loses_a_race_deletes() -> None:
    streams, template_id = await raced_template(1)
    command = DeleteTemplate(template_id=template_id, metadata=SYSTEM)
    await templates.delete_template(command, streams=streams)
    assert isinstance((await streams.load(template_id)).events[-1], TemplateDeleted)


async def test_an_edit_with_if_match_that_loses_a_race_is_refused_naming_both_versions() -> None:
    streams, template_id = await raced_template(1)
    command = UpdateTemplate(
        template_id=template_id,
        name="ddp",
        body=body(spec={"distributedFramework": "PyTorch", "numWorkers": 8}),
        expected_version=1,
        metadata=SYSTEM,
    )
    with pytest.raises(PreconditionFailedError) as refused:
        await templates.update_template(command, streams=streams, names=streams.lookups)
    assert (refused.value.expected, refused.value.actual) == (1, 2)
    assert (await streams.load(template_id)).version == 2  # only the background edit


async def test_an_asset_update_that_loses_a_race_is_decided_again() -> None:
    streams = RacedStreams()
    env = await environment(streams)
    newer = EnvironmentSpec(image="nvcr.io/nvidia/pytorch:25.01-py3")

    async def background() -> None:
        other = EnvironmentSpec(image="nvcr.io/nvidia/pytorch:24.10-py3")
        update = UpdateAsset(asset_id=env, name="pt", spec=other, metadata=SYSTEM)
        streams.races, racer = 0, streams.racer  # the racer's own append is not raced
        await assets.update_asset(update, streams=streams, names=streams.lookups)
        streams.racer = racer

    streams.target, streams.races, streams.racer = env, 1, background
    command = UpdateAsset(asset_id=env, name="pt", spec=newer, metadata=SYSTEM)
    updated = await assets.update_asset(command, streams=streams, names=streams.lookups)
    assert msgspec.to_builtins(updated.state.spec)["image"].endswith("25.01-py3")


async def test_a_command_losing_every_race_answers_the_conflict_with_its_versions() -> None:
    streams, template_id = await raced_template(races.ATTEMPTS)
    command = DeleteTemplate(template_id=template_id, metadata=SYSTEM)
    with pytest.raises(VersionConflictError) as lost:
        await templates.delete_template(command, streams=streams)
    assert lost.value.expected == races.ATTEMPTS
    assert lost.value.actual == races.ATTEMPTS + 1


def test_every_use_case_of_a_command_is_decided_again() -> None:
    """Each public use case whose first parameter is a command of domain/commands.py, and the
    tenant settings' change, goes through the one retry of services/races.py."""
    commands = {
        name
        for name, found in inspect.getmembers(domain.commands, inspect.isclass)
        if found.__module__ == domain.commands.__name__
    }
    deciding: list[str] = []
    undecided: list[str] = []
    for path in sorted(SERVICES.glob("*.py")):
        module = importlib.import_module(f"services.{path.stem}")
        for node in ast.parse(path.read_text()).body:
            if not isinstance(node, ast.AsyncFunctionDef) or node.name.startswith("_"):
                continue
            first = node.args.args[0].annotation if node.args.args else None
            if node.name != "change_settings" and (
                first is None or ast.unparse(first) not in commands
            ):
                continue
            decided = races.is_decided_again(getattr(module, node.name))
            (deciding if decided else undecided).append(f"{path.stem}.{node.name}")
    assert undecided == []
    assert len(deciding) >= 30  # the test finds the use cases it is about
