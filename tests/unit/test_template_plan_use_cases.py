"""Templates as code against the fakes: a plan of documents (create, update, unchanged, delete;
its diff and what each name resolved to) writes nothing, and its apply writes all or none."""

from typing import Any
from uuid import uuid4

import msgspec
import pytest

from domain.commands import CreateAsset, PatchTemplate
from domain.events import EventMetadata, TemplateCreated, TemplateDeleted
from domain.org_units import UnknownScopeError
from domain.specs import ComputeSpec, EnvironmentSpec, WorkloadSupportedTypes
from domain.template_documents import InvalidDocumentError, NamedScope, parse
from domain.values import ScopeRef
from services import assets, templates
from services.errors import PlanOutdatedError
from services.ports.name_lookups import Lookups
from services.template_plan_applies import apply_plan
from services.template_plan_values import Applied, Declaration, Declared, Plan
from services.template_plans import plan_templates
from tests.fakes import InMemoryStreams
from tests.unit.org_tree import tree

SYSTEM = EventMetadata(actor_subject="setup", actor_kind="system")
CI = EventMetadata(actor_subject="gitops", actor_kind="system")


def document(name: str = "bert", scope: Any = None, **fields: Any) -> dict[str, Any]:
    found: dict[str, Any] = {
        "apiVersion": "trainplate/v1",
        "kind": "DistributedTemplate",
        "metadata": {"name": name, "scope": scope or {"project": "llm"}},
        "spec": {"distributedFramework": "PyTorch", "numWorkers": 2},
        "assets": {"environment": {"name": "torch"}},
    }
    found.update(fields)
    return found


def declared(*raw: dict[str, Any], prune: bool = False, scopes: Any = None) -> Declared:
    return Declared(
        documents=tuple(
            Declaration(
                i, f"t/{d['metadata']['name']}.yaml", parse(i, f"t/{d['metadata']['name']}.yaml", d)
            )
            for i, d in enumerate(raw)
        ),
        metadata=CI,
        prune=prune,
        scopes=None if scopes is None else tuple(msgspec.convert(s, NamedScope) for s in scopes),
    )


async def planned_from(raw: dict[str, Any], streams: InMemoryStreams, lookups: Lookups) -> Plan:
    """Parsed, then planned: where the service refuses a document, the one or the other."""
    return await plan_templates(declared(raw), streams=streams, lookups=lookups)


async def setup() -> tuple[InMemoryStreams, Lookups]:
    streams = InMemoryStreams()
    await tree(streams)
    pytorch = WorkloadSupportedTypes(distributed=True, dist_framework="PyTorch")
    for name, spec in (
        ("torch", EnvironmentSpec(image="pytorch:2.5")),
        ("a100", ComputeSpec(gpu_devices_request=1)),
    ):
        await assets.create_asset(
            CreateAsset(
                asset_id=uuid4(),
                scope=ScopeRef("tenant"),
                name=name,
                spec=spec,
                workload_supported_types=pytorch if isinstance(spec, EnvironmentSpec) else None,
                metadata=SYSTEM,
            ),
            streams=streams,
            names=streams.lookups,
        )
    return streams, Lookups(streams.holder, streams.holders_in)


async def applied(streams: InMemoryStreams, lookups: Lookups, wanted: Declared) -> Applied:
    plan = await plan_templates(wanted, streams=streams, lookups=lookups)
    return await apply_plan(wanted, plan.versions, streams=streams, lookups=lookups)


async def test_a_plan_of_a_new_template_creates_it_resolving_names_and_writes_nothing() -> None:
    streams, lookups = await setup()
    before = len(streams.every_event())
    plan = await plan_templates(declared(document()), streams=streams, lookups=lookups)
    (one,) = plan.templates
    assert (one.action, one.name, one.scope_label, one.template_id) == (
        "create",
        "bert",
        "project:llm",
        None,
    )
    assert one.scope.kind == "project"
    assert [(a.field, a.name, a.kind, a.link) for a in one.assets] == [
        ("/assets/environment/name", "torch", "environment", True)
    ]
    assert one.runnable is not None
    assert one.runnable.is_runnable
    assert {c.field for c in one.changes} >= {"/spec/numWorkers", "/assets/environment"}
    assert plan.changed
    assert len(streams.every_event()) == before


async def test_apply_writes_then_plan_finds_nothing_to_change_and_one_edit_shows_that_field() -> (
    None
):
    streams, lookups = await setup()
    result = await applied(streams, lookups, declared(document()))
    assert list(result.written.values()) == [1]
    again = await plan_templates(declared(document()), streams=streams, lookups=lookups)
    assert [t.action for t in again.templates] == ["unchanged"]
    assert not again.changed
    edited = document(spec={"distributedFramework": "PyTorch", "numWorkers": 3})
    plan = await plan_templates(declared(edited), streams=streams, lookups=lookups)
    (one,) = plan.templates
    assert one.action == "update"
    assert [(c.field, c.before, c.after) for c in one.changes] == [("/spec/numWorkers", 2, 3)]
    await apply_plan(declared(edited), plan.versions, streams=streams, lookups=lookups)
    assert streams.metadata[-1] == CI


async def test_an_edit_between_plan_and_apply_refuses_the_whole_apply() -> None:
    streams, lookups = await setup()
    await applied(streams, lookups, declared(document()))
    wanted = declared(
        document("gpt"), document(spec={"distributedFramework": "PyTorch", "numWorkers": 4})
    )
    plan = await plan_templates(wanted, streams=streams, lookups=lookups)
    bert = next(t for t in plan.templates if t.name == "bert")
    assert bert.template_id is not None
    await templates.patch_template(
        PatchTemplate(
            template_id=bert.template_id,
            patch={"meta": {"description": "by hand"}},
            metadata=SYSTEM,
        ),
        streams=streams,
        names=lookups,
    )
    before = streams.every_event()
    with pytest.raises(PlanOutdatedError) as refused:
        await apply_plan(wanted, plan.versions, streams=streams, lookups=lookups)
    assert "project:llm/bert moved from version 1 to 2" in str(refused.value)
    assert streams.every_event() == before


async def test_a_race_lost_inside_the_transaction_writes_none_of_the_templates() -> None:
    streams, lookups = await setup()
    await applied(streams, lookups, declared(document()))
    wanted = declared(
        document("gpt"), document(spec={"distributedFramework": "PyTorch", "numWorkers": 4})
    )
    plan = await plan_templates(wanted, streams=streams, lookups=lookups)
    bert = next(t for t in plan.templates if t.name == "bert")
    assert bert.template_id is not None
    template_id = bert.template_id

    async def edit_bert() -> None:  # lands after the plan was checked, before the writes
        streams._streams[template_id].append(streams._streams[template_id][0])

    streams.before_append = edit_bert
    with pytest.raises(PlanOutdatedError, match="project:llm/bert was changed"):
        await apply_plan(wanted, plan.versions, streams=streams, lookups=lookups)
    assert not any(
        isinstance(e, TemplateCreated) and e.meta.name == "gpt" for e in streams.every_event()
    )


async def test_prune_deletes_only_in_the_declared_scopes() -> None:
    streams, lookups = await setup()
    await applied(
        streams,
        lookups,
        declared(document(), document("old"), document("elsewhere", scope={"project": "vision"})),
    )
    wanted = declared(document(), prune=True)
    plan = await plan_templates(wanted, streams=streams, lookups=lookups)
    assert [(t.name, t.action) for t in plan.templates] == [
        ("bert", "unchanged"),
        ("old", "delete"),
    ]
    await apply_plan(wanted, plan.versions, streams=streams, lookups=lookups)
    deleted = [e for e in streams.every_event() if isinstance(e, TemplateDeleted)]
    assert len(deleted) == 1
    both = declared(document(), prune=True, scopes=[{"project": "llm"}, {"project": "vision"}])
    plan = await plan_templates(both, streams=streams, lookups=lookups)
    assert [(t.name, t.action) for t in plan.templates] == [
        ("bert", "unchanged"),
        ("elsewhere", "delete"),
    ]


async def test_an_asset_used_without_linking_is_copied_into_the_spec() -> None:
    streams, lookups = await setup()
    raw = document(
        assets={"environment": {"name": "torch"}, "compute": {"name": "a100", "link": False}}
    )
    await applied(streams, lookups, declared(raw))
    (template_id,) = [
        i for (ns, n), i in streams.names.items() if n == "bert" and ns.startswith("template@")
    ]
    view = await templates.visible_template(template_id, SYSTEM, streams=streams)
    assert view.template.body.spec.compute is not None
    assert view.template.body.spec.compute.gpu_devices_request == 1
    assert view.template.body.assets is not None
    assert view.template.body.assets.compute is None


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        (
            document(assets={"environment": {"name": "nope"}}),
            "/assets/environment/name",
        ),
        (document(scope={"project": "nope"}), "/metadata/scope"),
        ({**document(), "kind": "Workspace"}, "/kind"),
        (document(spec={"numWorkers": 0}), "/spec/numWorkers"),
        (
            document(spec={"distributedFramework": "PyTorch", "numWorkers": 2, "colour": 1}),
            "/spec/colour",
        ),
    ],
)
async def test_bad_input_names_the_document_and_the_field_and_writes_nothing(
    raw: dict[str, Any], field: str
) -> None:
    streams, lookups = await setup()
    before = len(streams.every_event())
    with pytest.raises(InvalidDocumentError) as refused:
        await planned_from(raw, streams, lookups)
    assert refused.value.document == "t/bert.yaml"
    assert refused.value.document_field == field
    assert len(streams.every_event()) == before


async def test_a_name_declared_twice_is_refused_naming_both_documents() -> None:
    streams, lookups = await setup()
    with pytest.raises(InvalidDocumentError) as refused:
        await plan_templates(declared(document(), document()), streams=streams, lookups=lookups)
    assert refused.value.field == "/documents/1/metadata/name"
    assert "t/bert.yaml declares 'bert' in project:llm too" in str(refused.value)


async def test_a_prune_scope_that_does_not_exist_is_refused() -> None:
    streams, lookups = await setup()
    with pytest.raises(UnknownScopeError) as refused:
        await plan_templates(
            declared(document(), prune=True, scopes=[{"department": "nope"}]),
            streams=streams,
            lookups=lookups,
        )
    assert refused.value.field == "/scopes/0"
