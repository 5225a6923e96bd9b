"""LoRaWAN's EU868 settings (``lorawan_eu868.toml``) and what follows from them.

Data rate and SF map as DR = 12 - SF at 125 kHz (RP002 EU863-870: DR0 = SF12 .. DR5 = SF7);
the receive windows' length follows LoRaMac-node's rule (see the TOML); the channel plan
puts the uplink channels first and RX2 (also the class B beacon and ping channel) last, so
the EU duty-cycle book (:class:`~dticn.phy.dutycycle.DutyCycleTracker`) finds each one's
sub-band: the default channels lie in 868.0-868.6 MHz (1%), the CFList ones in 865-868 MHz
(1%), 869.525 MHz in 869.4-869.65 MHz (10%).
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from dticn.phy.channels import ChannelPlan, SubBand

#: The MAC names a scenario may give (``Scenario.mac``).
MAC_NAMES = ("dsme", "lorawan-a", "lorawan-b")


def data_rate(sf: int, bw_hz: float = 125_000.0) -> int:
    """EU868 data rate of ``sf`` at 125 kHz (DR0 = SF12 .. DR5 = SF7)."""
    if bw_hz != 125_000.0 or not 7 <= sf <= 12:
        raise ValueError(f"SF{sf} at {bw_hz / 1e3:g} kHz is no EU868 LoRaWAN data rate here; "
                         "use SF7..SF12 at 125 kHz (DR5..DR0)")
    return 12 - sf


@dataclass(frozen=True)
class LorawanConfig:
    """Class A/B settings of one region (EU868 by default; sources in the TOML)."""

    channels_hz: tuple[float, ...]
    frame_overhead_bytes: int
    ack_bytes: int
    max_payload_by_dr: tuple[int, ...]
    max_transmissions: int
    retransmit_timeout_s: float
    retransmit_timeout_rnd_s: float
    queue_limit: int
    receive_delay1_s: float
    receive_delay2_s: float
    rx2_hz: float
    rx2_sf: int
    min_rx_symbols: int
    max_rx_error_s: float
    demodulators: int
    beacon_period_s: float
    beacon_hz: float
    beacon_sf: int
    beacon_bytes: int
    ping_slot_periodicity: int
    ping_slot_unit_s: float
    ping_hz: float
    ping_sf: int

    @classmethod
    def load(cls, path: str | Path | None = None, **overrides: Any) -> LorawanConfig:
        """Read ``lorawan_eu868.toml`` (packaged) or another file of the same shape."""
        if path is None:
            text = resources.files("dticn.mac").joinpath("lorawan_eu868.toml").read_text("utf-8")
        else:
            text = Path(path).read_text(encoding="utf-8")
        cfg = tomllib.loads(text)
        values: dict[str, Any] = {}
        for section in ("uplink", "receive_windows", "gateway", "class_b"):
            for key, value in cfg[section].items():
                values[key] = tuple(value) if isinstance(value, list) else value
        values.update(overrides)
        config = cls(**values)
        if config.ping_slot_periodicity not in range(8):
            raise ValueError(f"ping_slot_periodicity={config.ping_slot_periodicity}: LoRaWAN "
                             "allows 0..7 (a ping slot every 2^p x 0.96 s)")
        if config.max_transmissions < 1:
            raise ValueError("max_transmissions must be at least 1")
        return config

    def max_payload(self, sf: int) -> int:
        """Largest application payload (FRMPayload) at ``sf``'s data rate."""
        return self.max_payload_by_dr[data_rate(sf)]

    def check_payload(self, payload_bytes: int, sf: int) -> None:
        """Refuse an item that no frame at this data rate can carry."""
        limit = self.max_payload(sf)
        if payload_bytes > limit:
            raise ValueError(f"payload {payload_bytes} B exceeds LoRaWAN's {limit}-byte "
                             f"maximum at DR{data_rate(sf)} (SF{sf}); lower the payload or "
                             "use a faster data rate (a lower SF)")

    def rx_window_s(self, sf: int, bw_hz: float = 125_000.0) -> float:
        """How long a receive window stays open when no preamble arrives (the TOML's rule)."""
        symbol_s = (1 << sf) / bw_hz
        symbols = max(math.ceil(((2 * self.min_rx_symbols - 8) * symbol_s
                                 + 2 * self.max_rx_error_s) / symbol_s - 1e-9),
                      self.min_rx_symbols)
        return symbols * symbol_s

    def ping_period_s(self) -> float:
        """Time between a class B device's ping slots."""
        return (1 << self.ping_slot_periodicity) * self.ping_slot_unit_s

    def periodicity_for(self, period_s: float) -> int:
        """The ``ping_slot_periodicity`` whose :meth:`ping_period_s` is ``period_s`` (the
        inverse), or ValueError naming the periods class B has."""
        for p in range(8):
            if abs((1 << p) * self.ping_slot_unit_s - period_s) <= 1e-6:
                return p
        choices = ", ".join(f"{(1 << p) * self.ping_slot_unit_s:g}" for p in range(8))
        raise ValueError(f"class B ping period {period_s:g} s: use 2^p x "
                         f"{self.ping_slot_unit_s:g} s, p in 0..7 ({choices} s)")

    def channel_plan(self, uplink_channels: int, subbands: tuple[SubBand, ...],
                     bw_hz: float = 125_000.0) -> ChannelPlan:
        """Uplink channels 0..n-1, then RX2 (index n); each checked against a sub-band."""
        if not 1 <= uplink_channels <= len(self.channels_hz):
            raise ValueError(f"channels={uplink_channels}: LoRaWAN EU868 here has 1.."
                             f"{len(self.channels_hz)} uplink channels")
        first = self.channels_hz[0]
        plan = ChannelPlan(first, 200e3, 1, subbands, bw_hz)
        return plan.with_extra(*self.channels_hz[1:uplink_channels], self.rx2_hz)
