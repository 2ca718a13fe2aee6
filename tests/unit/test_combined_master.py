"""The master of `masterSpecSameAsWorker` made from the combined worker spec (master_of, as the
template read model makes it when a row is read) is the one combine makes from the worker's
values, for specs that reach every field a replica has, of every framework."""

from typing import Any

import msgspec
import pytest

from domain.combined import combine, master_of
from domain.template_specs import DistributedTemplateSpec
from domain.templates import TemplateBody
from tests.workload_samples import RICH

SPECS: list[dict[str, Any]] = [
    {"distributedFramework": "PyTorch", "numWorkers": 2, **RICH},
    {"distributedFramework": "MPI", "numWorkers": 3, "slotsPerWorker": 2,
     "sshAuthMountPath": "/root/.ssh", "mpiLauncherCreationPolicy": "WaitForWorkersReady",
     **RICH},
    {"distributedFramework": "TF", "image": "tf:2", "exposedUrls": [
        {"container": 8888, "authorizationType": "authorizedUsers", "authorizedUsers": ["a"]}]},
    {"distributedFramework": "XGBoost", "image": "xgb", "minReplicas": 1, "maxReplicas": 4},
    {"image": "only-an-image"},
    {},
]  # fmt: skip


@pytest.mark.parametrize("spec", SPECS)
def test_the_master_made_from_the_worker_spec_is_the_master_combine_copies(
    spec: dict[str, Any],
) -> None:
    body = TemplateBody(spec=msgspec.convert(spec, DistributedTemplateSpec, strict=False))
    copied = combine(body, {})
    elided = combine(body, {}, copy_master=False)
    assert copied.master is not None
    assert elided.master is None
    assert elided.spec == copied.spec
    assert elided.runnable == copied.runnable
    assert master_of(elided.spec) == copied.master
