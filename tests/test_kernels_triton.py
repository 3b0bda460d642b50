"""course.kernels_triton: Triton kernels (on the interpreter without a GPU) against PyTorch and their
CUDA C twins, the Triton softmax as a custom op that torch.compile keeps."""

import os

if not __import__("torch").cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")  # before anything imports Triton (torch._dynamo does)

import numpy as np
import pytest
import torch

from course import cuda
from course import kernels_triton as kt

DEVICE = torch.device("cuda" if not kt.INTERPRETED else "cpu")


def test_the_interpreter_runs_where_there_is_no_gpu():
    assert kt.interpreted() == (not torch.cuda.is_available() or os.environ.get("COURSE_DEVICE") == "cpu")


@pytest.mark.parametrize("n, block", [(1, 16), (1000, 256), (1024, 1024), (3000, 1024)])
def test_add_matches_pytorch(n, block):
    x, y = torch.randn(n, device=DEVICE), torch.randn(n, device=DEVICE)
    assert torch.equal(kt.add(x, y, block_size=block), x + y)


def test_add_rejects_bad_arguments():
    x = torch.randn(10, device=DEVICE)
    with pytest.raises(ValueError, match="power of two"):
        kt.add(x, x, block_size=100)
    with pytest.raises(ValueError, match="same shape"):
        kt.add(x, torch.randn(11, device=DEVICE))
    with pytest.raises(TypeError, match="torch tensors"):
        kt.add(x.cpu().numpy(), x)
    if kt.INTERPRETED and torch.cuda.is_available():
        with pytest.raises(ValueError, match="CPU tensors"):
            kt.add(x.cuda(), x.cuda())


@pytest.mark.parametrize("shape", [(1, 1), (7, 33), (3, 128), (2, 1000)])
def test_softmax_matches_the_reference(shape):
    x = 10 * torch.randn(*shape, device=DEVICE)
    got = kt.softmax(x)
    assert torch.allclose(got.double(), kt.softmax_reference(x), atol=1e-6)
    assert torch.allclose(got.sum(dim=1).double(), torch.ones(shape[0], dtype=torch.float64, device=DEVICE), atol=1e-5)


def test_softmax_does_not_overflow_on_large_values():
    x = torch.tensor([[1000.0, 1001.0, 999.0]], device=DEVICE)  # exp(1000) is inf in float32
    got = kt.softmax(x)
    assert torch.isfinite(got).all()
    assert torch.allclose(got, torch.softmax(x, dim=1), atol=1e-6)


def test_softmax_rejects_bad_input():
    with pytest.raises(ValueError, match="2D"):
        kt.softmax(torch.randn(2, 3, 4, device=DEVICE))
    with pytest.raises(TypeError, match="float"):
        kt.softmax(torch.ones(2, 3, dtype=torch.int64, device=DEVICE))
    assert kt.softmax(torch.empty(0, 5, device=DEVICE)).shape == (0, 5)


@pytest.mark.parametrize("m, k, n", [(1, 1, 1), (33, 17, 65), (64, 40, 32)])
def test_matmul_matches_pytorch(m, k, n):
    a, b = torch.randn(m, k, device=DEVICE), torch.randn(k, n, device=DEVICE)
    expected = a.double() @ b.double()
    assert torch.allclose(kt.matmul(a, b).double(), expected, atol=1e-4 * k**0.5, rtol=1e-5)


def test_matmul_autotune_keeps_one_config_per_size():
    a, b = torch.randn(20, 30, device=DEVICE), torch.randn(30, 10, device=DEVICE)
    kt.matmul(a, b)
    assert kt.matmul_kernel.best_config is not None
    if kt.INTERPRETED:  # the interpreter cannot time configurations: it runs the one small config
        assert kt.matmul_kernel.best_config.kwargs == kt.INTERPRETER_CONFIG.kwargs


def test_matmul_rejects_bad_input():
    a = torch.randn(4, 5, device=DEVICE)
    with pytest.raises(ValueError, match=r"\(M, K\) and \(K, N\)"):
        kt.matmul(a, a)
    with pytest.raises(TypeError, match="float32"):
        kt.matmul(a.double(), a.double().t())
    with pytest.raises(ValueError, match="precision"):
        kt.matmul(a, a.t().contiguous(), precision="fast")


@pytest.fixture
def cpu_backend(monkeypatch):
    monkeypatch.setenv("COURSE_CUDA_BACKEND", "cpu")


def test_the_cuda_c_twins_match_numpy(cpu_backend):
    rng = np.random.default_rng(0)
    x, y = (rng.standard_normal(300, dtype=np.float32) for _ in range(2))
    assert np.array_equal(cuda.asnumpy(kt.cuda_c_add(x, y)), x + y)
    s = 10 * rng.standard_normal((5, 300)).astype(np.float32)
    expected = kt.softmax_reference(torch.from_numpy(s)).numpy()
    assert np.allclose(cuda.asnumpy(kt.cuda_c_softmax(s)), expected, atol=1e-6)
    a, b = rng.standard_normal((33, 17), dtype=np.float32), rng.standard_normal((17, 20), dtype=np.float32)
    assert np.allclose(cuda.asnumpy(kt.cuda_c_matmul(a, b)), a @ b, atol=1e-4)


def test_softmax_op_gradcheck_and_opcheck():
    x = torch.randn(4, 9, dtype=torch.float64, device=DEVICE, requires_grad=True)
    assert torch.autograd.gradcheck(kt.softmax_op, (x,))
    torch.library.opcheck(kt.softmax_op, (torch.randn(3, 5, device=DEVICE),))


def test_softmax_op_is_one_graph_under_torch_compile():
    torch._dynamo.reset()
    explanation = torch._dynamo.explain(lambda t: kt.softmax_op(t * 2) + 1)(torch.randn(4, 5, device=DEVICE))
    assert (explanation.graph_count, explanation.graph_break_count) == (1, 0)
