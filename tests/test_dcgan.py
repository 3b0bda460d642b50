"""course.models.dcgan, the shipped pretrained generator and tools/train_dcgan.py (notebook 07)."""

import json
import shutil
import sys
from pathlib import Path

import pytest
import torch
from torch import nn

import course
from course.download import ChecksumError, file_hash
from course.models import DCGANDiscriminator, DCGANGenerator, load_pretrained_generator, weights_init
from course.models.dcgan import PRETRAINED_SHA256

ROOT = Path(__file__).resolve().parent.parent
WEIGHTS = ROOT / "data" / "dcgan_digits_generator.pt"


@pytest.mark.parametrize("size,channels", [(8, 1), (16, 1), (32, 1), (32, 3), (64, 3)])
def test_generator_and_discriminator_shapes(size, channels):
    G = DCGANGenerator(nz=10, image_size=size, channels=channels, ngf=8)
    D = DCGANDiscriminator(image_size=size, channels=channels, ndf=8)
    images = G(torch.randn(5, 10, 1, 1))
    assert images.shape == (5, channels, size, size)
    assert images.abs().max() <= 1  # Tanh
    assert G(torch.randn(5, 10)).shape == images.shape  # N×nz is accepted too
    assert D(images).shape == (5,)
    # one ConvTranspose2d per doubling from 4×4, plus the 1×1 → 4×4 one
    n_up = sum(isinstance(m, nn.ConvTranspose2d) for m in G.modules())
    assert 2 ** (n_up + 1) == size


def test_bad_sizes_and_shapes_say_what_to_do():
    with pytest.raises(ValueError, match="power of two"):
        DCGANGenerator(image_size=28)
    with pytest.raises(ValueError, match="power of two"):
        DCGANDiscriminator(image_size=4)
    G = DCGANGenerator(nz=10, image_size=16, ngf=4)
    with pytest.raises(ValueError, match=r"torch.randn\(batch, 10, 1, 1\)"):
        G(torch.randn(3, 7, 1, 1))
    with pytest.raises(ValueError, match="N×1×16×16"):
        DCGANDiscriminator(image_size=16, ndf=4)(torch.randn(2, 1, 32, 32))


def test_weights_init_follows_dcgan():
    torch.manual_seed(0)
    G = DCGANGenerator(image_size=32, ngf=16).apply(weights_init)
    convs = torch.cat([m.weight.flatten() for m in G.modules() if isinstance(m, nn.ConvTranspose2d)])
    assert abs(convs.std().item() - 0.02) < 0.001 and abs(convs.mean().item()) < 0.001
    bns = [m for m in G.modules() if isinstance(m, nn.BatchNorm2d)]
    assert all(abs(m.weight.mean().item() - 1) < 0.01 and m.bias.abs().max() == 0 for m in bns)


def test_shipped_generator_is_small_checksummed_and_tensors_only():
    meta = json.loads(WEIGHTS.with_suffix(".json").read_text())
    assert WEIGHTS.stat().st_size <= 2 * 2**20
    assert file_hash(WEIGHTS, "sha256") == meta["sha256"] == PRETRAINED_SHA256  # the pinned hash is in step
    assert "tools/train_dcgan.py" in meta["command"]
    state = torch.load(WEIGHTS, map_location="cpu", weights_only=True)
    assert all(isinstance(v, torch.Tensor) for v in state.values())
    assert set(state) == set(DCGANGenerator(**meta["config"]).state_dict())


def test_load_pretrained_generator_makes_varied_images():
    G = load_pretrained_generator("cpu")
    assert not G.training and G.image_size == 32 and G.nz == 100
    with torch.no_grad():
        z = torch.randn(16, G.nz, 1, 1, generator=torch.Generator().manual_seed(0))
        images = G(z)
        assert torch.equal(images, G(z))  # eval mode: deterministic
    assert images.shape == (16, 1, 32, 32)
    assert images.min() < -0.9 and images.max() > 0.9  # dark paper and bright ink, not grey mush
    assert (images - images.mean(0)).abs().mean() > 0.1  # different codes give different digits


def test_a_changed_or_missing_file_is_refused(tmp_path):
    copy = tmp_path / WEIGHTS.name
    shutil.copy(WEIGHTS.with_suffix(".json"), copy.with_suffix(".json"))
    data = bytearray(WEIGHTS.read_bytes())
    data[-200] ^= 1
    copy.write_bytes(bytes(data))
    with pytest.raises(ChecksumError, match="does not match the expected sha256"):
        load_pretrained_generator(path=copy)
    with pytest.raises(FileNotFoundError, match="train_dcgan.py"):
        load_pretrained_generator(path=tmp_path / "nothing.pt")


def test_a_replaced_pair_passes_its_own_json_but_not_the_pinned_hash(tmp_path):
    """A hash stored beside the file proves integrity only: whoever swaps the weights swaps the JSON too."""
    fake = tmp_path / WEIGHTS.name
    G = DCGANGenerator(**json.loads(WEIGHTS.with_suffix(".json").read_text())["config"])  # untrained weights
    torch.save(G.state_dict(), fake)
    meta = json.loads(WEIGHTS.with_suffix(".json").read_text())
    meta["sha256"] = file_hash(fake, "sha256")
    fake.with_suffix(".json").write_text(json.dumps(meta))
    assert isinstance(load_pretrained_generator(path=fake), DCGANGenerator)  # its own JSON vouches for it
    with pytest.raises(ChecksumError, match="expected sha256 516764ca69c7"):
        load_pretrained_generator(path=fake, sha256=PRETRAINED_SHA256)


def test_training_tool_writes_reproducible_loadable_weights(tmp_path):
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import train_dcgan
    finally:
        sys.path.remove(str(ROOT / "tools"))
    flags = ["--epochs", "1", "--image-size", "8", "--ngf", "4", "--ndf", "4", "--nz", "8", "--batch-size", "512"]
    metas, threads = [], torch.get_num_threads()
    for name in ("a.pt", "b.pt"):
        args = train_dcgan.parse_args([*flags, "--out", str(tmp_path / name)])
        G, history = train_dcgan.train(args)
        metas.append(train_dcgan.save(G, history, args, seconds=0.0))
    assert torch.get_num_threads() == threads  # the tool's one thread does not leak into the caller
    assert metas[0]["sha256"] == metas[1]["sha256"]  # same seed, one thread: the same bytes
    assert "--epochs 1" in metas[0]["command"] and "--image-size 8" in metas[0]["command"]
    G = load_pretrained_generator(path=tmp_path / "a.pt")
    assert G(torch.randn(2, 8, 1, 1)).shape == (2, 1, 8, 8)
