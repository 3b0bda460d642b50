"""course.kernels_torch: CUDA C kernels as autograd Functions, zero-copy through DLPack."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from course import kernels_torch

LEAKY = r"""
extern "C" __global__ void leaky_forward(const scalar_t* x, scalar_t* y, scalar_t slope, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0 ? x[i] : slope * x[i];
}
extern "C" __global__ void leaky_backward(const scalar_t* x, const scalar_t* grad_y, scalar_t* grad_x,
                                          scalar_t slope, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) grad_x[i] = grad_y[i] * (x[i] > 0 ? 1 : slope);
}
"""


@pytest.mark.parametrize("n", [1, 255, 256, 1000])
def test_silu_forward_and_backward_match_pytorch(n):
    x = torch.randn(n, requires_grad=True)
    ours = kernels_torch.silu(x)
    weights = torch.linspace(-1, 2, n)
    (ours * weights).sum().backward()
    reference_x = x.detach().clone().requires_grad_()
    (F.silu(reference_x) * weights).sum().backward()
    assert torch.allclose(ours, F.silu(x.detach()), atol=1e-6)
    assert torch.allclose(x.grad, reference_x.grad, atol=1e-6)


def test_silu_passes_gradcheck_in_double():
    x = torch.randn(3, 37, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(kernels_torch.silu, (x,))


def test_a_wrong_backward_fails_gradcheck():
    wrong = LEAKY.replace("(x[i] > 0 ? 1 : slope)", "(x[i] > 0 ? 1 : 2 * slope)")
    Leaky = kernels_torch.elementwise_function(wrong, "leaky_forward", "leaky_backward")
    x = torch.randn(50, dtype=torch.float64)
    x = (x + 0.1 * x.sign()).requires_grad_()
    assert not torch.autograd.gradcheck(lambda t: Leaky.apply(t, 0.1), (x,), raise_exception=False)


def test_elementwise_function_with_a_scalar_parameter():
    Leaky = kernels_torch.elementwise_function(LEAKY, "leaky_forward", "leaky_backward", name="Leaky")
    assert Leaky.__name__ == "Leaky"
    x = torch.randn(4, 300, dtype=torch.float64)
    x = (x + 0.1 * x.sign()).requires_grad_()
    y = Leaky.apply(x, 0.2)
    assert torch.allclose(y, F.leaky_relu(x, 0.2))
    assert torch.autograd.gradcheck(lambda t: Leaky.apply(t, 0.2), (x,))


def test_kernel_array_shares_memory_both_ways():
    t = torch.arange(6, dtype=torch.float32)
    a = kernels_torch.kernel_array(t)
    assert isinstance(a, np.ndarray) and a.__array_interface__["data"][0] == t.data_ptr()
    a[0] = 42  # the kernel's writes are the tensor's
    assert t[0] == 42
    with pytest.raises(ValueError, match="contiguous"):
        kernels_torch.kernel_array(torch.zeros(3, 4).t())


def test_non_contiguous_empty_and_shaped_inputs():
    x = torch.randn(5, 7).t()  # not contiguous
    assert torch.allclose(kernels_torch.silu(x), F.silu(x), atol=1e-6)
    assert kernels_torch.silu(torch.empty(0, 3)).shape == (0, 3)


def test_clear_errors():
    with pytest.raises(TypeError, match="float32 and float64"):
        kernels_torch.silu(torch.randn(4).half())
    with pytest.raises(ValueError, match="scalar_t"):
        kernels_torch.instantiate("extern \"C\" __global__ void k(const float* x, int n) {}", ["k"])
    with pytest.raises(ValueError, match="no kernel named"):
        kernels_torch.instantiate(kernels_torch.SILU_SOURCE, ["silu_forward", "nope"])


def test_instantiate_makes_a_float_and_a_double_copy():
    code = kernels_torch.instantiate(kernels_torch.SILU_SOURCE, ["silu_forward", "silu_backward"])
    for name in ("silu_forward_float", "silu_forward_double", "silu_backward_float", "silu_backward_double"):
        assert f"void {name}(" in code
    assert "scalar_t" not in code
    assert kernels_torch.SiLU.__name__ == "SiLU"


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (run by make gpu-check)")
def test_silu_on_a_gpu_runs_on_the_current_stream():
    device = torch.device("cuda")
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        x = torch.randn(2**20, device=device, dtype=torch.float64, requires_grad=True)
        y = kernels_torch.silu(x)
        y.sum().backward()
    side.synchronize()
    assert torch.allclose(y, F.silu(x.detach()))
    assert kernels_torch.kernel_array(x).data.ptr == x.data_ptr()
    small = torch.randn(64, dtype=torch.float64, device=device, requires_grad=True)
    assert torch.autograd.gradcheck(kernels_torch.silu, (small,))
