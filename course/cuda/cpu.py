"""The CPU backend: CUDA C compiled with the system C++ compiler; the blocks of a launch run on
all cores at once (``COURSE_CUDA_THREADS``), the threads of each block in turn (notebook 01).

``load`` compiles a kernel source once (cached in memory and on disk, like CuPy's kernel
cache) into a shared library: the learner's source, lightly rewritten (see source.py), after
``runtime.h`` (the CUDA built-ins), followed by one small launcher per kernel, linked with
the runtime's own code, compiled once per build kind (``_prebuilt_runtime``). ``launch``
calls a launcher through ctypes; when the kernel faults, the launcher returns a fault record
that ``launch`` turns into a KernelError naming the kernel, block, thread and source line.
"""

from __future__ import annotations

import ast
import ctypes
import difflib
import functools
import hashlib
import math
import os
import platform
import re
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path

import numpy as np

from . import fast
from .errors import CompileError, KernelError, KernelWarning
from .source import (_GRID_SYNC, _TYPE_WORDS, _WARP_SIGNATURES, VECTOR_TYPES, Kernel, Source, _call_arguments,
                     _constant, _split_commas, tokenize, without_comments)

RUNTIME_HEADER = Path(__file__).with_name("runtime.h")
MAX_SHARED_BYTES = 48 * 1024  # shared memory a block may use without an opt-in (runtime.h's __CC_MAX_SHARED)
MAX_SHARED_OPTIN = 163 * 1024  # and with one (max_dynamic_shared_size_bytes), on an A100 (sm_80)
SOURCE_NAME = "kernel.cu"  # what compiler messages call the learner's source
_LAYOUT_VERSION = "8"  # change when generated code changes, so old cache entries are not used

FLAGS = [
    "-std=c++17", "-O3",
    "-g1",  # line tables only: addr2line maps a faulting address back to a source line
    "-fno-crossjumping", "-fno-tree-tail-merge",  # keep one fault call per access, so its
                                                  # address names the right line
    "-fPIC", "-shared", "-fvisibility=hidden",
    "-fsigned-char",  # char is signed on the GPU (x86 hosts) and here, even on ARM
    "-fno-finite-loops",  # an endless loop stays one (and meets the time limit), not "assumed to end"
    "-fno-exceptions", "-fno-rtti",
    "-U_FORTIFY_SOURCE",  # its longjmp check rejects jumping back from a fiber's stack
    # No -w (it would silence everything): warnings are not shown, they would mention the emulator,
    # except the one nvcc gives too and learners need most, a variable read before it has a value
    # (_platform_flags asks GCC for it, _uninitialized_warnings shows it).
]
LIBRARIES = ["-ldl", "-lpthread", "-lm"] if sys.platform.startswith("linux") else []

NO_COMPILER = (
    "No C++ compiler found: without a GPU, course.cuda compiles CUDA C for the CPU with g++ or "
    "clang++. Install one and restart the notebook:\n"
    "  Debian/Ubuntu/WSL: sudo apt install g++\n"
    "  Fedora: sudo dnf install gcc-c++\n"
    "  macOS: xcode-select --install\n"
    "  conda: conda install -c conda-forge cxx-compiler\n"
    "(or set CXX to the compiler's path, or run on a GPU: Colab > Runtime > Change runtime type)."
)


#: Twin of struct __cc_trace_record in runtime.h (24 bytes).
TRACE_RECORD = np.dtype([("address", np.uint64), ("site", np.uint32), ("block", np.uint32), ("thread", np.uint16),
                         ("kind", np.uint8), ("size", np.uint8), ("region", np.int16), ("pad", np.int16)])


class _Fault(ctypes.Structure):
    """Twin of struct __cc_fault in runtime.h."""

    _fields_ = [
        ("kind", ctypes.c_int32),
        ("line", ctypes.c_int32),
        ("other_line", ctypes.c_int32),
        ("signal", ctypes.c_int32),
        ("block", ctypes.c_uint32 * 3),
        ("thread", ctypes.c_uint32 * 3),
        ("other_thread", ctypes.c_uint32 * 3),
        ("count", ctypes.c_int32),
        ("index", ctypes.c_int64),
        ("length", ctypes.c_int64),
        ("base", ctypes.c_uint64),
        ("address", ctypes.c_uint64),
        ("code_offset", ctypes.c_uint64),
        ("element_bytes", ctypes.c_int64),
        ("other_block", ctypes.c_uint32 * 3),
        ("mask", ctypes.c_uint32),
        ("op", ctypes.c_int32),
        ("other_op", ctypes.c_int32),
        ("text", ctypes.c_char * 200),
        ("exited_count", ctypes.c_int32),
        ("exited_line", ctypes.c_int32),
        ("exited_barrier", ctypes.c_int32),
        ("exited_thread", ctypes.c_uint32 * 3),
        ("callers", ctypes.c_uint64 * 6),
    ]


class _Arg(ctypes.Structure):
    """Twin of struct __cc_arg: an array (data, element count) or a scalar's bytes."""

    _fields_ = [("data", ctypes.c_void_p), ("count", ctypes.c_int64), ("bits", ctypes.c_uint64)]


(OK, OUT_OF_BOUNDS, SHARED_OUT_OF_BOUNDS, BARRIER_EXITED, BARRIER_MISMATCH, TIMEOUT, INTERRUPTED,
 CRASH, STACK_OVERFLOW, ASSERT, TRAP, NO_MEMORY, NO_BARRIERS, BAD_ARGUMENT, UNSUPPORTED, WARP_EXITED,
 WARP_MISMATCH, WARP_BAD_MASK, READ_ONLY, ARRAY_OUT_OF_BOUNDS, RACE, UNINITIALIZED, GLOBAL_RACE, MISALIGNED,
 SHARED_TOO_BIG, BAD_WIDTH, LOCAL_TOO_BIG, BAD_FREE, USE_AFTER_FREE, UNINITIALIZED_LOCAL, RNG_NOT_SET_UP,
 BAD_SHIFT, BAD_CONVERSION, BAD_PRINTF, BARRIER_DIVERGENT, OTHER_LOCAL, LDG_WRITTEN, STORED_FILL,
 LOCAL_ATOMIC, READ_FILL, UNREACHABLE, MISSING_RETURN) = range(42)
#: (Python's own kind) a result computed from bytes of a whole struct or vector element of shared memory that
#: no thread wrote (runtime.h __cc_note_partial, confirmed by a run with another fill: _depends_on_undefined).
PARTIAL_READ = 100

#: Warp-level calls by their code in runtime.h (enum __CC_W_*), as messages name them.
WARP_OPS = dict(enumerate(
    ["", "__syncwarp (or a tile's sync)", "__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync",
     "__ballot_sync", "__any_sync", "__all_sync", "__uni_sync", "__activemask", "__match_any_sync",
     "__match_all_sync", "__reduce_add_sync", "__reduce_min_sync", "__reduce_min_sync", "__reduce_max_sync",
     "__reduce_max_sync", "__reduce_and_sync", "__reduce_or_sync", "__reduce_xor_sync"]))


# ----------------------------------------------------------------------------------------
# Compiling and caching
# ----------------------------------------------------------------------------------------


def find_compiler() -> str:
    """Path of the C++ compiler: $CXX, else g++, c++ or clang++ on PATH."""
    if sys.platform == "win32":
        raise CompileError(
            "The CPU backend runs on Linux and macOS (it relies on POSIX signals to catch a "
            "kernel's faults). On Windows, use WSL (Ubuntu) or Google Colab."
        )
    wanted = os.environ.get("CXX", "").strip()
    for name in [wanted] if wanted else ["g++", "c++", "clang++"]:
        path = shutil.which(name)
        if path:
            return path
    raise CompileError(NO_COMPILER + (f"\n(CXX={wanted!r} was not found.)" if wanted else ""))


def _is_private(path: Path) -> bool:
    """A real folder (no symlink) that this user owns and nobody else can write to."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o022


_fallback_cache: Path | None = None


def cache_dir() -> Path:
    """Where compiled kernels are kept: $COURSE_CUDA_CACHE, else $XDG_CACHE_HOME/torch-cuda-course/kernels.

    The libraries found there are loaded and run, so the folder must belong to this user and be
    writable by nobody else; otherwise (a read-only home, a planted folder) a fresh private
    temporary folder (mode 0700) is used for this process.
    """
    global _fallback_cache
    explicit = os.environ.get("COURSE_CUDA_CACHE")
    if explicit:
        path = Path(explicit).expanduser()
    else:
        base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
        path = Path(base) / "torch-cuda-course" / "kernels"
    # Absolute: the compiler runs in another folder, and a later os.chdir must not move the cache.
    path = Path(os.path.abspath(path))
    try:
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
        if os.access(path, os.W_OK) and _is_private(path):
            return path
    except OSError:
        pass
    if _fallback_cache is None or not _is_private(_fallback_cache):
        # mkdtemp: an unpredictable name, created 0700 by this process (never an existing folder).
        _fallback_cache = Path(tempfile.mkdtemp(prefix="torch-cuda-course-kernels-"))
    return _fallback_cache


@functools.lru_cache(maxsize=16)
def _accepts(compiler: str, flag: str, probe: str = "int f() { return 0; }\n") -> bool:
    """Whether the compiler compiles `probe` with `flag` (and no warning about it)."""
    try:
        done = subprocess.run([compiler, "-std=c++17", "-fPIC", flag, "-Werror", "-x", "c++", "-S", "-o", os.devnull, "-"],
                              input=probe, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def _platform_flags(compiler: str) -> list[str]:
    """Flags the compiler takes on this machine:

    - -mtls-dialect=gnu2 (GCC on x86-64 Linux; arm64 uses it anyway). threadIdx and blockIdx are
      thread_local (one per worker thread); in a shared library, the default way of finding such a
      variable is a call to __tls_get_addr that the compiler repeats in every iteration of a
      kernel's thread loop (6× slower vector add); with TLS descriptors it finds it once.
    - -fstack-clash-protection: a frame larger than a page touches each of its pages, so a local
      array larger than a fiber's stack (64 KiB and room for the module's local arrays) hits its
      guard page (a clear 'ran out of stack') instead of landing in another thread's stack.
    - -Wuninitialized -Wmaybe-uninitialized (GCC): the analysis behind KernelWarning.
    - -fsanitize=shift-exponent,float-cast-overflow -fno-sanitize-recover=...: C++ leaves undefined
      a shift by a negative count or by at least the width of its type (`1u << 32`) and a float
      converted to an integer type it does not fit (`(unsigned char)300.0f`, NaN), and a GPU and a
      CPU resolve them differently: a GPU's shift clamps the count (1u << 32 is 0 there, 1 on x86)
      and its conversion saturates (255 there, 44 on x86), so the kernel would give another answer
      here than on a GPU. The compiler calls runtime.h's handlers there (UBSan's names; its
      runtime is not linked, _compile's -nodefaultlibs), which stop the kernel with the values.
      And integer-divide-by-zero: `1 / d` with d = 0, which GCC computes without a division (so
      without the CPU's trap), stops the kernel as the trap would; unreachable and return: a thread that
      reaches __builtin_unreachable(), or the end of a function that returns a value without a return
      statement, stops there (the compiler assumes neither happens, and the thread would go on anywhere).
      It costs a compare or two per shift by a variable count, per conversion and per division."""
    flags = []
    if platform.machine().lower() in ("x86_64", "amd64") and sys.platform.startswith("linux") and _accepts(
            compiler, "-mtls-dialect=gnu2", "static thread_local int t; extern \"C\" int f() { return ++t; }\n"):
        flags.append("-mtls-dialect=gnu2")
    if _accepts(compiler, "-fstack-clash-protection"):
        flags.append("-fstack-clash-protection")
    if _accepts(compiler, "-Wmaybe-uninitialized"):  # GCC's names (clang has no maybe-uninitialized)
        flags += ["-Wuninitialized", "-Wmaybe-uninitialized"]
    undefined = [_UNDEFINED, f"-fno-sanitize-recover={_UNDEFINED_CHECKS}"]
    if (sys.platform.startswith("linux") or not _is_gcc(compiler)) \
            and all(_accepts(compiler, flag) for flag in undefined):  # (GCC elsewhere: see _compile)
        flags += undefined
    return flags


@functools.lru_cache(maxsize=8)
def _linker_flags(compiler: str, tls: tuple[str, ...] = ()) -> tuple[str, ...]:
    """-fuse-ld=gold where the compiler has GNU gold and it links and loads a module's kind of library (position-
    independent, with a thread_local, `tls` its flags), else nothing (the default linker). A module is its kernel's
    code and the runtime object (some 300 KB): GNU ld took 0.05 to 0.09 s of a small module's 0.3 s compile here,
    gold 0.03 s (an exercise check waits for its compile; the test suite links some 1,500 modules). The module
    is the same code either way."""
    if not sys.platform.startswith("linux"):
        return ()
    probe = 'static thread_local int t; extern "C" __attribute__((visibility("default"))) int f() { return ++t; }\n'
    try:
        with tempfile.TemporaryDirectory(prefix="linker-") as folder:
            library = Path(folder, "probe.so")
            done = subprocess.run([compiler, "-std=c++17", "-fPIC", "-shared", "-fvisibility=hidden", *tls,
                                   "-fuse-ld=gold", "-x", "c++", "-o", str(library), "-"],
                                  input=probe, capture_output=True, text=True, timeout=60)
            if done.returncode != 0 or done.stderr.strip() or ctypes.CDLL(str(library)).f() != 1:
                return ()
    except (OSError, subprocess.SubprocessError, AttributeError):
        return ()
    return ("-fuse-ld=gold",)


def _pattern_flags(compiler: str) -> list[str]:
    """Sanitized builds: a local variable that the code reads before storing a value in it holds bytes
    0xFE (GCC 12+, clang), not whatever the stack had: `int j; if (i < n / 2) j = 2 * i; x[j]` then
    reads x[-16843010], a fault whose hint names the cause (_uninitialized_index), where the stack's
    leftovers would often give an index in range, silently (a GPU's leftover register does too)."""
    if not _accepts(compiler, "-ftrivial-auto-var-init=pattern"):
        return []
    # GCC's value numbering (FRE) takes the fill for "undefined" and folds it away where the variable's only
    # value is a constant (`int one; if (x[i] > 0) one = 1;` became 1 on every path): without it, the fill stays
    return ["-ftrivial-auto-var-init=pattern"] + (["-fno-tree-fre"] if _accepts(compiler, "-fno-tree-fre") else [])


#: What -ftrivial-auto-var-init=pattern leaves in an int, an unsigned, a long long never given a value.
_PATTERNS = (-0x01010102, 0xFEFEFEFE, -0x0101010101010102, 0xFEFEFEFEFEFEFEFE)


def _uninitialized_index(index: int) -> str | None:
    """For an index at (or near: j + 1, 2 * j is not) the sanitizer's fill pattern of variables that
    have no value yet: the hint that says so."""
    pattern = next((p for p in _PATTERNS if abs(index - p) <= 1 << 16), None)
    if pattern is None:
        return None
    bits = f"0x{pattern & (2**64 - 1) if abs(pattern) >= 2**32 else pattern & 0xFFFFFFFF:X}"
    return (f"Index {index} is {'near ' * (index != pattern)}{bits}, the bytes 0xFE that a sanitized launch puts in "
            "a local variable before it has a value: the index, or a value it is computed from, was read before "
            "anything was stored in it on this thread's path (on a GPU it would hold whatever its register had). "
            "Give the variable a value on every path (`int j = 0;`, or set it in every branch of the if).")


#: (a sanitized build recovers from these: runtime.h's __cc_ubsan_recover)
_RECOVERABLE_CHECKS = "shift-exponent,float-cast-overflow,integer-divide-by-zero"
_UNDEFINED_CHECKS = _RECOVERABLE_CHECKS + ",unreachable,return"
_UNDEFINED = f"-fsanitize={_UNDEFINED_CHECKS}"
_FRAME_POINTERS = ("-fno-omit-frame-pointer", "-D__CC_FRAME_POINTERS")


def _user_defines(flags: list[str]) -> tuple[list[str], list[tuple[str, str]]]:
    """`flags` split into those the command line keeps (runtime.h's own switches, -D__CC_...) and the
    learner's -DNAME=VALUE as (name, value) pairs for translation_unit (-DNAME: value 1, as NVRTC)."""
    kept, defines = [], []
    for flag in flags:
        name, equals, value = flag[2:].partition("=")
        if name.startswith("__CC_") or not re.fullmatch(r"[A-Za-z_]\w*", name.strip()):
            kept.append(flag)
        else:
            defines.append((name.strip(), value if equals else "1"))
    return kept, defines


def _compiler_flags(options) -> list[str]:
    """NVRTC options that mean something on the CPU (-DNAME=VALUE); the rest are GPU-only."""
    flags, options = [], list(options)
    for i, option in enumerate(options):
        if option.startswith("--define-macro="):
            flags.append("-D" + option.split("=", 1)[1])
        elif option.startswith("-D") and len(option) > 2:
            flags.append(option)
        elif option == "-D" and i + 1 < len(options):
            flags.append("-D" + options[i + 1])
    return flags


# A local integer declared without a value (`int best;`, `unsigned a, b;`, a struct's `int n;` member):
# runtime.h's __cc_int_fills, which reports a store of such a variable's fill.
_UNSET_INTEGER = re.compile(
    r"(?:^\s*|[;{}(]\s*|\n\s*)(?:const\s+)?(?:(?:unsigned|signed|long|short|int|char)\s+)*"
    r"(?:int|unsigned|long|short|size_t|ptrdiff_t|u?int(?:8|16|32|64)_t|(?:u?int|u?long|u?longlong)[1-4])\s+\w+\s*"
    r"(?:\[[^\]]*\]\s*)*"
    r"(?:,\s*\w+\s*(?:\[[^\]]*\]\s*)*)*;")


def _unset_struct(text: str) -> bool:
    """Whether the source declares a local of one of its own structs (or classes) without a value (`Particle p;`,
    `Pair best[4];`) or takes memory from malloc or new: runtime.h's __cc_struct_fills, which checks a struct stored
    whole for a member that holds such a variable's fill."""
    return bool(re.search(r"\bmalloc\s*\(|\bnew\s+\w", text)) or _unset_struct_local(text)


def _unset_struct_local(text: str) -> bool:
    """Whether the source declares a local of one of its own structs (or classes) without a value."""
    names = set(re.findall(r"\b(?:struct|class)\s+(\w+)\s*(?::[^{;]*)?\{", text))
    names |= set(re.findall(r"\btypedef\s+struct\s*\w*\s*\{[^}]*\}\s*(\w+)\s*;", text))
    alternatives = "|".join(map(re.escape, sorted(names)))
    return bool(names) and bool(re.search(
        rf"(?:^|[;{{}}(]|\n)\s*(?:struct\s+)?(?:{alternatives})\s+\w+\s*(?:\[[^\]]*\]\s*)*;", text))


def _storage(source: Source, name: str) -> str:
    """The C++ name of a __constant__/__device__ variable's memory: `ns::` for one in a namespace, and an
    array's raw storage (its name is its checked view: source.py)."""
    return source.global_scopes.get(name, "") + (f"__cc_raw_{name}" if name in source.global_arrays else name)


# fast.py's path for blocks proved in bounds: compiled in (-D__CC_FAST_PATH=1) in the module that a large launch
# of a kernel it understands uses (load(fast=True): FAST_PATH_THREADS), or where the options define it; off where its
# code does not compile (_compile: a kernel fast.py took for one it understands, and a later macro broke).
FAST_PATH_ON = "-D__CC_FAST_PATH=1"
#: A launch of at least this many threads of a kernel fast.py understands runs in a module built with its fast
#: path: a second compile (about half a second, once per kernel), worth it where a launch takes milliseconds.
FAST_PATH_THREADS = 1 << 18


def _launchers(source: Source, kernels=None) -> str:
    """C++ for one exported launcher per kernel: a `prepare` that checks and registers the
    arguments (once per launch), a `run` that unpacks them and runs blocks (on every worker)."""
    code = ["", '#line 1 "course-cuda-launchers"', "#ifndef __CC_FAST_PATH", "#define __CC_FAST_PATH 0", "#endif"]
    # __constant__ and __device__ variables are allocations in every launch: bounds for raw pointers
    # into them; (sanitizer) a write through a cast into a __constant__ one is the read-only fault, and
    # a __device__ one's elements get the global race checks (`total += x` in every thread).
    code.append("static void __cc_register_globals() {")
    for name in sorted(source.globals):
        storage = _storage(source, name)
        read_only = "(1ull << 32) | " if name in source.constant_globals else ""
        code.append(f"    __cc_register_allocation((void*)&{storage}, sizeof({storage}), {read_only}"
                    f"__cc_global_bits<decltype({storage})>());")
    for name in sorted(source.global_pointers):  # (after the arguments: an address the host wrote is located)
        code.append(f"    __cc_recheck_global({_storage(source, name)});")
    code.append("}")
    code.append("__CC_HOOK bool __cc_in_constant(const volatile void* p) {")
    code.append("    const char* c = (const char*)p;")
    for name in sorted(source.constant_globals):
        storage = _storage(source, name)
        code.append(f"    if (c >= (const char*)&{storage} && c < (const char*)&{storage} + sizeof({storage})) return true;")
    code.append("    (void)c;")
    code.append("    return false;")
    code.append("}")
    for index, kernel in enumerate(kernels if kernels is not None else source.kernels.values()):
        if kernel.name in source.problems:
            continue
        prepare, unpack, names = [], [], []
        for i, p in enumerate(kernel.params):
            name = f"__cc_a{i}"
            names.append(name)
            cpp = p.cpp_type or p.ctype
            if p.pointer:
                prepare.append(f"    __cc_register_allocation(args[{i}].data, (size_t)args[{i}].count, "
                               f"args[{i}].bits | (1ull << 33));")  # (an argument)
            if p.pointer and cpp == "void":
                unpack.append(f"    void* {name} = args[{i}].data;")
            elif p.pointer:
                prepare.append(f"    (void)__cc_array_arg<{cpp}>(args[{i}], {i});")
                unpack.append(f"    __cc_ptr<{cpp}> {name} = __cc_array_arg<{cpp}>(args[{i}], {i});")
            elif p.by_value_struct:
                prepare.append(f"    (void)__cc_struct_arg<{cpp}>(args[{i}], {i});")
                unpack.append(f"    {cpp} {name} = __cc_struct_arg<{cpp}>(args[{i}], {i});")
            else:
                unpack.append(f"    {cpp} {name} = __cc_scalar_arg<{cpp}>(args[{i}]);")
        # A kernel in a namespace: its parameters' types may be the namespace's (`ns::Params p`)
        base = (kernel.call or kernel.name).split("<", 1)[0]
        scope = [f"    using namespace {base.rsplit('::', 1)[0].lstrip(':')};"] if "::" in base.lstrip(":") else []
        code.append(f"static void __cc_prepare_{index}(const __cc_arg* args) {{")
        unset = "true" if _UNSET_INTEGER.search(source.text) else "false"
        structs = "true" if _unset_struct(source.text) else "false"
        code += scope + prepare + ["    __cc_register_globals();", f"    __cc_int_fills = {unset};",
                                   f"    __cc_struct_fills = {structs};", "    (void)args;", "}"]
        fast_code = fast.fast_path(source, kernel, index)
        if fast_code:  # (fast.py: blocks proved in bounds run without checks; not in a sanitized build)
            code += ["#if __CC_FAST_PATH && !defined(__CC_SANITIZE)", fast_code.rstrip("\n"), "#endif",
                     f'#line {len(code) + 2} "course-cuda-launchers"']
        code.append(f"static void __cc_run_{index}(const __cc_arg* args) {{")
        code += scope + unpack
        run = "__cc_run_with_fibers" if kernel.uses_barriers else "__cc_run_in_loops"
        code.append(f"    auto call = [&]() {{ {kernel.call or kernel.name}({', '.join(names)}); }};")
        if fast_code:
            code += ["#if __CC_FAST_PATH && !defined(__CC_SANITIZE)",
                     f"    {run}(call, [&](unsigned __cc_extra) {{ return __cc_fast_{index}::__cc_block(__cc_extra, {', '.join(names)}); }});",
                     "#else",
                     f"    {run}(call);", "#endif"]
        else:
            code.append(f"    {run}(call);")
        code.append("}")
        code.append(f"__CC_EXPORT int __cc_launch_{_symbol(kernel.name)}(const long long* cfg, "
                    "const __cc_arg* args, __cc_fault* fault) {")
        names = source.dynamic_shared_name or "extern __shared__ memory"
        code.append(f'    __cc_dyn_shared_name = "{names}";')
        code.append(f"    return __cc_launch(cfg, fault, __cc_prepare_{index}, __cc_run_{index}, args);")
        code.append("}")
    for name in source.globals:  # __constant__ and __device__ variables, for get_global
        symbol = _symbol(name)
        storage = _storage(source, name)
        code.append(f"__CC_EXPORT void* __cc_global_{symbol}(size_t* bytes) "
                    f"{{ *bytes = sizeof({storage}); return (void*)&{storage}; }}")
        code.append(f"__CC_EXPORT size_t __cc_global_item_{symbol}() "
                    f"{{ return sizeof(std::remove_all_extents<decltype({storage})>::type); }}")
    return "\n".join(code) + "\n"


#: `a[i]` of a cuda::std::array (source.py's _check_std_array_subscripts): i checked against its size, as
#: a local array's index is (a fault names it as runtime.h's __cc_index does, kind 5: a std::array).
CUDA_STD_ARRAY = r"""template <class A> struct __cc_std_size { static constexpr long long n = -1; };
template <class T, size_t N> struct __cc_std_size<std::array<T, N>> { static constexpr long long n = (long long)N; };
template <class A, class I>
__attribute__((always_inline)) static inline I __cc_std_index(I i, const char* name, int subscript) {
    constexpr long long n = __cc_std_size<typename std::remove_cv<typename std::remove_reference<A>::type>::type>::n;
    if constexpr (n >= 0) {
        if (__builtin_expect((unsigned long long)(long long)i >= (unsigned long long)n, 0))
            __cc_array_out_of_bounds(name, 5, (long long)i, n, subscript);
    }
    return i;
}
"""


#: libcu++'s <cuda/std/bit> (C++20's <bit>, for C++17): cuda::std::bit_cast, popcount, countl_zero, ...
#: (cuda::std is std here; the names C++20's <bit> would declare, on unsigned integer types as there).
CUDA_STD_BIT = r"""#if !defined(__cpp_lib_bitops) || !defined(__cpp_lib_bit_cast)
namespace std {
template <class T> using __cc_if_unsigned = typename enable_if<is_integral<T>::value && is_unsigned<T>::value &&
                                                               !is_same<T, bool>::value, T>::type;
template <class To, class From, class = typename enable_if<sizeof(To) == sizeof(From) &&
                                                           is_trivially_copyable<To>::value &&
                                                           is_trivially_copyable<From>::value>::type>
inline To bit_cast(const From& from) { To to; memcpy((void*)&to, (const void*)&from, sizeof(To)); return to; }
template <class T> constexpr int __cc_digits() { return numeric_limits<T>::digits; }
template <class T> constexpr int countl_zero(T x, __cc_if_unsigned<T>* = nullptr) {
    return x == 0 ? __cc_digits<T>() : sizeof(T) <= 4 ? __builtin_clz((unsigned)x) - (32 - __cc_digits<T>())
                                                      : __builtin_clzll((unsigned long long)x) - (64 - __cc_digits<T>());
}
template <class T> constexpr int countr_zero(T x, __cc_if_unsigned<T>* = nullptr) {
    return x == 0 ? __cc_digits<T>() : __builtin_ctzll((unsigned long long)x);
}
template <class T> constexpr int countl_one(T x, __cc_if_unsigned<T>* = nullptr) { return countl_zero<T>((T)~x); }
template <class T> constexpr int countr_one(T x, __cc_if_unsigned<T>* = nullptr) { return countr_zero<T>((T)~x); }
template <class T> constexpr int popcount(T x, __cc_if_unsigned<T>* = nullptr) {
    return __builtin_popcountll((unsigned long long)x);
}
template <class T> constexpr bool has_single_bit(T x, __cc_if_unsigned<T>* = nullptr) { return x && !(x & (x - 1)); }
template <class T> constexpr int bit_width(T x, __cc_if_unsigned<T>* = nullptr) { return __cc_digits<T>() - countl_zero<T>(x); }
template <class T> constexpr T bit_floor(T x, __cc_if_unsigned<T>* = nullptr) { return x ? (T)((T)1 << (bit_width<T>(x) - 1)) : 0; }
template <class T> constexpr T bit_ceil(T x, __cc_if_unsigned<T>* = nullptr) { return x <= 1 ? (T)1 : (T)((T)1 << bit_width<T>((T)(x - 1))); }
template <class T> constexpr T rotl(T x, int s, __cc_if_unsigned<T>* = nullptr) {
    const int n = __cc_digits<T>(), r = s % n;
    return r == 0 ? x : r > 0 ? (T)((x << r) | (x >> (n - r))) : (T)((x >> -r) | (x << (n + r)));
}
template <class T> constexpr T rotr(T x, int s, __cc_if_unsigned<T>* = nullptr) { return rotl<T>(x, -(s % __cc_digits<T>())); }
enum class endian { little = __ORDER_LITTLE_ENDIAN__, big = __ORDER_BIG_ENDIAN__, native = __BYTE_ORDER__ };
}  // namespace std
#endif
"""


def _symbol(name: str) -> str:
    """A C identifier for a kernel's name expression: 'reduce<float, 256>' → 'reduce_3cfloat_2c_20256_3e'."""
    return re.sub(r"[^A-Za-z0-9_]", lambda m: f"_{ord(m.group()):02x}", name)


def translation_unit(source: Source, extra=(), trace: bool = False, defines=()) -> str:
    """The C++ file the compiler sees; `#line` keeps the learner's line numbers. `extra`: kernels
    named by name expressions (template instances), which get launchers too. `trace`: the build
    of kernel.profile, whose `if` conditions report each thread's outcome. `defines`: the options'
    -DNAME=VALUE, as #define lines after runtime.h and the standard headers (on the command line, a
    `-DN=4` would rewrite runtime.h's own template parameters named N)."""
    kernels = list(source.kernels.values()) + [k for k in extra if k.name not in source.kernels]
    text = source.trace_text if trace and source.trace_text else source.cpu_text
    # The C library's names that the source declares itself (`__global__ void random(...)`), renamed
    # after runtime.h's headers: the source's own (compiler messages drop the prefix).
    renamed = "".join(f"#define {name} __cc_user_{name}\n" for name in source.renamed)
    headers = "".join(f"#include <{name}>\n" + {"bit": CUDA_STD_BIT, "array": CUDA_STD_ARRAY}.get(name, "")
                      for name in source.std_headers)  # (<cuda/std/array>: std::array)
    macros = "".join(f"#define {name} {value}\n" for name, value in defines)
    return f'#include "runtime.h"\n{headers}{renamed}{macros}#line 1 "{SOURCE_NAME}"\n{text}\n{_launchers(source, kernels)}'


def _build_key(compiler: str, *parts: str, length: int = 40) -> str:
    """A hash of what a build depends on: the layout, runtime.h, the compiler (path, size, date),
    the platform, and `parts` (the unit, the flags)."""
    stat = os.stat(compiler)
    everything = [_LAYOUT_VERSION, RUNTIME_HEADER.read_text(encoding="utf-8"), os.path.realpath(compiler),
                  str(stat.st_size), str(stat.st_mtime_ns), sys.platform, platform.machine(), *parts]
    return hashlib.sha256("\0".join(everything).encode()).hexdigest()[:length]


def _cache_key(unit: str, flags: list[str], compiler: str) -> str:
    return _build_key(compiler, unit, " ".join(FLAGS), " ".join(flags))  # (a change of FLAGS rebuilds too)


#: What the emulator's own header adds to an error in the learner's code, which helps no one reading it: the
#: operators it defines for half and vector types, each tried as a candidate for `x + p` (a float and a pointer),
#: the macros that made them, the substitution failures behind them, its own templates (atomicAdd's overload for
#: checked pointers, `p.p`) and their instantiation chains (its functions' other candidates, atomicAdd's
#: overloads say, stay: they list what the call could have been).
_RUNTIME_NOISE = re.compile(r"runtime\.h:\d+:\d+: (?:note: (?:candidate[^:]*: .*(?:\boperator\W|\bp\.p\b)|  |in expansion "
                            r"of macro [‘']__CC_|in definition of macro [‘']__CC_)|error: no type named [‘']type[’'] in "
                            r"[‘']struct std::enable_if|\s+required from .*__cc_)|runtime\.h: In substitution of .*__cc_|"
                            r"runtime\.h: In substitution of .*decltype \(atomic")


def _clean_compiler_output(text: str, build_dir: str, header_dir: Path | None = None) -> str:
    """The compiler's messages, as the learner would like to read them."""
    for folder in (build_dir, str(header_dir) if header_dir else None):
        if folder:
            text = text.replace(folder + os.sep, "").replace(folder, "")
    # the deduction failure of the emulator's atomic for checked pointers (its candidate line is noise below)
    quoted = r"(?:[ \d]*\|.*\n?)*"  # the source lines GCC quotes below a message, with their carets
    text = re.sub(r"^\S+:\d+:\d+: note:\s+mismatched types [‘']const __cc_ptr<E>[’'] and .*\n?" + quoted, "", text,
                  flags=re.M)
    # the warp-level functions' hidden last parameter (the caller's line): their candidates as CUDA declares them
    def candidate(m):
        return m.group(1) + re.sub(r"(?:, |(?<=\())int\)$", ")", m.group(2))
    text = re.sub(rf"(note: candidate: [‘'][^’']*?\b(?:{'|'.join(_WARP_SIGNATURES)}))(\([^()]*\))", candidate, text)
    text = re.sub(rf"((?:{'|'.join(_WARP_SIGNATURES)})\([^()]*\)[’']\n(?:.*\n)*?)\S+: note:\s+candidate expects \d+ "
                  r"arguments?, \d+ provided\n?" + quoted, r"\1", text)
    text = re.sub(r"__cc_ptr<(.+?)>", r"\1*", text)  # checked pointers are plain pointers to the learner
    text = re.sub(r"__cc_array_view<(.+?)>", r"\1", text)  # and checked arrays plain arrays
    text = re.sub(r"__cc_value_t<(\w+)>", r"\1", text)
    # (a shuffle's return type, as g++ prints the alias of a candidate: the value's type)
    text = re.sub(r"__cc_shuffled_t<(?:typename std::remove_cv<typename std::remove_reference<\w+>::type>::type|"
                  r"__cc_value_t<\w+>|\w+)>", "T", text)
    text = re.sub(r"\(\(const __cc_store<[^>]*>\*\)this\)->__cc_store<[^>]*>::ref", "an element of a const array",
                  text)  # `x[i] = 1.0f;` into a `const float* x`
    text = re.sub(r"\b__cc_raw_(\w+)", r"\1", text)  # a __shared__ array's storage: its own name
    text = re.sub(r"\b__cc_xs_(\w+)", r"\1", text)  # an extern __shared__ array's type (source.py): its name
    text = text.replace("__cc_user_", "")  # the source's own `half` (source._own_half_names)
    # g++'s "did you mean" for a misspelt barrier names the function the macro __syncthreads() calls
    text = re.sub(r"\b__cc_syncthreads\b", "__syncthreads", text)
    # "In instantiation of ... __cc_store<float>::operator= ...": the line below it, the learner's, says where
    text = "\n".join(ln for ln in text.splitlines() if not re.match(r"runtime\.h: In instantiation of .*__cc_", ln))
    # "kernel.cu:3:19:   required from here" then "runtime.h:2546:15: error: cannot convert ...": the learner's line
    # is where the error is (`out[i] = threadIdx;`, whose store the emulator's header makes)
    text = re.sub(rf"^({re.escape(SOURCE_NAME)}:\d+:\d+):\s+required from here\nruntime\.h:\d+:\d+: error: ",
                  r"\1: error: ", text, flags=re.M)
    lines, warning = [], False
    for ln in text.splitlines():  # errors only: a warning, with its notes and quoted lines, is left out
        if re.match(r"\S+:\d+:\d+: warning:", ln):
            warning = True
        elif re.match(r"\S+:\d+:\d+: (fatal )?error:|\S+: In ", ln):
            warning = False
        repeated = ln.startswith("runtime.h:") and ": note: " in ln and ln in lines  # (atomicAdd's overloads, twice)
        if not warning and ln.strip() and "course-cuda-launchers" not in ln and not _RUNTIME_NOISE.match(ln) \
                and not repeated:
            lines.append(ln)
    if len(lines) > 40:
        lines = lines[:40] + [f"... ({len(lines) - 40} more lines)"]
    return "\n".join(lines)


@functools.lru_cache(maxsize=8)
def _is_gcc(compiler: str) -> bool:
    try:
        done = subprocess.run([compiler, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0 and "Free Software Foundation" in done.stdout and "clang" not in done.stdout.lower()


def _runtime_flags(flags: list[str]) -> list[str]:
    """The flags that make a build kind (plain, sanitized, traced, ...): all but a learner's -DNAME."""
    return [f for f in flags if not f.startswith("-D") or f.startswith("-D__CC_")]


def _prebuilt_runtime(compiler: str, flags: list[str]) -> Path | None:
    """A folder in the kernel cache with runtime.h compiled once for this build kind: runtime.o, the
    runtime's own code (the launch, the fibers, the sanitizer: the same in every module, and about 90 %
    of a module's compile time: 0.8 s → 0.25 s a sanitized module here), which _compile links into
    each module, and with GCC runtime.h.gch, the header precompiled for the module's part. Made once,
    by whichever process gets there first; None where it does not build (each module is then one
    translation unit, runtime and kernel, as before)."""
    kind = _runtime_flags(flags)
    header = RUNTIME_HEADER.read_text(encoding="utf-8")
    cache = cache_dir()
    folder = cache / f"runtime-{_build_key(compiler, *FLAGS, *kind, length=24)}"
    if folder.is_symlink() or (folder.exists() and folder.stat().st_uid != os.getuid()):
        return None  # not ours: never use it
    if (folder / "runtime.o").exists():
        if _whole(folder / "runtime.o"):
            return folder
        shutil.rmtree(folder, ignore_errors=True)  # cut short: built again below
    build = Path(tempfile.mkdtemp(prefix="runtime-build-", dir=cache))
    try:
        (build / "runtime.h").write_text(header, encoding="utf-8")
        common = [compiler, *[f for f in FLAGS if f != "-shared"], *kind]
        # (-O2, not a sanitized kernel's -O1: compiled once, the sanitizer's own code may take longer to
        # compile, and runs a sanitized tiled matmul about 15 % faster)
        optimized = [{"-O1": "-O2"}.get(f, f) for f in common]
        done = subprocess.run([*optimized, "-D__CC_RUNTIME_OBJECT", "-x", "c++", "-c", "-o", "runtime.o", "runtime.h"],
                              cwd=build, capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            return None
        if _is_gcc(compiler):  # (without it, GCC reads runtime.h itself: slower, the same module)
            subprocess.run([*common, "-D__CC_WITH_RUNTIME_OBJECT", "-x", "c++-header", "-o", "runtime.h.gch",
                            "runtime.h"], cwd=build, capture_output=True, text=True, timeout=600)
        try:
            os.rename(build, folder)
        except OSError:  # another process made it first: use theirs
            return folder if (folder / "runtime.o").exists() else None
        for old in [*cache.glob("runtime-*"), *cache.glob("pch-*")]:  # an older runtime.h's are never used again
            if old != folder and not old.name.startswith(("runtime-build-", "pch-build-")) and \
                    (old / "runtime.h").exists() and (old / "runtime.h").read_text(encoding="utf-8") != header:
                shutil.rmtree(old, ignore_errors=True)
        return folder
    except (OSError, subprocess.SubprocessError):
        return None
    finally:
        if build.exists():
            shutil.rmtree(build, ignore_errors=True)


def _whole(path: Path) -> bool:
    """Whether a compiled file of the cache (a module's .so, runtime.o) is whole: an ELF file (Linux) whose section
    headers, which come last, end within the file. One cut short (a cache folder copied or synced in part, a full
    disk) made the process die of SIGBUS when loaded, or every later compile fail. Other formats pass (macOS)."""
    try:
        with open(path, "rb") as f:
            header = f.read(64)
        size = path.stat().st_size
    except OSError:
        return False
    if size == 0:
        return False
    if header[:4] != b"\x7fELF":
        return sys.platform == "darwin" and len(header) >= 4  # (Mach-O: not checked)
    wide, little = header[4] == 2, header[5] == 1
    if len(header) < (64 if wide else 52):
        return False
    order = "<" if little else ">"
    offset, (entry, count) = (struct.unpack_from(order + ("Q" if wide else "I"), header, 0x28 if wide else 0x20)[0],
                              struct.unpack_from(order + "HH", header, 0x3A if wide else 0x2E))
    return size >= offset + entry * count


def _include_folders(options) -> list[str]:
    """The folders of the -I / --include-path options, in order."""
    folders, options = [], list(options)
    for i, option in enumerate(options):
        if option in ("-I", "--include-path"):
            if i + 1 < len(options):
                folders.append(options[i + 1])
        elif option.startswith("--include-path="):
            folders.append(option.split("=", 1)[1])
        elif option.startswith("-I"):
            folders.append(option[2:].lstrip("= "))
    return [f for f in folders if f]


def _missing_header(header: str, folders=()) -> str:
    """What to do about an #include the compiler did not find (`folders`: the -I options' folders, which NVRTC
    searches on a GPU and the CPU backend does not)."""
    if re.match(r"(cuda/|cuda_|sm_\d|crt/|nv/|device_|cublas|cusparse|cufft|nvtx|cooperative_groups/)", header):
        return (f"\n{header} is a CUDA header that the CPU backend does not provide: write what the kernel "
                "uses from it in plain CUDA C (a __shared__ array and __syncthreads() for cuda::pipeline's "
                "staging, for one), or run the kernel on a GPU. (It has <cuda/atomic> and libcu++'s C++17 "
                "<cuda/std/...> headers: array, complex, tuple, functional, atomic, optional, limits, ...)")
    if folders:
        found = next((f for f in folders if os.path.isfile(os.path.join(os.path.expanduser(f), header))), None)
        where = (f"{header} is in {found}, which your -I option lets NVRTC search on a GPU" if found else
                 f"{header} is not in the -I folder{'s' * (len(folders) != 1)} given ({', '.join(folders)}) either")
        return (f"\n{where}, but the CPU backend compiles the source string alone: it reads no header files of your "
                f"own, -I or not. Paste what the kernel needs from {header} (its #defines, structs and __device__ "
                "functions) into the source string, in place of the #include; then it runs on both backends")
    return (f"\n{header} is not part of CUDA (helper_math.h and helper_cuda.h, for one, come with "
            "NVIDIA's cuda-samples), and the CPU backend does not read header files of your own (CuPy on a GPU "
            "finds them with options=('-I<folder>',)): paste the functions the kernel needs from that file into "
            "the source string, which then runs on both")


#: NVRTC options that make functions and variables without an execution space __device__ ones.
_DEFAULT_DEVICE = {"-default-device", "--device-as-default-execution-space"}


_VECTOR_TYPE = r"(?:const )?((?:u?char|u?short|u?int|u?long|u?longlong|float|double)[1-4])"


def _an(word: str) -> str:
    """`a float4`, `an int2`, `a uchar4`, `an unsigned int`."""
    return f"{'an' if word[:1] in 'aeio' or word.startswith('unsigned') else 'a'} {word}"


def _vector_operator_hint(output: str) -> str:
    """`a + b`, `a * 2.0f`, `-a`, `acc += v` of float4s (int2s, ...): CUDA defines no arithmetic on its
    vector types (nvcc refuses it too; the cuda-samples' helper_math.h adds the operators)."""
    unary = re.search(rf"no match for .operator(\S+?). \(operand type is .{_VECTOR_TYPE}.\)", output)
    binary = re.search(r"no match for .operator(\S+?). \(operand types are .([\w ]+). and .([\w ]+).\)", output)
    vector_type = lambda text: re.fullmatch(_VECTOR_TYPE, text.replace("&", "").strip())
    if unary:
        op, vector = unary.group(1), unary.group(2)
        fields = "xyzw"[:int(vector[-1])]
        signature, made = f"{vector} a", ", ".join(f"{op}a.{c}" for c in fields)
    elif binary and (vector_type(binary.group(2)) or vector_type(binary.group(3))):
        op = binary.group(1)
        left, right = vector_type(binary.group(2)), vector_type(binary.group(3))
        vector = (left or right).group(1)
        fields, plain = "xyzw"[:int(vector[-1])], op.rstrip("=") or op
        scalar = re.sub(r"\b(const|volatile) ", "", binary.group(3 if left else 2)).strip()
        if left and right:
            signature, made = f"{vector} a, {vector} b", ", ".join(f"a.{c} {plain} b.{c}" for c in fields)
        elif left:
            signature, made = f"{vector} a, {scalar} s", ", ".join(f"a.{c} {plain} s" for c in fields)
        else:
            signature, made = f"{scalar} s, {vector} a", ", ".join(f"s {plain} a.{c}" for c in fields)
        if op in ("==", "!=", "<", ">", "<=", ">="):
            return (f"\nCUDA defines no operators on its vector types: {op} of {_an(vector)} is an error for nvcc too. "
                    f"Compare the components: " + (" && " if op != "!=" else " || ").join(
                        f"a.{c} {op} b.{c}" for c in fields) + ".")
        if op.endswith("=") and left:  # a compound assignment: a& operator+=(a&, b)
            first, _, rest = signature.partition(", ")
            return (f"\nCUDA defines no arithmetic on its vector types: {op} on {_an(vector)} is an error for nvcc too "
                    f"(the cuda-samples' helper_math.h adds these operators; it is no part of CUDA). Write it per "
                    f"component, or define the operator in your source, e.g. `__device__ {vector}& operator{op}"
                    f"({first.replace(' a', '& a')}, {rest}) {{ a = make_{vector}({made}); return a; }}`.")
    else:
        return ""
    return (f"\nCUDA defines no arithmetic on its vector types: operator{op} on {_an(vector)} is an error for nvcc too "
            f"(the cuda-samples' helper_math.h adds these operators; it is no part of CUDA). Write it per component, "
            f"make_{vector}({made}), or define the operator in your source, e.g. `__device__ {vector} "
            f"operator{op}({signature}) {{ return make_{vector}({made}); }}`.")


#: The types each of CUDA's atomic functions takes (sm_80), and what to do for another.
_ATOMIC_TYPES = {
    "atomicAdd": ("int, unsigned int, unsigned long long, float, double, __half, __half2, __nv_bfloat16 and "
                  "__nv_bfloat162", "for a signed 64-bit count, add through (unsigned long long*) (two's complement "
                  "gives the same bits)"),
    "atomicSub": ("int and unsigned int", "for a float, atomicAdd(p, -v)"),
    "atomicExch": ("int, unsigned int, unsigned long long and float", "for a double, atomicExch on its bits: "
                   "(unsigned long long*) and __double_as_longlong(v)"),
    **{op: ("int, unsigned int, long long and unsigned long long", f"for a float, {op}((int*)p, __float_as_int(v)) "
            "orders values that are all >= 0; for any sign, an atomicCAS loop on the bits")
       for op in ("atomicMax", "atomicMin")},
    **dict.fromkeys(["atomicInc", "atomicDec"], ("unsigned int", "pass an unsigned int array (np.uint32)")),
    "atomicCAS": ("int, unsigned int, unsigned long long and unsigned short", "for a float or a double, compare "
                  "and swap its bits: __float_as_int / __double_as_longlong"),
    **dict.fromkeys(["atomicAnd", "atomicOr", "atomicXor"],
                    ("int, unsigned int and unsigned long long", "on a float, operate on its bits (__float_as_int)")),
}


def _call_hint(output: str) -> str:
    """For a call of one of CUDA's atomic or warp-level functions that matches none of its forms: which it has."""
    hints = []
    for m in re.finditer(r"no matching function for call to [‘'](\w+)\(([^,()]*)", output):
        name, first = m.group(1), re.sub(r"__cc_ptr<(.+?)>", r"\1*", m.group(2)).rstrip("&").strip()
        if name in _ATOMIC_TYPES and first.endswith("*"):
            types, instead = _ATOMIC_TYPES[name]
            pointee = first[:-1].strip()
            if name != "atomicCAS" and re.fullmatch(r"(?:unsigned |signed )?(?:char|short(?: int)?)|u?int(?:8|16)_t|bool",
                                                    pointee):
                # `atomicAdd(&bins[v], 1)` into unsigned char bins: no 8- or 16-bit atomics
                instead = (f"CUDA has no {name} on 8- or 16-bit integers, so count in an array of int or unsigned "
                           "int and narrow the counts when you store them (or atomicAdd on the 32-bit word that "
                           "holds the byte, adding the count shifted to its place)")
            line = f"{name} takes a pointer to {types} in CUDA, not to {pointee}: {instead}."
            call = re.search(rf"call to [‘']{name}\(([^()]*)\)", output[m.start():])
            given = len([a for a in call.group(1).split(",") if a.strip()]) if call else 0
            wanted = 3 if name == "atomicCAS" else 2
            plain = re.sub(r"^(?:const |volatile )+", "", pointee)
            if call and given != wanted and re.search(rf"(?:^|, | and ){re.escape(plain)}(?:,| and|$)", types):
                # `atomicAdd(b, 1.0f, 2)` on a float*: the pointer is right, the count of arguments is not
                line = (f"{name} takes {wanted} arguments, " + ("(address, compare, value)" if wanted == 3 else
                        "(address, value)") + f", and this call gives {given}: its pointer to {plain} is fine.")
        elif name in _WARP_SIGNATURES:
            line = f"{name}'s arguments: {_WARP_SIGNATURES[name]}."
        else:
            continue
        if line not in hints:
            hints.append(line)
    return "".join("\n" + h for h in hints)


def _mixed_half_hint(output: str) -> str:
    """`h * 2.0f`, `h > 0`: a __half (or bfloat16) beside a float or an integer is ambiguous for nvcc
    too (its __half converts to float and to every integer type): what to write instead."""
    found = re.search(r"ambiguous overload for .operator(\S+). \(operand types are .([\w ]+). and .([\w ]+).\)", output)
    halves = ("__half", "__nv_bfloat16")
    if not found:
        return ""
    op, left, right = (re.sub(r"\b(const|volatile) ", "", word) for word in found.groups())
    if (left in halves) == (right in halves):
        return ""
    half, other = (left, right) if left in halves else (right, left)
    to_half = "__float2half" if half == "__half" else "__float2bfloat16"
    to_float = "__half2float" if half == "__half" else "__bfloat162float"
    article = "an" if other[0] in "aeiou" else "a"
    return (f"\n`{op}` of a {half} and {article} {other} is ambiguous for nvcc too (its {half} converts to float "
            f"and to every integer type): make both sides {half} (`h {op} {to_half}(x)`) or both float "
            f"(`{to_float}(h) {op} x`).")


_GCC_TYPE_NAMES = {"long int": "long", "long long int": "long long", "long unsigned int": "unsigned long",
                   "long long unsigned int": "unsigned long long", "short int": "short",
                   "short unsigned int": "unsigned short"}
#: Math functions whose calls with integers (sqrt(n)) or a float and a double (pow(x, 0.5)) nvcc refuses as
#: ambiguous (CUDA declares them for float and for double only; pow also for (float, int) and (double, int)).
_FLOAT_OR_DOUBLE_MATH = frozenset("""
    sqrt cbrt fabs floor ceil trunc round rint nearbyint lround llround lrint llrint exp exp2 expm1 log log2 log10
    log1p logb ilogb sin cos tan asin acos atan sinh cosh tanh asinh acosh atanh erf erfc tgamma lgamma pow atan2
    fmod hypot fmin fmax fdim remainder rsqrt rcbrt sinpi cospi exp10 erfinv erfcinv erfcx normcdf normcdfinv
    cyl_bessel_i0 cyl_bessel_i1""".split())


_SPECIAL_FUNCTIONS = re.compile(  # (std::beta, or a name of the kind only they have: a learner's beta may be undeclared)
    r"[‘']((?:cyl_bessel_[ijk]|cyl_neumann|sph_bessel|sph_neumann|sph_legendre|assoc_laguerre|assoc_legendre|"
    r"comp_ellint_[123]|ellint_[123]|expint|riemann_zeta)[fl]?)[’'] (?:is not a member of [‘']std[’']|was not declared "
    r"in this scope)|[‘']((?:beta|hermite|laguerre|legendre)[fl]?)[’'] is not a member of [‘']std[’']")


def _special_function_hint(output: str) -> str:
    """C++17's special functions (std::cyl_bessel_j, std::beta, ...), which runtime.h leaves out: host code that nvcc
    refuses in a kernel too; CUDA's device functions for the same."""
    found = _SPECIAL_FUNCTIONS.search(output)
    if not found:
        return ""
    return (f"\nstd::{found.group(1) or found.group(2)} is one of C++17's special functions, host code: nvcc refuses it in a kernel too "
            "(calling a __host__ function from a __global__ function). CUDA's device math has its own: j0f, j1f, jnf "
            "and y0f, y1f, ynf (Bessel functions of the first and second kind), cyl_bessel_i0f and cyl_bessel_i1f, "
            "erff, erfcf, lgammaf and tgammaf (the double versions without the f); others you write as a series.")


def _math_overload_hint(output: str) -> str:
    """min/max of two numbers that none of CUDA's overloads pairs (max(x, 0) of a float x, min(size_t,
    unsigned)), and a math function given an int (sqrt(n), pow(2, 3)) or a float and a double (pow(x, 0.5)):
    nvcc refuses these calls as ambiguous too (runtime.h declares CUDA's overloads); what to write."""
    def plain(t: str) -> str:
        t = re.sub(r"\b(const|volatile)\s+|\s*&+$", "", t.strip()).strip()
        return _GCC_TYPE_NAMES.get(t, t)
    floats = ("float", "double")
    hints = []
    for m in re.finditer(r"no matching function for call to [‘'](min|max)\(([^()]*)\)[’']", output):
        name, args = m.group(1), [plain(a) for a in m.group(2).split(",")]
        if len(args) != 2:
            continue
        a, b = args
        if (a in floats) != (b in floats) and "__half" not in a + b and "bfloat16" not in a + b:
            f = a if a in floats else b
            zero, fn = ("0.0f", f"f{name}f") if f == "float" else ("0.0", f"f{name}")
            x, c = ("x", zero) if a in floats else (zero, "x")
            line = (f"CUDA's {name} has no ({a}, {b}) version (nvcc refuses the call as ambiguous): make both "
                    f"{f}s, {name}({x}, {c}) or {fn}({x}, {c}) for a constant, a ({f}) cast for an integer variable.")
        elif a == b and a in ("__half", "__nv_bfloat16"):
            line = (f"CUDA has no {name} of two {a}s (nvcc refuses the call as ambiguous): "
                    f"use __h{name}(a, b), or compare them as floats.")
        elif a not in floats and b not in floats:
            line = (f"CUDA's {name} has no ({a}, {b}) version (nvcc refuses the call as ambiguous: its integer "
                    f"overloads take two ints, two unsigned ints, two longs, two long longs, or a signed and an "
                    f"unsigned of one width): cast one argument to the other's type, {name}(a, ({a})b).")
        else:
            continue
        if line not in hints:
            hints.append(line)
    calls = [(m.group(1), m.group(2)) for m in re.finditer(
        r"call of overloaded [‘'](\w+)\(([^()]*)\)[’'] is ambiguous", output)]
    for m in re.finditer(r"use of deleted function [‘'][\w ]*? (?:__cc_)?(\w+)\(([^()]*)\) \[with ([^\]]*)\]", output):
        bound = dict(re.findall(r"\b([ID]) = ([\w ]+?)(?:;|$)", m.group(3)))
        calls.append((m.group(1), ", ".join(bound.get(p.strip(), p.strip()) for p in m.group(2).split(","))))
    for name, arguments in calls:
        name = name.removeprefix("__cc_")
        args = [plain(a) for a in arguments.split(",")] if arguments.strip() else []
        if name not in _FLOAT_OR_DOUBLE_MATH or not args or any(re.search(r"[*<]|__half|bfloat16", a) for a in args):
            continue
        integers = [a for a in args if a not in floats]
        fname = f"{name}f"
        if len(args) == 1 and integers:
            line = (f"{name} of {_an(args[0])} is ambiguous in CUDA (it has "
                    f"{name}(float) and {name}(double), nvcc refuses the call): write {fname}((float)n) or "
                    f"{name}((double)n).")
        elif len(args) == 2 and len(integers) == 2:
            line = (f"{name}({args[0]}, {args[1]}) is ambiguous in CUDA (it has {name}(float, float) and "
                    f"{name}(double, double){', pow(float, int), pow(double, int)' if name == 'pow' else ''}; nvcc refuses the "
                    f"call): write {fname}((float)a, (float)b) or {name}((double)a, (double)b)"
                    + (", or multiply, a * a * a, for a small whole power." if name == "pow" else "."))
        elif len(args) == 2 and not integers:
            f = "float" if args[0] == "float" else "double"
            line = (f"{name}({args[0]}, {args[1]}) is ambiguous in CUDA (float or double? nvcc refuses the call): "
                    f"give both arguments one type, a float constant with f ({fname}(x, 0.5f)) or a cast.")
        elif name == "pow" and len(args) == 2:
            line = (f"pow({args[0]}, {args[1]}) is ambiguous in CUDA (its integer exponent is an int: pow(float, "
                    f"int), pow(double, int); nvcc refuses the call): pass an int, pow(x, (int)n).")
        else:
            continue
        if line not in hints:
            hints.append(line)
    return "".join("\n" + h for h in hints)


def refused_message(host_only: list, other: list) -> str:
    """Why a source with code nvcc refuses does not compile here: g++ would compile it, and the
    kernel would run here and then not compile on a GPU. `host_only`: (what, line, fix) of each use
    of host code in device code; `other`: the same for nvcc's other refusals."""
    refused = sorted(host_only + other, key=lambda found: found[1])
    lines = [f"  line {line}: {what}: {fix}." for what, line, fix in refused[:6]]
    more = len(refused) - len(lines)
    return ("this source has code that nvcc and CuPy's NVRTC refuse (g++ would compile it, so the kernel would run "
            "here and then fail to compile on a GPU):\n" + "\n".join(lines)
            + (f"\n  ... and {more} more" if more > 0 else "")
            + ("\nFunctions without __device__ (or __host__ __device__), and variables without __device__ or "
               "__constant__, exist only on the host." if host_only else ""))


def _extern_shared_hint(output: str) -> str:
    """For extern __shared__ arrays of one name declared with two types (source.py's `__cc_xs_` declarations):
    what NVRTC says and the fix."""
    found = re.search(r"conflicting declaration [^\n]*?\b__cc_xs_(\w+)", output)
    if not found:
        return ""
    name = found.group(1)
    return (f"\nIn CUDA every `extern __shared__` array named {name} is one variable, the launch's dynamic shared "
            f"memory, so all its declarations must have the same type; NVRTC refuses this too (\"declaration is "
            f"incompatible with previous \"{name}\"\"). The usual causes: a template kernel that declares "
            f"`extern __shared__ T {name}[];` instantiated for two types, or two kernels that declare {name} as "
            f"float and as int. Declare the memory once, as bytes, and view it as the type you need: "
            f"`extern __shared__ __align__(16) unsigned char smem[]; T* {name} = reinterpret_cast<T*>(smem);` "
            f"(what the CUDA samples' SharedMemory<T> does), or give each kernel's array its own name.")


def _compile(source: Source, unit: str, flags: list[str], compiler: str, target: Path, kernel: str,
             folders=(), again: bool = True) -> None:
    """Compile `unit` into the shared library `target`, atomically (no half-written file). `folders`: the -I
    options' (for the advice about a header the compile did not find)."""
    runtime = _prebuilt_runtime(compiler, flags)
    with tempfile.TemporaryDirectory(prefix="build-", dir=target.parent) as build:
        Path(build, SOURCE_NAME).write_text(source.text, encoding="utf-8")  # GCC quotes its lines
        if runtime is None:
            Path(build, "runtime.h").write_text(RUNTIME_HEADER.read_text(encoding="utf-8"), encoding="utf-8")
        Path(build, "module.cpp").write_text(unit, encoding="utf-8")
        linked = ["-D__CC_WITH_RUNTIME_OBJECT", f"-I{runtime}"] if runtime else []
        libraries = LIBRARIES
        if _UNDEFINED in flags and _is_gcc(compiler):  # GCC would link libubsan: runtime.h has the handlers
            libraries = ["-nodefaultlibs", *LIBRARIES, "-lstdc++", "-lm", "-lc", "-lgcc_s", "-lgcc"]
        command = [compiler, *FLAGS, *flags, *linked, "-pipe", "-o", "module.so", "module.cpp",
                   *([str(runtime / "runtime.o")] if runtime else []), *libraries,
                   *_linker_flags(compiler, tuple(f for f in flags if f.startswith("-mtls-dialect")))]
        try:
            done = subprocess.run(command, cwd=build, capture_output=True, text=True, timeout=600)
        except FileNotFoundError:
            raise CompileError(NO_COMPILER) from None
        if done.returncode != 0:
            output = done.stderr or done.stdout
            if "__cc_fast_" in output and FAST_PATH_ON in flags:
                # fast.py's code for the kernel does not compile (its error, not the kernel's): without it
                return _compile(source, unit, [f for f in flags if f != FAST_PATH_ON], compiler, target, kernel,
                                folders, again)
            if runtime and again and re.search(r"precompiled header|runtime\.o: (?:file too short|file format not "
                                               r"recognized|error adding symbols)", output):
                # the cache's prebuilt runtime is damaged (cut short by a full disk, a partial copy): build it again
                shutil.rmtree(runtime, ignore_errors=True)
                return _compile(source, unit, flags, compiler, target, kernel, folders, again=False)
            missing = re.search(r"fatal error: ([\w./-]+): No such file or directory", output)
            # A function of the kernel's with the name and parameters of one of CUDA's (rsqrtf(float)):
            # CUDA's are __cc_ functions under their CUDA names here.
            redefined = re.search(r"(?:redefinition of|redeclared as different kind of entity)[^\n]*?"
                                  r"\b__cc_(\w+)\b", output)
            raise CompileError(
                f"kernel '{kernel}' does not compile (the CPU backend compiles CUDA C with "
                f"{Path(compiler).name}; {SOURCE_NAME}:LINE is line LINE of your source string):\n"
                + _clean_compiler_output(output, build, runtime)
                + (_missing_header(missing.group(1), folders) if missing else "")
                + (f"\n{redefined.group(1)} is one of CUDA's own functions: give yours another name, "
                   f"or delete it and use CUDA's" if redefined else "")
                + _extern_shared_hint(output)
                + ("\nAn array's size must be a constant the compiler knows (a number, a #define, a constexpr "
                   "or a template parameter): nvcc refuses `float buf[n];` with n known only when the kernel "
                   "runs too. For a size known at launch, use `extern __shared__ float s[];` with "
                   "shared_mem=bytes, or a fixed upper bound." if re.search(
                       r"variable-sized array|variable length array|storage size of \S+ isn.t constant|"
                       r"size of array \S+ is not an integral constant|"
                       r"__cc_fresh_local\(\w[^)]*\[[^\]0-9]", output) else "")  # (sanitized: float [n])
                + _mixed_half_hint(output) + _vector_operator_hint(output) + _call_hint(output)
                + _math_overload_hint(output) + _special_function_hint(output)
                + ("\nThe kernel stores into const data: through a `const T*` pointer, or through a template's `T*` "
                   "parameter given a const array (T is then `const float`, as nvcc deduces it). Store through a "
                   "pointer without const, or do not store there." if re.search(
                       r"assignment of read-only location|__cc_store<const ", output) else "")
            )
        # The compiler's remarks about the learner's lines, kept beside the module (a later process
        # loads it from the cache and shows them too)
        remarks = [line for line in (done.stderr or "").splitlines()
                   if re.match(r"In (member )?function|\s+inlined from", line) or "uninitialized" in line
                   or "was declared here" in line or _NO_RETURN.search(line) or _LOCAL_REFERENCE.search(line)]
        warnings_file = target.with_suffix(".warnings")
        if remarks:
            warnings_file.write_text("\n".join(remarks), encoding="utf-8")
        elif warnings_file.exists():
            warnings_file.unlink()
        os.replace(Path(build, "module.so"), target)


#: sizeof a pointer stored in memory here (runtime.h's __cc_ptr: a checked pointer and its bounds)
_CHECKED_POINTER_BYTES = 32

#: (source, warning): each shown once per process and source (the plain and the sanitized build both have it, and
#: CuPy compiles a source once); a source edited in any way, a comment even, is compiled again, and warned about again
_warned: set[tuple[str, str]] = set()


def outside_course_cuda(frame):
    """The first frame from `frame` outwards that is not course.cuda's own code (the learner's cell, or
    another course module), and how many frames out it is."""
    level = 0
    while frame is not None and frame.f_globals.get("__name__", "").startswith("course.cuda"):
        frame, level = frame.f_back, level + 1
    return frame, level


def _user_level() -> int:
    """warnings.warn's stacklevel for the first caller outside course.cuda."""
    return outside_course_cuda(sys._getframe(1))[1] + 1


def _dangling_warnings(source: Source) -> list[str]:
    """`return x;` of a function's own local array (nvcc: "returning address of local variable")."""
    found, grouped = [], {}
    for function, array, line, kind in source.dangling:  # (`return a > b ? &a : &b;`: one warning)
        grouped.setdefault((function, line, kind), []).append(array)
    for (function, line, kind), names in grouped.items():
        array = "` and `".join(dict.fromkeys(names))
        if len(set(names)) > 1:
            kind += "s"
        if not 0 < line <= len(source.lines):
            continue
        fix = ("Let the caller declare the array and pass it in as a pointer parameter, or return a struct that "
               "holds the values." if kind.startswith("array") else
               "A parameter passed by value is the function's own copy. Return the value itself, or take the "
               "parameters as pointers (or references) to the caller's variables and return one of those."
               if kind.startswith("parameter") else
               "Return the value itself (`return m;`, the function's type a value, not a pointer), or let the "
               "caller pass a pointer to where the result goes. (Here the compiler even makes the address a null "
               "pointer.)")
        found.append(f"line {line}: `{function}` returns the address of its local {kind} `{array}`, which "
                     f"{'stop' if kind.endswith('s') else 'stops'} "
                     "existing when the function returns: the caller reads memory that the next call's local "
                     f"variables reuse (on a GPU, and here). {fix}\n    {line}: {source.lines[line - 1].strip()}")
    return found


def _raw_member_warnings(source: Source) -> list[str]:
    """Pointers inside structs whose bytes come from the host: nothing here knows their arrays."""
    found = []
    for struct, member, line, why in source.raw_members:
        if why == "union":
            found.append(f"line {line}: `{struct + '::' if struct else ''}{member}` is a pointer inside a union, so "
                         "course.cuda cannot bounds-check the accesses through it (a union's pointer is a raw "
                         "address here, and the union's other members can change its bits): an index past its "
                         "array's end reads or overwrites other memory (on a GPU, and here, where that can crash "
                         "Python). Keep the pointer in a variable or struct of its own, and move it with pointer "
                         "arithmetic (`p += k`), which stays checked; to see its address as a number, cast a copy: "
                         f"`(unsigned long long)p`.\n    {line}: {source.lines[line - 1].strip()}")
            continue
        found.append(f"line {line}: `{struct + '::' if struct else ''}{member}` is a pointer inside a struct whose "
                     "bytes come from the host or are sized by it (a kernel parameter, a __constant__ or __device__ variable, "
                     "or extern __shared__ memory, which shared_mem sizes: each keeps the GPU's layout), so "
                     "course.cuda cannot bounds-check the accesses through it: it does not know the array it points "
                     "to, and an index past that array's end reads or overwrites other memory (on a GPU, and here, "
                     "where that can crash Python). Pass the array as a kernel parameter of its own, and every "
                     f"access to it is checked.\n    {line}: {source.lines[line - 1].strip()}")
    return found


def _aliased_shared_warnings(source: Source) -> list[str]:
    """Two `extern __shared__` arrays used by one function: both are the same memory."""
    found = []
    for function, names, lines, types in source.aliased_shared:
        listed = " and ".join(f"`{name}` (line {line})" for name, line in zip(names, lines))
        first, second = names[0], names[1]
        carve = f"{first} + n" if types[0] == types[1] else f"({types[1]}*)({first} + n)"
        found.append(f"line {lines[1]}: `{function}` uses the extern __shared__ arrays {listed}, but every extern "
                     "__shared__ array starts at the same address, the start of the launch's dynamic shared memory: "
                     f"writing {second}[i] overwrites {first}[i] (on a GPU, and here). Declare one and carve the others "
                     f"out of it, e.g. `{types[1]}* {second} = {carve};`, and pass shared_mem= for all of them together."
                     f"\n    {lines[1]}: {source.lines[lines[1] - 1].strip()}")
    return found


#: `for (int offset = 32; offset > 0; offset >>= 1)` (its variable, its first value) and a warp shuffle call
_SHUFFLE_LOOP = re.compile(r"\bfor\s*\(\s*(?:(?:const\s+)?(?:unsigned\s+int|unsigned|int|auto|size_t)\s+)?(\w+)\s*=\s*"
                           r"(\d+|warpSize)\s*;")
_SHUFFLE_CALL = re.compile(r"\b(__shfl_(?:down|up|xor)_sync)\s*\(")


def _idle_shuffle_warnings(source: Source) -> list[str]:
    """A warp shuffle whose step is a whole warp or more (`__shfl_down_sync(mask, v, 32)`, a loop's first step
    `offset = 32` or `warpSize`, a step of 16 with width 16): lane + 32 (lane ^ 32, lane - 32) is outside the warp,
    so every lane gets its own value back, and `v += ...` doubles v. Defined on a GPU, so no fault; almost always a
    loop that starts at the warp's size instead of half of it."""
    found, text = [], without_comments(source.text)
    for call in _SHUFFLE_CALL.finditer(text):
        args = _argument_texts(text, call.end() - 1)
        if args is None or len(args) < 3:
            continue
        step, width = args[2].strip(), _constant(args[3].strip(), source.constants) if len(args) > 3 else 32
        if not isinstance(width, int) or width <= 0:
            continue
        line = text.count("\n", 0, call.start()) + 1
        first, where = _constant(step, source.constants), f"its step `{step}`"
        if not isinstance(first, int) and re.fullmatch(r"[A-Za-z_]\w*", step):
            # the step is a loop's variable: its first value (a loop that opens on this line or a few before)
            for at in range(line, max(0, line - 4), -1):
                loop = _SHUFFLE_LOOP.search(source.line_text(at))
                if loop and loop.group(1) == step:
                    first = 32 if loop.group(2) == "warpSize" else int(loop.group(2))
                    where = f"the loop at line {at} starts `{step}` at {loop.group(2)}, and its first step"
                    break
        if not isinstance(first, int) or first < width:
            continue
        lanes = {"__shfl_down_sync": "lane + ", "__shfl_up_sync": "lane - ", "__shfl_xor_sync": "lane ^ "}[call.group(1)]
        group = "the warp" if width == 32 else f"its group of {width} lanes (width {width})"
        half = "16 (warpSize / 2)" if width == 32 else f"{width // 2} (width / 2)"
        outcome = "every lane gets its own value back (a GPU does that; `v += ...` then doubles v)"
        if call.group(1) == "__shfl_xor_sync" and first & 31:
            if width == 32:
                continue  # (lane ^ 48 is lane ^ 16 on a GPU: the lane mask's low 5 bits)
            # PTX's butterfly reads a lane of an earlier group, and gives a lane whose partner lies in a later one
            # its own value
            outcome = (f"a lane whose {lanes}{first} lies in a later group gets its own value back, and one whose "
                       f"partner lies in an earlier group gets that lane's value (lane {first & 31} gets lane 0's): "
                       "none gets a lane of its own group")
        found.append(f"line {line}: {call.group(1)} reads from {lanes}{first}: {where} reaches outside {group}, so "
                     f"{outcome}. A reduction's steps are half the width and down: start at {half}."
                     f"\n    {line}: {source.lines[line - 1].strip() if line <= len(source.lines) else ''}")
    return found


def _argument_texts(text: str, open_at: int) -> list[str] | None:
    """The arguments, as written, of the call (or parameter list) whose `(` is at `open_at` in `text`; None when
    it does not close (source.py's _call_arguments splits them)."""
    tokens = tokenize(text[open_at:])
    found = _call_arguments(tokens, 0) if tokens and tokens[0].text == "(" else None
    if not found:
        return None
    return [text[open_at + tokens[a].start:open_at + tokens[b - 1].end] if b > a else "" for a, b in found[0]]


#: GCC's -Wreturn-type, about a function of the learner's that may end without returning its value
_NO_RETURN = re.compile(rf"^{re.escape(SOURCE_NAME)}:(\d+):\d+: warning: (?:control reaches end of non-void function|"
                        r"no return statement in function returning non-void)")


#: GCC's -Wreturn-local-addr (a reference to a local variable or a parameter returned)
_LOCAL_REFERENCE = re.compile(rf"^{re.escape(SOURCE_NAME)}:(\d+):\d+: warning: (?:reference to local variable [‘'`](\w+)"
                              r"[’'`] returned|function returns address of local variable)")


def _local_reference_warnings(compiler_output: str, source: Source) -> list[str]:
    """GCC's 'reference to local variable returned' about a function of the learner's that returns a reference
    (`float& f() { float t; ...; return t; }`, `const float& larger(float a, float b)`), as nvcc warns it; a
    function returning a pointer to its local array has a warning of its own (_dangling_warnings)."""
    found = []
    for text in compiler_output.splitlines():
        hit = _LOCAL_REFERENCE.search(text)
        if not hit or not 0 < int(hit.group(1)) <= len(source.lines):
            continue
        line = int(hit.group(1))
        function = _function_name_at(source, line)
        if not function or not re.search(rf"&\s*{re.escape(function)}\s*\(", source.text):
            continue  # (not a function that returns a reference)
        what = f"its local variable `{hit.group(2)}`" if hit.group(2) else "one of its parameters or local variables"
        found.append(f"line {line}: `{function}` returns a reference to {what}, which ends when `{function}` returns, "
                     f"so the caller reads or writes memory that no longer holds it (nvcc warns: 'returning reference "
                     f"to local variable'; here the reference is often null). Return the value itself (drop the `&` "
                     f"from the return type), or take the place to write as a parameter.\n    {line}: "
                     f"{source.lines[line - 1].strip()}")
    return found


def _missing_return_warnings(compiler_output: str, source: Source) -> list[str]:
    """GCC's 'control reaches end of non-void function' about the learner's functions, as nvcc's 'missing return
    statement at end of non-void function' (GCC names the line of the function's closing brace)."""
    found = []
    for text in compiler_output.splitlines():
        hit = _NO_RETURN.search(text)
        if hit and 0 < int(hit.group(1)) <= len(source.lines):
            line = int(hit.group(1))
            function = _function_name_at(source, line)
            name = f"`{function}`" if function else "a function that returns a value"
            found.append(f"line {line}: {name} can reach its end without a return statement (nvcc warns too: 'missing "
                         f"return statement at end of non-void function'). A thread that gets there stops with a "
                         f"KernelError here; on a GPU its caller gets whatever a register held. Return a value on "
                         f"every path.\n    {line}: {source.lines[line - 1].strip()}")
    return found


def _uninitialized_warnings(compiler_output: str, source: Source) -> list[str]:
    """GCC's 'used uninitialized' warnings about the learner's variables, in a learner's words
    (nvcc warns "variable is used before its value is set" for the same code). GCC names the
    line where it noticed: a kernel line, or a runtime.h line inlined into one ("inlined from ...
    at kernel.cu:5"), which is then the line."""
    found, declared, uses, inlined_at = [], {}, [], None
    name_pattern = r"[‘'`]([\w.:]+)[’'`]"
    as_written = lambda name: re.sub(r"\.(?:\w+::)+", ".", name)  # a struct's member: GCC's `a.Acc::count` is `a.count`
    for text in compiler_output.splitlines():
        if text.startswith("In "):
            inlined_at = None  # a new chain of inlined calls
        at = re.search(rf"inlined from .* at {re.escape(SOURCE_NAME)}:(\d+):", text)
        if at and inlined_at is None:
            inlined_at = int(at.group(1))
        note = re.match(rf"{re.escape(SOURCE_NAME)}:(\d+):\d+: note: {name_pattern} (?:was )?declared here", text)
        if note:  # (`a` for a struct, or GCC names the member: `a.Acc::count`)
            declared.setdefault(as_written(note.group(2)).split(".")[0], int(note.group(1)))
        warning = re.match(rf"(\S+?):(\d+):\d+: warning: {name_pattern} (is|may be) used uninitialized", text)
        if warning:
            line = int(warning.group(2)) if warning.group(1) == SOURCE_NAME else inlined_at
            uses.append((line, as_written(warning.group(3)), warning.group(4) == "is"))
            inlined_at = None
    for line, name, certain in uses:
        if not certain and (line, name, True) in uses:
            continue  # (GCC says both "is" and "may be" of one read)
        base = name.split(".")[0]
        if base.startswith("__cc_") or base not in declared or not line or not 0 < line <= len(source.lines):
            continue  # (a variable of the emulator's, or one the learner's source does not declare)
        if not 0 < declared[base] <= line or "::" in name:
            continue
        word = rf"\b{re.escape(name)}\b"
        if line == declared[base]:  # GCC (12, some builds) names the declaration: the line is the first read
            for k in range(line + 1, min(len(source.lines), line + 30) + 1):  # after it (not a plain `v = ...`)
                text = source.lines[k - 1].split("//", 1)[0]
                if re.search(word, text) and not re.search(
                        rf"(?<![\w.>]){re.escape(name)}\s*=(?!=)(?![^;]*{word})", text):
                    line = k
                    break
        between = "\n".join(source.lines[declared[base] - 1:line])
        between = between.split(base, 1)[1] if base in between else ""  # after the declaration
        assigned = any(not re.search(word, m.group(1))  # `v = x[i];`, not `m = fmaxf(m, x[i]);`
                       for m in re.finditer(rf"(?<![\w.>]){re.escape(name)}\s*=(?!=)([^;]*)", between))
        if name != base and re.search(rf"(?<![\w.>]){re.escape(base)}\s*=(?!=)", between):
            continue  # the whole struct assigned (`a = make_acc();`): GCC tracks that better than a regex
        window = "\n".join(source.lines[declared[base] - 1:line + 10])
        if re.search(rf"shfl\w*\s*\([^;]*{word}", window) and re.search(rf"(?<![\w.>]){re.escape(name)}\s*=(?!=)", window):
            # `if (lane == 0) base = atomicAdd(...); base = __shfl_sync(mask, base, 0);`: the lane that set
            # it broadcasts it (the warp-aggregated atomic); the others' values are never used (GCC may
            # name the declaration's line, or the shuffle's)
            continue
        if not certain and (assigned or re.search(rf"&\s*{word}", between) or re.search(rf"&\s*{base}\b", between)):
            # A plain assignment comes first on some path (`if (inside) v = x[i];`): GCC cannot
            # tell whether each reading path took it, and neither can we; nvcc does not warn either
            # (PMPP's register-tiled stencil is correct code of this kind).
            continue
        at = f" (declared at line {declared[base]})" if declared[base] != line else ""
        if re.search(r"\.__", name):  # a member of CUDA's own type (`acc.__x` of a __half): the variable, as written
            name = base
            uninitialized_struct = True
        else:
            uninitialized_struct = False
        member = name != base
        if member:
            at = f" (a member of `{base}`, declared at line {declared[base]})"
        example = f"{base} = {{}}" if member or uninitialized_struct else f"{name} = 0"
        typed = [m.group(1) for m in re.finditer(  # `float sum;`, `float a, b, sum;`, in the declaring line
            rf"\b((?:unsigned\s+|signed\s+|long\s+)*[A-Za-z_][\w:]*)\s+(?:[\w\s,\[\]]*,\s*)?{re.escape(base)}\s*[;,]",
            source.lines[declared[base] - 1])]
        if typed and typed[-1] not in ("return", "else", "case", "extern", "const", "static"):
            example = f"{typed[-1]} {example}"
        first = (f"(`{example};` sets every member to 0), or set `{name}` before the line that reads it" if member
                 else f"(`{example};`)")
        message = (f"line {line}: `{name}`{at} {'is' if certain else 'may be'} read before it is given a value: on a "
                   f"GPU it then holds whatever its register held, often a different value each run. Give it its "
                   f"first value where you declare it {first}.\n    {line}: {source.lines[line - 1].strip()}")
        if message not in found:
            found.append(message)
    return found


def _declares_function(text: str, name: str) -> bool:
    """Whether the source declares the function `name` (`float name(float);`, `__device__ int* name(...)`): a type
    or a `*` before the name, not an operator or `return` (a call)."""
    for match in re.finditer(rf"([\w>*&]+)\s*\b{re.escape(name)}\s*\(", text):
        before = match.group(1)
        if before not in ("return", "else", "case", "do", "new", "delete", "throw", "sizeof", "co_return") and (
                before[-1] in ">*&" or before[-1].isalnum() or before[-1] == "_"):
            return True
    return False


@functools.lru_cache(maxsize=1)
def _cuda_function_names() -> tuple:
    """The names of CUDA's functions that runtime.h defines (`__expf`, `__fsqrt_rn`, `atomicAdd`, ...)."""
    header = RUNTIME_HEADER.read_text(encoding="utf-8")
    found = set(re.findall(r"#define\s+(__[a-z]\w*)\(", header))
    found |= set(re.findall(r"\b(?:float|double|int|unsigned(?: int)?|long long|__half2?|__nv_bfloat162?|void)\s+"
                            r"(__[a-z][a-z0-9_]*|[a-z]\w*)\s*\(", header))
    return tuple(sorted(n for n in found if not n.startswith("__cc")))


def _demangled(symbol: str) -> str:
    """A C++ symbol as the source spells it (`_Z1gf`: `g(float)`), by c++filt where the system has it."""
    try:
        done = subprocess.run(["c++filt", symbol], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return symbol
    return done.stdout.strip() or symbol if done.returncode == 0 else symbol


class Module:
    """One compiled kernel source: the loaded library and a launcher per kernel."""

    def __init__(self, path: Path, source: Source, sanitized: bool = False):
        self.path = path
        self.source = source
        self.sanitized = sanitized  # built with the sanitizer
        try:
            self.library = ctypes.CDLL(str(path))
        except OSError as error:  # a function declared and called, never defined: what nvcc's link refuses too
            missing = re.search(r"undefined symbol: (\S+)", str(error))
            name = _demangled(missing.group(1)) if missing else ""
            if not missing or not re.search(rf"\b{re.escape(re.split(r'[(<]', name)[0].split('::')[-1])}\b",
                                            source.text):
                raise  # (not one of the source's own names)
            path.unlink(missing_ok=True)  # (not kept in the cache)
            bare = re.split(r"[(<]", name)[0].split("::")[-1]
            if bare.startswith("__") and not _declares_function(source.text, bare):
                # (the C library declares `__sqrtf`, `__tanhf`, ... for its own use, so g++ took the call)
                close = difflib.get_close_matches(bare, _cuda_function_names(), n=1, cutoff=0.75)
                raise CompileError(
                    f"the source calls `{bare}`, which is not one of CUDA's functions and which it does not define "
                    f"(NVRTC: identifier \"{bare}\" is undefined)"
                    + (f": did you mean `{close[0]}`?" if close else ": check its name in the CUDA Math API's list "
                       "of intrinsics (__expf, __fdividef, __fsqrt_rn, ...)")) from None
            raise CompileError(
                f"the source uses `{name}`, which it declares but never defines (nvcc stops "
                "there too: 'Unresolved extern function'): give the function its body, `__device__ float "
                "name(float x) { ... }`, or define the variable, in the source string") from None
        self._take_output = self.library["__cc_take_output"]
        self._take_output.restype = ctypes.c_void_p
        self._take_output.argtypes = [ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_int)]
        self._launchers, self._exports = {}, {}
        self._variables = None
        # the memory owners of the argument arrays of its launches, by address (weak references), and the arrays
        # that __device__ pointer variables still pointed into once their owners were gone: the variable's name
        self.owners: dict = {}
        self.stale: dict = {}
        # the argument arrays of this module's earlier launches, by address: (name, elements, element
        # size), for a fault through a pointer that a kernel kept in a __device__ variable (the last 64)
        self.earlier: dict = {}

    def export(self, name: str, restype, *argtypes):
        """runtime.h's exported function `name`, with its C types (looked up once: ctypes makes a new
        function object at each lookup)."""
        function = self._exports.get(name)
        if function is None:
            function = self._exports[name] = self.library[name]
            function.restype, function.argtypes = restype, list(argtypes)
        return function

    def launcher(self, name: str):
        if name not in self._launchers:
            function = getattr(self.library, f"__cc_launch_{_symbol(name)}")
            function.restype = ctypes.c_int
            function.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(_Fault)]
            self._launchers[name] = function
        return self._launchers[name]

    def release_memory(self) -> None:
        """Give back what the module keeps between launches (it allocates again when launched)."""
        release = self.library["__cc_release_memory"]
        release.argtypes, release.restype = [], None
        release()

    def variables(self) -> dict:
        """The __constant__ and __device__ variables by address: (name, elements, element size), as
        `arrays` has the arguments (for messages)."""
        if self._variables is None:
            self._variables = {}
            for name in self.source.globals:
                memory = self.global_memory(name)
                item = getattr(self.library, f"__cc_global_item_{_symbol(name)}")
                item.restype, item.argtypes = ctypes.c_size_t, []
                size = max(1, int(item()))
                self._variables[memory.ctypes.data] = (name, memory.size // size, size)
        return self._variables

    def global_memory(self, name: str):
        """The bytes of a __constant__ or __device__ variable, as a NumPy uint8 array: writable, except
        for a variable declared const (`const __constant__ float w[3] = {...};`), whose bytes the
        compiler put in read-only memory: writing them would crash the process."""
        function = getattr(self.library, f"__cc_global_{_symbol(name)}")
        function.restype = ctypes.c_void_p
        function.argtypes = [ctypes.POINTER(ctypes.c_size_t)]
        size = ctypes.c_size_t()
        address = function(ctypes.byref(size))
        memory = _bytes_at(address, size.value)
        if name in self.source.const_globals:
            memory.flags.writeable = False
        return memory

    def take_output(self) -> tuple[str, bool]:
        """What the kernel printed since the last call, and whether some was dropped."""
        length, truncated = ctypes.c_size_t(), ctypes.c_int()
        address = self._take_output(ctypes.byref(length), ctypes.byref(truncated))
        text = ctypes.string_at(address, length.value).decode("utf-8", "replace") if length.value else ""
        return text, bool(truncated.value)

    def take_trace(self):
        """The access and branch records of the last traced launch (a NumPy copy), and whether
        some were dropped at the limit given to ``launch``."""
        function = self.library["__cc_take_trace"]
        function.restype = ctypes.c_void_p
        function.argtypes = [ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_int)]
        length, full = ctypes.c_size_t(), ctypes.c_int()
        address = function(ctypes.byref(length), ctypes.byref(full))
        if not length.value:
            return np.zeros(0, TRACE_RECORD), bool(full.value)
        raw = (ctypes.c_uint8 * (length.value * TRACE_RECORD.itemsize)).from_address(address)
        records = np.frombuffer(raw, TRACE_RECORD).copy()
        release = self.library["__cc_trace_release"]
        release.restype = None
        release()
        return records, bool(full.value)

    def shared_regions(self) -> list[tuple[int, int, str, bool]]:
        """(base address, bytes, name, is extern __shared__) of each __shared__ array the module
        registered, by region index (the ``region`` of trace records)."""
        function = self.library["__cc_shared_region_info"]
        function.restype = ctypes.c_int
        function.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_uint64),
                             ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_int)]
        out, i = [], 0
        base, size, name, dynamic = ctypes.c_uint64(), ctypes.c_uint64(), ctypes.c_char_p(), ctypes.c_int()
        while function(i, ctypes.byref(base), ctypes.byref(size), ctypes.byref(name), ctypes.byref(dynamic)):
            out.append((base.value, size.value, (name.value or b"").decode(), bool(dynamic.value)))
            i += 1
        return out

    def lines_of(self, code_offsets) -> dict[int, int | None]:
        """``line_of`` for many code addresses at once (one addr2line run)."""
        offsets = sorted({int(o) for o in code_offsets if o})
        tool = shutil.which("addr2line") or shutil.which("llvm-addr2line")
        result: dict[int, int | None] = {o: None for o in offsets}
        if not offsets or not tool:
            return result
        queries = [(o, o - 1 - back) for o in offsets for back in range(0, 24) if o - 1 - back > 0]
        try:
            done = subprocess.run([tool, "-a", "-i", "-e", str(self.path), *(hex(q) for _, q in queries)],
                                  capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.SubprocessError):
            return result
        answers = re.split(r"^0x[0-9a-f]+$", done.stdout, flags=re.M)[1:]
        for (offset, _), answer in zip(queries, answers):
            if result[offset] is not None:
                continue
            for match in re.finditer(re.escape(SOURCE_NAME) + r":(\d+)", answer):
                if int(match.group(1)) > 0:
                    result[offset] = int(match.group(1))
                    break
        return result

    def line_of(self, code_offset: int) -> int | None:
        """The kernel-source line of a code address (via addr2line), or None."""
        chain = self.lines_at(code_offset)
        return chain[0] if chain else None

    def lines_at(self, code_offset: int) -> list[int]:
        """The kernel-source line of a code address and, where a helper was inlined there, the lines
        that called it (innermost first), or []."""
        # The address itself first, then the bytes before it: an optimised instruction may
        # carry no line of its own (line 0), while its neighbours do.
        answers = self._lines([code_offset - 1 - back for back in range(0, 24)] if code_offset else [])
        return next((lines for lines in answers if lines), [])

    def lines_of_calls(self, return_addresses) -> list[list[int]]:
        """lines_at for each of some calls' return addresses, in one run of addr2line: the call
        instruction just before a return address has its own line."""
        return self._lines([address - 1 for address in return_addresses])

    def _lines(self, addresses: list[int]) -> list[list[int]]:
        """For each code address, its line in the learner's source and the lines of the calls it
        was inlined into (innermost first); [] for an address outside the source."""
        tool = shutil.which("addr2line") or shutil.which("llvm-addr2line")
        addresses = [address for address in addresses if address > 0]
        if not addresses or not tool:
            return [[] for _ in addresses]
        try:
            done = subprocess.run([tool, "-a", "-i", "-e", str(self.path), *map(hex, addresses)],
                                  capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            return [[] for _ in addresses]
        # -a starts each address's answer with the address; -i adds the inlined callers, so
        # the first line in the learner's file is the one, and the next ones called it.
        found = []
        for answer in re.split(r"^0x[0-9a-f]+$", done.stdout, flags=re.M)[1:]:
            lines = [int(m.group(1)) for m in re.finditer(re.escape(SOURCE_NAME) + r":(\d+)", answer)]
            found.append([n for n in lines if n > 0] if lines and lines[0] > 0 else [])
        return found


_modules: dict[tuple, Module] = {}
_lock = threading.Lock()  # guards _modules and _building
_building: dict[tuple, threading.Lock] = {}  # a lock per module being compiled
# One launch at a time: ctypes lets other Python threads run meanwhile, but the runtime's state
# (threadIdx, the fibers, the signal handlers) is global. A GPU queues launches too.
_launch_lock = threading.Lock()


def _print(text: str) -> None:
    """A launch's printf output, to Python's sys.stdout (a notebook's cell output), where there is one (pythonw, or
    `sys.stdout = None`, has none: Python's own print then prints nothing, and so does this)."""
    if sys.stdout is not None and text:
        sys.stdout.write(text)


def _locks_after_fork() -> None:
    """A process forked while another thread held one of these (a DataLoader worker forked during a launch): the
    child has only the forking thread, so a lock held by any other would never be released there, and its first
    launch would wait forever. The child starts with fresh ones (runtime.h restarts its threads: __cc_watch_after_fork)."""
    global _lock, _launch_lock, _building
    _lock, _launch_lock, _building = threading.Lock(), threading.Lock(), {}


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_locks_after_fork)


def load(source: Source, options=(), kernel: str = "", extra=(), sanitize: bool = False,
         trace: bool = False, fast: bool = False) -> Module:
    """The compiled module for `source`: from memory, from the disk cache, or compiled now.
    `sanitize` compiles in racecheck, initcheck and the read-only check (a separate module);
    `trace` also records every access and branch (kernel.profile; implies `sanitize`);
    `fast` (a plain build only) compiles in fast.py's path for blocks proved in bounds (a separate module)."""
    extra = tuple(extra)
    sanitize = sanitize or trace
    fast = fast and not sanitize
    key = (source.text, tuple(options), tuple(k.name for k in extra), sanitize, trace, fast)
    with _lock:
        if key in _modules:
            return _modules[key]
        building = _building.setdefault(key, threading.Lock())
    with building:  # one build per module; different modules compile at the same time
        with _lock:
            if key in _modules:
                return _modules[key]
        if not RUNTIME_HEADER.exists():
            raise CompileError(
                f"{RUNTIME_HEADER} is missing: this installation of the course lacks its package "
                "data. Reinstall it (pip install --force-reinstall ...) or run from a checkout."
            )
        host_only = [] if _DEFAULT_DEVICE & set(options) else source.host_only
        if host_only or source.nvcc_refuses:
            raise CompileError(refused_message(host_only, source.nvcc_refuses))
        uncalled = _UNCALLED.search(without_comments(source.text))
        if uncalled:
            name, line = uncalled.group(1), source.text.count("\n", 0, uncalled.start(1)) + 1
            raise CompileError(
                (f"kernel '{kernel}': " if kernel else "") + f"line {line}: `{name};` names the function without "
                f"calling it, so it does nothing (nvcc compiles it with only a warning, 'expression has no effect', "
                f"and the kernel runs without the {'fence' if 'fence' in name else 'barrier'}): write `{name}();`")
        compiler = find_compiler()
        kept, defines = _user_defines(_compiler_flags(options))
        unit = translation_unit(source, extra, trace, defines)
        # A sanitized build at -O1: it compiles about a fifth faster (an exercise check's wait is mostly
        # its compile) and runs its instrumented accesses up to 1.4x slower (make bench measures both).
        # (and with frame pointers, so that a fault inside a helper that -O1 did not inline names the
        # lines that called it: runtime.h's __cc_note_callers)
        sanitizing = ["-D__CC_SANITIZE", "-O1", *_FRAME_POINTERS, *_pattern_flags(compiler)] if sanitize else []
        platform_flags = _platform_flags(compiler)
        flags = (kept + sanitizing + ([FAST_PATH_ON] if fast else [])
                 + (["-D__CC_TRACE"] if trace else []) + platform_flags
                 + (["-fno-strict-aliasing"] if source.puns and not sanitize else [])  # (-O1 has none)
                 # (sanitized: a value that does not fit may be an unwritten shared element's fill, which the
                 # thread carries on with to show whether a barrier is missing: runtime.h's __cc_ubsan_recover)
                 + ([f"-fsanitize-recover={_RECOVERABLE_CHECKS}"] if sanitize and _UNDEFINED in platform_flags else []))
        target = cache_dir() / f"{_cache_key(unit, flags, compiler)}.so"
        if target.exists() and (target.is_symlink() or target.stat().st_uid != os.getuid() or not _whole(target)):
            target.unlink()  # not ours, or cut short (a cache folder synced in part): never load it, build our own
        if not target.exists():
            _compile(source, unit, flags, compiler, target, kernel, _include_folders(options))
            _prune_cache(target.parent, keep=target)
        else:
            try:
                os.utime(target)  # recently used: the last to go when the cache is pruned
            except OSError:
                pass
        module = Module(target, source, sanitize)
        if sanitize and not trace and _unset_struct_local(source.text):
            # A sanitized build notes every access to a struct's members (`__cc_r(a.count)` takes the member's
            # address), which hides from GCC a member read before it has a value: the plain build's compile
            # finds it (`Acc a; a.sum = x; out = a.sum / a.count;`), and its warning is shown (once) from there.
            load(source, options, kernel, extra, sanitize=False)
        _check_constant_memory(module, kernel)
        warnings_file = target.with_suffix(".warnings")
        compiler_remarks = warnings_file.read_text(encoding="utf-8") if warnings_file.exists() else ""
        # (from this compile or an earlier one: shown once per process)
        remarks = (_uninitialized_warnings(compiler_remarks, source) + _missing_return_warnings(compiler_remarks, source)
                   + _local_reference_warnings(compiler_remarks, source))
        cas = [f"line {line}: {what}\n    {line}: {source.lines[line - 1].strip()}" for line, what in source.cas_misuse
               if 0 < line <= len(source.lines)]
        for message in remarks + _dangling_warnings(source) + _aliased_shared_warnings(source) \
                + _raw_member_warnings(source) + _idle_shuffle_warnings(source) + cas:
            # (once per process and source, whichever line a build's compiler named: the plain and the
            # sanitized build may name different reads of one variable)
            once = (source.text, re.sub(r"^line \d+: |\n    \d+: .*$", "", message) if message in remarks else message)
            if once not in _warned:
                _warned.add(once)
                warnings.warn(f"kernel source {SOURCE_NAME}, {message}", KernelWarning, stacklevel=_user_level())
        with _lock:
            _modules[key] = module
            _building.pop(key, None)
        return module


#: The kernel cache keeps at most this many bytes of compiled modules: past it, a compile
#: removes the least recently used ones (a module is about 50 KB; each runtime.h keeps its own).
CACHE_LIMIT_BYTES = 512 * 1024 * 1024


def _prune_cache(folder: Path, keep: Path, limit: int | None = None) -> None:
    """Remove the least recently used compiled modules (and their .warnings) until the cache
    holds at most 80 % of `limit` bytes, when it holds more than `limit`. Modules this process
    has loaded, and any used in the last hour (another process may be about to load it), stay;
    a module another process has loaded keeps working (the file's data lives until it closes)."""
    limit = CACHE_LIMIT_BYTES if limit is None else limit
    try:
        entries = []
        with os.scandir(folder) as found:
            for entry in found:
                if entry.name.endswith(".so") and entry.is_file(follow_symlinks=False):
                    info = entry.stat(follow_symlinks=False)
                    entries.append((info.st_mtime, info.st_size, Path(entry.path)))
    except OSError:
        return
    total = sum(size for _, size, _ in entries)
    if total <= limit:
        return
    loaded = {m.path for m in _modules.values()} | {keep}
    recent = time.time() - 3600
    for mtime, size, path in sorted(entries):
        if total <= 0.8 * limit:
            break
        if path in loaded or mtime > recent:
            continue
        try:
            path.unlink()
            path.with_suffix(".warnings").unlink(missing_ok=True)
            total -= size
        except OSError:
            pass


#: A GPU's __constant__ memory: 64 KiB for all of a module's __constant__ variables.
MAX_CONSTANT_BYTES = 64 * 1024


def _check_constant_memory(module: Module, kernel: str) -> None:
    """nvcc refuses a module whose __constant__ variables need more than 64 KiB: so does this backend."""
    sizes = {name: count * size for name, count, size in module.variables().values()
             if name in module.source.constant_globals}
    total = sum(sizes.values())
    if total > MAX_CONSTANT_BYTES:
        listed = ", ".join(f"{name} ({bytes_:,} bytes)" for name, bytes_ in sorted(sizes.items(), key=lambda x: -x[1]))
        raise CompileError(
            f"kernel '{kernel}' does not compile: its __constant__ variables need {total:,} bytes ({listed}), but a "
            f"GPU has {MAX_CONSTANT_BYTES:,} bytes (64 KiB) of constant memory. Keep large tables in global memory: "
            "pass them as a `const` argument array (read-only data is cached too).")


# ----------------------------------------------------------------------------------------
# Launching and explaining faults
# ----------------------------------------------------------------------------------------

#: How many worker threads run a launch's blocks at most (runtime.h's __CC_MAX_WORKERS).
MAX_THREADS = 256


_CORES = [1, -1e9]  # the cores this process may use, and when worker_threads last asked


def worker_threads() -> int:
    """How many worker threads run the blocks of a CPU launch: $COURSE_CUDA_THREADS, else one per
    core this process may use (its CPU affinity, capped by a container's CPU quota: cgroup_cpu_limit).
    1 runs the blocks one after another. Sanitized and traced launches
    always use one (see runtime.h)."""
    wanted = os.environ.get("COURSE_CUDA_THREADS", "").strip()
    if not wanted:
        now = time.monotonic()
        if now - _CORES[1] > 1.0:  # (asked at every launch: the affinity is read again once a second at most)
            try:
                cores = len(os.sched_getaffinity(0))
            except (AttributeError, OSError):  # macOS has no sched_getaffinity
                cores = os.cpu_count() or 1
            _CORES[:] = [cores, now]
        cores = _CORES[0]
        quota = cgroup_cpu_limit()
        return max(1, min(cores, quota or cores, MAX_THREADS))
    try:
        count = int(wanted)
    except ValueError:
        count = 0
    if not 1 <= count <= MAX_THREADS:
        raise ValueError(
            f"COURSE_CUDA_THREADS={wanted!r}: use a whole number of worker threads from 1 to {MAX_THREADS} "
            "(1 runs the blocks one after another), or unset it to use every core this process may use")
    return count


#: Where Linux shows control groups, and this process's own (cgroup_cpu_limit).
CGROUP_ROOT, PROC_CGROUP = Path("/sys/fs/cgroup"), Path("/proc/self/cgroup")


@functools.cache  # (read once: worker_threads() runs at every launch)
def cgroup_cpu_limit() -> int | None:
    """The CPUs a container's quota lets this process use, rounded up (`docker --cpus=1.5` gives 2), or None
    where no quota is set. A JupyterHub or Binder pod sees every core of its node in its affinity but may use
    one or two of them: as many worker threads as the node has cores would each get a sliver of the quota,
    and a launch would wait for the slowest. Reads cgroup v2's cpu.max and v1's cpu.cfs_quota_us, in the
    process's own group and each group above it (the smallest quota counts)."""
    def limit(directory: Path) -> float | None:
        try:
            if (directory / "cpu.max").is_file():
                quota, period = (directory / "cpu.max").read_text().split()[:2]
                return None if quota == "max" else int(quota) / int(period)
            quota = int((directory / "cpu.cfs_quota_us").read_text())
            period = int((directory / "cpu.cfs_period_us").read_text())
            return quota / period if quota > 0 and period > 0 else None
        except (OSError, ValueError):
            return None

    try:
        groups = PROC_CGROUP.read_text().splitlines()
    except OSError:
        return None
    directories = []
    for entry in groups:
        _, controllers, path = (entry.split(":", 2) + ["", ""])[:3]
        if controllers == "":  # cgroup v2: one tree, cpu.max in each group
            mounts = [CGROUP_ROOT, CGROUP_ROOT / "unified"]
        elif "cpu" in controllers.split(","):  # v1: the cpu controller's own tree
            mounts = [CGROUP_ROOT / name for name in (controllers, "cpu", "cpu,cpuacct", "cpuacct,cpu")]
        else:
            continue
        relative = Path(path.strip() or "/").relative_to("/")
        for mount in mounts:
            directories += [mount / relative, *[mount / parent for parent in relative.parents]]
    limits = [value for value in map(limit, dict.fromkeys(directories)) if value]
    return max(1, math.ceil(min(limits) - 1e-9)) if limits else None


#: The device heap's size for malloc and new in kernels (set_heap_size): a GPU's default, 8 MiB.
HEAP_BYTES = [8 << 20]


def launch(module: Module, kernel: Kernel, grid, block, args: list, shared_mem: int,
           time_limit: float, arrays: dict, trace_limit: int | None = None, shared_limit: int = MAX_SHARED_BYTES):
    """Run `kernel` for every block and thread; print its printf output; raise on a fault.
    `shared_limit`: the shared memory a block may use in all (MAX_SHARED_OPTIN for a kernel that opted in).

    `args` holds one (data address, element count, scalar bits) per parameter; `arrays` maps
    the address of each argument array to (parameter name, element count) for messages.
    With `trace_limit` (a module loaded with trace=True), returns the launch's trace records
    (at most that many) and whether some were dropped.
    """
    packed = (_Arg * max(1, len(args)))(*args)
    config = (ctypes.c_longlong * 9)(*grid, *block, shared_mem, max(1, int(time_limit * 1000)), worker_threads())
    fault = _Fault()
    records = None
    # A sanitized launch keeps its memory as it was, to run again should a shuffle read a lane that
    # brings no value (_depends_on_undefined), or should one thread read an element of global memory
    # that another writes (_race_changes_results). (Not for a kernel that reads the clock: its results
    # differ from run to run anyway.)
    memory = {**module.variables(), **arrays}
    before = ({address: _bytes_at(address, count * size).copy() for address, (_, count, size) in memory.items()}
              if module.sanitized and trace_limit is None and not _READS_CLOCK.search(module.source.text) else None)
    guarded = _read_only_snapshots(module, kernel, args, arrays)
    _poison_stale_pointers(module, arrays)
    with _launch_lock:
        if trace_limit is not None:
            setup = module.library["__cc_trace_setup"]
            setup.argtypes, setup.restype = [ctypes.c_size_t], None
            setup(int(trace_limit))
        # (a race whose effect only another run shows may stop this one: it can run again)
        _setting(module, "__cc_set_heap_limit", ctypes.c_longlong)(HEAP_BYTES[0])
        _setting(module, "__cc_set_shared_limit", ctypes.c_longlong)(shared_limit)
        rerun = _setting(module, "__cc_set_race_rerun") if before is not None else None
        if rerun:
            rerun(4)
        try:
            status = module.launcher(kernel.name)(config, packed, ctypes.byref(fault))
        finally:
            if rerun:
                rerun(0)
        _keep_warm(module)
        text, truncated = module.take_output()
        if trace_limit is not None:
            records = module.take_trace()
        leaked = _leaked_blocks(module, memory, [(args[i].data, args[i].count) for i, p in enumerate(kernel.params)
                                                 if p.by_value_struct and i < len(args) and args[i].data]) \
            if module.sanitized and status == OK else []
        cycle = _lock_cycle(module) if module.sanitized and status == OK else None
    if text or truncated:
        _print(text + ("\n[printf output past 1 MiB was dropped, as on a GPU]\n" if truncated else ""))
    changed = _restore_read_only(guarded)  # (after a fault too: the fault is the message then)
    for address, (name, count, size, *_) in arrays.items():
        module.earlier.pop(address, None)
        module.earlier[address] = (name, count, size, kernel.name)
    while len(module.earlier) > 64:
        del module.earlier[next(iter(module.earlier))]
    if status in (INTERRUPTED, TIMEOUT):  # (its blocks of the device heap go back: runtime.h)
        module.export("__cc_heap_drop_stopped_launch", ctypes.c_longlong)()
    if status == INTERRUPTED:
        raise KeyboardInterrupt(f"kernel '{kernel.name}' interrupted")
    if status == OK and changed:
        raise _read_only_error(module, kernel, *changed)
    effect = None  # what another order of a racing read and write changed, for the message
    if status != OK and fault.kind == GLOBAL_RACE and fault.mask == 4 and not _count_compared(module, fault, memory):
        fault.mask = 0  # (a total read back, not a count compared: the reruns decide, as for any such read)
    if status != OK and fault.kind == GLOBAL_RACE and fault.mask == 8 and before is not None:
        # a read beside another thread's store of the value the element held: with other values there, does
        # the order matter? If not, the launch runs again as a first run with such pairs let go
        effect = _same_value_race(module, kernel, config, packed, memory, arrays, before,
                                  _float_arrays(kernel, args, arrays), fault)
        if effect is None:
            status, fault, rest = _run_again(module, kernel, config, packed, before, "__cc_set_same_values_go", 1,
                                             then=("__cc_set_race_rerun", 4))
            if rest.startswith(text):
                _print(rest[len(text):])
            text = rest
            changed = _restore_read_only(guarded) if status == OK else changed
            if changed and status == OK:
                raise _read_only_error(module, kernel, *changed)
    if status != OK and fault.kind == GLOBAL_RACE and before is not None and _plain_read_and_write(fault):
        found = _race_changes_results(module, kernel, config, packed, memory, before, _float_arrays(kernel, args, arrays),
                                      fault.base)
        if isinstance(found, tuple):
            # the order of the read and the write changes nothing: the launch as run (or, past that race,
            # the launch stopped at another bug: that one is the message)
            status, fault, rest = found
            changed = _restore_read_only(guarded)
            if rest.startswith(text):
                _print(rest[len(text):])
            if changed and status == OK:
                raise _read_only_error(module, kernel, *changed)
        else:
            effect = found
    if status != OK and fault.kind == RACE and before is not None:
        effect = _shared_race_effect(module, kernel, config, packed, memory, arrays, before,
                                     _float_arrays(kernel, args, arrays))
        _restore_read_only(guarded)
    if status != OK:
        error = _explained(module, kernel, fault, time_limit, shared_mem,
                         {**module.earlier, **module.variables(), **arrays},
                         block_dim=tuple(block), args=args, grid_dim=tuple(grid))
        refused, note = module.export("__cc_heap_refused_bytes", ctypes.c_longlong)(), ""
        if refused:  # malloc or new gave NULL in this launch: the likely cause of what followed
            note = (
                f"\n  note: in this launch malloc (or new) returned NULL for a request of {refused:,} bytes: the "
                f"device heap holds {HEAP_BYTES[0]:,} bytes, a GPU's default (cudaLimitMallocHeapSize). Check "
                "what malloc returns, allocate less (once per block rather than per thread), or raise the limit "
                "with course.cuda.set_heap_size(bytes).")
        if effect or note:
            error = KernelError(f"{error}" + (f"\n  effect: {effect}" if effect else "") + note, kernel=error.kernel,
                                block=error.block, thread=error.thread, line=error.line)
        raise error
    if fault.length == 2:  # a shuffle read a lane outside its mask: is its undefined value in an array?
        found = _undefined_in(arrays)
        if not found and before is not None:
            found = _depends_on_undefined(module, kernel, config, packed, memory, before)
        if found:
            fault.kind = WARP_BAD_MASK
            raise _explained(module, kernel, fault, time_limit, shared_mem, memory, found, block_dim=tuple(block))
    if fault.length == 6 and before is not None:  # a whole element of shared memory read, some bytes unwritten
        numeric = {p.name for p in kernel.params if p.pointer and p.dtype}  # (struct arrays: padding may differ)
        found = _depends_on_undefined(module, kernel, config, packed, memory, before,
                                      compared={address for address, (name, _, _) in arrays.items() if name in numeric})
        if found:
            fault.kind = PARTIAL_READ
            raise _explained(module, kernel, fault, time_limit, shared_mem, memory, found, block_dim=tuple(block))
    if fault.length == 3 and fault.count >= REPEATED_ELEMENTS:
        message = (_redone_message(module, kernel, fault, arrays, tuple(block)) if fault.mask == 1
                   else _repeated_message(module, kernel, fault, arrays))
        if message:
            warnings.warn(message, KernelWarning, stacklevel=_user_level())
    if fault.length == 4:  # two threads set up cuRAND states with the same seed, subsequence and offset
        warnings.warn(_same_rng_message(module, kernel, fault), KernelWarning, stacklevel=_user_level())
    if leaked:
        warnings.warn(_leak_message(kernel, leaked), KernelWarning, stacklevel=_user_level())
    if cycle:
        warnings.warn(_lock_cycle_message(kernel, cycle, {**module.variables(), **arrays}, tuple(block)),
                      KernelWarning, stacklevel=_user_level())
    order = _float_order(module) if module.sanitized else None
    if order:
        warnings.warn(_float_order_message(module, kernel, order, {**module.variables(), **arrays}, tuple(block)),
                      KernelWarning, stacklevel=_user_level())
    return records


def _lock_cycle(module: Module) -> tuple[list, dict] | None:
    """ThreadSanitizer's lock-order-inversion check, for one launch (runtime.h's __cc_lock_update): the
    shortest cycle of locks (each taken by a thread that held the one before) among the locks that the
    launch released, as its edges (from, to, where each was taken (code offsets: __cc_lock_site), block,
    thread), with where each was taken (_lock_places); or None."""
    function = module.export("__cc_lock_graph", ctypes.c_longlong, ctypes.c_void_p, ctypes.c_longlong,
                             ctypes.POINTER(ctypes.c_longlong))
    released = ctypes.c_longlong()
    edges = function(None, 0, ctypes.byref(released))  # (how many: most launches take no lock)
    if edges < 2 or released.value < 2:
        return None
    out = np.zeros(6 * edges + released.value, np.int64)
    function(out.ctypes.data, out.size, ctypes.byref(released))
    table = out[:6 * edges].reshape(edges, 6)
    locks = set(out[6 * edges:6 * edges + released.value].tolist())
    table = [edge for edge in table.tolist() if edge[0] in locks and edge[1] in locks]
    places = _lock_places(module, {edge[k] for edge in table for k in (2, 3)})
    graph: dict[int, list] = {}
    for edge in table:
        if _waits_for(module.source, places[edge[3]][0], places[edge[2]][0]):
            graph.setdefault(edge[0], []).append(edge)
    best = None
    for start in sorted(graph):  # breadth first from each lock: the shortest way back to it
        paths, seen = [[edge] for edge in graph[start]], {start}
        while paths and best is None or (paths and len(paths[0]) < len(best)):
            following = []
            for path in paths:
                end = path[-1][1]
                if end == start:
                    if best is None or len(path) < len(best):
                        best = path
                    continue
                if end in seen:
                    continue
                seen.add(end)
                following += [path + [edge] for edge in graph.get(end, [])]
            paths = following
    return (best, places) if best else None


def _lock_places(module: Module, sites) -> dict:
    """Where locks were taken (__cc_lock_site's code offsets: the atomicCAS's, and its function's
    caller's), in one run of addr2line: site -> (the CAS's lines, innermost first; "line N" for the
    message, which is a `lock(&m[i])` helper's caller where the CAS lies in the helper)."""
    sites = sorted(sites)
    calls = module.lines_of_calls([offset for site in sites for offset in (site & 0xFFFFFFFF, site >> 32)])
    text, places = module.source.text, {}
    for k, site in enumerate(sites):
        inner, outer = calls[2 * k], calls[2 * k + 1]
        if len(inner) > 1:  # the helper was inlined: its caller's line is in the chain
            said = f"line {inner[-1]}"
        elif inner and outer and site >> 32 and _function_body(text, outer[0]) != _function_body(text, inner[0]):
            said = f"line {outer[-1]}"
        else:
            said = f"line {inner[0]}" if inner else "a line"
        places[site] = (inner, said)
    return places


def _waits_for(source: Source, taking: list | None, holding: list | None) -> bool:
    """Whether the atomicCAS at `taking` (its line, innermost first) waits for its lock, while the lock
    taken at `holding` stays held: it spins (`while (atomicCAS(...) != 0)`, or a loop around it), and
    that loop does not take the held lock again (a try-lock that gives the first lock back and tries
    both again cannot deadlock)."""
    if not taking:
        return False
    line = taking[0]
    if re.search(r"\b(?:while|for)\s*\(.*\batomicCAS", source.line_text(line)):
        return True
    loop = _innermost_loop(source.text, line, line)
    if loop is None:
        return False  # one try: `if (atomicCAS(&b, 0, 1) == 0) { ... }`
    held = holding[0] if holding else None
    return not (held and loop[0] <= held <= loop[1]
                and _function_body(source.text, held) == _function_body(source.text, line))


def _lock_cycle_message(kernel: Kernel, found: tuple, memory: dict, block_dim=(1, 1, 1)) -> str:
    """The lock-order cycle's warning (`found`: _lock_cycle's): which thread holds which lock and takes
    which next, at which line."""
    cycle, places = found
    total, cycle = len(cycle), cycle[:4]

    def name(address: int) -> str:
        return _element_named(memory, address, f"the lock at {address:#x}")

    def thread(block: int, linear: int) -> str:
        return f"thread {_thread_xyz(linear, block_dim)} of block {block}"

    steps = [f"{thread(block, tid)} took {name(a)} ({places[la][1]}) and then, holding it, {name(b)} ({places[lb][1]})"
             for a, b, la, lb, block, tid in cycle]
    more = f"; and {total - 4} more thread{'s' * (total > 5)} so" if total > 4 else ""
    first = name(cycle[0][0])
    return (f"kernel '{kernel.name}' can deadlock on a GPU: its locks are taken in a cycle. " + "; ".join(steps) + more
            + f": the last lock taken, {first}, is the one the first thread holds. Here the "
            "threads ran one after another, so each found its locks free; on a GPU they run at once, and each can "
            "hold its first lock while it waits for the next, which another holds: they wait for ever. Take locks "
            "in one order everywhere, e.g. the lower index first: `int lo = min(a, b), hi = max(a, b); lock(lo); "
            "lock(hi);` (a thread that holds one lock and takes another needs that order), or take one lock for "
            "the whole update.")


def _poison_stale_pointers(module: Module, arrays: dict) -> None:
    """A __device__ pointer variable that an earlier launch set to one of its argument arrays (`g_buf = buf;`),
    whose array Python has freed since: its bounds become empty, so that an access through it is the fault
    that names it (on a GPU it reads or writes freed memory, and here it could crash Python), not a store
    into whatever memory lies there now. An array still alive (held by a variable) is fine to use so, as on
    a GPU; one that this launch passes again too."""
    for address in arrays if module.stale else ():  # (memory given again: a new array there now)
        module.stale.pop(address, None)
    for name in module.source.global_pointers if module.owners else ():  # (and arrays of them: `float* kept[2]`)
        try:
            memory = module.global_memory(name)
        except (AttributeError, OSError):
            continue
        if not memory.nbytes or memory.nbytes % 32 or not memory.flags.writeable:  # (checked pointers: p, index,
            continue                                                              # count, array each)
        rows = memory.reshape(-1).view(np.uint64).reshape(-1, 4)
        for k, fields in enumerate(rows):
            count, array = int(fields[2]), int(fields[3])
            owner = module.owners.get(array)
            if not array or count in (0, 2 ** 64 - 1) or array in arrays or owner is None or owner() is not None:
                continue
            fields[2] = 0
            module.stale[array] = f"{name}[{k}]" if name in module.source.global_arrays else name


def _leaked_blocks(module: Module, memory: dict, structs=()) -> list[tuple[int, int, int, str]]:
    """compute-sanitizer's leak check (--leak-check full), for one launch: the device-heap blocks that
    this launch's malloc or new made and did not free, to which no pointer is left anywhere a later
    launch could find one: the launch's argument arrays, the module's __device__ variables, and
    (through them) other heap blocks. (base, bytes, line of the malloc or new, which of them) each.
    `memory`: address -> (name, elements, element size) of the argument arrays and variables;
    `structs`: (address, bytes) of the launch's by-value struct arguments.
    A pointer counts at any 8-byte-aligned place, as a value inside a block or one past its end.
    When a __device__ variable or a struct argument holds the address of other memory (an array that
    is no argument of this launch: `registry = r;` in an earlier launch), the blocks may be found from
    there, which cannot be looked through: then nothing is reported."""
    function = module.export("__cc_heap_live_blocks", ctypes.c_longlong, ctypes.c_void_p, ctypes.c_longlong)
    room = 64
    while True:
        table = np.zeros((room, 4), np.int64)
        count = function(table.ctypes.data, room)
        if count <= room:
            break
        room = count
    table = table[:count]
    fresh = (table[:, 3] & 1) == 1
    if not fresh.any():
        return []
    table = table[np.argsort(table[:, 0], kind="stable")]
    fresh = (table[:, 3] & 1) == 1
    starts, ends = table[:, 0].astype(np.uint64), (table[:, 0] + table[:, 1]).astype(np.uint64)
    reachable = ~fresh  # (blocks of earlier launches: their pointers may be anywhere the host keeps them)

    def pointed_to(address: int, size: int) -> np.ndarray:
        at = _region_of(_words_at(address, size), starts, ends)
        return np.unique(at[at >= 0])

    regions = [(address, count * size) for address, (_, count, size) in memory.items()]
    known = sorted(regions + [(int(b), max(1, int(n))) for b, n, _, _ in table])
    variables = [(address, count * size) for address, (_, count, size) in module.variables().items()]
    if _points_elsewhere(variables + list(structs), known):
        return []
    regions += list(structs)
    regions += [(int(b), int(n)) for (b, n, _, _), new in zip(table, fresh) if not new]
    while regions:
        found = np.unique(np.concatenate([pointed_to(a, n) for a, n in regions] or [np.zeros(0, np.int64)]))
        found = found[~reachable[found]]
        reachable[found] = True
        regions = [(int(table[i, 0]), int(table[i, 1])) for i in found]
    return [(int(b), int(n), int(line), ("malloc", "new", "new[]")[int(bits) >> 1 & 3])
            for b, n, line, bits in table[~reachable]]


def _points_elsewhere(roots: list, known: list) -> bool:
    """Whether one of `roots` ((address, bytes): __device__ variables, struct arguments) holds, at an
    8-byte-aligned place, the address of mapped memory outside the `known` regions (sorted (address,
    bytes)): memory the leak check cannot look through."""
    mapped = _mapped_regions()
    starts = np.array([a for a, _ in known], np.uint64)
    ends = np.array([a + n for a, n in known], np.uint64)
    for address, size in roots:
        words = _words_at(address, size)
        words = words[(words >= 1 << 16) & (words < 1 << 48) & (_region_of(words, starts, ends) < 0)]
        if any(mapped is None or any(low <= word < high for low, high in mapped) for word in words.tolist()):
            return True
    return False


def _words_at(address: int, size: int) -> np.ndarray:
    """The 8-byte-aligned words of the `size` bytes at `address` (where pointers are kept), as uint64."""
    skip = -address % 8
    if size - skip < 8:
        return np.zeros(0, np.uint64)
    return _bytes_at(address + skip, (size - skip) // 8 * 8).view(np.uint64)


def _region_of(words: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """For each word, the index of the region (sorted `starts`, their `ends`) it points into or one past,
    else -1."""
    if not len(starts) or not len(words):
        return np.full(len(words), -1, np.int64)
    at = np.searchsorted(starts, words, side="right").astype(np.int64) - 1
    return np.where((at >= 0) & (words <= ends[np.maximum(at, 0)]), at, -1)


def _mapped_regions() -> list | None:
    """The process's readable memory mappings ((low, high) each) from /proc/self/maps, or None where
    there is none (then every address-like value counts as mapped)."""
    try:
        with open("/proc/self/maps", encoding="ascii") as maps:
            fields = [line.split() for line in maps]
        return [tuple(int(x, 16) for x in f[0].split("-")) for f in fields if len(f) > 1 and f[1].startswith("r")]
    except OSError:
        return None


def _leak_message(kernel: Kernel, leaked: list) -> str:
    """The leak check's warning (compute-sanitizer reports leaks as errors, at the program's end)."""
    total, lines = sum(n for _, n, _, _ in leaked), sorted({line for _, _, line, _ in leaked if line})
    where = (f" at line{'s' * (len(lines) > 1)} {', '.join(map(str, lines[:5]))}{' ...' * (len(lines) > 5)}"
             if lines else "")
    makers = sorted({how for _, _, _, how in leaked})
    release = {"malloc": "free()", "new": "delete", "new[]": "delete[]"}
    blocks = f"{len(leaked):,} block{'s' * (len(leaked) > 1)}"
    return (f"kernel '{kernel.name}' leaks device-heap memory: {blocks} ({total:,} bytes) that {' and '.join(makers)} "
            f"made{where} "
            f"in this launch {'were' if len(leaked) > 1 else 'was'} not freed, and no pointer to "
            f"{'them' if len(leaked) > 1 else 'it'} is left in global memory. Device-heap memory lives until it "
            f"is freed, across launches: it is lost until the program ends, and each launch takes more of the "
            f"{HEAP_BYTES[0]:,}-byte heap until malloc returns NULL (compute-sanitizer --leak-check full reports "
            f"it too). {' or '.join(release[how] for how in makers)} each block once the thread is done with it, or "
            "keep the pointer in a "
            "__device__ variable or an argument array for a later kernel to free.")


def _read_only_snapshots(module: Module, kernel: Kernel, args, arrays: dict) -> list:
    """Read-only memory whose writes the build does not check, copied before the launch: every
    __constant__ variable (64 KiB at most; a scalar one is no checked array even with the sanitizer),
    and, without the sanitizer, the array of a `const T*` parameter that the source casts to a
    pointer without const (`((float*)x)[i] = v`: memcheck sees the cast pointer as writable).
    Each is (what, name, element size (0: not an array), the lines that write or cast it, the memory, its copy)."""
    source, guarded = module.source, []
    items = {name: size for name, _, size in module.variables().values()}
    for name in sorted(source.constant_globals):
        memory = module.global_memory(name)
        element = items.get(name, 1) if name in source.global_arrays else 0  # (0: a scalar, or a struct)
        guarded.append(("constant", name, element, _writing_lines(source, name), memory, memory.copy()))
    if not module.sanitized:
        # (not one that shares memory with a pointer parameter without const, `k(x, x, n)` in place: writes
        # through that one change it too, and a comparison cannot tell them from writes through the cast)
        writable = [(a.data, a.data + a.count) for q, a in zip(kernel.params, args) if q.pointer and not q.const
                    and a.data]
        for p, arg in zip(kernel.params, args):
            shared = any(start < arg.data + arg.count and arg.data < end for start, end in writable) if arg.data else False
            if p.pointer and p.const and arg.data and not shared and (lines := _cast_away_lines(source, p.name)):
                memory = _bytes_at(arg.data, arg.count)
                guarded.append(("parameter", p.name, arrays[arg.data][2], lines, memory, memory.copy()))
    return guarded


def _restore_read_only(guarded: list):
    """Puts back what the launch wrote into guarded memory; the first one it wrote, or None."""
    changed = None
    for what, name, element, lines, memory, before in guarded:
        if not np.array_equal(memory, before):
            first = int(np.flatnonzero(memory != before)[0])
            memory[...] = before
            changed = changed or (what, f"{name}[{first // element}]" if element else name, lines)
    return changed


def _pointer_casts(name: str) -> str:
    """A pattern for a cast of `name` (or of its address) to a pointer type: `(float*)x`, `(int*)&k`,
    `(float4*)(x + 4)`, `const_cast<float*>(x)` (callers look at whether the type says const)."""
    n = re.escape(name)
    return (rf"\(\s*(?!const\b)(?:[A-Za-z_][\w:<>,]*\s+)*[A-Za-z_][\w:<>,]*\s*\*+\s*\)\s*\(?\s*&?\s*{n}\b|"
            rf"\bconst_cast\s*<[^>]*>\s*\(\s*&?\s*{n}\b")


def _cast_away_lines(source: Source, name: str) -> tuple[int, ...]:
    """The lines that cast `name` (a const pointer parameter) to a pointer type without const:
    `(float*)x`, `(float4*)&x[4]`, `const_cast<float*>(x)`. (Asked at every launch: kept per source.)"""
    return _cast_away_in(tuple(source.lines), name)


@functools.lru_cache(maxsize=256)
def _cast_away_in(lines: tuple, name: str) -> tuple[int, ...]:
    pattern = re.compile(_pointer_casts(name))
    return tuple(number for number, text in enumerate(lines, 1)
                 if (match := pattern.search(text)) and not re.search(r"\bconst\b", match.group(0)))


def _writing_lines(source: Source, name: str) -> tuple[int, ...]:
    """The lines that write the __constant__ variable `name` (an assignment, ++, an atomic, a cast to a
    pointer; its declaration's initializer does not count). (Asked at every launch: kept per source.)"""
    return _writing_in(tuple(source.lines), name)


@functools.lru_cache(maxsize=256)
def _writing_in(lines: tuple, name: str) -> tuple[int, ...]:
    n = re.escape(name)
    lvalue = rf"\b{n}\s*(?:\[[^\]]*\]\s*|\.\s*\w+\s*)*"
    pattern = re.compile(rf"{lvalue}(?:[-+*/%&|^]|<<|>>)?=(?!=)|(?:\+\+|--)\s*{n}\b|{lvalue}(?:\+\+|--)|"
                         rf"\batomic\w*\s*\(\s*&?\s*{n}\b|{_pointer_casts(name)}")
    return tuple(number for number, text in enumerate(lines, 1) if "__constant__" not in text and pattern.search(text))


def _read_only_error(module: Module, kernel: Kernel, what: str, element: str, lines: list[int]) -> KernelError:
    source, line = module.source, lines[0] if lines else None
    where = f"line {line}: {source.line_text(line)}" if line else "a line this check cannot name"
    if len(lines) > 1:  # (the memory is compared after the launch: which of them wrote it is not known)
        where += f" (or line {', line '.join(map(str, lines[1:]))}: each writes or casts it)"
    name = element.split("[")[0]
    if what == "constant":
        message = (f"kernel '{kernel.name}' changed {element}, but {name} is __constant__ memory, which kernels may "
                   f"only read (on a GPU, a write from a kernel has no defined result: threads may go on reading the old value "
                   f"from the constant cache). {name} is as it was before the launch again")
        hint = ("Keep what the kernel computes in an output array or a __device__ variable; fill __constant__ "
                "memory from the host (get_global, cudaMemcpyToSymbol).")
    else:
        message = (f"kernel '{kernel.name}' wrote into {element}, but {name} is a `const` parameter, written through "
                   f"a pointer cast without const: the kernel promised to only read it. {name} is as it was "
                   "before the launch again")
        hint = ("Write results into an output array, or declare the parameter without const and pass a writable "
                "array. RawKernel(..., sanitize=True) names the thread and the line of the write.")
    return KernelError(f"{message}.\n  where: {where}\n  hint: {hint}", kernel=kernel.name, line=line)


def _bytes_at(address: int, count: int) -> np.ndarray:
    """The `count` bytes at `address` (an argument array or a module variable), as a writable view."""
    return np.ctypeslib.as_array((ctypes.c_uint8 * max(1, count)).from_address(address))[:count]


#: A barrier or fence named as a statement but not called (`__syncthreads;`).
_UNCALLED = re.compile(r"(?<![\w.>:])(__syncthreads|__syncwarp|__threadfence(?:_block|_system)?)\s*;")
_READS_CLOCK = re.compile(r"\b(clock|clock64)\s*\(")


def _setting(module: Module, name: str, kind=ctypes.c_int):
    """One of runtime.h's exported settings for the next launch (`void name(int)`, or of `kind`)."""
    return module.export(name, None, kind)


def _snapshot(like: dict) -> dict:
    """A copy of the bytes now at each address of `like` (address -> bytes, as many as it holds there)."""
    return {address: _bytes_at(address, len(saved)).copy() for address, saved in like.items()}


def _put_back(saved: dict) -> None:
    """Each address's bytes of `saved` (a _snapshot) back in place."""
    for address, was in saved.items():
        _bytes_at(address, len(was))[:] = was


def _run_again(module: Module, kernel: Kernel, config, packed, before: dict, setting: str, mode: int,
               then: tuple[str, int] | None = None):
    """Run a sanitized launch once more from the memory it started with (`before`), runtime.h's
    `setting` at `mode` for that run (and `then`, a second setting and its value, too): (its status, its
    fault record, its printf output)."""
    _put_back(before)
    setters = [(_setting(module, setting), mode)] + ([(_setting(module, then[0]), then[1])] if then else [])
    fault = _Fault()
    with _launch_lock:
        for setter, value in setters:
            setter(value)
        try:
            status = module.launcher(kernel.name)(config, packed, ctypes.byref(fault))
        finally:
            for setter, _ in setters:
                setter(0)
            text, _ = module.take_output()
    if status == INTERRUPTED:
        raise KeyboardInterrupt(f"kernel '{kernel.name}' interrupted")
    return status, fault, text


def _element_dtypes(kernel: Kernel) -> dict:
    """The NumPy dtype name of each pointer parameter's elements (of a vector type's lanes: float32 for float4)."""
    return {p.name: p.dtype for p in kernel.params if p.pointer and p.dtype}


def _depends_on_undefined(module: Module, kernel: Kernel, config, packed, memory: dict, before: dict,
                          compared: set | None = None):
    """After a sanitized launch in which a shuffle read a lane that brings no value, and whose
    results hold none of the pattern it gave (an integer sum, a fmaxf, a comparison lose it), or one
    that read a whole element of shared memory with bytes no thread wrote (runtime.h __cc_note_partial):
    run it again from the same memory, the undefined reads giving other bits (and shared memory another
    fill). Where the results differ, they depend on a value a GPU leaves undefined: (name, index, first
    value, second value) of the first element that differs, with the first run's results back in place.
    None when they agree. `compared`: the addresses whose results count (all of `memory` by default)."""
    first = _snapshot(before)
    try:  # (its printf output is dropped: the first run's was shown already)
        status, _, _ = _run_again(module, kernel, config, packed, before, "__cc_set_undefined_variant", 1)
    except KeyboardInterrupt:
        _put_back(first)
        raise
    dtypes = _element_dtypes(kernel)
    found = None
    for address, (name, count, size) in memory.items():
        was, now = first[address], _bytes_at(address, count * size)
        if found is None and (compared is None or address in compared) and (status != OK or not np.array_equal(was, now)):
            differs = np.flatnonzero(was != now)
            byte = int(differs[0]) if differs.size else 0
            index = byte // size if size else byte
            found = (name, index, _element_text(was, index, size, dtypes.get(name)),
                     _element_text(now, index, size, dtypes.get(name)) if differs.size else None)
        now[:] = was
    return found


_PRINTF_TAKES = {"i": "an int (4 bytes)", "l": "an 8-byte integer (long long, size_t)",
                 "f": "a floating-point number (a double)", "s": "a string (a char pointer)", "p": "a pointer"}
_PRINTF_IS = {"i": "an integer of 4 bytes or fewer (int, unsigned, char, short, bool)",
              "l": "an 8-byte integer (long long, size_t, or long)",
              "f": "a floating-point number (a float goes to printf as a double)",
              "p": "a pointer to numbers", "c": "a char pointer", "v": "a pointer",
              "h": "a __half (or __nv_bfloat16)", "H": "a __half2 (or __nv_bfloat162)",
              "V": "a vector type (float2, int4, uchar4, dim3 or uint3: threadIdx, blockIdx)"}


def _check_then_set(source: Source, name: str, line: int | None,
                    other_line: int | None) -> tuple[str, str, str | None] | None:
    """When `line` tests the array `name` in a condition (`if (!seen[v])`, `if (owner[u] == -1)`,
    `while (...)`) and `other_line` stores a value into it that is not computed from it (`seen[v] = 1;`,
    `level[v] = depth;`): (the value, the element as the store writes it, the "unset" value the test
    compares with: 0 for `!seen[v]`, None when the test does not say); else None."""
    if not line or not other_line:
        return None
    n = re.escape(name)
    element = r"(?:[^\[\]]|\[[^\[\]]*\])*"
    tested = re.search(rf"\b(?:if|while)\s*\(.*\b{n}\s*\[", source.line_text(line))
    stored = re.search(rf"\b({n}\s*\[{element}\])\s*=(?!=)\s*([^;]+?)\s*;", source.line_text(other_line))
    if not tested or not stored or re.search(rf"\b{n}\b", stored.group(2)):
        return None
    unset = None
    test = source.line_text(line)
    if compared := (re.search(rf"\b{n}\s*\[{element}\]\s*==\s*(-?[\w.]+)", test)
                    or re.search(rf"(-?[\w.]+)\s*==\s*{n}\s*\[", test)):
        unset = compared.group(1)
    elif re.search(rf"!\s*{n}\s*\[", test):
        unset = "0"
    return stored.group(2), re.sub(r"\s+", "", stored.group(1)), unset


def _subscript_names(text: str) -> set[str]:
    """The names the subscripts in `text` are made of (`y` and `w` and `x` of `out[y * w + x]`)."""
    return {name for inner in re.findall(r"\[([^\[\]]*)\]", text) for name in re.findall(r"[A-Za-z_]\w*", inner)}


def _index_names(source: Source, line: int) -> set[str]:
    """The names the subscripts on `line` are made of, with those of the assignments on the four lines
    before it that set them (`mid = (lo + hi) / 2;` before `a[mid]` adds lo and hi); empty where the
    line has no subscript."""
    names = _subscript_names(source.line_text(line))
    for at in range(line, max(0, line - 5), -1):
        for target, value in re.findall(r"\b([A-Za-z_]\w*)\s*(?:[-+*/]?=)(?!=)\s*([^;,]+)", source.line_text(at)):
            if target in names:
                names |= set(re.findall(r"[A-Za-z_]\w*", value))
    return names


def _the_tile(name: str) -> str:
    """`the tile tile` said once: "the tile", "the tile As"."""
    return "the tile" if name.lower() == "tile" else f"the tile {name}"


def _one_past_the_end(source: Source, line: int | None, index: int, length: int) -> str | None:
    """For an access one past the last element: the hint that names the nearest `i <= n` on `line`
    or the seven lines before it (an `if` guard or a loop's condition that lets the index reach the
    size, or an early `if (i > n) return;`); None for another index, or with no such comparison in sight."""
    if not line or not length or index != length:
        return None
    indexed = _index_names(source, line)
    for at in range(line, max(0, line - 8), -1):  # (the if around a tile's loops, PMPP's `tileCol <= OUT_TILE_DIM`)
        if at < line and re.match(r"\}|.*\b__(?:global|device)__\b[^;]*\(", source.lines[at - 1]):
            break  # (not past the function's own start, into the one before)
        for found in re.finditer(r"(?:[\w.\[\]]+\s*[-+*/%]\s*)*[\w.\[\]]*[\w\])]\s*<=\s*"
                                 r"([\w(][\w.\->\[\]()*+/ ]*?)(?=\s*(?:[;)&|]|$))",
                                 source.line_text(at)):
            bound = found.group(1).strip()
            if re.fullmatch(r"\d+[uUlL]*", bound) and int(re.match(r"\d+", bound).group()) not in (length - 1, length):
                continue  # `dx <= 1`, a stencil's offsets: not what reaches the size
            left = found.group(0)[:found.start(1) - found.start()]
            compared = set(re.findall(r"[A-Za-z_]\w*", left))
            if re.search(r"\]\s*<=\s*$", left) and "[" in bound:
                continue  # `a[mid] <= b[k]`: two elements' values (a merge's order), not an index and a size
            if indexed and not compared & indexed:
                continue  # `j <= R` of a loop before `dst[y * w + x]`: not what the index is made of
            if any(re.search(rf"\b{re.escape(name)}\s*=\s*-\s*{re.escape(bound)}\s*;", source.line_text(at))
                   for name in compared):
                continue  # `for (j = -R; j <= R; j++)`: a window's offsets, inclusive on purpose
            if any(re.search(rf"\bfor\s*\([^;]*;[^;]*;[^)]*\b{re.escape(name)}\s*(?:<<=|\*=)", source.line_text(at))
                   for name in compared):
                continue  # `for (len = 2; len <= N; len <<= 1)`: an FFT's stages, the whole size the last one
            return (f"Index {index} is one past the last element, and line {at} compares with <= "
                    f"(`{found.group(0).strip()}`), which lets the index reach the size itself: compare with < "
                    f"instead, or make what it compares with one less (an inclusive bound such as a binary "
                    f"search's hi starts at the size minus 1).")
        # the same off-by-one as an early return: `if (i > n) return;` lets i reach n
        returned = re.search(r"\bif\s*\(\s*(\w+)\s*>\s*([^=)][^)]*)\)\s*return", source.line_text(at))
        if returned and re.search(rf"\[\s*{returned.group(1)}\s*\]", source.line_text(line)):
            variable, bound = returned.group(1), returned.group(2).strip()
            return (f"Index {index} is one past the last element, and line {at} returns only when `{variable} > "
                    f"{bound}`, which lets {variable} reach the size itself: return when `{variable} >= {bound}`.")
        clamp = _clamped_to(source.line_text(at))
        if clamp and at != line:  # a clamp on an earlier line: of a variable that the faulting line uses
            assigned = re.search(rf"(\w+)\s*=\s*{re.escape(clamp[0])}", source.line_text(at))
            if not assigned or not re.search(rf"\[[^\]]*\b{assigned.group(1)}\b[^\]]*\]", source.line_text(line)):
                clamp = None
        if clamp:
            return (f"Index {index} is one past the last element, and line {at} clamps with `{clamp[0]}`, which lets "
                    f"the index reach {clamp[1]} itself: clamp to the last valid index, {clamp[1]} - 1.")
    return None


def _in_place_elsewhere(name: str, read_text: str, written_text: str) -> tuple[str, str] | None:
    """`x[i] = x[i] / x[0]`: a store into `name[written]` where the reading line also reads `name` at
    another index (`read_as`): an in-place update that reads an element one thread overwrites, not a
    counter kept by hand (whose read and store name the same element). (written, read_as), or None."""
    n = re.escape(name)
    store = re.search(rf"\b{n}\s*\[([^\]]*)\]\s*[-+*/%&|^]?=(?!=)", written_text)
    if not store:
        return None
    written = store.group(1).strip()
    rest = read_text.replace(store.group(0), " ", 1) if read_text == written_text else read_text
    others = [index.strip() for index in re.findall(rf"\b{n}\s*\[([^\]]*)\]", rest)]
    different = [index for index in others if index != written]
    return (written, different[0]) if different else None


def _clamped_to(text: str) -> tuple[str, str] | None:
    """A `min(..., n)` on a line whose last argument is a plain name or number: the call and that
    bound (a clamp to the size, where the last index is n - 1)."""
    for match in re.finditer(r"\b(?:min|umin|imin)\s*\(", text):
        depth, args, start = 0, [], match.end()
        for k in range(match.end() - 1, len(text)):
            if text[k] == "(":
                depth += 1
            elif text[k] == ")":
                depth -= 1
                if depth == 0:
                    args.append(text[start:k])
                    break
            elif text[k] == "," and depth == 1:
                args.append(text[start:k])
                start = k + 1
        if len(args) == 2 and re.fullmatch(r"\s*(?:[A-Za-z_]\w*|\d+)\s*", args[1]):
            return text[match.start():k + 1], args[1].strip()
    return None


def _lock_hint(source: Source, line: int | None) -> str:
    """For a time limit met at an atomicCAS (a thread spinning for a lock): what keeps the lock held.
    The region from the CAS to the release (an atomicExch, or a CAS of 1 back to 0, in the same
    function) is read for a way out (return, break, continue or goto, not one of a loop inside the
    region) and for a wait on other threads (a barrier or a warp-level call), which the threads spinning
    at the CAS never reach; a release of another lock than the one taken is named. A CAS whose compare
    value is a variable is no lock: a loop that must refresh it."""
    if not line or not 0 < line <= len(source.lines):
        return ""
    probe = line if line in source.cas_probes else None
    if "atomicCAS" not in source.lines[line - 1]:
        # (a plain build's time limit names where the thread was, `h = (h + 1) % cap;`: a probe's CAS in the same loop)
        loop = _innermost_loop(source.text, line, line)
        probe = next((n for n in source.cas_probes if loop and loop[0] <= n <= loop[1]), None)
        if probe is None:
            return ""
    if probe is not None:
        return (f"Threads spin at line {probe} in a loop that tries one element after another with atomicCAS "
                f"(`{source.cas_probes[probe]}` moves on: a hash table's probe, say): it never ends when no element lets "
                "it stop, a full table or a key that is not there. Bound it: stop after as many tries as there are "
                "slots (`for (int probe = 0; probe < capacity; probe++)`), and report a full table.")
    taken = re.search(r"\batomicCAS\w*\s*\(\s*([^,]+?)\s*,\s*([^,]+?)\s*,", source.lines[line - 1])
    if taken and not re.fullmatch(r"-?\s*(?:\d+[uUlL]*|0x[0-9a-fA-F]+[uUlL]*|[A-Z][A-Z0-9_]*)", taken.group(2)):
        return (f"Threads spin at line {line} in an atomicCAS loop that compares with `{taken.group(2)}`: once "
                "another thread has changed the element, a compare value that is not refreshed from what atomicCAS "
                "returns never matches again. Give it atomicCAS's result before each new try.")
    body = _function_body(source.text, line)
    last = source.text.count("\n", 0, body[1]) + 1 if body else len(source.lines)
    release = next((n for n in range(line + 1, last + 1)
                    if re.search(r"\batomicExch\w*\s*\(|\batomicCAS\w*\s*\([^;]*,\s*1\s*,\s*0\s*\)", source.lines[n - 1])), None)
    found = []
    if release and taken:
        put = re.search(r"\batomic(?:Exch|CAS)\w*\s*\(\s*([^,]+?)\s*,", source.lines[release - 1])
        same = lambda text: re.sub(r"\s+|^&|^\(|\)$", "", text)  # noqa: E731
        if put and same(put.group(1)) != same(taken.group(1)):
            found.append(f"line {release} puts back `{put.group(1)}`, but line {line} took `{taken.group(1)}`: "
                         "release the lock the thread took")
    def leaves(start: int, release: int | None, spin: int) -> None:
        """What leaves, or waits inside, the locked region from line `start` (the acquire) to `release`."""
        for n in range(start + 1, release or start + 1):
            text = source.lines[n - 1].split("//", 1)[0]
            inner_loop = any(re.search(r"\b(?:for|while)\s*\(|\bdo\b", source.lines[q - 1].split("//", 1)[0])
                             for q in range(start + 1, n + 1))
            if re.search(r"\b(return|goto)\b", text) or (re.search(r"\b(break|continue)\b", text) and not inner_loop):
                found.append(f"line {n} leaves the locked region without releasing the lock (line {release} releases "
                             "it), so every thread that comes after spins here for ever: release before leaving, or let "
                             "the release run on every path")
            elif re.search(r"\b__syncwarp\s*\(|\b__syncthreads\w*\s*\(|\.sync\s*\(\s*\)|\b__shfl\w*\s*\(|"
                           r"\b__(?:all|any|ballot)_sync\s*\(", text):
                found.append(f"line {n} waits for other threads while holding the lock, but they spin at line {spin} "
                             "for the lock and never get there: take the lock once per warp (one lane), or move the "
                             "wait out of the locked region")

    leaves(line, release, line)
    helper = _callers_of(source.text, body) if body and release is None else None
    if helper:  # `l.lock();` ... `l.unlock();`: the region lies between the calls of lock and unlock helpers
        releasers = {m.group(1) for m in re.finditer(r"(\w+)\s*\([^()]*\)\s*(?:const\s*)?\{[^{}]*\batomicExch\w*\s*\(",
                                                     source.text)}
        freeing = re.compile(r"\batomicExch\w*\s*\(" + "".join(rf"|\b{re.escape(r)}\s*\(" for r in releasers))
        for call in helper[1]:
            caller = _function_body(source.text, call)
            end = source.text.count("\n", 0, caller[1]) + 1 if caller else len(source.lines)
            release_at = next((n for n in range(call + 1, end + 1)
                               if freeing.search(source.lines[n - 1].split("//", 1)[0])), None)
            leaves(call, release_at, line)
    if found:
        return f"Threads spin at line {line} for a lock that its holder never releases: " + "; ".join(found) + "."
    return (f"Threads spin at line {line} for a lock that is never released: check that every way out of the "
            "locked region releases it (a return or break inside keeps it held), that the holder does not wait "
            "at a barrier or a warp-level call that the spinning threads never reach, and that threads taking "
            "two locks take them in one order (the lower index first): two threads that each hold the lock the "
            "other wants wait for ever.")


def _always_true_unsigned(source: Source, lines) -> tuple[str, str, int, str | None] | None:
    """(the comparison, the variable, its line, what is subtracted from it or None) of the first `i >= 0`
    or `i - 1 >= 0` on `lines` whose variable is declared unsigned (size_t, uint32_t, ...): always true."""
    for at in lines:
        for found in re.finditer(r"\b([A-Za-z_]\w*)(?:\s*-\s*(\w+))?\s*>=\s*0[uU]?\b(?!\.)", source.line_text(at)):
            if _declared_unsigned(source.text, found.group(1)):
                return found.group(0), found.group(1), at, found.group(2)
    return None


def _declared_unsigned(text: str, name: str) -> bool:
    """Whether `text` declares `name` unsigned (`unsigned i`, `size_t n = 0, i`, `uint32_t k`)."""
    return re.search(rf"\b(?:unsigned(?:\s+(?:long\s+long|long|int|short|char))?(?:\s+int)?|size_t|uint\w*)\s+"
                     rf"(?:\w+\s*(?:=[^,;]*)?,\s*)*{re.escape(name)}\b", text) is not None


def _helper_argument(source: Source, chain, name: str, index: int, length: int) -> str | None:
    """For an index out of bounds in a __device__ helper (`return img[y * w + x];`) that one of its calls gave a
    neighbour (`at(img, w, h, x - 1, y)` at the left edge, `x + 1` at the right): the call and the argument, and
    the two fixes (clamp it in the call, or let the helper check its coordinates). None otherwise."""
    if len(chain) < 2 or not chain[0] or not chain[1] or chain[1] == chain[0]:
        return None
    line, caller = chain[0], chain[1]
    found = _function_parameters(source, line)
    if not found:
        return None
    function, params = found[0], [_parameter_name(p) for p in found[1]]
    used = _index_names(source, line) & set(params)
    text = source.line_text(caller).split("//", 1)[0]
    sign = "-" if index < 0 else "+"
    for call in re.finditer(rf"\b{re.escape(function)}\s*\(", text):
        args = _argument_texts(text, call.end() - 1)
        if not args or len(args) != len(params):
            continue
        for param, arg in zip(params, args):
            step = re.fullmatch(rf"\s*([A-Za-z_]\w*)\s*\{sign}\s*(\d+|[A-Z_][A-Z0-9_]*)\s*", arg)
            if param not in used or not step:
                continue
            variable, k = step.groups()
            bound = _size_guard(source, caller, variable) if sign == "+" else None
            size = bound[1] if bound else "size"
            clamp = f"max({variable} - {k}, 0)" if sign == "-" else f"min({variable} + {k}, {size} - 1)"
            edge = (f"where {variable} is below {k} (the first {'column or row' if k == '1' else 'elements'})"
                    if sign == "-" else f"where {variable} + {k} reaches {size} (the far edge)" if bound
                    else "at the far edge")
            check = f"if ({param} < 0 || ...) return 0.0f;" if sign == "-" else f"if ({param} >= {size} || ...) return 0.0f;"
            return (f"Index {index} is {'below the first element' if sign == '-' else 'past the last element'}: line "
                    f"{caller} calls `{function}` with `{arg.strip()}` as its `{param}`, a neighbour outside the "
                    f"array {edge}, and `{function}` uses it unchecked at line {line}. Clamp it in the call, "
                    f"`{clamp}`, or let `{function}` check its coordinates first (`{check}` for a border of zeros).")
    return None


def _window_index(source: Source, line: int | None, index: int, length: int, subscript: str | None) -> str | None:
    """For a filter's tap `M[(i + R) * MW + (j + R) + 1]`, whose window loops run from -R to R: `(j + R)` alone
    reaches every tap, and the extra `+ 1` (or `- 1`) at the end takes the last (first) one outside. None
    where the subscript has no such offset, or no loop runs one of its variables from -R to R."""
    if not line or not subscript:
        return None
    extra = re.fullmatch(r"(.*\(\s*(\w+)\s*\+\s*(\w+)\s*\).*?)\s*([-+])\s*(\d+)\s*", subscript.strip())
    if not extra or (extra.group(4) == "+") != (index >= length):
        return None
    variable, radius = extra.group(2), extra.group(3)
    first, _ = _body_lines(source, line)
    loop = next((at for at in range(line, first - 1, -1) if re.search(
        rf"\bfor\s*\([^;]*\b{re.escape(variable)}\s*=\s*-\s*{re.escape(radius)}\s*;[^;]*"
        rf"\b{re.escape(variable)}\s*<=\s*{re.escape(radius)}\b", source.line_text(at))), None)
    if loop is None:
        return None
    return (f"Index {index} is {'one past the last element' if index >= length else 'below the first element'}: "
            f"the window's offsets run from -{radius} to {radius} (line {loop}), so `{extra.group(1).strip()}` reaches "
            f"every element already, 0 to {length - 1}, and the `{extra.group(4)} {extra.group(5)}` at the end takes "
            f"the {'last' if index >= length else 'first'} tap outside: drop it (a tap's index is its offset plus "
            "the radius).")


def _index_hint(source: Source, line: int | None, index: int, length: int, subscript: str | None = None,
                array: str = "") -> str | None:
    """What an out-of-bounds index says about its cause, when it says something: one past the end
    beside a `<=`, the fill of a variable without a value, an unsigned value wrapped below 0, a
    negative offset. `subscript`: the faulting access's index expression, where known (the first of
    `array`'s on the line)."""
    return (_one_past_the_end(source, line, index, length) or _window_index(source, line, index, length, subscript)
            or _uninitialized_index(index) or _undefined_index(index)
            or _unsigned_count_down(source, line, index) or _unsigned_below_zero(source, line, index)
            or _signed_char_index(source, line, index) or _negative_index(index, length, source, line, subscript, array)
            or _pitch_in_elements(source, index, length) or _bytes_as_elements(source, line)
            or _byte_count(source, line))


def _byte_count(source: Source, line: int | None) -> str | None:
    """For an index past the end on a line that calls memset, memcpy or memmove: their count is in bytes,
    from the pointer on (the hint that says so)."""
    call = re.search(r"\b(memset|memcpy|memmove|memcpy_async)\s*\(", source.line_text(line) if line else "")
    if not call:
        return None
    return (f"{call.group(1)}'s last argument is a count of bytes, and all of them must lie in the array from the "
            "pointer on: pass the size in bytes (`sizeof(buf)` for an array declared in the kernel, `count * "
            "sizeof(float)` for count floats), no more than the bytes from the pointer to the array's end.")


def _bytes_as_elements(source: Source, line: int | None) -> str | None:
    """An index whose loop (on `line` or the two lines before it) runs to a size in bytes, `i < n *
    sizeof(float)`, over an array's elements: the hint, else None."""
    for at in range(line or 0, max(0, (line or 0) - 3), -1):
        loop = re.search(r"\bfor\s*\([^;]*;\s*\w+\s*<=?\s*([^;]*\bsizeof\s*\(?[^;]*?);", source.line_text(at))
        if loop and "/" not in loop.group(1):  # (`sizeof(a) / sizeof(a[0])` counts elements)
            return (f"The loop at line {at} runs to `{loop.group(1).strip()}`, a size in bytes, but the index counts "
                    "elements: compare with the number of elements (sizeof is for malloc, memcpy and memset, which "
                    "count bytes).")
    return None


_BUILT_IN_NAMES = {"threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize"}


#: While a fault is worded (_explained): the subscript of (line, array) that made the faulting index, where the
#: line has several of that array (`c ? in[i - 1] : in[i + n]`): the one _subscript gives for it.
_FAULTING_SUBSCRIPT: dict = {}  # (keyed by the Python thread too: two threads may word faults at once)


def _subscript(source: Source, line: int | None, name: str, nested: bool = False) -> str | None:
    """The index expression of `name[...]` at `line` (comments dropped), or None; `nested`: one that holds
    another subscript too (`x[idx[i]]`)."""
    if not line or not name:
        return None
    if not nested and (threading.get_ident(), line, name) in _FAULTING_SUBSCRIPT:
        return _FAULTING_SUBSCRIPT[(threading.get_ident(), line, name)]
    inside = r"(?:[^\[\]]|\[[^\[\]]*\])+" if nested else r"[^\[\]]+"
    text = source.line_text(line).split("//", 1)[0]
    found = _first_use(rf"\b{re.escape(name)}\s*\[({inside})\]", text)
    return found.group(1).strip() if found else None


def _first_use(pattern: str, text: str) -> re.Match | None:
    """The first match of `pattern` in `text` that is not a declaration (`__shared__ int s[8];` before the
    access `s[i]`, in a kernel written on one line)."""
    for found in re.finditer(pattern, text):
        before = re.search(r"(\w+)\s*\**\s*$", text[:found.start()])
        if not before or before.group(1) not in _TYPE_WORDS | {"__shared__", "__device__", "__constant__"}:
            return found
    return None


def _malloc_in_bytes(source: Source, item: int, length: int) -> str | None:
    """The hint for an access past a block from the kernel's one malloc whose size has no sizeof: malloc
    counts bytes (`malloc(blockDim.x * 64)` for 64 ints a thread holds a quarter of them)."""
    calls = re.findall(r"(?:\(\s*((?:const\s+)?\w+)\s*\*\s*\)\s*)?\bmalloc\s*\(([^;]*)\)\s*;", source.text)
    if len(calls) != 1 or item < 2 or "sizeof" in calls[0][1] or re.search(rf"(?<![\w.]){item}(?![\w.])", calls[0][1]):
        return None  # (`malloc(4 * n)`: bytes, counted by hand)
    cast, size = calls[0][0] or "the element type", calls[0][1].strip()
    line = next((n for n in range(1, len(source.lines) + 1) if re.search(r"\bmalloc\s*\(", source.line_text(n))), None)
    named = re.fullmatch(r"\w+", size) and line and _made_at(source, line, size)
    count = f"{size} (= {named[1]})" if named else size
    return (f"malloc counts bytes: malloc({size}) at line {line} asks for {count} bytes, which hold {length} "
            f"elements of {item} bytes. For that many elements, ask for the count times their size: "
            f"malloc(count * sizeof({cast})).")


#: The vector types of each size, to name a view of an array through one (`(float4*)x`, `(__half2*)h`).
_VECTOR_OF_BYTES = {2: "char2", 4: "half2, char4", 8: "float2, int2", 16: "float4, int4, double2", 32: "double4"}


_SIZE_NAMES = ("n", "N", "size", "len", "length", "count", "num", "numElements", "num_elements", "elements")


def _printf_string_hint(source: Source, line: int | None, name: str, index: int, length: int, itemsize: int):
    """The hint for a read one past a char array's end at a line whose printf prints a string (%s without a
    precision): the text has no zero byte inside its array (runtime.h's __cc_printf_string), or None."""
    if itemsize != 1 or index != length or not line or not re.search(r"\bprintf\s*\(", source.line_text(line)) \
            or not re.search(r"%[-+ #0]*\d*s", source.line_text(line)):
        return None
    return (f"printf's %s prints a string up to its zero byte, and {name} has none in its {length} "
            f"byte{'s' * (length != 1)}: on a GPU printf reads on past the array's end. End the text with a zero "
            f"byte (from NumPy: np.frombuffer(b\"text\\0\", np.uint8), one byte longer; in a kernel: `{name}[n] = "
            f"'\\0';` with room for it), or print a fixed number of characters, `%.{length}s`.")


def _guard_text(source: Source, kernel: Kernel, line: int | None, name: str, length: int,
                index: int | None = None, thread_x: int | None = None) -> str:
    """The guard for an access to `name` at `line` in the learner's own words: its subscript compared with
    the kernel's size parameter (`if (i + 1 < n)`), or with the array's length where none is plain. Of a
    line's several subscripts of `name` (`s[t] += s[t + 32];`), the `x + k` whose k brings the faulting
    thread's own index (`thread_x`) to the faulting `index`."""
    subscript = _subscript(source, line, name)
    if line and index is not None and thread_x is not None:
        text = source.line_text(line).split("//", 1)[0]
        offsets = {e.strip() for e in re.findall(rf"\b{re.escape(name)}\s*\[([^\[\]]*)\]", text)
                   if (m := re.fullmatch(r"\s*\w+\s*\+\s*(\d+)\s*", e)) and int(m.group(1)) == index - thread_x}
        if len(offsets) == 1:
            subscript = offsets.pop()
    if line and subscript and re.fullmatch(r"[A-Za-z_]\w*", subscript.strip()):
        # `if (i < n && ixj > i) ... a[i] ... a[ixj]`: of a line's plain subscripts, the one no guard above compares
        # with a size (the partner's, not the thread's own i, which is checked already)
        text = source.line_text(line).split("//", 1)[0]
        plain = [e.strip() for e in re.findall(rf"\b{re.escape(name)}\s*\[\s*([A-Za-z_]\w*)\s*\]", text)]
        body = "\n".join(source.lines[_body_lines(source, line)[0] - 1:line])
        checked = lambda v: re.search(rf"\b{re.escape(v)}\s*<=?\s*\w|\b\w+\s*>=?\s*{re.escape(v)}\b(?!\s*[<>])", body)
        unchecked = [v for v in dict.fromkeys(plain) if not checked(v)]
        if checked(subscript.strip()) and len(unchecked) == 1:
            subscript = unchecked[0]
    if not subscript or len(subscript) > 40 or re.search(r"[?:=<>]", subscript):
        return "`if (index < size)`, with the index this line uses and the array's size"
    index = subscript if re.fullmatch(r"[\w.]+", subscript) else f"({subscript})" \
        if re.search(r"[&|^]", subscript) else subscript
    scalars = [p.name for p in kernel.params if not p.pointer and p.dtype and "int" in p.dtype]
    flat = _row_major(subscript)  # `r * cols + c`
    if flat and flat[1] in scalars and len(scalars) <= 2:  # (one size: a square, `r * n + c`)
        row, width, column = flat
        # the other integer is the height, unless the index uses it as a row or a column (Floyd-Warshall's pivot k,
        # `D[i * n + k]`): then a square
        height = next((s for s in scalars if s not in (width, row, column)), width)
        # a coordinate is a thread's (made from threadIdx or blockIdx): a parameter or a loop's counter is guarded by
        # no test of the thread (`D[i * n + k]` with the pivot k, `ecol[r * m + k]` over a loop's k)
        coordinates = [v for v in (row, column) if line and _made_of_the_thread(source, line, v)]
        if coordinates == [row, column]:
            return (f"`if ({row} < {height} && {column} < {width})`, each coordinate against its own size (a 2-D grid "
                    f"rounded up to whole blocks has threads past both edges, and a {column} past {width} alone would "
                    "land in the next row)")
        if coordinates == [row] and column not in scalars and re.fullmatch(r"[A-Za-z_]\w*", column):
            coordinates = []  # (`r * m + k` with a loop's k: the index may be wrong, not the guard)
        if coordinates:
            v = coordinates[0]
            return f"`if ({v} < {height if v == row else width})`, the thread's {'row' if v == row else 'column'} against its size"
    sizes = [name for name in scalars if name in _SIZE_NAMES]
    if len(sizes) == 1 and len(scalars) == 1 and not re.search(rf"\b{sizes[0]}\b", subscript):
        # (the kernel's one size; in a GEMM's M, N, K, N is no length; `x[i + n]` has n as an offset, not a length)
        return f"`if ({index} < {sizes[0]})`, if {sizes[0]} is the length of {name} ({length} here)"
    return f"`if ({index} < {length})` ({length}: the length of {name} in this launch; better a size the kernel is given)"


def _made_of_the_thread(source: Source, line: int, variable: str, depth: int = 0) -> bool:
    """Whether `variable`, as it stands at `line`, is made from threadIdx or blockIdx (`int i = blockIdx.y * blockDim.y
    + threadIdx.y;`, or from such a variable), not a parameter, a constant or a loop's counter from 0."""
    if variable.startswith(("threadIdx", "blockIdx")):
        return True
    made = _made_at(source, line, variable) if depth < 3 else None
    if not made:
        return False
    if re.search(r"\b(?:threadIdx|blockIdx)\b", made[1]):
        return True
    return any(_made_of_the_thread(source, made[0] - 1, name, depth + 1) for name in re.findall(r"[A-Za-z_]\w*", made[1])
               if name != variable)


def _tile_edge(source: Source, line: int | None, name: str) -> str | None:
    """For a tile load past the end of a matrix, `Bs[ty][tx] = B[(t * TILE + ty) * n + col];` with no test of
    the row and the column: at the matrix's edge (a size that is no multiple of the tile) the tile reaches past
    it, and the load must take 0 there. None for any other access."""
    subscript = _subscript(source, line, name)
    text = source.line_text(line).split("//", 1)[0] if line else ""
    target = re.match(r"\s*(\w+)((?:\s*\[[^\]]*\])+)\s*=[^=]", text)
    expression = (subscript or "").strip()
    if expression.startswith("("):  # `(t * TILE + ty) * n + col`: the row in parentheses
        close = _closing_brace(expression, 0)
        row, rest = expression[1:close], expression[close + 1:]
    else:  # `row * n + t * TILE + tx`
        first = re.match(r"[\w.]+", expression)
        row, rest = (first.group(0), expression[first.end():]) if first else (None, "")
    flat = re.fullmatch(r"\s*\*\s*(\w+)\s*\+\s*(.+?)\s*", rest) if row else None
    if not (target and flat and re.search(rf"__shared__[^;]*\b{re.escape(target.group(1))}\s*\[", source.text)):
        return None
    width, column = (part.strip() for part in flat.groups())
    row = row.strip()
    tile = target.group(1) + re.sub(r"\s+", "", target.group(2))
    extents = _shared_extents(source, target.group(1)) or []
    if len(extents) == 1 and extents[0].strip() == width:
        # `xs[tx] = x[t * T + tx]` into `__shared__ float xs[T]`: tiles of a vector (T is the tile's length, no row's)
        bound = re.search(rf"\b{re.escape(row)}\s*\*\s*{re.escape(width)}\s*\+\s*[\w.]+\s*<\s*(\w+)", source.text)
        size = bound.group(1) if bound else "n"
        return (f"This line loads {_the_tile(target.group(1))} from {name}, {width} elements at a time, and the last tile "
                f"reaches past the end of {name} where its length is no multiple of {width}. Load 0 there: `{tile} = "
                f"({subscript.strip()} < {size}) ? {name}[{subscript.strip()}] : 0.0f;` ({size}: the length of {name}), "
                "with the barriers outside the condition.")
    return (f"This line loads {_the_tile(target.group(1))} from {name}, and at the matrix's edge (a size that is no "
            f"multiple of the tile) the tile reaches past it: the row `{row}` or the column `{column}` is past the "
            f"matrix. Load 0 there: `{tile} = ({row} < rows && {column} < {width}) ? {name}[{subscript.strip()}] : "
            f"0.0f;` (rows: the matrix's row count, {width} for a square one), with the barriers outside the condition.")


def _per_block_index(source: Source, line: int | None, name: str, length: int, grid_dim) -> str | None:
    """For `sums[blockIdx.x]` past the end: an array of one element per block, with fewer elements than the
    launch has blocks. None for any other index."""
    subscript = _subscript(source, line, name)
    axis = re.fullmatch(r"\s*blockIdx\.([xyz])\s*", subscript or "")
    if not axis:
        return None
    blocks = grid_dim["xyz".index(axis.group(1))]
    return (f"{name} holds one element per block (`{name}[blockIdx.{axis.group(1)}]`), and this launch has {blocks} "
            f"blocks along {axis.group(1)} but {name} has {length}: make it as long as the grid, "
            f"gridDim.{axis.group(1)} elements (the same rounded-up count the launch uses, `(n + 255) // 256` for "
            "blocks of 256).")


def _constant_index(source: Source, line: int | None, name: str, index: int, length: int) -> str | None:
    """For an access `name[16]` whose subscript is a number (or a #define of one): no guard helps, the number
    is past the end. None where the subscript is no constant."""
    subscript = _subscript(source, line, name)
    if not subscript or not subscript.strip() or not _same_for_every_thread(subscript, source.constants):
        return None
    has = (f"{name} has {length} element{'s' * (length != 1)}: its last is {name}[{length - 1}]" if length
           else f"{name} is empty (an array of 0 elements was passed?)")
    return (f"The index `{subscript}` is a constant, the same for every thread, and {has}. Make the array larger "
            f"(at least {index + 1} element{'s' * (index != 0)} here), or index within it.")


def _up_to_comma(text: str) -> str:
    """`text` up to its first comma outside brackets (the end of one declarator in `int a = f(x, y), b = 2`)."""
    depth = 0
    for at, c in enumerate(text):
        depth += (c in "([{") - (c in ")]}")
        if c == "," and depth == 0:
            return text[:at]
    return text


def _made_at(source: Source, line: int, variable: str) -> tuple[int, str] | None:
    """Where `variable` last got its value before (or at) `line`, in the function around it: (line, the
    assigned expression) for `variable = ...;`, None when nothing assigns it there or an update (`+=`, `++`)
    comes first."""
    body = _function_body(source.text, line)
    start = max(1, source.text.count("\n", 0, body[0]) + 1 if body else line - 15)
    v = re.escape(variable)
    for at in range(line, start - 1, -1):
        text = source.line_text(at)
        made = re.search(rf"\b{v}\s*=(?!=)\s*([^;]+);", text)
        if made:  # (`int t = threadIdx.x, i = blockIdx.x * B + t;`: t's own declarator, up to its comma)
            return at, _up_to_comma(made.group(1)).strip()
        if re.search(rf"\b{v}\s*([-+*/%|&^]=|\+\+|--)|(\+\+|--)\s*{v}\b", text):
            return None
    return None


def _loop_bound_note(source: Source, line: int, variables: list, name: str) -> str:
    """For an index past the end that grows with the counter of a `for` loop around `line` (`B[k * N + c]` in
    `for (int k = 0; k < N; k++)`): a sentence that names the loop's bound, which may be the wrong one (a
    matrix product's inner loop runs to the inner dimension); '' where no such loop is."""
    first = _body_lines(source, line)[0]
    for variable in variables:
        for at in range(line, first - 1, -1):
            header = _for_header(source.line_text(at), re.escape(variable))
            if header and _in_one_loop(source.text, at, line, at):
                compare, bound = header[2:4]
                last = bound if compare == "<=" else f"{bound} - 1"
                return (f" `{variable}` goes up to {last} (the loop at line {at}, `{variable} {compare} {bound}`): check "
                        f"that bound against {name}'s size too (a matrix product's inner loop runs to the inner "
                        "dimension, the columns of A and the rows of B).")
    return ""


def _binned_index(source: Source, line: int | None, name: str, index: int, length: int) -> str | None:
    """For an index past the end that is a number from data turned into a bin, `bins[(int)(x[i] * NBINS)]`: a
    value at the top of the range lands one past the last bin. None for any other index."""
    expression = _subscript(source, line, name, nested=True)
    binned = expression and re.fullmatch(r"\(\s*(?:int|unsigned|unsigned int|long)\s*\)\s*\((.*\w\s*\[[^\]]+\].*)\)|"
                                          r"(?:int|__float2int_rd|__float2int_rz|floorf?)\s*\((.*\w\s*\[[^\]]+\].*)\)",
                                          expression.strip())
    if not binned:
        return None
    value = (binned.group(1) or binned.group(2)).strip()
    top = (f": a value at the top of the range (`{value}` = {length} exactly, as 1.0 * {length} is) lands one past "
           "the last bin" if index == length else ": a value outside the range the bins cover lands outside them")
    return (f"The index `{expression}` is a bin computed from data, {index} here, but {name} has {length} bins{top}. "
            f"Clamp it, `min({expression}, {length - 1})` (or the bin count minus 1), or skip values outside the range "
            "(`if (v >= lo && v < hi)`).")


def _unwrapped_probe(source: Source, line: int | None, name: str) -> str | None:
    """For `table[h]` past the end in a loop that moves h on by hand (`h = h + 1;`, `h++`) and never wraps it (no `%`
    or `&` on h): a hash table's probe that runs off the last slot. The hint to wrap it, or None."""
    index = (_subscript(source, line, name) or "").strip()
    loop = _innermost_loop(source.text, line, line) if line and re.fullmatch(r"[A-Za-z_]\w*", index) else None
    if not loop:
        return None
    body = "\n".join(source.lines[loop[0] - 1:loop[1]])
    v = re.escape(index)
    step = re.search(rf"\b{v}\s*=\s*{v}\s*\+\s*\w+\s*;|\b{v}\s*\+=\s*\w+\s*;|\b{v}\s*\+\+|\+\+\s*{v}\b", body)
    if not step or re.search(rf"\b{v}\s*(?:%|&)=|\b{v}\s*=[^;]*[%&]", body):
        return None
    at = loop[0] + body.count("\n", 0, step.start())
    return (f"`{index}` moves on by hand at line {at} (`{step.group(0).strip().rstrip(';')}`) and is never taken back to "
            f"the start of {name}, so a probe that passes the last slot runs off its end. Wrap it: `{index} = ({index} + "
            f"1) % capacity` (or `& (capacity - 1)` for a power of two), and stop after as many tries as there are "
            "slots.")


def _offset_from_a_scan(source: Source, line: int | None, name: str, index: int, length: int) -> str | None:
    """For `out[slot]` exactly one past the end, where slot is made from a table of offsets (`int slot = off[b] +
    atomicAdd(&fill[b], 1);`, a table named off, offset, start, scan or prefix): offsets from an inclusive scan start
    each group one place late, and the last group runs past the end. The hint, or None."""
    subscript = (_subscript(source, line, name) or "").strip()
    made = _made_at(source, line, subscript) if line and index == length and re.fullmatch(r"[A-Za-z_]\w*", subscript) else None
    table = made and re.match(r"\s*(\w*(?:off|offset|start|scan|prefix|pos)\w*)\s*\[[^\]]*\]\s*\+", made[1], re.I)
    if not table:
        return None
    return (f"`{subscript}` is made from `{table.group(1)}` (line {made[0]}), and here it is {index}, one past the end of "
            f"{name}: if {table.group(1)} is an inclusive prefix sum (each group's offset counts the group itself, as "
            "np.cumsum does), every group starts one group late and the last one runs past the end. Offsets must be an "
            "exclusive scan: 0 for the first group, then the sums of the groups before.")


def _either_cursor(source: Source, line: int | None, name: str) -> str | None:
    """For an index past the end in a loop that goes on while either of two cursors is inside its range, `while (a <
    ea || b < eb)` (a merge, an intersection of sorted lists), whose body reads through both: the hint that `||`
    lets the loop read past the end of the one that is done. None otherwise."""
    loop = _innermost_loop(source.text, line, line) if line else None
    header = source.line_text(loop[0]).split("//", 1)[0] if loop else ""
    condition = re.search(r"\bwhile\s*\((.*)\)|\bfor\s*\([^;]*;([^;]*);", header)
    condition = condition and (condition.group(1) or condition.group(2) or "")
    if not condition or "||" not in condition or "&&" in condition:
        return None
    text = source.line_text(line).split("//", 1)[0]
    indices = set(re.findall(rf"\b{re.escape(name)}\s*\[\s*([A-Za-z_]\w*)\s*\]", text))
    tested = [part.strip() for part in condition.split("||")
              if (m := re.match(r"\s*\(?\s*([A-Za-z_]\w*)\s*<", part)) and m.group(1) in indices]
    if len(tested) < 2:
        return None
    cursors = _and(["`" + re.match(r"[(\s]*(\w+)", t).group(1) + "`" for t in tested])
    return (f"The loop at line {loop[0]} goes on while `{condition.strip()}`: with ||, it keeps going once one of "
            f"{cursors} has reached its end, and line {line} "
            f"still reads through it, past that end. Loop while both are inside, `{' && '.join(tested)}` (and handle "
            "what is left of the other after the loop, if the algorithm needs it).")


def _data_index(source: Source, line: int | None, name: str, index: int, length: int) -> str | None:
    """For an index past the end that is a value read from data (`x[idx[i]]`, or `int j = idx[i]; x[j]`): the
    hint that says the data decides it, or None."""
    expression = _subscript(source, line, name, nested=True)
    if expression is None:
        return None
    element = r"\(?\s*(?:\(\s*\w+\s*\)\s*)?(\w+\s*\[[^\[\]]+\])\s*\)?"  # (`idx[i]`, `(int)idx[i]`)
    read, at = re.fullmatch(element, expression), line
    if not read and re.fullmatch(r"[A-Za-z_]\w*", expression) and (made := _made_at(source, line, expression)):
        at, value = made
        read = re.fullmatch(element, value)
        loop = _innermost_loop(source.text, line, line, made[0] + 1) if read else None
        if loop and _changes(expression, "\n".join(source.lines[loop[0] - 1:loop[1]])):
            return None  # (`a = row[u];` then `++a` in the loop around the access: a cursor the loop moves, not data)
    if not read:
        return None
    read = read.group(1)
    where = "" if at == line else f" (line {at})"
    source_of = f"is a value read from data, `{read}`{where}," if read != expression else "is a value read from data,"
    skip = (f"`if ({expression} >= 0 && {expression} < {length})`" if read != expression else
            f"`int j = {read}; if (j >= 0 && j < {length}) ... {name}[j]`")
    table = re.match(r"\w+", read).group(0)
    if index == length and re.search(r"scan|prefix|offset|cumsum|pos|addr|rank", table, re.I) \
            and not re.search(r"[-+]", expression.replace(read, "")):
        # `out[scan[i]] = in[i]` with an inclusive scan: its values run 1 to the count, one past each slot
        return (f"The index `{expression}` is a value read from `{table}`, and here it is {index}, exactly the size of "
                f"{name}: if {table} is an inclusive prefix sum (each element counts itself, as np.cumsum and "
                f"thrust::inclusive_scan do), the kept elements land at 1 to {length}, one past their slots, and the "
                f"first slot is never written. Use `{read} - 1`, or an exclusive scan (its values start at 0).")
    if re.search(rf"__shared__[^;]*\b{re.escape(table)}\s*\[", source.text) or table in source.dynamic_shared:
        # `out[s[t]]`: an index the kernel computed itself, into shared memory (a scan, a count): not the data's
        off = (f" (an inclusive scan gives each element the count up to and including itself, one more than its "
               f"0-based place: subtract the element's own part for its slot)" if index == length else "")
        return (f"The index `{expression}` {source_of.replace('is a value read from data', 'is a value the kernel computed into shared memory')}"
                f" and here it is {index}, but {name} has {length} element{'s' * (length != 1)}: check the "
                f"computation that fills {table}{off}.")
    return (f"The index `{expression}` {source_of} and here it is {index}, but {name} has {length} "
            f"element{'s' * (length != 1)}: the data holds a value out of range (an id past the table's end, a label "
            f"for a class that does not exist, padding). Check the data on the host (its values must be 0 to "
            f"{length - 1}), or skip such values in the kernel: {skip}.")


def _same_for_every_thread(expression: str, constants: dict, depth: int = 0) -> bool:
    """Whether `expression` names only numbers and constants (`#define`s, -D options, `const int N = 16;`)
    whose own values do too: `TILE + 1` is, but not `ltidy + 2` with `const int ltidy = threadIdx.y;`."""
    return depth < 8 and all(word[0].isdigit() or word == "sizeof" or word in constants and _same_for_every_thread(
        str(constants[word]), constants, depth + 1) for word in re.findall(r"\b[A-Za-z_]\w*|\b\d\w*", expression))


def _from_block_index(source: Source, line: int | None, expression: str) -> tuple[int, str] | None:
    """Where `expression`, or a variable it uses, is made from blockIdx (a thread's index in the grid):
    (line, that statement), or None."""
    if not line:
        return None
    if "blockIdx" in expression:
        return line, source.line_text(line).strip()
    for variable in _names_in(expression):
        made = _made_at(source, line, variable)
        if made and "blockIdx" in made[1]:
            return made[0], f"{variable} = {made[1]};"
    return None


def _names_in(expression: str) -> list[str]:
    """The variables an expression uses, once each: not the built-ins, nor members (`blockIdx.x`'s x, `p.n`'s
    n), nor numbers' suffixes; a kernel's own x and y are variables."""
    expression = re.sub(r"(\.|->)\s*[A-Za-z_]\w*", " ", expression)
    return [v for v in dict.fromkeys(re.findall(r"(?<![\w.])[A-Za-z_]\w*\b", expression)) if v not in _BUILT_IN_NAMES]


#: A cast to a pointer type: `reinterpret_cast<const float4*>` or `(float4*)`.
_POINTER_CAST = r"(?:reinterpret_cast\s*<[^<>;]*\*\s*>|\(\s*[\w\s]+\*\s*\))"


def _through_offset_pointer(source: Source, line: int | None, name: str, index: int, length: int,
                            per: int = 1, items: int = 0, names: dict | None = None, grid_dim=None) -> str | None:
    """For an access past the end of `name` through a pointer the kernel made from it, `p = name + offset`
    (`pa[kk * M]` with `const float* pa = A + blockIdx.x * TS + ty * M + tx;`, or `A - 1`): the index in `name`
    is the offset plus the subscript, which a guard must bound. `per`, `items`: for an access through a wider
    type (a float4 view, `reinterpret_cast<const float4*>(A + 4)`), the array's items in one of its elements and
    in all. None where the line has no such pointer."""
    if not line or _subscript(source, line, name) is not None:
        return None
    for pointer, subscript in re.findall(r"\b(\w+)\s*\[([^\[\]]+)\]", source.line_text(line).split("//", 1)[0]):
        made = _made_at(source, line, pointer)
        view = made and re.fullmatch(rf"{_POINTER_CAST}\s*\((.+)\)", made[1].strip())
        if view and per > 1 and items and made[0] != line and (
                moved := re.fullmatch(rf"{re.escape(name)}\s*\+\s*(\d+)", view.group(1).strip())):
            # `const float4* p = reinterpret_cast<const float4*>(A + 4);`: whole vectors after the offset
            sub, start = subscript.strip(), int(moved.group(1))
            whole = (items - start) // per
            return (f"`{pointer}` is {name} + {start} seen {per} items at a time (line {made[0]}), so "
                    f"`{pointer}[{sub}]` is {name}[{start} + {per} * {sub}] to {name}[{start + per - 1} + {per} * {sub}] "
                    f"({name}[{index * per}] to {name}[{index * per + per - 1}] here), and {name} has {items} items: after "
                    f"the first {start}, it holds {whole} whole elements of {per} ({pointer}[0] to {pointer}[{whole - 1}]). "
                    f"Bound {sub} by that count, (n - {start}) / {per} with n the number of items"
                    + (f", not by n / {per}." if re.search(rf"/\s*{per}\b", source.line_text(line)) else "."))
        offset = (re.fullmatch(rf"(?:\([^()]*\)\s*)?{re.escape(name)}\s*([-+])\s*(.+)", made[1])  # `x + row * n`
                  or re.fullmatch(rf"&\s*{re.escape(name)}\s*\[()([^\[\]]+)\]", made[1])) if made else None  # `&x[r * n]`
        # `float* row = (float*)((char*)devPtr + r * pitch);` (the CUDA Programming Guide's pitched rows): bytes
        pitched = re.fullmatch(rf"(?:\(\s*[\w\s]+\*\s*\)|reinterpret_cast\s*<[\w\s]+\*\s*>)\s*\(\s*"
                               rf"(?:\(\s*(?:const\s+)?(?:unsigned\s+)?char\s*\*\s*\)|reinterpret_cast\s*<\s*(?:const\s+)?"
                               rf"(?:unsigned\s+)?char\s*\*\s*>\s*\()\s*{re.escape(name)}\s*\)?\s*\+\s*(.+)\)",
                               made[1]) if made and made[0] != line else None
        if pitched:
            moved = pitched.group(1).strip()
            return (f"`{pointer}` is {name} moved on by `{moved}` bytes (line {made[0]}), so `{pointer}[{subscript.strip()}]` "
                    f"is element {index} of {name}, which has {length} elements. A row's pitch is its length in bytes, "
                    "with any padding: for a NumPy or CuPy array, a.strides[0] (the width times the element's size for "
                    "packed rows), not the width in elements, and the rows must all lie inside the array.")
        if offset and made[0] != line and offset.group(1) == "-":  # `const float* p = A - 1;`
            back, sub = offset.group(2).strip(), subscript.strip()
            return (f"`{pointer}` is {name} - {back} (line {made[0]}), so `{pointer}[{sub}]` is {name}[{sub} - {back}], "
                    f"{index} here: below the first element of {name}. A pointer moved back before an array may only "
                    f"be indexed at {back} or more: start `{sub}` there, or do not move the pointer back.")
        if offset and made[0] != line:
            base, sub = offset.group(2).strip(), subscript.strip()
            plain = re.sub(r"\(\s*(?:size_t|long long|unsigned|int64_t|uint64_t|long)\s*\)\s*", "", base)
            start = _index_value(plain, names, source, made[0]) if names is not None else None
            axis = next((a for a in "zyx" if f"blockIdx.{a}" in plain), None)
            if start is not None and start >= length and axis and grid_dim is not None:
                # `A = A0 + blockIdx.z * M * K` with more blocks along z than A0 has matrices: the block's part
                # starts past the end, whatever its guards
                at = names.get(f"blockIdx.{axis}")
                return (f"`{pointer}` is {name} + {base} (line {made[0]}), which is {name}[{start}] for this block "
                        f"(blockIdx.{axis} = {at}), at or past the end of {name} ({length} elements), before any "
                        f"subscript: this launch has {grid_dim['xyz'.index(axis)]} blocks along {axis}, more than "
                        f"{name} has parts for. Launch as many blocks along {axis} as there are parts (matrices, "
                        f"images), or check `blockIdx.{axis} < count` before using {pointer}.")
            target = re.match(r"\s*(\w+)\s*\[[^=]*\]\s*=[^=]", source.line_text(line))
            tile = target and re.search(rf"__shared__[^;]*\b{re.escape(target.group(1))}\s*\[", source.text)
            edge = (f" (a tile at the matrix's edge: load 0 where the row or column is past the end, `cond ? "
                    f"{pointer}[{sub}] : 0.0f`)") if tile else ""
            return (f"`{pointer}` is {name} + {base} (line {made[0]}), so `{pointer}[{sub}]` is {name}[{base} + {sub}], "
                    f"{index} here, and {name} has {length} elements. Guard the access with that whole index{edge}, "
                    "or keep the offset inside the array.")
    return None


#: the C name of a vector type's items, by their NumPy dtype (float4's float32 is a float)
_VECTOR_ITEM = {"float32": "float", "float64": "double", "int32": "int", "uint32": "unsigned int", "int64": "long long",
                "uint64": "unsigned long long", "int16": "short", "uint16": "unsigned short", "int8": "char",
                "uint8": "unsigned char", "float16": "half"}


def _index_value(expression: str, names: dict, source: Source, line: int, depth: int = 0,
                 overflow: list | None = None, wrap: bool = False) -> int | None:
    """The value of a C index expression for the faulting thread (`names`: its built-ins and the launch's integer
    arguments; a local variable is the value of its last assignment before `line` in the function), or None where
    it has anything else (a call, a cast, a ternary, memory). `overflow`: gets (expression, value) of the first
    product or sum whose value does not fit an int (what C's int arithmetic wraps), computed exactly here; `wrap`:
    compute as C's int arithmetic does, each result wrapped to 32 bits."""
    def value(node) -> int:
        result = exact(node)
        if overflow is not None and not overflow and isinstance(node, ast.BinOp) and not -2**31 <= result < 2**31:
            overflow.append((ast.get_source_segment(expression.strip(), node) or expression.strip(), result, line))
        if wrap and isinstance(node, ast.BinOp):
            result = (result + 2**31) % 2**32 - 2**31
        return result

    def exact(node) -> int:
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            return names[f"{node.value.id}.{node.attr}"]
        if isinstance(node, ast.Name):
            if node.id in names:
                return names[node.id]
            body = _function_body(source.text, line) if depth < 4 else None
            start = source.text.count("\n", 0, body[0]) + 1 if body else line
            for at in range(line - 1, start - 1, -1):  # (the last assignment before the line, in the function)
                found = re.findall(rf"\b{re.escape(node.id)}\s*=(?!=)\s*([^;,]+)", source.line_text(at))
                if found:
                    got = _index_value(found[-1], names, source, at, depth + 1, overflow, wrap)
                    if got is None:
                        raise ValueError
                    return got
            raise ValueError
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            return -value(node.operand) if isinstance(node.op, ast.USub) else value(node.operand)
        if isinstance(node, ast.BinOp):
            a, b = value(node.left), value(node.right)
            if isinstance(node.op, ast.Add):
                return a + b
            if isinstance(node.op, ast.Sub):
                return a - b
            if isinstance(node.op, ast.Mult):
                return a * b
            if isinstance(node.op, (ast.Div, ast.FloorDiv, ast.Mod)) and b:
                quotient = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)  # (C truncates toward 0)
                return quotient if not isinstance(node.op, ast.Mod) else a - quotient * b
        raise ValueError

    try:
        return value(ast.parse(expression.strip(), mode="eval").body)
    except (SyntaxError, ValueError, KeyError, RecursionError):
        return None


def _overflow_hint(source: Source, line: int | None, name: str, index: int, names: dict) -> str | None:
    """For an index that int arithmetic wrapped (`int idx = row * w * w + col;` with w = 50000): the hint that
    says where and how to compute it in 64 bits, or None."""
    subscript = _subscript(source, line, name) if line else None
    found: list = []
    if not subscript or _index_value(subscript, names, source, line, overflow=found) is None or not found \
            or _index_value(subscript, names, source, line, wrap=True) != index:  # (the wrap gives this index)
        return None
    part, exact, at = found[0]
    first = re.match(r"\s*\(?\s*([A-Za-z_][\w.]*)", part)
    cast = f"`(long long){first.group(1)}` in `{part}`" if first else "one factor to long long"
    return (f"An int product that overflowed: `{part}` (line {at}) is {exact:,} for this thread, past 2^31 - 1 "
            f"(2,147,483,647), so C's int arithmetic wraps it around (on a GPU too; C++ leaves it undefined) and the "
            f"index comes out as {index}. Compute it in 64 bits: cast {cast} (the rest of the product follows) "
            "before any % or /, and keep the index in a long long or size_t.")


#: Integer types narrower than an int, as a declaration spells them: (bits, signed).
_NARROW_INTEGERS = {"short": (16, True), "short int": (16, True), "signed short": (16, True), "int16_t": (16, True),
                    "unsigned short": (16, False), "unsigned short int": (16, False), "uint16_t": (16, False),
                    "ushort": (16, False), "char": (8, True), "signed char": (8, True), "int8_t": (8, True),
                    "unsigned char": (8, False), "uint8_t": (8, False), "uchar": (8, False)}


def _narrow_declaration(text: str, variable: str) -> tuple[str, int, bool] | None:
    """(type, bits, signed) where `text` (a function's body) declares `variable` with an integer type narrower than
    an int (`short idx = ...;`, `unsigned char i, j;`), else None."""
    kinds = "|".join(sorted((re.escape(k).replace(r"\ ", r"\s+") for k in _NARROW_INTEGERS), key=len, reverse=True))
    declared = re.search(rf"(?:^|[;{{(,]|\n)\s*(?:const\s+)?({kinds})\s+(?:\w+\s*(?:=[^;,]*)?,\s*)*"
                         rf"{re.escape(variable)}\s*[=;,)]", without_comments(text))
    if not declared:
        return None
    kind = re.sub(r"\s+", " ", declared.group(1))
    return (kind, *_NARROW_INTEGERS[kind])


def _narrow_index_hint(source: Source, line: int | None, name: str, index: int, names: dict) -> str | None:
    """For an index kept in a variable narrower than an int (`short idx = y * w + x;`, 33,000 for this thread):
    the hint that says the value does not fit the variable's type and wrapped round to `index`, or None."""
    subscript = _subscript(source, line, name) if line else None
    variable = re.fullmatch(r"\s*\(?\s*([A-Za-z_]\w*)\s*\)?\s*", subscript or "")
    if not variable:
        return None
    variable = variable.group(1)
    body = _function_body(source.text, line)
    declared = _narrow_declaration(source.text[body[0]:body[1]] if body else source.text, variable)
    if not declared:
        return None
    kind, bits, signed = declared
    value = _index_value(variable, names, source, line)
    low, high = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    if value is None or low <= value <= high:
        return None
    if (value - low) % (1 << bits) + low != index:
        return None
    made = _made_at(source, line, variable)
    expression = f"`{made[1].strip()}` " if made else ""
    return (f"`{variable}` is {_an(kind)} ({bits} bits: {low:,} to {high:,}), too narrow for this index: "
            f"{expression}is {value:,} for this thread, which does not fit, so it wraps round to {index:,}, the index "
            f"the access used. Declare `{variable}` an int (a long long or size_t for arrays of more than 2^31 "
            "elements); a narrow type saves nothing here, a register holds 32 bits anyway.")


def _faulting_subscript(source: Source, line: int | None, name: str, index: int, names: dict) -> str | None:
    """Of a line's several subscripts of `name`, the one whose value for the faulting thread is the faulting
    `index` (`c ? in[i - 1] : in[i + n]`, thread 0: `i + n`), or None."""
    if not line:
        return None
    text = source.line_text(line).split("//", 1)[0]
    found = list(dict.fromkeys(e.strip() for e in re.findall(rf"\b{re.escape(name)}\s*\[([^\[\]]+)\]", text)))
    if len(found) < 2:
        return None
    hits = [e for e in found if _index_value(e, names, source, line) == index]
    return hits[0] if len(hits) == 1 else None


def _scalar_values(kernel: Kernel, args) -> dict:
    """The integer scalar arguments of a launch by parameter name (`args`: its packed arguments)."""
    values = {}
    for param, arg in zip(kernel.params, args or ()):
        if param.pointer or param.lanes != 1 or not param.dtype or not re.fullmatch(r"u?int\d+", param.dtype):
            continue
        kind = np.dtype(param.dtype)
        values[param.name] = int(np.frombuffer(int(arg.bits).to_bytes(8, sys.byteorder)[:kind.itemsize], kind)[0])
    return values


def _past_the_size(source: Source, line: int | None, name: str, index: int, length: int, values: dict) -> str | None:
    """For `o[n + k]` past the end of o, where n is a size argument that equals o's length in this launch and k
    is never negative (a thread's or block's index): every thread's index is past the end. None otherwise."""
    subscript = (_subscript(source, line, name) or "").strip()
    first, last = re.fullmatch(r"(\w+)\s*\+\s*(.+)", subscript), re.fullmatch(r"(.+?)\s*\+\s*(\w+)", subscript)
    if index < length or not (first or last):
        return None
    size, rest = (first.group(1), first.group(2)) if first and first.group(1) in values else \
        (last.group(2), last.group(1)) if last else (None, None)
    made = rest and re.fullmatch(r"\s*[A-Za-z_]\w*\s*", rest) and _made_at(source, line, rest.strip())
    built_in = re.compile(r"(?:\s*\(?\s*(?:threadIdx|blockIdx|blockDim|gridDim)\.[xyz]\s*\)?\s*[*+]?)+")
    if size not in values or values[size] != length or not rest or not (
            built_in.fullmatch(rest.strip() + " ") or made and built_in.fullmatch(made[1].strip() + " ")):
        return None  # (an index made of the built-ins alone is never negative)
    return (f"The index `{subscript}` starts at {size}, and {size} = {length:,} is the length of {name} in this launch: "
            f"every thread's index is past its end, whichever thread. Counted from the start of {name}, the index is "
            f"`{rest.strip()}`; if {name} should hold more after its first {size} elements, give it room for them.")


def _size_guard(source: Source, line: int, variable: str) -> tuple[int, str, int, str, str] | None:
    """The nearest check above `line` (in its function, at most 30 lines up) that keeps `variable` below a
    size named by one word: `if (i < n)`, a loop's `i < n`, `if (i >= n) return;` (or `<=`, `>`, `||` of more
    such). (line, size, 1 where the size itself passes (`<=`, `>`) else 0, the check as written, and its
    statement: if, while or for), or None."""
    v = re.escape(variable)
    start = max(line - 30, _body_lines(source, line)[0])
    for at in range(line, start - 1, -1):
        text = source.line_text(at).split("//", 1)[0]
        for guard in re.finditer(r"\b(if|while|for)\s*\((.*)", text):
            if not _guard_reaches(source, at, guard.start(), line, [variable]):
                continue
            condition = guard.group(2)
            below = re.search(rf"(?<![\w.]){v}\s*(<=?)\s*([A-Za-z_]\w*)\b(?!\s*[-+*/%(\[.])", condition)
            above = re.search(rf"(?<![\w.]){v}\s*(>=?)\s*([A-Za-z_]\w*)\b(?!\s*[-+*/%(\[.])", condition)
            if below and "||" not in condition:
                return at, below.group(2), int(below.group(1) == "<="), below.group(0).strip(), guard.group(1)
            returns = re.search(r"\)\s*return\b", condition)
            if above and returns and "&&" not in condition:
                return at, above.group(2), int(above.group(1) == ">"), \
                    re.sub(r"\s+", " ", text[guard.start():guard.start(2) + returns.end()]).strip(), guard.group(1)
    return None


def _loose_guard(source: Source, line: int | None, name: str, index: int, length: int, values: dict,
                 unit: str = "", per: int = 1, item: str = "") -> str | None:
    """For `p[i]` past the end of p under a guard of i against a size argument that is larger than p in
    this launch (`if (i < n)` with n = 128 and p of 100 elements; a loop's `i < n`; `if (i >= n) return;`),
    or `p[y * w + x]` under `y < h` and `x < w` with h × w larger than p: the guard is right, the size
    passed is not. None otherwise. `unit`: what p's elements are, where the access sees them through
    another type; `per`: how many of the array's `item`s (float) make one of them (4 for a float4 view),
    to tell a size counted in items."""
    expression, through = (_subscript(source, line, name) or "").strip(), name
    if not expression:  # through a view of the array: `float4* v = reinterpret_cast<float4*>(a); ... v[i]`
        n = re.escape(name)
        for view in re.finditer(rf"\*\s*(\w+)\s*=\s*{_POINTER_CAST}\s*(?:\(\s*{n}\s*\)|{n})\s*;", source.text):
            if not expression:
                expression, through = (_subscript(source, line, view.group(1)) or "").strip(), view.group(1)
    if not 0 <= index < 2 ** 62:
        return None
    flat = _row_major(expression)  # `y * w + x`
    if flat:
        row, width, column = flat
        rows, columns = _size_guard(source, line, row), _size_guard(source, line, column)
        # (a row and a column checked against sizes of their own, by ifs: not a matmul's `k < N` loop, whose
        # bound may be the wrong one of the sizes)
        if not (rows and columns and columns[1] == width and not rows[2] and not columns[2] and rows[1] != width
                and rows[4] == columns[4] == "if" and rows[1] in values and width in values and values[width] > 0):
            return None
        height, wide = values[rows[1]], values[width]
        if height * wide <= length or index >= height * wide:
            return None
        fits = (f"{length // wide:,} rows of {wide:,}" if length % wide == 0 else
                f"not even a whole number of rows of {wide:,}")
        where = (f"`{rows[3]}` and `{columns[3]}` at line {rows[0]}" if rows[0] == columns[0] else
                 f"`{rows[3]}` (line {rows[0]}) and `{columns[3]}` (line {columns[0]})")
        return (f"The checks {where} are right, but this "
                f"launch passed {rows[1]} = {height:,} and {width} = {wide:,}, {height * wide:,} elements, and {name} "
                f"has {length:,}{unit} ({fits}), so row {row} = {index // wide:,} is past its end. Pass {name}'s own "
                f"sizes" + (f" ({rows[1]} = {length // wide:,})" if length % wide == 0 else "")
                + f", or give {name} {rows[1]} × {width} elements.")
    if not re.fullmatch(r"[A-Za-z_]\w*", expression) or not (found := _size_guard(source, line, expression)):
        return None
    at, size, extra, shown, statement = found
    if size not in values:
        return None
    bound = values[size] + extra  # the first value the guard keeps out
    if bound <= length or index >= bound:
        return None
    if per > 1 and not extra and values[size] == length * per:  # n floats, for n / 4 float4s
        return (f"Line {at} checks `{shown}`, and this launch passed {size} = {values[size]:,}: that counts "
                f"{name}'s {item}s, but {through}[{expression}] steps over {per} of them at a time, and {name} "
                f"holds {length:,} such steps. Pass the number of whole elements, {size} / {per} = "
                f"{length:,} (and handle the last {size} % {per} {item}s apart, should {size} not divide).")
    fix = (f"pass {name}'s length as {size}" + (f" ({length:,})" if not extra else
                                                f" (and compare with <, which stops at {length - 1:,})")
           + f", or give {name} {size} elements")
    told = (f"Line {at} checks `{shown}`, and this launch passed {size} = {values[size]:,}, but {name} has {length:,} "
            f"element{'s' * (length != 1)}{unit}, so the check lets {expression} reach {bound - 1:,} ({expression} = "
            f"{index:,} here). ")
    if statement == "for" and "threadIdx" not in source.line_text(at):  # a loop over data: its bound may be another size
        return told + f"Either the size passed is wrong ({fix}), or the loop should stop at another size, {name}'s."
    return told + f"The check is right; the size is not: {fix}."


def _condition_text(text: str, guard: re.Match) -> str:
    """The `if (...)` (or `while`) that `guard` found in `text`, up to its own closing parenthesis: not the
    statement after it (`if (i < n) out[(i + 1) / 2]` is `if (i < n)`)."""
    opening = text.index("(", guard.start())
    return re.sub(r"\s+", " ", text[guard.start():_closing_brace(text, opening) + 1]).strip()


def _changes(variable: str, text: str) -> bool:
    """Whether `text` gives `variable` another value: `v = ...`, `v += ...`, `v++`, `--v` (not `v == ...`, nor a member
    or an element of another name, `p.v = ...`)."""
    v = re.escape(variable)
    return bool(re.search(rf"(?<![\w.]){v}\s*(?:[-+*/%&|^]?=(?!=)|\+\+|--)|(?:\+\+|--)\s*{v}\b", text))


def _guard_reaches(source: Source, at: int, column: int, line: int, variables) -> bool:
    """Whether the if, while or for at `column` of line `at` (of its text stripped) governs line `line`: the
    statement after its condition (the braced block, or the one statement), or every line after it where
    that statement is a `return` (`if (i >= n) return;`); and none of `variables` is given another value
    between the two lines (`x = blockIdx.y * T + threadIdx.x;` after a tile's load made x another index)."""
    if line <= at:
        return line == at
    for n in range(at + 1, line):
        code = source.line_text(n).split("//", 1)[0]
        if any(_changes(v, code) for v in variables):
            return False
    text, raw = source.text, source.lines[at - 1]
    opening = text.find("(", _line_start(text, at) + len(raw) - len(raw.lstrip()) + column)
    if opening < 0:
        return True  # (cannot tell: as before)
    close = _closing_brace(text, opening)
    rest = text[close + 1:].lstrip()
    after = len(text) - len(rest)
    if rest.startswith("return") or rest.startswith("{") and re.match(r"\{\s*return\b[^;]*;\s*\}", rest):
        return True
    end = _closing_brace(text, after) if rest.startswith("{") else text.find(";", after)
    return end < 0 or line <= text.count("\n", 0, end) + 1


def _skipped_sync(source: Source, first: int, last: int) -> tuple[int, int] | None:
    """A `__syncwarp()` on a line between `first` and `last` that an if governs (`if (t < 16) __syncwarp();`, or
    inside its braces): (its line, the if's line), or None."""
    for at in range(first + 1, last):
        text = source.line_text(at).split("//", 1)[0]
        if not (call := re.search(r"\b__syncwarp\s*\(", text)):
            continue
        for up in range(at, max(at - 12, _body_lines(source, at)[0]) - 1, -1):
            for branch in re.finditer(r"\bif\s*\(", source.line_text(up).split("//", 1)[0]):
                if (up < at or branch.start() < call.start()) and (
                        up == at or _guard_reaches(source, up, branch.start(), at, [])):
                    return at, up
    return None


def _inclusive_chunk(source: Source, line: int | None, name: str) -> str | None:
    """For a race on `name` at `line` inside a loop `for (int c = 0; c <= k; c++)` (that line's, or one a few
    lines up that governs it) whose counter indexes `name` from the thread's own start, a multiple of k
    (`img[i + c]` with `i = (y * w + x) * channels`, `s[t * 4 + c]`): c takes k + 1 values, so each thread's
    last element is the next thread's first. The hint that says so, or None."""
    if not line or not name:
        return None
    subscripts = _array_subscripts(source, line, name)
    first = _body_lines(source, line)[0]
    for at in range(line, max(line - 6, first) - 1, -1):
        for loop in re.finditer(r"\bfor\s*\(\s*(?:(?:unsigned|int|long|size_t)\s+)*(\w+)\s*=\s*0\s*;\s*\1\s*<=\s*(\w+)\s*;",
                                source.line_text(at)):
            counter, bound = loop.groups()
            if not _guard_reaches(source, at, loop.start(), line, []):
                continue
            scaled = re.compile(rf"\*\s*\(?\s*{re.escape(bound)}\b|\b{re.escape(bound)}\s*\)?\s*\*")
            for subscript in subscripts:
                if counter not in _names_in(subscript):
                    continue
                starts = [v for v in _names_in(subscript) if v != counter and (made := _made_at(source, line, v))
                          and scaled.search(made[1])]
                if scaled.search(subscript) or starts:
                    values = f"{int(bound) + 1}" if bound.isdigit() else f"{bound} + 1"
                    return (f"The loop at line {at} runs while `{counter} <= {bound}`, so {counter} takes {values} "
                            f"values, 0 to {bound}: one more than the {bound} elements each thread has from its own "
                            f"start (`{subscript.strip()}` steps by {bound} from one thread to the next), so each "
                            f"thread's last element is the next thread's first. Compare with `{counter} < {bound}`.")
    return None


def _mirrored_index(expression: str, name: str, index: int, length: int) -> str | None:
    """For `in[n - i]` one past the end (n itself, at i = 0): the hint that counts from the end, or None."""
    mirror = re.fullmatch(r"\s*([A-Za-z_]\w*)\s*-\s*([A-Za-z_]\w*)\s*", expression or "")
    if not mirror or index != length:
        return None
    size, counter = mirror.groups()
    return (f"The index here is `{expression.strip()}`, which is {size} itself when {counter} is 0: one past the last "
            f"element of {name} ({length} elements). Counted from the end, the element that mirrors {counter} is "
            f"`{size} - 1 - {counter}`.")


def _grid_width_index(source: Source, line: int | None, name: str) -> str | None:
    """For `a[y * width + x]` past the end where the row length is the grid's width in threads (`int width =
    blockDim.x * gridDim.x;`, or that product in the subscript) and a check keeps x below another size
    (`x < w`): the rows have w elements, not the grid's width. The hint, or None."""
    expression = _subscript(source, line, name)
    flat = re.fullmatch(r"\s*\(?\s*(\w+)\s*\)?\s*\*\s*(.+?)\s*\+\s*(\w+)\s*", expression or "")
    if not flat:
        return None
    row, width, column = flat.groups()
    grid = re.compile(r"blockDim\.x\s*\*\s*gridDim\.x|gridDim\.x\s*\*\s*blockDim\.x")
    set_at = None
    if not grid.search(width):
        made = re.fullmatch(r"[A-Za-z_]\w*", width) and _made_at(source, line, width)
        if not made or not grid.search(made[1]):
            return None
        set_at = made[0]
    bound = _size_guard(source, line, column)
    if not bound or bound[1] == width:
        return None
    made = f" (line {set_at}, `{width} = blockDim.x * gridDim.x`)" if set_at else ""
    return (f"The index here is `{expression.strip()}`: its row length, `{width}`{made}, is the grid's width in threads, "
            f"not {name}'s. Line {bound[0]} keeps {column} below {bound[1]}, so {name}'s rows have {bound[1]} elements: "
            f"index it `{row} * {bound[1]} + {column}` (the grid's width equals {bound[1]} only when the blocks cover a "
            "row exactly, and a grid rounded up to whole blocks is wider).")


def _data_destination(source: Source, line: int | None, name: str) -> str | None:
    """The index of `name` at `line` where it is read from another array (`bins[x[i]]`, `out[idx[i]]`, `h[v[i] & 15]`):
    that index, or None."""
    subscript = _subscript(source, line, name, nested=True)
    if subscript and re.match(r"\(?\s*(?:\(\s*int\s*\)\s*)?[A-Za-z_]\w*\s*\[[^\[\]]+\]", subscript) \
            and "threadIdx" not in subscript and "blockIdx" not in subscript.split("[", 1)[0]:
        return subscript
    return None


def _shift_precedence(source: Source, line: int | None) -> str | None:
    """For a shift whose count is a sum by precedence (`(n) >> NUM_BANKS + (n) >> (2 * LOG_NUM_BANKS)`, GPU Gems 3's
    CONFLICT_FREE_OFFSET: + binds tighter than >>), on `line` or in a #define it uses: the hint that says so and
    where the parentheses go. None otherwise."""
    if not line:
        return None
    text = source.line_text(line).split("//", 1)[0]
    places = [(text, f"line {line}")]
    for name in dict.fromkeys(re.findall(r"\b([A-Za-z_]\w*)\s*\(", text)):
        define = re.search(rf"^\s*#\s*define\s+{re.escape(name)}\s*\(([^)]*)\)\s*(.+)$", source.text, re.M)
        if define:
            places.append((define.group(2), f"the macro {name} (line {source.text.count(chr(10), 0, define.start()) + 1})"))
    operand = r"(?:[A-Za-z_]\w*|\d+|\((?:[^()]|\([^()]*\))*\))"
    for body, where in places:
        found = re.search(rf"({operand})\s*(>>|<<)\s*({operand})\s*([-+])\s*({operand})", body)
        if found:
            value, shift, count, sign, rest = found.groups()
            return (f"In {where}, `{found.group(0)}` shifts by `{count} {sign} {rest}`: in C, + and - bind tighter "
                    f"than {shift}, so the sum is the shift's count, which soon passes 31. Parenthesize the shift: "
                    f"`({value} {shift} {count}) {sign} ...`" + (" (GPU Gems 3's CONFLICT_FREE_OFFSET has this bug; "
                    "it was meant as `(((n) >> NUM_BANKS) + ((n) >> (2 * LOG_NUM_BANKS)))`)." if "CONFLICT_FREE_OFFSET"
                    in where else "."))
    return None


def _template_block_size(source: Source, kernel: Kernel, block_dim) -> str | None:
    """For a template kernel instantiated for a block size (`reduce6<float, 256, false>` of `template <class T,
    unsigned int blockSize, bool nIsPow2>`: the samples pick the instance by the launch's threads) launched with
    another number of threads a block: the hint that says so. None for any other kernel."""
    name = kernel.call or kernel.name
    if "<" not in name:
        return None
    function = source.templates.get(name.split("<", 1)[0].split("::")[-1].strip())
    if function is None:
        return None
    names = function.template  # (`kernel.call` holds every argument, defaults filled in: source.instantiate)
    arguments = tokenize(name.split("<", 1)[1].rsplit(">", 1)[0])
    values = [" ".join(t.text for t in part) for part in _split_commas(arguments)]
    threads = block_dim[0] * block_dim[1] * block_dim[2]
    for at, (param, value) in enumerate(zip(names, values)):
        value = value.strip()
        if re.search(r"(?i)block_?size|blockdim|threads|tpb|^bs$|^block$|^nt$", param) and value.isdigit() \
                and int(value) not in (block_dim[0], threads):
            return (f"This instance, {name}, is made for {param} = {value} threads a block, but the launch has "
                    f"{block_dim[0]} (block.x = {block_dim[0]}): the kernel sizes its work by {param} (its shared "
                    f"memory, its reduction's steps), so launch {value} threads a block, or the instance whose {param} "
                    f"is {block_dim[0]}: `{name.split('<', 1)[0]}<"
                    + ", ".join(str(block_dim[0]) if k == at else v.strip() for k, v in enumerate(values)) + ">`.")
    return None


def _unchecked_block_axis(source: Source, line: int, unchecked: list[str], condition: str) -> str:
    """For an index `b * n + i` under `if (i < n)` whose `b` is a block's index along y or z (`int b = blockIdx.y;`, a
    batch or a row per block) that nothing checks: a sentence naming it and the check to add (with the kernel's
    scalar parameter that it never uses, `batch`, as the bound, where there is one); '' otherwise."""
    for variable in unchecked:
        made = _made_at(source, line, variable) if re.fullmatch(r"[A-Za-z_]\w*", variable) else (line, variable)
        axis = re.fullmatch(r"\s*blockIdx\.([yz])\s*", made[1]) if made else None
        if not axis:
            continue
        function = _function_parameters(source, line)
        scalars = [_parameter_name(p) for p in (function[1] if function else []) if "*" not in p and "[" not in p]
        body = function[2] if function else (0, 0)
        unused = [p for p in scalars if not re.search(rf"\b{re.escape(p)}\b", source.text[body[0]:body[1]])]
        bound = unused[0] if len(unused) == 1 else "count"
        inner = re.sub(r"^\s*if\s*\((.*)\)\s*$", r"\1", condition)
        return (f" `{variable}` is blockIdx.{axis.group(1)} (the block's place along {axis.group(1)}: a batch, a row), "
                f"and nothing checks it: check it too, `if ({variable} < {bound} && {inner})`"
                + (f" ({bound}: the kernel's parameter that it never uses)" if bound != "count" else "")
                + f", or launch exactly that many blocks along {axis.group(1)}.")
    return ""


def _guarded_index(source: Source, line: int | None, name: str, index: int, length: int) -> str | None:
    """For an index past the end of `name` at `line` that a guard of the kernel was meant to keep inside
    (the guard is there already, so "guard the access" would not help): an index made of more than the
    guarded variable (`x[i + j]` under `if (i < n)`, a partner `i ^ j`). None otherwise. (An early return
    that lets the variable reach the size, `if (i > n) return;`, is _one_past_the_end's.)"""
    expression = _subscript(source, line, name)
    if expression is None:
        return None
    # (`rowPtrs[row] ... rowPtrs[row + 1]` on one line: the index past the end is the one with more than its variable)
    text = source.line_text(line).split("//", 1)[0]
    longer = [m.group(1).strip() for m in re.finditer(rf"\b{re.escape(name)}\s*\[([^\[\]]+)\]", text)
              if m.group(1).strip() != expression and set(_names_in(m.group(1))) == {expression}]
    if re.fullmatch(r"\w+", expression) and len(longer) == 1:
        expression = longer[0]
    variables = _names_in(expression)
    start = max(line - 15, _body_lines(source, line)[0])
    for at in range(line, start - 1, -1):
        text = source.line_text(at)
        for variable in variables:
            v = re.escape(variable)
            guard = re.search(rf"\b(?:if|while)\s*\((?:[^;]*[(&|!\s])?{v}\s*(<|<=|>=|>)\s*[^;]*\)", text)
            if guard and expression != variable and _guard_reaches(source, at, guard.start(), line, variables):
                # `a[x * w + y]` under `if (x < w && ...)`: x counts columns (it stays below the width) but is
                # multiplied by the width, as a row is: row and column swapped
                swapped = re.fullmatch(r"\s*(\w+)\s*\*\s*(\w+)\s*\+\s*(\w+)\s*", expression)
                if swapped and re.search(rf"\b{re.escape(swapped.group(1))}\s*<\s*{re.escape(swapped.group(2))}\b",
                                         guard.group(0)):
                    column, width, other = swapped.groups()
                    columns = _size_guard(source, line, other)
                    if columns and columns[1] == width and not columns[2]:
                        # `A[row * K + k]` under `if (row < K ...)` and `k < K`: k is the column, and the row's
                        # check names a row's length where the number of rows belongs (`row < M`)
                        return (f"The index here is `{expression}`: `{column}` is multiplied by {width}, the length "
                                f"of a row, so it counts rows, and `{other}` (below {width}, line {columns[0]}) "
                                f"counts columns. Line {at} checks `{column} < {width}`, a row's length, where the "
                                f"number of rows belongs: compare `{column}` with the number of rows of {name} (its "
                                f"{length:,} elements / {width}), the size the kernel has for them.")
                    swapped_text = (
                        f"The index here is `{expression}`, and line {at} checks `{column} < {width}`: `{column}` "
                        f"counts columns (it stays below the width {width}), yet it is multiplied by {width}, as "
                        f"the row is. In a row-major array, rows of {width} elements, the element at row `{other}` "
                        f"and column `{column}` is `{other} * {width} + {column}` (row times width, plus column); "
                        f"with the two swapped, the index runs past the end whenever the rows and the columns "
                        "differ in number.")
                    across = re.search(rf"\b{re.escape(other)}\s*<\s*(\w+)\b", guard.group(0))
                    if across and across.group(1) != width and re.fullmatch(r"y|row|r|iy|gy|oy|py", column) \
                            and re.fullmatch(r"h|height|rows|n_?rows|ny|H|M|oh|out_h", width):
                        # `out[y * h + x]` under `x < w && y < h`: by its names y is the row and h the height, so the
                        # row's length, w, is what was meant (swapping the two would stay in bounds, and be wrong)
                        row_length = across.group(1)
                        return (f"The index here is `{expression}`: `{column}` is the row (line {at} keeps it below "
                                f"{width}, the number of rows), and a row is {row_length} elements long, not {width}: the "
                                f"element at row `{column}` and column `{other}` is `{column} * {row_length} + {other}` "
                                f"(row times the row's length, plus column). Multiplied by {width}, the rows overlap, "
                                "or run past the end, whenever the width and the height differ.")
                    if across and across.group(1) != width:
                        # `out[orow * cols + ocol]` under `orow < cols && ocol < rows`: or the first is the row of a
                        # transpose's output, cols rows of `rows` elements, whose row's length is the other size
                        height = across.group(1)
                        swapped_text += (f" If `{column}` is the row instead, as in a transpose's output ({width} rows, "
                                         f"the input's columns, of {height} elements each), a row is {height} long: "
                                         f"`{column} * {height} + {other}`.")
                    return swapped_text
                checked = [u for u in variables if re.search(rf"\b{re.escape(u)}\s*(<|<=|>=|>)", guard.group(0))]
                named = _and([f"`{u}`" for u in checked])
                mirror = re.fullmatch(r"\s*(\w+)\s*-\s*(\w+)\s*", expression)
                if mirror and mirror.group(2) in checked and (mirrored := _mirrored_index(expression, name, index,
                                                                                           length)):
                    return mirrored
                # a row-major index whose column mirrors x as `(w - x)`: w itself at x = 0, one past the row
                column = re.search(r"\+\s*\(\s*(\w+)\s*-\s*(\w+)\s*\)\s*$", expression)
                if column and column.group(2) in checked and re.search(
                        rf"\b{re.escape(column.group(2))}\s*<\s*{re.escape(column.group(1))}\b", guard.group(0)):
                    size, counter = column.groups()
                    return (f"The column here is `({size} - {counter})`, which is {size} itself when {counter} is 0: one "
                            f"past the row's last column ({size} - 1), so that thread's element is the next row's first "
                            f"(past the end of {name} from its last row). The column that mirrors {counter} is "
                            f"`{size} - 1 - {counter}`.")
                for u in checked:  # `if (r > R) return;`: r == R goes on, one past the last
                    past = re.search(rf"\b{re.escape(u)}\s*>\s*(\w+)\s*\)\s*return\b", text)
                    if past:
                        return (f"The index here is `{expression}` ({expression} = {index} here), and line {at} returns "
                                f"only when `{u} > {past.group(1)}`, so `{u} == {past.group(1)}` goes on, one past the "
                                f"last valid value (0 to {past.group(1)} - 1). Return when `{u} >= {past.group(1)}`.")
                condition = _condition_text(text, guard)
                inner = re.sub(r"^(?:if|while)\s*\((.*)\)$", r"\1", condition.strip())
                if row_major := _row_major(expression):
                    row, width, column = row_major
                    c = re.escape(column)
                    below = re.search(rf"\b{c}\s*(?:>=|>)\s*-?\d+\b|\b0\s*<=\s*{c}\b", inner)
                    above = re.search(rf"\b{c}\s*(?:<|<=)|(?:>|>=)\s*{c}\b", inner)
                    if column in checked and below and not above and row in checked and width not in checked:
                        # `if (rr >= 0 && rr < H && cc >= 0) x[rr * W + cc]`: the column's upper side is missing
                        return (f"The index here is `{expression}`, row `{row}` and column `{column}` of rows of "
                                f"{width}, and line {at} checks `{column}` against 0 only (`{condition}`): a column "
                                f"past the last, `{column} >= {width}`, wraps into the next row (`{row} * {width} + "
                                f"{width}` is row {row} + 1's first element), and from the last row past the end of "
                                f"{name}, as here ({expression} = {index}, and {name} has {length} elements). Add "
                                f"`{column} < {width}` to the check: `if ({inner} && {column} < {width})`.")
                plus_one = index == length and re.fullmatch(rf"\s*{re.escape(checked[0] if checked else '')}\s*\+\s*1\s*",
                                                            expression)
                return (f"The index here is `{expression}`, and line {at} checks {named} "
                        f"(`{_condition_text(text, guard)}`): that check alone does not keep `{expression}` "
                        f"inside {name}, which has {length} element{'s' * (length != 1)} ({expression} = {index} "
                        "here). Bound the whole index (the largest value it takes must stay below the size), or "
                        "give the output only as many threads as it has elements."
                        + _loop_bound_note(source, line, [u for u in variables if u not in checked], name)
                        + _unchecked_block_axis(source, line, [u for u in variables if u not in checked],
                                                _condition_text(text, guard))
                        + (f" If {name} should hold one element more than the count that line {at} checks (the row "
                           f"pointers of a CSR matrix: rows + 1, the last one the number of values), pass it whole: "
                           f"{length + 1} elements here." if plus_one else ""))
    # `int j = (int)(i * scale); if (i < n) y[i] = x[j];`: the guard checks what the index was made from
    for variable in variables:
        if not (made := _made_at(source, line, variable)):
            continue
        at, value = made
        sources = [u for u in _names_in(value) if u != variable]
        for checked_at in range(line, at - 1, -1):
            text = source.line_text(checked_at)
            for u in sources:
                guard = re.search(rf"\b(?:if|while)\s*\((?:[^;]*[(&|!\s])?{re.escape(u)}\s*(<|<=|>=|>)\s*[^;]*?\)", text)
                if guard:
                    bound = re.search(r"[<>]=?\s*(\w+)", guard.group(0))
                    limit = bound.group(1) if bound else length
                    return (f"The index here is `{expression}`, made at line {at} (`{variable} = {value};`), "
                            f"and line {checked_at} checks `{u}` (`{_condition_text(text, guard)}`), not the index: "
                            f"`{expression}` reaches {index} for a value of `{u}` that passes, and {name} has {length} "
                            f"element{'s' * (length != 1)}. Check the index that is used (`{expression} < "
                            f"{limit}`), or compute it so that it stays below the size.")
    return None


def _pitch_in_elements(source: Source, index: int, length: int) -> str | None:
    """For an index past the end in a kernel that steps rows by a pitch (`float* row = img + y * pitch;`,
    cudaMallocPitch's, which counts bytes) on a pointer that is not a char's: the hint that says so."""
    if index < length:
        return None
    chars = set(re.findall(r"\bchar\s*\*\s*\)?\s*\(?\s*(\w+)", source.text))

    def item(pointer: str) -> str:  # the element type the pointer was declared with
        declared = re.search(rf"\b(\w+)\s*\*\s*(?:const\s+)?(?:__restrict__\s+)?{re.escape(pointer)}\b", source.text)
        return declared.group(1) if declared and declared.group(1) not in ("const", "return") else "T"

    subscript = re.search(r"\b(\w+)\s*\[\s*\(?\s*(?:(\w+)\s*\*\s*(\w*pitch\w*)|(\w*pitch\w*)\s*\*\s*(\w+))\s*[+\]]",
                          source.text, re.IGNORECASE)
    if subscript and subscript.group(1) not in chars:  # img[y * pitch + x]
        pointer, row, pitch = subscript.group(1), subscript.group(2) or subscript.group(5), \
            subscript.group(3) or subscript.group(4)
        shown = f"{pointer}[{row} * {pitch} + ...]" if subscript.group(2) else f"{pointer}[{pitch} * {row} + ...]"
        t = item(pointer)
        return (f"Index {index} is past the end: `{shown}` steps {pitch} elements "
                f"of {pointer} per row, but a pitch (cudaMallocPitch's, or a NumPy array's strides) counts bytes. "
                f"Find the row in bytes, `{t}* r = ({t}*)((char*){pointer} + {row} * {pitch});` then r[x], or "
                f"pass the pitch in elements ({pitch} / sizeof({t})).")
    for found in re.finditer(r"\b(\w+)\s*\+\s*\(?\s*(\w+)\s*\*\s*(\w*pitch\w*)\b", source.text, re.IGNORECASE):
        pointer, row, pitch = found.groups()
        if pointer not in chars:
            t = item(pointer)
            return (f"Index {index} is past the end: `{found.group(0)}` adds {pitch} in elements of {pointer}, but a "
                    f"pitch (cudaMallocPitch's, or a NumPy array's strides) counts bytes. Step through bytes, "
                    f"`({t}*)((char*){pointer} + {row} * {pitch})`, or pass the pitch in elements ({pitch} / "
                    f"sizeof({t})).")
    return None


def _undefined_index(index: int) -> str | None:
    """For an index at (or near: a slot base + rank) the bits a shuffle gives a lane whose source lane is
    outside the mask (runtime.h's undefined result, 0x7FC0DEAD): the hint that says where it came from."""
    near = next((p for p in _UNDEFINED32 if abs(index % 2**32 - p) <= 4096), None)
    if near is None:
        return None
    return (f"Index {index} is {'near ' * (index % 2**32 != near)}0x{near:X}, what a shuffle here gives a lane whose "
            "source lane is not in the shuffle's mask (or has returned): on a GPU that value is undefined. The index "
            "comes from such a __shfl_*_sync: make its source lane one of the mask's lanes (the first active lane "
            "is __ffs(mask) - 1, not lane 0 when lane 0 is absent), or shuffle with the mask of the lanes that "
            "reach it (__activemask()).")


def _unsigned_below_zero(source: Source, line: int | None, index: int) -> str | None:
    """For an index just below 2^32 (or 2^64): a negative number computed in unsigned arithmetic, where
    `line` subtracts from an unsigned built-in (`S[blockIdx.x - 1]` in block 0): the hint that says so."""
    if not line:
        return None
    for top in (2**32, 2**64):
        if top - (1 << 16) <= index < top:
            below = index - top
            break
    else:
        return None
    text = source.line_text(line).split("//", 1)[0]
    pattern = r"\b((?:threadIdx|blockIdx|blockDim|gridDim)\.[xyz])\s*-\s*(\w+)"
    found = re.search(pattern, text)
    kept = ""
    if not found:  # `unsigned i = threadIdx.x - 1;` on a line before, then `a[i]`
        for name in sorted(_subscript_names(text)):
            made = _made_at(source, line, name)
            if made and (found := re.search(pattern, made[1])):
                line = made[0]
                if _declared_unsigned(source.line_text(line), name):
                    kept = f", into an int variable (`int {name}`, not unsigned)"
                break
    if not found:
        return None
    built_in, subtracted = found.groups()
    first = {"threadIdx": "thread", "blockIdx": "block"}.get(built_in.split(".")[0])
    skip = f"leave out the first {first} (`if ({built_in} > 0)`, or `>= {subtracted}`) or " if first else ""
    return (f"Index {index} is {below} computed in unsigned arithmetic: {built_in} is unsigned, so `{built_in} - "
            f"{subtracted}` (line {line}) below 0 wraps around to 2^{top.bit_length() - 1} - {-below} instead of "
            f"{below}. To fix it, "
            f"{skip}compute in int: `(int){built_in} - {subtracted}`{kept}.")


def _signed_char_index(source: Source, line: int | None, index: int) -> str | None:
    """For a negative index on a line that reads a `char` (or int8_t) array in its subscript: char is
    signed (on a GPU too), so bytes 128 to 255 read as -128 to -1: the hint that says so."""
    if not line or not -256 <= index < 0:
        return None
    chars = set(re.findall(r"(?<!unsigned)(?<!unsigned )\b(?:signed\s+)?(?:char|int8_t)\s*(?:const\s*)?\*\s*"
                           r"(?:const\s+)?(?:__restrict__\s+)?(\w+)", source.text))
    text = source.line_text(line).split("//", 1)[0]
    subscripts = re.findall(r"\[([^\[\]]*\[[^\[\]]*\][^\[\]]*)\]", text)  # a subscript holding another access
    name = next((n for n in chars for sub in subscripts if re.search(rf"\b{re.escape(n)}\s*\[", sub)), None)
    if name is None:
        return None
    return (f"Index {index} comes from `{name}`, an array of char, which is signed (on a GPU too): bytes 128 to 255 "
            f"read as -128 to -1. Declare it `unsigned char` (`const unsigned char* {name}`), or read "
            f"`(unsigned char){name}[i]`.")


def _negative_index(index: int, length: int, source: Source | None = None, line: int | None = None,
                    subscript: str | None = None, array: str = "") -> str | None:
    """For an access below the first element: the hint (a neighbour at -1, a mask indexed from -R); far
    below, and with a product of ints in sight, an int product that overflowed."""
    if index >= 0:
        return None
    product = None
    if source is not None and line:
        factor = r"[A-Za-z_][\w.]*(?:\s*\[[^\]]*\])?"
        code = source.line_text(line).split("//", 1)[0]
        subscripts = re.findall(r"\[([^\[\]]*)\]", code)
        direct, indexed = _subscript_names(code), _index_names(source, line)
        best = -1
        for at in range(line, max(0, line - 4), -1):
            text = source.line_text(at).split("//", 1)[0]
            assigned = set(re.findall(r"\b([A-Za-z_]\w*)\s*=(?!=)", text))
            for found in re.finditer(rf"\(?\s*{factor}\s*\*\s*(?:\d{{3,}}|{factor})\s*\)?", text):
                # (a wrapped product is far below 0, or, taken % n, anywhere down to -n; a row above, y * w + x
                # with y = -1, is a neighbour's offset)
                if "long" in text or "size_t" in text or not (
                        index < -(1 << 20) or re.search(r"\)\s*%|\*[^;%]*%", text)) or not (
                        index < -64 or re.search(r"\d{4,}", found.group(0))):  # (near 0: a hash's large constant)
                    continue
                if re.match(r"\(?\s*(\w+)", found.group(0)).group(1) in _TYPE_WORDS:
                    continue  # `float* out`, a declaration
                # the product the index is made of first: in the subscript, or where a variable of it is set
                # (`int idx = r * cols * 1024;` before `if (idx < rows * cols) out[idx] = 1;`), then one of
                # its names, then any
                names = set(re.findall(r"[A-Za-z_]\w*", found.group(0)))
                score = (2 if (at == line and any(found.group(0).strip(" ()") in inner for inner in subscripts))
                         or assigned & direct else 1 if names & indexed else 0)
                if score > best:
                    best, product, product_line = score, found, at
        at = product_line if product else line
    if product:
        text = product.group(0).strip()
        return (f"Index {index} is below the first element: an int product that overflowed? `{text}` (line {at}) "
                f"past 2^31 - 1 wraps around to a negative number, on "
                f"a GPU too (C++ leaves it undefined). Compute it in 64 bits, `(long long)` on one factor, or in "
                "unsigned arithmetic, before any % or /.")
    if index < -(1 << 20):  # (far below: an unsigned or uninitialized value, hinted elsewhere)
        return None
    if source is not None and line:  # `(x + dx) % W` with x + dx = -1: C's % keeps the sign
        for at in range(line, max(0, line - 4), -1):
            text = source.line_text(at).split("//", 1)[0]
            wrap = re.search(r"\(([^()]*-?[^()]*)\)\s*%\s*([\w.]+)", text)
            # (the wrap must make the faulting index: `window[d] = x[(t + d + 32) % 32]` faults at window[d])
            wrapped = subscript is None or "%" in subscript or any(
                re.search(rf"\b{re.escape(v)}\s*=(?!=)[^;]*%", text) for v in _names_in(subscript))
            if wrap and wrapped and re.search(r"[-+]", wrap.group(1)):
                return (f"Index {index} is below the first element, and line {at} wraps with `{wrap.group(0)}`: C's % "
                        f"keeps the sign of a negative left side (-1 % {wrap.group(2)} is -1, not {wrap.group(2)} - 1). "
                        f"Add {wrap.group(2)} before taking %: `({wrap.group(1)} + {wrap.group(2)}) % {wrap.group(2)}`.")
    if source is not None and line:  # `z[y]` with `int y = labels[row];`: a value from data
        text = source.line_text(line).split("//", 1)[0]
        for name in dict.fromkeys(re.findall(r"\w\s*\[\s*([A-Za-z_]\w*)\s*\]", text)):
            for at in range(line, max(0, line - 12), -1):
                read = re.search(rf"\b{re.escape(name)}\s*=\s*(\w+\s*\[[^\]]*\])\s*;", source.line_text(at))
                if read:
                    return (f"Index {index} is below the first element, and the index `{name}` is a value read from "
                            f"data, `{read.group(1)}` (line {at}): data can hold negative values (a label of -100, "
                            "PyTorch's ignore_index, or a padding marker). Test the value before using it as an index "
                            f"(`if ({name} < 0) ...`), as the data's convention says.")
    # (the learner's own index: a name, or an expression in parentheses)
    named = subscript if subscript and re.fullmatch(r"[A-Za-z_]\w*", subscript) else \
        f"({subscript})" if subscript and "[" not in subscript and len(subscript) <= 40 else "k"
    # `in[(y - 1) * w + x]` at y = 0: the neighbour before the first row (or column): the border needs a guard
    minus = (r"\(\s*([A-Za-z_]\w*)\s*-\s*(\d+|[A-Z_][A-Z0-9_]*)\s*\)|(?<![\w.])([A-Za-z_]\w*)\s*-\s*"
             r"(\d+|[A-Z_][A-Z0-9_]*)\b")
    # `in[i - w]`, `in[i - nx * ny]`: the neighbour in the row (or plane) before, which the first row has none of
    back = subscript and re.fullmatch(r"\s*([A-Za-z_]\w*)\s*-\s*([a-z_]\w*(?:\s*\*\s*[A-Za-z_]\w*)*)\s*", subscript)
    if back and source is not None and ("*" in back.group(2) or re.search(
            rf"\*\s*{re.escape(back.group(2))}\b|\b{re.escape(back.group(2))}\s*\*", without_comments(source.text))):
        # (a width: what a row index is multiplied by, `int i = y * w + x;`; not a 1-D window's `i - k`)
        variable, step = back.groups()
        plane = "*" in step
        return (f"Index {index} is below the first element: the neighbour `{variable} - {step}` is the element one "
                f"{'plane' if plane else 'row'} back, and the first {'plane' if plane else 'row'} has none, so it lies "
                f"before the array there. Guard that border on its coordinate: skip the first "
                f"{'plane (`z >= 1`' if plane else 'row (`y >= 1`'} in the guard or the loop, as for the last one), or "
                f"take 0 there (`{'z' if plane else 'y'} > 0 ? {array or 'in'}[{variable} - {step}] : 0.0f`).")
    # (the first subscript of the array on the line, then its others: `in[y * w + x] - in[(y - 1) * w + x]`)
    candidates = _array_subscripts(source, line, array, subscript) if source is not None and line and subscript else []
    neighbour = next((found for found in (re.search(minus, c) for c in candidates if "[" not in c) if found), None)
    if neighbour:
        variable, step = (neighbour.group(1), neighbour.group(2)) if neighbour.group(1) else neighbour.group(3, 4)
        return (f"Index {index} is below the first element: the neighbour `{variable} - {step}` is outside the array "
                f"where {variable} is below {step} (the border). Guard the border, `if ({variable} >= {step} && ...)` (a "
                f"stencil skips its edge; a halo load takes 0 there, `{variable} >= {step} ? ... : 0.0f`), or clamp the "
                f"neighbour, `max({variable} - {step}, 0)`.")
    if source is not None and line and subscript and "[" not in subscript and (
            set_at := _neighbour_variable(source, line, array, subscript, minus)):
        # `int xl = x - 1;` then `in[y * w + xl]` (the first subscript of the array on the line, `in[y * w + x]`,
        # is in range: another one of the same array faulted)
        name, variable, step, at = set_at
        return (f"Index {index} is below the first element: `{name}` is the neighbour `{variable} - {step}` (line {at}), "
                f"outside the array where {variable} is below {step} (the border). Clamp it where it is set, "
                f"`{name} = max({variable} - {step}, 0)`, or guard the border, `if ({variable} >= {step} && ...)` (a "
                "stencil skips its edge).")
    body = _function_body(source.text, line) if source is not None and line else None
    if body and named == subscript and _declared_unsigned(source.text[body[0]:body[1]], named):
        # `size_t i = 0; i -= 1;`: an unsigned index is never below 0; it wrapped around, and reads as negative here
        return (f"Index {index} is below the first element: `{named}` is unsigned, so it never goes below 0 but wraps "
                f"around to a huge number (which as an offset reaches back {-index} element"
                f"{'s' * (index != -1)}): a `{named} >= 0` test is always true for it. Keep it from going below 0 "
                f"(compare before subtracting: `if ({named} >= k) {named} -= k;`), or make it a signed int.")
    # `img[y * w + x]` (a row times the width, plus a column; in a helper given x + dx and y + dy): a guard of
    # the flat index would let a column of -1 read the last element of the row above
    rows = re.fullmatch(r"\s*\(?\s*([A-Za-z_]\w*)\s*\*\s*([A-Za-z_][\w.]*)\s*\)?\s*\+\s*([A-Za-z_]\w*)\s*",
                        subscript or "") or re.fullmatch(
        r"\s*([A-Za-z_]\w*)\s*\+\s*\(?\s*([A-Za-z_]\w*)\s*\*\s*([A-Za-z_][\w.]*)\s*\)?\s*", subscript or "")
    term = r"(\([^()]*\)|[A-Za-z_]\w*)"  # (`(y + dy) * w + (x + dx)`: coordinates in parentheses too)
    if rows:
        row, width, column = rows.groups() if "*" in subscript.split("+")[0] else (rows.group(2), rows.group(3),
                                                                                   rows.group(1))
    elif (rows := re.fullmatch(rf"\s*{term}\s*\*\s*([A-Za-z_][\w.]*)\s*\+\s*{term}\s*", subscript or "")) \
            or (turned := re.fullmatch(rf"\s*{term}\s*\+\s*{term}\s*\*\s*([A-Za-z_][\w.]*)\s*", subscript or "")):
        bare = lambda t: t[1:-1].strip() if t.startswith("(") else t  # noqa: E731
        if rows:
            row, width, column = bare(rows.group(1)), rows.group(2), bare(rows.group(3))
        else:
            column, row, width = bare(turned.group(1)), bare(turned.group(2)), turned.group(3)
            rows = turned
    if rows:
        return (f"Index {index} is below the first element: in `{subscript.strip()}` (row {row}, column {column}, rows "
                f"of {width}), the row or the column is below 0 here (a neighbour at the border, x - 1 or y - 1). Guard "
                f"each coordinate, `if ({column} >= 0 && {column} < {width} && {row} >= 0 && ...)`, or clamp each one "
                f"(`max({column}, 0)`, `min({column}, {width} - 1)`): a guard of the whole index, `{named} >= 0`, would "
                f"let a column of -1 read the last element of the row above.")
    return (f"Index {index} is below the first element: an offset that reaches below 0 (a neighbour i - 1 at the "
            f"edge, a mask indexed from -R). Shift the index (mask[j + R] for j from -R to R) or guard it: "
            f"`if ({named} >= 0 && {named} < {length})`.")


def _array_subscripts(source: Source, line: int, array: str, first: str = "") -> list[str]:
    """The indices of `array` at `line`, once each: `first` (the faulting access's, where known) first."""
    text = source.line_text(line).split("//", 1)[0]
    found = re.findall(rf"(?<![\w.]){re.escape(array)}\s*\[([^\[\]]+)\]", text) if array else []
    return list(dict.fromkeys(index.strip() for index in [first, *found] if index.strip()))


def _neighbour_variable(source: Source, line: int, array: str, subscript: str,
                        minus: str) -> tuple[str, str, str, int] | None:
    """For a negative index at `line`: a variable of a subscript of the same array there (the first one,
    `subscript`, and the others) set a few lines up as a neighbour below (`int xl = x - 1, xr = x + 1;`):
    (the variable, what it is made from, the step, the line), or None."""
    for candidate in _array_subscripts(source, line, array, subscript):
        for name in _names_in(candidate):
            if _declared_unsigned(source.text, name):
                continue  # (`size_t j = i - 1;`: it wraps around, never below 0: _negative_index says so)
            if (made := _made_at(source, line, name)) and (found := re.fullmatch(minus, made[1].strip())):
                if re.search(rf"\bif\s*\([^;]*\)\s*\{{?\s*{re.escape(name)}\s*=", source.line_text(made[0])):
                    continue  # (`if (b >= nb) b = nb - 1;`: a clamp some threads skip, not where b was made)
                variable, step = (found.group(1), found.group(2)) if found.group(1) else found.group(3, 4)
                return name, variable, step, made[0]
    return None


def _unsigned_count_down(source: Source, line: int | None, index: int) -> str | None:
    """For an access at a huge index (an unsigned value that went below 0): the hint that names `i >= 0`
    (or `i - 1 >= 0`) on `line` or the three lines before it, where i is declared unsigned (always true:
    the loop or the test lets it wrap around)."""
    if not line or 0 <= index < 2**31 - 1:  # (a 64-bit one, size_t, wraps to what reads as negative)
        return None
    found = _always_true_unsigned(source, range(line, max(0, line - 4), -1))
    if found is None:
        return None
    comparison, name, at, subtracted = found
    said = f"`{comparison}` (line {at}) is always true for an unsigned {name}: "
    wrapped = 2**32 - 1 if 0 <= index < 2**32 else 2**64 - 1
    if subtracted:  # `i - 1 >= 0`: compare before subtracting
        return (f"{said}`{name} - {subtracted}` below 0 wraps around to {wrapped}. Compare before subtracting: "
                f"`{name} >= {subtracted}`.")
    return (f"{said}below 0 it wraps around to {wrapped}. Count down with a signed int (`for (int {name} = n - 1; "
            f"{name} >= 0; {name}--)`) or as `for (unsigned {name} = n; {name}-- > 0;)`.")


def _printf_message(fault: _Fault) -> tuple[str, str]:
    """What a printf whose format does not fit its arguments did, and the fix (runtime.h __cc_printf_check)."""
    want, got, spec = fault.text.decode(errors="replace").split("|", 2)
    n = fault.index
    nth = f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"
    if want == "n":  # C's %n (runtime.h refuses it before printf runs: it would write through its argument)
        what = f"called printf with {spec}, which CUDA's printf does not have"
        hint = ("C's %n stores the number of characters printed so far through its argument, a pointer; CUDA's "
                "printf has no %n (its conversions are c d i o u x X p e E f g G a A s), and here it would write "
                "where the pointer points, unchecked. Count the characters yourself, or leave %n out.")
        return what, hint
    if want == "L":  # %Lf: a long double (runtime.h refuses it: device code has none)
        what = f"called printf with {spec}, a long double's conversion, which CUDA's printf does not have"
        hint = ("Device code has no long double (nvcc treats it as a double and warns), and printf no L: print a "
                "double or a float with %f (or %e, %g).")
        return what, hint
    if want == "m":  # more than 32 values (runtime.h)
        what = f"called printf with {fault.count} values after the format, but CUDA's printf takes at most 32"
        hint = ("On a GPU the values from the 33rd on are left out and their conversions print as written (`%d`). "
                "Split the line into two printf calls (a thread's lines stay whole), or print fewer values.")
        return what, hint
    if got == "-":
        what = (f"called printf with a format that asks for at least {n} value{'s' * (n != 1)} ({spec} takes the "
                f"{nth}), but the call passes {fault.count}")
        hint = ("On a GPU a missing value prints as whatever lies in printf's buffer. Pass one argument for each "
                "conversion (and for each * width or precision), in order; %% prints a percent sign.")
        return what, hint
    takes = ("whose * takes an int (the width or precision)" if want == "*"
             else f"which prints {_PRINTF_TAKES[want]}")
    what = f"passed {_PRINTF_IS[got]} to printf's {spec} (the {nth} value after the format), {takes}"
    if got in ("h", "H"):
        pair = got == "H"
        hint = ("printf has no conversion for " + ("a pair of halves" if pair else "a half") + ": on a GPU it would "
                "print a meaningless number (nvcc warns) and shift the values after it. Convert it to a float first: "
                + ("`__low2float(h2), __high2float(h2)` with two %f (or __bfloat162float of each half)" if pair else
                   "`__half2float(h)` with %f (`__bfloat162float(b)` for a __nv_bfloat16)") + ".")
    elif got == "V":
        hint = ("printf prints numbers one by one, and a vector type is several: on a GPU it would print a "
                "meaningless number (nvcc warns) and shift the values after it. Pass its members, one conversion "
                "each: `v.x, v.y` with %f (or %d, %u), `threadIdx.x` for the thread's index.")
    elif want == "s" and got == "p":
        hint = ("On a GPU printf would read the numbers' bytes as text until it meets a zero byte: garbage, past "
                "the array's end. %s takes a string literal or a char array; print an element with %f or %d "
                "(p[i]), or the address with %p.")
    elif want == "s":
        hint = ("On a GPU printf would read the number as the address of a string: garbage or a crash. %s takes a "
                "string literal or a char array; print numbers with %d (int), %u (unsigned), %f (float, double).")
    elif {want, got} == {"i", "l"}:
        hint = ("On a GPU printf takes 4 bytes for %d, %u, %x and 8 for %lld, %llu, %zu (and %ld on Linux): a "
                "value of the other size prints wrong and shifts the values after it. Use %lld (%llu) for long "
                "long, %zu for size_t, %d (%u) for int, or convert the value: "
                + ("(int)n (a long long given to %d)." if want == "i" else "(long long)n (an int given to %lld)."))
    elif got in ("p", "c", "v"):
        hint = ("On a GPU printf would print part of the pointer's 8 bytes and shift the values after it. Use %p for "
                "a pointer (and %d or %f for the value it points to, p[i]).")
    elif want == "f":
        hint = ("On a GPU printf would read other bytes than the value's and print a meaningless number, and the "
                "values after it may be off too. Use %d for int (%u unsigned, %ld long, %lld long long, %zu "
                "size_t, %p a pointer), or convert the value: (double)n.")
    elif got == "f":
        hint = ("On a GPU printf would read the double's bytes as an integer and print a meaningless number, and the "
                "values after it may be off too. Use %f (or %e, %g) for float and double, or convert the value: "
                "(int)x.")
    else:
        hint = "Use %p for a pointer, %s for a char pointer's text, %d and %f for the values they point to (p[i])."
    return what, hint


# A spin lock taken in a kernel: `while (atomicCAS(m, 0, 1) != 0)`, `while (atomicExch(m, 1))`.
_LOCK_TAKEN = re.compile(r"\b(while|do)\b[^;{]*?\batomic(CAS|Exch)\s*\(|\batomicCAS\s*\([^;]*\)\s*(!=|==)\s*0")


_LOCK_HINT = ("The update is inside a lock (taken with atomicCAS, released with atomicExch): the lock makes the "
              "threads take turns, but not see one another's writes. Put {fence} before the atomicExch that "
              "releases the lock (and after the loop that takes it), so that the next holder reads the value this one "
              "wrote. (For a plain sum, atomicAdd(&{element}, value) needs no lock.)")


def _in_a_lock(source: Source, lines) -> bool:
    """Whether one of `lines` (a fault's line and the lines that called its helper) lies between a line that takes
    a lock with atomicCAS (or atomicExch) and one that releases it with atomicExch: in the kernel, or as calls of
    helpers that do (`lock(m); total += x; unlock(m);`)."""
    takes, releases = _lock_lines(source.text)
    return any(any(t <= n for t in takes) and any(n <= r for r in releases) and
               max(t for t in takes if t <= n) > max((r for r in releases if r < n), default=0) for n in lines if n)


@functools.lru_cache(maxsize=32)
def _lock_lines(text: str) -> tuple[frozenset, frozenset]:
    """The lines of `text` that take a lock and those that release one (atomicExch), a helper's call counting as
    what the helper's body does (and the helper's own lines then not: its definition takes nothing)."""
    def line_of(position: int) -> int:
        return text.count("\n", 0, position) + 1

    takes = {line_of(m.start()) for m in _LOCK_TAKEN.finditer(text)}
    releases = {line_of(m.start()) for m in re.finditer(r"\batomicExch\s*\(", text)}
    if not (takes and releases):
        return frozenset(), frozenset()  # (no lock)
    for m in re.finditer(r"\b(\w+)\s*\([^;{}()]*\)\s*(?:const\s*)?\{", text):  # a function's definition
        if m.group(1) in ("if", "for", "while", "switch", "catch"):
            continue
        depth, end = 0, m.end() - 1
        for end in range(m.end() - 1, len(text)):
            depth += {"{": 1, "}": -1}.get(text[end], 0)
            if depth == 0:
                break
        body = range(line_of(m.start()), line_of(end) + 1)
        calls = {line_of(c.start()) for c in re.finditer(rf"\b{m.group(1)}\s*\(", text)} - set(body)
        for found in (takes, releases):
            if calls and found & set(body):
                found -= set(body)
                found |= calls
    return frozenset(takes), frozenset(releases)


def _count_compared(module: Module, fault: _Fault, arrays: dict) -> bool:
    """Whether a value read back after its block's own atomic update of it (runtime.h's mask 4) is
    compared on the reading line, `if (*count == gridDim.x)`: a last block chosen so, which two blocks
    can both pass (the ticket's bug). A total read so (`*mean = *total / n`) is the plain read of an
    unfinished total, which the reruns judge."""
    name = re.escape(_array_name(fault, arrays)[0])
    chain = module.lines_at(fault.code_offset if fault.op == 1 else fault.address)
    text = module.source.line_text(chain[0]) if chain and chain[0] else ""
    return bool(re.search(rf"\b{name}\b[^;]*?(==|!=|>=|<=|[<>])|(==|!=|>=|<=|[<>])\s*\*?\s*"
                          rf"\(?\s*(?:volatile\s+\w+\s*\*\s*\)\s*)?&?\s*{name}\b", text))


def _thread_names(kernel: Kernel, args, fault: _Fault, block_dim, grid_dim) -> dict:
    """The faulting thread's built-ins (threadIdx.x, ..., gridDim.z) and the launch's integer arguments, by name:
    what _index_value evaluates a subscript or a guard with."""
    return {**_scalar_values(kernel, args), **{f"{b}.{a}": v for b, values in (
        ("threadIdx", fault.thread), ("blockIdx", fault.block), ("blockDim", block_dim or (1, 1, 1)),
        ("gridDim", grid_dim or (1, 1, 1))) for a, v in zip("xyz", values)}}


def _set_by_one(name: str, read_text: str, write_text: str, before_write: str) -> bool:
    """Whether the store of a plain read-and-write pair is one thread's setting of a new value, not an update:
    the write (`scale[0] = 2;`) stores what neither the element nor the variable its read went into (`int sc =
    scale[0];`) gives, under a test that picks one thread (`if (i == 0)`, `if (threadIdx.x == 0 && ...)`) on its
    line or the line before. (A stack push, `next[i] = *head; *head = i;`, is every thread's: not this.)"""
    element = rf"(?:\*\s*{re.escape(name)}\b|\b{re.escape(name)}\s*\[[^\]]*\])"
    stored = re.search(rf"{element}\s*=(?!=)\s*([^;]*);", write_text)
    if not stored or re.search(rf"\b{re.escape(name)}\b", stored.group(1)):
        return False
    into = re.search(rf"\b(\w+)\s*=(?!=)[^;]*{element}", read_text)
    if into and re.search(rf"\b{into.group(1)}\b", stored.group(1)):
        return False
    one = r"if\s*\([^;]*\b(?:threadIdx\.[xyz]|blockIdx\.[xyz]|i|idx|tid|gid|index)\s*==\s*0\b"
    return bool(re.search(one, write_text) or (re.search(one, before_write or "") and not re.search(r"[;}]\s*$",
                                                                                                 before_write)))


def _plain_read_and_write(fault: _Fault) -> bool:
    """A global race between one thread's plain read and another's plain write (not a store handed
    over without a fence, not a volatile step of a warp), or a plain read of what another thread
    updates atomically."""
    return {fault.op, fault.other_op} in ({1, 2}, {1, 3}) and fault.mask in (0, 1)


def _float_arrays(kernel: Kernel, args, arrays: dict) -> dict:
    """The argument arrays of floating-point elements: address -> NumPy dtype."""
    found = {}
    for p, arg in zip(kernel.params, args):
        if p.pointer and p.dtype and arg.data in arrays and p.dtype in ("float16", "float32", "float64"):
            found[arg.data] = np.dtype(p.dtype)
    return found


def _differing(was: np.ndarray, now: np.ndarray, size: int, dtype) -> np.ndarray:
    """The elements (indices, `size` bytes each) two runs' bytes of one array disagree on: exactly, or
    for floating-point elements (`dtype`) beyond the rounding that adding in another order gives
    (atomicAdd of floats, an atomicCAS loop's sum): relative to the larger of the two values and of
    the array's typical magnitude (its 90th percentile: a sum that cancels to near 0 differs by the
    rounding of its terms; one huge element elsewhere does not hide differences). Infinities and NaNs
    agree only with themselves."""
    if np.array_equal(was, now):
        return np.zeros(0, np.int64)
    if dtype is None or size != dtype.itemsize or was.size % size:
        return np.unique(np.flatnonzero(was != now) // max(size, 1))
    a, b = was.view(dtype).astype(np.float64), now.view(dtype).astype(np.float64)
    finite = np.isfinite(a) & np.isfinite(b)
    typical = np.percentile(np.abs(a[finite]), 90) if finite.any() else 0.0
    with np.errstate(invalid="ignore"):
        tolerance = {2: 1e-2, 4: 1e-5, 8: 1e-12}[size] * np.maximum(np.maximum(np.abs(a), np.abs(b)), typical)
        same = np.where(finite, np.abs(a - b) <= tolerance, (a == b) | (np.isnan(a) & np.isnan(b)))
    return np.flatnonzero(~same)


def _race_changes_results(module: Module, kernel: Kernel, config, packed, memory: dict, before: dict,
                          floats: dict, raced: int = 0):
    """After a sanitized launch stopped at a race between one thread's plain read of global memory and
    another thread's plain write: whether the read seeing the old value or the new one changes what
    the launch computes. It runs three times more from the memory it started with, letting such races
    go: in launch order; with the blocks and each block's threads in the opposite order (which turns
    every such pair around); and in launch order with each such read seeing the value from before the
    other thread's write (a read that came first, inside the other thread's check-then-set: two
    threads that both find `!seen[v]` both count v). A race that cannot change the results is no bug
    (breadth-first search marking a vertex's level while other threads test whether theirs is the
    current one, say): then (OK, the fault record, the printf output) of the run in launch order,
    whose results are in place. When a run's results differ from the first's: what differs, in words
    (the race is the bug). When the run in launch order stops at another kind of fault past the race
    (an index out of bounds): (its status, its fault record, its printf output), the bug to report.
    None when a later run stops (the race is the bug to report, as found), except a run in the opposite order
    that does not end: blocks that wait for the block before them (a chained scan's flags) cannot run so,
    and the other two runs judge (it may take three times as long as the run in launch order, a second at
    least). `floats`: the arrays of floating-point elements, whose results may differ by rounding. `raced`: the
    array of the race (its base address); two threads storing into one element of another array, met in launch order
    past it, is the bug to report (`parent[u] = v` beside a breadth-first search's harmless test of a level)."""
    for mode in (1, 2, 3):
        started = time.perf_counter()
        status, fault, text = _run_again(module, kernel, config if mode != 2 else _time_capped(config, took), packed,
                                         before, "__cc_set_race_rerun", mode)
        if mode == 1:
            took = max(RERUN_SECONDS, 3 * (time.perf_counter() - started))
        if mode == 2 and status == TIMEOUT:
            continue  # (blocks that wait for one another in launch order)
        if status != OK:  # past the race, in launch order, another bug: that one is the message (two threads
            # storing into one element, say: `parent[u] = v` beside a BFS's harmless read of a level being set)
            return (status, fault, text) if mode == 1 and (fault.kind != GLOBAL_RACE or (
                not _plain_read_and_write(fault) and fault.base != raced)) else None
        if mode == 1:
            first = _snapshot(before)
            first_fault, output = fault, text
        else:
            for address, saved in before.items():
                now = _bytes_at(address, len(saved))
                differing = _differing(first[address], now, memory[address][2], floats.get(address))
                if differing.size:
                    return _race_effect(mode, memory[address], int(differing[0]), first[address], now, kernel)
    _put_back(first)
    return OK, first_fault, output


def _same_value_race(module: Module, kernel: Kernel, config, packed, memory: dict, arrays: dict, before: dict,
                     floats: dict, fault: _Fault) -> str | None:
    """After a first run stopped at a plain read beside another thread's store of the value the element
    held already (runtime.h's mask 8: an in-place blur of a straight line, which leaves it as it is): whether,
    with other values in that array, the launch run with the blocks and threads in the opposite order gives
    other results than in launch order. Other values: random numbers from 0 to 1 in a floating-point array;
    in an integer array its own values shuffled (any index read from it stays one the launch could meet, and
    each of the two runs may take RERUN_SECONDS, as a loop bound read from it may be much larger now). The
    effect in words when it does; None when it does not, or cannot tell (a rerun stopped). The memory is as
    it was before the launch afterwards."""
    base = fault.base
    if base not in before or base not in memory:
        return None
    size, rng = memory[base][2], np.random.default_rng(2024)
    if base in floats:
        values = rng.random(len(before[base]) // floats[base].itemsize).astype(floats[base])
        other, limit = "random numbers from 0 to 1", config
    elif size in (1, 2, 4, 8) and len(before[base]) % size == 0:
        own = np.frombuffer(before[base].tobytes(), f"u{size}")
        values = rng.permutation(own)
        if np.array_equal(values, own):
            return None  # (one value throughout: no order of the threads can show anything)
        other, limit = "its own values, shuffled", _time_capped(config, RERUN_SECONDS)
    else:
        return None
    found = _both_orders(module, kernel, limit, packed, {**before, base: np.frombuffer(values.tobytes(), np.uint8)},
                         before, (1, 2), memory, arrays, floats)
    if found is None:
        return None
    element, forward, backward = found
    return (f"With this launch's values the store leaves the element as it was, so the results show nothing; with "
            f"other values in {memory[base][0]} ({other}), the launch gives {element} = {forward} "
            f"with the threads in launch order and {element} = {backward} with the blocks, and each block's threads, in "
            "the opposite order: the result depends on the order.")


def _time_capped(config, seconds: float):
    """A copy of a launch's config whose time limit is at most `seconds` (a rerun that may not end)."""
    capped = (ctypes.c_longlong * len(config))(*config)
    capped[7] = max(1, min(int(config[7]), int(seconds * 1000)))
    return capped


def _both_orders(module: Module, kernel: Kernel, config, packed, start: dict, before: dict, modes: tuple,
                 memory: dict, arrays: dict, floats: dict) -> tuple[str, str, str] | None:
    """The launch run twice more from the memory `start` (address -> bytes) with runtime.h's __cc_race_rerun at
    each of `modes` (launch order, then the opposite order): the first element where the two runs' results
    disagree (of the arguments' arrays, then the module's variables) and its value in each, in words; None where
    they agree, or where a run stops. The memory is as it was before the launch (`before`) afterwards."""
    results = []
    try:
        for mode in modes:
            status, _, _ = _run_again(module, kernel, config, packed, start, "__cc_set_race_rerun", mode)
            if status != OK:
                return None
            results.append(_snapshot(before))
    finally:
        _put_back(before)
    for address in sorted(before, key=lambda address: address not in arrays):
        differing = _differing(results[0][address], results[1][address], memory[address][2], floats.get(address))
        if differing.size:
            element, (forward, backward) = _element_values(kernel, memory[address], int(differing[0]),
                                                           *(run[address] for run in results))
            return element, forward, backward
    return None


#: A line that updates what it stores (`x += v`, `x++`): not a plain store.
_UPDATE = re.compile(r"(\+\+|--|[-+*/%|&^]=|<<=|>>=)")


#: Seconds each of the two runs that show what a race in shared memory does may take (_shared_race_effect).
RERUN_SECONDS = 1.0


def _shared_race_effect(module: Module, kernel: Kernel, config, packed, memory: dict, arrays: dict, before: dict,
                        floats: dict) -> str | None:
    """After a sanitized launch stopped at a race in shared memory: what the race does to the results, in
    words. The launch runs twice more from the memory it started with, such races let go (runtime.h's
    __cc_race_rerun 5 and 6): in launch order, and with the blocks and each block's threads in the
    opposite order. The first element (of the arguments' arrays, then the module's variables) where the
    two runs disagree, or None where they agree, or where a run stops at another fault or takes more than
    RERUN_SECONDS. The memory is as it was before the launch afterwards."""
    found = _both_orders(module, kernel, _time_capped(config, RERUN_SECONDS), packed, before, before, (5, 6), memory,
                         arrays, floats)
    if found is None:
        return None
    element, forward, backward = found
    return (f"Run to its end with the race let go, this launch gives {element} = {forward} with the threads in "
            f"launch order, and {element} = {backward} with the blocks, and each block's threads, in the opposite "
            "order: the result depends on the order.")


def _race_effect(mode: int, where: tuple, index: int, was: np.ndarray, now: np.ndarray, kernel: Kernel) -> str:
    """In words: element `index` of an array (`where`: its name, count and element size), which a rerun
    of the launch in `mode` (see _race_changes_results) left other than the first run did."""
    element, (value_now, value_was) = _element_values(kernel, where, index, now, was)
    how = {2: "Run again with the blocks, and each block's threads, in the opposite order",
           3: "Run again with each such read seeing the value from before the other thread's write (or atomic "
              "update)"}[mode]
    return f"{how}, this launch gives {element} = {value_now} instead of {value_was}."


def _element_values(kernel: Kernel, where: tuple, index: int, *runs: np.ndarray) -> tuple[str, list[str]]:
    """`name[index]` of an array (`where`: its name, count and element size) and that element's value in each
    run's bytes of it, in words."""
    name, _, size = where[:3]
    dtype = _element_dtypes(kernel).get(name)
    return f"{name}[{index}]" if size else name, [_element_text(raw, index, size, dtype) for raw in runs]


def _element_text(raw: np.ndarray, index: int, size: int, dtype: str | None) -> str:
    """Element `index` of `size`-byte elements in `raw`: a number when its dtype is known, else its bytes."""
    chunk = raw[index * size:(index + 1) * size]
    if dtype is not None and np.dtype(dtype).itemsize != size and size % np.dtype(dtype).itemsize == 0 \
            and size // np.dtype(dtype).itemsize <= 4:  # a float4 (int2, ...): its lanes
        lanes = chunk.view(dtype)
        return "(" + ", ".join(f"{v:g}" if np.dtype(dtype).kind == "f" else str(v) for v in lanes) + ")"
    if dtype is None or np.dtype(dtype).itemsize != size:
        return "0x" + chunk.tobytes()[::-1 if sys.byteorder == "little" else 1].hex()
    value = chunk.view(dtype)[0]
    return f"{value:g}" if np.dtype(dtype).kind == "f" else str(value)


#: Elements of one array that several blocks stored the same value in, at the same line, before a
#: sanitized launch warns that the blocks repeat one another's work (`*found = 1` by every block is one).
REPEATED_ELEMENTS = 32


def _repeated_message(module: Module, kernel: Kernel, fault: _Fault, arrays: dict) -> str | None:
    """The warning for blocks that store the same values in the same elements (runtime.h
    __cc_describe_repeated): an index without blockIdx, most often. None where the store's index is read from
    memory (`out[idx[i]] = v[i]`, a scatter whose repeated indices the data chose: no bug of the index's)."""
    name, _, itemsize = arrays.get(fault.base, ("an argument array", 0, 0))
    index = fault.index * fault.element_bytes // itemsize if itemsize else fault.index
    line = module.line_of(fault.code_offset)
    short = re.escape(name)
    if line and re.search(rf"\b{short}\s*\[[^\]=;]*\[[^;]*\]\s*(?:=(?!=)|[-+*/|&^]=)",
                          module.source.line_text(line)):
        return None
    where = f" at line {line}: {module.source.line_text(line).strip()}" if line else ""
    body = _function_body(module.source.text, kernel.line + 1) if kernel.line else None
    text = module.source.text[body[0]:body[1]] if body else module.source.text
    fix = ("If each block should do its own part, the index needs the block's offset: int i = blockIdx.x * "
           "blockDim.x + threadIdx.x; (and a grid-stride loop steps by blockDim.x * gridDim.x).")
    loop = _innermost_loop(module.source.text, line, line, kernel.line or 1) if line else None
    step = _block_only_step(text, "\n".join(module.source.lines[loop[0] - 1:loop[1]])) if loop else None
    if step:  # a grid-stride loop that steps by one block: block b's second pass is block b + 1's part
        start = "" if "blockIdx" in text else (
            f" and starts without blockIdx, so every block does the whole range; it should start at "
            f"{step[2]} = blockIdx.x * blockDim.x + threadIdx.x")
        fix = (f"The loop steps by {step[1]} (`{step[0]}`), one block's threads{start}. With that step block "
               f"0's second pass does block 1's part: a grid-stride loop steps by all the grid's threads, "
               f"{step[2]} += blockDim.x * gridDim.x.")
    elif line and (narrow := _narrow_subscript(module.source.line_text(line), name, text)):
        kind, bits, _ = narrow[1]
        fix = (f"The index `{narrow[0]}` is {_an(kind)} ({bits} bits): the blocks' indices past its largest value wrap "
               f"round onto the first blocks' elements. Declare `{narrow[0]}` an int.")
    elif "blockIdx" in text:  # the offset is there: its factors, or the guard, let blocks meet
        fix = ("The index does use blockIdx, so check what multiplies it (block b starts at b * blockDim.x, "
               "not gridDim.x; in 2-D, x goes with blockDim.x and y with blockDim.y) and the guard (a flat "
               "`i < rows * cols` lets the threads past a row's end write into the next row).")
    return (f"kernel '{kernel.name}': {fault.count} elements of {name} were each stored by more than one block, "
            f"with the same value{where} (first {name}[{index}], by block {_xyz(fault.block)} after block "
            f"{_xyz(fault.other_block)}). The blocks repeat one another's work, and the elements no block "
            f"reaches keep their old values. {fix}")


def _narrow_subscript(code: str, name: str, body: str) -> tuple[str, tuple[str, int, bool]] | None:
    """The variable that indexes `name` in the line `code` and its _narrow_declaration in `body`, where it has one
    (`out[i] = ...` with `unsigned char i`)."""
    for index in re.findall(rf"\b{re.escape(name)}\s*\[\s*([A-Za-z_]\w*)\s*\]", code.split("//", 1)[0]):
        declared = _narrow_declaration(body, index)
        if declared:
            return index, declared
    return None


def _redone_message(module: Module, kernel: Kernel, fault: _Fault, arrays: dict, block_dim: tuple) -> str:
    """The warning for threads of one block that store the same values in the same elements (runtime.h
    __cc_describe_repeated, mask 1): an index that leaves out threadIdx, or uses an axis the block does not have."""
    name, _, itemsize = arrays.get(fault.base, ("an argument array", 0, 0))
    index = fault.index * fault.element_bytes // itemsize if itemsize else fault.index
    line = module.line_of(fault.code_offset)
    code = module.source.line_text(line).strip() if line else ""
    thread, other = _xyz(fault.thread), _xyz(fault.other_thread)
    differ = [a for a, p, q in zip("xyz", thread, other) if p != q]
    body = _function_body(module.source.text, kernel.line + 1) if kernel.line else None
    text = without_comments(module.source.text[body[0]:body[1]] if body else module.source.text)
    unused = [f"threadIdx.{a}" for a in differ if f"threadIdx.{a}" not in text]
    flat = [a for a, size in zip("xyz", block_dim) if size == 1 and re.search(rf"\bthreadIdx\.{a}\b", text)]
    if flat and len(flat) < 3 and any(size > 1 for size in block_dim):
        fix = (f"The kernel uses {' and '.join(f'threadIdx.{a}' for a in flat)}, which is 0 for every thread of this "
               f"launch's blocks (blockDim = {tuple(block_dim)}): is the index made of the axis the block has "
               f"(threadIdx.{'xyz'[max(range(3), key=lambda k: block_dim[k])]})?")
    elif unused:
        a = unused[0][-1]
        fix = (f"The kernel never uses {' or '.join(unused)}, so threads that differ only there compute the same "
               f"index: each thread's part needs it (int i = blockIdx.{a} * blockDim.{a} + threadIdx.{a};), or "
               "launch blocks without that axis.")
    else:
        fix = (f"Threads that differ only in {' and '.join(f'threadIdx.{a}' for a in differ)} compute the same index "
               "at that line: check that it depends on every axis the block has.")
    return (f"kernel '{kernel.name}': {fault.count} elements of {name} were each stored by more than one thread of a "
            f"block, with the same value" + (f" at line {line}: {code}" if line else "") + f" (first {name}[{index}], "
            f"by thread {thread} after thread {other} of block {_xyz(fault.block)}). The threads repeat one another's "
            f"work, and any element no thread reaches keeps its old value. {fix}")


def _block_only_step(text: str, loop: str) -> tuple[str, str, str] | None:
    """The step of the loop `loop` (a kernel's, whose whole body is `text`) where it steps its index by
    blockDim alone (`i += blockDim.x`, or by a variable set to it), which a grid-stride loop does by
    blockDim.x * gridDim.x: (the step as written, the step's value, the index); or None."""
    plain = {m.group(1): m.group(2) for m in re.finditer(
        r"\b(\w+)\s*=\s*(blockDim\.[xyz])\s*[;,]", text)}  # `int stride = blockDim.x;`
    for m in re.finditer(r"\b(\w+)\s*\+=\s*([\w.]+)\s*(?=[;)])", loop):
        value = m.group(2) if re.fullmatch(r"blockDim\.[xyz]", m.group(2)) else plain.get(m.group(2))
        if value and m.group(1) not in plain:
            return re.sub(r"\s+", " ", m.group(0)), value, m.group(1)
    return None


def _same_rng_message(module: Module, kernel: Kernel, fault: _Fault) -> str:
    """The warning for threads whose curand_init got the same seed, subsequence and offset (runtime.h
    __cc_describe_rng_setup): one generator's numbers, drawn again in every such thread."""
    numbers = f"({ctypes.c_uint64(fault.index).value}, {fault.base}, {fault.address})"
    where = f" at line {fault.line}: {module.source.line_text(fault.line).strip()}" if fault.line else ""
    return (f"kernel '{kernel.name}': thread {_xyz(fault.thread)} of block {_xyz(fault.block)} set up its cuRAND "
            f"state with the same seed, subsequence and offset {numbers} as thread {_xyz(fault.other_thread)} of "
            f"block {_xyz(fault.other_block)}{where}. Such threads draw exactly the same numbers, on a GPU too. "
            "Give each thread its own subsequence: curand_init(seed, id, 0, &state) with id = blockIdx.x * "
            "blockDim.x + threadIdx.x (or its own seed).")


def _element_named(memory: dict, address: int, otherwise: str) -> str:
    """The element of an argument array or module variable (`memory`: base -> (name, elements, bytes each)) at
    `address`, as `name[i]` (a single variable: its name), or `otherwise`."""
    for base, (array, count, size) in memory.items():
        if base <= address < base + count * size:
            return f"{array}[{(address - base) // size}]" if count > 1 else array
    return otherwise


def _thread_xyz(linear: int, block_dim) -> tuple[int, int, int]:
    """A thread's (x, y, z) in its block from its flat index (x fastest, as a GPU numbers them)."""
    bx, by = block_dim[0], block_dim[1] if len(block_dim) > 1 else 1
    return linear % bx, linear // bx % by, linear // (bx * by)


def _thread_linear(thread, block_dim) -> int:
    """A thread's flat index in its block from its (x, y, z): _thread_xyz's inverse."""
    by = block_dim[1] if len(block_dim) > 1 else 1
    return thread[0] + block_dim[0] * (thread[1] + by * thread[2])


def _float_order(module: Module) -> dict | None:
    """The first atomicMin/atomicMax of a launch on a float's bits (`atomicMax((int*)m, __float_as_int(v))`)
    that kept the other value than a float min/max would (runtime.h __cc_float_order), or None."""
    out = (ctypes.c_ulonglong * 9)()
    if not module.export("__cc_float_order_noted", ctypes.c_int, ctypes.POINTER(ctypes.c_ulonglong))(out):
        return None
    size, is_max, is_unsigned, old, val, address, site, block, tid = out
    floats, ints = (np.float32, np.uint32 if is_unsigned else np.int32) if size == 4 else \
        (np.float64, np.uint64 if is_unsigned else np.int64)
    old_bits, val_bits = np.array([old, val], np.uint32 if size == 4 else np.uint64)
    took = bool(val_bits.view(ints) > old_bits.view(ints)) == bool(is_max)  # the offered value went in
    return {"size": size, "max": bool(is_max), "unsigned": bool(is_unsigned), "old": float(old_bits.view(floats)),
            "val": float(val_bits.view(floats)), "took": took, "address": address, "site": site, "block": block,
            "tid": tid}


def _float_order_message(module: Module, kernel: Kernel, found: dict, memory: dict, block_dim=(1, 1, 1)) -> str:
    """The warning for a min or max of floats done on their bits as ints, where the ints' order is not the
    floats' (_float_order)."""
    op = "atomicMax" if found["max"] else "atomicMin"
    element = _element_named(memory, found["address"], "the element")
    lines = module.lines_of_calls([found["site"]])[0] if found["site"] else []
    where = f" at line {lines[-1]}, `{module.source.line_text(lines[-1]).strip()}`" if lines else ""
    thread = _thread_xyz(found["tid"], block_dim)
    old, val = f"{found['old']:g}", f"{found['val']:g}"
    done = (f"{op} stored {val}, though {old} is the {'larger' if found['max'] else 'smaller'}" if found["took"] else
            f"{op} kept {old}, though {val} is the {'larger' if found['max'] else 'smaller'}")
    wide = found["size"] == 8
    if found["unsigned"]:
        cast, integer = ("__double_as_longlong", "unsigned long long") if wide else ("__float_as_uint", "unsigned int")
        why = ("as unsigned ints the bits of every negative float (its sign bit set) are above every positive "
               "one's, and the negatives come in the opposite order")
        rule = "only while no value is negative"
        top = "0x8000000000000000ull" if wide else "0x80000000u"
        shift = 63 if wide else 31
        remap = f"{integer} b = {cast}(v); {op}(p, (b >> {shift}) ? ~b : b | {top});"
        back = f"undo it on the result before reading it as a float (`(b >> {shift}) ? b ^ {top} : ~b`)"
    else:
        cast, integer = ("__double_as_longlong", "long long") if wide else ("__float_as_int", "int")
        why = "as signed ints negative floats come in the opposite order (-2.0's bits are a larger int than -1.0's)"
        rule = "only while every value, the starting one too, is >= 0"
        flip = "0x7fffffffffffffffLL" if wide else "0x7fffffff"
        remap = f"{integer} b = {cast}(v); {op}(p, b >= 0 ? b : b ^ {flip});"
        back = "do the same to the result before reading it as a float (the step undoes itself)"
    return (f"kernel '{kernel.name}'{where}: {op} orders the bits of floating-point values ({cast}) as "
            f"{integer}s, and {why}. Here thread {thread} of block {found['block']} offered {val} to {element}, "
            f"which held {old}, and {done}: the result is wrong whenever such values decide it. The trick orders "
            f"floats {rule}. For any sign, use an atomicCAS loop that compares the floats "
            f"(`{'fmaxf' if found['max'] else 'fminf'}`), or store bits whose {integer} order is the floats' "
            f"order, `{remap}`, and {back}.")


#: The bits a shuffle from a lane outside its mask gives here (runtime.h __cc_undefined_result):
#: NaNs whose payload survives arithmetic, so a float result computed from one still shows it.
_UNDEFINED32 = (0x7FC0DEAD, 0x7FF8DEAD)
_UNDEFINED64 = (0x7FF8DEAD7FC0DEAD, 0x7FF81BD5A0000000)


def _undefined_in(arrays: dict) -> tuple[str, int] | None:
    """The first argument array element that holds the undefined pattern: (name, index), or None."""
    for address, (name, elements, itemsize) in arrays.items():
        if itemsize not in (4, 8) or not elements or not address:
            continue
        values = _bytes_at(address, elements * itemsize).view(np.uint32 if itemsize == 4 else np.uint64)
        values = values & (0x7FFFFFFF if itemsize == 4 else 0x7FFFFFFFFFFFFFFF)
        hits = np.flatnonzero(np.isin(values, _UNDEFINED32 if itemsize == 4 else _UNDEFINED64))
        if hits.size:
            return name, int(hits[0])
    return None


#: Modules launched most recently keep their fiber stacks and buffers between launches; an
#: older one gives them back (each version of a kernel being edited is a module of its own).
WARM_MODULES = 8
_warm: dict[Module, None] = {}  # oldest first


def _keep_warm(module: Module) -> None:
    """Called under _launch_lock after each launch of `module`."""
    _warm.pop(module, None)
    _warm[module] = None
    while len(_warm) > WARM_MODULES:
        oldest = next(iter(_warm))
        del _warm[oldest]
        oldest.release_memory()


def _integer(bits: int, info: int) -> int:
    """The value of an integer that UBSan's handlers pass as `bits`, its type's `info` (bit 0:
    signed; the rest: log2 of its width)."""
    width = 1 << (info >> 1)
    value = bits & ((1 << width) - 1) if width < 64 else bits
    return value - (1 << width) if info & 1 and value >= 1 << (width - 1) else value


def _xyz(values) -> tuple:
    return tuple(int(v) for v in values)


def _filled_element(fault: _Fault, arrays: dict) -> tuple[str | None, str, str]:
    """The argument array (None: another memory) and the element (a vector's lane, a struct's bytes) that a stored
    or read fill is in, and the fill's value as its type shows it (STORED_FILL and READ_FILL: `op` is runtime.h's
    __cc_fill_kind, `element_bytes` the part's size)."""
    name, _, itemsize = arrays.get(fault.base, (None, 0, 0))
    at = f"[{fault.index}]"
    if name and itemsize and fault.op == 5 and itemsize < fault.element_bytes:  # (a float4 view of a float array)
        first = fault.index * fault.element_bytes // itemsize
        at = f"[{first}] to {name}[{first + fault.element_bytes // itemsize - 1}] (one {fault.element_bytes}-byte read)"
    elif name and itemsize and itemsize != fault.element_bytes:  # (a lane of a float4 store, an int4 array)
        elements, lane = divmod(fault.index * fault.element_bytes, itemsize)
        if fault.op == 4:  # a struct's word: where in the element
            at = (f"[{elements}] (bytes {lane} to {lane + fault.element_bytes - 1} of the {itemsize}-byte "
                  "struct: a member that was never set)")
        else:
            at = f"[{elements}]" + (f".{'xyzw'[lane // fault.element_bytes]}" if itemsize > fault.element_bytes
                                    and itemsize // fault.element_bytes <= 4 else "")
    if name:
        element = f"{name}{at}"
    elif fault.kind == READ_FILL and fault.other_op == 1:
        made = f" at line {fault.other_line}" if fault.other_line else ""
        element = (f"element {fault.index} ({fault.element_bytes} bytes each) of the {fault.length}-byte block that "
                   f"malloc or new made{made}")
    else:
        element = "an element of a local array or __device__ variable"
    size = fault.element_bytes
    value = {1: {2: "the bits 0xFEFE (a NaN as a __half, -1.69e38 as a __nv_bfloat16)", 4: "-1.6947e38"}.get(size, "-5.314e303"),
             2: {1: "-2 (0xFE)", 2: "-258 (0xFEFE)", 4: "-16843010"}.get(size, "-72340172838076674"),
             3: {1: "254 (0xFE)", 2: "65278 (0xFEFE)", 4: "4278124286 (0xFEFEFEFE)"}.get(size, "0xFEFEFEFEFEFEFEFE"),
             4: "the bytes 0xFEFEFEFE (-1.6947e38 as a float)"}.get(fault.op, "0xFE bytes")
    return name, element, value


def _array_name(fault: _Fault, arrays: dict) -> tuple[str, bool]:
    """The name of the array a bad access went into, and whether it is a static __shared__ array
    (runtime.h writes those names into the fault's text; arguments are known by address)."""
    if fault.base in arrays:
        return arrays[fault.base][0], False
    shared = fault.text.decode(errors="replace")
    return (shared, True) if shared else ("a local or __device__ array", False)


def _sharing_memory(name: str, kernel: Kernel, args) -> str:
    """The other array parameters whose memory overlaps parameter `name`'s in this launch (one array
    passed twice, `k(x, x)`, or overlapping views: runtime.h makes them one allocation), joined
    with 'and'; '' when there are none. `args`: the launch's packed arguments."""
    spans = sorted(((p.name, a.data, a.data + a.count) for p, a in zip(kernel.params, args)
                    if p.pointer and a.data and a.count), key=lambda span: span[1])
    mine = next((span for span in spans if span[0] == name), None)
    if mine is None:
        return ""
    low, high, names = mine[1], mine[2], []
    for other, start, end in spans:  # (views can chain: x[:-2], x[1:-1], x[2:])
        if other != name and start < high and low < end:
            names.append(other)
            low, high = min(low, start), max(high, end)
    return " and ".join(dict.fromkeys(names))


def _unnamed_array(source: Source, length: int) -> str:
    """'the local array r (declared at line 3)' when one array of the source is declared with `length`
    elements outside __shared__ memory, else 'a local or __device__ array'."""
    found = {}
    for number, text in enumerate(source.lines, 1):
        if "__shared__" in text or "extern" in text:
            continue
        for match in re.finditer(r"\b[A-Za-z_][\w:]*\s*\**\s+([A-Za-z_]\w*)\s*((?:\[\s*\d+\s*\]\s*)+)[;=,]", text):
            if math.prod(int(n) for n in re.findall(r"\d+", match.group(2))) == length:  # r[12], or r[3][4]
                found.setdefault(match.group(1), []).append(number)
    if len(found) == 1:
        (name, lines), = found.items()
        kind = "__device__ array" if "__device__" in source.lines[lines[0] - 1] else "local array"
        return f"the {kind} {name}" + (f" (declared at line {lines[0]})" if len(lines) == 1 else "")
    return "a local or __device__ array"


# Sizes of the types a __shared__ struct or union is made of (alignment = size, at most 16).
_TYPE_BYTES = {
    **dict.fromkeys(["char", "signed char", "unsigned char", "bool", "int8_t", "uint8_t"], 1),
    **dict.fromkeys(["short", "unsigned short", "half", "__half", "__nv_bfloat16", "int16_t", "uint16_t"], 2),
    **dict.fromkeys(["int", "unsigned", "unsigned int", "float", "int32_t", "uint32_t", "half2", "__half2"], 4),
    **dict.fromkeys(["long long", "unsigned long long", "double", "int64_t", "uint64_t", "size_t", "long",
                     "unsigned long", "float2", "int2", "uint2"], 8),
    **dict.fromkeys(["float3", "int3", "uint3"], 12),  # (aligned as their 4-byte lanes)
    **dict.fromkeys(["float4", "int4", "uint4", "double2", "longlong2"], 16),
}


def _member_layout(text: str, member: str) -> tuple[int, int, list] | None:
    """(offset, element size, extents) of `member` in the first struct or union of `text` that declares
    it; None when that layout is not made of plain types."""
    for body in re.finditer(r"\b(struct|union)\s*\w*\s*\{([^{}]*)\}", text):
        offset, found = 0, None
        declarations = []
        for declaration in body.group(2).split(";"):  # (`float x, y;`: one declaration a name)
            first, *more = declaration.split(",")
            declarations.append(first)
            kind = re.match(r"\s*((?:const\s+)?[A-Za-z_][\w ]*?)\s+\w+\s*(?:\[|$)", first)
            declarations += [f"{kind.group(1)} {name}" if kind else "?" for name in more]
        for declaration in declarations:
            match = re.fullmatch(r"\s*((?:const\s+)?[A-Za-z_][\w ]*?)\s+(\w+)\s*((?:\[\s*\d+\s*\]\s*)*)",
                                 declaration)
            if not declaration.strip():
                continue
            if not match or match.group(1).strip().removeprefix("const ").strip() not in _TYPE_BYTES:
                found = None
                break
            size = _TYPE_BYTES[match.group(1).strip().removeprefix("const ").strip()]
            dims = [int(d) for d in re.findall(r"\d+", match.group(3))]
            if body.group(1) == "struct":
                align = min(size, 16) if size & (size - 1) == 0 else 4
                offset = (offset + align - 1) // align * align
            if match.group(2) == member:
                found = (0 if body.group(1) == "union" else offset, size, dims)
            if body.group(1) == "struct":
                offset += size * math.prod(dims)
        if found:
            return found
    return None


def _member_element(text: str, member: str, byte: int) -> str | None:
    """`[3]` (or `[1][2]`) for the element of array `member` of a struct or union defined in `text`
    that holds `byte`; None when the member is no array, or the layout is not plain types."""
    layout = _member_layout(text, member)
    if not layout or not layout[2]:
        return None
    start, size, dims = layout
    index = (byte - start) // size
    if not 0 <= index < math.prod(dims):
        return None
    subscripts = []
    for extent in reversed(dims):
        subscripts.append(index % extent)
        index //= extent
    return "".join(f"[{s}]" for s in reversed(subscripts))


def _array_of(element: str) -> str:
    """The array (or variable) of an element in words: `s` of `s[3]`, `acc` of `acc.sum`."""
    return re.split(r"[\[.]", element, maxsplit=1)[0]


def _with_member(element: str, source: Source, line: int | None, byte: int | None = None) -> str:
    """`acc` → `acc.sum`, `ps[0]` → `ps[0].x`: a struct is named with the member that the faulting line
    uses, when it uses one. `byte`: where in the struct the access fell, which picks the member among
    those the line uses and gives an array member its index (`u.i[3]`, `ps[3].vel[1]`)."""
    name = re.match(r"\w+", element)
    if not name or not line or not 0 < line <= len(source.lines):
        return element
    used = set(re.findall(rf"\b{name.group()}\s*(?:\[[^\]]*\]\s*)*(?:\.|->)\s*(\w+)\b(?!\s*\()",
                          source.lines[line - 1])) - source.bit_fields  # (not a method: `sv[t].dot(w)`;
    # not a bit-field: its access is to the whole element)
    for member in sorted(used) if byte is not None else ():
        layout = _member_layout(source.text, member)
        if layout and layout[0] <= byte < layout[0] + layout[1] * math.prod(layout[2]):
            return f"{element}.{member}{_member_element(source.text, member, byte) or ''}"
    lane = _vector_lane(source, name.group(), byte) if byte is not None else None
    if lane and (lane in used or not used):
        return f"{element}.{lane}"
    if not used and not re.search(rf"\b{name.group()}\b", source.lines[line - 1]):
        # the access was in a method of the element's struct (`sum += v;`): the member it names bare
        used = {m for m in source.method_members
                if re.search(rf"(?<![\w.])\b{m}\b(?!\s*\()", source.lines[line - 1])}
    return f"{element}.{used.pop()}" if len(used) == 1 else element


#: CUDA's vector types by their scalar's bytes: float4's lanes are 4 bytes each.
_VECTOR_LANE_BYTES = {**dict.fromkeys(["char", "uchar"], 1), **dict.fromkeys(["short", "ushort", "half"], 2),
                      **dict.fromkeys(["float", "int", "uint"], 4),
                      **dict.fromkeys(["double", "long", "ulong", "longlong", "ulonglong"], 8)}


def _vector_lane(source: Source, name: str, byte: int) -> str | None:
    """`w` for byte 12 of an element of `__shared__ float4 name[...]` (an array of a CUDA vector type), else None."""
    declared = re.search(rf"\b([a-z]+)([1-4])\s+{re.escape(name)}\s*\[", source.text)
    if not declared or declared.group(1) not in _VECTOR_LANE_BYTES:
        return None
    lane = byte // _VECTOR_LANE_BYTES[declared.group(1)]
    return "xyzw"[lane] if lane < int(declared.group(2)) else None


def _member_at(source: Source, name: str, byte: int) -> str | None:
    """The member of an element of the array `name` that holds `byte` of it: a CUDA vector type's lane (`w` for
    byte 12 of `float4 name[...]`), or a member of the struct it is declared with (`vel` for byte 12 of
    `Body name[...]` with `struct Body { float3 pos; float3 vel; }`); None when neither is known."""
    if lane := _vector_lane(source, name, byte):
        return lane
    declared = re.search(rf"\b(\w+)\s+{re.escape(name)}\s*\[", source.text)
    struct = declared and re.search(rf"\bstruct\s+{re.escape(declared.group(1))}\s*\{{[^{{}}]*\}}", source.text)
    for member in re.findall(r"(\w+)\s*(?:\[[^\]]*\]\s*)*(?=[;,])", struct.group(0)) if struct else ():
        layout = _member_layout(struct.group(0), member)
        if layout and layout[0] <= byte < layout[0] + layout[1] * math.prod(layout[2]):
            return member
    return None


def _in_one_loop(text: str, first: int, last: int, start: int = 1) -> bool:
    """Whether lines `first` and `last` of `text` both lie in the body of one `for`, `while` or `do`
    loop that begins at or after line `start` (the kernel's): a loop body in braces, or one statement."""
    return _innermost_loop(text, first, last, start) is not None


def _thread_varying_loop(source: Source, first: int, last: int, kernel: Kernel) -> tuple[int, str] | None:
    """The innermost loop around lines `first` to `last` whose condition depends on the thread
    (`r < counts[threadIdx.x]`, `i < n` with `i` starting at threadIdx.x): (its line, the condition), or None."""
    loop = _innermost_loop(source.text, first, last, kernel.line if 0 < kernel.line <= first else 1)
    if not loop:
        return None
    header = source.line_text(loop[0]).split("//", 1)[0]
    found = (re.search(r"\bfor\s*\([^;]*;([^;]*);", header) or re.search(r"\bwhile\s*\((.*)\)", header))
    if not found or not found.group(1).strip():
        return None
    condition = found.group(1).strip()
    if "threadIdx" in condition or any(
            (made := _made_at(source, loop[0], name)) and "threadIdx" in made[1] for name in _names_in(condition)):
        return loop[0], condition
    return None


def _innermost_loop(text: str, first: int, last: int, start: int = 1) -> tuple[int, int] | None:
    """The first and last line of the innermost loop (as `_in_one_loop` finds them) that holds lines
    `first` and `last`, or None."""
    found = None
    def line_at(offset):
        return text.count("\n", 0, offset) + 1
    for loop in re.finditer(r"\b(for|while)\s*\(|\bdo\b", text):
        if line_at(loop.start()) < start:
            continue
        at = loop.end()
        if loop.group(1):  # past the header's parentheses
            depth = 1
            while at < len(text) and depth:
                depth += {"(": 1, ")": -1}.get(text[at], 0)
                at += 1
        body = re.compile(r"\s*").match(text, at).end()
        if body < len(text) and text[body] == "{":
            end = _closing_brace(text, body)
        elif loop.group(1) and body < len(text) and text[body] == ";":
            continue  # `while (...);` ending a do-while
        else:
            end = text.find(";", body)
            end = len(text) if end < 0 else end
        if line_at(loop.start()) <= first and last <= line_at(end):
            found = (line_at(loop.start()), line_at(end))  # later matches start later: nested inside
    return found


def _closing_brace(text: str, start: int) -> int:
    """The offset of the bracket that closes the `{` (or `(`, `[`) at `start` (the text's end if none does)."""
    pair = {text[start]: 1, {"{": "}", "(": ")", "[": "]"}[text[start]]: -1}
    depth, end = 0, start
    while end < len(text):
        depth += pair.get(text[end], 0)
        if depth == 0:
            break
        end += 1
    return end


def _callers_of(text: str, body: tuple[int, int]) -> tuple[str, list[int]] | None:
    """The name of the function whose body is `body` (a span of `text`) and the lines that call it
    (not its declarations), or None."""
    name = re.search(r"(\w+)\s*\([^()]*(?:\([^()]*\)[^()]*)*\)\s*(?:const\s*)?$", text[:body[0]])
    if not name or name.group(1) in ("if", "for", "while", "switch"):
        return None
    # (`block_sum<64>(v)`: a template's call names its arguments)
    call = rf"\b{re.escape(name.group(1))}\s*(?:<[^<>;(){{}}]*(?:<[^<>;(){{}}]*>[^<>;(){{}}]*)*>\s*)?\("
    lines = sorted({text.count("\n", 0, m.start()) + 1 for m in re.finditer(call, text)
                    if not body[0] > m.start() >= name.start() and not _declares(text, m.start())})
    return name.group(1), lines


def _called_again(text: str, line: int, later: int, barrier: re.Pattern) -> tuple[str, list[int]] | None:
    """(name, calling lines) of the function that holds lines `line` and `later` (not the kernel), where a
    barrier stands between them: an access at `later` before one at `line` came from an earlier call."""
    body = _function_body(text, line)
    if body is None or body != _function_body(text, later):
        return None
    lines = text.split("\n")
    if not any(barrier.match(code) for code in lines[line:later - 1]):
        return None
    callers = _callers_of(text, body)
    return callers if callers and callers[1] else None


def _declares(text: str, at: int) -> bool:
    """Whether the name at `at` is declared there (a type before it: `__device__ float f(`), not called."""
    before = text[max(0, text.rfind("\n", 0, at) - 200):at].rstrip()
    return bool(re.search(r"(?:\b(?:void|int|float|double|bool|char|unsigned|long|short|auto|half|__half)|[\w>]\s*[*&]|"
                          r"__device__|__forceinline__|inline|static)\s*$", before))


def _and(numbers: list[int]) -> str:
    """1, 2 and 3."""
    words = [str(n) for n in numbers]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _body_lines(source: Source, line: int) -> tuple[int, int]:
    """The first and last line of the body of the function that holds `line` (the whole source at file scope)."""
    body = _function_body(source.text, line)
    if not body:
        return 1, len(source.lines)
    return source.text.count("\n", 0, body[0]) + 1, source.text.count("\n", 0, body[1]) + 1


def _open_braces(text: str, offset: int) -> list[int]:
    """The offsets of the `{` still open at `offset` of `text`, outermost first."""
    opened = []
    for match in re.finditer(r"[{}]", text[:offset]):
        if match.group() == "{":
            opened.append(match.start())
        elif opened:
            opened.pop()
    return opened


def _if_block_lines(text: str, line: int) -> tuple[int, int] | None:
    """The first and last lines of the innermost braced block around line `line` when that block is an if's (or an
    else's): `if (r < M && c < N) { ...; __syncthreads(); }`. None for any other block, or none."""
    opened = _open_braces(text, _line_start(text, line))
    if not opened:
        return None
    start = opened[-1]
    if not re.search(r"(?:\bif\s*\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)|\belse)\s*$", text[max(0, start - 400):start]):
        return None
    return text.count("\n", 0, start) + 1, text.count("\n", 0, _closing_brace(text, start)) + 1


def _line_start(text: str, line: int) -> int:
    """The offset in `text` at which its line `line` (1-based) starts."""
    return sum(len(text_line) + 1 for text_line in text.split("\n")[:max(0, line - 1)])


def _function_parameters(source: Source, line: int) -> tuple[str, list[str], tuple[int, int]] | None:
    """The function that holds `line`: its name, its parameters as written (`const float* img`, `int w`) and its
    body's span (_function_body); None at file scope."""
    body = _function_body(source.text, line)
    header = re.search(r"\b(\w+)\s*(\([^()]*\))\s*(?:const\s*)?$", source.text[:body[0]]) if body else None
    if not header:
        return None
    params = _argument_texts(header.group(2), 0) or []
    return header.group(1), [p.strip() for p in params if p.strip() and p.strip() != "void"], body


def _parameter_name(declaration: str) -> str:
    """`const float* img` → `img`."""
    words = re.findall(r"\w+", declaration)
    return words[-1] if words else ""


def _function_name_at(source: Source, line: int) -> str | None:
    """The name of the function whose body holds line `line`, or whose closing brace stands on it; None else."""
    found = _function_parameters(source, line) or (_function_parameters(source, line - 1) if line > 1 else None)
    return found[0] if found else None


def _function_body(text: str, line: int) -> tuple[int, int] | None:
    """The character span of the body of the function that holds line `line` of `text`: the outermost
    brace block around it that follows a parameter list's `)` (control statements' blocks lie inside
    it; a namespace's or a struct's does not follow a `)`), or None at file scope."""
    offset = _line_start(text, line)
    opened, found = _open_braces(text, offset), None
    follows_parameters = lambda start: re.sub(r"(\s|\b(const|noexcept|override|final|volatile)\b)+$", "",
                                              text[:start]).endswith(")")
    for start in opened:  # outermost first
        if follows_parameters(start):
            found = (start, _closing_brace(text, start))
            break
    if found is None and not any(map(follows_parameters, opened)):  # a function on one line: `void f() { ... }`
        end = text.find("\n", offset)
        for match in re.finditer(r"\{", text[offset:end if end >= 0 else len(text)]):
            if follows_parameters(offset + match.start()):
                return offset + match.start(), _closing_brace(text, offset + match.start())
    return found


def _block_groups(text: str) -> list[str]:
    """The names of cooperative-groups objects that stand for a whole thread block (`cg::thread_block
    block = cg::this_thread_block();`), whose .sync() is __syncthreads(); a tile's .sync() is a warp's."""
    names = re.findall(r"\bthread_block\s+(\w+)\s*[=;(]", text)
    names += re.findall(r"\b(?:auto|thread_group)\s+(\w+)\s*=\s*(?:\w+::)*this_thread_block\s*\(", text)
    return sorted(set(names))


def _barrier_name(source: Source, line: int | None) -> str:
    """The barrier a fault's line calls, as the learner wrote it: __syncthreads_count() (_and, _or) where
    the line has one, else __syncthreads() (cooperative groups' block.sync() is one too)."""
    text = source.line_text(line) if line else ""
    found = re.search(r"\b__syncthreads_(count|and|or)\s*\(", text)
    collective = re.search(r"\)\s*\.\s*(Sum|Reduce|ExclusiveSum|InclusiveSum|ExclusiveScan|InclusiveScan)\s*\(", text)
    if collective and not found and "__syncthreads" not in text:  # `BlockReduce(temp).Sum(v)`: CUB's own barrier
        return f"the __syncthreads() inside CUB's .{collective.group(1)}()"
    return f"__syncthreads_{found.group(1)}()" if found else "__syncthreads()"


def _block_sync_spelling(text: str, line: int | None) -> str:
    """How the code at `line` would write __syncthreads() with cooperative groups, for a race hint: the
    `.sync()` of a group parameter of its function (`reduce_sum(thread_group g, ...)`: g may be a tile,
    so only if it is the block), else of the kernel's thread block object, else none."""
    body = _function_body(text, line) if line else None
    if body:
        header = text[max(text.rfind(";", 0, body[0]), text.rfind("}", 0, body[0])) + 1:body[0]]
        for kind, name in re.findall(r"\b(thread_group|thread_block)\s*(?:const\s*)?&?\s*(\w+)\s*[,)]", header):
            return (f" (`{name}.sync()` with cooperative groups)" if kind == "thread_block"
                    else f" (with cooperative groups `{name}.sync()`, if {name} is the whole block)")
    groups = _block_groups(text)
    if groups:
        return f" (`{groups[0]}.sync()` with cooperative groups)"
    return " (`this_thread_block().sync()` with cooperative groups)" if "this_thread_block" in text else ""


def _flag_handover(source: Source, read_line: int | None, array: str = "") -> str | None:
    """For a race whose read at `read_line` follows a loop that waits for a flag (`while (ready == 0) {}`, on
    that line or one of the lines before it): the hint that a flag hands data over only after a fence (the
    data's writes, __threadfence_block(), then the flag), or, where the kernel fences before setting it,
    only the stores of the thread that sets it. A race on the flag itself (`array`), a plain variable, is
    the wait that a GPU may never end (_plain_wait), fenced or not. None otherwise."""
    if not read_line:
        return None
    for at in range(read_line, max(0, read_line - 8), -1):  # (the wait may share the read's line)
        if flag := _waited_for(source.line_text(at)):
            break
    else:
        return None
    if at < read_line:  # (`if (t == 0) { while (flag == 0) {} ... }`: a wait in a block that closes before the
        # read is not one the reading thread went through)
        text = source.line_text(at)
        rest = text[text.find("while"):] + "\n" + "\n".join(source.line_text(n) for n in range(at + 1, read_line))
        depth = 0
        for c in without_comments(rest):
            depth += (c == "{") - (c == "}")
            if depth < 0:
                return None
    if array == flag and (plain := _plain_wait(source)):
        return plain
    for number, text in enumerate(source.lines, 1):
        if number != at and re.search(rf"\b{re.escape(flag)}\s*=(?!=)", text) and not re.search(
                rf"\b{re.escape(flag)}\s*=\s*0\b", text):
            before = " ".join(source.line_text(n) for n in range(max(1, number - 2), number + 1))
            if "__threadfence" in before.split(flag)[0]:
                # fenced, and still a race: the write was another thread's than the one that sets the flag
                return (f"The reading thread waited for `{flag}` (line {at}), which line {number} sets after a "
                        "fence, but a flag hands over only the stores of the thread that sets it: other threads' "
                        "stores (the rest of the producers) are not covered. Simplest: a __syncthreads() between "
                        "the stores and the reads, where every thread of the block reaches it; or order the "
                        f"producers first (__syncwarp() or a barrier among them, then the fence and `{flag}`).")
            return (f"The reading thread waited for `{flag}` (line {at}), which line {number} sets: a flag hands "
                    "over only what was written before a fence. Put __threadfence_block() (__threadfence() between "
                    f"blocks) just before line {number}, after the data's writes (and a __syncwarp() or barrier "
                    "first when other threads wrote the data), so that the data is there before the flag says so.")
    return None


def _plain_wait(source: Source) -> str | None:
    """A loop that only waits for a variable (`while (ready == 0) {}`) that is neither volatile nor read
    atomically: the compiler may load it once, and the loop then never sees another thread's store (on a
    GPU as here). The hint that says so, or None."""
    for number, text in enumerate(source.lines, 1):
        if not (flag := _waited_for(text)):
            continue
        declared = re.search(rf"^[^;(]*\b(?:__shared__|__device__)\b[^;(]*\b{re.escape(flag)}\b\s*(?:=[^;]*)?;",
                             source.text, re.M)
        if declared and "volatile" not in declared.group(0) and "atomic" not in declared.group(0):
            return (f"The loop at line {number} waits for `{flag}`, which is not volatile: the compiler may read it "
                    "once and never again, so the loop does not see another thread's store. Declare it `volatile` "
                    f"(or read it with atomicAdd(&{flag}, 0), or cuda::atomic_ref's load), and set it after a "
                    "__threadfence_block() (__threadfence() between blocks).")
    return None


def _waited_for(text: str) -> str | None:
    """The variable that a loop on this line does nothing but wait for (`while (ready == 0) {}`, `while
    (!done);`, a body of one __nanosleep), or None."""
    wait = re.search(r"\bwhile\s*\(\s*!?\s*(\w+)\s*(?:[=!<>]=?\s*[\w.]+\s*)?\)\s*"
                     r"(?:;|\{\s*(?:__nanosleep\s*\([^)]*\)\s*;\s*)?\})", text)
    return wait.group(1) if wait else None


def _function_spans(source: Source):
    """(name, header start, body start, body end) of each function the source defines (comments dropped)."""
    text = without_comments(source.text)
    for header in re.finditer(r"\b(\w+)\s*\([^;{}()]*(?:\([^()]*\)[^;{}()]*)*\)\s*(?:const\s*)?\{", text):
        if header.group(1) not in ("if", "for", "while", "switch", "catch", "return", "sizeof"):
            yield header.group(1), header.start(), header.end(), _closing_brace(text, header.end() - 1), text


def _called_body(source: Source, name: str) -> str | None:
    """The body of the source's function `name` (the first one defined), or None."""
    return next((text[start:end] for found, _, start, end, text in _function_spans(source) if found == name), None)


def _recursive_functions(source: Source) -> list[tuple[str, int, int, int]]:
    """The source's functions that call themselves: (name, the line of such a call, their first and last lines)."""
    found = []
    for name, header, start, end, text in _function_spans(source):
        if call := re.search(rf"\b{re.escape(name)}\s*\(", text[start:end]):
            found.append((name, text.count("\n", 0, start + call.start()) + 1, text.count("\n", 0, header) + 1,
                          text.count("\n", 0, end) + 1))
    return found


def _kept_by_hand(name: str, read_text: str, written_text: str) -> bool:
    """Whether the read of `name` (on `read_text`) and its write (on `written_text`) keep a running maximum
    or minimum by hand: `if (x[i] > m[0]) m[0] = x[i];`, `float cur = *m;` then `if (x[i] > cur) *m = x[i];`,
    `*m = fmaxf(*m, x[i]);`."""
    n = re.escape(name)
    # (shifts compare nothing: `h[(key >> s) & 3]++` is a histogram's count)
    read_text, written_text = (re.sub(r"<<=?|>>=?", " # ", t) for t in (read_text, written_text))
    held = re.search(rf"(\w+)\s*=[^=][^;]*\b{n}\b", read_text)
    # (not a counter that wraps: `count = (ticket >= n - 1) ? 0 : ticket + 1`, or `*c = *c < n ? *c + 1 : 0`)
    if re.search(rf"(?:\*\s*)?\b(?:{n}{'|' + re.escape(held.group(1)) if held else ''})\b\s*(?:\[[^\]]*\])?\s*[-+]\s*\d",
                 written_text):
        return False
    if re.search(rf"(?:[<>]=?\s*\*?\s*{n}\b|\b{n}\s*(?:\[[^\]]*\])?\s*[<>])", read_text):
        return True
    return bool((held and re.search(rf"(?<![-<>])[<>]=?\s*{held.group(1)}\b|\b{held.group(1)}\s*[<>](?![<>])",
                                    written_text))
                or re.search(r"\b(?:fmaxf?|fminf?|max|min)\s*\(", written_text + read_text))


def _by_hand_maximum(element: str) -> str:
    """The fix for a maximum (or minimum) kept by hand in `element` by many threads."""
    return (f"Use atomicMax(&{element}, v) (or atomicMin) on int or unsigned values; for floats, an atomicCAS loop "
            "on the value's bits (or atomicMax on __float_as_int(v) when every value is >= 0).")


def _ignored_axis(fault: _Fault, module: Module, source: Source, line: int | None, block_dim) -> str | None:
    """Two threads that met at one line and whose index differs only in an axis the kernel never reads (a
    1-D kernel launched with block (32, 32): threads (0, 0, 0) and (0, 1, 0) compute the same index): the
    hint that says so, or None. (Not a handover between lines: a chained scan's blocks take their place
    from an atomic ticket, not from blockIdx.)"""
    other = module.lines_at(fault.address) if fault.address else []
    if not line or not other or other[0] != line:
        return None
    mine, theirs = _xyz(fault.thread), _xyz(fault.other_thread)
    my_block, their_block = _xyz(fault.block), _xyz(fault.other_block)
    if fault.kind == RACE:
        their_block = my_block  # (one block)
    for axis, name in enumerate("xyz"):
        for built_in, me, them, shape in (("threadIdx", mine, theirs, block_dim), ("blockIdx", my_block, their_block, None)):
            if me[axis] == them[axis] or any(me[k] != them[k] for k in range(3) if k != axis):
                continue
            other_one = my_block != their_block if built_in == "threadIdx" else mine != theirs
            if other_one or re.search(rf"\b{built_in}\s*\.\s*{name}\b|\bthis_thread_block\b|\bthis_grid\b|"
                                      rf"\bthread_rank\b|\bthread_index\b|\bgroup_index\b", source.text):
                continue
            if built_in == "threadIdx":
                along = f"the {shape[axis]} threads along {name}" if shape else f"threads along {name}"
                return (f"Threads {them} and {me} differ only in threadIdx.{name}, which the kernel never reads, so "
                        f"{along} compute the same index. Launch a block with 1 on that axis (and the same number of "
                        f"threads in x), or use threadIdx.{name} in the index.")
            return (f"Blocks {their_block} and {my_block} differ only in blockIdx.{name}, which the kernel never "
                    f"reads, so they compute the same indices. Launch a grid with 1 on that axis, or use "
                    f"blockIdx.{name} in the index.")
    return None


#: The atomic function that makes a compound assignment `x OP= v` one atomic update.
_ATOMIC_UPDATES = {"+": "atomicAdd", "-": "atomicSub", "|": "atomicOr", "&": "atomicAnd", "^": "atomicXor"}


def _bitwise_update(name: str, text: str) -> str | None:
    """The atomic call for a bitwise update of `name` on a line (`bits[w] |= 1u << b`: `atomicOr(&{element},
    1u << b)`, with `{element}` to fill in), else None."""
    found = re.search(rf"\b{re.escape(name)}\s*(?:\[.*\]\s*)?([|&^])=(?!=)|\*\s*{re.escape(name)}\s*([|&^])=(?!=)", text)
    if not found:
        return None
    operand = re.match(r"\s*([^;]+?)\s*;", text[found.end():])
    return (_ATOMIC_UPDATES[found.group(1) or found.group(2)]
            + f"(&{{element}}, {operand.group(1) if operand else 'bits'})")


def _bits_into_copy(name: str, element: str, source: Source, line: int | None) -> str | None:
    """`unsigned w = words[k]; w |= b << s; words[k] = w;` ending at `line`: bits combined into a copy of the
    element and stored back (undoing other threads' bits): the hint with the atomic, else None."""
    if not line:
        return None
    lines = [source.line_text(n) for n in range(max(1, line - 4), line + 1)]
    for k, text in enumerate(lines):
        held = re.search(rf"(\w+)\s*=[^=][^;]*\b{re.escape(name)}\b", text)
        if held and (bitwise := _bitwise_update(held.group(1), " ".join(lines[k + 1:]))) \
                and re.search(rf"\b{re.escape(name)}\b[^;]*=\s*{held.group(1)}\s*;", lines[-1]):
            return (f"Each thread combines its bits into a copy of {element} and stores the copy back, undoing the "
                    f"bits other threads stored meanwhile: make it one atomic, `{bitwise.format(element=element)};`.")
    return None


def _reads_element(name: str, text: str) -> bool:
    """Whether a line reads `name` besides storing into it: `*count = slot + 1` does not, `x[i] += v`,
    `m = max(m, v)` do."""
    n = re.escape(name)
    text = re.sub(rf"(?:\*\s*{n}\b|\b{n}\s*(?:\[[^\]]*\]\s*)*)\s*=(?!=)", "", text, count=1)  # the store's target
    return re.search(rf"\b{n}\b", text) is not None


def _shared_extents(source: Source, name: str) -> list[str] | None:
    """The extents of the __shared__ array `name` as written (`["T + 2 * R", "T + 2 * R"]` of `tile[T + 2 * R][T +
    2 * R]`), or None where the source declares no such array."""
    declared = re.search(rf"__shared__[^;]*?\b{re.escape(name)}\s*((?:\[[^\]]+\]\s*)+)[;=,]", source.text)
    return [e.strip() for e in re.findall(r"\[([^\]]+)\]", declared.group(1))] if declared else None


def _flat_thread_index(source: Source, line: int | None, subscript: str, block_dim) -> int | None:
    """How many elements a subscript that is the thread's flat place in its block reaches (`threadIdx.x`, `t`
    with `t = threadIdx.x`, `threadIdx.y * blockDim.x + threadIdx.x`): the block's threads along the axes it
    counts; None for any other subscript."""
    index = (subscript or "").strip()
    if line and re.fullmatch(r"[A-Za-z_]\w*", index) and (made := _made_at(source, line, index)):
        index = made[1].strip()
    return {"threadIdx.x": block_dim[0], "threadIdx.y * blockDim.x + threadIdx.x": block_dim[0] * block_dim[1],
            "threadIdx.x + threadIdx.y * blockDim.x": block_dim[0] * block_dim[1]}.get(
        re.sub(r"\s+", " ", re.sub(r"\(int\)\s*", "", index)))


def _row_major(expression: str) -> tuple[str, str, str] | None:
    """(row, width, column) of a row-major index spelled `r * w + c`, `(r) * w + c` or `c + r * w` (names or numbers),
    or None."""
    found = (re.fullmatch(r"\s*\(?\s*(\w+)\s*\)?\s*\*\s*(\w+)\s*\+\s*(\w+)\s*", expression)
             or re.fullmatch(r"\s*(?P<c>\w+)\s*\+\s*\(?\s*(?P<r>\w+)\s*\)?\s*\*\s*(?P<w>\w+)\s*", expression))
    if not found:
        return None
    return found.group("r", "w", "c") if "c" in found.groupdict() else found.groups()


#: A loop that waits for a flag with a volatile or atomic read (`while (((volatile int*)flags)[b - 1] == 0) { }`)
_FLAG_WAIT = r"\bwhile\b[^;]*(?:volatile|\batomic\w*\s*\()"


def _plain_flag_store(source: Source, kernel: Kernel, name: str, line: int | None, other_line: int | None) -> str | None:
    """For a race on a flag between a loop that waits for it with a volatile or atomic read (`while (((volatile
    int*)flags)[b - 1] == 0) { }`) and a plain store that sets it (`flags[b] = 1;`): the hint that the store must be
    atomic or volatile too, after the fence that publishes the data; else None."""
    code = {n: source.line_text(n).split("//", 1)[0] for n in (line, other_line) if n}
    wait = next((n for n, text in code.items() if re.search(rf"{_FLAG_WAIT}[^;]*\b{re.escape(name)}\b", text)), None)
    setter = next((n for n in code if n != wait), None)
    if not wait or not setter:
        return None
    store = re.search(rf"\b{re.escape(name)}\s*\[([^\]]*)\]\s*=(?!=)\s*([^;]+);", code[setter])
    if not store or re.search(r"volatile|\batomic", code[setter]):
        return None
    element = f"{name}[{store.group(1).strip()}]"
    item = next((p.ctype for p in kernel.params if p.name == name and p.pointer), "int")
    before = code[setter][:store.start()] + (source.line_text(setter - 1) if setter > 1 else "")
    fence = ("after the __threadfence() that is there" if "__threadfence" in before else
             "after a __threadfence() that publishes the data the flag announces")
    return (f"Line {setter} sets the flag with a plain store, `{element} = {store.group(2).strip()};`, while line {wait} "
            "waits for it with a volatile (or atomic) read: a plain store is not one the waiting block is sure to see, "
            "nor in order (the compiler may keep it in a register, move it, or merge it with another), and CUDA's "
            f"memory model calls the pair a data race. Make the store atomic, `atomicExch(&{element}, "
            f"{store.group(2).strip()});`, or volatile, `((volatile {item}*){name})"
            f"[{store.group(1).strip()}] = {store.group(2).strip()};`, {fence}.")


def _mask_leaves_out(source: Source, first: int, last: int, threads: tuple, block_dim) -> str | None:
    """A `__syncwarp(MASK)` with a literal mask between lines `first` and `last` that leaves out the lane of one of
    `threads` (two threads of one warp whose accesses race): the hint that says the mask is the bug; else None."""
    lanes = [_thread_linear(t, block_dim) % 32 for t in threads]
    for at in range(first + 1, last):
        call = re.search(r"__syncwarp\s*\(\s*(0[xX][0-9a-fA-F]+|\d+)[uU]?\s*\)", source.line_text(at).split("//", 1)[0])
        if not call:
            continue
        mask = int(call.group(1), 0)
        left_out = [lane for lane in lanes if not mask >> lane & 1]
        if left_out:
            return (f"The {call.group(0)} at line {at} lies between the two accesses, but its mask {mask:#010x} leaves "
                    f"out lane {left_out[0]}, so it does not order that lane's access: __syncwarp orders only the lanes "
                    "its mask names, and each of them must call it. Order the write and the read with a __syncwarp() "
                    "whose mask names both lanes (0xffffffff before the if, where every lane of the warp passes), or "
                    "read only elements that the lanes of the mask wrote.")
    return None


def _block_scope_fence(source: Source, written: int | None) -> str | None:
    """For a store (line `written`) handed over to another block after a fence of block scope only
    (`__threadfence_block()`, `cuda::atomic_thread_fence(..., cuda::thread_scope_block)`), with no device-scope fence
    on the way: the hint that names the fence and its scope; else None."""
    if not written:
        return None
    for at in range(written, min(_body_lines(source, written)[1], written + 40) + 1):
        code = source.line_text(at).split("//", 1)[0]
        if re.search(r"__threadfence\s*\(|__threadfence_system|thread_scope_(?:device|system)\s*\)", code) and \
                not re.search(r"atomic_ref|atomic<", code):
            return None  # a device-scope fence comes first
        fence = re.search(r"__threadfence_block\s*\(\s*\)|(?:cuda::)?atomic_thread_fence\s*\([^;]*thread_scope_block\s*\)",
                          code)
        if fence:
            return (f"Line {at}'s `{fence.group(0)}` is a fence of block scope: it orders line {written}'s store before "
                    "the flag only for the threads of its own block, and the reader is in another block. Use a fence "
                    "of device scope there: `__threadfence()` (or `cuda::atomic_thread_fence(cuda::memory_order_release, "
                    "cuda::thread_scope_device)`), and a flag of device scope (an atomicExch, a volatile store, or a "
                    "cuda::atomic_ref of cuda::thread_scope_device).")
    return None


def _unfenced_handover(source: Source, read: int | None, written: int | None) -> str | None:
    """For a plain store (line `written`) that its thread hands over through a volatile or atomic flag with no
    __threadfence() between (`sums[b] = v; ((volatile int*)flags)[b] = 1;`), read by a thread that waited for a flag
    before the read (line `read`): the hint to fence between the store and the flag; else None."""
    if not read or not written:
        return None
    release = _handover_after(source, written)
    waited = any(re.search(_FLAG_WAIT, source.line_text(n).split("//", 1)[0])
                 for n in range(_body_lines(source, read)[0], read + 1))
    if not release or not waited:
        return None
    at, last, call = release
    late = "__threadfence" in source.line_text(at).split("//", 1)[0][source.line_text(at).find(call):]
    return (f"Line {written}'s store is handed over by line {at}'s `{call}` with no __threadfence() between them, "
            "so on a GPU another block can see the flag before the value, and read the old one (the waiting side "
            f"is right: it waits for the flag, then reads). Add __threadfence() after line {last}, just before the "
            "flag" + (": the fence after the flag comes too late, a fence orders what comes before it with what "
                      "comes after it." if late else "."))


def _handover_after(source: Source, line: int | None) -> tuple[int, int, str] | None:
    """The first line after `line` (a store that was handed over unfenced) in its function that hands over: an
    atomic, a volatile store or a libcu++ store (`atomicExch(lock, 0);` releasing a lock, a flag set), with the last
    line of code before it and the call's text; None if there is none within 40 lines."""
    if not line:
        return None
    previous = line
    for at in range(line + 1, min(_body_lines(source, line)[1], line + 40) + 1):
        code = source.line_text(at).split("//", 1)[0]
        found = re.search(r"\batomic\w*\s*\([^;]*\)|(?:\(\s*)+volatile\b[^;]*?=(?!=)[^;]*|\.\s*store\s*\([^;]*\)", code)
        if found:
            return at, previous, found.group(0).strip()
        if "__threadfence" in code:
            return None
        if code.strip() and code.strip() not in ("{", "}"):
            previous = at
    return None


def _both_threads(kernel: Kernel, args, fault: _Fault, block_dim, grid_dim) -> list:
    """(thread, its _thread_names) of a race's two threads: the faulting one's, and the other's (its built-ins)."""
    names = _thread_names(kernel, args, fault, block_dim, grid_dim)
    other = {**names, **{f"{b}.{a}": v for b, values in (("threadIdx", fault.other_thread), ("blockIdx", fault.other_block))
                         for a, v in zip("xyz", values)}}
    return [(fault.thread, names), (fault.other_thread, other)]


def _past_the_row(source: Source, line: int | None, name: str, threads: list, compound_only: bool = False) -> str | None:
    """For an access through a row-major index `r * w + c` where a thread's column lies outside the row (c >= w, or
    below 0): nothing keeps the columns inside the rows, so that thread lands on a neighbouring row's element (two
    threads write one element) or, in the last row, past the end (a conv2d's output grid rounded up, without `if (ox
    >= Wo || oy >= Ho) return;`). `threads`: (thread, its _thread_names) of the threads to look at. `compound_only`:
    only for a row made of several terms, `(c * Ho + oy) * Wo + ox` (_guard_text guards `y * w + x` itself). The hint,
    or None."""
    expression = (_subscript(source, line, name) or "").strip() if line else ""
    if compound_only and _row_major(expression):
        return None
    row_major = _row_major(expression) or re.fullmatch(r"\(\s*([^()]+?)\s*\)\s*\*\s*(\w+)\s*\+\s*(\w+)", expression)
    if not row_major:
        return None
    row, width, column = row_major if isinstance(row_major, tuple) else row_major.groups()
    for who, known in threads:
        c, w = _index_value(column, known, source, line), _index_value(width, known, source, line)
        if c is not None and w is not None and not 0 <= c < w:
            return (f"The index `{expression}` is row `{row}` and column `{column}` of rows of `{width}` = {w}, and "
                    f"thread {_xyz(who)} has {column} = {c}, {'past the row' if c >= w else 'below 0'}: it lands in "
                    f"the {'next' if c >= w else 'previous'} row, on another thread's element (past the array's end "
                    "from the last row). Keep each thread's "
                    f"column inside the rows before the store: `if ({column} >= {width}) return;` (and the row below "
                    "the height), as a grid rounded up to whole blocks needs.")
    return None


def _one_row_indexed_as_rows(source: Source, line: int | None, name: str, index: int, length: int,
                             values: dict) -> str | None:
    """For `g[r * C + j]` past the end of g, where g has C elements in this launch (one row's worth: a value per
    column, a bias or a scale): the hint to index it by the column alone, `g[j]`. None for any other index."""
    expression = (_subscript(source, line, name) or "").strip()
    row_major = _row_major(expression)
    if not row_major or index < length:
        return None
    row, width, column = row_major
    if _constant(width, {**source.constants, **values}) != length or row.isdigit():
        return None
    bounded = _size_guard(source, line, column) if line else None
    if not bounded or bounded[1] != width or bounded[2]:
        return None  # (the column itself may run past the row: `a[r * n + c]` with no `c < n` is another bug)
    return (f"The index here is `{expression}`, row `{row}` and column `{column}` of rows of {width}, but {name} has "
            f"{width} = {length} elements, one row's worth: from row 1 on the index is past its end ({expression} = "
            f"{index} here). If {name} holds one value per column (a bias, a scale, a mean), index it by the column "
            f"alone: `{name}[{column}]`; if it is a matrix like the others, pass one with all of their rows.")


def _element_pattern(name: str) -> str:
    """A regular expression for an element of `name` as written, `fill[b]`, `label[col[e]]` (one subscript inside)."""
    return rf"{re.escape(name)}\s*\[[^\[\]]*(?:\[[^\[\]]*\][^\[\]]*)*\]"


def _extreme_by_hand(source: Source, name: str, line: int | None, other_line: int | None) -> str | None:
    """`if (label[v] < label[u]) label[u] = label[v];` (or `>`, or the target on the left: `if (d[u] > nd) d[u] = nd;`)
    at `line` or `other_line`, an element of `name` that keeps a minimum (maximum) by hand: two threads can both pass
    the test, and the store that comes last wins, not the smallest. The atomicMin (atomicMax) hint, or None."""
    element = _element_pattern(name)
    operand = rf"(?:{element}|[A-Za-z_]\w*)"
    for at in dict.fromkeys(k for k in (line, other_line) if k):
        text = source.line_text(at).split("//", 1)[0]
        found = re.search(rf"\bif\s*\(\s*({operand})\s*([<>])=?\s*({operand})\s*\)\s*\{{?\s*({element})\s*=(?!=)\s*"
                          rf"({operand})\s*;", text)
        if not found:
            continue
        left, compare, right, target, value = (re.sub(r"\s+", "", g) for g in found.groups())
        if target == right and value == left:
            smallest = compare == "<"  # `if (x < t) t = x;`: a minimum
        elif target == left and value == right:
            smallest = compare == ">"  # `if (t > x) t = x;`
        else:
            continue
        call = "atomicMin" if smallest else "atomicMax"
        shown = re.sub(r"\s+", " ", found.group(4)).strip()
        kept = "minimum" if smallest else "maximum"
        return (f"Line {at} keeps a {kept} by hand in `{shown}` (a test, then a store): two threads can both pass the "
                f"test, and the store that comes last wins, not the {'smallest' if smallest else 'largest'}. Make test "
                f"and store one atomic: `{call}(&{shown}, {found.group(5).strip()});` (on int or unsigned values; it "
                f"returns the old value, to tell whether it changed: `if ({call}(&{shown}, v) {'>' if smallest else '<'} "
                "v) changed = 1;`).")
    return None


def _counter_by_hand(source: Source, name: str, line: int | None, other_line: int | None) -> str | None:
    """Two threads that met at an element of `name` that the kernel counts up by hand: a variable takes its value
    (`int slot = off[b] + fill[b];`, `start = *tail;`) and a statement adds to it (`fill[b] = fill[b] + 1;`,
    `*tail += count;`), at `line` and `other_line` or one line apart: the hint that takes the old value and adds in
    one atomicAdd, or None."""
    n = re.escape(name)
    element = rf"(?:\*\s*\(?\s*{n}\s*\)?|\b{_element_pattern(name)})"
    lines = sorted({k for k in (line, other_line) if k})
    if not lines or lines[-1] - lines[0] > 2:
        return None
    text = "\n".join(source.line_text(k).split("//", 1)[0] for k in range(lines[0], lines[-1] + 1))
    taken = re.search(rf"\b(?:int|unsigned(?:\s+int)?|long\s+long|size_t|auto)?\s*\b(\w+)\s*=(?!=)\s*([^;]*?({element})[^;]*);",
                      text)
    if not taken or taken.group(1) in (name, "*"):
        return None
    spelled = re.sub(r"\s+", " ", taken.group(3)).strip()
    same = re.escape(spelled).replace("\\ ", r"\s*")
    added = (re.search(rf"{same}\s*\+=\s*([^;]+);", text)
             or re.search(rf"{same}\s*=\s*{same}\s*\+\s*([^;]+);", text)
             or re.search(rf"{same}\s*(\+\+)|\+\+\s*{same}", text))
    if not added or added.start() < taken.end():
        return None
    step = "1" if added.group(1) in (None, "++") else added.group(1).strip()
    address = spelled[1:].strip(" ()") if spelled.startswith("*") else f"&{spelled}"
    value = taken.group(2).replace(taken.group(3), f"atomicAdd({address}, {step})", 1).strip()
    return (f"`{taken.group(1)}` takes the value of {spelled} and then {step} is added to it by hand (a counter, a slot "
            f"or a block's space kept by hand), so two threads can read the same old value, get the same slot, and one "
            f"addition is lost. Take the old value and add in one atomic: `{taken.group(1)} = {value};` (atomicAdd "
            f"returns the old value, each thread its own).")


def _stride_loop_extent(source: Source, line: int | None, index: str, values: dict) -> tuple[int, str, int] | None:
    """For a subscript that is the counter of a loop the block's threads share at or around `line`, `for (int c =
    threadIdx.x; c < nc; c += blockDim.x)`: (the loop's line, the elements it reaches as written, `nc` or `nc + 1` for `<=`, and their number in this
    launch, from the kernel's integer arguments), or None (another subscript, or a bound not known here)."""
    if not line or not re.fullmatch(r"[A-Za-z_]\w*", index or ""):
        return None
    first, v = _body_lines(source, line)[0], re.escape(index)
    for at in range(line, first - 1, -1):
        text = source.line_text(at).split("//", 1)[0]
        header = _for_header(text, v)
        if header and (at == line or _in_one_loop(source.text, at, line, at)):
            start, compare, bound, step = header[1:]
            stepped = re.fullmatch(rf"{v}\s*\+=\s*.+", step)
        elif (loop := re.search(rf"\bwhile\s*\(\s*{v}\s*(<=?)\s*([^)]*)\)", text)) and \
                (at == line or _in_one_loop(source.text, at, line, at)):
            # `int c = threadIdx.x; while (c < nc) { sh[c] = 0; c += blockDim.x; }`
            made, (compare, bound) = _made_at(source, at - 1, index), loop.groups()
            start = made[1] if made else ""
            end = _innermost_loop(source.text, line, line, at)
            stepped = re.search(rf"\b{v}\s*\+=", "\n".join(source.lines[at - 1:end[1]]) if end else text)
        else:
            continue
        if not stepped or "threadIdx" not in start:
            return None
        bound = bound.strip()
        count = _constant(bound, {**source.constants, **values})  # (#defines, constants and the launch's integers)
        if not count:
            return None
        if compare == "<=":
            bound = bound[:-4].strip() if re.search(r"\s-\s*1$", bound) else f"{bound} + 1"
            count += 1
        return at, bound, count
    return None


def _appended_by_hand(source: Source, line: int | None, name: str) -> tuple[str, str, str] | None:
    """`frontier[*count] = v; *count = *count + 1;` (or `out[count[0]] = v; count[0]++;`, `q[n_out] = x; n_out++;` of
    a __device__ variable) at `line` or the lines around it, where `name` is the counter or the array appended to:
    (the array, the counter as written, the value stored), or None."""
    if not line:
        return None
    text = "\n".join(source.line_text(k).split("//", 1)[0] for k in range(max(1, line - 2), line + 3))
    for slot in re.finditer(r"\b(\w+)\s*\[\s*(\*\s*\w+|\w+\s*\[\s*0\s*\]|\w+)\s*\]\s*=(?!=)\s*([^;]+);", text):
        queue, counter, value = slot.group(1), re.sub(r"\s+", "", slot.group(2)), slot.group(3).strip()
        base = re.search(r"\w+", counter).group(0)
        if name not in (queue, base) or re.fullmatch(r"\d+", counter):
            continue
        if counter == base and not re.search(rf"\b(?:__shared__|__device__)\b[^;{{}}]*\b{base}\s*(?:=|;|,)", source.text):
            continue  # (a bare name counts in shared or global memory; `for (int j = 0; ...; j++) t[j] = a[j];` does not)
        c = re.escape(counter).replace("\\*", "\\*\\s*").replace("\\[", "\\s*\\[\\s*").replace("\\]", "\\s*\\]")
        if re.search(rf"(?<![\w\]])\(?\s*{c}\s*\)?\s*(?:\+\+|\+=\s*1\b|=\s*{c}\s*\+\s*1\b)|\+\+\s*\(?\s*{c}", text):
            return queue, counter, value
    return None


def _thread_own_index(source: Source, line: int | None, name: str) -> tuple[str, int] | None:
    """`buf[idx] = v;` at `line`, where idx is a local variable of the thread that starts at a number, the same in
    every thread (`int idx = 0;`, or a for loop's `int j = 0`): (the index, the line that declares it), or None."""
    if not line:
        return None
    store = re.search(rf"\b{re.escape(name)}\s*\[\s*([A-Za-z_]\w*)\s*\]\s*=(?!=)",
                      source.line_text(line).split("//", 1)[0])
    if not store:
        return None
    index = store.group(1)
    declared = rf"\b(?:int|unsigned(?:\s+int)?|long|size_t|short)\s+(?:[^;(]*,\s*)?{index}\s*=\s*\d+\s*[;,)]"
    for n in range(line, _body_lines(source, line)[0] - 1, -1):  # (the function's own lines: its locals)
        code = source.line_text(n).split("//", 1)[0]
        if re.search(declared, code) and "__shared__" not in code:
            return index, n
    return None


def _append_hint(queue: str, counter: str, value: str, shared: bool = False) -> str:
    """The hint for a queue appended to by hand (_appended_by_hand's finding)."""
    return (f"The threads append to {queue} at the slot `{counter}` and then increase it, by hand: two threads read the "
            f"same count and write the same slot, and one value is lost{'; no barrier can help' if shared else ''}. "
            f"Take the slot and increase the count in one atomic: `int slot = atomicAdd({_address_of(counter)}, 1); "
            f"{queue}[slot] = {value};` (the count set to 0"
            + (", then __syncthreads(), before)." if shared else " before the launch)."))


def _address_of(lvalue: str) -> str:
    """`*count` → `count`, `count[0]` → `&count[0]`, `total` → `&total`: the address an atomic takes."""
    return lvalue[1:] if lvalue.startswith("*") else f"&{lvalue}"


def _blocks_one_slot(source: Source, line: int | None, name: str) -> tuple[str, str, bool] | None:
    """For a store into one fixed element of `name` at `line` (`out[0] = s[0];`, `*c += cache[0];`): the
    element as written, the value stored and whether it is a `+=`; None for an index that varies."""
    if not line:
        return None
    text = source.line_text(line).split("//", 1)[0]
    n = re.escape(name)
    found = re.search(rf"(\*\s*{n}\b|\b{n}\s*\[\s*(?:\d+|[A-Z_][A-Z0-9_]*)\s*\])\s*(\+?=)(?!=)\s*([^;]+);", text)
    if not found or (found.group(1).startswith("*") and re.search(r"\w\s*$", text[:found.start()])):
        return None  # (`float *out = ...` declares a pointer)
    return re.sub(r"\s+", "", found.group(1)), found.group(3).strip(), found.group(2) == "+="


def _conditional_line(source: Source, line: int) -> bool:
    """Whether `line` runs under a condition or in a loop of its function: it starts with one (`if (t < 32) s[t] =
    ...;`), it is the unbraced body of one on the line before, or the innermost brace block around it opens one."""
    control = r"(?:\b(?:if|while|for|switch)\s*\(.*\)|\belse|\bdo)\s*$"
    if re.match(r"\s*(?:\}\s*)?(?:if|else|for|while|switch|case|default)\b", source.line_text(line)):
        return True
    previous = next((source.line_text(n).split("//", 1)[0] for n in range(line - 1, 0, -1)
                     if source.line_text(n).split("//", 1)[0].strip()), "")
    if re.search(control, previous):
        return True
    opened = _open_braces(source.text, _line_start(source.text, line))
    if not opened:
        return False
    before = source.text[max(0, opened[-1] - 200):opened[-1]].split("\n")  # (the innermost block's opening)
    return bool(re.search(control, before[-1] if before[-1].strip() else (before[-2] if len(before) > 1 else "")))


def _condition_holds(condition: str, names: dict, source: Source, line: int) -> bool:
    """Whether a guard made of comparisons joined by && (`t < 16`, `tid < k - 1 && blockIdx.x == 0`) holds for the
    thread whose built-ins and integer arguments `names` gives (_index_value); False where it cannot tell."""
    for term in condition.split("&&"):
        found = re.fullmatch(r"\s*\(?\s*([^<>=!()]+?)\s*(<=|>=|==|!=|<|>)\s*([^<>=!()]+?)\s*\)?\s*", term)
        if not found:
            return False
        a, b = (_index_value(found.group(k), names, source, line) for k in (1, 3))
        if a is None or b is None or not {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b,
                                          "!=": a != b}[found.group(2)]:
            return False
    return True


def _shared_across_warps(source: Source, name: str, line: int | None, other_line: int | None, block_dim) -> bool:
    """Whether the threads of several warps share the elements of the shared array `name` that the two lines use,
    though the race found was between lanes of one warp: a block of several warps whose lines index the array
    with threadIdx.y (or a variable made from it, `for (int dy = threadIdx.y; ...)`), or by subscripts that swap
    places between the two lines (a transpose's `tile[dy][tx]` written, `tile[tx][dy]` read: a column that every
    warp wrote a part of). Then __syncwarp() is not enough."""
    if not (line and other_line) or block_dim[0] * block_dim[1] * block_dim[2] <= 32:
        return False
    grab = lambda at: [re.sub(r"\s+", "", k) for k in (_first_use(
        rf"\b{re.escape(name)}\s*((?:\[[^\[\]]+\])+)", source.line_text(at)) or [None, ""])[1][1:-1].split("][") if k]
    mine, theirs = grab(line), grab(other_line)
    if len(mine) > 1 and sorted(mine) == sorted(theirs) and mine != theirs:
        return True
    if all(re.fullmatch(r"\d+", k) for k in mine + theirs) and not all(
            _if_block_lines(source.text, at) or re.search(r"\bif\s*\(", source.line_text(at)) for at in (line, other_line)):
        return True  # a shared scalar (or one element) that every thread of the block uses: `acc += sv * t;`
    words = set(re.findall(r"[A-Za-z_]\w*(?:\.[xyz])?", " ".join(mine + theirs)))
    if {"threadIdx.y", "threadIdx.z"} & words:
        return True
    body = _function_body(source.text, line)
    text = without_comments(source.text[body[0]:body[1]]) if body else source.text
    return any(re.search(rf"\b{re.escape(w)}\s*=(?!=)[^;]*\bthreadIdx\.[yz]\b", text) for w in words if "." not in w)


def _unsynced_writer(source: Source, element: str, writes: list[int], line: int | None, thread: tuple,
                     block_dim, names: dict | None = None) -> str | None:
    """For an unwritten shared element that a write earlier in the kernel gives a value after all, with no
    barrier between (`idx[threadIdx.x] = ...;` then `j = idx[63 - threadIdx.x];`, where thread 0 read idx[63]
    before thread 63 wrote it; or `if (t < 16) h[t] = 0;` then `atomicAdd(&h[a[i]], 1u);`, where the writer's
    guard holds for it: `names`, the reading thread's built-ins and the launch's integer arguments): the reader
    ran first, so the hint is the missing __syncthreads(). Seen where the read's garbage stopped the thread
    before the writer ran (an index out of bounds). None otherwise."""
    found = re.fullmatch(r"(\w+)((?:\[\d+\])+)", element)
    if not found or not line:
        return None
    name, place = found.group(1), [int(k) for k in re.findall(r"\d+", found.group(2))]
    first, _ = _body_lines(source, line)
    barrier = re.compile(r"__syncthreads\w*\s*\(|__syncwarp\s*\(|\.\s*sync\s*\(|arrive_and_wait\s*\(|"
                         r"\bcg::sync\s*\(")
    for number in sorted((n for n in writes if first <= n < line), reverse=True):
        between = "\n".join(source.line_text(n) for n in range(number, line + 1))
        guard = re.match(rf"\s*if\s*\(([^(){{}};]*)\)\s*{re.escape(name)}\s*\[[^;{{}}]*;\s*(?://.*)?$",
                         source.line_text(number))  # `if (t < 16) h[t] = 0;` (one line, one simple guard)
        if barrier.search(between) or _conditional_line(source, number) and not (guard and names is not None):
            continue
        subscripts = re.findall(r"\[([^\[\]]+)\]", (_first_use(rf"\b{re.escape(name)}\s*((?:\[[^\[\]]+\])+)",
                                                                   source.line_text(number)) or [None, ""])[1])
        if len(place) == 1 and len(subscripts) == 1:
            reach = _flat_thread_index(source, number, subscripts[0], block_dim)
            if not reach or place[0] >= reach:
                continue
            writer = (place[0] % block_dim[0], place[0] // block_dim[0] % block_dim[1], 0)
        elif len(place) == 2 and [re.sub(r"\s+", "", k) for k in subscripts] in (
                ["threadIdx.x", "threadIdx.y"], ["threadIdx.y", "threadIdx.x"]):
            x, y = place if subscripts[0].strip() == "threadIdx.x" else place[::-1]
            if x >= block_dim[0] or y >= block_dim[1]:
                continue
            writer = (x, y, 0)
        else:
            continue
        if writer == tuple(thread):
            continue
        if guard and (names is None or not _condition_holds(guard.group(1), {
                **names, **{f"threadIdx.{a}": v for a, v in zip("xyz", writer)}}, source, number)):
            continue
        return (f"Thread {writer} writes {element} at line {number} (`{source.line_text(number).strip()}`), but thread "
                f"{tuple(thread)} read it at line {line} before that: no __syncthreads() between the two lines makes the "
                f"block's threads wait until every element is written. Add __syncthreads() between line {number} and "
                f"line {line}, where every thread of the block reaches it (not inside an if).")
    return None


def _too_few_writers(source: Source, element: str, writes: list[int], block_dim) -> str | None:
    """For an unwritten element of a 1-D __shared__ array that the kernel fills one element per thread
    (`s[t] = 0;`, `if (t < 256) s[t] = 0;`) with fewer threads in the block than the array has elements:
    the elements past the block's threads get no value. None otherwise."""
    found = re.fullmatch(r"(\w+)\[(\d+)\]", element)
    threads = math.prod(block_dim)
    if not found or int(found.group(2)) < threads:
        return None
    name = found.group(1)
    extents = _shared_extents(source, name)
    size = _constant(extents[0], source.constants) if extents and len(extents) == 1 else None
    if not size or size <= threads:
        return None
    for number in writes:
        subscript = (_subscript(source, number, name) or "").strip()
        if _flat_thread_index(source, number, subscript, block_dim) == threads:
            first, last = _body_lines(source, number)
            step = "blockDim.x" if math.prod(block_dim[1:]) == 1 else "blockDim.x * blockDim.y"
            same = re.compile(rf"\b{re.escape(name)}\s*\[\s*{re.escape(subscript)}\s*\]")
            others = [n for n in range(first, last + 1) if n != number and same.search(source.line_text(n))]
            return (f"Line {number} writes one element of {name} per thread (`{name}[{subscript}]`), and the block has "
                    f"{threads} threads, so it sets {name}[0] to {name}[{threads - 1}] of its {size}: {element} gets "
                    f"no value. Let each thread set several, in a loop that steps by the block's size: `for (int k = "
                    f"{subscript}; k < {extents[0]}; k += {step}) {name}[k] = ...;`, then "
                    "__syncthreads()."
                    + (f" The same goes for line {_and([str(n) for n in others])}, which also takes one element of "
                       f"{name} per thread." if others else ""))
    return None


def _index_without_thread(source: Source, kernel: Kernel, line: int | None, name: str, block: str) -> str | None:
    """For two threads of one block storing into one element of `name` at `line` whose index is made of
    blockIdx (and sizes) but no threadIdx (`a[blockIdx.x * blockDim.x]`, `out[blockIdx.x]`): every thread of
    the block gets that one element. None otherwise."""
    subscript = (_subscript(source, line, name) or "").strip()
    expression, made = subscript, None
    if re.fullmatch(r"[A-Za-z_]\w*", subscript) and (made := _made_at(source, line, subscript)):
        expression = made[1].strip()
    scalars = {p.name for p in kernel.params if not p.pointer}
    if "blockIdx" not in expression or "threadIdx" in expression or not set(_names_in(expression)) <= scalars:
        return None
    shown = f"`{subscript}`" + (f" (`{subscript} = {expression}` at line {made[0]})" if made else "")
    one = re.fullmatch(r"blockIdx\.[xyz]", expression)
    own = ("once the block has combined its threads' values: `if (threadIdx.x == 0) " + name + "[" + subscript
           + "] = ...;`")
    if one:  # `out[blockIdx.x] = sum;` by every thread: the block's one result
        return (f"The index {shown} is the block's, the same for every thread of block {block}, so each of them "
                f"stores into that element. If it holds the block's one result, let one thread store it, {own}; if "
                "each thread should have an element of its own, add the thread's place: `blockIdx.x * blockDim.x + "
                "threadIdx.x`.")
    return (f"The index {shown} uses blockIdx but not threadIdx, so every thread of block {block} gets the same "
            "element. Add the thread's place in its block: `blockIdx.x * blockDim.x + threadIdx.x` (or, if the "
            f"element holds the block's one result, let one thread store it, {own}).")


def _guard_lets_through(source: Source, line: int | None, subscript: str, name: str, index: int, length: int,
                        names: dict, thread: str) -> str | None:
    """For an index past the end of a local or shared array at a line guarded by a test of one of the subscript's
    variables (`if (t < k) tile[32 + t] = ...;`, where the tile has 32 + k - 1 elements): the guard let the
    faulting thread through, so the hint is the guard, not the array's size. None otherwise."""
    text = source.line_text(line).split("//", 1)[0] if line else ""
    guard = re.match(r"\s*if\s*\(([^(){};]*)\)", text)
    variables = [v for v in _names_in(subscript) if re.fullmatch(r"[A-Za-z_]\w*", v)] if subscript else []
    if not guard or not variables or index < length:
        return None
    for variable in variables:
        test = re.search(rf"\b{re.escape(variable)}\s*(<=|<)\s*([^&|]+?)\s*(?:&&|\|\||$)", guard.group(1))
        value = _index_value(variable, names, source, line) if test else None
        if value is None:
            continue
        shown = f"`{test.group(0).rstrip('&| ').strip()}`"
        if index == length:
            return (f"The guard {shown} (line {line}) lets thread {thread} through with `{variable}` = {value}, and "
                    f"then `{subscript}` is {index}, one past the last element of {name} ({length} elements): the "
                    "guard lets one index too many through. Make it stop one earlier, or make the array one element "
                    "larger, whichever the algorithm means.")
        return (f"The guard {shown} (line {line}) lets thread {thread} through with `{variable}` = {value}, and then "
                f"`{subscript}` is {index}, past the end of {name} ({length} elements): the guard does not keep "
                f"`{subscript}` inside the array. Guard what indexes it (`if ({subscript} < {length})`), or size the "
                "array for the largest index that passes.")
    return None


def _reach_of_own_index(source: Source, line: int | None, subscript: str, block_dim, length: int) -> str:
    """For a subscript made of the thread's own index and numbers (`t * 2`, `2 * t + 1`, `t + 32`, with t =
    threadIdx.x): the largest value it takes in this launch's block, and the size that would hold it, as a
    sentence to add to a hint; '' for any other subscript."""
    if not line or not subscript:
        return ""
    expression = subscript
    for variable in set(re.findall(r"\b[A-Za-z_]\w*\b", subscript)) - {"threadIdx", "blockDim", "x", "y", "z"}:
        own = _own_index(source, line, variable)
        if own and own.group(1) == "x":  # (x only: the range below)
            expression = re.sub(rf"\b{re.escape(variable)}\b", "(T)", expression)
    expression = re.sub(r"(?:\(int\)\s*)?threadIdx\.x\b", "(T)", expression)
    expression = expression.replace("blockDim.x", str(block_dim[0]))
    if "T" not in expression or not re.fullmatch(r"[\d\s+\-*/%()T]*", expression) or (
            "-" in expression and re.search(r"[/%]", expression)):  # (C truncates a negative quotient, Python floors)
        return ""
    try:
        reach = [(eval(expression.replace("T", str(t)).replace("/", "//"), {"__builtins__": {}}, {}), t)
                 for t in range(block_dim[0])]
    except Exception:
        return ""
    top, thread = max(reach)
    if top < length:
        return ""
    return (f" Here `{subscript}` reaches {top} (thread {thread} of this launch's {block_dim[0]} along x), so the "
            f"array needs {top + 1} elements there, not {length}.")


def _own_index(source: Source, line: int | None, expression: str) -> re.Match | None:
    """The thread's place along one axis (`threadIdx.x`, or `t` made from it before `line`): _OWN_INDEX's match
    (its group 1 the axis), else None."""
    expression = expression.strip()
    own = _OWN_INDEX.fullmatch(expression)
    if not own and line and re.fullmatch(r"\w+", expression) and (made := _made_at(source, line, expression)):
        own = _OWN_INDEX.fullmatch(made[1].strip())
    return own


def _end_of_body(source: Source, loop: tuple[int, int] | None, line: int) -> str:
    """Where the end of a loop's body is, in words: "after line 16, before the closing brace of the loop at
    line 8" (the loop's first and last line), or "after line N" (`line`) where the loop is not known."""
    if not loop:
        return f"after line {line}"
    first, last = loop
    if first == last:
        return f"inside the loop at line {first}, last in its body"
    if source.line_text(last).strip().startswith("}") and last - 1 > first:
        return f"after line {last - 1}, before the closing brace of the loop at line {first}"
    return f"last in the body of the loop at line {first} (lines {first} to {last})"


def _stride_from_the_size(source: Source, line: int | None, subscript: str, name: str, index: int,
                          length: int) -> str | None:
    """For `s[t + k]` past the end of s in a loop that starts k at the block's size or the array's (`for (k =
    blockDim.x; k > 0; k >>= 1)`): a tree reduction's first stride is half of it. None otherwise."""
    added = re.fullmatch(r"(\w+)\s*\+\s*(\w+)", subscript or "")
    if not added or not line:
        return None
    first = _body_lines(source, line)[0]
    for variable in added.groups():
        v = re.escape(variable)
        for at in range(line, first - 1, -1):
            loop = re.search(rf"\bfor\s*\(\s*(?:(?:unsigned|int|auto|size_t)\s+)*{v}\s*=\s*([^;]+);[^;]*;\s*{v}\s*"
                             r"(>>=\s*1|/=\s*2|=\s*\w+\s*/\s*2)", source.line_text(at))
            if not loop:
                continue
            start = loop.group(1).strip()
            if re.fullmatch(r"blockDim\.[xyz]", start) or _constant(start, source.constants) == length:
                size = "the block's whole size" if start.startswith("blockDim") else f"the array's whole size"
                return (f"The loop at line {at} starts `{variable}` at {start}, {size}, so "
                        f"its first pass reaches {name}[{subscript}] = {name}[{index}]: past the end. A tree reduction's "
                        f"first step adds the upper half onto the lower one: start at half the size, `{variable} = "
                        f"{start} / 2`.")
            break
    return None


def _halo_hint(source: Source, element: str, block_dim) -> str | None:
    """For a read of an element of a __shared__ tile that no thread wrote, where the tile is the block's
    threads plus a halo of H on each side (`s[BLOCK + 2 * R]`, `tile[16 + 2][16 + 2]`) and the element lies in
    that halo: which side (or corner) of it no write reaches, and how its loads are written. None otherwise."""
    found = re.fullmatch(r"(\w+)((?:\[\d+\])+)", element)
    written_extents = _shared_extents(source, found.group(1)) if found else None
    if not written_extents:
        return None
    name, place = found.group(1), [int(k) for k in re.findall(r"\d+", found.group(2))]
    extents = [_constant(e, source.constants) for e in written_extents]
    if None in extents or len(extents) != len(place) or not 1 <= len(extents) <= 2:
        return None
    axes = block_dim[:len(extents)][::-1]  # tile[y][x]: rows along threadIdx.y, columns along threadIdx.x
    halos = [(extent - threads) // 2 for extent, threads in zip(extents, axes)]
    if any((extent - threads) % 2 or not 0 <= halo <= 8 or (halo and "+" not in written)  # (`B + 2 * R`)
           for extent, threads, halo, written in zip(extents, axes, halos, written_extents)) or not any(halos):
        return None
    sides = []
    for k, (at, threads, halo) in enumerate(zip(place, axes, halos)):
        low, high = ("top", "bottom") if len(place) == 2 and k == 0 else ("left", "right")
        if at < halo:
            sides.append(low)
        elif at >= threads + halo:
            sides.append(high)
    if not sides:
        return None
    where = f"{sides[0]}-{sides[1]} corner" if len(sides) == 2 else f"{sides[0]} side"
    shape = " × ".join(str(e) for e in extents)
    block = " × ".join(str(t) for t in axes)
    around = (f"{halos[0]} more on each side" if len(set(halos)) == 1 else
              f"{halos[1]} more left and right" if halos[0] == 0 else f"{halos[0]} more above and below" if not halos[1]
              else f"{halos[0]} more above and below and {halos[1]} more left and right")
    text = (f"{element} lies in the halo of {name}: {name} holds the block's {block} threads' elements with "
            f"{around} ({shape}), and {element} is in its {where}, which no write of the block reaches. ")
    stores = [(source.text.count("\n", 0, m.start()) + 1, m.group(0).rstrip("= ")) for m in
              re.finditer(rf"\b{re.escape(name)}\s*(?:\[[^\[\]=;]+\]\s*)+=(?!=)", without_comments(source.text))]
    if len(stores) == 1 and not _innermost_loop(source.text, stores[0][0], stores[0][0]):
        # one store, each thread's own element (`s[ty + R][tx + R] = in[...]`): no part of the halo is loaded
        return text + (f"No part of the halo is loaded: the block's only store into {name} is `{stores[0][1]}` (line "
                       f"{stores[0][0]}), one element per thread, the tile's middle. Load the halo too: its sides (threads "
                       f"with threadIdx.x < {halos[-1] or halos[0]} load the left halo, their index - "
                       f"{halos[-1] or halos[0]}, those with threadIdx.x >= blockDim.x - {halos[-1] or halos[0]} the "
                       "right one, their index + the same; alike along y) and its corners, with 0 past the data's "
                       "edge; or let each thread load several elements in a loop over the whole tile, "
                       "`for (k = thread's rank; k < tile's size; k += threads)`, which covers every element.")
    if len(sides) == 2:
        return text + ("The corners are the halo elements most often left out: the threads that load the top and "
                       "bottom rows of the halo must load its corner columns too (or let each thread load several "
                       "elements in a loop over the whole tile, `for (k = thread's rank; k < tile's size; k += "
                       "threads)`, which covers every element).")
    halo = halos[-1] if sides[0] in ("left", "right") else halos[0]
    axis = "x" if sides[0] in ("left", "right") else "y"
    return text + (f"Load every side: as threads with threadIdx.{axis} < {halo} load the {'left' if axis == 'x' else 'top'} "
                   f"halo (their index - {halo}), threads with threadIdx.{axis} >= blockDim.{axis} - {halo} load the "
                   f"{'right' if axis == 'x' else 'bottom'} one (their index + {halo}), with 0 past the data's edge; or "
                   "let each thread load several elements in a loop over the whole tile, which covers every element.")


def _shared_element(fault: _Fault, source: Source, line: int | None) -> str:
    """The element of shared memory a race or an uninitialised read names: `s[3]`, `tile[1][2]` as
    runtime.h wrote it, with the member (`acc.sum`, `u.i[1]`) when it is a __shared__ struct or union
    variable (runtime.h then gives the byte in it)."""
    text = fault.text.decode(errors="replace")
    names, item, size = source.dynamic_shared_name, source.dynamic_shared_item, fault.element_bytes
    dynamic = re.fullmatch(rf"{re.escape(names)}\[(\d+)\]", text) if names else None
    if dynamic and item and size and item != size:
        # `int* b = (int*)&smem[n]` over `extern __shared__ char smem[]`: runtime.h counts in the
        # access's elements; name the declared elements that the access covers.
        first = int(dynamic.group(1)) * size
        low, high = first // item, (first + size - 1) // item
        return f"{names}[{low}]" if low == high else f"{names}[{low}..{high}]"
    if "[" not in text and size and fault.length is not None and fault.length >= 0 and re.search(
            rf"\bcuda::std::array\s*<[^;<>]*>\s*{re.escape(text)}\s*;", source.text):
        return f"{text}[{fault.length // size}]"  # (`__shared__ cuda::std::array<float, 64> s;`: its element)
    byte = (fault.count if fault.kind in (RACE, UNINITIALIZED) else None) if "[" in text else fault.length
    return _with_member(text, source, line, byte)


#: A thread's place in its block along one axis, as an index (`threadIdx.x`, `(int)threadIdx.y`).
_OWN_INDEX = re.compile(r"(?:\(int\)\s*)?threadIdx\.([xyz])")
# A test that lets only one warp's threads on (`if (tid < 32)`, `if (threadIdx.x < warpSize)`, `if (warp == 0)`).
_ONE_WARP_GUARD = re.compile(r"\bif\s*\([^;{)]*(?:<\s*(?:32|warpSize|WARP_SIZE|WARPSIZE)\b|<=\s*31\b|\bwarp\w*\s*==\s*0\b)")
# A warp-synchronous step, `v[tid] += v[tid + 16]` run by the lanes of one warp, and its fix.
_WARP_STEP_FIX = ("Split the step so that every lane reads before any lane writes: "
                  "`float other = v[tid + 16]; __syncwarp(); v[tid] += other; __syncwarp();` (v, tid and float: "
                  "your array, index and element type), or use __shfl_down_sync.")


def _overlapping_carves(source: Source, line: int | None, other_line: int | None) -> str | None:
    """Two lines that store through different pointers carved out of the extern __shared__ memory
    (`float* a = sm; float* b = sm + blockDim.x / 2;`) into one element: the arrays overlap (a barrier
    between the stores would only hide that); the hint with the fix."""
    if not (line and other_line and line != other_line and source.dynamic_shared):
        return None
    carved = {}
    for m in re.finditer(r"\*\s*(\w+)\s*=\s*((?:\([^()]*\)\s*)?(\()?\s*&?\s*(\w+)\b[^;]*);", source.text):
        if m.group(4) in source.dynamic_shared or m.group(4) in carved:  # (quoted as written: `b = &s[n / 2]`)
            carved[m.group(1)] = re.sub(r"\s+", " ", m.group(2)).strip()
    # (`a[i] = v` or `*count = 0`)
    stored = [re.search(r"\b(\w+)\s*\[[^\]]*\]\s*(?:[-+*/%|&^]?=)(?!=)|(?:^|[;{)]|\belse\b)\s*\*\s*(\w+)\s*"
                        r"(?:[-+*/%|&^]?=)(?!=)", source.line_text(n)) for n in (other_line, line)]
    if not all(stored):
        return None
    first, second = (s.group(1) or s.group(2) for s in stored)
    if first == second or first not in carved or second not in carved:
        return None
    return (f"Line {other_line} stores through `{first}` and line {line} through `{second}`, both carved out of the "
            f"extern __shared__ memory (`{first} = {carved[first]}`, `{second} = {carved[second]}`): the two arrays "
            "overlap, so one thread's element of one is another thread's element of the other, and no barrier makes "
            "that right. Start each array after the end of the one before (`b = a + the number of elements of a`), "
            "and launch with shared_mem covering them all.")


def _row_wrap(fault: _Fault, block_dim, text: str, before: str = "") -> str | None:
    """Two threads of a 2-D launch that wrote one element `y * w + x` (`text`, the store's line): when
    their global coordinates make that one element only with a width w that one of their x reaches
    (x = 20 on a row of 20), that thread's column is past the row's end and it wrote into the next row
    (a grid rounded up to whole blocks, without a guard on x): the hint that says so, or None."""
    if not re.search(r"\[\s*\(?\s*\w+\s*\*\s*\w+\s*\)?\s*\+\s*\w+\s*\]", text):  # `[y * w + x]`
        return None
    coordinates = [(b[0] * block_dim[0] + t[0], b[1] * block_dim[1] + t[1])
                   for b, t in ((fault.block, fault.thread), (fault.other_block, fault.other_thread))]
    (x1, y1), (x2, y2) = coordinates
    if y1 == y2 or (x2 - x1) % (y1 - y2):
        return None
    width = (x2 - x1) // (y1 - y2)  # y1 * w + x1 == y2 * w + x2
    past = [(x, y) for x, y in coordinates if x >= width]
    if width <= 0 or not past:
        return None
    x, y = past[0]
    said = (f"If the index is row * width + column, this looks like a row {width} wide: the thread at column {x}, row "
            f"{y} is past the row's end and wrote into the next row, where another thread writes too")
    # the guard is there, with <= (`col <= n`): it lets the column equal to the width through
    inclusive = re.search(r"\b(\w+)\s*<=\s*(\w+)\b(?!\s*[-+*/(\[.])", text)
    if inclusive and x == width:
        return (f"{said}: the guard `{inclusive.group(0)}` lets it through (column {width} is one past the last, "
                f"{width - 1}). Compare with <: `{inclusive.group(1)} < {inclusive.group(2)}`.")
    # both coordinates guarded already (`if (r < rows && c < cols) out[r * rows + c]`): the row's length in the
    # index is not the bound of the column's check
    flat = re.search(r"\[\s*\(?\s*(\w+)\s*\*\s*(\w+)\s*\)?\s*\+\s*(\w+)\s*\]", text)
    if flat:
        row, width_name, column = flat.groups()
        bound = re.search(rf"\b{re.escape(column)}\s*<\s*(\w+)\b", text)
        guarded_row = re.search(rf"\b{re.escape(row)}\s*<\s*\w+", text)
        if not bound:  # an early return above, `if (x >= ow || y >= oh) return;` (`before`: the lines before)
            early = [g for g in re.finditer(r"\bif\s*\(([^;{}]*)\)\s*return\s*;", before)]
            bound = next((b for g in reversed(early)
                          if (b := re.search(rf"\b{re.escape(column)}\s*>=\s*(\w+)\b", g.group(1)))), None)
            guarded_row = any(re.search(rf"\b{re.escape(row)}\s*>=\s*\w+", g.group(1)) for g in early)
        if bound and bound.group(1) != width_name and guarded_row:
            return (f"The index is `{row} * {width_name} + {column}`, and both coordinates are guarded already, but the "
                    f"guard says a row is {bound.group(1)} long (`{column} < {bound.group(1)}`) while the index steps "
                    f"{width_name} elements a row: with {width_name} and {bound.group(1)} of different sizes, threads "
                    f"of different rows land on one element. A row-major index is row times the row's length, "
                    f"`{row} * {bound.group(1)} + {column}`.")
    return (f"{said} (the grid is rounded up to whole blocks). Guard both coordinates, `if (x < w && y < h)`, before "
            "any access.")


def _grid_stride_start(source: Source, line: int | None) -> str | None:
    """For two blocks that met on one element: a grid-stride loop on `line` or the lines before it that starts
    at threadIdx alone (every block then goes over the same elements), as the hint; else None."""
    for at in range(line or 0, max(0, (line or 0) - 4), -1):
        loop = re.search(r"\bfor\s*\(\s*(?:\w+\s+)?(\w+)\s*=\s*([^;]*);[^;]*;\s*\1\s*\+=\s*([^)]*)\)",
                         source.line_text(at))
        if loop and "threadIdx" in loop.group(2) and "blockIdx" not in loop.group(2) and "gridDim" in loop.group(3):
            return (f"Every block starts the grid-stride loop at `{loop.group(1)} = {loop.group(2).strip()}` (line {at}), "
                    "so the blocks go over the same elements: start at the thread's index in the whole grid, "
                    "blockIdx.x * blockDim.x + threadIdx.x, and keep the step of the whole grid.")
    return None


def _for_header(text: str, index: str = r"\w+") -> tuple[str, str, str, str, str] | None:
    """The parts of a counted loop's header on `text`, `for (int k = 0; k < N; k++)` (its index named `index`
    where given): (index, start, `<` or `<=`, bound, the step as written), or None."""
    found = re.search(rf"\bfor\s*\(\s*(?:(?:const|unsigned|signed|long|int|size_t|auto)\s+)*({index})\s*=\s*([^;]*);"
                      r"\s*\1\s*(<=?)\s*([^;]*);\s*([^)]*)\)", text)
    return tuple(part.strip() for part in found.groups()) if found else None


def _thread_counted_loop(source: Source, kernel: Kernel, line: int | None) -> str | None:
    """For a barrier that not every thread reached: when it sits in a loop whose index starts at the
    thread's own index (a grid-stride or block-stride loop, `for (int i = ... threadIdx.x; i < n; i += ...)`,
    or a `while (i < n)` over an `int i = ... threadIdx.x;`), so that the threads go round it different
    numbers of times, the hint: a loop over the block's start, the same for every thread. None otherwise."""
    loop = _innermost_loop(source.text, line, line, kernel.line) if line else None
    if not loop:
        return None
    header = _for_header(source.line_text(loop[0]))
    stepped = header and re.fullmatch(rf"{re.escape(header[0])}\s*\+=\s*(.+)", header[4])
    if stepped:
        index, start, compare, bound, step = *header[:4], stepped.group(1).strip()
    else:  # `int i = threadIdx.x; while (i < n) { ...; i += blockDim.x; }`
        header = re.search(r"\bwhile\s*\(\s*(\w+)\s*(<=?)\s*([^)]*)\)", source.line_text(loop[0]))
        before = "\n".join(source.lines[kernel.line - 1:loop[0] - 1])
        made = header and re.findall(rf"\b{re.escape(header.group(1))}\s*=\s*([^;]*);", before)
        after = "\n".join(source.lines[loop[0]:loop[1]])
        stepped = header and re.search(rf"\b{re.escape(header.group(1))}\s*\+=\s*([^;]*);", after)
        if not (made and stepped):
            return None
        index, compare, bound = (part.strip() for part in header.groups())
        start, step = made[-1].strip(), stepped.group(1).strip()
    if "threadIdx" not in start and re.fullmatch(r"[A-Za-z_]\w*", start) and (
            own := _made_at(source, loop[0], start)) and re.fullmatch(r"\s*threadIdx\.x\s*", own[1]):
        start = "threadIdx.x"  # `int t = threadIdx.x;` ... `for (int c = t; c < cols; c += 128)`
    if "threadIdx" not in start:
        return None
    base = re.sub(r"\s*\+\s*threadIdx\.x\b|\bthreadIdx\.x\s*\+\s*", "", start)
    base = "0" if base == "threadIdx.x" else base
    fix = ""
    if "threadIdx" not in base:  # `for (int base = blockIdx.x * blockDim.x; base < n; base += ...) { int i = base + threadIdx.x;`
        fix = (f": `for (int base = {base}; base {compare} {bound}; base += {step}) {{ int {index} = base + threadIdx.x; "
               "... }`, with each access guarded (`if ("
               f"{index} {compare} {bound})`, or `{index} {compare} {bound} ? ... : 0.0f` for a load) and the barriers "
               "outside those ifs")
    return (f"The loop at line {loop[0]} starts each thread at its own index (`{index} = {start}`) and stops at "
            f"`{index} {compare} {bound}`, so threads go round it different numbers of times, and those that stop "
            "early never reach the barrier inside it. Go round the same number of times in every thread of the "
            f"block{fix}.")


#: The warp-level calls that order no memory among the lanes: all but __syncwarp (and __activemask, which waits
#: for nothing either): the shuffles, votes, matches and reductions.
_UNORDERING_WARP_CALL = re.compile(r"\b(" + "|".join(sorted(set(_WARP_SIGNATURES) - {"__syncwarp", "__activemask"}))
                                   + r")\s*\(")


def _warp_call_between(text: str, first: int, last: int):
    """(line, name) of a warp-level call that orders no memory (a shuffle, a vote, a match) on lines first to
    last of the source, or None."""
    lines = without_comments(text).splitlines()
    for at in range(max(first, 1), min(last, len(lines)) + 1):
        if found := _UNORDERING_WARP_CALL.search(lines[at - 1]):
            return at, found.group(1)
    return None


#: What a race's hint adds when its two threads are lanes of one warp (shared or global memory).
_SYNCWARP_IS_ENOUGH = "Where all the threads that share these elements are lanes of one warp, __syncwarp() is enough."


def _same_warp(fault: _Fault, block_dim) -> bool:
    """Whether the two threads a race names (of one block) are in one warp."""
    return _thread_linear(fault.thread, block_dim) // 32 == _thread_linear(fault.other_thread, block_dim) // 32


def _a(number: int) -> str:
    """The article before a number said aloud: "an 8-byte", "an 18-byte", "a 16-byte"."""
    digits = str(number)
    return "an" if digits[0] == "8" or (len(digits) % 3 == 2 and digits[:2] in ("11", "18")) else "a"


def _barrier_in_helper(source: Source, kernel: Kernel, line: int | None) -> str | None:
    """For threads that wait at different barriers, one of them in a __device__ function (`__syncthreads()` in a
    helper that `if (t < 32) helper(s);` calls): the barrier counts where the function is called, so the call must
    be made by every thread. The hint that says so, naming the function and the kernel's lines that call it."""
    if not line or not kernel.line:
        return None
    holder = _function_parameters(source, line)
    text = source.line_text(line)
    if not holder or holder[0] == kernel.name or "__syncthreads" not in text:
        return None
    # (only a barrier that every thread making the call reaches: not one under an if, or in a loop, of the helper's)
    before = text[:text.index("__syncthreads")]
    inside = without_comments(source.text[holder[2][0] + 1:_line_start(source.text, line) + len(before)])
    if inside.count("{") > inside.count("}") or re.search(r"\b(?:if|for|while)\b|\?", before):
        return None
    first, last = _body_lines(source, kernel.line)
    calls = [n for n in range(first, last + 1) if re.search(rf"\b{re.escape(holder[0])}\s*\(", source.line_text(n))]
    if not calls:
        return None
    # `if (t >= n) return;` in the helper before its barrier: the threads that return skip it
    start = source.text.count("\n", 0, holder[2][0]) + 1
    returns = [n for n in range(start, line) if re.search(r"\breturn\b", without_comments(source.line_text(n)))]
    if returns:
        return (f"The __syncthreads() at line {line} is in {holder[0]}(), and line {returns[0]} "
                f"(`{source.line_text(returns[0]).strip()}`) returns from {holder[0]}() before it: the threads that "
                f"take that return skip the barrier and wait at the next one, while the others wait at line {line}. "
                "Let every thread reach the barrier: put the condition around the work instead of returning "
                "(`if (t < n) { ... }` before the __syncthreads(), and again after it where the work needs it).")
    where = f"line{'s' * (len(calls) > 1)} {_and(calls)}"
    return (f"The __syncthreads() at line {line} is in {holder[0]}(), which the kernel calls at {where}: a barrier in a "
            f"function counts where the function is called, so every thread of the block must make that call. Call "
            f"{holder[0]}() where every thread passes (not inside an if, or a loop, that only some threads take), and "
            "keep the condition for the work inside it (a thread past the end can pass a value that changes nothing: "
            "`i < n ? x[i] : 0.0f` for a sum).")


def _called_at(chain: list[int]) -> str:
    """` (in a function called at line N)` when a line lies in a __device__ function inlined at line N
    of the kernel (the outermost call), else ``."""
    return f" (in a function called at line {chain[-1]})" if len(chain) > 1 and chain[-1] != chain[0] else ""


#: The fault kinds by number, for a message that could not be worded in full (_explained).
_KIND_NAMES = {globals()[name]: name.lower().replace("_", " ") for name in (
    "OUT_OF_BOUNDS", "SHARED_OUT_OF_BOUNDS", "BARRIER_EXITED", "BARRIER_MISMATCH", "TIMEOUT", "CRASH", "STACK_OVERFLOW",
    "ASSERT", "TRAP", "NO_MEMORY", "ARRAY_OUT_OF_BOUNDS", "RACE", "UNINITIALIZED", "GLOBAL_RACE", "MISALIGNED",
    "READ_ONLY", "WARP_EXITED", "WARP_MISMATCH", "WARP_BAD_MASK", "BAD_SHIFT", "BAD_CONVERSION", "BAD_PRINTF",
    "BARRIER_DIVERGENT", "USE_AFTER_FREE", "BAD_FREE", "UNINITIALIZED_LOCAL", "READ_FILL", "STORED_FILL", "PARTIAL_READ",
    "UNREACHABLE", "MISSING_RETURN")}


def _explained(module: Module, kernel: Kernel, fault: _Fault, *rest, **options) -> KernelError:
    """_explain's KernelError; where wording its message fails (a source its hints did not foresee), the fault
    all the same, with its kind, block, thread and line: a learner always gets the KernelError, never an error
    of course.cuda's own."""
    try:
        try:
            return _explain(module, kernel, fault, *rest, **options)
        finally:
            for key in [k for k in _FAULTING_SUBSCRIPT if k[0] == threading.get_ident()]:
                _FAULTING_SUBSCRIPT.pop(key, None)
    except Exception as bug:  # (a bug in a hint: the fault must still be reported)
        block, thread = _xyz(fault.block), _xyz(fault.thread)
        line = None
        try:
            line = (module.lines_at(fault.code_offset) or [None])[0] or fault.line or None
        except Exception:
            line = fault.line or None
        source = module.source
        text = f": {source.line_text(line)}" if line and 0 < line <= len(source.lines) else ""
        kind = _KIND_NAMES.get(fault.kind, f"kind {fault.kind}")
        return KernelError(
            f"kernel '{kernel.name}' stopped at a fault ({kind}).\n  where: block {block}, thread {thread}"
            + (f", line {line}{text}" if line else "")
            + f"\n  note: course.cuda could not word its explanation of this fault ({type(bug).__name__}: {bug}); "
            "please report it with the kernel's source.",
            kernel=kernel.name, block=block, thread=thread, line=line)


def _explain(module: Module, kernel: Kernel, fault: _Fault, time_limit: float, shared_mem: int,
             arrays: dict, holder: tuple[str, int] | None = None, block_dim=(1, 1, 1), args=(),
             grid_dim=(1, 1, 1)) -> KernelError:
    """A KernelError whose message says what went wrong, where, and what to try. `holder`: the array
    element that holds an undefined shuffle result after a plain launch (launch); `block_dim`: the
    launch's block; `args`: its packed arguments (which of them share memory)."""
    kind, source = fault.kind, module.source
    block, thread = _xyz(fault.block), _xyz(fault.thread)
    line = fault.line or None
    chain = []  # the line and, inside an inlined __device__ function, the lines that called it
    if kind in (OUT_OF_BOUNDS, SHARED_OUT_OF_BOUNDS, CRASH, STACK_OVERFLOW, TIMEOUT, ARRAY_OUT_OF_BOUNDS, RACE,
                UNINITIALIZED, GLOBAL_RACE, READ_ONLY, MISALIGNED, BAD_FREE, USE_AFTER_FREE, UNINITIALIZED_LOCAL,
                WARP_BAD_MASK, BAD_SHIFT, BAD_CONVERSION, BAD_PRINTF, OTHER_LOCAL, LDG_WRITTEN, STORED_FILL,
                LOCAL_ATOMIC, READ_FILL, PARTIAL_READ, UNREACHABLE, MISSING_RETURN):
        # (WARP_BAD_MASK: a store of an undefined shuffle result)
        chain = module.lines_at(fault.code_offset)
        # (sanitized builds) the calls of helpers that were not inlined: the frames from the one that
        # faulted outwards. A check's fault comes from a call at the faulting line itself (that frame
        # must be the first, or the fault was found elsewhere: at a barrier, say); a crash's walk
        # starts at the crashing function's caller.
        callers = [lines for lines in module.lines_of_calls([c for c in fault.callers if c and chain]) if lines]
        if kind != CRASH:
            callers = callers[1:] if callers and callers[0] == chain else []
        for lines in callers:
            chain += lines
        line = (chain[0] if chain else None) or line
    if kind == TIMEOUT and fault.address and not module.line_of(fault.code_offset):
        line = module.line_of(fault.address) or line  # stopped inside the sanitizer: its last access
    if kind == STACK_OVERFLOW and not chain and fault.base:
        chain = module.lines_at(fault.base)  # overflowed inside the sanitizer: its last access
        line = (chain[0] if chain else None) or line
    index, length = fault.index, fault.length
    element = ""  # (a race's element, in words: `s[3]`, `img[3]`)

    if kind == OUT_OF_BOUNDS:
        name, shared = _array_name(fault, arrays)
        # (which of the line's subscripts of the array faulted, where it has several: the hints name that one)
        names = _thread_names(kernel, args, fault, block_dim, grid_dim)
        if (faulted := _faulting_subscript(source, line, name, index, names)) is not None:
            _FAULTING_SUBSCRIPT[(threading.get_ident(), line, name)] = faulted
        tail = None  # (the hint for a vector access past the last whole vector)
        unit = ""  # (what the elements are, for a view through a wider type)
        param = next((p for p in kernel.params if p.name == name and p.pointer), None)
        # the array's items (floats) in one of its elements, in all (known for a view of the array only), and their
        # C name: (4, 0, "float") for a float4* parameter, (4, n, "float") for a float4 view of n floats
        items_in = (param.lanes, 0, _VECTOR_ITEM.get(param.dtype, param.dtype)) \
            if param and param.lanes > 1 and param.dtype else (1, 0, "")
        itemsize = arrays[fault.base][2] if fault.base in arrays else fault.element_bytes
        valid = f" (valid indices 0 to {length - 1})" if length else ""
        if fault.op == 2 and fault.base not in arrays:  # `(float*)malloc(n)`, `new float[n]` in device code
            made, _, at = fault.text.decode(errors="replace").partition("@")
            made = {"new[]": "new[]", "new": "new"}.get(made, "malloc")
            where = f" at line {at}" if at.isdigit() and int(at) > 0 else " in the kernel"
            unit = f"{fault.element_bytes}-byte element{'s' * (length != 1)}"
            made_by = source.line_text(int(at)) if at.isdigit() and 0 < int(at) <= len(source.lines) else ""
            if fault.element_bytes == _CHECKED_POINTER_BYTES and re.search(r"\*\s*\*|\*\s*\[", made_by):
                unit = f"pointer{'s' * (length != 1)}"  # (`(float**)malloc(...)`: a pointer is 32 bytes here, 8 on a GPU)
            what = f"accessed element {index} of a block that {made} made{where}, which holds {length} {unit}{valid}"
            tail = _malloc_in_bytes(source, fault.element_bytes, length) if 0 <= index < length * fault.element_bytes \
                else None  # (an index the bytes would hold, had they been elements)
        elif shared:  # a static __shared__ array reached through a pointer (`&tile[0][0] + k`)
            what = (f"accessed {name}[{index}] through a pointer into the __shared__ array {name}, which holds "
                    f"{length} {fault.element_bytes}-byte element{'s' * (length != 1)}{valid}")
        elif fault.base not in arrays and not fault.text:  # a pointer made from a local or __device__ array
            what = (f"accessed element {index} through a pointer made from {_unnamed_array(source, length)}, which "
                    f"holds {length} element{'s' * (length != 1)}{valid}")
        elif fault.element_bytes and itemsize and fault.element_bytes != itemsize and \
                fault.element_bytes % itemsize == 0 and fault.element_bytes // itemsize <= 4 and fault.base in arrays \
                and index >= 0:
            # a float4 (float2, int4, ...) view of an array of its items: name the items it reached, and what is left
            # past the whole vectors (not a struct over raw bytes, a curandState's 48: its own elements say more)
            per, items = fault.element_bytes // itemsize, arrays[fault.base][1]
            first, rest = index * per, items - length * per
            unit = f" of {fault.element_bytes} bytes (the {items:,} {itemsize}-byte items it was given)"
            if items_in[0] == 1:  # (a float4* view of a float array: its floats are the items; n may count them)
                plain = _VECTOR_ITEM.get(param.dtype, "") if param and param.dtype and param.lanes == 1 else ""
                items_in = (per, items, plain or f"{itemsize}-byte item")
            what = (f"accessed {name}[{first}] to {name}[{first + per - 1}] in one {fault.element_bytes}-byte access "
                    f"(element {index} of {name} seen through a {fault.element_bytes}-byte type such as "
                    f"{_VECTOR_OF_BYTES.get(fault.element_bytes, 'a vector type')} or a struct), but {name} has "
                    f"{items} element{'s' * (items != 1)}: {length} whole {fault.element_bytes}-byte "
                    f"element{'s' * (length != 1)}{valid}" + (f" and {rest} after them" if rest else ""))
            if rest and index == length:
                tail = (f"The last {rest} element{'s' * (rest != 1)} of {name} do{'es' * (rest == 1)} not fill a whole "
                        f"{fault.element_bytes}-byte element, so no vector access may reach {'them' if rest > 1 else 'it'}: "
                        f"let the vector accesses stop at {length} (the whole ones, n / {per}) and copy the last "
                        f"n % {per} with plain accesses.")
        elif fault.element_bytes and fault.element_bytes != itemsize:
            what = (f"accessed {name}[{index}] as {fault.element_bytes}-byte elements (the pointer's type, a float4 "
                    f"or a struct, say, over {itemsize}-byte items), but {name} holds {length} of them{valid}")
        elif fault.base in module.stale and length == 0:  # (_poison_stale_pointers)
            kept = module.stale[fault.base]
            earlier = arrays.get(fault.base, ())
            given = (f"the array that an earlier launch{' of ' + repr(earlier[3]) if len(earlier) > 3 else ''} "
                     f"was given{' as ' + earlier[0] if earlier else ''}")
            what = (f"accessed {kept}[{index}], but the __device__ pointer {kept} still points into {given}, which "
                    "Python has freed since (no variable held it any more): on a GPU the access reads or writes "
                    "freed memory, which may by now belong to another array")
            tail = (f"Pass the array to this launch and set {kept} from it again, or keep the array alive (in a "
                    f"variable) for as long as kernels use {kept}.")
        elif len(arrays.get(fault.base, ())) > 3:  # an earlier launch's argument, through a kept pointer
            what = (f"accessed {name}[{index}], but {name} (the array given as {name} to an earlier launch of "
                    f"'{arrays[fault.base][3]}', reached through a pointer kept since, in a __device__ variable, "
                    f"say) has {length} element{'s' * (length != 1)}{valid}")
        else:
            what = f"accessed {name}[{index}], but {name} has {length} element{'s' * (length != 1)}{valid}"
            shape = next((p.row_shape for p in kernel.params if p.name == name and p.row_shape), ())
            items = math.prod(shape) if shape else 0
            if items and length % items == 0 and index >= 0:  # `float A[N][M]`: name the row and column
                place = np.unravel_index(index % items, shape)
                rows = length // items
                what = (f"accessed {name}[{index // items}]{''.join(f'[{k}]' for k in place)}, but {name} has {rows} "
                        f"row{'s' * (rows != 1)} (valid first indices 0 to {rows - 1})")
        values = _scalar_values(kernel, args)
        hint = (tail or _printf_string_hint(source, line, name, index, length, itemsize)
                or _overflow_hint(source, line, name, index, names)
                or _narrow_index_hint(source, line, name, index, names)
                or (index < 0 and _through_offset_pointer(source, line, name, index, length))
                or _helper_argument(source, chain, name, index, length)
                or _index_hint(source, line, index, length, _faulting_subscript(source, line, name, index, names)
                               or _subscript(source, line, name), name)
                or _one_row_indexed_as_rows(source, line, name, index, length, values)
                or _loose_guard(source, line, name, index, length, values, unit, items_in[0], items_in[2])
                or _past_the_row(source, line, name, [(fault.thread, names)], compound_only=True)
                or _past_the_size(source, line, name, index, length, values)
                or _grid_width_index(source, line, name)
                or _guarded_index(source, line, name, index, length)
                or _binned_index(source, line, name, index, length)
                or _either_cursor(source, line, name)
                or _unwrapped_probe(source, line, name)
                or _offset_from_a_scan(source, line, name, index, length)
                or _data_index(source, line, name, index, length)
                or _through_offset_pointer(source, line, name, index, length, *items_in[:2], names=names,
                                           grid_dim=grid_dim)
                or _constant_index(source, line, name, index, length)
                or _tile_edge(source, line, name)
                or _per_block_index(source, line, name, length, grid_dim)
                or _mirrored_index(_subscript(source, line, name), name, index, length)
                or "Check how the index is computed; where threads past the end are expected (the last block's, "
                   f"in a grid rounded up to whole blocks), guard the access: "
                   f"{_guard_text(source, kernel, line, name, arrays[fault.base][1] if fault.base in arrays else length, index, fault.thread[0])}.")
        if length < 0 and fault.base not in arrays:
            # a pointer whose own bytes are no pointer: loaded from a freed block (free and delete fill it with 0xFF
            # bytes here) or from memory nothing wrote (`head = head->next` after `delete head`)
            what = ("accessed memory through a pointer that holds no valid address: the pointer was read from memory "
                    "that holds no pointer, a block already freed (free and delete fill it with 0xFF bytes here) "
                    "or memory that nothing wrote")
            hint = ("Look at where this pointer's value came from: a read of a block after its free or delete (read "
                    "what you need from it first, `Node* next = head->next; delete head; head = next;`), or a "
                    "pointer member or array element never set. A launch with sanitize=True names the read of freed "
                    "or unwritten memory itself.")
    elif kind == SHARED_OUT_OF_BOUNDS:
        names, item, size = source.dynamic_shared_name or "extern __shared__", source.dynamic_shared_item, fault.element_bytes
        if not size or item == size:  # (an unknown or mixed declared type: the bytes say it surely)
            what = f"accessed {names}[{index}] in dynamic shared memory, which holds {length} elements"
        else:  # `int* b = (int*)smem;` over `extern __shared__ char smem[]`: smem[128] would name the wrong byte
            what = (f"accessed {size}-byte element {index} (bytes {index * size} to {(index + 1) * size - 1}) of the "
                    f"dynamic shared memory ({names}), which holds {shared_mem} bytes")
        hint = (f"The launch passed shared_mem={shared_mem} bytes: pass shared_mem=<elements × "
                "element size> to the launch, or index less.")
        subscript = (_subscript(source, line, source.dynamic_shared_name) or "").strip() \
            if source.dynamic_shared_name else ""
        # (a loop the block's threads share, `for (c = threadIdx.x; c < nc; c += blockDim.x)`, reaches its bound)
        stride = _stride_loop_extent(source, line, subscript, _scalar_values(kernel, args))
        threads = None if stride else _flat_thread_index(source, line, subscript, block_dim)
        if threads and re.fullmatch(r"[A-Za-z_]\w*", subscript) and (made := _made_at(source, line, subscript)):
            subscript = made[1].strip()  # (the message shows what the variable holds)
        element_size = size or item
        if stride and element_size and stride[2] * element_size > shared_mem:
            # `for (int c = threadIdx.x; c < nc; c += blockDim.x) sh[c] = 0;`: the loop's bound, not the block's threads
            at, bound, needed = stride
            top = bound[:-4] if bound.endswith(" + 1") else f"{bound} - 1"
            factor = bound if re.fullmatch(r"\w+", bound) else f"({bound})"
            hint = (f"The launch passed shared_mem={shared_mem} bytes, and `{subscript}` goes up to {top} (the loop at "
                    f"line {at}, which the block's threads share): {names} needs {bound} = "
                    f"{needed} elements, {needed} × {element_size} = {needed * element_size} bytes. Pass "
                    f"shared_mem=<{factor} × element size> to the launch (shared_mem={needed * element_size} here)"
                    + (", not the number of elements." if shared_mem == needed else "."))
        if threads and element_size and threads * element_size > shared_mem:  # one element per thread
            hint = (f"The launch passed shared_mem={shared_mem} bytes, and the kernel gives each of the block's "
                    f"{threads} threads an element of its own (`{names}[{subscript}]`): that takes {threads} × "
                    f"{element_size} = {threads * element_size} bytes. Pass shared_mem=<threads per block × element "
                    f"size> to the launch (shared_mem={threads * element_size} here; with NumPy, "
                    "threads * x.itemsize)" + (", not the number of elements." if shared_mem == threads else "."))
        text = source.line_text(line) if line else ""
        if size == 32 and (pointers := [name for name in re.findall(r"\b([A-Za-z_]\w*)\s*\[", text)
                                        if re.search(rf"\*\s*\*\s*(?:const\s+)?{re.escape(name)}\b", source.text)]):
            # `float** rows = (float**)smem;`: pointers stored in shared memory, sized for a GPU's 8-byte ones
            hint = (f"`{pointers[0]}` holds pointers, and a pointer takes 32 bytes on the CPU backend (a checked "
                    "pointer: its address and its array's bounds) where it takes 8 on a GPU, so shared memory sized "
                    "for 8-byte pointers holds a quarter as many here. Pass shared_mem=<pointers × 32> on this "
                    "backend (× 8 on a GPU: `8 if cuda.xp is not np else 32` per pointer), or keep indices in shared "
                    "memory instead of pointers (an int per row, used as `a + row_start[r]`), the same size on both.")
    elif kind == BARRIER_EXITED:
        other = _xyz(fault.other_thread)
        what = (f"{_barrier_name(source, fault.line)} at line {fault.line} is not reached by every thread of the block: "
                f"thread {thread} went past it without waiting and finished the kernel, while others wait there "
                f"(e.g. thread {other})")
        hint = ("Every thread of a block that has not returned must reach each __syncthreads(), so a barrier "
                "cannot sit inside an if (or a loop) that some threads skip: put it where every thread passes, "
                "and guard only the work.")
        hint = _thread_counted_loop(source, kernel, fault.line) or _barrier_in_helper(source, kernel, fault.line) or hint
    elif kind == READ_FILL:
        array, element, value = _filled_element(fault, arrays)
        function = re.search(r"\b(atomic\w*)\s*\(", source.line_text(line) if line else "")
        holds = "every byte of which is 0xFE" if fault.op == 5 else f"which holds {value}"  # (5: a vector or struct)
        reads = (f"calls {function.group(1) if function else 'an atomic function'} on {element}, whose old value is "
                 f"{value}" if fault.mask else f"reads {element}, {holds}")
        if fault.other_op == 1:  # a block from malloc/new
            what = (f"{reads}: the bytes 0xFE that a sanitized launch fills such a block with. Nothing stored into "
                    "this element before the read; on a GPU it would hold whatever the heap held")
            hint = ("Store into a block's elements before reading them (a loop that sets each one, or memset), or "
                    "make it with `new float[n]()`, which starts every element at 0.")
        else:
            array = array or "the array"
            what = (f"{reads}: the bytes 0xFE that course.cuda.xp.empty fills a new array with, so nothing (no kernel, "
                    "no host code) wrote this element before the kernel read it (compute-sanitizer's initcheck). On a "
                    "GPU, cupy.empty's memory holds whatever it held before, often the last array's values: the "
                    "result would be garbage")
            param = next((p for p in kernel.params if p.name == array and p.pointer), None)
            loop = _innermost_loop(source.text, line, line, kernel.line or 1) if line else None
            header = source.line_text(loop[0]) if loop else ""
            inclusive = re.search(r"\bfor\s*\([^;]*;\s*(\w+)\s*<=\s*(\w+\s*\[[^\]]+\])\s*;", header)
            if fault.mask:  # an atomic's old value: a total, a count, a lock
                hint = (f"Give `{array}` its starting value before the launch: `{array}.fill(0)` (or `xp.zeros(...)`) for "
                        "a sum, a count or a lock that is free at 0, the smallest value for a maximum; the atomics then "
                        "update it.")
            elif param is not None and param.const:  # an input: the host was to fill it
                hint = (f"`{array}` is only read: give it its values before the launch (`xp.asarray(data)`, or set the "
                        f"part the kernel reads), or read only the elements that hold data (`i < n ? {array}[i] : 0.0f` "
                        "reads nothing past n).")
            elif inclusive and re.search(rf"\b{inclusive.group(1)}\b", "\n".join(
                    source.line_text(k) for k in range(loop[0] + 1, line + 1))):
                # `for (p = rowptr[i]; p <= rowptr[i + 1]; ++p) ... x[cols[p]]`: one entry past the row
                hint = (f"The loop at line {loop[0]} goes on while `{inclusive.group(1)} <= {inclusive.group(2)}`: "
                        f"a row's (or segment's) entries end before {inclusive.group(2)}, the next one's start, so its "
                        f"last pass reads the next row's first entry, which points at an element nothing has written "
                        f"yet (and past the arrays' end from the last row). Compare with <: `{inclusive.group(1)} < "
                        f"{inclusive.group(2)}`.")
            else:
                hint = (f"Give `{array}` its starting values before the launch (`xp.zeros(...)`, `xp.full(...)`, or "
                        f"`{array}.fill(0)`), or have the kernel write each element before anything reads it: "
                        "`c[i] = a[i] + b[i];` rather than `c[i] += ...`, a sum kept in a local variable and stored "
                        "once.")
    elif kind == STORED_FILL:
        name, element, value = _filled_element(fault, arrays)
        heap = "malloc" in source.text or re.search(r"\bnew\b", source.text)
        does = f"passes {value} to an atomic function on {element}" if fault.mask == 1 else f"stores {value} into {element}"
        what = (f"{does}: the bytes 0xFE that a sanitized launch puts in a local variable "
                + ("(or a block from malloc or new) " if heap else "")
                + "before it has a value. The value is such a variable's (or was copied from one), read before "
                "anything was stored in it on this thread's path; on a GPU it would be whatever its register "
                + ("(or the heap) " if heap else "") + "held")
        if fault.op == 4:  # a struct stored whole, one of its members never set
            struct_type = next((p.ctype for p in kernel.params if p.name == name and p.pointer), None) or "T"
            hint = (f"Give every member of the struct a value before it is stored: `{struct_type} v = {{}};` starts "
                    "them all at 0, or set the member at those bytes on every path."
                    + (" A block from malloc or new holds no values either: store into its elements before reading "
                       "them." if heap else ""))
        else:
            example = ("`float r = 0.0f;`" if fault.op in (0, 1)
                       else "`int k = 0;`, or -1 for an index that means none yet")
            hint = ("Give the variable a value on every path before it is read: an initial value where it is declared "
                    f"({example}), a `default:` in the switch, or an `else` after the ifs that set it."
                    + (" A block from malloc or new holds no values either: store into its elements before reading "
                       "them (`new float[n]()` starts them at 0)." if heap else ""))
    elif kind == LDG_WRITTEN:
        name, elements, itemsize = arrays.get(fault.base, ("an argument array", 0, 0))
        other, other_block = _xyz(fault.other_thread), _xyz(fault.other_block)
        other_chain = module.lines_at(fault.address)
        who = f"thread {other}" + (f" of block {other_block}" if other_block != block else "")
        at = f" at line {other_chain[0]}{_called_at(other_chain)}" if other_chain else ""
        element = f"{name}[{index}]"
        wrote = "updated atomically" if fault.other_op == 3 else "wrote"
        what = (f"reads {element} with __ldg, which {who} {wrote}{at} in this launch: __ldg loads through the "
                "read-only (non-coherent) cache, which is for data that no thread writes while the kernel runs, so "
                "on a GPU it may return the value from before the write")
        hint = (f"Read it with a plain load ({element.split('[')[0]}[...]), or keep __ldg for arrays the kernel "
                "only reads (a `const float* __restrict__` input); a value written in this launch needs a plain "
                "load after the barrier (or a second launch).")
    elif kind == OTHER_LOCAL:
        other = _xyz(fault.other_thread)
        what = (f"{'reads' if fault.op == 1 else 'writes'} a local variable or array of thread {other} through a "
                "pointer: local memory belongs to one thread. On a GPU each thread that follows such a pointer "
                "(handed over in shared memory, say) reaches its own local memory at that address, not thread "
                f"{other}'s: it reads garbage or its own values")
        hint = ("Put what the threads share in __shared__ memory (declare the array __shared__, or copy the values "
                "there and __syncthreads()), and hand over values, not addresses of locals.")
    elif kind == LOCAL_ATOMIC:
        call = re.search(r"\b(atomic\w*)\s*\(\s*&?\s*([\w.]+)", source.line_text(line) if line else "")
        function, variable = (call.group(1), f" `{call.group(2)}`") if call else ("an atomic function", "")
        what = (f"calls {function} on a local variable{variable} of thread {thread}: CUDA's atomic functions work on "
                "global and shared memory. Each thread has its own copy of a local variable, so no other thread "
                "adds to it (on a GPU the result is undefined)")
        hint = ("For a count or a sum of the whole block, declare it `__shared__` (one thread sets it to 0, then "
                "__syncthreads() before the atomics and again before reading it); for the whole grid, use an element "
                "of an argument array or a __device__ variable. A thread's own running total needs no atomic: `+=`.")
    elif kind == BARRIER_DIVERGENT:
        other, if_line = _xyz(fault.other_thread), int(fault.index)
        times = lambda n: {0: "not yet", 1: "once", 2: "twice"}.get(n, f"{n} times")  # noqa: E731
        barrier = (f"the {_barrier_name(source, fault.other_line)} at line {fault.other_line}" if fault.other_line
                   else "a __syncthreads()")
        what = (f"threads of one block meet at {barrier} in different passes: it sits "
                f"inside the if at line {if_line}, which thread {thread} has tested {times(int(fault.length))} and "
                f"gone into {times(int(fault.count))}, and thread {other} tested {times(int(fault.address))} and went "
                f"into {times(int(fault.element_bytes))}. The threads that skip it go on and wait at the same "
                "barrier in a later pass, so it no longer orders what each pass writes and reads (on a GPU a barrier "
                "that not every thread of the block reaches is undefined)")
        hint = (f"A __syncthreads() may sit in conditional code only where the condition is the same for every "
                f"thread of the block. Keep the work under the if at line {if_line}, and move the barrier out of "
                "it, where every thread passes (after the if, inside the loop).")
        if if_line and not _in_one_loop(source.text, if_line, if_line):  # straight-line code: no passes
            what = (f"threads of one block do not all reach {barrier}: it sits inside the if at line {if_line}, which "
                    f"thread {thread} went into and thread {other} did not, so thread {other} went on past it (to a "
                    "later barrier, or to the kernel's end) and the barrier no longer orders what the threads write "
                    "and read around it (on a GPU a barrier that not every thread of the block reaches is undefined)")
            hint = (f"A __syncthreads() may sit in conditional code only where the condition is the same for every "
                    f"thread of the block. Keep the work under the if at line {if_line}, and move the barrier out of "
                    "it, after the if, where every thread passes.")
    elif kind == BARRIER_MISMATCH:
        other = _xyz(fault.other_thread)
        what = (f"threads of one block wait at different __syncthreads(): thread {thread} at line "
                f"{fault.line}, thread {other} at line {fault.other_line}")
        hint = (_thread_counted_loop(source, kernel, fault.other_line) or _thread_counted_loop(source, kernel, fault.line)
                or _barrier_in_helper(source, kernel, fault.line) or _barrier_in_helper(source, kernel, fault.other_line)
                or "A __syncthreads() inside an if/else must be reached by all threads of the block, or by none.")
    elif kind == TIMEOUT:
        what = f"ran longer than its time limit of {time_limit:g} s"
        hint = ("An endless loop? Check that the loop's condition changes. If the kernel is just slow "
                "on the CPU, launch it on less data or raise the limit: RawKernel(..., time_limit=60).")
        # (GCC makes a call in tail position a loop: no stack runs out) a recursive function the thread stopped in
        if recursive := [(name, at) for name, at, first, last in _recursive_functions(source)
                         if line and first <= line <= last]:
            name, at = recursive[0]
            hint = (f"An endless recursion? {name}() calls itself (line {at}): check that every call moves toward "
                    f"the case that returns without calling again (`if (n <= 0) return ...;` before the call, for "
                    f"an argument that may start below the base case too). {hint}")
        if (always := _always_true_unsigned(source, range(1, len(source.lines) + 1))) is not None:
            comparison, name, at, _ = always
            hint = (f"`{comparison}` (line {at}) is always true for an unsigned {name}, so a loop that waits for it "
                    f"to fail never ends: compare with `{name} > 0` (halving down to 1), or use a signed int. {hint}")
        if (lock := _lock_hint(source, line)):
            hint = f"{lock} {hint}"
        elif (plain := _plain_wait(source)):
            hint = f"{plain} {hint}"
        elif waits := [(at, text) for at, text in source.cas_misuse if text.startswith("the loop waits for `")]:
            # `while (flag[0] == 0) { }` on an argument's element: the compile-time warning's words (said once a
            # process, so perhaps not before this launch)
            at, text = min(waits, key=lambda wait: (wait[0] != line, wait[0]))
            hint = f"Line {at}: {text[0].upper()}{text[1:]} {hint}"
        if module.sanitized:  # backend="cpu" and the exercise checks run the race checker by default
            hint += (" This launch ran with the race checker on (sanitize=True, or the default of backend=\"cpu\" and "
                     "the exercise checks), which makes it 50 "
                     "to 200 times slower than a plain launch on every core (make bench measures it): find bugs on "
                     "small sizes, and launch large ones with sanitize=False.")
        if re.search(r"\b(while|for)\b", source.text) and re.search(r"\bvolatile\b|\batomic\w+\s*\(", source.text):
            # spinning on a flag or a counter: another block's, perhaps
            workers = 1 if module.sanitized else worker_threads()
            alone = ("one at a time here when the sanitizer is on" if module.sanitized else
                     "one at a time here on one worker thread (COURSE_CUDA_THREADS=1)" if workers == 1 else
                     f"{workers} at a time here (one per worker thread)")
            hint += (" If a block waits in a loop for a flag or a count that another block sets: blocks run "
                     f"{alone}, and a GPU promises no order between blocks either, so "
                     "the wait may never end. Split the work into two launches, or let the last block to finish "
                     "do it (an atomic ticket, as in NVIDIA's threadFenceReduction). If a thread waits for a flag "
                     "that another thread of its own block sets, that thread must be able to get there: not "
                     "wait at a __syncthreads() that the waiting thread never reaches, nor finish without setting it.")
    elif kind == STACK_OVERFLOW:
        stack = fault.length if fault.length > 0 else 64 * 1024
        what = "ran out of stack" + (f" (here each thread of a kernel with barriers has {stack // 1024:,} KiB of stack: "
                                     "64 KiB for calls and a place for each of the kernel's local arrays; a GPU "
                                     "allows up to 512 KiB of local memory per thread)" if kernel.uses_barriers else "")
        hint = "Too deep a recursion, or too large a local array: move big arrays to __shared__ or global memory."
    elif kind == CRASH:
        sig = {signal.SIGFPE: "an arithmetic fault (integer division by zero?)",
               signal.SIGSEGV: f"an invalid memory access at address {fault.address:#x}",
               signal.SIGBUS: f"a bus error (invalid or misaligned address {fault.address:#x})",
               signal.SIGILL: "an illegal instruction"}.get(fault.signal, f"signal {fault.signal}")
        what = f"crashed with {sig}" if not (fault.signal == signal.SIGFPE and fault.op == 9) else \
            "made an integer division by zero"
        hint = ("Argument arrays are bounds-checked, so look at pointers made by casts, at __shared__ "
                "and local arrays indexed out of range, and at divisions.")
        nulls = [p.name for p, a in zip(kernel.params, args) if p.pointer and not a.data]
        used = [name for name in nulls if line and re.search(rf"\b{re.escape(name)}\b", source.line_text(line))]
        signed = fault.address - (1 << 64) if fault.address >= 1 << 63 else fault.address
        # (an index far from 0 through a None argument, `bias[i - 100000]`, lands far from address 0)
        if fault.signal == signal.SIGSEGV and (fault.address < 65536 or abs(signed) < 1 << 32 and used):
            what = (f"crashed: it used a null pointer, or one made from a small number (an invalid memory access "
                    f"at address {fault.address:#x})")
            hint = ("A pointer that is nullptr (or 0), or was never set on this thread's path, was read or written "
                    "through: set it before use, or guard the access with `if (p != nullptr)`.")
            if nulls:  # None given for a pointer parameter
                named = used or nulls
                hint = (f"This launch passed None (a null pointer) for {_and([f'`{n}`' for n in named])}: pass an "
                        f"array, or let the kernel test it first (`if ({named[0]} != nullptr)`). " + hint)
            if fault.op == 7:  # the pc was the bad address: a call through a function pointer
                what = f"crashed: it called a function through a null function pointer (address {fault.address:#x})"
                hint = ("The function pointer called here is nullptr (or 0), or was never set on this thread's path: "
                        "give it a __device__ function on every path before the call, or test it first "
                        "(`if (f != nullptr)`).")
        elif fault.signal == signal.SIGFPE:
            hint = ("An integer division or remainder by zero (or INT_MIN / -1). A GPU does not stop there but gives "
                    "a meaningless number, so the bug would go unnoticed: guard the divisor (`if (d != 0)`).")
            values = _scalar_values(kernel, args)
            divisors = [name for name in dict.fromkeys(re.findall(r"[/%]\s*([A-Za-z_]\w*)\b(?!\s*[\[(.])",
                                                                  source.line_text(line).split("//", 1)[0] if line else ""))
                        if values.get(name) == 0]
            if divisors:  # `i % w` with w = 0 given to the launch
                hint = (f"{_and([f'`{d}`' for d in divisors])} {'is' if len(divisors) == 1 else 'are'} 0 in this launch "
                        f"(the argument passed for {'it' if len(divisors) == 1 else 'them'}), and line {line} divides by "
                        f"{'it' if len(divisors) == 1 else 'them'}: pass the size you meant, or guard the divisor "
                        f"(`if ({divisors[0]} != 0)`). A GPU does not stop there but gives a meaningless number, so "
                        "the bug would go unnoticed.")
    elif kind == BAD_SHIFT:
        value_type, count_type = (name.strip("'") for name in fault.text.decode(errors="replace").split("|", 1))
        bits = 1 << (fault.other_op >> 1)
        count = _integer(fault.address, fault.element_bytes)
        value = _integer(fault.base, fault.other_op)
        what = (f"shifted the {bits}-bit {value_type} {value} by {count} bits, but a {bits}-bit value can only be "
                f"shifted by 0 to {bits - 1}")
        hint = (f"C++ and CUDA leave such a shift undefined, and the machines disagree: a GPU's shift clamps the count "
                f"(1u << 32 gives 0 there), a CPU takes it modulo {bits} (1u << 32 gives 1), and a compiler may assume "
                f"it never happens. Keep the count below {bits}: shift a 64-bit value (1ull << n) when n can reach 32, "
                "handle that case apart (`n >= 32 ? 0u : x << n`), or, for a rotate, use __funnelshift_l(x, x, r), "
                "which takes any r.")
        if precedence := _shift_precedence(source, line):
            hint = precedence
    elif kind == BAD_CONVERSION:
        from_type, to_type = (name.strip("'") for name in fault.text.decode(errors="replace").split("|", 1))
        value = (struct.unpack("<f", struct.pack("<I", fault.base & 0xFFFFFFFF))[0] if fault.other_op == 32 else
                 struct.unpack("<d", struct.pack("<Q", fault.base))[0] if fault.other_op == 64 else None)
        signed, bits = fault.element_bytes & 1, 1 << (fault.element_bytes >> 1)
        low, high = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
        shown = "NaN" if value is not None and math.isnan(value) else f"{value:.9g}" if value is not None else "a value"
        what = f"converted the {from_type} {shown} to {to_type}, which holds only {low:,} to {high:,}"
        source_name = "double" if fault.other_op == 64 else "float"
        fix = ("Clamp the value into range before converting: " + (
            "(unsigned char)fminf(fmaxf(v, 0.0f), 255.0f)." if (bits, signed) == (8, 0) else
            f"fminf(fmaxf(v, {low}.0f), {high}.0f).") if bits <= 16 else
            f"Convert with CUDA's __{source_name}2{'' if signed else 'u'}{'int' if bits == 32 else 'll'}_rz(v) (or "
            "_rn), which saturates as a GPU does, or keep the value in range.")
        hint = ("C++ and CUDA leave such a conversion undefined, and the machines disagree: a GPU saturates "
                "((unsigned char)300.0f gives 255 there, -1.0f gives 0, NaN gives 0), a CPU wraps around or gives "
                f"the type's lowest value. {fix}")
        if shown == "NaN":
            hint = ("The value is NaN (not a number): a 0.0f / 0.0f, sqrtf of a negative number or a read of a value "
                    "never written, upstream. A GPU converts NaN to 0, a CPU to the type's lowest value: find where "
                    "the NaN comes from (or test it with isnan(v) before converting).")
    elif kind == BAD_PRINTF:
        what, hint = _printf_message(fault)
    elif kind == ASSERT:
        what = f"failed assert({fault.text.decode(errors='replace')})"
        hint = ""
        if fault.text.startswith(b"cub::"):  # runtime.h's __cc_cub_size_fault
            hint = ("A CUB collective is declared for one block size (its template arguments: BLOCK_DIM_X, and "
                    "BLOCK_DIM_Y and BLOCK_DIM_Z if given) and must be used in blocks of exactly that many threads: "
                    "launch blocks of that size, or declare it with the launch's (one #define or template constant "
                    "for both).")
    elif kind == TRAP:
        what = "called __trap()" if fault.op != 1 else ("reached __brkpt(), a breakpoint: with no debugger to stop "
                                                        "in, the launch fails there, as on a GPU")
        hint = "" if fault.op != 1 else ("Take it out to run on, or print what you wanted to look at (printf) and "
                                         "return.")
    elif kind == UNREACHABLE:
        what = "reached __builtin_unreachable(), which promises the compiler that no thread ever gets there"
        hint = ("The compiler builds the code around that promise (a switch's default, an if's other branch is "
                "dropped), so on a GPU the thread goes on somewhere else, and the results are wrong without any "
                "error. Handle the case (return, or a value that says 'invalid'), or check the promise with "
                "assert(...) while debugging.")
    elif kind == MISSING_RETURN:
        name = _function_name_at(source, line) if line else None
        function = f"`{name}`" if name else "the function"
        what = (f"reached the end of {function} without a return statement, but {function} returns a value"
                + (" (nvcc warns: 'missing return statement at end of non-void function')"))
        hint = (f"The caller gets no value (on a GPU, whatever a register held; the compiler may also assume this path "
                f"never runs and drop code around it). Return a value on every path through {function}: a `return` "
                "after the last if, or an else branch.")
    elif kind == NO_MEMORY:
        what = "could not get memory for its threads' stacks or its dynamic shared memory"
        hint = "Launch fewer threads per block, or ask for less shared_mem."
    elif kind == ARRAY_OUT_OF_BOUNDS:
        name = fault.text.decode(errors="replace")
        where_kind = {1: "__shared__ array", 2: "__constant__ array", 3: "__device__ array",
                      4: "member array", 5: "cuda::std::array"}.get(fault.op, "local array")
        if fault.op == 4 and line and 0 < line <= len(source.lines):  # ".v": the object from the line (acc.v, ps[i].v)
            owner = re.search(rf"([A-Za-z_]\w*(?:\s*\[[^\]]*\])*)\s*(?:\.|->)\s*{re.escape(name[1:])}\s*\[",
                              source.lines[line - 1])
            separator = "->" if owner and "->" in owner.group(0) else "."
            name = re.sub(r"\s+", "", owner.group(1)) + separator + name[1:] if owner else name[1:]
        subscript = "" if fault.count == 0 else f" (subscript {fault.count + 1})"
        what = (f"accessed {name}{'[...]' * fault.count}[{index}]{subscript}, but that dimension of the {where_kind} "
                f"{name} has {length} element{'s' * (length != 1)} (valid indices 0 to {length - 1})")
        base = re.split(r"\.|->", name)[-1]
        found = _first_use(rf"\b{re.escape(base)}\s*((?:\[[^\[\]]*\]\s*)+)", source.line_text(line) if line else "")
        subscripts = re.findall(r"\[([^\[\]]*)\]", found.group(1)) if found else []
        k = subscripts[fault.count].strip() if len(subscripts) > fault.count else "index"  # (the learner's own index)
        if fault.count == 0 and line and (nested := _subscript(source, line, base, nested=True)) \
                and index >= math.prod(block_dim or (1,)):  # `nodes[nodes[t].next]`: the index is data, not t
            k = nested.strip()
        if fault.count == 0 and line and index >= math.prod(block_dim or (1,)):
            # `s[t] += s[t + k]`: of the line's subscripts, not the thread's own index (below the block's size)
            every = [m.group(1).strip() for m in re.finditer(rf"\b{re.escape(base)}\s*\[([^\[\]]*)\]",
                                                             source.line_text(line).split("//", 1)[0])]
            rest = list(dict.fromkeys(e for e in every if not _own_index(source, line, e)))
            if len(set(every)) > 1 and len(rest) == 1:
                k = rest[0]
        names = _thread_names(kernel, args, fault, block_dim, grid_dim)
        if found and line:  # (of the line's uses of the array, `t[y][x] - t[y - 1][x]`, the one that faulted)
            uses = [re.findall(r"\[([^\[\]]*)\]", m.group(1)) for m in re.finditer(
                rf"\b{re.escape(base)}\s*((?:\[[^\[\]]*\]\s*)+)", source.line_text(line).split("//", 1)[0])]
            faulted = [u[fault.count].strip() for u in uses if len(u) > fault.count
                       and _index_value(u[fault.count], names, source, line) == index]
            if faulted and k not in faulted:
                k = faulted[0]
        hint = (_printf_string_hint(source, line, name, index, length, fault.element_bytes or 1)
                or _stride_from_the_size(source, line, k, name, index, length)
                or _index_hint(source, line, index, length, k if found else None)
                or f"Guard the access (`if ({k} < {length})`; an index computed from data, a bin or a slot, needs its "
                   f"values out of range clamped or skipped), or make the array as large as the indices that reach "
                   f"it (e.g. [blockDim.x] elements when each thread has one: a #define or template constant)."
                   + _reach_of_own_index(source, line, k, block_dim or (1, 1, 1), length))
        offset = re.fullmatch(r"\w+\s*\+\s*(\d+)", k)
        constant = _same_for_every_thread(k, source.constants)
        if hint.startswith("Guard the access") and (constant or offset and int(offset.group(1)) >= length):
            # `t[B + 1][tx]` of `t[B + 1][B + 2]`, `s[t + 128]` of `s[128]`: no thread's guard would be true
            hint = (f"No thread can reach {name}{'[...]' * fault.count}[{k}] inside the array: "
                    + (f"{k} is {index} for every thread" if constant else f"{k} is {length} or more for every thread")
                    + f", and that dimension has {length} elements. Make the array as large as the indices that reach "
                    "it (a halo needs its extra rows and columns in the declaration), or fix the index.")
        halo = re.fullmatch(r"threadIdx\.([xyz])\s*\+\s*(\d+)", k)
        if halo and hint.startswith("Guard") and block_dim and length == block_dim["xyz".index(halo.group(1))]:
            # `tile[ty + 1][tx + 1]` of a tile as large as the block: no room for the halo
            r = int(halo.group(2))
            hint = (f"`{k}` reaches {length - 1 + r} in the block's last thread, and that dimension of {name} has "
                    f"{length} elements, one a thread: a tile with a halo of {r} needs {length} + {2 * r} elements there "
                    f"({r} on each side), as in `[{length} + {2 * r}]` (a #define such as `TILE + 2 * R`).")
        declared = re.search(rf"__shared__[^;]*?\b{re.escape(base)}\s*((?:\[[^\]]*\]\s*)+)", source.text)
        dims = [d.strip() for d in re.findall(r"\[([^\]]*)\]", declared.group(1))] if declared else []
        dim = dims[fault.count] if len(dims) > fault.count else None
        neighbour = re.fullmatch(r"threadIdx\.([xyz])\s*\+\s*([A-Za-z_]\w*)", k)
        radius = re.search(r"\+\s*2\s*\*\s*([A-Za-z_]\w*)", dim or "")
        if neighbour and radius and hint.startswith("Guard") and index >= 1 << 31:
            # `tile[threadIdx.y + j]`, j from -R, of `tile[TILE + 2 * R]`: the halo's offset left out
            r = radius.group(1)
            hint = (f"`{k}` is {index - (1 << 32)} for this thread (threadIdx is unsigned, so the sum wraps round to "
                    f"{index}): {name} has a halo of {r} on each side (`[{dim}]`), so a thread's own element is at "
                    f"threadIdx.{neighbour.group(1)} + {r}, and its neighbour {neighbour.group(2)} away at "
                    f"`threadIdx.{neighbour.group(1)} + {r} + {neighbour.group(2)}`: add the halo's {r}.")
        loop = re.fullmatch(r"[A-Za-z_]\w*", k) and line and re.search(
            rf"\bfor\s*\([^;]*\b{re.escape(k)}\s*=[^;]*;\s*{re.escape(k)}\s*<\s*([^;]+?)\s*;",
            "\n".join(source.line_text(n) for n in range(max(1, line - 8), line + 1)))
        if loop and dim and hint.startswith("Guard") and re.sub(r"\s+", "", loop.group(1)) != re.sub(r"\s+", "", dim):
            # `for (dx = threadIdx.x; dx < TILE + 2 * R; dx += TILE)` into `tile[TILE][TILE]`: declared too small
            hint = (f"`{k}` runs while `{k} < {loop.group(1)}` (its loop), past the {length} elements that dimension of "
                    f"{name} was declared with (`[{dim}]`): declare {name} as large as the loop goes, "
                    f"`[{loop.group(1)}]` (a tile with its halo), or stop the loop at the dimension.")
        # `s[t]`, t = threadIdx.x, of an array with fewer elements than the launch's block has threads (a template's
        # BLOCK of 128 launched with 256): the block and the array disagree; no guard is meant
        own = _own_index(source, line, k)
        axis = own.group(1) if own else "x"
        threads = block_dim["xyz".index(axis)] if block_dim else 0
        if own and hint.startswith("Guard") and index == length < threads:
            hint = ((f"`{k}` runs" if k.startswith("threadIdx") else f"`{k}` is threadIdx.{axis}, which runs")
                    + f" to {threads - 1} in this launch's blocks ({threads} threads along {axis}), but {name} has "
                    f"{length} elements there, one a thread: launch blocks of at most {length} threads along {axis}, or "
                    f"declare {name} with as many elements as a block has threads (one #define or template constant "
                    f"for both), or, if only the first {length} threads should use it, guard the access: "
                    f"`if ({k} < {length})`.")
        # `s[t + blockDim.x]` of `s[BLOCK]`: each thread's second element (a reduction that loads two a thread)
        second = re.fullmatch(r"(\w+)\s*\+\s*blockDim\.([xyz])", k)
        if second and hint.startswith("Guard") and block_dim and length == block_dim["xyz".index(second.group(2))] \
                and _own_index(source, line, second.group(1)):
            hint = (f"`{k}` is each thread's second element, from {length} to {2 * length - 1} in this launch's "
                    f"blocks, but {name} has {length} elements, one a thread: with two elements a thread it needs "
                    f"2 * {length} = {2 * length} (`[2 * BLOCK]`).")
        made = _from_block_index(source, line, k) if fault.op == 1 and found and hint.startswith("Guard") else None
        if made:  # `s[i]` with i = blockIdx.x * blockDim.x + threadIdx.x: a grid-wide index into a block's array
            at, text = made
            where = "" if at == line else f" (line {at}: `{text}`)"
            hint = (f"`{k}` counts threads across the whole grid{where}, but each block has its own {name}, with "
                    f"{length} elements: index it with the thread's place in its block, `{name}[threadIdx.x]` "
                    "(`threadIdx.y * blockDim.x + threadIdx.x` in 2-D), and keep the grid-wide index for the arrays "
                    "in global memory.")
        if hint.startswith("Guard") and (let := _guard_lets_through(source, line, k, name, index, length, names, thread)):
            hint = let  # (`if (t < k) tile[32 + t]`: the guard the line has lets one index too many through)
    elif kind == RACE:
        other = _xyz(fault.other_thread)
        element = _shared_element(fault, source, line)
        other_chain = module.lines_at(fault.address)
        helper = None  # (name, lines that call it): the function both accesses lie in, called from more than one line
        if len(other_chain) == 1 and len(chain) > 1 \
                and (body := _function_body(source.text, other_chain[0])) is not None \
                and body == _function_body(source.text, chain[0]):
            # The other access's callers are not recorded (only its own line): in the function this
            # thread is in, it came through the same call (warpReduce's lines, called at line 16),
            # unless the function is called from several lines (block_sum(s) then block_sum(q)).
            helper = _callers_of(source.text, body)
            if helper is None or len(helper[1]) < 2:
                other_chain, helper = other_chain + chain[1:], None
        other_line = other_chain[0] if other_chain else None
        verbs = {1: ("reads", "read"), 2: ("writes", "wrote"), 3: ("atomically updates", "atomically updated")}
        first, second = verbs.get(fault.other_op, ("uses", "used"))[1], verbs.get(fault.op, ("uses", "used"))[0]
        at_other = f"line {other_line}{_called_at(other_chain)}" if other_line else "another line"
        if helper:
            at_other = f"line {other_line} (in {helper[0]}, which lines {_and(helper[1])} call)"
        at_mine = f"line {line}{_called_at(chain)}"
        what = (f"has a data race on shared memory {element}: thread {other} {first} it at {at_other}, and thread "
                f"{thread} {second} it at {at_mine}, with no __syncthreads() between them, so the result "
                "depends on which thread runs first")
        read_first = fault.mask == 1 and fault.other_op == 1  # the reader ran before any thread wrote it
        if read_first:
            what = (f"has a data race on shared memory {element}: thread {other} read it at {at_other} before "
                    f"thread {thread} wrote it at {at_mine}, with no __syncthreads() between them, so thread "
                    f"{other} got whatever shared memory held, not the value")
        # Where a barrier can go: in the kernel's own body, so at the lines that called a helper (unless
        # both accesses lie in one call of it: then inside the helper).
        accessed_at = line, other_line
        if chain and other_chain and chain[-1] != other_chain[-1] and not helper:
            line, other_line = chain[-1], other_chain[-1]
        if read_first and other_line and line:
            place = (f"between line {line}, where thread {thread} writes `{element}`, and line {other_line}, where "
                     f"thread {other} reads it" if line < other_line else
                     f"after line {line}, where thread {thread} writes `{element}`, and before thread {other} reads "
                     f"it at line {other_line}" + (" (at the end of the loop's body)" if _in_one_loop(
                         source.text, other_line, line) else ""))
        elif other_line and line:
            place = (f"between line {other_line}, where thread {other} {verbs.get(fault.other_op, ('uses',))[0]} "
                     f"`{element}`, and line {line}, where thread {thread} {second} it")
            between = source.lines[other_line:line - 1] if other_line < line else []
            start = kernel.line if 0 < kernel.line <= min(line, other_line) else 1
            in_loop = _in_one_loop(source.text, min(line, other_line), max(line, other_line), start)
            # a barrier on its own line: __syncthreads(), __syncwarp(), or a thread block's .sync() (not a tile's)
            groups = "|".join(map(re.escape, _block_groups(source.text))) or "(?!)"
            barrier_calls = rf"__syncthreads\s*\(|__syncwarp\s*\(|(?:{groups})\s*\.\s*sync\s*\("
            barrier = re.compile(rf"^\s*({barrier_calls})")
            loop = _innermost_loop(source.text, min(line, other_line), max(line, other_line), start)
            # The path from the earlier access to this one round the loop's back edge (the rest of the
            # body, then its start): a barrier on it means both accesses came in one pass through the body.
            around = (source.lines[other_line:loop[1]] + source.lines[loop[0]:line - 1]
                      if loop and other_line >= line else [])
            # (a loop written on one line, `for (...) { s[t] += s[t - o]; __syncthreads(); }`: its barrier is on it,
            # after the accesses, which so race in one pass; not where the accesses lie on both sides of it,
            # `{ s[t] = x[t]; __syncthreads(); y[t] = s[63 - t]; }`: those race across passes)
            text = source.line_text(line) or ""
            on_line = re.search(barrier_calls, text)
            array_name = re.escape(_array_of(element))
            mentions = [m.start() for m in re.finditer(rf"\b{array_name}\b", text)]
            same_line_barrier = other_line == line and on_line and not (
                any(m < on_line.start() for m in mentions) and any(m > on_line.start() for m in mentions))
            if other_line >= line and in_loop and (any(barrier.match(text) for text in around) or same_line_barrier):
                present = verbs.get(fault.other_op, ("uses",))[0]
                place = (f"between line {line}, where thread {thread} {second} `{element}`, and line {other_line}, "
                         f"where thread {other} {present} it, in the same pass through the loop (thread {other} "
                         "got there first)")
                if other_line == line:  # `XY[t] += XY[t - stride]` after a barrier at the loop's top
                    place = (f"inside line {line}: thread {other} {first} `{element}` there while thread {thread} "
                             f"{second} it in the same pass through the loop. Read the value into a variable, "
                             "then __syncthreads(), then write")
            elif other_line == line and in_loop:  # `if (t < stride) s[t] += s[t + stride];` with no barrier
                place = (f"at the end of the loop's body, after line {line} (thread {other} "
                         f"{verbs.get(fault.other_op, ('uses',))[0]} `{element}` there and thread {thread} {second} "
                         "it, and no barrier orders one pass through the loop before the next)")
            elif other_line >= line and in_loop:
                place += " (the next time round the loop: put the barrier at the end of the loop's body)"
            elif other_line != line and not in_loop and (
                    calls := helper if helper and any(barrier.match(text) for text in between)
                    else _called_again(source.text, min(line, other_line), max(line, other_line), barrier)):
                # A barrier stands between the two lines already, in a function called twice (from two lines, or
                # from one: `a = block_sum(x), b = block_sum(y);`): the two accesses were in different calls.
                place = (f"after line {max(line, other_line)}, before {calls[0]} returns (or between its calls, at "
                         f"line{'s' * (len(calls[1]) > 1)} {_and(calls[1])}): there is a barrier between line "
                         f"{min(line, other_line)} and line {max(line, other_line)} already, but thread {other} "
                         f"{first} `{element}` at line {other_line} and thread {thread} {second} it at line {line} in "
                         f"different calls of {calls[0]}, with no barrier between the two calls")
            elif other_line > line:
                # No loop: the other thread simply ran ahead to the later line before this one got here.
                present = verbs.get(fault.other_op, ("uses",))[0]
                place = (f"between line {line}, where thread {thread} {second} `{element}`, and line {other_line}, "
                         f"where thread {other} {present} it (thread {other} got there first)")
            elif in_loop and any(barrier.match(text) for text in between):
                # A barrier stands between the two lines already: the first thread went round the loop
                # again before the second had finished with the element (a tile refilled too early).
                done = {1: "read", 2: "written"}.get(fault.op, "used")
                place = (f"at the end of the loop's body, {_end_of_body(source, loop, line)}: there is a barrier "
                         f"between line "
                         f"{other_line} and line {line} already, but thread {other} went round the loop again and "
                         f"{first} `{element}` at line {other_line} before thread {thread} had {done} it at line "
                         f"{line}")
        else:
            place = "between the two accesses"
        # One statement (one call of a helper), run by both threads in the same step, not in a loop: no barrier
        # goes inside it
        one_statement = bool(line and line == other_line and chain == other_chain and place.startswith("between line")
                             and not _in_one_loop(source.text, line, line,
                                                  kernel.line if 0 < kernel.line <= line else 1))
        spelling = _block_sync_spelling(source.text, line)
        hint = (f"Add __syncthreads(){spelling} {place}, where every thread of the block reaches it (not inside an "
                "if). ")
        skipped = next((n for n in range(min(line, other_line) + 1, max(line, other_line))
                        if re.search(r"__syncthreads\s*\(", source.line_text(n).split("//", 1)[0])
                        and ((block := _if_block_lines(source.text, n))
                             and (block[0] <= line <= block[1]) != (block[0] <= other_line <= block[1])
                             # `if (threadIdx.x == 0) __syncthreads();`: an if of one line, the barrier its body
                             or re.search(r"\bif\s*\((?:[^()]|\([^()]*\))*\)\s*__syncthreads\s*\(",
                                          source.line_text(n).split("//", 1)[0]))), None) \
            if line and other_line and not helper and len(chain) == 1 and len(other_chain) == 1 and not (
                _in_one_loop(source.text, min(line, other_line), max(line, other_line),
                             kernel.line if 0 < kernel.line <= min(line, other_line) else 1)) else None
        branches = line and other_line and line != other_line and not helper and not any(
            re.search(r"__sync(?:threads|warp)\s*\(", source.line_text(k).split("//", 1)[0])
            for k in range(min(line, other_line), max(line, other_line) + 1)) and any(
            re.match(r"\s*(?:\}\s*)?else\b", source.line_text(k)) for k in range(min(line, other_line) + 1,
                                                                               max(line, other_line) + 1))
        if branches and not skipped:  # `if (t >= off) s[pout..] = s[pin..] + ...; else s[pout..] = s[pin..];`
            hint = (f"Lines {min(line, other_line)} and {max(line, other_line)} are the two branches of one if/else, "
                    f"which threads take in the same step, so no barrier can go between them: thread {other} "
                    f"{first} `{element}` in one branch while thread {thread} {second} it in the other. Each step must "
                    "read from one array (or half of one) and write to another: with a double buffer, check that the "
                    "half read and the half written differ in every pass (`pout = 1 - pout; pin = 1 - pout;`), or "
                    "read the values into variables, __syncthreads(), then write. ")
        if skipped:  # `if (r < M && c < N) { tile[..] = ...; __syncthreads(); }`: the barrier is there, in the if
            who = f"thread {other}" if read_first else "one of the two threads"
            what = what.replace("with no __syncthreads() between them", "with no __syncthreads() between them that both "
                                "threads reached")
            hint = (f"There is a __syncthreads() at line {skipped}, between the two lines, but it runs under a condition "
                    f"(an if, or after a return) that {who} did not meet, so it went on without waiting. Every thread "
                    f"of a block must reach each __syncthreads(): move the barrier out of the if, where every thread "
                    f"passes, and guard only the work. ")
        if "loop" in place and other_line and line and (
                varying := _thread_varying_loop(source, min(line, other_line), max(line, other_line), kernel)):
            at, condition = varying
            hint += (f"The loop at line {at} runs a number of times that depends on the thread (`{condition}`), so "
                     "a barrier inside it is not reached by every thread the same number of times: give the loop "
                     "the same count in every thread of the block (its largest, or whole tiles) and guard only the "
                     "work inside. ")
        body = _function_body(source.text, line) if line else None  # (the kernel's or helper's own code)
        warp_synced = body and re.search(r"\b__syncwarp\s*\(\s*\)", without_comments(source.text[body[0]:body[1]]))
        if _same_warp(fault, block_dim) and 3 not in (fault.op, fault.other_op) and warp_synced:
            # a kernel whose warps work apart, each ordering its lanes with __syncwarp(): that is the barrier missing
            what = what.replace("with no __syncthreads() between them", "with no __syncwarp() (or __syncthreads()) "
                                "between them")
            hint = (f"Add __syncwarp() {place.replace('__syncthreads()', '__syncwarp()')}: threads {other} and "
                    f"{thread} are lanes of one warp, and the kernel "
                    "orders a warp's lanes with __syncwarp() elsewhere (__syncthreads() would do too, where every "
                    "thread of the block reaches it).")
            if line and other_line and (skipped := _skipped_sync(source, min(line, other_line), max(line, other_line))):
                # `if (threadIdx.x < 16) __syncwarp();`: there is one between, but not every lane reaches it
                at, governed = skipped
                hint = (f"The __syncwarp() at line {at} lies between the two accesses, but inside the if at line "
                        f"{governed}, which some lanes of the warp skip (thread {thread} or {other}): __syncwarp() "
                        "orders the lanes of its mask (all 32 by default) only when every one of them reaches it. "
                        "Call it outside the if, where every lane of the warp passes.")
        elif _same_warp(fault, block_dim) and 3 not in (fault.op, fault.other_op) and not _shared_across_warps(
                source, _array_of(element), line, other_line, block_dim) \
                and not hint.startswith("There is a __syncthreads()"):  # (the barrier is there: out of its if)
            # (not beside an atomic update: the read waits for every thread's update, of every warp)
            # both lines in one braced if block (`if (t < 32) { ... }`: a warp's own steps), the barrier's place too
            blocks = {_if_block_lines(source.text, n) for n in (line, other_line)} if line and other_line else {None}
            if len(blocks) == 1 and None not in blocks and "loop's body" not in place \
                    and hint.startswith("Add __syncthreads()"):
                hint = (f"Add __syncwarp() {place.replace('__syncthreads()', '__syncwarp()')}: threads {other} and "
                        f"{thread} are lanes of one warp, and both lines run inside an if that not every thread of the "
                        "block enters, where a __syncthreads() cannot go (every thread of the block must reach each "
                        "one).")
            else:
                hint += _SYNCWARP_IS_ENOUGH
            if line and other_line and (call := _warp_call_between(source.text, min(line, other_line),
                                                                   max(line, other_line))):
                at, name = call
                hint += (f" The {name}() at line {at}, between the two, waits for the lanes but orders no memory: a "
                         "shuffle, a vote or a match exchanges values in registers, and only __syncwarp() (or "
                         "__syncthreads()) makes one lane's store visible to another lane's load.")
        elif "__syncwarp" in source.text:  # (the two threads are lanes of different warps)
            hint += (f"__syncwarp() orders only the lanes of one warp, and threads {thread} and {other} are in "
                     "different warps.")
        elif tile := re.search(r"\b(\w+)\s*=\s*(?:cg::|cooperative_groups::)?tiled_partition\s*<\s*(\d+)\s*>",
                               source.text):
            if re.search(rf"\b{re.escape(tile.group(1))}\s*\.\s*sync\s*\(", source.text):
                hint += (f"{tile.group(1)}.sync() orders only the {tile.group(2)} threads of one tile, and threads "
                         f"{thread} and {other} are in different tiles.")
        hint = hint.rstrip()
        if line and other_line and _same_warp(fault, block_dim) and (masked := _mask_leaves_out(
                source, min(line, other_line), max(line, other_line), (fault.thread, fault.other_thread), block_dim)):
            hint = masked  # `__syncwarp(0x0000ffff)` between, where the mask leaves out the writing lane
        if one_statement:  # `Comparator(s[pos], s[pos + stride])` with pairs that overlap
            hint = (f"Both accesses are at line {line}{_called_at(chain)}, in one step that threads {other} and "
                    f"{thread} run at the same time, so no barrier can go between them. If each thread should have "
                    f"elements of its own in a step (a compare-and-swap of a pair), check how the index is computed: "
                    f"both threads reach `{element}`. If a thread reads a neighbour's element (a scan's `x[t] += "
                    "x[t - stride]`), read it into a variable, then __syncthreads(), then write.")
        line, other_line = accessed_at
        overlap = _overlapping_carves(source, line, other_line) if fault.op == 2 == fault.other_op else None
        if overlap:  # `float* a = sm; float* b = sm + blockDim.x / 2;`: a barrier would hide a wrong layout
            hint = overlap
        elif handover := _flag_handover(source, line if fault.op == 1 else other_line, _array_of(element)):
            hint = handover
        array = re.match(r"\w+", element)
        # (a line that accesses two elements of the array: itself, or the call of a helper that holds it)
        neighbours = bool(array and line and any(len(re.findall(rf"\b{array.group(0)}\s*\[", source.line_text(at))) >= 2
                                                 for at in (line, *(chain[-1:] if one_statement else ()))))
        text = source.line_text(line) if line else ""
        stores_only = fault.op == 2 and not _UPDATE.search(text)
        if other_line == line and not neighbours and array and _kept_by_hand(array.group(0), text, text) \
                and {fault.op, fault.other_op} <= {1, 2}:  # `if (v > m) m = v;`, `m = fmaxf(m, v)`
            hint = (f"If the threads mean to keep the largest (or smallest) value in `{element}`, no barrier can "
                    f"help. {_by_hand_maximum(element)} Or let each thread keep its own and reduce them after a "
                    f"__syncthreads(). Otherwise: {hint[0].lower()}{hint[1:]}")
        elif other_line == line and fault.other_op == 2 and stores_only and not neighbours:
            # `s[t / 2] = x[t]`: two plain stores of one element, in one statement
            hint = (f"Two threads store into `{element}` at line {line}, so which value stays depends on their "
                    "order: if each element should have one writer, check how the index is computed; if one value "
                    f"should win, choose it on purpose (one writer thread, or atomicMax(&{element}, v)).")
        elif other_line and other_line != line and fault.other_op == 2 and stores_only \
                and not _UPDATE.search(source.line_text(other_line)) and not overlap and not handover:
            # `keys[posA] = a;` and `keys[posB] = b;` (a merge, a scatter): a barrier only picks the survivor
            hint += (f" If instead each element should get one writer here (threads storing to places they compute, "
                     f"as a scatter or a merge does), a barrier would only decide which value stays: check how the "
                     f"indices are computed, since both threads reached `{element}`.")
        elif other_line == line and fault.other_op == 2 and not neighbours and 0 < fault.element_bytes < 4:
            # `unsigned char h[256]; h[b]++`: CUDA has no 8- or 16-bit atomicAdd
            hint = (f"If the threads mean to add into the same `{element}` (a count), no barrier can help, and "
                    f"CUDA has no atomicAdd for {8 * fault.element_bytes}-bit integers: count in an array of int "
                    f"or unsigned int (`__shared__ unsigned int {array.group(0) if array else 'counts'}"
                    "[...]`) with atomicAdd, and narrow the counts when you store them. Otherwise: "
                    f"{hint[0].lower()}{hint[1:]}")
        elif other_line == line and fault.other_op == 2 and not neighbours and array and _UPDATE.search(text) \
                and (data := _data_destination(source, line, array.group(0))):
            # `local[data[i]] += 1` (a privatized histogram by hand): the index is read from data
            hint = (f"The index comes from data, `{data}`: threads that read the same value there update the same "
                    f"element, as a histogram's do, and one update is lost. No barrier can help: make the update "
                    f"atomic, `atomicAdd(&{array.group(0)}[{data}], 1)` (or the value to add); atomics on shared "
                    "memory are fast, which is why a histogram counts there first.")
        elif other_line == line and fault.op == fault.other_op == 2 and array \
                and (own := _thread_own_index(source, line, array.group(0))):
            # `buf[idx] = v; idx++;` with `int idx = 0;` in every thread: all threads fill the same slots
            index, declared = own
            name = array.group(0)
            hint = (f"`{name}[{index}]` is indexed by `{index}`, each thread's own variable (line {declared}), which "
                    f"starts at the same number in every thread: so all the threads store into the same elements of "
                    f"{name}, and at each one value is lost. Give each thread its own part, `{name}[threadIdx.x * K "
                    f"+ {index}]` (K: the most elements one thread stores), or take each slot from one count the "
                    f"block shares: `{name}[atomicAdd(&count, 1)] = ...;` (a __shared__ int count set to 0, then "
                    "__syncthreads(), before).")
        elif other_line == line and fault.other_op == 2 and not neighbours:
            # one statement, run by several threads, that updates one element: `sum += x`, `count++`
            # (not `XY[t] += XY[t - stride]`, where each thread reads a neighbour's element)
            hint = (f"If the threads mean to add into the same `{element}` (a sum, a counter), no barrier can "
                    f"help: use atomicAdd(&{element}, value), or let each thread keep its own partial "
                    f"result and reduce them after a __syncthreads(). Otherwise: {hint[0].lower()}{hint[1:]}")
        if _in_a_lock(source, chain or [line]) and {fault.op, fault.other_op} <= {1, 2}:  # a total kept in a lock
            hint = _LOCK_HINT.format(element=element, fence="__threadfence_block()")
        steps = other_line == line or (line and other_line and all(  # (or two steps of the unrolled warp)
            re.search(r"(\w+)\s*\[[^\]]*\]\s*\+?=.*\b\1\s*\[", source.line_text(n)) for n in (line, other_line)))
        if steps and {fault.op, fault.other_op} <= {1, 2} and _same_warp(fault, block_dim):
            # `v[tid] += v[tid + 16]` by the lanes of one warp (the unrolled last warp of old reductions):
            # an array read twice on the line, through a volatile alias or beside __syncwarp (not a
            # block-wide scan's step)
            subscripted = re.findall(r"\b(\w+)\s*\[", source.line_text(line))
            # (an array the line writes, the race's or an alias of it, `v[tid] += v[tid + 16]` through `volatile int*
            # v = data`: not `for (e = row[u]; e < row[u + 1]; ++e) acc[col[e]] += 1`, a scatter that only reads row)
            step_text = source.line_text(line).split("//", 1)[0]
            twice = [n for n in dict.fromkeys(subscripted) if subscripted.count(n) >= 2 and re.search(
                rf"\b{re.escape(n)}\s*\[[^\]]*\]\s*[-+*/|&^]?=(?!=)", step_text)]
            start = max((n for n in range(1, line + 1) if re.search(r"__global__|__device__", source.line_text(n))),
                        default=1)
            function_text = "\n".join(source.line_text(n) for n in range(start, line + 1))
            # (or steps of a fixed width within a warp, `s[t] += s[t + 16];` ... `s[t] += s[t + 1];`, which
            # copied without their volatile)
            fixed = bool(twice) and all(re.search(rf"\b{re.escape(twice[0])}\s*\[\s*\w+\s*\+\s*(?:[1-9]|[12]\d|3[0-2])\s*\]",
                                                  source.line_text(n) or "") for n in (line, other_line))
            # (fixed steps count as a warp's only where one warp runs them: `if (tid < 32)`, a block of one
            # warp; `s[i] += s[i + 1]` run by every thread of a larger block is a block-wide step)
            one_warp = block_dim[0] * block_dim[1] * block_dim[2] <= 32 or _ONE_WARP_GUARD.search(source.text)
            if twice and ("__syncwarp" in source.line_text(line) or (fixed and one_warp)
                          or re.search(rf"\bvolatile\b[^;]*\b{re.escape(twice[0])}\b", function_text)):
                run = ("this line as a warp-synchronous step" if other_line == line else
                       f"lines {min(line, other_line)} and {max(line, other_line)} as warp-synchronous steps, with no "
                       "__syncwarp() between them")
                hint = (f"Both threads are in one warp, running {run}: the lanes of a warp do not run in lockstep "
                        f"(since Volta), and `volatile` does not order them. {_WARP_STEP_FIX}")
        pair = _array_of(element)
        stores = len(re.findall(rf"\b{re.escape(pair)}\s*\[[^\]]*\]\s*=(?!=)", source.line_text(line).split("//", 1)[0])) \
            if line and pair else 0
        if line and other_line == line and stores >= 2 and {fault.op, fault.other_op} <= {1, 2}:
            # `if (s[i] > s[i + 1]) { t = s[i]; s[i] = s[i + 1]; s[i + 1] = t; }`: a compare-and-swap of a pair, run by
            # two threads whose pairs share an element (odd-even sort with a thread per element, bitonic without its
            # `ixj > tid`): no barrier or warp-level step fixes that, the pairs must not overlap
            hint = (f"Line {line} compares and swaps a pair of elements, and threads {other} and {thread} both reach "
                    f"`{element}`: their pairs overlap, so in one step two threads swap the same element. Give each "
                    "element to one pair per step and let one thread work each pair: odd-even sort with a thread per "
                    "pair (`i = 2 * tid + (phase & 1)`, n / 2 threads), bitonic sort with only the thread whose partner "
                    "lies above it (`if (ixj > tid)`); keep the __syncthreads() between the steps.")
        if {fault.op, fault.other_op} == {2, 3}:  # a plain store beside another thread's atomic
            atomic_line, store_line = (line, other_line) if fault.op == 3 else (other_line, line)
            hint = (f"Other threads update `{element}` with atomics (line {atomic_line or '?'}), and a plain store "
                    f"(line {store_line or '?'}) in the same barrier interval can land between their updates or be "
                    "lost. If the store must come before or after all of them (a reset, a final value), put "
                    f"__syncthreads() between; if it is part of the same protocol (a clamp, a flag), make it atomic "
                    f"too: atomicExch(&{element}, v), or atomicMin/atomicMax.")
        if {fault.op, fault.other_op} <= {1, 2} and (appended := _appended_by_hand(source, line, _array_of(element))):
            hint = _append_hint(*appended, shared=True)  # `local[count] = v; count++;` with a __shared__ count
        copies = [n for n in (line, other_line) if n and "memcpy_async" in source.line_text(n)]
        if copies:  # the group's copy, read before cg::wait
            hint = (f"The copy that memcpy_async starts at line {copies[0]} is finished only after "
                    "cooperative_groups::wait(group) (or wait_prior): call it after the copy and before any thread "
                    "reads or overwrites the destination.")
        if fault.mask == 11:  # runtime.h: a copy that no cg::wait has waited for, barriers or not
            what = (f"{'reads' if fault.op == 1 else 'writes'} shared memory {element} at {at_mine}, which the "
                    f"cg::memcpy_async at {at_other} is still copying: no cg::wait has waited for that copy, and on a "
                    "GPU (sm_80 and later) it lands in the background, so a __syncthreads() does not order it")
            hint = (f"Call cg::wait(group) after the memcpy_async at line {other_line or '?'} and before the "
                    "destination is used (a __syncthreads() does not wait for an asynchronous copy); with several "
                    "copies in flight (double buffering), cg::wait_prior<N>(group) waits for all but the newest N: "
                    "use only the buffers of the copies it has waited for.")
            if "wait_prior" in source.text:
                hint += (" On the last pass, where no newer copy was started, wait_prior<N> leaves the last ones in "
                         "flight: wait for all there (`if (t + 1 < tiles) cg::wait_prior<1>(g); else cg::wait(g);`).")
    elif kind == UNINITIALIZED:
        element = _shared_element(fault, source, line)
        what = (f"reads shared memory {element}, which no thread of block {block} has written in this launch: on a GPU "
                "shared memory starts with whatever the previous block left there")
        hint = ("Write every element before any thread reads it (e.g. fill the array, then __syncthreads()), "
                "or make the reads stay within the elements the block wrote.")
        name = _array_of(element)
        writes = [number for number in _writing_lines(source, name) if number != line]
        if line:  # an array declared in the reading kernel: its writes are that kernel's (another may have its own)
            first, last = _body_lines(source, line)
            if any(re.search(rf"__shared__[^;]*\b{re.escape(name)}\s*\[", source.line_text(n))
                   for n in range(first, last + 1)):
                writes = [number for number in writes if first <= number <= last]
        writes = writes[:3]
        atomic = re.search(rf"\b(atomic\w+)\s*\(\s*&\s*{re.escape(name)}\b", source.line_text(line)) if line else None
        if not atomic and writes and all(
                (call := re.search(rf"\b(\w+)\s*\(\s*&\s*{re.escape(name)}\b", source.line_text(n)))
                and (body := _called_body(source, call.group(1))) and "atomicCAS" in body for n in writes):
            # `atomicMaxF(&m, v)`, an atomicCAS loop of the source's own, is the element's only write: it starts from
            # the value there, as an atomic does
            atomic, writes = re.search(rf"\b(\w+)\s*\(\s*&\s*{re.escape(name)}\b", source.line_text(writes[0])), []
        if atomic and not writes and not fault.address:  # `atomicAdd(&bins[v], 1)` into bins never set to 0
            size = (_shared_extents(source, name) or [None])[0]
            hint = (f"{atomic.group(1)} starts from the value the element holds, and shared memory holds none at "
                    f"the start of a block (it is not zeroed): set every element first, e.g. `for (int k = "
                    f"threadIdx.x; k < {size or 'count'}; k += blockDim.x) {name}[k] = 0;` "
                    "then __syncthreads(), before the atomics.")
            if element == name and not size:  # `__shared__ int count;`: one value, set by one thread
                hint = (f"{atomic.group(1)} starts from the value `{name}` holds, and shared memory holds none at the "
                        f"start of a block (it is not zeroed): set it first, `if (threadIdx.x == 0) {name} = 0;` then "
                        "__syncthreads(), before the atomics.")
        elif writes and not fault.address:  # where the element should have come from: which threads reach it
            at = _and([f"line {number} (`{source.line_text(number)}`)" for number in writes])
            hint += (f" The kernel writes {name} at {at}: check which threads of the block reach "
                     f"{'that write' if len(writes) == 1 else 'those writes'} and which elements they write; "
                     f"none wrote {element}.")
            sizes = [p.name for p in kernel.params if not p.pointer]  # (`n`, `rows`: a bound on the data)
            guarded = [number for number in writes if re.match(r"\s*if\s*\(", source.line_text(number))
                       and any(re.search(rf"[<>]=?\s*{re.escape(size)}\b", source.line_text(number)) for size in sizes)
                       and not re.match(r"\s*(\}\s*)?else\b", source.line_text(number + 1) if number < len(source.lines)
                                        else "")]
            if len(guarded) == len(writes):  # `if (row < n && ...) As[ty][tx] = A[...];` with no else: a tile's edge
                hint += (f" Where the if at line {guarded[0]} is false the element gets no value, yet it is read: store "
                         f"a value there too (0 for a tile past the matrix's edge: `{name}[...] = cond ? ... : 0.0f;`, "
                         "or an else).")
        if not fault.address and (unsynced := _unsynced_writer(source, element, writes, line, fault.thread, block_dim,
                                                                _thread_names(kernel, args, fault, block_dim, grid_dim))):
            hint = unsynced
            what = (f"reads shared memory {element} before any thread of block {block} has written it: on a GPU it "
                    "then holds whatever the previous block left there")
        elif not fault.address and (halo := _halo_hint(source, element, block_dim)):
            hint = halo
        elif not fault.address and (few := _too_few_writers(source, element, writes, block_dim)):
            hint = few
        if fault.address and fault.other_op == 2:  # it holds a local variable's value that it never had
            copy_line = module.line_of(fault.address)
            what = (f"reads shared memory {element}, which thread {_xyz(fault.other_thread)} set"
                    + (f" at line {copy_line}" if copy_line else "") + " to the value of a local variable that had "
                    "none: on that thread's path nothing was stored in the variable before it was read (a sanitized "
                    "launch fills such a variable with the bytes 0xFE; on a GPU it holds whatever its register held)")
            hint = (f"Storing it is harmless while no thread reads the element (line {copy_line or '?'}), but this "
                    "read uses the garbage: give the variable a value on every path (an initial value where it is "
                    "declared, `float v = 0.0f;`, or an `else` after the if that sets it), or read only elements "
                    "that hold values.")
        elif fault.address:  # it holds a copy (`s[i] = t[j];`) of an element no thread had written
            copy_line = module.line_of(fault.address)
            what = (f"reads shared memory {element}, which thread {_xyz(fault.other_thread)} set"
                    + (f" at line {copy_line}" if copy_line else "") + " to a copy of an element that no thread of "
                    f"block {block} had written in this launch: it holds whatever the previous block left there")
            hint = (f"Copying an element no thread wrote is harmless (line {copy_line or '?'}), but the copy holds no "
                    "value: write the element before it is copied, or read only copies of elements the block wrote.")
    elif kind == GLOBAL_RACE:
        name, elements, itemsize = arrays.get(fault.base, ("an argument array", 0, 0))
        other, other_block = _xyz(fault.other_thread), _xyz(fault.other_block)
        other_chain = module.lines_at(fault.address)
        other_line = other_chain[0] if other_chain else None
        who = f"thread {other}" + (f" of block {other_block}" if other_block != block else "")
        at = f" at line {other_line}{_called_at(other_chain)}" if other_line else ""
        element = f"{name}[{index}]"
        if itemsize and 0 < fault.element_bytes < itemsize:  # a member of a struct element: ps[3].vel[1]
            byte = index * fault.element_bytes
            element = _with_member(f"{name}[{byte // itemsize}]", source, line, byte % itemsize)
        device_variable = name in source.globals and name not in source.global_arrays  # __device__ float total;
        if device_variable and element.startswith(f"{name}[0]"):
            element = name + element[len(name) + 3:]  # total, st.count
        # 1 read, 2 write, 3 atomic; 6 the read of `x += v`, which meets only writes: `bins[v]++` in two
        # threads is a lost update, like two plain writes
        mine, theirs = (2 if fault.op == 6 else fault.op or 2), fault.other_op or 2
        order = ("with no __syncthreads() between them" if other_block == block
                 else "and blocks run in any order")
        warp_step = fault.mask == 2 and other_block == block and _same_warp(fault, block_dim)  # volatile update, read
        if warp_step:
            order = "with no __syncwarp() (or __syncthreads()) between them"
        if fault.mask in (5, 6):  # an atomic of block scope (atomicAdd_block) and another block's atomic
            scoped_line = line if fault.mask == 5 else other_line
            call = re.search(r"\b(atomic\w+?)_block\b", source.line_text(scoped_line) if scoped_line else "")
            reference = not call and "thread_scope_block" in source.text  # cuda::atomic_ref<T, thread_scope_block>
            call = call.group(1) if call else "atomicAdd"
            scoped, device = ((f"{call}_block", f"{call} (device scope)") if not reference else
                              ("made through a cuda::atomic_ref of cuda::thread_scope_block",
                               "cuda::thread_scope_device (cuda::atomic_ref<T, cuda::thread_scope_device>)"))
            what = (f"updates {element} atomically, and so does {who}{at} in this launch, but "
                    f"{'this' if fault.mask == 5 else 'that'} update is {scoped}, atomic only among the threads of "
                    "one block: on a GPU two blocks' updates can meet, and one is lost")
            texts = [source.line_text(n) for n in (line, other_line) if n]
            if reference and any(re.search(r"\.\s*(?:store|load|wait)\s*\(", t) for t in texts) and not any(
                    re.search(r"compare_exchange|fetch_\w+|\bexchange\s*\(|\+\+|--|[-+*/|&^]=", t) for t in texts):
                # `f.store(1, release)` of a block-scope atomic_ref as a flag for another block (not an update)
                loads = re.search(r"\.\s*(?:load|wait)\s*\(", source.line_text(line) if line else "")
                what = (f"{'reads' if loads else 'uses'} {element}, "
                        f"which {who} also used{at} in this launch, as a flag between blocks, through a "
                        "cuda::atomic_ref of cuda::thread_scope_block: its loads, stores and their memory orders hold "
                        "only among the threads of one block, so on a GPU another block may see the flag late, or "
                        "before the data its release was to hand over")
            hint = (f"Use {device} for an element that threads of several blocks "
                    f"{'use' if 'as a flag between blocks' in what else 'update'}; "
                    f"{'thread_scope_block' if reference else call + '_block'} is for __shared__ memory, or for a "
                    "global element that only one block's threads touch.")
        elif mine == 2 and theirs == 2:
            what = (f"writes {element}, which {who} also wrote{at} in this launch, without an atomic: on a GPU one "
                    "of the two writes is lost")
            if fault.op == 6:
                what = (f"updates {element} (reads it and writes it back), which {who} also wrote{at} in this "
                        "launch, without an atomic: on a GPU both threads can read the same old value, and one "
                        "update is lost")
            hint = (f"If each element should have one writer, check how the index is computed: two threads reach "
                    f"{element}. If the threads mean to add into it, use atomicAdd(&{element}, value) (or atomicMax, "
                    "...).")
            n = re.escape(name)
            ticket = fault.op == 6 and line and re.search(
                rf"(\w+)\s*=\s*\(?\s*(?:\*\s*\(?\s*{n}\s*\)?|{n}\s*\[\s*0\s*\]|{n})\s*\)?\s*\+\+", source.line_text(line))
            if ticket:  # `int pos = (*count)++;`: a ticket taken by hand
                hint = (f"`{ticket.group(1)}` takes a ticket by hand: two threads can read the same old value of "
                        f"{element}, and get the same one. Make the whole update one atomic: `{ticket.group(1)} = "
                        f"atomicAdd(&{element}, 1);` gives each thread its own old value (a slot, a ticket).")
            stored = re.search(r"=\s*([A-Za-z_]\w*)\s*;", source.line_text(line) if line else "")
            total = stored and re.search(rf"\b{re.escape(stored.group(1))}\s*=\s*\w+\s*\([^;]*\)\s*\.\s*(Sum|Reduce)\s*\(",
                                         source.text)
            copy = re.search(r"\b(memset|memcpy|memmove)\s*\(", source.line_text(line) if line else "")
            if bits := _bits_into_copy(name, element, source, line):
                hint = bits
            elif copy and fault.op != 6:  # `memcpy(out + r * w, in + r * w, (w + 1) * sizeof(float))` a block
                hint = (f"The two threads' {copy.group(1)} calls write overlapping bytes: each thread's destination "
                        "(the first argument) must start at its own part, and the count (the last argument, in bytes "
                        "from that pointer on) must not reach past it: `count * sizeof(float)` for count floats.")
            elif total:  # `float s = BlockReduce(temp).Sum(v); out[blockIdx.x] = s;` from every thread
                hint = (f"`{stored.group(1)}` comes from CUB's .{total.group(1)}(), whose result is valid in thread 0 "
                        f"(lane 0 of each warp, for WarpReduce) only: store it from there, `if (threadIdx.x == 0) "
                        f"{element.split('[')[0]}[...] = {stored.group(1)};`.")
            elif fault.op == 6 and (bitwise := _bitwise_update(name, source.line_text(line) if line else "")):
                hint = (f"If each element should have one writer, check how the index is computed: two threads reach "
                        f"{element}. If the threads mean to combine bits into it (a bit set, flags), make the update "
                        f"one atomic: `{bitwise.format(element=element)};` (atomicAdd would add a bit that is set "
                        "twice).")
            elif past := _past_the_row(source, line, name, _both_threads(kernel, args, fault, block_dim, grid_dim)):
                hint = past
            elif data := _data_destination(source, line, name):
                # `bins[x[i]]++` (a histogram by hand), `out[idx[i]] = v[i]` (a scatter whose destinations repeat)
                hint = (f"The index comes from data, `{data}`: threads that read the same value there update the same "
                        f"element, as a histogram's do. Make the update atomic: `atomicAdd(&{name}[{data}], 1)` (or the "
                        "value to add)." if fault.op == 6 else
                        f"The index comes from data, `{data}`: two threads read the same destination from it (its "
                        "values repeat), and one write is lost. A scatter needs destinations that differ (a "
                        "permutation); where they may repeat, combine the values with an atomic (atomicAdd), or keep "
                        "one of them on purpose (atomicExch, atomicMax).")
            elif appended := _appended_by_hand(source, line, name):  # two threads took the same slot
                hint = _append_hint(*appended)
            elif other_block != block and (slot := _blocks_one_slot(source, line, name)):
                # `if (threadIdx.x == 0) out[0] = s[0];` (or `*c += cache[0];`) in every block: one result slot
                target, value, update = slot
                hint = ((f"Every block adds its result into `{target}` with a plain `+=`, so two blocks can read the "
                         f"same old value and one block's part is lost. Make it one atomic: `atomicAdd(&{target}, "
                         f"{value});` ({name} set to 0 before the launch).") if update else
                        (f"Every block stores its result into `{target}`, so the blocks overwrite one another and the "
                         f"last to run wins. Give each block its own element, `{name}[blockIdx.x] = {value};` ({name} "
                         f"with gridDim.x elements; add them up in a second launch or on the host), or add the "
                         f"blocks' results: `atomicAdd(&{target}, {value});` with {name} set to 0 before the launch."))
                if target.startswith("*"):
                    hint = hint.replace(f"&{target}", name)
            loop_text = " ".join(source.line_text(n) for n in range(max(1, (line or 1) - 2), (line or 0) + 1))
            if _in_a_lock(source, chain or [line]):
                hint = _LOCK_HINT.format(element=element, fence="__threadfence()")
            elif elements != 1 and other_block != block and re.search(
                    r"=[^;]*\bblockIdx\b[^;]*;[^;]*;[^)]*\+=\s*[\w.]+\s*\)", loop_text) and _block_only_step(
                    source.text, loop_text):  # (`i += blockDim.x`, or `i += stride` with `int stride = blockDim.x;`)
                # (a loop from the thread's index in the grid that steps by a block: not a block-stride loop from
                # threadIdx alone, `for (b = threadIdx.x; b < BINS; b += blockDim.x) hist[b] += h[b];`, where every
                # block is meant to reach every element: the atomicAdd above is its fix)
                hint = ("Each element should have one writer: this grid-stride loop steps by blockDim.x only, so "
                        "every block goes over the same elements. Step by blockDim.x * gridDim.x (the whole grid).")
            elif wrapped := _row_wrap(fault, block_dim, source.line_text(line) if line else "",
                                      "\n".join(source.line_text(n).split("//", 1)[0]
                                                for n in range(max(1, (line or 1) - 12), line or 1))):
                hint = wrapped
            elif other_block == block and (blockwide := _index_without_thread(source, kernel, line, name, block)):
                hint = blockwide
            elif (fault.op != 6 and other_block == block and _same_warp(fault, block_dim)
                  and re.search(r"shfl|\breduce\s*\(", source.text)):
                hint = (f"Threads {other} and {thread} are lanes of one warp, and the kernel exchanges values with warp "
                        f"shuffles: if {element} is the warp's result, only the lane that holds the whole of it "
                        "should store it (after __shfl_down_sync steps, lane 0: `if (lane == 0)`, with lane = "
                        "threadIdx.x % 32); the other lanes hold partial values. If each lane should have its own "
                        "element, check how the index is computed.")
        elif {mine, theirs} == {1, 3}:  # a plain read of what other threads update atomically, unfinished
            what = (f"reads {element}, which {who} updates atomically{at} in this launch, {order}: the read may "
                    "come before some of the updates, and the launch gives other results when it does (or with its "
                    "blocks and threads in another order), so on a GPU they depend on timing")
            if mine == 3:
                what = (f"atomically updates {element}, which {who} read{at} in this launch, {order}: the read may "
                        "come before some of the updates, and the launch gives other results when it does (or with "
                        "its blocks and threads in another order), so on a GPU they depend on timing")
            if fault.mask == 4:  # a count read back after its block's own atomic and compared
                if mine == 1:
                    what = (f"reads {element} after its block's own atomic update of it, while {who} updates it "
                            f"atomically{at} in this launch, {order}")
                else:
                    what = (f"atomically updates {element}, which {who} read{at} after its block's own atomic update "
                            f"of it, in this launch, {order}")
                what += (": the value read back may already include other threads' updates (or not yet), so on a GPU "
                         "two blocks can both see the last count and both act as the last one, or none can")
                hint = (f"Use the value the atomic returns, which is the thread's own: `int ticket = atomicAdd(&{element}, "
                        "1); if (ticket == gridDim.x - 1) { ... }` (exactly one block takes the last ticket; a "
                        "__threadfence() before the atomic makes the block's earlier writes visible to it).")
            elif other_block != block or elements == 1:
                hint = (f"A value that threads of every block update is complete only when the launch ends: read "
                        f"{element} in a second kernel, or on the host after this launch, or let only the last block "
                        "read it (each block adds its part, __threadfence(), then takes a ticket with atomicAdd; "
                        "the block that takes the last ticket reads the total).")
            else:
                updates, read = (other_line, line) if mine == 1 else (line, other_line)
                hint = (f"Add __syncthreads() between the atomic updates (line {updates}) and the read (line {read}), "
                        "where every thread of the block reaches it: the updates of the block's threads are then done.")
            plain_line = line if mine == 1 else other_line
            n = re.escape(name)
            if (slot := re.search(rf"\b(\w+)\s*\[([^\[\]]*(?:\*\s*{n}\b|\b{n}\s*\[\s*0\s*\])[^\[\]]*)\]",
                                  source.line_text(plain_line) if plain_line else "")) and re.search(
                    rf"\batomicAdd\s*\(\s*&?\s*{n}\b", source.text):
                # `out[*count] = v; atomicAdd(count, 1);` (or `atomicAdd(count, 1); out[*count - 1] = v;`): the
                # slot read apart from the atomic that takes it
                array = slot.group(1)
                hint = (f"The slot is read (`{array}[{slot.group(2).strip()}]`) apart from the atomicAdd that takes it, so two "
                        f"threads can get the same one: take it with the atomic's own return value, "
                        f"`{array}[atomicAdd({name}, 1)] = ...;` (each thread gets its own old value).")
            elif fault.mask != 4 and re.search(r"\batomic(Min|Max)\s*\(", source.text):
                # Bellman-Ford in place, label propagation: a relaxation that any value read (old or new) leaves right
                # in the end, relaunched until nothing changes; said first, as what such a kernel most likely means
                hint = (f"If the algorithm is meant to read whichever value is there (a relaxation repeated until "
                        f"nothing changes: Bellman-Ford in place, connected components by label propagation), say so "
                        f"with an atomic read, which the sanitizer takes as meant: `atomicAdd(&{element.split('[')[0]}"
                        f"[...], 0)`, or a read through a volatile pointer. If each read must see the final value "
                        f"instead: {hint[0].lower()}{hint[1:]}")
        elif 3 in (mine, theirs) and 2 in (mine, theirs):
            verb = "atomically updates" if mine == 3 else "writes"
            done = "wrote (a plain write)" if theirs == 2 else "updated atomically"
            what = (f"{verb} {element}, which {who} {done}{at} in this launch, {order}: on a GPU the atomic "
                    "updates that come before the plain write are lost")
            before = ("its __device__ variable's memory from get_global(), or cudaMemcpyToSymbol" if name in source.globals
                      else "z[:] = 0, or cudaMemset")
            hint = (f"Set {name} before the launch ({before}) instead of in the kernel, or keep "
                    "every update of the element atomic (atomicExch for a store).")
            store_line = line if mine == 2 else other_line
            updated = re.search(rf"\b{re.escape(name)}\s*(?:\[.*\]\s*)?([-+|&^])=(?!=)",
                                source.line_text(store_line) if store_line else "")
            if updated:  # `h[b] += w` beside other threads' atomicAdd(&h[b], 1)
                call = _ATOMIC_UPDATES[updated.group(1)]
                hint = (f"Line {store_line} updates {element} with a plain `{updated.group(1)}=` while other threads "
                        f"update it atomically: make that update atomic too, `{call}(&{element}, value)`.")
            elif (unlock := re.search(rf"(?:\*\s*{re.escape(name)}\b|\b{re.escape(name)}\s*\[[^\]]*\])\s*=(?!=)\s*"
                                      r"(\w+)\s*;", source.line_text(store_line) if store_line else "")) and re.search(
                    rf"\batomicCAS\s*\(\s*&?\s*{re.escape(name)}\b[^,]*,\s*{re.escape(unlock.group(1))}\s*,", source.text):
                # `while (atomicCAS(mutex, 0, 1) != 0);` ... `*mutex = 0;`: a lock released with a plain store
                what = (f"{verb} {element}, which {who} {done}{at} in this launch, {order}: a lock taken with "
                        f"atomicCAS and released with a plain store, which CUDA's memory model does not order with the "
                        "other threads' atomics (a data race): on a GPU the waiting threads may see the release late, "
                        "or before the writes the lock guarded")
                hint = (f"Release the lock atomically, after a fence that publishes what it guarded: "
                        f"`__threadfence(); atomicExch(&{element}, {unlock.group(1)});` (line {store_line}).")
        else:  # a plain read and a plain write
            what = (f"{'reads' if mine == 1 else 'writes'} {element}, which {who} "
                    f"{'wrote' if theirs == 2 else 'read'}{at} in this launch, {order}: on a GPU the read "
                    "may see the old value or the new one")
            if fault.mask == 8:  # the store left the value the element held: the data hid the race
                what += (" (here the store wrote the value the element held already, so this launch's results are "
                         "the same either way; with other data they are not)")
            if fault.mask == 7:  # fenced and handed over, but the reader waited on another flag or an earlier value
                what = (f"reads {element}, which {who} stored{at} in this launch and then handed over to other blocks "
                        "(a __threadfence(), then an atomic or a volatile flag), but this thread did not wait for that "
                        "handover: the atomic or volatile read it waited on saw a value written before it (another "
                        "flag, or this flag before that store was handed over), so on a GPU the read may come before "
                        "the store and see the old value")
                hint = (f"Wait for the flag (or the ticket, or the counter) that {who} sets after line {other_line} "
                        "(for block b - 1's value, block b - 1's flag), then __threadfence(), then read: a wait hands "
                        "over only what was written before the value it sees.")
            elif fault.mask == 3:  # a volatile store, then the writer's atomic or flag, with no fence between
                what = (f"reads {element}, which {who} stored{at} in this launch and then handed over to other "
                        "blocks through an atomic or a volatile flag, with no __threadfence() between the store "
                        "and the handover: on a GPU other blocks can see the handover before the store, so the "
                        "read may see the old value")
                release = _handover_after(source, other_line)
                place = (f"after line {release[1]}, just before line {release[0]}'s `{release[2]}`, which tells the "
                         f"other blocks the value is there (one fence there covers line {other_line}'s store and every "
                         "other before it)" if release and release[1] > other_line else
                         f"after line {other_line}, before the atomic (or the flag's store) that tells the other blocks "
                         "the value is there")
                hint = (f"Add __threadfence() {place}: an atomic orders no other access by itself, and `volatile` makes "
                        "each access go to memory but does not keep them in order.")
                if "memory_order_relaxed" in source.text:  # (libcu++'s atomics: the order is the fence)
                    hint += (" With cuda::atomic or cuda::atomic_ref, give the flag's store "
                             "cuda::memory_order_release and the waiting load cuda::memory_order_acquire instead of "
                             "memory_order_relaxed: each then orders the accesses before (or after) it.")
            elif past := _past_the_row(source, line, name, _both_threads(kernel, args, fault, block_dim, grid_dim)):
                hint = past  # a column past the row (no `x < w` guard): the thread lands on the next row's element
            elif fault.mask == 1 and (moved := _in_place_elsewhere(name, source.line_text(line) if line else "",
                                                                   source.line_text(other_line) if other_line else "")):
                # `x[i] = x[i] / x[0]`: every thread reads x[0], and thread 0 overwrites it in place
                written, read_as = moved
                what = (f"reads {element}, which {who} overwrote{at} in this launch: the statement writes "
                        f"{name}[{written}] in place and reads {name}[{read_as}], which one thread's write changes, "
                        "so on a GPU the other threads may read the old value or the new one")
                hint = (f"Write the results into another array (out[{written}] = ...), or read {name}[{read_as}] into a "
                        "variable (a kernel argument, or a launch of its own) before any thread overwrites it: no "
                        "barrier orders the threads of different blocks.")
            elif fault.mask == 1 and line and other_line and other_line < line and not _in_one_loop(
                    source.text, other_line, line) and not _reads_element(name, source.line_text(other_line)):
                # `if (i == 0) g_scale = p[0] / p[1];` then `y[i] = x[i] * g_scale;`: one thread sets, all read
                what = (f"reads {element}, which {who} set{at} in this launch (and read after it): the other threads "
                        "may read it before that store or after it, so on a GPU they may see the old value")
                hint = (f"A value that one thread sets for the others: compute it before the launch and pass it as an "
                        f"argument (or set {name} from the host), or set it in a kernel of its own launched first"
                        + ("; __syncthreads() between the store and the reads would order only the threads of one "
                           "block, and the blocks run in any order." if other_block == block else
                           ": no barrier orders the threads of different blocks.")
                        + " (Or let every thread compute it for itself, if that is cheap.)")
            elif fault.mask == 1 and line and other_line and _set_by_one(
                    name, source.line_text(line), source.line_text(other_line), source.line_text(other_line - 1)):
                # `int sc = scale[0]; if (blockIdx.x == 0 && threadIdx.x == 0) scale[0] = 2;`: one thread sets
                # a value that its read does not go into, after every thread (itself too) read it
                what = (f"reads {element}, which {who} set{at} in this launch: the other threads may read it "
                        "before that store or after it, so on a GPU they may see the old value or the new one")
                hint = (f"A value that one thread sets for the others: set it before the launch or after it (from the "
                        f"host, or in a kernel of its own), or write the new value to another array; "
                        + ("__syncthreads() would order only the threads of one block, and the blocks run in any order."
                           if other_block == block else "no barrier orders the threads of different blocks."))
            elif fault.mask == 1:  # the writer read it here first: `int slot = *count; ...; *count = slot + 1;`
                what = (f"reads {element}, which {who} also read here and then wrote back{at} in this launch: "
                        f"a read-modify-write without an atomic (a counter or a sum kept by hand), so on a "
                        "GPU two threads can read the same old value, and one update is lost")
                # (as the code writes the element, `bins[b]`, not the one element this launch met, bins[3])
                spelled = element
                if (written := _subscript(source, other_line, name)) and "[" in element:
                    spelled = f"{name}[{written}]"
                hint = (f"Make the whole update one atomic: `int old = atomicAdd(&{spelled}, 1);` gives each thread "
                        f"its own old value (a slot, a ticket), and atomicAdd(&{spelled}, v) adds v.")
                if elements != 1:  # `y[i] = a * x[i] + y[i]` where two threads got one i
                    hint = ("If each element should belong to one thread, check how the index is computed (a "
                            "grid-stride loop steps by blockDim.x * gridDim.x). If the threads share it on purpose "
                            f"(a counter, a sum): {hint[0].lower()}{hint[1:]}")
                read_text = source.line_text(line) if line else ""
                write_text = source.line_text(other_line) if other_line else ""
                if re.search(rf"=\s*\*\s*{re.escape(name)}\s*;|=\s*{re.escape(name)}\s*\[\s*0\s*\]\s*;", read_text) \
                        and re.search(rf"(?:\*\s*{re.escape(name)}|\b{re.escape(name)}\s*\[\s*0\s*\])\s*=\s*\w+\s*;",
                                      write_text) and not re.search(r"\+\s*1\b|\+\+", write_text):
                    # `next[i] = *head; *head = i;`: a list's head replaced by each thread (a stack push)
                    hint = (f"Each thread replaces `{name}` with its own value after reading the old one (a list's "
                            f"head, a stack push): do both in one atomic, `old = atomicExch({name}, new_value);` (or an "
                            f"atomicCAS loop, when the new value depends on the old).")
                elif (held := re.search(rf"\b(\w+)\s*=\s*(?:\*\s*{re.escape(name)}|{re.escape(name)}\s*\[\s*0\s*\])\s*;",
                                        read_text)) and (new := re.search(
                        rf"(?:\*\s*{re.escape(name)}|\b{re.escape(name)}\s*\[\s*0\s*\])\s*=(?!=)\s*([^;]+);", write_text)) \
                        and re.search(rf"\b{held.group(1)}\b", new.group(1)) and "+" not in new.group(1):
                    # `int h = *head; *head = next[h];`: a stack's pop, the new value made from the old (not an addition)
                    old, made = held.group(1), new.group(1).strip()
                    hint = (f"The new value of `{name}`, `{made}`, is made from the old one read into `{old}`: two threads "
                            f"can read the same `{old}` (pop the same item). Read, make and swap in one atomicCAS loop: "
                            f"`int {old} = *{name}, seen; while ((seen = atomicCAS({name}, {old}, {made})) != {old}) "
                            f"{old} = seen;` (it swaps only where {name} still holds {old}).")
                elif itemsize > 4 and re.search(rf"\b{re.escape(name)}\s*\[[^\]]*\]\s*=(?!=)", write_text) and (
                        fields := re.findall(r"\.\s*(x|y|z|w|\w+)\s*=(?!=)", " ".join(
                            source.line_text(n) for n in range(min(line, other_line), max(line, other_line) + 1)))):
                    # `float4 a = v[t >> 2]; a.y = s[t]; v[t >> 2] = a;`: a whole element copied, one field changed
                    what = (f"reads {element}, which {who} also read here and then wrote back whole{at} in this launch, "
                            "to change one part of it: on a GPU one thread's store of the whole element can undo the "
                            "part another thread changed")
                    parts = ", ".join(f"`.{f}`" for f in dict.fromkeys(fields[:4]))
                    hint = (f"Each thread reads the whole of {element}, changes one part ({parts}) and stores the "
                            "whole element back, so it also stores the parts other threads changed, with their old "
                            f"values: let each thread store only its own part (`{name}[...].{fields[0]} = ...`, or "
                            "through a pointer to the element's members), or let one thread gather the parts and "
                            "store the element once.")
                if bits := _bits_into_copy(name, element, source, max(line or 0, other_line or 0)):
                    hint = bits
                if _kept_by_hand(name, source.line_text(line) if line else "",
                                 source.line_text(other_line) if other_line else ""):
                    what = what.replace("(a counter or a sum kept by hand)", "(a maximum or minimum kept by hand)")
                    hint = _by_hand_maximum(element)
                elif (found := _check_then_set(source, name, line, other_line)) is not None:
                    # `if (!seen[v]) { seen[v] = 1; count++; }`: a flag tested, then set
                    flag, written, unset = found
                    what = (f"reads {element}, which {who} also tested here and then set{at} in this launch: a "
                            "check-then-set without an atomic, so on a GPU two threads can both find it unset and "
                            "both go on")
                    constant = re.fullmatch(r"-?(?:0[xX][\da-fA-F]+|\d+)[uUlL]*|true|false", flag)
                    if constant:  # `if (!seen[v]) seen[v] = 1;`
                        hint = (f"Test and set in one atomic, so that exactly one thread gets through: "
                                f"`if (atomicExch(&{written}, {flag}) != {flag}) {{ ... }}` (or `atomicCAS(&{written}, "
                                f"{unset or 'unset'}, {flag}) == {unset or 'unset'}`).")
                    elif unset is not None:  # `if (level[v] == NONE) level[v] = depth;`: claim it with atomicCAS
                        hint = (f"Test and set in one atomic, so that exactly one thread gets through: `if (atomicCAS("
                                f"&{written}, {unset}, {flag}) == {unset}) {{ ... }}` stores {flag} only where the "
                                f"element still holds {unset}, and tells the one thread that did so.")
                    else:
                        hint = (f"Test and set in one atomic, so that exactly one thread gets through: `atomicCAS("
                                f"&{written}, unset, {flag}) == unset` (unset: the value the test looks for).")
                    hint += " The element's type must be int, unsigned or unsigned long long for these."
                if _in_a_lock(source, chain or [line]):  # a maximum kept by hand in a lock: it lacks its fences
                    hint = _LOCK_HINT.format(element=element, fence="__threadfence()")
            elif appended := _appended_by_hand(source, line, name):  # `frontier[*count] = v; (*count)++;`
                hint = _append_hint(*appended)
            elif other_line == line and line and _kept_by_hand(name, source.line_text(line), source.line_text(line)) \
                    and re.search(rf"(?:\*\s*{re.escape(name)}\b|\b{re.escape(name)}\s*\[\s*\d+\s*\])\s*=(?!=)",
                                  source.line_text(line)):
                # `if (x[i] > m[0]) m[0] = x[i];` in one statement: a maximum kept by hand, which no barrier fixes
                what = what.replace("with no __syncthreads() between them", "without an atomic (a maximum or "
                                    "minimum kept by hand)")
                hint = ("Every thread compares with the element and stores into it, so on a GPU two threads can read "
                        "the same old value and the smaller store can land last. " + _by_hand_maximum(element))
            elif other_line == line:  # one statement in two threads: `y[i] = a * x[i] + y[i]`, `a[i] = a[i + 1]`
                hint = ("One statement, run by two threads, reads and writes the same element: if each element "
                        "should belong to one thread, check how the index is computed (a grid-stride loop steps by "
                        "blockDim.x * gridDim.x); if each thread needs its neighbours' old values, read from one "
                        "array and write to another.")
                if other_block != block:  # `part[b] = s + part[b - 1]`: a total carried from block to block
                    hint += (" If a block needs another block's new result (a total carried from block to block), "
                             "it exists only once that block is done: add it in a second launch (or on the host), "
                             "or hand it over with a flag set by an atomic after __threadfence() (a chained scan).")
                elif (loop := _innermost_loop(source.text, line, line, kernel.line if 0 < kernel.line <= line else 1)) \
                        and not re.search(r"__syncthreads\s*\(|\.\s*sync\s*\(", "\n".join(
                            source.lines[loop[0] - 1:loop[1]])) \
                        and not re.search(r"(?:^|[;{(\s,])[A-Za-z_]\w*\s*\+=[^;]*\b(blockDim|gridDim|stride)\b",
                                          "\n".join(source.lines[loop[0] - 1:loop[1]])):
                    # (not a grid- or block-stride loop, `i += blockDim.x * gridDim.x`; `x[i] += x[i + stride]`, a
                    # tree's step in place, is no stride of the loop)
                    # an odd-even sort's phases, a sweep in place: one thread runs passes ahead of another
                    hint = (f"Line {line} runs in a loop (lines {loop[0]} to {loop[1]}) with no barrier in it, so one "
                            "thread can be several passes ahead of another. If the threads share elements from one "
                            "pass to the next (a sort's phases, a sweep that reads what the last one wrote), put "
                            f"__syncthreads() at the end of the loop's body, after line {line}, where every thread "
                            "of the block reaches it (each thread going round the loop the same number of times); if "
                            "they share an element within one pass, read it into a variable, __syncthreads(), then "
                            "write." + (" A barrier orders the threads of one block only: where threads of different "
                                        "blocks share elements, launch once per pass." if math.prod(grid_dim) > 1
                                        else ""))
            elif other_block == block:
                written, read = (other_line, line) if mine == 1 else (line, other_line)
                hint = (f"Add __syncthreads() between line {written} (the write) and line {read} (the read), where "
                        "every thread of the block reaches it, or read from one array and write to another.")
                loop = _innermost_loop(source.text, min(written, read), max(written, read),
                                       kernel.line if 0 < kernel.line <= min(written, read) else 1) \
                    if written and read and written > read else None
                if loop and re.search(r"__syncthreads\s*\(", "\n".join(source.lines[loop[0] - 1:read - 1])):
                    # `__syncthreads(); t = X[i - s]; X[i] += t;` in a loop: the barrier before the read orders one
                    # pass's writes before the next pass's reads; within a pass, the write comes too soon
                    hint = (f"Add __syncthreads() between line {read} (the read) and line {written} (the write), "
                            "where every thread of the block reaches it: the barrier earlier in the loop orders one "
                            "pass's writes before the next pass's reads, but within one pass a thread can overwrite "
                            f"{element} before another thread has read its old value. Read into a variable, "
                            "__syncthreads(), then write (or read from one array and write to another).")
                subscripts = [re.findall(rf"\b{re.escape(name)}\s*\[([^\]]*)\]", source.line_text(n)) for n in (written, read)]
                others = all(subscripts) and not set(subscripts[0]) & set(subscripts[1]) and math.prod(grid_dim) > 1
                if others and written < read and not _in_one_loop(source.text, written, read, kernel.line or 1):
                    # `tmp[i] = ...; y[i] = tmp[j];`: the code writes first, then reads the others' writes
                    hint = (f"Add __syncthreads() between line {written} (the write) and line {read} (the read), where "
                            "every thread of the block reaches it: that is enough when the elements a thread reads "
                            "are written by threads of its own block. An element another block writes is ready "
                            "only when the launch ends: read it in a second launch.")
                elif others:  # a thread reads its neighbours' elements in place (a stencil, the Game of Life, Jacobi)
                    hint = ("If each thread needs its neighbours' old values (a stencil, the Game of Life, a Jacobi "
                            "step), read from one array and write to another (swap them between launches): a "
                            "__syncthreads() orders only the threads of one block, and the neighbours at a block's "
                            f"edge belong to other blocks. (Within one block: __syncthreads() between line {read}, "
                            f"the read, and line {written}, the write.)")
                if hint.startswith("Add __syncthreads()") and _same_warp(fault, block_dim) \
                        and 3 not in (fault.op, fault.other_op):
                    hint += " " + _SYNCWARP_IS_ENOUGH  # (as for shared memory)
            else:
                hint = ("Blocks cannot wait for each other inside a launch: read from one array and write to "
                        "another (swap them between launches), or split the work into two launches.")
                if any(_waited_for(source.line_text(n)) == name for n in (line, other_line) if n) \
                        and (plain := _plain_wait(source)):  # `while (ready == 0) {}` on a plain __device__ flag
                    hint = (f"{plain} And a block may wait only for blocks before it in launch order (a lower "
                            "blockIdx): a later one may not have started yet, and then the wait never ends.")
                elif flag := _plain_flag_store(source, kernel, name, line, other_line):
                    hint = flag
                elif mine == 1 and (scoped := _block_scope_fence(source, other_line)):
                    hint = scoped
                elif mine == 1 and (unfenced := _unfenced_handover(source, line, other_line)):
                    hint = unfenced
            if warp_step:  # `v[tid] += v[tid + 16]` (volatile v) by the lanes of one warp
                hint = ("The threads of a warp do not run in lockstep (since Volta), so `volatile` alone does not "
                        f"order them: put __syncwarp() between one thread's read and the other's write. {_WARP_STEP_FIX}")
        if other_block != block and (start := _grid_stride_start(source, line)):
            hint = start  # `for (int i = threadIdx.x; i < n; i += blockDim.x * gridDim.x)`: every block from 0
        drawn = re.search(rf"\b(curand\w*|skipahead\w*)\s*\([^;]*\b{re.escape(name)}\b",
                          source.line_text(line) if line else "")
        handed = mine != theirs and 3 not in (mine, theirs) and fault.mask == 0  # a read of another's write
        # (or copy one into a local, draw from it and store it back: `curandState s = st[t]; ... st[t] = s;`)
        state_copy = not drawn and any(p.name == name and re.search(r"\bcurandState", p.cpp_type or p.ctype or "")
                                       for p in kernel.params)
        if (drawn or state_copy) and 3 not in (mine, theirs):  # two threads draw from one cuRAND state
            verb = ("uses (through a copy that it stores back)" if state_copy else
                    "sets up" if drawn.group(1) == "curand_init" else "draws random numbers from")
            what = (f"{verb} the cuRAND state {element.split('.')[0]}, which {who} also used{at} in this launch: "
                    "each call writes the state (and a draw reads it first), so on a GPU two threads can get the "
                    "same numbers, and set-ups or draws are lost")
            hint = ("Give each thread its own state: set them up with curand_init(seed, id, 0, &states[id]) (one "
                    "state per thread, each its own subsequence), then draw from &states[id], or from a local copy "
                    "that you store back at the end.")
        elif (sharing := _sharing_memory(name, kernel, args)) and not device_variable:
            # k(x, x), or views of one array: what a thread writes through one parameter, another reads through the other
            if "a read-modify-write without an atomic" in what:  # (a stencil's write into its own input: no counter)
                what = (f"reads {element}, which {who} also read here and then wrote{at} through `{sharing}` in this "
                        "launch: on a GPU another thread's read may see the old value or the new one")
            hint = (f"{name} and {sharing} are the same memory here (the same array, or overlapping views of one, "
                    f"was passed for both), so what one thread writes into {sharing} another thread reads or writes "
                    f"as {name}. Pass a separate array for the results (empty_like(x), in NumPy or CuPy), or make every thread "
                    "use only its own elements.")
            restricted = [n for n in (name, *sharing.split(" and "))
                          if re.search(rf"__restrict(?:__)?\s+{re.escape(n)}\s*[,)]", source.text)]
            if restricted:  # `const float* __restrict__ in`: a promise that no other parameter reaches its memory
                hint += (f" The kernel declares {_and([f'`{n}`' for n in restricted])} __restrict__, a promise to the "
                         "compiler that no other pointer reaches that memory: with one array passed for both, nvcc may "
                         "read it through the read-only cache or move reads past writes, so it needs separate arrays.")
        elif counted := _counter_by_hand(source, name, line, other_line):
            hint = counted  # `int slot = off[b] + fill[b]; fill[b] = fill[b] + 1;`, `start = *tail; *tail += k;`
        elif kept := _extreme_by_hand(source, name, line, other_line):
            hint = kept  # `if (label[v] < label[u]) label[u] = label[v];`: a minimum kept by hand in label[u]
        elif handed and re.search(r"\batomic(CAS|Exch|Inc|Add)\b|\bvolatile\b", source.text) \
                and "__threadfence()" not in hint:  # (not a second time)
            hint += (" If one thread hands the element over to the next through an atomic or a volatile flag (a "
                     "lock, a last-block ticket), the first needs __threadfence() between its write and that "
                     "atomic, and the next uses it only after its own atomic (or volatile read) saw the handover.")
    elif kind == MISALIGNED:
        name, _ = _array_name(fault, arrays)
        if source.dynamic_shared and name == source.dynamic_shared_name:
            name = f"the dynamic shared memory ({name})"
        size = fault.element_bytes
        example = f" (a float4 needs 16: {name} + i with i a multiple of 4 floats)" if size == 16 else ""
        item = arrays[fault.base][2] if fault.base in arrays else 0
        param = next((p for p in kernel.params if p.name == name and p.pointer and p.lanes == 1 and p.dtype), None)
        if size in (8, 16) and item and size % item == 0 and size > item:  # the array's own items: double2 of doubles
            per = size // item  # (the vector type of `per` of the array's items: the last named, longlong2 not long2)
            vector = next((v for v, kind in reversed(VECTOR_TYPES.items()) if param and kind == (param.dtype, per)),
                          f"{size}-byte type")
            c_item = _VECTOR_ITEM.get(param.dtype, f"{item}-byte item") if param else f"{item}-byte item"
            example = f" ({_an(vector)} needs {size}: {name} + i with i a multiple of {per} {c_item}s)"
        hint = (f"Cast only pointers whose byte offset is a multiple of the type's alignment{example}, or read the "
                "elements one by one.")
        skew = fault.base % min(size, 16) if size and fault.base in arrays else 0
        if skew and index % size == 0:  # the argument itself starts off the boundary: a view such as x[1:]
            what = (f"accessed {_a(size)} {size}-byte element of {name} through a cast pointer, but {name} itself starts {skew} "
                    f"bytes past {_a(min(size, 16))} {min(size, 16)}-byte boundary (a NumPy view such as x[1:]?): on a GPU this stops "
                    "the kernel with 'misaligned address'")
            hint = ("Pass a copy (x[1:].copy() starts a fresh allocation), or pass x and the offset as a separate "
                    "argument, or read the elements one by one.")
        else:
            what = (f"accessed {_a(size)} {size}-byte element at byte {index} of {name} through a cast pointer, and {index} is "
                    "not a multiple of that type's alignment: on a GPU this stops the kernel with 'misaligned address'")
    elif kind == READ_ONLY and arrays.get(fault.base, ("",))[0] in source.constant_globals:
        name = arrays[fault.base][0]
        verb = "atomically updates" if fault.op == 3 else "writes"
        what = (f"{verb} {name}[{index}], but {name} is __constant__ memory, which kernels may only read: the host "
                "fills it before the launch (get_global, cudaMemcpyToSymbol)")
        hint = ("Keep what the kernel computes in an output array or a __device__ variable; set __constant__ values "
                "from the host.")
    elif kind == READ_ONLY:
        name, _, _ = arrays.get(fault.base, ("an argument array", 0, 0))
        what = (f"writes {name}[{index}], but {name} is read-only: a `const` parameter written through a cast, or a "
                "NumPy array with writeable=False")
        hint = ("Write results into an output array. If the kernel must update this one, declare the parameter "
                "without const and pass a writable array.")
    elif kind == BAD_ARGUMENT:
        p = kernel.params[index] if 0 <= index < len(kernel.params) else None
        pname = f"'{p.name}' ({p})" if p else f"number {index}"
        if fault.op == 2:
            struct_name = p.ctype if p else "struct"
            what = (f"got an array of {length}-byte records for parameter {pname}, but each {struct_name} is "
                    f"{fault.element_bytes} bytes (sizeof, with C's alignment padding): the kernel would find "
                    "every record after the first at the wrong place")
            hint = ("Give the NumPy dtype the struct's layout: np.dtype([...], align=True) pads as C does; for a "
                    f"struct declared __align__(N), set the size too: np.dtype({{'names': [...], 'formats': [...], "
                    f"'itemsize': {fault.element_bytes}}}, align=True).")
        elif fault.op == 1:
            what = (f"got {length} bytes for parameter {pname}, but the kernel's {p.ctype if p else 'struct'} "
                    f"is {fault.element_bytes} bytes")
            hint = ("Build the argument with a NumPy structured dtype whose fields match the struct, in order, "
                    "with align=True (C's padding): np.dtype([...], align=True).")
        else:
            unit = f"rows of {p.ctype}{p.rows} ({fault.element_bytes} bytes each)" if p and p.rows else \
                f"{fault.element_bytes}-byte elements"
            what = (f"got an array of {length} bytes for parameter {pname}, which is not a whole number of "
                    f"its {unit}")
            hint = "Pass an array whose size in bytes is a multiple of the element's size (sizeof in C)."
            items = fault.element_bytes // np.dtype(p.dtype).itemsize if p and p.rows and p.dtype else 0
            if items:
                hint = (f"Each row of {p.name} is {p.ctype}{p.rows} = {items} {p.ctype} elements: pass an array of "
                        f"whole rows (for example of shape (rows, {items})).")
        block = thread = None
        line = None
    elif kind == BAD_FREE:
        first = module.line_of(fault.address) if fault.address else None
        if fault.op == 1:
            what = (f"frees a block at line {line} that was freed already"
                    + (f" at line {first}" if first else "") + ": on a GPU a double free corrupts the device heap")
            hint = "Free each block once, after its last use (and set the pointer to nullptr if it is freed early)."
        elif fault.op == 2:  # free / delete / delete[] of a block another of them goes with
            made, how = ("malloc", "new", "new[]"), ("free", "delete", "delete[]")
            what = (f"calls {how[int(fault.index)]} at line {line} on a block that {made[int(fault.count)]} made: "
                    f"a block from {made[int(fault.count)]} goes back with {how[int(fault.count)]} (undefined otherwise, "
                    "in CUDA as in C++)")
            hint = (f"Use {how[int(fault.count)]} here, or make the block with {made[int(fault.index)]}: malloc goes "
                    "with free, new with delete, new[] with delete[].")
        else:
            array = arrays.get(fault.base)
            which = f" ({array[0]}, an argument array)" if array else ""
            what = (f"calls free or delete at line {line} on a pointer{which} that malloc or new in kernel code did not "
                    "return: on a GPU this corrupts the device heap")
            hint = ("Free only what device malloc or new returned, with the very pointer they returned (not a pointer "
                    "into the block); argument arrays belong to the host, local and __shared__ arrays to the thread "
                    "or block.")
    elif kind == USE_AFTER_FREE:
        first = module.line_of(fault.address) if fault.address else None
        verb = {1: "reads", 3: "atomically updates"}.get(fault.op, "writes")
        what = (f"{verb} byte {index} of {_a(length)} {length}-byte block that malloc or new "
                f"returned, after the block was freed" + (f" at line {first}" if first else "")
                + ": on a GPU the memory may already belong to another block")
        hint = "Free a block only after its last use, in every thread that uses it (free it once, after a barrier)."
    elif kind == UNINITIALIZED_LOCAL:
        name = fault.text.decode(errors="replace")
        what = (f"reads element {index} of its local array {name} (of {length}), which this thread has not written: a "
                "local array starts with whatever the thread's registers or local memory held, on a GPU a different "
                "value from run to run")
        hint = (f"Give {name} its first values where you declare it (`= {{}}` makes every element 0) or write every "
                "element before the loop that adds into it.")
    elif kind == RNG_NOT_SET_UP:
        what = (f"draws random numbers at line {line} from a cuRAND state that curand_init never set up (all its "
                "numbers are zero): on a GPU every thread that draws from such a state gets the same numbers, "
                "run after run")
        hint = ("Set up each thread's state first: curand_init(seed, id, 0, &states[id]) (in a setup kernel "
                "launched before this one, on the same array, or at the start of this kernel), then draw from "
                "&states[id].")
    elif kind == LOCAL_TOO_BIG:
        what = (f"declares the local array `{fault.text.decode(errors='replace')}` of {length:,} bytes at line {line}, "
                f"but a GPU thread has at most {512 * 1024:,} bytes (512 KiB) of local memory: on a GPU the kernel "
                "does not compile")
        hint = ("Keep big arrays in global memory (an argument array, each thread using its own slice), or share one "
                "through __shared__ memory among the block's threads.")
    elif kind == BAD_WIDTH:
        what = (f"calls {WARP_OPS.get(fault.op, 'a shuffle')} at line {line} with width {index}, but the width must be a "
                "power of two from 1 to 32: on a GPU the result is undefined")
        hint = "Pass a power of two (16 shuffles within each half-warp), or leave the width out for the whole warp."
    elif kind == PARTIAL_READ:  # (holder: the result that differs with another fill)
        element = fault.text.decode(errors="replace")  # (the whole element: no member of it)
        member = _member_at(source, _array_of(element), fault.count)  # (the first unwritten byte's)
        named = f"`{element}.{member}`" if member else f"its bytes from {fault.count} on"
        array, at, value, other = holder if holder and len(holder) > 3 else (None, 0, "?", "?")
        what = (f"stores a value computed from shared memory that no thread wrote: at line {line}, thread {thread} "
                f"read the whole element {element} ({fault.element_bytes} bytes), and no thread of block {block} had "
                f"written {named} in this launch. The result {array}[{at}] is {value} in this run, and {other} when "
                "that memory holds other bytes: on a GPU it holds whatever the previous block left there")
        hint = (f"Write every member of {element} before it is read whole (all of the element, then __syncthreads()), "
                "or read only the members that hold values (`s[i].x`, not the whole `s[i]` into a variable whose "
                "other members are then used).")
    elif kind == SHARED_TOO_BIG:
        name = fault.text.decode(errors="replace")
        static, dynamic = length, index
        static_only = static > MAX_SHARED_BYTES  # (a kernel's static arrays get 48 KiB, opt-in or not)
        limit = MAX_SHARED_OPTIN if not static_only and static + dynamic > MAX_SHARED_OPTIN else MAX_SHARED_BYTES
        what = (f"needs {static + dynamic:,} bytes of shared memory per block ({static:,} in __shared__ arrays, up "
                f"to `{name}`, declared at line {line}" + (f", and shared_mem={dynamic:,}" if dynamic else "")
                + f"), but a block gets at most {limit:,} ("
                + ("48 KiB" if limit == MAX_SHARED_BYTES else "163 KiB on the A100 the CPU backend emulates, with the "
                   "opt-in") + "): on a GPU "
                + ("the kernel does not compile ('uses too much shared data')" if static_only or not dynamic
                   else "the launch fails"))
        hint = ("Use smaller tiles (e.g. 32×32 floats is 4 KiB), or one array per purpose: shared memory is "
                "per block, so size it by the block's threads, not by the whole input.")
        if dynamic and not static_only and limit == MAX_SHARED_BYTES:
            hint += (f" Or let the kernel use more, as with CuPy: kernel.max_dynamic_shared_size_bytes = {dynamic} "
                     f"(a block gets up to {MAX_SHARED_OPTIN:,} bytes in all on an A100).")
        elif static_only:
            hint += (" Static __shared__ arrays get at most 48 KiB on any GPU: more needs dynamic shared memory "
                     "(`extern __shared__ float s[];`, shared_mem= and kernel.max_dynamic_shared_size_bytes).")
    elif kind == UNSUPPORTED and fault.text == b"grid":  # grid_group::sync()
        what = "reached a grid-wide barrier (grid.sync() of cooperative groups), which the CPU backend cannot run"
        hint = f"Instead: {_GRID_SYNC[1]}."
    elif kind == UNSUPPORTED and fault.text:  # a tile size cooperative groups do not allow here
        what = f"calls {fault.text.decode(errors='replace')}, but a tile must be 1, 2, 4, 8, 16 or 32 threads"
        hint = ("Use tiles of up to 32 threads (one warp), or the whole block (this_thread_block()) "
                "for more.")
    elif kind == UNSUPPORTED:
        what = "reached a function whose body the CPU backend cannot run"
        hint = "See the construct named when the kernel was created; run on a GPU."
    elif kind in (WARP_EXITED, WARP_MISMATCH, WARP_BAD_MASK):
        op = WARP_OPS.get(fault.op, "a warp-level call")
        lane, other = fault.index % 32, _xyz(fault.other_thread)
        # (a cooperative group's method, `t.any(p)`, `tile.shfl_down(v, 1)`: named as written, then as CUDA's call)
        # (an undefined shuffle result that reached a store: fault.line is the store's, other_line the call's)
        call_line = int(fault.other_line) if kind == WARP_BAD_MASK and fault.length in (1, 2) and fault.other_line \
            else fault.line
        call_text = source.line_text(call_line) if call_line else ""
        method = re.search(rf"\b(\w+)\s*\.\s*({op.removeprefix('__').removesuffix('_sync')}|{op.removeprefix('__')})"
                           r"\s*\(", call_text) if op.startswith("__") and op not in call_text else None
        if method:
            op = f"{method.group(1)}.{method.group(2)}() (a tile's {op})"
        elif op.startswith("__") and op not in call_text and (
                collective := re.search(r"\b(?:cg::|cooperative_groups::)?(reduce|inclusive_scan|exclusive_scan)\s*\(",
                                        call_text)):
            op = f"cg::{collective.group(1)}() (its {op})"  # (a group collective, made of shuffles here and on a GPU)
        call = f"{op} at line {fault.line} with mask {fault.mask:#010x}"
        if kind == WARP_BAD_MASK and fault.length in (1, 2):  # what a shuffle read outside its mask, used
            reader = _xyz(fault.exited_thread)
            why = (f"which returned at line {fault.address}" if fault.other_op == -4 and fault.address
                   else f"which the mask {fault.mask:#010x} does not name")
            where_to = (f"left {holder[0]}[{holder[1]}] holding" if holder else "stores")
            if line is None and holder and fault.other_line:
                line = int(fault.other_line)  # (the result's store is gone: the line is the shuffle's)
            what = (f"{where_to} a value computed from an undefined one: at line {fault.other_line}, thread {reader} "
                    f"read lane {lane} (thread {other}) with {op}, {why}, and on a GPU that value is undefined")
            if holder and len(holder) > 2:  # _depends_on_undefined: two runs, two results
                outcome = (f"{holder[2]} in one run and {holder[3]} in another that gave the undefined value other "
                           "bits" if holder[3] is not None else "a result in one run, and a fault in another that "
                           "gave the undefined value other bits")
                what = (f"left {holder[0]}[{holder[1]}] holding a result that depends on an undefined value "
                        f"({outcome}): at line {fault.other_line}, thread {reader} read lane {lane} (thread {other}) "
                        f"with {op}, {why}, and on a GPU that value is undefined")
            hint = ("Read only from lanes in the mask, or leave the value unused: guard the use (e.g. "
                    "`if (lane + offset < active) v += other;`), or give the shuffle the group's size as its width "
                    "and start the offsets at half of it (__shfl_down_sync(mask, v, offset, 16) with offset from 8: "
                    "a lane whose source lies past the width keeps its own value), or use cooperative groups' "
                    "tiled_partition<16>(block).")
            lanes = bin(fault.mask).count("1")
            if "__shfl_down_sync" in op and fault.mask and not fault.mask & (fault.mask + 1) and lanes < 32 \
                    and not lanes & (lanes - 1):
                # the first `lanes` lanes take part, a power of 2 (a ballot of `tid < warps`): the offsets start
                # too high for a tree over them
                reader_lane = _thread_linear(fault.exited_thread, block_dim) % 32
                mask_text = re.search(r"__shfl_down_sync\s*\(\s*([A-Za-z_]\w*)\s*,",
                                      source.line_text(int(fault.other_line)) if fault.other_line else "")
                start = (f"start the offsets at half the lanes in the call, `for (int offset = {lanes // 2}; offset "
                         "> 0; offset /= 2)`, so that lane 0 reads only lanes of the mask (the other lanes' sums go "
                         "unused)" if lanes > 1 else "lane 0 alone has nothing to add: skip the shuffles then, `if "
                         f"({mask_text.group(1) if mask_text else 'mask'} != 1u)` around the loop")
                hint = (f"Only {f'the {lanes} lanes' if lanes > 1 else 'lane 0'} of the mask {fault.mask:#010x} "
                        f"{'are' if lanes > 1 else 'is'} in the call, and lane {reader_lane} read lane {lane}, "
                        f"{lane - reader_lane} further down: {start}; or guard the use, `if (lane + offset < {lanes}) "
                        "v += other;`.")
                if mask_text and re.search(rf"\b{mask_text.group(1)}\s*=\s*__ballot_sync\s*\(", source.text):
                    hint += (" (NVIDIA's reduction sample, reduce6 and later, ends this way: its mask is a ballot of "
                             "`tid < shmem_extent` and its offsets start at 16. The CUDA Programming Guide calls "
                             "such a read undefined, and cuda-samples issue #398 asks about that very code.)")
            run = fault.mask >> ((fault.mask & -fault.mask).bit_length() - 1) if fault.mask else 0
            if run & (run + 1) and fault.other_op != -4 and re.match(r"__shfl_(down|up|xor)_sync", op):
                # scattered lanes (a mask from __activemask() or a ballot inside a data-dependent if): no choice of
                # offsets or width keeps a tree of shuffles within them
                leader = ("" if fault.mask & 1 else f" Lane 0 is not among them either, so a `lane == 0` that stores "
                          "the result may never run.")
                hint = (f"The mask {fault.mask:#010x} names scattered lanes (those that took a data-dependent branch: "
                        "__activemask() or a ballot inside the if), and a tree of shuffles by offsets reads lanes "
                        f"outside it whatever the offsets.{leader} Do the shuffles where the whole warp is, before the "
                        "branch, each lane bringing a value that changes nothing (e.g. `float v = taken ? x[i] : 0.0f;` "
                        "with the full mask 0xffffffff), or make a group of the lanes in the branch, "
                        "`cg::coalesced_group g = cg::coalesced_threads();`, and combine with `cg::reduce(g, v, "
                        "cg::plus<float>())`, stored by `g.thread_rank() == 0`.")
            if op.startswith("__shfl_sync") and fault.other_op != -4:  # a broadcast from a lane outside the mask
                hint = (f"The source lane of __shfl_sync must be one of the lanes in its mask ({fault.mask:#010x}): "
                        "broadcast from one of them, the lowest, "
                        "`__shfl_sync(mask, v, __ffs(mask) - 1)`, or take the value before the branch, where the "
                        "whole warp is there (`__shfl_sync(0xffffffff, v, 0)`).")
            if fault.other_op == -4:
                hint = ("Keep the lanes whose values are read in the call and guard only the work (e.g. "
                        "`float v = i < n ? x[i] : 0.0f;` instead of `if (i >= n) return;`), or guard the use "
                        "(e.g. `if (lane + offset < active) v += other;`).")
                if op.startswith("cg::"):  # a group collective over a tile some of whose lanes returned
                    hint = (f"{op.split(' ')[0]} combines every lane of its group, and lanes that returned bring no "
                            "value: keep them in the call with a value that changes nothing (`float v = i < n ? in[i] "
                            ": 0.0f;` instead of `if (i >= n) return;`), or make the group of the lanes still running, "
                            "cg::coalesced_threads().")
        elif kind == WARP_EXITED and fault.other_op == -3:
            what = (f"calls {call}, which names lane {lane} of warp {fault.index // 32}, but that lane does not "
                    f"exist: the block has {fault.count} threads, so its last warp has {fault.count % 32} lanes")
            # (not __ballot_sync(0xffffffff, ...): its mask names the missing lanes too)
            hint = ("Launch blocks whose size is a multiple of 32, or build the mask from the lanes that exist: "
                    "`unsigned lanes = min(32u, blockDim.x - threadIdx.x / 32 * 32); unsigned mask = lanes == 32 ? "
                    "0xffffffffu : (1u << lanes) - 1;` (for a 1-D block), or __activemask() where all of them "
                    "are together.")
        elif kind == WARP_EXITED and fault.length == line and line and fault.address & 0xFFFFFFFF != fault.mask:
            # the lane made this very call, with another mask: it met the lanes of its own mask, and went on
            theirs = fault.address & 0xFFFFFFFF
            what = (f"calls {call}, which names lane {lane} (thread {other}), but that "
                    f"lane made this call with mask {theirs:#010x}, met the lanes of its own mask and finished the "
                    "kernel: the lanes of one call must pass the same mask, so the lanes of this one wait for it")
            hint = (f"Give every lane of the call the same mask: the lanes it names, each of which passes that mask "
                    f"(here the lanes pass {fault.mask:#010x} or {theirs:#010x}). For the lanes that take part, "
                    "`unsigned mask = __ballot_sync(0xffffffff, condition);` before the if, then the call with that "
                    "mask inside it; or 0xffffffff where the whole warp reaches the call.")
        elif kind == WARP_EXITED and fault.length == line and line:
            # the lane made this call too, fewer times: a loop around the call with a different count per lane
            more = fault.address >> 32
            more_text = f" ({more} time{'s' * (more != 1)} more so far)" if 0 < more < 1 << 31 else ""
            what = (f"calls {call}, which names lane {lane} (thread {other}), but that lane made this call fewer "
                    f"times than thread {thread}{more_text} and finished "
                    "the kernel: a loop around the call runs a different number of times in different lanes, so "
                    "the lanes of the mask wait for one that never comes")
            hint = ("Make every lane of the mask go round the loop the same number of times (the largest count in "
                    "the warp: `for (int j = 0; j < most; j++)` with the work guarded, `j < mine ? ... : 0`), or "
                    "take the call out of the loop; `unsigned mask = __ballot_sync(__activemask(), j < mine);` at "
                    "the top of each round names the lanes still in it.")
        elif kind == WARP_EXITED:
            what = (f"calls {call}, which names lane {lane} (thread {other}), but that thread finished the kernel "
                    "without reaching the call (it skipped it, inside an if?): the lanes of the mask wait for it")
            hint = ("Let every lane named in the mask reach the warp-level call and guard only the work "
                    "(e.g. `float v = i < n ? x[i] : 0.0f;` before the call), or name only the lanes that reach "
                    "it (a mask from __ballot_sync(0xffffffff, condition) taken before the if).")
        elif kind == WARP_MISMATCH and fault.other_op == -2:
            what = (f"calls {call}, but lane {lane} of its mask (thread {other}) waits at __syncthreads() on line "
                    f"{fault.other_line}: neither can go on")
            hint = "All lanes of a mask must reach the same warp-level call before any of them reaches a barrier."
        elif kind == WARP_MISMATCH:
            other_op = WARP_OPS.get(fault.other_op, "another warp-level call")
            what = (f"calls {call}, but lane {lane} of its mask (thread {other}) is at {other_op} on line "
                    f"{fault.other_line} (or uses another mask): the lanes of one mask must meet at the same kind of "
                    "call, with the same mask")
            hint = ("Put the warp-level call where every lane of the mask reaches it (outside the if/else), "
                    "with the same mask in every lane.")
        else:  # (a shuffle reading a lane outside its mask is the undefined-value case above)
            what = f"calls {call}, which does not name its own lane {lane}"
            hint = "A lane must be in the mask it passes: use __activemask() or 0xffffffff for the whole warp."
    elif kind == NO_BARRIERS:
        what = ("called __syncthreads() or a warp-level function, but course.cuda did not see it in the source "
                "(inside a macro?)")
        hint = "Write the call in the kernel or a __device__ function, not via a macro."
    else:
        what, hint = f"stopped with an unknown fault (kind {kind})", ""

    if kind in (RACE, GLOBAL_RACE) and not (kind == GLOBAL_RACE and _grid_stride_start(source, line)) \
            and not _in_a_lock(source, [line]) and (ignored := _ignored_axis(fault, module, source, line, block_dim)):
        # (not inside a lock: there every thread updating one element in turn is the design)
        hint = ignored
    elif kind in (RACE, GLOBAL_RACE) and (chunk := _inclusive_chunk(source, line, _array_of(element))):
        hint = chunk  # `for (c = 0; c <= channels; c++) img[i + c]`: one element into the next thread's
    if kind in (OUT_OF_BOUNDS, SHARED_OUT_OF_BOUNDS, UNINITIALIZED, RACE, GLOBAL_RACE) and block_dim \
            and (mismatch := _template_block_size(source, kernel, block_dim)):
        hint = mismatch  # `reduce6<float, 256, false>` launched with 128 threads a block
    if fault.exited_count and kind in (UNINITIALIZED, RACE, GLOBAL_RACE, UNINITIALIZED_LOCAL, WARP_EXITED):
        returned = _xyz(fault.exited_thread)
        said = (f"{fault.exited_count} thread(s) of this block (the first is thread {returned}) returned at "
                f"line {fault.exited_line}, before the __syncthreads() at line {fault.exited_barrier}, so they did "
                "no work past that `return`, loads into shared memory included")
        array = _array_of(element) if element else ""
        loads = [n for n in range(fault.exited_line + 1, min(fault.exited_barrier, len(source.lines) + 1))
                 if array and re.search(rf"\b{re.escape(array)}\s*\[[^;]*\]\s*=(?!=)", source.line_text(n))] \
            if kind == UNINITIALIZED and 0 < fault.exited_line < fault.exited_barrier else []
        if loads:  # the kernel loads the array, after the return: the threads that would have loaded it returned
            where = f"line {loads[0]}" if len(loads) == 1 else f"lines {loads[0]} to {loads[-1]}"
            hint = (f"The kernel loads {array} at {where}, after a return: {said}: put the return after the barrier "
                    "(every thread loads its part of the tile, 0 past the data's end) and guard only the work, "
                    f"`if (i < n) ...`. If {element} is one no thread loads even then: {hint}")
        else:
            hint += f" Also: {said}: put the return after the barrier and guard only the work."
    where = f"block {block}, thread {thread}" if block is not None else "before the first thread ran"
    if line:
        where += f", line {line}{_called_at(chain) if chain and chain[0] == line else ''}: {source.line_text(line)}"
    message = f"kernel '{kernel.name}' {what}.\n  where: {where}"
    if hint:
        message += f"\n  hint: {hint}"
    return KernelError(message, kernel=kernel.name, block=block, thread=thread, line=line)
