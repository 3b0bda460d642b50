// Faulty kernels learners write, each with a correct twin, for tests/test_cuda_sanitizer.py.
// Bugs sit on lines marked with a comment the tests look for.

extern "C" __global__ void tree_sum_no_barrier(const float* x, float* partial) {
    __shared__ float s[128];
    int t = threadIdx.x;
    s[t] = x[blockIdx.x * blockDim.x + t];
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (t < stride) s[t] += s[t + stride];  // RACE: no barrier in the loop
    }
    if (t == 0) partial[blockIdx.x] = s[0];
}

extern "C" __global__ void tree_sum(const float* x, float* partial) {
    __shared__ float s[128];
    int t = threadIdx.x;
    s[t] = x[blockIdx.x * blockDim.x + t];
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (t < stride) s[t] += s[t + stride];
        __syncthreads();
    }
    if (t == 0) partial[blockIdx.x] = s[0];
}

extern "C" __global__ void reverse_no_barrier(const int* in, int* out) {
    __shared__ int s[64];
    s[threadIdx.x] = in[threadIdx.x];  // WRITE
    out[threadIdx.x] = s[63 - threadIdx.x];  // READ: before the others wrote
}

extern "C" __global__ void shift_left_no_barrier(int* data) {
    __shared__ int s[64];
    s[threadIdx.x] = data[threadIdx.x];
    __syncthreads();
    if (threadIdx.x < 63) s[threadIdx.x] = s[threadIdx.x + 1];  // RACE-WAR: thread t+1 may have written first
    __syncthreads();
    data[threadIdx.x] = s[threadIdx.x];
}

extern "C" __global__ void only_block_zero_fills(float* out) {
    __shared__ float s[32];
    if (blockIdx.x == 0) s[threadIdx.x] = threadIdx.x;
    __syncthreads();
    out[blockIdx.x * 32 + threadIdx.x] = s[threadIdx.x];  // UNINIT: block 1 never wrote s
}

extern "C" __global__ void histogram_without_atomics(const int* values, int* bins, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) bins[values[i]] += 1;  // GLOBAL: two threads, one bin
}

extern "C" __global__ void histogram_with_atomics(const int* values, int* bins, int n) {
    __shared__ int local[16];
    if (threadIdx.x < 16) local[threadIdx.x] = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&local[values[i]], 1);
    __syncthreads();
    if (threadIdx.x < 16) atomicAdd(&bins[threadIdx.x], local[threadIdx.x]);
}

extern "C" __global__ void writes_its_input(const float* x, float* y, int n) {
    int i = threadIdx.x;
    float* scratch = (float*)x;
    if (i < n) scratch[i] = 2.0f * x[i];  // READONLY: x is const
    if (i < n) y[i] = x[i];
}

extern "C" __global__ void scale(const float* x, float* y, int n) {
    int i = threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i];
}

// Lanes of one warp: __syncwarp orders their shared-memory accesses; without it they race.
extern "C" __global__ void warp_exchange(int* out, int sync) {
    __shared__ int s[32];
    int lane = threadIdx.x;
    s[lane] = lane * lane;
    if (sync) __syncwarp();
    out[lane] = s[31 - lane];  // WARP-READ
}

// The legacy warp-synchronous reduction: volatile, no __syncwarp — a race since Volta.
extern "C" __global__ void legacy_warp_reduce(const int* x, int* out) {
    __shared__ volatile int s[64];
    int t = threadIdx.x;
    s[t] = x[t];
    s[t + 32] = x[t + 32];
    __syncwarp();
    s[t] += s[t + 32];
    s[t] += s[t + 16];  // LEGACY: lanes read what others write in the same step
    s[t] += s[t + 8];
    if (t == 0) out[0] = s[0];
}

// Accesses that the kernel's own lines do not show: through a reference, inside a macro.
__device__ void add_to(float& total, float v) { total += v; }  // REF: every thread adds into one total
__device__ void store(float& dst, float v) { dst = v; }         // writes only: binding dst reads nothing

extern "C" __global__ void sum_through_a_reference(const float* x, float* out) {
    __shared__ float total[1];
    if (threadIdx.x == 0) total[0] = 0.0f;
    __syncthreads();
    add_to(total[0], x[threadIdx.x]);
    __syncthreads();
    if (threadIdx.x == 0) out[0] = total[0];
}

extern "C" __global__ void reverse_through_references(const float* x, float* y, int sync) {
    __shared__ float s[64];
    int t = threadIdx.x;
    store(s[t], x[t]);
    float& mine = s[63 - t];
    if (sync) __syncthreads();
    y[t] = mine;  // LOCALREF: s[63 - t] read through a reference
}

struct Slot {
    __device__ void set(float& dst, float v) { dst = v; }  // a method that writes through a reference
};

extern "C" __global__ void reverse_through_a_method(const float* x, float* y) {
    __shared__ float s[64];
    Slot slot;
    slot.set(s[threadIdx.x], x[threadIdx.x]);
    __syncthreads();
    y[threadIdx.x] = s[63 - threadIdx.x];
}

#define PUT(array, i, value) array[i] = value
#define SWAP(a, b) { float tmp_ = a; a = b; b = tmp_; }

extern "C" __global__ void mark_through_a_macro(const int* values, int* seen) {
    PUT(seen, values[threadIdx.x], threadIdx.x + 1);  // MACRO-PUT: two threads, one element
}

extern "C" __global__ void swap_halves_through_a_macro(float* x, int sync) {
    __shared__ float s[64];
    int t = threadIdx.x;
    s[t] = x[t];
    __syncthreads();
    if (t < 32) SWAP(s[t], s[t + 32]);
    if (sync) __syncthreads();
    x[t] = s[t];  // MACRO-SWAP: read while another thread swaps
}

// Two tiles in one declaration; the barrier after the inner loop is optional here.
#define TILE 8
extern "C" __global__ void tiled_matmul(const float* A, const float* B, float* C, int n, int second_barrier) {
    __shared__ float As[TILE][TILE], Bs[TILE][TILE];
    int r = blockIdx.y * TILE + threadIdx.y, c = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < n / TILE; ++t) {
        As[threadIdx.y][threadIdx.x] = A[r * n + t * TILE + threadIdx.x];  // TILE-WRITE
        Bs[threadIdx.y][threadIdx.x] = B[(t * TILE + threadIdx.y) * n + c];
        __syncthreads();
        for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];  // TILE-READ
        if (second_barrier) __syncthreads();
    }
    C[r * n + c] = acc;
}

// float4 loads: from a + offset, which must be a multiple of 4 floats (16 bytes).
extern "C" __global__ void sum_float4(const float* a, float* out, int offset) {
    const float4* v = reinterpret_cast<const float4*>(a + offset);
    float4 x = v[threadIdx.x];  // VEC: a float4 load
    out[threadIdx.x] = x.x + x.y + x.z + x.w;
}

// Many threads store one value into one flag: whichever is last, the flag is the same.
extern "C" __global__ void any_positive(const int* x, int* found_any, int* first, int racy) {
    __shared__ int found;
    if (threadIdx.x == 0) found = 0;
    __syncthreads();
    if (x[threadIdx.x] > 0) found = racy ? (int)threadIdx.x : 1;  // FLAG: same value, or the thread's own
    if (x[threadIdx.x] > 0) found_any[0] = 1;                       // GLOBAL-FLAG
    __syncthreads();
    if (threadIdx.x == 0) first[blockIdx.x] = found;
}

// Counting in shared memory with atomicAdd: the barriers before and after the atomics matter.
extern "C" __global__ void count_positive(const int* x, int* out, int barrier_before, int barrier_after) {
    __shared__ int count;
    if (threadIdx.x == 0) count = 0;  // COUNT-INIT
    if (barrier_before) __syncthreads();
    if (x[threadIdx.x] > 0) atomicAdd(&count, 1);  // COUNT-ADD
    if (barrier_after) __syncthreads();
    if (threadIdx.x == 0) out[blockIdx.x] = count;  // COUNT-READ
}

// A struct in shared memory: one variable, or an array of them.
struct Stats { float sum; int count; };
extern "C" __global__ void struct_totals(const float* x, float* out, int racy) {
    __shared__ Stats stats;
    __shared__ Stats per_half[2];
    if (threadIdx.x == 0) stats.sum = 0.0f, stats.count = 0, per_half[0] = {0.0f, 0}, per_half[1] = {0.0f, 0};
    __syncthreads();
    if (racy) stats.sum += x[threadIdx.x];  // STRUCT: every thread adds into one member
    else atomicAdd(&stats.sum, x[threadIdx.x]);
    if (racy > 1) per_half[threadIdx.x / 32].count += 1;  // STRUCT-ARRAY
    __syncthreads();
    if (threadIdx.x == 0) out[0] = stats.sum;
}

// PMPP's Kogge-Stone scan, with the barrier at the top of the loop only: a thread that gets ahead
// writes its element before a neighbour has read it, in one pass through the loop's body. `split`:
// the read and the write as two statements, else as one `+=`.
extern "C" __global__ void kogge_stone_one_barrier(const float* x, float* y, int n, int split) {
    __shared__ float xy[128];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    xy[threadIdx.x] = i < n ? x[i] : 0.0f;
    for (unsigned stride = 1; stride < blockDim.x; stride *= 2) {
        __syncthreads();
        if (split) {
            float sum = 0.0f;
            if (threadIdx.x >= stride) sum = xy[threadIdx.x] + xy[threadIdx.x - stride];  // KS-READ
            if (threadIdx.x >= stride) xy[threadIdx.x] = sum;  // KS-WRITE: its neighbour may not have read it yet
        } else if (threadIdx.x >= stride) {
            xy[threadIdx.x] += xy[threadIdx.x - stride];  // KS-ONE
        }
    }
    if (i < n) y[i] = xy[threadIdx.x];
}
