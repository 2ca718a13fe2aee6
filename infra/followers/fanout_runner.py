"""The linked-asset fan-out as a log follower: services/fanout.py decides, this module gives it
its index (two tables) and an event store on the runner's connection, so the index, the
template events it appends and its checkpoint commit in one transaction."""

from uuid import UUID

from domain.events import RecordedEvent
from infra.postgres.batch_append import PostgresBatchAppender
from infra.postgres.connections import Connection
from infra.postgres.eventstore import PostgresEventStore
from infra.postgres.positions import last_position
from infra.postgres.read_marks import mark_downstream
from infra.serialization import EventCodec
from projections import Projection
from projections.executor import Executor
from services import fanout

NAME = "linked_asset_fanout"


class PostgresLinkIndex:
    def __init__(self, conn: Executor) -> None:
        self._conn = conn

    async def templates_linking(self, asset_id: UUID) -> list[UUID]:
        rows = await self._conn.fetch(
            "SELECT template_id FROM fanout_links WHERE asset_id = $1 ORDER BY template_id",
            asset_id,
        )
        return [row["template_id"] for row in rows]

    async def set_links(self, template_id: UUID, asset_ids: frozenset[UUID]) -> None:
        await self._conn.execute("DELETE FROM fanout_links WHERE template_id = $1", template_id)
        for asset_id in sorted(asset_ids):
            await self._conn.execute(
                "INSERT INTO fanout_links (template_id, asset_id) VALUES ($1, $2)",
                template_id,
                asset_id,
            )

    async def latest_version(self, asset_id: UUID) -> int | None:
        row = await self._conn.fetchrow(
            "SELECT version FROM fanout_asset_versions WHERE asset_id = $1", asset_id
        )
        return None if row is None else int(row["version"])

    async def set_latest_version(self, asset_id: UUID, version: int) -> None:
        await self._conn.execute(
            "INSERT INTO fanout_asset_versions (asset_id, version) VALUES ($1, $2)"
            " ON CONFLICT (asset_id) DO UPDATE SET version = greatest("
            "fanout_asset_versions.version, excluded.version)",
            asset_id,
            version,
        )


def fanout_projection(codec: EventCodec, store: PostgresEventStore) -> Projection:
    """The fan-out in the shape the projection runner drives (a name and an `apply`)."""

    async def apply(conn: Executor, recorded: RecordedEvent) -> None:
        on_conn: Connection = conn  # type: ignore[assignment]  # the runner passes its connection
        within = PostgresBatchAppender(on_conn, codec, store.notifier)
        last_position.set(None)
        await fanout.handle(recorded, index=PostgresLinkIndex(conn), store=within)
        appended_up_to = last_position.get()
        if appended_up_to is not None and recorded.metadata.actor_kind != "system":
            # The caller's next read waits for these too (infra/postgres/read_marks.py).
            await mark_downstream(on_conn, recorded.metadata.actor_subject, appended_up_to)

    return Projection(NAME, apply)
