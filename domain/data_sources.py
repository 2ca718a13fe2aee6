"""Rules of the data-source assets that relate fields (reference §5.7, §13.1); the credentials a
data source reads are the use case's to check, since it can look them up. Also:
infra/http/data_sources.py."""

from typing import assert_never

from domain.errors import DomainError
from domain.quantities import is_positive
from domain.specs import (
    AnyDataSourceSpec,
    ConfigMapSpec,
    GitSpec,
    HostPathSpec,
    NfsSpec,
    PvcSpec,
    S3Spec,
    SecretVolumeSpec,
)


class InvalidDataSourceError(DomainError):
    slug = "invalid-asset"

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field


def check_data_source(spec: AnyDataSourceSpec) -> None:
    """Its mandatory fields are checked with every asset's (domain/mandatory_fields.py)."""
    match spec:
        case GitSpec():
            if spec.credential_id is not None and spec.password_asset_id is not None:
                raise InvalidDataSourceError(
                    "/spec/passwordAssetId", "give credentialId (passwordAssetId is deprecated)"
                )
        case PvcSpec():
            _check_pvc(spec)
        case NfsSpec() | HostPathSpec() | S3Spec() | ConfigMapSpec() | SecretVolumeSpec():
            pass
        case _:
            assert_never(spec)


def _check_pvc(spec: PvcSpec) -> None:
    if spec.existing_pvc:
        if spec.claim_name is None:
            raise InvalidDataSourceError("/spec/claimName", "required with existingPvc true")
        if spec.claim_info is not None:
            raise InvalidDataSourceError(
                "/spec/claimInfo", "only for a new PVC (existingPvc false)"
            )
        return
    if spec.claim_info is None or spec.claim_info.size is None:
        raise InvalidDataSourceError("/spec/claimInfo/size", "a new PVC needs a size")
    if not is_positive(spec.claim_info.size):
        raise InvalidDataSourceError(
            "/spec/claimInfo/size", "a new PVC claims a size above 0, e.g. 10Gi"
        )
    modes = spec.claim_info.access_modes
    if modes is not None and not (
        modes.read_write_once or modes.read_only_many or modes.read_write_many
    ):
        raise InvalidDataSourceError("/spec/claimInfo/accessModes", "choose at least one")
