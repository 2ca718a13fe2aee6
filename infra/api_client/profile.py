"""Where `trainplate login` keeps the service's URL and the application's credentials: one
file under $XDG_CONFIG_HOME/trainplate (else ~/.config/trainplate), readable by its owner only.
TRAINPLATE_URL and TRAINPLATE_TOKEN override it."""

import json
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

FILE = "profile.json"


class NotLoggedInError(Exception):
    """No profile, and no TRAINPLATE_URL to say where the service is."""

    def __init__(self) -> None:
        super().__init__(
            "not logged in: run `trainplate login --url URL --app-id ID --app-secret S`"
        )


@dataclass(frozen=True, slots=True)
class Profile:
    url: str
    app_id: str | None = None
    app_secret: str | None = None
    token: str | None = None  # given: used as it is, the credentials left unused


def folder(environ: Mapping[str, str]) -> Path:
    base = environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "trainplate"


def save(profile: Profile, environ: Mapping[str, str]) -> Path:
    """Written owner-only from its first byte: the secret is never readable by others."""
    where = folder(environ)
    where.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = where / FILE
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)
    with os.fdopen(fd, "w") as out:
        json.dump({k: v for k, v in asdict(profile).items() if k != "token"}, out)
    return path


def load(environ: Mapping[str, str]) -> Profile:
    path = folder(environ) / FILE
    saved = json.loads(path.read_text()) if path.exists() else {}
    url = environ.get("TRAINPLATE_URL") or saved.get("url")
    if not url:
        raise NotLoggedInError
    return Profile(
        url=url,
        app_id=saved.get("app_id"),
        app_secret=saved.get("app_secret"),
        token=environ.get("TRAINPLATE_TOKEN") or None,
    )
