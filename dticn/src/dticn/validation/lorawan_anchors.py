"""Published, checkable anchors for the LoRaWAN class A model (issue 23, item 3).

* **Pure ALOHA** (Abramson 1970; the curve ns-3 signetlabdei/lorawan's
  ``examples/aloha-throughput.cc`` plots): one channel, one SF, no capture, Poisson
  arrivals; a frame survives when no other starts within one frame time before or after
  it, so its success is e^(-2G) at offered load G = N x ToA / T, and the throughput
  S = G e^(-2G) peaks at 1/(2e) = 0.184 at G = 0.5. The run switches off what pure
  ALOHA lacks (capture: a 1000 dB threshold; duty-cycle off-times; shadowing) and keeps the
  rest of the class A device (its receive windows after every uplink). G is measured
  (airtime sent / time), and the finite-population value e^(-2G(N-1)/N) is printed beside.
* **LoRaSim's experiment 0** (Bor et al., MSWiM '16; ``loraDir.py``): SF12, CR 4/8, one
  frequency, 20-byte packets, nodes in LoRaSim's 98.95 m disc with its path loss, in its
  simple collision mode (any overlap loses both: pure ALOHA) and its full mode (6 dB power
  capture, a frame spared when the other ends in its first 3 preamble symbols,
  :class:`~dticn.phy.collision.LoraSimCollision`), against LoRaSim's own DER measured
  here (``lorasim_exp0.toml``, how it was run in its header).
* **Casals et al. (Sensors 2017)**: a class A device on a 2400 mAh battery sending one
  message every 5 minutes lasts about 1 year, about 6 years asymptotically; run here with
  their measured per-state energy (``--energy-profile casals-class-a``).
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, replace
from typing import Any

from dticn.phy.airtime import LoRaParams, time_on_air
from dticn.phy.collision import LoraSimCollision
from dticn.radio.lorawan_network import LorawanNetwork, build_lorawan_context
from dticn.radio.scenario import Scenario
from dticn.radio.topology import Topology

#: LoRaWAN frame overhead the ALOHA frames carry (MHDR, FHDR, FPort, MIC).
_FRAME_OVERHEAD = 13


@dataclass(frozen=True)
class AlohaPoint:
    """One offered load: what the event engine measured beside pure ALOHA's value."""

    target_g: float
    nodes: int
    frames: int
    measured_g: float
    delivery: float
    ci95: float
    aloha: float
    aloha_finite: float

    @property
    def throughput(self) -> float:
        return self.measured_g * self.delivery

    @property
    def error_points(self) -> float:
        """Measured minus e^(-2G), in percentage points."""
        return 100.0 * (self.delivery - self.aloha)

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "throughput": self.throughput,
                "error_points": self.error_points}


def aloha_scenario(target_g: float, *, nodes: int, frames: int = 10_000, sf: int = 7,
                   payload_bytes: int = 20, seed: int = 1) -> Scenario:
    """The pure-ALOHA setting at offered load ``target_g`` with ``nodes`` devices, long
    enough for about ``frames`` frames."""
    if target_g <= 0:
        raise ValueError(f"offered load {target_g}: give G > 0")
    toa = time_on_air(LoRaParams(sf=sf), payload_bytes + _FRAME_OVERHEAD)
    interval = nodes * toa / target_g
    return Scenario(nodes=nodes, duration_s=frames * toa / target_g,
                    traffic=f"poisson:{interval!r}s", payload_bytes=payload_bytes, sf=sf,
                    seed=seed, mac="lorawan-a", channels=1, capture_db=1000.0,
                    inter_sf="orthogonal", enforce_duty_cycle=False, shadowing=False,
                    radius_m=50.0)


def aloha_point(target_g: float, *, nodes: int, frames: int = 10_000, seed: int = 1
                ) -> AlohaPoint:
    """Run the event engine at one offered load (:func:`aloha_scenario`)."""
    s = aloha_scenario(target_g, nodes=nodes, frames=frames, seed=seed)
    net = LorawanNetwork(s)
    net.run()
    sent = sum(d.counters.uplinks for d in net.devices.values())
    airtime = sum(d.counters.uplink_tx_s for d in net.devices.values())
    if sent == 0:
        raise ValueError(f"G={target_g}: no frame was sent; lengthen the run")
    delivery = net.gateway.counters.received / sent
    g = airtime / s.duration_s
    return AlohaPoint(target_g, nodes, sent, g, delivery,
                      1.96 * math.sqrt(delivery * (1 - delivery) / sent),
                      math.exp(-2 * g), math.exp(-2 * g * (nodes - 1) / nodes))


def aloha_curve(loads: Iterable[float], *, nodes_at_g1: int = 1000, frames: int = 10_000,
                progress: Callable[[AlohaPoint], Any] | None = None) -> list[AlohaPoint]:
    """Pure ALOHA at each load, with the per-node period fixed so that ``nodes_at_g1``
    devices offer G = 1 (nodes = G x nodes_at_g1)."""
    points = []
    for g in loads:
        point = aloha_point(g, nodes=max(2, round(g * nodes_at_g1)), frames=frames)
        points.append(point)
        if progress is not None:
            progress(point)
    return points


LORASIM_MAX_DIST_M = 98.95
"""LoRaSim's disc for experiment 0: ``maxDist = d0 e^((Lpl - Lpld0) / (10 gamma))`` with
Lpl = 14 dBm + 132.25 dB (its ``sensi[5,2]``), d0 40 m, Lpld0 127.41 dB, gamma 2.08."""
LORASIM_PERIOD_S = 1000.0
"""Mean gap between one node's packets (``avgSendTime`` 1,000,000 ms)."""
LORASIM_PHY_BYTES = 20
"""LoRaSim's packet length (PHY payload); here 7 application bytes + 13 of LoRaWAN."""


@dataclass(frozen=True)
class LoraSimPoint:
    """One node count of LoRaSim's experiment 0: our DER beside LoRaSim's."""

    nodes: int
    full: bool
    offered_g: float
    frames: int
    der: float
    ci95: float
    lorasim_der: float
    lorasim_ci95: float

    @property
    def error_points(self) -> float:
        return 100.0 * (self.der - self.lorasim_der)

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "error_points": self.error_points}


def lorasim_reference() -> dict[str, dict[int, list[tuple[int, int]]]]:
    """LoRaSim's runs by mode (``simple``/``full``) and node count: (sent, collided)."""
    from importlib import resources

    doc = tomllib.loads(resources.files("dticn.validation").joinpath(
        "lorasim_exp0.toml").read_text("utf-8"))
    return {mode: {int(row["nodes"]): [tuple(r) for r in row["runs"]] for row in doc[mode]}
            for mode in ("simple", "full")}


def lorasim_scenario(nodes: int, *, frames: int = 50_000, seed: int = 1) -> Scenario:
    """Experiment 0 on our class A model: LoRaSim's radio, disc, path loss and traffic; no
    shadowing, no duty cycle, unconfirmed uplinks (its gateway never answers)."""
    return Scenario(nodes=nodes, duration_s=frames / nodes * LORASIM_PERIOD_S,
                    traffic=f"poisson:{LORASIM_PERIOD_S!r}s",
                    payload_bytes=LORASIM_PHY_BYTES - _FRAME_OVERHEAD, sf=12, cr=4, seed=seed,
                    mac="lorawan-a", channels=1, enforce_duty_cycle=False, shadowing=False,
                    radius_m=LORASIM_MAX_DIST_M)


def lorasim_point(nodes: int, *, full: bool, frames: int = 50_000, seed: int = 1
                  ) -> LoraSimPoint:
    """Run experiment 0 with ``nodes`` under LoRaSim's rule (full or simple); LoRaSim's DER
    from its runs at that node count (mean, 95% CI from the pooled packets)."""
    runs = lorasim_reference()["full" if full else "simple"].get(nodes)
    if runs is None:
        raise ValueError(f"no LoRaSim run with {nodes} nodes; measured: "
                         f"{sorted(lorasim_reference()['simple'])}")
    s = lorasim_scenario(nodes, frames=frames, seed=seed)
    ctx = build_lorawan_context(s)
    topo = ctx.topology        # LoRaSim extends its path loss below d0 (40 m)
    ctx = replace(ctx, topology=Topology(
        topo.positions, replace(topo.path_loss, extrapolate_below_d0=True), topo.seed,
        shadowing=False))
    net = LorawanNetwork(s, ctx)
    net.medium.collision = LoraSimCollision(s.bw_hz, full=full)
    net.run()
    sent = sum(d.counters.uplinks for d in net.devices.values())
    der = net.gateway.counters.received / sent
    airtime = sum(d.counters.uplink_tx_s for d in net.devices.values())
    ref_sent = sum(r[0] for r in runs)
    ref = 1.0 - sum(r[1] for r in runs) / ref_sent
    return LoraSimPoint(nodes, full, airtime / s.duration_s, sent, der,
                        1.96 * math.sqrt(der * (1 - der) / sent), ref,
                        1.96 * math.sqrt(ref * (1 - ref) / ref_sent))


@dataclass(frozen=True)
class LifetimePoint:
    """A class A device's lifetime at one reporting period, beside the published value."""

    interval_s: float
    lifetime_years: float
    published_years: float | None
    avg_current_ma: float

    @property
    def error(self) -> float | None:
        if self.published_years is None:
            return None
        return self.lifetime_years / self.published_years - 1.0

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "error": self.error}


#: Casals et al.'s headline figures: reporting period (s) -> lifetime (years); None: the
#: asymptote (sleep current only), checked with a once-a-day device.
CASALS_PUBLISHED = {300.0: 1.0, 86_400.0: None}
#: The asymptote they give: about 6 years.
CASALS_ASYMPTOTE_YEARS = 6.0


def casals_lifetime(interval_s: float, *, days: float = 7.0, payload_bytes: int = 8,
                    battery_mah: float = 2400.0) -> LifetimePoint:
    """One class A device at SF7 (DR5), unconfirmed, ``payload_bytes`` per message, with
    Casals et al.'s measured energy, on the event engine."""
    s = Scenario(nodes=1, duration_s=days * 86_400.0, traffic=f"periodic:{interval_s!r}s",
                 payload_bytes=payload_bytes, mac="lorawan-a",
                 energy_profile="casals-class-a", battery_mah=battery_mah)
    result = LorawanNetwork(s).run()
    energy = result.nodes[0].energy
    assert energy is not None
    return LifetimePoint(interval_s, energy.lifetime_days / 365.0,
                         CASALS_PUBLISHED.get(interval_s), energy.avg_current_ma)
