"""How every worker process starts and stops: a stop event set by SIGTERM/SIGINT."""

import asyncio
import signal
from collections.abc import Awaitable, Callable


def run_until_signalled(worker: Callable[[asyncio.Event], Awaitable[None]]) -> None:
    """Run `worker(stop)` in a fresh event loop; SIGTERM or SIGINT sets `stop` for a clean exit."""

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        await worker(stop)

    asyncio.run(main())
