"""The training core never imports the bench, the command line or the root-only namespace
builder (issue 22): a user who attaches PacTrain to their own loop, or a worker inside a
namespace, loads none of them, and the core runs without root."""

from __future__ import annotations

import ast
from pathlib import Path

import pactrain

ROOT = Path(pactrain.__file__).parent
OUTER = {"bench", "commands", "cli", "plots"}
"""Top-level packages and modules that may import everything (the bench with its
namespace builder, ``bench/netns.py``; the command line; the bench's figures)."""


def _imports(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = ([node.module] if isinstance(node, ast.ImportFrom) and node.module
                 else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
        for name in names:
            if name == "pactrain" and isinstance(node, ast.ImportFrom):
                out.update(a.name for a in node.names)      # from pactrain import bench
            elif name.startswith("pactrain."):
                out.add(name.split(".")[1])
    return out


def test_the_core_imports_no_bench_cli_or_namespace_code() -> None:
    wrong = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT)
        top = rel.parts[0].removesuffix(".py")
        if top in OUTER:
            continue
        wrong += [f"{rel} imports pactrain.{t}" for t in sorted(_imports(path) & OUTER)]
    assert not wrong, "the core imports outer layers:\n" + "\n".join(wrong)


def test_the_namespace_builder_lives_in_the_bench() -> None:
    assert not (ROOT / "netns.py").exists()
    assert (ROOT / "bench" / "netns.py").exists()


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def _imported_modules(path: Path, known: set[str]) -> set[str]:
    """The pactrain modules ``path`` imports, at any level (``TYPE_CHECKING`` blocks too:
    a cycle there still ties two modules' designs together)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:  # `from pactrain.x import y`: module y, or x's name y
                full = f"{node.module}.{alias.name}"
                out.add(full if full in known else node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return {m for m in out if m in known}


def test_no_import_cycle_between_modules() -> None:
    """Issue 49: `compaction` and `ahead_maxima` imported each other. A module may import
    its own package (a package's ``__init__`` re-exporting its modules is not a cycle)."""
    paths = {_module_name(p): p for p in ROOT.rglob("*.py")}
    known = set(paths)
    graph = {name: {m for m in _imported_modules(path, known)
                    if not name.startswith(m + ".") and not m.startswith(name + ".")}
             for name, path in paths.items()}
    cycles, state = [], {}

    def visit(name: str, trail: list[str]) -> None:
        state[name] = "open"
        for target in sorted(graph[name]):
            if state.get(target) == "open":
                cycles.append(" -> ".join([*trail[trail.index(target):], target]))
            elif target not in state:
                visit(target, [*trail, target])
        state[name] = "done"

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert not cycles, "import cycles:\n" + "\n".join(cycles)
