"""How a template rule refuses: an error naming the offending field as a JSON pointer into the
request, and the wire (camelCase) name of a spec field."""

from domain.errors import DomainError


class InvalidTemplateError(DomainError):
    slug = "invalid-template"

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field


def camel(name: str) -> str:
    first, *rest = name.split("_")
    return first + "".join(part.title() for part in rest)
