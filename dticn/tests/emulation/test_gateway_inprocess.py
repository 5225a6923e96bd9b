"""The emulated gateway in-process (fast): real TCP socket in, simulated LoRa edge behind,
wait hint / NACK / status / data, and the lag it reports."""

from __future__ import annotations

import asyncio
import json
import time

from dticn.emulation.edge_scenario import EdgeScenario
from dticn.emulation.gateway_process import EmulatedGateway, serve_gateway
from dticn.packets import ContentType, Data, Interest, decode_packet, name_from_str
from dticn.schemes.signalling import read_wait_hint

SCALE = 50.0


async def _ask(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, name: str,
               *, prefix: bool = False) -> Data:
    writer.write(Interest(name_from_str(name), must_be_fresh=True, can_be_prefix=prefix,
                          lifetime_ms=4000, nonce=hash(name) & 0xFFFFFFFF).encode())
    await writer.drain()
    head = await asyncio.wait_for(reader.readexactly(2), 5)
    length = head[1]
    if length >= 0xFD:
        extra = await reader.readexactly(2)
        length = int.from_bytes(extra, "big")
        head += extra
    packet = decode_packet(head + await reader.readexactly(length))
    assert isinstance(packet, Data), packet
    return packet


def test_gateway_answers_hint_then_data_over_a_real_socket() -> None:
    async def run() -> tuple[list[Data], dict, float, EmulatedGateway]:
        stop = asyncio.Event()
        where: list[str] = []
        ready = asyncio.Event()
        holder: list[EmulatedGateway] = []

        def on_ready(bound: list[str], gw: EmulatedGateway) -> None:
            where.extend(bound)
            holder.append(gw)
            ready.set()

        task = asyncio.create_task(serve_gateway(
            EdgeScenario(scheme="rice", nodes=2, seed=1), ["tcp://127.0.0.1:0"],
            time_scale=SCALE, ready=on_ready, stop=stop))
        await asyncio.wait_for(ready.wait(), 20)
        host, port = where[0].removeprefix("tcp://").rsplit(":", 1)
        reader, writer = await asyncio.open_connection(host, int(port))
        hint = await _ask(reader, writer, "/node2/3")
        nack = await _ask(reader, writer, "/node7/3")
        wait = read_wait_hint(hint)
        assert wait is not None
        await asyncio.sleep(wait / SCALE + 0.05)
        answers = [hint, nack]
        for _ in range(3):                      # a late node gets a further hint
            again = await _ask(reader, writer, "/node2/3")
            answers.append(again)
            later = read_wait_hint(again)
            if later is None:
                break
            await asyncio.sleep(later / SCALE + 0.05)
        status = json.loads((await _ask(reader, writer, "/localhost/dticn/status",
                                        prefix=True)).content)
        writer.close()
        stop.set()
        gw = await task
        return answers, status, wait, gw

    answers, status, wait, gw = asyncio.run(run())
    hint, nack, *rest = answers
    assert hint.content_type == 1024 and abs(wait - 30.72) < 1e-6   # rice: one multisuperframe
    assert nack.content_type == ContentType.NACK
    data = rest[-1]
    assert read_wait_hint(data) is None and data.content[:4].endswith(b"3")
    assert status["time_scale"] == SCALE and status["registered"] == ["/node1", "/node2"]
    assert status["scheme_counters"]["lora_requests"] == 1          # one LoRa fetch only
    assert status["events"] > 0 and 0 <= status["lag_mean_s"] <= status["lag_max_s"]
    assert status["virtual_now_s"] >= status["kernel_now_s"] - 1e-6
    assert gw.edge.gateway_fw.counters.as_dict()["cs_hits"] >= 1    # data from the CS


async def _read_data(reader: asyncio.StreamReader, timeout: float) -> Data | None:
    try:
        head = await asyncio.wait_for(reader.readexactly(2), timeout)
    except TimeoutError:
        return None
    packet = decode_packet(head + await reader.readexactly(head[1]))
    assert isinstance(packet, Data), packet
    return packet


def _polling_with_wall_lifetime(wire_time: str, wait_s: float) -> tuple[Data | None, float,
                                                                       dict]:
    """A v3-cr (polling) gateway at scale 50; an Interest with a 3 s lifetime; the answer
    if it comes within ``wait_s`` wall seconds."""

    async def run() -> tuple[Data | None, float, dict]:
        stop = asyncio.Event()
        where: list[str] = []
        ready = asyncio.Event()

        def on_ready(bound: list[str], gw: EmulatedGateway) -> None:
            where.extend(bound)
            ready.set()

        task = asyncio.create_task(serve_gateway(
            EdgeScenario(scheme="v3-cr", nodes=1, seed=1), ["tcp://127.0.0.1:0"],
            time_scale=SCALE, wire_time=wire_time, ready=on_ready, stop=stop))
        await asyncio.wait_for(ready.wait(), 20)
        host, port = where[0].removeprefix("tcp://").rsplit(":", 1)
        reader, writer = await asyncio.open_connection(host, int(port))
        status = json.loads((await _ask(reader, writer, "/localhost/dticn/status",
                                        prefix=True)).content)
        t0 = time.monotonic()
        writer.write(Interest(name_from_str("/node1/5"), lifetime_ms=3000, nonce=5).encode())
        data = await _read_data(reader, wait_s)
        waited = time.monotonic() - t0
        writer.close()
        stop.set()
        await task
        return data, waited, status

    return asyncio.run(run())


def test_wall_wire_time_scales_interest_lifetimes() -> None:
    """3 s of wall lifetime are 150 emulated s at scale 50 with --wire-time wall: longer than
    the LoRa round trip (at most about 65 s, 1.3 wall s: sent right after READY, the Interest
    waits behind the registration ACK for the node's downlink GTS), and the gateway keeps its
    PIT entry for the Interest's lifetime, not only its 64 s minimum, so polling delivers; in
    emulated wire time the same Interest lives 3 emulated s and the gateway's in-record
    expires first (a slow host can only make that answer later, never make this check pass
    wrongly)."""
    data, waited, status = _polling_with_wall_lifetime("wall", 4.0)
    assert status["wire_time"] == "wall" and status["wire_time_scale"] == 1.0
    assert data is not None and data.content[:4].endswith(b"5")
    assert waited < 3.0
    data, _, status = _polling_with_wall_lifetime("emulated", 1.5)
    assert status["wire_time_scale"] == SCALE
    assert data is None


def test_wall_wire_time_scales_the_gateways_hints() -> None:
    async def run() -> float | None:
        stop = asyncio.Event()
        where: list[str] = []
        ready = asyncio.Event()
        task = asyncio.create_task(serve_gateway(
            EdgeScenario(scheme="rice", nodes=1, seed=1), ["tcp://127.0.0.1:0"],
            time_scale=SCALE, wire_time="wall",
            ready=lambda bound, gw: (where.extend(bound), ready.set()), stop=stop))
        await asyncio.wait_for(ready.wait(), 20)
        host, port = where[0].removeprefix("tcp://").rsplit(":", 1)
        reader, writer = await asyncio.open_connection(host, int(port))
        hint = read_wait_hint(await _ask(reader, writer, "/node1/2"))
        writer.close()
        stop.set()
        await task
        return hint

    assert asyncio.run(run()) == round(30.72 / SCALE, 3)


def test_gateway_pcap_traces_the_socket_and_lora_faces(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from dticn.net.pcap import FORWARDER_IP, read_pcap

    trace = tmp_path / "gw.pcap"

    async def run() -> None:
        stop = asyncio.Event()
        where: list[str] = []
        ready = asyncio.Event()

        def on_ready(bound: list[str], _gw: EmulatedGateway) -> None:
            where.extend(bound)
            ready.set()

        task = asyncio.create_task(serve_gateway(
            EdgeScenario(scheme="rice", nodes=1, seed=1), ["tcp://127.0.0.1:0"],
            time_scale=SCALE, ready=on_ready, stop=stop, pcap=str(trace)))
        await asyncio.wait_for(ready.wait(), 20)
        host, port = where[0].removeprefix("tcp://").rsplit(":", 1)
        reader, writer = await asyncio.open_connection(host, int(port))
        await _ask(reader, writer, "/node1/1")
        writer.close()
        stop.set()
        await task

    asyncio.run(run())
    records = read_pcap(str(trace))
    names = {decode_packet(frame).name[:1] for _t, _s, _d, frame in records  # type: ignore[union-attr]
             if frame[:1] in (b"\x05", b"\x06")}
    assert name_from_str("/node1") in names
    # frames of more than one face besides the forwarder: the TCP client and the LoRa side
    assert len({s for _t, s, _d, _f in records if s != FORWARDER_IP}) >= 2
