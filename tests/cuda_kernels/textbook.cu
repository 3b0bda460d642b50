// Correct kernels written the way textbooks and sample collections write them (the course's own
// versions): every sanitizer check on, none may report anything.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

// A halo tile in shared memory and a 2-D mask in constant memory.
#define RADIUS 2
#define IN_TILE 16
#define OUT_TILE ((IN_TILE) - 2 * (RADIUS))
__constant__ float mask[2 * RADIUS + 1][2 * RADIUS + 1];

extern "C" __global__ void convolve_tiled(const float* in, float* out, int width, int height) {
    __shared__ float tile[IN_TILE][IN_TILE];
    int col = blockIdx.x * OUT_TILE + threadIdx.x - RADIUS;
    int row = blockIdx.y * OUT_TILE + threadIdx.y - RADIUS;
    bool inside = row >= 0 && row < height && col >= 0 && col < width;
    tile[threadIdx.y][threadIdx.x] = inside ? in[row * width + col] : 0.0f;
    __syncthreads();
    int tx = threadIdx.x - RADIUS, ty = threadIdx.y - RADIUS;
    if (inside && tx >= 0 && tx < OUT_TILE && ty >= 0 && ty < OUT_TILE) {
        float sum = 0.0f;
        for (int r = 0; r < 2 * RADIUS + 1; r++)
            for (int c = 0; c < 2 * RADIUS + 1; c++) sum += mask[r][c] * tile[ty + r][tx + c];
        out[row * width + col] = sum;
    }
}

// A private histogram per block, several input elements per thread, bins cleared in a strided loop.
#define BINS 7
#define PER_THREAD 4
extern "C" __global__ void letter_histogram(const char* text, unsigned int length, unsigned int* histogram) {
    __shared__ unsigned int local[BINS];
    for (unsigned int bin = threadIdx.x; bin < BINS; bin += blockDim.x) local[bin] = 0u;
    __syncthreads();
    unsigned int first = (blockIdx.x * blockDim.x + threadIdx.x) * PER_THREAD;
    for (unsigned int i = first; i < min(first + PER_THREAD, length); ++i) {
        int letter = text[i] - 'a';
        if (letter >= 0 && letter < 26) atomicAdd(&(local[letter / 4]), 1u);
    }
    __syncthreads();
    for (unsigned int bin = threadIdx.x; bin < BINS; bin += blockDim.x)
        if (local[bin] > 0) atomicAdd(&(histogram[bin]), local[bin]);
}

// Dynamic shared memory through a small proxy object, and a cooperative-groups barrier per halving.
template <class T>
struct Scratch {
    __device__ operator T*() { extern __shared__ int scratch_words[]; return (T*)scratch_words; }
};
template <class T, unsigned int THREADS>
__global__ void block_sum(const T* in, T* out, unsigned int n) {
    cg::thread_block block = cg::this_thread_block();
    T* partial = Scratch<T>();
    unsigned int t = threadIdx.x, i = blockIdx.x * THREADS + t;
    partial[t] = i < n ? in[i] : T(0);
    cg::sync(block);
    for (unsigned int half = THREADS / 2; half > 0; half >>= 1) {
        if (t < half) partial[t] += partial[t + half];
        cg::sync(block);
    }
    if (t == 0) out[blockIdx.x] = partial[0];
}

// A tile loader written as a multi-line macro.
#define SIDE 8
#define LOAD(tile, from, r, c, ld)                                 \
    do {                                                           \
        tile[threadIdx.y][threadIdx.x] = from[(r) * (ld) + (c)];   \
    } while (0)
extern "C" __global__ void matmul_macro_tiles(const float* A, const float* B, float* C, int n) {
    __shared__ float As[SIDE][SIDE], Bs[SIDE][SIDE];
    int row = blockIdx.y * SIDE + threadIdx.y, col = blockIdx.x * SIDE + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < n / SIDE; ++t) {
        LOAD(As, A, row, t * SIDE + threadIdx.x, n);
        LOAD(Bs, B, t * SIDE + threadIdx.y, col, n);
        __syncthreads();
        for (int k = 0; k < SIDE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    C[row * n + col] = acc;
}
