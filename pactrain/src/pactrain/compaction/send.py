"""The send paths of one bucket: :func:`send_whole_bucket` for the fallback tier, and for
every compacting tier one skeleton, :func:`send_kept`, in two agreements of the chunk
maxima: :data:`AGREE_NOW` (:func:`send_compacted`) and :data:`AGREED_AHEAD`
(:func:`send_ahead`, ``topk-ahead``).

The skeleton, for one bucket:

1. gather the kept entries (into the bucket's reused buffer);
2. compensate: add their residuals;
3. agree: start (or take) the group's MAX of each chunk's |v|, where the top-chunk sample
   or the tier's ternary scales need it; a cyclic sample needs none;
4. send this step's share (the agreed sample, or every kept entry) through the tier;
5. keep the residual: the codes' error, and every entry not sent;
6. scatter the average back into the zeroed bucket when the send completes.

What goes on the wire: the MAX of the chunk maxima (4 B per 256 entries, when agreed) and
the tier's encoding of the entries sent; no index, since every rank holds the same masks
and picks the same sample. What stays local: the residuals (by parameter name).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import torch

from pactrain.compaction.layout import BucketLayout
from pactrain.compaction.sampling import Sample
from pactrain.compaction.state import CompactionState
from pactrain.compression.compressors import chunk_abs_max
from pactrain.compression.protocols import agree_scales, start_agreement
from pactrain.tiers.base import Sent, Tier

#: A bucket's launch: sample, send, keep the residual; gives the bucket's future.
Launch = Callable[[], torch.futures.Future]


class Agreement(Protocol):
    """How :func:`send_kept` agrees on a bucket's chunk maxima (step 3) and issues the
    rest of its send."""

    def values(self, state: CompactionState, index: int, raw: torch.Tensor) -> torch.Tensor:
        """The buffer compensated, sent from and left holding the residual (``raw``: the
        gathered kept entries)."""

    def start(self, state: CompactionState, index: int, tier: Tier, layout: BucketLayout,
              values: torch.Tensor, pick_top_chunks: bool, early: Sample | None) -> Any:
        """Start the agreement (or take one made earlier), from the hook."""

    def value(self, started: Any) -> torch.Tensor | None:
        """The agreed maxima, once in (``None``: none needed)."""

    def kept(self, state: CompactionState, index: int, layout: BucketLayout,
             raw: torch.Tensor, residual: torch.Tensor | None) -> None:
        """After the residual is kept."""

    def issue(self, state: CompactionState, started: Any, launch: Launch,
              device: torch.device) -> torch.futures.Future:
        """Run ``launch`` now or once the agreement is in; the bucket's future."""


class AgreeNow:
    """The chunk maxima agreed this step: a MAX started in the hook, and the rest of the
    send run as the bucket's launch once it is in (:class:`OrderedLauncher`; identical
    numbers to agreeing first, since the launch uses the same values and the draws of
    this bucket's step). Never waits, unless the scales share the codes' group
    (:attr:`CompactionState.scales_apart`)."""

    def values(self, state: CompactionState, index: int, raw: torch.Tensor) -> torch.Tensor:
        return raw

    def start(self, state: CompactionState, index: int, tier: Tier, layout: BucketLayout,
              values: torch.Tensor, pick_top_chunks: bool, early: Sample | None,
              ) -> torch.futures.Future | None:
        if pick_top_chunks:  # the top chunks' maxima are the scales of what they send too
            local = chunk_abs_max(values, layout.bounds)
        elif tier.agrees_scales:  # of what is sent: the cyclic sample, or every entry
            local = (chunk_abs_max(values, layout.bounds) if early is None
                     else chunk_abs_max(values.index_select(0, early.chosen), early.bounds))
        else:
            return None
        return start_agreement(state.comm, local, state.scale_group)

    def value(self, agreement: torch.futures.Future | None) -> torch.Tensor | None:
        return None if agreement is None else agreement.value()[0]

    def kept(self, state: CompactionState, index: int, layout: BucketLayout,
             raw: torch.Tensor, residual: torch.Tensor | None) -> None:
        pass

    def issue(self, state: CompactionState, agreement: torch.futures.Future | None,
              launch: Launch, device: torch.device) -> torch.futures.Future:
        if agreement is not None and not state.scales_apart:
            agreement.wait()  # one group: issue everything from the hook (see scales_apart)
        return state.launcher.add(agreement, launch, device)


class AgreedAhead:
    """``topk-ahead``: the top-chunk sample and the codes' scales come from the chunk
    maxima the group agreed at the previous step, so nothing waits and every collective is
    issued from the hook (no :class:`OrderedLauncher`); then the MAX for the next step
    starts, behind the codes.

    Why: the MAX agreed now is a chain of small round trips, each queued behind the
    previous bucket's codes at the link's shaper: 50-160 ms per bucket at 10 Mbit/s
    (packed fashion-resnet18, 4 workers), on the step's critical path. Agreed a step
    ahead it travels while the step computes. The bucket's future is the codes' alone: the
    step does not wait for the next step's MAX either (it is waited for where it is used,
    :meth:`AheadMaxima.take`, by then long in); at the end of the backward pass that MAX
    would otherwise add the last bucket's 2(N-1) small hops to every step.

    What the next step's maxima are taken over: ``residual + gradient`` of this step, per
    chunk (the next step's values are the residual plus the next gradient, and the
    gradient of this step is its best guess). An entry above its chunk's scale codes as
    ±1 x scale and the residual keeps the excess (error feedback, which this selection
    requires). The first step, and a bucket whose mask changed, agree now and wait, once.
    """

    def values(self, state: CompactionState, index: int, raw: torch.Tensor) -> torch.Tensor:
        assert state.memory is not None  # sampling always keeps a residual
        return state.buffers.copy_of(index, raw)  # raw stays: this step's gradient

    def start(self, state: CompactionState, index: int, tier: Tier, layout: BucketLayout,
              values: torch.Tensor, pick_top_chunks: bool, early: Sample | None,
              ) -> torch.Tensor:
        agreed = state.ahead.take(index, layout)
        if agreed is None:
            agreed = agree_scales(state.comm, chunk_abs_max(values, layout.bounds),
                                  state.scale_group)
        return agreed

    def value(self, agreement: torch.Tensor) -> torch.Tensor:
        return agreement

    def kept(self, state: CompactionState, index: int, layout: BucketLayout,
             raw: torch.Tensor, residual: torch.Tensor | None) -> None:
        """Start the MAX of ``residual + gradient`` for the next step."""
        if residual is not None:
            raw.add_(residual)
        state.ahead.remember(index, layout, start_agreement(
            state.comm, chunk_abs_max(raw, layout.bounds), state.scale_group))

    def issue(self, state: CompactionState, agreement: torch.Tensor, launch: Launch,
              device: torch.device) -> torch.futures.Future:
        return launch()


#: The two agreements of the chunk maxima (stateless; one of each serves every bucket).
AGREE_NOW, AGREED_AHEAD = AgreeNow(), AgreedAhead()


def send_kept(state: CompactionState, index: int, tier: Tier, buffer: torch.Tensor,
              layout: BucketLayout, agreement: Agreement,
              ) -> torch.futures.Future:
    """A compacting tier's send of bucket ``index``: gather, compensate, agree, send the
    share, keep the residual, scatter back (the module docstring's steps), with the chunk
    maxima agreed as ``agreement`` says."""
    raw = state.buffers.gather(index, buffer, layout)
    values = agreement.values(state, index, raw)
    if state.memory is not None:
        state.memory.compensate_kept(index, layout.slots, layout.kept, values)
    step = state.step
    pick_top_chunks = state.sampler.chunks_to_agree(layout)
    early = None if pick_top_chunks else state.sampler.sample(layout, step)
    started = agreement.start(state, index, tier, layout, values, pick_top_chunks, early)

    def launch() -> torch.futures.Future:
        agreed = agreement.value(started)
        sample = state.sampler.top_chunks(layout, agreed) if pick_top_chunks else early
        sent, residual, positions = _send_share(state, index, tier, layout, values, sample,
                                                agreed, step)
        _keep_residual(state, index, layout, residual)
        agreement.kept(state, index, layout, raw, residual)
        return sent.future.then(_scatter_back(buffer, positions))

    return agreement.issue(state, started, launch, buffer.device)


def send_compacted(state: CompactionState, index: int, tier: Tier, buffer: torch.Tensor,
                   layout: BucketLayout) -> torch.futures.Future:
    """:func:`send_kept` with the chunk maxima agreed this step (:class:`AgreeNow`)."""
    return send_kept(state, index, tier, buffer, layout, AGREE_NOW)


def send_ahead(state: CompactionState, index: int, tier: Tier, buffer: torch.Tensor,
               layout: BucketLayout) -> torch.futures.Future:
    """:func:`send_kept` with the chunk maxima agreed at the previous step
    (:class:`AgreedAhead`, ``send_select="topk-ahead"``)."""
    return send_kept(state, index, tier, buffer, layout, AGREED_AHEAD)


def _send_share(state: CompactionState, index: int, tier: Tier, layout: BucketLayout,
                values: torch.Tensor, sample: Sample | None, scales: torch.Tensor | None,
                step: int) -> tuple[Sent, torch.Tensor | None, torch.Tensor]:
    """Send ``sample`` of the bucket's compensated kept ``values`` (all of them when
    ``None``) through ``tier``, with the agreed chunk ``scales`` if any. Returns the send,
    the residual to keep (``None``: delivered exactly, and ``values`` may still be on the
    wire) and the bucket positions the average goes back to."""
    if sample is None:
        sent = tier.send(state.context(index, layout, layout.bounds, layout.kept_per_slot,
                                       scales, step), values)
        return sent, sent.error, layout.kept
    chosen = values.index_select(0, sample.chosen)
    sent = tier.send(state.context(index, layout, sample.bounds, sample.per_slot,
                                   sample.scales if sample.scales is not None else scales,
                                   step), chosen)
    if sent.error is None:
        values.index_fill_(0, sample.chosen, 0.0)
    else:
        values.index_copy_(0, sample.chosen, sent.error)
    return sent, values, sample.positions


def _keep_residual(state: CompactionState, index: int, layout: BucketLayout,
                   residual: torch.Tensor | None) -> None:
    """Store the bucket's residual at its kept positions, or forget it (``None``)."""
    if state.memory is None:
        return
    if residual is None:
        state.memory.drop_bucket(index)
    else:
        state.memory.store_kept(index, layout.slots, layout.kept, residual)


def _scatter_back(buffer: torch.Tensor, positions: torch.Tensor,
                  ) -> Callable[[torch.futures.Future], torch.Tensor]:
    """Completion: the averaged entries (the future's value) into the zeroed bucket at
    ``positions`` (entries not sent this step, and pruned ones, are exactly zero)."""
    def scatter(future: torch.futures.Future) -> torch.Tensor:
        buffer.zero_()
        buffer.index_copy_(0, positions, future.value().to(buffer.dtype))
        return buffer
    return scatter


def send_whole_bucket(state: CompactionState, index: int, tier: Tier, buffer: torch.Tensor,
                      layout: BucketLayout) -> torch.futures.Future:
    """The fallback tier: residuals added at the kept positions (and delivered), then the
    tier sends the whole bucket (launched in bucket order, :class:`OrderedLauncher`)."""
    if state.memory is not None:
        residual = state.memory.bucket_residual(index, layout.slots, buffer.device)
        if residual is not None:
            buffer.index_add_(0, layout.kept, residual.index_select(0, layout.kept))
            state.memory.drop_bucket(index)
    assert tier.send_bucket is not None
    ctx = state.context(index, layout, layout.bounds, layout.kept_per_slot)
    return state.launcher.add(None, lambda: tier.send_bucket(ctx, buffer, layout.flat_mask),
                              buffer.device)
