"""FLoRa's collision rule (DSME-LoRa's simulator) on the real medium: two or three frames,
one receiver, powers and timing chosen at the rule's edges.

The rule's numbers come from inetrg/flora 3f835bb, src/LoRaPhy/LoRaReceiver.{h,cc}:
nonOrthDelta 1 dB for equal SFs (-9 dB for SF7 wanted against SF9), and an interferer that
ends before the last 6 of the 8 preamble symbols (2 symbols = 2.048 ms at SF7/125 kHz) does
not collide.
"""

import pytest

from dticn.phy.collision import FloraCollision, OursCollision, Overlap, make_collision_rule
from dticn.phy.interference import InterferenceModel
from dticn.phy.medium import Medium
from dticn.sim.kernel import EventKernel

from .conftest import Ear

SENS = -124.5
GATEWAY = 0
BW = 125_000.0
SYMBOL_S = 128 / BW                  # SF7



def _run(frames: list[tuple[int, float, int, float]], loss: dict[int, float], *,
         rule: str = "flora", capture_db: float = 6.0) -> list[int]:
    """frames: (sender, start, sf, airtime) on one channel; ``loss`` per sender, dB."""
    kernel = EventKernel()
    interference = InterferenceModel.from_config(capture_db=capture_db)
    collision = None if rule == "ours" else make_collision_rule(rule, interference, BW)
    medium = Medium(kernel, interference, lambda sf: SENS, lambda a, b: loss[max(a, b)],
                    collision=collision)
    ear = Ear()
    medium.attach(GATEWAY, ear)
    for sender, start, sf, toa in frames:
        kernel.call_at(start, medium.transmit, sender, GATEWAY, 0, sf, 14.0, sender, toa)
    kernel.run()
    return sorted(ear.got)


def test_equal_powers_lose_both() -> None:
    assert _run([(1, 0.0, 7, 0.1), (2, 0.05, 7, 0.1)], {1: 100.0, 2: 100.0}) == []


def test_one_db_captures_where_ours_needs_six() -> None:
    frames = [(1, 0.0, 7, 0.1), (2, 0.05, 7, 0.1)]
    assert _run(frames, {1: 100.0, 2: 101.0}) == [1]          # 1 dB: FLoRa captures
    assert _run(frames, {1: 100.0, 2: 100.9}) == []           # 0.9 dB: both lost
    assert _run(frames, {1: 100.0, 2: 101.0}, rule="ours") == []
    assert _run(frames, {1: 100.0, 2: 106.0}, rule="ours") == [1]


def test_overlap_within_the_first_two_preamble_symbols_is_tolerated() -> None:
    # Frame 1 ends 2 ms into frame 2's preamble (before its lock at 2.048 ms): frame 2 is
    # received, frame 1 (hit at its end, after its own lock) is lost.
    start2 = 0.1 - 2 * SYMBOL_S + 0.048e-3
    got = _run([(1, 0.0, 7, 0.1), (2, start2, 7, 0.1)], {1: 100.0, 2: 100.0})
    assert got == [2]
    # 0.1 ms later into the preamble: past the lock, both lost.
    start2 = 0.1 - 2 * SYMBOL_S - 0.1e-3
    assert _run([(1, 0.0, 7, 0.1), (2, start2, 7, 0.1)], {1: 100.0, 2: 100.0}) == []
    # Our rule ignores timing: any overlap at equal power loses both.
    start2 = 0.1 - 2 * SYMBOL_S + 0.048e-3
    assert _run([(1, 0.0, 7, 0.1), (2, start2, 7, 0.1)], {1: 100.0, 2: 100.0},
                rule="ours") == []


def test_interferers_are_judged_one_by_one_not_summed() -> None:
    # Two interferers each 2 dB below frame 1 (together 1.01 dB above it): FLoRa keeps
    # frame 1; our summing rule with the same 1 dB threshold loses it.
    frames = [(1, 0.0, 7, 0.1), (2, 0.02, 7, 0.1), (3, 0.03, 7, 0.1)]
    loss = {1: 100.0, 2: 102.0, 3: 102.0}
    assert _run(frames, loss) == [1]
    assert _run(frames, loss, rule="ours", capture_db=1.0) == []


def test_across_spreading_factors_uses_non_orth_delta() -> None:
    # SF7 wanted against SF9: survives down to 9 dB below the interferer; SF9 wanted against
    # SF7 down to 15 dB below.
    frames = [(1, 0.0, 7, 0.1), (2, 0.0, 9, 0.3)]
    assert _run(frames, {1: 109.0, 2: 100.0}) == [1, 2]       # SF7 exactly 9 dB below
    assert _run(frames, {1: 109.1, 2: 100.0}) == [2]
    assert _run(frames, {1: 100.0, 2: 115.0}) == [1, 2]       # SF9 exactly 15 dB below
    assert _run(frames, {1: 100.0, 2: 115.1}) == [1]


def test_rule_numbers_are_floras() -> None:
    rule = FloraCollision.from_config(BW)
    assert [rule.non_orth_delta_db[i][i] for i in range(6)] == [1.0] * 6
    assert rule.non_orth_delta_db[0][2] == -9.0 and rule.non_orth_delta_db[2][0] == -15.0
    assert rule.lock_time(7, 1.0) == pytest.approx(1.0 + 2 * SYMBOL_S)
    assert rule.lock_time(12, 0.0) == pytest.approx(2 * 4096 / BW)


def test_ours_wrapper_matches_the_interference_model() -> None:
    ours = OursCollision(InterferenceModel.from_config())
    assert ours.survives(7, 0.0, -100.0, [Overlap(7, 0.0, 1.0, -106.0)])
    assert not ours.survives(7, 0.0, -100.0, [Overlap(7, 0.0, 1.0, -105.9)])


def test_unknown_rule_and_bad_table_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown collision rule 'aloha'; known: ours, flora"):
        make_collision_rule("aloha", InterferenceModel.from_config(), BW)
    with pytest.raises(ValueError, match="6x6"):
        FloraCollision(BW, ((1.0,),))
