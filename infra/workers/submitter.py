"""The submitter process: `trainplate serve submitter`.

Workloads cannot be requested yet, so the process only connects and waits; the consumer of
`workload.requested` events joins it with the workload API.
"""

import asyncio

from infra.bootstrap import open_resources
from infra.settings import Settings


async def run(settings: Settings, stop: asyncio.Event) -> None:
    async with open_resources(settings, role="submitter"):
        await stop.wait()
