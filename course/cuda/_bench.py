"""How fast the CPU backend runs the course's kernels: ``python -m course.cuda._bench``.

Prints the first (cold) compile time, the 256×256 tiled matmul (with __syncthreads, so run
as fibers), and two barrier-free kernels next to the same loops written in plain C and
compiled with the same compiler, at -O2 (scalar) and at -O3 (vectorised). Times are this
thread's CPU time (see best_time); ``make bench`` (tools/bench.py) reports wall-clock medians.
"""

from __future__ import annotations

import ctypes
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from . import cpu
from .kernel import RawKernel

KERNELS = r"""
#define TILE 16
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
extern "C" __global__ void stencil3x3(const float* in, float* out, int height, int width) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < 1 || col < 1 || row >= height - 1 || col >= width - 1) return;
    float sum = 0.0f;
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++)
            sum += in[(row + dy) * width + col + dx];
    out[row * width + col] = sum / 9.0f;
}
extern "C" __global__ void matmul_tiled(const float* A, const float* B, float* C, int n) {
    __shared__ float As[TILE][TILE], Bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < n / TILE; t++) {
        As[threadIdx.y][threadIdx.x] = A[row * n + t * TILE + threadIdx.x];
        Bs[threadIdx.y][threadIdx.x] = B[(t * TILE + threadIdx.y) * n + col];
        __syncthreads();
        for (int k = 0; k < TILE; k++) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    C[row * n + col] = acc;
}
"""

PLAIN_C = r"""
extern "C" void vector_add(const float* a, const float* b, float* c, int n) {
    for (int i = 0; i < n; i++) c[i] = a[i] + b[i];
}
extern "C" void stencil3x3(const float* in, float* out, int height, int width) {
    for (int row = 1; row < height - 1; row++)
        for (int col = 1; col < width - 1; col++) {
            float sum = 0.0f;
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++)
                    sum += in[(row + dy) * width + col + dx];
            out[row * width + col] = sum / 9.0f;
        }
}
"""


def best_time(fn, repeat: int = 7) -> float:
    """The fastest of `repeat` calls, in seconds of this thread's CPU time (after one warm-up).

    CPU time rather than wall-clock time: on a shared machine the wall clock also counts the
    time other processes held the core, which made the ratios below swing by 3x.
    """
    fn()
    times = []
    for _ in range(repeat):
        start = time.thread_time()
        fn()
        times.append(time.thread_time() - start)
    return min(times)


def best_times(first, second, repeat: int = 15) -> tuple[float, float]:
    """Fastest calls of two functions, measured alternately so both see the same machine load."""
    pairs = [(best_time(first, 1), best_time(second, 1)) for _ in range(repeat)]
    return min(p[0] for p in pairs), min(p[1] for p in pairs)


def plain_c_library(folder: str, level: str):
    """The loops of PLAIN_C, compiled with optimisation `level` ("-O2" or "-O3")."""
    Path(folder, "plain.cpp").write_text(PLAIN_C)
    name = f"plain{level}.so"
    subprocess.run([cpu.find_compiler(), level, "-fPIC", "-shared", "-o", name, "plain.cpp"],
                   cwd=folder, check=True)
    return ctypes.CDLL(str(Path(folder, name)))


def main() -> dict:
    """Measure, print and return the numbers."""
    results = {}
    with tempfile.TemporaryDirectory() as folder:
        import os

        os.environ["COURSE_CUDA_CACHE"] = folder  # a cold cache: the first compile is real
        cpu._modules.clear()
        start = time.perf_counter()
        RawKernel(KERNELS, "vector_add", backend="cpu").compile()
        results["first compile (s)"] = time.perf_counter() - start
        # Plain C at -O2 (GCC's usual level: scalar code, like a bounds-checked kernel) and at
        # -O3 (the compiler vectorises these loops; bounds checks prevent that in a kernel).
        plains = {level: plain_c_library(folder, level) for level in ("-O2", "-O3")}
        pointer = lambda a: a.ctypes.data_as(ctypes.c_void_p)  # noqa: E731

        n = 1_000_000
        a, b, c = (np.random.default_rng(0).random(n, dtype=np.float32) for _ in range(3))
        add = RawKernel(KERNELS, "vector_add", backend="cpu")
        for level, plain in plains.items():
            emulated, native = best_times(lambda: add(((n + 255) // 256,), (256,), (a, b, c, n)),
                                          lambda: plain.vector_add(pointer(a), pointer(b), pointer(c), n))
            results["vector add 1e6: kernel (ms)"] = emulated * 1e3
            results[f"vector add 1e6: plain C {level} (ms)"] = native * 1e3
            results[f"vector add 1e6: ratio to {level}"] = emulated / native

        size = 1024
        image = np.random.default_rng(1).random((size, size), dtype=np.float32)
        out = np.zeros_like(image)
        stencil = RawKernel(KERNELS, "stencil3x3", backend="cpu")
        for level, plain in plains.items():
            emulated, native = best_times(
                lambda: stencil((size // 16, size // 16), (16, 16), (image, out, size, size)),
                lambda: plain.stencil3x3(pointer(image), pointer(out), size, size))
            results["stencil 3x3 1024^2: kernel (ms)"] = emulated * 1e3
            results[f"stencil 3x3 1024^2: plain C {level} (ms)"] = native * 1e3
            results[f"stencil 3x3 1024^2: ratio to {level}"] = emulated / native

        n = 256
        A, B = (np.random.default_rng(2).random((n, n), dtype=np.float32) for _ in range(2))
        C = np.zeros_like(A)
        matmul = RawKernel(KERNELS, "matmul_tiled", backend="cpu")
        launch = lambda: matmul((n // 16, n // 16), (16, 16), (A, B, C, n))  # noqa: E731
        results["tiled matmul 256^2 (ms)"] = best_time(launch, 5) * 1e3
        start = time.perf_counter()
        launch()
        results["tiled matmul 256^2, wall clock (ms)"] = (time.perf_counter() - start) * 1e3
        assert np.allclose(C, A @ B, rtol=1e-4), "matmul gave a wrong answer"
        cpu._modules.clear()  # the libraries live in the temporary folder
    for name, value in results.items():
        print(f"{name:36s} {value:10.3f}")
    return results


if __name__ == "__main__":
    main()
    sys.exit(0)
