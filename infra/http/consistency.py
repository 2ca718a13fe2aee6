"""Read-your-writes over eventually consistent read models.

Every write response carries `X-Trainplate-Position`, the log position of the last event the
request appended. A read that sends it back as `X-Trainplate-Min-Position` waits (bounded by
`TRAINPLATE_CONSISTENCY_WAIT_S`) until every read model has applied that event; if they have not
by then it answers from the current state with `X-Trainplate-Stale: true`.
"""

import asyncio
import time
from contextvars import ContextVar
from typing import Any, Final

import asyncpg
from litestar import Request, Response

from infra.postgres.positions import last_position
from projections import ALL

POSITION: Final = "X-Trainplate-Position"
MIN_POSITION: Final = "X-Trainplate-Min-Position"
STALE: Final = "X-Trainplate-Stale"
_POLL_S: Final = 0.02

_stale: ContextVar[bool] = ContextVar("trainplate_stale", default=False)

_CAUGHT_UP: Final = """
SELECT count(*) FROM consumer_checkpoints c, events e
 WHERE e.global_position = $1 AND c.name = ANY($2::text[])
   AND (c.transaction_id, c.global_position) >= (e.transaction_id, e.global_position)
"""
_NAMES: Final = [f"projection:{projection.name}" for projection in ALL]


async def caught_up(pool: asyncpg.Pool, position: int, wait_s: float) -> bool:
    """Whether every read model has applied the event at `position`, waiting up to `wait_s`."""
    deadline = time.monotonic() + wait_s
    while True:
        if await pool.fetchval(_CAUGHT_UP, position, _NAMES) == len(_NAMES):
            return True
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(_POLL_S)


def before_request(wait_s: float) -> Any:
    async def hook(request: Request[Any, Any, Any]) -> None:
        last_position.set(None)
        _stale.set(False)
        wanted = request.headers.get(MIN_POSITION)
        if wanted is None or request.method != "GET" or not wanted.isdigit():
            return
        if request.scope.get("user") is None:
            return  # only a caller who wrote may make a read wait: no one holds a connection free
        pool: asyncpg.Pool = request.app.state.resources.pool
        _stale.set(not await caught_up(pool, int(wanted), wait_s))

    return hook


async def after_request(response: Response[Any]) -> Response[Any]:
    position = last_position.get()
    if position is not None:
        response.headers[POSITION] = str(position)
    if _stale.get():
        response.headers[STALE] = "true"
    return response
