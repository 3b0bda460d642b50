"""course.cuda's sanitizer on kernels written the way learners write them (probe 22): each bug
beside its fixed twin. The buggy one raises KernelError naming the array and the kind of bug; the
fixed one raises nothing (no false alarm), and its results are checked.

The bugs: a warp-synchronous reduction tail without __syncwarp, an in-place Hillis-Steele scan, a
transpose that reads its tile before the barrier, every thread storing the block's result, a
grid-stride loop to `<= n`, a shared counter read before the barrier, a reused tile without the
second barrier, a shared histogram with `++`, a shared cache filled only in part, a stencil without
its halo guard, a shared cache smaller than the row, a shuffle whose mask leaves out lanes that call
it, a global total reset inside the kernel, overlapping carves of extern __shared__ memory, a loop to
blockDim.x over a tile of 16, an in-place shift, an early return before the barrier, `counter++` on
a __device__ variable, a shared total set without a barrier, a shared struct read before the barrier,
__syncwarp() between warps, a barrier in a loop whose trip count
differs between threads (and a neighbour exchanged in such a loop), a vector's last tile loaded past its end,
a filter tap indexed one past its window, a compaction indexed by an inclusive scan, a batch per block
along y that nothing checks, a queue appended to by hand (in global and in shared memory), a barrier in a grid-stride loop and in a block-stride while loop, a local array written to `<= 5`, an accumulator never given a value, a race
through a __shared__ pointer passed to a helper, a shared union reused without a barrier, a 3-D block
indexed without z, a shared atomic accumulator never set, __constant__ taps read past their end, a
shared total kept inside a spin lock whose holder releases it without a fence, a resampling kernel that
guards its output index but reads through another one, a __device__ counter that every thread resets, and a
row copied with memcpy one float too long (each block's call reaching into the next row).
"""

import re
import warnings

import numpy as np
import pytest

import course.cuda as cuda

f32, i32 = np.float32, np.int32


def zeros(n, dtype=f32):
    return np.zeros(n, dtype)


def rand(n):
    return np.random.default_rng(n).random(n).astype(f32)


CASES = {}


def case(name, template, bug, fix, kernel, grid, block, args, expect, check=None, shared=0):
    """`template % bug` is the learner's kernel, `template % fix` the fixed one; `expect`: regular
    expressions the buggy kernel's message must match; `check(args)`: the fixed kernel's results."""
    CASES[name] = dict(template=template, bug=bug, fix=fix, kernel=kernel, grid=grid, block=block, args=args,
                       expect=expect, check=check, shared=shared)


WARP_TAIL = r"""
extern "C" __global__ void red(const float* x, float* out) {
    __shared__ float s[64];
    int t = threadIdx.x;
    s[t] = x[blockIdx.x * 64 + t];
    __syncthreads();
    if (t < 32) {
        s[t] += s[t + 32]; %s
        if (t < 16) s[t] += s[t + 16]; %s
        if (t < 8) s[t] += s[t + 8]; %s
        if (t < 4) s[t] += s[t + 4]; %s
        if (t < 2) s[t] += s[t + 2]; %s
        if (t < 1) s[t] += s[t + 1];
    }
    if (t == 0) out[blockIdx.x] = s[0];
}"""
case("warp tail without __syncwarp", WARP_TAIL, ("",) * 5, ("__syncwarp();",) * 5, "red", 2, 64,
     lambda: (rand(128), zeros(2)), [r"data race on shared memory s\[\d+\]", r"__syncwarp\(\)"],
     lambda a: np.allclose(a[1], a[0].reshape(2, 64).sum(1), rtol=1e-5))

SCAN = r"""
extern "C" __global__ void scan(const float* x, float* y, int n) {
    __shared__ float t[128];
    int i = threadIdx.x;
    t[i] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int off = 1; off < 128; off *= 2) {
        %s
        __syncthreads();
    }
    if (i < n) y[i] = t[i];
}"""
case("in-place Hillis-Steele scan", SCAN, "if (i >= off) t[i] += t[i - off];",
     "float v = i >= off ? t[i - off] : 0.0f; __syncthreads(); t[i] += v;", "scan", 1, 128,
     lambda: (rand(100), zeros(100), i32(100)), [r"data race on shared memory t\[\d+\]", r"same pass through the loop"],
     lambda a: np.allclose(a[1], np.cumsum(a[0]), rtol=1e-5))

TRANSPOSE = r"""
#define T 16
extern "C" __global__ void tr(const float* a, float* b, int n) {
    __shared__ float tile[T][T + 1];
    int x = blockIdx.x * T + threadIdx.x, y = blockIdx.y * T + threadIdx.y;
    if (x < n && y < n) tile[threadIdx.y][threadIdx.x] = a[y * n + x];
    %s
    x = blockIdx.y * T + threadIdx.x; y = blockIdx.x * T + threadIdx.y;
    if (x < n && y < n) b[y * n + x] = tile[threadIdx.x][threadIdx.y];
}"""
case("transpose reads its tile before the barrier", TRANSPOSE, "", "__syncthreads();", "tr", (2, 2), (16, 16),
     lambda: (rand(32 * 32), zeros(32 * 32), i32(32)), [r"data race on shared memory tile\[\d+\]\[\d+\]"],
     lambda a: np.array_equal(a[1].reshape(32, 32), a[0].reshape(32, 32).T))
case("transpose of a ragged matrix", TRANSPOSE, None, "__syncthreads();", "tr", (2, 2), (16, 16),
     lambda: (rand(20 * 20), zeros(20 * 20), i32(20)), [],
     lambda a: np.array_equal(a[1].reshape(20, 20), a[0].reshape(20, 20).T))

BLOCK_SUM = r"""
extern "C" __global__ void bsum(const float* x, float* out, int n) {
    __shared__ float s[256];
    int t = threadIdx.x, i = blockIdx.x * 256 + t;
    s[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int k = 128; k > 0; k >>= 1) { if (t < k) s[t] += s[t + k]; __syncthreads(); }
    %s
}"""
case("every thread stores the block's result", BLOCK_SUM, "out[blockIdx.x] = s[t];",
     "if (t == 0) out[blockIdx.x] = s[0];", "bsum", 2, 256, lambda: (rand(512), zeros(2), i32(512)),
     [r"writes out\[0\], which thread \(\d+, 0, 0\) also wrote", r"without an atomic"],
     lambda a: np.allclose(a[1], a[0].reshape(2, 256).sum(1), rtol=1e-5))

GRID_STRIDE = r"""
extern "C" __global__ void scale(float* x, float a, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i %s n; i += blockDim.x * gridDim.x) x[i] *= a;
}"""
case("grid-stride loop to <= n", GRID_STRIDE, "<=", "<", "scale", 4, 64, lambda: (np.ones(1000, f32), f32(2), i32(1000)),
     [r"x\[1000\], but x has 1000 elements"], lambda a: (a[0] == 2).all())

COUNT = r"""
extern "C" __global__ void compact(const float* x, int* total, int n) {
    __shared__ int count;
    if (threadIdx.x == 0) count = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] > 0.5f) atomicAdd(&count, 1);
    %s
    if (threadIdx.x == 0) atomicAdd(total, count);
}"""
case("shared counter read before the barrier", COUNT, "", "__syncthreads();", "compact", 2, 128,
     lambda: (rand(256), zeros(1, i32), i32(256)), [r"data race on shared memory count", r"atomically updates"],
     lambda a: a[1][0] == (a[0] > 0.5).sum())

TILE_REUSE = r"""
extern "C" __global__ void conv(const float* x, float* y, int n) {
    __shared__ float tile[64];
    int t = threadIdx.x;
    float acc = 0.0f;
    for (int base = 0; base < n; base += 64) {
        tile[t] = x[base + t];
        __syncthreads();
        acc += tile[(t + 1) %% 64];
        %s
    }
    y[t] = acc;
}"""
case("reused tile without the second barrier", TILE_REUSE, "", "__syncthreads();", "conv", 1, 64,
     lambda: (rand(256), zeros(64), i32(256)), [r"data race on shared memory tile\[\d+\]", r"end of the loop"],
     lambda a: np.allclose(a[1], np.roll(a[0].reshape(4, 64), -1, axis=1).sum(0), rtol=1e-5))

HISTOGRAM = r"""
extern "C" __global__ void hist(const unsigned char* x, unsigned* h, int n) {
    __shared__ unsigned s[16];
    if (threadIdx.x < 16) s[threadIdx.x] = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) %s;
    __syncthreads();
    if (threadIdx.x < 16) atomicAdd(&h[threadIdx.x], s[threadIdx.x]);
}"""
case("shared histogram with ++", HISTOGRAM, "s[x[i] % 16]++", "atomicAdd(&s[x[i] % 16], 1u)", "hist", 2, 64,
     lambda: ((np.arange(128) % 16).astype(np.uint8), zeros(16, np.uint32), i32(128)),
     [r"data race on shared memory s\[\d+\]"], lambda a: (a[1] == 8).all())

HISTOGRAM_BINS = r"""
extern "C" __global__ void hist(const unsigned char* x, unsigned* h, int n) {
    __shared__ unsigned bins[16];
    %s
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&bins[x[i] %% 16], 1u);
    __syncthreads();
    if (threadIdx.x < 16) atomicAdd(&h[threadIdx.x], bins[threadIdx.x]);
}"""
case("shared bins never set to zero", HISTOGRAM_BINS, "",
     "for (int k = threadIdx.x; k < 16; k += blockDim.x) bins[k] = 0; __syncthreads();", "hist", 2, 64,
     lambda: ((np.arange(128) % 16).astype(np.uint8), zeros(16, np.uint32), i32(128)),
     [r"reads shared memory bins\[\d+\], which no thread", r"atomicAdd starts from the value the element holds",
      r"for \(int k = threadIdx.x; k < 16; k \+= blockDim.x\) bins\[k\] = 0;"], lambda a: (a[1] == 8).all())

BLOCK_COUNTER = r"""
extern "C" __global__ void count_positive(const float* x, unsigned* total, int n) {
    __shared__ unsigned count;
    %s
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] > 0.0f) atomicAdd(&count, 1u);
    __syncthreads();
    if (threadIdx.x == 0) atomicAdd(total, count);
}"""
case("shared counter never set to zero", BLOCK_COUNTER, "", "if (threadIdx.x == 0) count = 0; __syncthreads();",
     "count_positive", 2, 64, lambda: ((np.arange(128) % 4 - 1.5).astype(f32), zeros(1, np.uint32), i32(128)),
     [r"reads shared memory count, which no thread", r"atomicAdd starts from the value `count` holds",
      r"`if \(threadIdx.x == 0\) count = 0;` then __syncthreads\(\)"], lambda a: a[1][0] == 64)

EDGE_TILES = r"""
#define TILE 8
extern "C" __global__ void mm(const float* A, const float* B, float* C, int n) {
    __shared__ float As[TILE][TILE], Bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < (n + TILE - 1) / TILE; ++t) {
        int ax = t * TILE + threadIdx.x, by = t * TILE + threadIdx.y;
        %s
        __syncthreads();
        for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < n && col < n) C[row * n + col] = acc;
}"""
_EDGE_A, _EDGE_B = np.random.default_rng(3).random((2, 12, 12)).astype(f32)
case("tiled matmul whose edge tiles are loaded only inside the matrix", EDGE_TILES,
     "if (row < n && ax < n) As[threadIdx.y][threadIdx.x] = A[row * n + ax];\n"
     "        if (by < n && col < n) Bs[threadIdx.y][threadIdx.x] = B[by * n + col];",
     "As[threadIdx.y][threadIdx.x] = row < n && ax < n ? A[row * n + ax] : 0.0f;\n"
     "        Bs[threadIdx.y][threadIdx.x] = by < n && col < n ? B[by * n + col] : 0.0f;", "mm", (2, 2), (8, 8),
     lambda: (_EDGE_A.copy(), _EDGE_B.copy(), zeros((12, 12)), i32(12)),
     [r"reads shared memory (As|Bs)\[\d+\]\[\d+\], which no thread", r"Where the if at line \d+ is false the "
      r"element gets no value, yet it is read", r"0 for a tile past the matrix's edge"],
     lambda a: np.allclose(a[2], a[0] @ a[1], rtol=1e-5))

PARTIAL_INIT = r"""
extern "C" __global__ void k(const float* w, const float* x, float* y, int n) {
    __shared__ float sw[128];
    for (int j = threadIdx.x; j < %s; j += blockDim.x) sw[j] = w[j];
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * sw[i %% 128];
}"""
case("shared cache filled in part", PARTIAL_INIT, "64", "128", "k", 4, 32, lambda: (rand(128), rand(128), zeros(128), i32(128)),
     [r"reads shared memory sw\[64\], which no thread of block \(2, 0, 0\) has written"],
     lambda a: np.allclose(a[2], a[1] * a[0]))

HALO = r"""
extern "C" __global__ void blur(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (%s) y[i] = (x[i - 1] + x[i] + x[i + 1]) / 3.0f;
}"""
case("stencil without its halo guard", HALO, "i < n", "i > 0 && i < n - 1", "blur", 2, 64,
     lambda: (rand(128), zeros(128), i32(128)), [r"x\[-1\], but x has 128 elements"],
     lambda a: np.allclose(a[1][1:-1], (a[0][:-2] + a[0][1:-1] + a[0][2:]) / 3, rtol=1e-5))

MATVEC = r"""
extern "C" __global__ void mv(const float* A, const float* x, float* y, int rows, int cols) {
    __shared__ float xs[64];
    for (int j = threadIdx.x; j < cols; j += blockDim.x) xs[j] = x[j];
    __syncthreads();
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) { float s = 0; for (int j = 0; j < cols; j++) s += A[r * cols + j] * xs[j]; y[r] = s; }
}%s"""
case("shared cache smaller than the row", MATVEC, "", None, "mv", 1, 32,
     lambda: (rand(32 * 80), rand(80), zeros(32), i32(32), i32(80)), [r"xs\[64\], but .*xs has 64 elements"])
case("shared cache that holds the row", MATVEC, None, "", "mv", 1, 32,
     lambda: (rand(32 * 60), rand(60), zeros(32), i32(32), i32(60)), [],
     lambda a: np.allclose(a[2], a[0].reshape(32, 60) @ a[1], rtol=1e-4))

SHUFFLE = r"""
extern "C" __global__ void ws(const float* x, float* out) {
    float v = x[threadIdx.x];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(%s, v, o);
    if (threadIdx.x == 0) out[0] = v;
}"""
case("shuffle with half a mask", SHUFFLE, "0x0000ffffu", "0xffffffffu", "ws", 1, 32, lambda: (rand(32), zeros(1)),
     [r"__shfl_down_sync at line 4 with mask 0x0000ffff, which does not name its own lane 16"],
     lambda a: np.isclose(a[1][0], a[0].sum(), rtol=1e-5))

RESET = r"""
extern "C" __global__ void s(const float* x, float* total, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    %s
    if (i < n) atomicAdd(total, x[i]);
}"""
case("total reset inside the kernel", RESET, "if (threadIdx.x == 0) *total = 0.0f;", "", "s", 4, 64,
     lambda: (rand(256), zeros(1), i32(256)), [r"atomically updates total\[0\], which thread \(0, 0, 0\) wrote",
                                               r"before the launch"],
     lambda a: np.isclose(a[1][0], a[0].sum(), rtol=1e-5))

CARVE = r"""
extern "C" __global__ void two(const float* a, const int* b, float* o, int n) {
    extern __shared__ char smem[];
    float* fa = (float*)smem;
    int* ib = (int*)(smem + %s);
    int t = threadIdx.x;
    fa[t] = a[t]; ib[t] = b[t];
    __syncthreads();
    o[t] = fa[(t + 1) %% n] + ib[(t + 1) %% n];
}"""
case("overlapping carves of extern __shared__", CARVE, "n * sizeof(int) / 2", "n * sizeof(float)", "two", 1, 32,
     lambda: (rand(32), np.arange(32, dtype=i32), zeros(32), i32(32)), [r"data race on shared memory smem\["],
     lambda a: np.allclose(a[2], np.roll(a[0], -1) + np.roll(a[1], -1)), shared=256)

TILE_LOOP = r"""
#define TILE 16
extern "C" __global__ void dot(const float* a, const float* b, float* o) {
    __shared__ float ta[TILE], tb[TILE];
    int t = threadIdx.x;
    if (t < TILE) { ta[t] = a[t]; tb[t] = b[t]; }
    __syncthreads();
    if (t == 0) { float s = 0; for (int k = 0; k < %s; k++) s += ta[k] * tb[k]; o[0] = s; }
}"""
case("loop to blockDim.x over a tile of 16", TILE_LOOP, "blockDim.x", "TILE", "dot", 1, 32,
     lambda: (rand(16), rand(16), zeros(1)), [r"ta\[16\], but .*ta has 16 elements"],
     lambda a: np.isclose(a[2][0], a[0] @ a[1], rtol=1e-5))

SHIFT = r"""
extern "C" __global__ void shift(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    %s
}"""
case("in-place shift", SHIFT, "if (i + 1 < n) x[i + 1] = x[i];", "if (i < n) x[i] = 2.0f * x[i];", "shift", 2, 64,
     lambda: (np.arange(128, dtype=f32), i32(128)), [r"x\[\d+\]"], lambda a: (a[0] == 2 * np.arange(128)).all())

EARLY = r"""
extern "C" __global__ void k(const float* x, float* y, int n) {
    __shared__ float s[64];
    int i = blockIdx.x * 64 + threadIdx.x;
    %s
    s[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    if (i < n) y[i] = s[63 - threadIdx.x];
}"""
case("early return before the barrier", EARLY, "if (i >= n) return;", "", "k", 2, 64,
     lambda: (rand(100), zeros(100), i32(100)), [r"no thread of block \(1, 0, 0\) has written", r"returned at line 5"],
     lambda a: np.array_equal(a[1][:64], a[0][:64][::-1]))

DEVICE_COUNTER = r"""
__device__ int counter;
extern "C" __global__ void k(const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] > 0.5f) %s;
}"""
case("counter++ on a __device__ variable", DEVICE_COUNTER, "counter++", "atomicAdd(&counter, 1)", "k", 2, 64,
     lambda: (rand(128), i32(128)), [r"updates counter \(reads it and writes it back\)", r"atomicAdd\(&counter"])

SHARED_TOTAL = r"""
extern "C" __global__ void k(const float* x, float* out) {
    __shared__ float total;
    if (threadIdx.x == 0) total = 0.0f;
    %s
    atomicAdd(&total, x[threadIdx.x]);
    __syncthreads();
    if (threadIdx.x == 0) out[blockIdx.x] = total;
}"""
case("shared total set without a barrier", SHARED_TOTAL, "", "__syncthreads();", "k", 1, 64,
     lambda: (rand(64), zeros(1)), [r"shared memory total"], lambda a: np.isclose(a[1][0], a[0].sum(), rtol=1e-5))

SHARED_STRUCT = r"""
struct Params { float scale; int count; };
extern "C" __global__ void k(const float* x, float* y) {
    __shared__ Params p;
    if (threadIdx.x == 0) { p.scale = x[0]; p.count = 3; }
    %s
    y[threadIdx.x] = p.scale * p.count;
}"""
case("shared struct read before the barrier", SHARED_STRUCT, "", "__syncthreads();", "k", 1, 32,
     lambda: (rand(32), zeros(32)), [r"data race on shared memory p\.(scale|count)"],
     lambda a: np.allclose(a[1], 3 * a[0][0]))

ACROSS_WARPS = r"""
extern "C" __global__ void k(const float* x, float* y) {
    __shared__ float s[64];
    int t = threadIdx.x;
    s[t] = x[t];
    %s
    y[t] = s[63 - t];
}"""
case("__syncwarp between warps", ACROSS_WARPS, "__syncwarp();", "__syncthreads();", "k", 1, 64,
     lambda: (rand(64), zeros(64)), [r"data race on shared memory s\[\d+\]", r"in different warps"],
     lambda a: np.array_equal(a[1], a[0][::-1]))

DIVERGENT_LOOP = r"""
extern "C" __global__ void k(const int* len, float* y) {
    __shared__ float s[32];
    int t = threadIdx.x;
    s[t] = 0.0f;
    for (int j = 0; j < %s; j++) { s[t] += 1.0f; __syncthreads(); }
    y[t] = s[t];
}"""
case("barrier in a loop whose trip count differs", DIVERGENT_LOOP, "len[t]", "len[0]", "k", 1, 32,
     lambda: ((np.arange(32) % 3 + 1).astype(i32), zeros(32)), [r"__syncthreads\(\) at line 6 is not reached by every thread"],
     lambda a: (a[1] == a[0][0]).all())

EXCHANGE_LOOP = r"""
extern "C" __global__ void k(const int* len, float* y) {
    __shared__ float s[64];
    float acc = 0.0f;
    for (int r = 0; r < %s; r++) {
        s[threadIdx.x] = acc + r;
        __syncthreads();
        acc += s[(threadIdx.x + 1) %% 64];
    }
    y[threadIdx.x] = acc;
}"""
case("a neighbour exchanged in a loop whose trip count differs", EXCHANGE_LOOP, "len[threadIdx.x]", "len[0]", "k", 1, 64,
     lambda: (np.r_[1, 3, np.arange(62) % 3 + 1].astype(i32), zeros(64)),
     [r"data race on shared memory s\[\d+\]", r"The loop at line 5 runs a number of times that depends on the thread "
      r"\(`r < len\[threadIdx\.x\]`\), so a barrier inside it is not reached by every thread the same number of times"])

VECTOR_TILES = r"""
#define T 32
extern "C" __global__ void matvec(const float* A, const float* x, float* y, int n) {
    __shared__ float xs[T];
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < (n + T - 1) / T; t++) {
        xs[threadIdx.x] = %s;
        __syncthreads();
        for (int k = 0; k < T; k++)
            if (row < n && t * T + k < n) acc += A[row * n + t * T + k] * xs[k];
        __syncthreads();
    }
    if (row < n) y[row] = acc;
}"""
case("a vector's last tile loaded past its end", VECTOR_TILES, "x[t * T + threadIdx.x]",
     "t * T + threadIdx.x < n ? x[t * T + threadIdx.x] : 0.0f", "matvec", 4, 32,
     lambda: (rand(100 * 100), rand(100), zeros(100), i32(100)),
     [r"accessed x\[100\]", r"loads the tile xs from x, T elements at a time, and the last tile reaches past the end of x",
      r"`xs\[threadIdx\.x\] = \(t \* T \+ threadIdx\.x < n\) \? x\[t \* T \+ threadIdx\.x\] : 0\.0f;`"],
     lambda a: np.allclose(a[2], a[0].reshape(100, 100) @ a[1], rtol=1e-4))

WINDOW_TAP = r"""
#define R 1
#define MW (2 * R + 1)
__constant__ float M[MW * MW] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
extern "C" __global__ void conv(const float* in, float* out, int w, int h) {
    int col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y * blockDim.y + threadIdx.y;
    if (col >= w || row >= h) return;
    float acc = 0.0f;
    for (int i = -R; i <= R; i++)
        for (int j = -R; j <= R; j++) {
            int r = row + i, c = col + j;
            if (r >= 0 && r < h && c >= 0 && c < w) acc += in[r * w + c] * M[%s];
        }
    out[row * w + col] = acc;
}"""
case("a filter tap indexed one past the window", WINDOW_TAP, "(i + R) * MW + (j + R) + 1", "(i + R) * MW + (j + R)",
     "conv", (2, 2), (16, 16), lambda: (np.ones(32 * 32, f32), zeros(32 * 32), i32(32), i32(32)),
     [r"accessed M\[9\]", r"the window's offsets run from -R to R \(line 10\), so `\(i \+ R\) \* MW \+ \(j \+ R\)` "
      r"reaches every element already, 0 to 8, and the `\+ 1` at the end takes the last tap outside"],
     lambda a: a[1].reshape(32, 32)[1:-1, 1:-1].min() == 9 and a[1].reshape(32, 32)[0, 0] == 4)

COMPACT = r"""
extern "C" __global__ void compact(const float* in, const int* keep, const int* scan, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && keep[i]) out[%s] = in[i];
}"""
_KEEP = (np.arange(256) % 3 != 0).astype(i32)
case("a compaction indexed by an inclusive scan", COMPACT, "scan[i]", "scan[i] - 1", "compact", 2, 128,
     lambda: (rand(256), _KEEP, np.cumsum(_KEEP).astype(i32), zeros(int(_KEEP.sum())), i32(256)),
     [r"accessed out\[170\]", r"if scan is an inclusive prefix sum .* Use `scan\[i\] - 1`, or an exclusive scan"],
     lambda a: np.array_equal(a[3], a[0][a[1] == 1]))

BATCHED = r"""
extern "C" __global__ void scale(const float* x, float* y, int n, int batch) {
    int b = blockIdx.y;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (%s) y[b * n + i] = 2.0f * x[b * n + i];
}"""
case("a batch per block along y that nothing checks", BATCHED, "i < n", "b < batch && i < n", "scale", (1, 5), 64,
     lambda: (rand(4 * 64), zeros(4 * 64), i32(64), i32(4)),
     [r"accessed x\[256\]", r"`b` is blockIdx\.y \(the block's place along y: a batch, a row\), and nothing checks it: "
      r"check it too, `if \(b < batch && i < n\)` \(batch: the kernel's parameter that it never uses\)"],
     lambda a: np.allclose(a[1], 2 * a[0]))

APPEND = r"""
extern "C" __global__ void keep(const int* x, int* out, int* count, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] > 0) {
        %s
    }
}"""
case("a queue appended to by hand", APPEND, "out[*count] = x[i];\n        (*count)++;",
     "out[atomicAdd(count, 1)] = x[i];", "keep", 2, 32,
     lambda: ((np.arange(64) - 10).astype(i32), np.zeros(64, i32), np.zeros(1, i32), i32(64)),
     [r"count\[0\]", r"The threads append to out at the slot `\*count` and then increase it, by hand: two threads read "
      r"the same count.* `int slot = atomicAdd\(count, 1\); out\[slot\] = x\[i\];`"],
     lambda a: a[2][0] == 53 and sorted(a[1][:53]) == list(range(1, 54)))

SHARED_APPEND = r"""
extern "C" __global__ void keep(const int* x, int* out, int n) {
    __shared__ int count;
    __shared__ int local[64];
    if (threadIdx.x == 0) count = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] > 0) {
        %s
    }
    __syncthreads();
    if (threadIdx.x < count) out[threadIdx.x] = local[threadIdx.x];
}"""
case("a shared queue appended to by hand", SHARED_APPEND, "local[count] = x[i];\n        count++;",
     "local[atomicAdd(&count, 1)] = x[i];", "keep", 1, 64, lambda: ((np.arange(64) - 10).astype(i32), np.zeros(64, i32), i32(64)),
     [r"data race on shared memory count", r"The threads append to local at the slot `count` and then increase it, by "
      r"hand.* no barrier can help.* `int slot = atomicAdd\(&count, 1\); local\[slot\] = x\[i\];`"],
     lambda a: sorted(a[1][:53]) == list(range(1, 54)))

TABLE_BY_ONE_THREAD = r"""
extern "C" __global__ void lookup(const float* table_in, const int* keys, float* out) {
    __shared__ float table[16];
    if (threadIdx.x == 0)
        for (int j = 0; j < 16; j++) table[j] = table_in[j];
    %s
    out[blockIdx.x * blockDim.x + threadIdx.x] = table[keys[threadIdx.x]];
}"""
case("a table filled by one thread and read without a barrier", TABLE_BY_ONE_THREAD, "", "__syncthreads();",
     "lookup", 2, 64, lambda: (rand(16), (np.arange(64) * 7 % 16).astype(i32), zeros(128)),
     [r"data race on shared memory table\[\d+\]: thread \(0, 0, 0\) wrote it at line 5",
      r"hint: Add __syncthreads\(\) between line 5, where thread \(0, 0, 0\) writes `table\[\d+\]`, and line 7"],
     lambda a: np.array_equal(a[2], np.tile(a[0][a[1]], 2)))

OWN_CURSOR = r"""
extern "C" __global__ void keep_positive(const int* x, int* out, int* kept) {
    __shared__ int buf[64 * 4];
    int t = threadIdx.x, idx = 0;
    for (int j = 0; j < 4; j++)
        if (x[t * 4 + j] > 0) { buf[%s] = x[t * 4 + j]; idx++; }
    __syncthreads();
    for (int j = 0; j < idx; j++) out[t * 4 + j] = buf[t * 4 + j];
    kept[t] = idx;
}"""
case("a thread's own cursor into a shared buffer", OWN_CURSOR, "idx", "t * 4 + idx", "keep_positive", 1, 64,
     lambda: ((np.arange(256) % 3).astype(i32), np.zeros(256, i32), np.zeros(64, i32)),
     [r"data race on shared memory buf\[0\]", r"hint: `buf\[idx\]` is indexed by `idx`, each thread's own variable "
      r"\(line 4\), which starts at the same number in every thread.* `buf\[threadIdx\.x \* K \+ idx\]`.* "
      r"`buf\[atomicAdd\(&count, 1\)\] = \.\.\.;`"],
     lambda a: all(list(a[1][4 * t:4 * t + a[2][t]]) == [v for v in a[0][4 * t:4 * t + 4] if v > 0] for t in range(64)))

GRID_STRIDE_BARRIER = r"""
extern "C" __global__ void k(const float* x, float* y, int n) {
    __shared__ float s[64];
    %s
        s[threadIdx.x] = i < n ? x[i] : 0.0f;
        __syncthreads();
        if (i < n) y[i] = s[63 - threadIdx.x];
        __syncthreads();
    }
}"""
case("barrier in a grid-stride loop", GRID_STRIDE_BARRIER,
     "for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {",
     "for (int base = blockIdx.x * blockDim.x; base < n; base += blockDim.x * gridDim.x) { int i = base + threadIdx.x;",
     "k", 2, 64, lambda: (rand(300), zeros(300), 300),
     [r"__syncthreads\(\) at line 6 is not reached by every thread", r"The loop at line 4 starts each thread at its own "
      r"index \(`i = blockIdx\.x \* blockDim\.x \+ threadIdx\.x`\)", r"`for \(int base = blockIdx\.x \* blockDim\.x; "
      r"base < n; base \+= blockDim\.x \* gridDim\.x\) \{ int i = base \+ threadIdx\.x; \.\.\. \}`"],
     lambda a: np.array_equal(a[1][:256].reshape(-1, 64), a[0][:256].reshape(-1, 64)[:, ::-1]))

WHILE_BARRIER = r"""
extern "C" __global__ void k(const float* x, float* y, int n) {
    __shared__ float s[64];
    %s
    while (i < n) {
        s[threadIdx.x] = i < n ? x[i] : 0.0f;
        __syncthreads();
        y[i] = s[63 - threadIdx.x];
        __syncthreads();
        i += blockDim.x;
    }
}"""
case("barrier in a block-stride while loop", WHILE_BARRIER, "int i = threadIdx.x;",
     "int i = threadIdx.x; n = (n + 63) / 64 * 64;",  # (the fix goes round whole blocks: x and y are 128 long)
     "k", 1, 64, lambda: (rand(128), zeros(128), 100),
     [r"__syncthreads\(\) at line 7 is not reached by every thread", r"The loop at line 5 starts each thread at its own "
      r"index \(`i = threadIdx\.x`\) and stops at `i < n`", r"`for \(int base = 0; base < n; base \+= blockDim\.x\)"],
     lambda a: np.array_equal(a[1].reshape(2, 64), a[0].reshape(2, 64)[:, ::-1]))

LOCAL_ARRAY = r"""
extern "C" __global__ void k(const float* x, float* y) {
    float w[5];
    for (int j = 0; j %s 5; j++) w[j] = x[j];
    float s = 0;
    for (int j = 0; j < 5; j++) s += w[j];
    y[threadIdx.x] = s;
}"""
case("local array written to <= 5", LOCAL_ARRAY, "<=", "<", "k", 1, 4, lambda: (rand(8), zeros(4)), [r"w\[5\]"],
     lambda a: np.allclose(a[1], a[0][:5].sum(), rtol=1e-5))

ACCUMULATOR = r"""
extern "C" __global__ void k(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float acc%s;
    for (int j = 0; j < 4; j++) acc += x[(i + j) %% n];
    if (i < n) y[i] = acc;
}"""
case("accumulator never given a value", ACCUMULATOR, "", " = 0.0f", "k", 1, 32, lambda: (rand(32), zeros(32), i32(32)),
     [r"stores -1\.69\d*e\+?38 into y\[0\]", r"0xFE"],
     lambda a: np.allclose(a[1], sum(np.roll(a[0], -j) for j in range(4)), rtol=1e-5))


HELPER_POINTER = r"""
__device__ void smooth(float* s, int t) {
    s[t] = s[t] * 0.5f;
    %s
}
extern "C" __global__ void k(const float* x, float* y) {
    __shared__ float s[64];
    s[threadIdx.x] = x[threadIdx.x];
    __syncthreads();
    smooth(s, threadIdx.x);
    __syncthreads();
    y[threadIdx.x] = s[threadIdx.x];
}"""
case("race through a __shared__ pointer passed to a helper", HELPER_POINTER, "if (t + 1 < 64) s[t] += s[t + 1];",
     "__syncthreads(); float right = t + 1 < 64 ? s[t + 1] : 0.0f; __syncthreads(); s[t] += right;", "k", 1, 64,
     lambda: (rand(64), zeros(64)), [r"data race on shared memory s\[\d+\].*in a function called at line 10"],
     lambda a: np.allclose(a[1], 0.5 * a[0] + 0.5 * np.append(a[0][1:], 0), rtol=1e-6))

UNION = r"""
extern "C" __global__ void k(const float* x, int* y) {
    __shared__ union { float f[64]; int i[64]; } u;
    int t = threadIdx.x;
    u.f[t] = x[t];
    __syncthreads();
    float v = u.f[63 - t];
    %s
    u.i[t] = (int)(v * 100.0f);
    __syncthreads();
    y[t] = u.i[63 - t];
}"""
case("union in shared memory reused without a barrier", UNION, "", "__syncthreads();", "k", 1, 64,
     lambda: (rand(64), zeros(64, i32)), [r"data race on shared memory u\.f\[\d+\]"],
     lambda a: np.array_equal(a[1], (a[0] * 100).astype(i32)))

INDEX_3D = r"""
extern "C" __global__ void k(float* y) {
    int idx = threadIdx.x + threadIdx.y * blockDim.x%s;
    y[idx] = (float)(threadIdx.z * 100 + idx);
}"""
case("3-D block indexed without z", INDEX_3D, "", " + threadIdx.z * blockDim.x * blockDim.y", "k", 1, (4, 4, 2),
     lambda: (zeros(32),), [r"writes y\[0\], which thread \(0, 0, 0\) also wrote"],
     lambda a: np.array_equal(a[0], np.arange(32) + 100 * (np.arange(32) // 16)))

SHARED_ACCUMULATOR = r"""
extern "C" __global__ void k(const float* x, float* y) {
    __shared__ float acc;
    %s
    atomicAdd(&acc, x[threadIdx.x]);
    __syncthreads();
    if (threadIdx.x == 0) y[blockIdx.x] = acc;
}"""
case("shared atomic accumulator never set", SHARED_ACCUMULATOR, "", "if (threadIdx.x == 0) acc = 0.0f; __syncthreads();",
     "k", 2, 32, lambda: (rand(32), zeros(2)), [r"reads shared memory acc, which no thread of block \(0, 0, 0\) has written"],
     lambda a: np.allclose(a[1], a[0].sum(), rtol=1e-5))

CONSTANT_TAPS = r"""
__constant__ float w[5] = {1, 2, 3, 2, 1};
extern "C" __global__ void k(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float s = 0;
    for (int j = -2; j <= %s; j++) s += w[j + 2] * x[min(max(i + j, 0), n - 1)];
    y[i] = s;
}"""
case("__constant__ taps read past their end", CONSTANT_TAPS, "3", "2", "k", 1, 32, lambda: (np.ones(32, f32), zeros(32), i32(32)),
     [r"w\[5\], but .*__constant__ array w has 5 elements"], lambda a: (a[1] == 9).all())

SHARED_LOCK = r"""
extern "C" __global__ void k(const int* x, int* out) {
    __shared__ int lock, total;
    if (threadIdx.x == 0) { lock = 0; total = 0; }
    __syncthreads();
    for (bool done = false; !done; ) {
        if (atomicCAS(&lock, 0, 1) == 0) {
            total += x[threadIdx.x];
            %s
            atomicExch(&lock, 0);
            done = true;
        }
    }
    __syncthreads();
    if (threadIdx.x == 0) out[blockIdx.x] = total;
}"""
case("shared total in a lock without a fence", SHARED_LOCK, "", "__threadfence_block();", "k", 2, 64,
     lambda: (np.arange(64, dtype=i32), zeros(2, i32)),
     [r"data race on shared memory total", r"inside a lock .* Put __threadfence_block\(\) before the atomicExch"],
     lambda a: (a[1] == a[0].sum()).all())

SCALED_INDEX = r"""
extern "C" __global__ void resample(const float* x, float* y, int n, float scale) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = (int)(i * scale);
    if (i < n%s) y[i] = x[j];
}"""
case("guard on the output index, not the one read", SCALED_INDEX, "", " && j < n", "resample", 1, 64,
     lambda: (np.arange(64, dtype=f32), zeros(64), i32(64), f32(1.5)),
     [r"accessed x\[64\]", r"The index here is `j`, made at line 4 .* line 5 checks `i`.* Check the index that is used "
                              r"\(`j < n`\)"],
     lambda a: np.array_equal(a[1][:43], np.floor(np.arange(43) * 1.5)))

DEVICE_COUNTER = r"""
__device__ int counter;
extern "C" __global__ void count(const float* x, int* out, int n) {
    %s
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] > 0.5f) atomicAdd(&counter, 1);
    __syncthreads();
    if (i == 0) out[0] = 1;
}"""
case("every thread resets a __device__ counter", DEVICE_COUNTER, "counter = 0;", "", "count", 4, 64,
     lambda: (rand(256), zeros(1, i32), i32(256)),
     [r"writes counter, which thread \(\d+, 0, 0\) updated atomically at line 6", r"Set counter before the launch"],
     lambda a: a[1][0] == 1)


ROW_COPY = r"""
extern "C" __global__ void copy_rows(const float* in, float* out, int w) {
    int r = blockIdx.x;
    memcpy(out + r * w, in + r * w, %s * sizeof(float));
}"""
case("a row copied with one float too many", ROW_COPY, "(w + 1)", "w", "copy_rows", 4, 1,
     lambda: (np.arange(32, dtype=f32), zeros(32), i32(8)),
     [r"writes out\[(8|16|24)\], which thread \(0, 0, 0\) of block \(\d, 0, 0\) also wrote",
      r"memcpy calls write overlapping bytes: each thread's destination .* the count \(the last argument, in bytes"],
     lambda a: np.array_equal(a[1], a[0]))

def launch(c, fill):
    source = c["template"] % fill
    args = c["args"]()
    kernel = cuda.RawKernel(source, c["kernel"], backend="cpu", sanitize=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cuda.KernelWarning)  # (the accumulator's compiler warning)
        kernel(c["grid"], c["block"], args, shared_mem=c["shared"])
    return args


BUGS = [name for name, c in CASES.items() if c["bug"] is not None]
FIXES = [name for name, c in CASES.items() if c["fix"] is not None]


@pytest.mark.parametrize("name", BUGS)
def test_the_bug_is_caught_and_named(name):
    c = CASES[name]
    with pytest.raises(cuda.KernelError) as info:
        launch(c, c["bug"])
    message = str(info.value)
    for pattern in c["expect"]:
        assert re.search(pattern, message), f"{pattern!r} not in:\n{message}"
    assert "hint:" in message or "where:" in message


@pytest.mark.parametrize("name", FIXES)
def test_the_fixed_kernel_raises_nothing_and_is_right(name):
    c = CASES[name]
    args = launch(c, c["fix"])
    if c["check"] is not None:
        assert c["check"](args)


def test_every_bug_has_a_twin():
    # (the ragged transpose and the shared cache that fits are fixed twins of another case's bug)
    assert set(BUGS) - set(FIXES) == {"shared cache smaller than the row"}
    assert len(BUGS) >= 23


HINTED = r"""
extern "C" __global__ void transpose_no_sync(const float* in, float* out, int n) {
    __shared__ float tile[32][33];
    int x = blockIdx.x * 32 + threadIdx.x;
    for (int dy = threadIdx.y; dy < 32; dy += blockDim.y) tile[dy][threadIdx.x] = in[(blockIdx.y * 32 + dy) * n + x];
    int ox = blockIdx.y * 32 + threadIdx.x;
    for (int dy = threadIdx.y; dy < 32; dy += blockDim.y) out[(blockIdx.x * 32 + dy) * n + ox] = tile[threadIdx.x][dy];
}
extern "C" __global__ void transpose_width(const float* in, float* out, int rows, int cols) {
    int orow = blockIdx.x * 16 + threadIdx.y, ocol = blockIdx.y * 16 + threadIdx.x;
    if (orow < cols && ocol < rows) out[orow * cols + ocol] = in[ocol * cols + orow];
}
extern "C" __global__ void conv1d(const float* a, float* out, int n, int k) {
    __shared__ float tile[32 + 7];
    int t = threadIdx.x, i = blockIdx.x * 32 + t;
    tile[t] = (i < n) ? a[i] : 0.0f;
    if (t < k) tile[32 + t] = (i + 32 < n) ? a[i + 32] : 0.0f;
    __syncthreads();
    if (i < n) { float s = 0; for (int j = 0; j < k; ++j) s += tile[t + j]; out[i] = s; }
}
extern "C" __global__ void broadcast(const float* a, const float* b, float* out, int rows, int cols) {
    int c = threadIdx.x, r = threadIdx.y;
    if (r < rows && c < cols) out[r * rows + c] = a[r] + b[c];
}
extern "C" __global__ void compact(const float* a, float* out, int n) {
    __shared__ int s[64];
    int t = threadIdx.x;
    float v = t < n ? a[t] : 0.f;
    int f = (t < n && v > 0.f);
    s[t] = f;
    __syncthreads();
    for (int off = 1; off < 64; off *= 2) {
        int l = t >= off ? s[t - off] : 0;
        __syncthreads();
        s[t] += l;
        __syncthreads();
    }
    if (f) out[s[t]] = v;
}
extern "C" __global__ void stencil(const float* a, float* out, int rows, int cols) {
    __shared__ float t[16][16];
    int x = threadIdx.x, y = threadIdx.y, c = blockIdx.x * 16 + x, r = blockIdx.y * 16 + y;
    t[y][x] = (r < rows && c < cols) ? a[r * cols + c] : 0.f;
    __syncthreads();
    if (r < rows && c < cols) out[r * cols + c] = 4 * t[y][x] - t[y - 1][x] - t[y][x - 1];
}
extern "C" __global__ void axis_sum(const float* a, float* out, int rows, int cols) {
    __shared__ float p[32];
    int t = threadIdx.x, row = blockIdx.x;
    p[t] = 0.f;
    __syncthreads();
    for (int c = t; c < cols; c += 32) { p[t] += a[row * cols + c]; __syncthreads(); }
    if (!t) out[row] = p[0];
}
"""


@pytest.mark.parametrize("kernel, grid, block, args, expect", [
    # the race found is between lanes of one warp, but each tile column is written by every warp
    ("transpose_no_sync", (1, 1), (32, 8), lambda: (rand(1024), zeros(1024), i32(32)),
     r"^(?!.*__syncwarp\(\) is enough).*Add __syncthreads\(\)"),
    # a transpose's output has cols rows of `rows` elements: its index is orow * rows + ocol
    ("transpose_width", (3, 2), (16, 16), lambda: (rand(17 * 33), zeros(17 * 33), i32(17), i32(33)),
     r"If `orow` is the row instead, as in a transpose.s output .* `orow \* rows \+ ocol`"),
    # the guard `t < k` lets one index too many through; the array is not 25 elements short
    ("conv1d", 1, 32, lambda: (rand(64), zeros(64), i32(64), i32(8)),
     r"The guard `t < k` \(line \d+\) lets thread \(7, 0, 0\) through with `t` = 7, and then `32 \+ t` is 39, one past"),
    # both coordinates are guarded: the width in the index is the wrong one
    ("broadcast", 1, (5, 3), lambda: (rand(3), rand(5), zeros(15), i32(3), i32(5)),
     r"both coordinates are guarded already.*`r \* cols \+ c`"),
    # the index is the kernel's own scan in shared memory, not data to check on the host
    ("compact", 1, 64, lambda: (np.ones(1, f32), zeros(1), i32(1)),
     r"is a value the kernel computed into shared memory.*check the computation that fills s"),
    # of `t[y][x] - t[y - 1][x]`, the subscript that faulted
    ("stencil", (1, 1), (16, 16), lambda: (rand(256), zeros(256), i32(16), i32(16)), r"the neighbour `y - 1`"),
    # `for (int c = t; ...)` with t = threadIdx.x: the loop's count differs, no if/else
    ("axis_sum", 2, 32, lambda: (rand(2 * 40), zeros(2), i32(2), i32(40)),
     r"The loop at line \d+ starts each thread at its own index"),
])
def test_hints_that_named_the_wrong_cause(kernel, grid, block, args, expect):
    """Red team 12-06 (puzzles and exercises): each of these hints named a cause the kernel did not have, or a
    fix that did not help (a guard the kernel had, 64 elements for an off-by-one guard, __syncwarp() for a tile
    that every warp shares, the data for an index the kernel computed)."""
    module = cuda.RawModule(code=HINTED, backend="cpu", sanitize=True)
    with pytest.raises(cuda.KernelError) as info:
        module.get_function(kernel)(grid if isinstance(grid, tuple) else (grid,),
                                    block if isinstance(block, tuple) else (block,), args())
    assert re.search(expect, str(info.value).split("hint:", 1)[-1], re.S), str(info.value)


def test_an_atomic_given_the_wrong_number_of_arguments_is_not_told_its_pointer_is_wrong():
    with pytest.raises(cuda.CompileError, match=r"atomicAdd takes 2 arguments, \(address, value\), and this call "
                                                r"gives 3: its pointer to float is fine"):
        cuda.RawKernel('extern "C" __global__ void k(float* b) { atomicAdd(b, 1.0f, 2); }', "k", backend="cpu")(
            (1,), (1,), (zeros(1),))


IN_PLACE = r"""
extern "C" __global__ void reduce_global(float* input, float* output) {
    unsigned int i = 2 * threadIdx.x;
    for (unsigned int stride = 1; stride <= blockDim.x; stride *= 2) {
        if (threadIdx.x % stride == 0) {
            input[i] += input[i + stride];
        }
        FIX1
    }
    if (threadIdx.x == 0) *output = input[0];
}
extern "C" __global__ void scan_global(float* x, int n) {
    int i = threadIdx.x;
    for (int stride = 1; stride < blockDim.x; stride *= 2) {
        __syncthreads();
        float t = 0.0f;
        if (i >= stride) t = x[i - stride];
        FIX2
        if (i >= stride) x[i] += t;
    }
}
"""


@pytest.mark.parametrize("fixed", [False, True])
def test_tree_steps_in_place_on_global_memory_are_told_where_the_loops_barrier_goes(fixed):
    """Red team 12-07 (PMPP's kernels): the textbook's first reduction, in place on global memory, without the
    barrier in its loop was told to check its index or use two arrays, and a Kogge-Stone scan in place whose barrier
    sits at the top of the loop was told to put one between its write and the read before it (where one is)."""
    source = IN_PLACE.replace("FIX1", "__syncthreads();" if fixed else "").replace("FIX2", "__syncthreads();" if fixed else "")
    module = cuda.RawModule(code=source, backend="cpu", sanitize=True)
    x = np.random.default_rng(7).integers(0, 10, 256).astype(np.float32)
    data, total = x.copy(), zeros(1)
    hints = []
    for name, args, block in (("reduce_global", (data, total), 128), ("scan_global", (x[:128].copy(), np.int32(128)), 128)):
        try:
            module.get_function(name)((1,), (block,), args)
        except cuda.KernelError as error:
            hints.append(str(error).split("hint:", 1)[-1])
    if fixed:
        assert not hints and total[0] == x.sum()
        return
    reduce_hint, scan_hint = hints
    assert re.search(r"Line 6 runs in a loop \(lines 4 to 9\) with no barrier in it.*put __syncthreads\(\) at the end "
                     r"of the loop's body", reduce_hint, re.S), reduce_hint
    assert re.search(r"Add __syncthreads\(\) between line 17 \(the read\) and line 19 \(the write\).*within one pass",
                     scan_hint, re.S), scan_hint


CONV1D_EARLY_RETURN = r"""
#define MASK_WIDTH 5
#define TILE 64
__constant__ float M[MASK_WIDTH];
extern "C" __global__ void conv(const float* N, float* P, int n) {
    __shared__ float N_ds[TILE + MASK_WIDTH - 1];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int r = MASK_WIDTH / 2;
    if (i >= n) return;
    int left = (blockIdx.x - 1) * blockDim.x + threadIdx.x;
    if (threadIdx.x >= blockDim.x - r)
        N_ds[threadIdx.x - (blockDim.x - r)] = (left < 0) ? 0 : N[left];
    N_ds[r + threadIdx.x] = N[i];
    int right = (blockIdx.x + 1) * blockDim.x + threadIdx.x;
    if (threadIdx.x < r)
        N_ds[r + blockDim.x + threadIdx.x] = (right >= n) ? 0 : N[right];
    __syncthreads();
    float p = 0;
    for (int j = 0; j < MASK_WIDTH; j++) p += N_ds[threadIdx.x + j] * M[j];
    P[i] = p;
}
"""


def test_a_halo_whose_loaders_returned_early_is_told_about_the_return_first():
    """Red team 12-07 (PMPP's tiled 1-D convolution): the kernel loads its halo, but the threads that load the last
    block's left halo returned at `if (i >= n) return;`; the hint explained how to load a halo and named the return
    only at its end."""
    module = cuda.RawModule(code=CONV1D_EARLY_RETURN, backend="cpu", sanitize=True)
    module.get_global("M")[...] = np.array([1, 2, 3, 2, 1], np.float32).view(np.uint8)
    with pytest.raises(cuda.KernelError) as info:
        module.get_function("conv")((16,), (64,), (rand(1000), zeros(1000), i32(1000)))
    hint = str(info.value).split("hint:", 1)[1]
    assert hint.lstrip().startswith("The kernel loads N_ds at lines 12 to 16, after a return: 24 thread(s) of this "
                                    "block (the first is thread (40, 0, 0)) returned at line 9, before the "
                                    "__syncthreads() at line 17"), hint


CONV2D_TILED = r"""
#define FILTER_RADIUS 2
#define IN_TILE_DIM 32
#define OUT_TILE_DIM ((IN_TILE_DIM) - 2*(FILTER_RADIUS))
__constant__ float F_c[2*FILTER_RADIUS+1][2*FILTER_RADIUS+1];
extern "C" __global__ void conv2d(float *N, float *P, int width, int height) {
    int col = blockIdx.x*OUT_TILE_DIM + threadIdx.x - FILTER_RADIUS;
    int row = blockIdx.y*OUT_TILE_DIM + threadIdx.y - FILTER_RADIUS;
    __shared__ float N_s[IN_TILE_DIM][IN_TILE_DIM];
    if (row >= 0 && row < height && col >= 0 && col < width) {
        N_s[threadIdx.y][threadIdx.x] = N[row*width + col];
    } else {
        N_s[threadIdx.y][threadIdx.x] = 0.0;
    }
    __syncthreads();
    int tileCol = threadIdx.x - FILTER_RADIUS;
    int tileRow = threadIdx.y - FILTER_RADIUS;
    if (col >= 0 && col < width && row >= 0 && row < height) {
        if (tileCol >= 0 && tileCol < OUT_TILE_DIM && tileRow >= 0 && tileRow < OUT_TILE_DIM) {  // OUTPUT TILE
            float Pvalue = 0.0f;
            for (int fRow = 0; fRow < 2*FILTER_RADIUS+1; fRow++)
                for (int fCol = 0; fCol < 2*FILTER_RADIUS+1; fCol++)
                    Pvalue += F_c[fRow][fCol]*N_s[tileRow+fRow][tileCol+fCol];
            P[row*width+col] = Pvalue;
        }
    }
}
"""


@pytest.mark.parametrize("bug", [False, True])
def test_a_tiles_output_test_with_less_or_equal_is_named_above_the_loops_that_fault(bug):
    """Red team 12-07 (PMPP's 2-D tiled convolution): `tileCol <= OUT_TILE_DIM` four lines above the read past the
    tile was not seen (the search stopped three lines up), and the hint said to guard the read."""
    source = CONV2D_TILED.replace("tileCol < OUT_TILE_DIM", "tileCol <= OUT_TILE_DIM") if bug else CONV2D_TILED
    module = cuda.RawModule(code=source, backend="cpu", sanitize=True)
    taps = np.random.default_rng(1).random((5, 5)).astype(f32)
    module.get_global("F_c")[...] = taps.view(np.uint8).ravel()
    image, out = np.random.default_rng(2).random((40, 50)).astype(f32), np.zeros((40, 50), f32)
    launch = lambda: module.get_function("conv2d")((2, 2), (32, 32), (image, out, i32(50), i32(40)))
    if not bug:
        launch()
        padded = np.pad(image, 2)
        want = sum(taps[r, c] * padded[r:r + 40, c:c + 50] for r in range(5) for c in range(5))
        np.testing.assert_allclose(out[:28, :28], want[:28, :28], rtol=1e-5)
        return
    with pytest.raises(cuda.KernelError, match=r"(?s)hint: Index 32 is one past the last element, and line 19 compares "
                                               r"with <= \(`tileCol <= OUT_TILE_DIM`\)"):
        launch()
