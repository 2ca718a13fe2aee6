"""What a name may be, by what it names: Run:ai's pattern and length where stated, else a display
name's bound, and no character that hides or turns text (docs/decisions/0003-name-rules.md). The
served document states it (infra/http/openapi_document.py)."""

import re
import unicodedata
from collections.abc import Callable
from typing import Final

import msgspec

from domain.errors import DomainError

# Control characters (a line break among them), format characters (the bidi controls, zero-width
# spaces and joiners, the byte-order mark), line and paragraph separators, lone surrogates.
UNSEEN: Final = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})


class NameRule(msgspec.Struct, frozen=True):
    """`pattern` is matched against the whole name; `shape` says it in words."""

    max_length: int
    pattern: str | None = None
    shape: str = ""


# Run:ai states no bound for these (templates, assets, credentials, registries, org units,
# policies, access-rule subjects): a display name's, which a btree index holds in any encoding.
DISPLAY: Final = NameRule(255)
# Run:ai's ServiceAccountCreationRequest pattern; the length, which it leaves open, a DNS label's.
SERVICE_ACCOUNT: Final = NameRule(
    63,
    r"^[a-z][-_a-z0-9]*[a-z0-9]$",
    "lowercase letters, digits, '-' and '_', starting with a letter and ending with a letter or"
    " digit",
)
# Run:ai's DatavolumeCreationFields.
DATA_VOLUME: Final = NameRule(
    63, r"^[a-z][-a-z0-9]{0,62}$", "lowercase letters, digits and '-', starting with a letter"
)
# A DNS-1035 label, short enough that `<job>-worker-<index>` still is one (63 characters).
WORKLOAD: Final = NameRule(
    40,
    r"^[a-z]([-a-z0-9]*[a-z0-9])?$",
    "lowercase letters, digits and '-', starting with a letter and ending with a letter or digit",
)


class InvalidNameError(DomainError):
    slug = "invalid-name"

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field


def fault(name: str, rule: NameRule = DISPLAY) -> str | None:
    """Why `name` breaks `rule`, or None when it keeps it."""
    if not name.strip():
        return "must not be empty"
    if len(name) > rule.max_length:
        return f"must be at most {rule.max_length} characters (it has {len(name)})"
    if rule.pattern is not None and re.fullmatch(rule.pattern, name) is None:
        return f"must be {rule.shape}"
    unseen = next((c for c in name if unicodedata.category(c) in UNSEEN), None)
    if unseen is not None:
        return (
            f"must not hold U+{ord(unseen):04X}: no control, format (bidi, zero-width) or line"
            " separator characters"
        )
    return None


# How a kind of thing refuses a field (its own error: a template's, an asset's, ...).
Refusal = Callable[[str, str], DomainError]


def check(
    name: str, field: str, rule: NameRule = DISPLAY, *, refused: Refusal = InvalidNameError
) -> None:
    """`refused(field, why)` is raised, `field` a JSON pointer into the request, when `name`
    breaks `rule`."""
    reason = fault(name, rule)
    if reason is not None:
        raise refused(field, reason)
