"""Channel plan and EU868 sub-bands (which duty-cycle limit applies to a channel)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dticn.phy.config import load_phy_config


@dataclass(frozen=True)
class SubBand:
    """A regulatory sub-band with its duty-cycle limit (fraction of time, e.g. 0.01)."""

    name: str
    low_hz: float
    high_hz: float
    duty_cycle: float

    def contains(self, low_hz: float, high_hz: float) -> bool:
        return self.low_hz <= low_hz and high_hz <= self.high_hz


@dataclass(frozen=True)
class ChannelPlan:
    """Equally spaced channels; each is mapped to the sub-band that holds its whole width."""

    first_hz: float
    spacing_hz: float
    count: int
    subbands: tuple[SubBand, ...]
    bw_hz: float = 125_000.0
    #: Channels outside the equally spaced grid, numbered from ``count`` on (e.g. a beacon
    #: and CAP channel in the 10% sub-band, as DSME-LoRa runs it).
    extra_hz: tuple[float, ...] = ()

    def with_extra(self, *frequencies_hz: float) -> ChannelPlan:
        """This plan with more channels (indices ``count``, ``count + 1``, ...); each must
        lie in a sub-band."""
        plan = ChannelPlan(self.first_hz, self.spacing_hz, self.count, self.subbands,
                           self.bw_hz, (*self.extra_hz, *frequencies_hz))
        for ch in range(self.count, plan.count + len(plan.extra_hz)):
            plan.subband(ch)
        return plan

    @classmethod
    def from_config(cls, config: dict[str, Any] | None = None, bw_hz: float = 125_000.0
                    ) -> ChannelPlan:
        """The plan of the configuration file (the artifact's 16 channels by default)."""
        cfg = config if config is not None else load_phy_config()
        plan = cfg["channel_plan"]
        bands = tuple(SubBand(**band) for band in cfg["subbands"])
        result = cls(float(plan["first_hz"]), float(plan["spacing_hz"]), int(plan["count"]),
                     bands, bw_hz)
        for ch in range(result.count):
            result.subband(ch)  # refuse a plan with a channel outside every sub-band
        return result

    def frequency(self, channel: int) -> float:
        """Centre frequency (Hz) of ``channel`` (0-based)."""
        if self.count <= channel < self.count + len(self.extra_hz):
            return self.extra_hz[channel - self.count]
        if not 0 <= channel < self.count:
            raise ValueError(f"channel {channel}: this plan has channels "
                             f"0..{self.count + len(self.extra_hz) - 1}")
        return self.first_hz + channel * self.spacing_hz

    def subband(self, channel: int) -> SubBand:
        """The sub-band that contains the channel's occupied bandwidth (memoised: the duty
        book asks for every frame)."""
        cache: dict[int, SubBand] = self.__dict__.setdefault("_subband_cache", {})
        band = cache.get(channel)
        if band is None:
            band = cache[channel] = self._find_subband(channel)
        return band

    def _find_subband(self, channel: int) -> SubBand:
        centre = self.frequency(channel)
        low, high = centre - self.bw_hz / 2, centre + self.bw_hz / 2
        for band in self.subbands:
            if band.contains(low, high):
                return band
        raise ValueError(
            f"channel {channel} ({centre / 1e6:.3f} MHz, {self.bw_hz / 1e3:g} kHz wide) lies in "
            "no EU868 sub-band of the configuration; move the channel plan or add the band"
        )
