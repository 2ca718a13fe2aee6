"""The sealer of credential values: values open only for the asset they were sealed for, and
the fingerprint the events record in their place is bound to the asset, so equal values of two
assets fingerprint apart; one recorded before fingerprints were bound still verifies."""

import hashlib
import hmac
from uuid import uuid4

import pytest

from infra.http.problems import status_for
from infra.security.sealing import SealedUnderAnotherKeyError, Sealer, _canonical
from infra.settings import CredentialSettings

SETTINGS = CredentialSettings(encryption_key="c2VhbGluZy1rZXktZm9yLXRlc3RzLW9ubHktMzJieXQ=")


def test_equal_values_of_two_assets_fingerprint_apart_and_each_verifies_only_its_own() -> None:
    sealer = Sealer(SETTINGS)
    mine, theirs = uuid4(), uuid4()
    values = {"password": "guess"}
    assert sealer.fingerprint(mine, values) != sealer.fingerprint(theirs, values)
    assert sealer.fingerprint(mine, values) == sealer.fingerprint(mine, dict(values))
    assert sealer.matches(mine, values, sealer.fingerprint(mine, values))
    assert not sealer.matches(theirs, values, sealer.fingerprint(mine, values))
    assert not sealer.matches(mine, {"password": "other"}, sealer.fingerprint(mine, values))


def test_a_fingerprint_recorded_before_they_were_bound_still_verifies() -> None:
    sealer = Sealer(SETTINGS)
    values = {"password": "old"}
    key = sealer._fingerprint_key
    recorded = "hmac-sha256:" + hmac.new(key, _canonical(values), hashlib.sha256).hexdigest()
    assert sealer.matches(uuid4(), values, recorded)
    assert not sealer.matches(uuid4(), {"password": "new"}, recorded)


def test_sealed_values_open_only_for_their_asset() -> None:
    sealer = Sealer(SETTINGS)
    asset = uuid4()
    sealed = sealer.seal(asset, {"password": "p"})
    assert sealer.open(asset, sealed) == {"password": "p"}
    with pytest.raises(SealedUnderAnotherKeyError):
        sealer.open(uuid4(), sealed)


def test_a_value_sealed_under_a_replaced_key_asks_to_be_entered_again() -> None:
    asset = uuid4()
    sealed = Sealer(SETTINGS).seal(asset, {"password": "p"})
    other = CredentialSettings(encryption_key="b3RoZXIta2V5LWZvci10ZXN0cy1vbmx5LTMyYnl0ZXM=")
    with pytest.raises(SealedUnderAnotherKeyError) as refused:
        Sealer(other).open(asset, sealed)
    assert status_for(refused.value) == 409  # the client's to fix, never a 500
