"""Who a local replica runs as: its run's own id from the operator's range, or the custom ids its
spec names when they lie in that range; and which ids of the range are not free."""

import msgspec
import pytest

from domain.template_specs import Security
from infra.backends.local_isolation import Identity, IsolationError, Taken, candidates, wanted

IDS = range(2_000_000, 2_000_100)


def custom(**fields: object) -> Security:
    return msgspec.convert({"uidGidSource": "custom", **fields}, Security)


def test_a_replica_without_custom_ids_runs_under_its_runs_own_id_alone() -> None:
    for security in (None, Security(), custom(), msgspec.convert({"runAsUid": 5}, Security)):
        assert wanted(security, IDS).identity(2_000_042) == Identity(uid=2_000_042, gid=2_000_042)


def test_custom_ids_inside_the_range_are_the_replicas() -> None:
    security = custom(runAsUid=2_000_001, runAsGid=2_000_002, supplementalGroups="2000003, 2000004")
    found = wanted(security, IDS)
    assert found.identity(2_000_042) == Identity(
        uid=2_000_001, gid=2_000_002, groups=(2_000_003, 2_000_004)
    )
    assert list(found.named()) == [
        ("runAsUid", 2_000_001), ("runAsGid", 2_000_002),
        ("supplementalGroups", 2_000_003), ("supplementalGroups", 2_000_004),
    ]  # fmt: skip
    # A uid alone: the group is the run's own.
    assert wanted(custom(runAsUid=2_000_001), IDS).identity(7) == Identity(uid=2_000_001, gid=7)


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"runAsUid": 1001}, "runAsUid 1001"),  # the embedded PostgreSQL's user, say
        ({"runAsUid": 0}, "runAsUid 0"),
        ({"runAsUid": 2_000_001, "runAsGid": 1001}, "runAsGid 1001"),
        ({"runAsUid": 2_000_100}, "runAsUid 2000100"),  # one past the range
        ({"supplementalGroups": "2000001,0"}, "supplementalGroups 0"),
    ],
)
def test_a_custom_id_outside_the_range_is_refused_naming_it(
    fields: dict[str, object], named: str
) -> None:
    with pytest.raises(IsolationError, match=f"^{named} is not one") as refused:
        wanted(custom(**fields), IDS)
    assert "2000000-2000099" in str(refused.value)


def test_root_nobody_and_the_minus_ones_are_never_a_workloads_even_in_range() -> None:
    for number in (0, 65534, 65535, 2**32 - 1):
        with pytest.raises(IsolationError, match=f"runAsGid {number} "):
            wanted(custom(runAsGid=number), range(2**32))


def test_supplemental_groups_that_are_not_ids_are_refused() -> None:
    with pytest.raises(IsolationError, match="supplementalGroups is not a list of ids"):
        wanted(custom(supplementalGroups="staff"), IDS)


def test_an_id_of_a_user_a_subordinate_range_or_a_live_process_is_taken() -> None:
    taken = Taken(
        owners=frozenset({1001}), subordinate=(range(100_000, 165_536),), running=frozenset({7})
    )
    assert taken.why(1001) == "belongs to the service or to a user or group of this machine"
    assert taken.why(0) == "belongs to the service or to a user or group of this machine"
    assert taken.why(165_535) == "is a subordinate id of a user of this machine"
    assert taken.why(7) == "is in use by a process of this machine"
    assert taken.why(165_536) is None


def test_ids_are_handed_out_round_the_range_from_the_last_one() -> None:
    assert list(candidates(range(10, 14), 12)) == [12, 13, 10, 11]
    assert list(candidates(range(10, 14), 14)) == [10, 11, 12, 13]  # past the end: round again
    assert list(candidates(range(10, 14), 3)) == [11, 12, 13, 10]  # a cursor of another range
