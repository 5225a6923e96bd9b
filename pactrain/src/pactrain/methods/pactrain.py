"""`pactrain` (adaptive tiers) and one forced-tier method `pactrain-<tier>` for every tier
of :data:`pactrain.tiers.TIER_NAMES` but the fallback: pruning plus the compaction hook of
:mod:`pactrain.compaction` (its state's
:class:`~pactrain.compression.communicator.Communicator` counts, times and tells the policy
about every collective).

On the wire: per bucket, the kept entries only, in the bucket's tier (the generated table
of docs/pactrain-core.md, :mod:`pactrain.tiers.table`), or the whole bucket when the
policy finds that cheaper.
"""

from __future__ import annotations

import functools
import os
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch.distributed as dist

from pactrain.accounting import PayloadCounter
from pactrain.compaction import CompactionState, compaction_hook
from pactrain.compression.communicator import Communicator
from pactrain.compression.hierarchical import HierarchicalCommunicator
from pactrain.compression.protocols import scale_group_for
from pactrain.masks import MaskTracker
from pactrain.methods import MethodConfig, MethodSpec, register_method
from pactrain.operating_control import OperatingControl
from pactrain.plan import PlanError, ReplayPolicy, load_plan
from pactrain.policy import AdaptivePolicy, FixedPolicy, probe_compute, probe_link
from pactrain.refresh_pacer import RefreshPacer
from pactrain.tiers import FALLBACK_TIER, TIER_NAMES, all_tiers, check_serves, method_name

#: Step after which the adaptive policy first plans the overlap: DDP rebuilds its buckets
#: after step 1, then a few steps of gaps are measured.
OVERLAP_PLAN_STEP = 5


@dataclass
class PacTrainMethod:
    """The :class:`pactrain.methods.CommMethod` of the PacTrain methods.

    ``control``: the run's operating point (:mod:`pactrain.operating_control`), for the
    adaptive method when it measures (or replays a plan); ``None`` otherwise.
    ``refresh_every``: the fewest steps between link refreshes; the pacer
    (:mod:`pactrain.refresh_pacer`) spaces them further so that they take at most 1% of
    the training time.
    """

    state: CompactionState
    refresh_every: int = 50
    plan_overlap_at: int | None = None
    control: OperatingControl | None = None
    pacer: RefreshPacer = field(init=False)

    def __post_init__(self) -> None:
        self.pacer = RefreshPacer(self.refresh_every)

    @property
    def hook(self) -> Callable[..., Any]:
        return compaction_hook

    @property
    def payload(self) -> PayloadCounter:
        return self.state.comm.payload

    def on_step_end(self, step: int) -> None:
        """Refresh the link model when the pacer says, and plan the overlap (hide
        budgets) at ``plan_overlap_at`` and at each refresh (collectives).

        Why ``plan_overlap_at`` is early (a few steps after DDP rebuilt its buckets):
        on a slow link a short run may reach its target before the first refresh.
        """
        done = step + 1
        refresh = self.pacer.due(done)
        if isinstance(self.state.policy, AdaptivePolicy):
            if refresh:  # timed, so the pacer can space the next one by its cost
                started = time.perf_counter()
                self.state.policy.refresh(self.state.comm)
                if self.plan_overlap_at is not None:
                    self.state.plan_overlap()
                self.pacer.refreshed(done, time.perf_counter() - started, self.state.comm)
            elif done == self.plan_overlap_at:
                self.state.plan_overlap()
        if self.control is not None:
            self.control.after_step(step, revisit=refresh or done == self.plan_overlap_at)

    def summary(self) -> dict[str, Any]:
        total: Counter = Counter()
        for counts in self.state.tier_counts.values():
            total.update(counts)
        policy = self.state.policy
        return {
            "tier_counts": dict(total),
            "tier_counts_per_bucket": {str(i): dict(c)
                                       for i, c in sorted(self.state.tier_counts.items())},
            "decisions": {str(i): {"tier": d.tier, "numel": d.numel, "kept": d.kept}
                          for i, (_, _, d) in sorted(self.state.decisions.items())},
            "policy": policy.state_dict(),
            "operating_point": None if self.control is None else self.control.summary(),
            "plan": list(self.state.plan),
            **self.state.comm.time_summary(),
        }

    def state_dict(self) -> dict[str, Any]:
        out = self.state.state_dict()
        if self.control is not None:
            out["operating_point"] = self.control.state_dict()
        if isinstance(self.state.policy, AdaptivePolicy):
            out["refresh"] = self.pacer.state_dict()
        return out

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.pacer.load_state_dict(state.get("refresh"))
        # the point first: it sets the send budget the hook's state checks its own against
        if self.control is not None:
            self.control.load_state_dict(state.get("operating_point"))
        self.state.load_state_dict(state)


def make_pactrain(
    process_group: dist.ProcessGroup | None, ddp_model: Any, config: MethodConfig,
    tracker: MaskTracker | None, tier: str | None = None, hierarchical: bool = False,
) -> PacTrainMethod:
    """Factory of the PacTrain methods; ``tier=None`` is the adaptive policy.

    Collective: creates the group of the ternary scales, and when adaptive the link and
    compute probes run on every rank.
    """
    if tracker is None:
        raise ValueError("PacTrain methods need the mask tracker; register them with "
                         "uses_pruning=True")
    forced = tier or config.tier
    if config.plan is not None and forced is not None:
        raise PlanError(f"a plan replays the adaptive policy's decisions; use it with the "
                        f"method pactrain, not a fixed tier ({forced})")
    if config.plan is not None:
        policy: FixedPolicy | AdaptivePolicy | ReplayPolicy = ReplayPolicy(
            load_plan(config.plan, TIER_NAMES))
        check_serves(policy.tiers, config.world_size, "the plan", PlanError)
    elif forced is not None:
        policy = FixedPolicy(forced)
    else:
        policy = (AdaptivePolicy() if config.allowed_tiers is None
                  else AdaptivePolicy(allowed=tuple(config.allowed_tiers)))
    scale_group = scale_group_for(process_group, config.world_size)
    per_node = workers_per_node(config, hierarchical)
    comm = (Communicator(process_group, observer=policy.observe) if per_node is None
            else HierarchicalCommunicator(process_group, per_node, observer=policy.observe,
                                          apart=(scale_group,)))
    if isinstance(policy, AdaptivePolicy) and config.probe_link and dist.is_initialized():
        policy.link = probe_link(comm)
        policy.compute = probe_compute(comm, seed=config.seed)
    rounding = config.options.get("rounding", "stochastic")
    # Error feedback of the codes' error, by default: off for unsampled stochastic codes
    # (unbiased; feeding their error back cost accuracy), on when sampling (fashion-cnn at
    # send_density 0.05: +1.5 points over steps 450-800) and for nearest rounding (biased,
    # sound only with it; CompactionState refuses it off). Measurements: docs/pactrain-core.md.
    sampling = config.options.get("send_density") is not None
    replays_point = isinstance(policy, ReplayPolicy) and policy.holds_operating_points
    measures = (isinstance(policy, AdaptivePolicy) and config.probe_link
                and config.world_size > 1 and dist.is_initialized())
    steers = config.total_steps is not None and (replays_point or measures)
    state = CompactionState(process_group, tracker, config.world_size, config.rank,
                            config.seed, policy,
                            config.error_feedback_or(rounding == "nearest" or sampling),
                            model=getattr(ddp_model, "module", ddp_model),
                            scale_group=scale_group, comm=comm,
                            send_density=config.options.get("send_density"),
                            send_select=config.options.get("send_select", "topk"),
                            rounding=rounding, may_sample=steers)
    # the overlap plan is timing-driven like the probes: off when they are
    plan_at = (OVERLAP_PLAN_STEP if isinstance(policy, AdaptivePolicy) and config.probe_link
               and config.world_size > 1 else None)
    control = None
    if steers:
        module = getattr(ddp_model, "module", ddp_model)
        assert config.total_steps is not None
        control = OperatingControl(
            state, config.total_steps,
            {**config.user_settings, "send_density": config.options.get("send_density")},
            sum(p.numel() for p in module.parameters() if p.requires_grad),
            frequency=config.user_settings.get("prune_frequency"),
            error_feedback_fixed=config.error_feedback is not None)
        control.start()
    return PacTrainMethod(state, config.refresh_every, plan_at, control)


def workers_per_node(config: MethodConfig, hierarchical: bool) -> int | None:
    """Ranks per node for a two-level all-reduce (``None``: flat): the option
    ``workers_per_node``, or for ``pactrain-hier`` torchrun's ``LOCAL_WORLD_SIZE``.

    Raises:
        ValueError: a node size that does not divide the world size.
    """
    given = config.options.get("workers_per_node")
    if given is None and hierarchical:
        given = int(os.environ.get("LOCAL_WORLD_SIZE", config.world_size))
    if given is None:
        return None
    if int(given) < 1 or config.world_size % int(given):
        raise ValueError(f"workers_per_node {given} does not divide the {config.world_size} "
                         "workers into equal nodes")
    return int(given)


def _register(name: str, tier: str | None, description: str, lossy: bool,
              max_world_size: int | None, hierarchical: bool = False) -> None:
    register_method(MethodSpec(
        name=name, factory=functools.partial(make_pactrain, tier=tier,
                                             hierarchical=hierarchical),
        uses_pruning=True, lossy=lossy, description=description,
        options=("send_density", "send_select", "rounding", "workers_per_node"),
        max_world_size=max_world_size,
    ))


_register("pactrain", None, "adaptive per-bucket tier from the alpha-beta link model",
          lossy=True, max_world_size=None)
_register("pactrain-hier", None, "pactrain with a two-level all-reduce: inside each node, "
          "then compacted across nodes (nodes of torchrun's LOCAL_WORLD_SIZE ranks)",
          lossy=True, max_world_size=None, hierarchical=True)
_register("pactrain-hier-fp32", "fp32", "pactrain-fp32 with the two-level all-reduce of "
          "pactrain-hier (exact)", lossy=False, max_world_size=None, hierarchical=True)
for _tier in all_tiers().values():
    if _tier.name != FALLBACK_TIER:
        _register(method_name(_tier.name), _tier.name, _tier.description, _tier.lossy,
                  _tier.max_world_size)
