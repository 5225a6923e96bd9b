"""Optional compiled build of the forwarder's hot path (docs/dticn-core.md "Performance").

Metadata lives in pyproject.toml; this file only adds C extensions, and only when asked:

* ``pip install ./dticn`` or ``pip install -e ./dticn``: pure Python, as always.
* ``DTICN_COMPILE=1 pip install --no-build-isolation ./dticn`` (mypy and setuptools
  installed in that environment first): the modules in :data:`COMPILED` are compiled
  with mypyc (shipped in the ``mypy`` distribution). Use a non-editable install: an
  editable one would drop the ``.so`` files into ``src/``, where every pure run of the
  same checkout would pick them up.

Why these modules: the cProfile of ``benchmarks/bench_forwarder.py`` (issue 14) puts the
exchange's CPU time in packet decoding, the pipelines, the PIT/CS/FIB, faces and their
taps and the clock; everything else runs once per face or per command.
"""

from __future__ import annotations

import os

from setuptools import setup

COMPILED = [
    "src/dticn/packets/tlv.py",
    "src/dticn/packets/name.py",
    "src/dticn/packets/ndn.py",
    "src/dticn/packets/ndn_types.py",
    "src/dticn/packets/matching.py",
    "src/dticn/packets/lp.py",
    "src/dticn/packets/decode.py",
    "src/dticn/forwarder/settings.py",
    "src/dticn/forwarder/counters.py",
    "src/dticn/forwarder/cs.py",
    "src/dticn/forwarder/dead_nonce.py",
    "src/dticn/forwarder/errors.py",
    "src/dticn/forwarder/face.py",
    "src/dticn/forwarder/fib.py",
    "src/dticn/forwarder/forwarder.py",
    "src/dticn/forwarder/hooks.py",
    "src/dticn/forwarder/name_table.py",
    "src/dticn/forwarder/pit.py",
    "src/dticn/forwarder/retx.py",
    "src/dticn/forwarder/strategy.py",
    "src/dticn/net/asyncio_clock.py",
]
"""Paths (relative to this file) compiled when ``DTICN_COMPILE=1``. Not ``net/stream.py``:
its faces would become native classes, which take no weak references (mypyc gives them
no ``__weakref__``), and the emulated edge keeps faces in a WeakSet; compiled, it mostly
called the forwarder anyway."""


def _ext_modules() -> list[object]:
    if os.environ.get("DTICN_COMPILE", "") != "1":
        return []
    try:
        from mypyc.build import mypycify
    except ImportError as e:
        raise SystemExit(
            "DTICN_COMPILE=1 needs mypy (it ships mypyc) in the build environment: "
            "pip install mypy setuptools, then pip install --no-build-isolation ./dticn"
        ) from e
    here = os.path.dirname(os.path.abspath(__file__))
    os.chdir(here)  # mypycify takes paths relative to the project
    return list(mypycify(
        ["--ignore-missing-imports", "--follow-imports=silent",
         "--cache-dir=build/mypy-cache", *COMPILED],
        opt_level="3",
    ))


setup(ext_modules=_ext_modules())
