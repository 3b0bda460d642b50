"""Real handwritten digits that ship with scikit-learn, as image tensors (notebooks 05 and 07).

1,797 scans of handwritten digits, 8×8 pixels with 16 grey levels, from the UCI ML repository.
They are small, but real, and always available offline — the course's stand-in when CIFAR-10
or MNIST cannot be downloaded.
"""

from __future__ import annotations

import numpy as np

__all__ = ["digits_images", "colour_digits"]


def digits_images(size: int = 32, *, seed: int = 0, shuffle: bool = True):
    """All scikit-learn digits as a float32 tensor N×1×size×size in [0, 1], and int64 labels.

    Upscaled with bilinear interpolation (antialiased when shrinking) from the 8×8 originals.
    """
    import torch
    import torch.nn.functional as F
    from sklearn.datasets import load_digits

    if not isinstance(size, int) or size < 8:
        raise ValueError(f"size must be an int of at least 8 pixels, got {size!r}")
    bunch = load_digits()
    images = torch.from_numpy(bunch.images.astype(np.float32) / 16.0).unsqueeze(1)
    labels = torch.from_numpy(bunch.target.astype(np.int64))
    if size != 8:
        images = F.interpolate(images, size=(size, size), mode="bilinear", align_corners=False).clamp_(0, 1)
    if shuffle:
        order = torch.randperm(len(labels), generator=torch.Generator().manual_seed(seed))
        images, labels = images[order], labels[order]
    return images, labels


def colour_digits(images, *, seed: int = 0, jitter: int = 2):
    """Give each grey digit a random foreground and background colour and a small random shift.

    Turns N×1×H×W digits into N×3×H×W colour images, so that a classifier must learn shapes,
    not colours — the lesson CIFAR-10 teaches, on data that is always at hand.
    """
    import torch

    if images.ndim != 4 or images.shape[1] != 1:
        raise ValueError(f"expected grey images N×1×H×W, got shape {tuple(images.shape)}")
    g = torch.Generator().manual_seed(seed)
    n = images.shape[0]
    background = torch.rand(n, 3, 1, 1, generator=g) * 0.6
    foreground = (background + 0.4 + torch.rand(n, 3, 1, 1, generator=g) * 0.6) % 1.0
    # keep the two colours apart so the digit stays visible
    foreground = torch.where((foreground - background).abs() < 0.3, 1.0 - background, foreground)
    coloured = background + images * (foreground - background)
    if jitter:
        shifts = torch.randint(-jitter, jitter + 1, (n, 2), generator=g)
        coloured = torch.stack([torch.roll(img, shifts=(int(dy), int(dx)), dims=(1, 2))
                                for img, (dy, dx) in zip(coloured, shifts)])
    noise = torch.randn(coloured.shape, generator=g) * 0.03
    return (coloured + noise).clamp_(0, 1)
