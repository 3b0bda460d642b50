"""Triton kernels next to their CUDA C twins and PyTorch (notebook 10).

Three kernels from Triton's own tutorials — a vector add, a row-wise fused softmax and a
blocked matmul with ``@triton.autotune`` — written so a learner can read them top to bottom,
each with the CUDA C kernel that does the same work (run by ``course.cuda``: CuPy on a GPU,
the CPU backend elsewhere).

Where they run: a Triton kernel is compiled for the GPU when the course's device
(``course.env.device()``) is a CUDA one. Without one, this module switches on Triton's
*interpreter* (``TRITON_INTERPRET=1``) before it imports Triton: every ``@triton.jit`` kernel
then runs on CPU tensors, one program after another, each block operation emulated with NumPy.
That is for learning and debugging (same results, ``print`` inside a kernel works); it says
nothing about speed, so never time it.

``softmax_op`` is the Triton softmax as a ``torch.library.custom_op`` (``course::triton_softmax``)
with a fake implementation and a backward, so ``torch.compile`` keeps it in its graph.
"""

from __future__ import annotations

import os

import torch  # at module scope: torch.library reads the custom op's annotations from here

from course import env

__all__ = ["INTERPRETED", "interpreted", "add", "softmax", "matmul", "softmax_op", "add_kernel",
           "softmax_kernel", "matmul_kernel", "MATMUL_CONFIGS", "CUDA_C_SOURCE", "CUDA_C_BLOCK",
           "cuda_c_add", "cuda_c_softmax", "cuda_c_matmul", "softmax_reference"]


def _switch_on_the_interpreter() -> bool:
    """Set TRITON_INTERPRET=1 when the course runs on the CPU; True when kernels are interpreted.

    Must happen before Triton is imported: ``@triton.jit`` decides there, kernel by kernel (Triton's
    own ``tl.max``, ``tl.sum`` … included), whether a kernel is compiled or interpreted.
    """
    if env.device().type == "cuda":
        return os.environ.get("TRITON_INTERPRET", "0") == "1"
    os.environ["TRITON_INTERPRET"] = "1"
    return True


INTERPRETED = _switch_on_the_interpreter()

try:
    import triton
    import triton.language as tl
except ImportError as error:  # pragma: no cover - torch's CUDA wheels bring Triton on Linux
    raise ImportError("Triton is not installed. It comes with PyTorch's Linux wheels; elsewhere "
                      "pip install triton (Linux only; on macOS or Windows use Colab).") from error

if INTERPRETED:
    from triton.runtime.interpreter import InterpretedFunction

    if not isinstance(tl.max, InterpretedFunction):
        raise ImportError(
            "Triton was imported before course.kernels_triton could switch on its CPU interpreter "
            "(torch.compile and torch._dynamo import Triton), so its kernels would be compiled for a GPU "
            "this machine does not have. Restart the Python kernel and import course.kernels_triton "
            "first, or start Python with TRITON_INTERPRET=1 in the environment.")


def interpreted() -> bool:
    """True when the kernels run on Triton's CPU interpreter (a NumPy emulation: never time it)."""
    return INTERPRETED


# ---------------------------------------------------------------------------------------------
# 1. vector add: one program per BLOCK_SIZE elements


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    program = tl.program_id(axis=0)                       # like blockIdx.x
    offsets = program * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)  # a whole block of indices at once
    mask = offsets < n                                    # the `if (i < n)` guard, as a vector
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def _check_tensors(*tensors):
    import torch

    for t in tensors:
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"expected torch tensors, got {type(t).__name__}")
    devices = {t.device for t in tensors}
    if len(devices) > 1:
        raise ValueError(f"the tensors are on different devices ({', '.join(map(str, devices))}): move them to one")
    device = tensors[0].device
    if INTERPRETED and device.type != "cpu":
        raise ValueError("Triton runs in its CPU interpreter here (no GPU): pass CPU tensors")
    if not INTERPRETED and device.type != "cuda":
        raise ValueError(f"Triton kernels are compiled for the GPU here: pass CUDA tensors, not {device.type} ones "
                         "(or set COURSE_DEVICE=cpu before importing course.kernels_triton to use the interpreter)")


def add(x, y, block_size: int = 1024):
    """``x + y`` by ``add_kernel``: 1D float tensors of one shape, ``block_size`` a power of two."""
    import torch

    _check_tensors(x, y)
    if x.shape != y.shape:
        raise ValueError(f"x and y must have the same shape, got {tuple(x.shape)} and {tuple(y.shape)}")
    if block_size < 1 or block_size & (block_size - 1):
        raise ValueError(f"block_size must be a power of two (tl.arange needs one), got {block_size}")
    x, y = x.contiguous(), y.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    add_kernel[(triton.cdiv(n, block_size),)](x, y, out, n, BLOCK_SIZE=block_size)
    return out


# ---------------------------------------------------------------------------------------------
# 2. fused softmax: one program per row; the row is read once and written once


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(axis=0)
    columns = tl.arange(0, BLOCK_SIZE)                    # BLOCK_SIZE >= n_cols: the whole row in registers
    mask = columns < n_cols
    x = tl.load(x_ptr + row * x_row_stride + columns, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)                             # subtract the max: exp cannot overflow
    numerator = tl.exp(x)                                 # exp(-inf) = 0: padding adds nothing
    y = numerator / tl.sum(numerator, axis=0)
    tl.store(out_ptr + row * out_row_stride + columns, y, mask=mask)


def softmax(x):
    """Softmax over the last dimension of a 2D float tensor by ``softmax_kernel`` (one program per row)."""
    import torch

    _check_tensors(x)
    if x.ndim != 2:
        raise ValueError(f"softmax expects a 2D tensor (rows × columns), got shape {tuple(x.shape)}")
    if not x.is_floating_point():
        raise TypeError(f"softmax needs a float tensor, got {x.dtype}")
    x = x.contiguous()
    out = torch.empty_like(x)
    rows, cols = x.shape
    if x.numel():
        block = triton.next_power_of_2(cols)
        softmax_kernel[(rows,)](x, out, cols, x.stride(0), out.stride(0), BLOCK_SIZE=block)
    return out


def softmax_reference(x):
    """The textbook softmax in float64 PyTorch ops: max, subtract, exp, sum, divide."""
    x = x.double()
    e = (x - x.max(dim=-1, keepdim=True).values).exp()
    return e / e.sum(dim=-1, keepdim=True)


# ---------------------------------------------------------------------------------------------
# 3. blocked matmul, auto-tuned: each program computes a BLOCK_M × BLOCK_N tile of C

#: The tile shapes autotune tries on a GPU (the fastest depends on the GPU and the matrix sizes).
MATMUL_CONFIGS = [
    triton.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}, num_warps=4, num_stages=2),
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32}, num_warps=4, num_stages=3),
    triton.Config({"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 32}, num_warps=4, num_stages=3),
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32}, num_warps=8, num_stages=3),
]

#: What the interpreter runs (it cannot time configurations, so it does not try them all).
INTERPRETER_CONFIG = triton.Config({"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32})


def _configs_to_try(configs, named_args, **kwargs):
    """autotune's pruning hook: every config on a GPU; one small config in the interpreter."""
    return [INTERPRETER_CONFIG] if INTERPRETED else configs


@triton.autotune(configs=MATMUL_CONFIGS, key=["M", "N", "K"],
                 prune_configs_by={"early_config_prune": _configs_to_try})
@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  PRECISION: tl.constexpr):
    rows = tl.program_id(axis=0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(axis=1) * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    accumulator = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):                       # march along K, one tile of A and B at a time
        k = k0 + ks
        a = tl.load(a_ptr + rows[:, None] * stride_am + k[None, :] * stride_ak,
                    mask=(rows[:, None] < M) & (k[None, :] < K), other=0.0)
        b = tl.load(b_ptr + k[:, None] * stride_bk + cols[None, :] * stride_bn,
                    mask=(k[:, None] < K) & (cols[None, :] < N), other=0.0)
        accumulator += tl.dot(a, b, input_precision=PRECISION)  # a tile product: tensor cores when allowed
    tl.store(c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn, accumulator,
             mask=(rows[:, None] < M) & (cols[None, :] < N))


def matmul(a, b, precision: str = "ieee"):
    """``a @ b`` for 2D float32 tensors by the auto-tuned ``matmul_kernel``.

    ``precision="ieee"`` is full float32, the same work as ``torch.matmul`` with its default
    ``fp32_precision``; ``"tf32"`` lets tensor cores round the inputs (Ampere and newer).
    """
    import torch

    _check_tensors(a, b)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"matmul needs (M, K) and (K, N) matrices, got {tuple(a.shape)} and {tuple(b.shape)}")
    if a.dtype != torch.float32 or b.dtype != torch.float32:
        raise TypeError(f"matmul is written for float32, got {a.dtype} and {b.dtype}: convert with .float()")
    if precision not in ("ieee", "tf32"):
        raise ValueError(f"precision is 'ieee' (float32) or 'tf32', got {precision!r}")
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty(M, N, device=a.device, dtype=torch.float32)

    def grid(meta):
        return (triton.cdiv(M, meta["BLOCK_M"]), triton.cdiv(N, meta["BLOCK_N"]))

    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                        c.stride(0), c.stride(1), PRECISION=precision)
    return c


# ---------------------------------------------------------------------------------------------
# the same three kernels in CUDA C (run by course.cuda: CuPy on a GPU, the CPU backend elsewhere)

#: Threads per block of the CUDA C add and softmax; the matmul uses CUDA_C_TILE × CUDA_C_TILE.
CUDA_C_BLOCK = 128
CUDA_C_TILE = 16

CUDA_C_SOURCE = r"""
extern "C" __global__ void vector_add(const float* x, const float* y, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = x[i] + y[i];
}

// One block per row; its threads stride over the columns, then reduce in shared memory.
extern "C" __global__ void softmax_rows(const float* x, float* out, int n_cols) {
    __shared__ float partial[128];
    const float* in = x + (size_t)blockIdx.x * n_cols;
    float* row_out = out + (size_t)blockIdx.x * n_cols;
    int t = threadIdx.x;
    float m = -INFINITY;
    for (int j = t; j < n_cols; j += blockDim.x) m = fmaxf(m, in[j]);
    partial[t] = m;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (t < stride) partial[t] = fmaxf(partial[t], partial[t + stride]);
        __syncthreads();
    }
    float row_max = partial[0];
    __syncthreads();                         // everyone has read the max before partial is reused
    float s = 0.0f;
    for (int j = t; j < n_cols; j += blockDim.x) s += expf(in[j] - row_max);
    partial[t] = s;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (t < stride) partial[t] += partial[t + stride];
        __syncthreads();
    }
    float total = partial[0];
    for (int j = t; j < n_cols; j += blockDim.x) row_out[j] = expf(in[j] - row_max) / total;
}

// Notebook 01's shared-memory tiles: each block computes a 16 × 16 tile of C.
#define TILE 16
extern "C" __global__ void matmul_tiled(const float* a, const float* b, float* c, int M, int N, int K) {
    __shared__ float a_tile[TILE][TILE];
    __shared__ float b_tile[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y;
    int col = blockIdx.x * TILE + threadIdx.x;
    float sum = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        a_tile[threadIdx.y][threadIdx.x] = (row < M && k0 + threadIdx.x < K) ? a[row * K + k0 + threadIdx.x] : 0.0f;
        b_tile[threadIdx.y][threadIdx.x] = (k0 + threadIdx.y < K && col < N) ? b[(k0 + threadIdx.y) * N + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; ++k) sum += a_tile[threadIdx.y][k] * b_tile[k][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N) c[row * N + col] = sum;
}
"""


def _cuda_c_kernel(name: str):
    from course import cuda

    return cuda.RawKernel(CUDA_C_SOURCE, name)


def _output(like, shape=None):
    """An uninitialised output array for the timed CUDA C helpers: ``cupy.empty`` on a GPU, ``numpy.empty`` on the
    CPU backend (not ``course.cuda.xp.empty``, whose fill of every new array is a debugging aid that a GPU does not
    pay for, and the kernels write every element)."""
    from course import cuda

    if cuda.backend() == "cupy":
        return cuda.xp.empty_like(like) if shape is None else cuda.xp.empty(shape, like.dtype)
    import numpy

    return numpy.empty_like(like) if shape is None else numpy.empty(shape, like.dtype)


def cuda_c_add(x, y):
    """``x + y`` by the CUDA C ``vector_add`` (``course.cuda.xp`` float32 arrays)."""
    out = _output(x)
    n = x.size
    _cuda_c_kernel("vector_add")(((n + CUDA_C_BLOCK - 1) // CUDA_C_BLOCK,), (CUDA_C_BLOCK,), (x, y, out, n))
    return out


def cuda_c_softmax(x):
    """Row-wise softmax of a 2D float32 ``course.cuda.xp`` array by the CUDA C ``softmax_rows``."""
    out = _output(x)
    rows, cols = x.shape
    if x.size:
        _cuda_c_kernel("softmax_rows")((rows,), (CUDA_C_BLOCK,), (x, out, cols))
    return out


def cuda_c_matmul(a, b):
    """``a @ b`` of 2D float32 ``course.cuda.xp`` arrays by the CUDA C ``matmul_tiled``."""
    M, K = a.shape
    N = b.shape[1]
    c = _output(a, (M, N))
    grid = ((N + CUDA_C_TILE - 1) // CUDA_C_TILE, (M + CUDA_C_TILE - 1) // CUDA_C_TILE)
    _cuda_c_kernel("matmul_tiled")(grid, (CUDA_C_TILE, CUDA_C_TILE), (a, b, c, M, N, K))
    return c


# ---------------------------------------------------------------------------------------------
# the Triton softmax as a custom op that torch.compile keeps in its graph


def _register_softmax_op():
    @torch.library.custom_op("course::triton_softmax", mutates_args=())
    def triton_softmax(x: torch.Tensor) -> torch.Tensor:
        """Row-wise softmax by the Triton kernel; opaque to torch.compile, which calls it as it is."""
        return softmax(x)

    @triton_softmax.register_fake
    def _(x):
        # What the compiler needs without running the kernel: the output's shape, dtype, device.
        if x.ndim != 2:
            raise ValueError(f"triton_softmax expects a 2D tensor, got shape {tuple(x.shape)}")
        return torch.empty_like(x)

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)                     # softmax's gradient needs only y

    def backward(ctx, grad_y):
        (y,) = ctx.saved_tensors
        return y * (grad_y - (grad_y * y).sum(dim=-1, keepdim=True))  # PyTorch ops: compiled too

    triton_softmax.register_autograd(backward, setup_context=setup_context)
    return triton_softmax


softmax_op = _register_softmax_op()
