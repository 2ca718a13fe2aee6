"""Commands: what a caller asks the service to do (imperative names)."""

from uuid import UUID

import msgspec

from domain.events import EventMetadata
from domain.values import Grant


class CreateApplication(msgspec.Struct, frozen=True, kw_only=True):
    application_id: UUID
    name: str
    grants: tuple[Grant, ...]
    metadata: EventMetadata


class DeleteApplication(msgspec.Struct, frozen=True, kw_only=True):
    application_id: UUID
    metadata: EventMetadata


class RotateApplicationSecret(msgspec.Struct, frozen=True, kw_only=True):
    application_id: UUID
    metadata: EventMetadata
