"""course.cuda's sanitizer on correct kernels that synchronise in the ways real code does (probe 24):
ping-pong buffers with one barrier a step, a chained scan whose blocks wait on the previous block's flag,
warp-aggregated atomics, cooperative groups' reduce, a __syncthreads_or loop, a shared queue filled through
atomicAdd, the CUDA guide's last-block sum (__threadfence + atomicInc; libcu++'s cuda::atomic_thread_fence, with
a __grid_constant__ parameter and __maxnreg__), a radix split with
__syncthreads_count, a register-tiled matmul, per-warp histograms, a block scan made of warp shuffles,
barriers and shuffles inside functors, CUTLASS's shared storage bound
by reference, and handovers between blocks: a queue's tail counter, a flag waited for with atomicCAS, a cuda::atomic_ref
flag with release and acquire orders, cuda::atomic and cuda::std::atomic flags beside a __shared__ cuda::atomic, a handover relayed through a second block's flag, and PMPP's
register-tiled 3-D stencil (which stores unset values into shared elements that no thread reads).
Each runs sanitized (racecheck, initcheck, memcheck: no report) and plain on every worker thread, and
gives the right answer both ways.
"""

import numpy as np
import pytest

import course.cuda as cuda

f32, i32 = np.float32, np.int32

PINGPONG = r"""
extern "C" __global__ void jacobi(const float* x, float* y, int iters) {
    __shared__ float buf[2][66];
    int t = threadIdx.x + 1;
    buf[0][t] = x[threadIdx.x];
    if (threadIdx.x == 0) { buf[0][0] = buf[1][0] = 0.0f; buf[0][65] = buf[1][65] = 0.0f; }
    __syncthreads();
    int cur = 0;
    for (int k = 0; k < iters; k++) {
        buf[1 - cur][t] = 0.5f * (buf[cur][t - 1] + buf[cur][t + 1]);
        __syncthreads();
        cur = 1 - cur;
    }
    y[threadIdx.x] = buf[cur][t];
}
"""

CHAINED = r"""
extern "C" __global__ void chained(const int* x, int* out, int* sums, volatile int* flags) {
    __shared__ int s[64];
    __shared__ int carry;
    int t = threadIdx.x, b = blockIdx.x;
    s[t] = x[b * 64 + t];
    __syncthreads();
    for (int off = 1; off < 64; off *= 2) {
        int v = t >= off ? s[t - off] : 0;
        __syncthreads();
        s[t] += v;
        __syncthreads();
    }
    if (t == 0) {
        int prev = 0;
        if (b > 0) {
            while (flags[b - 1] == 0) { }
            __threadfence();
            prev = sums[b - 1];
        }
        carry = prev;
        sums[b] = prev + s[63];
        __threadfence();
        flags[b] = 1;
    }
    __syncthreads();
    out[b * 64 + t] = s[t] + carry;
}
"""

WAGG = r"""
extern "C" __global__ void compact(const float* x, float* out, int* count, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    bool keep = i < n && x[i] > 0.5f;
    unsigned mask = __ballot_sync(0xffffffff, keep);
    int lane = threadIdx.x & 31, leader = __ffs(mask) - 1;
    int base = 0;
    if (lane == leader) base = atomicAdd(count, __popc(mask));
    base = __shfl_sync(0xffffffff, base, leader < 0 ? 0 : leader);
    if (keep) out[base + __popc(mask & ((1u << lane) - 1))] = x[i];
}
"""

CGRED = r"""
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
extern "C" __global__ void k(const float* x, float* out) {
    cg::thread_block block = cg::this_thread_block();
    auto tile = cg::tiled_partition<32>(block);
    float v = cg::reduce(tile, x[block.thread_rank()], cg::plus<float>());
    __shared__ float partial[2];
    if (tile.thread_rank() == 0) partial[tile.meta_group_rank()] = v;
    block.sync();
    if (block.thread_rank() == 0) out[0] = partial[0] + partial[1];
}
"""

SYNCOR = r"""
extern "C" __global__ void k(int* v) {
    __shared__ int s[64];
    int t = threadIdx.x;
    s[t] = v[t];
    __syncthreads();
    int changed = 1;
    while (__syncthreads_or(changed)) {
        changed = 0;
        int left = t > 0 ? s[t - 1] : 0;
        __syncthreads();
        if (left > s[t]) { s[t] = left; changed = 1; }
    }
    v[t] = s[t];
}
"""

QUEUE = r"""
extern "C" __global__ void k(const int* x, int* out) {
    __shared__ int q[64];
    __shared__ int tail;
    if (threadIdx.x == 0) tail = 0;
    __syncthreads();
    int v = x[threadIdx.x];
    if (v % 2 == 0) q[atomicAdd(&tail, 1)] = v;
    __syncthreads();
    if (threadIdx.x < tail) atomicAdd(out, q[threadIdx.x]);
}
"""

LASTBLOCK = r"""
__device__ unsigned int count = 0;
extern "C" __global__ void sum(const float* x, float* partial, float* total) {
    __shared__ bool isLast;
    __shared__ float s[64];
    int t = threadIdx.x;
    s[t] = x[blockIdx.x * 64 + t];
    __syncthreads();
    for (int k = 32; k > 0; k >>= 1) { if (t < k) s[t] += s[t + k]; __syncthreads(); }
    if (t == 0) {
        partial[blockIdx.x] = s[0];
        __threadfence();
        unsigned int value = atomicInc(&count, gridDim.x);
        isLast = (value == (gridDim.x - 1));
    }
    __syncthreads();
    if (isLast && t == 0) {
        float acc = 0;
        for (int b = 0; b < gridDim.x; b++) acc += partial[b];
        *total = acc;
        count = 0;
    }
}
"""

RADIX = r"""
extern "C" __global__ void split(const unsigned* x, unsigned* y, int bit) {
    __shared__ unsigned s[64];
    int t = threadIdx.x;
    unsigned v = x[t];
    int zero = ((v >> bit) & 1) == 0;
    int zeros = __syncthreads_count(zero);
    s[t] = zero;
    __syncthreads();
    for (int off = 1; off < 64; off <<= 1) {
        unsigned a = t >= off ? s[t - off] : 0;
        __syncthreads();
        s[t] += a;
        __syncthreads();
    }
    int before = s[t] - zero;
    int pos = zero ? before : zeros + t - before;
    y[pos] = v;
}
"""

REGTILE = r"""
#define TS 16
extern "C" __global__ void mm(const float* A, const float* B, float* C, int n) {
    __shared__ float As[TS][TS], Bs[TS][TS];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TS + ty * 2, col = blockIdx.x * TS + tx;
    float c0 = 0, c1 = 0;
    for (int k0 = 0; k0 < n; k0 += TS) {
        As[ty * 2][tx] = A[row * n + k0 + tx];
        As[ty * 2 + 1][tx] = A[(row + 1) * n + k0 + tx];
        Bs[ty * 2][tx] = B[(k0 + ty * 2) * n + col];
        Bs[ty * 2 + 1][tx] = B[(k0 + ty * 2 + 1) * n + col];
        __syncthreads();
        for (int k = 0; k < TS; k++) { c0 += As[ty * 2][k] * Bs[k][tx]; c1 += As[ty * 2 + 1][k] * Bs[k][tx]; }
        __syncthreads();
    }
    C[row * n + col] = c0; C[(row + 1) * n + col] = c1;
}
"""

WARPHIST = r"""
extern "C" __global__ void hist(const unsigned char* x, unsigned* h, int n) {
    __shared__ unsigned sh[2][16];
    int w = threadIdx.x / 32;
    if (threadIdx.x < 32) sh[threadIdx.x / 16][threadIdx.x % 16] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&sh[w][x[i] % 16], 1u);
    __syncthreads();
    if (threadIdx.x < 16) atomicAdd(&h[threadIdx.x], sh[0][threadIdx.x] + sh[1][threadIdx.x]);
}
"""

SHFLSCAN = r"""
extern "C" __global__ void scan(const int* x, int* y) {
    __shared__ int warp_sums[4];
    int t = threadIdx.x, lane = t & 31, w = t >> 5;
    int v = x[t];
    for (int o = 1; o < 32; o <<= 1) { int u = __shfl_up_sync(0xffffffff, v, o); if (lane >= o) v += u; }
    if (lane == 31) warp_sums[w] = v;
    __syncthreads();
    if (w == 0) {
        int s = lane < 4 ? warp_sums[lane] : 0;
        for (int o = 1; o < 4; o <<= 1) { int u = __shfl_up_sync(0xffffffff, s, o); if (lane >= o) s += u; }
        if (lane < 4) warp_sums[lane] = s;
    }
    __syncthreads();
    if (w > 0) v += warp_sums[w - 1];
    y[t] = v;
}
"""


COUNTER_QUEUE = r"""
extern "C" __global__ void k(float* items, int* tail, float* out) {
    if (threadIdx.x != 0) return;
    int b = blockIdx.x;
    if (b < 2) {
        items[b] = 10.0f + b;
        __threadfence();
        atomicAdd(tail, 1);
    } else {
        while (atomicAdd(tail, 0) < 2) { }
        __threadfence();
        out[0] = items[0] + items[1];
    }
}
"""

CAS_FLAG = r"""
extern "C" __global__ void k(float* data, int* flag, float* out) {
    if (threadIdx.x != 0) return;
    if (blockIdx.x == 0) { data[0] = 5.0f; __threadfence(); atomicExch(flag, 1); }
    else { while (atomicCAS(flag, 1, 1) != 1) { } __threadfence(); out[0] = data[0]; }
}
"""

ATOMIC_REF_FLAG = r"""
#include <cuda/atomic>
extern "C" __global__ void k(float* data, int* flag, float* out) {
    if (threadIdx.x != 0) return;
    cuda::atomic_ref<int, cuda::thread_scope_device> f(*flag);
    if (blockIdx.x == 0) { data[0] = 5.0f; f.store(1, cuda::memory_order_release); }
    else { while (f.load(cuda::memory_order_acquire) == 0) { } out[0] = data[0]; }
}
"""

# libcu++'s atomic objects: a __device__ cuda::atomic flag (and, with `cuda::std::atomic`, of system scope), and a
# __shared__ block-scope counter that every thread adds to with `+=` (an atomic, not a plain read and write).
ATOMIC_OBJECT_FLAG = r"""
#include <cuda/atomic>
__device__ cuda::atomic<int, cuda::thread_scope_device> flag;
__device__ cuda::std::atomic<int> done;
extern "C" __global__ void k(float* data, float* out, int* count) {
    __shared__ cuda::atomic<int, cuda::thread_scope_block> in_block;
    if (threadIdx.x == 0) in_block.store(0, cuda::memory_order_relaxed);
    __syncthreads();
    in_block += 2;
    __syncthreads();
    if (threadIdx.x != 0) return;
    atomicAdd(count, (int)in_block);
    if (blockIdx.x == 0) { data[0] = 5.0f; flag.store(1, cuda::memory_order_release); }
    else if (blockIdx.x == 1) { while (flag.load(cuda::memory_order_acquire) == 0) { } data[1] = data[0] + 1.0f; done = 1; }
    else { while (done.load() == 0) { } out[0] = data[1]; }
}
"""

# A barrier and a shuffle inside operators: calls that do not name them (`Bar{}()`, `WarpSum{}(v)`) once made the
# kernel run without fibers ("did not see it in the source"); and CUTLASS's shared storage, a struct over
# extern __shared__ memory bound by reference (binding reads nothing: it was a race on the whole struct).
FUNCTORS = r"""
struct Bar { __device__ void operator()() const { __syncthreads(); } };
struct WarpSum {
    __device__ float operator()(float v) const {
        for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
        return v;
    }
};
struct Storage { float a[64]; };
extern "C" __global__ void k(const float* x, float* out, float* sums) {
    extern __shared__ float smem[];
    auto& st = *reinterpret_cast<Storage*>(smem);
    Storage& same = *(Storage*)smem;
    int t = threadIdx.x;
    st.a[t] = x[t];
    Bar{}();
    out[t] = same.a[63 - t];
    float v = WarpSum{}(x[t]);
    if (t % 32 == 0) sums[t / 32] = v;
}
"""

RELAY = r"""
extern "C" __global__ void k(float* data, volatile int* flags, float* out) {
    if (threadIdx.x != 0) return;
    if (blockIdx.x == 0) { data[0] = 7.0f; __threadfence(); flags[0] = 1; }
    else if (blockIdx.x == 1) { while (flags[0] == 0) { } __threadfence(); flags[1] = 1; }
    else { while (flags[1] == 0) { } __threadfence(); out[0] = data[0]; }
}
"""

# PMPP's register-tiled 3-D stencil (coarsened along z): a thread past the grid's edge never sets inNext, and
# stores it into the shared plane all the same, at an element that no thread then reads.
STENCIL3D = r"""
#define IN_TILE_DIM 8
#define OUT_TILE_DIM 6
extern "C" __global__ void stencil3d(const float* in, float* out, unsigned int N, float c0, float c1, float c2, float c3, float c4, float c5, float c6) {
    int iStart = blockIdx.z * OUT_TILE_DIM;
    int j = blockIdx.y * OUT_TILE_DIM + threadIdx.y - 1;
    int k = blockIdx.x * OUT_TILE_DIM + threadIdx.x - 1;
    float inPrev;
    __shared__ float inCurr_s[IN_TILE_DIM][IN_TILE_DIM];
    float inCurr;
    float inNext;
    if (iStart - 1 >= 0 && iStart - 1 < N && j >= 0 && j < N && k >= 0 && k < N)
        inPrev = in[(iStart - 1) * N * N + j * N + k];
    if (iStart >= 0 && iStart < N && j >= 0 && j < N && k >= 0 && k < N) {
        inCurr = in[iStart * N * N + j * N + k];
        inCurr_s[threadIdx.y][threadIdx.x] = inCurr;
    }
    for (int i = iStart; i < iStart + OUT_TILE_DIM; ++i) {
        if (i + 1 >= 0 && i + 1 < N && j >= 0 && j < N && k >= 0 && k < N)
            inNext = in[(i + 1) * N * N + j * N + k];
        __syncthreads();
        if (i >= 1 && i < N - 1 && j >= 1 && j < N - 1 && k >= 1 && k < N - 1) {
            if (threadIdx.y >= 1 && threadIdx.y < IN_TILE_DIM - 1 && threadIdx.x >= 1 && threadIdx.x < IN_TILE_DIM - 1) {
                out[i * N * N + j * N + k] = c0 * inCurr + c1 * inCurr_s[threadIdx.y][threadIdx.x - 1]
                    + c2 * inCurr_s[threadIdx.y][threadIdx.x + 1] + c3 * inCurr_s[threadIdx.y + 1][threadIdx.x]
                    + c4 * inCurr_s[threadIdx.y - 1][threadIdx.x] + c5 * inPrev + c6 * inNext;
            }
        }
        __syncthreads();
        inPrev = inCurr;
        inCurr = inNext;
        inCurr_s[threadIdx.y][threadIdx.x] = inNext;
    }
}
"""


def stencil3d_reference(a, c):
    out = np.zeros_like(a)
    out[1:-1, 1:-1, 1:-1] = (c[0] * a[1:-1, 1:-1, 1:-1] + c[1] * a[1:-1, 1:-1, :-2] + c[2] * a[1:-1, 1:-1, 2:]
                             + c[3] * a[1:-1, 2:, 1:-1] + c[4] * a[1:-1, :-2, 1:-1] + c[5] * a[:-2, 1:-1, 1:-1]
                             + c[6] * a[2:, 1:-1, 1:-1])
    return out


STENCIL_TAPS = tuple(f32(c) for c in (0.4, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1))



def jacobi_reference(x, steps):
    v = np.concatenate([[0], x, [0]]).astype(f32)
    for _ in range(steps):
        v = np.concatenate([[0], f32(0.5) * (v[:-2] + v[2:]), [0]]).astype(f32)
    return v[1:-1]


def radix_reference(x):
    return np.concatenate([x[(x & 1) == 0], x[(x & 1) == 1]])


def compacted(args):
    x, out, count = args[0], args[1], args[2][0]
    return count == (x > 0.5).sum() and np.array_equal(np.sort(out[:count]), np.sort(x[x > 0.5]))


rng = np.random.default_rng(24)
# A struct whose member is a reference to an array (`float (&s)[64];`), bound to a __shared__ array and to a local
# one (it did not compile: a __shared__ or local array is a checked view here; red team 12-07)
ARRAY_REFS = r"""
struct Buf { float (&s)[64]; __device__ void put(float v) { s[threadIdx.x] = v; } };
struct Acc { float (&r)[4]; __device__ float sum() const { return r[0] + r[1] + r[2] + r[3]; } };
extern "C" __global__ void k(const float* x, float* out) {
    __shared__ float buf[64];
    Buf b{buf};
    b.put(x[threadIdx.x]);
    __syncthreads();
    float regs[4] = {buf[63 - threadIdx.x], 1.0f, 2.0f, 3.0f};
    Acc a{regs};
    out[threadIdx.x] = a.sum();
}
"""

CASES = {
    "ping-pong buffers, one barrier a step": (
        PINGPONG, "jacobi", 1, 64, lambda: (rng.random(64, f32), np.zeros(64, f32), i32(5)),
        lambda a: np.allclose(a[1], jacobi_reference(a[0], 5))),
    "chained scan: each block waits for the previous block's flag": (
        CHAINED, "chained", 4, 64, lambda: (np.arange(256, dtype=i32) % 7, np.zeros(256, i32), np.zeros(4, i32),
                                            np.zeros(4, i32)),
        lambda a: np.array_equal(a[1], np.cumsum(a[0]))),
    "warp-aggregated atomics": (
        WAGG, "compact", 2, 64, lambda: (rng.random(128, f32), np.zeros(128, f32), np.zeros(1, i32), i32(128)), compacted),
    "cooperative groups reduce": (
        CGRED, "k", 1, 64, lambda: (rng.random(64, f32), np.zeros(1, f32)),
        lambda a: np.isclose(a[1][0], a[0].sum(), rtol=1e-5)),
    "__syncthreads_or loop": (
        SYNCOR, "k", 1, 64, lambda: ((np.arange(64) * 37 % 11).astype(i32),),
        lambda a: np.array_equal(a[0], np.maximum.accumulate(np.arange(64) * 37 % 11))),
    "shared queue filled through atomicAdd": (
        QUEUE, "k", 1, 64, lambda: (np.arange(64, dtype=i32), np.zeros(1, i32)),
        lambda a: a[1][0] == np.arange(0, 64, 2).sum()),
    "the CUDA guide's last-block sum": (
        LASTBLOCK, "sum", 4, 64, lambda: (rng.random(256, f32), np.zeros(4, f32), np.zeros(1, f32)),
        lambda a: np.isclose(a[2][0], a[0].sum(), rtol=1e-5) and np.allclose(a[1], a[0].reshape(4, 64).sum(1))),
    "the last-block sum with libcu++'s cuda::atomic_thread_fence and a __grid_constant__ count": (
        "#include <cuda/atomic>\n" + LASTBLOCK.replace(
            "__threadfence();", "cuda::atomic_thread_fence(cuda::memory_order_seq_cst, cuda::thread_scope_device);"
        ).replace("__global__ void sum(", "__global__ void __maxnreg__(64) sum(const __grid_constant__ int n, "
        ).replace("blockIdx.x * 64", "blockIdx.x * n"), "sum", 4, 64,
        lambda: (i32(64), rng.random(256, f32), np.zeros(4, f32), np.zeros(1, f32)),
        lambda a: np.isclose(a[3][0], a[1].sum(), rtol=1e-5)),
    "radix split with __syncthreads_count": (
        RADIX, "split", 1, 64, lambda: ((np.arange(64) * 2654435761 % 1000).astype(np.uint32), np.zeros(64, np.uint32),
                                        i32(0)),
        lambda a: np.array_equal(a[1], radix_reference(a[0]))),
    "register-tiled matmul": (
        REGTILE, "mm", (2, 2), (16, 8), lambda: (rng.random(1024, f32), rng.random(1024, f32), np.zeros(1024, f32),
                                                 i32(32)),
        lambda a: np.allclose(a[2].reshape(32, 32), a[0].reshape(32, 32) @ a[1].reshape(32, 32), rtol=1e-4)),
    "per-warp shared histograms": (
        WARPHIST, "hist", 2, 64, lambda: ((np.arange(1000) % 16).astype(np.uint8), np.zeros(16, np.uint32), i32(1000)),
        lambda a: np.array_equal(a[1], np.bincount(a[0] % 16, minlength=16))),
    "block scan from warp shuffles": (
        SHFLSCAN, "scan", 1, 128, lambda: (np.arange(128, dtype=i32), np.zeros(128, i32)),
        lambda a: np.array_equal(a[1], np.cumsum(a[0]))),
    "a queue's items handed over through its tail counter": (
        COUNTER_QUEUE, "k", 3, 32, lambda: (np.zeros(2, f32), np.zeros(1, i32), np.zeros(1, f32)), lambda a: a[2][0] == 21),
    "a flag waited for with atomicCAS": (
        CAS_FLAG, "k", 2, 32, lambda: (np.zeros(1, f32), np.zeros(1, i32), np.zeros(1, f32)), lambda a: a[2][0] == 5),
    "a cuda::atomic_ref flag, release and acquire": (
        ATOMIC_REF_FLAG, "k", 2, 32, lambda: (np.zeros(1, f32), np.zeros(1, i32), np.zeros(1, f32)), lambda a: a[2][0] == 5),
    "cuda::atomic and cuda::std::atomic flags and a __shared__ cuda::atomic counter": (
        ATOMIC_OBJECT_FLAG, "k", 3, 32, lambda: (np.zeros(2, f32), np.zeros(1, f32), np.zeros(1, i32)),
        lambda a: a[1][0] == 6 and a[2][0] == 3 * 64),
    "a barrier and a shuffle in functors, and shared storage bound by reference": (
        FUNCTORS, "k", 1, 64, lambda: (np.arange(64, dtype=f32), np.zeros(64, f32), np.zeros(2, f32)),
        lambda a: np.array_equal(a[1], a[0][::-1]) and np.allclose(a[2], a[0].reshape(2, 32).sum(1))),
    "PMPP's register-tiled 3-D stencil, unset values stored where no thread reads": (
        STENCIL3D, "stencil3d", (3, 3, 3), (8, 8, 1),
        lambda: (rng.random((14, 14, 14), f32), np.zeros((14, 14, 14), f32), np.uint32(14), *STENCIL_TAPS),
        lambda a: np.allclose(a[1], stencil3d_reference(a[0], STENCIL_TAPS), atol=1e-5)),
    "a struct's reference-to-array members bound to a __shared__ and a local array": (
        ARRAY_REFS, "k", 1, 64, lambda: (np.arange(64, dtype=f32), np.zeros(64, f32)),
        lambda a: np.array_equal(a[1], a[0][::-1] + 6)),
    "a handover relayed through a second block's flag": (
        RELAY, "k", 3, 32, lambda: (np.zeros(1, f32), np.zeros(2, i32), np.zeros(1, f32)), lambda a: a[2][0] == 7),
}


@pytest.mark.parametrize("sanitize", [True, False], ids=["sanitized", "plain"])
@pytest.mark.parametrize("name", list(CASES))
def test_a_correct_kernel_is_not_reported_and_is_right(name, sanitize):
    source, kernel, grid, block, make, right = CASES[name]
    args = make()
    cuda.RawKernel(source, kernel, backend="cpu", sanitize=sanitize)(grid, block, args,
                                                                     shared_mem=256 if source is FUNCTORS else 0)
    assert right(args)


def test_the_shared_storage_bound_by_reference_is_race_checked_where_it_is_used():
    """The twin of the functors' case without its barrier: the race is on the storage's element, at the read."""
    source = FUNCTORS.replace("    Bar{}();\n", "")
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory smem\[\d+\]: thread \(\d+, 0, 0\) read it at "
                                               r"line 16") as info:  # (through `same`, the store through `st`)
        cuda.RawKernel(source, "k", backend="cpu", sanitize=True)(1, 64, (np.arange(64, dtype=f32), np.zeros(64, f32),
                                                                          np.zeros(2, f32)), shared_mem=256)
    assert info.value.line == 15
