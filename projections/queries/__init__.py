"""What the API and the console read: one module per feature, over its read models' own
queries. Each takes where to read (`Reads`) and what the caller may see, so a handler parses,
asks one query, and shapes the answer."""

from collections.abc import Mapping, Set
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Protocol

from domain.values import ScopeRef
from projections.executor import Executor

Lineages = Mapping[ScopeRef, tuple[ScopeRef, ...]]


class Reads(Protocol):
    """A connection to the read models for one query; `operation` names it in the refusal a
    lost database answers with (None: the pool's own error)."""

    def connection(self, operation: str | None = None) -> AbstractAsyncContextManager[Executor]: ...


@dataclass(frozen=True, slots=True)
class Viewer:
    """The scopes whose things the caller may see, and every live scope's lineage."""

    seen: Set[ScopeRef]
    lineages: Lineages
