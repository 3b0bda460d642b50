"""DCGAN: a generator and a discriminator built by the DCGAN rules (introduced in notebook 07).

The rules of Radford, Metz & Chintala (2015), which made GAN training stable enough to use:

- no pooling and no fully connected *hidden* layers: the generator upsamples with strided
  ``ConvTranspose2d``, the discriminator downsamples with strided ``Conv2d``. (The generator's
  first layer, a 4×4 transposed convolution of the 1×1 noise "image", is a dense layer in
  disguise — the paper calls its projection "just a matrix multiplication".)
- BatchNorm in both networks (except the generator's output and the discriminator's input);
- ReLU in the generator with Tanh on its output (images in [-1, 1]), LeakyReLU(0.2) in the
  discriminator;
- every weight drawn from a normal distribution with mean 0 and standard deviation 0.02
  (``weights_init``; BatchNorm scales from mean 1, std 0.02, as in pytorch/examples — the paper
  does not say).

The paper draws the noise z uniformly from [-1, 1]; like pytorch/examples we use a standard
normal.

Both networks are sized by the image size (a power of two, 8 or more) and the number of
channels. The discriminator returns a *logit*, not a probability: use
``BCEWithLogitsLoss``, which is numerically stable and safe under mixed precision.

``load_pretrained_generator`` loads the tiny generator this repository ships in ``data/``
(trained on scikit-learn's digits by ``tools/train_dcgan.py``), after checking its sha256
against ``PRETRAINED_SHA256``, pinned here in the code: a hash read from the JSON beside the file
would only catch corruption, since whoever can replace the weights can replace the JSON too.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import torch
from torch import nn

__all__ = ["DCGANGenerator", "DCGANDiscriminator", "weights_init", "load_pretrained_generator",
           "PRETRAINED_GENERATOR", "PRETRAINED_SHA256"]

#: The shipped generator's weights; its config, sha256 and the command that made it sit beside it (.json).
PRETRAINED_GENERATOR = "dcgan_digits_generator.pt"
#: Its sha256, pinned in the code (not only in the JSON beside it, which an attacker could replace too).
#: ``tools/train_dcgan.py`` prints the new value when the weights are rebuilt; a test keeps the two in step.
PRETRAINED_SHA256 = "516764ca69c75076458c482feec2cbaa355335a61afc9db520ebd103c87e3f92"


def _upsamplings(image_size: int) -> int:
    """How many ×2 steps lead from 4×4 to ``image_size``; a clear error for a bad size."""
    if not isinstance(image_size, int) or image_size < 8 or image_size & (image_size - 1):
        raise ValueError(
            f"image_size must be a power of two of at least 8 (8, 16, 32, 64, ...), got {image_size!r}; "
            "resize your images, e.g. with torch.nn.functional.interpolate."
        )
    return int(math.log2(image_size)) - 2


class DCGANGenerator(nn.Module):
    """Noise ``z`` of shape N×nz×1×1 → images N×channels×image_size×image_size in [-1, 1] (notebook 07)."""

    def __init__(self, nz: int = 100, image_size: int = 32, channels: int = 1, ngf: int = 32):
        super().__init__()
        self.nz, self.image_size, self.channels, self.ngf = nz, image_size, channels, ngf
        steps = _upsamplings(image_size)
        width = ngf * 2 ** (steps - 1)  # channels halve while the image doubles
        layers = [  # 1×1 → 4×4: a transposed conv with kernel 4, stride 1, no padding
            nn.ConvTranspose2d(nz, width, 4, 1, 0, bias=False), nn.BatchNorm2d(width), nn.ReLU(True)]
        for _ in range(steps - 1):  # each (kernel 4, stride 2, padding 1) doubles the size
            layers += [nn.ConvTranspose2d(width, width // 2, 4, 2, 1, bias=False),
                       nn.BatchNorm2d(width // 2), nn.ReLU(True)]
            width //= 2
        layers += [nn.ConvTranspose2d(width, channels, 4, 2, 1, bias=False), nn.Tanh()]
        self.net = nn.Sequential(*layers)

    def config(self) -> dict:
        """The constructor's arguments, to save beside the weights."""
        return {"nz": self.nz, "image_size": self.image_size, "channels": self.channels, "ngf": self.ngf}

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        if z.ndim == 2:  # accept N×nz as well as the N×nz×1×1 of the DCGAN paper
            z = z[:, :, None, None]
        if z.ndim != 4 or z.shape[1:] != (self.nz, 1, 1):
            raise ValueError(f"expected noise of shape N×{self.nz}×1×1, got {tuple(z.shape)}; "
                             f"make it with torch.randn(batch, {self.nz}, 1, 1)")
        return self.net(z)


class DCGANDiscriminator(nn.Module):
    """Images N×channels×image_size×image_size → one logit each (N,): large means "real" (notebook 07)."""

    def __init__(self, image_size: int = 32, channels: int = 1, ndf: int = 32):
        super().__init__()
        self.image_size, self.channels, self.ndf = image_size, channels, ndf
        steps = _upsamplings(image_size)
        layers = [nn.Conv2d(channels, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, True)]  # no BN on the input
        width = ndf
        for _ in range(steps - 1):  # each (kernel 4, stride 2, padding 1) halves the size
            layers += [nn.Conv2d(width, width * 2, 4, 2, 1, bias=False),
                       nn.BatchNorm2d(width * 2), nn.LeakyReLU(0.2, True)]
            width *= 2
        layers += [nn.Conv2d(width, 1, 4, 1, 0, bias=False)]  # 4×4 → 1×1: the logit, no Sigmoid
        self.net = nn.Sequential(*layers)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        expected = (self.channels, self.image_size, self.image_size)
        if images.ndim != 4 or tuple(images.shape[1:]) != expected:
            raise ValueError(f"expected images of shape N×{'×'.join(map(str, expected))}, "
                             f"got {tuple(images.shape)}")
        return self.net(images).flatten()


def weights_init(module: nn.Module) -> None:
    """DCGAN initialisation: conv weights ~ N(0, 0.02²), BatchNorm scale ~ N(1, 0.02²), shift 0 (notebook 07).

    Use as ``model.apply(weights_init)``.
    """
    if isinstance(module, (nn.Conv2d, nn.ConvTranspose2d)):
        nn.init.normal_(module.weight, 0.0, 0.02)
    elif isinstance(module, nn.BatchNorm2d):
        nn.init.normal_(module.weight, 1.0, 0.02)
        nn.init.zeros_(module.bias)


def load_pretrained_generator(device="cpu", path=None, sha256=None) -> DCGANGenerator:
    """The shipped digits generator, checksum-verified and loaded with ``weights_only=True`` (notebook 07).

    Refuses the weights unless their sha256 matches the expected one: ``sha256`` when given, else
    ``PRETRAINED_SHA256`` (pinned in this file) for the shipped file, else — for another ``path``
    with no pinned hash — the one in ``<path>.json``, which only proves the file was not corrupted
    since the JSON was written, not who wrote them. Then builds ``DCGANGenerator(**config)`` from
    the JSON, loads the ``state_dict`` strictly and returns the model in eval mode on ``device``.
    Used again by notebook 09 (ONNX export)::

        G = course.models.load_pretrained_generator(device)
        images = G(torch.randn(64, G.nz, 1, 1, device=device))  # N×1×32×32 in [-1, 1]
    """
    from course import download, env

    shipped = env.REPO_ROOT / "data" / PRETRAINED_GENERATOR
    path = Path(path) if path is not None else shipped
    meta_path = path.with_suffix(".json")
    if not path.is_file() or not meta_path.is_file():
        raise FileNotFoundError(
            f"{path} or {meta_path.name} is missing. They ship with the course repository (data/); "
            "run `python tools/train_dcgan.py` from the checkout to make them again."
        )
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    if sha256 is None:
        sha256 = PRETRAINED_SHA256 if path.resolve() == shipped.resolve() else meta["sha256"]
    if not download.verify(path, sha256=sha256):
        raise download.ChecksumError(
            f"{path} does not match the expected sha256 {sha256[:12]}…: the file is corrupted or was "
            f"replaced, so it is not loaded. Restore it with `git checkout -- {path.name}` or rebuild "
            f"it with `{meta.get('command', 'python tools/train_dcgan.py')}`."
        )
    generator = DCGANGenerator(**meta["config"])
    state = torch.load(path, map_location="cpu", weights_only=True)  # tensors only: no code runs
    generator.load_state_dict(state)  # strict: every name and shape must match the config
    return generator.to(device).eval()
