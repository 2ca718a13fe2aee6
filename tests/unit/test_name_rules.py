"""The rule every name is held to (domain/name_rules.py): Run:ai's pattern and length where it
states them, a display name's bound elsewhere, and no character that cannot be seen or turns
text."""

import pytest

from domain.name_rules import (
    DATA_VOLUME,
    DISPLAY,
    SERVICE_ACCOUNT,
    WORKLOAD,
    InvalidNameError,
    NameRule,
    check,
    fault,
)

BIDI = [chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C)]
ZERO_WIDTH = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"]
BREAKS = ["\n", "\r", "\t", "\x00", "\x7f", "\x85", "\u2028", "\u2029", "\ud800"]


@pytest.mark.parametrize("name", ["ddp", "My template (v2)", "modèle", "模型", "a" * 255])
def test_a_display_name_is_any_text_up_to_255_characters(name: str) -> None:
    assert fault(name) is None


@pytest.mark.parametrize("name", ["", "   ", "a" * 256, "\u4e00" * 3000])
def test_a_display_name_is_not_blank_nor_longer_than_255(name: str) -> None:
    assert fault(name) is not None


@pytest.mark.parametrize("unseen", BIDI + ZERO_WIDTH + BREAKS)
def test_no_name_holds_a_control_format_or_separator_character(unseen: str) -> None:
    for rule in (DISPLAY, SERVICE_ACCOUNT, DATA_VOLUME, WORKLOAD):
        assert fault(f"ab{unseen}cd", rule) is not None
    assert f"U+{ord(unseen):04X}" in str(fault(f"ab{unseen}cd"))


@pytest.mark.parametrize(
    ("rule", "kept", "broken"),
    [
        (SERVICE_ACCOUNT, ["ci-bot", "ci_bot2", "a" * 63], ["CI", "1bot", "bot-", "a" * 64]),
        (DATA_VOLUME, ["ckpt", "ckpt-2", "c" * 63], ["Ckpt", "2ckpt", "c_p", "c" * 64]),
        (WORKLOAD, ["run", "run-2", "r" * 40], ["Run", "run-", "r_n", "r" * 41]),
    ],
)
def test_a_patterned_name_keeps_run_ai_s_pattern_whole(
    rule: NameRule, kept: list[str], broken: list[str]
) -> None:
    """Matched whole: `$` alone let a name end in a line break."""
    assert [name for name in kept if fault(name, rule) is not None] == []
    assert [name for name in [*broken, f"{kept[0]}\n"] if fault(name, rule) is None] == []


def test_a_refusal_names_the_field() -> None:
    with pytest.raises(InvalidNameError) as refused:
        check("a" * 256, "/meta/name")
    assert refused.value.field == "/meta/name"
    assert "at most 255" in str(refused.value)
    check("ok", "/meta/name")
