from uuid import uuid4

from infra.postgres.hashchain import GENESIS
from infra.postgres.units_of_work import StreamHeads


def test_a_new_stream_has_a_known_head_the_zero_hash() -> None:
    assert StreamHeads().known(uuid4(), 0) == GENESIS


def test_a_remembered_head_is_known_only_at_its_own_version() -> None:
    heads, sid = StreamHeads(), uuid4()
    heads.remember(sid, 3, b"h3")
    assert heads.known(sid, 3) == b"h3"
    assert heads.known(sid, 2) is None
    assert heads.known(sid, None) is None
    heads.remember(sid, 4, b"h4")
    assert heads.known(sid, 3) is None
    assert heads.known(sid, 4) == b"h4"


def test_the_least_recently_used_head_is_forgotten_first() -> None:
    heads = StreamHeads(capacity=2)
    a, b, c = uuid4(), uuid4(), uuid4()
    heads.remember(a, 1, b"a")
    heads.remember(b, 1, b"b")
    heads.remember(a, 2, b"a2")  # a is now the most recent
    heads.remember(c, 1, b"c")
    assert heads.known(b, 1) is None
    assert heads.known(a, 2) == b"a2"
    assert heads.known(c, 1) == b"c"
