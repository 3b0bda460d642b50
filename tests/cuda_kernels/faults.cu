// Buggy kernels for tests/test_cuda_faults.py: each bug sits on a line marked with a comment
// the tests look for, so the expected line numbers follow edits to this file.

extern "C" __global__ void fill(float* out, float value, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = value;
}

extern "C" __global__ void write_past_end(float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = 1.0f;  // BUG: no bounds check
}

extern "C" __global__ void read_past_end(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i + 1];  // BUG: reads in[n]
}

__device__ float left_neighbour(const float* x, int i) {
    return x[i - 1];  // BUG: x[-1] for i == 0
}

extern "C" __global__ void read_before_start(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = left_neighbour(in, i);
}

extern "C" __global__ void shared_too_small(float* out) {
    extern __shared__ float scratch[];
    scratch[threadIdx.x] = threadIdx.x;  // BUG: shared_mem too small
    __syncthreads();
    out[threadIdx.x] = scratch[blockDim.x - 1 - threadIdx.x];
}

extern "C" __global__ void early_return_before_barrier(const float* in, float* out, int n) {
    __shared__ float tile[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;  // BUG: these threads load nothing (others read their part of the tile)
    tile[threadIdx.x] = in[i];
    __syncthreads();  // BARRIER
    out[i] = tile[blockDim.x - 1 - threadIdx.x];
}

// The same guard is fine when no thread needs what the returned threads would have loaded: since
// Volta a barrier waits only for the threads that have not exited.
extern "C" __global__ void early_return_guard(const float* in, float* out, int n) {
    __shared__ float tile[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    tile[threadIdx.x] = 2 * in[i];
    __syncthreads();
    int partner = (i ^ 1) < n ? threadIdx.x ^ 1 : threadIdx.x;  // a neighbour that did not return
    out[i] = tile[partner];
}

extern "C" __global__ void barrier_skipped(const float* in, float* out) {
    __shared__ float s[256];
    int t = threadIdx.x;
    s[t] = in[blockIdx.x * blockDim.x + t];
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2)
        if (t < stride) {
            s[t] += s[t + stride];
            __syncthreads();  // SKIPPED: the threads with t >= stride go past it
        }
    if (t == 0) out[blockIdx.x] = s[0];
}

extern "C" __global__ void barriers_in_branches(float* out) {
    if (threadIdx.x < 16) {
        out[threadIdx.x] = 1.0f;
        __syncthreads();  // BARRIER-A
    } else {
        out[threadIdx.x] = 2.0f;
        __syncthreads();  // BARRIER-B
    }
}

extern "C" __global__ void spin_forever(volatile int* flag) {
    while (flag[0] == 0) {  // BUG: nobody sets the flag
        if (threadIdx.x == 0) flag[1] += 1;  // (one counting thread: no lost updates)
    }
}

extern "C" __global__ void spin_forever_at_barrier(int* flag) {
    for (int round = 0; flag[0] == 0; round++) {  // BUG: endless
        __syncthreads();
    }
}

extern "C" __global__ void divide(const int* a, const int* b, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] / b[i];  // BUG: b[i] may be 0
}

extern "C" __global__ void wild_pointer(long long address, float* out) {
    float* p = (float*)address;
    out[threadIdx.x] = p[threadIdx.x];  // BUG: reads memory it does not own
}

__device__ int deep(int n, int* trail) {
    int local[64];
    local[n % 64] = n;
    trail[0] = n;
    int r = deep(n + 1, trail);  // BUG: never stops
    return local[(r + n * 7) % 64];  // (after the call: each call keeps its own frame)
}

extern "C" __global__ void recurse_forever(int* trail) {
    trail[1] = deep(0, trail);
}

extern "C" __global__ void recurse_forever_in_block(int* trail) {
    __syncthreads();
    trail[1] = deep(0, trail);
}

extern "C" __global__ void checks_its_input(const int* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) assert(x[i] >= 0);  // ASSERT
}

extern "C" __global__ void talk_then_crash(float* out, int n) {
    int i = threadIdx.x;
    printf("thread %d was here\n", i);
    if (i == 3) out[n] = 0.0f;  // BUG: one past the end
}

extern "C" __global__ void takes_everything(const float* x, double* y, unsigned char* image, int n,
                                            unsigned int count, float scale, long long big, bool flag) {
    if (threadIdx.x == 0) y[0] = (double)x[0] + n + count + scale + big + flag + image[0];
}

// Four accesses on four lines; `which` picks the one that goes out of bounds.
extern "C" __global__ void many_accesses(const float* a, const float* b, float* out, int which, int n) {
    int i = threadIdx.x;
    float x = a[i + (which == 0 ? n : 0)];  // ACCESS-0
    float y = b[i + (which == 1 ? n : 0)];  // ACCESS-1
    out[i + (which == 2 ? n : 0)] = x + y;  // ACCESS-2
    out[i + (which == 3 ? n : 0)] += a[n - 1 - i] * b[i];  // ACCESS-3
}
