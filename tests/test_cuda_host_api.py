"""course.cuda's host API against CuPy's (red team p25-p30): signatures, pickling, read-only attributes, options,
and the messages of argument checks. Most checks need no compile: the one kernel that runs is compiled once."""

import copy
import pickle
import types
import warnings

import numpy as np
import pytest

import course.cuda as cuda
from course.cuda import cpu, kernel as kernel_module

FILL = r"""
extern "C" __global__ void fill(float* b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) b[i] = VALUE;
}
"""
MODULE = r"""
__device__ float twice(float x) { return 2.0f * x; }
__constant__ float coef[4];
extern "C" __global__ void bump(float* b) { b[threadIdx.x] = twice(coef[threadIdx.x]); }
__global__ void scale(float* b, float s) { b[threadIdx.x] *= s; }
namespace ns { template <typename T> __global__ void inner(T* b) { b[threadIdx.x] = 5; } }
"""


def test_options_are_the_third_argument_and_a_launch_takes_cupys_stream_keyword():
    """cupy.RawKernel(code, name, options) and kernel(grid, block, args, shared_mem=0, stream=None): both as CuPy
    spells them (options were keyword-only, stream= a TypeError); on the CPU a launch runs synchronously."""
    kernel = cuda.RawKernel(FILL, "fill", ("-DVALUE=2.0f",), backend="cpu", sanitize=False)
    assert kernel.options == ("-DVALUE=2.0f",) and kernel.sanitize is False
    b = np.zeros(4, np.float32)
    kernel((1,), (4,), (b, 4), stream=None)
    assert b.tolist() == [2.0] * 4  # (finished when the call returns)
    kernel((1,), (4,), (b, 4), shared_mem=0, stream=types.SimpleNamespace(ptr=0))  # a CuPy stream's shape
    with pytest.raises(TypeError, match=r"stream must be a CuPy stream .*or None, as with CuPy; got int"):
        kernel((1,), (4,), (b, 4), stream=3)


def test_a_launch_hands_its_stream_to_cupy():
    calls = []
    kernel = cuda.RawKernel(r'extern "C" __global__ void k(int n) { }', "k", backend="cpu")
    compiled = kernel_module._CupyKernel.__new__(kernel_module._CupyKernel)
    compiled.name, compiled.prints = "k", False
    compiled.kernel = lambda grid, block, args, **keywords: calls.append(keywords)
    kernel.backend, kernel._compiled = "cupy", compiled
    stream = types.SimpleNamespace(ptr=1234)
    kernel((1,), (1,), (3,), stream=stream)
    kernel((1,), (1,), (3,), shared_mem=16)
    assert calls == [{"shared_mem": 0, "stream": stream}, {"shared_mem": 16}]


def test_kernels_and_modules_pickle_and_copy_after_a_launch():
    """A launched kernel held a ctypes library, which neither pickled nor deep-copied; now, as CuPy's, its source,
    name, options and settings are kept and the copy compiles again."""
    kernel = cuda.RawKernel(FILL, "fill", ("-DVALUE=2.0f",), backend="cpu", sanitize=False, time_limit=7)
    kernel((1,), (4,), (np.zeros(4, np.float32), 4))
    kernel.max_dynamic_shared_size_bytes = 50_000
    for again in (pickle.loads(pickle.dumps(kernel)), copy.deepcopy(kernel), copy.copy(kernel)):
        assert (again.code, again.name, again.options, again.backend, again.sanitize, again.time_limit) == \
            (FILL, "fill", ("-DVALUE=2.0f",), "cpu", False, 7.0)
        assert again.max_dynamic_shared_size_bytes == 50_000 and again._compiled is None
        b = np.zeros(4, np.float32)
        again((1,), (4,), (b, 4))
        assert b.tolist() == [2.0] * 4
    module = cuda.RawModule(code=FILL, options=("-DVALUE=2.0f",), backend="cpu", sanitize=False)
    function = module.get_function("fill")
    function((1,), (4,), (np.zeros(4, np.float32), 4))
    module_again, function_again = pickle.loads(pickle.dumps((module, function)))
    assert module_again.options == ("-DVALUE=2.0f",) and function_again._module is not None
    b = np.zeros(4, np.float32)
    function_again((1,), (4,), (b, 4))
    assert b.tolist() == [2.0] * 4
    with pytest.raises(pickle.UnpicklingError, match="another version of course.cuda"):
        kernel.__setstate__({"version": 0})


def test_code_name_and_options_are_read_only_as_in_cupy():
    """k.code = ... was accepted and ignored: the kernel kept running its first source."""
    kernel = cuda.RawKernel(FILL, "fill", ("-DVALUE=1",), backend="cpu")
    for attribute in ("code", "name", "options"):
        with pytest.raises(AttributeError, match=rf"RawKernel\.{attribute} is read-only, as in CuPy.*RawKernel\("):
            setattr(kernel, attribute, "x")
    module = cuda.RawModule(code=MODULE, backend="cpu")
    with pytest.raises(AttributeError, match=r"RawModule\.code is read-only"):
        module.code = FILL
    assert kernel.code == FILL and module.code == MODULE


def test_a_non_contiguous_array_for_a_written_parameter_is_told_to_copy_the_results_back():
    """The advice was xp.ascontiguousarray(a) alone, which loses what the kernel writes."""
    kernel = cuda.RawKernel(r'''extern "C" __global__ void k(const float* a, float* o) { o[0] = a[0]; }''', "k",
                            backend="cpu")
    column = np.zeros((4, 4), np.float32)[:, 0]
    with pytest.raises(ValueError, match=r"parameter 'o' .*not const, copy what the kernel wrote into it back .*"
                                         r"`c = xp\.ascontiguousarray\(a\); kernel\(\.\.\., c, \.\.\.\); a\[\.\.\.\] = c`"):
        kernel(1, 1, (np.zeros(1, np.float32), column))
    with pytest.raises(ValueError, match=r"parameter 'a' .*pass a contiguous copy: xp\.ascontiguousarray\(a\)") as info:
        kernel(1, 1, (column, np.zeros(1, np.float32)))
    assert "copy it back" not in str(info.value) and "copy what" not in str(info.value)


def test_scalar_vector_and_bool_messages_say_what_the_parameter_takes():
    source = kernel_module._parse(r'''
extern "C" __global__ void k(bool b, float4 v, int2 p, bool* flags) { }''')
    k = source.kernel("k")
    ok = (True, (1.0, 2.0, 3.0, 4.0), (1, 2), np.zeros(1, np.bool_))
    kernel_module.check_args(k, ok, "cpu")
    cases = [(0, 1.0, TypeError, r"\(bool b\): is a bool, but got the float 1\.0; pass True or False"),
             (1, 1.0, TypeError, r"\(float4 v\): a float4 takes 4 numbers, e\.g\. \(1\.0, 2\.0, 3\.0, 4\.0\)"),
             (2, 7, TypeError, r"\(int2 p\): an int2 takes 2 numbers, e\.g\. \(1, 2\)"),
             (3, np.zeros(1, np.uint8), TypeError, r"\(bool\* flags\): .*holds uint8; convert it with "
                                                   r"a\.astype\(np\.bool_\)$")]
    for index, value, error, message in cases:
        args = list(ok)
        args[index] = value
        with pytest.raises(error, match=message):
            kernel_module.check_args(k, args, "cpu")
    with pytest.raises(TypeError, match=r"takes 4 arguments, k\(.*\), but 1 was given"):
        kernel_module.check_args(k, ok[:1], "cpu")
    one = kernel_module._parse(r'extern "C" __global__ void one(int n) { }').kernel("one")
    with pytest.raises(TypeError, match=r"takes 1 argument, one\(int n\), but 2 were given"):
        kernel_module.check_args(one, (1, 2), "cpu")


def test_torch_tensor_messages_name_bfloat16_and_t_contiguous():
    torch = pytest.importorskip("torch")
    source = kernel_module._parse(r'''
#include <cuda_fp16.h>
extern "C" __global__ void k(__half* h, float* o) { }''')
    k = source.kernel("k")
    with pytest.raises(TypeError, match=r"\(__half\* h\): needs float16 elements, but the tensor holds bfloat16; "
                                        r"convert it with t\.to\(torch\.float16\), or declare the parameter "
                                        r"`__nv_bfloat16\* h`"):
        kernel_module.check_args(k, (torch.zeros(4, dtype=torch.bfloat16), torch.zeros(4)), "cpu")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kernel_module.check_args(k, (torch.zeros(4, dtype=torch.float16), torch.zeros(2, 2).T), "cpu")
    assert len(caught) == 1 and "the tensor is column-major" in str(caught[0].message)
    assert "pass t.contiguous()" in str(caught[0].message) and "ascontiguousarray" not in str(caught[0].message)
    with pytest.raises(TypeError, match=r"a torch tensor on the 'meta' device has a shape but no memory"):
        kernel_module._as_array(torch.zeros(4, device="meta"))  # (red team 12-07: it was called "on the GPU")


def test_sanitize_takes_only_a_bool():
    """sanitize="no" is a true value: it turned the sanitizer on."""
    for wrong in ("no", "False", 0, 1):
        with pytest.raises(TypeError, match=r"sanitize must be True or False \(or None, the default"):
            cuda.RawKernel(FILL, "fill", ("-DVALUE=1",), backend="cpu", sanitize=wrong)
    with pytest.raises(TypeError, match=r"sanitize must be True or False"):
        cuda.RawModule(code=FILL, backend="cpu", sanitize="yes")
    assert cuda.RawKernel(FILL, "fill", ("-DVALUE=1",), backend="cpu", sanitize=np.True_).sanitize is True


@pytest.mark.parametrize("options", [
    ("-DN=4", "-UN", "-I/tmp", "-I", "/tmp", "--include-path=/tmp", "-D", "M=1", "--define-macro=K=2"),
    ("-std=c++17", "--std=c++20", "-std", "c++14", "--use_fast_math", "-use_fast_math", "-arch=sm_80",
     "--gpu-architecture", "compute_90a", "-G", "-lineinfo", "--ftz=true", "-prec-div=false", "--prec-sqrt=true",
     "--fmad=false", "--extra-device-vectorization", "-dopt=on", "--dopt", "off", "-default-device",
     "--device-int128", "-rdc=true", "--relocatable-device-code=false", "-ewp", "-dlto", "-maxrregcount=32",
     "--expt-relaxed-constexpr", "-w", "--diag-suppress=177", "--device-stack-protector"),
])
def test_options_nvrtc_takes_are_taken(options):
    cuda.RawKernel(FILL, "fill", options, backend="cpu")
    cuda.RawModule(code=FILL, options=options, backend="cpu")


@pytest.mark.parametrize("option, message", [
    ("--bogus", r"option '--bogus' is not one of NVRTC's \(is it misspelt\?\), and CuPy's NVRTC refuses .*"
                r"NVRTC takes -D, -U, -I, -std=c\+\+17 .*--gpu-architecture, .*--fmad, .*--device-as-default-execution"),
    ("-O3", r"option '-O3' is not one of NVRTC's \(NVRTC has no -O levels"),
    ("-std=c++99", r"option '-std=c\+\+99': NVRTC's --std takes c\+\+03 or c\+\+11 or c\+\+14 or c\+\+17 or c\+\+20"),
    ("--ftz=yes", r"option '--ftz=yes': NVRTC's --ftz takes true or false"),
    ("-arch=80", r"option '-arch=80': NVRTC's --gpu-architecture takes an architecture such as sm_80"),
    ("-G=1", r"option '-G=1': --device-debug takes no value"),
    ("--use_fast_math=true", r"--use_fast_math takes no value"),
])
def test_options_nvrtc_refuses_are_refused_on_the_cpu_too(option, message):
    """The CPU backend uses only -D: the rest was ignored there, while NVRTC fails to compile with a wrong one."""
    with pytest.raises(cuda.CompileError, match=message):
        cuda.RawKernel(FILL, "fill", ("-DVALUE=1", option), backend="cpu")
    with pytest.raises(cuda.CompileError, match=message):
        cuda.RawModule(code=FILL, options=(option,), backend="cpu")
    with pytest.raises(cuda.CompileError, match=r"option '-D' needs a value after it"):
        cuda.RawKernel(FILL, "fill", ("-D",), backend="cpu")


def test_a_header_of_your_own_with_minus_i_is_not_told_to_use_minus_i(tmp_path):
    """The advice for a missing header was 'CuPy finds them with options=('-I<folder>',)', given to a learner who
    had passed -I<folder>."""
    (tmp_path / "myheader.h").write_text("#define VAL 7.0f\n")
    source = '#include "myheader.h"\n' + FILL.replace("VALUE", "VAL")
    kernel = cuda.RawKernel(source, "fill", (f"-I{tmp_path}",), backend="cpu", sanitize=False)
    with pytest.raises(cuda.CompileError) as info:
        kernel((1,), (4,), (np.zeros(4, np.float32), 4))
    text = str(info.value)
    assert f"myheader.h is in {tmp_path}, which your -I option lets NVRTC search on a GPU, but the CPU backend " \
           "compiles the source string alone: it reads no header files of your own, -I or not" in text
    assert "-I<folder>" not in text and text.count("myheader.h") >= 3


def test_module_lookups_refuse_what_is_not_a_name_and_list_every_kernel():
    module = cuda.RawModule(code=MODULE, backend="cpu")
    with pytest.raises(TypeError, match=r"get_function takes the kernel's name as a str.*got NoneType"):
        module.get_function(None)
    with pytest.raises(TypeError, match=r"get_global takes the variable's name as a str.*got int"):
        module.get_global(3)
    with pytest.raises(cuda.CompileError, match=r"no __global__ function named 'scal' \(did you mean 'scale'\?\)\. "
                                                r"Its kernels: extern \"C\" kernel bump \(get_function\('bump'\)\); "
                                                r"C\+\+ kernels ns::inner<\.\.\.>, scale, which need a name expression "
                                                r"first: RawModule\(\.\.\., name_expressions=\['scale'\]\)"):
        module.get_function("scal")
    with pytest.raises(cuda.CompileError, match=r"'twice' is a __device__ function, not a kernel.*kernel bump"):
        module.get_function("twice")
    with pytest.raises(cuda.CompileError, match=r"'twice' is a __device__ function, not a kernel"):
        cuda.RawKernel(MODULE, "twice", backend="cpu")
    with pytest.raises(cuda.CompileError, match=r"'coef' is a __constant__ or __device__ variable, not a kernel: "
                                                r"fill or read it with get_global\('coef'\)"):
        module.get_function("coef")
    with pytest.raises(cuda.CompileError, match=r"named ' bump ' \(spaces around it: write 'bump'\)"):
        module.get_function(" bump ")


def test_raw_module_takes_exactly_one_of_code_and_path(tmp_path):
    path = tmp_path / "k.cu"
    path.write_text(FILL)
    for arguments in ({"code": FILL, "path": str(path)}, {}):
        with pytest.raises(TypeError, match=r"RawModule: exactly one of code and path must be given, as with CuPy"):
            cuda.RawModule(backend="cpu", **arguments)
    assert cuda.RawModule(path=str(path), backend="cpu").code == FILL


def test_set_heap_size_takes_numpy_integers(monkeypatch):
    monkeypatch.setattr(cpu, "HEAP_BYTES", [cpu.HEAP_BYTES[0]])
    monkeypatch.setenv("COURSE_CUDA_BACKEND", "cpu")
    cuda.set_heap_size(np.int64(2**24))
    assert cpu.HEAP_BYTES[0] == 2**24 and type(cpu.HEAP_BYTES[0]) is int
    for wrong in (np.float64(2**24), True, 0):
        with pytest.raises(ValueError, match="set_heap_size takes a whole number of bytes"):
            cuda.set_heap_size(wrong)


def test_a_grid_too_small_along_an_axis_with_one_thread_a_block_gets_advice_that_works():
    """Block (1, 1, 64) with an x-indexed kernel: the advice was '(n + 0) // 1 blocks', and '1 threads'."""
    source = kernel_module._parse(FILL.replace("VALUE", "1.0f"))
    k = source.kernel("fill")
    rules = kernel_module._launch_rules(source, k)
    message = next(m for m in kernel_module.launch_warnings(rules, k.params, (1, 1, 1), (1, 1, 64),
                                                            [None, np.int32(8)]) if "guard" in m)
    assert "the launch has 1 thread along x (grid.x = 1 block of 1)" in message
    assert "Launch blocks with threads along x, e.g. 256 threads and (n + 255) // 256 blocks along x" in message
    assert "// 1" not in message and "(n + 0)" not in message
    message = next(m for m in kernel_module.launch_warnings(rules, k.params, (3, 1, 1), (256, 1, 1),
                                                            [None, np.int32(1000)]) if "guard" in m)
    assert "Round the grid up, (n + 255) // 256 blocks (a division that rounds down" in message


FRONTIER = r"""
extern "C" __global__ void expand(const int* row, const int* col, int* dist, const int* frontier, int* next,
                                  int* tail, int fsize, int level, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {                                        // the graph's size, not the frontier's
        int v = frontier[i];
        for (int e = row[v]; e < row[v + 1]; ++e)
            if (atomicCAS(&dist[col[e]], -1, level + 1) == -1) next[atomicAdd(tail, 1)] = col[e];
    }
}
"""


def test_a_grid_sized_for_another_size_argument_than_the_guard_asks_which_size_is_meant():
    """A frontier BFS launched for its fsize items but guarded by the vertex count n: rounding the grid up to n
    would make more threads read stale queue entries, so the warning also asks whether the guard is `i < fsize`;
    no such question where no other size fits the grid."""
    source = kernel_module._parse(FRONTIER)
    k = source.kernel("expand")
    rules = kernel_module._launch_rules(source, k)
    values = [None] * 6 + [np.int32(70), np.int32(2), np.int32(1000)]
    message = next(m for m in kernel_module.launch_warnings(rules, k.params, (3, 1, 1), (32, 1, 1), values)
                   if "guard" in m)
    assert "Round the grid up, (n + 31) // 32 blocks" in message
    assert message.endswith("Or is the grid sized for fsize = 70 (3 blocks of 32), and the guard should be `i < fsize`?")
    values[6] = np.int32(500)  # (fsize needs 16 blocks: not what the grid was sized for)
    message = next(m for m in kernel_module.launch_warnings(rules, k.params, (3, 1, 1), (32, 1, 1), values)
                   if "guard" in m)
    assert "fsize" not in message


def test_launch_mistakes_of_the_host_side_say_what_to_write():
    """Red team 12-07b: arguments spread out (`k(1, 8, a, c, 8)`) got Python's 'takes 4 positional arguments but 6
    were given'; a grid from a division, a float or bool shared_mem, a complex128 array for a float2*, __brkpt() and
    asm("trap;") each get words that say what to write."""
    k = cuda.RawKernel('extern "C" __global__ void k(float* c, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; '
                       "if (i < n) c[i] = i; }", "k", backend="cpu")
    c = np.zeros(1000, np.float32)
    with pytest.raises(TypeError, match=r"the kernel's arguments go in one tuple, the third argument: k\(grid, block, "
                                         r"\(a, b, n\)\); this call passed 2 separate values after grid and block"):
        k(4, 256, c, 1000)
    with pytest.raises(TypeError, match=r"got \(3\.90625,\); a division gives a float: round up with // instead, e\.g\. "
                                         r"\(n \+ 255\) // 256 blocks of 256"):
        k((1000 / 256,), 256, (c, 1000))
    with pytest.raises(TypeError, match=r"shared_mem must be a whole number of bytes \(an int\), got float 16\.0; use "
                                         r"int\(\.\.\.\) or // \(e\.g\. shared_mem=16\)"):
        k(4, 256, (c, 1000), shared_mem=4 * 4.0)
    with pytest.raises(TypeError, match=r"got bool True"):
        k(4, 256, (c, 1000), shared_mem=True)
    k(4, 256, (c, 1000), shared_mem=np.int64(16))
    assert c[999] == 999
    pairs = cuda.RawKernel('extern "C" __global__ void k(const float2* z, float* out) { out[threadIdx.x] = '
                           "z[threadIdx.x].x * 10 + z[threadIdx.x].y; }", "k", backend="cpu")
    out = np.zeros(2, np.float32)
    with pytest.raises(TypeError, match=r"needs pairs of float32 values, but the array holds complex128; convert it with "
                                         r"a\.astype\(np\.complex64\)"):
        pairs(1, 2, (np.array([1 + 2j, 3 + 4j]), out))
    pairs(1, 2, (np.array([1 + 2j, 3 + 4j]).astype(np.complex64), out))
    assert out.tolist() == [12, 34]
    for body, expected in (('asm("trap;")', r"called __trap\(\)"), ("__brkpt()", r"reached __brkpt\(\), a breakpoint"),
                           ('asm volatile("brkpt;")', r"reached __brkpt\(\)")):
        stop = cuda.RawKernel(f'extern "C" __global__ void k(int* d) {{ if (threadIdx.x == 3) {body}; }}', "k",
                              backend="cpu")
        with pytest.raises(cuda.KernelError, match=expected) as info:
            stop(1, 8, (np.zeros(1, np.int32),))
        assert info.value.thread == (3, 0, 0)


def test_a_complex_scalar_passes_as_a_cucomplex_of_its_precision():
    """Red team 12-07b: np.complex64 for a cuFloatComplex (a float2 by value) was refused, though CuPy passes it
    (the same 8 bytes); a Python complex (two doubles) is told to become np.complex64, and is right for a
    cuDoubleComplex."""
    single = cuda.RawKernel('#include <cuComplex.h>\nextern "C" __global__ void k(cuFloatComplex z, float* out) { '
                            "out[0] = cuCrealf(z); out[1] = cuCimagf(z); }", "k", backend="cpu")
    out = np.zeros(2, np.float32)
    single(1, 1, (np.complex64(1 + 2j), out))
    assert out.tolist() == [1, 2]
    with pytest.raises(TypeError, match=r"a cuFloatComplex is two float32 values, but got complex \(1\+2j\), two doubles "
                                         r".*pass np\.complex64\(z\)"):
        single(1, 1, (1 + 2j, out))
    double = cuda.RawKernel('#include <cuComplex.h>\nextern "C" __global__ void k(cuDoubleComplex z, double* out) { '
                            "out[0] = cuCreal(z); out[1] = cuCimag(z); }", "k", backend="cpu")
    out = np.zeros(2)
    double(1, 1, (3 - 1j, out))
    assert out.tolist() == [3, -1]
