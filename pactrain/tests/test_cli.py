"""The console script answers --version and --help without importing torch."""

import json
import subprocess
import sys

import pytest


def test_version_and_help() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "pactrain.cli", "--version"], capture_output=True, text=True,
        check=True,
    )
    assert out.stdout.strip() == "pactrain 0.1.0"
    helped = subprocess.run(
        [sys.executable, "-m", "pactrain.cli", "--help"], capture_output=True, text=True,
        check=True,
    )
    assert "Usage" in helped.stdout


def _pactrain(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pactrain.cli", *args], capture_output=True,
                          text=True, timeout=timeout)


def test_help_lists_the_names_and_they_match_the_registries() -> None:
    from pactrain.methods import load_builtin_methods
    from pactrain.models import load_builtin_models
    from pactrain.names import METHOD_NAMES, MODEL_NAMES

    assert tuple(sorted(load_builtin_models().names())) == MODEL_NAMES
    assert tuple(sorted(load_builtin_methods().names())) == METHOD_NAMES
    helped = " ".join(_pactrain("train", "--help").stdout.split())
    for name in ("resnet18", "vit-tiny", "powersgd-r2", "pactrain-packed"):
        assert name in helped


def test_unknown_names_are_refused_before_any_worker_starts() -> None:
    for flag, wrong, listed in (("--model", "resnet-18", "resnet18"),
                                ("--method", "powersgd4", "powersgd-r2"),
                                ("--prune-scope", "magnitude", "lamp"),
                                ("--optimizer", "adam", "adamw")):
        done = _pactrain("train", flag, wrong, "--steps", "2", timeout=60)
        assert done.returncode == 2  # a usage error, not 59 lines of worker tracebacks
        assert wrong in done.stderr and listed in done.stderr
        assert "Traceback" not in done.stderr and done.stdout == ""


def test_bench_refuses_unknown_methods_and_dgc_under_adamw_before_any_run() -> None:
    for args, said in ((("--methods", "dense,powersgd4"), "unknown method 'powersgd4'"),
                       (("--methods", "dense,dgc", "--optimizer", "adamw"),
                        "dgc applies SGD momentum inside its hook")):
        done = _pactrain("bench", "--models", "digits-cnn", *args, timeout=60)
        assert done.returncode == 2, done.stderr
        assert said in " ".join(done.stderr.split()) and "Traceback" not in done.stderr


def test_sampling_flags_are_checked_before_any_worker_starts() -> None:
    for args, said in ((("--send-density", "0"), "must be in (0, 1], got 0.0"),
                       (("--send-density", "0.1", "--send-select", "random"), "'random'"),
                       (("--method", "powersgd", "--send-density", "0.1"),
                        "powersgd does not sample"),
                       (("--rounding", "up"), "rounding must be one of stochastic, nearest"),
                       (("--rounding", "nearest", "--no-error-feedback"),
                        "drop --no-error-feedback"),
                       (("--method", "dense", "--rounding", "nearest"),
                        "dense sends no ternary codes"),
                       (("--method", "dgc", "--optimizer", "adamw"),
                        "trains only with --optimizer sgd")):
        done = _pactrain("train", *args, "--steps", "2", timeout=60)
        assert done.returncode == 2, done.stderr
        assert said in " ".join(done.stderr.split()) and "Traceback" not in done.stderr


def test_json_dash_puts_only_the_result_on_stdout() -> None:
    done = _pactrain("train", "--steps", "3", "--workers", "2", "--json", "-")
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)  # nothing but JSON: progress went to stderr
    assert result["steps"] == 3 and result["workers"] == 2
    assert result["wire_tx_bytes_per_step"] is None  # loopback: no interface of its own
    summary = json.loads(_pactrain("train", "--steps", "30", "--workers", "2", "--method",
                                   "pactrain-fp32").stdout)
    assert summary["final_payload_vs_ideal"] == pytest.approx(1.0)  # compacted: the ideal


USER_MODEL = '''
from torch import nn
from pactrain.models import register_model
from pactrain.models.digits_task import digits_spec

register_model(digits_spec(
    "my-digits-mlp", lambda: nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.ReLU(),
                                           nn.Linear(32, 10)),
    default_batch_size=16, default_lr=0.05, description="a user's own model"))
'''


def test_a_model_of_the_users_own_trains_on_every_worker(tmp_path) -> None:
    module = tmp_path / "my_model.py"
    module.write_text(USER_MODEL)
    done = _pactrain("train", "--model-module", str(module), "--model", "my-digits-mlp",
                     "--workers", "2", "--steps", "6", "--json", "-", timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert result["model"] == "my-digits-mlp" and result["steps"] == 6
    # 64x32 + 32 + 32x10 + 10 fp32 parameters: the dense gradient is that model's
    assert result["dense_payload_bytes_per_step"] == 4 * (64 * 32 + 32 + 32 * 10 + 10)
    broken = tmp_path / "broken_model.py"
    broken.write_text("raise RuntimeError('my model is broken')\n")
    for wrong, said in ((str(tmp_path / "missing.py"), "does not exist"),
                        ("no_such_module_here", "no_such_module_here"),
                        (str(broken), "RuntimeError: my model is broken")):
        refused = _pactrain("train", "--model-module", wrong, "--model", "my-digits-mlp",
                            "--steps", "2", timeout=60)
        assert refused.returncode == 2 and said in " ".join(refused.stderr.split())
        assert "Traceback" not in refused.stderr
