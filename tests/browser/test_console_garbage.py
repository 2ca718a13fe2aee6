"""Whatever a console form is sent, the answer is a page that says what is wrong, never a 500:
the new-template form's first step, the edit-template form (every section's fields, the
master's too), the environment, compute resource and data source forms, the settings, the
version comparison and the template name's check, the clusters and projects and a workload's
actions, each sent values of the wrong shape, with the session's own CSRF token so the forms
themselves answer."""

from typing import Any
from uuid import uuid4

import pytest
from playwright.sync_api import Page

from tests.browser.conftest import ADMIN_ID, Service
from tests.browser.journey import journey, sign_in
from tests.integration.test_dev_smoke import ADMIN_SECRET

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.browser]


def _arranged(service: Service) -> tuple[str, str, str, str]:
    cluster = service.made("/api/v1/clusters", {"name": "junk-cluster"})
    project = service.made(
        "/api/v1/org-unit/projects", {"name": "junk-vision", "clusterId": cluster["uuid"]}
    )
    environment = service.made(
        "/api/v1/asset/environment",
        {
            "meta": {"scope": "project", "projectId": int(project["id"]), "name": "junk-env"},
            "spec": {"image": "python:3.12"},
        },
    )
    compute = service.made(
        "/api/v1/asset/compute",
        {
            "meta": {"scope": "project", "projectId": int(project["id"]), "name": "junk-cmp"},
            "spec": {"cpuCoreRequest": 1},
        },
    )
    nfs = service.made(
        "/api/v1/asset/datasource/nfs",
        {
            "meta": {"scope": "project", "projectId": int(project["id"]), "name": "junk-nfs"},
            "spec": {"server": "nfs.example.com", "path": "/a", "mountPath": "/mnt/a"},
        },
    )
    template = service.made(
        "/api/v1/workload-templates/distributed",
        {
            "meta": {"name": "junk-ddp", "scopeType": "project", "scopeId": project["id"]},
            "spec": {"distributedFramework": "PyTorch", "numWorkers": 2, "image": "python:3.12"},
        },
    )
    ids = (environment["meta"]["id"], compute["meta"]["id"], nfs["meta"]["id"])
    return template["meta"]["id"], *ids


def _posted(page: Page, url: str, form: dict[str, Any]) -> tuple[int, str]:
    token = page.locator("input[name=_csrf_token]").first.get_attribute("value")
    answer = page.request.post(url, form={"_csrf_token": token or "", **form})
    return answer.status, answer.text()


GARBAGE_EDITS: list[dict[str, Any]] = [
    {"action": "save", "version": "not-a-version", "/meta/name": "junk-ddp"},
    {"action": "save", "version": "\u00b2", "/meta/name": "junk-ddp", "/spec/numWorkers": "many"},
    # A row far past any list's end (a form drawn with a billion rows, else).
    {"action": "save", "/meta/name": "junk-ddp", "/spec/environmentVariables/999999999/name": "X"},
    {"action": "load-nothing", "/meta/name": "junk-ddp", "/spec/tolerations/99999999/key": "k"},
    {"action": "save", "/meta/name": "junk-ddp", "/spec/numWorkers": "many"},
    {"action": "save", "/meta/name": "junk-ddp", "/assets/environment": "not-an-id"},
    {"action": "save", "/meta/name": "junk-ddp", "/assets/datasources/0/ref": "nfs|nope"},
    {"action": "save", "/meta/name": "", "/spec/compute/cpuCoreRequest": "-1e999"},
    {"action": "save", "/meta/name": "junk-ddp", "/spec/security/capabilities": "NOT_ONE"},
    {"action": "load-nothing", "/meta/name": "junk-ddp", "/spec/podAffinity/type": "Sideways"},
    {"action": "save", "/meta/name": "x" * 5000, "/spec/tolerations/0/operator": "Maybe"},
    *(
        {"action": "save", "/meta/name": "junk-ddp", "/spec/environmentVariables/0/name": "X",
         **{f"/spec/environmentVariables/0/{k}": v for k, v in sent.items()}}
        for sent in (
            {"source": "sideways", "value": "1"},
            {"source": "secret", "secret/name": "-1e999", "secret/key": ""},
            {"source": "configMap", "value": "ignored"},
            {"source": "userCredential"},
            {"source": "", "configMap/name": "x" * 5000},
        )
    ),
    *(
        {"action": "save", "/meta/name": "junk-ddp", "/spec/storage/pvc/0/path": "/data",
         **{f"/spec/storage/pvc/0/{k}": v for k, v in sent.items()}}
        for sent in (
            {"claimInfo/size": "huge"},
            {"claimInfo/size": "1G", "claimInfo/accessModes": "sideways"},
            {"claimInfo/size": "1G", "claimInfo/volumeMode": "Side"},
            {"claimInfo/size": "1G", "ephemeral": "perhaps"},
            {"claimInfo/size": "-1e999", "claimInfo/storageClass": "Not A Class"},
        )
    ),
    *(
        {"action": "save", "/meta/name": "junk-ddp",
         **{f"/spec/exposedUrls/0/{k}": v for k, v in sent.items()}}
        for sent in (
            {"container": "port", "authorizationType": "authorizedUsers"},
            {"container": "8080", "authorizationType": "everyone"},
            {"container": "8080", "authorizedUsers": ",,,", "authorizedGroups": "a"},
            {"container": "8080", "authorizationType": "authorizedGroups"},
            {"container": "-1e999", "authorizedUsers": "x" * 5000},
        )
    ),
    *(
        {"action": "save", "/meta/name": "junk-ddp", "/configuration": "workers-and-master",
         "/differentMaster": "true", **sent}
        for sent in (
            {"/master/spec/environmentVariables/0/name": "X",
             "/master/spec/environmentVariables/0/source": "zzz"},
            {"/master/assets/datasources/0/ref": "nfs|nope"},
            {"/master/spec/storage/pvc/0/claimInfo/size": "0",
             "/master/spec/storage/pvc/0/path": "/d"},
            {"/master/spec/compute/gpuPortionLimit": "lots",
             "/master/spec/tolerations/0/effect": "Never"},
        )
    ),
]  # fmt: skip
GARBAGE_ENVIRONMENTS: list[dict[str, Any]] = [
    {"/scope": "project:not-a-number", "/meta/name": "junk"},
    {"/scope": "cluster:not-a-uuid", "/meta/name": "junk"},
    {"/scope": "galaxy:1", "/meta/name": "junk"},
    {"/scope": "project:1", "/meta/name": "junk", "/spec/imagePullPolicy": "Sometimes"},
    {"/meta/workloadSupportedTypes/distFramework": "Abacus", "/meta/name": "junk"},
    *(
        {"/scope": "tenant", "/meta/name": "junk", "/spec/image": "python:3.12", **sent}
        for sent in (
            {"/spec/environmentVariables/0/name": "X",
             "/spec/environmentVariables/0/source": "sideways",
             "/spec/environmentVariables/0/value": "1"},
            {"/spec/environmentVariables/0/name": "X",
             "/spec/environmentVariables/0/source": "credential",
             "/spec/environmentVariables/0/credential/assetId": "not-an-id",
             "/spec/environmentVariables/0/credential/key": "k"},
            {"/spec/environmentVariables/0/name": "X",
             "/spec/environmentVariables/0/source": "configMap",
             "/spec/environmentVariables/0/configMap/name": "Not A Name"},
            {"/spec/environmentVariables/0/name": "",
             "/spec/environmentVariables/0/podFieldRef/path": "x" * 5000},
            {"/spec/connections/0/name": "c", "/spec/connections/0/isExternal": "perhaps"},
            {"/spec/connections/0/name": "c",
             "/spec/connections/0/internalToolInfo/connectionType": "Sideways",
             "/spec/connections/0/internalToolInfo/containerPort": "-1e999"},
            {"/spec/probes/readiness/periodSeconds": "0"},
            {"/spec/runAsNonRoot": "perhaps", "/spec/capabilities": "NOT_ONE"},
        )
    ),
]  # fmt: skip

GARBAGE_COMPUTES: list[dict[str, Any]] = [
    {"/scope": "project:1", "/meta/name": "junk", "/spec/compute/gpuDevicesRequest": "two"},
    {"/scope": "tenant", "/meta/name": "junk", "/spec/compute/gpuPortionRequest": "-1e999"},
    {"/scope": "tenant", "/meta/name": "junk", "/spec/compute/gpuRequestType": "Most"},
    {"/scope": "tenant", "/meta/name": "junk", "/spec/compute/cpuMemoryRequest": "lots"},
    {"/scope": "tenant", "/meta/name": "junk", "/spec/compute/largeShmRequest": "perhaps"},
    {"/scope": "tenant", "/meta/name": "junk", "/spec/compute/extendedResources/7/quantity": "1"},
    {"/scope": "tenant", "/meta/name": "junk", "/spec/compute/extendedResources/0/resource": "a b"},
    {
        "/scope": "tenant",
        "/meta/name": "junk",
        "/spec/compute/gpuRequestType": "Most",
        "version": "\u00b2",
    },
]

_DDP = "apiVersion: trainplate/v1\nkind: DistributedTemplate\nmetadata: {name: junk-ddp, "
GARBAGE_PLANS: list[dict[str, Any]] = [
    {"documents": ""},
    {"documents": "kind: [unclosed"},
    {"documents": "just a string\n---\n- a list"},
    {"documents": "a: &a [*a, *a]\nb: !!python/object:os.system {}"},
    {"documents": "{1: 2, [3]: 4}"},
    {"documents": _DDP + "scope: {project: junk-vision}}\nspec: &s {tolerations: [*s]}"},
    {"documents": _DDP + "scope: {project: junk-vision}}\nspec: {command: &c [*c]}"},
    {"documents": _DDP + "scope: {galaxy: far}}\nspec: {numWorkers: many}"},
    {"documents": _DDP + "scope: {project: junk-vision}}\nspec: {numWorkers: 2}\n"
     "assets: {environment: {name: no-such-env}}"},
    {"documents": _DDP + "scope: {project: junk-vision}}\ncreated: 2024-01-01"},
    {"documents": _DDP + "scope: {project: junk-vision}}", "prune": "on", "scopes": "galaxy:1"},
    {"documents": _DDP + "scope: {project: junk-vision}}", "action": "apply", "versions": "{x"},
    {"documents": _DDP + "scope: {project: junk-vision}}", "action": "apply",
     "versions": '{"not-a-uuid": 1}'},
    {"documents": "---\n" * 1001 + "\n".join(f"--- {i}" for i in range(1001))},
]  # fmt: skip

# (the kind's address, the form sent)
GARBAGE_DATA_SOURCES: list[tuple[str, dict[str, Any]]] = [
    ("nfs", {"/scope": "project:not-a-number", "/meta/name": "junk"}),
    ("nfs", {"/scope": "tenant", "/meta/name": "junk", "/spec/readOnly": "perhaps"}),
    ("config-map", {"/scope": "tenant", "/meta/name": "junk", "/spec/defaultMode": "999"}),
    ("pvc", {"/scope": "tenant", "/meta/name": "junk", "/spec/claimInfo/volumeMode": "Side"}),
    ("pvc", {"/scope": "tenant", "/meta/name": "junk", "/spec/claimInfo/size": "huge"}),
    ("s3", {"/scope": "tenant", "/meta/name": "junk", "/spec/accessKeyAssetId": "not-an-id"}),
    ("secrets", {"/scope": "tenant", "/meta/name": "", "/spec/credentialAssetId": "-1e999"}),
]


def test_no_console_form_answers_garbage_with_a_server_error(service: Service) -> None:
    template_id, environment_id, compute_id, nfs_id = _arranged(service)
    base = f"{service.url}/console"
    with journey("garbage") as j:
        page = j.page
        sign_in(page, service.url, ADMIN_ID, ADMIN_SECRET)
        page.goto(f"{base}/templates/{template_id}/edit")
        for form in GARBAGE_EDITS:
            status, text = _posted(page, f"{base}/templates/{template_id}/edit", form)
            assert 400 <= status < 500, (form, status)
            assert "was not saved" in text or "Refused" in text, form
        page.goto(f"{base}/templates/new")
        for first_step in (
            {"/scope": "tenant", "/spec/distributedFramework": "Abacus"},
            {"/scope": "cluster:not-a-uuid", "/spec/distributedFramework": "PyTorch"},
            {"/scope": "project:abc", "/spec/distributedFramework": "-1e999"},
            {"/scope": "galaxy:1"},
        ):
            form = {"action": "continue", "/meta/name": "junk-new", **first_step}
            status, text = _posted(page, f"{base}/templates/new", form)
            assert 400 <= status < 500, (form, status)
            assert "was not created" in text, form
        page.goto(f"{base}/environments/new")
        for form in GARBAGE_ENVIRONMENTS:
            status, text = _posted(page, f"{base}/environments/new", form)
            assert 400 <= status < 500, (form, status)
            assert "was not created" in text, form
        for form in (
            {"action": "save", "previewed": "x", "/meta/name": "junk-env", "/spec/image": ""},
            {"action": "preview", "/meta/name": "", "/spec/imagePullPolicy": "Sometimes"},
        ):
            status, text = _posted(page, f"{base}/environments/{environment_id}", form)
            assert status < 500, (form, status)
            assert "was not saved" in text or "Impact on templates" in text, form
        far = {"/scope": "tenant", "/meta/name": "junk", "action": "save", "previewed": "x"}
        far["/spec/environmentVariables/999999999/name"] = "X"
        for url in (f"{base}/environments/new", f"{base}/environments/{environment_id}"):
            status, text = _posted(page, url, far)
            assert status == 400, (url, status)
            assert "at most 1000 rows" in text, url
        page.goto(f"{base}/compute-resources/new")
        for form in GARBAGE_COMPUTES:
            status, text = _posted(page, f"{base}/compute-resources/new", form)
            assert 400 <= status < 500, (form, status)
            assert "was not created" in text, form
            # A preview is refused as the save would be: nothing is previewed of these.
            edit = {**form, "/meta/name": "junk-cmp", "action": "save", "previewed": "x"}
            status, text = _posted(page, f"{base}/compute-resources/{compute_id}", edit)
            assert 400 <= status < 500, (edit, status)
            assert "was not saved" in text, edit
            assert "Impact on templates" not in text, edit
        # A row far past any list's end is refused before a form is drawn with a billion rows.
        far = {"/scope": "tenant", "/meta/name": "junk", "action": "save", "previewed": "x"}
        far["/spec/compute/extendedResources/999999999/quantity"] = "1"
        for url in (f"{base}/compute-resources/new", f"{base}/compute-resources/{compute_id}"):
            status, text = _posted(page, url, far)
            assert status == 400, (url, status)
            assert "at most 1000 rows" in text, url
        page.goto(f"{base}/data-sources/nfs/new")
        for segment, form in GARBAGE_DATA_SOURCES:
            status, text = _posted(page, f"{base}/data-sources/{segment}/new", form)
            assert 400 <= status < 500, (segment, form, status)
            assert "was not created" in text, (segment, form)
        for form in (
            {"/meta/name": "junk-nfs", "/spec/readOnly": "perhaps"},
            {"/meta/name": "", "/spec/server": ""},
        ):
            status, text = _posted(page, f"{base}/data-sources/nfs/{nfs_id}", form)
            assert 400 <= status < 500, (form, status)
            assert "was not saved" in text, form
        status, text = _posted(page, f"{base}/data-sources/galaxy/new", {"/meta/name": "x"})
        assert status == 404, status
        assert "Not found" in text
        page.goto(f"{base}/clusters")
        cluster = next(
            c["uuid"] for c in service.api.get("/api/v1/clusters").json()
            if c["name"] == "junk-cluster"
        )  # fmt: skip
        for url, form in (
            (f"{base}/clusters", {"name": "x" * 5000}),
            (f"{base}/clusters", {"name": "   "}),
            (f"{base}/clusters", {"name": "junk\u200bcluster"}),
            (f"{base}/projects", {"name": "junk-p", "clusterId": "not-a-uuid"}),
            (f"{base}/projects", {"name": "junk-p", "clusterId": str(uuid4())}),
            (f"{base}/projects", {"name": "junk-p", "clusterId": cluster, "parentId": "-1e999"}),
            (f"{base}/projects", {"name": "", "clusterId": cluster, "description": "x" * 5000}),
        ):
            status, text = _posted(page, url, form)
            assert 400 <= status < 500, (form, status)
            assert "was not created" in text, form
        for url in (
            f"{base}/clusters/{uuid4()}/delete",
            f"{base}/projects/not-a-project/delete",
            f"{base}/workloads/{uuid4()}/suspend",
            f"{base}/workloads/{uuid4()}/sideways",
        ):
            status, text = _posted(page, url, {})
            assert status == 404, (url, status)
            assert "Not found" in text, url
        page.goto(f"{base}/template-plans")
        for form in GARBAGE_PLANS:
            status, text = _posted(page, f"{base}/template-plans", form)
            assert 400 <= status < 500, (form, status)
            assert "the documents were not" in text, form
        page.goto(f"{base}/settings")
        for form in (
            {"workloads.ngcCatalog": "perhaps"},
            {"workloads.dataVolumes": "x" * 5000},
            {"clusters": "not-a-cluster", "workloads.dataVolumes": "maybe"},
        ):
            status, text = _posted(page, f"{base}/settings", form)
            assert status == 400, (form, status)
            assert "The settings were not saved" in text, form
        flexible = service.api.get("/v1/k8s/setting/workloads.flexibleWorkloadSubmission")
        assert flexible.json() is True  # a refused form writes no switch, not even the others
        for query in ("from=abc", "from=999&to=1", "from=0", "from=1&to=-4", "from=%C2%B2"):
            answer = page.request.get(f"{base}/templates/{template_id}?{query}")
            assert 200 <= answer.status < 500, (query, answer.status)
            assert "No such version" in answer.text() or "Refused" in answer.text(), query
        for query in (
            "scope=project:abc&name=x",
            "scope=cluster:not-a-uuid&name=x",
            "scope=galaxy:1&name=x",
            "scope=tenant&name=" + "x" * 5000,
            "name=junk-ddp",
            "scope=tenant&name=%00",
        ):
            answer = page.request.get(f"{base}/templates/name-check?{query}")
            assert answer.status < 500, (query, answer.status)
            if answer.status == 200:
                assert answer.json()["free"] in (None, True), query
    kept = service.api.get(f"/api/v1/workload-templates/{template_id}").json()
    assert kept["meta"]["name"] == "junk-ddp"
    assert kept["spec"]["numWorkers"] == 2  # nothing was written
