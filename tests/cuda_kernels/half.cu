// Half-precision kernels for tests/test_cuda_half.py (cuda_fp16.h / cuda_bf16.h).
#include <cuda_fp16.h>
#include <cuda_bf16.h>

extern "C" __global__ void half_round_trip(const __half* h, float* as_float, const float* f, __half* as_half, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        as_float[i] = __half2float(h[i]);
        as_half[i] = __float2half(f[i]);
    }
}

// Each thread: a dot product of its row, two halves at a time, in half2 arithmetic.
extern "C" __global__ void half2_dot(const half2* a, const half2* b, __half* out, int pairs_per_row, int rows) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;
    half2 acc = __float2half2_rn(0.0f);
    for (int k = 0; k < pairs_per_row; ++k)
        acc = __hadd2(acc, __hmul2(a[row * pairs_per_row + k], b[row * pairs_per_row + k]));
    out[row] = __hadd(__low2half(acc), __high2half(acc));
}

extern "C" __global__ void half_scale(__half* x, __half alpha, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * alpha + __float2half(1.0f);
}

extern "C" __global__ void bf16_round_trip(const __nv_bfloat16* b, float* as_float, const float* f,
                                           __nv_bfloat16* as_bf16, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        as_float[i] = __bfloat162float(b[i]);
        as_bf16[i] = __float2bfloat16(f[i]);
    }
}

extern "C" __global__ void float_kernel(const float* x, float* y, int n) {
    int i = threadIdx.x;
    if (i < n) y[i] = x[i];
}
