"""Which rule decides whether a frame survives the frames overlapping it (a registry).

* ``ours``: :class:`~dticn.phy.interference.InterferenceModel` (same-SF powers summed,
  6 dB capture, the inter-SF SIR matrix); the medium's default.
* ``flora``: FLoRa's rule as DSME-LoRa's Fig. 22 simulation ran it (inetrg/flora 3f835bb,
  ``src/LoRaPhy/LoRaReceiver.cc``, ``LoRaReceiver::isPacketCollided``, called by
  inetrg/dsme_lora e94c7e5 ``src/LoRaDSMEReceiver.cc``; ``alohaChannelModel`` is false, the
  default of ``LoRaReceiver.ned``, not set by their ini files). Each overlapping frame on the
  same centre frequency is judged alone, never summed: the frame is lost when one of them

  1. comes within ``nonOrthDelta[SF][SF']`` dB of it (``LoRaReceiver.h``: 1 dB for equal
     SFs, -8 to -25 dB across SFs), i.e. there is no capture, and
  2. ends after the frame's first ``n_preamble - 6`` = 2 preamble symbols (FLoRa: "if last
     6 symbols of preamble are received, no collision"; ``nPreamble = 8`` fixed).

Overlap is strict (FLoRa: ``|m_x - m_y| < d_x + d_y`` on the centres and half-lengths).

* ``lorasim`` / ``lorasim-simple``: LoRaSim 0.2.1's rules (Bor, Roedig, Voigt, Alonso,
  MSWiM '16; ``loraDir.py`` revision 334 as Waaamsley/LoRaSim-Extended commit 2293060
  carries it, ``checkcollision``, ``timingCollision``, ``powerCollision``). Frames collide
  only on the same SF and frequency. The simple rule loses both frames of any overlap
  (pure ALOHA). The full rule judges each overlapping pair alone: when the earlier frame
  ends within the first ``8 - 5`` = 3 preamble symbols of the later one, neither is hurt;
  otherwise a frame survives only if it is at least 6 dB stronger than the other
  (within 6 dB both are lost).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

from dticn.phy.config import load_phy_config
from dticn.phy.interference import InterferenceModel

_FIRST_SF = 7


class Overlap(NamedTuple):
    """A frame overlapping the wanted one, as the receiver sees it."""

    sf: int
    start: float
    end: float
    rssi_dbm: float


class CollisionRule(Protocol):
    """Decides a frame's fate against the frames overlapping it at one receiver."""

    def survives(self, sf: int, start: float, rssi_dbm: float,
                 overlaps: Iterable[Overlap], *, end: float | None = None) -> bool:
        """Whether the frame (``sf``, from ``start`` to ``end``, ``rssi_dbm``) is
        received."""


@dataclass(frozen=True)
class OursCollision:
    """Our rule (:class:`InterferenceModel`): timing plays no part, powers are summed."""

    model: InterferenceModel

    def survives(self, sf: int, start: float, rssi_dbm: float,
                 overlaps: Iterable[Overlap], *, end: float | None = None) -> bool:
        return self.model.survives(sf, rssi_dbm, ((o.sf, o.rssi_dbm) for o in overlaps))


@dataclass(frozen=True)
class FloraCollision:
    """FLoRa's capture and preamble-timing rule (module docstring); ``bw_hz`` sets T_sym."""

    bw_hz: float
    non_orth_delta_db: tuple[tuple[float, ...], ...]
    preamble_symbols: int = 8
    preamble_needed: int = 6

    def __post_init__(self) -> None:
        if len(self.non_orth_delta_db) != 6 or any(len(r) != 6 for r in self.non_orth_delta_db):
            raise ValueError("FLoRa's nonOrthDelta needs a 6x6 table for SF7..SF12 "
                             "(lora.toml, [flora_collision])")
        if not 0 <= self.preamble_needed <= self.preamble_symbols:
            raise ValueError(f"preamble_needed={self.preamble_needed}: use 0.."
                             f"{self.preamble_symbols} symbols")

    @classmethod
    def from_config(cls, bw_hz: float, config: dict[str, Any] | None = None) -> FloraCollision:
        cfg = (config if config is not None else load_phy_config())["flora_collision"]
        return cls(bw_hz, tuple(tuple(float(v) for v in row) for row in cfg["non_orth_delta_db"]),
                   int(cfg["preamble_symbols"]), int(cfg["preamble_needed"]))

    def lock_time(self, sf: int, start: float) -> float:
        """FLoRa's ``csBegin``: from here on an overlap can destroy the frame."""
        symbol_s = (1 << sf) / self.bw_hz
        return start + symbol_s * (self.preamble_symbols - self.preamble_needed)

    def survives(self, sf: int, start: float, rssi_dbm: float,
                 overlaps: Iterable[Overlap], *, end: float | None = None) -> bool:
        lock = self.lock_time(sf, start)
        for o in overlaps:
            delta = self.non_orth_delta_db[sf - _FIRST_SF][o.sf - _FIRST_SF]
            captured = rssi_dbm - o.rssi_dbm >= delta
            if not captured and lock < o.end:
                return False
        return True


@dataclass(frozen=True)
class LoraSimCollision:
    """LoRaSim's simple or full collision rule (module docstring); ``bw_hz`` sets T_sym."""

    bw_hz: float
    full: bool = True
    capture_db: float = 6.0
    preamble_symbols: int = 8
    preamble_spared: int = 5

    def survives(self, sf: int, start: float, rssi_dbm: float,
                 overlaps: Iterable[Overlap], *, end: float | None = None) -> bool:
        if end is None:
            raise ValueError("LoRaSim's rule needs the frame's end (the medium gives it)")
        for o in overlaps:
            if o.sf != sf:
                continue
            if not self.full:
                return False
            later_start, later_sf, earlier_end = ((start, sf, o.end) if o.start <= start
                                                  else (o.start, o.sf, end))
            critical = later_start + ((1 << later_sf) / self.bw_hz
                                      * (self.preamble_symbols - self.preamble_spared))
            if critical < earlier_end and rssi_dbm - o.rssi_dbm < self.capture_db:
                return False
        return True


def make_collision_rule(name: str, interference: InterferenceModel, bw_hz: float,
                        config: dict[str, Any] | None = None) -> CollisionRule:
    """The rule registered as ``name`` (:data:`COLLISION_RULES`)."""
    try:
        factory = COLLISION_RULES[name]
    except KeyError:
        raise ValueError(f"unknown collision rule {name!r}; known: "
                         f"{', '.join(COLLISION_RULES)}") from None
    return factory(interference, bw_hz, config)


COLLISION_RULES = {
    "ours": lambda interference, bw_hz, config: OursCollision(interference),
    "flora": lambda interference, bw_hz, config: FloraCollision.from_config(bw_hz, config),
    "lorasim": lambda interference, bw_hz, config: LoraSimCollision(bw_hz, full=True),
    "lorasim-simple": lambda interference, bw_hz, config: LoraSimCollision(bw_hz, full=False),
}
