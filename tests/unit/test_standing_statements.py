"""The statements a page rides on the request's standing are kept per process, and a caller
shapes their text (page size, sort, filters): what is kept stays bounded however many shapes."""

from infra.postgres import read_marks
from projections.queries import template_reads
from projections.template_pages import Asked
from projections.template_queries import parse_conditions

FOLLOWERS = ("projection:a",)


def test_pages_of_every_shape_keep_a_bounded_number_of_statements() -> None:
    texts: set[str] = set()
    for limit in range(1, 501):
        for sort in ("name", "createdAt"):
            keys = template_reads.keys_riding(None, [], Asked(None, sort, False, 0, limit))
            texts.add(read_marks._named(read_marks._with(keys.sql), FOLLOWERS, FOLLOWERS))
    for n in range(1, 200):
        conditions = parse_conditions(["name==x"] * n)
        keys = template_reads.keys_riding(None, conditions, Asked(None, None, False, 0, 50))
        texts.add(read_marks._named(read_marks._with(keys.sql), FOLLOWERS, FOLLOWERS))
    assert len(texts) > 1000  # so many shapes, each its own text
    assert read_marks._with.cache_info().currsize <= 256
    assert read_marks._named.cache_info().currsize <= 256
