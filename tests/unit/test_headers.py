"""A header read off the ASGI scope: the first of that name, whatever the case it was sent in,
decoded as ASGI's latin-1; none when the request has none."""

from infra.http.headers import header


def test_the_first_header_of_a_name_whatever_its_case() -> None:
    raw = [(b"host", b"x"), (b"Authorization", b"Bearer a\xe9"), (b"authorization", b"Bearer b")]
    assert header(raw, b"authorization") == "Bearer a\u00e9"
    assert header(raw, b"host") == "x"
    assert header(raw, b"x-trainplate-min-position") is None
    assert header([], b"host") is None
