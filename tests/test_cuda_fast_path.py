"""course.cuda's fast path (course/cuda/fast.py): a block of a barrier-free kernel whose every index the
block's ranges prove inside its array runs without memcheck's per-access checks. It must give the same
bits as the checked thread loop, take the checked loop wherever the proof fails (so every fault is still
found, with the same message), and be taken where it should (the speed goal of `make bench`)."""

import ctypes

import numpy as np
import pytest

from course import cuda
from course.cuda import fast
from course.cuda.errors import KernelError
from course.cuda.source import parse
from tools import bench

FAST = ("-D__CC_FAST_PATH=1",)  # the fast path compiled in whatever the launch's size (cpu.FAST_PATH_THREADS)
REFERENCE = ("-D__CC_FAST_PATH=0",)  # the same kernel with every block on the checked path


def _fast_blocks(kernel) -> int:
    return kernel._compiled.export("__cc_fast_block_count", ctypes.c_longlong)()


def _launch(code, name, grid, block, args, options=FAST):
    """Run a plain (unsanitized) launch; return the arrays after it and how many blocks took the fast path."""
    k = cuda.RawKernel(code, name, backend="cpu", sanitize=False, options=options)
    copies = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
    k.compile()
    before = _fast_blocks(k)
    k(grid, block, copies)
    return [a for a in copies if isinstance(a, np.ndarray)], _fast_blocks(k) - before


def _same_as_checked(code, name, grid, block, args):
    """The launch with the fast path and without it give the same bits; returns the fast blocks."""
    got, fast_blocks = _launch(code, name, grid, block, args)
    want, none = _launch(code, name, grid, block, args, REFERENCE)
    assert none == 0
    for g, w in zip(got, want):
        assert g.tobytes() == w.tobytes()
    return fast_blocks


def _same_fault(code, name, grid, block, args) -> str:
    """The launch faults with the fast path as with every block checked, in the same words: the message."""
    messages = []
    for options in (FAST, REFERENCE):
        k = cuda.RawKernel(code, name, backend="cpu", sanitize=False, options=options)
        with pytest.raises(KernelError) as caught:
            k(grid, block, args)
        messages.append(str(caught.value))
    assert messages[0] == messages[1]
    return messages[0]


VECTOR_ADD = bench.VECTOR_ADD  # (make bench's)


@pytest.mark.parametrize("n", [1, 255, 256, 1000, 4096])
def test_vector_add_every_block_fast_and_exact(n):
    rng = np.random.default_rng(n)
    a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    blocks = (n + 255) // 256
    (_, _, c), fast_blocks = _launch(VECTOR_ADD, "vector_add", blocks, 256, (a, b, np.zeros(n, np.float32), np.int32(n)))
    assert np.array_equal(c, a + b)
    assert fast_blocks == blocks  # (the last block too: `i < n` narrows i where c[i] is written)


@pytest.mark.parametrize("threads", ["1", "2"])
def test_a_fault_is_found_as_before(threads, monkeypatch):
    """A launch one block too long: the block the proof rejects runs checked, and faults there (with one
    worker, after the span of the blocks before it failed its proof and they ran one by one)."""
    monkeypatch.setenv("COURSE_CUDA_THREADS", threads)
    n = 1024
    a = np.ones(n, np.float32)
    message = _same_fault(VECTOR_ADD, "vector_add", n // 256 + 1, 256, (a, a, np.zeros(n, np.float32), np.int32(n + 256)))
    assert "block (4, 0, 0), thread (0, 0, 0)" in message


STENCIL = bench.STENCIL  # (make bench's: blocks of 16x16 threads, an early return at the border)


@pytest.mark.parametrize("threads", ["1", "2"])  # (one worker runs a row of blocks as one span: runtime.h)
@pytest.mark.parametrize("h, w", [(64, 64), (37, 50), (3, 3), (1, 20)])
def test_stencil_with_its_border_matches_the_checked_loop(h, w, threads, monkeypatch):
    monkeypatch.setenv("COURSE_CUDA_THREADS", threads)
    img = np.random.default_rng(h * w).random((h, w), dtype=np.float32)
    grid = ((w + 15) // 16, (h + 15) // 16)
    fast_blocks = _same_as_checked(STENCIL, "stencil3x3", grid, (16, 16),
                                   (img, np.zeros_like(img), np.int32(h), np.int32(w)))
    if h >= 3 and w >= 3:  # (border blocks too: the early return narrows x and y; a 1-row image has no inside)
        assert fast_blocks == grid[0] * grid[1]


def test_stencil_without_its_guard_faults_at_the_same_thread():
    code = STENCIL.replace("if (x < 1 || y < 1 || x >= w - 1 || y >= h - 1) return;", "if (x >= w || y >= h) return;")
    img = np.ones((32, 32), np.float32)
    assert "in[-33]" in _same_fault(code, "stencil3x3", (2, 2), (16, 16), (img, np.zeros_like(img), np.int32(32),
                                                                          np.int32(32)))


# Kernels whose semantics the fast code must keep exactly: unsigned wrap-around, mixed signedness, 64-bit
# indices, loops up and down, a grid-stride loop, break and continue, guards in every combination.
SEMANTICS = r"""
#define TILE 16
#define SCALE 0.5f
extern "C" __global__ void wrap(const float* in, float* out, int n) {
    // threadIdx.x - 1 is unsigned: for thread 0 of block b it wraps to b * blockDim.x - 1 (mod 2^32)
    unsigned j = blockIdx.x * blockDim.x + (threadIdx.x - 1);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && j < (unsigned)n) out[i] = in[j] * SCALE;
}
extern "C" __global__ void mixed(const int* in, int* out, int n, unsigned m) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (size_t)n) return;
    int k = (int)(i % m), q = (int)i / TILE, r = (int)i & 7, s = (int)i >> 2;
    bool odd = i % 2 == 1;
    out[i] = in[min(k + q, n - 1)] + (odd ? in[r] : in[s]) - (int)(threadIdx.x < m);
}
extern "C" __global__ void rows(const double* m, double* sums, long long rows_, int cols) {
    long long row = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (row >= rows_) return;
    double s = 0.0;
    for (int j = cols - 1; j >= 0; j--) {
        if (j == 3) continue;
        if (j < cols / 4) break;
        s += m[row * cols + j];
    }
    sums[row] = s;
}
extern "C" __global__ void saxpy(int n, float a, const float* x, float* y) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = a * x[i] + y[i];
}
extern "C" __global__ void guards(const float* x, float* y, int n, int lo, int hi) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    if (i < lo) { y[i] = -1.0f; return; }
    if (i > hi) y[i] = x[i] * 2.0f;
    else if (blockIdx.x % 2 == 0) y[i] = x[i];
    else y[i] = x[n - 1 - i];
    if (threadIdx.x == 0) y[i] += 100.0f;
    if (x[i] > 0.5f) y[i] = fmaxf(y[i], sqrtf(x[i]));
}
extern "C" __global__ void cube(const float* in, float* out, int nx, int ny, int nz) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    if (x < nx && y < ny && z < nz) out[(z * ny + y) * nx + x] = in[(z * ny + y) * nx + x] + z;
}
extern "C" __global__ void first_lanes(const float* in, float* out) {
    if (threadIdx.x < 8) out[blockIdx.x * 8 + threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];
}
"""


def test_unsigned_wrap_is_kept():
    n = 1000
    x = np.random.default_rng(1).random(n, dtype=np.float32)
    _same_as_checked(SEMANTICS, "wrap", 4, 256, (x, np.zeros(n, np.float32), np.int32(n)))


def test_mixed_signedness_64_bit_and_integer_operators():
    n = 777
    x = np.random.default_rng(2).integers(-1000, 1000, n).astype(np.int32)
    for m in (5, 1, 300):
        fast_blocks = _same_as_checked(SEMANTICS, "mixed", 4, 256, (x, np.zeros(n, np.int32), np.int32(n), np.uint32(m)))
        assert fast_blocks == 4


def test_loops_down_with_break_and_continue():
    m = np.random.default_rng(3).random((300, 17))
    fast_blocks = _same_as_checked(SEMANTICS, "rows", 3, 128, (m, np.zeros(300), np.int64(300), np.int32(17)))
    assert fast_blocks == 3


def test_grid_stride_loop():
    n = 5000
    x, y = np.random.default_rng(4).random(n, dtype=np.float32), np.random.default_rng(5).random(n, dtype=np.float32)
    fast_blocks = _same_as_checked(SEMANTICS, "saxpy", 3, 128, (np.int32(n), np.float32(1.5), x, y))
    assert fast_blocks == 3


@pytest.mark.parametrize("lo, hi", [(0, 10_000), (300, 700), (1000, 0)])
def test_guards_in_every_combination(lo, hi):
    n = 1000
    x = np.random.default_rng(6).random(n, dtype=np.float32)
    fast_blocks = _same_as_checked(SEMANTICS, "guards", 4, 256, (x, np.zeros(n, np.float32), np.int32(n),
                                                                np.int32(lo), np.int32(hi)))
    assert fast_blocks == 4


@pytest.mark.parametrize("threads", ["1", "2"])
def test_three_dimensions(threads, monkeypatch):
    monkeypatch.setenv("COURSE_CUDA_THREADS", threads)
    nx, ny, nz = 19, 7, 5
    x = np.random.default_rng(7).random(nx * ny * nz, dtype=np.float32)
    fast_blocks = _same_as_checked(SEMANTICS, "cube", (3, 2, 2), (8, 4, 3),
                                   (x, np.zeros_like(x), np.int32(nx), np.int32(ny), np.int32(nz)))
    assert fast_blocks == 12


def test_a_condition_on_threadIdx_narrows_it():
    x = np.random.default_rng(8).random(4 * 64, dtype=np.float32)
    out = np.zeros(4 * 8, np.float32)
    (_, got), fast_blocks = _launch(SEMANTICS, "first_lanes", 4, 64, (x, out))
    assert np.array_equal(got, x.reshape(4, 64)[:, :8].ravel()) and fast_blocks == 4


def test_in_place_on_one_array_and_a_view():
    code = r"""
extern "C" __global__ void scale(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i] + 1.0f;
}"""
    base = np.arange(600, dtype=np.float32)
    k = cuda.RawKernel(code, "scale", backend="cpu", sanitize=False, options=FAST)
    same = base.copy()
    k(3, 256, (same, same, np.int32(600)))
    assert np.array_equal(same, 2 * base + 1)
    view = base.copy()[100:]
    k(2, 256, (view, view, np.int32(500)))
    assert np.array_equal(view, 2 * base[100:] + 1)
    with pytest.raises(KernelError, match="500 elements"):  # the view's own length bounds it
        k(3, 256, (view, view, np.int32(600)))


def test_null_pointer_and_empty_array_take_the_checked_path():
    k = cuda.RawKernel(VECTOR_ADD, "vector_add", backend="cpu", sanitize=False, options=FAST)
    empty = np.zeros(0, np.float32)
    k(1, 256, (empty, empty, empty, np.int32(0)))  # no thread accesses anything
    with pytest.raises(KernelError):
        k(1, 256, (empty, empty, empty, np.int32(1)))


@pytest.mark.parametrize("body, why", [
    ("out[i] = in[idx[i]];", "index not made of the block's integers"),
    ("atomicAdd(&out[0], in[i]);", "atomicAdd"),
    ("int j = i; while (j > 0) j--; out[i] = in[j];", "while"),
    ("out[i] = in[(int)in[i]];", "index not made of the block's integers"),
    ("const float* p = in + 1; out[i] = p[i];", "__cc_ptr"),  # (a pointer variable)
    ("int k = i; k += 1; out[k] = in[k];", "index not made of the block's integers"),
])
def test_kernels_outside_the_class_keep_the_checked_path(body, why):
    code = ('extern "C" __global__ void k(const float* in, float* out, const int* idx, int n) {\n'
            "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            f"    if (i >= n) return;\n    {body}\n}}\n")
    source = parse(code)
    reason = fast.reason(source, source.kernels["k"])
    assert reason is not None and why in reason, reason


def test_barriers_and_shared_memory_keep_the_checked_path():
    code = r"""
extern "C" __global__ void k(const float* in, float* out) {
    __shared__ float s[256];
    s[threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = s[255 - threadIdx.x];
}"""
    source = parse(code)
    assert fast.reason(source, source.kernels["k"]) is not None
    assert fast.reason(parse(STENCIL), parse(STENCIL).kernels["stencil3x3"]) is None


def test_the_sanitizer_never_takes_the_fast_path():
    k = cuda.RawKernel(VECTOR_ADD, "vector_add", backend="cpu", sanitize=True, options=FAST)
    a = np.ones(512, np.float32)
    k.compile()
    before = _fast_blocks(k)
    k(2, 256, (a, a, np.zeros(512, np.float32), np.int32(512)))
    assert _fast_blocks(k) == before


def test_a_macro_is_read_where_the_kernel_reads_it():
    """`#ifndef TILE / #define TILE 8` with -DTILE=32: the fast code uses 32, as the kernel does."""
    code = r"""
#ifndef TILE
#define TILE 8
#endif
extern "C" __global__ void k(const float* in, float* out, int n) {
    int i = blockIdx.x * TILE + threadIdx.x;
    if (threadIdx.x < TILE && i < n) out[i] = in[i] + TILE;
}"""
    x = np.arange(100, dtype=np.float32)
    k = cuda.RawKernel(code, "k", backend="cpu", sanitize=False, options=("-DTILE=32",) + FAST)
    out = np.zeros_like(x)
    k(4, 32, (x, out, np.int32(100)))
    assert np.array_equal(out, x + 32)
    assert _fast_blocks(k) >= 4


def test_an_if_directive_in_the_body_and_own_functions_keep_the_checked_path():
    directive = r"""
extern "C" __global__ void k(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
#ifdef TWICE
    if (i < n) out[i] = 2.0f * in[i];
#else
    if (i < n) out[i] = in[i];
#endif
}"""
    own = r"""
__device__ float sqrtf2(float v) { return v; }
__device__ int min(int a, int b, int c) { return a; }
extern "C" __global__ void k(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[min(i, n - 1)];
}"""
    for code in (directive, own):
        source = parse(code)
        assert fast.reason(source, source.kernels["k"]) is not None
    x = np.arange(10, dtype=np.float32)
    out = np.zeros_like(x)
    cuda.RawKernel(directive, "k", backend="cpu", sanitize=False, options=("-DTWICE",) + FAST)(1, 32, (x, out, np.int32(10)))
    assert np.array_equal(out, 2 * x)


STOPS = r"""
extern "C" __global__ void to_int(const float* in, int* out, const int* d, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = (int)(in[i] * 1e10f) + d[i] / d[(i + 1) % n];
}
extern "C" __global__ void to_pixels(const float* in, unsigned char* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned char v = (unsigned char)fminf(fmaxf(in[i], 0.0f), 255.0f);
    out[i] = v / 2 + (unsigned char)(i % 7);
}
"""


def test_a_stop_inside_a_proved_block_names_its_thread_as_before():
    """A float converted to an integer it does not fit, an integer division by zero: the fast loop keeps
    threadIdx, and the message is the checked loop's."""
    n = 600
    small = np.full(n, 1e-12, np.float32)
    ones = np.ones(n, np.int32)
    _same_as_checked(STOPS, "to_int", 3, 256, (small, np.zeros(n, np.int32), ones, np.int32(n)))
    for values, divisors in ((small.copy(), ones.copy()), (small, ones)):
        values[437] = 1.0  # 1e10 does not fit an int
        if values is small:
            divisors[439] = 0
        assert "thread (181, 0, 0)" in _same_fault(STOPS, "to_int", 3, 256, (values, np.zeros(n, np.int32), divisors,
                                                                            np.int32(n)))


def test_pixels_of_one_byte():
    n = 1000
    x = np.random.default_rng(9).random(n, dtype=np.float32) * 300 - 20
    fast_blocks = _same_as_checked(STOPS, "to_pixels", 4, 256, (x, np.zeros(n, np.uint8), np.int32(n)))
    assert fast_blocks == 4


# A red team's finds (fast path against every block checked, bit for bit and message for message)
RED_TEAM = r"""
#define M 3 - 1
#define STEP 2 * 3
extern "C" __global__ void wide_literals(const float* in, float* out, long long* wide, int n) {
    unsigned t = min(threadIdx.x, 0xFFFFFFFFu);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n) out[t] = (float)t;
    if (i < n) wide[i] = (long long)i + 0x80000000 + (i & 1 ? 0xFFFFFFFFu : 1ll);
}
extern "C" __global__ void unparenthesised(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n / 6) out[i] = in[n / STEP + i] + i * M;
}
extern "C" __global__ void never_runs(const float* in, float* out, int n, int m) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    for (int d = 1; d <= m; d++) s += in[i / d] + in[(i + (1 << d)) % n];
    if (i < n) out[i] = s + in[i] + 100 / (n - i);
}
extern "C" __global__ void __launch_bounds__(256) spelled(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = __ldg(&in[static_cast<int>(abs(i - n / 2))]);
}
"""


def test_literals_past_int_max_keep_their_value():
    n = 8
    _same_as_checked(RED_TEAM, "wide_literals", 1, 8, (np.ones(n, np.float32), np.zeros(n, np.float32),
                                                        np.zeros(n, np.int64), np.int32(n)))


def test_a_macro_that_is_an_expression_keeps_cs_precedence():
    x = np.random.default_rng(10).random(100, dtype=np.float32)
    # (n / STEP is n / 2 * 3: in[150] of 100)
    assert "in[150]" in _same_fault(RED_TEAM, "unparenthesised", 4, 32, (x, np.zeros(100, np.float32), np.int32(100)))


def test_code_no_thread_reaches_proves_nothing_wrong():
    x = np.random.default_rng(11).random(64, dtype=np.float32)
    fast_blocks = _same_as_checked(RED_TEAM, "never_runs", 2, 32, (x, np.zeros(64, np.float32), np.int32(32),
                                                                  np.int32(0)))
    assert fast_blocks == 2


def test_launch_bounds_ldg_static_cast_and_abs():
    x = np.random.default_rng(12).random(300, dtype=np.float32)
    assert _same_as_checked(RED_TEAM, "spelled", 2, 256, (x, np.zeros_like(x), np.int32(300))) == 2


def test_a_macro_defined_after_the_kernel_that_breaks_its_fast_code():
    """The fast code stands after every kernel: a later `#define W 64` turns its `int W` into `int 64`. The
    module is built again without the fast path, and the kernel runs as written."""
    code = r"""
extern "C" __global__ void scale(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int W = n;
    if (i < W) out[i] = 2.0f * in[i];
}
#define W 64
extern "C" __global__ void fill(float* out) { out[threadIdx.x] = W; }
"""
    x = np.arange(100, dtype=np.float32)
    out, fast_blocks = _launch(code, "scale", 1, 128, (x, np.zeros_like(x), np.int32(100)))
    assert np.array_equal(out[1], 2 * x) and fast_blocks == 0


def test_a_large_launch_uses_a_module_with_the_fast_path(monkeypatch):
    """Only a launch of cpu.FAST_PATH_THREADS threads or more compiles the fast path (a second module, once):
    the small launches of tests and exercises pay no second compile."""
    from course.cuda import cpu

    monkeypatch.setattr(cpu, "FAST_PATH_THREADS", 4096)
    k = cuda.RawKernel(VECTOR_ADD.replace("vector_add", "vector_add_auto"), "vector_add_auto", backend="cpu",
                       sanitize=False)
    x = np.arange(8192, dtype=np.float32)
    out = np.zeros_like(x)
    k(8, 256, (x, x, out, np.int32(2048)))
    assert k._fast is None and np.array_equal(out[:2048], 2 * x[:2048])
    k(32, 256, (x, x, out, np.int32(8192)))
    assert np.array_equal(out, 2 * x)
    assert k._fast.export("__cc_fast_block_count", ctypes.c_longlong)() == 32


def test_a_repeated_launch_is_checked_again_where_anything_changed():
    """A launch with the arguments of the one before (a timing loop) reuses its checks and packing
    (kernel.py's _launch_key): a changed array, layout, flag or scalar is checked afresh."""
    k = cuda.RawKernel(VECTOR_ADD, "vector_add", backend="cpu", sanitize=False)
    a, out = np.ones(512, np.float32), np.zeros(512, np.float32)
    k(2, 256, (a, a, out, np.int32(512)))
    assert k._repeat is not None
    a[:] = 2.0
    k(2, 256, (a, a, out, np.int32(512)))  # (the same memory: its new values)
    assert (out == 4.0).all()
    out.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        k(2, 256, (a, a, out, np.int32(512)))
    with pytest.raises(TypeError, match="float64"):
        k(2, 256, (a, a, np.zeros(512), np.int32(512)))
    with pytest.raises(KernelError, match="n = 1,024"):
        k(4, 256, (a, a, np.zeros(512, np.float32), np.int32(1024)))
    with pytest.raises(TypeError):
        k(2, 256, (a, a, np.zeros(512, np.float32), 2.5))


def test_the_launch_memo_compares_bits_and_copies_the_shape():
    """(A second red team's finds) -0.0 after 0.0, a float grid after an int one, a grid list changed in place."""
    code = r"""
extern "C" __global__ void k(const float* a, float* c, float s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = 1.0f / s + a[i];
}"""
    k = cuda.RawKernel(code, "k", backend="cpu", sanitize=False)
    a, c = np.zeros(64, np.float32), np.zeros(64, np.float32)
    k(2, 32, (a, c, np.float32(0.0), np.int32(64)))
    k(2, 32, (a, c, np.float32(-0.0), np.int32(64)))
    assert np.isneginf(c).all()
    with pytest.raises(TypeError, match="grid"):
        k(2.0, 32, (a, c, np.float32(-0.0), np.int32(64)))
    grid = [1]
    c[:] = 0
    with pytest.warns(cuda.KernelWarning, match="no thread"):
        k(grid, 32, (a, c, np.float32(1.0), np.int32(64)))
    grid[0] = 2
    k(grid, 32, (a, c, np.float32(1.0), np.int32(64)))
    assert (c == 1.0).all()


SHADOWS = r"""
#define A 4
#define B (A)
extern "C" __global__ void later_macro(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i * B / 8];
}
extern "C" __global__ void own_warp_size(const float* in, float* out, int n, int warpSize) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[warpSize];
}
#undef A
#define A 8
"""


def test_a_macro_redefined_after_the_kernel_and_a_parameter_named_warpSize():
    x = np.random.default_rng(13).random(64, dtype=np.float32)
    _same_as_checked(SHADOWS, "later_macro", 2, 32, (x, np.zeros(64, np.float32), np.int32(64)))
    source = parse(SHADOWS)
    assert fast.reason(source, source.kernels["later_macro"]) is not None  # (B reads A, defined again after)
    assert "in[1000]" in _same_fault(SHADOWS, "own_warp_size", 2, 32, (x, np.zeros(64, np.float32), np.int32(64),
                                                                       np.int32(1000)))


def test_a_stop_in_a_statement_of_several_lines_names_its_own_line():
    code = r"""
#define T (10 / 0)
extern "C" __global__ void k(const float* in, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = (int)in[i] +
            (int)(in[i] * 1e10f);
}
extern "C" __global__ void constant(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] + T;
}"""
    x = np.full(64, 1e-12, np.float32)
    x[37] = 1.0
    assert "line 6" in _same_fault(code, "k", 2, 32, (x, np.zeros(64, np.int32), np.int32(64)))
    # (10 / 0 stops the kernel at its line, not inside the proof)
    assert "line 10" in _same_fault(code, "constant", 2, 32, (x, np.zeros(64, np.float32), np.int32(64)))
