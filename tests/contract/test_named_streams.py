"""The NamedStreams contract: names unique per namespace and the record of which streams use
which move with each append, all or nothing; the in-memory fake and PostgreSQL behave the same."""

from uuid import UUID, uuid4

import pytest

from domain.events import EnvironmentCreated, EnvironmentDeleted, EnvironmentUpdated
from domain.specs import EnvironmentSpec
from domain.values import AssetMeta
from services.errors import InvalidRequestError, NameTakenError, VersionConflictError
from services.ports import NameClaim, NamedStreams, Uses
from tests.conftest import ACTOR

SPACE = "environment@tenant:"


def claim(name: str) -> NameClaim:
    return NameClaim(namespace=SPACE, name=name, field="/meta/name")


def created(asset_id: UUID, name: str) -> EnvironmentCreated:
    meta = AssetMeta(name=name, scope="tenant")
    return EnvironmentCreated(asset_id=asset_id, meta=meta, spec=EnvironmentSpec(image="pt"))


class InUseError(Exception):
    pass


async def make(streams: NamedStreams, name: str, uses: Uses | None = None) -> UUID:
    stream_id = uuid4()
    await streams.append(
        stream_id,
        [created(stream_id, name)],
        expected_version=0,
        metadata=ACTOR,
        name=claim(name),
        uses=uses,
    )
    return stream_id


async def test_a_name_taken_in_its_namespace_is_refused_and_nothing_is_written(
    named_streams: NamedStreams,
) -> None:
    await make(named_streams, "pt")
    other = uuid4()
    with pytest.raises(NameTakenError) as refused:
        await named_streams.append(
            other, [created(other, "pt")], expected_version=0, metadata=ACTOR, name=claim("pt")
        )
    assert refused.value.field == "/meta/name"
    assert (await named_streams.load(other)).version == 0
    # Another namespace may hold the same name.
    await named_streams.append(
        other,
        [created(other, "pt")],
        expected_version=0,
        metadata=ACTOR,
        name=NameClaim(namespace="environment@project:7", name="pt"),
    )


async def test_a_rename_frees_the_old_name_and_a_deletion_frees_the_name(
    named_streams: NamedStreams,
) -> None:
    first = await make(named_streams, "pt")
    renamed = EnvironmentUpdated(asset_id=first, name="pt-2", spec=EnvironmentSpec(image="pt"))
    await named_streams.append(
        first, [renamed], expected_version=1, metadata=ACTOR, name=claim("pt-2")
    )
    second = await make(named_streams, "pt")  # the old name is free
    with pytest.raises(NameTakenError):
        await make(named_streams, "pt-2")
    await named_streams.append(
        first, [EnvironmentDeleted(asset_id=first)], expected_version=2, metadata=ACTOR, name=None
    )
    assert await make(named_streams, "pt-2") not in (first, second)


async def test_a_stale_version_is_refused_and_writes_nothing(named_streams: NamedStreams) -> None:
    first = await make(named_streams, "pt")
    renamed = EnvironmentUpdated(asset_id=first, name="pt-2", spec=EnvironmentSpec(image="pt"))
    with pytest.raises(VersionConflictError):
        await named_streams.append(
            first, [renamed], expected_version=0, metadata=ACTOR, name=claim("pt-2")
        )
    assert (await named_streams.load(first)).version == 1
    await make(named_streams, "pt-2")  # the refused append claimed nothing


async def test_a_used_stream_cannot_be_deleted_until_nothing_uses_it(
    named_streams: NamedStreams,
) -> None:
    used = await make(named_streams, "base")
    user = await make(named_streams, "user", Uses(user="environment user", used=((used, "/x"),)))

    def refuse(users: object) -> Exception:
        return InUseError(users)

    deletion = [EnvironmentDeleted(asset_id=used)]
    with pytest.raises(InUseError) as refused:
        await named_streams.append(
            used, deletion, expected_version=1, metadata=ACTOR, name=None, unused=refuse
        )
    assert refused.value.args == (["environment user"],)
    assert (await named_streams.load(used)).version == 1
    # The user stops using it (its deletion uses nothing): then the deletion goes through.
    await named_streams.append(
        user,
        [EnvironmentDeleted(asset_id=user)],
        expected_version=1,
        metadata=ACTOR,
        name=None,
        uses=Uses(user="environment user"),
    )
    await named_streams.append(
        used, deletion, expected_version=1, metadata=ACTOR, name=None, unused=refuse
    )
    assert (await named_streams.load(used)).version == 2


async def test_a_use_of_a_deleted_stream_is_refused_naming_its_field(
    named_streams: NamedStreams,
) -> None:
    gone = await make(named_streams, "gone")
    await named_streams.append(
        gone, [EnvironmentDeleted(asset_id=gone)], expected_version=1, metadata=ACTOR, name=None
    )
    user = uuid4()
    with pytest.raises(InvalidRequestError) as refused:
        await named_streams.append(
            user,
            [created(user, "user")],
            expected_version=0,
            metadata=ACTOR,
            name=claim("user"),
            uses=Uses(user="environment user", used=((gone, "/spec/credential"),)),
        )
    assert refused.value.field == "/spec/credential"
    assert (await named_streams.load(user)).version == 0
    await make(named_streams, "user")  # nor was the name claimed
