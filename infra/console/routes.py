"""The console's router: its pages, its static files, and what wraps them (sealed session, CSRF
check on every form, the API's authentication reading the session), and the page templates."""

from pathlib import Path
from typing import Final

from litestar import Router
from litestar.middleware import DefineMiddleware
from litestar.middleware.csrf import CSRFMiddleware
from litestar.plugins.jinja import JinjaTemplateEngine
from litestar.static_files import create_static_files_router
from litestar.template import TemplateConfig

from infra.console.authentication import Verifiers, console_authentication
from infra.console.compute_pages import COMPUTE_ROUTES
from infra.console.data_source_pages import DATA_SOURCE_ROUTES
from infra.console.environment_pages import ENVIRONMENT_ROUTES
from infra.console.org_unit_pages import ORG_UNIT_ROUTES
from infra.console.pages_common import EXCEPTION_HANDLERS
from infra.console.session import SecureCookiesBehindTls, csrf_config, sealed_session
from infra.console.settings_page import SETTINGS_ROUTES
from infra.console.sign_in import SIGN_IN_ROUTES
from infra.console.template_detail import template_page
from infra.console.template_edit import EDIT_ROUTES
from infra.console.template_form import FORM_ROUTES
from infra.console.template_list import templates_grid
from infra.console.template_plan_page import TEMPLATE_PLAN_PAGES
from infra.console.workload_pages import WORKLOAD_ROUTES
from infra.console.workloads_list import WORKLOAD_LIST_ROUTES
from infra.http import consistency
from infra.http.edge import CONSOLE
from infra.security.access_tokens import ExternalTokenVerifier, TokenIssuer
from infra.settings import Settings

HERE: Final = Path(__file__).parent


def template_config() -> TemplateConfig[JinjaTemplateEngine]:
    """Jinja escapes every value it renders (autoescape), so no stored text becomes markup."""
    return TemplateConfig(directory=HERE / "pages", engine=JinjaTemplateEngine)


def console_router(
    settings: Settings,
    issuer: TokenIssuer | None,
    external: ExternalTokenVerifier | None,
    settle: consistency.Settle,
) -> Router:
    static = create_static_files_router(
        path="/static",
        directories=[HERE / "static"],
        opt={"exclude_from_auth": True},
        include_in_schema=False,
    )
    return Router(
        path=CONSOLE,
        route_handlers=[
            *SIGN_IN_ROUTES,
            templates_grid,
            *FORM_ROUTES,
            *EDIT_ROUTES,
            template_page,
            *WORKLOAD_LIST_ROUTES,
            *WORKLOAD_ROUTES,
            *ENVIRONMENT_ROUTES,
            *COMPUTE_ROUTES,
            *DATA_SOURCE_ROUTES,
            *ORG_UNIT_ROUTES,
            *TEMPLATE_PLAN_PAGES,
            *SETTINGS_ROUTES,
            static,
        ],
        middleware=[
            SecureCookiesBehindTls,  # type: ignore[list-item]  # plain ASGI, loosely typed
            DefineMiddleware(sealed_session, auth=settings.auth),
            DefineMiddleware(CSRFMiddleware, config=csrf_config(settings.auth)),
            DefineMiddleware(console_authentication, verifiers=Verifiers(issuer, external, settle)),
        ],
        exception_handlers=EXCEPTION_HANDLERS,
        include_in_schema=False,
    )
