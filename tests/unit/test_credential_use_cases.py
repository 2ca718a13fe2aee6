"""The credential use cases against fakes of their ports: an update that names no name keeps
the one the credential has, a credential out of the actor's sight is missing before a change's
body is read, and a scope's workloads pull with the registry credentials its lineage shares."""

from uuid import UUID, uuid4

import pytest

from domain.assets import AssetNotFoundError
from domain.commands import CreateCredential, DeleteCredential, SecretValues, UpdateCredential
from domain.credentials import Credential
from domain.events import ApplicationCreated, EventMetadata
from domain.specs import CredentialSpec
from domain.values import TENANT, ScopeRef
from services import credentials
from services.ports.event_store import Append
from services.prefetch import Prefetched
from tests.fakes import InMemoryCredentialVault
from tests.unit.org_tree import tree

SYSTEM = EventMetadata(actor_subject="setup", actor_kind="system")


async def password(vault: InMemoryCredentialVault, name: str) -> Credential:
    command = CreateCredential(
        asset_id=uuid4(),
        kind="password",
        scope=TENANT,
        name=name,
        public=CredentialSpec(user="svc"),
        values=SecretValues({"password": "s3cret"}),
        metadata=SYSTEM,
    )
    return (await credentials.create_credential(command, store=vault.streams, vault=vault)).state


async def test_an_update_without_a_name_keeps_the_name_and_the_values() -> None:
    vault = InMemoryCredentialVault()
    created = await password(vault, "db")
    described = UpdateCredential(
        asset_id=created.id, kind="password", description="the database", metadata=SYSTEM
    )
    updated = (await credentials.update_credential(described, store=vault.streams)).state
    assert (updated.meta.name, updated.meta.description) == ("db", "the database")
    assert vault.values[created.id] == {"password": "s3cret"}
    renamed = UpdateCredential(
        asset_id=created.id,
        kind="password",
        name="db-2",
        description="the database",
        metadata=SYSTEM,
    )
    assert (
        await credentials.update_credential(renamed, store=vault.streams)
    ).state.meta.name == "db-2"
    await password(vault, "db")  # the old name is free again


async def test_a_credential_out_of_sight_or_of_another_kind_is_missing() -> None:
    vault = InMemoryCredentialVault()
    created = await password(vault, "db")
    await credentials.require_visible("password", created.id, SYSTEM, vault.streams)
    application_id = uuid4()
    nobody = ApplicationCreated(
        application_id=application_id, name="nobody", client_id="nobody", grants=()
    )
    await vault.streams.append(
        Append(application_id, [nobody], expected_version=0, metadata=SYSTEM)
    )
    stranger = EventMetadata(actor_subject=str(application_id), actor_kind="application")
    for kind, actor in [("password", stranger), ("accessKey", SYSTEM)]:
        with pytest.raises(AssetNotFoundError):
            await credentials.require_visible(kind, created.id, actor, vault.streams)


async def test_a_scopes_workloads_pull_with_its_lineages_shared_registry_credentials() -> None:
    vault = InMemoryCredentialVault()
    _, department_id, _, vision = await tree(vault.streams)
    department = ScopeRef("department", department_id)
    elsewhere = ScopeRef("project", vision)  # in the department, so not in its lineage

    async def registry(name: str, scope: ScopeRef, *, private: bool = False) -> UUID:
        command = CreateCredential(
            asset_id=uuid4(),
            kind="dockerRegistry",
            scope=scope,
            name=name,
            private=private,
            public=CredentialSpec(user="svc", url="nvcr.io"),
            values=SecretValues({"password": "s3cret"}),
            metadata=SYSTEM,
        )
        return (
            await credentials.create_credential(command, store=vault.streams, vault=vault)
        ).state.id

    shared = await registry("shared", TENANT)
    own = await registry("own", department)
    await registry("mine", TENANT, private=True)
    await registry("theirs", elsewhere)
    gone = await registry("gone", department)
    await credentials.delete_credential(
        DeleteCredential(asset_id=gone, kind="dockerRegistry", metadata=SYSTEM),
        store=vault.streams,
    )
    await password(vault, "login")  # another kind, in the tenant too
    loader = Prefetched(vault.streams, remembered=True)
    pulled = await credentials.pulled_with(
        (TENANT, department), holders=vault.streams.holders_in, streams=loader
    )
    assert pulled == sorted([shared, own])
    # A decision on them checks, as it appends, that none of them has moved since.
    assert loader.checked is not None
    assert {shared, own} <= set(loader.checked)
