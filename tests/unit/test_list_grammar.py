"""Run:ai's filterBy grammar, read row by row: what the access rule, org unit and workload
lists and their counts select."""

from datetime import UTC, datetime

import pytest

from projections.list_grammar import (
    Condition,
    Grammar,
    InvalidFilterError,
    holds,
    matches,
    searched,
    split_items,
)

GRAMMAR = Grammar(("name", "roleId", "createdAt"), dates=("createdAt",), numbers=("roleId",))
MIDNIGHT = datetime(2026, 1, 1, tzinfo=UTC)


def test_items_come_joined_by_commas_or_repeated() -> None:
    assert split_items("name==a,roleId>=2") == ["name==a", "roleId>=2"]
    assert split_items(["name==a", "roleId>=2,"]) == ["name==a", "roleId>=2"]
    assert split_items(None) == []


def test_each_item_is_a_field_an_operator_and_a_value() -> None:
    assert GRAMMAR.parse(["name=^ddp", "createdAt>=2026-01-01T00:00:00"]) == [
        Condition("name", "=^", "ddp"),
        Condition("createdAt", ">=", MIDNIGHT),  # a time without a zone is UTC
    ]


@pytest.mark.parametrize(
    ("item", "reason"),
    [
        ("colour==red", "is not <field><operator><value>"),
        ("name=red", "is not <field><operator><value>"),
        ("createdAt=@2026", "dates take"),
        ("createdAt>=yesterday", "not an ISO-8601 time"),
        ("roleId>=two", "is a number"),
        ("roleId<=nan", "is a number"),
    ],
)
def test_a_bad_item_is_named_by_its_index(item: str, reason: str) -> None:
    with pytest.raises(InvalidFilterError, match=reason) as refused:
        GRAMMAR.parse(["name==ok", item])
    assert refused.value.index == 1


def test_text_compares_by_code_point_and_a_missing_value_is_empty() -> None:
    assert holds(Condition("name", "<=", "b"), "B")  # "B" sorts before "b"
    assert holds(Condition("name", "==", ""), None)
    assert holds(Condition("name", "!@", "x"), None)
    assert holds(Condition("name", "=$", "-7"), "run-7")


def test_numbers_compare_as_numbers_and_times_as_times() -> None:
    assert holds(Condition("roleId", ">=", "2"), 10)  # as text, "10" < "2"
    assert holds(Condition("roleId", "=@", "1"), 10)  # the text operators read it as text
    assert holds(Condition("createdAt", "<=", MIDNIGHT), MIDNIGHT)
    assert not holds(Condition("createdAt", "<=", MIDNIGHT), None)  # no time: never met
    assert not holds(Condition("name", "==", "true"), False)
    assert matches([Condition("name", "==", "a"), Condition("roleId", "!=", "3")], {"name": "a"})


def test_search_finds_a_text_in_any_case_in_any_value() -> None:
    assert searched("LL", ("viewer", "llm"))
    assert not searched("x", ("viewer", None))
    assert searched(None, ())
