"""`trainplate projections status | rebuild NAME | skip NAME`: where the read models (and the
relay) stand, one rebuilt from zero, or a stuck one moved past its recorded event."""

import asyncio
import sys

import asyncpg
import click

from infra.cli.endpoints import DATABASE, tool_settings
from infra.cli.in_order import InOrder
from infra.settings import Settings


@click.group(cls=InOrder, help="Read models: where they stand, or rebuild one from zero.")
def projections() -> None:
    pass


@projections.command(help="Each follower's position and lag behind the log.")
def status() -> None:
    with tool_settings("projections", needs=DATABASE) as settings:
        asyncio.run(_status(settings))


@projections.command(help="Rebuild one read model from zero, blue/green.")
@click.argument("name", required=False)
def rebuild(name: str | None) -> None:
    with tool_settings("projections", needs=DATABASE) as settings:
        sys.exit(asyncio.run(_rebuild(settings, name)))


@projections.command(help="Move a stuck read model (or `relay`) past its recorded event.")
@click.argument("name", required=False)
def skip(name: str | None) -> None:
    with tool_settings("projections", needs=DATABASE) as settings:
        sys.exit(asyncio.run(_skip(settings, name)))


async def _status(settings: Settings) -> None:
    from infra.followers import fanout_runner
    from infra.followers.lag import followers_status
    from projections import ALL

    conn = await asyncpg.connect(settings.database.url)
    try:
        names = [projection.name for projection in ALL] + [fanout_runner.NAME]
        followers = [("relay", _relay_checkpoint(settings))]
        followers += [(name, f"projection:{name}") for name in names]
        report = await followers_status(conn, followers)
    finally:
        await conn.close()
    click.echo(f"{'follower':28} {'position':>10} {'behind':>8} {'lag (s)':>8}")
    for line in report:
        click.echo(f"{line.name:28} {line.position:>10} {line.behind:>8} {line.lag_s:>8.2f}")
    for line in report:
        if line.stuck is not None:
            click.echo(f"STUCK {line.name} {line.stuck}")


async def _skip(settings: Settings, name: str | None) -> int:
    from infra.followers import faults

    if not name:
        click.echo("trainplate projections skip: name the stuck projection", err=True)
        return 2
    relay = name == "relay"
    if relay:
        checkpoint = _relay_checkpoint(settings)
    else:
        checkpoint = name if ":" in name else f"projection:{name}"
    conn = await asyncpg.connect(settings.database.url)
    try:
        fault = await faults.skip(conn, checkpoint)
    except faults.NothingToSkipError as error:
        click.echo(f"trainplate projections skip: {error}", err=True)
        return 1
    finally:
        await conn.close()
    lacks = "JetStream never carries it" if relay else "its read model lacks it until a rebuild"
    click.echo(
        f"{checkpoint} moved past position {fault.cursor.position} (event {fault.event_id},"
        f" {fault.event_type}); {lacks}"
    )
    return 0


def _relay_checkpoint(settings: Settings) -> str:
    from infra.jetstream.outbox_relay import checkpoint_name

    return checkpoint_name(settings.relay)


async def _rebuild(settings: Settings, name: str | None) -> int:
    from infra.followers.rebuild import rebuild
    from infra.serialization import DOMAIN_CODEC
    from projections import ALL

    chosen = {projection.name: projection for projection in ALL}
    if name not in chosen:
        click.echo(f"name one of: {', '.join(sorted(chosen))}", err=True)
        return 2
    report = await rebuild(
        settings.database.url,
        chosen[name],
        DOMAIN_CODEC,
        settings.projector,
        progress=lambda done: click.echo(f"  {done} events applied\r", nl=False),
    )
    click.echo(
        f"{report.name}: rebuilt from {report.events} events up to position {report.position} "
        f"in {report.seconds:.2f} s; swapped in with the live tables locked for "
        f"{report.swap_seconds:.3f} s"
    )
    return 0
