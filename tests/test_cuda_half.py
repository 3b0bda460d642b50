"""course.cuda: half precision (__half, half2, __nv_bfloat16) rounds exactly as the GPU does
(to nearest, ties to even), checked bit for bit against NumPy's float16 and torch's bfloat16."""

from pathlib import Path

import numpy as np
import pytest

import course.cuda as cuda
from course import env

SOURCE = (Path(__file__).parent / "cuda_kernels" / "half.cu").read_text()


@pytest.fixture(params=["cpu", "cupy"])
def backend(request):
    if request.param == "cupy" and not env.cupy_usable():
        pytest.skip("no usable GPU: CuPy cannot run kernels here (the CPU backend is tested instead)")
    return request.param


def on(backend, a):
    if backend == "cupy":
        import cupy

        return cupy.asarray(a)
    return np.array(a, copy=True)


def edge_floats(n=20000):
    rng = np.random.default_rng(0)
    halves = np.arange(2**16, dtype=np.uint16).view(np.float16).astype(np.float32)
    halves = halves[np.isfinite(halves)]
    # Exact halfway points between neighbouring halves: the ties that must go to even.
    mids = ((halves[:-1].astype(np.float64) + halves[1:]) / 2).astype(np.float32)
    spread = rng.standard_normal(n).astype(np.float32) * np.float32(10.0) ** rng.integers(-9, 6, n)
    special = np.array([0.0, -0.0, 65504, 65519.99, 65520, -65520, 1e6, np.inf, -np.inf, 2**-24, 2**-25,
                        3 * 2**-26, 2**-26, 6.1e-5], dtype=np.float32)
    return np.concatenate([mids[::7], spread, special]).astype(np.float32)


def test_every_half_to_float_and_float_to_half_ties_to_even(backend):
    h = np.arange(2**16, dtype=np.uint16).view(np.float16)
    f = np.resize(edge_floats(), h.size)
    as_float, as_half = on(backend, np.zeros(h.size, np.float32)), on(backend, np.zeros(h.size, np.float16))
    cuda.RawKernel(SOURCE, "half_round_trip", backend=backend)(
        (h.size // 256,), (256,), (on(backend, h), as_float, on(backend, f), as_half, h.size))
    np.testing.assert_array_equal(cuda.asnumpy(as_float).view(np.uint32)[~np.isnan(h)],
                                  h.astype(np.float32).view(np.uint32)[~np.isnan(h)])
    expected = f.astype(np.float16)
    got = cuda.asnumpy(as_half)
    finite = ~np.isnan(expected)
    np.testing.assert_array_equal(got.view(np.uint16)[finite], expected.view(np.uint16)[finite])


def test_half2_dot_product_matches_numpy_float16_arithmetic(backend):
    rows, pairs = 300, 16
    rng = np.random.default_rng(1)
    a = rng.standard_normal((rows, 2 * pairs)).astype(np.float16)
    b = rng.standard_normal((rows, 2 * pairs)).astype(np.float16)
    out = on(backend, np.zeros(rows, np.float16))
    cuda.RawKernel(SOURCE, "half2_dot", backend=backend)(((rows + 127) // 128,), (128,),
                                                          (on(backend, a), on(backend, b), out, pairs, rows))
    acc = np.zeros((rows, 2), np.float16)
    for k in range(pairs):
        acc = acc + a[:, 2 * k: 2 * k + 2] * b[:, 2 * k: 2 * k + 2]  # float16 ops round to nearest-even
    np.testing.assert_array_equal(cuda.asnumpy(out), acc[:, 0] + acc[:, 1])


def test_half_scalar_parameter(backend):
    x = np.linspace(-3, 3, 50).astype(np.float16)
    x_dev = on(backend, x)
    cuda.RawKernel(SOURCE, "half_scale", backend=backend)((1,), (64,), (x_dev, np.float16(0.3), 50))
    np.testing.assert_array_equal(cuda.asnumpy(x_dev), x * np.float16(0.3) + np.float16(1))


def test_bfloat16_from_torch_tensors_and_uint16_bits():
    torch = pytest.importorskip("torch")
    f = torch.from_numpy(edge_floats(4096)[:4096].copy())
    b = torch.randn(4096).to(torch.bfloat16)
    as_float = np.zeros(4096, np.float32)
    as_bf16 = torch.zeros(4096, dtype=torch.bfloat16)
    cuda.RawKernel(SOURCE, "bf16_round_trip", backend="cpu")((16,), (256,), (b, as_float, f, as_bf16, 4096))
    np.testing.assert_array_equal(as_float, b.float().numpy())
    expected = f.to(torch.bfloat16)
    finite = ~torch.isnan(expected)
    assert torch.equal(as_bf16[finite].view(torch.int16), expected[finite].view(torch.int16))
    bits = b.view(torch.int16).numpy().view(np.uint16)  # the same data as raw bits works too
    cuda.RawKernel(SOURCE, "bf16_round_trip", backend="cpu")((16,), (256,),
                                                             (bits, as_float, f.numpy(), np.zeros(4096, np.uint16), 4096))
    np.testing.assert_array_equal(as_float, b.float().numpy())


def test_bfloat16_arrays_and_scalars_of_ml_dtypes():
    # JAX's bfloat16 (the ml_dtypes package) is a NumPy dtype with the same 16 bits.
    ml_dtypes = pytest.importorskip("ml_dtypes")
    source = r"""
    #include <cuda_bf16.h>
    extern "C" __global__ void scale(const __nv_bfloat16* x, __nv_bfloat16* y, __nv_bfloat16 s, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) y[i] = x[i] * s;
    }
    """
    x = np.linspace(-3, 3, 100).astype(ml_dtypes.bfloat16)
    y = np.zeros(100, ml_dtypes.bfloat16)
    cuda.RawKernel(source, "scale", backend="cpu")((1,), (128,), (x, y, ml_dtypes.bfloat16(0.5), 100))
    np.testing.assert_array_equal(y.astype(np.float32), x.astype(np.float32) * 0.5)  # (halving is exact)


def test_a_half_array_passed_as_float_pointer_is_a_type_error(backend):
    x = on(backend, np.ones(8, np.float16))
    with pytest.raises(TypeError, match=r"parameter 'x' \(const float\* x\): needs float32 elements, but the array "
                                        r"holds float16 .*__half\* x"):
        cuda.RawKernel(SOURCE, "float_kernel", backend=backend)((1,), (8,), (x, on(backend, np.zeros(8, np.float32)), 8))


OWN_HALF = r"""
__device__ int calls;
__device__ float half(float v) { return 0.5f * v; }
__device__ float2 half2(float2 v) { return make_float2(half(v.x), half(v.y)); }
extern "C" __global__ void halve(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float2 both = half2(make_float2(x[i], 1.0f));
    if (i < n) x[i] = both.x + both.y;
    printf("%s", i == 0 ? "half\n" : "");
}
"""


def test_a_source_without_cuda_fp16_may_name_its_own_functions_half(backend, capfd):
    # (cuda_fp16.h's `half` type exists only where the source includes it, on a GPU)
    x = on(backend, np.arange(4, dtype=np.float32))
    cuda.RawKernel(OWN_HALF, "halve", backend=backend)((1,), (4,), (x, 4))
    if backend == "cupy":
        cuda.synchronize()
    np.testing.assert_array_equal(cuda.asnumpy(x), np.arange(4) / 2 + 0.5)
    assert "half" in capfd.readouterr().out  # string literals keep the word
    if backend == "cpu":  # a compile error says `half`, as the learner wrote it
        with pytest.raises(cuda.CompileError) as info:
            cuda.RawKernel(OWN_HALF.replace("return 0.5f * v;", "return 0.5f * w;"), "halve", backend="cpu").compile()
        assert "float half(float)" in str(info.value) and "__cc_" not in str(info.value)


CONVERSIONS = r"""
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void to_integers(const float* x, int* out) {
    int i = threadIdx.x;
    __half h = __float2half(x[i]);
    __nv_bfloat16 b = __float2bfloat16(x[i]);
    out[8 * i + 0] = __half2int_rn(h);  out[8 * i + 1] = __half2int_rz(h);
    out[8 * i + 2] = __half2int_ru(h);  out[8 * i + 3] = __half2int_rd(h);
    out[8 * i + 4] = __half2uint_rn(h); out[8 * i + 5] = __half2short_rz(h);
    out[8 * i + 6] = __bfloat162int_rn(b); out[8 * i + 7] = __half2uchar_rz(h);
}
extern "C" __global__ void from_integers(const int* v, const float* f, unsigned short* out) {
    int i = threadIdx.x;
    out[8 * i + 0] = __half_as_ushort(__int2half_rn(v[i]));
    out[8 * i + 1] = __half_as_ushort(__int2half_rz(v[i]));
    out[8 * i + 2] = __half_as_ushort(__int2half_ru(v[i]));
    out[8 * i + 3] = __half_as_ushort(__int2half_rd(v[i]));
    out[8 * i + 4] = __half_as_ushort(__ll2half_rd((long long)v[i]));
    out[8 * i + 5] = __half_as_ushort(__float2half_ru(f[i]));
    out[8 * i + 6] = __half_as_ushort(__float2half_rd(f[i]));
    out[8 * i + 7] = __bfloat16_as_ushort(__int2bfloat16_rz(v[i]));
}
extern "C" __global__ void toward_zero(const float* f, unsigned short* out) {
    out[threadIdx.x] = __half_as_ushort(__float2half_rz(f[threadIdx.x]));
}
"""


def test_half_and_bfloat16_integer_conversions_round_by_mode_and_saturate(backend):
    """The half and bfloat16 conversions to and from integers in every rounding mode: NaN gives 0,
    out-of-range values the type's limit, as on a GPU (no undefined conversion on the CPU)."""
    module = cuda.RawModule(code=CONVERSIONS, backend=backend)
    x = np.array([2.5, -2.5, 3.7, np.nan, np.inf, -np.inf, 65504, 300], np.float32)
    out = on(backend, np.zeros(8 * len(x), np.int32))
    module.get_function("to_integers")((1,), (len(x),), (on(backend, x), out))
    out = cuda.asnumpy(out).reshape(-1, 8)
    i32 = np.iinfo(np.int32)
    h = x.astype(np.float16).astype(np.float32)  # 3.7 is 3.69921875 in half
    assert out[:, 0].tolist() == [2, -2, 4, 0, i32.max, i32.min, 65504, 300]
    assert out[:, 1].tolist() == [2, -2, 3, 0, i32.max, i32.min, 65504, 300]
    assert out[:, 2].tolist() == [3, -2, 4, 0, i32.max, i32.min, 65504, 300] and h[2] < 3.7
    assert out[:, 3].tolist() == [2, -3, 3, 0, i32.max, i32.min, 65504, 300]
    assert out[:, 4].tolist() == [2, 0, 4, 0, -1, 0, 65504, 300]  # (uint 4294967295 read as int32: -1)
    assert out[:, 5].tolist() == [2, -2, 3, 0, 32767, -32768, 32767, 300]
    assert out[:, 6].tolist() == [2, -2, 4, 0, i32.max, i32.min, 65536, 300]  # bfloat16: 65504 → 65536
    assert out[:, 7].tolist() == [2, 0, 3, 0, 255, 0, 255, 255]
    v = np.array([2049, -2049, 70000, -70000, 3, 0], np.int32)
    f = np.array([1 / 3, -1 / 3, 1e6, -1e6, 3, 0], np.float32)
    bits = on(backend, np.zeros(8 * len(v), np.uint16))
    module.get_function("from_integers")((1,), (len(v),), (on(backend, v), on(backend, f), bits))
    got = cuda.asnumpy(bits).reshape(-1, 8)
    half = lambda value: int(np.float16(value).view(np.uint16))
    # 2049 lies between the halves 2048 and 2050: to nearest (even) 2048, toward zero 2048, up 2050
    assert got[0, :5].tolist() == [half(2048), half(2048), half(2050), half(2048), half(2048)]
    assert got[1, :5].tolist() == [half(-2048), half(-2048), half(-2048), half(-2050), half(-2050)]
    assert got[2, :5].tolist() == [half(np.inf), half(65504), half(np.inf), half(65504), half(65504)]
    assert got[3, :5].tolist() == [half(-np.inf), half(-65504), half(-65504), half(-np.inf), half(-np.inf)]
    third = np.float16(1 / 3)  # the nearest half is below 1/3
    assert got[0, 5] == half(np.nextafter(third, np.float16(1))) and got[0, 6] == half(third)
    assert got[4, 5:7].tolist() == [half(3), half(3)] and got[5, :7].tolist() == [0] * 7
    rz = on(backend, np.zeros(len(f), np.uint16))
    module.get_function("toward_zero")((1,), (len(f),), (on(backend, f), rz))
    assert cuda.asnumpy(rz).tolist() == [half(third), half(-third), half(65504), half(-65504), half(3), half(0)]
    bf16 = lambda value: int(np.float32(value).view(np.uint32) >> 16)  # exact for these values
    assert got[0, 7] == bf16(2048) and got[2, 7] == bf16(69632)  # toward zero: 70000 → 69632


CASTS = r"""
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void casts(const __half* h, const __nv_bfloat16* b, int* out) {
    __shared__ __half s[8];
    int i = threadIdx.x;
    s[i] = h[i];
    __syncthreads();
    out[5 * i + 0] = (int)h[i];
    out[5 * i + 1] = static_cast<unsigned char>(s[i]);
    out[5 * i + 2] = short(b[i]);
    out[5 * i + 3] = (int)(long long)h[i];
    out[5 * i + 4] = (int)(unsigned)b[i];
}
"""


@pytest.mark.parametrize("sanitize", [False, True])
def test_a_cast_of_a_half_to_an_integer_is_cudas_saturating_conversion(sanitize):
    """`(int)h` is CUDA's conversion operator (__half2int_rz: toward zero, saturating, NaN gives 0),
    not a C++ float-to-int conversion, so a NaN or 70000 in half is no 'undefined conversion' here."""
    kernel = cuda.RawKernel(CASTS, "casts", backend="cpu", sanitize=sanitize)
    values = np.array([2.7, -2.7, np.nan, np.inf, -np.inf, 300, -1, 0], np.float32)
    bf16 = (values.view(np.uint32) >> 16).astype(np.uint16)  # exact in bfloat16: truncating the bits is fine
    out = np.zeros(5 * len(values), np.int32)
    kernel((1,), (len(values),), (values.astype(np.float16), bf16, out))
    out = out.reshape(-1, 5)
    i32 = np.iinfo(np.int32)
    assert out[:, 0].tolist() == [2, -2, 0, i32.max, i32.min, 300, -1, 0]
    assert out[:, 1].tolist() == [2, 0, 0, 255, 0, 255, 0, 0]
    assert out[:, 2].tolist() == [2, -2, 0, 32767, -32768, 300, -1, 0]
    # (long long: NaN gives the top bit alone, PTX's rule for 64-bit integers; its low 32 bits are 0)
    assert out[:, 3].tolist() == [2, -2, 0, -1, 0, 300, -1, 0]
    assert out[:, 4].tolist() == [2, 0, 0, -1, 0, 300, 0, 0]


MIXED = r"""
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void mixed(const HALF* x, float* out) {
    out[threadIdx.x] = EXPRESSION;
}
"""


@pytest.mark.parametrize("half, expression, operator, other", [
    ("__half", "x[threadIdx.x] * 2.0f", "*", "a float"), ("__half", "x[threadIdx.x] > 0 ? 1.0f : 0.0f", ">", "an int"),
    ("__nv_bfloat16", "1.0 + x[threadIdx.x]", "+", "a double")])
def test_a_half_beside_a_float_or_an_integer_is_refused_with_what_to_write(half, expression, operator, other):
    """nvcc refuses `h * 2.0f` as ambiguous (its __half converts to float and to every integer type): so
    does the CPU backend, and the message says how to write it."""
    source = MIXED.replace("HALF", half).replace("EXPRESSION", expression)
    with pytest.raises(cuda.CompileError) as info:
        cuda.RawKernel(source, "mixed", backend="cpu").compile()
    message = str(info.value)
    assert f"`{operator}` of a {half} and {other} is ambiguous for nvcc too" in message
    to_float = "__half2float" if half == "__half" else "__bfloat162float"
    assert f"`{to_float}(h) {operator} x`" in message
    fixed = source.replace(expression, expression.replace("x[threadIdx.x]", f"{to_float}(x[threadIdx.x])"))
    out = np.zeros(2, np.float32)
    values = np.array([1.5, -2.0], np.float16 if half == "__half" else np.float32)
    if half != "__half":  # bfloat16 bits: the top half of a float32's
        values = (values.view(np.uint32) >> 16).astype(np.uint16)
    cuda.RawKernel(fixed, "mixed", backend="cpu")((1,), (2,), (values, out))
    assert out.tolist() == [[3.0, -4.0], [1.0, 0.0], [2.5, -1.0]][["*", ">", "+"].index(operator)]


IMPLICIT = r"""
#include <cuda_fp16.h>
extern "C" __global__ void implicit(const __half* x, int* out) {
    int t = threadIdx.x;
    __half h = x[t];
    int i = h;                      // CUDA's operator int: toward zero, NaN gives 0
    unsigned int u = h;             // saturates: a negative value gives 0
    long long l = h;
    bool b = h;                     // nonzero (NaN too)
    out[4 * t + 0] = i; out[4 * t + 1] = (int)u; out[4 * t + 2] = (int)l; out[4 * t + 3] = b ? 1 : 0;
}
"""


def test_a_half_converts_to_integers_implicitly_as_cuda_fp16_hpp_says():
    """`int i = h;` compiles with nvcc (cuda_fp16.hpp's implicit operator int) and rounds toward zero with
    NaN giving 0: the same here, with no undefined float-to-integer conversion reported."""
    x = np.array([2.75, -1.5, np.nan, 0.0, -0.0, np.inf], np.float16)
    out = np.zeros(4 * len(x), np.int32)
    cuda.RawKernel(IMPLICIT, "implicit", backend="cpu", sanitize=True)((1,), (len(x),), (x, out))
    assert out.reshape(-1, 4).tolist() == [[2, 2, 2, 1], [-1, 0, -1, 1], [0, 0, 0, 1], [0, 0, 0, 0], [0, 0, 0, 0],
                                           [2**31 - 1, -1, -1, 1]]
