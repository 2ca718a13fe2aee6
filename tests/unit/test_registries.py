"""Registry rules: a URL the service can reach and store, a password that goes only where it was
given for, and a template's private-registry pick that names its registry."""

from uuid import uuid4

import msgspec
import pytest

from domain import registries
from domain.assets import AssetNotFoundError, InvalidAssetError
from domain.events import RegistryCreated, RegistryDeleted, RegistryUpdated
from domain.specs import RegistrySpec, SecretRef
from domain.template_rules import InvalidTemplateError, check_template
from domain.template_specs import DistributedTemplateSpec
from domain.values import AssetMeta

META = AssetMeta(name="ngc", scope="tenant")
SECRET = SecretRef(key_id=1, fingerprint="hmac-sha256:1")
NEW_SECRET = SecretRef(key_id=1, fingerprint="hmac-sha256:2")
SPEC = RegistrySpec(url="https://registry.example.com", user="puller", secret=SECRET)


def created() -> registries.Registry:
    asset_id = uuid4()
    state = registries.fold(registries.create(None, asset_id, META, SPEC))
    assert state is not None
    return state


@pytest.mark.parametrize(
    "url",
    [
        "nvcr.io",
        "https://registry.example.com",
        "http://127.0.0.1:5000/",
        "https://registry.example.com:8443/mirror/v2/",
        "https://[::1]:5000",
    ],
)
def test_a_registry_url_is_taken(url: str) -> None:
    registries.check_url(url)


@pytest.mark.parametrize(
    "url",
    [
        "",
        "ftp://registry.example.com",
        "https://bot:secret@registry.example.com",
        "https://registry.example.com/?tenant=1",
        "https://registry.example.com/#top",
        "https://registry.example.com?",
        "https://:5000",
        "https://registry.example.com:0",
        "https://registry.example.com:65536",
        "https://registry example.com",
        "https://[::1",
        "https://[registry.example.com]",
        "https://registry.example.com/\x00",
        "https://" + "a" * registries.URL_MAX,
    ],
)
def test_a_registry_url_that_cannot_be_reached_or_stored_is_refused(url: str) -> None:
    with pytest.raises(InvalidAssetError) as caught:
        registries.check_url(url)
    assert caught.value.field == "/spec/url"


def test_the_api_sits_under_the_registry_url() -> None:
    assert registries.api_base("nvcr.io") == "https://nvcr.io"
    assert registries.api_base("http://127.0.0.1:5000/") == "http://127.0.0.1:5000"
    assert registries.api_base("https://host/mirror/v2/") == "https://host/mirror"


def test_a_registry_needs_its_password_and_a_scope_of_its_own() -> None:
    with pytest.raises(InvalidAssetError, match="/spec/password"):
        registries.create(None, uuid4(), META, msgspec.structs.replace(SPEC, secret=None))
    with pytest.raises(InvalidAssetError, match="/meta/private"):
        registries.create(None, uuid4(), msgspec.structs.replace(META, private=True), SPEC)
    with pytest.raises(InvalidAssetError, match="/meta/name"):
        registries.create(None, uuid4(), msgspec.structs.replace(META, name=" "), SPEC)


def test_the_password_goes_nowhere_it_was_not_given_for() -> None:
    state = created()
    for change in ({"url": "https://elsewhere.example.com"}, {"user": "someone"}):
        target = {"url": SPEC.url, "user": SPEC.user, **change}
        with pytest.raises(InvalidAssetError, match="/spec/password"):
            registries.update(state, state.id, name="ngc", description=None, secret=None, **target)
        (moved,) = registries.update(
            state, state.id, name="ngc", description=None, secret=NEW_SECRET, **target
        )
        assert isinstance(moved, RegistryUpdated)
        assert moved.spec.secret == NEW_SECRET


def test_an_unchanged_registry_writes_nothing_and_a_rename_keeps_the_login() -> None:
    state = created()
    same = {"url": SPEC.url, "user": SPEC.user}
    assert (
        registries.update(state, state.id, name="ngc", description=None, secret=None, **same) == []
    )
    assert (
        registries.update(state, state.id, name="ngc", description=None, secret=SECRET, **same)
        == []
    )
    (renamed,) = registries.update(
        state, state.id, name="ngc-eu", description=None, secret=None, **same
    )
    assert isinstance(renamed, RegistryUpdated)
    assert renamed.spec == SPEC


def test_a_deleted_registry_is_gone_and_deleting_it_again_writes_nothing() -> None:
    state = created()
    (deleted,) = registries.delete(state, state.id)
    assert deleted == RegistryDeleted(asset_id=state.id)
    gone = registries.fold([RegistryCreated(asset_id=state.id, meta=META, spec=SPEC), deleted])
    assert registries.delete(gone, state.id) == []
    with pytest.raises(AssetNotFoundError):
        registries.live(gone, state.id)
    with pytest.raises(AssetNotFoundError):
        registries.delete(None, state.id)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"imageSource": "ngcPrivateRegistry"}, "required with imageSource ngcPrivateRegistry"),
        ({"imageSource": "custom", "imageRegistryId": str(uuid4())}, "only with imageSource"),
        ({"imageRegistryId": str(uuid4())}, "only with imageSource"),
    ],
)
def test_a_private_registry_pick_names_its_registry(fields: dict[str, str], message: str) -> None:
    spec = msgspec.convert(
        {"distributedFramework": "PyTorch", "numWorkers": 1, **fields}, DistributedTemplateSpec
    )
    with pytest.raises(InvalidTemplateError, match=message) as caught:
        check_template(
            name="t",
            description=None,
            spec=spec,
            assets=None,
            master_spec_same_as_worker=True,
            master=None,
        )
    assert caught.value.field == "/spec/imageRegistryId"
