"""A registry's login against fakes of its ports: the vault's password is handed on only while
it is the one the registry as shown was given."""

from uuid import uuid4

import pytest

from domain.commands import CreateRegistry, DeleteRegistry, SecretValues, UpdateRegistry
from domain.events import EventMetadata
from domain.values import TENANT
from services import registries
from services.errors import RegistryChangingError
from tests.fakes import InMemoryCredentialVault

SYSTEM = EventMetadata(actor_subject="setup", actor_kind="system")


async def test_the_password_is_handed_on_only_for_the_registry_it_was_given_with() -> None:
    vault = InMemoryCredentialVault()
    created = await registries.create_registry(
        CreateRegistry(
            asset_id=uuid4(),
            scope=TENANT,
            name="harbor",
            url="https://harbor.example.com",
            user="robot",
            password=SecretValues({"password": "first"}),
            metadata=SYSTEM,
        ),
        store=vault.streams,
        vault=vault,
    )
    shown = created.state
    assert await registries.password_of(shown.id, shown.spec, vault=vault) == "first"
    updated = await registries.update_registry(
        UpdateRegistry(
            asset_id=shown.id,
            name="harbor",
            url="https://elsewhere.example.com",
            password=SecretValues({"password": "second"}),
            metadata=SYSTEM,
        ),
        store=vault.streams,
        vault=vault,
    )
    # A read model still showing the old URL is not given the new password.
    with pytest.raises(RegistryChangingError):
        await registries.password_of(shown.id, shown.spec, vault=vault)
    now = updated.state
    assert await registries.password_of(now.id, now.spec, vault=vault) == "second"
    await registries.delete_registry(
        DeleteRegistry(asset_id=now.id, metadata=SYSTEM), store=vault.streams
    )
    with pytest.raises(RegistryChangingError):
        await registries.password_of(now.id, now.spec, vault=vault)
