"""The engines agree: closed-form upkeep vs every beacon as an event, batch vs events."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dticn.radio.batch import run_batch
from dticn.radio.engines import run
from dticn.radio.network import RadioNetwork
from dticn.radio.results import RadioResult
from dticn.radio.scenario import Scenario, parse_duration

SHORT = Scenario(nodes=6, duration_s=2 * 3600.0, traffic="periodic:60s", seed=3)


def _charge(result: RadioResult) -> np.ndarray:
    return np.array([n.energy.charge_total_mas for n in result.nodes])


@pytest.mark.parametrize("changes", [{}, {"downlink_gts": True, "rx_chains": 8},
                                     {"cap_rx": True}])
def test_closed_form_upkeep_matches_event_by_event_within_one_percent(
        changes: dict[str, object]) -> None:
    s = SHORT.with_(**changes)
    events = RadioNetwork(s.with_(upkeep="events")).run()
    closed = RadioNetwork(s.with_(upkeep="closed")).run()
    assert closed.events < events.events
    np.testing.assert_allclose(_charge(closed), _charge(events), rtol=0.01)
    for a, b in zip(events.nodes, closed.nodes, strict=True):
        assert a.energy.time_s["rx"] == pytest.approx(b.energy.time_s["rx"], rel=0.01)


def test_batch_engine_reproduces_the_event_engine() -> None:
    # The third case is duty-cycle bound: a 453 ms SF10 frame at 1% needs 45 s of silence,
    # so every second 30.72 s slot stays empty and the queue grows.
    for s in (SHORT, SHORT.with_(traffic="poisson:45s", sf=8, seed=9),
              SHORT.with_(sf=10, so=4, traffic="periodic:40s")):
        events = RadioNetwork(s.with_(upkeep="events")).run()
        batch = run_batch(s)
        for a, b in zip(events.nodes, batch.nodes, strict=True):
            assert (a.generated, a.delivered, a.pending, a.tx_frames) == (
                b.generated, b.delivered, b.pending, b.tx_frames)
            np.testing.assert_allclose(np.sort(a.latencies_s), np.sort(b.latencies_s),
                                       atol=1e-6)
        np.testing.assert_allclose(_charge(batch), _charge(events), rtol=0.01)


def test_batch_engine_with_fading_is_close_to_events() -> None:
    s = SHORT.with_(fading_sigma_db=3.0, radius_m=60.0, duration_s=6 * 3600.0)
    events = RadioNetwork(s).run().summary()
    batch = run_batch(s).summary()
    assert batch["retries"] > 0
    assert batch["delivery_ratio"] == pytest.approx(events["delivery_ratio"], abs=0.01)
    assert batch["retries"] == pytest.approx(events["retries"], rel=0.25)
    assert batch["avg_current_mA_mean"] == pytest.approx(events["avg_current_mA_mean"], rel=0.02)


def test_runs_are_deterministic_for_a_seed() -> None:
    s = SHORT.with_(slot="cap", traffic="poisson:20s", duration_s=1200.0)
    a = RadioNetwork(s).run().as_dict()
    b = RadioNetwork(s).run().as_dict()
    a["summary"].pop("wall_s"), b["summary"].pop("wall_s")
    a["summary"].pop("sim_s_per_wall_s"), b["summary"].pop("sim_s_per_wall_s")
    assert a == b


def test_gts_frames_never_collide_but_cap_frames_do() -> None:
    gts = RadioNetwork(Scenario(nodes=40, rx_chains=8, duration_s=1800.0,
                                traffic="poisson:40s")).run()
    assert gts.summary()["collisions"] == 0
    assert gts.gateway["medium"]["collisions"] == 0
    cap = RadioNetwork(Scenario(nodes=20, rx_chains=8, duration_s=600.0, slot="cap",
                                traffic="poisson:15s")).run()
    assert cap.summary()["collisions"] > 0
    assert cap.summary()["retries"] > 0


def test_auto_engine_and_duration_parsing() -> None:
    assert run(SHORT).engine == "batch"
    assert run(SHORT.with_(slot="cap", duration_s=600.0)).engine == "events"
    assert parse_duration("365d") == 365 * 86400
    assert parse_duration("10m") == 600
    with pytest.raises(ValueError, match="unit"):
        parse_duration("3 parsecs")


def test_year_of_one_hundred_nodes_is_fast() -> None:
    s = Scenario(nodes=100, duration_s=365 * 86400.0, traffic="periodic:600s", rx_chains=8)
    result = run_batch(s)
    summary = result.summary()
    assert summary["generated"] == 100 * 52560
    assert summary["delivery_ratio"] > 0.9999
    assert result.wall_s < 30.0


def test_result_can_be_taken_mid_run_and_twice() -> None:
    net = RadioNetwork(SHORT)
    net.start()
    net.kernel.run(until=1800.0)
    first = net.result()
    again = net.result()
    assert _charge(first) == pytest.approx(_charge(again))
    assert first.nodes[0].energy.horizon_s == 1800.0
    net.kernel.run(until=3600.0)
    assert net.result().nodes[0].energy.charge_total_mas > first.nodes[0].energy.charge_total_mas


@settings(max_examples=8, deadline=None)
@given(nodes=st.integers(1, 12), interval=st.sampled_from(["20s", "45s", "90s", "300s"]),
       model=st.sampled_from(["periodic", "poisson"]), sf=st.sampled_from([7, 8]),
       seed=st.integers(0, 10_000), rx_chains=st.sampled_from([1, 4]),
       downlink=st.booleans())
def test_batch_equals_events_on_random_clean_scenarios(nodes: int, interval: str, model: str,
                                                       sf: int, seed: int, rx_chains: int,
                                                       downlink: bool) -> None:
    s = Scenario(nodes=nodes, duration_s=1200.0, traffic=f"{model}:{interval}", sf=sf,
                 seed=seed, rx_chains=rx_chains, downlink_gts=downlink, mo=6, bo=6)
    events = RadioNetwork(s.with_(upkeep="events")).run()
    batch = run_batch(s)
    for a, b in zip(events.nodes, batch.nodes, strict=True):
        assert (a.generated, a.delivered, a.pending, a.tx_frames, a.retries) == (
            b.generated, b.delivered, b.pending, b.tx_frames, b.retries)
    np.testing.assert_allclose(_charge(batch), _charge(events), rtol=0.01)


@settings(max_examples=6, deadline=None)
@given(nodes=st.integers(1, 8), interval=st.sampled_from(["20s", "60s", "300s"]),
       slot=st.sampled_from(["cap", "gts"]), seed=st.integers(0, 10_000),
       downlink=st.booleans(), cap_rx=st.booleans(),
       association=st.sampled_from(["static", "handshake"]))
def test_upkeep_modes_agree_on_random_scenarios(nodes: int, interval: str, slot: str,
                                                seed: int, downlink: bool, cap_rx: bool,
                                                association: str) -> None:
    """Beacons as events or in closed form: same frames, energy within 1%."""
    s = Scenario(nodes=nodes, duration_s=1200.0, traffic=f"poisson:{interval}", slot=slot,
                 seed=seed, downlink_gts=downlink, cap_rx=cap_rx, association=association,
                 rx_chains=4)
    events = RadioNetwork(s.with_(upkeep="events")).run()
    closed = RadioNetwork(s.with_(upkeep="closed")).run()
    for a, b in zip(events.nodes, closed.nodes, strict=True):
        assert (a.generated, a.delivered, a.tx_frames, a.collisions) == (
            b.generated, b.delivered, b.tx_frames, b.collisions)
    np.testing.assert_allclose(_charge(closed), _charge(events), rtol=0.01)
