"""course.cuda: a buggy kernel gives a clear error and never takes the Python process down.

Every fault test ends by launching a good kernel, which proves the process (and the compiled
module) still works after the fault.
"""

import os
import re
import time
import types
import warnings
from pathlib import Path

import numpy as np
import pytest

import course.cuda as cuda
from course import env

SOURCE = (Path(__file__).parent / "cuda_kernels" / "faults.cu").read_text()


def line_of(marker: str, source: str = SOURCE) -> int:
    """The 1-based line of `source` (faults.cu unless another is given) that carries `marker` in a comment."""
    (line,) = [i for i, text in enumerate(source.split("\n"), 1) if text.rstrip().endswith("// " + marker)
               or f"// {marker}:" in text]
    return line


def kernel(name, **kwargs):
    return cuda.RawKernel(SOURCE, name, backend="cpu", **kwargs)


def assert_alive():
    out = np.zeros(300, np.float32)
    kernel("fill")((2,), (256,), (out, 1.5, 300))
    assert (out == 1.5).all()


# ---------------------------------------------------------------------------------------
# Faults inside a running kernel (CPU backend)
# ---------------------------------------------------------------------------------------


def test_out_of_bounds_write_names_kernel_array_block_thread_and_line():
    out = np.zeros(1000, np.float32)
    with pytest.raises(cuda.KernelError) as info:
        kernel("write_past_end")((4,), (256,), (out, 1000))  # 1024 threads for 1000 elements
    message = str(info.value)
    assert "kernel 'write_past_end'" in message
    assert "out[1000]" in message and "1000 elements" in message
    assert "block (3, 0, 0), thread (232, 0, 0)" in message
    assert f"line {line_of('BUG: no bounds check')}: out[i] = 1.0f;" in message
    assert (info.value.block, info.value.thread) == ((3, 0, 0), (232, 0, 0))
    assert info.value.line == line_of("BUG: no bounds check")
    assert out.sum() == 1000  # the threads before the fault did their work
    assert_alive()


def test_out_of_bounds_read():
    x, out = np.ones(100, np.float32), np.zeros(100, np.float32)
    with pytest.raises(cuda.KernelError, match=r"in\[100\], but in has 100 elements") as info:
        kernel("read_past_end")((1,), (128,), (x, out, 100))
    assert info.value.thread == (99, 0, 0) and info.value.line == line_of("BUG: reads in[n]")
    assert_alive()



ONE_PAST_THE_END = r"""
extern "C" __global__ void guard(const float* a, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n) out[i] = 2.0f * a[i];                  // GUARD
}
extern "C" __global__ void loop(const float* a, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v[8];
    for (int j = 0; j <= 8; ++j) v[j] = j;             // LOOP
    if (i < n) out[i] = v[7];
}
extern "C" __global__ void tile(const float* a, float* out, int n) {
    __shared__ float s[32];
    if (threadIdx.x <= 32) s[threadIdx.x] = 1.0f;      // TILE
}
extern "C" __global__ void shifted(const float* a, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i + 1] = a[i];                      // SHIFTED
}
extern "C" __global__ void unrelated_clamp(const float* a, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int capped = min(i, n);
    if (i < n) out[i] = a[i + 1] + capped;
}
extern "C" __global__ void smooth_rows(const float* a, float* out, int w) {   // no x < w before the store
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    float sum = 0.0f;
    for (int j = -1; j <= 1; j++) sum += a[y * w + min(max(x + j, 0), w - 1)];
    out[y * w + x] = sum;                              // ROWS
}
extern "C" __global__ void blur(const float* a, float* out, int n) {   // rows of 10
    int x = threadIdx.x % 10, y = blockIdx.x * blockDim.x / 10 + threadIdx.x / 10;
    if (y >= n / 10) return;
    float s = 0.0f;
    for (int dx = -1; dx <= 1; ++dx) s += a[y * 10 + min(max(x + dx, 0), 10)];  // CLAMP
    out[y * 10 + x] = s;
}
"""


FFT_STAGES = r"""
#define N 256
extern "C" __global__ void fft256(const float2* in, float2* out) {
    __shared__ float2 s[N];
    int t = threadIdx.x;
    for (int i = t; i < N; i += blockDim.x) s[__brev(i) >> 24] = in[blockIdx.x * N + i];
    __syncthreads();
    for (int len = 2; len <= N; len <<= 1) {          // the last stage is the whole size: <= on purpose
        int half = len >> 1, grp = t / half, pos = t % half;
        int i0 = grp * len + pos, i1 = i0 + half;      // one butterfly a thread: N / 2 threads
        float sn, cs;
        sincospif(-2.0f * pos / len, &sn, &cs);
        float2 a = s[i0], b = s[i1];                   // BUTTERFLY
        float2 tb = make_float2(b.x * cs - b.y * sn, b.x * sn + b.y * cs);
        s[i0] = make_float2(a.x + tb.x, a.y + tb.y);
        s[i1] = make_float2(a.x - tb.x, a.y - tb.y);
        __syncthreads();
    }
    for (int i = t; i < N; i += blockDim.x) out[blockIdx.x * N + i] = s[i];
}
"""


def test_a_stage_loop_that_doubles_up_to_the_size_is_not_blamed_for_one_past_the_end():
    """An FFT written for N / 2 threads, launched with N: thread 128's butterfly lies past the array at the first
    stage. The stage loop's `len <= N` is right (its last stage is the whole size), so the hint is the guard, not
    '< instead of <='; with N / 2 threads the transform is right."""
    x = (np.random.default_rng(7).standard_normal((2, 256)) + 1j).astype(np.complex64)
    with pytest.raises(cuda.KernelError, match=r"accessed s\[256\]") as info:
        cuda.RawKernel(FFT_STAGES, "fft256", backend="cpu")((2,), (256,), (x, np.zeros_like(x)))
    assert info.value.line == line_of("BUTTERFLY", FFT_STAGES) and info.value.thread == (128, 0, 0)
    assert "compares with <=" not in str(info.value) and "Guard the access (`if (i0 < 256)`" in str(info.value)
    out = np.zeros_like(x)
    cuda.RawKernel(FFT_STAGES, "fft256", backend="cpu")((2,), (128,), (x, out))
    np.testing.assert_allclose(out, np.fft.fft(x, axis=1), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("sanitize", [False, True])
def test_one_past_the_end_behind_a_less_or_equal_names_the_comparison(sanitize):
    """The off-by-one learners write most: a guard or a loop with <= where < belongs."""
    module = cuda.RawModule(code=ONE_PAST_THE_END, backend="cpu", sanitize=sanitize)
    args = (np.ones(1000, np.float32), np.zeros(1000, np.float32), 1000)
    for name, block, message, compared in [
            ("guard", 256, r"accessed a\[1000\], but a has 1000 elements", "i <= n"),
            ("loop", 32, r"accessed v\[8\], but that dimension of the local array v has 8 elements", "j <= 8"),
            ("tile", 64, r"accessed s\[32\], but that dimension of the __shared__ array s has 32 elements",
             "threadIdx.x <= 32")]:
        with pytest.raises(cuda.KernelError, match=message) as info:
            module.get_function(name)((-(-1000 // block),), (block,), args)  # (a thread for each of the 1000)
        line = line_of(name.upper(), ONE_PAST_THE_END)
        assert info.value.line == line
        assert f"one past the last element, and line {line} compares with <= (`{compared}`)" in str(info.value)
        assert "compare with < instead" in str(info.value)
    # one past the end with no <= in sight: the guard there checks i, not the index i + 1
    with pytest.raises(cuda.KernelError, match=r"accessed out\[1000\]") as info:
        module.get_function("shifted")((4,), (256,), args)
    shifted = line_of('SHIFTED', ONE_PAST_THE_END)
    assert f"The index here is `i + 1`, and line {shifted} checks `i` (`if (i < n)`)" in str(info.value)
    assert "<=" not in str(info.value)
    # a clamp to the size (min(..., 10) for indices 0 to 9), not the stencil's `dx <= 1`
    with pytest.raises(cuda.KernelError, match=r"accessed a\[1000\]") as info:
        module.get_function("blur")((10,), (100,), args)
    assert (f"line {line_of('CLAMP', ONE_PAST_THE_END)} clamps with `min(max(x + dx, 0), 10)`, which lets the index "
            "reach 10 itself: clamp to the last valid index, 10 - 1") in str(info.value)
    # a merge's `a[mid] <= b[...]` compares two elements' values (its order), not an index with a size: it is not
    # what to change (red team 12-07)
    merge = r"""
extern "C" __global__ void merge_path(const int* a, int na, const int* b, int nb, int* c) {
    int diag = threadIdx.x;
    if (diag >= na + nb) return;
    int lo = 0, hi = min(diag, na);
    while (lo < hi) {
        int mid = (lo + hi) >> 1;
        if (a[mid] <= b[diag - 1 - mid]) lo = mid + 1; else hi = mid;
    }
    c[diag] = lo;
}"""
    with pytest.raises(cuda.KernelError, match=r"accessed b\[2\], but b has 2 elements") as info:
        cuda.RawKernel(merge, "merge_path", backend="cpu", sanitize=sanitize)(
            (1,), (8,), (np.arange(1, 7, dtype=np.int32), 6, np.array([7, 8], np.int32), 2, np.zeros(8, np.int32)))
    assert "compares with <=" not in str(info.value)
    # a loop's `j <= 1` on the line before is not what lets `y * w + x` reach the size
    with pytest.raises(cuda.KernelError, match=r"accessed out\[1000\]") as info:
        module.get_function("smooth_rows")((2, 25), (32,), (np.ones(1000, np.float32), np.zeros(1000, np.float32), 40))
    assert info.value.line == line_of("ROWS", ONE_PAST_THE_END)
    assert "<=" not in str(info.value) and "if (y < " in str(info.value)
    # a clamp of something else than the index is not blamed
    with pytest.raises(cuda.KernelError, match=r"accessed a\[1000\]") as info:
        module.get_function("unrelated_clamp")((4,), (256,), args)
    assert "clamps" not in str(info.value)

OVERFLOW = r"""
extern "C" __global__ void scatter(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int j = (i * 40503) % n;                           // PRODUCT: past 2^31 - 1 from i = 53,023
    y[j] = x[i];
}
"""


def test_a_negative_index_from_an_int_product_that_overflowed_says_so():
    x, y = np.arange(65536, dtype=np.float32), np.zeros(65536, np.float32)
    with pytest.raises(cuda.KernelError, match=r"accessed y\[-\d+\]") as info:
        cuda.RawKernel(OVERFLOW, "scatter", backend="cpu", sanitize=False)((256,), (256,), (x, y, 65536))
    # (computed for the faulting thread: the product, its line, its value, and the index its wrap gives)
    assert re.search(rf"An int product that overflowed: `i \* 40503` \(line {line_of('PRODUCT', OVERFLOW)}\) is "
                     r"[\d,]+ for this thread, past 2\^31 - 1", str(info.value)), str(info.value)
    # a small table (the index only a little below 0), and a subscripted factor
    small = OVERFLOW.replace("(i * 40503) % n", "(x[i] * 40503) % 50").replace("y[j] = x[i];", "y[j] = 1.0f;")
    x[:] = np.arange(65536)
    with pytest.raises(cuda.KernelError, match=r"accessed y\[-\d\d?\](?s:.*)an int product that overflowed\? "
                                               r"`\(x\[i\] \* 40503\)`"):
        cuda.RawKernel(small.replace("const float* x", "const int* x"), "scatter", backend="cpu", sanitize=False)(
            (256,), (256,), (np.arange(65536, dtype=np.int32), y, 65536))
    # the product the index is made of, not the guard's on the faulting line
    offset = r"""
extern "C" __global__ void rows(float* out, int rows, int cols) {
    int r = blockIdx.x, c = threadIdx.x;
    int idx = r * cols * 1024 * 1024 + c;              // INDEX
    if (idx < rows * cols) out[idx] = 1.0f;
}"""
    with pytest.raises(cuda.KernelError, match=r"accessed out\[-2147483648\]") as info:
        cuda.RawKernel(offset, "rows", backend="cpu", sanitize=False)((4,), (64,), (np.zeros(4096, np.float32), 4, 1024))
    assert f"An int product that overflowed: `r * cols * 1024 * 1024` (line {line_of('INDEX', offset)}) is " \
        "2,147,483,648 for this thread" in str(info.value)


NARROW_INDEX = r"""
extern "C" __global__ void brighten(const float* img, float* out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    short idx = y * w + x;                             // SHORT: 33,000 does not fit
    if (x < w && y < h) out[idx] = img[idx] + 1.0f;
}
extern "C" __global__ void copy(const float* x, float* y, int n) {
    unsigned char i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i];                            // CHAR: wraps onto block 0's elements
}
"""


CONV_OUT = r"""
extern "C" __global__ void conv3x3(const float* x, float* y, int H, int W, int Ho, int Wo) {
    int ox = blockIdx.x * blockDim.x + threadIdx.x, oy = blockIdx.y * blockDim.y + threadIdx.y, c = blockIdx.z;
    float acc = 0.0f;                                  // (no `if (ox >= Wo || oy >= Ho) return;`)
    for (int ky = 0; ky < 3; ++ky)
        for (int kx = 0; kx < 3; ++kx) {
            int iy = min(oy + ky, H - 1), ix = min(ox + kx, W - 1);
            acc += x[(c * H + iy) * W + ix];
        }
    y[(c * Ho + oy) * Wo + ox] = acc;                  // STORE
}
"""


@pytest.mark.parametrize("sanitize", [False, True])
def test_a_column_past_the_row_is_named_not_a_flat_guard_or_an_atomic(sanitize):
    """A conv's output grid rounded up to 8x8 blocks with no guard of ox and oy: the thread with ox = Wo lands on
    the next row's first element (two writers: the sanitized run's race) or past the end (the last row). Either
    way the hint is the column's guard, not `if (index < 144)` (which lets the row wrap) nor atomicAdd."""
    x = np.ones((4, 8, 8), np.float32)
    with pytest.raises(cuda.KernelError) as info:
        cuda.RawKernel(CONV_OUT, "conv3x3", backend="cpu", sanitize=sanitize)(
            (1, 1, 4), (8, 8), (x, cuda.xp.empty((4, 6, 6), np.float32), 8, 8, 6, 6))
    message = str(info.value)
    assert info.value.line == line_of("STORE", CONV_OUT)
    assert re.search(r"hint: The index `\(c \* Ho \+ oy\) \* Wo \+ ox` is row `c \* Ho \+ oy` and column `ox` of rows of "
                     r"`Wo` = 6, and thread \(6, \d, 0\) has ox = 6, past the row", message), message
    assert "`if (ox >= Wo) return;`" in message and "atomicAdd" not in message and "< 144" not in message
    y = np.zeros((4, 6, 6), np.float32)  # the twin: guarded
    cuda.RawKernel(CONV_OUT.replace("float acc = 0.0f;", "if (ox >= Wo || oy >= Ho) return;\n    float acc = 0.0f;"),
                   "conv3x3", backend="cpu", sanitize=sanitize)((1, 1, 4), (8, 8), (x, y, 8, 8, 6, 6))
    assert (y == 9).all()


def test_an_index_kept_in_a_short_or_a_char_says_it_wrapped():
    img = np.random.default_rng(2).random((200, 300), np.float32)
    with pytest.raises(cuda.KernelError, match=r"accessed img\[-32536\]") as info:
        cuda.RawKernel(NARROW_INDEX, "brighten", backend="cpu", sanitize=False)(
            (19, 13), (16, 16), (img, np.zeros_like(img), 300, 200))
    assert ("`idx` is a short (16 bits: -32,768 to 32,767), too narrow for this index: `y * w + x` is 33,000 for this "
            "thread, which does not fit, so it wraps round to -32,536") in str(info.value)
    assert "Declare `idx` an int" in str(info.value) and "idx >= 0" not in str(info.value)
    # the twin: an int index
    out = np.zeros_like(img)
    cuda.RawKernel(NARROW_INDEX.replace("short idx", "int idx"), "brighten", backend="cpu", sanitize=False)(
        (19, 13), (16, 16), (img, out, 300, 200))
    np.testing.assert_array_equal(out, img + 1)
    # an unsigned char index stays in bounds but wraps block 1 onto block 0: the repeated-work warning says why
    x, y = np.arange(300, dtype=np.float32), np.zeros(300, np.float32)
    with pytest.warns(cuda.KernelWarning, match=r"The index `i` is an unsigned char \(8 bits\): the blocks' indices past "
                                                r"its largest value wrap round onto the first blocks' elements"):
        cuda.RawKernel(NARROW_INDEX, "copy", backend="cpu", sanitize=True)((2,), (256,), (x, y, 300))


def test_out_of_bounds_through_a_device_function_pointer():
    x, out = np.ones(10, np.float32), np.zeros(10, np.float32)
    with pytest.raises(cuda.KernelError, match=r"accessed in\[-1\]") as info:
        kernel("read_before_start")((1,), (32,), (x, out, 10))
    assert info.value.thread == (0, 0, 0)
    assert info.value.line == line_of("BUG: x[-1] for i == 0")
    assert_alive()


FUNCTION_POINTER_TYPES = r"""
typedef void (*stage_fn)(float*, int);
using reduce_fn = float (*)(const float*, int);
__device__ void twice(float* s, int t) { s[t] *= 2.0f; }
__device__ float pair(const float* s, int t) { return s[t] + s[t + 1]; }  // BUG: t + 1 == 64 for t == 63
__device__ float apply(float (*op)(const float*, int), const float* s, int t) {
    int one = 1;
    return (*op)(s, t * one);  // a call through the pointer (not a declaration: `t * one` stays)
}
extern "C" __global__ void staged(float* out) {
    __shared__ float s[64];
    int t = threadIdx.x;
    s[t] = t;
    __syncthreads();
    stage_fn stage = twice;
    stage(s, t);
    __syncthreads();
    void (*local)(float*, int) = twice;  // a declaration in a body, and a cast
    if (t == 0) ((void (*)(float*, int))local)(s, 70 - 70);
    __syncthreads();
    reduce_fn r = pair;
    out[t] = t < 63 ? apply(r, s, t) : s[t];
}
extern "C" __global__ void pairs(const float* x, float* out) {
    reduce_fn r = pair;
    out[threadIdx.x] = apply(r, x, threadIdx.x);
}
"""


@pytest.mark.parametrize("sanitize", [False, True])
def test_function_pointer_types_with_pointer_parameters_compile_and_stay_checked(sanitize):
    # A typedef (or using, a parameter, a local declaration, a cast) naming a function pointer type
    # whose parameters are pointers: the functions' own pointer parameters are checked pointers here,
    # and so are the type's.
    out = np.zeros(64, np.float32)
    cuda.RawKernel(FUNCTION_POINTER_TYPES, "staged", backend="cpu", sanitize=sanitize)((1,), (64,), (out,))
    t = np.arange(64, dtype=np.float32)
    np.testing.assert_array_equal(out, np.where(t < 63, 2 * t + 2 * (t + 1), 2 * t))  # (s[0] is 0 twice doubled)
    with pytest.raises(cuda.KernelError, match=r"x\[64\], but x has 64 elements") as info:
        cuda.RawKernel(FUNCTION_POINTER_TYPES, "pairs", backend="cpu", sanitize=sanitize)((1,), (64,), (t, out))
    assert info.value.thread == (63, 0, 0)
    assert info.value.line == line_of("BUG", FUNCTION_POINTER_TYPES)
    assert_alive()


def test_dynamic_shared_memory_too_small():
    out = np.zeros(64, np.float32)
    with pytest.raises(cuda.KernelError, match=r"scratch\[32\] in dynamic shared memory, which holds 32") as info:
        kernel("shared_too_small")((1,), (64,), (out,), shared_mem=32 * 4)
    assert "shared_mem=128" in str(info.value)
    assert info.value.thread == (32, 0, 0) and info.value.line == line_of("BUG: shared_mem too small")
    kernel("shared_too_small")((1,), (64,), (out,), shared_mem=64 * 4)  # enough: works
    np.testing.assert_array_equal(out, np.arange(63, -1, -1, dtype=np.float32))


EXTERN_SHARED_ROWS = r"""
#define W 8
extern "C" __global__ void flip(const float* in, float* out, int h) {
    extern __shared__ float tile[][W];
    int x = threadIdx.x, y = threadIdx.y;
    tile[y][x] = in[y * W + x];
    __syncthreads();
    out[y * W + x] = tile[h - 1 - y][x];
}
"""


@pytest.mark.parametrize("sanitize", [False, True], ids=["plain", "sanitized"])
def test_extern_shared_memory_declared_as_rows_is_indexed_by_row_and_checked_to_its_last_byte(sanitize):
    """`extern __shared__ float tile[][W];` (NVRTC compiles it) did not compile here: it is rows of W floats now,
    each access checked against the launch's shared_mem bytes, a last row given in part included."""
    flip = cuda.RawKernel(EXTERN_SHARED_ROWS, "flip", backend="cpu", sanitize=sanitize)
    x, out = np.arange(32, dtype=np.float32), np.zeros(32, np.float32)
    flip((1,), (8, 4), (x, out, np.int32(4)), shared_mem=32 * 4)
    np.testing.assert_array_equal(out.reshape(4, 8), x.reshape(4, 8)[::-1])
    with pytest.raises(cuda.KernelError, match=r"tile\[31\] in dynamic shared memory, which holds 31") as info:
        flip((1,), (8, 4), (x, out, np.int32(4)), shared_mem=31 * 4)  # (tile[3][0..6] are there: no fault)
    assert info.value.thread == (7, 3, 0) and info.value.line == 6


TYPED_VIEWS_OF_DYNAMIC_SHARED = r"""
extern "C" __global__ void views(const float* x, int* out, int n) {
    extern __shared__ __align__(16) char smem[];
    float* a = (float*)smem;    // n floats
    int* b = (int*)&a[n];       // then n ints
    int t = threadIdx.x;
    a[t] = x[t];
    b[t + 1] = t;  // BUG: b[n] lies past the 8n bytes
    __syncthreads();
    out[t] = b[t] + (int)a[t];
}
"""


def test_dynamic_shared_memory_viewed_as_another_type_names_the_byte():
    # smem is char: "smem[128]" would name byte 128, not the int at byte 512 that was reached.
    kernel = cuda.RawKernel(TYPED_VIEWS_OF_DYNAMIC_SHARED, "views", backend="cpu")
    out = np.zeros(64, np.int32)
    with pytest.raises(cuda.KernelError, match=r"accessed 4-byte element 128 \(bytes 512 to 515\) of the dynamic "
                                               r"shared memory \(smem\), which holds 512 bytes") as info:
        kernel((1,), (64,), (np.ones(64, np.float32), out, 64), shared_mem=64 * 8)
    assert info.value.thread == (63, 0, 0) and info.value.line == line_of("BUG", TYPED_VIEWS_OF_DYNAMIC_SHARED)
    # With room for b[64], the sanitizer finds b[0] read but never written: bytes 256 to 259 of smem.
    with pytest.raises(cuda.KernelError, match=r"reads shared memory smem\[256\.\.259\], which no thread") as info:
        kernel((1,), (64,), (np.ones(64, np.float32), out, 64), shared_mem=64 * 8 + 4)
    assert info.value.thread == (0, 0, 0)


LARGEST_FIRST_CARVE = r"""
// Doubles first, then floats, then one int: each array aligned for its type, 1540 bytes in all.
extern "C" __global__ void carve(int* out, int doubles, int floats) {
    extern __shared__ char smem[];
    double* d = (double*)smem;
    float* f = (float*)(d + doubles);
    int* count = (int*)(f + floats);
    if (threadIdx.x == 0) *count = 7;   // COUNT
    __syncthreads();
    out[threadIdx.x] = *count;
}
extern "C" __global__ void tail(const char* x, unsigned char* out) {
    const int* words = (const int*)x;            // 10 bytes: 2 whole ints
    const char* rest = (const char*)(words + 2); // bytes 8 and 9 are x's all the same
    out[threadIdx.x] = rest[threadIdx.x];        // TAIL
}
"""


@pytest.mark.parametrize("sanitize", [False, True])
def test_a_cast_keeps_the_bytes_its_source_type_did_not_fill(sanitize):
    """(double*)smem of 1540 bytes holds 192 doubles (1536 bytes); a float* made from it still reaches the
    last 4 bytes, as on a GPU (a false 'accessed 4-byte element 384 ... which holds 1540 bytes' before)."""
    module = cuda.RawModule(code=LARGEST_FIRST_CARVE, backend="cpu", sanitize=sanitize)
    out = np.zeros(32, np.int32)
    module.get_function("carve")((1,), (32,), (out, 128, 128), shared_mem=1540)
    assert (out == 7).all()
    with pytest.raises(cuda.KernelError, match=r"element 385 \(bytes 1540 to 1543\).*holds 1540 bytes") as info:
        module.get_function("carve")((1,), (32,), (out, 128, 129), shared_mem=1540)
    assert info.value.line == line_of("COUNT", LARGEST_FIRST_CARVE)
    x, got = np.arange(10, dtype=np.uint8), np.zeros(3, np.uint8)
    module.get_function("tail")((1,), (2,), (x, got))
    assert list(got[:2]) == [8, 9]
    with pytest.raises(cuda.KernelError, match=r"accessed x\[10\], but x has 10 elements") as info:
        module.get_function("tail")((1,), (3,), (x, got))
    assert info.value.line == line_of("TAIL", LARGEST_FIRST_CARVE) and info.value.thread == (2, 0, 0)


GUIDE_DYNAMIC_SHARED = r"""
// The CUDA C Programming Guide's three arrays in one extern __shared__ buffer.
extern "C" __global__ void three_arrays(float* out, int skew) {
    extern __shared__ float array[];
    short* array0 = (short*)array;
    float* array1 = (float*)&array0[128 - skew];  // skew 1: byte 254, not a multiple of 4
    int* array2 = (int*)&array1[64];
    int t = threadIdx.x;
    if (t < 128) array0[t] = t;
    if (t < 64) array1[t] = t * 0.5f;  // BUG when skewed
    array2[t] = 2 * t;
    __syncthreads();
    out[t] = array2[255 - t] + (t < 64 ? array1[t] : 0) + (t < 128 ? array0[t] : 0);
}
"""


@pytest.mark.parametrize("sanitize", [False, True])
def test_the_programming_guides_arrays_in_dynamic_shared_memory(sanitize):
    kernel = cuda.RawKernel(GUIDE_DYNAMIC_SHARED, "three_arrays", backend="cpu", sanitize=sanitize)
    out = np.zeros(256, np.float32)
    kernel((1,), (256,), (out, 0), shared_mem=128 * 2 + 64 * 4 + 256 * 4)
    t = np.arange(256)
    np.testing.assert_array_equal(out, 2 * (255 - t) + np.where(t < 64, t * 0.5, 0) + np.where(t < 128, t, 0))
    with pytest.raises(cuda.KernelError, match=r"a 4-byte element at byte 254 of the dynamic shared memory \(array\) "
                                               r"through a cast pointer, and 254 is not a multiple") as info:
        kernel((1,), (256,), (out, 1), shared_mem=2048)
    assert info.value.line == line_of("BUG when skewed", GUIDE_DYNAMIC_SHARED)


def test_early_return_before_a_barrier_is_legal_but_its_missing_loads_are_caught():
    # sm_70+: a barrier waits for the threads that have not returned. The returned threads loaded
    # nothing, so reading their part of the tile is initcheck's report, which says why.
    x, out = np.ones(300, np.float32), np.zeros(300, np.float32)
    with pytest.raises(cuda.KernelError) as info:
        kernel("early_return_before_barrier")((2,), (256,), (x, out, 300))
    message = str(info.value)
    assert "reads shared memory tile[255], which no thread of block (1, 0, 0) has written" in message
    assert (f"212 thread(s) of this block (the first is thread (44, 0, 0)) returned at line "
            f"{line_of('BUG: these threads load nothing (others read their part of the tile)')}, before the __syncthreads() at line {line_of('BARRIER')}"
            in message) and "put the return after the barrier" in message
    assert info.value.block == (1, 0, 0)
    x = np.arange(300, dtype=np.float32)
    for sanitize in (True, False):  # the twin, whose threads read only what was loaded
        out[:] = 0
        kernel("early_return_guard", sanitize=sanitize)((2,), (256,), (x, out, 300))
        partner = np.arange(300) ^ 1
        partner[partner >= 300] = 299
        np.testing.assert_array_equal(out, 2 * x[partner])
        counts = np.zeros(2, np.int32)
        cuda.RawKernel("""extern "C" __global__ void count(const float* x, int* out, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i >= n) return;
            int c = __syncthreads_count(x[i] > 0);
            bool all = __syncthreads_and(x[i] >= 0);
            if (threadIdx.x == 0) out[blockIdx.x] = c + (all ? 1000 : 0);
        }""", "count", backend="cpu", sanitize=sanitize)((2,), (256,), (x, counts, 300))
        assert list(counts) == [1255, 1044]  # the returned threads are not counted, nor asked; x[0] is 0
    assert_alive()


def test_an_early_return_in_a_macro_is_a_return_too():
    source = r"""
#define GUARD(i, n) if ((i) >= (n)) return;
extern "C" __global__ void doubled(const float* x, float* y, int n) {
    __shared__ float s[64];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    GUARD(i, n)
    s[threadIdx.x] = x[i];
    __syncthreads();
    y[i] = s[threadIdx.x] * 2;
}"""
    x, y = np.ones(100, np.float32), np.zeros(100, np.float32)
    cuda.RawKernel(source, "doubled", backend="cpu")((2,), (64,), (x, y, 100))
    np.testing.assert_array_equal(y, 2)


@pytest.mark.parametrize("sanitize", [True, False])
def test_a_barrier_inside_an_if_that_some_threads_skip(sanitize):
    x, out = np.ones(512, np.float32), np.zeros(2, np.float32)
    with pytest.raises(cuda.KernelError) as info:
        kernel("barrier_skipped", sanitize=sanitize)((2,), (256,), (x, out))
    message, line = str(info.value), line_of("SKIPPED")
    assert (f"__syncthreads() at line {line} is not reached by every thread of the block: thread (128, 0, 0) went "
            "past it without waiting and finished the kernel, while others wait there (e.g. thread (0, 0, 0))"
            in message) and "cannot sit inside an if" in message
    assert info.value.block == (0, 0, 0) and info.value.thread == (128, 0, 0)
    assert_alive()


def test_threads_waiting_at_different_barriers():
    out = np.zeros(32, np.float32)
    with pytest.raises(cuda.KernelError, match="different __syncthreads") as info:
        kernel("barriers_in_branches")((1,), (32,), (out,))
    message = str(info.value)
    assert f"line {line_of('BARRIER-A')}" in message and f"line {line_of('BARRIER-B')}" in message
    assert_alive()



HELPER_BARRIER = r"""
__device__ float block_sum(float* s, float v) {
    s[threadIdx.x] = v;
    __syncthreads();                                              // HELPER-BARRIER
    for (int k = blockDim.x / 2; k > 0; k /= 2) {
        if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
        __syncthreads();
    }
    return s[0];
}
__device__ void guarded_sync() { if (threadIdx.x < 32) __syncthreads(); }   // OWN-IF
extern "C" __global__ void sums(const float* x, float* out, int n) {
    __shared__ float s[64];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float total = block_sum(s, x[i]);                        // CALL
        if (threadIdx.x == 0) out[blockIdx.x] = total;
    }
}
extern "C" __global__ void sums_fixed(const float* x, float* out, int n) {
    __shared__ float s[64];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float total = block_sum(s, i < n ? x[i] : 0.0f);
    if (threadIdx.x == 0) out[blockIdx.x] = total;
}
extern "C" __global__ void own_if(float* out) {
    guarded_sync();
    __syncthreads();                                              // AFTER
    out[threadIdx.x] = 1.0f;
}
"""


@pytest.mark.parametrize("sanitize", [True, False])
def test_a_barrier_in_a_helper_that_only_some_threads_call_names_the_call(sanitize):
    """The barrier is in a __device__ function; what some threads skip is its call, under `if (i < n)`: the hint
    names the function and the line that calls it. A barrier under the helper's own if keeps the general hint."""
    line = lambda marker: line_of(marker, HELPER_BARRIER)
    module = cuda.RawModule(code=HELPER_BARRIER, backend="cpu", sanitize=sanitize)
    x, out = np.ones(100, np.float32), np.zeros(2, np.float32)
    with pytest.raises(cuda.KernelError) as info:
        module.get_function("sums")((2,), (64,), (x, out, 100))
    message = str(info.value)
    assert f"__syncthreads() at line {line('HELPER-BARRIER')} is not reached by every thread" in message
    assert (f"hint: The __syncthreads() at line {line('HELPER-BARRIER')} is in block_sum(), which the kernel calls at "
            f"line {line('CALL')}: a barrier in a function counts where the function is called") in message
    module.get_function("sums_fixed")((2,), (64,), (x, out, 100))
    assert list(out) == [64, 36]
    with pytest.raises(cuda.KernelError, match="different __syncthreads") as info:
        module.get_function("own_if")((1,), (64,), (np.zeros(64, np.float32),))
    assert "block_sum" not in str(info.value) and "guarded_sync()," not in str(info.value)
    assert "must be reached by all threads of the block, or by none" in str(info.value)

LOCKS = r"""
extern "C" __global__ void keep_best(const float* x, float* best, int* lock, int early_return) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (bool done = false; !done;) {
        if (atomicCAS(lock, 0, 1) == 0) {                        // SPIN
            __threadfence();
            if (early_return && x[i] <= *best) return;           // LEAVE
            if (x[i] > *best) *best = x[i];
            __threadfence();
            atomicExch(lock, 0);                                 // RELEASE
            done = true;
        }
    }
}
extern "C" __global__ void wrong_release(int* locks, int* data, const int* v) {
    while (atomicCAS(&locks[0], 0, 1) != 0) { }                  // TAKES
    for (int j = 0; j < 8; ++j) { if (v[j] < 0) break; data[0] += v[j]; }   // (a break of its own loop)
    __threadfence();
    atomicExch(&locks[1], 0);                                    // PUTS
}
extern "C" __global__ void stale(int* counter) {
    int old = *counter;
    __syncthreads();
    while (atomicCAS(counter, old, old + 1) != old) { }          // STALE: never reloads old
}
struct Lock {
    int* m;
    __device__ void lock() { while (atomicCAS(m, 0, 1) != 0) { } }    // HELPER SPIN
    __device__ void unlock() { __threadfence(); atomicExch(m, 0); }
};
extern "C" __global__ void guarded(const float* x, float* total, int* mutex) {
    if (threadIdx.x != 0) return;
    Lock l{mutex};
    l.lock();
    if (x[blockIdx.x] < 0.0f) return;                            // HELPER LEAVE
    *total += x[blockIdx.x];
    l.unlock();                                                  // HELPER RELEASE
}
extern "C" __global__ void push(int* lock, int* count) {
    for (bool done = false; !done;) {
        if (atomicCAS(lock, 0, 1) == 0) {                        // SPIN2
            *count += 1;
            __syncwarp();                                        // WAIT
            atomicExch(lock, 0);
            done = true;
        }
    }
}
"""


# A hash table of int keys with linear probing: -1 marks an empty slot, -2 one whose key was erased.
HASH_TABLE = r"""
extern "C" __global__ void insert(int* table, const int* keys, int n, int cap) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int k = keys[i];
    unsigned h = ((unsigned)k * 2654435761u) % cap;
    while (true) {
        int prev = atomicCAS(&table[h], -1, k);
        if (prev == -1 || prev == k) return;
        h = (h + 1) % cap;
    }
}
extern "C" __global__ void erase(int* table, const int* keys, int n, int cap) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int k = keys[i];
    unsigned h = ((unsigned)k * 2654435761u) % cap;
    for (int probe = 0; probe < cap; ++probe) {
        int prev = atomicCAS(&table[h], k, -2);                            // ERASE
        if (prev == k || prev == -1) return;
        h = (h + 1) % cap;
    }
}
"""


@pytest.mark.parametrize("sanitize", [False, True])
def test_a_hash_tables_probe_that_never_ends_is_told_to_bound_it_not_that_a_lock_is_held(sanitize):
    """`while (true) { prev = atomicCAS(&table[h], -1, k); if (...) return; h = (h + 1) % cap; }` on a full table: the
    time limit's hint spoke of a lock never released (sanitized) or of the loop's condition; it names the probe."""
    keys = np.arange(10, 30, dtype=np.int32)  # 20 keys for 16 slots
    with pytest.raises(cuda.KernelError, match=r"time limit(?s:.*)hint: Threads spin at line 8 in a loop that tries one "
                                               r"element after another with atomicCAS \(`h` moves on"):
        cuda.RawKernel(HASH_TABLE, "insert", backend="cpu", time_limit=0.3, sanitize=sanitize)(
            (1,), (32,), (np.full(16, -1, np.int32), keys, 20, 16))


def test_a_probe_that_is_never_wrapped_and_offsets_from_an_inclusive_scan_get_their_hints():
    """Two out-of-bounds writes of irregular kernels (red team 12-07): a hash table's probe that moves on with `h = h + 1`
    and never wraps runs off the last slot (the hint said `if (h < 16)`); a counting sort's scatter through offsets from
    an inclusive scan writes one past the end (the hint said to guard the access)."""
    key = next(k for k in range(100) if k * 2654435761 % 2 ** 32 % 16 == 15)  # (its slot is the last one)
    table = np.full(16, -1, np.int32)
    table[15] = 1000
    unwrapped = HASH_TABLE.replace("h = (h + 1) % cap;", "h = h + 1;", 1)
    with pytest.raises(cuda.KernelError, match=r"accessed table\[16\]") as info:
        cuda.RawKernel(unwrapped, "insert", backend="cpu")((1,), (1,), (table, np.array([key], np.int32), 1, 16))
    assert "hint: `h` moves on by hand at line 10 (`h = h + 1`) and is never taken back to the start of table" in \
           str(info.value) and "`h = (h + 1) % capacity`" in str(info.value)
    scatter = r"""
extern "C" __global__ void scatter(const int* bin, const int* off, int* fill, int* sorted, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int b = bin[i];
        int slot = off[b] + atomicAdd(&fill[b], 1);
        sorted[slot] = i;
    }
}
"""
    bins = np.array([0, 1, 1, 2, 0, 2, 2, 1], np.int32)
    counts = np.bincount(bins)
    with pytest.raises(cuda.KernelError, match=r"accessed sorted\[8\]") as info:
        cuda.RawKernel(scatter, "scatter", backend="cpu")(
            (1,), (8,), (bins, np.cumsum(counts).astype(np.int32), np.zeros(3, np.int32), np.zeros(8, np.int32), 8))
    assert ("`slot` is made from `off` (line 6), and here it is 8, one past the end of sorted: if off is an inclusive "
            "prefix sum") in str(info.value)
    placed = np.zeros(8, np.int32)
    exclusive = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int32)
    cuda.RawKernel(scatter, "scatter", backend="cpu")((1,), (8,), (bins, exclusive, np.zeros(3, np.int32), placed, 8))
    assert sorted(bins[placed].tolist()) == bins[placed].tolist()  # (the twin: grouped by bin)


def test_a_lock_held_for_ever_names_the_way_out_or_the_wait_inside_it():
    """A time limit met at an atomicCAS spin: the hint reads the locked region for a return (or break)
    before the release, and for a barrier or warp-level call that the spinning threads never reach."""
    x, best, lock = np.random.default_rng(1).random(32).astype(np.float32), np.full(1, -1, np.float32), np.zeros(1, np.int32)
    with pytest.warns(cuda.KernelWarning, match=r"never refreshes `old`(?s:.*)if \(seen == old\) break; old = seen;"):
        cuda.RawKernel(LOCKS, "keep_best", backend="cpu", time_limit=5)((1,), (32,), (x, best, lock, 0))  # (compiles)
    assert best[0] == x.max()
    best[:], lock[:] = -1, 0
    with pytest.raises(cuda.KernelError, match=rf"time limit(?s:.*)hint: Threads spin at line {line_of('SPIN', LOCKS)} "
                                               rf"for a lock that its holder never releases: line {line_of('LEAVE', LOCKS)} "
                                               rf"leaves the locked region without releasing the lock \(line "
                                               rf"{line_of('RELEASE', LOCKS)} releases it\)"):
        cuda.RawKernel(LOCKS, "keep_best", backend="cpu", time_limit=0.3, sanitize=False)((1,), (32,), (x, best, lock, 1))
    lock[:] = 0
    with pytest.raises(cuda.KernelError, match=rf"time limit(?s:.*)line {line_of('WAIT', LOCKS)} waits for other threads "
                                               rf"while holding the lock, but they spin at line {line_of('SPIN2', LOCKS)}"):
        cuda.RawKernel(LOCKS, "push", backend="cpu", time_limit=0.3, sanitize=False)((1,), (32,), (lock, np.zeros(1, np.int32)))
    locks = np.zeros(2, np.int32)
    with pytest.raises(cuda.KernelError, match=rf"line {line_of('PUTS', LOCKS)} puts back `&locks\[1\]`, but line "
                                               rf"{line_of('TAKES', LOCKS)} took `&locks\[0\]`") as info:
        cuda.RawKernel(LOCKS, "wrong_release", backend="cpu", time_limit=0.3, sanitize=False)(
            (1,), (2,), (locks, np.zeros(1, np.int32), np.array([1, 2, -1, 3, 4, 5, 6, 7], np.int32)))
    assert "leaves the locked region" not in str(info.value)  # (the break leaves only its own loop)
    # a lock taken and released by helpers (`l.lock()`, `l.unlock()`): the region lies between their calls
    with pytest.raises(cuda.KernelError, match=rf"spin at line {line_of('HELPER SPIN', LOCKS)} for a lock that its "
                                               rf"holder never releases: line {line_of('HELPER LEAVE', LOCKS)} leaves the "
                                               rf"locked region without releasing the lock \(line "
                                               rf"{line_of('HELPER RELEASE', LOCKS)} releases it\)"):
        cuda.RawKernel(LOCKS, "guarded", backend="cpu", time_limit=0.3, sanitize=False)(
            (4,), (32,), (np.array([1, -1, 2, 3], np.float32), np.zeros(1, np.float32), np.zeros(1, np.int32)))
    with pytest.raises(cuda.KernelError, match=rf"spin at line {line_of('STALE', LOCKS)} in an atomicCAS loop that "
                                               r"compares with `old`"):
        cuda.RawKernel(LOCKS, "stale", backend="cpu", time_limit=0.3)((1,), (2,), (np.zeros(1, np.int32),))
    assert_alive()


@pytest.mark.parametrize("name", ["spin_forever", "spin_forever_at_barrier"])
def test_endless_loop_stops_at_the_time_limit(name):
    flag = np.zeros(2, np.int32)
    spinning = kernel(name, time_limit=0.3)
    spinning.compile()  # (outside the timing)
    started = time.perf_counter()
    with pytest.raises(cuda.KernelError, match=r"time limit of 0\.3 s") as info:
        spinning((1,), (32,), (flag,))
    assert time.perf_counter() - started < 3  # not the 5 s default of the launch before
    loop = line_of("BUG: nobody sets the flag" if name == "spin_forever" else "BUG: endless")
    assert info.value.line in (loop, loop + 1)  # the loop's header or its body
    # kernel() is backend="cpu", whose launches run the race checker: the hint says what that costs
    assert "race checker on" in str(info.value) and "sanitize=False" in str(info.value)
    with pytest.raises(cuda.KernelError, match=r"time limit of 0\.3 s") as info:
        kernel(name, time_limit=0.3, sanitize=False)((1,), (32,), (flag,))
    assert "race checker" not in str(info.value)
    assert_alive()


def test_interrupt_button_stops_a_running_kernel(stopped_by_ctrl_c):
    """Jupyter's interrupt sends SIGINT: the kernel stops and Python sees KeyboardInterrupt."""
    flag = np.zeros(2, np.int32)
    stopped_by_ctrl_c(lambda: kernel("spin_forever", time_limit=20)((1,), (1,), (flag,)))
    assert_alive()


def test_integer_division_by_zero():
    a = np.arange(8, dtype=np.int32)
    b = np.array([1, 2, 3, 0, 1, 1, 1, 1], dtype=np.int32)
    with pytest.raises(cuda.KernelError, match="division by zero") as info:
        kernel("divide")((1,), (8,), (a, b, np.zeros(8, np.int32), 8))
    assert info.value.thread == (3, 0, 0) and info.value.line == line_of("BUG: b[i] may be 0")
    assert "A GPU does not stop there" in str(info.value) and "if (d != 0)" in str(info.value)
    assert_alive()


SHIFTS = r"""
template <typename T> __device__ T rotate_left(T x, int r) { return (x << r) | (x >> (8 * sizeof(T) - r)); }

extern "C" __global__ void masks(const int* bits, unsigned* mask, unsigned long long* wide, int* sign, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    wide[i] = (1ull << bits[i]) - 1;    // fine up to 63
    mask[i] = (1u << bits[i]) - 1;      // MASK: 1u << 32 is undefined
    sign[i] = -5 >> (bits[i] & 31);     // fine
}

extern "C" __global__ void rotate(const int* r, unsigned* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = rotate_left(0x12345678u, r[i]);  // ROTATE: r = 0 shifts by 32
}
"""


@pytest.mark.parametrize("sanitize", [False, True])
def test_a_shift_by_the_width_or_more_is_reported(sanitize):
    """x << 32 for a 32-bit x is undefined: a GPU gives 0, a CPU gives x. Counts below the width
    (and 64-bit shifts by up to 63) run; 32 stops the kernel with the line, in a helper too."""
    module = cuda.RawModule(code=SHIFTS, backend="cpu", sanitize=sanitize)
    masks, rotate = module.get_function("masks"), module.get_function("rotate")
    bits = np.array([0, 1, 5, 31, 3, 30, 17, 2], np.int32)
    mask, wide, sign = np.zeros(8, np.uint32), np.zeros(8, np.uint64), np.zeros(8, np.int32)
    masks((1,), (8,), (bits, mask, wide, sign, np.int32(8)))
    assert (mask == (1 << bits.astype(np.int64)) - 1).all() and (sign == -5 >> bits).all()
    bits[6] = 32
    with pytest.raises(cuda.KernelError, match=r"shifted the 32-bit unsigned int 1 by 32 bits, but a 32-bit value can "
                                               r"only be shifted by 0 to 31") as info:
        masks((1,), (8,), (bits, mask, wide, sign, np.int32(8)))
    assert info.value.thread == (6, 0, 0) and info.value.line == SHIFTS[:SHIFTS.index("MASK:")].count("\n") + 1
    assert "1ull << n" in str(info.value)
    out = np.zeros(4, np.uint32)
    rotate((1,), (4,), (np.array([4, 8, 12, 16], np.int32), out, np.int32(4)))
    assert out[0] == 0x23456781
    with pytest.raises(cuda.KernelError, match=r"shifted the 32-bit unsigned int 305419896 by 32 bits") as info:
        rotate((1,), (4,), (np.array([4, 0, 12, 16], np.int32), out, np.int32(4)))
    assert info.value.thread == (1, 0, 0) and "__funnelshift_l" in str(info.value)
    assert "called at line" in str(info.value)
    assert_alive()


CONVERSIONS = r"""
extern "C" __global__ void to_bytes(const float* v, unsigned char* out, int* scaled, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[i] = (unsigned char)v[i];                     // BYTE: 300.0f does not fit
    scaled[i] = v[i] * 1e7f;                          // an implicit conversion is one too
}
extern "C" __global__ void to_bytes_clamped(const float* v, unsigned char* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = (unsigned char)fminf(fmaxf(v[i], 0.0f), 255.0f);
}
"""


@pytest.mark.parametrize("sanitize", [False, True])
def test_a_float_converted_to_an_integer_type_it_does_not_fit_is_reported(sanitize):
    """(unsigned char)300.0f is undefined: a GPU saturates (255), a CPU wraps (44). In range (also
    -0.9f, which truncates to 0) runs; 300, -1, NaN and an int overflow stop with the values."""
    module = cuda.RawModule(code=CONVERSIONS, backend="cpu", sanitize=sanitize)
    to_bytes, clamped = module.get_function("to_bytes"), module.get_function("to_bytes_clamped")
    v = np.array([0, 12.7, 199.9, -0.9], np.float32)
    out, scaled = np.zeros(4, np.uint8), np.zeros(4, np.int32)
    to_bytes((1,), (4,), (v, out, scaled, np.int32(4)))
    assert list(out) == [0, 12, 199, 0]
    cases = [(300, r"converted the float 300 to unsigned char, which holds only 0 to 255", "fmaxf(v, 0.0f)"),
             (-1, r"converted the float -1 to unsigned char", "GPU saturates"),
             (np.nan, r"converted the float NaN to unsigned char", "isnan"),
             (250, r"converted the float 2\.5e\+09 to int, which holds only -2,147,483,648 to 2,147,483,647",
              "__float2int_rz(v)")]
    for value, message, hint in cases:
        v[2] = value
        with pytest.raises(cuda.KernelError, match=message) as info:
            to_bytes((1,), (4,), (v, out, scaled, np.int32(4)))
        assert info.value.thread == (2, 0, 0) and hint in str(info.value)
        assert info.value.line == line_of("BYTE: 300.0f does not fit", CONVERSIONS) + (value == 250)
    v[:] = [300, -5, np.nan, 17.5]
    clamped((1,), (4,), (v, out, np.int32(4)))  # the twin: clamped first (fmaxf/fminf drop the NaN)
    assert list(out) == [255, 0, 0, 17]
    assert_alive()


HELPERS = r"""
__device__ float get(const float* a, int i) { return a[i]; }                  // GET
__device__ float sum3(const float* a, int i) { return get(a, i - 1) + get(a, i) + get(a, i + 1); }
__device__ float deref(const float* p) { return *p; }                         // DEREF
extern "C" __global__ void blur(const float* a, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = sum3(a, i);                                             // CALL
}
extern "C" __global__ void follow(const float* a, float* out, long long bad) {
    int i = threadIdx.x;
    out[i] = deref(i == 3 ? (const float*)bad : a + i);                         // FOLLOW
}
"""


@pytest.mark.parametrize("sanitize", [False, True])
def test_a_fault_inside_helpers_names_the_kernel_line_that_called_them(sanitize):
    """A sanitized build (-O1) inlines little, so a fault lies in a helper's own code: the frames
    that called it (kept by frame pointers) still lead to the kernel's line, as inlining does."""
    module = cuda.RawModule(code=HELPERS, backend="cpu", sanitize=sanitize)
    a, out = np.ones(8, np.float32), np.zeros(8, np.float32)
    with pytest.raises(cuda.KernelError, match=r"accessed a\[-1\]") as info:
        module.get_function("blur")((1,), (8,), (a, out, np.int32(8)))
    assert info.value.line == line_of("GET", HELPERS)
    assert f"(in a function called at line {line_of('CALL', HELPERS)})" in str(info.value)
    with pytest.raises(cuda.KernelError, match="null pointer") as info:
        module.get_function("follow")((1,), (8,), (a, out, np.int64(16)))
    assert info.value.line == line_of("DEREF", HELPERS) and info.value.thread == (3, 0, 0)
    assert f"(in a function called at line {line_of('FOLLOW', HELPERS)})" in str(info.value)
    assert_alive()


UNSET_POINTER = r"""
__device__ void put(float* q, float v) {
    q[1] = v;                                      // PUT
}
extern "C" __global__ void store(float* out) {
    float* p;
    if (threadIdx.x == 3) p[0] = 1.0f;             // STORE
    out[threadIdx.x] = 1.0f;
}
extern "C" __global__ void helper(float* out) {
    float* p;
    if (threadIdx.x == 2) put(p, 1.0f);            // HELPER
    out[threadIdx.x] = 1.0f;
}
"""


@pytest.mark.parametrize("sanitize", [False, True])
def test_a_store_through_a_pointer_never_set_is_a_null_pointer_crash(sanitize):
    """`float* p; p[0] = v;`: the compiler knows p is null and may delete the store (a sanitized build
    did, and the kernel ran on silently); the store is reported where it is, by the thread that made it."""
    module = cuda.RawModule(code=UNSET_POINTER, backend="cpu", sanitize=sanitize)
    with pytest.raises(cuda.KernelError, match="null pointer") as info:
        module.get_function("store")((1,), (4,), (np.zeros(4, np.float32),))
    assert info.value.line == line_of("STORE", UNSET_POINTER) and info.value.thread == (3, 0, 0)
    with pytest.raises(cuda.KernelError, match=r"null pointer(?s:.*)address 0x4") as info:
        module.get_function("helper")((1,), (4,), (np.zeros(4, np.float32),))
    assert info.value.line == line_of("PUT", UNSET_POINTER) and info.value.thread == (2, 0, 0)
    assert f"(in a function called at line {line_of('HELPER', UNSET_POINTER)})" in str(info.value)
    assert_alive()


def test_wild_pointer_crash():
    with pytest.raises(cuda.KernelError, match="invalid memory access at address 0x10") as info:
        kernel("wild_pointer")((1,), (4,), (16, np.zeros(4, np.float32)))
    assert info.value.line == line_of("BUG: reads memory it does not own")
    assert "null pointer" in str(info.value) and "if (p != nullptr)" in str(info.value)
    assert_alive()


@pytest.mark.parametrize("sanitize", [False, True])
def test_a_pointer_made_from_an_integer_one_past_an_arrays_end_is_that_arrays(sanitize):
    # (uintptr_t)a + 4 * (i + 1): the last thread's pointer is a's end, the out-of-bounds read of a[32]
    # (the memory after a NumPy array is no other array's: compute-sanitizer names the nearest one too)
    source = r"""
#include <cstdint>
extern "C" __global__ void next(const float* a, float* y) {
    const float* p = (const float*)((uintptr_t)a + 4 * (threadIdx.x + 1));
    y[threadIdx.x] = *p;
}
"""
    a, y = np.arange(32, dtype=np.float32), np.zeros(32, np.float32)
    with pytest.raises(cuda.KernelError, match=r"accessed a\[32\], but a has 32 elements") as info:
        cuda.RawKernel(source, "next", backend="cpu", sanitize=sanitize)((1,), (32,), (a, y))
    assert info.value.thread == (31, 0, 0)
    cuda.RawKernel(source, "next", backend="cpu", sanitize=sanitize)((1,), (31,), (a, y))  # the twin
    np.testing.assert_array_equal(y[:31], a[1:])


@pytest.mark.parametrize("sanitize", [False, True])
def test_a_pointer_made_from_an_integer_further_past_an_arrays_end_is_that_arrays(sanitize):
    # (uintptr_t)y + 4 * (i + skip): an address in no array, a few elements past y's end, where a store went into
    # the memory after the NumPy array (the allocator's records: Python aborted later, "double free or corruption")
    source = r"""
#include <cstdint>
extern "C" __global__ void skip(float* y, int skip) {
    float* p = (float*)((uintptr_t)y + 4 * (threadIdx.x + skip));
    *p = 1.0f;
}
"""
    y = np.zeros(32, np.float32)
    kernel = cuda.RawKernel(source, "skip", backend="cpu", sanitize=sanitize)
    with pytest.raises(cuda.KernelError, match=r"accessed y\[40\], but y has 32 elements") as info:
        kernel((1,), (8,), (y, 40))
    assert info.value.thread == (0, 0, 0)
    kernel((1,), (8,), (y, 24))  # the twin: y[24] to y[31]
    assert list(y) == [0.0] * 24 + [1.0] * 8
    assert_alive()


RETURNED_POINTERS = r"""
struct P { float x, y; };
__device__ const float* row_of(const float* m, int r, int n) { return m + r * n; }
template <class T> __device__ const T* pick(const T* items, int k) { if (k < 0) return nullptr; return items + k; }
__device__ float* scratch() { __shared__ float s[32]; return s; }
extern "C" __global__ void rows(const float* m, float* out, int n, int r) {
    out[threadIdx.x] = row_of(m, r, n)[threadIdx.x];
}
extern "C" __global__ void points(const P* ps, float* out, int k) {
    out[threadIdx.x] = pick(ps, (int)threadIdx.x + k)->y + *pick(&ps[0].x, 0) * 0.0f;
}
__device__ int* counter() { __shared__ int c; return &c; }
extern "C" __global__ void tally(int* out, int atomic) {
    if (threadIdx.x == 0) *counter() = 0;
    __syncthreads();
    if (atomic) atomicAdd(counter(), 1);
    else *counter() += 1;
    __syncthreads();
    if (threadIdx.x == 0) out[0] = *counter();
}
struct Buf { float v[8]; float w; __device__ float* data() { return v; } __device__ const float* cdata() const { return v; } };
extern "C" __global__ void members(float* out, int at) {
    Buf b;
    b.w = 0.0f;
    for (int j = 0; j < 8; j++) b.data()[j] = j;
    b.data()[at] = 1.0f;                                                 // MEMBER
    out[threadIdx.x] = b.cdata()[threadIdx.x % 8] + b.w;
}
namespace util { __device__ float* at(float* m, int k); }
__device__ float* util::at(float* m, int k) { return m + k; }
__device__ const float** slot(const float** table, int k) { return table + k; }
extern "C" __global__ void qualified(const float* a, float* out) {
    const float* table[2] = {a, a + 4};
    *util::at(out, threadIdx.x) = (*slot(table, 1))[threadIdx.x] + *pick<float>(a, 0) * 0.0f;
}
extern "C" __global__ void staged(const float* in, float* out, int shift) {
    scratch()[threadIdx.x + shift] = in[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = scratch()[31 - threadIdx.x];
}
"""


@pytest.mark.parametrize("sanitize", [False, True])
def test_a_pointer_a_device_function_returns_keeps_its_arrays_bounds(sanitize):
    # `row_of(m, r, n)[j]`: the function's raw pointer lost m's bounds, and an address two or more past
    # m's end is no array's: row 2 of a 2-row matrix, the 9th point of 4, were read silently
    module = cuda.RawModule(code=RETURNED_POINTERS, backend="cpu", sanitize=sanitize, name_expressions=[])
    m, out = np.arange(16, dtype=np.float32), np.zeros(8, np.float32)
    module.get_function("rows")((1,), (8,), (m, out, 8, 1))  # the twin: the last row
    np.testing.assert_array_equal(out, m[8:])
    with pytest.raises(cuda.KernelError, match=r"accessed m\[16\], but m has 16 elements"):
        module.get_function("rows")((1,), (8,), (m, out, 8, 2))
    points = np.arange(8, dtype=np.float32)  # 4 points (x, y)
    module.get_function("points")((1,), (2,), (points, out, 2))
    np.testing.assert_array_equal(out[:2], [5, 7])
    with pytest.raises(cuda.KernelError, match=r"element 8 of ps .*\(valid indices 0 to 3\)") as info:
        module.get_function("points")((1,), (2,), (points, out, 8))
    assert info.value.thread == (0, 0, 0)
    module.get_function("staged")((1,), (32,), (np.arange(32, dtype=np.float32), out := np.zeros(32, np.float32), 0))
    np.testing.assert_array_equal(out, np.arange(32)[::-1])
    with pytest.raises(cuda.KernelError, match=r"s\[32\]"):  # the __shared__ array the function returned
        module.get_function("staged")((1,), (32,), (np.arange(32, dtype=np.float32), out, 1))
    # a method that returns its member array (`return v;`): a checked pointer with the member's extent
    out = np.zeros(8, np.float32)
    module.get_function("members")((1,), (8,), (out, 3))
    np.testing.assert_array_equal(out, [0, 1, 2, 1, 4, 5, 6, 7])
    with pytest.raises(cuda.KernelError, match=r"accessed element 8 through a pointer made from") as info:
        module.get_function("members")((1,), (8,), (out, 8))  # b.w, silently, before
    assert info.value.line == line_of("MEMBER", RETURNED_POINTERS)
    # `*ns::f(p)`, `*f<float>(p)` and a function that returns a `T**` (a pointer to the checked pointers of a local
    # table): they compile (`*ns` and `*f` were each taken for the access)
    a = np.arange(8, dtype=np.float32)
    module.get_function("qualified")((1,), (4,), (a, out))
    np.testing.assert_array_equal(out[:4], a[4:])
    with pytest.raises(cuda.KernelError, match=r"accessed a\[8\], but a has 8 elements"):
        module.get_function("qualified")((1,), (5,), (a, out))
    # `*counter() = 0` is a store the sanitizer sees (the atomics after it read a value, not garbage), and
    # `*counter() += 1` in every thread is a race on the __shared__ int the function returns
    total = np.zeros(1, np.int32)
    module.get_function("tally")((1,), (64,), (total, 1))
    assert total[0] == 64
    if sanitize:
        with pytest.raises(cuda.KernelError, match=r"shared memory c\b|\bc\b.*thread"):
            module.get_function("tally")((1,), (64,), (total, 0))


@pytest.mark.parametrize("sanitize", [False, True])
@pytest.mark.parametrize("name", ["recurse_forever", "recurse_forever_in_block"])
def test_endless_recursion_overflows_the_stack(name, sanitize):
    with pytest.raises(cuda.KernelError, match="stack") as info:
        kernel(name, sanitize=sanitize)((1,), (2,), (np.zeros(2, np.int32),))
    assert info.value.thread == (0, 0, 0)
    # the recursive function's lines (with the sanitizer, the overflow may come inside its checks)
    assert line_of("BUG: never stops") - 4 <= info.value.line <= line_of("BUG: never stops") + 1
    assert_alive()


def test_a_recursion_that_gcc_made_a_loop_meets_the_time_limit_with_a_recursion_hint():
    # `fact(-1)` never reaches n == 0; GCC turns the call into a loop, so no stack runs out: the time limit
    # stops it, and its hint names the recursion before the loops
    source = r"""
__device__ int fact(int n) { return n == 0 ? 1 : n * fact(n - 1); }
extern "C" __global__ void k(int* out, int n) { out[threadIdx.x] = fact(n); }"""
    kernel = cuda.RawKernel(source, "k", backend="cpu", sanitize=False, time_limit=1)
    out = np.zeros(1, np.int32)
    kernel((1,), (1,), (out, 5))
    assert out[0] == 120
    with pytest.raises(cuda.KernelError, match=r"(?s)time limit.*An endless recursion\? fact\(\) calls itself \(line 2\)"):
        kernel((1,), (1,), (out, -1))
    assert_alive()


@pytest.mark.parametrize("sanitize", [False, True])
def test_a_device_pointer_kept_into_an_array_python_has_freed_is_reported_at_its_use(sanitize):
    # init keeps its argument's address in a __device__ pointer; a later launch uses it. While the array
    # lives (held by a variable, or the array a view of it came from), that is fine, as on a GPU; once
    # Python has freed it, the access is reported (it wrote into freed memory, and could crash Python)
    import gc

    source = r"""
__device__ float* g_buf;
__device__ int g_n;
extern "C" __global__ void init(float* buf, int n) { g_buf = buf; g_n = n; }
extern "C" __global__ void fill(float v) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < g_n) g_buf[i] = v;  // FILL
}
extern "C" __global__ void other(float* x) { x[threadIdx.x] = 1.0f; }
"""
    module = cuda.RawModule(code=source, backend="cpu", sanitize=sanitize)
    init, fill, other = (module.get_function(name) for name in ("init", "fill", "other"))
    kept = np.zeros(1 << 12, np.float32)
    init((1,), (1,), (kept, kept.size))
    fill((16,), (256,), (np.float32(2),))
    assert (kept == 2).all()
    whole = np.zeros(1 << 12, np.float32)
    init((1,), (1,), (whole[256:], whole.size - 256))  # a view: the array it came from holds the memory
    gc.collect()
    fill((16,), (256,), (np.float32(3),))
    assert (whole[256:] == 3).all() and (whole[:256] == 0).all()
    other((1,), (4,), (np.zeros(4, np.float32),))  # a launch that does not use g_buf: nothing to say
    init((1,), (1,), (np.zeros(1 << 16, np.float32), 1 << 16))  # a temporary: freed after the launch
    gc.collect()
    other((1,), (4,), (np.zeros(4, np.float32),))
    with pytest.raises(cuda.KernelError, match=r"accessed g_buf\[0\], but the __device__ pointer g_buf still points "
                                               r"into the array that an earlier launch of 'init' was given as buf, "
                                               r"which Python has freed since") as info:
        fill((256,), (256,), (np.float32(4),))
    assert info.value.line == line_of("FILL", source) and "keep the array alive" in str(info.value)
    assert_alive()


def test_pointers_kept_in_dynamic_shared_memory_sized_for_a_gpu_get_the_pointer_size_hint():
    source = r"""
extern "C" __global__ void rows(float* a, float* o) {
    extern __shared__ char smem[];
    float** starts = (float**)smem;
    int t = threadIdx.x;
    if (t < 8) starts[t] = a + 8 * t;
    __syncthreads();
    o[t] = starts[t / 8][t % 8];
}"""
    kernel = cuda.RawKernel(source, "rows", backend="cpu")
    a, o = np.arange(64, dtype=np.float32), np.zeros(64, np.float32)
    with pytest.raises(cuda.KernelError, match=r"accessed 32-byte element 2 .* which holds 64 bytes") as info:
        kernel((1,), (64,), (a, o), shared_mem=8 * 8)  # 8 pointers of a GPU's 8 bytes
    assert "`starts` holds pointers, and a pointer takes 32 bytes on the CPU backend" in str(info.value)
    kernel((1,), (64,), (a, o), shared_mem=8 * 32)
    np.testing.assert_array_equal(o, a)


def test_an_index_read_from_memory_and_a_neighbours_offset_are_the_subscripts_the_hints_guard():
    source = r"""
struct Node { float v; int next; };
extern "C" __global__ void linked(float* o) {
    __shared__ Node nodes[8];
    int t = threadIdx.x;
    nodes[t].v = t; nodes[t].next = t + 1;
    __syncthreads();
    o[t] = nodes[nodes[t].next].v;
}
__device__ void warp_reduce(volatile float* s, int t) {
    s[t] += s[t + 32]; s[t] += s[t + 16]; s[t] += s[t + 8];
}
extern "C" __global__ void tail(const float* a, float* o, int n) {
    __shared__ float s[32];
    int t = threadIdx.x;
    s[t] = a[t];
    __syncthreads();
    if (t < 32) warp_reduce(s, t);
    if (t == 0) o[0] = s[0];
}"""
    module = cuda.RawModule(code=source, backend="cpu")
    a, o = np.arange(64, dtype=np.float32), np.zeros(64, np.float32)
    with pytest.raises(cuda.KernelError, match=r"accessed nodes\[8\]") as info:
        module.get_function("linked")((1,), (8,), (o,))
    assert "`if (nodes[t].next < 8)`" in str(info.value)  # (not `t < 8`: t stays below 8)
    with pytest.raises(cuda.KernelError, match=r"accessed s\[32\]") as info:
        module.get_function("tail")((1,), (32,), (a, o, 64))
    assert "`if (t + 32 < n)`" in str(info.value) or "`if (t+32 < n)`" in str(info.value)


HINTED = r"""
extern "C" __global__ void offset(float* x, int n) { int i = threadIdx.x; x[i + n] = 1.0f; }
extern "C" __global__ void either(const float* in, float* out, int n) {
    int i = threadIdx.x;
    out[i] = (i % 2 == 0) ? in[i / 2] : in[i * 2];
}
extern "C" __global__ void histogram(const int* data, int* bins, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { int b = data[i]; bins[b] = bins[b] + 1; }
}
extern "C" __global__ void blur(const float* img, float* out, int w, int h) {
    int x = threadIdx.x, y = threadIdx.y;
    float s = 0.0f;
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++) s += img[(y + dy) * w + (x + dx)];
    out[y * w + x] = s / 9.0f;
}
extern "C" __global__ void show(long long n) { printf("n=%d\\n", n); }
"""


def test_hints_name_the_subscript_that_faulted_and_a_fix_that_works():
    # (found by an audit of the hints: each fix here, applied, makes the kernel right)
    module = cuda.RawModule(code=HINTED, backend="cpu", sanitize=True)
    f32 = lambda n: np.zeros(n, np.float32)  # noqa: E731
    with pytest.raises(cuda.KernelError, match=r"accessed x\[8\]") as info:
        module.get_function("offset")((1,), (4,), (f32(8), 5))
    assert "`if (i + n < 8)`" in str(info.value)  # (not `i + n < n`: n is the offset here, 5)
    with pytest.raises(cuda.KernelError, match=r"accessed in\[10\]") as info:
        module.get_function("either")((1,), (8,), (f32(8), f32(8), 8))
    assert "`if (i * 2 < n)`" in str(info.value)  # (the branch that ran, not in[i / 2])
    with pytest.raises(cuda.KernelError) as info:
        module.get_function("histogram")((1,), (64,), (np.arange(64, dtype=np.int32) % 4, np.zeros(4, np.int32), 64))
    assert "atomicAdd(&bins[b], 1)" in str(info.value)  # (as the code spells it, not the element met, bins[0])
    with pytest.raises(cuda.KernelError, match=r"below the first element") as info:
        module.get_function("blur")((1,), (4, 4), (f32(16), f32(16), 4, 4))
    assert "Guard each coordinate, `if (x + dx >= 0 && x + dx < w && y + dy >= 0" in str(info.value)
    with pytest.raises(cuda.KernelError) as info:
        module.get_function("show")((1,), (1,), (np.int64(5),))
    assert "convert the value: (int)n (a long long given to %d)" in str(info.value)
    # an index that int arithmetic wrapped: where, by how much, and the 64-bit fix (not the border-neighbour hint)
    wrapped = r"""
extern "C" __global__ void big(float* x, int w) {
    int row = blockIdx.x, col = threadIdx.x;
    int idx = row * w * w + col;
    x[idx % 16] = 1.0f;
}"""
    with pytest.raises(cuda.KernelError, match=r"accessed x\[-15\]") as info:
        cuda.RawKernel(wrapped, "big", backend="cpu")((2,), (4,), (f32(16), 50000))
    message = str(info.value)
    assert "`row * w * w` (line 4) is 2,500,000,000 for this thread, past 2^31 - 1" in message
    assert "cast `(long long)row`" in message and "neighbour" not in message
    fixed = wrapped.replace("int idx = row * w * w + col;", "long long idx = (long long)row * w * w + col;")
    out = f32(16)
    cuda.RawKernel(fixed, "big", backend="cpu")((2,), (4,), (out, 50000))
    assert out[:4].tolist() == [1, 1, 1, 1]


def test_failed_assert():
    x = np.array([3, 1, -4, 1], dtype=np.int32)
    with pytest.raises(cuda.KernelError, match=r"failed assert\(x\[i\] >= 0\)") as info:
        kernel("checks_its_input")((1,), (4,), (x, 4))
    assert info.value.thread == (2, 0, 0) and info.value.line == line_of("ASSERT")
    kernel("checks_its_input")((1,), (4,), (np.abs(x), 4))  # passes
    assert_alive()


def test_ndebug_turns_assert_off_as_with_nvcc():
    """-DNDEBUG (or `#define NDEBUG` before `#include <cassert>`) leaves asserts out, as NVRTC's PTX has no
    __assertfail then: the launch passes; without it the same launch fails at the assert."""
    source = r"""
extern "C" __global__ void check(const float* x, int n) {
    int i = threadIdx.x;
    if (i < n) assert(x[i] >= 0);
}"""
    x = np.ones(8, np.float32)
    x[5] = -1
    with pytest.raises(cuda.KernelError, match=r"failed assert\(x\[i\] >= 0\)"):
        cuda.RawKernel(source, "check", backend="cpu")((1,), (8,), (x, 8))
    for options, code in ((("-DNDEBUG",), source), (("--define-macro=NDEBUG=1",), source),
                          ((), "#define NDEBUG\n#include <cassert>\n" + source)):
        for sanitize in (False, True):
            cuda.RawKernel(code, "check", backend="cpu", options=options, sanitize=sanitize)((1,), (8,), (x, 8))


def test_printf_before_a_fault_is_shown(capsys):
    with pytest.raises(cuda.KernelError, match=r"out\[8\]"):
        kernel("talk_then_crash")((1,), (8,), (np.zeros(8, np.float32), 8))
    assert capsys.readouterr().out.splitlines() == [f"thread {i} was here" for i in range(4)]
    assert_alive()


# ---------------------------------------------------------------------------------------
# Arguments are checked before a launch, on both backends
# ---------------------------------------------------------------------------------------


@pytest.fixture(params=["cpu", "cupy"])
def backend(request):
    if request.param == "cupy" and not env.cupy_usable():
        pytest.skip("no usable GPU: CuPy cannot run kernels here")
    return request.param


def good_args(xp):
    return [xp.ones(4, xp.float32), xp.zeros(1, xp.float64), xp.zeros(4, xp.uint8), 3, 7, 0.5, 2**40, True]


@pytest.fixture
def xp(backend):
    if backend == "cupy":
        import cupy

        return cupy
    return np


def launch_all(backend, args):
    cuda.RawKernel(SOURCE, "takes_everything", backend=backend)((1,), (1,), tuple(args))


def test_good_arguments_are_accepted(backend, xp):
    args = good_args(xp)
    launch_all(backend, args)
    assert float(args[1][0]) == 1 + 3 + 7 + 0.5 + 2**40 + 1


def test_wrong_dtype(backend, xp):
    args = good_args(xp)
    args[0] = xp.ones(4, xp.float64)
    with pytest.raises(TypeError, match=r"parameter 'x' \(const float\* x\): needs float32 elements, but the array holds float64"):
        launch_all(backend, args)
    if backend == "cpu":  # a torch tensor is told how to convert a tensor
        import torch

        args[0] = torch.ones(4, dtype=torch.float64)
        with pytest.raises(TypeError, match=r"but the tensor holds float64; convert it with t\.to\(torch\.float32\)"):
            launch_all(backend, args)
        # as on a GPU (torch gives CuPy no __cuda_array_interface__ for it): autograd would not see the kernel
        args[0] = torch.ones(4, requires_grad=True)
        with pytest.raises(TypeError, match=r"requires grad cannot go to a kernel.*Pass t\.detach\(\)"):
            launch_all(backend, args)
        args[0] = args[0].detach()
        launch_all(backend, args)


def test_wrong_argument_count(backend, xp):
    with pytest.raises(TypeError, match=r"takes 8 arguments, takes_everything\(const float\* x, .*but 7 were given"):
        launch_all(backend, good_args(xp)[:7])


def test_non_contiguous_array(backend, xp):
    args = good_args(xp)
    args[2] = xp.zeros(8, xp.uint8)[::2]
    with pytest.raises(ValueError, match=r"parameter 'image' .*the array is not contiguous.*xp.ascontiguousarray"):
        launch_all(backend, args)
    if backend == "cpu":  # a torch tensor is told its own way
        import torch

        args[2] = torch.zeros(8, dtype=torch.uint8)[::2]
        with pytest.raises(ValueError, match=r"parameter 'image' .*the tensor is not contiguous.*t\.contiguous\(\)"):
            launch_all(backend, args)


def test_scalar_out_of_range(backend, xp):
    args = good_args(xp)
    args[3] = 2**31
    with pytest.raises(ValueError, match=r"parameter 'n' \(int n\): 2147483648 does not fit in int"):
        launch_all(backend, args)
    args[3], args[4] = 3, -1
    with pytest.raises(ValueError, match=r"parameter 'count' .*-1 does not fit in unsigned int"):
        launch_all(backend, args)
    args[4], args[5] = 7, 1e39
    with pytest.raises(ValueError, match=r"parameter 'scale' .*does not fit in float"):
        launch_all(backend, args)


def test_float_for_an_int_parameter(backend, xp):
    args = good_args(xp)
    args[3] = 3.0
    with pytest.raises(TypeError, match=r"parameter 'n' \(int n\): is an integer, but got the float 3.0"):
        launch_all(backend, args)


def test_array_for_a_scalar_and_scalar_for_a_pointer(backend, xp):
    args = good_args(xp)
    args[3] = xp.zeros(1, xp.int32)
    with pytest.raises(TypeError, match=r"parameter 'n' .*is a scalar, but got a one-element array; pass a number: "
                                        r"a\.item\(\)"):
        launch_all(backend, args)
    args[3] = xp.zeros(3, xp.int32)
    with pytest.raises(TypeError, match=r"is a scalar, but got an array; pass a number: one of its elements, "
                                        r"a\[0\]\.item\(\)"):
        launch_all(backend, args)
    args = good_args(xp)
    args[0] = 1.0
    with pytest.raises(TypeError, match=r"parameter 'x' .*a pointer needs a .* array of float32, got float"):
        launch_all(backend, args)


def test_numpy_array_on_the_gpu_backend_or_read_only_array_on_the_cpu(backend, xp):
    args = good_args(xp)
    if backend == "cupy":
        args[0] = np.ones(4, np.float32)
        with pytest.raises(TypeError, match="NumPy array"):
            launch_all(backend, args)
    else:
        args[1].flags.writeable = False
        with pytest.raises(ValueError, match=r"parameter 'y' .*read-only"):
            launch_all(backend, args)
        args[1].flags.writeable = True
        args[0].flags.writeable = False  # fine: x is const
        launch_all(backend, args)


def test_bad_launch_configuration(backend, xp):
    k = cuda.RawKernel(SOURCE, "takes_everything", backend=backend)
    with pytest.raises(ValueError, match="at most 1024 per block"):
        k((1,), (32, 64), tuple(good_args(xp)))
    with pytest.raises(ValueError, match=r"grid.y = 0"):
        k((1, 0), (1,), tuple(good_args(xp)))
    with pytest.raises(TypeError, match="tuple of 1 to 3 ints"):
        k((1, 1, 1, 1), (1,), tuple(good_args(xp)))
    with pytest.raises(ValueError, match="48 KiB"):
        k((1,), (1,), tuple(good_args(xp)), shared_mem=64 * 1024)


# ---------------------------------------------------------------------------------------
# Compile-time errors
# ---------------------------------------------------------------------------------------

BROKEN = """
extern "C" __global__ void broken(float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = undefined_value;
}
"""


def test_compile_error_shows_the_learners_line(tmp_path, monkeypatch, private_kernel_cache):
    k = cuda.RawKernel(BROKEN, "broken", backend="cpu")
    with pytest.raises(cuda.CompileError) as info:
        k((1,), (1,), (np.zeros(1, np.float32), 1))
    message = str(info.value)
    assert "kernel 'broken' does not compile" in message
    assert "kernel.cu:4:" in message and "undefined_value" in message
    assert "__cc_" not in message  # the emulator's names stay hidden
    assert list(tmp_path.glob("*.so")) == []  # nothing half-built is cached
    assert_alive()


@pytest.mark.parametrize("call, named", [("std::cyl_bessel_j(0.0f, x[i])", True), ("std::riemann_zeta(x[i])", True),
                                         ("std::beta(x[i], 2.0f)", True), ("beta(x[i], 2.0f)", False)])
def test_cpp17_special_functions_are_host_code_and_the_error_names_cudas_own(call, named):
    """std::cyl_bessel_j and the rest of C++17's special functions, which nvcc refuses in a kernel, are not there
    (runtime.h leaves them out); the error names CUDA's device functions. A learner's own `beta`, not declared, is
    not taken for std::beta."""
    source = f"""
#include <cmath>
extern "C" __global__ void k(float* x) {{
    int i = threadIdx.x;
    x[i] = {call};
}}"""
    with pytest.raises(cuda.CompileError) as info:
        cuda.RawKernel(source, "k", backend="cpu").compile()
    message = str(info.value)
    assert "kernel.cu:5:" in message
    assert ("one of C++17's special functions, host code: nvcc refuses it in a kernel too" in message) == named
    if named:
        assert "cyl_bessel_i0f" in message and "jnf" in message


def test_a_compile_error_in_the_learners_expression_shows_no_operator_of_the_emulator():
    """`x[i] + bias ? ...` (a float plus a pointer): g++ tried every operator+ the emulator's header defines for half
    and vector types and listed each, with its macro and a std::enable_if error, under the learner's own error;
    candidates of a function the learner called (atomicAdd's overloads) stay, once each."""
    source = r"""
extern "C" __global__ void k(const float* x, const float* bias, float* out) {
    int i = threadIdx.x;
    out[i] = x[i] + bias ? bias[i] : 0.0f;
}"""
    with pytest.raises(cuda.CompileError) as info:
        cuda.RawKernel(source, "k", backend="cpu").compile()
    message = str(info.value)
    assert "kernel.cu:4:" in message and "no match for" in message and "operator+" in message
    assert "runtime.h" not in message and "__CC_" not in message and "enable_if" not in message
    with pytest.raises(cuda.CompileError) as info:
        cuda.RawKernel(source.replace("out[i] = x[i] + bias ? bias[i] : 0.0f;", "atomicAdd(out, bias);"), "k",
                       backend="cpu").compile()
    candidates = [line for line in str(info.value).splitlines() if "note: candidate:" in line]
    assert any("float atomicAdd(float*, float)" in line for line in candidates)
    assert len(candidates) == len(set(candidates))


@pytest.mark.parametrize("body, said", [
    ("__syncthread();", "did you mean ‘__syncthreads’?"),  # (g++ suggested the emulator's own function)
    ("float a[4] = {1, 2, 3, 4}; out[i] = a;", "cannot convert ‘float [4]’ to ‘float’"),
    ("out[i] = __shfl_down_sync(x[i], 1);", "__shfl_down_sync(unsigned int, const T&, unsigned int, int)’"),
    ("out[i] = __shfl_down_sync(x[i], 1);", "__shfl_down_sync's arguments: __shfl_down_sync(mask, value, delta) or "),
    ("atomicMax(out, x[i]);", "atomicMax takes a pointer to int, unsigned int, long long and unsigned long long in "
                              "CUDA, not to float: for a float, atomicMax((int*)p, __float_as_int(v))"),
    ("atomicSub(out, 1.0f);", "atomicSub takes a pointer to int and unsigned int in CUDA, not to float: for a float, "
                              "atomicAdd(p, -v)"),
    ("x[i] = 1.0f;", "error: assignment of read-only location ‘an element of a const array’"),  # (__cc_store::ref)
    ("out[i] = threadIdx;", "error: cannot convert ‘uint3’ to ‘float’"),
    ("__shared__ float s[n]; out[i] = s[i];", "storage size of ‘s’ isn’t constant"),
    ("atomicCAS(out, 1.0f, 2.0f);", "candidate: ‘int atomicCAS(int*, int, int)’"),
])
def test_compile_errors_name_no_emulator_internals(body, said):
    source = f"""
extern "C" __global__ void k(const float* x, float* out, int n) {{
    int i = threadIdx.x;
    {body}
}}"""
    with pytest.raises(cuda.CompileError) as info:
        cuda.RawKernel(source, "k", backend="cpu").compile()
    plain = str.maketrans({"‘": "'", "’": "'"})  # (g++ quotes so in a UTF-8 locale, with ' in the C locale)
    assert said.translate(plain) in str(info.value).translate(plain)
    assert "__cc_" not in str(info.value) and "p.p" not in str(info.value) and "runtime.h: In" not in str(info.value)
    assert "kernel.cu:4:" in str(info.value)  # (the learner's line, not the emulator header's that made the store)
    assert "candidate expects" not in str(info.value)  # (a warp function's hidden line parameter counted)
    assert "mismatched types" not in str(info.value)  # (the emulator's atomic for its checked pointers)
    quoted = [line for line in str(info.value).splitlines() if re.match(r"\s*4 \|", line)]
    assert len(quoted) == len(set(quoted)) <= 1  # the learner's line quoted once at most


@pytest.mark.parametrize("name, what", [("__syncthreads", "barrier"), ("__syncwarp", "barrier"),
                                        ("__threadfence", "fence"), ("__threadfence_block", "fence")])
def test_a_barrier_or_fence_named_without_its_parentheses_is_an_error_not_a_statement_that_does_nothing(name, what):
    """`__syncthreads;` compiles with nvcc, with a warning only, and the kernel then runs without the barrier."""
    source = f"""
extern "C" __global__ void k(const float* x, float* out) {{
    __shared__ float s[64];
    s[threadIdx.x] = x[threadIdx.x];
    {name};   // here
    out[threadIdx.x] = s[63 - threadIdx.x];  // {name}; in a comment is no statement
}}"""
    with pytest.raises(cuda.CompileError, match=rf"kernel 'k': line 5: `{name};` names the function without calling "
                                                rf"it.*without the {what}\): write `{name}\(\);`"):
        cuda.RawKernel(source, "k", backend="cpu").compile()
    cuda.RawKernel(source.replace(f"{name};   // here", f"{name}();"), "k", backend="cpu").compile()


def test_a_function_declared_and_called_but_never_defined_is_named(tmp_path, monkeypatch, private_kernel_cache):
    """(The shared library loaded with an undefined symbol: OSError '_Z5scalef' before.) Not kept in the cache."""
    source = """
__device__ float scale(float v);
extern "C" __global__ void k(const float* x, float* out) { out[threadIdx.x] = scale(x[threadIdx.x]); }"""
    for attempt in range(2):  # (the second compiles again: no broken library was cached)
        with pytest.raises(cuda.CompileError, match=r"uses `scale\(float\)`, which it declares but never defines .*"
                                                    r"Unresolved extern function"):
            cuda.RawKernel(source, "k", backend="cpu", sanitize=False)((1,), (4,), (np.ones(4, np.float32),
                                                                                 np.zeros(4, np.float32)))
        assert not list(tmp_path.rglob("*.so"))


def test_missing_compiler_says_how_to_install_one(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_CUDA_CACHE", str(tmp_path))
    monkeypatch.setenv("CXX", str(tmp_path / "no-such-compiler"))
    source = BROKEN.replace("undefined_value", "2.0f")  # a source no earlier test compiled
    with pytest.raises(cuda.CompileError, match=r"No C\+\+ compiler found") as info:
        cuda.RawKernel(source, "broken", backend="cpu").compile()
    assert "apt install g++" in str(info.value) and "xcode-select --install" in str(info.value)


@pytest.mark.parametrize("construct, spelling, instead", [
    ('asm volatile("membar.gl;");', "asm", "write the operation in CUDA C"),
    ("float v = tex1Dfetch<float>(texture_object, i);", "tex1Dfetch", "plain `const float*` array"),
    ("child<<<1, 32>>>(x);", "<<<...>>>", "launch the second kernel from Python"),
    ("cooperative_groups::this_grid().sync();", "the grid's sync()", "split the kernel in two"),
    ("nvcuda::wmma::fill_fragment(f, 0.0f);", "nvcuda", "ordinary loops"),
    ("__shared__ cuda::barrier<cuda::thread_scope_block> bar; x[i] = 0;", "barrier", "cooperative_groups::memcpy_async"),
    ("auto pipe = cuda::make_pipeline(); x[i] = 0;", "make_pipeline", "followed by __syncthreads()"),
    ("curandState s; curand_init(1234, i, 0, &s); x[i] = curand_poisson(&s, 2.0);", "curand_poisson",
     "make Poisson or discrete numbers from curand_uniform yourself"),
    ("typedef cub::BlockRadixSort<int, 32, 1> Sort; x[i] = 0;", "cub", "with __shared__ memory and __syncthreads()"),
])
def test_constructs_the_cpu_cannot_run_refuse_only_their_kernel(construct, spelling, instead):
    source = f"""#include <curand_kernel.h>
#include <cuda/barrier>
#include <cooperative_groups.h>
#include <cub/block/block_radix_sort.cuh>
extern "C" __global__ void fancy(float* x, int n) {{
    int i = threadIdx.x;
    {construct}
}}
extern "C" __global__ void plain(float* x, int n) {{
    if (threadIdx.x < n) x[threadIdx.x] = 2.0f;
}}"""
    with pytest.raises(cuda.CompileError) as info:
        cuda.RawKernel(source, "fancy", backend="cpu")
    message = str(info.value)
    assert f"uses {spelling} (line 7)" in message and instead in message
    x = np.zeros(4, np.float32)
    cuda.RawKernel(source, "plain", backend="cpu")((1,), (4,), (x, 4))  # the other kernel runs
    assert (x == 2).all()


def test_aligned_size_t_of_cooperative_groups_memcpy_async_runs():
    # <cuda/barrier>'s cuda::aligned_size_t is a byte count for cg::memcpy_async (only the barrier and
    # the pipeline of that header are refused, by the test above)
    source = """#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
#include <cuda/barrier>
namespace cg = cooperative_groups;
extern "C" __global__ void flip(const float* in, float* out) {
    __shared__ float s[64];
    cg::thread_block block = cg::this_thread_block();
    cg::memcpy_async(block, s, in, cuda::aligned_size_t<16>(sizeof(float) * 64));
    cg::wait(block);
    out[threadIdx.x] = s[63 - threadIdx.x];
}"""
    x, out = np.arange(64, dtype=np.float32), np.zeros(64, np.float32)
    cuda.RawKernel(source, "flip", backend="cpu")((1,), (64,), (x, out))
    np.testing.assert_array_equal(out, x[::-1])


DOUBLE_BUFFERED = r"""#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
namespace cg = cooperative_groups;
extern "C" __global__ void tiles(const float* in, float* out, int tiles) {
    __shared__ float s[2][64];
    auto b = cg::this_thread_block();
    float acc = 0;
    cg::memcpy_async(b, s[0], in, sizeof(float) * 64);
    for (int t = 0; t < tiles; ++t) {
        if (t + 1 < tiles) cg::memcpy_async(b, s[(t + 1) & 1], in + (t + 1) * 64, sizeof(float) * 64);  // COPY
        WAIT
        acc += s[t & 1][threadIdx.x];  // READ
        b.sync();
    }
    out[threadIdx.x] = acc;
}
extern "C" __global__ void flip(const float* in, float* out) {
    __shared__ float s[64];
    auto block = cg::this_thread_block();
    cg::memcpy_async(block, s, in, sizeof(float) * 64);
    FLIP_WAIT
    out[threadIdx.x] = s[63 - threadIdx.x];  // FLIP
}"""


def test_a_copy_of_cg_memcpy_async_is_waited_for_by_cg_wait_not_by_a_barrier():
    # On a GPU the copy lands in the background: only cg::wait (or wait_prior<N>, all but the newest N copies)
    # waits for it. A sanitized launch reports a use of its destination before that, barrier or not.
    x = np.arange(256, dtype=np.float32)
    right = DOUBLE_BUFFERED.replace("WAIT", "if (t + 1 < tiles) cg::wait_prior<1>(b); else cg::wait(b);", 1)
    right = right.replace("FLIP_WAIT", "cg::wait(block);")
    for sanitize in (False, True):
        module = cuda.RawModule(code=right, backend="cpu", sanitize=sanitize)
        out = np.zeros(64, np.float32)
        module.get_function("tiles")((1,), (64,), (x, out, 4))
        np.testing.assert_array_equal(out, x.reshape(4, 64).sum(0))
        module.get_function("flip")((1,), (64,), (x, out))
        np.testing.assert_array_equal(out, x[63::-1])
    for wait, flip_wait in (("cg::wait_prior<1>(b);", "__syncthreads();"), ("b.sync();", "")):
        module = cuda.RawModule(code=DOUBLE_BUFFERED.replace("WAIT", wait, 1).replace("FLIP_WAIT", flip_wait),
                                backend="cpu", sanitize=True)
        with pytest.raises(cuda.KernelError, match=r"reads shared memory s\[\d\]\[0\] at line \d+, which the "
                                                   r"cg::memcpy_async at line \d+ is still copying") as info:
            module.get_function("tiles")((1,), (64,), (x, np.zeros(64, np.float32), 4))
        assert info.value.line == line_of("READ", DOUBLE_BUFFERED)
        with pytest.raises(cuda.KernelError, match=r"which the cg::memcpy_async at line \d+ is still copying") as info:
            module.get_function("flip")((1,), (64,), (x, np.zeros(64, np.float32)))
        assert info.value.line == line_of("FLIP", DOUBLE_BUFFERED) and "a __syncthreads() does not" in str(info.value)
    # wait_prior<1> on the last pass leaves the last copy in flight: the hint says to wait for all there
    assert "On the last pass, where no newer copy was started" in str(pytest.raises(cuda.KernelError, cuda.RawKernel(
        DOUBLE_BUFFERED.replace("WAIT", "cg::wait_prior<1>(b);", 1).replace("FLIP_WAIT", ""), "tiles", backend="cpu",
        sanitize=True), (1,), (64,), (x, np.zeros(64, np.float32), 1)).value)


GRID_HEAD = "#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n"


@pytest.mark.parametrize("source, line", [
    # the group in a variable, its sync several statements later
    ('extern "C" __global__ void k(float* x) {\n    cg::grid_group g = cg::this_grid();\n'
     '    x[g.thread_rank()] = 1.0f;\n    x[g.thread_rank()] += 1.0f;\n    x[g.thread_rank()] += 1.0f;\n'
     '    g.sync();\n    x[0] = 0.0f;\n}', 8),
    ('extern "C" __global__ void k(float* x) {\n    auto grid = cg::this_grid();\n'
     '    x[grid.thread_rank()] = 1.0f;\n    cg::sync(grid);\n}', 6),
    # the group passed to a __device__ function (by reference or by value), which syncs it
    ('__device__ void step(cg::grid_group& grid, float* x) {\n    x[0] = 1.0f;\n    grid.sync();\n}\n'
     'extern "C" __global__ void k(float* x) {\n    cg::grid_group g = cg::this_grid();\n    step(g, x);\n}', 5),
    ('__device__ void step(cg::grid_group grid, float* x) {\n    grid.sync();\n}\n'
     'extern "C" __global__ void k(float* x) {\n    step(cg::this_grid(), x);\n}', 4),
])
def test_a_grid_wide_sync_is_refused_wherever_it_is(source, line):
    with pytest.raises(cuda.CompileError) as info:
        cuda.RawKernel(GRID_HEAD + source, "k", backend="cpu")
    assert f"uses the grid's sync() (line {line})" in str(info.value)
    assert "split the kernel in two" in str(info.value)


def test_a_grid_sync_the_source_does_not_show_is_a_clear_fault_at_run_time():
    # the group reaches its sync through a template parameter: only the run finds it
    source = GRID_HEAD + (
        'template <class Group> __device__ void wait_for(const Group& g) {\n    g.sync();\n}\n'
        'extern "C" __global__ void k(float* x) {\n    x[threadIdx.x] = 1.0f;\n    wait_for(cg::this_grid());\n}')
    with pytest.raises(cuda.KernelError) as info:
        cuda.RawKernel(source, "k", backend="cpu")((2,), (32,), (np.zeros(64, np.float32),))
    message = str(info.value)
    assert "reached a grid-wide barrier (grid.sync() of cooperative groups)" in message
    assert "line 4" in message and "split the kernel in two" in message


def test_a_grid_group_that_only_gives_sizes_runs():
    source = GRID_HEAD + (
        'extern "C" __global__ void k(unsigned long long* rank, unsigned long long* size) {\n'
        '    auto grid = cg::this_grid();\n    auto block = cg::this_thread_block();\n'
        '    rank[grid.thread_rank()] = grid.thread_rank();\n    block.sync();\n'
        '    if (grid.thread_rank() == 0) *size = grid.size();\n}')
    rank, size = np.zeros(64, np.uint64), np.zeros(1, np.uint64)
    cuda.RawKernel(source, "k", backend="cpu")((2,), (32,), (rank, size))
    assert (rank == np.arange(64)).all() and size[0] == 64


def test_pytorch_extension_accessors_are_explained():
    """Kernels pasted from PyTorch's C++/CUDA extension tutorial take PackedTensorAccessor32s."""
    source = r"""
#include <torch/extension.h>
template <typename scalar_t>
__global__ void relu(const torch::PackedTensorAccessor32<scalar_t, 2, torch::RestrictPtrTraits> x,
                     torch::PackedTensorAccessor32<scalar_t, 2, torch::RestrictPtrTraits> y) {
    const int n = blockIdx.y, c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c < x.size(1)) y[n][c] = x[n][c] > 0 ? x[n][c] : 0;
}"""
    with pytest.raises(cuda.CompileError, match=r"parameter x is a PyTorch C\+\+ type \(torch::PackedTensorAccessor32"
                                                r".*pass the tensor as a raw pointer"):
        cuda.RawModule(code=source, name_expressions=["relu<float>"], backend="cpu").get_function("relu<float>")


@pytest.mark.parametrize("parameter", ["torch::Tensor* t", "at::Half* t", "const c10::Half* t", "at::Tensor t"])
def test_pytorch_types_as_pointer_parameters_are_explained(parameter):
    """A pointer to a PyTorch C++ type is no struct of the source's (it was compiled as one, and g++ said only
    "'torch' was not declared"): the message says what to write instead."""
    source = 'extern "C" __global__ void k(' + parameter + ', float* out) { out[0] = 1.0f; }'
    with pytest.raises(cuda.CompileError, match=r"parameter t is a PyTorch C\+\+ type .*pass the tensor as a raw "
                                                r"pointer"):
        cuda.RawKernel(source, "k", backend="cpu")


def test_kernel_name_must_exist_and_be_extern_c():
    with pytest.raises(cuda.CompileError, match=r"no __global__ function named 'fil'.*fill"):
        cuda.RawKernel(SOURCE, "fil", backend="cpu")
    with pytest.raises(cuda.CompileError, match=r"not declared extern \"C\""):
        cuda.RawKernel("__global__ void k(float* x) { x[0] = 1; }", "k", backend="cpu")
    # A template instance asked of RawKernel (NVIDIA's reduce6<256>): say how CuPy instantiates it.
    template = ("template <unsigned N> __global__ void reduce6(float* x) { x[0] = N; }\n"
                "template __global__ void reduce6<256>(float*);")
    with pytest.raises(cuda.CompileError, match=r"instance of the template kernel 'reduce6'.*"
                                                r"name_expressions=\['reduce6<256>'\]"):
        cuda.RawKernel(template, "reduce6<256>", backend="cpu")
    # cuda-samples' clock sample declares its kernel `__global__ static`: its name is hidden, say so.
    two = 'extern "C" __global__ static void k(float* x) { x[0] = 1; }\nextern "C" __global__ void j(float* x) { x[0] = 2; }'
    with pytest.raises(cuda.CompileError, match=r"kernel 'k': it is declared static.*remove `static`"):
        cuda.RawKernel(two, "k", backend="cpu")
    x = np.zeros(1, np.float32)
    cuda.RawKernel(two, "j", backend="cpu")((1,), (1,), (x,))  # the other kernels of the source still run
    assert x[0] == 2


@pytest.mark.parametrize("which", range(4))
def test_each_access_reports_its_own_line(which):
    a, b, out = np.ones(8, np.float32), np.ones(8, np.float32), np.zeros(8, np.float32)
    with pytest.raises(cuda.KernelError) as info:
        kernel("many_accesses")((1,), (8,), (a, b, out, which, 8))
    assert info.value.line == line_of(f"ACCESS-{which}")
    assert f"{['a', 'b', 'out', 'out'][which]}[8]" in str(info.value)


# ---------------------------------------------------------------------------------------
# memcheck: static __shared__ and local arrays are bounds-checked per dimension
# ---------------------------------------------------------------------------------------

ARRAYS = r"""
extern "C" __global__ void static_shared_too_small(const float* x, float* y) {
    __shared__ float XY[32];
    XY[threadIdx.x] = x[threadIdx.x];  // BUG: 64 threads, 32 elements
    __syncthreads();
    y[threadIdx.x] = XY[threadIdx.x];
}
extern "C" __global__ void static_shared_right_size(const float* x, float* y) {
    __shared__ float XY[64];
    XY[threadIdx.x] = x[threadIdx.x];
    __syncthreads();
    y[threadIdx.x] = XY[63 - threadIdx.x] + sizeof(XY) / sizeof(XY[0]);
}
extern "C" __global__ void local_tile(float* y, int k) {
    float acc[4] = {1, 2, 3, 4};
    float tile[2][3];
    tile[1][k] = 2.0f;  // BUG: k == 3 is past the row
    y[threadIdx.x] = acc[k % 4] + tile[1][k];
}
"""


def test_static_shared_array_written_past_its_end():
    with pytest.raises(cuda.KernelError) as info:
        cuda.RawKernel(ARRAYS, "static_shared_too_small", backend="cpu")((1,), (64,), (np.ones(64, np.float32), np.zeros(64, np.float32)))
    message = str(info.value)
    assert "accessed XY[32], but that dimension of the __shared__ array XY has 32 elements" in message
    assert info.value.thread == (32, 0, 0) and info.value.line == 4
    y = np.zeros(64, np.float32)
    cuda.RawKernel(ARRAYS, "static_shared_right_size", backend="cpu")((1,), (64,), (np.arange(64, dtype=np.float32), y))
    np.testing.assert_array_equal(y, np.arange(63, -1, -1) + 64)  # sizeof still gives the array's size


def test_local_array_subscript_past_its_dimension():
    y = np.zeros(1, np.float32)
    cuda.RawKernel(ARRAYS, "local_tile", backend="cpu")((1,), (1,), (y, 2))
    assert y[0] == 5
    with pytest.raises(cuda.KernelError, match=r"tile\[\.\.\.\]\[3\] \(subscript 2\), but that dimension of the local array tile has 3") as info:
        cuda.RawKernel(ARRAYS, "local_tile", backend="cpu")((1,), (1,), (y, 3))
    assert info.value.line == 17  # the line marked BUG
    assert_alive()


HIDDEN_ARRAYS = r"""
__constant__ float weights[4] = {1.0f, 2.0f, 3.0f, 4.0f};
__device__ int scratch[8];

extern "C" __global__ void weigh(float* out, int n) {
    int i = threadIdx.x;
    if (i < n) out[i] = weights[i];       // CONST
}

extern "C" __global__ void use_scratch(int* out, int n) {
    int i = threadIdx.x;
    if (i < n) scratch[i] = i;            // DEVICE
    out[i] = sizeof(scratch) + sizeof weights;
}

extern "C" __global__ void flat_tile(float* out, int count) {
    __shared__ float tile[4][4];
    float* flat = &tile[0][0];
    if (threadIdx.x < count) flat[threadIdx.x] = 1.0f;   // FLAT
    __syncthreads();
    if (threadIdx.x < 16) out[threadIdx.x] = tile[threadIdx.x / 4][threadIdx.x % 4];
}

extern "C" __global__ void copy_in(const float* a, float* out, int n) {
    __shared__ float buffer[8];
    memcpy(buffer, a, n * sizeof(float));  // MEMCPY
    memset(out, 0, sizeof buffer);
    out[0] = buffer[0] + buffer[7];
}
"""


def hidden(name):
    return cuda.RawKernel(HIDDEN_ARRAYS, name, backend="cpu")


def line_in(source: str, marker: str) -> int:
    (line,) = [i for i, text in enumerate(source.split("\n"), 1) if f"// {marker}" in text]
    return line


def test_file_scope_constant_and_device_arrays_are_bounds_checked():
    out = np.zeros(5, np.float32)
    hidden("weigh")((1,), (5,), (out, 4))
    np.testing.assert_array_equal(out, [1, 2, 3, 4, 0])
    with pytest.raises(cuda.KernelError, match=r"weights\[4\], but that dimension of the __constant__ array weights "
                                               r"has 4 elements") as info:
        hidden("weigh")((1,), (5,), (out, 5))
    assert info.value.line == line_in(HIDDEN_ARRAYS, "CONST") and info.value.thread == (4, 0, 0)
    sizes = np.zeros(9, np.int32)
    hidden("use_scratch")((1,), (8,), (sizes, 8))
    assert (sizes[:8] == 32 + 16).all()  # sizeof still gives the arrays' sizes
    with pytest.raises(cuda.KernelError, match=r"__device__ array scratch has 8 elements"):
        hidden("use_scratch")((1,), (9,), (sizes, 9))
    module = cuda.RawModule(code=HIDDEN_ARRAYS, backend="cpu")
    assert cuda.asnumpy(module.get_global("weights")).nbytes == 16  # get_global finds the storage
    assert_alive()


def test_pointers_into_shared_arrays_and_memcpy_stay_checked():
    out = np.zeros(16, np.float32)
    hidden("flat_tile")((1,), (17,), (out, 16))
    assert (out == 1).all()
    with pytest.raises(cuda.KernelError, match=r"tile\[16\] through a pointer into the __shared__ array tile, which "
                                               r"holds 16 4-byte elements") as info:
        hidden("flat_tile")((1,), (17,), (out, 17))
    assert info.value.line == line_in(HIDDEN_ARRAYS, "FLAT") and info.value.thread == (16, 0, 0)
    a = np.arange(9, dtype=np.float32)
    hidden("copy_in")((1,), (1,), (a[:8].copy(), out, 8))
    assert out[0] == 7 and (out[1:8] == 0).all() and (out[8:] == 1).all()  # memset: sizeof buffer = 32 bytes
    with pytest.raises(cuda.KernelError, match=r"accessed buffer\[8\] through a pointer into the __shared__ array "
                                               r"buffer|accessed a\[8\], but a has 9") as info:
        hidden("copy_in")((1,), (1,), (a, out, 9))
    assert info.value.line == line_in(HIDDEN_ARRAYS, "MEMCPY")
    assert_alive()


LIMITS = r"""
#define BLOCK 128
extern "C" __global__ void __launch_bounds__(BLOCK, 4) bounded(float* x) { x[threadIdx.x] = 1.0f; }
extern "C" __global__ void whole_image_in_shared(const float* in, float* out, int n) {
    __shared__ float image[128 * 128];  // BIG: 64 KiB
    image[threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = image[threadIdx.x];
}
extern "C" __global__ void tile_and_dynamic(const float* in, float* out) {
    __shared__ float tile[32][33];  // TILE: 4,224 bytes
    extern __shared__ float rest[];
    tile[0][threadIdx.x] = rest[threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = tile[0][threadIdx.x] + rest[threadIdx.x];
}
"""


@pytest.mark.parametrize("sanitize", [False, True])
@pytest.mark.filterwarnings("ignore:.*The blocks repeat one another's work")  # (both blocks fill x[0:128], on purpose)
def test_launch_bounds_and_the_48_kib_of_shared_memory_a_block_gets(sanitize):
    line = lambda marker: line_of(marker, LIMITS)
    module = cuda.RawModule(code=LIMITS, backend="cpu", sanitize=sanitize)
    x = np.zeros(256, np.float32)
    with pytest.raises(ValueError, match=r"declared __launch_bounds__\(128\).*block \(256, 1, 1\) has 256"):
        module.get_function("bounded")((1,), (256,), (x,))
    module.get_function("bounded")((2,), (128,), (x,))
    assert x.sum() == 128  # both blocks fill x[0:128]
    with pytest.raises(cuda.KernelError, match=r"needs 65,536 bytes of shared memory per block \(65,536 in "
                                               r"__shared__ arrays, up to `image`.*does not compile") as info:
        module.get_function("whole_image_in_shared")((1,), (32,), (x, x.copy(), 32))
    assert info.value.line == line("BIG")
    y, out = np.ones(32, np.float32), np.zeros(32, np.float32)
    module.get_function("tile_and_dynamic")((2,), (32,), (y, out), shared_mem=40 * 1024)  # 4,224 + 40,960 fits
    np.testing.assert_array_equal(out, 2.0)
    with pytest.raises(cuda.KernelError, match=r"needs 53,376 bytes .*4,224 in __shared__ arrays, up to `tile`.*"
                                               r"shared_mem=49,152.*the launch fails"):
        module.get_function("tile_and_dynamic")((2,), (32,), (y, out), shared_mem=48 * 1024)
    module.get_function("tile_and_dynamic")((2,), (32,), (y, out), shared_mem=128)  # the module still works


@pytest.mark.parametrize("sanitize", [False, True])
def test_a_kernel_opts_in_to_more_dynamic_shared_memory_as_with_cupy(sanitize):
    """kernel.max_dynamic_shared_size_bytes (cudaFuncAttributeMaxDynamicSharedMemorySize): 48 KiB unless
    raised, then up to the emulated A100's 163 KiB a block in all; static arrays stay at 48 KiB."""
    module = cuda.RawModule(code=LIMITS, backend="cpu", sanitize=sanitize)
    kernel = module.get_function("tile_and_dynamic")
    y, out = np.ones(32, np.float32), np.zeros(32, np.float32)
    assert kernel.max_dynamic_shared_size_bytes == 48 * 1024
    with pytest.raises(ValueError, match=r"shared_mem=65,536 bytes, .*at most 49,152 .*unless the kernel opts in.*"
                                         r"kernel.max_dynamic_shared_size_bytes = 65536"):
        kernel((2,), (32,), (y, out), shared_mem=64 * 1024)
    with pytest.raises(cuda.KernelError, match=r"(?s)needs 53,376 bytes.*at most 49,152.*max_dynamic_shared_size_bytes = "
                                               r"49152"):
        kernel((2,), (32,), (y, out), shared_mem=48 * 1024)  # fits the attribute, not the block with its tile
    kernel.max_dynamic_shared_size_bytes = 100 * 1024
    kernel((2,), (32,), (y, out), shared_mem=100 * 1024)
    np.testing.assert_array_equal(out, 2.0)
    with pytest.raises(ValueError, match=r"at most 102,400 bytes .*its max_dynamic_shared_size_bytes"):
        kernel((2,), (32,), (y, out), shared_mem=100 * 1024 + 4)
    kernel.max_dynamic_shared_size_bytes = 163 * 1024
    with pytest.raises(cuda.KernelError, match=r"needs 171,136 bytes.*at most 166,912 \(163 KiB on the A100"):
        kernel((2,), (32,), (y, out), shared_mem=163 * 1024)  # the tile's 4,224 bytes too many
    with pytest.raises(ValueError, match=r"at most 166,912 bytes \(163 KiB\)"):
        kernel.max_dynamic_shared_size_bytes = 200 * 1024
    with pytest.raises(ValueError, match="number of bytes >= 0"):
        kernel.max_dynamic_shared_size_bytes = -1
    big = module.get_function("whole_image_in_shared")  # 64 KiB of static arrays: no opt-in helps
    big.max_dynamic_shared_size_bytes = 100 * 1024
    with pytest.raises(cuda.KernelError, match=r"(?s)at most 49,152 \(48 KiB\).*does not compile.*Static __shared__ "
                                               r"arrays get at most 48 KiB"):
        big((1,), (32,), (np.zeros(256, np.float32), np.zeros(256, np.float32), 32))
    other = module.get_function("tile_and_dynamic")  # a kernel of its own: the attribute is not shared
    with pytest.raises(ValueError, match="unless the kernel opts in"):
        other((2,), (32,), (y, out), shared_mem=64 * 1024)
    # Raised to less than 48 KiB, the attribute still opts in: the tile's 4,224 bytes and 46 KiB of shared_mem
    # pass 48 KiB in all, which an A100 allows (the hint said to set it to 47,104; doing so changed nothing).
    with pytest.raises(cuda.KernelError, match=r"max_dynamic_shared_size_bytes = 47104"):
        other((2,), (32,), (y, out), shared_mem=46 * 1024)
    other.max_dynamic_shared_size_bytes = 46 * 1024
    out[:] = 0
    other((2,), (32,), (y, out), shared_mem=46 * 1024)
    np.testing.assert_array_equal(out, 2.0)


def test_a_launch_with_56_kib_of_dynamic_shared_memory_runs_once_opted_in_on_both_backends(backend, xp):
    """On a GPU (make gpu-check) this sets CuPy's attribute for real: every GPU since Volta gives a block at least
    64 KiB in all (a T4's most), the kernel's tile of 4,224 bytes included."""
    kernel = cuda.RawModule(code=LIMITS, backend=backend).get_function("tile_and_dynamic")
    y, out = xp.ones(32, xp.float32), xp.zeros(32, xp.float32)
    with pytest.raises(ValueError, match="unless (the kernel|it) opts in"):  # (a GPU: 48 KiB less the static tile)
        kernel((2,), (32,), (y, out), shared_mem=56 * 1024)
    kernel.max_dynamic_shared_size_bytes = 56 * 1024
    assert kernel.max_dynamic_shared_size_bytes == 56 * 1024
    kernel((2,), (32,), (y, out), shared_mem=56 * 1024)
    np.testing.assert_array_equal(cuda.asnumpy(out), 2.0)


def test_max_dynamic_shared_size_bytes_is_cupys_attribute_on_a_gpu():
    """On CuPy the attribute is the compiled kernel's: read from it, set on it, and a GPU's refusal said in words."""
    class CUDADriverError(Exception):
        pass

    class Function:  # what cupy.RawKernel has: the GPU's answer, 48 KiB less the static arrays at first
        def __init__(self):
            self.value = 48 * 1024 - 4224

        @property
        def max_dynamic_shared_size_bytes(self):
            return self.value

        @max_dynamic_shared_size_bytes.setter
        def max_dynamic_shared_size_bytes(self, value):
            if value > 99 * 1024:  # (an RTX 4090's limit)
                raise CUDADriverError("CUDA_ERROR_INVALID_VALUE: invalid argument")
            self.value = value

    kernel = cuda.RawModule(code=LIMITS, backend="cpu").get_function("tile_and_dynamic")
    kernel.backend, kernel._compiled = "cupy", types.SimpleNamespace(kernel=Function())
    assert kernel.max_dynamic_shared_size_bytes == 48 * 1024 - 4224
    with pytest.raises(ValueError, match=r"shared_mem=45,000 bytes, .*at most 44,928 .*\(48 KiB less its static "
                                         r"__shared__ arrays, unless it opts in\)"):
        kernel._launch_shape((1,), (32,), 45000)
    kernel.max_dynamic_shared_size_bytes = 64 * 1024
    assert kernel._compiled.kernel.value == 64 * 1024 and kernel.max_dynamic_shared_size_bytes == 64 * 1024
    kernel._launch_shape((1,), (32,), 64 * 1024)
    with pytest.raises(ValueError, match=r"this GPU refuses max_dynamic_shared_size_bytes=204,800 \(CUDA_ERROR_INVALID"):
        kernel.max_dynamic_shared_size_bytes = 200 * 1024  # (more than the CPU backend's A100 too: the GPU decides)
    assert kernel.max_dynamic_shared_size_bytes == 64 * 1024


DEVICE_HEAP = r"""
extern "C" __global__ void scratch(float* out, int extra) {
    float* buf = (float*)malloc(4 * sizeof(float));  // MALLOC
    int* counts = static_cast<int*>(malloc(2 * sizeof(int)));
    float* more = new float[2];  // NEW
    counts[0] = 0;
    for (int j = 0; j < 4 + (extra > 0); ++j) buf[j] = j;  // HEAP: one past the block when extra > 0
    more[1 + (extra < 0)] = buf[3];  // MORE: past new's block when extra < 0
    out[threadIdx.x] = more[1] + counts[0];
    free(buf);
    free(counts);
    delete[] more;
}
extern "C" __global__ void half_warps(float* out, int width) {
    float v = threadIdx.x;
    v += __shfl_down_sync(0xffffffff, v, 1, width);  // WIDTH
    out[threadIdx.x] = v;
}
"""


def test_device_malloc_blocks_are_bounds_checked_and_shuffle_widths_must_be_powers_of_two():
    line = lambda marker: line_of(marker, DEVICE_HEAP)
    module = cuda.RawModule(code=DEVICE_HEAP, backend="cpu")
    out = np.zeros(4, np.float32)
    module.get_function("scratch")((1,), (4,), (out, 0))
    np.testing.assert_array_equal(out, 3.0)
    with pytest.raises(cuda.KernelError, match=r"accessed element 4 of a block that malloc made at line \d+, "
                                               r"which holds 4 4-byte elements") as info:
        module.get_function("scratch")((1,), (4,), (out, 1))
    assert info.value.line == line("HEAP")
    assert f"malloc made at line {line('MALLOC')}," in str(info.value)
    # `new float[2]`'s pointer comes raw from the new-expression: it gets its block's bounds too (it had none)
    with pytest.raises(cuda.KernelError, match=r"accessed element 2 of a block that new\[\] made at line \d+, "
                                               r"which holds 2 4-byte elements") as info:
        module.get_function("scratch")((1,), (4,), (out, -1))
    assert info.value.line == line("MORE") and f"new[] made at line {line('NEW')}," in str(info.value)
    out = np.zeros(32, np.float32)
    module.get_function("half_warps")((1,), (32,), (out, 16))
    assert out[14] == 14 + 15 and out[15] == 15 + 15  # lane 15 has no lane 16 in its half: it gets its own
    with pytest.raises(cuda.KernelError, match=r"__shfl_down_sync at line \d+ with width 12, but the width must be a "
                                               r"power of two") as info:
        module.get_function("half_warps")((1,), (32,), (out, 12))
    assert info.value.line == line("WIDTH")
    assert_alive()


POINTER_TABLES = r"""
extern "C" __global__ void rows_of(const float* a, float* out, int how, int extra) {
    const float** rows;
    if (how == 0) rows = (const float**)malloc(4 * sizeof(const float*));
    else if (how == 1) rows = static_cast<const float**>(malloc(4 * sizeof(float*)));
    else if (how == 2) rows = reinterpret_cast<const float**>(malloc(4 * sizeof(const float*)));
    else rows = new const float*[4];
    for (int r = 0; r < 4 + extra; r++) rows[r] = a + 4 * r;  // TABLE
    out[0] = rows[1][1] + rows[3][3];
    out[1] = sizeof(float*) == sizeof(rows[0]);  // a pointer stored in memory is one size, however it is named
    if (how == 3) delete[] rows; else free(rows);
}
"""


@pytest.mark.parametrize("how", ["(const float**)malloc", "static_cast", "reinterpret_cast", "new const float*[4]"])
def test_a_table_of_pointers_from_malloc_or_new_runs_and_is_bounds_checked(how):
    """`float** rows = (float**)malloc(n * sizeof(float*))` (and new float*[n], and the C++ casts): a
    pointer stored in memory is a checked one here, so sizeof(float*), the casts and new name that type,
    and the block holds n of them. (They did not compile: float** cannot become a checked pointer.)"""
    kernel = cuda.RawKernel(POINTER_TABLES, "rows_of", backend="cpu")
    index = ["(const float**)malloc", "static_cast", "reinterpret_cast", "new const float*[4]"].index(how)
    a, out = np.arange(16, dtype=np.float32), np.zeros(2, np.float32)
    kernel((1,), (1,), (a, out, index, 0))
    np.testing.assert_array_equal(out, [5 + 15, 1])
    made = "new[]" if index == 3 else "malloc"
    with pytest.raises(cuda.KernelError, match=rf"accessed element 4 of a block that {re.escape(made)} made at line "
                                               r"\d+, which holds 4 pointers \(valid indices 0 to 3\)") as info:
        kernel((1,), (1,), (a, out, index, 1))
    assert info.value.line == line_of("TABLE", POINTER_TABLES)
    assert_alive()


def test_one_pointer_from_new_and_a_value_initialised_table_of_them():
    src = r"""
extern "C" __global__ void k(float* a, float* out) {
    float** one = new float*(a + 3);
    float** two = new float*[2]();
    two[1] = *one + 2;
    out[0] = (*one)[0] + two[1][0] + (two[0] == nullptr);
    delete one;
    delete[] two;
}"""
    out = np.zeros(1, np.float32)
    cuda.RawKernel(src, "k", backend="cpu")((1,), (1,), (np.arange(8, dtype=np.float32), out))
    assert out[0] == 3 + 5 + 1


def test_sizeof_of_a_pointer_parameter_divided_for_a_length_gets_a_warning():
    """`int n = sizeof(x) / sizeof(x[0]);` of a parameter: a pointer's size, on a GPU (2 floats) as here (8),
    so the warning says so; sizeof of an element, of `*x`, and a pointer's own size copied are not it."""
    src = r"""
extern "C" __global__ void k(const float* x, float y[], float* out) {
    int n = sizeof(x) / sizeof(x[0]);                 // COUNT
    const float* q;
    memcpy(&q, &x, sizeof(x));                        // (a pointer copied: its own size is meant)
    int i = threadIdx.x;
    if (i < n) out[i] = q[i] + sizeof(*x) + sizeof y[0] + sizeof y / 4;   // SECOND
}"""
    x, out = np.arange(16, dtype=np.float32), np.zeros(16, np.float32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cuda.RawKernel(src, "k", backend="cpu", sanitize=False)((1,), (16,), (x, x, out))
    messages = [str(w.message) for w in caught if issubclass(w.category, cuda.KernelWarning)]
    assert len(messages) == 2, messages
    assert (f"line {line_of('COUNT', src)}: sizeof(x) is the size of a pointer (8 bytes on a GPU" in messages[0]
            and "Pass the length as a parameter" in messages[0])
    assert f"line {line_of('SECOND', src)}: sizeof(y) is the size of a pointer" in messages[1]
    np.testing.assert_array_equal(out[:8], np.arange(8) + 8 + 8)  # (n is 32 / 4 here: a pointer is 32 bytes)


def test_a_device_malloc_sized_in_elements_not_bytes_is_explained():
    # The CUDA Programming Guide's per-block allocation, with its size in elements: malloc counts bytes
    source = r"""
extern "C" __global__ void per_block(int* out) {
    __shared__ int* data;
    if (threadIdx.x == 0) {
        size_t size = blockDim.x * 64;
        data = (int*)malloc(size);
    }
    __syncthreads();
    for (int i = 0; i < 64; ++i) data[i * blockDim.x + threadIdx.x] = threadIdx.x;
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = data[63 * blockDim.x + threadIdx.x];
    __syncthreads();
    if (threadIdx.x == 0) free(data);
}
"""
    out = np.zeros(32, np.int32)
    with pytest.raises(cuda.KernelError) as info:
        cuda.RawKernel(source, "per_block", backend="cpu")((2,), (16,), (out,))
    assert ("hint: malloc counts bytes: malloc(size) at line 6 asks for size (= blockDim.x * 64) bytes, which hold "
            "256 elements of 4 bytes. For that many elements, ask for the count times their size: malloc(count * "
            "sizeof(int)).") in str(info.value)
    fixed = source.replace("blockDim.x * 64;", "blockDim.x * 64 * sizeof(int);")
    cuda.RawKernel(fixed, "per_block", backend="cpu")((2,), (16,), (out,))  # the twin
    np.testing.assert_array_equal(out, np.tile(np.arange(16), 2))


HEAP_MISUSE = r"""
struct Counter {
    int* hits;
    __device__ Counter() { hits = (int*)malloc(sizeof(int)); *hits = 1; }
    __device__ ~Counter() { free(hits); }
};
extern "C" __global__ void twice(float* out, int how) {
    float* p = (float*)malloc(4 * sizeof(float));
    int* q = new int[2];
    p[0] = 1.0f;
    q[0] = 2;
    free(p);  // FIRST
    delete[] q;  // FIRST DELETE
    if (how == 1) free(p);  // AGAIN
    if (how == 2) delete[] q;  // DELETE AGAIN
    if (how == 3) free(out);  // NOT OURS
    if (how == 4) out[threadIdx.x] = p[0];  // AFTER
    if (how == 5) q[1] = 3;  // WRITE AFTER
}
extern "C" __global__ void shared_block(float* out, int early) {
    __shared__ float* buf;
    if (threadIdx.x == 0) buf = (float*)malloc(32 * sizeof(float));
    __syncthreads();
    buf[threadIdx.x] = threadIdx.x;
    __syncthreads();
    if (threadIdx.x == 0 && early) free(buf);  // EARLY
    __syncthreads();
    out[threadIdx.x] = buf[31 - threadIdx.x];  // LATE READ
    __syncthreads();
    if (threadIdx.x == 0 && !early) free(buf);
}
extern "C" __global__ void objects(float* out) {
    Counter* many = new Counter[3];
    Counter* one = new Counter;
    out[threadIdx.x] = many[2].hits[0] + *one->hits;
    delete one;
    delete[] many;
}
"""


LINKED_LIST = r"""
struct Node { int key; Node* next; };
extern "C" __global__ void walk(float* out, int n) {
    Node* head = nullptr;
    for (int i = 0; i < n; i++) { Node* x = new Node; x->key = i; x->next = head; head = x; }
    int s = 0;
    while (head) { s += head->key; delete head; head = head->next; }  // USED AFTER DELETE
    out[threadIdx.x] = s;
}
"""


@pytest.mark.parametrize("sanitize", [False, True])
def test_a_pointer_read_from_a_freed_block_is_named_as_such_not_as_element_minus_one(sanitize):
    """Red team 12-07: `delete head; head = head->next;` — the plain launch said 'element -1 ... which holds -1
    elements (valid indices 0 to -2)' (the pointer read from the block's 0xFF fill); the sanitizer names the read."""
    walk = cuda.RawKernel(LINKED_LIST, "walk", backend="cpu", sanitize=sanitize)
    expected = (r"reads byte 8 of a \d+-byte block that malloc or new returned, after the block was freed at line 7"
                if sanitize else r"through a pointer that holds no valid address: the pointer was read from memory "
                r"that holds no pointer, a block already freed.*Node\* next = head->next; delete head; head = next;")
    with pytest.raises(cuda.KernelError, match=rf"(?s){expected}") as info:
        walk((1,), (4,), (np.zeros(4, np.float32), np.int32(5)))
    assert "-1" not in str(info.value) and info.value.line == 7


@pytest.mark.parametrize("sanitize", [False, True])
def test_device_heap_misuse_is_a_fault_not_a_crash_of_the_process(sanitize):
    """free/delete twice, or of a pointer no malloc returned: libc would abort the whole process."""
    line = lambda marker: line_of(marker, HEAP_MISUSE)
    module = cuda.RawModule(code=HEAP_MISUSE, backend="cpu", sanitize=sanitize)
    twice, out = module.get_function("twice"), np.zeros(4, np.float32)
    twice((2,), (4,), (out, 0))  # each thread frees its own blocks once
    with pytest.raises(cuda.KernelError, match=rf"frees a block at line {line('AGAIN')} that was freed already at "
                                               rf"line {line('FIRST')}: on a GPU a double free") as info:
        twice((1,), (4,), (out, 1))
    assert info.value.line == line("AGAIN") and info.value.thread == (0, 0, 0)
    with pytest.raises(cuda.KernelError, match=rf"freed already at line {line('FIRST DELETE')}"):
        twice((1,), (4,), (out, 2))
    with pytest.raises(cuda.KernelError, match=r"free or delete at line \d+ on a pointer \(out, an argument array\) "
                                               r"that malloc or new in kernel code did not return") as info:
        twice((1,), (4,), (out, 3))
    assert info.value.line == line("NOT OURS")
    objects = module.get_function("objects")
    objects((1,), (4,), (out,))  # constructors and destructors of new'd objects, and their own mallocs
    np.testing.assert_array_equal(out, 2.0)
    shared_block = module.get_function("shared_block")
    shared_block((1,), (32,), (out := np.zeros(32, np.float32), 0))
    np.testing.assert_array_equal(out, np.arange(32)[::-1])
    if sanitize:  # the sanitizer names a use after free; without it the freed block reads as NaN
        with pytest.raises(cuda.KernelError, match=rf"reads byte 0 of a 16-byte block that malloc or new returned, "
                                                   rf"after the block was freed at line {line('FIRST')}") as info:
            twice((1,), (4,), (np.zeros(4, np.float32), 4))
        assert info.value.line == line("AFTER")
        with pytest.raises(cuda.KernelError, match=r"writes byte 4 of an 8-byte block .* freed at line "
                                                   rf"{line('FIRST DELETE')}"):
            twice((1,), (4,), (np.zeros(4, np.float32), 5))
        with pytest.raises(cuda.KernelError, match=rf"reads byte 124 of a 128-byte block .*freed at line "
                                                   rf"{line('EARLY')}") as info:
            shared_block((1,), (32,), (out, 1))
        assert info.value.line == line("LATE READ")
    else:
        twice((1,), (4,), (out := np.zeros(4, np.float32), 4))
        assert np.isnan(out).all()  # freed blocks are filled with 0xFF bytes, never the old values
    assert_alive()


CONSTANT_WRITES = r"""
__constant__ float weights[4];
__constant__ int offset;
extern "C" __global__ void cast_away(float* out, int how) {
    float* w = const_cast<float*>(weights);
    if (how == 0) out[threadIdx.x] = weights[threadIdx.x] + offset;
    if (how == 1) w[threadIdx.x] = 0.0f;  // CONST CAST
    if (how == 2) ((float*)&weights[0])[threadIdx.x] = 1.0f;  // C CAST
    if (how == 3) weights[threadIdx.x] = 2.0f;  // DIRECT
    if (how == 4) atomicAdd((int*)&offset, 1);  // ATOMIC
    if (how == 5) out[threadIdx.x] = w[threadIdx.x + 2];  // PAST
}
"""


def test_writes_into_constant_memory_are_caught_and_it_holds_64_kib():
    line = lambda marker: line_of(marker, CONSTANT_WRITES)
    module = cuda.RawModule(code=CONSTANT_WRITES, backend="cpu", sanitize=True)
    module.get_global("weights")[...] = np.arange(4, dtype=np.float32).view(np.uint8)
    module.get_global("offset")[...] = np.array([10], np.int32).view(np.uint8)
    run, out = module.get_function("cast_away"), np.zeros(4, np.float32)
    run((1,), (4,), (out, 0))
    np.testing.assert_array_equal(out, [10, 11, 12, 13])
    for how, marker, what in [(1, "CONST CAST", "writes weights"), (2, "C CAST", "writes weights"),
                              (3, "DIRECT", "writes weights"), (4, "ATOMIC", "atomically updates offset")]:
        with pytest.raises(cuda.KernelError, match=rf"{what}\[0\], but \w+ is __constant__ memory, which kernels may "
                                                   r"only read") as info:
            run((1,), (4,), (out, how))
        assert info.value.line == line(marker), marker
    with pytest.raises(cuda.KernelError, match=r"accessed weights\[4\], but weights has 4 elements") as info:
        run((1,), (4,), (out, 5))  # a pointer made from a __constant__ array keeps its bounds
    assert info.value.line == line("PAST")
    np.testing.assert_array_equal(module.get_global("weights").view(np.float32), [0, 1, 2, 3])
    too_big = "__constant__ float table[12000];\n__constant__ int lut[5000];\n" \
              'extern "C" __global__ void k(float* out) { out[0] = table[lut[0]]; }'
    with pytest.raises(cuda.CompileError, match=r"__constant__ variables need 68,000 bytes \(table \(48,000 bytes\), "
                                                r"lut \(20,000 bytes\)\), but a GPU has 65,536 bytes"):
        cuda.RawKernel(too_big, "k", backend="cpu")((1,), (1,), (np.zeros(1, np.float32),))
    assert_alive()


SCALAR_CONSTANT = r"""
__constant__ int offset;
extern "C" __global__ void bump(int* out, int how) {
    out[threadIdx.x] = offset + threadIdx.x;
    if (how == 1 && threadIdx.x == 0) offset = 5;  // ASSIGN
    if (how == 2 && threadIdx.x == 0) offset++;  // INCREMENT
}
"""


@pytest.mark.parametrize("sanitize", [False, True])
def test_writes_into_constant_memory_are_caught_without_the_sanitizer_and_undone(sanitize):
    """A plain build (memcheck only) does not check stores, and a __constant__ scalar is no checked
    array even with the sanitizer: constant memory is compared after the launch, and put back."""
    module = cuda.RawModule(code=CONSTANT_WRITES, backend="cpu", sanitize=sanitize)
    module.get_global("weights")[...] = np.arange(4, dtype=np.float32).view(np.uint8)
    module.get_global("offset")[...] = np.array([10], np.int32).view(np.uint8)
    run, out = module.get_function("cast_away"), np.zeros(4, np.float32)
    for how, marker, element in [(1, "CONST CAST", r"weights\[\d\]"), (2, "C CAST", r"weights\[0\]"),
                                 (3, "DIRECT", r"weights\[0\]"), (4, "ATOMIC", r"offset(\[0\])?")]:
        with pytest.raises(cuda.KernelError, match=element + r", but \w+ is __constant__ memory, which "
                                                   r"kernels may only read") as info:
            run((1,), (4,), (out, how))
        # (the sanitizer names the store's line; without it, the first line that writes or casts the variable:
        # here `w = const_cast<float*>(weights)` for weights, for offset its atomic)
        cast = CONSTANT_WRITES[:CONSTANT_WRITES.index("const_cast")].count("\n") + 1
        first = line_of(marker, CONSTANT_WRITES) if sanitize or how == 4 else cast
        assert info.value.line == first, marker
        if not sanitize and how != 4:
            assert f"line {line_of(marker, CONSTANT_WRITES)}" in str(info.value) or how == 1
        np.testing.assert_array_equal(module.get_global("weights").view(np.float32), [0, 1, 2, 3])
        assert module.get_global("offset").view(np.int32)[0] == 10
    bump = cuda.RawModule(code=SCALAR_CONSTANT, backend="cpu", sanitize=sanitize)
    bump.get_global("offset")[...] = np.array([7], np.int32).view(np.uint8)
    ints = np.zeros(4, np.int32)
    bump.get_function("bump")((1,), (4,), (ints, 0))
    assert ints.tolist() == [7, 8, 9, 10]
    for how, marker in [(1, "ASSIGN"), (2, "INCREMENT")]:
        with pytest.raises(cuda.KernelError, match=r"changed offset, but offset is __constant__ memory") as info:
            bump.get_function("bump")((1,), (4,), (ints, how))
        # (compared after the launch: the message names every line that writes it, the first as its line)
        assert info.value.line == line_of("ASSIGN", SCALAR_CONSTANT)
        assert f"(or line {line_of('INCREMENT', SCALAR_CONSTANT)}: each writes or casts it)" in str(info.value)
        assert bump.get_global("offset").view(np.int32)[0] == 7


CAST_AWAY = r"""
extern "C" __global__ void scale(const float* x, float* y, int how) {
    float* w = (float*)x;                          // CAST
    if (how == 1) w[threadIdx.x] = 9.0f;           // WRITE
    y[threadIdx.x] = 2.0f * w[threadIdx.x];
}
"""


def test_a_const_parameter_written_through_a_cast_is_caught_without_the_sanitizer_and_undone():
    """The issue's missed bug in a plain (timing) launch: a `const float*` cast to `float*` and written.
    Without the sanitizer the store is not checked; the array is compared after the launch instead
    (only for a const parameter the source casts to a pointer without const), and put back."""
    run = cuda.RawKernel(CAST_AWAY, "scale", backend="cpu", sanitize=False)
    for writeable in (True, False):
        x = np.arange(4, dtype=np.float32)
        x.flags.writeable = writeable
        y = np.zeros(4, np.float32)
        run((1,), (4,), (x, y, 0))  # the cast alone, to read, is no bug
        assert y.tolist() == [0, 2, 4, 6]
        with pytest.raises(cuda.KernelError, match=r"wrote into x\[0\], but x is a `const` parameter") as info:
            run((1,), (4,), (x, y, 1))
        assert info.value.line == line_of("CAST", CAST_AWAY)
        assert x.tolist() == [0, 1, 2, 3]


def test_a_const_parameter_cast_to_read_in_place_is_no_write_through_it():
    """`k(x, x)`: the kernel reads `in` through a float4 cast and writes `out`, the same array. Without
    the sanitizer the comparison after the launch would take the writes through `out` for writes
    through the cast: no report, and the results stay."""
    source = r"""
extern "C" __global__ void scale4(const float* in, float* out, int n4) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 v = ((float4*)in)[i];
        v.x *= 2; v.y *= 2; v.z *= 2; v.w *= 2;
        ((float4*)out)[i] = v;
    }
}"""
    for sanitize in (False, True):
        x = np.arange(16, dtype=np.float32)
        cuda.RawKernel(source, "scale4", backend="cpu", sanitize=sanitize)((1,), (4,), (x, x, 4))
        np.testing.assert_array_equal(x, 2 * np.arange(16, dtype=np.float32))


def test_a_float4_view_of_an_argument_that_starts_off_its_boundary_is_misaligned():
    source = r"""
extern "C" __global__ void quads(const float* a, float* out) {
    float4 v = reinterpret_cast<const float4*>(a)[threadIdx.x];  // QUAD
    out[threadIdx.x] = v.x + v.y + v.z + v.w;
}"""
    quads = cuda.RawKernel(source, "quads", backend="cpu")
    x, out = np.arange(20, dtype=np.float32), np.zeros(4, np.float32)
    assert x.ctypes.data % 16 == 0  # NumPy's allocations start on 16-byte boundaries (at least)
    quads((1,), (4,), (x[4:], out))  # 16 bytes in: still on a boundary
    np.testing.assert_array_equal(out, x[4:].reshape(4, 4).sum(axis=1))
    with pytest.raises(cuda.KernelError, match=r"a itself starts 4 bytes past a 16-byte boundary \(a NumPy view such "
                                               r"as x\[1:\]\?\)") as info:
        quads((1,), (4,), (x[1:17], out))
    assert info.value.line == 3
    quads((1,), (4,), (x[1:17].copy(), out))  # a copy starts a fresh allocation
    np.testing.assert_array_equal(out, x[1:17].reshape(4, 4).sum(axis=1))


@pytest.mark.parametrize("item, vector, per", [("double", "double2", 2), ("float", "float2", 2), ("int", "int4", 4),
                                               ("float", "float4", 4)])
def test_a_misaligned_cast_is_told_the_alignment_of_its_own_vector_in_its_own_items(item, vector, per):
    """Red team 12-07: a double2 read at an odd double was told "a float4 needs 16: ... a multiple of 4 floats"."""
    source = f"""
extern "C" __global__ void pairs(const {item}* in, {item}* out) {{
    {vector} v = *reinterpret_cast<const {vector}*>(in + {per} * threadIdx.x + 1);
    out[threadIdx.x] = v.x;
}}"""
    dtype = {"double": np.float64, "float": np.float32, "int": np.int32}[item]
    size = np.dtype(dtype).itemsize * per
    with pytest.raises(cuda.KernelError, match=rf"an? {vector} needs {size}: in \+ i with i a multiple of {per} {item}s"):
        cuda.RawKernel(source, "pairs", backend="cpu", sanitize=False)((1,), (4,), (np.zeros(32, dtype), np.zeros(4, dtype)))


def test_a_pointer_to_rows_keeps_the_bounds_of_what_it_points_into():
    """`const float (*m)[4] = (const float (*)[4])a;` reads a flat array as rows: m[i][j] is checked
    against a's end (and a local array's), and rows of a __shared__ 2-D array work as in C."""
    source = r"""
extern "C" __global__ void rows(const float* a, float* out, int col) {
    const float (*m)[4] = (const float (*)[4])a;
    float (*o)[4] = reinterpret_cast<float (*)[4]>(out);
    o[threadIdx.x][col] = m[threadIdx.x][col] + (*m)[col];  // ROWS
}
extern "C" __global__ void cube(const float* a, float* out) {
    const float (*c)[3][4] = (const float (*)[3][4])a;
    out[threadIdx.x] = c[1][threadIdx.x][0];  // CUBE
}
extern "C" __global__ void local_rows(float* out) {
    float r[3][4] = {};
    float (*p)[4] = r;
    p[threadIdx.x][0] = 1.0f;  // LOCAL
    out[threadIdx.x] = r[0][0];
}
extern "C" __global__ void shared_rows(const float* a, float* out) {
    __shared__ float s[4][8];
    float (*rows)[8] = s;
    rows[threadIdx.x / 8][threadIdx.x % 8] = a[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = rows[3 - threadIdx.x / 8][threadIdx.x % 8];
}"""
    line = lambda marker: next(i for i, t in enumerate(source.split("\n"), 1) if t.endswith(f"// {marker}"))
    module = cuda.RawModule(code=source, backend="cpu", sanitize=False)
    a, out = np.arange(16, dtype=np.float32), np.zeros(16, np.float32)
    module.get_function("rows")((1,), (4,), (a, out, 3))
    np.testing.assert_array_equal(out.reshape(4, 4)[:, 3], a.reshape(4, 4)[:, 3] + 3)
    with pytest.raises(cuda.KernelError, match=r"accessed a\[16\], but a has 16 elements") as info:
        module.get_function("rows")((1,), (4,), (a, out, 4))  # thread 3's m[3][4] is one past a's end
    assert info.value.line == line("ROWS") and info.value.thread == (3, 0, 0)
    with pytest.raises(cuda.KernelError, match=r"accessed a\[24\], but a has 24 elements") as info:
        module.get_function("cube")((1,), (4,), (np.arange(24, dtype=np.float32), out))  # c[1][3] is past the end
    assert info.value.line == line("CUBE") and info.value.thread == (3, 0, 0)
    with pytest.raises(cuda.KernelError, match=r"element 12 through a pointer made from the local array r \(declared "
                                               r"at line \d+\), which holds 12 elements") as info:
        module.get_function("local_rows")((1,), (4,), (out,))
    assert info.value.line == line("LOCAL") and info.value.thread == (3, 0, 0)
    out = np.zeros(32, np.float32)
    cuda.RawKernel(source, "shared_rows", backend="cpu")((1,), (32,), (np.arange(32, dtype=np.float32), out))
    np.testing.assert_array_equal(out.reshape(4, 8), np.arange(32).reshape(4, 8)[::-1])


@pytest.mark.parametrize("sanitize", [False, True])
def test_a_device_functions_pointer_to_rows_parameter_keeps_the_bounds_of_its_argument(sanitize):
    """`float (*m)[4]` and `const float m[][4]` parameters of a __device__ function stayed raw pointers: m[r][c] past
    a __shared__, __device__, local or argument array's last row read and wrote silently. They are checked
    pointers to rows now, as a kernel's are; a template's `const T (*m)[N]` (which did not compile with an array
    passed to it) deduces N from the array."""
    source = r"""
__device__ float rowsum(const float (*m)[4], int r) { float s = 0; for (int c = 0; c < 4; ++c) s += m[r][c]; return s; }  // ROWSUM
__device__ void fill(float m[][4], int rows, float v) { for (int r = 0; r < rows; ++r) for (int c = 0; c < 4; ++c) m[r][c] = v; }  // FILL
template <class T, int N> __device__ T first_column(const T (*m)[N], int rows) { T s = 0; for (int r = 0; r < rows; ++r) s += m[r][0]; return s; }  // FIRST
__device__ float table[3][4];
extern "C" __global__ void rows(const float* a, float* out, int last) {
    __shared__ float s[8][4];
    float l[2][4];
    int t = threadIdx.x;
    if (t < 8) for (int c = 0; c < 4; ++c) s[t][c] = t;
    if (t == 0) fill(table, 3, 2.0f);
    fill(l, 2, 1.0f);
    __syncthreads();
    out[t] = rowsum(s, t % (last + 1)) + rowsum(table, 2) + rowsum(l, 1) + rowsum((const float (*)[4])a, t % 8)
             + first_column(l, last == 9 ? 3 : 2);
}
extern "C" __global__ void too_many(float* out, int rows) {
    float l[2][4];
    fill(l, rows, 1.0f);
    out[threadIdx.x] = l[1][3];
}
"""
    module = cuda.RawModule(code=source, backend="cpu", sanitize=sanitize)
    a, out = np.arange(32, dtype=np.float32), np.zeros(32, np.float32)
    module.get_function("rows")((1,), (32,), (a, out, 7))
    t = np.arange(32)
    np.testing.assert_array_equal(out, 4 * (t % 8) + 8 + 4 + a.reshape(8, 4)[t % 8].sum(axis=1) + 2)
    with pytest.raises(cuda.KernelError, match=r"accessed s\[32\] through a pointer into the __shared__ array s, which holds 32") as info:
        module.get_function("rows")((1,), (32,), (a, out, 8))  # rowsum(s, 8): past s's last row
    assert info.value.line == line_of("ROWSUM", source)
    with pytest.raises(cuda.KernelError, match=r"local array l") as info:
        module.get_function("rows")((1,), (8,), (a, out, 9))  # first_column(l, 3): a template's N deduced, checked
    assert info.value.line == line_of("FIRST", source)
    with pytest.raises(cuda.KernelError, match=r"local array l") as info:
        module.get_function("too_many")((1,), (1,), (out, 3))  # fill(l, 3, ...): a third row of two
    assert info.value.line == line_of("FILL", source)


@pytest.mark.parametrize("sanitize", [False, True])
def test_pointers_made_from_a_local_array_keep_its_bounds(sanitize):
    source = r"""
__device__ float sum5(const float* v) { float s = 0; for (int j = 0; j < 5; j++) s += v[j]; return s; }  // SUM5
extern "C" __global__ void tail(float* out, int from_address) {
    float r[4] = {0, 1, 2, 3};
    float* p = from_address ? &r[2] : r + 2;
    out[threadIdx.x] = p[threadIdx.x];                // TAIL
}
extern "C" __global__ void whole(float* out) {
    float w[4] = {0, 1, 2, 3};
    out[threadIdx.x] = sum5(&w[0]);
}
extern "C" __global__ void fine(float* out) {
    float r[4] = {0, 1, 2, 3}, s[2];
    sincosf(r[1], &s[0], &s[1]);
    float* p = &r[1];
    out[threadIdx.x] = p[threadIdx.x % 3] + s[0] * s[0] + s[1] * s[1];
}"""
    line = lambda marker: line_of(marker, source)
    module = cuda.RawModule(code=source, backend="cpu", sanitize=sanitize)
    out = np.zeros(4, np.float32)
    for from_address in (1, 0):
        with pytest.raises(cuda.KernelError, match=r"accessed element 4 through a pointer made from a local or "
                                                   r"__device__ array, which holds 4 elements") as info:
            module.get_function("tail")((1,), (4,), (out, from_address))
        assert info.value.line == line("TAIL") and info.value.thread == (2, 0, 0)
    with pytest.raises(cuda.KernelError, match=r"accessed element 4 through a pointer made from a local or __device__ "
                                               r"array, which holds 4") as info:  # (r or w: two arrays of 4)
        module.get_function("whole")((1,), (1,), (out,))
    assert info.value.line == line("SUM5")
    module.get_function("fine")((1,), (4,), (out,))
    np.testing.assert_allclose(out, [2, 3, 4, 2], rtol=1e-6)
    one = cuda.RawKernel(source.split("extern")[0] + "extern" + source.split("extern")[1], "tail", backend="cpu")
    with pytest.raises(cuda.KernelError, match=r"made from the local array r \(declared at line 4\)"):
        one((1,), (4,), (out, 1))  # one array of 4 elements in the source: named


def test_a_right_guard_given_a_size_larger_than_the_array_says_the_size_passed_is_wrong():
    guarded = r"""
extern "C" __global__ void k(float* p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = 1;
}
extern "C" __global__ void early(float* p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    p[i] = 2;
}
extern "C" __global__ void stride(float* p, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        p[i] = 3;
}
extern "C" __global__ void quads(float4* q, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) q[i].x = 4;
}
extern "C" __global__ void view(float* a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float4* q = reinterpret_cast<float4*>(a);
    if (i < n) q[i].y = 5;
}"""
    module = cuda.RawModule(code=guarded, backend="cpu")
    a = np.zeros(100, np.float32)
    with pytest.raises(cuda.KernelError, match=r"accessed p\[100\]") as info:
        module.get_function("k")((1,), (128,), (a, 128))
    assert ("hint: Line 4 checks `i < n`, and this launch passed n = 128, but p has 100 elements, so the check lets i "
            "reach 127 (i = 100 here). The check is right; the size is not: pass p's length as n (100), or give p n "
            "elements.") in str(info.value)
    with pytest.raises(cuda.KernelError, match=r"Line 8 checks `if \(i >= n\) return`, and this launch passed n = 130"):
        module.get_function("early")((2,), (128,), (a, 130))
    with pytest.raises(cuda.KernelError, match=r"Line 12 checks `i < n`, and this launch passed n = 101"):
        module.get_function("stride")((1,), (32,), (a, 101))
    with pytest.raises(cuda.KernelError) as info:  # n counts the floats, the kernel's q[i] steps over 4
        module.get_function("quads")((1,), (128,), (a, 100))
    assert ("Line 17 checks `i < n`, and this launch passed n = 100: that counts q's floats, but q[i] steps over 4 of "
            "them at a time, and q holds 25 such steps. Pass the number of whole elements, n / 4 = 25") in str(info.value)
    with pytest.raises(cuda.KernelError, match=r"counts a's floats, but q\[i\] steps over 4 of them at a time"):
        module.get_function("view")((1,), (128,), (a, 100))
    module.get_function("k")((1,), (128,), (a, 100))  # the size of the array: right
    module.get_function("quads")((1,), (32,), (a, 25))
    assert (a.reshape(25, 4)[:, 0] == 4).all() and (a.reshape(25, 4)[:, 1:] == 1).all()
    with pytest.raises(cuda.KernelError) as info:  # a size the array holds: the index is what is wrong
        cuda.RawKernel(guarded.replace("p[i] = 1", "p[i + 1] = 1"), "k", backend="cpu")((1,), (128,), (a, 100))
    assert "The check is right" not in str(info.value)
    image = r"""
extern "C" __global__ void paint(float* a, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) a[y * w + x] = 1;
}"""
    paint = cuda.RawKernel(image, "paint", backend="cpu")
    with pytest.raises(cuda.KernelError) as info:  # a 10 × 16 image given as 16 × 16
        paint((1, 1), (16, 16), (np.zeros((10, 16), np.float32), 16, 16))
    assert ("hint: The checks `y < h` and `x < w` at line 5 are right, but this launch passed h = 16 and w = 16, 256 "
            "elements, and a has 160 (10 rows of 16), so row y = 10 is past its end. Pass a's own sizes (h = 10), or "
            "give a h × w elements.") in str(info.value)
    picture = np.zeros((10, 16), np.float32)
    paint((1, 1), (16, 16), (picture, 16, 10))
    assert (picture == 1).all()
    with pytest.raises(cuda.KernelError) as info:  # sizes that fit, swapped in the index: not this hint
        cuda.RawKernel(image.replace("y * w + x", "x * w + y"), "paint", backend="cpu")(
            (1, 1), (16, 16), (np.zeros((10, 16), np.float32), 16, 10))
    assert "are right, but this launch passed" not in str(info.value)
    assert "`x` counts columns (it stays below the width w), yet it is multiplied by w" in str(info.value)
    with pytest.raises(cuda.KernelError) as info:  # the row multiplied by the height: a row is w long
        cuda.RawKernel(image.replace("y * w + x", "y * h + x"), "paint", backend="cpu")(
            (1, 2), (16, 16), (np.zeros((20, 16), np.float32), 16, 20))
    assert ("`y` is the row (line 5 keeps it below h, the number of rows), and a row is w elements long, not h: the "
            "element at row `y` and column `x` is `y * w + x`") in str(info.value)


def test_a_check_that_does_not_govern_the_faulting_line_is_not_taken_for_its_guard():
    """A transpose whose store lost its guard: the load's `if (x < n && y < n)` is three lines up, but it governs
    its own statement only, and x and y are new indices since (the hint called `y * n + x` a row and a column
    swapped). A one-statement `if (i < n) a[i] = ...;` does not guard the next line's b[i] either (the hint said
    the check was right and the size wrong)."""
    transpose = r"""
#define T 16
extern "C" __global__ void transpose(const float* in, float* out, int n) {
    __shared__ float tile[T][T + 1];
    int x = blockIdx.x * T + threadIdx.x, y = blockIdx.y * T + threadIdx.y;
    if (x < n && y < n) tile[threadIdx.y][threadIdx.x] = in[y * n + x];
    __syncthreads();
    x = blockIdx.y * T + threadIdx.x; y = blockIdx.x * T + threadIdx.y;
    out[y * n + x] = tile[threadIdx.x][threadIdx.y];  // STORE
}"""
    m = np.arange(40 * 40, dtype=np.float32)
    with pytest.raises(cuda.KernelError, match=r"accessed out\[1600\]") as info:
        cuda.RawKernel(transpose, "transpose", backend="cpu")((3, 3), (16, 16), (m, np.zeros_like(m), 40))
    assert info.value.line == line_of("STORE", transpose)
    assert "swapped" not in str(info.value)
    assert "guard the access: `if (y < n && x < n)`" in str(info.value)
    out = np.zeros_like(m)
    cuda.RawKernel(transpose.replace("    out[", "    if (x < n && y < n) out["), "transpose", backend="cpu")(
        (3, 3), (16, 16), (m, out, 40))
    np.testing.assert_array_equal(out.reshape(40, 40), m.reshape(40, 40).T)
    two = r"""
extern "C" __global__ void k(float* a, float* b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = 1.0f;
    b[i] = 2.0f;
}"""
    with pytest.raises(cuda.KernelError, match=r"accessed b\[40\]") as info:
        cuda.RawKernel(two, "k", backend="cpu")((1,), (64,), (np.zeros(64, np.float32), np.zeros(40, np.float32), 64))
    assert "The check is right" not in str(info.value) and "guard the access: `if (i < n)`" in str(info.value)


#: C = A × B for A of M × K, B of K × N: ROWS, the bound its rows are checked against (M), and STEPS, the loop's
#: (K), for the tests to get wrong.
MATMUL_MNK = r"""
extern "C" __global__ void mm(const float* A, const float* B, float* C, int M, int N, int K) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < ROWS && col < N) {
        float s = 0;
        for (int k = 0; k < STEPS; k++) s += A[row * K + k] * B[k * N + col];
        C[row * N + col] = s;
    }
}"""


def test_a_rows_check_against_a_rows_length_is_told_apart_from_a_row_and_column_swapped():
    """`A[row * K + k]` under `if (row < K && col < N)` with `k < K` in the loop: k is the column, so row and column
    are not swapped (the hint said they were); the row's check names a row's length, K, where the number of rows, M,
    belongs. (The swapped pair, `a[x * w + y]` under `x < w && y < h`, keeps its hint: the test above.)"""
    source = MATMUL_MNK.replace("ROWS", "K").replace("STEPS", "K")  # the rows checked against K
    M, N, K = 20, 24, 40
    A, B = np.ones(M * K, np.float32), np.ones(K * N, np.float32)
    with pytest.raises(cuda.KernelError, match=r"accessed A\[800\]") as info:
        cuda.RawKernel(source, "mm", backend="cpu")((2, 3), (16, 16), (A, B, np.zeros(M * N, np.float32), M, N, K))
    assert ("hint: The index here is `row * K + k`: `row` is multiplied by K, the length of a row, so it counts rows, "
            "and `k` (below K, line 7) counts columns. Line 5 checks `row < K`, a row's length, where the number of "
            "rows belongs: compare `row` with the number of rows of A (its 800 elements / K)") in str(info.value)
    C = np.zeros(M * N, np.float32)
    cuda.RawKernel(MATMUL_MNK.replace("ROWS", "M").replace("STEPS", "K"), "mm", backend="cpu")(
        (2, 3), (16, 16), (A, B, C, M, N, K))
    assert (C == K).all()


def test_a_loop_one_past_each_threads_own_elements_is_named_in_the_race_it_makes():
    """`for (c = 0; c <= channels; c++) img[i + c]` with i = pixel × channels: each thread's last element is the
    next thread's first, a race between neighbours in global (a write, or a read-modify-write) or shared memory;
    the hint names the loop's `<=`, not atomics or a missing barrier."""
    image = r"""
extern "C" __global__ void invert(unsigned char* img, int w, int h, int channels) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) {
        int i = (y * w + x) * channels;
        for (int c = 0; c <= channels; c++) img[i + c] = 255 - img[i + c];  // LOOP
    }
}"""
    pixels = np.arange(30 * 20 * 3, dtype=np.uint8)
    for source in (image, image.replace("255 - img[i + c]", "(unsigned char)c")):
        with pytest.raises(cuda.KernelError, match=r"img\[3\], which thread \(0, 0, 0\)") as info:
            cuda.RawKernel(source, "invert", backend="cpu")((2, 2), (16, 16), (pixels.copy(), 30, 20, 3))
        assert (f"hint: The loop at line {line_of('LOOP', image)} runs while `c <= channels`, so c takes channels + 1 "
                "values, 0 to channels: one more than the channels elements each thread has from its own start (`i + c` "
                "steps by channels from one thread to the next), so each thread's last element is the next thread's "
                "first. Compare with `c < channels`.") in str(info.value)
    inverted = pixels.copy()
    cuda.RawKernel(image.replace("c <= channels", "c < channels"), "invert", backend="cpu")(
        (2, 2), (16, 16), (inverted, 30, 20, 3))
    np.testing.assert_array_equal(inverted, 255 - pixels)
    shared = r"""
extern "C" __global__ void k(const float* x, float* out) {
    __shared__ float s[4 * 65];
    for (int c = 0; c <= 4; c++) s[threadIdx.x * 4 + c] = x[c];
    __syncthreads();
    out[threadIdx.x] = s[threadIdx.x * 4];
}"""
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory s\[4\]") as info:
        cuda.RawKernel(shared, "k", backend="cpu")((1,), (64,), (np.arange(5, dtype=np.float32), np.zeros(64, np.float32)))
    assert "runs while `c <= 4`, so c takes 5 values, 0 to 4" in str(info.value)
    assert "__syncthreads() at the end" not in str(info.value)


def test_a_row_length_taken_from_the_grids_width_is_told_the_arrays_rows():
    """Tutorials' `int width = blockDim.x * gridDim.x;` as the row length: right only when the grid covers a row
    exactly; a 20-wide image in a grid of 2 × 16 threads has rows of w = 20, not 32."""
    source = r"""
extern "C" __global__ void fill(float* a, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    int width = blockDim.x * gridDim.x;  // WIDTH
    if (x < w && y < h) a[y * width + x] = 1.0f;
}"""
    image = np.zeros((20, 20), np.float32)
    with pytest.raises(cuda.KernelError, match=r"accessed a\[416\]") as info:
        cuda.RawKernel(source, "fill", backend="cpu")((2, 2), (16, 16), (image, 20, 20))
    assert (f"hint: The index here is `y * width + x`: its row length, `width` (line {line_of('WIDTH', source)}, `width = "
            "blockDim.x * gridDim.x`), is the grid's width in threads, not a's. Line 5 keeps x below w, so a's rows have "
            "w elements: index it `y * w + x`") in str(info.value)
    inline = source.replace("a[y * width + x]", "a[y * blockDim.x * gridDim.x + x]")
    with pytest.raises(cuda.KernelError, match=r"its row length, `blockDim.x \* gridDim.x`, is the grid's width"):
        cuda.RawKernel(inline, "fill", backend="cpu")((2, 2), (16, 16), (image, 20, 20))
    cuda.RawKernel(source.replace("a[y * width + x]", "a[y * w + x]"), "fill", backend="cpu")((2, 2), (16, 16), (image, 20, 20))
    assert (image == 1).all()


def test_dynamic_shared_memory_sized_in_elements_is_told_the_bytes_one_element_per_thread_takes():
    reverse = r"""
extern "C" __global__ void reverse(const float* in, float* out) {
    extern __shared__ float s[];
    int t = threadIdx.y * blockDim.x + threadIdx.x;
    s[t] = in[t];
    __syncthreads();
    out[t] = s[blockDim.x * blockDim.y - 1 - t];
}"""
    kernel = cuda.RawKernel(reverse, "reverse", backend="cpu")
    x, out = np.arange(128, dtype=np.float32), np.zeros(128, np.float32)
    with pytest.raises(cuda.KernelError, match=r"accessed s\[32\] in dynamic shared memory") as info:
        kernel((1,), (128,), (x, out), shared_mem=128)  # 128 elements, given as bytes
    assert ("hint: The launch passed shared_mem=128 bytes, and the kernel gives each of the block's 128 threads an "
            "element of its own (`s[threadIdx.y * blockDim.x + threadIdx.x]`): that takes 128 × 4 = 512 bytes. Pass "
            "shared_mem=<threads per block × element size> to the launch (shared_mem=512 here; with NumPy, threads * "
            "x.itemsize), not the number of elements.") in str(info.value)
    with pytest.raises(cuda.KernelError, match=r"shared_mem=512 here; with NumPy, threads \* x\.itemsize\)\.$"):
        kernel((1,), (16, 8), (x, out), shared_mem=256)
    kernel((1,), (16, 8), (x, out), shared_mem=512)  # the twin
    np.testing.assert_array_equal(out, x[::-1])


def test_dynamic_shared_memory_a_block_stride_loop_fills_is_told_the_loops_bound_not_the_blocks_threads():
    """A histogram's bins, cleared by `for (c = threadIdx.x; c < nc; c += blockDim.x)`: c reaches nc - 1 whatever the
    block's size, so the hint asks for nc elements (from the launch's nc), not one per thread. The same for a
    `while` loop over `int c = threadIdx.x;` and a `<=` loop to a #define."""
    hist = r"""
extern "C" __global__ void hist(const int* labels, int* h, int n, int nc) {
    extern __shared__ int sh[];
    for (int c = threadIdx.x; c < nc; c += blockDim.x) sh[c] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) atomicAdd(&sh[labels[i]], 1);
    __syncthreads();
    for (int c = threadIdx.x; c < nc; c += blockDim.x) atomicAdd(&h[c], sh[c]);
}"""
    labels = np.random.default_rng(3).integers(0, 10, 2000).astype(np.int32)
    args = lambda: (labels, np.zeros(10, np.int32), np.int32(2000), np.int32(10))
    kernel = cuda.RawKernel(hist, "hist", backend="cpu")
    with pytest.raises(cuda.KernelError, match=r"accessed sh\[9\] in dynamic shared memory") as info:
        kernel((4,), (128,), args(), shared_mem=36)
    assert ("hint: The launch passed shared_mem=36 bytes, and `c` goes up to nc - 1 (the loop at line 4, which the "
            "block's threads share): sh needs nc = 10 elements, 10 × 4 = 40 bytes. Pass shared_mem=<nc × element size> "
            "to the launch (shared_mem=40 here).") in str(info.value)
    with pytest.raises(cuda.KernelError, match=r"shared_mem=40 here\), not the number of elements\.$"):
        kernel((4,), (128,), args(), shared_mem=10)
    loop = "for (int c = threadIdx.x; c < nc; c += blockDim.x) sh[c] = 0;"
    spelled = {"int c = threadIdx.x;\n    while (c < nc) { sh[c] = 0; c += blockDim.x; }": "nc",
               loop.replace("c < nc", "c <= BINS - 1"): "BINS"}
    for body, bound in spelled.items():
        with pytest.raises(cuda.KernelError) as info:
            cuda.RawKernel("#define BINS 10" + hist.replace(loop, body), "hist", backend="cpu")(
                (4,), (128,), args(), shared_mem=36)
        assert f"sh needs {bound} = 10 elements, 10 × 4 = 40 bytes" in str(info.value), body
    h = np.zeros(10, np.int32)
    kernel((4,), (128,), (labels, h, np.int32(2000), np.int32(10)), shared_mem=40)  # the twin
    np.testing.assert_array_equal(h, np.bincount(labels, minlength=10))


def test_a_tree_reduction_whose_stride_starts_at_the_whole_size_is_told_to_start_at_half():
    reduce = r"""
#define N 128
extern "C" __global__ void block_sum(const float* x, float* out) {
    __shared__ float s[N];
    int t = threadIdx.x;
    s[t] = x[blockIdx.x * blockDim.x + t];
    __syncthreads();
    for (int k = START; k > 0; k >>= 1) {
        if (t < k) s[t] += s[t + k];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = s[0];
}"""
    x, out = np.ones(256, np.float32), np.zeros(2, np.float32)
    for start, said in (("blockDim.x", "the block's whole size"), ("N", "the array's whole size")):
        with pytest.raises(cuda.KernelError, match=r"accessed s\[128\]") as info:
            cuda.RawKernel(reduce.replace("START", start), "block_sum", backend="cpu")((2,), (128,), (x, out))
        assert (f"hint: The loop at line 8 starts `k` at {start}, {said}, so its first pass reaches s[t + k] = s[128]: "
                f"past the end. A tree reduction's first step adds the upper half onto the lower one: start at half the "
                f"size, `k = {start} / 2`.") in str(info.value)
    cuda.RawKernel(reduce.replace("START", "blockDim.x / 2"), "block_sum", backend="cpu")((2,), (128,), (x, out))
    assert list(out) == [128, 128]


def test_pointers_moved_back_or_viewed_as_float4_from_an_offset_say_where_their_elements_lie():
    moved = r"""
extern "C" __global__ void back(const float* A, float* o, int n) {
    const float* p = A - 1;
    int i = threadIdx.x;
    if (i < n) o[i] = p[i];
}
extern "C" __global__ void quads(const float* A, float* o, int n) {
    const float4* p = reinterpret_cast<const float4*>(A + 4);
    int i = threadIdx.x;
    if (i < n / 4) { float4 v = p[i]; o[i] = v.x + v.w; }
}"""
    module = cuda.RawModule(code=moved, backend="cpu")
    a, out = np.arange(64, dtype=np.float32), np.zeros(64, np.float32)
    with pytest.raises(cuda.KernelError, match=r"accessed A\[-1\]") as info:
        module.get_function("back")((1,), (64,), (a, out, 64))
    assert ("hint: `p` is A - 1 (line 3), so `p[i]` is A[i - 1], -1 here: below the first element of A. A pointer moved "
            "back before an array may only be indexed at 1 or more") in str(info.value)
    with pytest.raises(cuda.KernelError, match=r"accessed A\[64\] to A\[67\] in one 16-byte access") as info:
        module.get_function("quads")((1,), (64,), (a, out, 64))
    assert ("hint: `p` is A + 4 seen 4 items at a time (line 8), so `p[i]` is A[4 + 4 * i] to A[7 + 4 * i] (A[64] to "
            "A[67] here), and A has 64 items: after the first 4, it holds 15 whole elements of 4 (p[0] to p[14]). Bound "
            "i by that count, (n - 4) / 4 with n the number of items, not by n / 4.") in str(info.value)
    module.get_function("quads")((1,), (64,), (a, out, 60))  # the twin: 15 float4s after the first 4 floats
    np.testing.assert_array_equal(out[:15], a[4::4] + a[7::4])


def test_a_hint_that_cannot_be_worded_still_gives_the_kernel_error_with_its_place(monkeypatch):
    """A bug in a hint's wording (a source its patterns did not foresee) must not replace the learner's
    KernelError by an error of course.cuda's own: the fault comes with its kind, block, thread and line."""
    from course.cuda import cpu

    def broken(*args, **kwargs):
        raise IndexError("list index out of range")

    monkeypatch.setattr(cpu, "_index_hint", broken)
    out = np.zeros(1000, np.float32)
    with pytest.raises(cuda.KernelError) as info:
        kernel("write_past_end")((4,), (256,), (out, 1000))
    message = str(info.value)
    assert message.startswith("kernel 'write_past_end' stopped at a fault (out of bounds).")
    assert f"block (3, 0, 0), thread (232, 0, 0), line {line_of('BUG: no bounds check')}: out[i] = 1.0f;" in message
    assert "could not word its explanation of this fault (IndexError: list index out of range)" in message
    assert (info.value.block, info.value.thread, info.value.line) == ((3, 0, 0), (232, 0, 0),
                                                                      line_of("BUG: no bounds check"))
    assert_alive()


def test_an_index_that_starts_at_the_arrays_length_is_past_the_end_for_every_thread():
    second_half = r"""
extern "C" __global__ void tail(const float* x, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[n + i] = 2.0f * x[i];
}"""
    x = np.ones(64, np.float32)
    with pytest.raises(cuda.KernelError, match=r"accessed out\[64\]") as info:
        cuda.RawKernel(second_half, "tail", backend="cpu")((1,), (64,), (x, np.zeros(64, np.float32), 64))
    assert ("hint: The index `n + i` starts at n, and n = 64 is the length of out in this launch: every thread's index "
            "is past its end, whichever thread. Counted from the start of out, the index is `i`") in str(info.value)
    by_block = second_half.replace("out[n + i]", "out[n + blockIdx.x * blockDim.x + threadIdx.x]")
    with pytest.raises(cuda.KernelError, match=r"accessed out\[64\]") as info:
        cuda.RawKernel(by_block, "tail", backend="cpu")((1,), (64,), (x, np.zeros(64, np.float32), 64))
    assert ("hint: The index `n + blockIdx.x * blockDim.x + threadIdx.x` starts at n, and n = 64 is the length of out "
            "in this launch: every thread's index is past its end, whichever thread. Counted from the start of out, the "
            "index is `blockIdx.x * blockDim.x + threadIdx.x`; if out should hold more after its first n elements, give "
            "it room for them.") in str(info.value)
    # a check and the statement it guards on one line: the hint quotes the check alone
    halves = second_half.replace("out[n + i]", "out[(i + 1) / 2 + 40]")
    with pytest.raises(cuda.KernelError, match=r"accessed out\[64\]") as info:
        cuda.RawKernel(halves, "tail", backend="cpu")((1,), (64,), (x, np.zeros(64, np.float32), 64))
    assert ("hint: The index here is `(i + 1) / 2 + 40`, and line 4 checks `i` (`if (i < n)`): that check alone does not "
            "keep") in str(info.value)
    out = np.zeros(128, np.float32)
    cuda.RawKernel(by_block, "tail", backend="cpu")((1,), (64,), (x, out, 64))  # the twin: room for both halves
    assert (out[:64] == 0).all() and (out[64:] == 2).all()


def test_a_shared_index_made_of_the_threads_own_index_says_how_far_it_reaches():
    pairs = r"""
extern "C" __global__ void pairs(const float* x, float* o) {
    int t = threadIdx.x;
    __shared__ float s[64];
    s[t] = 2.0f * x[t];
    __syncthreads();
    o[t] = s[2 * t] + s[2 * t + 1];
}"""
    x = np.arange(64, dtype=np.float32)
    with pytest.raises(cuda.KernelError, match=r"accessed s\[64\]") as info:
        cuda.RawKernel(pairs, "pairs", backend="cpu")((1,), (64,), (x, np.zeros(64, np.float32)))
    assert ("Here `2 * t` reaches 126 (thread 63 of this launch's 64 along x), so the array needs 127 elements there, "
            "not 64.") in str(info.value)
    out = np.zeros(32, np.float32)  # the twin: half as many threads, each with its pair
    cuda.RawKernel(pairs.replace("s[t] = 2.0f * x[t];", "s[2 * t] = x[2 * t]; s[2 * t + 1] = x[2 * t + 1];"), "pairs",
                   backend="cpu")((1,), (32,), (x, out))
    np.testing.assert_array_equal(out, x[0::2] + x[1::2])


BLUR_TILE = r"""
#define TILE 16
#define R 1
extern "C" __global__ void blur(const float* in, float* out, int w, int h) {
    __shared__ float tile[TILE + 2*R][TILE + 2*R];
    int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
    for (int dy = threadIdx.y; dy < TILE + 2*R; dy += TILE)
        for (int dx = threadIdx.x; dx < TILE + 2*R; dx += TILE) {
            int gx = min(max((int)(blockIdx.x * TILE) + dx - R, 0), w - 1);
            int gy = min(max((int)(blockIdx.y * TILE) + dy - R, 0), h - 1);
            tile[dy][dx] = in[gy * w + gx];  // LOAD
        }
    __syncthreads();
    if (x < w && y < h) {
        float s = 0.f;
        for (int j = -R; j <= R; ++j)
            for (int i = -R; i <= R; ++i) s += tile[threadIdx.y + R + j][threadIdx.x + R + i];  // SUM
        out[y * w + x] = s / 9.0f;
    }
}"""


@pytest.mark.parametrize("bug, said", [
    (("tile[threadIdx.y + R + j][threadIdx.x + R + i]", "tile[threadIdx.y + j][threadIdx.x + i]"),
     "`threadIdx.y + j` is -1 for this thread (threadIdx is unsigned, so the sum wraps round to 4294967295): tile has "
     "a halo of R on each side (`[TILE + 2*R]`), so a thread's own element is at threadIdx.y + R"),
    (("tile[TILE + 2*R][TILE + 2*R]", "tile[TILE][TILE]"),
     "`dx` runs while `dx < TILE + 2*R` (its loop), past the 16 elements that dimension of tile was declared with "
     "(`[TILE]`): declare tile as large as the loop goes, `[TILE + 2*R]`")])
def test_a_halo_tiles_missing_offset_and_its_declaration_without_the_halo_are_named(bug, said):
    """A blur's shared tile with a halo of R: indexed without the + R (j = -R wraps the unsigned threadIdx sum), or
    declared [TILE][TILE] while the load loop fills TILE + 2*R: each named, not 'guard the access'. The twin blurs."""
    image = np.random.default_rng(0).random((29, 37), dtype=np.float32)
    out = np.zeros_like(image)
    with pytest.raises(cuda.KernelError) as info:
        cuda.RawKernel(BLUR_TILE.replace(*bug), "blur", backend="cpu")((3, 2), (16, 16), (image, out, 37, 29))
    assert said in str(info.value) and "Guard the access" not in str(info.value)
    cuda.RawKernel(BLUR_TILE, "blur", backend="cpu")((3, 2), (16, 16), (image, out, 37, 29))
    padded = np.pad(image, 1, mode="edge")
    expected = sum(padded[1 + j:30 + j, 1 + i:38 + i] for j in (-1, 0, 1) for i in (-1, 0, 1)) / 9
    np.testing.assert_allclose(out, expected, rtol=1e-5)


def test_more_blocks_along_z_than_a_batch_has_matrices_is_named_as_the_launchs_bug():
    """`A = A0 + blockIdx.z * M * N` launched with grid z = 3 for 2 matrices: block z = 2's matrix starts at the end
    of A0, whatever the guards say; the hint names the launch (it said to guard the whole index, as at a tile's edge).
    With the right grid the twin runs."""
    source = r"""
extern "C" __global__ void scale(const float* A0, float* C0, int M, int N) {
    const float* A = A0 + (size_t)blockIdx.z * M * N;  // OFFSET
    float* C = C0 + (size_t)blockIdx.z * M * N;
    int r = blockIdx.y * blockDim.y + threadIdx.y, c = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < M && c < N) C[r * N + c] = 2.0f * A[r * N + c];
}"""
    a = np.arange(2 * 5 * 7, dtype=np.float32).reshape(2, 5, 7)
    c = np.zeros_like(a)
    with pytest.raises(cuda.KernelError, match=r"accessed A0\[70\]") as info:
        cuda.RawKernel(source, "scale", backend="cpu")((1, 1, 3), (8, 8), (a, c, 5, 7))
    assert (f"`A` is A0 + (size_t)blockIdx.z * M * N (line {line_of('OFFSET', source)}), which is A0[70] for this block "
            "(blockIdx.z = 2), at or past the end of A0 (70 elements), before any subscript: this launch has 3 blocks "
            "along z") in str(info.value)
    cuda.RawKernel(source, "scale", backend="cpu")((1, 1, 2), (8, 8), (a, c, 5, 7))
    np.testing.assert_array_equal(c, 2 * a)


def test_a_reversed_index_a_wrong_inner_loop_bound_and_a_bin_of_one_point_zero_get_their_own_hints():
    reverse = r"""
extern "C" __global__ void rev(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[n - i];
}"""
    x = np.arange(64, dtype=np.float32)
    with pytest.raises(cuda.KernelError, match=r"accessed in\[64\]") as info:
        cuda.RawKernel(reverse, "rev", backend="cpu")((1,), (64,), (x, np.zeros(64, np.float32), 64))
    assert ("hint: The index here is `n - i`, which is n itself when i is 0: one past the last element of in (64 "
            "elements). Counted from the end, the element that mirrors i is `n - 1 - i`.") in str(info.value)
    with pytest.raises(cuda.KernelError, match=r"accessed in\[64\]") as info:  # without its guard: the same cause
        cuda.RawKernel(reverse.replace("if (i < n) ", ""), "rev", backend="cpu")((1,), (64,), (x, np.zeros(64, np.float32), 64))
    assert "which is n itself when i is 0" in str(info.value) and "`n - 1 - i`" in str(info.value)
    flip = r"""
extern "C" __global__ void flip(const float* in, float* out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y, b = blockIdx.z;
    if (x < w && y < h) out[(b * h + y) * w + (w - x)] = in[(b * h + y) * w + x];
}"""  # a batch of images, one a block along z: the mirrored column, not blockIdx.z, is the bug
    images = np.ones((3, 13, 21), np.float32)
    with pytest.raises(cuda.KernelError, match=r"accessed out\[819\]") as info:
        cuda.RawKernel(flip, "flip", backend="cpu")((2, 1, 3), (16, 16), (images, np.zeros_like(images), 21, 13))
    assert ("The column here is `(w - x)`, which is w itself when x is 0: one past the row's last column (w - 1)"
            in str(info.value)) and "`w - 1 - x`" in str(info.value) and "blockIdx.z" not in str(info.value)
    matmul = MATMUL_MNK.replace("ROWS", "M").replace("STEPS", "N")  # the loop over the wrong size
    m, n, k = 16, 24, 8
    with pytest.raises(cuda.KernelError, match=r"accessed B\[192\]") as info:
        cuda.RawKernel(matmul, "mm", backend="cpu")((2, 1), (16, 16), (
            np.ones((m, k), np.float32), np.ones((k, n), np.float32), np.zeros((m, n), np.float32), m, n, k))
    assert ("`k` goes up to N - 1 (the loop at line 7, `k < N`): check that bound against B's size too") in str(info.value)
    histogram = r"""
#define NBINS 10
extern "C" __global__ void h(const float* x, int* bins, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&bins[(int)(x[i] * NBINS)], 1);
}"""
    with pytest.raises(cuda.KernelError, match=r"accessed bins\[10\]") as info:
        cuda.RawKernel(histogram, "h", backend="cpu")((1,), (64,), (
            np.linspace(0, 1, 64).astype(np.float32), np.zeros(10, np.int32), 64))
    assert ("hint: The index `(int)(x[i] * NBINS)` is a bin computed from data, 10 here, but bins has 10 bins: a value "
            "at the top of the range") in str(info.value) and "`min((int)(x[i] * NBINS), 9)`" in str(info.value)


def test_per_block_sums_two_loads_a_thread_and_a_stencils_border_get_their_own_hints():
    partial = r"""
#define BLOCK 128
extern "C" __global__ void partial(const float* in, float* sums, int n) {
    __shared__ float s[BLOCK];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x * 2 + t;
    s[t] = i < n ? in[i] : 0.0f;
    s[t + blockDim.x] = i + blockDim.x < n ? in[i + blockDim.x] : 0.0f;   // SECOND
    __syncthreads();
    if (t == 0) sums[blockIdx.x] = s[0];                                   // SUM
}"""
    kernel = cuda.RawKernel(partial, "partial", backend="cpu")
    with pytest.raises(cuda.KernelError, match=r"accessed s\[128\]") as info:
        kernel((2,), (128,), (np.ones(512, np.float32), np.zeros(2, np.float32), 512))
    assert info.value.line == line_of("SECOND", partial)
    assert ("hint: `t + blockDim.x` is each thread's second element, from 128 to 255 in this launch's blocks, but s has "
            "128 elements, one a thread: with two elements a thread it needs 2 * 128 = 256") in str(info.value)
    with pytest.raises(cuda.KernelError, match=r"accessed sums\[2\]") as info:
        kernel((3,), (64,), (np.ones(384, np.float32), np.zeros(2, np.float32), 384))
    assert info.value.line == line_of("SUM", partial)
    assert ("hint: sums holds one element per block (`sums[blockIdx.x]`), and this launch has 3 blocks along x but "
            "sums has 2: make it as long as the grid") in str(info.value)
    stencil = r"""
extern "C" __global__ void st(const float* in, float* out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) out[y * w + x] = in[(y - 1) * w + x] + in[(y + 1) * w + x];
}"""
    image = np.ones((16, 16), np.float32)
    with pytest.raises(cuda.KernelError, match=r"accessed in\[-16\]") as info:
        cuda.RawKernel(stencil, "st", backend="cpu")((1, 1), (16, 16), (image, np.zeros_like(image), 16, 16))
    assert ("hint: Index -16 is below the first element: the neighbour `y - 1` is outside the array where y is below 1 "
            "(the border). Guard the border, `if (y >= 1 && ...)`") in str(info.value)
    centred = stencil.replace("in[(y - 1) * w + x] +", "2.0f * in[y * w + x] - in[(y - 1) * w + x] +")
    with pytest.raises(cuda.KernelError, match=r"accessed in\[-16\]") as info:  # the line's first `in[...]` is in range
        cuda.RawKernel(centred, "st", backend="cpu")((1, 1), (16, 16), (image, np.zeros_like(image), 16, 16))
    assert "the neighbour `y - 1` is outside the array where y is below 1" in str(info.value)
    # a flat index's neighbour a row (or a plane) back, `in[i - w]`, `in[i - nx * ny]`: that neighbour is named, with
    # the row's (or plane's) border, not the line's `in[i - 1]`, in range for that thread
    flat = r"""
extern "C" __global__ void st(const float* in, float* out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < 1 || x >= w - 1 || y >= h - 1) return;
    int i = y * w + x;
    out[i] = in[i - 1] + in[i + 1] + NEIGHBOUR - 3.0f * in[i];
}"""
    for neighbour, said in (("in[i - w]", "the neighbour `i - w` is the element one row back, and the first row has "
                                          "none"),
                            ("in[i - w * h]", "the neighbour `i - w * h` is the element one plane back")):
        with pytest.raises(cuda.KernelError, match=r"accessed in\[-") as info:
            cuda.RawKernel(flat.replace("NEIGHBOUR", neighbour), "st", backend="cpu")(
                (1, 1), (16, 16), (image, np.zeros_like(image), 16, 16))
        assert said in str(info.value) and "`i - 1`" not in str(info.value)
    # the neighbours in variables of their own (a sharpening filter's `int xl = x - 1, xr = x + 1, ...;`): the
    # faulting access is not the line's first of `in`, whose index is in range
    sharpen = r"""
extern "C" __global__ void sharpen(const unsigned char* in, unsigned char* out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    int xl = x - 1, xr = min(x + 1, w - 1);  // NEIGHBOURS
    float v = 5.0f * in[y * w + x] - in[y * w + xl] - in[y * w + xr];
    out[y * w + x] = (unsigned char)fminf(fmaxf(v, 0.0f), 255.0f);
}"""
    pixels = np.full((16, 16), 7, np.uint8)
    with pytest.raises(cuda.KernelError, match=r"accessed in\[-1\]") as info:
        cuda.RawKernel(sharpen, "sharpen", backend="cpu")((1, 1), (16, 16), (pixels, np.zeros_like(pixels), 16, 16))
    assert (f"hint: Index -1 is below the first element: `xl` is the neighbour `x - 1` (line {line_of('NEIGHBOURS', sharpen)}), "
            "outside the array where x is below 1 (the border). Clamp it where it is set, `xl = max(x - 1, 0)`") \
        in str(info.value)
    sharpened = np.zeros_like(pixels)
    cuda.RawKernel(sharpen.replace("xl = x - 1", "xl = max(x - 1, 0)"), "sharpen", backend="cpu")(
        (1, 1), (16, 16), (pixels, sharpened, 16, 16))
    assert (sharpened == 21).all()


TILED_NO_EDGE = r"""
#define TILE 16
extern "C" __global__ void mm(const float* A, const float* B, float* C, int n) {
    __shared__ float As[TILE][TILE], Bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0;
    for (int t = 0; t < (n + TILE - 1) / TILE; t++) {
        As[threadIdx.y][threadIdx.x] = A[row * n + t * TILE + threadIdx.x];
        Bs[threadIdx.y][threadIdx.x] = B[(t * TILE + threadIdx.y) * n + col];     // LOAD-B
        __syncthreads();
        for (int k = 0; k < TILE; k++) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < n && col < n) C[row * n + col] = acc;
}"""


def test_a_tile_load_past_a_matrix_edge_is_told_to_load_zero_there():
    """The tiled matmul without its edge tests, on a 20 x 20 matrix (no multiple of 16): the hint names the
    row and the column of the load and writes the guarded load (it suggested `if (... < n)`, n the length)."""
    n = 20
    args = (np.ones((n, n), np.float32), np.ones((n, n), np.float32), np.zeros((n, n), np.float32), n)
    with pytest.raises(cuda.KernelError, match=r"accessed B\[400\]") as info:
        cuda.RawKernel(TILED_NO_EDGE, "mm", backend="cpu")((2, 2), (16, 16), args)
    assert info.value.line == line_of("LOAD-B", TILED_NO_EDGE)
    assert ("hint: This line loads the tile Bs from B, and at the matrix's edge (a size that is no multiple of the "
            "tile) the tile reaches past it: the row `t * TILE + threadIdx.y` or the column `col` is past the matrix. "
            "Load 0 there: `Bs[threadIdx.y][threadIdx.x] = (t * TILE + threadIdx.y < rows && col < n) ? "
            "B[(t * TILE + threadIdx.y) * n + col] : 0.0f;`") in str(info.value)


def test_a_size_t_index_below_zero_is_told_it_wrapped_not_to_test_it_against_zero():
    source = r"""
extern "C" __global__ void left(const float* x, float* out, int n) {
    size_t i = threadIdx.x;
    size_t j = i - 1;                  // thread 0: wraps around
    if (i < n) out[i] = x[j];          // READ
}"""
    with pytest.raises(cuda.KernelError, match=r"accessed x\[-1\], but x has 8 elements") as info:
        cuda.RawKernel(source, "left", backend="cpu")((1,), (8,), (np.zeros(8, np.float32), np.zeros(8, np.float32), 8))
    assert info.value.line == line_of("READ", source)
    assert ("hint: Index -1 is below the first element: `j` is unsigned, so it never goes below 0 but wraps around to "
            "a huge number") in str(info.value) and "a `j >= 0` test is always true for it" in str(info.value)


@pytest.mark.parametrize("access", ["atomicAdd(&x[LAST], 1.0f);", "out[0] = __ldg(&x[LAST]);", "out[0] = x[LAST];"])
def test_a_constant_index_past_the_end_is_told_so_not_to_guard_it(access):
    """`x[16]` of a 16-element array: the hint says the constant is past the end (it suggested the guard
    `if (16 < 16)`); `#define LAST 16` is a constant too."""
    source = "#define LAST 16\n" + r"""
extern "C" __global__ void k(float* x, float* out) {
    ACCESS
}""".replace("ACCESS", access)
    with pytest.raises(cuda.KernelError, match=r"accessed x\[16\], but x has 16 elements") as info:
        cuda.RawKernel(source, "k", backend="cpu")((1,), (1,), (np.zeros(16, np.float32), np.zeros(1, np.float32)))
    assert ("hint: The index `LAST` is a constant, the same for every thread, and x has 16 elements: its last is "
            "x[15]. Make the array larger (at least 17 elements here), or index within it.") in str(info.value)


@pytest.mark.parametrize("cast", ["(float*)((char*)devPtr + r * pitch)",
                                  "reinterpret_cast<float*>(reinterpret_cast<char*>(devPtr) + r * pitch)"])
def test_a_pitched_row_past_the_array_is_told_that_a_pitch_counts_bytes(cast):
    """The CUDA Programming Guide's loop over pitched rows: right with the pitch in bytes (a.strides[0]);
    a pitch that reaches past the rows names the byte offset and how to get the pitch."""
    source = r"""
extern "C" __global__ void rows(float* devPtr, size_t pitch, int width, int height) {
    for (int r = 0; r < height; ++r) {
        float* row = CAST;
        for (int c = 0; c < width; ++c) row[c] += 1.0f;   // ROW
    }
}""".replace("CAST", cast)
    kernel = cuda.RawKernel(source, "rows", backend="cpu")
    a = np.zeros((4, 8), np.float32)
    kernel((1,), (1,), (a, np.uint64(a.strides[0]), 8, 4))
    assert (a == 1).all()
    with pytest.raises(cuda.KernelError, match=r"accessed devPtr\[32\], but devPtr has 32 elements") as info:
        kernel((1,), (1,), (a, np.uint64(40), 8, 4))
    assert info.value.line == line_of("ROW", source)
    assert ("hint: `row` is devPtr moved on by `r * pitch` bytes (line 4), so `row[c]` is element 32 of devPtr, which "
            "has 32 elements. A row's pitch is its length in bytes") in str(info.value)
    assert "a.strides[0]" in str(info.value)


def test_an_access_through_a_pointer_made_from_an_argument_names_the_whole_index():
    # A column-major tiled GEMM that loads through `pa = A + offset` without a guard (the pattern of CuPy's old
    # SGEMM example): past A's end in the last, partial tile; the hint adds the offset to the subscript
    source = r"""
#define TS 16
extern "C" __global__ void gemm_cm(int M, int N, int K, const float* A, const float* B, float* C) {
    __shared__ float sA[TS][TS + 1], sB[TS][TS + 1];
    int tx = threadIdx.x, ty = threadIdx.y;
    const float* pa = A + blockIdx.x * TS + ty * M + tx;
    const float* pb = B + blockIdx.y * TS * K + ty * K + tx;
    float acc = 0.0f;
    for (int kk = 0; kk < K; kk += TS) {
        sA[ty][tx] = pa[kk * M];                                    // LOAD
        sB[ty][tx] = pb[kk];
        __syncthreads();
        for (int k = 0; k < TS && kk + k < K; ++k) acc += sA[k][tx] * sB[ty][k];
        __syncthreads();
    }
    int row = blockIdx.x * TS + tx, col = blockIdx.y * TS + ty;
    if (row < M && col < N) C[col * M + row] = acc;
}
"""
    m, n, k = 50, 40, 30
    a, b = np.asfortranarray(np.ones((m, k), np.float32)), np.asfortranarray(np.ones((k, n), np.float32))
    c = np.zeros((m, n), np.float32, order="F")
    with pytest.raises(cuda.KernelError) as info:
        cuda.RawKernel(source, "gemm_cm", backend="cpu")((4, 3), (16, 16), (m, n, k, a, b, c))
    assert info.value.line == line_of("LOAD", source)
    assert ("hint: `pa` is A + blockIdx.x * TS + ty * M + tx (line 6), so `pa[kk * M]` is A[blockIdx.x * TS + ty * "
            "M + tx + kk * M], 1500 here, and A has 1500 elements.") in str(info.value)
    assert "(a tile at the matrix's edge: load 0 where the row or column is past the end" in str(info.value)
    # a row pointer made with &x[...] (no tile: the guard alone)
    rows = r"""
extern "C" __global__ void rowmax(const float* in, float* out, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const float* row = &in[r * cols];
    float m = row[0];
    for (int c = 0; c < cols; ++c) m = fmaxf(m, row[c + 1]);
    out[r] = m;
}
"""
    with pytest.raises(cuda.KernelError) as info:
        cuda.RawKernel(rows, "rowmax", backend="cpu")((1,), (32,), (np.ones(80, np.float32), np.zeros(10, np.float32),
                                                                   10, 8))
    assert ("hint: `row` is in + r * cols (line 5), so `row[c + 1]` is in[r * cols + c + 1], 80 here, and in has 80 "
            "elements. Guard the access with that whole index, or keep the offset inside the array.") in str(info.value)
    # a row of a 2-D __shared__ tile (`&tile[ty][0]`): no offset to add in one index, the general hint
    tile = r"""
extern "C" __global__ void shift(const float* x, float* y) {
    __shared__ float tile[8][8];
    tile[threadIdx.y][threadIdx.x] = x[threadIdx.y * 8 + threadIdx.x];
    __syncthreads();
    float* rowp = &tile[threadIdx.y][0];
    y[threadIdx.y * 8 + threadIdx.x] = rowp[threadIdx.x + 1];
}
"""
    with pytest.raises(cuda.KernelError) as info:
        cuda.RawKernel(tile, "shift", backend="cpu")((1,), (8, 8), (np.ones(64, np.float32), np.zeros(64, np.float32)))
    assert "accessed tile[64] through a pointer into the __shared__ array tile" in str(info.value)
    assert "`rowp` is" not in str(info.value) and "guard the access" in str(info.value)
    m, n, k = 64, 48, 32  # whole tiles: right, and no report
    a, b = np.asfortranarray(np.random.rand(m, k).astype(np.float32)), np.asfortranarray(np.random.rand(k, n).astype(np.float32))
    c = np.zeros((m, n), np.float32, order="F")
    cuda.RawKernel(source, "gemm_cm", backend="cpu")((4, 3), (16, 16), (m, n, k, a, b, c))
    np.testing.assert_allclose(c, a @ b, rtol=1e-4)


@pytest.mark.parametrize("sanitize", [False, True])
def test_pointers_to_a_local_structs_member_array_keep_the_members_bounds(sanitize):
    # `&b.data[0]` handed to a helper, and `q = s.v;`: raw addresses into a thread's stack, which no allocation
    # holds, were unchecked (a write past the member overwrote the struct's next member, or other locals)
    source = r"""
typedef struct { float data[8]; int used; } Buf;
struct Pair { float v[4]; };
__device__ void fill(float* d, int n) { for (int k = 0; k < n; ++k) d[k] = k; }   // FILL
extern "C" __global__ void buffer(float* y, int n) {
    Buf b;
    b.used = 0;
    fill(&b.data[0], n);
    y[threadIdx.x] = b.data[threadIdx.x % 8] + b.used;
}
extern "C" __global__ void decayed(float* y) {
    Pair s = {{1, 2, 3, 4}};
    const float* q = s.v;
    y[threadIdx.x] = q[threadIdx.x];                                              // DECAYED
}
"""
    module = cuda.RawModule(code=source, backend="cpu", sanitize=sanitize)
    y = np.zeros(8, np.float32)
    with pytest.raises(cuda.KernelError, match=r"accessed element 8 through a pointer made from the local array data "
                                               r"\(declared at line 2\), which holds 8 elements") as info:
        module.get_function("buffer")((1,), (8,), (y, 9))
    assert info.value.line == line_of("FILL", source)
    module.get_function("buffer")((1,), (8,), (y, 8))  # the twin
    np.testing.assert_array_equal(y, np.arange(8))
    with pytest.raises(cuda.KernelError, match=r"accessed element 4 through a pointer made from the local array v"):
        module.get_function("decayed")((1,), (5,), (y,))
    module.get_function("decayed")((1,), (4,), (y,))
    np.testing.assert_array_equal(y[:4], [1, 2, 3, 4])


@pytest.mark.parametrize("declaration", [
    "__device__ const float* __restrict__ at(const float* p, int i) { return p + i; }",
    "__device__ inline auto at(const float* p, int i) -> const float* { return p + i; }",
    "__device__ [[nodiscard]] const float* at(const float* p, int i) { return p + i; }",
])
def test_a_returned_pointer_keeps_its_bounds_whatever_way_its_type_is_written(declaration):
    """A pointer returned with `__restrict__` after its `*`, as a trailing return type, or by a function with an
    attribute after __device__ was raw (or, for the last, the function was taken for a variable and did not
    compile): `*at(a, 32)` read past a unchecked."""
    source = declaration + """
extern "C" __global__ void through(const float* a, float* out, int shift) {
    out[threadIdx.x] = *at(a, threadIdx.x + shift);
}"""
    kernel = cuda.RawKernel(source, "through", backend="cpu", sanitize=False)
    a, out = np.arange(32, dtype=np.float32), np.zeros(32, np.float32)
    kernel((1,), (32,), (a, out, 0))
    np.testing.assert_array_equal(out, a)
    with pytest.raises(cuda.KernelError, match=r"a\[32\], but a has 32 elements"):
        kernel((1,), (32,), (a, out, 1))


@pytest.mark.parametrize("body", [
    "auto put = [](float* p, int i, float v) { p[i] = v; }; put(out, t + shift, a[t]);",
    "auto at = [](float* p, int i) { return p + i; }; *at(out, t + shift) = a[t];",
    "auto put = [](auto* p, int i, float v) { p[i] = v; }; put(out, t + shift, a[t]);",
    "struct Slot { float* p; int i; } s{out, t + shift}; s.p[s.i] = a[t];",
])
def test_pointers_in_lambdas_and_in_structs_a_kernel_defines_keep_their_bounds(body):
    """A lambda's `float* p` parameter and the pointer member of a struct defined inside the kernel stayed raw
    pointers: out[32] was written through them unchecked, into the memory after the NumPy array. `auto* p` did not
    compile with a checked pointer (a generic lambda: NVRTC takes it for host code without -default-device)."""
    source = f'extern "C" __global__ void lam(const float* a, float* out, int shift) {{ int t = threadIdx.x; {body} }}'
    kernel = cuda.RawKernel(source, "lam", backend="cpu", sanitize=False,
                            options=("-default-device",) if "auto*" in body else ())
    a, out = np.arange(32, dtype=np.float32), np.zeros(32, np.float32)
    kernel((1,), (32,), (a, out, 0))
    np.testing.assert_array_equal(out, a)
    with pytest.raises(cuda.KernelError, match=r"out\[32\], but out has 32 elements"):
        kernel((1,), (32,), (a, np.zeros(32, np.float32), 1))


@pytest.mark.parametrize("sanitize", [False, True])
def test_a_member_array_moved_on_or_passed_as_a_pointer_keeps_its_bounds(sanitize):
    # `b.v + 4` and `get(b.v, i)`: the member array as a raw pointer, whose writes past the member landed in the
    # struct's next member (`w`) silently; sizeof, range-for, `*b.v` and an overload that takes no pointer stay
    source = r"""
struct Buf { float v[8]; float w; };
__device__ float get(const float* p, int i) { return p[i]; }                      // GET
__device__ void mark(float* p, int i) { p[i] = -1.0f; }
__device__ void mark(int k, int i) { }
extern "C" __global__ void tail(float* y, int from) {
    Buf b;
    b.w = 0.0f;
    for (float& x : b.v) x = 1.0f;
    float* q = b.v + 4;
    q[from] = 2.0f;                                                                 // TAIL
    mark(b.v, 0);
    y[threadIdx.x] = get(b.v, threadIdx.x + from) + b.w + sizeof(b.v) / sizeof(float) + *b.v;
}
"""
    module = cuda.RawModule(code=source, backend="cpu", sanitize=sanitize)
    y = np.zeros(8, np.float32)
    module.get_function("tail")((1,), (4,), (y, 3))  # the twin: q[3] is v[7]; get reads v[3..6]
    np.testing.assert_array_equal(y[:4], [1 + 8 - 1] * 4)
    with pytest.raises(cuda.KernelError, match=r"accessed element 8 through a pointer made from the local array v") \
            as info:
        module.get_function("tail")((1,), (4,), (y, 4))  # q[4] is v[8]: b.w
    assert info.value.line == line_of("TAIL", source)
    with pytest.raises(cuda.KernelError, match=r"accessed element 8 through a pointer made from the local array v") \
            as info:
        module.get_function("tail")((1,), (8,), (y, 3))  # get(b.v, 5 + 3)
    assert info.value.line == line_of("GET", source) and info.value.thread == (5, 0, 0)


@pytest.mark.parametrize("sanitize", [False, True])
def test_constexpr_functions_tables_of_const_pointers_and_member_arrays_by_reference_compile_and_stay_checked(
        sanitize):
    # Valid CUDA that did not compile: a constexpr __device__ function taking or returning a pointer (a checked
    # pointer is no literal type), a constexpr constructor/method reading through a member pointer, a table
    # `const float* const*` (passed and returned), and a struct's member array (of a local, or through a pointer
    # to a __shared__ one) passed to a template's `const float (&x)[N]` (N is deduced from a view, not from the
    # raw member). Each still checks its bounds.
    source = r"""
struct Buf { float v[4]; float w; };
struct Row {
    const float* p;
    __device__ constexpr Row(const float* q) : p(q) {}
    __device__ constexpr float at(int i) const { return p[i]; }                    // AT
};
__device__ constexpr const float* skip(const float* p, int k) { return p + k; }
__device__ constexpr float twice(const float* p, int i);
__device__ constexpr float twice(const float* p, int i) { return 2.0f * p[i]; }
__device__ constexpr int cells(int n) { return n + 1; }                            // (still constexpr)
__device__ float pick(const float* const* rows, int r, int i) { return rows[r][i]; } // PICK
__device__ float* const* same(float* const* t) { return t; }
template <int N> __device__ float total(const float (&x)[N], int extra) {
    float s = 0.0f;
    for (int i = 0; i < N + extra; ++i) s += x[i];                                 // TOTAL
    return s;
}
extern "C" __global__ void mix(const float* a, const float* b, float* y, int k, int extra) {
    float scratch[cells(3)];
    scratch[3] = 0.0f;
    const float* rows[2] = {a, b};
    float* outs[1] = {y};
    Buf buf = {{1.0f, 2.0f, 3.0f, 4.0f}, 100.0f};
    __shared__ Buf shared_buf;
    Buf* shared = &shared_buf;
    Row r(a);
    int t = threadIdx.x;
    if (t < 4) shared->v[t] = t + 1.0f;
    if (t == 0) shared->w = 100.0f;
    __syncthreads();
    (*same(outs))[t] = skip(a, k)[t] + twice(a, t) + r.at(t + k) + pick(rows, 1, t + k)   // MIX
                       + total(buf.v, 0) + total(shared->v, extra) - 10.0f + scratch[3];
}
"""
    mix = cuda.RawModule(code=source, backend="cpu", sanitize=sanitize).get_function("mix")
    a = np.arange(8, dtype=np.float32)
    b = 10 * np.arange(8, dtype=np.float32)
    y = np.zeros(4, np.float32)
    mix((1,), (4,), (a, b, y, 4, 0))
    t = np.arange(4)
    np.testing.assert_array_equal(y, (t + 4) + 2 * t + (t + 4) + 10 * (t + 4) + 10)
    with pytest.raises(cuda.KernelError, match=r"accessed a\[8\], but a has 8 elements") as info:
        mix((1,), (4,), (a, b, y, 5, 0))  # skip(a, 5)[3]: past a's end
    assert info.value.line == line_of("MIX", source) and info.value.thread == (3, 0, 0)
    with pytest.raises(cuda.KernelError, match=r"accessed v\[4\], but .*the member array v has 4 elements") as info:
        mix((1,), (4,), (a, b, y, 0, 1))  # total(shared->v, 1) reads v[4]: the struct's w
    assert info.value.line == line_of("TOTAL", source)


@pytest.mark.parametrize("sanitize", [False, True])
def test_array_members_of_structs_and_addresses_in_2d_local_arrays_are_checked(sanitize):
    source = r"""
#define BINS 4
struct Acc { float v[BINS]; float total; };
struct Coeffs { float c[3]; };
template <int M> struct Vec { float e[M]; };          // a template's extent: not checked, still compiles
extern "C" __global__ void member(const float* a, float* out, int shared) {
    __shared__ Acc s;
    Acc l = {};
    Acc* acc = shared ? &s : &l;
    acc->v[threadIdx.x] = a[threadIdx.x];             // MEMBER
    float count = 0;
    for (const float* e = &acc->v[0]; e != &acc->v[BINS]; ++e) count += 1;  // the end address is fine
    out[threadIdx.x] = acc->v[threadIdx.x % BINS] + (count - BINS);
}
extern "C" __global__ void weights(const float* a, float* out, Coeffs w) {
    Vec<2> q = {{1, 2}};
    out[threadIdx.x] = a[threadIdx.x] * w.c[threadIdx.x] + q.e[threadIdx.x % 2];  // WEIGHTS
}
const int K = 2;
struct Tile { static const int N = 4; float cells[N]; };  // class-scope and template extents: unchecked
template <int K> struct Buf { float d[K]; };
struct Pair { int k[K]; };                             // the file's K: checked
extern "C" __global__ void zoo(float* out, int j) {
    Tile t;
    for (int i = 0; i < Tile::N; i++) t.cells[i] = i;
    Buf<3> b = {{1, 1, 1}};
    Pair p = {{7, 8}};
    out[0] = t.cells[3] + b.d[2] + p.k[j];             // ZOO
}
extern "C" __global__ void rows(float* out, int start) {
    float r[2][3] = {{0, 1, 2}, {3, 4, 5}};
    float* flat = &r[0][0];                           // the whole of r: flat[5] is fine
    float* from = &r[1][start];
    out[threadIdx.x] = flat[threadIdx.x] + from[threadIdx.x];  // ROWS
}"""
    line = lambda marker: line_of(marker, source)
    module = cuda.RawModule(code=source, backend="cpu", sanitize=sanitize)
    a, out = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    for shared in (0, 1):
        module.get_function("member")((1,), (4,), (a, out, shared))
        np.testing.assert_array_equal(out[:4], a[:4])
        with pytest.raises(cuda.KernelError, match=r"accessed acc->v\[4\], but that dimension of the member array "
                                                   r"acc->v has 4 elements") as info:
            module.get_function("member")((1,), (8,), (a, out, shared))
        assert info.value.line == line("MEMBER") and info.value.thread == (4, 0, 0)
    w = np.array([((1, 2, 3),)], dtype=[("c", np.float32, (3,))])[0]
    module.get_function("weights")((1,), (3,), (a, out, w))
    np.testing.assert_array_equal(out[:3], [1, 4, 7])
    with pytest.raises(cuda.KernelError, match=r"accessed w\.c\[3\], but that dimension of the member array w\.c") as info:
        module.get_function("weights")((1,), (4,), (a, out, w))
    assert info.value.line == line("WEIGHTS")
    module.get_function("zoo")((1,), (1,), (out, 1))
    assert out[0] == 3 + 1 + 8
    with pytest.raises(cuda.KernelError, match=r"accessed p\.k\[2\], but that dimension of the member array p\.k has 2") as info:
        module.get_function("zoo")((1,), (1,), (out, 2))
    assert info.value.line == line("ZOO")
    module.get_function("rows")((1,), (3,), (out, 0))
    np.testing.assert_array_equal(out[:3], [3, 5, 7])
    with pytest.raises(cuda.KernelError, match=r"accessed element 6 through a pointer made from the local array r "
                                               r"\(declared at line \d+\), which holds 6 elements") as info:
        module.get_function("rows")((1,), (3,), (out, 1))  # &r[1][1] + 2 is past r's end
    assert info.value.line == line("ROWS") and info.value.thread == (2, 0, 0)


def test_local_arrays_larger_than_a_gpu_thread_may_have_and_as_large_as_a_gpu_thread_may_have():
    source = r"""
extern "C" __global__ void huge(float* out) {
    float big[1 << 20];  // HUGE: 4 MiB per thread
    big[threadIdx.x] = 1.0f;
    out[threadIdx.x] = big[threadIdx.x];
}
extern "C" __global__ void huge_with_barrier(float* out) {
    float big[1 << 20];
    big[threadIdx.x] = 1.0f;
    __syncthreads();
    out[threadIdx.x] = big[threadIdx.x];
}
extern "C" __global__ void large_with_barrier(float* out) {
    float big[1 << 16];  // 256 KiB: fine on a GPU, and so here (a fiber's stack makes room for it)
    float other[1 << 14];
    for (int i = 0; i < (1 << 16); i++) big[i] = i;
    for (int i = 0; i < (1 << 14); i++) other[i] = 2 * i;
    __syncthreads();
    out[threadIdx.x] = big[(1 << 16) - 1 - threadIdx.x] + other[threadIdx.x];
}
__device__ int depth(int n, volatile char* sink) {
    volatile char pad[512];  // (volatile: stays in the frame)
    pad[n % 512] = (char)n;
    int below = n == 0 ? 0 : depth(n - 1, sink);
    *sink = pad[n % 512];    // (after the call: the frame cannot go before it)
    return below + 1;
}
extern "C" __global__ void deep_with_barrier(float* out, int n) {
    __shared__ char sink;
    __syncthreads();
    out[threadIdx.x] = depth(n, &sink);
}"""
    out = np.zeros(4, np.float32)
    for sanitize in (False, True):  # (the sanitizer's initcheck fills a local array: the size is checked first)
        with pytest.raises(cuda.KernelError, match=r"declares the local array `big` of 4,194,304 bytes at line 3, but "
                                                   r"a GPU thread has at most 524,288 bytes \(512 KiB\)"):
            cuda.RawKernel(source, "huge", backend="cpu", sanitize=sanitize)((1,), (4,), (out,))
        with pytest.raises(cuda.KernelError, match=r"declares the local array `big` of 4,194,304 bytes at line 8"):
            cuda.RawKernel(source, "huge_with_barrier", backend="cpu", sanitize=sanitize)((1,), (4,), (out,))
    for sanitize in (False, True):
        out[:] = 0
        cuda.RawKernel(source, "large_with_barrier", backend="cpu", sanitize=sanitize)((1,), (4,), (out,))
        np.testing.assert_array_equal(out, (1 << 16) - 1 - np.arange(4) + 2 * np.arange(4))
    deep = cuda.RawKernel(source, "deep_with_barrier", backend="cpu", sanitize=False)
    deep((1,), (4,), (out, np.int32(10)))
    assert (out == 11).all()
    # The stack is 64 KiB for calls plus room for the module's local arrays: a recursion that goes
    # deeper than that meets the guard page every time, never another thread's stack (stack-clash probes).
    for _ in range(3):
        with pytest.raises(cuda.KernelError, match=r"ran out of stack \(here each thread of a kernel with barriers "
                                                   r"has 3[89]\d KiB of stack: 64 KiB for calls"):
            deep((1,), (4,), (out, np.int32(100_000)))
    assert_alive()


def test_returning_a_local_array_gives_a_warning_like_nvccs(monkeypatch):
    """nvcc: "returning address of local variable". The array is gone once its function returns."""
    from course.cuda import cpu as cuda_cpu

    monkeypatch.setattr(cuda_cpu, "_warned", set())
    source = r"""
__device__ float* filled(float v) {
    float x[4];
    for (int j = 0; j < 4; j++) x[j] = v;
    return x;  // DANGLING
}
__device__ const float* row(const float* m, int r) { float copy[4] = {1, 2, 3, 4}; (void)copy; return m + 4 * r; }
__device__ float first(float v) { float x[4] = {v, v, v, v}; return x[0]; }
__device__ float* into(float* out, float v) { static float keep[4]; keep[0] = v; out[0] = v; return out; }
__device__ const float* larger(float a, float b) { float m = a > b ? a : b; return &m; }  // SCALAR
__device__ int* shared_count() { __shared__ int count; static int calls; (void)calls; return &count; }
__device__ const float* bigger(float a, float b) { return a > b ? &a : &b; }  // PARAMETERS
__device__ const float* either(const float& a, const float* b, bool f) { if (f) return &a; return &b[0]; }
extern "C" __global__ void dangling(const float* m, float* out) {
    out[threadIdx.x] = filled(m[threadIdx.x])[1] + row(m, 0)[0] + first(1.0f) + into(out, 0.0f)[0];
    if (threadIdx.x == 99) out[0] = *larger(m[0], m[1]) + *shared_count() + *bigger(m[0], m[1]) + *either(m[0], m, 1);
}
"""
    line = next(i for i, text in enumerate(source.split("\n"), 1) if text.endswith("// DANGLING"))
    scalar = next(i for i, text in enumerate(source.split("\n"), 1) if text.endswith("// SCALAR"))
    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cuda.RawKernel(source, "dangling", backend="cpu", sanitize=False).compile()
    messages = [str(w.message) for w in caught if issubclass(w.category, cuda.KernelWarning)]
    # `row`, `first`, `into`, `shared_count` and `either` (a reference's address) return no local's address
    assert len(messages) == 3, messages
    assert f"line {line}: `filled` returns the address of its local array `x`, which stops existing" in messages[0]
    assert f"line {scalar}: `larger` returns the address of its local variable `m`" in messages[1]
    assert "Return the value itself" in messages[1]
    parameters = next(i for i, text in enumerate(source.split("\n"), 1) if text.endswith("// PARAMETERS"))
    assert (f"line {parameters}: `bigger` returns the address of its local parameters `a` and `b`" in messages[2]
            and "which stop existing" in messages[2] and "own copy" in messages[2])


def test_two_extern_shared_arrays_in_one_kernel_give_a_warning_that_they_are_one(monkeypatch):
    """`extern __shared__ float xs[]; extern __shared__ float ys[];` are the same memory: the second
    is meant to follow the first, and writing it overwrites the first. One per kernel is fine, in
    as many kernels as the module has."""
    from course.cuda import cpu as cuda_cpu

    monkeypatch.setattr(cuda_cpu, "_warned", set())
    source = r"""
extern "C" __global__ void two(const float* a, float* out) {
    extern __shared__ float xs[];
    extern __shared__ int ys[];
    int t = threadIdx.x;
    xs[t] = a[t];
    ys[t] = 2 * t;
    __syncthreads();
    out[t] = xs[t] + ys[t];
}
extern "C" __global__ void one(const float* a, float* out) {
    extern __shared__ float xs[];
    xs[threadIdx.x] = a[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = xs[(threadIdx.x + 1) % blockDim.x];
}
"""
    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = cuda.RawModule(code=source, backend="cpu", sanitize=False)
        out = np.zeros(4, np.float32)
        module.get_function("two")((1,), (4,), (np.ones(4, np.float32), out), shared_mem=32)
    messages = [str(w.message) for w in caught if issubclass(w.category, cuda.KernelWarning)]
    assert len(messages) == 1, messages  # `one` uses one extern __shared__ array
    assert ("line 4: `two` uses the extern __shared__ arrays `xs` (line 3) and `ys` (line 4), but every extern "
            "__shared__ array starts at the same address") in messages[0]
    assert "`int* ys = (int*)(xs + n);`" in messages[0]
    assert out[1] != 3  # (what a GPU does too: ys[1] overwrote xs[1], so out[1] is not 1 + 2)


PHASED = r"""
extern "C" __global__ void phases(const float* x, int* y) {
    extern __shared__ float sf[];
    extern __shared__ int si[];
    int t = threadIdx.x;
    sf[t] = x[t];
    __syncthreads();
    float v = sf[(t + 1) % blockDim.x];
    __syncthreads();
    si[t] = (int)(v * 100.0f);
    __syncthreads();
    y[t] = si[blockDim.x - 1 - t];
}
"""


@pytest.mark.parametrize("phased", [True, False])
def test_two_extern_shared_arrays_used_in_phases_on_purpose_get_no_warning(phased):
    """The same bytes as floats, a barrier, then as ints: deliberate reuse (a barrier between the two
    phases); without that barrier (or with both in one loop) the warning stays."""
    source = PHASED if phased else PHASED.replace("    __syncthreads();\n    si[t]", "    si[t]")
    if not phased:
        source = source.replace("float v = sf", "for (int r = 0; r < 2; ++r) {\n    float v = sf").replace(
            "y[t] = si[blockDim.x - 1 - t];", "y[t] = si[blockDim.x - 1 - t];\n    }")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kernel = cuda.RawKernel(source, "phases", backend="cpu")
        x, y = np.random.rand(64).astype(np.float32), np.zeros(64, np.int32)
        if phased:
            kernel((1,), (64,), (x, y), shared_mem=256)
            np.testing.assert_array_equal(y, (np.roll(x, -1) * np.float32(100)).astype(np.int32)[::-1])
        else:
            kernel.compile()
    messages = [str(w.message) for w in caught if issubclass(w.category, cuda.KernelWarning)]
    assert (messages == []) if phased else any("extern __shared__ arrays `sf`" in m for m in messages), messages


def test_a_pointer_inside_a_struct_from_the_host_is_named_as_unchecked():
    # The struct's bytes come from NumPy, so its pointer is a raw address whose array nothing here
    # knows; a struct built in the kernel (View) holds a checked pointer, and says nothing.
    source = r"""
struct Slice {
    float* data;
    int n;
};
struct View { float* data; int n; };
extern "C" __global__ void fill(Slice s, float* out) {
    View v = {out, 4};
    int i = threadIdx.x;
    if (i < s.n) s.data[i] = 1.0f;
    v.data[i] = 2.0f;
}
"""
    import warnings
    data, out = np.zeros(8, np.float32), np.zeros(4, np.float32)
    record = np.zeros((), np.dtype([("data", np.uintp), ("n", np.int32)], align=True))
    record["data"], record["n"] = data.ctypes.data, 8
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kernel = cuda.RawKernel(source, "fill", backend="cpu")
        kernel((1,), (4,), (record, out))
    messages = [str(w.message) for w in caught if issubclass(w.category, cuda.KernelWarning)]
    assert len(messages) == 1 and "line 3: `Slice::data` is a pointer inside a struct whose bytes come from the " \
        "host" in messages[0] and "Pass the array as a kernel parameter of its own" in messages[0], messages
    assert list(data) == [1.0] * 4 + [0.0] * 4 and list(out) == [2.0] * 4
    with pytest.raises(cuda.KernelError, match=r"accessed out\[4\], but out has 4 elements"):
        kernel((1,), (5,), (record, out))  # the View's pointer is checked: out has 4 elements


def test_a_pointer_inside_a_union_is_named_as_unchecked_and_a_union_of_numbers_is_not():
    source = r"""
union Address { float* p; unsigned long long bits; };
union Bits { float f; unsigned u; };
extern "C" __global__ void punned(float* out, int k) {
    Address a; a.p = out; a.bits += 4 * k; *a.p = 7.0f;
    Bits b; b.f = out[threadIdx.x]; b.u ^= 0x80000000u; out[threadIdx.x] = b.f;
}
"""
    import warnings
    out = np.zeros(4, np.float32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cuda.RawKernel(source, "punned", backend="cpu")((1,), (1,), (out, 2))
    messages = [str(w.message) for w in caught if issubclass(w.category, cuda.KernelWarning)]
    assert len(messages) == 1 and "line 2: `Address::p` is a pointer inside a union" in messages[0] \
        and "cannot bounds-check" in messages[0], messages
    assert list(out) == [-0.0, 0.0, 7.0, 0.0]


@pytest.mark.parametrize("sanitize", [False, True])
def test_pointer_arrays_and_pointers_to_their_own_struct_inside_device_structs_stay_checked(sanitize):
    # A struct built in the kernel holds checked pointers in every form of pointer member: an array
    # of pointers (`float* p[2]`, its out-of-bounds write corrupted the process's heap), a pointer to
    # the struct itself (a list, a tree: it read past its shared array silently). A member array and
    # a pointer member of the same name in two structs are each checked as what they are.
    source = r"""
struct Bufs { float* p[2]; int n; };
struct Node { float v; Node* next; };
struct Tree { float v; Tree* child[2]; };
struct Pair { float w[2]; };
struct View { float* w; int n; };
extern "C" __global__ void bufs(float* a, float* o, int n) {
    Bufs b; b.p[0] = a; b.p[1] = o; b.n = n;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    b.p[1][i] = 2.0f * b.p[0][i];  // BUFS
}
extern "C" __global__ void list(float* o, int steps) {
    __shared__ Node nodes[8];
    int t = threadIdx.x;
    nodes[t].v = t;
    nodes[t].next = &nodes[t + 1];  // the last one's points one past the end: fine until used
    __syncthreads();
    Node* p = &nodes[t];
    for (int k = 0; k < steps; k++) p = p->next;
    o[t] = p->v;  // LIST
}
extern "C" __global__ void tree(float* o) {
    __shared__ Tree tr[7];
    int t = threadIdx.x;
    tr[t].v = t; tr[t].child[0] = &tr[2 * t + 1]; tr[t].child[1] = &tr[2 * t + 2];
    __syncthreads();
    o[t] = t < 3 ? tr[t].child[1]->v : tr[t].v;  // TREE
}
extern "C" __global__ void same_name(const float* a, float* o) {
    Pair p; p.w[0] = 1; p.w[1] = 2;
    View v; v.w = (float*)a; v.n = 8;
    int i = threadIdx.x;
    o[i] = v.w[i] + p.w[i & 1];
}"""
    line = lambda marker: line_of(marker, source)
    module = cuda.RawModule(code=source, backend="cpu", sanitize=sanitize)
    a, o = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    module.get_function("bufs")((1,), (8,), (a, o, 8))
    np.testing.assert_array_equal(o, 2 * a)
    with pytest.raises(cuda.KernelError, match=r"accessed a\[8\], but a has 8 elements") as info:
        module.get_function("bufs")((2,), (8,), (a, o, 8))
    assert f"line {line('BUFS')}:" in str(info.value)
    module.get_function("list")((1,), (8,), (o, 0))
    np.testing.assert_array_equal(o, a)
    with pytest.raises(cuda.KernelError, match=r"accessed nodes\[8\] through a pointer into the __shared__ array "
                                               r"nodes, which holds 8") as info:
        module.get_function("list")((1,), (8,), (o, 1))
    assert f"line {line('LIST')}:" in str(info.value) and "thread (7, 0, 0)" in str(info.value)
    module.get_function("tree")((1,), (7,), (o,))
    np.testing.assert_array_equal(o[:7], [2, 4, 6, 3, 4, 5, 6])
    with pytest.raises(cuda.KernelError, match=r"accessed tr\[8\] through a pointer into the __shared__ array tr"):
        cuda.RawKernel(source.replace("t < 3 ?", "t < 4 ?"), "tree", backend="cpu", sanitize=sanitize)((1,), (7,), (o,))
    module.get_function("same_name")((1,), (8,), (a, o))
    np.testing.assert_array_equal(o, a + np.tile([1, 2], 4))


def test_a_variable_read_before_it_has_a_value_gives_a_warning_like_nvccs(tmp_path, monkeypatch, private_kernel_cache):
    """GCC sees what nvcc warns about ("used before its value is set"): shown once, in the
    learner's words, also when the module comes from the kernel cache in a later process."""
    from course.cuda import cpu as cuda_cpu

    monkeypatch.setattr(cuda_cpu, "_warned", set())
    source = r"""
extern "C" __global__ void total(const float* x, float* out, int n) {
    float sum;
    for (int i = threadIdx.x; i < n; i += blockDim.x) sum += x[i];
    out[threadIdx.x] = sum;  // READ
}
extern "C" __global__ void fine(const float* x, float* out, int n) {
    float best;
    for (int i = 0; i < n; ++i) if (i == 0 || x[i] > best) best = x[i];
    out[threadIdx.x] = n > 0 ? best : 0.0f;
}
// Set on some paths and read on paths that set it (PMPP's register-tiled stencil does this): GCC
// cannot tell, nvcc does not warn, neither does the course.
extern "C" __global__ void guarded(const float* x, float* out, int n) {
    float v;
    if (threadIdx.x < n) v = x[threadIdx.x];
    __syncwarp();
    if (threadIdx.x < n) out[threadIdx.x] = v;
}
"""
    read = next(i for i, text in enumerate(source.split("\n"), 1) if text.endswith("// READ"))
    # (`sum += x[i]` reads it first: some GCCs name that line, some the line after the loop)
    with pytest.warns(cuda.KernelWarning, match=rf"line ({read - 1}|{read}): `sum` \(declared at line {read - 2}\) "
                                                r"(may be|is) read "
                                                r"before it is given a value.*`float sum = 0;`") as caught:
        cuda.RawKernel(source, "total", backend="cpu").compile()
    assert len([w for w in caught if issubclass(w.category, cuda.KernelWarning)]) == 1  # `best` and `v` are fine
    assert list(tmp_path.glob("*.warnings"))
    monkeypatch.setattr(cuda_cpu, "_warned", set())
    monkeypatch.setattr(cuda_cpu, "_modules", {})  # as a new process: the module comes from the disk cache
    compiled = sorted(tmp_path.glob("*.so"))
    with pytest.warns(cuda.KernelWarning, match=r"`sum`"):
        cuda.RawKernel(source, "total", backend="cpu").compile()
    assert sorted(tmp_path.glob("*.so")) == compiled  # loaded, not compiled again
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error", cuda.KernelWarning)  # shown once per process
        cuda.RawKernel(source, "fine", backend="cpu", sanitize=False).compile()


def test_a_struct_member_read_before_it_has_a_value_gives_a_warning(monkeypatch):
    """GCC names the member (`a.Acc::count`); the warning names it as the source does, and
    structs set member by member, by a helper or by braces say nothing."""
    from course.cuda import cpu as cuda_cpu

    monkeypatch.setattr(cuda_cpu, "_warned", set())
    source = r"""
struct Acc { float sum; int count; };
__device__ void reset(Acc* a) { a->sum = 0; a->count = 0; }
extern "C" __global__ void mean(const float* x, float* out) {
    Acc a;
    a.sum = x[threadIdx.x];
    out[threadIdx.x] = a.sum / a.count;  // MEMBER
}
extern "C" __global__ void fine(const float* x, float* out) {
    Acc a, b = {}, c;
    reset(&c);
    a.sum = x[threadIdx.x], a.count = 1;
    float4 v;
    v.x = a.sum, v.y = b.sum, v.z = c.sum, v.w = (float)(b.count + c.count);
    out[threadIdx.x] = a.sum / a.count + v.x + v.y + v.z + v.w;
}
"""
    line = next(i for i, text in enumerate(source.split("\n"), 1) if text.endswith("// MEMBER"))
    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cuda.RawModule(code=source, backend="cpu", sanitize=False).compile()
    messages = [str(w.message) for w in caught if issubclass(w.category, cuda.KernelWarning)]
    assert len(messages) == 1, messages  # `fine` sets every member it reads
    assert (f"line {line}: `a.count` (a member of `a`, declared at line {line - 2}) is read before it is given a "
            "value") in messages[0] and "`Acc a = {};` sets every member to 0" in messages[0]
    # a sanitized build notes each member access (which hides the read from GCC): the warning comes all the same
    monkeypatch.setattr(cuda_cpu, "_warned", set())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cuda.RawModule(code=source.replace("mean(", "mean2(").replace("fine(", "fine2("), backend="cpu",
                       sanitize=True).compile()
    messages = [str(w.message) for w in caught if issubclass(w.category, cuda.KernelWarning)]
    assert len(messages) == 1 and f"line {line}: `a.count` (a member of `a`" in messages[0], messages


def test_an_unset_half_is_named_as_written_not_by_its_inner_member(monkeypatch):
    """A __half is a struct here (and in cuda_fp16.h): GCC names its member (`acc.__x`), which the learner never
    wrote and cannot set; the warning names `acc` and the fix that compiles, `__half acc = {};`."""
    from course.cuda import cpu as cuda_cpu
    monkeypatch.setattr(cuda_cpu, "_warned", set())
    source = r"""
#include <cuda_fp16.h>
extern "C" __global__ void row_sums(const __half* x, float* out, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        __half acc;
        for (int c = 0; c < cols; ++c) acc = __hadd(acc, x[r * cols + c]);
        out[r] = __half2float(acc);
    }
}
"""
    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cuda.RawModule(code=source, backend="cpu", sanitize=True).compile()
    messages = [str(w.message) for w in caught if issubclass(w.category, cuda.KernelWarning)]
    assert len(messages) == 1, messages
    assert "`acc` may be read before it is given a value" in messages[0] and "`__half acc = {};`" in messages[0]
    assert "__x" not in messages[0]
    x, out = np.full((4, 5), 0.5, np.float16), np.zeros(4, np.float32)  # the twin, as the hint says
    cuda.RawKernel(source.replace("__half acc;", "__half acc = {};"), "row_sums", backend="cpu", sanitize=True)(
        (1,), (32,), (x, out, 4, 5))
    np.testing.assert_array_equal(out, 2.5)


def test_an_address_past_the_end_is_fine_until_something_reads_through_it():
    src = r'''
    __device__ float first_of(const float* p) { return p[0]; }
    extern "C" __global__ void tail(const float* x, float* out, int n, int peek) {
        int i = threadIdx.x;
        const float* end = &x[n];                       // one past the end: an address only
        const float* past = &x[n + 8];                  // further still, never read
        const float* half = &x[n / 2];
        const float* stop = &half[n / 2];               // through a pointer variable: x + n again
        out[i] = (float)(end - past) + (float)(stop - end) + (peek ? first_of(&x[i + n - 4]) : 0.0f);  // PEEK
    }'''
    x, out = np.arange(16, dtype=np.float32), np.zeros(8, np.float32)
    for sanitize in (False, True):
        cuda.RawKernel(src, "tail", backend="cpu", sanitize=sanitize)((1,), (8,), (x, out, 16, 0))
        np.testing.assert_array_equal(out, -8)
        with pytest.raises(cuda.KernelError, match=r"accessed x\[16\], but x has 16 elements") as info:
            cuda.RawKernel(src, "tail", backend="cpu", sanitize=sanitize)((1,), (8,), (x, out, 16, 1))
        assert info.value.thread == (4, 0, 0)


SPIN_WAITS = r'''
extern "C" __global__ void wait_for_warp_one(float* out, int set) {
    __shared__ volatile int ready;
    if (threadIdx.x == 0) ready = 0;
    __syncthreads();
    if (threadIdx.x == 32 && set) ready = 1;
    if (threadIdx.x == 0) { while (ready == 0) { } out[blockIdx.x] = 1.0f; }  // WAIT
}
extern "C" __global__ void wait_for_an_atomic_flag(float* out, int* flag) {
    if (threadIdx.x == 0) { while (atomicAdd(&flag[blockIdx.x], 0) == 0) { } out[blockIdx.x] = 1.0f; }
    if (threadIdx.x == 63) atomicExch(&flag[blockIdx.x], 1);
}
__device__ void lock(int* m) { while (atomicCAS(m, 0, 1) != 0) { } }
__device__ void unlock(int* m) { __threadfence(); atomicExch(m, 0); }
extern "C" __global__ void add_under_a_lock(float* total, int* m, const float* x) {
    for (int lane = 0; lane < 32; lane++)  // one lane at a time, or a warp would wait for itself
        if (threadIdx.x % 32 == lane) { lock(m); *total += x[blockIdx.x * blockDim.x + threadIdx.x]; unlock(m); }
}
'''


@pytest.mark.parametrize("sanitize", [False, True])
def test_a_thread_that_waits_in_a_loop_for_another_threads_flag_lets_it_run(sanitize):
    # On a GPU the warps of a block run side by side, so a thread may wait for a flag another
    # warp sets (a volatile or an atomic one). Threads here take turns: the waiting one gives its
    # turn up now and then. Its polling reads of the flag are how the threads meet, not a hazard.
    out = np.zeros(3, np.float32)
    cuda.RawKernel(SPIN_WAITS, "wait_for_warp_one", backend="cpu", sanitize=sanitize)((3,), (64,), (out, 1))
    np.testing.assert_array_equal(out, 1)
    out, flag = np.zeros(2, np.float32), np.zeros(2, np.int32)
    cuda.RawKernel(SPIN_WAITS, "wait_for_an_atomic_flag", backend="cpu", sanitize=sanitize)((2,), (64,), (out, flag))
    np.testing.assert_array_equal(out, 1)
    total, m = np.zeros(1, np.float32), np.zeros(1, np.int32)
    cuda.RawKernel(SPIN_WAITS, "add_under_a_lock", backend="cpu", sanitize=sanitize)(
        (2,), (64,), (total, m, np.ones(128, np.float32)))
    assert total[0] == 128 and m[0] == 0
    # A flag that no thread sets: the wait never ends, here as on a GPU. (2 s: on a loaded machine
    # 1 s has run out before every thread passed the barrier, and the message named that line.)
    for limit in (2, 8):  # (a fresh clone's test run once took 2 s to get 64 threads past the barrier: again)
        with pytest.raises(cuda.KernelError, match="time limit") as info:
            cuda.RawKernel(SPIN_WAITS, "wait_for_warp_one", backend="cpu", sanitize=sanitize, time_limit=limit)(
                (1,), (64,), (np.zeros(1, np.float32), 0))
        if info.value.line == line_of("WAIT", SPIN_WAITS):
            break
    assert "another thread of its own block sets" in str(info.value)
    assert info.value.line == line_of("WAIT", SPIN_WAITS)


def test_one_extern_shared_name_in_several_kernels_is_named_once():
    src = r'''
    extern "C" __global__ void first(float* y) { extern __shared__ float temp[]; temp[threadIdx.x] = 1; y[0] = temp[0]; }
    extern "C" __global__ void second(float* y) { extern __shared__ float temp[]; temp[threadIdx.x] = 2; y[0] = temp[0]; }'''
    with pytest.raises(cuda.KernelError, match=r"accessed temp\[16\] in dynamic shared memory, which holds 16 "):
        cuda.RawKernel(src, "second", backend="cpu", sanitize=False)((1,), (32,), (np.zeros(1, np.float32),), shared_mem=64)


ALIGNED_SHARED = r"""
extern "C" __global__ void aligned(const float* x, float* y) {
    DECLARATION
    int t = threadIdx.x;
    if (t < 64) s[t] = x[t];
    __syncthreads();
    const float4* quads = reinterpret_cast<const float4*>(s);
    if (t < LIMIT) { float4 v = quads[t]; y[t] = v.x + v.w; }          // QUADS
}
"""


@pytest.mark.parametrize("declaration", [
    "__shared__ __align__(16) float s[128];", "__shared__ alignas(16) float s[128];",
    "__shared__ float __align__(16) s[128];", "__shared__ float s[128] __attribute__((aligned(16)));",
    "__align__(16) __shared__ float s[128];", "__shared__ __align__(16) float s[128], spare[4];"])
def test_an_aligned_shared_array_is_checked_through_a_float4_view(declaration):
    """Tiled kernels align the __shared__ arrays they read as float4 (`__shared__ __align__(16) float
    s[128];`): the alignment, wherever it is written, leaves the array checked: reads of elements no
    thread wrote, and past its end."""
    source = ALIGNED_SHARED.replace("DECLARATION", declaration)
    x, y = np.random.default_rng(0).random(128).astype(np.float32), np.zeros(128, np.float32)
    with pytest.raises(cuda.KernelError, match=r"reads shared memory s\[64\], which no thread of block \(0, 0, 0\) "
                                               r"has written") as info:
        cuda.RawKernel(source.replace("LIMIT", "32"), "aligned", backend="cpu", sanitize=True)((1,), (128,), (x, y))
    assert info.value.thread == (16, 0, 0) and info.value.line == line_of("QUADS", source)
    filled = source.replace("t < 64", "t < 128").replace("LIMIT", "33")
    for sanitize in (False, True):
        with pytest.raises(cuda.KernelError, match=r"accessed s\[32\] through a pointer into the __shared__ array s, "
                                                   r"which holds 32 16-byte elements") as info:
            cuda.RawKernel(filled, "aligned", backend="cpu", sanitize=sanitize)((1,), (128,), (x, y))
        assert info.value.thread == (32, 0, 0)
    cuda.RawKernel(filled.replace("LIMIT", "32").replace("< 33", "< 32"), "aligned", backend="cpu", sanitize=True)(
        (1,), (128,), (x, y))
    np.testing.assert_allclose(y[:32], x[0::4] + x[3::4])


COUNTING_DOWN = r"""
extern "C" __global__ void reverse(const float* x, float* y, int n) {
    if (threadIdx.x == 0)
        for (unsigned i = n - 1; i >= 0; --i) y[n - 1 - i] = x[i];      // DOWN
}
"""


def test_an_unsigned_loop_counting_down_past_zero_is_explained():
    """`for (unsigned i = n - 1; i >= 0; --i)`: the condition is always true, i wraps to 4294967295."""
    with pytest.raises(cuda.KernelError, match=r"accessed x\[4294967295\]") as info:
        cuda.RawKernel(COUNTING_DOWN, "reverse", backend="cpu")((1,), (32,), (np.ones(8, np.float32),
                                                                              np.zeros(8, np.float32), 8))
    assert f"`i >= 0` (line {line_of('DOWN', COUNTING_DOWN)}) is always true for an unsigned i" in str(info.value)
    assert "for (unsigned i = n; i-- > 0;)" in str(info.value)
    differences = r"""
extern "C" __global__ void differences(const float* x, float* y, unsigned n) {
    unsigned i = threadIdx.x;
    if (i < n && i - 2 >= 0) y[i] = x[i] - x[i - 2];
}
"""
    with pytest.raises(cuda.KernelError, match=r"accessed x\[4294967294\]") as info:
        cuda.RawKernel(differences, "differences", backend="cpu")((1,), (8,), (np.ones(8, np.float32),
                                                                                np.zeros(8, np.float32), 8))
    assert "`i - 2 >= 0` (line 4) is always true for an unsigned i" in str(info.value)
    assert "Compare before subtracting: `i >= 2`." in str(info.value)
    fixed = COUNTING_DOWN.replace("for (unsigned i = n - 1; i >= 0; --i)", "for (unsigned i = n; i-- > 0;)")
    y = np.zeros(8, np.float32)
    cuda.RawKernel(fixed, "reverse", backend="cpu")((1,), (32,), (np.arange(8, dtype=np.float32), y, 8))
    assert y.tolist() == list(range(7, -1, -1))


UNSIGNED_AND_CHAR_INDICES = r"""
extern "C" __global__ void add_sums(float* y, const float* sums, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += sums[blockIdx.x - 1];                 // PREVIOUS
}
extern "C" __global__ void histogram(const char* pixels, unsigned* bins, int n) {
    __shared__ unsigned s[64];
    s[threadIdx.x] = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&s[pixels[i] >> 2], 1u);           // BIN
    __syncthreads();
    atomicAdd(&bins[threadIdx.x], s[threadIdx.x]);
}
extern "C" __global__ void picked(const float* scores, const int* labels, float* out, int n) {
    int row = threadIdx.x;
    if (row < n) {
        int label = labels[row];
        out[row] = scores[label];                             // LABEL
    }
}
"""


def test_an_index_below_zero_in_unsigned_arithmetic_and_one_from_a_signed_char_are_explained():
    """`sums[blockIdx.x - 1]` in block 0 reads index 2^32 - 1 (blockIdx is unsigned); `s[pixels[i] >> 2]` of a
    char array reads s[-2] for a byte of 250 (char is signed); `scores[label]` with a label of -100 read from
    data: each hint names its cause."""
    module = cuda.RawModule(code=UNSIGNED_AND_CHAR_INDICES, backend="cpu")
    with pytest.raises(cuda.KernelError, match=r"accessed sums\[4294967295\]") as info:
        module.get_function("add_sums")((2,), (32,), (np.zeros(64, np.float32), np.ones(2, np.float32), 64))
    assert info.value.line == line_of("PREVIOUS", UNSIGNED_AND_CHAR_INDICES)
    assert "Index 4294967295 is -1 computed in unsigned arithmetic: blockIdx.x is unsigned" in str(info.value)
    assert "2^32 - 1" in str(info.value) and "`(int)blockIdx.x - 1`" in str(info.value)
    pixels = np.array([3, 250, 100, 7] * 16, np.uint8).view(np.int8)
    with pytest.raises(cuda.KernelError, match=r"accessed s\[-2\]") as info:
        module.get_function("histogram")((1,), (64,), (pixels, np.zeros(64, np.uint32), 64))
    assert info.value.line == line_of("BIN", UNSIGNED_AND_CHAR_INDICES) and info.value.thread == (1, 0, 0)
    assert "comes from `pixels`, an array of char, which is signed" in str(info.value)
    with pytest.raises(cuda.KernelError, match=r"accessed scores\[-100\]") as info:  # PyTorch's ignore_index
        module.get_function("picked")((1,), (4,), (np.ones(8, np.float32), np.array([1, -100, 3, 0], np.int32),
                                                   np.zeros(4, np.float32), 4))
    assert info.value.line == line_of("LABEL", UNSIGNED_AND_CHAR_INDICES)
    assert "the index `label` is a value read from data, `labels[row]`" in str(info.value)
    bins = np.zeros(64, np.uint32)
    fixed = UNSIGNED_AND_CHAR_INDICES.replace("const char* pixels", "const unsigned char* pixels")
    cuda.RawModule(code=fixed, backend="cpu").get_function("histogram")((1,), (64,), (pixels.view(np.uint8), bins, 64))
    assert bins[0] == bins[1] == bins[62] == bins[25] == 16 and bins.sum() == 64  # 3, 7, 250, 100 >> 2


PITCHED_ROWS = r"""
extern "C" __global__ void gain(float* image, size_t pitch, int width, int height, float g) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) {
        float* row = image + y * pitch;
        row[x] *= g;                                          // ROW
    }
}
"""


def test_a_pitch_in_bytes_added_to_a_float_pointer_is_explained():
    """cudaMallocPitch's pitch (a NumPy array's strides[0]) counts bytes: `image + y * pitch` on a float* runs
    4 times too far, and the hint says to step through a char*."""
    image = np.ones((20, 64), np.float32)
    kernel = cuda.RawKernel(PITCHED_ROWS, "gain", backend="cpu")
    with pytest.raises(cuda.KernelError, match=r"accessed image\[1280\]") as info:
        kernel((4, 2), (16, 16), (image, np.uint64(image.strides[0]), 50, 20, np.float32(2)))
    assert info.value.line == line_of("ROW", PITCHED_ROWS)
    assert "`(float*)((char*)image + y * pitch)`" in str(info.value) and "counts bytes" in str(info.value)
    fixed = PITCHED_ROWS.replace("float* row = image + y * pitch;", "float* row = (float*)((char*)image + y * pitch);")
    image[...] = 1  # (the faulting launch's stores before the fault stay, as on a GPU)
    cuda.RawKernel(fixed, "gain", backend="cpu")((4, 2), (16, 16), (image, np.uint64(image.strides[0]), 50, 20,
                                                                     np.float32(2)))
    assert (image[:, :50] == 2).all() and (image[:, 50:] == 1).all()


@pytest.mark.parametrize("index", ["y * pitch + x", "pitch * y + x"])
def test_a_pitch_in_bytes_in_a_subscript_is_explained(index):
    """`img[y * pitch + x]` (probe 23): the subscript steps a pitch of bytes in floats; the hint shows the row
    found through a char*, or the pitch in elements."""
    source = r"""
extern "C" __global__ void k(float* img, size_t pitch, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) img[INDEX] = 1.0f;  // STORE
}
""".replace("INDEX", index)
    image = np.zeros((32, 32), np.float32)
    with pytest.raises(cuda.KernelError, match=r"accessed img\[1024\]") as info:
        cuda.RawKernel(source, "k", backend="cpu")((2, 2), (16, 16), (image, np.uint64(image.strides[0]), 32, 32))
    assert info.value.line == line_of("STORE", source)
    message = str(info.value)
    assert f"`img[{index.replace(' + x', '')} + ...]` steps pitch elements of img per row" in message
    assert "`float* r = (float*)((char*)img + y * pitch);` then r[x]" in message and "(pitch / sizeof(float))" in message
    fixed = source.replace(index, "y * (pitch / sizeof(float)) + x")
    cuda.RawKernel(fixed, "k", backend="cpu")((2, 2), (16, 16), (image, np.uint64(image.strides[0]), 32, 32))
    assert (image == 1).all()


def test_memset_past_a_local_array_says_its_count_is_in_bytes():
    source = r"""
extern "C" __global__ void k(float* y) {
    float buf[8];
    memset(buf, 0, COUNT);  // MEMSET
    buf[threadIdx.x % 8] = 1.0f;
    y[threadIdx.x] = buf[0] + buf[7];
}
"""
    y = np.zeros(8, np.float32)
    with pytest.raises(cuda.KernelError, match=r"local array buf \(declared at line 3\), which holds 8 elements") as info:
        cuda.RawKernel(source.replace("COUNT", "16 * sizeof(float)"), "k", backend="cpu")((1,), (8,), (y,))
    assert info.value.line == line_of("MEMSET", source)
    assert "memset's last argument is a count of bytes" in str(info.value) and "`sizeof(buf)`" in str(info.value)
    cuda.RawKernel(source.replace("COUNT", "sizeof(buf)"), "k", backend="cpu")((1,), (8,), (y,))
    np.testing.assert_array_equal(y, [1, 0, 0, 0, 0, 0, 0, 1])


@pytest.mark.parametrize("copy", ["memcpy(s, a + 8, sizeof(float) * 64);",
                                  "cg::memcpy_async(b, s, a + 8, sizeof(float) * 64); cg::wait(b);"])
def test_a_copy_past_an_arrays_end_names_the_first_element_past_it_and_its_byte_count(copy):
    source = r"""#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
namespace cg = cooperative_groups;
extern "C" __global__ void k(const float* a, float* o) {
    __shared__ float s[64];
    auto b = cg::this_thread_block();
    COPY  // COPY
    o[threadIdx.x] = s[threadIdx.x];
}""".replace("COPY ", copy + " ")
    with pytest.raises(cuda.KernelError, match=r"accessed a\[64\], but a has 64 elements") as info:
        cuda.RawKernel(source, "k", backend="cpu")((1,), (64,), (np.arange(64, dtype=np.float32), np.zeros(64, np.float32)))
    assert info.value.line == line_of("COPY", source) and "last argument is a count of bytes" in str(info.value)


def test_a_syncthreads_count_some_threads_skip_is_named_as_written():
    source = r"""
extern "C" __global__ void k(const float* x, int* out) {
    int t = threadIdx.x, c = 0;
    if (t < 16) c = __syncthreads_count(x[t] > 0.5f);  // COUNT
    if (t == 0) out[0] = c;
}
"""
    with pytest.raises(cuda.KernelError, match=r"__syncthreads_count\(\) at line 4 is not reached by every thread") as info:
        cuda.RawKernel(source, "k", backend="cpu")((1,), (64,), (np.ones(64, np.float32), np.zeros(1, np.int32)))
    assert info.value.line == line_of("COUNT", source)


ROWS_OVER_A_PARTIAL_ARRAY = r"""
extern "C" __global__ void rows(const float* x, float* y, int total) {
    const float (*m)[16] = (const float (*)[16])x;
    __shared__ float s[64];
    for (float* p = &s[threadIdx.x]; p < &s[64]; p += blockDim.x) *p = 1.0f;    // (&s[64]: an end address)
    int r = blockIdx.x, c = threadIdx.x;
    if (r * 16 + c < total) y[r * 16 + c] = m[r][c] + s[c];                     // ROW
}
"""


def test_rows_over_an_array_with_a_partial_last_row_are_checked_against_its_end():
    """`float (*m)[16]` over 120 floats: the last row holds 8 of its 16; m[7][7] is in bounds and m[7][8]
    is not (the bounds were whole rows, 112 floats). `&s[64]` only makes an address (no access)."""
    x, y = np.arange(120, dtype=np.float32), np.zeros(120, np.float32)
    for sanitize in (False, True):
        cuda.RawKernel(ROWS_OVER_A_PARTIAL_ARRAY, "rows", backend="cpu", sanitize=sanitize)((8,), (16,), (x, y, 120))
        np.testing.assert_array_equal(y, x + 1)
        with pytest.raises(cuda.KernelError, match=r"accessed x\[120\], but x has 120 elements") as info:
            cuda.RawKernel(ROWS_OVER_A_PARTIAL_ARRAY, "rows", backend="cpu", sanitize=sanitize)((8,), (16,), (x, y, 128))
        assert info.value.block == (7, 0, 0) and info.value.thread == (8, 0, 0)
        assert info.value.line == line_of("ROW", ROWS_OVER_A_PARTIAL_ARRAY)


HEAP = r'''
extern "C" __global__ void per_thread(float* out) {
    float* buf = (float*)malloc(64 * 1024);     // 64 KiB a thread: 256 threads hold 16 MiB at once
    buf[0] = threadIdx.x;                       // UNCHECKED
    out[threadIdx.x] = buf[0];
    free(buf);
}
'''


@pytest.mark.filterwarnings("ignore:.*The blocks repeat one another's work")  # (two blocks of out[threadIdx.x])
def test_the_device_heap_holds_8_mib_as_on_a_gpu(monkeypatch):
    """A GPU's malloc returns NULL past cudaLimitMallocHeapSize (8 MiB): the threads of a block hold
    their blocks at once there, so what they free comes back only when the block ends."""
    from course.cuda import cpu as cuda_cpu

    monkeypatch.setattr(cuda_cpu, "HEAP_BYTES", [8 << 20])
    out = np.zeros(256, np.float32)
    with pytest.raises(cuda.KernelError, match=r"null pointer(?s:.*)note: in this launch malloc \(or new\) returned "
                                               r"NULL for a request of 65,536 bytes: the device heap holds 8,388,608 "
                                               r"bytes(?s:.*)course.cuda.set_heap_size\(bytes\)") as info:
        cuda.RawKernel(HEAP, "per_thread", backend="cpu")((1,), (256,), (out,))
    assert info.value.line == line_of("UNCHECKED", HEAP) and info.value.thread == (128, 0, 0)
    cuda.RawKernel(HEAP, "per_thread", backend="cpu")((2,), (64,), (out,))  # 4 MiB a block: fine
    cuda.set_heap_size(32 << 20)
    cuda.RawKernel(HEAP, "per_thread", backend="cpu")((1,), (256,), (out,))
    np.testing.assert_array_equal(out, np.arange(256))
    with pytest.raises(ValueError, match="whole number of bytes"):
        cuda.set_heap_size(0)


BIG_BLOCKS = r"""
extern "C" __global__ void churn(float* out, unsigned long long bytes) {
    float* block = (float*)malloc(bytes);    // one block per thread block: freed, it is back when the block ends
    block[0] = blockIdx.x, block[bytes / sizeof(float) - 1] = 1;
    out[blockIdx.x] = block[0] + block[bytes / sizeof(float) - 1];
    free(block);
}
"""


@pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="reads the process's resident memory (Linux)")
def test_freed_device_blocks_are_not_kept_past_a_byte_budget(monkeypatch):
    """Freed blocks wait in a quarantine (a use after free is named), but at most 256 MiB of them: a kernel
    that frees gigabytes does not keep them resident (probe 13: 10 GB freed grew the process by 3.6 GB)."""
    from course.cuda import cpu as cuda_cpu

    monkeypatch.setattr(cuda_cpu, "HEAP_BYTES", [1 << 30])
    resident = lambda: int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    out = np.zeros(48, np.float32)
    kernel = cuda.RawKernel(BIG_BLOCKS, "churn", backend="cpu", sanitize=False)
    kernel(1, 1, (out, np.uint64(1 << 20)))
    before = resident()
    kernel(48, 1, (out, np.uint64(24 << 20)))  # 1.1 GiB freed, 24 MiB at a time
    assert out.tolist() == list(range(1, 49))
    kernel(2, 1, (out, np.uint64(300 << 20)))  # blocks larger than the whole budget
    assert resident() - before < 400 << 20 and out[1] == 2


LEAKS = r'''
struct Node { Node* next; int value; };
__device__ Node* head;
__device__ float* saved;
extern "C" __global__ void scratch(float* out, int release) {
    float* tmp = (float*)malloc(8 * sizeof(float));                 // MALLOC
    for (int k = 0; k < 8; k++) tmp[k] = threadIdx.x + k;
    out[threadIdx.x] = tmp[7];
    if (release) free(tmp);
}
extern "C" __global__ void keep(unsigned long long* handed_back) {
    if (threadIdx.x == 0) saved = new float[4];                     // kept in a __device__ variable
    handed_back[threadIdx.x] = (unsigned long long)malloc(16);      // kept in an argument array
}
extern "C" __global__ void forget() {
    if (threadIdx.x == 0) delete[] saved;
}
__device__ unsigned long long* registry;
struct Slots { unsigned long long* slots; int n; };
extern "C" __global__ void remember(unsigned long long* r) { registry = r; }
extern "C" __global__ void fill() { registry[threadIdx.x] = (unsigned long long)malloc(16); }
extern "C" __global__ void fill_through(Slots s) {
    if (threadIdx.x < s.n) s.slots[threadIdx.x] = (unsigned long long)malloc(16);
}
extern "C" __global__ void list(int lose_first) {
    if (threadIdx.x == 0) {
        Node* a = new Node;                                         // NEW
        Node* b = new Node;
        a->next = b, b->next = nullptr;
        head = lose_first ? b : a;                                  // b is found through a
    }
}
'''


def test_device_heap_leaks_are_reported_as_compute_sanitizers_leak_check_does():
    """A launch that leaves malloc'd or new'd blocks with no pointer to them anywhere a later launch
    could find one (argument arrays, __device__ variables, other blocks) gets a KernelWarning naming the
    line; blocks kept for later, and blocks freed, give none."""
    module = cuda.RawModule(code=LEAKS, backend="cpu")
    out, handed = np.zeros(32, np.float32), np.zeros(32, np.uint64)
    with pytest.warns(cuda.KernelWarning, match=rf"kernel 'scratch' leaks device-heap memory: 32 blocks \(1,024 bytes\) "
                                                rf"that malloc made at line {line_of('MALLOC', LEAKS)} in this launch "
                                                r"(?s:.*)free\(\) each block"):
        module.get_function("scratch")((1,), (32,), (out, 1 - 1))
    np.testing.assert_array_equal(out, np.arange(32) + 7)
    with pytest.warns(cuda.KernelWarning, match=rf"1 block \(16 bytes\) that new made at line {line_of('NEW', LEAKS)}"
                                                r"(?s:.*)delete each block"):
        module.get_function("list")((1,), (32,), (1,))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        module.get_function("scratch")((1,), (32,), (out, 1))
        module.get_function("keep")((1,), (32,), (handed,))
        module.get_function("forget")((1,), (32,), ())
        module.get_function("list")((1,), (32,), (0,))
        assert np.all(handed != 0)
        # not the sanitizer's check: a plain launch says nothing
        cuda.RawModule(code=LEAKS, backend="cpu", sanitize=False).get_function("scratch")((1,), (32,), (out, 0))
        # pointers kept in memory the check cannot look through (an array that is no argument of this
        # launch, reached through a __device__ pointer or a struct argument): nothing is reported
        registry = np.zeros(32, np.uint64)
        module.get_function("remember")((1,), (1,), (registry,))
        module.get_function("fill")((1,), (32,), ())
        assert np.all(registry != 0)
        params = np.array((registry.ctypes.data, 32), np.dtype([("slots", np.uint64), ("n", np.int32)], align=True))
        module.get_function("fill_through")((1,), (32,), (params[()],))


BITONIC = r'''
extern "C" __global__ void bitonic(float* x, int fixed) {
    __shared__ float s[64];
    int t = threadIdx.x;
    s[t] = x[t];
    __syncthreads();
    for (int k = 2; k <= 64; k <<= 1)
        for (int j = k >> 1; j > 0; j >>= 1) {
            int p = t ^ j;
            if (p > t) {                                                    // IF
                bool up = (t & k) == 0;
                if ((s[t] > s[p]) == up) { float v = s[t]; s[t] = s[p]; s[p] = v; }
                if (!fixed) __syncthreads();                                // BUG: only the threads that swap
            }
            if (fixed) __syncthreads();
        }
    x[t] = s[t];
}
'''


def test_a_barrier_inside_an_if_that_threads_take_differently_is_named():
    """A bitonic step's `if (p > t) { swap; __syncthreads(); }`: the threads that skip the if reach the
    barrier in a later pass, and the block's threads get out of step. The report names the if and the
    barrier inside it, not the race that follows ("no __syncthreads() between them" would be wrong)."""
    x = np.random.default_rng(3).random(64).astype(np.float32)
    with pytest.raises(cuda.KernelError, match=r"meet at a __syncthreads\(\) in different passes: it sits inside the if "
                                               r"at line 10, which thread \(\d+, 0, 0\) has tested once and gone into once, "
                                               r"and thread \(\d+, 0, 0\) tested (twice|\d+ times)(?s:.*)move the barrier "
                                               r"out of it"):
        cuda.RawKernel(BITONIC, "bitonic", backend="cpu")((1,), (64,), (x.copy(), 0))
    y = x.copy()
    cuda.RawKernel(BITONIC, "bitonic", backend="cpu")((1,), (64,), (y, 1))  # `if (fixed)`: the same for all
    np.testing.assert_array_equal(y, np.sort(x))


def test_a_bitonic_step_without_its_partner_test_is_told_that_the_pairs_overlap():
    """Without `if (p > t)`, both threads of a pair compare and swap it: the race's hint says that the pairs overlap
    and names the partner test, not a barrier inside the line (red team 12-07)."""
    x = np.random.default_rng(3).random(64).astype(np.float32)
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory s\[\d+\]") as info:
        cuda.RawKernel(BITONIC.replace("if (p > t) {", "{"), "bitonic", backend="cpu")((1,), (64,), (x, 1))
    assert "compares and swaps a pair of elements" in str(info.value) and "`if (ixj > tid)`" in str(info.value)


def test_a_barrier_inside_an_if_the_whole_block_takes_alike_is_fine():
    src = r'''
extern "C" __global__ void halves(float* x, int n) {
    __shared__ float s[64];
    int t = threadIdx.x;
    s[t] = x[blockIdx.x * 64 + t];
    __syncthreads();
    if (blockIdx.x % 2 == 0) {          // the same for every thread of a block (not of the grid)
        float v = s[63 - t];
        __syncthreads();
        s[t] = v;
        __syncthreads();
    }
    x[blockIdx.x * 64 + t] = s[t];
}'''
    x = np.arange(128, dtype=np.float32)
    cuda.RawKernel(src, "halves", backend="cpu")((2,), (64,), (x, 128))
    np.testing.assert_array_equal(x, np.concatenate([np.arange(64)[::-1], np.arange(64, 128)]))


def test_a_value_one_lane_sets_and_a_shuffle_broadcasts_gets_no_warning(monkeypatch):
    """NVIDIA's warp-aggregated atomic: `int base; if (rank == 0) base = atomicAdd(...); base = shfl(base, 0);`.
    The other lanes' `base` is never used, and nvcc does not warn: neither does the course."""
    import warnings

    from course.cuda import cpu as cuda_cpu

    monkeypatch.setattr(cuda_cpu, "_warned", set())
    src = r'''
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void filter(const int* x, int* out, int* count, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] > 0) {
        cg::coalesced_group g = cg::coalesced_threads();
        int base;
        if (g.thread_rank() == 0) base = atomicAdd(count, (int)g.size());
        base = g.shfl(base, 0);
        out[base + g.thread_rank()] = x[i];
    }
}'''
    x = np.array([3, -1, 4, 1, -5, 9, 2, -6] * 8, np.int32)
    out, count = np.zeros(64, np.int32), np.zeros(1, np.int32)
    with warnings.catch_warnings():
        warnings.simplefilter("error", cuda.KernelWarning)
        cuda.RawKernel(src, "filter", backend="cpu")((2,), (32,), (x, out, count, 64))
    assert count[0] == (x > 0).sum() and sorted(out[:count[0]]) == sorted(x[x > 0])


def test_a_pointer_to_another_threads_local_array_is_reported():
    """Thread 0 hands the address of its local array to the block through shared memory: on a GPU the
    other threads reach their own local memory at that address, not thread 0's."""
    src = r'''
extern "C" __global__ void k(const float* x, float* y, int shared_copy) {
    __shared__ float* ptr;
    __shared__ float copy[4];
    float local[4];
    for (int k = 0; k < 4; k++) local[k] = x[k] + threadIdx.x;
    if (threadIdx.x == 0) {
        if (shared_copy) for (int k = 0; k < 4; k++) copy[k] = local[k];
        ptr = shared_copy ? copy : local;
    }
    __syncthreads();
    y[threadIdx.x] = ptr[threadIdx.x % 4];    // READ
}'''
    x, y = np.arange(4, dtype=np.float32), np.zeros(8, np.float32)
    with pytest.raises(cuda.KernelError, match=r"reads a local variable or array of thread \(0, 0, 0\) through a pointer"
                                               r"(?s:.*)hint: Put what the threads share in __shared__ memory") as info:
        cuda.RawKernel(src, "k", backend="cpu")((1,), (8,), (x, y, 0))
    assert info.value.thread == (1, 0, 0) and info.value.line == line_of("READ", src)
    cuda.RawKernel(src, "k", backend="cpu")((1,), (8,), (x, y, 1))
    np.testing.assert_array_equal(y, np.tile(x, 2))


def test_cas_loops_that_only_contention_breaks_get_a_warning(monkeypatch):
    """Threads that run one after another never make atomicCAS fail, so a loop that ignores its result,
    or never refreshes the value it compares with, gives the right answer here and loses updates (or
    never ends) on a GPU: the source says so. CUDA's own patterns pass without a word."""
    import warnings

    from course.cuda import cpu as cuda_cpu

    monkeypatch.setattr(cuda_cpu, "_warned", set())
    src = r'''
__device__ void add_ignoring(float* addr, float v) {
    int* a = (int*)addr; int old = *a, assumed;
    do { assumed = old; atomicCAS(a, assumed, __float_as_int(__int_as_float(assumed) + v)); } while (assumed != old);
}
__device__ void add_stale(float* addr, float v) {
    int* a = (int*)addr; int assumed = *a; int desired = __float_as_int(__int_as_float(assumed) + v), old;
    do { old = atomicCAS(a, assumed, desired); } while (old != assumed);
}
__device__ double add_double(double* address, double val) {            // the CUDA guide's
    unsigned long long* p = (unsigned long long*)address;
    unsigned long long old = *p, assumed;
    do {
        assumed = old;
        old = atomicCAS(p, assumed, __double_as_longlong(val + __longlong_as_double(assumed)));
    } while (assumed != old);
    return __longlong_as_double(old);
}
__device__ void lock(int* m) { while (atomicCAS(m, 0, 1) != 0) { } }
__device__ void unlock(int* m) { __threadfence(); atomicCAS(m, 1, 0); }
extern "C" __global__ void k(float* t, double* d, int* m, int which) {
    if (which == 0) add_ignoring(t, 1.0f);
    if (which == 1) add_stale(t + 1, 1.0f);
    add_double(d, 1.0);
    lock(m); t[2] += 1.0f; unlock(m);
}'''
    src = src.replace('extern "C"', r'''
#define EMPTY -1
__device__ void increment(int* p) { int old; do { old = *p; } while (atomicCAS(p, old, old + 3) != old); }
__device__ int insert(int* slots, int key) {         // linear probing: EMPTY is a constant, not a stale read
    for (int probe = 0; probe < 8; probe++) {
        int s = (key + probe) % 8, prev = atomicCAS(&slots[s], EMPTY, key);
        if (prev == EMPTY || prev == key) return s;
    }
    return -1;
}
extern "C"''', 1)
    t, d, m = np.zeros(3, np.float32), np.zeros(1), np.zeros(1, np.int32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cuda.RawKernel(src, "k", backend="cpu", sanitize=False)((1,), (1,), (t, d, m, 0))
    messages = [str(w.message) for w in caught if issubclass(w.category, cuda.KernelWarning)]
    assert len(messages) == 2, messages
    assert "line 4: the value atomicCAS returns is not used" in messages[0] and "assumed = old;" in messages[0]
    assert "line 8: the loop around atomicCAS never refreshes `assumed`" in messages[1]  # (and not the idioms)
    assert t.tolist() == [1.0, 0.0, 1.0] and d[0] == 1.0


def test_a_hash_tables_probe_loop_with_the_key_as_compare_value_gets_no_atomiccas_warning():
    """`atomicCAS(&table[h], k, TOMB)` in a loop that moves h on at every pass (a hash table's delete, linear probing):
    the compare value is the key, never to be refreshed; the warning that the loop never ends was wrong (red team
    12-07). The same loop that tries one slot again and again keeps it."""
    table, keys = np.full(16, -1, np.int32), np.array([3, 5, 7], np.int32)
    for k in keys:
        h = int(k) * 2654435761 % 2 ** 32 % 16
        while table[h] != -1:
            h = (h + 1) % 16
        table[h] = k
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cuda.RawKernel(HASH_TABLE, "erase", backend="cpu")((1,), (32,), (table, keys, np.int32(3), np.int32(16)))
    assert sorted(table.tolist()) == [-2] * 3 + [-1] * 13
    with pytest.warns(cuda.KernelWarning, match=rf"line {line_of('ERASE', HASH_TABLE)}: the loop around atomicCAS never "
                                                 r"refreshes `k`"):  # (a loop that tries one slot again and again)
        cuda.RawKernel("continue;".join(HASH_TABLE.rsplit("h = (h + 1) % cap;", 1)), "erase", backend="cpu")(
            (1,), (32,), (table, keys, np.int32(3), np.int32(16)))


@pytest.mark.parametrize("made, freed, message", [
    ("new float[4]", "delete t", r"calls delete at line 3 on a block that new\[\] made(?s:.*)hint: Use delete\[\] here"),
    ("(float*)malloc(16)", "delete[] t", r"calls delete\[\] at line 3 on a block that malloc made(?s:.*)Use free here"),
    ("new float[4]", "free(t)", r"calls free at line 3 on a block that new\[\] made"),
])
def test_free_delete_and_delete_array_must_match_what_made_the_block(made, freed, message):
    src = ('extern "C" __global__ void k(float* y) {\n    float* t = %s; t[0] = 1;\n    y[threadIdx.x] = t[0]; %s;\n}'
           % (made, freed))
    with pytest.raises(cuda.KernelError, match=message):
        cuda.RawKernel(src, "k", backend="cpu")((1,), (4,), (np.zeros(4, np.float32),))
    matching = {"new float[4]": "delete[] t", "(float*)malloc(16)": "free(t)"}[made]
    y = np.zeros(4, np.float32)
    cuda.RawKernel(src.replace(freed, matching), "k", backend="cpu")((1,), (4,), (y,))
    np.testing.assert_array_equal(y, 1)


ARRAYS_IN_CLASSES = r"""
struct Vec4 {
    float v[4];
    __device__ float& operator[](int i) { return v[i]; }                  // OPERATOR
    __device__ void set(int i, float f) { v[i] = f; }                      // SET
    __device__ float local(int n) const { float v[2] = {1, 2}; return v[n] + this->v[0]; }  // LOCAL NAMED V
};
template <typename T, int N> struct Array {
    T data[N];
    __device__ T& operator[](int i) { return data[i]; }                    // TEMPLATE
};
template <int N> struct Rows { float m[2][N]; };
__device__ Vec4 global_vec;
extern "C" __global__ void classes(const float* x, float* out, int last, int which) {
    Vec4 w = {};
    Array<float, 4> a;
    Rows<4> r;
    __shared__ Vec4 s;
    float taps[] = {x[0], x[1], x[2]};                                       // SIZED BY ITS INITIALIZER
    float sum = 0;
    for (int k = 0; k <= last; ++k) {
        if (which == 0) w[k] = x[k];
        if (which == 1) w.set(k, 1.0f);
        if (which == 2) a[k] = x[k];
        if (which == 3) r.m[1][k] = x[k];                                    // ROWS
        if (which == 4) s[k] = x[k];
        if (which == 5) global_vec[k] = x[k];
        if (which == 6) sum += taps[k];                                      // TAPS
    }
    if (which == 7) sum += w.local(last);
    out[threadIdx.x] = sum;
}
"""


@pytest.mark.parametrize("sanitize", [False, True])
def test_array_members_are_checked_inside_methods_and_in_template_structs(sanitize):
    """`v[i]` named bare in a method (operator[], set), a template struct's member (`Array<T, N>::data`,
    `Rows<4>::m[1][k]`), on the stack, in __shared__ and __device__ objects, and a local array sized by its
    initializer: each index past the end is a fault at the line that made it (probe 13 found them unchecked)."""
    kernel = cuda.RawKernel(ARRAYS_IN_CLASSES, "classes", backend="cpu", sanitize=sanitize)
    x, out = np.arange(8, dtype=np.float32), np.zeros(1, np.float32)
    for which in range(8):
        kernel(1, 1, (x, out, 1 if which == 7 else 2, which))  # in bounds everywhere
    expected = {0: ("v[4]", "OPERATOR", 4), 1: ("v[4]", "SET", 4), 2: ("data[4]", "TEMPLATE", 4),
                3: (r"r\.m\[\.\.\.\]\[4\]", "ROWS", 4), 4: ("v[4]", "OPERATOR", 4), 5: ("v[4]", "OPERATOR", 4),
                6: ("taps[3]", "TAPS", 3), 7: ("v[2]", "LOCAL NAMED V", 2)}
    for which, (element, marker, extent) in expected.items():
        with pytest.raises(cuda.KernelError, match=rf"accessed {element if which == 3 else re.escape(element)}.*has "
                                                   rf"{extent} elements") as info:
            kernel(1, 1, (x, out, extent, which))
        assert info.value.line == line_of(marker, ARRAYS_IN_CLASSES), which


UNSET_RESULT = r"""
enum Op { ADD, MUL, NEG };
__device__ float apply(Op op, float a, float b) {
    float r;
    switch (op) { case ADD: r = a + b; break; case MUL: r = a * b; break; }
    return r;
}
extern "C" __global__ void ops(const float* x, float* out, int n, int op) {
    int i = threadIdx.x;
    if (i < n) out[i] = apply((Op)op, x[i], 2.0f);                         // STORE
}
"""


def test_a_stored_float_that_is_the_fill_of_a_variable_without_a_value_is_reported():
    """`float r;` set in some cases of a switch: GCC only says it "may" be unset (so no warning), but a sanitized
    launch fills it with bytes 0xFE, and a store of exactly that float names the line and the fix."""
    kernel = cuda.RawKernel(UNSET_RESULT, "ops", backend="cpu")
    x, out = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    kernel(1, 8, (x, out, 8, 1))
    assert out.tolist() == (2 * x).tolist()
    with pytest.raises(cuda.KernelError, match=r"stores -1\.6947e38 into out\[0\]: the bytes 0xFE that a sanitized "
                                               r"launch puts in a local variable before it has a value") as info:
        kernel(1, 8, (x, out, 8, 2))
    assert info.value.line == line_of("STORE", UNSET_RESULT) and info.value.thread == (0, 0, 0)
    assert "a `default:` in the switch" in str(info.value)


UNSET_INDEX = r"""
extern "C" __global__ void argmax_over(const int* x, int* best_at, int limit) {
    int best;
    for (int j = 0; j < 4; j++)
        if (x[threadIdx.x * 4 + j] > limit) best = j;
    best_at[threadIdx.x] = best;                                             // STORE
}
"""

UNSET_COUNT = r"""
extern "C" __global__ void count_positive(const float* x, int* count, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int one;
    if (i < n && x[i] > 0) one = 1;
    atomicAdd(count, one);                                                   // ADD
}
"""


def test_an_unset_variable_passed_to_an_atomic_is_reported_though_its_only_value_is_a_constant():
    """`one` is 1 on the path that sets it: GCC's value numbering took the unset path's fill for "undefined"
    and made it 1 everywhere (every thread counted), until sanitized builds kept the fill (-fno-tree-fre)."""
    x, count = np.linspace(-1, 1, 64, dtype=np.float32), np.zeros(1, np.int32)
    with pytest.raises(cuda.KernelError, match=r"passes -16843010 to an atomic function on count\[0\]") as info:
        cuda.RawKernel(UNSET_COUNT, "count_positive", backend="cpu")(2, 32, (x, count, np.int32(64)))
    assert info.value.line == line_of("ADD", UNSET_COUNT) and info.value.thread == (0, 0, 0)
    fixed = UNSET_COUNT.replace("int one;", "int one = 0;")
    count[:] = 0
    cuda.RawKernel(fixed, "count_positive", backend="cpu")(2, 32, (x, count, np.int32(64)))
    assert count[0] == (x > 0).sum()


BYTE_MASKS = r"""
extern "C" __global__ void masks(unsigned* out, int* signed_out) {
    out[threadIdx.x] = ~0x01010101u;
    signed_out[threadIdx.x] = (int)~0x01010101u;
}
"""


def test_an_unset_integer_stored_is_reported_and_the_same_bits_computed_are_not():
    """An int's fill (-16843010) stored is the unset variable's too (GCC does not warn for this loop), in a kernel
    that declares an integer without a value; one whose variables all start with values can compute those bits."""
    kernel = cuda.RawKernel(UNSET_INDEX, "argmax_over", backend="cpu")
    x, out = np.arange(16, dtype=np.int32), np.zeros(4, np.int32)
    kernel(1, 4, (x, out, np.int32(-1)))
    assert out.tolist() == [3, 3, 3, 3]
    with pytest.raises(cuda.KernelError, match=r"stores -16843010 into best_at\[0\]: the bytes 0xFE") as info:
        kernel(1, 4, (x, out, np.int32(100)))
    assert info.value.line == line_of("STORE", UNSET_INDEX) and "or -1 for an index that means none yet" in str(info.value)
    out, signed = np.zeros(4, np.uint32), np.zeros(4, np.int32)
    cuda.RawKernel(BYTE_MASKS, "masks", backend="cpu")(1, 4, (out, signed))
    assert (out == 0xFEFEFEFE).all() and (signed == -16843010).all()


UNSET_LANE = r"""
extern "C" __global__ void pack(const float* a, float4* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float4 v;
    v.x = a[4 * i]; v.y = a[4 * i + 1]; v.z = a[4 * i + 2];
    out[i] = v;                                                              // STORE
}
extern "C" __global__ void pack_ints(const int* a, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int4 v;
    v.x = a[4 * i]; v.y = a[4 * i + 1]; v.w = a[4 * i + 3];
    reinterpret_cast<int4*>(out)[i] = v;                                     // INTS
}
"""


def test_a_vector_stored_with_a_lane_never_set_is_reported_with_that_lane():
    """`float4 v;` with .w never set, stored whole: the lane holds the fill (each lane is checked, as a float
    or an int); with every lane set, the same kernel runs."""
    module = cuda.RawModule(code=UNSET_LANE, backend="cpu", sanitize=True)
    with pytest.raises(cuda.KernelError, match=r"stores -1\.6947e38 into out\[0\]\.w: the bytes 0xFE") as info:
        module.get_function("pack")(1, 8, (np.ones(32, np.float32), np.zeros(32, np.float32), np.int32(8)))
    assert info.value.line == line_of("STORE", UNSET_LANE)
    with pytest.raises(cuda.KernelError, match=r"stores -16843010 into out\[2\]: the bytes 0xFE") as info:
        module.get_function("pack_ints")(1, 8, (np.ones(32, np.int32), np.zeros(32, np.int32), np.int32(8)))
    assert info.value.line == line_of("INTS", UNSET_LANE)
    fixed = UNSET_LANE.replace("v.z = a[4 * i + 2];", "v.z = a[4 * i + 2]; v.w = a[4 * i + 3];")
    out = np.zeros(32, np.float32)
    cuda.RawModule(code=fixed, backend="cpu", sanitize=True).get_function("pack")(
        1, 8, (np.arange(32, dtype=np.float32), out, np.int32(8)))
    assert (out == np.arange(32)).all()


UNSET_MEMBER = r"""
struct Particle { float x, y, vx, vy; };
struct Mixed { double d; int k; };
extern "C" __global__ void start(const float* pos, Particle* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    Particle p;
    p.x = pos[2 * i]; p.y = pos[2 * i + 1]; p.vx = 0.0f;
    out[i] = p;                                                              // STORE
}
struct Pair { float a, b; __device__ Pair(float x) : a(x), b(2 * x) {} };   // (no default constructor)
struct Pair2 { float a, b; };
extern "C" __global__ void made(Pair* out) {
    Pair p(1.0f);
    out[threadIdx.x] = p;
}
extern "C" __global__ void shared(float* out) {   // (through shared memory: the read of the unset member)
    __shared__ Pair2 s[32];
    Pair2 p;
    p.a = 1.0f;
    s[threadIdx.x] = p;
    __syncthreads();
    out[threadIdx.x] = s[(threadIdx.x + 1) % 32].b;                          // READ
}
extern "C" __global__ void padded(Mixed* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    Mixed m;
    m.d = 1.5; m.k = i;
    out[i] = m;
}
"""


def test_a_struct_stored_with_a_member_never_set_is_reported_and_its_padding_is_not():
    """`Particle p;` with vy never set, stored whole: the word that holds the fill is named by its bytes, and the
    hint starts the struct at {}. A struct with padding (a double and an int: 4 bytes after the int) whose members
    are all set is no report: the padding is left out."""
    module = cuda.RawModule(code=UNSET_MEMBER, backend="cpu", sanitize=True)
    particles = np.zeros(8, np.dtype([("x", np.float32), ("y", np.float32), ("vx", np.float32), ("vy", np.float32)]))
    with pytest.raises(cuda.KernelError, match=r"into out\[0\] \(bytes 12 to 15 of the 16-byte struct: a member that "
                                               r"was never set\)") as info:
        module.get_function("start")(1, 8, (np.ones(16, np.float32), particles, np.int32(8)))
    assert info.value.line == line_of("STORE", UNSET_MEMBER) and "`Particle v = {};`" in str(info.value)
    mixed = np.zeros(8, np.dtype([("d", np.float64), ("k", np.int32), ("pad", np.int32)]))
    module.get_function("padded")(1, 8, (mixed, np.int32(8)))
    assert (mixed["k"] == np.arange(8)).all() and (mixed["d"] == 1.5).all()
    with pytest.raises(cuda.KernelError, match=r"reads shared memory s\[1\]\.b, which thread \(1, 0, 0\) set at line "
                                               rf"{line_of('READ', UNSET_MEMBER) - 2} to the value of a local variable "
                                               "that had none"):
        module.get_function("shared")(1, 32, (np.zeros(32, np.float32),))
    pairs = np.zeros(4, np.dtype([("a", np.float32), ("b", np.float32)]))
    module.get_function("made")(1, 4, (pairs,))
    assert (pairs["a"] == 1).all() and (pairs["b"] == 2).all()


HEAP_UNSET = r"""
extern "C" __global__ void k(float* y, int n) {
    float* buf = new float[n]%s;
    y[threadIdx.x] = buf[n - 1];                                             // READ
    delete[] buf;
}
"""


def test_a_block_from_new_holds_no_values_until_stored():
    """A sanitized launch fills a new heap block with the bytes of an unset variable: reading an element that no
    thread stored is reported (initcheck), naming the heap and the line that made the block; `new float[n]()`
    starts at 0."""
    with pytest.raises(cuda.KernelError, match=r"reads element 7 \(4 bytes each\) of the 32-byte block that malloc or "
                                               r"new made at line 3, which holds -1\.6947e38") as info:
        cuda.RawKernel(HEAP_UNSET % "", "k", backend="cpu")(1, 4, (np.ones(4, np.float32), np.int32(8)))
    assert info.value.line == line_of("READ", HEAP_UNSET) and "`new float[n]()`, which starts every" in str(info.value)
    y = np.ones(4, np.float32)
    cuda.RawKernel(HEAP_UNSET % "()", "k", backend="cpu")(1, 4, (y, np.int32(8)))
    assert (y == 0).all()


UNSET_INTO_SHARED = r"""
extern "C" __global__ void shift(const float* x, float* out, int n, int reach) {
    __shared__ float s[32];
    float v;
    if (threadIdx.x < n) v = x[threadIdx.x];
    s[threadIdx.x] = v;                                                      // STORE
    __syncthreads();
    if (threadIdx.x + 1 < reach) out[threadIdx.x] = s[threadIdx.x + 1];     // READ
}
"""


def test_an_unset_variable_stored_into_shared_memory_is_reported_where_a_thread_reads_it():
    """The fill stored into shared memory only passes garbage on (as a copy of an unwritten element does): silent
    while no thread reads those elements, and an initcheck report at the read, naming the store, when one does."""
    kernel = cuda.RawKernel(UNSET_INTO_SHARED, "shift", backend="cpu")
    x, out = np.arange(32, dtype=np.float32), np.zeros(32, np.float32)
    kernel(1, 32, (x, out, 20, 20))  # threads 20..31 store garbage into s[20..31], which no thread reads
    assert out[:19].tolist() == x[1:20].tolist()
    with pytest.raises(cuda.KernelError, match=r"reads shared memory s\[20\], which thread \(20, 0, 0\) set at line "
                                               rf"{line_of('STORE', UNSET_INTO_SHARED)} to the value of a local variable "
                                               r"that had none") as info:
        kernel(1, 32, (x, out, 20, 22))
    assert info.value.line == line_of("READ", UNSET_INTO_SHARED) and info.value.thread == (19, 0, 0)
    assert "give the variable a value on every path" in str(info.value)


NULL_FUNCTION_POINTER = r"""
__device__ float twice(float v) { return 2 * v; }
typedef float (*op_t)(float);
extern "C" __global__ void pick(const float* x, float* out, int n) {
    int i = threadIdx.x;
    op_t f = i < 2 ? twice : nullptr;
    if (i < n) out[i] = f(x[i]);                                            // CALL
}
"""


@pytest.mark.parametrize("sanitize", [False, True])
def test_a_call_through_a_null_function_pointer_names_the_calling_line(sanitize):
    """The pc is 0 there, which no line has: the line is the one the call returns to (probe 13: no line)."""
    with pytest.raises(cuda.KernelError, match=r"called a function through a null function pointer") as info:
        cuda.RawKernel(NULL_FUNCTION_POINTER, "pick", backend="cpu", sanitize=sanitize)(
            1, 4, (np.ones(4, np.float32), np.zeros(4, np.float32), 4))
    assert info.value.line == line_of("CALL", NULL_FUNCTION_POINTER) and info.value.thread == (2, 0, 0)


GUARDED_BUT_PAST_THE_END = r"""
extern "C" __global__ void conv_valid(const float* x, const float* k, float* y, int n, int w) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {                                  // guards i, not i + j
        float s = 0.0f;
        for (int j = 0; j < w; j++) s += x[i + j] * k[j];
        y[i] = s;
    }
}
extern "C" __global__ void frontier(const int* f, int* out, int size) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > size) return;                         // lets i reach size
    out[i] = f[i];
}
extern "C" __global__ void unguarded(const float* x, float* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    y[i] = x[i];
}
"""


CSR_ROWS = r"""
extern "C" __global__ void spmv(unsigned rows, const unsigned* rowPtrs, const unsigned* cols, const float* values,
                                const float* x, float* y) {
    unsigned row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        float sum = 0.0f;
        for (unsigned k = rowPtrs[row]; k < rowPtrs[row + 1]; ++k) sum += values[k] * x[cols[k]];  // ROW
        y[row] = sum;
    }
}
"""


def test_a_csr_matrix_passed_without_its_last_row_pointer_is_told_to_pass_rows_plus_one():
    """`rowPtrs[row]` and `rowPtrs[row + 1]` on one line: the one past the end is `row + 1`, which the guard on
    `row` does not bound; a CSR matrix's row pointers are rows + 1."""
    indptr, cols, values = np.array([0, 1, 3, 4], np.uint32), np.array([0, 1, 2, 0], np.uint32), np.ones(4, np.float32)
    args = lambda pointers: (np.uint32(3), pointers, cols, values, np.ones(3, np.float32), np.zeros(3, np.float32))
    cuda.RawKernel(CSR_ROWS, "spmv", backend="cpu")((1,), (32,), args(indptr))
    with pytest.raises(cuda.KernelError) as info:
        cuda.RawKernel(CSR_ROWS, "spmv", backend="cpu")((1,), (32,), args(indptr[:-1]))  # (scipy's indptr, cut)
    assert info.value.line == line_of("ROW", CSR_ROWS)
    assert ("The index here is `row + 1`, and line 5 checks `row` (`if (row < rows)`): that check alone does not "
            "keep `row + 1` inside rowPtrs, which has 3 elements (row + 1 = 3 here).") in str(info.value)
    assert "(the row pointers of a CSR matrix: rows + 1, the last one the number of values), pass it whole: 4 " \
           "elements here." in str(info.value)


def test_an_index_past_the_end_under_a_guard_names_the_guard_not_a_new_one():
    """"Guard the access" would not help where a guard is there already: an index of more than the guarded
    variable (a 'valid' convolution's x[i + j]), an early return with `>` that lets i reach the size; a
    kernel without a guard (after the others in the source) still gets the general hint."""
    kernel = lambda name: cuda.RawKernel(GUARDED_BUT_PAST_THE_END, name, backend="cpu")  # noqa: E731
    with pytest.raises(cuda.KernelError) as info:
        kernel("conv_valid")((3,), (128,), (np.ones(300, np.float32), np.ones(5, np.float32),
                                            np.zeros(300, np.float32), 300, 5))
    assert ("The index here is `i + j`, and line 4 checks `i` (`if (i < n)`): that check alone does not keep "
            "`i + j` inside x, which has 300 elements (i + j = 300 here).") in str(info.value)
    with pytest.raises(cuda.KernelError) as info:
        kernel("frontier")((1,), (128,), (np.ones(100, np.int32), np.zeros(100, np.int32), 100))
    assert ("line 12 returns only when `i > size`, which lets i reach the size itself: return when `i >= size`"
            in str(info.value))
    with pytest.raises(cuda.KernelError) as info:
        kernel("unguarded")((1,), (128,), (np.ones(100, np.float32), np.zeros(100, np.float32)))
    # (the learner's index; no size parameter here: the length, and a word on passing one)
    assert ("guard the access: `if (i < 100)` (100: the length of x in this launch; better a size the kernel is "
            "given)") in str(info.value)


def test_the_guard_a_hint_offers_is_written_with_the_kernels_own_names():
    # A 2-D index without a guard: each coordinate against its own size (a flat `r * cols + c < rows * cols`
    # would let a column past the edge into the next row); a 1-D one against the size parameter.
    source = r"""
extern "C" __global__ void scale2d(const float* x, float* y, int rows, int cols) {
    int r = blockIdx.y * blockDim.y + threadIdx.y, c = blockIdx.x * blockDim.x + threadIdx.x;
    y[r * cols + c] = 2.0f * x[r * cols + c];
}
extern "C" __global__ void scale(const float* x, float* y, int n) {
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    y[k] = 2.0f * x[k];
}
"""
    x = np.ones((20, 20), np.float32)
    with pytest.raises(cuda.KernelError) as info:
        cuda.RawKernel(source, "scale2d", backend="cpu")((2, 2), (16, 16), (x, np.zeros_like(x), 20, 20))
    assert ("guard the access: `if (r < rows && c < cols)`, each coordinate against its own size"
            in str(info.value))
    with pytest.raises(cuda.KernelError) as info:
        cuda.RawKernel(source, "scale", backend="cpu")((2,), (64,), (np.ones(100, np.float32),
                                                                     np.zeros(100, np.float32), 100))
    assert "guard the access: `if (k < n)`, if n is the length of x (100 here)" in str(info.value)
    # several sizes (a matrix's M and N): none of them is named as the array's length
    two = source.replace("scale(const float* x, float* y, int n)", "scale(const float* x, float* y, int M, int N)")
    with pytest.raises(cuda.KernelError) as info:
        cuda.RawKernel(two, "scale", backend="cpu")((2,), (64,), (np.ones(100, np.float32), np.zeros(100, np.float32),
                                                                  10, 10))
    assert "guard the access: `if (k < 100)` (100: the length of x in this launch" in str(info.value)


ARRAY_HINTS = r"""
#define T 16
extern "C" __global__ void blur(const float* in, float* out, int w) {
    __shared__ float tile[T][T];
    int x = blockIdx.x * T + threadIdx.x, y = blockIdx.y * T + threadIdx.y;
    tile[threadIdx.y + 1][threadIdx.x + 1] = in[y * w + x];
    __syncthreads();
    out[y * w + x] = tile[threadIdx.y + 1][threadIdx.x + 1];
}
extern "C" __global__ void stage(const float* x, float* y, int n) {
    __shared__ float s[128];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[i] = i < n ? x[i] : 0;
    __syncthreads();
    if (i < n) y[i] = s[i];
}
extern "C" __global__ void window(const float* x, float* y) {
    float taps[5];
    for (int d = -2; d <= 2; d++) taps[d] = x[(threadIdx.x + d + 32) % 32];
    y[threadIdx.x] = taps[0] + taps[4];
}
"""


def test_shared_and_local_array_faults_name_their_learner_causes():
    """A tile as large as the block indexed `threadIdx.x + 1` lacks its halo; a grid-wide index into a block's
    shared array wants threadIdx.x; a loop from -2 indexes a local array below 0 (the `% 32` on the line is
    another subscript's, whose hint it got)."""
    kernel = lambda name: cuda.RawKernel(ARRAY_HINTS, name, backend="cpu")  # noqa: E731
    with pytest.raises(cuda.KernelError) as info:
        kernel("blur")((2, 2), (16, 16), (np.ones(1024, np.float32), np.zeros(1024, np.float32), 32))
    assert "a tile with a halo of 1 needs 16 + 2 elements there (1 on each side)" in str(info.value)
    with pytest.raises(cuda.KernelError) as info:
        kernel("stage")((4,), (128,), (np.ones(512, np.float32), np.zeros(512, np.float32), 512))
    assert ("`i` counts threads across the whole grid (line 12: `i = blockIdx.x * blockDim.x + threadIdx.x;`), but "
            "each block has its own s, with 128 elements: index it with the thread's place in its block, "
            "`s[threadIdx.x]`") in str(info.value)
    with pytest.raises(cuda.KernelError) as info:
        kernel("window")((1,), (32,), (np.ones(32, np.float32), np.zeros(32, np.float32)))
    assert "accessed taps[-2]" in str(info.value) and "% keeps the sign" not in str(info.value)
    assert "guard it: `if (d >= 0 && d < 5)`" in str(info.value)


TEMPLATE_BLOCK = r"""
template <typename T, int BLOCK>
__global__ void block_sums(const T* x, T* out, int n) {
    __shared__ T s[BLOCK];
    int t = threadIdx.x, i = blockIdx.x * BLOCK + t;       // two declarators: t's is threadIdx.x alone
    s[t] = i < n ? x[i] : T(0);                            // LOAD
    __syncthreads();
    for (int k = BLOCK / 2; k > 0; k >>= 1) { if (t < k) s[t] += s[t + k]; __syncthreads(); }
    if (t == 0) out[blockIdx.x] = s[0];
}
"""


def test_a_block_larger_than_a_templates_array_is_told_so_not_that_t_counts_the_grid():
    """`int t = threadIdx.x, i = blockIdx.x * BLOCK + t;` made t look grid-wide (the declarator ran on to the
    next one's blockIdx); the bug is a launch of 256 threads a block for BLOCK = 128."""
    module = cuda.RawModule(code=TEMPLATE_BLOCK, backend="cpu", name_expressions=["block_sums<float, 128>"])
    sums = module.get_function("block_sums<float, 128>")
    out = np.zeros(8, np.float32)
    sums((8,), (128,), (np.ones(1000, np.float32), out, 1000))
    assert out.sum() == 1000
    with pytest.raises(cuda.KernelError) as info:
        sums((4,), (256,), (np.ones(1000, np.float32), out, 1000))
    assert info.value.line == line_of("LOAD", TEMPLATE_BLOCK)
    assert ("`t` is threadIdx.x, which runs to 255 in this launch's blocks (256 threads along x), but s has 128 elements "
            "there, one a thread: launch blocks of at most 128 threads along x") in str(info.value)
    assert "across the whole grid" not in str(info.value)


HALO_LOAD = r"""
#define R 3
extern "C" __global__ void conv1d(const float* in, float* out, int n) {
    __shared__ float tile[64 + 2 * R];
    int i = blockIdx.x * 64 + threadIdx.x;
    tile[threadIdx.x + R] = in[i];
    if (threadIdx.x < R) tile[threadIdx.x] = in[i - R];
    __syncthreads();
    out[i] = tile[threadIdx.x] + tile[threadIdx.x + 2 * R];
}
"""


def test_a_halo_load_below_the_first_element_names_its_own_index_in_the_guard():
    with pytest.raises(cuda.KernelError) as info:
        cuda.RawKernel(HALO_LOAD, "conv1d", backend="cpu")((2,), (64,), (np.ones(128, np.float32),
                                                                       np.zeros(128, np.float32), 128))
    assert "accessed in[-3]" in str(info.value) and ("the neighbour `i - R` is outside the array where i is below R "
                                                     "(the border). Guard the border, `if (i >= R && ...)` (a stencil "
                                                     "skips its edge; a halo load takes 0 there, `i >= R ? ... : 0.0f`)"
                                                     ) in str(info.value)


DATA_INDEX = r"""
extern "C" __global__ void gather(const int* idx, const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[idx[i]];
}
extern "C" __global__ void lookup(const int* labels, const float* w, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int c = labels[i];
    y[i] = w[c];
}
"""


def test_an_index_read_from_data_past_the_end_blames_the_data_not_the_guard():
    """`x[idx[i]]` under `if (i < n)`, and `int c = labels[i]; w[c]`: the value comes from data, so the hint asks
    for the data's range (or a test of the value), not for the guard that is there."""
    kernel = lambda name: cuda.RawKernel(DATA_INDEX, name, backend="cpu")  # noqa: E731
    idx = np.array([0, 1, 2, 3, 4, 5, 6, 99], np.int32)
    with pytest.raises(cuda.KernelError) as info:
        kernel("gather")((1,), (8,), (idx, np.ones(8, np.float32), np.zeros(8, np.float32), 8))
    assert ("The index `idx[i]` is a value read from data, and here it is 99, but x has 8 elements" in str(info.value)
            and "`int j = idx[i]; if (j >= 0 && j < 8) ... x[j]`" in str(info.value))
    labels = np.array([0, 1, 2, 9, 1, 0, 2, 1], np.int32)
    with pytest.raises(cuda.KernelError) as info:
        kernel("lookup")((1,), (8,), (labels, np.ones(3, np.float32), np.zeros(8, np.float32), 8))
    assert "The index `c` is a value read from data, `labels[i]` (line 9), and here it is 9" in str(info.value)
    assert "guard the access: `if (i < n)`" not in str(info.value)


FLOAT4_TAIL = r"""
extern "C" __global__ void copy4(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < (n + 3) / 4) ((float4*)out)[i] = ((const float4*)in)[i];
}
"""


def test_a_float4_past_the_last_whole_one_names_the_floats_and_the_tail():
    """n = 4099 floats: (n + 3) / 4 float4s reach floats 4096..4099 of 4099; the message counts in floats too and
    the hint says the 3 left over need plain accesses."""
    with pytest.raises(cuda.KernelError) as info:
        cuda.RawKernel(FLOAT4_TAIL, "copy4", backend="cpu")((5,), (256,), (np.ones(4099, np.float32),
                                                                       np.zeros(4099, np.float32), 4099))
    text = str(info.value)
    assert "accessed in[4096] to in[4099] in one 16-byte access" in text
    assert "in has 4099 elements: 1024 whole 16-byte elements (valid indices 0 to 1023) and 3 after them" in text
    assert "The last 3 elements of in do not fill a whole 16-byte element" in text
    assert "seen through a 16-byte type such as float4, int4, double2 or a struct" in text
    # halves read two at a time (half2) over an odd count: the 4-byte types, and the one half left over
    source = r"""
#include <cuda_fp16.h>
extern "C" __global__ void pairs(const __half* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    const __half2* x2 = reinterpret_cast<const __half2*>(x);
    if (i < (n + 1) / 2) { float2 f = __half22float2(x2[i]); y[i] = f.x + f.y; }
}
"""
    with pytest.raises(cuda.KernelError) as info:
        cuda.RawKernel(source, "pairs", backend="cpu")((1,), (64,), (np.ones(101, np.float16), np.zeros(64, np.float32),
                                                                     101))
    text = str(info.value)
    assert "accessed x[100] to x[101] in one 4-byte access" in text and "such as half2, char4 or a struct" in text
    assert "The last 1 element of x does not fill a whole 4-byte element" in text


SWAPPED_2D = r"""
extern "C" __global__ void scale2d(const float* a, float* b, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) b[x * w + y] = 2.0f * a[x * w + y];
}
"""


def test_a_row_major_index_with_row_and_column_swapped_is_named():
    """`a[x * w + y]` under `if (x < w && y < h)` (a kernel's own x and y, not blockIdx's members): x stays below
    the width yet is multiplied by it; the hint gives `y * w + x`."""
    a = np.ones((8, 32), np.float32)
    with pytest.raises(cuda.KernelError) as info:
        cuda.RawKernel(SWAPPED_2D, "scale2d", backend="cpu")((2, 1), (16, 8), (a, np.zeros(256, np.float32), 32, 8))
    assert "line 5 checks `x < w`: `x` counts columns" in str(info.value)
    assert "is `y * w + x` (row times width, plus column)" in str(info.value)
    b = np.zeros((32, 32), np.float32)  # (square: no fault, and the transposed result)
    cuda.RawKernel(SWAPPED_2D, "scale2d", backend="cpu")((2, 4), (16, 8), (np.ones((32, 32), np.float32), b, 32, 32))
    assert (b == 2).all()


def test_every_lane_storing_a_warp_reductions_result_is_told_to_let_lane_0_store():
    """CSR SpMV, one warp a row: after the shuffles only lane 0 holds the row's sum; every lane storing
    y[warp] is a write collision whose hint is the lane guard (an atomicAdd would add partial sums)."""
    source = r"""
extern "C" __global__ void spmv_vector(const int* rowptr, const int* col, const float* val, const float* x,
                                       float* y, int rows) {
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
    if (warp >= rows) return;
    float s = 0.0f;
    for (int k = rowptr[warp] + lane; k < rowptr[warp + 1]; k += 32) s += val[k] * x[col[k]];
    for (int o = 16; o > 0; o /= 2) s += __shfl_down_sync(0xffffffff, s, o);
    y[warp] = s;
}"""
    rows = 4
    rowptr = np.arange(0, 33 * (rows + 1), 33, dtype=np.int32)
    col = np.arange(rowptr[-1], dtype=np.int32) % 64
    args = [rowptr, col, np.ones(rowptr[-1], np.float32), np.ones(64, np.float32), np.zeros(rows, np.float32), rows]
    with pytest.raises(cuda.KernelError, match=r"writes y\[0\], which thread \(0, 0, 0\) also wrote") as info:
        cuda.RawKernel(source, "spmv_vector", backend="cpu")((1,), (128,), args)
    assert "only the lane that holds the whole of it should store it" in str(info.value)
    assert "atomicAdd" not in str(info.value)
    fixed = source.replace("    y[warp] = s;", "    if (lane == 0) y[warp] = s;")
    cuda.RawKernel(fixed, "spmv_vector", backend="cpu")((1,), (128,), args)
    assert args[4].tolist() == [33.0] * rows


def test_a_1d_kernel_launched_with_a_2d_block_or_grid_is_told_it_ignores_that_axis():
    source = r"""
extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}"""
    args = (np.float32(2), np.ones(128, np.float32), np.ones(128, np.float32), 128)
    saxpy = cuda.RawKernel(source, "saxpy", backend="cpu")
    with pytest.raises(cuda.KernelError) as info:
        saxpy((4,), (32, 32), args)
    assert ("differ only in threadIdx.y, which the kernel never reads, so the 32 threads along y compute the same "
            "index") in str(info.value)
    with pytest.raises(cuda.KernelError) as info:
        saxpy((4, 4), (32,), args)
    assert "differ only in blockIdx.y, which the kernel never reads" in str(info.value)


def test_a_wrap_around_with_percent_below_zero_says_that_c_keeps_the_sign():
    source = r"""
extern "C" __global__ void blur_wrap(const float* in, float* out, int W) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= W) return;
    float s = 0.0f;
    for (int dx = -1; dx <= 1; dx++) s += in[(x + dx) % W];
    out[x] = s / 3;
}"""
    with pytest.raises(cuda.KernelError, match=r"accessed in\[-1\]") as info:
        cuda.RawKernel(source, "blur_wrap", backend="cpu")((1,), (64,), (np.ones(64, np.float32), np.zeros(64, np.float32), 64))
    assert ("C's % keeps the sign of a negative left side (-1 % W is -1, not W - 1). Add W before taking %: "
            "`(x + dx + W) % W`") in str(info.value)


def test_the_guard_a_local_or_shared_array_fault_suggests_uses_the_kernels_own_index():
    source = r"""
extern "C" __global__ void hist(const int* x, int* out) {
    __shared__ int bins[16];
    if (threadIdx.x < 16) bins[threadIdx.x] = 0;
    __syncthreads();
    int p = x[threadIdx.x];
    atomicAdd(&bins[p], 1);
    __syncthreads();
    if (threadIdx.x < 16) out[threadIdx.x] = bins[threadIdx.x];
}"""
    with pytest.raises(cuda.KernelError, match=r"accessed bins\[16\]") as info:
        cuda.RawKernel(source, "hist", backend="cpu")((1,), (64,), (np.arange(64, dtype=np.int32), np.zeros(16, np.int32)))
    assert "Guard the access (`if (p < 16)`;" in str(info.value)


def test_a_loop_that_runs_to_a_size_in_bytes_over_elements_is_named():
    """`i < n * sizeof(float)` over a float array (probe 20): the bound counts bytes."""
    source = r"""
extern "C" __global__ void clear(float* p, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n * sizeof(float); i += blockDim.x * gridDim.x)
        p[i] = 0.0f;
}
"""
    with pytest.raises(cuda.KernelError, match=r"accessed p\[\d+\], but p has 300 elements") as info:
        cuda.RawKernel(source, "clear", backend="cpu")((2,), (128,), (np.ones(300, np.float32), np.int32(300)))
    assert "The loop at line 3 runs to `n * sizeof(float)`, a size in bytes" in str(info.value)


KEPT_POINTER = r'''
struct Point { float x, y; };
__device__ float* g_buf;
static __device__ const Point* g_points = nullptr;
__managed__ unsigned int* g_count;
extern "C" __global__ void setup(float* buf, const Point* points, unsigned int* count) {
    g_buf = buf; g_points = points; g_count = count;
}
extern "C" __global__ void use(float* out, int shift) {
    int i = threadIdx.x;
    float* mine = g_buf;
    atomicAdd(g_count, 1u);
    if (shift < 0) { g_count[i] = 0; return; }                            // COUNT
    out[i] = g_buf[i + shift] + mine[i] + g_points[i].x;                  // USE
}
'''


@pytest.mark.parametrize("sanitize", [True, False])
def test_a_pointer_kept_in_a_device_variable_keeps_its_arrays_bounds(sanitize):
    """`__device__ float* g_buf;` set by one launch (`g_buf = buf;`) and read through by the next: the
    pointer keeps buf's bounds (it was a raw pointer, and g_buf[32] of a 32-float array read past it
    silently), and the message names the array by the earlier launch that passed it."""
    module = cuda.RawModule(code=KEPT_POINTER, backend="cpu", sanitize=sanitize)
    buf, points, count = np.arange(32, dtype=np.float32), np.ones((32, 2), np.float32), np.zeros(1, np.uint32)
    module.get_function("setup")((1,), (1,), (buf, points, count))
    assert np.frombuffer(module.get_global("g_buf")[:8].tobytes(), np.uint64)[0] == buf.ctypes.data
    out = np.zeros(32, np.float32)
    module.get_function("use")((1,), (32,), (out, np.int32(0)))
    np.testing.assert_array_equal(out, 2 * buf + 1)
    assert count[0] == 32
    with pytest.raises(cuda.KernelError, match=r"accessed buf\[32\], but buf \(the array given as buf to an earlier "
                                               r"launch of 'setup', reached through a pointer kept since") as info:
        module.get_function("use")((1,), (32,), (out, np.int32(1)))
    assert f"line {line_of('USE', KEPT_POINTER)}" in str(info.value) and "thread (31, 0, 0)" in str(info.value)
    with pytest.raises(cuda.KernelError, match=r"accessed count\[1\], but count \(the array given as count to an "
                                               r"earlier launch of 'setup'") as info:  # (a __managed__ one too)
        module.get_function("use")((1,), (32,), (out, np.int32(-1)))


INITIALISED_POINTERS = r"""
__device__ float table[8] = {1, 2, 3, 4, 5, 6, 7, 8};
__device__ int counter;
__device__ float* from_view = table + 2;
__device__ float* from_element = &table[4];
__device__ int* to_counter = &counter;
__device__ const float* to_const = table;
static __device__ float* with_static = table;
extern "C" __global__ void k(float* out, int i) {
    atomicAdd(to_counter, 1);
    out[0] = from_view[i] + from_element[0] + to_const[1] + with_static[0] + *to_counter;  // READ
}
"""


@pytest.mark.parametrize("sanitize", [True, False])
def test_a_device_pointer_initialised_with_a_device_array_keeps_its_bounds(sanitize):
    """`__device__ float* p = table + 2;` (or `&table[4]`, `&counter`): a checked pointer from its initializer,
    located in the array at each launch; it was a raw pointer, and p[6] read past table silently."""
    module = cuda.RawModule(code=INITIALISED_POINTERS, backend="cpu", sanitize=sanitize)
    out = np.zeros(1, np.float32)
    module.get_function("k")((1,), (1,), (out, 1))
    assert out[0] == 4 + 5 + 2 + 1 + 1
    with pytest.raises(cuda.KernelError, match=r"accessed table\[8\], but table has 8 elements") as info:
        module.get_function("k")((1,), (1,), (out, 6))
    assert info.value.line == line_of("READ", INITIALISED_POINTERS)


FILE_SCOPE_SHARED_POINTER = r"""
__shared__ float* buffer;
extern "C" __global__ void k(float* a, float* out, int shift, int barrier) {
    if (threadIdx.x == 0) buffer = a;                  // SET
    if (barrier) __syncthreads();
    out[threadIdx.x] = buffer[threadIdx.x + shift];    // READ
}
"""


@pytest.mark.parametrize("scope", ["file", "function"])
def test_a_file_scope_shared_pointer_keeps_the_bounds_of_what_a_thread_set_it_to(scope):
    """`__shared__ float* buffer;` at file scope, as in a function: a checked pointer (it was raw, and
    buffer[32] of a 32-float array read past it silently), still race-checked as a shared scalar. In both
    places `buffer[t]` reads the pointer first: without the barrier that is a race with the thread setting
    it (it went unnoted: only a plain `float* p = buffer;` was a read of it)."""
    source = FILE_SCOPE_SHARED_POINTER
    if scope == "function":
        source = source.replace("\n__shared__ float* buffer;", "").replace("{\n", "{\n    __shared__ float* buffer;", 1)
    kernel = cuda.RawKernel(source, "k", backend="cpu")
    a, out = np.arange(32, dtype=np.float32), np.zeros(32, np.float32)
    kernel((1,), (32,), (a, out, 0, 1))
    np.testing.assert_array_equal(out, a)
    with pytest.raises(cuda.KernelError, match=r"accessed a\[32\], but a has 32 elements") as info:
        kernel((1,), (32,), (a, out, 1, 1))
    assert info.value.line == line_of("READ", source)
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory buffer") as info:
        kernel((1,), (32,), (a, out, 0, 0))
    assert {line_of("SET", source), line_of("READ", source)} <= set(
        int(n) for n in re.findall(r"line (\d+)", str(info.value)))


def test_an_address_the_host_writes_into_a_device_pointer_is_taken_afresh():
    """The variable's first bytes are the address (get_global): after the host writes another array's
    address there, a launch does not check it against the bounds a kernel set before."""
    source = r'''
__device__ float* g;
extern "C" __global__ void keep(float* buf) { g = buf; }
extern "C" __global__ void read(float* out) { out[threadIdx.x] = g[threadIdx.x]; }
'''
    module = cuda.RawModule(code=source, backend="cpu")
    small, big, out = np.zeros(8, np.float32), np.arange(64, dtype=np.float32), np.zeros(32, np.float32)
    module.get_function("keep")((1,), (1,), (small,))
    module.get_global("g")[:8] = np.frombuffer(np.uint64(big.ctypes.data).tobytes(), np.uint8)
    module.get_function("read")((1,), (32,), (out,))
    np.testing.assert_array_equal(out, big[:32])
    module.get_function("keep")((1,), (1,), (small,))  # and a kernel's store brings the bounds back
    with pytest.raises(cuda.KernelError,
                       match=r"accessed buf\[8\], but buf \(the array given as buf to an earlier launch of .keep."):
        module.get_function("read")((1,), (32,), (out,))
    # an address the host wrote that lies just past an argument's end is no pointer made from that argument
    # (it was taken as `out[40]`, out being 32 floats: whenever the allocator put the two arrays so)
    memory = np.zeros(32 + 8 + 32, np.float32)
    out, other = memory[:32], memory[40:]
    other[:] = np.arange(32)
    module.get_global("g")[:8] = np.frombuffer(np.uint64(other.ctypes.data).tobytes(), np.uint8)
    module.get_function("read")((1,), (32,), (out,))
    np.testing.assert_array_equal(out, np.arange(32))


STD_ARRAYS = r'''
#include <cuda/std/array>
namespace geo { struct Point { float x, y; }; }
__device__ float plus_first(const cuda::std::array<float, 4>& v, int k) { return v[k] + v[0]; }
extern "C" __global__ void arrays(const float* in, float* out, int which) {
    cuda::std::array<float, 4> a{1, 2, 3, 4};
    cuda::std::array<cuda::std::array<int, 2>, 2> m{{{1, 2}, {3, 4}}};
    geo::Point pts[4];
    __shared__ cuda::std::array<float, 64> s;
    int t = threadIdx.x;
    for (int q = 0; q < 4; q++) pts[q] = {float(q), 1.0f};
    if (which != 5 || t < 32) s[t] = in[t];
    if (which != 4) __syncthreads();
    float v = s[which == 4 || which == 5 ? 63 - t : t] + a[t % 4] + m[1][t % 2] + plus_first(a, 3) + pts[t % 4].x;
    if (which == 0) v += a[t];                                      // LOCAL
    if (which == 1) v += m[t % 2][t];                               // NESTED
    if (which == 2) v += plus_first(a, t);
    if (which == 3) v += pts[t].y;                                  // QUALIFIED
    out[t] = v;
}
'''


@pytest.mark.parametrize("which, message", [
    (0, r"accessed a\[4\], but that dimension of the cuda::std::array a has 4 elements"),
    (1, r"accessed m\[\.\.\.\]\[2\] \(subscript 2\), but that dimension of the cuda::std::array m has 2 elements"),
    (2, r"accessed v\[4\], but that dimension of the cuda::std::array v has 4 elements(?s:.*)line 4 \(in a function "
        r"called at line 17\)"),
    (3, r"accessed pts\[4\], but that dimension of the local array pts has 4 elements"),
    (4, r"data race on shared memory s\[\d+\]: thread \(\d+, 0, 0\) (read|wrote)"),
    (5, r"reads shared memory s\[63\], which no thread of block \(0, 0, 0\) has written"),
])
def test_cuda_std_arrays_and_arrays_of_qualified_types_are_checked_as_arrays_are(which, message):
    """A cuda::std::array's operator[] checks nothing (a[12] read the thread's stack), a __shared__ one was
    neither race- nor init-checked, and `geo::Point pts[4]` (a type named with its namespace) was no checked
    local array: all are now, as `float a[4]` and `__shared__ float s[64]` are."""
    kernel = cuda.RawKernel(STD_ARRAYS, "arrays", backend="cpu")
    x = np.arange(64, dtype=np.float32)
    out = np.zeros(64, np.float32)
    kernel((1,), (4,), (x, out, np.int32(9)))  # (four threads: every index in range)
    t = np.arange(4)
    np.testing.assert_array_equal(out[:4], x[t] + (t % 4 + 1) + np.array([3, 4])[t % 2] + 5 + t)
    with pytest.raises(cuda.KernelError, match=message):
        kernel((1,), (64,), (x, out, np.int32(which)))


QUALIFIED_TYPES = r'''
namespace geo { struct Point { float x, y; }; }
using Pt = geo::Point;
typedef geo::Point GP;
struct Holder { const geo::Point* pts; int n; };
__device__ float x_of(const geo::Point* p, int k) { return p[k].x; }             // HELPER
extern "C" __global__ void qualified(const geo::Point* pts, float* out, int which) {
    int t = threadIdx.x;
    const geo::Point* p = pts + 1;
    const Pt* q = pts + 2;
    const GP* r = pts + 3;
    float v = p[0].x + q[0].x + r[0].y;
    if (which == 0) v += p[t].x;                                                  // LOCAL
    if (which == 1) v += q[t].x;                                                  // USING
    if (which == 2) v += r[t].x;                                                  // TYPEDEF
    if (which == 3) v += x_of(pts, t + 4);
    if (which == 4) v += reinterpret_cast<const geo::Point*>(out)[t].y;         // CAST
    Holder h{pts, 32};
    if (which == 5) v += h.pts[t + 1].x;                                          // MEMBER
    if (which == 6) v += ((const ::geo::Point*)out)[t].x;                         // C CAST
    out[t] = v;
}
'''


@pytest.mark.parametrize("which, message, marker", [
    (0, r"accessed pts\[32\]", "LOCAL"),
    (1, r"accessed pts\[32\]", "USING"),
    (2, r"accessed pts\[32\]", "TYPEDEF"),
    (3, r"accessed pts\[32\]", "HELPER"),
    (4, r"accessed out\[32\] to out\[33\] in one 8-byte access", "CAST"),
    (5, r"accessed pts\[32\]", "MEMBER"),
    (6, r"accessed out\[32\] to out\[33\] in one 8-byte access", "C CAST"),
])
def test_pointers_to_a_type_named_with_its_namespace_are_checked(which, message, marker):
    """A kernel parameter `const geo::Point* pts` was refused ("a type the course cannot pass"), and a
    __device__ function's parameter, a local pointer of such a type (or of a `using`/`typedef` name for
    it) and a pointer member of a struct built in device code stayed raw pointers, reading past the array
    silently."""
    kernel = cuda.RawKernel(QUALIFIED_TYPES, "qualified", backend="cpu")
    pts = np.zeros(32, np.dtype([("x", np.float32), ("y", np.float32)]))
    pts["x"], pts["y"] = np.arange(32), np.arange(32) + 100
    out = np.zeros(32, np.float32)
    kernel((1,), (4,), (pts, out, np.int32(9)))
    assert out[0] == 1 + 2 + 103
    with pytest.raises(cuda.KernelError, match=message) as info:
        kernel((1,), (32,), (pts, np.zeros(32, np.float32), np.int32(which)))
    assert f"line {line_of(marker, QUALIFIED_TYPES)}" in str(info.value)


def test_a_namespaced_template_struct_parameter_is_passed_and_checked():
    """`geo::Box<float>* boxes` was refused ("a type the course cannot pass"); now it takes a structured
    array, as `Box<float>* boxes` does, and stays checked (a template whose arguments are not the last
    word's, `typename Box<T>::type* p`, keeps its raw type)."""
    source = r'''
namespace geo { template <class T> struct Box { T lo, hi; }; }
extern "C" __global__ void widths(const geo::Box<float>* boxes, float* out, int shift) {
    out[threadIdx.x] = boxes[threadIdx.x + shift].hi - boxes[threadIdx.x + shift].lo;
}'''
    boxes = np.zeros(8, np.dtype([("lo", np.float32), ("hi", np.float32)]))
    boxes["hi"] = np.arange(8) * 2
    boxes["lo"] = np.arange(8)
    out = np.zeros(8, np.float32)
    kernel = cuda.RawKernel(source, "widths", backend="cpu")
    kernel((1,), (8,), (boxes, out, np.int32(0)))
    np.testing.assert_array_equal(out, np.arange(8))
    with pytest.raises(cuda.KernelError, match=r"accessed boxes\[8\], but boxes has 8 elements"):
        kernel((1,), (8,), (boxes, out, np.int32(1)))


def test_a_kept_pointer_to_a_namespaced_struct_keeps_its_bounds():
    source = r'''
namespace geo { struct Point { float x, y; }; }
__device__ const geo::Point* g_points;
extern "C" __global__ void keep(const geo::Point* points) { g_points = points; }
extern "C" __global__ void read(float* out, int shift) { out[threadIdx.x] = g_points[threadIdx.x + shift].y; }
'''
    module = cuda.RawModule(code=source, backend="cpu", sanitize=False)
    points = np.zeros(8, np.dtype([("x", np.float32), ("y", np.float32)]))
    points["y"] = np.arange(8)
    out = np.zeros(8, np.float32)
    module.get_function("keep")((1,), (1,), (points,))
    module.get_function("read")((1,), (8,), (out, np.int32(0)))
    np.testing.assert_array_equal(out, np.arange(8))
    with pytest.raises(cuda.KernelError, match=r"accessed points\[8\], but points \(the array given as points to an "
                                               r"earlier launch of 'keep'"):
        module.get_function("read")((1,), (8,), (out, np.int32(1)))


def test_enums_and_typedefs_of_a_namespace_are_parameters_of_their_own_types():
    """`geo::Mode m` (an enum in a namespace) and `geo::real` (a typedef there) take what the enum's and the
    typedef's types take (they were refused, and after the namespaced-type change taken for structs)."""
    source = r'''
namespace geo { enum Mode { A, B }; enum class Small : unsigned char { X, Y }; typedef float real; }
extern "C" __global__ void k(geo::Mode m, geo::Small s, geo::real scale, const geo::real* x, geo::real* out) {
    out[threadIdx.x] = (m == geo::B ? 2.0f : 1.0f) * (s == geo::Small::Y ? 10.0f : 1.0f) * scale * x[threadIdx.x];
}'''
    x, out = np.arange(4, dtype=np.float32), np.zeros(4, np.float32)
    kernel = cuda.RawKernel(source, "k", backend="cpu")
    kernel((1,), (4,), (1, np.uint8(1), np.float32(0.5), x, out))
    np.testing.assert_array_equal(out, 2 * 10 * 0.5 * x)
    with pytest.raises(cuda.KernelError, match=r"accessed x\[4\]"):
        kernel((1,), (5,), (1, np.uint8(1), np.float32(0.5), x, np.zeros(5, np.float32)))


def test_pointers_kept_in_a_device_array_keep_their_bounds():
    """`__device__ float* g_list[4];` filled by one launch: each element keeps its array's bounds (they were raw
    pointers: g_list[0][8] of an 8-float array read past it silently, and a write there corrupts the heap)."""
    source = r'''
__device__ float* g_list[4];
extern "C" __global__ void keep(float* a, float* b) { g_list[0] = a; g_list[1] = b; }
extern "C" __global__ void use(float* out, int shift) { out[threadIdx.x] = g_list[0][threadIdx.x + shift] + g_list[1][threadIdx.x]; }
'''
    for sanitize in (True, False):
        module = cuda.RawModule(code=source, backend="cpu", sanitize=sanitize)
        a, b, out = np.arange(8, dtype=np.float32), np.ones(8, np.float32), np.zeros(8, np.float32)
        module.get_function("keep")((1,), (1,), (a, b))
        module.get_function("use")((1,), (8,), (out, np.int32(0)))
        np.testing.assert_array_equal(out, a + 1)
        with pytest.raises(cuda.KernelError, match=r"accessed a\[8\], but a \(the array given as a to an earlier launch"):
            module.get_function("use")((1,), (8,), (out, np.int32(1)))


def test_a_struct_passed_by_a_typedef_name_keeps_its_layout():
    """`typedef Slots S;` then a kernel taking `S s`: Slots comes from the host, so its pointer member stays
    as laid out there (the alias hid that, the member became a checked pointer and the struct 40 bytes:
    "got 16 bytes for parameter 's', but the kernel's S is 40 bytes")."""
    source = r'''
struct Slots { float* data; int n; };
typedef Slots S;
using T = Slots;
extern "C" __global__ void k(S s, T t, float* out) { if (threadIdx.x < s.n + t.n) out[threadIdx.x] = 2.0f; }
'''
    slots = np.dtype([("data", np.uint64), ("n", np.int32)], align=True)
    out = np.zeros(8, np.float32)
    with pytest.warns(cuda.KernelWarning, match=r"`Slots::data` is a pointer inside a struct whose bytes come from the host"):
        cuda.RawKernel(source, "k", backend="cpu")((1,), (8,), (np.array((0, 2), slots)[()], np.array((0, 3), slots)[()], out))
    np.testing.assert_array_equal(out, [2, 2, 2, 2, 2, 0, 0, 0])


def test_a_neighbour_passed_to_a_helper_that_indexes_unchecked_names_the_call_and_the_argument():
    """`at(img, w, h, x - 1, y)` into `return img[y * w + x];`: the fault is in the helper, where `x` looks fine; the
    hint names the call's line, the argument `x - 1` and the helper's parameter, and the two fixes (clamp in the
    call, or a check in the helper), also past the end (`y + 1`, clamped against the guard's `h`)."""
    source = r"""
__device__ float at(const float* img, int w, int h, int x, int y) { return img[y * w + x]; }  // AT
__device__ float pixel(const float* img, int width, int col, int row) {
    int idx = row * width + col;
    return img[idx];  // PIXEL
}
extern "C" __global__ void blur(const float* img, float* out, int w, int h, int clamp) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    if (clamp) out[y * w + x] = (at(img, w, h, max(x - 1, 0), y) + at(img, w, h, x, y)) / 2.0f;
    else out[y * w + x] = (at(img, w, h, x - 1, y) + at(img, w, h, x, y)) / 2.0f;  // CALL
}
extern "C" __global__ void grad(const float* img, float* out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h)
        out[y * w + x] = pixel(img, w, x, y + 1) - pixel(img, w, x, y);  // DOWN
}
"""
    module = cuda.RawModule(code=source, backend="cpu")
    img, out = np.ones(32 * 32, np.float32), np.zeros(32 * 32, np.float32)
    with pytest.raises(cuda.KernelError, match=r"accessed img\[-1\]") as info:
        module.get_function("blur")((2, 2), (16, 16), (img, out, 32, 32, 0))
    assert (f"hint: Index -1 is below the first element: line {line_of('CALL', source)} calls `at` with `x - 1` as its "
            f"`x`, a neighbour outside the array where x is below 1") in str(info.value)
    assert f"uses it unchecked at line {line_of('AT', source)}. Clamp it in the call, `max(x - 1, 0)`" in str(info.value)
    module.get_function("blur")((2, 2), (16, 16), (img, out, 32, 32, 1))  # the twin, clamped: no fault
    assert (out == 1).all()
    with pytest.raises(cuda.KernelError, match=r"accessed img\[1024\]") as info:
        module.get_function("grad")((2, 2), (16, 16), (img, out, 32, 32))
    assert (f"line {line_of('DOWN', source)} calls `pixel` with `y + 1` as its `row`, a neighbour outside the array "
            f"where y + 1 reaches h (the far edge), and `pixel` uses it unchecked at line {line_of('PIXEL', source)}. "
            "Clamp it in the call, `min(y + 1, h - 1)`") in str(info.value)


def test_a_row_major_index_below_zero_asks_for_a_guard_of_each_coordinate_not_of_the_flat_index():
    """`img[y * w + x]` in a helper that a 3×3 loop calls with `x + dx, y + dy`: no neighbour spelt `x - 1` in sight,
    so the hint says what a 2-D index needs, a guard (or a clamp) of each coordinate: `(y * w + x) >= 0` alone would
    let a column of -1 read the end of the row above."""
    source = r"""
__device__ float at(const float* img, int w, int x, int y) { return img[y * w + x]; }  // AT
extern "C" __global__ void blur(const float* img, float* out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    float s = 0.0f;
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++) s += at(img, w, x + dx, y + dy);
    out[y * w + x] = s / 9.0f;
}
"""
    img, out = np.ones(16 * 32, np.float32), np.zeros(16 * 32, np.float32)
    with pytest.raises(cuda.KernelError, match=r"accessed img\[-33\]") as info:
        cuda.RawKernel(source, "blur", backend="cpu")((2, 1), (16, 16), (img, out, 32, 16))
    assert info.value.line == line_of("AT", source)
    assert ("hint: Index -33 is below the first element: in `y * w + x` (row y, column x, rows of w), the row or the "
            "column is below 0 here (a neighbour at the border, x - 1 or y - 1). Guard each coordinate, `if (x >= 0 && "
            "x < w && y >= 0 && ...)`, or clamp each one (`max(x, 0)`, `min(x, w - 1)`)") in str(info.value)

def test_an_unsigned_neighbour_made_on_a_line_before_and_a_pointer_walk_one_step_too_far_name_their_causes():
    """`unsigned i = threadIdx.x - 1;` then `a[i]` (the wrap happens a line before the access) is named as -1 computed
    in unsigned arithmetic, with the int variable to keep it in; a pointer that walks `p += blockDim.x` for
    `r <= n / blockDim.x` steps names the `<=` (a bound with a division was not seen)."""
    source = r"""
extern "C" __global__ void left(const float* a, float* out) {
    unsigned i = threadIdx.x - 1;  // WRAP
    out[threadIdx.x] = a[i];
}
extern "C" __global__ void walk(const float* a, float* out, int n) {
    const float* p = a + threadIdx.x;
    float s = 0;
    for (int r = 0; r <= n / blockDim.x; r++) { s += *p; p += blockDim.x; }  // WALK
    out[threadIdx.x] = s;
}
"""
    module = cuda.RawModule(code=source, backend="cpu")
    with pytest.raises(cuda.KernelError, match=r"accessed a\[4294967295\]") as info:
        module.get_function("left")((1,), (32,), (np.ones(32, np.float32), np.zeros(32, np.float32)))
    assert (f"Index 4294967295 is -1 computed in unsigned arithmetic: threadIdx.x is unsigned, so `threadIdx.x - 1` "
            f"(line {line_of('WRAP', source)}) below 0 wraps around") in str(info.value)
    assert "`(int)threadIdx.x - 1`, into an int variable (`int i`, not unsigned)" in str(info.value)
    with pytest.raises(cuda.KernelError, match=r"accessed a\[128\]") as info:
        module.get_function("walk")((1,), (32,), (np.ones(128, np.float32), np.zeros(32, np.float32), 128))
    assert (f"line {line_of('WALK', source)} compares with <= (`r <= n / blockDim.x`), which lets the index reach the "
            "size itself") in str(info.value)


def test_a_division_by_a_size_argument_of_zero_names_the_argument():
    """`i % w + i / w` with w = 0 passed to the launch: the arithmetic fault names `w` and its value; a divisor read
    from data keeps the general hint (guard the divisor)."""
    source = r"""
extern "C" __global__ void wrap(int* out, int n, int w) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = i % w + i / w;  // DIV
}
extern "C" __global__ void ratio(const int* a, const int* b, int* out) {
    out[threadIdx.x] = a[threadIdx.x] / b[threadIdx.x];
}
extern "C" __global__ void inverse(int* out, int n) {
    out[threadIdx.x] = 1 / (n - 3);  // ONE OVER
}
"""
    module = cuda.RawModule(code=source, backend="cpu")
    with pytest.raises(cuda.KernelError, match=r"made an integer division by zero") as info:
        module.get_function("wrap")((1,), (4,), (np.zeros(4, np.int32), 4, 0))
    assert (f"hint: `w` is 0 in this launch (the argument passed for it), and line {line_of('DIV', source)} divides by "
            "it: pass the size you meant, or guard the divisor (`if (w != 0)`)") in str(info.value)
    with pytest.raises(cuda.KernelError, match=r"made an integer division by zero") as info:
        module.get_function("ratio")((1,), (4,), (np.ones(4, np.int32), np.array([1, 2, 0, 4], np.int32),
                                                  np.zeros(4, np.int32)))
    assert "hint: An integer division or remainder by zero" in str(info.value) and info.value.thread == (2, 0, 0)
    out = np.zeros(4, np.int32)
    module.get_function("wrap")((1,), (4,), (out, 4, 3))  # the twin: a real width
    assert out.tolist() == [0, 1, 2, 1]
    # `1 / d`: GCC computes it without a division, so without the CPU's trap (red team 12-07: it gave 0, silently)
    for sanitize in (False, True):
        with pytest.raises(cuda.KernelError, match=r"made an integer division by zero") as info:
            cuda.RawModule(code=source, backend="cpu", sanitize=sanitize).get_function("inverse")(
                (1,), (4,), (out, np.int32(3)))
        assert info.value.line == line_of("ONE OVER", source)
    module.get_function("inverse")((1,), (4,), (out, np.int32(4)))
    assert out.tolist() == [1, 1, 1, 1]


def test_a_template_instance_made_for_another_block_size_than_the_launch_is_told_which_to_launch():
    """The samples' reduce, instantiated for blockSize = 256 and launched with 128 threads a block (the samples pick
    the instance with a switch on the threads; a learner's launch skips it): the fault in its shared memory is named,
    and the hint says which instance (or how many threads) to launch; the matching launch is right."""
    source = r"""
template <unsigned int blockSize>
__global__ void reduce(const float* g_idata, float* g_odata, unsigned int n) {
    extern __shared__ float sdata[];
    unsigned int tid = threadIdx.x, i = blockIdx.x * blockSize + tid;
    sdata[tid] = i < n ? g_idata[i] : 0.0f;
    __syncthreads();
    if (blockSize >= 256 && tid < 128) sdata[tid] += sdata[tid + 128];
    __syncthreads();
    for (unsigned int s = 64; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}
"""
    module = cuda.RawModule(code=source, backend="cpu", name_expressions=["reduce<256>", "reduce<128>"])
    x = np.linspace(0, 1, 1024, dtype=np.float32)
    with pytest.raises(cuda.KernelError, match=r"accessed sdata\[128\] in dynamic shared memory") as info:
        module.get_function("reduce<256>")((8,), (128,), (x, np.zeros(8, np.float32), 1024), shared_mem=128 * 4)
    assert ("hint: This instance, reduce<256>, is made for blockSize = 256 threads a block, but the launch has 128 "
            "(block.x = 128)") in str(info.value)
    assert "launch 256 threads a block, or the instance whose blockSize is 128: `reduce<128>`" in str(info.value)
    out = np.zeros(8, np.float32)
    module.get_function("reduce<128>")((8,), (128,), (x, out, 1024), shared_mem=128 * 4)  # the instance that fits
    np.testing.assert_allclose(out, x.reshape(8, 128).sum(axis=1), rtol=1e-5)


def test_gpu_gems_scan_with_its_macro_precedence_bug_is_told_where_the_parentheses_go():
    """GPU Gems 3's work-efficient scan (tests/cuda_kernels/samples.cu's prescan) with CONFLICT_FREE_OFFSET as printed,
    `((n) >> NUM_BANKS + (n) >> (2 * LOG_NUM_BANKS))`: + binds tighter than >>, so it shifts by NUM_BANKS + n
    (undefined past 31; a GPU's clamp hides it). The fault names the macro and the parentheses; the samples' own
    macro gives the right scan."""
    samples = (Path(__file__).parent / "cuda_kernels" / "samples.cu").read_text()
    scan = samples[samples.index("#define NUM_BANKS"):samples.index("\n}\n", samples.index("void prescan")) + 3]
    printed = scan.replace("#define CONFLICT_FREE_OFFSET(n) ((n) >> LOG_NUM_BANKS)",
                           "#define CONFLICT_FREE_OFFSET(n) ((n) >> NUM_BANKS + (n) >> (2 * LOG_NUM_BANKS))")
    assert printed != scan
    n, x = 512, np.arange(512, dtype=np.float32) % 7
    with pytest.raises(cuda.KernelError, match=r"shifted the 32-bit int \d+ by \d+ bits") as info:
        cuda.RawKernel(printed, "prescan", backend="cpu")((1,), (n // 2,), (np.zeros(n, np.float32), x, n),
                                                          shared_mem=(n + n // 32 + 32) * 4)
    assert ("hint: In the macro CONFLICT_FREE_OFFSET (line 3), `(n) >> NUM_BANKS + (n)` shifts by `NUM_BANKS + (n)`: in "
            "C, + and - bind tighter than >>") in str(info.value)
    out = np.zeros(n, np.float32)
    cuda.RawKernel(scan, "prescan", backend="cpu")((1,), (n // 2,), (out, x, n), shared_mem=(n + n // 32 + 32) * 4)
    np.testing.assert_array_equal(out, np.concatenate([[0], np.cumsum(x)[:-1]]))


def test_an_atomic_on_bytes_is_told_to_count_in_32_bit_words():
    """`atomicAdd(&bins[v], 1)` into `unsigned char* bins` (nvcc refuses it too): the message says that CUDA has no 8- or
    16-bit atomicAdd and what to count in (it gave the advice for a signed 64-bit count)."""
    source = r"""
extern "C" __global__ void h(const int* x, unsigned char* bins, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&bins[x[i]], 1);
}"""
    with pytest.raises(cuda.CompileError) as info:
        cuda.RawKernel(source, "h", backend="cpu").compile()
    assert ("atomicAdd takes a pointer to int, unsigned int, unsigned long long, float, double, __half, __half2, "
            "__nv_bfloat16 and __nv_bfloat162 in CUDA, not to unsigned char: CUDA has no atomicAdd on 8- or 16-bit "
            "integers, so count in an array of int or unsigned int") in str(info.value)
    assert "64-bit" not in str(info.value)


CPP_LAYERS = r"""
#include <cstdint>
struct P { float x, y; __device__ void scale(float s) { x *= s; y *= s; } };
__device__ float4& v4(float* d, int i) { return reinterpret_cast<float4*>(d)[i]; }
extern "C" __global__ void round_trip(const float* a, float* out, int past) {
    int i = threadIdx.x;
    uintptr_t u = reinterpret_cast<uintptr_t>(a) + 4 * (i + past);
    out[i] = *reinterpret_cast<const float*>(u);                          // ROUND_TRIP
}
extern "C" __global__ void aligned(const float* a, unsigned long long* out) {
    __shared__ float s[32];
    s[threadIdx.x] = a[threadIdx.x];
    if (threadIdx.x == 0) out[0] = (size_t)s % 16 + (uintptr_t)s % 16 + (unsigned long long)s % 4;
}
extern "C" __global__ void methods(P* ps, int n, int past) {
    int i = threadIdx.x;
    if (i < n) (ps + i + past)->scale(2.0f);                              // METHOD
    if (i < n) (&ps[i])->scale(1.5f);
}
extern "C" __global__ void by_reference(const float4* a, float4* out, int helper) {
    __shared__ float s[128];
    int t = threadIdx.x;
    if (helper) v4(s, t) = a[t];
    else { float4& r = reinterpret_cast<float4*>(s)[t]; r = a[t]; }
    __syncthreads();
    out[t] = reinterpret_cast<float4*>(s)[(t + 1) % 32];
}
"""


def test_cpp_layers_keep_their_checks_and_compile_as_nvcc_compiles_them():
    """Red team 12-06 (C++ layers): reinterpret_cast<const float*> of a uintptr_t read past an array unchecked (the
    C cast was checked); (size_t)s of a __shared__ array and (ps + i)->scale() did not compile; binding a float4&
    to a cast element (directly, or returned by a helper) counted as a read of unwritten shared memory."""
    module = cuda.RawModule(code=CPP_LAYERS, backend="cpu", sanitize=True)
    a, out = np.arange(64, dtype=np.float32), np.zeros(64, np.float32)
    module.get_function("round_trip")((1,), (64,), (a, out, 0))
    assert out.tolist() == a.tolist()
    with pytest.raises(cuda.KernelError, match=r"accessed a\[64\], but a has 64 elements") as info:
        module.get_function("round_trip")((1,), (64,), (a, out, 1))
    assert info.value.line == line_of("ROUND_TRIP", CPP_LAYERS)
    aligned = np.ones(1, np.uint64)
    module.get_function("aligned")((1,), (32,), (a, aligned))
    assert aligned[0] == 0
    ps = np.ones(8, dtype=[("x", np.float32), ("y", np.float32)])
    module.get_function("methods")((1,), (8,), (ps, 8, 0))
    assert ps["x"].tolist() == [3.0] * 8
    with pytest.raises(cuda.KernelError, match=r"accessed ps\[1\], but ps has 1 element") as info:
        module.get_function("methods")((1,), (1,), (ps[:1].copy(), 1, 1))
    assert info.value.line == line_of("METHOD", CPP_LAYERS)
    vectors, result = np.arange(128, dtype=np.float32).reshape(32, 4), np.zeros((32, 4), np.float32)
    for helper in (0, 1):
        module.get_function("by_reference")((1,), (32,), (vectors, result, helper))
        np.testing.assert_array_equal(result, np.roll(vectors, -1, axis=0))


def test_sizeof_of_a_pointer_variable_is_warned_about_and_element_sizes_are_not():
    """Red team 12-07: `malloc(sizeof(a))` and `memset(p, 0, sizeof(p))` take a pointer's size (8 bytes on a GPU, 32
    here, where a pointer carries its bounds): on a GPU they overrun, here they ran clean. A warning names them."""
    source = r"""
extern "C" __global__ void heap(float* out, int n) {
    float* a = (float*)malloc(sizeof(a));
    for (int i = 0; i < n; i++) a[i] = i;
    out[threadIdx.x] = a[n - 1] + sizeof(*a) + sizeof(a[0]) + sizeof out[0];
    free(a);
}
__device__ void clear(float* p) { memset(p, 0, sizeof(p)); }
extern "C" __global__ void local(float* out) {
    float buf[8];
    memset(buf, 0, sizeof(buf));
    clear(buf);
    out[threadIdx.x] = buf[7];
}
"""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cuda.RawModule(code=source, backend="cpu", sanitize=False).get_function("local")((1,), (1,), (np.zeros(1, np.float32),))
    messages = [str(w.message) for w in caught if issubclass(w.category, cuda.KernelWarning) and "sizeof" in str(w.message)]
    assert [re.search(r"line (\d+): sizeof\((\w+)\)", m).groups() for m in messages] == [("3", "a"), ("8", "p")], messages
    assert "the size of the pointer a (8 bytes on a GPU" in messages[0] and "multiply by sizeof(a[0])" in messages[0]


def test_the_samples_shared_memory_specializations_each_with_its_own_extern_array_are_no_aliasing():
    """cuda-samples' simpleTemplates: `SharedMemory<int>::getPointer` and `SharedMemory<float>::getPointer` each
    declare their own extern __shared__ array; one name for both methods made them one function here, which 'used
    two extern __shared__ arrays' (red team 12-07)."""
    source = r"""
template <typename T> struct SharedMemory { __device__ T* getPointer() { return 0; } };
template <> struct SharedMemory<int> { __device__ int* getPointer() { extern __shared__ int s_int[]; return s_int; } };
template <> struct SharedMemory<float> { __device__ float* getPointer() { extern __shared__ float s_float[]; return s_float; } };
template <class T> __global__ void testKernel(T* g_idata, T* g_odata) {
    SharedMemory<T> smem;
    T* sdata = smem.getPointer();
    sdata[threadIdx.x] = g_idata[threadIdx.x];
    __syncthreads();
    g_odata[threadIdx.x] = sdata[31 - threadIdx.x];
}
"""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = cuda.RawModule(code=source, name_expressions=["testKernel<float>", "testKernel<int>"], backend="cpu")
        for dtype, name in ((np.float32, "testKernel<float>"), (np.int32, "testKernel<int>")):
            x, y = np.arange(32, dtype=dtype), np.zeros(32, dtype)
            module.get_function(name)((1,), (32,), (x, y), shared_mem=128)
            np.testing.assert_array_equal(y, x[::-1])
    assert not [w for w in caught if issubclass(w.category, cuda.KernelWarning)], [str(w.message) for w in caught]


def test_a_tile_named_tile_is_said_once():
    from course.cuda import cpu

    assert (cpu._the_tile("tile"), cpu._the_tile("Tile"), cpu._the_tile("As")) == ("the tile", "the tile", "the tile As")


def test_a_launch_stopped_by_the_time_limit_gives_its_heap_blocks_back():
    """Red team 12-07: each launch stopped by the time limit kept the 2 MiB its threads took from the 8 MiB device
    heap, so after four every malloc returned NULL, in the fixed kernel too, for the rest of the process. Blocks of
    a launch that ended stay (kept in a __device__ pointer, they are valid in the next launch)."""
    source = r"""
__device__ float* kept;
extern "C" __global__ void stuck(float* c, int n) {
    float* p = (float*)malloc(8192); p[0] = n;
    while (p[0] != -1.0f) { }
    c[threadIdx.x] = p[0]; free(p);
}
extern "C" __global__ void keep(float* c) { if (threadIdx.x == 0) { kept = (float*)malloc(64); kept[0] = 7; } }
extern "C" __global__ void use(float* c) {
    float* p = (float*)malloc(8192); p[0] = kept[0];
    c[threadIdx.x] = p[0]; free(p);
}
"""
    module = cuda.RawModule(code=source, backend="cpu", sanitize=False, time_limit=0.3)
    c = np.zeros(256, np.float32)
    module.get_function("keep")((1,), (1,), (c,))
    for _ in range(5):
        with pytest.raises(cuda.KernelError, match="ran longer than its time limit"):
            module.get_function("stuck")((1,), (256,), (c, np.int32(3)))
    module.get_function("use")((1,), (256,), (c,))
    assert (c == 7).all()


@pytest.mark.parametrize("sanitize", [False, True])
def test_an_array_of_device_pointers_kept_into_a_freed_array_is_reported_too(sanitize):
    """Red team 12-07: with `__device__ float* saved[2]` (not one pointer), the launch after Python freed the array
    wrote through the stale pointer into whatever array lay there now, silently."""
    import gc

    module = cuda.RawModule(code=r"""
__device__ float* saved[2];
extern "C" __global__ void keep(float* a) { if (threadIdx.x == 0) saved[1] = a; }
extern "C" __global__ void use(float* out, int n) {
    int i = threadIdx.x;
    if (i < n) { out[i] = saved[1][i]; saved[1][i] = 42.0f; }
}""", backend="cpu", sanitize=sanitize)
    alive = np.arange(64, dtype=np.float32)
    module.get_function("keep")((1,), (1,), (alive,))
    out = np.zeros(64, np.float32)
    module.get_function("use")((1,), (64,), (out, np.int32(64)))  # the array lives: fine, as on a GPU
    assert (out == np.arange(64)).all() and (alive == 42).all()
    module.get_function("keep")((1,), (1,), (np.arange(64, dtype=np.float32),))  # a temporary, freed after
    gc.collect()
    victim = np.full(64, 7, np.float32)
    with pytest.raises(cuda.KernelError, match=r"accessed saved\[1\]\[0\], but the __device__ pointer saved\[1\] still "
                                               r"points into the array that an earlier launch of 'keep' was given as a, "
                                               r"which Python has freed since"):
        module.get_function("use")((1,), (64,), (out, np.int32(64)))
    assert (victim == 7).all()


NO_RETURN = r"""
__device__ float pick(int mode) {
    if (mode == 0) return 1.0f;
    if (mode == 1) return 2.0f;
}
extern "C" __global__ void k(const int* mode, float* out) {
    int i = threadIdx.x;
    out[i] = pick(mode[i]);
}
"""

UNREACHABLE = r"""
extern "C" __global__ void k(const int* mode, float* out) {
    int i = threadIdx.x;
    switch (mode[i]) {
        case 0: out[i] = 1.0f; break;
        case 1: out[i] = 2.0f; break;
        default: __builtin_unreachable();
    }
}
"""


@pytest.mark.parametrize("sanitize", [False, True], ids=["plain", "sanitized"])
def test_a_function_that_ends_without_its_return_or_reaches_builtin_unreachable_stops_the_thread(sanitize):
    """Both ran silently (the compiler, free to assume neither happens, gave thread 2 the other branch's 2.0f).
    A missing return gets nvcc's warning at compile time too; a function that returns on every path gets none."""
    mode = np.array([0, 1, 2, 0], np.int32)
    pick = f"pick_{sanitize}"  # (a function of its own per build: a warning shows once per process)
    with pytest.warns(cuda.KernelWarning, match=rf"line 5: `{pick}` can reach its end without a return statement "
                                                r"\(nvcc warns too"):
        no_return = cuda.RawKernel(NO_RETURN.replace("pick", pick), "k", backend="cpu", sanitize=sanitize)
        no_return.compile()
    with pytest.raises(cuda.KernelError, match=rf"reached the end of `{pick}` without a return statement, but `{pick}` "
                                               r"returns a value") as info:
        no_return((1,), (4,), (mode, np.zeros(4, np.float32)))
    assert info.value.thread == (2, 0, 0)
    with pytest.raises(cuda.KernelError, match=r"reached __builtin_unreachable\(\)") as info:
        cuda.RawKernel(UNREACHABLE, "k", backend="cpu", sanitize=sanitize)((1,), (4,), (mode, np.zeros(4, np.float32)))
    assert info.value.thread == (2, 0, 0) and info.value.line == 7
    out = np.zeros(4, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (the twin: a return on every path, no warning)
        cuda.RawKernel(NO_RETURN.replace("if (mode == 1) return 2.0f;", "return 2.0f;"), "k", backend="cpu",
                       sanitize=sanitize)((1,), (4,), (mode, out))
    assert list(out) == [1, 2, 2, 1]


ALIAS_TEMPLATE_POINTERS = r"""
template <class T> using Ptr = T*;
struct View { Ptr<float> p; int n; };
extern "C" __global__ void k(float* out, int n, int member) {
    View v{out, n};
    Ptr<float> w = out;
    for (int i = threadIdx.x; i < 4 * n; i += blockDim.x) {
        if (member) v.p[i] = -1.0f;
        else w[i] = -1.0f;
    }
}
"""


@pytest.mark.parametrize("member", [1, 0], ids=["struct member", "local"])
def test_a_pointer_spelled_with_an_alias_template_is_checked(member):
    """`template <class T> using Ptr = T*;` stayed a raw pointer: the stores past the array went into the
    Python process's memory (a crash, later). It is a checked pointer now, as `using fptr = float*;` is."""
    with pytest.raises(cuda.KernelError, match=r"accessed out\[64\], but out has 64 elements") as info:
        cuda.RawKernel(ALIAS_TEMPLATE_POINTERS, "k", backend="cpu", sanitize=False)(
            (1,), (32,), (np.zeros(64, np.float32), np.int32(64), np.int32(member)))
    assert info.value.line == 8 + (1 - member)


RETURNED_REFERENCES = r"""
__device__ float& scratch() { float t = 0.0f; return t; }
__device__ const float& larger(float a, float b) { return a > b ? a : b; }
extern "C" __global__ void k(const float* x, float* out) {
    out[threadIdx.x] = larger(x[threadIdx.x], 0.5f);
    if (x[threadIdx.x] < -1.0f) scratch() = 1.0f;
}
"""


def test_a_function_that_returns_a_reference_to_its_local_or_parameter_gets_nvccs_warning():
    """`float& f() { float t; return t; }` said only 'used a null pointer' when its reference was used (GCC makes it
    null), and `const float& larger(float a, float b)` nothing: both get nvcc's warning now, naming the function."""
    with pytest.warns(cuda.KernelWarning) as caught:
        cuda.RawKernel(RETURNED_REFERENCES, "k", backend="cpu", sanitize=False).compile()
    texts = [str(w.message) for w in caught]
    assert any(re.search(r"line 2: `scratch` returns a reference to its local variable `t`, which ends when `scratch` "
                         r"returns", t) for t in texts), texts
    assert any("line 3: `larger` returns a reference to one of its parameters or local variables" in t for t in texts)


ROW_REFERENCES = r"""
extern "C" __global__ void k(const float* x, float* out, int shift) {
    __shared__ float tile[4][16];
    float loc[2][8];
    auto& row = tile[threadIdx.y];
    row[threadIdx.x] = x[threadIdx.y * 16 + threadIdx.x];
    auto& last = loc[1];
    last[0] = 1.0f;
    const auto& same = tile[threadIdx.y];
    __syncthreads();
    out[threadIdx.y * 16 + threadIdx.x] = same[15 - threadIdx.x + shift] + last[0];
}
"""


@pytest.mark.parametrize("sanitize", [False, True], ids=["plain", "sanitized"])
def test_a_reference_to_a_row_of_a_2d_array_compiles_and_is_checked(sanitize):
    """`auto& row = tile[threadIdx.y];` (NVRTC compiles it) did not compile here: a row is a checked view, which
    `auto` now binds; the row's accesses are checked against its own length."""
    x, out = np.arange(64, dtype=np.float32), np.zeros(64, np.float32)
    run = cuda.RawKernel(ROW_REFERENCES, "k", backend="cpu", sanitize=sanitize)
    run((1,), (16, 4), (x, out, np.int32(0)))
    np.testing.assert_array_equal(out.reshape(4, 16), x.reshape(4, 16)[:, ::-1] + 1)
    with pytest.raises(cuda.KernelError, match=r"tile\[\.\.\.\]\[16\] \(subscript 2\), but that dimension of the __shared__ array tile has "
                                               r"16 elements") as info:
        run((1,), (16, 4), (x, out, np.int32(1)))
    assert info.value.line == 11


@pytest.mark.parametrize("lam, refused", [
    ("[](auto p, float q) { return p + q; }", r"a generic lambda \(a parameter declared `auto`\), which NVRTC"),
    ("[] __device__ (float p, float q) { return p + q; }", r"a lambda annotated __device__ \(or __host__\), which NVRTC"),
])
def test_lambdas_nvrtc_refuses_are_refused(lam, refused):
    """A generic lambda in a kernel (NVRTC: a host function, unless -default-device) and a lambda annotated
    __device__ (nvcc's --extended-lambda, which NVRTC lacks) ran here and then failed to compile on a GPU."""
    source = 'extern "C" __global__ void k(const float* x, float* out) { auto f = LAMBDA; out[0] = f(x[0], 1.0f); }'
    with pytest.raises(cuda.CompileError, match=rf"NVRTC refuse(?s:.*){refused}"):
        cuda.RawKernel(source.replace("LAMBDA", lam), "k", backend="cpu").compile()


def test_a_return_guard_with_greater_than_is_told_to_use_greater_or_equal():
    """`if (r > R) return;` lets r == R through: the hint said to bound the whole index; it names the `>=` now."""
    source = r"""
extern "C" __global__ void rows(const float* x, float* y, int R, int C) {
    int r = blockIdx.x * blockDim.y + threadIdx.y;
    if (r > R) return;
    for (int j = threadIdx.x; j < C; j += blockDim.x) y[r * C + j] = 2.0f * x[r * C + j];
}
"""
    with pytest.raises(cuda.KernelError, match=r"line 4 returns only when `r > R`, so `r == R` goes on, one past the "
                                               r"last valid value \(0 to R - 1\)\. Return when `r >= R`\.") as info:
        cuda.RawKernel(source, "rows", backend="cpu", sanitize=False)(
            (2,), (32, 4), (np.ones((5, 96), np.float32), np.zeros((5, 96), np.float32), np.int32(5), np.int32(96)))
    assert info.value.line == 5


def test_a_bin_clamped_at_the_top_only_is_not_called_a_neighbour_below_the_edge():
    """`int b = (int)(pos[i] * nb); if (b >= nb) b = nb - 1;` and a negative position: b came from the data at line 5;
    the hint took the clamp some threads skip for where b was made (`b` is the neighbour `nb - 1`)."""
    source = r"""
extern "C" __global__ void count(const float* pos, int* cnt, int n, int nb) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int b = (int)(pos[i] * nb);
        if (b >= nb) b = nb - 1;
        atomicAdd(&cnt[b], 1);
    }
}
"""
    pos = np.array([0.1, 0.5, -0.5, 0.9], np.float32)
    with pytest.raises(cuda.KernelError, match=r"accessed cnt\[-4\]") as info:
        cuda.RawKernel(source, "count", backend="cpu")((1,), (4,), (pos, np.zeros(8, np.int32), 4, 8))
    assert "neighbour `nb - 1`" not in str(info.value) and "if (b >= 0 && b < 8)" in str(info.value)


def test_a_merge_loop_that_goes_on_while_either_cursor_is_inside_is_told_to_use_and():
    """Counting the common neighbours of two sorted lists, `while (a < row[u + 1] || b < row[v + 1])`: the loop reads
    col[a] and col[b] past the end of the list that is done. The hint called a a value read from data (it moves in the
    loop) and said to check the data; it names the ||."""
    source = r"""
extern "C" __global__ void isect(const int* row, const int* col, int* count) {
    int u = 0, v = 1;
    int a = row[u], b = row[v];
    int c = 0;
    while (a < row[u + 1] || b < row[v + 1]) {
        int x = col[a], y = col[b];
        if (x == y) { ++c; ++a; ++b; }
        else if (x < y) ++a;
        else ++b;
    }
    *count = c;
}
"""
    row, col = np.array([0, 2, 4], np.int32), np.array([1, 9, 1, 2], np.int32)  # lists [1, 9] and [1, 2]
    with pytest.raises(cuda.KernelError, match=r"accessed col\[4\]") as info:
        cuda.RawKernel(source, "isect", backend="cpu")((1,), (1,), (row, col, np.zeros(1, np.int32)))
    assert ("hint: The loop at line 6 goes on while `a < row[u + 1] || b < row[v + 1]`: with ||, it keeps going once one "
            "of `a` and `b` has reached its end") in str(info.value) and "value read from data" not in str(info.value)
    count = np.zeros(1, np.int32)
    cuda.RawKernel(source.replace("||", "&&"), "isect", backend="cpu")((1,), (1,), (row, col, count))
    assert count[0] == 1


def test_a_partners_index_past_the_end_is_the_one_the_guard_names():
    """A bitonic sort's step for n = 7 in a grid of 8: `if (i < n && ixj > i)` checks the thread's own i, and a[ixj]
    runs past the end; the guard named i (`if (i < 7)`), which is checked already, not the partner ixj."""
    source = r"""
extern "C" __global__ void bitonic_step(float* a, int j, int k, int n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned ixj = i ^ j;
    if (i < n && ixj > i) {
        if ((i & k) == 0) {
            if (a[i] > a[ixj]) { float t = a[i]; a[i] = a[ixj]; a[ixj] = t; }
        } else {
            if (a[i] < a[ixj]) { float t = a[i]; a[i] = a[ixj]; a[ixj] = t; }
        }
    }
}
"""
    a = np.arange(7, 0, -1).astype(np.float32)
    with pytest.raises(cuda.KernelError, match=r"accessed a\[7\], but a has 7 elements") as info:
        cuda.RawKernel(source, "bitonic_step", backend="cpu")((1,), (8,), (a, 4, 8, 7))
    assert "guard the access: `if (ixj < 7)`" in str(info.value)
    cuda.RawKernel(source.replace("ixj > i)", "ixj > i && ixj < n)"), "bitonic_step", backend="cpu")((1,), (8,), (a, 4, 8, 7))


def test_a_row_major_index_with_a_pivot_gets_a_guard_of_the_threads_coordinate_only():
    """Floyd-Warshall's step k without a bounds check, in a grid rounded up: `D[i * n + k]` has the thread's row i and
    the pivot k, a parameter; the guard named `if (i < k && k < n)`, the pivot as a row count and a coordinate."""
    source = r"""
extern "C" __global__ void fw(int* D, int n, int k) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    int via = D[i * n + k] + D[k * n + j];
    if (via < D[i * n + j]) D[i * n + j] = via;
}
"""
    with pytest.raises(cuda.KernelError, match=r"accessed D\[576\], but D has 576 elements") as info:
        cuda.RawKernel(source, "fw", backend="cpu")((2, 2), (16, 16), (np.full(24 * 24, 100, np.int32), 24, 0))
    assert "guard the access: `if (i < n)`, the thread's row against its size" in str(info.value)


def test_a_per_column_vector_indexed_like_the_matrix_is_told_to_take_the_column_alone():
    """`g[r * C + j]` over a g of C elements (a scale per column): the hint named `if (r < C && j < C)`, a guard that
    compares a row with the columns; it says that g holds one row's worth, to be indexed `g[j]`."""
    source = r"""
extern "C" __global__ void scale(const float* x, const float* g, float* y, int C) {
    int r = blockIdx.x;
    for (int j = threadIdx.x; j < C; j += blockDim.x) y[r * C + j] = x[r * C + j] * g[r * C + j];
}
"""
    x, g, y = np.ones((5, 96), np.float32), np.arange(96, dtype=np.float32), np.zeros((5, 96), np.float32)
    with pytest.raises(cuda.KernelError, match=r"accessed g\[96\]") as info:
        cuda.RawKernel(source, "scale", backend="cpu")((5,), (64,), (x, g, y, np.int32(96)))
    assert ("hint: The index here is `r * C + j`, row `r` and column `j` of rows of C, but g has C = 96 elements, one "
            "row's worth: from row 1 on the index is past its end (r * C + j = 96 here). If g holds one value per column "
            "(a bias, a scale, a mean), index it by the column alone: `g[j]`") in str(info.value)
    cuda.RawKernel(source.replace("g[r * C + j]", "g[j]"), "scale", backend="cpu")((5,), (64,), (x, g, y, np.int32(96)))
    np.testing.assert_array_equal(y, np.tile(g, (5, 1)))  # the twin


def test_a_neighbourhood_guard_without_the_columns_upper_side_is_told_to_add_it():
    """A 3x3 filter's `if (rr >= 0 && rr < H && cc >= 0)` lacks `cc < W`: a column past the last wraps into the next
    row, and from the last row runs past the end. The hint said to bound the whole index (rr * W + cc < H * W, which
    would keep the wrap); it names the missing comparison."""
    source = r"""
extern "C" __global__ void blur(const float* x, float* y, int H, int W) {
    int c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r >= H || c >= W) return;
    float acc = 0.0f;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            int rr = r + i - 1, cc = c + j - 1;
            if (rr >= 0 && rr < H && cc >= 0) acc += x[rr * W + cc];
        }
    y[r * W + c] = acc;
}
"""
    x, y = np.ones((10, 14), np.float32), np.zeros((10, 14), np.float32)
    args = (x, y, np.int32(10), np.int32(14))
    with pytest.raises(cuda.KernelError, match=r"accessed x\[140\]") as info:
        cuda.RawKernel(source, "blur", backend="cpu")((2, 2), (8, 8), args)
    assert ("line 9 checks `cc` against 0 only (`if (rr >= 0 && rr < H && cc >= 0)`): a column past the last, `cc >= W`, "
            "wraps into the next row (`rr * W + W` is row rr + 1's first element), and from the last row past the end "
            "of x, as here (rr * W + cc = 140, and x has 140 elements). Add `cc < W` to the check: `if (rr >= 0 && rr < "
            "H && cc >= 0 && cc < W)`.") in str(info.value)
    cuda.RawKernel(source.replace("cc >= 0)", "cc >= 0 && cc < W)"), "blur", backend="cpu")((2, 2), (8, 8), args)
    assert y[0, 0] == 4 and y[5, 5] == 9 and y[9, 13] == 4  # the twin: corners see 4 pixels, the inside 9
