"""A client of a registry's OCI distribution API (`/v2/_catalog`, `/v2/<name>/tags/list`, page by
page, logged in as infra/oci/logins.py does). A registry is someone else's server, so every
listing is bounded and stays on its host: docs/decisions/0014-registry-listings.md."""

import asyncio
import ipaddress
import re
import socket
from collections.abc import AsyncIterator
from typing import Final, TypeVar

import httpx
import msgspec

from infra.oci.failures import (
    RegistryAnswerError,
    RegistryRefusedError,
    RegistryUnreachableError,
    RepositoryNotFoundError,
)
from infra.oci.logins import Login, RegistryAuth
from infra.settings import RegistrySettings

# The distribution spec's repository name: path components of lower-case alphanumerics joined
# by separators, at most 255 characters in all.
REPOSITORY: Final = r"^[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*(/[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*)*$"
REPOSITORY_MAX: Final = 255
_REPOSITORY: Final = re.compile(REPOSITORY)


class Catalog(msgspec.Struct, frozen=True):
    repositories: list[str] | None = None


class TagList(msgspec.Struct, frozen=True):
    name: str | None = None
    tags: list[str] | None = None  # a repository without tags may answer null


Page = TypeVar("Page", Catalog, TagList)


class _Capped(httpx.AsyncByteStream):
    """An answer's body, refused once it passes `limit` bytes."""

    def __init__(self, stream: httpx.AsyncByteStream, limit: int, base: str) -> None:
        self._stream = stream
        self._limit = limit
        self._base = base

    async def __aiter__(self) -> AsyncIterator[bytes]:
        read = 0
        async for chunk in self._stream:
            read += len(chunk)
            if read > self._limit:
                raise RegistryAnswerError(self._base, f"answered more than {self._limit} bytes")
            yield chunk

    async def aclose(self) -> None:
        await self._stream.aclose()


class _CappedTransport(httpx.AsyncBaseTransport):
    def __init__(
        self, inner: httpx.AsyncBaseTransport, limit: int, base: str, *, loopback: bool
    ) -> None:
        self._inner = inner
        self._limit = limit
        self._base = base
        self._loopback = loopback

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if not self._loopback:
            await _refuse_local(request.url, self._base)
        response = await self._inner.handle_async_request(request)
        assert isinstance(response.stream, httpx.AsyncByteStream)
        response.stream = _Capped(response.stream, self._limit, self._base)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


class DistributionClient:
    """Listings of registries, each over connections of its own (a listing is a user's rare
    click, not worth a pool kept open to every registry there is)."""

    def __init__(self, settings: RegistrySettings) -> None:
        self._settings = settings

    async def repositories(self, base: str, login: Login | None) -> list[str]:
        """Every repository of the registry whose API sits under `base` (domain/registries.py
        `api_base`)."""
        pages = await self._listing(base, "/v2/_catalog", Catalog, login, None)
        return [name for page in pages for name in page.repositories or ()]

    async def tags(self, base: str, repository: str, login: Login | None) -> list[str]:
        """Every tag of one repository; RepositoryNotFoundError when the registry has none of
        that name. The name must match REPOSITORY (checked by the caller, as it is a request's)."""
        if len(repository) > REPOSITORY_MAX or not _REPOSITORY.match(repository):
            raise ValueError(f"not a repository name: {repository!r}")
        missing = RepositoryNotFoundError(base, repository)
        pages = await self._listing(base, f"/v2/{repository}/tags/list", TagList, login, missing)
        return [tag for page in pages for tag in page.tags or ()]

    async def _listing(
        self,
        base: str,
        path: str,
        shape: type[Page],
        login: Login | None,
        missing: Exception | None,
    ) -> list[Page]:
        limits = self._settings
        inner = httpx.AsyncHTTPTransport()
        try:
            async with (
                asyncio.timeout(limits.deadline_s),
                httpx.AsyncClient(
                    transport=_CappedTransport(
                        inner, limits.max_answer_bytes, base, loopback=limits.allow_loopback
                    ),
                    auth=RegistryAuth(base, login),
                    timeout=limits.timeout_s,
                    follow_redirects=False,
                ) as client,
            ):
                return await self._pages(client, base, path, shape, missing)
        except TimeoutError:  # the whole listing's deadline
            raise RegistryUnreachableError(
                base, f"gave no whole answer within {limits.deadline_s} s"
            ) from None
        except httpx.TimeoutException:
            raise RegistryUnreachableError(
                base, f"did not answer within {limits.timeout_s} s"
            ) from None
        except httpx.ProtocolError:
            raise RegistryAnswerError(base, "does not answer in HTTP") from None
        except (httpx.TransportError, httpx.InvalidURL) as error:
            raise RegistryUnreachableError(
                base, f"cannot be reached ({type(error).__name__})"
            ) from None

    async def _pages(
        self,
        client: httpx.AsyncClient,
        base: str,
        path: str,
        shape: type[Page],
        missing: Exception | None,
    ) -> list[Page]:
        origin = httpx.URL(base)
        url: httpx.URL | None = httpx.URL(f"{base}{path}", params={"n": self._settings.page_size})
        pages: list[Page] = []
        while url is not None and len(pages) < self._settings.max_pages:
            response = await client.get(url)
            _check(response, base, missing)
            try:
                pages.append(msgspec.json.decode(response.content, type=shape))
            except msgspec.DecodeError as error:
                raise RegistryAnswerError(base, f"answered no {shape.__name__}: {error}") from None
            url = _next_page(response, origin, base)
        return pages


async def _refuse_local(url: httpx.URL, base: str) -> None:
    """No address of the host may be loopback, link-local, unspecified or multicast, so editors
    cannot point the service at itself or a metadata endpoint. The connection resolves again: a
    name that changes its answer in between is not caught."""
    try:
        found = await asyncio.get_running_loop().getaddrinfo(
            url.host, url.port or 443, type=socket.SOCK_STREAM
        )
    except OSError:
        return  # unknown: the connection fails on its own, saying so
    for *_, address in found:
        ip = ipaddress.ip_address(address[0])
        if ip.is_loopback or ip.is_link_local or ip.is_unspecified or ip.is_multicast:
            raise RegistryUnreachableError(
                base,
                f"is at {ip}, a loopback or link-local address, which this service does not call",
            )


def _check(response: httpx.Response, base: str, missing: Exception | None) -> None:
    status = response.status_code
    if status == httpx.codes.OK:
        return
    if status in (httpx.codes.UNAUTHORIZED, httpx.codes.FORBIDDEN):
        raise RegistryRefusedError(base, status)
    if status == httpx.codes.NOT_FOUND and missing is not None:
        raise missing
    raise RegistryAnswerError(base, f"answered HTTP {status} to {response.url.path}")


def _next_page(response: httpx.Response, origin: httpx.URL, base: str) -> httpx.URL | None:
    """Where the `Link` header's next page is (relative to this one), on the same registry."""
    link = response.links.get("next")
    if link is None or not link.get("url"):
        return None
    try:
        url = response.url.join(link["url"])
    except httpx.InvalidURL:
        raise RegistryAnswerError(base, "links its next page to no URL") from None
    if (url.scheme, url.host, url.port) != (origin.scheme, origin.host, origin.port):
        raise RegistryAnswerError(base, "links its next page to another server")
    return url
