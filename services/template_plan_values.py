"""What templates as code works with: the documents declared, each template's plan, the plan of
them all with every stream it read, and what its apply wrote."""

from typing import Literal, NamedTuple
from uuid import UUID

import msgspec

from domain.combined import FieldChange, Runnable
from domain.events import EventMetadata
from domain.policy_rules import ComplianceIssue
from domain.template_documents import NamedScope, TemplateDocument
from domain.templates import Template
from domain.values import ScopeRef
from services.ports.event_store import Append

Action = Literal["create", "update", "unchanged", "delete"]
Role = Literal["viewer", "editor"]  # a plan needs the first in each scope, its apply the second


class Declaration(msgspec.Struct, frozen=True):
    """One document, with its place among those sent and the file it came from, if known."""

    index: int
    source: str | None
    document: TemplateDocument


class Declared(msgspec.Struct, frozen=True, kw_only=True):
    """What is to be planned. `scopes`: where a prune may delete (None: the documents')."""

    documents: tuple[Declaration, ...]
    metadata: EventMetadata
    prune: bool = False
    scopes: tuple[NamedScope, ...] | None = None


class ResolvedAsset(msgspec.Struct, frozen=True, kw_only=True):
    field: str  # where the document names it
    name: str
    kind: str
    asset_id: UUID
    scope: ScopeRef
    version: int
    link: bool | None  # None: a data source, always loaded


class Read(msgspec.Struct, frozen=True, kw_only=True):
    """A stream the plan was decided on, at the version it read."""

    stream_id: UUID
    kind: Literal["template", "asset"]
    name: str
    version: int


class Planned(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    scope: ScopeRef
    scope_label: str
    action: Action
    document: int | None  # its place among the documents; None for a deletion
    source: str | None
    template_id: UUID | None  # None: created on apply
    version: int  # the template's version read (0: none yet)
    changes: tuple[FieldChange, ...] = ()
    runnable: Runnable | None = None
    compliance: tuple[ComplianceIssue, ...] = ()
    assets: tuple[ResolvedAsset, ...] = ()


class Plan(msgspec.Struct, frozen=True, kw_only=True):
    templates: tuple[Planned, ...]
    reads: tuple[Read, ...]

    @property
    def versions(self) -> dict[UUID, int]:
        return {read.stream_id: read.version for read in self.reads}

    @property
    def changed(self) -> bool:
        return any(t.action != "unchanged" for t in self.templates)


class Applied(msgspec.Struct, frozen=True, kw_only=True):
    plan: Plan
    written: dict[str, int]  # each template written, by name and scope, with its new version


class Decided(NamedTuple):
    """One template's plan, the write applying it makes (None: nothing to write), and the
    streams it was decided on."""

    planned: Planned
    write: Append | None
    reads: list[Read]


def template_read(template: Template, label: str) -> Read:
    return Read(
        stream_id=template.id,
        kind="template",
        name=f"{label}/{template.meta.name}",
        version=template.version,
    )
