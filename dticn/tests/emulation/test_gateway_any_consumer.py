"""RICE works for any NDN consumer (issue 13, item 2): a real ``dticn gateway`` process, and
plain python-ndn consumers (``poll_consumer.py``) that know nothing of wait hints and only
poll, with every combination of flags. Each item is delivered, and each costs exactly one
LoRa Interest whatever the consumer does (the gateway's own request is never satisfied by
the hint it gave, hints are never cached, repeated polls get hints, not LoRa Interests).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .test_gateway_process import gateway

POLL = str(Path(__file__).parent / "poll_consumer.py")

CONSUMERS = {
    "plain": "",
    "must-be-fresh": ",mbf",
    "can-be-prefix": ",cbp",
    "both": ",mbf,cbp",
    "fast-polling": ",period=0.02,lifetime=100",
    "long-lifetime": ",period=0.5,lifetime=60000",
}


@pytest.mark.slow
@pytest.mark.parametrize("scheme", ["rice", "rice-schedule"])
def test_every_consumer_gets_its_item_for_one_lora_interest(tmp_path: Path,
                                                             scheme: str) -> None:
    specs = [f"/node{1 + k % 2}/{k}{flags}" for k, flags in enumerate(CONSUMERS.values())]
    with gateway(tmp_path, "--listen", "tcp://127.0.0.1:0", "--scheme", scheme,
                 "--nodes", "2") as gw:
        proc = subprocess.run(
            [sys.executable, POLL, "--transport", gw["tcp"][0], "--status", *specs],
            capture_output=True, text=True, timeout=120)
    out = proc.stdout.splitlines()
    assert proc.returncode == 0, (out, proc.stderr[-2000:])
    delivered = {ln.split()[1]: ln for ln in out if ln.startswith("DATA ")}
    for k, kind in enumerate(CONSUMERS):
        name = f"/node{1 + k % 2}/{k}"
        assert name in delivered, (kind, out)
        content = bytes.fromhex(delivered[name].rsplit("content=", 1)[1])
        assert str(k).encode() in content, (kind, delivered[name])      # the node's item
    status = json.loads(next(ln for ln in out if ln.startswith("STATUS "))[7:])
    lora = status["lora_frames"]
    assert lora["lora:down:interest"] == len(CONSUMERS), json.dumps(status)  # one per item
    assert status["scheme_counters"]["lora_requests"] == len(CONSUMERS)
    assert status["scheme_counters"]["signals_for_own_request"] == 0
    assert "unsolicited_data" not in status["forwarder"].get("drops", {}), status["forwarder"]
