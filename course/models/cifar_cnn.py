"""Two CIFAR-10 networks (notebook 05; SeedNet is exported to ONNX in notebook 09).

- ``SeedNet`` — the seed article's CNN with its two bugs fixed: ``F`` was never imported, and
  after a 5×5 convolution and a 2×2 pool a 32×32 image is 14×14, not 13×13, so the first
  linear layer takes ``64 * 14 * 14`` features.
- ``SpeedNet`` — a small residual network in the style of the fast CIFAR-10 training records
  (David Page's ResNet-9 for DAWNBench, Keller Jordan's airbench): conv-BN-ReLU blocks, three
  poolings, two residual blocks, a max-pooled head whose logits are scaled by 1/8. Notebook 05's
  gpu-mode recipe (width 64, 30 epochs) *targets* 94 % test accuracy on CIFAR-10, as Page's
  ResNet-9 reached; the notebook reports it as a target, beside the recorded GPU run of the recipe
  when ``docs/gpu-runs/`` holds one (``recorded_speed_run``). Smaller widths trade accuracy for speed.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
import torch.nn.functional as F  # the import the seed forgot
from torch import nn

__all__ = ["SeedNet", "SpeedNet", "conv_output_size", "recorded_speed_run", "SPEED_RUN_RECORDS"]

#: Recorded GPU runs of notebook 05's speed run: a JSON list, one object per run (see ``recorded_speed_run``).
SPEED_RUN_RECORDS = Path(__file__).resolve().parents[2] / "docs" / "gpu-runs" / "05_cifar10_speed_run.json"


def conv_output_size(size: int, kernel: int, stride: int = 1, padding: int = 0) -> int:
    """Side of a convolution's (or pooling's) output: ⌊(size + 2·padding − kernel) / stride⌋ + 1."""
    return (size + 2 * padding - kernel) // stride + 1


class SeedNet(nn.Module):
    """The seed's CIFAR-10 CNN, fixed: conv 5×5 (64) → ReLU → max-pool 2×2 → linear 100 → ReLU → linear 10.

    Input N×3×32×32 (``image_size`` may differ); output N×num_classes logits.
    """

    def __init__(self, num_classes: int = 10, image_size: int = 32):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 5)
        self.pool = nn.MaxPool2d(2, 2)
        side = conv_output_size(conv_output_size(image_size, 5), 2, stride=2)  # 32 → 28 → 14
        self.fc1 = nn.Linear(64 * side * side, 100)  # 64 * 14 * 14, not the seed's 64 * 13 * 13
        self.fc2 = nn.Linear(100, num_classes)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = torch.flatten(x, 1)  # keeps the batch dimension; the seed's view(-1, ...) could mix images
        x = F.relu(self.fc1(x))
        return self.fc2(x)


def conv_bn(c_in: int, c_out: int) -> nn.Sequential:
    """3×3 convolution (no bias: BatchNorm adds one), BatchNorm, ReLU."""
    return nn.Sequential(
        nn.Conv2d(c_in, c_out, 3, padding=1, bias=False),
        nn.BatchNorm2d(c_out),
        nn.ReLU(inplace=True),
    )


class Residual(nn.Module):
    """x + two conv-BN-ReLU blocks of x: the shortcut lets the gradient skip the blocks."""

    def __init__(self, channels: int):
        super().__init__()
        self.block = nn.Sequential(conv_bn(channels, channels), conv_bn(channels, channels))

    def forward(self, x):
        return x + self.block(x)


class SpeedNet(nn.Module):
    """A ResNet-9-style network for 32×32 images; channels grow width → 2·, 4·, 8·width.

    32×32 → prep → 16×16 (+ residual) → 8×8 → 4×4 (+ residual) → global max-pool → linear.
    """

    def __init__(self, width: int = 64, num_classes: int = 10, logit_scale: float = 0.125):
        super().__init__()
        if not isinstance(width, int) or width < 1:
            raise ValueError(f"width must be a positive int (64 for the 94 % recipe), got {width!r}")
        w = width
        self.layers = nn.Sequential(
            conv_bn(3, w),                                             # 32×32
            conv_bn(w, 2 * w), nn.MaxPool2d(2), Residual(2 * w),       # 16×16
            conv_bn(2 * w, 4 * w), nn.MaxPool2d(2),                    # 8×8
            conv_bn(4 * w, 8 * w), nn.MaxPool2d(2), Residual(8 * w),   # 4×4
            nn.AdaptiveMaxPool2d(1), nn.Flatten(),
            nn.Linear(8 * w, num_classes, bias=False),
        )
        self.logit_scale = logit_scale  # small logits at the start keep early training calm

    def forward(self, x):
        return self.layers(x) * self.logit_scale


_RECORD_KEYS = ("date", "device", "command", "torch", "width", "epochs", "batch", "train_seconds", "tta_accuracy")


def recorded_speed_run(width: int, epochs: int, batch: int, path=None) -> dict | None:
    """The best recorded GPU run of notebook 05's speed run with this recipe, or None (notebook 05).

    ``path`` (default ``SPEED_RUN_RECORDS``) holds a JSON list of runs on real CIFAR-10, each with
    the keys ``date, device, command, torch, width, epochs, batch, train_seconds, tta_accuracy``
    (the notebook writes such a record to ``build/outputs/05/speed_run.json``; copy it there with
    the command that ran it). Only a run of the same width, epochs and batch counts: a record of
    another recipe says nothing about this one. A malformed file raises ``ValueError``.
    """
    path = Path(path) if path is not None else SPEED_RUN_RECORDS
    if not path.exists():
        return None
    try:
        runs = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ValueError(f"{path} is not valid JSON ({error}); fix or delete it") from error
    if not isinstance(runs, list):
        raise ValueError(f"{path} must hold a JSON list of runs, got {type(runs).__name__}")
    matching = []
    for i, run in enumerate(runs):
        missing = [key for key in _RECORD_KEYS if key not in run]
        if missing:
            raise ValueError(f"{path}: run {i} lacks {', '.join(missing)}; every run records {', '.join(_RECORD_KEYS)}")
        if str(run["device"]).lower().startswith("cpu"):
            continue  # only a GPU run records the gpu-mode figure
        if (run["width"], run["epochs"], run["batch"]) == (width, epochs, batch):
            matching.append(run)
    return max(matching, key=lambda run: run["tta_accuracy"], default=None)
