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


# ---------------------------------------------------------------------------------------------
# custom ops: the same kernels, kept by torch.compile


def test_silu_op_matches_pytorch_and_passes_gradcheck_and_opcheck():
    x = torch.randn(300)
    assert torch.allclose(kernels_torch.silu_op(x), F.silu(x), atol=1e-6)
    x64 = torch.randn(3, 40, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(kernels_torch.silu_op, (x64,))
    torch.library.opcheck(kernels_torch.silu_op, (torch.randn(20),))


def test_elementwise_op_with_a_scalar_is_registered_once_per_source():
    op = kernels_torch.elementwise_op(LEAKY, "leaky_forward", "leaky_backward", n_scalars=1)
    assert op is kernels_torch.elementwise_op(LEAKY, "leaky_forward", "leaky_backward", n_scalars=1)
    edited = kernels_torch.elementwise_op(LEAKY.replace("slope * x[i]", "x[i] * slope"), "leaky_forward",
                                          "leaky_backward", n_scalars=1)
    assert edited is not op  # an edited kernel is a new op: an op name can be registered once only
    x = torch.randn(200, dtype=torch.float64)
    x = (x + 0.1 * x.sign()).requires_grad_()
    assert torch.allclose(op(x, 0.2), F.leaky_relu(x, 0.2))
    assert torch.autograd.gradcheck(lambda t: op(t, 0.2), (x,))
    torch.library.opcheck(op, (torch.randn(20), 0.3))


def test_a_wrong_backward_op_fails_gradcheck():
    wrong = LEAKY.replace("(x[i] > 0 ? 1 : slope)", "(x[i] > 0 ? 1 : 2 * slope)")
    op = kernels_torch.elementwise_op(wrong, "leaky_forward", "leaky_backward", n_scalars=1)
    x = torch.randn(50, dtype=torch.float64)
    x = (x + 0.1 * x.sign()).requires_grad_()
    assert not torch.autograd.gradcheck(lambda t: op(t, 0.1), (x,), raise_exception=False)


def test_the_custom_op_is_one_graph_where_the_autograd_function_fails_to_compile():
    torch._dynamo.reset()
    explanation = torch._dynamo.explain(lambda t: kernels_torch.silu_op(t * 2) + 1)(torch.randn(30))
    assert (explanation.graph_count, explanation.graph_break_count) == (1, 0)
    compiled = torch.compile(lambda t: kernels_torch.silu_op(t) * 2, backend="aot_eager", fullgraph=True)
    x = torch.randn(50, requires_grad=True)
    compiled(x).sum().backward()
    reference = x.detach().clone().requires_grad_()
    (F.silu(reference) * 2).sum().backward()
    assert torch.allclose(x.grad, reference.grad, atol=1e-6)
    torch._dynamo.reset()
    SiLU = kernels_torch.SiLU  # the autograd.Function, built outside the compiled code
    with pytest.raises(Exception) as failure:  # Dynamo traces into the Python launcher inside forward
        torch.compile(lambda t: SiLU.apply(t) * 2, backend="aot_eager", fullgraph=True)(torch.randn(30))
    assert type(failure.value).__module__ == "torch._dynamo.exc"


def test_extension_dir_is_in_the_course_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_CUDA_CACHE", str(tmp_path / "kernels"))
    path = kernels_torch.extension_dir("course_silu_cpp")
    assert path == tmp_path / "extensions" / "course_silu_cpp" and path.is_dir()
    assert "at::parallel_for" in kernels_torch.SILU_CPP_SOURCE
    assert "getCurrentCUDAStream" in kernels_torch.SILU_CUDA_SOURCE


@pytest.mark.skipif(not __import__("os").environ.get("COURSE_BUILD_EXTENSIONS"),
                    reason="builds a C++ extension (about a minute of compiler time): set COURSE_BUILD_EXTENSIONS=1")
def test_load_silu_extension_builds_and_matches_pytorch():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    module = kernels_torch.load_silu_extension(device)
    x = torch.randn(10_001, device=device)
    assert torch.allclose(module.silu_forward(x), F.silu(x), atol=1e-6)
    with pytest.raises(RuntimeError, match="float32"):
        module.silu_forward(x.double())
