"""Ports: what the application layer needs from the outside world, as Protocols."""

import enum
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from typing import Final, Protocol
from uuid import UUID

import msgspec

from domain.commands import SubjectKind
from domain.events import Event, EventMetadata, PodObserved, RecordedEvent
from domain.specs import SecretRef
from domain.values import ScopeRef
from domain.workload_plans import WorkloadPlan
from domain.workloads import Outcome


class Written(msgspec.Struct, frozen=True):
    """When an event was recorded (the database's clock) and whose request appended it (the
    actor's subject): what a response shows as created or updated at and by."""

    at: datetime
    by: str
    # A creation's request digest, when it was sent under a key: of the events its stream's
    # first transaction wrote (where a keyed create puts it), None for any later.
    request: str | None = None


class Stream(msgspec.Struct, frozen=True):
    """One stream's history: its current version and its events in version order, with when
    and by whom each was written (`written[i]` for `events[i]`)."""

    version: int
    events: tuple[Event, ...]
    written: tuple[Written, ...] = ()

    @property
    def first(self) -> Written | None:
        return self.written[0] if self.written else None

    @property
    def last(self) -> Written | None:
        return self.written[-1] if self.written else None


class AppendResult(msgspec.Struct, frozen=True, kw_only=True):
    """Where an append landed. `replayed`: it was an idempotent retry and wrote nothing.
    `recorded_at`: the time its events were recorded (of the first attempt's, for a replay);
    None when there was nothing to append."""

    stream_id: UUID
    version: int
    positions: tuple[int, ...]
    replayed: bool = False
    recorded_at: datetime | None = None

    @property
    def last_position(self) -> int | None:
        return self.positions[-1] if self.positions else None


class Authenticated(msgspec.Struct, frozen=True, kw_only=True):
    """Who logged in, and the token generation its tokens are issued in."""

    application_id: UUID
    token_generation: int


class ApplicationRegistry(Protocol):
    """Applications and their secrets. The secret is hashed and kept apart from the events, in a
    row written in the unit of work of the append (Streams.transaction) that makes it, swaps it
    or destroys it."""

    async def load(self, application_id: UUID) -> Stream: ...

    async def register(
        self,
        application_id: UUID,
        events: Sequence[Event],
        *,
        expected_version: int,
        client_id: str,
        secret: str,
        metadata: EventMetadata,
        kept_for_retries: bool = False,
    ) -> AppendResult:
        """Append the events and keep the secret's slow hash, atomically. Raises
        ClientIdTakenError when another application has the client id. `kept_for_retries`
        (a create under an Idempotency-Key): the secret is also kept, sealed, for
        `first_secret`, until it is replaced, the application deleted, or a day has passed."""
        ...

    async def first_secret(self, application_id: UUID) -> str | None:
        """The secret the application was created with, if it was kept for retries and still
        is; else None."""
        ...

    async def unregister(
        self,
        application_id: UUID,
        events: Sequence[Event],
        *,
        expected_version: int,
        metadata: EventMetadata,
    ) -> AppendResult:
        """Append the events and destroy the application's credential, atomically."""
        ...

    async def replace_secret(
        self,
        application_id: UUID,
        events: Sequence[Event],
        *,
        expected_version: int,
        secret: str,
        metadata: EventMetadata,
    ) -> AppendResult:
        """Append the events and swap the secret's hash for the new one's, atomically."""
        ...

    async def authenticate(self, client_id: str, secret: str) -> Authenticated | None:
        """The live application with these credentials, else None."""
        ...


class NameClaim(msgspec.Struct, frozen=True, kw_only=True):
    """A name that must be unique among the streams of one namespace (say, the environments of
    one project). `field` is where the name sits in the request, for the error that names it."""

    namespace: str
    name: str
    field: str = "/name"


class Uses(msgspec.Struct, frozen=True, kw_only=True):
    """The streams a stream uses once its events are appended, written with them in one
    transaction: a template its assets, an asset the credentials it reads, and every thing the
    org unit it lives in (a project its cluster or department). With `unused` on a deletion's
    append, this is what keeps a thing in use from being deleted and a deleted thing from
    coming into use, however the two writes interleave.

    `user` is how the stream is named to whoever finds the thing in use ("template my-run");
    each used stream comes with the request field that named it, for the error when it was
    deleted meanwhile. Nothing used: the stream uses nothing (as after its deletion)."""

    user: str
    used: tuple[tuple[UUID, str], ...] = ()


# Builds the refusal of a deletion from the names of what still uses the stream.
InUse = Callable[[Sequence[str]], Exception]


class Keep(enum.Enum):
    """An append's `name` when it leaves the stream's name as it is (KEEP, the default)."""

    KEEP = "keep"


KEEP: Final = Keep.KEEP


class Streams(Protocol):
    """The one way to append: every stream (named or not) is written through `append`, which
    also moves, in the same transaction, the name the stream holds and the streams it uses.
    `transaction()` is the unit of work of a command that writes several streams."""

    # The most bytes one event may encode to: an append holding a larger one raises
    # EventTooLargeError naming its largest part, and writes nothing.
    max_event_bytes: int

    async def load(self, stream_id: UUID) -> Stream: ...

    async def load_many(
        self, stream_ids: Sequence[UUID], *, remembered: bool = False
    ) -> dict[UUID, Stream]:
        """Several streams at once; a stream with no events is absent. `remembered`: the store
        may answer from what it read before, which may have moved on since; a decision made on
        such streams appends with them as `checked`."""
        ...

    async def load_after(self, versions: Mapping[UUID, int]) -> dict[UUID, tuple[Event, ...]]:
        """As BatchAppender.load_after."""
        ...

    async def append(
        self,
        stream_id: UUID,
        events: Sequence[Event],
        *,
        expected_version: int | None,
        metadata: EventMetadata,
        event_ids: Sequence[UUID] | None = None,
        name: NameClaim | Keep | None = KEEP,
        uses: Uses | None = None,
        unused: InUse | None = None,
        checked: Mapping[UUID, int] | None = None,
    ) -> AppendResult:
        """Append atomically, all events or none, with what the stream holds and uses.

        `expected_version` is the stream version the caller decided on (0: a new stream; None: no
        expectation); a mismatch raises VersionConflictError and writes nothing. An append whose
        `event_ids` are already stored in this stream returns the first result and writes nothing,
        its name and uses left as they are, whoever holds the name since (a client retrying a
        create with the same key); IdempotencyKeyReusedError when they are stored in another.
        Appending no events writes no event.

        Afterwards the stream holds exactly `name` (None: it holds none, as a deleted thing frees
        its name; KEEP: the name it held). Raises NameTakenError, writing nothing, when another
        stream holds the name in that namespace. With `uses`, the stream uses exactly those
        streams afterwards; InvalidRequestError naming the field, writing nothing, when one of
        them is deleted. With `unused`, what it builds is raised, writing nothing, when anything
        uses the stream. With `checked` (stream id -> the version a decision read, 0: no events),
        StaleReadError is raised, writing nothing, when one of them has moved on."""
        ...

    def transaction(self) -> AbstractAsyncContextManager["Streams"]:
        """`async with streams.transaction() as tx:` the same port, its appends (and its reads)
        in one transaction: they commit together when the block ends, or none does when it
        raises. A refused append undoes only itself and leaves the unit usable: its caller may
        read what won a race and go on (services/idempotency.create_once), or let the error
        leave the block. Inside one, `transaction()` joins it."""
        ...


class NameHolder(Protocol):
    """Which stream holds a name in a namespace (the names `Streams.append` claims), None when
    none does: the write side's own answer to a name-availability question."""

    async def __call__(self, namespace: str, name: str) -> UUID | None: ...


class NameHolders(Protocol):
    """The streams holding a name in any of these namespaces (the names `Streams.append`
    claims), in no order: what a write decides on when it must know everything named there."""

    async def __call__(self, namespaces: Sequence[str]) -> list[UUID]: ...


class IdSequence(Protocol):
    """Small integer ids (Run:ai numbers its departments and projects). Given a `creation` (the
    id services/idempotency.py derives from a create's `Idempotency-Key`), the id issued to that
    creation before, if any: a retry is given its first attempt's id, and so reaches its stream.
    `given`: the id to issue to a creation not issued one yet, in place of a new one (a create
    answered with something that exists already, so that its retries are answered it too)."""

    async def next_id(self, creation: UUID | None = None, *, given: int | None = None) -> int: ...

    async def issued(self, creation: UUID) -> int | None:
        """The id issued to `creation` before, if any; issues none (so a create refused before
        it is decided uses up no number)."""
        ...


class RuleHolders(Protocol):
    """Whose stream holds an access rule in force, from the write side (kept in the transaction
    of each grant and revocation): the subject's kind and id, or None when no rule of that id is
    in force. A rule granted a moment ago is found."""

    async def holder(self, rule_id: int) -> tuple[SubjectKind, str] | None: ...


class StreamLoader(Protocol):
    """Anything that reads a stream's history (every store above does)."""

    async def load(self, stream_id: UUID) -> Stream: ...


class StreamReader(Protocol):
    """A store that reads several streams at once too (Streams, CredentialVault)."""

    async def load(self, stream_id: UUID) -> Stream: ...

    async def load_many(
        self, stream_ids: Sequence[UUID], *, remembered: bool = False
    ) -> dict[UUID, Stream]:
        """As Streams.load_many."""
        ...


class CreationStore(Protocol):
    """What a create appends through (services/idempotency.py): Streams, or a credential
    vault sealing the values of the credential it creates."""

    async def load(self, stream_id: UUID, /) -> Stream: ...

    async def append(
        self,
        stream_id: UUID,
        events: Sequence[Event],
        /,
        *,
        expected_version: int,
        metadata: EventMetadata,
        name: NameClaim | None,
        uses: Uses | None = None,
        checked: Mapping[UUID, int] | None = None,
    ) -> AppendResult:
        """As Streams.append."""
        ...


class OrgTree(Protocol):
    """The org tree as the read side knows it: for questions that span many units."""

    async def lineages(self) -> dict[ScopeRef, tuple[ScopeRef, ...]]:
        """Every live scope, the tenant included, with its lineage (itself, then ancestors)."""
        ...


class CredentialVault(Protocol):
    """Credential streams with their values: sealed and stored with the creating event, and
    destroyed with the deleting one, each in the unit of work of the append
    (Streams.transaction). Values never reach an event."""

    async def load(self, stream_id: UUID) -> Stream: ...

    async def load_many(
        self, stream_ids: Sequence[UUID], *, remembered: bool = False
    ) -> dict[UUID, Stream]:
        """As Streams.load_many."""
        ...

    def reference(self, asset_id: UUID, values: Mapping[str, str]) -> SecretRef:
        """The key id and keyed fingerprint the events record in place of the asset's values
        (bound to the asset: equal values of two assets fingerprint apart)."""
        ...

    def holds(self, asset_id: UUID, values: Mapping[str, str], secret: SecretRef) -> bool:
        """Whether `secret` is what the events recorded of these values of the asset."""
        ...

    async def open(self, asset_id: UUID) -> dict[str, str] | None:
        """The values kept for the asset, for the few places that must hand them on (a
        workload's cluster secret, a registry's login); None when it has none (or is gone)."""
        ...

    async def append(
        self,
        asset_id: UUID,
        events: Sequence[Event],
        *,
        expected_version: int,
        metadata: EventMetadata,
        name: NameClaim | None,
        values: Mapping[str, str] | None = None,
        uses: Uses | None = None,
        unused: InUse | None = None,
        checked: Mapping[UUID, int] | None = None,
    ) -> AppendResult:
        """As Streams.append; `values` are sealed and kept with the events, and an append
        that frees the name (a deletion) destroys the stored values."""
        ...


class LinkIndex(Protocol):
    """What the fan-out reads: which templates use an asset (the write side's record, kept in
    the transaction of each template's append), and its own memory, kept in step with its
    position in the log: the latest version of each asset it has read."""

    async def templates_using(self, asset_id: UUID) -> list[UUID]: ...

    async def latest_versions(self, asset_ids: Sequence[UUID]) -> dict[UUID, int]:
        """Those of the assets it has read a version of."""
        ...

    async def set_latest_version(self, asset_id: UUID, version: int) -> None: ...


class Submission(msgspec.Struct, frozen=True, kw_only=True):
    """What a backend did with a plan: its name, and what it rendered (kept by a dry run)."""

    backend: str
    manifests: tuple[dict[str, object], ...] = ()


class RunStatus(msgspec.Struct, frozen=True):
    """What a backend sees of a run it took: the outcome to record, and why."""

    outcome: Outcome
    reason: str | None = None


class WorkloadBackend(Protocol):
    """Where workloads run (local processes, Kubernetes, nowhere for a dry run). Submitting and
    stopping are idempotent by the plan's job name: submitting what already runs succeeds and
    starts nothing, stopping what is gone succeeds. What happens afterwards comes back through
    `Reports`, and `status` answers it again for a run whose report was lost."""

    name: str

    async def submit(self, plan: WorkloadPlan) -> Submission:
        """Start the plan's run. Raises BackendRejectedError when it can never start."""
        ...

    async def stop(self, plan: WorkloadPlan, *, suspend: bool = False) -> None:
        """Stop the plan's run; `suspend`: the workload is to resume later (a backend that can
        keep what it made, suspended, does; the others stop it all the same)."""
        ...

    async def status(self, plan: WorkloadPlan) -> RunStatus | None:
        """What became of the plan's run, which it took: running, its outcome, or failed when
        nothing of it is left; None when it has nothing to add (under way elsewhere, or it
        cannot tell)."""
        ...


class Reports(Protocol):
    """Where a backend sends what became of a run."""

    async def __call__(
        self, workload_id: UUID, run: int, outcome: Outcome, reason: str | None = None
    ) -> None: ...


class PodReports(Protocol):
    """Where a backend sends the replicas of a run as it now sees them (the whole set; `run`
    None: the workload's current run)."""

    async def __call__(
        self, workload_id: UUID, run: int | None, pods: Sequence[PodObserved]
    ) -> None: ...


class OneAppend(msgspec.Struct, frozen=True, kw_only=True):
    """One event for one stream, after the version its writer read, under a chosen id."""

    stream_id: UUID
    event: Event
    expected_version: int
    event_id: UUID


class BatchAppender(Protocol):
    """Many streams read and written at once (the linked-asset fan-out, the submitter's outcomes):
    what Streams offers for one event to each of many streams, in one statement."""

    async def load_many(self, stream_ids: Sequence[UUID]) -> dict[UUID, Stream]:
        """Several streams at once; a stream with no events is absent."""
        ...

    async def load_after(self, versions: Mapping[UUID, int]) -> dict[UUID, tuple[Event, ...]]:
        """Each stream's events after the version given (what a reader folded of it before),
        several streams at once; a stream with none after it is absent."""
        ...

    async def append_each(
        self, appends: Sequence[OneAppend], *, metadata: EventMetadata
    ) -> frozenset[UUID]:
        """The streams that took their event. A stream that moved on since it was read, or
        that already holds an event of that id (a replay), takes nothing, and the others are
        written all the same."""
        ...


class RecordedHistory(Protocol):
    """A stream's events with their envelopes (when, who, why), for history and audit reads."""

    async def load_recorded(self, stream_id: UUID) -> list[RecordedEvent]: ...
