"""Grid order, derived columns, the JSON schema, the table and the plots of a bench run."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from pactrain.bench import netns
from pactrain.bench.config import BenchConfig, Cell
from pactrain.bench.network import bench_network
from pactrain.bench.report import (
    REQUIRED_ROW_FIELDS,
    TABLE_HEADERS,
    add_derived,
    markdown_table,
    output_prefix,
    race_cells,
    summarize,
    table_cells,
    validate,
    write_json,
)
from pactrain.bench.runner import cpu_model, environment, race_models, run_config
from pactrain.models import load_builtin_models
from pactrain.plots import plot_bench


def test_grid_interleaves_methods_and_rotates_them_per_repeat() -> None:
    config = BenchConfig(models=["m"], methods=["a", "b", "c"], bandwidths=["10mbit"],
                         repeats=2, compute_floor=False)
    order = [(c.method, c.repeat) for c in config.cells()]
    assert order == [("a", 0), ("b", 0), ("c", 0), ("b", 1), ("c", 1), ("a", 1)]


def test_compute_floor_runs_once_per_repeat_at_the_first_bandwidth() -> None:
    config = BenchConfig(models=["m"], methods=["a", "b"], bandwidths=["10mbit", "1gbit"],
                         repeats=2)
    floor = [(c.bandwidth, c.repeat) for c in config.cells() if c.method == "no-comm"]
    assert floor == [("10mbit", 0), ("10mbit", 1)]
    assert sum(c.bandwidth == "1gbit" for c in config.cells()) == 4


def test_exposed_communication_is_step_time_above_the_compute_floor() -> None:
    rows = add_derived([_row("no-comm", 64.0, 0.0), _row("pactrain", 32.0, 50.0),
                        _row("dense", 16.0, 1000.0)])
    step = {r["method"]: r["step_s"] for r in rows}
    assert step["no-comm"] == pytest.approx(rows[0]["batch_size"] * rows[0]["workers"] / 64)
    assert rows[1]["exposed_comm_s_per_step"] == pytest.approx(step["pactrain"] - step["no-comm"])
    assert rows[2]["exposed_comm_s_per_step"] == pytest.approx(3 * step["no-comm"])
    assert rows[0]["exposed_comm_s_per_step"] == pytest.approx(0.0)
    assert add_derived([_row("dense", 16.0, 1.0)])[0]["exposed_comm_s_per_step"] is None


def test_host_cpu_busy_is_the_workers_cpu_over_the_cores_step_time() -> None:
    row = {**_row("pactrain", 32.0, 50.0), "cpu_s_per_step": 0.1, "host_cores": 2}
    derived = add_derived([row, _row("dense", 16.0, 1000.0)])
    step = derived[0]["step_s"]
    assert derived[0]["host_cpu_busy"] == pytest.approx(
        derived[0]["workers"] * 0.1 / (step * 2))
    assert derived[1]["host_cpu_busy"] is None  # no CPU clock in that row: not guessed
    cells = table_cells(summarize(derived)[0])
    assert cells[TABLE_HEADERS.index("CPU busy")] == f"{derived[0]['host_cpu_busy']:.0%}"


def test_a_benchmark_prefix_keeps_its_dots_and_drops_a_named_extension() -> None:
    assert output_prefix("runs/x-s0.9") == Path("runs/x-s0.9")
    assert output_prefix("runs/x-s0.9.json") == Path("runs/x-s0.9")
    assert output_prefix("x.png") == Path("x") and output_prefix("x.md") == Path("x")
    assert output_prefix(".json") == Path(".json")  # nothing left to be a prefix


def test_methods_refuse_options_they_do_not_read() -> None:
    from pactrain.methods import get_method

    get_method("powersgd").check_options({"rank": 2})
    with pytest.raises(ValueError, match="accepts: density"):
        get_method("topk").check_options({"densty": 0.1})
    with pytest.raises(ValueError, match="takes no option rank"):
        get_method("powersgd-r1").check_options({"rank": 4})


def test_config_refuses_what_cannot_be_measured() -> None:
    with pytest.raises(ValueError, match="nothing to time"):
        BenchConfig(steps=5, warmup_steps=5)
    with pytest.raises(ValueError, match="at least 2"):
        BenchConfig(workers=1)
    with pytest.raises(ValueError, match="--tta-prune-initial must be in"):
        BenchConfig(sparsity=0.8, tta_prune_initial=0.9)  # above the final sparsity
    with pytest.raises(ValueError, match="unknown optimizer 'adam'; choose one of sgd, adamw"):
        BenchConfig(optimizer="adam")
    assert BenchConfig(optimizer="adamw").optimizer == "adamw"
    with pytest.raises(ValueError, match="--bucket-cap-mb must be > 0"):
        BenchConfig(bucket_cap_mb=0)
    cell = Cell("digits-cnn", "pactrain", "10mbit", 0)
    assert run_config(BenchConfig(bucket_cap_mb=5), cell).bucket_cap_mb == 5
    assert run_config(BenchConfig(), cell).bucket_cap_mb is None  # PyTorch's own
    assert BenchConfig(powersgd_rank=2).method_options("powersgd") == {"rank": 2}
    assert BenchConfig(topk_density=0.01).method_options("dgc") == {"density": 0.01}
    assert BenchConfig().method_options("topk") == {}
    assert BenchConfig(powersgd_rank=2).method_options("powersgd-r1") == {}  # fixed rank
    assert BenchConfig(topk_density=0.01).method_options("pactrain") == {}


def _row(method: str, speed: float, payload: float, accuracy: float | None = None) -> dict:
    return {"model": "resnet18", "method": method, "bandwidth": "100mbit", "repeat": 0,
            "workers": 4, "sparsity": 0.8, "batch_size": 8, "samples_per_s": speed,
            "payload_bytes_per_step": payload, "dense_payload_bytes_per_step": 1000.0,
            "wire_bytes_per_step": 1.5 * payload, "accuracy": accuracy, "perplexity": None,
            "elapsed_s": 10.0, "error": None}


def test_derived_columns_speedup_and_ratio_to_ideal() -> None:
    rows = add_derived([_row("dense", 10.0, 1000.0), _row("pactrain", 50.0, 50.0, 0.9)])
    assert rows[1]["speedup_vs_dense"] == pytest.approx(5.0)
    assert rows[1]["ideal_bytes_per_step"] == pytest.approx(200.0)  # (1 - 0.8) x dense
    assert rows[1]["ratio_to_ideal"] == pytest.approx(0.25)
    assert rows[0]["ratio_to_ideal"] == pytest.approx(5.0)
    (_dense, pactrain) = summarize(rows)
    assert pactrain["samples_per_s"] == 50.0 and pactrain["runs"] == 1


def test_json_schema_is_written_and_checked(tmp_path: Path) -> None:
    rows = add_derived([_row("dense", 10.0, 1000.0)])
    path = tmp_path / "bench.json"
    write_json(path, rows, {"throttled": True})
    document = json.loads(path.read_text())
    validate(document)
    assert set(REQUIRED_ROW_FIELDS) <= set(document["rows"][0])
    del document["rows"][0]["wire_bytes_per_step"]
    with pytest.raises(ValueError, match="wire_bytes_per_step"):
        validate(document)
    with pytest.raises(ValueError, match="rows"):
        validate({"environment": {}})


def test_markdown_table_and_plots(tmp_path: Path) -> None:
    rows = add_derived([_row("dense", 10.0, 1000.0, 0.95), _row("pactrain", 50.0, 50.0, 0.94)])
    table = markdown_table(rows)
    assert "| resnet18 | 100mbit | pactrain | 50.00 | 5.00x |" in table
    # the bench's dense entrant prunes too: the table says so, and says nothing at 0
    assert "| resnet18 | 100mbit | dense (pruned to 80%) | 10.00 |" in table
    unpruned = markdown_table(add_derived([{**_row("dense", 10.0, 1000.0), "sparsity": 0.0}]))
    assert "| resnet18 | 100mbit | dense | 10.00 |" in unpruned
    curves = [_curve(model, bw, method) for model in ("resnet18", "vit-tiny")
              for bw in ("10mbit", "100mbit") for method in ("dense", "pactrain")]
    document = {"rows": rows, "environment": {"config": {"time_to_accuracy": 0.9}},
                "curves": curves}
    validate(document)
    out = plot_bench(document, tmp_path / "bench.png")  # 1 throughput + 4 race panels
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # throughput, bytes and 4 races in 2 rows of 3 panels (5 x 4 inches at 110 dpi): no
    # compute floor ran, so no slot is left for a blank exposed-communication panel
    assert struct.unpack(">II", out.read_bytes()[16:24]) == (3 * 550, 2 * 440)
    loopback = [{**row, "bandwidth": "loopback"} for row in rows]  # bars, no rate axis
    without_race = plot_bench({**document, "rows": loopback, "curves": []},
                              tmp_path / "runs.png")
    assert without_race.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _curve(model: str, bandwidth: str, method: str, reached: bool = True) -> dict:
    return {"model": model, "method": method, "bandwidth": bandwidth,
            "points": [(1.0, 50, 0.5), (2.0, 100, 0.92)],
            "reached_s": 2.0 if reached else None, "reached_step": 100 if reached else None,
            "error": None}


def test_race_cells_are_every_method_of_the_named_models_at_every_bandwidth() -> None:
    config = BenchConfig(models=["resnet18", "gpt-tiny"], methods=["dense", "pactrain"],
                         bandwidths=["10mbit", "100mbit"], time_to_accuracy=0.95)
    cells = config.race_cells(["resnet18"])
    assert [(c.model, c.bandwidth, c.method) for c in cells] == [
        ("resnet18", "10mbit", "dense"), ("resnet18", "10mbit", "pactrain"),
        ("resnet18", "100mbit", "dense"), ("resnet18", "100mbit", "pactrain")]
    assert BenchConfig(models=["resnet18"]).race_cells(["resnet18"]) == []  # no target
    with pytest.raises(ValueError, match="tta-eval-every"):
        BenchConfig(time_to_accuracy=0.9, tta_max_steps=10, tta_eval_every=20)


def test_the_race_enters_every_classifier_and_refuses_a_grid_without_one() -> None:
    models = load_builtin_models()
    config = BenchConfig(models=["gpt-tiny", "vit-tiny", "resnet18"], time_to_accuracy=0.9)
    assert race_models(config, models) == ["vit-tiny", "resnet18"]
    with pytest.raises(ValueError, match="needs a classifier"):
        race_models(BenchConfig(models=["gpt-tiny"], time_to_accuracy=0.9), models)


def test_race_run_config_trains_the_named_model_at_its_default_batch() -> None:
    config = BenchConfig(models=["vit-tiny"], time_to_accuracy=0.9, batch_size=4)
    (cell, *_) = config.race_cells(["vit-tiny"])
    run = run_config(config, cell, batch_size=config.tta_batch_size)
    assert run.model == "vit-tiny" and run.batch_size is None and run.evaluate
    assert run_config(config, cell).batch_size == 4  # the grid keeps --batch-size


def test_curves_are_validated_and_tabled() -> None:
    document = {"rows": [], "environment": {},
                "curves": [_curve("resnet18", "10mbit", "dense"),
                           _curve("resnet18", "10mbit", "topk", reached=False)]}
    validate(document)
    assert race_cells(document["curves"][0]) == [
        "resnet18", "10mbit", "dense", "2.0 s", "100", "92.0%", "2"]
    assert race_cells(document["curves"][1])[3] == "not reached"
    pruned = {**document["curves"][0], "sparsity": 0.9}
    assert race_cells(pruned)[2] == "dense (pruned to 90%)"
    assert race_cells({**pruned, "method": "topk"})[2] == "topk"
    del document["curves"][1]["model"]
    with pytest.raises(ValueError, match="lacks \\['model'\\]"):
        validate(document)


def test_without_root_the_bench_says_it_runs_unthrottled(monkeypatch) -> None:
    monkeypatch.setattr(netns.os, "geteuid", lambda: 1000)
    assert netns.can_build() == (False, "not root: network namespaces and tc need root")
    with bench_network(4) as network:
        assert not network.throttled and "not root" in network.reason
        assert network.master_addr == "127.0.0.1" and network.prefix is None
        assert network.label("100mbit") == "loopback"


def test_short_runs_print_no_accuracy_and_say_why() -> None:
    from pactrain.bench.report import metric_hidden, summarize, table_cells

    rows = [{"model": "m", "bandwidth": "100mbit", "method": "dense", "steps": 8,
             "accuracy": 0.1, "samples_per_s": 5.0, "error": None},
            {"model": "m", "bandwidth": "100mbit", "method": "pactrain", "steps": 300,
             "accuracy": 0.9, "samples_per_s": 5.0, "error": None}]
    assert [table_cells(line)[-1] for line in summarize(rows)] == ["(8 steps)", "acc 90.0%"]
    assert metric_hidden(rows) and not metric_hidden(rows[1:])


def test_the_environment_names_the_processor_the_numbers_ran_on() -> None:
    """Two hosts of one class can differ by 60% in CPU time: the JSON says which ran."""
    names = [line.split(":", 1)[1].strip()
             for line in Path("/proc/cpuinfo").read_text().splitlines()
             if line.startswith("model name")]
    if not names:
        pytest.skip("this kernel's /proc/cpuinfo names no processor model")
    assert cpu_model() == names[0]
    with bench_network(2, want_throttle=False) as network:
        env = environment(BenchConfig(), network)
    assert env["cpu_model"] == names[0]
