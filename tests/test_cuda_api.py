"""course.cuda: backend choice, the lazy module attributes, the kernel cache, odds and ends."""

import os
import re
import shutil
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import numpy as np
import pytest

import course.cuda as cuda
from course import env
from course.cuda import cpu

ROOT = Path(__file__).resolve().parent.parent
ADD = r"""
extern "C" __global__ void add_one(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
}
"""


def test_import_is_light():
    code = "import sys, course.cuda; print(sorted(m for m in ('cupy', 'torch') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_backend_follows_the_environment(monkeypatch):
    monkeypatch.setenv("COURSE_CUDA_BACKEND", "cpu")
    assert cuda.backend() == "cpu" and cuda.xp.ndarray is np.ndarray and cuda.xp.__name__ == "course.cuda.host"
    monkeypatch.setenv("COURSE_CUDA_BACKEND", "gpu")
    with pytest.raises(ValueError, match="use 'cpu' or 'cupy'"):
        cuda.backend()
    monkeypatch.delenv("COURSE_CUDA_BACKEND")
    assert cuda.backend() == ("cupy" if env.cupy_usable() else "cpu")


@pytest.mark.skipif(env.cupy_usable(), reason="a GPU is usable here, so forcing cupy works")
def test_forcing_cupy_without_a_gpu_says_why(monkeypatch):
    monkeypatch.setenv("COURSE_CUDA_BACKEND", "cupy")
    with pytest.raises(RuntimeError, match="CuPy cannot run kernels here"):
        cuda.backend()
    with pytest.raises(RuntimeError, match="needs CuPy and a usable GPU"):
        cuda.RawKernel(ADD, "add_one", backend="cupy")


def test_helpers_on_the_cpu_backend(monkeypatch):
    monkeypatch.setenv("COURSE_CUDA_BACKEND", "cpu")
    a = np.arange(3)
    assert cuda.asnumpy(a) is a
    cuda.synchronize()  # nothing to wait for, and no error
    assert "CPU" in cuda.device_name() and "emulated" in cuda.device_name()
    from course.timing import benchmark

    assert cuda.benchmark is benchmark
    with pytest.raises(AttributeError):
        cuda.no_such_helper  # noqa: B018


def test_kernel_object_describes_itself():
    k = cuda.RawKernel(ADD, "add_one", backend="cpu")
    assert repr(k) == "<RawKernel add_one(float* x, int n) on cpu>"
    assert [(p.name, p.pointer, p.dtype) for p in k.params] == [("x", True, "float32"), ("n", False, "int32")]
    with pytest.raises(ValueError, match="time_limit"):
        cuda.RawKernel(ADD, "add_one", backend="cpu", time_limit=0)


def test_grid_and_block_as_ints_lists_or_tuples():
    k = cuda.RawKernel(ADD, "add_one", backend="cpu")
    x = np.zeros(300, np.float32)
    k(2, 256, (x, 300))
    k([2, 1], (256, 1, 1), [x, np.int64(300)])
    assert (x == 2).all()


def test_compiled_kernels_are_cached_on_disk(tmp_path, monkeypatch, private_kernel_cache):
    source = ADD.replace("1.0f", "2.0f")
    cuda.RawKernel(source, "add_one", backend="cpu").compile()
    libraries = list(tmp_path.glob("*.so"))
    assert len(libraries) == 1 and not list(tmp_path.glob("build-*"))  # no leftovers
    # A new process (here: an empty in-memory cache) loads the library without compiling.
    cpu._modules.clear()
    monkeypatch.setattr(cpu, "_compile", lambda *a, **k: pytest.fail("compiled again"))
    x = np.zeros(4, np.float32)
    cuda.RawKernel(source, "add_one", backend="cpu")((1,), (4,), (x, 4))
    assert (x == 2).all()


def test_a_cache_whose_files_were_cut_short_builds_them_again(tmp_path):
    """Red team 12-07: a module .so cut short (a full disk, a partial copy or sync of the cache) made every later
    process die of SIGBUS when it loaded it; it is built again. A runtime.o cut short failed every later compile,
    blaming the kernel: the same check rebuilds it (and a bad runtime.h.gch is rebuilt when a compile says so)."""
    source = ADD.replace("1.0f", "5.0f") + "// cut short\n"
    cuda.RawKernel(source, "add_one", backend="cpu").compile()
    (library,) = {m.path for key, m in cpu._modules.items() if key[0] == source}
    assert cpu._whole(library)

    def cut(path, size):  # (a new file: this process has the old one mapped, which must stay whole)
        data = path.read_bytes()[:size]
        path.unlink()
        path.write_bytes(data)

    cut(library, 4096)
    assert not cpu._whole(library)
    cpu._modules.clear()
    x = np.zeros(4, np.float32)
    cuda.RawKernel(source, "add_one", backend="cpu")((1,), (4,), (x, 4))
    assert (x == 5).all() and cpu._whole(library)
    runtime = next(iter(sorted(p.parent for p in cpu.cache_dir().glob("runtime-*/runtime.o"))), None)
    if runtime is not None:  # the prebuilt runtime's object, cut short, is no longer whole
        copy = tmp_path / "runtime.o"
        copy.write_bytes((runtime / "runtime.o").read_bytes()[:1000])
        assert cpu._whole(runtime / "runtime.o") and not cpu._whole(copy)
    empty = tmp_path / "empty.so"
    empty.write_bytes(b"")
    assert not cpu._whole(empty)


def test_the_runtime_is_compiled_once_per_build_kind_and_linked_into_each_module(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("COURSE_CUDA_CACHE", str(tmp_path))
    compiler = cpu.find_compiler()
    plain = cpu._prebuilt_runtime(compiler, ["-mtls-dialect=gnu2"])
    checked = cpu._prebuilt_runtime(compiler, ["-D__CC_SANITIZE", "-DTILE=32"])  # a learner's -D: the same runtime
    assert plain and checked and plain != checked and (checked / "runtime.o").stat().st_size > 0
    if cpu._is_gcc(compiler):
        assert (checked / "runtime.h.gch").stat().st_size > 0
    assert cpu._prebuilt_runtime(compiler, ["-D__CC_SANITIZE"]) == checked  # made once
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([plain.name, checked.name])  # no build leftovers
    # Kernels compiled with it run, each module with its own runtime state (two modules' launches
    # interleaved: each keeps its own output and its own faults), and a compile error names the
    # learner's line, not the cache.
    source = ADD.replace("1.0f", "3.0f")
    x = np.zeros(4, np.float32)
    three = cuda.RawKernel(source, "add_one", backend="cpu")
    printer = cuda.RawKernel(r'''extern "C" __global__ void hello() { printf("hello %d\n", threadIdx.x); }''', "hello",
                             backend="cpu")
    three((1,), (4,), (x, 4))
    printer((1,), (2,), ())
    three((1,), (4,), (x, 4))
    assert (x == 6).all() and capsys.readouterr().out == "hello 0\nhello 1\n"
    with pytest.raises(cuda.KernelError, match=r"accessed x\[4\], but x has 4 elements"):
        three((1,), (8,), (x, 8))
    before = x.copy()
    three((1,), (4,), (x, 4))
    assert (x == before + 3).all()
    with pytest.raises(cuda.CompileError) as info:
        cuda.RawKernel(source.replace("3.0f;", "3.0f"), "add_one", backend="cpu").compile()
    assert "kernel.cu:" in str(info.value) and str(tmp_path) not in str(info.value)
    assert "runtime.h" not in str(info.value)
    # A folder someone else planted under the expected name is never used.
    shutil.rmtree(checked)
    checked.symlink_to(plain)
    assert cpu._prebuilt_runtime(compiler, ["-D__CC_SANITIZE"]) is None


def test_modules_link_with_gold_where_it_works_and_are_the_same_with_the_default_linker(monkeypatch):
    """GNU gold links a module where the compiler has it and the probe's library (a thread_local, the module's TLS
    flags) links and loads; a compiler that fails the probe, or none, gets the default linker; and a module linked
    either way runs alike, a fault naming the same line."""
    compiler = cpu.find_compiler()
    assert cpu._linker_flags("/nonexistent/g++") == ()
    if sys.platform.startswith("linux") and cpu._is_gcc(compiler) and shutil.which("ld.gold"):
        assert cpu._linker_flags(compiler, ("-mtls-dialect=gnu2",)) == ("-fuse-ld=gold",)
    messages, linked = [], []
    run = uuid.uuid4().hex  # (sources of this run's own: compiled here, not found in the cache)
    for linker in ("probed", "default"):
        if linker == "default":
            monkeypatch.setattr(cpu, "_linker_flags", lambda compiler, tls=(): linked.append(compiler) or ())
        source = ADD + f"// linked by the {linker} linker ({run})\n"
        x = np.zeros(4, np.float32)
        cuda.RawKernel(source, "add_one", backend="cpu")((1,), (4,), (x, 4))
        assert (x == 1).all()
        with pytest.raises(cuda.KernelError) as info:
            cuda.RawKernel(source.replace("if (i < n) ", ""), "add_one", backend="cpu", sanitize=True)((1,), (8,), (x, 4))
        messages.append(str(info.value))
    assert len(linked) == 2  # (both of the default linker's modules were compiled and linked here)
    assert messages[0] == messages[1] and "accessed x[4]" in messages[0]


def test_without_the_prebuilt_runtime_each_module_is_one_translation_unit(tmp_path, monkeypatch, capsys):
    """Where runtime.o does not build (another compiler), a module compiles runtime and kernel together, and
    everything works as with it: output, a fault's line, a sanitized launch's race."""
    monkeypatch.setenv("COURSE_CUDA_CACHE", str(tmp_path))
    monkeypatch.setattr(cpu, "_prebuilt_runtime", lambda compiler, flags: None)
    x = np.zeros(4, np.float32)
    cuda.RawKernel(ADD.replace("x[i] += 1.0f;", 'x[i] += 1.0f; printf("%d\\n", i);'), "add_one", backend="cpu")(
        (1,), (4,), (x, 4))
    assert (x == 1).all() and capsys.readouterr().out == "0\n1\n2\n3\n"
    with pytest.raises(cuda.KernelError, match=r"accessed x\[4\]") as info:
        cuda.RawKernel(ADD.replace("if (i < n) ", ""), "add_one", backend="cpu")((1,), (8,), (x, 4))
    assert info.value.line == 4
    racy = r"""
extern "C" __global__ void total(const float* x, float* out) {
    __shared__ float s[64];
    s[threadIdx.x] = x[threadIdx.x];
    if (threadIdx.x == 0) { float t = 0; for (int k = 0; k < 64; k++) t += s[k]; out[0] = t; }
}"""
    with pytest.raises(cuda.KernelError, match=r"__syncthreads\(\)") as info:
        cuda.RawKernel(racy, "total", backend="cpu", sanitize=True)((1,), (64,), (np.ones(64, np.float32), x))
    assert info.value.line == 4 and "read it at line 5" in str(info.value)
    assert not list(tmp_path.glob("runtime-*"))


def test_options_define_macros():
    source = ADD.replace("1.0f", "STEP")
    x = np.zeros(4, np.float32)
    cuda.RawKernel(source, "add_one", backend="cpu", options=("-DSTEP=5.0f", "--use_fast_math"))(1, 4, (x, 4))
    cuda.RawKernel(source, "add_one", backend="cpu", options=("--define-macro=STEP=0.5f",))(1, 4, (x, 4))
    assert (x == 5.5).all()


def test_short_macro_names_in_options_do_not_reach_the_runtime_header():
    """-DN=4, -DT=float, -DB: NVRTC's common options, with names that runtime.h's templates use as parameters,
    come after it (as #define lines), so they mean only what the kernel means by them."""
    source = r"""
extern "C" __global__ void fill(T* x) { if (threadIdx.x < N) x[threadIdx.x] = (T)(B + S); }
"""
    x = np.zeros(8, np.float32)
    options = ("-DN=4", "-DT=float", "-DB", "-D", "S=2", "-DA=1", "-DW=1", "-DH=1", "-DR=1", "-DD=1", "-DF=1", "-DC=1")
    for sanitize in (False, True):
        cuda.RawKernel(source, "fill", backend="cpu", options=options, sanitize=sanitize)(1, 8, (x,))
        assert x.tolist() == [3, 3, 3, 3, 0, 0, 0, 0]


def test_the_constructors_arguments_are_checked_with_messages_that_say_what_to_write():
    with pytest.raises(TypeError, match=r"options must be a tuple of strings, e\.g\. options=\('-DN=4',\)"):
        cuda.RawKernel(ADD, "add_one", backend="cpu", options="-DN=4")
    assert cuda.RawKernel(ADD, "add_one", backend="cpu", options=["-DN=4"]).options == ("-DN=4",)  # a list too
    with pytest.raises(TypeError, match=r"options must be a tuple of strings.*got 4 in it"):
        cuda.RawModule(code=ADD, backend="cpu", options=("-DN=4", 4))
    with pytest.raises(TypeError, match=r"the CUDA C source comes first, then the kernel's name"):
        cuda.RawKernel("add_one", ADD, backend="cpu")
    for bad in (-1, 0, "abc", float("nan"), True):
        with pytest.raises(ValueError, match=r"time_limit must be a positive number of seconds"):
            cuda.RawKernel(ADD, "add_one", backend="cpu", time_limit=bad)
        with pytest.raises(ValueError, match=r"time_limit must be a positive number of seconds"):
            cuda.RawModule(code=ADD, backend="cpu", time_limit=bad)
    assert cuda.RawModule(code=ADD, backend="cpu", time_limit=2.5).get_function("add_one").time_limit == 2.5
    with pytest.raises(TypeError, match=r"args must be a tuple .*got ndarray \(one argument is a tuple with a comma: "
                                        r"\(x,\)"):
        cuda.RawKernel("extern \"C\" __global__ void one(float* x) { x[0] = 1; }", "one", backend="cpu")(
            1, 1, (np.zeros(2, np.float32)))


def test_launch_from_another_thread_including_a_fault():
    k = cuda.RawKernel(ADD, "add_one", backend="cpu")
    results = []

    def work():
        x = np.zeros(8, np.float32)
        k(1, 8, (x, 8))
        try:
            k(1, 8, (x[:4], 8))
        except cuda.KernelError as error:
            results.append((x.tolist(), error.thread))

    worker = threading.Thread(target=work)
    worker.start()
    worker.join()
    assert results == [([2.0] * 4 + [1.0] * 4, (4, 0, 0))]


def test_portable_fibers_give_the_same_answers():
    """The ucontext fallback (CPUs without the hand-written context switch) still works."""
    source = (ROOT / "tests" / "cuda_kernels" / "parity.cu").read_text()
    k = cuda.RawKernel(source, "block_sum", backend="cpu", options=("-D__CC_USE_UCONTEXT",))
    x = np.arange(256, dtype=np.float32)
    partial = np.zeros(2, np.float32)
    k((2,), (128,), (x, partial, 256), shared_mem=128 * 4)
    assert partial.tolist() == [x[:128].sum(), x[128:].sum()]


def test_constant_memory_and_vector_types():
    source = r"""
    __constant__ float weights[4] = {0.5f, 1.0f, 2.0f, 4.0f};
    extern "C" __global__ void weigh(const float4* in, float4* out, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) {
            float4 v = in[i];
            out[i] = make_float4(v.x * weights[0], v.y * weights[1], v.z * weights[2], v.w * weights[3]);
        }
    }"""
    k = cuda.RawKernel(source, "weigh", backend="cpu")
    x = np.arange(12, dtype=np.float32)
    out = np.zeros(12, np.float32)
    k(1, 32, (x, out, 3))
    np.testing.assert_array_equal(out, x * np.tile([0.5, 1, 2, 4], 3))
    with pytest.raises(ValueError, match="multiple of 4"):
        k(1, 32, (x[:10], out, 3))
    with pytest.raises(cuda.KernelError, match=r"in\[3\], but in has 3 elements"):
        k(1, 32, (x, out, 4))
    k(1, 32, (x.reshape(3, 4), out.reshape(3, 4), 3))  # rows of whole float4s
    with pytest.raises(ValueError, match=r"a float4 holds 4 values, but the array's last dimension has 3 "
                                         r"\(shape \(4, 3\)\).*float3\*, or float\*"):
        k(1, 32, (x.reshape(4, 3), out, 3))  # 12 floats, but rows of 3: not what the kernel reads
    pixels = cuda.RawKernel('''extern "C" __global__ void alpha(uchar4* p, int n) {
        int i = threadIdx.x; if (i < n) p[i].w = 255; }''', "alpha", backend="cpu")
    with pytest.raises(ValueError, match=r"uchar4 holds 4 values.*uchar3\*, or unsigned char\* and index three"):
        pixels(1, 32, (np.zeros((2, 8, 3), np.uint8), 12))  # an RGB image
    rgba = np.zeros((2, 8, 4), np.uint8)
    pixels(1, 32, (rgba, 16))
    assert (rgba[..., 3] == 255).all() and not rgba[..., :3].any()


@pytest.mark.parametrize("sanitize", [False, True])
@pytest.mark.parametrize("conversion, argument", [("%n", "c + n"), ("%lln", "(long long*)(c + 3)")])
def test_printf_with_n_is_refused_before_it_writes_anywhere(sanitize, conversion, argument):
    """Red team 12-07: `printf("abc%n", c + 1000000)` wrote 3 a million ints past a 4-int array, unchecked. CUDA's
    printf has no %n."""
    source = f'extern "C" __global__ void k(int* c, int n) {{ printf("abc{conversion}\\n", {argument}); }}'
    whole = np.zeros(16, np.int32)
    with pytest.raises(cuda.KernelError, match=rf"called printf with {conversion}, which CUDA's printf does not have"):
        cuda.RawKernel(source, "k", backend="cpu", sanitize=sanitize)((1,), (1,), (whole[:4], np.int32(8)))
    assert not whole.any()


@pytest.mark.parametrize("body, expected", [
    ('__half h = __float2half(1.5f); printf("%f\\n", h);', r"passed a __half \(or __nv_bfloat16\) to printf's %f .*"
                                                            r"`__half2float\(h\)`"),
    ('__half2 h = __floats2half2_rn(1.f, 2.f); printf("%f\\n", h);', r"passed a __half2 .*`__low2float\(h2\), "
                                                                     r"__high2float\(h2\)`"),
    ('printf("%d\\n", threadIdx);', r"passed a vector type \(float2, .*uint3: threadIdx, blockIdx\) to printf's %d .*"
                                    r"`threadIdx\.x`"),
    ('float2 v = make_float2(1.f, 2.f); printf("%f %f\\n", v);', r"passed a vector type .* to printf's %f"),
    ('long double x = 1.5; printf("%Lf\\n", x);', r"called printf with %Lf, a long double's conversion, which CUDA's "
                                                  r"printf does not have"),
    ('printf("' + "%d " * 33 + '\\n", ' + ", ".join(map(str, range(33))) + ");",
     r"called printf with 33 values after the format, but CUDA's printf takes at most 32"),
])
def test_printf_of_what_it_has_no_conversion_for_is_refused(body, expected, capsys):
    """Red team 12-07b: a __half, a float2 or threadIdx given to printf printed a meaningless number (nvcc warns);
    %Lf printed nan; 33 values printed all 33 (CUDA's printf takes 32). Each is refused, saying what to pass; the
    twins print."""
    source = '#include <cuda_fp16.h>\nextern "C" __global__ void k(int* d) { ' + body + " }"
    with pytest.raises(cuda.KernelError, match="(?s)" + expected):
        cuda.RawKernel(source, "k", backend="cpu")((1,), (1,), (np.zeros(1, np.int32),))
    fine = ('__half h = __float2half(1.5f); printf("%f %d %d\\n", __half2float(h), threadIdx.x, blockIdx.x); '
            'printf("' + "%d " * 32 + '\\n", ' + ", ".join(map(str, range(32))) + ");")
    cuda.RawKernel('#include <cuda_fp16.h>\nextern "C" __global__ void k(int* d) { ' + fine + " }", "k", backend="cpu")(
        (1,), (1,), (np.zeros(1, np.int32),))
    assert capsys.readouterr().out.splitlines()[-2:] == ["1.500000 0 0", " ".join(map(str, range(32))) + " "]


def test_printf_without_a_stdout_prints_nothing_as_print_does(monkeypatch, capsys):
    """Red team 12-07: with `sys.stdout = None` (pythonw, some runners) a launch that printed raised AttributeError;
    Python's own print prints nothing then."""
    k = cuda.RawKernel(r'extern "C" __global__ void hello() { printf("hello %d\n", threadIdx.x); }', "hello",
                       backend="cpu")
    monkeypatch.setattr(sys, "stdout", None)
    k((1,), (2,), ())
    monkeypatch.undo()
    k((1,), (2,), ())
    assert capsys.readouterr().out == "hello 0\nhello 1\n"


def test_printf_output_is_capped():
    source = r"""
    extern "C" __global__ void chatter() { printf("%0100d\n", threadIdx.x); }"""
    from contextlib import redirect_stdout
    from io import StringIO

    text = StringIO()
    with redirect_stdout(text):
        cuda.RawKernel(source, "chatter", backend="cpu")(20_000, 1, ())  # 2 MB of text
    assert 0.9e6 < len(text.getvalue()) < 1.1e6 and "was dropped" in text.getvalue()


@pytest.mark.parametrize("declaration", ['extern "C" int printf(const char* format, ...);',
                                         "int printf(const char*, ...);",
                                         '#include <stdio.h>\nextern "C" { int printf(const char* f, ...); }'])
def test_a_kernel_may_declare_printf_itself(declaration, capsys):
    """Samples declare printf instead of including <cstdio>; the declaration names the same function."""
    source = declaration + r"""
    extern "C" __global__ void hello() { printf("block %d\n", blockIdx.x); }"""
    cuda.RawKernel(source, "hello", backend="cpu")((2,), (1,), ())
    assert capsys.readouterr().out == "block 0\nblock 1\n"


def test_printf_returns_the_number_of_arguments_as_on_a_gpu(capsys):
    """CUDA's printf returns how many arguments follow the format (0 for none), not the characters printed."""
    counts = np.zeros(3, np.int32)
    source = r"""extern "C" __global__ void counted(int* n) {
        n[0] = printf("none\n"); n[1] = printf("%d %s\n", 7, "x"); n[2] = printf("%f %f %f\n", 1.0, 2.0, 3.0); }"""
    cuda.RawKernel(source, "counted", backend="cpu")((1,), (1,), (counts,))
    assert list(counts) == [0, 2, 3]
    assert capsys.readouterr().out == "none\n7 x\n1.000000 2.000000 3.000000\n"


def test_a_kernel_or_a_variable_may_be_named_clock_and_clock_still_reads_the_time():
    """clock() and clock64() are CUDA's, but `clock` is no reserved word: a kernel (or a local) of that name
    compiles, and clock() (also after <ctime>) still gives a time that grows."""
    x = np.zeros(4, np.float32)
    cuda.RawKernel('extern "C" __global__ void clock(float* x) { int clock = 2; x[threadIdx.x] = clock; }', "clock",
                   backend="cpu")((1,), (4,), (x,))
    assert (x == 2).all()
    t = np.zeros(3, np.int64)
    source = r"""#include <ctime>
extern "C" __global__ void times(long long* t) { t[0] = clock64(); clock_t c = clock(); t[1] = c; t[2] = clock64(); }"""
    cuda.RawKernel(source, "times", backend="cpu")((1,), (1,), (t,))
    assert 0 < t[0] <= t[1] <= t[2]


@pytest.mark.parametrize("sanitize", [False, True])
def test_printf_takes_strings_and_pointers_from_arguments_and_arrays(sanitize, capsys):
    """%s of a `const char*` parameter, of a local and of a __shared__ char array, %p of an argument:
    the emulator's checked pointers and array views reach printf as the pointers they stand for (a
    struct passed whole to `...` would shift every argument after it)."""
    source = r"""
    extern "C" __global__ void show(const char* name, const float* x, int n) {
        char local[4] = {'a', 'b', 'c', 0};
        __shared__ char shared[4];
        shared[threadIdx.x] = "xyz"[threadIdx.x];
        __syncthreads();
        if (threadIdx.x == 0) printf("%s %s %s %d %p %.1f\n", name, local, shared, n, (const void*)x, x[1]);
    }"""
    name = np.frombuffer(b"ramp\0", np.int8).copy()
    x = np.array([0.5, 1.5], np.float32)
    cuda.RawKernel(source, "show", backend="cpu", sanitize=sanitize)((1,), (4,), (name, x, 7))
    assert capsys.readouterr().out == f"ramp abc xyz 7 {hex(x.ctypes.data)} 1.5\n"


@pytest.mark.parametrize("sanitize", [False, True])
def test_printf_of_a_string_without_its_zero_byte_is_a_read_past_the_array(sanitize, capsys):
    # bytes from NumPy without a '\0' (b"ramp"), a local char array filled to its end: %s reads on past the
    # array, on a GPU too; %.4s reads four bytes at most, and needs no zero byte
    source = r"""
    extern "C" __global__ void show(const char* name, int local) {
        char word[4] = {'a', 'b', 'c', 'd'};
        if (local) printf("%s\n", word);
        else printf("%.4s|%.*s|%s\n", name, 2, name, name);
    }"""
    kernel = cuda.RawKernel(source, "show", backend="cpu", sanitize=sanitize)
    kernel((1,), (1,), (np.frombuffer(b"ramp\0", np.int8).copy(), 0))
    assert capsys.readouterr().out == "ramp|ra|ramp\n"
    with pytest.raises(cuda.KernelError, match=r"accessed name\[4\], but name has 4 elements") as info:
        kernel((1,), (1,), (np.frombuffer(b"ramp", np.int8).copy(), 0))
    assert "%s prints a string up to its zero byte, and name has none in its 4 bytes" in str(info.value)
    assert "`%.4s`" in str(info.value) and info.value.line == 5
    with pytest.raises(cuda.KernelError, match=r"accessed word\[4\], but that dimension of the local array word has 4"):
        kernel((1,), (1,), (np.frombuffer(b"ramp\0", np.int8).copy(), 1))



PRINTF_MISTAKES = [
    ('printf("%d\\n", x[0])', r"passed a floating-point number \(a float goes to printf as a double\) to printf's %d "
                              r"\(the 1st value after the format\), which prints an int \(4 bytes\)"),
    ('printf("%s = %f\\n", n, x[0])', r"passed an integer of 4 bytes or fewer \(int, unsigned, char, short, bool\) to "
                                      r"printf's %s \(the 1st value after the format\), which prints a string"),
    ('printf("n=%d x=%f\\n", n, n)', r"passed an integer of 4 bytes or fewer .* to printf's %f \(the 2nd value after "
                                     r"the format\)"),
    ('printf("%d %d\\n", (long long)n << 40, n)', r"passed an 8-byte integer \(long long, size_t, or long\) to "
                                                r"printf's %d \(the 1st value after the format\), which prints an int"),
    ('printf("%lld\\n", n)', r"passed an integer of 4 bytes or fewer .* to printf's %lld \(the 1st value after the "
                             r"format\), which prints an 8-byte integer"),
    ('printf("%d\\n", sizeof(x[0]))', r"passed an 8-byte integer .* to printf's %d"),
    ('printf("%s\\n", x)', r"passed a pointer to numbers to printf's %s \(the 1st value after the format\)"),
    ('printf("%x\\n", x)', r"passed a pointer to numbers to printf's %x"),
    ('printf("%d %d\\n", n)', r"asks for at least 2 values \(%d takes the 2nd\), but the call passes 1"),
    ('printf("%*.2f\\n", x[0], x[1])', r"to printf's %\*.2f \(the 1st value after the format\), whose \* takes an int"),
    ('show("x", n + 0.5f)', r"to printf's %d \(the 2nd value after the format\)"),
]


@pytest.mark.parametrize("sanitize", [False, True])
def test_printf_with_a_value_its_format_does_not_take_is_reported(sanitize, capsys):
    """A GPU prints a meaningless number for %d of a float, reads a number given to %s as an address,
    and prints whatever lies in its buffer for a missing value; here the call stops the kernel with
    the conversion, the value and the line (a helper's line too)."""
    cases = "\n".join(f"            case {k}: {call}; break;  // CALL {k}" for k, (call, _) in enumerate(PRINTF_MISTAKES))
    source = r"""
    __device__ void show(const char* name, float v) { printf("%s = %d\n", name, v); }  // HELPER
    extern "C" __global__ void report(const float* x, int n, int mistake) {
        printf("thread %u of %d: %5.1f%% %s %c %p %zu %lld\n", threadIdx.x, n, 12.5f, "ok", 'c', x, sizeof(n), (long long)n);
        printf("%hd %ld %llx %lu %s\n", (short)n, (long)n, 255ull, sizeof(x[0]), "fits");  // (no fault: sizes agree)
        if (threadIdx.x == 1)
            switch (mistake) {
CASES
            }
    }""".replace("CASES", cases)
    report = cuda.RawKernel(source, "report", backend="cpu", sanitize=sanitize)
    lines = source.split("\n")
    for k, (call, message) in enumerate(PRINTF_MISTAKES):
        with pytest.raises(cuda.KernelError, match=message) as info:
            report((1,), (2,), (np.ones(2, np.float32), 3, k))
        assert info.value.thread == (1, 0, 0)
        marker = "// HELPER" if "show" in call else f"// CALL {k}"
        assert info.value.line == next(i for i, text in enumerate(lines, 1) if text.endswith(marker))
        assert "On a GPU" in str(info.value)
        # the calls that fit their format printed, and printed right
        printed = capsys.readouterr().out.splitlines()
        assert printed[1::2] == ["3 3 ff 4 fits"] * 2
        printed = printed[0::2]
        assert [line.split()[:7] + line.split()[8:] for line in printed] == [
            ["thread", str(t), "of", "3:", "12.5%", "ok", "c", "4", "3"] for t in (0, 1)]
        assert all(line.split()[7].startswith("0x") for line in printed)

def test_a_source_with_a_byte_order_mark_compiles(tmp_path):
    """A .cu file saved by a Windows editor starts with a UTF-8 byte-order mark, which is no C."""
    source = "\ufeff" + 'extern "C" __global__ void one(int* x) { x[threadIdx.x] = 1; }\n'
    (tmp_path / "one.cu").write_bytes(source.encode("utf-8"))
    for kernel in (cuda.RawKernel(source, "one", backend="cpu"),
                   cuda.RawModule(path=tmp_path / "one.cu", backend="cpu").get_function("one")):
        x = np.zeros(4, np.int32)
        kernel((1,), (4,), (x,))
        assert x.tolist() == [1, 1, 1, 1] and not kernel.code.startswith("\ufeff")


@pytest.mark.parametrize("source", [
    'namespace course { extern "C" __global__ void ramp(float* y) { y[threadIdx.x] = threadIdx.x; } }',
    'namespace a { namespace b { __device__ float same(float v) { return v; }\n'
    'extern "C" __global__ void ramp(float* y) { __syncthreads(); y[threadIdx.x] = same(threadIdx.x); } } }',
    'namespace a::b { extern "C" { __global__ void ramp(float* y) { y[threadIdx.x] = threadIdx.x; } } }',
    'namespace { struct One { int v; }; }\ninline namespace v1 {\n'
    'extern "C" __global__ void ramp(float* y) { One one{1}; y[threadIdx.x] = threadIdx.x * one.v; } }',
    'namespace course { extern "C" __global__ void ramp(float* y); }\n'
    'extern "C" __global__ void course::ramp(float* y) { y[threadIdx.x] = threadIdx.x; }',
])
def test_an_extern_c_kernel_in_a_namespace_is_found_by_its_c_name(source):
    """extern "C" gives the kernel its plain name on a GPU, wherever it is declared."""
    for sanitize in (False, True):
        y = np.zeros(8, np.float32)
        cuda.RawKernel(source, "ramp", backend="cpu", sanitize=sanitize)((1,), (8,), (y,))
        assert y.tolist() == list(range(8))


def test_captured_fd1_brings_c_output_to_sys_stdout(capsys):
    """What the cupy backend uses for device printf, which writes to file descriptor 1."""
    from course.cuda.kernel import captured_fd1

    with captured_fd1():
        os.write(1, b"written to fd 1\n")
    assert capsys.readouterr().out == "written to fd 1\n"


def test_kernel_cache_is_private(tmp_path, monkeypatch):
    """Compiled kernels are loaded and run: never from a folder other users can write to."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)  # a folder anyone could plant a library in
    monkeypatch.setenv("COURSE_CUDA_CACHE", str(shared))
    monkeypatch.setattr(cpu, "_fallback_cache", None)
    chosen = cpu.cache_dir()
    assert chosen != shared and cpu._is_private(chosen)
    assert (chosen.stat().st_mode & 0o777) == 0o700 and chosen.stat().st_uid == os.getuid()
    assert cpu.cache_dir() == chosen  # the same private folder for the rest of the process
    good = tmp_path / "mine"
    monkeypatch.setenv("COURSE_CUDA_CACHE", str(good))
    assert cpu.cache_dir() == good and cpu._is_private(good)
    link = tmp_path / "link"
    link.symlink_to(good)
    monkeypatch.setenv("COURSE_CUDA_CACHE", str(link))
    assert cpu.cache_dir() != link  # a symlink could be swapped for another folder


def test_a_relative_cache_folder_is_made_absolute(tmp_path, monkeypatch):
    """COURSE_CUDA_CACHE=kernels (or a relative XDG_CACHE_HOME) broke every compile ("runtime.h: No such file"):
    the compiler runs in another folder, so the cache is the absolute folder the name meant when it was read."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COURSE_CUDA_CACHE", "kernels")
    assert cpu.cache_dir() == tmp_path / "kernels"
    # (a source no other test compiles: one compiled earlier in the process is not compiled again)
    k = cuda.RawKernel(ADD.replace("1.0f", "13.0f"), "add_one", backend="cpu")
    x = np.zeros(4, np.float32)
    k((1,), (4,), (x, 4))
    assert x.tolist() == [13.0] * 4 and any((tmp_path / "kernels").glob("*.so"))
    monkeypatch.delenv("COURSE_CUDA_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", "xdg")
    assert cpu.cache_dir() == tmp_path / "xdg" / "torch-cuda-course" / "kernels"


def test_a_whole_cu_file_with_host_code_says_what_python_does_instead():
    """A learner pastes NVIDIA's vectorAdd.cu whole: its main(), cudaMalloc and <<<>>> launch are
    host code that neither NVRTC nor the CPU backend compiles; the error lists them with their
    lines and says how Python does that part. Device code's own names are no host code."""
    sample = r"""
#include <stdio.h>
#include <cuda_runtime.h>
extern "C" __global__ void vectorAdd(const float* A, const float* B, float* C, int numElements) {
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i < numElements) C[i] = A[i] + B[i];
}
int main(void) {
    float* d_A = NULL;
    cudaError_t err = cudaMalloc((void**)&d_A, 4000);
    vectorAdd<<<4, 256>>>(d_A, d_A, d_A, 1000);
    err = cudaGetLastError();
    cudaFree(d_A);
    return 0;
}
"""
    for make in (lambda: cuda.RawKernel(sample, "vectorAdd", backend="cpu"), lambda: cuda.RawModule(code=sample)):
        with pytest.raises(cuda.CompileError, match=r"host code.*int main\(\) at line 8, cudaMalloc at line 10, a "
                                                    r"<<<grid, block>>> launch at line 11, cudaGetLastError at line 12"
                                                    r".*kernel\(\(blocks,\), \(threads,\), \(args\.\.\.\)\)"):
            make()
    device_only = sample[:sample.index("int main")] + "// cudaMalloc(...) and kernel<<<4, 256>>>(...) in Python\n"
    a = np.ones(1000, np.float32)
    c = np.zeros_like(a)
    cuda.RawKernel(device_only, "vectorAdd", backend="cpu")((4,), (256,), (a, a, c, np.int32(1000)))
    np.testing.assert_array_equal(c, 2.0)


HOST_ONLY = [  # (source, what the message names): device code using host code, which nvcc refuses
    ("float sq(float v) { return v * v; }\n"
     "extern \"C\" __global__ void k(float* x) { x[threadIdx.x] = sq(x[threadIdx.x]); }",
     r"line 2: the __global__ function k uses the function sq \(line 1\), which is declared without __device__: "
     r"declare it __device__"),
    ("template <typename T> T sq(T v) { return v * v; }\n"
     "__device__ float twice(float v) { return 2 * sq<float>(v); }\n"
     "extern \"C\" __global__ void k(float* x) { x[threadIdx.x] = twice(x[threadIdx.x]); }",
     r"line 2: the __device__ function twice uses the function sq \(line 1\)"),
    ("namespace util { inline float sq(float v) { return v * v; } }\n"
     "extern \"C\" __global__ void k(float* x) { x[threadIdx.x] = util::sq(x[threadIdx.x]); }",
     r"uses the function sq \(line 1\)"),
    ("struct P { float v; float twice() const { return 2 * v; } };\n"
     "extern \"C\" __global__ void k(float* x) { P p{x[threadIdx.x]}; x[threadIdx.x] = p.twice(); }",
     r"uses the member function twice \(line 1\).*declare it __device__ twice\(\.\.\.\)"),
    ("struct V { float a, b; V(float x, float y) : a(x), b(y) {} };\n"
     "extern \"C\" __global__ void k(float* x) { V v(1, 2); x[threadIdx.x] = v.a + v.b; }",
     r"uses a constructor of V \(line 1\)"),
    ("#include <cstdlib>\nextern \"C\" __global__ void k(float* x) { x[threadIdx.x] = rand() % 10; }",
     r"line 2: .* uses rand\(\) \(a host library function\): use cuRAND"),
    ("#include <cstring>\nextern \"C\" __global__ void k(float* x) { x[threadIdx.x] = strlen(\"abc\"); }",
     r"line 2: .* uses strlen\(\) \(a host library function\): use a loop up to the '\\0'"),
    ("extern \"C\" __global__ void k(float* x) {\n  x[0] = 1;\n  if (cudaGetLastError() != 0) x[0] = 0; }",
     r"line 3: .* uses cudaGetLastError\(\) \(a host library function\): use a check on the host after the launch"),
    ("extern \"C\" __global__ void k(float* x) { float* t; cudaMalloc(&t, 16); t[0] = 1; x[0] = t[0]; }",
     r"line 1: .* uses cudaMalloc\(\) \(a host library function\): use an array allocated on the host .* or malloc"),
    ("#include <vector>\nextern \"C\" __global__ void k(float* x) { std::vector<float> v(3); x[0] = v[0]; }",
     r"uses std::vector"),
    ("#include <algorithm>\nextern \"C\" __global__ void k(float* x) { x[threadIdx.x] = std::min(x[threadIdx.x], 1.0f); }",
     r"line 2: .* uses std::min \(constexpr host code .*--expt-relaxed-constexpr\): use min\(a, b\)"),
    ("#include <limits>\nextern \"C\" __global__ void k(float* x) { x[0] = std::numeric_limits<float>::max(); }",
     r"uses std::numeric_limits .*use FLT_MAX, INT_MAX"),
    ("extern \"C\" __global__ void k(float* x) { float a = x[0], b = x[1]; std::swap(a, b); x[0] = a; }",
     r"uses std::swap \(host code from the C\+\+ library\): use a swap by hand"),
    ("float table[4] = {1, 2, 3, 4};\n"
     "extern \"C\" __global__ void k(float* x) { x[threadIdx.x] = table[threadIdx.x % 4]; }",
     r"uses the variable table \(line 1\), which lives in host memory.*declare it __constant__"),
    ("const float w[3] = {0.25f, 0.5f, 0.25f};\n"
     "extern \"C\" __global__ void k(float* x) { x[threadIdx.x] = w[threadIdx.x % 3]; }",
     r"uses the variable w \(line 1\)"),
    ("extern \"C\" __global__ void k(float* x) {\n  __shared__ float s[4] = {0};\n  x[threadIdx.x] = s[0]; }",
     r"line 2: the __shared__ variable s has an initializer.*for \(int j = threadIdx\.x; j < SIZE; j \+= "
     r"blockDim\.x\) s\[j\] = \.\.\.;"),
    ("extern \"C\" __global__ void k(float* x) {\n  __shared__ int count{0};\n  x[threadIdx.x] = count; }",
     r"line 2: the __shared__ variable count has an initializer.*if \(threadIdx\.x == 0\) count = "),
    ("extern \"C\" __global__ void k(float* x) {\n  extern __shared__ float total;\n  total = 1; x[0] = total; }",
     r"line 2: extern __shared__ total is not an array of unknown size.*`extern __shared__ float total\[\];` and use "
     r"total\[0\], or .* `__shared__ float total;`"),
    ("extern \"C\" __global__ void k(float* x) {\n  extern volatile __shared__ int* p;\n  x[0] = p[0]; }",
     r"line 2: extern __shared__ p is not an array of unknown size.*`extern __shared__ int p\[\];`"),
    ("extern \"C\" __global__ void k(float* x) {\n  __syncwarp(0xffffffff, 32);\n  x[0] = 1; }",
     r"line 2: __syncwarp\(\) is called with 2 arguments, but it takes at most 1 \(nvcc: too many arguments.*write "
     r"__syncwarp\(\) or __syncwarp\(mask\)"),
    ("extern \"C\" __global__ void k(float* x) {\n  x[0] = __activemask(0xffffffff); }",
     r"line 2: __activemask\(\) is called with 1 argument, but it takes none"),
    ("extern \"C\" __global__ void k(float* x) {\n  float v = x[threadIdx.x];\n"
     "  x[threadIdx.x] = __shfl_down_sync(0xffffffff, v, 1, min(32, 16), 0); }",
     r"line 3: __shfl_down_sync\(\) is called with 5 arguments, but it takes at most 4"),
    ("__device__ float root2 = sqrtf(2.0f);\nextern \"C\" __global__ void k(float* x) { x[threadIdx.x] = root2; }",
     r"line 1: the __device__ variable root2 is initialized by calling sqrtf\(\).*get_global\('root2'\)"),
    ("__global__ void fill(float* x) { x[threadIdx.x] = 1; }\n"
     "extern \"C\" __global__ void k(float* x) { fill(x); }",
     r"uses the __global__ function fill as a function: a kernel is launched from the host"),
    # (red team 12-07: these ended the Python process running the kernel)
    *[(f"#include <cstdlib>\nextern \"C\" __global__ void k(float* x) {{ if (x[0] == 7) {call}; x[1] = 1; }}",
       rf"line 2: the __global__ function k uses {re.escape(shown)}\(\) \(a host library function\)")
      for call, shown in (("std::exit(6)", "std::exit"), ("::exit(5)", "::exit"), ("quick_exit(2)", "quick_exit"),
                          ("_Exit(4)", "_Exit"), ("__builtin_abort()", "__builtin_abort"), ("std::abort()", "std::abort"),
                          ("raise(15)", "raise"), ("kill(0, 9)", "kill"))],
]

DEVICE_ONLY = r"""
#include <cooperative_groups.h>
#define HD __host__ __device__
#define DEFINE_OP(name, op) __device__ float name(float a, float b) { return a op b; }
namespace cg = cooperative_groups;
const float PI = 3.14159f;                            // const scalars may be used in device code
static const int BLOCK = 8;
constexpr int div_up(int a, int b) { return (a + b - 1) / b; }
__device__ float zero = 0.0f;                         // constant initializers, also through a constexpr call
__constant__ int offsets[3] = {0, div_up(2, 2) - 1, static_cast<int>(0.5f)};
int y = 3;                                            // host variables and functions that device code
float scale(float v) { return v; }                    // does not use (or hides) are no error
struct V { float a, b; V(float x, float y) : a(x), b(y) {} __device__ float sum() const { return a + b; } };
struct W { float a, b; __device__ W(float x, float y) : a(x), b(y) {} };
HD inline float sq(float v) { return v * v; }
__host__ __device__ float either(float v) {
#ifdef __CUDA_ARCH__
    return v;
#else
    return scale(v);
#endif
}
DEFINE_OP(add, +)
namespace util { __device__ float cube(float v) { return v * v * v; } }
template <class F> __device__ float apply(F scale, float v) { return scale(v); }
struct Twice { __device__ float operator()(float v) const { return 2 * v; } };
extern "C" __global__ void k(const V* vs, float* x) {
    cg::thread_block block = cg::this_thread_block();
    __shared__ float s[div_up(BLOCK, 4)];
    float a = 1, y = 2;
    V v = vs[threadIdx.x];
    W w(3, 4);
    auto scale = [](float t) { return t + 1; };
    if (threadIdx.x < div_up(BLOCK, 4)) s[threadIdx.x] = PI;
    block.sync();
    x[threadIdx.x] = add(sq(a), y) + v.sum() + w.a + either(1) + util::cube(1) + apply(Twice{}, 1) + scale(0) + s[0] * 0
                     + zero + offsets[threadIdx.x % 3];
}
"""


@pytest.mark.parametrize("code, message", HOST_ONLY)
def test_device_code_that_uses_host_code_is_refused_as_nvcc_refuses_it(code, message):
    """g++ would compile a function without __device__ called from a kernel (or rand(), a host
    variable, a kernel called as a function): it would run here and then not compile on a GPU."""
    with pytest.raises(cuda.CompileError, match=r"code that nvcc and CuPy's NVRTC refuse") \
            as info:
        cuda.RawModule(code=code, backend="cpu").get_function("k")((1,), (4,), (np.zeros(4, np.float32),))
    assert re.search(message, str(info.value)), str(info.value)
    # NVRTC's -default-device makes such functions __device__: then it compiles (the calls do; a
    # host-only library call would still fail on a GPU, but that option is the learner's choice)
    if re.search(r"__shared__|sqrtf", code):  # not host code: refused with that option too
        with pytest.raises(cuda.CompileError, match=message):
            cuda.RawModule(code=code, backend="cpu", options=("-default-device",)).get_function("k")((1,), (4,), (
                np.zeros(4, np.float32),))
    elif code is HOST_ONLY[0][0]:  # (one compile is enough to show it)
        cuda.RawModule(code=code, backend="cpu", options=("-default-device",)).get_function("k")((1,), (4,), (
            np.zeros(4, np.float32),))


@pytest.mark.parametrize("code", [
    'extern "C" __global__ void k(float* x, int n) { float buf[n]; buf[0] = 1; x[threadIdx.x] = buf[0]; }',
    'extern "C" __global__ void k(float* x, int n) { float t[n]; for (int i = 0; i < n; i++) t[i] = i; x[0] = t[1]; }',
])
def test_an_array_sized_at_run_time_says_that_sizes_are_constants(code):
    with pytest.raises(cuda.CompileError, match=r"An array's size must be a constant the compiler knows.*"
                                                r"extern __shared__ float s\[\];` with shared_mem=bytes"):
        cuda.RawKernel(code, "k", backend="cpu")((1,), (4,), (np.zeros(4, np.float32), np.int32(4)))


@pytest.mark.parametrize("statement, hint", [
    ("o[0] = a + a;", "`__device__ float4 operator+(float4 a, float4 b) { return make_float4(a.x + b.x, a.y + b.y, "
                      "a.z + b.z, a.w + b.w); }`"),
    ("o[0] = a * 2.0f;", "`__device__ float4 operator*(float4 a, float s) { return make_float4(a.x * s, a.y * s, "
                         "a.z * s, a.w * s); }`"),
    ("o[0] = -a;", "make_float4(-a.x, -a.y, -a.z, -a.w)"),
    ("a += a; o[0] = a;", "`__device__ float4& operator+=(float4& a, float4 b) { a = make_float4(a.x + b.x, "),
    ("int2 q = make_int2(1, 2); q = q - q; o[0].x = q.x;", "operator- on an int2 is an error for nvcc too"),
    ("o[0].x = a == a;", "Compare the components: a.x == b.x && a.y == b.y && a.z == b.z && a.w == b.w."),
])
def test_arithmetic_on_vector_types_says_that_cuda_has_none_and_what_to_write(statement, hint):
    """`a + b` of float4s compiles only with the cuda-samples' helper_math.h: nvcc refuses it as g++ does,
    and the message says so, with the component-wise code (or the operator to define) for that expression."""
    code = 'extern "C" __global__ void k(float4* o) { float4 a = make_float4(1, 2, 3, 4); ' + statement + " }"
    with pytest.raises(cuda.CompileError) as info:
        cuda.RawKernel(code, "k", backend="cpu")((1,), (1,), (np.zeros((1, 4), np.float32),))
    assert "on its vector types" in str(info.value) and hint in str(info.value)


def test_host_code_that_device_code_does_not_use_is_refused_as_nvrtc_refuses_it():
    """nvcc compiles host code beside the kernels for the host, but NVRTC, CuPy's compiler, refuses every
    function without an execution space and every non-const variable without a memory space in the source, used
    or not (checked with NVRTC 13: lines 8, 11, 12 and 13 here); -default-device makes them device code, as
    NVRTC's own option does."""
    vs = np.zeros(8, np.dtype([("a", np.float32), ("b", np.float32)]))
    vs["a"], vs["b"] = 1, 2
    with pytest.raises(cuda.CompileError) as info:
        cuda.RawModule(code=DEVICE_ONLY, backend="cpu").get_function("k")((1,), (8,), (vs, np.zeros(8, np.float32)))
    for line, name in [(8, "the constexpr function div_up"), (11, "the variable y"), (12, "the function scale"),
                       (13, "a constructor of V")]:
        assert f"line {line}: {name}, declared without __device__" in str(info.value), str(info.value)
    assert "-default-device" in str(info.value) and "PI" not in str(info.value) and "BLOCK" not in str(info.value)
    x = np.zeros(8, np.float32)
    cuda.RawModule(code=DEVICE_ONLY, backend="cpu", options=("-default-device",)).get_function("k")((1,), (8,), (vs, x))
    assert (x == 1 + 2 + 3 + 3 + 1 + 1 + 2 + 1).all(), x


def test_the_kernel_cache_is_pruned_least_recently_used_first(tmp_path):
    """The on-disk cache does not grow without end: past its limit a compile removes the modules
    used longest ago (with their .warnings), never one used in the last hour or loaded here."""
    now = time.time()
    modules = {}
    for k, days in enumerate([30, 20, 10, 5, 0]):
        path = tmp_path / f"{k:040x}.so"
        path.write_bytes(b"\0" * 1000)
        path.with_suffix(".warnings").write_text("kernel.cu:1:1: note", encoding="utf-8")
        os.utime(path, (now - days * 86400, now - days * 86400))
        modules[k] = path
    (tmp_path / "pch-0123").mkdir()  # other entries are not the pruner's
    cpu._prune_cache(tmp_path, keep=modules[0], limit=10_000)  # 5,000 bytes: under the limit, nothing goes
    assert all(p.exists() for p in modules.values())
    cpu._prune_cache(tmp_path, keep=modules[0], limit=4_000)  # down to 3,200 bytes: three modules stay
    assert [k for k, p in modules.items() if p.exists()] == [0, 3, 4]  # 0: just used; 1, 2: the oldest others
    assert not modules[1].with_suffix(".warnings").exists() and modules[3].with_suffix(".warnings").exists()
    assert (tmp_path / "pch-0123").is_dir()
    cpu._prune_cache(tmp_path, keep=modules[3], limit=1_000)  # the last hour's module stays, whatever the limit
    assert [k for k, p in modules.items() if p.exists()] == [3, 4]


def test_a_module_loaded_from_the_cache_counts_as_used(tmp_path, monkeypatch, private_kernel_cache):
    cuda.RawKernel(ADD, "add_one", backend="cpu", sanitize=False).compile()
    (module,) = tmp_path.glob("*.so")
    os.utime(module, (1, 1))
    monkeypatch.setattr(cpu, "_modules", {})
    cuda.RawKernel(ADD, "add_one", backend="cpu", sanitize=False).compile()
    assert module.stat().st_mtime > time.time() - 600


def test_modules_not_launched_lately_give_their_memory_back(monkeypatch):
    """Each edit of a kernel is a new module; only the last few keep fiber stacks and buffers."""
    monkeypatch.setattr(cpu, "WARM_MODULES", 2)
    monkeypatch.setattr(cpu, "_warm", {})
    source = r"""
extern "C" __global__ void tile_sum(const float* x, float* out) {
    __shared__ float s[64];
    s[threadIdx.x] = x[threadIdx.x] * SCALE;
    __syncthreads();
    if (threadIdx.x == 0) { float t = 0; for (int i = 0; i < 64; ++i) t += s[i]; out[blockIdx.x] = t; }
}
"""
    x = np.ones(64, np.float32)
    kernels = [cuda.RawKernel(source, "tile_sum", backend="cpu", options=(f"-DSCALE={k}",)) for k in (1, 2, 3)]
    released = []
    monkeypatch.setattr(cpu.Module, "release_memory",
                        lambda self, original=cpu.Module.release_memory: (released.append(self), original(self)))
    for round_ in range(2):
        for k, kernel in enumerate(kernels, 1):
            out = np.zeros(1, np.float32)
            kernel((1,), (64,), (x, out), shared_mem=128 * round_)  # after a release, stacks come back
            assert out[0] == 64 * k
    assert len(released) == 4 and len({id(m) for m in released}) == 3  # each went cold and came back


def test_std_min_is_device_code_with_relaxed_constexpr():
    """nvcc and NVRTC take std::min and std::numeric_limits in kernels with --expt-relaxed-constexpr:
    so does the CPU backend, and cuda::std:: always."""
    src = ("#include <algorithm>\n#include <limits>\n#include <cuda/std/utility>\n"
           "extern \"C\" __global__ void k(float* x) {\n"
           "    float a = x[threadIdx.x], b = 0.5f; cuda::std::swap(a, b);\n"
           "    x[threadIdx.x] = std::min(a, b) + 0 * std::numeric_limits<float>::max(); }")
    x = np.ones(4, np.float32)
    cuda.RawKernel(src, "k", backend="cpu", options=("--expt-relaxed-constexpr",))((1,), (4,), (x,))
    np.testing.assert_array_equal(x, 0.5)


OPTIONAL_BIAS = r'''
extern "C" __global__ void affine(const float* x, const float* bias, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 2.0f * x[i] + (bias != nullptr ? bias[i] : 0.0f);
}
extern "C" __global__ void always(const float* x, const float* bias, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 2.0f * x[i] + bias[i];
}
'''


@pytest.mark.parametrize("sanitize", [True, False])
def test_none_for_a_pointer_is_a_null_pointer_as_in_cupy(sanitize):
    """CuPy passes None as a null pointer (an optional array the kernel tests); it was a TypeError here. A kernel
    that reads through it anyway is told which argument was None."""
    module = cuda.RawModule(code=OPTIONAL_BIAS, backend="cpu", sanitize=sanitize)
    x, bias, out = np.arange(8, dtype=np.float32), np.ones(8, np.float32), np.zeros(8, np.float32)
    module.get_function("affine")((1,), (8,), (x, None, out, np.int32(8)))
    np.testing.assert_array_equal(out, 2 * x)
    module.get_function("affine")((1,), (8,), (x, bias, out, np.int32(8)))
    np.testing.assert_array_equal(out, 2 * x + 1)
    with pytest.raises(cuda.KernelError, match=r"(?s)null pointer.*line 8.*This launch passed None \(a null pointer\) "
                                               r"for `bias`: pass an array, or let the kernel test it first"):
        module.get_function("always")((1,), (8,), (x, None, out, np.int32(8)))


@pytest.mark.parametrize("read", ["bias[i]", "(bias + 2)[i]", "((const float2*)bias)[i].x", "__ldg(bias + i)",
                                  "bias[i - 100000]"])
def test_a_read_through_a_none_pointer_is_a_null_pointer_access_beside_unlaunched_dynamic_shared_memory(read):
    """None is kept as an array of no elements at address 0 (so that every argument pointer's index is 0, which
    keeps a bounds check one comparison): a read through it, made any way, is the null access a GPU makes;
    dynamic shared memory that the launch gave no bytes is still its own message."""
    source = f"""
extern "C" __global__ void k(const float* x, const float* bias, float* out, int n, int use_shared) {{
    extern __shared__ float spare[];
    int i = threadIdx.x;
    if (use_shared) spare[i] = 0.0f;
    if (i < n) out[i] = x[i] + {read};
}}"""
    kernel = cuda.RawKernel(source, "k", backend="cpu", sanitize=False)
    x, out = np.ones(8, np.float32), np.zeros(8, np.float32)
    with pytest.raises(cuda.KernelError, match=r"(?s)null pointer.*This launch passed None \(a null pointer\) for `bias`"):
        kernel((1,), (8,), (x, None, out, np.int32(8), np.int32(0)))
    with pytest.raises(cuda.KernelError, match=r"accessed spare\[0\] in dynamic shared memory, which holds 0 elements"):
        kernel((1,), (8,), (x, None, out, np.int32(8), np.int32(1)))


def test_an_address_for_a_pointer_says_to_pass_the_array_itself():
    kernel = cuda.RawModule(code=OPTIONAL_BIAS, backend="cpu").get_function("affine")
    x = np.arange(8, dtype=np.float32)
    with pytest.raises(TypeError, match=r"parameter 'x' \(const float\* x\): a pointer needs a NumPy array of float32, "
                                        r"got int; an address \(x.data_ptr\(\), a.ctypes.data\) says nothing of the "
                                        r"array's size"):
        kernel((1,), (8,), (x.ctypes.data, None, np.zeros(8, np.float32), np.int32(8)))


def test_a_profile_of_a_launch_with_a_null_pointer():
    kernel = cuda.RawModule(code=OPTIONAL_BIAS, backend="cpu").get_function("affine")
    x, out = np.arange(32, dtype=np.float32), np.zeros(32, np.float32)
    report = kernel.profile((1,), (32,), (x, None, out, np.int32(32)))
    assert report.arguments == ("x", "bias", "out", "n")


def test_cupys_own_keyword_arguments_are_taken_and_passed_to_cupy(monkeypatch):
    """cupy.RawKernel(..., enable_cooperative_groups=True) (a grid-wide sync), jitify=True, translate_cucomplex:
    course.cuda's RawKernel takes them as CuPy does and hands them to cupy.RawKernel on a GPU (jitify's source
    unchanged, as RawModule does); on the CPU they change nothing. compile(log_stream=...) too. A misspelt one, or CuPy's backend='nvcc' (a
    compiler there, where the kernel runs here), gets a clear error."""
    import types

    from course.cuda import kernel as kernel_module

    x = np.zeros(4, np.float32)
    cuda.RawKernel(ADD, "add_one", backend="cpu", enable_cooperative_groups=True)(1, 4, (x, 4))
    assert (x == 1).all()
    made = []
    fake = types.ModuleType("cupy")
    fake.RawKernel = lambda code, name, options=(), **more: made.append((code, name, options, more)) or object()
    monkeypatch.setitem(sys.modules, "cupy", fake)
    kernel_module._CupyKernel(ADD, "add_one", ("-DX=1",), cupy_only={"enable_cooperative_groups": True})
    kernel_module._CupyKernel(ADD, "add_one", (), cupy_only={"jitify": True})
    assert made[0][1:] == ("add_one", ("-DX=1",), {"enable_cooperative_groups": True})
    assert made[1][0] == ADD and made[1][3] == {"jitify": True}
    logged = []

    class Compiled:  # (cupy.RawKernel.compile(log_stream=...): NVRTC's log goes there)
        def compile(self, **options):
            logged.append(options)

    fake.RawKernel = lambda *args, **more: Compiled()
    kernel_module._CupyKernel(ADD, "add_one", (), log_stream=sys.stdout)
    kernel_module._CupyKernel(ADD, "add_one", ())
    assert logged == [{"log_stream": sys.stdout}, {"log_stream": None}]
    assert cuda.RawKernel(ADD, "add_one", backend="cpu").compile(log_stream=sys.stdout).name == "add_one"
    assert cuda.RawModule(code=ADD, backend="cpu").compile(log_stream=sys.stdout).get_function("add_one")
    with pytest.raises(TypeError, match=r"RawKernel\(\) got an unexpected keyword argument 'enable_cooperative_group'"
                                        r".*takes CuPy's translate_cucomplex, enable_cooperative_groups, jitify"):
        cuda.RawKernel(ADD, "add_one", backend="cpu", enable_cooperative_group=True)
    with pytest.raises(TypeError, match=r"RawModule\(\) got an unexpected keyword argument 'jitfy': besides code, "
                                        r"path, options, name_expressions"):
        cuda.RawModule(code=ADD, backend="cpu", jitfy=True)
    with pytest.raises(ValueError, match=r"backend='nvcc' is CuPy's choice of compiler; course.cuda's backend says "
                                         r"where the kernel runs"):
        cuda.RawKernel(ADD, "add_one", backend="nvcc")


def test_cupys_kernel_attributes_come_from_the_gpu_binary_and_the_cpu_says_where_they_are():
    """kernel.num_regs, .max_threads_per_block, .shared_size_bytes, ... (cupy.RawKernel's attributes): read from
    CuPy's compiled kernel on a GPU; on the CPU an AttributeError that says they are the GPU binary's figures."""
    import types

    source = 'extern "C" __global__ void __launch_bounds__(256) k(float* x) { x[threadIdx.x] = 1.0f; }'
    k = cuda.RawKernel(source, "k", backend="cpu")
    with pytest.raises(AttributeError, match=r"kernel 'k': num_regs is a fact of the GPU binary .* read it on a GPU "
                                             r".* __launch_bounds__ allows at most 256 threads a block"):
        k.num_regs
    assert not hasattr(k, "shared_size_bytes") and k.max_dynamic_shared_size_bytes == 48 * 1024
    with pytest.raises(AttributeError, match=r"^'RawKernel' object has no attribute 'num_reg'$"):
        k.num_reg
    gpu = cuda.RawKernel.__new__(cuda.RawKernel)  # (as on a GPU: the attributes are CuPy's kernel's)
    gpu.backend, gpu._compiled = "cupy", types.SimpleNamespace(
        kernel=types.SimpleNamespace(num_regs=18, max_threads_per_block=1024, shared_size_bytes=256))
    assert (gpu.num_regs, gpu.max_threads_per_block, gpu.shared_size_bytes) == (18, 1024, 256)
