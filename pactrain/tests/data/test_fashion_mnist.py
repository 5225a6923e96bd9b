"""The Fashion-MNIST reader: real files where installed, crafted IDX files for every check."""

import gzip
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from pactrain.data import fashion_mnist
from pactrain.data.fashion_mnist import (
    DatasetCorruptError,
    DatasetMissingError,
    check_available,
    read_idx,
)

INSTALLED = fashion_mnist.DEBIAN_DIR.joinpath("t10k-labels-idx1-ubyte.gz").is_file()
needs_dataset = pytest.mark.skipif(
    not INSTALLED, reason="Fashion-MNIST is not installed: apt-get install dataset-fashion-mnist")


def write_idx(path: Path, magic: int, dims: tuple[int, ...], data: bytes) -> Path:
    header = magic.to_bytes(4, "big") + b"".join(d.to_bytes(4, "big") for d in dims)
    with gzip.open(path, "wb") as handle:
        handle.write(header + data)
    return path


def test_reads_a_well_formed_idx_file(tmp_path: Path) -> None:
    data = bytes(range(24))
    path = write_idx(tmp_path / "x.gz", 0x803, (2, 3, 4), data)
    array = read_idx(path, 0x803, (2, 3, 4))
    assert array.shape == (2, 3, 4) and array[1, 2, 3] == 23


@pytest.mark.parametrize(("magic", "dims", "size", "message"), [
    (0x801, (2, 3, 4), 24, "magic 0x00000801, expected 0x00000803"),
    (0x803, (2, 3, 5), 30, r"dimensions \(2, 3, 5\), expected \(2, 3, 4\)"),
    (0x803, (2, 3, 4), 20, "20 data bytes, expected 24"),
])
def test_refuses_wrong_magic_dimensions_and_length(tmp_path: Path, magic: int, dims: tuple,
                                                   size: int, message: str) -> None:
    path = write_idx(tmp_path / "x.gz", magic, dims, bytes(size))
    with pytest.raises(DatasetCorruptError, match=message):
        read_idx(path, 0x803, (2, 3, 4))


def test_refuses_a_file_that_is_not_gzip(tmp_path: Path) -> None:
    path = tmp_path / "x.gz"
    path.write_bytes(b"not gzip at all")
    with pytest.raises(DatasetCorruptError, match="cannot be read"):
        read_idx(path, 0x803, (2, 3, 4))


def test_missing_folder_names_the_install_command(tmp_path: Path) -> None:
    with pytest.raises(DatasetMissingError, match="apt-get install dataset-fashion-mnist"):
        check_available(tmp_path)


def test_cli_exits_2_with_one_line_before_any_worker(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "pactrain.cli", "train", "--model",
                           "fashion-cnn", "--data-dir", str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "apt-get install dataset-fashion-mnist" in lines[0]
    assert str(tmp_path) in lines[0]


@needs_dataset
def test_the_installed_files_are_the_official_split() -> None:
    x_train, y_train, x_test, y_test = fashion_mnist.load_split()
    assert tuple(x_train.shape) == (60_000, 1, 28, 28)
    assert tuple(x_test.shape) == (10_000, 1, 28, 28)
    assert np.bincount(y_train.numpy()).tolist() == [6000] * 10
    assert np.bincount(y_test.numpy()).tolist() == [1000] * 10
    # the fixed normalisation constants are the training set's own
    raw = x_train * fashion_mnist.PIXEL_STD + fashion_mnist.PIXEL_MEAN
    assert float(raw.mean()) == pytest.approx(fashion_mnist.PIXEL_MEAN, abs=5e-4)
    assert float(raw.std()) == pytest.approx(fashion_mnist.PIXEL_STD, abs=5e-4)
