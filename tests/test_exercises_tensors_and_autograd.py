"""Notebook 04's exercise checks: the untouched stub is "not attempted", the most common wrong answer
of each exercise is ❌ with a specific diagnosis, and the reference passes."""

import pytest
import torch
from torch import nn

from course import checks
from course.exercises import tensors_and_autograd as ex


def stub(*args, **kwargs):
    raise NotImplementedError


# ---- Exercise 1
def strides_right(shape):
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= size
    return tuple(reversed(strides))


def strides_from_the_left(shape):  # multiplies the sizes to the left: column-major
    strides, step = [], 1
    for size in shape:
        strides.append(step)
        step *= size
    return tuple(strides)


# ---- Exercise 2
def broadcast_right(a, b):
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if x != y and 1 not in (x, y):
            raise ValueError(f"{x} vs {y}")
        out.append(y if x == 1 else x)
    return tuple(out)


def broadcast_from_the_left(a, b):  # pads on the right: lines shapes up at their left ends
    n = max(len(a), len(b))
    a, b = tuple(a) + (1,) * (n - len(a)), tuple(b) + (1,) * (n - len(b))
    return tuple(max(x, y) for x, y in zip(a, b))


def broadcast_never_raises(a, b):
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    return tuple(y if x == 1 else x for x, y in zip(a, b))  # keeps a size without checking the other


# ---- Exercise 3
def centre_buggy(x):  # the notebook's stub: a view, changed in place
    out = x.view(x.shape)
    out -= out.mean(0)
    return out


def centre_contiguous(x):  # the usual wrong fix: contiguous() returns x itself when x is contiguous
    out = x.contiguous()
    out -= out.mean(0)
    return out


def centre_right(x):
    return x - x.mean(0)


# ---- Exercise 4
class StandardiseRight(nn.Module):
    def __init__(self, mean, std):
        super().__init__()
        self.register_buffer("mean", mean)
        self.register_buffer("std", std)

    def forward(self, x):
        return (x - self.mean) / self.std


class StandardiseAttributes(nn.Module):  # plain attributes: not saved, not moved
    def __init__(self, mean, std):
        super().__init__()
        self.mean, self.std = mean, std

    def forward(self, x):
        return (x - self.mean) / self.std


class StandardiseParameters(nn.Module):  # moved and saved, but an optimizer would train them
    def __init__(self, mean, std):
        super().__init__()
        self.mean, self.std = nn.Parameter(mean), nn.Parameter(std)

    def forward(self, x):
        return (x - self.mean) / self.std


class StandardiseStub(nn.Module):
    def __init__(self, mean, std):
        super().__init__()
        raise NotImplementedError


# ---- Exercise 5
def softplus_class(backward):
    class Softplus(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return torch.nn.functional.softplus(x)

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            return backward(x, grad_output)

    return Softplus


SOFTPLUS_STUB = softplus_class(lambda x, g: stub())
SOFTPLUS_RIGHT = softplus_class(lambda x, g: g * torch.sigmoid(x))
SOFTPLUS_FORGETS_GRAD_OUTPUT = softplus_class(lambda x, g: torch.sigmoid(x))


# ---- Exercise 6
def fit_right(x, y, steps=500, lr=0.1):
    w = torch.zeros(x.shape[1], requires_grad=True)
    b = torch.zeros((), requires_grad=True)
    for _ in range(steps):
        loss = ((x @ w + b - y) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            w -= lr * w.grad
            b -= lr * b.grad
        w.grad, b.grad = None, None
    return w.detach(), b.detach()


def fit_without_reset(x, y, steps=500, lr=0.1):  # gradients of every step add up
    w = torch.zeros(x.shape[1], requires_grad=True)
    b = torch.zeros((), requires_grad=True)
    for _ in range(steps):
        ((x @ w + b - y) ** 2).mean().backward()
        with torch.no_grad():
            w -= lr * w.grad
            b -= lr * b.grad
    return w.detach(), b.detach()


CASES = {
    "strides": (ex.check_contiguous_strides, stub, strides_right, strides_from_the_left, "expected"),
    "broadcast": (ex.check_broadcast_shape, stub, broadcast_right, broadcast_from_the_left, "with input ((3, 1), (3,))"),
    "centre": (ex.check_centre_columns, stub, centre_right, centre_buggy, "changed its input"),
    "standardise": (ex.check_standardise_module, StandardiseStub, StandardiseRight, StandardiseAttributes,
                    "state_dict() lacks mean, std"),
    "softplus": (ex.check_softplus, SOFTPLUS_STUB, SOFTPLUS_RIGHT, SOFTPLUS_FORGETS_GRAD_OUTPUT, "values differ"),
    "fit_linear": (ex.check_fit_linear, stub, fit_right, fit_without_reset, "differ"),
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


@pytest.mark.parametrize("name", list(CASES))
def test_most_common_wrong_answer_is_diagnosed(name, capsys):
    check, _, _, wrong, diagnosis = CASES[name]
    assert check(wrong) is False
    out = capsys.readouterr().out
    assert "❌" in out and diagnosis in out, out
    assert "💡" not in out


def test_broadcast_that_never_raises_is_caught(capsys):
    assert ex.check_broadcast_shape(broadcast_never_raises) is False
    assert "instead of raising ValueError" in capsys.readouterr().out


def test_centre_with_contiguous_is_caught_on_a_contiguous_input(capsys):
    assert ex.check_centre_columns(centre_contiguous) is False
    out = capsys.readouterr().out
    assert "a contiguous 5×4 matrix it changed its input" in out, out


def test_standardise_with_parameters_is_caught(capsys):
    assert ex.check_standardise_module(StandardiseParameters) is False
    assert "is a Parameter" in capsys.readouterr().out


ANSWERS = {"strides": "step *=", "broadcast": "(1,) *", "centre": "x - x.mean", "standardise": "register_buffer",
           "softplus": "sigmoid", "fit_linear": "w -="}


def test_hints_are_progressive_and_never_the_answer(capsys):
    for name in CASES:
        check, _, _, wrong, _ = CASES[name]
        check(wrong)
        texts = [checks.hint(), checks.hint()]
        assert "hint 1 of 2" in texts[0] and "hint 2 of 2" in texts[1], texts
        for text in texts:
            assert " = " not in text and ANSWERS[name] not in text, text
