"""``dticn gateway --profile artifact`` as a real process (issue 13): a plain python-ndn
consumer fetches items through the artifact's edge (its GTS placement, no duty cycle,
CCN-lite PIT aggregation, WAIT+32, static FIB, 4-byte items), and push items reach the
reflexive consumer with the artifact's 4 s ``/RNP`` lifetime. ``--profile`` also wins over a
``--scenario`` file (it was ignored there)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dticn.cli import build_app

from .test_gateway_process import SEED, _example, gateway

POLL = str(Path(__file__).parent / "poll_consumer.py")


@pytest.mark.slow
def test_artifact_gateway_serves_plain_and_fresh_consumers(tmp_path: Path) -> None:
    with gateway(tmp_path, "--listen", "tcp://127.0.0.1:0", "--scheme", "rice",
                 "--nodes", "2", "--profile", "artifact") as gw:
        assert gw["registered"] == ["/node1", "/node2"]        # static FIB, no /reg
        proc = subprocess.run(
            [sys.executable, POLL, "--transport", gw["tcp"][0], "--status", "/node1/0",
             "/node2/1,mbf"], capture_output=True, text=True, timeout=120)
    out = proc.stdout.splitlines()
    assert proc.returncode == 0, (out, proc.stderr[-2000:])
    items = {ln.split()[1]: bytes.fromhex(ln.rsplit("content=", 1)[1])
             for ln in out if ln.startswith("DATA ")}
    assert sorted(items) == ["/node1/0", "/node2/1"], out
    assert all(len(c) == 4 for c in items.values()), items     # the artifact's char[4]
    status = json.loads(next(ln for ln in out if ln.startswith("STATUS "))[7:])
    assert status["profile"] == "artifact"
    assert status["scheme_counters"]["registrations"] == 0
    assert status["lora_frames"]["lora:down:interest"] == 2    # one LoRa Interest per item


@pytest.mark.slow
@pytest.mark.parametrize("scheme", ["push", "push-draft"])
def test_artifact_gateway_pushes_with_a_scenario_file(tmp_path: Path, scheme: str) -> None:
    scen = tmp_path / "push.toml"
    scen.write_text(f'scheme = "{scheme}"\nseed = {SEED}\n[[node]]\nprefix = "/node1"\n'
                    "push_at = [110.0, 155.0]\n")
    with gateway(tmp_path, "--listen", "tcp://127.0.0.1:0", "--scenario", str(scen),
                 "--profile", "artifact") as gw:
        rc, out = _example(gw["tcp"][0], "push", "--count", "2")
    assert rc == 0, out
    contents = [bytes.fromhex(m.group(1)) for m in
                (re.search(r"^ITEM \S+ .*content=(\w+)", ln) for ln in out) if m]
    assert len(contents) == 2 and all(len(c) == 4 for c in contents), out
    log = (tmp_path / "gw.log").read_text()
    assert '"profile": "artifact"' in log and '"acked": 2' in log, log[-3000:]


def test_profile_option_wins_over_the_scenario_file(tmp_path: Path) -> None:
    plain = tmp_path / "plain.toml"
    plain.write_text('scheme = "push"\nseed = 2\n[[node]]\nprefix = "/node1"\n'
                     "push_at = [110.0]\n")
    artifact = tmp_path / "artifact.toml"
    artifact.write_text(plain.read_text().replace("seed = 2", 'seed = 2\nprofile = "artifact"'))

    def predicted(*args: str) -> str:
        result = CliRunner().invoke(build_app(), ["gateway", *args, "--predict", "/node1/0"])
        assert result.exit_code == 0, result.output
        return result.output

    from_file = predicted("--scenario", str(artifact))
    assert predicted("--scenario", str(plain), "--profile", "artifact") == from_file
    assert predicted("--scenario", str(plain)) != from_file
    assert predicted("--scenario", str(artifact), "--profile", "model") == predicted(
        "--scenario", str(plain))
