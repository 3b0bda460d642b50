"""The source CuPy's NVRTC compiles: what nvcc's host headers give and NVRTC lacks, supplied.

nvcc compiles a kernel file together with the host's C library headers: `#include <cfloat>`,
`M_PI`, `INT_MAX`, `uint`, `int64_t` and `assert` all work, and the CPU backend (g++) accepts
them the same way. NVRTC, which ``cupy.RawKernel`` uses, has no host headers at all: `#include
<cfloat>` is "cannot open source file", and `M_PI` or `uint` is "identifier is undefined". So
that a kernel that runs on the CPU also compiles on a GPU, ``for_nvrtc`` gives NVRTC a prelude:

- includes of the headers whose device part NVRTC builds in (cuda_runtime.h,
  device_launch_parameters.h, ...) are blanked;
- includes of C library headers (cfloat, climits, cstdint, cmath, cstdio, ...) and of
  math_constants.h are moved into the prelude, kept where NVRTC finds the header
  (`__has_include`), and otherwise replaced by the definitions the source uses;
- C++ library headers (limits, type_traits, utility, algorithm) fall back to libcu++'s
  `<cuda/std/...>`, whose names `std::` then finds.

The prelude ends with `#line 1`, so NVRTC's messages name the learner's own line numbers, and it
applies only under NVRTC (`__CUDACC_RTC__`): CuPy's nvcc backend sees the includes as written.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

# Headers whose device-side declarations NVRTC includes by itself: their #include is dropped.
BUILT_IN = {
    "cuda_runtime.h", "cuda.h", "cuda_runtime_api.h", "device_launch_parameters.h", "device_functions.h",
    "crt/device_functions.h", "math_functions.h", "crt/math_functions.h", "crt/host_defines.h", "host_defines.h",
    "vector_types.h", "vector_functions.h", "builtin_types.h", "driver_types.h", "device_atomic_functions.h",
    "sm_20_atomic_functions.h", "sm_32_atomic_functions.h", "sm_60_atomic_functions.h", "sm_30_intrinsics.h",
    "sm_32_intrinsics.h", "sm_35_intrinsics.h", "sm_61_intrinsics.h",
    "new",  # (placement new, `new (&s[t]) float(v)`: NVRTC has it built in, and no <new> to open)
}
# C library headers (and math_constants.h, which NVRTC may not find either), by what they provide: the
# fallback blocks below.
C_HEADERS = {
    "math_constants.h": "cudart",
    "float.h": "float", "cfloat": "float", "limits.h": "limits", "climits": "limits",
    "stdint.h": "stdint", "cstdint": "stdint", "stddef.h": "stddef", "cstddef": "stddef",
    "math.h": "math", "cmath": "math", "assert.h": "assert", "cassert": "assert",
    "stdio.h": None, "cstdio": None, "stdlib.h": None, "cstdlib": None, "string.h": None, "cstring": None,
    "stdbool.h": None,
}
CPP_HEADERS = ("limits", "type_traits", "utility", "algorithm")

_FLOAT = """\
#define FLT_RADIX 2
#define FLT_MANT_DIG 24
#define DBL_MANT_DIG 53
#define FLT_DIG 6
#define DBL_DIG 15
#define FLT_DECIMAL_DIG 9
#define DBL_DECIMAL_DIG 17
#define FLT_MIN_EXP (-125)
#define DBL_MIN_EXP (-1021)
#define FLT_MIN_10_EXP (-37)
#define DBL_MIN_10_EXP (-307)
#define FLT_MAX_EXP 128
#define DBL_MAX_EXP 1024
#define FLT_MAX_10_EXP 38
#define DBL_MAX_10_EXP 308
#define FLT_MAX 3.40282347e+38F
#define DBL_MAX 1.7976931348623157e+308
#define FLT_MIN 1.17549435e-38F
#define DBL_MIN 2.2250738585072014e-308
#define FLT_EPSILON 1.19209290e-07F
#define DBL_EPSILON 2.2204460492503131e-16
#define FLT_TRUE_MIN 1.40129846e-45F
#define DBL_TRUE_MIN 4.9406564584124654e-324
"""
_LIMITS = """\
#define CHAR_BIT 8
#define SCHAR_MIN (-128)
#define SCHAR_MAX 127
#define UCHAR_MAX 255
#define CHAR_MIN SCHAR_MIN
#define CHAR_MAX SCHAR_MAX
#define SHRT_MIN (-32768)
#define SHRT_MAX 32767
#define USHRT_MAX 65535
#define INT_MAX 2147483647
#define INT_MIN (-INT_MAX - 1)
#define UINT_MAX 4294967295U
#define LLONG_MAX 9223372036854775807LL
#define LLONG_MIN (-LLONG_MAX - 1LL)
#define ULLONG_MAX 18446744073709551615ULL
#define LONG_MAX __CC_LONG_MAX
#define LONG_MIN (-LONG_MAX - 1L)
#define ULONG_MAX (2UL * LONG_MAX + 1UL)
"""
_MATH = """\
#define M_E 2.7182818284590452354
#define M_LOG2E 1.4426950408889634074
#define M_LOG10E 0.43429448190325182765
#define M_LN2 0.69314718055994530942
#define M_LN10 2.30258509299404568402
#define M_PI 3.14159265358979323846
#define M_PI_2 1.57079632679489661923
#define M_PI_4 0.78539816339744830962
#define M_1_PI 0.31830988618379067154
#define M_2_PI 0.63661977236758134308
#define M_2_SQRTPI 1.12837916709551257390
#define M_SQRT2 1.41421356237309504880
#define M_SQRT1_2 0.70710678118654752440
#define INFINITY __CC_INFINITY
#define NAN __CC_NAN
#define HUGE_VALF INFINITY
#define HUGE_VAL __CC_HUGE_VAL
"""
# math.h's INFINITY and NAN are constant expressions (`__constant__ float c = INFINITY;`): GCC's builtins
# where NVRTC has them, else the bit patterns CUDA's math_constants.h uses.
_BUILTIN_CONSTANTS = """\
#if defined(__has_builtin)
#if __has_builtin(__builtin_huge_valf) && __has_builtin(__builtin_nanf) && __has_builtin(__builtin_huge_val)
#define __CC_INFINITY __builtin_huge_valf()
#define __CC_NAN __builtin_nanf("")
#define __CC_HUGE_VAL __builtin_huge_val()
#endif
#endif
#ifndef __CC_INFINITY
#define __CC_INFINITY __int_as_float(0x7f800000)
#define __CC_NAN __int_as_float(0x7fffffff)
#define __CC_HUGE_VAL __longlong_as_double(0x7ff0000000000000LL)
#endif
"""
_STDINT_TYPES = [
    ("int8_t", "signed char"), ("uint8_t", "unsigned char"), ("int16_t", "short"),
    ("uint16_t", "unsigned short"), ("int32_t", "int"), ("uint32_t", "unsigned int"),
    ("int64_t", "long long"), ("uint64_t", "unsigned long long"),  # as libcu++ has them under NVRTC
    ("intptr_t", "long long"), ("uintptr_t", "unsigned long long"), ("intmax_t", "long long"),
    ("uintmax_t", "unsigned long long"),
]
_STDINT_MACROS = """\
#define INT8_MIN (-128)
#define INT8_MAX 127
#define UINT8_MAX 255
#define INT16_MIN (-32768)
#define INT16_MAX 32767
#define UINT16_MAX 65535
#define INT32_MAX 2147483647
#define INT32_MIN (-INT32_MAX - 1)
#define UINT32_MAX 4294967295U
#define INT64_MAX 9223372036854775807LL
#define INT64_MIN (-INT64_MAX - 1LL)
#define UINT64_MAX 18446744073709551615ULL
#define SIZE_MAX 18446744073709551615ULL
#define INT32_C(c) c
#define UINT32_C(c) c ## U
#define INT64_C(c) c ## LL
#define UINT64_C(c) c ## ULL
"""
# glibc's <sys/types.h> names, which nvcc's cuda_runtime.h brings in with <stdlib.h>.
_GLIBC_TYPES = [("uint", "unsigned int"), ("ushort", "unsigned short"), ("ulong", "unsigned long")]
_ASSERT = """\
#define assert(e) ((e) ? (void)0 : (printf("%s:%d: %s: block [%d,%d,%d], thread [%d,%d,%d] Assertion `%s` failed.\\n", \\
    __FILE__, __LINE__, __func__, blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x, threadIdx.y, threadIdx.z, #e), __trap()))
"""


@functools.lru_cache(maxsize=None)
def _math_constants() -> str:
    """math_constants.h's CUDART_ names, as runtime.h defines them for the CPU (one list), in
    spellings NVRTC has: no GCC builtins."""
    text = (Path(__file__).parent / "runtime.h").read_text()
    block = text.split("// math_constants.h\n", 1)[1].split("\n\n", 1)[0]
    return (block.replace("__builtin_huge_valf()", "__int_as_float(0x7f800000)")
            .replace('__builtin_nanf("")', "__int_as_float(0x7fffffff)")
            .replace("__builtin_huge_val()", "__longlong_as_double(0x7ff0000000000000LL)")
            .replace('__builtin_nan("")', "__longlong_as_double(0xfff8000000000000ULL)") + "\n")


_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"]+)[>"][^\n]*', re.M)
_WORD = re.compile(r"[A-Za-z_]\w*")


def _defined(text: str) -> set:
    return set(re.findall(r"#define (\w+)", text))


def _guarded(block: str, words: set) -> str:
    """The #defines of `block` that the source names, and those they are defined with (INT_MIN is
    `(-INT_MAX - 1)`), each kept out where already defined."""
    lines = {m.group(1): line for line in block.splitlines(keepends=True) if (m := re.match(r"#define (\w+)", line))}
    wanted, grown = set(words) & set(lines), True
    while grown:
        needed = {w for name in wanted for w in _WORD.findall(lines[name].split(None, 2)[-1])} & set(lines)
        grown = not needed <= wanted
        wanted |= needed
    return "".join(f"#ifndef {name}\n{line}#endif\n" for name, line in lines.items() if name in wanted)


def for_nvrtc(code: str) -> str:
    """`code` as NVRTC compiles what nvcc would: see the module's docstring. Source that needs
    nothing comes back unchanged."""
    words = set(_WORD.findall(code))
    moved = []  # the includes taken out of the body, in order, as written

    def take(match):
        header = match.group(1).strip()
        if header in BUILT_IN or header in C_HEADERS or header in CPP_HEADERS:
            moved.append(match.group(0).strip())
            return ""
        return match.group(0)

    body = _INCLUDE.sub(take, code)
    headers = list(dict.fromkeys(_INCLUDE.match(line).group(1).strip() for line in moved))
    kinds = {C_HEADERS.get(h) for h in headers}
    nvrtc = []
    for header in headers:
        if header in BUILT_IN:
            continue
        if header in CPP_HEADERS:
            # libcu++'s version where the host's is missing; `std::numeric_limits` then finds it.
            nvrtc.append(f"#if __has_include(<{header}>)\n#include <{header}>\n"
                         f"#elif __has_include(<cuda/std/{header}>)\n#include <cuda/std/{header}>\n"
                         f"namespace std {{ using namespace ::cuda::std; }}\n#else\n#include <{header}>\n#endif\n")
            continue
        kind = C_HEADERS[header]
        flag = f"\n#define __CC_FOUND_{kind.upper()} 1" if kind in ("stdint", "stddef", "cudart") else ""
        nvrtc.append(f"#if __has_include(<{header}>)\n#include <{header}>{flag}\n#endif\n")
    if nvrtc:  # (__has_include: C++17, NVRTC's default; older dialects keep the fallbacks only)
        nvrtc = ["#if defined(__has_include)\n"] + nvrtc + ["#endif\n"]
    # Macros: each that the source names and nothing defined, whether or not the source includes
    # the header (nvcc's cuda_runtime.h brings math.h's M_PI and INFINITY in by itself).
    if words & {"LONG_MAX", "LONG_MIN", "ULONG_MAX"}:
        nvrtc.append("#ifdef _WIN32\n#define __CC_LONG_MAX 2147483647L\n#else\n"
                     "#define __CC_LONG_MAX 9223372036854775807L\n#endif\n")
    macros = _guarded(_FLOAT + _LIMITS + _MATH, words)
    if "__CC_INFINITY" in macros or "__CC_NAN" in macros or "__CC_HUGE_VAL" in macros:
        nvrtc.append(_BUILTIN_CONSTANTS)
    nvrtc.append(macros)
    if "assert" in words:
        nvrtc.append("#ifndef assert\n" + _ASSERT + "#endif\n")
    stdint_names = {name for name, _ in _STDINT_TYPES}
    if words & stdint_names or words & _defined(_STDINT_MACROS):
        # Typedefs cannot be guarded by name: they are left out where a <cstdint> was found.
        nvrtc.append("#ifndef __CC_FOUND_STDINT\n" + "".join(f"typedef {c} {name};\n" for name, c in _STDINT_TYPES)
                     + "namespace std { " + " ".join(f"using ::{name};" for name, _ in _STDINT_TYPES) + " }\n"
                     + _guarded(_STDINT_MACROS, words) + "#endif\n")
    if re.search(r"\bstd\s*::\s*(size_t|ptrdiff_t|nullptr_t)\b", code):
        nvrtc.append("#ifndef __CC_FOUND_STDDEF\nnamespace std { typedef decltype(sizeof(0)) size_t; "
                     "typedef decltype((char*)0 - (char*)0) ptrdiff_t; typedef decltype(nullptr) nullptr_t; }\n#endif\n")
    if "cudart" in kinds or any(w.startswith("CUDART_") for w in words):
        nvrtc.append("#ifndef __CC_FOUND_CUDART\n" + _guarded(_math_constants(), words) + "#endif\n")
    nvrtc.extend(f"typedef {c} {name};\n" for name, c in _GLIBC_TYPES if name in words)
    nvrtc = "".join(nvrtc)
    if not nvrtc and not moved:
        return code
    nvcc = "".join(line + "\n" for line in moved)  # any other compiler: the includes as written
    return ("#ifdef __CUDACC_RTC__\n// course.cuda: what nvcc's host headers would give (course/cuda/nvrtc.py)\n"
            + nvrtc + "#else\n" + nvcc + "#endif\n#line 1\n" + body)


# ----------------------------------------------------------------------------------------
# NVRTC itself, without a GPU: the library ships with PyTorch's CUDA wheels (and with CuPy), and it
# compiles a kernel to PTX on any machine, with or without a driver.
# ----------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def _library():
    """(libnvrtc loaded with ctypes, the folder of its CUDA headers), or None where no NVRTC is installed:
    the pip wheels' `nvidia/*/lib/libnvrtc.so.*` (its builtins library loaded first, as the wheels set no
    library path), else the system's."""
    import ctypes
    import sys

    folders = [Path(p) / "nvidia" for p in sys.path if p.endswith("site-packages")]
    candidates = sorted((lib for folder in folders if folder.is_dir() for lib in folder.glob("*/lib/libnvrtc.so.*")
                         if "alt" not in lib.name), key=lambda lib: lib.name, reverse=True)
    for lib in candidates:
        try:
            for builtins in sorted(lib.parent.glob("libnvrtc-builtins.so.*")):
                if "alt" not in builtins.name:
                    ctypes.CDLL(str(builtins), mode=ctypes.RTLD_GLOBAL)
            return ctypes.CDLL(str(lib)), lib.parent.parent / "include"
        except OSError:
            continue
    for name in ("libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"):
        try:
            return ctypes.CDLL(name), None
        except OSError:
            continue
    return None


def available() -> bool:
    """Whether NVRTC can be loaded here (compile_ptx works), GPU or not."""
    return _library() is not None


def compile_ptx(code: str, options=(), arch: str = "compute_80") -> str:
    """The PTX NVRTC makes of `code` (as ``for_nvrtc`` gives it to CuPy) for `arch` (the CPU backend
    emulates sm_80): what CuPy would compile on a GPU, here without one. A kernel that NVRTC refuses raises
    CompileError with NVRTC's log (the learner's line numbers); no NVRTC installed raises RuntimeError."""
    import ctypes

    from .errors import CompileError

    found = _library()
    if found is None:
        raise RuntimeError("NVRTC is not installed here: it comes with PyTorch's CUDA wheels and with CuPy "
                           "(pip install cupy-cuda12x), or with the CUDA toolkit")
    lib, include = found
    program = ctypes.c_void_p()
    if lib.nvrtcCreateProgram(ctypes.byref(program), for_nvrtc(code).encode(), b"kernel.cu", 0, None, None):
        raise RuntimeError("NVRTC could not create a program")
    try:
        # (the CUDA headers, and CCCL's where the nvidia-cuda-cccl wheel put them: cooperative groups need them)
        folders = [include, include / "cccl"] if include else []
        flags = [f"--gpu-architecture={arch}", *options] + [f"-I{folder}" for folder in folders if folder.is_dir()]
        encoded = [flag.encode() for flag in flags]
        status = lib.nvrtcCompileProgram(program, len(encoded), (ctypes.c_char_p * len(encoded))(*encoded))
        size = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(program, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetProgramLog(program, log)
        if status:
            raise CompileError(f"NVRTC ({arch}) does not compile it:\n{log.value.decode(errors='replace').strip()}")
        lib.nvrtcGetPTXSize(program, ctypes.byref(size))
        ptx = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetPTX(program, ptx)
        return ptx.value.decode()
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(program))
