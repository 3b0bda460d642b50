"""CUDA C kernels with or without a GPU — introduced in notebook 01 (CUDA basics), used by
notebooks 06 (image sharpening) and 08 (GPU performance).

The same CUDA C source runs on CuPy when a GPU is usable, and otherwise is compiled for the
CPU with the system C++ compiler and run for every block and thread (shared memory,
``__syncthreads()`` and atomics included)::

    import numpy as np
    import course.cuda as cuda

    add = cuda.RawKernel(r'''
    extern "C" __global__ void add(const float* a, const float* b, float* c, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) c[i] = a[i] + b[i];
    }''', "add")
    xp = cuda.xp                                   # cupy on a GPU, numpy on the CPU (see course.cuda.host)
    a = xp.arange(1000, dtype=xp.float32); b = 2 * a; c = xp.empty_like(a)
    add((4,), (256,), (a, b, c, 1000))             # grid, block, args — as cupy.RawKernel
    cuda.asnumpy(c)

Arguments are checked against the kernel's parameter list on both backends (a type the
checker cannot read goes to CuPy unchecked, with a one-line note). ``None`` for a pointer is a
null pointer, as in CuPy (an optional array the kernel tests with ``if (bias != nullptr)``).
``RawKernel`` and ``RawModule`` also take CuPy's ``enable_cooperative_groups``, ``jitify`` and
``translate_cucomplex``, handed to CuPy on a GPU (``backend`` here says where kernels run:
``"auto"``, ``"cpu"`` or ``"cupy"``; CuPy's compiler choice is always NVRTC), and a kernel has
CuPy's attributes of the compiled binary (``num_regs``, ``max_threads_per_block``,
``shared_size_bytes``, ...) on a GPU; on the CPU, which compiles no GPU binary, reading one says so.
CuPy's signatures are kept: ``RawKernel(code, name, options)`` (``options`` the third argument,
a tuple), ``kernel(grid, block, args, shared_mem=0, stream=None)`` (the stream goes to CuPy on a GPU;
the CPU backend takes a stream or None and runs the launch synchronously, finished when the call
returns), ``RawModule(code=...)`` or ``RawModule(path=...)`` (exactly one); ``code``, ``name`` and
``options`` are read-only, and kernels and modules pickle and copy by their source and settings, to
compile again where they are loaded. An option NVRTC does not have (``-O3``, ``-std=c++99``) is refused
on the CPU backend too, as NVRTC refuses it on a GPU.

What the CPU backend runs (it emulates an sm_80 GPU: ``__CUDA_ARCH__`` is 800):

- everyday CUDA C: ``<cfloat>``, ``<climits>``, ``<cstdint>``, ``<math_constants.h>``,
  typedefs and ``-D`` types as parameters, structs by value (NumPy structured scalars),
  Fortran-ordered arrays as raw memory, ``float4`` and other casts, templates (a template
  helper's ``const T*`` or ``volatile T*`` parameter takes any array and deduces ``T`` as nvcc does,
  whether the helper is declared before the kernel, defined after it, or overloaded), array
  reference parameters (``float (&r)[4]``, ``T (&r)[N]``), and integer intrinsics down to
  ``__dp4a`` and the address-space tests (``__isShared``, ``__isConstant``, ...);
- warp-level programming with real warp semantics: ``__shfl*_sync`` (with width), votes,
  ``__activemask``, ``__syncwarp``, ``__reduce_*_sync``, ``__match_*_sync``, and cooperative
  groups (``this_thread_block``, ``tiled_partition``, ``labeled_partition``, ``binary_partition``,
  tile shuffles and votes, ``cg::reduce``, ``invoke_one``, ``thread_group`` parameters that take
  a block, a tile or ``coalesced_threads()``, and the grid group's sizes and ranks); in a plain launch a
  block's threads take the ``volatile`` accesses of warp-synchronous steps (a statement that stores into one
  element of a volatile array and reads another, ``vs[tid] += vs[tid + 16];``) in step, one each a round, as
  a warp's lanes do on a GPU, so the unrolled last warp of older reductions gives its sums (the sanitizer
  reports it as the race it is since Volta, and asks for ``__syncwarp()``);
- half precision (``__half``, ``half2``, ``__nv_bfloat16``) rounded exactly as the GPU rounds;
- ``RawModule(code=..., name_expressions=[...])`` for template kernels and ``get_global`` to
  fill ``__constant__`` memory from the host, as ``cupy.RawModule``;
- cuRAND's device API with ``curandState`` (XORWOW) and ``curandStatePhilox4_32_10_t``:
  ``curand_init``, ``curand``, ``curand4``, ``skipahead``, ``skipahead_sequence`` and the uniform,
  normal and log-normal draws (with their 2, 4 and ``_double`` forms), giving a GPU's bits (normal
  and log-normal ones up to the last bits of ``logf``/``sinf``/``expf``); a draw from a state
  ``curand_init`` never set up is reported, and the race checker sees threads sharing one state;
- CUB's ``BlockReduce``, ``BlockScan`` and ``WarpReduce`` with their ``TempStorage`` (and ``cub::Sum``,
  ``Max``, ``Min``; scans of one item or of a thread's items, with the block's aggregate, any operator, or a
  block prefix callback for a scan tile by tile): storage used again without a ``__syncthreads()`` first is reported as the race on
  it, and a launch whose block is not the size a collective was declared for is stopped.

It refuses (only the kernels that use them, saying what to do instead) inline PTX, textures,
launches from a kernel, grid-wide sync, tensor-core (WMMA) code, ``cuda::pipeline`` copies, the rest of CUB
and Thrust, and cuRAND's other generators and distributions (MRG32k3a, Sobol, MTGP32, Poisson,
discrete) (``cooperative_groups::memcpy_async`` and ``wait`` run, as a copy and a sync).
Device code that uses host code, which g++ would compile but nvcc and NVRTC refuse, is refused
with the reason, so that a kernel that runs here compiles on a GPU too (and host code that no device code
uses, which nvcc would compile for the host but NVRTC, CuPy's compiler, refuses all the same): a function (member
function, constructor, template) declared without ``__device__``, host library calls (``rand()``,
``std::vector``, ``std::cout``, ``strlen``), constexpr library code nvcc allows only with
``--expt-relaxed-constexpr`` (``std::min``, ``std::numeric_limits``: ``min``, ``FLT_MAX`` and
``cuda::std::`` are device code), a file-scope variable without ``__device__`` or ``__constant__``
(``const`` scalars are fine), a ``__global__`` function called like a function; and so is what
else nvcc refuses: a ``__shared__`` variable with an initializer, a ``__device__`` or
``__constant__`` variable initialized by a call (``= sqrtf(2.0f)``), an array sized at run time, and
what CUDA declares in a header the source does not include (``__half`` without ``<cuda_fp16.h>``, cuRAND without
``<curand_kernel.h>``, cooperative groups, ``cg::reduce`` without ``<cooperative_groups/reduce.h>``, CUB,
``cuda::atomic_ref``), which the CPU backend builds in and nvcc and NVRTC do not.
NVRTC's ``-default-device`` option turns the host-code check off. On CuPy, NVRTC has none of the
host's C headers that nvcc compiles with: ``course/cuda/nvrtc.py`` gives it what they would
(``<cfloat>``, ``<climits>``, ``<cstdint>``, ``M_PI``, ``uint``, ``assert``, ``math_constants.h``),
kept out where NVRTC finds the header, with the learner's line numbers. ``course.cuda.nvrtc.compile_ptx(code)``
runs NVRTC itself where it is installed (PyTorch's CUDA wheels ship it), GPU or not, and gives the PTX CuPy
would load; the tests compile every notebook and parity-suite kernel so, to hold the CPU backend to what
NVRTC accepts. libcu++'s ``<cuda/atomic>``
(``cuda::atomic_ref<T, scope>`` and ``cuda::atomic<T, scope>``, whose memory orders fence as PTX's do, and
``cuda::atomic_thread_fence``) and its C++17 ``<cuda/std/...>`` headers (``cuda::std`` is the host's ``std`` but
for ``cuda::std::atomic``, a ``cuda::atomic`` of system scope that the sanitizer sees; ``<cuda/std/bit>``'s
``bit_cast``, ``popcount``, ... are added; a ``cuda::std::array``'s subscripts are checked as a local array's)
compile too, and so do ``__grid_constant__`` parameters (const, as NVRTC requires) and ``__maxnreg__``. One difference stays: a
pointer variable is a checked pointer here, so ``sizeof(p)`` (and of a struct holding pointers) is
larger than a GPU's 8 bytes a pointer; byte counts made with it match the memory here. And ``a * b + c``
is two roundings here, where nvcc and NVRTC (``--fmad=true``, their default) fuse it into one FMA: results
may differ from a GPU's in the last bit (compare with a tolerance; ``__fmaf_rn(a, b, c)`` is one rounding on both).
Memory written as one type and read as another in one thread (``int* k = (int*)out; k[i] = 0; out[i] = 1.0f;
k[i]``) gives what a GPU gives: a source that casts pointers or has a union is compiled without C++'s strict
aliasing, which lets an optimizing compiler reorder those accesses.

A buggy kernel raises ``KernelError`` naming the kernel, block, thread and line: out-of-bounds
accesses of argument, ``__shared__``, local and file-scope ``__constant__``/``__device__``/``__shared__`` arrays,
of array members of structs (``acc.v[i]``) and of blocks from ``malloc``/``new`` in the kernel (also through pointers made from them, casts,
``float4`` views and ``memcpy``/``memset``), a vector load from a misaligned address, ``free`` or
``delete`` of a pointer no ``malloc``/``new`` returned or of a block freed already, a
``__syncthreads()`` some threads go past (inside an ``if`` they skip; a thread that has returned is
done, and a barrier or warp-level call waits for the others, as on sm_70+), a warp-level call not
every lane of its mask reaches, a result computed from what a shuffle read from a lane outside its mask or
one that returned (undefined on a GPU: here a NaN-like pattern, reported where a float result holds it; with
the sanitizer, any result that depends on it, an int sum or a fmaxf too: the launch runs again with other
bits there, and a result that changes is reported; a value left unused is no bug), a shift by a negative
count or by the width of its type or more (``1u << 32``: undefined, 0 on a GPU and 1 on a CPU), a float
converted to an integer type it does not fit (``(unsigned char)300.0f``: 255 on a GPU, 44 on a CPU; NaN),
an integer division by zero, a ``__builtin_unreachable()`` reached, the end of a function that returns a value
reached without a ``return`` (nvcc's "missing return statement" warning is given at compile time too), a ``malloc``
past the device heap's 8 MiB (``set_heap_size``; the fault that follows
says malloc returned NULL), a ``printf`` whose format takes another kind of value than it is given
(``%d`` of a float, ``%f`` of an int, ``%s`` of a number, any conversion of a ``__half``, a ``float2`` or
``threadIdx``: a GPU prints a meaningless number) or more values than it is given (or more than CUDA's 32), a failed
``assert`` (off with ``-DNDEBUG``, as with nvcc), ``__trap()``, the time limit, a crash.
With the sanitizer on — ``RawKernel(..., sanitize=True)``, ``COURSE_CUDA_SANITIZE=1``, a learner's
``backend="cpu"`` and every ``course.checks.check_kernel`` — it also catches data races on shared memory (between barriers,
and between ``__syncwarp()`` calls for lanes of one warp, where a call of a sub-mask (``__syncwarp(0xffff)``, a
16-thread tile's ``sync()``) orders only the lanes it names, and a shuffle, vote or match orders no memory at
all, as on a GPU; a plain access beside another thread's
atomic counts, an ``atomicCAS`` loop's first read beside other threads' ``atomicCAS`` does not (the CAS
checks it), nor does many threads storing the same value; a thread that read an element
before another thread wrote it is that race, with the place for the missing ``__syncthreads()``),
reads of shared memory no thread of the block wrote (an ``atomicExch`` into it writes it), reads of a local array's element its thread
never wrote (``unsigned char``, ``__half`` and ``bool`` elements too), reads of global memory that nothing wrote (compute-sanitizer's initcheck: an element of an array
from ``xp.empty`` or ``xp.empty_like``, which on the CPU backend holds the bytes 0xFE as a GPU's holds garbage
(``c[i] += a[i]`` into an output never cleared, a histogram's bins), or of a block from ``malloc``/``new``;
an atomic's old value counts, a vector or struct only when no part of it was written; a 1- or 2-byte element, a
``char``, ``short`` or ``__half``, whose fill is a value real data holds too, only while its array held nothing but
the fill when the launch began and no thread of the launch wrote it), two threads of one launch using one element of global memory (an argument array or
a ``__device__`` variable) without an atomic,
unordered, while one of them writes it (two writes of different values, a read of another
thread's element in an in-place stencil or scan, a plain store beside other threads' atomics, a
plain read of a total that other blocks still add to atomically in the same launch (not an
``atomicCAS`` loop's read: its CAS checks it); a
plain read and a write (or an atomic update) only when their order matters: the launch runs again, from the
same memory, with blocks and threads in the opposite order and with each such read seeing the value from
before the write or update (a check-then-set that two threads both pass; a slot read apart from the
``atomicAdd`` that takes it, which two threads then share), and, where the write stored the value the
element held already (an in-place blur of a straight line, which leaves it as it is), once more with other
values in that array (random numbers in a floating-point array, its own values shuffled in an integer one),
in both orders; a read after the thread's own store of that value is no race; and a
race that leaves every result
as it was, such as the breadth-first search that marks a vertex's level while other threads test
theirs, is no bug; the message of one that does change them shows which element and how),
a value stored (plainly or through a ``volatile`` pointer) and read by another block that waited for a
flag or an atomic the writer set with no ``__threadfence()`` between (neither ``volatile`` nor an atomic
orders the store: the chained scan's running sum, the last block's partial sums), or that waited for
another flag than the one set after the store (a wait hands over what was released up to the value it
sees: every block waiting for block 0's flag, then reading block b - 1's sum),
writes into read-only arrays and ``__constant__`` memory, uses of a block after its
``free``, a ``__syncthreads()`` inside an ``if`` the block's threads take differently (the bitonic step's
``if (p > t) { swap; __syncthreads(); }``, whose skipping threads meet the others there in a later pass),
a thread reaching another thread's local array through a pointer (handed over in shared memory),
an ``atomicAdd_block`` (or another ``_block`` atomic, or a ``cuda::atomic_ref`` of ``thread_scope_block``) on a
global element that other blocks update too (it is atomic only among one block's threads),
an atomic function on a thread's own local variable (``int c = 0; atomicAdd(&c, 1);``: atomics work on
global and shared memory),
and an ``__ldg`` of an element written earlier in the launch (the read-only cache is not coherent);
and it warns (``KernelWarning``) when blocks store the same values into the same elements
(32 or more) at one line, as an index without ``blockIdx`` makes them do, and when threads of one block do
(a thread repeating another's stores one after another, 8 or more elements in a block: an index without
``threadIdx``, or with ``threadIdx.y`` in a 1-D block; not threads marking the neighbours they share, nor every
thread storing its block's one result), and when a loop hands out a block's elements by ``threadIdx.x`` alone,
stepping by ``blockDim.x``, in a launch whose blocks have several rows of threads (every row repeats its stores and
atomics: a 2-D block's shared histogram counted ``blockDim.y`` times), and when a launch leaks
device-heap memory (compute-sanitizer's ``--leak-check full``: blocks its ``malloc``/``new`` made, not freed, to
which no pointer is left in an argument array, a ``__device__`` variable or another block; it names the line),
and when threads take locks in a cycle (ThreadSanitizer's lock-order check: a lock is what an ``atomicCAS``
swaps out and an ``atomicExch`` or ``atomicCAS`` puts back; thread i locking ``m[i]`` and then ``m[i + 1]``
can deadlock on a GPU, where the threads run at once). A time limit met at an ``atomicCAS`` spin names the
``return`` or ``break`` that leaves the locked region without releasing it, or the barrier or warp-level call
inside it that the spinning threads never reach. Blocks may not use more than 48 KiB of shared memory (up to an
A100's 163 KiB, static arrays at most 48 KiB, for a kernel that opts in as with CuPy:
``kernel.max_dynamic_shared_size_bytes = 100 * 1024``), a module's ``__constant__``
variables not more than 64 KiB, and a launch may not pass a ``__launch_bounds__``. A variable read
before it has a value (``float sum;`` then ``sum += x[i];``) and a function that returns its own
local array's (or a by-value parameter's) address get a ``KernelWarning`` when the kernel compiles,
as nvcc warns, and so does an ``atomicCAS`` whose result is ignored or whose loop never refreshes the
value it compares with (only contention breaks those: threads that run one after another never do), a loop that
waits on a plain read (``while (flag[0] == 0) { }``: nvcc reads it once and spins forever), and a last block
picked by ``blockIdx.x == gridDim.x - 1`` after a ticket whose value is unused (blocks run in launch order here,
which never shows either) (in a sanitized
launch such a variable starts as the bytes 0xFE, so ``int j;`` used as an index before it has a value
is usually a fault whose message says so, and its value stored into an array or passed to an atomic is
reported: a float's always, an int's in a kernel that declares an integer without a value, each lane of a
vector such as a ``float4`` whose ``.w`` was never set, each 4-byte word of one of the source's structs
stored whole (its padding left out) in a kernel that declares such a struct without a value, and, stored into
shared memory, where a thread reads it; a block from ``malloc``/``new`` starts as those bytes too; where the
compiler keeps it in a register across threads, it may hold the previous thread's value instead), and so do
two ``extern __shared__`` arrays in one kernel (they are one array; not when they are used in phases split by a
``__syncthreads()``), and a pointer inside a struct
whose bytes come from the host (what it points to cannot be bounds-checked); host code pasted with the kernels (``main``, ``cudaMalloc``,
``<<<...>>>``) is refused with what Python does instead. A launch whose ``blockDim.x`` is not a power of two gets
a ``KernelWarning`` (on either backend) where the kernel has a loop that halves it (a tree reduction's
``s = blockDim.x / 2; s > 0; s >>= 1``, which then leaves values out, with no access that a sanitizer could
call wrong), and so does a one-thread-per-element launch whose grid is too small for its guard
(``i = blockIdx.x * blockDim.x + threadIdx.x``, or a ``__device__`` helper that returns it, with ``if (i < n)``,
launched on ``n // 256`` blocks: the last elements get no thread), and a block whose threads the code cannot
tell apart (only ``threadIdx.y`` in a 1-D block, or no ``threadIdx`` at all, with several threads a block: they
all do the same work), and a global index that adds another axis's thread index in a block that is not
square (``blockIdx.x * blockDim.x + threadIdx.y`` in a 1-D block: every thread of a block gets the same
index), and a loop that starts at the thread's index in the grid but steps by one block
(``i += blockDim.x`` with several blocks: blocks go over each other's elements, which atomics add again),
and an atomic of one ``__shared__`` element (``atomicAdd(out, s[0])``, a block's total) that no test of the
thread's index keeps to one thread (or that a lane's test, ``if (lane == 0)``, keeps to one thread of each warp). Accesses through references
(``__device__ void add(float& total, float v)``) and inside ``#define`` macros are checked where
they happen. The sanitizer costs 50 to 200 times the run time (``make bench`` measures it), so plain (``backend="auto"``)
launches, the ones you time, run without it; they still catch a kernel that changes ``__constant__``
memory or writes into a ``const`` parameter through a cast (compared after the launch and put back, with
the lines that write or cast it). (On a GPU none of this can be caught before it happens: run the kernel
with ``backend="cpu"``.)

The CPU backend runs the blocks of a launch on every core the process may use, as a GPU runs
blocks on its SMs (``COURSE_CUDA_THREADS=N`` sets how many worker threads; 1 runs the blocks
one after another); the threads of each block take turns on one core (a thread that waits in a
loop for a volatile or atomic flag, or a lock, that another thread of its block sets gives its turn
up now and then, as warps of a GPU run side by side). ``printf`` output (whole lines, in block
order) and error messages (the first faulting block in launch order) are those of a serial run,
and so are the results of a kernel without races; atomics are real atomics, so a float sum by
``atomicAdd`` may round differently from run to run, as on a GPU, and a racy kernel (``hist[b]++``
without an atomic, blocks that wait for blocks launched after them) may give other results, or
finish or not, with another number of worker threads: the sanitizer reports those. Sanitized launches run on one
worker thread, so that which of two racing blocks is reported never depends on timing. The
worker threads wait between launches (``top -H`` shows them as ``course.cuda``); one left idle
for 2 s ends, and a forked process (a DataLoader worker) starts its own.

Compiled kernels are kept in ``$COURSE_CUDA_CACHE`` (by default ``torch-cuda-course/kernels`` in
``$XDG_CACHE_HOME`` or ``~/.cache``; a folder only you may write), so a kernel compiles once; past
512 MB the modules used longest ago are removed.
"""

from __future__ import annotations

import numbers
import platform

from .errors import CompileError, KernelError, KernelWarning
from .kernel import DEFAULT_TIME_LIMIT, RawKernel, RawModule, backend

__all__ = [
    "RawKernel", "RawModule", "KernelError", "CompileError", "KernelWarning", "backend", "xp", "asnumpy", "synchronize",
    "device_name", "benchmark", "DEFAULT_TIME_LIMIT", "set_heap_size",
]


def asnumpy(a):
    """A NumPy array from a CuPy or NumPy array, a torch tensor (any device) or a list (a view when possible)."""
    if type(a).__module__.split(".")[0] == "cupy":
        return a.get()
    if hasattr(a, "detach") and hasattr(a, "cpu"):  # torch.Tensor: checked by duck type, torch stays unimported
        return a.detach().cpu().numpy()
    import numpy

    return numpy.asarray(a)


def set_heap_size(bytes: int) -> None:
    """The size of the heap that malloc and new take from in kernels (cudaLimitMallocHeapSize: 8 MiB by
    default, on a GPU and here). Past it they return NULL, as on a GPU. On CuPy, set it before the
    first launch of a kernel that allocates: a GPU fixes it then. ``bytes``: an int, or a NumPy integer."""
    if isinstance(bytes, bool) or not isinstance(bytes, numbers.Integral) or bytes < 1:
        raise ValueError(f"set_heap_size takes a whole number of bytes >= 1, got {bytes!r} (e.g. 64 * 2**20)")
    bytes = int(bytes)  # (np.int64(2**24), say)
    from . import cpu

    cpu.HEAP_BYTES[0] = bytes
    if backend() == "cupy":
        import cupy

        cupy.cuda.runtime.deviceSetLimit(cupy.cuda.runtime.cudaLimitMallocHeapSize, bytes)


def synchronize() -> None:
    """Wait until launched kernels have finished (CPU launches finish before they return)."""
    if backend() == "cupy":
        import cupy

        cupy.cuda.Device().synchronize()


def device_name() -> str:
    """What runs the kernels, e.g. 'NVIDIA T4' or 'CPU (x86_64), CUDA C emulated'."""
    if backend() == "cupy":
        import cupy

        device = cupy.cuda.Device()
        name = cupy.cuda.runtime.getDeviceProperties(device.id)["name"]
        return name.decode() if isinstance(name, bytes) else str(name)
    from .source import EMULATED_ARCH

    return f"CPU ({platform.machine() or 'unknown'}), CUDA C emulated as sm_{EMULATED_ARCH // 10}"


def __getattr__(name):
    # PEP 562: `xp` follows the backend and `benchmark` lives in course.timing; both are
    # looked up on use, so `import course.cuda` imports neither CuPy nor the timing helpers.
    if name == "xp":
        if backend() == "cupy":
            import cupy

            return cupy
        from . import host  # NumPy, whose empty arrays hold garbage as a GPU's do

        return host
    if name == "benchmark":
        from course.timing import benchmark

        return benchmark
    raise AttributeError(f"module 'course.cuda' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
