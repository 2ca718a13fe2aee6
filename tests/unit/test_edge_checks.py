"""The edge's body check, case by case: its byte-level fast path never lets through what the
full walk refuses."""

import pytest

from infra.http.edge import MAX_DEPTH, RefusedInputError, check_body

JSON = "application/json"


@pytest.mark.parametrize(
    ("body", "pointer"),
    [
        (rb'{"a": "x\u0000"}', "/a"),
        (rb'{"a": "\\\u0000"}', "/a"),  # an escaped backslash, then the NUL
        (rb'{"a": "\ud800"}', None),  # a lone surrogate: the decoder refuses it, and says where
        (b'{"n": 9223372036854775808}', "/n"),  # 2**63
        (b'{"n": -9223372036854775809}', "/n"),
        (b'{"k\\u0000": 1}', "/k\x00"),
        (
            b"[" * (MAX_DEPTH + 2) + b"]" * (MAX_DEPTH + 2),
            "/0" * (MAX_DEPTH + 1),
        ),  # the deepest at level 33
    ],
)
def test_what_the_store_cannot_hold_is_refused(body: bytes, pointer: str | None) -> None:
    if pointer is None:
        check_body(body, JSON)  # left to the handler's decoder (a 400 naming the place)
        return
    with pytest.raises(RefusedInputError) as refused:
        check_body(body, JSON)
    assert refused.value.pointer == pointer


@pytest.mark.parametrize(
    "body",
    [
        b'{"n": 9223372036854775807, "m": -9223372036854775808}',
        rb'{"path": "C:\\new\\u", "text": "caf\u00e9"}',
        b'{"f": 1.23456789012345678901234}',
        b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1),  # the deepest at level 32
        b'{"brackets in text": "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}',
    ],
)
def test_what_it_can_hold_passes(body: bytes) -> None:
    check_body(body, JSON)


def test_a_body_that_is_not_json_is_415() -> None:
    with pytest.raises(RefusedInputError) as refused:
        check_body(b"{}", "text/plain")
    assert refused.value.status == 415
    check_body(b"{}", "application/merge-patch+json; charset=utf-8")


def test_the_console_posts_forms_the_api_does_not() -> None:
    form = "application/x-www-form-urlencoded"
    check_body(b"name=caf%C3%A9&%2Fspec%2Fimage=x", form, forms=True)
    with pytest.raises(RefusedInputError) as refused:
        check_body(b"%2Fspec%2Fimage=a%00b", form, forms=True)
    assert refused.value.pointer == "/spec/image"
    with pytest.raises(RefusedInputError):
        check_body(b"name=%FF", form, forms=True)  # not UTF-8
    with pytest.raises(RefusedInputError) as elsewhere:
        check_body(b"name=x", form)  # an API route: JSON only
    assert elsewhere.value.status == 415
