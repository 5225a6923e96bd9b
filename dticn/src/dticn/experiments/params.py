"""One experiment run as data (what ``dticn reproduce`` and ``dticn sweep`` vary)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dticn.edge_profiles import Profile

PATTERNS = ("uniform", "periodic", "poisson")


@dataclass(frozen=True)
class Experiment:
    """Artifact defaults: one node, 20 ms Internet links, one transaction every U(50, 70) s.

    Args:
        config: configuration name (see :func:`dticn.schemes.registry`).
        seed: everything random (link loss, nonces, traffic, radio) derives from it.
        duration_s: measurement window; transactions start only inside it.
        warmup_s: time for the node to register before the window opens.
        tail_s: time after the window so late transactions can finish (at least three
            multisuperframes; see :func:`dticn.experiments.world.radio_scenario`).
        delays_s: one-way delay of (consumer-forwarder, forwarder-gateway) links.
        loss: Bernoulli loss per frame on both Internet links.
        nodes: LoRa nodes behind the gateway (1 in the artifact).
        interval_s: (low, high) of the gap between transactions per node; ``pattern``
            ``uniform`` draws U(low, high), ``periodic`` uses the mean, ``poisson``
            exponential gaps of the mean.
        sf: LoRa spreading factor.
        battery_mah: node battery (None: the energy config's 2600 mAh, two AA cells).
        mo: DSME multisuperframe order (None: 5, or the smallest that holds every node's
            GTS); BO follows MO.
        profile: ``model`` (ours) or ``artifact`` (the artifact as it ran), see
            :mod:`dticn.edge_profiles`; or a :class:`~dticn.edge_profiles.Profile` itself (a variant
            with one difference switched, :mod:`dticn.experiments.sensitivity`).
        cap_rx: the node's CAP listen policy; None: the profile's.
        energy_profile: ``optimised``, ``dsme-lora`` or ``casals-class-a``
            (:mod:`dticn.energy.profiles`), checked against the MAC; None: the profile's
            (model: optimised, artifact: dsme-lora), or over LoRaWAN the MAC's counterpart
            of it (:func:`~dticn.energy.profiles.energy_profile_for_mac`).
        mac: ``dsme`` (the paper's), ``lorawan-a`` or ``lorawan-b``
            (:mod:`dticn.mac.lorawan`, :func:`dticn.lora_edge.edge_radio`).
        reach_s: how often a LoRaWAN node can be reached: class A's keep-alive period,
            class B's ping period (2^p x 0.96 s, p in 0..7); None: 30.72 s
            (:data:`dticn.lora_edge.LORAWAN_REPORT_S`). DSME's is the multisuperframe
            (``mo``).
    """

    config: str = "push-draft"
    seed: int = 1
    duration_s: float = 3600.0
    warmup_s: float = 120.0
    tail_s: float = 160.0
    delays_s: tuple[float, float] = (0.020, 0.020)
    loss: float = 0.0
    nodes: int = 1
    interval_s: tuple[float, float] = (50.0, 70.0)
    pattern: str = "uniform"
    sf: int = 7
    battery_mah: float | None = None
    mo: int | None = None
    profile: str | Profile = "model"
    cap_rx: bool | None = None
    energy_profile: str | None = None
    mac: str = "dsme"
    reach_s: float | None = None

    def __post_init__(self) -> None:
        if self.pattern not in PATTERNS:
            raise ValueError(f"pattern={self.pattern!r}: use one of {PATTERNS}")
        if self.interval_s[0] <= 0 or self.interval_s[1] < self.interval_s[0]:
            raise ValueError(f"interval_s={self.interval_s}: give 0 < low <= high seconds")
        if self.nodes < 1:
            raise ValueError(f"nodes={self.nodes}: at least one LoRa node")
        from dticn.edge_profiles import PROFILES, Profile
        if not isinstance(self.profile, Profile) and self.profile not in PROFILES:
            raise ValueError(f"profile={self.profile!r}: use one of {sorted(PROFILES)}")
        from dticn.energy.profiles import ENERGY_PROFILES, check_profile_for_mac
        if self.energy_profile is not None:
            if self.energy_profile not in ENERGY_PROFILES:
                raise ValueError(f"energy_profile={self.energy_profile!r}: use one of "
                                 f"{sorted(ENERGY_PROFILES)}")
            check_profile_for_mac(self.energy_profile, self.mac)
        from dticn.mac.lorawan_config import MAC_NAMES
        if self.mac not in MAC_NAMES:
            raise ValueError(f"mac={self.mac!r}: use one of {', '.join(MAC_NAMES)}")
        if self.reach_s is not None:
            from dticn.lora_edge import edge_lorawan_config
            if self.mac == "dsme":
                raise ValueError(f"reach_s={self.reach_s}: a LoRaWAN period; DSME's is its "
                                 "multisuperframe (set mo)")
            if self.reach_s <= 0:
                raise ValueError(f"reach_s={self.reach_s}: give a positive period")
            if self.mac == "lorawan-b":
                edge_lorawan_config(self.reach_s)    # raises for a period class B lacks
        if self.mac != "dsme" and self.mo is not None:
            raise ValueError(f"mo={self.mo}: a DSME multisuperframe order; {self.mac} has "
                             "no schedule to size (leave mo unset)")

    @property
    def horizon_s(self) -> float:
        """Simulated time with the given tail (the world may lengthen the tail)."""
        return self.warmup_s + self.duration_s + self.tail_s

    def with_(self, **changes: Any) -> Experiment:
        return replace(self, **changes)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)
