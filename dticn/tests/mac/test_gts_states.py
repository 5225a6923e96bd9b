"""GTS schedule limits, allocators, slot times; the transition tables refuse bad steps."""

import pytest

from dticn.mac.gts import (
    ALLOCATORS,
    CapacityError,
    Direction,
    Gts,
    GtsTable,
    allocate_first_fit,
    allocate_static,
    cell_at,
    next_slot,
)
from dticn.mac.states import GTS_TRANSITIONS, GtsEvent, GtsState
from dticn.mac.timing import DsmeTiming
from dticn.phy.radio_states import (
    RADIO_TRANSITIONS,
    IllegalTransition,
    RadioEvent,
    RadioState,
    fire,
)


def test_static_schedule_single_channel_one_up_one_down() -> None:
    table = GtsTable(DsmeTiming())
    cells = allocate_static(table, [(1, Direction.UP), (1, Direction.DOWN)])
    assert {c.channel for c in cells} == {0}
    assert cells[0].superframe != cells[1].superframe   # spread over superframes
    assert table.capacity(Direction.UP) == 28
    with pytest.raises(CapacityError, match="raise MO"):
        allocate_static(table, [(i, Direction.UP) for i in range(2, 40)])


def test_first_fit_respects_receive_chains_and_half_duplex() -> None:
    table = GtsTable(DsmeTiming(), channels=16, rx_chains=8, tx_chains=1)
    allocate_first_fit(table, [(i, Direction.UP) for i in range(1, 101)])
    allocate_first_fit(table, [(i, Direction.DOWN) for i in range(1, 11)])
    per_slot: dict[tuple[int, int], list[Gts]] = {}
    for (sf, slot, _ch), g in table.cells.items():
        per_slot.setdefault((sf, slot), []).append(g)
    for cells in per_slot.values():
        directions = {c.direction for c in cells}
        assert len(directions) == 1
        limit = 8 if Direction.UP in directions else 1
        assert len(cells) <= limit
        assert len({c.channel for c in cells}) == len(cells)
    assert len(table.cells) == 110
    assert set(ALLOCATORS) == {"static", "first-fit", "artifact"}


def test_artifact_allocator_places_downlink_then_uplink_as_the_artifact_did() -> None:
    """experiments/ccn_exp_template.sh: gateway TX in superframe 0 GTS 0, node TX in
    superframe 0 GTS 1, channel 0 (slots 9 and 10: 4.32 s and 4.80 s)."""
    timing = DsmeTiming()
    table = GtsTable(timing, channels=16, rx_chains=1, tx_chains=1)
    ALLOCATORS["artifact"](table, [(1, Direction.UP), (1, Direction.DOWN)])
    [down] = table.of(1, Direction.DOWN)
    [up] = table.of(1, Direction.UP)
    assert (down.superframe, down.slot, down.channel) == (0, 0, 0)
    assert (up.superframe, up.slot, up.channel) == (0, 1, 0)
    assert abs(down.offset(timing) - 4.32) < 1e-9 and abs(up.offset(timing) - 4.80) < 1e-9


def test_next_slot_time_is_the_cell_start() -> None:
    timing = DsmeTiming()
    table = GtsTable(timing)
    (cell,) = allocate_static(table, [(5, Direction.UP)])
    first = timing.gts_offset(cell.superframe, cell.slot)
    assert table.next_slot_time(5, Direction.UP, 0.0) == pytest.approx(first)
    assert table.next_slot_time(5, Direction.UP, first + 1e-3) == pytest.approx(first + 30.72)
    assert table.next_slot_time(5, Direction.DOWN, 0.0) is None


def test_illegal_transitions_raise() -> None:
    assert fire(RADIO_TRANSITIONS, RadioState.SLEEP, RadioEvent.WAKE) is RadioState.STANDBY
    with pytest.raises(IllegalTransition, match="not allowed in state 'sleep'"):
        fire(RADIO_TRANSITIONS, RadioState.SLEEP, RadioEvent.START_TX)
    state = fire(GTS_TRANSITIONS, GtsState.NONE, GtsEvent.REQUEST)
    assert fire(GTS_TRANSITIONS, state, GtsEvent.RESPONSE_OK) is GtsState.ALLOCATED
    with pytest.raises(IllegalTransition):
        fire(GTS_TRANSITIONS, GtsState.NONE, GtsEvent.RESPONSE_OK)


def test_cell_during_finds_the_cell_of_an_instant_and_next_slot_its_start() -> None:
    timing = DsmeTiming()
    table = GtsTable(timing, rx_chains=4)
    up, down = allocate_first_fit(table, [(1, Direction.UP), (1, Direction.DOWN)])
    msf = timing.multisuperframe_s
    start = up.offset(timing) + 2 * msf
    assert table.cell_during(up.channel, start + 1e-9) == up    # the caller rounds up
    assert table.cell_during(up.channel, start + timing.slot_s - 1e-6) == up
    assert table.cell_during(up.channel, start + timing.slot_s + 1e-9) != up   # next slot
    assert table.cell_during(up.channel + 1, start + 1e-9) is None             # other channel
    assert table.cell_during(up.channel, timing.cap_window(2)[0]) is None  # in the CAP
    assert next_slot([up, down], timing, start - 1.0) == pytest.approx(start)
    assert cell_at([up, down], timing, down.offset(timing) + msf) == down
    assert next_slot([], timing, 0.0) is None
    assert table.next_slot_time(1, Direction.DOWN, 0.0) == pytest.approx(down.offset(timing))
