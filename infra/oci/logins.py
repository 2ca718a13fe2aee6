"""Logging in to a registry as registries ask (Docker's token authentication): a 401 with a
Bearer challenge is made again with a token from its realm, a Basic one with the login itself.
What was found is sent with every later call of the listing, so its pages need no challenge each."""

import base64
import re
from collections.abc import AsyncGenerator
from typing import Final
from urllib.request import parse_http_list, parse_keqv_list

import httpx
import msgspec

from infra.oci.failures import RegistryAnswerError, RegistryRefusedError

# RFC 6750's b64token: what a bearer token may be, so nothing else reaches a header.
_TOKEN: Final = re.compile(r"^[A-Za-z0-9\-._~+/]+=*$")


class Login:
    """A registry's user and password. Its repr never shows the password."""

    __slots__ = ("_password", "user")

    def __init__(self, user: str, password: str) -> None:
        self.user = user
        self._password = password

    def __repr__(self) -> str:
        return f"Login({self.user!r}, password hidden)"

    def basic(self) -> str:
        """The `Authorization` header's value of HTTP Basic authentication."""
        pair = f"{self.user}:{self._password}".encode()
        return f"Basic {base64.b64encode(pair).decode()}"


class _TokenAnswer(msgspec.Struct, frozen=True):
    # Docker's token service answers `token`, OAuth-style services `access_token`.
    token: str | None = None
    access_token: str | None = None


_decode_token = msgspec.json.Decoder(_TokenAnswer).decode


def challenge_of(header: str) -> tuple[str, dict[str, str]] | None:
    """The scheme (lower case) and parameters of a `WWW-Authenticate` header's challenge;
    None when it is none that can be read."""
    scheme, _, rest = header.strip().partition(" ")
    try:
        params = parse_keqv_list(parse_http_list(rest)) if rest.strip() else {}
    except (ValueError, IndexError):  # an item without `=`, or `key=` with nothing after it
        return None
    return scheme.lower(), params


class RegistryAuth(httpx.Auth):
    """One listing's login: answers the registry's challenges and keeps what they earned."""

    def __init__(self, base: str, login: Login | None) -> None:
        self._base = base
        self._login = login
        self._authorization: str | None = None

    async def async_auth_flow(
        self, request: httpx.Request
    ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        if self._authorization is not None:
            request.headers["Authorization"] = self._authorization
        response = yield request
        if response.status_code != httpx.codes.UNAUTHORIZED:
            return
        challenge = challenge_of(response.headers.get("www-authenticate", ""))
        if challenge is None:
            return
        scheme, params = challenge
        if scheme == "basic" and self._login is not None:
            self._authorization = self._login.basic()
        elif scheme == "bearer":
            answer = yield self._token_request(params)
            await answer.aread()
            self._authorization = f"Bearer {self._token_in(answer)}"
        else:  # a scheme registries do not use, or Basic with no login: the 401 stands
            return
        request.headers["Authorization"] = self._authorization
        yield request

    def _token_request(self, params: dict[str, str]) -> httpx.Request:
        """The token service's request: the realm the challenge names, with its service and
        scope, and the login when there is one (never over plain HTTP from an HTTPS registry,
        which would give the password away)."""
        try:
            realm = httpx.URL(params.get("realm", ""))
        except httpx.InvalidURL:
            raise RegistryAnswerError(self._base, "names a token service that is no URL") from None
        if realm.scheme not in ("http", "https") or not realm.host:
            raise RegistryAnswerError(self._base, "names a token service that is no HTTP URL")
        if self._base.startswith("https:") and realm.scheme != "https":
            raise RegistryAnswerError(self._base, "names a token service over plain HTTP")
        query = {name: params[name] for name in ("service", "scope") if params.get(name)}
        headers = {} if self._login is None else {"Authorization": self._login.basic()}
        return httpx.Request("GET", realm, params=query, headers=headers)

    def _token_in(self, answer: httpx.Response) -> str:
        if answer.status_code in (httpx.codes.UNAUTHORIZED, httpx.codes.FORBIDDEN):
            raise RegistryRefusedError(self._base, answer.status_code)
        if answer.status_code != httpx.codes.OK:
            raise RegistryAnswerError(
                self._base, f"has a token service that answered HTTP {answer.status_code}"
            )
        try:
            found = _decode_token(answer.content)
        except msgspec.DecodeError:
            raise RegistryAnswerError(
                self._base, "has a token service answering no token"
            ) from None
        token = found.token or found.access_token
        if token is None or not _TOKEN.match(token):
            raise RegistryAnswerError(self._base, "has a token service answering no token")
        return token
