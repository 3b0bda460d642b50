"""course.cuda runs the everyday CUDA C people paste: headers, typedefs, structs, casts, #if.

Each kernel is checked against NumPy on the CPU backend (and on CuPy when a GPU is usable).
"""

import re
from pathlib import Path

import numpy as np
import pytest

import course.cuda as cuda
from course import env
from course.cuda import source as cuda_source

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(params=["cpu", "cupy"])
def backend(request):
    if request.param == "cupy" and not env.cupy_usable():
        pytest.skip("no usable GPU: CuPy cannot run kernels here (the CPU backend is tested instead)")
    return request.param


def on(backend, a):
    if backend == "cupy":
        import cupy

        return cupy.asarray(a)
    return a


HEADERS = r"""
#include <cfloat>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cuda_runtime.h>
#include <math_constants.h>

extern "C" __global__ void constants(float* f, int* i, double* d) {
    if (threadIdx.x == 0) {
        f[0] = FLT_MAX; f[1] = -FLT_MAX; f[2] = CUDART_PI_F; f[3] = CUDART_INF_F; f[4] = FLT_EPSILON;
        i[0] = INT_MAX; i[1] = INT_MIN; i[2] = (int)UINT8_MAX; i[3] = warpSize;
        d[0] = CUDART_PI; d[1] = DBL_MAX;
    }
}
"""


def test_headers_and_constants(backend):
    f, i, d = on(backend, np.zeros(5, np.float32)), on(backend, np.zeros(4, np.int32)), on(backend, np.zeros(2))
    cuda.RawKernel(HEADERS, "constants", backend=backend)((1,), (1,), (f, i, d))
    f, i, d = cuda.asnumpy(f), cuda.asnumpy(i), cuda.asnumpy(d)
    big = np.finfo(np.float32).max
    assert list(f[:2]) == [big, -big] and f[2] == np.float32(np.pi) and np.isinf(f[3])
    assert f[4] == np.finfo(np.float32).eps
    assert list(i) == [2**31 - 1, -(2**31), 255, 32]
    assert d[0] == np.pi and d[1] == np.finfo(np.float64).max


TYPES = r"""
typedef float real;
using index_t = unsigned int;
struct Affine { float scale; int shift; double unused; };

extern "C" __global__ void typed(const REAL* x, real* y, uint n, size_t m, index_t k, Affine a) {
    uint i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * a.scale + a.shift + (float)(m - k);
}
"""


def test_typedef_define_uint_size_t_and_a_struct_by_value(backend):
    n = 100
    x = np.arange(n, dtype=np.float32)
    y = np.zeros(n, np.float32)
    affine = np.dtype([("scale", np.float32), ("shift", np.int32), ("unused", np.float64)], align=True)
    a = np.array((2.0, 3, 0.0), dtype=affine)[()]
    k = cuda.RawKernel(TYPES, "typed", backend=backend, options=("-DREAL=float",))
    assert [p.dtype for p in k.params][:5] == ["float32", "float32", "uint32", "uint64", "uint32"]
    y_dev = on(backend, y)
    k((1,), (128,), (on(backend, x), y_dev, n, 10, 4, a))
    np.testing.assert_array_equal(cuda.asnumpy(y_dev), 2 * x + 3 + 6)


def test_a_struct_of_the_wrong_size_is_explained():
    bad = np.dtype([("scale", np.float32), ("shift", np.int32)])  # 8 bytes, the struct has 16
    k = cuda.RawKernel(TYPES, "typed", backend="cpu", options=("-DREAL=float",))
    x = np.zeros(4, np.float32)
    with pytest.raises(cuda.KernelError, match=r"got 8 bytes for parameter 'a' .*is 16 bytes"):
        k((1,), (4,), (x, x.copy(), 4, 0, 0, np.zeros(1, bad)[0]))


def test_a_structs_fields_in_another_order_or_of_other_kinds_are_named():
    """A structured argument of the struct's size is read member by member: fields named as the members but in
    another order, or ints where it has floats, are refused with the members listed (probe 13: silently read)."""
    k = cuda.RawKernel(TYPES, "typed", backend="cpu", options=("-DREAL=float",))
    x = np.arange(4, dtype=np.float32)
    swapped = np.dtype([("shift", np.int32), ("scale", np.float32), ("unused", np.float64)], align=True)
    with pytest.raises(TypeError, match=r"parameter 'a' \(Affine a\): the struct's members are \(scale float, shift "
                                        r"int, unused double\), in this order, but the argument's fields come in "
                                        r"another order \(shift, scale, unused\)"):
        k((1,), (4,), (x, x.copy(), 4, 0, 0, np.array((3, 2.0, 0.0), swapped)[()]))
    ints = np.dtype("i4,i4,f8", align=True)
    with pytest.raises(TypeError, match=r"but the argument's fields are \(f0 int, f1 int, f2 double\): its bytes "
                                        r"would be read as other numbers"):
        k((1,), (4,), (x, x.copy(), 4, 0, 0, np.array((2, 3, 0.0), ints)[()]))
    y = np.zeros(4, np.float32)
    renamed = np.dtype([("s", np.float32), ("t", np.int32), ("u", np.float64)], align=True)  # names of its own
    k((1,), (4,), (x, y, 4, 0, 0, np.array((2.0, 3, 0.0), renamed)[()]))
    assert y.tolist() == (2 * x + 3).tolist()



PARTICLES = r"""
struct Particle { float x, y, z; int id; };
extern "C" __global__ void tag(Particle* p, int n) {
    int i = threadIdx.x;
    if (i < n) { p[i].x += 1.0f; p[i].id = i; }
}
extern "C" __global__ void lanes(int2 v, uchar4 c, float4 f, int* out, float* fout) {
    out[0] = v.x; out[1] = v.y; out[2] = c.x; out[3] = c.w; fout[0] = f.y;
}
"""


def test_a_pointer_to_structs_takes_records_of_its_members_in_their_order():
    """A Particle* is read member by member as a by-value Particle is: records with the fields in another order,
    or a float64 array for a struct of floats and ints, were silently read as other numbers (red team, 12-06)."""
    module = cuda.RawModule(code=PARTICLES, backend="cpu")
    tag = module.get_function("tag")
    swapped = np.zeros(4, np.dtype([("id", "i4"), ("x", "f4"), ("y", "f4"), ("z", "f4")]))
    with pytest.raises(TypeError, match=r"parameter 'p' \(Particle\* p\): the struct's members are \(x float, y float, "
                                        r"z float, id int\), in this order, but the argument's fields come in another "
                                        r"order \(id, x, y, z\)"):
        tag((1,), (4,), (swapped, 4))
    with pytest.raises(TypeError, match=r"points to structs of \(x float, y float, z float, id int\), but the array "
                                        r"holds float64, which no member is.*np.dtype\(\[\('x', 'float32'\)"):
        tag((1,), (4,), (np.zeros(8, np.float64), 4))
    right = np.zeros(4, np.dtype([("x", "f4"), ("y", "f4"), ("z", "f4"), ("id", "i4")]))
    tag((1,), (4,), (right, 4))
    assert right["id"].tolist() == [0, 1, 2, 3] and right["x"].tolist() == [1.0] * 4
    flat = np.zeros(16, np.float32)  # floats for a struct with floats: raw memory, as a learner may lay it out
    tag((1,), (4,), (flat, 4))
    assert flat[0::4].tolist() == [1.0] * 4


def test_a_vector_passed_by_value_checks_each_lane_as_a_scalar_of_its_type():
    """int2 (1.7, 2.9) became (1, 2), 2**32 + 5 became 5 and a uchar4's 300 became 44, silently, where a scalar int
    parameter refuses them (red team, 12-06)."""
    k = cuda.RawModule(code=PARTICLES, backend="cpu").get_function("lanes")
    out, fout = np.zeros(4, np.int32), np.zeros(1, np.float32)
    for v, c, error in [((1.7, 2.9), (0, 0, 0, 0), r"\(int2 v\), lane x: is an integer, but got the float 1.7"),
                        ((1, 2**32 + 5), (0, 0, 0, 0), r"\(int2 v\), lane y: 4294967301 does not fit in int"),
                        ((1, 2), (0, 0, 0, 300), r"\(uchar4 c\), lane w: 300 does not fit in unsigned char \(0 to 255\)"),
                        ((1, 2), (-1, 0, 0, 0), r"lane x: -1 does not fit in unsigned char"),
                        (np.array([1.0, 2.0]), (0, 0, 0, 0), r"an int2 holds integers, but the array holds float64")]:
        with pytest.raises((TypeError, ValueError), match=error):
            k((1,), (1,), (v, c, (0, 1, 2, 3), out, fout))
    k((1,), (1,), ((-5, np.int32(7)), np.array([1, 2, 3, 255], np.uint8), (0, 2.5, 0, 0), out, fout))
    assert out.tolist() == [-5, 7, 1, 255] and fout[0] == 2.5


RECORDS = r"""
struct __align__(16) RGB { unsigned int r, g, b; };   // 16 bytes: 12 of fields and 4 of padding
struct Pixel { unsigned char r, g, b; float weight; };  // 8 bytes: the float is 4-aligned
extern "C" __global__ void copy_rgb(RGB* out, const RGB* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i];
}
extern "C" __global__ void weigh(Pixel* p, const float* xyz, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i].weight = p[i].g * xyz[3 * i + 1];
}
"""


def test_a_record_array_must_have_the_structs_size_with_its_padding():
    """The classic layout bug: a NumPy record dtype without C's padding (or without an __align__
    struct's size). The kernel would find every record after the first at the wrong place."""
    module = cuda.RawModule(code=RECORDS, backend="cpu")
    packed = np.dtype([("r", np.uint32), ("g", np.uint32), ("b", np.uint32)])  # 12 bytes: 4 of them = 3 RGBs
    with pytest.raises(cuda.KernelError, match=r"got an array of 12-byte records for parameter 'out' \(RGB\* out\), "
                                               r"but each RGB is 16 bytes(?s:.*)'itemsize': 16"):
        module.get_function("copy_rgb")((1,), (4,), (np.zeros(4, packed), np.zeros(4, packed), 3))
    padded = np.dtype({"names": ["r", "g", "b"], "formats": [np.uint32] * 3, "itemsize": 16}, align=True)
    src, dst = np.zeros(5, padded), np.zeros(5, padded)
    src["g"] = np.arange(5)
    module.get_function("copy_rgb")((1,), (8,), (dst, src, 5))
    assert list(dst["g"]) == list(range(5))
    pixel = np.dtype([("r", np.uint8), ("g", np.uint8), ("b", np.uint8), ("weight", np.float32)])  # 7 bytes, no padding
    with pytest.raises(cuda.KernelError, match=r"7-byte records for parameter 'p' \(Pixel\* p\), but each Pixel is 8"):
        module.get_function("weigh")((1,), (8,), (np.zeros(8, pixel), np.ones(24, np.float32), 8))
    pixels = np.zeros(8, np.dtype(pixel.descr, align=True))
    pixels["g"] = 2
    xyz = np.array(np.arange(24), np.float32)  # a float* may take any array of floats: no record check
    module.get_function("weigh")((1,), (8,), (pixels, xyz, 8))
    np.testing.assert_array_equal(pixels["weight"], 2 * xyz[1::3])


COMPLEX = r"""
#include <cuComplex.h>
extern "C" __global__ void complex_ops(const cuFloatComplex* a, const cuFloatComplex* b, cuFloatComplex* out,
                                       float* mag, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    cuFloatComplex p = cuCmulf(a[i], cuConjf(b[i]));
    out[4 * i + 0] = cuCaddf(p, make_cuFloatComplex(1.0f, 0.0f));
    out[4 * i + 1] = cuCdivf(a[i], b[i]);
    out[4 * i + 2] = cuCfmaf(a[i], b[i], cuCsubf(a[i], b[i]));
    out[4 * i + 3] = cuComplexDoubleToFloat(cuCmul(cuComplexFloatToDouble(a[i]), make_cuDoubleComplex(0.0, 2.0)));
    mag[i] = cuCabsf(a[i]) + cuCrealf(b[i]) - cuCimagf(b[i]);
}
extern "C" __global__ void scale(cuDoubleComplex* z, double k, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) z[i] = cuCmul(z[i], make_cuDoubleComplex(k, 0.0));
}
"""



def test_a_record_array_of_the_vector_types_fields_is_a_vector_array():
    """A NumPy record array with fields x and y of float32 is the memory of a float2 array (as a
    complex64 array is); for a float* it is two floats an element, and the message says how to pass
    it; a record of another type says how to convert it."""
    source = r"""
    extern "C" __global__ void length(const float2* p, float* out, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) out[i] = sqrtf(p[i].x * p[i].x + p[i].y * p[i].y);
    }
    extern "C" __global__ void first(const float* p, float* out) { out[threadIdx.x] = p[threadIdx.x]; }"""
    module = cuda.RawModule(code=source, backend="cpu")
    points = np.zeros(5, [("x", np.float32), ("y", np.float32)])
    points["x"], points["y"] = [3, 5, 8, 0, 1], [4, 12, 15, 2, 0]
    out = np.zeros(5, np.float32)
    module.get_function("length")((1,), (8,), (points, out, 5))
    np.testing.assert_array_equal(out, [5, 13, 17, 2, 1])
    with pytest.raises(TypeError, match=r"convert it with a.view\(np.float32\) \(its fields as one flat array\)"):
        module.get_function("first")((1,), (4,), (points, out))
    with pytest.raises(TypeError, match=r"convert it with a.view\(np.float64\).astype\(np.float32\)"):
        module.get_function("length")((1,), (8,), (np.zeros(5, [("x", np.float64), ("y", np.float64)]), out, 5))

def test_cucomplex_h_runs_on_complex_arrays(backend):
    """CUDA's cuComplex.h: cuFloatComplex* takes a complex64 array (cuDoubleComplex*, complex128),
    and its functions agree with NumPy's complex arithmetic (division and magnitude scaled first)."""
    rng = np.random.default_rng(3)
    n = 50
    a = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64)
    b = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64)
    a[0], b[0] = 3e30 + 4e30j, 1e30 - 2e30j  # naive division and magnitude overflow float32 here
    out, mag = np.zeros(4 * n, np.complex64), np.zeros(n, np.float32)
    module = cuda.RawModule(code=COMPLEX, backend=backend)
    out_dev, mag_dev = on(backend, out), on(backend, mag)
    module.get_function("complex_ops")((1,), (64,), (on(backend, a), on(backend, b), out_dev, mag_dev, n))
    with np.errstate(over="ignore", invalid="ignore"):  # (NumPy's products of element 0 overflow: not compared)
        got, want = cuda.asnumpy(out_dev).reshape(n, 4), np.stack(
            [a * b.conj() + 1, a / b, a * b + (a - b), a * 2j], axis=1)
    np.testing.assert_allclose(got[1:], want[1:], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[0, 1], a[0] / b[0], rtol=1e-5)
    np.testing.assert_allclose(cuda.asnumpy(mag_dev), np.abs(a) + b.real - b.imag, rtol=1e-5, atol=1e-5)
    z = (np.arange(8) + 1j).astype(np.complex128)
    z_dev = on(backend, z)
    module.get_function("scale")((1,), (8,), (z_dev, 0.5, 8))
    np.testing.assert_array_equal(cuda.asnumpy(z_dev), 0.5 * (np.arange(8) + 1j))
    # Without the #include, cuComplex is the source's own name (CUDA by Example's Julia set defines one)
    own = ("struct cuComplex { float r, i; __device__ float magnitude2() { return r * r + i * i; } };\n"
           'extern "C" __global__ void k(float* out) { cuComplex c{3, 4}; out[0] = c.magnitude2(); }')
    x = np.zeros(1, np.float32)
    cuda.RawKernel(own, "k", backend="cpu")((1,), (1,), (x,))
    assert x[0] == 25


FORTRAN = r"""
// C = A B for column-major (Fortran-order) matrices, as BLAS and CuPy's gemm example store them.
extern "C" __global__ void sgemm_colmajor(const float* A, const float* B, float* C, int m, int n, int k) {
    int row = blockIdx.x * TILE_M + threadIdx.x, col = blockIdx.y * TILE_N + threadIdx.y;
    if (row >= m || col >= n) return;
    float acc = 0.0f;
    for (int p = 0; p < k; ++p) acc += A[row + p * m] * B[p + col * k];
    C[row + col * m] = acc;
}
"""


def test_fortran_ordered_arrays_are_raw_memory(backend):
    m, n, k = 37, 21, 13
    rng = np.random.default_rng(0)
    a = np.asfortranarray(rng.standard_normal((m, k), dtype=np.float32))
    b = np.asfortranarray(rng.standard_normal((k, n), dtype=np.float32))
    c = np.asfortranarray(np.zeros((m, n), np.float32))
    kern = cuda.RawKernel(FORTRAN, "sgemm_colmajor", backend=backend, options=("-DTILE_M=16", "-DTILE_N=8"))
    c_dev = on(backend, c) if backend == "cpu" else __import__("cupy").asfortranarray(c)
    kern(((m + 15) // 16, (n + 7) // 8), (16, 8), (on(backend, a), on(backend, b), c_dev, m, n, k))
    np.testing.assert_allclose(cuda.asnumpy(c_dev), a @ b, rtol=1e-4, atol=1e-4)


def test_a_transposed_view_is_raw_memory_with_a_warning():
    """`rowsum(m.T, ...)` with a row-major kernel reads m's memory as it lies (as CuPy does): the data before the
    transpose. A KernelWarning says so and what to pass; an array made column-major on purpose gets none."""
    source = r"""
extern "C" __global__ void rowsum(const float* m, float* out, int rows, int cols) {
    int r = threadIdx.x;
    if (r < rows) { float s = 0; for (int c = 0; c < cols; c++) s += m[r * cols + c]; out[r] = s; }
}"""
    m, out = np.arange(6, dtype=np.float32).reshape(2, 3), np.zeros(3, np.float32)
    kernel = cuda.RawKernel(source, "rowsum", backend="cpu")
    with pytest.warns(cuda.KernelWarning, match=r"parameter 'm' .*column-major .*a transposed view such as m\.T.*pass "
                                                r"xp\.ascontiguousarray\(a\)"):
        kernel(1, 3, (m.T, out, 3, 2))
    assert out.tolist() == [1, 5, 9]  # rows of the memory as it lies, not of m.T
    kernel(1, 3, (np.ascontiguousarray(m.T), out, 3, 2))
    assert out.tolist() == [3, 5, 7]


CASTS = r"""
extern "C" __global__ void copy_float4(const float* in, float* out, int n4) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) reinterpret_cast<float4*>(out)[i] = reinterpret_cast<const float4*>(in)[i];
}
extern "C" __global__ void copy_float4_past_end(const float* in, float* out, int n4) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    const float4* v = reinterpret_cast<const float4*>(in);
    float4 value = v[i];  // BUG: no guard
    if (i < n4) ((float4*)out)[i] = value;
}
extern "C" __global__ void c_cast_past_end(void* raw, int n) {
    float* x = (float*)raw;
    int* bits = (int*)x;
    bits[threadIdx.x] = threadIdx.x;  // BUG: one thread too many
}
extern "C" __global__ void row_pointer_past_end(const float* A, float* out, int n) {
    const float* row = A + blockIdx.x * n;
    out[blockIdx.x] = row[n];  // BUG: one past the row (and past A for the last row)
}
extern "C" __global__ void address_of_element_past_end(const float* A, float* out, int n) {
    const float* p = &A[threadIdx.x];
    out[threadIdx.x] = p[1];  // BUG: the last thread reads A[n]
}
"""


def test_float4_casts_copy_and_stay_bounds_checked(backend):
    x = np.arange(64, dtype=np.float32)
    y = on(backend, np.zeros(64, np.float32))
    cuda.RawKernel(CASTS, "copy_float4", backend=backend)((1,), (32,), (on(backend, x), y, 16))
    np.testing.assert_array_equal(cuda.asnumpy(y), x)
    if backend == "cpu":
        with pytest.raises(cuda.KernelError, match=r"in\[64\] to in\[67\] in one 16-byte access \(element 16 of in "
                                                   r"seen through a 16-byte type.*\), but in has 64 elements: 16 whole "
                                                   r"16-byte elements \(valid indices 0 to 15\)\.") as info:
            cuda.RawKernel(CASTS, "copy_float4_past_end", backend="cpu")((1,), (32,), (x, np.zeros(64, np.float32), 16))
        assert info.value.thread == (16, 0, 0) and info.value.line == 9


@pytest.mark.parametrize("name, expected", [
    ("c_cast_past_end", r"raw\[8\], but raw has 8 elements"),
    ("row_pointer_past_end", r"A\[12\], but A has 12 elements"),
    ("address_of_element_past_end", r"A\[4\], but A has 4 elements"),
])
def test_pointers_made_from_arguments_keep_their_bounds(name, expected):
    if name == "c_cast_past_end":
        args, block = (np.zeros(8, np.int32), 8), (9,)
    elif name == "row_pointer_past_end":
        args, block = (np.ones(12, np.float32), np.zeros(3, np.float32), 4), (1,)
    else:
        args, block = (np.ones(4, np.float32), np.zeros(4, np.float32), 4), (4,)
    grid = (3,) if name == "row_pointer_past_end" else (1,)
    with pytest.raises(cuda.KernelError, match=expected) as info:
        cuda.RawKernel(CASTS, name, backend="cpu")(grid, block, args)
    assert "BUG" in cuda_source.parse(CASTS).line_text(info.value.line)


VOLATILE = r"""
__device__ void add_pair(volatile int* s, int t, int offset) { s[t] += s[t + offset]; }
template <class T> __device__ T load(const T* p, int i) { return p[i]; }
template <class T> __device__ void store(T* p, int i, T v) { p[i] = v; }

extern "C" __global__ void volatile_sum(const int* x, int* out) {
    extern __shared__ int s[];
    int t = threadIdx.x;
    s[t] = load(x, t);
    __syncthreads();
    for (int offset = 16; offset > 0; offset /= 2) {
        if (t < offset) add_pair(s, t, offset);
        __syncthreads();
    }
    if (t == 0) store(out, 0, s[0]);
}
"""


def test_volatile_shared_memory_and_template_helpers(backend):
    x = np.arange(32, dtype=np.int32)
    out = on(backend, np.zeros(1, np.int32))
    cuda.RawKernel(VOLATILE, "volatile_sum", backend=backend)((1,), (32,), (on(backend, x), out), shared_mem=48 * 4)
    assert int(cuda.asnumpy(out)[0]) == x.sum()


TEMPLATE_HELPERS = r"""
template <class T> __device__ T total(const T* x, int n) { T s = 0; for (int i = 0; i < n; i++) s += x[i]; return s; }
template <typename T> __device__ void shifted(const T* in, T* out, int n, T by) { for (int i = 0; i < n; i++) out[i] = in[i] + by; }
template <class T> __device__ T scaled(T a, const T* x, int i) { return a * x[i]; }
template <class T, int N> __device__ T first_n(const T* x) { T s = 0; for (int i = 0; i < N; i++) s += x[i]; return s; }
template <typename T> __device__ void fold(volatile T* s, int t) { if (t < 16) s[t] += s[t + 16]; }

extern "C" __global__ void helpers(const float* x, float* out, int n) {
    __shared__ float tile[32];
    extern __shared__ float dynamic[];
    float local[4] = {1, 2, 3, 4};
    int t = threadIdx.x;
    tile[t] = x[t % n];
    dynamic[t] = 1.0f;
    __syncthreads();
    fold(dynamic, t);                                 // volatile T* from extern __shared__ memory
    __syncthreads();
    if (t != 0) return;
    out[0] = total(x, n);                             // a const argument: T is float, so `T s` is a variable
    shifted(x, out + 1, 2, 10.0f);                    // const in, T* out, T by: one T
    out[3] = scaled(2.0f, x, 3) + total(out + 1, 2);  // and a non-const argument for const T*
    out[4] = total(tile, 32) + total(local, 4);       // a __shared__ array, a local array
    out[5] = first_n<float, 3>(x) + dynamic[0];       // explicit template arguments, a const argument
}
"""


def test_template_helpers_take_any_pointer_and_deduce_t_without_const(backend):
    """`template <class T> T total(const T* x, int n) { T s = 0; ... }` called with a `const float*`,
    a __shared__, local or extern __shared__ array, or with explicit template arguments: T is float,
    as nvcc deduces it."""
    x = np.arange(4, dtype=np.float32)
    out = on(backend, np.zeros(6, np.float32))
    cuda.RawKernel(TEMPLATE_HELPERS, "helpers", backend=backend)((1,), (32,), (on(backend, x), out, 4),
                                                                shared_mem=32 * 4)
    np.testing.assert_array_equal(cuda.asnumpy(out), [6, 10, 11, 2 * 3 + 21, 8 * 6 + 10, 3 + 2])
    if backend == "cpu":  # a store through T* given a const array does not compile, as with nvcc, and says why
        source = TEMPLATE_HELPERS + "template <class T> __device__ void zero(T* s) { s[0] = 0; }\n" \
            'extern "C" __global__ void writes_const(const float* x) { zero(x); }\n'
        with pytest.raises(cuda.CompileError, match=r"The kernel stores into const data: .* a template's `T\*` "
                                                    r"parameter given a const array \(T is then `const float`"):
            cuda.RawKernel(source, "writes_const", backend="cpu").compile()



POINTER_PARAMETERS = r"""
template <class T> __device__ T total(const T* x, int n, T* also = nullptr) {  // a T* that may be left out
    T s = 0;
    for (int k = 0; k < n; ++k) s += x[k];
    if (also) *also = s;
    return s;
}
template <class T> __device__ void swap_pointers(T** a, T** b) { T* t = *a; *a = *b; *b = t; }
__device__ void advance(const float** cursor, int by) { *cursor += by; }
__device__ float first_of(float** rows, int r) { return rows[r][0]; }
template <class T, class... Rest> __device__ T add_all(T first, Rest... rest) {
    if constexpr (sizeof...(rest) == 0) return first; else return first + add_all(rest...);
}
extern "C" __global__ void pointers(const float* x, float* y, float* z, int n) {
    __shared__ float s[4];
    float local[4] = {1, 2, 3, 4}, other = 0;
    if (threadIdx.x < 4) s[threadIdx.x] = x[threadIdx.x];
    __syncthreads();
    float* p = y;
    float* q = z;
    swap_pointers(&p, &q);                  // p is z now, q is y: both keep their bounds
    const float* c = x;
    advance(&c, 2);
    float* rows[2] = {y, z};
    if (threadIdx.x < n) p[threadIdx.x] = total(s, 4) + total(local, 4, &other) + other + c[threadIdx.x]
                                         + add_all(1.0f, 2.0f) + first_of(rows, 0);
}
"""


def test_pointer_to_pointer_parameters_defaulted_pointers_and_variadic_helpers(backend):
    x, y, z = np.arange(6, dtype=np.float32), np.full(4, 100, np.float32), np.zeros(4, np.float32)
    kernel = cuda.RawKernel(POINTER_PARAMETERS, "pointers", backend=backend)
    ys, zs = on(backend, y), on(backend, z)
    kernel((1,), (32,), (on(backend, x), ys, zs, 4))
    np.testing.assert_array_equal(cuda.asnumpy(zs), 6 + 10 + 10 + x[2:6] + 3 + 100)  # written through p = z
    np.testing.assert_array_equal(cuda.asnumpy(ys), 100)
    if backend == "cpu":  # p (z after the swap) and c (x + 2) kept their arrays' bounds
        with pytest.raises(cuda.KernelError, match=r"accessed x\[6\], but x has 6 elements"):
            kernel((1,), (32,), (x, y, z, 5))


DECLARATIONS = r"""
struct alignas(8) Pair { float a, b; };
extern "C" __global__ void declarations(const float* x, float* y) {
    __shared__ alignas(16) float tile[64];      // C++11 alignment on a __shared__ array
    __shared__ __align__(16) float other[4];    // CUDA's spelling
    alignas(float4) float staged[4] = {1, 2, 3, 4};
    int t = threadIdx.x;
    tile[t] = x[t];
    if (t < 4) other[t] = staged[t];
    __syncthreads();
    float sum = 0;
    for (float v : staged) sum += v;            // range-for over a local array
    Pair p{tile[63 - t], other[t % 4]};
    y[t] = sum + p.a + p.b + ((unsigned long long)&tile[0] % 16 == 0 ? 100 : 0) + alignof(Pair);
}
"""


def test_alignment_specifiers_and_range_for(backend):
    x, y = np.arange(64, dtype=np.float32), on(backend, np.zeros(64, np.float32))
    cuda.RawKernel(DECLARATIONS, "declarations", backend=backend)((1,), (64,), (on(backend, x), y))
    np.testing.assert_array_equal(cuda.asnumpy(y), 10 + x[::-1] + np.tile([1, 2, 3, 4], 16) + 100 + 8)

ARCH = r"""
#if __CUDA_ARCH__ >= 800
#define WHO 80
#else
#define WHO 0
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 700
__device__ float old_gpu(float x) { asm("this PTX is never compiled"); return x; }
#endif
__device__ float unused_helper(float x) { float y; asm("mov.f32 %0, %1;" : "=f"(y) : "f"(x)); return y; }
extern "C" __global__ void arch(int* out) { out[0] = WHO; }
"""


def test_cuda_arch_is_defined_and_dead_blocks_or_unused_helpers_refuse_nothing():
    out = np.zeros(1, np.int32)
    cuda.RawKernel(ARCH, "arch", backend="cpu")((1,), (1,), (out,))
    assert out[0] == cuda_source.EMULATED_ARCH // 10 == 80
    assert "sm_80" in cuda.device_name() or cuda.backend() == "cupy"


def test_preprocessor_conditions():
    evaluate = cuda_source._evaluate
    defines = {"__CUDA_ARCH__": "800", "N": "256", "FLAG": "1"}
    assert evaluate("__CUDA_ARCH__ >= 800 && N == 256", defines) is True
    assert evaluate("defined(FLAG) && !defined(OTHER)", defines) is True
    assert evaluate("UNDEFINED_NAME", defines) is False
    assert evaluate("SOME_MACRO(3) > 2", defines) is None  # undecidable: both branches stay
    tokens = cuda_source.tokenize("#ifdef FLAG\na\n#else\nb\n#endif\n#if N > 300\nc\n#elif N > 100\nd\n#endif\n")
    live = cuda_source._live_tokens(tokens, defines)
    assert [t.text for t, alive in zip(tokens, live) if alive and t.kind == "ident"] == ["a", "d"]


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "tests" / "cuda_kernels").glob("*.cu")))
def test_a_directive_line_between_any_two_lines_changes_nothing_in_the_rewrite(name):
    # A directive is a line of its own that C's grammar never sees: `#define TILE 16` before
    # `__shared__ float s[TILE];` leaves a declaration, `#endif` before `*p = v;` a store.
    text = (ROOT / "tests" / "cuda_kernels" / name).read_text()
    lines, continued = [], False
    for n, line in enumerate(text.split("\n")):
        if not continued and not line.lstrip().startswith("#"):
            lines.append(f"#define DIRECTIVE_{n} 1")
        lines.append(line)
        continued = line.rstrip().endswith("\\")
    plain = cuda_source.parse(text).cpu_text.split("\n")
    laced = [line for line in cuda_source.parse("\n".join(lines)).cpu_text.split("\n")
             if not line.startswith("#define DIRECTIVE_")]
    assert len(laced) == len(plain)
    for a, b in zip(plain, laced):  # the same rewrite (numbers aside: lines and sites moved)
        assert re.sub(r"\b\d+\b", "N", a) == re.sub(r"\b\d+\b", "N", b)


DIRECTIVES = r"""
extern "C" __global__ void tiled(const float* x, float* y, int offset) {
#define TILE 32
    __shared__ float s[TILE];
#ifdef SHIFTED
    const float* from = x + offset;
#else
    const float* from = x;
#endif
    s[threadIdx.x] = from[threadIdx.x];  // LOAD
    __syncthreads();
    y[threadIdx.x] = s[(threadIdx.x + 1) % TILE];
}
"""


def test_arrays_and_pointers_declared_after_a_directive_are_checked():
    x, y = np.arange(64, dtype=np.float32), np.zeros(64, np.float32)
    cuda.RawKernel(DIRECTIVES, "tiled", backend="cpu", sanitize=True)((1,), (32,), (x, y, 0))
    assert y[0] == 1 and y[31] == 0
    with pytest.raises(cuda.KernelError, match=r"accessed s\[32\], but that dimension of the __shared__ array s"):
        cuda.RawKernel(DIRECTIVES, "tiled", backend="cpu")((1,), (64,), (x, np.zeros(64, np.float32), 0))
    with pytest.raises(cuda.KernelError, match=r"accessed x\[64\], but x has 64 elements") as info:
        cuda.RawKernel(DIRECTIVES, "tiled", backend="cpu", options=("-DSHIFTED",))((1,), (32,), (x, y, 40))
    assert info.value.line == [n for n, line in enumerate(DIRECTIVES.split("\n"), 1) if "// LOAD" in line][0]


def test_unknown_parameter_types_pass_as_raw_memory():
    code = r"""
struct Particle { float x, y, vx, vy; };
extern "C" __global__ void move(Particle* p, int n, float dt) {
    int i = threadIdx.x;
    if (i < n) { p[i].x += p[i].vx * dt; p[i].y += p[i].vy * dt; }
}"""
    particle = np.dtype([("x", np.float32), ("y", np.float32), ("vx", np.float32), ("vy", np.float32)])
    p = np.zeros(5, particle)
    p["vx"], p["vy"] = 1.0, 2.0
    cuda.RawKernel(code, "move", backend="cpu")((1,), (8,), (p, 5, 0.5))
    assert (p["x"] == 0.5).all() and (p["y"] == 1.0).all()
    with pytest.raises(cuda.KernelError, match="not a whole number of its 16-byte elements"):
        cuda.RawKernel(code, "move", backend="cpu")((1,), (8,), (np.zeros(5, np.float32), 1, 0.5))


def test_on_cupy_what_the_checker_cannot_read_goes_through_with_a_note(monkeypatch, capsys):
    """CuPy launches float** and struct parameters; course.cuda must not refuse them there."""
    from course.cuda import kernel as kernel_module

    monkeypatch.setattr(kernel_module, "_cupy_usable", lambda: True)  # no GPU needed to build the kernel
    code = r"""
struct Params { float scale; int n; };
extern "C" __global__ void gather(const float** rows, float* out, Params p) { out[threadIdx.x] = rows[0][0] * p.scale; }
"""
    k = cuda.RawKernel(code, "gather", backend="cupy")
    assert k._unchecked and "on CuPy its arguments go unchecked" in capsys.readouterr().err
    with pytest.raises(cuda.CompileError, match="parameter rows has a type the course cannot pass"):
        cuda.RawKernel(code, "gather", backend="cpu")  # the CPU backend needs to know each argument
    struct_code = code.replace("const float** rows", "const float* rows").replace("rows[0][0]", "rows[0]")
    k = cuda.RawKernel(struct_code, "gather", backend="cupy")
    p = np.zeros(1, np.dtype([("scale", np.float32), ("n", np.int32)]))[0]
    assert kernel_module._check_struct(k._kernel, k.params[2], p, "cupy") is p
    assert "cannot check this type" in capsys.readouterr().err


@pytest.mark.parametrize("line, rewritten", [
    ("a[i] = b[i] = 0.5f;", "__cc_w(a[i]) = __cc_w(b[i]) = 0.5f;"),
    ("s[t] += s[t + 8];", "__cc_rw(s[t]) += __cc_r(s[t + 8]);"),
    ("*q++ += 1.0f;", "__cc_rw(*q++) += 1.0f;"),
    ("*(float*)(a + i) = 1.0f;", "__cc_w(*(__cc_ptr<float>)(a + i)) = 1.0f;"),
    ("*(float4*)&s[4 * t] = v;", "__cc_w(*(__cc_ptr<float4>)(s + (4 * t))) = v;"),
    ("(s[t]) = x;", "(__cc_w(s[t])) = x;"),
    ("reinterpret_cast<float2*>(s)[t] = v;", "__cc_w(__cc_reinterpret_cast<float2*>(s)[t]) = v;"),
    ("atomicAdd(&bins[k], 1);", "atomicAdd((bins + (k)), 1);"),
    ("x = ps[i].y * n;", "x = __cc_r(ps[i].y) * n;"),
    ("tile.sync();", "tile.sync();"),
    ("assert(a[i] >= 0);", "assert(a[i] >= 0);"),
])
def test_accesses_are_wrapped_for_the_sanitizer_without_changing_the_code(line, rewritten):
    code = f"__device__ void f(float* a, float* b, float* s, int* bins, float* q, P* ps, int i, int t, int k, int n) {{\n  float x; {line}\n}}"
    body = cuda_source.parse(code).cpu_text.split("\n")[1]
    assert body.strip() == f"float x; {rewritten}"


INTRINSICS = r"""
extern "C" __global__ void intrinsics(const float* a, float* o, unsigned* u, int* iv, double* d) {
    o[0] = __fadd_rd(1.0f, 1e-8f); o[1] = __fadd_ru(1.0f, 1e-8f); o[2] = __fdiv_rz(1.0f, 3.0f);
    o[3] = __fdiv_ru(1.0f, 3.0f); o[4] = __fsqrt_rd(2.0f); o[5] = __fsqrt_ru(2.0f); o[6] = __fmul_rz(-1.1f, 1.3f);
    o[7] = __fmaf_ru(1.0f, 1.0f, 1e-9f); o[8] = erfinvf(0.5f); o[9] = normcdfinvf(0.975f); o[10] = normcdff(1.96f);
    float s, c;
    sincospif(0.5f, &s, &c);
    o[11] = s; o[12] = c; o[13] = sinpif(1.0f); o[14] = cospif(-1.5f); o[15] = normf(3, a);
    u[0] = __byte_perm(0x11223344u, 0x55667788u, 0x5410); u[1] = __funnelshift_l(0x80000000u, 1u, 4u);
    u[2] = __funnelshift_r(0x10u, 1u, 4u); u[3] = __uhadd(0xffffffffu, 1u); u[4] = __funnelshift_lc(1u, 2u, 40u);
    iv[0] = __hadd(-3, 0); iv[1] = __rhadd(3, 4); iv[2] = __double2hiint(1.0); iv[3] = __double2loint(1.0);
    d[0] = __hiloint2double(__double2hiint(2.5), __double2loint(2.5)); d[1] = __dadd_ru(1.0, 1e-30);
    d[2] = __ddiv_rd(1.0, 3.0); d[3] = __ddiv_ru(1.0, 3.0);
    atomicAdd_block(&iv[4], 2);
    atomicMax_system(&iv[5], 7);
    iv[6] = __mul24(0x00ffffff, 2); iv[7] = __mul24(-3, 5); iv[8] = __mul24(0x01000003, 0x7f000002);
    u[5] = __umul24(0x01000003u, 2u); u[6] = __umul24(0xffffffu, 0xffffffu);
}
"""


def test_intrinsics_from_the_cuda_math_api(backend):
    """Directed rounding, inverse error functions, exact sinpi/cospi, byte and funnel shifts, the
    integer halving adds and the scoped atomics compile and give CUDA's answers; __mul24 and
    __umul24 ignore the high 8 bits of each operand (signed: the low 24 bits sign-extended)."""
    o, u, iv, d = np.zeros(16, np.float32), np.zeros(7, np.uint32), np.zeros(9, np.int32), np.zeros(4)
    args = [on(backend, x) for x in (np.array([1, 2, 2], np.float32), o, u, iv, d)]
    cuda.RawKernel(INTRINSICS, "intrinsics", backend=backend)((1,), (1,), args)
    o, u, iv, d = (cuda.asnumpy(x) for x in args[1:])
    f, third = np.float32, 1 / 3
    assert o[0] == 1 and o[1] == np.nextafter(f(1), f(2))
    assert float(o[2]) < third < float(o[3]) and o[3] == np.nextafter(o[2], f(1))
    assert float(o[4]) < np.sqrt(2) < float(o[5]) and o[5] == np.nextafter(o[4], f(2))
    assert float(o[6]) == float(np.nextafter(f(-1.1) * f(1.3), f(0))) or abs(float(o[6])) < 1.1 * 1.3
    assert o[7] == np.nextafter(f(1), f(2))
    np.testing.assert_allclose(o[8:11], [0.4769362762, 1.959963985, 0.9750021049], rtol=2e-6)
    assert list(o[11:16]) == [1, 0, 0, 0, 3]
    assert list(u) == [0x77883344, 0x18, 0x10000001, 0x80000000, 1, 6, 0xfe000001]
    assert list(iv) == [-2, 4, 0x3FF00000, 0, 2, 7, -2, -15, 6]
    assert d[0] == 2.5 and d[1] == np.nextafter(1.0, 2.0) and d[2] == third and d[3] == np.nextafter(third, 1.0)


EDGES_OF_THE_MATH_API = r"""
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void edges(const float* f, const double* d, float* o, double* od, unsigned short* h) {
    const float big = f[0], tiny = f[1], one = f[2], nan = f[3], inf = f[4];   // FLT_MAX, 2^-149, 1, NaN, inf
    o[0] = __fadd_rz(big, big);           // FLT_MAX: overflow rounded toward zero is the largest finite value
    o[1] = __fadd_rd(one, -one);          // -0: an exact zero sum rounded down
    o[2] = __fmul_rz(1.5f, tiny);         // 2^-149: a subnormal product rounded toward zero
    o[3] = __fmaf_ru(one, 1e30f, one);    // the float after 1e30: the small term still rounds up
    o[4] = __fmaf_rz(0.0f, 0.0f, inf);    // inf: exact
    o[5] = __saturatef(nan);              // +0 (PTX's .sat)
    o[6] = min(nan, one);                 // 1: CUDA's min of floats is fminf
    o[7] = max(nan, one);
    o[8] = rhypotf(big, big);             // 2.078e-39, not 0
    o[9] = rnorm3df(3e38f, 3e38f, 3e38f);
    od[0] = __fma_rz(d[0], d[1], d[2]);   // (1 + 3u)^2 - 2^-60 toward zero: 1 + 5u, where nearest gives 1 + 6u
    od[1] = __dsub_rd(d[0], d[0]);
    od[2] = erfinv(d[3]);
    od[3] = cyl_bessel_i0(d[4]);
    h[0] = __half_as_ushort(__double2half(d[5]));      // 1 + 2^-11 + 2^-40: above the tie, rounded up
    h[1] = __half_as_ushort(__hfma(__ushort_as_half(0x3c01), __ushort_as_half(0x3bff), __ushort_as_half(0x0009)));
    h[2] = __half_as_ushort(__hmax(__float2half(0.0f), __float2half(-0.0f)));   // +0 either way round
    h[3] = __half_as_ushort(__hmin(__float2half(0.0f), __float2half(-0.0f)));   // -0
    h[4] = __bfloat16_as_ushort(__int2bfloat16_rn(16842753));                   // 2^24 + 2^16 + 1: up
    __half_raw raw = __float2half(2.0f);                                        // cuda_fp16.hpp's raw bits
    __half back = raw;
    h[5] = raw.x + __half_as_ushort(back);
    float1 v1 = make_float1(one);
    long2 l2 = make_long2(3, 4);
    o[10] = v1.x + (float)(l2.x * l2.y) + __low2float(h2rint(__floats2half2_rn(2.4f, 0.0f)));
}
"""


def test_the_math_apis_edge_cases_are_rounded_as_on_a_gpu():
    """Directed rounding at overflow, for exact zeros, subnormals and an fma's far-apart terms (fesetround: the
    CPU's own IEEE rounding modes), __saturatef(NaN), min/max of a NaN, rhypotf of huge values, erfinv near 1,
    I0, a double rounded once to half, __hfma rounded once, __hmax/__hmin of ±0, a large int to bfloat16, the
    raw bits of a half, and the 1-lane and long vector types (probe 12: each was wrong or missing)."""
    f = np.array([np.finfo(np.float32).max, 2.0 ** -149, 1, np.nan, np.inf], np.float32)
    d = np.array([1 + 3 * 2.0 ** -52, 1 + 3 * 2.0 ** -52, -2.0 ** -60, 0.9999, 10.0, 1 + 2.0 ** -11 + 2.0 ** -40])
    o, od, h = np.zeros(11, np.float32), np.zeros(4), np.zeros(6, np.uint16)
    cuda.RawKernel(EDGES_OF_THE_MATH_API, "edges", backend="cpu")((1,), (1,), (f, d, o, od, h))
    assert o[0] == f[0] and np.signbit(o[1]) and o[1] == 0 and o[2] == np.float32(2.0 ** -149)
    assert o[3] == np.nextafter(np.float32(1e30), np.float32(np.inf)) and o[4] == np.inf
    assert o[5] == 0 and not np.signbit(o[5]) and o[6] == 1 and o[7] == 1
    assert o[8].view(np.uint32) == 0x0016A09E and o[9].view(np.uint32) == 0x0014F4BA
    assert od[0] == 1 + 5 * 2.0 ** -52 and d[0] * d[1] + d[2] == 1 + 6 * 2.0 ** -52  # toward zero; nearest is up
    assert np.signbit(od[1]) and od[1] == 0
    assert od[2] == 2.7510639057120800 and od[3] == 2815.7166284662544
    assert list(h[:5]) == [0x3C01, 0x3C01, 0x0000, 0x8000, 0x4B81]
    assert h[5] == 2 * 0x4000 and o[10] == 1 + 12 + 2


TRAITS = r"""#include <type_traits>
template <typename T> struct is_ptr { static constexpr bool value = false; };
template <typename T> struct is_ptr<T*> { static constexpr bool value = true; };
extern "C" __global__ void traits(const float* x, float* y) {
    int i = threadIdx.x;
    const float* p = x + i;
    decltype(p) q = p;
    static_assert(is_ptr<decltype(p)>::value && !is_ptr<float>::value, "a pointer's type is a pointer");
    static_assert(std::is_same<decltype(q), const float*>::value, "decltype names the declared type");
    y[i] = *q + (is_ptr<decltype(q)>::value ? 1.0f : 0.0f);
}
"""


@pytest.mark.parametrize("sanitize", [False, True])
def test_a_trait_of_decltype_of_a_pointer_sees_the_declared_pointer_type(sanitize):
    """A pointer variable is a checked pointer here; as a template argument, decltype(p) is the type the
    source declared (`const float*`), so a user's is_ptr<T*> specialization and std::is_same work as on a GPU."""
    x, y = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    cuda.RawKernel(TRAITS, "traits", backend="cpu", sanitize=sanitize)((1,), (8,), (x, y))
    np.testing.assert_array_equal(y, x + 1)


FAST_DIVIDE = r"""
extern "C" __global__ void fast_divide(const float* a, const float* b, float* o) {
    int i = threadIdx.x;
    o[i] = __fdividef(a[i], b[i]);
}
"""


def test_fast_divide_is_zero_for_divisors_beyond_2_to_the_126_as_on_a_gpu():
    """The Programming Guide: for 2^126 < |y| < 2^128, __fdividef(x, y) delivers 0, and NaN for an
    infinite x (its reciprocal of y is 0); elsewhere it is the division (within 2 ulp on a GPU)."""
    a = np.array([1, -1, np.inf, 6, 1e38, 1], np.float32)
    b = np.array([1e38, 1e38, 1e38, 3, 2, 2 ** 126], np.float32)
    o = np.zeros(6, np.float32)
    cuda.RawKernel(FAST_DIVIDE, "fast_divide", backend="cpu")((1,), (6,), (a, b, o))
    assert o[0] == 0 and o[1] == 0 and np.signbit(o[1]) and np.isnan(o[2])
    assert list(o[3:]) == [2, np.float32(5e37), np.float32(2.0 ** -126)]


CACHE_HINTS = r"""
extern "C" __global__ void cache_hints(const float* a, float* out, int n) {
    int i = threadIdx.x;
    float v = __ldg(&a[i]) + __ldcg(&a[i]) + __ldca(&a[i]) + __ldcs(&a[i]) + __ldlu(&a[i]) + __ldcv(&a[i]);
    __stwb(&out[i], v);
    __stcg(&out[n + i], 2 * v);
    __stcs(&out[2 * n + i], 3 * v);
    __stwt(&out[3 * n + i], 4 * v);
}
"""


def test_cache_hinted_loads_and_stores(backend):
    """__ldcs, __stcs and the other cache-hint intrinsics are plain loads and stores, still bounds-checked."""
    a, out = on(backend, np.arange(4, dtype=np.float32)), on(backend, np.zeros(16, np.float32))
    kernel = cuda.RawKernel(CACHE_HINTS, "cache_hints", backend=backend)
    kernel((1,), (4,), (a, out, 4))
    np.testing.assert_array_equal(cuda.asnumpy(out), np.outer([1, 2, 3, 4], 6 * np.arange(4)).ravel())
    if backend == "cpu":
        with pytest.raises(cuda.KernelError, match=r"accessed out\[16\], but out has 16 elements"):
            kernel((1,), (4,), (a, out, 5))


NULL_POINTERS_AND_VIEWS = r"""
struct View { float* data; int n; __device__ float& operator[](int i) const { return data[i]; } };
struct Node { int value; const Node* next; };
extern "C" __global__ void null_pointers(float* x, int n) {
    float* p = 0;                      // 0, NULL and nullptr: all null pointers
    const float* q = NULL;
    View empty = {0, 0}, whole = {x, n};
    Node last = {3, nullptr}, first = {2, &last};
    int length = 0;
    for (const Node* node = &first; node != NULL; node = node->next) length += node->value;
    if (p == 0 && !q && empty.data == nullptr) whole[threadIdx.x] += length;
    p = x;
    if (p != NULL) p[threadIdx.x] += 1.0f;
    p = 0;
}
"""


def test_null_pointers_and_structs_that_hold_pointers(backend):
    x = on(backend, np.zeros(8, np.float32))
    cuda.RawKernel(NULL_POINTERS_AND_VIEWS, "null_pointers", backend=backend)((1,), (8,), (x, 8))
    np.testing.assert_array_equal(cuda.asnumpy(x), 6.0)


SIMD_IN_A_WORD = ["vadd", "vaddss", "vaddus", "vsub", "vsubss", "vsubus", "vabsdiffs", "vabsdiffu", "vavgs", "vavgu",
                  "vhaddu", "vmaxs", "vmaxu", "vmins", "vminu", "vcmpeq", "vcmpne", "vcmpges", "vcmpgtu", "vcmpltu",
                  "vseteq", "vsetgeu", "vsetlts", "vsads", "vsadu"]


def _simd_reference(name: str, a: int, b: int, bits: int) -> int:
    """What CUDA's Math API says __<name>2 (bits 16) or __<name>4 (bits 8) returns."""
    mask, lo, hi = (1 << bits) - 1, -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    signed = lambda v: v - (1 << bits) if v >> (bits - 1) else v
    lanes = [((a >> s) & mask, (b >> s) & mask) for s in range(0, 32, bits)]
    ops = {"vadd": lambda u, v, s, t: u + v, "vaddss": lambda u, v, s, t: max(lo, min(hi, s + t)),
           "vaddus": lambda u, v, s, t: min(mask, u + v), "vsub": lambda u, v, s, t: u - v,
           "vsubss": lambda u, v, s, t: max(lo, min(hi, s - t)), "vsubus": lambda u, v, s, t: max(0, u - v),
           "vabsdiffs": lambda u, v, s, t: abs(s - t), "vabsdiffu": lambda u, v, s, t: abs(u - v),
           "vavgs": lambda u, v, s, t: (s + t + (s + t >= 0)) >> 1, "vavgu": lambda u, v, s, t: (u + v + 1) >> 1,
           "vhaddu": lambda u, v, s, t: (u + v) >> 1, "vmaxs": lambda u, v, s, t: max(s, t),
           "vmaxu": lambda u, v, s, t: max(u, v), "vmins": lambda u, v, s, t: min(s, t),
           "vminu": lambda u, v, s, t: min(u, v), "vcmpeq": lambda u, v, s, t: mask * (u == v),
           "vcmpne": lambda u, v, s, t: mask * (u != v), "vcmpges": lambda u, v, s, t: mask * (s >= t),
           "vcmpgtu": lambda u, v, s, t: mask * (u > v), "vcmpltu": lambda u, v, s, t: mask * (u < v),
           "vseteq": lambda u, v, s, t: int(u == v), "vsetgeu": lambda u, v, s, t: int(u >= v),
           "vsetlts": lambda u, v, s, t: int(s < t)}
    if name in ("vsads", "vsadu"):
        return sum(abs(signed(u) - signed(v)) if name == "vsads" else abs(u - v) for u, v in lanes)
    return sum((ops[name](u, v, signed(u), signed(v)) & mask) << (i * bits) for i, (u, v) in enumerate(lanes))


def test_simd_within_a_word_intrinsics():
    calls = "\n".join(f"    out[{2 * i}] = __{n}2(a, b); out[{2 * i + 1}] = __{n}4(a, b);"
                      for i, n in enumerate(SIMD_IN_A_WORD))
    source = f'extern "C" __global__ void simd(unsigned a, unsigned b, unsigned* out) {{\n{calls}\n' \
             f'    out[{2 * len(SIMD_IN_A_WORD)}] = __vabs4(a); out[{2 * len(SIMD_IN_A_WORD) + 1}] = __vnegss4(a);\n}}'
    kernel = cuda.RawKernel(source, "simd", backend="cpu")
    for a, b in [(0x80F07F01, 0x7F10FF02), (0xFFFF0000, 0x00017FFF), (0x12345678, 0x9ABCDEF0)]:
        out = np.zeros(2 * len(SIMD_IN_A_WORD) + 2, np.uint32)
        kernel((1,), (1,), (np.uint32(a), np.uint32(b), out))
        expected = [_simd_reference(n, a, b, bits) for n in SIMD_IN_A_WORD for bits in (16, 8)]
        assert out[:-2].tolist() == expected
    assert hex(out[-2]) == hex(_simd_reference("vabsdiffs", a, 0, 8))  # __vabs4(a) = |a - 0| per byte


PACKED = r"""
extern "C" __global__ void packed(const int* a, const int* b, int* dp, unsigned* udp, unsigned long long* wide,
                                  float* bessel, int* spaces) {
    int i = threadIdx.x;
    dp[i] = __dp4a(a[i], b[i], 7);
    udp[i] = __dp4a((unsigned)a[i], (unsigned)b[i], 7u);
    dp[32 + i] = __dp2a_lo(a[i], b[i], 0);
    dp[64 + i] = __dp2a_hi(a[i], b[i], 0);
    char4 ca = make_char4(1, -2, 3, -4), cb = make_char4(5, 6, -7, 8);
    if (i == 0) {
        dp[96] = __dp4a(ca, cb, 0);
        wide[0] = __umul64hi(0xFFFFFFFFFFFFFFFFull, 3ull);
        wide[1] = (unsigned long long)__mul64hi(-4ll, 0x4000000000000000ll);
        bessel[0] = cyl_bessel_i0f(1.0f);
        bessel[1] = __ll2float_rn(-(1ll << 40));
    }
    __shared__ float tile[32];
    float mine[2] = {0, 0};
    tile[i] = mine[i % 2];
    spaces[i] = __isShared(&tile[i]) * 100 + __isGlobal(&a[i]) * 10 + __isLocal(&mine[0]);
}
"""


def test_packed_dot_products_wide_multiplies_and_address_spaces():
    rng = np.random.default_rng(3)
    a, b = (rng.integers(-2**31, 2**31, 32, dtype=np.int64).astype(np.int32) for _ in range(2))
    dp, udp = np.zeros(97, np.int32), np.zeros(32, np.uint32)
    wide, bessel, spaces = np.zeros(2, np.uint64), np.zeros(2, np.float32), np.zeros(32, np.int32)
    cuda.RawKernel(PACKED, "packed", backend="cpu")((1,), (32,), (a, b, dp, udp, wide, bessel, spaces))
    sa, sb = a.view(np.int8).reshape(32, 4).astype(np.int64), b.view(np.int8).reshape(32, 4).astype(np.int64)
    ua, ub = a.view(np.uint8).reshape(32, 4).astype(np.int64), b.view(np.uint8).reshape(32, 4).astype(np.int64)
    np.testing.assert_array_equal(dp[:32], ((sa * sb).sum(1) + 7).astype(np.int32))
    np.testing.assert_array_equal(udp, ((ua * ub).sum(1) + 7).astype(np.uint32))
    halves = a.view(np.int16).reshape(32, 2).astype(np.int64)
    np.testing.assert_array_equal(dp[32:64], (halves * sb[:, :2]).sum(1).astype(np.int32))
    np.testing.assert_array_equal(dp[64:96], (halves * sb[:, 2:]).sum(1).astype(np.int32))
    assert dp[96] == 1 * 5 - 2 * 6 - 3 * 7 - 4 * 8
    assert wide.tolist() == [2, (2**64 - 1)]  # high words of (2^64 - 1) * 3 and of -4 * 2^62 (= -1 as unsigned)
    assert bessel[0] == pytest.approx(1.2660659) and bessel[1] == -2.0**40
    assert (spaces == 111).all()


SPACES = r"""
__constant__ float weights[4];
__device__ int counter;
extern "C" __global__ void spaces(const float* a, int* out) {
    __shared__ float tile[4];
    float mine = a[threadIdx.x];
    tile[threadIdx.x] = mine;
    const void* where[5] = {&weights[threadIdx.x], &a[threadIdx.x], &counter, &tile[threadIdx.x], &mine};
    for (int k = 0; k < 5; k++)
        out[threadIdx.x * 5 + k] = __isConstant(where[k]) * 1000 + __isGlobal(where[k]) * 100
                                   + __isShared(where[k]) * 10 + __isLocal(where[k]);
}
"""


def test_address_space_predicates_tell_constant_from_global():
    """__isConstant is 1 only inside a __constant__ variable, which is not global memory (__isGlobal 0),
    as on a GPU; a __device__ variable is global."""
    out = np.zeros(20, np.int32)
    cuda.RawKernel(SPACES, "spaces", backend="cpu")((1,), (4,), (np.ones(4, np.float32), out))
    assert out.reshape(4, 5).tolist() == [[1000, 100, 100, 10, 1]] * 4


DECLARATORS = r"""
extern "C" __global__ void declarators(float* x, int n) {
    __shared__ float s[4][8];
    float (*rows)[8] = s;                                   // a pointer to rows of 8
    rows[threadIdx.x % 4][threadIdx.x / 4] = threadIdx.x;
    __syncthreads();
    if (threadIdx.x == 0)
        for (float *p = x + 2, *end = x + n; p != end; ++p) *p = s[1][0];   // two pointers, one declaration
    if (threadIdx.x == 1) *(float*)(size_t)(x + 1) = s[0][1];          // a cast of a cast
}
"""


@pytest.mark.parametrize("sanitize", [False, True])
def test_pointer_declarators_and_derefs_after_control_statements(sanitize):
    x = np.zeros(8, np.float32)
    cuda.RawKernel(DECLARATORS, "declarators", backend="cpu", sanitize=sanitize)((1,), (32,), (x, 8))
    np.testing.assert_array_equal(x, [0, 4, 1, 1, 1, 1, 1, 1])
    text = cuda_source.parse(DECLARATORS).cpu_text
    assert "__cc_ptr<float> p = x + 2, end = x + n" in text  # both checked
    assert "__cc_w(*p) = " in text  # a store after `)` of a for is a store for the sanitizer
    with pytest.raises(cuda.KernelError, match=r"accessed x\[7\], but x has 7 elements"):
        cuda.RawKernel(DECLARATORS, "declarators", backend="cpu", sanitize=sanitize)((1,), (32,), (x[:7].copy(), 8))


def test_headers_cuda_code_includes_and_what_a_missing_one_says():
    # The toolkit's own headers compile (runtime.h provides them), libcu++'s cuda::std:: among them.
    src = r'''
    #include "cuda_runtime.h"
    #include "device_launch_parameters.h"
    #include <sm_60_atomic_functions.h>
    #include <crt/math_functions.h>
    #include <cuda/std/limits>
    #include <cuda/std/cstdint>
    extern "C" __global__ void top(const float* x, float* out, int n) {
        float best = -cuda::std::numeric_limits<float>::infinity();
        for (cuda::std::int32_t i = 0; i < n; i++) best = cuda::std::max(best, x[i]);
        out[0] = best;
    }'''
    x, out = np.random.default_rng(0).random(10, dtype=np.float32), np.zeros(1, np.float32)
    cuda.RawKernel(src, "top", backend="cpu")((1,), (1,), (x, out, 10))
    assert out[0] == x.max()
    body = 'extern "C" __global__ void k(int* c) { c[0] = 1; }'
    with pytest.raises(cuda.CompileError, match=r"helper_math.h is not part of CUDA .*does not read header files of "
                                                r"your own \(CuPy on a GPU finds them with options=\('-I<folder>',\)\): "
                                                r"paste the functions"):
        cuda.RawKernel('#include "helper_math.h"\n' + body, "k", backend="cpu")((1,), (1,), (np.zeros(1, np.int32),))
    with pytest.raises(cuda.CompileError, match=r"cuda/annotated_ptr is a CUDA header that the CPU backend does not provide"):
        cuda.RawKernel("#include <cuda/annotated_ptr>\n" + body, "k", backend="cpu")((1,), (1,), (np.zeros(1, np.int32),))


ARRAY_PARAMETERS = r"""
#define N 16
// The CUDA C Programming Guide's first two-dimensional kernel: its parameters are arrays of rows.
extern "C" __global__ void MatAdd(float A[N][N], float B[N][N], float C[N][N]) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < N && j < N) C[i][j] = A[i][j] + B[i][j];
}
// The same type written as a pointer to rows.
extern "C" __global__ void twice(const float (*A)[N], float (* __restrict__ out)[N]) {
    out[blockIdx.x][threadIdx.x] = 2 * A[blockIdx.x][threadIdx.x];
}
extern "C" __global__ void corners(const float A[][4][2], float* out, int n) {
    int i = threadIdx.x;
    if (i < n) out[i] = A[i][3][1] + A[i][0][0];  // BUG when n is more than A's rows
}
"""


@pytest.mark.parametrize("sanitize", [False, True])
def test_array_parameters_are_checked_pointers_to_rows(backend, sanitize):
    rng = np.random.default_rng(5)
    a, b = rng.random((16, 16), dtype=np.float32), rng.random((16, 16), dtype=np.float32)
    c = on(backend, np.zeros((16, 16), np.float32))
    options = {"sanitize": sanitize} if backend == "cpu" else {}
    cuda.RawKernel(ARRAY_PARAMETERS, "MatAdd", backend=backend, **options)((1,), (16, 16), (on(backend, a), on(backend, b), c))
    np.testing.assert_array_equal(cuda.asnumpy(c), a + b)
    cube = rng.random((5, 4, 2), dtype=np.float32)
    out = on(backend, np.zeros(5, np.float32))
    cuda.RawKernel(ARRAY_PARAMETERS, "corners", backend=backend, **options)((1,), (5,), (on(backend, cube), out, 5))
    np.testing.assert_array_equal(cuda.asnumpy(out), cube[:, 3, 1] + cube[:, 0, 0])
    doubled = on(backend, np.zeros((16, 16), np.float32))
    cuda.RawKernel(ARRAY_PARAMETERS, "twice", backend=backend, **options)((16,), (16,), (on(backend, a), doubled))
    np.testing.assert_array_equal(cuda.asnumpy(doubled), 2 * a)
    if backend != "cpu":
        return
    with pytest.raises(cuda.KernelError, match=r"accessed out\[16\]\[0\], but out has 16 rows \(valid first indices 0 to 15\)"):  # 17 rows
        cuda.RawKernel(ARRAY_PARAMETERS, "twice", backend="cpu", sanitize=sanitize)(
            (17,), (16,), (np.zeros((17, 16), np.float32), np.zeros((16, 16), np.float32)))
    with pytest.raises(cuda.KernelError, match=r"accessed A\[5\]\[3\]\[1\], but A has 5 rows") as info:  # row 5 of 5
        cuda.RawKernel(ARRAY_PARAMETERS, "corners", backend="cpu", sanitize=sanitize)(
            (1,), (6,), (cube, np.zeros(6, np.float32), 6))
    assert info.value.thread == (5, 0, 0)
    with pytest.raises(cuda.KernelError, match=r"parameter 'A' \(float A\[\]\[N\]\), which is not a whole number of "
                                               r"its rows of float\[N\] \(64 bytes each\)") as info:
        cuda.RawKernel(ARRAY_PARAMETERS, "MatAdd", backend="cpu", sanitize=sanitize)(
            (1,), (16, 16), (a[:15, :15].copy(), b, np.zeros((16, 16), np.float32)))
    assert "shape (rows, 16)" in str(info.value)
    # the rows' length a `const int` (or constexpr) names: the fault names a row, not a flat index
    named = ARRAY_PARAMETERS.replace("#define N 16", "const int N = 16;")
    with pytest.raises(cuda.KernelError, match=r"accessed out\[16\]\[0\], but out has 16 rows"):
        cuda.RawKernel(named, "twice", backend="cpu", sanitize=sanitize)(
            (17,), (16,), (np.zeros((17, 16), np.float32), np.zeros((16, 16), np.float32)))


# Template __device__ functions declared before the kernel and defined after it, and overloads.
PROTOTYPES = r"""
template <typename T> __device__ T total(const T* x, int n);
template <typename T> __device__ T total(const T* x, const T* y, int n);
__device__ float first(const float* v);

extern "C" __global__ void sums(const float* x, const float* y, float* out, int n) {
    if (threadIdx.x == 0) { out[0] = total(x, n); out[1] = total(x, y, n); out[2] = first(y); }
}

template <typename T> __device__ T total(const T* x, int n) {
    T s = 0;  // T is float, not const float
    for (int i = 0; i < n; i++) s += x[i];
    return s;
}
template <typename T> __device__ T total(const T* x, const T* y, int n) { return total(x, n) + total(y, n); }
__device__ float first(const float* v) { return v[0]; }
"""


@pytest.mark.parametrize("sanitize", [False, True])
def test_template_functions_declared_first_and_overloaded(backend, sanitize):
    x, y = np.arange(1, 9, dtype=np.float32), np.full(8, 2, np.float32)
    out = on(backend, np.zeros(3, np.float32))
    options = {"sanitize": sanitize} if backend == "cpu" else {}
    kernel = cuda.RawKernel(PROTOTYPES, "sums", backend=backend, **options)
    kernel((1,), (32,), (on(backend, x), on(backend, y), out, 8))
    np.testing.assert_array_equal(cuda.asnumpy(out), [36, 52, 2])
    if backend == "cpu":  # the definitions' accesses are checked, whichever declaration the call found
        with pytest.raises(cuda.KernelError, match=r"accessed x\[8\], but x has 8 elements") as info:
            kernel((1,), (32,), (x, y, np.zeros(3, np.float32), 9))
        assert info.value.line == 12


# Array references: `float (&r)[4]` parameters (plain and template), and a row pointer that walks
# the whole of a 2-D array, as C allows and a GPU does.
ARRAY_REFERENCES = r"""
template <int N> __device__ void load(float (&dst)[N], const float* src) {
    for (int i = 0; i < N; i++) dst[i] = src[i];
}
template <typename T, unsigned N> __device__ T sum(const T (&v)[N]) {
    T s = 0;
    for (unsigned i = 0; i < N; i++) s += v[i];
    return s;
}
__device__ float corner(const float (&m)[3][3]) { return m[2][2]; }
__device__ void fill(float (&dst)[4], int count) { for (int i = 0; i < count; i++) dst[i] = 1.0f; }  // BUG when count > 4
__device__ void clear(float (&m)[3][3]) { memset(m, 0, sizeof(m)); }  // 36 bytes, not a view's size
template <int N> __device__ int length(const float (&v)[N]) { return sizeof v / sizeof v[0]; }

extern "C" __global__ void references(const float* x, float* out, int count) {
    float r[4];
    load(r, x + 4 * threadIdx.x);
    float m[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 9}};
    float ones[4];
    fill(ones, count);
    float cleared[3][3];
    clear(cleared);
    out[threadIdx.x] = sum(r) + corner(m) + ones[0] + corner(cleared) + length(r);
}

__device__ float last_of(const float (&v)[4]) { const float (&alias)[4] = v; return alias[3]; }
// Local array references: to a local array, to a row of a __shared__ one, const, sizeof
extern "C" __global__ void local_references(float* out, int k) {
    float r[4] = {1, 2, 3, 4};
    float (&q)[4] = r;
    q[0] = 10;
    const float (&c)[4] = r;
    __shared__ float s[2][32];
    auto& a = r;            // (sizeof(a) is the array's, 16, and sizeof(all) is 256)
    const auto& all = s;
    float (&row)[32] = s[threadIdx.x / 32];
    row[threadIdx.x % 32] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = s[threadIdx.x / 32][threadIdx.x % 32] + r[0] + c[2] + last_of(r) + sizeof(c) + q[k] + sizeof(a) + sizeof(all) / 16 - 32;  // REF
}

extern "C" __global__ void flat_rows(float* out) {
    __shared__ float s[4][8];
    float* all = s[0];  // a pointer into the whole array
    all[threadIdx.x] = (float)threadIdx.x;
    __syncthreads();
    float m[2][3] = {{1, 2, 3}, {4, 5, 6}};
    const float* p = m[0];
    float t = 0;
    for (int i = 0; i < 6; i++) t += p[i];
    out[threadIdx.x] = s[threadIdx.x % 4][threadIdx.x / 4] + t;
}
"""


@pytest.mark.parametrize("sanitize", [False, True])
def test_array_reference_parameters_and_row_pointers(backend, sanitize):
    x = np.arange(16, dtype=np.float32)
    out = on(backend, np.zeros(4, np.float32))
    options = {"sanitize": sanitize} if backend == "cpu" else {}
    cuda.RawKernel(ARRAY_REFERENCES, "references", backend=backend, **options)((1,), (4,), (on(backend, x), out, 4))
    np.testing.assert_array_equal(cuda.asnumpy(out), x.reshape(4, 4).sum(axis=1) + 9 + 1 + 0 + 4)
    flat = on(backend, np.zeros(32, np.float32))
    cuda.RawKernel(ARRAY_REFERENCES, "flat_rows", backend=backend, **options)((1,), (32,), (flat,))
    t = np.arange(32)
    np.testing.assert_array_equal(cuda.asnumpy(flat), (t % 4) * 8 + t // 4 + 21)
    local = on(backend, np.zeros(64, np.float32))
    cuda.RawKernel(ARRAY_REFERENCES, "local_references", backend=backend, **options)((1,), (64,), (local, 1))
    np.testing.assert_array_equal(cuda.asnumpy(local), np.arange(64) + 10 + 3 + 4 + 16 + 2)
    if backend != "cpu":
        return
    with pytest.raises(cuda.KernelError, match=r"accessed r\[4\], but that dimension of the local array r has 4") as info:
        cuda.RawKernel(ARRAY_REFERENCES, "local_references", backend="cpu", sanitize=sanitize)(
            (1,), (64,), (np.zeros(64, np.float32), 4))
    assert "// REF" in ARRAY_REFERENCES.split("\n")[info.value.line - 1]
    # the callee's dst[4] is checked against the caller's array
    with pytest.raises(cuda.KernelError, match=r"accessed ones\[4\], but that dimension of the local array ones has 4") as info:
        cuda.RawKernel(ARRAY_REFERENCES, "references", backend="cpu", sanitize=sanitize)(
            (1,), (4,), (x, np.zeros(4, np.float32), 5))
    assert info.value.line == 11
    # past the whole 2-D array: caught, counted in the whole array's elements
    with pytest.raises(cuda.KernelError, match=r"accessed s\[32\] through a pointer into the __shared__ array s, "
                                               r"which holds 32 4-byte elements"):
        cuda.RawKernel(ARRAY_REFERENCES, "flat_rows", backend="cpu", sanitize=sanitize)((1,), (33,), (np.zeros(33, np.float32),))


# Casts to a reference (reinterpret_cast<float4&>(s[4 * t])) and the address of a whole array (&r):
# accesses of the cast's type where the operand lies, checked like the pointer forms.
REFERENCE_CASTS = r"""
extern "C" __global__ void vectors(const float* x, float* out, int shift) {
    __shared__ float s[64];
    int t = threadIdx.x;
    reinterpret_cast<float4&>(s[4 * t + shift]) = reinterpret_cast<const float4&>(x[4 * t]);  // STORE
    __syncthreads();
    float r[4] = {1, 2, 3, 4};
    reinterpret_cast<float4&>(r[0]).w = 7;
    float4 whole = reinterpret_cast<const float4&>(r);  // the local array itself
    out[t] = s[63 - t] + whole.w + reinterpret_cast<float4&>(s).y;
}
extern "C" __global__ void overlapping(float* out) {
    reinterpret_cast<float2&>(out[2 * (threadIdx.x / 2)]) = make_float2(threadIdx.x, 0);  // PAIR
}
extern "C" __global__ void addresses(float* out, int n) {
    float r[4] = {1, 2, 3, 4};
    float q[4];
    memcpy(&q, &r, sizeof r);
    float* p = (float*)&r;
    float (*rows)[4] = &q;
    __shared__ float s[8];
    s[threadIdx.x] = threadIdx.x;
    __syncthreads();
    float4 second = ((float4*)&s)[1];
    float z[4];
    memset(&z, 0, n * sizeof(float));  // ZERO
    float4 first = (float4&)s[0];  // a C-style cast to a reference: the same
    out[threadIdx.x] = p[3] + (*rows)[2] + second.w + z[3] + first.w;
}
extern "C" __global__ void cast_away(const float* x) {
    const_cast<float&>(x[threadIdx.x]) = 0;  // CONST
}
extern "C" __global__ void unwritten(float* out) {
    __shared__ float s[64];
    s[threadIdx.x] = 1;
    __syncthreads();
    out[threadIdx.x] = ((float4&)(s[4 * threadIdx.x])).x;  // VECTOR READ
}
"""


@pytest.mark.parametrize("sanitize", [False, True])
def test_reference_casts_and_the_address_of_a_whole_array(backend, sanitize):
    options = {"sanitize": sanitize} if backend == "cpu" else {}
    x = np.arange(64, dtype=np.float32)
    out = on(backend, np.zeros(16, np.float32))
    cuda.RawKernel(REFERENCE_CASTS, "vectors", backend=backend, **options)((1,), (16,), (on(backend, x), out, 0))
    np.testing.assert_array_equal(cuda.asnumpy(out), 63 - np.arange(16) + 7 + 1)
    out = on(backend, np.zeros(8, np.float32))
    cuda.RawKernel(REFERENCE_CASTS, "addresses", backend=backend, **options)((1,), (8,), (out, 4))
    np.testing.assert_array_equal(cuda.asnumpy(out), np.full(8, 4 + 3 + 7 + 0 + 3))
    if backend != "cpu":
        return
    line = lambda marker: next(i for i, text in enumerate(REFERENCE_CASTS.split("\n"), 1) if f"// {marker}" in text)
    with pytest.raises(cuda.KernelError, match=r"16-byte element at byte 4 of s through a cast pointer.*misaligned"):
        cuda.RawKernel(REFERENCE_CASTS, "vectors", backend="cpu", **options)((1,), (16,), (x, np.zeros(16, np.float32), 1))
    with pytest.raises(cuda.KernelError, match=r"through a pointer made from a local or __device__ array") as info:
        cuda.RawKernel(REFERENCE_CASTS, "addresses", backend="cpu", **options)((1,), (8,), (np.zeros(8, np.float32), 5))
    assert info.value.line == line("ZERO")
    if sanitize:  # a vector store is a store of all its bytes: two threads' overlapping pairs race
        with pytest.raises(cuda.KernelError, match=r"writes out\[0\], which thread \(0, 0, 0\) also wrote") as info:
            cuda.RawKernel(REFERENCE_CASTS, "overlapping", backend="cpu", sanitize=True)((1,), (4,), (np.zeros(4, np.float32),))
        assert info.value.line == line("PAIR")
        with pytest.raises(cuda.KernelError, match=r"writes x\[0\], but x is read-only") as info:
            cuda.RawKernel(REFERENCE_CASTS, "cast_away", backend="cpu", sanitize=True)((1,), (4,), (np.ones(4, np.float32),))
        assert info.value.line == line("CONST")
        # thread 4 reads s[16..19] as a float4, and only s[0..15] were written: named in floats
        with pytest.raises(cuda.KernelError, match=r"reads shared memory s\[16\], which no thread") as info:
            cuda.RawKernel(REFERENCE_CASTS, "unwritten", backend="cpu", sanitize=True)((1,), (16,), (np.zeros(16, np.float32),))
        assert info.value.line == line("VECTOR READ") and info.value.thread == (4, 0, 0)


SHARED_POINTER = r"""
extern "C" __global__ void shared_pointer(float* out, int shift) {
    __shared__ float s[64];
    __shared__ float* p;  // one thread points it somewhere; all use it
    if (threadIdx.x == 0) p = s;
    __syncthreads();
    p[threadIdx.x + shift] = threadIdx.x;  // STORE
    __syncthreads();
    out[threadIdx.x] = p[63 - threadIdx.x];
}
"""


@pytest.mark.parametrize("sanitize", [False, True])
def test_a_pointer_kept_in_shared_memory_is_checked(backend, sanitize):
    options = {"sanitize": sanitize} if backend == "cpu" else {}
    out = on(backend, np.zeros(64, np.float32))
    cuda.RawKernel(SHARED_POINTER, "shared_pointer", backend=backend, **options)((1,), (64,), (out, 0))
    np.testing.assert_array_equal(cuda.asnumpy(out), 63 - np.arange(64))
    if backend != "cpu":
        return
    with pytest.raises(cuda.KernelError, match=r"accessed s\[64\] through a pointer into the __shared__ array s") as info:
        cuda.RawKernel(SHARED_POINTER, "shared_pointer", backend="cpu", **options)((1,), (64,), (np.zeros(64, np.float32), 1))
    assert info.value.line == 7 and info.value.thread == (63, 0, 0)


CONVERSIONS = r"""
#include <cuda_fp16.h>
extern "C" __global__ void conversions(const float* f, const double* d, long long* out, float* narrow, double* wide) {
    int i = threadIdx.x;
    out[16 * i + 0] = __float2int_rn(f[i]);  out[16 * i + 1] = __float2int_rz(f[i]);
    out[16 * i + 2] = __float2int_ru(f[i]);  out[16 * i + 3] = __float2int_rd(f[i]);
    out[16 * i + 4] = __float2uint_rn(f[i]); out[16 * i + 5] = __float2uint_rd(f[i]);
    out[16 * i + 6] = __float2ll_rz(f[i]);   out[16 * i + 7] = (long long)__float2ull_ru(f[i]);
    out[16 * i + 8] = __double2int_rn(d[i]); out[16 * i + 9] = __double2int_rz(d[i]);
    out[16 * i + 10] = __double2uint_ru(d[i]); out[16 * i + 11] = __double2ll_rd(d[i]);
    out[16 * i + 12] = (long long)__double2ull_rn(d[i]);
    out[16 * i + 13] = __hblt2(__floats2half2_rn(f[i], 1.0f), __floats2half2_rn(2.0f, 2.0f));
    out[16 * i + 14] = __hne(__float2half(f[i]), __float2half(f[i] + 1.0f)) * 10 + __hneu(__float2half(f[i]), __float2half(f[i]));
    out[16 * i + 15] = __hlt2_mask(__floats2half2_rn(f[i], 3.0f), __floats2half2_rn(0.5f, 4.0f));
    narrow[4 * i + 0] = __double2float_rz(d[i]); narrow[4 * i + 1] = __double2float_ru(d[i]);
    narrow[4 * i + 2] = __ll2float_rd(__double2ll_rz(d[i] * 1e9)); narrow[4 * i + 3] = __uint2float_ru(16777217u + i);
    wide[i] = __ll2double_ru((1ll << 60) + 1 + i);
}
"""


def test_conversion_intrinsics_round_by_their_mode_and_clamp_like_the_gpu():
    nan, inf = float("nan"), float("inf")
    f = np.array([2.5, -2.5, 3.7, -3.7, 1e10, -1e10, nan, inf, 0.49999997, -0.0], np.float32)
    d = np.array([2.5, -2.5, 1 / 3, -1 / 3, 1e20, -1e20, nan, -inf, 4294967295.5, 1e-300])
    n = len(f)
    out, narrow, wide = np.zeros(16 * n, np.int64), np.zeros(4 * n, np.float32), np.zeros(n)
    cuda.RawKernel(CONVERSIONS, "conversions", backend="cpu")((1,), (n,), (f, d, out, narrow, wide))
    out = out.reshape(n, 16)
    i32, u32, i64, u64 = (np.iinfo(t) for t in (np.int32, np.uint32, np.int64, np.uint64))
    assert out[:, 0].tolist() == [2, -2, 4, -4, i32.max, i32.min, 0, i32.max, 0, 0]       # nearest even
    assert out[:, 1].tolist() == [2, -2, 3, -3, i32.max, i32.min, 0, i32.max, 0, 0]       # toward zero
    assert out[:, 2].tolist() == [3, -2, 4, -3, i32.max, i32.min, 0, i32.max, 1, 0]       # up
    assert out[:, 3].tolist() == [2, -3, 3, -4, i32.max, i32.min, 0, i32.max, 0, 0]       # down
    assert out[:, 4].tolist() == [2, 0, 4, 0, u32.max, 0, 0, u32.max, 0, 0]               # unsigned: clamped at 0
    assert out[:, 5].tolist() == [2, 0, 3, 0, u32.max, 0, 0, u32.max, 0, 0]
    assert out[:, 6].tolist() == [2, -2, 3, -3, 10**10, -10**10, i64.min, i64.max, 0, 0]  # 64-bit NaN: top bit
    assert out[:, 7].astype(np.uint64).tolist() == [3, 0, 4, 0, 10**10, 0, 2**63, u64.max, 1, 0]
    assert out[:, 8].tolist() == [2, -2, 0, 0, i32.max, i32.min, i32.min, i32.min, i32.max, 0]  # from double: NaN top bit
    assert out[:, 9].tolist() == [2, -2, 0, 0, i32.max, i32.min, i32.min, i32.min, i32.max, 0]
    assert out[:, 10].tolist() == [3, 0, 1, 0, u32.max, 0, 2**31, 0, u32.max, 1]
    assert out[:, 11].tolist() == [2, -3, 0, -1, i64.max, i64.min, i64.min, i64.min, 4294967295, 0]
    assert out[:, 12].astype(np.uint64).tolist() == [2, 0, 0, 0, u64.max, 0, 2**63, 0, 4294967296, 0]
    assert out[:, 13].tolist() == [0, 1, 0, 1, 0, 1, 0, 0, 1, 1]     # both halves less (NaN: false)
    assert out[:, 14].tolist()[6] == 1 and out[:, 14].tolist()[0] == 10  # ordered != is false for NaN, unordered true
    assert out[:, 15].astype(np.uint32).tolist()[:2] == [0xFFFF0000, 0xFFFFFFFF]
    narrow = narrow.reshape(n, 4)
    third = np.float32(1 / 3)  # the nearest float is above 1/3
    below = np.nextafter(third, np.float32(0))
    assert narrow[2, 0] == below and narrow[2, 1] == third
    assert narrow[3, 0] == -below and narrow[3, 1] == -below
    assert narrow[2, 2] == 333333312  # 333333333 rounded down (the nearest float is 333333344)
    assert narrow[0, 3] == np.float32(16777218.0)  # 2^24 + 1 rounded up
    assert wide[0] == np.nextafter(float(2**60), inf)


SPECIAL = r"""
extern "C" __global__ void special(const double* z, double* inv, float* invf, double* scaled, int* dpx, unsigned* fns) {
    int i = threadIdx.x;
    inv[i] = erfcinv(z[i]);
    invf[i] = normcdfinvf((float)(z[i] / 2));
    scaled[i] = erfcx(z[i] * 40 - 20);
    if (i == 0) {
        dpx[0] = __vimax3_s32(-5, 7, 3); dpx[1] = __viaddmax_s32(2147483647, 1, -7);   // the sum wraps
        dpx[2] = (int)__vimin3_u16x2(0x00050001u, 0x00030009u, 0x00070002u);
        dpx[3] = (int)__viaddmax_s16x2(0x7fff0001u, 0x00010001u, 0x00000000u);         // 0x7fff + 1 wraps
        dpx[4] = __viaddmin_s32_relu(-3, 1, 5);
        bool p; dpx[5] = __vibmax_s32(4, 9, &p) * 10 + p;
        fns[0] = __fns(0xaaaaaaaau, 3, 1); fns[1] = __fns(0xaaaaaaaau, 3, -1);
        fns[2] = __fns(0xaaaaaaaau, 2, 1); fns[3] = __fns(0xaaaaaaaau, 2, -1);
        fns[4] = __fns(0xaaaaaaaau, 2, 0); fns[5] = __fns(0xaaaaaaaau, 1, 3); fns[6] = __fns(0xaaaaaaaau, 30, 2);
    }
}
"""


def test_erfcinv_tails_erfcx_dpx_and_fns():
    from scipy import special

    z = np.array([1e-300, 1e-100, 1e-20, 1e-9, 0.3, 1.0, 1.7, 2 - 1e-12, 0.05, 1.999999])
    n = len(z)
    inv, invf, scaled = np.zeros(n), np.zeros(n, np.float32), np.zeros(n)
    dpx, fns = np.zeros(6, np.int32), np.zeros(7, np.uint32)
    cuda.RawKernel(SPECIAL, "special", backend="cpu")((1,), (n,), (z, inv, invf, scaled, dpx, fns))
    np.testing.assert_allclose(inv, special.erfcinv(z), rtol=2e-15)      # 1 - z would lose the tails
    np.testing.assert_allclose(invf, special.ndtri((z / 2).astype(np.float32)), rtol=2e-6)
    mpmath = pytest.importorskip("mpmath")  # (scipy's erfcx is off by 3e-14 at -20)
    mpmath.mp.dps = 40
    exact = [float(mpmath.exp(mpmath.mpf(x) ** 2) * mpmath.erfc(mpmath.mpf(x))) for x in z * 40 - 20]
    np.testing.assert_allclose(scaled, exact, rtol=5e-15)
    assert dpx.tolist() == [7, -7, 0x00030001, 0x00000002, 0, 90]  # (*pred: 4 >= 9 is false)
    assert fns.tolist() == [3, 3, 3, 1, 0xFFFFFFFF, 5, 0xFFFFFFFF]


NORMS = r"""
struct V { float x, y, z; };
__device__ float norm(V v) { return sqrtf(v.x * v.x + v.y * v.y + v.z * v.z); }   // a kernel's own norm()
extern "C" __global__ void norms(const float* a, const double* d, float* o, double* od) {
    o[0] = norm3df(a[0], a[1], a[2]); o[1] = rnorm3df(a[0], a[1], a[2]); o[2] = norm4df(a[0], a[1], a[2], a[3]);
    o[3] = normf(4, a); o[4] = rnormf(4, a); o[5] = norm(V{3, 4, 12});
    od[0] = norm3d(d[0], d[1], d[2]); od[1] = norm(4, d); od[2] = rnorm4d(d[0], d[1], d[2], d[3]); od[3] = rcbrt(8.0);
}
"""


@pytest.mark.parametrize("scale", [1e30, 1e-30, 1.0])
def test_norms_neither_overflow_nor_underflow(scale):
    a = np.array([1, 2, 2, 4], np.float32) * np.float32(scale)   # squares overflow or underflow a float
    d = np.array([1, 2, 2, 4]) * scale ** 10                      # ... and a double
    o, od = np.zeros(6, np.float32), np.zeros(4)
    cuda.RawKernel(NORMS, "norms", backend="cpu")((1,), (1,), (a, d, o, od))
    np.testing.assert_allclose(o, np.array([3, 1 / 3, 5, 5, 1 / 5, 13 / scale]) * [scale, 1 / scale, scale, scale, 1 / scale, scale],
                               rtol=1e-6)
    np.testing.assert_allclose(od, [3 * scale ** 10, 5 * scale ** 10, 1 / (5 * scale ** 10), 0.5], rtol=1e-14)


def test_a_kernel_may_overload_cudas_math_names_and_a_redefinition_is_explained():
    # CUDA has double normcdf(double) and float sinpif(float); a float normcdf(float) of the kernel's own
    # is an overload beside CUDA's (as with nvcc), and a second sinpif(float) is a redefinition.
    own = r"""
    __device__ float normcdf(float x) { return x < 0 ? 0.0f : 1.0f; }     // a step, not CUDA's
    __device__ float erfinv(float x) { return -x; }
    extern "C" __global__ void k(float* o, double* d) { o[0] = normcdf(0.5f); o[1] = erfinv(0.5f); d[0] = normcdf(0.5); }
    """
    o, d = np.zeros(2, np.float32), np.zeros(1)
    cuda.RawKernel(own, "k", backend="cpu")((1,), (1,), (o, d))
    assert o.tolist() == [1.0, -0.5] and d[0] == pytest.approx(0.6914624612740131)
    twice = r"""
    __device__ float sinpif(float x) { return sinf(3.14159265f * x); }
    extern "C" __global__ void k(float* o) { o[0] = sinpif(0.5f); }
    """
    with pytest.raises(cuda.CompileError, match="sinpif is one of CUDA's own functions: give yours another name"):
        cuda.RawKernel(twice, "k", backend="cpu")((1,), (1,), (o,))


BIT_FIELDS = r"""
enum class Mode : unsigned char { Count = 0, Age = 1 };
enum Shift { NONE, ONE };
struct Cell { unsigned alive : 1; unsigned age : 7; unsigned id : 24;
              __device__ void step() { age += 1; alive = age < 3; } };
extern "C" __global__ void cells(Cell* g, unsigned* out, Mode mode, Shift shift) {
    __shared__ Cell c[32];
    int t = threadIdx.x;
    c[t].alive = 1; c[t].age = t % 4; c[t].id = 1000 + t;
    c[t].step();
    Cell* p = &c[t];
    p->id += shift;
    g[t] = c[t];
    g[t].id = g[t].id + 1;
    out[t] = mode == Mode::Age ? c[t].age : (unsigned)c[t].alive * 100000 + p->id;
}
"""


@pytest.mark.parametrize("sanitize", [False, True])
def test_bit_fields_and_enum_parameters(sanitize):
    g, out = np.zeros(32, np.uint32), np.zeros(32, np.uint32)
    kernel = cuda.RawKernel(BIT_FIELDS, "cells", backend="cpu", sanitize=sanitize)
    kernel((1,), (32,), (g, out, np.uint8(0), 1))   # an enum passes as its underlying integer
    t = np.arange(32)
    age = t % 4 + 1
    assert out.tolist() == ((age < 3) * 100000 + 1001 + t).tolist()
    assert (g >> 8).tolist() == (1002 + t).tolist() and (g & 1).tolist() == (age < 3).astype(int).tolist()
    kernel((1,), (32,), (g, out, 1, 0))
    assert out.tolist() == age.tolist()
    with pytest.raises(ValueError, match=r"parameter .mode. \(Mode mode\): 300 does not fit in Mode \(0 to 255\)"):
        kernel((1,), (32,), (g, out, 300, 0))


def test_two_threads_storing_bit_fields_of_one_element_race():
    # Each store rewrites the element's word: on a GPU one thread's store can undo the other's.
    racy = r"""
    struct Packed { unsigned lo : 16; unsigned hi : 16; };
    extern "C" __global__ void k(unsigned* out) {
        __shared__ Packed p[32];
        if (threadIdx.x < 32) p[threadIdx.x].lo = threadIdx.x;
        else p[threadIdx.x - 32].hi = threadIdx.x;
        __syncthreads();
        if (threadIdx.x < 32) out[threadIdx.x] = p[threadIdx.x].lo | (p[threadIdx.x].hi << 16);
    }
    """
    out = np.zeros(32, np.uint32)
    cuda.RawKernel(racy, "k", backend="cpu", sanitize=False)((1,), (64,), (out,))
    assert out.tolist() == [t | (t + 32) << 16 for t in range(32)]
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory p\[0\]: thread \(0, 0, 0\) wrote it at "
                                               r"line 5, and thread \(32, 0, 0\) writes it at line 6"):
        cuda.RawKernel(racy, "k", backend="cpu", sanitize=True)((1,), (64,), (out,))


def test_plain_char_pointers_take_bytes_as_cupy_does(backend):
    """`char*` text takes the bytes NumPy gives (uint8 from np.frombuffer, or a bytes array) as CuPy
    does; signed and unsigned char stay strict (their values differ above 127)."""
    source = r"""
extern "C" __global__ void upper(char* s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && s[i] >= 'a' && s[i] <= 'z') s[i] -= 32;
}
extern "C" __global__ void sign(const char* s, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = s[i] < 0;
}
extern "C" __global__ void histogram(const unsigned char* s, int* bins, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&bins[s[i]], 1);
}"""
    xp = cuda.xp if backend == "cupy" else np
    text = xp.asarray(np.frombuffer(b"hello, world", np.uint8).copy())
    cuda.RawKernel(source, "upper", backend=backend)((1,), (32,), (text, np.int32(12)))
    assert cuda.asnumpy(text).tobytes() == b"HELLO, WORLD"
    high, out = xp.asarray(np.array([65, 200], np.uint8)), xp.zeros(2, np.int32)
    cuda.RawKernel(source, "sign", backend=backend)((1,), (32,), (high, out, np.int32(2)))
    assert list(cuda.asnumpy(out)) == [0, 1]  # char is signed, as on a GPU
    if backend == "cpu":
        words = np.array([b"abc"])
        cuda.RawKernel(source, "upper", backend=backend)((1,), (32,), (words, np.int32(3)))
        assert words[0] == b"ABC"
        with pytest.raises(TypeError, match=r"needs bytes, but the array holds Python text .*text\.encode\(\)"):
            cuda.RawKernel(source, "upper", backend=backend)((1,), (32,), (np.array(["abc"]), np.int32(3)))
    with pytest.raises(TypeError, match=r"needs uint8 elements, but the array holds int8"):
        cuda.RawKernel(source, "histogram", backend=backend)((1,), (32,), (xp.zeros(4, np.int8), xp.zeros(256, np.int32),
                                                                           np.int32(4)))


WORD_ORDERS = r"""
__device__ __shared__ float everywhere[64];          // __device__ __shared__: allowed, the same as __shared__
extern "C" __global__ void orders(const float* x, float* y) {
    DYNAMIC
    __shared__ __device__ float a[64];
    float* s = (float*)smem;
    s[threadIdx.x] = x[threadIdx.x]; a[threadIdx.x] = 1.0f; everywhere[threadIdx.x] = 2.0f;
    __syncthreads();
    y[threadIdx.x] = s[(threadIdx.x + 1) % blockDim.x] + a[63 - threadIdx.x] + everywhere[threadIdx.x];
}
"""


@pytest.mark.parametrize("dynamic", ["extern float __shared__ smem[];", "__shared__ extern float smem[];",
                                     "extern __shared__ __align__(sizeof(double)) unsigned char smem[];",
                                     "extern volatile __shared__ float smem[];"])
def test_shared_declarations_in_any_word_order_nvcc_takes(dynamic):
    """`extern float __shared__ smem[];` (the threadFenceReduction sample), `__device__ __shared__`: nvcc
    takes the words in any order, and so does the CPU backend."""
    x, y = np.random.default_rng(0).random(64).astype(np.float32), np.zeros(64, np.float32)
    cuda.RawKernel(WORD_ORDERS.replace("DYNAMIC", dynamic), "orders", backend="cpu", sanitize=True)(
        (1,), (64,), (x, y), shared_mem=256)
    np.testing.assert_allclose(y, np.roll(x, -1) + 3)


MODERN = r"""
#include <cstdint>
struct Scaled { float v; __device__ float get(float a) const { return v * a; } };
extern "C" __global__ void modern(const float* x, float* y, const Scaled* s, int) {   // (an unused, unnamed int)
    __shared__ float tile[64];
    int i = threadIdx.x;
    auto* out = &y[i];                                   // auto* of an argument's element
    const auto* in = x + i;
    auto first = &tile[0];                               // the address of a __shared__ array's element
    first[i] = *in;
    __syncthreads();
    bool aligned = reinterpret_cast<uintptr_t>(x) % 4 == 0 && reinterpret_cast<uintptr_t>(tile) % 4 == 0;
    const void* raw = s + i;
    *out = aligned ? first[63 - i] + static_cast<const Scaled*>(raw)->get(2.0f) : -1.0f;
    if (i == 0 && PAST > 0) first[PAST] = 0.0f;             // PAST
}
"""


@pytest.mark.parametrize("sanitize", [False, True])
def test_modern_cpp_pointers_auto_uintptr_casts_and_unnamed_parameters(sanitize):
    """`auto* p = &y[i]`, `reinterpret_cast<uintptr_t>(x) % 16` (the alignment test before vector loads),
    a method called through `static_cast<const S*>(p)->`, an unnamed parameter: nvcc takes them all, and
    a pointer from `auto` keeps its array's bounds."""
    x = np.arange(64, dtype=np.float32)
    s = np.arange(64, dtype=np.float32)  # (struct Scaled: one float)
    y = np.zeros(64, np.float32)
    cuda.RawKernel(MODERN.replace("PAST", "0"), "modern", backend="cpu", sanitize=sanitize)((1,), (64,), (x, y, s, 7))
    np.testing.assert_array_equal(y, x[::-1] + 2 * s)
    with pytest.raises(cuda.KernelError, match=r"accessed tile\[64\] through a pointer into the __shared__ array tile"):
        cuda.RawKernel(MODERN.replace("PAST", "64"), "modern", backend="cpu", sanitize=sanitize)((1,), (64,), (x, y, s, 7))


def test_digit_separators_are_part_of_their_number():
    """C++14's `1'000` (an odd number of quotes on a line read as a character literal cut the line)."""
    source = r"""
extern "C" __global__ void separated(int* y) {
    if (threadIdx.x < 32) y[threadIdx.x] = (1'000 > 5) ? 0xFF'FF + (int)threadIdx.x : 0;
}
"""
    y = np.zeros(32, np.int32)
    cuda.RawKernel(source, "separated", backend="cpu")((1,), (32,), (y,))
    np.testing.assert_array_equal(y, 0xFFFF + np.arange(32))


def test_a_template_function_may_return_a_template_of_several_arguments():
    """`__device__ Pair<T, int> make(...)`: the comma between the return type's template arguments does not
    end a declaration (it was read as a __device__ variable named T)."""
    source = r"""
template <typename A, typename B> struct Pair { A a; B b; };
template <typename T> __device__ Pair<T, int> make(T a, int i) { Pair<T, int> r; r.a = a; r.b = i; return r; }
extern "C" __global__ void pairs(const float* x, float* a, int* b) {
    Pair<float, int> p = make(x[threadIdx.x], (int)threadIdx.x);
    a[threadIdx.x] = p.a; b[threadIdx.x] = p.b;
}
"""
    x, a, b = np.arange(8, dtype=np.float32) / 2, np.zeros(8, np.float32), np.zeros(8, np.int32)
    cuda.RawKernel(source, "pairs", backend="cpu")((1,), (8,), (x, a, b))
    assert a.tolist() == x.tolist() and b.tolist() == list(range(8))


POINTER_ALIASES = r"""
#include <cstdint>
typedef const float* cfptr;
using fptr = float*;
#define IPTR int32_t*
extern "C" __global__ void aliased(cfptr a, fptr b, IPTR counts, std::size_t n, [[maybe_unused]] int spare) {
    fptr out = b;                                        // a local of the alias: checked too
    std::size_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { out[i] = 2.0f * a[i]; counts[i] = (std::int32_t)i; }
    if (i == 0 && EXTRA >= 0) out[n + EXTRA] = 0.0f;     // PAST (EXTRA 0: one past the end)
}
"""


def test_pointer_type_aliases_std_types_and_attributes_in_parameters():
    """`typedef const float* cfptr;`, `using fptr = float*;`, `#define IPTR int32_t*` as parameter types
    take arrays (they were read as structs passed by value), `std::size_t n` is a size_t, and
    `[[maybe_unused]] int spare` a named int; accesses through them stay bounds-checked."""
    a, b, counts = np.arange(16, dtype=np.float32), np.zeros(16, np.float32), np.zeros(16, np.int32)
    source = POINTER_ALIASES.replace("EXTRA", "-1")  # (the last element: in bounds)
    cuda.RawKernel(source, "aliased", backend="cpu")((1,), (16,), (a, b, counts, 16, 0))
    assert b.tolist() == (2 * a).tolist() and counts.tolist() == list(range(16))
    with pytest.raises(cuda.KernelError, match=r"accessed b\[16\], but b has 16 elements"):
        cuda.RawKernel(POINTER_ALIASES.replace("EXTRA", "0"), "aliased", backend="cpu")((1,), (16,), (a, b, counts, 16, 0))
    with pytest.raises(ValueError, match="read-only"):  # cfptr points to const; fptr does not
        readonly = np.zeros(16, np.float32)
        readonly.flags.writeable = False
        cuda.RawKernel(source, "aliased", backend="cpu")((1,), (16,), (a, readonly, counts, 16, 0))


def test_a_kernel_in_a_namespace_takes_its_namespaces_types():
    """`namespace ops { struct Params {...}; __global__ void scale(Params p, Item* items) }`: the
    parameters' types are the namespace's (the launchers, outside it, could not name them)."""
    source = r"""
namespace ops {
struct Params { float factor; int n; };
struct Item { float value; };
extern "C" __global__ void scale(Params p, Item* items) {
    if (threadIdx.x < p.n) items[threadIdx.x].value *= p.factor;
}
}
"""
    params = np.array((2.5, 6), dtype=np.dtype([("factor", np.float32), ("n", np.int32)], align=True))[()]
    items = np.arange(8, dtype=np.float32)
    cuda.RawKernel(source, "scale", backend="cpu")((1,), (8,), (params, items))
    assert items.tolist() == [0.0, 2.5, 5.0, 7.5, 10.0, 12.5, 6.0, 7.0]


REWRITE_CORNERS = r"""
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
typedef float4* f4p;
extern "C" __global__ void corners(const float* x, float* out, int past) {
    cg::thread_block block = cg::this_thread_block();
    bool sync = threadIdx.x < 32;                        // a variable named like block.sync()
    int i = threadIdx.x;
    auto* const q = out + i;                              // auto* const
    float* rows[2] = {out, out + 32 + past};
    if (sync) *rows[0 + (i >= 16)] = 0.0f;                // (written back below: an element of each half)
    block.sync();
    *q = x[i];
    block.sync();
    if (i == 0) reinterpret_cast<f4p>(out)[1].x += 100.0f;   // a cast to a pointer alias
    if (i == 1 && past) *rows[1] = 1.0f;                  // PAST: rows[1] is one past the end
}
"""


@pytest.mark.parametrize("sanitize", [False, True])
def test_rewrite_corners_sync_named_variables_pointer_alias_casts_and_arrays_of_pointers(sanitize):
    """A variable named `sync` leaves block.sync() alone, `reinterpret_cast<f4p>` with `typedef float4*
    f4p` casts, `auto* const` is deduced, `*rows[i] = v` stores through an array of pointers (and is checked)."""
    x, out = np.arange(64, dtype=np.float32), np.zeros(64, np.float32)
    cuda.RawKernel(REWRITE_CORNERS, "corners", backend="cpu", sanitize=sanitize)((1,), (64,), (x, out, 0))
    expected = x.copy()
    expected[4] += 100.0
    np.testing.assert_array_equal(out, expected)
    with pytest.raises(cuda.KernelError, match=r"accessed out\[64\], but out has 64 elements"):
        cuda.RawKernel(REWRITE_CORNERS, "corners", backend="cpu", sanitize=sanitize)((1,), (64,), (x, out, 32))



def test_a_store_through_an_array_of_pointers_is_seen_by_the_race_checker():
    """`*rows[i] = v`: rows[i] is read, the element it points to written (and noted as any store)."""
    src = r"""
extern "C" __global__ void through(float* a, float* b) {
    float* rows[2] = {a, b};
    *rows[threadIdx.x % 2] = (float)threadIdx.x;   // STORE: every even thread writes a[0]
}"""
    a, b = np.zeros(1, np.float32), np.zeros(1, np.float32)
    with pytest.raises(cuda.KernelError, match=r"writes a\[0\], which thread \(0, 0, 0\) also wrote") as info:
        cuda.RawKernel(src, "through", backend="cpu")((1,), (4,), (a, b))
    assert info.value.line == 4
    cuda.RawKernel(src, "through", backend="cpu")((1,), (2,), (a, b))
    assert (a[0], b[0]) == (0.0, 1.0)


POINTER_REFERENCES = r"""
__device__ void swap_ptr(float*& a, float*& b) { float* t = a; a = b; b = t; }
template <typename T> __device__ void advance(T*& p, int k) { p += k; }
__device__ void swap(float** a, float** b) { float* t = *a; *a = *b; *b = t; }
extern "C" __global__ void ping_pong(const float* in, float* out, int past) {
    __shared__ float buf_a[32], buf_b[32];
    float *src = buf_a, *dst = buf_b;
    src[threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    dst[threadIdx.x] = src[threadIdx.x] + src[(threadIdx.x + 1) % 32];
    __syncthreads();
    swap_ptr(src, dst);                       // src is buf_b now
    float** pp = &src;
    float* rows[2] = {out, out + 32};
    float** r = rows;
    swap(pp, &dst);                           // and back: src is buf_a, dst buf_b
    float* o = r[0];
    advance(o, threadIdx.x + past);
    *o = dst[threadIdx.x] - **pp * 0.0f;      // PAST: o walks past out's end
}
"""


def test_references_to_pointers_and_pointers_to_pointers_keep_their_bounds():
    """`float*& p` and `T*& p` parameters take a local pointer (the ping-pong swap), and a local
    `float** pp = &p;` or `= rows` points to checked pointers: an index past the end is still found."""
    x = np.arange(32, dtype=np.float32)
    out = np.zeros(32, np.float32)
    cuda.RawKernel(POINTER_REFERENCES, "ping_pong", backend="cpu")((1,), (32,), (x, out, 0))
    np.testing.assert_array_equal(out, x + np.roll(x, -1))
    with pytest.raises(cuda.KernelError, match=r"out\[32\], but out has 32 elements") as info:
        cuda.RawKernel(POINTER_REFERENCES, "ping_pong", backend="cpu")((1,), (32,), (x, out, 1))
    assert info.value.line == 19


def test_casts_in_macros_and_a_t_pointer_that_deduces_const():
    """`#define ADDR(p) reinterpret_cast<uintptr_t>(p)` (an alignment test) takes a checked pointer as
    the cast in code does, and `template <class T> T* nth(T* p, int k)` given a `const float*` makes T
    `const float`, as C++ deduces it."""
    src = r"""
#include <cstdint>
#define ADDR(p) reinterpret_cast<uintptr_t>(p)
#define ALIGNED(p, a) (reinterpret_cast<size_t>(p) % (a) == 0)
template <class T> __device__ T* nth(T* p, int k) { return p + k; }
extern "C" __global__ void k(const float* x, unsigned long long* o, float* y) {
    o[0] = ADDR(x) % 16;
    o[1] = ALIGNED(x, 16) + ALIGNED(x + 1, 16);
    y[threadIdx.x] = *nth(x, threadIdx.x + 1) + *nth(y, 0) * 0.0f;
}"""
    x, o, y = np.arange(16, dtype=np.float32), np.zeros(2, np.uint64), np.zeros(4, np.float32)
    cuda.RawKernel(src, "k", backend="cpu")((1,), (4,), (x, o, y))
    address = x.ctypes.data
    assert o.tolist() == [address % 16, int(address % 16 == 0) + int((address + 4) % 16 == 0)]
    np.testing.assert_array_equal(y, x[1:5])


def test_a_kernel_declared_through_a_macro_is_found():
    """`#define GLOBAL extern "C" __global__` and `#define KERNEL(name) extern "C" __global__ void name(...)`:
    the kernel is where the macro is used, as the preprocessor sees it."""
    src = r"""
#define GLOBAL extern "C" __global__
#define KERNEL(name) extern "C" __global__ void name(float* y, int n)
#define SCALE(T, SUFFIX, BY) extern "C" __global__ void scale_##SUFFIX(T* y, int n) { \
    int i = threadIdx.x; if (i < n) y[i] *= BY; if (i == 0 && n < 0) printf("%s\n", #T); }
GLOBAL void triple(float* y, int n) { int i = threadIdx.x; if (i < n) y[i] *= 3.0f; }
SCALE(int, i32, 5)
KERNEL(twice) {
    int i = threadIdx.x;
    if (i <= n) y[i] *= 2.0f;   // BUG: <=
}
"""
    y = np.ones(8, np.float32)
    module = cuda.RawModule(code=src, backend="cpu")
    module.get_function("triple")((1,), (8,), (y, 8))
    np.testing.assert_array_equal(y, 3)
    with pytest.raises(cuda.KernelError, match=r"y\[8\], but y has 8 elements") as info:
        module.get_function("twice")((1,), (16,), (y, 8))
    assert info.value.line == 10
    ints = np.arange(4, dtype=np.int32)
    module.get_function("scale_i32")((1,), (4,), (ints, 4))  # (`##` pastes the name, `#T` is "int")
    np.testing.assert_array_equal(ints, 5 * np.arange(4))


def test_overloads_on_const_pick_as_cpp_does():
    """`f(float*)` and `f(const float*)`: a __shared__ element's address picks the first, a const
    argument's the second."""
    src = r"""
__device__ float tag(const float* p) { return *p * 3.0f; }
__device__ float tag(float* p) { *p = 7.0f; return 0.0f; }
extern "C" __global__ void k(const float* x, float* y) {
    __shared__ float s[32];
    int i = threadIdx.x;
    tag(&s[i]);
    y[i] = s[i] + tag(&x[i]);
}"""
    x, y = np.arange(32, dtype=np.float32), np.zeros(32, np.float32)
    cuda.RawKernel(src, "k", backend="cpu")((1,), (32,), (x, y))
    np.testing.assert_array_equal(y, 7 + 3 * x)


def test_template_overloads_on_const_pick_as_cpp_does():
    """`template <class T> T* row(T* base, ...)` beside `const T* row(const T* base, ...)` (a pitched
    matrix's row): a writable array takes the first, a const one the second."""
    src = r"""
template <typename T> __device__ T* row(T* base, size_t pitch, int r) {
    return reinterpret_cast<T*>(reinterpret_cast<char*>(base) + r * pitch);
}
template <typename T> __device__ const T* row(const T* base, size_t pitch, int r) {
    return reinterpret_cast<const T*>(reinterpret_cast<const char*>(base) + r * pitch);
}
extern "C" __global__ void k(const float* in, float* out, size_t pitch, int w) {
    int x = threadIdx.x, y = blockIdx.x;
    if (x < w) row(out, pitch, y)[x] = 2.0f * row(in, pitch, y)[x];
}"""
    a = np.arange(3 * 8, dtype=np.float32).reshape(3, 8)
    b = np.zeros_like(a)
    cuda.RawKernel(src, "k", backend="cpu")((3,), (8,), (a, b, np.uint64(32), np.int32(8)))
    np.testing.assert_array_equal(b, 2 * a)


def test_the_address_of_a_variable_as_a_branch_of_a_conditional():
    """`i < n ? &x[i] : &dummy`: a checked pointer and a variable's address in one `?:` (a raw and a
    checked pointer have no common type, so this did not compile)."""
    src = r"""
__device__ const float* either(const float& a, const float* b, bool f) { return f ? &a : &b[0]; }
extern "C" __global__ void k(const float* x, float* y, int n) {
    int i = threadIdx.x;
    float dummy = -1.0f;
    const float* p = i < n ? &x[i] : &dummy;
    const float* q = i >= n ? &dummy : x + i;
    y[i] = *p + *q + *either(x[0], x, i % 2) * 0.0f;
}"""
    x, y = np.arange(4, dtype=np.float32), np.zeros(8, np.float32)
    cuda.RawKernel(src, "k", backend="cpu")((1,), (8,), (x, y, 4))
    np.testing.assert_array_equal(y, [0, 2, 4, 6, -2, -2, -2, -2])


def test_x_macros_and_nested_macros_that_declare_kernels():
    src = r"""
#define OPS(X) X(add, +) X(sub, -)
#define DEFINE_KERNEL(NAME, OP) \
extern "C" __global__ void ew_##NAME(const float* a, const float* b, float* c, int n) { \
    int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) c[i] = a[i] OP b[i]; }
OPS(DEFINE_KERNEL)
#define KNAME(s) scale_##s
#define KERNEL(s) extern "C" __global__ void KNAME(s)
KERNEL(half)(float* x, int n) { int i = threadIdx.x; if (i < n) x[i] *= 0.5f; }
#define LIST X(one, 1) X(two, 2)
#define X(name, v) extern "C" __global__ void set_##name(int* o) { o[threadIdx.x] = v; }
LIST
#undef X
"""
    module = cuda.RawModule(code=src, backend="cpu")
    a, b, c = np.arange(4, dtype=np.float32), np.ones(4, np.float32), np.zeros(4, np.float32)
    module.get_function("ew_sub")((1,), (4,), (a, b, c, 4))
    np.testing.assert_array_equal(c, a - b)
    module.get_function("scale_half")((1,), (4,), (a, 4))
    np.testing.assert_array_equal(a, np.arange(4) / 2)
    o = np.zeros(2, np.int32)
    module.get_function("set_two")((1,), (2,), (o,))
    assert o.tolist() == [2, 2]


def test_pointer_arithmetic_on_local_arrays_and_const_overloads_of_one_return_type():
    src = r"""
template <typename T> __device__ int which(T* p) { return 1; }
template <typename T> __device__ int which(const T* p) { return 2; }
extern "C" __global__ void k(const float* ca, float* a, int* out) {
    float loc[8];
    for (int i = 0; i < 8; ++i) loc[i] = i;
    float* p = loc + 3;
    float* rows[2] = {a, a + 1};
    float* const* cr = rows;
    float b2[sizeof(loc) / sizeof(loc[0])];
    b2[7] = 1.0f;
    out[0] = which(a) * 10 + which(ca);
    out[1] = (int)(p - loc) * 10 + (int)(&loc[6] - p);
    out[2] = (int)(cr[1] - a) + (int)b2[7];
}"""
    a, out = np.zeros(2, np.float32), np.zeros(3, np.int32)
    cuda.RawKernel(src, "k", backend="cpu")((1,), (1,), (a, a, out))
    assert out.tolist() == [12, 33, 2]


def test_sizeof_a_row_of_a_two_dimensional_array_is_the_rows():
    """`sizeof(m[0]) / sizeof(m[0][0])`, the columns of `float m[3][5]`: 5, local or __shared__ (a row of a
    checked array is a view, 48 bytes, which gave 12 columns and reads past the row)."""
    src = r"""
extern "C" __global__ void k(int* out) {
    float m[3][5];
    __shared__ double s[4][6];
    const int columns = sizeof(m[0]) / sizeof(m[0][0]);
    for (int c = 0; c < columns; ++c) m[2][c] = c;
    s[0][0] = m[2][4];
    out[0] = columns, out[1] = sizeof s[1] / sizeof s[1][0], out[2] = sizeof(*m), out[3] = sizeof(*s);
    out[4] = sizeof(m) / sizeof(m[0]), out[5] = (int)s[0][0];
}"""
    out = np.zeros(6, np.int32)
    cuda.RawKernel(src, "k", backend="cpu")((1,), (1,), (out,))
    assert out.tolist() == [5, 6, 20, 48, 3, 4]


@pytest.mark.parametrize("register, expected", [
    ("laneid", lambda t: t % 32), ("warpid", lambda t: t // 32), ("lanemask_lt", lambda t: (1 << (t % 32)) - 1),
    ("lanemask_le", lambda t: (2 << (t % 32)) - 1), ("lanemask_gt", lambda t: ~((2 << (t % 32)) - 1) & 0xFFFFFFFF),
    ("lanemask_ge", lambda t: ~((1 << (t % 32)) - 1) & 0xFFFFFFFF), ("lanemask_eq", lambda t: 1 << (t % 32))])
def test_inline_asm_reading_a_special_register_runs_as_written(register, expected):
    """probe 15, then the samples' habit: `asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m));` (the Pro Tip's warp-aggregated
    atomics, the lane id helpers) runs as written, with the value a GPU's register holds (it was refused)."""
    source = (f'__device__ unsigned special() {{ unsigned m; asm volatile("mov.u32 %0, %%{register};" : "=r"(m)); '
              'return m; }\n'
              'extern "C" __global__ void k(unsigned* x) { x[threadIdx.x] = special(); }')
    out = np.zeros(64, np.uint32)
    cuda.RawKernel(source, "k", backend="cpu")((1,), (64,), (out,))
    assert out.tolist() == [expected(t) for t in range(64)]


def test_the_warp_aggregated_increment_with_its_lane_mask_asm_compacts_right_and_other_asm_is_refused():
    """The CUDA blog's warp-aggregated atomics, as written (lanemask_lt by asm, clock64 by asm too), under the
    sanitizer: every positive element lands once. Any other inline PTX (an add) is still refused, with the advice."""
    source = r"""
__device__ int atomicAggInc(int* ctr) {
    unsigned active = __activemask();
    unsigned lanemask;
    asm("mov.u32 %0, %%lanemask_lt;" : "=r"(lanemask));
    int leader = __ffs(active) - 1;
    int change = __popc(active);
    unsigned rank = __popc(active & lanemask);
    int warp_res;
    if (rank == 0) warp_res = atomicAdd(ctr, change);
    warp_res = __shfl_sync(active, warp_res, leader);
    return warp_res + rank;
}
extern "C" __global__ void filter(const int* src, int* dst, int* nres, long long* started, int n) {
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    long long t;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(t));
    if (i == 0) started[0] = t;
    if (i < n && src[i] > 0) dst[atomicAggInc(nres)] = src[i];
}
extern "C" __global__ void add_one(unsigned* out) {
    unsigned r;
    asm("add.u32 %0, %1, 1;" : "=r"(r) : "r"(threadIdx.x));
    out[threadIdx.x] = r;
}"""
    src = np.random.default_rng(5).integers(-5, 5, 256).astype(np.int32)
    dst, count, started = np.zeros(256, np.int32), np.zeros(1, np.int32), np.zeros(1, np.int64)
    for sanitize in (True, False):
        dst[:], count[:] = 0, 0
        cuda.RawKernel(source, "filter", backend="cpu", sanitize=sanitize)((4,), (64,), (src, dst, count, started, 256))
        assert count[0] == (src > 0).sum() and sorted(dst[:count[0]]) == sorted(src[src > 0]) and started[0] > 0
    with pytest.raises(cuda.CompileError, match=r"uses asm \(line 23\): inline PTX assembly(?s:.*)write the operation "
                                               r"in CUDA C"):
        cuda.RawKernel(source, "add_one", backend="cpu")


PUNS = r"""
union Bits { float f; int i; };
extern "C" __global__ void puns(float* out, int mode) {
    __shared__ float s[32];
    float local[2];
    int t = threadIdx.x;
    int* as_int = mode == 0 ? (int*)out : mode == 1 ? (int*)s : (int*)local;
    float* as_float = mode == 0 ? out : mode == 1 ? s : local;
    int k = mode == 2 ? 1 : t;
    as_int[k] = 0;            // an int store,
    as_float[k] = 1.0f;       // a float store to the same address,
    int bits = as_int[k];     // and an int load of it: 1.0f's bits, in this order
    reinterpret_cast<int*>(out)[t] = bits;
}
"""


@pytest.mark.parametrize("mode", [0, 1, 2])
def test_memory_written_as_one_type_and_read_as_another_keeps_its_order(backend, mode):
    """`int* k = (int*)out; k[i] = 0; out[i] = 1.0f; k[i]` reads 1.0f's bits on a GPU. C++ leaves it undefined
    (strict aliasing), and g++ -O3 moved the int load before the float store: 0 in a plain launch (the sanitized
    build, at -O1, was right). A source that casts pointers (or has a union) is built without that assumption."""
    out = on(backend, np.zeros(32, np.float32))
    cuda.RawKernel(PUNS, "puns", backend=backend, sanitize=False)((1,), (32,), (out, np.int32(mode)))
    bits = cuda.asnumpy(out).view(np.int32)
    assert (bits == np.float32(1.0).view(np.int32)).all()


@pytest.mark.parametrize("code, puns", [
    ("o[i] = a[i] * sizeof(float*);", False),
    ("o[i] = (float)a[i] + (int)a[i];", False),
    ("int* k = (int*)o; k[i] = 1;", True),
    ("o[i] = reinterpret_cast<const float4*>(a)[0].x;", True),
    ("float4 v = *(float4*)&a[0]; o[i] = v.x;", True),
    ("void* v = o; static_cast<float*>(v)[i] = 1;", True),
    ("extern __shared__ float x[]; extern __shared__ int y[]; x[i] = 1; o[i] = y[i];", True),
])
def test_which_sources_are_built_without_strict_aliasing(code, puns):
    text = 'extern "C" __global__ void k(const float* a, float* o) { int i = threadIdx.x; ' + code + " }"
    assert cuda_source.parse(text).puns is puns
    assert cuda_source.parse("#define F4(p) (*(float4*)(p))\n" + text).puns


TERNARY_ARRAYS = r"""
__device__ float total(const float* p, int n) { float s = 0; for (int i = 0; i < n; ++i) s += p[i]; return s; }
extern "C" __global__ void pick(const float* a, float* out, int big, int count) {
    __shared__ float s[32];
    float l[4] = {1, 2, 3, 4};
    int t = threadIdx.x;
    s[t] = a[t];
    __syncthreads();
    float* p = big ? s : l;                           // two arrays of different lengths: both decay
    const float* q = big ? a : (big > 1 ? (s) : (l));
    out[t] = p[t % 4] + q[t % 4] + total(big ? s : l, count);   // PICK
}
"""


def test_a_conditional_between_arrays_of_different_lengths_is_a_pointer_that_keeps_bounds(backend):
    """`c ? s : l` of a __shared__ float[32] and a local float[4] is a float* in C++ (both decay); here the two
    were views of different types, which `?:` cannot join: the kernel did not compile. Each branch is now a checked
    pointer to its array's first element, so `total(l, 5)` still reads past l."""
    a = np.arange(32, dtype=np.float32)
    out = on(backend, np.zeros(32, np.float32))
    kernel = cuda.RawKernel(TERNARY_ARRAYS, "pick", backend=backend)
    kernel((1,), (32,), (on(backend, a), out, np.int32(1), np.int32(32)))
    np.testing.assert_array_equal(cuda.asnumpy(out), 2 * (np.arange(32) % 4) + a.sum())
    kernel((1,), (32,), (on(backend, a), out, np.int32(0), np.int32(4)))
    np.testing.assert_array_equal(cuda.asnumpy(out), 2 * (np.arange(32) % 4 + 1) + 10)
    if backend == "cpu":
        with pytest.raises(cuda.KernelError, match=r"local array l") as info:
            kernel((1,), (32,), (a, np.zeros(32, np.float32), np.int32(0), np.int32(5)))
        assert info.value.line == 2


MODERN_CPP = r"""
template <class T> struct View { T* data; int n; __device__ T& operator[](int i) const { return data[i]; } };
template <class T> View(T*, int) -> View<T>;
__device__ decltype(auto) at(float* p, int i) { return (p[i]); }
extern "C" __global__ void modern(const float* a, float* out, int shift) {
    int t = threadIdx.x;
    View in{a, 32};                        // class template argument deduction through the guide
    View<float> o{out, 32};
    at(out, t) = in[t];                    // a decltype(auto) function returning a reference
    o[t] += at(out, t + shift) * 0.0f;     // AT
}
"""


def test_deduction_guides_and_decltype_auto_functions_compile_and_stay_checked(backend):
    """`View v{a, 32};` through a deduction guide `View(T*, int) -> View<T>` did not compile (a checked pointer
    is no T*); a `decltype(auto) at(float* p, int i)` was not read as a function at all, so its pointer stayed
    raw and `at(out, 32)` wrote past out unchecked."""
    a = np.arange(32, dtype=np.float32)
    out = on(backend, np.zeros(32, np.float32))
    kernel = cuda.RawKernel(MODERN_CPP, "modern", backend=backend)
    kernel((1,), (32,), (on(backend, a), out, np.int32(0)))
    np.testing.assert_array_equal(cuda.asnumpy(out), a)
    if backend == "cpu":
        with pytest.raises(cuda.KernelError, match=r"out\[32\], but out has 32 elements") as info:
            kernel((1,), (32,), (a, np.zeros(32, np.float32), np.int32(1)))
        assert info.value.line == 4 and "called at line 10" in str(info.value)


ARRAY_TYPES = r"""
#include <cuda/std/iterator>
extern "C" __global__ void array_types(const float* a, float* out) {
    int t = threadIdx.x;
    float l[4] = {a[0], a[1], a[2], a[3]};
    float m[2][2] = {};
    decltype(l) twice;                                   // an array of l's type
    for (int i = 0; i < (int)cuda::std::size(l); ++i) twice[i] = 2.0f * l[i];
    decltype(m[0]) row = m[1];                           // a row of m
    row[0] = twice[t % 4];
    out[t] = m[1][0];
}
"""


def test_decltype_of_a_local_array_and_of_its_row_and_its_size(backend):
    """`decltype(l) twice;` did not compile (l's type was its checked view's, which has no default constructor),
    `cuda::std::size(l)` did not either, and `decltype(m[0]) row = m[1];` crashed in the plain build: the access
    inside decltype was rewritten, which made row a reference to a temporary."""
    a = np.arange(1, 33, dtype=np.float32)
    out = on(backend, np.zeros(32, np.float32))
    cuda.RawKernel(ARRAY_TYPES, "array_types", backend=backend, sanitize=False)((1,), (32,), (on(backend, a), out))
    np.testing.assert_array_equal(cuda.asnumpy(out), 2.0 * a[np.arange(32) % 4])


LAMBDA_COPIES = r"""
template <class F> __device__ float apply(F f, int j) { return f(j); }
__device__ float sum4(const float* p) { return p[0] + p[1] + p[2] + p[3]; }
extern "C" __global__ void copies(float* out, int last) {
    float m[2][3] = {{1, 2, 3}, {4, 5, 6}};
    float v[4] = {1, 1, 1, 1};
    auto f = [=](int j) { return m[1][j] + v[j] + sizeof(v) / sizeof(v[0]); };
    m[1][0] = 100; v[0] = 100;
    out[0] = apply(f, 0);                                   // 4 + 1 + 4: the copies made with f
    auto g = [&, v](int j) { return v[j] + m[1][0]; };
    out[1] = g(0);                                          // 100 + 100
    auto h = [=]() { auto inner = [=]() { float s = 0; for (float x : v) s += x; return s + sum4(v); }; return inner(); };
    v[1] = 50;
    out[2] = h();                                           // (100 + 1 + 1 + 1) * 2
    auto bump = [v]() mutable { v[0] += 1; return v[0]; };
    out[3] = bump(); out[4] = bump(); out[5] = v[0];        // 101, 102, and v itself is 100
    auto read = [=](int j) { return v[j]; };
    out[6] = read(last);                                    // READ
}
"""


def test_a_lambda_that_captures_a_local_array_by_copy_gets_a_copy(backend):
    """`[=]` and `[v]` copy a local array into the lambda, as C++ says: a later `v[0] = 100;` does not show
    in it, and a mutable lambda's writes stay in its copy (the array's view was copied, which shared the
    caller's elements). The copy stays checked: read(4) is named as v[4]."""
    out = on(backend, np.zeros(7, np.float32))
    cuda.RawKernel(LAMBDA_COPIES, "copies", backend=backend)((1,), (1,), (out, np.int32(3)))
    np.testing.assert_array_equal(cuda.asnumpy(out), [9, 200, 206, 101, 102, 100, 1])
    if backend == "cpu":
        with pytest.raises(cuda.KernelError, match=r"accessed v\[4\], but that dimension of the local array v has 4"):
            cuda.RawKernel(LAMBDA_COPIES, "copies", backend=backend)((1,), (1,), (out, np.int32(4)))


CUB_COLLECTIVES = r"""
#include <cub/cub.cuh>
typedef cub::BlockScan<int, 64> Scan;                    // an alias made outside the kernel
extern "C" __global__ void reduce(const float* x, float* out, int valid) {
    typedef cub::BlockReduce<float, 64> BlockReduce;
    __shared__ typename BlockReduce::TempStorage temp;
    float v = x[blockIdx.x * 64 + threadIdx.x];
    float pair[2] = {v, 2.0f * v};
    float total = BlockReduce(temp).Sum(v);              // SUM
    __syncthreads();
    float top = BlockReduce(temp).Reduce(v, cub::Max());
    __syncthreads();
    float some = BlockReduce(temp).Sum(v, valid);
    __syncthreads();
    float both = BlockReduce(temp).Sum(pair);
    if (threadIdx.x == 0) {
        out[4 * blockIdx.x] = total;
        out[4 * blockIdx.x + 1] = top;
        out[4 * blockIdx.x + 2] = some;
        out[4 * blockIdx.x + 3] = both;
    }
}
extern "C" __global__ void scan(const int* x, int* out, int* total) {
    __shared__ typename Scan::TempStorage temp;
    int v = x[threadIdx.x], before, upto, best, aggregate;
    Scan(temp).ExclusiveSum(v, before, aggregate);
    __syncthreads();
    Scan(temp).InclusiveSum(v, upto);
    __syncthreads();
    Scan(temp).ExclusiveScan(v, best, -1, cub::Max());
    __syncthreads();
    int items[2] = {v, v}, sums[2];
    Scan(temp).ExclusiveSum(items, sums);
    out[threadIdx.x] = before;
    out[64 + threadIdx.x] = upto;
    out[128 + threadIdx.x] = best;
    out[192 + 2 * threadIdx.x] = sums[0];
    out[193 + 2 * threadIdx.x] = sums[1];
    if (threadIdx.x == 0) total[0] = aggregate;
}
extern "C" __global__ void warps(const int* x, int* out) {
    typedef cub::WarpReduce<int> WarpReduce;
    typedef cub::WarpReduce<int, 16> HalfWarp;
    __shared__ typename WarpReduce::TempStorage temp[2];
    __shared__ typename HalfWarp::TempStorage halves[4];
    int warp = threadIdx.x / 32;
    int sum = WarpReduce(temp[warp]).Sum(x[threadIdx.x]);
    int half = HalfWarp(halves[threadIdx.x / 16]).Sum(x[threadIdx.x]);
    if (threadIdx.x % 32 == 0) out[warp] = sum;
    if (threadIdx.x % 16 == 0) out[2 + threadIdx.x / 16] = half;
}
"""


@pytest.mark.parametrize("sanitize", [True, False])
def test_cub_block_reduce_block_scan_and_warp_reduce_run_as_with_cub(sanitize):
    """CUB's collectives, as its documentation writes them: the storage __shared__, one call a line, a
    __syncthreads() before the storage is used again; a reduction's total in thread 0, a scan's in every
    thread. (The kernels were refused: "uses cub".)"""
    module = cuda.RawModule(code=CUB_COLLECTIVES, backend="cpu", sanitize=sanitize)
    x = np.random.default_rng(5).random(128).astype(np.float32)
    out = np.zeros(8, np.float32)
    module.get_function("reduce")((2,), (64,), (x, out, 10))
    blocks = x.reshape(2, 64)
    np.testing.assert_allclose(out.reshape(2, 4), np.stack([blocks.sum(1), blocks.max(1), blocks[:, :10].sum(1),
                                                            3 * blocks.sum(1)], 1), rtol=1e-5)
    v = np.random.default_rng(6).integers(0, 10, 64).astype(np.int32)
    out, total = np.zeros(320, np.int32), np.zeros(1, np.int32)
    module.get_function("scan")((1,), (64,), (v, out, total))
    np.testing.assert_array_equal(out[:64], np.concatenate([[0], np.cumsum(v)[:-1]]))
    np.testing.assert_array_equal(out[64:128], np.cumsum(v))
    np.testing.assert_array_equal(out[128:192], np.concatenate([[-1], np.maximum.accumulate(v)[:-1]]))
    np.testing.assert_array_equal(out[192:], np.concatenate([[0], np.cumsum(np.repeat(v, 2))[:-1]]))
    assert total[0] == v.sum()
    out = np.zeros(6, np.int32)
    module.get_function("warps")((1,), (64,), (v, out))
    np.testing.assert_array_equal(out, np.concatenate([v.reshape(2, 32).sum(1), v.reshape(4, 16).sum(1)]))


def test_cccl_3s_cuda_maximum_and_minimum_take_the_place_of_cub_max():
    """CCCL 3 (CUDA 13) removed cub::Max() and cub::Min(): its examples pass <cuda/functional>'s cuda::maximum<>{} to
    Reduce and ExclusiveScan. It compiles here as with NVRTC, and without its #include it is refused as by NVRTC."""
    source = "#include <cuda/functional>\n" + CUB_COLLECTIVES.replace("cub::Max()", "cuda::maximum<>{}")
    module = cuda.RawModule(code=source, backend="cpu")
    x = np.random.default_rng(5).random(128).astype(np.float32)
    out = np.zeros(8, np.float32)
    module.get_function("reduce")((2,), (64,), (x, out, 10))
    np.testing.assert_allclose(out[1::4], x.reshape(2, 64).max(1))
    v = np.random.default_rng(6).integers(0, 10, 64).astype(np.int32)
    out, total = np.zeros(320, np.int32), np.zeros(1, np.int32)
    module.get_function("scan")((1,), (64,), (v, out, total))
    np.testing.assert_array_equal(out[128:192], np.concatenate([[-1], np.maximum.accumulate(v)[:-1]]))
    smallest = r"""
#include <cuda/functional>
extern "C" __global__ void clamp(const float* x, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = cuda::minimum<float>{}(cuda::maximum<>{}(x[i], 0.0f), 1.0f);
}
"""
    y = np.linspace(-1, 2, 64, dtype=np.float32)
    clamped = np.zeros_like(y)
    cuda.RawKernel(smallest, "clamp", backend="cpu")((1,), (64,), (y, clamped, np.int32(64)))
    np.testing.assert_array_equal(clamped, np.clip(y, 0, 1))
    with pytest.raises(cuda.CompileError, match=r"line 5: uses libcu\+\+'s function objects \(`cuda::maximum`, "
                                                r"`cuda::minimum`\), declared in <cuda/functional>, which this source "
                                                r"does not include"):
        cuda.RawKernel(smallest.replace("#include <cuda/functional>", ""), "clamp", backend="cpu")(
            (1,), (64,), (y, clamped, np.int32(64)))


CUB_TILES = r"""
#include <cub/cub.cuh>
// CUB's documented way of scanning more items than a block holds: tile after tile, a block prefix
// callback carrying the running total from one tile to the next
struct BlockPrefixCallbackOp {
    int running_total;
    __device__ BlockPrefixCallbackOp(int running_total) : running_total(running_total) {}
    __device__ int operator()(int block_aggregate) {
        int old_prefix = running_total;
        running_total += block_aggregate;
        return old_prefix;
    }
};
typedef cub::BlockScan<int, 32> Scan;
extern "C" __global__ void tiles(const int* x, int* out, int n) {
    __shared__ typename Scan::TempStorage temp;
    BlockPrefixCallbackOp prefix_op(0);
    for (int start = 0; start < n; start += 32 * 4) {
        int items[4];
        for (int k = 0; k < 4; k++) items[k] = x[start + 4 * threadIdx.x + k];
        Scan(temp).ExclusiveSum(items, items, prefix_op);  // in place, as CUB's example does
        __syncthreads();
        for (int k = 0; k < 4; k++) out[start + 4 * threadIdx.x + k] = items[k];
    }
}
extern "C" __global__ void forms(const int* x, int* out, int* totals) {
    __shared__ typename Scan::TempStorage temp;
    int items[2] = {x[2 * threadIdx.x], x[2 * threadIdx.x + 1]}, a[2], b[2], c[2], d[2];
    int sum_total, max_total, v = x[2 * threadIdx.x], e, f;
    Scan(temp).ExclusiveSum(items, a, sum_total);
    __syncthreads();
    Scan(temp).InclusiveScan(items, b, cub::Max(), max_total);
    __syncthreads();
    Scan(temp).ExclusiveScan(items, c, 100, cub::Min());
    __syncthreads();
    Scan(temp).InclusiveSum(items, d);
    __syncthreads();
    BlockPrefixCallbackOp op(1000);
    Scan(temp).InclusiveSum(v, e, op);
    __syncthreads();
    BlockPrefixCallbackOp op2(1000);
    Scan(temp).ExclusiveScan(v, f, cub::Sum(), op2);
    int t = threadIdx.x;
    out[2 * t] = a[0], out[2 * t + 1] = a[1];
    out[64 + 2 * t] = b[0], out[65 + 2 * t] = b[1];
    out[128 + 2 * t] = c[0], out[129 + 2 * t] = c[1];
    out[192 + 2 * t] = d[0], out[193 + 2 * t] = d[1];
    out[256 + t] = e, out[288 + t] = f;
    if (t == 0) totals[0] = sum_total, totals[1] = max_total;
}
"""


@pytest.mark.parametrize("sanitize", [True, False])
def test_cub_block_scans_with_an_aggregate_an_operator_or_a_block_prefix_callback(sanitize):
    """BlockScan's other forms, as CUB documents them: a thread's items with the block's aggregate, with
    any operator (InclusiveScan, ExclusiveScan with an initial value), and a block prefix callback for a
    scan tile by tile (they were refused with g++'s "no matching function")."""
    module = cuda.RawModule(code=CUB_TILES, backend="cpu", sanitize=sanitize)
    x = np.random.default_rng(7).integers(0, 50, 512).astype(np.int32)
    out = np.zeros(512, np.int32)
    module.get_function("tiles")((1,), (32,), (x, out, 512))
    np.testing.assert_array_equal(out, np.concatenate([[0], np.cumsum(x)[:-1]]))
    items = x[:64]
    out, totals = np.zeros(320, np.int32), np.zeros(2, np.int32)
    module.get_function("forms")((1,), (32,), (items, out, totals))
    np.testing.assert_array_equal(out[:64], np.concatenate([[0], np.cumsum(items)[:-1]]))
    np.testing.assert_array_equal(out[64:128], np.maximum.accumulate(items))
    np.testing.assert_array_equal(out[128:192], np.minimum.accumulate(np.concatenate([[100], items[:-1]])))
    np.testing.assert_array_equal(out[192:256], np.cumsum(items))
    firsts = items[::2]
    np.testing.assert_array_equal(out[256:288], 1000 + np.cumsum(firsts))
    np.testing.assert_array_equal(out[288:320], 1000 + np.concatenate([[0], np.cumsum(firsts)[:-1]]))
    assert list(totals) == [items.sum(), items.max()]


def test_cub_storage_used_again_without_a_barrier_a_wrong_block_and_the_rest_of_cub():
    """As CUB's documentation says, storage used again needs __syncthreads() first: without it, the race
    on the storage names both calls' lines. A collective declared for 64 threads in a block of 32 is
    stopped with the sizes; CUB's other parts are still refused, by name."""
    source = CUB_COLLECTIVES.replace("    float total = BlockReduce(temp).Sum(v);              // SUM\n    __syncthreads();\n",
                                     "    float total = BlockReduce(temp).Sum(v);              // SUM\n")
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory temp: thread \(0, 0, 0\) read it at line "
                                               r"(\d+), and thread \(1, 0, 0\) writes it at line (\d+)") as info:
        cuda.RawModule(code=source, backend="cpu").get_function("reduce")((1,), (64,), (np.ones(64, np.float32),
                                                                                      np.zeros(4, np.float32), 64))
    sum_line = CUB_COLLECTIVES.splitlines().index(next(l for l in CUB_COLLECTIVES.splitlines() if "// SUM" in l)) + 1
    assert f"Add __syncthreads() between line {sum_line}" in str(info.value)
    # the same of two BlockScans (their calls met at internal barriers, so a scan's storage used again went unseen;
    # red team 12-07), of an exclusive scan and of an inclusive one with the block's total
    scans = CUB_COLLECTIVES.replace("    Scan(temp).ExclusiveSum(v, before, aggregate);\n    __syncthreads();\n",
                                    "    Scan(temp).ExclusiveSum(v, before, aggregate);\n")
    assert scans != CUB_COLLECTIVES
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory temp: thread \(\d+, 0, 0\) wrote it at line "
                                               r"\d+, and thread \(\d+, 0, 0\) reads it at line \d+"):
        cuda.RawModule(code=scans, backend="cpu").get_function("scan")(
            (1,), (64,), (np.arange(64, dtype=np.int32), np.zeros(320, np.int32), np.zeros(1, np.int32)))
    with pytest.raises(cuda.KernelError, match=r"failed assert\(cub::BlockReduce's threads \(64, its template "
                                               r"arguments\) == the block's threads \(32 x 1 x 1\)\)") as info:
        cuda.RawModule(code=CUB_COLLECTIVES, backend="cpu").get_function("reduce")(
            (1,), (32,), (np.ones(64, np.float32), np.zeros(4, np.float32), 32))
    assert "launch blocks of that size" in str(info.value)
    divergent = r"""
#include <cub/cub.cuh>
extern "C" __global__ void k(const float* in, float* out) {
    typedef cub::BlockReduce<float, 64> BR;
    __shared__ typename BR::TempStorage temp;
    if (threadIdx.x < 32) {
        float s = BR(temp).Sum(in[threadIdx.x]);
        if (threadIdx.x == 0) out[0] = s;
    }
}"""
    with pytest.raises(cuda.KernelError, match=r"the __syncthreads\(\) inside CUB's \.Sum\(\) at line 7 is not reached "
                                               r"by every thread of the block"):
        cuda.RawKernel(divergent, "k", backend="cpu")((1,), (64,), (np.ones(64, np.float32), np.zeros(1, np.float32)))
    unqualified = r"""
#include <cub/cub.cuh>
using namespace cub;
extern "C" __global__ void k(const float* in, float* out) {
    typedef BlockReduce<float, 64> BR;
    __shared__ typename BR::TempStorage temp;
    float s = BR(temp).Sum(in[threadIdx.x]);
    if (threadIdx.x == 0) out[0] = s;
}"""
    everyone = unqualified.replace("if (threadIdx.x == 0) out[0] = s;", "out[0] = s;")
    with pytest.raises(cuda.KernelError, match=r"writes out\[0\], which thread \(0, 0, 0\) also wrote") as info:
        cuda.RawKernel(everyone, "k", backend="cpu")((1,), (64,), (np.ones(64, np.float32), np.zeros(1, np.float32)))
    assert ("hint: `s` comes from CUB's .Sum(), whose result is valid in thread 0 (lane 0 of each warp, for "
            "WarpReduce) only: store it from there, `if (threadIdx.x == 0) out[...] = s;`.") in str(info.value)
    out = np.zeros(1, np.float32)  # (after `using namespace cub;`: the same, with every check on)
    cuda.RawKernel(unqualified, "k", backend="cpu", sanitize=True)((1,), (64,), (np.ones(64, np.float32), out))
    assert out[0] == 64
    sort = r"""
#include <cub/cub.cuh>
extern "C" __global__ void k(int* a) {
    typedef cub::BlockRadixSort<int, 32, 1> Sort;
    __shared__ typename Sort::TempStorage temp;
    int v[1] = {a[threadIdx.x]};
    Sort(temp).Sort(v);
    a[threadIdx.x] = v[0];
}"""
    with pytest.raises(cuda.CompileError, match=r"uses cub \(line 4\): this part of CUB or Thrust .* the CPU backend "
                                                r"has cub::BlockReduce, cub::BlockScan and cub::WarpReduce"):
        cuda.RawKernel(sort, "k", backend="cpu")((1,), (32,), (np.zeros(32, np.int32),))
