"""The packages import one way: each only from the layers below it (or from itself).

A lower layer importing an upper one is how a sans-IO core ends up needing the simulator,
or the medium needing the MAC's frame format; this test names the import to remove.
"""

from __future__ import annotations

import ast
from pathlib import Path

import dticn

LAYERS: tuple[frozenset[str], ...] = tuple(frozenset(layer.split()) for layer in (
    "clock sim packets",        # time, the event kernel, NDN packets
    "phy",                      # airtime, channels, medium, radios, the radio state table
    "energy",                   # charge per radio state
    "mac",                      # DSME: CSMA/CA, GTS, device, coordinator
    "radio forwarder",          # the radio simulator's engines; the NDN forwarder
    "mgmt",                     # NFD management on the forwarder
    "net links",                # faces onto sockets, onto the MAC, in memory, app endpoints
    "schemes",                  # gateway schemes, protocol names and signalling
    "apps",                     # consumer and node applications
    "lora_edge edge_profiles",  # the LoRa edge builder; the artifact and model profiles
    "experiments",              # the simulated world, metrics, runs
    "validation",               # the radio model beside DSME-LoRa's published numbers
    "emulation",                # the emulated gateway
    "commands cli_options",     # the command line and its shared options
    "cli __init__",
))
ROOT = Path(dticn.__file__).parent


def _layer(package: str) -> int:
    for k, layer in enumerate(LAYERS):
        if package in layer:
            return k
    raise AssertionError(f"package dticn.{package} is in no layer: add it to LAYERS")


def _imports(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = ([node.module] if isinstance(node, ast.ImportFrom) and node.module
                 else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
        out.update(n.split(".")[1] for n in names if n.startswith("dticn."))
    return out


def test_every_import_goes_down() -> None:
    wrong = []
    for path in sorted(ROOT.rglob("*.py")):
        package = path.relative_to(ROOT).parts[0].removesuffix(".py")
        for target in _imports(path):
            if target != package and _layer(target) > _layer(package):
                wrong.append(f"{path.relative_to(ROOT)} imports dticn.{target}")
    assert not wrong, "imports against the layers:\n" + "\n".join(wrong)


def test_no_two_modules_share_a_name() -> None:
    """A module's name says which layer it belongs to: two ``gateway.py`` in different
    packages make every import and every docs table ambiguous. ``commands/`` is exempt:
    its modules are named after the CLI commands they implement."""
    seen: dict[str, list[str]] = {}
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT)
        if path.name != "__init__.py" and rel.parts[0] != "commands":
            seen.setdefault(path.name, []).append(str(rel))
    shared = {name: where for name, where in seen.items() if len(where) > 1}
    assert not shared, f"modules sharing a name: {shared}"
