// Kernels for the RawModule tests (tests/test_cuda_module.py): templates, __constant__ memory.
#define MAX_TAPS 9

__constant__ float taps[MAX_TAPS];
__constant__ int tap_count;
__device__ int launches;

// 1-D convolution with a mask in constant memory, filled from the host with get_global.
extern "C" __global__ void convolve(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int half = tap_count / 2;
    float acc = 0.0f;
    for (int k = 0; k < tap_count; ++k) {
        int j = i + k - half;
        if (j >= 0 && j < n) acc += taps[k] * in[j];
    }
    out[i] = acc;
    if (i == 0) atomicAdd(&launches, 1);
}

// A block reduction for any element type and block size, instantiated by name expression.
template <typename T, int BLOCK>
__global__ void reduce(const T* x, T* partial, int n) {
    __shared__ T buffer[BLOCK];
    int t = threadIdx.x, i = blockIdx.x * BLOCK + t;
    buffer[t] = i < n ? x[i] : T(0);
    __syncthreads();
    for (int stride = BLOCK / 2; stride > 0; stride >>= 1) {
        if (t < stride) buffer[t] += buffer[t + stride];
        __syncthreads();
    }
    if (t == 0) partial[blockIdx.x] = buffer[0];
}

// A C++ kernel (no extern "C") with an overloaded helper.
__device__ float twice(float v) { return 2 * v; }
__device__ double twice(double v) { return 2 * v; }
__global__ void double_it(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = twice(x[i]);
}
