"""What the asset pages (environments, compute resources, data sources) share: the state of a
render, the sent form's values, the scope named for people, a refusal put next to the field its
pointer names, and an impact preview's templates with their fields by the guide's names."""

from collections.abc import Awaitable, Callable, Collection
from typing import Any
from uuid import UUID

import msgspec
from litestar.response import Redirect, Template

from domain.errors import TrainplateError
from domain.values import AssetKind
from infra.console.environment_form import digest
from infra.console.form_document import decode_pointer
from infra.console.labels import label_of
from infra.console.scopes import choice_value
from infra.console.template_detail import shown
from infra.console.template_form import said
from infra.http.adapters import Adapters
from infra.http.asset_actions import delete_from, one_now, update_from
from infra.http.callers import Caller
from infra.http.impact_actions import ImpactReport, impact_of
from infra.http.numerals import natural
from infra.http.problems import status_for
from projections.asset_catalogue import AssetRow
from services.errors import PreconditionFailedError


class Shown(msgspec.Struct, kw_only=True):
    """Everything a render of an asset's form needs."""

    values: dict[str, Any]  # a multiple choice's as a list
    errors: dict[str, str] = msgspec.field(default_factory=dict)
    general_error: str | None = None
    impact: list[dict[str, Any]] | None = None  # the preview, once asked for
    previewed: str = ""  # the digest of the body previewed
    note: str = ""
    opened_at: int | None = None  # the version the form was opened at (None: the asset's now)


def opened(values: dict[str, Any], row: AssetRow) -> int:
    """The version of the asset the form was opened at, as it sends it back (taken out of
    `values`); the asset's own when it sends none. A save is made on that version, so a change
    someone made meanwhile is refused rather than overwritten."""
    sent = values.pop("version", "")
    number = natural(sent) if isinstance(sent, str) else None
    return row.version if number is None else number


async def form_values(request: Caller, multi: Collection[str] = ()) -> dict[str, Any]:
    """The sent form's values; those of the fields `multi` names as lists of every choice."""
    form = await request.form()
    return {
        str(k): [str(v) for v in form.getall(k)] if k in multi else str(form.get(k))
        for k in form
        if k != "_csrf_token"
    }


def scope_name(row: AssetRow, scopes: dict[str, str]) -> str:
    ref = row.meta.scope_ref
    return scopes.get(choice_value(ref.kind, ref.id), ref.kind)


def refusal(shown: Shown, exc: Exception, field_at: Callable[[str], str | None]) -> int:
    """Put the refusal next to its field (else above them all); its status. A 404 (the asset
    or its scope out of sight) is the caller's page, not a field's: raised again."""
    if isinstance(exc, msgspec.ValidationError):
        pointer, message, status = decode_pointer(exc), str(exc), 400
    elif isinstance(exc, PreconditionFailedError):
        pointer, status = "", status_for(exc)
        message = (
            f"It was changed since this page was opened (version {exc.expected}, now"
            f" {exc.actual}): reload the page to edit it as it now is. Nothing was saved."
        )
    elif isinstance(exc, TrainplateError) and status_for(exc) != 404:
        pointer, message, status = str(exc.facts.get("field") or ""), said(exc), status_for(exc)
    else:
        raise exc
    at = field_at(pointer)
    if at is None:
        shown.general_error = f"{pointer}: {message}" if pointer else message
    else:
        shown.errors[at] = message
    return status


def _readable(value: Any) -> Any:
    """A value as a person reads it; a list of items (extended resources) as its JSON."""
    if value is None:
        return None
    if isinstance(value, dict) or (isinstance(value, list | tuple) and value and
                                   isinstance(value[0], dict)):  # fmt: skip
        return msgspec.json.encode(value).decode()
    return shown(value)


def impact_rows(report: ImpactReport) -> list[dict[str, Any]]:
    """Each template that would change, with its fields by the guide's names and its values
    as a person reads them (4, not 4.0)."""

    def named(pointer: str) -> str:
        master = pointer.startswith("/combinedMasterSpec")
        field = pointer.removeprefix("/combinedMasterSpec").removeprefix("/combinedSpec")
        label = label_of(field) if field.startswith("/") else pointer
        return f"{label} (master)" if master else label

    return [
        {
            "id": t.id,
            "name": t.name,
            "changes": [
                {
                    "field": named(c.field),
                    "pointer": c.field,
                    "before": _readable(c.before),
                    "after": _readable(c.after),
                }
                for c in t.changes
            ],
        }
        for t in report.templates
    ]


async def previewed_or_saved(
    request: Caller,
    adapters: Adapters,
    kind: str,
    asset_id: UUID,
    shown: Shown,
    *,
    action: str,
    previewed: str,
    body: Any,
    meta: Any,
    spec: Any,
    base: str,
    version: int,
) -> Redirect | None:
    """An edit's update saved on the asset at `version` (as the form was opened) when the page's
    preview was of this very body (its digest sent back), answering the asset's page; else its
    impact preview put in `shown` (None). A refusal of either is raised, for the page's field."""
    if action == "save" and previewed == digest(body):
        await update_from(
            request,
            asset_id,
            meta,
            spec,
            adapters.streams,
            adapters.names,
            expected_version=version,
        )
        return Redirect(f"{base}/{asset_id}?saved=1", status_code=303)
    report = await impact_of(
        request, kind, asset_id, meta, spec, adapters.streams, adapters.reads, adapters.names
    )
    shown.impact, shown.previewed = impact_rows(report), digest(body)
    if action == "save":
        shown.note = "The settings changed since their preview: review this one, then save."
    return None


async def deleted_or_refused(
    request: Caller,
    adapters: Adapters,
    kind: AssetKind,
    asset_id: UUID,
    *,
    listed: str,
    refused: Callable[[AssetRow, str, int], Awaitable[Template]],
) -> Template | Redirect:
    """Delete the asset and answer its list; a refusal (a template still uses it) is shown on
    the asset's page by `refused` (the row, why, the status). A 404 is raised: out of sight."""
    row = await one_now(request, kind, asset_id, adapters.streams)
    try:
        await delete_from(request, kind, asset_id, adapters.streams)
    except TrainplateError as exc:
        if status_for(exc) == 404:
            raise
        return await refused(row, said(exc), status_for(exc))
    return Redirect(listed, status_code=303)
