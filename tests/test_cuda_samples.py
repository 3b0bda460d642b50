"""course.cuda runs kernels written in the style of public sample collections (NVIDIA's
cuda-samples, CuPy's examples, GPU Gems): each compared with NumPy, on the CPU backend here
and on CuPy where a GPU is usable. The kernels are the course's own (tests/cuda_kernels/samples.cu)."""

from pathlib import Path

import numpy as np
import pytest

import course.cuda as cuda
from course import env

SOURCE = (Path(__file__).parent / "cuda_kernels" / "samples.cu").read_text()
EXPRESSIONS = ["reduce_multi<128>", "reduce_multi<256>", "matrix_mul<16>", "matrix_mul<32>"]


@pytest.fixture(params=["cpu", "cupy"])
def backend(request):
    if request.param == "cupy" and not env.cupy_usable():
        pytest.skip("no usable GPU: CuPy cannot run kernels here (the CPU backend is tested instead)")
    return request.param


@pytest.fixture
def xp(backend):
    if backend == "cupy":
        import cupy

        return cupy
    return np


def module(backend, **kwargs):
    return cuda.RawModule(code=SOURCE, backend=backend, name_expressions=EXPRESSIONS,
                          options=("-DALPHA=2.0f",), **kwargs)


@pytest.mark.parametrize("block", [128, 256])
def test_reduction_several_elements_per_thread_and_shuffles(backend, xp, block):
    n = 100_000
    x = np.random.default_rng(0).random(n, dtype=np.float32)
    blocks = 24
    out = xp.zeros(blocks, xp.float32)
    module(backend).get_function(f"reduce_multi<{block}>")((blocks,), (block,), (xp.asarray(x), out, n))
    np.testing.assert_allclose(float(cuda.asnumpy(out).sum()), float(x.sum(dtype=np.float64)), rtol=1e-5)


def test_transpose_without_bank_conflicts(backend, xp):
    height, width = 100, 70
    a = np.random.default_rng(1).random((height, width), dtype=np.float32)
    out = xp.zeros((width, height), xp.float32)
    module(backend).get_function("transpose_no_bank_conflicts")(
        ((width + 31) // 32, (height + 31) // 32), (32, 8), (out, xp.asarray(a), width, height))
    np.testing.assert_array_equal(cuda.asnumpy(out), a.T)


def test_histogram_with_per_warp_sub_histograms(backend, xp):
    words = np.random.default_rng(2).integers(0, 2**32, 5000, dtype=np.uint32)
    hist = xp.zeros(64, xp.uint32)
    module(backend).get_function("histogram64_per_warp")((6,), (128,), (xp.asarray(words), hist, words.size))
    values = np.concatenate([(words >> (8 * k)) & 0x3F for k in range(4)])
    np.testing.assert_array_equal(cuda.asnumpy(hist), np.bincount(values, minlength=64))


def test_work_efficient_scan_with_bank_padding(backend, xp):
    n = 512
    x = np.random.default_rng(3).integers(0, 10, n).astype(np.float32)
    out = xp.zeros(n, xp.float32)
    padded = (n + n // 32) * 4
    module(backend).get_function("prescan")((1,), (n // 2,), (out, xp.asarray(x), n), shared_mem=padded)
    np.testing.assert_array_equal(cuda.asnumpy(out), np.concatenate([[0], np.cumsum(x)[:-1]]))


@pytest.mark.parametrize("tile", [16, 32])
def test_matrix_mul_template_tiles(backend, xp, tile):
    hA, wA, wB = 2 * tile, 3 * tile, 2 * tile
    rng = np.random.default_rng(4)
    a, b = rng.random((hA, wA), dtype=np.float32), rng.random((wA, wB), dtype=np.float32)
    c = xp.zeros((hA, wB), xp.float32)
    module(backend).get_function(f"matrix_mul<{tile}>")((wB // tile, hA // tile), (tile, tile),
                                                        (c, xp.asarray(a), xp.asarray(b), wA, wB))
    np.testing.assert_allclose(cuda.asnumpy(c), a @ b, rtol=1e-5)


def test_sgemm_with_float4_loads_and_a_define(backend, xp):
    m, n, k = 33, 29, 24
    rng = np.random.default_rng(5)
    a, b = rng.random((m, k), dtype=np.float32), rng.random((k, n), dtype=np.float32)
    c = xp.zeros((m, n), xp.float32)
    module(backend).get_function("sgemm_float4")(((n + 15) // 16, (m + 15) // 16), (16, 16),
                                                 (xp.asarray(a), xp.asarray(b), c, m, n, k))
    np.testing.assert_allclose(cuda.asnumpy(c), 2 * (a @ b), rtol=1e-5)


@pytest.mark.parametrize("direction", [0, 1])
def test_bitonic_sort_in_shared_memory(backend, xp, direction):
    keys = np.random.default_rng(6).integers(0, 1000, 256, dtype=np.uint32)
    k = xp.asarray(keys)
    module(backend).get_function("bitonic_sort_shared")((1,), (128,), (k, direction), shared_mem=256 * 4)
    expected = np.sort(keys)
    np.testing.assert_array_equal(cuda.asnumpy(k), expected if direction else expected[::-1])


def test_row_convolution_with_constant_memory(backend, xp):
    height, width = 20, 45
    img = np.random.default_rng(7).random((height, width), dtype=np.float32)
    taps = np.random.default_rng(8).random(9, dtype=np.float32)
    mod = module(backend)
    xp.ndarray((9,), xp.float32, mod.get_global("c_kernel"))[...] = xp.asarray(taps)
    out = xp.zeros_like(xp.asarray(img))
    mod.get_function("convolution_rows")(((width + 15) // 16, (height + 7) // 8), (16, 8), (out, xp.asarray(img), width, height))
    padded = np.pad(img, ((0, 0), (4, 4)), mode="edge")
    expected = sum(taps[4 - k] * padded[:, 4 + k: 4 + k + width] for k in range(-4, 5))
    np.testing.assert_allclose(cuda.asnumpy(out), expected, rtol=1e-5)


def test_softmax_one_warp_per_row(backend, xp):
    rows, cols = 10, 100
    x = np.random.default_rng(9).standard_normal((rows, cols)).astype(np.float32) * 5
    y = xp.zeros((rows, cols), xp.float32)
    module(backend).get_function("softmax_rows")(((rows + 3) // 4,), (128,), (xp.asarray(x), y, rows, cols))
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(cuda.asnumpy(y), e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)


def test_half_dot_product(backend, xp):
    n = 3000
    rng = np.random.default_rng(10)
    a, b = rng.standard_normal(n).astype(np.float16), rng.standard_normal(n).astype(np.float16)
    result = xp.zeros(1, xp.float32)
    module(backend).get_function("half_dot")((4,), (256,), (xp.asarray(a), xp.asarray(b), result, n))
    expected = float(np.dot(a.astype(np.float64), b.astype(np.float64)))
    assert abs(float(cuda.asnumpy(result)[0]) - expected) < 1e-3 * max(1.0, abs(expected))


def test_shared_memory_helper_static_shared_and_activemask(backend, xp):
    n = 1000
    x = np.arange(n, dtype=np.int32)
    out = xp.zeros(1, xp.int32)
    mod = cuda.RawModule(code=SOURCE, backend=backend, name_expressions=["sum_with_helper<int>"],
                         options=("-DALPHA=2.0f",))
    mod.get_function("sum_with_helper<int>")((4,), (256,), (xp.asarray(x), out, n), shared_mem=256 * 4)
    assert int(cuda.asnumpy(out)[0]) == int(x.sum())


def test_cooperative_groups_thread_group_parameters_and_dynamic_tiles(backend, xp):
    x = np.arange(512, dtype=np.int32) % 7
    block_total, tile_totals = xp.zeros(2, xp.int32), xp.zeros(32, xp.int32)
    module(backend).get_function("group_sums")((2,), (256,), (xp.asarray(x), block_total, tile_totals),
                                               shared_mem=256 * 4)
    np.testing.assert_array_equal(cuda.asnumpy(block_total), x.reshape(2, 256).sum(axis=1))
    np.testing.assert_array_equal(cuda.asnumpy(tile_totals), x.reshape(32, 16).sum(axis=1))


def test_memcpy_async_batches_and_a_defaulted_parameter(backend, xp):
    x = np.arange(2 * 3 * 128, dtype=np.float32)
    out, peek = xp.zeros_like(xp.asarray(x)), xp.zeros(2, xp.float32)
    module(backend).get_function("reverse_batches")((2,), (128,), (xp.asarray(x), out, 3, peek), shared_mem=128 * 4)
    np.testing.assert_array_equal(cuda.asnumpy(out), x.reshape(6, 128)[:, ::-1].ravel())
    np.testing.assert_array_equal(cuda.asnumpy(peek), [0, 384])


def test_merge_path_where_idle_threads_form_addresses_past_the_end(backend, xp):
    rng = np.random.default_rng(3)
    a, b = np.sort(rng.integers(0, 500, 300)).astype(np.int32), np.sort(rng.integers(0, 500, 200)).astype(np.int32)
    out = xp.zeros(500, xp.int32)
    # 256 threads, 2 elements each: threads 250 to 255 have nothing to merge, and form &out[500].
    module(backend).get_function("merge_path")((2,), (128,), (xp.asarray(a), 300, xp.asarray(b), 200, out))
    np.testing.assert_array_equal(cuda.asnumpy(out), np.sort(np.concatenate([a, b])))
