"""The application use cases against fakes of their ports: only tenant admins change
applications, whoever asks through which route."""

from uuid import UUID, uuid4

import pytest

from domain.commands import CreateApplication, SetApplicationEnabled
from domain.events import ApplicationCreated, EventMetadata
from domain.values import TENANT_ADMIN, Grant
from services import applications
from services.errors import FirstSecretGoneError, IdempotencyKeyReusedError, NotPermittedError
from services.idempotency import creation_id
from services.ports.event_store import Append
from tests.fakes import InMemoryApplicationRegistry, InMemoryStreams

SYSTEM = EventMetadata(actor_subject="setup", actor_kind="system")


async def application(streams: InMemoryStreams, name: str, *grants: Grant) -> UUID:
    application_id = uuid4()
    created = ApplicationCreated(
        application_id=application_id, name=name, client_id=name, grants=grants
    )
    await streams.append(Append(application_id, [created], expected_version=0, metadata=SYSTEM))
    return application_id


def acting(application_id: UUID) -> EventMetadata:
    return EventMetadata(actor_subject=str(application_id), actor_kind="application")


async def test_only_a_tenant_admin_disables_an_application() -> None:
    streams = InMemoryStreams()
    admin = await application(streams, "admin", TENANT_ADMIN)
    viewer = await application(
        streams, "viewer", Grant(role="viewer", scope_kind="tenant", scope_id="tenant")
    )
    target = await application(streams, "target")

    def disabling(by: EventMetadata) -> SetApplicationEnabled:
        return SetApplicationEnabled(application_id=target, enabled=False, metadata=by)

    with pytest.raises(NotPermittedError):
        await applications.set_application_enabled(disabling(acting(viewer)), store=streams)
    assert (await streams.load(target)).version == 1
    done = await applications.set_application_enabled(disabling(acting(admin)), store=streams)
    assert not done.state.enabled
    with pytest.raises(NotPermittedError):
        await applications.require_admin(acting(viewer), "list service accounts", streams=streams)
    await applications.require_admin(acting(admin), "list service accounts", streams=streams)


def keyed(admin: UUID, name: str, key: str = "k-1") -> CreateApplication:
    account_id, _ = creation_id(str(admin), "service-account", key)
    return CreateApplication(
        application_id=account_id, name=name, grants=(), metadata=acting(admin), keyed=True
    )


async def test_a_keyed_create_sent_again_answers_the_first_secret_and_writes_nothing() -> None:
    registry = InMemoryApplicationRegistry()
    admin = await application(registry.streams, "admin", TENANT_ADMIN)
    first = await applications.create_application(
        keyed(admin, "bot"), secret="first", store=registry.streams, registry=registry
    )
    assert (first.secret, first.now) == ("first", True)
    written = len(registry.streams.metadata)
    again = await applications.create_application(
        keyed(admin, "bot"), secret="second", store=registry.streams, registry=registry
    )
    assert (again.secret, again.now) == ("first", False)
    assert len(registry.streams.metadata) == written
    assert registry.secrets[keyed(admin, "bot").application_id] == "first"
    with pytest.raises(IdempotencyKeyReusedError):  # the key, for another name
        await applications.create_application(
            keyed(admin, "bot-2"), secret="x", store=registry.streams, registry=registry
        )
    unkeyed = CreateApplication(
        application_id=uuid4(), name="plain", grants=(), metadata=acting(admin)
    )
    await applications.create_application(
        unkeyed, secret="plain", store=registry.streams, registry=registry
    )
    assert unkeyed.application_id not in registry.answers  # kept for keyed creates only


async def test_a_retry_whose_secret_is_kept_no_more_is_refused_and_writes_nothing() -> None:
    registry = InMemoryApplicationRegistry()
    admin = await application(registry.streams, "admin", TENANT_ADMIN)
    await applications.create_application(
        keyed(admin, "bot"), secret="first", store=registry.streams, registry=registry
    )
    registry.forget_answers()  # replaced, deleted, or its day over
    written = len(registry.streams.metadata)
    with pytest.raises(FirstSecretGoneError):
        await applications.create_application(
            keyed(admin, "bot"), secret="x", store=registry.streams, registry=registry
        )
    assert len(registry.streams.metadata) == written


async def test_a_keyed_create_that_loses_a_race_answers_the_winners_secret() -> None:
    registry = InMemoryApplicationRegistry()
    admin = await application(registry.streams, "admin", TENANT_ADMIN)

    async def winner() -> None:  # the same create, under the same key, a moment earlier
        await applications.create_application(
            keyed(admin, "bot"), secret="winner", store=registry.streams, registry=registry
        )

    registry.streams.before_append = winner
    lost = await applications.create_application(
        keyed(admin, "bot"), secret="loser", store=registry.streams, registry=registry
    )
    assert (lost.secret, lost.now) == ("winner", False)
    created = [m for m in registry.streams.metadata if m.actor_subject == str(admin)]
    assert len(created) == 1
