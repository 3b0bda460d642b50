"""course.cuda: warp-level programming (shuffles, votes, cooperative groups) with real warp
semantics on the CPU backend — the 32 lanes of a warp meet at each call — compared with NumPy,
and the faults a learner makes with them, named by block, thread and line."""

import re
from pathlib import Path

import numpy as np
import pytest

import course.cuda as cuda
from course import env

SOURCE = (Path(__file__).parent / "cuda_kernels" / "warp.cu").read_text()


def line_of(marker: str, source: str = SOURCE) -> int:
    (line,) = [i for i, text in enumerate(source.split("\n"), 1) if f"// {marker}" in text]
    return line


@pytest.fixture(params=["cpu", "cupy"])
def backend(request):
    if request.param == "cupy" and not env.cupy_usable():
        pytest.skip("no usable GPU: CuPy cannot run kernels here (the CPU backend is tested instead)")
    return request.param


def kernel(name, backend="cpu"):
    return cuda.RawKernel(SOURCE, name, backend=backend)


def on(backend, a):
    if backend == "cupy":
        import cupy

        return cupy.asarray(a)
    return np.array(a, copy=True)


LEGACY = r"""
extern "C" __global__ void old_sum(int* x) {
    int v = x[threadIdx.x];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down(v, o);     // PRE-CUDA-9
    unsigned big = __ballot(v > 100);
    if (threadIdx.x == 0) x[0] = v + big;
}
"""
SHIM = "#define __shfl_down(v, o) __shfl_down_sync(0xffffffff, v, o)\n#define __ballot(p) __ballot_sync(0xffffffff, p)\n"


def test_the_warp_functions_without_a_mask_are_refused_as_nvcc_refuses_them_on_sm_70_and_later():
    """__shfl_down(v, o) and __ballot(p) (pre-CUDA 9) do not compile for any GPU since Volta: the CPU
    refuses them too, with the _sync spelling; a source's own shim (#define ... _sync) is fine."""
    with pytest.raises(cuda.CompileError, match=r"(?s)line 4: __shfl_down\(\) has no mask: CUDA 9 replaced it with "
                                                r"__shfl_down_sync\(\).*write __shfl_down_sync\(0xffffffff, \.\.\.\)"
                                                r".*line 5: __ballot\(\) has no mask: CUDA 9 replaced it with "
                                                r"__ballot_sync\(\), and nvcc and NVRTC compile it only with a "
                                                r"deprecation warning"):
        cuda.RawKernel(LEGACY, "old_sum", backend="cpu")((1,), (32,), (np.ones(32, np.int32),))
    x = np.ones(32, np.int32)
    cuda.RawKernel(SHIM + LEGACY, "old_sum", backend="cpu")((1,), (32,), (x,))
    assert x[0] == 32


def test_warp_shuffle_block_sum(backend):
    n, threads = 5000, 256
    x = np.random.default_rng(0).random(n, dtype=np.float32)
    blocks = (n + threads - 1) // threads
    partial = on(backend, np.zeros(blocks, np.float32))
    kernel("warp_shuffle_sum", backend)((blocks,), (threads,), (on(backend, x), partial, n))
    expected = np.pad(x, (0, blocks * threads - n)).reshape(blocks, threads).sum(axis=1)
    np.testing.assert_allclose(cuda.asnumpy(partial), expected, rtol=1e-5)


def test_cooperative_groups_tile_reduction(backend):
    n = 3000
    x = np.random.default_rng(1).integers(-1000, 1000, n, dtype=np.int32)
    total = on(backend, np.zeros(1, np.int32))
    kernel("cg_tile_sum", backend)(((n + 127) // 128,), (128,), (on(backend, x), total, n))
    assert int(cuda.asnumpy(total)[0]) == int(x.sum())


def test_kogge_stone_scan_with_shfl_up(backend):
    n, threads = 1000, 256
    x = np.random.default_rng(2).integers(0, 10, n, dtype=np.int32)
    out = on(backend, np.zeros(n, np.int32))
    kernel("shfl_scan", backend)(((n + threads - 1) // threads,), (threads,), (on(backend, x), out, n))
    padded = np.pad(x, (0, 1024 - n)).reshape(4, threads)
    expected = np.cumsum(padded, axis=1).ravel()[:n]
    np.testing.assert_array_equal(cuda.asnumpy(out), expected)


@pytest.mark.parametrize("width", [32, 16, 8])
def test_xor_butterfly_and_broadcast_with_width(backend, width):
    x = np.arange(64, dtype=np.int32) ** 2
    sums, third = on(backend, np.zeros(64, np.int32)), on(backend, np.zeros(64, np.int32))
    kernel("xor_and_broadcast", backend)((1,), (64,), (on(backend, x), sums, third, width))
    segments = x.reshape(-1, width)
    np.testing.assert_array_equal(cuda.asnumpy(sums), np.repeat(segments.sum(axis=1), width))
    np.testing.assert_array_equal(cuda.asnumpy(third), np.repeat(segments[:, 3], width))


def test_votes_activemask_and_warp_reductions(backend):
    x = np.random.default_rng(3).integers(0, 100, 64, dtype=np.int32)
    x[40] = 150  # warp 1 has a value above 100
    out = on(backend, np.zeros(64 * 8, np.uint32))
    kernel("votes", backend)((1,), (64,), (on(backend, x), out))
    out = cuda.asnumpy(out).reshape(64, 8)
    for warp in range(2):
        xs = x[32 * warp: 32 * warp + 32]
        odd = int(sum(1 << lane for lane in range(32) if xs[lane] & 1))
        rows = out[32 * warp: 32 * warp + 32]
        assert (rows[:, 0] == odd).all()
        assert (rows[:, 1] == int((xs > 100).any())).all() and (rows[:, 2] == 1).all()
        assert (rows[:, 3] == bin(odd).count("1")).all()
        assert (rows[:, 4] == ((odd & -odd).bit_length() if odd else 0)).all()
        assert (rows[:, 5] == 32 - odd.bit_length()).all()
        branch = sum(1 << lane for lane in range(0, 32, 3))
        assert (rows[::3, 6] == branch).all()
        reduced = (int(xs.sum()) + int(xs.max() - 50) - int(xs.min())) % 2**32
        assert (rows[:, 7] == reduced).all()


def test_tiles_of_16_reduce_vote_shuffle_and_ranks(backend):
    x = np.random.default_rng(4).integers(-20, 100, 64, dtype=np.int32)
    out = on(backend, np.zeros(64 * 8, np.int32))
    kernel("tiles16", backend)((1,), (16, 4), (on(backend, x), out))  # a 2-D block
    out = cuda.asnumpy(out).reshape(64, 8)
    tiles = x.reshape(4, 16)
    rank = np.arange(64) % 16
    np.testing.assert_array_equal(out[:, 0], np.repeat(tiles.max(axis=1), 16))
    np.testing.assert_array_equal(out[:, 1], np.repeat(tiles.min(axis=1), 16))
    ballots = [sum(1 << k for k in range(16) if t[k] > 50) for t in tiles]
    np.testing.assert_array_equal(out[:, 2], np.repeat(ballots, 16))
    np.testing.assert_array_equal(out[:, 3], np.repeat((tiles < 0).any(axis=1), 16))
    np.testing.assert_array_equal(out[:, 4], np.repeat((tiles < 90).all(axis=1), 16))
    np.testing.assert_array_equal(out[:, 5], tiles[:, (np.arange(16) + 15) % 16].ravel())
    np.testing.assert_array_equal(out[:, 6], np.arange(64) // 16)
    np.testing.assert_array_equal(out[:, 7], np.arange(64) // 16 * 100 + rank)


def test_match_any_and_coalesced_threads(backend):
    keys = np.array([k % 5 for k in range(32)], dtype=np.int32)
    peers, ranks = on(backend, np.zeros(32, np.uint32)), on(backend, np.zeros(32, np.int32))
    kernel("match_and_coalesce", backend)((1,), (32,), (on(backend, keys), peers, ranks))
    expected = [sum(1 << j for j in range(32) if keys[j] == keys[i]) for i in range(32)]
    np.testing.assert_array_equal(cuda.asnumpy(peers), expected)
    even = np.flatnonzero(keys % 2 == 0)
    expected_ranks = np.full(32, -1)
    expected_ranks[even] = np.arange(even.size) * 100 + even.size
    np.testing.assert_array_equal(cuda.asnumpy(ranks), expected_ranks)


def test_binary_and_labeled_partitions(backend):
    x = ((np.arange(64) * 7) % 23).astype(np.int32)
    sums, sizes = on(backend, np.zeros(2, np.int32)), on(backend, np.zeros(3, np.int32))
    kernel("partitions", backend)((1,), (64,), (on(backend, x), sums, sizes))
    np.testing.assert_array_equal(cuda.asnumpy(sums), [x[x % 2 == 0].sum(), x[x % 2 == 1].sum()])
    np.testing.assert_array_equal(cuda.asnumpy(sizes), [np.sum(x % 3 == r) for r in range(3)])


def test_invoke_one_and_the_grids_ranks(backend):
    counter, slots = on(backend, np.zeros(2, np.int32)), on(backend, np.zeros(4 * 64, np.int32))
    ranks = on(backend, np.zeros(4, np.uint64))
    kernel("one_for_the_warp", backend)((2, 2), (64,), (counter, slots, ranks))
    assert sorted(cuda.asnumpy(slots)) == list(range(256))  # one atomicAdd per warp hands out distinct slots
    np.testing.assert_array_equal(cuda.asnumpy(counter), [256, 8])  # 8 warps, one call each
    np.testing.assert_array_equal(cuda.asnumpy(ranks), [400, 400, 401, 401])


def test_lanes_in_a_branch_meet_among_themselves_then_the_whole_warp_meets(backend):
    x = np.array([(7 * k) % 11 - 4 for k in range(64)], dtype=np.int32)  # 5 to 7 positive lanes per warp
    sums, prefix, top = (on(backend, np.zeros(64, np.int32)) for _ in range(3))
    kernel("branch_groups_then_the_warp", backend)((1,), (64,), (on(backend, x), sums, prefix, top))
    expected_sums, expected_prefix = np.full(64, -1), np.full(64, -1)
    for warp in (slice(0, 32), slice(32, 64)):
        part = x[warp]
        positive = np.flatnonzero(part > 0)
        assert len(positive) & (len(positive) - 1), "the test wants a group whose size is not a power of two"
        base = warp.start
        expected_sums[base + positive] = part[positive].sum() * 100 + 1
        values = part[positive]
        before, after = np.concatenate([[0], values[:-1]]), np.concatenate([values[1:], values[-1:]])
        expected_prefix[base + positive] = before * 1000 + after
    np.testing.assert_array_equal(cuda.asnumpy(sums), expected_sums)
    np.testing.assert_array_equal(cuda.asnumpy(prefix), expected_prefix)
    np.testing.assert_array_equal(cuda.asnumpy(top), np.repeat([x[:32].max(), x[32:].max()], 32))


# ---------------------------------------------------------------------------------------
# Faults (CPU backend)
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("sanitize", [True, False])
def test_shuffle_naming_a_lane_that_returned(sanitize):
    # The lanes that returned bring no value: what the shuffle gives is undefined on a GPU. Used in
    # the sum that is stored, it is reported: at the store with the sanitizer, after the launch
    # (the array that holds it) without.
    x = np.ones(32, np.float32)
    with pytest.raises(cuda.KernelError) as info:
        cuda.RawKernel(SOURCE, "shuffle_after_return", backend="cpu", sanitize=sanitize)(
            (1,), (32,), (x, np.zeros(1, np.float32), 20))
    message = str(info.value)
    assert (f"at line {line_of('WARP-SUM')}, thread (4, 0, 0) read lane 20 (thread (20, 0, 0)) with "
            f"__shfl_down_sync, which returned at line {line_of('BUG: the shuffles read from these lanes')}") in message
    assert info.value.kernel == "shuffle_after_return" and info.value.block == (0, 0, 0)
    if sanitize:
        assert "stores a value computed from an undefined one" in message
        assert info.value.line == line_of("STORE: the sum holds what lanes 20 to 31 did not bring")
        assert info.value.thread == (0, 0, 0)
    else:
        assert "left out[0] holding a value computed from an undefined one" in message
        assert info.value.thread == (4, 0, 0)  # lane 4 reads lane 4 + 16 first
        assert info.value.line == line_of("WARP-SUM")  # (the store is not seen: the shuffle's line)
    assert "guard only the work" in message


def test_a_result_that_depends_on_a_returned_lanes_value_is_caught_without_a_pattern():
    # An int sum or a fmaxf keeps no trace of the pattern a lane that brings nothing gives: the
    # sanitized launch runs again with other bits there, and the results differ.
    x = np.arange(32, dtype=np.int32)
    out = np.zeros(1, np.int32)
    with pytest.raises(cuda.KernelError) as info:
        cuda.RawKernel(SOURCE, "int_sum_after_return", backend="cpu")((1,), (32,), (x, out, 20))
    message = str(info.value)
    assert "left out[0] holding a result that depends on an undefined value" in message
    assert f"at line {line_of('INT-SUM')}" in message and "read lane 2" in message
    assert info.value.line == line_of("INT-SUM")
    assert f"which returned at line {line_of('BUG-INT')}" in message and "guard only the work" in message
    assert out[0] != 0  # the first run's result stays, as after any launch
    with pytest.raises(cuda.KernelError, match=r"left out\[\d+\] holding a result that depends on an undefined"):
        cuda.RawKernel(SOURCE, "max_after_return", backend="cpu")(
            (1,), (32,), (-np.arange(32, dtype=np.float32), np.zeros(32, np.float32), 24))
    cuda.RawKernel(SOURCE, "int_sum_guarded", backend="cpu")((1,), (32,), (x, out, 20))
    assert out[0] == sum(range(20))


def test_a_kernel_that_reads_the_clock_is_not_run_again_to_compare():
    # Its results differ from run to run anyway: the second run would blame the clock's values on
    # the undefined shuffle (whose result this kernel does not use).
    source = r"""
extern "C" __global__ void timed(const int* x, long long* t, int* out) {
    int lane = threadIdx.x;
    long long start = clock64();
    if (lane >= 20) return;
    int v = x[lane];
    v += __shfl_down_sync(0xfffffu, v, 16);  // lanes 4..19 read lanes that returned: unused below
    if (lane < 4) out[lane] = v;
    t[lane] = clock64() - start;
}"""
    x, t, out = np.arange(32, dtype=np.int32), np.zeros(32, np.int64), np.zeros(4, np.int32)
    cuda.RawKernel(source, "timed", backend="cpu", sanitize=True)((1,), (32,), (x, t, out))
    assert list(out) == [16, 18, 20, 22]


@pytest.mark.parametrize("sanitize", [True, False])
def test_votes_and_syncwarp_leave_out_the_lanes_that_returned(sanitize):
    x, out = np.ones(100, np.int32), np.zeros(4, np.int32)
    x[70] = 0
    cuda.RawKernel(SOURCE, "vote_after_return", backend="cpu", sanitize=sanitize)((2,), (64,), (x, out, 100))
    assert list(out) == [1032, 1032, 31, 1004]  # the last warp has 4 lanes that did not return, all positive
    with pytest.raises(cuda.KernelError, match=r"names lane 16 \(thread \(16, 0, 0\)\), but that thread finished the "
                                               r"kernel without reaching the call") as info:
        cuda.RawKernel(SOURCE, "vote_inside_if", backend="cpu", sanitize=sanitize)((1,), (32,), (x, out))
    assert info.value.line == line_of("SKIPPED: lanes 16..31")


def test_tile_sync_reached_by_part_of_the_tile():
    with pytest.raises(cuda.KernelError, match=r"__syncwarp \(or a tile's sync\) at line \d+ with mask 0x0000ffff.*lane 8") as info:
        kernel("tile_sync_by_half")((1,), (32,), (np.zeros(32, np.int32),))
    assert info.value.line == line_of("BUG: half of the tile")


def test_shuffle_while_other_lanes_wait_at_a_barrier():
    with pytest.raises(cuda.KernelError, match=r"waits at __syncthreads\(\) on line \d+") as info:
        kernel("shuffle_versus_barrier")((1,), (32,), (np.zeros(32, np.int32),))
    assert info.value.line == line_of("SHUFFLE")
    assert f"on line {line_of('BARRIER')}" in str(info.value)


def test_mask_that_does_not_name_the_calling_lane():
    with pytest.raises(cuda.KernelError, match=r"does not name its own lane 16") as info:
        kernel("mask_without_me")((1,), (32,), (np.zeros(32, np.int32),))
    assert info.value.thread == (16, 0, 0)


def test_full_mask_in_a_partial_warp():
    x = np.ones(48, np.float32)
    with pytest.raises(cuda.KernelError, match=r"does not exist: the block has 48 threads, so its last warp has 16 lanes") \
            as info:
        kernel("warp_shuffle_sum")((1,), (48,), (x, np.zeros(1, np.float32), 48))
    # The mask the hint builds is the one that works; a full-mask __ballot_sync names the missing lanes too.
    hint = str(info.value).split("hint:")[1]
    assert "__ballot_sync(0xffffffff" not in hint
    mask = re.search(r"`(unsigned lanes = .*?)`", hint).group(1)
    sums = np.zeros(2, np.float32)
    cuda.RawKernel(r'''
    extern "C" __global__ void sums(const float* x, float* out) {
        %s
        float v = x[threadIdx.x];
        for (int o = 16; o > 0; o >>= 1) {
            float w = __shfl_down_sync(mask, v, o);
            if ((threadIdx.x & 31) + o < lanes) v += w;
        }
        if ((threadIdx.x & 31) == 0) out[threadIdx.x / 32] = v;
    }''' % mask, "sums", backend="cpu", sanitize=True)((1,), (48,), (np.arange(48, dtype=np.float32), sums))
    assert sums.tolist() == [sum(range(32)), sum(range(32, 48))]


def test_ordinary_kernels_still_run_as_plain_loops():
    """Warp support costs barrier-free kernels nothing: they still run without fibers."""
    src = 'extern "C" __global__ void add(float* x) { x[threadIdx.x] += 1.0f; }'
    assert not cuda.RawKernel(src, "add", backend="cpu")._kernel.uses_barriers
    assert kernel("votes")._kernel.uses_barriers


@pytest.mark.parametrize("sanitize", [True, False])
def test_a_shuffle_may_read_past_its_mask_if_nothing_uses_the_value(sanitize):
    # A lane outside the mask brings an undefined value. A tree whose out-of-mask reads only reach
    # lanes that lane 0 never reads from, and a guarded use, are correct; NVIDIA's partial-warp
    # sum without the guard is not, and the stored sum says where its undefined part came from.
    src = r'''
    extern "C" __global__ void half_warp_sum(const float* x, float* out) {
        float v = x[threadIdx.x];
        if (threadIdx.x < 16)
            for (int offset = 8; offset > 0; offset /= 2) v += __shfl_down_sync(0x0000ffff, v, offset);
        if (threadIdx.x == 0) out[0] = v;
    }
    extern "C" __global__ void partial_warp_sum(const float* x, float* out, int n, int guard) {
        int lane = threadIdx.x;
        unsigned mask = __ballot_sync(0xffffffff, lane < n);
        if (lane < n) {
            float v = x[lane];
            for (int offset = 16; offset > 0; offset /= 2) {
                float other = __shfl_down_sync(mask, v, offset);  // SHUFFLE
                if (!guard || lane + offset < n) v += other;
            }
            if (lane == 0) out[0] = v;  // SUM
        }
    }'''
    x, out = np.arange(32, dtype=np.float32), np.zeros(1, np.float32)
    run = lambda name, *args: cuda.RawKernel(src, name, backend="cpu", sanitize=sanitize)((1,), (32,), (x, out, *args))
    run("half_warp_sum")
    assert out[0] == x[:16].sum()
    run("partial_warp_sum", 20, 1)
    assert out[0] == x[:20].sum()
    with pytest.raises(cuda.KernelError) as info:
        run("partial_warp_sum", 20, 0)
    message = str(info.value)
    shuffle = line_of("SHUFFLE", src)
    assert (f"at line {shuffle}, thread (4, 0, 0) read lane 20 (thread (20, 0, 0)) with __shfl_down_sync, which the "
            "mask 0x000fffff does not name") in message
    assert "__shfl_down_sync(mask, v, offset, 16)" in message and "if (lane + offset < active)" in message
    if sanitize:
        assert info.value.line == line_of("SUM", src)
    else:
        assert "left out[0] holding" in message


REDUCE6_LAST_WARP = r"""
template <unsigned int blockSize>
__global__ void block_sum(const float* x, float* out, int fixed) {
    __shared__ float sdata[blockSize / 32];
    unsigned int tid = threadIdx.x;
    float mySum = x[blockIdx.x * blockSize + tid];
    for (int offset = warpSize / 2; offset > 0; offset /= 2) mySum += __shfl_down_sync(0xffffffff, mySum, offset);
    if ((tid % warpSize) == 0) sdata[tid / warpSize] = mySum;
    __syncthreads();
    const unsigned int shmem_extent = (blockSize / warpSize) > 0 ? (blockSize / warpSize) : 1;
    const unsigned int ballot_result = __ballot_sync(0xffffffff, tid < shmem_extent);
    if (tid < shmem_extent) {
        mySum = sdata[tid];
        for (int offset = fixed ? shmem_extent / 2 : warpSize / 2; offset > 0; offset /= 2)
            mySum += __shfl_down_sync(ballot_result, mySum, offset);   // LAST WARP
    }
    if (tid == 0) out[blockIdx.x] = mySum;
}
"""


def test_a_last_warp_sum_over_a_ballot_of_the_first_lanes_is_told_to_start_its_offsets_at_half_of_them():
    """NVIDIA's reduction sample (reduce6) ends with `__shfl_down_sync(ballot_result, mySum, offset)` over the
    first blockSize / 32 lanes, its offsets starting at 16: lane 0 reads lanes 16 and 8, which are not in the
    call (undefined, the Programming Guide says). The hint says how many lanes take part and where to start
    (half of them), and names the sample; started there, the sums are right and nothing is reported."""
    module = cuda.RawModule(code=REDUCE6_LAST_WARP, backend="cpu", name_expressions=["block_sum<256>", "block_sum<32>"])
    x, out = np.arange(512, dtype=np.float32), np.zeros(2, np.float32)
    with pytest.raises(cuda.KernelError) as info:
        module.get_function("block_sum<256>")((2,), (256,), (x, out, 0))
    message = str(info.value)
    assert (f"at line {line_of('LAST WARP', REDUCE6_LAST_WARP)}, thread (0, 0, 0) read lane 16 (thread (16, 0, 0)) "
            "with __shfl_down_sync, which the mask 0x000000ff does not name") in message
    assert ("hint: Only the 8 lanes of the mask 0x000000ff are in the call, and lane 0 read lane 16, 16 further down: "
            "start the offsets at half the lanes in the call, `for (int offset = 4; offset > 0; offset /= 2)`") in message
    assert "NVIDIA's reduction sample, reduce6 and later, ends this way" in message and "issue #398" in message
    module.get_function("block_sum<256>")((2,), (256,), (x, out, 1))
    np.testing.assert_array_equal(out, [x[:256].sum(), x[256:].sum()])
    with pytest.raises(cuda.KernelError) as info:  # one warp a block: lane 0 alone (the issue's own example)
        module.get_function("block_sum<32>")((2,), (32,), (x, out, 0))
    assert ("hint: Only lane 0 of the mask 0x00000001 is in the call, and lane 0 read lane 16, 16 further down: lane 0 "
            "alone has nothing to add: skip the shuffles then, `if (ballot_result != 1u)` around the loop") in str(info.value)
    module.get_function("block_sum<32>")((2,), (32,), (x, out, 1))
    np.testing.assert_array_equal(out, [x[:32].sum(), x[32:64].sum()])


POSITIVE_SUM = r"""
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
extern "C" __global__ void positive_sum(const float* x, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] > 0.0f) {
        unsigned m = __activemask();
        float v = x[i];
        for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(m, v, o);  // TREE
        if ((threadIdx.x & 31) == 0) atomicAdd(out, v);
    }
}
extern "C" __global__ void positive_sum_group(const float* x, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] > 0.0f) {
        cg::coalesced_group g = cg::coalesced_threads();
        float v = cg::reduce(g, x[i], cg::plus<float>());
        if (g.thread_rank() == 0) atomicAdd(out, v);
    }
}
"""


def test_a_shuffle_tree_over_the_scattered_lanes_of_a_branch_is_told_to_shuffle_before_it_or_use_a_group():
    """__activemask() inside a data-dependent if gives scattered lanes (0x23ac08ed): no offsets or width keep a
    tree of shuffles inside them, so the hint is not the contiguous-mask one (`lane + offset < active`)."""
    x = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    module = cuda.RawModule(code=POSITIVE_SUM, backend="cpu")
    with pytest.raises(cuda.KernelError) as info:
        module.get_function("positive_sum")((4,), (256,), (x, np.zeros(1, np.float32), 1000))
    message = str(info.value)
    assert info.value.line == line_of("TREE", POSITIVE_SUM) and "lane + offset < active" not in message
    assert re.search(r"hint: The mask 0x[0-9a-f]{8} names scattered lanes \(those that took a data-dependent branch", message)
    assert "cg::coalesced_threads()" in message and "before the branch" in message
    out = np.zeros(1, np.float32)  # the twin: the group of the branch's lanes, reduced and stored by its rank 0
    module.get_function("positive_sum_group")((4,), (256,), (x, out, 1000))
    assert np.isclose(out[0], x[x > 0].sum(dtype=np.float64), rtol=1e-5)


def test_an_undefined_shuffle_result_through_a_tiles_method_names_the_method_as_written():
    """`tile.shfl_down(v, o)` after `if (i >= n) return;`: the undefined value reaches the sum's store, and the
    message names the call as the kernel writes it (it said __shfl_down_sync, which the kernel never calls)."""
    src = r"""
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void tile_sum(const float* x, float* out, int n) {
    auto tile = cg::tiled_partition<32>(cg::this_thread_block());
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    for (int o = 16; o > 0; o /= 2) v += tile.shfl_down(v, o);   // SHUFFLE
    if (tile.thread_rank() == 0) atomicAdd(out, v);
}"""
    with pytest.raises(cuda.KernelError) as info:
        cuda.RawKernel(src, "tile_sum", backend="cpu")((1,), (64,), (np.ones(50, np.float32), np.zeros(1, np.float32), 50))
    assert (f"at line {line_of('SHUFFLE', src)}, thread (34, 0, 0) read lane 18 (thread (50, 0, 0)) with "
            "tile.shfl_down() (a tile's __shfl_down_sync), which returned at line 7") in str(info.value)


BRANCHES = r"""
extern "C" __global__ void branches(const float* x, float* y) {
    float v = x[threadIdx.x];
    if (threadIdx.x % 2) {
        float w = __shfl_xor_sync(0xffffffff, v, 1);                  // ODD
        y[threadIdx.x] = w;
    } else {
        float w = OTHER;                                              // EVEN
        y[threadIdx.x] = -w;
    }
}
"""


def test_lanes_meet_at_the_same_kind_of_warp_call_in_either_branch():
    """Since Volta a shuffle waits for the lanes of its mask at any shuffle of the same kind and mask, so
    the same __shfl_xor_sync in both branches of an if exchanges values; a different call in the other
    branch (a vote) is still a mismatch."""
    x, y = np.random.default_rng(1).random(32).astype(np.float32), np.zeros(32, np.float32)
    source = BRANCHES.replace("OTHER", "__shfl_xor_sync(0xffffffff, v, 1)")
    for sanitize in (False, True):
        cuda.RawKernel(source, "branches", backend="cpu", sanitize=sanitize)((1,), (32,), (x, y))
        lanes = np.arange(32)
        np.testing.assert_array_equal(y, np.where(lanes % 2, x[lanes ^ 1], -x[lanes ^ 1]))
    mixed = BRANCHES.replace("OTHER", "(float)__ballot_sync(0xffffffff, v > 0.5f)")
    with pytest.raises(cuda.KernelError, match=r"the lanes of one mask must meet at the same kind of call"):
        cuda.RawKernel(mixed, "branches", backend="cpu")((1,), (32,), (x, y))


NESTED_TILES = r"""
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void nested(int* rank, int* count) {
    auto warp = cg::tiled_partition<32>(cg::this_thread_block());
    auto eight = cg::tiled_partition<8>(warp);
    auto four = cg::tiled_partition<4>(warp);
    rank[threadIdx.x] = eight.meta_group_rank() * 100 + four.meta_group_rank();
    count[threadIdx.x] = eight.meta_group_size() * 100 + four.meta_group_size();
}
"""


def test_a_tile_of_a_tile_counts_its_meta_group_within_its_parent():
    """cooperative_groups: a tile's meta_group_rank and meta_group_size are its index and count within
    the group it was cut from (4 tiles of 8 in a warp), not within the block."""
    rank, count = np.zeros(64, np.int32), np.zeros(64, np.int32)
    cuda.RawKernel(NESTED_TILES, "nested", backend="cpu")((1,), (64,), (rank, count))
    lane = np.arange(64) % 32
    np.testing.assert_array_equal(rank, lane // 8 * 100 + lane // 4)
    assert (count == 4 * 100 + 8).all()


def test_meta_group_rank_is_a_tiles_not_any_groups():
    """CUDA's thread_group has no meta_group_rank (only thread_block_tile<N> and coalesced_group
    do), and NVRTC refuses the call: so does the CPU backend, rather than run code a GPU will not."""
    src = NESTED_TILES.replace("auto four = cg::tiled_partition<4>(warp);",
                               "cg::thread_group four = cg::tiled_partition(warp, 4);")
    with pytest.raises(cuda.CompileError, match="meta_group_rank"):
        cuda.RawKernel(src, "nested", backend="cpu").compile()


XOR_PAST_THE_GROUP = r"""
extern "C" __global__ void xor_across(const int* x, int* out, int lane_mask, int width) {
    int v = x[threadIdx.x];
    out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, v, lane_mask, width);
}
"""


@pytest.mark.parametrize("lane_mask, width", [(8, 8), (16, 8), (4, 4), (24, 16), (1, 8)])
def test_xor_shuffle_reads_earlier_groups_but_not_later_ones(lane_mask, width):
    """The Programming Guide: with width < 32 a lane may read lanes of earlier groups (lane ^ laneMask below its
    own group) and gets its own value for a later group (PTX shfl.bfly: the source lane is valid up to the end
    of the lane's own group)."""
    x = np.arange(100, 132, dtype=np.int32)
    out = np.zeros(32, np.int32)
    cuda.RawKernel(XOR_PAST_THE_GROUP, "xor_across", backend="cpu")((1,), (32,), (x, out, lane_mask, width))
    expected = [x[k ^ lane_mask] if k ^ lane_mask < k // width * width + width else x[k] for k in range(32)]
    np.testing.assert_array_equal(out, expected)
    if lane_mask == 8 and width == 8:
        assert out[8] == x[0] and out[0] == x[0]  # lane 8 reads lane 0 (earlier); lane 0 keeps its own


AGGREGATED_APPEND = r"""
extern "C" __global__ void append_odd(const int* x, int* out, int* count) {
    int v = x[threadIdx.x];
    if (v & 1) {
        unsigned active = __activemask();
        int leader = 0;                                          // the first active lane is __ffs(active) - 1
        int base = 0;
        if ((threadIdx.x & 31) == leader) base = atomicAdd(count, __popc(active));
        base = __shfl_sync(active, base, leader);
        out[base + __popc(active & ((1u << (threadIdx.x & 31)) - 1))] = v;   // SLOT
    }
}
"""


def test_an_index_from_a_shuffle_of_a_lane_outside_the_mask_is_explained():
    """probe 15: the leader hard-coded as lane 0, which is not active (even values): the broadcast reads a lane
    outside the mask, whose undefined value (0x7FC0DEAD here) became an index, with a hint to guard it."""
    x = np.arange(32, dtype=np.int32)
    with pytest.raises(cuda.KernelError, match=r"accessed out\[2143346349\]") as info:
        cuda.RawKernel(AGGREGATED_APPEND, "append_odd", backend="cpu")(
            (1,), (32,), (x, np.zeros(32, np.int32), np.zeros(1, np.int32)))
    text = str(info.value)
    assert "is 0x7FC0DEAD, what a shuffle here gives a lane whose source lane is not in the shuffle's mask" in text
    assert "__ffs(mask) - 1" in text and "if (i < n)" not in text


ENDLESS_SHUFFLES = r"""
__device__ float warp_sum(float v) {
    for (int offset = 16; offset >= 0; offset >>= 1)               // offset stays 0: for ever
        v += __shfl_down_sync(0xffffffffu, v, offset);              // SHUFFLE
    return v;
}
extern "C" __global__ void sums(const float* in, float* out, int n) {
    float sum = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        sum += in[i];                                               // LAST ACCESS
    sum = warp_sum(sum);
    if ((threadIdx.x & 31) == 0) atomicAdd(out, sum);
}
"""


@pytest.mark.parametrize("sanitize", [False, True])
def test_an_endless_loop_of_shuffles_names_the_shuffle_not_the_last_access(sanitize):
    """probe 15: the time limit named `sum += in[i]`, the last access before a loop that makes none."""
    line = next(i for i, text in enumerate(ENDLESS_SHUFFLES.split("\n"), 1) if "// SHUFFLE" in text)
    with pytest.raises(cuda.KernelError, match=r"ran longer than its time limit") as info:
        cuda.RawKernel(ENDLESS_SHUFFLES, "sums", backend="cpu", time_limit=0.3, sanitize=sanitize)(
            1, 64, (np.ones(64, np.float32), np.zeros(1, np.float32), 64))
    assert info.value.line == line


def test_a_shuffle_step_of_a_whole_warp_is_warned_about():
    """`for (int o = 32; o > 0; o >>= 1) v += __shfl_xor_sync(FULL, v, o);`: lane ^ 32 is outside the warp, so
    every lane gets its own value back (defined on a GPU: no fault), and the sum comes out doubled. A warning names
    the line and the first step to use; a literal step of 32 and a width of 16 with a step of 16 too. The loops that
    start at 16 (and a step past a width held in a variable, which the source does not tell) are not warned about."""
    source = r"""
extern "C" __global__ void xor_from_32(const float* in, float* out) {
    float v = in[threadIdx.x];
    for (int o = 32; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);  // XOR
    if (threadIdx.x % 32 == 0) out[threadIdx.x / 32] = v;
}
extern "C" __global__ void down_literal(const float* in, float* out) {
    float v = in[threadIdx.x];
    v += __shfl_down_sync(0xffffffff, v, 32);  // LITERAL
    out[threadIdx.x] = v;
}
extern "C" __global__ void xor_width(const int* in, int* out) {
    out[threadIdx.x] = __shfl_xor_sync(0xffffffff, in[threadIdx.x], 16, 16);  // XOR WIDTH
}
extern "C" __global__ void half_width(const float* in, float* out) {
    float v = in[threadIdx.x];
    for (unsigned s = 16; s >= 1; s /= 2)
        v += __shfl_down_sync(0xffffffff, v, s, 16);  // WIDTH
    out[threadIdx.x] = v;
}
extern "C" __global__ void right(const float* in, float* out, int w) {
    float v = in[threadIdx.x];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
    for (int o = warpSize / 2; o > 0; o /= 2) v += __shfl_down_sync(0xffffffff, v, o, w);
    if (threadIdx.x % 32 == 0) out[threadIdx.x / 32] = v;
}
"""
    line = lambda marker: next(i for i, text in enumerate(source.split("\n"), 1) if f"// {marker}" in text)
    with pytest.warns(cuda.KernelWarning) as caught:
        module = cuda.RawModule(code=source, backend="cpu")
        out = np.zeros(2, np.float32)
        module.get_function("xor_from_32")((1,), (64,), (np.ones(64, np.float32), out))
    np.testing.assert_array_equal(out, [64, 64])  # doubled, as on a GPU: a warning, not a fault
    messages = [str(w.message) for w in caught if issubclass(w.category, cuda.KernelWarning)]
    expected = {
        line("XOR"): f"__shfl_xor_sync reads from lane ^ 32: the loop at line {line('XOR')} starts `o` at 32, and its "
                     "first step reaches outside the warp, so every lane gets its own value back",
        line("LITERAL"): "__shfl_down_sync reads from lane + 32: its step `32` reaches outside the warp",
        line("WIDTH"): "__shfl_down_sync reads from lane + 16: the loop at line",
        # (PTX's butterfly reads an earlier group: lanes 16 to 31 get lanes 0 to 15, not their own values)
        line("XOR WIDTH"): "__shfl_xor_sync reads from lane ^ 16: its step `16` reaches outside its group of 16 lanes "
                           "(width 16), so a lane whose lane ^ 16 lies in a later group gets its own value back, and "
                           "one whose partner lies in an earlier group gets that lane's value (lane 16 gets lane 0's)",
    }
    for number, text in expected.items():
        assert any(f"line {number}: {text}" in m for m in messages), (number, messages)
    assert any("start at 8 (width / 2)" in m for m in messages)
    assert not any("start at" in m and f"line {number}:" in m for m in messages
                   for number in range(line("WIDTH") + 1, len(source.split("\n")) + 1))
    out = np.zeros(2, np.float32)
    module.get_function("right")((1,), (64,), (np.ones(64, np.float32), out, 32))
    lanes = np.zeros(32, np.int32)
    module.get_function("xor_width")((1,), (32,), (np.arange(32, dtype=np.int32), lanes))
    np.testing.assert_array_equal(lanes, np.r_[np.arange(16), np.arange(16)])


def test_a_tile_method_called_by_some_lanes_only_is_named_as_written():
    """`if (threadIdx.x == 0) c[0] = t.any(v > 0);` of a thread_block_tile<32>: the message names `t.any()` as the
    learner wrote it (then CUDA's __any_sync), not only the call it becomes."""
    source = r"""
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void k(const float* in, int* c) {
    cg::thread_block_tile<32> t = cg::tiled_partition<32>(cg::this_thread_block());
    float v = in[threadIdx.x];
    if (threadIdx.x == 0) c[0] = t.any(v > 1.0f);
}
"""
    with pytest.raises(cuda.KernelError, match=r"calls t\.any\(\) \(a tile's __any_sync\) at line 7 with mask "
                                               r"0xffffffff, which names lane 1"):
        cuda.RawKernel(source, "k", backend="cpu")((1,), (32,), (np.ones(32, np.float32), np.zeros(1, np.int32)))


def test_a_broadcast_from_a_lane_outside_the_active_mask_is_told_to_take_a_lane_of_the_mask():
    """`if (lane % 2) { unsigned m = __activemask(); v = __shfl_sync(m, v, 0); }`: lane 0 is not in m, so on a GPU the
    value is undefined; the hint names the mask and `__ffs(mask) - 1` (it spoke of offsets and widths, a shuffle
    down's fixes). Broadcasting from the lowest lane of the mask gives every odd lane lane 1's value."""
    source = r"""
extern "C" __global__ void k(const float* in, float* out, int lowest) {
    float v = in[threadIdx.x];
    if (threadIdx.x % 2) {
        unsigned m = __activemask();
        v = __shfl_sync(m, v, lowest ? __ffs(m) - 1 : 0);
    }
    out[threadIdx.x] = v;
}
"""
    run = cuda.RawKernel(source, "k", backend="cpu")
    x = np.arange(32, dtype=np.float32)
    with pytest.raises(cuda.KernelError, match=r"read lane 0 \(thread \(0, 0, 0\)\) with __shfl_sync, which the mask "
                                               r"0xaaaaaaaa does not name") as info:
        run((1,), (32,), (x, np.zeros(32, np.float32), 0))
    assert ("hint: The source lane of __shfl_sync must be one of the lanes in its mask (0xaaaaaaaa): broadcast from one "
            "of them, the lowest, `__shfl_sync(mask, v, __ffs(mask) - 1)`") in str(info.value)
    out = np.zeros(32, np.float32)
    run((1,), (32,), (x, out, 1))
    assert out.tolist() == [float(t) if t % 2 == 0 else 1.0 for t in range(32)]


def test_a_cg_reduce_over_a_tile_whose_lanes_returned_is_named_as_written():
    source = r"""
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
extern "C" __global__ void k(const float* in, float* out, int n) {
    int i = threadIdx.x;
    if (i >= n) return;
    auto t = cg::tiled_partition<32>(cg::this_thread_block());
    float r = cg::reduce(t, in[i], cg::plus<float>());
    if (t.thread_rank() == 0) out[i / 32] = r;
}"""
    x = np.arange(64, dtype=np.float32)
    with pytest.raises(cuda.KernelError) as info:
        cuda.RawKernel(source, "k", backend="cpu", sanitize=True)((1,), (64,), (x, np.zeros(2, np.float32), 40))
    message = str(info.value)
    assert "with cg::reduce() (its __shfl_xor_sync), which returned at line 7" in message
    assert "cg::reduce() combines every lane of its group" in message and "cg::coalesced_threads()" in message


_EXCHANGE_THEN_READ = r"""
extern "C" __global__ void k(const int* in, int* out) {
    __shared__ int s[32];
    int lane = threadIdx.x % 32;
    s[lane] = in[lane];
    BETWEEN
    out[lane] = s[31 - lane] + x;
}
"""


@pytest.mark.parametrize("between, call", [
    ("int x = __any_sync(0xffffffff, in[lane] > 100);", "__any_sync"),
    ("int x = __shfl_sync(0xffffffff, in[lane], 0) * 0;", "__shfl_sync"),
    ("int x = __ballot_sync(0xffffffff, 1) & 0;", "__ballot_sync"),
    ("int x = __match_any_sync(0xffffffff, lane) & 0;", "__match_any_sync"),
    ("int x = 0; __syncwarp();", None),
])
def test_only_syncwarp_orders_the_lanes_memory_a_shuffle_or_vote_does_not(between, call):
    """A shuffle, vote or match waits for the lanes but orders no memory (the compiler may move the load above
    it): lane 0's read of lane 31's store after one is a race, as compute-sanitizer's racecheck says."""
    k = cuda.RawKernel(_EXCHANGE_THEN_READ.replace("BETWEEN", between), "k", backend="cpu", sanitize=True)
    x, out = np.arange(32, dtype=np.int32), np.zeros(32, np.int32)
    if call is None:
        k((1,), (32,), (x, out))
        np.testing.assert_array_equal(out, x[::-1])
        return
    with pytest.raises(cuda.KernelError, match=rf"(?s)data race on shared memory s\[\d+\].*line 5.*line 7.*The "
                                               rf"{call}\(\) at line 6, between the two, waits for the lanes but "
                                               r"orders no memory.*only __syncwarp\(\)"):
        k((1,), (32,), (x, out))


@pytest.mark.parametrize("value, call", [
    ("make_float4(o[threadIdx.x], 0, 0, 0)", "__shfl_sync(0xffffffff, v, 0).x"),
    ("P{o[threadIdx.x], 1}", "__shfl_down_sync(0xffffffff, v, 1).a"),
    ("P{1, 2}", "__match_any_sync(0xffffffff, v)"),
])
def test_shuffles_and_matches_take_the_types_cuda_overloads_them_for(value, call):
    """NVRTC has __shfl_sync and __match_any_sync for numbers only ("no instance of overloaded function" for a
    float4 or a struct); a char, a short or a bool goes as an int, and comes back as one."""
    source = f'struct P {{ int a, b; }};\nextern "C" __global__ void k(int* o) {{ auto v = {value}; o[threadIdx.x] = (int){call}; }}'
    with pytest.raises(cuda.CompileError, match=r"(?s)static assertion failed: __(shfl_down|shfl|match_any)_sync "
                                                r"(exchanges|compares) a number.*no overload for a struct"):
        cuda.RawKernel(source, "k", backend="cpu", sanitize=False).compile()
    widened = cuda.RawKernel(r"""
extern "C" __global__ void k(int* o, const signed char* c, const short* s, const bool* b) {
    int t = threadIdx.x;
    auto x = __shfl_sync(0xffffffff, c[t], 0);
    auto y = __shfl_down_sync(0xffffffff, s[t], 1);
    static_assert(sizeof(x) == 4 && sizeof(y) == 4 && sizeof(__shfl_xor_sync(0xffffffff, b[t], 1)) == 4, "ints");
    o[t] = x + y + __shfl_xor_sync(0xffffffff, b[t], 1) + (__match_any_sync(0xffffffff, c[t] >= 0) == 0xffffffffu);
}""", "k", backend="cpu", sanitize=False)
    out, c, s = np.zeros(32, np.int32), np.full(32, -100, np.int8), np.arange(32, dtype=np.int16)
    widened((1,), (32,), (out, c, s, np.ones(32, bool)))
    down = np.append(np.arange(1, 32), 31)  # (lane 31 gets its own value)
    np.testing.assert_array_equal(out, -100 + down + 1 + 1)


_MASKS_DISAGREE = r"""
extern "C" __global__ void halves(const int* in, int* out) {
    int lane = threadIdx.x % 32;
    unsigned m = lane < 16 ? 0x0000ffffu : 0xffffffffu;
    out[lane] = __shfl_sync(m, in[lane], lane % 16);
}
extern "C" __global__ void rounds(const int* in, int* out) {
    int v = 0;
    for (int j = 0; j < in[threadIdx.x]; j++) v += __shfl_sync(0xffffffff, j, 0);
    out[threadIdx.x] = v;
}
"""


@pytest.mark.parametrize("sanitize", [False, True])
def test_a_lane_that_made_the_call_with_another_mask_or_fewer_times_is_named_so(sanitize):
    """Red team 12-07: lanes 0-15 passing 0x0000ffff and lanes 16-31 0xffffffff to one shuffle, and lanes going round
    a loop of shuffles a different number of times, were both told that lane 0 'skipped the call, inside an if?'."""
    module = cuda.RawModule(code=_MASKS_DISAGREE, backend="cpu", sanitize=sanitize)
    x, out = (np.arange(32) % 3 + 1).astype(np.int32), np.zeros(32, np.int32)
    with pytest.raises(cuda.KernelError, match=r"(?s)names lane 0 \(thread \(0, 0, 0\)\), but that lane made this call "
                                               r"with mask 0x0000ffff, met the lanes of its own mask.*hint: Give every "
                                               r"lane of the call the same mask"):
        module.get_function("halves")((1,), (32,), (x, out))
    with pytest.raises(cuda.KernelError, match=r"(?s)names lane 0 \(thread \(0, 0, 0\)\), but that lane made this call "
                                               r"fewer times than thread \(1, 0, 0\).*a loop around the call runs a "
                                               r"different number of times.*hint: Make every lane of the mask go round "
                                               r"the loop the same number of times"):
        module.get_function("rounds")((1,), (32,), (x, out))


@pytest.mark.parametrize("mask, read, racy", [("0x0000ffff", "s[l + 16]", True), ("0x0000ffff", "s[l ^ 1]", False),
                                              ("0xffffffff", "s[l + 16]", False)])
def test_a_syncwarp_whose_mask_leaves_out_the_writing_lane_is_named_as_the_bug(mask, read, racy):
    """Lanes 0-15 sync with a mask of their own and read lanes 16-31's elements: the __syncwarp() between does not
    order those lanes' writes, and the hint says the mask is the bug (not 'add __syncthreads()')."""
    source = f"""
extern "C" __global__ void k(const int* x, int* out) {{
    __shared__ int s[32];
    int l = threadIdx.x;
    s[l] = x[l];  // WRITE
    if (l < 16) {{
        __syncwarp({mask if mask != "0xffffffff" else "0x0000ffff"});
        out[l] = {read};
    }} else {{
        __syncwarp(0xffff0000);
    }}
}}"""
    if mask == "0xffffffff":  # the fix: one __syncwarp() of every lane before the if
        source = source.replace("s[l] = x[l];  // WRITE", "s[l] = x[l];  // WRITE\n    __syncwarp();")
    x, out = np.arange(32, dtype=np.int32) * 3, np.zeros(16, np.int32)
    run = cuda.RawKernel(source, "k", backend="cpu", sanitize=True)
    if not racy:
        run((1,), (32,), (x, out))
        lanes = np.arange(16)
        np.testing.assert_array_equal(out, x[lanes ^ 1] if "^" in read else x[lanes + 16])
        return
    with pytest.raises(cuda.KernelError) as info:
        run((1,), (32,), (x, out))
    assert (f"The __syncwarp(0x0000ffff) at line {line_of('WRITE', source) + 2} lies between the two accesses, but its "
            "mask 0x0000ffff leaves out lane 16") in str(info.value)
