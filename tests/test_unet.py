"""course.models.UNet: shapes, skip connections, checkpointing, and that it learns."""

import pytest
import torch
import torch.nn.functional as F

from course.models import UNet


@pytest.mark.parametrize("size", [(32, 48), (37, 50), (8, 8)])
def test_output_has_a_score_per_class_and_pixel(size):
    model = UNet(num_classes=5, width=4, depth=3).eval()
    with torch.no_grad():
        assert model(torch.rand(2, 3, *size)).shape == (2, 5, *size)


def test_width_and_depth_shape_the_network():
    small, wide, deep = UNet(width=4, depth=2), UNet(width=8, depth=2), UNet(width=4, depth=3)
    count = lambda m: sum(p.numel() for p in m.parameters())
    assert count(wide) > 3 * count(small) and count(deep) > 3 * count(small)
    assert len(deep.downs) == len(deep.ups) == 3
    assert deep.downs[-1][1][0].out_channels == 4 * 2**3
    assert UNet(in_channels=1, width=4, depth=2)(torch.rand(1, 1, 16, 16)).shape == (1, 11, 16, 16)


def test_clear_errors():
    with pytest.raises(ValueError, match="N×3×H×W"):
        UNet(width=4, depth=2)(torch.rand(3, 16, 16))
    with pytest.raises(ValueError, match="depth"):
        UNet(depth=0)
    with pytest.raises(ValueError, match="width"):
        UNet(width=2.5)


def test_skip_connections_carry_full_resolution_detail():
    # (seeded, and 8 channels wide: with 4 and a random start, about 1 in 11 networks had every ReLU
    # around (5, 5) dead, so no input had any gradient there and the test failed by chance)
    torch.manual_seed(0)
    model = UNet(width=8, depth=2)
    up = model.ups[-1]
    assert up.conv[0].in_channels == 8 // 1 + 16 // 2  # skip (8) + upsampled (16 // 2)
    x = torch.rand(1, 3, 16, 16, requires_grad=True)
    model(x)[0, :, 5, 5].sum().backward()
    # the output at (5, 5) depends on the input near (5, 5) more than far away
    near, far = x.grad[0, :, 4:7, 4:7].abs().sum(), x.grad[0, :, 12:, 12:].abs().sum()
    assert near > far


def test_checkpointing_gives_the_same_result_and_gradients():
    torch.manual_seed(0)
    plain = UNet(width=4, depth=2)
    checkpointed = UNet(width=4, depth=2, checkpointing=True)
    checkpointed.load_state_dict(plain.state_dict())
    x = torch.rand(2, 3, 16, 16)
    out_plain, out_ckpt = plain(x), checkpointed(x)
    assert torch.allclose(out_plain, out_ckpt, atol=1e-6)
    out_plain.square().mean().backward()
    out_ckpt.square().mean().backward()
    for a, b in zip(plain.parameters(), checkpointed.parameters()):
        assert torch.allclose(a.grad, b.grad, atol=1e-5)
    assert "checkpointing=True" in repr(checkpointed)


def test_learns_a_simple_segmentation():
    torch.manual_seed(0)
    x = torch.rand(8, 3, 16, 16)
    y = (x[:, 0] > 0.5).long()  # class 1 where the red channel is bright
    model = UNet(num_classes=2, width=4, depth=2)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.02)
    for _ in range(40):
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        accuracy = (model(x).argmax(1) == y).float().mean()
    assert accuracy > 0.9


# --- ResNetUNet: a torchvision ResNet encoder, optionally ImageNet-pretrained --------------------

def test_resnet_unet_shapes_and_normalisation():
    from course.models import ResNetUNet

    model = ResNetUNet(num_classes=7, backbone="resnet18").eval()
    assert model.pretrained is False and "resnet18" in repr(model)
    with torch.no_grad():
        assert model(torch.rand(1, 3, 45, 61)).shape == (1, 7, 45, 61)  # padded to 64×64 and cropped back
        assert model(torch.rand(2, 3, 64, 96)).shape == (2, 7, 64, 96)
    encoder = {id(p) for p in model.encoder_parameters()}
    assert 0 < len(encoder) < len(list(model.parameters()))
    assert "mean" not in model.state_dict(), "the ImageNet statistics are constants, not weights"
    with pytest.raises(ValueError, match="N×3×H×W"):
        model(torch.rand(1, 1, 32, 32))
    with pytest.raises(ValueError, match="backbone"):
        ResNetUNet(backbone="vgg16")


def test_offline_pretrained_says_so_in_one_line_and_starts_random(monkeypatch, capsys):
    import urllib.error

    from torchvision import models

    from course.models import ResNetUNet

    def offline(*args, **kwargs):
        raise urllib.error.URLError("[Errno -3] Temporary failure in name resolution")

    monkeypatch.setattr(models.ResNet18_Weights.IMAGENET1K_V1.__class__, "get_state_dict", offline)
    model = ResNetUNet(num_classes=3, backbone="resnet18", pretrained=True)
    out = capsys.readouterr().out.strip().splitlines()
    assert model.pretrained is False
    assert len(out) == 1 and "random weights" in out[0] and "resnet18" in out[0]


def test_pretrained_weights_come_from_torchvision_with_its_hash_check(monkeypatch):
    from torchvision import models

    from course.models import ResNetUNet

    reference = models.resnet18(weights=None).state_dict()
    calls = []

    def cached(self, *args, **kwargs):
        calls.append(kwargs)
        return reference

    monkeypatch.setattr(models.ResNet18_Weights.IMAGENET1K_V1.__class__, "get_state_dict", cached)
    model = ResNetUNet(num_classes=3, backbone="resnet18", pretrained=True)
    assert model.pretrained is True and calls and calls[0].get("check_hash") is True
    assert torch.equal(model.encoder[-1][0].conv1.weight, reference["layer4.0.conv1.weight"])
