"""The workload priority dictionary (reference §15.1): the names a template or workload may give
as `priorityClass`, each with its Kubernetes priority value. Fixed data, as Run:ai ships it; the
ids are constants so a client that keeps one finds the same priority on every install.

Priorities, layer by layer: domain/priorities.py the dictionary, infra/http/priorities.py the
HTTP route that reads it."""

from typing import Final
from uuid import UUID

import msgspec


class Priority(msgspec.Struct, frozen=True, kw_only=True):
    id: UUID
    name: str
    value: int


DICTIONARY: Final = (
    Priority(id=UUID("5d1c0f3e-7a51-4b8e-9a44-0c2b7e1d9a01"), name="very-low", value=25),
    Priority(id=UUID("5d1c0f3e-7a51-4b8e-9a44-0c2b7e1d9a02"), name="low", value=40),
    Priority(id=UUID("5d1c0f3e-7a51-4b8e-9a44-0c2b7e1d9a03"), name="medium-low", value=65),
    Priority(id=UUID("5d1c0f3e-7a51-4b8e-9a44-0c2b7e1d9a04"), name="medium", value=80),
    Priority(id=UUID("5d1c0f3e-7a51-4b8e-9a44-0c2b7e1d9a05"), name="medium-high", value=90),
    Priority(id=UUID("5d1c0f3e-7a51-4b8e-9a44-0c2b7e1d9a06"), name="high", value=125),
    Priority(id=UUID("5d1c0f3e-7a51-4b8e-9a44-0c2b7e1d9a07"), name="very-high", value=150),
)
NAMES: Final = tuple(p.name for p in DICTIONARY)
# What a distributed (Train category) workload gets when its spec names none (reference §15.2).
DEFAULT: Final = "low"
