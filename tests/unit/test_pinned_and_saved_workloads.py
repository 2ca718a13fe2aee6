"""Against the fakes: a submission pinned to a template version runs that version (from the
template's own stream) and says so, one without a pin says which version it ran; a workload
saved as a template makes one that runs as the workload was submitted."""

from typing import Any
from uuid import UUID, uuid4

import msgspec
import pytest

from domain.commands import CreateTemplate, RequestWorkload, SaveWorkloadAsTemplate, UpdateTemplate
from domain.events import EventMetadata, TemplateCreated, WorkloadSnapshot
from domain.org_units import UnknownScopeError
from domain.submissions import Overrides, template_body_of
from domain.template_documents import NamedScope
from domain.template_specs import DistributedTemplateSpec, MasterTemplateSpec
from domain.templates import TemplateBody
from domain.values import ScopeRef
from domain.workloads import (
    InvalidWorkloadError,
    Workload,
    WorkloadNotFoundError,
    WorkloadNotSavableError,
)
from services import saved_templates, templates, workloads
from services.errors import NameTakenError, NotPermittedError
from tests.fakes import InMemoryStreams
from tests.unit.org_tree import tree
from tests.unit.test_workload_use_cases import holder_of

SYSTEM = EventMetadata(actor_subject="setup", actor_kind="system")


def spec(**values: Any) -> DistributedTemplateSpec:
    given = {"image": "img:1", "distributedFramework": "PyTorch", "numWorkers": 2, **values}
    return msgspec.convert(given, DistributedTemplateSpec)


class Stand(msgspec.Struct, kw_only=True):
    streams: InMemoryStreams
    cluster: UUID
    department: str
    llm: str
    vision: str
    template_id: UUID


async def stand() -> Stand:
    """The org tree, and template bert in project llm at version 2 (numWorkers 2, then 4)."""
    streams = InMemoryStreams()
    cluster, department, llm, vision = await tree(streams)
    template_id = uuid4()
    await templates.create_template(
        CreateTemplate(
            template_id=template_id,
            scope=ScopeRef("project", llm),
            name="bert",
            body=TemplateBody(spec=spec()),
            metadata=SYSTEM,
        ),
        streams=streams,
        names=streams.lookups,
    )
    await templates.update_template(
        UpdateTemplate(
            template_id=template_id,
            name="bert",
            body=TemplateBody(spec=spec(numWorkers=4)),
            metadata=SYSTEM,
        ),
        streams=streams,
        names=streams.lookups,
    )
    return Stand(
        streams=streams,
        cluster=cluster,
        department=department,
        llm=llm,
        vision=vision,
        template_id=template_id,
    )


async def submit(
    at: Stand,
    *,
    version: int | None = None,
    template: bool = True,
    name: str = "run",
    overrides: Overrides | None = None,
) -> Workload:
    command = RequestWorkload(
        workload_id=uuid4(),
        name=name,
        cluster_id=at.cluster,
        project_id=at.llm,
        template_id=at.template_id if template else None,
        template_version=version,
        overrides=overrides or Overrides(),
        metadata=SYSTEM,
    )
    made = await workloads.request_workload(command, streams=at.streams, names=at.streams.lookups)
    return made.state


async def save(
    at: Stand,
    workload_id: UUID,
    name: str = "bert-tuned",
    *,
    scope: NamedScope | None = None,
    actor: EventMetadata = SYSTEM,
) -> templates.TemplateView:
    command = SaveWorkloadAsTemplate(
        workload_id=workload_id,
        template_id=uuid4(),
        name=name,
        scope=scope,
        metadata=actor,
    )
    return await saved_templates.save_workload_as_template(
        command, streams=at.streams, names=at.streams.lookups
    )


async def test_a_pinned_submission_runs_that_version_and_an_unpinned_one_says_its_version() -> None:
    at = await stand()
    pinned = await submit(at, version=1, name="pinned")
    assert pinned.snapshot.spec.num_workers == 2
    assert pinned.snapshot.template_version == 1
    current = await submit(at, name="current")
    assert current.snapshot.spec.num_workers == 4
    assert current.snapshot.template_version == 2
    same = await submit(at, version=2, name="same")
    assert same.snapshot.spec == current.snapshot.spec


@pytest.mark.parametrize(("version", "template"), [(3, True), (99, True), (1, False)])
async def test_an_unknown_version_or_one_without_a_template_is_refused_naming_it(
    version: int, template: bool
) -> None:
    at = await stand()
    before = len(at.streams.every_event())
    with pytest.raises(InvalidWorkloadError) as refused:
        await submit(at, version=version, template=template, overrides=Overrides(spec=spec()))
    assert refused.value.field == "/templateVersion"
    assert len(at.streams.every_event()) == before


async def test_a_saved_workload_makes_a_template_that_runs_as_it_was_submitted() -> None:
    at = await stand()
    tuned = spec(numWorkers=3, args="train.py --lr 0.1")
    ran = await submit(at, version=1, overrides=Overrides(spec=tuned))
    saved = await save(at, ran.id)
    assert saved.template.meta.scope_ref == ScopeRef("project", at.llm)
    assert saved.template.body.spec.num_workers == 3
    assert saved.template.body.spec.args == "train.py --lr 0.1"
    again = await workloads.request_workload(
        RequestWorkload(
            workload_id=uuid4(),
            name="again",
            cluster_id=at.cluster,
            project_id=at.llm,
            template_id=saved.template.id,
            overrides=Overrides(),
            metadata=SYSTEM,
        ),
        streams=at.streams,
        names=at.streams.lookups,
    )
    assert again.state.snapshot.spec == ran.snapshot.spec
    assert again.state.snapshot.master == ran.snapshot.master
    # Saved in a scope named: the project's department.
    wider = await save(at, ran.id, "bert-ml", scope=NamedScope(department="ml"))
    assert wider.template.meta.scope_ref == ScopeRef("department", at.department)


async def test_a_save_refused_names_the_request_field_or_the_workloads_and_writes_nothing() -> None:
    at = await stand()
    ran = await submit(at)
    await save(at, ran.id)
    mounts = spec(
        storage={"configMapVolume": [{"name": "cm", "configMap": "cm", "mountPath": "/c"}]}
    )
    own = await submit(at, template=False, name="own", overrides=Overrides(spec=mounts))
    before = len(at.streams.every_event())
    with pytest.raises(NameTakenError) as taken:
        await save(at, ran.id)
    assert taken.value.field == "/name"
    with pytest.raises(UnknownScopeError) as unknown:
        await save(at, ran.id, "x", scope=NamedScope(project="nope"))
    assert unknown.value.field == "/scope"
    with pytest.raises(WorkloadNotSavableError) as not_savable:
        await save(at, own.id, "own")
    assert not_savable.value.workload_field == "/spec/storage/configMapVolume/0"
    with pytest.raises(WorkloadNotFoundError):
        await save(at, uuid4())
    # Who may not see the workload finds none; who may see but not edit is refused.
    elsewhere = await holder_of(at.streams, "editor", "project", at.vision)
    with pytest.raises(WorkloadNotFoundError):
        await save(at, ran.id, "y", actor=elsewhere)
    reader = await holder_of(at.streams, "viewer", "project", at.llm)
    with pytest.raises(NotPermittedError):
        await save(at, ran.id, "z", actor=reader)
    assert not [e for e in at.streams.every_event()[before:] if isinstance(e, TemplateCreated)]


def test_a_body_of_a_workload_mounts_its_data_volumes_from_the_assets_block() -> None:
    volume = uuid4()
    mounted = spec(
        storage={"dataVolume": [{"id": str(volume), "mountPath": "/data"}]},
        preemptibility="non-preemptible",
    )
    master = {"image": "m:1", "preemptibility": "non-preemptible", "command": "serve"}
    snapshot = WorkloadSnapshot(
        spec=mounted,
        master_spec_same_as_worker=False,
        master=msgspec.convert(master, MasterTemplateSpec),
    )
    body = template_body_of(snapshot)
    assert body.spec.storage is not None
    assert body.spec.storage.data_volume is None
    assert body.assets is not None
    (link,) = body.assets.datasources or ()
    assert (link.id, link.kind) == (volume, "data-volume")
    assert link.overrides is not None
    assert link.overrides.container_path == "/data"
    assert body.master is not None
    assert body.master.spec is not None
    assert body.master.spec.preemptibility is None  # the whole workload's: the worker's
    assert body.master.spec.command == "serve"
    assert not body.master_spec_same_as_worker


async def test_a_keyed_save_sent_again_answers_the_first_template() -> None:
    at = await stand()
    ran = await submit(at)
    command = SaveWorkloadAsTemplate(
        workload_id=ran.id, template_id=uuid4(), keyed=True, name="kept", metadata=SYSTEM
    )

    async def saved() -> templates.TemplateView:
        return await saved_templates.save_workload_as_template(
            command, streams=at.streams, names=at.streams.lookups
        )

    first = await saved()
    assert (await saved()).template == first.template
    assert len([e for e in at.streams.every_event() if isinstance(e, TemplateCreated)]) == 2
