"""course.models.cifar_cnn: the seed's network fixed, the speed-run network, the shape formula."""

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import course
from course.models.cifar_cnn import Residual, SeedNet, SpeedNet, conv_output_size


@pytest.mark.parametrize("size,kernel,stride,padding", [(32, 5, 1, 0), (28, 2, 2, 0), (32, 3, 1, 1),
                                                         (31, 3, 2, 1), (7, 7, 1, 0), (33, 2, 2, 0)])
def test_conv_output_size_matches_torch(size, kernel, stride, padding):
    out = nn.Conv2d(1, 1, kernel, stride, padding)(torch.zeros(1, 1, size, size))
    assert out.shape[-1] == conv_output_size(size, kernel, stride, padding)
    if padding <= kernel // 2:
        pooled = nn.MaxPool2d(kernel, stride, padding)(torch.zeros(1, 1, size, size))
        assert pooled.shape[-1] == conv_output_size(size, kernel, stride, padding)


def test_seednet_fixes_the_seeds_flatten_size():
    model = SeedNet()
    assert model.fc1.in_features == 64 * 14 * 14 != 64 * 13 * 13
    assert model(torch.zeros(4, 3, 32, 32)).shape == (4, 10)
    assert SeedNet(num_classes=3, image_size=40)(torch.zeros(2, 3, 40, 40)).shape == (2, 3)
    assert course.models.SeedNet is SeedNet  # found by the lazy package


def test_seednet_learns_a_small_batch():
    torch.manual_seed(0)
    data = course.datasets.cifar10(stand_in=True, verbose=False).subset(32)
    mean, std = data.mean_std()
    x, y = data.tensors(mean=mean, std=std)
    model = SeedNet()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    first = None
    for _ in range(25):
        loss = F.cross_entropy(model(x), y)
        first = first if first is not None else loss.item()
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert loss.item() < 0.1 * first  # it memorises 32 images


@pytest.mark.parametrize("width", [4, 16])
def test_speednet_shapes_and_memory_formats(width):
    model = SpeedNet(width)
    x = torch.randn(3, 3, 32, 32)
    out = model(x)
    assert out.shape == (3, 10)
    cl = model.to(memory_format=torch.channels_last)
    assert torch.allclose(cl(x.contiguous(memory_format=torch.channels_last)), out, atol=1e-4)
    assert sum(isinstance(m, Residual) for m in model.modules()) == 2
    assert model.layers[-1].in_features == 8 * width


def test_speednet_width_scales_and_is_checked():
    small, large = (sum(p.numel() for p in SpeedNet(w).parameters()) for w in (8, 16))
    assert 3.5 < large / small < 4.1  # parameters grow with width squared
    assert SpeedNet(64).layers[-1].in_features == 512  # the 94 % configuration (ResNet-9 widths)
    with pytest.raises(ValueError, match="positive int"):
        SpeedNet(0)


def test_state_dict_roundtrip_with_weights_only(tmp_path):
    model = SpeedNet(4).eval()
    path = tmp_path / "speednet.pt"
    with course.download.atomic_write(path) as tmp:
        torch.save(model.state_dict(), tmp)
    fresh = SpeedNet(4).eval()
    fresh.load_state_dict(torch.load(path, weights_only=True))
    x = torch.randn(2, 3, 32, 32)
    assert torch.equal(fresh(x), model(x))


def test_recorded_speed_run_reads_only_matching_gpu_runs(tmp_path):
    import json

    from course.models.cifar_cnn import recorded_speed_run

    path = tmp_path / "runs.json"
    assert recorded_speed_run(64, 30, 512, path=path) is None          # no file: no record
    base = {"date": "2026-12-01", "command": "COURSE_MODE=gpu make ...", "torch": "2.14.1",
            "width": 64, "epochs": 30, "batch": 512, "train_seconds": 120.0}
    runs = [{**base, "device": "cuda:0 NVIDIA H200", "tta_accuracy": 0.941},
            {**base, "device": "cuda:0 Tesla T4", "tta_accuracy": 0.943},
            {**base, "device": "cpu", "tta_accuracy": 0.99},              # a CPU run never counts
            {**base, "device": "cuda:0 NVIDIA H200", "epochs": 10, "tta_accuracy": 0.95}]  # another recipe
    path.write_text(json.dumps(runs))
    assert recorded_speed_run(64, 30, 512, path=path)["tta_accuracy"] == 0.943
    assert recorded_speed_run(64, 20, 512, path=path) is None
    path.write_text(json.dumps([{"device": "cuda"}]))
    with pytest.raises(ValueError, match="lacks"):
        recorded_speed_run(64, 30, 512, path=path)
    path.write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        recorded_speed_run(64, 30, 512, path=path)
