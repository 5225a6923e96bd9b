"""Everything both engines derive from a scenario: configs, modulation, schedule, links."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from dticn.energy.model import EnergyConfig
from dticn.energy.profiles import EnergyProfile, load_energy_profile
from dticn.mac.dsme_config import MacConfig
from dticn.mac.gts import ALLOCATORS, Direction, GtsTable
from dticn.phy.airtime import LoRaParams, time_on_air
from dticn.phy.channels import ChannelPlan
from dticn.phy.collision import CollisionRule, make_collision_rule
from dticn.phy.config import load_phy_config
from dticn.phy.interference import InterferenceModel
from dticn.phy.propagation import LogDistancePathLoss, sensitivity_dbm
from dticn.radio.cap_plan import get_cap_plan
from dticn.radio.scenario import Scenario
from dticn.radio.topology import GATEWAY, Topology


class SlotTooShort(ValueError):
    """A GTS transaction (wake-up, frame, turnaround, ACK) does not fit one slot."""


@dataclass
class RadioContext:
    scenario: Scenario
    phy: LoRaParams
    plan: ChannelPlan
    mac: MacConfig
    energy: EnergyConfig
    interference: InterferenceModel
    sensitivity: dict[int, float]
    topology: Topology
    table: GtsTable
    data_toa_s: float
    ack_toa_s: float
    beacon_toa_s: float
    energy_profile: EnergyProfile
    #: Duty-cycle rule of the nodes' radios (the scenario's CAP plan).
    node_duty_rule: str = "off-time"
    #: Collision rule of the event engine's medium; None: ``interference`` (ours). Set by
    #: :func:`with_flora_phy` to compare with DSME-LoRa's simulation.
    collision: CollisionRule | None = None
    #: Peer-to-peer CAP traffic (DSME-LoRa's Fig. 22 simulation): each source's sink address,
    #: sinks being listeners of their own beside the coordinator; None: all to the gateway.
    sink_of: dict[int, int] | None = None

    def margin_db(self, node: int) -> float:
        """Link margin of node <-> gateway above sensitivity (mean, without fading)."""
        loss = self.topology.loss_db(GATEWAY, node)
        return self.scenario.tx_power_dbm - loss - self.sensitivity[self.phy.sf]


def radio_links(s: Scenario, phy_cfg: dict[str, Any]
                ) -> tuple[InterferenceModel, dict[int, float], Topology]:
    """What every MAC's engine shares: who interferes with whom, the sensitivity per SF,
    and the nodes laid out with their links (each reachable at the scenario's SF)."""
    interference = InterferenceModel.from_config(phy_cfg, inter_sf=s.inter_sf,
                                                 capture_db=s.capture_db)
    sens = {sf: sensitivity_dbm(sf, s.bw_hz, phy_cfg) for sf in range(7, 13)}
    path_loss = LogDistancePathLoss.from_config(phy_cfg)
    topology = Topology.disc(s.nodes, s.radius_m, path_loss, s.seed,
                             max_loss_db=s.tx_power_dbm - sens[s.sf], shadowing=s.shadowing)
    return interference, sens, topology


def build_context(s: Scenario) -> RadioContext:
    """Load the configuration files and lay out the network; refuse impossible set-ups."""
    phy_cfg = load_phy_config(s.phy_config)
    phy = LoRaParams(sf=s.sf, bw_hz=s.bw_hz, cr=s.cr, preamble=s.preamble)
    plan = ChannelPlan.from_config(phy_cfg, bw_hz=s.bw_hz)
    if s.channels > plan.count:
        raise ValueError(f"channels={s.channels} but the plan has {plan.count}")
    cap_plan = get_cap_plan(s.cap_plan)
    mac = MacConfig.load(s.mac_config, so=s.so, mo=s.mo, bo=s.bo, cap_rx=s.cap_rx,
                         cap_queue_limit=cap_plan.cap_queue_limit, cap_ack=s.cap_ack,
                         cad_miss_prob=s.cad_miss_prob, **dict(cap_plan.csma),
                         **dict(cap_plan.mac))
    if cap_plan.cap_channel_hz is not None:
        channel = plan.count + len(plan.extra_hz)
        plan = plan.with_extra(cap_plan.cap_channel_hz)
        mac = mac.with_(beacon_channel=channel, cap_channel=channel)
    overrides = {} if s.battery_mah is None else {"battery_mah": s.battery_mah}
    energy = EnergyConfig.load(s.energy_config, **overrides)
    interference, sens, topology = radio_links(s, phy_cfg)
    data_psdu = s.payload_bytes + mac.data_overhead
    if data_psdu > mac.max_psdu:
        raise ValueError(f"payload {s.payload_bytes} B + {mac.data_overhead} B MAC overhead "
                         f"exceeds the {mac.max_psdu}-byte PSDU; use <= {mac.max_payload} B")
    data_toa = time_on_air(phy, data_psdu)
    ack_toa = time_on_air(phy, mac.ack_bytes)
    transaction = mac.wakeup_s + data_toa + 2 * mac.turnaround_s + ack_toa
    if transaction > mac.timing.slot_s:
        raise SlotTooShort(
            f"a GTS transaction takes {transaction * 1e3:.1f} ms (SF{s.sf}, {data_psdu} B) but "
            f"a slot is {mac.timing.slot_s * 1e3:.0f} ms; raise SO, lower the SF or the payload"
        )
    table = GtsTable(mac.timing, channels=s.channels, rx_chains=s.rx_chains,
                     tx_chains=s.tx_chains)
    if s.association == "static":
        requests = [(i, Direction.UP) for i in range(1, s.nodes + 1)]
        if s.downlink_gts:
            requests += [(i, Direction.DOWN) for i in range(1, s.nodes + 1)]
        ALLOCATORS[s.allocator](table, requests)
    profile = load_energy_profile(s.energy_profile, energy_config=s.energy_config,
                                  battery_mah=s.battery_mah)
    return RadioContext(s, phy, plan, mac, energy, interference, sens, topology, table,
                        data_toa, ack_toa, time_on_air(phy, mac.beacon_bytes), profile,
                        cap_plan.node_duty_rule)


def with_flora_phy(ctx: RadioContext, *, collision: str = "ours",
                   airtime: str = "semtech") -> RadioContext:
    """``ctx`` with another collision rule and/or frame-duration rule (by name:
    :data:`~dticn.phy.collision.COLLISION_RULES`, :data:`~dticn.phy.airtime.AIRTIME_RULES`),
    as DSME-LoRa's simulation has them (``flora``). Only ``dticn validate`` asks for these;
    scenarios keep ours, so no scenario field (and no pinned result) changes."""
    s = ctx.scenario
    if airtime != ctx.phy.rule:
        ctx.phy = replace(ctx.phy, rule=airtime)
        ctx.data_toa_s = time_on_air(ctx.phy, s.payload_bytes + ctx.mac.data_overhead)
        ctx.ack_toa_s = time_on_air(ctx.phy, ctx.mac.ack_bytes)
        ctx.beacon_toa_s = time_on_air(ctx.phy, ctx.mac.beacon_bytes)
    if collision != "ours":
        ctx.collision = make_collision_rule(collision, ctx.interference, s.bw_hz,
                                            load_phy_config(s.phy_config))
    return ctx


def smallest_mo_that_fits(s: Scenario) -> int:
    """The smallest MO (>= the scenario's) whose multisuperframe holds every node's GTS."""
    per_node_up = 1
    mo = s.mo
    while mo <= 14:
        superframes = 1 << (mo - s.so)
        gts = 15 - 8
        up_cells = superframes * gts * min(s.rx_chains, s.channels)
        slots_needed = math.ceil(s.nodes * per_node_up / min(s.rx_chains, s.channels))
        if s.downlink_gts:
            slots_needed += math.ceil(s.nodes / min(s.tx_chains, s.channels))
        if slots_needed <= superframes * gts and up_cells >= s.nodes:
            return mo
        mo += 1
    raise ValueError(f"{s.nodes} nodes do not fit even with MO=14; add receive chains")
