"""The source CuPy's NVRTC gets (course/cuda/nvrtc.py), checked without a GPU.

NVRTC has no host headers: a kernel with `#include <cfloat>`, `M_PI`, `uint` or `int64_t` compiles
with nvcc and on the CPU backend, but not on CuPy. These tests compile ``for_nvrtc``'s output with
g++ three ways: as NVRTC sees it (no host headers at all: `-nostdinc`), as NVRTC with headers it
can find, and as nvcc sees it (not NVRTC: the includes as written)."""

import shutil
import subprocess
import textwrap

import numpy as np
import pytest

from course import cuda
from course.cuda.nvrtc import for_nvrtc

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")

# What NVRTC declares by itself, as far as these kernels use it.
BUILTINS = r"""
#define __global__ __attribute__((used))
#define __device__
#define __constant__
#define __forceinline__ inline
struct __nv_uint3 { unsigned x, y, z; };
extern __nv_uint3 threadIdx, blockIdx, blockDim, gridDim;
extern "C" int printf(const char*, ...);
float __int_as_float(int);
double __longlong_as_double(long long);
void __trap();
"""

KERNEL = textwrap.dedent(r"""
    #include <cfloat>
    #include <climits>
    #include <cstdint>
    #include <cstdio>
    #include <cmath>
    #include <cassert>
    #include <math_constants.h>
    #include "cuda_runtime.h"
    #include <device_launch_parameters.h>

    __constant__ float lowest = -INFINITY;
    extern "C" __global__ void k(float* out, int64_t* big, uint n, std::uint32_t* bits) {
        static_assert(__LINE__ == 13, "NVRTC's messages name the learner's lines");
        constexpr int smallest = INT_MIN, none = CHAR_MIN;  // (defined with INT_MAX and SCHAR_MIN)
        uint i = blockIdx.x * blockDim.x + threadIdx.x;
        assert(i < n);
        out[i] = FLT_MAX - FLT_EPSILON + (float)M_PI + CUDART_PI_F + (float)INT_MAX + INFINITY;
        big[i] = LLONG_MAX - LONG_MAX + INT64_MAX + (int64_t)SIZE_MAX;
        bits[i] = UINT32_MAX + (std::uint32_t)CHAR_BIT + (ushort)1 + (ulong)2;
        std::size_t s = sizeof(float);
        printf("%d %f %d %f\n", (int)s, (double)NAN, (double)smallest + none, (double)lowest);
    }
""").lstrip()


def _compile(tmp_path, source, *flags):
    (tmp_path / "builtins.h").write_text(BUILTINS)
    (tmp_path / "k.cu").write_text(source)
    (tmp_path / "headers").mkdir(exist_ok=True)  # (an include path with nothing in it)
    done = subprocess.run(["g++", "-std=c++17", "-fsyntax-only", "-x", "c++", *flags,
                           "-I", str(tmp_path / "headers"), "-include", str(tmp_path / "builtins.h"), str(tmp_path / "k.cu")],
                          capture_output=True, text=True)
    return done.returncode, done.stderr


def test_a_kernel_using_the_host_headers_compiles_where_there_are_none(tmp_path):
    """As NVRTC: no <cfloat>, no <cstdint>, no math.h's M_PI, no glibc's uint."""
    assert _compile(tmp_path, KERNEL, "-nostdinc", "-D__CUDACC_RTC__")[0] != 0  # as written: it fails
    rc, errors = _compile(tmp_path, for_nvrtc(KERNEL), "-nostdinc", "-D__CUDACC_RTC__")
    assert rc == 0, errors


def test_headers_nvrtc_can_find_are_included_and_not_defined_twice(tmp_path):
    """An NVRTC that finds <cfloat> and <cstdint> gets them, and the prelude's own definitions
    stay out (no typedef of int64_t that differs from the header's)."""
    rc, errors = _compile(tmp_path, for_nvrtc(KERNEL), "-D__CUDACC_RTC__", "-Werror")
    assert rc == 0, errors


def test_other_compilers_see_the_includes_as_written(tmp_path):
    """CuPy's nvcc backend has host headers: the moved includes are back, nothing else added."""
    kernel = KERNEL.replace("CUDART_PI_F", "3.14f").replace("#include <math_constants.h>", "")
    for header in ('"cuda_runtime.h"', "<device_launch_parameters.h>"):  # (nvcc's, not here)
        kernel = kernel.replace(f"#include {header}", "")
    rc, errors = _compile(tmp_path, for_nvrtc(kernel), "-Werror")
    assert rc == 0, errors


def test_the_line_numbers_stay_the_learners():
    prepared = for_nvrtc(KERNEL)
    body = prepared.split("#line 1\n", 1)[1]
    assert body.count("\n") == KERNEL.count("\n")
    assert body.splitlines()[12] == KERNEL.splitlines()[12]


def test_a_kernel_that_needs_nothing_is_left_alone():
    plain = 'extern "C" __global__ void add(const float* x, float* y, int n) {\n' \
            "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) y[i] += x[i];\n}\n"
    assert for_nvrtc(plain) == plain
    with_fp16 = "#include <cuda_fp16.h>\n#include <cooperative_groups.h>\n" + plain
    assert for_nvrtc(with_fp16) == with_fp16  # CUDA's own headers: CuPy finds them


def test_cpp_headers_fall_back_to_libcu():
    prepared = for_nvrtc("#include <limits>\n__global__ void k(float* x) { x[0] = std::numeric_limits<float>::max(); }\n")
    assert "#elif __has_include(<cuda/std/limits>)" in prepared
    assert "namespace std { using namespace ::cuda::std; }" in prepared


def test_the_same_kernel_runs_on_the_cpu_backend():
    """The kernel above is what the CPU backend accepts as written."""
    out, big, bits = np.zeros(4, np.float32), np.zeros(4, np.int64), np.zeros(4, np.uint32)
    kernel = KERNEL.replace('printf("%d %f %d %f\\n", (int)s, (double)NAN, (double)smallest + none, (double)lowest);',
                            "(void)s;")
    cuda.RawKernel(kernel, "k", backend="cpu")((1,), (4,), (out, big, np.uint32(4), bits))
    assert np.isinf(out).all()
    assert (bits == (0xFFFFFFFF + 8 + 1 + 2) % 2**32).all()


# ---------------------------------------------------------------------------------------
# NVRTC itself: PyTorch's CUDA wheels ship libnvrtc, which compiles to PTX without a GPU, so the
# promise "a kernel that runs on the CPU backend compiles on a GPU too" is checked here for every
# kernel of the notebooks and of the parity suite.
# ---------------------------------------------------------------------------------------

import json  # noqa: E402
import re  # noqa: E402
from pathlib import Path  # noqa: E402

from course.cuda import nvrtc  # noqa: E402
from course.cuda import source as cuda_source  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
#: Headers the CUDA wheels leave out (CCCL's, which CuPy ships): a source that includes them is not judged here.
_ABSENT = re.compile(r'cannot open source file "(nv/[^"]*|cuda/[^"]*|cub/[^"]*|thrust/[^"]*)"')


def _every_kernel_source():
    found = []
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for cell in json.loads(path.read_text())["cells"]:
            if cell["cell_type"] == "code":
                for match in re.finditer(r"r?('''|\"\"\")(.*?)\1", "".join(cell["source"]), re.S):
                    text = match.group(2)
                    if "__global__" in text and not ("{" in text and "%" in text and "{{" in text):
                        found.append((path.name, text))
    return found + [(path.name, path.read_text()) for path in sorted((ROOT / "tests" / "cuda_kernels").glob("*.cu"))]


def _only_in_headers(log: str) -> bool:
    """Whether NVRTC's errors all lie in headers, none in the kernel (CCCL's headers missing or of another
    version than this NVRTC's): the environment's, not the kernel's."""
    errors = [line for line in log.splitlines() if re.search(r"\berror\b", line) and "detected in the compilation" not in line]
    return bool(errors) and all(not line.startswith("kernel.cu(") for line in errors) or bool(_ABSENT.search(log))


@pytest.mark.skipif(not nvrtc.available(), reason="needs NVRTC (PyTorch's CUDA wheels and CuPy ship it)")
def test_every_kernel_the_cpu_backend_compiles_compiles_with_nvrtc_too():
    """Each notebook kernel and each parity-suite file, as CuPy would give it to NVRTC (for_nvrtc), compiles for
    sm_80; a source NVRTC refuses must be one the CPU backend refuses too (a fragment a later cell completes)."""
    judged = 0
    for name, text in _every_kernel_source():
        options = ("-DALPHA=2.0f",) if name.endswith(".cu") else ()  # (as tests/test_cuda_samples.py compiles it)
        try:
            nvrtc.compile_ptx(text, options)
            judged += 1
        except cuda.CompileError as error:
            if _only_in_headers(str(error)):
                continue
            kernels = list(cuda_source.parse(text).kernels)
            with pytest.raises(cuda.CompileError):  # (else: runs here, fails on a GPU)
                cuda.RawKernel(text, kernels[0], backend="cpu", sanitize=False, options=options).compile()
    assert judged >= 80


def test_compile_ptx_gives_ptx_and_nvrtcs_own_message():
    if not nvrtc.available():
        with pytest.raises(RuntimeError, match="NVRTC is not installed"):
            nvrtc.compile_ptx('extern "C" __global__ void k(float* o) { }')
        return
    ptx = nvrtc.compile_ptx('#include <cfloat>\nextern "C" __global__ void k(float* o) { o[0] = sqrtf(o[1] * FLT_MAX); }')
    assert ".entry k(" in ptx and "sqrt.rn.f32" in ptx
    with pytest.raises(cuda.CompileError, match=r"(?s)kernel.cu\(2\): error: more than one instance of overloaded "
                                                r"function \"max\".*\(float, int\)"):
        nvrtc.compile_ptx('#include <cfloat>\nextern "C" __global__ void k(float* o) { o[0] = max(o[1], 0); }')


@pytest.mark.parametrize("body, header", [
    ("__half h = __float2half(1.0f); o[0] = __half2float(h);", "cuda_fp16.h"),
    ("__nv_bfloat16 b = __float2bfloat16(1.0f); o[0] = __bfloat162float(b);", "cuda_bf16.h"),
    ("curandState s; curand_init(1, 0, 0, &s); o[0] = curand_uniform(&s);", "curand_kernel.h"),
    ("namespace cg = cooperative_groups; cg::this_thread_block().sync(); o[0] = 1;", "cooperative_groups.h"),
    ("cuda::atomic_ref<float, cuda::thread_scope_device> r(o[0]); r.fetch_add(1.0f);", "cuda/atomic"),
    ("typedef cub::WarpReduce<float> R; __shared__ R::TempStorage t; o[0] = R(t).Sum(o[1]);", "cub/block/block_reduce.cuh"),
    ("static_assert(std::is_same<decltype(o), float*>::value, \"\"); o[0] = 1;", "type_traits"),
])
def test_a_header_the_cpu_backend_builds_in_must_be_included_as_on_a_gpu(body, header):
    """`__half` without <cuda_fp16.h>, curand without <curand_kernel.h>, cooperative groups without their header:
    the CPU backend has them built in, so such a kernel ran here and then did not compile on a GPU (NVRTC: "identifier
    __half is undefined"). It is refused with the include to add; with it, it compiles (and NVRTC agrees)."""
    source = 'extern "C" __global__ void k(float* o) { ' + body + " }"
    with pytest.raises(cuda.CompileError, match=rf"declared in <{re.escape(header)}>, which this source does not include"):
        cuda.RawKernel(source, "k", backend="cpu").compile()
    if nvrtc.available():
        with pytest.raises(cuda.CompileError):
            nvrtc.compile_ptx(source)
    included = f"#include <{header.replace('block/block_reduce', 'warp/warp_reduce')}>\n" + source
    if nvrtc.available() and "cub" not in header:  # (CCCL's headers: see the dev extra)
        nvrtc.compile_ptx(included)
    assert "k" in cuda_source.parse(included).kernels and not any(
        "does not include" in what for what, _, _ in cuda_source.parse(included).nvcc_refuses)


def test_cooperative_groups_parts_with_headers_of_their_own_and_names_that_are_no_types():
    reduce = ('#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\nextern "C" __global__ void k(float* o) '
              '{ auto t = cg::tiled_partition<32>(cg::this_thread_block()); o[0] = cg::reduce(t, o[t.thread_rank()], '
              'cg::plus<float>()); }')
    with pytest.raises(cuda.CompileError, match=r"line 3: uses `cg::reduce`, declared in <cooperative_groups/reduce.h>"):
        cuda.RawKernel(reduce, "k", backend="cpu").compile()
    # variables named half or half2, and the integer __hadd, need no header
    plain = ('extern "C" __global__ void k(int* o) { int half = o[0] / 2; float half2 = half * 0.5f; '
             'if (threadIdx.x < half) o[1] = __hadd(half, 3) + (int)half2; }')
    assert not cuda_source.parse(plain).nvcc_refuses
    own = ('struct half2 { float a, b; };\nnamespace cub { struct W { float v; }; }\nextern "C" __global__ void k(float* o) '
           '{ half2 x{o[0], o[1]}; cub::W w{x.b}; o[1] = x.a + w.v; }')  # (types of the source's own)
    assert not cuda_source.parse(own).nvcc_refuses


def test_the_whole_cub_header_gets_a_warning_that_nvrtc_refuses_it():
    whole = ('#include <cub/cub.cuh>\nextern "C" __global__ void k(float* o) { typedef cub::WarpReduce<float> R; '
             '__shared__ R::TempStorage t; o[0] = R(t).Sum(o[threadIdx.x]); }')
    [(line, message)] = cuda_source.parse(whole).cas_misuse
    assert line == 1 and "NVRTC (CuPy's compiler on a GPU) cannot compile it whole" in message
    assert not cuda_source.parse(whole.replace("cub/cub.cuh", "cub/warp/warp_reduce.cuh")).cas_misuse
    if nvrtc.available():
        try:
            nvrtc.compile_ptx(whole.replace("cub/cub.cuh", "cub/warp/warp_reduce.cuh"))
        except cuda.CompileError as error:
            if not _only_in_headers(str(error)):
                raise
        else:  # (the warning's claim, where this NVRTC has CCCL's headers)
            with pytest.raises(cuda.CompileError, match="host"):
                nvrtc.compile_ptx(whole)


def test_placement_new_needs_no_header_under_nvrtc():
    """`#include <new>` for placement new: NVRTC has no <new> ("cannot open source file") but builds placement new
    in, so for_nvrtc drops the include there (nvcc keeps it)."""
    source = ('#include <new>\nextern "C" __global__ void k(const float* a, float* out) { __shared__ float s[32]; '
              'new (&s[threadIdx.x]) float(a[threadIdx.x]); __syncthreads(); out[threadIdx.x] = s[31 - threadIdx.x]; }')
    text = for_nvrtc(source)
    assert "#include <new>" in text.split("#else", 1)[1] and "#include <new>" not in text.split("#else", 1)[0]
    if nvrtc.available():
        assert ".entry k(" in nvrtc.compile_ptx(source)


_REVERSE = r"""
template <typename T>
__global__ void rev(const T* in, T* out, int n) {
    extern __shared__ T s[];
    int t = threadIdx.x;
    s[t] = in[t];
    __syncthreads();
    out[t] = s[n - 1 - t];
}
"""
_TWO_KERNELS = r"""
extern "C" __global__ void scale(float* x) { extern __shared__ float s[]; s[threadIdx.x] = 2 * x[threadIdx.x]; x[threadIdx.x] = s[threadIdx.x]; }
extern "C" __global__ void count(int* x) {
    extern __shared__ int s[];
    s[threadIdx.x] = x[threadIdx.x] + 1; x[threadIdx.x] = s[threadIdx.x];
}
"""
_AS_BYTES = r"""
template <typename T>
__global__ void rev(const T* in, T* out, int n) {
    extern __shared__ __align__(16) unsigned char smem[];
    T* s = reinterpret_cast<T*>(smem);
    int t = threadIdx.x;
    s[t] = in[t];
    __syncthreads();
    out[t] = s[n - 1 - t];
}
"""


@pytest.mark.parametrize("source, instances, line", [
    (_REVERSE, ["rev<float>", "rev<double>"], 4),  # one template, two types
    (_TWO_KERNELS, [], 4),  # two kernels, one name, two types
    (_TWO_KERNELS.replace("int s[]", "volatile float s[]"), [], 4),
])
def test_extern_shared_arrays_of_one_name_and_two_types_are_refused_as_nvrtc_refuses_them(source, instances, line):
    """In CUDA every extern __shared__ array of one name is one variable: NVRTC refuses two types for it; the
    CPU backend ran them (a template kernel with `extern __shared__ T s[]` is the classic)."""
    with pytest.raises(cuda.CompileError, match=rf"(?s)kernel.cu:{line}:\d+: error: conflicting declaration.*"
                                                r"every `extern __shared__` array named s is one variable.*"
                                                r"reinterpret_cast<T\*>\(smem\)") as caught:
        cuda.RawModule(code=source, name_expressions=instances or None, backend="cpu", sanitize=False).compile()
    assert "__cc_" not in str(caught.value)
    if nvrtc.available():
        types = [i[4:-1] for i in instances]
        explicit = "".join(f"template __global__ void rev<{t}>({t if t.startswith('const') else 'const ' + t}*, {t}*, "
                           "int);\n" for t in types)
        with pytest.raises(cuda.CompileError, match=r'declaration is incompatible with previous "s"'):
            nvrtc.compile_ptx(source + explicit)


@pytest.mark.parametrize("source", [_REVERSE, _AS_BYTES])
def test_extern_shared_memory_in_a_template_runs_for_one_type_or_as_bytes_for_two(source):
    instances = ["rev<double>"] if source is _REVERSE else ["rev<float>", "rev<double>"]
    module = cuda.RawModule(code=source, name_expressions=instances, backend="cpu", sanitize=True)
    for expression in instances:
        dtype = np.float64 if "double" in expression else np.float32
        x, y = np.arange(64, dtype=dtype), np.zeros(64, dtype)
        module.get_function(expression)((1,), (64,), (x, y, np.int32(64)), shared_mem=64 * x.itemsize)
        np.testing.assert_array_equal(y, x[::-1])


_STRUCT = "struct P { float s; int n; };\n"


@pytest.mark.parametrize("declaration, refused", [
    ('extern "C" __global__ void k(const __grid_constant__ P p, float* o)', ""),
    ('extern "C" __global__ void k(float* const __grid_constant__ q, float* o)', ""),
    ('extern "C" __global__ void k(__grid_constant__ P p, float* o)', r"parameter `__grid_constant__ P p` is not const"),
    ('extern "C" __global__ void k(const __grid_constant__ float* q, float* o)', r"is not const"),
    ('__device__ void f(const __grid_constant__ P p) {}\nextern "C" __global__ void k(const P p, float* o)',
     r"only for a parameter of a __global__ function"),
])
def test_grid_constant_parameters_compile_when_nvrtc_compiles_them(declaration, refused):
    """`__grid_constant__` (CUDA 11.7: a kernel parameter read where the launch put it) did not compile at all;
    now it does where NVRTC takes it (a const parameter of a kernel), and is refused with NVRTC's reason where
    NVRTC refuses it, before any compiler runs."""
    source = _STRUCT + declaration + " { o[0] = 1.0f; }\n"
    kernel = cuda.RawKernel(source, "k", backend="cpu", sanitize=False)
    if refused:
        with pytest.raises(cuda.CompileError, match=rf"nvcc and CuPy's NVRTC refuse(?s:.*){refused}"):
            kernel.compile()
    else:
        out = np.zeros(1, np.float32)
        first = np.zeros(1, np.float32) if "float*" in declaration.split(",")[0] else \
            np.array([(2.0, 3)], dtype=[("s", "f4"), ("n", "i4")])[0]
        kernel((1,), (1,), (first, out))
        assert out[0] == 1.0
    if nvrtc.available():
        if refused:
            with pytest.raises(cuda.CompileError, match="__grid_constant__"):
                nvrtc.compile_ptx(source)
        else:
            nvrtc.compile_ptx(source)
