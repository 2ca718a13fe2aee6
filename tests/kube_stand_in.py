"""A stand-in for the Kubernetes API server, just enough of it for the calls the Kubernetes
backend makes: create (201, or 409 AlreadyExists with a Status body), get, a JSON merge patch
(RFC 7386), delete (404 when gone), a cluster-wide watch of one kind (or of core pods) by
label, streaming ADDED, MODIFIED and DELETED events, a list of cluster-scoped objects (such as
StorageClasses), failing on demand, and get and create of PVs and PVCs. No real
API server can run on this machine; this is approximate by design (no admission, defaulting or
resourceVersion semantics), so the manifests themselves are checked against the CRD schemas
elsewhere."""

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from aiohttp import web
from aiohttp.typedefs import Handler

Key = tuple[str, str, str, str]  # group/version, plural, namespace, name
Call = tuple[str, str, dict[str, str]]  # method, path, query


class KubeStandIn:
    def __init__(self, installed: set[str]) -> None:
        self.installed = installed  # plurals whose CRD exists
        self.failing: set[str] = set()  # plurals whose list answers 500
        self.objects: dict[Key, dict[str, Any]] = {}
        self.requests: list[tuple[str, str]] = []
        self.calls: list[Call] = []  # every request, watches and refusals included
        self._watchers: list[tuple[str, asyncio.Queue[dict[str, Any]]]] = []
        self.url = ""

    def set_conditions(
        self, plural: str, namespace: str, name: str, conditions: list[dict[str, str]]
    ) -> None:
        """What the training operator does: the job's status conditions change."""
        self.set_status(plural, namespace, name, {"conditions": conditions})

    def set_status(self, plural: str, namespace: str, name: str, status: dict[str, Any]) -> None:
        key = next(k for k in self.objects if k[1:] == (plural, namespace, name))
        job = self.objects[key]
        job["status"] = status
        self._notify(plural, {"type": "MODIFIED", "object": job})

    def _key(self, request: web.Request) -> Key:
        group, version, namespace, plural, name = (
            request.match_info[k] for k in ("group", "version", "namespace", "plural", "name")
        )
        return (f"{group}/{version}", plural, namespace, name)

    async def _get(self, request: web.Request) -> web.Response:
        key = self._key(request)
        self.requests.append(("GET", request.path))
        found = self.objects.get(key)
        if found is None:
            return _status(404, "NotFound", f'{key[1]} "{key[3]}" not found')
        return web.json_response(found)

    async def _patch(self, request: web.Request) -> web.Response:
        key = self._key(request)
        self.requests.append(("PATCH", request.path))
        if request.content_type != "application/merge-patch+json":
            return _status(415, "UnsupportedMediaType", f"{request.content_type} is not taken")
        found = self.objects.get(key)
        if found is None:
            return _status(404, "NotFound", f'{key[1]} "{key[3]}" not found')
        self.objects[key] = merged = _merge(found, await request.json())
        self._notify(key[1], {"type": "MODIFIED", "object": merged})
        return web.json_response(merged)

    def _notify(self, plural: str, event: dict[str, Any]) -> None:
        for watched, queue in self._watchers:
            if watched == plural:
                queue.put_nowait(event)

    async def _create(self, request: web.Request) -> web.Response:
        group, version, namespace, plural = (
            request.match_info[k] for k in ("group", "version", "namespace", "plural")
        )
        self.requests.append(("POST", request.path))
        if plural not in self.installed:
            return _status(
                404, "NotFound", f"the server could not find the requested resource ({plural})"
            )
        body = await request.json()
        key = (f"{group}/{version}", plural, namespace, body["metadata"]["name"])
        if key in self.objects:
            return _status(409, "AlreadyExists", f'{plural} "{key[3]}" already exists')
        body["metadata"]["namespace"] = namespace
        self.objects[key] = body
        self._notify(plural, {"type": "ADDED", "object": body})
        return web.json_response(body, status=201)

    async def _delete(self, request: web.Request) -> web.Response:
        group, version, namespace, plural, name = (
            request.match_info[k] for k in ("group", "version", "namespace", "plural", "name")
        )
        self.requests.append(("DELETE", request.path))
        found = self.objects.pop((f"{group}/{version}", plural, namespace, name), None)
        if found is None:
            return _status(404, "NotFound", f'{plural} "{name}" not found')
        self._notify(plural, {"type": "DELETED", "object": found})
        return web.json_response({"kind": "Status", "status": "Success"})

    def put_core(self, plural: str, body: dict[str, Any]) -> None:
        """What an administrator does: a PV, or a PVC of a namespace, is there."""
        namespace = body["metadata"].get("namespace", "")
        self.objects[("v1", plural, namespace, body["metadata"]["name"])] = body

    async def _core_get(self, request: web.Request) -> web.Response:
        plural, name = request.match_info["plural"], request.match_info["name"]
        namespace = request.match_info.get("namespace", "")
        self.requests.append(("GET", request.path))
        found = self.objects.get(("v1", plural, namespace, name))
        if found is None:
            return _status(404, "NotFound", f'{plural} "{name}" not found')
        return web.json_response(found)

    async def _core_create(self, request: web.Request) -> web.Response:
        plural = request.match_info["plural"]
        namespace = request.match_info.get("namespace", "")
        self.requests.append(("POST", request.path))
        body = await request.json()
        key = ("v1", plural, namespace, body["metadata"]["name"])
        if key in self.objects:
            return _status(409, "AlreadyExists", f'{plural} "{key[3]}" already exists')
        if namespace:
            body["metadata"]["namespace"] = namespace
        self.objects[key] = body
        return web.json_response(body, status=201)

    async def _core_list(self, request: web.Request) -> web.Response:
        """PVs, or PVCs of every namespace, that match a `key=value` label selector."""
        plural = request.match_info["plural"]
        self.requests.append(("GET", request.path_qs))
        wanted = dict(
            part.split("=", 1) for part in request.query.get("labelSelector", "").split(",") if part
        )
        matching = [
            body for key, body in self.objects.items()
            if key[:2] == ("v1", plural)
            and wanted.items() <= (body["metadata"].get("labels") or {}).items()
        ]  # fmt: skip
        return web.json_response({"kind": "List", "items": matching, "metadata": {}})

    async def _core_delete(self, request: web.Request) -> web.Response:
        plural, name = request.match_info["plural"], request.match_info["name"]
        namespace = request.match_info.get("namespace", "")
        self.requests.append(("DELETE", request.path))
        if self.objects.pop(("v1", plural, namespace, name), None) is None:
            return _status(404, "NotFound", f'{plural} "{name}" not found')
        return web.json_response({"kind": "Status", "status": "Success"})

    def put_cluster_object(self, api_version: str, plural: str, body: dict[str, Any]) -> None:
        """What an administrator does: an object of no namespace (a StorageClass) is there."""
        self.objects[(api_version, plural, "", body["metadata"]["name"])] = body

    def remove_cluster_object(self, api_version: str, plural: str, name: str) -> None:
        del self.objects[(api_version, plural, "", name)]

    def put_pod(self, pod: dict[str, Any]) -> None:
        """What the kubelet and the job controllers do: a pod appears or changes."""
        key = ("v1", "pods", pod["metadata"]["namespace"], pod["metadata"]["name"])
        kind = "MODIFIED" if key in self.objects else "ADDED"
        self.objects[key] = pod
        self._notify("pods", {"type": kind, "object": pod})

    def remove_pod(self, namespace: str, name: str) -> None:
        pod = self.objects.pop(("v1", "pods", namespace, name))
        self._notify("pods", {"type": "DELETED", "object": pod})

    async def _list_or_watch(self, request: web.Request) -> web.StreamResponse:
        plural = request.match_info.get("plural", "pods")
        if plural not in self.installed:
            return _status(404, "NotFound", "the server could not find the requested resource")
        if plural in self.failing:
            return _status(500, "InternalError", f"listing {plural} failed")
        selector = request.query.get("labelSelector", "")
        matching = [
            job for key, job in self.objects.items()
            if key[1] == plural and (not selector or selector in job["metadata"].get("labels", {}))
        ]  # fmt: skip
        if request.query.get("watch") not in ("true", "1", "True"):
            return web.json_response({"kind": "List", "items": matching, "metadata": {}})
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        for job in matching:
            queue.put_nowait({"type": "ADDED", "object": job})
        self._watchers.append((plural, queue))
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        await response.prepare(request)
        timeout = float(request.query.get("timeoutSeconds", "30"))
        try:
            while True:
                event = await asyncio.wait_for(queue.get(), timeout=timeout)
                if not event:  # the stand-in is shutting down
                    break
                await response.write(json.dumps(event).encode() + b"\n")
        except TimeoutError:
            pass
        finally:
            self._watchers.remove((plural, queue))
        await response.write_eof()
        return response

    def app(self) -> web.Application:
        @web.middleware
        async def record(request: web.Request, handler: Handler) -> web.StreamResponse:
            self.calls.append((request.method, request.path, dict(request.query)))
            return await handler(request)

        app = web.Application(middlewares=[record])
        base = "/apis/{group}/{version}"
        app.router.add_post(f"{base}/namespaces/{{namespace}}/{{plural}}", self._create)
        one = f"{base}/namespaces/{{namespace}}/{{plural}}/{{name}}"
        app.router.add_delete(one, self._delete)
        app.router.add_get(one, self._get)
        app.router.add_patch(one, self._patch)
        app.router.add_get(f"{base}/{{plural}}", self._list_or_watch)
        app.router.add_get("/api/v1/pods", self._list_or_watch)  # core pods, every namespace
        core = "/api/v1/namespaces/{namespace}/{plural}"  # PVCs
        app.router.add_post(core, self._core_create)
        app.router.add_get(f"{core}/{{name}}", self._core_get)
        app.router.add_delete(f"{core}/{{name}}", self._core_delete)
        app.router.add_post("/api/v1/{plural}", self._core_create)  # PVs: of no namespace
        app.router.add_get("/api/v1/{plural}", self._core_list)  # and PVCs of every namespace
        app.router.add_get("/api/v1/{plural}/{name}", self._core_get)
        app.router.add_delete("/api/v1/{plural}/{name}", self._core_delete)
        return app


def _merge(target: Any, patch: Any) -> Any:
    """RFC 7386: objects merge member by member, null removes, anything else replaces."""
    if not isinstance(patch, dict):
        return patch
    result = dict(target) if isinstance(target, dict) else {}
    for name, value in patch.items():
        if value is None:
            result.pop(name, None)
        else:
            result[name] = _merge(result.get(name), value)
    return result


def _status(code: int, reason: str, message: str) -> web.Response:
    body = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": message,
            "reason": reason, "code": code}  # fmt: skip
    return web.json_response(body, status=code)


@asynccontextmanager
async def serving(stand_in: KubeStandIn) -> AsyncIterator[KubeStandIn]:
    runner = web.AppRunner(stand_in.app())
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    stand_in.url = f"http://127.0.0.1:{port}"
    try:
        yield stand_in
    finally:
        for _, queue in stand_in._watchers:
            queue.put_nowait({})  # end every open watch, so the server stops at once
        await runner.cleanup()
