"""The upstream Kubeflow CRDs (../shared/crds) as JSON-schema validators, strict as the API
server's field validation: an unknown field is an error."""

import copy
import os
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft7Validator

CRDS = Path(__file__).parents[2] / "shared" / "crds"
FILES = {
    "PyTorchJob": "kubeflow.org_pytorchjobs.v1.yaml",
    "TFJob": "kubeflow.org_tfjobs.v1.yaml",
    "XGBoostJob": "kubeflow.org_xgboostjobs.v1.yaml",
    "JAXJob": "kubeflow.org_jaxjobs.v1.yaml",
    "MPIJob": "kubeflow.org_mpijobs.v2beta1.yaml",
    "TrainingRuntime": "trainer-v2/trainer.kubeflow.org_trainingruntimes.yaml",
    "TrainJob": "trainer-v2/trainer.kubeflow.org_trainjobs.yaml",
}


def require_crds() -> None:
    if not CRDS.is_dir():  # CI always has them; a checkout elsewhere may not
        if os.environ.get("CI"):
            raise RuntimeError(f"the Kubeflow CRDs are missing at {CRDS}")
        pytest.skip(f"the Kubeflow CRDs are not at {CRDS}", allow_module_level=True)


def strict(schema: Any) -> Any:
    """As the API server's strict field validation: an object with declared properties and no
    `x-kubernetes-preserve-unknown-fields` takes no other field."""
    if isinstance(schema, dict):
        if (
            schema.get("type") == "object"
            and "properties" in schema
            and not schema.get("x-kubernetes-preserve-unknown-fields")
            and "additionalProperties" not in schema
        ):
            schema["additionalProperties"] = False
        for value in schema.values():
            strict(value)
    elif isinstance(schema, list):
        for value in schema:
            strict(value)
    return schema


@cache
def validator(kind: str) -> Draft7Validator:
    with (CRDS / FILES[kind]).open() as f:
        crd = yaml.load(f, Loader=yaml.CSafeLoader)
    (version,) = [v for v in crd["spec"]["versions"] if v.get("served")]
    schema = strict(copy.deepcopy(version["schema"]["openAPIV3Schema"]))
    schema["properties"]["metadata"] = {"type": "object"}
    return Draft7Validator(schema)


def errors_of(manifest: dict[str, Any]) -> list[str]:
    found = sorted(validator(manifest["kind"]).iter_errors(manifest), key=str)
    return [f"{list(e.absolute_path)}: {e.message}" for e in found]
