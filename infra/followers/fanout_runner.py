"""The linked-asset fan-out follows the log (services/fanout.py decides): on the runner's
connection, the template events it appends, its memory of asset versions and its checkpoint
commit in one transaction. Each event that may move templates is handled in a span of its trace."""

import time
from collections.abc import Sequence
from typing import Final
from uuid import UUID

import asyncpg

from domain.events import RecordedEvent, event_tag
from infra.followers.checkpoint_moves import CheckpointMoves
from infra.followers.log_runner import LogRunner
from infra.followers.log_tap import LogTap
from infra.followers.metrics import ProjectorMetrics
from infra.postgres.commit_notifier import CommitNotices, CommitNotifier
from infra.postgres.connections import Connection
from infra.postgres.read_marks import mark_downstream
from infra.postgres.streams import PostgresStreams
from infra.serialization import EventCodec
from infra.settings import ProjectorSettings
from infra.telemetry import tracing
from services import fanout
from services.errors import VersionConflictError

NAME: Final = "linked_asset_fanout"
CHECKPOINT: Final = f"projection:{NAME}"  # the name it has always been saved under

# The templates that use an asset, as their appends record it (infra/postgres/stream_uses.py);
# the asset's other users (none today) are not templates and are left out.
_USING: Final = """
SELECT u.user_id FROM stream_uses u
 WHERE u.used_id = $1
   AND EXISTS (SELECT FROM events e
                WHERE e.stream_id = u.user_id AND e.version = 1 AND e.stream_type = 'template')
 ORDER BY u.user_id
"""


class PostgresLinkIndex:
    def __init__(self, conn: Connection) -> None:
        self._conn = conn

    async def templates_using(self, asset_id: UUID) -> list[UUID]:
        return [row["user_id"] for row in await self._conn.fetch(_USING, asset_id)]

    async def latest_versions(self, asset_ids: Sequence[UUID]) -> dict[UUID, int]:
        if not asset_ids:
            return {}
        rows = await self._conn.fetch(
            "SELECT asset_id, version FROM fanout_asset_versions WHERE asset_id = ANY($1::uuid[])",
            list(asset_ids),
        )
        return {row["asset_id"]: int(row["version"]) for row in rows}

    async def set_latest_version(self, asset_id: UUID, version: int) -> None:
        await self._conn.execute(
            "INSERT INTO fanout_asset_versions (asset_id, version) VALUES ($1, $2)"
            " ON CONFLICT (asset_id) DO UPDATE SET version = greatest("
            "fanout_asset_versions.version, excluded.version)",
            asset_id,
            version,
        )


class FanoutRunner(LogRunner):
    """The fan-out's runner. A template that stays contended after fanout.ATTEMPTS reads
    (VersionConflictError) rolls the batch back and tries it again from the checkpoint."""

    def __init__(
        self,
        pool: asyncpg.Pool,
        codec: EventCodec,
        settings: ProjectorSettings,
        *,
        notifier: CommitNotifier | None = None,
        metrics: ProjectorMetrics | None = None,
        tap: LogTap | None = None,
        moves: CheckpointMoves | None = None,
    ) -> None:
        super().__init__(
            pool,
            NAME,
            codec,
            settings,
            checkpoint=CHECKPOINT,
            retry_on=(VersionConflictError,),
            metrics=metrics,
            tap=tap,
            moves=moves,
        )
        self._notifier = notifier or CommitNotifier(pool)
        self._notices = _AfterCommit(self._notifier)
        self._followed = fanout.Followed()
        self._observed: list[tuple[float | None, int]] = []  # (fan-out seconds, appended)

    async def consume(self, conn: Connection, events: Sequence[RecordedEvent]) -> None:
        index = PostgresLinkIndex(conn)
        self._notices = _AfterCommit(self._notifier)
        self._followed.begin()
        appender = PostgresStreams(conn, self._codec, notifier=self._notices)
        self._observed = []
        for recorded in events:
            if isinstance(recorded.event, fanout.MOVES_TEMPLATES):
                await self._moving(recorded, index, appender)
            else:
                await fanout.handle(recorded, index=index, store=appender, followed=self._followed)
            appended_up_to = appender.take_last_position()
            if appended_up_to is not None and recorded.metadata.actor_kind != "system":
                # The caller's next read waits for these too (infra/postgres/read_marks.py).
                await mark_downstream(conn, recorded.metadata.actor_subject, appended_up_to)

    async def _moving(
        self, recorded: RecordedEvent, index: PostgresLinkIndex, appender: PostgresStreams
    ) -> None:
        """`fanout.handle` of an event that may move templates on: in a span continuing the
        event's trace (the appends record it), timed when an asset's change fans out."""
        attributes = {
            "trainplate.event.id": str(recorded.event_id),
            "trainplate.event.type": event_tag(type(recorded.event)),
        }
        started = time.perf_counter()
        with tracing.span(
            "fan out", parents=[tracing.of_event(recorded.metadata)], attributes=attributes
        ) as span:
            appended = await fanout.handle(
                recorded, index=index, store=appender, followed=self._followed
            )
            if span is not None:
                span.set_attribute("trainplate.templates", appended)
        if isinstance(recorded.event, fanout.FANS_OUT) or appended:
            fans_out = isinstance(recorded.event, fanout.FANS_OUT)
            self._observed.append((time.perf_counter() - started if fans_out else None, appended))

    def committed(self) -> None:
        self._notices.flush()
        self._followed.commit()
        observed, self._observed = self._observed, []
        if self._metrics is None:
            return
        for seconds, appended in observed:
            if seconds is not None:
                self._metrics.fanout_seconds.observe(seconds)
            self._metrics.fanout_templates.inc(appended)


class _AfterCommit:
    """The fan-out's commit notices, held until the runner's transaction commits: told at once,
    the notifier could wake the readers (a trailing NOTIFY) before the events are there to read.
    A NOTIFY an append carries is delivered at the commit anyway; a rollback tells no one."""

    def __init__(self, notifier: CommitNotices) -> None:
        self._notifier = notifier
        self._held: list[float | None] = []

    def claim(self) -> float | None:
        return self._notifier.claim()

    def committed(self, carried_at: float | None) -> None:
        self._held.append(carried_at)

    def flush(self) -> None:
        held, self._held = self._held, []
        for carried_at in held:
            self._notifier.committed(carried_at)
