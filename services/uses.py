"""The streams a thing's writes say it uses (services/ports.py `Uses`), as the use cases name
them, and the deletion that is refused while anything uses the stream."""

from collections.abc import Sequence
from uuid import UUID

from domain import org_units
from domain.events import Event, EventMetadata
from domain.values import ScopeRef
from services.ports import CredentialVault, InUse, Stream, Streams, Uses


def of_scope(scope: ScopeRef, field: str) -> tuple[tuple[UUID, str], ...]:
    """The org unit a thing lives in, which it keeps from being deleted; none at the tenant,
    which always exists."""
    return () if scope.kind == "tenant" else ((org_units.stream_of(scope), field),)


async def delete_unused(
    streams: Streams | CredentialVault,
    stream_id: UUID,
    stream: Stream,
    events: Sequence[Event],
    *,
    metadata: EventMetadata,
    user: str,
    in_use: InUse,
) -> None:
    """Append a deletion's events (none: it was deleted already): the stream frees its name and
    uses nothing more, and the append is refused with what `in_use` builds from the users'
    names while anything uses it, in the same transaction."""
    if events:
        await streams.append(
            stream_id,
            events,
            expected_version=stream.version,
            metadata=metadata,
            name=None,
            uses=Uses(user=user),
            unused=in_use,
        )
