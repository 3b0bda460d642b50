// Kernels the parity tests (tests/test_cuda_kernels.py) compare with NumPy, one module so
// the CPU backend compiles them all at once. Written as a lesson would write them.

#define TILE 16
#define TRANSPOSE_TILE 32
#define TRANSPOSE_ROWS 8

extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

extern "C" __global__ void saxpy(float alpha, const float* __restrict__ x, float* __restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = alpha * x[i] + y[i];
}

// Fewer threads than elements: each thread strides over the array.
extern "C" __global__ void grid_stride_scale(float* x, float factor, long long n) {
    for (long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)blockDim.x * gridDim.x) {
        x[i] *= factor;
    }
}

// 3x3 box blur; the border is copied.
extern "C" __global__ void blur3x3(const float* in, float* out, int height, int width) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= height || col >= width) return;
    if (row == 0 || col == 0 || row == height - 1 || col == width - 1) {
        out[row * width + col] = in[row * width + col];
        return;
    }
    float sum = 0.0f;
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++)
            sum += in[(row + dy) * width + (col + dx)];
    out[row * width + col] = sum / 9.0f;
}

// Transpose through a shared tile; the +1 column avoids shared-memory bank conflicts.
extern "C" __global__ void transpose_tiled(const float* in, float* out, int height, int width) {
    __shared__ float tile[TRANSPOSE_TILE][TRANSPOSE_TILE + 1];
    int x = blockIdx.x * TRANSPOSE_TILE + threadIdx.x;
    int y = blockIdx.y * TRANSPOSE_TILE + threadIdx.y;
    for (int j = 0; j < TRANSPOSE_TILE; j += TRANSPOSE_ROWS)
        if (x < width && y + j < height) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
    __syncthreads();
    x = blockIdx.y * TRANSPOSE_TILE + threadIdx.x;
    y = blockIdx.x * TRANSPOSE_TILE + threadIdx.y;
    for (int j = 0; j < TRANSPOSE_TILE; j += TRANSPOSE_ROWS)
        if (x < height && y + j < width) out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}

// One partial sum per block, in dynamic shared memory (shared_mem = blockDim.x * 4 bytes).
extern "C" __global__ void block_sum(const float* x, float* partial, int n) {
    extern __shared__ float buffer[];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    buffer[tid] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (unsigned int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (tid < stride) buffer[tid] += buffer[tid + stride];
        __syncthreads();
    }
    if (tid == 0) partial[blockIdx.x] = buffer[0];
}

// 256-bin histogram: a private copy per block in shared memory, then merged with atomics.
extern "C" __global__ void histogram256(const unsigned char* pixels, unsigned int* bins, int n) {
    __shared__ unsigned int local[256];
    for (int b = threadIdx.x; b < 256; b += blockDim.x) local[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&local[pixels[i]], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < 256; b += blockDim.x)
        if (local[b]) atomicAdd(bins + b, local[b]);
}

extern "C" __global__ void matmul_tiled(const float* A, const float* B, float* C, int M, int N, int K) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y;
    int col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < (K + TILE - 1) / TILE; t++) {
        int a_col = t * TILE + threadIdx.x, b_row = t * TILE + threadIdx.y;
        As[threadIdx.y][threadIdx.x] = (row < M && a_col < K) ? A[row * K + a_col] : 0.0f;
        Bs[threadIdx.y][threadIdx.x] = (b_row < K && col < N) ? B[b_row * N + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; k++) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N) C[row * N + col] = acc;
}

// Every thread of a 3-D grid of 3-D blocks writes its global (x, y, z) and block coordinates.
extern "C" __global__ void index_3d(int* coords, int* blocks, int nx, int ny, int nz) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    if (x >= nx || y >= ny || z >= nz) return;
    int i = (z * ny + y) * nx + x;
    coords[3 * i + 0] = x;
    coords[3 * i + 1] = y;
    coords[3 * i + 2] = z;
    blocks[i] = blockIdx.x + 100 * blockIdx.y + 10000 * blockIdx.z + 1000000 * (gridDim.x + blockDim.y);
}

__device__ float clamp01(float v) { return fminf(fmaxf(v, 0.0f), 1.0f); }
__device__ __forceinline__ float pixel_at(const float* image, int row, int col, int width) {
    return image[row * width + col];
}
__host__ __device__ inline int square(int v) { return v * v; }

// Uses __device__ helpers, one taking a pointer.
extern "C" __global__ void helpers(const float* image, float* out, int* squares, int height, int width) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < height && col < width) {
        out[row * width + col] = clamp01(2.0f * pixel_at(image, row, col, width) - 0.5f);
        squares[row * width + col] = square(row - col);
    }
}

extern "C" __global__ void gaussian_double(const double* x, double* y, double mu, double sigma, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        double z = (x[i] - mu) / sigma;
        y[i] = exp(-0.5 * z * z) / (sigma * sqrt(2.0 * M_PI));
    }
}

// An RGB image (height x width x 3, uint8) to inverted grey, with a threshold mask.
extern "C" __global__ void grey_invert(const unsigned char* rgb, unsigned char* grey, unsigned char* mask,
                                       int pixels, unsigned char threshold) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= pixels) return;
    unsigned int sum = rgb[3 * i] + rgb[3 * i + 1] + rgb[3 * i + 2];
    unsigned char g = (unsigned char)(sum / 3);
    grey[i] = 255 - g;
    mask[i] = g > threshold ? 1 : 0;
}

extern "C" __global__ void say_hello(int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) printf("hello from thread %d of block %d, value %.2f\n", threadIdx.x, blockIdx.x, i * 0.5f);
}

// Integer atomics on one array of counters; float and double sums.
extern "C" __global__ void atomics(const int* values, int* ints, unsigned int* uints, float* fsum,
                                   double* dsum, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int v = values[i];
    atomicAdd(&ints[0], v);
    atomicSub(&ints[1], v);
    atomicMin(&ints[2], v);
    atomicMax(&ints[3], v);
    atomicAdd(&uints[0], 1u);
    atomicMax(&uints[1], (unsigned int)i);
    atomicMin(&uints[2], (unsigned int)i);
    if (v == 7) atomicExch(&ints[4], i);
    atomicCAS(&ints[5], 0, 42);  // only the first thread changes it
    atomicAdd(fsum, 0.5f);
    atomicAdd(dsum, (double)v);
}

extern "C" __global__ void math_functions(const float* x, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];  // v in [0.5, 4)
    float* o = out + 12 * i;  // a plain pointer into an argument array
    o[0] = sqrtf(v);
    o[1] = expf(-v);
    o[2] = fminf(v, 2.0f);
    o[3] = fmaxf(v, 2.0f);
    o[4] = (float)min(i, 3) + (float)max(i, 3);
    o[5] = fabsf(1.0f - v);
    o[6] = powf(v, 1.5f);
    o[7] = logf(v);
    o[8] = floorf(v);
    o[9] = rsqrtf(v);
    o[10] = __fdividef(1.0f, v);
    o[11] = tanhf(v) + ceilf(v) + __expf(0.0f);
}

// short, unsigned, long long and const scalars; a ternary and a do-while loop.
extern "C" __global__ void integer_types(const short* s, unsigned int* u, long long* big, const unsigned int scale, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    u[i] = (unsigned int)(s[i] < 0 ? -s[i] : s[i]) * scale;
    long long acc = 1;
    int k = 0;
    do {
        acc *= 3;
        k++;
    } while (k < i % 5);
    big[i] = acc * 1000000007LL;
}

// __syncthreads_count: how many threads of the block hold an even value.
extern "C" __global__ void count_even(const int* x, int* counts) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int even = __syncthreads_count(x[i] % 2 == 0);
    if (threadIdx.x == 0) counts[blockIdx.x] = even;
}
