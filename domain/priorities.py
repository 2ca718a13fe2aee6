"""The workload priority dictionary (reference §15.1): the `priorityClass` names and their
Kubernetes values, as Run:ai ships them, with constant ids so a client finds the same priority on
every install. Also: infra/http/priorities.py, the route that reads it."""

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
