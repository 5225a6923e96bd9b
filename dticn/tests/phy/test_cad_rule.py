"""What a CAD senses on the real medium: ours (``ideal``) or as DSME-LoRa's INET radio
(``inet``: not a frame that began while the sensing radio transmitted)."""

import pytest

from dticn.energy.model import EnergyMeter
from dticn.phy.interference import InterferenceModel
from dticn.phy.medium import Medium
from dticn.phy.radio import SimRadio
from dticn.sim.kernel import EventKernel

SF, CH = 7, 3


def _cad_results(rule: str) -> dict[str, bool]:
    """Node 1 sends 0.1..2.0 s. Node 2 is transmitting as it begins (0..0.2 s), node 3 is in
    RX; both sense at 0.5 s. Node 4 senses at 2.5 s while node 5's frame begins mid-CAD."""
    kernel = EventKernel()
    medium = Medium(kernel, InterferenceModel.from_config(inter_sf="orthogonal"),
                    lambda sf: -124.5, lambda a, b: 100.0, cad_rule=rule)
    radios = {i: SimRadio(i, kernel, medium, SF, 14.0, EnergyMeter(since=0.0))
              for i in range(1, 6)}
    for i, r in radios.items():
        medium.attach(i, r)
        r.wake()
    idle: dict[str, bool] = {}

    def sense(name: str, node: int, duration: float = 0.01) -> None:
        radios[node].idle()
        radios[node].cad(CH, duration, lambda free: idle.__setitem__(name, free))

    kernel.call_at(0.0, radios[2].transmit, CH, 0xFFFF, "f2", 0.2, radios[2].idle)
    kernel.call_at(0.0, radios[3].start_rx, CH)
    kernel.call_at(0.1, radios[1].transmit, CH, 0xFFFF, "f1", 1.9, radios[1].idle)
    kernel.call_at(0.5, sense, "was transmitting", 2)
    kernel.call_at(0.5, sense, "was listening", 3)
    kernel.call_at(2.5, sense, "begun during CAD", 4, 0.1)
    kernel.call_at(2.55, radios[5].transmit, CH, 0xFFFF, "f5", 0.5, radios[5].idle)
    kernel.run()
    return idle


def test_ideal_cad_senses_every_audible_frame() -> None:
    assert _cad_results("ideal") == {"was transmitting": False, "was listening": False,
                                     "begun during CAD": False}


def test_inet_cad_misses_a_frame_begun_while_the_node_transmitted() -> None:
    assert _cad_results("inet") == {"was transmitting": True, "was listening": False,
                                    "begun during CAD": False}


def test_inet_cad_still_senses_a_frame_begun_while_the_node_slept() -> None:
    """Their radio is in receiver mode whenever it is not transmitting (in the CAP), so only
    transmitting makes a node deaf: node 2 was in standby as node 1 began."""
    kernel = EventKernel()
    medium = Medium(kernel, InterferenceModel.from_config(inter_sf="orthogonal"),
                    lambda sf: -124.5, lambda a, b: 100.0, cad_rule="inet")
    a, b = (SimRadio(i, kernel, medium, SF, 14.0, EnergyMeter(since=0.0)) for i in (1, 2))
    for r in (a, b):
        medium.attach(r.address, r)
        r.wake()
    idle: list[bool] = []
    kernel.call_at(0.0, a.transmit, CH, 0xFFFF, "f1", 1.0, a.idle)
    kernel.call_at(0.5, b.cad, CH, 0.01, idle.append)
    kernel.run()
    assert idle == [False]


def test_unknown_cad_rule_is_one_clear_error() -> None:
    with pytest.raises(ValueError, match="cad_rule='psychic'"):
        _cad_results("psychic")
