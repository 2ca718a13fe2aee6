"""The streams a thing's writes say it uses (services/ports/event_store.py `Uses`), as the use
cases name them, and the deletion that is refused while anything uses the stream."""

from collections.abc import Sequence
from uuid import UUID

from domain import org_units
from domain.events import Event, EventMetadata
from domain.values import ScopeRef
from services.ports.event_store import Append, EventStore, InUse, Stream, Uses
from services.ports.kept_secrets import SecretRow


def of_scope(scope: ScopeRef, field: str) -> tuple[tuple[UUID, str], ...]:
    """The org unit a thing lives in, which it keeps from being deleted; none at the tenant,
    which always exists."""
    return () if scope.kind == "tenant" else ((org_units.stream_of(scope), field),)


async def delete_unused(
    streams: EventStore,
    stream_id: UUID,
    stream: Stream,
    events: Sequence[Event],
    *,
    metadata: EventMetadata,
    user: str,
    in_use: InUse,
    secret: SecretRow | None = None,
) -> None:
    """Append a deletion's events (none: it was deleted already): the stream frees its name and
    uses nothing more, and the append is refused with what `in_use` builds from the users'
    names while anything uses it, in the same transaction; `secret`: what it destroys with them."""
    if events:
        await streams.append(
            Append(
                stream_id,
                events,
                expected_version=stream.version,
                metadata=metadata,
                name=None,
                uses=Uses(user=user),
                unused=in_use,
                secret=secret,
            )
        )
