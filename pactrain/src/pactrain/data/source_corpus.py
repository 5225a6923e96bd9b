"""A real text corpus that every Python install ships: the standard library's own sources.

Why this one: nothing may be downloaded at run time, and scikit-learn's dataset cards
(43 KB, :mod:`pactrain.data.text_corpus`) are too small for a language model's loss to
mean much. The top-level ``*.py`` files of the interpreter's standard library
(``sysconfig.get_paths()["stdlib"]``: 168 files, 4.70 MB on CPython 3.11.7) are real,
varied text (code, docstrings, comments) in a fixed place on every machine. They are read
in sorted order and concatenated; the last 5% is held out, and the first
:data:`VALIDATION_BYTES` of that tail are the evaluation set (a fixed size, so an
evaluation costs the same on every machine). The corpus depends on the Python version:
results name it (:func:`corpus_id`).
"""

from __future__ import annotations

import functools
import platform
import sysconfig
from pathlib import Path

import torch

VAL_FRACTION = 0.05
#: Bytes of the held-out tail that are evaluated (256 windows of 64 bytes: a loss estimate
#: with a standard error near 0.5%, for a few seconds per evaluation on one core).
VALIDATION_BYTES = 16_385


def source_files() -> list[Path]:
    """The standard library's top-level ``*.py`` files, sorted by name."""
    root = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(root.glob("*.py"))
    if not files:
        raise FileNotFoundError(f"no *.py files in the standard library folder {root}; this "
                                "Python installation ships without its sources")
    return files


def corpus_id() -> str:
    """What the corpus is on this machine (its files depend on the Python version)."""
    files = source_files()
    size = sum(f.stat().st_size for f in files)
    return f"CPython {platform.python_version()} stdlib/*.py: {len(files)} files, {size:,} B"


@functools.lru_cache(maxsize=1)
def split_sources() -> tuple[torch.Tensor, torch.Tensor]:
    """(train, validation) byte ids; validation is the first :data:`VALIDATION_BYTES` of
    the held-out tail."""
    data = b"\n".join(f.read_bytes() for f in source_files())
    ids = torch.frombuffer(bytearray(data), dtype=torch.uint8).long()
    cut = int(len(ids) * (1 - VAL_FRACTION))
    return ids[:cut], ids[cut:cut + VALIDATION_BYTES]
