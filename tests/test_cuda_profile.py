"""kernel.profile end to end: the CPU backend records every access and branch, and the model
gives the answers PMPP, CS149 and NVIDIA's best-practices guide give for the classic cases."""

import numpy as np
import pytest

from course import cuda
from course.cuda import transactions as tx
from course.cuda.errors import KernelError

STRIDED = r'''
extern "C" __global__ void strided(const float* a, float* out, int n, int s) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[(long long)i * s % n];
}
extern "C" __global__ void strided_double(const double* a, double* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = a[i];
}
extern "C" __global__ void broadcast(const float* a, float* out) {
    out[blockIdx.x * blockDim.x + threadIdx.x] = a[0];
}
extern "C" __global__ void copy4(const float4* a, float4* out, int n4) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) out[i] = a[i];
}
'''

TRANSPOSES = r'''
#define TILE 32
extern "C" __global__ void naive(const float* a, float* b, int n) {
    int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += 8)
        b[x * n + y + j] = a[(y + j) * n + x];
}
#ifndef PAD
#define PAD 0
#endif
extern "C" __global__ void tiled(const float* a, float* b, int n) {   // -DPAD=1: the padded tile
    __shared__ float t[TILE][TILE + PAD];
    int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += 8) t[threadIdx.y + j][threadIdx.x] = a[(y + j) * n + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += 8) b[(y + j) * n + x] = t[threadIdx.x][threadIdx.y + j];
}
'''

BRANCHES = r'''
extern "C" __global__ void by_lane(float* x) {
    if (threadIdx.x % 2) x[threadIdx.x] *= 2.0f;
}
extern "C" __global__ void by_warp(float* x) {
    if (threadIdx.x / 32 == 1) x[threadIdx.x] += 1.0f;
    else x[threadIdx.x] -= 1.0f;
}
'''


def profile_of(source, name, grid, block, args, options=(), **kw):
    return cuda.RawKernel(source, name, backend="cpu", options=options).profile(grid, block, args, **kw)


def load_line(p, kind="global load"):
    (stats,) = [s for s in p.lines if s.kind == kind]
    return stats


@pytest.mark.parametrize("stride, sectors", [(1, 4), (2, 8), (4, 16), (8, 32), (32, 32)])
def test_sectors_per_request_of_a_stride(stride, sectors):
    n = 4096
    a, out = np.arange(n, dtype=np.float32), np.zeros(n, np.float32)
    p = profile_of(STRIDED, "strided", (n // 256,), (256,), (a, out, np.int32(n), np.int32(stride)))
    assert load_line(p).sectors_per_request == sectors
    assert load_line(p).ideal_sectors_per_request == 4
    assert load_line(p, "global store").sectors_per_request == 4
    np.testing.assert_array_equal(out, a[(np.arange(n) * stride) % n])  # the launch ran for real
    assert p.counters()["sectors per request (global loads)"] == sectors
    assert p.lines[0].line == 4 and "a[(long long)i * s % n]" in p.source_lines[4]


def test_double_unit_stride_broadcast_and_float4():
    n = 2048
    p = profile_of(STRIDED, "strided_double", (n // 256,), (256,), (np.ones(n), np.zeros(n), np.int32(n)))
    assert load_line(p).sectors_per_request == 8
    p = profile_of(STRIDED, "broadcast", (4,), (256,), (np.ones(1, np.float32), np.zeros(1024, np.float32)))
    assert load_line(p).sectors_per_request == 1
    x = np.arange(4 * n, dtype=np.float32)
    y = np.zeros_like(x)
    p = profile_of(STRIDED, "copy4", (n // 256,), (256,), (x, y, np.int32(n)))
    assert load_line(p).sectors_per_request == 16 and load_line(p).requests == n // 32
    np.testing.assert_array_equal(x, y)


def test_transpose_ladder():
    n = 128
    a = np.arange(n * n, dtype=np.float32)
    common = dict(grid=(n // 32, n // 32), block=(32, 8))
    b = np.zeros_like(a)
    naive = profile_of(TRANSPOSES, "naive", args=(a, b, np.int32(n)), **common)
    np.testing.assert_array_equal(b.reshape(n, n), a.reshape(n, n).T)
    assert load_line(naive).sectors_per_request == 4
    assert load_line(naive, "global store").sectors_per_request == 32

    b[:] = 0
    tiled = profile_of(TRANSPOSES, "tiled", args=(a, b, np.int32(n)), **common)
    np.testing.assert_array_equal(b.reshape(n, n), a.reshape(n, n).T)
    assert load_line(tiled, "global store").sectors_per_request == 4
    column = load_line(tiled, "shared load")
    assert column.conflict_ways == 32 and column.bank_conflicts == 31 * column.requests
    assert load_line(tiled, "shared store").bank_conflicts == 0
    assert tiled.shared_bytes == 32 * 32 * 4
    assert tiled.counters()["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] == column.bank_conflicts

    padded = profile_of(TRANSPOSES, "tiled", args=(a, b, np.int32(n)), options=("-DPAD=1",), **common)
    assert all(s.bank_conflicts == 0 for s in padded.lines if s.kind.startswith("shared"))
    assert padded.shared_bytes == 32 * 33 * 4
    assert padded.unique_bytes == 2 * a.nbytes


def test_divergence_by_lane_and_by_warp():
    x = np.ones(256, np.float32)
    lane = profile_of(BRANCHES, "by_lane", (1,), (256,), (x,))
    (b,) = lane.divergence
    assert b.line == 3 and b.warp_executions == 8 and b.divergent_fraction == 1.0
    warp = profile_of(BRANCHES, "by_warp", (1,), (256,), (x,))
    (b,) = warp.divergence
    assert b.warp_executions == 8 and b.divergent == 0
    np.testing.assert_array_equal(x[:64], np.r_[np.tile([0, 1], 16), np.tile([2, 3], 16)])  # ×2 odd, then ∓1


def test_global_and_shared_atomics_and_two_dimensional_blocks():
    source = r'''
extern "C" __global__ void hist(const int* v, int* bins, int n) {
    __shared__ int local[8];
    int t = threadIdx.y * blockDim.x + threadIdx.x;
    if (t < 8) local[t] = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x * blockDim.y + t;
    if (i < n) atomicAdd(&local[v[i] % 8], 1);
    __syncthreads();
    if (t < 8) atomicAdd(&bins[t], local[t]);
}'''
    v = np.arange(512, dtype=np.int32)
    bins = np.zeros(8, np.int32)
    p = profile_of(source, "hist", (4,), (16, 8), (v, bins, np.int32(512)))
    np.testing.assert_array_equal(bins, np.full(8, 64))
    atomics = p.trace[p.trace["kind"] == tx.GLOBAL_ATOMIC]
    assert len(atomics) == 4 * 8 and set(atomics["lane"].tolist()) == set(range(8))
    assert set(p.trace["warp"].tolist()) == {0, 1, 2, 3}  # 128 threads of a 16×8 block: 4 warps
    assert (p.trace["array"][np.isin(p.trace["kind"], tx.SHARED_KINDS)] == 0).all()
    (shared_atomics,) = [s for s in p.lines if s.kind == "shared atomic"]
    assert shared_atomics.requests == 4 * 4 and shared_atomics.line == 8  # 4 warps × 4 blocks
    assert p.counters()["smsp__inst_executed_op_shared_atom.sum"] == 16
    assert p.argument_index("bins") == 1 and p.bases[1] % 512 == 0


def test_module_function_and_template_instances_profile():
    module = cuda.RawModule(code=r'''
template <int S>
__global__ void gather(const float* a, float* out) { out[threadIdx.x] = a[threadIdx.x * S]; }''',
                            name_expressions=["gather<1>", "gather<32>"], backend="cpu")
    a = np.ones(32 * 32, np.float32)
    one = module.get_function("gather<1>").profile(1, 32, (a, np.zeros(32, np.float32)))
    wide = module.get_function("gather<32>").profile(1, 32, (a, np.zeros(32, np.float32)))
    assert load_line(one).sectors_per_request == 4 and load_line(wide).sectors_per_request == 32


def test_conditions_the_tracer_leaves_as_written_still_compile_and_run():
    source = r'''
template <bool B> __device__ float pick(float x) { if constexpr (B) return x; else return -x; }
extern "C" __global__ void k(const float* a, float* out, int n) {
    int i = threadIdx.x;
    if (const bool inside = i < n) out[i] = pick<true>(a[i]);
    if (i == 0) { if (n > 1) out[0] += 0.0f; }
}'''
    a = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    p = profile_of(source, "k", 1, 8, (a, out, np.int32(8)))
    np.testing.assert_array_equal(out, a)
    assert [b.line for b in p.divergence] == [6]  # `if constexpr` and a declaring condition: not wrapped


def test_bugs_still_caught_while_profiling_and_limits_are_clear():
    race = r'''
extern "C" __global__ void sum(const float* a, float* out) {
    __shared__ float s[64];
    s[threadIdx.x] = a[threadIdx.x];
    out[threadIdx.x] = s[63 - threadIdx.x];
}'''
    with pytest.raises(KernelError, match="__syncthreads"):
        profile_of(race, "sum", 1, 64, (np.ones(64, np.float32), np.zeros(64, np.float32)))
    with pytest.raises(ValueError, match="profile a smaller launch"):
        profile_of(STRIDED, "broadcast", (64,), (256,), (np.ones(1, np.float32), np.zeros(64 * 256, np.float32)),
                   max_accesses=1000)


def test_profile_views_and_occupancy():
    n = 64
    a = np.arange(n * n, dtype=np.float32)
    p = profile_of(TRANSPOSES, "tiled", (n // 32, n // 32), (32, 8), (a, np.zeros_like(a), np.int32(n)),
                   options=("-DPAD=1",), flops=0)
    d = p.to_dict()
    assert d["kernel"] == "tiled" and d["shared_bytes"] == 4224 and "not a measurement" in d["model"]
    assert p.occupancy("T4").occupancy == 1.0
    assert "bank conflicts" in repr(p)
    req = p.warp_accesses(p.lines[0].line, "global load")
    assert len(req) == 32
