"""The layers, left to right: dispatcher → frontend → dialects → passes →
runtime. A module may import its own layer and those to its right, never one
to its left (the runtime never imports the compiler, the passes never look
at Numba IR); the leaves ``abi``, ``array_library``, ``dlpack`` and ``errors`` import no
xpuc module but leaves, and every layer may import them. Checked on every
import statement, at any depth."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "compiler"

LAYERS = ("dispatcher", "frontend", "dialects", "passes", "runtime")
# modules outside the four packages: the user-facing layer, but for the runtime
RUNTIME_MODULES = {"runtime", "cuda_runtime", "runtime_ctypes"}
LEAVES = {"abi", "array_library", "dlpack", "errors"}


def module_name(path: Path) -> str:
    """``xpuc.frontend.usm`` for compiler/frontend/usm.py."""
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(("xpuc", *parts))


def layer_of(module: str) -> str | None:
    """The layer of an xpuc module; None for the leaves."""
    parts = module.split(".")[1:]
    if not parts:
        return "dispatcher"  # the package itself: the public API
    if parts[0] in LEAVES:
        return None
    if parts[0] in ("frontend", "dialects", "passes"):
        return parts[0]
    return "runtime" if parts[0] in RUNTIME_MODULES else "dispatcher"


def imported_modules(path: Path) -> list[tuple[str, int]]:
    """Every xpuc module ``path`` imports, with the line of the import."""
    here = module_name(path)
    package = here if path.name == "__init__.py" else here.rsplit(".", 1)[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            # `from . import runtime` imports a module; `from .usm import X`, a name of one
            found += [(f"{target}.{alias.name}" if is_module(f"{target}.{alias.name}")
                       else target, node.lineno) for alias in node.names]
    return sorted({(name, line) for name, line in found if name.split(".")[0] == "xpuc"},
                  key=lambda found: (found[1], found[0]))


def is_module(name: str) -> bool:
    path = PACKAGE.joinpath(*name.split(".")[1:])
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def violations(path: Path) -> list[str]:
    here = layer_of(module_name(path))
    problems = []
    for target, line in imported_modules(path):
        there = layer_of(target)
        if module_name(path).split(".")[-1] in LEAVES:
            if there is not None:
                problems.append(f"{path.name}:{line}: {target} (a leaf imports only leaves)")
        elif here is not None and there is not None and \
                LAYERS.index(there) < LAYERS.index(here):
            problems.append(f"{path.relative_to(PACKAGE)}:{line}: the {here} layer imports "
                            f"{target} of the {there} layer, to its left")
    return problems


SOURCES = sorted(PACKAGE.rglob("*.py"))


def test_every_module_is_seen():
    names = {module_name(path) for path in SOURCES}
    assert {"xpuc.dispatcher", "xpuc.frontend", "xpuc.dialects", "xpuc.passes",
            "xpuc.runtime", "xpuc.abi"} <= names


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_go_only_to_the_right(path):
    assert violations(path) == []


def test_the_check_catches_an_import_to_the_left(tmp_path, monkeypatch):
    package = tmp_path / "compiler"
    (package / "passes").mkdir(parents=True)
    (package / "passes" / "bad.py").write_text(
        "from ..frontend import parfor_to_mlir\nfrom .. import errors\n")
    (package / "abi.py").write_text("from . import runtime\n")
    monkeypatch.setattr(__import__(__name__), "PACKAGE", package)
    (package / "frontend").mkdir()
    (package / "frontend" / "__init__.py").write_text("")
    (package / "frontend" / "parfor_to_mlir.py").write_text("")
    (package / "errors.py").write_text("")
    assert violations(package / "passes" / "bad.py") == [
        "passes/bad.py:1: the passes layer imports xpuc.frontend.parfor_to_mlir of the "
        "frontend layer, to its left"]
    assert violations(package / "abi.py") == ["abi.py:1: xpuc (a leaf imports only leaves)"]
