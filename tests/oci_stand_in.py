"""A stand-in for a container registry, just enough of the OCI distribution API for listings:
the catalog (`GET /v2/_catalog`) and a repository's tags (`GET /v2/<name>/tags/list`), paged by
`n` and `last` with a `Link` header to the next page as the spec says (and, like real
registries, at most `page_cap` entries a page whatever `n` asks), an unknown repository a 404
with the spec's error body. Behind no login, HTTP Basic, or Docker's token authentication: a
401 naming a token realm this stand-in serves too, which hands out tokens bound to the scope
asked for, to the right login only (or to anyone, with `anonymous_tokens`).

`misbehave` makes it answer what no registry should: HTML, JSON of the wrong shape, an error
status, an endless body, a body a byte at a time, nothing for a long time, a next page on
another server. No real
registry is reachable from the build machine; this is approximate by design (no manifests,
blobs or token expiry)."""

import asyncio
import base64
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Literal

from aiohttp import web
from aiohttp.test_utils import TestServer

Auth = Literal["none", "basic", "bearer"]
Misbehaviour = Literal[
    "html", "wrong-shape", "status-500", "endless", "trickle", "slow", "link-elsewhere"
]


class OciStandIn:
    def __init__(
        self,
        repositories: dict[str, list[str]],
        *,
        auth: Auth = "none",
        user: str = "puller",
        password: str = "pull-secret",
        page_cap: int = 1000,
        anonymous_tokens: bool = False,
    ) -> None:
        self.repositories = repositories
        self.auth = auth
        self.user = user
        self.password = password
        self.page_cap = page_cap
        self.anonymous_tokens = anonymous_tokens
        self.misbehave: Misbehaviour | None = None
        # (path with query, the Authorization scheme sent or "") of every request, in order.
        self.requests: list[tuple[str, str]] = []
        self.authorizations: list[str] = []  # every Authorization header, as sent
        self._tokens: dict[str, str] = {}  # token -> the scope it was issued for
        self.url = ""

    def _login_ok(self, header: str) -> bool:
        pair = f"{self.user}:{self.password}".encode()
        return header == f"Basic {base64.b64encode(pair).decode()}"

    def _refusal(self, scope: str) -> web.Response:
        if self.auth == "basic":
            challenge = 'Basic realm="stand-in"'
        else:
            challenge = f'Bearer realm="{self.url}/token",service="stand-in",scope="{scope}"'
        body = {"errors": [{"code": "UNAUTHORIZED", "message": "authentication required"}]}
        return web.json_response(body, status=401, headers={"WWW-Authenticate": challenge})

    def _admitted(self, request: web.Request, scope: str) -> bool:
        header = request.headers.get("Authorization", "")
        self.requests.append((request.path_qs, header.partition(" ")[0]))
        if header:
            self.authorizations.append(header)
        if self.auth == "none":
            return True
        if self.auth == "basic":
            return self._login_ok(header)
        scheme, _, token = header.partition(" ")
        return scheme == "Bearer" and self._tokens.get(token) == scope

    async def _token(self, request: web.Request) -> web.Response:
        header = request.headers.get("Authorization", "")
        self.requests.append((request.path_qs, header.partition(" ")[0]))
        if header:
            self.authorizations.append(header)
        if not self.anonymous_tokens and not self._login_ok(header):
            return web.json_response({"details": "incorrect username or password"}, status=401)
        token = secrets.token_urlsafe(24)
        self._tokens[token] = request.query.get("scope", "")
        return web.json_response({"token": token, "access_token": token, "expires_in": 300})

    async def _catalog(self, request: web.Request) -> web.StreamResponse:
        if not self._admitted(request, "registry:catalog:*"):
            return self._refusal("registry:catalog:*")
        return await self._page(request, "repositories", sorted(self.repositories), None)

    async def _tags(self, request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]
        scope = f"repository:{name}:pull"
        if not self._admitted(request, scope):
            return self._refusal(scope)
        if name not in self.repositories:
            body = {"errors": [{"code": "NAME_UNKNOWN", "message": "repository name not known"}]}
            return web.json_response(body, status=404)
        return await self._page(request, "tags", sorted(self.repositories[name]), name)

    async def _page(
        self, request: web.Request, key: str, names: list[str], repository: str | None
    ) -> web.StreamResponse:
        misbehaving = await self._misbehaving(request)
        if misbehaving is not None:
            return misbehaving
        count = min(int(request.query.get("n", "100")), self.page_cap)
        last = request.query.get("last")
        rest = [name for name in names if last is None or name > last]
        page, more = rest[:count], len(rest) > count
        body: dict[str, object] = {key: page}
        if repository is not None:
            body["name"] = repository
        headers = {}
        if more:
            host = "http://elsewhere.invalid" if self.misbehave == "link-elsewhere" else ""
            headers["Link"] = f'<{host}{request.path}?n={count}&last={page[-1]}>; rel="next"'
        return web.json_response(body, headers=headers)

    async def _misbehaving(self, request: web.Request) -> web.StreamResponse | None:
        match self.misbehave:
            case "html":
                return web.Response(
                    text="<html><body>Welcome</body></html>", content_type="text/html"
                )
            case "wrong-shape":
                return web.json_response({"repositories": "all of them", "tags": 7})
            case "status-500":
                return web.json_response({"errors": []}, status=500)
            case "endless":
                response = web.StreamResponse(headers={"Content-Type": "application/json"})
                await response.prepare(request)
                await response.write(b'{"repositories": ["')
                for _ in range(100_000):
                    await response.write(b"a" * 65536)
                return response
            case "trickle":  # a byte now and then, for ever
                response = web.StreamResponse(headers={"Content-Type": "application/json"})
                await response.prepare(request)
                for _ in range(1000):
                    await response.write(b" ")
                    await asyncio.sleep(0.1)
                return response
            case "slow":
                await asyncio.sleep(30)
        return None

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/v2/_catalog", self._catalog)
        app.router.add_get(r"/v2/{name:.+}/tags/list", self._tags)
        app.router.add_get("/token", self._token)
        return app


@asynccontextmanager
async def serving(stand_in: OciStandIn) -> AsyncIterator[OciStandIn]:
    async with TestServer(stand_in.app(), host="127.0.0.1") as server:
        stand_in.url = str(server.make_url("")).rstrip("/")
        yield stand_in


@asynccontextmanager
async def not_http() -> AsyncIterator[str]:
    """A server that answers every connection with a line that is not HTTP, and hangs up."""

    async def answer(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"SSH-2.0-OpenSSH_9.6\r\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.close()
        await server.wait_closed()
