"""Fakes of our own ports, for unit tests. They keep the ports' contracts (see tests/contract)."""

import contextlib
import copy
import hashlib
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from datetime import UTC, datetime
from typing import Any
from uuid import UUID, uuid4

import msgspec

from domain.commands import SubjectKind
from domain.events import (
    ApplicationRoleGranted,
    ApplicationRoleRevoked,
    Event,
    EventMetadata,
    UserRoleGranted,
    UserRoleRevoked,
    event_tag,
)
from domain.specs import SecretRef
from infra.postgres.encoding import largest_part
from infra.settings import EVENT_BYTES
from services.errors import (
    ClientIdTakenError,
    EventTooLargeError,
    IdempotencyKeyReusedError,
    InvalidRequestError,
    NameTakenError,
    StaleReadError,
    VersionConflictError,
)
from services.ports.event_store import (
    Append,
    AppendResult,
    InUse,
    Keep,
    NameClaim,
    OneAppend,
    Stream,
    Uses,
    Written,
)
from services.ports.kept_secrets import (
    ApplicationSecret,
    ApplicationSecretDestroyed,
    ApplicationSecretReplaced,
    Authenticated,
    CredentialValues,
    CredentialValuesDestroyed,
    SecretRow,
)
from services.ports.name_lookups import Lookups


class InMemoryStreams:
    """The EventStore port in memory: a stream's events, its unique name, what it uses and the
    secret kept beside it move with each append, all or nothing, as in PostgreSQL
    (tests/contract/test_streams.py). `before_append` runs once before the next append."""

    def __init__(self, *, max_event_bytes: int = EVENT_BYTES) -> None:
        self.max_event_bytes = max_event_bytes
        self._streams: dict[UUID, list[Event]] = {}
        self._written: dict[UUID, list[Written]] = {}  # per stream, per event
        self._by_event_id: dict[UUID, tuple[UUID, int, int]] = {}  # -> stream, version, position
        self._position = 0
        self.metadata: list[EventMetadata] = []
        self.names: dict[tuple[str, str], UUID] = {}  # (namespace, name) -> its stream
        self.uses: dict[UUID, dict[UUID, str]] = {}  # user -> used -> how the user is named
        self._in_transaction = False
        self.kept: dict[UUID, Stream] = {}  # what `remember` kept, served to remembered reads
        # The secrets kept beside the events (Append.secret), as they are: a fake protects nothing.
        self.values: dict[UUID, dict[str, str]] = {}  # a credential's
        self.secrets: dict[UUID, str] = {}  # an application's
        self.client_ids: dict[str, UUID] = {}
        self.answers: dict[UUID, str] = {}  # an application's first secret, kept for retries
        self.before_append: Callable[[], Awaitable[None]] | None = None

    async def load(self, stream_id: UUID) -> Stream:
        events = self._streams.get(stream_id, [])
        return Stream(len(events), tuple(events), tuple(self._written.get(stream_id, ())))

    def every_event(self) -> list[Event]:
        """Every stream's events, in the order they were appended."""
        stored = sorted(self._by_event_id.values(), key=lambda stored: stored[2])
        return [self._streams[stream_id][version - 1] for stream_id, version, _ in stored]

    async def holder(self, namespace: str, name: str) -> UUID | None:
        """The NameHolder port: the stream holding the name."""
        return self.names.get((namespace, name))

    async def holders_in(self, namespaces: Sequence[str]) -> list[UUID]:
        """The NameHolders port: the streams holding a name in these namespaces."""
        return [held for (namespace, _), held in self.names.items() if namespace in namespaces]

    @property
    def lookups(self) -> Lookups:
        """Both name lookups, as the use cases take them."""
        return Lookups(self.holder, self.holders_in)

    async def load_many(
        self, stream_ids: Sequence[UUID], *, remembered: bool = False
    ) -> dict[UUID, Stream]:
        """`remembered`: the streams as `remember()` last kept them, where it did."""
        found = {i: await self.load(i) for i in stream_ids}
        if remembered:
            found.update({i: self.kept[i] for i in stream_ids if i in self.kept})
        else:  # a fresh read brings what is kept up to date
            self.kept.update({i: s for i, s in found.items() if i in self.kept})
        return {i: s for i, s in found.items() if s.version}

    async def load_after(self, versions: Mapping[UUID, int]) -> dict[UUID, tuple[Event, ...]]:
        """Each stream's events after the version given."""
        found = {i: tuple(self._streams.get(i, ())[after:]) for i, after in versions.items()}
        return {i: events for i, events in found.items() if events}

    def remember(self, *stream_ids: UUID) -> None:
        """Keep the streams as they are now (none yet: version 0), for reads that may be
        answered from before."""
        for i in stream_ids:
            events = tuple(self._streams.get(i, ()))
            self.kept[i] = Stream(len(events), events)

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator["InMemoryStreams"]:
        if self._in_transaction:  # part of the one already open
            yield self
            return
        saved = copy.deepcopy(self._state())
        kept = len(self.metadata)
        self._in_transaction = True
        try:
            yield self
        except BaseException:
            (
                self._streams,
                self._written,
                self._by_event_id,
                self._position,
                self.names,
                self.uses,
                self.values,
                self.secrets,
                self.client_ids,
                self.answers,
            ) = saved
            del self.metadata[kept:]
            raise
        finally:
            self._in_transaction = False

    def _state(self) -> tuple[Any, ...]:
        return (
            self._streams,
            self._written,
            self._by_event_id,
            self._position,
            self.names,
            self.uses,
            self.values,
            self.secrets,
            self.client_ids,
            self.answers,
        )

    async def append(self, asked: Append) -> AppendResult:
        if (before := self.before_append) is not None:
            self.before_append = None
            await before()
        if asked.secret is None:
            return await self._append(asked)
        async with self.transaction() as tx:  # the append first, as in PostgreSQL
            result = await tx._append(asked)
            if not result.replayed:
                self._keep(asked.stream_id, asked.secret)
        return result

    def _keep(self, stream_id: UUID, row: SecretRow) -> None:
        match row:
            case CredentialValues(values=values):
                self.values[stream_id] = dict(values)
            case CredentialValuesDestroyed():
                self.values.pop(stream_id, None)
            case ApplicationSecret(client_id=client_id, secret=secret):
                if self.client_ids.get(client_id, stream_id) != stream_id:
                    raise ClientIdTakenError(client_id)
                self.client_ids[client_id] = stream_id
                self.secrets[stream_id] = secret
                if row.kept_for_retries:
                    self.answers[stream_id] = secret
            case ApplicationSecretReplaced(secret=secret):
                self.secrets[stream_id] = secret
                self.answers.pop(stream_id, None)
            case ApplicationSecretDestroyed():
                self.client_ids = {c: i for c, i in self.client_ids.items() if i != stream_id}
                self.secrets.pop(stream_id, None)
                self.answers.pop(stream_id, None)

    async def _append(self, asked: Append) -> AppendResult:
        stream_id, events, expected_version = asked.stream_id, asked.events, asked.expected_version
        metadata, event_ids, name = asked.metadata, asked.event_ids, asked.name
        uses, unused, checked = asked.uses, asked.unused, asked.checked
        for read, version in (checked or {}).items():
            if len(self._streams.get(read, ())) > version:
                self.kept.pop(read, None)
                raise StaleReadError(read)
        self._check_sizes(events)
        current = self._streams.get(stream_id, [])
        if event_ids is not None and len(event_ids) != len(events):
            raise ValueError("one event id per event")
        ids = list(event_ids) if event_ids is not None else [uuid4() for _ in events]
        if replayed := self._replayed(stream_id, ids):
            return replayed
        if expected_version is not None and expected_version != len(current):
            raise VersionConflictError(stream_id, expected=expected_version, actual=len(current))
        await self._check(stream_id, name, uses, unused)
        if not isinstance(name, Keep):
            self.names = {key: held for key, held in self.names.items() if held != stream_id}
            if name is not None:
                self.names[(name.namespace, name.name)] = stream_id
        if uses is not None:
            self.uses[stream_id] = {used: uses.user for used, _ in uses.used}
        if not events:
            return AppendResult(stream_id=stream_id, version=len(current), positions=())
        # One time per append; a request digest only of a creation's (as the store reads it).
        digest = metadata.request_digest if not current else None
        current = self._streams.setdefault(stream_id, current)
        positions = []
        now = Written(datetime.now(UTC), metadata.actor_subject, digest)
        for event_id, event in zip(ids, events, strict=True):
            current.append(event)
            self._written.setdefault(stream_id, []).append(now)
            self._position += 1
            self._by_event_id[event_id] = (stream_id, len(current), self._position)
            positions.append(self._position)
            self.metadata.append(metadata)
        return AppendResult(
            stream_id=stream_id,
            version=len(current),
            positions=tuple(positions),
            recorded_at=now.at,
        )

    def _check_sizes(self, events: Sequence[Event]) -> None:
        for event in events:
            data = msgspec.json.encode(event)
            if len(data) > self.max_event_bytes:
                raise EventTooLargeError(
                    largest_part(data.decode()),
                    event_type=event_tag(type(event)),
                    size=len(data),
                    limit=self.max_event_bytes,
                )

    def _replayed(self, stream_id: UUID, ids: Sequence[UUID]) -> AppendResult | None:
        stored = [self._by_event_id[i] for i in ids if i in self._by_event_id]
        if not stored:
            return None
        if len(stored) != len(ids) or any(s[0] != stream_id for s in stored):
            raise IdempotencyKeyReusedError(stream_id)
        version = max(s[1] for s in stored)
        return AppendResult(
            stream_id=stream_id,
            version=version,
            positions=tuple(s[2] for s in sorted(stored, key=lambda s: s[1])),
            replayed=True,
            recorded_at=self._written[stream_id][version - 1].at,
        )

    async def _check(
        self,
        stream_id: UUID,
        name: NameClaim | Keep | None,
        uses: Uses | None,
        unused: InUse | None,
    ) -> None:
        """What PostgreSQL refuses besides a version: a name held by another stream, a use of a
        deleted stream, a deletion of a stream in use."""
        if isinstance(name, NameClaim):
            holder = self.names.get((name.namespace, name.name))
            if holder not in (None, stream_id):
                raise NameTakenError(name.name, namespace=name.namespace, field=name.field)
        if unused is not None:
            users = sorted(
                named[stream_id]
                for user, named in self.uses.items()
                if stream_id in named and user != stream_id
            )
            if users:
                raise unused(users)
        if uses is not None:
            for used, field in uses.used:
                if _deleted(await self.load(used)):
                    raise InvalidRequestError(
                        field, "it was deleted while this request was written"
                    )

    async def append_each(
        self, appends: Sequence[OneAppend], *, metadata: EventMetadata
    ) -> frozenset[UUID]:
        taken = set()
        for one in appends:
            try:
                result = await self.append(
                    Append(
                        one.stream_id,
                        [one.event],
                        expected_version=one.expected_version,
                        metadata=metadata,
                        event_ids=[one.event_id],
                    )
                )
            except VersionConflictError:
                continue
            if not result.replayed:
                taken.add(one.stream_id)
        return frozenset(taken)


class InMemoryCredentialVault:
    """The CredentialVault port over the values InMemoryStreams keeps beside the events."""

    def __init__(self, streams: InMemoryStreams | None = None) -> None:
        self.streams = streams or InMemoryStreams()

    @property
    def values(self) -> dict[UUID, dict[str, str]]:
        return self.streams.values

    def reference(self, asset_id: UUID, values: Mapping[str, str]) -> SecretRef:
        digest = hashlib.sha256(repr((asset_id, sorted(values.items()))).encode()).hexdigest()
        return SecretRef(key_id=1, fingerprint=digest)

    def holds(self, asset_id: UUID, values: Mapping[str, str], secret: SecretRef) -> bool:
        return self.reference(asset_id, values) == secret

    async def open(self, asset_id: UUID) -> dict[str, str] | None:
        kept = self.values.get(asset_id)
        return None if kept is None else dict(kept)


class InMemoryApplicationRegistry:
    """The ApplicationRegistry port over the secrets InMemoryStreams keeps beside the events.
    `forget_answers` stands for the day a kept secret lasts."""

    def __init__(self, streams: InMemoryStreams | None = None) -> None:
        self.streams = streams or InMemoryStreams()

    @property
    def secrets(self) -> dict[UUID, str]:
        return self.streams.secrets

    @property
    def answers(self) -> dict[UUID, str]:
        return self.streams.answers

    async def first_secret(self, application_id: UUID) -> str | None:
        return self.answers.get(application_id)

    def forget_answers(self) -> None:
        self.answers.clear()

    async def authenticate(self, client_id: str, secret: str) -> Authenticated | None:
        application_id = self.streams.client_ids.get(client_id)
        if application_id is None or self.secrets.get(application_id) != secret:
            return None
        return Authenticated(application_id=application_id, token_generation=0)


class InMemoryBatchAppender:
    """InMemoryStreams as the fan-out and the submitter write it, for tests that look in
    between: when set, `before_append` runs once before each append_each (a test writes there
    what a user writes meanwhile); `appended` lists the streams in the order they took an
    event, and `read_after` the versions each tail read was asked from."""

    def __init__(self, store: InMemoryStreams) -> None:
        self.store = store
        self.max_event_bytes = store.max_event_bytes
        self.before_append: Callable[[], Awaitable[None]] | None = None
        self.appended: list[UUID] = []
        self.read_after: list[dict[UUID, int]] = []  # what each load_after was asked

    async def load(self, stream_id: UUID) -> Stream:
        return await self.store.load(stream_id)

    async def load_many(
        self, stream_ids: Sequence[UUID], *, remembered: bool = False
    ) -> dict[UUID, Stream]:
        return await self.store.load_many(stream_ids, remembered=remembered)

    async def append(self, asked: Append) -> AppendResult:
        return await self.store.append(asked)

    def transaction(self) -> AbstractAsyncContextManager[InMemoryStreams]:
        return self.store.transaction()

    async def load_after(self, versions: Mapping[UUID, int]) -> dict[UUID, tuple[Event, ...]]:
        self.read_after.append(dict(versions))
        return await self.store.load_after(versions)

    async def append_each(
        self, appends: Sequence[OneAppend], *, metadata: EventMetadata
    ) -> frozenset[UUID]:
        if self.before_append is not None:
            await self.before_append()
        taken = await self.store.append_each(appends, metadata=metadata)
        self.appended.extend(one.stream_id for one in appends if one.stream_id in taken)
        return taken


class InMemoryLinkIndex:
    """Which templates use which assets (a test says, as template appends record it), and the
    latest asset versions the fan-out has read."""

    def __init__(self) -> None:
        self.users: dict[UUID, set[UUID]] = {}
        self.versions: dict[UUID, int] = {}

    async def templates_using(self, asset_id: UUID) -> list[UUID]:
        return sorted(self.users.get(asset_id, set()))

    async def latest_versions(self, asset_ids: Sequence[UUID]) -> dict[UUID, int]:
        return {i: self.versions[i] for i in asset_ids if i in self.versions}

    async def set_latest_version(self, asset_id: UUID, version: int) -> None:
        self.versions[asset_id] = max(version, self.versions.get(asset_id, 0))


def _deleted(stream: Stream) -> bool:
    """As PostgreSQL tells it: the stream's last event is a deletion (its type's tag)."""
    return bool(stream.events) and event_tag(type(stream.events[-1])).endswith(".deleted.v1")


class InMemoryRuleHolders:
    """The RuleHolders port over InMemoryStreams: the subject whose stream granted the rule and
    has not revoked it since, as migration 0020's table follows the grants and revocations."""

    def __init__(self, streams: InMemoryStreams) -> None:
        self._streams = streams

    async def holder(self, rule_id: int) -> tuple[SubjectKind, str] | None:
        found: tuple[SubjectKind, str] | None = None
        for event in self._streams.every_event():
            match event:
                case ApplicationRoleGranted() if event.rule.rule_id == rule_id:
                    found = ("application", str(event.application_id))
                case UserRoleGranted() if event.rule.rule_id == rule_id:
                    found = ("user", event.subject)
                case ApplicationRoleRevoked() | UserRoleRevoked() if event.rule_id == rule_id:
                    found = None
        return found


class Ids:
    """The IdSequence port in memory: Run:ai's small integer ids, counted from 1."""

    def __init__(self) -> None:
        self.last = 0
        self.by_creation: dict[UUID, int] = {}

    async def next_id(self, creation: UUID | None = None, *, given: int | None = None) -> int:
        if creation is not None and creation in self.by_creation:
            return self.by_creation[creation]
        if creation is not None and given is not None:
            self.by_creation[creation] = given
            return given
        self.last += 1
        if creation is not None:
            self.by_creation[creation] = self.last
        return self.last

    async def issued(self, creation: UUID) -> int | None:
        return self.by_creation.get(creation)


class OnePolicyReads:
    """The reads (projections.queries.Reads) of a policy catalogue holding one policy at project
    7, whose `rules` a test may change; `reads` counts the queries sent."""

    def __init__(self, rules: dict[str, Any]) -> None:
        self.rules = rules
        self.reads = 0

    async def fetch(self, sql: str, *args: object) -> list[Any]:
        self.reads += 1
        body = msgspec.json.encode({"rules": self.rules}).decode()
        return [{"policy_id": "00000000-0000-0000-0000-000000000001", "name": "p",
                 "scope_kind": "project", "scope_id": "7", "cluster_id": None,
                 "department_id": None, "project_id": "7", "body": body, "created_at": None,
                 "created_by": "a", "updated_at": None, "updated_by": "a"}]  # fmt: skip

    def connection(self, operation: str | None = None) -> AbstractAsyncContextManager[Any]:
        return self._connection()

    @contextlib.asynccontextmanager
    async def _connection(self) -> AsyncIterator["OnePolicyReads"]:
        yield self
