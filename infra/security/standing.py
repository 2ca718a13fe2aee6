"""A request's standing: what one query tells authentication about its caller (the epochs of
access and of the org tree, and whether the caller's own writes are read). Asked by
infra/postgres/read_marks.py, taken by infra/http/auth.py."""

import msgspec


class Standing(msgspec.Struct, frozen=True, kw_only=True):
    """What one query tells a request about its caller."""

    access_epoch: int | None  # of applications' and users' streams
    org_epoch: int | None  # of the org tree's read model
    policy_epoch: int | None = None  # of the policies' read model; a read's standing only
    ready: bool  # the caller's own writes are read (always, when not asked)
    # A write's, taken as the process last found it, not asked (infra/postgres/writer_standing.py)
    assumed: bool = False


class Along(msgspec.Struct, frozen=True):
    """A statement the one that settles a request reads too, in its snapshot: `sql` takes `args`
    from $2 on; `many`: every row it finds, in its order (else the first)."""

    sql: str
    args: tuple[object, ...]
    many: bool = False
