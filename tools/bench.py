"""The course's speed claims, measured side by side in one run (`make bench`).

    python tools/bench.py [--quick] [--out build/bench] [--only SECTION ...]

Writes ``build/bench/<device>.md`` and ``<device>.json``: every figure is the median of
several repeats with its spread (interquartile range), and every claim is a *ratio* of two
figures measured in the same run, so the table means something on any machine. Nothing here
asserts an absolute time. ``--quick`` shrinks every size (CI uses it to prove the tool runs).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# NumPy only prepares data and checks results here. Its OpenBLAS threads keep spinning for a while
# after a BLAS call (the matmul check), and on a 2-core machine they take a core from the emulator's
# worker threads in the next measurement (the empty 4096-block launch: 225 µs instead of 168 µs).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from course.timing import benchmark  # noqa: E402  (the course's one timing helper)

SECTIONS = {}
QUICK = False


def section(name: str, gpu_only: bool = False):
    """Register a measurement; it returns a list of rows (dicts made by ``row``)."""

    def register(fn):
        SECTIONS[name] = (fn, gpu_only)
        return fn

    return register


def row(name: str, timing=None, *, value=None, unit="s", spread=None, note=""):
    """One line of the table, from a Timing (median and IQR in seconds) or a derived value."""
    if timing is not None:
        value, spread = timing.median, timing.spread
        note = note or f"median of {len(timing.times)} on {timing.device}"
    return {"name": name, "value": value, "unit": unit, "spread": spread, "note": note}


def ratio(name: str, slow, fast, note: str = "") -> dict:
    """slow.median / fast.median, with the spread from their quartiles (worst and best pairing)."""

    def quartiles(t):
        if len(t.times) < 4:
            return min(t.times), max(t.times)
        q = statistics.quantiles(t.times, n=4)
        return q[0], q[2]

    (s1, s3), (f1, f3) = quartiles(slow), quartiles(fast)
    return {"name": name, "value": slow.median / fast.median, "unit": "×",
            "spread": s3 / f1 - s1 / f3, "note": note or "ratio of medians, same run"}


def pick(quick, full):
    return quick if QUICK else full


# ----------------------------------------------------------------------------------------
# CPU emulator of course.cuda
# ----------------------------------------------------------------------------------------

TILED_MATMUL = r"""
#define TILE 16
extern "C" __global__ void matmul_tiled(const float* A, const float* B, float* C, int n) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < (n + TILE - 1) / TILE; ++t) {
        As[threadIdx.y][threadIdx.x] = (row < n && t * TILE + threadIdx.x < n) ? A[row * n + t * TILE + threadIdx.x] : 0.0f;
        Bs[threadIdx.y][threadIdx.x] = (col < n && t * TILE + threadIdx.y < n) ? B[(t * TILE + threadIdx.y) * n + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < n && col < n) C[row * n + col] = acc;
}
"""

VECTOR_ADD = r"""
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
"""

STENCIL = r"""
extern "C" __global__ void stencil3x3(const float* in, float* out, int h, int w) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < 1 || y < 1 || x >= w - 1 || y >= h - 1) return;
    float s = 0.0f;
    for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) s += in[(y + dy) * w + (x + dx)];
    out[y * w + x] = s / 9.0f;
}
"""

PLAIN_C = r"""
extern "C" void vector_add(const float* a, const float* b, float* c, int n) {
    for (int i = 0; i < n; ++i) c[i] = a[i] + b[i];
}
// The vector add as the emulator runs it, written by hand: a block's threads one after another, each
// through the kernel's `if (i < n)` and memcheck's check before each of its three accesses (an early
// return, as a fault is). What a checked scalar thread loop costs at the least, whatever emulates it.
extern "C" long long vector_add_checked(const float* a, const float* b, float* c, int n,
                                        unsigned long long na, unsigned long long nb,
                                        unsigned long long nc, int block) {
    for (int start = 0; start < n; start += block)
        for (int t = 0; t < block; ++t) {
            int i = start + t;
            if (i < n) {
                unsigned long long k = (unsigned long long)(long long)i;
                if (k >= na) return 1;
                float v = a[k];
                if (k >= nb) return 2;
                v += b[k];
                if (k >= nc) return 3;
                c[k] = v;
            }
        }
    return 0;
}
// The stencil as the emulator runs it, written by hand and with no check at all: blocks of 16x16
// threads, each thread's coordinates from the block's (unsigned, as CUDA's built-ins are) and the
// kernel's early return. What a thread loop costs even with memcheck off: GCC vectorises neither the
// guard nor an index made from unsigned built-ins (it could wrap), so each thread is a scalar pass.
extern "C" void stencil3x3_threads(const float* in, float* out, int h, int w) {
    const unsigned bx = 16, by = 16, gx = ((unsigned)w + bx - 1) / bx, gy = ((unsigned)h + by - 1) / by;
    for (unsigned blk_y = 0; blk_y < gy; ++blk_y)
        for (unsigned blk_x = 0; blk_x < gx; ++blk_x)
            for (unsigned ty = 0; ty < by; ++ty)
                for (unsigned tx = 0; tx < bx; ++tx) {
                    int x = blk_x * bx + tx, y = blk_y * by + ty;
                    if (x < 1 || y < 1 || x >= w - 1 || y >= h - 1) continue;
                    float s = 0.0f;
                    for (int dy = -1; dy <= 1; ++dy)
                        for (int dx = -1; dx <= 1; ++dx) s += in[(y + dy) * w + (x + dx)];
                    out[y * w + x] = s / 9.0f;
                }
}
extern "C" void stencil3x3(const float* in, float* out, int h, int w) {
    for (int y = 1; y < h - 1; ++y)
        for (int x = 1; x < w - 1; ++x) {
            float s = 0.0f;
            for (int dy = -1; dy <= 1; ++dy)
                for (int dx = -1; dx <= 1; ++dx) s += in[(y + dy) * w + (x + dx)];
            out[y * w + x] = s / 9.0f;
        }
}
"""


WARP_REDUCE = r"""
__device__ float warp_sum(float v) {
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffff, v, offset);
    return v;
}
extern "C" __global__ void sum_shuffle(const float* x, float* partial, int n) {
    __shared__ float warps[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    float v = warp_sum(i < n ? x[i] : 0.0f);
    if (lane == 0) warps[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = warp_sum(lane < blockDim.x / 32 ? warps[lane] : 0.0f);
        if (lane == 0) partial[blockIdx.x] = v;
    }
}
extern "C" __global__ void sum_tree(const float* x, float* partial, int n) {
    __shared__ float buffer[256];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    buffer[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (t < stride) buffer[t] += buffer[t + stride];
        __syncthreads();
    }
    if (t == 0) partial[blockIdx.x] = buffer[0];
}
"""


def _warp_reduce_rows():
    """Warp-shuffle block reduction vs the __syncthreads tree, same data (issue: ≤ 3×)."""
    import numpy as np

    from course import cuda

    n = pick(1 << 16, 1 << 22)
    x = np.random.rand(n).astype(np.float32)
    blocks = (n + 255) // 256
    partial = np.zeros(blocks, np.float32)
    rows, times = [], {}
    for name in ("sum_shuffle", "sum_tree"):
        k = cuda.RawKernel(WARP_REDUCE, name, backend="cpu", time_limit=600, sanitize=False)
        times[name] = benchmark(k, blocks, 256, (x, partial, np.int32(n)), device="cpu", repeat=pick(3, 5))
        assert np.isclose(partial.sum(dtype=np.float64), x.sum(dtype=np.float64), rtol=1e-4), name
        rows.append(row(f"block sums of {n:,} floats, {'warp shuffles' if name == 'sum_shuffle' else '__syncthreads tree'}",
                        times[name]))
    rows.append(ratio("warp-shuffle reduction / __syncthreads tree", times["sum_shuffle"], times["sum_tree"],
                      "goal ≤ 3×"))
    return rows


def _sanitizer_rows():
    """What racecheck + initcheck + the read-only check cost: the same launch with and without."""
    import numpy as np

    from course import cuda

    rows = []
    n = pick(64, 256)
    a, b = (np.random.rand(n, n).astype(np.float32) for _ in range(2))
    c = np.zeros((n, n), np.float32)
    grid = ((n + 15) // 16, (n + 15) // 16)
    size = pick(1 << 16, 1 << 20)
    x, y, z = (_apart(np.random.rand(size).astype(np.float32), slot) for slot in range(3))
    cases = [(f"tiled matmul {n}²", TILED_MATMUL, "matmul_tiled", grid, (16, 16), (a, b, c, np.int32(n))),
             (f"vector add {size:,}", VECTOR_ADD, "vector_add", (size + 255) // 256, 256, (x, y, z, np.int32(size)))]
    for label, code, name, g, blk, args in cases:
        times = {}
        for sanitize in (False, True):
            k = cuda.RawKernel(code, name, backend="cpu", sanitize=sanitize, time_limit=600)
            k(g, blk, args)  # compile outside the timing
            times[sanitize] = benchmark(k, g, blk, args, device="cpu", repeat=pick(3, 5))
        rows += [row(f"{label}, every sanitizer check on", times[True]),
                 ratio(f"{label}: sanitized / plain launch", times[True], times[False],
                       "racecheck + initcheck + read-only; memcheck is on in both; a sanitized launch runs on "
                       "one worker thread, the plain one on every core")]
    return rows


def _apart(values, slot: int):
    """A copy of `values` whose data starts at its own offset in a 4 KiB page (slot 0, 1, 2, ...).

    Two large arrays from the allocator often start at the same offset in their pages, or 16
    bytes apart; a loop that stores to one and loads from the other then loads addresses whose low
    12 bits equal those of a store just made, and the CPU delays each such load as if it might read
    that store ("4K aliasing"). Plain C's vector add ran 2.5x slower so, and its stencil 3.5x: the
    ratios to the emulator looked better than they are. Arrays of one measurement get different
    slots, 9 cache lines apart."""
    import numpy as np

    values = np.ascontiguousarray(values)
    raw = np.empty(values.nbytes + 8192, np.uint8)
    start = (64 + 576 * slot - raw.ctypes.data) % 4096
    placed = raw[start:start + values.nbytes].view(values.dtype).reshape(values.shape)
    placed[...] = values
    return placed


def _plain_c(*flags: str):
    """The same loops as the kernels, compiled as ordinary C++ with -O3 and `flags` (one thread): the
    baseline."""
    from course.cuda import cpu as cuda_cpu

    with tempfile.TemporaryDirectory(prefix="course-bench-") as build:  # (a loaded library outlives its file)
        src, lib = Path(build) / "plain.cpp", Path(build) / "plain.so"
        src.write_text(PLAIN_C)
        subprocess.run([cuda_cpu.find_compiler(), "-O3", *flags, "-shared", "-fPIC", str(src), "-o", str(lib)],
                       check=True)
        return ctypes.CDLL(str(lib))


# A kernel with every block on the checked thread loop (course/cuda/fast.py's path off): what proving
# blocks in bounds gives.
CHECKED = ("-D__CC_FAST_PATH=0",)
# That loop without memcheck's bounds checks (runtime.h's __CC_BENCH_UNCHECKED, which only this tool
# defines): what the checks cost where a block is not proved.
UNCHECKED = ("-D__CC_BENCH_UNCHECKED",) + CHECKED


class _threads:
    """COURSE_CUDA_THREADS=count for the launches inside the `with`."""

    def __init__(self, count):
        self.count = count

    def __enter__(self):
        self.saved = os.environ.get("COURSE_CUDA_THREADS")
        os.environ["COURSE_CUDA_THREADS"] = str(self.count)

    def __exit__(self, *exc):
        if self.saved is None:
            os.environ.pop("COURSE_CUDA_THREADS", None)
        else:
            os.environ["COURSE_CUDA_THREADS"] = self.saved


def _scaling_rows():
    """The tiled matmul on one worker thread and on every core (COURSE_CUDA_THREADS)."""
    import numpy as np

    from course import cuda
    from course.cuda import cpu

    n = pick(128, 512)
    a, b = (np.random.rand(n, n).astype(np.float32) for _ in range(2))
    c = np.zeros((n, n), np.float32)
    matmul = cuda.RawKernel(TILED_MATMUL, "matmul_tiled", backend="cpu", sanitize=False, time_limit=600)
    grid, cores = ((n + 15) // 16, (n + 15) // 16), cpu.worker_threads()
    times = {}
    for count in sorted({1, cores}):
        with _threads(count):
            times[count] = benchmark(matmul, grid, (16, 16), (a, b, c, np.int32(n)), device="cpu", repeat=pick(3, 5))
        assert np.allclose(c, a @ b, rtol=1e-4, atol=1e-4), "tiled matmul result is wrong"
    rows = [row(f"tiled matmul {n}², {count} worker thread{'s' * (count > 1)}", t) for count, t in times.items()]
    if cores > 1:
        rows.append(ratio(f"tiled matmul {n}²: 1 worker thread / {cores}", times[1], times[cores],
                          f"goal ≥ 1.7× on 2 cores (os.sched_getaffinity: {cores} cores)"))
    return rows


@section("CPU emulator (course.cuda, CPU backend)")
def emulator_section():
    import numpy as np

    from course import cuda

    ptr = lambda a: a.ctypes.data_as(ctypes.c_void_p)
    rows = []
    n = pick(64, 256)
    a = np.random.rand(n, n).astype(np.float32)
    b = np.random.rand(n, n).astype(np.float32)
    c = np.zeros((n, n), np.float32)
    started = time.perf_counter()
    matmul = cuda.RawKernel(TILED_MATMUL, "matmul_tiled", backend="cpu", sanitize=False)
    grid = ((n + 15) // 16, (n + 15) // 16)
    matmul(grid, (16, 16), (a, b, c, np.int32(n)))
    rows.append(row("first launch of the tiled matmul in this process", value=time.perf_counter() - started,
                    note="one measurement: compiles, or loads the kernel from the on-disk cache"))
    t = benchmark(matmul, grid, (16, 16), (a, b, c, np.int32(n)), device="cpu", repeat=pick(3, 7))
    assert np.allclose(c, a @ b, rtol=1e-4, atol=1e-4), "tiled matmul result is wrong"
    from course.cuda import cpu as cuda_cpu

    workers = cuda_cpu.worker_threads()
    rows.append(row(f"tiled shared-memory matmul {n}² float32 (16×16 tiles, __syncthreads)", t,
                    note=f"median of {len(t.times)} on {workers} worker thread(s); goal ≤ 25 ms at 256²"))

    plain, scalar = _plain_c(), _plain_c("-fno-tree-vectorize")
    goal = (f"goal ≤ 1.5×: memcheck on, {workers} worker thread(s) vs plain C -O3 on one (blocks proved in bounds "
            "run without per-access checks: course/cuda/fast.py)")
    scalar_note = ("the same loop not vectorised (-fno-tree-vectorize), one thread: the checked thread loop runs a "
                   "block's threads one by one, each a scalar pass through the kernel")
    size = pick(1 << 16, 1 << 20)
    x, y, z = (_apart(np.random.rand(size).astype(np.float32), slot) for slot in range(3))
    add = cuda.RawKernel(VECTOR_ADD, "vector_add", backend="cpu", sanitize=False)
    blocks = (size + 255) // 256
    t_kernel = benchmark(add, blocks, 256, (x, y, z, np.int32(size)), device="cpu", repeat=pick(5, 41))
    assert np.array_equal(z, x + y)
    all_checked = cuda.RawKernel(VECTOR_ADD, "vector_add", backend="cpu", sanitize=False, options=CHECKED)
    z[:] = 0
    t_all_checked = benchmark(all_checked, blocks, 256, (x, y, z, np.int32(size)), device="cpu", repeat=pick(5, 15))
    assert np.array_equal(z, x + y)
    unchecked = cuda.RawKernel(VECTOR_ADD, "vector_add", backend="cpu", sanitize=False, options=UNCHECKED)
    z[:] = 0
    t_raw = benchmark(unchecked, blocks, 256, (x, y, z, np.int32(size)), device="cpu", repeat=pick(5, 15))
    assert np.array_equal(z, x + y)
    t_c = benchmark(plain.vector_add, ptr(x), ptr(y), ptr(z), size, device="cpu", repeat=pick(5, 41))
    t_scalar = benchmark(scalar.vector_add, ptr(x), ptr(y), ptr(z), size, device="cpu", repeat=pick(5, 15))
    checked = plain.vector_add_checked
    checked.restype = ctypes.c_longlong
    checked.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_int] + [ctypes.c_ulonglong] * 3 + [ctypes.c_int]
    z[:] = 0
    t_checked = benchmark(checked, ptr(x), ptr(y), ptr(z), size, size, size, size, 256, device="cpu",
                          repeat=pick(5, 15))
    assert checked(ptr(x), ptr(y), ptr(z), size, size, size, size, 256) == 0 and np.array_equal(z, x + y)
    rows += [row(f"vector add {size:,} floats, emulated kernel", t_kernel),
             row(f"vector add {size:,} floats, emulated kernel, every block checked", t_all_checked,
                 note="-D__CC_FAST_PATH=0: no block proved, each runs the checked thread loop"),
             row(f"vector add {size:,} floats, checked thread loop built without bounds checks", t_raw),
             row(f"vector add {size:,} floats, plain C loop", t_c),
             row(f"vector add {size:,} floats, plain C loop, not vectorised", t_scalar),
             row(f"vector add {size:,} floats, plain C loop with memcheck's checks", t_checked,
                 note="one thread; the kernel's loop by hand: blocks of 256 threads, each thread's `if (i < n)` "
                      "and a bounds check before each of its three accesses"),
             ratio("vector add: emulated kernel / plain C", t_kernel, t_c, goal),
             ratio("vector add: emulated kernel / plain C not vectorised", t_kernel, t_scalar, scalar_note),
             ratio("vector add: every block checked / blocks proved in bounds", t_all_checked, t_kernel,
                   "what proving blocks gives (fast.py)"),
             ratio("vector add: checked thread loop with / without its bounds checks", t_all_checked, t_raw,
                   "what the checks cost in a block that is not proved"),
             ratio("vector add: plain C with memcheck's checks / plain C", t_checked, t_c,
                   "the least a checked thread loop costs, on one thread (checks keep the loop from being "
                   "vectorised): why blocks proved in bounds run without them")]

    side = pick(256, 1024)
    img = _apart(np.random.rand(side, side).astype(np.float32), 0)
    out = _apart(np.zeros((side, side), np.float32), 1)
    args = (img, out, np.int32(side), np.int32(side))
    grid2 = ((side + 15) // 16, (side + 15) // 16)
    stencil = cuda.RawKernel(STENCIL, "stencil3x3", backend="cpu", sanitize=False)
    t_kernel = benchmark(stencil, grid2, (16, 16), args, device="cpu", repeat=pick(3, 31))
    out_c = _apart(np.zeros((side, side), np.float32), 2)
    t_c = benchmark(plain.stencil3x3, ptr(img), ptr(out_c), side, side, device="cpu", repeat=pick(3, 31))
    assert np.allclose(out, out_c, atol=1e-6), "stencil kernel and plain C disagree"
    out[:] = 0
    stencil_checked = cuda.RawKernel(STENCIL, "stencil3x3", backend="cpu", sanitize=False, options=CHECKED)
    t_all_checked = benchmark(stencil_checked, grid2, (16, 16), args, device="cpu", repeat=pick(3, 9))
    assert np.allclose(out, out_c, atol=1e-6), "stencil kernel with every block checked and plain C disagree"
    out[:] = 0
    stencil_raw = cuda.RawKernel(STENCIL, "stencil3x3", backend="cpu", sanitize=False, options=UNCHECKED)
    t_raw = benchmark(stencil_raw, grid2, (16, 16), args, device="cpu", repeat=pick(3, 9))
    assert np.allclose(out, out_c, atol=1e-6), "stencil kernel without bounds checks and plain C disagree"
    t_scalar = benchmark(scalar.stencil3x3, ptr(img), ptr(out_c), side, side, device="cpu", repeat=pick(3, 9))
    out_c[:] = 0
    t_threads = benchmark(plain.stencil3x3_threads, ptr(img), ptr(out_c), side, side, device="cpu",
                          repeat=pick(3, 9))
    assert np.allclose(out, out_c, atol=1e-6), "stencil thread loop in plain C and the kernel disagree"
    rows += [row(f"3×3 stencil {side}², emulated kernel", t_kernel),
             row(f"3×3 stencil {side}², emulated kernel, every block checked", t_all_checked,
                 note="-D__CC_FAST_PATH=0: no block proved, each runs the checked thread loop"),
             row(f"3×3 stencil {side}², checked thread loop built without bounds checks", t_raw),
             row(f"3×3 stencil {side}², plain C loop", t_c),
             row(f"3×3 stencil {side}², plain C loop, not vectorised", t_scalar),
             row(f"3×3 stencil {side}², plain C thread loop without checks", t_threads,
                 note="one thread; the kernel's loop by hand, with no bounds check: blocks of 16×16 threads, "
                      "each thread's coordinates from the block's and its early return"),
             ratio("3×3 stencil: emulated kernel / plain C", t_kernel, t_c, goal),
             ratio("3×3 stencil: emulated kernel / plain C not vectorised", t_kernel, t_scalar, scalar_note),
             ratio("3×3 stencil: every block checked / blocks proved in bounds", t_all_checked, t_kernel,
                   "what proving blocks gives (fast.py)"),
             ratio("3×3 stencil: checked thread loop with / without its bounds checks", t_all_checked, t_raw,
                   "nine checked loads and one checked store a thread, in a block that is not proved"),
             ratio("3×3 stencil: plain C thread loop without checks / plain C", t_threads, t_c,
                   "the least the checked thread loop costs with memcheck off, on one thread (a thread's guard "
                   "and its index made from unsigned built-ins keep it from being vectorised): why a proved "
                   "block's loop decides its guards once for the block and computes its indices as signed "
                   "integers")]
    return rows + _scaling_rows() + _warp_reduce_rows() + _sanitizer_rows()


# ----------------------------------------------------------------------------------------
# Access profiles: the memory-transaction model of notebook 03
# ----------------------------------------------------------------------------------------

@section("Access profiles (course.cuda kernel.profile, notebook 03)")
def access_profiles():
    """Issue 20's goal: profiling a 1024² transpose on the CPU backend takes under 5 s."""
    import numpy as np

    from course import cuda

    naive = r'''
extern "C" __global__ void transpose(const float* in, float* out, int n) {
    int x = blockIdx.x * 32 + threadIdx.x;
    for (int dy = threadIdx.y; dy < 32; dy += blockDim.y) {
        int y = blockIdx.y * 32 + dy;
        out[x * n + y] = in[y * n + x];
    }
}'''
    n = pick(512, 1024)
    a = np.random.default_rng(0).standard_normal((n, n)).astype(np.float32)
    out = np.zeros_like(a)
    kernel = cuda.RawKernel(naive, "transpose", backend="cpu")
    kernel.profile((1, 1), (32, 8), (a, out, np.int32(n)))  # compile the traced build once, outside the timing
    holder = {}

    def run():
        holder["p"] = kernel.profile((n // 32, n // 32), (32, 8), (a, out, np.int32(n)))

    t = benchmark(run, device="cpu", repeat=pick(2, 3), warmup=0)
    p = holder["p"]
    assert np.array_equal(out, a.T), "the profiled transpose is wrong"
    stores = p.counters()["sectors per request (global stores)"]
    assert stores == 32, f"naive transpose stores should take 32 sectors per request, got {stores}"
    return [row(f"profile of a naive {n}² transpose ({len(p.trace):,} accesses traced and modelled)", t,
                note="goal < 5 s at 1024² (issue 20)")]


# ----------------------------------------------------------------------------------------
# Sharpening: the seed's per-pixel loop vs each correct implementation (notebook 06)
# ----------------------------------------------------------------------------------------

@section("Image sharpening, 3×3 kernel (notebook 06)")
def sharpen_section():
    import numpy as np
    import skimage.data
    import torch

    from course import cuda, env, sharpen

    xp = cuda.xp
    device = env.device()
    photo = skimage.data.camera()  # 512×512 uint8, ships with scikit-image
    side = pick(128, 512)
    host = np.ascontiguousarray(photo[:side, :side])
    image = xp.asarray(host)
    reference = sharpen.sharpen_reference(host)
    crop = pick(16, 48)
    t_seed = benchmark(sharpen.sharpen_seed_loop, host[:crop, :crop], device="cpu", repeat=pick(2, 3), warmup=1)
    per_pixel = t_seed.median / crop**2
    rows = [{"name": f"the seed's per-pixel loop, extrapolated to {side}² from a {crop}² crop",
             "value": per_pixel * side**2, "unit": "s", "spread": t_seed.spread / crop**2 * side**2,
             "note": f"{per_pixel * 1e6:.1f} µs per pixel × {side ** 2:,} pixels"}]
    on_gpu = cuda.backend() == "cupy"
    implementations = {
        "vectorised slicing (xp)": lambda: sharpen.sharpen_vectorised(image),
        "ndimage.correlate": lambda: sharpen.sharpen_ndimage(image),
        "F.conv2d (PyTorch)": lambda: sharpen.sharpen_conv2d(torch_image, device=device),
        "RawKernel, 2D indexing" + ("" if on_gpu else " (CPU emulator)"): lambda: sharpen.sharpen_rawkernel(image),
        "RawKernel, shared tile + halo" + ("" if on_gpu else " (CPU emulator)"): lambda: sharpen.sharpen_shared_tile(image),
    }
    torch_image = torch.from_numpy(host).to(device)
    peak, how = sharpen.peak_bandwidth("cuda" if on_gpu else "cpu", size_mb=pick(16, 64))
    for name, run in implementations.items():
        assert np.array_equal(sharpen.to_numpy(run()), reference), f"{name} differs from the reference"
        t = benchmark(run, device=device if "conv2d" in name else ("cuda" if on_gpu else "cpu"), repeat=pick(5, 20))
        rows.append(row(f"{name}, {side}²", t))
        rows.append({"name": f"  seed loop / {name}", "value": rows[0]["value"] / t.median, "unit": "×",
                     "spread": None, "note": "how many times faster than the seed"})
        rows.append({"name": f"  {name}: effective bandwidth / peak",
                     "value": sharpen.bytes_moved(host) / t.median / 1e9 / peak, "unit": "",
                     "spread": None, "note": f"peak {peak:.0f} GB/s ({how})"})
    return rows


# ----------------------------------------------------------------------------------------
# CIFAR: the seed's recipe vs the fast recipe (training throughput)
# ----------------------------------------------------------------------------------------

@section("CIFAR-10 training throughput (notebook 05)")
def cifar_section():
    import torch
    import torch.nn.functional as F

    from course import env, gpu
    from course.models import SeedNet, SpeedNet

    device = env.device()
    torch.manual_seed(0)
    rows = []

    def step_timer(model, batch, lr, channels_last=False, autocast=False):
        model = model.to(device)
        if channels_last:
            model = model.to(memory_format=torch.channels_last)
        opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
        x = torch.randn(batch, 3, 32, 32, device=device)
        if channels_last:
            x = x.contiguous(memory_format=torch.channels_last)
        y = torch.randint(0, 10, (batch,), device=device)
        dtype = gpu.amp_dtype(device)  # bf16 on the CPU and Ampere+, fp16 on a T4 (speed only: no GradScaler needed)

        def step():
            opt.zero_grad(set_to_none=True)
            with torch.autocast(device.type, dtype=dtype, enabled=autocast):
                loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()

        return benchmark(step, device=device, warmup=2, repeat=pick(5, 20), label=f"batch {batch}")

    def train_flops_per_image(model, batch=8):
        """FLOPs of one forward and backward pass per image, counted by PyTorch."""
        from torch.utils.flop_counter import FlopCounterMode

        model = model.to(device)
        x = torch.randn(batch, 3, 32, 32, device=device)
        with FlopCounterMode(display=False) as counter:
            F.cross_entropy(model(x), torch.zeros(batch, dtype=torch.long, device=device)).backward()
        return counter.get_total_flops() / batch

    width = pick(16, 64) if device.type == "cpu" else 64
    fast_batch = pick(64, 256) if device.type == "cpu" else 512
    runs = [("seed recipe: SeedNet, batch 4", SeedNet, 4, dict(lr=0.001)),
            (f"SeedNet, batch {fast_batch}", SeedNet, fast_batch, dict(lr=0.01)),
            (f"fast recipe: SpeedNet(width={width}), batch {fast_batch}, channels_last"
             + (f" + {str(gpu.amp_dtype(device)).replace('torch.', '')} autocast" if device.type == "cuda" else ""),
             lambda: SpeedNet(width=width), fast_batch,
             dict(lr=0.1, channels_last=True, autocast=device.type == "cuda"))]
    speeds = []
    for label, make, batch, options in runs:
        t = step_timer(make(), batch, **options)
        flops = train_flops_per_image(make())
        images_per_s = batch / t.median
        speeds.append(images_per_s)
        rows.append(row(f"{label} (images/s)", value=images_per_s, unit="img/s",
                        spread=batch / (t.median - t.spread / 2) - batch / (t.median + t.spread / 2),
                        note=f"training steps, median of {len(t.times)} on {t.device}"))
        rows.append({"name": f"  {label}: arithmetic done (GFLOP/s)", "value": images_per_s * flops / 1e9,
                     "unit": "GFLOP/s", "spread": None,
                     "note": f"{flops / 1e6:,.0f} MFLOP per training image (forward + backward)"})
    rows.append({"name": f"SeedNet batch 4 → batch {fast_batch}: images/s gain", "value": speeds[1] / speeds[0],
                 "unit": "×", "spread": None, "note": "same network; only the batch size changes"})
    return rows


# ----------------------------------------------------------------------------------------
# ONNX Runtime vs PyTorch eager (UNet inference, notebooks 08 and 09)
# ----------------------------------------------------------------------------------------

@section("ONNX Runtime vs PyTorch eager, UNet inference (notebook 09)")
def onnx_section():
    import numpy as np
    import torch

    from course import deploy
    from course.models import UNet

    torch.manual_seed(0)
    size = pick(64, 128)
    model = UNet(in_channels=3, num_classes=11, width=16, depth=3).eval()
    rows = []
    with tempfile.TemporaryDirectory(prefix="course-bench-onnx-") as folder:
        # the notebook's own helpers: the same export, and the same threads for both engines
        path = deploy.export_onnx(model, (torch.randn(2, 3, size, size),), Path(folder) / "unet.onnx")
        session = deploy.ort_session(path, device="cpu")
        name = session.get_inputs()[0].name
        for n in (1, 16):
            x = torch.randn(n, 3, size, size)
            with torch.inference_mode():
                expected = model(x).numpy()
            got = session.run(None, {name: x.numpy()})[0]
            assert np.allclose(got, expected, atol=1e-4, rtol=1e-3), "ONNX Runtime and PyTorch disagree"
            with torch.inference_mode():
                t_eager = benchmark(model, x, device="cpu", repeat=pick(5, 20), label="eager")
            t_ort = benchmark(session.run, None, {name: x.numpy()}, device="cpu", repeat=pick(5, 20), label="ort")
            rows += [row(f"UNet {size}×{size} batch {n}, PyTorch eager (CPU, {torch.get_num_threads()} threads)", t_eager),
                     row(f"UNet {size}×{size} batch {n}, ONNX Runtime (CPU, same threads)", t_ort),
                     ratio(f"batch {n}: eager / ONNX Runtime", t_eager, t_ort, "> 1 means ONNX Runtime is faster")]
    return rows


# ----------------------------------------------------------------------------------------
# GPU only: RawKernel SGEMM vs cuBLAS, stencil bandwidth vs peak
# ----------------------------------------------------------------------------------------

@section("GPU: tiled RawKernel SGEMM vs cuBLAS, stencil bandwidth vs peak", gpu_only=True)
def gpu_section():
    import cupy

    from course import cuda

    rows = []
    n = 2048
    a = cupy.random.rand(n, n, dtype=cupy.float32)
    b = cupy.random.rand(n, n, dtype=cupy.float32)
    c = cupy.zeros((n, n), cupy.float32)
    matmul = cuda.RawKernel(TILED_MATMUL, "matmul_tiled", backend="cupy")
    grid = (n // 16, n // 16)
    t_raw = benchmark(matmul, grid, (16, 16), (a, b, c, cupy.int32(n)), device="cuda", repeat=20)
    assert cupy.allclose(c, a @ b, rtol=1e-3, atol=1e-2)
    t_blas = benchmark(cupy.matmul, a, b, device="cuda", repeat=20)
    flops = 2 * n**3
    rows += [row(f"tiled RawKernel SGEMM {n}² (TFLOP/s)", value=flops / t_raw.median / 1e12, unit="TFLOP/s"),
             row(f"cuBLAS SGEMM {n}² (TFLOP/s)", value=flops / t_blas.median / 1e12, unit="TFLOP/s"),
             {"name": "RawKernel SGEMM as a fraction of cuBLAS", "value": t_blas.median / t_raw.median,
              "unit": "", "spread": None, "note": "ratio of medians, same run"}]

    side = 8192
    img = cupy.random.rand(side, side, dtype=cupy.float32)
    out = cupy.zeros_like(img)
    stencil = cuda.RawKernel(STENCIL, "stencil3x3", backend="cupy")
    t = benchmark(stencil, ((side + 15) // 16, (side + 15) // 16), (16, 16),
                  (img, out, cupy.int32(side), cupy.int32(side)), device="cuda", repeat=20)
    moved = 2 * img.nbytes  # each pixel read once from DRAM (neighbours hit the cache) and written once
    bandwidth = moved / t.median / 1e9
    rows.append(row(f"3×3 stencil {side}² effective bandwidth", value=bandwidth, unit="GB/s",
                    note="bytes read + written / median time"))
    from course import roofline

    for method in roofline.METHODS:  # the course's one definition of peak bandwidth, both ways
        try:
            peak = roofline.peak_bandwidth("cuda", method=method)
        except RuntimeError as error:  # a driver that reports no memory clock
            rows.append({"name": f"stencil bandwidth as a fraction of the {method} peak", "value": None,
                         "unit": "", "spread": None, "note": f"peak unknown: {error}"})
            continue
        rows.append({"name": f"stencil bandwidth as a fraction of the {method} peak",
                     "value": bandwidth * 1e9 / peak.per_s, "unit": "", "spread": None,
                     "note": f"peak {peak.per_s / 1e9:.0f} GB/s ({peak.how})"})
    return rows


@section("CIFAR-10 time to 94 % (notebook 05's speed run)")
def cifar94_section():
    """Read the record notebook 05's speed run leaves; only a gpu-mode run on real CIFAR-10 counts."""
    from course import env

    path = env.output_dir("05") / "speed_run.json"
    missing = {"name": "CIFAR-10 time to 94 %", "value": None, "unit": "s", "spread": None}
    if not path.exists():
        return [{**missing, "note": "not measured: run notebook 05 in gpu mode with CIFAR-10 downloaded "
                                     "(it writes build/outputs/05/speed_run.json)"}]
    record = json.loads(path.read_text())
    where = f"{record['device']}, {record['data']}, width {record['width']}, batch {record['batch']}"
    if not (record["real_cifar10"] and record["device"].startswith("cuda")):
        return [{**missing, "note": f"not measured: the last speed run used {where}; "
                                     "94 % needs real CIFAR-10 on a GPU"}]
    reached = [t for t, acc in zip(record["seconds"], record["test_accuracy"]) if acc >= 0.94]
    if reached:
        return [{**missing, "value": reached[0], "note": f"first epoch at ≥ 94 % (no test-time augmentation); {where}"}]
    if record["tta_accuracy"] >= 0.94:
        return [{**missing, "value": record["seconds"][-1],
                 "note": f"94 % reached with test-time augmentation after the last epoch; {where}"}]
    return [{**missing, "note": f"94 % not reached: {record['tta_accuracy']:.1%} with TTA after "
                                 f"{record['epochs']} epochs ({record['seconds'][-1]:.0f} s); {where}"}]


# ----------------------------------------------------------------------------------------

def device_name() -> str:
    from course import env

    if env.torch_cuda_usable():
        import torch

        return "cuda-" + torch.cuda.get_device_name(0)
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"cpu-{os.cpu_count()}cores-{cpu}"


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()[:80]


def format_value(value, unit) -> str:
    if value is None:
        return "—"
    if unit == "s":
        from course.timing import format_seconds

        return format_seconds(value)
    return f"{value:,.3g} {unit}".strip()


def to_markdown(results: dict, device: str, quick: bool) -> str:
    lines = [f"# Course benchmarks on {device}", "",
             f"{time.strftime('%Y-%m-%d %H:%M')} · {'quick sizes (--quick)' if quick else 'full sizes'} · "
             "median ± half the interquartile range; ratios are of medians measured in the same run.", ""]
    for name, outcome in results.items():
        lines += [f"## {name}", ""]
        if isinstance(outcome, str):
            lines += [outcome, ""]
            continue
        lines += ["| measurement | value | spread | note |", "|---|---|---|---|"]
        for r in outcome:
            spread = "" if r["spread"] is None else "± " + format_value(r["spread"] / 2, r["unit"])
            lines.append(f"| {r['name']} | {format_value(r['value'], r['unit'])} | {spread} | {r['note']} |")
        lines.append("")
    return "\n".join(lines)


def main(argv=None) -> int:
    global QUICK
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small sizes: proves the tool runs (CI)")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "bench")
    parser.add_argument("--only", nargs="*", help="run only sections whose name contains one of these words")
    args = parser.parse_args(argv)
    QUICK = args.quick

    from course import env

    gpu = env.cupy_usable() and env.torch_cuda_usable()
    device = device_name()
    print(f"benchmarks on {device} ({'GPU' if gpu else 'no GPU: GPU sections are skipped'})", flush=True)
    results, failed = {}, []
    for name, (fn, gpu_only) in SECTIONS.items():
        if args.only and not any(word.lower() in name.lower() for word in args.only):
            continue
        if gpu_only and not gpu:
            results[name] = "skipped: needs a CUDA GPU with CuPy (run `make gpu-check` on one)."
            continue
        started = time.perf_counter()
        try:
            results[name] = fn()
        except Exception as error:  # one broken section must not hide the others
            failed.append(name)
            results[name] = f"FAILED: {type(error).__name__}: {error}"
            traceback.print_exc()
        print(f"  {name}: {time.perf_counter() - started:.1f} s", flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    stem = args.out / slug(device)
    markdown = to_markdown(results, device, QUICK)
    stem.with_suffix(".md").write_text(markdown, encoding="utf-8")
    stem.with_suffix(".json").write_text(json.dumps(
        {"device": device, "quick": QUICK, "gpu": gpu, "sections": results}, indent=1), encoding="utf-8")
    print(markdown)
    print(f"wrote {stem.with_suffix('.md')} and {stem.with_suffix('.json')}")
    if failed:
        print(f"failed sections: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
