"""The source tree tells the architecture: the checks that keep it readable as it grows.

Import directions and cycles are import-linter's (pyproject.toml); what it cannot see is here.
"""

import ast
import tomllib
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).parents[2]
LAYERS = ("domain", "services", "projections", "infra")
ENTRY_FILES = {"__init__.py", "__main__.py"}


def _modules() -> list[Path]:
    return sorted(
        path.relative_to(ROOT)
        for layer in LAYERS
        for path in (ROOT / layer).rglob("*.py")
        if path.name not in ENTRY_FILES
    )


def test_the_top_of_infra_holds_only_what_every_part_shares() -> None:
    top = sorted(p.name for p in (ROOT / "infra").glob("*.py") if p.name not in ENTRY_FILES)
    assert top == ["bootstrap.py", "errors.py", "serialization.py", "settings.py"]


def test_every_folder_of_infra_says_what_it_holds() -> None:
    for folder in (ROOT / "infra").iterdir():
        if folder.is_dir() and (folder / "__init__.py").exists():
            docstring = ast.get_docstring(ast.parse((folder / "__init__.py").read_text()))
            assert docstring, f"{folder.relative_to(ROOT)}/__init__.py has no docstring"


def test_a_module_name_repeats_across_layers_only_for_one_concept_and_says_so() -> None:
    by_name: dict[str, list[Path]] = defaultdict(list)
    for path in _modules():
        by_name[path.name].append(path)
    for paths in by_name.values():
        if len(paths) < 2:
            continue
        for path in paths:
            docstring = ast.get_docstring(ast.parse((ROOT / path).read_text())) or ""
            named = " ".join(docstring.split())
            missing = [str(other) for other in paths if other != path and str(other) not in named]
            assert not missing, f"{path} shares its name with {missing} but does not say so"


def test_the_console_is_kept_from_every_module_of_the_apis_handlers() -> None:
    """A module that holds a route is a handler module: the contract names each, so the console
    reaches the API's work through its actions only."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    (contract,) = [
        c
        for c in config["tool"]["importlinter"]["contracts"]
        if c["name"] == "The console never imports the API's handlers"
    ]
    routes = ("get", "post", "put", "patch", "delete", "route")
    handlers = set()
    for path in (ROOT / "infra" / "http").glob("*.py"):
        for node in ast.parse(path.read_text()).body:
            decorators = getattr(node, "decorator_list", [])
            called = [d.func for d in decorators if isinstance(d, ast.Call)]
            if any(isinstance(f, ast.Name) and f.id in routes for f in called):
                handlers.add(f"infra.http.{path.stem}")
    assert handlers == set(contract["forbidden_modules"])
