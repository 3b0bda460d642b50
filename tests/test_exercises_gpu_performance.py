"""Notebook 10's exercise checks: each rejects the untouched stub ("not attempted") and the most common
wrong answer (with a specific diagnosis), and passes the reference."""

import os

if not __import__("torch").cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")  # before anything imports Triton (torch._dynamo does)

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from course import checks
from course import kernels_triton  # noqa: F401  (switches on the interpreter before Triton is imported)
from course.exercises import gpu_performance as ex

triton, tl = kernels_triton.triton, kernels_triton.tl


@pytest.fixture(autouse=True)
def cpu_backend(monkeypatch):
    monkeypatch.setenv("COURSE_CUDA_BACKEND", "cpu")


def stub(*args, **kwargs):
    raise NotImplementedError


def test_matmul_intensity(capsys):
    assert not ex.check_matmul_intensity(stub)
    assert "not attempted" in capsys.readouterr().out
    assert not ex.check_matmul_intensity(lambda n, b: 2 * n**3 / (2 * n**2 * b))  # forgot the output matrix
    assert "expected" in capsys.readouterr().out
    assert ex.check_matmul_intensity(lambda n, b: 2 * n**3 / (3 * n**2 * b))


def test_vector_add_bandwidth(capsys):
    assert not ex.check_vector_add_bandwidth(stub)
    assert not ex.check_vector_add_bandwidth(lambda n, s: 3 * 4 * n / s / 2**30)  # GiB instead of GB
    assert "expected" in capsys.readouterr().out
    assert ex.check_vector_add_bandwidth(lambda n, s: 12 * n / s / 1e9, measured=(1000, 1e-6))


@triton.jit
def bias_relu_stub(x_ptr, bias_ptr, out_ptr, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(axis=0)  # TODO


@triton.jit
def bias_relu_relu_first(x_ptr, bias_ptr, out_ptr, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(axis=0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask)
    b = tl.load(bias_ptr + cols, mask=mask)
    tl.store(out_ptr + row * n_cols + cols, tl.maximum(x, 0.0) + b, mask=mask)


@triton.jit
def bias_relu_right(x_ptr, bias_ptr, out_ptr, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(axis=0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask)
    b = tl.load(bias_ptr + cols, mask=mask)
    tl.store(out_ptr + row * n_cols + cols, tl.maximum(x + b, 0.0), mask=mask)


@triton.jit
def bias_relu_unmasked_store(x_ptr, bias_ptr, out_ptr, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(axis=0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    b = tl.load(bias_ptr + cols, mask=mask, other=0.0)
    tl.store(out_ptr + row * n_cols + cols, tl.maximum(x + b, 0.0))


@triton.jit
def bias_relu_no_masks(x_ptr, bias_ptr, out_ptr, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(axis=0)
    cols = tl.arange(0, BLOCK_SIZE)
    x = tl.load(x_ptr + row * n_cols + cols)
    b = tl.load(bias_ptr + cols)
    tl.store(out_ptr + row * n_cols + cols, tl.maximum(x + b, 0.0))


def test_a_triton_store_without_its_mask_is_caught_in_a_guard_zone(capsys):
    """Triton checks no bounds: an unmasked store ran past `out` into other memory (probe 14: the process
    died, or passed and corrupted the heap). The check's tensors lie between guard zones, which say so."""
    for kernel in (bias_relu_unmasked_store, bias_relu_no_masks):
        assert not ex.check_bias_relu(kernel)
        out = capsys.readouterr().out
        assert "the kernel stored outside `out`" in out and "element(s) after its last" in out, out


def test_bias_relu(capsys):
    assert not ex.check_bias_relu(bias_relu_stub)
    assert "not attempted" in capsys.readouterr().out
    assert not ex.check_bias_relu(bias_relu_relu_first)
    assert "values differ" in capsys.readouterr().out
    assert ex.check_bias_relu(bias_relu_right)


def test_custom_op(capsys):
    assert not ex.check_custom_op(None)
    assert "not attempted" in capsys.readouterr().out

    def numpy_tanh(x):
        return torch.from_numpy(np.tanh(x.numpy()))

    assert not ex.check_custom_op(numpy_tanh)  # a plain function: not an op
    assert "custom op" in capsys.readouterr().out

    @torch.library.custom_op("test_ex::tanh_no_fake", mutates_args=())
    def no_fake(x: torch.Tensor) -> torch.Tensor:
        return torch.from_numpy(np.tanh(x.numpy()))

    assert not ex.check_custom_op(no_fake)  # the usual mistake: no fake implementation
    assert "fake implementation" in capsys.readouterr().out

    @torch.library.custom_op("test_ex::tanh", mutates_args=())
    def right(x: torch.Tensor) -> torch.Tensor:
        return torch.from_numpy(np.tanh(x.numpy()))

    right.register_fake(lambda x: torch.empty_like(x))
    assert ex.check_custom_op(right)


def train_fixed(model, optimizer, batches, targets, device):
    batches, targets = batches.to(device), targets.to(device)
    losses = []
    for x, y in zip(batches, targets):
        optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    return torch.stack(losses)


def train_copies_once_but_syncs(model, optimizer, batches, targets, device):
    batches, targets = batches.to(device), targets.to(device)
    losses = []
    for x, y in zip(batches, targets):
        optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def test_training_loop(capsys):
    assert not ex.check_training_loop(stub, "cpu")
    assert "not attempted" in capsys.readouterr().out
    assert not ex.check_training_loop(train_copies_once_but_syncs, "cpu")
    assert "aten::item" in capsys.readouterr().out
    assert not ex.check_training_loop(ex.train_slow, "cpu")
    assert ex.check_training_loop(train_fixed, "cpu")


def accumulate_right(model, inputs, targets, micro_batch):
    model.zero_grad(set_to_none=True)
    for start in range(0, len(inputs), micro_batch):
        x, y = inputs[start:start + micro_batch], targets[start:start + micro_batch]
        (F.cross_entropy(model(x), y) * len(x) / len(inputs)).backward()


def accumulate_unscaled(model, inputs, targets, micro_batch):
    model.zero_grad(set_to_none=True)
    for start in range(0, len(inputs), micro_batch):
        F.cross_entropy(model(inputs[start:start + micro_batch]), targets[start:start + micro_batch]).backward()


def accumulate_divided_by_steps(model, inputs, targets, micro_batch):
    steps = -(-len(inputs) // micro_batch)
    model.zero_grad(set_to_none=True)
    for start in range(0, len(inputs), micro_batch):
        x, y = inputs[start:start + micro_batch], targets[start:start + micro_batch]
        (F.cross_entropy(model(x), y) / steps).backward()


def test_accumulate_gradients(capsys):
    assert not ex.check_accumulate_gradients(stub)
    assert "not attempted" in capsys.readouterr().out
    assert not ex.check_accumulate_gradients(accumulate_unscaled)  # the usual mistake: no scaling
    assert "× as large" in capsys.readouterr().out
    assert not ex.check_accumulate_gradients(accumulate_divided_by_steps)  # wrong when the last slice is short
    assert "micro-batches of 4" in capsys.readouterr().out
    assert ex.check_accumulate_gradients(accumulate_right)


def test_pick_faster(capsys):
    from course.timing import benchmark

    assert not ex.check_pick_faster(stub)
    assert "not attempted" in capsys.readouterr().out

    def one_call_each(candidates):
        seconds = {}
        for name, fn in candidates.items():
            started = __import__("time").perf_counter()
            fn()
            seconds[name] = __import__("time").perf_counter() - started
        return min(seconds, key=seconds.get)

    assert not ex.check_pick_faster(one_call_each)
    assert "first call was timed" in capsys.readouterr().out
    assert ex.check_pick_faster(
        lambda c: min(c, key=lambda n: benchmark(c[n], device="cpu", warmup=2, repeat=5).median))


BACKWARD_RIGHT = r"""
extern "C" __global__ void leaky_relu_backward(const scalar_t* x, const scalar_t* grad_y,
                                               scalar_t* grad_x, scalar_t slope, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) grad_x[i] = grad_y[i] * (x[i] > 0 ? 1 : slope);
}
"""


def test_leaky_relu_backward(capsys):
    stub_source = BACKWARD_RIGHT.replace("if (i < n) grad_x[i] = grad_y[i] * (x[i] > 0 ? 1 : slope);", "// TODO")
    assert not ex.check_leaky_relu_backward(stub_source, "cpu")
    assert "not attempted" in capsys.readouterr().out
    forgot_grad_y = BACKWARD_RIGHT.replace("grad_y[i] * ", "")  # the usual mistake: the local derivative only
    assert not ex.check_leaky_relu_backward(forgot_grad_y, "cpu")
    assert "values differ" in capsys.readouterr().out
    assert ex.check_leaky_relu_backward(BACKWARD_RIGHT, "cpu")
    # the learner's own name for the output (it was "not attempted" unless the output was called grad_x)
    renamed = BACKWARD_RIGHT.replace("grad_x", "dx")
    assert ex.check_leaky_relu_backward(renamed, "cpu"), capsys.readouterr().out
    assert not ex.check_leaky_relu_backward(renamed.replace("grad_y[i] * ", ""), "cpu")
    assert "values differ" in capsys.readouterr().out


def test_hints_are_registered_and_never_printed_by_a_check(capsys):
    ex.check_accumulate_gradients(accumulate_unscaled)
    out = capsys.readouterr().out
    assert "💡" not in out and "hint()" in out
    assert "💡" in checks.hint("accumulate_gradients")


def test_leaky_relu_backward_submissions_that_are_not_a_right_kernel(capsys):
    """r16/r21: a syntax error names the learner's kernel once, at their own line; `float` for scalar_t is told to
    use scalar_t; a function is no crash; a store through a helper is an attempt (it was "not attempted")."""
    assert not ex.check_leaky_relu_backward(BACKWARD_RIGHT.replace("slope);", "slope)"), "cpu")
    out = capsys.readouterr().out
    assert out.count("does not compile") == 1 and "leaky_relu_forward" not in out and "kernel.cu:5:" in out, out  # (line 5 of BACKWARD_RIGHT)
    assert not ex.check_leaky_relu_backward(BACKWARD_RIGHT.replace("scalar_t", "float"), "cpu")
    assert "scalar_t" in capsys.readouterr().out
    assert not ex.check_leaky_relu_backward(print, "cpu")
    assert "CUDA C source as a string" in capsys.readouterr().out
    helper = "__device__ void put(scalar_t* d, int i, scalar_t v) { d[i] = v; }\n" + BACKWARD_RIGHT.replace(
        "grad_x[i] = grad_y[i] * (x[i] > 0 ? 1 : slope)", "put(grad_x, i, grad_y[i] * (x[i] > 0 ? 1 : slope))")
    assert ex.check_leaky_relu_backward(helper, "cpu"), capsys.readouterr().out


def test_intensity_and_bandwidth_computed_in_float32_pass(capsys):
    assert ex.check_matmul_intensity(lambda n, b: np.float32(2 * n) / np.float32(3 * b)), capsys.readouterr().out
    assert ex.check_vector_add_bandwidth(lambda n, s: np.float32(12 * n) / np.float32(s) / np.float32(1e9),
                                         measured=(1000, None)), capsys.readouterr().out
