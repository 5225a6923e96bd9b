"""The digit-classification task every digits model shares: scikit-learn's fixed split.

``digits-cnn``, ``resnet18`` and ``vit-tiny`` differ only in their network and in how they
see an image (8x8 grey, or 32x32 colour); :func:`digits_spec` gives each the same split,
stream and evaluation (:mod:`pactrain.models.image_task`). The data itself is in
:mod:`pactrain.data.digits`.
"""

from __future__ import annotations

import functools

from pactrain.data.digits import load_split
from pactrain.models.image_task import classification_metrics, image_spec, native

__all__ = ["classification_metrics", "digits_spec", "native"]

#: :func:`image_spec` on the digits' fixed split (449 held-out images).
digits_spec = functools.partial(image_spec, split=load_split)
