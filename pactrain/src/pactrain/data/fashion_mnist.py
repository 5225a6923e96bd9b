"""Fashion-MNIST (Xiao et al. 2017) from its original IDX files, checked before use.

Why this dataset: it is a standard benchmark (60,000 training and 10,000 test images,
28x28 grey, 10 classes) that installs offline from Debian and Ubuntu
(``apt-get install dataset-fashion-mnist`` puts the four ``*-ubyte.gz`` files in
``/usr/share/datasets/fashion-mnist/``), and it is hard enough that compressors differ in
accuracy, unlike scikit-learn's 1,797 8x8 digits.

IDX format (LeCun's MNIST page, which Fashion-MNIST keeps byte for byte): a big-endian
32-bit magic whose third byte is the element type (0x08: unsigned byte) and fourth the
number of dimensions, then one big-endian 32-bit size per dimension, then the data. So
images start with 0x00000803 and labels with 0x00000801. A file whose magic, dimensions
or length disagree with the expected 60,000/10,000 x 28 x 28 is refused with its path.

Where the files are: ``$PACTRAIN_DATA`` if set (a folder holding the four files, gzipped
or not), else the Debian location. Workers inherit the environment, so ``--data-dir`` on
the CLI sets ``PACTRAIN_DATA`` before any worker starts.
"""

from __future__ import annotations

import functools
import gzip
import os
from pathlib import Path

import numpy as np
import torch

#: Where Debian's ``dataset-fashion-mnist`` installs the files.
DEBIAN_DIR = Path("/usr/share/datasets/fashion-mnist")
#: Environment variable naming another folder (set by ``--data-dir``).
DATA_ENV = "PACTRAIN_DATA"
INSTALL_HINT = "apt-get install dataset-fashion-mnist"

#: (file stem, magic, expected shape) of each split's images and labels.
FILES: dict[str, tuple[tuple[str, int, tuple[int, ...]], tuple[str, int, tuple[int, ...]]]] = {
    "train": (("train-images-idx3-ubyte", 0x803, (60_000, 28, 28)),
              ("train-labels-idx1-ubyte", 0x801, (60_000,))),
    "test": (("t10k-images-idx3-ubyte", 0x803, (10_000, 28, 28)),
             ("t10k-labels-idx1-ubyte", 0x801, (10_000,))),
}

#: Mean and standard deviation of the 60,000 training pixels in [0, 1] (computed once from
#: the files; fixed numbers so normalising never needs a pass over the data).
PIXEL_MEAN = 0.2860
PIXEL_STD = 0.3530

CLASSES = ("T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
           "Sneaker", "Bag", "Ankle boot")


class DatasetMissingError(FileNotFoundError):
    """The Fashion-MNIST files are not where they were looked for (the message says how to
    install them or where to point)."""


class DatasetCorruptError(ValueError):
    """A Fashion-MNIST file exists but is not the IDX file it should be."""


def data_dir(override: str | Path | None = None) -> Path:
    """The folder to read: ``override``, else ``$PACTRAIN_DATA``, else Debian's."""
    if override is not None:
        return Path(override)
    env = os.environ.get(DATA_ENV)
    return Path(env) if env else DEBIAN_DIR


def _find(folder: Path, stem: str) -> Path:
    for candidate in (folder / f"{stem}.gz", folder / stem):
        if candidate.is_file():
            return candidate
    raise DatasetMissingError(
        f"Fashion-MNIST not found: no {stem}[.gz] in {folder}; install it with "
        f"`{INSTALL_HINT}` (it goes to {DEBIAN_DIR}) or point --data-dir / ${DATA_ENV} at a "
        "folder holding the four IDX files")


def check_available(folder: str | Path | None = None) -> Path:
    """Raise :class:`DatasetMissingError` unless all four files are in the folder; return it.

    Cheap (no decompression): the CLI calls it before any worker starts.
    """
    where = data_dir(folder)
    for images, labels in FILES.values():
        _find(where, images[0])
        _find(where, labels[0])
    return where


def read_idx(path: Path, magic: int, shape: tuple[int, ...]) -> np.ndarray:
    """The array of one IDX file, after checking its magic, dimensions and length."""
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rb") as handle:
            raw = handle.read()
    except (OSError, EOFError) as err:  # a truncated or non-gzip .gz
        raise DatasetCorruptError(f"{path}: cannot be read ({err}); reinstall it "
                                  f"(`{INSTALL_HINT}`)") from None
    header = 4 + 4 * len(shape)
    if len(raw) < header:
        raise DatasetCorruptError(f"{path}: {len(raw)} bytes is shorter than an IDX header")
    found = int.from_bytes(raw[:4], "big")
    if found != magic:
        raise DatasetCorruptError(f"{path}: magic 0x{found:08x}, expected 0x{magic:08x} "
                                  "(not this IDX file)")
    dims = tuple(int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(len(shape)))
    if dims != shape:
        raise DatasetCorruptError(f"{path}: dimensions {dims}, expected {shape}")
    body = np.frombuffer(raw, dtype=np.uint8, offset=header)
    if body.size != int(np.prod(shape)):
        raise DatasetCorruptError(f"{path}: {body.size} data bytes, expected "
                                  f"{int(np.prod(shape))} (truncated?)")
    return body.reshape(shape)


@functools.lru_cache(maxsize=4)
def _load(folder: str, split: str) -> tuple[torch.Tensor, torch.Tensor]:
    (img_stem, img_magic, img_shape), (lab_stem, lab_magic, lab_shape) = FILES[split]
    where = Path(folder)
    images = read_idx(_find(where, img_stem), img_magic, img_shape)
    labels = read_idx(_find(where, lab_stem), lab_magic, lab_shape)
    if labels.max() > 9:
        raise DatasetCorruptError(f"{where / lab_stem}: label {labels.max()} outside 0..9")
    x = torch.from_numpy(images.astype(np.float32) / 255.0).unsqueeze(1)
    x = (x - PIXEL_MEAN) / PIXEL_STD
    return x, torch.from_numpy(labels.astype(np.int64))


def load_split(folder: str | Path | None = None,
               ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(x_train, y_train, x_test, y_test)``: normalised (n, 1, 28, 28) float images and
    int64 labels; the official 60,000/10,000 split. Cached per folder in this process."""
    where = str(data_dir(folder))
    x_train, y_train = _load(where, "train")
    x_test, y_test = _load(where, "test")
    return x_train, y_train, x_test, y_test
