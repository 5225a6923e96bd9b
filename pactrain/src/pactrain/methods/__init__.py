"""Communication-method registry: what `--method` can name.

Contract (PacTrain's own methods and the baselines follow it)
--------------------------------------------------------------
A method is a :class:`MethodSpec` in :data:`METHODS`. Its ``factory`` is called once per
rank, after the model is wrapped in ``DistributedDataParallel`` and before the first
iteration::

    method = spec.factory(process_group, ddp_model, config, tracker)

- ``process_group``: the group to communicate in (``None`` means the default group).
- ``ddp_model``: the ``DistributedDataParallel`` wrapper (``ddp_model.module`` is the model).
- ``config``: a :class:`MethodConfig` (world size, rank, sparsity, seed, method options).
- ``tracker``: the :class:`pactrain.masks.MaskTracker` when ``spec.uses_pruning`` is true,
  else ``None``. Methods that use pruning read masks and ``mask_version`` from it.

The factory returns an object following :class:`CommMethod`:

- ``state``: the hook state, passed as ``state`` to ``register_comm_hook``. It holds a
  :class:`pactrain.compression.communicator.Communicator` (``state.comm``) through which
  the hook launches (or, delegating to PyTorch's hooks, counts and times) its collectives.
- ``hook``: ``(state, bucket) -> torch.futures.Future[torch.Tensor]``; it divides by the
  world size itself and fills ``payload``.
- ``payload``: a :class:`pactrain.accounting.PayloadCounter` (the communicator's); it holds
  the bytes handed to each collective (per rank, before the ring factor 2(N-1)/N), and
  the hook calls ``end_step()`` on the bucket for which ``bucket.is_last()`` is true.
- ``summary() -> dict``: JSON-ready facts for the result (e.g. tier counts per bucket),
  always with ``comm_s_per_step``: the communicator's launch-to-completion seconds of the
  collectives per step (``None`` before the first step).
- optional ``on_step_end(step)``: called by the training loop on every rank after each
  optimizer step (a safe point for small collectives, e.g. refreshing the link model).
- optional ``state_dict()`` / ``load_state_dict(d)``: checkpointable state, no process group.

Register the hook with :func:`register_hook`, which refuses a hook registered after training
started (DDP's buckets and the method's caches would disagree about what was sent).

``spec.uses_pruning``: whether PacTrain's gradual pruning runs under this method. The
``dense`` method uses it too, so it is the exact reference for the compacted tiers;
baselines without pruning (top-k, TernGrad, PowerSGD) set it to ``False``.

Modules of this package register their specs on import; :func:`load_builtin_methods`
imports all of them. Adding a method is adding a module here that calls
:func:`register_method`.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

from pactrain.accounting import PayloadCounter
from pactrain.registry import Registry

if TYPE_CHECKING:
    from torch import nn
    from torch.distributed import ProcessGroup

    from pactrain.compression.communicator import Communicator
    from pactrain.masks import MaskTracker


class HookRegistrationError(RuntimeError):
    """A communication hook cannot be registered now (see the message for the fix)."""


@dataclass
class MethodConfig:
    """Options every method factory receives.

    Attributes:
        world_size: number of ranks in the group.
        rank: this rank.
        sparsity: final pruning sparsity of the run (methods may size themselves by it).
        seed: run seed; stochastic methods derive per-rank generators from it.
        error_feedback: keep a residual of what lossy compression dropped; ``None`` (the
            default) takes each method's own default (:meth:`error_feedback_or`): off for
            PacTrain's tiers (ternary is unbiased but not contractive, and feeding its large
            residuals back added variance: digits-cnn, 80% sparse, 300 steps, 0.971 with,
            0.980 without), on for top-k and PowerSGD, which are biased without it.
        tier: force one PacTrain tier (a name of :data:`pactrain.tiers.TIER_NAMES`);
            ``None`` lets the adaptive policy decide per bucket.
        allowed_tiers: tiers the adaptive policy may pick from (``None``: those whose
            module declares ``adaptive_default``, :func:`pactrain.policy.adaptive_tiers`).
        refresh_every: the fewest steps between refreshes of the measured link model
            (paced to at most 1% of the training, :mod:`pactrain.refresh_pacer`).
        probe_link: measure the alpha-beta link model at start-up.
        plan: decisions of an earlier adaptive run to replay (:mod:`pactrain.plan`: a
            result JSON's path, its ``plan`` list, or the result); ``None``: decide.
        options: method-specific options (e.g. ``{"ratio": 0.01}`` for top-k,
            ``{"rank": 2}`` for PowerSGD).
        total_steps: the run's length (``None``: unknown; the adaptive method then
            chooses no operating point, :mod:`pactrain.operating_control`).
        user_settings: the pruning settings the user fixed (``prune_start``,
            ``prune_end``, ``prune_initial``, ``prune_frequency``); the adaptive method's
            operating point keeps them and chooses the rest.
    """

    world_size: int
    rank: int = 0
    sparsity: float = 0.8
    seed: int = 0
    error_feedback: bool | None = None
    tier: str | None = None
    allowed_tiers: tuple[str, ...] | None = None
    refresh_every: int = 50
    probe_link: bool = True
    plan: Any = None
    options: dict[str, Any] = field(default_factory=dict)
    total_steps: int | None = None
    user_settings: dict[str, Any] = field(default_factory=dict)

    def check_group(self, process_group: Any) -> None:
        """Refuse a world size or rank that disagrees with the live process group.

        Why: both are typed by hand here; ``world_size=1`` on 2 ranks averages gradients
        2x too large and a missing ``rank`` makes every rank rank 0, silently.
        """
        import torch.distributed as dist

        if not (dist.is_available() and dist.is_initialized()):
            return
        world_size, rank = dist.get_world_size(process_group), dist.get_rank(process_group)
        if (self.world_size, self.rank) != (world_size, rank):
            raise ValueError(
                f"MethodConfig(world_size={self.world_size}, rank={self.rank}) but the process "
                f"group has {world_size} ranks and this is rank {rank}; pass "
                "world_size=dist.get_world_size(), rank=dist.get_rank() (or use "
                "pactrain.attach, which derives both)")

    def error_feedback_or(self, method_default: bool) -> bool:
        """The run's error-feedback choice, or ``method_default`` when it made none."""
        return method_default if self.error_feedback is None else self.error_feedback


@runtime_checkable
class CommMethod(Protocol):
    """What a method factory returns (see the module docstring)."""

    state: Any
    payload: PayloadCounter

    @property
    def hook(self) -> Callable[..., Any]: ...

    def summary(self) -> dict[str, Any]: ...


MethodFactory = Callable[
    ["ProcessGroup | None", "nn.Module", MethodConfig, "MaskTracker | None"], CommMethod
]


@dataclass(frozen=True)
class MethodSpec:
    """One entry of :data:`METHODS`.

    Attributes:
        name: the registry name (``--method``).
        factory: see the module docstring.
        uses_pruning: run PacTrain's gradual pruning and mask tracker under this method.
        lossy: whether the averaged gradient differs from the exact (masked) average.
        description: one line for ``--help`` and reports.
        options: the names of ``MethodConfig.options`` the factory reads (a bench or a
            user passing any other name gets an error naming these, not a silent no-op).
        max_world_size: the most workers the method serves (``None``: no limit); the one
            place a limit is checked (:meth:`check_world_size`, run by every factory call
            and by ``attach`` before anything is built), e.g. int8 sums of ternary codes
            overflow above 127 workers.
        momentum_in_hook: the method applies SGD momentum inside its hook and turns the
            optimizer's off (:func:`apply_hook_momentum`), so it trains only under SGD
            (:meth:`check_optimizer`, run before any worker starts).
    """

    name: str
    factory: MethodFactory
    uses_pruning: bool
    lossy: bool = False
    description: str = ""
    options: tuple[str, ...] = ()
    max_world_size: int | None = None
    momentum_in_hook: bool = False

    def __post_init__(self) -> None:
        # every factory call checks the config against the live group first
        factory = self.factory

        @functools.wraps(factory)
        def checked(process_group: Any, ddp_model: Any, config: MethodConfig,
                    tracker: Any) -> CommMethod:
            config.check_group(process_group)
            self.check_world_size(config.world_size)
            return factory(process_group, ddp_model, config, tracker)

        object.__setattr__(self, "factory", checked)

    def check_world_size(self, world_size: int) -> None:
        """Refuse a group larger than the method serves, naming the limit and what to use.

        Raises:
            ValueError: ``world_size`` above :attr:`max_world_size`.
        """
        if self.max_world_size is not None and world_size > self.max_world_size:
            raise ValueError(f"{self.name} serves at most {self.max_world_size} workers "
                             f"(int8 sums of ternary codes overflow above that), this group "
                             f"has {world_size}; use pactrain (adaptive) or pactrain-packed")

    def check_optimizer(self, optimizer: str) -> None:
        """Refuse an optimizer this method cannot train under.

        Why: a method with momentum in its hook sets the optimizer's momentum to 0; AdamW
        has none to turn off and would apply its own moments on top of the hook's.

        Raises:
            ValueError: ``momentum_in_hook`` and an optimizer other than SGD.
        """
        if self.momentum_in_hook and optimizer != "sgd":
            raise ValueError(f"{self.name} applies SGD momentum inside its hook and trains "
                             f"only with --optimizer sgd, not {optimizer}")

    def check_options(self, options: dict[str, Any]) -> None:
        """Refuse option names this method does not read (typos, another method's)."""
        unknown = sorted(set(options) - set(self.options))
        if unknown:
            accepted = ", ".join(self.options) if self.options else "none"
            raise ValueError(f"method {self.name!r} takes no option {', '.join(unknown)}; "
                             f"it accepts: {accepted}")

    def pick_options(self, offered: dict[str, Any]) -> dict[str, Any]:
        """The subset of ``offered`` (e.g. a bench's settings for every method) that this
        method reads."""
        return {key: value for key, value in offered.items() if key in self.options}


METHODS: Registry[MethodSpec] = Registry("method")


def register_method(spec: MethodSpec) -> MethodSpec:
    """Add ``spec`` to :data:`METHODS` under ``spec.name`` and return it."""
    return METHODS.register(spec.name)(spec)


def load_builtin_methods() -> Registry[MethodSpec]:
    """Import every module of this package (idempotent) and return :data:`METHODS`."""
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        importlib.import_module(f"{__name__}.{info.name}")
    return METHODS


def get_method(name: str) -> MethodSpec:
    """Look ``name`` up after loading the built-in methods (``KeyError`` lists the choices)."""
    return load_builtin_methods().get(name)


@dataclass
class HookedMethod:
    """Base of the built-in methods: one hook function and one state that talks through a
    :class:`pactrain.compression.communicator.Communicator` (``state.comm``).

    Why a base: every method reports its payload and ``comm_s_per_step`` from the same
    communicator the same way; a subclass only names its hook (``hook_function``, a
    ``staticmethod``) and adds its own facts (:meth:`facts`) and, if it has state worth a
    checkpoint, ``state_dict``/``load_state_dict``.
    """

    state: Any
    hook_function: ClassVar[Callable[..., Any]]

    @property
    def hook(self) -> Callable[..., Any]:
        return type(self).hook_function

    @property
    def payload(self) -> PayloadCounter:
        return self.state.comm.payload

    def facts(self) -> dict[str, Any]:
        """Method-specific, JSON-ready facts for the result."""
        return {}

    def summary(self) -> dict[str, Any]:
        return {**self.facts(), **self.state.comm.time_summary()}


def method_communicator(method: CommMethod) -> Communicator | None:
    """The communicator a method's hook talks through (``None`` for one without)."""
    return getattr(getattr(method, "state", None), "comm", None)


def share_control(method: CommMethod, tracker: Any) -> None:
    """Send the mask tracker's control collectives through the method's communicator, so
    the run's control bytes and time are reported with its payload, in one place."""
    comm = method_communicator(method)
    if tracker is not None and comm is not None:
        tracker.comm = comm


def apply_hook_momentum(spec: MethodSpec, optimizer: Any) -> None:
    """Turn the optimizer's momentum off for a method that applies SGD momentum inside its
    hook (``spec.momentum_in_hook``, DGC), so momentum is applied once; groups without
    momentum are left alone, and an optimizer with none to turn off (AdamW) is refused.

    Why here and from the spec: the spec's flag is the one declaration of the fact, read
    by the CLI's up-front refusal (:meth:`MethodSpec.check_optimizer`) and by this, the
    last guard for ``pactrain.attach`` users who build their own optimizer.
    """
    if not spec.momentum_in_hook:
        return
    if not any("momentum" in group for group in optimizer.param_groups):
        raise ValueError(
            f"{spec.name} applies SGD momentum inside its hook and needs an optimizer with "
            f"a momentum setting to turn off, not {type(optimizer).__name__}; train it with "
            "SGD (--optimizer sgd)")
    for group in optimizer.param_groups:
        if "momentum" in group:
            group["momentum"] = 0.0


def register_hook(ddp_model: nn.Module, method: CommMethod) -> None:
    """Register ``method.hook`` on ``ddp_model``, refusing to do so once training started.

    Why: DDP fixes its buckets in the first iterations and a stateful hook builds caches
    (indices, residuals, payload counts) from the first bucket it sees; a hook swapped in
    mid-run would start from gradients that were already reduced differently.
    """
    module = getattr(ddp_model, "module", ddp_model)
    if any(p.grad is not None for p in module.parameters()):
        raise HookRegistrationError(
            "the communication hook must be registered before the first backward pass "
            "(gradients already exist); create the method and call register_hook() right "
            "after wrapping the model in DistributedDataParallel"
        )
    ddp_model.register_comm_hook(method.state, method.hook)
