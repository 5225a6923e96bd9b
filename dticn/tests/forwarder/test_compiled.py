"""The optional mypyc build (dticn/setup.py, docs/dticn-core.md "Performance").

The module list is checked in every build; the rest runs only where the compiled
modules are the ones imported (``DTICN_COMPILE=1`` install), and checks what a compiled
core must still allow: every listed module compiled (a half-compiled install would mix
native and interpreted classes), interpreted subclasses of Face and ForwarderHooks (links,
schemes and tests define them) driven by the compiled forwarder, and the same bytes out.
"""

from __future__ import annotations

import ast
import importlib
import importlib.machinery
from pathlib import Path

import pytest

from dticn.forwarder.face import Face, RecordingFace
from dticn.forwarder.forwarder import Forwarder
from dticn.forwarder.hooks import ForwarderHooks, UnsolicitedDataVerdict
from dticn.packets import Data, Interest, decode_packet, name_from_str
from dticn.sim.kernel import EventKernel

SETUP = Path(__file__).resolve().parents[2] / "setup.py"
N = name_from_str


def _compiled_paths() -> list[str]:
    """``COMPILED`` of setup.py, read without running setup.py."""
    for node in ast.parse(SETUP.read_text()).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "COMPILED" for t in node.targets
        ):
            return list(ast.literal_eval(node.value))
    raise AssertionError("setup.py has no COMPILED list")


def _module(path: str) -> str:
    return path.removeprefix("src/").removesuffix(".py").replace("/", ".")


def _is_native(module: str) -> bool:
    origin = importlib.import_module(module).__file__ or ""
    return origin.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))


COMPILED = _is_native("dticn.forwarder.forwarder")
needs_compiled = pytest.mark.skipif(
    not COMPILED, reason="pure build (DTICN_COMPILE=1 install compiles the hot modules)")


def test_compiled_list_names_existing_modules() -> None:
    paths = _compiled_paths()
    assert paths and len(set(paths)) == len(paths)
    for path in paths:
        assert (SETUP.parent / path).is_file(), path
        importlib.import_module(_module(path))


@needs_compiled
def test_every_listed_module_is_compiled() -> None:
    assert [p for p in _compiled_paths() if not _is_native(_module(p))] == []


class _KeepingFace(Face):
    """An interpreted face, as links and tests write them."""

    def __init__(self) -> None:
        super().__init__("keeping://")
        self.frames: list[bytes] = []

    def transmit(self, frame: bytes) -> None:
        self.frames.append(frame)


class _PinUnsolicited(ForwarderHooks):
    """An interpreted hook, as schemes write them."""

    def __init__(self) -> None:
        self.seen: list[Data] = []

    def on_unsolicited_data(self, fw: Forwarder, in_face: Face, data: Data) -> str:
        self.seen.append(data)
        return UnsolicitedDataVerdict.CACHE_PINNED


@needs_compiled
def test_interpreted_faces_and_hooks_run_under_the_compiled_forwarder() -> None:
    hooks = _PinUnsolicited()
    fw = Forwarder(EventKernel(), hooks=hooks)
    consumer, producer = _KeepingFace(), RecordingFace()
    fw.add_face(consumer)
    fw.add_face(producer)
    fw.add_route(N("/a"), producer.face_id)
    interest = Interest(N("/a/1"), nonce=7, lifetime_ms=1000).encode()
    consumer.deliver(interest)
    assert producer.take() == [interest]
    data = Data(N("/a/1"), b"x").encode()
    producer.deliver(data)
    assert consumer.frames == [data]
    producer.deliver(Data(N("/a/pushed"), b"y").encode())
    assert [d.name for d in hooks.seen] == [N("/a/pushed")]
    consumer.deliver(Interest(N("/a/pushed"), nonce=8).encode())
    reply = decode_packet(consumer.frames[-1])
    assert isinstance(reply, Data) and reply.content == b"y"
