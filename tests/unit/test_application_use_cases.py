"""The application use cases against fakes of their ports: only tenant admins change
applications, whoever asks through which route."""

from uuid import UUID, uuid4

import pytest

from domain.commands import SetApplicationEnabled
from domain.events import ApplicationCreated, EventMetadata
from domain.values import TENANT_ADMIN, Grant
from services import applications
from services.errors import NotPermittedError
from tests.fakes import InMemoryStreams

SYSTEM = EventMetadata(actor_subject="setup", actor_kind="system")


async def application(streams: InMemoryStreams, name: str, *grants: Grant) -> UUID:
    application_id = uuid4()
    created = ApplicationCreated(
        application_id=application_id, name=name, client_id=name, grants=grants
    )
    await streams.append(application_id, [created], expected_version=0, metadata=SYSTEM)
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
