"""CUDA C kernels inside PyTorch: a ``torch.autograd.Function`` whose forward and backward are
``course.cuda`` kernels, sharing memory with the tensors through DLPack (notebook 10).

The kernels are elementwise and written once with ``scalar_t`` for the element type::

    extern "C" __global__ void silu_forward(const scalar_t* x, scalar_t* y, int n) { ... }
    extern "C" __global__ void silu_backward(const scalar_t* x, const scalar_t* grad_y,
                                             scalar_t* grad_x, int n) { ... }

``elementwise_function(source, "silu_forward", "silu_backward")`` compiles a float and a
double copy of them (``silu_forward_float``, ``silu_forward_double``: double is what
``torch.autograd.gradcheck`` needs) and returns the autograd Function. Extra scalar
parameters (a slope, say) go between the arrays and ``n`` and are passed to ``apply``.

The tensor's device decides where the kernel runs. A CUDA tensor is handed to CuPy with
``cupy.from_dlpack`` (no copy) and the kernel is launched on PyTorch's current CUDA stream, so
it is ordered with the PyTorch work around it. A CPU tensor is handed to NumPy with
``numpy.from_dlpack`` (no copy) and the kernel runs on course.cuda's CPU backend.

That Function works in eager mode but not under ``torch.compile``: Dynamo traces into it and
calls ``from_dlpack`` on a FakeTensor, which has no memory. ``elementwise_op`` wraps the same
kernels as a ``torch.library.custom_op`` instead — opaque to the compiler, with a fake
implementation (shape, dtype, device of the output) and ``register_autograd`` — so the compiled
graph keeps the kernel as one node. ``silu_op`` is SiLU that way (``course::silu_…``).

``load_silu_extension`` builds the third route, a C++ (CPU) or CUDA (GPU) PyTorch extension with
``torch.utils.cpp_extension.load_inline``, into the course's cache so a second run loads it at once.
"""

from __future__ import annotations

import functools
import hashlib
import re

__all__ = ["SILU_SOURCE", "elementwise_function", "elementwise_op", "instantiate", "kernel_array", "SiLU",
           "silu", "silu_op", "BLOCK_SIZE", "SILU_CPP_SOURCE", "SILU_CUDA_SOURCE", "extension_dir",
           "load_silu_extension"]

#: Threads per block of every launch here.
BLOCK_SIZE = 256

#: C type of each torch dtype the kernels are compiled for.
C_TYPES = {"torch.float32": "float", "torch.float64": "double"}

SILU_SOURCE = r"""
// SiLU (also called swish): y = x * sigmoid(x), in one pass over memory.
extern "C" __global__ void silu_forward(const scalar_t* x, scalar_t* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        scalar_t s = 1 / (1 + exp(-x[i]));
        y[i] = x[i] * s;
    }
}

// dy/dx = s + x * s * (1 - s) = s * (1 + x * (1 - s)), with s = sigmoid(x).
extern "C" __global__ void silu_backward(const scalar_t* x, const scalar_t* grad_y,
                                         scalar_t* grad_x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        scalar_t s = 1 / (1 + exp(-x[i]));
        grad_x[i] = grad_y[i] * s * (1 + x[i] * (1 - s));
    }
}
"""


def instantiate(source: str, kernel_names, c_types=("float", "double")) -> str:
    """One source holding a copy of the kernels per C type: ``scalar_t`` → float, ``name`` → ``name_float``."""
    if "scalar_t" not in source:
        raise ValueError("write the kernels with `scalar_t` as the element type (e.g. `const scalar_t* x`); "
                         "instantiate() makes a float and a double copy of them")
    copies = []
    for c_type in c_types:
        text = re.sub(r"\bscalar_t\b", c_type, source)
        for name in kernel_names:
            if not re.search(rf"\b{re.escape(name)}\b", source):
                raise ValueError(f"the source has no kernel named {name!r}")
            text = re.sub(rf"\b{re.escape(name)}\b", f"{name}_{c_type}", text)
        copies.append(text)
    return "\n".join(copies)


@functools.lru_cache(maxsize=None)
def _kernel(code: str, name: str, backend: str):
    from course import cuda

    return cuda.RawKernel(code, name, backend=backend)


def kernel_array(tensor):
    """The array a kernel sees for ``tensor``, sharing its memory (no copy): NumPy on a CPU, CuPy on a GPU."""
    import torch

    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"expected a torch.Tensor, got {type(tensor).__name__}")
    if not tensor.is_contiguous():
        raise ValueError("a kernel sees raw memory: pass a contiguous tensor (tensor.contiguous())")
    tensor = tensor.detach()  # DLPack refuses tensors that require grad; detach() shares the memory
    if tensor.is_cuda:
        import cupy

        return cupy.from_dlpack(tensor)
    if tensor.device.type != "cpu":
        raise ValueError(f"course.cuda kernels run on CUDA or CPU tensors, got one on {tensor.device}")
    import numpy

    return numpy.from_dlpack(tensor)


def _launch(code: str, name: str, like, tensors, scalars) -> None:
    """Launch kernel ``name`` (its copy for ``like``'s dtype) on ``tensors`` + ``scalars`` + n."""
    import torch

    c_type = C_TYPES.get(str(like.dtype))
    if c_type is None:
        raise TypeError(f"the kernels are compiled for float32 and float64 tensors, got {like.dtype}; "
                        "convert with x.float() (or x.double() for gradcheck)")
    n = like.numel()
    if n >= 2**31:
        raise ValueError(f"{n} elements do not fit the kernels' `int n`; split the tensor into chunks")
    if n == 0:
        return
    grid = ((n + BLOCK_SIZE - 1) // BLOCK_SIZE,)
    if like.is_cuda:
        from course import env

        if not env.cupy_usable():
            raise RuntimeError("a CUDA tensor needs CuPy to run course.cuda kernels: pip install cupy-cuda12x "
                               "(or move the tensor to the CPU with .cpu())")
        import cupy

        kernel = _kernel(code, f"{name}_{c_type}", "cupy")
        stream = torch.cuda.current_stream(like.device)
        # CuPy launches on its current stream: make that PyTorch's, so the kernel runs after the
        # PyTorch work that produced its inputs and before the work that reads its outputs.
        with cupy.cuda.Device(like.device.index), cupy.cuda.ExternalStream(stream.cuda_stream):
            arrays = [kernel_array(t) for t in tensors]
            kernel(grid, (BLOCK_SIZE,), (*arrays, *scalars, n))
    else:
        kernel = _kernel(code, f"{name}_{c_type}", "cpu")
        kernel(grid, (BLOCK_SIZE,), (*[kernel_array(t) for t in tensors], *scalars, n))


def elementwise_function(source: str, forward: str, backward: str, name: str | None = None):
    """An autograd Function from an elementwise CUDA C forward and backward kernel (notebook 10).

    ``forward(const scalar_t* x, scalar_t* y, <scalars>, int n)`` and
    ``backward(const scalar_t* x, const scalar_t* grad_y, scalar_t* grad_x, <scalars>, int n)``.
    Call it as ``Function.apply(x, *scalars)``; float32 and float64 tensors, on a CPU or a GPU.
    """
    import torch
    from torch.autograd.function import once_differentiable

    code = instantiate(source, (forward, backward))

    class KernelFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, *scalars):
            x = x.contiguous()
            y = torch.empty_like(x)  # PyTorch's allocator owns the output; the kernel writes into it
            _launch(code, forward, x, (x, y), scalars)
            ctx.save_for_backward(x)
            ctx.scalars = scalars
            return y

        @staticmethod
        @once_differentiable  # the backward kernel is not itself differentiable
        def backward(ctx, grad_y):
            (x,) = ctx.saved_tensors
            grad_y = grad_y.contiguous().to(x.dtype)
            grad_x = torch.empty_like(x)
            _launch(code, backward, x, (x, grad_y, grad_x), ctx.scalars)
            return (grad_x, *([None] * len(ctx.scalars)))  # no gradient for the scalars

    KernelFunction.__name__ = KernelFunction.__qualname__ = name or forward.removesuffix("_forward").title()
    KernelFunction.source = code
    return KernelFunction


@functools.lru_cache(maxsize=None)
def _silu_function():
    return elementwise_function(SILU_SOURCE, "silu_forward", "silu_backward", name="SiLU")


def silu(x):
    """SiLU, ``x * sigmoid(x)``, as one CUDA C kernel forward and one backward (notebook 10)."""
    return _silu_function().apply(x)


# ---------------------------------------------------------------------------------------------
# the same kernels as a custom op that torch.compile keeps

_OPS: dict[str, object] = {}  # op name -> the registered op (an op name can be registered once only)


def elementwise_op(source: str, forward: str, backward: str, name: str | None = None, n_scalars: int = 0):
    """A ``torch.library.custom_op`` from the same CUDA C kernels as ``elementwise_function`` (notebook 10).

    Registers ``course::<name>_<hash>`` (forward) and its backward op, each with a fake
    implementation, and the backward with ``register_autograd``. The hash of the source is in
    the name, so an edited kernel becomes a new op (an op name can be registered only once).
    Call it as ``op(x, *scalars)`` with ``n_scalars`` float parameters after ``x``.
    """
    import torch

    code = instantiate(source, (forward, backward))
    base = re.sub(r"\W", "_", name or forward.removesuffix("_forward")).lower()
    op_name = f"course::{base}_{hashlib.sha256(f'{code}{n_scalars}'.encode()).hexdigest()[:8]}"
    if op_name in _OPS:
        return _OPS[op_name]
    scalar_args = "".join(f", float s{i}" for i in range(n_scalars))

    def run_forward(x, *scalars):
        x = x.contiguous()
        y = torch.empty_like(x)
        _launch(code, forward, x, (x, y), scalars)
        return y

    def run_backward(x, grad_y, *scalars):
        x = x.contiguous()
        grad_x = torch.empty_like(x)
        _launch(code, backward, x, (x, grad_y.contiguous().to(x.dtype), grad_x), scalars)
        return grad_x

    op = torch.library.custom_op(op_name, run_forward, mutates_args=(),
                                 schema=f"(Tensor x{scalar_args}) -> Tensor")
    backward_op = torch.library.custom_op(f"{op_name}_backward", run_backward, mutates_args=(),
                                          schema=f"(Tensor x, Tensor grad_y{scalar_args}) -> Tensor")

    def fake(x, *scalars):  # what the compiler needs, without running a kernel: shape, dtype, device
        return torch.empty_like(x)

    op.register_fake(fake)
    backward_op.register_fake(lambda x, grad_y, *scalars: torch.empty_like(x))

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])
        ctx.scalars = inputs[1:]

    def autograd_backward(ctx, grad_y):
        (x,) = ctx.saved_tensors
        return (backward_op(x, grad_y, *ctx.scalars), *([None] * len(ctx.scalars)))

    op.register_autograd(autograd_backward, setup_context=setup_context)
    _OPS[op_name] = op
    return op


@functools.lru_cache(maxsize=None)
def _silu_op():
    return elementwise_op(SILU_SOURCE, "silu_forward", "silu_backward", name="silu")


# ---------------------------------------------------------------------------------------------
# a compiled PyTorch extension: torch.utils.cpp_extension.load_inline

SILU_CPP_SOURCE = r"""
#include <torch/extension.h>

// SiLU on the CPU: float32, contiguous, split over the cores by at::parallel_for.
torch::Tensor silu_forward(torch::Tensor x) {
    TORCH_CHECK(x.device().is_cpu(), "silu_forward (C++): expected a CPU tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat, "silu_forward (C++): expected float32");
    auto input = x.contiguous();
    auto output = torch::empty_like(input);
    const float* in = input.data_ptr<float>();
    float* out = output.data_ptr<float>();
    at::parallel_for(0, input.numel(), 2048, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) out[i] = in[i] / (1.0f + std::exp(-in[i]));
    });
    return output;
}
"""

SILU_CUDA_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void silu_kernel(const float* x, float* y, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] / (1.0f + expf(-x[i]));
}

// SiLU on the GPU, launched on PyTorch's current stream.
torch::Tensor silu_forward(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "silu_forward (CUDA): expected a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat, "silu_forward (CUDA): expected float32");
    auto input = x.contiguous();
    auto output = torch::empty_like(input);
    int64_t n = input.numel();
    if (n > 0) {
        int threads = 256;
        int64_t blocks = (n + threads - 1) / threads;
        silu_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
            input.data_ptr<float>(), output.data_ptr<float>(), n);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
    return output;
}
"""


def extension_dir(name: str):
    """The build folder of extension ``name``: next to course.cuda's compiled kernels, in the user's cache."""
    from course.cuda import cpu

    path = cpu.cache_dir().parent / "extensions" / name
    path.mkdir(parents=True, exist_ok=True)
    return path


def load_silu_extension(device=None, verbose: bool = False):
    """Build (first call: about a minute of compiler time) or load (later: a second) the SiLU extension.

    C++ for a CPU device, CUDA for a GPU one (needs nvcc, the CUDA toolkit). Returns the module;
    ``module.silu_forward(x)`` takes a float32 tensor on that device.
    """
    from course import gpu

    device = gpu.parse_device(device)
    from torch.utils.cpp_extension import load_inline

    name = "course_silu_cuda" if device.type == "cuda" else "course_silu_cpp"
    if device.type == "cuda":
        return load_inline(name, cpp_sources="torch::Tensor silu_forward(torch::Tensor x);",
                           cuda_sources=SILU_CUDA_SOURCE, functions=["silu_forward"],
                           build_directory=str(extension_dir(name)), extra_cflags=["-O2"], verbose=verbose)
    return load_inline(name, cpp_sources=SILU_CPP_SOURCE, functions=["silu_forward"],
                       build_directory=str(extension_dir(name)), extra_cflags=["-O2"], verbose=verbose)


def __getattr__(name):
    # `SiLU` (the Function class) and `silu_op` are built on first use, so importing this module stays light.
    if name == "SiLU":
        return _silu_function()
    if name == "silu_op":  # SiLU as the custom op course::silu_…: the same kernels, kept by torch.compile
        return _silu_op()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
