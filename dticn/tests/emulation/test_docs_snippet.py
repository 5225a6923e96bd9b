"""The python-ndn snippet in docs/dticn-emulation.md is the example file's code."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parents[3]


def test_doc_snippet_is_in_the_example() -> None:
    doc = (ROOT / "docs" / "dticn-emulation.md").read_text()
    example = (ROOT / "dticn" / "examples" / "wait_hint_consumer.py").read_text()
    blocks = re.findall(r"```python\n(.*?)```", doc, re.S)
    assert blocks, "docs/dticn-emulation.md lost its python-ndn snippet"
    for block in blocks:
        assert block in example, "snippet and dticn/examples/wait_hint_consumer.py differ"
