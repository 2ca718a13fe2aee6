"""The data source kinds in Run:ai's paths and bodies, and a spec read as its kind's Struct:
shared by the API's handlers (infra/http/data_sources.py) and the console's forms."""

from typing import Any, Final, cast

import msgspec

from domain.pointers import pointer_in
from domain.specs import AnyDataSourceSpec
from domain.values import AssetKind
from projections.asset_catalogue import DATA_SOURCE_SPECS
from services.errors import InvalidRequestError

# Path segment of each kind, and its member in the combined list's spec.
KINDS: Final[dict[AssetKind, tuple[str, str]]] = {
    "nfs": ("nfs", "nfs"),
    "pvc": ("pvc", "pvc"),
    "s3": ("s3", "s3"),
    "git": ("git", "git"),
    "hostPath": ("host-path", "hostPath"),
    "config-map": ("config-map", "config_map"),
    "secret-volume": ("secrets", "secret"),
}


def spec_as(kind: AssetKind, raw: dict[str, Any], *, lax: bool = False) -> AnyDataSourceSpec:
    """Decode the spec as the path's kind; a bad field is named under /spec. `lax` reads
    numbers and booleans from text (a form's)."""
    try:
        spec = msgspec.convert(raw, type=DATA_SOURCE_SPECS[kind], strict=not lax)
    except msgspec.ValidationError as exc:
        raise InvalidRequestError(pointer_in(str(exc), "/spec"), str(exc)) from None
    return cast(AnyDataSourceSpec, spec)
