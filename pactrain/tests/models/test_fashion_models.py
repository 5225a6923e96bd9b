"""Fashion-MNIST models: their sizes, and a real 2-worker run that learns."""

import pytest

from pactrain.data import fashion_mnist
from pactrain.models import get_model
from pactrain.train.config import RunConfig
from pactrain.train.launch import run_training

INSTALLED = fashion_mnist.DEBIAN_DIR.joinpath("t10k-labels-idx1-ubyte.gz").is_file()


@pytest.mark.parametrize(("name", "parameters"), [("fashion-cnn", 3_241_354),
                                                   ("fashion-resnet18", 11_175_370)])
def test_model_sizes(name: str, parameters: int) -> None:
    model = get_model(name).build(0)
    assert sum(p.numel() for p in model.parameters()) == parameters


@pytest.mark.slow
@pytest.mark.skipif(not INSTALLED, reason="Fashion-MNIST is not installed: "
                    "apt-get install dataset-fashion-mnist")
def test_fashion_cnn_learns_under_pactrain_on_two_workers() -> None:
    """The exact tier on every bucket (``pactrain-fp32``), not the adaptive method: on
    loopback the adaptive policy may rightly keep a bucket dense (it did on a host whose
    loopback carried the dense gradient in less time than compaction took), so only the
    fixed tier makes the payload claim hold on every host."""
    config = RunConfig(model="fashion-cnn", method="pactrain-fp32", workers=2, steps=60,
                       sparsity=0.9, batch_size=64, prune_start=0.0, prune_end=0.3,
                       warmup_steps=0)
    result = run_training(config, progress=False)
    # 60 steps of batch 128 on 60,000 images: far above chance (10%), on all 10,000
    assert result["final_test_accuracy"] > 0.7
    assert result["density"] == pytest.approx(0.1, abs=1e-3)
    assert result["compacted_fraction"] > 0.99
    assert result["final_payload_bytes_per_step"] < 0.3 * result["dense_payload_bytes_per_step"]


@pytest.mark.skipif(not INSTALLED, reason="Fashion-MNIST is not installed: "
                    "apt-get install dataset-fashion-mnist")
def test_the_training_loop_keeps_ddps_small_first_bucket() -> None:
    """fashion-cnn's 13 MB gradient fits in one 25 MB bucket. Left unset, DDP rebuilds it
    after the first step into a first bucket of the classifier (ready early in backward,
    so its communication overlaps the convolutions' backward) and one of the convolutions;
    any explicit cap, 25 included, keeps a single bucket handed over at the end."""
    common = dict(model="fashion-cnn", method="pactrain-fp32", workers=2, steps=4,
                  sparsity=0.5, batch_size=16, warmup_steps=0, probe_link=False,
                  evaluate=False)
    default = run_training(RunConfig(**common), progress=False, timeout_s=300)
    explicit = run_training(RunConfig(bucket_cap_mb=25.0, **common), progress=False,
                            timeout_s=300)
    assert sorted(default["tier_counts_per_bucket"]) == ["0", "1"]
    # after the rebuild: the classifier's 3.22 M entries, then the convolutions' 18,816
    assert default["tier_counts_per_bucket"]["1"] == {"fp32": 3}
    assert sorted(explicit["tier_counts_per_bucket"]) == ["0"]
