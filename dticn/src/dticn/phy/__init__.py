"""LoRa physical layer: time on air, channel plan, propagation, collisions, duty cycle.

Every function here is pure or takes its clock and randomness as arguments, so the
same PHY serves the event-by-event simulator, the batched fast path and unit tests.
"""

from dticn.phy.airtime import Airtime, LoRaParams, airtime, parse_coding_rate, time_on_air

__all__ = ["Airtime", "LoRaParams", "airtime", "parse_coding_rate", "time_on_air"]
