"""Notebook 05's exercise checks: each rejects the untouched stub ("not attempted") and the most
common wrong answer (with a specific diagnosis), and accepts the reference."""

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from course import checks
from course.exercises import cifar10_cnn as ex


def stub(*args, **kwargs):
    raise NotImplementedError


# ---- Exercise 1
def conv_right(size, kernel, stride=1, padding=0):
    return (size + 2 * padding - kernel) // stride + 1


def conv_padding_once(size, kernel, stride=1, padding=0):
    return (size + padding - kernel) // stride + 1


# ---- Exercise 2
class SeedAsWritten(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.fc1 = nn.Linear(64 * 13 * 13, 100)
        self.fc2 = nn.Linear(100, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = x.view(-1, 64 * 13 * 13)
        return self.fc2(F.relu(self.fc1(x)))


class SeedLinearFixedOnly(SeedAsWritten):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64 * 14 * 14, 100)


class SeedFixed(SeedAsWritten):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64 * 14 * 14, 100)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        return self.fc2(F.relu(self.fc1(torch.flatten(x, 1))))


class SeedMixingRows(SeedFixed):
    def forward(self, x):  # flattens the wrong way round: rows mix images
        x = self.pool(F.relu(self.conv1(x)))
        x = x.permute(1, 0, 2, 3).reshape(-1, 64 * 14 * 14)
        return self.fc2(F.relu(self.fc1(x)))


# ---- Exercise 3
def predict_right(model, images, batch_size=1000):
    model.eval()
    with torch.no_grad():
        return torch.cat([model(images[i:i + batch_size]) for i in range(0, len(images), batch_size)])


def predict_no_eval(model, images, batch_size=1000):
    with torch.no_grad():
        return torch.cat([model(images[i:i + batch_size]) for i in range(0, len(images), batch_size)])


def predict_with_graph(model, images, batch_size=1000):
    model.eval()
    return torch.cat([model(images[i:i + batch_size]) for i in range(0, len(images), batch_size)])


# ---- Exercise 4
def normalise_right(images, mean, std):
    x = images.float() / 255
    m = torch.tensor(mean, device=x.device).view(1, 3, 1, 1)
    s = torch.tensor(std, device=x.device).view(1, 3, 1, 1)
    return (x - m) / s


def normalise_last_dim(images, mean, std):  # the tuple lines up with W, not C
    x = images.float() / 255
    return (x - torch.tensor(mean)) / torch.tensor(std)


def normalise_no_scale(images, mean, std):
    x = images.float()
    return (x - torch.tensor(mean).view(1, 3, 1, 1)) / torch.tensor(std).view(1, 3, 1, 1)


# ---- Exercise 5
def cutout_right(images, size):
    n, _, h, w = images.shape
    top = torch.randint(0, h - size + 1, (n, 1, 1), device=images.device)
    left = torch.randint(0, w - size + 1, (n, 1, 1), device=images.device)
    rows = torch.arange(h, device=images.device).view(1, h, 1)
    cols = torch.arange(w, device=images.device).view(1, 1, w)
    inside = (rows >= top) & (rows < top + size) & (cols >= left) & (cols < left + size)
    return images.masked_fill(inside.unsqueeze(1), 0.0)


def cutout_past_the_border(images, size):  # corners anywhere: squares get clipped at the edge
    n, _, h, w = images.shape
    top = torch.randint(0, h, (n, 1, 1))
    left = torch.randint(0, w, (n, 1, 1))
    rows = torch.arange(h).view(1, h, 1)
    cols = torch.arange(w).view(1, 1, w)
    inside = (rows >= top) & (rows < top + size) & (cols >= left) & (cols < left + size)
    return images.masked_fill(inside.unsqueeze(1), 0.0)


def cutout_same_square(images, size):
    out = images.clone()
    out[:, :, 3:3 + size, 5:5 + size] = 0
    return out


# ---- Exercise 6
def accumulate_right(model, optimizer, images, labels, micro_batches):
    optimizer.zero_grad(set_to_none=True)
    for x, y in zip(images.chunk(micro_batches), labels.chunk(micro_batches)):
        (F.cross_entropy(model(x), y) / micro_batches).backward()
    optimizer.step()


def accumulate_unscaled(model, optimizer, images, labels, micro_batches):
    optimizer.zero_grad(set_to_none=True)
    for x, y in zip(images.chunk(micro_batches), labels.chunk(micro_batches)):
        F.cross_entropy(model(x), y).backward()
    optimizer.step()


def accumulate_zero_inside(model, optimizer, images, labels, micro_batches):
    for x, y in zip(images.chunk(micro_batches), labels.chunk(micro_batches)):
        optimizer.zero_grad()
        (F.cross_entropy(model(x), y) / micro_batches).backward()
    optimizer.step()


CASES = {
    "conv_output_size": (ex.check_conv_output_size, stub, conv_right, conv_padding_once, "expected 32, got 31"),
    "seed": (ex.check_fixed_seed_net, SeedAsWritten, SeedFixed, SeedLinearFixedOnly, "shape '[-1, 10816]' is invalid"),
    "predict": (ex.check_predict, stub, predict_right, predict_no_eval, "values differ"),
    "normalise": (ex.check_normalise, stub, normalise_right, normalise_last_dim, "values differ"),
    "cutout": (ex.check_cutout, stub, cutout_right, cutout_past_the_border, "fell outside the image"),
    "accumulation": (ex.check_accumulation_step, stub, accumulate_right, accumulate_unscaled, "3× the full-batch update"),
}


@pytest.fixture(autouse=True)
def on_the_cpu(monkeypatch):
    monkeypatch.setenv("COURSE_DEVICE", "cpu")


@pytest.mark.parametrize("name", list(CASES))
def test_stub_is_not_attempted(name, capsys):
    check, untouched, _, _, _ = CASES[name]
    assert check(untouched) is False
    assert checks.NOT_ATTEMPTED in capsys.readouterr().out


@pytest.mark.parametrize("name", list(CASES))
def test_reference_passes(name, capsys):
    check, _, right, _, _ = CASES[name]
    assert check(right) is True, capsys.readouterr().out
    assert "❌" not in capsys.readouterr().out


@pytest.mark.parametrize("name", list(CASES))
def test_most_common_wrong_answer_is_diagnosed(name, capsys):
    check, _, _, wrong, diagnosis = CASES[name]
    assert check(wrong) is False
    out = capsys.readouterr().out
    assert "❌" in out and diagnosis in out, out
    assert "💡" not in out


def test_seed_net_that_mixes_images_is_caught(capsys):
    assert ex.check_fixed_seed_net(SeedMixingRows) is False
    assert "changing image 0 changed the output of image" in capsys.readouterr().out


def test_predict_that_keeps_the_graph_is_caught(capsys):
    assert ex.check_predict(predict_with_graph) is False
    assert "autograd graph" in capsys.readouterr().out


def test_normalise_without_scaling_is_caught(capsys):
    assert ex.check_normalise(normalise_no_scale) is False
    assert "values differ" in capsys.readouterr().out


def test_cutout_at_one_place_is_caught(capsys):
    assert ex.check_cutout(cutout_same_square) is False
    assert "different square positions" in capsys.readouterr().out


def test_accumulation_with_zero_grad_inside_the_loop_is_caught(capsys):
    assert ex.check_accumulation_step(accumulate_zero_inside) is False
    out = capsys.readouterr().out
    assert "❌" in out and "micro-batches" in out, out


def test_hints_are_progressive_and_never_code(capsys):
    for name in CASES:
        check, _, _, wrong, _ = CASES[name]
        check(wrong)
        texts = [checks.hint(), checks.hint()]
        assert "hint 1 of 2" in texts[0] and "hint 2 of 2" in texts[1], texts
        for text in texts:
            assert " = " not in text and "torch." not in text and "()" not in text, text
