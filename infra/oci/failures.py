"""How talking to a registry fails. Each names the registry (its API base, which holds no login)
and says what went wrong in words a user can act on; none quotes a login, a token or what the
registry answered."""

from infra.errors import InfraError


class RegistryUnreachableError(InfraError):
    """No answer: the registry's host is unknown, refuses connections or is too slow."""

    slug = "registry-unreachable"

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"the registry at {url} {reason}")
        self.url = url


class RegistryAnswerError(InfraError):
    """An answer that is not the OCI distribution API's: not HTTP, not the JSON asked for, an
    error status, too large, or pointing elsewhere."""

    slug = "registry-bad-answer"

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"the registry at {url} {reason}")
        self.url = url


class RegistryRefusedError(InfraError):
    """The registry (or its token service) would not let the registry's login list this."""

    slug = "registry-refused"

    def __init__(self, url: str, status: int) -> None:
        super().__init__(
            f"the registry at {url} refused the registry's login (HTTP {status}): check its"
            " user and password"
        )
        self.url = url
        self.status = status


class RepositoryNotFoundError(InfraError):
    """The registry has no repository of that name (or shows none to the login)."""

    slug = "repository-not-found"

    def __init__(self, url: str, repository: str) -> None:
        super().__init__(f"the registry at {url} has no repository {repository!r}")
        self.url = url
        self.repository = repository
