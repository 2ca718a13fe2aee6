"""The service's REST API as the command line uses it: a bearer token from the profile (or
the application's credentials, exchanged at `/api/v1/token`), and each answer or problem."""

from typing import Any, Final

import httpx

from infra.api_client.profile import Profile

PLANS: Final = "/api/v1/trainplate/template-plans"
DOCUMENTS: Final = "/api/v1/trainplate/template-documents"
TEMPLATES: Final = "/api/v1/workload-templates"
SAVED_WORKLOADS: Final = "/api/v1/trainplate/workloads"  # `{id}/template` saves one as a template
TIMEOUT_S: Final = 60.0


class ServiceError(Exception):
    """The service refused a request (a problem document's message), or could not be asked."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class Service:
    def __init__(self, profile: Profile, transport: httpx.BaseTransport | None = None) -> None:
        self._client = httpx.Client(
            base_url=profile.url.rstrip("/"), timeout=TIMEOUT_S, transport=transport
        )
        self._profile = profile
        self._token = profile.token

    def __enter__(self) -> "Service":
        return self

    def __exit__(self, *_: object) -> None:
        self._client.close()

    def login(self) -> str:
        """A token for the profile's application; ServiceError when it is refused."""
        body = {
            "grantType": "app_token",
            "AppId": self._profile.app_id,
            "AppSecret": self._profile.app_secret,
        }
        token: str = self._send("POST", "/api/v1/token", json=body, auth=False)["accessToken"]
        self._token = token
        return token

    def call(self, method: str, path: str, **kw: Any) -> Any:
        """The answer's JSON (None when it has none)."""
        return self._send(method, path, **kw)

    def _send(self, method: str, path: str, *, auth: bool = True, **kw: Any) -> Any:
        headers = dict(kw.pop("headers", None) or {})
        if auth:
            if self._token is None:
                self.login()
            headers["Authorization"] = f"Bearer {self._token}"
        try:
            answer = self._client.request(method, path, headers=headers, **kw)
        except httpx.HTTPError as error:
            raise ServiceError(f"cannot reach {self._profile.url}: {error}") from error
        if answer.status_code >= 400:
            raise ServiceError(_said(answer), answer.status_code)
        return answer.json() if answer.content else None


def _said(answer: httpx.Response) -> str:
    try:
        body = answer.json()
    except ValueError:
        return f"{answer.status_code}: {answer.text[:200]}"
    message = body.get("message") or body.get("detail") if isinstance(body, dict) else None
    return str(message or f"{answer.status_code}: {answer.text[:200]}")
