"""Mask tracker on real gloo groups: agreement, detection and repair of a corrupted mask."""

import pytest
import torch
from torch import nn

from pactrain.masks import MaskMismatchError, MaskTracker
from pactrain.pruning import GradualPruner, PruningConfig
from pactrain.train.local_group import run_on_local_group


def _tracker() -> MaskTracker:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    return MaskTracker(GradualPruner(model, PruningConfig(
        final_sparsity=0.5, start_step=0, end_step=4, frequency=2)))


def _corrupt_and_repair(rank: int, world_size: int) -> dict:
    tracker = _tracker()
    versions = []
    for step in range(5):
        tracker.step(step)
        versions.append(tracker.mask_version)
    agreed = tracker.verify()
    reference = {n: m.clone() for n, m in tracker.pruner.masks.items()}
    if rank == world_size - 1:
        tracker.pruner.masks["0.weight"][0, :3] ^= True  # flip three entries
    detected = not tracker.verify_and_repair()
    repaired = all(torch.equal(tracker.pruner.masks[n], reference[n]) for n in reference)
    return {"agreed": agreed, "detected": detected, "repaired": repaired,
            "fingerprint": tracker.fingerprint(), "versions": versions,
            "mismatches": tracker.mismatches, "consistent": tracker.consistent,
            "zeroed": bool((tracker.pruner.params["0.weight"][~reference["0.weight"]] == 0)
                           .all())}


def test_masks_agree_and_a_corrupted_mask_is_detected_and_repaired() -> None:
    results = run_on_local_group(_corrupt_and_repair, 3)
    assert all(r["agreed"] for r in results)
    assert all(r["detected"] and r["repaired"] and r["zeroed"] for r in results)
    assert len({r["fingerprint"] for r in results}) == 1
    # step 0 prunes nothing (initial sparsity 0), so it is no new version
    assert all(r["versions"] == [0, 0, 1, 1, 2] for r in results)
    assert all(r["mismatches"] == 1 and not r["consistent"] for r in results)


class _BrokenBroadcastTracker(MaskTracker):
    """A tracker whose repair cannot work (stands for ranks with diverging pruners)."""

    def broadcast_from_rank0(self) -> None:
        return None


def _unrepairable(rank: int, world_size: int) -> str:
    tracker = _BrokenBroadcastTracker(_tracker().pruner)
    tracker.pruner.update_masks(0.5)
    if rank == 1:
        tracker.pruner.masks["2.weight"][0, 0] ^= True
    try:
        tracker.verify_and_repair()
    except MaskMismatchError as error:
        return str(error)
    return "no error"


def test_mismatch_that_survives_repair_raises_with_a_fix() -> None:
    for message in run_on_local_group(_unrepairable, 2):
        assert "still differ" in message and "--sparsity" in message


def test_fingerprint_differs_for_one_flipped_entry() -> None:
    tracker = _tracker()
    tracker.pruner.update_masks(0.5)
    before = tracker.fingerprint()
    tracker.pruner.masks["2.weight"][1, 1] ^= True
    assert tracker.fingerprint() != before
    with pytest.raises(ValueError, match="same --model"):
        tracker.pruner.load_state_dict({"masks": {"x": torch.ones(1)}, "sparsity": 0.0,
                                        "last_update_step": -1})
