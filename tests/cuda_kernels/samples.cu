// Kernels written for this course in the style of public sample collections (NVIDIA's
// cuda-samples, CuPy's examples, textbook chapters), so that tests/test_cuda_samples.py runs
// the idioms learners paste: templates, cooperative groups, warp shuffles, bank-conflict
// padding, constant memory, float4 loads. Our own code, not copies of the samples.
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
#include <cuda_fp16.h>
#include <cfloat>
namespace cg = cooperative_groups;

// 1. Reduction, "several elements per thread + warp shuffles" style, templated on the block size.
template <unsigned int BLOCK>
__global__ void reduce_multi(const float* __restrict__ in, float* __restrict__ out, unsigned int n) {
    cg::thread_block block = cg::this_thread_block();
    __shared__ float sdata[BLOCK];
    unsigned int tid = threadIdx.x;
    unsigned int stride = BLOCK * 2 * gridDim.x;
    float sum = 0.0f;
    for (unsigned int i = blockIdx.x * BLOCK * 2 + tid; i < n; i += stride) {
        sum += in[i];
        if (i + BLOCK < n) sum += in[i + BLOCK];
    }
    sdata[tid] = sum;
    cg::sync(block);
    for (unsigned int s = BLOCK / 2; s > 32; s >>= 1) {
        if (tid < s) sdata[tid] = sum = sum + sdata[tid + s];
        cg::sync(block);
    }
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    if (block.thread_rank() < 32) {
        if (BLOCK >= 64) sum += sdata[tid + 32];
        for (int offset = warp.size() / 2; offset > 0; offset /= 2) sum += warp.shfl_down(sum, offset);
    }
    if (block.thread_rank() == 0) out[blockIdx.x] = sum;
}

// 2. Transpose through a padded shared tile (coalesced reads and writes, no bank conflicts).
#define TILE_DIM 32
#define BLOCK_ROWS 8
extern "C" __global__ void transpose_no_bank_conflicts(float* odata, const float* idata, int width, int height) {
    __shared__ float tile[TILE_DIM][TILE_DIM + 1];
    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        if (x < width && y + j < height) tile[threadIdx.y + j][threadIdx.x] = idata[(y + j) * width + x];
    __syncthreads();
    x = blockIdx.y * TILE_DIM + threadIdx.x;
    y = blockIdx.x * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        if (x < height && y + j < width) odata[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}

// 3. 64-bin histogram with one sub-histogram per warp in shared memory, merged with atomics.
#define BINS 64
#define WARPS_PER_BLOCK 4
extern "C" __global__ void histogram64_per_warp(const unsigned int* data, unsigned int* hist, int n) {
    __shared__ unsigned int warp_hist[WARPS_PER_BLOCK][BINS];
    int warp = threadIdx.x / warpSize;
    for (int b = threadIdx.x; b < WARPS_PER_BLOCK * BINS; b += blockDim.x) (&warp_hist[0][0])[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        unsigned int word = data[i];  // four 6-bit values per word, as the sample packs bytes
        for (int k = 0; k < 4; ++k) atomicAdd(&warp_hist[warp][(word >> (8 * k)) & 0x3fu], 1u);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) {
        unsigned int total = 0;
        for (int w = 0; w < WARPS_PER_BLOCK; ++w) total += warp_hist[w][b];
        atomicAdd(&hist[b], total);
    }
}

// 4. Work-efficient (Blelloch) exclusive scan of one block in shared memory, with padding
//    against bank conflicts (the GPU Gems chapter's structure).
#define NUM_BANKS 32
#define LOG_NUM_BANKS 5
#define CONFLICT_FREE_OFFSET(n) ((n) >> LOG_NUM_BANKS)
extern "C" __global__ void prescan(float* g_odata, const float* g_idata, int n) {
    extern __shared__ float temp[];
    int thid = threadIdx.x, offset = 1;
    int ai = thid, bi = thid + n / 2;
    int bank_a = CONFLICT_FREE_OFFSET(ai), bank_b = CONFLICT_FREE_OFFSET(bi);
    temp[ai + bank_a] = g_idata[ai];
    temp[bi + bank_b] = g_idata[bi];
    for (int d = n >> 1; d > 0; d >>= 1) {
        __syncthreads();
        if (thid < d) {
            int a = offset * (2 * thid + 1) - 1, b = offset * (2 * thid + 2) - 1;
            a += CONFLICT_FREE_OFFSET(a);
            b += CONFLICT_FREE_OFFSET(b);
            temp[b] += temp[a];
        }
        offset *= 2;
    }
    if (thid == 0) temp[n - 1 + CONFLICT_FREE_OFFSET(n - 1)] = 0;
    for (int d = 1; d < n; d *= 2) {
        offset >>= 1;
        __syncthreads();
        if (thid < d) {
            int a = offset * (2 * thid + 1) - 1, b = offset * (2 * thid + 2) - 1;
            a += CONFLICT_FREE_OFFSET(a);
            b += CONFLICT_FREE_OFFSET(b);
            float t = temp[a];
            temp[a] = temp[b];
            temp[b] += t;
        }
    }
    __syncthreads();
    g_odata[ai] = temp[ai + bank_a];
    g_odata[bi] = temp[bi + bank_b];
}

// 5. matrixMul-style tiled product, templated on the tile size, row-major.
template <int BLOCK_SIZE>
__global__ void matrix_mul(float* C, const float* A, const float* B, int wA, int wB) {
    int bx = blockIdx.x, by = blockIdx.y, tx = threadIdx.x, ty = threadIdx.y;
    int aBegin = wA * BLOCK_SIZE * by, aEnd = aBegin + wA - 1, aStep = BLOCK_SIZE;
    int bBegin = BLOCK_SIZE * bx, bStep = BLOCK_SIZE * wB;
    float Csub = 0;
    for (int a = aBegin, b = bBegin; a <= aEnd; a += aStep, b += bStep) {
        __shared__ float As[BLOCK_SIZE][BLOCK_SIZE];
        __shared__ float Bs[BLOCK_SIZE][BLOCK_SIZE];
        As[ty][tx] = A[a + wA * ty + tx];
        Bs[ty][tx] = B[b + wB * ty + tx];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BLOCK_SIZE; ++k) Csub += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    int c = wB * BLOCK_SIZE * by + BLOCK_SIZE * bx;
    C[c + wB * ty + tx] = Csub;
}

// 6. CuPy-gemm-example style: C = A B with float4 loads of A's rows and a -D tile size.
extern "C" __global__ void sgemm_float4(const float* A, const float* B, float* C, int M, int N, int K) {
    int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M || col >= N) return;
    const float4* a_row = reinterpret_cast<const float4*>(A + row * K);
    float acc = 0.0f;
    for (int k4 = 0; k4 < K / 4; ++k4) {
        float4 a = a_row[k4];
        acc += a.x * B[(4 * k4 + 0) * N + col] + a.y * B[(4 * k4 + 1) * N + col]
             + a.z * B[(4 * k4 + 2) * N + col] + a.w * B[(4 * k4 + 3) * N + col];
    }
    C[row * N + col] = acc * ALPHA;
}

// 7. Bitonic sort of one block's keys in shared memory (sortingNetworks style).
extern "C" __global__ void bitonic_sort_shared(unsigned int* keys, unsigned int dir) {
    extern __shared__ unsigned int s_key[];
    unsigned int n = 2 * blockDim.x;
    s_key[threadIdx.x] = keys[threadIdx.x];
    s_key[threadIdx.x + blockDim.x] = keys[threadIdx.x + blockDim.x];
    for (unsigned int size = 2; size <= n; size <<= 1) {
        unsigned int ddd = dir ^ ((threadIdx.x & (size / 2)) != 0);
        for (unsigned int stride = size / 2; stride > 0; stride >>= 1) {
            __syncthreads();
            unsigned int pos = 2 * threadIdx.x - (threadIdx.x & (stride - 1));
            unsigned int a = s_key[pos], b = s_key[pos + stride];
            if ((a > b) == ddd) { s_key[pos] = b; s_key[pos + stride] = a; }
        }
    }
    __syncthreads();
    keys[threadIdx.x] = s_key[threadIdx.x];
    keys[threadIdx.x + blockDim.x] = s_key[threadIdx.x + blockDim.x];
}

// 8. Row convolution with the filter in __constant__ memory (convolutionSeparable style).
#define KERNEL_RADIUS 4
__constant__ float c_kernel[2 * KERNEL_RADIUS + 1];
extern "C" __global__ void convolution_rows(float* dst, const float* src, int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    float sum = 0;
    for (int k = -KERNEL_RADIUS; k <= KERNEL_RADIUS; ++k) {
        int xx = min(max(x + k, 0), width - 1);
        sum += c_kernel[KERNEL_RADIUS - k] * src[y * width + xx];
    }
    dst[y * width + x] = sum;
}

// 9. Row-wise softmax, one warp per row: max and sum with __shfl_xor_sync, -FLT_MAX start.
extern "C" __global__ void softmax_rows(const float* x, float* y, int rows, int cols) {
    int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (row >= rows) return;  // whole warps leave together
    const float* in = x + row * cols;
    float m = -FLT_MAX;
    for (int c = lane; c < cols; c += 32) m = fmaxf(m, in[c]);
    for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, o));
    float s = 0.0f;
    for (int c = lane; c < cols; c += 32) s += __expf(in[c] - m);
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffff, s, o);
    for (int c = lane; c < cols; c += 32) y[row * cols + c] = __expf(in[c] - m) / s;
}

// 10. Dot product of half vectors, accumulated in float, block partials with atomicAdd.
extern "C" __global__ void half_dot(const __half* a, const __half* b, float* result, int n) {
    __shared__ float cache[256];
    float temp = 0;
    for (int i = threadIdx.x + blockIdx.x * blockDim.x; i < n; i += blockDim.x * gridDim.x)
        temp += __half2float(a[i]) * __half2float(b[i]);
    cache[threadIdx.x] = temp;
    __syncthreads();
    for (int i = blockDim.x / 2; i != 0; i /= 2) {
        if (threadIdx.x < i) cache[threadIdx.x] += cache[threadIdx.x + i];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(result, cache[0]);
}

// 11. The samples' SharedMemory<T> helper (dynamic shared memory typed per instantiation),
//     a `static __shared__` array and a warp reduction with __activemask().
template <class T>
struct SharedMemory {
    __device__ inline operator T*() {
        extern __shared__ int __smem[];
        return (T*)__smem;
    }
};
__device__ __forceinline__ int warp_sum_active(int v) {
    for (int offset = warpSize / 2; offset > 0; offset /= 2) v += __shfl_down_sync(__activemask(), v, offset);
    return v;
}
template <class T>
__global__ void sum_with_helper(const T* in, T* out, unsigned int n) {
    T* sdata = SharedMemory<T>();
    static __shared__ int warp_totals[32];
    unsigned int tid = threadIdx.x, i = blockIdx.x * blockDim.x + tid;
    sdata[tid] = i < n ? in[i] : T(0);
    __syncthreads();
    int v = warp_sum_active((int)sdata[tid]);
    if (tid % warpSize == 0) warp_totals[tid / warpSize] = v;
    __syncthreads();
    if (tid == 0) {
        int total = 0;
        for (unsigned int w = 0; w < blockDim.x / warpSize; ++w) total += warp_totals[w];
        atomicAdd(out, (T)total);
    }
}

// 12. Cooperative groups as the samples use them: a reduction written once for any group (a
//     `thread_group` parameter takes the whole block and the tiles of tiled_partition(block, 16)),
//     and a batch loop that stages each batch in shared memory with cg::memcpy_async / cg::wait.
//     The last parameter has a default, as some samples' kernels do (CuPy passes every argument).
__device__ int group_sum(cg::thread_group g, int* scratch, int value) {
    int rank = g.thread_rank();
    for (int half = g.size() / 2; half > 0; half /= 2) {
        scratch[rank] = value;
        g.sync();
        if (rank < half) value += scratch[rank + half];
        g.sync();
    }
    return value;  // complete in the group's thread 0
}
extern "C" __global__ void group_sums(const int* in, int* block_total, int* tile_totals) {
    extern __shared__ int scratch[];
    cg::thread_block block = cg::this_thread_block();
    int v = in[blockIdx.x * block.size() + block.thread_rank()];
    int total = group_sum(block, scratch, v);
    if (block.thread_rank() == 0) block_total[blockIdx.x] = total;
    block.sync();
    cg::thread_group tile = cg::tiled_partition(block, 16);
    int first = block.thread_rank() - tile.thread_rank();
    int part = group_sum(tile, scratch + first, v);
    if (tile.thread_rank() == 0) tile_totals[(blockIdx.x * block.size() + first) / 16] = part;
}
extern "C" __global__ void reverse_batches(const float* in, float* out, int batches, float* peek = NULL) {
    extern __shared__ float stage[];
    cg::thread_block block = cg::this_thread_block();
    unsigned size = block.size();
    for (int b = 0; b < batches; b++) {
        const float* batch = in + (blockIdx.x * batches + b) * size;
        cg::memcpy_async(block, stage, batch, sizeof(float) * size);
        cg::wait(block);
        out[(blockIdx.x * batches + b) * size + block.thread_rank()] = stage[size - 1 - block.thread_rank()];
        if (peek != NULL && b == 0 && block.thread_rank() == 0) peek[blockIdx.x] = stage[0];
        block.sync();  // every thread has read the batch before the next copy overwrites it
    }
}

// A merge-path merge (the textbooks' co-rank split): each thread finds where its share of the output
// begins in a and in b, then merges that share sequentially. The last threads' shares are empty, and
// they still form &out[k] past the end: an address, not an access.
__device__ int merge_split(int k, const int* a, int m, const int* b, int n) {
    int lo = k > n ? k - n : 0, hi = k < m ? k : m;  // how many of the first k come from a
    while (lo < hi) {
        int i = (lo + hi) / 2;
        if (a[i] <= b[k - i - 1]) lo = i + 1;
        else hi = i;
    }
    return lo;
}
__device__ void merge_run(const int* a, int m, const int* b, int n, int* out) {
    for (int i = 0, j = 0; i < m || j < n;) {
        if (j == n || (i < m && a[i] <= b[j])) out[i + j] = a[i], i++;
        else out[i + j] = b[j], j++;
    }
}
extern "C" __global__ void merge_path(const int* a, int m, const int* b, int n, int* out) {
    int threads = blockDim.x * gridDim.x, t = blockIdx.x * blockDim.x + threadIdx.x;
    int share = (m + n + threads - 1) / threads;
    int k = min(t * share, m + n), k_next = min(k + share, m + n);
    int i = merge_split(k, a, m, b, n), i_next = merge_split(k_next, a, m, b, n);
    merge_run(&a[i], i_next - i, &b[k - i], (k_next - i_next) - (k - i), &out[k]);
}
