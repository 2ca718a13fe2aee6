"""Run:ai's 202 body (`202Accepted`, an `HttpResponse`): what a delete, a suspend or a resume
answers once the request is recorded."""

import msgspec


class Accepted(msgspec.Struct, frozen=True, kw_only=True):
    code: int = 202
    message: str = "Request has been accepted."
