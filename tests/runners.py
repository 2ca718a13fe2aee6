"""The followers of the log as tests drive them."""

import asyncpg

from infra.followers.fanout_runner import FanoutRunner
from infra.followers.log_runner import LogRunner
from infra.followers.projection_runner import ProjectionRunner
from infra.serialization import DOMAIN_CODEC
from infra.settings import ProjectorSettings
from projections import ALL


def every_runner(pool: asyncpg.Pool, batch_size: int = 500) -> list[LogRunner]:
    """The fan-out and the read models, as `trainplate serve projector` runs them."""
    settings = ProjectorSettings(batch_size=batch_size, poll_interval_s=0.05)
    return [FanoutRunner(pool, DOMAIN_CODEC, settings), *read_model_runners(pool, settings)]


def read_model_runners(
    pool: asyncpg.Pool, settings: ProjectorSettings | None = None
) -> list[LogRunner]:
    chosen = settings or ProjectorSettings(batch_size=500, poll_interval_s=0.05)
    return [ProjectionRunner(pool, p, DOMAIN_CODEC, chosen) for p in ALL]
