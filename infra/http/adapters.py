"""What the handlers talk to (a port per field, the store's adapters handed in by
infra/server/app.py), injected as one dependency annotated with its class, as that costs a
request least: docs/decisions/0029-what-a-request-reads.md."""

from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol
from uuid import UUID

from infra.http.access_cache import AccessCache, SignedOutSessions
from infra.security.access_tokens import TokenIssuer
from infra.settings import Settings
from projections.queries import Reads
from projections.queries.policy_reads import KeptPolicies
from services.ports.event_store import EventStore
from services.ports.kept_secrets import ApplicationRegistry, CredentialVault
from services.ports.name_lookups import (
    IdSequence,
    Lookups,
    NameHolder,
    NameHolders,
    RuleHolders,
)
from services.ports.read_side import RecordedHistory


class HandlerStore(EventStore, RecordedHistory, Protocol):
    """Every stream; it keeps every envelope, so history reads it too."""

    def session(self) -> AbstractAsyncContextManager[EventStore]:
        """The same streams over one connection, for a request that reads then writes."""
        ...


class ConsoleSessions(SignedOutSessions, Protocol):
    async def sign_out(self, session_id: UUID, expires_at: int) -> None: ...


class ChainBreak(Protocol):
    @property
    def stream_id(self) -> UUID: ...
    @property
    def version(self) -> int: ...
    @property
    def event_id(self) -> UUID: ...
    @property
    def reason(self) -> str: ...


class RecordsBreak(Protocol):
    @property
    def seq(self) -> int: ...
    @property
    def reason(self) -> str: ...


class RecordsAnchor(Protocol):
    @property
    def seq(self) -> int: ...
    @property
    def hash(self) -> str: ...
    @property
    def logged_at(self) -> datetime: ...
    @property
    def before(self) -> datetime: ...
    @property
    def pruned_at(self) -> datetime: ...
    @property
    def deleted(self) -> int: ...
    @property
    def kept(self) -> int: ...


class RecordsReport(Protocol):
    @property
    def records(self) -> int: ...
    @property
    def broken_at(self) -> RecordsBreak | None: ...
    @property
    def anchor(self) -> RecordsAnchor | None: ...


class ChainVerification(Protocol):
    @property
    def streams(self) -> int: ...
    @property
    def intact(self) -> bool: ...
    @property
    def first_break(self) -> ChainBreak | None: ...
    @property
    def records(self) -> RecordsReport | None: ...


class HashChains(Protocol):
    """The event log's hash chains, walked: one stream's, or all (None) with the log's own
    sequence."""

    async def verify(self, stream_id: UUID | None) -> ChainVerification: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class Adapters:
    settings: Settings
    token_issuer: TokenIssuer | None  # None: no signing key configured
    registry: ApplicationRegistry
    streams: HandlerStore
    ids: IdSequence
    vault: CredentialVault
    access: AccessCache
    sessions: ConsoleSessions  # the console sessions signed out
    rule_holders: RuleHolders
    name_holder: NameHolder  # who holds a name, as the write side has it
    name_holders: NameHolders
    reads: Reads  # the read models, for the queries of projections/queries/
    chains: HashChains  # the event log's hash chains, for the audit's verification
    policies: KeptPolicies = field(default_factory=KeptPolicies)  # for compliance reads

    @property
    def names(self) -> Lookups:
        """Both name lookups, as a use case asking after a namespace's names takes them."""
        return Lookups(self.name_holder, self.name_holders)
