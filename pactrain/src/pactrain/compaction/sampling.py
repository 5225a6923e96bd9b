"""Agreed sampling inside the mask (``send_density``): which kept entries of a bucket
travel this step, the same on every rank, with no index on the wire.

The :class:`Sampler` owns what the sample depends on (``send_density``, ``send_select``)
and its caches: the send ratio per mask version and the chunk table per bucket layout.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import torch

from pactrain.compaction.layout import BucketLayout
from pactrain.compaction.options import TOP_CHUNK_SELECTIONS
from pactrain.compression.compressors import SCALE_CHUNK, Bounds, chunk_count, segment_bounds
from pactrain.masks import MaskTracker


@dataclass(frozen=True)
class ChunkTable:
    """A bucket layout's chunks of kept entries and what each parameter may send of them
    (:meth:`Sampler.chunk_table`; cached per layout, whose key carries the mask version
    that the send ratio follows).

    Attributes:
        key: the layout's key.
        starts, lengths: start (in the kept buffer) and length of every chunk, slot after
            slot (int64; each slot's last chunk may be short).
        counts: chunks of each slot.
        budgets: chunks each slot may send per step (:meth:`Sampler.chunk_budgets`).
    """

    key: tuple
    starts: torch.Tensor
    lengths: torch.Tensor
    counts: tuple[int, ...]
    budgets: tuple[int, ...]

    @property
    def sampled(self) -> bool:
        """Whether some slot has more chunks than it may send (else all are sent)."""
        return any(n > b for n, b in zip(self.counts, self.budgets, strict=True))


@dataclass(frozen=True)
class Sample:
    """One step's agreed sample of a bucket's kept entries (:meth:`Sampler.sample`).

    Attributes:
        chosen: int64 positions of the entries sent, in the compacted (kept) buffer.
        positions: their flat positions in the bucket.
        per_slot: entries sent of each parameter, bucket order.
        bounds: (start, end) of each parameter's entries in the buffer sent.
        scales: the group's MAX of |v| of each chunk sent, when the selection agreed on
            them (top chunks: they are the ternary scales of what is sent, since each
            parameter's chosen chunks are whole chunks in order, its last possibly short).
    """

    chosen: torch.Tensor
    positions: torch.Tensor
    per_slot: tuple[int, ...]
    bounds: Bounds
    scales: torch.Tensor | None = None


def sample_stride(numel: int, kept: int, send_density: float) -> int:
    """The smallest stride that sends at most ``send_density x numel`` of ``kept``
    entries (at least one entry a step)."""
    budget = max(1, int(send_density * numel))
    return max(1, -(-kept // budget))


def sample_phase(seed: int, parameter: int) -> int:
    """A parameter's offset in the sampling cycle (Knuth's multiplicative hash: spreads
    consecutive parameters, so they do not send the same share of their entries in step)."""
    return (parameter * 2654435761 + seed * 40503) % (2 ** 32)


def chunk_entries(starts: torch.Tensor, lengths: torch.Tensor,
                  chunk: int = SCALE_CHUNK) -> torch.Tensor:
    """The positions of the entries of chunks starting at ``starts`` with ``lengths``
    (each at most ``chunk``), chunk after chunk.

    Why this shape: a top-chunk sample is whole chunks but the last of a parameter, so
    the positions are one broadcast add, ``starts x 1 + arange(chunk)``, with the few
    short chunks' tails cut out by slicing (at most one a parameter); spelled per entry
    (a cumulative sum and two ``repeat_interleave`` over the entries sent) it took 8x
    longer, about 4 ms a step per worker on resnet18's 0.5 M entries sent.
    """
    flat = (starts.unsqueeze(1) + torch.arange(chunk, device=starts.device)).view(-1)
    short = (lengths < chunk).nonzero().flatten().tolist()
    if not short:
        return flat
    pieces, row = [], 0
    for short_row in short:
        pieces.append(flat[row * chunk:short_row * chunk + int(lengths[short_row])])
        row = short_row + 1
    pieces.append(flat[row * chunk:])
    return torch.cat(pieces)


class Sampler:
    """This rank's share of the agreed sample (one per :class:`CompactionState`).

    Args:
        tracker: the mask tracker (the model density the send ratio follows).
        seed: the run seed (the phases of the cyclic sample).
        send_density: send at most this share of each bucket's entries per step;
            ``None``: every kept entry every step.
        send_select: how the sample is chosen
            (:data:`~pactrain.compaction.options.SEND_SELECTIONS`).
    """

    def __init__(self, tracker: MaskTracker, seed: int, send_density: float | None,
                 send_select: str) -> None:
        self.tracker = tracker
        self.seed = seed
        self.send_density = send_density
        self.send_select = send_select
        self._chunk_tables: dict[int, ChunkTable] = {}
        self._send_ratio: tuple[int, float] | None = None

    def set_send_density(self, send_density: float | None) -> None:
        """A new ``send_density``; forgets what was derived from the old one (the send
        ratio and every chunk table with its budgets)."""
        self.send_density = send_density
        self._send_ratio = None
        self._chunk_tables.clear()

    def sent_estimate(self, layout: BucketLayout) -> int:
        """Entries of the bucket a compacting tier sends per step (what the policy prices)."""
        kept = int(layout.kept.numel())
        if self.send_density is None:
            return kept
        if self.send_select in TOP_CHUNK_SELECTIONS:
            return sum(min(end - start, budget * SCALE_CHUNK) for (start, end), budget
                       in zip(layout.bounds, self.chunk_table(layout).budgets, strict=True))
        return -(-kept // self.stride(layout))

    def stride(self, layout: BucketLayout) -> int:
        """Send every ``stride``-th kept entry of each parameter this step (1: all of
        them): the smallest stride that keeps the entries sent within ``send_density`` x
        the bucket's entries."""
        if self.send_density is None:
            return 1
        return sample_stride(layout.numel, int(layout.kept.numel()), self.send_density)

    def sample(self, layout: BucketLayout, step: int) -> Sample | None:
        """Step ``step``'s sample when it needs no agreed maxima: ``cyclic``'s; ``None``
        when not sampling, or for the top chunks, which the hook picks once the group's
        maxima are in (:meth:`top_chunks`, when :meth:`chunks_to_agree`)."""
        if self.send_density is None or self.send_select in TOP_CHUNK_SELECTIONS:
            return None
        return self.cyclic_sample(layout, step)

    def chunks_to_agree(self, layout: BucketLayout) -> bool:
        """Whether this step's sample needs the group's max |v| of every chunk of kept
        entries (top chunks, unless every parameter may send all of its chunks)."""
        if self.send_density is None or self.send_select not in TOP_CHUNK_SELECTIONS:
            return False
        return self.chunk_table(layout).sampled

    def send_ratio(self) -> float:
        """Share of its kept entries each parameter sends per step under ``send_density``:
        ``min(1, send_density / model density)``, so the whole model sends about
        ``send_density`` of its entries, and nothing is sampled once the mask keeps fewer.

        Why model-wide and not per parameter or per bucket: global pruning keeps unequal
        shares of each layer (a 10% budget per parameter went on capping the layers the
        ranking kept at 30-50% after the model reached 10%: fashion-cnn, 100 Mbit/s race,
        87.5% after 800 steps where the unsampled tier passed 88% at step 550); and the
        model's density, unlike a bucket's, does not depend on DDP's bucket layout, so a
        resumed run chooses the same entries. Cached per mask version.
        """
        assert self.send_density is not None
        version = self.tracker.mask_version
        if self._send_ratio is None or self._send_ratio[0] != version:
            density = self.tracker.pruner.model_density()
            self._send_ratio = (version, min(1.0, self.send_density / max(density, 1e-12)))
        return self._send_ratio[1]

    def chunk_budgets(self, layout: BucketLayout) -> list[int]:
        """Chunks of :data:`~pactrain.compression.compressors.SCALE_CHUNK` kept entries
        each parameter may send per step: :meth:`send_ratio` of its own (at least one)."""
        ratio = self.send_ratio()
        return [max(1, math.ceil(ratio * chunk_count(end - start)))
                for start, end in layout.bounds]

    def chunk_table(self, layout: BucketLayout) -> ChunkTable:
        """The layout's chunks and each parameter's budget of them, cached per layout (per
        bucket index; the hook asks for it twice a step, in :meth:`chunks_to_agree` and
        :meth:`top_chunks`)."""
        index = layout.key[0]
        cached = self._chunk_tables.get(index)
        if cached is not None and cached.key == layout.key:
            return cached
        starts, lengths = [], []
        for start, end in layout.bounds:
            for at in range(start, end, SCALE_CHUNK):
                starts.append(at)
                lengths.append(min(SCALE_CHUNK, end - at))
        device = layout.kept.device
        table = ChunkTable(
            layout.key, torch.tensor(starts, dtype=torch.int64, device=device),
            torch.tensor(lengths, dtype=torch.int64, device=device),
            tuple(chunk_count(end - start) for start, end in layout.bounds),
            tuple(self.chunk_budgets(layout)))
        self._chunk_tables[index] = table
        return table

    def top_chunks(self, layout: BucketLayout, agreed: torch.Tensor) -> Sample:
        """Agreed top-k inside the mask, by chunks: each parameter sends the
        :meth:`chunk_budgets` chunks of its kept entries with the largest group-wide max
        |v| (values with their residual), and the rest waits in the residual.

        Why chunks: the group agrees on one number per chunk of 256 kept entries (the
        MAX all-reduce the ternary tiers already make for their scales, 4 B per 256
        entries, waited for here), so every rank picks the same chunks and still no index
        travels; an entry's residual grows until its chunk's max wins, so none starves.
        Per entry agreement (ARC-Top-k, arXiv 2510.26709, agrees by a sketch) would cost
        more bytes than it saves at these densities. Cost per step: one pass of chunk
        maxima (as the ternary scales), one ``topk`` per parameter over its chunks (a few
        thousand), one broadcast add over the entries sent (:func:`chunk_entries`).
        ``agreed``: the group's MAX of every chunk's max |v| (the hook agrees on it,
        :func:`~pactrain.compaction.send.send_compacted`).
        """
        table = self.chunk_table(layout)
        device = layout.kept.device
        picked, rows, at = [], [], 0
        for n, budget in zip(table.counts, table.budgets, strict=True):
            if n <= budget:
                picked.append(torch.arange(at, at + n, device=device))
            else:
                top = torch.topk(agreed[at:at + n], budget, sorted=False).indices
                picked.append(torch.sort(top).values + at)
            rows.append(min(n, budget))
            at += n
        ids = torch.cat(picked)
        lengths = table.lengths[ids]
        chosen = chunk_entries(table.starts[ids], lengths)
        # entries sent of each parameter: the lengths of its picked chunks, summed (one
        # sync for all; a parameter with no kept entry picks no chunk)
        sums = torch.cat([lengths.new_zeros(1), lengths.cumsum(0)])
        ends = sums[torch.tensor([0, *itertools.accumulate(rows)], device=device)].tolist()
        per_slot = tuple(b - a for a, b in itertools.pairwise(ends))
        return Sample(chosen, layout.kept.index_select(0, chosen), per_slot,
                      segment_bounds(per_slot), agreed.index_select(0, ids))

    def cyclic_sample(self, layout: BucketLayout, step: int) -> Sample | None:
        """Agreed cyclic sampling of the bucket's kept entries (``None``: all of them).

        Every rank computes the same sample from the step count, the run seed and each
        parameter's index, so the compacted buffers still match and no index travels.
        Parameter ``p``'s kept entries ``j`` with ``j = (step + phase_p) mod stride`` are
        sent: every kept entry exactly once in every ``stride`` steps (what was not sent
        waits in the residual, at most ``stride - 1`` steps), parameters
        out of phase with each other. A function of (seed, step, parameter, mask) only, so
        a resumed run in another bucket layout sends the same entries. Cost per step: one
        ``arange`` per parameter and two index selects of the entries sent.
        """
        stride = self.stride(layout)
        if stride <= 1:
            return None
        device = layout.kept.device
        pieces, per_slot = [], []
        for slot, (start, end) in zip(layout.slots, layout.bounds, strict=True):
            first = start + (step + sample_phase(self.seed, slot.index)) % stride
            count = len(range(first, end, stride))
            per_slot.append(count)
            if count:
                pieces.append(torch.arange(first, end, stride, device=device))
        chosen = (torch.cat(pieces) if pieces
                  else torch.empty(0, dtype=torch.int64, device=device))
        return Sample(chosen, layout.kept.index_select(0, chosen), tuple(per_slot),
                      segment_bounds(per_slot))
