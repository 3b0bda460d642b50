"""Named checks for notebook 01 (CUDA basics): one ``check_*`` per exercise.

Each check takes the learner's CUDA C source (a string), launches it the way the exercise says,
on sizes that are not multiples of the block, and compares with NumPy. Kernels always run on
the CPU backend, where out-of-bounds accesses and barriers not every thread reaches are caught;
on a GPU they run on CuPy too (``course.checks.check_kernel``). Some exercises add a rule the
values alone cannot prove on the CPU backend, read from the source: the transpose must go through
a shared tile and write coalesced, the dot product must add into ``result`` atomically, and the
warp-level maximum must use warp shuffles.
"""

from __future__ import annotations

import re

import numpy as np

from course import checks

# ---------------------------------------------------------------------------------------------
# reading a kernel's source


def _strip_comments(source: str) -> str:
    source = re.sub(r"/\*.*?\*/", " ", source, flags=re.S)
    return re.sub(r"//[^\n]*", "", source)


def _normalise(source: str) -> str:
    """The source without comments and with whitespace collapsed (to compare two sources)."""
    return " ".join(_strip_comments(source).split())


def _body(source: str, kernel: str) -> str | None:
    """The body of ``kernel`` (between its braces), comments removed; None if it is not found."""
    text = _strip_comments(source)
    # between __global__ and the name: the return type and any qualifiers or attributes, with their arguments
    # (`void __launch_bounds__(256, 2)`, `__attribute__((noinline)) void`, a line break), never a ; or a brace
    match = re.search(r"__global__\b(?:[^;{}()]|\((?:[^;{}()]|\([^;{}()]*\))*\))*?\b" + re.escape(kernel)
                      + r"\s*\(", text)
    if not match:
        return None
    start = text.find("{", match.end())
    if start < 0:
        return None
    depth = 0
    for i in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return text[start + 1:i]
    return None


def _untouched(source, kernel: str) -> bool:
    """True for a stub: no kernel, or a body with nothing but ``__shared__`` declarations."""
    if not isinstance(source, str) or "__global__" not in source:
        return True
    body = _body(source, kernel)
    if body is None:
        return False  # a kernel we cannot find: let the compiler say what is wrong
    statements = [s.strip() for s in body.split(";") if s.strip()]
    return all(s.startswith("__shared__") for s in statements)


def _not_ready(source, name: str, hints) -> bool | None:
    """The verdict for a stub (not attempted yet) or for a submission that is no CUDA C kernel (Python code,
    a function: ❌ saying what the exercise takes); None when there is a kernel to check."""
    if not _untouched(source, name):
        return None
    checks.register_hints(name, hints)
    return checks.not_a_kernel(name, source, name)


def _xp():
    from course import cuda

    return cuda.xp  # follows the backend check_kernel switches to


def _numpy(array):
    from course import cuda

    return cuda.asnumpy(array)


# ---------------------------------------------------------------------------------------------
# Exercise 1: SAXPY


def run_saxpy(kernel, a, x, y):
    """Launch ``saxpy`` with 256 threads per block and just enough blocks; return y."""
    xp = _xp()
    x_dev, y_dev = xp.asarray(x), xp.asarray(y)
    kernel(((x.size + 255) // 256,), (256,), (np.float32(a), x_dev, y_dev, np.int32(x.size)))
    return _numpy(y_dev)


def check_saxpy(source) -> bool:
    """Exercise 1: ``y = a * x + y`` in place, one thread per element, on n = 1, 255, 256, 257, 1000."""
    name = "saxpy"
    hints = [
        "Each thread handles one element; it works out which one from the three built-in variables "
        "blockIdx.x, blockDim.x and threadIdx.x. The last block has threads with no element.",
        "The element number is (blocks before mine) × (threads per block) + (my number in the block). "
        "Compare it with n before the thread reads x or writes y.",
    ]
    if (verdict := _not_ready(source, name, hints)) is not None:
        return verdict
    rng = np.random.default_rng(1)
    cases = [(a, rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32))
             for a, n in [(2.0, 1), (-1.5, 255), (0.5, 256), (3.0, 257), (2.0, 1000)]]
    return checks.check_kernel(source, name, run_saxpy, lambda a, x, y: np.float32(a) * x + y, cases,
                               name=name, hints=hints)


# ---------------------------------------------------------------------------------------------
# Exercise 2: 2D matrix add


def run_matrix_add(kernel, a, b):
    """Launch ``matrix_add`` with 16 × 16 blocks, x over columns and y over rows; return c."""
    xp = _xp()
    rows, cols = a.shape
    c = xp.zeros((rows, cols), dtype=xp.float32)
    grid = ((cols + 15) // 16, (rows + 15) // 16)
    kernel(grid, (16, 16), (xp.asarray(a), xp.asarray(b), c, np.int32(rows), np.int32(cols)))
    return _numpy(c)


def check_matrix_add(source) -> bool:
    """Exercise 2: ``c = a + b`` on a 2D grid, on shapes (1, 1), (16, 16), (17, 33), (40, 7), (3, 100), (32, 64)."""
    name = "matrix_add"
    hints = [
        "The launch puts x along the columns and y along the rows (the grid is (cols…, rows…)). "
        "A thread needs both its column and its row, and both can run past the edge.",
        "Build the column from the .x built-ins and the row from the .y built-ins, the same way as the "
        "1D index; guard each against its own limit, then turn (row, column) into a row-major offset.",
    ]
    if (verdict := _not_ready(source, name, hints)) is not None:
        return verdict
    rng = np.random.default_rng(2)
    cases = [tuple(rng.standard_normal(shape, dtype=np.float32) for _ in range(2))
             for shape in [(1, 1), (16, 16), (17, 33), (40, 7), (3, 100), (32, 64)]]  # (32, 64): whole blocks
    # c = a + b comes out right whatever the layout (a column-major index is a permutation of the same
    # additions), so the layout shows in the access profile: row-major, a warp's two rows of 16 are coalesced
    broken = _worst_access(source, name, (40, 48), lambda r, c: (np.ones((r, c), np.float32), np.ones((r, c), np.float32),
                                                                  np.zeros((r, c), np.float32), np.int32(r), np.int32(c)))
    if broken is not None:
        broken = (f"{broken[1]}. The matrices are row-major: element (row, col) is at row * cols + col, so that "
                  "threads with neighbouring threadIdx.x (neighbouring columns) touch neighbouring floats")
        return _values_then_rule(source, name, hints, run_matrix_add, lambda a, b: a + b, cases, broken)
    return checks.check_kernel(source, name, run_matrix_add, lambda a, b: a + b, cases, name=name, hints=hints)


def _worst_access(source: str, kernel_name: str, shape, arguments) -> tuple[str, str] | None:
    """In a profiled launch of ``kernel_name`` on a rows × cols problem (16 × 16 blocks, x along the columns,
    ``arguments(rows, cols)`` its arguments), the first global store or load that moves more than 8 sectors per
    request (coalesced 16-float rows: 4): (its kind, described); None when all are coalesced or when the launch
    fails (the values' check then names the fault)."""
    from course import cuda

    rows, cols = shape
    try:
        kernel = cuda.RawKernel(source, kernel_name, backend="cpu")
        profile = kernel.profile(((cols + 15) // 16, (rows + 15) // 16), (16, 16), arguments(rows, cols))
    except Exception:
        return None
    for kind, what in (("global store", "writes"), ("global load", "reads")):
        lines = [s for s in profile.lines if s.kind == kind]
        worst = max(lines, key=lambda s: s.sectors_per_request, default=None)
        if worst is not None and worst.sectors_per_request > 8:
            return kind, (f"line {worst.line} {what} {worst.sectors_per_request:.0f} sectors per request, where a "
                          "coalesced access moves 4")
    return None

def _values_then_rule(source: str, name: str, hints, run, reference, cases, broken: str) -> bool:
    """❌ for a kernel that breaks a rule the values cannot show: its values first, on the CPU backend (a wrong
    answer hears about its values before the rule), then ``broken``."""
    from course import cuda

    checks.register_hints(name, hints)
    try:
        kernel = cuda.RawKernel(source, name, backend="cpu", sanitize=True)  # (a race is named, not a NaN)
        with checks._kernel_backend("cpu"):
            for case in cases:
                checks.compare(run(kernel, *case), reference(*case), path=f"the result {checks._case_text(case)}")
    except checks.Mismatch as mismatch:
        return checks.check_true(lambda: False, name=name, fail=str(mismatch))
    except Exception as error:  # compile errors and faults: the kernel's own message
        return checks.check_true(lambda: False, name=name, fail=f"{type(error).__name__}: {error}")
    return checks.check_true(lambda: False, name=name, fail=f"the values are right, but {broken}.")


# ---------------------------------------------------------------------------------------------
# Exercise 3: a grid-stride loop

GRID_STRIDE_LAUNCHES = [(2, 64), (3, 32), (1, 1)]   # (blocks, threads): fixed, far fewer threads than n


def run_saxpy_grid_stride(kernel, a, x, y, blocks, threads):
    """Launch ``saxpy_grid_stride`` with a fixed, small grid whatever n is; return y."""
    xp = _xp()
    x_dev, y_dev = xp.asarray(x), xp.asarray(y)
    kernel((int(blocks),), (int(threads),), (np.float32(a), x_dev, y_dev, np.int32(x.size)))
    return _numpy(y_dev)


def check_saxpy_grid_stride(source) -> bool:
    """Exercise 3: SAXPY with a grid-stride loop, launched with 2 × 64, 3 × 32 and 1 × 1 threads on n up to 5000."""
    name = "saxpy_grid_stride"
    hints = [
        "The check launches only a handful of threads (as few as one) for thousands of elements, so each "
        "thread must visit many elements; and it updates y in place, so an element visited twice is wrong.",
        "Start at the thread's global index, as before, and repeat while the index is below n, stepping each "
        "time by the number of threads in the whole grid (blocks in the grid × threads per block).",
    ]
    if (verdict := _not_ready(source, name, hints)) is not None:
        return verdict
    rng = np.random.default_rng(5)
    cases = []
    for n in (1, 100, 128, 129, 1000, 5000):
        for blocks, threads in GRID_STRIDE_LAUNCHES:
            if blocks * threads == 1 and n > 1000:
                continue  # one thread on 5000 elements is slow on the CPU backend and proves nothing new
            cases.append((1.5, rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32),
                          blocks, threads))
    return checks.check_kernel(source, name, run_saxpy_grid_stride,
                               lambda a, x, y, blocks, threads: np.float32(a) * x + y, cases, name=name, hints=hints)


# ---------------------------------------------------------------------------------------------
# Exercise 5: a block maximum with warp shuffles


def run_block_max(kernel, x):
    """Launch ``block_max`` with 256 threads per block; return the per-block maxima."""
    xp = _xp()
    blocks = (x.size + 255) // 256
    partial = xp.zeros(blocks, dtype=xp.float32)
    kernel((blocks,), (256,), (xp.asarray(x), partial, np.int32(x.size)))
    return _numpy(partial)


def _block_maxima(x):
    padded = np.full((x.size + 255) // 256 * 256, -np.inf, dtype=np.float32)
    padded[:x.size] = x
    return padded.reshape(-1, 256).max(axis=1)


def check_block_max(source) -> bool:
    """Exercise 5: per-block maxima with ``__shfl_down_sync``, on negative data, n = 1, 32, 256, 300, 1000, and
    a rising ramp (each block's maximum is its last element: a block that covers the wrong elements shows)."""
    name = "block_max"
    hints = [
        "Two questions decide it: what should a thread past the end contribute so that it can never win a "
        "maximum (the data here are all negative)? And after the shuffles, which lane of each warp holds the "
        "warp's answer — the only one worth storing?",
        "Follow block_sum_warp's structure with the addition replaced by the maximum (fmaxf) and the padding "
        "value replaced by one that loses to every float (minus infinity; __int_as_float can build it from its "
        "bits on every backend); keep the one barrier between the warps' results and the final warp.",
    ]
    if (verdict := _not_ready(source, name, hints)) is not None:
        return verdict
    # the kernel or a __device__ helper must shuffle: __shfl_*_sync, or a cooperative-groups tile's .shfl_down()
    if not re.search(r"__shfl|\.\s*shfl(?:_down|_up|_xor)?\s*\(|\breduce\s*\(", _strip_comments(source)):
        return checks.check_true(lambda: False, name=name, hints=hints,
                                 fail="the kernel uses no warp shuffle (__shfl_down_sync or __shfl_xor_sync): this "
                                      "exercise is about exchanging registers inside a warp, not through shared memory")
    rng = np.random.default_rng(8)
    cases = [(-rng.random(n, dtype=np.float32) - 0.1,) for n in (1, 32, 256, 300, 1000)]
    cases.append((np.linspace(-2.0, -0.1, 700, dtype=np.float32),))
    # values near the bottom of float32 (down to -3e38; -FLT_MAX is -3.4e38): a padding of -1e9 or -1e30 wins
    # the maximum of a part-filled block; only minus infinity (or -FLT_MAX) loses to every value
    cases += [(-rng.uniform(1.5e38, 3.0e38, n).astype(np.float32),) for n in (1, 300)]
    return checks.check_kernel(source, name, run_block_max, _block_maxima, cases, name=name, hints=hints)


# ---------------------------------------------------------------------------------------------
# Exercise 6: transpose through a shared tile

TRANSPOSE_SHAPES = [(1, 1), (16, 16), (17, 33), (33, 17), (64, 48), (5, 100)]


def run_transpose(kernel, a):
    """Launch ``transpose`` with 16 × 16 blocks over ``a`` (x along its columns); return out = a.T."""
    xp = _xp()
    rows, cols = a.shape
    out = xp.full((cols, rows), np.nan, dtype=xp.float32)  # NaN: an element nobody wrote shows up
    kernel(((cols + 15) // 16, (rows + 15) // 16), (16, 16), (xp.asarray(a), out, np.int32(rows), np.int32(cols)))
    return _numpy(out)


def transpose_rule_broken(source: str) -> str | None:
    """Which rule of the tiled transpose ``source`` breaks, or None when it keeps them all.

    The values of a naive transpose are right, so something else must show the difference: the
    kernel must (1) declare a ``__shared__`` tile and (2) wait with ``__syncthreads()`` between
    filling it and reading it (read from the source), and (3) read ``in`` and write ``out`` coalesced:
    in the access profile of one launch (``kernel.profile``, the CPU backend's model of the memory
    transactions), no global load or store of a warp moves more than twice the sectors a coalesced
    one does. A naive transpose's store jumps a whole row of ``out`` between neighbouring threads; so
    does one that reads the tile back with the indices it filled it with. Any tile layout (2-D, 1-D
    with padding), parameter names and loads through a register are fine.
    """
    body = _body(source, "transpose")
    if body is None:
        return "no kernel named transpose was found"
    shared = re.findall(r"__shared__\s+(?:[\w()]+\s+)*?(\w+)\s*\[", body)  # (`volatile float`, `__align__(16) float`)
    if not shared:
        return ("the kernel declares no __shared__ tile: without one, either the reads of `in` or the writes "
                "of `out` jump a whole row between neighbouring threads (not coalesced)")
    tile = shared[0]
    if "__syncthreads" not in body:
        return (f"no __syncthreads() between filling `{tile}` and reading it: a thread would read slots other "
                "threads have not written yet")
    return _uncoalesced(source, tile)


def _uncoalesced(source: str, tile: str) -> str | None:
    """The first global load or store of the transpose, in a profiled 64 × 48 launch, that moves more than
    8 sectors per request (coalesced 16-float rows of a 16 × 16 block: 4), as the rule's message; None when
    all are coalesced, or when the launch fails (the values' check then names the fault)."""
    found = _worst_access(source, "transpose", (64, 48), lambda rows, cols: (
        np.arange(rows * cols, dtype=np.float32).reshape(rows, cols), np.zeros((cols, rows), np.float32),
        np.int32(rows), np.int32(cols)))
    if found is None:
        return None
    kind, said = found
    detour = (f" (reading `{tile}` back with the indices it was filled with makes each thread write the "
              "element it loaded itself: the naive store with a detour through shared memory)"
              if kind == "global store" else "")
    return f"{said}: neighbouring threads touch addresses a whole row apart{detour}"


def check_transpose(source) -> bool:
    """Exercise 6: ``out = a.T`` through a shared tile with coalesced writes, on square, odd and thin shapes."""
    name = "transpose"
    hints = [
        "The values are the easy part; the point is the store. Neighbouring threads (threadIdx.x, threadIdx.x + 1) "
        "should write neighbouring addresses of out — which means a thread usually writes an element that "
        "another thread of the block read. Shared memory is how one thread hands a value to another.",
        "Split the work into two phases with a barrier between them, and give each phase its own mapping from "
        "threads to elements: in the load phase, threadIdx.x runs along a row of in; in the store phase, "
        "threadIdx.x must run along a row of out. Work out which block of out holds the transpose of your block of "
        "in, which tile slot holds the value each storing thread needs, and which shape guards each phase.",
    ]
    if (verdict := _not_ready(source, name, hints)) is not None:
        return verdict
    rng = np.random.default_rng(3)
    cases = [(rng.standard_normal(shape, dtype=np.float32),) for shape in TRANSPOSE_SHAPES]
    broken = transpose_rule_broken(source)
    if broken is not None:
        return _values_then_rule(source, name, hints, run_transpose, lambda a: np.ascontiguousarray(a.T), cases,
                                 broken)
    return checks.check_kernel(source, name, run_transpose, lambda a: np.ascontiguousarray(a.T), cases,
                               name=name, hints=hints)


# ---------------------------------------------------------------------------------------------
# Exercise 4: fix a block reduction

#: The kernel the exercise hands out: it has two barrier bugs. A fixed kernel differs from it.
BLOCK_SUM_BUGGY = r'''
#define THREADS 256
extern "C" __global__ void block_sum_fixed(const float* x, float* partial, int n) {
    __shared__ float cache[THREADS];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    cache[t] = (i < n) ? x[i] : 0.0f;
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (t < stride) {
            cache[t] += cache[t + stride];
            __syncthreads();
        }
    }
    if (t == 0)
        partial[blockIdx.x] = cache[0];
}
'''


def run_block_sum(kernel, x):
    """Launch ``block_sum_fixed`` with 256 threads per block; return the per-block partial sums."""
    xp = _xp()
    blocks = (x.size + 255) // 256
    partial = xp.zeros(blocks, dtype=xp.float32)
    kernel((blocks,), (256,), (xp.asarray(x), partial, np.int32(x.size)))
    return _numpy(partial)


def _block_sums(x):
    padded = np.zeros((x.size + 255) // 256 * 256, dtype=np.float64)
    padded[:x.size] = x
    return padded.reshape(-1, 256).sum(axis=1).astype(np.float32)


def check_block_sum_fixed(source) -> bool:
    """Exercise 4: the block reduction with its barriers fixed; per-block sums on n = 1, 256, 300, 1000, 4096."""
    name = "block_sum_fixed"
    hints = [
        "There are two bugs, both about __syncthreads(). Run the check after each fix: the CPU backend names the "
        "first one for you; for the second, ask for every shared slot a thread reads: who wrote it, and is that "
        "write certainly finished?",
        "A barrier must be reached by every thread of the block, so it cannot sit inside a branch that only some "
        "threads take; and a barrier is needed wherever one thread reads a shared slot that another thread "
        "wrote in the step before — count those places, starting from the very first read of cache.",
    ]
    if not isinstance(source, str) or _normalise(source) == _normalise(BLOCK_SUM_BUGGY):
        checks.register_hints(name, hints)
        return checks.not_a_kernel(name, source if isinstance(source, str) else source or "", name)
    rng = np.random.default_rng(6)
    cases = [(rng.random(n, dtype=np.float32),) for n in (1, 256, 300, 1000, 4096)]
    return checks.check_kernel(source, name, run_block_sum, _block_sums, cases, name=name,
                               rtol=1e-5, atol=1e-4, hints=hints)


# ---------------------------------------------------------------------------------------------
# Exercise 7: dot product


def run_dot(kernel, x, y):
    """Launch ``dot`` with 256 threads per block and ``result`` zeroed; return result[0]."""
    xp = _xp()
    result = xp.zeros(1, dtype=xp.float32)
    kernel(((x.size + 255) // 256,), (256,), (xp.asarray(x), xp.asarray(y), result, np.int32(x.size)))
    return _numpy(result)[0]


def _atomics_per_block(source: str) -> str | None:
    """In a profiled launch of ``dot`` (n = 1000, 4 blocks): a block that makes more than one atomic update of
    global memory (one per element: no block reduction), as the rule's message; None otherwise, or when the
    launch fails (the values' check then names the fault)."""
    from course import cuda
    from course.cuda import transactions as tx

    n = 1000
    x = np.ones(n, np.float32)
    try:
        kernel = cuda.RawKernel(source, "dot", backend="cpu")
        profile = kernel.profile(((n + 255) // 256,), (256,), (x, x.copy(), np.zeros(1, np.float32), np.int32(n)))
    except Exception:
        return None
    atomics = profile.trace[profile.trace["kind"] == tx.GLOBAL_ATOMIC]
    if not len(atomics):
        return None
    blocks, counts = np.unique(atomics["block"], return_counts=True)
    if counts.max() <= 1:
        return None
    return (f"block {int(blocks[counts.argmax()])} makes {int(counts.max())} atomic updates of result: the exercise "
            "asks for one per block, after the block's own reduction (atomics on one address run one after "
            "another, so one per element makes the whole grid queue up)")


def dot_rule_broken(source: str) -> str | None:
    """Why ``source`` would lose updates of ``result`` on a GPU, or None.

    The check runs the CPU backend's sanitizer, which runs blocks one after another, so a plain
    ``result[0] += sum`` could give the right value there; on a GPU (and in this backend's plain runs,
    which use every core) blocks run at the same time and such a read-add-write loses updates
    (section 6). The source shows it first: every write of ``result`` must be an ``atomicAdd``.
    """
    body = _body(source, "dot") or ""
    plain = re.search(r"(\bresult\s*\[[^\]]*\]|\*\s*result)\s*(\+=|=(?!=))", body)
    if plain:
        return (f"`{' '.join(plain.group(0).split())}` writes result with a plain read-add-write. In the CPU "
                "backend's checks, blocks run one after another, so the value can come out right here; on a GPU "
                "blocks run at the same time and such writes lose each other's updates (section 6)")
    return None


def check_dot(source) -> bool:
    """Exercise 7: ``np.dot(x, y)`` with a block reduction and one ``atomicAdd`` per block, n = 1 … 5000."""
    name = "dot"
    hints = [
        "Two stages: inside a block, the threads cooperate as in block_sum (on products instead of values); "
        "across blocks, nothing can wait for another block — so how do many blocks add into one number safely?",
        "Stage 1 is block_sum with the load changed (0 past the end) and both kinds of barrier kept. Stage 2: "
        "exactly one thread per block adds the block's total into result[0] with an operation that cannot lose "
        "another block's update (section 6).",
    ]
    if (verdict := _not_ready(source, name, hints)) is not None:
        return verdict
    rng = np.random.default_rng(4)
    cases = [tuple(rng.standard_normal(n, dtype=np.float32) for _ in range(2)) for n in (1, 256, 1000, 5000)]
    plain = dot_rule_broken(source) or _atomics_per_block(source)
    if plain is not None:
        return checks.check_true(lambda: False, name=name, fail=plain, hints=hints)

    def reference(x, y):
        return np.float32(x.astype(np.float64) @ y.astype(np.float64))

    # float atomics add in a different order on every GPU run: allow for the last digits
    return checks.check_kernel(source, name, run_dot, reference, cases, name=name, rtol=1e-4, atol=1e-3, hints=hints)
