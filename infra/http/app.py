"""The Litestar application factory; the lifespan opens (or is handed) the process's resources."""

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from litestar import Litestar
from litestar.datastructures import State
from litestar.di import Provide
from litestar.middleware import DefineMiddleware
from litestar.openapi import OpenAPIConfig

from infra.bootstrap import Resources, open_resources
from infra.http.access_cache import AccessCache
from infra.http.access_rules import ACCESS_RULE_ROUTES
from infra.http.asset_schemas import provide_asset_filter
from infra.http.assets import ASSET_ROUTES
from infra.http.audit import AUDIT_ROUTES
from infra.http.auth import BearerAuthenticationMiddleware
from infra.http.consistency import after_request, settler
from infra.http.credentials import CREDENTIAL_ROUTES
from infra.http.data_sources import DATA_SOURCE_ROUTES
from infra.http.edge import EdgeGuardMiddleware
from infra.http.event_contract import CONTRACT_ROUTES
from infra.http.health import healthz, metrics, readyz
from infra.http.history import HISTORY_ROUTES
from infra.http.impact import IMPACT_ROUTES
from infra.http.openapi_document import DecoderExactJson
from infra.http.org_units import ORG_UNIT_ROUTES
from infra.http.problems import EXCEPTION_HANDLERS
from infra.http.service_accounts import (
    create_service_account,
    delete_service_account,
    get_service_account,
    list_service_accounts,
    patch_service_account,
    regenerate_service_account_secret,
)
from infra.http.templates import TEMPLATE_ROUTES
from infra.http.tenant_settings import SETTING_ROUTES
from infra.http.token_grant import grant_token
from infra.http.workloads import WORKLOAD_ROUTES
from infra.postgres.application_registry import PostgresApplicationRegistry
from infra.postgres.credential_vault import PostgresCredentialVault
from infra.postgres.eventstore import PostgresEventStore
from infra.postgres.named_streams import PostgresIdSequence, PostgresNamedStreams
from infra.postgres.read_model_ports import (
    PostgresAssetUsage,
    PostgresOrgTree,
    PostgresRegistryCredentials,
)
from infra.security.access_tokens import ExternalTokenVerifier, TokenIssuer
from infra.security.login_throttle import LoginThrottle
from infra.security.sealing import Sealer
from infra.security.secret_hashing import SecretHasher
from infra.serialization import DOMAIN_CODEC
from infra.settings import Settings

log = logging.getLogger(__name__)


def _from_state(attribute: str) -> Provide:
    """A dependency read off the app's state. Handlers annotate it with the adapter's own class:
    Litestar checks each injected value against its annotation, and a runtime Protocol check
    walks the protocol's members on every request."""

    def provide(state: State) -> Any:
        return getattr(state, attribute)

    return Provide(provide, sync_to_thread=False)


def create_app(settings: Settings, *, resources: Resources | None = None) -> Litestar:
    token_issuer = TokenIssuer(settings.auth) if settings.auth.signing_key else None
    external = ExternalTokenVerifier(settings.auth) if settings.auth.jwks_url else None
    sealer = Sealer(settings.credentials) if settings.credentials.encryption_key else None
    if sealer is None:
        log.warning("no credential encryption key configured: creating credentials answers 503")
    if token_issuer is None:
        log.warning("no token signing key configured: POST /api/v1/token answers 503")

    def _wire(app: Litestar, opened: Resources) -> None:
        app.state.resources = opened
        app.state.logins = LoginThrottle(
            per_client=settings.auth.login_failures_per_client,
            per_address=settings.auth.login_failures_per_address,
            window_s=settings.auth.login_window_s,
        )
        app.state.registry = PostgresApplicationRegistry(opened.pool, SecretHasher(settings.auth))
        store = PostgresEventStore(opened.pool, DOMAIN_CODEC)
        app.state.streams = PostgresNamedStreams(opened.pool, store)
        app.state.ids = PostgresIdSequence(opened.pool)
        app.state.tree = PostgresOrgTree(opened.pool)
        app.state.access = AccessCache(store, app.state.tree)
        app.state.vault = PostgresCredentialVault(opened.pool, store, sealer)
        app.state.usage = PostgresAssetUsage(opened.pool)
        app.state.store = store
        app.state.registries = PostgresRegistryCredentials(opened.pool)

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        if resources is not None:  # tests hand in ready-made resources
            _wire(app, resources)
            yield
            return
        async with open_resources(settings, role="api") as opened:
            _wire(app, opened)
            yield

    def provide_settings() -> Settings:
        return settings

    return Litestar(
        route_handlers=[
            healthz,
            readyz,
            metrics,
            grant_token,
            create_service_account,
            list_service_accounts,
            get_service_account,
            delete_service_account,
            regenerate_service_account_secret,
            patch_service_account,
            *ORG_UNIT_ROUTES,
            *ASSET_ROUTES,
            *CREDENTIAL_ROUTES,
            *DATA_SOURCE_ROUTES,
            *ACCESS_RULE_ROUTES,
            *TEMPLATE_ROUTES,
            *IMPACT_ROUTES,
            *WORKLOAD_ROUTES,
            *AUDIT_ROUTES,
            *CONTRACT_ROUTES,
            *HISTORY_ROUTES,
            *SETTING_ROUTES,
        ],
        lifespan=[lifespan],
        openapi_config=OpenAPIConfig(
            title="trainplate", version="1.0.0", render_plugins=[DecoderExactJson()]
        ),
        dependencies={
            "settings": Provide(provide_settings, sync_to_thread=False),
            "asset_filter": Provide(provide_asset_filter, sync_to_thread=False),
            # The adapters _wire put on the app's state, each under its dependency name.
            **{
                name: _from_state(attribute)
                for name, attribute in (
                    ("servers", "resources"),  # not "resources": a body field is named so
                    ("registry", "registry"),
                    ("streams", "streams"),
                    ("ids", "ids"),
                    ("tree", "tree"),
                    ("vault", "vault"),
                    ("usage", "usage"),
                    ("registries", "registries"),
                    ("store", "store"),
                    ("history_store", "store"),  # the Postgres store keeps every envelope
                )
            },
            "token_issuer": Provide(lambda: token_issuer, sync_to_thread=False),
        },
        after_request=after_request,
        middleware=[
            # First: what the store cannot hold never reaches authentication or a handler.
            EdgeGuardMiddleware,  # type: ignore[list-item]  # plain ASGI, loosely typed
            DefineMiddleware(
                BearerAuthenticationMiddleware,
                issuer=token_issuer,
                external=external,
                settle=settler(settings.consistency_wait_s),
            ),
        ],
        exception_handlers=EXCEPTION_HANDLERS,  # type: ignore[arg-type]
        logging_config=None,  # the process configured logging already (one line per record)
        debug=False,
    )
