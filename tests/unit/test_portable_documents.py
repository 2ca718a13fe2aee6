"""Template documents name their registry and data volumes, as they name assets: planned, the
names resolve from the write side; exported, the ids become names again, so the file plans on
any installation with things of those names. The id forms of older files are still read."""

from typing import Any
from uuid import UUID, uuid4

import msgspec
import pytest

from domain import org_units
from domain.commands import CreateDataVolume, CreateRegistry, SecretValues
from domain.template_documents import InvalidDocumentError, NamedScope, parse
from domain.template_exports import Names, document_of
from domain.templates import Template
from domain.values import TENANT
from services import data_volumes, registries, template_plans, templates
from services.ports.name_lookups import Lookups
from tests.fakes import InMemoryCredentialVault, InMemoryStreams
from tests.unit.test_template_plan_use_cases import SYSTEM, applied, declared, document, setup


class Installed(msgspec.Struct):
    streams: InMemoryStreams
    lookups: Lookups
    registry: UUID
    volume: UUID


async def installed() -> Installed:
    """The plan tests' tree and assets, a tenant registry `harbor`, a data volume `corpus` of
    project llm."""
    streams, lookups = await setup()
    vault = InMemoryCredentialVault(streams)
    registry = await registries.create_registry(
        CreateRegistry(
            asset_id=uuid4(),
            scope=TENANT,
            name="harbor",
            url="https://harbor.example.com",
            user="robot",
            password=SecretValues({"password": "p"}),
            metadata=SYSTEM,
        ),
        store=streams,
        vault=vault,
    )
    (llm,) = [i for (ns, n), i in streams.names.items() if n == "llm" and "project" in ns]
    project = org_units.fold((await streams.load(llm)).events)
    assert project is not None
    volume = await data_volumes.create_data_volume(
        CreateDataVolume(
            datavolume_id=uuid4(),
            project_id=project.id,
            name="corpus",
            origin_pvc_name="pvc-a",
            metadata=SYSTEM,
        ),
        streams=streams,
    )
    return Installed(
        streams=streams, lookups=lookups, registry=registry.state.id, volume=volume.state.id
    )


def portable(**assets: Any) -> dict[str, Any]:
    return document(
        spec={
            "distributedFramework": "PyTorch",
            "numWorkers": 2,
            "imageSource": "ngcPrivateRegistry",
            "image": "harbor.example.com/ml/bert:1",
        },
        assets={
            "registry": {"name": "harbor"},
            "datasources": [{"name": "corpus", "kind": "data-volume", "containerPath": "/data"}],
            **assets,
        },
    )


async def written(at: Installed) -> Template:
    (template_id,) = [
        i for (ns, n), i in at.streams.names.items() if n == "bert" and ns.startswith("template@")
    ]
    return (await templates.visible_template(template_id, SYSTEM, streams=at.streams)).template


async def test_a_registry_and_a_data_volume_named_resolve_and_export_by_name_again() -> None:
    at = await installed()
    plan = await template_plans.plan_templates(
        declared(portable()), streams=at.streams, lookups=at.lookups
    )
    (one,) = plan.templates
    assert {(a.field, a.kind, a.asset_id) for a in one.assets} >= {
        ("/assets/registry/name", "registry", at.registry),
        ("/assets/datasources/0/name", "data-volume", at.volume),
    }
    await applied(at.streams, at.lookups, declared(portable()))
    template = await written(at)
    assert template.body.spec.image_registry_id == at.registry
    assert template.body.assets is not None
    (link,) = template.body.assets.datasources or ()
    assert (link.id, link.kind) == (at.volume, "data-volume")

    names = Names(
        assets={
            at.registry: ("harbor", "registry"),
            at.volume: ("corpus", "data-volume"),
        }
    )
    exported = document_of("bert", None, NamedScope(project="llm"), template.body, names)
    raw = msgspec.to_builtins(exported)
    assert "imageRegistryId" not in raw["spec"]
    assert raw["assets"]["registry"] == {"name": "harbor"}
    assert raw["assets"]["datasources"][0]["name"] == "corpus"
    again = await template_plans.plan_templates(
        declared(raw), streams=at.streams, lookups=at.lookups
    )
    assert [t.action for t in again.templates] == ["unchanged"]


async def test_the_id_forms_of_older_files_are_still_read() -> None:
    at = await installed()
    await applied(at.streams, at.lookups, declared(portable()))
    older = document(
        spec={
            "distributedFramework": "PyTorch",
            "numWorkers": 2,
            "imageSource": "ngcPrivateRegistry",
            "image": "harbor.example.com/ml/bert:1",
            "imageRegistryId": str(at.registry),
        },
        assets={
            "datasources": [
                {"name": str(at.volume), "kind": "data-volume", "containerPath": "/data"}
            ],
        },
    )
    plan = await template_plans.plan_templates(
        declared(older), streams=at.streams, lookups=at.lookups
    )
    assert [t.action for t in plan.templates] == ["unchanged"]


async def test_a_data_volume_named_without_a_kind_is_found_by_its_name() -> None:
    at = await installed()
    raw = portable(datasources=[{"name": "corpus", "containerPath": "/data"}])
    await applied(at.streams, at.lookups, declared(raw))
    template = await written(at)
    assert template.body.assets is not None
    (link,) = template.body.assets.datasources or ()
    assert link.kind == "data-volume"


@pytest.mark.parametrize(
    ("assets", "field"),
    [
        ({"registry": {"name": "quay"}}, "/assets/registry/name"),
        (
            {"datasources": [{"name": "nope", "kind": "data-volume", "containerPath": "/d"}]},
            "/assets/datasources/0",
        ),
        ({"datasources": [{"name": "nope"}]}, "/assets/datasources/0"),
        ({"registry": {"name": "harbor", "url": "x"}}, "/assets/registry/url"),
    ],
)
async def test_a_name_that_resolves_to_nothing_is_refused_naming_its_field(
    assets: dict[str, Any], field: str
) -> None:
    at = await installed()
    with pytest.raises(InvalidDocumentError) as refused:
        await template_plans.plan_templates(
            declared(portable(**assets)), streams=at.streams, lookups=at.lookups
        )
    assert refused.value.document_field == field


def test_a_registry_named_twice_is_refused_as_the_document_is_read() -> None:
    raw = portable()
    raw["spec"]["imageRegistryId"] = str(uuid4())
    with pytest.raises(InvalidDocumentError) as refused:
        parse(0, "a.yaml", raw)
    assert refused.value.document_field == "/assets/registry"
