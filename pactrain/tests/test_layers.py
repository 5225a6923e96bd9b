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
