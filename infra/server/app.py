"""The Litestar application factory: the HTTP layer's routes wired to the store's adapters; the
lifespan opens (or is handed) the process's resources."""

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any, Final

from litestar import Litestar, Request
from litestar.datastructures import State
from litestar.di import Provide
from litestar.middleware import DefineMiddleware
from litestar.openapi import OpenAPIConfig

from infra.bootstrap import Resources, freeze_start_up, open_resources
from infra.console.routes import console_router, template_config
from infra.console.sign_in import service_root
from infra.followers.fanout_runner import NAME as FANOUT
from infra.http.access_cache import AccessCache
from infra.http.access_rules import ACCESS_RULE_ROUTES
from infra.http.adapters import Adapters
from infra.http.apps import APP_ROUTES
from infra.http.asset_schemas import provide_asset_filter
from infra.http.assets import ASSET_ROUTES
from infra.http.audit import AUDIT_ROUTES
from infra.http.audit_log import AUDIT_LOG_ROUTES
from infra.http.audit_trail import AuditTrailMiddleware
from infra.http.auth import BearerAuthenticationMiddleware
from infra.http.consistency import after_request, settler
from infra.http.credentials import CREDENTIAL_ROUTES
from infra.http.data_sources import DATA_SOURCE_ROUTES
from infra.http.data_volumes import DATA_VOLUME_ROUTES
from infra.http.edge import CONSOLE, EdgeGuardMiddleware
from infra.http.event_contract import CONTRACT_ROUTES
from infra.http.history import HISTORY_ROUTES
from infra.http.impact import IMPACT_ROUTES
from infra.http.me import ME_ROUTES
from infra.http.node_pools import NODE_POOL_ROUTES
from infra.http.observed_requests import ObservedRequests
from infra.http.openapi_document import DecoderExactJson
from infra.http.org_units import ORG_UNIT_ROUTES
from infra.http.permissions import PERMISSION_ROUTES
from infra.http.policies import POLICY_ROUTES
from infra.http.policy_impact import IMPACT_ROUTES as POLICY_IMPACT_ROUTES
from infra.http.priorities import PRIORITY_ROUTES
from infra.http.problems import EXCEPTION_HANDLERS
from infra.http.registries import REGISTRY_ROUTES
from infra.http.saved_templates import SAVED_TEMPLATE_ROUTES
from infra.http.service_accounts import SERVICE_ACCOUNT_ROUTES
from infra.http.storage_classes import STORAGE_CLASS_ROUTES
from infra.http.template_plans import TEMPLATE_PLAN_ROUTES
from infra.http.templates import TEMPLATE_ROUTES
from infra.http.tenant_settings import SETTING_ROUTES
from infra.http.token_grant import grant_token
from infra.http.workload_pods import POD_ROUTES
from infra.http.workloads import WORKLOAD_ROUTES
from infra.postgres.application_registry import PostgresApplicationRegistry
from infra.postgres.audit_records import PostgresAuditRecords
from infra.postgres.chain_checks import PostgresChainChecks
from infra.postgres.credential_vault import PostgresCredentialVault
from infra.postgres.names import PostgresIdSequence, name_holder, names_held_in
from infra.postgres.positions import last_position
from infra.postgres.read_model_ports import PostgresOrgTree
from infra.postgres.reads import PostgresReads
from infra.postgres.request_standing import PostgresStandings
from infra.postgres.rule_holders import PostgresRuleHolders
from infra.postgres.signed_out import PostgresSignedOutSessions
from infra.postgres.streams import PostgresStreams
from infra.postgres.units_of_work import SecretKeys
from infra.security.access_tokens import ExternalTokenVerifier, TokenIssuer
from infra.security.login_throttle import LoginThrottle
from infra.security.sealing import Sealer
from infra.security.secret_hashing import SecretHasher
from infra.serialization import DOMAIN_CODEC
from infra.server.health import healthz, metrics, readyz
from infra.settings import Settings
from infra.telemetry.meters import ApiMetrics
from projections import ALL

log = logging.getLogger(__name__)

# The checkpoints a read waits for: every follower for the caller's own events, the read models
# for what the fan-out made of them (infra/postgres/read_marks.py).
READ_MODELS: Final = [f"projection:{projection.name}" for projection in ALL]
FOLLOWERS: Final = [*READ_MODELS, f"projection:{FANOUT}"]


def _adapters(request: Request[Any, Any, Any]) -> Adapters:
    # Taken off the request, not as `state: State`: a State parameter is a copy of the app's
    # state made for every request that asks for the adapters.
    adapters: Adapters = request.app.state.adapters
    return adapters


def create_app(settings: Settings, *, resources: Resources | None = None) -> Litestar:
    api_metrics = ApiMetrics()
    token_issuer = TokenIssuer(settings.auth) if settings.auth.signing_key else None
    external = ExternalTokenVerifier(settings.auth) if settings.auth.jwks_url else None
    sealer = answers = None
    if settings.credentials.encryption_key:
        sealer = Sealer(settings.credentials)
        answers = Sealer(settings.credentials, purpose="service-account-answers")
    else:
        log.warning(
            "no credential encryption key configured: creating credentials, and service"
            " accounts under an Idempotency-Key, answers 503"
        )
    if token_issuer is None:
        log.warning("no token signing key configured: POST /api/v1/token answers 503")

    def _wire(app: Litestar, opened: Resources) -> None:
        keys = SecretKeys(sealer=sealer, hasher=SecretHasher(settings.auth), answers=answers)
        streams = PostgresStreams(
            opened.pool, DOMAIN_CODEC, max_event_bytes=settings.sizes.event_bytes, keys=keys
        )
        tree = PostgresOrgTree(opened.pool)
        sessions = PostgresSignedOutSessions(opened.pool)
        adapters = Adapters(
            settings=settings,
            token_issuer=token_issuer,
            registry=PostgresApplicationRegistry(streams, opened.pool, keys),
            streams=streams,
            ids=PostgresIdSequence(opened.pool),
            vault=PostgresCredentialVault(opened.pool, keys),
            access=AccessCache(streams, tree, sessions),
            sessions=sessions,
            rule_holders=PostgresRuleHolders(opened.pool),
            name_holder=partial(name_holder, opened.pool),
            name_holders=partial(names_held_in, opened.pool),
            reads=PostgresReads(opened.pool),
            chains=PostgresChainChecks(opened.pool),
        )
        app.state.adapters = adapters
        # What middleware and guards, which take no dependencies, read off the state.
        app.state.resources = opened  # for the health checks
        app.state.standings = PostgresStandings(opened.pool, FOLLOWERS, READ_MODELS)
        app.state.streams = adapters.streams
        app.state.access = adapters.access
        app.state.admin_app_id = settings.admin_app_id  # named on the console's sign-in page
        app.state.audit_records = PostgresAuditRecords(opened.pool)  # the audit trail's
        app.state.logins = LoginThrottle(
            per_client=settings.auth.login_failures_per_client,
            per_address=settings.auth.login_failures_per_address,
            window_s=settings.auth.login_window_s,
        )

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        if resources is not None:  # tests hand in ready-made resources
            _wire(app, resources)
            yield
            return
        async with open_resources(settings, role="api") as opened:
            _wire(app, opened)
            freeze_start_up()
            yield

    settle = settler(settings.consistency_wait_s)
    app = Litestar(
        route_handlers=[
            console_router(settings, token_issuer, external, settle),
            service_root,
            healthz,
            readyz,
            metrics,
            grant_token,
            *SERVICE_ACCOUNT_ROUTES,
            *APP_ROUTES,
            *ORG_UNIT_ROUTES,
            *NODE_POOL_ROUTES,
            *STORAGE_CLASS_ROUTES,
            *ASSET_ROUTES,
            *CREDENTIAL_ROUTES,
            *DATA_SOURCE_ROUTES,
            *REGISTRY_ROUTES,
            *DATA_VOLUME_ROUTES,
            *POLICY_ROUTES,
            *POLICY_IMPACT_ROUTES,
            *ACCESS_RULE_ROUTES,
            *ME_ROUTES,
            *PERMISSION_ROUTES,
            *TEMPLATE_ROUTES,
            *TEMPLATE_PLAN_ROUTES,
            *SAVED_TEMPLATE_ROUTES,
            *IMPACT_ROUTES,
            *POD_ROUTES,
            *WORKLOAD_ROUTES,
            *AUDIT_ROUTES,
            *AUDIT_LOG_ROUTES,
            *CONTRACT_ROUTES,
            *HISTORY_ROUTES,
            *SETTING_ROUTES,
            *PRIORITY_ROUTES,
        ],
        lifespan=[lifespan],
        openapi_config=OpenAPIConfig(
            title="trainplate", version="1.0.0", render_plugins=[DecoderExactJson()]
        ),
        dependencies={
            "adapters": Provide(_adapters, sync_to_thread=False),
            "asset_filter": Provide(provide_asset_filter, sync_to_thread=False),
        },
        after_request=after_request(last_position.get),
        middleware=[
            # First: what the store cannot hold never reaches authentication or a handler.
            DefineMiddleware(
                EdgeGuardMiddleware,  # type: ignore[arg-type]  # plain ASGI, loosely typed
                max_body_bytes=settings.sizes.body_bytes,
            ),
            # Then: sign-ins and refused writes kept for the audit log, whoever the caller.
            DefineMiddleware(AuditTrailMiddleware),  # type: ignore[arg-type]  # plain ASGI
            DefineMiddleware(
                BearerAuthenticationMiddleware,
                issuer=token_issuer,
                external=external,
                settle=settle,
                exclude=[f"^{CONSOLE}(/|$)"],  # the console authenticates from its session
            ),
        ],
        template_config=template_config(),
        request_max_body_size=settings.sizes.body_bytes,
        exception_handlers=EXCEPTION_HANDLERS,  # type: ignore[arg-type]
        logging_config=None,  # the process configured logging already (one line per record)
        debug=False,
        state=State({"metrics": api_metrics}),
    )
    # Outermost, so it sees every answer: those of errors, refusals and unknown routes too.
    app.asgi_handler = ObservedRequests(app.asgi_handler, api_metrics)  # type: ignore[arg-type,assignment]
    return app
