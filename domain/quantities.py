"""Kubernetes resource quantities ("20M", "1.5Gi", "500m", "1e3"), for comparing a limit with
its request. The grammar is Run:ai's (and Kubernetes'): a number, then a suffix."""

import re
from decimal import Decimal, InvalidOperation
from typing import Final

PATTERN: Final = r"^([+]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
_SPLIT: Final = re.compile(PATTERN)

_SUFFIXES: Final = {
    "": Decimal(1),
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "k": Decimal(10) ** 3,
    "M": Decimal(10) ** 6,
    "G": Decimal(10) ** 9,
    "T": Decimal(10) ** 12,
    "P": Decimal(10) ** 15,
    "E": Decimal(10) ** 18,
    "Ki": Decimal(2) ** 10,
    "Mi": Decimal(2) ** 20,
    "Gi": Decimal(2) ** 30,
    "Ti": Decimal(2) ** 40,
    "Pi": Decimal(2) ** 50,
    "Ei": Decimal(2) ** 60,
}


class InvalidQuantityError(ValueError):
    pass


def parse(quantity: str) -> Decimal:
    """The quantity's value in base units; InvalidQuantityError when it is not one."""
    match = _SPLIT.match(quantity)
    if match is None:
        raise InvalidQuantityError(quantity)
    number, suffix = match.groups()
    try:
        value = Decimal(number)
    except InvalidOperation as exc:
        raise InvalidQuantityError(quantity) from exc
    if suffix in _SUFFIXES:
        return value * _SUFFIXES[suffix]
    if suffix[:1] in ("e", "E"):  # decimal exponent: "1e3"
        try:
            return value * Decimal(10) ** int(suffix[1:])
        # An exponent past what a decimal holds ("1e99999999") is no quantity Kubernetes takes.
        except (ValueError, ArithmeticError) as exc:
            raise InvalidQuantityError(quantity) from exc
    raise InvalidQuantityError(quantity)


def is_positive(quantity: str) -> bool:
    """Whether the quantity parses and is above zero (a new PVC's size: Kubernetes refuses a
    claim of no storage)."""
    try:
        return parse(quantity) > 0
    except InvalidQuantityError:
        return False


def is_multiple(value: Decimal, step: Decimal) -> bool:
    """Whether `value` is a whole number of `step`s (beyond what a decimal divides exactly:
    not, as it cannot be shown to be)."""
    try:
        return value % step == 0
    except ArithmeticError:
        return False
