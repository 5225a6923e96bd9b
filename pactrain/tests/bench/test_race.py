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


def test_each_target_picks_its_entrants_and_names_a_missing_one() -> None:
    from pactrain.bench.runner import race_models
    from pactrain.models import load_builtin_models

    models = load_builtin_models()
    both = BenchConfig(models=["digits-cnn", "lm-gpt", "gpt-tiny"], time_to_accuracy=0.9,
                       time_to_loss=2.5)
    assert race_models(both, models) == ["digits-cnn", "lm-gpt"]  # gpt-tiny: perplexity
    loss_only = BenchConfig(models=["digits-cnn", "lm-gpt"], time_to_loss=2.5)
    assert race_models(loss_only, models) == ["lm-gpt"]
    with pytest.raises(ValueError, match="--time-to-loss needs a language model"):
        race_models(BenchConfig(models=["digits-cnn"], time_to_loss=2.5), models)


@pytest.mark.slow
def test_loss_race_stops_once_the_held_out_loss_is_low_enough() -> None:
    from pactrain.bench.report import race_cells, race_title

    config = BenchConfig(models=["lm-gpt"], methods=["pactrain"], workers=2,
                         time_to_loss=9.0, tta_max_steps=20, tta_eval_every=5,
                         tta_batch_size=4)
    with bench_network(2, want_throttle=False) as network:
        curve = race_to_accuracy(config, "lm-gpt", "pactrain", network, None, 9.0,
                                 "test_loss")
    assert curve.error is None, curve.error
    (_wall, step, loss), = curve.points  # an untrained byte model: loss near ln 256 < 9
    assert step == curve.reached_step == 5 and 4.0 < loss < 9.0
    cells = race_cells(vars(curve))
    assert cells[5] == f"loss {loss:.3f}"
    assert race_title([vars(curve)]) == "time to held-out loss 9.000 (training wall time)"
