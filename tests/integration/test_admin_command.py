"""`trainplate admin create`: where the processes run from an image (no `trainplate dev`), it makes
the tenant-wide admin application once, showing a generated secret once; run again, it says the
application exists and changes nothing."""

import os
import re
import subprocess
import sys
from uuid import uuid4

import asyncpg
import pytest

from domain import applications
from domain.values import TENANT_ADMIN
from infra.postgres.application_registry import PostgresApplicationRegistry
from infra.postgres.streams import PostgresStreams
from infra.postgres.units_of_work import SecretKeys
from infra.security.secret_hashing import SecretHasher
from infra.serialization import DOMAIN_CODEC
from infra.settings import Settings

pytestmark = pytest.mark.integration


def admin_create(postgres_url: str, **env: str) -> subprocess.CompletedProcess[str]:
    given = {f"TRAINPLATE_{name.upper()}": value for name, value in env.items()}
    return subprocess.run(
        [sys.executable, "-m", "infra.cli", "admin", "create"],
        env={**os.environ, "TRAINPLATE_DATABASE_URL": postgres_url, **given},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


async def test_the_admin_is_made_once_and_its_secret_logs_in(
    clean_pool: asyncpg.Pool, postgres_url: str
) -> None:
    name = f"admin-{uuid4().hex[:8]}"
    made = admin_create(postgres_url, admin_app_id=name)
    assert made.returncode == 0, made.stderr
    (secret,) = re.findall(r"shown this once: (\S+)$", made.stdout.strip())
    again = admin_create(postgres_url, admin_app_id=name)
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == (
        f"{name} exists already: its secret is as set or shown when it was made"
    )
    keys = SecretKeys(hasher=SecretHasher(Settings().auth))
    streams = PostgresStreams(clean_pool, DOMAIN_CODEC, keys=keys)
    registry = PostgresApplicationRegistry(streams, clean_pool, keys)
    signed_in = await registry.authenticate(name, secret)
    assert signed_in is not None
    state = applications.fold((await streams.load(signed_in.application_id)).events)
    assert state is not None
    assert state.grants == (TENANT_ADMIN,)
    chosen = f"admin-{uuid4().hex[:8]}"
    given = admin_create(postgres_url, admin_app_id=chosen, admin_app_secret="s" * 40)
    assert "with the secret TRAINPLATE_ADMIN_APP_SECRET holds" in given.stdout
    assert await registry.authenticate(chosen, "s" * 40) is not None
