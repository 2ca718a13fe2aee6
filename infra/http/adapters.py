"""What the handlers talk to, put together once per process and injected as one dependency.

One, not one per adapter: Litestar resolves two or more dependencies of a handler concurrently,
in a task group of their own on every request, which cost a GET by id about an eighth of its
time. Handlers annotate it with this class (Litestar checks the injected value against it: one
isinstance, where a runtime Protocol check would walk the protocol's members per request).
"""

from dataclasses import dataclass

from infra.bootstrap import Resources
from infra.http.access_cache import AccessCache
from infra.postgres.application_registry import PostgresApplicationRegistry
from infra.postgres.credential_vault import PostgresCredentialVault
from infra.postgres.names import PostgresIdSequence
from infra.postgres.rule_holders import PostgresRuleHolders
from infra.postgres.signed_out import PostgresSignedOutSessions
from infra.postgres.streams import PostgresStreams
from infra.security.access_tokens import TokenIssuer
from infra.settings import Settings


@dataclass(frozen=True, slots=True, kw_only=True)
class Adapters:
    settings: Settings
    token_issuer: TokenIssuer | None  # None: no signing key configured
    resources: Resources  # the pool and the broker connection
    registry: PostgresApplicationRegistry
    streams: PostgresStreams  # every stream; it keeps every envelope, so history reads it too
    ids: PostgresIdSequence
    vault: PostgresCredentialVault
    access: AccessCache
    sessions: PostgresSignedOutSessions  # the console sessions signed out
    rule_holders: PostgresRuleHolders
