// CUDA C on the CPU: what every kernel is compiled with on the "cpu" backend (notebook 01).
//
// course/cuda/source.py rewrites a kernel's source a little (pointer parameters become checked
// pointers, `extern __shared__` arrays become the launch's dynamic shared memory); cpu.py puts
// it after this header and compiles it with the system C++ compiler. A launch runs the blocks
// of its grid on several worker threads at once, one per core (COURSE_CUDA_THREADS, see cpu.py),
// as a GPU runs blocks on its multiprocessors; each worker runs the threads of its block one at
// a time:
//
//   * a kernel without __syncthreads() runs each thread as one call, in plain nested loops;
//   * a kernel with __syncthreads() or a warp-level call runs each thread of a block as a fiber
//     (a coroutine with its own small stack): a barrier switches to the next thread, so every
//     thread of the block reaches the barrier before any goes past it, as on a GPU; at a
//     warp-level call (__shfl_sync, __ballot_sync, a tile's sync, ...) the lanes of the mask
//     meet and exchange their values (__cc_resolve_warps).
//
// Workers take blocks in launch order (blockIdx.x fastest, then y, then z). Everything that
// belongs to one block lives per worker (struct __cc_worker, and thread_local variables:
// threadIdx, blockIdx, the static __shared__ arrays, the dynamic shared buffer), atomics are
// real atomics when more than one worker runs, printf output is kept per block and written in
// block order, and when blocks fault the first faulting block in launch order is reported
// (workers on later blocks are stopped; what such a block wrote before it stopped stays, as on
// a GPU), so messages do not depend on timing. The time limit and Ctrl-C stop every worker.
//
// Built with -D__CC_SANITIZE, every memory access source.py wrapped (__cc_r/__cc_w/__cc_rw)
// reports to __cc_note, the one instrumentation point: racecheck, initcheck, global write
// races and writes into read-only arrays are decided there, from per-byte shadow state. A
// sanitized (or traced) launch runs on one worker: which of two blocks that write the same
// element is reported depends on the order of their writes, and one worker keeps that order,
// and so the message, the same from run to run.
//
// Every fault (out-of-bounds access, a barrier not all threads reach, the time limit, a
// crash) stops the worker with siglongjmp and is described in a __cc_fault record that
// Python turns into a KernelError. The Python process survives.
//
// Names starting with __cc_ belong to the emulator; everything else is the CUDA API.

// Without C++17's special functions (std::cyl_bessel_j, std::riemann_zeta, ...), which device code
// has none of either (CUDA's own, cyl_bessel_i0f and the like, are below): libstdc++'s <cmath>
// defines them inline, and GCC instantiated their templates in every module, 0.02 s of each compile.
#if defined(__has_include)
#if __has_include(<bits/c++config.h>)
#include <bits/c++config.h>
#undef _GLIBCXX_USE_STD_SPEC_FUNCS
#endif
#endif
#include <fenv.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dlfcn.h>
#ifdef __linux__
#include <link.h>  // dl_iterate_phdr: where this module's code lies
#endif
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <time.h>
#include <ctime>  // (now: its #undef clock, in a kernel's own #include <ctime>, would undo CUDA's clock())
#include <unistd.h>

#include <float.h>
#include <limits.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <type_traits>
#include <utility>

// What NVRTC (and so CuPy) defines: kernels test these in #if. The CPU backend emulates an
// sm_80 GPU (Ampere: independent thread scheduling, __reduce_*_sync, bfloat16 arithmetic).
#define __CUDA_ARCH__ 800
#define __CUDACC__ 1
#define __CUDACC_RTC__ 1
#define __CUDACC_VER_MAJOR__ 12
#define __CUDACC_VER_MINOR__ 0
#define CUDART_VERSION 12000
#define CUDA_VERSION 12000

// math_constants.h
#define CUDART_INF_F __builtin_huge_valf()
#define CUDART_NAN_F __builtin_nanf("")
#define CUDART_MIN_DENORM_F 1.40129846e-45f
#define CUDART_MAX_NORMAL_F 3.40282347e+38f
#define CUDART_NEG_ZERO_F (-0.0f)
#define CUDART_ZERO_F 0.0f
#define CUDART_ONE_F 1.0f
#define CUDART_SQRT_HALF_F 0.707106781f
#define CUDART_SQRT_HALF_HI_F 0.707106781f
#define CUDART_SQRT_HALF_LO_F 1.210161749e-08f
#define CUDART_SQRT_TWO_F 1.414213562f
#define CUDART_THIRD_F 0.333333333f
#define CUDART_PIO4_F 0.785398163f
#define CUDART_PIO2_F 1.570796327f
#define CUDART_3PIO4_F 2.356194490f
#define CUDART_2_OVER_PI_F 0.636619772f
#define CUDART_SQRT_2_OVER_PI_F 0.797884561f
#define CUDART_PI_F 3.141592654f
#define CUDART_L2E_F 1.442695041f
#define CUDART_L2T_F 3.321928094f
#define CUDART_LG2_F 0.301029996f
#define CUDART_LGE_F 0.434294482f
#define CUDART_LN2_F 0.693147181f
#define CUDART_LNT_F 2.302585093f
#define CUDART_LNPI_F 1.144729886f
#define CUDART_TWO_TO_M126_F 1.175494351e-38f
#define CUDART_TWO_TO_126_F 8.507059173e37f
#define CUDART_NORM_HUGE_F 3.402823466e38f
#define CUDART_TWO_TO_23_F 8388608.0f
#define CUDART_TWO_TO_24_F 16777216.0f
#define CUDART_TWO_TO_31_F 2147483648.0f
#define CUDART_TWO_TO_32_F 4294967296.0f
#define CUDART_REMQUO_BITS_F 3
#define CUDART_TRIG_PLOSS_F 105615.0f
#define CUDART_INF __builtin_huge_val()
#define CUDART_NAN __builtin_nan("")
#define CUDART_NEG_ZERO (-0.0)
#define CUDART_MIN_DENORM 4.9406564584124654e-324
#define CUDART_ZERO 0.0
#define CUDART_ONE 1.0
#define CUDART_SQRT_TWO 1.4142135623730951e+0
#define CUDART_SQRT_HALF 7.0710678118654757e-1
#define CUDART_THIRD 3.3333333333333333e-1
#define CUDART_TWOTHIRD 6.6666666666666667e-1
#define CUDART_PIO4 7.8539816339744828e-1
#define CUDART_PIO2 1.5707963267948966e+0
#define CUDART_3PIO4 2.3561944901923448e+0
#define CUDART_2_OVER_PI 6.3661977236758138e-1
#define CUDART_PI 3.1415926535897931e+0
#define CUDART_2PI 6.2831853071795862e+0
#define CUDART_SQRT_PI 1.7724538509055159e+0
#define CUDART_SQRT_2_OVER_PI 7.9788456080286536e-1
#define CUDART_SQRT_2PI 2.5066282746310002e+0
#define CUDART_L2E 1.4426950408889634e+0
#define CUDART_L2T 3.3219280948873622e+0
#define CUDART_LG2 3.0102999566398120e-1
#define CUDART_LGE 4.3429448190325182e-1
#define CUDART_LN2 6.9314718055994529e-1
#define CUDART_LNT 2.3025850929940459e+0
#define CUDART_LNPI 1.1447298858494002e+0
#define CUDART_TWO_TO_23 8388608.0
#define CUDART_TWO_TO_52 4503599627370496.0
#define CUDART_TWO_TO_53 9007199254740992.0
#define CUDART_TWO_TO_54 18014398509481984.0
#define CUDART_NORM_HUGE 1.7976931348623157e+308

#if !defined(__x86_64__) && !defined(__aarch64__) && !defined(__CC_USE_UCONTEXT)
#define __CC_USE_UCONTEXT 1  // other CPUs: portable (slower) context switches
#endif
#ifdef __CC_USE_UCONTEXT
#include <ucontext.h>
#endif

// One runtime, compiled once. The code below is the same in every kernel module; compiling it for
// each kernel took most of a module's compile time (0.7 s of 0.8 s for a vector add). cpu.py
// compiles it once per build kind (plain, sanitized, traced) into an object file,
// -D__CC_RUNTIME_OBJECT, and links that into each module, compiled -D__CC_WITH_RUNTIME_OBJECT:
//   __CC_RT     a function of the runtime's: defined in the object (hidden: each module has its own
//               copy, as before); in a module only declared (gnu_inline: its body, never emitted
//               there, is kept only so that GCC may inline a small one). One that must never be
//               inlined (it names the access's line by its return address) is a plain declaration
//               there, under #ifdef __CC_WITH_RUNTIME_OBJECT;
//   __CC_STATE  the runtime's variables: C++17 inline variables, one copy per module shared by
//               its kernel code and the object's;
//   __CC_ONCE   a definition with C linkage (Python's entry points, printf): emitted by the object;
//   __CC_HOOK   what a module defines for the runtime (its __constant__ variables' places).
// Without either switch everything is one translation unit, as before (and as when the object
// does not build: cpu.py then compiles modules that way).
#if defined(__CC_RUNTIME_OBJECT)
#define __CC_RT
#define __CC_STATE inline
#define __CC_ONCE
#define __CC_HOOK
#elif defined(__CC_WITH_RUNTIME_OBJECT)
#define __CC_RT inline __attribute__((gnu_inline))
#define __CC_STATE inline
#define __CC_ONCE inline __attribute__((gnu_inline))
#define __CC_HOOK
#else
#define __CC_RT static
#define __CC_STATE static
#define __CC_ONCE
#define __CC_HOOK static
#endif
#define __CC_EXPORT extern "C" __attribute__((visibility("default")))

// ---------------------------------------------------------------------------------------
// CUDA's built-in types and variables
// ---------------------------------------------------------------------------------------

// Vector types (float4, uchar4, uint3, ...) with CUDA's sizes and alignments, and make_float4(...).
// __cc_lane_of<float4>::type is float (void for other types).
template <class U> struct __cc_lane_of { typedef void type; };
#define __CC_VEC2(T, N, A) \
    struct __attribute__((aligned(A))) N##2 { T x, y; }; \
    template <> struct __cc_lane_of<N##2> { typedef T type; }; \
    static inline N##2 make_##N##2(T x, T y) { return {x, y}; }
#define __CC_VEC3(T, N) \
    struct N##3 { T x, y, z; }; \
    template <> struct __cc_lane_of<N##3> { typedef T type; }; \
    static inline N##3 make_##N##3(T x, T y, T z) { return {x, y, z}; }
#define __CC_VEC4(T, N, A) \
    struct __attribute__((aligned(A))) N##4 { T x, y, z, w; }; \
    template <> struct __cc_lane_of<N##4> { typedef T type; }; \
    static inline N##4 make_##N##4(T x, T y, T z, T w) { return {x, y, z, w}; }
#define __CC_VEC1(T, N) \
    struct N##1 { T x; }; \
    template <> struct __cc_lane_of<N##1> { typedef T type; }; \
    static inline N##1 make_##N##1(T x) { return {x}; }
#define __CC_VECS(T, N, A2, A4) __CC_VEC1(T, N) __CC_VEC2(T, N, A2) __CC_VEC3(T, N) __CC_VEC4(T, N, A4)
__CC_VECS(float, float, 8, 16)
__CC_VECS(double, double, 16, 16)
__CC_VECS(int, int, 8, 16)
__CC_VECS(unsigned int, uint, 8, 16)
__CC_VECS(short, short, 4, 8)
__CC_VECS(unsigned short, ushort, 4, 8)
__CC_VECS(signed char, char, 2, 4)
__CC_VECS(unsigned char, uchar, 2, 4)
__CC_VECS(long long, longlong, 16, 16)
__CC_VECS(unsigned long long, ulonglong, 16, 16)
__CC_VECS(long, long, 2 * sizeof(long), 16)
__CC_VECS(unsigned long, ulong, 2 * sizeof(long), 16)

struct dim3 {
    unsigned int x, y, z;
    dim3(unsigned int x_ = 1, unsigned int y_ = 1, unsigned int z_ = 1) : x(x_), y(y_), z(z_) {}
    dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
    operator uint3() const { return {x, y, z}; }
};

// blockIdx and threadIdx belong to each worker thread (each runs one thread at a time, and the
// block loop or the fiber scheduler sets them before each thread runs); the launch's sizes are
// the same for all. A thread_local variable's address costs a call in a shared library, which
// the compiler would repeat after every call and in every loop iteration; these functions tell
// it that the address never changes on a thread (fibers never move to another thread), so it
// asks once per kernel body. __CC_THREAD_LOCAL(T, NAME) declares NAME, found that way.
// A sanitized (or traced) build runs every launch on one worker (see the top of this file):
// there they are plain variables, as fast as before there were workers.
#ifdef __CC_SANITIZE
#define __CC_SERIAL_BUILD 1
#define __CC_THREAD_LOCAL(T, NAME) \
    __CC_STATE T __cc_tls_##NAME; \
    static inline T* __cc_address_of_##NAME() { return &__cc_tls_##NAME; }
#define __CC_SHARED_STORAGE static
#else
// noipa: GCC would otherwise see that the function's only call, the TLS descriptor's, keeps every
// other register, and keep a caller's values in SSE registers across it. glibc before 2.40 does
// not keep them when that call allocates the module's variables for a thread (its first use
// there): a value kept so came back changed (glibc bug 31372; worker threads are new at every
// launch, and __cc_work's `__cc_me = w` read back a null worker).
#if defined(__GNUC__) && !defined(__clang__)
#define __CC_TLS_ADDRESS_ATTRIBUTES const, noinline, noipa
#else
#define __CC_TLS_ADDRESS_ATTRIBUTES const, noinline
#endif
#define __CC_THREAD_LOCAL(T, NAME) \
    __CC_STATE thread_local T __cc_tls_##NAME; \
    __attribute__((__CC_TLS_ADDRESS_ATTRIBUTES)) static T* __cc_address_of_##NAME() { return &__cc_tls_##NAME; }
#define __CC_SHARED_STORAGE static thread_local
#endif
// What each worker thread has of its own, in one object: a kernel body (a fiber's, once per
// block) finds it all with one call.
struct __cc_worker;
struct __cc_thread_state {
    uint3 thread, block;  // the running thread's threadIdx and blockIdx
    __cc_worker* me;      // the worker (__cc_me)
    char* dyn_shared;     // extern __shared__ memory of the running block (__cc_dyn_shared)
};
__CC_THREAD_LOCAL(__cc_thread_state, state)
#define threadIdx (__cc_address_of_state()->thread)
#define blockIdx (__cc_address_of_state()->block)
__CC_STATE dim3 blockDim, gridDim;
static const int warpSize = 32;

// ---------------------------------------------------------------------------------------
// Launch state and the fault record Python reads (its twin is _Fault in cpu.py)
// ---------------------------------------------------------------------------------------

enum __cc_fault_kind {
    __CC_OK = 0,
    __CC_OUT_OF_BOUNDS = 1,          // an argument array indexed outside its elements
    __CC_SHARED_OUT_OF_BOUNDS = 2,   // extern __shared__ memory indexed past shared_mem bytes
    __CC_BARRIER_EXITED = 3,         // some threads returned, others wait at __syncthreads()
    __CC_BARRIER_MISMATCH = 4,       // threads wait at different __syncthreads() calls
    __CC_TIMEOUT = 5,                // the launch ran past its time limit
    __CC_INTERRUPTED = 6,            // Ctrl-C / Jupyter's interrupt button
    __CC_SIGNAL = 7,                 // a crash: invalid address, division by zero, ...
    __CC_STACK_OVERFLOW = 8,         // a thread used more than its stack
    __CC_ASSERT = 9,                 // assert(...) failed in the kernel
    __CC_TRAP = 10,                  // __trap()
    __CC_NO_MEMORY = 11,             // the emulator could not allocate stacks or shared memory
    __CC_NO_BARRIERS = 12,           // __syncthreads() in a kernel launched without fibers
    __CC_BAD_ARGUMENT = 13,          // an argument's bytes do not fit its parameter's C++ type
    __CC_UNSUPPORTED = 14,           // a construct the CPU cannot run was reached
    __CC_WARP_EXITED = 15,           // a lane named in a warp-level call's mask has exited
    __CC_WARP_MISMATCH = 16,         // lanes of a mask wait at different warp-level calls / barriers
    __CC_WARP_BAD_MASK = 17,         // a lane calls with a mask that does not name itself, or
                                     // stores what a shuffle read outside its mask
    __CC_READ_ONLY = 18,             // a write into a read-only (const) array
    __CC_ARRAY_OUT_OF_BOUNDS = 19,   // a __shared__ or local array indexed outside a dimension
    __CC_RACE = 20,                  // two threads access one address, unordered, one writes
    __CC_UNINITIALIZED = 21,         // a read of shared memory no thread of the block wrote
    __CC_GLOBAL_RACE = 22,           // two threads write one element of a global array
    __CC_MISALIGNED = 23,            // an access through a pointer cast to a type it does not align to
    __CC_SHARED_TOO_BIG = 24,        // a block's static + dynamic shared memory exceeds 48 KiB
    __CC_BAD_WIDTH = 25,             // a shuffle's width is not a power of two from 1 to 32
    __CC_LOCAL_TOO_BIG = 26,         // a local array larger than a GPU thread's 512 KiB of local memory
    __CC_BAD_FREE = 27,              // free/delete of a pointer no malloc/new returned, or of a freed block
    __CC_USE_AFTER_FREE = 28,        // an access to a block after free/delete (sanitizer)
    __CC_UNINITIALIZED_LOCAL = 29,   // a read of a local array's element the thread never wrote (sanitizer)
    __CC_RNG_NOT_SET_UP = 30,        // a cuRAND state drawn from before curand_init set it up (all zero)
    __CC_BAD_SHIFT = 31,             // a shift by a negative count or by the type's width or more
    __CC_BAD_CONVERSION = 32,        // a floating-point value outside the integer type it is converted to
    __CC_BAD_PRINTF = 33,            // printf's format asks for another kind of value, or for more values
    __CC_BARRIER_DIVERGENT = 34,     // threads meet at a __syncthreads() inside an if they took differently
    __CC_OTHER_LOCAL = 35,           // a thread reaches another thread's local memory through a pointer
    __CC_LDG_WRITTEN = 36,           // __ldg of an element written in this launch (the read-only cache is not coherent)
    __CC_STORED_FILL = 37,           // a float stored that is the fill of a local variable read before it had a value
    __CC_LOCAL_ATOMIC = 38,          // an atomic function on a thread's own local variable (sanitizer)
    __CC_READ_FILL = 39,             // a read of global memory nothing wrote: xp.empty's or malloc's 0xFE bytes (sanitizer)
    __CC_UNREACHABLE = 40,           // __builtin_unreachable() reached
    __CC_MISSING_RETURN = 41,        // the end of a function that returns a value, with no return statement
};

struct __cc_fault {
    int32_t kind;           // a __cc_fault_kind
    int32_t line;           // line in the learner's source, 0 when unknown
    int32_t other_line;     // the second barrier of a mismatch
    int32_t signal;         // signal number for __CC_SIGNAL
    uint32_t block[3];      // blockIdx of the faulting thread
    uint32_t thread[3];     // threadIdx of the faulting thread
    uint32_t other_thread[3];  // a thread that disagrees (barrier faults)
    int32_t count;          // threads involved (barrier faults)
    int64_t index;          // element index of a bad access, relative to the array start
    int64_t length;         // number of elements in that array
    uint64_t base;          // address of that array's first element (identifies the argument)
    uint64_t address;       // faulting address of a crash
    uint64_t code_offset;   // where in this module it happened (for addr2line), 0 if unknown
    int64_t element_bytes;  // size of the elements the bad access used (a cast may change it)
    uint32_t other_block[3];  // the block of the other thread (races between blocks)
    uint32_t mask;          // the lane mask of a warp-level call
    int32_t op;             // which warp-level call, or which access (races)
    int32_t other_op;
    char text[200];         // the failed assert's expression, or the construct's name
    int32_t exited_count;   // threads of the faulting block that returned before a __syncthreads()
    int32_t exited_line;    // where the first of them returned
    int32_t exited_barrier; // the barrier the others then waited at
    uint32_t exited_thread[3];
    uint64_t callers[6];    // code offsets of the calls that led there, innermost first (sanitized builds)
};

// One argument as Python packs it: an array (data + element count) or a scalar's bytes.
struct __cc_arg {
    void* data;
    int64_t count;
    uint64_t bits;
};

// ---------------------------------------------------------------------------------------
// Workers: the threads that run a launch's blocks. Worker 0 is the thread that called the
// launcher (Python's); the others are pool threads that wait between launches (__cc_call_pool). Each has
// its own fault record, its own place to jump back to, its fibers, its dynamic shared memory
// and its printf buffer; __cc_me is the running thread's worker.
// ---------------------------------------------------------------------------------------

struct __cc_fiber;
// Where a switched-out fiber (or the scheduler) resumes: on x86-64 its callee-saved registers,
// stack pointer and resume address, kept beside the fiber's state (see __cc_switch); on arm64
// its stack pointer, the registers being saved on its stack.
#if defined(__x86_64__)
struct __cc_context { void *rbx, *rbp, *r12, *r13, *r14, *r15, *sp, *pc; };
#else
struct __cc_context { void* sp; };
#endif
#define __CC_MAX_SHARED_ARRAYS 256  // distinct __shared__ arrays (and scalars) of a module that are tracked
struct __cc_poisoned { void* base; uint32_t block_epoch; size_t bytes; const char* name; uint32_t launch; };  // see __cc_poison_once
struct __cc_out_segment { long long block; size_t start, length; };  // one block's printf text

// A local array declared without an initializer (sanitizer): which of its elements the thread
// has written. Its bytes start as __cc_local_pattern (a NaN float, an unlikely int).
struct __cc_local_region {
    char* base;
    size_t bytes, item;
    const char* name;
    uint32_t block_epoch;       // the block that ran then (the thread is the slot's, see __cc_worker)
    uint8_t* written;           // one flag per element
};
enum { __CC_LOCAL_REGIONS = 8 };  // per thread, newest first (an older one is forgotten: no report)
static inline uint8_t __cc_local_pattern(size_t offset) { return offset % 4 == 3 ? 0x7f : 0xa5; }

struct alignas(64) __cc_worker {  // (a cache line of its own: workers write theirs at every block)
    pthread_t thread;
    size_t heap_freed;                // bytes its block freed: back in the heap when the block ends (a GPU
                                      // runs a block's threads at once: they all hold their blocks then)
    volatile sig_atomic_t alive;      // taking part in this launch until it ends (signals may go to it)
    volatile sig_atomic_t active;     // running blocks: a stop or a crash may jump out of the kernel
    volatile sig_atomic_t unsafe;     // > 0 while in the C library (printf, malloc): jumping out
                                      // there could leave a lock held
    long long block;                  // linear index of the block it runs (launch order), -1 before
    long long chunk_next, chunk_end;  // the blocks it has taken and not yet run
    long long fault_block;            // the block its fault happened in
    sigjmp_buf env;                   // where a fault jumps back to
    __cc_fault fault;                 // its fault, if any (kind 0: none)
    __cc_fiber* fibers;               // one per thread of a block, reused by every block
    int fiber_count;
    int polling;                      // in a waiting loop's condition (__cc_spin_point to __cc_polled)
    int spinning;                     // fibers that gave their turn up in such a loop (__CC_SPINNING)
    struct {                          // the first shuffle of this launch that read a lane outside its mask
        int set, line, op, source, returned_line;
        unsigned mask;
        uint3 reader, source_tid, block;
    } undefined;
    __cc_fault partial;               // (sanitizer) the first whole struct or vector element of shared memory read
                                      // with bytes no thread wrote: its description (length 6, cpu.py), or length 0
    int spin_line;                    // the waiting loop a thread is in (a timeout's line in a plain build)
    int call_line;                    // the kernel's line of the printf, malloc or new being run (a stop's line there)
    const char* new_block;            // the block this worker's last `new` made, and its bytes: the new-expression's
    size_t new_block_bytes;           //   pointer comes raw, and __cc_ptr::adopt gives it these bounds
    char* stack_pool;                 // their stacks, each above a guard page
    size_t stack_pool_bytes;
    __cc_fiber* current;              // the fiber running now (nullptr: loop mode)
    __cc_context scheduler;           // where the scheduler resumes
#ifdef __CC_USE_UCONTEXT
    ucontext_t scheduler_context;
#endif
    int barrier_count;                // what __syncthreads_count returns after a barrier
    int barrier_waiting;              // the threads that met there (those that returned are not counted)
    int warp_waiting;                 // fibers waiting at a warp-level call
    int round_threads;                // threads of the block it runs
    int last_barrier_line;            // where fibers last met: a place to name on a timeout
    int warp_line;                    // the last warp-level call (a timeout's line if no access came after it)
    int exited_count, exited_line, exited_barrier;  // this block's threads that returned before a barrier
    uint3 exited_thread;              // (the first time; see __cc_run_block_as_fibers)
    void (*body)(void*);              // the kernel call each fiber makes
    void* body_context;
    char* dyn_shared;                 // its extern __shared__ memory
    size_t dyn_capacity;
    char* out;                        // its printf text, block by block
    size_t out_len, out_cap;
    uint64_t unsafe_site;             // where the kernel called printf or malloc (a stop there names that line)
    __cc_out_segment* segments;
    size_t segment_count, segment_cap;
    char* signal_stack;               // a crash (a stack overflow, say) is handled on this stack
    uint32_t epoch, block_epoch;      // the sanitizer's clock, see __cc_new_block
    uint32_t warp_epoch[32];
    bool exchange_store;              // the next atomicExch is a statement: its old value unused (see __cc_exchange_next)
    bool block_scope_next;            // the next atomic is an atomicAdd_block (...): atomic among the block's threads only
    uint32_t warp_full[32];           // warp_epoch after the last warp-level call of all the warp's lanes
    uint32_t (*warp_pairs)[32][32];   // [warp][a][b]: after the last call of a sub-mask with lanes a and b
    uint32_t block_linear;
    __cc_poisoned poisoned[__CC_MAX_SHARED_ARRAYS];  // its static __shared__ arrays, filled with 0xFF once per block
    size_t static_shared;             // bytes of them declared in launch static_shared_launch
    uint32_t static_shared_launch;
    int poisoned_count;
    __cc_local_region* locals;        // sanitizer: its threads' uninitialised local arrays,
    uint8_t* locals_next;             // __CC_LOCAL_REGIONS per thread of the block (a ring each)
    int locals_threads;
    uint64_t float_bits;              // sanitizer: the last __float_as_int, __float_as_uint or __double_as_longlong
    int float_bits_size;              //   result and its bytes (0: none since the last atomicMin/atomicMax)
    // blocks it ran on fast.py's path (proved in bounds), in all launches (a cache line of its own: the next worker's
    // first fields, `block` among them, change at every block of theirs)
    alignas(64) long long fast_blocks;
};
enum { __CC_MAX_WORKERS = 256 };
__CC_STATE __cc_worker __cc_workers[__CC_MAX_WORKERS];
__CC_STATE int __cc_worker_count = 1;     // workers of the current launch
__CC_STATE bool __cc_parallel;            // more than one: atomics must be real atomics
#define __cc_me (__cc_address_of_state()->me)  // the running thread's worker
__CC_STATE long long __cc_fault_min;      // the earliest block (launch order) that faulted so far
#define __cc_fault_out (&__cc_me->fault)

__CC_STATE uintptr_t __cc_module_base;      // load address of this module, for code offsets
#define __cc_dyn_shared (__cc_address_of_state()->dyn_shared)  // extern __shared__ memory of the running block
__CC_STATE size_t __cc_dyn_shared_bytes;
__CC_STATE const char* __cc_dyn_shared_name = "extern __shared__ memory";  // its array's name(s)

static inline uint64_t __cc_code_offset(const void* pc) {
    uintptr_t p = (uintptr_t)pc;
    return p > __cc_module_base ? p - __cc_module_base : 0;
}

// Record who faulted and jump back to the worker's start. Never returns.
__CC_STATE bool __cc_pending_set;  // a read of unwritten shared memory, not reported yet (see __cc_report_pending)
// cg::memcpy_async's copies in the running block that no cg::wait (or wait_prior) has waited for yet, in a
// sanitized launch (one worker): on a GPU (sm_80's cp.async) they land in the background, and a barrier does
// not wait for them. Oldest first; `site`: the copy's write, `tid`: the thread that made it here.
struct __cc_async_copy { const char* lo; const char* hi; uint32_t site; unsigned tid; };
__CC_STATE __cc_async_copy __cc_async[16];
__CC_STATE int __cc_async_count;
// A value that did not fit (a conversion, a shift's count) was let go while a read was pending
// (__cc_ubsan_recover): its garbage may keep the thread looping, so the time limit reports the read.
__CC_STATE bool __cc_garbage_used;
__CC_STATE bool __cc_copy_set;     // a copy's read of unwritten shared memory, for the store that follows (__cc_copy)
__CC_STATE bool __cc_fill_set;     // the store that follows puts an unset local's fill into shared memory (__cc_note_store)
__CC_RT void __cc_report_pending();
static inline bool __cc_pending_first(int kind);

// The calls that led to a fault, from a frame of this module (sanitized builds keep frame pointers,
// -fno-omit-frame-pointer: a frame holds its caller's frame and the return address). Only frames
// whose return address lies in this module are followed, so the walk never reads a frame of code
// built without frame pointers (Python's, libc's); a fiber's first frame has a null frame pointer.
__CC_STATE uintptr_t __cc_code_low, __cc_code_high;  // this module's executable segment (Linux)
#if defined(__CC_FRAME_POINTERS) && defined(__linux__)
__CC_RT int __cc_find_code(struct dl_phdr_info* info, size_t, void*) {
    if (info->dlpi_addr != __cc_module_base) return 0;
    for (int k = 0; k < info->dlpi_phnum; k++) {
        const auto& h = info->dlpi_phdr[k];
        if (h.p_type == PT_LOAD && (h.p_flags & PF_X)) {
            __cc_code_low = info->dlpi_addr + h.p_vaddr;
            __cc_code_high = __cc_code_low + h.p_memsz;
        }
    }
    return 1;
}
#endif
__CC_RT void __cc_note_callers(__cc_fault* f, void* const* frame) {  // (async-signal-safe)
#if defined(__CC_FRAME_POINTERS) && defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__))
    if (f->callers[0]) return;  // (the crash handler walked from the crash)
    int n = 0;
    for (int depth = 0; frame && depth < 64 && n < (int)(sizeof f->callers / sizeof f->callers[0]); depth++) {
        uintptr_t back = (uintptr_t)frame[1];
        if (back < __cc_code_low || back >= __cc_code_high) break;
        f->callers[n++] = __cc_code_offset((void*)back);
        void* const* next = (void* const*)frame[0];
        if (next <= frame || (uintptr_t)next - (uintptr_t)frame > (1u << 20) || ((uintptr_t)next & 7)) break;
        frame = next;
    }
#else
    (void)f, (void)frame;
#endif
}

#ifdef __CC_WITH_RUNTIME_OBJECT  // (never inlined: the object's)
__attribute__((noreturn, noinline, cold)) void __cc_fail(int kind, int line);
#else
__attribute__((noreturn, noinline, cold)) __CC_RT void __cc_fail(int kind, int line) {
    if (__cc_pending_set && __cc_pending_first(kind)) __cc_report_pending();  // the earlier bug, and maybe the cause
    __cc_worker* w = __cc_me;
    __cc_fault* f = &w->fault;
    __cc_note_callers(f, (void* const*)__builtin_frame_address(0));
    f->kind = kind;
    f->line = line;
    f->block[0] = blockIdx.x, f->block[1] = blockIdx.y, f->block[2] = blockIdx.z;
    f->thread[0] = threadIdx.x, f->thread[1] = threadIdx.y, f->thread[2] = threadIdx.z;
    if (w->exited_count) {  // a likely cause of a missing value: threads that returned before a barrier
        f->exited_count = w->exited_count, f->exited_line = w->exited_line, f->exited_barrier = w->exited_barrier;
        f->exited_thread[0] = w->exited_thread.x, f->exited_thread[1] = w->exited_thread.y;
        f->exited_thread[2] = w->exited_thread.z;
    }
    siglongjmp(w->env, 1);
}
#endif

// A later block than one that already faulted: stop without a report (the earlier one is it).
#ifdef __CC_WITH_RUNTIME_OBJECT  // (never inlined: the object's)
__attribute__((noreturn, noinline, cold)) void __cc_cancel(__cc_worker* w);
#else
__attribute__((noreturn, noinline, cold)) __CC_RT void __cc_cancel(__cc_worker* w) { siglongjmp(w->env, 2); }
#endif

// ---------------------------------------------------------------------------------------
// Checked pointers: what a kernel's pointer parameters become
// ---------------------------------------------------------------------------------------

// The static __shared__ array (of the worker running this block) that holds raw, or nullptr:
// a pointer made with `&tile[0][0]` stays checked against the whole tile.
static inline const __cc_poisoned* __cc_find_shared_array(const volatile void* raw) {
    __cc_worker* w = __cc_me;
    const char* p = (const char*)raw;
    if (w)
        for (int i = 0; i < w->poisoned_count; i++) {
            const char* b = (const char*)w->poisoned[i].base;
            if (p >= b && p < b + w->poisoned[i].bytes) return &w->poisoned[i];
        }
    return nullptr;
}

// The bytes of the argument array or __shared__ array (dynamic shared memory included) that starts at
// `base`; `otherwise` for any other (a local array, a device-heap block).
static inline size_t __cc_region_bytes(const void* base, size_t otherwise);

// A checked pointer made by a cast to a type whose alignment its address does not have
// (`(float4*)(a + 1)`): on a GPU every access through it stops the kernel with "misaligned
// address". Its index is __CC_MISALIGNED_INDEX, so that the one bounds comparison fails on
// every access, and the cold path tells the two faults apart.
static const size_t __CC_MISALIGNED_INDEX = (size_t)3 << 61;

// ---------------------------------------------------------------------------------------
// The device heap: malloc/free and new/delete in kernel code. A block lives until it is freed,
// across launches, as on a GPU. Every block is in a table, so that
// - free or delete of a pointer that no malloc/new returned, or of a block freed already, stops
//   the kernel with its line (libc would abort the whole Python process);
// - a freed block is filled with 0xFF bytes (NaN floats, -1 ints) and kept out of use while it is
//   among the newest __CC_QUARANTINE freed blocks: a use after free reads visibly wrong values
//   instead of the old ones, and the sanitizer names it (__cc_heap_check_freed).
// ---------------------------------------------------------------------------------------

__attribute__((always_inline)) static inline void __cc_enter_unsafe();
static inline void __cc_leave_unsafe();
__CC_STATE uint32_t __cc_current_launch;  // grows at every launch

enum { __CC_HEAP_EMPTY = 0, __CC_HEAP_LIVE = 1, __CC_HEAP_FREED = 2, __CC_HEAP_GONE = 3 };
struct __cc_heap_entry {
    char* base;
    size_t bytes;
    uint64_t free_site;  // code offset of the free (or delete) that freed it
    int state;
    int how;             // what made it: 0 malloc, 1 new, 2 new[] (free, delete and delete[] must match)
    int line;            // the line of the malloc or new that made it
    uint32_t launch;     // the launch that made it (__cc_current_launch): the leak check's
};
struct __cc_freed_block { char* base; size_t bytes; uint64_t free_site; };
static const int __CC_QUARANTINE = 256;
// ... and at most this many of their bytes: a kernel that frees gigabytes must not keep them resident (the
// oldest go back to libc first; a block larger than this is not kept). The 0xFF fill of a freed block
// stops after its first __CC_FILL_BYTES (the time limit cannot stop a free, which holds the heap's lock).
static const size_t __CC_QUARANTINE_BYTES = (size_t)256 << 20, __CC_FILL_BYTES = (size_t)16 << 20;
__CC_STATE size_t __cc_quarantine_bytes;
__CC_STATE pthread_mutex_t __cc_heap_lock = PTHREAD_MUTEX_INITIALIZER;
__CC_STATE __cc_heap_entry* __cc_heap_table;  // open addressing by base address
__CC_STATE size_t __cc_heap_capacity, __cc_heap_used;  // slots, and slots not empty (tombstones count)
__CC_STATE __cc_freed_block __cc_quarantine[__CC_QUARANTINE];
__CC_STATE int __cc_quarantine_next;
__CC_STATE volatile int __cc_quarantined;  // how many of __cc_quarantine hold a block

static inline size_t __cc_heap_slot(const void* base, size_t capacity) {
    uint64_t h = (uint64_t)(uintptr_t)base * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 20) & (capacity - 1);
}
// The entry of the block at `base` (LIVE, FREED or GONE), or nullptr. Called with the lock held.
__CC_RT __cc_heap_entry* __cc_heap_find(const void* base) {
    if (!__cc_heap_capacity) return nullptr;
    for (size_t i = __cc_heap_slot(base, __cc_heap_capacity);; i = (i + 1) & (__cc_heap_capacity - 1)) {
        __cc_heap_entry& e = __cc_heap_table[i];
        if (e.state == __CC_HEAP_EMPTY) return nullptr;
        if (e.base == (const char*)base) return &e;
    }
}
// A slot for a new block at `base` (its old entry if libc gave the address again). Lock held.
__CC_RT __cc_heap_entry* __cc_heap_insert(char* base) {
    if (__cc_heap_entry* e = __cc_heap_find(base)) return e;
    if (2 * (__cc_heap_used + 1) > __cc_heap_capacity) {  // grow, and drop GONE entries
        size_t live = 0;
        for (size_t i = 0; i < __cc_heap_capacity; i++) live += __cc_heap_table[i].state == __CC_HEAP_LIVE ||
                                                               __cc_heap_table[i].state == __CC_HEAP_FREED;
        size_t capacity = 64;
        while (capacity < 4 * (live + 1)) capacity *= 2;
        __cc_heap_entry* table = (__cc_heap_entry*)calloc(capacity, sizeof(__cc_heap_entry));
        if (!table) return nullptr;
        for (size_t i = 0; i < __cc_heap_capacity; i++) {
            __cc_heap_entry& e = __cc_heap_table[i];
            if (e.state != __CC_HEAP_LIVE && e.state != __CC_HEAP_FREED) continue;
            size_t j = __cc_heap_slot(e.base, capacity);
            while (table[j].state != __CC_HEAP_EMPTY) j = (j + 1) & (capacity - 1);
            table[j] = e;
        }
        free(__cc_heap_table);
        __cc_heap_table = table, __cc_heap_capacity = capacity, __cc_heap_used = live;
    }
    size_t i = __cc_heap_slot(base, __cc_heap_capacity);
    while (__cc_heap_table[i].state != __CC_HEAP_EMPTY) i = (i + 1) & (__cc_heap_capacity - 1);
    __cc_heap_used++;
    __cc_heap_table[i].base = base;
    return &__cc_heap_table[i];
}

// Take a block out of quarantine: its entry is GONE, its slot empty. Lock held; the caller gives
// the returned memory back to libc (after unlocking, if it likes).
__CC_RT char* __cc_heap_release(__cc_freed_block& q) {
    char* base = q.base;
    if (__cc_heap_entry* e = base ? __cc_heap_find(base) : nullptr) e->state = __CC_HEAP_GONE;
    q = {nullptr, 0, 0};
    return base;
}

// The heap's size, as a GPU's cudaLimitMallocHeapSize (8 MiB unless the host raises it: Python's
// set_heap_size): malloc and new return NULL once the live blocks would hold more. The bytes of the
// first request refused in a launch are kept for the message of the null pointer that follows.
__CC_STATE long long __cc_heap_limit = 8ll << 20;
__CC_STATE size_t __cc_heap_live_bytes;
__CC_STATE long long __cc_heap_refused;  // (reset by each launch)
__CC_STATE int __cc_race_rerun;  // the sanitizer's reruns (see __cc_reversed below)
__CC_STATE bool __cc_same_values_go;  // a first run that lets a read beside a same-value store go (cpu.py)
// A rerun with other undefined bits (cpu.py _depends_on_undefined): a shuffle's undefined result, and
// the fill of shared memory, that a whole struct or vector element read with bytes no thread wrote brings.
__CC_STATE int __cc_undefined_variant;
static inline int __cc_shared_fill() { return __cc_undefined_variant ? 0x4B : 0xff; }
__CC_EXPORT __CC_ONCE void __cc_set_heap_limit(long long bytes) { __cc_heap_limit = bytes; }
__CC_EXPORT __CC_ONCE long long __cc_heap_refused_bytes() { return __cc_heap_refused; }
// The blocks that ran on fast.py's path so far (tests: the path is taken where it should be).
__CC_EXPORT __CC_ONCE long long __cc_fast_block_count() {
    long long total = 0;
    for (int k = 0; k < __CC_MAX_WORKERS; k++) total += __atomic_load_n(&__cc_workers[k].fast_blocks, __ATOMIC_RELAXED);
    return total;
}

// A launch stopped by the time limit or Ctrl-C: the blocks it allocated and did not free go back to the heap (on
// a GPU a kernel stopped so ends its context, and the heap with it). Without this, each stopped launch of a
// kernel that mallocs kept its blocks for good, and after a few every malloc returned NULL. Blocks of earlier
// launches (kept in __device__ pointers, say) stay. Returns the bytes given back.
__CC_EXPORT __CC_ONCE long long __cc_heap_drop_stopped_launch() {
    long long dropped = 0;
    pthread_mutex_lock(&__cc_heap_lock);
    for (size_t i = 0; i < __cc_heap_capacity; i++) {
        __cc_heap_entry& e = __cc_heap_table[i];
        if (e.state != __CC_HEAP_LIVE || e.launch != __cc_current_launch) continue;
        free(e.base);
        e.state = __CC_HEAP_GONE;
        __cc_heap_live_bytes -= e.bytes;
        dropped += (long long)e.bytes;
    }
    pthread_mutex_unlock(&__cc_heap_lock);
    return dropped;
}

// A worker's block ended (or a launch starts): what its threads freed is back in the heap.
__CC_RT void __cc_heap_block_done(__cc_worker* w) {
    if (!w->heap_freed) return;
    pthread_mutex_lock(&__cc_heap_lock);
    __cc_heap_live_bytes -= w->heap_freed;
    w->heap_freed = 0;
    pthread_mutex_unlock(&__cc_heap_lock);
}

// malloc for kernel code: nullptr when the heap is full, or libc has no memory.
__CC_RT void* __cc_heap_alloc(size_t bytes, int how = 0, int line = 0) {
    __cc_enter_unsafe();  // the time limit must not stop a thread inside malloc or the heap's lock
    pthread_mutex_lock(&__cc_heap_lock);
    // (a rerun of the launch, which the sanitizer makes from the memory it started with, finds the
    // blocks the first run left: it is not held to the limit)
    bool full = (__cc_race_rerun < 1 || __cc_race_rerun == 4) &&
                (long long)(__cc_heap_live_bytes + bytes) > __cc_heap_limit;
    if (full && !__cc_heap_refused) __cc_heap_refused = (long long)(bytes ? bytes : 1);
    if (!full) __cc_heap_live_bytes += bytes;
    pthread_mutex_unlock(&__cc_heap_lock);
    char* p = full ? nullptr : (char*)malloc(bytes ? bytes : 1);
    if (p) {
        pthread_mutex_lock(&__cc_heap_lock);
        __cc_heap_entry* e = __cc_heap_insert(p);
        if (e) *e = {p, bytes, 0, __CC_HEAP_LIVE, how, line, __cc_current_launch};
        pthread_mutex_unlock(&__cc_heap_lock);
        if (!e) free(p), p = nullptr;
#ifdef __CC_SANITIZE
        // A sanitized launch fills a new block as it fills a local variable without a value (0xFE bytes):
        // a read of what no thread stored there gives -1.6947e38 (whose store __cc_note_store reports), not
        // libc's zeros or the last launch's values.
        if (p) memset(p, 0xfe, bytes < __CC_FILL_BYTES ? bytes : __CC_FILL_BYTES);
#endif
    }
    if (!p && !full) {
        pthread_mutex_lock(&__cc_heap_lock);
        __cc_heap_live_bytes -= bytes;
        pthread_mutex_unlock(&__cc_heap_lock);
    }
    __cc_leave_unsafe();
    return p;
}

// free for kernel code; `site`: where the kernel called it. A fault for a pointer that is not a
// live block's start (op 0), or a block freed already (op 1; `address` is where).
// `how`: free (0), delete (1) or delete[] (2), which must match what made the block (op 2: they do not).
__CC_RT void __cc_heap_free(void* raw, uint64_t site, int how = 0) {
    if (!raw) return;  // free(NULL) does nothing, in CUDA as in C
    __cc_enter_unsafe();
    if (__cc_me->unsafe == 1 && site) __cc_me->unsafe_site = site;  // (free's call in the kernel)
    pthread_mutex_lock(&__cc_heap_lock);
    __cc_heap_entry* e = __cc_heap_find(raw);
    int state = e ? e->state : __CC_HEAP_EMPTY, made = e ? e->how : 0;
    uint64_t first = e ? e->free_site : 0;
    char* evicted[__CC_QUARANTINE + 1];
    int evictions = 0;
    if (state == __CC_HEAP_LIVE && made != how) state = -1;  // (left as it is: the fault below)
    if (state == __CC_HEAP_LIVE) {
        e->state = __CC_HEAP_FREED, e->free_site = site;
        if (__cc_me) __cc_me->heap_freed += e->bytes;  // (the threads of the block ran one by one here)
        else __cc_heap_live_bytes -= e->bytes;
        memset(e->base, 0xff, e->bytes < __CC_FILL_BYTES ? e->bytes : __CC_FILL_BYTES);
        if (e->bytes > __CC_QUARANTINE_BYTES) {
            e->state = __CC_HEAP_GONE;  // too large to keep: back to libc now
            evicted[evictions++] = e->base;
        } else {
            // the oldest freed blocks go back to libc: the one in the next slot, and more while the
            // quarantine would hold too many bytes (slots fill in turn: from the next one on, oldest first)
            for (int k = 0; k < __CC_QUARANTINE; k++) {
                __cc_freed_block& old = __cc_quarantine[(__cc_quarantine_next + k) % __CC_QUARANTINE];
                if (k && __cc_quarantine_bytes + e->bytes <= __CC_QUARANTINE_BYTES) break;
                if (!old.base) continue;
                __cc_quarantine_bytes -= old.bytes;
                evicted[evictions++] = __cc_heap_release(old);
            }
            __cc_quarantine[__cc_quarantine_next] = {e->base, e->bytes, site};
            __cc_quarantine_bytes += e->bytes;
            __cc_quarantine_next = (__cc_quarantine_next + 1) % __CC_QUARANTINE;
            if (__cc_quarantined < __CC_QUARANTINE) __cc_quarantined = __cc_quarantined + 1;
        }
    }
    pthread_mutex_unlock(&__cc_heap_lock);
    for (int k = 0; k < evictions; k++) free(evicted[k]);
    __cc_leave_unsafe();
    if (state == __CC_HEAP_LIVE) return;
    __cc_fault* f = __cc_fault_out;
    f->code_offset = site;
    f->base = (uint64_t)(uintptr_t)raw;
    f->op = state == __CC_HEAP_FREED ? 1 : state == -1 ? 2 : 0;
    f->address = state == __CC_HEAP_FREED ? first : 0;
    f->count = made, f->index = how;
    __cc_fail(__CC_BAD_FREE, 0);
}

// The leak check (Python's _leaked_blocks, after a sanitized launch): the blocks not freed, as
// (base, bytes, line, made by the last launch (bit 0) | what made it (`how`) << 1) in `out` (4 numbers
// each, at most `room` blocks);
// how many there are.
__CC_EXPORT __CC_ONCE long long __cc_heap_live_blocks(long long* out, long long room) {
    long long n = 0;
    pthread_mutex_lock(&__cc_heap_lock);
    for (size_t i = 0; i < __cc_heap_capacity; i++) {
        const __cc_heap_entry& e = __cc_heap_table[i];
        if (e.state != __CC_HEAP_LIVE) continue;
        if (n < room) {
            long long* o = out + 4 * n;
            o[0] = (long long)(uintptr_t)e.base, o[1] = (long long)e.bytes, o[2] = e.line;
            o[3] = (e.launch == __cc_current_launch) | e.how << 1;
        }
        n++;
    }
    pthread_mutex_unlock(&__cc_heap_lock);
    return n;
}

// Whether `base` is the start of a block that malloc/new gave a kernel and that is not freed.
__CC_RT bool __cc_heap_is_block(const void* base) {
    if (!base) return false;
    __cc_enter_unsafe();
    pthread_mutex_lock(&__cc_heap_lock);
    __cc_heap_entry* e = __cc_heap_find(base);
    bool live = e && e->state == __CC_HEAP_LIVE;
    pthread_mutex_unlock(&__cc_heap_lock);
    __cc_leave_unsafe();
    return live;
}

// The block from malloc/new that holds `p` (a copy; state EMPTY when none): a live one, or with `freed_too`
// also one freed and kept for the use-after-free check. A walk over the whole table.
__CC_RT __cc_heap_entry __cc_heap_entry_at(const volatile void* p, bool freed_too) {
    __cc_heap_entry found = {};
    __cc_enter_unsafe();
    pthread_mutex_lock(&__cc_heap_lock);
    for (size_t i = 0; i < __cc_heap_capacity; i++) {
        const __cc_heap_entry& e = __cc_heap_table[i];
        if ((e.state == __CC_HEAP_LIVE || (freed_too && e.state == __CC_HEAP_FREED)) && (const char*)p >= e.base &&
            (const char*)p < e.base + e.bytes) {
            found = e;
            break;
        }
    }
    pthread_mutex_unlock(&__cc_heap_lock);
    __cc_leave_unsafe();
    return found;
}
// The live block that holds `p`. Sanitizer only, and only when a read found the fill (__cc_read_fill).
__CC_RT __cc_heap_entry __cc_heap_containing(const volatile void* p) { return __cc_heap_entry_at(p, false); }

// The sanitizer, for an access to memory that is neither shared nor an argument: a fault when it
// lies in a freed block still in quarantine (use after free).
__CC_RT void __cc_heap_check_freed(const char* p, size_t size, int kind, uint32_t site) {
    __cc_freed_block hit = {nullptr, 0, 0};
    __cc_enter_unsafe();
    pthread_mutex_lock(&__cc_heap_lock);
    for (int i = 0; i < __cc_quarantined; i++) {
        const __cc_freed_block& q = __cc_quarantine[i];
        if (p >= q.base && p < q.base + (q.bytes ? q.bytes : 1)) { hit = q; break; }
    }
    pthread_mutex_unlock(&__cc_heap_lock);
    __cc_leave_unsafe();
    if (!hit.base) return;
    __cc_fault* f = __cc_fault_out;
    f->code_offset = site;
    f->base = (uint64_t)(uintptr_t)hit.base;
    f->index = (int64_t)(p - hit.base);  // the byte: a block from malloc has no element type
    f->element_bytes = (int64_t)size;
    f->length = (int64_t)hit.bytes;
    f->address = hit.free_site;
    f->op = kind;
    __cc_fail(__CC_USE_AFTER_FREE, 0);
}

__CC_RT void __cc_null_access(const volatile void* at, void* back, void* frame);
// The array a pointer argument given None points into (__cc_array_arg): none, at address 0, of no elements.
__CC_STATE const char __cc_none_array = 0;
#ifdef __CC_WITH_RUNTIME_OBJECT  // (never inlined: the object's)
__attribute__((noreturn, noinline, cold)) void __cc_out_of_bounds(
    const void* base, long long index, long long length, long long element_bytes, const void* at);
#else
__attribute__((noreturn, noinline, cold)) __CC_RT void __cc_out_of_bounds(
    const void* base, long long index, long long length, long long element_bytes, const void* at) {
    // A pointer argument given None: the access a GPU makes through a null pointer, an illegal address.
    if (base == (const void*)&__cc_none_array) __cc_null_access(at, __builtin_return_address(0), __builtin_frame_address(0));
    // The caller's address tells Python (through addr2line) which source line it was.
    __cc_fault_out->code_offset = __cc_code_offset(__builtin_return_address(0));
    __cc_fault_out->base = (uint64_t)(uintptr_t)base;
    __cc_fault_out->index = index;
    __cc_fault_out->length = length;
    __cc_fault_out->element_bytes = element_bytes;
    // A block from malloc in device code (op 2), or a static __shared__ array reached through a
    // pointer (its name): for the message.
    __cc_heap_entry block = __cc_heap_is_block(base) ? __cc_heap_entry_at(base, false) : __cc_heap_entry{};
    if (block.state == __CC_HEAP_LIVE) {  // (and what made it, and where: "new[]@12")
        __cc_fault_out->op = 2;
        snprintf(__cc_fault_out->text, sizeof __cc_fault_out->text, "%s@%d",
                 block.how == 0 ? "malloc" : block.how == 1 ? "new" : "new[]", block.line);
    }
    const __cc_poisoned* array = __cc_find_shared_array(base);
    if (array && array->base == base && array->name)
        snprintf(__cc_fault_out->text, sizeof __cc_fault_out->text, "%s", array->name);
    else if (base && base == (const void*)__cc_dyn_shared)  // (a misaligned view of it: its name)
        snprintf(__cc_fault_out->text, sizeof __cc_fault_out->text, "%s", __cc_dyn_shared_name);
    if ((size_t)index - __CC_MISALIGNED_INDEX + ((size_t)1 << 48) < ((size_t)1 << 49)) {
        __cc_fault_out->index = (int64_t)((const char*)at - (const char*)base);  // the element's byte offset
        __cc_fault_out->length = 0;
        __cc_fail(__CC_MISALIGNED, 0);
    }
    __cc_fail(base == (const void*)__cc_dyn_shared ? __CC_SHARED_OUT_OF_BOUNDS : __CC_OUT_OF_BOUNDS, 0);
}
#endif


// ---------------------------------------------------------------------------------------
// The sanitizer (racecheck, initcheck, read-only writes; compiled in with -D__CC_SANITIZE).
// Every access to shared or global memory goes through __cc_note: one instrumentation point,
// which records who touched each byte in which barrier interval ("epoch").
// ---------------------------------------------------------------------------------------

enum { __CC_READ = 1, __CC_WRITE = 2, __CC_ATOMIC = 3, __CC_TOUCH = 4,
       __CC_WRITE_SAME = 5,    // a write of the bytes the element holds already: `found = 1` by many threads
       __CC_READ_UPDATE = 6,   // the read of `x += v` or `x++` (a write follows): a read everywhere but in messages
       __CC_UPDATE = 32,       // added to a volatile read or write: those of `x += v` (__cc_rw)
       __CC_COPY = 64,         // added to the read of `s[i] = t[j];` (__cc_rc): its value is only copied
       __CC_CAS = 128,         // added to the atomic of atomicCAS: a CAS loop's plain read is checked by it
       __CC_EXCHANGE = 256,    // added to the atomic of atomicExch: what it stores does not depend on the old
                               // value, and as a statement (__cc_exchange_next) it is a write to initcheck
       __CC_VOLATILE = 16 };   // added to a kind: through a volatile lvalue, which in global memory is a
                               // relaxed atomic (PTX's memory model: a flag one block sets and another polls),
                               // in shared memory a plain access
template <class T> static constexpr int __cc_volatile_bit() {
    return std::is_volatile<typename std::remove_reference<T>::type>::value ? __CC_VOLATILE : 0;
}

#ifdef __CC_SANITIZE
static const bool __cc_sanitizing = true;
#else
static const bool __cc_sanitizing = false;
#endif

// Per worker (struct __cc_worker): each runs its own block.
#define __cc_epoch (__cc_me->epoch)              // grows at every block start and every barrier
#define __cc_block_epoch (__cc_me->block_epoch)  // the epoch the running block started in
#define __cc_warp_epoch (__cc_me->warp_epoch)    // grows when a warp-level call of that warp completes
#define __cc_block_linear (__cc_me->block_linear)

static inline unsigned __cc_tid() { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }

static inline void __cc_new_epoch() { __cc_epoch++; }
static inline void __cc_new_block() {
    __cc_heap_block_done(__cc_me);
    if (__cc_sanitizing)  // (one worker then: in a plain launch, workers writing these shared flags at
        __cc_pending_set = __cc_copy_set = __cc_fill_set = __cc_garbage_used = false, __cc_async_count = 0;  // every block slowed
                                                                                        // each other down)
    __cc_me->polling = 0, __cc_me->spin_line = 0, __cc_me->call_line = 0;  // (a fault in a waiting loop's
                                                                            // condition left them set)
    __cc_me->round_threads = 0;  // (a block run as fibers sets it: __cc_run_block_as_fibers)
    __cc_block_epoch = ++__cc_epoch;
    __cc_block_linear = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    if (__cc_dyn_shared_bytes) memset(__cc_dyn_shared, __cc_shared_fill(), __cc_dyn_shared_bytes);  // never zero
}

// What the shadow of one byte of shared memory remembers about the current block.
struct __cc_shadow_byte {
    uint32_t w_epoch, r_epoch;     // epochs of the last write and the last read
    uint32_t w_warp, r_warp_epoch; // warp epochs then (lanes of one warp ordered by __syncwarp)
    uint32_t w_site, r_site;       // code offsets of those accesses (→ source lines)
    uint16_t writer, reader;       // linear thread ids
    uint16_t reader2;              // the last reader of this epoch before `reader` that was another thread
    uint32_t r2_warp_epoch, r2_site;
    int16_t r_warps;               // the warp all readers of this epoch belong to, or -1
    uint8_t w_atomic, r_many;      // w_atomic: 1 an atomic, 2 a struct member's touch (never a hazard)
    uint8_t w_cas;                 // the last atomic was an atomicCAS (a CAS loop's plain read beside it is no hazard)
    uint8_t a_many;                // atomics of two threads in this epoch: a_other is the one before writer
    uint8_t r_unwritten;           // the first reader of this epoch read it before any thread of the block wrote it
    uint8_t w_copied_unwritten;    // the last write copied an element that no thread had written (`s[i] = t[j];`),
                                   // 1, or stored a local variable that had no value (its fill), 2: it holds no
                                   // value either (w_site names the copy)
    uint16_t a_other;
    uint16_t pw_writer;            // the last plain (not atomic) write: checked against atomics
    uint32_t pw_epoch, pw_warp, pw_site;
    uint32_t w_time;               // __cc_sync_clock at the last plain write (a handover through a fence and a flag)
    uint32_t r_time, r2_time;      // and at the reads of `reader` and `reader2` (a lock's holder reads, fences,
                                   // releases; the next holder acquires, then writes)
    uint16_t reader3;              // (r_has3) the last reader of another warp than the reader after it: the
    uint8_t r_has3;                // one to name when the last two, of one warp, are ordered by its __syncwarp
    uint32_t r3_warp_epoch, r3_site, r3_time;
};
struct __cc_shared_region {
    char* base;
    size_t bytes, row_bytes;       // row_bytes: a 2-D array's row, to name tile[r][c]; __CC_SCALAR: no array
    const char* name;
    __cc_shadow_byte* shadow;
    bool dynamic;                  // the launch's extern __shared__ buffer
    size_t item;                   // an element's bytes (a struct's, in an array of structs), 0 if unknown
    uint32_t inner[3];             // a row's own extents (s[4][8][8]: 8, 8), to name s[1][2][3]; 0: none
};
static const size_t __CC_SCALAR = ~(size_t)0;  // the row_bytes of a `__shared__ int n;`
__CC_STATE __cc_shared_region __cc_shared_regions[__CC_MAX_SHARED_ARRAYS];  // (sanitized builds only: one worker)
__CC_STATE int __cc_shared_region_count;

// The shadow of global memory (argument arrays, __device__ variables), per element: the last
// access of each kind by a thread in this launch. A read or an atomic also keeps the access
// before it by another thread (slot 2), so that a thread that both reads and writes an element
// still sees the other readers.
struct __cc_global_note {
    uint32_t launch, block, epoch, site;
    uint32_t warp;                 // the thread's warp epoch then (lanes ordered by __syncwarp)
    uint32_t time;                 // __cc_sync_clock then (a handover through a fence and an atomic)
    uint16_t tid;
    uint8_t same : 1;              // a write of the value the element held already
    uint8_t repeated : 1;          // another block stored the same value again at the same line
    uint8_t redone : 1;            // another thread of the writer's block stored the same value again at the same line
    uint8_t volatile_write : 1;    // an atomic note that was a volatile update (`v[tid] += v[tid + 16]`)
    uint8_t volatile_store : 1;    // an atomic note that was a volatile store (`result[b] = sum;`, or the write of `+=`)
    uint8_t cas : 1;               // an atomic note that was an atomicCAS
    uint8_t has_old : 1;           // a write or atomic note: `old` holds the element's bytes before it
    uint8_t block_scope : 1;       // an atomic note that was an atomicAdd_block (...), atomic only within its block
    uint8_t volatile_read;         // an atomic note that was a volatile read (for the message)
    uint16_t same_tid, same_block; // a write note: the last thread (and its block, in 16 bits) that stored the
                                   // value again after this write, in this launch (0xffff: none)
    uint64_t old;                  //   (elements of at most 8 bytes; for __cc_race_rerun's stale reads)
};
enum { __CC_NOTE_WRITE, __CC_NOTE_ATOMIC, __CC_NOTE_ATOMIC2, __CC_NOTE_READ, __CC_NOTE_READ2, __CC_NOTE_KINDS };

// A sanitized launch run again to see whether a race between one thread's plain read and another
// thread's plain write of global memory changes its results (cpu.py _race_changes_results): 1 runs
// it in launch order again, 2 with the blocks, and the threads of each block, in the opposite
// order, 3 in launch order with each such read seeing the value from before the other thread's
// write (a read that came first on a GPU: `if (!seen[v]) { seen[v] = 1; count++; }` in two threads
// counts twice there, in no order of whole threads); in each such a race is let go (the others
// still stop the kernel). 4: the first run, which Python can run again: a plain read of an element
// other threads update atomically stops it too (see __cc_note_global). 5 and 6: after a race in shared
// memory, the launch run again with such races let go, in launch order (5) and in the opposite order (6),
// to show what the race does to the results (cpu.py _shared_race_effect). Sanitized builds run on one
// worker. (__cc_race_rerun is defined with the device heap, which reads it.)
// Blocks, and each block's threads, run in the opposite order (modes 2 and 6; always false in a plain build).
static inline bool __cc_reversed() { return __cc_sanitizing && (__cc_race_rerun == 2 || __cc_race_rerun == 6); }
// Races in shared memory, and reads of its elements that no thread has written, are let go (modes 5 and 6).
static inline bool __cc_shared_races_go() { return __cc_race_rerun >= 5; }
// Mode 3: the elements that hold an old value for the read that was just noted, and the bytes to
// put back before the next access (of any thread: every access is noted) or the launch's end.
struct __cc_stale_element { char* address; uint64_t now; size_t size; };
__CC_STATE __cc_stale_element __cc_stale[8];
__CC_STATE int __cc_stale_count;
static inline void __cc_put_back_stale() {
    while (__cc_stale_count > 0) {
        const __cc_stale_element& e = __cc_stale[--__cc_stale_count];
        memcpy(e.address, &e.now, e.size);
    }
}

// Writes of different blocks ordered through memory: thread Y writes, then __threadfence(),
// then an atomic (a flag, a ticket, a lock's release); thread X's atomic comes after that, and
// then X writes the element too (the last-block reduction of NVIDIA's threadFenceReduction, a
// lock in global memory). Per thread of the launch: its last fence, the first global atomic after
// it (the release), and its last global atomic (what it has acquired). Sanitized builds only,
// kept once a launch uses __threadfence().
__attribute__((always_inline)) static inline void __cc_enter_unsafe();
static inline void __cc_leave_unsafe();
__CC_STATE uint32_t __cc_sync_clock;
// Per thread of the launch (sanitizer), in one scope: when it last fenced, released (its first
// atomic or volatile access after that fence) and acquired (its latest such access).
struct __cc_sync_scope { uint32_t fence, release, acquire; };
// Device scope (__threadfence, global atomics): what a handover between blocks needs. Block scope
// (__threadfence_block too, shared-memory atomics and volatile accesses too): enough for a handover
// between threads of one block through shared memory.
// `published`: its last global atomic or volatile store (what may tell another block that a value
// is there), `observed`: its last global atomic or volatile read (what may have seen such news).
// `covered`: the sanitizer's epoch (__cc_epoch) at its last device-scope fence: the fence orders the
// writes that every thread of the block made in an earlier epoch too, before a barrier that came before it.
// `pub_covered`, `pub_release` (the block's first thread only): the newest such epoch that a thread of the
// block fenced in and then released (an atomic, a volatile store: thread 0's ticket after the block
// wrote its tile, a barrier, and a __threadfence()), and when it first did: a handover of the whole block's
// writes made before that epoch.
// `prev_fence`, `prev_release`: the device-scope fence and release before the last fence, when that
// fence was released (a block of a look-back scan stores its sum, fences, sets its flag, and then fences
// again after each predecessor's flag it waits for: the first pair is what its readers wait for).
struct __cc_sync_times {
    __cc_sync_scope device, block;
    uint32_t published, observed;
    uint32_t covered, pub_covered, pub_release;
    uint32_t prev_fence, prev_release;
    uint32_t prev_pub_covered, prev_pub_release;  // (the block's first thread) the handover before the newest
    // (the block's first thread) `barrier_release`: the first release a thread of the block made in epoch
    // `barrier_epoch` (the newest with one; `prev_...` the one before): it hands over every write whose own
    // thread fenced after it in an earlier epoch, since a barrier lies between that fence and the release
    // (each thread writes its part and fences, __syncthreads(), thread 0 takes the ticket or frees the lock).
    uint32_t barrier_epoch, barrier_release, prev_barrier_epoch, prev_barrier_release;
    uint32_t older_fence, older_covered;  // the device fence before the newest, and its epoch
};
__CC_STATE __cc_sync_times* __cc_sync;
__CC_STATE size_t __cc_sync_threads;
__CC_STATE uint32_t __cc_sync_launch;

static inline size_t __cc_global_tid() {
    return (size_t)(blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z)) * (blockDim.x * blockDim.y * blockDim.z) +
           threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
// `start`: 1 at a fence, 2 at a global atomic or volatile access (whose times tell a handover
// without a fence: up to 1M threads), 0 not.
static inline bool __cc_sync_ready(int start) {
    if (__cc_sync_launch == __cc_current_launch) return __cc_sync != nullptr;
    if (!start) return false;
    size_t threads = (size_t)gridDim.x * gridDim.y * gridDim.z * blockDim.x * blockDim.y * blockDim.z;
    if (threads > ((size_t)1 << (start == 1 ? 26 : 20))) return false;  // beyond 64M threads no handoff is known: writes stay races
    __cc_sync_launch = __cc_current_launch;
    __cc_enter_unsafe();
    if (threads > __cc_sync_threads) {
        free(__cc_sync);
        __cc_sync = (__cc_sync_times*)malloc(threads * sizeof(__cc_sync_times));
        __cc_sync_threads = __cc_sync ? threads : 0;
    }
    if (__cc_sync) memset(__cc_sync, 0, threads * sizeof(__cc_sync_times));
    __cc_leave_unsafe();
    return __cc_sync != nullptr;
}
// A fence; one of device scope orders for the block too.
__CC_RT void __cc_note_fence(bool device) {
    if (!__cc_sync_ready(true)) return;
    __cc_sync_times& me = __cc_sync[__cc_global_tid()];
    uint32_t now = ++__cc_sync_clock;
    me.block = {now, 0, me.block.acquire};
    if (device) {
        if (me.device.release) me.prev_fence = me.device.fence, me.prev_release = me.device.release;
        me.older_fence = me.device.fence, me.older_covered = me.covered;
        me.device = {now, 0, me.device.acquire}, me.covered = __cc_epoch;
    }
}
// (a release is a write: an atomic update or a volatile store after the fence; a read after a fence is
// an acquire's fence, `while (flag == 0); __threadfence();`, which releases nothing)
static inline void __cc_scope_sync(__cc_sync_scope& scope, uint32_t now, bool write) {
    if (write && scope.fence && !scope.release) scope.release = now;
    scope.acquire = now;
}
// Per element of global memory that atomics or volatile stores wrote in this launch: when the latest
// did (a small open-addressing table by address; sanitized launches run on one worker). A thread that
// reads the element atomically acquires what was released up to that write, not whatever any thread
// released before now: `while (flags[0] == 0);` does not hand over what block 1 released through
// flags[1]. (A table that is full gives the old answer, now: a handover missed, never a false report.)
struct __cc_release_slot { uintptr_t address; uint32_t launch, time; };
__CC_STATE __cc_release_slot __cc_releases[4096];
__CC_RT __cc_release_slot* __cc_release_of(const volatile void* p) {
    uintptr_t address = (uintptr_t)p;
    size_t h = (size_t)((address >> 2) * 0x9E3779B97F4A7C15ull >> 52);  // 12 bits
    for (int probe = 0; probe < 32; probe++) {
        __cc_release_slot& slot = __cc_releases[(h + probe) & 4095];
        if (slot.launch != __cc_current_launch) {  // free (a slot of an earlier launch)
            slot = {address, __cc_current_launch, 0};
            return &slot;
        }
        if (slot.address == address) return &slot;
    }
    return nullptr;
}
// An atomic or volatile access (`kind`: __CC_READ, a store, or __CC_ATOMIC): of global memory
// (`device`, at `p`), which a block's threads see too, or of shared memory.
__CC_RT void __cc_note_atomic(bool device, int kind, const volatile void* p = nullptr) {
    if (!__cc_sync_ready(device ? 2 : 0)) return;
    __cc_sync_times& me = __cc_sync[__cc_global_tid()];
    uint32_t now = ++__cc_sync_clock;
    bool write = kind != __CC_READ && kind != __CC_TOUCH;
    __cc_scope_sync(me.block, now, write);
    if (!device) return;
    uint32_t acquired = me.device.acquire;
    __cc_scope_sync(me.device, now, write);
    if (__cc_release_slot* slot = p ? __cc_release_of(p) : nullptr) {
        // a read (or the read of an atomic update) acquires up to the latest write it sees; a store, nothing
        if ((kind == __CC_READ || kind == __CC_ATOMIC) && slot->time) acquired = std::max(acquired, slot->time + 1);
        me.device.acquire = acquired;
        if (write) slot->time = now;
    }
    if (write) {
        me.published = now;
        __cc_sync_times& block = __cc_sync[__cc_global_tid() - __cc_tid()];
        if (me.covered > block.pub_covered) {  // (a block that hands over in phases: the phase before stays)
            if (block.pub_release) block.prev_pub_covered = block.pub_covered, block.prev_pub_release = block.pub_release;
            block.pub_covered = me.covered, block.pub_release = now;
        }
        if (block.barrier_epoch != __cc_epoch) {
            if (block.barrier_release)
                block.prev_barrier_epoch = block.barrier_epoch, block.prev_barrier_release = block.barrier_release;
            block.barrier_epoch = __cc_epoch, block.barrier_release = now;
        }
    }
    if (kind == __CC_READ || kind == __CC_ATOMIC) me.observed = now;
}
// A write made at `time` by the thread whose times are `writer` is ordered before this thread's
// (`mine`) access: the writer fenced and released after it, and this thread acquired after that.
static inline bool __cc_released_to(const __cc_sync_scope& writer, const __cc_sync_scope& mine, uint32_t time) {
    return writer.fence > time && writer.release > writer.fence && mine.acquire > writer.release;
}
// Thread `writer` of this block wrote shared memory at `time`, then fenced (block scope at least)
// and released, and this thread acquired after that (`while (flag == 0);` on a volatile __shared__
// flag, say).
// Or: the writer met lanes of its warp at a warp-level call after the write (__syncwarp()), and one
// of them fenced and released after that (lane 0 of a producer warp sets the flag for all).
// (Sanitized builds only, which run on one worker: per lane of the block, the clock of the last
// warp-level call it completed.)
__CC_STATE uint32_t __cc_warp_met[1024];
static inline bool __cc_shared_handed_over(unsigned writer, uint32_t time) {
    if (!__cc_sync_ready(false)) return false;
    size_t me = __cc_global_tid(), first = me - __cc_tid(), y = first + writer;
    if (y >= __cc_sync_threads || me >= __cc_sync_threads) return false;
    if (__cc_released_to(__cc_sync[y].block, __cc_sync[me].block, time)) return true;
    uint32_t met = writer < 1024 ? __cc_warp_met[writer] : 0;
    if (met <= time) return false;
    unsigned threads = blockDim.x * blockDim.y * blockDim.z;
    for (unsigned lane = writer & ~31u; lane < (writer | 31u) + 1 && lane < threads; lane++)
        if (__cc_warp_met[lane] == met && first + lane < __cc_sync_threads &&
            __cc_released_to(__cc_sync[first + lane].block, __cc_sync[me].block, met))
            return true;
    return false;
}
// A barrier orders what one thread of the block acquired before every thread's accesses after it
// (thread 0 takes the last-block ticket, __syncthreads(), then the whole block reads the partials).
__CC_RT void __cc_barrier_shares_acquires(int threads) {
    if (!__cc_sync_ready(false)) return;
    size_t first = (size_t)__cc_block_linear * (size_t)threads;
    if (first + (size_t)threads > __cc_sync_threads) return;
    uint32_t latest = 0, observed = 0;
    for (int i = 0; i < threads; i++) {
        latest = std::max(latest, __cc_sync[first + i].device.acquire);
        observed = std::max(observed, __cc_sync[first + i].observed);
    }
    for (int i = 0; i < threads; i++) __cc_sync[first + i].device.acquire = latest, __cc_sync[first + i].observed = observed;
}
// The launch-wide index of the thread that made note `n` (__cc_sync's index).
static inline size_t __cc_note_thread(const __cc_global_note& n) {
    return (size_t)n.block * (blockDim.x * blockDim.y * blockDim.z) + n.tid;
}
// Y's write (w) is ordered before this thread's: Y fenced and released after it, and this thread
// acquired after that.
// (Between threads of one block, block scope is enough: a lock in shared memory, fenced with
// __threadfence_block(), orders the global data it guards for the block's threads.)
static inline bool __cc_shared_handed_over(unsigned writer, uint32_t time);
// The earliest release (by the sync clock) that hands over thread Y's write `w` to other blocks, 0 if
// none: Y fenced after the write and then released (at its last fence, or the one before), or a thread
// of Y's block fenced after a barrier that came after the write and then released (the block's newest
// handover, or the one before). A thread that acquired after it has been handed the write.
static inline uint32_t __cc_release_for(const __cc_global_note& w) {
    size_t y = __cc_note_thread(w);
    const __cc_sync_times &writer = __cc_sync[y], &block = __cc_sync[y - w.tid];
    uint32_t first = 0;
    auto take = [&first](bool covers, uint32_t release) {
        if (covers && release && (!first || release < first)) first = release;
    };
    take(writer.device.fence > w.time && writer.device.release > writer.device.fence, writer.device.release);
    take(writer.prev_fence > w.time, writer.prev_release);
    take(block.pub_covered > w.epoch, block.pub_release);
    take(block.prev_pub_covered > w.epoch, block.prev_pub_release);
    // Y fenced after the write (its newest device fence, in epoch writer.covered), then a barrier, then a
    // thread of the block released.
    // (the fence before the newest, when it too came after the write: an acquire's fence after the barrier)
    bool fenced = writer.device.fence > w.time;
    uint32_t fence_epoch = writer.older_fence > w.time ? writer.older_covered : writer.covered;
    take(fenced && block.barrier_epoch > fence_epoch, block.barrier_release);
    take(fenced && block.prev_barrier_epoch > fence_epoch, block.prev_barrier_release);
    return first;
}
static inline bool __cc_handed_over(const __cc_global_note& w) {
    if (!__cc_sync_ready(false)) return false;
    size_t y = __cc_note_thread(w);
    if (y >= __cc_sync_threads) return false;
    const __cc_sync_times &writer = __cc_sync[y], &me = __cc_sync[__cc_global_tid()];
    uint32_t release = __cc_release_for(w);
    if ((release && me.device.acquire > release) ||
        (w.block == (uint32_t)__cc_block_linear && __cc_released_to(writer.block, me.block, w.time)))
        return true;
    // (the writer's block: a lane that met the writer at a warp-level call after the write fenced and released)
    return w.block == (uint32_t)__cc_block_linear && __cc_shared_handed_over(w.tid, w.time);
}

// Thread Y's write (w) was fenced and released (see __cc_release_for): a handover that this thread did
// not wait for when it is not handed over (it read a flag written before that release, or another
// thread's flag).
static inline bool __cc_fenced_and_released(const __cc_global_note& w) {
    return __cc_sync_ready(false) && __cc_note_thread(w) < __cc_sync_threads && __cc_release_for(w) != 0;
}

// Thread Y, who made note `n` (a store), published something after it (an atomic, a volatile store:
// a ticket, a flag), and this thread observed something (an atomic, a volatile read) after that, at
// `observed`: it counts on a handover from Y.
static inline bool __cc_published_to(const __cc_global_note& n, uint32_t observed) {
    size_t y = __cc_note_thread(n);
    if (y >= __cc_sync_threads) return false;
    uint32_t published = __cc_sync[y].published;
    return published > n.time && observed > published;
}

// The memory a launch knows: its argument arrays and its dynamic shared memory. A raw pointer
// that points into one of them (made with `&a[i]` or a C cast, say) gets that allocation's
// bounds back when it becomes a checked pointer.
struct __cc_redo_after { uint32_t launch, block; uint16_t tid; };  // (see __cc_allocation::redo_after)
struct __cc_allocation {
    char* base;
    size_t bytes;
    size_t item;                   // the race shadow's unit: the NumPy itemsize, 4 bytes in a record array
    bool read_only;
    bool argument;                 // a kernel argument's array (a NumPy array's memory)
    bool unwritten;                // made by course.cuda.xp.empty, its bytes 0xFE until written (sanitizer: __cc_read_fill)
    __cc_global_note* notes[__CC_NOTE_KINDS];  // sanitizer only: each made at its first use
    size_t shadow_count;           // elements (of `item` bytes)
    int item_shift;                // log2(item) when item is a power of two (shifts, not divisions), else -1
    // Elements that a block stored the value in that another block had stored at the same line
    // (sanitizer): blocks that repeat each other's work, as when an index leaves out blockIdx. How
    // many, and the first.
    size_t repeated, repeated_word;
    uint32_t repeated_site;
    unsigned repeated_block, repeated_other_block;
    uint16_t repeated_tid;
    // The same within a block (sanitizer): elements that a thread stored the value in that another thread of its
    // block had stored at the same line: threads that repeat each other's work, as an index without threadIdx
    // (or with the axis the block does not have) makes them do. How many, and the first.
    size_t redone, redone_word;
    size_t redo_stores, redo_alike; // such stores, and those after the thread the storing thread's previous one was after
    __cc_redo_after* redo_after;   // per thread of a block: the thread it last came after here (made at first use)
    size_t redone_here, redone_most; // elements redone in the block running (redone_block_now), and most in one block
    unsigned redone_block_now;
    uint32_t redone_site;
    unsigned redone_block;
    uint16_t redone_tid, redone_other_tid;
    // (sanitizer) made by xp.empty and still nothing but its fill when the launch began: no host code or earlier
    // launch wrote any of it, so a 1- or 2-byte element that holds 0xFE there (a number real data holds too: 254)
    // and that no thread of this launch wrote was never written (__cc_unwritten_narrow)
    bool pristine;
};
__CC_STATE __cc_allocation __cc_allocations[64 + __CC_MAX_WORKERS];
  // arguments, and each worker's dynamic shared memory
__CC_STATE int __cc_allocation_count;

static inline const __cc_allocation* __cc_find_allocation(const volatile void* raw) {
    const char* p = (const char*)raw;
    for (int i = 0; i < __cc_allocation_count; i++) {
        const __cc_allocation& a = __cc_allocations[i];
        if (p >= a.base && p < a.base + a.bytes) return &a;
    }
    return nullptr;
}
// The argument array that ends at `raw` or at most a page before it (the nearest): a pointer made from an
// integer one past its end (`(float*)((uintptr_t)a + 4 * n)`) or a few elements further (an index that
// overshot) is that array's, so that an access through it is its out-of-bounds access rather than a read or
// write of whatever follows a NumPy array (the allocator's own records: a crash of the Python process later,
// at exit). Only arguments (a NumPy array's memory is never followed directly by other memory a kernel may
// use, as a __device__ variable may be by a string literal), past the end only, and a page at most: a
// thread's stack, whose live variables could lie just below an array's memory, starts with a guard page.
// (adopt asks only for an address in no block of the device heap, which is the host's and may follow one.)
static inline const __cc_allocation* __cc_argument_ending_near(const volatile void* raw) {
    const __cc_allocation* nearest = nullptr;
    for (int i = 0; i < __cc_allocation_count; i++) {
        const __cc_allocation& a = __cc_allocations[i];
        const char* end = a.base + a.bytes;
        if (a.argument && (const char*)raw >= end && (const char*)raw - end <= 4096 &&
            (!nearest || end > nearest->base + nearest->bytes))
            nearest = &a;
    }
    return nearest;
}

static inline size_t __cc_region_bytes(const void* base, size_t otherwise) {
    if (const __cc_allocation* a = __cc_find_allocation(base)) return a->base == (const char*)base ? a->bytes : otherwise;
    const __cc_poisoned* shared = __cc_find_shared_array(base);
    return shared && shared->base == base ? shared->bytes : otherwise;
}

__attribute__((always_inline)) static inline void __cc_enter_unsafe();
static inline void __cc_leave_unsafe();

// The flags of a __constant__ or __device__ variable of type V: its element's size as the race
// checker's unit (a struct's or vector's members are 4-byte units, as in a NumPy record array),
// read-only when the element is const.
template <class V> static inline uint64_t __cc_global_bits() {
    using E = typename std::remove_all_extents<V>::type;
    size_t item = sizeof(E);
    if (!std::is_scalar<E>::value || item > 8) item = item % 4 == 0 ? 4 : item % 2 == 0 ? 2 : 1;
    return (uint64_t)item | ((uint64_t)std::is_const<E>::value << 32);
}

// `flags`: the element size (low 32 bits), 1 << 32 when the array is read-only, 1 << 33 for an argument,
// 1 << 34 for memory that course.cuda.xp.empty filled (sanitized launches only).
// Arrays that share memory (one array passed twice, `k(x, x)`, or two views of one array, x[:-1] and
// x[1:]) become one allocation: the race checker then sees a thread write through one parameter
// and another thread read through the other, and a write through the writable one is no write
// into a read-only array. It is read-only only if all of them are; its race unit divides theirs.
static inline void __cc_register_allocation(void* base, size_t bytes, uint64_t flags = 0) {
    if (!base || !bytes) return;
    bool read_only = (flags >> 32) & 1, argument = (flags >> 33) & 1, unwritten = (flags >> 34) & 1;
    size_t item = (size_t)(flags & 0xffffffffu);
    item = item ? item : 1;
    char *low = (char*)base, *high = low + bytes;
    for (int i = 0; i < __cc_allocation_count;) {
        __cc_allocation& a = __cc_allocations[i];
        if (!(low < a.base + a.bytes && a.base < high)) {
            i++;
            continue;
        }
        item = std::gcd(item, std::gcd(a.item, (size_t)(a.base > low ? a.base - low : low - a.base)));
        read_only = read_only && a.read_only;
        argument = argument || a.argument;
        unwritten = unwritten || a.unwritten;
        low = a.base < low ? a.base : low;
        high = a.base + a.bytes > high ? a.base + a.bytes : high;
        for (int k = 0; k < __CC_NOTE_KINDS; k++) free(a.notes[k]);  // (none yet: made at first use)
        free(a.redo_after);
        a = __cc_allocations[--__cc_allocation_count];
    }
    if (__cc_allocation_count >= (int)(sizeof __cc_allocations / sizeof __cc_allocations[0])) return;
    base = low, bytes = (size_t)(high - low);
    __cc_allocation a = {(char*)base, bytes, item, read_only, argument, unwritten, {}, 0, -1};
    if (!(a.item & (a.item - 1))) a.item_shift = __builtin_ctzll(a.item);
    if (__cc_sanitizing && !read_only && item) a.shadow_count = bytes / a.item;  // (notes made when used)
    if (__cc_sanitizing && argument && unwritten) {
        const unsigned char* b = (const unsigned char*)base;
        size_t k = 0;
        for (uint64_t word; k + 8 <= bytes; k += 8)
            if (memcpy(&word, b + k, 8), word != 0xFEFEFEFEFEFEFEFEull) break;
        while (k < bytes && b[k] == 0xFE) k++;
        a.pristine = k == bytes;
    }
    __cc_allocations[__cc_allocation_count++] = a;
}
// The x, y, z of a thread's (or block's) linear index within a block (or grid) of size `d`.
static inline void __cc_unflatten(uint32_t out[3], unsigned linear, const dim3& d) {
    out[0] = linear % d.x, out[1] = linear / d.x % d.y, out[2] = linear / (d.x * d.y);
}

// The first curand_init of a launch (seed, subsequence, offset, who, where), and the first other
// thread that then set up a state with the same three numbers: those threads draw the same numbers
// (fault->length 4, a warning: curand_init(1234, 0, 0, &s) in every thread, say).
struct __cc_rng_setup {
    uint32_t claimed, ready, other_set;  // launch numbers
    unsigned long long seed, subsequence, offset;
    unsigned block, tid, other_block, other_tid;
    int line;
};
__CC_STATE __cc_rng_setup __cc_rng_first;
__CC_RT bool __cc_describe_rng_setup(__cc_fault* fault) {
    const __cc_rng_setup& r = __cc_rng_first;
    if (__atomic_load_n(&r.other_set, __ATOMIC_ACQUIRE) != __cc_current_launch) return false;
    fault->length = 4;
    fault->line = r.line;
    fault->index = (int64_t)r.seed, fault->base = r.subsequence, fault->address = r.offset;
    __cc_unflatten(fault->block, r.other_block, gridDim);
    __cc_unflatten(fault->thread, r.other_tid, blockDim);
    __cc_unflatten(fault->other_block, r.block, gridDim);
    __cc_unflatten(fault->other_thread, r.tid, blockDim);
    return true;
}

// After a launch without a fault (sanitizer), into a zeroed record: the array whose elements most
// often got, from a block, the value another block had stored there at the same line
// (fault->length 3: a warning Python gives if there are many); when no block repeated another's, the array
// whose elements most often got it from two threads of one block (fault->mask 1, other_thread the first), where a
// thread mostly repeats one other thread's stores (redo_alike: a search that marks the neighbours its threads
// share, `visited[v] = 1`, repeats stores of one thread here and another there) and some block repeated 8 or more
// elements (every thread storing its block's one result, `out[blockIdx.x] = s[0];`, repeats one).
__CC_RT void __cc_describe_repeated(__cc_fault* fault) {
    const __cc_allocation* most = nullptr;
    for (int i = 0; i < __cc_allocation_count; i++)
        if (__cc_allocations[i].repeated && (!most || __cc_allocations[i].repeated > most->repeated))
            most = &__cc_allocations[i];
    bool in_block = !most;
    for (int i = 0; i < __cc_allocation_count && in_block; i++) {
        const __cc_allocation& a = __cc_allocations[i];
        if (a.redone_most >= 8 && 2 * a.redo_alike >= a.redo_stores && (!most || a.redone > most->redone)) most = &a;
    }
    if (!most) return;
    size_t count = in_block ? most->redone : most->repeated;
    fault->length = 3, fault->mask = in_block;
    fault->count = count > 0x7fffffff ? 0x7fffffff : (int32_t)count;
    fault->base = (uint64_t)(uintptr_t)most->base;
    fault->index = (int64_t)(in_block ? most->redone_word : most->repeated_word);
    fault->element_bytes = (int64_t)most->item;
    fault->code_offset = in_block ? most->redone_site : most->repeated_site;
    __cc_unflatten(fault->block, in_block ? most->redone_block : most->repeated_block, gridDim);
    __cc_unflatten(fault->thread, in_block ? most->redone_tid : most->repeated_tid, blockDim);
    if (in_block) __cc_unflatten(fault->other_thread, most->redone_other_tid, blockDim);
    else __cc_unflatten(fault->other_block, most->repeated_other_block, gridDim);
}

__CC_RT void __cc_release_allocations() {
    for (int i = 0; i < __cc_allocation_count; i++) {
        for (int k = 0; k < __CC_NOTE_KINDS; k++) free(__cc_allocations[i].notes[k]);
        free(__cc_allocations[i].redo_after);
    }
    __cc_allocation_count = 0;
}

// The shared region (__shared__ array, or the dynamic buffer) that holds `address`: its index, or -1.
static inline int __cc_shared_region_at(const volatile void* address) {
    const char* p = (const char*)address;
    for (int i = 0; i < __cc_shared_region_count; i++)
        if (p >= __cc_shared_regions[i].base && p < __cc_shared_regions[i].base + __cc_shared_regions[i].bytes) return i;
    return -1;
}
static inline void __cc_register_shared(void* base, size_t bytes, size_t row_bytes, const char* name,
                                        bool dynamic = false, size_t item = 0, const uint32_t* inner = nullptr) {
    uint32_t extents[3] = {0, 0, 0};
    for (int k = 0; inner && k < 3; k++) extents[k] = inner[k];
    if (!__cc_sanitizing || !base || !bytes) return;
    for (int i = 0; i < __cc_shared_region_count; i++) {
        __cc_shared_region& r = __cc_shared_regions[i];
        // The dynamic buffer has one entry: when it moves, its old range must not be taken for
        // shared memory any more (an argument array may live there now).
        if (dynamic ? r.dynamic : (r.base == (char*)base && !r.dynamic)) {
            if (r.base != (char*)base || r.bytes < bytes) {
                __cc_enter_unsafe();
                free(r.shadow);
                r.shadow = (__cc_shadow_byte*)calloc(bytes, sizeof(__cc_shadow_byte));
                __cc_leave_unsafe();
                r.base = (char*)base, r.bytes = bytes;
            }
            r.row_bytes = row_bytes, r.name = name, r.item = item;
            memcpy(r.inner, extents, sizeof extents);
            return;
        }
    }
    if (__cc_shared_region_count >= __CC_MAX_SHARED_ARRAYS) return;
    __cc_enter_unsafe();
    __cc_shadow_byte* shadow = (__cc_shadow_byte*)calloc(bytes, sizeof(__cc_shadow_byte));
    __cc_leave_unsafe();
    __cc_shared_regions[__cc_shared_region_count++] = {(char*)base, bytes, row_bytes, name, shadow, dynamic, item,
                                                       {extents[0], extents[1], extents[2]}};
}

__CC_RT void __cc_other_thread(unsigned tid, unsigned block, __cc_fault* f = __cc_fault_out) {
    __cc_unflatten(f->other_thread, tid, blockDim);
    __cc_unflatten(f->other_block, block, gridDim);
}

__CC_RT void __cc_divergent_race(unsigned other);  // (below, with the fibers)
// The element of shared memory at `offset` (`size` bytes), and the other access, in a fault record.
__CC_RT void __cc_describe_shared(__cc_fault* f, const __cc_shared_region& r, size_t offset, size_t size,
                                 uint32_t site, int op, unsigned other, uint32_t other_site, int other_op) {
    f->code_offset = site;
    f->address = other_site;
    f->op = op, f->other_op = other_op;
    // s[3] of an array of structs, whichever member; s[16] of a float array read as a float4 there
    size_t unit = r.item ? r.item : size;
    f->element_bytes = (int64_t)size;
    f->index = (int64_t)(offset / unit);
    f->base = (uint64_t)(uintptr_t)r.base;
    __cc_other_thread(other, __cc_block_linear, f);
    f->count = (int64_t)(offset % unit);  // the byte in the element (a member of a struct's: cpu.py names it)
    if (r.row_bytes == __CC_SCALAR) {  // a __shared__ scalar: its name (Python adds a member and its index)
        snprintf(f->text, sizeof f->text, "%s", r.name ? r.name : "shared");
        f->length = (int64_t)offset;   // the byte in it
    }
    else if (r.row_bytes && r.row_bytes % unit == 0) {
        size_t rest = offset % r.row_bytes / unit, at = 0, subscripts[3] = {rest, 0, 0};
        int rank = r.inner[1] && unit == r.item ? (r.inner[2] ? 3 : 2) : 1;  // (s[4][8][8]: a row is 8 × 8)
        for (int k = rank - 1; k >= 0; k--) subscripts[k] = rest % r.inner[k], rest /= r.inner[k];
        if (rank == 1) subscripts[0] = offset % r.row_bytes / unit;
        at += snprintf(f->text, sizeof f->text, "%s[%zu]", r.name ? r.name : "shared", offset / r.row_bytes);
        for (int k = 0; k < rank && at < sizeof f->text; k++)
            at += snprintf(f->text + at, sizeof f->text - at, "[%zu]", subscripts[k]);
    }
    else
        snprintf(f->text, sizeof f->text, "%s[%zu]", r.name ? r.name : "shared", offset / unit);
}
#ifdef __CC_WITH_RUNTIME_OBJECT  // (never inlined: the object's)
__attribute__((noreturn, noinline, cold)) void __cc_shared_fault(
    int kind, const __cc_shared_region& r, size_t offset, size_t size, uint32_t site, int op,
    unsigned other, uint32_t other_site, int other_op);
#else
__attribute__((noreturn, noinline, cold)) __CC_RT void __cc_shared_fault(
    int kind, const __cc_shared_region& r, size_t offset, size_t size, uint32_t site, int op,
    unsigned other, uint32_t other_site, int other_op) {
    if (kind == __CC_RACE) __cc_divergent_race(other);  // (the race of a barrier inside a divergent if)
    __cc_describe_shared(__cc_fault_out, r, offset, size, site, op, other, other_site, other_op);
    __cc_fail(kind, 0);
}
#endif
// A whole struct or vector element read (`float4 v = s[t];`) with some of its bytes written and the byte at
// `unwritten` not: no report (the bytes may be padding, or members never used), but noted, so that Python
// can see whether the results depend on them (cpu.py _depends_on_undefined, with another fill).
__CC_RT void __cc_note_partial(const __cc_shared_region& r, size_t offset, size_t size, uint32_t site,
                              size_t unwritten) {
    __cc_fault* f = &__cc_me->partial;
    memset(f, 0, sizeof *f);
    __cc_describe_shared(f, r, offset, size, site, __CC_READ, __cc_tid(), 0, 0);
    f->block[0] = blockIdx.x, f->block[1] = blockIdx.y, f->block[2] = blockIdx.z;
    f->thread[0] = threadIdx.x, f->thread[1] = threadIdx.y, f->thread[2] = threadIdx.z;
    f->count = (int64_t)(unwritten - offset);  // the first such byte in the element
    f->length = 6;
}

// Two accesses of lanes of one warp are ordered when a warp-level call of both lanes completed in
// between: one of the whole warp, or of a mask with both (`__syncwarp(0xffff)`, a tile<16>'s sync,
// orders only its lanes).
static inline bool __cc_warp_ordered(unsigned a, unsigned b, uint32_t warp_epoch_then) {
    if (a / 32 != b / 32) return false;
    unsigned w = (a / 32) & 31;
    if ((int32_t)(__cc_me->warp_full[w] - warp_epoch_then) > 0) return true;
    return __cc_me->warp_pairs && (int32_t)(__cc_me->warp_pairs[w][a % 32][b % 32] - warp_epoch_then) > 0;
}

// A warp-level call of the lanes in `mask` (of `lanes` in the warp; `exited`: lanes that returned)
// completed: it orders their accesses before it with theirs after it.
__CC_RT void __cc_warp_call_done(int base, unsigned mask, unsigned exited, int lanes) {
    unsigned w = (unsigned)(base / 32) & 31;
    uint32_t now = ++__cc_warp_epoch[w];
    unsigned all = lanes >= 32 ? ~0u : (1u << lanes) - 1;
    if (((mask | exited) & all) == all) {
        __cc_me->warp_full[w] = now;
        return;
    }
    if (!__cc_me->warp_pairs) {
        __cc_me->warp_pairs = (uint32_t(*)[32][32])calloc(32, sizeof *__cc_me->warp_pairs);
        if (!__cc_me->warp_pairs) return;  // (no memory: such lanes stay unordered)
    }
    for (int a = 0; a < 32; a++)
        if (mask >> a & 1)
            for (int b = 0; b < 32; b++)
                if (mask >> b & 1) __cc_me->warp_pairs[w][a][b] = now;
}

// Another thread that read this byte in this barrier interval, unordered with thread `me` (a lane
// of me's warp that read it before a warp-level call is ordered), or -1: a write by me now is a
// hazard. The last two readers are kept; readers of other warps than these are known only as such.
// (A read that its thread handed over, fencing and releasing after it, to this thread, which acquired
// after that, is ordered too: the reads of a lock's holders, __cc_shared_handed_over.)
static inline int __cc_unordered_reader(const __cc_shadow_byte& s, unsigned me, uint32_t epoch, uint32_t* site) {
    if (s.r_epoch != epoch) return -1;
    bool first = s.reader != me && !__cc_shared_handed_over(s.reader, s.r_time);
    bool second = s.r_many && s.reader2 != me && !__cc_shared_handed_over(s.reader2, s.r2_time);
    if (first && !__cc_warp_ordered(me, s.reader, s.r_warp_epoch)) return *site = s.r_site, s.reader;
    if (second && !__cc_warp_ordered(me, s.reader2, s.r2_warp_epoch))
        return *site = s.r2_site, s.reader2;
    if (s.r_has3 && s.reader3 != me && !__cc_shared_handed_over(s.reader3, s.r3_time) &&
        !__cc_warp_ordered(me, s.reader3, s.r3_warp_epoch))
        return *site = s.r3_site, s.reader3;
    if (s.r_warps == -1 && (first || second))  // readers of two warps: one is not of me's warp (named here by a reader kept)
        return first ? (*site = s.r_site, s.reader) : (*site = s.r2_site, s.reader2);
    return -1;
}

// initcheck, deferred: a read of shared memory that no thread has written yet is remembered, not
// reported at once. If another thread writes the element before the next barrier, the reader
// simply ran first: the race that is reported then says where the missing __syncthreads() goes.
// If none does, it is reported at the barrier or at the block's end, or before any other fault
// the garbage it read may have caused.
struct __cc_pending_read {
    const __cc_shared_region* region;
    size_t offset, size;
    uint32_t site;
    int kind;
    unsigned tid;
    unsigned copier;      // a copy of an unwritten element was read: the thread that copied it,
    uint32_t copy_site;   // and where (0: none)
    int fill;             // (the copy was of an unset local variable: 2)
};
__CC_STATE __cc_pending_read __cc_pending;
// `s[i] = t[j];` copies the bytes of t[j] without using them, as a GPU would whether or not a
// thread wrote t[j]: a read of an unwritten element there is remembered here, and the store that
// follows marks s[i] as holding no value either (or, a store into memory that is not shared, makes
// it a read to report). PMPP's coarsened 3-D stencil shifts its planes so, halo corners included.
__CC_STATE __cc_pending_read __cc_copy;  // (set: __cc_copy_set)

// A copy of an unwritten element (__cc_copy) whose value was used after all (stored outside shared memory,
// converted, ...): it becomes the pending read to report, unless one is pending already.
static inline void __cc_copy_was_used() {
    if (__cc_copy_set && !__cc_pending_set) __cc_pending = __cc_copy, __cc_pending_set = true;
}

// (The time limit too, after an atomic on shared memory that no thread had written: a lock word never
// set to 0, whose atomicCAS(&lock, 0, 1) then never succeeds.)
static inline bool __cc_pending_first(int kind) {
    if (kind == __CC_TIMEOUT) return __cc_pending.kind == __CC_ATOMIC || __cc_garbage_used;
    // (a global race after it too: the unwritten value read can be its cause, a rank sort's garbage key
    // that two threads then store at one place)
    return kind != __CC_UNINITIALIZED && kind != __CC_RACE &&
           kind != __CC_INTERRUPTED && kind != __CC_SIGNAL && kind != __CC_STACK_OVERFLOW && kind != __CC_NO_MEMORY &&
           kind != __CC_BAD_ARGUMENT;
}

__CC_RT void __cc_report_pending() {
    if (!__cc_pending_set) return;
    __cc_pending_set = false;
    const __cc_pending_read p = __cc_pending;
    threadIdx = {p.tid % blockDim.x, p.tid / blockDim.x % blockDim.y, p.tid / (blockDim.x * blockDim.y)};
    __cc_fault* f = __cc_fault_out;
    memset(f, 0, sizeof *f);
    // (a copy's bytes: the copier and the copy's line name where they came from)
    __cc_shared_fault(__CC_UNINITIALIZED, *p.region, p.offset, p.size, p.site, p.kind, p.copy_site ? p.copier : p.tid,
                      p.copy_site, p.copy_site ? p.fill : 0);
}

__CC_RT void __cc_note_shared(const __cc_shared_region& r, size_t offset, size_t size, int kind, uint32_t site,
                             bool copy = false, int copied_unwritten = 0, bool cas = false,
                             bool exchange = false) {
    unsigned me = __cc_tid();
    for (int k = __cc_async_count - 1; k >= 0; k--) {  // (the newest first) an access to what a copy still writes
        const char *lo = (const char*)r.base + offset, *hi = lo + size;
        if (lo < __cc_async[k].hi && __cc_async[k].lo < hi) {
            size_t at = (size_t)((lo > __cc_async[k].lo ? lo : __cc_async[k].lo) - (const char*)r.base);
            __cc_describe_shared(__cc_fault_out, r, at, size, site, kind == __CC_READ ? __CC_READ : __CC_WRITE,
                                 __cc_async[k].tid, __cc_async[k].site, __CC_WRITE);
            __cc_fault_out->mask = 11;  // (cpu.py: a copy not waited for)
            __cc_fail(__CC_RACE, 0);
        }
    }
    uint32_t epoch = __cc_epoch, wep = __cc_warp_epoch[(me / 32) & 31];
    // A whole struct element read into a local (`P v = s[j];`) with some of its bytes written: the
    // others are padding, or fields a GPU does not load unless they are used (nvcc copies a struct
    // field by field and drops the loads it does not need). That is no initcheck report; one with
    // none of its bytes written is. (A read of one field, or of a float4 over a float array, is
    // checked byte by byte.)
    bool partly_written = false;
    if (kind == __CC_READ && r.item > 1 && size == r.item && offset % r.item == 0)
        for (size_t b = offset; b < offset + size && b < r.bytes && !partly_written; b++)
            partly_written = r.shadow[b].w_epoch >= __cc_block_epoch && !r.shadow[b].w_copied_unwritten;
    for (size_t b = offset; b < offset + size && b < r.bytes; b++) {
        __cc_shadow_byte& s = r.shadow[b];
        bool written = s.w_epoch >= __cc_block_epoch && !s.w_copied_unwritten;
        if (!written && partly_written) {  // (let go: noted, for Python to see whether the results depend on it)
            if (!__cc_me->partial.length) __cc_note_partial(r, offset, size, site, b);  // (the first)
            written = true;
        }
        if (kind == __CC_TOUCH) {  // a struct member access: counts as written, never a hazard
            s.w_epoch = epoch, s.writer = (uint16_t)me, s.w_warp = wep, s.w_site = site, s.w_atomic = 2;
            s.w_copied_unwritten = 0;
            continue;
        }
        bool& kept = copy ? __cc_copy_set : __cc_pending_set;  // (a copy's read waits for its store)
        // (not in the reruns that let races go: a read that came before the write it races with is one, and its
        // value, shared memory's fill, is what the rerun shows)
        if ((kind == __CC_READ || (kind == __CC_ATOMIC && !exchange)) && !written && !kept && !__cc_shared_races_go()) {
            bool copied = s.w_epoch >= __cc_block_epoch;  // it holds a copy of an unwritten element
            // (a read of several elements, a float4 over a float array or a memcpy, names the first unwritten one)
            size_t unit = r.item ? r.item : size, at = b / unit != offset / unit ? b / unit * unit : offset;
            (copy ? __cc_copy : __cc_pending) = {&r, at, size - (at - offset), site, kind, me, copied ? s.writer : 0u,
                                                 copied ? s.w_site : 0u, copied ? s.w_copied_unwritten : 0};
            kept = true;
        }
        bool this_epoch = s.w_epoch == epoch;
        if (kind == __CC_ATOMIC) {
            // Atomics of different threads are no hazard to each other, but a plain store or load
            // by another thread in the same barrier interval is (`count = 0;` with no barrier
            // before the atomicAdds, or a read of the count with no barrier after them).
            if (s.pw_epoch == epoch && s.pw_writer != me && !__cc_warp_ordered(me, s.pw_writer, s.pw_warp) &&
                !__cc_shared_races_go())
                __cc_shared_fault(__CC_RACE, r, offset, size, site, __CC_ATOMIC, s.pw_writer, s.pw_site, __CC_WRITE);
            // A plain read beside an atomicCAS is a CAS loop's first guess (`old = *addr; do { assumed = old;
            // old = atomicCAS(addr, assumed, f(assumed)); } while (assumed != old);`, the Programming Guide's
            // atomicAdd for double, or a float max that stops early), which the CAS checks: no hazard, as in
            // global memory (__cc_note_global).
            uint32_t read_site = 0;
            int reader = cas ? -1 : __cc_unordered_reader(s, me, epoch, &read_site);
            if (reader >= 0 && !__cc_shared_races_go())
                __cc_shared_fault(__CC_RACE, r, offset, size, site, __CC_ATOMIC, (unsigned)reader, read_site, __CC_READ);
            if (this_epoch && s.w_atomic == 1 && s.writer != me) s.a_many = 1, s.a_other = s.writer;
            else if (!(this_epoch && s.w_atomic == 1)) s.a_many = 0;
            s.w_epoch = epoch, s.writer = (uint16_t)me, s.w_warp = wep, s.w_site = site, s.w_atomic = 1;
            s.w_cas = cas;
            s.w_copied_unwritten = 0;
            continue;
        }
        bool same = kind == __CC_WRITE_SAME;  // stores what is there: order cannot matter
        // The last writer, or (when it is this thread) another thread whose atomic came before.
        unsigned other = s.writer != me ? s.writer : (s.w_atomic == 1 && s.a_many ? s.a_other : me);
        bool write_race = !same && this_epoch && other != me && s.w_atomic != 2 &&
                          !(kind == __CC_READ && s.w_atomic == 1 && s.w_cas) &&
                          !__cc_warp_ordered(me, s.writer, s.w_warp) &&
                          !(other == s.writer && !s.w_atomic && __cc_shared_handed_over(other, s.w_time));
        if (write_race && !__cc_shared_races_go())
            __cc_shared_fault(__CC_RACE, r, offset, size, site, kind, other, s.w_site,
                              s.w_atomic ? __CC_ATOMIC : __CC_WRITE);
        if (kind == __CC_WRITE || same) {
            uint32_t read_site = 0;
            int reader = same || __cc_shared_races_go() ? -1 : __cc_unordered_reader(s, me, epoch, &read_site);
            if (reader >= 0) {
                __cc_pending_set = false;
                if (s.r_unwritten) __cc_fault_out->mask = 1;  // the reader ran before any thread wrote it
                __cc_shared_fault(__CC_RACE, r, offset, size, site, kind, (unsigned)reader, read_site, __CC_READ);
            }
            s.w_epoch = epoch, s.writer = (uint16_t)me, s.w_warp = wep, s.w_site = site, s.w_atomic = 0;
            s.w_copied_unwritten = copied_unwritten;
            s.w_time = __cc_sync_clock;  // (a fence after this write takes a later time)
            s.pw_epoch = epoch, s.pw_writer = (uint16_t)me, s.pw_warp = wep, s.pw_site = site;
        } else {
            if (s.r_epoch != epoch) {
                s.r_epoch = epoch, s.reader = (uint16_t)me, s.r_many = 0, s.r_warps = (int16_t)(me / 32);
                s.r_unwritten = !written, s.r_has3 = 0;
            } else if (s.reader != me) {
                if (s.reader / 32 != me / 32)
                    s.reader3 = s.reader, s.r3_warp_epoch = s.r_warp_epoch, s.r3_site = s.r_site, s.r3_time = s.r_time,
                    s.r_has3 = 1;
                s.reader2 = s.reader, s.r2_warp_epoch = s.r_warp_epoch, s.r2_site = s.r_site, s.r2_time = s.r_time;
                s.reader = (uint16_t)me, s.r_many = 1;
                if (s.r_warps != (int16_t)(me / 32)) s.r_warps = -1;
            }
            s.r_warp_epoch = wep, s.r_site = site, s.r_time = __cc_sync_clock;
        }
    }
}

// Another thread's access `n` may happen before or after this thread's, on a GPU: it is of this
// launch, and no __syncthreads() (its block's epoch), __syncwarp() or warp-level call (lanes of one
// warp), nor a handover through __threadfence() and an atomic lies between.
static inline bool __cc_unordered(const __cc_global_note& n, unsigned me) {
    if (n.launch != __cc_current_launch) return false;
    if (n.block == __cc_block_linear) {
        if (n.tid == me || n.epoch != __cc_epoch || __cc_warp_ordered(me, n.tid, n.warp)) return false;
    }
    return !__cc_handed_over(n);
}
static inline __cc_global_note* __cc_notes_of(__cc_allocation& a, int k) {
    if (!a.notes[k] && a.shadow_count) {
        __cc_enter_unsafe();
        a.notes[k] = (__cc_global_note*)calloc(a.shadow_count, sizeof(__cc_global_note));
        __cc_leave_unsafe();
    }
    return a.notes[k];
}
// An access to part of an element (`((unsigned char*)x)[i]` over a float array): the notes become
// finer, one per `unit` bytes, each a copy of its element's, so that threads writing different
// bytes of one float are no race. (Sanitized launches run on one worker: no one else reads them.)
static inline void __cc_refine_notes(__cc_allocation& a, size_t offset, size_t size) {
    size_t unit = std::gcd(a.item, std::gcd(size, offset % a.item));
    if (unit >= a.item) return;
    size_t factor = a.item / unit, count = a.shadow_count * factor;
    __cc_enter_unsafe();
    bool ok = true;
    __cc_global_note* finer[__CC_NOTE_KINDS] = {};
    for (int k = 0; k < __CC_NOTE_KINDS && ok; k++)
        if (a.notes[k]) {
            finer[k] = (__cc_global_note*)calloc(count, sizeof(__cc_global_note));
            ok = finer[k] != nullptr;
            for (size_t j = 0; ok && j < count; j++) finer[k][j] = a.notes[k][j / factor];
        }
    if (ok)
        for (int k = 0; k < __CC_NOTE_KINDS; k++) {
            free(a.notes[k]);
            a.notes[k] = finer[k];
        }
    else
        for (int k = 0; k < __CC_NOTE_KINDS; k++) free(finer[k]);
    __cc_leave_unsafe();
    if (!ok) return;  // (out of memory: the coarser notes stay)
    a.item = unit, a.shadow_count = count;
    a.item_shift = (unit & (unit - 1)) ? -1 : __builtin_ctzll(unit);
}
// The unordered access of another thread among slots `k` and `k2` (the last access of a kind, and
// the one before it by another thread), or null.
static inline const __cc_global_note* __cc_unordered_in(const __cc_allocation& a, int k, int k2, size_t word,
                                                        unsigned me, bool skip_same = false) {
    const int slots[2] = {k, k2};
    for (int slot : slots) {
        if (slot < 0 || !a.notes[slot]) continue;
        const __cc_global_note& n = a.notes[slot][word];
        if (__cc_unordered(n, me) && !(skip_same && n.same)) return &n;
    }
    return nullptr;
}
static inline void __cc_keep_note(__cc_allocation& a, int k, int k2, size_t word, unsigned me, uint32_t site,
                                  bool same = false, bool volatile_read = false, bool volatile_write = false,
                                  bool volatile_store = false, bool cas = false, bool block_scope = false) {
    __cc_global_note* notes = __cc_notes_of(a, k);
    if (!notes) return;
    __cc_global_note& n = notes[word];
    // The first write of the value in this launch stays (it set the value, or the element held it already:
    // a rerun of a launch on its own output)
    if (same && n.launch == __cc_current_launch) {
        if (k == __CC_NOTE_WRITE)  // (its own later read sees its own store: that value, whichever came first)
            n.same_tid = (uint16_t)me, n.same_block = (uint16_t)__cc_block_linear;
        if (k == __CC_NOTE_WRITE && n.site == site && n.block != __cc_block_linear && !n.repeated) {
            n.repeated = 1;  // (elements are counted, not stores: `*found = 1` by every block is one)
            if (!a.repeated++) {
                a.repeated_word = word, a.repeated_site = site, a.repeated_tid = (uint16_t)me;
                a.repeated_block = __cc_block_linear, a.repeated_other_block = n.block;
            }
        } else if (k == __CC_NOTE_WRITE && n.site == site && n.block == __cc_block_linear && n.tid != me) {
            // (a thread that repeats another's work repeats it store after store; threads that mark the neighbours
            // they share, `visited[v] = 1` in a search, come after one thread here and another there)
            if (!a.redo_after) a.redo_after = (__cc_redo_after*)calloc(1024, sizeof(__cc_redo_after));
            if (a.redo_after) {
                __cc_redo_after& last = a.redo_after[me & 1023];
                bool fresh = last.launch != __cc_current_launch || last.block != __cc_block_linear;
                a.redo_stores++;
                a.redo_alike += fresh || last.tid == n.tid;
                last = {__cc_current_launch, __cc_block_linear, n.tid};
            }
            if (n.redone) return;
            n.redone = 1;
            if (a.redone_block_now != __cc_block_linear || !a.redone) a.redone_block_now = __cc_block_linear, a.redone_here = 0;
            if (++a.redone_here > a.redone_most) a.redone_most = a.redone_here;
            if (!a.redone++) {
                a.redone_word = word, a.redone_site = site, a.redone_tid = (uint16_t)me;
                a.redone_other_tid = n.tid, a.redone_block = __cc_block_linear;
            }
        }
        return;
    }
    if (k2 >= 0 && n.launch == __cc_current_launch && !(n.tid == me && n.block == __cc_block_linear)) {
        __cc_global_note* before = __cc_notes_of(a, k2);  // another thread's: kept as the one before
        if (before) before[word] = n;
    }
    n.launch = __cc_current_launch, n.block = __cc_block_linear, n.epoch = __cc_epoch, n.site = site;
    n.tid = (uint16_t)me, n.same = same, n.repeated = 0, n.redone = 0, n.volatile_read = volatile_read;
    n.same_tid = 0xffff, n.same_block = 0;
    // (before the store, or the atomic: the element holds the old bytes)
    n.has_old = (k == __CC_NOTE_WRITE || k == __CC_NOTE_ATOMIC) && a.item <= 8;
    if (n.has_old) memcpy(&n.old, a.base + word * a.item, a.item);
    n.volatile_write = volatile_write, n.volatile_store = volatile_store, n.cas = cas, n.block_scope = block_scope;
    n.warp = __cc_warp_epoch[(me / 32) & 31];
    n.time = __cc_sync_launch == __cc_current_launch ? ++__cc_sync_clock : 0;  // 0: before any fence
}

// The writer `w` had read the element at `site` (this read's spot) first: a read-modify-write done
// by hand (`int slot = *count; ...; *count = slot + 1;`), not a neighbour's element.
static inline bool __cc_read_back_by(const __cc_allocation& a, size_t word, const __cc_global_note& w, uint32_t site) {
    for (int slot : {__CC_NOTE_READ, __CC_NOTE_READ2}) {
        const __cc_global_note* r = a.notes[slot] ? &a.notes[slot][word] : nullptr;
        if (r && r->launch == __cc_current_launch && r->block == w.block && r->tid == w.tid && r->site == site)
            return true;
    }
    return false;
}

// Thread (block, tid) updated the element atomically (not a CAS loop's atomicCAS) in this launch
// before `time` (0: before now), or another thread of its block did before a barrier that came
// before `epoch`: a plain read of it after that re-reads what other blocks may still update
// (`atomicAdd(count, 1); if (*count == gridDim.x)`: two blocks can both see the last value, or
// none), where the value the atomic returned was the thread's own.
static inline bool __cc_atomic_before(const __cc_allocation& a, size_t word, uint32_t block, uint16_t tid,
                                      uint32_t time, uint32_t epoch) {
    for (int slot : {__CC_NOTE_ATOMIC, __CC_NOTE_ATOMIC2}) {
        const __cc_global_note* n = a.notes[slot] ? &a.notes[slot][word] : nullptr;
        if (!n || n->launch != __cc_current_launch || n->block != block || n->cas || n->volatile_read ||
            n->volatile_write || n->volatile_store)
            continue;
        if (n->tid == tid ? !time || (n->time && n->time < time) : n->epoch < epoch)
            return true;
    }
    return false;
}

// Mode 3 of __cc_race_rerun: this read sees the element's value from before the write or atomic of note `n`
// (put back by __cc_put_back_stale before the next access).
static inline void __cc_read_stale(__cc_allocation& a, size_t word, const __cc_global_note& n) {
    if (!n.has_old || a.item > 8 || __cc_stale_count >= (int)(sizeof __cc_stale / sizeof __cc_stale[0])) return;
    __cc_stale_element& e = __cc_stale[__cc_stale_count++];
    e.address = a.base + word * a.item, e.size = a.item;
    memcpy(&e.now, e.address, e.size);
    memcpy(e.address, &n.old, e.size);
}
// Whether thread `me` of this block stored the value of write note `n` again after it (its read sees its own store).
static inline bool __cc_restored_by(const __cc_global_note& n, unsigned me) {
    return n.same_tid == (uint16_t)me && n.same_block == (uint16_t)__cc_block_linear;
}

// Global memory's hazards between threads of one launch (compute-sanitizer's racecheck looks at
// shared memory only): a plain write and another thread's access to the same element, unordered.
// Two plain writes: one is lost. A write and a read: the reader may see either value (an in-place
// stencil or scan, a shift). A write and an atomic: the atomics before the write are lost (an
// accumulator zeroed in the kernel). Atomics among themselves and reads among themselves are no
// hazards, nor is a store of the value the element holds already, except against atomics (which
// it may undo). A plain read of what other threads update atomically is one only where the results
// depend on it (a total read before it is complete), which only running the launch again tells
// (__cc_race_rerun 4), and never beside atomicCAS: the CAS loop (read, then compare-and-swap until no
// other thread came between) is made of such reads. A plain read and a plain write are one only
// where their order changes the results too (not a breadth-first search's levels).
// `said`: what a message calls the access when it is not `kind` (the read of `x += v`, a volatile
// read noted as an atomic), else 0.
// `relaxed`: 1 a volatile read, 2 a volatile write, 3 the write and 4 the read of a volatile `x += v`
// (kind is then __CC_ATOMIC). Between blocks they are relaxed atomics; between threads of one block,
// unordered by a barrier or __syncwarp, a volatile update (`v[tid] += v[tid + 16]`) and another
// thread's volatile read are the race they are in shared memory (the warp-synchronous reduction of
// old samples, on a global array). A plain volatile store (`*found = 1`) and the reads of other
// threads (`if (*found) return;`) are no race: they are how such a flag works.
// `observed`: for a read, when this thread last did a global atomic or volatile read before it (0:
// never, or no handover is tracked in this launch).
__CC_RT void __cc_note_global(__cc_allocation& a, size_t offset, size_t size, int kind, uint32_t site, int said,
                             int relaxed = 0, uint32_t observed = 0, bool cas = false, bool block_scope = false) {
    if (kind == __CC_TOUCH) return;
    if (a.read_only && kind != __CC_READ) {
        __cc_fault* f = __cc_fault_out;
        f->code_offset = site;
        f->base = (uint64_t)(uintptr_t)a.base;
        f->index = (int64_t)(offset / size);
        f->element_bytes = (int64_t)size;
        f->op = kind;
        __cc_fail(__CC_READ_ONLY, 0);
    }
    if (!a.shadow_count) return;
    if (size < a.item || (a.item_shift >= 0 ? offset & (a.item - 1) : offset % a.item)) __cc_refine_notes(a, offset, size);
    bool same = kind == __CC_WRITE_SAME;
    unsigned me = __cc_tid();
    size_t first = a.item_shift >= 0 ? offset >> a.item_shift : offset / a.item;
    size_t last = a.item_shift >= 0 ? (offset + size + a.item - 1) >> a.item_shift : (offset + size + a.item - 1) / a.item;
    for (size_t word = first; word < last && word < a.shadow_count; word++) {  // a float4 covers four floats
        const __cc_global_note* other = nullptr;
        int other_kind = __CC_WRITE;
        bool scoped = false;  // an atomic of block scope (atomicAdd_block) meets another block's atomic
        if (kind == __CC_ATOMIC && !relaxed)
            for (int slot : {__CC_NOTE_ATOMIC, __CC_NOTE_ATOMIC2}) {
                const __cc_global_note* n = a.notes[slot] ? &a.notes[slot][word] : nullptr;
                if (n && n->launch == __cc_current_launch && n->block != __cc_block_linear && (block_scope || n->block_scope)
                    && !n->volatile_read && !n->volatile_write && !n->volatile_store) {
                    other = n, other_kind = __CC_ATOMIC, scoped = true;
                    break;
                }
            }
        // Another thread's atomic on the element, unordered with this store. (After this thread's own atomic,
        // the newest on the element, the others' atomics came before it (an element's atomics happen in one
        // order) and so before this write: the last block of NVIDIA's threadFenceReduction resets its ticket so.)
        auto atomic_before = [&]() {
            const __cc_global_note* last = a.notes[__CC_NOTE_ATOMIC] ? &a.notes[__CC_NOTE_ATOMIC][word] : nullptr;
            bool mine = last && last->launch == __cc_current_launch && last->block == __cc_block_linear && last->tid == me;
            return __cc_unordered_in(a, __CC_NOTE_ATOMIC, mine ? -1 : __CC_NOTE_ATOMIC2, word, me);
        };
        // (a plain store is named with another thread's atomic before its plain store: `counter = 0;` in every
        // thread, then atomicAdd(&counter, 1), is a reset racing the updates, not two stores of 0)
        if (!other && kind == __CC_WRITE && (other = atomic_before())) other_kind = __CC_ATOMIC;
        if (!same && !other) other = __cc_unordered_in(a, __CC_NOTE_WRITE, -1, word, me, kind == __CC_READ);
        if (other && kind == __CC_READ && __cc_restored_by(*other, me))
            other = nullptr;  // this thread stored the same value there after that write: it reads its own store's value
        if (!other && same && (other = atomic_before())) other_kind = __CC_ATOMIC;
        if (!other && kind == __CC_WRITE)
            other = __cc_unordered_in(a, __CC_NOTE_READ, __CC_NOTE_READ2, word, me), other_kind = __CC_READ;
        int op = said ? said : same ? __CC_WRITE : kind;
        bool update = relaxed == 3, volatile_pair = false;
        bool reading = relaxed == 1 || relaxed == 4;
        if (!other && (reading || update))
            for (int slot : {__CC_NOTE_ATOMIC, __CC_NOTE_ATOMIC2}) {
                const __cc_global_note* n = a.notes[slot] ? &a.notes[slot][word] : nullptr;
                if (n && n->block == __cc_block_linear && (reading ? n->volatile_write : n->volatile_read)
                    && __cc_unordered(*n, me)) {
                    other = n, other_kind = reading ? __CC_WRITE : __CC_READ;
                    // both threads updating the element (`count += 1` in each): a lost update, said as
                    // plain ones are; else a warp-synchronous step (cpu.py's mask 2)
                    op = relaxed == 4 ? __CC_READ_UPDATE : reading ? __CC_READ : __CC_WRITE;
                    volatile_pair = relaxed != 4;
                    break;
                }
            }
        bool unfenced = false, missed = false;  // missed: fenced and released, but not what this thread waited for
        if (!other && observed && (kind == __CC_READ || reading))
            // A volatile store handed over without a fence: thread Y of another block stored the element,
            // then published something (an atomic, a volatile store: a ticket, a flag), and this thread
            // read the element after it observed something (an atomic, a volatile read) after that. It
            // counts on the handover, but with no __threadfence() between Y's store and what Y published
            // next a GPU may make them visible in the other order (the last-block sum of the Programming
            // Guide without its fence). A flag's waiting loop reads it `polled`: never such a read. (An
            // element that is its own news, a status and a value in one word, is published by its store:
            // nothing Y published after it is needed to read it, and Y need not publish anything after it.)
            for (int slot : {__CC_NOTE_ATOMIC, __CC_NOTE_ATOMIC2}) {
                const __cc_global_note* n = a.notes[slot] ? &a.notes[slot][word] : nullptr;
                if (!n || n->launch != __cc_current_launch || !n->volatile_store || !n->time ||
                    n->block == __cc_block_linear || __cc_handed_over(*n))
                    continue;
                if (__cc_published_to(*n, observed)) {
                    other = n, other_kind = __CC_WRITE, op = __CC_READ, unfenced = true;
                    missed = __cc_fenced_and_released(*n);
                    break;
                }
            }
        if (!unfenced && kind == __CC_READ && !said && observed) {
            // A plain store handed over without a fence, the same way (the chained scan's running sum
            // stored, then its flag set with an atomic, and no __threadfence() between). (A store made
            // before the launch's first atomic, when no times were kept yet, has time 0.) A store of the
            // value the element held already counts too (a second launch on the same output, the partial
            // sums of the last one still there): the lookup above skips it, as it cannot change what this
            // read sees now, but the missing fence is the bug all the same, and the next data shows it.
            const __cc_global_note* w = other ? (other_kind == __CC_WRITE ? other : nullptr)
                                              : relaxed ? nullptr : __cc_unordered_in(a, __CC_NOTE_WRITE, -1, word, me);
            if (w && w != other && __cc_restored_by(*w, me)) w = nullptr;  // (it reads its own store's value)
            if (w && w->block != __cc_block_linear && !__cc_handed_over(*w) && __cc_published_to(*w, observed))
                other = w, other_kind = __CC_WRITE, unfenced = true, missed = __cc_fenced_and_released(*w);
        }
        if (!other && kind == __CC_ATOMIC && !relaxed && !cas && __cc_race_rerun == 4)  // (the same, the other way round)
            other = __cc_unordered_in(a, __CC_NOTE_READ, __CC_NOTE_READ2, word, me), other_kind = __CC_READ;
        if (!other && kind == __CC_READ && !said && !relaxed && __cc_race_rerun == 4) {
            // A plain read of an element that other threads update atomically in this launch, unordered
            // with it: it may see the value before some of the updates (a total read before every block
            // has added to it). Whether that changes the results, only running the launch again tells
            // (cpu.py _race_changes_results), so this stops a first run only where Python can run it
            // again (mode 4). Not beside atomicCAS: a CAS loop reads so, and its CAS checks what it read
            // (and its float sums would differ from run to run by more than their rounding, near 0).
            const __cc_global_note* n = __cc_unordered_in(a, __CC_NOTE_ATOMIC, __CC_NOTE_ATOMIC2, word, me);
            if (n && !n->volatile_read && !n->cas) other = n, other_kind = __CC_ATOMIC;
        }
        bool same_value = false;
        if (!other && !said && !relaxed && __cc_race_rerun == 4 && !__cc_same_values_go && (kind == __CC_READ || same)) {
            // A plain read and another thread's store of the value the element held already, unordered (an
            // in-place blur of a straight line, which leaves it as it is): the order changes nothing with
            // this launch's data, but it may with other data. This stops a first run only where Python can
            // run it again (mode 4): cpu.py _same_value_race runs it with other values there, in both orders.
            const __cc_global_note* n = kind == __CC_READ ? __cc_unordered_in(a, __CC_NOTE_WRITE, -1, word, me)
                                                          : __cc_unordered_in(a, __CC_NOTE_READ, __CC_NOTE_READ2, word, me);
            if (n && kind == __CC_READ && __cc_restored_by(*n, me)) n = nullptr;  // (as above: its own store's value)
            if (n && (kind != __CC_READ || n->same) && !n->volatile_read && !n->volatile_store)
                other = n, other_kind = kind == __CC_READ ? __CC_WRITE : __CC_READ, same_value = true;
        }
        if (!other && kind == __CC_READ && !said && !relaxed && __cc_race_rerun == 3) {
            // Mode 3 for a plain read of an element another thread updates atomically, unordered with it (the
            // race mode 4 stops at): the read sees the value from before that update, as on a GPU it may (a
            // slot read apart from the atomicAdd that takes it: two threads get one slot, and one stays empty).
            const __cc_global_note* n = __cc_unordered_in(a, __CC_NOTE_ATOMIC, __CC_NOTE_ATOMIC2, word, me);
            if (n && !n->volatile_read && !n->volatile_write && !n->volatile_store && !n->cas) __cc_read_stale(a, word, *n);
        }
        if (other && __cc_race_rerun >= 1 && __cc_race_rerun <= 3 && !said && !relaxed && !unfenced &&
            (kind == __CC_READ || kind == __CC_WRITE) && other_kind != __CC_ATOMIC && other_kind != kind)
        {
            // a plain read and a plain write: does their order change the results?
            if (__cc_race_rerun == 3 && kind == __CC_READ) __cc_read_stale(a, word, *other);  // the old value
            other = nullptr;
        }
        if (other) {
            if (other_kind == __CC_ATOMIC && other->volatile_read) other_kind = __CC_READ;
            __cc_fault* f = __cc_fault_out;
            f->code_offset = site;
            f->address = other->site;
            f->base = (uint64_t)(uintptr_t)a.base;
            f->index = (int64_t)(word * a.item / size);
            f->element_bytes = (int64_t)size;
            if (size != a.item) f->index = (int64_t)word, f->element_bytes = (int64_t)a.item;
            f->op = op;
            f->other_op = other_kind;
            f->mask = volatile_pair ? 2 : unfenced ? 3 : 0;  // 2: a volatile update and a volatile read of one
                                                             // block, 3: a volatile store handed over unfenced (cpu.py)
            if (scoped) f->mask = 5 + !block_scope;  // 5: this atomic is of block scope, 6: the other one was
            if (missed) f->mask = 7;  // 7: a store fenced and handed over, but this thread waited for something else
            if (kind == __CC_READ && other_kind == __CC_WRITE && !unfenced && __cc_read_back_by(a, word, *other, site))
                f->mask = 1;
            if ((kind == __CC_ATOMIC && other_kind == __CC_READ && !relaxed && other->block != __cc_block_linear &&
                 __cc_atomic_before(a, word, other->block, other->tid, other->time, other->epoch)) ||
                (kind == __CC_READ && other_kind == __CC_ATOMIC && !said && !relaxed && other->block != __cc_block_linear &&
                 __cc_atomic_before(a, word, __cc_block_linear, (uint16_t)me, 0, __cc_epoch)))
                f->mask = 4;  // a value re-read after the reader's own atomic (cpu.py: the ticket's fix)
            if (same_value) f->mask = 8;  // a read beside a store of the value the element held (cpu.py)
            __cc_other_thread(other->tid, other->block);
            __cc_fail(__CC_GLOBAL_RACE, 0);
        }
        if (kind == __CC_READ) __cc_keep_note(a, __CC_NOTE_READ, __CC_NOTE_READ2, word, me, site);
        else if (kind == __CC_ATOMIC)
            __cc_keep_note(a, __CC_NOTE_ATOMIC, __CC_NOTE_ATOMIC2, word, me, site, false, said == __CC_READ, update,
                           relaxed == 2 || relaxed == 3, cas, block_scope);
        else __cc_keep_note(a, __CC_NOTE_WRITE, -1, word, me, site, same);
    }
}

// ---------------------------------------------------------------------------------------
// The access trace (kernel.profile; compiled in with -D__CC_TRACE, on top of the sanitizer).
// One record per access every thread makes to shared memory or an argument array, and one per
// thread at every `if` (source.py wraps its condition in __cc_branch). Python reads the records
// (course/cuda/profile.py) and models what a GPU's memory system would do with them.
// ---------------------------------------------------------------------------------------

#ifdef __CC_TRACE
static const bool __cc_tracing = true;
#else
static const bool __cc_tracing = false;
#endif

struct __cc_trace_record {      // twin of _TraceRecord in cpu.py
    uint64_t address;           // the byte's address (shared: its offset in the region)
    uint32_t site;              // code offset of the access (→ source line)
    uint32_t block;             // linear block index
    uint16_t thread;            // linear thread index in the block
    uint8_t kind;               // __CC_READ / __CC_WRITE / __CC_ATOMIC, or 8 | taken for a branch
    uint8_t size;               // bytes (at most 255)
    int16_t region;             // shared region index, or -1 for global memory
    int16_t pad;
};
__CC_STATE __cc_trace_record* __cc_trace;
__CC_STATE size_t __cc_trace_length, __cc_trace_capacity, __cc_trace_limit;
__CC_STATE int __cc_trace_full;     // more records than the limit: the profile says so

__CC_RT void __cc_record(uint64_t address, uint32_t site, int kind, size_t size, int region) {
    if (__cc_trace_length >= __cc_trace_limit) { __cc_trace_full = 1; return; }
    if (__cc_trace_length == __cc_trace_capacity) {
        size_t capacity = __cc_trace_capacity ? 2 * __cc_trace_capacity : (1 << 16);
        if (capacity > __cc_trace_limit) capacity = __cc_trace_limit;
        __cc_enter_unsafe();
        void* grown = realloc(__cc_trace, capacity * sizeof(__cc_trace_record));
        __cc_leave_unsafe();
        if (!grown) { __cc_trace_full = 1; return; }
        __cc_trace = (__cc_trace_record*)grown, __cc_trace_capacity = capacity;
    }
    __cc_trace_record& r = __cc_trace[__cc_trace_length++];
    r.address = address, r.site = site, r.block = __cc_block_linear, r.thread = (uint16_t)__cc_tid();
    r.kind = (uint8_t)kind, r.size = (uint8_t)(size > 255 ? 255 : size), r.region = (int16_t)region, r.pad = 0;
}

// `if (c)` of a traced build: the outcome per thread, so the profile sees divergent warps.
template <class C>
__attribute__((always_inline)) static inline bool __cc_branch(const C& condition);

// The records of the last launch (Python copies them), the shared regions' layout, and the limit.
__CC_EXPORT __CC_ONCE const __cc_trace_record* __cc_take_trace(size_t* length, int* full) {
    *length = __cc_trace_length, *full = __cc_trace_full;
    __cc_trace_length = 0, __cc_trace_full = 0;
    return __cc_trace;
}
__CC_EXPORT __CC_ONCE void __cc_trace_release() {  // after Python's copy: a big launch's records are not kept
    free(__cc_trace);
    __cc_trace = nullptr, __cc_trace_capacity = 0, __cc_trace_length = 0;
}
__CC_EXPORT __CC_ONCE void __cc_trace_setup(size_t limit) {
    __cc_trace_length = 0, __cc_trace_full = 0, __cc_trace_limit = limit;
}
// Region i: its base, size in bytes, row size (2-D arrays), name, and whether it is extern __shared__.
__CC_EXPORT __CC_ONCE int __cc_shared_region_info(int i, uint64_t* base, uint64_t* bytes, const char** name, int* dynamic) {
    if (i < 0 || i >= __cc_shared_region_count) return 0;
    const __cc_shared_region& r = __cc_shared_regions[i];
    *base = (uint64_t)(uintptr_t)r.base, *bytes = r.bytes, *name = r.name ? r.name : "", *dynamic = r.dynamic;
    return 1;
}

// The one instrumentation point: every access to shared or global memory in a sanitized build.
__CC_STATE volatile uint32_t __cc_last_site;  // where the last noted access was: names a timeout's line

__CC_RT void __cc_release_locals(__cc_worker* w) {
    for (int i = 0; i < w->locals_threads * __CC_LOCAL_REGIONS; i++) free(w->locals[i].written);
    free(w->locals);
    free(w->locals_next);
    w->locals = nullptr, w->locals_next = nullptr, w->locals_threads = 0;
}

// The local arrays' sizes, noted as the module loads (each size once): a fiber's stack makes room
// for them (see __cc_fiber_stack_bytes), so that a kernel with barriers may keep a 256 KiB local
// array, as a GPU thread may.
__CC_STATE size_t __cc_local_array_bytes;
__CC_RT bool __cc_note_local_size(size_t bytes) { return __cc_local_array_bytes += bytes, true; }
template <size_t Bytes>
struct __cc_local_size { static const bool noted; };
template <size_t Bytes>
const bool __cc_local_size<Bytes>::noted = __cc_note_local_size(Bytes);

// A local array larger than a GPU thread's local memory (512 KiB) does not compile with nvcc.
template <class E, size_t N>
static inline void __cc_local_fits(const char* name, int line) {
    if constexpr (sizeof(E) * N <= 512 * 1024) {
        (void)__cc_local_size<sizeof(E) * N>::noted;  // (no code at all: the size is noted as the module loads)
    } else {
        __cc_fault_out->length = (int64_t)(sizeof(E) * N);
        snprintf(__cc_fault_out->text, sizeof __cc_fault_out->text, "%s", name);
        __cc_fail(__CC_LOCAL_TOO_BIG, line);
    }
}

// Local arrays (sanitizer): __cc_fresh_local registers one as its declaration runs; a read of an
// element the thread never wrote, whose bytes still hold the pattern, is initcheck's fault for
// local memory. (A write the sanitizer does not see, through `&a[i]` handed to a function, say,
// changes the bytes: no report then.)
template <class E, size_t N>
static inline E (&__cc_fresh_local(E (&a)[N], const char* name, int line = __builtin_LINE()))[N] {
    typedef typename std::remove_all_extents<E>::type Item;
    __cc_local_fits<E, N>(name, line);  // before the pattern is written into it
    if constexpr (std::is_trivially_default_constructible<Item>::value) {  // (uchar and half elements too)
        if (__cc_sanitizing) {
            __cc_worker* w = __cc_me;
            char* base = (char*)a;
            for (size_t k = 0; k < sizeof a; k++) base[k] = (char)__cc_local_pattern(k);
            unsigned me = __cc_tid(), threads = blockDim.x * blockDim.y * blockDim.z;
            __cc_enter_unsafe();
            if (w->locals_threads < (int)threads) {  // room for every thread of the block
                __cc_release_locals(w);
                w->locals = (__cc_local_region*)calloc((size_t)threads * __CC_LOCAL_REGIONS, sizeof(__cc_local_region));
                w->locals_next = (uint8_t*)calloc(threads, 1);
                w->locals_threads = w->locals && w->locals_next ? (int)threads : 0;
            }
            if (!w->locals_threads) {
                __cc_leave_unsafe();
                return a;
            }
            __cc_local_region& r = w->locals[me * __CC_LOCAL_REGIONS + w->locals_next[me]];
            w->locals_next[me] = (uint8_t)((w->locals_next[me] + 1) % __CC_LOCAL_REGIONS);
            size_t items = sizeof a / sizeof(Item);
            free(r.written);
            r.written = (uint8_t*)calloc(items ? items : 1, 1);
            __cc_leave_unsafe();
            r.base = r.written ? base : nullptr;
            r.bytes = sizeof a, r.item = sizeof(Item), r.name = name;
            r.block_epoch = __cc_block_epoch;
        }
    }
    return a;
}
__CC_RT void __cc_note_local(const char* p, size_t size, int kind, uint32_t site) {
    __cc_worker* w = __cc_me;
    uint32_t me = __cc_tid();
    if (w->current && w->stack_pool && w->fiber_count && p >= w->stack_pool && p < w->stack_pool + w->stack_pool_bytes) {
        // A fiber's stack is its thread's local memory: another thread's is out of reach on a GPU (a pointer
        // to it, handed over in shared memory, finds the reader's own local memory there)
        size_t owner = (size_t)(p - w->stack_pool) / (w->stack_pool_bytes / (size_t)w->fiber_count);
        if (owner != me && owner < (size_t)w->round_threads) {
            __cc_fault* f = __cc_fault_out;
            f->code_offset = site;
            f->op = kind == __CC_READ ? 1 : 2;
            __cc_other_thread((unsigned)owner, __cc_block_linear);
            __cc_fail(__CC_OTHER_LOCAL, 0);
        }
    }
    if ((int)me >= w->locals_threads) return;
    __cc_local_region* mine = w->locals + me * __CC_LOCAL_REGIONS;
    for (int n = 1; n <= __CC_LOCAL_REGIONS; n++) {  // newest first: a region reuses an old one's stack
        __cc_local_region& r = mine[(w->locals_next[me] - n + __CC_LOCAL_REGIONS) % __CC_LOCAL_REGIONS];
        if (!r.base || r.block_epoch != __cc_block_epoch || p < r.base || p >= r.base + r.bytes) continue;
        size_t offset = (size_t)(p - r.base), first = offset / r.item;
        size_t last = (offset + (size ? size : 1) - 1) / r.item;
        if (last >= r.bytes / r.item) last = r.bytes / r.item - 1;
        if (kind != __CC_READ) {
            for (size_t e = first; e <= last; e++) r.written[e] = 1;
            return;
        }
        for (size_t e = first; e <= last; e++) {
            if (r.written[e]) continue;
            bool pattern = true;
            for (size_t k = e * r.item; k < (e + 1) * r.item && pattern; k++)
                pattern = (uint8_t)r.base[k] == __cc_local_pattern(k);
            if (!pattern) continue;
            __cc_fault* f = __cc_fault_out;
            f->code_offset = site;
            f->index = (int64_t)e;
            f->length = (int64_t)(r.bytes / r.item);
            f->element_bytes = (int64_t)r.item;
            snprintf(f->text, sizeof f->text, "%s", r.name ? r.name : "");
            __cc_fail(__CC_UNINITIALIZED_LOCAL, 0);
        }
        return;
    }
}

__CC_RT void __cc_note_polled(const __cc_shared_region& r, size_t offset, size_t size, uint32_t site) {
    for (size_t b = offset; b < offset + size && b < r.bytes; b++)
        if (r.shadow[b].w_epoch < __cc_block_epoch && !__cc_pending_set)  // no thread has set the flag yet
            __cc_pending = {&r, offset, size, site, __CC_READ, __cc_tid()}, __cc_pending_set = true;
}

__CC_RT void __cc_note_at(const volatile void* address, size_t size, int kind, uint32_t site) {
    __cc_put_back_stale();  // (mode 3 of __cc_race_rerun: the last read has been made)
    __cc_last_site = site;
    const char* p = (const char*)address;
    bool relaxed = kind & __CC_VOLATILE, update = kind & __CC_UPDATE, copy = kind & __CC_COPY;
    bool cas = kind & __CC_CAS, exchange = (kind & __CC_EXCHANGE) && __cc_me->exchange_store;
    bool block_scope = false;
    if ((kind & ~(__CC_VOLATILE | __CC_CAS | __CC_EXCHANGE)) == __CC_ATOMIC)
        block_scope = __cc_me->block_scope_next, __cc_me->exchange_store = __cc_me->block_scope_next = false;
    kind &= ~(__CC_VOLATILE | __CC_UPDATE | __CC_COPY | __CC_CAS | __CC_EXCHANGE);
    // (a waiting loop's condition that reads a flag without volatile, `while (flag[0] == 0) { }`, warned
    // about at compile time: read as the flag's wait is meant, a volatile one)
    if (kind == __CC_READ && __cc_me->polling) relaxed = true;
    // The store of a copy whose bytes no thread wrote (see __cc_copy)
    int copied_unwritten = 0;
    if (__cc_copy_set && kind != __CC_READ && kind != __CC_READ_UPDATE && kind != __CC_TOUCH)
        copied_unwritten = 1, __cc_copy_set = false;
    if (__cc_fill_set && kind != __CC_READ && kind != __CC_READ_UPDATE && kind != __CC_TOUCH)
        copied_unwritten = 2, __cc_fill_set = false;
    int said = kind == __CC_READ_UPDATE ? __CC_READ_UPDATE : relaxed && kind == __CC_READ ? __CC_READ : 0;
    if (kind == __CC_READ_UPDATE) kind = __CC_READ;
    int recorded = kind == __CC_WRITE_SAME ? __CC_WRITE : kind;
    int region = __cc_shared_region_at(p);
    if (region >= 0) {
        __cc_shared_region& r = __cc_shared_regions[region];
        if (__cc_tracing && kind != __CC_TOUCH) __cc_record((uint64_t)(p - r.base), site, recorded, size, region);
        if (kind == __CC_ATOMIC || relaxed) __cc_note_atomic(false, kind);
        // A waiting loop's condition polls a volatile flag that another thread sets (`while
        // (ready == 0)`): that read is how the threads meet, not a hazard (still initchecked).
        if (relaxed && kind == __CC_READ && __cc_me->polling) return __cc_note_polled(r, (size_t)(p - r.base), size, site);
        return __cc_note_shared(r, (size_t)(p - r.base), size, kind, site, copy,
                                kind == __CC_WRITE || kind == __CC_WRITE_SAME ? copied_unwritten : 0, cas, exchange);
    }
    if (copied_unwritten == 1 && !__cc_pending_set)  // copied out of shared memory: it is a read of garbage after all
        __cc_pending = __cc_copy, __cc_pending_set = true;
    // Not shared memory: an argument array or a __device__ variable (where a volatile access is an atomic)
    if (relaxed && kind != __CC_READ && kind != __CC_TOUCH) __cc_sync_ready(true);  // a volatile store: handovers tracked
    uint32_t observed = kind == __CC_READ && __cc_sync_ready(false) ? __cc_sync[__cc_global_tid()].observed : 0;
    if (kind == __CC_ATOMIC || relaxed) __cc_note_atomic(true, kind, p);
    for (int i = 0; i < __cc_allocation_count; i++) {
        __cc_allocation& a = __cc_allocations[i];
        if (p >= a.base && p < a.base + a.bytes) {
            if (__cc_tracing && kind != __CC_TOUCH) __cc_record((uint64_t)(uintptr_t)p, site, recorded, size, -1);
            bool polled = relaxed && kind == __CC_READ && __cc_me->polling;  // (a flag's waiting loop)
            return __cc_note_global(a, (size_t)(p - a.base), size, relaxed && !a.read_only ? __CC_ATOMIC : kind, site,
                                    said, relaxed && !a.read_only && !polled
                                              ? (kind == __CC_READ ? (update ? 4 : 1) : update ? 3 : 2) : 0,
                                    polled ? 0 : observed, cas, block_scope);
        }
    }
    if (__cc_quarantined && kind != __CC_TOUCH) __cc_heap_check_freed(p, size, kind, site);  // device malloc's blocks
    // An atomic on the thread's own stack: a local variable (`int cnt = 0; atomicAdd(&cnt, 1);`). CUDA's
    // atomics work on global and shared memory; a local is each thread's own, nothing is shared
    uintptr_t frame = (uintptr_t)__builtin_frame_address(0);
    if (kind == __CC_ATOMIC && (uintptr_t)p > frame && (uintptr_t)p - frame < ((size_t)1 << 24)) {
        __cc_fault_out->code_offset = site;
        __cc_fail(__CC_LOCAL_ATOMIC, 0);
    }
    __cc_note_local(p, size, kind, site);
}
// __ldg (sanitizer): a load through the read-only cache (ld.global.nc), valid only for data that no
// thread writes while the kernel runs. A fault when a thread wrote the element earlier in this launch
// (the write note of the race checker); the read itself is noted as any read (__cc_note).
#ifdef __CC_WITH_RUNTIME_OBJECT  // (never inlined: the object's)
__attribute__((noinline)) void __cc_ldg_check(const volatile void* address, size_t size);
#else
__attribute__((noinline)) __CC_RT void __cc_ldg_check(const volatile void* address, size_t size) {
    const __cc_allocation* a = __cc_find_allocation(address);
    if (!a || !a->shadow_count) return;
    size_t offset = (size_t)((const char*)address - a->base);
    size_t first = a->item_shift >= 0 ? offset >> a->item_shift : offset / a->item;
    size_t last = a->item_shift >= 0 ? (offset + size + a->item - 1) >> a->item_shift : (offset + size + a->item - 1) / a->item;
    for (int kind : {__CC_NOTE_WRITE, __CC_NOTE_ATOMIC}) {  // a plain store, or an atomic update
        if (!a->notes[kind]) continue;
        for (size_t word = first; word < last && word < a->shadow_count; word++) {
            const __cc_global_note& n = a->notes[kind][word];
            if (n.launch != __cc_current_launch) continue;
            __cc_fault* f = __cc_fault_out;
            f->code_offset = __cc_code_offset(__builtin_return_address(0));
            f->address = n.site;
            f->base = (uint64_t)(uintptr_t)a->base;
            f->index = (int64_t)word, f->element_bytes = (int64_t)a->item;
            f->op = __CC_READ, f->other_op = kind == __CC_NOTE_WRITE ? __CC_WRITE : __CC_ATOMIC;
            __cc_other_thread(n.tid, n.block);
            __cc_fail(__CC_LDG_WRITTEN, 0);
        }
    }
}
#endif
// An access through a null (or small) pointer that a sanitized build notes: the crash the access would give,
// at the kernel's line. (The compiler may delete a store through a pointer it knows is null, `float* p;
// p[0] = v;`, and then nothing else faults.) `back`: the note's return address; `frame`: its frame.
#ifdef __CC_WITH_RUNTIME_OBJECT  // (never inlined: the object's)
__attribute__((noreturn, noinline, cold))
void __cc_null_access(const volatile void* at, void* back, void* frame);
#else
__attribute__((noreturn, noinline, cold))
__CC_RT void __cc_null_access(const volatile void* at, void* back, void* frame) {
    __cc_fault* f = __cc_fault_out;
    f->signal = SIGSEGV, f->address = (uint64_t)(uintptr_t)at;
    f->code_offset = __cc_code_offset(back);
#if defined(__CC_FRAME_POINTERS)
    __cc_note_callers(f, *(void* const* const*)frame);  // from the frame of the function that made the access
#else
    (void)frame;
#endif
    __cc_fail(__CC_SIGNAL, 0);
}
#endif
// Whether a 1-, 2-, 4- or 8-byte value is the fill (the bytes 0xFE) of a variable before it has a value.
static inline bool __cc_is_fill(const void* value, size_t size) {
    if (size == 4) { uint32_t v; memcpy(&v, value, 4); return v == 0xFEFEFEFEu; }
    if (size == 8) { uint64_t v; memcpy(&v, value, 8); return v == 0xFEFEFEFEFEFEFEFEull; }
    if (size == 2) { uint16_t v; memcpy(&v, value, 2); return v == 0xFEFEu; }
    if (size == 1) return *(const unsigned char*)value == 0xFE;
    return false;
}
// A 1- or 2-byte read that holds the fill (__cc_read_check's narrow kinds): the element is unwritten only in an
// array that was nothing but the fill when the launch began (pristine) and where no thread of this launch wrote or
// updated any of its bytes (their notes). 254 in a uint8 image the host filled is a pixel, not garbage.
static inline bool __cc_unwritten_narrow(const volatile void* address, size_t size) {
    const __cc_allocation* a = __cc_find_allocation(address);
    if (!a || !a->argument || !a->unwritten || !a->pristine) return false;
    if (!a->shadow_count) return true;  // (read-only: nothing in this launch wrote it)
    size_t offset = (size_t)((const char*)address - a->base);
    for (size_t word = offset / a->item; word < (offset + size + a->item - 1) / a->item && word < a->shadow_count; word++)
        for (int slot : {__CC_NOTE_WRITE, __CC_NOTE_ATOMIC, __CC_NOTE_ATOMIC2})
            if (a->notes[slot] && a->notes[slot][word].launch == __cc_current_launch) return false;
    return true;
}
// initcheck for global memory (compute-sanitizer's): a read, or an atomic's read of the old value, of a float,
// an integer or a vector's lane that holds the bytes 0xFE in memory that started with them — an argument array
// that course.cuda.xp.empty made (cudaMalloc's memory holds garbage; on the CPU it is that fill), or a block from
// malloc/new (a sanitized launch fills them) — was never written by the host or a kernel: the kernel reads
// garbage (`c[i] += a[i];` into an output never cleared; a histogram's bins from xp.empty). Elsewhere (another
// argument array, shared or local memory, which initcheck and the local check cover) the bytes are left alone.
// `size`: the bytes read; `kind`: their __cc_fill_kind (5: a vector or struct, every part the fill); `atomic`: an
// atomic's old value; `return_address`: in the kernel's code, at the read.
#ifdef __CC_WITH_RUNTIME_OBJECT  // (never inlined: the object's)
__attribute__((noinline, cold)) void __cc_read_fill(const volatile void* part, size_t lane, int kind, bool atomic,
                                                           void* return_address);
#else
__attribute__((noinline, cold)) __CC_RT void __cc_read_fill(const volatile void* part, size_t lane, int kind, bool atomic,
                                                           void* return_address) {
    const __cc_allocation* a = __cc_find_allocation(part);
    __cc_fault* out = __cc_fault_out;
    if (a && a->argument && a->unwritten) {
        out->base = (uint64_t)(uintptr_t)a->base;
        out->index = (int64_t)(((const char*)part - a->base) / (ptrdiff_t)lane);
        out->other_op = 0;
    } else if (!a && __cc_shared_region_at(part) < 0) {
        __cc_heap_entry block = __cc_heap_containing(part);
        if (block.state != __CC_HEAP_LIVE) return;
        out->base = (uint64_t)(uintptr_t)block.base;
        out->index = (int64_t)(((const char*)part - block.base) / (ptrdiff_t)lane);
        out->length = (int64_t)block.bytes;
        out->other_line = block.line;
        out->other_op = 1;
    } else {
        return;
    }
    out->code_offset = (uint64_t)__cc_code_offset(return_address);
    out->element_bytes = (int64_t)lane;
    out->op = kind;
    out->mask = atomic;
    __cc_fail(__CC_READ_FILL, 0);
}
#endif
#ifdef __CC_WITH_RUNTIME_OBJECT  // (never inlined: the object's)
__attribute__((noinline)) void __cc_note(const volatile void* address, size_t size, int kind);
#else
__attribute__((noinline)) __CC_RT void __cc_note(const volatile void* address, size_t size, int kind) {
    if ((uintptr_t)address < 65536) __cc_null_access(address, __builtin_return_address(0), __builtin_frame_address(0));
    const int check = kind >> 12;  // (a read's __cc_read_check)
    kind &= 0xfff;
    __cc_note_at(address, size, kind, (uint32_t)__cc_code_offset(__builtin_return_address(0)));
    if (check) {
        const size_t lane = check & 16 ? (check & 32 ? 2 : 1) : check & 8 ? 8 : 4;
        bool all = true;
        for (size_t k = 0; k < size && all; k += lane) all = __cc_is_fill((const char*)address + k, lane);
        if (__builtin_expect(all, 0) && (!(check & 16) || __cc_unwritten_narrow(address, size)))
            __cc_read_fill(address, size, check & 7, (kind & 15) == __CC_ATOMIC, __builtin_return_address(0));
    }
}
#endif
// What a shuffle from a lane outside its mask gives here: a quiet NaN with a payload that a
// float or double computed from it keeps (x86 and arm64 pass a NaN operand's payload on), so a
// store of such a value can be told from a store of a real result (__cc_note_store).
static const uint32_t __CC_UNDEFINED32 = 0x7FC0DEADu;
static const uint64_t __CC_UNDEFINED64 = 0x7FF8DEAD7FC0DEADull;
__CC_RT bool __cc_is_undefined(const void* value, size_t size) {
    if (size == 4) {
        uint32_t v;
        memcpy(&v, value, 4);
        v &= 0x7FFFFFFFu;
        return v == __CC_UNDEFINED32 || v == 0x7FF8DEADu;
    }
    if (size == 8) {
        uint64_t v;
        memcpy(&v, value, 8);
        v &= 0x7FFFFFFFFFFFFFFFull;
        // the pattern, a float's converted to double, or a float2 of two
        return v == __CC_UNDEFINED64 || v == 0x7FF81BD5A0000000ull || (uint32_t)v == __CC_UNDEFINED32;
    }
    return false;
}
// The shuffle's line, mask, the lane it read (other_thread, index) and the thread that read it
// (exited_thread): what cpu.py's message about an undefined shuffle result names. length 1: found
// at a store (the fault's thread is the storing one); 2: no fault, the arrays are for Python to
// look through, and the fault's thread and block are the reader's.
__CC_RT void __cc_describe_undefined(const __cc_worker* w, __cc_fault* out, int length) {
    out->length = length;
    out->other_line = w->undefined.line, out->op = w->undefined.op, out->mask = w->undefined.mask;
    out->index = w->undefined.source, out->count = w->round_threads;
    out->other_thread[0] = w->undefined.source_tid.x, out->other_thread[1] = w->undefined.source_tid.y;
    out->other_thread[2] = w->undefined.source_tid.z;
    out->exited_thread[0] = w->undefined.reader.x, out->exited_thread[1] = w->undefined.reader.y;
    out->exited_thread[2] = w->undefined.reader.z;
    out->other_op = w->undefined.returned_line ? -4 : 0;
    out->address = (uint64_t)w->undefined.returned_line;
    if (length == 2) {
        out->thread[0] = w->undefined.reader.x, out->thread[1] = w->undefined.reader.y, out->thread[2] = w->undefined.reader.z;
        out->block[0] = w->undefined.block.x, out->block[1] = w->undefined.block.y, out->block[2] = w->undefined.block.z;
    }
}
// A store of what a shuffle gave for a lane outside its mask (__cc_resolve_warps): the undefined
// value is used after all. Reported at the store, naming the shuffle.
#ifdef __CC_WITH_RUNTIME_OBJECT  // (never inlined: the object's)
__attribute__((noreturn, noinline)) void __cc_stored_undefined(void* return_address);
#else
__attribute__((noreturn, noinline)) __CC_RT void __cc_stored_undefined(void* return_address) {
    __cc_worker* w = __cc_me;
    __cc_fault* out = __cc_fault_out;
    out->code_offset = (uint64_t)__cc_code_offset(return_address);
    __cc_describe_undefined(w, out, 1);
    __cc_fail(__CC_WARP_BAD_MASK, 0);
}
#endif

// (The lock-order check, __cc_lock_update: a plain or volatile store of the value a lock's holder took
// it from, `*lock = 0;`, releases it too.)
__CC_STATE bool __cc_held_any;  // some thread of the running block holds a lock
__CC_RT void __cc_lock_update(const volatile void* address, uint64_t compare, uint64_t value, uint64_t old, int cas,
                             uint64_t site);

// A float or double store of exactly the bytes 0xFE that a sanitized build puts in a local variable before
// it has a value (-ftrivial-auto-var-init=pattern: -1.6947e38, -5.314e303): the stored value is such a
// variable's, read before anything was stored in it on this thread's path (`float r; switch (op) { case
// ADD: r = ...; } out[i] = r;` with another op). No computation gives these bytes by chance. Into shared
// memory, the store only passes the garbage on, as a copy of an unwritten element does (__cc_copy): the
// element holds no value, and a thread that reads it is reported (PMPP's register-tiled 3-D stencil
// stores its next plane's value, unset past the grid's edge, into elements no thread then reads).
// Integers too (`int best; for (...) if (x[j] > m) best = j; out[i] = best;`, which GCC does not warn about),
// in kernels that declare an integer variable without a value (the launcher sets __cc_int_fills): an int's
// fill is -16843010, a value bit tricks can make (~0x01010101) where every variable starts with one.
__CC_STATE bool __cc_int_fills;
// A struct (not a CUDA vector type) stored whole is checked word by word, its padding left out, in kernels that
// declare a local of one of the source's structs without a value or take memory from malloc/new (the launcher
// sets __cc_struct_fills): `Particle p; p.x = ...; out[i] = p;` stores p.y's fill.
__CC_STATE bool __cc_struct_fills;
// A struct of the source's (not a CUDA vector type) that a store checks word by word, its padding left out.
#if defined(__has_builtin)
#if __has_builtin(__builtin_clear_padding)
#define __CC_CLEAR_PADDING 1
#endif
#endif
template <class U> static constexpr bool __cc_checked_struct() {
#ifdef __CC_CLEAR_PADDING
    return std::is_class<U>::value && std::is_void<typename __cc_lane_of<U>::type>::value &&
           std::is_trivially_copyable<U>::value && sizeof(U) % 4 == 0 && sizeof(U) <= 256;
#else
    return false;
#endif
}
// What a store or an atomic of a U checks for the fill: 1 a float or double, 2 a signed integer, 3 an unsigned
// one (bool and other types: 0, none); a vector type (float4, int2), what its lanes are; 4 a struct's words.
template <class U> static constexpr int __cc_fill_kind() {
    if constexpr (!std::is_void<typename __cc_lane_of<U>::type>::value)
        return __cc_fill_kind<typename __cc_lane_of<U>::type>();
    else if constexpr (__cc_checked_struct<U>())
        return 4;
    else
        return std::is_floating_point<U>::value ? 1 : !std::is_integral<U>::value || std::is_same<U, bool>::value ? 0
               : std::is_signed<U>::value ? 2 : 3;
}
// The bytes of one part of a value that __cc_fill_kind checks: a vector type's lane, a struct's word, else the
// whole value.
template <class U> static constexpr size_t __cc_fill_bytes() {
    if constexpr (!std::is_void<typename __cc_lane_of<U>::type>::value) return sizeof(typename __cc_lane_of<U>::type);
    else if constexpr (__cc_checked_struct<U>()) return 4;
    else return sizeof(U);
}
// The first `lane`-byte part of a `size`-byte value that holds the fill (a float4 whose .w was never set), or -1.
static inline int __cc_filled_lane(const void* value, size_t size, size_t lane) {
    if (lane != 4 && lane != 8) return -1;
    for (size_t k = 0; k + lane <= size; k += lane)
        if (__cc_is_fill((const char*)value + k, lane)) return (int)(k / lane);
    return -1;
}
#ifdef __CC_WITH_RUNTIME_OBJECT  // (never inlined: the object's)
__attribute__((noreturn, noinline)) void __cc_stored_fill(const volatile void* address, size_t size,
                                                                 void* return_address, int kind);
#else
__attribute__((noreturn, noinline)) __CC_RT void __cc_stored_fill(const volatile void* address, size_t size,
                                                                 void* return_address, int kind) {
    __cc_fault* out = __cc_fault_out;
    out->code_offset = (uint64_t)__cc_code_offset(return_address);
    const __cc_allocation* a = __cc_find_allocation(address);
    out->base = a ? (uint64_t)(uintptr_t)a->base : 0;
    out->index = a ? (int64_t)(((const char*)address - a->base) / (ptrdiff_t)size) : -1;
    out->element_bytes = (int64_t)size;
    out->op = kind;
    __cc_fail(__CC_STORED_FILL, 0);
}
#endif

// What __cc_note checks a read of a U for (added to its kind, bits 12 and up): the fill's __cc_fill_kind for a
// float, double or integer, 5 for a vector (float4) or a struct, which is checked only when all its parts hold the
// fill (nothing wrote any of it: a float4 whose unused .w the host never set is padding, not a bug, until it is
// used), plus 8 when the parts are 8 bytes. 1- and 2-byte parts (a char, a short, a __half, uchar4's lanes) add 16,
// and 32 for 2 bytes: their fill is a value real data holds too, checked where nothing can have written it
// (__cc_unwritten_narrow). 0: nothing (a bool, a pointer).
// (a __half or __nv_bfloat16 and their pairs: the bytes of one number, 2; 0 for other types)
template <class U> struct __cc_narrow_float { static constexpr size_t lane = 0; };
template <class U> static constexpr int __cc_read_check() {
    constexpr size_t half = __cc_narrow_float<U>::lane;
    constexpr int kind = half ? 1 : __cc_fill_kind<U>();
    constexpr size_t lane = half ? half : __cc_fill_bytes<U>();
    if constexpr (kind >= 1 && (lane == 4 || lane == 8) && sizeof(U) % lane == 0)
        return ((sizeof(U) == lane ? kind : 5) + (lane == 8 ? 8 : 0)) << 12;
    else if constexpr (kind >= 1 && kind <= 3 && (lane == 1 || lane == 2) && sizeof(U) % lane == 0)
        return ((sizeof(U) == lane ? kind : 5) + 16 + (lane == 2 ? 32 : 0)) << 12;
    else
        return 0;
}

// A plain store `x = v`, told the value it will write: storing the bytes x holds already (every
// thread that finds a match sets `found = 1`) cannot change the result, whichever thread is last,
// so it is no write-write hazard (compute-sanitizer ranks these lowest too).
// `fill`: __cc_fill_kind of the value's type; `lane`: its __cc_fill_bytes (0: size); `checked`: the bytes to look
// for the fill in, where they are not the value's (a struct's, with its padding cleared).
#ifdef __CC_WITH_RUNTIME_OBJECT  // (never inlined: the object's)
__attribute__((noinline)) void __cc_note_store(const volatile void* address, size_t size, const void* value,
                                                     bool relaxed = false, int fill = 0, size_t lane = 0,
                                                     const void* checked = nullptr);
#else
__attribute__((noinline)) __CC_RT void __cc_note_store(const volatile void* address, size_t size, const void* value,
                                                     bool relaxed = false, int fill = 0, size_t lane = 0,
                                                     const void* checked = nullptr) {
    const void* at = (const void*)address;
    if ((uintptr_t)at < 65536) __cc_null_access(at, __builtin_return_address(0), __builtin_frame_address(0));
    bool on = fill == 1 || (fill == 4 ? __cc_struct_fills : fill && __cc_int_fills);
    int filled = on ? __cc_filled_lane(checked ? checked : value, size, lane ? lane : size) : -1;
    if (filled >= 0) {
        if (__cc_shared_region_at(at) >= 0) __cc_fill_set = true;
        else {
            // (`out[i] = s[j];` of such an element: the read, which names the store into s, is the report)
            __cc_copy_was_used();
            size_t bytes = lane ? lane : size;  // (a vector's lane: the element of the array it lands in)
            __cc_stored_fill((const char*)at + filled * bytes, bytes, __builtin_return_address(0), fill);
        }
    }
    __cc_put_back_stale();  // (before the element is compared)
    bool same;
    switch (size) {  // the usual sizes without a call to memcmp (fixed-size copies are single loads)
#define __CC_SAME(T) { T x, y; __builtin_memcpy(&x, at, sizeof x); __builtin_memcpy(&y, value, sizeof y); same = x == y; }
        case 4: __CC_SAME(uint32_t) break;
        case 8: __CC_SAME(uint64_t) break;
        case 2: __CC_SAME(uint16_t) break;
        case 1: __CC_SAME(uint8_t) break;
#undef __CC_SAME
        default: same = memcmp(at, value, size) == 0;
    }
    if (__cc_me->undefined.set && __cc_is_undefined(value, size)) __cc_stored_undefined(__builtin_return_address(0));
    __cc_note_at(address, size, (same ? __CC_WRITE_SAME : __CC_WRITE) + (relaxed ? __CC_VOLATILE : 0),
                 (uint32_t)__cc_code_offset(__builtin_return_address(0)));
    if (__cc_held_any && (size == 4 || size == 8)) {
        uint64_t v = 0;
        memcpy(&v, value, size);
        __cc_lock_update(address, 0, v, 0, 0, 0);
    }
}
#endif

#ifdef __CC_WITH_RUNTIME_OBJECT  // (never inlined: the object's)
__attribute__((noinline)) bool __cc_note_branch(bool taken);
#else
__attribute__((noinline)) __CC_RT bool __cc_note_branch(bool taken) {
    __cc_record(0, (uint32_t)__cc_code_offset(__builtin_return_address(0)), 8 | (int)taken, 0, -1);
    return taken;
}
#endif
template <class C>
__attribute__((always_inline)) static inline bool __cc_branch(const C& condition) {
    bool taken = static_cast<bool>(condition);
    return __cc_tracing ? __cc_note_branch(taken) : taken;
}

template <class T> static inline const T& __cc_val(const T& v) { return v; }
template <class T> using __cc_value_t = typename std::remove_cv<typename std::remove_reference<T>::type>::type;

// A volatile access of shared or global memory in a plain launch (below, __cc_in_step).
__CC_RT void __cc_volatile_step(const volatile void* address);
template <class T>
__attribute__((always_inline)) static inline void __cc_in_step(const T& x) {
    if constexpr (__cc_volatile_bit<T>() != 0)
        if (!__cc_sanitizing) __cc_volatile_step(__builtin_addressof(x));
}

// An object whose every operation is an atomic that notes itself (cuda::atomic, cuda::std::atomic: `count += 2;`,
// `int v = count;`): the wrappers below note nothing of it, or its atomics would race with their own plain access.
template <class T, class = void> struct __cc_is_atomic_object : std::false_type {};
template <class T>
struct __cc_is_atomic_object<T, typename std::conditional<false, typename T::__cc_atomic_object, void>::type>
    : std::true_type {};
template <class T> struct __cc_is_atomic_object<std::atomic<T>, void> : std::true_type {};  // (cuda::std::atomic<bool>)

// source.py wraps every access in a kernel's body: __cc_r(s[i]) for a read, __cc_w(s[i]) = v
// for a write, __cc_rw(s[i]) += v for both. In a plain build they are nothing (but a volatile
// access's step, __cc_volatile_step); in a sanitized one each tells __cc_note which bytes the
// thread touched, and how.
template <class T>
__attribute__((always_inline)) static inline T&& __cc_r(T&& x) {
    // (`(*op)(a, b)` through a function pointer: *op names a function, no memory)
    if constexpr (!std::is_function<typename std::remove_reference<T>::type>::value &&
                  !__cc_is_atomic_object<__cc_value_t<T>>::value) {
        if (__cc_sanitizing) {
            __cc_note(__builtin_addressof(x), sizeof x, __CC_READ + __cc_volatile_bit<T>() + __cc_read_check<__cc_value_t<T>>());
        }
        __cc_in_step<T>(x);
    }
    return static_cast<T&&>(x);
}
// `acc[t].add(v)`: a method is called on an element. For the source's structs that live in shared
// or global memory the method's body notes its members' accesses (`__cc_rw(sum) += v;`) and the
// call is left as written; for any other method (of a type source.py does not see into) the element
// counts as written, and as no hazard (what such a method does to it goes unreported).
template <class T>
__attribute__((always_inline)) static inline T&& __cc_touch(T&& x) {
    if (__cc_sanitizing) __cc_note(__builtin_addressof(x), sizeof x, __CC_TOUCH);
    return static_cast<T&&>(x);
}
// `f[i].flag = 1;` of a bit-field: the store rewrites the storage of the element that holds it,
// noted as a write of the whole element (source.py wraps the element: a bit-field has no address).
template <class T>
__attribute__((always_inline)) static inline T&& __cc_wbits(T&& x) {
    if (__cc_sanitizing) __cc_note(__builtin_addressof(x), sizeof x, __CC_WRITE + __cc_volatile_bit<T>());
    __cc_in_step<T>(x);
    return static_cast<T&&>(x);
}
// `s[i] = t[j];`: the read of t[j] is a copy (__cc_copy).
template <class T>
__attribute__((always_inline)) static inline T&& __cc_rc(T&& x) {
    if (__cc_sanitizing) {
        __cc_note(__builtin_addressof(x), sizeof x,
                  __CC_READ + __CC_COPY + __cc_volatile_bit<T>() + __cc_read_check<__cc_value_t<T>>());
    }
    __cc_in_step<T>(x);
    return static_cast<T&&>(x);
}
template <class U, class = void> struct __cc_is_checked;  // (a checked pointer: __cc_ptr, below)
#ifdef __CC_SANITIZE
// `__cc_w(s[i]) = v` in a sanitized build: the store sees v before it writes it (__cc_note_store).
template <class T>
struct __cc_store {
    T& ref;
    typedef typename std::remove_cv<T>::type U;
    __attribute__((always_inline)) T& operator=(U v) const {  // by value: the load happens in the kernel's code
        const void* checked = nullptr;
        alignas(U) unsigned char cleared[__cc_checked_struct<U>() ? sizeof(U) : 1];
        if constexpr (__cc_checked_struct<U>()) {  // (a struct's padding holds the fill whatever its members hold)
#ifdef __CC_CLEAR_PADDING
            memcpy(cleared, (const void*)__builtin_addressof(v), sizeof(U));  // (U may have no default constructor)
            __builtin_clear_padding((U*)cleared);
            checked = cleared;
#endif
        }
        __cc_note_store(__builtin_addressof(ref), sizeof(T), __builtin_addressof(v), std::is_volatile<T>::value,
                        __cc_fill_kind<U>(), __cc_fill_bytes<U>(), checked);
        ref = v;
        return ref;
    }
    // (not an integer into a pointer: `p[i] = 0;`, `= NULL` are null pointer constants, which only the
    // operator above, taking a U, converts)
    template <class V, class = typename std::enable_if<!std::is_convertible<V&&, const U&>::value &&
                                                       !((std::is_pointer<U>::value || __cc_is_checked<U>::value) &&
                                                         std::is_integral<typename std::remove_reference<V>::type>::value)>::type>
    __attribute__((always_inline)) T& operator=(V&& v) const {  // a type with its own operator=
        __cc_note(__builtin_addressof(ref), sizeof(T), __CC_WRITE + __cc_volatile_bit<T>());
        ref = static_cast<V&&>(v);
        return ref;
    }
};
template <class T, class = typename std::enable_if<!__cc_is_atomic_object<__cc_value_t<T>>::value>::type>
__attribute__((always_inline)) static inline __cc_store<typename std::remove_reference<T>::type> __cc_w(T&& x) {
    return {x};
}
template <class T, class = typename std::enable_if<__cc_is_atomic_object<__cc_value_t<T>>::value>::type, class = void>
__attribute__((always_inline)) static inline T&& __cc_w(T&& x) {
    return static_cast<T&&>(x);
}
#else
template <class T>
__attribute__((always_inline)) static inline T&& __cc_w(T&& x) {
    __cc_in_step<T>(x);
    return static_cast<T&&>(x);
}
#endif
template <class T>
__attribute__((always_inline)) static inline T&& __cc_rw(T&& x) {
    if (__cc_sanitizing && !__cc_is_atomic_object<__cc_value_t<T>>::value) {
        // (a volatile `x += v` is two relaxed atomics: between blocks no message; within a block, see __cc_note_global)
        const int relaxed = __cc_volatile_bit<T>();
        __cc_note(__builtin_addressof(x), sizeof x,
                  (relaxed ? __CC_READ + relaxed + __CC_UPDATE : __CC_READ_UPDATE) + __cc_read_check<__cc_value_t<T>>());
        __cc_note(__builtin_addressof(x), sizeof x, __CC_WRITE + relaxed + (relaxed ? __CC_UPDATE : 0));
    }
    __cc_in_step<T>(x);
    return static_cast<T&&>(x);
}

#define __CC_IF_INTEGER(I) class = typename std::enable_if<std::is_integral<__cc_value_t<I>>::value>::type

// Element access of a checked pointer or view: a plain reference (source.py adds the notes).
template <class T>
struct __cc_access_type {
    typedef T& type;
};
template <> struct __cc_access_type<void> { typedef void type; };  // __cc_ptr<void>: device malloc's blocks
template <> struct __cc_access_type<const void> { typedef void type; };
template <class T>
__attribute__((always_inline)) static inline T& __cc_element(T* p) { return *p; }

// A pointer that knows the array it points into. Accessing p[i] checks that the element's
// index in that array, index + i, is below `count`: one comparison, as cheap as it gets.
// A pointer to memory the launch does not know (a local variable, say) is not checked: its
// index starts at 2^63 and its count is SIZE_MAX, so every access passes (p[-1] included).
static const size_t __CC_UNCHECKED = (size_t)1 << 63;

// The emulator's own pointer-like classes, which convert to checked pointers themselves.
template <class U, class> struct __cc_is_checked : std::false_type {};
template <class U> struct __cc_is_checked<U, typename std::conditional<false, typename U::__cc_checked, void>::type>
    : std::true_type {};

template <class E> struct __cc_view;
template <class A> struct __cc_array_view;
template <class S> struct __cc_dynamic_shared;

// An argument that is itself a view at an odd offset (x[1:] passed from NumPy) makes a float4
// view of it misaligned, as on a GPU, where the view's pointer lies that many bytes past its
// allocation's 256-byte boundary. (Host arrays start at 16-byte boundaries at least, so alignments
// up to 16 are checked on the address; __shared__ and local arrays count from their own start.)
static inline bool __cc_misaligned_argument(const void* base, size_t offset, size_t align) {
    size_t unit = align < 16 ? align : 16;
    if (((uintptr_t)base + offset) % unit == 0) return false;
    const __cc_allocation* a = __cc_find_allocation(base);
    return a && a->base == (const char*)base;
}

// A pointer to rows (`float (*m)[16]`) over an array whose length is not a whole number of rows: the
// items its last row lacks (its rows are counted up), so that m[r][c] is checked against the array's
// own end. Nothing for other pointers (an empty base).
template <class T, bool = std::is_array<T>::value> struct __cc_row_tail {
    static constexpr size_t tail = 0;
    void set_tail(size_t) {}
};
template <class T> struct __cc_row_tail<T, true> {
    size_t tail = 0;
    void set_tail(size_t t) { tail = t; }
};

template <class T>
struct __cc_ptr : __cc_row_tail<T> {
    typedef void __cc_checked;
    T* p;
    size_t index;       // p's index in its array
    size_t count;       // elements in the array
    const void* array;  // the array's first element, to name it in a fault

    typedef typename std::remove_cv<T>::type __cc_plain;
    static constexpr size_t __cc_size = sizeof(typename std::conditional<std::is_void<T>::value, char, T>::type);
    static constexpr size_t __cc_align = alignof(typename std::conditional<std::is_void<T>::value, char, T>::type);

    __cc_ptr() : p(nullptr), index(__CC_UNCHECKED), count(SIZE_MAX), array(nullptr) {}
    // nullptr, 0 and NULL all come here (a null pointer constant converts to T*; a second
    // constructor for nullptr_t would make `float* p = 0;` ambiguous).
    __cc_ptr(T* raw) : p(raw) { adopt((const volatile void*)raw); }
    __cc_ptr(T* p_, size_t index_, size_t count_, const void* array_)
        : p(p_), index(index_), count(count_), array(array_) {}
    template <class U, class = typename std::enable_if<std::is_convertible<U*, T*>::value>::type>
    __cc_ptr(const __cc_ptr<U>& o) : p(o.p), index(o.index), count(o.count), array(o.array) { this->set_tail(o.tail); }
    // Casts: (float4*)x or reinterpret_cast<float4*>(x) keep x's allocation, counted in float4
    // from x's byte offset (a float3 view of a + 1 holds (bytes - 4) / 12 of them). An offset
    // that is not a multiple of the type's alignment makes every access a misaligned-address
    // fault, as on a GPU, whose allocations start at 256-byte boundaries.
    template <class U, class = typename std::enable_if<!std::is_convertible<U*, T*>::value>::type, class = void>
    explicit __cc_ptr(const __cc_ptr<U>& o) : p((T*)o.p) {
        if (o.array == (const void*)&__cc_none_array) {  // None's null pointer, seen as another type
            index = o.index * __cc_ptr<U>::__cc_size / __cc_size, count = 0, array = o.array;
            return;
        }
        if (o.count == SIZE_MAX || o.array == nullptr) {
            index = __CC_UNCHECKED, count = SIZE_MAX, array = nullptr;
            return;
        }
        size_t offset = (size_t)((const char*)o.p - (const char*)o.array), bytes = o.bytes(), skew = offset % __cc_size;
        // o's bounds are whole U elements: an array's last bytes that do not fill one (a dynamic shared
        // memory of 1540 bytes seen as doubles, 1536 of them) are the array's all the same, and may hold a
        // T (the float after them): its true size, where that could make a difference (a lookup)
        constexpr size_t from = __cc_ptr<U>::__cc_size;
        if (from > 1 && offset <= bytes && (bytes + from - 1 - skew) / __cc_size != (bytes - skew) / __cc_size)
            bytes = __cc_region_bytes(o.array, bytes);
        locate(o.array, offset, bytes);
    }
    template <class I, __CC_IF_INTEGER(I)>
    explicit __cc_ptr(I address) : p((T*)(uintptr_t)address) { adopt((const volatile void*)p); }
    // An object that converts itself to T* (the samples' SharedMemory<T> helper, say).
    template <class U, class = typename std::enable_if<std::is_class<U>::value && std::is_convertible<U, T*>::value &&
                                                       !__cc_is_checked<U>::value>::type, class = void, class = void>
    __cc_ptr(const U& object) : p((T*)const_cast<U&>(object)) { adopt((const volatile void*)p); }
    template <class U, class = typename std::enable_if<!std::is_convertible<U*, T*>::value>::type>
    explicit __cc_ptr(U* raw) : p((T*)raw) { adopt((const volatile void*)raw); }
    // (float4*)tile, reinterpret_cast<float4*>(s) of a __shared__/local array or of extern
    // __shared__ memory: checked against that array's bytes (defined after __cc_view).
    template <class E>
    explicit __cc_ptr(const __cc_view<E>& v);
    template <class S>
    explicit __cc_ptr(const __cc_dynamic_shared<S>& d);

    // A raw pointer into an argument array or a static __shared__ array gets that array's bounds.
    // `past_end`: an address a little past an argument's end counts as made from it (an integer-made pointer,
    // `(float*)((uintptr_t)a + 4 * n)`); not for an address the host wrote into a __device__ pointer, which
    // may be any array's that merely lies there (__cc_recheck_global).
    void adopt(const volatile void* raw, bool past_end = true) {
        const __cc_allocation* a = raw ? __cc_find_allocation(raw) : nullptr;
        const char* base = a ? a->base : nullptr;
        size_t bytes = a ? a->bytes : 0;
        if (raw && !a) {
            const __cc_worker* w = __cc_me;
            if (const __cc_poisoned* shared = __cc_find_shared_array(raw))
                base = (const char*)shared->base, bytes = shared->bytes;
            else if (w && w->new_block && (const char*)raw >= w->new_block &&
                     (const char*)raw < w->new_block + w->new_block_bytes)
                base = w->new_block, bytes = w->new_block_bytes;  // (what the last new-expression made)
            else if (const __cc_allocation* before = past_end ? __cc_argument_ending_near(raw) : nullptr;
                     before && __cc_heap_entry_at(raw, true).state == __CC_HEAP_EMPTY)
                base = before->base, bytes = before->bytes;  // (located past its end)
        }
        if (base)
            locate(base, (size_t)((const char*)raw - base), bytes);
        else
            index = __CC_UNCHECKED, count = SIZE_MAX, array = nullptr;
    }
    // Where a pointer at byte `offset` of an array of `bytes` bytes stands, counted in T elements:
    // already past the end (every access is out of bounds), misaligned for T (every access is a
    // misaligned-address fault), or its index and the whole elements from there.
    void locate(const void* base, size_t offset, size_t bytes) {
        array = base;
        if (offset > bytes) {
            index = (size_t)((long long)offset / (long long)__cc_size), count = bytes / __cc_size;
        } else if (offset % __cc_align || __cc_misaligned_argument(base, offset, __cc_align)) {
            index = __CC_MISALIGNED_INDEX, count = bytes / __cc_size;
        } else {
            index = offset / __cc_size, count = (bytes - offset % __cc_size) / __cc_size;
            // a last row that the array holds only part of (rows of items, not of rows)
            if constexpr (std::is_array<T>::value && !std::is_array<typename std::remove_extent<T>::type>::value) {
                constexpr size_t item = sizeof(typename std::remove_extent<T>::type);
                size_t rest = (bytes - offset) % __cc_size;
                if (rest >= item) count++, this->set_tail((__cc_size - rest) / item);
            }
        }
    }
    // The bytes from the array's start that this pointer's bounds cover.
    size_t bytes() const {
        using Item = typename std::remove_all_extents<typename std::conditional<std::is_void<T>::value, char, T>::type>::type;
        return count * __cc_size - this->tail * sizeof(Item);
    }

    // Always inlined: the fault handler's return address must lie in the kernel's own code.
    // (__CC_BENCH_UNCHECKED: tools/bench.py's build without these checks, to measure what they
    // cost. Nothing else defines it: memcheck is always on.)
    __attribute__((always_inline)) void check(long long i) const {
#ifdef __CC_BENCH_UNCHECKED
        (void)i;
        return;
#endif
        if (__builtin_expect(index + (size_t)i >= count, 0))
            __cc_out_of_bounds(array, (long long)index + i, (long long)count, (long long)__cc_size,
                               (const char*)p + i * (long long)__cc_size);
    }
    template <class I, __CC_IF_INTEGER(I), class U = T>
    __attribute__((always_inline)) auto operator[](I i) const
        -> typename std::enable_if<!std::is_array<U>::value, typename __cc_access_type<U>::type>::type {
        check((long long)i);
        return __cc_element(p + i);
    }
    template <class U = T>
    __attribute__((always_inline)) auto operator*() const
        -> typename std::enable_if<!std::is_array<U>::value, typename __cc_access_type<U>::type>::type {
        check(0);
        return __cc_element(p);
    }
    // A pointer to rows, `float (*m)[4]`: m[i] is row i, a checked pointer to its first element
    // with the whole array's bounds (counted in elements), so that m[i][j] is checked where it lands.
    typedef typename std::remove_extent<T>::type __cc_row_item;
    template <class I, __CC_IF_INTEGER(I), class U = T>
    __attribute__((always_inline)) auto operator[](I i) const
        -> typename std::enable_if<std::is_array<U>::value, __cc_ptr<__cc_row_item>>::type {
        constexpr size_t n = std::extent<U>::value;
        if (count == SIZE_MAX) return __cc_ptr<__cc_row_item>((__cc_row_item*)(p + i), __CC_UNCHECKED, SIZE_MAX, nullptr);
        return __cc_ptr<__cc_row_item>((__cc_row_item*)(p + i), (index + (size_t)(long long)i) * n,
                                       count * n - this->tail, array);
    }
    template <class U = T>
    __attribute__((always_inline)) auto operator*() const
        -> typename std::enable_if<std::is_array<U>::value, __cc_ptr<__cc_row_item>>::type { return (*this)[0]; }
    __attribute__((always_inline)) T* operator->() const { check(0); return p; }

    // Handing the pointer to plain C code gives up the check.
    operator T*() const { return p; }
    template <class U>
    explicit operator U*() const { return (U*)p; }
    template <class I, __CC_IF_INTEGER(I)>
    explicit operator I() const { return (I)(uintptr_t)p; }

    template <class I, __CC_IF_INTEGER(I)>
    __cc_ptr operator+(I i) const { return __cc_ptr(p + i, index + (size_t)(long long)i, count, array); }
    template <class I, __CC_IF_INTEGER(I)>
    __cc_ptr operator-(I i) const { return __cc_ptr(p - i, index - (size_t)(long long)i, count, array); }
    ptrdiff_t operator-(const __cc_ptr& o) const { return p - o.p; }
    ptrdiff_t operator-(T* o) const { return p - o; }
    template <class I, __CC_IF_INTEGER(I)>
    __cc_ptr& operator+=(I i) { p += i, index += (size_t)(long long)i; return *this; }
    template <class I, __CC_IF_INTEGER(I)>
    __cc_ptr& operator-=(I i) { p -= i, index -= (size_t)(long long)i; return *this; }
    __cc_ptr& operator++() { ++p, ++index; return *this; }
    __cc_ptr& operator--() { --p, --index; return *this; }
    __cc_ptr operator++(int) { __cc_ptr old = *this; ++p, ++index; return old; }
    __cc_ptr operator--(int) { __cc_ptr old = *this; --p, --index; return old; }
};

template <class I, class T, __CC_IF_INTEGER(I)>
static inline __cc_ptr<T> operator+(I i, const __cc_ptr<T>& q) { return q + i; }

// `&p.v[k]` and `q = p.v;` of a member array of a local struct (source.py): a checked pointer with the
// member's bounds (no allocation holds a thread's stack, so a raw address there would go unchecked)
template <class E, size_t N, class I>
static inline __cc_ptr<E> __cc_member_pointer(E (&a)[N], I k) {
    return __cc_ptr<E>(a + k, (size_t)(long long)k, N, (const void*)a);
}

// `__device__ float* g;` (source.py): a checked pointer, whose bounds a kernel's `g = buf;` sets and later
// launches keep. Its first bytes are the address (get_global): where the host wrote another one there, the
// bounds no longer go with it, and the launch locates it afresh (an argument of this launch, else unchecked).
template <class T>
static inline void __cc_recheck_global(__cc_ptr<T>& g) {
    if (g.count == SIZE_MAX && g.index == __CC_UNCHECKED) {
        if (g.p) g.adopt((const volatile void*)g.p, false);
    } else if (g.index != __CC_MISALIGNED_INDEX &&
               (const char*)g.p != (const char*)g.array + (long long)g.index * (long long)__cc_ptr<T>::__cc_size) {
        g.adopt((const volatile void*)g.p, false);
    }
}
template <class T, size_t N>
static inline void __cc_recheck_global(__cc_ptr<T> (&g)[N]) {  // (`__device__ float* g_list[4];`)
    for (size_t i = 0; i < N; i++) __cc_recheck_global(g[i]);
}

// `decltype(p)` as a template argument (source.py): the pointer type the source declared, so that a
// trait (`is_ptr<decltype(p)>`, std::is_same) sees it rather than the checked pointer.
template <class T> struct __cc_plain { typedef T type; };
template <class U> struct __cc_plain<__cc_ptr<U>> { typedef U* type; };
template <class U> struct __cc_plain<const __cc_ptr<U>> { typedef U* const type; };
template <class U> struct __cc_plain<__cc_ptr<U>&> { typedef U*& type; };
template <class U> struct __cc_plain<const __cc_ptr<U>&> { typedef U* const& type; };
template <class A> struct __cc_plain<__cc_array_view<A>> { typedef A type; };  // (`decltype(arr) copy;`)
template <class T> using __cc_plain_t = typename __cc_plain<T>::type;


// A template __device__ function's `T* x` parameter (source.py): any pointer-like argument, its
// element type without const or volatile as T (unless the call gave T), and a checked pointer.
struct __cc_auto;
template <class P> struct __cc_element_of { typedef P type; };
template <class U> struct __cc_element_of<U*> { typedef U type; };
template <class U> struct __cc_element_of<__cc_ptr<U>> { typedef U type; };
template <class U> struct __cc_element_of<__cc_view<U>> { typedef U type; };
template <class U> struct __cc_element_of<__cc_dynamic_shared<U>> { typedef U type; };
template <class P> using __cc_pointee = typename __cc_element_of<typename std::remove_cv<P>::type>::type;
template <class Given, class P>
using __cc_pick = typename std::conditional<std::is_same<Given, __cc_auto>::value,
    typename std::remove_cv<__cc_pointee<P>>::type, Given>::type;
// (for a `T* x` parameter, declared without const: T keeps the argument's const, as C++ deduces it, so
// that `const float*` passed for T* makes T `const float`)
template <class Given, class P>
using __cc_pick_cv = typename std::conditional<std::is_same<Given, __cc_auto>::value, __cc_pointee<P>, Given>::type;
// (the guard of an overloaded template function's pointer parameters: what has an element type, or
// nullptr; no numbers)
template <class P, class Q = typename std::remove_cv<P>::type>
using __cc_if_pointer_like = typename std::enable_if<!std::is_same<typename __cc_element_of<Q>::type, Q>::value ||
                                                     std::is_same<Q, decltype(nullptr)>::value>::type;
// (the guard of `f(T* p)` beside `f(const T* p)`: the one whose constness the argument's element has)
template <class P, bool Const>
using __cc_if_const_element = typename std::enable_if<std::is_const<__cc_pointee<P>>::value == Const>::type;
#define __CC_POINTER_FITS(U, V) \
    static_assert(std::is_convertible<U*, V*>::value, "this argument does not convert to the template function's " \
                  "pointer parameter: a const array (or const pointer) passed for a T* parameter? Declare it const T*")
template <class V, class U> static inline __cc_ptr<V> __cc_pointer_from(const __cc_ptr<U>& p) {
    __CC_POINTER_FITS(U, V);
    return p;
}
template <class V> static inline __cc_ptr<V> __cc_pointer_from(decltype(nullptr)) { return __cc_ptr<V>(); }
template <class V, class U> static inline __cc_ptr<V> __cc_pointer_from(U* raw) {
    __CC_POINTER_FITS(U, V);
    return __cc_ptr<V>(raw);
}
template <class V, class U> static inline __cc_ptr<V> __cc_pointer_from(const __cc_view<U>& v) {
    __CC_POINTER_FITS(U, V);
    return v.ptr();
}
template <class V, class U> static inline __cc_ptr<V> __cc_pointer_from(const __cc_dynamic_shared<U>& d) {
    __CC_POINTER_FITS(U, V);
    return d.get();
}
#undef __CC_POINTER_FITS

// reinterpret_cast<float4*>(x), const_cast<float*>(x) and static_cast<float*>(v) keep x's bounds
// (counted in the new element type) when x is a checked pointer, a __shared__ or local array,
// extern __shared__ memory or device malloc's block, or a raw pointer into one of them; a write
// through a const_cast into a const argument is still the read-only fault it would be with the
// const kept. Any other cast is C++'s own.
//
// A cast to a reference, reinterpret_cast<float4&>(s[4 * i]), is an access of that type where its
// operand lies (source.py notes it so): checked as `*reinterpret_cast<float4*>(&s[4 * i])` would be,
// against the allocation or __shared__ array the operand lies in (a local array's element: not
// checked), or, for a whole __shared__ or local array (a view here), against that array.
template <class T> struct __cc_is_view : std::false_type {};
template <class E> struct __cc_is_view<__cc_view<E>> : std::true_type {};
template <class A> struct __cc_is_view<__cc_array_view<A>> : std::true_type {};
template <class V>
__attribute__((always_inline)) static inline V& __cc_checked_reference(const __cc_ptr<V>& q) {
    q.check(0);
    return *q.p;
}
#define __CC_BOUNDS_KEEPING_CAST(NAME, CAST) \
    template <class To, class From, class = void> \
    struct NAME##_rule { \
        static To cast(From& f) { return CAST<To>(f); } \
    }; \
    template <class V, class From> \
    struct NAME##_rule<V&, From, void> { \
        __attribute__((always_inline)) static V& cast(From& f) { \
            if constexpr (__cc_is_view<typename std::remove_cv<From>::type>::value) \
                return __cc_checked_reference(__cc_ptr<V>(f)); /* the array's bytes */ \
            else \
                return __cc_checked_reference(__cc_ptr<V>(&CAST<V&>(f))); \
        } \
    }; \
    template <class V, class From> \
    struct NAME##_rule<V*, From, typename std::enable_if<std::is_class<typename std::remove_cv<From>::type>::value>::type> { \
        static __cc_ptr<V> cast(const From& f) { return __cc_ptr<V>(f); } \
    }; \
    template <class V, class From> \
    struct NAME##_rule<V*, From, typename std::enable_if<std::is_pointer<typename std::remove_cv<From>::type>::value>::type> { \
        static __cc_ptr<V> cast(const From& f) { return __cc_ptr<V>(CAST<V*>(f)); } \
    }; \
    /* reinterpret_cast<f4p>(x) with `typedef float4* f4p;` (source.py makes it __cc_ptr<float4>): as float4* */ \
    template <class V, class From> \
    struct NAME##_rule<__cc_ptr<V>, From, void> : NAME##_rule<V*, From> {}; \
    /* reinterpret_cast<uintptr_t>(p) of a checked pointer or an array: its address (an alignment test) */ \
    template <class V, class From> \
    struct NAME##_rule<V, From, typename std::enable_if<std::is_integral<V>::value && \
        (__cc_is_checked<typename std::remove_cv<From>::type>::value || \
         __cc_is_view<typename std::remove_cv<From>::type>::value)>::type> { \
        static V cast(const From& f) { return (V)(uintptr_t)(const volatile void*)f; } \
    }; \
    template <class To, class From> \
    __attribute__((always_inline)) static inline auto NAME(From& f) -> decltype(NAME##_rule<To, From>::cast(f)) { \
        return NAME##_rule<To, From>::cast(f); \
    } \
    template <class To, class From> \
    __attribute__((always_inline)) static inline auto NAME(const From& f) \
        -> decltype(NAME##_rule<To, const From>::cast(f)) { \
        return NAME##_rule<To, const From>::cast(f); \
    }
__CC_BOUNDS_KEEPING_CAST(__cc_reinterpret_cast, reinterpret_cast)
// reinterpret_cast<const float*>(u) of an integer (a uintptr_t round trip): a checked pointer that finds the
// allocation the address lies in, as the C cast `(const float*)u` does
template <class V, class From>
struct __cc_reinterpret_cast_rule<V*, From, typename std::enable_if<std::is_integral<typename std::remove_cv<From>::type>::value>::type> {
    static __cc_ptr<V> cast(const From& f) { return __cc_ptr<V>((uintptr_t)f); }
};
__CC_BOUNDS_KEEPING_CAST(__cc_const_cast, const_cast)
__CC_BOUNDS_KEEPING_CAST(__cc_static_cast, static_cast)
#undef __CC_BOUNDS_KEEPING_CAST

// `auto* p = &y[i];`, `auto p = &s[0];` (source.py): the pointer as a checked one, with its array's
// bounds: a raw pointer (the address of a __shared__ array's element) is looked up, a view (an
// array) points at its first element, a checked pointer stays as it is. (Also an array as it decays in
// `c ? s : t`, whose two views of different lengths `?:` cannot join, or passed for a pointer to rows.)
// (A struct's member array, `return v;` of a method that returns a pointer: a checked pointer with the
// member's extent, its constness kept.)
template <class P> static inline auto __cc_as_pointer(P&& p) {
    typedef typename std::remove_reference<P>::type R;
    typedef typename std::remove_cv<R>::type Q;
    if constexpr (std::is_pointer<Q>::value)
        return __cc_ptr<typename std::remove_pointer<Q>::type>(p);
    else if constexpr (__cc_is_view<Q>::value)
        return __cc_ptr<typename std::remove_pointer<decltype(p.p)>::type>(p);
    else if constexpr (std::is_array<R>::value && std::rank<R>::value == 1)
        return __cc_member_pointer(p, 0);
    else
        return Q(p);
}

// malloc, free, new and delete in device code (source.py renames them; see "The device heap").
// malloc's block comes back as a checked pointer, so `(float*)malloc(n * sizeof(float))` is
// bounds-checked like an argument array.
// (the kernel's line is the worker's call_line meanwhile: a stop anywhere inside, before the heap's own
// unsafe part too, names it)
static inline void* __cc_heap_alloc_at(size_t bytes, int how, int line) {
    __cc_worker* w = __cc_me;
    w->call_line = line;
    void* p = __cc_heap_alloc(bytes, how, line);
    if (how && p) w->new_block = (const char*)p, w->new_block_bytes = bytes;
    w->call_line = 0;
    return p;
}
static inline __cc_ptr<void> __cc_device_malloc(size_t bytes, int line = __builtin_LINE()) {
    void* p = __cc_heap_alloc_at(bytes, 0, line);
    if (!p) return __cc_ptr<void>((void*)nullptr);  // (an access through it: a null-pointer fault, with its line)
    return __cc_ptr<void>(p, 0, bytes, p);
}
// Not inlined: the return address is the kernel's call, which names the line.
template <class T>
__attribute__((noinline)) static void __cc_device_free_at(const T& pointer) {
    __cc_enter_unsafe();  // (free(NULL) too, which returns at once: a stop met in here names the call's line)
    __cc_heap_free((void*)(const void*)pointer, __cc_code_offset(__builtin_return_address(0)));
    __cc_leave_unsafe();
}
// The call's line is the worker's call_line meanwhile, as malloc's is: a time limit met in the function's
// own first or last instructions, outside its unsafe part, names it too (it named no line).
template <class T>
__attribute__((always_inline)) static inline void __cc_device_free(const T& pointer, int line = __builtin_LINE()) {
    __cc_worker* w = __cc_me;
    int saved = w->call_line;
    w->call_line = line;
    __cc_device_free_at(pointer);
    w->call_line = saved;
}
// `new (__cc_heap) T[n]` (source.py adds the tag to a kernel's new-expressions) takes the block from
// the device heap; `delete p` and `delete[] p` become __cc_device_delete(p, false / true).
// (the tag holds the new-expression's line)
struct __cc_heap_tag { int line; };
#define __cc_heap (__cc_heap_tag{__LINE__})
inline void* operator new(size_t bytes, __cc_heap_tag at) { return __cc_heap_alloc_at(bytes, 1, at.line); }
inline void* operator new[](size_t bytes, __cc_heap_tag at) { return __cc_heap_alloc_at(bytes, 2, at.line); }
inline void operator delete(void* p, __cc_heap_tag) { free(p); }    // (only if a constructor throws:
inline void operator delete[](void* p, __cc_heap_tag) { free(p); }  //  never, with -fno-exceptions)
template <class T>
__attribute__((noinline)) static void __cc_device_delete_at(const T& pointer, bool array) {
    typedef typename std::remove_cv<typename std::remove_pointer<decltype(&*pointer)>::type>::type E;
    E* p = (E*)(const void*)pointer;
    uint64_t site = __cc_code_offset(__builtin_return_address(0));
    if (!p) {
        __cc_enter_unsafe();  // (a stop met here names the delete's line: see __cc_device_free)
        __cc_leave_unsafe();
        return;
    }
    if constexpr (!std::is_trivially_destructible<E>::value) {
        if (array) {  // new E[n] put n in front of the elements (the Itanium C++ ABI's array cookie)
            const size_t cookie = sizeof(size_t) > alignof(E) ? sizeof(size_t) : alignof(E);
            char* block = (char*)p - cookie;
            if (!__cc_heap_is_block(block)) return __cc_heap_free(p, site, 2);  // (the fault: not new[]'s block)
            for (size_t i = ((size_t*)p)[-1]; i-- > 0;) p[i].~E();
            return __cc_heap_free(block, site, 2);
        }
        if (__cc_heap_is_block(p)) p->~E();
    }
    __cc_heap_free(p, site, array ? 2 : 1);
}
template <class T>
__attribute__((always_inline)) static inline void __cc_device_delete(const T& pointer, bool array,
                                                                      int line = __builtin_LINE()) {
    __cc_worker* w = __cc_me;  // (as __cc_device_free)
    int saved = w->call_line;
    w->call_line = line;
    __cc_device_delete_at(pointer, array);
    w->call_line = saved;
}

// An argument array as the launcher receives it from Python: its bytes must hold whole elements.
// (bits 40 and up: a NumPy record array's itemsize, which must be the struct's size)
template <class T>
static inline __cc_ptr<T> __cc_array_arg(const __cc_arg& a, int position) {
    size_t size = __cc_ptr<T>::__cc_size;
    size_t record = (size_t)(a.bits >> 40);
    if (std::is_class<typename std::remove_cv<T>::type>::value && record && record != size) {
        __cc_fault_out->index = position;
        __cc_fault_out->length = (int64_t)record;
        __cc_fault_out->element_bytes = (int64_t)size;
        __cc_fault_out->op = 2;
        __cc_fail(__CC_BAD_ARGUMENT, 0);
    }
    if ((size_t)a.count % size) {
        __cc_fault_out->index = position;
        __cc_fault_out->length = a.count;
        __cc_fault_out->element_bytes = (int64_t)size;
        __cc_fail(__CC_BAD_ARGUMENT, 0);
    }
    // None: a null pointer into no elements (__cc_none_array), so that every access through it fails the bounds
    // check, whose cold path reports it as a GPU's illegal address (__cc_out_of_bounds). Its index is 0, as every argument's is:
    // the compiler knows each argument pointer's index is 0 and checks p[i] with one comparison of i (an
    // unchecked index here made it add the index at every access: the vector add ran 1.5 times as long).
    if (!a.data) return __cc_ptr<T>(nullptr, 0, 0, &__cc_none_array);
    return __cc_ptr<T>((T*)a.data, 0, (size_t)a.count / size, a.data);
}

template <class T>
static inline T __cc_scalar_arg(const __cc_arg& a) {
    T value;
    memcpy(&value, &a.bits, sizeof(T));
    return value;
}

// A struct (or float4, ...) passed by value: Python sends its bytes.
template <class T>
static inline T __cc_struct_arg(const __cc_arg& a, int position) {
    if ((size_t)a.count != sizeof(T)) {
        __cc_fault_out->index = position;
        __cc_fault_out->length = a.count;
        __cc_fault_out->element_bytes = (int64_t)sizeof(T);
        __cc_fault_out->op = 1;
        __cc_fail(__CC_BAD_ARGUMENT, 0);
    }
    T value;
    memcpy((void*)&value, a.data, sizeof(T));
    return value;
}

// `__shared__ float tile[32][33];` and local arrays become raw storage plus a view: each
// subscript is checked against its own dimension (tile[i][40] is an error even though the
// address lies inside the array), and the array's name is known for the message.
#ifdef __CC_WITH_RUNTIME_OBJECT  // (never inlined: the object's)
__attribute__((noreturn, noinline, cold)) void __cc_array_out_of_bounds(
    const char* name, int shared, long long index, long long length, int subscript);
#else
__attribute__((noreturn, noinline, cold)) __CC_RT void __cc_array_out_of_bounds(
    const char* name, int shared, long long index, long long length, int subscript) {
    __cc_fault_out->code_offset = __cc_code_offset(__builtin_return_address(0));
    __cc_fault_out->index = index;
    __cc_fault_out->length = length;
    __cc_fault_out->op = shared;
    __cc_fault_out->count = subscript;
    snprintf(__cc_fault_out->text, sizeof __cc_fault_out->text, "%s", name);
    __cc_fail(__CC_ARRAY_OUT_OF_BOUNDS, 0);
}
#endif

// `acc.v[i]` of an array member: i checked against the extent the struct declares (source.py).
template <class I>
__attribute__((always_inline)) static inline I __cc_index(I i, long long extent, const char* member, int subscript) {
    if (__builtin_expect((unsigned long long)(long long)i >= (unsigned long long)extent, 0))
        __cc_array_out_of_bounds(member, 4, (long long)i, extent, subscript);
    return i;
}

// `w.v[i]` of a template struct's member, `v[i]` named bare in a method (source.py): checked against the
// extent of the member's type A (decltype), when it is an array; a pointer member checks itself.
template <class A, class I>
__attribute__((always_inline)) static inline I __cc_member_index(I i, const char* member, int subscript) {
    typedef typename std::remove_reference<A>::type T;
    if constexpr (std::is_array<T>::value && std::extent<T>::value > 0)
        return __cc_index(i, (long long)std::extent<T>::value, member, subscript);
    else
        return i;
}

template <class E>
struct __cc_view {
    typedef void __cc_checked;
    E* p;
    size_t n;
    const char* name;
    int shared;
    int subscript;  // 0 for the array itself, 1 for tile[i], ...
    // A row (tile[i]) knows the whole array it lies in: a pointer made from it, `float* p = tile[0];`,
    // may walk the whole array, as on a GPU (nullptr: the view is the whole array).
    const void* whole = nullptr;
    size_t whole_bytes = 0;

    __attribute__((always_inline)) void check(long long i) const {
        if (__builtin_expect((size_t)i >= n, 0)) __cc_array_out_of_bounds(name, shared, i, (long long)n, subscript);
    }
    template <class I, __CC_IF_INTEGER(I), class U = E>
    __attribute__((always_inline)) auto operator[](I i) const
        -> typename std::enable_if<std::is_array<U>::value, __cc_array_view<U>>::type {
        check((long long)i);
        return __cc_view<typename std::remove_extent<U>::type>{p[i], std::extent<U>::value, name, shared, subscript + 1,
                                                             base(), bytes()};
    }
    template <class I, __CC_IF_INTEGER(I), class U = E>
    __attribute__((always_inline)) auto operator[](I i) const
        -> typename std::enable_if<!std::is_array<U>::value, typename __cc_access_type<U>::type>::type {
        check((long long)i);
        return __cc_element(p + i);
    }
    __attribute__((always_inline)) typename __cc_access_type<E>::type operator*() const { check(0); return __cc_element(p); }
    // The array a pointer made from the view is checked against: the whole array a row lies in, or the view.
    const void* base() const { return whole ? whole : (const void*)p; }
    size_t bytes() const { return whole ? whole_bytes : n * sizeof(E); }
    template <class T>
    __cc_ptr<T> at(T* q) const {
        return __cc_ptr<T>(q, (size_t)((const char*)q - (const char*)base()) / sizeof(T), bytes() / sizeof(T), base());
    }
    __cc_ptr<E> ptr() const { return at(p); }
    // `float (&s)[64] = tile;` (a struct's member bound to the array, say): the array itself, at most as long as it
    // is (a reference binds to whole arrays; through it the elements are plain memory, neither checked nor noted)
    template <size_t N> using __cc_array_type = E[N];
    template <size_t N>
    operator __cc_array_type<N>&() const {
        if (N > n) check((long long)N - 1);
        return *reinterpret_cast<E(*)[N]>(p);
    }
    E* begin() const { return p; }  // `for (float v : arr)`: the loop stays inside the array
    E* end() const { return p + n; }
    size_t size() const { return n; }  // (`cuda::std::size(arr)`, as of the array)
    typedef typename std::remove_all_extents<E>::type __cc_inner;
    __cc_ptr<__cc_inner> flat() const {  // the whole array as its innermost elements
        return at((__cc_inner*)p);
    }
    template <class U, class = typename std::enable_if<std::is_convertible<E*, U*>::value>::type>
    operator __cc_ptr<U>() const { return ptr(); }
    operator E*() const { return p; }
    template <class U>
    explicit operator U*() const { return (U*)p; }
    // `(size_t)s`, `(uintptr_t)tile`: the array's address as a number (an alignment test), as nvcc gives it
    template <class I, class = typename std::enable_if<std::is_integral<I>::value && !std::is_same<I, bool>::value &&
                                                       sizeof(I) == sizeof(void*)>::type>
    explicit operator I() const { return (I)(uintptr_t)p; }
    template <class I, __CC_IF_INTEGER(I)>
    __cc_ptr<E> operator+(I i) const { return ptr() + i; }
};
// A view whose type knows its array's length, A = E[N]: what __cc_make_view gives, and what a
// __device__ function's array reference parameter `float (&r)[4]` (or `float (&r)[N]` of a template)
// becomes, so that r[i] in that function is checked against the array the caller passed.
template <class A>
struct __cc_array_view : __cc_view<typename std::remove_extent<A>::type> {
    typedef typename std::remove_extent<A>::type E;
    static constexpr size_t N = std::extent<A>::value;
    __cc_array_view(const __cc_view<E>& v) : __cc_view<E>(v) {
        if (v.n < N) __cc_array_out_of_bounds(v.name, v.shared, (long long)v.n, (long long)v.n, v.subscript);
    }
    template <class B, class = typename std::enable_if<
        std::is_convertible<typename std::remove_extent<B>::type*, E*>::value && std::extent<B>::value == N>::type>
    __cc_array_view(const __cc_array_view<B>& v) : __cc_view<E>{v.p, v.n, v.name, v.shared, v.subscript, v.whole, v.whole_bytes} {}
    __cc_array_view(A& raw) : __cc_view<E>{raw, N, "the array", 0, 0} {}  // (a struct's member array)
    A& __cc_array() const { return *reinterpret_cast<A*>(this->p); }  // sizeof(r) (source.py): sizeof(A)
    // `&r`, the address of the whole array (`memset(&r, 0, sizeof r)`, `(float4*)&tile`): a checked
    // pointer to it, not the address of the view
    __cc_ptr<A> operator&() const { return this->at(reinterpret_cast<A*>(this->p)); }
};
template <class U> struct __cc_element_of<__cc_array_view<U>> { typedef typename std::remove_extent<U>::type type; };
// A lambda's copy of a local array, `[=]` or `[buf]` (source.py: `buf = __cc_copy_of(buf)`): a view of
// elements of its own, copied when the lambda is made (a view alone would share the caller's array:
// a later `buf[0] = 10;` would show in the lambda, and a mutable lambda's writes in the caller).
template <class A>
struct __cc_array_copy : __cc_array_view<A> {
    typedef typename std::remove_extent<A>::type E;
    A data;
    void take(const E* from) {
        if constexpr (std::is_trivially_copyable<A>::value)
            memcpy((void*)data, (const void*)from, sizeof(A));
        else
            for (size_t i = 0; i < std::extent<A>::value; i++) data[i] = from[i];
        this->p = data, this->whole = nullptr, this->whole_bytes = 0;
    }
    explicit __cc_array_copy(const __cc_array_view<A>& v) : __cc_array_view<A>(v) { take(v.p); }
    __cc_array_copy(const __cc_array_copy& o) : __cc_array_view<A>(o) { take(o.data); }
    __cc_array_copy& operator=(const __cc_array_copy& o) {
        __cc_array_view<A>::operator=(o);
        take(o.data);
        return *this;
    }
};
template <class A>
static inline __cc_array_copy<A> __cc_copy_of(const __cc_array_view<A>& v) { return __cc_array_copy<A>(v); }
// `p - loc` and `loc - p` of a checked pointer and an array (the offset of p in it): both would
// convert to a raw pointer and to a checked one, so the difference is given here
template <class T, class E>
static inline ptrdiff_t operator-(const __cc_ptr<T>& q, const __cc_view<E>& v) { return q.p - v.p; }
template <class T, class E>
static inline ptrdiff_t operator-(const __cc_view<E>& v, const __cc_ptr<T>& q) { return v.p - q.p; }

// `for (float v : s)` over a __shared__ or local array: each copy into v is a read of the element
// (a loop by reference, `for (float& v : s)`, notes v's own uses instead: source.py).
template <class E>
struct __cc_reading {
    E *first, *last;
    struct iterator {
        E* p;
        E operator*() const { return __cc_r(*p); }
        iterator& operator++() { ++p; return *this; }
        bool operator!=(const iterator& o) const { return p != o.p; }
    };
    iterator begin() const { return {first}; }
    iterator end() const { return {last}; }
};
template <class E> static inline __cc_reading<E> __cc_each(const __cc_view<E>& v) { return {v.begin(), v.end()}; }
template <class X, class = typename std::enable_if<!__cc_is_view<typename std::decay<X>::type>::value>::type>
static inline X&& __cc_each(X&& x) { return static_cast<X&&>(x); }  // (anything else: as it is)


// `&x[i][j]` of a local array of arrays: the element's address, bounded by the whole of x.
template <class E, class T>
static inline __cc_ptr<T> __cc_address_in(const __cc_view<E>& whole, T* at) {
    auto flat = whole.flat();
    size_t bytes = flat.count * sizeof(*flat.p), offset = (size_t)((const char*)at - (const char*)flat.p);
    return __cc_ptr<T>(at, offset / sizeof(T), bytes / sizeof(T), flat.array);
}
// Shared memory is never silently zero: each block finds its __shared__ arrays filled with
// 0xFF bytes (NaN floats, -1 ints), as a GPU leaves whatever was there, so a kernel that reads
// what it never wrote gives a visibly wrong answer even without the sanitizer.
#define __cc_poisoned_arrays (__cc_me->poisoned)  // each worker has its own arrays
#define __cc_poisoned_count (__cc_me->poisoned_count)
// A block's static __shared__ arrays and its dynamic shared memory must fit in the 48 KiB a
// block gets (a GPU refuses the kernel or the launch): counted as each array is first declared
// in a launch. A kernel whose max_dynamic_shared_size_bytes was raised (cudaFuncSetAttribute)
// gets up to __cc_shared_limit in all (an A100's 163 KiB, set by cpu.launch), its static arrays
// still at most 48 KiB.
static const size_t __CC_MAX_SHARED = 48 * 1024;
__CC_STATE size_t __cc_shared_limit = __CC_MAX_SHARED;
__CC_EXPORT __CC_ONCE void __cc_set_shared_limit(long long bytes) { __cc_shared_limit = (size_t)bytes; }
static inline void __cc_count_static_shared(size_t bytes, const char* name, int line) {
    __cc_worker* w = __cc_me;
    if (w->static_shared_launch != __cc_current_launch) w->static_shared_launch = __cc_current_launch, w->static_shared = 0;
    w->static_shared += bytes;
    if (w->static_shared > __CC_MAX_SHARED || w->static_shared + __cc_dyn_shared_bytes > __cc_shared_limit) {
        __cc_fault_out->length = (int64_t)w->static_shared;
        __cc_fault_out->index = (int64_t)__cc_dyn_shared_bytes;
        __cc_fault_out->element_bytes = (int64_t)bytes;
        snprintf(__cc_fault_out->text, sizeof __cc_fault_out->text, "%s", name ? name : "");
        __cc_fail(__CC_SHARED_TOO_BIG, line);
    }
}
static inline void __cc_poison_once(void* base, size_t bytes, const char* name, int line = __builtin_LINE()) {
    for (int i = 0; i < __cc_poisoned_count; i++)
        if (__cc_poisoned_arrays[i].base == base) {
            if (__cc_poisoned_arrays[i].launch != __cc_current_launch) {
                __cc_poisoned_arrays[i].launch = __cc_current_launch;
                __cc_count_static_shared(bytes, name, line);
            }
            if (__cc_poisoned_arrays[i].block_epoch != __cc_block_epoch) {
                memset(base, __cc_shared_fill(), bytes);
                __cc_poisoned_arrays[i].block_epoch = __cc_block_epoch;
            }
            return;
        }
    if (__cc_poisoned_count < __CC_MAX_SHARED_ARRAYS) {  // (past that many, an array is neither poisoned nor counted)
        memset(base, __cc_shared_fill(), bytes);
        __cc_poisoned_arrays[__cc_poisoned_count++] = {base, __cc_block_epoch, bytes, name, __cc_current_launch};
        __cc_count_static_shared(bytes, name, line);
    }
}

// The extents of E, an array's row (`float[8][8]` of `s[4][8][8]`): 8, 8, 0 (none past 4 dimensions).
struct __cc_extents { uint32_t n[3]; };
template <class E>
static inline __cc_extents __cc_inner_extents() {
    if (std::rank<E>::value > 3) return {{0, 0, 0}};
    return {{(uint32_t)std::extent<E, 0>::value, (uint32_t)std::extent<E, 1>::value, (uint32_t)std::extent<E, 2>::value}};
}

template <class E, size_t N>
static inline __cc_array_view<E[N]> __cc_make_view(E (&a)[N], const char* name, int shared, int line = __builtin_LINE()) {
    E* p = a;
    if (shared == 0) __cc_local_fits<E, N>(name, line);
    if (shared == 1) {  // 0 a local array, 1 __shared__, 2 __constant__, 3 __device__
        __cc_poison_once((void*)a, sizeof a, name, line);
        if (__cc_sanitizing)
            __cc_register_shared((void*)a, sizeof a, std::is_array<E>::value ? sizeof(E) : 0, name, false,
                                 sizeof(typename std::remove_all_extents<E>::type), __cc_inner_extents<E>().n);
#ifndef __CC_SERIAL_BUILD
        // A static __shared__ array is thread_local (one per worker): hide where p comes from,
        // or the compiler finds the array's address again (a call) after every barrier.
        __asm__("" : "+r"(p));
#endif
    }
    return __cc_view<E>{p, N, name, shared, 0};
}
// `sum(p.v)`, `sum(q->v)` of a struct's member array, where each function sum takes an array reference
// (`const float (&x)[N]`, a view in the rewrite: source.py): a view of the member, named ".v" (a member
// array, 4, in a fault's message)
template <class E, size_t N>
static inline __cc_array_view<E[N]> __cc_member_view(E (&a)[N], const char* member) {
    return __cc_view<E>{a, N, member, 4, 0};
}

// `__shared__ int count;` (one variable, not an array) gets the same as an array: 0xFF bytes at
// every block start and a place in the sanitizer's shared memory, so that a race on it, or a read
// before any thread of the block wrote it, is reported too (source.py notes its uses).
static inline void __cc_shared_scalar(void* p, size_t bytes, const char* name, int line = __builtin_LINE()) {
    __cc_poison_once(p, bytes, name, line);
    if (__cc_sanitizing) __cc_register_shared(p, bytes, __CC_SCALAR, name);
}

// `extern __shared__ float s[];` becomes `static __cc_dynamic_shared<float> s;`: the launch's
// shared_mem bytes, checked like an argument array.
template <class T>
struct __cc_dynamic_shared {
    typedef void __cc_checked;
    __attribute__((always_inline)) __cc_ptr<T> get() const {
        if constexpr (std::is_array<T>::value) {  // rows: a last row the memory holds only part of counts too
            __cc_ptr<T> rows((T*)__cc_dyn_shared, 0, 0, __cc_dyn_shared);
            rows.locate(__cc_dyn_shared, 0, __cc_dyn_shared_bytes);
            return rows;
        }
        return __cc_ptr<T>((T*)__cc_dyn_shared, 0, __cc_dyn_shared_bytes / sizeof(T), __cc_dyn_shared);
    }
    template <class I, __CC_IF_INTEGER(I)>
    __cc_ptr<T> operator-(I i) const { return get() - i;
    }
    template <class I, __CC_IF_INTEGER(I)>
    __attribute__((always_inline)) auto operator[](I i) const -> decltype(std::declval<__cc_ptr<T>>()[i]) {
        return get()[i];  // (an element, or a row of `extern __shared__ float s[][N]`)
    }
    __attribute__((always_inline)) auto operator*() const -> decltype(*std::declval<__cc_ptr<T>>()) { return *get(); }
    template <class U, class = typename std::enable_if<std::is_convertible<T*, U*>::value>::type>
    operator __cc_ptr<U>() const { return get(); }
    operator T*() const { return (T*)__cc_dyn_shared; }
    template <class U>
    explicit operator U*() const { return (U*)__cc_dyn_shared; }
    template <class I, __CC_IF_INTEGER(I)>
    __cc_ptr<T> operator+(I i) const { return get() + i; }
};

template <class T> template <class E>
__cc_ptr<T>::__cc_ptr(const __cc_view<E>& v) : __cc_ptr(v.flat()) {}
template <class T> template <class S>
__cc_ptr<T>::__cc_ptr(const __cc_dynamic_shared<S>& d) : __cc_ptr(d.get()) {}

// ---------------------------------------------------------------------------------------
// The time limit and Ctrl-C: a watchdog thread signals every worker at the deadline and the
// signal handler jumps out of the kernel (see __cc_on_stop_signal). Nothing is added
// to the kernel's own loops, so they run as fast as plain C.
// ---------------------------------------------------------------------------------------

static inline long long __cc_now_ns() {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static const int __CC_WATCHDOG_SIGNAL = SIGURG;  // ignored by default; nothing else here uses it
__CC_STATE volatile sig_atomic_t __cc_stop;     // why the launch must stop: __CC_TIMEOUT, __CC_INTERRUPTED
__CC_STATE volatile sig_atomic_t __cc_launching;

// The line a stop names when the pc does not: the waiting loop a thread is in, or the last barrier.
static inline int __cc_stop_line(const __cc_worker* w) {
    return w->call_line ? w->call_line : w->spin_line ? w->spin_line : w->warp_line && !__cc_last_site ? w->warp_line : w->last_barrier_line;
}
static inline void __cc_name_first_waiter(__cc_worker* w);  // (below, with the fibers)
// Whether worker `w` must stop now: the time limit or Ctrl-C, or an earlier block faulted.
static inline void __cc_check_stop(__cc_worker* w) {
    if (__cc_stop) __cc_name_first_waiter(w), __cc_fail(__cc_stop, __cc_stop_line(w));
    if (w->block > __atomic_load_n(&__cc_fault_min, __ATOMIC_SEQ_CST)) __cc_cancel(w);
}
// (Always inlined: the return address is that of the runtime function's caller, printf's or malloc's
// call in the kernel, which a time limit met inside names.)
__attribute__((always_inline)) static inline void __cc_enter_unsafe() {
    __cc_worker* w = __cc_me;
    if (w->unsafe == 0) w->unsafe_site = __cc_code_offset(__builtin_return_address(0));
    w->unsafe = w->unsafe + 1;
}
static inline void __cc_leave_unsafe() {  // a stop that came meanwhile takes effect now
    __cc_worker* w = __cc_me;
    w->unsafe = w->unsafe - 1;
    if (w->unsafe == 0 && w->active) {
        if (__cc_stop) w->fault.code_offset = w->unsafe_site;
        __cc_check_stop(w);
    }
}

// Send `signal` to every worker of the launch that may still run blocks (but not to `except`).
__CC_RT void __cc_signal_workers(int signal, const __cc_worker* except) {
    for (int k = 0; k < __cc_worker_count; k++) {
        __cc_worker* v = &__cc_workers[k];
        if (v != except && v->alive && v->active) pthread_kill(v->thread, signal);
    }
}

// The watchdog sleeps until the deadline of the launch it knows about. A launch only wakes it
// when it is idle or must wake earlier than planned, so launches in quick succession cost an
// uncontended mutex, not a thread switch each.
__CC_STATE pthread_mutex_t __cc_watch_lock = PTHREAD_MUTEX_INITIALIZER;
__CC_STATE pthread_cond_t __cc_watch_wake = PTHREAD_COND_INITIALIZER;
enum { __CC_WATCH_IDLE, __CC_WATCH_TIMING, __CC_WATCH_FIRED };
__CC_STATE int __cc_watch_state;                 // waiting for a launch, for its deadline, for its end
__CC_STATE bool __cc_watch_started, __cc_watch_active;
__CC_STATE unsigned long __cc_watch_launch;      // counts launches, so a late wake-up is not misread
__CC_STATE struct timespec __cc_watch_deadline;  // CLOCK_REALTIME, as pthread_cond_timedwait wants
__CC_STATE struct timespec __cc_watch_planned;   // when the watchdog plans to wake up

__CC_RT bool __cc_before(const struct timespec& a, const struct timespec& b) {
    return a.tv_sec < b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec < b.tv_nsec);
}

__CC_RT void* __cc_watchdog(void*) {
    pthread_mutex_lock(&__cc_watch_lock);
    for (;;) {
        if (!__cc_watch_active) {
            __cc_watch_state = __CC_WATCH_IDLE;
            pthread_cond_wait(&__cc_watch_wake, &__cc_watch_lock);
            continue;
        }
        unsigned long launch = __cc_watch_launch;
        __cc_watch_planned = __cc_watch_deadline;
        __cc_watch_state = __CC_WATCH_TIMING;
        int waited = pthread_cond_timedwait(&__cc_watch_wake, &__cc_watch_lock, &__cc_watch_planned);
        if (waited == ETIMEDOUT && __cc_watch_active && __cc_watch_launch == launch) {
            __cc_watch_state = __CC_WATCH_FIRED;
            __cc_stop = __CC_TIMEOUT;
            __cc_signal_workers(__CC_WATCHDOG_SIGNAL, nullptr);  // workers stay alive until __cc_watch_end
            while (__cc_watch_active && __cc_watch_launch == launch)  // until that launch ends
                pthread_cond_wait(&__cc_watch_wake, &__cc_watch_lock);
        }
    }
    return nullptr;
}

__CC_RT void __cc_pool_after_fork();
__CC_RT void __cc_watch_after_fork() {  // a forked child has no watchdog thread: start anew
    pthread_mutex_init(&__cc_watch_lock, nullptr);
    pthread_cond_init(&__cc_watch_wake, nullptr);
    __cc_watch_started = __cc_watch_active = false;
    __cc_watch_state = __CC_WATCH_IDLE;
    __cc_pool_after_fork();
}

__CC_RT void __cc_watch_begin(long long limit_ms) {
    pthread_mutex_lock(&__cc_watch_lock);
    if (!__cc_watch_started) {
        pthread_attr_t attributes;
        pthread_attr_init(&attributes);
        pthread_attr_setstacksize(&attributes, 64 * 1024);
        pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
        pthread_t thread;
        __cc_watch_started = pthread_create(&thread, &attributes, __cc_watchdog, nullptr) == 0;
        pthread_attr_destroy(&attributes);
        static bool registered = false;
        if (!registered) registered = pthread_atfork(nullptr, nullptr, __cc_watch_after_fork) == 0;
    }
    clock_gettime(CLOCK_REALTIME, &__cc_watch_deadline);
    long long ns = __cc_watch_deadline.tv_nsec + (limit_ms % 1000) * 1000000LL;
    __cc_watch_deadline.tv_sec += (time_t)(limit_ms / 1000 + ns / 1000000000LL);
    __cc_watch_deadline.tv_nsec = (long)(ns % 1000000000LL);
    __cc_watch_launch++;
    __cc_watch_active = true;
    if (__cc_watch_state != __CC_WATCH_TIMING || __cc_before(__cc_watch_deadline, __cc_watch_planned))
        pthread_cond_signal(&__cc_watch_wake);
    pthread_mutex_unlock(&__cc_watch_lock);
}

__CC_RT void __cc_watch_end() {
    pthread_mutex_lock(&__cc_watch_lock);
    __cc_watch_active = false;  // a timing watchdog notices when it next wakes up
    if (__cc_watch_state == __CC_WATCH_FIRED) pthread_cond_signal(&__cc_watch_wake);
    pthread_mutex_unlock(&__cc_watch_lock);
}

// ---------------------------------------------------------------------------------------
// printf: collected in a buffer that Python writes to sys.stdout after the launch
// ---------------------------------------------------------------------------------------

// Each worker keeps its text block by block (segments); at the end of the launch the segments
// are put together in block order, so lines stay whole and come in the order of a serial run.
__CC_STATE char* __cc_out;                 // the launch's text, for Python
__CC_STATE size_t __cc_out_len, __cc_out_cap;
__CC_STATE int __cc_out_truncated;
static const size_t __CC_OUT_MAX = 1 << 20;  // CUDA's printf buffer is 1 MiB too

__CC_RT bool __cc_grow(char** buffer, size_t* capacity, size_t wanted) {
    if (wanted <= *capacity) return true;
    size_t cap = *capacity ? *capacity : 1 << 16;
    while (cap < wanted) cap *= 2;
    char* grown = (char*)realloc(*buffer, cap);
    if (!grown) return false;
    *buffer = grown, *capacity = cap;
    return true;
}

__CC_RT int __cc_vprintf(const char* format, va_list args) {
    __cc_worker* w = __cc_me;
    char local[512];
    va_list again;
    va_copy(again, args);
    int n = vsnprintf(local, sizeof local, format, args);
    // Each worker keeps the first 1 MiB of its blocks' text (blocks come to a worker in launch order, so
    // that holds all its part of the launch's first MiB); __cc_collect_output cuts the whole at 1 MiB,
    // after a whole line: the same text however many workers ran the blocks. (A text that does not fit
    // fills the MiB to its last byte: nothing after it fits either.)
    size_t room = __CC_OUT_MAX - w->out_len;
    if (n > 0 && (size_t)n > room) __cc_out_truncated = 1;
    if (n > 0 && room > 0) {
        bool new_segment = !w->segment_count || w->segments[w->segment_count - 1].block != w->block;
        if (new_segment && w->segment_count == w->segment_cap) {
            size_t cap = w->segment_cap ? 2 * w->segment_cap : 64;
            void* grown = realloc(w->segments, cap * sizeof(__cc_out_segment));
            if (grown) w->segments = (__cc_out_segment*)grown, w->segment_cap = cap;
        }
        if ((!new_segment || w->segment_count < w->segment_cap) && __cc_grow(&w->out, &w->out_cap, w->out_len + (size_t)n + 1)) {
            if (new_segment) w->segments[w->segment_count++] = {w->block, w->out_len, 0};
            if ((size_t)n < sizeof local)
                memcpy(w->out + w->out_len, local, (size_t)n);
            else  // longer than the local buffer: format again, straight into the output
                vsnprintf(w->out + w->out_len, (size_t)n + 1, format, again);
            size_t kept = (size_t)n < room ? (size_t)n : room;
            w->out_len += kept;
            w->segments[w->segment_count - 1].length += kept;
        }
    }
    va_end(again);
    return n;
}

// (extern "C", so that a kernel's own `extern "C" int printf(const char*, ...);`, which samples
// declare instead of including <cstdio>, declares this one again rather than another)
extern "C" __attribute__((format(printf, 1, 2), visibility("hidden"))) __CC_ONCE int __cc_printf(const char* format, ...) {
    va_list args;
    va_start(args, format);
    __cc_enter_unsafe();
    int n = __cc_vprintf(format, args);
    va_end(args);
    __cc_leave_unsafe();
    return n;
}

// After a launch: the workers' text, block by block in launch order, up to block `last`
// (blocks after a fault would not have run one at a time).
__CC_RT void __cc_collect_output(long long last) {
    size_t next[__CC_MAX_WORKERS] = {};
    for (;;) {
        int best = -1;
        for (int k = 0; k < __cc_worker_count; k++) {
            const __cc_worker& w = __cc_workers[k];
            if (next[k] < w.segment_count && w.segments[next[k]].block <= last &&
                (best < 0 || w.segments[next[k]].block < __cc_workers[best].segments[next[best]].block))
                best = k;
        }
        if (best < 0) break;
        const __cc_out_segment& g = __cc_workers[best].segments[next[best]++];
        size_t length = g.length;
        const char* text = __cc_workers[best].out + g.start;
        if (__cc_out_len + length > __CC_OUT_MAX) length = __CC_OUT_MAX - __cc_out_len, __cc_out_truncated = 1;
        if (length && __cc_grow(&__cc_out, &__cc_out_cap, __cc_out_len + length + 1)) {
            memcpy(__cc_out + __cc_out_len, text, length);
            __cc_out_len += length;
        }
        if (length < g.length) break;
    }
    if (__cc_out_truncated)  // the first MiB, up to its last whole line
        while (__cc_out_len > 0 && __cc_out[__cc_out_len - 1] != '\n') __cc_out_len--;
    for (int k = 0; k < __cc_worker_count; k++)
        __cc_workers[k].out_len = __cc_workers[k].segment_count = 0;
}

// Python takes the text after each launch (and after a fault: what was printed so far).
__CC_EXPORT __CC_ONCE const char* __cc_take_output(size_t* length, int* truncated) {
    *length = __cc_out_len;
    *truncated = __cc_out_truncated;
    __cc_out_len = 0;
    __cc_out_truncated = 0;
    return __cc_out;
}

#ifdef __CC_WITH_RUNTIME_OBJECT  // (never inlined: the object's)
__attribute__((noreturn, noinline, cold)) void __cc_assert_fail(const char* expr, int line);
#else
__attribute__((noreturn, noinline, cold)) __CC_RT void __cc_assert_fail(const char* expr, int line) {
    snprintf(__cc_fault_out->text, sizeof __cc_fault_out->text, "%s", expr);
    __cc_fail(__CC_ASSERT, line);
}
#endif

// ---------------------------------------------------------------------------------------
// Half precision (cuda_fp16.h, cuda_bf16.h): 16-bit storage, arithmetic in float rounded back
// to nearest-even. A float holds 24 bits, at least 2×11+2 (half) and 2×8+2 (bfloat16), so
// rounding twice (to float, then to 16 bits) gives the correctly rounded result of +, -, *, /
// and sqrt, as the hardware's own half instructions do.
// ---------------------------------------------------------------------------------------

static inline unsigned short __cc_float_to_half_bits(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u;
    x &= 0x7fffffffu;
    if (x > 0x7f800000u) return 0x7fffu;                      // NaN (CUDA's canonical NaN)
    if (x >= 0x477ff000u) return (unsigned short)(sign | 0x7c00u);  // >= 65520 rounds to inf
    if (x < 0x38800000u) {                                   // below 2^-14: a subnormal half
        float v;
        memcpy(&v, &x, 4);
        return (unsigned short)(sign | (uint32_t)nearbyintf(v * 16777216.0f));  // units of 2^-24, ties to even
    }
    uint32_t rounded = x + 0xfffu + ((x >> 13) & 1u);        // round the 13 dropped bits to nearest-even
    return (unsigned short)(sign | ((rounded - 0x38000000u) >> 13));
}
static inline float __cc_half_bits_to_float(unsigned short h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, x;
    if (e == 0) {
        float v = (float)m * (1.0f / 16777216.0f);
        return sign ? -v : v;
    }
    x = e == 31 ? sign | 0x7f800000u | (m << 13) : sign | ((e + 112u) << 23) | (m << 13);
    float f;
    memcpy(&f, &x, 4);
    return f;
}
static inline unsigned short __cc_float_to_bf16_bits(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) return 0x7fffu;
    return (unsigned short)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
static inline float __cc_bf16_bits_to_float(unsigned short b) {
    uint32_t x = (uint32_t)b << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

// A double or an integer as a float rounded to odd: toward zero, with the last bit set when that was inexact.
// Rounded again to a half or a bfloat16 (fewer than 22 bits), that gives the value rounded once, as the
// GPU's cvt from f64 does: through a float rounded to nearest, 1 + 2^-11 + 2^-40 would be 1 + 2^-11, a tie,
// rounded to 1 instead of up.
static inline float __cc_odd_float(long double x) {
    float f = (float)x;
    if (x != x || (long double)f == x) return f;
    if (fabsl((long double)f) > fabsl(x)) f = nextafterf(f, 0.0f);  // (inf, for a value past FLT_MAX: FLT_MAX)
    uint32_t bits;
    memcpy(&bits, &f, 4);
    bits |= 1u;
    memcpy(&f, &bits, 4);
    return f;
}

// The arithmetic intrinsics with a rounding mode (__fadd_rz, __fmaf_ru, __dsqrt_rd, ...): the operation done
// by the CPU in that mode (fesetround), which IEEE 754 defines exactly as PTX's .rz, .rp and .rm do: the
// largest finite value toward zero on overflow, -0 for an exact zero sum rounded down, subnormal results, an
// fma's single rounding however far apart its terms are. The operands pass through an empty asm after the
// mode is set, and the result before it is restored: the compiler can neither fold the operation at compile
// time nor move it out of the mode (it does not see fesetround's effect on arithmetic).
// `inexact`: set to whether the result was rounded (the FE_INEXACT flag of just this operation).
template <class T, class Op> static inline T __cc_in_mode(int mode, T a, T b, T c, Op op, bool* inexact = nullptr) {
    static const int modes[4] = {FE_TONEAREST, FE_TOWARDZERO, FE_UPWARD, FE_DOWNWARD};
    const int saved = fegetround();
    fesetround(modes[mode]);
    if (inexact) feclearexcept(FE_INEXACT);
    __asm__ volatile("" : "+m"(a), "+m"(b), "+m"(c) : : "memory");
    T r = op(a, b, c);
    __asm__ volatile("" : "+m"(r) : : "memory");
    if (inexact) *inexact = fetestexcept(FE_INEXACT) != 0;
    fesetround(saved);
    return r;
}
// a * b + c rounded once to odd in double (fma toward zero, the last bit set where it was inexact): a half's
// or a bfloat16's fma rounded from it is rounded once, as the GPU's fma.rn.f16 is.
static inline double __cc_fma_odd(double a, double b, double c) {
    bool inexact;
    double r = __cc_in_mode(1, a, b, c, [](double x, double y, double z) { return fma(x, y, z); }, &inexact);
    if (inexact && r == r && !isinf(r)) {
        uint64_t bits;
        memcpy(&bits, &r, 8);
        bits |= 1u;
        memcpy(&r, &bits, 8);
    }
    return r;
}

struct __half_raw { unsigned short x; };
struct __half2_raw { unsigned short x, y; };
struct __nv_bfloat16_raw { unsigned short x; };
struct __nv_bfloat162_raw { unsigned short x, y; };

template <class I> static inline I __cc_half_to_integer(float v);  // (after __cc_to_integer)
#define __CC_HALF_TYPE(H, N, TO_BITS, TO_FLOAT) \
    struct H { \
        unsigned short __x; \
        H() = default; \
        H(float f) : __x(TO_BITS(f)) {} \
        H(double d) : __x(TO_BITS(__cc_odd_float(d))) {} \
        H(int i) : __x(TO_BITS(__cc_odd_float(i))) {} \
        H(unsigned int i) : __x(TO_BITS(__cc_odd_float(i))) {} \
        H(long long i) : __x(TO_BITS(__cc_odd_float(i))) {} \
        H(unsigned long long i) : __x(TO_BITS(__cc_odd_float(i))) {} \
        H(short i) : __x(TO_BITS((float)i)) {} \
        H(unsigned short i) : __x(TO_BITS((float)i)) {} \
        H(const H##_raw& r) : __x(r.x) {}  /* cuda_fp16.hpp's conversions from and to the raw bits */ \
        operator H##_raw() const { H##_raw r; r.x = __x; return r; } \
        H& operator=(const H##_raw& r) { __x = r.x; return *this; } \
        operator float() const { return TO_FLOAT(__x); } \
        /* int i = h, (int)h: CUDA's conversion operators, rounded toward zero and saturating (NaN \
           gives 0), not C++'s float-to-integer conversion. As in cuda_fp16.hpp, those to short, int, \
           long long (signed and unsigned) and bool are implicit (so `h * 2.0f` is ambiguous, as for \
           nvcc), the others (char, long) explicit. */ \
        operator short() const { return __cc_half_to_integer<short>(TO_FLOAT(__x)); } \
        operator unsigned short() const { return __cc_half_to_integer<unsigned short>(TO_FLOAT(__x)); } \
        operator int() const { return __cc_half_to_integer<int>(TO_FLOAT(__x)); } \
        operator unsigned int() const { return __cc_half_to_integer<unsigned int>(TO_FLOAT(__x)); } \
        operator long long() const { return __cc_half_to_integer<long long>(TO_FLOAT(__x)); } \
        operator unsigned long long() const { return __cc_half_to_integer<unsigned long long>(TO_FLOAT(__x)); } \
        operator bool() const { return (__x & 0x7fffu) != 0; } \
        template <class I, class = typename std::enable_if<std::is_integral<I>::value && \
                                                           !std::is_same<I, bool>::value>::type> \
        explicit operator I() const { return __cc_half_to_integer<I>(TO_FLOAT(__x)); } \
        H& operator=(float f) { __x = TO_BITS(f); return *this; } \
        H& operator=(double d) { __x = TO_BITS(__cc_odd_float(d)); return *this; } \
        volatile H& operator=(const H& o) volatile { __x = o.__x; return *this; } \
        H& operator=(const H& o) { __x = o.__x; return *this; } \
        H(const volatile H& o) : __x(o.__x) {} \
        H(const H& o) = default; \
    }; \
    static inline H __cc_make_##H(float f) { return H(f); } \
    static inline H operator+(H a, H b) { return H((float)a + (float)b); } \
    static inline H operator-(H a, H b) { return H((float)a - (float)b); } \
    static inline H operator*(H a, H b) { return H((float)a * (float)b); } \
    static inline H operator/(H a, H b) { return H((float)a / (float)b); } \
    static inline H operator-(H a) { H r = a; r.__x ^= 0x8000u; return r; } \
    static inline H operator+(H a) { return a; } \
    static inline H& operator+=(H& a, H b) { return a = a + b; } \
    static inline H& operator-=(H& a, H b) { return a = a - b; } \
    static inline H& operator*=(H& a, H b) { return a = a * b; } \
    static inline H& operator/=(H& a, H b) { return a = a / b; } \
    static inline H& operator++(H& a) { return a = a + H(1.0f); } \
    static inline H& operator--(H& a) { return a = a - H(1.0f); } \
    static inline bool operator==(H a, H b) { return (float)a == (float)b; } \
    static inline bool operator!=(H a, H b) { return (float)a != (float)b; } \
    static inline bool operator<(H a, H b) { return (float)a < (float)b; } \
    static inline bool operator<=(H a, H b) { return (float)a <= (float)b; } \
    static inline bool operator>(H a, H b) { return (float)a > (float)b; } \
    static inline bool operator>=(H a, H b) { return (float)a >= (float)b; } \
    struct __attribute__((aligned(4))) H##2 { \
        H x, y; \
        H##2() = default; \
        H##2(H a, H b) : x(a), y(b) {} \
        H##2(const H##2_raw& r) { x.__x = r.x, y.__x = r.y; } \
        operator H##2_raw() const { H##2_raw r; r.x = x.__x, r.y = y.__x; return r; } \
        H##2(const volatile H##2& o) : x(o.x), y(o.y) {} \
        H##2(const H##2& o) = default; \
        H##2& operator=(const H##2& o) = default; \
        volatile H##2& operator=(const H##2& o) volatile { x = o.x; y = o.y; return *this; } \
    }; \
    static inline H##2 operator+(H##2 a, H##2 b) { return H##2(a.x + b.x, a.y + b.y); } \
    static inline H##2 operator-(H##2 a, H##2 b) { return H##2(a.x - b.x, a.y - b.y); } \
    static inline H##2 operator*(H##2 a, H##2 b) { return H##2(a.x * b.x, a.y * b.y); } \
    static inline H##2 operator/(H##2 a, H##2 b) { return H##2(a.x / b.x, a.y / b.y); } \
    static inline H##2 operator-(H##2 a) { return H##2(-a.x, -a.y); } \
    static inline H##2& operator+=(H##2& a, H##2 b) { return a = a + b; } \
    static inline H##2& operator-=(H##2& a, H##2 b) { return a = a - b; } \
    static inline H##2& operator*=(H##2& a, H##2 b) { return a = a * b; } \
    static inline bool operator==(H##2 a, H##2 b) { return a.x == b.x && a.y == b.y; } \
    static inline bool operator!=(H##2 a, H##2 b) { return !(a == b); } \
    static inline H __hadd(H a, H b) { return a + b; } \
    static inline H __hsub(H a, H b) { return a - b; } \
    static inline H __hmul(H a, H b) { return a * b; } \
    static inline H __hdiv(H a, H b) { return a / b; } \
    static inline H __hfma(H a, H b, H c) { return H(__cc_fma_odd((float)a, (float)b, (float)c)); } \
    static inline H __hneg(H a) { return -a; } \
    static inline H __habs(H a) { H r = a; r.__x &= 0x7fffu; return r; } \
    /* (of +0 and -0: +0 is the larger, either way round) */ \
    static inline H __hmax(H a, H b) { \
        return (float)a != (float)a ? b : (float)b != (float)b ? a : (a > b || (a == b && !(a.__x & 0x8000u)) ? a : b); \
    } \
    static inline H __hmin(H a, H b) { \
        return (float)a != (float)a ? b : (float)b != (float)b ? a : (a < b || (a == b && (a.__x & 0x8000u)) ? a : b); \
    } \
    static inline H __cc_sat(H a) { float f = a; return H(f != f ? 0.0f : f < 0.0f ? 0.0f : f > 1.0f ? 1.0f : f); } \
    static inline H __hadd_sat(H a, H b) { return __cc_sat(a + b); } \
    static inline H __hsub_sat(H a, H b) { return __cc_sat(a - b); } \
    static inline H __hmul_sat(H a, H b) { return __cc_sat(a * b); } \
    static inline H __hfma_sat(H a, H b, H c) { return __cc_sat(__hfma(a, b, c)); } \
    static inline H __hfma_relu(H a, H b, H c) { H r = __hfma(a, b, c); return (float)r < 0.0f ? H(0.0f) : r; } \
    static inline bool __heq(H a, H b) { return a == b; } \
    static inline bool __hne(H a, H b) { return a < b || a > b; }  /* ordered: false for NaN */ \
    static inline bool __hlt(H a, H b) { return a < b; } \
    static inline bool __hle(H a, H b) { return a <= b; } \
    static inline bool __hgt(H a, H b) { return a > b; } \
    static inline bool __hge(H a, H b) { return a >= b; } \
    static inline bool __hisnan(H a) { float f = a; return f != f; } \
    static inline int __hisinf(H a) { float f = a; return isinf(f) ? (f < 0 ? -1 : 1) : 0; } \
    static inline H hsqrt(H a) { return H(sqrtf((float)a)); } \
    static inline H hrsqrt(H a) { return H(1.0f / sqrtf((float)a)); } \
    static inline H hrcp(H a) { return H(1.0f / (float)a); } \
    static inline H hexp(H a) { return H(expf((float)a)); } \
    static inline H hexp2(H a) { return H(exp2f((float)a)); } \
    static inline H hlog(H a) { return H(logf((float)a)); } \
    static inline H hlog2(H a) { return H(log2f((float)a)); } \
    static inline H hsin(H a) { return H(sinf((float)a)); } \
    static inline H hcos(H a) { return H(cosf((float)a)); } \
    static inline H hfloor(H a) { return H(floorf((float)a)); } \
    static inline H hceil(H a) { return H(ceilf((float)a)); } \
    static inline H htrunc(H a) { return H(truncf((float)a)); } \
    static inline H hrint(H a) { return H(nearbyintf((float)a)); } \
    static inline H hlog10(H a) { return H(log10f((float)a)); } \
    static inline H hexp10(H a) { return H(powf(10.0f, (float)a)); } \
    static inline H __hadd_rn(H a, H b) { return a + b; }  /* (_rn: never contracted into an fma; nothing is here) */ \
    static inline H __hsub_rn(H a, H b) { return a - b; } \
    static inline H __hmul_rn(H a, H b) { return a * b; } \
    static inline H##2 __hadd2(H##2 a, H##2 b) { return a + b; } \
    static inline H##2 __hsub2(H##2 a, H##2 b) { return a - b; } \
    static inline H##2 __hmul2(H##2 a, H##2 b) { return a * b; } \
    static inline H##2 __h2div(H##2 a, H##2 b) { return a / b; } \
    static inline H##2 __hfma2(H##2 a, H##2 b, H##2 c) { return H##2(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)); } \
    static inline H##2 __hneg2(H##2 a) { return -a; } \
    static inline H##2 __habs2(H##2 a) { return H##2(__habs(a.x), __habs(a.y)); } \
    static inline H##2 __hmax2(H##2 a, H##2 b) { return H##2(__hmax(a.x, b.x), __hmax(a.y, b.y)); } \
    static inline H##2 __hmin2(H##2 a, H##2 b) { return H##2(__hmin(a.x, b.x), __hmin(a.y, b.y)); } \
    static inline H##2 __hadd2_sat(H##2 a, H##2 b) { return H##2(__hadd_sat(a.x, b.x), __hadd_sat(a.y, b.y)); } \
    static inline H##2 __hmul2_sat(H##2 a, H##2 b) { return H##2(__hmul_sat(a.x, b.x), __hmul_sat(a.y, b.y)); } \
    static inline H##2 __hsub2_sat(H##2 a, H##2 b) { return H##2(__hsub_sat(a.x, b.x), __hsub_sat(a.y, b.y)); } \
    static inline H##2 __hfma2_sat(H##2 a, H##2 b, H##2 c) { return H##2(__hfma_sat(a.x, b.x, c.x), __hfma_sat(a.y, b.y, c.y)); } \
    static inline H##2 __hfma2_relu(H##2 a, H##2 b, H##2 c) { \
        return H##2(__hfma_relu(a.x, b.x, c.x), __hfma_relu(a.y, b.y, c.y)); \
    } \
    static inline H##2 __hadd2_rn(H##2 a, H##2 b) { return a + b; } \
    static inline H##2 __hsub2_rn(H##2 a, H##2 b) { return a - b; } \
    static inline H##2 __hmul2_rn(H##2 a, H##2 b) { return a * b; } \
    /* complex a * b + c, the real parts in x, the imaginary in y */ \
    static inline H##2 __hcmadd(H##2 a, H##2 b, H##2 c) { \
        double ax = (float)a.x, ay = (float)a.y, bx = (float)b.x, by = (float)b.y; \
        return H##2(H(ax * bx - ay * by + (float)c.x), H(ax * by + ay * bx + (float)c.y)); \
    } \
    static inline H##2 h2rsqrt(H##2 a) { return H##2(hrsqrt(a.x), hrsqrt(a.y)); } \
    static inline H##2 h2exp2(H##2 a) { return H##2(hexp2(a.x), hexp2(a.y)); } \
    static inline H##2 h2exp10(H##2 a) { return H##2(hexp10(a.x), hexp10(a.y)); } \
    static inline H##2 h2log2(H##2 a) { return H##2(hlog2(a.x), hlog2(a.y)); } \
    static inline H##2 h2log10(H##2 a) { return H##2(hlog10(a.x), hlog10(a.y)); } \
    static inline H##2 h2sin(H##2 a) { return H##2(hsin(a.x), hsin(a.y)); } \
    static inline H##2 h2cos(H##2 a) { return H##2(hcos(a.x), hcos(a.y)); } \
    static inline H##2 h2floor(H##2 a) { return H##2(hfloor(a.x), hfloor(a.y)); } \
    static inline H##2 h2ceil(H##2 a) { return H##2(hceil(a.x), hceil(a.y)); } \
    static inline H##2 h2trunc(H##2 a) { return H##2(htrunc(a.x), htrunc(a.y)); } \
    static inline H##2 h2rint(H##2 a) { return H##2(hrint(a.x), hrint(a.y)); } \
    static inline H##2 h2sqrt(H##2 a) { return H##2(hsqrt(a.x), hsqrt(a.y)); } \
    static inline H##2 h2exp(H##2 a) { return H##2(hexp(a.x), hexp(a.y)); } \
    static inline H##2 h2log(H##2 a) { return H##2(hlog(a.x), hlog(a.y)); } \
    static inline H##2 h2rcp(H##2 a) { return H##2(hrcp(a.x), hrcp(a.y)); } \
    static inline float __low2float(H##2 a) { return (float)a.x; } \
    static inline float __high2float(H##2 a) { return (float)a.y; } \
    static inline H __low2##N(H##2 a) { return a.x; } \
    static inline H __high2##N(H##2 a) { return a.y; } \
    static inline H##2 __lows2##N##2(H##2 a, H##2 b) { return H##2(a.x, b.x); } \
    static inline H##2 __highs2##N##2(H##2 a, H##2 b) { return H##2(a.y, b.y); } \
    static inline H##2 __low2##N##2(H##2 a) { return H##2(a.x, a.x); } \
    static inline H##2 __high2##N##2(H##2 a) { return H##2(a.y, a.y); } \
    static inline H##2 __lowhigh2highlow(H##2 a) { return H##2(a.y, a.x); } \
    static inline H##2 __halves2##N##2(H a, H b) { return H##2(a, b); } \
    static inline H##2 __##N##2##N##2(H a) { return H##2(a, a); } \
    static inline H##2 make_##N##2(H a, H b) { return H##2(a, b); }

__CC_HALF_TYPE(__half, half, __cc_float_to_half_bits, __cc_half_bits_to_float)
__CC_HALF_TYPE(__nv_bfloat16, bfloat16, __cc_float_to_bf16_bits, __cc_bf16_bits_to_float)
template <> struct __cc_narrow_float<__half> { static constexpr size_t lane = 2; };
template <> struct __cc_narrow_float<__half2> { static constexpr size_t lane = 2; };
template <> struct __cc_narrow_float<__nv_bfloat16> { static constexpr size_t lane = 2; };
template <> struct __cc_narrow_float<__nv_bfloat162> { static constexpr size_t lane = 2; };
// Comparisons: the ordered ones are false when either value is NaN, the unordered ones (u) true.
// Of pairs: __hb...2 is true when both halves compare true, __h...2 gives 1.0 or 0.0 in each
// half, __h..._mask 0xffff or 0 in each 16-bit half of an unsigned int.
#define __CC_HALF_COMPARE(H, NAME, OP) \
    static inline bool __h##NAME##u(H a, H b) { float x = a, y = b; return x != x || y != y || x OP y; } \
    static inline bool __hb##NAME##2(H##2 a, H##2 b) { return __h##NAME(a.x, b.x) && __h##NAME(a.y, b.y); } \
    static inline bool __hb##NAME##u2(H##2 a, H##2 b) { return __h##NAME##u(a.x, b.x) && __h##NAME##u(a.y, b.y); } \
    static inline H##2 __h##NAME##2(H##2 a, H##2 b) { return H##2(H(__h##NAME(a.x, b.x) ? 1.0f : 0.0f), H(__h##NAME(a.y, b.y) ? 1.0f : 0.0f)); } \
    static inline H##2 __h##NAME##u2(H##2 a, H##2 b) { return H##2(H(__h##NAME##u(a.x, b.x) ? 1.0f : 0.0f), H(__h##NAME##u(a.y, b.y) ? 1.0f : 0.0f)); } \
    static inline unsigned int __h##NAME##2_mask(H##2 a, H##2 b) { return (__h##NAME(a.x, b.x) ? 0xffffu : 0u) | (__h##NAME(a.y, b.y) ? 0xffff0000u : 0u); } \
    static inline unsigned int __h##NAME##u2_mask(H##2 a, H##2 b) { return (__h##NAME##u(a.x, b.x) ? 0xffffu : 0u) | (__h##NAME##u(a.y, b.y) ? 0xffff0000u : 0u); }
#define __CC_HALF_COMPARES(H) \
    __CC_HALF_COMPARE(H, eq, ==) __CC_HALF_COMPARE(H, ne, !=) __CC_HALF_COMPARE(H, lt, <) \
    __CC_HALF_COMPARE(H, le, <=) __CC_HALF_COMPARE(H, gt, >) __CC_HALF_COMPARE(H, ge, >=) \
    static inline H##2 __hisnan2(H##2 a) { return H##2(H(__hisnan(a.x) ? 1.0f : 0.0f), H(__hisnan(a.y) ? 1.0f : 0.0f)); } \
    static inline H __hmax_nan(H a, H b) { return __hisnan(a) ? a : __hisnan(b) ? b : __hmax(a, b); } \
    static inline H __hmin_nan(H a, H b) { return __hisnan(a) ? a : __hisnan(b) ? b : __hmin(a, b); } \
    static inline H##2 __hmax2_nan(H##2 a, H##2 b) { return H##2(__hmax_nan(a.x, b.x), __hmax_nan(a.y, b.y)); } \
    static inline H##2 __hmin2_nan(H##2 a, H##2 b) { return H##2(__hmin_nan(a.x, b.x), __hmin_nan(a.y, b.y)); }
__CC_HALF_COMPARES(__half)
__CC_HALF_COMPARES(__nv_bfloat16)
#undef __CC_HALF_COMPARES
#undef __CC_HALF_COMPARE
typedef __half half;
typedef __half2 half2;
typedef __nv_bfloat16 nv_bfloat16;
typedef __nv_bfloat162 nv_bfloat162;
static inline __half __float2half(float f) { return __half(f); }
static inline __half __float2half_rn(float f) { return __half(f); }
static inline __half __double2half(double d) { return __half(d); }
static inline float __half2float(__half h) { return (float)h; }
static inline __half2 __float2half2_rn(float f) { return __half2(__half(f), __half(f)); }
static inline __half2 __floats2half2_rn(float a, float b) { return __half2(__half(a), __half(b)); }
static inline __half2 __float22half2_rn(float2 v) { return __half2(__half(v.x), __half(v.y)); }
static inline float2 __half22float2(__half2 h) { return make_float2((float)h.x, (float)h.y); }
// (half and bfloat16 to and from integers, and float to them in the directed modes: after the
// integer conversions, __CC_HALF_CONVERSIONS and __float2half_rz)
static inline unsigned short __half_as_ushort(__half h) { return h.__x; }
static inline short __half_as_short(__half h) { return (short)h.__x; }
static inline __half __ushort_as_half(unsigned short x) { __half h; h.__x = x; return h; }
static inline __half __short_as_half(short x) { __half h; h.__x = (unsigned short)x; return h; }
static inline __nv_bfloat16 __float2bfloat16(float f) { return __nv_bfloat16(f); }
static inline __nv_bfloat16 __float2bfloat16_rn(float f) { return __nv_bfloat16(f); }
static inline __nv_bfloat16 __double2bfloat16(double d) { return __nv_bfloat16(d); }
static inline float __bfloat162float(__nv_bfloat16 b) { return (float)b; }
static inline __nv_bfloat162 __float2bfloat162_rn(float f) { return __nv_bfloat162(__nv_bfloat16(f), __nv_bfloat16(f)); }
static inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b) { return __nv_bfloat162(__nv_bfloat16(a), __nv_bfloat16(b)); }
static inline __nv_bfloat162 __float22bfloat162_rn(float2 v) { return __nv_bfloat162(__nv_bfloat16(v.x), __nv_bfloat16(v.y)); }
static inline float2 __bfloat1622float2(__nv_bfloat162 h) { return make_float2((float)h.x, (float)h.y); }
static inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 h) { return h.__x; }
static inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short x) { __nv_bfloat16 h; h.__x = x; return h; }
static inline short __bfloat16_as_short(__nv_bfloat16 h) { return (short)h.__x; }
static inline __nv_bfloat16 __short_as_bfloat16(short x) { __nv_bfloat16 h; h.__x = (unsigned short)x; return h; }

// ---------------------------------------------------------------------------------------
// Atomics: with one worker, threads run one at a time and a plain read-modify-write is
// atomic; with several, blocks run at the same time and atomics are the CPU's own (integer
// add, sub, and, or, xor, exchange), or a compare-and-swap loop on the element's bits (float
// and half additions, min, max, inc, dec). The overloads are CUDA's, so a kernel that
// compiles here compiles on a GPU.
// ---------------------------------------------------------------------------------------

// Lock order (sanitizer; ThreadSanitizer's lock-order-inversion check): an atomicCAS that swaps a
// value out (`atomicCAS(&lock, 0, 1)` returning 0) takes a lock, an atomicExch or atomicCAS that
// puts that value back releases it. A thread that takes lock B while it holds lock A adds the edge
// A -> B; after the launch, Python (cpu._lock_cycle) looks for a cycle among locks that were
// released (a CAS loop's update is never put back, so it is no lock): threads that each hold one
// lock of the cycle and wait for the next wait for ever on a GPU, where they run at once. Here they
// ran one after another, so the launch ended.
struct __cc_held_lock { uintptr_t address; uint64_t unlocked; uint64_t site; };
struct __cc_lock_edge { uintptr_t from, to; uint64_t from_site, to_site; uint32_t block; uint32_t thread; };
static const int __CC_HELD = 4, __CC_LOCK_EDGES = 4096, __CC_RELEASED = 4096;
__CC_STATE __cc_held_lock __cc_held[1024][4];            // per thread of the running block: what it holds
__CC_STATE uint8_t __cc_held_count[1024];
__CC_STATE uint32_t __cc_held_block = UINT32_MAX;        // the block they belong to (cleared at a new one)
__CC_STATE __cc_lock_edge __cc_lock_edges[4096];
__CC_STATE int __cc_lock_edge_count;
__CC_STATE uintptr_t __cc_released_locks[4096];
__CC_STATE int __cc_released_count;
// (open addressing over both, so that a kernel with many CAS updates stays fast: 1 + the index, 0 empty)
__CC_STATE uint16_t __cc_edge_slots[8192], __cc_released_slots[8192];
static inline size_t __cc_lock_hash(uintptr_t a, uintptr_t b) {
    return (size_t)((a * 0x9E3779B97F4A7C15ull ^ (b + 0x7F4A7C15ull) * 0xC2B2AE3D27D4EB4Full) >> 51);  // 13 bits
}
// The slot of such a table, from hash `h` on, that holds the item `same(index)` is, or the empty one to put it in.
template <class Same>
static inline uint16_t* __cc_lock_slot(uint16_t* slots, size_t h, Same same) {
    for (;; h = (h + 1) & 8191)
        if (!slots[h] || same(slots[h] - 1)) return &slots[h];
}
__CC_RT void __cc_locks_new_launch() {
    if (__cc_held_any) memset(__cc_held_count, 0, sizeof __cc_held_count);
    if (__cc_lock_edge_count) memset(__cc_edge_slots, 0, sizeof __cc_edge_slots);
    if (__cc_released_count) memset(__cc_released_slots, 0, sizeof __cc_released_slots);
    __cc_held_any = false, __cc_held_block = UINT32_MAX, __cc_lock_edge_count = __cc_released_count = 0;
}
// Where a lock was taken: the code offset of the atomicCAS's caller, and (sanitized builds keep frame
// pointers) of that function's caller, 32 bits each (cpu.py names the outer line when the inner one lies
// in a helper: `lock(&locks[i])`).
#ifdef __CC_WITH_RUNTIME_OBJECT  // (never inlined: the object's)
__attribute__((noinline)) uint64_t __cc_lock_site();
#else
__attribute__((noinline)) __CC_RT uint64_t __cc_lock_site() {
    uint64_t site = __cc_code_offset(__builtin_return_address(0)) & 0xffffffffu, outer = 0;
#if defined(__CC_FRAME_POINTERS) && defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__))
    void* const* frame = (void* const*)__builtin_frame_address(0);
    void* const* next = frame ? (void* const*)frame[0] : nullptr;  // the frame of the function with the CAS
    if (next && next > frame && (uintptr_t)next - (uintptr_t)frame < (1u << 20) && !((uintptr_t)next & 7)) {
        uintptr_t back = (uintptr_t)next[1];
        if (back >= __cc_code_low && back < __cc_code_high) outer = __cc_code_offset((void*)back) & 0xffffffffu;
    }
#endif
    return site | outer << 32;
}
#endif
// `cas`: 0 an atomicExch, 1 an atomicCAS, 2 an atomicCAS whose compare value is a constant (`0`, as a
// lock's is: a CAS loop's compare value is what it read, so its updates, put back or not, take no lock).
__CC_RT void __cc_lock_update(const volatile void* address, uint64_t compare, uint64_t value, uint64_t old, int cas,
                             uint64_t site) {
    unsigned me = __cc_tid();
    if (me >= 1024) return;
    if (__cc_held_block != (uint32_t)__cc_block_linear) {
        if (__cc_held_any) memset(__cc_held_count, 0, sizeof __cc_held_count);
        __cc_held_block = (uint32_t)__cc_block_linear;
    }
    uintptr_t a = (uintptr_t)address;
    __cc_held_lock* held = __cc_held[me];
    int n = __cc_held_count[me];
    for (int k = 0; k < n; k++)  // putting back the value it took: a release
        if (held[k].address == a && value == held[k].unlocked && (!cas || old == compare)) {
            held[k] = held[--n];
            __cc_held_count[me] = (uint8_t)n;
            uint16_t* slot = __cc_lock_slot(__cc_released_slots, __cc_lock_hash(a, 0),
                                            [a](int i) { return __cc_released_locks[i] == a; });
            if (!*slot && __cc_released_count < __CC_RELEASED)
                __cc_released_locks[__cc_released_count++] = a, *slot = (uint16_t)__cc_released_count;
            return;
        }
    if (cas != 2 || old != compare || value == compare) return;
    for (int k = 0; k < n && __cc_lock_edge_count < __CC_LOCK_EDGES; k++) {  // taken while holding others: an edge from each
        uintptr_t from = held[k].address;
        if (from == a) continue;
        uint16_t* slot = __cc_lock_slot(__cc_edge_slots, __cc_lock_hash(from, a), [from, a](int i) {
            return __cc_lock_edges[i].from == from && __cc_lock_edges[i].to == a;
        });
        if (!*slot) {
            __cc_lock_edges[__cc_lock_edge_count++] = {from, a, held[k].site, site, (uint32_t)__cc_block_linear, me};
            *slot = (uint16_t)__cc_lock_edge_count;
        }
    }
    if (n == __CC_HELD) held[0] = held[--n];  // (a CAS loop's updates, never put back: the oldest goes)
    held[n++] = {a, compare, site};
    __cc_held_count[me] = (uint8_t)n;
    __cc_held_any = true;
}
// After a sanitized launch: its lock-order edges (6 numbers each: from, to, where each was taken
// (__cc_lock_site), block, thread), then the locks it released (one number each), in `room` numbers at
// most; *released: how many locks. Returns how many edges the launch made (room 0: only that).
__CC_EXPORT __CC_ONCE long long __cc_lock_graph(long long* out, long long room, long long* released) {
    long long k = 0;
    *released = __cc_released_count;
    if (room < 6LL * __cc_lock_edge_count + __cc_released_count) return __cc_lock_edge_count;
    for (int e = 0; e < __cc_lock_edge_count; e++) {
        const __cc_lock_edge& g = __cc_lock_edges[e];
        long long* o = out + k;
        o[0] = (long long)g.from, o[1] = (long long)g.to, o[2] = (long long)g.from_site, o[3] = (long long)g.to_site;
        o[4] = g.block, o[5] = g.thread;
        k += 6;
    }
    for (int r = 0; r < __cc_released_count; r++) out[k++] = (long long)__cc_released_locks[r];
    return __cc_lock_edge_count;
}
template <int N> struct __cc_uint_of;
template <> struct __cc_uint_of<2> { typedef uint16_t type; };
template <> struct __cc_uint_of<4> { typedef uint32_t type; };
template <> struct __cc_uint_of<8> { typedef uint64_t type; };

template <class T, class F>
__attribute__((always_inline)) static inline T __cc_atomic_update(T* address, F update) {
    typedef typename __cc_uint_of<sizeof(T)>::type U;
    U* word = (U*)(void*)address;
    U seen = __atomic_load_n(word, __ATOMIC_RELAXED);
    for (;;) {
        T old, next;
        __builtin_memcpy((void*)&old, &seen, sizeof old);
        next = update(old);
        U wanted;
        __builtin_memcpy(&wanted, (const void*)&next, sizeof wanted);
        if (__atomic_compare_exchange_n(word, &seen, wanted, true, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) return old;
    }
}

// An atomic read-modify-write of *address by `update` (old value -> new one), noted as an atomic for the
// sanitizer; the old value. (Always inlined: the note's return address is the caller's line.)
template <class T, class F>
__attribute__((always_inline)) static inline T __cc_atomic_apply(T* address, F update, int note = __CC_ATOMIC) {
    // (an exchange's old value is not what it stores: no read to check)
    if (__cc_sanitizing) __cc_note(address, sizeof(T), note + (note & __CC_EXCHANGE ? 0 : __cc_read_check<T>()));
    if (__cc_parallel) return __cc_atomic_update(address, update);
    T old = *address;
    *address = update(old);
    return old;
}
// (sanitized: an atomic's operand that is an unset variable's fill, `int one; if (x[i] > 0) one = 1;
// atomicAdd(count, one);`, is reported as its store would be: __cc_stored_fill)
#ifdef __CC_WITH_RUNTIME_OBJECT  // (never inlined: the object's)
__attribute__((noinline, cold)) void __cc_atomic_fill(const void* address, size_t size, int kind);
#else
__attribute__((noinline, cold)) __CC_RT void __cc_atomic_fill(const void* address, size_t size, int kind) {
    __cc_fault_out->mask = 1;  // (an atomic's operand)
    __cc_stored_fill(address, size, __builtin_return_address(0), kind);
}
#endif
template <class T>
__attribute__((always_inline)) static inline void __cc_atomic_operand(const T* address, const T& val) {
    constexpr int kind = __cc_fill_kind<T>();
    if (__cc_sanitizing && kind && (sizeof(T) == 4 || sizeof(T) == 8) && (kind == 1 || __cc_int_fills) &&
        __builtin_expect(__cc_is_fill(&val, sizeof(T)), 0))
        __cc_atomic_fill(address, sizeof(T), kind);
}
#define __CC_ATOMIC(NAME, T, UPDATE) \
    __attribute__((always_inline)) static inline T NAME(T* address, T val) { \
        __cc_atomic_operand(address, val); \
        return __cc_atomic_apply(address, [&](T old) -> T { return (UPDATE); }); }
#define __CC_ATOMIC_FETCH(NAME, T, UPDATE, BUILTIN) \
    __attribute__((always_inline)) static inline T NAME(T* address, T val) { \
        __cc_atomic_operand(address, val); \
        if (__cc_sanitizing) __cc_note(address, sizeof(T), __CC_ATOMIC + __cc_read_check<T>()); \
        if (__cc_parallel) return BUILTIN(address, val, __ATOMIC_SEQ_CST); \
        T old = *address; *address = (UPDATE); return old; }
#define __CC_ATOMIC_ALL_INTS(NAME, UPDATE) \
    __CC_ATOMIC(NAME, int, UPDATE) \
    __CC_ATOMIC(NAME, unsigned int, UPDATE) \
    __CC_ATOMIC(NAME, unsigned long long, UPDATE)
#define __CC_ATOMIC_FETCH_ALL_INTS(NAME, UPDATE, BUILTIN) \
    __CC_ATOMIC_FETCH(NAME, int, UPDATE, BUILTIN) \
    __CC_ATOMIC_FETCH(NAME, unsigned int, UPDATE, BUILTIN) \
    __CC_ATOMIC_FETCH(NAME, unsigned long long, UPDATE, BUILTIN)

__CC_ATOMIC_FETCH_ALL_INTS(atomicAdd, old + val, __atomic_fetch_add)
__CC_ATOMIC(atomicAdd, float, old + val)
__CC_ATOMIC(atomicAdd, double, old + val)
__CC_ATOMIC_FETCH(atomicSub, int, old - val, __atomic_fetch_sub)
__CC_ATOMIC_FETCH(atomicSub, unsigned int, old - val, __atomic_fetch_sub)
#define __CC_ATOMIC_EXCH(T) \
    __attribute__((always_inline)) static inline T atomicExch(T* address, T val) { \
        __cc_atomic_operand(address, val); \
        if (__cc_sanitizing) __cc_note(address, sizeof(T), __CC_ATOMIC + __CC_EXCHANGE); \
        if (__cc_parallel) return __atomic_exchange_n(address, val, __ATOMIC_SEQ_CST); \
        T old = *address; *address = val; \
        if (__cc_sanitizing) __cc_lock_update(address, 0, (uint64_t)val, (uint64_t)old, 0, 0); \
        return old; }
__CC_ATOMIC_EXCH(int)
__CC_ATOMIC_EXCH(unsigned int)
__CC_ATOMIC_EXCH(unsigned long long)
__attribute__((always_inline)) static inline float atomicExch(float* address, float val) {
    __cc_atomic_operand(address, val);
    return __cc_atomic_apply(address, [&](float) -> float { return val; }, __CC_ATOMIC + __CC_EXCHANGE);
}
__CC_ATOMIC(atomicAdd, __half, old + val)
__CC_ATOMIC(atomicAdd, __half2, old + val)
__CC_ATOMIC(atomicAdd, __nv_bfloat16, old + val)
__CC_ATOMIC(atomicAdd, __nv_bfloat162, old + val)
// atomicMax((int*)m, __float_as_int(v)): the ints' order is the floats' only where both are >= 0 (as ints,
// negative floats come in the opposite order; as unsigned ints, above every positive one). Sanitized, the
// bit casts note their result (__cc_float_bits), and an atomicMin/atomicMax of exactly that value that keeps
// the other float than a float min/max would is noted, the first of a launch (one worker: launch order),
// for cpu.py's warning (__cc_float_order_noted).
struct __cc_float_order_note {
    uint32_t launch;  // the launch it was noted in (__cc_current_launch)
    int size, is_max, is_unsigned;
    uint64_t old_bits, val_bits, address, site;
    unsigned block, tid;
};
__CC_STATE __cc_float_order_note __cc_float_order_first;
#ifdef __CC_WITH_RUNTIME_OBJECT  // (never inlined: the object's)
__attribute__((noinline, cold)) void __cc_float_order(const void* address, uint64_t old, uint64_t val, int size, int flags);
#else
__attribute__((noinline, cold)) __CC_RT void __cc_float_order(const void* address, uint64_t old, uint64_t val, int size,
                                                            int flags) {
    const bool is_max = flags & 1, is_unsigned = flags & 2;
    __cc_float_order_note& r = __cc_float_order_first;
    if (r.launch == __cc_current_launch) return;
    double o, v;
    if (size == 4) {
        uint32_t bits[2] = {(uint32_t)old, (uint32_t)val};
        float f[2];
        memcpy(f, bits, sizeof f);
        o = f[0], v = f[1];
    } else {
        memcpy(&o, &old, 8), memcpy(&v, &val, 8);
    }
    if (o != o || v != v || o == v) return;  // (NaNs: no order to keep; -0 and +0: either is right)
    bool as_int;
    if (is_unsigned) as_int = is_max ? val > old : val < old;
    else if (size == 4) as_int = is_max ? (int32_t)val > (int32_t)old : (int32_t)val < (int32_t)old;
    else as_int = is_max ? (int64_t)val > (int64_t)old : (int64_t)val < (int64_t)old;
    if (as_int == (is_max ? v > o : v < o)) return;
    r = {__cc_current_launch, size, is_max, is_unsigned, old, val, (uint64_t)(uintptr_t)address,
         __cc_code_offset(__builtin_return_address(0)), (unsigned)__cc_block_linear, __cc_tid()};
}
#endif
__CC_EXPORT __CC_ONCE int __cc_float_order_noted(unsigned long long* out) {
    const __cc_float_order_note& r = __cc_float_order_first;
    if (r.launch != __cc_current_launch) return 0;
    unsigned long long v[] = {(unsigned long long)r.size, (unsigned long long)r.is_max, (unsigned long long)r.is_unsigned,
                              r.old_bits, r.val_bits, r.address, r.site, r.block, r.tid};
    memcpy(out, v, sizeof v);
    return 1;
}
template <class T>
__attribute__((always_inline)) static inline void __cc_float_order_check(const T* address, T old, T val, int is_max) {
    if (!__cc_sanitizing || !__cc_me->float_bits_size) return;
    const int size = __cc_me->float_bits_size;
    __cc_me->float_bits_size = 0;
    typedef typename std::make_unsigned<T>::type U;
    if (size != (int)sizeof(T) || __cc_me->float_bits != (uint64_t)(U)val) return;
    __cc_float_order(address, (uint64_t)(U)old, (uint64_t)(U)val, size, is_max | (std::is_unsigned<T>::value ? 2 : 0));
}
#define __CC_ATOMIC_ORDER(NAME, T, UPDATE, IS_MAX) \
    __attribute__((always_inline)) static inline T NAME(T* address, T val) { \
        __cc_atomic_operand(address, val); \
        T old_value = __cc_atomic_apply(address, [&](T old) -> T { return (UPDATE); }); \
        __cc_float_order_check(address, old_value, val, IS_MAX);  /* (after the access's checks) */ \
        return old_value; }
#define __CC_ATOMIC_ORDER_ALL(NAME, UPDATE, IS_MAX) \
    __CC_ATOMIC_ORDER(NAME, int, UPDATE, IS_MAX) \
    __CC_ATOMIC_ORDER(NAME, unsigned int, UPDATE, IS_MAX) \
    __CC_ATOMIC_ORDER(NAME, long long, UPDATE, IS_MAX) \
    __CC_ATOMIC_ORDER(NAME, unsigned long long, UPDATE, IS_MAX)
__CC_ATOMIC_ORDER_ALL(atomicMin, val < old ? val : old, 0)
__CC_ATOMIC_ORDER_ALL(atomicMax, val > old ? val : old, 1)
__CC_ATOMIC_FETCH_ALL_INTS(atomicAnd, old & val, __atomic_fetch_and)
__CC_ATOMIC_FETCH_ALL_INTS(atomicOr, old | val, __atomic_fetch_or)
__CC_ATOMIC_FETCH_ALL_INTS(atomicXor, old ^ val, __atomic_fetch_xor)
__CC_ATOMIC(atomicInc, unsigned int, old >= val ? 0u : old + 1u)
__CC_ATOMIC(atomicDec, unsigned int, (old == 0u || old > val) ? val : old - 1u)

#define __CC_ATOMIC_CAS(T) \
    __attribute__((always_inline)) static inline T atomicCAS(T* address, T compare, T val) { \
        if (__cc_sanitizing) __cc_note(address, sizeof(T), __CC_ATOMIC + __CC_CAS + __cc_read_check<T>()); \
        if (__cc_parallel) { \
            __atomic_compare_exchange_n(address, &compare, val, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); \
            return compare; } \
        T old = *address; if (old == compare) *address = val; \
        if (__cc_sanitizing && old == compare) \
            __cc_lock_update(address, (uint64_t)compare, (uint64_t)val, (uint64_t)old, \
                             __builtin_constant_p(compare) ? 2 : 1, __cc_lock_site()); \
        return old; }
__CC_ATOMIC_CAS(int)
__CC_ATOMIC_CAS(unsigned int)
__CC_ATOMIC_CAS(unsigned long long)
__CC_ATOMIC_CAS(unsigned short)

// atomicAdd(counts + bin, 1) on a checked pointer: check, then use the overloads above.
#define __CC_ATOMIC_CHECKED(NAME) \
    template <class T, class V> \
    static inline auto NAME(const __cc_ptr<T>& p, V v) -> decltype(NAME(p.p, v)) { \
        p.check(0); \
        return NAME(p.p, v); \
    }
__CC_ATOMIC_CHECKED(atomicAdd) __CC_ATOMIC_CHECKED(atomicSub) __CC_ATOMIC_CHECKED(atomicExch)
__CC_ATOMIC_CHECKED(atomicMin) __CC_ATOMIC_CHECKED(atomicMax) __CC_ATOMIC_CHECKED(atomicAnd)
__CC_ATOMIC_CHECKED(atomicOr) __CC_ATOMIC_CHECKED(atomicXor) __CC_ATOMIC_CHECKED(atomicInc)
__CC_ATOMIC_CHECKED(atomicDec)
// `atomicExch(&s[t], v);`, its old value unused (source.py puts `__cc_exchange_next(), ` before such a
// statement's call): initcheck takes the exchange for a write of an element no thread wrote, not for a
// read of it. (The next atomic's note clears it.)
__attribute__((always_inline)) static inline void __cc_exchange_next() {
    if (__cc_sanitizing) __cc_me->exchange_store = true;
}
template <class T, class V, class W>
__attribute__((always_inline)) static inline auto atomicCAS(const __cc_ptr<T>& p, V c, W v)
        -> decltype(atomicCAS(p.p, c, v)) {
    p.check(0);
    return atomicCAS(p.p, c, v);
}

// ---------------------------------------------------------------------------------------
// Math and intrinsics CUDA has and the C library lacks
// ---------------------------------------------------------------------------------------

// min/max: CUDA's overloads (crt/math_functions.hpp) and no others: int, unsigned int, long, unsigned
// long, long long, unsigned long long, a signed and an unsigned of one width (unsigned: min(-1, 2u) is
// 2), float, double, and float with double (double). The call's overload resolution is CUDA's, so what
// nvcc refuses as ambiguous is refused here too: max(x, 0) of a float x, min(size_t, unsigned),
// min(int, long long), min of two __half. (A template that forwards to them: a kernel's own
// `int max(int, int)` is a better match and is the one called, as with nvcc.)
// Of floats they are fminf/fmaxf, as CUDA's are: a NaN gives the other value; -0 is less than +0.
namespace __cc_minmax {
template <class T> static inline T lo(T a, T b) { return b < a ? b : a; }
template <class T> static inline T hi(T a, T b) { return b > a ? b : a; }
template <class T> static inline T flo(T a, T b) {
    if (a != a) return b;
    if (b != b) return a;
    return b < a || (b == a && signbit(b)) ? b : a;
}
template <class T> static inline T fhi(T a, T b) {
    if (a != a) return b;
    if (b != b) return a;
    return b > a || (b == a && !signbit(b)) ? b : a;
}
#define __CC_MINMAX(R, A, B, LO, HI) \
    static inline R min(A a, B b) { return LO<R>((R)a, (R)b); } \
    static inline R max(A a, B b) { return HI<R>((R)a, (R)b); }
__CC_MINMAX(int, int, int, lo, hi)
__CC_MINMAX(unsigned int, unsigned int, unsigned int, lo, hi)
__CC_MINMAX(unsigned int, int, unsigned int, lo, hi)
__CC_MINMAX(unsigned int, unsigned int, int, lo, hi)
__CC_MINMAX(long, long, long, lo, hi)
__CC_MINMAX(unsigned long, unsigned long, unsigned long, lo, hi)
__CC_MINMAX(unsigned long, long, unsigned long, lo, hi)
__CC_MINMAX(unsigned long, unsigned long, long, lo, hi)
__CC_MINMAX(long long, long long, long long, lo, hi)
__CC_MINMAX(unsigned long long, unsigned long long, unsigned long long, lo, hi)
__CC_MINMAX(unsigned long long, long long, unsigned long long, lo, hi)
__CC_MINMAX(unsigned long long, unsigned long long, long long, lo, hi)
__CC_MINMAX(float, float, float, flo, fhi)
__CC_MINMAX(double, double, double, flo, fhi)
__CC_MINMAX(double, float, double, flo, fhi)
__CC_MINMAX(double, double, float, flo, fhi)
#undef __CC_MINMAX
}  // namespace __cc_minmax
template <class A, class B>
static inline auto min(A a, B b) -> decltype(__cc_minmax::min(a, b)) { return __cc_minmax::min(a, b); }
template <class A, class B>
static inline auto max(A a, B b) -> decltype(__cc_minmax::max(a, b)) { return __cc_minmax::max(a, b); }
static inline unsigned int umin(unsigned int a, unsigned int b) { return a < b ? a : b; }
static inline unsigned int umax(unsigned int a, unsigned int b) { return a > b ? a : b; }
static inline long long llmin(long long a, long long b) { return a < b ? a : b; }
static inline long long llmax(long long a, long long b) { return a > b ? a : b; }
static inline unsigned long long ullmin(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
static inline unsigned long long ullmax(unsigned long long a, unsigned long long b) { return a > b ? a : b; }

static inline float __cc_rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double __cc_rsqrt(double x) { return 1.0 / sqrt(x); }
static inline float __cc_exp10f(float x) { return powf(10.0f, x); }
static inline double __cc_exp10(double x) { return pow(10.0, x); }
static inline void __cc_sincosf(float x, float* s, float* c) { *s = sinf(x), *c = cosf(x); }
static inline void __cc_sincos(double x, double* s, double* c) { *s = sin(x), *c = cos(x); }
// sin(pi x) and cos(pi x), exact at whole and half turns as CUDA's are: x = n/2 + f, |f| <= 1/4.
static inline double __cc_pi_turn(double x, bool cosine) {
    if (!isfinite(x)) return NAN;
    double n = nearbyint(2.0 * x), f = x - 0.5 * n;
    long long q = ((long long)fmod(n, 4.0) + 4 + (cosine ? 1 : 0)) % 4;
    double sf = sin(M_PI * f), cf = cos(M_PI * f);
    double r = q == 0 ? sf : (q == 1 ? cf : (q == 2 ? -sf : -cf));
    return r == 0 ? (cosine ? 0.0 : copysign(0.0, x)) : r;
}
static inline double __cc_sinpi(double x) { return __cc_pi_turn(x, false); }
static inline double __cc_cospi(double x) { return __cc_pi_turn(x, true); }
static inline float __cc_sinpif(float x) { return (float)__cc_pi_turn(x, false); }
static inline float __cc_cospif(float x) { return (float)__cc_pi_turn(x, true); }
static inline float __cc_saturatef(float x) { return x != x || x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x); }  // (NaN: +0, as PTX's .sat)
static inline float __cc_rcbrtf(float x) { return 1.0f / cbrtf(x); }
static inline float __cc_rhypotf(float a, float b) {  // (in double: 1 / hypotf(FLT_MAX, FLT_MAX) would be 0)
    if (isinf(a) || isinf(b)) return 0.0f;
    return (float)(1.0 / sqrt((double)a * a + (double)b * b));
}

template <class To, class From>
static inline To __cc_bits(From x) {
    static_assert(sizeof(To) == sizeof(From), "bit cast between types of different sizes");
    To y;
    memcpy(&y, &x, sizeof y);
    return y;
}

static inline int __cc_clz(unsigned int x) { return x ? __builtin_clz(x) : 32; }
static inline int __cc_clzll(unsigned long long x) { return x ? __builtin_clzll(x) : 64; }
static inline unsigned int __cc_brev(unsigned int x) {
    unsigned int r = 0;
    for (int i = 0; i < 32; i++) r = (r << 1) | ((x >> i) & 1u);
    return r;
}
static inline unsigned long long __cc_brevll(unsigned long long x) {
    return ((unsigned long long)__cc_brev((unsigned int)x) << 32) | __cc_brev((unsigned int)(x >> 32));
}

static inline void __cc_sincospif(float x, float* s, float* c) { *s = __cc_sinpif(x), *c = __cc_cospif(x); }
static inline void __cc_sincospi(double x, double* s, double* c) { *s = __cc_sinpi(x), *c = __cc_cospi(x); }

// erfinv: a first guess (Giles' single-precision fit), then two Newton steps on erf in double.
// (w = -log((1 - y)(1 + y)), given apart: erfcinv computes it from 1 - y.)
static inline double __cc_erfinv_guess(double y, double w) {
    double x;
    if (w < 5.0) {
        w -= 2.5;
        x = 2.81022636e-08;
        x = 3.43273939e-07 + x * w; x = -3.5233877e-06 + x * w; x = -4.39150654e-06 + x * w;
        x = 0.00021858087 + x * w; x = -0.00125372503 + x * w; x = -0.00417768164 + x * w;
        x = 0.246640727 + x * w; x = 1.50140941 + x * w;
    } else {
        w = sqrt(w) - 3.0;
        x = -0.000200214257;
        x = 0.000100950558 + x * w; x = 0.00134934322 + x * w; x = -0.00367342844 + x * w;
        x = 0.00573950773 + x * w; x = -0.0076224613 + x * w; x = 0.00943887047 + x * w;
        x = 1.00167406 + x * w; x = 2.83297682 + x * w;
    }
    return x * y;
}
static inline double __cc_erfinv(double y) {
    if (y <= -1.0 || y >= 1.0) return y == -1.0 ? -HUGE_VAL : (y == 1.0 ? HUGE_VAL : NAN);
    double x = __cc_erfinv_guess(y, -log((1.0 - y) * (1.0 + y)));
    // (in long double, and near |y| = 1 from erfc: erf(x) - y of two numbers near 1 loses the digits)
    long double lx = fabs(x), ly = fabs(y), tail = 1.0L - ly;
    for (int i = 0; i < 2; i++)
        lx -= (ly > 0.5L ? tail - erfcl(lx) : erfl(lx) - ly) / (1.1283791670955125739L * expl(-lx * lx));
    return y < 0 ? -(double)lx : (double)lx;
}
// erfcinv(z) = erfinv(1 - z), but for z near 0 or 2 (the far tails, where 1 - z loses every digit)
// Newton steps on erfc itself, from the same first guess (w computed from z) or, beyond w = 20,
// from the asymptote erfc(x) ~ exp(-x²) / (x √π).
static inline double __cc_erfcinv(double z) {
    if (z <= 0.0 || z >= 2.0) return z == 0.0 ? HUGE_VAL : (z == 2.0 ? -HUGE_VAL : NAN);
    if (z > 0.5 && z < 1.5) return __cc_erfinv(1.0 - z);
    double t = z >= 1.5 ? 2.0 - z : z, w = -log(t * (2.0 - t)), x;
    if (w > 20.0) {
        x = sqrt(-log(t));
        x = sqrt(-log(t) - log(x * 1.7724538509055159));
    } else {
        x = __cc_erfinv_guess(1.0 - t, w);
    }
    for (int i = 0; i < 3; i++) x += (erfc(x) - t) / (1.1283791670955126 * exp(-x * x));
    return z >= 1.5 ? -x : x;
}
// erfcx(x) = exp(x²) erfc(x), the scaled complementary error function: in long double (its
// exponent range holds both factors) up to x = 50, then its asymptotic series.
static inline double __cc_erfcx(double x) {
    if (x != x) return x;
    if (x < 50.0) return (double)(expl((long double)x * x) * erfcl((long double)x));
    double r = 1.0 / (2.0 * x * x), term = 1.0, sum = 1.0;
    for (int k = 1; k <= 6; k++) term *= -(2 * k - 1) * r, sum += term;
    return sum / (x * 1.7724538509055159);
}
static inline double __cc_normcdf(double x) { return 0.5 * erfc(-x * 0.70710678118654752); }
static inline double __cc_normcdfinv(double p) { return -1.4142135623730951 * __cc_erfcinv(2.0 * p); }
// Euclidean norms "without undue overflow or underflow" (CUDA's promise): float squares are summed
// in double, where they cannot overflow or underflow; doubles are scaled by the largest first.
// An infinite element gives infinity, even next to a NaN (as hypot does).
template <class P> static inline double __cc_norm(int dim, const P& p) {
    double big = 0.0;
    bool nan = false;
    for (int i = 0; i < dim; i++) {
        double a = fabs((double)p[i]);
        if (isinf(a)) return HUGE_VAL;
        if (a != a) nan = true;
        else if (a > big) big = a;
    }
    if (nan) return NAN;
    if (big == 0.0) return 0.0;
    double sum = 0.0;
    for (int i = 0; i < dim; i++) { double a = (double)p[i] / big; sum += a * a; }
    return big * sqrt(sum);
}
template <class P> static inline float __cc_normf(int dim, const P& p) {
    double sum = 0.0;
    bool nan = false;
    for (int i = 0; i < dim; i++) {
        double a = (float)p[i];
        if (isinf(a)) return HUGE_VALF;
        if (a != a) nan = true;
        sum += a * a;
    }
    return nan ? NAN : (float)sqrt(sum);
}
// One over the norm, of floats in double (the sum of squares of floats fits), of doubles scaled by the
// largest (1 / norm of 1e300s would be 0 where the true value is a representable 1e-301).
template <class P> static inline float __cc_rnormf(int dim, const P& p) {
    double sum = 0.0;
    bool nan = false;
    for (int i = 0; i < dim; i++) {
        double a = (float)p[i];
        if (isinf(a)) return 0.0f;
        if (a != a) nan = true;
        sum += a * a;
    }
    return nan ? NAN : (float)(1.0 / sqrt(sum));
}
template <class P> static inline double __cc_rnorm(int dim, const P& p) {
    double big = 0.0;
    bool nan = false;
    for (int i = 0; i < dim; i++) {
        double a = fabs((double)p[i]);
        if (isinf(a)) return 0.0;
        if (a != a) nan = true;
        else if (a > big) big = a;
    }
    if (nan) return NAN;
    if (big == 0.0) return HUGE_VAL;
    double sum = 0.0;
    for (int i = 0; i < dim; i++) { double a = (double)p[i] / big; sum += a * a; }
    return (1.0 / big) / sqrt(sum);
}
// (Functions, not macros: a kernel may define its own norm(float3), an overload.)
static inline float norm3df(float a, float b, float c) { const float v[3] = {a, b, c}; return __cc_normf(3, v); }
static inline float rnorm3df(float a, float b, float c) { const float v[3] = {a, b, c}; return __cc_rnormf(3, v); }
static inline float norm4df(float a, float b, float c, float d) { const float v[4] = {a, b, c, d}; return __cc_normf(4, v); }
static inline float rnorm4df(float a, float b, float c, float d) { const float v[4] = {a, b, c, d}; return __cc_rnormf(4, v); }
static inline double norm3d(double a, double b, double c) { const double v[3] = {a, b, c}; return __cc_norm(3, v); }
static inline double rnorm3d(double a, double b, double c) { const double v[3] = {a, b, c}; return __cc_rnorm(3, v); }
static inline double norm4d(double a, double b, double c, double d) { const double v[4] = {a, b, c, d}; return __cc_norm(4, v); }
static inline double rnorm4d(double a, double b, double c, double d) { const double v[4] = {a, b, c, d}; return __cc_rnorm(4, v); }
template <class P> static inline float normf(int dim, const P& p) { return __cc_normf(dim, p); }
template <class P> static inline float rnormf(int dim, const P& p) { return __cc_rnormf(dim, p); }
template <class P> static inline double norm(int dim, const P& p) { return __cc_norm(dim, p); }
template <class P> static inline double rnorm(int dim, const P& p) { return __cc_rnorm(dim, p); }
static inline double rhypot(double a, double b) { const double v[2] = {a, b}; return __cc_rnorm(2, v); }
static inline double rcbrt(double x) { return (double)(1.0L / cbrtl(x)); }  // (1.0 / cbrt(x): two roundings, 1.5 ulp)

// Directed rounding of conversions (__cc_narrow): the round-to-nearest result, moved one step when the
// exact error says the exact value lies on the other side. mode: 0 nearest, 1 toward zero, 2 up, 3 down.
static inline float __cc_next(float x, float toward) { return nextafterf(x, toward); }
static inline double __cc_next(double x, double toward) { return nextafter(x, toward); }
template <class T>
static inline T __cc_directed(T r, T err, int mode) {  // err: the exact value minus r (its sign)
    if (err == 0 || mode == 0 || r != r) return r;
    bool up = (mode == 2 && err > 0) || (mode == 1 && err > 0 && r < 0);
    bool down = (mode == 3 && err < 0) || (mode == 1 && err < 0 && r > 0);
    return up ? __cc_next(r, (T)INFINITY) : (down ? __cc_next(r, -(T)INFINITY) : r);
}
template <class T> static inline T __cc_add_dir(T a, T b, int mode) {
    return __cc_in_mode(mode, a, b, (T)0, [](T x, T y, T) { return x + y; });
}
template <class T> static inline T __cc_mul_dir(T a, T b, int mode) {
    return __cc_in_mode(mode, a, b, (T)0, [](T x, T y, T) { return x * y; });
}
template <class T> static inline T __cc_div_dir(T a, T b, int mode) {
    return __cc_in_mode(mode, a, b, (T)0, [](T x, T y, T) { return x / y; });
}
template <class T> static inline T __cc_sqrt_dir(T x, int mode) {
    return __cc_in_mode(mode, x, (T)0, (T)0, [](T v, T, T) { return (T)std::sqrt(v); });
}
template <class T> static inline T __cc_fma_dir(T a, T b, T c, int mode) {  // (libm's fma rounds in the current mode)
    return __cc_in_mode(mode, a, b, c, [](T x, T y, T z) { return (T)std::fma(x, y, z); });
}

// Integer intrinsics: halving adds, byte permutes, funnel shifts, the halves of a double.
static inline int __hadd(int a, int b) { return (int)(((long long)a + b) >> 1); }
static inline int __rhadd(int a, int b) { return (int)(((long long)a + b + 1) >> 1); }
static inline unsigned int __uhadd(unsigned int a, unsigned int b) { return (unsigned int)(((unsigned long long)a + b) >> 1); }
static inline unsigned int __urhadd(unsigned int a, unsigned int b) { return (unsigned int)(((unsigned long long)a + b + 1) >> 1); }
static inline unsigned int __byte_perm(unsigned int x, unsigned int y, unsigned int s) {
    unsigned long long bytes = ((unsigned long long)y << 32) | x;
    unsigned int r = 0;
    for (int i = 0; i < 4; i++) r |= (unsigned int)((bytes >> (8 * ((s >> (4 * i)) & 7))) & 0xff) << (8 * i);
    return r;
}
static inline unsigned int __funnelshift_l(unsigned int lo, unsigned int hi, unsigned int shift) {
    return (unsigned int)(((((unsigned long long)hi << 32) | lo) << (shift & 31)) >> 32);
}
static inline unsigned int __funnelshift_lc(unsigned int lo, unsigned int hi, unsigned int shift) {
    unsigned long long v = ((unsigned long long)hi << 32) | lo;
    return shift >= 32 ? lo : (unsigned int)((v << shift) >> 32);
}
static inline unsigned int __funnelshift_r(unsigned int lo, unsigned int hi, unsigned int shift) {
    return (unsigned int)((((unsigned long long)hi << 32) | lo) >> (shift & 31));
}
static inline unsigned int __funnelshift_rc(unsigned int lo, unsigned int hi, unsigned int shift) {
    unsigned long long v = ((unsigned long long)hi << 32) | lo;
    return shift >= 32 ? hi : (unsigned int)(v >> shift);
}
// SIMD within a word: __vadd2 works on two 16-bit halves of an unsigned int, __vadd4 on four
// bytes, each lane on its own (NVIDIA's stereo-disparity and video samples use them).
// f gets each lane as unsigned and as signed; its results are packed into the lanes of the
// result, or (SUM) added up (__vsadu4).
template <int BITS, bool SUM = false, class F>
static inline unsigned int __cc_lanes(unsigned int a, unsigned int b, F f) {
    const unsigned int mask = (1u << BITS) - 1;
    unsigned int r = 0;
    for (int shift = 0; shift < 32; shift += BITS) {
        unsigned int x = (a >> shift) & mask, y = (b >> shift) & mask;
        long long sx = (long long)x - ((x >> (BITS - 1)) ? (1LL << BITS) : 0);  // the lane as signed
        long long sy = (long long)y - ((y >> (BITS - 1)) ? (1LL << BITS) : 0);
        unsigned int v = (unsigned int)f((long long)x, (long long)y, sx, sy);
        r = SUM ? r + v : r | ((v & mask) << shift);
    }
    return r;
}
static inline long long __cc_clamp(long long v, long long lo, long long hi) { return v < lo ? lo : v > hi ? hi : v; }
// (Each a template whose parameter does nothing: GCC instantiates a template that a plain inline function
// calls in every module, the kernel calling it or not, and these lanes and lambdas took 0.01 s of each
// module's compile; a template of their own is instantiated only where a kernel calls it.)
#define __CC_SIMD(NAME, EXPR) \
    template <int = 0> static inline unsigned int NAME##2(unsigned int a, unsigned int b) { \
        const long long ones = 0xffff, smin = -32768, smax = 32767, umax = 65535; (void)ones; (void)smin; (void)smax; (void)umax; \
        return __cc_lanes<16>(a, b, [&](long long ux, long long uy, long long sx, long long sy) -> long long { \
            (void)ux; (void)uy; (void)sx; (void)sy; return EXPR; }); \
    } \
    template <int = 0> static inline unsigned int NAME##4(unsigned int a, unsigned int b) { \
        const long long ones = 0xff, smin = -128, smax = 127, umax = 255; (void)ones; (void)smin; (void)smax; (void)umax; \
        return __cc_lanes<8>(a, b, [&](long long ux, long long uy, long long sx, long long sy) -> long long { \
            (void)ux; (void)uy; (void)sx; (void)sy; return EXPR; }); \
    }
__CC_SIMD(__vadd, ux + uy)
__CC_SIMD(__vaddss, __cc_clamp(sx + sy, smin, smax))
__CC_SIMD(__vaddus, __cc_clamp(ux + uy, 0, umax))
__CC_SIMD(__vsub, ux - uy)
__CC_SIMD(__vsubss, __cc_clamp(sx - sy, smin, smax))
__CC_SIMD(__vsubus, __cc_clamp(ux - uy, 0, umax))
__CC_SIMD(__vabsdiffs, sx > sy ? sx - sy : sy - sx)
__CC_SIMD(__vabsdiffu, ux > uy ? ux - uy : uy - ux)
__CC_SIMD(__vavgs, (sx + sy + ((sx + sy) >= 0 ? 1 : 0)) >> 1)
__CC_SIMD(__vavgu, (ux + uy + 1) >> 1)
__CC_SIMD(__vhaddu, (ux + uy) >> 1)
__CC_SIMD(__vmaxs, sx > sy ? sx : sy)
__CC_SIMD(__vmaxu, ux > uy ? ux : uy)
__CC_SIMD(__vmins, sx < sy ? sx : sy)
__CC_SIMD(__vminu, ux < uy ? ux : uy)
__CC_SIMD(__vcmpeq, ux == uy ? ones : 0)
__CC_SIMD(__vcmpne, ux != uy ? ones : 0)
__CC_SIMD(__vcmpges, sx >= sy ? ones : 0)
__CC_SIMD(__vcmpgeu, ux >= uy ? ones : 0)
__CC_SIMD(__vcmpgts, sx > sy ? ones : 0)
__CC_SIMD(__vcmpgtu, ux > uy ? ones : 0)
__CC_SIMD(__vcmples, sx <= sy ? ones : 0)
__CC_SIMD(__vcmpleu, ux <= uy ? ones : 0)
__CC_SIMD(__vcmplts, sx < sy ? ones : 0)
__CC_SIMD(__vcmpltu, ux < uy ? ones : 0)
__CC_SIMD(__vseteq, ux == uy)
__CC_SIMD(__vsetne, ux != uy)
__CC_SIMD(__vsetges, sx >= sy)
__CC_SIMD(__vsetgeu, ux >= uy)
__CC_SIMD(__vsetgts, sx > sy)
__CC_SIMD(__vsetgtu, ux > uy)
__CC_SIMD(__vsetles, sx <= sy)
__CC_SIMD(__vsetleu, ux <= uy)
__CC_SIMD(__vsetlts, sx < sy)
__CC_SIMD(__vsetltu, ux < uy)
#undef __CC_SIMD
template <int = 0> static inline unsigned int __vsads2(unsigned int a, unsigned int b) {
    return __cc_lanes<16, true>(a, b, [](long long, long long, long long x, long long y) { return x > y ? x - y : y - x; });
}
template <int = 0> static inline unsigned int __vsadu2(unsigned int a, unsigned int b) {
    return __cc_lanes<16, true>(a, b, [](long long x, long long y, long long, long long) { return x > y ? x - y : y - x; });
}
template <int = 0> static inline unsigned int __vsads4(unsigned int a, unsigned int b) {
    return __cc_lanes<8, true>(a, b, [](long long, long long, long long x, long long y) { return x > y ? x - y : y - x; });
}
template <int = 0> static inline unsigned int __vsadu4(unsigned int a, unsigned int b) {
    return __cc_lanes<8, true>(a, b, [](long long x, long long y, long long, long long) { return x > y ? x - y : y - x; });
}
template <int = 0> static inline unsigned int __vabs2(unsigned int a) { return __vabsdiffs2(a, 0); }
template <int = 0> static inline unsigned int __vabs4(unsigned int a) { return __vabsdiffs4(a, 0); }
template <int = 0> static inline unsigned int __vabsss2(unsigned int a) { return __cc_lanes<16>(a, 0, [](long long, long long, long long x, long long) { return __cc_clamp(x < 0 ? -x : x, 0, 32767); }); }
template <int = 0> static inline unsigned int __vabsss4(unsigned int a) { return __cc_lanes<8>(a, 0, [](long long, long long, long long x, long long) { return __cc_clamp(x < 0 ? -x : x, 0, 127); }); }
template <int = 0> static inline unsigned int __vneg2(unsigned int a) { return __vsub2(0, a); }
template <int = 0> static inline unsigned int __vneg4(unsigned int a) { return __vsub4(0, a); }
template <int = 0> static inline unsigned int __vnegss2(unsigned int a) { return __vsubss2(0, a); }
template <int = 0> static inline unsigned int __vnegss4(unsigned int a) { return __vsubss4(0, a); }
// Hopper's DPX instructions (dynamic programming: Smith-Waterman, Needleman-Wunsch): max or min
// of three, of a sum and a third value, with an optional ReLU (max with 0), on 32-bit integers or
// on the two 16-bit halves of an unsigned int (sums wrap in 16 bits).
template <bool SIGNED, class F> static inline unsigned int __cc_halves3(unsigned int a, unsigned int b, unsigned int c, F f) {
    unsigned int r = 0;
    for (int shift = 0; shift < 32; shift += 16) {
        unsigned short x = (unsigned short)(a >> shift), y = (unsigned short)(b >> shift), z = (unsigned short)(c >> shift);
        int v = SIGNED ? f((int)(short)x, (int)(short)y, (int)(short)z, true) : f((int)x, (int)y, (int)z, false);
        r |= ((unsigned int)v & 0xffffu) << shift;
    }
    return r;
}
static inline int __cc_wrap16(int v, bool is_signed) { return is_signed ? (int)(short)(unsigned short)v : (int)(unsigned short)v; }
#define __CC_DPX(NAME, EXPR) \
    static inline int NAME##_s32(int a, int b, int c) { typedef int T; return EXPR; } \
    static inline unsigned int NAME##_u32(unsigned int a, unsigned int b, unsigned int c) { typedef unsigned int T; return EXPR; } \
    static inline unsigned int NAME##_s16x2(unsigned int x, unsigned int y, unsigned int z) { \
        return __cc_halves3<true>(x, y, z, [](int a, int b, int c, bool) { typedef int T; return EXPR; }); } \
    static inline unsigned int NAME##_u16x2(unsigned int x, unsigned int y, unsigned int z) { \
        return __cc_halves3<false>(x, y, z, [](int a, int b, int c, bool) { typedef int T; return EXPR; }); }
__CC_DPX(__vimax3, std::max<T>(std::max<T>(a, b), c))
__CC_DPX(__vimin3, std::min<T>(std::min<T>(a, b), c))
#undef __CC_DPX
static inline int __cc_sum32(int a, int b) { return (int)((unsigned int)a + (unsigned int)b); }
static inline int __viaddmax_s32(int a, int b, int c) { return std::max(__cc_sum32(a, b), c); }
static inline int __viaddmin_s32(int a, int b, int c) { return std::min(__cc_sum32(a, b), c); }
static inline unsigned int __viaddmax_u32(unsigned int a, unsigned int b, unsigned int c) { return std::max(a + b, c); }
static inline unsigned int __viaddmin_u32(unsigned int a, unsigned int b, unsigned int c) { return std::min(a + b, c); }
static inline unsigned int __viaddmax_s16x2(unsigned int a, unsigned int b, unsigned int c) {
    return __cc_halves3<true>(a, b, c, [](int x, int y, int z, bool s) { return std::max(__cc_wrap16(x + y, s), z); }); }
static inline unsigned int __viaddmin_s16x2(unsigned int a, unsigned int b, unsigned int c) {
    return __cc_halves3<true>(a, b, c, [](int x, int y, int z, bool s) { return std::min(__cc_wrap16(x + y, s), z); }); }
static inline unsigned int __viaddmax_u16x2(unsigned int a, unsigned int b, unsigned int c) {
    return __cc_halves3<false>(a, b, c, [](int x, int y, int z, bool s) { return std::max(__cc_wrap16(x + y, s), z); }); }
static inline unsigned int __viaddmin_u16x2(unsigned int a, unsigned int b, unsigned int c) {
    return __cc_halves3<false>(a, b, c, [](int x, int y, int z, bool s) { return std::min(__cc_wrap16(x + y, s), z); }); }
static inline int __vimax_s32_relu(int a, int b) { return std::max(std::max(a, b), 0); }
static inline int __vimin_s32_relu(int a, int b) { return std::max(std::min(a, b), 0); }
static inline int __vimax3_s32_relu(int a, int b, int c) { return std::max(__vimax3_s32(a, b, c), 0); }
static inline int __vimin3_s32_relu(int a, int b, int c) { return std::max(__vimin3_s32(a, b, c), 0); }
static inline int __viaddmax_s32_relu(int a, int b, int c) { return std::max(__viaddmax_s32(a, b, c), 0); }
static inline int __viaddmin_s32_relu(int a, int b, int c) { return std::max(__viaddmin_s32(a, b, c), 0); }
static inline unsigned int __cc_relu16x2(unsigned int v) { return __cc_halves3<true>(v, 0, 0, [](int x, int, int, bool) { return std::max(x, 0); }); }
static inline unsigned int __vimax_s16x2_relu(unsigned int a, unsigned int b) { return __cc_relu16x2(__vimax3_s16x2(a, b, b)); }
static inline unsigned int __vimin_s16x2_relu(unsigned int a, unsigned int b) { return __cc_relu16x2(__vimin3_s16x2(a, b, b)); }
static inline unsigned int __vimax3_s16x2_relu(unsigned int a, unsigned int b, unsigned int c) { return __cc_relu16x2(__vimax3_s16x2(a, b, c)); }
static inline unsigned int __vimin3_s16x2_relu(unsigned int a, unsigned int b, unsigned int c) { return __cc_relu16x2(__vimin3_s16x2(a, b, c)); }
static inline unsigned int __viaddmax_s16x2_relu(unsigned int a, unsigned int b, unsigned int c) { return __cc_relu16x2(__viaddmax_s16x2(a, b, c)); }
static inline unsigned int __viaddmin_s16x2_relu(unsigned int a, unsigned int b, unsigned int c) { return __cc_relu16x2(__viaddmin_s16x2(a, b, c)); }
// ... and the max or min of two that also says which one it was (*pred: a >= b, or a <= b).
static inline int __vibmax_s32(int a, int b, bool* pred) { *pred = a >= b; return std::max(a, b); }
static inline int __vibmin_s32(int a, int b, bool* pred) { *pred = a <= b; return std::min(a, b); }
static inline unsigned int __vibmax_u32(unsigned int a, unsigned int b, bool* pred) { *pred = a >= b; return std::max(a, b); }
static inline unsigned int __vibmin_u32(unsigned int a, unsigned int b, bool* pred) { *pred = a <= b; return std::min(a, b); }

// __fns: the position of the offset-th set bit of mask counted from bit base (upward for a
// positive offset, downward for a negative one; offset 0 asks whether bit base is set), or
// 0xffffffff when there is none (PTX's fns).
static inline unsigned int __fns(unsigned int mask, unsigned int base, int offset) {
    if (base > 31) return 0xffffffffu;  // (undefined on the GPU)
    if (offset == 0) return (mask >> base) & 1u ? base : 0xffffffffu;
    long long count = offset > 0 ? offset - 1LL : -(long long)offset - 1;
    for (int pos = (int)base; pos >= 0 && pos < 32; pos += offset > 0 ? 1 : -1)
        if ((mask >> pos) & 1u && count-- == 0) return (unsigned int)pos;
    return 0xffffffffu;
}
// __builtin_assume(e) and __assume(e) (CUDA 11.2+): hints to the compiler; e is not evaluated.
#define __builtin_assume(e) ((void)sizeof((e) ? 1 : 0))
#define __assume(e) ((void)sizeof((e) ? 1 : 0))
static inline int __double2loint(double d) { return (int)(unsigned int)__cc_bits<unsigned long long>(d); }
static inline int __double2hiint(double d) { return (int)(unsigned int)(__cc_bits<unsigned long long>(d) >> 32); }
static inline double __hiloint2double(int hi, int lo) {
    return __cc_bits<double>(((unsigned long long)(unsigned int)hi << 32) | (unsigned int)lo);
}

// CUDA's math functions that C does not have are functions here under __cc_ names, and the CUDA
// names are aliases of them (object-like macros): glibc or a newer C library may declare some
// (exp10, sincos, C23's sinpi), and a kernel may define its own, say float normcdf(float), which
// stays an overload beside CUDA's as it would with nvcc.
static inline float __cc_fdividef(float a, float b) { return a / b; }
// __fdividef: a times the reciprocal of b, whose hardware approximation is 0 for 2^126 < |b| (the
// Programming Guide: the result is 0 there, and NaN for an infinite a); elsewhere the division (on a
// GPU within 2 ulp of it).
static inline float __cc_fast_divide(float a, float b) {
    return fabsf(b) > 0x1p126f && fabsf(b) < INFINITY ? a * copysignf(0.0f, b) : a / b;
}
static inline float __cc_erfinvf(float x) { return (float)__cc_erfinv(x); }
static inline float __cc_erfcinvf(float x) { return (float)__cc_erfcinv(x); }
static inline float __cc_erfcxf(float x) { return (float)__cc_erfcx(x); }
static inline float __cc_normcdff(float x) { return (float)__cc_normcdf(x); }
static inline float __cc_normcdfinvf(float x) { return (float)__cc_normcdfinv(x); }
// I0 and I1 from their power series in long double: every term is positive, so the sum keeps its digits
// (libstdc++'s std::cyl_bessel_i was 7 to 16 ulp off for x from 5 to 80; CUDA's bound is 6). Past 713
// they overflow a double. (I0 is even, I1 odd.)
static inline double __cc_bessel_i_series(double x, int order) {
    long double h = fabsl((long double)x) / 2, term = order ? h : 1.0L, sum = term, q = h * h;
    if (x != x) return x;
    if (fabs(x) > 713.987) return HUGE_VAL;
    for (int k = 1; k < 2000 && term > sum * 1e-21L; k++) term *= q / ((long double)k * (k + order)), sum += term;
    return (double)sum;
}
static inline double __cc_cyl_bessel_i0(double x) { return __cc_bessel_i_series(x, 0); }
static inline double __cc_cyl_bessel_i1(double x) { return copysign(__cc_bessel_i_series(x, 1), x); }
static inline float __cc_cyl_bessel_i0f(float x) { return (float)__cc_cyl_bessel_i0(x); }
static inline float __cc_cyl_bessel_i1f(float x) { return (float)__cc_cyl_bessel_i1(x); }
#define rsqrtf __cc_rsqrtf
#define rsqrt __cc_rsqrt
#define exp10f __cc_exp10f
#define exp10 __cc_exp10
#define sincosf __cc_sincosf
#define sincos __cc_sincos
#define sinpif __cc_sinpif
#define cospif __cc_cospif
#define sinpi __cc_sinpi
#define cospi __cc_cospi
#define sincospif __cc_sincospif
#define sincospi __cc_sincospi
#define rcbrtf __cc_rcbrtf
#define rhypotf __cc_rhypotf
#define fdividef __cc_fdividef
#define erfinvf __cc_erfinvf
#define erfinv __cc_erfinv
#define erfcinvf __cc_erfcinvf
#define erfcinv __cc_erfcinv
#define erfcxf __cc_erfcxf
#define erfcx __cc_erfcx
#define normcdff __cc_normcdff
#define normcdf __cc_normcdf
#define normcdfinvf __cc_normcdfinvf
#define normcdfinv __cc_normcdfinv
#define cyl_bessel_i0f __cc_cyl_bessel_i0f
#define cyl_bessel_i1f __cc_cyl_bessel_i1f
#define cyl_bessel_i0 __cc_cyl_bessel_i0
#define cyl_bessel_i1 __cc_cyl_bessel_i1
// CUDA's float overloads of these (crt/math_functions.hpp: float rsqrt(float) is rsqrtf, ...): a float
// argument gives a float, the float function's. Templates, so that a kernel's own `float normcdf(float)`
// is a better match than this one and is the one called, as with nvcc. An integer argument is
// ambiguous in CUDA (float or double?): refused here too (the deleted overload).
#define __CC_FLOAT_OVERLOAD(NAME, FLOAT_NAME) \
    template <class F, typename std::enable_if<std::is_same<F, float>::value, int>::type = 0> \
    static inline float NAME(F x) { return FLOAT_NAME(x); } \
    template <class I, typename std::enable_if<std::is_integral<I>::value, int>::type = 0> \
    void NAME(I) = delete;
__CC_FLOAT_OVERLOAD(__cc_rsqrt, __cc_rsqrtf)
__CC_FLOAT_OVERLOAD(rcbrt, __cc_rcbrtf)
__CC_FLOAT_OVERLOAD(__cc_sinpi, __cc_sinpif)
__CC_FLOAT_OVERLOAD(__cc_cospi, __cc_cospif)
__CC_FLOAT_OVERLOAD(__cc_exp10, __cc_exp10f)
__CC_FLOAT_OVERLOAD(__cc_erfinv, __cc_erfinvf)
__CC_FLOAT_OVERLOAD(__cc_erfcinv, __cc_erfcinvf)
__CC_FLOAT_OVERLOAD(__cc_erfcx, __cc_erfcxf)
__CC_FLOAT_OVERLOAD(__cc_normcdf, __cc_normcdff)
__CC_FLOAT_OVERLOAD(__cc_normcdfinv, __cc_normcdfinvf)
__CC_FLOAT_OVERLOAD(__cc_cyl_bessel_i0, __cc_cyl_bessel_i0f)
__CC_FLOAT_OVERLOAD(__cc_cyl_bessel_i1, __cc_cyl_bessel_i1f)
#undef __CC_FLOAT_OVERLOAD
// sincos and sincospi of a float into two floats (CUDA's float overloads).
static inline void __cc_sincos(float x, float* s, float* c) { __cc_sincosf(x, s, c); }
static inline void __cc_sincospi(float x, float* s, float* c) { __cc_sincospif(x, s, c); }
// The intrinsics (fast, less exact on the GPU; libm's here).
#define __saturatef(x) __cc_saturatef(x)
#define __fdividef(a, b) __cc_fast_divide((float)(a), (float)(b))
#define __expf(x) expf(x)
#define __exp10f(x) __cc_exp10f(x)
#define __logf(x) logf(x)
#define __log2f(x) log2f(x)
#define __log10f(x) log10f(x)
#define __sinf(x) sinf(x)
#define __cosf(x) cosf(x)
#define __tanf(x) tanf(x)
#define __tanhf(x) tanhf(x)  // (CUDA 12.8: tanh.approx.f32 on the GPU, within about 2^-11 of tanh)
#define __sincosf(x, s, c) __cc_sincosf(x, s, c)
// __powf(x, y) is exp2(y * log2(x)) on the GPU with the approximate units (lg2.approx, ex2.approx; the
// Programming Guide derives its error from that): log2 of x < 0 is NaN and of ±0 is -inf, so x < 0
// gives NaN, and 0^0, inf^0 and 1^inf are NaN (0 * inf). Where y * log2(x) is finite and x > 0, powf's
// value (the GPU's is within a few ulp of it).
static inline float __cc_fast_pow(float x, float y) {
    float l = x == 0.0f ? -INFINITY : (x < 0.0f ? NAN : log2f(x)), p = y * l;
    if (p != p || isinf(p) || x < 0.0f || x == 0.0f) return exp2f(p);
    return powf(x, y);
}
#define __powf(a, b) __cc_fast_pow((float)(a), (float)(b))
// (templates for the reason the SIMD functions above are)
#define __CC_DIRECTED(SUFFIX, MODE) \
    template <int = 0> static inline float __fadd_##SUFFIX(float a, float b) { return __cc_add_dir(a, b, MODE); } \
    template <int = 0> static inline float __fsub_##SUFFIX(float a, float b) { return __cc_add_dir(a, -b, MODE); } \
    template <int = 0> static inline float __fmul_##SUFFIX(float a, float b) { return __cc_mul_dir(a, b, MODE); } \
    template <int = 0> static inline float __fdiv_##SUFFIX(float a, float b) { return __cc_div_dir(a, b, MODE); } \
    template <int = 0> static inline float __frcp_##SUFFIX(float x) { return __cc_div_dir(1.0f, x, MODE); } \
    template <int = 0> static inline float __fsqrt_##SUFFIX(float x) { return __cc_sqrt_dir(x, MODE); } \
    template <int = 0> static inline float __fmaf_##SUFFIX(float a, float b, float c) { return __cc_fma_dir(a, b, c, MODE); } \
    template <int = 0> static inline double __fma_##SUFFIX(double a, double b, double c) { return __cc_fma_dir(a, b, c, MODE); } \
    template <int = 0> static inline double __dadd_##SUFFIX(double a, double b) { return __cc_add_dir(a, b, MODE); } \
    template <int = 0> static inline double __dsub_##SUFFIX(double a, double b) { return __cc_add_dir(a, -b, MODE); } \
    template <int = 0> static inline double __dmul_##SUFFIX(double a, double b) { return __cc_mul_dir(a, b, MODE); } \
    template <int = 0> static inline double __ddiv_##SUFFIX(double a, double b) { return __cc_div_dir(a, b, MODE); } \
    template <int = 0> static inline double __drcp_##SUFFIX(double x) { return __cc_div_dir(1.0, x, MODE); } \
    template <int = 0> static inline double __dsqrt_##SUFFIX(double x) { return __cc_sqrt_dir(x, MODE); }
__CC_DIRECTED(rz, 1)
__CC_DIRECTED(ru, 2)
__CC_DIRECTED(rd, 3)
#define __dsub_rn(a, b) ((double)(a) - (double)(b))
#define __ddiv_rn(a, b) ((double)(a) / (double)(b))
#define __drcp_rn(x) (1.0 / (double)(x))
#define __dsqrt_rn(x) sqrt((double)(x))
// (NAME_block: the sanitizer takes note that the atomic is of block scope, atomic only among the threads of
// one block; two blocks' updates of one global element so are a race)
static inline void __cc_block_scope_next() {
    if (__cc_sanitizing) __cc_me->block_scope_next = true;
}
#define __CC_SCOPED_ATOMICS(NAME) template <class... A> __attribute__((always_inline)) static inline auto NAME##_block(A&&... a) -> decltype(NAME(static_cast<A&&>(a)...)) { \
        __cc_block_scope_next(); \
        return NAME(static_cast<A&&>(a)...); } \
    template <class... A> __attribute__((always_inline)) static inline auto NAME##_system(A&&... a) -> decltype(NAME(static_cast<A&&>(a)...)) { return NAME(static_cast<A&&>(a)...); }
__CC_SCOPED_ATOMICS(atomicAdd) __CC_SCOPED_ATOMICS(atomicSub) __CC_SCOPED_ATOMICS(atomicExch)
__CC_SCOPED_ATOMICS(atomicMin) __CC_SCOPED_ATOMICS(atomicMax) __CC_SCOPED_ATOMICS(atomicInc)
__CC_SCOPED_ATOMICS(atomicDec) __CC_SCOPED_ATOMICS(atomicAnd) __CC_SCOPED_ATOMICS(atomicOr)
__CC_SCOPED_ATOMICS(atomicXor) __CC_SCOPED_ATOMICS(atomicCAS)
#define __fadd_rn(a, b) ((float)(a) + (float)(b))
#define __fsub_rn(a, b) ((float)(a) - (float)(b))
#define __fmul_rn(a, b) ((float)(a) * (float)(b))
#define __fdiv_rn(a, b) ((float)(a) / (float)(b))
#define __fmaf_rn(a, b, c) fmaf(a, b, c)
#define __frcp_rn(x) (1.0f / (float)(x))
#define __fsqrt_rn(x) sqrtf(x)
#define __frsqrt_rn(x) ((float)(1.0 / sqrt((double)(float)(x))))
#define __fmaf_ieee_rn(a, b, c) fmaf(a, b, c)
#define __fmaf_ieee_rz(a, b, c) __fmaf_rz(a, b, c)
#define __fmaf_ieee_ru(a, b, c) __fmaf_ru(a, b, c)
#define __fmaf_ieee_rd(a, b, c) __fmaf_rd(a, b, c)
#define __dadd_rn(a, b) ((double)(a) + (double)(b))
#define __dmul_rn(a, b) ((double)(a) * (double)(b))
#define __fma_rn(a, b, c) fma(a, b, c)
// Conversions with a rounding mode (rn, rz, ru, rd), as the GPU's cvt does them. To an integer:
// rounded, then clamped to the integer's range (no wrap-around); NaN gives 0, or the bit pattern
// with only the top bit set when the integer has 64 bits or the value is a double (PTX's rule).
template <class I, class F> static inline I __cc_to_integer(F v, int mode) {
    typedef std::numeric_limits<I> L;
    if (v != v) return (sizeof(I) == 8 || sizeof(F) == 8) ? (I)((unsigned long long)1 << (8 * sizeof(I) - 1)) : (I)0;
    F r = mode == 0 ? std::nearbyint(v) : mode == 1 ? std::trunc(v) : mode == 2 ? std::ceil(v) : std::floor(v);
    if (r <= (F)L::min()) return L::min();
    if (r >= (F)L::max()) return L::max();  // ((F)L::max() rounds up to a power of two)
    return (I)r;
}
// To a narrower floating-point type: rounded to nearest, moved one step by the directed modes
// when the exact value lies on the other side (long double holds every int64 and double exactly
// on x86; its difference has the right sign everywhere).
template <class T, class S> static inline T __cc_narrow(S v, int mode) {
    T r = (T)v;
    long double exact = (long double)v, got = (long double)r;
    return __cc_directed(r, exact > got ? (T)1 : exact < got ? (T)-1 : (T)0, mode);
}
#define __CC_CONVERSIONS(SUFFIX, MODE) \
    static inline int __float2int_##SUFFIX(float x) { return __cc_to_integer<int>(x, MODE); } \
    static inline unsigned int __float2uint_##SUFFIX(float x) { return __cc_to_integer<unsigned int>(x, MODE); } \
    static inline long long __float2ll_##SUFFIX(float x) { return __cc_to_integer<long long>(x, MODE); } \
    static inline unsigned long long __float2ull_##SUFFIX(float x) { return __cc_to_integer<unsigned long long>(x, MODE); } \
    static inline int __double2int_##SUFFIX(double x) { return __cc_to_integer<int>(x, MODE); } \
    static inline unsigned int __double2uint_##SUFFIX(double x) { return __cc_to_integer<unsigned int>(x, MODE); } \
    static inline long long __double2ll_##SUFFIX(double x) { return __cc_to_integer<long long>(x, MODE); } \
    static inline unsigned long long __double2ull_##SUFFIX(double x) { return __cc_to_integer<unsigned long long>(x, MODE); } \
    static inline float __double2float_##SUFFIX(double x) { return __cc_narrow<float>(x, MODE); } \
    static inline float __int2float_##SUFFIX(int x) { return __cc_narrow<float>(x, MODE); } \
    static inline float __uint2float_##SUFFIX(unsigned int x) { return __cc_narrow<float>(x, MODE); } \
    static inline float __ll2float_##SUFFIX(long long x) { return __cc_narrow<float>(x, MODE); } \
    static inline float __ull2float_##SUFFIX(unsigned long long x) { return __cc_narrow<float>(x, MODE); } \
    static inline double __ll2double_##SUFFIX(long long x) { return __cc_narrow<double>(x, MODE); } \
    static inline double __ull2double_##SUFFIX(unsigned long long x) { return __cc_narrow<double>(x, MODE); }
__CC_CONVERSIONS(rn, 0)
__CC_CONVERSIONS(rz, 1)
__CC_CONVERSIONS(ru, 2)
__CC_CONVERSIONS(rd, 3)
#undef __CC_CONVERSIONS
// half and bfloat16: to integers through float (which holds each of their values exactly),
// saturating as a GPU's conversion does (NaN gives 0); from integers and floats rounded in the
// mode asked: to nearest, then one step (one unit in the last place) when the exact value lies on
// the other side. (Integers beyond 2^24 are rounded to float first: for bfloat16 a value that close
// to a tie may then round the other way.)
template <class H> static inline H __cc_half_step(H r, bool up) {
    unsigned short b = r.__x;
    bool negative = b & 0x8000;
    if ((b & 0x7fff) == 0) b = up ? 0x0001 : 0x8001;  // from zero: the smallest subnormal
    else b = (unsigned short)(up != negative ? b + 1 : b - 1);
    H s;
    s.__x = b;
    return s;
}
template <class H> static inline H __cc_to_half(long double x, int mode) {
    H r = H(__cc_odd_float(x));  // rounded to nearest (once)
    long double got = (long double)(float)r;
    if (mode == 0 || x != x || got == x) return r;
    if (mode == 1) return (got > x) == (x > 0) ? __cc_half_step(r, x < 0) : r;  // toward zero
    if (mode == 2) return got < x ? __cc_half_step(r, true) : r;  // up
    return got > x ? __cc_half_step(r, false) : r;               // down
}
#define __CC_HALF_CONVERSIONS(H, NAME, SUFFIX, MODE) \
    static inline int __##NAME##2int_##SUFFIX(H h) { return __cc_to_integer<int>((float)h, MODE); } \
    static inline unsigned int __##NAME##2uint_##SUFFIX(H h) { return __cc_to_integer<unsigned int>((float)h, MODE); } \
    static inline short __##NAME##2short_##SUFFIX(H h) { return __cc_to_integer<short>((float)h, MODE); } \
    static inline unsigned short __##NAME##2ushort_##SUFFIX(H h) { \
        return __cc_to_integer<unsigned short>((float)h, MODE); \
    } \
    static inline long long __##NAME##2ll_##SUFFIX(H h) { return __cc_to_integer<long long>((float)h, MODE); } \
    static inline unsigned long long __##NAME##2ull_##SUFFIX(H h) { \
        return __cc_to_integer<unsigned long long>((float)h, MODE); \
    } \
    static inline H __int2##NAME##_##SUFFIX(int i) { return __cc_to_half<H>(i, MODE); } \
    static inline H __uint2##NAME##_##SUFFIX(unsigned int i) { return __cc_to_half<H>(i, MODE); } \
    static inline H __short2##NAME##_##SUFFIX(short i) { return __cc_to_half<H>(i, MODE); } \
    static inline H __ushort2##NAME##_##SUFFIX(unsigned short i) { return __cc_to_half<H>(i, MODE); } \
    static inline H __ll2##NAME##_##SUFFIX(long long i) { return __cc_to_half<H>(i, MODE); } \
    static inline H __ull2##NAME##_##SUFFIX(unsigned long long i) { return __cc_to_half<H>(i, MODE); }
__CC_HALF_CONVERSIONS(__half, half, rn, 0)
__CC_HALF_CONVERSIONS(__half, half, rz, 1)
__CC_HALF_CONVERSIONS(__half, half, ru, 2)
__CC_HALF_CONVERSIONS(__half, half, rd, 3)
__CC_HALF_CONVERSIONS(__nv_bfloat16, bfloat16, rn, 0)
__CC_HALF_CONVERSIONS(__nv_bfloat16, bfloat16, rz, 1)
__CC_HALF_CONVERSIONS(__nv_bfloat16, bfloat16, ru, 2)
__CC_HALF_CONVERSIONS(__nv_bfloat16, bfloat16, rd, 3)
#undef __CC_HALF_CONVERSIONS
template <class I> static inline I __cc_half_to_integer(float v) { return __cc_to_integer<I>(v, 1); }
static inline signed char __half2char_rz(__half h) { return __cc_to_integer<signed char>((float)h, 1); }
static inline unsigned char __half2uchar_rz(__half h) { return __cc_to_integer<unsigned char>((float)h, 1); }
static inline signed char __bfloat162char_rz(__nv_bfloat16 h) { return __cc_to_integer<signed char>((float)h, 1); }
static inline unsigned char __bfloat162uchar_rz(__nv_bfloat16 h) { return __cc_to_integer<unsigned char>((float)h, 1); }
static inline __half __float2half_rz(float f) { return __cc_to_half<__half>(f, 1); }
static inline __half __float2half_rd(float f) { return __cc_to_half<__half>(f, 3); }
static inline __half __float2half_ru(float f) { return __cc_to_half<__half>(f, 2); }
static inline __nv_bfloat16 __float2bfloat16_rz(float f) { return __cc_to_half<__nv_bfloat16>(f, 1); }
static inline __nv_bfloat16 __float2bfloat16_rd(float f) { return __cc_to_half<__nv_bfloat16>(f, 3); }
static inline __nv_bfloat16 __float2bfloat16_ru(float f) { return __cc_to_half<__nv_bfloat16>(f, 2); }
static inline double __int2double_rn(int x) { return x; }
static inline double __uint2double_rn(unsigned int x) { return x; }
// (sanitized: the bits a float's cast gives are noted for atomicMin/atomicMax, see __cc_float_order)
template <class To, class From>
__attribute__((always_inline)) static inline To __cc_float_bits(From x) {
    To y = __cc_bits<To>(x);
    if (__cc_sanitizing) __cc_me->float_bits = (uint64_t)(typename std::make_unsigned<To>::type)y,
                         __cc_me->float_bits_size = (int)sizeof(To);
    return y;
}
#define __float_as_int(x) __cc_float_bits<int>((float)(x))
#define __float_as_uint(x) __cc_float_bits<unsigned int>((float)(x))
#define __int_as_float(x) __cc_bits<float>((int)(x))
#define __uint_as_float(x) __cc_bits<float>((unsigned int)(x))
#define __double_as_longlong(x) __cc_float_bits<long long>((double)(x))
#define __longlong_as_double(x) __cc_bits<double>((long long)(x))
#define __popc(x) __builtin_popcount((unsigned int)(x))
#define __popcll(x) __builtin_popcountll((unsigned long long)(x))
#define __clz(x) __cc_clz((unsigned int)(x))
#define __clzll(x) __cc_clzll((unsigned long long)(x))
#define __ffs(x) __builtin_ffs((int)(x))
#define __ffsll(x) __builtin_ffsll((long long)(x))
#define __brev(x) __cc_brev((unsigned int)(x))
#define __brevll(x) __cc_brevll((unsigned long long)(x))
// The low 32 bits of the product of the low 24 bits of each (signed: sign-extended from bit 23), as
// PTX's mul24.lo: the high 8 bits of each operand are ignored.
static inline int __mul24(int a, int b) {
    long long x = (int)((unsigned)a << 8) >> 8, y = (int)((unsigned)b << 8) >> 8;
    return (int)(unsigned)(x * y);
}
static inline unsigned __umul24(unsigned a, unsigned b) { return (a & 0xffffffu) * (b & 0xffffffu); }
#define __mulhi(a, b) ((int)(((long long)(int)(a) * (int)(b)) >> 32))
#define __umulhi(a, b) ((unsigned int)(((unsigned long long)(unsigned int)(a) * (unsigned int)(b)) >> 32))
// |x - y| + z, the difference taken without overflow (PTX's sad): CUDA's signatures, so the arguments
// convert to int (unsigned for __usad) as they do there.
static inline unsigned int __sad(int x, int y, unsigned int z) {
    return (x > y ? (unsigned int)x - (unsigned int)y : (unsigned int)y - (unsigned int)x) + z;
}
static inline unsigned int __usad(unsigned int x, unsigned int y, unsigned int z) { return (x > y ? x - y : y - x) + z; }
#define __mul64hi(a, b) ((long long)(((__int128)(long long)(a) * (long long)(b)) >> 64))
#define __umul64hi(a, b) ((unsigned long long)(((unsigned __int128)(unsigned long long)(a) * (unsigned long long)(b)) >> 64))
// Dot products of packed 8-bit (and 16-bit) integers, with a 32-bit accumulator (sm_61+): the
// int8 inference instruction of notebook 08's quantization.
static inline int __cc_byte(unsigned v, int k, bool is_signed) {
    return is_signed ? (int)(signed char)(v >> (8 * k)) : (int)((v >> (8 * k)) & 0xffu);
}
static inline int __cc_dp4a(unsigned a, unsigned b, bool is_signed) {
    int s = 0;
    for (int k = 0; k < 4; k++) s += __cc_byte(a, k, is_signed) * __cc_byte(b, k, is_signed);
    return s;
}
static inline int __dp4a(int a, int b, int c) { return (int)((unsigned)__cc_dp4a((unsigned)a, (unsigned)b, true) + (unsigned)c); }
static inline unsigned int __dp4a(unsigned int a, unsigned int b, unsigned int c) { return (unsigned)__cc_dp4a(a, b, false) + c; }
static inline int __dp4a(char4 a, char4 b, int c) { return __dp4a(__cc_bits<int>(a), __cc_bits<int>(b), c); }
static inline unsigned int __dp4a(uchar4 a, uchar4 b, unsigned int c) {
    return __dp4a(__cc_bits<unsigned int>(a), __cc_bits<unsigned int>(b), c);
}
// __dp2a: two 16-bit halves of a times two bytes of b (the low two, or the high two), plus c.
static inline long long __cc_dp2a(unsigned a, unsigned b, bool high, bool is_signed) {
    long long s = 0;
    for (int k = 0; k < 2; k++) {
        long long x = is_signed ? (long long)(short)(a >> (16 * k)) : (long long)((a >> (16 * k)) & 0xffffu);
        s += x * __cc_byte(b, k + (high ? 2 : 0), is_signed);
    }
    return s;
}
static inline int __dp2a_lo(int a, int b, int c) { return (int)((unsigned)__cc_dp2a((unsigned)a, (unsigned)b, false, true) + (unsigned)c); }
static inline int __dp2a_hi(int a, int b, int c) { return (int)((unsigned)__cc_dp2a((unsigned)a, (unsigned)b, true, true) + (unsigned)c); }
static inline unsigned int __dp2a_lo(unsigned int a, unsigned int b, unsigned int c) { return (unsigned)__cc_dp2a(a, b, false, false) + c; }
static inline unsigned int __dp2a_hi(unsigned int a, unsigned int b, unsigned int c) { return (unsigned)__cc_dp2a(a, b, true, false) + c; }
// Which memory a generic pointer points into: shared, constant (a __constant__ variable: the
// launchers define __cc_in_constant), global (an argument array or a __device__ variable), local.
__CC_HOOK bool __cc_in_constant(const volatile void* p);
static inline unsigned int __isShared(const volatile void* p) {
    const char* c = (const char*)p;
    return __cc_find_shared_array(p) != nullptr
           || (__cc_dyn_shared && c >= __cc_dyn_shared && c < __cc_dyn_shared + __cc_dyn_shared_bytes);
}
static inline unsigned int __isConstant(const volatile void* p) { return __cc_in_constant(p); }
static inline unsigned int __isGlobal(const volatile void* p) {
    return !__isShared(p) && !__cc_in_constant(p) && __cc_find_allocation(p) != nullptr;
}
static inline unsigned int __isLocal(const volatile void* p) { return !__isShared(p) && !__isConstant(p) && !__isGlobal(p); }
// __ldg(p): a load through the read-only cache; the sanitizer checks that no thread wrote the element
// in this launch (and, as for any read, races), __cc_ldg_check.
template <class P>
__attribute__((always_inline)) static inline auto __cc_ldg(const P& p) -> __cc_value_t<decltype(*p)> {
    __cc_value_t<decltype(*p)> v = *p;  // (the bounds check)
    if (__cc_sanitizing) {
        const volatile void* at = (const volatile void*)&*p;
        __cc_note(at, sizeof v, __CC_READ + __cc_read_check<decltype(v)>());
        __cc_ldg_check(at, sizeof v);
    }
    return v;
}
#define __ldg(p) __cc_ldg(p)
// The other cache-hinted loads and stores (cache global, streaming, last use, volatile; write-back,
// write-through): one memory here, so a plain load or store.
#define __ldcg(p) (*(p))
#define __ldca(p) (*(p))
#define __ldcs(p) (*(p))
#define __ldlu(p) (*(p))
#define __ldcv(p) (*(p))
#define __stwb(p, v) ((void)(*(p) = (v)))
#define __stcg(p, v) ((void)(*(p) = (v)))
#define __stcs(p, v) ((void)(*(p) = (v)))
#define __stwt(p, v) ((void)(*(p) = (v)))
#define __threadfence() (__cc_sanitizing ? __cc_note_fence(true) : __cc_parallel ? __atomic_thread_fence(__ATOMIC_SEQ_CST) : (void)0)  // blocks on other workers
#define __threadfence_block() (__cc_sanitizing ? __cc_note_fence(false) : (void)0)  // (a block runs on one worker)
#define __threadfence_system() __threadfence()
// (object-like macros: a function-like one would take a kernel or a variable named clock for a call)
static inline long long __cc_clock() { return __cc_now_ns(); }
#define clock64 __cc_clock
#define clock __cc_clock
// PTX's special registers, which kernels read with one inline `asm("mov.u32 %0, %%laneid;" : "=r"(lane))`
// (source.py's _ptx_special_registers rewrites such a statement into a call of these). The lane and warp
// come from the thread's flat index in its block, as a GPU's do.
static inline unsigned __cc_ptx_laneid() { return __cc_tid() % 32u; }
static inline unsigned __cc_ptx_warpid() { return __cc_tid() / 32u; }
static inline unsigned __cc_ptx_lanemask_lt() { return (1u << __cc_ptx_laneid()) - 1u; }
static inline unsigned __cc_ptx_lanemask_le() { return (2u << __cc_ptx_laneid()) - 1u; }
static inline unsigned __cc_ptx_lanemask_gt() { return ~__cc_ptx_lanemask_le(); }
static inline unsigned __cc_ptx_lanemask_ge() { return ~__cc_ptx_lanemask_lt(); }
static inline unsigned __cc_ptx_lanemask_eq() { return 1u << __cc_ptx_laneid(); }
static inline unsigned long long __cc_ptx_clock64() { return (unsigned long long)__cc_now_ns(); }
static inline unsigned __cc_ptx_clock() { return (unsigned)__cc_now_ns(); }
static inline unsigned long long __cc_ptx_globaltimer() { return (unsigned long long)__cc_now_ns(); }
#define __trap() (__cc_fault_out->op = 0, __cc_fail(__CC_TRAP, __LINE__))
#define __nanosleep(ns) ((void)(ns))  // a thread that sleeps: nothing to wait for here
#define __cc_unsupported_body() __cc_fail(__CC_UNSUPPORTED, __LINE__)
#define __brkpt() (__cc_fault_out->op = 1, __cc_fail(__CC_TRAP, __LINE__))  // (op 1: named as the breakpoint)

// cuComplex.h (CUDA's complex numbers: float2 and double2 with functions). A source's
// `#include <cuComplex.h>` becomes the one-line macro __CC_CUCOMPLEX_H, so that a source without it
// may name its own struct cuComplex (CUDA by Example's Julia set does). The arithmetic is written
// once for both precisions; division and magnitude scale their operands first, as CUDA's do, so that
// large or tiny values do not overflow or underflow.
template <class C> static inline C __cc_cmul(C a, C b) { return {a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x}; }
template <class C> static inline C __cc_cdiv(C a, C b) {
    auto scale = 1 / (std::fabs(b.x) + std::fabs(b.y));
    auto ar = a.x * scale, ai = a.y * scale, br = b.x * scale, bi = b.y * scale;
    auto norm = 1 / (br * br + bi * bi);
    return {(ar * br + ai * bi) * norm, (ai * br - ar * bi) * norm};
}
template <class C> static inline decltype(C().x) __cc_cabs(C z) {
    typedef decltype(C().x) R;
    R a = std::fabs(z.x), b = std::fabs(z.y), big = std::fmax(a, b), small = std::fmin(a, b);
    if (big == 0 || big > std::numeric_limits<R>::max() || small > std::numeric_limits<R>::max()) return big + small;
    R q = small / big;
    return big * std::sqrt(1 + q * q);
}
template <class C> static inline C __cc_cfma(C x, C y, C d) {
    return {x.x * y.x + d.x - x.y * y.y, x.x * y.y + d.y + x.y * y.x};
}
#define __CC_CUCOMPLEX_FUNCTIONS(C, R, S, MAKE) \
    static inline R cuCreal##S(C x) { return x.x; } \
    static inline R cuCimag##S(C x) { return x.y; } \
    static inline C cuConj##S(C x) { return MAKE(x.x, -x.y); } \
    static inline C cuCadd##S(C a, C b) { return MAKE(a.x + b.x, a.y + b.y); } \
    static inline C cuCsub##S(C a, C b) { return MAKE(a.x - b.x, a.y - b.y); } \
    static inline C cuCmul##S(C a, C b) { return __cc_cmul(a, b); } \
    static inline C cuCdiv##S(C a, C b) { return __cc_cdiv(a, b); } \
    static inline R cuCabs##S(C x) { return __cc_cabs(x); } \
    static inline C cuCfma##S(C x, C y, C d) { return __cc_cfma(x, y, d); }
#define __CC_CUCOMPLEX_H \
    typedef float2 cuFloatComplex; typedef double2 cuDoubleComplex; typedef cuFloatComplex cuComplex; \
    __CC_CUCOMPLEX_FUNCTIONS(cuFloatComplex, float, f, make_float2) \
    __CC_CUCOMPLEX_FUNCTIONS(cuDoubleComplex, double, , make_double2) \
    static inline cuFloatComplex make_cuFloatComplex(float r, float i) { return make_float2(r, i); } \
    static inline cuFloatComplex make_cuComplex(float r, float i) { return make_float2(r, i); } \
    static inline cuDoubleComplex make_cuDoubleComplex(double r, double i) { return make_double2(r, i); } \
    static inline cuDoubleComplex cuComplexFloatToDouble(cuFloatComplex c) { return make_double2(c.x, c.y); } \
    static inline cuFloatComplex cuComplexDoubleToFloat(cuDoubleComplex c) { return make_float2((float)c.x, (float)c.y); }

// CUDA's declaration keywords. __shared__ variables become static thread_local: one copy per
// worker, which all threads of the block that worker runs share.
#define __global__ inline __attribute__((always_inline))
#define __device__
#define __host__
#define __shared__ __CC_SHARED_STORAGE
#define __constant__ static
#define __managed__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __restrict__
#define __launch_bounds__(...)
#define __maxnreg__(...)  // (CUDA 12.4: the registers a thread may use, for the GPU's compiler)
// A kernel parameter that the GPU reads where the launch put it instead of copying it per thread (CUDA
// 11.7); it must be const, as NVRTC says (source.py), so that no thread can change it.
#define __grid_constant__
#define __align__(n) __attribute__((aligned(n)))

// ---------------------------------------------------------------------------------------
// Fibers: one per thread of a block, for kernels that call __syncthreads()
// ---------------------------------------------------------------------------------------

enum { __CC_RUNNABLE, __CC_WAITING, __CC_DONE, __CC_AT_WARP, __CC_SPINNING };

// Warp-level calls, as Python names them (cpu.py WARP_OPS).
enum {
    __CC_W_SYNC = 1, __CC_W_SHFL, __CC_W_UP, __CC_W_DOWN, __CC_W_XOR, __CC_W_BALLOT, __CC_W_ANY,
    __CC_W_ALL, __CC_W_UNI, __CC_W_ACTIVE, __CC_W_MATCH_ANY, __CC_W_MATCH_ALL, __CC_W_ADD,
    __CC_W_MIN_U, __CC_W_MIN_I, __CC_W_MAX_U, __CC_W_MAX_I, __CC_W_AND, __CC_W_OR, __CC_W_XOR_R,
};

struct __cc_fiber {
    __cc_context resume;   // where it resumes while it is switched out (x86-64: one cache line)
    uint3 tid;          // its threadIdx
    int state;
    int barrier_line;   // the __syncthreads() or warp-level call it waits at
    int returned_line;  // the kernel's `return` statement it took (0: it ran to the kernel's end)
    int stepping;       // in a warp-synchronous step (__cc_step_on): its volatile accesses are taken in step
    unsigned spins;     // tests of a waiting loop's condition (__cc_spin_point)
    int spin_line;      // the waiting loop it is in (0: none), for a time limit's report
    int parked;         // it finished a block's thread and waits in __cc_fiber_entry for the next
    int predicate;      // its argument to __syncthreads_count/_and/_or
    int wop, warg, wwidth, wsize;  // a warp-level call: which, its lane argument, width, value size
    unsigned wmask;     // the call's mask
    // The warp-level calls it completed in this block: how many, the last one's line and mask (a lane that
    // called with another mask, or went round a loop of calls fewer times, is named so: __cc_warp_fault)
    unsigned wcalls;
    int wdone_line;
    unsigned wdone_mask;
    unsigned char wvalue[32], wresult[32];  // what the lane brings, what it gets back
    char* stack_low;    // lowest usable byte of its stack (the guard page lies below)
    char* stack_high;
    // For each `if` around a __syncthreads() (source.py: __cc_uniform_if): how often the thread tested
    // it in this block, and how often it went in. At a barrier every thread must agree.
    uint32_t if_tests[8], if_taken[8];
#ifdef __CC_USE_UCONTEXT
    ucontext_t context;
#endif
};

// A time limit met in a waiting loop (`while (flag == 0) {}`) names the block's first thread waiting in that
// loop, not whichever of them had its turn when the limit came: the message is the same from run to run.
// (The limit may also come while the block's scheduler runs, between two fibers: then the loop the last one
// was in. round_threads is 0 in a block run in loops, whose fibers hold an earlier launch's state.)
static inline void __cc_name_first_waiter(__cc_worker* w) {
    const __cc_fiber* f = w->current;
    int line = f ? f->spin_line : w->spin_line;
    if (__cc_stop != __CC_TIMEOUT || !line) return;
    for (int k = 0; k < w->round_threads && k < w->fiber_count; k++)
        if (w->fibers[k].spin_line == line && w->fibers[k].state != __CC_DONE) {
            threadIdx = w->fibers[k].tid;
            return;
        }
}

// The fibers, their stacks and the scheduler's state belong to a worker (struct __cc_worker).
__CC_STATE size_t __cc_page_bytes;
static const size_t __CC_STACK_BYTES = 64 * 1024;  // per thread for calls; CUDA's default is only 1 KiB
// A fiber's stack: 64 KiB for calls and small locals, and room for the module's local arrays (a GPU
// thread has up to 512 KiB of local memory). Pages are only used as they are touched.
// (The same for every launch of a module: __cc_page_bytes is set before the first fiber is made.)
__CC_RT size_t __cc_fiber_stack_bytes() {
    size_t arrays = __cc_local_array_bytes < 1024 * 1024 ? __cc_local_array_bytes : 1024 * 1024;
    return __CC_STACK_BYTES + (arrays + __cc_page_bytes - 1) / __cc_page_bytes * __cc_page_bytes;
}

#ifndef __CC_USE_UCONTEXT
// The assembly functions are global but hidden: each compiled module has its own private
// copy. (A local label is not enough: arm64 linkers resolve a GOT entry for a local label to
// the start of the section.)
#ifdef __APPLE__
#define __CC_ASM_NAME(name) "_" #name
#define __CC_ASM_FUNCTION(name) ".globl " __CC_ASM_NAME(name) "\n.private_extern " __CC_ASM_NAME(name) "\n"
#else
#define __CC_ASM_NAME(name) #name
#define __CC_ASM_FUNCTION(name) \
    ".globl " #name "\n.hidden " #name "\n.type " #name ", %function\n"
#endif
// Save the running code's callee-saved registers and where it resumes in *save, and resume what
// *load saved. About 20 instructions, no system call (ucontext's swapcontext makes one per
// switch and is ~50x slower).
extern "C" __attribute__((visibility("hidden"))) void __cc_switch(__cc_context* save, const __cc_context* load)
    __asm__(__CC_ASM_NAME(__cc_switch_impl));
extern "C" __attribute__((visibility("hidden"))) void __cc_fiber_trampoline()
    __asm__(__CC_ASM_NAME(__cc_fiber_trampoline_impl));
#if defined(__x86_64__)
#ifndef __CC_WITH_RUNTIME_OBJECT  // (the object's: one definition per module)
__asm__(
    ".text\n"
    ".p2align 4\n"
    __CC_ASM_FUNCTION(__cc_switch_impl)
    __CC_ASM_NAME(__cc_switch_impl) ":\n"
    // The registers go to the context, not onto the stack: the loads below then depend on %rsi
    // alone, not on the new stack pointer, and the CPU starts them at once (a switch takes about
    // half the time of pushing and popping them on this machine's CPUs).
    "  movq %rbx, 0(%rdi)\n  movq %rbp, 8(%rdi)\n  movq %r12, 16(%rdi)\n"
    "  movq %r13, 24(%rdi)\n  movq %r14, 32(%rdi)\n  movq %r15, 40(%rdi)\n"
    "  movq (%rsp), %rax\n  leaq 8(%rsp), %rcx\n"  // it resumes as if this call had returned
    "  movq %rcx, 48(%rdi)\n  movq %rax, 56(%rdi)\n"
    "  movq 0(%rsi), %rbx\n  movq 8(%rsi), %rbp\n  movq 16(%rsi), %r12\n"
    "  movq 24(%rsi), %r13\n  movq 32(%rsi), %r14\n  movq 40(%rsi), %r15\n"
    "  movq 48(%rsi), %rsp\n"
    // Resume through an indirect jump, not `ret`: the CPU predicts a `ret` from its own record of
    // calls, which names where the fiber that switched out called from, not where the fiber
    // switched in resumes (another barrier): a misprediction at every switch. A jump is
    // predicted from where it went last time: where the previous fiber resumed, usually right.
    "  jmpq *56(%rsi)\n"
    ".p2align 4\n"
    __CC_ASM_FUNCTION(__cc_fiber_trampoline_impl)
    __CC_ASM_NAME(__cc_fiber_trampoline_impl) ":\n"  // first switch into a fiber lands here
    "  movq %rbx, %rdi\n"                             // the fiber, placed in rbx by prepare
    "  callq *%r12\n"                                 // its entry function, placed in r12
    "  ud2\n");
#endif
__CC_RT void __cc_fiber_prepare_stack(__cc_fiber* f, void (*entry)(__cc_fiber*)) {
    // The trampoline's call sees a 16-byte aligned stack, as the ABI wants.
    f->resume = {};
    f->resume.rbx = (void*)f;
    f->resume.r12 = (void*)entry;
    f->resume.sp = (void*)(((uintptr_t)f->stack_high & ~(uintptr_t)15) - 16);
    f->resume.pc = (void*)&__cc_fiber_trampoline;
}
#elif defined(__aarch64__)
#ifndef __CC_WITH_RUNTIME_OBJECT  // (the object's: one definition per module)
__asm__(
    ".text\n"
    ".p2align 4\n"
    __CC_ASM_FUNCTION(__cc_switch_impl)
    __CC_ASM_NAME(__cc_switch_impl) ":\n"
    "  sub sp, sp, #176\n"
    "  stp x19, x20, [sp, #0]\n  stp x21, x22, [sp, #16]\n  stp x23, x24, [sp, #32]\n"
    "  stp x25, x26, [sp, #48]\n  stp x27, x28, [sp, #64]\n  stp x29, x30, [sp, #80]\n"
    "  stp d8, d9, [sp, #96]\n  stp d10, d11, [sp, #112]\n  stp d12, d13, [sp, #128]\n"
    "  stp d14, d15, [sp, #144]\n"
    "  mov x9, sp\n  str x9, [x0]\n  ldr x9, [x1]\n  mov sp, x9\n"
    "  ldp x19, x20, [sp, #0]\n  ldp x21, x22, [sp, #16]\n  ldp x23, x24, [sp, #32]\n"
    "  ldp x25, x26, [sp, #48]\n  ldp x27, x28, [sp, #64]\n  ldp x29, x30, [sp, #80]\n"
    "  ldp d8, d9, [sp, #96]\n  ldp d10, d11, [sp, #112]\n  ldp d12, d13, [sp, #128]\n"
    "  ldp d14, d15, [sp, #144]\n"
    "  add sp, sp, #176\n"
    "  ret\n"
    ".p2align 4\n"
    __CC_ASM_FUNCTION(__cc_fiber_trampoline_impl)
    __CC_ASM_NAME(__cc_fiber_trampoline_impl) ":\n"  // first switch into a fiber lands here
    "  mov x0, x19\n"                                 // the fiber, placed in x19 by prepare
    "  blr x20\n"                                     // its entry function, placed in x20
    "  brk #0\n");
#endif
__CC_RT void __cc_fiber_prepare_stack(__cc_fiber* f, void (*entry)(__cc_fiber*)) {
    uintptr_t top = ((uintptr_t)f->stack_high & ~(uintptr_t)15) - 176;
    void** frame = (void**)top;
    memset(frame, 0, 176);
    frame[0] = (void*)f;                              // x19
    frame[1] = (void*)entry;                          // x20
    frame[11] = (void*)&__cc_fiber_trampoline;        // x30: where `ret` goes
    f->resume.sp = frame;
}
#endif
static inline void __cc_switch_to_fiber(__cc_worker* w, __cc_fiber* f) { __cc_switch(&w->scheduler, &f->resume); }
static inline void __cc_switch_to_scheduler(__cc_worker* w, __cc_fiber* f) { __cc_switch(&f->resume, &w->scheduler); }
static inline void __cc_switch_fibers(__cc_fiber* from, __cc_fiber* to) { __cc_switch(&from->resume, &to->resume); }
#else   // __CC_USE_UCONTEXT
__CC_STATE void (*__cc_ucontext_entry)(__cc_fiber*);
__CC_RT void __cc_ucontext_start(int hi, int lo) {
    // makecontext passes int arguments only: the fiber's address comes in two halves.
    __cc_ucontext_entry((__cc_fiber*)(((uintptr_t)(unsigned)hi << 32) | (uintptr_t)(unsigned)lo));
}
__CC_RT void __cc_fiber_prepare_stack(__cc_fiber* f, void (*entry)(__cc_fiber*)) {
    __cc_ucontext_entry = entry;  // the same function for every worker
    getcontext(&f->context);
    f->context.uc_stack.ss_sp = f->stack_low;
    f->context.uc_stack.ss_size = (size_t)(f->stack_high - f->stack_low);
    f->context.uc_link = nullptr;
    uintptr_t address = (uintptr_t)f;
    makecontext(&f->context, (void (*)())__cc_ucontext_start, 2, (int)(address >> 32), (int)(address & 0xffffffffu));
}
static inline void __cc_switch_to_fiber(__cc_worker* w, __cc_fiber* f) { swapcontext(&w->scheduler_context, &f->context); }
static inline void __cc_switch_to_scheduler(__cc_worker* w, __cc_fiber* f) { swapcontext(&f->context, &w->scheduler_context); }
static inline void __cc_switch_fibers(__cc_fiber* from, __cc_fiber* to) { swapcontext(&from->context, &to->context); }
#endif

// A fiber that stops (at a barrier, a warp-level call, or its end) switches straight to the
// next runnable fiber of the round, and the last one to the scheduler: one switch per thread
// and barrier instead of two.
static inline void __cc_yield(__cc_worker* w, __cc_fiber* f) {
    const long step = __cc_reversed() ? -1 : 1;
    for (long i = (f - w->fibers) + step; i >= 0 && i < w->round_threads; i += step) {
        __cc_fiber* g = &w->fibers[i];
        if (g->state == __CC_RUNNABLE) {
            w->current = g;
            threadIdx = g->tid;
            __cc_switch_fibers(f, g);
            return;
        }
    }
    __cc_switch_to_scheduler(w, f);
}

// A fiber that finished its thread's work waits here, parked, and the next block's thread with
// its index resumes it: its stack is not set up again for every block of a launch.
__CC_RT void __cc_fiber_entry(__cc_fiber* f) {
    __cc_worker* w = __cc_me;  // a fiber stays on the worker thread that started it
    for (;;) {
        w->body(w->body_context);
        f->state = __CC_DONE;
        f->parked = 1;
        __cc_yield(w, f);  // resumed for the next block
        f->parked = 0;
    }
}

// Make room for `count` fibers: one mapping holds all stacks, each above a guard page, so a
// stack overflow is a clean SIGSEGV that the handler can recognise.
__CC_RT bool __cc_reserve_fibers(__cc_worker* w, int count) {
    if (count <= w->fiber_count) return true;
    if (w->stack_pool) munmap(w->stack_pool, w->stack_pool_bytes);
    free(w->fibers);
    __cc_page_bytes = (size_t)sysconf(_SC_PAGESIZE);
    size_t slot = __cc_fiber_stack_bytes() + __cc_page_bytes;
    size_t bytes = slot * (size_t)count;
    void* pool = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    w->fibers = (__cc_fiber*)calloc((size_t)count, sizeof(__cc_fiber));
    if (pool == MAP_FAILED || !w->fibers) {
        if (pool != MAP_FAILED) munmap(pool, bytes);
        w->stack_pool = nullptr, w->fiber_count = 0;
        return false;
    }
    for (size_t i = 0; i < (size_t)count; i++)  // guard pages first: the pool is published complete
        mprotect((char*)pool + slot * i, __cc_page_bytes, PROT_NONE);
    for (int i = 0; i < count; i++) {
        char* guard = (char*)pool + slot * (size_t)i;
        w->fibers[i].stack_low = guard + __cc_page_bytes;
        w->fibers[i].stack_high = guard + slot;
    }
    w->stack_pool_bytes = bytes, w->fiber_count = count;
    w->stack_pool = (char*)pool;
    return true;
}

__CC_RT bool __cc_in_guard_page(uintptr_t address) {
    for (int k = 0; k < __cc_worker_count; k++) {
        const __cc_worker& w = __cc_workers[k];
        if (!w.stack_pool) continue;
        uintptr_t start = (uintptr_t)w.stack_pool;
        if (address < start || address >= start + w.stack_pool_bytes) continue;
        return (address - start) % (__cc_fiber_stack_bytes() + __cc_page_bytes) < __cc_page_bytes;
    }
    return false;
}

// A `return` in a kernel's body (source.py adds the call): the thread is done, as on a GPU,
// where a barrier then waits only for the others. In loop mode (no fibers) nothing waits.
static inline void __cc_thread_returns(int line) {
    __cc_fiber* f = __cc_me->current;
    if (f) f->returned_line = line;
}

// The condition of a loop that waits for a flag, a lock or a count that other threads set (it reads a
// volatile or an atomic value; source.py adds the call): now and then the thread lets the others of
// its block run, as a GPU's warp scheduler does, so that the thread that sets the flag gets to.
// Threads here take turns, and a thread that never gave its turn up would wait for ever. (In a
// kernel run in loops, without fibers, there is no other thread to let run.)
// `poll`: the condition that follows (wrapped in __cc_polled) reads the flag; a `for (;;)` loop
// that waits in its body gives its turn up without that.
static inline bool __cc_spin_point(int line, bool poll = true) {
    __cc_worker* w = __cc_me;
    __cc_fiber* f = w->current;
    w->spin_line = line;
    if (f) f->spin_line = line;
    if (f && !(++f->spins & 63)) {
        f->state = __CC_SPINNING;
        w->spinning++;
        __cc_yield(w, f);
    }
    w->polling = poll && __cc_sanitizing;
    return true;
}
template <class C>
static inline bool __cc_polled(const C& condition) {
    bool holds = static_cast<bool>(condition);
    __cc_worker* w = __cc_me;
    w->polling = 0;
    if (!holds) {
        w->spin_line = 0;
        if (w->current) w->current->spin_line = 0;
    }
    return holds;
}

// A volatile access of shared or global memory in a warp-synchronous step of a plain launch (source.py runs a
// function that has one as fibers): the thread first gives its turn up, as a waiting loop's does, so that the
// threads of a block take these accesses in step, one each a round. That is how a warp's lanes run the
// warp-synchronous code of older samples (`if (tid < 32) { vs[tid] += vs[tid + 32]; vs[tid] +=
// vs[tid + 16]; ... }` on a volatile pointer, Harris's reduction #6): each step's reads before its
// writes, in every lane, which a GPU gives in practice and the code counts on. Run one thread after
// another, lane 0 would read vs[16] before lane 16 added to it: a wrong sum, silently. (Since Volta
// the lanes need not keep in step: a sanitized launch reports the race and asks for __syncwarp().)
// Volatile locals (on the thread's own stack) take no step.
__CC_RT void __cc_volatile_step(const volatile void* address) {
    __cc_worker* w = __cc_me;
    __cc_fiber* f = w->current;
    if (!f || !f->stepping || ((const char*)address >= f->stack_low && (const char*)address < f->stack_high)) return;
    f->state = __CC_SPINNING;
    w->spinning++;
    __cc_yield(w, f);
}
// A warp-synchronous step (source.py's _warp_synchronous_steps: `vs[tid] += vs[tid + 16];` of a volatile vs)
// begins and ends: only its volatile accesses are taken in step (a lock's, a flag's, a thread's own are not).
static inline void __cc_step_on() { if (__cc_fiber* f = __cc_me->current) f->stepping = 1; }
static inline void __cc_step_off() { if (__cc_fiber* f = __cc_me->current) f->stepping = 0; }

// __syncthreads(): wait here until every thread of the block arrives.
__CC_RT int __cc_syncthreads(int line, int predicate) {
    __cc_worker* w = __cc_me;
    __cc_fiber* f = w->current;
    if (!f) __cc_fail(__CC_NO_BARRIERS, line);  // source.py missed this barrier
    f->state = __CC_WAITING;
    f->barrier_line = line;
    f->predicate = predicate != 0;
    __cc_yield(w, f);
    return w->barrier_count;
}

// A warp-level call: wait until the lanes named in `mask` meet at the same call, then get
// back what the exchange gives this lane (the scheduler computes it, see __cc_resolve_warps).
__CC_RT void __cc_warp_meet(int op, unsigned mask, const void* value, int size, int arg, int width, int line,
                           void* result, int result_size) {
    __cc_worker* w = __cc_me;
    __cc_fiber* f = w->current;
    if (!f) __cc_fail(__CC_NO_BARRIERS, line);  // source.py missed this call
    f->state = __CC_AT_WARP;
    // (an endless loop of shuffles makes no access: a timeout then names this call, not the last access
    // before the loop, which __cc_last_site would; an access after it sets that again)
    w->warp_line = line, __cc_last_site = 0;
    w->warp_waiting++;  // the scheduler looks at warp-level calls only when some fiber waits at one
    f->wop = op, f->wmask = mask, f->warg = arg, f->wwidth = width, f->wsize = size;
    f->barrier_line = line;
    memcpy(f->wvalue, value, (size_t)size);
    __cc_yield(w, f);
    memcpy(result, f->wresult, (size_t)result_size);
}

__CC_RT void __cc_barrier_fault(int kind, const __cc_fiber* culprit, const __cc_fiber* other,
                               int count, int line, int other_line) {
    __cc_fault* f = __cc_fault_out;
    f->other_thread[0] = other->tid.x, f->other_thread[1] = other->tid.y, f->other_thread[2] = other->tid.z;
    f->count = count;
    f->other_line = other_line;
    threadIdx = culprit->tid;
    __cc_fail(kind, line);
}

// A warp-level call that cannot complete: lane `f` waits for lane `other` (index `j` in the
// block), which has exited, does not exist, or waits elsewhere.
__attribute__((noreturn)) __CC_RT void __cc_warp_fault(int kind, __cc_fiber* f, int j, int threads) {
    __cc_fault* out = __cc_fault_out;
    out->mask = f->wmask;
    out->op = f->wop;
    out->index = j;  // the other lane's index in the block
    out->count = threads;
    if (j < threads) {
        __cc_fiber* o = &__cc_me->fibers[j];
        out->other_thread[0] = o->tid.x, out->other_thread[1] = o->tid.y, out->other_thread[2] = o->tid.z;
        out->other_line = o->state == __CC_DONE ? o->returned_line : o->barrier_line;
        out->other_op = o->state == __CC_DONE ? -1 : o->state == __CC_WAITING ? -2 : o->wop;
        if (kind == __CC_WARP_EXITED && o->state == __CC_DONE) {
            // what the lane that finished did: the warp-level calls it completed (bits 0-31: how many more the
            // waiting lane has made than it, signed), the last one's line and mask
            out->length = (int64_t)o->wdone_line;
            out->address = (uint64_t)o->wdone_mask | (uint64_t)(uint32_t)(f->wcalls - o->wcalls) << 32;
        }
    } else {
        out->other_op = -3;  // no such thread: the block's last warp is partial
    }
    threadIdx = f->tid;
    __cc_fail(kind, f->barrier_line);
}

template <class T>
static inline T __cc_lane_value(const __cc_fiber* f) {
    T v;
    memcpy(&v, f->wvalue, sizeof(T));
    return v;
}

// What a shuffle gives a lane whose source lane is outside the mask (or returned): the pattern
// __cc_is_undefined knows, and the first such read of the launch noted for the message.
// A second run with other bits (Python's launch, when a sanitized run's results hold none of the
// pattern): whether the results depend on them, as an integer sum or a fmaxf does.
__CC_EXPORT __CC_ONCE void __cc_set_undefined_variant(int variant) { __cc_undefined_variant = variant; }
// cpu.py _same_value_race: a first run (mode 4) again, with the pairs of a read and a same-value store let go.
__CC_EXPORT __CC_ONCE void __cc_set_same_values_go(int go) { __cc_same_values_go = go != 0; }
__CC_EXPORT __CC_ONCE void __cc_set_race_rerun(int mode) {
    __cc_put_back_stale();  // (after a run in mode 3: the last read's elements)
    __cc_race_rerun = mode;
}
__CC_RT void __cc_undefined_result(__cc_fiber* g, int size) {
    if (__cc_undefined_variant) {  // a large finite float, an int near 2^30
        static const uint64_t other64 = 0x4B3C2A194B3C2A19ull;
        memcpy(g->wresult, &other64, (size_t)std::min(size, 8));
        if (size > 8) memset(g->wresult + 8, 0x4B, (size_t)size - 8);
        return;
    }
    if (size == 8) memcpy(g->wresult, &__CC_UNDEFINED64, 8);
    else if (size == 4) memcpy(g->wresult, &__CC_UNDEFINED32, 4);
    else if (size == 2) { uint16_t h = 0x7EADu; memcpy(g->wresult, &h, 2); }
    else memset(g->wresult, 0xAD, (size_t)size);
}
__CC_RT void __cc_worker_undefined_note(__cc_worker* w, const __cc_fiber* g, int source, bool returned) {
    if (w->undefined.set) return;  // the first one is the one to fix
    w->undefined.set = 1;
    w->undefined.line = g->barrier_line, w->undefined.op = g->wop, w->undefined.mask = g->wmask;
    w->undefined.source = source, w->undefined.reader = g->tid, w->undefined.block = blockIdx;
    const __cc_fiber* o = source < w->round_threads ? &w->fibers[source] : nullptr;
    w->undefined.source_tid = o ? o->tid : uint3{(unsigned)source, 0, 0};
    w->undefined.returned_line = returned && o ? o->returned_line : 0;
}

// Complete every warp-level call whose lanes have all arrived; true if any lane may go on.
// With `converge`, also complete __activemask() calls: the lanes there are the ones that
// arrived together (no lane can still reach that call without them).
__CC_RT bool __cc_resolve_warps(int threads, bool converge) {
    __cc_worker* w = __cc_me;
    __cc_fiber* __cc_fibers = w->fibers;
    bool progress = false;
    // A lane of the mask waits at another call (or a barrier): a fault only if no other group of
    // lanes can go on either. Lanes of a branch that meet at their own call (`__activemask()` and a
    // shuffle inside an if) finish it first, and then reach the call after the branch.
    __cc_fiber* mismatched = nullptr;
    int mismatched_lane = 0;
    for (int base = 0; base < threads; base += 32) {
        int lanes = threads - base < 32 ? threads - base : 32;
        for (int l = 0; l < lanes; l++) {
            __cc_fiber* f = &__cc_fibers[base + l];
            if (f->state != __CC_AT_WARP) continue;
            if (f->wop == __CC_W_ACTIVE) {
                if (!converge) continue;
                unsigned active = 0;
                for (int k = 0; k < lanes; k++) {
                    __cc_fiber* g = &__cc_fibers[base + k];
                    if (g->state == __CC_AT_WARP && g->wop == __CC_W_ACTIVE && g->barrier_line == f->barrier_line)
                        active |= 1u << k;
                }
                for (int k = 0; k < lanes; k++)
                    if (active >> k & 1) {
                        memcpy(__cc_fibers[base + k].wresult, &active, 4);
                        __cc_fibers[base + k].state = __CC_RUNNABLE;
                        w->warp_waiting--;
                    }
                // (no __cc_warp_call_done: __activemask() only says which lanes run here; it neither waits
                // for the others nor orders memory, so a store before it and a read after it by two lanes
                // stay unordered, as on a GPU: `__syncwarp(mask)` orders them)
                progress = true;
                continue;
            }
            unsigned named = f->wmask;
            if (!(named >> l & 1)) __cc_warp_fault(__CC_WARP_BAD_MASK, f, base + l, threads);
            // Lanes that took a `return` have exited: as on a GPU, the call is among the others
            // (a vote leaves them out); a shuffle that reads from one gets no value (below).
            unsigned exited = 0;
            for (int k = 0; k < lanes; k++)
                if (__cc_fibers[base + k].state == __CC_DONE && __cc_fibers[base + k].returned_line) exited |= 1u << k;
            unsigned mask = named & ~exited;
            bool ready = true;
            for (int k = 0; k < 32 && ready; k++) {
                if (!(named >> k & 1) || (exited >> k & 1)) continue;
                if (k >= lanes) __cc_warp_fault(__CC_WARP_EXITED, f, base + k, threads);
                __cc_fiber* g = &__cc_fibers[base + k];
                if (g->state == __CC_DONE) __cc_warp_fault(__CC_WARP_EXITED, f, base + k, threads);
                // (sm_70 on: lanes meet at the same kind of call with the same mask, which may be another
                // call site: `if (c) v = __shfl_xor_sync(m, v, 1); else w = __shfl_xor_sync(m, w, 1);`)
                bool same_call = g->state == __CC_AT_WARP && g->wop == f->wop && g->wmask == named &&
                                 (g->barrier_line == f->barrier_line || f->wop == __CC_W_SYNC || g->wsize == f->wsize);
                if (g->state == __CC_WAITING || (g->state == __CC_AT_WARP && g->wop != __CC_W_ACTIVE && !same_call)) {
                    if (!mismatched) mismatched = f, mismatched_lane = base + k;
                    ready = false;
                    break;
                }
                if (g->state != __CC_AT_WARP) { ready = false; break; }
                if (g->wop == __CC_W_ACTIVE) { ready = false; break; }  // it may still come
            }
            if (!ready) continue;
            // Every lane of the mask is here: exchange, as the hardware does.
            unsigned ballot = 0;
            for (int k = 0; k < 32; k++)
                if (mask >> k & 1) ballot |= (__cc_lane_value<int>(&__cc_fibers[base + k]) != 0 ? 1u : 0u) << k;
            for (int k = 0; k < 32; k++) {
                if (!(mask >> k & 1)) continue;
                __cc_fiber* g = &__cc_fibers[base + k];
                int op = g->wop, width = g->wwidth, size = g->wsize;
                int segment = k / width * width;
                int source = k;
                switch (op) {
                    case __CC_W_SHFL: source = segment + ((g->warg % width) + width) % width; break;
                    case __CC_W_UP: source = k - segment >= g->warg ? k - g->warg : k; break;
                    case __CC_W_DOWN: source = k - segment + g->warg < width ? k + g->warg : k; break;
                    // (PTX's shfl.bfly: a lane of an earlier group of `width` lanes is read too; one of a later
                    // group gives the lane its own value)
                    case __CC_W_XOR: source = (k ^ (g->warg & 31)) < segment + width ? k ^ (g->warg & 31) : k; break;
                }
                if (op >= __CC_W_SHFL && op <= __CC_W_XOR) {
                    if (source >= 32 || !(mask >> source & 1) || (exited >> source & 1)) {
                        // A lane outside the mask (or one that returned) brings no value: on a GPU the
                        // result is undefined, which is no bug while nothing uses it (a tree that only
                        // lane 0's sum counts in, or `if (lane + offset < n) v += other`). The lane gets
                        // a NaN-like pattern instead, and a sanitized store of it is reported.
                        __cc_undefined_result(g, size);
                        __cc_worker_undefined_note(w, g, base + (source < 32 ? source : 31),
                                                   source < 32 && (exited >> source & 1));
                        continue;
                    }
                    memcpy(g->wresult, __cc_fibers[base + source].wvalue, (size_t)size);
                    continue;
                }
                unsigned u = 0, match = 0;
                int i = 0;
                bool all_equal = true;
                for (int m = 0; m < 32; m++) {
                    if (!(mask >> m & 1)) continue;
                    __cc_fiber* h = &__cc_fibers[base + m];
                    bool equal = memcmp(h->wvalue, g->wvalue, (size_t)size) == 0;
                    match |= (equal ? 1u : 0u) << m;
                    all_equal &= equal;
                    unsigned hu = __cc_lane_value<unsigned>(h);
                    int hi = (int)hu;
                    bool first = m == __builtin_ctz(mask);
                    switch (op) {
                        case __CC_W_ADD: u += hu; break;
                        case __CC_W_MIN_U: u = first || hu < u ? hu : u; break;
                        case __CC_W_MAX_U: u = first || hu > u ? hu : u; break;
                        case __CC_W_MIN_I: i = first || hi < i ? hi : i; break;
                        case __CC_W_MAX_I: i = first || hi > i ? hi : i; break;
                        case __CC_W_AND: u = first ? hu : (u & hu); break;
                        case __CC_W_OR: u |= hu; break;
                        case __CC_W_XOR_R: u ^= hu; break;
                    }
                }
                unsigned result = 0;
                switch (op) {
                    case __CC_W_BALLOT: result = ballot; break;
                    case __CC_W_ANY: result = ballot != 0; break;
                    case __CC_W_ALL: result = ballot == mask; break;
                    case __CC_W_UNI: result = ballot == 0 || ballot == mask; break;
                    case __CC_W_MATCH_ANY: result = match; break;
                    case __CC_W_MATCH_ALL: result = all_equal ? mask : 0; break;
                    case __CC_W_MIN_I: case __CC_W_MAX_I: result = (unsigned)i; break;
                    case __CC_W_SYNC: result = 0; break;
                    default: result = u;
                }
                memcpy(g->wresult, &result, 4);
            }
            for (int k = 0; k < 32; k++)  // (the exited lanes stay done)
                if (mask >> k & 1) {
                    __cc_fiber* g = &__cc_fibers[base + k];
                    g->state = __CC_RUNNABLE, w->warp_waiting--;
                    g->wcalls++, g->wdone_line = g->barrier_line, g->wdone_mask = g->wmask;
                }
            // Only __syncwarp (a tile's sync(), CUB's warp collectives) orders memory among the lanes it
            // names: a shuffle, a vote or a match exchanges registers and waits for the lanes, but a store
            // before it and another lane's load after it stay unordered (the compiler may move the load
            // above the shuffle), as compute-sanitizer's racecheck says
            if (f->wop == __CC_W_SYNC) {
                if (__cc_sanitizing) {  // (a handover through a lane that met these: __cc_shared_handed_over)
                    uint32_t met = ++__cc_sync_clock;
                    for (int k = 0; k < 32 && base + k < 1024; k++)
                        if (mask >> k & 1) __cc_warp_met[base + k] = met;
                }
                __cc_warp_call_done(base, mask, exited, lanes);
                // A block of one warp that all its lanes (but those that returned) sync: a barrier of the block
                // (its writes, then lane 0's __threadfence() and flag, hand them over to other blocks, as after
                // a __syncthreads())
                unsigned all = lanes >= 32 ? ~0u : (1u << lanes) - 1;
                if (__cc_sanitizing && threads <= 32 && ((mask | exited) & all) == all) {
                    __cc_barrier_shares_acquires(threads);
                    __cc_new_epoch();
                }
            }
            progress = true;
        }
    }
    if (!progress && converge && mismatched) __cc_warp_fault(__CC_WARP_MISMATCH, mismatched, mismatched_lane, threads);
    return progress;
}

// Blocks are handed out in launch order, a few at a time (a chunk) to keep the workers from
// contending for the counter. A worker does not start a block after one that has faulted.
__CC_STATE long long __cc_next_block, __cc_block_total, __cc_chunk;

#ifdef __CC_WITH_RUNTIME_OBJECT  // (never inlined: the object's)
__attribute__((noinline)) bool __cc_take_block(__cc_worker* w);
#else
__attribute__((noinline)) __CC_RT bool __cc_take_block(__cc_worker* w) {
    if (w->chunk_next >= w->chunk_end) {
        long long start = __atomic_fetch_add(&__cc_next_block, __cc_chunk, __ATOMIC_RELAXED);
        if (start >= __cc_block_total) return false;
        w->chunk_next = start;
        w->chunk_end = start + __cc_chunk < __cc_block_total ? start + __cc_chunk : __cc_block_total;
    }
    long long b = w->chunk_next++;
    __atomic_store_n(&w->block, b, __ATOMIC_SEQ_CST);  // then read __cc_fault_min: see __cc_work
    if (b > __atomic_load_n(&__cc_fault_min, __ATOMIC_SEQ_CST)) return false;
    if (__cc_reversed()) b = __cc_block_total - 1 - b;  // (w->block: the launch's order)
    unsigned long long gx = gridDim.x, gy = gridDim.y;
    blockIdx = {(unsigned)(b % gx), (unsigned)(b / gx % gy), (unsigned)(b / (gx * gy))};
    threadIdx = {0, 0, 0};
    if (__cc_stop) __cc_fail(__cc_stop, 0);  // the time limit or Ctrl-C came between two blocks
    return true;
}
#endif

// `if (cond)` around a __syncthreads() (source.py wraps cond, in sanitized builds): counted for each
// thread, so that the barrier can check that every thread took the if alike (__cc_check_uniform_ifs).
__CC_STATE int __cc_uniform_sites;      // how many such ifs have been met (the first 8 of a module are checked)
__CC_STATE int __cc_uniform_lines[8], __cc_uniform_ends[8];  // their first and last lines
static inline bool __cc_uniform_if(bool taken, int site, int line, int end) {
    __cc_fiber* f = __cc_sanitizing && site < 8 ? __cc_me->current : nullptr;
    if (f) {
        if (site >= __cc_uniform_sites) __cc_uniform_sites = site + 1;
        __cc_uniform_lines[site] = line, __cc_uniform_ends[site] = end;
        f->if_tests[site]++, f->if_taken[site] += taken;
    }
    return taken;
}

// `if (__cc_uniform_site{k, line, last line} = cond)`: source.py's prefix (assignment binds looser than what a
// condition holds), which a traced build's __cc_branch( can go around.
struct __cc_uniform_site {
    int site, line, end;
    __attribute__((always_inline)) bool operator=(bool taken) const { return __cc_uniform_if(taken, site, line, end); }
};
// Whether the barrier at `line` lies inside the if of `site` (only its threads must agree on it).
static inline bool __cc_uniform_holds(int site, int line) {
    return __cc_uniform_lines[site] <= line && line <= __cc_uniform_ends[site];
}

// Threads `a` and `b` took the if of `site` differently (met at the barrier on `barrier_line`, 0:
// not yet): the fault names the one that went in more often, and how often each tested it and went in.
__CC_RT void __cc_divergent_fault(int site, const __cc_fiber* a, const __cc_fiber* b, int barrier_line) {
    const __cc_fiber* in = a->if_taken[site] > b->if_taken[site] ? a : b;
    const __cc_fiber* out = in == a ? b : a;
    __cc_fault* f = __cc_fault_out;
    f->index = __cc_uniform_lines[site];
    f->element_bytes = (int64_t)out->if_taken[site];
    f->length = (int64_t)in->if_tests[site], f->address = out->if_tests[site];
    __cc_barrier_fault(__CC_BARRIER_DIVERGENT, in, out, (int)in->if_taken[site], __cc_uniform_lines[site], barrier_line);
}

// A race between this thread and thread `other` of its block, which took an `if` around a
// __syncthreads() differently: the race is the barrier's (it met them in different passes), and
// that is the fault to report. This thread went past the if more often than `other` (which waits),
// or as often but without going in where `other` went in: it did not wait where `other` does. (One
// that has not come to the if yet is only early: a race of its own, if any.)
__CC_RT void __cc_divergent_race(unsigned other) {
    __cc_worker* w = __cc_me;
    const __cc_fiber* me = w ? w->current : nullptr;
    if (!me || !__cc_uniform_sites || other >= (unsigned)w->round_threads) return;
    const __cc_fiber* them = &w->fibers[other];
    if (them->state != __CC_WAITING) return;
    for (int s = 0; s < __cc_uniform_sites; s++) {
        if (!__cc_uniform_holds(s, them->barrier_line)) continue;  // (it waits at a barrier outside that if)
        if (!(me->if_tests[s] > them->if_tests[s] ||
              (me->if_tests[s] == them->if_tests[s] && me->if_taken[s] < them->if_taken[s])))
            continue;
        __cc_divergent_fault(s, me, them, 0);
    }
}

// The threads about to leave a barrier together took each `if` around a __syncthreads() the same
// number of times: else one of them waits there in another pass than the others (an `if (partner >
// t) { swap; __syncthreads(); }` in a loop, which the threads that skip it reach in a later pass).
__CC_RT void __cc_check_uniform_ifs(__cc_fiber* fibers, int threads, const __cc_fiber* first) {
    for (int s = 0; s < __cc_uniform_sites; s++)
        for (int i = 0; i < threads && __cc_uniform_holds(s, first->barrier_line); i++) {
            const __cc_fiber* f = &fibers[i];
            if (f->state != __CC_DONE && (f->if_tests[s] != first->if_tests[s] || f->if_taken[s] != first->if_taken[s]))
                __cc_divergent_fault(s, f, first, first->barrier_line);
        }
}

// Run one block: each runnable thread runs until it waits at a barrier or a warp-level call,
// or returns. Warp-level calls complete when their lanes meet; when all threads wait at the
// same barrier they are released together; any other outcome is a fault.
__CC_RT void __cc_run_block_as_fibers(__cc_worker* w, int threads) {
    const dim3 b = blockDim;
    __cc_fiber* __cc_fibers = w->fibers;
    for (int i = 0; i < threads; i++) {
        __cc_fiber* f = &__cc_fibers[i];
        unsigned t = (unsigned)i;
        f->tid = {t % b.x, t / b.x % b.y, t / (b.x * b.y)};
        f->state = __CC_RUNNABLE;
        f->returned_line = 0;
        f->wcalls = 0, f->wdone_line = 0, f->wdone_mask = 0;
        f->spins = 0, f->spin_line = 0, f->stepping = 0;
        memset(f->if_tests, 0, sizeof f->if_tests), memset(f->if_taken, 0, sizeof f->if_taken);
        if (!f->parked) __cc_fiber_prepare_stack(f, __cc_fiber_entry);  // (a block that faulted left it anywhere)
    }
    w->round_threads = threads;
    w->exited_count = 0;
    w->spinning = 0;
    const bool reversed = __cc_reversed();  // (the last thread first)
    for (;;) {
        for (int k = 0; k < threads; k++) {  // the first runnable fiber; the others follow it (__cc_yield)
            __cc_fiber* f = &__cc_fibers[reversed ? threads - 1 - k : k];
            if (f->state != __CC_RUNNABLE) continue;
            w->current = f;
            threadIdx = f->tid;
            __cc_switch_to_fiber(w, f);
            break;
        }
        w->current = nullptr;
        if (w->warp_waiting && (__cc_resolve_warps(threads, false) || __cc_resolve_warps(threads, true))) continue;
        if (w->spinning) {  // threads that wait in a loop for a flag go on before any barrier opens
            for (int i = 0; i < threads; i++)
                if (__cc_fibers[i].state == __CC_SPINNING) __cc_fibers[i].state = __CC_RUNNABLE;
            w->spinning = 0;
            continue;
        }
        __cc_fiber *first_done = nullptr, *first_waiting = nullptr;
        int waiting = 0, count = 0;
        for (int i = 0; i < threads; i++) {
            __cc_fiber* f = &__cc_fibers[i];
            if (f->state == __CC_DONE) {
                if (!first_done) first_done = f;
                continue;
            }
            if (!first_waiting) first_waiting = f;
            if (f->barrier_line != first_waiting->barrier_line)
                __cc_barrier_fault(__CC_BARRIER_MISMATCH, f, first_waiting, 0, f->barrier_line,
                                   first_waiting->barrier_line);
            waiting++;
            count += f->predicate;
            f->state = __CC_RUNNABLE;  // released (unless a fault above or below stops the block)
        }
        if (!waiting) {  // every thread returned: the block is done
            if (__cc_pending_set) __cc_report_pending();
            return;
        }
        if (__cc_uniform_sites) __cc_check_uniform_ifs(__cc_fibers, threads, first_waiting);
        if (first_done) {
            // Since Volta a barrier waits for the threads that have not exited (sm_70+): a thread
            // that took a `return` is done with the block. One that skipped the barrier and ran to
            // the kernel's end went past it (an `if` around __syncthreads()): that is the bug.
            for (int i = 0; i < threads; i++)
                if (__cc_fibers[i].state == __CC_DONE && !__cc_fibers[i].returned_line)
                    __cc_barrier_fault(__CC_BARRIER_EXITED, &__cc_fibers[i], first_waiting, threads - waiting,
                                       first_waiting->barrier_line, 0);
            if (!w->exited_count) {
                w->exited_count = threads - waiting, w->exited_line = first_done->returned_line;
                w->exited_barrier = first_waiting->barrier_line, w->exited_thread = first_done->tid;
            }
        }
        w->barrier_count = count;
        w->barrier_waiting = waiting;
        w->last_barrier_line = first_waiting->barrier_line, w->warp_line = 0;
        if (__cc_pending_set) __cc_report_pending();
        __cc_barrier_shares_acquires(threads);
        __cc_new_epoch();
    }
}

template <class Body>
static void __cc_call_body(void* body) { (*(Body*)body)(); }

// Kernels with __syncthreads(): each worker runs its blocks one after another, threads as fibers.
template <class Body>
static void __cc_run_with_fibers(Body& body_object) {
    __cc_worker* w = __cc_me;
    const dim3 b = blockDim;
    int threads = (int)(b.x * b.y * b.z);
    __cc_enter_unsafe();  // mmap and calloc: not to be interrupted
    bool reserved = __cc_reserve_fibers(w, threads);
    __cc_leave_unsafe();
    if (!reserved) __cc_fail(__CC_NO_MEMORY, 0);
    // Fibers parked by an earlier launch may have run on another thread (worker 0 is whichever
    // thread launches, and a pool thread that ended is replaced by a new one), and their frames hold
    // that thread's addresses of thread_local variables.
    for (int i = 0; i < w->fiber_count; i++) w->fibers[i].parked = 0;
    w->body = &__cc_call_body<Body>;
    w->body_context = &body_object;
    while (__cc_take_block(w)) {
        __cc_new_block();
        w->warp_waiting = 0;
        __cc_run_block_as_fibers(w, threads);
    }
}

// The fast path's proof (fast.py): the interval of each integer a block computes, as __int128 bounds, over
// all its threads and the ranges of its loops. A proof that fails (an index that may leave its array, a
// value that may leave its type) sends the block down the checked path, which finds what is wrong.
#define __CC_IV static inline __attribute__((always_inline))  // (per block, in every proof)
struct __cc_iv { __int128 lo, hi; };
// An empty interval ({1, 0}) is code no thread reaches (a loop that never runs, the rest of a block after
// `if (i >= n) return;` where no i is below n): what it computes stays empty, and passes every check.
__CC_IV bool __cc_iv_none(__cc_iv a, __cc_iv b) { return a.lo > a.hi || b.lo > b.hi; }
static const __cc_iv __cc_iv_nowhere = {1, 0};
__CC_IV __int128 __cc_min128(__int128 a, __int128 b) { return a < b ? a : b; }
__CC_IV __int128 __cc_max128(__int128 a, __int128 b) { return a > b ? a : b; }
// Whether every value of `v` is one that type `t` holds, both as the source computes it and as the fast code
// does (int for 32-bit types, long long for 64-bit ones): 0 int, 1 unsigned, 2 long long, 3 unsigned long long,
// 4 bool.
__CC_IV bool __cc_iv_fits(__cc_iv v, int t) {
    static const __int128 lo[] = {-((__int128)1 << 31), 0, -((__int128)1 << 63), 0, 0};
    static const __int128 hi[] = {((__int128)1 << 31) - 1, ((__int128)1 << 31) - 1, ((__int128)1 << 63) - 1,
                                  ((__int128)1 << 63) - 1, 1};
    return v.lo >= lo[t] && v.hi <= hi[t];
}
__CC_IV __cc_iv __cc_iv_add(__cc_iv a, __cc_iv b) {
    return __cc_iv_none(a, b) ? __cc_iv_nowhere : __cc_iv{a.lo + b.lo, a.hi + b.hi};
}
__CC_IV __cc_iv __cc_iv_sub(__cc_iv a, __cc_iv b) {
    return __cc_iv_none(a, b) ? __cc_iv_nowhere : __cc_iv{a.lo - b.hi, a.hi - b.lo};
}
__CC_IV __cc_iv __cc_iv_neg(__cc_iv a) { return a.lo > a.hi ? __cc_iv_nowhere : __cc_iv{-a.hi, -a.lo}; }
__CC_IV __cc_iv __cc_iv_bnot(__cc_iv a) { return a.lo > a.hi ? __cc_iv_nowhere : __cc_iv{-a.hi - 1, -a.lo - 1}; }
__CC_IV __cc_iv __cc_iv_abs(__cc_iv a) {
    if (a.lo > a.hi) return __cc_iv_nowhere;
    if (a.lo >= 0) return a;
    if (a.hi <= 0) return {-a.hi, -a.lo};
    return {0, __cc_max128(-a.lo, a.hi)};
}
// The least and the greatest of an operation's values at the four corners of its operands' intervals (where it is
// monotonic in each operand, as a product and C's division by a divisor of one sign are).
__CC_IV __cc_iv __cc_iv_corners(__int128 p, __int128 q, __int128 r, __int128 s) {
    return {__cc_min128(__cc_min128(p, q), __cc_min128(r, s)), __cc_max128(__cc_max128(p, q), __cc_max128(r, s))};
}
__CC_IV __cc_iv __cc_iv_mul(__cc_iv a, __cc_iv b) {  // (operands within 64 bits: no __int128 overflow)
    if (__cc_iv_none(a, b)) return __cc_iv_nowhere;
    return __cc_iv_corners(a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi);
}
__CC_IV __cc_iv __cc_iv_div(__cc_iv a, __cc_iv b, bool& ok) {  // C's division, toward zero
    if (__cc_iv_none(a, b)) return __cc_iv_nowhere;
    if (b.lo <= 0 && b.hi >= 0) { ok = false; return a; }
    return __cc_iv_corners(a.lo / b.lo, a.lo / b.hi, a.hi / b.lo, a.hi / b.hi);
}
__CC_IV __cc_iv __cc_iv_mod(__cc_iv a, __cc_iv b, bool& ok) {  // the sign of the dividend's
    if (__cc_iv_none(a, b)) return __cc_iv_nowhere;
    if (b.lo <= 0 && b.hi >= 0) { ok = false; return a; }
    __int128 least = __cc_min128(b.lo < 0 ? -b.hi : b.lo, b.lo < 0 ? -b.lo : b.hi);
    __int128 m = __cc_max128(b.lo < 0 ? -b.lo : b.lo, b.hi < 0 ? -b.hi : b.hi) - 1;
    if (a.lo >= 0 && a.hi < least) return a;
    if (a.lo >= 0) return {0, __cc_min128(a.hi, m)};
    if (a.hi <= 0) return {__cc_max128(a.lo, -m), 0};
    return {-m, m};
}
__CC_IV __cc_iv __cc_iv_band(__cc_iv a, __cc_iv b, bool& ok) {
    if (__cc_iv_none(a, b)) return __cc_iv_nowhere;
    if (a.lo < 0 || b.lo < 0) { ok = false; return a; }
    if (a.lo == a.hi && b.lo == b.hi) return {a.lo & b.lo, a.lo & b.lo};
    return {0, __cc_min128(a.hi, b.hi)};
}
__CC_IV __cc_iv __cc_iv_bor(__cc_iv a, __cc_iv b, bool& ok) {  // | and ^
    if (__cc_iv_none(a, b)) return __cc_iv_nowhere;
    if (a.lo < 0 || b.lo < 0) { ok = false; return a; }
    __int128 top = 1, most = __cc_max128(a.hi, b.hi);
    while (top <= most) top <<= 1;
    return {0, top - 1};
}
__CC_IV __cc_iv __cc_iv_shift(__cc_iv a, __cc_iv b, int width, int left, bool& ok) {
    if (__cc_iv_none(a, b)) return __cc_iv_nowhere;
    if (b.lo < 0 || b.hi >= width || (left && a.lo < 0)) { ok = false; return a; }
    if (left) return {a.lo << (int)b.lo, a.hi << (int)b.hi};
    if (a.lo >= 0) return {a.lo >> (int)b.hi, a.hi >> (int)b.lo};
    return {a.lo >> (int)b.lo, a.hi >= 0 ? a.hi >> (int)b.lo : a.hi >> (int)b.hi};
}
__CC_IV __cc_iv __cc_iv_truth(__cc_iv a) {  // 0, 1, or either
    if (a.lo > a.hi) return __cc_iv_nowhere;
    if (a.lo > 0 || a.hi < 0) return {1, 1};
    if (a.lo == 0 && a.hi == 0) return {0, 0};
    return {0, 1};
}
__CC_IV __cc_iv __cc_iv_not(__cc_iv a) {
    __cc_iv t = __cc_iv_truth(a);
    return t.lo > t.hi ? __cc_iv_nowhere : __cc_iv{1 - t.hi, 1 - t.lo};
}
__CC_IV __cc_iv __cc_iv_and(__cc_iv a, __cc_iv b) {
    __cc_iv x = __cc_iv_truth(a), y = __cc_iv_truth(b);
    return __cc_iv_none(x, y) ? __cc_iv_nowhere : __cc_iv{x.lo & y.lo, x.hi & y.hi};
}
__CC_IV __cc_iv __cc_iv_or(__cc_iv a, __cc_iv b) {
    __cc_iv x = __cc_iv_truth(a), y = __cc_iv_truth(b);
    return __cc_iv_none(x, y) ? __cc_iv_nowhere : __cc_iv{x.lo | y.lo, x.hi | y.hi};
}
__CC_IV __cc_iv __cc_iv_lt(__cc_iv a, __cc_iv b) { return __cc_iv_none(a, b) ? __cc_iv_nowhere : a.hi < b.lo ? __cc_iv{1, 1} : a.lo >= b.hi ? __cc_iv{0, 0} : __cc_iv{0, 1}; }
__CC_IV __cc_iv __cc_iv_le(__cc_iv a, __cc_iv b) { return __cc_iv_none(a, b) ? __cc_iv_nowhere : a.hi <= b.lo ? __cc_iv{1, 1} : a.lo > b.hi ? __cc_iv{0, 0} : __cc_iv{0, 1}; }
__CC_IV __cc_iv __cc_iv_gt(__cc_iv a, __cc_iv b) { return __cc_iv_lt(b, a); }
__CC_IV __cc_iv __cc_iv_ge(__cc_iv a, __cc_iv b) { return __cc_iv_le(b, a); }
__CC_IV __cc_iv __cc_iv_eq(__cc_iv a, __cc_iv b) {
    if (__cc_iv_none(a, b)) return __cc_iv_nowhere;
    if (a.lo == a.hi && b.lo == b.hi && a.lo == b.lo) return {1, 1};
    return a.hi < b.lo || b.hi < a.lo ? __cc_iv{0, 0} : __cc_iv{0, 1};
}
__CC_IV __cc_iv __cc_iv_ne(__cc_iv a, __cc_iv b) { return __cc_iv_not(__cc_iv_eq(a, b)); }
__CC_IV __cc_iv __cc_iv_select(__cc_iv c, __cc_iv a, __cc_iv b) {
    __cc_iv t = __cc_iv_truth(c);
    if (t.lo > t.hi) return __cc_iv_nowhere;
    if (t.lo == 1) return a;
    if (t.hi == 0) return b;
    if (a.lo > a.hi) return b;
    if (b.lo > b.hi) return a;
    return {__cc_min128(a.lo, b.lo), __cc_max128(a.hi, b.hi)};
}
__CC_IV __cc_iv __cc_iv_min(__cc_iv a, __cc_iv b) {
    return __cc_iv_none(a, b) ? __cc_iv_nowhere : __cc_iv{__cc_min128(a.lo, b.lo), __cc_min128(a.hi, b.hi)};
}
__CC_IV __cc_iv __cc_iv_max(__cc_iv a, __cc_iv b) {
    return __cc_iv_none(a, b) ? __cc_iv_nowhere : __cc_iv{__cc_max128(a.lo, b.lo), __cc_max128(a.hi, b.hi)};
}
// A macro the fast code uses as a number: one literal, or an expression in parentheses (with `#define M 3 - 1`,
// the kernel's `i * M` is `i * 3 - 1`, not i times 2). Its spelling, as the preprocessor expanded it.
static constexpr bool __cc_primary(const char* s) {
    while (*s == ' ') s++;
    if (*s == '(') {
        int depth = 0;
        for (; *s; s++) {
            if (*s == '(') depth++;
            else if (*s == ')' && --depth == 0) {
                s++;
                break;
            }
        }
        while (*s == ' ') s++;
        return depth == 0 && *s == 0;
    }
    if (*s == '-') s++;
    if (!((*s >= '0' && *s <= '9') || *s == '.')) return false;
    for (const char* first = s; *s && *s != ' '; s++)  // (a number: 16, 0x10, 2.5f, 1e-3f)
        if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '.' ||
              ((*s == '+' || *s == '-') && s > first && (s[-1] == 'e' || s[-1] == 'E') &&
               !(first[0] == '0' && (first[1] == 'x' || first[1] == 'X')))))  // (0x1e-3 is 0x1e minus 3)
            return false;
    while (*s == ' ') s++;
    return *s == 0;
}
#define __CC_SPELLING(x) __CC_SPELLED(x)
#define __CC_SPELLED(x) #x
// Whether every index in `v` lies inside the array that checked pointer `q` points into.
template <class T>
__CC_IV bool __cc_iv_inside(__cc_iv v, const __cc_ptr<T>& q) {
    if (v.lo > v.hi) return true;  // (code that no thread reaches: a loop that never runs)
    if (q.count == SIZE_MAX || q.index >= q.count) return false;  // (a pointer memcheck does not check, or at the end)
    return (__int128)q.index + v.lo >= 0 && (__int128)q.index + v.hi < (__int128)q.count;
}

// Kernels without barriers: every thread is one call of the (inlined) kernel.
// Inlined into the function that unpacked the arguments, so that the compiler keeps them in
// registers and sees that each checked pointer starts at its array's base: a check is then
// one comparison of the index. `fast`: fast.py's path for a block (false: the block is not proved).
struct __cc_no_fast_path { int operator()(unsigned) const { return 0; } };
template <class Body, class Fast = __cc_no_fast_path>
static inline __attribute__((always_inline)) void __cc_run_in_loops(Body& body, Fast fast = Fast()) {
    // threadIdx is a thread_local variable: its address is found once (in a shared library
    // finding it is a function call, which the compiler does not move out of a loop by itself).
    __cc_worker* w = __cc_me;
    uint3* const thread = &threadIdx;
    const dim3 b = blockDim;
    while (__cc_take_block(w)) {
        __cc_new_block();
        if (!__cc_sanitizing) {
            // the blocks after this one that the worker's chunk holds in the same row of the grid: fast.py's path
            // may prove and run them with it (a span), and says how many it ran (0: this block takes the checked loop)
            long long left = w->chunk_end - w->chunk_next, row = (long long)gridDim.x - 1 - blockIdx.x;
            int ran = fast((unsigned)(left < row ? left : row));
            if (ran) {
                w->chunk_next += ran - 1;  // (those blocks are done: no fault can stop a proved block)
                w->fast_blocks += ran;
                continue;
            }
        }
        if (__cc_reversed()) {  // the threads in the opposite order (a rerun: __cc_race_rerun)
            for (unsigned tz = b.z; tz-- > 0;)
                for (unsigned ty = b.y; ty-- > 0;)
                    for (unsigned tx = b.x; tx-- > 0;) {
                        *thread = {tx, ty, tz};
                        body();
                    }
            if (__cc_pending_set) __cc_report_pending();
            continue;
        }
        for (unsigned tz = 0; tz < b.z; tz++)
            for (unsigned ty = 0; ty < b.y; ty++) {
                thread->y = ty, thread->z = tz;
                for (unsigned tx = 0; tx < b.x; tx++) {
                    thread->x = tx;
                    body();
                }
            }
        if (__cc_sanitizing && __cc_pending_set) __cc_report_pending();
    }
}

// ---------------------------------------------------------------------------------------
// Warp-level functions: the lanes named in the mask meet (see __cc_resolve_warps). Each takes
// the caller's line as a hidden last argument, so a fault names the learner's line.
// ---------------------------------------------------------------------------------------

#define __CC_LINE int __cc_line = __builtin_LINE()
static const unsigned __CC_FULL = 0xffffffffu;

template <class T>
static inline T __cc_warp_exchange(int op, unsigned mask, T var, int arg, int width, int line) {
    static_assert(sizeof(T) <= 32, "warp shuffles exchange values of at most 32 bytes here");
    if (width <= 0 || width > 32 || (width & (width - 1))) {  // CUDA: undefined results
        __cc_fault_out->op = op;
        __cc_fault_out->index = width;
        __cc_fail(__CC_BAD_WIDTH, line);
    }
    T out;
    __cc_warp_meet(op, mask, &var, (int)sizeof(T), arg, width, line, &out, (int)sizeof(T));
    return out;
}
static inline unsigned __cc_warp_vote(int op, unsigned mask, unsigned value, int line) {
    unsigned out;
    __cc_warp_meet(op, mask, &value, 4, 0, 32, line, &out, 4);
    return out;
}

// (Values come as `const T&` and are read into a plain value: s[i] of a sanitized build is a
// reference object, and it is the number that is exchanged.)
// CUDA overloads the shuffles for numbers only (int, unsigned, long, long long and their unsigned, float,
// double, __half, __half2, __nv_bfloat16, __nv_bfloat162): a char, a short or a bool goes as an int, and a
// struct or a vector type (float4) is refused, by NVRTC as here (cooperative groups' tile.shfl takes any type).
template <class T> struct __cc_shuffles {
    typedef typename std::remove_cv<T>::type U;
    static constexpr bool value = (std::is_arithmetic<U>::value || (std::is_enum<U>::value &&
                                   std::is_convertible<U, int>::value)) || std::is_same<U, __half>::value ||
                                  std::is_same<U, __half2>::value || std::is_same<U, __nv_bfloat16>::value ||
                                  std::is_same<U, __nv_bfloat162>::value;
};
template <class T> using __cc_shuffled_t = typename std::conditional<
    (std::is_integral<T>::value && sizeof(T) < sizeof(int)) || std::is_enum<T>::value, int, T>::type;
#define __CC_SHUFFLE_TYPES "a number (int, unsigned, long long, float, double, __half, __half2, ...): CUDA has no " \
    "overload for a struct or a vector type such as float4 (NVRTC: \"no instance of overloaded function\"); " \
    "exchange its members one by one (v.x = __shfl_sync(mask, v.x, lane); ...), or use a cooperative groups " \
    "tile's shfl, which takes any type"
#define __CC_SHFL(NAME, OP, MASK, ...) \
    template <class T> static inline __cc_shuffled_t<__cc_value_t<T>> NAME(__VA_ARGS__) { \
        static_assert(__cc_shuffles<__cc_value_t<T>>::value, #NAME " exchanges " __CC_SHUFFLE_TYPES); \
        __cc_shuffled_t<__cc_value_t<T>> v = var; \
        return __cc_warp_exchange(OP, MASK, v, (int)lane, width, __cc_line); \
    }
__CC_SHFL(__shfl_sync, __CC_W_SHFL, mask, unsigned mask, const T& var, int lane, int width = 32, __CC_LINE)
__CC_SHFL(__shfl_up_sync, __CC_W_UP, mask, unsigned mask, const T& var, unsigned lane, int width = 32, __CC_LINE)
__CC_SHFL(__shfl_down_sync, __CC_W_DOWN, mask, unsigned mask, const T& var, unsigned lane, int width = 32, __CC_LINE)
__CC_SHFL(__shfl_xor_sync, __CC_W_XOR, mask, unsigned mask, const T& var, int lane, int width = 32, __CC_LINE)
// (No pre-CUDA 9 spellings, __shfl_down(v, d) without a mask: nvcc declares none for sm_70 and later, and
// source.py refuses a call of them unless the source defines the name itself, a shim macro or function.)
static inline unsigned __ballot_sync(unsigned mask, int p, __CC_LINE) { return __cc_warp_vote(__CC_W_BALLOT, mask, p != 0, __cc_line); }
static inline int __any_sync(unsigned mask, int p, __CC_LINE) { return (int)__cc_warp_vote(__CC_W_ANY, mask, p != 0, __cc_line); }
static inline int __all_sync(unsigned mask, int p, __CC_LINE) { return (int)__cc_warp_vote(__CC_W_ALL, mask, p != 0, __cc_line); }
static inline int __uni_sync(unsigned mask, int p, __CC_LINE) { return (int)__cc_warp_vote(__CC_W_UNI, mask, p != 0, __cc_line); }
static inline unsigned __activemask(__CC_LINE) { return __cc_warp_vote(__CC_W_ACTIVE, 0, 0, __cc_line); }
static inline void __syncwarp(unsigned mask = __CC_FULL, __CC_LINE) { __cc_warp_vote(__CC_W_SYNC, mask, 0, __cc_line); }
static inline unsigned __reduce_add_sync(unsigned mask, unsigned v, __CC_LINE) { return __cc_warp_vote(__CC_W_ADD, mask, v, __cc_line); }
static inline int __reduce_add_sync(unsigned mask, int v, __CC_LINE) { return (int)__cc_warp_vote(__CC_W_ADD, mask, (unsigned)v, __cc_line); }
static inline unsigned __reduce_min_sync(unsigned mask, unsigned v, __CC_LINE) { return __cc_warp_vote(__CC_W_MIN_U, mask, v, __cc_line); }
static inline int __reduce_min_sync(unsigned mask, int v, __CC_LINE) { return (int)__cc_warp_vote(__CC_W_MIN_I, mask, (unsigned)v, __cc_line); }
static inline unsigned __reduce_max_sync(unsigned mask, unsigned v, __CC_LINE) { return __cc_warp_vote(__CC_W_MAX_U, mask, v, __cc_line); }
static inline int __reduce_max_sync(unsigned mask, int v, __CC_LINE) { return (int)__cc_warp_vote(__CC_W_MAX_I, mask, (unsigned)v, __cc_line); }
static inline unsigned __reduce_and_sync(unsigned mask, unsigned v, __CC_LINE) { return __cc_warp_vote(__CC_W_AND, mask, v, __cc_line); }
static inline unsigned __reduce_or_sync(unsigned mask, unsigned v, __CC_LINE) { return __cc_warp_vote(__CC_W_OR, mask, v, __cc_line); }
static inline unsigned __reduce_xor_sync(unsigned mask, unsigned v, __CC_LINE) { return __cc_warp_vote(__CC_W_XOR_R, mask, v, __cc_line); }
// (CUDA's overloads: int, unsigned, long, long long and their unsigned, float, double; a char or a short as an int)
template <class T> using __cc_matched_t = typename std::remove_cv<__cc_shuffled_t<__cc_value_t<T>>>::type;
#define __CC_MATCH_TYPES(NAME) static_assert(std::is_arithmetic<__cc_matched_t<T>>::value, NAME " compares a " \
    "number (int, unsigned, long long, float, double): CUDA has no overload for a struct, a vector type or a half " \
    "(NVRTC: \"no instance of overloaded function\"); compare its members, or a key made from them")
template <class T> static inline unsigned __match_any_sync(unsigned mask, const T& value, __CC_LINE) {
    __CC_MATCH_TYPES("__match_any_sync");
    __cc_matched_t<T> v = value;
    unsigned out;
    __cc_warp_meet(__CC_W_MATCH_ANY, mask, &v, (int)sizeof(v), 0, 32, __cc_line, &out, 4);
    return out;
}
template <class T> static inline unsigned __match_all_sync(unsigned mask, const T& value, int* pred, __CC_LINE) {
    __CC_MATCH_TYPES("__match_all_sync");
    __cc_matched_t<T> v = value;
    unsigned out;
    __cc_warp_meet(__CC_W_MATCH_ALL, mask, &v, (int)sizeof(v), 0, 32, __cc_line, &out, 4);
    *pred = out != 0;
    return out;
}
static inline unsigned __cc_linear_tid() { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }
static inline unsigned __cc_lane() { return __cc_linear_tid() & 31u; }
static inline unsigned __lanemask_lt() { return (1u << __cc_lane()) - 1u; }
static inline unsigned __lanemask_le() { return (unsigned)((2ull << __cc_lane()) - 1u); }
static inline unsigned __lanemask_eq() { return 1u << __cc_lane(); }
static inline unsigned __lanemask_gt() { return ~__lanemask_le(); }
static inline unsigned __lanemask_ge() { return ~__lanemask_lt(); }

// ---------------------------------------------------------------------------------------
// Cooperative groups (cooperative_groups.h, cooperative_groups/reduce.h and scan.h)
// ---------------------------------------------------------------------------------------

// libcu++'s cuda::std:: (numeric_limits, min, is_same, ...) is the host's std:: here, but for its atomics: a
// cuda::std::atomic is a cuda::atomic of system scope (below), whose operations the sanitizer sees. (A namespace of
// its own, as in libcu++: `using namespace cuda;` then makes `std::` ambiguous, with NVRTC too.)
namespace cuda { namespace std { using namespace ::std; } }

// libcu++'s <cuda/functional>: cuda::maximum and cuda::minimum, the operators that CCCL 3 has in place of CUB's
// cub::Max() and cub::Min() (for cub::BlockReduce's Reduce, say); with no type, they take any two (the common type).
namespace cuda {
template <class T = void> struct maximum {
    T operator()(const T& a, const T& b) const { return a < b ? b : a; }
};
template <> struct maximum<void> {
    template <class T, class U> typename ::std::common_type<T, U>::type operator()(const T& a, const U& b) const {
        return a < b ? b : a;
    }
};
template <class T = void> struct minimum {
    T operator()(const T& a, const T& b) const { return b < a ? b : a; }
};
template <> struct minimum<void> {
    template <class T, class U> typename ::std::common_type<T, U>::type operator()(const T& a, const U& b) const {
        return b < a ? b : a;
    }
};
}

// cuda::aligned_size_t<N>(bytes) (<cuda/barrier>): a byte count that promises N-byte alignment, as
// cooperative_groups::memcpy_async takes it (the copy here is the same with or without the promise).
namespace cuda {
template <size_t Align>
struct aligned_size_t {
    static constexpr size_t align = Align;
    size_t value;
    explicit aligned_size_t(size_t v) : value(v) {}
    operator size_t() const { return value; }
};
}

// libcu++'s cuda::atomic_ref<T, Scope> (<cuda/atomic>) and cuda::std::atomic_ref: atomic operations on
// an element, with a memory order that fences as PTX's acquire/release do (block scope:
// __threadfence_block; device and system: __threadfence), so that the sanitizer's handover rules see
// what the order promises. Loads are volatile reads and stores atomicExch where CUDA has one (the
// sanitizer counts both as relaxed atomics of global memory).
namespace cuda {
enum thread_scope { thread_scope_system = 0, thread_scope_device = 1, thread_scope_block = 2, thread_scope_thread = 3 };
// (<cuda/atomic> declares cuda::memory_order and its values too, besides cuda::std::'s)
using ::std::memory_order;
using ::std::memory_order_relaxed;
using ::std::memory_order_consume;
using ::std::memory_order_acquire;
using ::std::memory_order_release;
using ::std::memory_order_acq_rel;
using ::std::memory_order_seq_cst;
template <class T, thread_scope Scope = thread_scope_system>
struct atomic_ref {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8, "cuda::atomic_ref here takes 4- and 8-byte types");
    T* __cc_p;
    static constexpr bool is_always_lock_free = true;
    static constexpr size_t required_alignment = sizeof(T);
    template <class R>
    __attribute__((always_inline)) explicit atomic_ref(R&& element) : __cc_p((T*)&element) {}
    atomic_ref(const atomic_ref&) = default;
    atomic_ref& operator=(const atomic_ref&) = delete;
    // (always_inline, as atomicAdd: the sanitizer names an atomic's line by the return address of its
    // note, which must lie in the kernel's own code)
    static void __cc_before(std::memory_order o) {
        if (o == std::memory_order_release || o == std::memory_order_acq_rel || o == std::memory_order_seq_cst) __cc_fence();
    }
    static void __cc_after(std::memory_order o) {
        if (o == std::memory_order_acquire || o == std::memory_order_consume || o == std::memory_order_acq_rel ||
            o == std::memory_order_seq_cst) __cc_fence();
    }
    static void __cc_fence() {
        if (Scope == thread_scope_block) __threadfence_block();
        else if (Scope != thread_scope_thread) __threadfence();
    }
    bool is_lock_free() const { return true; }
    __attribute__((always_inline)) T load(std::memory_order o = std::memory_order_seq_cst) const {
        if (__cc_sanitizing) __cc_note(__cc_p, sizeof(T), __CC_READ + __CC_VOLATILE + __cc_read_check<T>());
        T v = __cc_parallel ? __atomic_load_n(__cc_p, __ATOMIC_SEQ_CST) : *(volatile T*)__cc_p;
        __cc_after(o);
        return v;
    }
    __attribute__((always_inline)) operator T() const { return load(); }
    __attribute__((always_inline)) void store(T v, std::memory_order o = std::memory_order_seq_cst) const {
        __cc_before(o);
        exchange(v, std::memory_order_relaxed);
    }
    __attribute__((always_inline)) T operator=(T v) const { store(v); return v; }
    // (thread_scope_block: atomic only among one block's threads, as atomicAdd_block; the sanitizer takes
    // note, and two blocks' updates of one global element are a race)
    static void __cc_scope() {
        if (Scope == thread_scope_block) __cc_block_scope_next();
    }
    template <class F>  // (as atomicAdd's overloads do, with the order's fences around)
    __attribute__((always_inline)) T __cc_update(F f, std::memory_order o) const {
        __cc_before(o);
        __cc_scope();
        T old = __cc_atomic_apply(__cc_p, f);
        __cc_after(o);
        return old;
    }
    __attribute__((always_inline)) T exchange(T v, std::memory_order o = std::memory_order_seq_cst) const {
        return __cc_update([v](T) { return v; }, o);
    }
    __attribute__((always_inline)) bool compare_exchange_strong(T& expected, T desired, std::memory_order o = std::memory_order_seq_cst) const {
        __cc_before(o);
        typedef typename std::conditional<sizeof(T) == 4, unsigned int, unsigned long long>::type C;
        C e, d;
        memcpy(&e, (const void*)&expected, sizeof e);
        memcpy(&d, (const void*)&desired, sizeof d);
        __cc_scope();
        C got = atomicCAS((C*)(void*)__cc_p, e, d);
        __cc_after(o);
        if (got == e) return true;
        memcpy((void*)&expected, &got, sizeof got);
        return false;
    }
    __attribute__((always_inline)) bool compare_exchange_strong(T& expected, T desired, std::memory_order s, std::memory_order) const {
        return compare_exchange_strong(expected, desired, s);
    }
    __attribute__((always_inline)) bool compare_exchange_weak(T& expected, T desired, std::memory_order o = std::memory_order_seq_cst) const {
        return compare_exchange_strong(expected, desired, o);
    }
    __attribute__((always_inline)) bool compare_exchange_weak(T& expected, T desired, std::memory_order s, std::memory_order) const {
        return compare_exchange_strong(expected, desired, s);
    }
    __attribute__((always_inline)) T fetch_add(T v, std::memory_order o = std::memory_order_seq_cst) const { return __cc_update([v](T x) { return (T)(x + v); }, o); }
    __attribute__((always_inline)) T fetch_sub(T v, std::memory_order o = std::memory_order_seq_cst) const { return __cc_update([v](T x) { return (T)(x - v); }, o); }
    __attribute__((always_inline)) T fetch_and(T v, std::memory_order o = std::memory_order_seq_cst) const { return __cc_update([v](T x) { return (T)(x & v); }, o); }
    __attribute__((always_inline)) T fetch_or(T v, std::memory_order o = std::memory_order_seq_cst) const { return __cc_update([v](T x) { return (T)(x | v); }, o); }
    __attribute__((always_inline)) T fetch_xor(T v, std::memory_order o = std::memory_order_seq_cst) const { return __cc_update([v](T x) { return (T)(x ^ v); }, o); }
    __attribute__((always_inline)) T fetch_min(T v, std::memory_order o = std::memory_order_seq_cst) const { return __cc_update([v](T x) { return v < x ? v : x; }, o); }
    __attribute__((always_inline)) T fetch_max(T v, std::memory_order o = std::memory_order_seq_cst) const { return __cc_update([v](T x) { return v > x ? v : x; }, o); }
    __attribute__((always_inline)) T operator++() const { return fetch_add(1) + 1; }
    __attribute__((always_inline)) T operator++(int) const { return fetch_add(1); }
    __attribute__((always_inline)) T operator--() const { return fetch_sub(1) - 1; }
    __attribute__((always_inline)) T operator--(int) const { return fetch_sub(1); }
    __attribute__((always_inline)) T operator+=(T v) const { return fetch_add(v) + v; }
    __attribute__((always_inline)) T operator-=(T v) const { return fetch_sub(v) - v; }
};
// cuda::atomic<T, Scope> (<cuda/atomic>): a variable that holds its own value, each operation an atomic_ref's on it
// (`__device__ cuda::atomic<int, cuda::thread_scope_device> count;`, a __shared__ one of block scope).
template <class T, thread_scope Scope = thread_scope_system>
struct atomic {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8, "cuda::atomic here takes 4- and 8-byte types");
    typedef void __cc_atomic_object;
    T __cc_value;
    static constexpr bool is_always_lock_free = true;
    atomic() = default;
    constexpr atomic(T v) : __cc_value(v) {}
    atomic(const atomic&) = delete;
    atomic& operator=(const atomic&) = delete;
    __attribute__((always_inline)) atomic_ref<T, Scope> __cc_ref() const { return atomic_ref<T, Scope>(__cc_value); }
    bool is_lock_free() const { return true; }
    __attribute__((always_inline)) T load(std::memory_order o = std::memory_order_seq_cst) const { return __cc_ref().load(o); }
    __attribute__((always_inline)) operator T() const { return load(); }
    __attribute__((always_inline)) void store(T v, std::memory_order o = std::memory_order_seq_cst) { __cc_ref().store(v, o); }
    __attribute__((always_inline)) T operator=(T v) { store(v); return v; }
    __attribute__((always_inline)) T exchange(T v, std::memory_order o = std::memory_order_seq_cst) { return __cc_ref().exchange(v, o); }
    template <class... O>
    __attribute__((always_inline)) bool compare_exchange_strong(T& expected, T desired, O... orders) {
        return __cc_ref().compare_exchange_strong(expected, desired, orders...);
    }
    template <class... O>
    __attribute__((always_inline)) bool compare_exchange_weak(T& expected, T desired, O... orders) {
        return __cc_ref().compare_exchange_weak(expected, desired, orders...);
    }
    __attribute__((always_inline)) T fetch_add(T v, std::memory_order o = std::memory_order_seq_cst) { return __cc_ref().fetch_add(v, o); }
    __attribute__((always_inline)) T fetch_sub(T v, std::memory_order o = std::memory_order_seq_cst) { return __cc_ref().fetch_sub(v, o); }
    __attribute__((always_inline)) T fetch_and(T v, std::memory_order o = std::memory_order_seq_cst) { return __cc_ref().fetch_and(v, o); }
    __attribute__((always_inline)) T fetch_or(T v, std::memory_order o = std::memory_order_seq_cst) { return __cc_ref().fetch_or(v, o); }
    __attribute__((always_inline)) T fetch_xor(T v, std::memory_order o = std::memory_order_seq_cst) { return __cc_ref().fetch_xor(v, o); }
    __attribute__((always_inline)) T fetch_min(T v, std::memory_order o = std::memory_order_seq_cst) { return __cc_ref().fetch_min(v, o); }
    __attribute__((always_inline)) T fetch_max(T v, std::memory_order o = std::memory_order_seq_cst) { return __cc_ref().fetch_max(v, o); }
    __attribute__((always_inline)) T operator++() { return fetch_add(1) + 1; }
    __attribute__((always_inline)) T operator++(int) { return fetch_add(1); }
    __attribute__((always_inline)) T operator--() { return fetch_sub(1) - 1; }
    __attribute__((always_inline)) T operator--(int) { return fetch_sub(1); }
    __attribute__((always_inline)) T operator+=(T v) { return fetch_add(v) + v; }
    __attribute__((always_inline)) T operator-=(T v) { return fetch_sub(v) - v; }
};
namespace std {
template <class T>
using atomic = typename ::std::conditional<sizeof(T) == 4 || sizeof(T) == 8, ::cuda::atomic<T, thread_scope_system>,
                                           ::std::atomic<T>>::type;  // (a bool: the host's, unseen by the sanitizer)
using atomic_int = atomic<int>;
using atomic_uint = atomic<unsigned int>;
using atomic_llong = atomic<long long>;
using atomic_ullong = atomic<unsigned long long>;
}  // namespace std
// cuda::atomic_thread_fence(order, scope): a fence of that scope, unless the order is relaxed (PTX's
// fence.sc or fence.acq_rel: both order this thread's accesses, which is what the sanitizer follows).
static inline void atomic_thread_fence(std::memory_order o, thread_scope scope = thread_scope_system) {
    if (o == std::memory_order_relaxed || scope == thread_scope_thread) return;
    if (scope == thread_scope_block) __threadfence_block();
    else __threadfence();
}
namespace std {
static inline void atomic_thread_fence(memory_order o) { ::cuda::atomic_thread_fence(o); }
}
}  // namespace cuda
// (cuda::std::atomic_ref: C++20's, which this C++17 library lacks; cuda::std is std here)
namespace std { template <class T> using atomic_ref = ::cuda::atomic_ref<T, ::cuda::thread_scope_system>; }

namespace cooperative_groups {

struct thread_block {
    void sync(__CC_LINE) const { __cc_syncthreads(__cc_line, 0); }
    void barrier_wait(__CC_LINE) const { __cc_syncthreads(__cc_line, 0); }
    unsigned thread_rank() const { return __cc_linear_tid(); }
    unsigned size() const { return blockDim.x * blockDim.y * blockDim.z; }
    unsigned num_threads() const { return size(); }
    dim3 group_index() const { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
    dim3 thread_index() const { return dim3(threadIdx.x, threadIdx.y, threadIdx.z); }
    dim3 group_dim() const { return blockDim; }
    dim3 dim_threads() const { return blockDim; }
    static constexpr bool __cc_is_block = true;
};
static inline thread_block this_thread_block() { return thread_block(); }

// Any group, as a function's `thread_group g` parameter takes it: a thread block, a tile of
// `size` consecutive threads (tiled_partition(parent, n)), or the coalesced lanes of a warp.
// Tiles of up to 32 threads lie inside one warp: their calls meet as warp-level calls over the
// tile's lanes.
struct thread_group {
    enum { __CC_TILE, __CC_BLOCK, __CC_COALESCED };
    unsigned __cc_size, __cc_kind = __CC_TILE, __cc_active = 0;
    unsigned __cc_parent = 0;  // a tile's parent: its size when a tile (tiled_partition<8>(warp)), 0 the block
    thread_group(unsigned size, unsigned parent = 0) : __cc_size(size), __cc_parent(parent) {}
    thread_group(const thread_block&) : __cc_size(0), __cc_kind(__CC_BLOCK) {}
    unsigned __cc_mask() const {
        if (__cc_kind == __CC_COALESCED) return __cc_active;
        unsigned lane = __cc_lane(), first = lane / __cc_size * __cc_size;
        return (__cc_size >= 32 ? __CC_FULL : ((1u << __cc_size) - 1u)) << first;
    }
    void sync(__CC_LINE) const {
        if (__cc_kind == __CC_BLOCK) {
            __cc_syncthreads(__cc_line, 0);
            return;
        }
        if (__cc_size > 32 && __cc_kind == __CC_TILE) {  // across warps: not emulated
            snprintf(__cc_fault_out->text, sizeof __cc_fault_out->text, "the sync of a tile of %u threads", __cc_size);
            __cc_fail(__CC_UNSUPPORTED, __cc_line);
        }
        __cc_warp_vote(__CC_W_SYNC, __cc_mask(), 0, __cc_line);
    }
    unsigned thread_rank() const {
        if (__cc_kind == __CC_BLOCK) return __cc_linear_tid();
        if (__cc_kind == __CC_COALESCED) return (unsigned)__builtin_popcount(__cc_active & __lanemask_lt());
        return __cc_linear_tid() % __cc_size;
    }
    unsigned size() const {
        if (__cc_kind == __CC_BLOCK) return blockDim.x * blockDim.y * blockDim.z;
        if (__cc_kind == __CC_COALESCED) return (unsigned)__builtin_popcount(__cc_active);
        return __cc_size;
    }
    unsigned num_threads() const { return size(); }
    // (no meta_group_rank/meta_group_size: CUDA's thread_group has none, only thread_block_tile<N>
    // and coalesced_group do, and NVRTC refuses the call)
};
// The size of the tile a group is, as a parent of tiles (0: a block, or coalesced threads).
template <class G> static inline unsigned __cc_parent_size(const G& g) {
    if constexpr (std::is_base_of<thread_group, G>::value) return g.__cc_kind == thread_group::__CC_TILE ? g.__cc_size : 0;
    else return 0;
}

template <unsigned N>
struct thread_block_tile : thread_group {
    static_assert(N && (N & (N - 1)) == 0, "thread_block_tile<N>: N must be a power of 2");
    static_assert(N <= 32, "thread_block_tile<N> of more than 32 threads (sm_80 and later allow up to 512): the CPU "
                           "backend runs tiles of at most one warp; use tiles of 32 and combine their results "
                           "through shared memory with __syncthreads(), or run on a GPU");
    thread_block_tile(unsigned parent = 0) : thread_group{N, parent} {}
    static constexpr unsigned num_threads() { return N; }
    static constexpr unsigned size() { return N; }
    unsigned thread_rank() const { return __cc_linear_tid() % N; }
    // The tile's index and count within its parent, a block or a larger tile.
    unsigned meta_group_rank() const { return (__cc_parent ? __cc_linear_tid() % __cc_parent : __cc_linear_tid()) / N; }
    unsigned meta_group_size() const {
        return ((__cc_parent ? __cc_parent : blockDim.x * blockDim.y * blockDim.z) + N - 1) / N;
    }
    template <class T> __cc_value_t<T> shfl(const T& value, int src, __CC_LINE) const {
        __cc_value_t<T> v = value;
        return __cc_warp_exchange(__CC_W_SHFL, __cc_mask(), v, src, N, __cc_line);
    }
    template <class T> __cc_value_t<T> shfl_up(const T& value, unsigned d, __CC_LINE) const {
        __cc_value_t<T> v = value;
        return __cc_warp_exchange(__CC_W_UP, __cc_mask(), v, (int)d, N, __cc_line);
    }
    template <class T> __cc_value_t<T> shfl_down(const T& value, unsigned d, __CC_LINE) const {
        __cc_value_t<T> v = value;
        return __cc_warp_exchange(__CC_W_DOWN, __cc_mask(), v, (int)d, N, __cc_line);
    }
    template <class T> __cc_value_t<T> shfl_xor(const T& value, unsigned m, __CC_LINE) const {
        __cc_value_t<T> v = value;
        return __cc_warp_exchange(__CC_W_XOR, __cc_mask(), v, (int)m, N, __cc_line);
    }
    unsigned __cc_shift() const { return __cc_lane() / N * N; }
    unsigned ballot(int p, __CC_LINE) const { return __cc_warp_vote(__CC_W_BALLOT, __cc_mask(), p != 0, __cc_line) >> __cc_shift(); }
    bool any(int p, __CC_LINE) const { return __cc_warp_vote(__CC_W_ANY, __cc_mask(), p != 0, __cc_line) != 0; }
    bool all(int p, __CC_LINE) const { return __cc_warp_vote(__CC_W_ALL, __cc_mask(), p != 0, __cc_line) != 0; }
    template <class T> unsigned match_any(const T& v, __CC_LINE) const { return __match_any_sync(__cc_mask(), v, __cc_line) >> __cc_shift(); }
    template <class T> unsigned match_all(const T& v, int& pred, __CC_LINE) const {
        return __match_all_sync(__cc_mask(), v, &pred, __cc_line) >> __cc_shift();
    }
};

template <unsigned N, class Parent>
static inline thread_block_tile<N> tiled_partition(const Parent& parent) {
    return thread_block_tile<N>(__cc_parent_size(parent));
}
template <class Parent>
static inline thread_group tiled_partition(const Parent& parent, unsigned n, __CC_LINE) {
    if (!n || n > 32 || (n & (n - 1))) {  // CUDA: a power of 2 up to 32
        snprintf(__cc_fault_out->text, sizeof __cc_fault_out->text, "tiled_partition(group, %u)", n);
        __cc_fail(__CC_UNSUPPORTED, __cc_line);
    }
    return thread_group(n, __cc_parent_size(parent));
}

// The lanes of the warp that are here together (coalesced_threads()).
struct coalesced_group {
    unsigned __cc_active;
    unsigned size() const { return (unsigned)__builtin_popcount(__cc_active); }
    unsigned num_threads() const { return size(); }
    unsigned thread_rank() const { return (unsigned)__builtin_popcount(__cc_active & __lanemask_lt()); }
    unsigned meta_group_rank() const { return 0; }
    unsigned meta_group_size() const { return 1; }
    void sync(__CC_LINE) const { __cc_warp_vote(__CC_W_SYNC, __cc_active, 0, __cc_line); }
    int __cc_lane_of(int rank) const {
        unsigned m = __cc_active;
        for (int r = 0; m; r++, m &= m - 1) if (r == rank) return __builtin_ctz(m);
        return 0;
    }
    template <class T> __cc_value_t<T> shfl(const T& value, int rank, __CC_LINE) const {
        __cc_value_t<T> v = value;
        return __cc_warp_exchange(__CC_W_SHFL, __cc_active, v, __cc_lane_of(rank), 32, __cc_line);
    }
    // By rank in the group, as CUDA's: a rank past either end gets its own value back.
    template <class T> __cc_value_t<T> shfl_up(const T& value, unsigned delta, __CC_LINE) const {
        unsigned rank = thread_rank();
        return shfl(value, (int)(rank >= delta ? rank - delta : rank), __cc_line);
    }
    template <class T> __cc_value_t<T> shfl_down(const T& value, unsigned delta, __CC_LINE) const {
        unsigned rank = thread_rank();
        return shfl(value, (int)(rank + delta < size() ? rank + delta : rank), __cc_line);
    }
    unsigned ballot(int p, __CC_LINE) const {
        unsigned b = __cc_warp_vote(__CC_W_BALLOT, __cc_active, p != 0, __cc_line), out = 0;
        int r = 0;
        for (unsigned m = __cc_active; m; m &= m - 1, r++) if (b >> __builtin_ctz(m) & 1) out |= 1u << r;
        return out;
    }
    bool any(int p, __CC_LINE) const { return __cc_warp_vote(__CC_W_ANY, __cc_active, p != 0, __cc_line) != 0; }
    bool all(int p, __CC_LINE) const { return __cc_warp_vote(__CC_W_ALL, __cc_active, p != 0, __cc_line) != 0; }
    operator thread_group() const {
        thread_group g(size());
        g.__cc_kind = thread_group::__CC_COALESCED, g.__cc_active = __cc_active;
        return g;
    }
};
static inline coalesced_group coalesced_threads(__CC_LINE) { return coalesced_group{__activemask(__cc_line)}; }

// labeled_partition / binary_partition: the lanes of the parent group (a warp's tile or a
// coalesced group) whose label equals this lane's, met as __match_any_sync meets them.
static inline unsigned __cc_group_mask(const coalesced_group& g) { return g.__cc_active; }
template <unsigned N> static inline unsigned __cc_group_mask(const thread_block_tile<N>& g) { return g.__cc_mask(); }
template <class Parent>
static inline coalesced_group labeled_partition(const Parent& parent, int label, __CC_LINE) {
    return coalesced_group{__match_any_sync(__cc_group_mask(parent), label, __cc_line)};
}
template <class Parent>
static inline coalesced_group binary_partition(const Parent& parent, bool predicate, __CC_LINE) {
    return coalesced_group{__match_any_sync(__cc_group_mask(parent), (int)predicate, __cc_line)};
}

// The whole grid: its sizes work; its sync needs a GPU (source.py refuses kernels that call it).
struct grid_group {
    void sync(__CC_LINE) const {  // (reached through a function source.py could not follow: a grid_group& parameter)
        snprintf(__cc_fault_out->text, sizeof __cc_fault_out->text, "grid");
        __cc_fail(__CC_UNSUPPORTED, __cc_line);
    }
    unsigned long long thread_rank() const {
        unsigned long long block = blockIdx.x + (unsigned long long)gridDim.x * (blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z);
        return block * blockDim.x * blockDim.y * blockDim.z + __cc_linear_tid();
    }
    unsigned long long size() const {
        return (unsigned long long)gridDim.x * gridDim.y * gridDim.z * blockDim.x * blockDim.y * blockDim.z;
    }
    unsigned long long num_threads() const { return size(); }
    unsigned long long block_rank() const {
        return blockIdx.x + (unsigned long long)gridDim.x * (blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z);
    }
    unsigned long long num_blocks() const { return (unsigned long long)gridDim.x * gridDim.y * gridDim.z; }
    dim3 block_index() const { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
    dim3 dim_blocks() const { return gridDim; }
    dim3 group_dim() const { return gridDim; }
    bool is_valid() const { return false; }
};
static inline grid_group this_grid() { return grid_group(); }

// invoke_one (CUDA 12): one thread of the group (here its rank 0) calls fn; invoke_one_broadcast
// gives its result to every thread of the group (a warp's tile or a coalesced group).
template <class Group, class Fn, class... Args>
static inline void invoke_one(const Group& g, Fn&& fn, Args&&... args) {
    if (g.thread_rank() == 0) fn(static_cast<Args&&>(args)...);
}
template <class Group, class Fn, class... Args>
static inline auto invoke_one_broadcast(const Group& g, Fn&& fn, Args&&... args) -> decltype(fn(static_cast<Args&&>(args)...)) {
    decltype(fn(static_cast<Args&&>(args)...)) result{};
    if (g.thread_rank() == 0) result = fn(static_cast<Args&&>(args)...);
    return g.shfl(result, 0);
}

template <class G> static inline void sync(const G& g, __CC_LINE) { g.sync(__cc_line); }

// (after the group's sync, the copies are done: all of them, or all but the newest N)
static inline void __cc_async_done(int newest) {
    if (!__cc_sanitizing || __cc_async_count <= newest) return;
    memmove(__cc_async, __cc_async + (__cc_async_count - newest), sizeof *__cc_async * (size_t)newest);
    __cc_async_count = newest;
}
template <class G> static inline void wait(const G& g, __CC_LINE) { g.sync(__cc_line); __cc_async_done(0); }
template <unsigned N, class G> static inline void wait_prior(const G& g, __CC_LINE) {
    g.sync(__cc_line);
    __cc_async_done((int)N);
}
template <class G> static inline unsigned thread_rank(const G& g) { return (unsigned)g.thread_rank(); }
template <class G> static inline unsigned group_size(const G& g) { return (unsigned)g.size(); }

template <class T = void> struct plus { T operator()(T a, T b) const { return a + b; } };
template <class T = void> struct less { T operator()(T a, T b) const { return b < a ? b : a; } };
template <class T = void> struct greater { T operator()(T a, T b) const { return a < b ? b : a; } };
template <class T = void> struct bit_and { T operator()(T a, T b) const { return a & b; } };
template <class T = void> struct bit_or { T operator()(T a, T b) const { return a | b; } };
template <class T = void> struct bit_xor { T operator()(T a, T b) const { return a ^ b; } };
template <> struct plus<void> { template <class T> T operator()(T a, T b) const { return a + b; } };
template <> struct less<void> { template <class T> T operator()(T a, T b) const { return b < a ? b : a; } };
template <> struct greater<void> { template <class T> T operator()(T a, T b) const { return a < b ? b : a; } };

// cg::reduce: every thread of the tile gets op over the tile's values (a butterfly, as CUDA's).
template <class Group, class V, class Op>
static inline __cc_value_t<V> reduce(const Group& g, const V& input, Op op, __CC_LINE) {
    __cc_value_t<V> value = input;
    for (unsigned offset = 1; offset < g.size(); offset *= 2)
        value = op(value, g.shfl_xor(value, offset, __cc_line));
    return value;
}
// Over coalesced threads, whose count need not be a power of two: a tree towards rank 0 (rank r
// holds ranks r to r + 2^k - 1 after step k), then rank 0's total to every thread.
template <class V, class Op>
static inline __cc_value_t<V> reduce(const coalesced_group& g, const V& input, Op op, __CC_LINE) {
    __cc_value_t<V> value = input;
    unsigned rank = g.thread_rank(), n = g.size();
    for (unsigned offset = 1; offset < n; offset *= 2) {
        __cc_value_t<V> other = g.shfl_down(value, offset, __cc_line);
        if (rank + offset < n) value = op(value, other);
    }
    return g.shfl(value, 0, __cc_line);
}
// cg::inclusive_scan / exclusive_scan over a tile (Kogge-Stone with shfl_up).
template <class Group, class V, class Op = plus<__cc_value_t<V>>>
static inline __cc_value_t<V> inclusive_scan(const Group& g, const V& input, Op op = Op(), __CC_LINE) {
    typedef __cc_value_t<V> T;
    T value = input;
    unsigned rank = g.thread_rank();
    for (unsigned offset = 1; offset < g.size(); offset *= 2) {
        T other = g.shfl_up(value, offset, __cc_line);
        if (rank >= offset) value = op(value, other);
    }
    return value;
}
template <class Group, class V, class Op = plus<__cc_value_t<V>>>
static inline __cc_value_t<V> exclusive_scan(const Group& g, const V& input, Op op = Op(), __CC_LINE) {
    typedef __cc_value_t<V> T;
    T inclusive = inclusive_scan(g, input, op, __cc_line);
    T before = g.shfl_up(inclusive, 1, __cc_line);
    return g.thread_rank() == 0 ? T() : before;
}

}  // namespace cooperative_groups

// ---------------------------------------------------------------------------------------
// Launching: catch crashes, set the stage, run, clean up
// ---------------------------------------------------------------------------------------

// Crashes (the kernel's fault) and stops (the watchdog's or the user's); their handlers are
// installed for the duration of a launch only, and the previous ones put back afterwards.
static const int __CC_SIGNALS[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGINT, SIGURG};
static const int __CC_CRASH_SIGNALS = 4;
__CC_STATE struct sigaction __cc_old_actions[6];
__CC_STATE stack_t __cc_old_signal_stack;

// Where a signal came, from its saved registers: the program counter, the stack pointer (a fault
// just below it is a stack overflow) and the frame pointer (sanitized builds keep one, and
// __cc_note_callers walks the frames from it on Linux).
struct __cc_registers { uintptr_t pc, sp, fp; };
__CC_RT __cc_registers __cc_registers_of(void* context) {
    ucontext_t* uc = (ucontext_t*)context;
    (void)uc;
#if defined(__linux__) && defined(__x86_64__)
    const greg_t* r = uc->uc_mcontext.gregs;
    return {(uintptr_t)r[REG_RIP], (uintptr_t)r[REG_RSP], (uintptr_t)r[REG_RBP]};
#elif defined(__linux__) && defined(__aarch64__)
    return {(uintptr_t)uc->uc_mcontext.pc, (uintptr_t)uc->uc_mcontext.sp, (uintptr_t)uc->uc_mcontext.regs[29]};
#elif defined(__APPLE__) && defined(__x86_64__)
    return {(uintptr_t)uc->uc_mcontext->__ss.__rip, (uintptr_t)uc->uc_mcontext->__ss.__rsp, 0};
#elif defined(__APPLE__) && defined(__aarch64__)
    return {(uintptr_t)uc->uc_mcontext->__ss.__pc, (uintptr_t)uc->uc_mcontext->__ss.__sp, 0};
#else
    return {0, 0, 0};
#endif
}

// The worker the calling thread is, or nullptr (async-signal-safe: no thread_local variable).
__CC_RT __cc_worker* __cc_worker_of_self() {
    pthread_t self = pthread_self();
    for (int k = 0; k < __cc_worker_count; k++)
        if (__cc_workers[k].alive && pthread_equal(__cc_workers[k].thread, self)) return &__cc_workers[k];
    return nullptr;
}

__CC_RT void __cc_on_crash(int signal, siginfo_t* info, void* context) {
    __cc_worker* w = __cc_launching ? __cc_worker_of_self() : nullptr;
    if (!w || !w->active) {
        // Not the kernel's fault: give the signal back to whoever handled it before us.
        for (int i = 0; i < __CC_CRASH_SIGNALS; i++)
            if (__CC_SIGNALS[i] == signal) sigaction(signal, &__cc_old_actions[i], nullptr);
        return;
    }
    uintptr_t address = (uintptr_t)info->si_addr;
    __cc_fault* f = &w->fault;
    f->signal = signal;
    f->address = address;
    const __cc_registers at = __cc_registers_of(context);
    f->code_offset = __cc_code_offset((void*)(at.pc + 1));  // +1: Python subtracts 1
    if (at.pc < 65536 && at.pc == address && at.sp) {
        // A call through a null (or small) function pointer: the pc is the bad address, and the line is
        // the caller's, where the call returns to (x86-64: on top of the stack; arm64: the link register).
        f->op = 7;  // (the message says "called")
#if defined(__linux__) && defined(__aarch64__)
        f->code_offset = __cc_code_offset((void*)((ucontext_t*)context)->uc_mcontext.regs[30]);
#elif defined(__x86_64__)
        f->code_offset = __cc_code_offset(*(void* const*)at.sp);
#endif
    }
    uintptr_t sp = at.sp;
    bool near_sp = sp && address < sp + 4096 && address + 256 * 1024 > sp;
    bool overflow = (signal == SIGSEGV || signal == SIGBUS) && (__cc_in_guard_page(address) || near_sp);
    if (overflow && w->stack_pool) f->length = (int64_t)__cc_fiber_stack_bytes();  // (a fiber's stack)
    if (overflow) f->base = __cc_last_site;  // in a sanitized build the pc may lie in __cc_note: its last access
    else __cc_note_callers(f, (void* const*)at.fp);  // the calls that led to the crashing line
    __cc_fail(overflow ? __CC_STACK_OVERFLOW : __CC_SIGNAL, 0);
}

// The watchdog's signal at the deadline (sent to every worker), a worker's signal to stop the
// workers on later blocks than its fault, or Ctrl-C (Jupyter's interrupt button sends SIGINT,
// which lands on one thread: it passes the stop on to every worker).
__CC_RT void __cc_on_stop_signal(int signal, siginfo_t*, void* context) {
    if (!__cc_launching) return;  // the launch just ended
    __cc_worker* w = __cc_worker_of_self();
    if (signal == SIGINT) {
        __cc_stop = __CC_INTERRUPTED;
        __cc_signal_workers(__CC_WATCHDOG_SIGNAL, w);
    }
    if (!w || !w->active) return;  // between blocks, or waiting for the others
    if (w->unsafe) return;         // inside printf or malloc: __cc_leave_unsafe stops the kernel
    if (__cc_stop) {
        w->fault.code_offset = __cc_code_offset((void*)(__cc_registers_of(context).pc + 1));
        w->fault.address = __cc_last_site;  // in a sanitized build the pc may lie in __cc_note
        __cc_name_first_waiter(w);
        __cc_fail(__cc_stop, __cc_stop_line(w));
    }
    if (w->block > __atomic_load_n(&__cc_fault_min, __ATOMIC_SEQ_CST)) __cc_cancel(w);
}

__CC_RT void __cc_install_handlers(char* signal_stack) {
    stack_t stack = {};
    stack.ss_sp = signal_stack;
    stack.ss_size = 1 << 16;
    sigaltstack(&stack, &__cc_old_signal_stack);  // a stack overflow needs another stack
    struct sigaction action = {};
    action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    for (int i = 0; i < 6; i++) {
        action.sa_sigaction = i < __CC_CRASH_SIGNALS ? __cc_on_crash : __cc_on_stop_signal;
        sigaction(__CC_SIGNALS[i], &action, &__cc_old_actions[i]);
    }
}

__CC_RT void __cc_restore_handlers() {
    for (int i = 0; i < 6; i++) sigaction(__CC_SIGNALS[i], &__cc_old_actions[i], nullptr);
    sigaltstack(&__cc_old_signal_stack, nullptr);
}

// A sanitized or traced launch runs on one worker (see the top of this file).
static const bool __cc_may_parallel = !__cc_sanitizing && !__cc_tracing;
__CC_STATE void (*__cc_worker_run)(const __cc_arg*);  // the kernel's launcher: runs blocks until none is left
__CC_STATE const __cc_arg* __cc_worker_args;
__CC_STATE pthread_mutex_t __cc_done_lock = PTHREAD_MUTEX_INITIALIZER;
__CC_STATE pthread_cond_t __cc_done_wake = PTHREAD_COND_INITIALIZER;
__CC_STATE int __cc_workers_done;

// One worker's part of a launch: blocks until none is left, or until it faults.
__CC_RT void __cc_work(__cc_worker* w) {
    __cc_me = w;  // this thread's first use of its thread_local variables allocates them: now, not in a kernel
    __cc_dyn_shared = w->dyn_shared;
    if (__cc_dyn_shared_bytes)
        __cc_register_shared(w->dyn_shared, __cc_dyn_shared_bytes, 0, __cc_dyn_shared_name, true);
    w->block = -1, w->chunk_next = w->chunk_end = 0;
    w->current = nullptr, w->unsafe = 0, w->last_barrier_line = 0, w->warp_line = 0, w->undefined.set = 0;
    w->partial.length = 0;
    w->poisoned_count = 0;  // a new thread's __shared__ arrays lie elsewhere
    if (sigsetjmp(w->env, 1) == 0) {
        w->active = 1;
        __cc_worker_run(__cc_worker_args);
        w->active = 0;
        return;
    }
    w = __cc_me;  // (locals are not to be trusted after siglongjmp)
    w->active = 0;
    w->current = nullptr;
    if (!w->fault.kind) return;  // cancelled: an earlier block faulted
    w->fault_block = w->block;
    // The earliest faulting block wins; workers on later blocks stop (a serial run would never
    // have started them), workers on earlier blocks go on: one of them may fault first.
    long long seen = __atomic_load_n(&__cc_fault_min, __ATOMIC_SEQ_CST);
    while (w->block < seen &&
           !__atomic_compare_exchange_n(&__cc_fault_min, &seen, w->block, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
    }
    long long first = __atomic_load_n(&__cc_fault_min, __ATOMIC_SEQ_CST);
    for (int k = 0; k < __cc_worker_count; k++) {
        __cc_worker* v = &__cc_workers[k];
        // v->block is written before v reads __cc_fault_min (both seq_cst): either v sees the
        // fault and stops by itself, or its block is seen here.
        if (v != w && v->alive && v->active && __atomic_load_n(&v->block, __ATOMIC_SEQ_CST) > first)
            pthread_kill(v->thread, __CC_WATCHDOG_SIGNAL);
    }
}

// A worker's state in a launch: state = launch * 4 + one of these. A worker that has not begun
// when the calling thread has run every block is not waited for (on a busy machine it may not get
// a core for milliseconds): it is skipped, and when it does wake up it sees that and goes back to
// sleep, touching nothing.
enum { __CC_WORKER_PENDING, __CC_WORKER_RUNNING, __CC_WORKER_SKIPPED };
__CC_STATE long long __cc_worker_state[__CC_MAX_WORKERS];
__CC_STATE long long __cc_launches_started;

// Worker threads stay between launches, one pool per module: starting a thread took about 100 µs
// of every launch on two cores (a vector add of 10^6 floats takes 1-2 ms). A pool thread that sees
// no launch for __CC_POOL_IDLE_SECONDS ends, so the many modules of a test run or of a notebook
// whose kernel is being edited do not keep threads. Worker 0 is always the calling thread.
static const int __CC_POOL_IDLE_SECONDS = 2;
__CC_STATE pthread_mutex_t __cc_pool_lock = PTHREAD_MUTEX_INITIALIZER;
__CC_STATE pthread_cond_t __cc_pool_wake = PTHREAD_COND_INITIALIZER;
__CC_STATE bool __cc_pool_thread_of[__CC_MAX_WORKERS];  // slot k has a pool thread (guarded by __cc_pool_lock)
__CC_STATE long long __cc_pool_launch;                  // the launch pool threads are called to

// Worker k's part of launch `launch`, unless it was skipped or has no part in it.
__CC_RT void __cc_join_launch(int k, long long launch) {
    long long pending = launch * 4 + __CC_WORKER_PENDING;
    if (!__atomic_compare_exchange_n(&__cc_worker_state[k], &pending, launch * 4 + __CC_WORKER_RUNNING, false,
                                     __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
        return;
    __cc_worker* w = &__cc_workers[k];
    w->thread = pthread_self();
    __atomic_store_n(&w->alive, 1, __ATOMIC_RELEASE);
    __cc_work(w);
    pthread_mutex_lock(&__cc_done_lock);
    __cc_workers_done++;
    pthread_cond_signal(&__cc_done_wake);
    pthread_mutex_unlock(&__cc_done_lock);
}

__CC_RT void* __cc_pool_thread(void* argument) {
    uintptr_t packed = (uintptr_t)argument;
    int k = (int)(packed % __CC_MAX_WORKERS);
    long long seen = (long long)(packed / __CC_MAX_WORKERS) - 1;  // it was started for the next launch
#if defined(__APPLE__)
    pthread_setname_np("course.cuda");  // (Linux: named by __cc_call_pool)
#endif
    stack_t stack = {};
    stack.ss_sp = __cc_workers[k].signal_stack;
    stack.ss_size = 1 << 16;
    sigaltstack(&stack, nullptr);  // each thread has its own: a stack overflow needs it
    pthread_mutex_lock(&__cc_pool_lock);
    for (;;) {
        while (__cc_pool_launch == seen) {
            struct timespec deadline;
            clock_gettime(CLOCK_REALTIME, &deadline);
            deadline.tv_sec += __CC_POOL_IDLE_SECONDS;
            if (pthread_cond_timedwait(&__cc_pool_wake, &__cc_pool_lock, &deadline) == ETIMEDOUT &&
                __cc_pool_launch == seen) {
                __cc_pool_thread_of[k] = false;  // (under the lock: a launch now starts a new one)
                pthread_mutex_unlock(&__cc_pool_lock);
                return nullptr;
            }
        }
        seen = __cc_pool_launch;
        pthread_mutex_unlock(&__cc_pool_lock);
        __cc_join_launch(k, seen);
        pthread_mutex_lock(&__cc_pool_lock);
    }
}

__CC_RT void __cc_pool_after_fork() {  // nor pool threads
    pthread_mutex_init(&__cc_pool_lock, nullptr);
    pthread_cond_init(&__cc_pool_wake, nullptr);
    pthread_mutex_init(&__cc_done_lock, nullptr);
    pthread_cond_init(&__cc_done_wake, nullptr);
    memset(__cc_pool_thread_of, 0, sizeof __cc_pool_thread_of);
}

// Calls the pool to launch `launch` (workers 1 to count - 1), starting the threads it lacks. A
// slot whose thread could not be started stays pending: the launch skips it, the others do its blocks.
__CC_RT void __cc_call_pool(long long launch, int count) {
    static pthread_attr_t attributes;
    static bool detached = pthread_attr_init(&attributes) == 0 &&
                           pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED) == 0;
    for (int k = 1; k < count; k++)
        __atomic_store_n(&__cc_worker_state[k], launch * 4 + __CC_WORKER_PENDING, __ATOMIC_SEQ_CST);
    pthread_mutex_lock(&__cc_pool_lock);
    __cc_pool_launch = launch;
    for (int k = 1; k < count && detached; k++) {
        if (__cc_pool_thread_of[k]) continue;
        pthread_t thread;
        void* argument = (void*)(uintptr_t)(launch * __CC_MAX_WORKERS + k);
        __cc_pool_thread_of[k] = pthread_create(&thread, &attributes, __cc_pool_thread, argument) == 0;
#if defined(__linux__)
        // What `top -H` and the tests see, from the start (the thread may not get a core for a while).
        if (__cc_pool_thread_of[k]) pthread_setname_np(thread, "course.cuda");
#endif
    }
    pthread_cond_broadcast(&__cc_pool_wake);
    pthread_mutex_unlock(&__cc_pool_lock);
}

// cfg: grid x y z, block x y z, dynamic shared bytes, time limit in ms, workers.
// `prepare` checks and registers the arguments (once); `run` runs blocks (on every worker).
__CC_RT int __cc_launch(const long long* cfg, __cc_fault* fault, void (*prepare)(const __cc_arg*),
                       void (*run)(const __cc_arg*), const __cc_arg* args) {
    __cc_worker* main = &__cc_workers[0];
    __cc_me = main;
    memset(fault, 0, sizeof *fault);
    gridDim = dim3((unsigned)cfg[0], (unsigned)cfg[1], (unsigned)cfg[2]);
    blockDim = dim3((unsigned)cfg[3], (unsigned)cfg[4], (unsigned)cfg[5]);
    blockIdx = {0, 0, 0}, threadIdx = {0, 0, 0};
    long long total = (long long)cfg[0] * cfg[1] * cfg[2];
    long long workers = __cc_may_parallel ? cfg[8] : 1;
    if (workers > total) workers = total;
    if (workers > __CC_MAX_WORKERS) workers = __CC_MAX_WORKERS;
    if (workers < 1) workers = 1;
    __cc_worker_count = (int)workers;
    __cc_parallel = workers > 1;
    __cc_dyn_shared_bytes = (size_t)cfg[6];
    for (int k = 0; k < __cc_worker_count; k++) {  // memory now, not in the middle of a kernel
        __cc_worker* w = &__cc_workers[k];
        memset(&w->fault, 0, sizeof w->fault);
        w->exited_count = 0;
        w->fault_block = -1, w->active = 0, w->unsafe = 0;
        w->out_len = w->segment_count = 0;
        if (__cc_dyn_shared_bytes > w->dyn_capacity) {
            free(w->dyn_shared);
            w->dyn_shared = (char*)aligned_alloc(64, (__cc_dyn_shared_bytes + 63) / 64 * 64);
            w->dyn_capacity = w->dyn_shared ? __cc_dyn_shared_bytes : 0;
        }
        if (!w->signal_stack) w->signal_stack = (char*)malloc(1 << 16);
        if (!w->out) w->out = (char*)malloc(w->out_cap = 1 << 16);
        if ((__cc_dyn_shared_bytes && !w->dyn_shared) || !w->signal_stack || !w->out)
            return fault->kind = __CC_NO_MEMORY;
    }
    __cc_release_allocations();
    __cc_current_launch++;
    __cc_last_site = 0;
    __cc_locks_new_launch();
    __cc_heap_refused = 0;
    for (int k = 0; k < __CC_MAX_WORKERS; k++) __cc_heap_block_done(&__cc_workers[k]);
    if (__cc_dyn_shared_bytes)
        for (int k = 0; k < __cc_worker_count; k++)
            __cc_register_allocation(__cc_workers[k].dyn_shared, __cc_dyn_shared_bytes, 0);
    if (!__cc_module_base) {
        Dl_info info;
        if (dladdr((void*)&__cc_take_output, &info)) __cc_module_base = (uintptr_t)info.dli_fbase;
#if defined(__CC_FRAME_POINTERS) && defined(__linux__)
        dl_iterate_phdr(__cc_find_code, nullptr);  // where this module's code lies (for __cc_note_callers)
#endif
    }
    __cc_stop = 0;
    __cc_fault_min = LLONG_MAX;
    __cc_next_block = 0;
    __cc_block_total = total;
    long long chunk = total / (workers * 32);  // small enough that workers finish together
    __cc_chunk = workers == 1 ? total : chunk < 1 ? 1 : chunk;
    __cc_worker_run = run;
    __cc_worker_args = args;
    __cc_workers_done = 0;
    main->thread = pthread_self();
    main->alive = 1;
    main->block = -1;
    __cc_install_handlers(main->signal_stack);
    __cc_launching = 1;
    if (sigsetjmp(main->env, 1) == 0) prepare(args);  // a bad argument fails here, before any block
    int running = 0;
    if (!main->fault.kind) {
        __cc_watch_begin(cfg[7]);
        long long launch = ++__cc_launches_started;
        if (__cc_worker_count > 1) __cc_call_pool(launch, __cc_worker_count);  // (one worker: the pool sleeps on)
        __cc_work(main);
        for (int k = 1; k < __cc_worker_count; k++) {
            long long pending = launch * 4 + __CC_WORKER_PENDING;
            if (!__atomic_compare_exchange_n(&__cc_worker_state[k], &pending, launch * 4 + __CC_WORKER_SKIPPED, false,
                                             __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
                running++;  // it took its part: wait for it
        }
        pthread_mutex_lock(&__cc_done_lock);
        while (__cc_workers_done < running) pthread_cond_wait(&__cc_done_wake, &__cc_done_lock);
        pthread_mutex_unlock(&__cc_done_lock);
        __cc_watch_end();  // the watchdog signals no worker after this: now they may be joined
    }
    __cc_launching = 0;
    for (int k = 1; k < __cc_worker_count; k++) __cc_workers[k].alive = 0;
    main->alive = 0;
    __cc_fault repeated = {};
    __cc_describe_repeated(&repeated);
    __cc_release_allocations();
    __cc_restore_handlers();
    const __cc_worker* first = nullptr;  // the earliest block in launch order that faulted
    for (int k = 0; k < __cc_worker_count; k++) {
        const __cc_worker* w = &__cc_workers[k];
        if (w->fault.kind && (!first || w->fault_block < first->fault_block)) first = w;
    }
    if (first) *fault = first->fault;
    for (int k = 0; k < __cc_worker_count && !first; k++) {
        // No fault, but a shuffle read a lane outside its mask: Python looks for its pattern in
        // the arrays (a plain build does not check stores), so the launch says where it came from.
        const __cc_worker* w = &__cc_workers[k];
        if (!w->undefined.set) continue;
        __cc_describe_undefined(w, fault, 2);
        break;
    }
    for (int k = 0; k < __cc_worker_count && !first && !fault->length; k++)
        if (__cc_workers[k].partial.length) *fault = __cc_workers[k].partial;  // (length 6; kind 0: no fault)
    if (!first && !fault->length && repeated.length) *fault = repeated;  // a warning, when nothing else
    if (!first && !fault->length) __cc_describe_rng_setup(fault);  // (a warning too)
    __cc_collect_output(first ? first->fault_block : LLONG_MAX);
    if (__cc_stop == __CC_INTERRUPTED) fault->kind = __CC_INTERRUPTED;  // Ctrl-C wins
    return fault->kind;
}

// ---------------------------------------------------------------------------------------
// cuRAND's device API (curand_kernel.h) for the XORWOW generator (curandState, the default) and
// Philox4_32_10: the same bits as on a GPU. curand(), curand4() and the uniform floats and doubles are
// identical to a GPU's; normal and log-normal numbers go through logf/sinf/cosf/expf, which
// may differ from the GPU's fast versions in the last bits. The state types have CUDA's sizes
// and layouts, so that an array of states allocated by bytes holds as many here as there.
// (MRG32k3a, Sobol, MTGP32, Poisson and discrete distributions: source.py refuses them, naming
// what to use instead.)
// ---------------------------------------------------------------------------------------

struct curandStateXORWOW {
    unsigned int d, v[5];
    int boxmuller_flag, boxmuller_flag_double;
    float boxmuller_extra;
    double boxmuller_extra_double;
};
struct curandStatePhilox4_32_10 {
    uint4 ctr, output;
    uint2 key;
    unsigned int STATE;
    int boxmuller_flag, boxmuller_flag_double;
    float boxmuller_extra;
    double boxmuller_extra_double;
};
struct curandStateMRG32k3a {  // (the type only: its generator is refused)
    unsigned int s1[3], s2[3];
    int boxmuller_flag, boxmuller_flag_double;
    float boxmuller_extra;
    double boxmuller_extra_double;
};
typedef curandStateXORWOW curandStateXORWOW_t;
typedef curandStateXORWOW curandState_t;
typedef curandStateXORWOW curandState;
typedef curandStatePhilox4_32_10 curandStatePhilox4_32_10_t;
typedef curandStateMRG32k3a curandStateMRG32k3a_t;
static_assert(sizeof(curandStateXORWOW) == 48 && sizeof(curandStatePhilox4_32_10) == 64,
              "cuRAND's state types must keep CUDA's sizes");

#define CURAND_2POW32_INV (2.3283064e-10f)
#define CURAND_2POW32_INV_DOUBLE (2.3283064365386963e-10)
#define CURAND_2POW53_INV_DOUBLE (1.1102230246251565e-16)
#define CURAND_2POW32_INV_2PI (2.3283064e-10f * 6.2831855f)
#define CURAND_2PI (6.2831855f)
#define CURAND_PI_DOUBLE (3.1415926535897932)
#define CURAND_2PI_DOUBLE (6.2831853071795860)
#define EXTRA_FLAG_NORMAL 0x00000001
#define EXTRA_FLAG_LOG_NORMAL 0x00000002

// XORWOW's xorshift part is linear over GF(2): one step maps the 160 bits of v[0..4] by a 160x160
// bit matrix M. Skipping n numbers applies M^n, made of the powers M^(2^k) for the bits of n; a
// subsequence is 2^67 numbers (cuRAND's spacing), so subsequence s applies M^(2^67 * s). The
// powers are computed once, when a module that uses curand_init is loaded (a few milliseconds),
// and agree with the tables cuRAND ships. Each is kept as 40 tables of 16 entries: entry j of
// table p is what the 4 bits 4p..4p+3 of v, set as in j, contribute (so applying one is 40
// lookups, and curand_init(seed, i, 0, &s) for a million threads takes about a second).
struct __cc_xorwow_jumps {
    struct power {
        unsigned int part[40][16][5];
        void apply(unsigned int v[5]) const {
            unsigned int r[5] = {0, 0, 0, 0, 0};
            for (int p = 0; p < 40; p++) {
                const unsigned int* e = part[p][v[p >> 3] >> ((p & 7) * 4) & 15];
                for (int k = 0; k < 5; k++) r[k] ^= e[k];
            }
            for (int k = 0; k < 5; k++) v[k] = r[k];
        }
        const unsigned int* row(int b) const { return part[b >> 2][1 << (b & 3)]; }  // the image of bit b
        void set_rows(const unsigned int rows[160][5]) {
            for (int p = 0; p < 40; p++)
                for (int j = 0; j < 16; j++)
                    for (int k = 0; k < 5; k++) {
                        unsigned int x = 0;
                        for (int bit = 0; bit < 4; bit++)
                            if (j >> bit & 1) x ^= rows[4 * p + bit][k];
                        part[p][j][k] = x;
                    }
        }
        void square_into(power& out) const {  // out = this^2
            static unsigned int rows[160][5];  // (a loader thread's stack may be small; built under the loader's lock)
            for (int b = 0; b < 160; b++) {
                for (int k = 0; k < 5; k++) rows[b][k] = row(b)[k];
                apply(rows[b]);
            }
            out.set_rows(rows);
        }
    };
    power offset[64];    // M^(2^k)
    power sequence[64];  // M^(2^(67 + k))

    __cc_xorwow_jumps() {
        static unsigned int rows[160][5];
        for (int b = 0; b < 160; b++) {  // one step of each single bit
            unsigned int v[5] = {0, 0, 0, 0, 0};
            v[b >> 5] = 1u << (b & 31);
            unsigned int t = v[0] ^ (v[0] >> 2);
            unsigned int next[5] = {v[1], v[2], v[3], v[4], (v[4] ^ (v[4] << 4)) ^ (t ^ (t << 1))};
            for (int k = 0; k < 5; k++) rows[b][k] = next[k];
        }
        offset[0].set_rows(rows);
        for (int k = 1; k < 64; k++) offset[k - 1].square_into(offset[k]);
        offset[63].square_into(sequence[1]);  // M^(2^64), M^(2^65), M^(2^66), M^(2^67)
        sequence[1].square_into(sequence[2]);
        sequence[2].square_into(sequence[3]);
        sequence[3].square_into(sequence[0]);
        for (int k = 1; k < 64; k++) sequence[k - 1].square_into(sequence[k]);
    }
};
// (A static member of a class template, used only from function templates: built, and given its
// 1.6 MB, only in the modules whose kernels call curand_init or skipahead.)
template <class S> struct __cc_xorwow_tables { static __cc_xorwow_jumps jumps; };
template <class S> __cc_xorwow_jumps __cc_xorwow_tables<S>::jumps;
#define __CC_IF_XORWOW(S) typename std::enable_if<std::is_same<S, curandStateXORWOW>::value>::type

template <class S> static inline auto __cc_skipahead(unsigned long long n, S* state) -> __CC_IF_XORWOW(S) {
    for (int k = 0; n >> k; k++)
        if (n >> k & 1) __cc_xorwow_tables<S>::jumps.offset[k].apply(state->v);
    state->d += 362437u * (unsigned int)n;
}
template <class S> static inline auto __cc_skipahead_sequence(unsigned long long n, S* state) -> __CC_IF_XORWOW(S) {
    for (int k = 0; n >> k; k++)  // (d moves by a multiple of 2^32: not at all)
        if (n >> k & 1) __cc_xorwow_tables<S>::jumps.sequence[k].apply(state->v);
}
template <class S>
static inline auto __cc_curand_init(unsigned long long seed, unsigned long long subsequence, unsigned long long offset,
                                    S* state) -> __CC_IF_XORWOW(S) {
    unsigned int t0 = 1099087573u * ((unsigned int)seed ^ 0xaad26b49u);
    unsigned int t1 = 2591861531u * ((unsigned int)(seed >> 32) ^ 0xf7dcefddu);
    state->d = 6615241u + t1 + t0;
    state->v[0] = 123456789u + t0;
    state->v[1] = 362436069u ^ t0;
    state->v[2] = 521288629u + t1;
    state->v[3] = 88675123u ^ t1;
    state->v[4] = 5783321u + t0;
    __cc_skipahead_sequence(subsequence, state);
    __cc_skipahead(offset, state);
    state->boxmuller_flag = state->boxmuller_flag_double = 0;
    state->boxmuller_extra = 0.0f;
    state->boxmuller_extra_double = 0.0;
}
static inline unsigned int __cc_curand(curandStateXORWOW* state) {
    unsigned int t = state->v[0] ^ (state->v[0] >> 2);
    state->v[0] = state->v[1], state->v[1] = state->v[2], state->v[2] = state->v[3], state->v[3] = state->v[4];
    state->v[4] = (state->v[4] ^ (state->v[4] << 4)) ^ (t ^ (t << 1));
    state->d += 362437u;
    return state->v[4] + state->d;
}

// Philox4_32_10: a counter-based generator. Four numbers per counter value (`output`, the next
// one at `STATE`); a subsequence is 2^66 numbers (the counter's upper half).
static inline uint4 __cc_philox_round(uint4 c, uint2 k) {
    unsigned long long p0 = 0xD2511F53ull * c.x, p1 = 0xCD9E8D57ull * c.z;
    return {(unsigned int)(p1 >> 32) ^ c.y ^ k.x, (unsigned int)p1, (unsigned int)(p0 >> 32) ^ c.w ^ k.y,
            (unsigned int)p0};
}
static inline uint4 __cc_philox(uint4 c, uint2 k) {
    for (int round = 0; round < 9; round++) {
        c = __cc_philox_round(c, k);
        k.x += 0x9E3779B9u, k.y += 0xBB67AE85u;
    }
    return __cc_philox_round(c, k);
}
static inline void __cc_philox_advance(curandStatePhilox4_32_10* s, unsigned long long n) {
    unsigned int low = (unsigned int)n, high = (unsigned int)(n >> 32);
    s->ctr.x += low;
    if (s->ctr.x < low) high++;
    s->ctr.y += high;
    if (high <= s->ctr.y) return;  // (no carry)
    if (++s->ctr.z) return;
    ++s->ctr.w;
}
static inline void __cc_philox_next(curandStatePhilox4_32_10* s) {
    if (++s->ctr.x || ++s->ctr.y || ++s->ctr.z) return;
    ++s->ctr.w;
}
static inline void __cc_skipahead(unsigned long long n, curandStatePhilox4_32_10* state) {
    state->STATE += (unsigned int)(n & 3);
    n /= 4;
    if (state->STATE > 3) n += 1, state->STATE -= 4;
    __cc_philox_advance(state, n);
    state->output = __cc_philox(state->ctr, state->key);
}
static inline void __cc_skipahead_sequence(unsigned long long n, curandStatePhilox4_32_10* state) {
    unsigned int low = (unsigned int)n, high = (unsigned int)(n >> 32);
    state->ctr.z += low;
    if (state->ctr.z < low) high++;
    state->ctr.w += high;
    state->output = __cc_philox(state->ctr, state->key);
}
static inline void __cc_curand_init(unsigned long long seed, unsigned long long subsequence, unsigned long long offset,
                               curandStatePhilox4_32_10* state) {
    state->ctr = make_uint4(0, 0, 0, 0);
    state->key = make_uint2((unsigned int)seed, (unsigned int)(seed >> 32));
    state->STATE = 0;
    state->boxmuller_flag = state->boxmuller_flag_double = 0;
    state->boxmuller_extra = 0.0f;
    state->boxmuller_extra_double = 0.0;
    __cc_skipahead_sequence(subsequence, state);
    __cc_skipahead(offset, state);
}
static inline unsigned int __cc_curand(curandStatePhilox4_32_10* state) {
    unsigned int i = state->STATE++;
    unsigned int out = i == 1 ? state->output.y : i == 2 ? state->output.z : i == 3 ? state->output.w : state->output.x;
    if (state->STATE == 4) {
        __cc_philox_next(state);
        state->output = __cc_philox(state->ctr, state->key);
        state->STATE = 0;
    }
    return out;
}
static inline uint4 __cc_curand4(curandStatePhilox4_32_10* state) {
    uint4 was = state->output;
    __cc_philox_next(state);
    state->output = __cc_philox(state->ctr, state->key);
    const uint4& now = state->output;
    switch (state->STATE) {
        case 1: return {was.y, was.z, was.w, now.x};
        case 2: return {was.z, was.w, now.x, now.y};
        case 3: return {was.w, now.x, now.y, now.z};
        default: return was;
    }
}

// The distributions, as cuRAND computes them from the 32-bit numbers.
static inline float __cc_curand_float(unsigned int x) { return x * CURAND_2POW32_INV + (CURAND_2POW32_INV / 2.0f); }
static inline double __cc_curand_double(unsigned int x, unsigned int y) {
    unsigned long long z = (unsigned long long)x ^ ((unsigned long long)y << (53 - 32));
    return z * CURAND_2POW53_INV_DOUBLE + (CURAND_2POW53_INV_DOUBLE / 2.0);
}
static inline float2 __cc_box_muller(unsigned int x, unsigned int y) {
    float v = y * CURAND_2POW32_INV_2PI + (CURAND_2POW32_INV_2PI / 2);
    float s = sqrtf(-2.0f * logf(__cc_curand_float(x)));
    float2 r;
    __sincosf(v, &r.x, &r.y);
    r.x *= s, r.y *= s;
    return r;
}
static inline double2 __cc_box_muller_double(unsigned int x0, unsigned int x1, unsigned int y0, unsigned int y1) {
    double u = __cc_curand_double(x0, x1);
    unsigned long long zy = (unsigned long long)y0 ^ ((unsigned long long)y1 << (53 - 32));
    double v = zy * (CURAND_2POW53_INV_DOUBLE * 2.0) + CURAND_2POW53_INV_DOUBLE;
    double s = sqrt(-2.0 * log(u));
    double2 r;
    sincospi(v, &r.x, &r.y);
    r.x *= s, r.y *= s;
    return r;
}

// A state whose numbers are all zero was never set up by curand_init (none that it sets up is, nor
// becomes so): on a GPU every thread drawing from such a state gets the same numbers.
static inline bool __cc_rng_blank(const curandStateXORWOW* s) { return !(s->v[0] | s->v[1] | s->v[2] | s->v[3] | s->v[4]); }
static inline bool __cc_rng_blank(const curandStatePhilox4_32_10* s) {
    return !(s->ctr.x | s->ctr.y | s->ctr.z | s->ctr.w | s->key.x | s->key.y | s->output.x | s->output.y | s->output.z |
             s->output.w);
}
// The state a call draws from (set_up) or curand_init sets up (!set_up). It comes as a pointer: a
// checked one (states + i, or &states[i]) is checked here, and the sanitizer sees the generator
// read and write it (two threads drawing from one state in global or shared memory is a race, as
// on a GPU), or curand_init write it.
template <class S> __attribute__((always_inline)) static inline S* __cc_rng(S* state, int line, bool set_up = true) {
    if (__cc_sanitizing) {
        if (set_up) __cc_rw(*state);
        else __cc_note(state, sizeof *state, __CC_WRITE);
    }
    if (set_up && __cc_rng_blank(state)) __cc_fail(__CC_RNG_NOT_SET_UP, line);
    return state;
}
template <class S> static inline S* __cc_rng(const __cc_ptr<S>& state, int line, bool set_up = true) {
    state.check(0);
    return __cc_rng(state.p, line, set_up);
}
template <class S> static inline S* __cc_rng(const __cc_view<S>& states, int line, bool set_up = true) {
    return __cc_rng(states.ptr(), line, set_up);  // a __shared__ or local array of states by its name
}
// (see __cc_rng_setup; a race between workers here only delays or drops a warning)
static inline void __cc_note_rng_setup(unsigned long long seed, unsigned long long subsequence,
                                       unsigned long long offset, int line) {
    __cc_rng_setup& r = __cc_rng_first;
    const uint32_t launch = __cc_current_launch;
    const unsigned tid = __cc_linear_tid();
    uint32_t claimed = __atomic_load_n(&r.claimed, __ATOMIC_ACQUIRE);
    if (claimed != launch) {
        if (__atomic_compare_exchange_n(&r.claimed, &claimed, launch, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            r.seed = seed, r.subsequence = subsequence, r.offset = offset, r.line = line;
            r.block = (unsigned)__cc_block_linear, r.tid = tid;
            __atomic_store_n(&r.ready, launch, __ATOMIC_RELEASE);
        }
        return;
    }
    if (__atomic_load_n(&r.ready, __ATOMIC_ACQUIRE) != launch || __atomic_load_n(&r.other_set, __ATOMIC_RELAXED) == launch)
        return;
    if (seed != r.seed || subsequence != r.subsequence || offset != r.offset) return;
    if ((unsigned)__cc_block_linear == r.block && tid == r.tid) return;  // (the same thread again)
    uint32_t other = __atomic_load_n(&r.other_set, __ATOMIC_RELAXED);
    if (other != launch && __atomic_compare_exchange_n(&r.other_set, &other, launch ^ 0x80000000u, false, __ATOMIC_ACQ_REL,
                                                        __ATOMIC_RELAXED)) {
        r.other_block = (unsigned)__cc_block_linear, r.other_tid = tid;
        __atomic_store_n(&r.other_set, launch, __ATOMIC_RELEASE);
    }
}
// (The generators' functions are always inlined: the sanitizer's note of the state's read or write must lie
// in the kernel's code, where it has the kernel's line; at -O1 GCC may leave them out of line.)
#define __CC_RNG_TEMPLATE template <class P, class S = typename std::remove_pointer<decltype(__cc_rng(std::declval<P>(), 0))>::type>
#define __CC_IS_RNG(S) (std::is_same<S, curandStateXORWOW>::value || std::is_same<S, curandStatePhilox4_32_10>::value)
#define __CC_IS_PHILOX(S) std::is_same<S, curandStatePhilox4_32_10>::value

__CC_RNG_TEMPLATE __attribute__((always_inline)) static inline auto curand_init(unsigned long long seed, unsigned long long subsequence,
                                                 unsigned long long offset, const P& state, __CC_LINE)
    -> typename std::enable_if<__CC_IS_RNG(S)>::type {
    __cc_curand_init(seed, subsequence, offset, __cc_rng(state, __cc_line, false));
    __cc_note_rng_setup(seed, subsequence, offset, __cc_line);
}
__CC_RNG_TEMPLATE __attribute__((always_inline)) static inline auto curand(const P& state, __CC_LINE)
    -> typename std::enable_if<__CC_IS_RNG(S), unsigned int>::type {
    return __cc_curand(__cc_rng(state, __cc_line));
}
__CC_RNG_TEMPLATE __attribute__((always_inline)) static inline auto curand4(const P& state, __CC_LINE)
    -> typename std::enable_if<__CC_IS_PHILOX(S), uint4>::type {
    return __cc_curand4(__cc_rng(state, __cc_line));
}
#define __CC_SKIP(NAME) \
    __CC_RNG_TEMPLATE __attribute__((always_inline)) static inline auto NAME(unsigned long long n, const P& state, __CC_LINE) \
        -> typename std::enable_if<__CC_IS_RNG(S)>::type { __cc_##NAME(n, __cc_rng(state, __cc_line)); }
__CC_SKIP(skipahead)
__CC_SKIP(skipahead_sequence)
#undef __CC_SKIP

__CC_RNG_TEMPLATE __attribute__((always_inline)) static inline auto curand_uniform(const P& state, __CC_LINE) -> typename std::enable_if<__CC_IS_RNG(S), float>::type {
    return __cc_curand_float(__cc_curand(__cc_rng(state, __cc_line)));
}
__CC_RNG_TEMPLATE __attribute__((always_inline)) static inline auto curand_uniform_double(const P& state, __CC_LINE)
    -> typename std::enable_if<__CC_IS_RNG(S), double>::type {
    S* s = __cc_rng(state, __cc_line);
    if constexpr (__CC_IS_PHILOX(S)) {
        return __cc_curand(s) * CURAND_2POW32_INV_DOUBLE + CURAND_2POW32_INV_DOUBLE;  // (32 bits, as cuRAND)
    } else {
        unsigned int x = __cc_curand(s);
        unsigned int y = __cc_curand(s);
        return __cc_curand_double(x, y);
    }
}
__CC_RNG_TEMPLATE __attribute__((always_inline)) static inline auto curand_uniform4(const P& state, __CC_LINE) -> typename std::enable_if<__CC_IS_PHILOX(S), float4>::type {
    uint4 x = __cc_curand4(__cc_rng(state, __cc_line));
    return {__cc_curand_float(x.x), __cc_curand_float(x.y), __cc_curand_float(x.z), __cc_curand_float(x.w)};
}
__CC_RNG_TEMPLATE __attribute__((always_inline)) static inline auto curand_uniform2_double(const P& state, __CC_LINE)
    -> typename std::enable_if<__CC_IS_PHILOX(S), double2>::type {
    uint4 x = __cc_curand4(__cc_rng(state, __cc_line));
    return {__cc_curand_double(x.x, x.y), __cc_curand_double(x.z, x.w)};
}
// Normal pairs from a state already checked (the public calls below check theirs once).
template <class S> static inline float2 __cc_normal2(S* s) {
    unsigned int x = __cc_curand(s);
    unsigned int y = __cc_curand(s);
    return __cc_box_muller(x, y);
}
static inline float4 __cc_normal4(curandStatePhilox4_32_10* s) {
    uint4 x = __cc_curand4(s);
    float2 a = __cc_box_muller(x.x, x.y), b = __cc_box_muller(x.z, x.w);
    return {a.x, a.y, b.x, b.y};
}
template <class S> static inline double2 __cc_normal2_double(S* s) {
    if constexpr (__CC_IS_PHILOX(S)) {
        uint4 x = __cc_curand4(s);
        return __cc_box_muller_double(x.x, x.y, x.z, x.w);
    } else {
        unsigned int x0 = __cc_curand(s);
        unsigned int x1 = __cc_curand(s);
        unsigned int y0 = __cc_curand(s);
        unsigned int y1 = __cc_curand(s);
        return __cc_box_muller_double(x0, x1, y0, y1);
    }
}
__CC_RNG_TEMPLATE __attribute__((always_inline)) static inline auto curand_normal2(const P& state, __CC_LINE) -> typename std::enable_if<__CC_IS_RNG(S), float2>::type {
    return __cc_normal2(__cc_rng(state, __cc_line));
}
__CC_RNG_TEMPLATE __attribute__((always_inline)) static inline auto curand_normal4(const P& state, __CC_LINE) -> typename std::enable_if<__CC_IS_PHILOX(S), float4>::type {
    return __cc_normal4(__cc_rng(state, __cc_line));
}
__CC_RNG_TEMPLATE __attribute__((always_inline)) static inline auto curand_normal2_double(const P& state, __CC_LINE)
    -> typename std::enable_if<__CC_IS_RNG(S), double2>::type {
    return __cc_normal2_double(__cc_rng(state, __cc_line));
}
// curand_normal and curand_log_normal make two numbers and keep the second for the next call
// (boxmuller_flag says which kind it keeps; the float and double versions keep theirs apart).
template <bool Double, class S, class Pair> static inline auto __cc_one_of_two(S* s, int kind, Pair pair) {
    int& flag = Double ? s->boxmuller_flag_double : s->boxmuller_flag;
    auto& extra = *[s] {
        if constexpr (Double) return &s->boxmuller_extra_double;
        else return &s->boxmuller_extra;
    }();
    if (flag != kind) {
        auto v = pair();
        extra = v.y, flag = kind;
        return v.x;
    }
    flag = 0;
    return extra;
}
static inline float2 __cc_log_normal(float2 v, float mean, float stddev) {
    return {expf(mean + (stddev * v.x)), expf(mean + (stddev * v.y))};
}
static inline double2 __cc_log_normal(double2 v, double mean, double stddev) {
    return {exp(mean + (stddev * v.x)), exp(mean + (stddev * v.y))};
}
__CC_RNG_TEMPLATE __attribute__((always_inline)) static inline auto curand_normal(const P& state, __CC_LINE) -> typename std::enable_if<__CC_IS_RNG(S), float>::type {
    S* s = __cc_rng(state, __cc_line);
    return __cc_one_of_two<false>(s, EXTRA_FLAG_NORMAL, [&] { return __cc_normal2(s); });
}
__CC_RNG_TEMPLATE __attribute__((always_inline)) static inline auto curand_normal_double(const P& state, __CC_LINE)
    -> typename std::enable_if<__CC_IS_RNG(S), double>::type {
    S* s = __cc_rng(state, __cc_line);
    return __cc_one_of_two<true>(s, EXTRA_FLAG_NORMAL, [&] { return __cc_normal2_double(s); });
}
__CC_RNG_TEMPLATE __attribute__((always_inline)) static inline auto curand_log_normal(const P& state, float mean, float stddev, __CC_LINE)
    -> typename std::enable_if<__CC_IS_RNG(S), float>::type {
    S* s = __cc_rng(state, __cc_line);
    return __cc_one_of_two<false>(s, EXTRA_FLAG_LOG_NORMAL,
                                  [&] { return __cc_log_normal(__cc_normal2(s), mean, stddev); });
}
__CC_RNG_TEMPLATE __attribute__((always_inline)) static inline auto curand_log_normal_double(const P& state, double mean, double stddev, __CC_LINE)
    -> typename std::enable_if<__CC_IS_RNG(S), double>::type {
    S* s = __cc_rng(state, __cc_line);
    return __cc_one_of_two<true>(s, EXTRA_FLAG_LOG_NORMAL,
                                  [&] { return __cc_log_normal(__cc_normal2_double(s), mean, stddev); });
}
__CC_RNG_TEMPLATE __attribute__((always_inline)) static inline auto curand_log_normal2(const P& state, float mean, float stddev, __CC_LINE)
    -> typename std::enable_if<__CC_IS_RNG(S), float2>::type {
    return __cc_log_normal(__cc_normal2(__cc_rng(state, __cc_line)), mean, stddev);
}
__CC_RNG_TEMPLATE __attribute__((always_inline)) static inline auto curand_log_normal4(const P& state, float mean, float stddev, __CC_LINE)
    -> typename std::enable_if<__CC_IS_PHILOX(S), float4>::type {
    float4 v = __cc_normal4(__cc_rng(state, __cc_line));
    float2 a = __cc_log_normal(make_float2(v.x, v.y), mean, stddev), b = __cc_log_normal(make_float2(v.z, v.w), mean, stddev);
    return {a.x, a.y, b.x, b.y};
}
__CC_RNG_TEMPLATE __attribute__((always_inline)) static inline auto curand_log_normal2_double(const P& state, double mean, double stddev, __CC_LINE)
    -> typename std::enable_if<__CC_IS_RNG(S), double2>::type {
    return __cc_log_normal(__cc_normal2_double(__cc_rng(state, __cc_line)), mean, stddev);
}
#undef __CC_RNG_TEMPLATE
#undef __CC_IS_RNG
#undef __CC_IS_PHILOX
#undef __CC_IF_XORWOW

// Undefined behaviour that a GPU and a CPU resolve differently, found by GCC's (or clang's)
// -fsanitize=shift-exponent,float-cast-overflow (cpu.py's _platform_flags): the compiler calls these
// handlers (the names and data layout of UBSan's runtime, which is not linked) where `x << n` has n
// outside 0..width-1 (a GPU's shift clamps n: 1u << 32 is 0 there, 1 on x86), and where a float
// converted to an integer type does not fit (a GPU saturates: (unsigned char)300.0f is 255 there,
// 44 on x86; NaN gives 0 there). The fault names the types (text "left|right") and the values.
struct __cc_ubsan_location { const char* file; uint32_t line, column; };
struct __cc_ubsan_type { uint16_t kind, info; char name[1]; };  // kind 0 integer, 1 float; name quoted
__CC_RT void __cc_ubsan_fail(int kind, const void* data, const void* value, const void* other, const void* pc) {
    const __cc_ubsan_type* const* types = (const __cc_ubsan_type* const*)((const char*)data + sizeof(__cc_ubsan_location));
    if (!__cc_launching || !__cc_me) __builtin_trap();  // (runtime.h's own code outside a launch: never)
    // A value just read from shared memory no thread wrote (a copy not stored yet) is the cause:
    // its poison pattern (a NaN, -1) is what does not fit. That read is reported first (__cc_fail).
    __cc_copy_was_used();
    __cc_fault* f = __cc_fault_out;
    snprintf(f->text, sizeof f->text, "%s|%s", types[0]->name, types[1]->name);
    f->op = types[0]->kind;
    f->other_op = types[0]->info;          // (integer: bit 0 signed, the rest log2 of the bits; float: the bits)
    f->element_bytes = types[1]->info;     // the count's type (shift), the integer type (conversion)
    f->base = (uint64_t)(uintptr_t)value;  // the value, or the count (shift) or the float's bits
    f->address = (uint64_t)(uintptr_t)other;
    f->code_offset = __cc_code_offset(pc);
    __cc_fail(kind, 0);
}
// A sanitized build compiles these checks recoverable (cpu.py: -fsanitize-recover): where the value that
// does not fit is likely the fill of a shared element read before any thread wrote it (that read is pending,
// __cc_note_shared), the thread goes on with the CPU's result, so that the rest of the block shows what the
// read was: a race, if another thread writes the element before the next barrier (the missing
// __syncthreads(): CUDA by Example's shared bitmap converts it to unsigned char at once), else the
// unwritten read, reported at the barrier or at the block's end. Any other value stops the kernel as before.
static inline bool __cc_ubsan_goes_on() {
    if (__cc_launching && __cc_me && __cc_sanitizing) {
        if (__cc_shared_races_go()) return true;  // (the reruns that show a race's effect run to the end, garbage and all)
        __cc_copy_was_used();
        if (__cc_pending_set) {
            __cc_garbage_used = true;
            return true;
        }
    }
    return false;
}
__CC_RT void __cc_ubsan_recover(int kind, const void* data, const void* value, const void* other, const void* pc) {
    if (!__cc_ubsan_goes_on()) __cc_ubsan_fail(kind, data, value, other, pc);
}
// An integer division or remainder by zero that the compiler would not leave to the CPU's trap (`1 / d`, which
// GCC computes without dividing): reported as the trap would be (cpu.py's SIGFPE message).
__CC_RT void __cc_ubsan_divide(bool recover, const void* pc) {
    if (!__cc_launching || !__cc_me) __builtin_trap();
    if (recover && __cc_ubsan_goes_on()) return;  // (as __cc_ubsan_recover: a divisor read from unwritten shared memory)
    __cc_fault* f = __cc_fault_out;
    f->signal = SIGFPE;
    f->op = 9;  // (found by the check, not by the trap: cpu.py says it is a division by zero)
    f->code_offset = __cc_code_offset(pc);
    __cc_fail(__CC_SIGNAL, 0);
}
// A thread that reached __builtin_unreachable() or the end of a function that returns a value, with no return
// statement (-fsanitize=unreachable,return): the compiler assumed neither happens, so it stops there.
__CC_RT void __cc_ubsan_stop(int kind, const void* pc) {
    if (!__cc_launching || !__cc_me) __builtin_trap();
    __cc_fault_out->code_offset = __cc_code_offset(pc);
    __cc_fail(kind, 0);
}
#ifndef __CC_WITH_RUNTIME_OBJECT  // (the object's: one definition per module)
extern "C" __attribute__((noreturn, used)) void __ubsan_handle_builtin_unreachable(void* data) {
    (void)data;
    __cc_ubsan_stop(__CC_UNREACHABLE, __builtin_return_address(0));
    __builtin_unreachable();
}
extern "C" __attribute__((noreturn, used)) void __ubsan_handle_missing_return(void* data) {
    (void)data;
    __cc_ubsan_stop(__CC_MISSING_RETURN, __builtin_return_address(0));
    __builtin_unreachable();
}
extern "C" __attribute__((used)) void __ubsan_handle_divrem_overflow(void* data, void* lhs, void* rhs) {
    (void)data, (void)lhs, (void)rhs;
    __cc_ubsan_divide(true, __builtin_return_address(0));
}
extern "C" __attribute__((noreturn, used)) void __ubsan_handle_divrem_overflow_abort(void* data, void* lhs, void* rhs) {
    (void)data, (void)lhs, (void)rhs;
    __cc_ubsan_divide(false, __builtin_return_address(0));
    __builtin_unreachable();
}
extern "C" __attribute__((used)) void __ubsan_handle_shift_out_of_bounds(void* data, void* lhs, void* rhs) {
    __cc_ubsan_recover(__CC_BAD_SHIFT, data, lhs, rhs, __builtin_return_address(0));
}
extern "C" __attribute__((used)) void __ubsan_handle_float_cast_overflow(void* data, void* from) {
    __cc_ubsan_recover(__CC_BAD_CONVERSION, data, from, nullptr, __builtin_return_address(0));
}
extern "C" __attribute__((noreturn, used)) void __ubsan_handle_shift_out_of_bounds_abort(void* data, void* lhs,
                                                                                       void* rhs) {
    __cc_ubsan_fail(__CC_BAD_SHIFT, data, lhs, rhs, __builtin_return_address(0));
    __builtin_unreachable();
}
extern "C" __attribute__((noreturn, used)) void __ubsan_handle_float_cast_overflow_abort(void* data, void* from) {
    __cc_ubsan_fail(__CC_BAD_CONVERSION, data, from, nullptr, __builtin_return_address(0));
    __builtin_unreachable();
}
#endif

// Give back the memory this module keeps between launches (fiber stacks, dynamic shared memory,
// the sanitizer's shadows, the freed blocks in quarantine): Python calls it for a module no longer
// launched (an older version of a kernel being edited, say). The next launch allocates again.
// Blocks that kernels malloc'ed and did not free stay: device memory lives until freed.
__CC_EXPORT __CC_ONCE void __cc_release_memory() {
    for (int k = 0; k < __CC_MAX_WORKERS; k++) {
        __cc_worker* w = &__cc_workers[k];
        if (w->stack_pool) munmap(w->stack_pool, w->stack_pool_bytes);
        free(w->fibers);
        w->stack_pool = nullptr, w->stack_pool_bytes = 0, w->fibers = nullptr, w->fiber_count = 0;
        free(w->dyn_shared);
        w->dyn_shared = nullptr, w->dyn_capacity = 0;
        __cc_release_locals(w);
    }
    for (int i = 0; i < __cc_shared_region_count; i++) free(__cc_shared_regions[i].shadow);
    __cc_shared_region_count = 0;
    pthread_mutex_lock(&__cc_heap_lock);
    for (int i = 0; i < __cc_quarantined; i++) free(__cc_heap_release(__cc_quarantine[i]));
    __cc_quarantined = 0, __cc_quarantine_next = 0, __cc_quarantine_bytes = 0;
    pthread_mutex_unlock(&__cc_heap_lock);
}

// ---------------------------------------------------------------------------------------
// CUB's block- and warp-wide collectives (cub/cub.cuh): BlockReduce, BlockScan and WarpReduce, with
// their TempStorage, and the functors Sum, Max, Min. The kernel declares the storage
// __shared__, as with CUB; here the items meet there, one thread combines them after a barrier (the
// call's line names it), and a reduction's total is valid in thread (lane) 0 only, as CUB's is. As
// with CUB, no barrier follows: storage used again needs __syncthreads() (__syncwarp()) first, and
// without it the sanitizer reports the race on the storage (its reads and writes are noted).
// (source.py lets these through, and runs the kernels that use them with fibers.)
// ---------------------------------------------------------------------------------------
namespace cub {
struct Sum { template <class T> __attribute__((always_inline)) T operator()(const T& a, const T& b) const { return a + b; } };
struct Max { template <class T> __attribute__((always_inline)) T operator()(const T& a, const T& b) const { return a < b ? b : a; } };
struct Min { template <class T> __attribute__((always_inline)) T operator()(const T& a, const T& b) const { return b < a ? b : a; } };
enum BlockReduceAlgorithm { BLOCK_REDUCE_RAKING_COMMUTATIVE_ONLY, BLOCK_REDUCE_RAKING, BLOCK_REDUCE_WARP_REDUCTIONS };
enum BlockScanAlgorithm { BLOCK_SCAN_RAKING, BLOCK_SCAN_RAKING_MEMOIZE, BLOCK_SCAN_WARP_SCANS };

// The items of `threads` threads, and the running results of a scan; `rank`: the caller's among them.
// `sync` meets them (the block's barrier, or the logical warp's __syncwarp).
template <class T, int THREADS>
struct __cc_collective {
    T item[THREADS];
    T result[THREADS];
    // (CUB's storage is one buffer that a call's phases share: a thread that starts the next call writes where the
    // threads still in the last one read their results. The note of a write of the next thread's result slot, which
    // no thread reads before this call's first barrier, makes the sanitizer see that where no barrier comes between
    // two calls, as with CUB: back-to-back BlockScans on one storage race.)
    template <class Sync>
    __attribute__((always_inline)) void put(int rank, const T& value, Sync sync) {
        if (__cc_sanitizing) {
            __cc_note(&item[rank], sizeof(T), __CC_WRITE);
            __cc_note(&result[(rank + 1) % THREADS], sizeof(T), __CC_WRITE);
        }
        item[rank] = value;
        sync();
    }
    // Thread 0 combines items[0, valid) in order; the others keep their own input.
    template <class Op, class Sync>
    __attribute__((always_inline)) T reduce(int rank, const T& input, int valid, Op op, Sync sync) {
        put(rank, input, sync);
        if (rank != 0) return input;
        valid = valid < THREADS ? valid : THREADS;
        if (__cc_sanitizing) __cc_note(item, sizeof(T) * (valid > 0 ? valid : 1), __CC_READ);
        T total = item[0];
        for (int k = 1; k < valid; k++) total = op(total, item[k]);
        return total;
    }
    // An inclusive (or, with `init`, exclusive) scan: thread 0 writes every result, then each reads its own.
    template <class Op, class Sync>
    __attribute__((always_inline)) T scan(int rank, const T& input, Op op, const T* init, T* aggregate, Sync sync) {
        put(rank, input, sync);
        if (rank == 0) {
            if (__cc_sanitizing) __cc_note(item, sizeof item, __CC_READ), __cc_note(result, sizeof result, __CC_WRITE);
            T running = item[0];
            for (int k = 0; k < THREADS; k++) {
                if (k) running = op(running, item[k]);
                result[k] = running;
            }
        }
        sync();
        if (__cc_sanitizing) __cc_note(&result[THREADS - 1], sizeof(T), __CC_READ);
        if (aggregate) *aggregate = result[THREADS - 1];
        if (!init) {
            if (__cc_sanitizing) __cc_note(&result[rank], sizeof(T), __CC_READ);
            return result[rank];
        }
        if (rank == 0) return *init;
        if (__cc_sanitizing) __cc_note(&result[rank - 1], sizeof(T), __CC_READ);
        return op(*init, result[rank - 1]);
    }
    // The scan's result of the threads before the caller (`*has`: there are some; thread 0 has none), and the
    // block's aggregate.
    template <class Op, class Sync>
    __attribute__((always_inline)) T before(int rank, const T& input, Op op, T* aggregate, bool* has, Sync sync) {
        scan(rank, input, op, nullptr, aggregate, sync);
        *has = rank > 0;
        if (rank == 0) return input;
        if (__cc_sanitizing) __cc_note(&result[rank - 1], sizeof(T), __CC_READ);
        return result[rank - 1];
    }
    // What thread 0 gives, for every thread (a block prefix callback's value: CUB uses lane 0's). (After a
    // scan: its sync ordered every thread's item[] before thread 0 writes item[0] again.)
    template <class Sync>
    __attribute__((always_inline)) T broadcast(int rank, const T& value, Sync sync) {
        if (rank == 0) {
            if (__cc_sanitizing) __cc_note(&item[0], sizeof(T), __CC_WRITE);
            item[0] = value;
        }
        sync();
        if (__cc_sanitizing) __cc_note(&item[0], sizeof(T), __CC_READ);
        return item[0];
    }
};

// A thread's items (ITEMS_PER_THREAD of them) in a local array, `T (&items)[N]`, or the checked view of one
// that the CPU backend makes of it; and a block prefix callback (any type but the items').
template <class X> struct __cc_is_items : std::is_array<X> {};
template <class A> struct __cc_is_items<__cc_array_view<A>> : std::true_type {};
#define __CC_ITEMS(X) class X, class = typename std::enable_if<__cc_is_items<typename std::decay<X>::type>::value || \
    std::is_array<typename std::remove_reference<X>::type>::value>::type
template <class X> static constexpr int __cc_items_count() {
    typedef typename std::remove_cv<typename std::remove_reference<X>::type>::type D;
    if constexpr (std::is_array<D>::value) return (int)std::extent<D>::value;
    else return (int)D::N;
}
#define __CC_CALLBACK(P, T) class P, class = typename std::enable_if<!std::is_convertible<P&, T&>::value>::type

// A launch whose block (or warp) is not the size the collective was declared for: CUB's results
// would be wrong on a GPU (threads left out, or storage overrun).
#ifdef __CC_WITH_RUNTIME_OBJECT  // (never inlined: the object's)
__attribute__((noreturn, noinline, cold)) void __cc_cub_size_fault(const char* what, int declared, int line);
#else
__attribute__((noreturn, noinline, cold)) __CC_RT void __cc_cub_size_fault(const char* what, int declared, int line) {
    snprintf(__cc_fault_out->text, sizeof __cc_fault_out->text,
             "%s's threads (%d, its template arguments) == the block's threads (%u x %u x %u)", what, declared,
             blockDim.x, blockDim.y, blockDim.z);
    __cc_fail(__CC_ASSERT, line);
}
#endif

// What BlockReduce and BlockScan share: their storage, the call's line, the block's size checked once.
template <class T, int BLOCK_THREADS>
struct __cc_block_collective {
    static constexpr int THREADS = BLOCK_THREADS;
    typedef __cc_collective<T, THREADS> TempStorage;
    TempStorage& s;
    int line;
    __attribute__((always_inline)) __cc_block_collective(TempStorage& storage, int line, const char* what)
        : s(storage), line(line) {
        if ((int)(blockDim.x * blockDim.y * blockDim.z) != THREADS) __cc_cub_size_fault(what, THREADS, line);
    }
    static int rank() { return (int)(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)); }
    auto barrier() const { int at = line; return [at] { __cc_syncthreads(at, 0); }; }
};

template <class T, int BLOCK_DIM_X, BlockReduceAlgorithm ALGORITHM = BLOCK_REDUCE_WARP_REDUCTIONS, int BLOCK_DIM_Y = 1,
          int BLOCK_DIM_Z = 1, int LEGACY_PTX_ARCH = 0>
class BlockReduce : __cc_block_collective<T, BLOCK_DIM_X * BLOCK_DIM_Y * BLOCK_DIM_Z> {
    typedef __cc_block_collective<T, BLOCK_DIM_X * BLOCK_DIM_Y * BLOCK_DIM_Z> Base;
    using Base::THREADS;
public:
    typedef typename Base::TempStorage TempStorage;
    // (the line of the call, `BlockReduce(temp).Sum(v)`: the barrier's)
    __attribute__((always_inline)) BlockReduce(TempStorage& storage, int line = __builtin_LINE())
        : Base(storage, line, "cub::BlockReduce") {}
    template <class Op> __attribute__((always_inline)) T Reduce(T input, Op op) { return run(input, THREADS, op); }
    template <class Op> __attribute__((always_inline)) T Reduce(T input, Op op, int valid) { return run(input, valid, op); }
    template <int N, class Op> __attribute__((always_inline)) T Reduce(T (&inputs)[N], Op op) {
        return run(own(inputs, op), THREADS, op);
    }
    __attribute__((always_inline)) T Sum(T input) { return run(input, THREADS, cub::Sum()); }
    __attribute__((always_inline)) T Sum(T input, int valid) { return run(input, valid, cub::Sum()); }
    template <int N> __attribute__((always_inline)) T Sum(T (&inputs)[N]) { return run(own(inputs, cub::Sum()), THREADS, cub::Sum()); }
    // (a thread's items in a local array, which the CPU backend makes a checked view)
    template <class A, class Op> __attribute__((always_inline)) T Reduce(const __cc_array_view<A>& inputs, Op op) {
        return run(own(inputs, op), THREADS, op);
    }
    template <class A> __attribute__((always_inline)) T Sum(const __cc_array_view<A>& inputs) {
        return run(own(inputs, cub::Sum()), THREADS, cub::Sum());
    }
private:
    template <int N, class Op> static T own(T (&inputs)[N], Op op) { return own(inputs, N, op); }
    template <class A, class Op> static T own(const __cc_array_view<A>& inputs, Op op) {
        return own(inputs, (int)__cc_array_view<A>::N, op);
    }
    template <class Items, class Op> static T own(const Items& inputs, int n, Op op) {  // (a thread's items, combined)
        T v = T(inputs[0]);
        for (int k = 1; k < n; k++) v = op(v, T(inputs[k]));
        return v;
    }
    template <class Op> __attribute__((always_inline)) T run(const T& input, int valid, Op op) {
        return this->s.reduce(Base::rank(), input, valid, op, this->barrier());
    }
};

template <class T, int BLOCK_DIM_X, BlockScanAlgorithm ALGORITHM = BLOCK_SCAN_RAKING, int BLOCK_DIM_Y = 1,
          int BLOCK_DIM_Z = 1, int LEGACY_PTX_ARCH = 0>
class BlockScan : __cc_block_collective<T, BLOCK_DIM_X * BLOCK_DIM_Y * BLOCK_DIM_Z> {
    typedef __cc_block_collective<T, BLOCK_DIM_X * BLOCK_DIM_Y * BLOCK_DIM_Z> Base;
public:
    typedef typename Base::TempStorage TempStorage;
    __attribute__((always_inline)) BlockScan(TempStorage& storage, int line = __builtin_LINE())
        : Base(storage, line, "cub::BlockScan") {}
    __attribute__((always_inline)) void InclusiveSum(T input, T& output) { output = run(input, cub::Sum(), nullptr, nullptr); }
    __attribute__((always_inline)) void InclusiveSum(T input, T& output, T& aggregate) {
        output = run(input, cub::Sum(), nullptr, &aggregate);
    }
    __attribute__((always_inline)) void ExclusiveSum(T input, T& output) {
        T zero = T();
        output = run(input, cub::Sum(), &zero, nullptr);
    }
    __attribute__((always_inline)) void ExclusiveSum(T input, T& output, T& aggregate) {
        T zero = T();
        output = run(input, cub::Sum(), &zero, &aggregate);
    }
    template <class Op> __attribute__((always_inline)) void InclusiveScan(T input, T& output, Op op) {
        output = run(input, op, nullptr, nullptr);
    }
    template <class Op> __attribute__((always_inline)) void InclusiveScan(T input, T& output, Op op, T& aggregate) {
        output = run(input, op, nullptr, &aggregate);
    }
    template <class Op> __attribute__((always_inline)) void ExclusiveScan(T input, T& output, T init, Op op) {
        output = run(input, op, &init, nullptr);
    }
    template <class Op> __attribute__((always_inline)) void ExclusiveScan(T input, T& output, T init, Op op, T& aggregate) {
        output = run(input, op, &init, &aggregate);
    }
    // With a block prefix callback (CUB's way of scanning tile after tile): the first warp's threads call it
    // with the block's aggregate, and what thread 0's call returns goes before every result of the block.
    template <__CC_CALLBACK(P, T)> __attribute__((always_inline)) void InclusiveSum(T input, T& output, P& prefix) {
        one(input, output, false, cub::Sum(), nullptr, &prefix);
    }
    template <__CC_CALLBACK(P, T)> __attribute__((always_inline)) void ExclusiveSum(T input, T& output, P& prefix) {
        one(input, output, true, cub::Sum(), nullptr, &prefix);
    }
    template <class Op, __CC_CALLBACK(P, T)>
    __attribute__((always_inline)) void InclusiveScan(T input, T& output, Op op, P& prefix) {
        one(input, output, false, op, nullptr, &prefix);
    }
    template <class Op, __CC_CALLBACK(P, T)>
    __attribute__((always_inline)) void ExclusiveScan(T input, T& output, Op op, P& prefix) {
        one(input, output, true, op, nullptr, &prefix);
    }
    // ITEMS_PER_THREAD items a thread, in blocked order (`T items[N]`, input and output may be the same array):
    // each thread's own run, then the block's scan of the threads' totals
    template <__CC_ITEMS(In), __CC_ITEMS(Out)> __attribute__((always_inline)) void InclusiveSum(In&& input, Out&& output) {
        items(input, output, false, cub::Sum(), nullptr, nullptr, (__cc_no_prefix*)nullptr);
    }
    template <__CC_ITEMS(In), __CC_ITEMS(Out)>
    __attribute__((always_inline)) void InclusiveSum(In&& input, Out&& output, T& aggregate) {
        items(input, output, false, cub::Sum(), nullptr, &aggregate, (__cc_no_prefix*)nullptr);
    }
    template <__CC_ITEMS(In), __CC_ITEMS(Out), __CC_CALLBACK(P, T)>
    __attribute__((always_inline)) void InclusiveSum(In&& input, Out&& output, P& prefix) {
        items(input, output, false, cub::Sum(), nullptr, nullptr, &prefix);
    }
    template <__CC_ITEMS(In), __CC_ITEMS(Out)> __attribute__((always_inline)) void ExclusiveSum(In&& input, Out&& output) {
        T zero = T();
        items(input, output, true, cub::Sum(), &zero, nullptr, (__cc_no_prefix*)nullptr);
    }
    template <__CC_ITEMS(In), __CC_ITEMS(Out)>
    __attribute__((always_inline)) void ExclusiveSum(In&& input, Out&& output, T& aggregate) {
        T zero = T();
        items(input, output, true, cub::Sum(), &zero, &aggregate, (__cc_no_prefix*)nullptr);
    }
    template <__CC_ITEMS(In), __CC_ITEMS(Out), __CC_CALLBACK(P, T)>
    __attribute__((always_inline)) void ExclusiveSum(In&& input, Out&& output, P& prefix) {
        items(input, output, true, cub::Sum(), nullptr, nullptr, &prefix);
    }
    template <__CC_ITEMS(In), __CC_ITEMS(Out), class Op>
    __attribute__((always_inline)) void InclusiveScan(In&& input, Out&& output, Op op) {
        items(input, output, false, op, nullptr, nullptr, (__cc_no_prefix*)nullptr);
    }
    template <__CC_ITEMS(In), __CC_ITEMS(Out), class Op>
    __attribute__((always_inline)) void InclusiveScan(In&& input, Out&& output, Op op, T& aggregate) {
        items(input, output, false, op, nullptr, &aggregate, (__cc_no_prefix*)nullptr);
    }
    template <__CC_ITEMS(In), __CC_ITEMS(Out), class Op, __CC_CALLBACK(P, T)>
    __attribute__((always_inline)) void InclusiveScan(In&& input, Out&& output, Op op, P& prefix) {
        items(input, output, false, op, nullptr, nullptr, &prefix);
    }
    template <__CC_ITEMS(In), __CC_ITEMS(Out), class Op>
    __attribute__((always_inline)) void ExclusiveScan(In&& input, Out&& output, T init, Op op) {
        items(input, output, true, op, &init, nullptr, (__cc_no_prefix*)nullptr);
    }
    template <__CC_ITEMS(In), __CC_ITEMS(Out), class Op>
    __attribute__((always_inline)) void ExclusiveScan(In&& input, Out&& output, T init, Op op, T& aggregate) {
        items(input, output, true, op, &init, &aggregate, (__cc_no_prefix*)nullptr);
    }
    template <__CC_ITEMS(In), __CC_ITEMS(Out), class Op, __CC_CALLBACK(P, T)>
    __attribute__((always_inline)) void ExclusiveScan(In&& input, Out&& output, Op op, P& prefix) {
        items(input, output, true, op, nullptr, nullptr, &prefix);
    }
private:
    struct __cc_no_prefix {};
    template <class Op> __attribute__((always_inline)) T run(const T& input, Op op, const T* init, T* aggregate) {
        return this->s.scan(Base::rank(), input, op, init, aggregate, this->barrier());
    }
    template <class Op, class P>
    __attribute__((always_inline)) void one(T input, T& output, bool exclusive, Op op, const T* init, P* prefix) {
        T in[1] = {input}, out[1];
        items(in, out, exclusive, op, init, nullptr, prefix);
        output = out[0];
    }
    // `init`: what goes before the first item (an exclusive scan's initial value); `prefix`: a callback for it
    template <class In, class Out, class Op, class P>
    __attribute__((always_inline)) void items(const In& input, Out&& output, bool exclusive, Op op, const T* init,
                                              T* aggregate, P* prefix) {
        const int N = __cc_items_count<In>();
        T items[N];  // (read first: the output may be the input's array)
        for (int k = 0; k < N; k++) items[k] = T(input[k]);
        T total = items[0];
        for (int k = 1; k < N; k++) total = op(total, items[k]);
        T all;
        bool has;
        const int rank = Base::rank();
        T before = this->s.before(rank, total, op, &all, &has, this->barrier());  // (the threads before this one)
        if (aggregate) *aggregate = all;
        T running = before;
        bool empty = !has;
        if constexpr (!std::is_same<P, __cc_no_prefix>::value) {
            T mine = rank < 32 ? T((*prefix)(all)) : T();
            T first = this->s.broadcast(rank, mine, this->barrier());
            running = has ? op(first, before) : first, empty = false;
        } else if (init) {
            running = has ? op(*init, before) : *init, empty = false;
        }
        for (int k = 0; k < N; k++) {
            if (exclusive) output[k] = empty ? T() : running;
            running = empty ? items[k] : op(running, items[k]);
            empty = false;
            if (!exclusive) output[k] = running;
        }
    }
};

template <class T, int LOGICAL_WARP_THREADS = 32, int LEGACY_PTX_ARCH = 0>
class WarpReduce {
public:
    typedef __cc_collective<T, LOGICAL_WARP_THREADS> TempStorage;
    __attribute__((always_inline)) WarpReduce(TempStorage& storage, int line = __builtin_LINE()) : s(storage), line(line) {}
    template <class Op> __attribute__((always_inline)) T Reduce(T input, Op op) { return run(input, LOGICAL_WARP_THREADS, op); }
    template <class Op> __attribute__((always_inline)) T Reduce(T input, Op op, int valid) { return run(input, valid, op); }
    __attribute__((always_inline)) T Sum(T input) { return run(input, LOGICAL_WARP_THREADS, cub::Sum()); }
    __attribute__((always_inline)) T Sum(T input, int valid) { return run(input, valid, cub::Sum()); }
private:
    TempStorage& s;
    int line;
    template <class Op> __attribute__((always_inline)) T run(const T& input, int valid, Op op) {
        static_assert(LOGICAL_WARP_THREADS > 0 && LOGICAL_WARP_THREADS <= 32 &&
                      (LOGICAL_WARP_THREADS & (LOGICAL_WARP_THREADS - 1)) == 0,
                      "cub::WarpReduce's LOGICAL_WARP_THREADS is a power of two up to 32");
        unsigned lane = (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) % 32;
        unsigned first = lane / LOGICAL_WARP_THREADS * LOGICAL_WARP_THREADS;
        unsigned mask = (LOGICAL_WARP_THREADS == 32 ? 0xffffffffu : ((1u << LOGICAL_WARP_THREADS) - 1)) << first;
        return s.reduce((int)(lane - first), input, valid, op, [this, mask] { __syncwarp(mask, line); });
    }
};
}  // namespace cub

// ---------------------------------------------------------------------------------------
// Last, so that nothing above is affected
// ---------------------------------------------------------------------------------------

#define __syncthreads() __cc_syncthreads(__LINE__, 0)
#define __syncthreads_count(p) __cc_syncthreads(__LINE__, (p))
#define __syncthreads_and(p) (__cc_syncthreads(__LINE__, (p)) == __cc_me->barrier_waiting)  // (not the returned)
#define __syncthreads_or(p) (__cc_syncthreads(__LINE__, (p)) != 0)
// printf's arguments as C's `...` takes them: the emulator's checked pointers and array views (a
// `const char*` parameter for %s, a local or __shared__ array, %p of an argument) as the plain
// pointers they stand for; a struct passed whole would shift every argument after it.
template <class T> static inline auto __cc_printf_arg(const T& v) {
    if constexpr (std::is_class<T>::value && std::is_convertible<const T&, const volatile void*>::value)
        return (const volatile void*)v;
    else
        return v;
}
// What each of printf's arguments is, as `...` passes it (a float as a double, a char as an int):
// 'i' an integer of 4 bytes or fewer, 'l' one of 8 (long long, size_t), 'f' a floating-point
// number, 'c' a char pointer, 'p' another pointer, 'v' a pointer whose element type is not known
// here (an array view), 'h' a __half or __nv_bfloat16, 'H' a pair of them (__half2), 'V' a vector
// type (float2, uint3: threadIdx), '?' anything else (a struct).
template <class T> struct __cc_printf_pointee { typedef void type; static constexpr bool known = false; };
template <class T> struct __cc_printf_pointee<T*> { typedef T type; static constexpr bool known = true; };
template <class T> struct __cc_printf_pointee<__cc_ptr<T>> { typedef T type; static constexpr bool known = true; };
template <class T, class A> constexpr char __cc_printf_kind() {
    using U = typename std::decay<T>::type;
    using P = __cc_printf_pointee<typename std::decay<A>::type>;
    using E = typename std::remove_cv<typename P::type>::type;
    constexpr bool text = std::is_same<E, char>::value || std::is_same<E, signed char>::value ||
                          std::is_same<E, unsigned char>::value;
    return std::is_integral<U>::value || std::is_enum<U>::value ? (sizeof(U) > 4 ? 'l' : 'i')
         : std::is_floating_point<U>::value ? 'f'
         : std::is_null_pointer<U>::value ? 'p'
         : std::is_pointer<U>::value ? (!P::known ? 'v' : text ? 'c' : 'p')
         : __cc_narrow_float<U>::lane ? (sizeof(U) == __cc_narrow_float<U>::lane ? 'h' : 'H')
         : !std::is_void<typename __cc_lane_of<U>::type>::value ? 'V' : '?';
}
// The format's conversions against the arguments' kinds: one that takes another kind of value (%d
// of a float, %f of an int, %s of a number) or a value the call does not pass stops the kernel
// (runtime.h's __CC_BAD_PRINTF; cpu.py says it in words): a GPU would print a meaningless number,
// shift the values after it, or read a number as a string's address; so does an integer of the
// other size (%d of a long long, %lld of an int) and a pointer to numbers for %s, and a struct (a
// __half, a float2, threadIdx) for any conversion: printf has none for them (nvcc warns, and prints
// garbage). What follows an argument of another kind of struct is not checked.
// Returns which values %s prints (bit k: value k), for __cc_printf_string.
#ifdef __CC_WITH_RUNTIME_OBJECT  // (never inlined: the object's)
__attribute__((noinline)) unsigned long long __cc_printf_check(const char* format, const char* kinds, int count);
#else
__attribute__((noinline)) __CC_RT unsigned long long __cc_printf_check(const char* format, const char* kinds, int count) {
    if (count > 32) {  // CUDA's printf takes at most 32 values: the rest are left out, their conversions printed as written
        __cc_fault* f = __cc_fault_out;
        snprintf(f->text, sizeof f->text, "m|-|");
        f->index = 33;
        f->count = count;
        f->code_offset = __cc_code_offset(__builtin_return_address(0));
        __cc_fail(__CC_BAD_PRINTF, 0);
    }
    if (!format || strchr(format, '$')) return 0;  // (positional arguments, `%1$d`: not checked)
    int next = 0;
    unsigned long long strings = 0;
    for (const char* c = format; *c; c++) {
        if (*c != '%') continue;
        const char* start = c++;
        if (*c == '%') continue;
        char want[3] = {0, 0, 0};  // a `*` width, a `*` precision ('*': an int), then the conversion's value
        int wanted = 0;
        while (*c && strchr("-+ #0'", *c)) c++;
        if (*c == '*') want[wanted++] = '*', c++;
        while (*c >= '0' && *c <= '9') c++;
        bool precise = *c == '.';  // (`%.5s` reads at most 5 bytes: no zero byte needed)
        if (*c == '.') {
            c++;
            if (*c == '*') want[wanted++] = '*', c++;
            while (*c >= '0' && *c <= '9') c++;
        }
        int longs = 0;  // l, ll: long (its size here, as on the GPU of a Linux host), long long
        bool wide = false;  // q, j, z, t: 8 bytes
        bool extended = false;  // L: a long double, which device code does not have
        while (*c && strchr("hlLqjzZt", *c))
            longs += *c == 'l', wide |= strchr("qjzZt", *c) != nullptr, extended |= *c == 'L', c++;
        if (!*c) break;
        char conversion = *c;
        if (conversion == 'n' || (extended && strchr("eEfFgGaA", conversion))) {
            // (C's %n writes the count through its argument: CUDA's printf has no %n; nor %Lf: no long double)
            __cc_fault* f = __cc_fault_out;
            int length = (int)(c - start + 1);
            snprintf(f->text, sizeof f->text, "%c|%c|%.*s", conversion == 'n' ? 'n' : 'L', conversion == 'n' ? 'n' : 'L',
                     length > 60 ? 60 : length, start);
            f->index = next + wanted + 1;
            f->count = count;
            f->code_offset = __cc_code_offset(__builtin_return_address(0));
            __cc_fail(__CC_BAD_PRINTF, 0);
        }
        bool eight = wide || longs >= 2 || (longs == 1 && sizeof(long) == 8);
        want[wanted++] = strchr("diouxX", conversion) ? (eight ? 'l' : 'i') : conversion == 'c' ? 'i'
                       : strchr("eEfFgGaA", conversion) ? 'f' : conversion == 's' ? 's' : conversion == 'p' ? 'p' : 0;
        if (!want[wanted - 1]) wanted--;  // (another conversion: printed as it is, takes nothing but its `*`s)
        for (int k = 0; k < wanted; k++, next++) {
            char got = next < count ? kinds[next] : '-';
            if (got == '?') return strings;  // a struct: where the values after it go is not known here
            bool structure = got == 'h' || got == 'H' || got == 'V';  // (CUDA's own: no conversion prints them)
            if (want[k] == 's' && !precise && next < 64) strings |= 1ull << next;
            bool pointer = got == 'p' || got == 'c' || got == 'v';
            bool bad = got == '-' || structure || (want[k] == '*' && (got == 'f' || pointer)) ||
                       (want[k] == 'i' && got != 'i') || (want[k] == 'l' && (got == 'i' || got == 'f')) ||
                       (want[k] == 'f' && got != 'f') || (want[k] == 's' && got != 'c' && got != 'v') ||
                       (want[k] == 'p' && (got == 'f' || got == 'i'));
            if (!bad) continue;
            __cc_fault* f = __cc_fault_out;
            int length = (int)(c - start + 1);
            snprintf(f->text, sizeof f->text, "%c|%c|%.*s", want[k], got, length > 60 ? 60 : length, start);
            f->index = next + 1;  // which value, counting from the first after the format
            f->count = count;
            f->code_offset = __cc_code_offset(__builtin_return_address(0));
            __cc_fail(__CC_BAD_PRINTF, 0);
        }
    }
    return strings;
}
#endif
// %s of a checked pointer or an array view of chars: the string must end (a zero byte) inside its array,
// or printf reads past the array's end, on a GPU as here (a char array from the host without its '\0'):
// each byte up to the zero is checked as an access is, so the fault names the array and its length.
template <class T> struct __cc_printf_text : std::false_type {};
template <class C> struct __cc_printf_text<__cc_ptr<C>> : std::integral_constant<bool, sizeof(C) == 1 && !std::is_void<C>::value> {};
template <class C> struct __cc_printf_text<__cc_view<C>> : std::integral_constant<bool, sizeof(C) == 1> {};
template <class A> struct __cc_printf_text<__cc_array_view<A>>
    : std::integral_constant<bool, sizeof(typename std::remove_extent<A>::type) == 1> {};
template <class T> __attribute__((always_inline)) static inline void __cc_printf_string(const T& v, bool printed) {
    if constexpr (__cc_printf_text<typename std::remove_cv<T>::type>::value) {
        if (!printed || v.p == nullptr) return;
        for (long long k = 0;; k++) {
            v.check(k);
            if (v.p[k] == 0) return;
        }
    } else {
        (void)v, (void)printed;
    }
}
template <class... A> __attribute__((always_inline)) static inline int __cc_printf_values(const char* format, A... values) {
    static constexpr char kinds[] = {__cc_printf_kind<decltype(__cc_printf_arg(values)), A>()..., 0};
    unsigned long long strings = __cc_printf_check(format, kinds, (int)sizeof...(A));
    if (strings) {
        int k = 0;
        (__cc_printf_string(values, k < 64 && ((strings >> k++) & 1)), ...);
    }
    // (a GPU's printf returns the number of arguments after the format, not of characters printed)
    return __cc_printf(format, __cc_printf_arg(values)...) < 0 ? -2 : (int)sizeof...(A);
}
// (`line`: a stop that comes anywhere inside, the format's check included, names the call's line)
template <class... A> __attribute__((always_inline)) static inline int __cc_printf_at(int line, const char* format, A... values) {
    __cc_me->call_line = line;
    int n = __cc_printf_values(format, values...);
    __cc_me->call_line = 0;
    return n;
}
// (source.py writes a call in a kernel's body as __cc_printf_at(__LINE__, ...); the macro serves the rest,
// a kernel's own declaration of printf included)
#define printf(...) __cc_printf_values(__VA_ARGS__)
// memset/memcpy in a kernel write (and read) memory too: n bytes from a checked pointer must lie
// inside its array (the fault names the last element they reach), and the sanitizer hears of it.
template <class P, class = typename std::enable_if<!__cc_is_checked<P>::value>::type>
__attribute__((always_inline)) static inline void __cc_check_span(const P&, size_t) {}  // a raw pointer
template <class T>
__attribute__((always_inline)) static inline void __cc_check_span(const __cc_ptr<T>& p, size_t n) {
    if (!n || p.count == SIZE_MAX || !p.array) return;
    size_t size = __cc_ptr<T>::__cc_size, bytes = p.bytes();
    size_t start = (size_t)((const char*)p.p - (const char*)p.array);
    if (__builtin_expect(start > bytes || n > bytes - start, 0)) {  // (the first element past the end that it reaches)
        size_t first = (start > bytes ? start : bytes) / size;
        __cc_out_of_bounds(p.array, (long long)first, (long long)p.count, (long long)size, (const char*)p.array + first * size);
    }
}
template <class E>
__attribute__((always_inline)) static inline void __cc_check_span(const __cc_view<E>& v, size_t n) {
    __cc_check_span(v.ptr(), n);
}
template <class T>
__attribute__((always_inline)) static inline void __cc_check_span(const __cc_dynamic_shared<T>& d, size_t n) {
    __cc_check_span(d.get(), n);
}
template <class D>
__attribute__((always_inline)) static inline void* __cc_memset(const D& d, int v, size_t n) {
    __cc_check_span(d, n);
    void* to = (void*)(d);
    if (__cc_sanitizing && n) __cc_note(to, n, __CC_WRITE);
    return memset(to, v, n);
}
template <class D, class S>
__attribute__((always_inline)) static inline void* __cc_memcpy(const D& d, const S& s, size_t n) {
    __cc_check_span(s, n);
    __cc_check_span(d, n);
    void* to = (void*)(d);
    const void* from = (const void*)(s);
    if (__cc_sanitizing && n) __cc_note(from, n, __CC_READ), __cc_note(to, n, __CC_WRITE);
    return memcpy(to, from, n);
}
#define memset(d, v, n) __cc_memset((d), (v), (n))
#define memcpy(d, s, n) __cc_memcpy((d), (s), (n))
namespace cooperative_groups {
// cg::memcpy_async (cooperative_groups/memcpy_async.h): the group copies `bytes` bytes from src
// to dst together, and cg::wait / cg::wait_prior<N> wait for the copies and sync the group. Here
// the group's first thread copies at once (checked, and noted for the sanitizer as its write), so
// a read of dst before the wait is a race with that write, as it is with the copy on a GPU.
template <class G, class D, class S, class Bytes>  // (inlined: its notes' sites are the caller's line)
__attribute__((always_inline)) static inline void memcpy_async(const G& g, const D& dst, const S& src, Bytes bytes) {
    if (g.thread_rank() != 0) return;
    const size_t n = (size_t)bytes;
    __cc_memcpy(dst, src, n);
    if (__cc_sanitizing && n) {  // (what no thread may touch until a cg::wait: __cc_async)
        if (__cc_async_count == 16) memmove(__cc_async, __cc_async + 1, sizeof __cc_async - sizeof *__cc_async), __cc_async_count--;
        const char* to = (const char*)(void*)(dst);
        __cc_async[__cc_async_count++] = {to, to + n, __cc_last_site, __cc_tid()};
    }
}
}  // namespace cooperative_groups
// assert, off where NDEBUG is defined where it is used (-DNDEBUG, or `#define NDEBUG` in the source, whose
// #include <cassert> is blanked here): NDEBUG left undefined makes __CC_NDEBUG_IS_NDEBUG (0), defined empty or as 1
// __CC_NDEBUG_IS_ or __CC_NDEBUG_IS_1 (1). Off, the condition is compiled but not evaluated.
#define __CC_NDEBUG_VALUE(x) __CC_NDEBUG_PASTE(x)
#define __CC_NDEBUG_PASTE(x) __CC_NDEBUG_IS_##x
#define __CC_NDEBUG_IS_NDEBUG 0
#define __CC_NDEBUG_IS_ 1
#define __CC_NDEBUG_IS_1 1
#define assert(e) ((__CC_NDEBUG_VALUE(NDEBUG) || (e)) ? (void)0 : __cc_assert_fail(#e, __LINE__))

// ---------------------------------------------------------------------------------------
// The C++ library's math overloads against CUDA's (crt/math_functions.hpp)
// ---------------------------------------------------------------------------------------
// CUDA declares sqrt, pow, ... for float and for double (and pow(float, int), pow(double, int)), with
// no integer overloads: sqrt(n) of an int n is ambiguous for nvcc, while the C++ library makes it
// sqrt((double)n), and its pow(float, int) is a double pow. These templates (more specialized than
// the library's, or, for what CUDA refuses, as specialized: ambiguous) give CUDA's answers.
// (Templates, so that a kernel's own `double sqrt(int)` is preferred, as with nvcc.)
#define __CC_ENABLE_IF(...) typename std::enable_if<(__VA_ARGS__), int>::type = 0
template <class I> struct __cc_int_promoted
    : std::integral_constant<bool, std::is_integral<I>::value && std::is_same<decltype(+I()), int>::value> {};
// pow(float, int): square-and-multiply in float (crt/math_functions.hpp's powif, as NVRTC compiles it:
// mul.rn.f32 per step, rcp.rn of the product for a negative exponent); pow(double, int) the same in double.
template <class T> static inline T __cc_powi(T x, int n) {
    unsigned int m = n < 0 ? 0u - (unsigned int)n : (unsigned int)n;
    T r = 1, b = x;
    for (;;) {
        if (m & 1u) r = r * b;
        m >>= 1;
        if (m == 0) break;
        b = b * b;
    }
    return n < 0 ? (T)1 / r : r;
}
template <class I, __CC_ENABLE_IF(__cc_int_promoted<I>::value)>
static inline float pow(float x, I n) { return __cc_powi<float>(x, (int)n); }
template <class I, __CC_ENABLE_IF(__cc_int_promoted<I>::value)>
static inline double pow(double x, I n) { return __cc_powi<double>(x, (int)n); }
template <class I, __CC_ENABLE_IF(std::is_integral<I>::value && !__cc_int_promoted<I>::value)>
void pow(float, I) = delete;  // (pow(float, float) or pow(float, int)?)
template <class I, __CC_ENABLE_IF(std::is_integral<I>::value && !__cc_int_promoted<I>::value)>
void pow(double, I) = delete;
// f(float, int) is f(float, float), f(int, double) f(double, double); f(int, int), f(float, double) and
// f(double, float) are ambiguous.
#define __CC_BINARY_MATH(NAME) \
    template <class I, __CC_ENABLE_IF(std::is_integral<I>::value)> \
    static inline float NAME(I a, float b) { return NAME((float)a, b); } \
    template <class I, __CC_ENABLE_IF(std::is_integral<I>::value)> \
    static inline double NAME(I a, double b) { return NAME((double)a, b); } \
    template <class A, class B, __CC_ENABLE_IF(std::is_integral<A>::value && std::is_integral<B>::value)> \
    void NAME(A, B) = delete; \
    template <class D, __CC_ENABLE_IF(std::is_same<D, double>::value)> void NAME(float, D) = delete; \
    template <class D, __CC_ENABLE_IF(std::is_same<D, double>::value)> void NAME(D, float) = delete;
#define __CC_BINARY_MATH_INTEGER_SECOND(NAME) \
    template <class I, __CC_ENABLE_IF(std::is_integral<I>::value)> \
    static inline float NAME(float a, I b) { return NAME(a, (float)b); } \
    template <class I, __CC_ENABLE_IF(std::is_integral<I>::value)> \
    static inline double NAME(double a, I b) { return NAME(a, (double)b); }
__CC_BINARY_MATH(pow)
__CC_BINARY_MATH(atan2) __CC_BINARY_MATH_INTEGER_SECOND(atan2)
__CC_BINARY_MATH(fmod) __CC_BINARY_MATH_INTEGER_SECOND(fmod)
__CC_BINARY_MATH(hypot) __CC_BINARY_MATH_INTEGER_SECOND(hypot)
__CC_BINARY_MATH(fmin) __CC_BINARY_MATH_INTEGER_SECOND(fmin)
__CC_BINARY_MATH(fmax) __CC_BINARY_MATH_INTEGER_SECOND(fmax)
__CC_BINARY_MATH(fdim) __CC_BINARY_MATH_INTEGER_SECOND(fdim)
__CC_BINARY_MATH(remainder) __CC_BINARY_MATH_INTEGER_SECOND(remainder)
#undef __CC_BINARY_MATH
#undef __CC_BINARY_MATH_INTEGER_SECOND
#define __CC_NO_INTEGER(NAME) \
    template <class I, __CC_ENABLE_IF(std::is_integral<I>::value)> void NAME(I) = delete;
__CC_NO_INTEGER(sqrt) __CC_NO_INTEGER(cbrt) __CC_NO_INTEGER(fabs) __CC_NO_INTEGER(floor) __CC_NO_INTEGER(ceil)
__CC_NO_INTEGER(trunc) __CC_NO_INTEGER(round) __CC_NO_INTEGER(rint) __CC_NO_INTEGER(nearbyint)
__CC_NO_INTEGER(lround) __CC_NO_INTEGER(llround) __CC_NO_INTEGER(lrint) __CC_NO_INTEGER(llrint)
__CC_NO_INTEGER(exp) __CC_NO_INTEGER(exp2) __CC_NO_INTEGER(expm1) __CC_NO_INTEGER(log) __CC_NO_INTEGER(log2)
__CC_NO_INTEGER(log10) __CC_NO_INTEGER(log1p) __CC_NO_INTEGER(logb) __CC_NO_INTEGER(ilogb)
__CC_NO_INTEGER(sin) __CC_NO_INTEGER(cos) __CC_NO_INTEGER(tan) __CC_NO_INTEGER(asin) __CC_NO_INTEGER(acos)
__CC_NO_INTEGER(atan) __CC_NO_INTEGER(sinh) __CC_NO_INTEGER(cosh) __CC_NO_INTEGER(tanh) __CC_NO_INTEGER(asinh)
__CC_NO_INTEGER(acosh) __CC_NO_INTEGER(atanh) __CC_NO_INTEGER(erf) __CC_NO_INTEGER(erfc) __CC_NO_INTEGER(tgamma)
__CC_NO_INTEGER(lgamma)
#undef __CC_NO_INTEGER
#undef __CC_ENABLE_IF
