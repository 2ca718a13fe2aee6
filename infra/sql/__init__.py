"""Named SQL statements, kept as files so they read (and review) as SQL."""

from functools import cache
from importlib import resources


@cache
def statement(name: str) -> str:
    return resources.files("infra.sql").joinpath(f"{name}.sql").read_text()
