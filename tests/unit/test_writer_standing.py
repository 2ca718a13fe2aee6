"""A write's assumed standing: confirmed when the database's is the same, the caller looked at
again when it is not, and a caller then refused stays refused until the request ends."""

import pytest

from infra.postgres import writer_standing
from infra.postgres.read_marks import Standing
from services.errors import NotAuthenticatedError

ASSUMED = Standing(access_epoch=7, org_epoch=3, ready=True, assumed=True)


class Rechecks:
    """The second looks asked for, each refusing when told to."""

    def __init__(self, *, refuse: bool = False) -> None:
        self.asked: list[Standing] = []
        self.refuse = refuse

    async def __call__(self, found: Standing) -> None:
        self.asked.append(found)
        if self.refuse:
            raise NotAuthenticatedError("the token was revoked")


def expected(rechecks: Rechecks) -> writer_standing.Unchecked:
    writer_standing.begin()
    writer_standing.expect(ASSUMED, rechecks)
    pending = writer_standing.unchecked()
    assert pending is not None
    return pending


async def test_the_same_epochs_confirm_it_without_a_second_look() -> None:
    rechecks = Rechecks()
    pending = expected(rechecks)
    await pending.settle(Standing(access_epoch=7, org_epoch=3, ready=True))
    assert rechecks.asked == []
    assert writer_standing.unchecked() is None
    assert writer_standing.known() == Standing(access_epoch=7, org_epoch=3, ready=True)


@pytest.mark.parametrize("found", [(8, 3), (7, 4), (None, 3)])
async def test_moved_epochs_look_at_the_caller_again_under_them(
    found: tuple[int | None, int | None],
) -> None:
    rechecks = Rechecks()
    pending = expected(rechecks)
    moved = Standing(access_epoch=found[0], org_epoch=found[1], ready=True)
    await pending.settle(moved)
    assert rechecks.asked == [moved]
    assert writer_standing.unchecked() is None
    assert writer_standing.known() == moved


async def test_a_caller_refused_stays_refused_until_the_request_ends() -> None:
    pending = expected(Rechecks(refuse=True))
    with pytest.raises(NotAuthenticatedError):
        await pending.settle(Standing(access_epoch=8, org_epoch=3, ready=True))
    assert writer_standing.unchecked() is pending  # every later connection is refused too
    assert pending.closed()
    with pytest.raises(NotAuthenticatedError), writer_standing.carried():
        pass
    writer_standing.end()
    assert writer_standing.unchecked() is None
    assert not pending.closed()  # a task the request left behind is not refused


async def test_a_statement_that_checks_it_itself_holds_the_pool_back() -> None:
    pending = expected(Rechecks())
    with writer_standing.carried() as carried:
        assert carried is pending
        assert carried.access_epoch == 7
        assert not pending.closed()  # the pool hands the statement its connection unchecked
    assert pending.closed()  # until the statement's answer settles it
    writer_standing.begin()
    with writer_standing.carried() as nothing:
        assert nothing is None


def test_no_epoch_yet_is_compared_as_one_no_epoch_can_be() -> None:
    writer_standing.expect(Standing(access_epoch=None, org_epoch=None, ready=True), Rechecks())
    pending = writer_standing.unchecked()
    assert pending is not None
    assert pending.access_epoch == writer_standing.NO_EPOCH
    assert writer_standing.from_row(writer_standing.NO_EPOCH, None).access_epoch is None
    writer_standing.begin()
