"""Template documents on disk: YAML files (several documents in one, split by `---`, or whole
folders of them) read for a plan, and an export written one file per template."""

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

SUFFIXES = (".yaml", ".yml")


class FileError(Exception):
    """A file that cannot be read as YAML, named with the reason."""


def read(paths: Sequence[Path]) -> tuple[list[Any], list[str]]:
    """Every document under these paths (a folder: its YAML files, in name order), and where
    each came from: `file`, or `file#N` for the Nth of several in one file."""
    documents: list[Any] = []
    sources: list[str] = []
    for path in paths:
        files = (
            sorted(p for p in path.rglob("*") if p.suffix in SUFFIXES) if path.is_dir() else [path]
        )
        for file in files:
            try:
                found = [d for d in yaml.safe_load_all(file.read_text()) if d is not None]
            except (OSError, yaml.YAMLError) as error:
                raise FileError(f"{file}: {error}") from error
            for i, document in enumerate(found):
                documents.append(document)
                sources.append(str(file) if len(found) == 1 else f"{file}#{i + 1}")
    return documents, sources


def write(folder: Path, exported: Sequence[dict[str, Any]]) -> list[Path]:
    """Each exported document at the path the service suggested, under `folder`."""
    written = []
    for entry in exported:
        path = folder / entry["path"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dump(entry["document"]))
        written.append(path)
    return written


def dump(data: Any) -> str:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
