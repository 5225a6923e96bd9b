"""Issue 14, item 6 (LoRa side): the simulated LoRa frames as IEEE 802.15.4 pcap traces, at
their simulated times, from ``dticn radio --pcap``, World runs (``dticn reproduce --pcap``)
and the emulated gateway; read back by our reader and, where installed, by tshark."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from dticn.experiments.params import Experiment
from dticn.experiments.world import World
from dticn.links.observer import classify
from dticn.lora_edge import LORA_LINK
from dticn.mac.ieee802154 import DecodedFrame, FrameType, decode_frame
from dticn.net.lora_pcap import LINKTYPE_IEEE802_15_4_NOFCS, lora_path
from dticn.net.pcap import FORWARDER_IP, LINKTYPE_ETHERNET, face_ip, read_pcap, read_records
from dticn.radio.topology import GATEWAY

needs_tshark = pytest.mark.skipif(shutil.which("tshark") is None,
                                  reason="tshark not installed (apt-get install tshark)")
# Payload heuristics that would claim NDN bytes as another protocol (tshark -G
# heuristic-decodes, wpan): off, so the payload shows as data.data.
TSHARK_PLAIN_PAYLOAD = [arg for proto in ("lwm", "6lowpan", "zbee_nwk", "zbee_nwk_gp")
                        for arg in ("--disable-protocol", proto)]
TSHARK_FIELDS = ("frame.time_epoch", "wpan.frame_type", "wpan.seq_no", "wpan.src16",
                 "wpan.dst16", "wpan.ack_request", "data.data")


def _lora_frames(path: Path) -> list[tuple[float, DecodedFrame]]:
    linktype, records = read_records(str(path))
    assert linktype == LINKTYPE_IEEE802_15_4_NOFCS
    return [(t, decode_frame(packet)) for t, packet in records]


def _tshark(path: Path) -> list[tuple[float, int, int, int | None, int | None, bool, bytes]]:
    """tshark's reading of a LoRa trace: time, type, seq, src, dst, AR, payload."""
    args = ["tshark", "-r", str(path), *TSHARK_PLAIN_PAYLOAD, "-T", "fields",
            "-E", "separator=;"]
    for field in TSHARK_FIELDS:
        args += ["-e", field]
    out = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    rows = []
    for line in out.stdout.splitlines():
        t, ftype, seq, src, dst, ar, data = line.split(";")
        rows.append((float(t), int(ftype, 16), int(seq), int(src, 16) if src else None,
                     int(dst, 16) if dst else None, ar in ("1", "True"),
                     bytes.fromhex(data.replace(":", ""))))
    return rows


def _ours(frames: list[tuple[float, DecodedFrame]]
          ) -> list[tuple[float, int, int, int | None, int | None, bool, bytes]]:
    """Our reader's view in tshark's columns (tshark has no src for an ACK, no payload for
    beacons and commands: those are dissected fields, not data)."""
    return [(t, int(f.frame_type), f.seq, f.src, f.dst, f.ack_request,
             f.payload if f.frame_type is FrameType.DATA else b"") for t, f in frames]


def _acks_answer_data(frames: list[tuple[float, DecodedFrame]]) -> None:
    """Every ACK follows a data or command frame that asked for one, same sequence number."""
    last = None
    for _t, f in frames:
        if f.frame_type is FrameType.ACK:
            assert last is not None and last.ack_request and last.seq == f.seq, (last, f)
        elif f.frame_type is not FrameType.BEACON:
            last = f


# -- a World run (what dticn reproduce --pcap writes per run) -------------------------------
@pytest.fixture(scope="module")
def world_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[World, Path]:
    stem = tmp_path_factory.mktemp("world") / "v3-cr-s1"
    world = World(Experiment(config="v3-cr", seed=1, duration_s=600), pcap=str(stem))
    world.run()
    world.close_traces()
    return world, stem


def test_world_lora_trace_holds_every_frame_at_its_simulated_time(
        world_run: tuple[World, Path]) -> None:
    world, stem = world_run
    frames = _lora_frames(Path(f"{stem}-lora.pcap"))
    times = [t for t, _f in frames]
    assert times == sorted(times) and times[0] >= 0.0 and times[-1] < world.horizon_s
    kinds = Counter(f.frame_type for _t, f in frames)
    # one record per transmission: the gateway's beacons, one every beacon interval from 0
    beacons = [t for t, f in frames if f.frame_type is FrameType.BEACON]
    interval = world.radio.ctx.mac.timing.beacon_interval_s
    assert len(beacons) == world.radio.gateway.beacons_sent
    assert beacons == pytest.approx([k * interval for k in range(len(beacons))], abs=1e-6)
    data = [f for _t, f in frames if f.frame_type is FrameType.DATA]
    assert len(data) == world.mac.frames                  # every attempt, retries included
    assert all(f.ack_request for f in data)               # all unicast, node <-> gateway
    assert kinds[FrameType.ACK] > 0
    _acks_answer_data(frames)
    # the NDN payloads are what the LoRa faces handed the MAC (the packet counter), once
    # per frame however often the MAC retried it
    sent = {(f.src, f.seq, f.payload) for f in data}
    seen = Counter(("down" if src == GATEWAY else "up", classify(payload))
                   for src, _seq, payload in sent)
    assert seen == Counter({(d, k): n for (link, d, k), n in world.counter.counts.items()
                            if link == LORA_LINK})
    for direction in ("up", "down"):
        assert sum(len(p) for src, _s, p in sent
                   if (src == GATEWAY) == (direction == "down")) == world.counter.bytes[
            (LORA_LINK, direction)]


def test_world_ndn_trace_is_the_gateways_faces_in_simulated_time(
        world_run: tuple[World, Path]) -> None:
    world, stem = world_run
    assert read_records(f"{stem}-ndn.pcap")[0] == LINKTYPE_ETHERNET
    records = read_pcap(f"{stem}-ndn.pcap")
    times = [t for t, *_ in records]
    assert times == sorted(times) and times[-1] < world.horizon_s
    lora_ips = {face_ip(face.face_id) for face in world.gateway_faces.values()}
    to_lora = [frame for _t, src, dst, frame in records
               if src == FORWARDER_IP and dst in lora_ips]
    dropped = sum(face.duplicates_dropped for face in world.gateway_faces.values())
    assert len(to_lora) == world.counter.total(LORA_LINK, "down") + dropped
    # what came up the LoRa link reached the gateway's forwarder: the same bytes
    up = {frame for _t, src, dst, frame in records if src in lora_ips and dst == FORWARDER_IP}
    lora_up = {f.payload for _t, f in _lora_frames(Path(f"{stem}-lora.pcap"))
               if f.frame_type is FrameType.DATA and f.src != GATEWAY}
    assert up and up <= lora_up


@needs_tshark
def test_tshark_reads_the_world_lora_trace(world_run: tuple[World, Path]) -> None:
    _world, stem = world_run
    path = Path(f"{stem}-lora.pcap")
    theirs = _tshark(path)
    ours = _ours(_lora_frames(path))
    assert [r[1:] for r in theirs] == [r[1:] for r in ours]
    assert [r[0] for r in theirs] == pytest.approx([r[0] for r in ours], abs=1e-6)
    assert {r[1] for r in theirs} == {int(FrameType.BEACON), int(FrameType.DATA),
                                      int(FrameType.ACK)}


# -- dticn radio --pcap -----------------------------------------------------------------
@pytest.fixture(scope="module")
def radio_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path]:
    out = tmp_path_factory.mktemp("radio")
    trace, result = out / "radio.pcap", out / "radio.json"
    proc = subprocess.run(
        [sys.executable, "-m", "dticn.cli", "radio", "--nodes", "3", "--duration", "10m",
         "--seed", "2", "--pcap", str(trace), "--json", str(result), "--png",
         str(out / "radio.png")], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert f"wrote {trace}" in proc.stderr.replace("\n", "")
    return json.loads(result.read_text()), trace


def _radio_checks(result: dict, rows: list[tuple[float, int, int, int | None, int | None,
                                                  bool, bytes]]) -> None:
    assert result["scenario"]["engine"] == "events"
    by_type = Counter(r[1] for r in rows)
    assert by_type[int(FrameType.BEACON)] == result["gateway"]["beacons"]
    assert by_type[int(FrameType.ACK)] == result["gateway"]["acks"]
    data = [r for r in rows if r[1] == int(FrameType.DATA)]
    nodes = {n["node"]: n for n in result["nodes"]}
    assert Counter(r[3] for r in data) == Counter(
        {i: n["tx_frames"] for i, n in nodes.items() if n["tx_frames"]})
    payload = result["scenario"]["payload_bytes"]
    for _t, _ft, _seq, src, dst, ar, body in data:
        assert dst == GATEWAY and ar and len(body) == payload
        # the radio engine's item: its index in 4 bytes, then zeros
        assert int.from_bytes(body[:4], "big") < nodes[src]["generated"]
        assert body[4:] == bytes(payload - 4)
    assert [r[0] for r in rows] == sorted(r[0] for r in rows)
    assert rows[-1][0] < result["scenario"]["duration_s"]


def test_radio_pcap_read_back(radio_run: tuple[dict, Path]) -> None:
    result, trace = radio_run
    frames = _lora_frames(trace)
    _acks_answer_data(frames)
    _radio_checks(result, _ours(frames))


@needs_tshark
def test_tshark_reads_the_radio_trace(radio_run: tuple[dict, Path]) -> None:
    result, trace = radio_run
    rows = _tshark(trace)
    assert {r[1] for r in rows} == {int(FrameType.BEACON), int(FrameType.DATA),
                                    int(FrameType.ACK)}
    _radio_checks(result, rows)


def test_radio_pcap_refuses_the_batched_engine_in_one_line(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "dticn.cli", "radio", "--nodes", "2", "--duration", "1h",
         "--engine", "batch", "--pcap", str(tmp_path / "x.pcap")],
        capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "--pcap" in proc.stderr and "batched engine" in proc.stderr
    assert not (tmp_path / "x.pcap").exists()


# -- dticn reproduce --pcap DIR -----------------------------------------------------------
@pytest.mark.slow
def test_reproduce_writes_two_traces_per_run(tmp_path: Path) -> None:
    out = tmp_path / "traces"
    proc = subprocess.run(
        [sys.executable, "-m", "dticn.cli", "reproduce", "--seeds", "2", "--duration", "5m",
         "--configs", "v3-cr", "--loss", "0", "--workers", "2", "--pcap", str(out)],
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in out.iterdir()) == [
        "v3-cr-s1-lora.pcap", "v3-cr-s1-ndn.pcap", "v3-cr-s2-lora.pcap", "v3-cr-s2-ndn.pcap"]
    for seed in (1, 2):
        assert any(f.frame_type is FrameType.DATA
                   for _t, f in _lora_frames(out / f"v3-cr-s{seed}-lora.pcap"))
        assert read_pcap(str(out / f"v3-cr-s{seed}-ndn.pcap"))


# -- the emulated gateway ---------------------------------------------------------------
def test_lora_path_puts_lora_before_the_suffix() -> None:
    assert lora_path("gw.pcap") == "gw-lora.pcap"
    assert lora_path("/tmp/a.b/gw") == "/tmp/a.b/gw-lora"
    assert lora_path("traces/run.1.pcapng") == "traces/run.1-lora.pcapng"


def test_emulated_gateway_writes_the_lora_frames_next_to_its_trace(tmp_path: Path) -> None:
    from dticn.emulation.edge_scenario import EdgeScenario
    from dticn.emulation.gateway_process import EmulatedGateway, serve_gateway

    trace = tmp_path / "gw.pcap"
    seen: list[float] = []

    async def run() -> None:
        stop = asyncio.Event()

        def on_ready(_bound: list[str], gw: EmulatedGateway) -> None:
            seen.append(gw.driver.now())
            stop.set()

        await asyncio.wait_for(serve_gateway(
            EdgeScenario(scheme="rice", nodes=2, seed=1), ["tcp://127.0.0.1:0"],
            time_scale=50.0, ready=on_ready, stop=stop, pcap=str(trace)), 60)

    asyncio.run(run())
    frames = _lora_frames(tmp_path / "gw-lora.pcap")
    # emulated time from 0: the first beacon at 0, the two registrations (uplink data from
    # nodes 1 and 2, acknowledged) before READY
    assert frames[0][0] == 0.0 and frames[0][1].frame_type is FrameType.BEACON
    registrations = {f.src for t, f in frames if f.frame_type is FrameType.DATA
                     and f.dst == GATEWAY and t <= seen[0]}
    assert registrations == {1, 2}
    _acks_answer_data(frames)
    assert read_pcap(str(trace))                           # the NDN trace is still there
