"""course.datasets.digits (course.gpu and course.streams are tested in test_devices.py, on the CPU and on a GPU)."""

import pytest
import torch

import course


def test_digits_are_real_upscaled_and_deterministic():
    x, y = course.datasets.digits_images(16, seed=1)
    assert x.shape == (1797, 1, 16, 16) and x.dtype == torch.float32
    assert 0 <= x.min() and x.max() <= 1 and set(y.tolist()) == set(range(10))
    x2, y2 = course.datasets.digits_images(16, seed=1)
    assert torch.equal(x, x2) and torch.equal(y, y2)
    # each class looks different: class means are far apart
    means = torch.stack([x[y == k].mean(0) for k in range(10)])
    assert torch.cdist(means.flatten(1), means.flatten(1)).add(torch.eye(10) * 99).min() > 0.5
    with pytest.raises(ValueError, match="at least 8"):
        course.datasets.digits_images(4)


def test_colour_digits_keep_the_digit_visible():
    x, _ = course.datasets.digits_images(32)
    c = course.datasets.colour_digits(x[:64], jitter=0)
    assert c.shape == (64, 3, 32, 32)
    ink, paper = x[:64, 0] > 0.7, x[:64, 0] < 0.1
    contrast = [(c[i][:, ink[i]].mean(1) - c[i][:, paper[i]].mean(1)).abs().max() for i in range(64)]
    assert min(contrast) > 0.2
    with pytest.raises(ValueError, match="N×1×H×W"):
        course.datasets.colour_digits(c)
