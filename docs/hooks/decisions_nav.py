"""Puts every decision record (docs/decisions/NNNN-*.md) in the site's nav, in order, so a new
record needs no edit of mkdocs.yml."""

from pathlib import Path
from typing import Any


def on_config(config: Any) -> Any:
    records = sorted(Path(config["docs_dir"], "decisions").glob("[0-9]*.md"))
    for item in config["nav"]:
        if isinstance(item, dict) and "Decisions" in item:
            item["Decisions"] = [f"decisions/{record.name}" for record in records]
    return config
