"""How every client command runs: its output on a console (whole values when piped), its result
as the exit code, and a refusal (the service's, a file's, a value's) as one line on standard
error with exit 1, never a traceback."""

import functools
import os
import sys
from collections.abc import Callable
from typing import Concatenate, Final, ParamSpec

from rich.console import Console

from infra.api_client import profile as profiles
from infra.api_client.profile import NotLoggedInError
from infra.api_client.service import Service, ServiceError
from infra.cli.template_files import FileError

NOTHING: Final = 0
FAILED: Final = 1
CHANGES: Final = 2
WIDE: Final = 200

P = ParamSpec("P")


def client_command(run: Callable[Concatenate[Console, P], int]) -> Callable[P, None]:
    """`run(console, **options)`, exiting with the code it returns."""

    @functools.wraps(run)
    def command(*args: P.args, **kwargs: P.kwargs) -> None:
        # Piped (to a file, a CI log), tables keep whole values rather than Rich's 80 columns.
        width = None if sys.stdout.isatty() else int(os.environ.get("COLUMNS") or WIDE)
        console = Console(highlight=False, soft_wrap=True, width=width)
        try:
            code = run(console, *args, **kwargs)
        except (ServiceError, NotLoggedInError, FileError, OSError, ValueError) as error:
            errors = Console(stderr=True, highlight=False, soft_wrap=True)
            errors.print(f"trainplate: {error}", markup=False)
            code = FAILED
        sys.exit(code)

    return command


def service_command(run: Callable[Concatenate[Service, Console, P], int]) -> Callable[P, None]:
    """`run(service, console, **options)` over the service the profile (or TRAINPLATE_URL and
    TRAINPLATE_TOKEN) names, exiting with the code it returns."""

    @functools.wraps(run)
    def with_service(console: Console, /, *args: P.args, **kwargs: P.kwargs) -> int:
        with Service(profiles.load(os.environ)) as service:
            return run(service, console, *args, **kwargs)

    return client_command(with_service)
