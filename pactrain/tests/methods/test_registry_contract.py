"""Method registry contract: PacTrain's methods are registered; hooks refuse late attachment."""

import pytest
import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from pactrain.masks import MaskTracker
from pactrain.methods import (
    HookRegistrationError,
    MethodConfig,
    apply_hook_momentum,
    get_method,
    load_builtin_methods,
    register_hook,
)
from pactrain.pruning import GradualPruner, PruningConfig
from pactrain.train.local_group import run_on_local_group


def test_pactrain_methods_are_registered_with_pruning() -> None:
    methods = load_builtin_methods()
    for name in ("dense", "pactrain", "pactrain-fp32", "pactrain-fp16", "pactrain-ternary"):
        assert name in methods and methods.get(name).uses_pruning
    assert not methods.get("pactrain-fp32").lossy and methods.get("pactrain-ternary").lossy


def test_only_a_method_with_momentum_in_its_hook_turns_the_optimizers_off() -> None:
    def sgd() -> torch.optim.SGD:
        return torch.optim.SGD(nn.Linear(2, 2).parameters(), lr=0.1, momentum=0.9)

    turned_off, kept = sgd(), sgd()
    apply_hook_momentum(get_method("dgc"), turned_off)  # DGC applies it in its hook
    apply_hook_momentum(get_method("pactrain"), kept)
    assert [g["momentum"] for g in turned_off.param_groups] == [0.0]
    assert [g["momentum"] for g in kept.param_groups] == [0.9]
    adamw = torch.optim.AdamW(nn.Linear(2, 2).parameters())
    with pytest.raises(ValueError, match=r"dgc applies SGD momentum.*--optimizer sgd"):
        apply_hook_momentum(get_method("dgc"), adamw)


def _attach_late(rank: int, world_size: int, name: str) -> str:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Linear(8, 2))
    tracker = MaskTracker(GradualPruner(model, PruningConfig(final_sparsity=0.5)))
    ddp = DistributedDataParallel(model)
    config = MethodConfig(world_size=world_size, rank=rank, probe_link=False)
    method = get_method(name).factory(None, ddp, config, tracker)
    ddp(torch.randn(2, 4)).sum().backward()
    try:
        register_hook(ddp, method)
    except HookRegistrationError as error:
        return str(error)
    return "attached"


@pytest.mark.parametrize("name", ["dense", "pactrain-fp32"])
def test_hook_registered_after_training_started_is_refused(name: str) -> None:
    for message in run_on_local_group(_attach_late, 2, name):
        assert "before the first backward pass" in message


def test_pactrain_method_needs_the_tracker() -> None:
    with pytest.raises(ValueError, match="mask tracker"):
        get_method("pactrain-fp32").factory(None, nn.Linear(2, 2), MethodConfig(world_size=2),
                                            None)


def _two_steps_of_every_method(rank: int, world_size: int) -> dict[str, tuple]:
    """Each registered method runs two synchronized steps of a tiny model; its summary's
    ``comm_s_per_step`` and payload steps."""
    out = {}
    for name in load_builtin_methods().names():
        spec = get_method(name)
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 8), nn.Linear(8, 2))
        tracker = None
        if spec.uses_pruning:
            tracker = MaskTracker(GradualPruner(model, PruningConfig(
                final_sparsity=0.5, start_step=0, end_step=0, frequency=1)))
            tracker.step(0)
        ddp = DistributedDataParallel(model, bucket_cap_mb=0.0001)
        config = MethodConfig(world_size=world_size, rank=rank, probe_link=False)
        method = spec.factory(None, ddp, config, tracker)
        register_hook(ddp, method)
        for step in range(2):
            ddp(torch.randn(2, 4, generator=torch.Generator().manual_seed(step))).sum().backward()
        out[name] = (method.summary()["comm_s_per_step"], method.payload.steps,
                     method.payload.total_bytes)
    return out


def test_every_method_reports_comm_seconds_per_step_the_same_way() -> None:
    got = run_on_local_group(_two_steps_of_every_method, 2)[0]
    assert set(got) == set(load_builtin_methods().names())
    for name, (seconds, steps, nbytes) in got.items():
        assert steps == 2, name
        assert isinstance(seconds, float), (name, seconds)
        assert (seconds == 0.0) == (nbytes == 0) == (name == "no-comm"), (name, seconds)


def _typed_by_hand(rank: int, world_size: int) -> dict:
    from torch.nn.parallel import DistributedDataParallel

    from pactrain.methods import MethodConfig, get_method

    errors = {}
    for label, config in (("world_size", MethodConfig(world_size=1, rank=rank)),
                          ("rank", MethodConfig(world_size=world_size))):
        try:
            get_method("dense").factory(None, DistributedDataParallel(nn.Linear(2, 2)),
                                        config, None)
        except ValueError as err:
            errors[label] = str(err)
    return errors


def test_a_config_that_disagrees_with_the_group_is_refused() -> None:
    from pactrain.train.local_group import run_on_local_group

    errors = run_on_local_group(_typed_by_hand, 2)
    assert "has 2 ranks" in errors[0]["world_size"] and "has 2 ranks" in errors[1]["world_size"]
    assert "rank" not in errors[0]  # rank 0 defaulted right by chance
    assert "this is rank 1" in errors[1]["rank"]


def test_one_world_size_limit_per_method_checked_before_anything_is_built() -> None:
    from pactrain.methods import get_method

    for name in ("pactrain-ternary", "terngrad"):
        spec = get_method(name)
        assert spec.max_world_size == 127
        spec.check_world_size(127)
        with pytest.raises(ValueError, match=rf"{name} serves at most 127 workers.*has 128"):
            spec.check_world_size(128)
    for name in ("pactrain", "pactrain-packed", "dense", "powersgd"):
        get_method(name).check_world_size(10_000)      # no limit
