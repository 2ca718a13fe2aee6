"""The OCI distribution client against a registry stand-in over real HTTP: listings behind no
login, Docker's token authentication and HTTP Basic, page after page; and every way a registry
can fail it (unreachable, not HTTP, garbage, an error status, too slow, too much, a next page
elsewhere, a wrong login), each a named failure within bounded time, never anything else."""

import time

import pytest

from infra.cli.embedded import free_port
from infra.oci.distribution import DistributionClient
from infra.oci.failures import (
    RegistryAnswerError,
    RegistryRefusedError,
    RegistryUnreachableError,
    RepositoryNotFoundError,
)
from infra.oci.logins import Login, challenge_of
from infra.settings import RegistrySettings
from tests.oci_stand_in import Misbehaviour, OciStandIn, not_http, serving

pytestmark = pytest.mark.integration

REPOSITORIES = {
    "nvidia/pytorch": ["24.05-py3", "24.06-py3", "latest"],
    "nvidia/tensorflow": ["24.05-tf2-py3"],
    "team/trainer": [],
    **{f"bulk/r{i:03}": [f"v{j}" for j in range(7)] for i in range(25)},
}
LOGIN = Login("puller", "pull-secret")
QUICK = RegistrySettings(
    timeout_s=2.0, deadline_s=3.0, page_size=4, max_answer_bytes=256 * 1024, allow_loopback=True
)


async def test_an_anonymous_registry_lists_every_page() -> None:
    async with serving(OciStandIn(REPOSITORIES, page_cap=3)) as registry:
        client = DistributionClient(QUICK)
        found = await client.repositories(registry.url, None)
        tags = await client.tags(registry.url, "bulk/r007", None)
    assert found == sorted(REPOSITORIES)
    assert tags == [f"v{j}" for j in range(7)]
    catalog_pages = [path for path, _ in registry.requests if path.startswith("/v2/_catalog")]
    assert len(catalog_pages) == -(-len(REPOSITORIES) // 3)  # the registry's cap, not our n
    assert catalog_pages[0] == "/v2/_catalog?n=4"
    assert "last=" in catalog_pages[1]
    assert registry.authorizations == []  # nothing asked, nothing sent


async def test_the_service_calls_no_loopback_or_link_local_address_unless_told() -> None:
    """An editor's URL is the service's outgoing call: not to its own ports, nor to a cloud's
    metadata endpoint (169.254.169.254), by address or by name."""
    async with serving(OciStandIn(REPOSITORIES)) as registry:
        guarded = DistributionClient(RegistrySettings(timeout_s=0.5, deadline_s=3.0))
        for base in (registry.url, registry.url.replace("127.0.0.1", "localhost")):
            with pytest.raises(RegistryUnreachableError) as caught:
                await guarded.repositories(base, None)
            assert "loopback or link-local" in str(caught.value)
        with pytest.raises(RegistryUnreachableError):
            await guarded.repositories("http://169.254.169.254", None)
    assert registry.requests == []  # nothing reached it


async def test_a_token_registry_is_logged_in_once_per_listing() -> None:
    async with serving(OciStandIn(REPOSITORIES, auth="bearer", page_cap=10)) as registry:
        client = DistributionClient(QUICK)
        found = await client.repositories(registry.url, LOGIN)
        tags = await client.tags(registry.url, "nvidia/pytorch", LOGIN)
    assert found == sorted(REPOSITORIES)
    assert tags == ["24.05-py3", "24.06-py3", "latest"]
    tokens = [path for path, _ in registry.requests if path.startswith("/token")]
    assert tokens == [
        "/token?service=stand-in&scope=registry%3Acatalog%3A%2A",
        "/token?service=stand-in&scope=repository%3Anvidia%2Fpytorch%3Apull",
    ]
    # After the challenge, every page goes with the token; the login went to the realm only.
    schemes = [scheme for path, scheme in registry.requests if path.startswith("/v2/_catalog")]
    assert schemes[0] == ""
    assert set(schemes[1:]) == {"Bearer"}
    assert LOGIN.basic() in registry.authorizations


async def test_anonymous_tokens_need_no_login() -> None:
    stand_in = OciStandIn(REPOSITORIES, auth="bearer", anonymous_tokens=True)
    async with serving(stand_in) as registry:
        found = await DistributionClient(QUICK).repositories(registry.url, None)
    assert found == sorted(REPOSITORIES)
    assert not [h for h in registry.authorizations if h.startswith("Basic")]


async def test_a_basic_registry_gets_the_login_when_it_asks() -> None:
    async with serving(OciStandIn(REPOSITORIES, auth="basic")) as registry:
        tags = await DistributionClient(QUICK).tags(registry.url, "nvidia/tensorflow", LOGIN)
    assert tags == ["24.05-tf2-py3"]
    assert [scheme for _, scheme in registry.requests][:2] == ["", "Basic"]


@pytest.mark.parametrize("auth", ["bearer", "basic"])
async def test_a_wrong_login_is_refused_by_name(auth: str) -> None:
    async with serving(OciStandIn(REPOSITORIES, auth=auth)) as registry:  # type: ignore[arg-type]
        with pytest.raises(RegistryRefusedError) as refused:
            await DistributionClient(QUICK).repositories(registry.url, Login("puller", "wrong"))
    assert refused.value.status == 401
    assert "wrong" not in str(refused.value)


async def test_an_unknown_repository_is_not_found() -> None:
    async with serving(OciStandIn(REPOSITORIES)) as registry:
        with pytest.raises(RepositoryNotFoundError):
            await DistributionClient(QUICK).tags(registry.url, "nobody/here", None)


async def test_a_repository_without_tags_lists_none() -> None:
    async with serving(OciStandIn(REPOSITORIES)) as registry:
        assert await DistributionClient(QUICK).tags(registry.url, "team/trainer", None) == []


async def test_no_registry_listening_is_unreachable_at_once() -> None:
    started = time.monotonic()
    with pytest.raises(RegistryUnreachableError):
        await DistributionClient(QUICK).repositories(f"http://127.0.0.1:{free_port()}", None)
    assert time.monotonic() - started < QUICK.deadline_s


async def test_a_server_that_is_not_http_is_a_bad_answer() -> None:
    async with not_http() as url:
        with pytest.raises(RegistryAnswerError, match="does not answer in HTTP"):
            await DistributionClient(QUICK).repositories(url, None)


@pytest.mark.parametrize(
    ("misbehaviour", "failure", "saying"),
    [
        ("html", RegistryAnswerError, "answered no Catalog"),
        ("wrong-shape", RegistryAnswerError, "answered no Catalog"),
        ("status-500", RegistryAnswerError, "answered HTTP 500"),
        ("endless", RegistryAnswerError, "answered more than"),
        ("slow", RegistryUnreachableError, "did not answer within"),
        ("link-elsewhere", RegistryAnswerError, "another server"),
    ],
)
async def test_a_misbehaving_registry_is_a_named_failure_within_the_bounds(
    misbehaviour: Misbehaviour, failure: type[Exception], saying: str
) -> None:
    stand_in = OciStandIn(REPOSITORIES, page_cap=3)
    stand_in.misbehave = misbehaviour
    started = time.monotonic()
    async with serving(stand_in) as registry:
        with pytest.raises(failure, match=saying):
            await DistributionClient(QUICK).repositories(registry.url, None)
    assert time.monotonic() - started < QUICK.deadline_s + 1


async def test_a_registry_trickling_its_answer_is_cut_at_the_deadline() -> None:
    # Each read comes within the per-call timeout, but the whole answer never does.
    settings = RegistrySettings(timeout_s=1.0, deadline_s=1.5, allow_loopback=True)
    stand_in = OciStandIn(REPOSITORIES)
    stand_in.misbehave = "trickle"
    started = time.monotonic()
    async with serving(stand_in) as registry:
        with pytest.raises(RegistryUnreachableError, match=r"no whole answer within 1\.5 s"):
            await DistributionClient(settings).repositories(registry.url, None)
    assert time.monotonic() - started < 3


def test_challenges_are_read_as_registries_write_them() -> None:
    header = (
        'Bearer realm="https://auth.docker.io/token",service="registry.docker.io",'
        'scope="repository:samalba/my-app:pull,push"'
    )
    assert challenge_of(header) == (
        "bearer",
        {
            "realm": "https://auth.docker.io/token",
            "service": "registry.docker.io",
            "scope": "repository:samalba/my-app:pull,push",
        },
    )
    assert challenge_of('Basic realm="Registry Realm"') == ("basic", {"realm": "Registry Realm"})
    assert challenge_of("Bearer realm=") is None
    assert challenge_of("Bearer garbage") is None
    assert repr(LOGIN) == "Login('puller', password hidden)"
