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

``ResNetUNet`` is the transfer-learning variant practitioners start from on small data sets
(fast.ai's CamVid lesson): the encoder is a torchvision ResNet-18/34, optionally with its
ImageNet weights, and the decoder is this file's ``Up`` blocks.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint

__all__ = ["UNet", "ResNetUNet", "DoubleConv", "Down", "Up"]


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


#: ImageNet's per-channel mean and standard deviation: what torchvision's pretrained encoders expect.
IMAGENET_MEAN, IMAGENET_STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


def _resnet(backbone: str, pretrained: bool):
    """A torchvision ResNet and whether it holds ImageNet weights (False when they cannot be had).

    The weights come through torchvision's own mechanism, which checks the file's hash; without
    a network (or a cached copy in ``torch.hub.get_dir()``) one line says so and the encoder
    starts from random weights.
    """
    from torchvision import models

    builders = {"resnet18": (models.resnet18, models.ResNet18_Weights.IMAGENET1K_V1),
                "resnet34": (models.resnet34, models.ResNet34_Weights.IMAGENET1K_V1)}
    if backbone not in builders:
        raise ValueError(f"backbone must be one of {sorted(builders)}, got {backbone!r}")
    build, weights = builders[backbone]
    if pretrained:
        try:
            return build(weights=weights), True
        except Exception as error:  # offline (URLError/OSError), or a file that fails its hash check
            reason = str(getattr(error, "reason", error)).splitlines()[0][:100]
            print(f"ImageNet weights for {backbone} not available ({type(error).__name__}: {reason}): "
                  "the encoder starts from random weights.")
    return build(weights=None), False


class ResNetUNet(nn.Module):
    """UNet whose encoder is a torchvision ResNet-18/34 (``pretrained=True``: ImageNet weights).

    Encoder features at 1/2, 1/4, 1/8, 1/16 and 1/32 of the input are joined by ``Up`` blocks,
    and a last ``Up`` joins the (normalised) input image itself for full-resolution detail.
    Inputs are images in [0, 1]; the model normalises them with ImageNet's statistics, as the
    pretrained weights expect. ``self.pretrained`` says whether ImageNet weights were loaded.
    """

    def __init__(self, num_classes: int = 11, backbone: str = "resnet34", pretrained: bool = False):
        super().__init__()
        if not isinstance(num_classes, int) or num_classes < 2:
            raise ValueError(f"num_classes must be an int of at least 2, got {num_classes!r}")
        resnet, self.pretrained = _resnet(backbone, pretrained)
        self.num_classes, self.backbone = num_classes, backbone
        self.in_channels, self.depth = 3, 5
        self.register_buffer("mean", torch.tensor(IMAGENET_MEAN).view(1, 3, 1, 1), persistent=False)
        self.register_buffer("std", torch.tensor(IMAGENET_STD).view(1, 3, 1, 1), persistent=False)
        self.stem = nn.Sequential(resnet.conv1, resnet.bn1, resnet.relu)  # 64 channels, 1/2
        self.encoder = nn.ModuleList([nn.Sequential(resnet.maxpool, resnet.layer1),  # 64, 1/4
                                      resnet.layer2, resnet.layer3, resnet.layer4])  # 128, 256, 512
        self.ups = nn.ModuleList([Up(512, 256, 256), Up(256, 128, 128), Up(128, 64, 64),
                                  Up(64, 64, 64), Up(64, 3, 32)])
        self.head = nn.Conv2d(32, num_classes, kernel_size=1)

    def encoder_parameters(self):
        """The ResNet's parameters (e.g. for a smaller learning rate than the new decoder's)."""
        return [p for module in (self.stem, self.encoder) for p in module.parameters()]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.ndim != 4 or x.shape[1] != 3:
            raise ValueError(f"ResNetUNet expects a batch N×3×H×W of RGB images, got shape {tuple(x.shape)}")
        height, width = x.shape[-2:]
        pad_h, pad_w = -height % 32, -width % 32  # five halvings
        if pad_h or pad_w:
            x = F.pad(x, (0, pad_w, 0, pad_h), mode="replicate")
        x = (x - self.mean) / self.std
        skips = [x, self.stem(x)]
        for block in self.encoder:
            skips.append(block(skips[-1]))
        x = skips.pop()
        for up in self.ups:
            x = up(x, skips.pop())
        logits = self.head(x)
        return logits[..., :height, :width] if (pad_h or pad_w) else logits

    def extra_repr(self) -> str:
        return f"backbone={self.backbone}, pretrained={self.pretrained}"
