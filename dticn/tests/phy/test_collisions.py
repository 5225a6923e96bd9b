"""Collisions and capture on the shared medium (two frames, one receiver)."""

import pytest

from dticn.phy.interference import InterferenceModel
from dticn.phy.medium import Medium
from dticn.sim.kernel import EventKernel

from .conftest import Ear

SENS = -124.5
GATEWAY = 0



def _run(frames: list[tuple[int, float, int, int, float]], *, inter_sf: str = "orthogonal",
         loss: dict[int, float] | None = None) -> tuple[list[int], Medium]:
    """frames: (sender, start, channel, sf, airtime); equal power unless ``loss`` says."""
    kernel = EventKernel()
    losses = loss or {}
    medium = Medium(kernel, InterferenceModel.from_config(inter_sf=inter_sf),
                    lambda sf: SENS, lambda a, b: losses.get(max(a, b), 100.0))
    ear = Ear()
    medium.attach(GATEWAY, ear)
    for sender, start, ch, sf, toa in frames:
        frame = f"frame of {sender}"         # opaque to the medium
        kernel.call_at(start, medium.transmit, sender, GATEWAY, ch, sf, 14.0, frame, toa)
    kernel.run()
    return sorted(ear.got), medium


def test_overlap_same_channel_same_sf_destroys_both() -> None:
    got, medium = _run([(1, 0.0, 0, 7, 0.1), (2, 0.05, 0, 7, 0.1)])
    assert got == []
    assert medium.stats.collisions == 2


def test_capture_at_six_db() -> None:
    got, _ = _run([(1, 0.0, 0, 7, 0.1), (2, 0.05, 0, 7, 0.1)], loss={1: 100.0, 2: 106.0})
    assert got == [1]                                # 6 dB stronger: captured
    got, _ = _run([(1, 0.0, 0, 7, 0.1), (2, 0.05, 0, 7, 0.1)], loss={1: 100.0, 2: 105.9})
    assert got == []                                 # 5.9 dB: both lost


def test_different_channels_or_times_never_collide() -> None:
    got, medium = _run([(1, 0.0, 0, 7, 0.1), (2, 0.0, 1, 7, 0.1)])
    assert got == [1, 2]
    got, medium = _run([(1, 0.0, 0, 7, 0.1), (2, 0.1, 0, 7, 0.1)])   # back to back
    assert got == [1, 2]
    assert medium.stats.collisions == 0


def test_inter_sf_orthogonal_versus_matrix() -> None:
    frames = [(1, 0.0, 0, 7, 0.1), (2, 0.0, 0, 9, 0.3)]
    assert _run(frames, inter_sf="orthogonal")[0] == [1, 2]
    # SF9 wanted vs SF7 interferer needs SIR >= -15 dB; SF7 wanted vs SF9 needs -9 dB.
    got, _ = _run(frames, inter_sf="matrix", loss={1: 90.0, 2: 105.0})  # SF7 15 dB louder
    assert got == [1, 2]                             # SF9 at exactly -15 dB survives
    got, _ = _run(frames, inter_sf="matrix", loss={1: 90.0, 2: 105.5})
    assert got == [1]


def test_below_sensitivity_is_lost() -> None:
    got, medium = _run([(1, 0.0, 0, 7, 0.1)], loss={1: 14.0 - SENS + 0.1})
    assert got == []
    assert medium.stats.below_sensitivity == 1


def test_interference_model_sums_same_sf_interferers() -> None:
    model = InterferenceModel.from_config()
    assert model.survives(7, -80.0, [(7, -86.0)])
    # Two -86 dBm interferers sum to -83 dBm: only 3 dB below, so the frame is lost.
    assert not model.survives(7, -80.0, [(7, -86.0), (7, -86.0)])
    assert model.threshold_db(7, 7) == pytest.approx(6.0)
