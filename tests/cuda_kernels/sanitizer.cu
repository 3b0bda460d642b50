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
