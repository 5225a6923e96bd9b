"""The time-to-accuracy race trains the model it is given (real workers on loopback)."""

from __future__ import annotations

import pytest

from pactrain.bench.config import BenchConfig
from pactrain.bench.network import bench_network
from pactrain.bench.runner import race_to_accuracy


@pytest.mark.slow
def test_race_trains_and_evaluates_the_named_model() -> None:
    config = BenchConfig(models=["resnet18"], methods=["dense"], workers=2,
                         time_to_accuracy=0.0, tta_max_steps=10, tta_eval_every=5,
                         tta_batch_size=8)
    with bench_network(2, want_throttle=False) as network:
        curve = race_to_accuracy(config, "resnet18", "dense", network, "100mbit")
    assert curve.error is None, curve.error
    assert (curve.model, curve.method, curve.bandwidth) == ("resnet18", "dense", "loopback")
    (wall, step, accuracy), = curve.points  # a target of 0 is met at the first evaluation
    assert step == curve.reached_step == 5 and wall == curve.reached_s > 0
    assert 0.0 <= accuracy <= 1.0


def test_race_refuses_to_run_without_a_target() -> None:
    with bench_network(2, want_throttle=False) as network, \
            pytest.raises(ValueError, match="--time-to-accuracy"):
        race_to_accuracy(BenchConfig(), "resnet18", "dense", network, None)
