"""The tenant-wide admin application, made on a service's first start (`trainplate dev`) or by
`trainplate admin create` where the processes run from an image: the first caller able to make
every other account and access rule."""

import secrets
from uuid import uuid4

from domain.commands import CreateApplication
from domain.events import EventMetadata
from domain.values import TENANT_ADMIN
from infra.bootstrap import create_pool
from infra.postgres.application_registry import PostgresApplicationRegistry
from infra.postgres.streams import PostgresStreams
from infra.postgres.units_of_work import SecretKeys
from infra.security.secret_hashing import SecretHasher
from infra.serialization import DOMAIN_CODEC
from infra.settings import DatabaseSettings, Settings
from services.applications import create_application
from services.errors import ClientIdTakenError


async def create_admin(url: str, settings: Settings, *, actor: str) -> tuple[bool, str | None]:
    """Whether it was made now, and its secret when generated now (to be shown once); an
    application of that id made before is left as it is."""
    pool = await create_pool(DatabaseSettings(url=url, pool_max=2), application_name=actor)
    try:
        keys = SecretKeys(hasher=SecretHasher(settings.auth))
        store = PostgresStreams(pool, DOMAIN_CODEC, keys=keys)
        registry = PostgresApplicationRegistry(store, pool, keys)
        secret = settings.admin_app_secret or secrets.token_urlsafe(32)
        command = CreateApplication(
            application_id=uuid4(),
            name=settings.admin_app_id,
            grants=(TENANT_ADMIN,),
            metadata=EventMetadata(actor_subject=actor, actor_kind="system"),
        )
        try:
            await create_application(command, secret=secret, store=store, registry=registry)
        except ClientIdTakenError:
            return False, None
        return True, None if settings.admin_app_secret else secret
    finally:
        await pool.close()
