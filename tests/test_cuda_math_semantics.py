"""course.cuda's CPU backend: CUDA's math overloads and intrinsics as NVRTC compiles them for sm_80
(checked against NVRTC 13: the types with decltype, pow(float, int)'s algorithm in its PTX).

__sad/__usad are functions with CUDA's signatures; __powf is exp2(y * log2(x)) with the GPU's special
cases; the float overloads of CUDA's own math functions (rsqrt, normcdf, ...) are float; pow(float, int)
is CUDA's square-and-multiply in float; sincos/sincospi take floats; `long double` is double in device
code; and what NVRTC refuses as ambiguous (max(x, 0) of a float, sqrt(int), pow(float, 0.5), ...) is
refused here too, with a hint, while every min/max CUDA has still compiles."""

import math

import numpy as np
import pytest

import course.cuda as cuda


def run(source, *args):
    cuda.RawKernel(source, "k", backend="cpu", sanitize=False)((1,), (1,), args)


def powif(x, n):
    """crt/math_functions.hpp's powif as NVRTC compiles it: square-and-multiply, mul.rn.f32 each step."""
    r, b, m = np.float32(1), np.float32(x), abs(n)
    while True:
        if m & 1:
            r = np.float32(r * b)
        m >>= 1
        if m == 0:
            break
        b = np.float32(b * b)
    return np.float32(1) / r if n < 0 else r


def test_sad_and_powf_intrinsics():
    source = r'''extern "C" __global__ void k(long long* q, float* o, const float* a) {
      q[0] = __sad(-1, 2u, 0u);                  // 2u converts to int: |-1 - 2|
      int k = 5; q[1] = __sad(k++, 2, 1u); q[2] = k;
      q[3] = __sad(3.2f, 1.7f, 0u);              // floats convert to int: 3 and 1
      unsigned u = 1; q[4] = __usad(u++, 5u, 0u); q[5] = u;
      q[6] = __sad(-2147483647 - 1, 2147483647, 0u);  // no overflow: 2^32 - 1
      o[0] = __powf(a[0], a[2]);   // -2 ^ 2: NaN (log2 of a negative)
      o[1] = __powf(a[1], a[1]);   // 0 ^ 0: NaN (0 * -inf)
      o[2] = __powf(a[4], a[1]);   // inf ^ 0: NaN
      o[3] = __powf(a[5], a[4]);   // 1 ^ inf: NaN
      o[4] = __powf(a[1], a[2]);   // 0 ^ 2: 0
      o[5] = __powf(a[1], -a[2]);  // 0 ^ -2: inf
      o[6] = __powf(a[3], a[2]);   // 3 ^ 2
      o[7] = __powf(a[6], a[6]);   // 1.5 ^ 1.5
    }'''
    q = np.zeros(7, dtype=np.int64)
    o = np.zeros(8, dtype=np.float32)
    a = np.array([-2, 0, 2, 3, np.inf, 1, 1.5], dtype=np.float32)
    run(source, q, o, a)
    assert q.tolist() == [3, 4, 6, 2, 4, 2, 2**32 - 1]
    assert np.isnan(o[:4]).all()
    assert o[4] == 0 and o[5] == np.inf
    assert abs(o[6] - 9) <= 9 * 2e-6 and abs(o[7] - np.float32(1.5) ** np.float32(1.5)) <= 2e-6 * 2


def test_float_overloads_pow_int_sincos_long_double():
    names = ["rsqrt", "rcbrt", "sinpi", "cospi", "exp10", "erfinv", "erfcinv", "normcdf", "erfcx",
             "cyl_bessel_i0", "cyl_bessel_i1"]
    body = "".join(f"  d[{i}] = {n}(a[0]); s[{i}] = sizeof({n}(a[0])); f[{i}] = {n}f(a[0]);\n"
                   for i, n in enumerate(names))
    source = r'''
    __device__ float normcdfinv(float p) { return 42.0f; }   // a kernel's own: called, as with nvcc
    extern "C" __global__ void k(double* d, int* s, double* f, float* o, double* p, const float* a) {
    ''' + body + r'''
      d[20] = normcdfinv(a[0]); d[21] = normcdfinv((double)a[0]);
      o[0] = pow(a[1], 5); o[1] = pow(a[1], 7); o[2] = pow(a[1], -3); o[3] = pow(a[1], (short)2);
      s[20] = sizeof(pow(a[1], 2)); s[21] = sizeof(pow((double)a[1], 2)); s[22] = sizeof(pow(2, a[1]));
      p[0] = pow((double)a[1], 5);
      float sn, cs; sincos(a[0], &sn, &cs); o[4] = sn; o[5] = cs;
      sincospi(a[0], &sn, &cs); o[6] = sn; o[7] = cs;
      double x = 1.0; long double y = x; p[1] = (double)((y + 1e-17L) - y);
      s[23] = sizeof(long double); s[24] = sizeof(1.5L);
    }'''
    d, f, p = np.zeros(24), np.zeros(24), np.zeros(2)
    s = np.zeros(25, dtype=np.int32)
    o = np.zeros(8, dtype=np.float32)
    a = np.array([0.3, 1.2677324], dtype=np.float32)
    run(source, d, s, f, o, p, a)
    n = len(names)
    assert s[:n].tolist() == [4] * n, dict(zip(names, s[:n]))
    assert d[:n].tolist() == f[:n].tolist()  # the float functions' values
    assert d[20] == 42.0 and d[21] == pytest.approx(-0.5244005127080407)
    x = np.float32(a[1])
    assert o[:4].tolist() == [powif(x, 5), powif(x, 7), powif(x, -3), powif(x, 2)]
    assert powif(x, 5) != np.float32(float(x) ** 5)  # (a correctly rounded pow would differ)
    assert s[20:23].tolist() == [4, 8, 4]
    assert p[0] == float(x) ** 5 or abs(p[0] - float(x) ** 5) < 1e-15
    assert abs(o[4] - math.sin(np.float32(0.3))) < 1e-7 and abs(o[5] - math.cos(0.3)) < 1e-7
    assert abs(o[6] - math.sin(math.pi * np.float32(0.3))) < 1e-7 and abs(o[7] - math.cos(math.pi * np.float32(0.3))) < 1e-7
    assert p[1] == 0.0 and s[23:25].tolist() == [8, 8]  # long double is double in device code


REFUSED = {  # the line (each its own statement) → a phrase of its hint
    "o[0] = max(a[0], 0);": "CUDA's max has no (float, int) version",
    "o[1] = min(n, blockDim.x);": "CUDA's min has no (size_t, unsigned int) version",
    "o[2] = min((int)threadIdx.x, ll);": "CUDA's min has no (int, long long) version",
    "o[3] = sqrt(i);": "sqrt of an int is ambiguous in CUDA",
    "o[4] = fabs(i);": "fabs of an int is ambiguous in CUDA",
    "o[5] = floor(i);": "floor of an int is ambiguous in CUDA",
    "o[6] = exp(i);": "exp of an int is ambiguous in CUDA",
    "o[7] = pow(i, 3);": "pow(int, int) is ambiguous in CUDA",
    "o[8] = pow(a[0], 0.5);": "pow(float, double) is ambiguous in CUDA",
    "o[9] = rsqrt(i);": "rsqrt of an int is ambiguous in CUDA",
}


def test_ambiguous_calls_are_refused_with_hints():
    source = ('extern "C" __global__ void k(float* o, const float* a) {\n'
              "  size_t n = 3; long long ll = 4; int i = 2;\n  " + "\n  ".join(REFUSED) + "\n}")
    with pytest.raises(cuda.CompileError) as refused:
        run(source, np.zeros(10, dtype=np.float32), np.ones(1, dtype=np.float32))
    message = str(refused.value)
    missing = [hint for hint in REFUSED.values() if hint not in message]
    assert not missing, message
    assert "max(x, 0.0f) or fmaxf(x, 0.0f)" in message and "sqrtf((float)n)" in message


def test_every_min_max_cuda_has_compiles():
    source = r'''
    template <class T> __device__ T clamp01(T v) { return min(max(v, T(0)), T(1)); }
    __device__ int max(int a, int b) { return a > b ? a : b; }   // a kernel's own: allowed, as with nvcc
    extern "C" __global__ void k(long long* q, double* d, const float* a) {
      unsigned u = 7; long l = -3; unsigned long ul = 5; long long ll = -9; unsigned long long ull = 11;
      size_t z = 6; short sh = -4; char c = 'a';
      q[0] = min(3, 5); q[1] = min(-1, 2u); q[2] = max(u, 9); q[3] = min(l, 2L); q[4] = max(ul, l);
      q[5] = min(ll, 4LL); q[6] = max(ull, ll); q[7] = min(z, z); q[8] = min(threadIdx.x, blockDim.x);
      q[9] = min(blockDim.x, 1); q[10] = min(sh, 2); q[11] = max(c, 'b'); q[12] = max(l, -7L);
      q[13] = sizeof(min(-1, 2u)) * 100 + sizeof(min(z, z)) * 10 + sizeof(min(ll, 1ull));
      q[14] = min(z, (size_t)blockDim.x); q[15] = max(7, 8);
      d[0] = min(a[0], 2.0f); d[1] = max(1.0, 2.0); d[2] = min(a[0], 0.25); d[3] = max(0.25, a[0]);
      d[4] = clamp01(a[0] * 4); d[5] = clamp01(-2.0); d[6] = max(a[0], 0.0f) + fmaxf(a[0], 0.0f);
      d[7] = sizeof(min(a[0], 1.0f)) * 10 + sizeof(min(a[0], 1.0));
    }'''
    q = np.zeros(16, dtype=np.int64)
    d = np.zeros(8)
    run(source, q, d, np.array([0.5], dtype=np.float32))
    assert q.tolist() == [3, 2, 9, -3, -3, -9, -9, 6, 0, 1, -4, 98, -3, 488, 1, 8]  # (unsigned results wrap in int64)
    assert d.tolist() == [0.5, 2.0, 0.25, 0.5, 1.0, 0.0, 1.0, 48]


def test_tanhf_intrinsic_runs_and_a_c_library_name_that_is_no_cuda_function_is_named_as_such():
    """`__tanhf` (CUDA 12.8) was taken for the C library's own declaration of that name and failed to load with
    "which it declares but never defines"; `__sqrtf`, which CUDA lacks, failed the same way. NVRTC says the
    identifier is undefined: so does the CPU backend now, with the intrinsic nearest in spelling."""
    x = np.array([0.5, -2.0, 0.0], np.float32)
    out = np.zeros(3, np.float32)
    run('extern "C" __global__ void k(const float* x, float* o) { for (int i = 0; i < 3; i++) o[i] = __tanhf(x[i]); }',
        x, out)
    np.testing.assert_allclose(out, np.tanh(x), atol=2.0 ** -11)
    with pytest.raises(cuda.CompileError, match=r"calls `__exp2f`, which is not one of CUDA's functions and which it "
                                                r"does not define \(NVRTC: identifier \"__exp2f\" is undefined\): did "
                                                r"you mean `__expf`\?"):
        run('extern "C" __global__ void k(float* o) { o[0] = __exp2f(o[1]); }', np.zeros(2, np.float32))
