"""A bench run as data, and the order in which its grid is visited."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Cell:
    """One run of the grid."""

    model: str
    method: str
    bandwidth: str | None  # tc rate, or None for an unshaped run
    repeat: int


@dataclass
class BenchConfig:
    """Everything ``pactrain bench`` was asked for.

    Attributes:
        models, methods, bandwidths: the grid (bandwidths as tc rates, e.g. ``100mbit``).
        workers: processes per run, one network namespace each.
        batch_size: per worker.
        steps: steps per run; the first ``warmup_steps`` are not timed.
        sparsity: PacTrain's final sparsity, reached at step 0 (one-shot, so every timed
            step runs at the final density); top-k and DGC keep ``1 - sparsity`` of the
            entries unless ``topk_density`` says otherwise.
        repeats: passes over the grid; each pass rotates the method order.
        powersgd_rank: PowerSGD's matrix approximation rank.
        topk_density: fraction kept by top-k and DGC (``None``: ``1 - sparsity``).
        send_density: PacTrain methods send at most this share of each bucket's entries
            per step (agreed sampling, :meth:`pactrain.compaction.sampling.Sampler.sample`;
            ``None``: every kept entry); ``send_select`` how (``topk``, ``topk-ahead``
            or ``cyclic``).
        rounding: how PacTrain's ternary tiers round (``stochastic`` or ``nearest``, which
            keeps its error for the next step; :data:`pactrain.compaction.options.ROUNDINGS`).
        time_to_accuracy: target test accuracy of the race, or ``None`` (no race). Every
            classifier in ``models`` races under every method at every bandwidth.
        time_to_loss: target held-out loss of the race of the language models in
            ``models`` whose primary metric is ``test_loss`` (lower is better), or ``None``.
        tta_max_steps, tta_eval_every: step budget and evaluation interval of that race.
        tta_budget_s: training-time budget of one entrant (it stops at the first
            evaluation after it; ``None``: only the step budget).
        tta_prune_end: the methods that prune reach ``sparsity`` at this fraction of
            ``tta_max_steps`` (gradual cubic schedule from step 0); ``None`` (the
            default): each method's own schedule, as ``pactrain.attach`` gives it (the
            adaptive method's operating point, :mod:`pactrain.operating_point`; the
            gradual 0.1-0.6 ramp for the others).
        tta_prune_initial: sparsity the race's schedule starts from at step 0 (s_i of
            the cubic schedule); ``None``: the method's own, as ``tta_prune_end``.
        tta_batch_size: per-worker batch of the race (``None``: each model's default, the
            batch its default learning rate was tuned for; ``batch_size`` is the grid's).
        compute_floor: also run ``no-comm`` (gradients stay local, nothing is sent) once
            per repeat at the first bandwidth of each model: the compute floor against
            which the report computes every row's exposed communication per step.
        run_timeout_s: a run that takes longer is killed and reported as failed (a race
            entrant gets its training budget on top: :func:`pactrain.bench.runner.race_timeout_s`).
        seed: model init, data order, stochastic compression.
        optimizer: every run's optimizer (``sgd`` or ``adamw``,
            :mod:`pactrain.train.optimizers`), at each model's default rate for it.
        bucket_cap_mb: every run's DDP bucket size (``None``: PyTorch's 25 MB).
        gradient_as_bucket_view: every run's gradients are views of DDP's buckets
            (:class:`pactrain.train.config.RunConfig`).
        nodes: the workers split into this many nodes behind one shaped uplink each, with
            unshaped links inside a node (:class:`pactrain.bench.netns.Topology`).
        fsdp, fsdp_dtype: every run shards its model with FSDP2 (``pactrain train --fsdp``,
            ``--fsdp-dtype``) instead of DDP.
        broadcast_buffers: every run broadcasts rank 0's buffers at each forward (off:
            :class:`pactrain.train.config.RunConfig` says why that changes no number).
    """

    models: list[str] = field(default_factory=lambda: ["digits-cnn", "resnet18"])
    methods: list[str] = field(default_factory=lambda: [
        "dense", "fp16", "powersgd", "topk", "dgc", "terngrad", "pactrain"])
    bandwidths: list[str | None] = field(default_factory=lambda: ["100mbit"])
    workers: int = 4
    batch_size: int = 8
    steps: int = 30
    warmup_steps: int = 5
    sparsity: float = 0.8
    repeats: int = 1
    powersgd_rank: int = 4
    topk_density: float | None = None
    send_density: float | None = None
    send_select: str = "topk"
    rounding: str = "stochastic"
    time_to_accuracy: float | None = None
    time_to_loss: float | None = None
    tta_max_steps: int = 400
    tta_eval_every: int = 50
    tta_batch_size: int | None = None
    tta_budget_s: float | None = 600.0
    tta_prune_end: float | None = None
    tta_prune_initial: float | None = None
    compute_floor: bool = True
    run_timeout_s: float = 1800.0
    seed: int = 0
    optimizer: str = "sgd"
    bucket_cap_mb: float | None = None
    gradient_as_bucket_view: bool = True
    broadcast_buffers: bool = False
    fsdp: bool = False
    fsdp_dtype: str | None = None
    nodes: int = 1

    def __post_init__(self) -> None:
        from pactrain.names import check_optimizer

        check_optimizer(self.optimizer)
        if self.bucket_cap_mb is not None and self.bucket_cap_mb <= 0:
            raise ValueError(f"--bucket-cap-mb must be > 0, got {self.bucket_cap_mb}")
        if self.steps <= self.warmup_steps:
            raise ValueError(
                f"--steps {self.steps} leaves nothing to time after {self.warmup_steps} "
                "warm-up steps; use more steps"
            )
        if not 0.0 <= self.sparsity < 1.0:
            raise ValueError(f"--sparsity must be in [0, 1), got {self.sparsity}")
        if self.workers < 2:
            raise ValueError("--workers must be at least 2: one worker communicates nothing")
        if self.nodes < 1 or self.workers % self.nodes:
            raise ValueError(f"--nodes {self.nodes} does not split --workers {self.workers} "
                             "into nodes of equal size")
        if self.tta_prune_end is not None and not 0.0 <= self.tta_prune_end <= 1.0:
            raise ValueError(f"--tta-prune-end must be in [0, 1], got {self.tta_prune_end}")
        if (self.tta_prune_initial is not None
                and not 0.0 <= self.tta_prune_initial <= self.sparsity):
            raise ValueError(f"--tta-prune-initial must be in [0, --sparsity "
                             f"{self.sparsity}], got {self.tta_prune_initial}")
        racing = self.time_to_accuracy is not None or self.time_to_loss is not None
        if racing and self.tta_eval_every > self.tta_max_steps:
            raise ValueError(
                f"--tta-eval-every {self.tta_eval_every} exceeds --tta-max-steps "
                f"{self.tta_max_steps}, so the race would never evaluate; lower it")

    def method_options(self, method: str) -> dict[str, Any]:
        """The bench's settings that ``method`` reads (it declares them in
        ``MethodSpec.options``; no per-name routing here)."""
        from pactrain.methods import get_method

        offered: dict[str, Any] = {"rank": self.powersgd_rank}
        if self.topk_density is not None:
            offered["density"] = self.topk_density
        if self.send_density is not None:
            offered["send_density"] = self.send_density
            offered["send_select"] = self.send_select
        if self.rounding != "stochastic":
            offered["rounding"] = self.rounding
        return get_method(method).pick_options(offered)

    def cells(self) -> list[Cell]:
        """The grid, model- then bandwidth-major, methods interleaved.

        Why this order: all methods of one (model, bandwidth) run back to back, so slow
        drift of the shared machine (other jobs, thermal) hits them alike; each repeat
        rotates the method order so no method is always first or last.
        """
        out = []
        for model in self.models:
            for first, bandwidth in enumerate(self.bandwidths):
                methods = list(self.methods)
                if self.compute_floor and first == 0 and "no-comm" not in methods:
                    methods.append("no-comm")
                for repeat in range(self.repeats):
                    shift = repeat % len(methods)
                    order = methods[shift:] + methods[:shift]
                    out += [Cell(model, m, bandwidth, repeat) for m in order]
        return out

    def race_cells(self, entrants: list[str]) -> list[Cell]:
        """The time-to-accuracy race: every method of every entrant at every bandwidth,
        model- then bandwidth-major like :meth:`cells`; empty without a target.

        ``entrants`` are the models of ``models`` that have a target (the runner knows the
        registry; this stays plain data).
        """
        if self.time_to_accuracy is None and self.time_to_loss is None:
            return []
        return [Cell(model, method, bandwidth, 0)
                for model in self.models if model in entrants
                for bandwidth in self.bandwidths for method in self.methods]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
