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
"""

from __future__ import annotations

import functools
import re

__all__ = ["SILU_SOURCE", "elementwise_function", "instantiate", "kernel_array", "SiLU", "silu",
           "BLOCK_SIZE"]

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


def __getattr__(name):
    # `SiLU` (the Function class) is built on first use, so importing this module stays light.
    if name == "SiLU":
        return _silu_function()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
