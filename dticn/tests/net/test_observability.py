"""Issue 14, item 4: a running forwarder tells what it drops and why, without letting a
client drive its log volume."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dticn.packets import Interest, LpPacket, name_from_str

from .test_flood import Client

N = name_from_str


@pytest.mark.slow
def test_flood_is_reported_once_and_status_is_available_while_running(
    tmp_path: Path,
) -> None:
    sock = tmp_path / "fw.sock"
    log_path = tmp_path / "fw.log"
    proc = subprocess.Popen(
        [sys.executable, "-m", "dticn.cli", "forwarder", "--listen", f"unix://{sock}",
         "--pit-face-quota", "50", "--warn-interval", "0.5", "--status-interval", "0.5"],
        stdout=subprocess.PIPE, stderr=open(log_path, "w"), text=True,  # noqa: SIM115
    )
    try:
        assert proc.stdout is not None
        while proc.stdout.readline().strip() not in ("READY", ""):
            pass
        silent = Client(str(sock))
        silent.register("/never", 1)
        attacker = Client(str(sock))
        attacker.send(*(Interest(N(f"/never/{k}"), nonce=k).encode() for k in range(200)))
        for _ in range(150):
            assert isinstance(attacker.recv(), LpPacket)
        for _ in range(20):  # connection churn: no log line per connection at INFO
            Client(str(sock)).close()
        out = subprocess.run(
            [sys.executable, "-m", "dticn.cli", "status", "--json",
             "--transport", f"unix://{sock}"],
            capture_output=True, text=True, timeout=30,
        )
        assert out.returncode == 0, out.stderr
        status = json.loads(out.stdout)
        time.sleep(1.2)  # at least two report intervals
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert status["counters"]["drops"]["pit_face_quota"] == 150
    assert status["tables"]["pit"] == 51  # the 50 flooded and the status request itself
    [flooder] = [f for f in status["faces"] if f["pending_interests"] == 50]
    assert flooder["counters"]["in_frames"] == 200
    assert status["limits"]["pit_face_quota"] == 50
    log = log_path.read_text()
    warnings = [ln for ln in log.splitlines() if " WARNING " in ln]
    assert len(warnings) == 1 and "pit_face_quota 150" in warnings[0], log
    assert " INFO dticn.net.report: status " in log
    assert re.search(r"INFO .*(face \d+ (added|removed)|management )", log) is None, log
