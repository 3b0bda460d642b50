"""course.cuda: the course's kernels give NumPy's answers, on every backend this machine has.

The CPU backend always runs; the "cupy" cases run when a GPU is usable and are skipped
otherwise, so the same suite checks CuPy when CI lends a GPU.
"""

import numpy as np
import pytest
from pathlib import Path

import course.cuda as cuda
from course import env

SOURCE = (Path(__file__).parent / "cuda_kernels" / "parity.cu").read_text()


@pytest.fixture(params=["cpu", "cupy"])
def backend(request):
    if request.param == "cupy" and not env.cupy_usable():
        pytest.skip("no usable GPU: CuPy cannot run kernels here (the CPU backend is tested instead)")
    return request.param


def kernel(name, backend):
    return cuda.RawKernel(SOURCE, name, backend=backend)


def device(backend, a):
    """A copy of `a` on the backend's device."""
    if backend == "cupy":
        import cupy

        return cupy.asarray(a)
    return np.array(a, order="C", copy=True)


def empty(backend, shape, dtype):
    return device(backend, np.zeros(shape, dtype))


def test_vector_add(backend):
    n = 1000
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
    c = empty(backend, n, np.float32)
    kernel("vector_add", backend)(((n + 255) // 256,), (256,), (device(backend, a), device(backend, b), c, n))
    np.testing.assert_array_equal(cuda.asnumpy(c), a + b)


def test_saxpy_with_a_python_float_and_int(backend):
    n = 777
    x = np.linspace(-1, 1, n, dtype=np.float32)
    y = np.arange(n, dtype=np.float32)
    y_dev = device(backend, y)
    kernel("saxpy", backend)(((n + 127) // 128,), (128,), (2.5, device(backend, x), y_dev, n))
    np.testing.assert_allclose(cuda.asnumpy(y_dev), np.float32(2.5) * x + y, rtol=1e-6)


def test_grid_stride_loop_covers_more_elements_than_threads(backend):
    n = 10_000
    x = device(backend, np.arange(n, dtype=np.float32))
    kernel("grid_stride_scale", backend)((4,), (64,), (x, np.float32(3.0), n))  # 256 threads
    np.testing.assert_array_equal(cuda.asnumpy(x), 3 * np.arange(n, dtype=np.float32))


def test_blur_3x3_stencil_on_a_2d_grid(backend):
    height, width = 37, 53
    image = np.random.default_rng(1).random((height, width), dtype=np.float32)
    out = empty(backend, (height, width), np.float32)
    block = (16, 8)
    grid = ((width + 15) // 16, (height + 7) // 8)
    kernel("blur3x3", backend)(grid, block, (device(backend, image), out, height, width))
    expected = image.copy()
    windows = np.lib.stride_tricks.sliding_window_view(image, (3, 3))
    expected[1:-1, 1:-1] = windows.sum(axis=(2, 3), dtype=np.float32) / 9
    np.testing.assert_allclose(cuda.asnumpy(out), expected, rtol=1e-5)


def test_shared_tile_transpose_with_padding(backend):
    height, width = 70, 45  # not multiples of the 32x32 tile
    a = np.arange(height * width, dtype=np.float32).reshape(height, width)
    out = empty(backend, (width, height), np.float32)
    grid = ((width + 31) // 32, (height + 31) // 32)
    kernel("transpose_tiled", backend)(grid, (32, 8), (device(backend, a), out, height, width))
    np.testing.assert_array_equal(cuda.asnumpy(out), a.T)


def test_block_reduction_in_dynamic_shared_memory(backend):
    n, threads = 5000, 128
    x = np.random.default_rng(2).random(n, dtype=np.float32)
    blocks = (n + threads - 1) // threads
    partial = empty(backend, blocks, np.float32)
    kernel("block_sum", backend)((blocks,), (threads,), (device(backend, x), partial, n),
                                 shared_mem=threads * 4)
    expected = np.pad(x, (0, blocks * threads - n)).reshape(blocks, threads).sum(axis=1)
    np.testing.assert_allclose(cuda.asnumpy(partial), expected, rtol=1e-5)


def test_histogram_with_shared_memory_and_atomics(backend):
    pixels = np.random.default_rng(3).integers(0, 256, size=20_000, dtype=np.uint8)
    bins = empty(backend, 256, np.uint32)
    kernel("histogram256", backend)((8,), (128,), (device(backend, pixels), bins, pixels.size))
    np.testing.assert_array_equal(cuda.asnumpy(bins), np.bincount(pixels, minlength=256))


@pytest.mark.parametrize("m, n, k", [(64, 64, 64), (33, 47, 29)])
def test_tiled_matmul(backend, m, n, k):
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((m, k), dtype=np.float32), rng.standard_normal((k, n), dtype=np.float32)
    c = empty(backend, (m, n), np.float32)
    grid = ((n + 15) // 16, (m + 15) // 16)
    kernel("matmul_tiled", backend)(grid, (16, 16), (device(backend, a), device(backend, b), c, m, n, k))
    np.testing.assert_allclose(cuda.asnumpy(c), a @ b, rtol=1e-4, atol=1e-4)


def test_3d_grid_indexing(backend):
    nx, ny, nz = 10, 7, 5
    block, grid = (4, 4, 2), (3, 2, 3)
    coords = empty(backend, (nz, ny, nx, 3), np.int32)
    blocks = empty(backend, (nz, ny, nx), np.int32)
    kernel("index_3d", backend)(grid, block, (coords, blocks, nx, ny, nz))
    z, y, x = np.meshgrid(np.arange(nz), np.arange(ny), np.arange(nx), indexing="ij")
    np.testing.assert_array_equal(cuda.asnumpy(coords), np.stack([x, y, z], axis=-1))
    expected = x // 4 + 100 * (y // 4) + 10000 * (z // 2) + 1000000 * (grid[0] + block[1])
    np.testing.assert_array_equal(cuda.asnumpy(blocks), expected)


def test_device_helper_functions(backend):
    height, width = 9, 13
    image = np.random.default_rng(5).random((height, width), dtype=np.float32)
    out = empty(backend, (height, width), np.float32)
    squares = empty(backend, (height, width), np.int32)
    kernel("helpers", backend)((1, 2), (16, 8), (device(backend, image), out, squares, height, width))
    np.testing.assert_allclose(cuda.asnumpy(out), np.clip(2 * image - 0.5, 0, 1), rtol=1e-6)
    rows, cols = np.indices((height, width))
    np.testing.assert_array_equal(cuda.asnumpy(squares), (rows - cols) ** 2)


def test_double_precision(backend):
    n = 513
    x = np.linspace(-3, 3, n)
    y = empty(backend, n, np.float64)
    kernel("gaussian_double", backend)((3,), (256,), (device(backend, x), y, 0.25, 1.5, n))
    expected = np.exp(-0.5 * ((x - 0.25) / 1.5) ** 2) / (1.5 * np.sqrt(2 * np.pi))
    np.testing.assert_allclose(cuda.asnumpy(y), expected, rtol=1e-13)


def test_unsigned_char_image(backend):
    height, width = 21, 34
    rgb = np.random.default_rng(6).integers(0, 256, size=(height, width, 3), dtype=np.uint8)
    grey = empty(backend, (height, width), np.uint8)
    mask = empty(backend, (height, width), np.uint8)
    pixels = height * width
    kernel("grey_invert", backend)(((pixels + 255) // 256,), (256,),
                                   (device(backend, rgb), grey, mask, pixels, np.uint8(100)))
    g = (rgb.astype(np.uint32).sum(axis=2) // 3).astype(np.uint8)
    np.testing.assert_array_equal(cuda.asnumpy(grey), 255 - g)
    np.testing.assert_array_equal(cuda.asnumpy(mask), (g > 100).astype(np.uint8))


def test_printf_reaches_python_stdout(backend, capsys):
    kernel("say_hello", backend)((2,), (4,), (6,))
    cuda.synchronize()
    lines = capsys.readouterr().out.splitlines()
    assert sorted(lines) == sorted(
        f"hello from thread {i % 4} of block {i // 4}, value {i * 0.5:.2f}" for i in range(6)
    )


def test_atomics(backend):
    values = np.array([5, -3, 7, 12, 0, -8, 7, 2], dtype=np.int32)
    n = values.size
    ints = device(backend, np.array([0, 0, 2**31 - 1, -(2**31), -1, 0], dtype=np.int32))
    uints = device(backend, np.array([0, 0, 2**32 - 1], dtype=np.uint32))
    fsum, dsum = empty(backend, 1, np.float32), empty(backend, 1, np.float64)
    kernel("atomics", backend)((2,), (4,), (device(backend, values), ints, uints, fsum, dsum, n))
    got = cuda.asnumpy(ints)
    assert list(got[:4]) == [values.sum(), -values.sum(), values.min(), values.max()]
    assert got[4] in (2, 6) and got[5] == 42  # the thread of either 7 won the exchange
    assert list(cuda.asnumpy(uints)) == [n, n - 1, 0]
    assert cuda.asnumpy(fsum)[0] == 0.5 * n and cuda.asnumpy(dsum)[0] == values.sum()


def test_math_functions(backend):
    n = 64
    x = np.linspace(0.5, 3.9, n, dtype=np.float32)
    out = empty(backend, (n, 12), np.float32)
    kernel("math_functions", backend)((1,), (n,), (device(backend, x), out, n))
    i = np.arange(n, dtype=np.float32)
    expected = np.stack([
        np.sqrt(x), np.exp(-x), np.minimum(x, 2), np.maximum(x, 2), i + 3, np.abs(1 - x),
        x ** 1.5, np.log(x), np.floor(x), 1 / np.sqrt(x), 1 / x, np.tanh(x) + np.ceil(x) + 1,
    ], axis=1)
    np.testing.assert_allclose(cuda.asnumpy(out), expected, rtol=2e-6, atol=1e-6)


def test_integer_types(backend):
    s = np.array([-7, 3, -32768, 32767, 0, 12], dtype=np.int16)
    u, big = empty(backend, 6, np.uint32), empty(backend, 6, np.int64)
    kernel("integer_types", backend)((1,), (8,), (device(backend, s), u, big, np.uint32(3), 6))
    assert list(cuda.asnumpy(u)) == [21, 9, 98304, 98301, 0, 36]
    i = np.arange(6)
    np.testing.assert_array_equal(cuda.asnumpy(big), 3 ** np.maximum(i % 5, 1) * 1000000007)


def test_syncthreads_count(backend):
    x = np.arange(64, dtype=np.int32) * np.array([1, 3] * 32, dtype=np.int32)  # odd ones at odd i
    x[:32] = 2  # block 0 all even
    counts = empty(backend, 2, np.int32)
    kernel("count_even", backend)((2,), (32,), (device(backend, x), counts))
    assert list(cuda.asnumpy(counts)) == [32, 16]


def test_barrier_free_kernels_run_as_loops_and_others_as_fibers():
    """The CPU backend picks plain loops for kernels without __syncthreads (the fast path)."""
    k = cuda.RawKernel(SOURCE, "vector_add", backend="cpu")
    assert not k._kernel.uses_barriers
    assert cuda.RawKernel(SOURCE, "block_sum", backend="cpu")._kernel.uses_barriers


GRID_SYNC = r"""
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void two_phase_sum(const float* x, float* partial, float* total, int n) {
    cg::grid_group grid = cg::this_grid();
    __shared__ float s[128];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int k = 64; k > 0; k /= 2) {
        if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = s[0];
    grid.sync();                                   // every block's partial is there
    if (grid.thread_rank() == 0) {
        float t = 0.0f;
        for (int b = 0; b < gridDim.x; b++) t += partial[b];
        total[0] = t;
    }
}
"""


def test_a_grid_wide_sync_runs_cooperatively_on_a_gpu_and_is_refused_with_the_way_on_the_cpu(backend):
    """RawKernel(..., enable_cooperative_groups=True), as with CuPy: a cooperative launch on a GPU, where grid.sync()
    waits for every block; the CPU backend refuses the kernel and says how to run it."""
    x = np.arange(1000, dtype=np.float32)
    if backend == "cpu":
        with pytest.raises(cuda.CompileError, match=r"grid-wide barrier .* enable_cooperative_groups=True"):
            cuda.RawKernel(GRID_SYNC, "two_phase_sum", backend="cpu", enable_cooperative_groups=True)
        return
    k = cuda.RawKernel(GRID_SYNC, "two_phase_sum", backend=backend, enable_cooperative_groups=True)
    partial, total = empty(backend, 8, np.float32), empty(backend, 1, np.float32)
    k((8,), (128,), (device(backend, x), partial, total, 1000))
    assert float(cuda.asnumpy(total)[0]) == float(x.sum())


def test_the_compiled_kernels_attributes_as_cupy_gives_them(backend):
    """num_regs, max_threads_per_block, shared_size_bytes: CuPy's figures on a GPU; an AttributeError on the CPU."""
    k = kernel("transpose_tiled", backend)  # (a __shared__ tile: shared_size_bytes > 0 on a GPU)
    if backend == "cpu":
        with pytest.raises(AttributeError, match="fact of the GPU binary"):
            k.num_regs
        return
    assert 0 < k.num_regs <= 255 and 0 < k.max_threads_per_block <= 1024 and k.shared_size_bytes > 0
