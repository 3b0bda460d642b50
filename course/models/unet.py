"""UNet for semantic segmentation, with configurable width and depth (notebook 08; exported in 07).

Ronneberger, Fischer and Brox, "U-Net" (2015). An encoder halves the resolution ``depth``
times while doubling the channels; a decoder doubles it back, and at each level concatenates
the encoder's features of the same size (the *skip connection*), which carries the fine
detail that the coarse, deep features have lost. A 1×1 convolution gives one score per class
and pixel.

    x ─ stem ──────────────────────────── cat ─ conv ─ head → logits N×C×H×W
          └ down ─────────────── cat ─ conv ─ up ┘
                 └ down ─ ... ─ up ┘

``UNet(num_classes=11, width=16, depth=3)`` has ``width·2^depth`` channels at the bottom.
Inputs of any size work: they are padded to a multiple of ``2^depth`` and the output is
cropped back. ``checkpointing=True`` recomputes each block's activations in the backward
pass instead of storing them (less memory, more compute; notebook 08 measures both); batch
norm then runs twice per training step, so its running statistics are updated twice.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint

__all__ = ["UNet", "DoubleConv", "Down", "Up"]


class DoubleConv(nn.Sequential):
    """(3×3 convolution → batch norm → ReLU) twice: the building block of every level."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__(
            nn.Conv2d(in_channels, out_channels, 3, padding=1, bias=False),  # BN has the bias
            nn.BatchNorm2d(out_channels),
            nn.ReLU(inplace=True),
            nn.Conv2d(out_channels, out_channels, 3, padding=1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(inplace=True),
        )


class Down(nn.Sequential):
    """Encoder step: halve the resolution (2×2 max pool), then a DoubleConv."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__(nn.MaxPool2d(2), DoubleConv(in_channels, out_channels))


class Up(nn.Module):
    """Decoder step: double the resolution (2×2 transposed conv), join the skip, DoubleConv."""

    def __init__(self, in_channels: int, skip_channels: int, out_channels: int):
        super().__init__()
        self.up = nn.ConvTranspose2d(in_channels, in_channels // 2, kernel_size=2, stride=2)
        self.conv = DoubleConv(in_channels // 2 + skip_channels, out_channels)

    def forward(self, x: torch.Tensor, skip: torch.Tensor) -> torch.Tensor:
        x = self.up(x)
        x = torch.cat([skip, x], dim=1)  # the skip connection: encoder detail + decoder context
        return self.conv(x)


class UNet(nn.Module):
    """UNet: ``in_channels`` → ``num_classes`` scores per pixel; ``width`` channels at full resolution."""

    def __init__(self, in_channels: int = 3, num_classes: int = 11, width: int = 16, depth: int = 3,
                 checkpointing: bool = False):
        super().__init__()
        for name, value, low in (("in_channels", in_channels, 1), ("num_classes", num_classes, 2),
                                 ("width", width, 1), ("depth", depth, 1)):
            if not isinstance(value, int) or value < low:
                raise ValueError(f"{name} must be an int of at least {low}, got {value!r}")
        self.in_channels, self.num_classes, self.width, self.depth = in_channels, num_classes, width, depth
        self.checkpointing = checkpointing
        channels = [width * 2**level for level in range(depth + 1)]
        self.stem = DoubleConv(in_channels, channels[0])
        self.downs = nn.ModuleList(Down(channels[i], channels[i + 1]) for i in range(depth))
        self.ups = nn.ModuleList(Up(channels[i + 1], channels[i], channels[i]) for i in reversed(range(depth)))
        self.head = nn.Conv2d(channels[0], num_classes, kernel_size=1)

    def _run(self, block: nn.Module, *inputs: torch.Tensor) -> torch.Tensor:
        if self.checkpointing and self.training and torch.is_grad_enabled():
            # Keep only the block's inputs; recompute its insides during backward.
            return checkpoint(block, *inputs, use_reentrant=False)
        return block(*inputs)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.ndim != 4 or x.shape[1] != self.in_channels:
            raise ValueError(f"UNet expects a batch N×{self.in_channels}×H×W, got shape {tuple(x.shape)}; "
                             "add a batch dimension with x.unsqueeze(0) for one image")
        height, width = x.shape[-2:]
        multiple = 2**self.depth
        pad_h, pad_w = -height % multiple, -width % multiple
        if pad_h or pad_w:  # every level halves the size: pad so that it divides evenly
            x = F.pad(x, (0, pad_w, 0, pad_h), mode="replicate")
        skips = [self._run(self.stem, x)]
        for down in self.downs:
            skips.append(self._run(down, skips[-1]))
        x = skips.pop()  # the bottom of the U
        for up in self.ups:
            x = self._run(up, x, skips.pop())
        logits = self.head(x)
        return logits[..., :height, :width] if (pad_h or pad_w) else logits

    def extra_repr(self) -> str:
        return f"width={self.width}, depth={self.depth}, checkpointing={self.checkpointing}"
