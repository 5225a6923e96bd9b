"""Memories on their own (no process group): one residual memory keyed by parameter name,
DGC's momentum correction, PowerSGD's per-bucket pieces."""

from __future__ import annotations

import pytest
import torch

from pactrain.compression.memory import (
    BucketPieces,
    BucketSlot,
    MomentumCorrectionMemory,
    ResidualMemory,
)

CPU = torch.device("cpu")


def _slots(*pieces: tuple[str, int]) -> tuple[BucketSlot, ...]:
    """A bucket of the named parameters back to back, in this order."""
    slots, offset = [], 0
    for index, (name, numel) in enumerate(pieces):
        slots.append(BucketSlot(name, index, offset, numel, (numel,)))
        offset += numel
    return tuple(slots)


def test_residual_memory_is_kept_per_parameter_name() -> None:
    memory = ResidualMemory()
    acc = memory.compensate("w", torch.tensor([1.0, 2.0, 3.0]))
    memory.update_sparse("w", acc, torch.tensor([1]))  # sent w[1]
    assert memory.compensate("w", torch.ones(3)).tolist() == [2.0, 1.0, 4.0]
    assert memory.compensate("b", torch.ones(2)).tolist() == [1.0, 1.0]
    again = ResidualMemory()
    again.load_state_dict(memory.state_dict())
    assert torch.equal(again.residuals["w"], memory.residuals["w"])
    with pytest.raises(ValueError, match="start the run again"):
        again.load_state_dict({"residuals": {0: torch.zeros(3)}})  # keyed by bucket index


def test_bucket_residuals_return_what_was_dropped() -> None:
    ab, ba = _slots(("a", 3), ("b", 5)), _slots(("b", 5), ("a", 3))
    memory = ResidualMemory()
    kept = torch.tensor([0, 2, 5])
    memory.store_kept(0, ab, kept, torch.tensor([0.5, -1.0, 2.0]))
    values = memory.compensate_kept(0, ab, kept, torch.ones(3))
    assert values.tolist() == [1.5, 0.0, 3.0]
    # a checkpoint stores residuals per parameter; a new layout (b before a) gets them back
    saved = memory.state_dict()
    assert saved["residuals"]["a"].tolist() == [0.5, 0.0, -1.0]
    restored = ResidualMemory()
    restored.load_state_dict(saved)
    assert restored.bucket_residual(1, ba, CPU).tolist() == [0, 0, 2.0, 0, 0, 0.5, 0, -1.0]
    # DDP rebuilds its buckets: the residual follows its parameters to their new offsets
    assert restored.bucket_residual(0, ab, CPU).tolist() == [0.5, 0, -1.0, 0, 0, 2.0, 0, 0]
    assert restored.bucket_residual(1, _slots(("c", 4)), CPU) is None
    memory.drop_bucket(0)
    assert memory.compensate_kept(0, ab, kept, torch.ones(3)).tolist() == [1.0, 1.0, 1.0]
    assert not memory.residuals


def test_a_parameter_moved_into_an_earlier_bucket_keeps_its_residual() -> None:
    """DDP's rebuild moves c from bucket 1 into bucket 0, whose turn comes first in the
    step. The former memory released and placed residuals one bucket at a time, so c's
    residual was still inside old bucket 1 when bucket 0 was laid out: it was lost."""
    memory = ResidualMemory()
    old0, old1 = _slots(("a", 2)), _slots(("b", 2), ("c", 2))
    memory.store_kept(0, old0, torch.tensor([0, 1]), torch.tensor([1.0, 2.0]))
    memory.store_kept(1, old1, torch.arange(4), torch.tensor([3.0, 4.0, 5.0, 6.0]))
    new0, new1 = _slots(("c", 2), ("a", 2)), _slots(("b", 2))
    assert memory.compensate_kept(0, new0, torch.arange(4), torch.zeros(4)).tolist() == [
        5.0, 6.0, 1.0, 2.0]
    memory.store_kept(0, new0, torch.tensor([1]), torch.tensor([7.0]))
    assert memory.compensate_kept(1, new1, torch.arange(2), torch.zeros(2)).tolist() == [
        3.0, 4.0]
    # the next step: both buckets in their new layout, and per name in a checkpoint
    assert memory.bucket_residual(0, new0, CPU).tolist() == [5.0, 7.0, 1.0, 2.0]
    saved = memory.state_dict()["residuals"]
    assert {name: t.tolist() for name, t in saved.items()} == {
        "a": [1.0, 2.0], "b": [3.0, 4.0], "c": [5.0, 7.0]}


def test_an_equal_layout_keeps_the_bucket_residual() -> None:
    """A mask change rebuilds the hook's layout (a new slots tuple, equal entries): the
    residual stays where it is, and no other bucket is re-laid."""
    memory = ResidualMemory()
    memory.store_kept(0, _slots(("a", 2)), torch.tensor([1]), torch.tensor([3.0]))
    memory.store_kept(1, _slots(("b", 1)), torch.tensor([0]), torch.tensor([4.0]))
    flat = memory.bucket_residual(0, _slots(("a", 2)), CPU)
    assert flat is not None and flat.tolist() == [0.0, 3.0]
    assert memory.bucket_residual(0, _slots(("a", 2)), CPU) is flat
    assert memory.residuals["b"].tolist() == [4.0]


def test_the_compact_residual_reads_like_the_scattered_one() -> None:
    """Stored twice at the same ``kept`` (the compact copy), then read at new positions
    (a mask change), by name and from a checkpoint: every reader sees what scattered
    writes at ``kept`` would have left, positions outside ``kept`` included."""
    slots = _slots(("a", 3), ("b", 3))
    memory = ResidualMemory()
    kept = torch.tensor([0, 2, 4])
    memory.store_kept(0, slots, kept, torch.tensor([1.0, 2.0, 3.0]))
    memory.store_kept(0, slots, kept, torch.tensor([4.0, 5.0, 6.0]))
    assert memory.compensate_kept(0, slots, kept, torch.zeros(3)).tolist() == [4.0, 5.0, 6.0]
    assert memory.residuals["b"].tolist() == [0.0, 6.0, 0.0]
    fewer = torch.tensor([2, 4])  # the mask dropped position 0
    assert memory.compensate_kept(0, slots, fewer, torch.zeros(2)).tolist() == [5.0, 6.0]
    memory.store_kept(0, slots, fewer, torch.tensor([7.0, 8.0]))
    assert memory.state_dict()["residuals"]["a"].tolist() == [4.0, 0.0, 7.0]
    assert memory.bucket_residual(0, slots, CPU).tolist() == [4.0, 0.0, 7.0, 0.0, 8.0, 0.0]
    memory.drop_bucket(0)
    assert memory.compensate_kept(0, slots, fewer, torch.zeros(2)).tolist() == [0.0, 0.0]


def test_bucket_pieces_follow_a_rebuild_and_a_resume() -> None:
    owner: dict[int, torch.Tensor] = {}
    pieces = BucketPieces(owner)
    pieces.align(0, (("a", 2), ("b", 3)))
    pieces.align(1, (("c", 1),))
    owner[0], owner[1] = torch.arange(5.0), torch.tensor([9.0])
    # DDP rebuilt its buckets: b moved to the front of bucket 0, c joined it, a went to 1
    pieces.align(0, (("b", 3), ("c", 1)))
    assert owner[0].tolist() == [2.0, 3.0, 4.0, 9.0] and 1 not in owner
    pieces.align(1, (("a", 2),))
    assert owner[1].tolist() == [0.0, 1.0]
    saved = pieces.state_dict()
    assert saved["c"].tolist() == [9.0]
    # a resumed run: one bucket of everything, pieces placed at its first call
    resumed: dict[int, torch.Tensor] = {}
    again = BucketPieces(resumed)
    again.load_state_dict(saved)
    again.align(0, (("a", 2), ("b", 3), ("c", 1), ("d", 0)))
    assert resumed[0].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 9.0]
    wrong = BucketPieces({})
    wrong.load_state_dict(saved)
    with pytest.raises(ValueError, match="other method options"):
        wrong.align(0, (("a", 4),))  # e.g. written at another PowerSGD rank


def test_momentum_correction_accumulates_and_masks() -> None:
    memory = MomentumCorrectionMemory(momentum=0.5)
    g = torch.tensor([1.0, 1.0])
    assert memory.compensate("w", g).tolist() == [1.0, 1.0]  # u = g, v = u
    memory.update_sparse("w", torch.tensor([0]))
    # entry 0 was sent: u and v cleared; entry 1: u = 0.5 + 1, v = 1 + 1.5
    assert memory.compensate("w", g).tolist() == [1.0, 2.5]
