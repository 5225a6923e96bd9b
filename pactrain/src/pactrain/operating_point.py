"""The run's operating point: when pruning starts, how fast it ramps, and how much a step sends.

Why a policy of its own: the adaptive tier policy (:mod:`pactrain.policy`) prices one
bucket at a time, but the two choices that decide a run on a slow link are whole-run
choices. Left at fixed defaults they choose badly there: ``attach``'s gradual schedule
keeps the model dense for the first 10% of the run and nothing caps what a step sends,
so at 10 Mbit/s a step of fashion-cnn cost 1.8 s where its compute is 0.15-0.2 s
(docs/pactrain-bench.md, "Defaults against tuning").

The decision, taken once every rank has timed two steps (the end of step 1,
:mod:`pactrain.operating_control`, from numbers the group agreed on, so every rank decides
the same):

1. ``compute_s``: the step's forward and backward pass (the first training forward to
   the last bucket, :attr:`pactrain.compression.communicator.Communicator.compute_samples`,
   the group's MAX).
2. ``dense_s``: the unpruned gradient at its cheapest tier (the tiers' own prices under
   the measured link, :meth:`pactrain.policy.AdaptivePolicy.costs`).
3. The link is *slow* when ``dense_s > compute_s``: sending everything would cost more
   than computing it. Then:

   - **send budget**: the most entries whose cheapest price fits ``wait_factor x
     compute_s`` (the bytes that travel while the step computes, times what learning per
     step says is worth waiting for), as a share of the gradient: ``send_density``,
     never below ``min_send_density`` (below it learning per step falls off,
     :class:`Rules`). Revisited at every link refresh (:func:`revisit_send_density`).
   - **schedule**: :attr:`Rules.slow_schedule` (the ramp to the final sparsity over the
     first 20% of the run, from the step the budget starts).

   On a fast link: no send budget and :attr:`Rules.fast_schedule` (``attach``'s
   gradual 0.1-0.6 ramp).

What the user set explicitly (``prune_start``, ``prune_end``, ``prune_initial``,
``send_density``) is kept as given; the policy fills in the rest. Every choice carries
one line saying why (:attr:`OperatingPoint.reasons`), printed by ``summary()`` and the CLI.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

#: The operating-point settings a user may fix (the policy chooses the others).
CHOSEN_SETTINGS: tuple[str, ...] = ("prune_start", "prune_end", "prune_initial",
                                    "send_density")

#: Those of them that lay the pruning schedule.
SCHEDULE_SETTINGS: tuple[str, ...] = CHOSEN_SETTINGS[:3]

#: ``attach``'s schedule when nobody chooses: (prune_start, prune_end, prune_initial),
#: fractions of the run (Zhu and Gupta's gradual pruning over its middle half).
GRADUAL_SCHEDULE: tuple[float, float, float] = (0.1, 0.6, 0.0)


def schedule_or_gradual(start: float | None, end: float | None,
                        initial: float | None) -> tuple[float, float, float]:
    """(prune_start, prune_end, prune_initial) with what is unset taken from
    :data:`GRADUAL_SCHEDULE`, never crossing what is set (an unset end never before a set
    start, an unset start never after a set end): the schedule a run starts with, before
    any operating point is chosen."""
    default_start, default_end, default_initial = GRADUAL_SCHEDULE
    if start is None:
        start = default_start if end is None else min(default_start, end)
    end = max(start, default_end) if end is None else end
    return start, end, default_initial if initial is None else initial


@dataclass(frozen=True)
class Rules:
    """The numbers the choice is made with (measured where a source is given).

    Attributes:
        wait_factor: a step may spend this many times its compute on the wire. With a
            step time ``c + k x d`` (compute ``c``, ``k`` seconds per unit of send
            density ``d``) and steps to a target falling as ``d**-g``, time to target is
            least at ``k x d = g / (1 - g) x c``. Measured at equal steps (fashion-cnn,
            sparsity 0.9, packed, 4 workers x 32, seed 2, 800 steps, on loopback;
            ``benchmarks/operating_points.py``, docs/pactrain-bench.md "How the defaults
            were chosen"), steps to 88% did not improve from send density 0.05 to 0.1
            (600 and 650 steps, inside the +-50-150 steps one crossing moves), so ``g``
            is small there and bytes beyond what the compute hides buy little; 0.5
            (``g`` = 1/3) keeps the wire within half the compute. A working assumption,
            checked end to end by ``benchmarks/adaptive_race.py``.
        min_send_density: the smallest send budget. Same setting: 0.05 first showed 88%
            at step 600, 0.025 never (87.23% best in 800 steps).
        slow_schedule: (prune_start, prune_end, prune_initial) on a slow link: the ramp
            to the final sparsity over the first 20% of the run, from the step the budget
            starts: the hand-tuned slow-link recipe's schedule, raced on five seeds of
            fashion-cnn at 10 Mbit/s (docs/pactrain-bench.md). At equal steps (same
            setting, send density 0.1) it first showed 88% at step 650, as did the gradual
            10-60% ramp; half the weights at once and the ramp over 0-30% showed it at 500
            on that seed, but at send density 0.05 on a 10 Mbit/s race of seed 0 it needed
            800 steps where the recipe needed 650: one seed each way, inside the spread of
            one crossing, so the recipe's schedule, with more seeds behind it, stays.
        fast_schedule: the same on a fast link, where nothing is sampled: the gradual ramp
            unsampled first showed 88% at step 450 (88.78% mean; one seed).
    """

    wait_factor: float = 0.5
    min_send_density: float = 0.05
    slow_schedule: tuple[float, float, float] = (0.0, 0.2, 0.0)
    fast_schedule: tuple[float, float, float] = GRADUAL_SCHEDULE


@dataclass(frozen=True)
class Measured:
    """What the group agreed it measured (seconds), and the gradient's size.

    Attributes:
        compute_s: one step's forward and backward pass.
        entries: gradient entries per step (every trainable parameter's).
        world_size: ranks in the group.
    """

    compute_s: float
    entries: int
    world_size: int


@dataclass(frozen=True)
class OperatingPoint:
    """The whole-run choices beside the tier per bucket.

    Attributes:
        prune_start, prune_end: fractions of the run where the schedule ramps.
        prune_initial: sparsity pruned at once at ``prune_start``.
        send_density: share of the gradient's entries a step sends (``None``: all kept).
        slow: whether the link was found slower than the compute.
        chosen_by: per setting, ``"policy"`` or ``"user"``.
        reasons: one line per decision.
        step: the step from which it holds.
    """

    prune_start: float
    prune_end: float
    prune_initial: float
    send_density: float | None
    slow: bool = False
    chosen_by: dict[str, str] = field(default_factory=dict)
    reasons: tuple[str, ...] = ()
    step: int = 0

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["reasons"] = list(self.reasons)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> OperatingPoint:
        known = {k: data[k] for k in ("prune_start", "prune_end", "prune_initial",
                                      "send_density", "slow", "chosen_by", "step")
                 if k in data}
        return cls(**known, reasons=tuple(data.get("reasons", ())))


#: Prices ``(entries sent) -> seconds`` of one step's gradient at its cheapest tier.
PriceOfSending = Callable[[int], float]


def budget_entries(price: PriceOfSending, entries: int, seconds: float) -> int:
    """The most entries (at least 1) whose price fits ``seconds``, by bisection: a
    tier's price grows with what it sends."""
    if price(entries) <= seconds:
        return entries
    low, high = 1, entries
    while high - low > max(1, entries // 1000):
        middle = (low + high) // 2
        if price(middle) <= seconds:
            low = middle
        else:
            high = middle
    return low


def _keep_order(chosen: dict[str, float], by: dict[str, str]) -> None:
    """Move a bound the policy chose so that it does not cross one the user set (a user's
    ``prune_end`` 0.05 with the policy's start 0.1 starts at 0.05).

    Raises:
        ValueError: both bounds were set by the user, the end before the start.
    """
    if chosen["prune_end"] >= chosen["prune_start"]:
        return
    if by["prune_start"] == "policy":
        chosen["prune_start"] = chosen["prune_end"]
    elif by["prune_end"] == "policy":
        chosen["prune_end"] = chosen["prune_start"]
    else:
        raise ValueError(f"prune_end {chosen['prune_end']} before prune_start "
                         f"{chosen['prune_start']}; set prune_end at or after prune_start")


def _schedule(base: tuple[float, float, float], user: dict[str, Any],
              ) -> tuple[dict[str, float], dict[str, str]]:
    """The schedule ``base`` with what the user set kept, and who set each bound."""
    chosen = dict(zip(SCHEDULE_SETTINGS, base, strict=True))
    by = {}
    for name in SCHEDULE_SETTINGS:
        by[name] = "user" if user.get(name) is not None else "policy"
        if by[name] == "user":
            chosen[name] = float(user[name])
    _keep_order(chosen, by)
    return chosen, by


def send_budget(price: PriceOfSending, measured: Measured, rules: Rules,
                ) -> tuple[float, str]:
    """The send density a step can afford, and the line that says why."""
    target_s = rules.wait_factor * measured.compute_s
    fits = budget_entries(price, measured.entries, target_s)
    density = max(rules.min_send_density, fits / measured.entries)
    density = min(1.0, float(f"{density:.3g}"))  # the same printed and applied
    floor = " (the floor)" if fits / measured.entries < rules.min_send_density else ""
    return density, (f"send_density {density:.3g}{floor}: {fits:,} of {measured.entries:,} "
                     f"entries fit {rules.wait_factor:g} x compute {measured.compute_s:.3f} s "
                     f"on the measured link")


def choose(price: PriceOfSending, measured: Measured, user: dict[str, Any],
           rules: Rules = Rules(), step: int = 0) -> OperatingPoint:
    """The operating point for a run whose link prices ``price`` and whose step computes
    ``measured.compute_s``; the settings in ``user`` (names of
    :data:`CHOSEN_SETTINGS`) are kept as given.

    A pure function of its arguments, so every rank, fed the agreed numbers, decides
    the same (tested without a process group).
    """
    dense_s = price(measured.entries)
    slow = dense_s > measured.compute_s
    link = (f"the unpruned gradient costs {dense_s:.3f} s a step on the wire "
            f"{'>' if slow else '<='} compute {measured.compute_s:.3f} s: "
            f"{'slow' if slow else 'fast'} link")
    chosen, by = _schedule(rules.slow_schedule if slow else rules.fast_schedule, user)
    reasons = [link]
    schedule_by = ("user" if all(by[n] == "user" for n in by) else "policy")
    reasons.append(
        f"prune from {chosen['prune_start']:g} to {chosen['prune_end']:g} of the run, "
        f"{chosen['prune_initial']:g} at once ({schedule_by}"
        + ("" if schedule_by == "user" else
           ": prune from the start, the wire is the bottleneck" if slow else
           ": gradual, the wire is not the bottleneck") + ")")
    if user.get("send_density") is not None:
        density: float | None = float(user["send_density"])
        by["send_density"] = "user"
        reasons.append(f"send_density {density:g} (user)")
    elif slow:
        density, why = send_budget(price, measured, rules)
        by["send_density"] = "policy"
        reasons.append(why)
    else:
        density = None
        by["send_density"] = "policy"
        reasons.append("no send budget: every kept entry fits under the compute")
    return OperatingPoint(chosen["prune_start"], chosen["prune_end"],
                          chosen["prune_initial"], density, slow, by, tuple(reasons), step)


def provisional(user: dict[str, Any], rules: Rules = Rules()) -> OperatingPoint:
    """The point a measuring run starts from, before any step is timed: the slow-link
    schedule and the floor budget (what the user set kept).

    Why not unbudgeted: the first steps of an unpruned model sent whole on a slow link
    cost the most (1.8 s each for fashion-cnn at 10 Mbit/s), and in two of two races at
    10 Mbit/s the run that sent its first two steps whole as stochastic codes without
    error feedback stood at 10-17% accuracy at step 50 where the same seeds budgeted from
    step 0 stood at 52-71% (docs/pactrain-bench.md, "Defaults against tuning"). Nothing is
    pruned before the decision, so a fast link undoes it entirely.
    """
    chosen, by = _schedule(rules.slow_schedule, user)
    density = user.get("send_density")
    by["send_density"] = "user" if density is not None else "policy"
    density = rules.min_send_density if density is None else float(density)
    return OperatingPoint(chosen["prune_start"], chosen["prune_end"], chosen["prune_initial"],
                          density, True, by,
                          (f"until two steps are timed: send_density {density:g}, nothing "
                           "pruned",), 0)


def revisit_send_density(point: OperatingPoint, price: PriceOfSending, measured: Measured,
                         rules: Rules = Rules(), step: int = 0,
                         hysteresis: float = 0.2) -> OperatingPoint | None:
    """A new point when the re-measured link moves the policy's send budget by more
    than ``hysteresis`` (relative), else ``None``. A user's ``send_density`` and a
    fast link's no-budget stay as they are (the schedule is not revisited: masks already
    taken cannot be given back)."""
    if point.chosen_by.get("send_density") != "policy" or point.send_density is None:
        return None
    density, why = send_budget(price, measured, rules)
    if math.isclose(density, point.send_density, rel_tol=hysteresis):
        return None
    kept = tuple(r for r in point.reasons if not r.startswith("send_density"))
    return OperatingPoint(point.prune_start, point.prune_end, point.prune_initial, density,
                          point.slow, point.chosen_by, (*kept, f"{why} (revisited)"), step)
