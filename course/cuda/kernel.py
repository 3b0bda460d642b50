"""``RawKernel``: one CUDA C kernel, launched like ``cupy.RawKernel`` on either backend
(notebook 01).

On the "cupy" backend the source goes to CuPy (NVRTC) and runs on the GPU; on the "cpu"
backend cpu.py compiles it for the CPU. Either way the arguments are checked first against
the kernel's own parameter list, which CuPy does not do: a Python int passed to an `int`
parameter is sent as a 4-byte int32, and a wrong dtype is a TypeError instead of garbage.
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import functools
import math
import os
import pickle
import re
import struct
import sys
import tempfile
import warnings
import weakref

import numpy as np

from . import cpu, fast, host
from .errors import CompileError, KernelError, KernelWarning
from .nvrtc import for_nvrtc
from .source import Kernel, Param, Source, instantiate, parse, template_example, without_comments

#: Seconds a launch may run on the CPU backend before it is stopped with a KernelError.
DEFAULT_TIME_LIMIT = 5.0
BACKENDS = ("cpu", "cupy")

# CUDA's limits, checked on both backends so that the CPU does not accept what a GPU refuses.
MAX_BLOCK = (1024, 1024, 64)
MAX_THREADS_PER_BLOCK = 1024
MAX_GRID = (2**31 - 1, 65535, 65535)
MAX_DYNAMIC_SHARED = cpu.MAX_SHARED_BYTES
#: Shared memory a block of a kernel that opts in (``kernel.max_dynamic_shared_size_bytes = ...``) may use
#: on the GPU the CPU backend emulates, an A100 (sm_80): 163 KiB, its static __shared__ arrays included.
MAX_SHARED_OPTIN = cpu.MAX_SHARED_OPTIN
#: How many access and branch records kernel.profile keeps (24 bytes each: 384 MB).
PROFILE_MAX_ACCESSES = 16 * 1024 * 1024


def _cupy_usable() -> bool:
    from course import env  # imported here: `import course.cuda` stays light

    return env.cupy_usable()


def backend() -> str:
    """Where kernels run: "cupy" with a usable GPU, else "cpu" (COURSE_CUDA_BACKEND=cpu|cupy forces one)."""
    forced = os.environ.get("COURSE_CUDA_BACKEND", "").strip().lower()
    if forced in ("", "auto"):
        return "cupy" if _cupy_usable() else "cpu"
    if forced not in BACKENDS:
        raise ValueError(f"COURSE_CUDA_BACKEND={forced!r}: use 'cpu' or 'cupy', or unset it")
    if forced == "cupy" and not _cupy_usable():
        raise RuntimeError(
            "COURSE_CUDA_BACKEND=cupy, but CuPy cannot run kernels here (CuPy missing, or no GPU "
            "or driver). Unset COURSE_CUDA_BACKEND to use the CPU backend."
        )
    return forced


def _options(options) -> tuple:
    """NVRTC options as a tuple of str: a single str would be read one character at a time."""
    if isinstance(options, (str, bytes)):
        raise TypeError(f"options must be a tuple of strings, e.g. options=({options!r},) (with the comma): a single "
                        "string would be read one character at a time")
    options = tuple(options)
    wrong = next((o for o in options if not isinstance(o, str)), None)
    if wrong is not None:
        raise TypeError(f"options must be a tuple of strings, e.g. ('-DN=4', '-std=c++17'); got {wrong!r} in it")
    return options


#: NVRTC's compile options (https://docs.nvidia.com/cuda/nvrtc/index.html#supported-compile-options), long name,
#: short name and what follows: None (a flag), "value" (anything), "int", "arch", "bool" ({true|false}), "flag or
#: bool" (either), or the tuple of the values it takes. --expt-relaxed-constexpr and --expt-extended-lambda are nvcc's,
#: which NVRTC takes too.
_NVRTC_OPTIONS = (
    ("--gpu-architecture", "-arch", "arch"), ("--device-c", "-dc", None), ("--device-w", "-dw", None),
    ("--relocatable-device-code", "-rdc", "bool"), ("--extensible-whole-program", "-ewp", None),
    ("--device-debug", "-G", None), ("--generate-line-info", "-lineinfo", None), ("--dopt", "-dopt", ("on", "off")),
    ("--Ofast-compile", "-Ofc", ("0", "min", "mid", "max")), ("--ptxas-options", "-Xptxas", "value"),
    ("--maxrregcount", "-maxrregcount", "int"), ("--ftz", "-ftz", "bool"), ("--prec-sqrt", "-prec-sqrt", "bool"),
    ("--prec-div", "-prec-div", "bool"), ("--fmad", "-fmad", "bool"), ("--use_fast_math", "-use_fast_math", None),
    ("--extra-device-vectorization", "-extra-device-vectorization", None),
    ("--modify-stack-limit", "-modify-stack-limit", "bool"), ("--dlink-time-opt", "-dlto", None),
    ("--gen-opt-lto", "-gen-opt-lto", None), ("--optix-ir", "-optix-ir", None),
    ("--jump-table-density", "-jtd", "int"), ("--device-stack-protector", "-device-stack-protector", "flag or bool"),
    ("--no-cache", "-no-cache", None), ("--frandom-seed", "-frandom-seed", "value"),
    ("--define-macro", "-D", "value"), ("--undefine-macro", "-U", "value"), ("--include-path", "-I", "value"),
    ("--pre-include", "-include", "value"), ("--no-source-include", "-no-source-include", None),
    ("--std", "-std", ("c++03", "c++11", "c++14", "c++17", "c++20")),
    ("--builtin-move-forward", "-builtin-move-forward", "bool"),
    ("--builtin-initializer-list", "-builtin-initializer-list", "bool"), ("--pch", "-pch", None),
    ("--create-pch", "-create-pch", "value"), ("--use-pch", "-use-pch", "value"), ("--pch-dir", "-pch-dir", "value"),
    ("--pch-verbose", "-pch-verbose", "bool"), ("--pch-messages", "-pch-messages", "bool"),
    ("--instantiate-templates-in-pch", "-instantiate-templates-in-pch", "bool"),
    ("--disable-warnings", "-w", None), ("--restrict", "-restrict", None),
    ("--device-as-default-execution-space", "-default-device", None), ("--device-int128", "-device-int128", None),
    ("--device-float128", "-device-float128", None), ("--optimization-info", "-opt-info", "value"),
    ("--display-error-number", "-err-no", None), ("--no-display-error-number", "-no-err-no", None),
    ("--diag-error", "-diag-error", "value"), ("--diag-suppress", "-diag-suppress", "value"),
    ("--diag-warn", "-diag-warn", "value"), ("--brief-diagnostics", "-brief-diag", "bool"),
    ("--time", "-time", "value"), ("--split-compile", "-split-compile", "int"),
    ("--fdevice-syntax-only", "-fdevice-syntax-only", None), ("--minimal", "-minimal", None),
    ("--fdevice-time-trace", "-fdevice-time-trace", "value"),
    ("--expt-relaxed-constexpr", "-expt-relaxed-constexpr", None),
    ("--expt-extended-lambda", "-expt-extended-lambda", None),
)
_NVRTC_BY_NAME = {name: (long, kind) for long, short, kind in _NVRTC_OPTIONS for name in (long, short)}
_NVRTC_DOCS = "https://docs.nvidia.com/cuda/nvrtc/index.html#supported-compile-options"


def _check_nvrtc_options(options: tuple) -> None:
    """A CompileError for an option NVRTC would refuse (`--bogus`, `-O3`, `-std=c++99`): on a GPU, CuPy's NVRTC
    fails to compile with it, and the CPU backend, which uses only -D, would otherwise ignore it."""
    i = 0
    while i < len(options):
        option = options[i]
        i += 1
        if re.fullmatch(r"-[DUI].*", option):  # -DN=4, -D=N, -D N=4, or -D then N=4 as the next option
            if option[2:].lstrip("= ") == "":
                if i >= len(options):
                    raise CompileError(f"option {option!r} needs a value after it, e.g. {option.strip()}N=4"
                                       if option.startswith("-D") else f"option {option!r} needs a value after it")
                i += 1
            continue
        name, equals, value = option.partition("=")
        name = name.strip()
        known = _NVRTC_BY_NAME.get(name)
        if known is None:
            valid = ", ".join(long for long, _, _ in _NVRTC_OPTIONS)
            hint = ("NVRTC has no -O levels: it optimizes by default (--dopt=on; -G turns optimizing off)"
                    if re.fullmatch(r"-O\d?|--optimize", name) else
                    "nvcc's host-compiler options (-Xcompiler, -ccbin, -l, -L, -o) mean nothing to NVRTC, which "
                    "compiles device code only" if name in ("-Xcompiler", "--compiler-options", "-ccbin", "-l", "-L",
                                                            "-o", "-c", "--compiler-bindir") else
                    "is it misspelt?")
            raise CompileError(f"option {option!r} is not one of NVRTC's ({hint}), and CuPy's NVRTC refuses to "
                               f"compile with it on a GPU. NVRTC takes -D, -U, -I, -std=c++17 (c++03 to c++20), "
                               f"--use_fast_math, -arch=sm_80, -G, -lineinfo and its other options: {valid} (each "
                               f"with a short name too; see {_NVRTC_DOCS})")
        long, kind = known
        if kind is None:
            if equals:
                raise CompileError(f"option {option!r}: {long} takes no value; write {name!r}")
            continue
        if not equals and kind != "flag or bool":
            if i >= len(options):  # (`--gpu-architecture compute_80`: the value as the next option)
                raise CompileError(f"option {option!r} needs a value, e.g. {_option_example(name, kind)}")
            value = options[i]
            i += 1
        elif not equals:
            continue
        choices = (("true", "false") if kind in ("bool", "flag or bool") else kind if isinstance(kind, tuple)
                   else None)
        wrong = (choices is not None and value not in choices
                 or kind == "int" and not re.fullmatch(r"\d+", value)
                 or kind == "arch" and not re.fullmatch(r"(?:compute|sm|lto)_\d+[af]?", value)
                 or kind == "value" and not value)
        if wrong:
            takes = (" or ".join(choices) if choices else "a whole number" if kind == "int" else
                     "an architecture such as sm_80 or compute_80" if kind == "arch" else "a value")
            raise CompileError(f"option {option!r}: NVRTC's {long} takes {takes}, e.g. "
                               f"{_option_example(name, kind)}; CuPy's NVRTC refuses {value!r} on a GPU")


def _option_example(name: str, kind) -> str:
    """An example of option `name` with a value of `kind` (_NVRTC_OPTIONS)."""
    value = {"bool": "true", "flag or bool": "true", "int": "32", "arch": "sm_80"}.get(kind) if not isinstance(
        kind, tuple) else ("c++17" if "c++17" in kind else kind[0])
    return f"'{name}={value or 'VALUE'}'"


def _time_limit(value) -> float:
    """Seconds a CPU launch may run: `value`, or COURSE_CUDA_TIME_LIMIT, or the default; a positive number."""
    limit = value if value is not None else os.environ.get("COURSE_CUDA_TIME_LIMIT", DEFAULT_TIME_LIMIT)
    where = "time_limit" if value is not None else "COURSE_CUDA_TIME_LIMIT"
    try:
        seconds = float(limit)
    except (TypeError, ValueError):
        seconds = float("nan")
    if not seconds > 0 or isinstance(limit, bool):
        raise ValueError(f"{where} must be a positive number of seconds (e.g. 10), got {limit!r}")
    return seconds


@functools.lru_cache(maxsize=256)
def _parse(text: str, options: tuple = ()) -> Source:
    source = parse(text, options)
    if source.host_code:
        raise CompileError(host_code_message(source))
    return source


def host_code_message(source: Source) -> str:
    """A whole .cu file pasted into RawKernel: which host lines it has, and how Python does their part."""
    seen, parts = set(), []
    for spelling, line in source.host_code:
        if spelling not in seen:
            seen.add(spelling)
            parts.append(f"{spelling} at line {line}")
    listed = ", ".join(parts[:4]) + (", ..." if len(parts) > 4 else "")
    return ("this source has host code, which RawKernel and RawModule do not compile (nor does CuPy's NVRTC): "
            f"{listed}. Keep only the __global__ and __device__ functions in the string and do the host's part in "
            "Python: arrays with xp.zeros(...) or xp.asarray(host_array) instead of cudaMalloc and cudaMemcpy, and "
            "kernel((blocks,), (threads,), (args...)) instead of kernel<<<blocks, threads>>>(args...); "
            "cuda.synchronize() waits for the GPU.")


def unsupported_message(kernel: Kernel) -> str:
    """Why the CPU backend refuses `kernel`, and what to do instead."""
    spelling, line, what, instead = kernel.unsupported
    return (f"kernel '{kernel.name}' uses {spelling} (line {line}): {what}, which the CPU backend cannot "
            f"run. Instead: {instead}. (On Colab: Runtime > Change runtime type > GPU, then the kernel "
            "runs on CuPy.)")


def _kernel_named(source: Source, name: str, module: bool = False) -> Kernel:
    """source.kernel(name), with a message of its own where the source has no __global__ function of that name:
    every kernel listed (extern "C" and C++ ones, saying which need name_expressions), and a __device__
    function or a variable asked for by name said to be one."""
    base = name.split("<", 1)[0].strip()
    named = set(source.kernels) | set(source.not_extern_c) | set(source.templates)
    if name in named or ("<" in name and base in named):
        return source.kernel(name)
    extern_c = sorted(source.kernels)
    cpp = sorted({f"{f.qualifier}{f.name}" + ("<...>" if f.template else "") for f in source.templates.values()}
                 | (set(source.not_extern_c) - set(source.templates)))
    close = difflib.get_close_matches(name, extern_c + [c.split("<")[0] for c in cpp], n=1, cutoff=0.6)
    parts = []
    if extern_c:
        parts.append(f"extern \"C\" {_plural(len(extern_c), 'kernel', say=False)} {', '.join(extern_c)}"
                     + (f" (get_function('{extern_c[0]}'))" if module else f" (RawKernel(code, '{extern_c[0]}'))"))
    if cpp:
        example = next((c for c in cpp if close and c.split("<")[0] == close[0]), cpp[0]).replace("<...>", "<float>")
        parts.append(f"C++ {_plural(len(cpp), 'kernel', say=False)} {', '.join(cpp)}, which "
                     + ("need" if len(cpp) > 1 else "needs") + " a name expression first: "
                     + (f"RawModule(..., name_expressions=['{example}']), then get_function('{example}')"))
    kernels = "; ".join(parts) if parts else "none"
    bare = name.rpartition("::")[2].strip()
    code = without_comments(source.text)
    if re.fullmatch(r"[A-Za-z_]\w*", bare) and re.search(rf"\b__device__\b[^;{{}}=()]*?\b{bare}\s*\(", code):
        raise CompileError(f"'{name}' is a __device__ function, not a kernel: a launch starts a __global__ function, "
                           f"and that calls the __device__ ones. The source's kernels: {kernels}")
    if bare in source.globals:
        raise CompileError(f"'{name}' is a __constant__ or __device__ variable, not a kernel: fill or read it with "
                           f"{'' if module else 'RawModule(code=...).'}get_global('{name}'). The source's kernels: "
                           f"{kernels}")
    raise CompileError(f"the source defines no __global__ function named '{name}'"
                       + (f" (spaces around it: write '{name.strip()}')" if name.strip() in named else
                          f" (did you mean '{close[0]}'?)" if close else "") + f". Its kernels: {kernels}")


def _plural(count: int, word: str, say: bool = True) -> str:
    """'1 thread', '2 threads' (say=False: the word alone, in the form `count` takes)."""
    form = word if count == 1 else word + "s"
    return f"{count:,} {form}" if say else form


def _read_only(what: str, attribute: str):
    """The AttributeError for setting a kernel's or module's code, name or options (CuPy's are read-only too)."""
    new = ("RawKernel(new_code, name, options)" if what == "RawKernel" else "RawModule(code=new_code, options=...)")
    raise AttributeError(f"{what}.{attribute} is read-only, as in CuPy: the kernel was read (and is compiled) from "
                         f"what it was made with. Make a new one instead: {new}")


#: The version of what RawKernel and RawModule pickle (__getstate__): a pickle of another is refused, as CuPy's.
_PICKLE_VERSION = 1


def _check_stream(stream, kernel: str) -> None:
    """`stream=` of a launch: None, or a stream as CuPy takes it (cupy.cuda.Stream, ExternalStream: it has `ptr`)."""
    if stream is not None and not hasattr(stream, "ptr"):
        torch_stream = hasattr(stream, "cuda_stream")
        raise TypeError(f"kernel '{kernel}': stream must be a CuPy stream (cupy.cuda.Stream(), "
                        f"cupy.cuda.get_current_stream()) or None, as with CuPy; got {type(stream).__name__}"
                        + ("; a torch stream goes to CuPy as cupy.cuda.ExternalStream(s.cuda_stream)"
                           if torch_stream else ""))


class RawKernel:
    """A CUDA C kernel from source, ``RawKernel(code, name, options=())``, called as
    ``kernel(grid, block, args, shared_mem=0, stream=None)`` like CuPy's.

    ``backend``: "auto" (see ``backend()``), "cpu" or "cupy". ``options``: NVRTC options, as a
    tuple (on the CPU only ``-DNAME=VALUE`` matters, and an option NVRTC does not have is refused
    as NVRTC refuses it). ``time_limit``: seconds a CPU launch may run (default
    ``DEFAULT_TIME_LIMIT``, or $COURSE_CUDA_TIME_LIMIT). ``sanitize``: True or False, run the CPU
    backend's racecheck, initcheck and read-only check (None: see ``choose_sanitize`` for the default).
    On the CPU backend a plain launch runs its blocks on every core ($COURSE_CUDA_THREADS worker
    threads, see ``cpu.worker_threads``); a sanitized launch runs them one after another.
    ``stream=``: on CuPy, the ``cupy.cuda.Stream`` the launch goes to (None: the current stream), as
    with CuPy; the CPU backend takes a stream or None and runs the launch at once, synchronously
    (it has finished when the call returns).

    ``code``, ``name`` and ``options`` are read-only, as CuPy's are: make a new kernel for new
    source. A kernel pickles and copies (``copy.deepcopy``) as CuPy's does, by its source, name,
    options and settings; the copy compiles again at its first launch.

    Arguments are checked on both backends. Faults inside the kernel (out-of-bounds accesses,
    barriers, the time limit) are caught on the CPU backend only: a GPU cannot stop a kernel
    before a bad access, and it enforces no time limit. Run a kernel with ``backend="cpu"``
    to find such a bug.
    """

    def __init__(self, code: str, name: str, options=(), backend: str = "auto", *, time_limit=None,
                 sanitize=None, **cupy_only):
        if not isinstance(code, str):
            raise TypeError(f"code must be the kernel's CUDA C source as a str, got {type(code).__name__}")
        if not isinstance(name, str):
            raise TypeError(f"name must be the kernel's name as a str, got {type(name).__name__}")
        code = code.removeprefix("\ufeff")  # a byte-order mark (a file saved on Windows): no C
        if "__global__" in name or ("\n" in name and "__global__" not in code):
            raise TypeError("RawKernel(code, name): the CUDA C source comes first, then the kernel's name, e.g. "
                            "RawKernel(SOURCE, 'vector_add')")
        self._code, self._name, self._options = code, name, _options(options)
        self._cupy_only = _cupy_keywords(cupy_only, "RawKernel")  # e.g. enable_cooperative_groups=True: CuPy's
        self.backend = _choose_backend(backend)
        if self.backend == "cpu":
            _check_nvrtc_options(self.options)
        self.sanitize = choose_sanitize(sanitize, backend)
        self.time_limit = _time_limit(time_limit)
        self._source = _parse(code, self.options)
        self._module = None
        self._unchecked = False
        if self.backend == "cupy" and name in self._source.problems:
            # CuPy launches what the course cannot check (a float** parameter, say): let it.
            print(f"note: kernel '{name}': {self._source.problems[name]}; on CuPy its arguments go unchecked.",
                  file=sys.stderr)
            self._unchecked = True
            self._kernel = Kernel(name, (), self._source.kernels[name].line, call=name)
        else:
            self._kernel: Kernel = _kernel_named(self._source, name)  # CompileError if absent or unreadable
        if self.backend == "cpu" and self._kernel.unsupported:
            raise CompileError(unsupported_message(self._kernel))
        self._compiled = None
        self._repeat = None  # the last launch's key (_launch_key) and what it checked and packed
        self._fast = None  # the module with fast.py's path compiled in (_fast_module), once a large launch needs it
        self._warned: set = set()  # what launches of this kernel warned about (each said once)
        self._rules: _LaunchRules | None = None  # what the source says about its launches (read at the first)
        self._max_dynamic_shared: int | None = None  # max_dynamic_shared_size_bytes, where the program set it

    code = property(lambda self: self._code, lambda self, value: _read_only("RawKernel", "code"),
                    doc="The kernel's CUDA C source (read-only, as CuPy's).")
    name = property(lambda self: self._name, lambda self, value: _read_only("RawKernel", "name"),
                    doc="The kernel's name (read-only, as CuPy's).")
    options = property(lambda self: self._options, lambda self, value: _read_only("RawKernel", "options"),
                       doc="The NVRTC options (read-only, as CuPy's).")

    @property
    def params(self) -> tuple[Param, ...]:
        """The kernel's parameters as read from its source."""
        return self._kernel.params

    def __getstate__(self) -> dict:
        """What a pickle or a copy keeps, as CuPy's RawKernel: the source, name, options and settings, not the
        compiled module (a ctypes library here, a CUDA module on a GPU), which the copy compiles again."""
        return {"version": _PICKLE_VERSION, "code": self._code, "name": self._name, "options": self._options,
                "backend": self.backend, "sanitize": self.sanitize, "time_limit": self.time_limit,
                "cupy_only": dict(self._cupy_only), "max_dynamic_shared_size_bytes": self._max_dynamic_shared,
                "module": self._module}

    def __setstate__(self, state: dict) -> None:
        if not isinstance(state, dict) or state.get("version") != _PICKLE_VERSION:
            raise pickle.UnpicklingError("this pickled RawKernel comes from another version of course.cuda: make the "
                                         "kernel again from its source")
        if state["module"] is not None:  # (a kernel of a RawModule: the module's again)
            self.__dict__.update(state["module"].get_function(state["name"]).__dict__)
        else:
            RawKernel.__init__(self, state["code"], state["name"], state["options"], backend=state["backend"],
                               time_limit=state["time_limit"], sanitize=state["sanitize"], **state["cupy_only"])
        self.sanitize, self.time_limit = state["sanitize"], state["time_limit"]
        self._max_dynamic_shared = state["max_dynamic_shared_size_bytes"]  # (set on a GPU's kernel as it compiles)

    def __repr__(self) -> str:
        return f"<RawKernel {self._kernel.signature()} on {self.backend}>"

    @property
    def max_dynamic_shared_size_bytes(self) -> int:
        """The most dynamic shared memory (``shared_mem``) a launch of this kernel may ask for, as
        ``cupy.RawKernel``'s attribute (CUDA's ``cudaFuncAttributeMaxDynamicSharedMemorySize``): 48 KiB
        unless raised. A kernel that needs more opts in by setting it, e.g. to 100 KiB::

            kernel.max_dynamic_shared_size_bytes = 100 * 1024
            kernel(grid, block, args, shared_mem=100 * 1024)

        How far depends on the GPU (a block's static ``__shared__`` arrays count too): 163 KiB on an
        A100, which the CPU backend emulates, 227 KiB on an H100, 99 KiB on RTX 30 and 40 cards, 64 KiB
        on a T4."""
        if self._max_dynamic_shared is None and self.backend == "cupy" and not self._unchecked_attribute():
            return int(self.compile()._compiled.kernel.max_dynamic_shared_size_bytes)
        return MAX_DYNAMIC_SHARED if self._max_dynamic_shared is None else self._max_dynamic_shared

    @max_dynamic_shared_size_bytes.setter
    def max_dynamic_shared_size_bytes(self, value) -> None:
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 0:
            raise ValueError(f"kernel '{self.name}': max_dynamic_shared_size_bytes must be a number of bytes >= 0, "
                             f"got {value!r}")
        value = int(value)
        if self.backend == "cpu" and value > MAX_SHARED_OPTIN:
            raise ValueError(
                f"kernel '{self.name}': max_dynamic_shared_size_bytes={value:,}, but a block of the A100 that the CPU "
                f"backend emulates has at most {MAX_SHARED_OPTIN:,} bytes (163 KiB) of shared memory in all, its "
                "static __shared__ arrays included: use smaller tiles")
        if self.backend == "cupy" and not self._unchecked_attribute():
            try:
                self.compile()._compiled.kernel.max_dynamic_shared_size_bytes = value
            except Exception as error:  # CUDADriverError: CUDA_ERROR_INVALID_VALUE, more than this GPU has
                if type(error).__name__ not in ("CUDADriverError", "CUDARuntimeError"):
                    raise
                raise ValueError(
                    f"kernel '{self.name}': this GPU refuses max_dynamic_shared_size_bytes={value:,} ({error}): its "
                    "blocks have less shared memory (with the kernel's static __shared__ arrays): use smaller "
                    "tiles") from error
        self._max_dynamic_shared = value

    def __getattr__(self, name: str):
        """cupy.RawKernel's read-only attributes of the compiled kernel (``num_regs``, ``max_threads_per_block``,
        ``shared_size_bytes``, ``local_size_bytes``, ``const_size_bytes``, ``ptx_version``, ``binary_version``,
        ``attributes``, ...): the GPU compiler's figures, read from CuPy's kernel on a GPU. The CPU backend has no
        GPU binary, so there they are an AttributeError that says so and where the figures come from instead."""
        if name not in _CUPY_KERNEL_ATTRIBUTES or name.startswith("_"):
            raise AttributeError(f"'RawKernel' object has no attribute {name!r}")
        if self.backend == "cupy":
            return getattr(self.compile()._compiled.kernel, name)
        bound = self._kernel.max_threads
        raise AttributeError(
            f"kernel '{self.name}': {name} is a fact of the GPU binary that CuPy reads from the driver (registers, "
            "shared and local memory, the PTX version), and the CPU backend compiles no GPU binary: read it on a "
            "GPU (backend 'cupy'). "
            + (f"This kernel's __launch_bounds__ allows at most {bound} threads a block. " if bound else
               "Without __launch_bounds__ a block may have up to 1024 threads. ")
            + "For occupancy, course.cuda.occupancy.occupancy(threads_per_block, gpu_name=..., "
              "registers_per_thread=..., shared_bytes=...) takes the figures you give it (notebook 03).")

    def _unchecked_attribute(self) -> bool:
        """(CuPy backend) Whether the compiled kernel has no such attribute to read or set (an old CuPy)."""
        return not hasattr(type(self.compile()._compiled.kernel), "max_dynamic_shared_size_bytes")

    def compile(self, log_stream=None):
        """Compile now instead of at the first launch (CuPy compiles lazily too); returns self.
        ``log_stream`` (sys.stdout, a file), as with CuPy: where NVRTC's log goes on a GPU."""
        if self._compiled is None:
            if self._module is not None:
                self._compiled = self._module._function(self.name)
            elif self.backend == "cpu":
                self._compiled = cpu.load(self._source, self.options, self.name, sanitize=self.sanitize)
            else:
                self._compiled = _CupyKernel(self.code, self.name, self.options, cupy_only=self._cupy_only,
                                             log_stream=log_stream)
            if (self.backend == "cupy" and self._max_dynamic_shared is not None
                    and hasattr(type(self._compiled.kernel), "max_dynamic_shared_size_bytes")):
                # (a kernel unpickled, or copied, after it opted in: the new GPU kernel opts in too)
                self._compiled.kernel.max_dynamic_shared_size_bytes = self._max_dynamic_shared
        return self

    def __call__(self, grid, block, args, *extra, shared_mem: int = 0, stream=None):
        """Launch on ``grid`` blocks of ``block`` threads (ints or 1–3 tuples) with ``args``. ``stream``: as
        with CuPy, the stream the launch goes to on a GPU (None: the current one); on the CPU backend a stream
        or None, and the launch runs synchronously: it has finished when the call returns. (`extra`: the
        arguments spread out after the first, `k(grid, block, a, b, n)`: told to make them one tuple.)"""
        if extra:
            raise TypeError(f"kernel '{self.name}': the kernel's arguments go in one tuple, the third argument: "
                            f"k(grid, block, (a, b, n)); this call passed {1 + len(extra)} separate values after grid and block "
                            "(CuPy's RawKernel takes them the same way)")
        key = _launch_key(grid, block, args, shared_mem) if (self.backend == "cpu" and stream is None and not self.sanitize
                                                               and not self._unchecked) else None
        if key is not None and self._repeat is not None and self._repeat[0] == key and not self._compiled.sanitized:
            # the launch before, again (a timing loop): the same arrays and scalars, checked and packed then
            self._launch_cpu(*self._repeat[1:])
            return
        _check_stream(stream, self.name)
        grid3, block3 = self._launch_shape(grid, block, shared_mem)
        values = list(args) if self._unchecked else check_args(self._kernel, args, self.backend)
        if self.backend == "cpu":
            cpu.worker_threads()  # a bad COURSE_CUDA_THREADS fails now, not after compiling
        self.compile()
        if not self._unchecked:  # (after compiling: a kernel that does not compile has no launch to warn about)
            if self._rules is None:
                self._rules = _launch_rules(self._source, self._kernel)
            for message in launch_warnings(self._rules, self._kernel.params, grid3, block3, values):
                if message not in self._warned:  # (each once per kernel)
                    self._warned.add(message)
                    warnings.warn(message, KernelWarning, stacklevel=cpu._user_level())
        if self.backend == "cpu":
            packed, arrays, keep = _pack_for_cpu(self._kernel, values, self.sanitize)
            if self._compiled.source.global_pointers:  # (only a __device__ pointer variable can keep an address)
                _remember_owners(self._compiled, keep)
            if key is not None and not self._compiled.source.global_pointers \
                    and all(v is a for p, v, a in zip(self._kernel.params, values, args) if p.pointer or p.by_value_struct):
                self._repeat = (key, grid3, block3, packed, int(shared_mem), arrays)  # (no array was converted)
            self._launch_cpu(grid3, block3, packed, int(shared_mem), arrays)
            del keep
        else:
            self._compiled.launch(grid3, block3, values, int(shared_mem), stream)

    def profile(self, grid, block, args, *, shared_mem: int = 0, flops: int | None = None,
                max_accesses: int = PROFILE_MAX_ACCESSES):
        """Run one launch on the CPU backend, recording every memory access and branch of every
        thread, and return its ``course.cuda.profile.Profile``: sectors per request, bank
        conflicts, divergence and occupancy, as a GPU's memory system would see them (a model,
        not a measurement; see ``Profile``). The launch runs with the sanitizer on, and its
        results land in ``args`` as from a normal launch (CuPy arrays are copied to the host
        and back). ``flops``: the launch's floating-point operations, for arithmetic intensity.
        ``max_accesses``: a bound on the records kept; a larger launch is refused — profile a
        smaller size (the per-request figures do not depend on the grid's size)."""
        from .profile import Profile, from_records

        if self._unchecked:
            raise CompileError(f"kernel '{self.name}': {self._source.problems[self.name]}; the CPU backend "
                               "cannot run it, so it cannot be profiled")
        grid3, block3 = self._launch_shape(grid, block, shared_mem)
        host, back = [], []
        for value in (args if isinstance(args, (tuple, list)) else [args]):
            if _is_cupy_array(value):
                copy = value.get()
                host.append(copy)
                back.append((value, copy))
            else:
                host.append(value)
        values = check_args(self._kernel, host, "cpu")
        module = cpu.load(self._source, self.options, self.name, self._instances(), trace=True)
        packed, arrays, keep = _pack_for_cpu(self._kernel, values, True)
        records, full = cpu.launch(module, self._kernel, grid3, block3, packed, int(shared_mem),
                                   max(self.time_limit, 60.0), arrays, trace_limit=int(max_accesses),
                                   shared_limit=self._shared_limit())
        if full:
            raise ValueError(
                f"kernel '{self.name}': the launch made more than {max_accesses:,} memory accesses and branches, "
                f"more than profile() keeps; profile a smaller launch (sectors per request and bank conflicts "
                f"do not depend on the grid's size) or pass max_accesses=...")
        for device_array, copy in back:
            device_array.set(copy)
        extents = [(packed[i].data, packed[i].count) if p.pointer and packed[i].data else None  # (None: no array)
                   for i, p in enumerate(self._kernel.params)]
        threads = block3[0] * block3[1] * block3[2]
        trace, branches, bases, static_shared, _ = from_records(
            records, module.lines_of(np.unique(records["site"]).tolist()), extents, module.shared_regions(), threads)
        del keep
        lines = sorted(set(trace["line"].tolist()) | set(branches["line"].tolist()))
        return Profile(kernel=self.name, grid=grid3, block=block3, shared_bytes=static_shared + int(shared_mem),
                       trace=trace, branches=branches, arguments=tuple(p.name for p in self._kernel.params),
                       source_lines={n: self._source.line_text(n) for n in lines if n > 0}, flops=flops,
                       bases=bases)

    def _launch_cpu(self, grid3, block3, packed, shared_mem: int, arrays) -> None:
        module = self._compiled
        if not self.sanitize and not module.sanitized and math.prod(grid3) * math.prod(block3) >= \
                cpu.FAST_PATH_THREADS and fast.reason(self._source, self._kernel) is None \
                and not any("__CC_FAST_PATH" in str(option) for option in self.options):
            module = self._fast_module()  # (a large launch: blocks proved in bounds run without checks)
        cpu.launch(module, self._kernel, grid3, block3, packed, shared_mem, self.time_limit, arrays,
                   shared_limit=self._shared_limit())

    def _instances(self) -> tuple:
        """A RawModule kernel's: the module's template instances, which its builds compile too."""
        return tuple(self._module._instances.values()) if self._module is not None else ()

    def _fast_module(self):
        """The module with fast.py's path compiled in (cpu.load(fast=True)), for large launches: compiled at the
        first."""
        if self._fast is None:
            self._fast = cpu.load(self._source, self.options, "(RawModule)" if self._module is not None else self.name,
                                  self._instances(), fast=True)
        return self._fast

    def _launch_shape(self, grid, block, shared_mem):
        """The launch's grid and block as 3-tuples, after CUDA's limits are checked."""
        grid3 = _dims(grid, "grid", MAX_GRID, self.name)
        block3 = _dims(block, "block", MAX_BLOCK, self.name)
        threads = block3[0] * block3[1] * block3[2]
        if threads > MAX_THREADS_PER_BLOCK:
            raise ValueError(f"kernel '{self.name}': block {block3} has {threads} "
                             f"threads; CUDA allows at most {MAX_THREADS_PER_BLOCK} per block")
        if not isinstance(shared_mem, (int, np.integer)) or isinstance(shared_mem, (bool, np.bool_)):
            whole = isinstance(shared_mem, (float, np.floating)) and float(shared_mem).is_integer()
            raise TypeError(f"kernel '{self.name}': shared_mem must be a whole number of bytes (an int), got "
                            f"{type(shared_mem).__name__} {shared_mem!r}"
                            + (f"; use int(...) or // (e.g. shared_mem={int(shared_mem)})" if whole else ""))
        if shared_mem < 0:
            raise ValueError(f"kernel '{self.name}': shared_mem must be a number of bytes >= 0, got {shared_mem!r}")
        bound = self._kernel.max_threads
        if bound and threads > bound:
            raise ValueError(f"kernel '{self.name}' is declared __launch_bounds__({bound}): at most {bound} threads "
                             f"per block, but block {block3} has {threads}. On a GPU "
                             f"the launch fails; launch at most {bound} threads per block, or raise the bound")
        limit = self.max_dynamic_shared_size_bytes
        if shared_mem > limit:
            why = ("its max_dynamic_shared_size_bytes" if self._max_dynamic_shared is not None
                   else "48 KiB, unless the kernel opts in" if limit == MAX_DYNAMIC_SHARED
                   else "48 KiB less its static __shared__ arrays, unless it opts in")  # (CuPy's answer on a GPU)
            if self.backend == "cpu" and shared_mem > MAX_SHARED_OPTIN:
                fix = f"No GPU of the A100's kind gives a block more than {MAX_SHARED_OPTIN:,} bytes: use smaller tiles"
            else:
                fix = (f"Raise it first (as with CuPy): kernel.max_dynamic_shared_size_bytes = {shared_mem}"
                       + (f" (at most {MAX_SHARED_OPTIN:,} on the A100 the CPU backend emulates, its static __shared__ "
                          "arrays included)" if self.backend == "cpu" else "") + ", or use smaller tiles")
            raise ValueError(f"kernel '{self.name}': shared_mem={shared_mem:,} bytes, but a launch of this kernel may "
                             f"ask for at most {limit:,} bytes of dynamic shared memory ({why}). {fix}")
        return grid3, block3

    def _shared_limit(self) -> int:
        """The shared memory a block of this kernel may use in all (static arrays and shared_mem): 48 KiB,
        or the A100's 163 KiB once the kernel opted in by setting max_dynamic_shared_size_bytes (to any value:
        with 40,000 bytes of static arrays, its default is 48 KiB less them, and setting it to 10,000 lets a
        launch ask for 10,000 more, as CUDA's cudaFuncAttributeMaxDynamicSharedMemorySize does)."""
        return MAX_SHARED_OPTIN if self._max_dynamic_shared is not None else MAX_DYNAMIC_SHARED


class RawModule:
    """Several kernels and their globals from one source, like ``cupy.RawModule``.

    ``name_expressions``: kernels to instantiate by name, e.g. ``["reduce<float, 256>"]`` for a
    template kernel or ``["scale"]`` for a kernel that is not extern "C"; ``get_function`` then
    takes the same string. ``get_global(name)`` gives the memory of a ``__constant__`` or
    ``__device__`` variable, to fill from the host on either backend::

        xp.ndarray((25,), xp.float32, module.get_global("mask"))[...] = weights

    As in CuPy, which loads one module per source and options in a process, two RawModules of the
    same source share their compiled module, so its globals too: a value set through one is seen by
    the other. Exactly one of ``code`` (the source) and ``path`` (a .cu file's) is given, as with CuPy;
    ``code`` and ``options`` are read-only, and a module pickles and copies as a kernel does (see
    ``RawKernel``).
    """

    def __init__(self, code: str | None = None, *, path=None, options=(), name_expressions=None,
                 backend: str = "auto", time_limit=None, sanitize=None, **cupy_only):
        if (code is None) == (path is None):
            raise TypeError("RawModule: exactly one of code and path must be given, as with CuPy: "
                            "RawModule(code=SOURCE) for CUDA C in a string, or RawModule(path='kernels.cu') for a "
                            "file of it")
        if path is not None:
            with open(path, encoding="utf-8") as file:
                code = file.read()
        if not isinstance(code, str):
            raise TypeError(f"code must be CUDA C source as a str, got {type(code).__name__}")
        code = code.removeprefix("\ufeff")  # a byte-order mark (a file saved on Windows): no C
        if isinstance(name_expressions, str):
            raise TypeError("name_expressions must be a list of names, e.g. ['reduce<float, 256>']")
        self._code, self._options = code, _options(options)
        self.name_expressions = tuple(name_expressions or ())
        self.backend = _choose_backend(backend)
        if self.backend == "cpu":
            _check_nvrtc_options(self.options)
        self.sanitize = choose_sanitize(sanitize, backend)
        self.time_limit = _time_limit(time_limit)  # (checked now: each get_function's kernel takes it)
        self._cupy_only = _cupy_keywords(cupy_only, "RawModule")  # e.g. jitify=True: CuPy's, meaningless on the CPU
        self._source = _parse(code, self.options)
        # (a name expression may name a __device__ or __constant__ variable, as NVRTC's do: `my::ops::counter`,
        # `&counter`, for get_global; only kernels are instantiated)
        self._instances = {expression: instantiate(self._source, expression) for expression in self.name_expressions
                           if self._global_name(expression) is None}
        self._loaded = None

    def __repr__(self) -> str:
        kernels = sorted(set(self._source.kernels) | set(self._instances))
        return f"<RawModule kernels {kernels} on {self.backend}>"

    code = property(lambda self: self._code, lambda self, value: _read_only("RawModule", "code"),
                    doc="The module's CUDA C source (read-only, as CuPy's).")
    options = property(lambda self: self._options, lambda self, value: _read_only("RawModule", "options"),
                       doc="The NVRTC options (read-only, as CuPy's).")

    def __getstate__(self) -> dict:
        """What a pickle or a copy keeps, as for a RawKernel: the source and settings, not the compiled module."""
        return {"version": _PICKLE_VERSION, "code": self._code, "options": self._options,
                "name_expressions": self.name_expressions, "backend": self.backend, "sanitize": self.sanitize,
                "time_limit": self.time_limit, "cupy_only": dict(self._cupy_only)}

    def __setstate__(self, state: dict) -> None:
        if not isinstance(state, dict) or state.get("version") != _PICKLE_VERSION:
            raise pickle.UnpicklingError("this pickled RawModule comes from another version of course.cuda: make the "
                                         "module again from its source")
        RawModule.__init__(self, code=state["code"], options=state["options"],
                           name_expressions=list(state["name_expressions"]) or None, backend=state["backend"],
                           time_limit=state["time_limit"], sanitize=state["sanitize"], **state["cupy_only"])

    def get_function(self, name: str) -> "RawKernel":
        """The kernel `name`: an extern "C" kernel's name, or one of the name expressions."""
        if not isinstance(name, str):
            raise TypeError(f"get_function takes the kernel's name as a str, e.g. get_function('add') (or a name "
                            f"expression, get_function('reduce<float, 256>')); got {type(name).__name__}")
        if name in self._instances:
            kernel = self._instances[name]
        elif name in self._source.kernels:
            kernel = self._source.kernel(name)
        else:
            if name.split("<")[0].strip() not in self._source.templates:
                _kernel_named(self._source, name, module=True)  # raises: says which kernels the source defines
            if "<" not in name and self._source.templates[name].template:  # `get_function('fill')` of a template
                example = template_example(self._source.templates[name])
                raise CompileError(
                    f"'{name}' is a template kernel: name one of its instances, e.g. RawModule(..., name_expressions="
                    f"['{example}']), then get_function('{example}') (as with CuPy)")
            raise CompileError(
                f"'{name}' is not among this module's name_expressions {list(self.name_expressions)}: "
                f"pass RawModule(..., name_expressions=['{name}']) (as with CuPy), then get_function('{name}')")
        if self.backend == "cpu" and kernel.unsupported:
            raise CompileError(unsupported_message(kernel))
        function = RawKernel.__new__(RawKernel)
        function._code, function._name, function._options = self.code, name, self.options
        function._cupy_only = self._cupy_only
        function.backend, function._source, function._kernel = self.backend, self._source, kernel
        function.sanitize = self.sanitize
        function.time_limit = self.time_limit
        function._module, function._compiled, function._unchecked = self, None, False
        function._warned, function._rules = set(), None
        function._max_dynamic_shared = None
        function._repeat = function._fast = None
        return function

    def compile(self, log_stream=None):
        """Compile now (CuPy compiles at the first get_function or launch); returns self. ``log_stream``
        (sys.stdout, a file), as with CuPy: where NVRTC's log goes on a GPU."""
        self._load(log_stream)
        return self

    def get_global(self, name: str):
        """The memory of the __constant__ or __device__ variable `name` (NumPy bytes on the CPU
        backend, a cupy.cuda.MemoryPointer on CuPy): wrap it with xp.ndarray(shape, dtype, memory)."""
        if not isinstance(name, str):
            raise TypeError(f"get_global takes the variable's name as a str, e.g. get_global('mask'); got "
                            f"{type(name).__name__}")
        own = self._global_name(name)
        if own is None:
            found = ", ".join(sorted(self._source.global_scopes.get(g, "") + g for g in self._source.globals)) or "none"
            raise KeyError(f"the module has no __constant__ or __device__ variable named '{name}' "
                           f"(found: {found})")
        module = self._load()
        return module.global_memory(own) if self.backend == "cpu" else module.get_global(name)

    def _global_name(self, name: str) -> str | None:
        """The __constant__ or __device__ variable that `name` names, as the source declares it: `counter`,
        or with its namespace, `my::ops::counter` (`::` and an address-of `&` before it, as NVRTC's name
        expressions write it, allowed); None if none."""
        if not isinstance(name, str):
            return None
        written = re.sub(r"\s+", "", name).lstrip("&").lstrip(":")
        scope, _, bare = written.rpartition("::")
        if bare not in self._source.globals:
            return None
        declared = self._source.global_scopes.get(bare, "").rstrip(":")
        return bare if scope in ("", declared) else None

    def _load(self, log_stream=None):
        if self._loaded is None:
            if self.backend == "cpu":
                self._loaded = cpu.load(self._source, self.options, "(RawModule)", tuple(self._instances.values()),
                                        sanitize=self.sanitize)
            else:
                import cupy

                code = self.code if self._cupy_only.get("jitify") else for_nvrtc(self.code)  # (jitify has its own)
                module = cupy.RawModule(code=code, options=self.options,
                                        name_expressions=self.name_expressions or None, **self._cupy_only)
                try:
                    module.compile(log_stream=log_stream)
                except Exception as error:
                    if type(error).__name__ == "CompileException":
                        raise CompileError(f"the module does not compile (NVRTC):\n{error}") from error
                    raise
                self._loaded = module
        return self._loaded

    def _function(self, name: str):
        module = self._load()
        if self.backend == "cpu":
            return module
        return _CupyKernel(self.code, name, self.options, function=module.get_function(name))


def choose_sanitize(wanted, backend_argument: str) -> bool:
    """Whether CPU launches run racecheck, initcheck and the read-only check (they cost several
    times the run time): `sanitize=True/False` if given, else $COURSE_CUDA_SANITIZE=1/0, else on
    when the kernel was asked for backend="cpu" (a debugging run) and off for "auto" (timing)."""
    if wanted is not None:
        if not isinstance(wanted, (bool, np.bool_)):  # (sanitize="no" is a true value: refused, not turned on)
            raise TypeError(f"sanitize must be True or False (or None, the default: on for backend='cpu', off for "
                            f"'auto'), got {wanted!r}")
        return bool(wanted)
    flag = os.environ.get("COURSE_CUDA_SANITIZE", "").strip().lower()
    if flag in ("1", "true", "yes", "on"):
        return True
    if flag in ("0", "false", "no", "off"):
        return False
    if flag:
        raise ValueError(f"COURSE_CUDA_SANITIZE={flag!r}: use 1 or 0, or unset it")
    return backend_argument == "cpu" and not _asked_by_course_helper()


def _asked_by_course_helper() -> bool:
    """True when the kernel is made by one of the course's own helpers (course.sharpen, ...),
    which time their kernels: only a learner's backend="cpu" is a debugging run."""
    frame, _ = cpu.outside_course_cuda(sys._getframe(1))
    name = frame.f_globals.get("__name__", "") if frame is not None else ""
    return name.startswith("course.") and name != "course.checks"


#: cupy.RawKernel's read-only attributes of the compiled kernel (the driver's cuFuncGetAttribute figures).
_CUPY_KERNEL_ATTRIBUTES = frozenset((
    "attributes", "binary_version", "cache_mode_ca", "const_size_bytes", "local_size_bytes", "max_threads_per_block",
    "num_regs", "preferred_shared_memory_carveout", "ptx_version", "shared_size_bytes"))


#: What cupy.RawKernel and cupy.RawModule take besides the code, its name and options (their `backend`, 'nvrtc' or
#: 'nvcc', names a compiler: course.cuda's names where kernels run). Passed to CuPy; on the CPU they change nothing
#: (a grid-wide sync, which enable_cooperative_groups is for, is refused there with advice).
_CUPY_KEYWORDS = ("translate_cucomplex", "enable_cooperative_groups", "jitify")


def _cupy_keywords(arguments: dict, what: str) -> dict:
    """`arguments`, checked to be CuPy's own keywords (_CUPY_KEYWORDS); a TypeError that lists them otherwise."""
    unknown = sorted(set(arguments) - set(_CUPY_KEYWORDS))
    if unknown:
        own = "code, name, options" if what == "RawKernel" else "code, path, options, name_expressions"
        raise TypeError(f"{what}() got an unexpected keyword argument {unknown[0]!r}: besides {own}, backend ('auto', "
                        f"'cpu' or 'cupy'), time_limit and sanitize it takes CuPy's {', '.join(_CUPY_KEYWORDS)} "
                        "(passed to CuPy on a GPU)")
    return dict(arguments)


def _choose_backend(wanted: str) -> str:
    if wanted == "auto":
        return backend()
    if wanted in ("nvrtc", "nvcc"):  # cupy.RawKernel(..., backend='nvcc'): a compiler, in CuPy's words
        raise ValueError(f"backend={wanted!r} is CuPy's choice of compiler; course.cuda's backend says where the kernel "
                         "runs: 'auto' (the GPU when there is one), 'cpu' or 'cupy' (which compiles with NVRTC). Leave "
                         "it out, or pass one of those")
    if wanted not in BACKENDS:
        raise ValueError(f"backend must be 'auto', 'cpu' or 'cupy', got {wanted!r}")
    if wanted == "cupy" and not _cupy_usable():
        raise RuntimeError("backend='cupy' needs CuPy and a usable GPU; use backend='auto' or 'cpu' here")
    return wanted


# A loop that halves blockDim.x: `for (unsigned s = blockDim.x / 2; s > 0; s >>= 1)` (a tree reduction with
# sequential addressing)
_HALVING = re.compile(r"\b(\w+)\s*=\s*\(?\s*blockDim\.x\s*(?:/\s*2|>>\s*1)\s*\)?\s*;\s*\1\s*(?:>\s*0[uU]?|>=\s*1[uU]?|"
                      r"!=\s*0[uU]?)?\s*;\s*\1\s*(?:>>=\s*1|/=\s*2|=\s*\1\s*(?:/\s*2|>>\s*1))")


def _kernel_text(source, kernel) -> tuple[str, int]:
    """The kernel's lines, from its first to the line before the next __global__ function, and its first line."""
    lines = source.lines
    following = [n for n in range(kernel.line + 1, len(lines) + 1) if "__global__" in lines[n - 1]]
    end = following[0] - 1 if following else len(lines)
    return without_comments("\n".join(lines[kernel.line - 1:end])), kernel.line


# A __device__ function without parameters that returns an expression (`__device__ int gid() { return blockIdx.x *
# blockDim.x + threadIdx.x; }`): the global index's helper
_INDEX_HELPER = re.compile(r"__device__\s+(?:(?:__forceinline__|inline|static|const|__host__)\s+)*(?:unsigned\s+int|"
                           r"unsigned|int|long\s+long|long|size_t|u?int(?:32|64)_t)\s+(\w+)\s*\(\s*(?:void)?\s*\)\s*"
                           r"\{\s*return\s+([^;{}]+);\s*\}")


def _global_index_axis(expression: str, helpers: dict | None = None) -> str | None:
    """The axis of `blockIdx.x * blockDim.x + threadIdx.x` (in any order, with or without parentheses), or of a
    call of a helper that returns it (`helpers`: name -> axis), else None."""
    call = re.fullmatch(r"\s*(\w+)\s*(?:\(\s*\))?\s*", expression)  # (a helper's call, or a variable that holds it)
    if call and helpers:
        return helpers.get(call.group(1))
    value = re.sub(r"[\s()]", "", expression)
    return next((a for a in "xyz" if value in (f"blockIdx.{a}*blockDim.{a}+threadIdx.{a}",
                                               f"blockDim.{a}*blockIdx.{a}+threadIdx.{a}",
                                               f"threadIdx.{a}+blockIdx.{a}*blockDim.{a}",
                                               f"threadIdx.{a}+blockDim.{a}*blockIdx.{a}")), None)


def _tiled_index(expression: str, constants: dict) -> tuple[str, int] | None:
    """The axis and the tile of `blockIdx.y * TILE + threadIdx.y` (in either order; TILE a number, a #define or a
    constexpr): the global index when the launch's blocks are TILE threads along that axis. Else None."""
    value = re.sub(r"[\s()]", "", expression)
    for a in "xyz":
        found = re.fullmatch(rf"(?:blockIdx\.{a}\*(\w+)|(\w+)\*blockIdx\.{a})\+threadIdx\.{a}|"
                             rf"threadIdx\.{a}\+(?:blockIdx\.{a}\*(\w+)|(\w+)\*blockIdx\.{a})", value)
        if found:
            tile = next(g for g in found.groups() if g)
            tile = str(constants.get(tile, tile)).strip()
            return (a, int(tile)) if tile.isdigit() and int(tile) > 0 else None
    return None


@dataclasses.dataclass
class _LaunchRules:
    """What a kernel's source says about the launches it needs, read once per kernel (launch_warnings uses it at
    every launch): the bugs no sanitizer sees, since no access is wrong."""
    name: str
    # `blockIdx.x * blockDim.x + threadIdx.y`: (axis of blockIdx, axis of threadIdx, line, text)
    mixed: list = dataclasses.field(default_factory=list)
    # a loop from the global index stepping by one block: (index, axis, step as written, line)
    block_steps: list = dataclasses.field(default_factory=list)
    # one element per thread behind a guard: (index, axis, size parameter, constant subtracted, line, guard text,
    # tile: the block width along the axis that the index assumes, `blockIdx.y * TILE + threadIdx.y`, or None)
    guards: list = dataclasses.field(default_factory=list)
    # the loop that halves blockDim.x: (line, variable), or None
    halving: tuple | None = None
    # an atomic of one element of a __shared__ array (`atomicAdd(out, s[0])`, the block's total) that no test of
    # the thread's index keeps to one thread: (line, call text, array element, whether a lane's test keeps it to
    # one thread of each warp)
    block_totals: list = dataclasses.field(default_factory=list)
    # a loop that hands out a block's elements by threadIdx.x alone and steps by blockDim.x (`for (i = threadIdx.x;
    # i < 256; i += blockDim.x) sh[i] = 0;`), storing or making an atomic with nothing of threadIdx.y: (line, header)
    rank_loops: list = dataclasses.field(default_factory=list)
    # the axes of threadIdx that the module's code uses (all three when it uses threadIdx whole or has another way
    # to tell threads apart: cooperative groups' thread_rank, a lane id from inline PTX)
    thread_axes: str = "xyz"
    # whether the module's code can tell blocks apart: blockIdx, cooperative groups' block_rank / group_index /
    # this_grid, inline PTX, or an atomic whose value it uses (a ticket: blocks numbered in the order they start,
    # work taken from a counter)
    tells_blocks: bool = True


def _launch_rules(source, kernel) -> _LaunchRules:
    """Read the kernel's source for _LaunchRules (once per kernel: each launch only compares numbers)."""
    text, first = _kernel_text(source, kernel)
    line_at = lambda offset: first + text.count("\n", 0, offset)
    rules = _LaunchRules(kernel.name)
    code = without_comments(source.text)
    # (not when threadIdx is used whole, `dim3 t = threadIdx;`, or threads are told apart another way)
    if not re.search(r"\b(?:thread_rank|thread_index|meta_group_rank|laneid|asm)\b|\bthreadIdx\b(?!\s*\.\s*[xyz]\b)", code):
        rules.thread_axes = "".join(a for a in "xyz" if re.search(rf"\bthreadIdx\.{a}\b", code))
    rules.tells_blocks = bool(re.search(r"\b(?:blockIdx|block_rank|block_index|group_index|this_grid|"
                                        r"this_multi_grid|asm)\b", code)) or _uses_an_atomics_value(code)
    index_helpers = {m.group(1): axis for m in _INDEX_HELPER.finditer(code)
                     if (axis := _global_index_axis(m.group(2)))}
    # names that stand for a built-in (`int t = threadIdx.x;`, never changed): read as the built-in, so that
    # `blockIdx.x * blockDim.x + t` is the global index; and variables that hold the global index (`int gid = ...;`,
    # never changed), so that a loop `for (int i = gid; ...)` starts from it
    unchanged = lambda name, after: not re.search(rf"\b{name}\s*(?:[-+*/%|&^]?=(?!=)|\+\+|--)|(?:\+\+|--)\s*{name}\b",
                                                  after)
    builtins = {m.group(1): m.group(2) for m in re.finditer(
        r"\b(?:const\s+)?(?:int|unsigned(?:\s+int)?|size_t|auto)\s+(\w+)\s*=\s*((?:threadIdx|blockIdx|blockDim)\.[xyz])"
        r"\s*[;,]", text) if unchanged(m.group(1), text[m.end():])}
    spelled = lambda expression: re.sub(r"\b\w+\b", lambda w: builtins.get(w.group(0), w.group(0)), expression)
    for m in re.finditer(r"\b(?:const\s+)?(?:int|unsigned(?:\s+int)?|size_t|auto)\s+(\w+)\s*=\s*([\w.\s*+()]+?)\s*;", text):
        if (axis := _global_index_axis(spelled(m.group(2)), index_helpers)) and unchanged(m.group(1), text[m.end():]):
            index_helpers.setdefault(m.group(1), axis)
    for found in re.finditer(r"\b(?:blockIdx\.([xyz])\s*\*\s*blockDim\.\1|blockDim\.([xyz])\s*\*\s*blockIdx\.\2)"
                             r"\s*\+\s*threadIdx\.([xyz])\b|\bthreadIdx\.([xyz])\s*\+\s*(?:blockIdx\.([xyz])\s*\*\s*"
                             r"blockDim\.\5|blockDim\.([xyz])\s*\*\s*blockIdx\.\6)\b", text):
        axis = found.group(1) or found.group(2) or found.group(5) or found.group(6)
        other = found.group(3) or found.group(4)
        if other != axis:
            rules.mixed.append((axis, other, line_at(found.start()), found.group(0)))
    for found in re.finditer(r"\bfor\s*\(\s*(?:[\w\s]+\s)?(\w+)\s*=\s*([\w.\s*+()]+?)\s*;[^;]*;[^;)]*\)", text):
        index, axis = found.group(1), _global_index_axis(spelled(found.group(2)), index_helpers)
        step = cpu._block_only_step(text, found.group(0)) if axis else None  # (`i += blockDim.x`, `i += stride`)
        if step and step[2] == index and step[1] == f"blockDim.{axis}":
            rules.block_steps.append((index, axis, step[0].split("+=", 1)[1].strip(), line_at(found.start())))
    for found in re.finditer(r"\b(\w+)\s*=(?!=)\s*([\w.\s*+()]+?)\s*[;,]", text):  # (`int x = ..., y = ...;`)
        index, axis = found.group(1), _global_index_axis(spelled(found.group(2)), index_helpers)
        tile = None
        if axis is None and (tiled := _tiled_index(spelled(found.group(2)), source.constants)):
            axis, tile = tiled
        if axis is None:
            continue
        rest = text[found.end():]
        if not unchanged(index, rest):
            continue  # (moved on: a grid-stride loop, or a second element per thread)
        # A thread of several elements: the index scaled by a constant (`for (k = 4 * i; k < 4 * i + 4; ++k)`), or
        # compared with two sizes (`if (i < n) { if (i < half) { y[i] = ...; y[i + half] = ...; } }`): which guard
        # bounds which element is not for this rule to say.
        number = r"(?:\d+|" + "|".join(map(re.escape, source.constants)) + ")" if source.constants else r"\d+"
        if re.search(rf"\b{number}\s*\*\s*{index}\b(?!\s*\+\s*[A-Za-z_])|\b{index}\s*\*\s*{number}\b"
                     rf"(?!\s*\+\s*[A-Za-z_])", rest) or len(set(re.findall(
                         rf"\b{index}\s*(?:<|>=)\s*([A-Za-z_]\w*)", rest))) > 1:  # (sizes: `i < n - 1` is n's)
            continue
        # (`i < n`, `x >= w - 1) return`: the size alone, or less a constant; not `i < n / 4`, which a thread
        # of several elements compares)
        for guard in re.finditer(rf"\b{index}\s*<\s*(\w+)(?:\s*-\s*(\d+))?(?=\s*(?:\)|&&|\|\||;))|"
                                 rf"\b{index}\s*>=\s*(\w+)(?:\s*-\s*(\d+))?(?=\s*(?:\)|&&|\|\|))"
                                 rf"(?=[^;{{}}]*\)\s*return\b)", rest):
            less = int(guard.group(2) or guard.group(4) or 0)
            rules.guards.append((index, axis, guard.group(1) or guard.group(3), less,
                                 line_at(found.end() + guard.start()), guard.group(0).strip(), tile))
    shared = set(re.findall(r"__shared__\s+[\w:<>\s]+?\b(\w+)\s*\[", source.text))
    shared_scalars = set(re.findall(r"__shared__\s+(?:volatile\s+)?(?:float|double|int|unsigned(?:\s+int)?|long\s+long|"
                                    r"unsigned\s+long\s+long)\s+(\w+)\s*;", source.text))
    # (or a copy of one made by every thread: `float total = s[0];`)
    copies = {m.group(1): (m.start(), f"{m.group(2)}[{m.group(3)}]") for m in re.finditer(
        r"\b(\w+)\s*=\s*(\w+)\s*\[\s*(\d+)\s*\]\s*;", text)
        if m.group(2) in shared and not _under_one_thread(text, m.start())}
    # (the value as it is, or cast, or scaled: `(unsigned long long)blockhits`, `static_cast<double>(s[0])`,
    # `s[0] / n`, `0.5f * acc`)
    for found in re.finditer(r"\b(atomic(?:Add|Sub|Max|Min|Or|And|Xor)\w*)\s*\(([^;]*?),\s*"
                             r"(?:\(\s*(?:const\s+)?[A-Za-z_][\w\s]*\)\s*|static_cast\s*<\s*[\w\s]+>\s*(?=\())?"
                             r"(?:[\w.]+\s*\*\s*)?(\(\s*)?(\w+)\s*(?:\[\s*(\d+)\s*\]\s*)?"
                             r"(?(3)\)\s*)(?:[*/]\s*[\w.]+\s*)?\)", text):
        operand = found.group(4)
        value = re.sub(r"static_cast\s*<[^>]*>|\(\s*(?:const\s+)?[A-Za-z_][\w\s]*\)\s*(?=[\w(])", " ",
                       found.group(0)[found.end(2) - found.start():])  # (the value, its casts left out)
        uniform = {p.name for p in kernel.params if not p.pointer} | set(source.constants) | {operand}
        if any(f not in uniform and not f[0].isdigit() for f in re.findall(r"\b\d[\w.]*|[A-Za-z_]\w*", value)):
            continue  # (scaled by what each thread has, `s_total * w`: not one value for the whole block)
        if found.group(5) is not None:
            element = f"{operand}[{found.group(5)}]" if operand in shared else None
        elif operand in shared_scalars:  # (`__shared__ float acc;` ... `atomicAdd(loss, acc);`)
            element = operand
        else:
            copy = copies.get(operand)  # (made before the call, and not changed since)
            since = text[text.index(";", copy[0]) + 1:found.start()] if copy and copy[0] < found.start() else None
            changed = since is not None and re.search(rf"\b{operand}\s*(?:[-+*/%|&^]?=(?!=)|\+\+|--)", since)
            element = f"{operand} (= {copy[1]})" if since is not None and not changed else None
        guard = _under_one_thread(text, found.start()) if element else "block"
        if guard != "block":  # ("warp": one thread of each warp makes the call)
            rules.block_totals.append((line_at(found.start()), found.group(0), element, guard == "warp"))
    rules.rank_loops = _rank_loops(text, line_at)
    found = _HALVING.search(text)
    if found:
        rules.halving = (line_at(found.start()), found.group(1))
    else:
        above = without_comments("\n".join(source.lines[:kernel.line - 1]))  # (a __device__ helper: a block reduce)
        found = _HALVING.search(above) if "__device__" in above else None
        if found:
            rules.halving = (above.count("\n", 0, found.start()) + 1, found.group(1))
    return rules


_RANK_LOOP = re.compile(r"\bfor\s*\(\s*(?:(?:unsigned\s+)?(?:int|long|size_t|unsigned)\s+)?(\w+)\s*=\s*([\w.]+)\s*;"
                        r"[^;]*;\s*\1\s*\+=\s*blockDim\.x\s*\)")


def _rank_loops(text: str, line_at) -> list:
    """The loops of a kernel's `text` that hand out elements by threadIdx.x alone, stepping by blockDim.x, and store
    or make an atomic in their body with nothing of threadIdx.y or .z there or in an if around them: (line, header).
    In a block of several rows of threads, each row goes over the same elements."""
    across = {"threadIdx.y", "threadIdx.z"} | {m.group(1) for m in re.finditer(
        r"\b(\w+)\s*=[^;=][^;]*\bthreadIdx\.[yz]\b[^;]*;", text)}
    ranks = {"threadIdx.x"} | {m.group(1) for m in re.finditer(r"\b(\w+)\s*=\s*threadIdx\.x\s*;", text)}
    mentions = lambda piece: any(re.search(rf"(?<![\w.]){re.escape(n)}(?![\w])", piece) for n in across)
    found = []
    for loop in _RANK_LOOP.finditer(text):
        if loop.group(2) not in ranks:
            continue
        after = loop.end()
        opened = after + len(text[after:]) - len(text[after:].lstrip())
        body = (text[opened:cpu._closing_brace(text, opened) + 1] if text.startswith("{", opened)
                else text[after:text.find(";", after) + 1])
        if mentions(body) or not re.search(r"\batomic\w*\s*\(|\]\s*(?:[-+*/%|&^]?=(?!=)|\+\+|--)", body):
            continue
        # an if around the loop that tests a row (`if (threadIdx.y == 0) { for ... }`), or the loop's own line's
        line_head = text[text.rfind("\n", 0, loop.start()) + 1:loop.start()]
        if any(mentions(h) for h in [line_head, *_enclosing_heads(text, loop.start())]):
            continue
        found.append((line_at(loop.start()), re.sub(r"\s+", " ", loop.group(0))))
    return found


def _rank_loop_message(rules: _LaunchRules, block3) -> str | None:
    """A loop of rules.rank_loops in a launch whose blocks have several rows (or layers) of threads."""
    rows = block3[1] * block3[2]
    if rows == 1 or not rules.rank_loops:
        return None
    line, header = rules.rank_loops[0]
    shape = "×".join(str(n) for n in (block3 if block3[2] > 1 else block3[:2]))
    return (f"kernel '{rules.name}', line {line}: `{header}` hands out the elements by threadIdx.x alone, but this "
            f"launch's blocks are {shape} threads: the {rows} threads that share a threadIdx.x (one a row, threadIdx.y) "
            f"each go over the same elements, so every store in the loop is made {rows} times, and every atomic counts "
            f"{rows} times. Number the block's threads, `int t = threadIdx.y * blockDim.x + threadIdx.x;`, and step by "
            "all of them, `i += blockDim.x * blockDim.y`.")


def _under_one_thread(text: str, at: int) -> str:
    """Whether the statement at offset `at` of a kernel's text lies under an `if` (its own, or one whose braces
    enclose it) that tests an index against 0 or 1 (`if (t == 0)`, `if (!lane)`, `if (threadIdx.x < 1)`): "block"
    when one thread of the block gets there, "warp" when every such test is of a lane (`lane = t % 32`,
    `t & 31`): one thread of each warp; "" when none keeps the statement from any thread."""
    one = re.compile(r"\b(\w+(?:\.[xyz])?)\s*(?:==\s*0|==\s*1\b|<\s*1\b|<=\s*0)|!\s*\(?\s*(\w+(?:\.[xyz])?)\s*\)?(?!\s*=)"
                     r"|\b0\s*==\s*(\w+)")
    per_lane = r"(?:%\s*(?:32|warpSize)\b|&\s*(?:31|0x1[fF]|\(\s*warpSize\s*-\s*1\s*\)))"
    lanes = set(re.findall(rf"\b(\w+)\s*=\s*[^;=]*{per_lane}\s*;", text))

    def tested(head: str) -> str:  # "block", "warp" or "" for one statement's or block's head
        if not re.search(r"\bif\s*\(", head):
            return ""
        kinds = []
        for m in one.finditer(head):
            name = next((g for g in m.groups() if g), "")
            lane = name in lanes or re.search(rf"{per_lane}\s*(?:==\s*0|<\s*1)\s*$", head[:m.end()])
            kinds.append("warp" if lane else "block")
        kinds += ["warp" for _ in re.finditer(rf"{per_lane}\s*\)\s*==\s*0", head)]  # (`(t & 31) == 0`)
        if re.search(r"\b\w+(?:\.[xyz])?\s*<\s*(?:32|warpSize)\b", head):
            kinds.append("first warp")  # (`if (t < 32)`: with a lane's test inside, one thread)
        return "block" if "block" in kinds or {"warp", "first warp"} <= set(kinds) else "warp" if "warp" in kinds \
            else "first warp" if kinds else ""

    start = max(text.rfind(";", 0, at), text.rfind("{", 0, at), text.rfind("}", 0, at)) + 1
    found = {tested(text[start:at])}
    if "block" in found:
        return "block"
    for head in _enclosing_heads(text, at):  # the `if (...) {` heads of the blocks that enclose the statement
        found.add(tested(head))
        if "block" in found or {"warp", "first warp"} <= found:
            return "block"
    return "warp" if "warp" in found else ""


def _enclosing_heads(text: str, at: int):
    """The heads (`if (t == 0)`, `for (...)`) of the braced blocks of `text` that enclose offset `at`, innermost
    first."""
    depth, k = 0, at
    while k > 0:
        k -= 1
        if text[k] == "}":
            depth += 1
        elif text[k] == "{":
            if depth:
                depth -= 1
                continue
            yield text[max(text.rfind(";", 0, k), text.rfind("{", 0, k), text.rfind("}", 0, k)) + 1:k]


def launch_warnings(rules: _LaunchRules, params, grid3, block3, values) -> list[str]:
    """The warnings for one launch of the kernel that `rules` describes (_launch_rules): each a bug that gives
    wrong results with no access that a sanitizer could call wrong."""
    return [m for m in (_same_blocks_message(rules, grid3), _same_threads_message(rules, block3),
                        _mixed_axes_message(rules, block3),
                        _uncovered_message(rules, params, grid3, block3, values),
                        _block_stride_message(rules, grid3), _halving_loop_message(rules, block3[0]),
                        _block_total_message(rules, block3), _rank_loop_message(rules, block3)) if m]


def _uses_an_atomics_value(code: str) -> bool:
    """Whether an atomic's result is used (`int b = atomicAdd(&ticket, 1);`, `if (atomicInc(...) == n - 1)`): what
    a call that stands as a statement of its own (after `;`, `{`, `}`, `else` or an if's condition) is not."""
    for call in re.finditer(r"\batomic\w*\s*\(|\.\s*fetch_\w+\s*\(", code):
        before = code[:call.start()].rstrip()
        if call.group(0).startswith("."):
            return True  # (cuda::atomic_ref's fetch_add: a ticket as often as not)
        if not before or before[-1] in ";{}" or re.search(r"\belse$", before):
            continue
        if before[-1] == ")":  # `if (t == 0) atomicAdd(...)`: the head of an if, for or while, not a cast
            depth, k = 0, len(before) - 1
            while k >= 0:
                depth += {")": 1, "(": -1}.get(before[k], 0)
                if depth == 0:
                    break
                k -= 1
            if re.search(r"\b(?:if|for|while)\s*$", before[:k]):
                continue
        return True
    return False


def _same_blocks_message(rules: _LaunchRules, grid3) -> str | None:
    """A grid whose blocks the code cannot tell apart: the module never uses blockIdx (nor another way to tell
    blocks apart), so every block of a launch of several does the same work: the same stores into the same
    places, the same atomics again (a histogram or a total counted once a block; no access is wrong). Not when
    the code can tell them apart another way (_LaunchRules.tells_blocks)."""
    blocks = grid3[0] * grid3[1] * grid3[2]
    if blocks == 1 or rules.tells_blocks:
        return None
    return (f"kernel '{rules.name}' never uses blockIdx, and this launch has {blocks} blocks, so all {blocks} blocks "
            "do the same work: the same stores into the same places, the same atomics again (no race, and no access "
            f"is wrong; a count or a total kept with atomics comes out {blocks} times too large). Give each block its "
            "part (int i = blockIdx.x * blockDim.x + threadIdx.x;), or launch one block if one is meant to do it all.")


def _same_threads_message(rules: _LaunchRules, block3) -> str | None:
    """A block whose threads the code cannot tell apart: it uses only threadIdx axes along which the launch's block
    has one thread (`threadIdx.y` in a 1-D block, or no threadIdx at all), so every thread of a block does the same
    work (same values into the same places: no race, no access is wrong)."""
    threads = block3[0] * block3[1] * block3[2]
    if threads == 1 or any(block3["xyz".index(a)] > 1 for a in rules.thread_axes):
        return None
    has = [a for a in "xyz" if block3["xyz".index(a)] > 1]
    if rules.thread_axes:
        uses = " and ".join(f"threadIdx.{a}" for a in rules.thread_axes)
        said = (f"uses {uses} but its blocks have threads only along {' and '.join(has)}: {uses} is 0 for every "
                f"thread of this launch's blocks (blockDim = {tuple(block3)})")
        fix = (f"Take the thread's index from the axis the block has (threadIdx.{has[0]}), or launch blocks along "
               f"{' and '.join(rules.thread_axes)}.")
    else:
        said = f"never uses threadIdx, and this launch has {threads} threads in each block"
        fix = ("Give each thread its part (int i = blockIdx.x * blockDim.x + threadIdx.x;), or launch one thread a "
               "block if one is meant to do it all.")
    return (f"kernel '{rules.name}' {said}, so all {threads} threads of a block do the same work: the same stores "
            f"into the same places, the same atomics again (no race, and no access is wrong). {fix}")


def _block_total_message(rules: _LaunchRules, block3) -> str | None:
    """An atomic of one shared element (`atomicAdd(out, s[0])`, the block's total after a reduction) that every
    thread of the block makes: the total goes in blockDim times (atomics are no race, and no access is wrong)."""
    threads = block3[0] * block3[1] * block3[2]
    if threads == 1 or not rules.block_totals:
        return None
    line, call, element, per_warp = rules.block_totals[0]
    if re.match(r"\s*atomic(?:Max|Min|And|Or|Exch)(?:_block|_system)?\b", call):
        return None  # (the same value again changes nothing: a maximum, a flag; only sums and counts go wrong)
    if per_warp:
        warps = -(-threads // 32)
        if warps == 1:
            return None
        return (f"kernel '{rules.name}', line {line}: `{call}` is made by one thread of each warp (the test before it "
                f"is of a lane, an index within a warp), so each of the {warps} warps of a {threads}-thread block makes "
                f"it: {element} is one value for the whole block (a total?), and the result counts it {warps} times "
                "(atomics are no race, and no access is wrong). To pass it on once per block, test the thread's index "
                "in the block (`threadIdx.x == 0`), not its lane.")
    return (f"kernel '{rules.name}', line {line}: `{call}` is made by more than one thread of each block (no test "
            f"before it keeps it to one of the {threads}): {element} is one value for the whole block (a total?), and "
            "each of those threads adds it again, so the result counts it that many times (atomics are no race, and "
            "no access is wrong). If one thread should pass it on, which one makes the call?")


def _mixed_axes_message(rules: _LaunchRules, block3) -> str | None:
    """A global index that mixes axes, `blockIdx.x * blockDim.x + threadIdx.y`, in a launch whose blocks are not
    as wide along the threadIdx axis as along the block's: with one thread along it every thread of a block gets
    the same index, with fewer the last indices of each block get none, with more they run into the next block's
    (a typo that no sanitizer sees: the threads store the same values). A square block is left alone: a transpose
    may mean `blockIdx.y * blockDim.y + threadIdx.x`."""
    for axis, other, line, text in rules.mixed:
        width, reach = block3["xyz".index(axis)], block3["xyz".index(other)]
        if width == reach:
            continue  # (a square block: a transpose's `blockIdx.y * blockDim.y + threadIdx.x` may mean it)
        fix = f"Use threadIdx.{axis}, the axis of blockIdx.{axis} and blockDim.{axis}."
        if reach == 1:
            return (f"kernel '{rules.name}', line {line}: `{text}` adds threadIdx.{other}, which is 0 for every "
                    f"thread of this launch's blocks (blockDim.{other} = 1): the {width} threads of a block all get "
                    f"the same index, and the elements between get no thread. {fix}")
        return (f"kernel '{rules.name}', line {line}: `{text}` adds threadIdx.{other}, which runs from 0 to "
                f"{reach - 1} in this launch (blockDim.{other} = {reach}), while each block's share along {axis} is "
                f"blockDim.{axis} = {width} wide: "
                + (f"the last {width - reach} of each block's indices get no thread" if reach < width else
                   f"each block's indices run {reach - width} into the next block's") + f". {fix}")
    return None


def _block_stride_message(rules: _LaunchRules, grid3) -> str | None:
    """A grid-stride loop that starts at the thread's global index but steps by one block, `for (int i =
    blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x)`, in a launch of several blocks along that
    axis: block b starts at element b * blockDim.x and then goes over every later block's elements too, so
    elements are done more than once (atomics add them again, and no store is wrong: no sanitizer sees it)."""
    for index, axis, step, line in rules.block_steps:
        if grid3["xyz".index(axis)] == 1:
            continue
        return (f"kernel '{rules.name}', line {line}: the loop starts {index} at the thread's index in the whole grid "
                f"(blockIdx.{axis} * blockDim.{axis} + threadIdx.{axis}) but steps by one block (`{index} += {step}`), "
                f"and this launch has {grid3['xyz'.index(axis)]:,} blocks along {axis}: block 1 starts where block 0's "
                f"second step lands and goes on over every later block's elements, so most elements are done by "
                f"several blocks (added again by atomics, or stored again). Step by the whole grid, "
                f"`{index} += blockDim.{axis} * gridDim.{axis}`, or start at threadIdx.{axis} in a one-block launch.")
    return None


def _uncovered_message(rules: _LaunchRules, params, grid3, block3, values) -> str | None:
    """A one-thread-per-element launch whose grid is too small: `i = blockIdx.x * blockDim.x + threadIdx.x`
    guarded by `i < n` (or `if (i >= n || ...) return;`), with fewer threads in that dimension than the argument
    n, and no loop that moves i on (a grid-stride loop covers any n): the indices from grid * block on get no
    thread (a grid of n // 256 blocks, rounded down)."""
    if not rules.guards:
        return None
    sizes = {p.name: v for p, v in zip(params, values)
             if not p.pointer and p.dtype and p.lanes == 1 and isinstance(v, (int, np.integer))}
    short, seen, needs = [], set(), {}
    for index, axis, size, less, line, guard, tile in rules.guards:
        if size not in sizes or index in seen:
            continue  # (not `x < 1`; the first guard of each index that compares it with a size)
        seen.add(index)
        k = "xyz".index(axis)
        if tile is not None and block3[k] != tile:
            continue  # (blocks of another width than the tile: not this warning's bug)
        threads, n = grid3[k] * block3[k], int(sizes[size]) - less
        needs[axis] = max(needs.get(axis, 0), n)
        if threads < n:
            short.append((index, axis, size + (f" - {less}" if less else ""), n, threads, block3[k], grid3[k], line,
                          guard))
    if not short:
        return None
    parts, fixes, swapped, others = [], [], [], []
    for index, axis, size, n, threads, width, blocks, line, guard in short:
        parts.append(f"{_plural(threads, 'thread')} along {axis} (grid.{axis} = {_plural(blocks, 'block')} of "
                     f"{width}), but the guard "
                     f"at line {line} (`{guard}`) lets {size} = {n:,} of them work, so {index} = {threads:,}"
                     + (f" to {n - 1:,}" if n - 1 > threads else "") + " gets no thread")
        size_name = size.split(' - ')[0]
        fixes.append((width, f"({size_name} + {width - 1}) // {width}" if width > 1 else
                      f"blocks with threads along {axis}, e.g. 256 threads and ({size_name} + 255) // 256 blocks "
                      f"along {axis} (with one thread along {axis}, a block covers one element)"))
        # another axis of the launch has the threads this one lacks: the kernel may have its axes the other way
        # round (a column from blockIdx.y and threadIdx.y, in a grid whose x runs along the columns)
        wide = [a for a in "xyz" if a != axis and grid3["xyz".index(a)] * block3["xyz".index(a)] >= n
                and block3["xyz".index(a)] > 1 and needs.get(a, 0) <= threads]  # (both would fit, swapped)
        # another size argument that the grid covers exactly, rounded up to whole blocks (a frontier's fsize, with
        # `i < n` for the graph's vertices): the guard may compare with the wrong size
        fitted = [name for name, value in sizes.items() if name != size_name and 0 < int(value) <= threads
                  and -(-int(value) // width) == blocks and not any(g[2] == name for g in rules.guards)]
        if fitted:
            others.append(f"is the grid sized for {fitted[0]} = {int(sizes[fitted[0]]):,} ({_plural(blocks, 'block')} "
                          f"of {width}), and the guard should be `{index} < {fitted[0]}`?")
        if wide:
            swapped.append(f"{index} from blockIdx.{wide[0]} and threadIdx.{wide[0]} (the launch has "
                           f"{grid3['xyz'.index(wide[0])] * block3['xyz'.index(wide[0])]:,} threads along {wide[0]})")
    return (f"kernel '{rules.name}': the launch has " + "; and ".join(parts) + ": what those threads would "
            f"compute keeps its old values, on a GPU as here. "
            + "; ".join(advice for advice in (
                "Round the grid up, " + " and ".join(f for w, f in fixes if w > 1)
                + " blocks (a division that rounds down leaves the rest out)" if any(w > 1 for w, _ in fixes) else "",
                ("launch " if any(w > 1 for w, _ in fixes) else "Launch ") + " and ".join(f for w, f in fixes if w == 1)
                if any(w == 1 for w, _ in fixes) else "") if advice)
            + ", or loop: `for (...; i < n; i += blockDim.x * gridDim.x)`."
            + (" Or are the kernel's axes the other way round from the launch's? It would take "
               + " and ".join(swapped) + "." if swapped else "")
            + (" Or " + " Or ".join(others) if others else ""))


def _halving_loop_message(rules: _LaunchRules, width: int) -> str | None:
    """For a block `width` threads wide that is not a power of two: the kernel's loop that halves blockDim.x
    (the tree reduction's `s = blockDim.x / 2; s > 0; s >>= 1`) then leaves an element out at the first odd
    count."""
    if rules.halving is None or not width & (width - 1):
        return None
    line, variable = rules.halving
    count = width
    while count % 2 == 0:
        count //= 2
    stride = count // 2
    return (f"kernel '{rules.name}': blockDim.x = {width} is not a power of two, and the loop at line {line} "
            f"(`{variable} = blockDim.x / 2`, halved each step) needs one: in a tree reduction, at {count} "
            f"elements (stride {stride}) the threads below {stride} add the {stride} above them, and element "
            f"{count - 1} is never added, on a GPU as here. Launch a power-of-two block (32, 64, ..., 1024), or start "
            f"{variable} at the power of two at or above blockDim.x / 2 and guard the read: "
            f"`if (t < {variable} && t + {variable} < blockDim.x)`.")


def _dims(value, what: str, limits, kernel: str) -> tuple[int, int, int]:
    """(x, y, z) from an int or a 1–3 tuple, within CUDA's limits."""
    def is_int(v):
        return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))

    if is_int(value):
        dims = (int(value),)
    elif isinstance(value, (tuple, list)) and 1 <= len(value) <= 3 and all(is_int(v) for v in value):
        dims = tuple(int(v) for v in value)
    else:
        parts = value if isinstance(value, (tuple, list)) else (value,)
        fraction = any(isinstance(v, (float, np.floating)) for v in parts)
        raise TypeError(f"kernel '{kernel}': {what} must be an int or a tuple of 1 to 3 ints "
                        f"(as in cupy.RawKernel), got {value!r}"
                        + ("; a division gives a float: round up with // instead, e.g. (n + 255) // 256 blocks "
                           "of 256" if fraction and what == "grid" else "; a division gives a float: use //"
                           if fraction else ""))
    dims = dims + (1,) * (3 - len(dims))
    for axis, size, limit in zip("xyz", dims, limits):
        if not 1 <= size <= limit:
            raise ValueError(f"kernel '{kernel}': {what}.{axis} = {size}, but CUDA allows 1 to {limit}")
    return dims


# ----------------------------------------------------------------------------------------
# Argument checks (both backends)
# ----------------------------------------------------------------------------------------


def _is_cupy_array(value) -> bool:
    return type(value).__module__.split(".")[0] == "cupy" and hasattr(value, "__cuda_array_interface__")


def check_args(kernel: Kernel, args, backend_name: str) -> list:
    """The arguments, checked against the kernel's parameters; scalars converted to their exact type."""
    if not isinstance(args, (tuple, list)):
        one = (" (one argument is a tuple with a comma: (x,), since (x) is just x)"
               if len(kernel.params) == 1 or isinstance(args, np.ndarray) or _is_cupy_array(args) else "")
        raise TypeError(f"kernel '{kernel.name}': args must be a tuple of its arguments, e.g. "
                        f"(x, y, n), got {type(args).__name__}{one}")
    if len(args) != len(kernel.params):
        raise TypeError(f"kernel '{kernel.name}' takes {_plural(len(kernel.params), 'argument')}, "
                        f"{kernel.signature()}, but {len(args)} {'was' if len(args) == 1 else 'were'} given")
    return [
        _check_array(kernel, p, a, backend_name) if p.pointer
        else _check_struct(kernel, p, a, backend_name) if p.by_value_struct
        else _check_scalar(kernel, p, a)
        for p, a in zip(kernel.params, args)
    ]


_noted: set = set()


def _note_unchecked(kernel: Kernel, p: Param) -> None:
    """One line, once per parameter, when CuPy gets an argument course.cuda cannot check."""
    if (kernel.name, p.name) not in _noted:
        _noted.add((kernel.name, p.name))
        print(f"note: kernel '{kernel.name}', parameter '{p.name}' ({p}): course.cuda cannot check this type; "
              "the argument goes to CuPy as it is.", file=sys.stderr)


def _as_array(a):
    """A NumPy view of a CPU torch tensor (bfloat16 as its uint16 bits), else `a` unchanged."""
    if type(a).__module__.split(".")[0] == "torch" and hasattr(a, "numpy"):
        if a.device.type == "meta":  # (shapes only, no memory: nothing a kernel could read or write)
            raise TypeError("a torch tensor on the 'meta' device has a shape but no memory, so no kernel can run on "
                            "it: pass a tensor with data (torch.empty(shape) on the CPU)")
        if a.device.type != "cpu":
            raise TypeError(f"a torch tensor on the {a.device.type} device ({a.device}) cannot go to the CPU backend; "
                            "pass tensor.cpu()")
        if a.requires_grad:  # (CuPy refuses it too: torch gives no __cuda_array_interface__ for it)
            raise TypeError("a torch tensor that requires grad cannot go to a kernel: autograd would not see what "
                            "the kernel does to it. Pass t.detach() (the same memory), or wrap the kernel in a "
                            "torch.autograd.Function whose backward says how gradients flow")
        if str(a.dtype) == "torch.bfloat16":
            import torch

            return a.detach().view(torch.int16).numpy().view(np.uint16)
        return a.detach().numpy()
    return a


def _check_struct(kernel: Kernel, p: Param, a, backend_name: str):
    """A struct or vector passed by value: a NumPy structured scalar, bytes, or (vectors) its numbers."""
    where = f"kernel '{kernel.name}', parameter '{p.name}' ({p})"
    if backend_name == "cupy":
        _note_unchecked(kernel, p)
        return a
    if p.lanes == 2 and p.dtype in ("float32", "float64") and isinstance(a, (complex, np.complexfloating)):
        # a complex number for a float2 / double2 (cuFloatComplex, cuDoubleComplex): its real and imaginary parts,
        # as CuPy passes a complex of the same precision (complex64 for float2; a Python complex is two doubles)
        pair = np.complex64 if p.dtype == "float32" else np.complex128
        if np.dtype(type(a)) != np.dtype(pair):
            raise TypeError(f"{where}: a {p.ctype} is two {_dtype_word(p.dtype)} values, but got {type(a).__name__} "
                            f"{a!r}, two {'doubles' if p.dtype == 'float32' else 'floats'} (CuPy would pass its bytes "
                            f"as they are): pass np.{pair.__name__}(z)")
        a = (a.real, a.imag)
    if p.dtype is not None and isinstance(a, (tuple, list)) or (
            p.dtype is not None and isinstance(a, np.ndarray) and a.dtype.names is None):
        values = np.asarray(a)
        if values.size != p.lanes:
            raise ValueError(f"{where}: a {p.ctype} holds {p.lanes} numbers, got {values.size}")
        # Each lane as a scalar parameter of its type is checked: a float for an int2 lane, or 300 for a uchar4's,
        # is refused, not truncated or wrapped.
        lanes = [v.item() if isinstance(v, np.generic) else v
                 for v in (values.ravel() if isinstance(a, np.ndarray) else list(a))]
        if isinstance(a, np.ndarray) and a.dtype.kind in "fc" and _element_dtype(p.dtype).kind in "iub":
            raise TypeError(f"{where}: {cpu._an(p.ctype)} holds integers, but the array holds {a.dtype}; pass "
                            f"integers (a.astype(np.{_np_name(_element_dtype(p.dtype).name)}) if every value is whole)")
        scalar = dataclasses.replace(p, ctype=cpu._VECTOR_ITEM.get(p.dtype, p.dtype), lanes=1)
        checked = []
        for lane, v in zip("xyzw", lanes):
            try:
                checked.append(_check_scalar(kernel, scalar, v))
            except (TypeError, ValueError) as error:
                text = str(error).replace(f"parameter '{p.name}' ({scalar})", f"parameter '{p.name}' ({p}), lane {lane}")
                raise type(error)(text) from None
        return np.array(checked, _element_dtype(p.dtype))
    if isinstance(a, (bytes, bytearray, memoryview)):
        return np.frombuffer(bytes(a), np.uint8)
    if isinstance(a, (np.void, np.ndarray)) and (a.dtype.names is not None or a.dtype.kind == "V"):
        if a.size != 1:
            raise ValueError(f"{where}: is one struct, but got {a.size} of them")
        if p.fields and a.dtype.names is not None:
            _check_fields(where, p, a.dtype)
        return np.frombuffer(np.ascontiguousarray(a).tobytes(), np.uint8)
    if p.dtype is not None and p.lanes > 1:  # a vector type (float4, int2, ...): its numbers
        kind = _element_dtype(p.dtype).kind
        numbers = ", ".join((f"{k}.0" if kind == "f" else str(k)) for k in range(1, p.lanes + 1))
        raise TypeError(f"{where}: {cpu._an(p.ctype)} takes {p.lanes} numbers, e.g. ({numbers}) (its "
                        f"{', '.join('xyzw'[:p.lanes])}); got {type(a).__name__}"
                        + (f" {a!r}" if isinstance(a, (int, float, np.number)) else ""))
    raise TypeError(f"{where}: a struct passed by value needs a NumPy structured scalar, e.g. "
                    "np.array((1.0, 3), dtype=np.dtype([('scale', np.float32), ('n', np.int32)], align=True))[()]"
                    f", or its bytes; got {type(a).__name__}")


def _check_fields(where: str, p: Param, dtype: np.dtype) -> None:
    """A structured argument's fields against the struct's members (Param.fields): the same kinds of number
    in the same order (its bytes are read member by member); fields named as the members are but in another
    order are named as such."""
    def flat(dt, at=0):  # (name, kind and size, count, offset) per field, nested records and subarrays flattened
        out = []
        for name in dt.names:
            field, offset = dt.fields[name][:2]
            base, count = (field.base, int(np.prod(field.shape))) if field.shape else (field, 1)
            if base.names is not None:
                for i in range(count):
                    out += [(f"{name}.{n}", k, c, o) for n, k, c, o in flat(base, at + offset + i * base.itemsize)]
            else:
                out.append((name, base.str[1:], count, at + offset))
        return out
    want = [(name, np.dtype(kind).str[1:] if kind != "bfloat16" else "u2", count) for name, kind, count in p.fields]
    natural = np.dtype([(n, k, (c,)) if c > 1 else (n, k) for n, k, c in want], align=True)
    if dtype.itemsize != natural.itemsize:
        return  # (a struct of another size: the launch says how many bytes it takes)
    # Fields that lie wholly in the struct's padding (a record's explicit `pad`) are the learner's own: left out.
    members = [(natural.fields[n][1], natural.fields[n][1] + natural.fields[n][0].itemsize) for n, _, _ in want]
    got = [(n, k, c) for n, k, c, o in flat(dtype)
           if any(o < end and start < o + np.dtype(k).itemsize * c for start, end in members)]
    described = lambda fields: ", ".join(f"{n} {_C_NAMES.get(k, k)}{f'[{c}]' if c > 1 else ''}" for n, k, c in fields)
    names_given = not all(re.fullmatch(r"f\d+", n) for n, _, _ in got)
    if names_given and sorted(n for n, _, _ in got) == sorted(n for n, _, _ in want) and \
            [n for n, _, _ in got] != [n for n, _, _ in want]:
        raise TypeError(f"{where}: the struct's members are ({described(want)}), in this order, but the argument's "
                        f"fields come in another order ({', '.join(n for n, _, _ in got)}): its bytes are read member "
                        "by member, so list the fields in the struct's order")
    expand = lambda fields: [k for _, k, c in fields for _ in range(c)]
    if expand(got) != expand(want):  # (other names in the same order: the learner's own, harmless)
        raise TypeError(f"{where}: the struct's members are ({described(want)}), but the argument's fields are "
                        f"({described(got)}): its bytes would be read as other numbers. Give the dtype the same "
                        f"fields, e.g. np.dtype([{', '.join(repr((n, np.dtype(k).name)) if c == 1 else repr((n, np.dtype(k).name, (c,))) for n, k, c in want)}], align=True)")


#: C names of NumPy's kinds, for messages about struct members.
_C_NAMES = {"f4": "float", "f8": "double", "i4": "int", "u4": "unsigned int", "i8": "long long",
            "u8": "unsigned long long", "i2": "short", "u2": "unsigned short", "i1": "signed char", "u1": "unsigned char",
            "f2": "__half", "b1": "bool"}


@functools.lru_cache(maxsize=None)
def _dtype(name: str):
    """NumPy dtype and value limits of a parameter type, computed once (launches are frequent)."""
    dtype = np.dtype(name)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return dtype, int(info.min), int(info.max)
    if dtype.kind == "f":
        return dtype, None, float(np.finfo(dtype).max)
    return dtype, None, None


def _check_array(kernel: Kernel, p: Param, a, backend_name: str):
    where = f"kernel '{kernel.name}', parameter '{p.name}' ({p})"
    if a is None:
        return None  # a null pointer, as CuPy passes None (an optional array the kernel tests: `if (bias)`)
    tensor = type(a).__module__.split(".")[0] == "torch"
    bfloat16_tensor = tensor and str(getattr(a, "dtype", "")) == "torch.bfloat16"  # (seen below as its uint16 bits)
    if backend_name == "cpu" and _is_cupy_array(a):
        raise TypeError(f"{where}: got a CuPy (GPU) array, but this kernel runs on the CPU backend; "
                        "pass a NumPy array (course.cuda.asnumpy(a))")
    if backend_name == "cupy" and isinstance(a, np.ndarray):
        raise TypeError(f"{where}: got a NumPy array, which lives in CPU memory; copy it to the GPU "
                        "with course.cuda.xp.asarray(a)")
    if backend_name == "cpu":
        a = _as_array(a)
    elif p.dtype is None and not _is_cupy_array(a):
        _note_unchecked(kernel, p)  # a pointer CuPy may still take (a torch tensor, an int address)
        return a
    expected_type = "a NumPy array" if backend_name == "cpu" else "a CuPy array"
    if not (isinstance(a, np.ndarray) if backend_name == "cpu" else _is_cupy_array(a)):
        address = isinstance(a, (int, np.integer)) and not isinstance(a, bool)
        raise TypeError(f"{where}: a pointer needs {expected_type}"
                        f"{f' of {_dtype_word(p.dtype)}' if p.dtype else ''}, got {type(a).__name__}"
                        + ("; an address (x.data_ptr(), a.ctypes.data) says nothing of the array's size, so the "
                           "kernel's accesses could not be checked: pass the array or the tensor itself (None "
                           "passes a null pointer)" if address and backend_name == "cpu" else ""))
    if p.lanes == 2 and p.dtype in ("float32", "float64") and a.dtype == np.result_type(p.dtype, 1j):
        a = a.view(p.dtype)  # complex64 for a float2* (cuFloatComplex*), complex128 for a double2*: (re, im)
    if p.ctype == "char" and p.dtype == "int8" and (a.dtype == np.uint8 or a.dtype.kind == "S"):
        a = a.view(np.int8)  # plain char* (text): bytes, as np.frombuffer(b"...", np.uint8) or a bytes array give them
    if p.ctype == "char" and a.dtype.kind == "U":
        raise TypeError(f"{where}: needs bytes, but the array holds Python text ({a.dtype}, 4 bytes a character); "
                        "pass its bytes: np.frombuffer(text.encode(), np.uint8), or a bytes array np.array([b'...'])")
    fields = [a.dtype.fields[name][0] for name in a.dtype.names] if a.dtype.names else []  # a record array's
    if p.fields and p.dtype is None:  # a pointer to a struct of numbers: a record array's fields as its members
        if a.dtype.names is not None:
            _check_fields(where, p, a.dtype)
        elif a.dtype.kind in "fc" and a.dtype.str[1:] not in {kind for _, kind, _ in
                                                             ((n, np.dtype(k).str[1:] if k != "bfloat16" else "u2", c)
                                                              for n, k, c in p.fields)}:
            members = ", ".join(f"{n} {_C_NAMES.get(np.dtype(k).str[1:], k) if k != 'bfloat16' else k}"
                                f"{f'[{c}]' if c > 1 else ''}" for n, k, c in p.fields)
            raise TypeError(f"{where}: points to structs of ({members}), but the array holds {a.dtype}, which no "
                            f"member is: its bytes would be read as other numbers. Pass a record array, e.g. "
                            f"np.zeros(n, np.dtype([{', '.join(repr((n, k)) if c == 1 else repr((n, k, (c,))) for n, k, c in p.fields)}], align=True))")
    if (isinstance(a, np.ndarray) and p.dtype is not None and len(fields) == max(p.lanes, 1)
            and all(field == _element_dtype(p.dtype) for field in fields)
            and a.dtype.itemsize == len(fields) * fields[0].itemsize):
        # fields x, y of float32 for a float2* (one of its element type for a float*): the same bytes as
        # interleaved float32 values
        a = a.view(_element_dtype(p.dtype))
    if p.dtype == "bfloat16" and a.dtype.name == "bfloat16" and a.dtype.itemsize == 2 and isinstance(a, np.ndarray):
        a = a.view(np.uint16)  # ml_dtypes' bfloat16 (JAX's): the same 16 bits
    if p.dtype is not None and a.dtype != _element_dtype(p.dtype):
        if p.dtype == "bfloat16" and a.dtype == np.uint16:
            pass  # bfloat16 bits
        elif bfloat16_tensor:
            raise TypeError(f"{where}: needs {p.dtype} elements, but the tensor holds bfloat16; convert it with "
                            f"t.to(torch.{p.dtype}), or declare the parameter `{'const ' if p.const else ''}"
                            f"__nv_bfloat16* {p.name}` (#include <cuda_bf16.h>) to use its bfloat16 values")
        elif p.dtype == "float32" and a.dtype in (np.float16, np.uint16):
            raise TypeError(f"{where}: needs float32 elements, but the array holds {a.dtype} (half precision?); "
                            f"declare the parameter `{'const ' if p.const else ''}__half* {p.name}` (numpy.float16) "
                            f"or convert the array with a.astype(np.float32)")
        elif a.dtype.kind == "c" and p.lanes == 2 and p.dtype in ("float32", "float64"):
            # complex numbers for a float2* / double2* (cuComplex): the pair's own complex type, not its floats
            pair = "complex64" if p.dtype == "float32" else "complex128"
            raise TypeError(f"{where}: needs pairs of {_dtype_word(p.dtype)} values, but the array holds {a.dtype}; "
                            f"convert it with a.astype(np.{pair}) (each number's real and imaginary parts as x and y)")
        else:
            convert = f"t.to(torch.{p.dtype})" if tensor and p.dtype != "bfloat16" else _astype(p.dtype)
            if fields and len(set(fields)) == 1:
                field = fields[0]  # a record array of one type: its bytes as that type
                convert = (f"a.view(np.{_np_name(field.name)}) (its fields as one flat array)"
                           if field == _element_dtype(p.dtype) else
                           f"a.view(np.{_np_name(field.name)}).astype(np.{_np_name(_element_dtype(p.dtype).name)})")
            raise TypeError(f"{where}: needs {_dtype_word(p.dtype)} elements, but the "
                            f"{'tensor' if tensor else 'array'} holds {a.dtype}; convert it with {convert}")
    if not (a.flags.c_contiguous or a.flags.f_contiguous):
        if p.const:
            copy = ("pass a contiguous copy: t.contiguous() (row-major)" if tensor else "pass a contiguous copy: "
                    "xp.ascontiguousarray(a) (row-major) or xp.asfortranarray(a) (column-major), whichever your "
                    "kernel indexes")
        else:  # (the kernel writes through it: what it writes into a copy must be copied back)
            copy = ("pass a contiguous copy, and, since the parameter is not const, copy what the kernel wrote into it "
                    "back after the launch (it stays in the copy otherwise): "
                    + ("`c = t.contiguous(); kernel(..., c, ...); t.copy_(c)`" if tensor else
                       "`c = xp.ascontiguousarray(a); kernel(..., c, ...); a[...] = c` (xp.asfortranarray(a) for a "
                       "kernel that indexes column by column)"))
        raise ValueError(f"{where}: the {'tensor' if tensor else 'array'} is not contiguous (a strided view such as "
                         f"a[::2] or a[:, 1:]?); a kernel sees raw memory, so {copy}")
    if a.ndim > 1 and a.flags.f_contiguous and not a.flags.c_contiguous and a.base is not None:
        # `m.T`, a transposed tensor: a view whose memory the kernel reads as it lies, column by column; most
        # kernels index row by row (y * width + x) and would read the untransposed data. (An array made
        # column-major on purpose, np.asfortranarray(...), owns its memory: no warning.)
        warnings.warn(f"{where}: the {'tensor' if tensor else 'array'} is column-major (Fortran order; a transposed "
                      f"view such as m.T?), so the "
                      f"kernel reads its memory column by column: an index y * width + x meets the data as it was "
                      f"before the transpose. If the kernel indexes row by row, pass "
                      + ("t.contiguous()" if tensor else "xp.ascontiguousarray(a)")
                      + ("" if p.const else " (a copy: copy it back after the launch if the kernel writes it)")
                      + ".",
                      KernelWarning, stacklevel=cpu._user_level())
    if backend_name == "cpu" and not p.const and not a.flags.writeable:
        raise ValueError(f"{where}: the array is read-only, but the parameter is not const; pass "
                         f"a.copy(), or declare the parameter `const {p.ctype}*` if the kernel only reads it")
    if p.lanes > 1 and p.dtype is not None:
        alignment = a.itemsize * (p.lanes if p.lanes != 3 else 1)
        address = a.__array_interface__["data"][0] if backend_name == "cpu" else a.data.ptr
        if a.ndim > 1 and a.shape[-1] % p.lanes:  # RGB pixels (h, w, 3) for a uchar4*, say
            raise ValueError(f"{where}: a {p.ctype} holds {p.lanes} values, but the array's last dimension "
                             f"has {a.shape[-1]} (shape {tuple(a.shape)}), so its rows do not split into whole "
                             f"{p.ctype}s; give it a last dimension of {p.lanes} (e.g. add a channel with "
                             f"np.concatenate), or declare the parameter to match the data: "
                             f"{_matching_pointer(p.ctype[:-1], a.shape[-1])}")
        if a.size % p.lanes or address % alignment:
            raise ValueError(f"{where}: a {p.ctype} array needs a size that is a multiple of {p.lanes} "
                             f"and memory aligned to {alignment} bytes; got size {a.size}")
    return a


def _matching_pointer(vector_base: str, width: int) -> str:
    """What to declare for rows of `width` values of a vector type's base ('uchar', 3 → 'uchar3*')."""
    scalar = {"uchar": "unsigned char", "ushort": "unsigned short", "uint": "unsigned int",
              "ulong": "unsigned long", "longlong": "long long", "ulonglong": "unsigned long long"}.get(vector_base,
                                                                                               vector_base)
    if 1 < width <= 4 and vector_base not in ("half", "bfloat"):
        return f"{vector_base}{width}*, or {scalar}* and index three values per row yourself" if width == 3 \
            else f"{vector_base}{width}*, or {scalar}*"
    return f"{scalar}* and index the rows yourself"


def _element_dtype(name: str):
    return np.dtype(np.uint16) if name == "bfloat16" else _dtype(name)[0]


def _dtype_word(name: str) -> str:
    return "bfloat16 (a torch.bfloat16 tensor, or its bits as numpy.uint16)" if name == "bfloat16" else name


def _astype(name: str) -> str:
    if name == "bfloat16":
        return "torch.from_numpy(a).to(torch.bfloat16), or pass the bits: a.view(np.uint16)"
    return f"a.astype(np.{_np_name(name)})"


def _np_name(name: str) -> str:
    """NumPy's attribute for the dtype `name`: np.bool_ for bool (np.bool is missing from NumPy 1.24 to 1.26)."""
    return "bool_" if name == "bool" else name


def _bfloat16_bits(value: float) -> np.uint16:
    """The bfloat16 nearest to `value` (ties to even, as the GPU converts), as its 16 bits."""
    bits = int(np.array(value, np.float32).view(np.uint32))
    if (bits & 0x7FFFFFFF) > 0x7F800000:
        return np.uint16(0x7FFF)
    return np.uint16(((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF)


def _check_scalar(kernel: Kernel, p: Param, a):
    where = f"kernel '{kernel.name}', parameter '{p.name}' ({p})"
    if p.dtype == "bfloat16":
        is_bfloat16 = isinstance(a, np.generic) and a.dtype.name == "bfloat16"  # (ml_dtypes' scalar)
        if not (isinstance(a, (int, float, np.integer, np.floating)) or is_bfloat16) or isinstance(a, (bool, np.bool_)):
            raise TypeError(f"{where}: needs a number, got {type(a).__name__}")
        return _bfloat16_bits(float(a))
    dtype, low, high = _dtype(p.dtype)
    if isinstance(a, np.ndarray) or _is_cupy_array(a) or type(a).__module__.startswith("torch"):
        one = getattr(a, "size", None)
        one = one() if callable(one) else one
        single = one == 1 or (hasattr(a, "numel") and a.numel() == 1)
        raise TypeError(f"{where}: is a scalar, but got {'a one-element array' if single else 'an array'}; pass a "
                        f"number: {'a.item()' if single else 'one of its elements, a[0].item()'} (a Python number), or "
                        f"np.{dtype.name}(...)")
    if isinstance(a, (bool, np.bool_)):
        value = bool(a)
    elif isinstance(a, (int, np.integer)):
        value = int(a)
    elif isinstance(a, (float, np.floating)):
        if dtype.kind == "b":
            raise TypeError(f"{where}: is a bool, but got the float {a!r}; pass True or False")
        if dtype.kind != "f":
            raise TypeError(f"{where}: is an integer, but got the float {a!r}; pass an int")
        value = float(a)
    else:
        raise TypeError(f"{where}: needs a number, got {type(a).__name__}")
    if dtype.kind in "iu" and not isinstance(value, bool) and not low <= value <= high:
        raise ValueError(f"{where}: {value} does not fit in {p.ctype} ({low} to {high})")
    if dtype.kind == "f":
        try:
            value = float(value)
        except OverflowError:
            value = float("inf")  # an int too large for any float: reported just below
        if math.isinf(value) and not isinstance(a, (float, np.floating)) or (
            math.isfinite(value) and abs(value) > high
        ):
            raise ValueError(f"{where}: {a} does not fit in {p.ctype} (largest {high:g})")
    if dtype.kind == "b" and not isinstance(value, bool):
        if value not in (0, 1):
            raise ValueError(f"{where}: {value} is not a bool (0 or 1)")
    return dtype.type(value)


def _remember_owners(module, arrays: list) -> None:
    """Weak references to what owns the memory of a launch's argument arrays, by their addresses: whether it
    still exists tells a __device__ pointer kept from an earlier launch into freed memory (cpu.py,
    _poison_stale_pointers). A view counts by the array that owns its memory; memory that no NumPy array
    owns (a torch tensor's, say) is not followed."""
    for v in arrays:
        owner = v
        while isinstance(owner, np.ndarray) and isinstance(owner.base, np.ndarray):
            owner = owner.base
        if not isinstance(owner, np.ndarray) or owner.base is not None:
            continue
        try:
            module.owners[v.__array_interface__["data"][0]] = weakref.ref(owner)
        except TypeError:
            continue
    if len(module.owners) > 256:
        for address in [a for a, ref in module.owners.items() if ref() is None][:128]:
            del module.owners[address]


def _launch_key(grid, block, args, shared_mem):
    """What a CPU launch's checks and packing depend on: the launch's shape (plain ints, copied out of a list),
    and each argument's memory, layout and type, or its bits (a scalar: -0.0 is not 0.0); None where anything
    is of another kind (the launch is checked afresh)."""
    if not isinstance(args, tuple) or type(shared_mem) is not int:
        return None
    shape = []
    for dims in (grid, block):
        dims = tuple(dims) if isinstance(dims, (tuple, list)) else (dims,)
        if not all(type(d) is int for d in dims):
            return None
        shape.append(dims)
    parts = [*shape, shared_mem]
    for a in args:
        if type(a) is np.ndarray:
            parts.append((a.__array_interface__["data"][0], a.shape, a.strides, a.dtype, a.flags.writeable,
                          a.flags.owndata))
        elif isinstance(a, np.generic) and isinstance(a, (np.integer, np.floating)):
            parts.append((type(a), a.tobytes()))
        elif type(a) in (int, bool):
            parts.append((type(a), a))
        elif type(a) is float:
            parts.append((float, struct.pack("<d", a)))
        else:
            return None
    return tuple(parts)


def _pack_for_cpu(kernel: Kernel, values: list, sanitized: bool = False) -> tuple[list, dict, list]:
    """(data address, byte count, scalar bits) per parameter, the arrays by address (for
    messages), and the objects the packed addresses point into (kept alive for the launch).
    `sanitized`: mark the arrays that ``xp.empty`` filled (their reads are checked for the fill)."""
    packed, arrays, keep = [], {}, []
    for p, v in zip(kernel.params, values):
        if p.pointer and v is None:  # a null pointer
            packed.append(cpu._Arg(None, 0, 0))
        elif p.pointer or p.by_value_struct:
            address = v.__array_interface__["data"][0]
            read_only = p.pointer and (p.const or not v.flags.writeable)
            # The race checker's unit: an element, or in an array of structs (a NumPy record) 4 bytes, so
            # that threads using different members of one struct (pos and vel of a particle) do not meet.
            unit = math.gcd(v.itemsize, 4) if v.dtype.fields is not None or v.itemsize > 8 else v.itemsize
            # (and a record array's itemsize: runtime.h checks it against the struct's sizeof)
            record = v.itemsize if v.dtype.fields is not None and v.itemsize < 1 << 23 else 0
            unwritten = sanitized and p.pointer and host.unwritten_from_empty(address, v.nbytes)
            packed.append(cpu._Arg(address, v.nbytes, unit | (read_only << 32) | (unwritten << 34) | (record << 40)
                                   if p.pointer else 0))
            keep.append(v)
            if p.pointer:
                arrays.setdefault(address, (p.name, v.size // p.lanes, v.itemsize * p.lanes))
        else:
            bits = int.from_bytes(v.tobytes().ljust(8, b"\0"), sys.byteorder)
            packed.append(cpu._Arg(None, 0, bits))
    return packed, arrays, keep


# ----------------------------------------------------------------------------------------
# The CuPy backend
# ----------------------------------------------------------------------------------------


class _CupyKernel:
    """cupy.RawKernel, with compile errors as CompileError and printf output shown in the notebook."""

    def __init__(self, code: str, name: str, options, function=None, cupy_only=None, log_stream=None):
        import cupy

        self.name = name
        cupy_only = cupy_only or {}
        if function is None:
            code = code if cupy_only.get("jitify") else for_nvrtc(code)  # (jitify has its own)
            function = cupy.RawKernel(code, name, options=tuple(options), **cupy_only)
        self.kernel = function
        self.prints = "printf" in code
        try:
            if hasattr(self.kernel, "compile"):
                self.kernel.compile(log_stream=log_stream)
        except Exception as error:  # cupy.cuda.compiler.CompileException
            if type(error).__name__ == "CompileException":
                raise CompileError(f"kernel '{name}' does not compile (NVRTC):\n{error}") from error
            raise

    def launch(self, grid, block, values, shared_mem: int, stream=None) -> None:
        on = {"stream": stream} if stream is not None else {}  # (CuPy's keyword: None is its current stream)
        try:
            if self.prints:
                import cupy

                # Device printf writes to the process's file descriptor 1, which Jupyter does
                # not show: capture it and write it to sys.stdout.
                with captured_fd1():
                    self.kernel(grid, block, tuple(values), shared_mem=shared_mem, **on)
                    cupy.cuda.Device().synchronize()
            else:
                self.kernel(grid, block, tuple(values), shared_mem=shared_mem, **on)
        except Exception as error:
            if type(error).__name__ in ("CUDADriverError", "CUDARuntimeError"):
                raise KernelError(
                    f"kernel '{self.name}' failed on the GPU: {error}. After an illegal memory access "
                    "the GPU context is unusable: restart the notebook's kernel. Run the kernel with "
                    "backend='cpu' to find the block, thread and line.",
                    kernel=self.name,
                ) from error
            raise


@contextlib.contextmanager
def captured_fd1():
    """Send what C code writes to file descriptor 1 during the block to sys.stdout instead."""
    import ctypes

    libc = ctypes.CDLL(None)
    sys.stdout.flush()
    libc.fflush(None)
    saved = os.dup(1)
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 1)
        try:
            yield
        finally:
            libc.fflush(None)
            os.dup2(saved, 1)
            os.close(saved)
            sink.seek(0)
            text = sink.read().decode("utf-8", "replace")
            if text:
                cpu._print(text)
