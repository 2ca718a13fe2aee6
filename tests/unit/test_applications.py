from uuid import UUID, uuid4

import pytest

from domain import applications
from domain.applications import ApplicationExistsError, ApplicationNotFoundError
from domain.errors import InvalidHistoryError
from domain.events import ApplicationCreated, ApplicationDeleted, ApplicationSecretRotated
from domain.name_rules import InvalidNameError
from domain.values import TENANT_ADMIN
from tests.sample_events import CounterOpened


def created(app_id: UUID | None = None) -> ApplicationCreated:
    return ApplicationCreated(
        application_id=app_id or uuid4(), name="ci-bot", client_id="ci-bot", grants=(TENANT_ADMIN,)
    )


def test_creating_an_application_records_its_grants_and_no_secret() -> None:
    app_id = uuid4()
    [event] = applications.create(
        None, app_id, name="ci-bot", client_id="ci-bot", grants=[TENANT_ADMIN]
    )
    assert event == created(app_id)
    assert not any("secret" in field.lower() for field in event.__struct_fields__)


@pytest.mark.parametrize("name", ["CI", "1bot", "bot-", "bot bot", "", "ünï", "bot\n", "b" * 64])
def test_names_follow_run_ai_service_account_rules(name: str) -> None:
    with pytest.raises(InvalidNameError) as refused:
        applications.create(None, uuid4(), name=name, client_id=name, grants=[])
    assert refused.value.field == "/name"


def test_an_application_is_created_once() -> None:
    event = created()
    state = applications.fold([event])
    with pytest.raises(ApplicationExistsError):
        applications.create(state, event.application_id, name="x1", client_id="x1", grants=[])


def test_deleting_is_idempotent_and_needs_an_application() -> None:
    event = created()
    state = applications.fold([event])
    assert applications.delete(state, event.application_id) == [
        ApplicationDeleted(application_id=event.application_id)
    ]
    gone = applications.fold([event, ApplicationDeleted(application_id=event.application_id)])
    assert gone is not None
    assert gone.deleted
    assert applications.delete(gone, event.application_id) == []
    with pytest.raises(ApplicationNotFoundError):
        applications.delete(None, uuid4())


def test_a_foreign_event_in_an_application_stream_is_corrupt_history() -> None:
    with pytest.raises(InvalidHistoryError):
        applications.fold([created(), CounterOpened(name="x")])


def test_only_a_live_application_gets_a_new_secret() -> None:
    event = created()
    state = applications.fold([event])
    assert applications.rotate_secret(state, event.application_id) == [
        ApplicationSecretRotated(application_id=event.application_id)
    ]
    gone = applications.fold([event, ApplicationDeleted(application_id=event.application_id)])
    with pytest.raises(ApplicationNotFoundError):
        applications.rotate_secret(gone, event.application_id)
    with pytest.raises(ApplicationNotFoundError):
        applications.rotate_secret(None, uuid4())
