"""The emulated gateway process: real socket faces on the Internet side, the simulated
DSME/LoRa edge (:class:`~dticn.emulation.emulated_edge.Edge`) on the other, one kernel driven by
:class:`~dticn.emulation.realtime.RealtimeDriver`.

Steps of :func:`serve_gateway`:

1. Build the edge (gateway forwarder + scheme from the registry + LoRa faces + nodes).
2. Put NFD-style management (``rib/register``) and a status producer
   (``/localhost/dticn/status``, JSON) behind local faces of the gateway's forwarder.
3. Open the listeners (tcp, unix, udp) and dial static routes (``--route
   PREFIX=udp://...`` to another gateway or forwarder). Names under a static route bypass
   the scheme: they belong to a node behind that other gateway.
4. Start the edge and the real-time driver; print ``listening URI`` lines, then
   ``READY`` once every node registered (or after ``ready_timeout_s`` virtual seconds,
   with a warning naming the nodes missing).
5. Run until SIGTERM/SIGINT or ``stop``; log the lag every ``status_every_s`` wall
   seconds and a final status line.

Time on the wire is emulated by default: InterestLifetime, FreshnessPeriod and the wait hint
are in emulated seconds, so at ``--time-scale k`` a client waits ``hint / k`` wall seconds
(the status says k as ``wire_time_scale``). With ``wire_time="wall"`` the gateway converts
Interest lifetimes where its sockets deliver them
(:class:`~dticn.emulation.ingress.SocketIngress`) and its scheme's wait hints where they
are made (:meth:`~dticn.schemes.gateway_base.GatewayContext.on_wire`), and ``wire_time_scale``
is 1.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Sequence
from typing import Any

from dticn.emulation.edge_scenario import EdgeScenario
from dticn.emulation.emulated_edge import Edge
from dticn.emulation.ingress import SocketIngress
from dticn.emulation.realtime import RealtimeDriver
from dticn.links.app_endpoint import Endpoint
from dticn.mgmt.nfd import NfdManagement
from dticn.net.lora_pcap import LoRaTrace, lora_path, trace_radio
from dticn.net.pcap import PcapWriter
from dticn.net.serving import print_listening, serving
from dticn.packets import Data, Interest
from dticn.packets.name import name_from_str

log = logging.getLogger(__name__)

STATUS_PREFIX = "/localhost/dticn/status"
WIRE_TIMES = ("emulated", "wall")
"""What times in packets mean: emulated seconds (default) or wall seconds."""


class EmulatedGateway:
    """The edge, its driver and its status, in one running process."""

    def __init__(self, scenario: EdgeScenario, *, time_scale: float,
                 wire_time: str = "emulated") -> None:
        if wire_time not in WIRE_TIMES:
            raise ValueError(f"wire_time={wire_time!r}: use one of {WIRE_TIMES}")
        wall_wire_scale = time_scale if wire_time == "wall" else None
        self.edge = Edge(scenario, wall_wire_scale=wall_wire_scale)
        self.driver = RealtimeDriver(self.edge.kernel, time_scale=time_scale)
        self.wire_time = wire_time
        fw = self.edge.gateway_fw
        self.ingress = SocketIngress(fw, self.driver, wall_wire_scale=wall_wire_scale)
        self.management = NfdManagement(fw)
        self.status_endpoint = Endpoint(self.edge.kernel, fw, self.edge.gateway_endpoint.rng,
                                        "app://status")
        self.status_endpoint.serve(name_from_str(STATUS_PREFIX), self._on_status)

    def status(self) -> dict[str, Any]:
        """Driver (virtual time, lag) and edge (registrations, counters) in one dict."""
        out = self.driver.status()
        out["wire_time"] = self.wire_time
        out["wire_time_scale"] = 1.0 if self.wire_time == "wall" else self.driver.time_scale
        out.update(self.edge.status())
        return out

    def _on_status(self, interest: Interest) -> None:
        body = json.dumps(self.status(), sort_keys=True).encode()
        self.status_endpoint.put(Data(interest.name, body, freshness_ms=0))


async def serve_gateway(
    scenario: EdgeScenario,
    listen: Sequence[str],
    *,
    time_scale: float = 1.0,
    wire_time: str = "emulated",
    routes: Sequence[tuple[str, str]] = (),
    ready: Callable[[list[str], EmulatedGateway], None] | None = None,
    stop: asyncio.Event | None = None,
    ready_timeout_s: float = 120.0,
    status_every_s: float = 10.0,
    pcap: str | None = None,
) -> EmulatedGateway:
    """Run an emulated gateway until ``stop`` is set or SIGTERM (see module docstring).

    ``pcap`` traces every face of the gateway's forwarder, the simulated LoRa faces
    included, as NDN over UDP (:mod:`dticn.net.pcap`; wall-clock timestamps, not the
    simulated ones), and every simulated LoRa frame as IEEE 802.15.4 in a second file,
    ``-lora`` before the suffix (:mod:`dticn.net.lora_pcap`; virtual seconds since the
    edge was built, the kernel's time, not the wall clock).
    """
    gw = EmulatedGateway(scenario, time_scale=time_scale, wire_time=wire_time)
    fw = gw.edge.gateway_fw
    lora_trace = trace_radio(gw.edge.radio, lora_path(pcap)) if pcap else None
    reporter: asyncio.Future[None] | None = None
    started = False
    try:
        async with serving(fw, listen, routes=routes, stop=stop, pcap=pcap) as up:
            gw.edge.bypass.extend([name_from_str("/localhost"), *up.routes])
            gw.edge.start()
            gw.driver.start()
            started = True
            log.info("emulating the LoRa edge: scheme %s, %d nodes %s, time scale %g, seed %d",
                     scenario.scheme, scenario.nodes, " ".join(scenario.node_prefixes()),
                     time_scale, scenario.seed)
            traces = [t for t in (up.trace, lora_trace) if t is not None]
            reporter = asyncio.ensure_future(_report(gw, status_every_s, traces))
            await _wait_for_nodes(gw, up.stop, ready_timeout_s)
            if ready is not None:
                ready(up.bound, gw)
            await up.stop.wait()
    finally:
        if reporter is not None:
            reporter.cancel()
        gw.driver.stop()
        if started:          # a start-up refused (a listener, a route) has nothing to say
            log.info("status %s", json.dumps(gw.status(), sort_keys=True))
        if lora_trace is not None and pcap:
            lora_trace.close()
            log.info("pcap %s: %d LoRa frames", lora_path(pcap), lora_trace.frames)
    return gw


async def _wait_for_nodes(gw: EmulatedGateway, stop: asyncio.Event, timeout_s: float) -> None:
    """Until every node registered or ``timeout_s`` virtual seconds passed (warn then)."""
    while not gw.edge.all_registered and gw.driver.now() < timeout_s:
        if stop.is_set():
            break
        await asyncio.sleep(0.01)
    if not gw.edge.all_registered:
        missing = sorted(set(gw.edge.scenario.node_prefixes()) - set(gw.edge.registered()))
        log.warning("nodes %s did not register within %.0f virtual s; serving anyway "
                    "(their names get NACK until they do)", missing, timeout_s)
    for prefix in gw.edge.registered():
        log.info("registered %s", prefix)


async def _report(gw: EmulatedGateway, every_s: float,
                  traces: Sequence[PcapWriter | LoRaTrace] = ()) -> None:
    """Log virtual time and lag now and then (what an operator watches); flush the pcap
    traces as often (a reader may open them while the gateway runs)."""
    while True:
        await asyncio.sleep(every_s)
        for trace in traces:
            trace.flush()
        s = gw.driver.status()
        log.info("virtual t=%.1f s, events %d, lag mean %.3f s max %.3f s (virtual)",
                 s["virtual_now_s"], s["events"], s["lag_mean_s"], s["lag_max_s"])


def print_ready(bound: list[str], gw: EmulatedGateway) -> None:
    """Tell a parent process where we listen, the clock mapping, then READY."""
    d = gw.driver
    print_listening(bound, f"clock epoch={d.wall_epoch:.6f} scale={d.time_scale:g} "
                           f"now={d.now():.3f}",
                    *(f"registered {prefix}" for prefix in gw.edge.registered()))
