"""`pactrain.attach`: PacTrain in your own training loop, in one call.

Why: the lower-level objects (:class:`~pactrain.pruning.GradualPruner`,
:class:`~pactrain.masks.MaskTracker`, a method from :mod:`pactrain.methods`) need three
per-step calls in a fixed order (masks before the forward pass, gradients masked before
the optimizer step, the method's upkeep after it). Forgetting one still exits 0 while the
hook sends the dense payload and "pruned" weights stay non-zero. :func:`attach` wires them
to hooks PyTorch already runs, so no order can be forgotten:

- a forward pre-hook on the DDP module: the first training forward of each step updates
  the masks when the schedule says so, verifies them across ranks and zeroes pruned
  weights and their optimizer state (``MaskTracker.step``); micro-batches under
  ``no_sync()`` and evaluation forwards (``eval()`` or ``torch.no_grad()``) do nothing;
- an optimizer step pre-hook: zero gradients at pruned positions (so weight decay and
  momentum cannot revive them);
- an optimizer step post-hook: the method's upkeep (the adaptive policy's link refresh and
  overlap plan), then the step counter advances.

Under FSDP2 (``fully_shard``) the same call takes the sharded model, and the forward
pre-hook runs before FSDP2's own on the root (:mod:`pactrain.fsdp`; a complete script:
``pactrain/examples/fsdp_gpt.py``).

Example (a complete script: ``pactrain/examples/torchrun_minimal.py``)::

    ddp = DistributedDataParallel(model)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
    pt = pactrain.attach(ddp, optimizer, sparsity=0.8, total_steps=1000)
    for inputs, targets in loader:
        optimizer.zero_grad()
        loss_fn(ddp(inputs), targets).backward()
        optimizer.step()
    torch.save({"model": model.state_dict(), "pactrain": pt.state_dict()}, path)
"""

from __future__ import annotations

import logging
import warnings
from dataclasses import asdict, dataclass, field
from typing import Any

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from pactrain.fsdp.method import FsdpError, build_sharded, fsdp_group, is_fsdp
from pactrain.masks import MaskTracker
from pactrain.methods import (
    CommMethod,
    MethodConfig,
    apply_hook_momentum,
    get_method,
    method_communicator,
    register_hook,
    share_control,
)
from pactrain.operating_point import schedule_or_gradual
from pactrain.pruning import GradualPruner, PruningConfig
from pactrain.selection import Selection, Selector

#: Below this share of compacted gradient bytes, attach warns: most of the payload is dense
#: whatever the sparsity.
COMPACTED_WARN_BELOW = 0.5

LOG = logging.getLogger(__name__)


class AttachError(RuntimeError):
    """PacTrain cannot be attached to this model/optimizer (the message names the fix)."""


@dataclass(frozen=True)
class AttachSettings:
    """What a checkpoint must share with the run that loads it (and what was asked for).

    Attributes:
        method: registry name (``pactrain``, ``pactrain-fp32``, ``powersgd``, ...).
        sparsity: final sparsity of the prunable weights.
        total_steps: length of the run; the pruning schedule is laid over it.
        prune_start, prune_end: fractions of ``total_steps`` where pruning runs.
        prune_frequency: steps between mask updates (``None``: about 10 updates).
        scope: how weights are ranked (``pactrain.names.PRUNE_SCOPES``).
        world_size: the process group's size (derived, never typed by hand).
        options: method-specific options.
        prune_initial: sparsity the schedule starts from at ``prune_start`` (s_i).
    """

    method: str
    sparsity: float
    total_steps: int
    prune_start: float
    prune_end: float
    prune_frequency: int | None
    scope: str
    world_size: int
    options: dict[str, Any] = field(default_factory=dict)
    prune_initial: float = 0.0

    def pruning(self) -> PruningConfig:
        return PruningConfig.for_run(self.total_steps, self.sparsity, self.scope,
                                     self.prune_start, self.prune_end, self.prune_frequency,
                                     self.prune_initial)


#: Settings a checkpoint must match to be loaded (the others may change on resume).
MUST_MATCH: tuple[str, ...] = ("method", "sparsity", "world_size", "scope")


class ResumeError(AttachError, ValueError):
    """A checkpoint written by another kind of run (the message names each difference)."""


def refuse_another_run(saved: dict[str, Any], this: dict[str, Any], keys: tuple[str, ...], *,
                       what: str, fix: str, this_label: str = "attached") -> None:
    """The one resume check (:meth:`PacTrain.load_state_dict` and ``pactrain train
    --resume``): refuse a checkpoint whose ``keys`` differ from this run's.

    Why: a method's state is per method and per rank, the pruning schedule aims at its
    sparsity, and the masks fit one ranking scope and world size; loading another run's
    state would fail deep inside a ``load_state_dict`` or quietly continue a different
    experiment.

    Raises:
        ResumeError: ``"{what} with {key} {saved!r} ({this_label}: {this!r}), ...; {fix}"``.
    """
    wrong = [key for key in keys if saved.get(key) != this[key]]
    if wrong:
        found = ", ".join(f"{key} {saved.get(key)!r} ({this_label}: {this[key]!r})"
                          for key in wrong)
        raise ResumeError(f"{what} with {found}; {fix}")


class PacTrain:
    """The handle :func:`attach` returns: state, facts and the hooks it installed.

    Attributes:
        settings: what was attached (:class:`AttachSettings`).
        method: the communication method (its hook is registered on the DDP model).
        tracker: masks and schedule (``None`` for methods that do not prune).
        step: optimizer steps taken since attaching (or restored by
            :meth:`load_state_dict`).
        mask_changed_at: the last step whose forward pass updated the masks (``None``:
            none yet); ``pactrain train`` measures the final payload from there.

    ``pactrain train`` (:mod:`pactrain.train.loop`) drives its steps through this object
    too, so the three per-step calls live in one place for both.
    """

    def __init__(self, ddp_model: nn.Module, optimizer: torch.optim.Optimizer,
                 settings: AttachSettings, method: CommMethod,
                 tracker: MaskTracker | None) -> None:
        self.settings = settings
        self.method = method
        self.tracker = tracker
        self.step = 0
        self.mask_changed_at: int | None = None
        self._optimizer = optimizer
        self._prepared_step = -1
        if isinstance(ddp_model, DistributedDataParallel):
            forward_hooks = [
                ddp_model.register_forward_pre_hook(self._before_forward),
                ddp_model.module.register_forward_pre_hook(self._before_any_forward)]
        else:  # FSDP2's root: before its own pre-forward, which all-gathers the root's
            # parameters, so that a mask update reaches this step's weights
            forward_hooks = [ddp_model.register_forward_pre_hook(self._before_forward,
                                                                 prepend=True)]
        self._handles = [
            *forward_hooks,
            optimizer.register_step_pre_hook(self._before_optimizer_step),
            optimizer.register_step_post_hook(self._after_optimizer_step),
        ]

    # -- hooks ---------------------------------------------------------------------------
    def _before_forward(self, module: nn.Module, args: Any) -> None:
        if not (module.training and torch.is_grad_enabled()):
            return
        first = self._prepared_step != self.step
        if (first and self.tracker is not None
                and self.tracker.step(self.step, self._optimizer)):
            self.mask_changed_at = self.step
        self._prepared_step = self.step
        comm = method_communicator(self.method)
        if first and comm is not None:
            comm.note_forward_start()  # after the mask update: the step's own compute

    def _before_optimizer_step(self, optimizer: torch.optim.Optimizer, args: Any,
                               kwargs: Any) -> None:
        comm = method_communicator(self.method)
        if comm is not None:
            comm.note_backward_done()
        if self.tracker is not None and not self._hook_masked_gradients():
            self.tracker.pruner.mask_gradients()

    def _before_any_forward(self, module: nn.Module, args: Any) -> None:
        """A training forward of the wrapped model, through DDP or not: gradients the
        compaction hook masked earlier no longer vouch for the ones the optimizer will
        use, so the flag is cleared (the hook sets it again if this backward reaches it)."""
        if module.training and torch.is_grad_enabled():
            self._hook_masked_gradients()

    def _hook_masked_gradients(self) -> bool:
        """Whether the method's hook already zeroed every pruned gradient entry this step
        (PacTrain's compaction hook does; a backward that bypassed it, e.g. outside DDP,
        did not, and is masked here)."""
        take = getattr(getattr(self.method, "state", None), "take_gradients_masked", None)
        return bool(take()) if take is not None else False

    def _after_optimizer_step(self, optimizer: torch.optim.Optimizer, args: Any,
                              kwargs: Any) -> None:
        on_step_end = getattr(self.method, "on_step_end", None)
        if on_step_end is not None:
            on_step_end(self.step)
        self.step += 1

    def remove(self) -> None:
        """Remove the forward and optimizer hooks (DDP's comm hook cannot be removed)."""
        for handle in self._handles:
            handle.remove()
        self._handles.clear()

    # -- facts ---------------------------------------------------------------------------
    def density(self) -> float:
        """Fraction of prunable weights kept (1.0 for methods that do not prune)."""
        return self.tracker.pruner.density() if self.tracker is not None else 1.0

    def compacted_fraction(self) -> float:
        """Share of the gradient bytes in pruned (compacted) parameters; 0.0 when nothing
        is pruned. ``density`` speaks only of this share: the rest is sent dense."""
        return self.tracker.pruner.compacted_fraction() if self.tracker is not None else 0.0

    def summary(self) -> dict[str, Any]:
        """JSON-ready facts: step, density, payload bytes per step, the method's own
        (for ``pactrain``, ``operating_point`` with one line per decision in
        ``reasons``; :meth:`decisions` prints them)."""
        return {"method": self.settings.method, "step": self.step,
                "density": self.density(),
                "compacted_fraction": self.compacted_fraction(),
                "payload_bytes_per_step": self.method.payload.bytes_per_step(),
                **self.method.summary()}

    def decisions(self) -> list[str]:
        """What the adaptive policy chose for the run and why, one line per decision
        (empty before the first decision, or for a method that chooses nothing)."""
        point = getattr(getattr(self.method, "control", None), "point", None)
        return [] if point is None else list(point.reasons)

    # -- checkpoint ----------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """This rank's masks, schedule position, hook state and step (save it per rank,
        or from rank 0 when the method keeps no per-rank state)."""
        method_state = (self.method.state_dict() if hasattr(self.method, "state_dict")
                        else None)
        return {"settings": asdict(self.settings), "step": self.step,
                "tracker": self.tracker.state_dict() if self.tracker is not None else None,
                "method": method_state}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict`; refuses one written under other settings.

        Raises:
            AttachError: naming each setting that differs and its saved value.
        """
        refuse_another_run(state.get("settings", {}), asdict(self.settings), MUST_MATCH,
                           what="this PacTrain state was saved", fix="attach with the saved "
                           "settings to continue it, or start without loading it")
        if self.tracker is not None and state.get("tracker") is not None:
            self.tracker.load_state_dict(state["tracker"])
        if state.get("method") is not None and hasattr(self.method, "load_state_dict"):
            self.method.load_state_dict(state["method"])
        self.step = int(state["step"])
        self._prepared_step = -1


def warn_if_mostly_dense(selection: Selection) -> None:
    """One warning line when under :data:`COMPACTED_WARN_BELOW` of the gradient bytes is
    pruned (and so compacted), naming the largest dense parameters."""
    fraction = selection.compacted_fraction()
    if fraction >= COMPACTED_WARN_BELOW:
        return
    largest = ", ".join(f"{name} ({numel:,})" for name, numel in selection.largest_dense(3))
    warnings.warn(f"pactrain prunes only {100 * fraction:.1f}% of the gradient bytes; the rest "
                  f"goes out dense at any sparsity (largest dense: {largest}); select more "
                  "with attach(..., prune=[patterns])", UserWarning, stacklevel=3)


def attach(
    ddp_model: nn.Module, optimizer: torch.optim.Optimizer, *,
    sparsity: float = 0.8, total_steps: int, method: str = "pactrain",
    prune_start: float | None = None, prune_end: float | None = None,
    prune_frequency: int | None = None, prune_initial: float | None = None,
    scope: str = "lamp", prune: Selector = None, seed: int = 0,
    error_feedback: bool | None = None,
    options: dict[str, Any] | None = None,
    state: dict[str, Any] | list[dict[str, Any]] | None = None,
    plan: Any = None, refresh_every: int = 50, probe_link: bool = True,
) -> PacTrain:
    """Prune ``ddp_model`` while it trains and compress its gradients with ``method``.

    Rank and world size come from the DDP model's process group. Call it after wrapping
    the model in DDP and building the optimizer, before the first forward pass.

    Args:
        ddp_model: the model wrapped in ``DistributedDataParallel``, or a model sharded with
            FSDP2's ``fully_shard`` (each block, then the root): its all-gather and
            reduce-scatter then carry kept entries only (:mod:`pactrain.fsdp`; methods
            ``pactrain``, ``pactrain-fp32`` and ``dense``).
        optimizer: the optimizer over its parameters (any ``torch.optim`` optimizer).
        sparsity: final fraction of zero weights among the conv/linear weights that train
            (frozen parameters are neither pruned nor ranked).
        total_steps: optimizer steps the run will take (the schedule's length).
        method: a registered method (``pactrain --help`` and ``docs/pactrain-core.md``
            list them); baselines without pruning work too.
        prune_start, prune_end, prune_frequency, prune_initial, scope: the pruning
            schedule (:class:`~pactrain.pruning.PruningConfig`). ``None`` (the default)
            lets the adaptive method ``pactrain`` choose after timing the first step
            (:mod:`pactrain.operating_point`: on a link slower than the compute it prunes
            from the start and caps what a step sends), and gives every other method
            the gradual 0.1-0.6 ramp from 0; what you set is kept. ``prune_initial`` > 0
            prunes that share at ``prune_start`` at once, so the first steps already send
            less (what it costs in accuracy: docs/pactrain-bench.md).
        prune: which parameters to prune: ``None`` for the default rule (every trainable
            weight matrix of a linear map: ``nn.Linear``, ``nn.Conv*``, attention's
            ``in_proj_weight``, Hugging Face ``Conv1D``, a user's own 2-D projection;
            embeddings, norms, biases and positional tables stay dense), or names /
            ``fnmatch`` patterns, or a predicate ``(name, parameter) -> bool``
            (:mod:`pactrain.selection`). Under half of the gradient bytes selected is
            warned about in one line naming the largest dense parameters.
        seed: seeds the stochastic tiers' draws.
        error_feedback: residuals for lossy tiers (``None``: the method's default).
        options: method-specific options (e.g. ``{"rank": 2}`` for ``powersgd``).
        state: a :meth:`PacTrain.state_dict` to continue from, or a list of them, one per
            rank, of which this rank's is taken (a resumed run whose model and optimizer
            were restored already; optimizer state is then expected).
        plan: replay an earlier adaptive run's tier decisions (``summary()["plan"]``, a
            result JSON or its path; :mod:`pactrain.plan`): the same tiers at the same
            steps and nothing measured, so the run repeats exactly. Method ``pactrain``.
        refresh_every: the fewest steps between refreshes of the adaptive policy's link
            model (the first comes after it; later ones are spaced so that refreshes take
            at most 1% of the training, :mod:`pactrain.refresh_pacer`; 0: none).
        probe_link: measure link and compute at start-up (``False``: the policy decides
            from its defaults, the same on every run; tests use it for exact numbers).

    Raises:
        AttachError: not a DDP model, no process group, training already started, the
            optimizer does not hold the model's parameters, or a world size the method
            cannot serve.
        NothingToPruneError: a pruning method on a model with no trainable weight matrix
            (or none that ``prune`` selects).
        SelectionError: a malformed ``prune`` or a pattern that matches no parameter.
        KeyError: unknown ``method`` (the message lists the registered ones).
        ValueError: a bad schedule or an option the method does not read.
    """
    sharded = is_fsdp(ddp_model)
    if not (sharded or isinstance(ddp_model, DistributedDataParallel)):
        raise AttachError(f"attach() needs the model wrapped in DistributedDataParallel or "
                          f"FSDP2's fully_shard, got {type(ddp_model).__name__}; wrap it "
                          "first: ddp = DistributedDataParallel(model)")
    if not dist.is_initialized():
        raise AttachError("torch.distributed is not initialized; call "
                          "dist.init_process_group(...) (torchrun sets the environment)")
    if total_steps < 1:
        raise ValueError(f"total_steps must be >= 1, got {total_steps}")
    user_settings = {name: value for name, value in (
        ("prune_start", prune_start), ("prune_end", prune_end),
        ("prune_initial", prune_initial), ("prune_frequency", prune_frequency))
        if value is not None}
    prune_start, prune_end, prune_initial = schedule_or_gradual(prune_start, prune_end,
                                                                prune_initial)
    if not 0.0 <= prune_initial <= sparsity < 1.0:
        raise ValueError(f"need 0 <= prune_initial <= sparsity < 1, got prune_initial="
                         f"{prune_initial} and sparsity={sparsity}")
    if not 0.0 <= prune_start <= prune_end <= 1.0:
        raise ValueError(f"need 0 <= prune_start <= prune_end <= 1 (fractions of the run), "
                         f"got prune_start={prune_start} and prune_end={prune_end}")
    while isinstance(getattr(optimizer, "optimizer", None), torch.optim.Optimizer):
        # Accelerate's AcceleratedOptimizer, Lightning's LightningOptimizer: their step()
        # calls the wrapped optimizer's, whose hooks are the ones that fire
        optimizer = optimizer.optimizer
    if not isinstance(optimizer, torch.optim.Optimizer):
        raise AttachError(f"optimizer must be a torch.optim.Optimizer, got "
                          f"{type(optimizer).__name__}")
    if sharded:
        module = ddp_model
        try:
            group = fsdp_group(ddp_model)
        except FsdpError as exc:
            raise AttachError(str(exc)) from None
    else:
        module = ddp_model.module
        group = ddp_model.process_group
    rank, world_size = dist.get_rank(group), dist.get_world_size(group)
    held = {id(p) for g in optimizer.param_groups for p in g["params"]}
    trainable = [p for p in module.parameters() if p.requires_grad]
    if not any(id(p) in held for p in trainable):
        raise AttachError("the optimizer holds none of the model's trainable parameters; "
                          "build it from ddp_model.parameters() (the same objects DDP wraps)")
    if (optimizer.state and state is None) or any(p.grad is not None
                                                   for p in module.parameters()):
        raise AttachError("training already started (gradients or optimizer state exist); "
                          "attach right after wrapping the model in DDP, before the first "
                          "forward pass")
    spec = get_method(method)
    options = dict(options or {})
    spec.check_options(options)
    try:
        spec.check_world_size(world_size)
    except ValueError as exc:
        raise AttachError(str(exc)) from None
    settings = AttachSettings(method, sparsity, total_steps, prune_start, prune_end,
                              prune_frequency, scope, world_size, options, prune_initial)
    if sharded:
        if options or plan is not None:
            raise AttachError("under FSDP2, pactrain takes no method options or plan "
                              "(its collectives compact every module exactly)")
        try:
            tracker, comm_method = build_sharded(
                ddp_model, group, method, settings.pruning() if spec.uses_pruning else None,
                prune)
        except FsdpError as exc:
            raise AttachError(str(exc)) from None
    else:
        tracker = (MaskTracker(GradualPruner(module, settings.pruning(), prune), group)
                   if spec.uses_pruning else None)
        config = MethodConfig(world_size=world_size, rank=rank, sparsity=sparsity, seed=seed,
                              error_feedback=error_feedback, options=options, plan=plan,
                              refresh_every=refresh_every, probe_link=probe_link,
                              total_steps=total_steps, user_settings=user_settings)
        comm_method = spec.factory(group, ddp_model, config, tracker)
        share_control(comm_method, tracker)
        register_hook(ddp_model, comm_method)
        apply_hook_momentum(spec, optimizer)
    if tracker is not None:
        warn_if_mostly_dense(tracker.pruner.selection)
    LOG.info("pactrain attached: method %s, sparsity %.2f over %d steps, rank %d of %d",
             method, sparsity, total_steps, rank, world_size)
    handle = PacTrain(ddp_model, optimizer, settings, comm_method, tracker)
    if isinstance(state, list):
        if len(state) != world_size:
            raise ResumeError(f"the saved state holds {len(state)} ranks' states and this "
                              f"group has {world_size} ranks; resume with {len(state)} workers")
        state = state[rank]
    if state is not None:
        handle.load_state_dict(state)
    return handle
