"""The operating point: the choice alone (pure), then on real gloo groups through
``pactrain.attach`` with no tuning flag."""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel

import pactrain
from pactrain.costs import LinkModel
from pactrain.operating_point import (
    GRADUAL_SCHEDULE,
    Measured,
    OperatingPoint,
    Rules,
    budget_entries,
    choose,
    provisional,
    revisit_send_density,
)
from pactrain.train.local_group import run_on_local_group

ENTRIES = 1_000_000
#: The rules with the wire allowed as long as the compute (the defaults' tuning aside).
RULES = Rules(wait_factor=1.0)


def _price(seconds_per_entry: float, alpha: float = 0.001):
    """A link that costs ``alpha`` plus ``seconds_per_entry`` for each entry sent."""
    return lambda sent: alpha + seconds_per_entry * sent


def test_the_default_rules_halve_the_wire_time() -> None:
    point = choose(_price(1e-6), Measured(0.4, ENTRIES, 4), {})
    # 0.5 x 0.4 s of wire holds (0.2 - 0.001) / 1e-6 = 199,000 entries
    assert point.send_density == pytest.approx(0.199, rel=0.01)


def test_a_slow_link_prunes_from_the_start_and_caps_the_bytes() -> None:
    # the whole gradient: 1 s on the wire against 0.1 s of compute
    point = choose(_price(1e-6), Measured(0.1, ENTRIES, 4), {}, RULES)
    assert point.slow
    assert (point.prune_start, point.prune_end, point.prune_initial) == RULES.slow_schedule
    # 0.1 s of wire holds (0.1 - 0.001) / 1e-6 = 99,000 entries: density ~0.099
    assert point.send_density == pytest.approx(0.099, rel=0.01)
    assert point.chosen_by == {"prune_start": "policy", "prune_end": "policy",
                               "prune_initial": "policy", "send_density": "policy"}
    assert len(point.reasons) == 3 and "slow link" in point.reasons[0]


def test_a_fast_link_keeps_the_gradual_schedule_and_sends_everything() -> None:
    point = choose(_price(1e-9), Measured(0.1, ENTRIES, 4), {})
    assert not point.slow and point.send_density is None
    assert (point.prune_start, point.prune_end, point.prune_initial) == GRADUAL_SCHEDULE


def test_what_the_user_set_wins() -> None:
    point = choose(_price(1e-6), Measured(0.1, ENTRIES, 4),
                   {"prune_end": 0.5, "send_density": 0.3})
    assert point.prune_end == 0.5 and point.send_density == 0.3
    assert point.chosen_by["prune_end"] == "user" and point.chosen_by["send_density"] == "user"
    assert point.chosen_by["prune_start"] == "policy"
    assert any("(user)" in line for line in point.reasons)
    with pytest.raises(ValueError, match="prune_end"):
        choose(_price(1e-6), Measured(0.1, ENTRIES, 4), {"prune_end": 0.0,
                                                          "prune_start": 0.5})
    # a bound the policy chooses never crosses one the user set (fast link: gradual 0.1)
    early_end = choose(_price(1e-9), Measured(0.1, ENTRIES, 4), {"prune_end": 0.05})
    assert (early_end.prune_start, early_end.prune_end) == (0.05, 0.05)
    assert provisional({"prune_start": 0.5}).prune_end == 0.5


def test_the_budget_never_falls_below_the_floor() -> None:
    point = choose(_price(1e-3), Measured(0.1, ENTRIES, 4), {})  # 100 entries fit
    assert point.send_density == Rules().min_send_density
    assert "(the floor)" in point.reasons[-1]


def test_budget_bisection_finds_the_largest_fitting_count() -> None:
    price = _price(1e-6, alpha=0.0)
    fits = budget_entries(price, ENTRIES, 0.25)
    assert price(fits) <= 0.25 < price(fits + ENTRIES // 1000 + 1)


def test_revisiting_moves_the_budget_only_past_the_hysteresis() -> None:
    point = choose(_price(1e-6), Measured(0.1, ENTRIES, 4), {}, RULES)
    assert revisit_send_density(point, _price(1.1e-6), Measured(0.1, ENTRIES, 4),
                                RULES) is None
    moved = revisit_send_density(point, _price(1e-6), Measured(0.2, ENTRIES, 4), RULES,
                                 step=50)
    assert moved is not None and moved.send_density == pytest.approx(0.199, rel=0.01)
    assert moved.prune_end == point.prune_end and moved.step == 50
    user = choose(_price(1e-6), Measured(0.1, ENTRIES, 4), {"send_density": 0.3}, RULES)
    assert revisit_send_density(user, _price(1e-6), Measured(0.5, ENTRIES, 4),
                                RULES) is None


def test_the_provisional_point_sends_the_floor_and_keeps_what_the_user_set() -> None:
    point = provisional({})
    assert point.send_density == Rules().min_send_density and point.step == 0
    assert (point.prune_start, point.prune_end, point.prune_initial) == Rules().slow_schedule
    mine = provisional({"send_density": 0.2, "prune_end": 0.5})
    assert mine.send_density == 0.2 and mine.prune_end == 0.5
    assert mine.chosen_by["send_density"] == "user" == mine.chosen_by["prune_end"]


def test_a_point_survives_its_dict() -> None:
    point = choose(_price(1e-6), Measured(0.1, ENTRIES, 4), {"prune_end": 0.3}, step=1)
    assert OperatingPoint.from_dict(point.to_dict()) == point


# -- on a real group ----------------------------------------------------------------------
#: What the policy is told the link is: 10 Mbit/s (1.25 MB/s) with 0.5 s a collective (a
#: satellite hop), so under any load the link is slow, the budget is the floor and every
#: run decides the same.
SLOW_LINK = LinkModel(alpha_s=0.5, beta_s_per_byte=1 / 1.25e6)
#: A link far faster than any step computes.
FAST_LINK = LinkModel(alpha_s=1e-6, beta_s_per_byte=1e-12)


def _model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                         nn.Linear(256, 4))


def _run(rank: int, world_size: int, slow: bool, plan: list | None = None,
         steps: range = range(12), state: dict | None = None) -> dict:
    model = _model()
    ddp = DistributedDataParallel(model)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
    if state is not None:
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
    pt = pactrain.attach(ddp, optimizer, sparsity=0.9, total_steps=40, plan=plan,
                         state=None if state is None else state["pactrain"])
    if plan is None:  # what a probe of that link would measure
        pt.method.state.policy.link = SLOW_LINK if slow else FAST_LINK
    sent = []
    for step in steps:
        generator = torch.Generator().manual_seed(100 * step + rank)
        x = torch.randn(16, 64, generator=generator)
        y = torch.randint(0, 4, (16,), generator=generator)
        before = pt.method.payload.total_bytes
        optimizer.zero_grad()
        nn.functional.cross_entropy(ddp(x), y).backward()
        optimizer.step()
        sent.append(pt.method.payload.total_bytes - before)
    summary = pt.summary()
    return {"point": summary["operating_point"], "decisions": pt.decisions(),
            "plan": summary["plan"], "sent": sent, "density": pt.density(),
            "send_density": pt.method.state.send_density,
            "start_step": pt.tracker.pruner.config.start_step,
            "weights": [p.detach().clone() for p in model.parameters()],
            "saved": {"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                      "pactrain": pt.state_dict()}}


def test_attach_defaults_choose_the_point_on_every_rank_alike() -> None:
    results = run_on_local_group(_run, 2, True)
    first = results[0]
    assert first["point"]["slow"] and first["point"]["step"] == 2
    assert results[1]["point"] == first["point"]  # agreed numbers, one decision
    assert first["start_step"] == 2  # pruned from the first budgeted step on
    assert first["density"] < 1.0  # and pruning ran
    assert first["send_density"] == first["point"]["send_density"] is not None
    assert len(first["decisions"]) == 3
    assert {"step": 2, "operating_point": first["point"]} in first["plan"]
    assert [e["step"] for e in first["plan"] if "operating_point" in e] == [0, 2]
    # from step 0 the budget (the floor, 5% of the entries, in whole chunks of 256 per
    # parameter) caps what a step sends, whatever tier carries it: under 10% of the
    # gradient in fp32
    dense_fp32 = 4 * sum(p.numel() for p in _model().parameters())
    assert max(first["sent"]) < 0.1 * dense_fp32
    for a, b in zip(first["weights"], results[1]["weights"], strict=True):
        assert torch.equal(a, b)


def test_a_fast_link_keeps_todays_defaults() -> None:
    results = run_on_local_group(_run, 2, False)
    point = results[0]["point"]
    assert not point["slow"] and point["send_density"] is None
    assert results[0]["start_step"] == int(GRADUAL_SCHEDULE[0] * 40)
    assert results[0]["send_density"] is None  # the provisional budget is undone
    # from step 2 every kept entry travels again: more than the budgeted first steps
    assert min(results[0]["sent"][3:]) > 2 * max(results[0]["sent"][:2])


def test_a_recorded_plan_replays_the_point_and_the_weights() -> None:
    first = run_on_local_group(_run, 2, True)
    again = run_on_local_group(_run, 2, True, first[0]["plan"])
    assert again[0]["point"] == first[0]["point"]
    assert again[0]["sent"] == first[0]["sent"]
    for a, b in zip(first[0]["weights"], again[0]["weights"], strict=True):
        assert torch.equal(a, b)


def test_a_resumed_run_keeps_its_point_and_continues_bit_identically() -> None:
    whole = run_on_local_group(_run, 2, True)
    half = run_on_local_group(_run, 2, True, None, range(7))
    saved = [r["saved"] for r in half]
    state = {"model": saved[0]["model"], "optimizer": saved[0]["optimizer"],
             "pactrain": [s["pactrain"] for s in saved]}
    rest = run_on_local_group(_run, 2, True, None, range(7, 12), state)
    def chosen(point: dict) -> dict:  # the reasons quote each run's own timings
        return {k: v for k, v in point.items() if k != "reasons"}

    assert chosen(rest[0]["point"]) == chosen(whole[0]["point"])
    assert rest[0]["start_step"] == whole[0]["start_step"]
    assert rest[0]["sent"] == whole[0]["sent"][7:]
    for a, b in zip(whole[0]["weights"], rest[0]["weights"], strict=True):
        assert torch.equal(a, b)


def test_an_unset_bound_of_the_schedule_never_crosses_a_set_one() -> None:
    from pactrain.operating_point import schedule_or_gradual

    assert schedule_or_gradual(None, None, None) == GRADUAL_SCHEDULE
    assert schedule_or_gradual(None, 0.05, None) == (0.05, 0.05, 0.0)  # --prune-end 0.05
    assert schedule_or_gradual(0.7, None, None) == (0.7, 0.7, 0.0)
    assert schedule_or_gradual(0.0, 0.2, 0.5) == (0.0, 0.2, 0.5)
