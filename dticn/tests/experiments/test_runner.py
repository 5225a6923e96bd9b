"""Runs are deterministic for a seed, serial and parallel agree, statistics are right."""

from __future__ import annotations

import math

import pytest

from dticn.experiments.metrics import METRICS, aggregate, t_quantile_975
from dticn.experiments.params import Experiment
from dticn.experiments.runner import run_many, run_one
from dticn.experiments.world import transaction_times

SHORT = {"duration_s": 600.0, "warmup_s": 60.0, "tail_s": 120.0}


def _strip(row: dict) -> dict:
    return {k: v for k, v in row.items() if k not in ("wall_s",)}


def test_same_seed_same_row_different_seed_different_traffic() -> None:
    a = run_one(Experiment(config="rice-schedule", seed=3, **SHORT))
    b = run_one(Experiment(config="rice-schedule", seed=3, **SHORT))
    assert _strip(a) == _strip(b)
    t3 = transaction_times(Experiment(seed=3, **SHORT), 1)
    t4 = transaction_times(Experiment(seed=4, **SHORT), 1)
    assert not (len(t3) == len(t4) and (t3 == t4).all())
    assert all(50 <= g <= 70 for g in (t3[1:] - t3[:-1]))


@pytest.mark.slow
def test_parallel_equals_serial() -> None:
    exps = [Experiment(config=c, seed=s, loss=0.05, **SHORT)
            for c in ("v3-inr", "push-draft") for s in (1, 2)]
    serial = run_many(exps, workers=1)
    parallel = run_many(exps, workers=2)
    assert [_strip(r) for r in serial] == [_strip(r) for r in parallel]


def test_loss_on_internet_links_is_seeded_and_felt() -> None:
    lossy = run_one(Experiment(config="v1-inr", seed=1, loss=0.3, **SHORT))
    clean = run_one(Experiment(config="v1-inr", seed=1, **SHORT))
    assert lossy["packets_by_link"] != clean["packets_by_link"]


def test_aggregate_mean_and_t_interval() -> None:
    rows = [{"config": "x", "seed": s, "duration_s": 1.0, "loss": 0.0, "nodes": 1,
             "battery_mah": 2600.0, "items": 10, "delivered": 10, "latencies_s": [1.0],
             "packets_by_link": {"lora:up:data": 10},
             **{k: float(v) for k in (*METRICS, "internet_interests_per_item",
                                      "internet_data_per_item", "lora_interests_per_item",
                                      "lora_data_per_item", "internet_packets_per_transaction",
                                      "lora_frames_per_transaction")}}
            for s, v in ((1, 1.0), (2, 2.0), (3, 3.0))]
    agg = aggregate(rows)
    assert agg["success_ratio"] == 2.0
    assert math.isclose(agg["success_ratio_ci95"], 4.303 * 1.0 / math.sqrt(3))
    assert agg["packets_per_item_by_link"] == {"lora:up:data": 1.0}
    assert agg["packets_per_transaction_by_link"] == {"lora:up:data": 1.0}
    assert t_quantile_975(1) == 12.706 and t_quantile_975(1000) == 1.96


def test_experiment_refuses_bad_settings_with_the_fix() -> None:
    with pytest.raises(ValueError, match="pattern"):
        Experiment(pattern="bursty")
    with pytest.raises(ValueError, match="interval"):
        Experiment(interval_s=(70.0, 50.0))
