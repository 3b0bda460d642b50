// Warp-level kernels for tests/test_cuda_warp.py, written in the style of the public samples
// (reduction, shfl_scan, cooperative groups); compared with NumPy on every backend.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

__device__ __forceinline__ float warp_reduce_sum(float v) {
    for (int offset = warpSize / 2; offset > 0; offset >>= 1)
        v += __shfl_down_sync(0xffffffff, v, offset);  // WARP-SUM
    return v;
}

// Block sum: shuffles inside each warp, one partial per warp in shared memory, shuffles again.
extern "C" __global__ void warp_shuffle_sum(const float* x, float* partial, int n) {
    __shared__ float warp_sums[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    float v = warp_reduce_sum(i < n ? x[i] : 0.0f);
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = warp_reduce_sum(lane < blockDim.x / warpSize ? warp_sums[lane] : 0.0f);
        if (lane == 0) partial[blockIdx.x] = v;
    }
}

// The same with cooperative groups: tiles of 32, cg::reduce, one atomicAdd per tile.
extern "C" __global__ void cg_tile_sum(const int* x, int* total, int n) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
    int i = block.group_index().x * block.size() + block.thread_rank();
    int v = cg::reduce(tile, i < n ? x[i] : 0, cg::plus<int>());
    if (tile.thread_rank() == 0) atomicAdd(total, v);
    cg::sync(block);
}

// Inclusive scan of each block: Kogge-Stone inside warps with __shfl_up_sync, then the warp
// totals are scanned by warp 0 and added back (the shfl_scan sample's structure).
extern "C" __global__ void shfl_scan(const int* x, int* out, int n) {
    __shared__ int sums[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
    int v = i < n ? x[i] : 0;
    for (int d = 1; d < 32; d *= 2) {
        int up = __shfl_up_sync(0xffffffff, v, d);
        if (lane >= d) v += up;
    }
    if (lane == 31) sums[warp] = v;
    __syncthreads();
    if (warp == 0) {
        int s = lane < blockDim.x / 32 ? sums[lane] : 0;
        for (int d = 1; d < 32; d *= 2) {
            int up = __shfl_up_sync(0xffffffff, s, d);
            if (lane >= d) s += up;
        }
        sums[lane] = s;
    }
    __syncthreads();
    if (warp > 0) v += sums[warp - 1];
    if (i < n) out[i] = v;
}

// Butterfly (xor) sums inside segments of `width` lanes, broadcast of each segment's lane 3.
extern "C" __global__ void xor_and_broadcast(const int* x, int* sums, int* third, int width) {
    int v = x[threadIdx.x];
    for (int m = width / 2; m > 0; m /= 2) v += __shfl_xor_sync(0xffffffff, v, m, width);
    sums[threadIdx.x] = v;
    third[threadIdx.x] = __shfl_sync(0xffffffff, x[threadIdx.x], 3, width);
}

// Votes and bit tricks; out has 8 ints per thread.
extern "C" __global__ void votes(const int* x, unsigned int* out) {
    int t = threadIdx.x, lane = t & 31;
    unsigned int* o = out + 8 * t;
    unsigned int odd = __ballot_sync(0xffffffff, x[t] & 1);
    o[0] = odd;
    o[1] = __any_sync(0xffffffff, x[t] > 100);
    o[2] = __all_sync(0xffffffff, x[t] >= 0);
    o[3] = __popc(odd);
    o[4] = __ffs(odd);
    o[5] = __clz(odd);
    if (lane % 3 == 0) o[6] = __activemask();   // lanes that took this branch together
    else o[6] = 0;
    o[7] = __reduce_add_sync(0xffffffff, (unsigned)x[t]) + __reduce_max_sync(0xffffffff, x[t] - 50)
           - __reduce_min_sync(0xffffffffu, (unsigned)x[t]);
}

// Tiles of 16 (tiled_partition(block, 16) and tiled_partition<16>), 2-D blocks.
extern "C" __global__ void tiles16(const int* x, int* out) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_group g16 = cg::tiled_partition(block, 16);
    cg::thread_block_tile<16> t16 = cg::tiled_partition<16>(block);
    int r = block.thread_rank();
    int v = x[r];
    int mx = cg::reduce(t16, v, cg::greater<int>());
    int mn = cg::reduce(t16, v, cg::less<int>());
    unsigned big = t16.ballot(v > 50);
    bool any_neg = t16.any(v < 0), all_small = t16.all(v < 90);
    int left = t16.shfl(v, (t16.thread_rank() + 15) % 16);
    g16.sync();
    int* o = out + 8 * r;
    o[0] = mx; o[1] = mn; o[2] = (int)big; o[3] = any_neg; o[4] = all_small; o[5] = left;
    o[6] = (int)(block.thread_rank() / g16.size()); o[7] = t16.meta_group_rank() * 100 + (int)g16.thread_rank();
}

// Group the lanes that hold the same key (match_any), and a coalesced group inside a branch.
extern "C" __global__ void match_and_coalesce(const int* keys, unsigned int* peers, int* ranks) {
    int t = threadIdx.x;
    peers[t] = __match_any_sync(0xffffffff, keys[t]);
    ranks[t] = -1;
    if (keys[t] % 2 == 0) {
        cg::coalesced_group active = cg::coalesced_threads();
        ranks[t] = active.thread_rank() * 100 + active.size();
    }
}

// Inside a branch, the lanes that took it work together (their own mask, a coalesced group
// whose size need not be a power of two); after the branch the whole warp meets again.
// The Programming Guide's partitions (sm_70+): a warp's lanes grouped by a predicate or a label.
extern "C" __global__ void partitions(const int* x, int* sums, int* sizes) {
    auto block = cg::this_thread_block();
    auto warp = cg::tiled_partition<32>(block);
    int v = x[block.thread_rank()];
    bool odd = v & 1;
    auto halves = cg::binary_partition(warp, odd);
    int s = cg::reduce(halves, v, cg::plus<int>());
    if (halves.thread_rank() == 0) atomicAdd(&sums[odd], s);
    halves.sync();
    auto same = cg::labeled_partition(warp, v % 3);
    if (same.thread_rank() == 0) atomicAdd(&sizes[v % 3], (int)same.num_threads());
}

// CUDA 12's invoke_one: one lane of the warp takes 32 slots for all of them; and the grid's ranks.
extern "C" __global__ void one_for_the_warp(int* counter, int* slots, unsigned long long* ranks) {
    auto warp = cg::tiled_partition<32>(cg::this_thread_block());
    cg::grid_group grid = cg::this_grid();
    int base = cg::invoke_one_broadcast(warp, [&]() -> int { return atomicAdd(counter, 32); });
    slots[grid.thread_rank()] = base + warp.thread_rank();
    cg::invoke_one(cg::coalesced_threads(), [](int* c) { atomicAdd(c, 1); }, counter + 1);
    if (threadIdx.x == 0) ranks[grid.block_rank()] = grid.num_blocks() * 100 + grid.block_index().y;
}

extern "C" __global__ void branch_groups_then_the_warp(const int* x, int* sums, int* prefix, int* top) {
    int t = threadIdx.x, v = x[t];
    sums[t] = prefix[t] = -1;
    if (v > 0) {
        unsigned mask = __activemask();
        int leader = __shfl_sync(mask, t % 32, __ffs(mask) - 1);  // the lowest lane of the branch
        cg::coalesced_group positive = cg::coalesced_threads();
        sums[t] = cg::reduce(positive, v, cg::plus<int>()) * 100 + (leader == __ffs(mask) - 1);
        int before = positive.shfl_up(v, 1), after = positive.shfl_down(v, 1);  // by rank; the ends keep v
        prefix[t] = (positive.thread_rank() == 0 ? 0 : before) * 1000 + after;
    }
    int best = v;
    for (int o = 16; o > 0; o /= 2) best = max(best, __shfl_xor_sync(0xffffffff, best, o));
    top[t] = best;
}

// A learner's faults.
extern "C" __global__ void shuffle_after_return(const float* x, float* out, int n) {
    int i = threadIdx.x;
    if (i >= n) return;  // BUG: the shuffles read from these lanes
    float v = warp_reduce_sum(x[i]);
    if (i == 0) out[0] = v;  // STORE: the sum holds what lanes 20 to 31 did not bring
}

// The same with integers and with a maximum: no pattern survives `v += other` on ints or fmaxf
// (which drops a NaN), but the result still depends on what the returned lanes did not bring.
extern "C" __global__ void int_sum_after_return(const int* x, int* out, int n) {
    int i = threadIdx.x;
    if (i >= n) return;  // BUG-INT: these lanes bring nothing to the shuffles
    int v = x[i];
    for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffff, v, o);  // INT-SUM
    if (i == 0) out[0] = v;
}
extern "C" __global__ void max_after_return(const float* x, float* out, int n) {
    int i = threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    for (int o = 16; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, o));
    out[i] = v;
}
// The fix that keeps the early return: read only lanes that are there (correct, no report).
extern "C" __global__ void int_sum_guarded(const int* x, int* out, int n) {
    int i = threadIdx.x;
    if (i >= n) return;
    int v = x[i];
    for (int o = 16; o > 0; o /= 2) {
        int other = __shfl_down_sync(__activemask(), v, o);
        if (i + o < n) v += other;
    }
    if (i == 0) out[0] = v;
}

// Since Volta the lanes that returned are simply not in a warp-level call: a vote counts the
// others, and a __syncwarp() waits for them. Only reading a returned lane's value is a bug.
extern "C" __global__ void vote_after_return(const int* x, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned votes = __ballot_sync(0xffffffff, x[i] > 0);
    bool all = __all_sync(0xffffffff, x[i] > 0);
    __syncwarp();
    if ((threadIdx.x & 31) == 0) out[i / 32] = __popc(votes) + (all ? 1000 : 0);
}

extern "C" __global__ void vote_inside_if(const int* x, int* out) {
    if (threadIdx.x < 16) out[threadIdx.x] = __any_sync(0xffffffff, x[threadIdx.x]);  // SKIPPED: lanes 16..31
}

extern "C" __global__ void tile_sync_by_half(int* out) {
    cg::thread_block_tile<16> tile = cg::tiled_partition<16>(cg::this_thread_block());
    if (tile.thread_rank() < 8) {
        out[threadIdx.x] = 1;
        tile.sync();  // BUG: half of the tile
    }
}

extern "C" __global__ void shuffle_versus_barrier(int* out) {
    int v = threadIdx.x;
    if (threadIdx.x < 16) v = __shfl_down_sync(0xffffffff, v, 1);  // SHUFFLE
    else __syncthreads();  // BARRIER
    out[threadIdx.x] = v;
}

extern "C" __global__ void mask_without_me(int* out) {
    out[threadIdx.x] = __shfl_sync(0x0000ffff, (int)threadIdx.x, 0);  // BUG: lanes 16-31 not in the mask
}
