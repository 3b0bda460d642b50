"""Named checks for notebook 03 (Inside the GPU): each reads the kernel's access profile.

A check runs the learner's kernel on the CPU backend, compares the answer with NumPy, then holds
the kernel's modelled memory behaviour (``kernel.profile``) against the exercise's goal: sectors
per request, bank conflicts, divergence, requests. Hints are registered for ``course.checks.hint()``.
"""

from __future__ import annotations

import re

import numpy as np

from course import checks
from course.cuda import occupancy as occ

#: The kernels the exercises start from (the notebook's stub cells hold the same text).
STARTERS = {
    "scale": r'''
extern "C" __global__ void scale(const float* a, float* out, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;   // one thread per row ...
    if (r < rows)
        for (int c = 0; c < cols; ++c)               // ... walks along its row
            out[r * cols + c] = 2.0f * a[r * cols + c];
}
''',
    "transpose32": r'''
#define TILE 32
extern "C" __global__ void transpose32(const float* in, float* out, int n) {
    __shared__ float tile[TILE][TILE];
    int x = blockIdx.x * TILE + threadIdx.x;
    for (int dy = threadIdx.y; dy < TILE; dy += blockDim.y)      // 32 x 8 threads: 4 rows each
        tile[dy][threadIdx.x] = in[(blockIdx.y * TILE + dy) * n + x];
    __syncthreads();
    int ox = blockIdx.y * TILE + threadIdx.x;
    for (int dy = threadIdx.y; dy < TILE; dy += blockDim.y)
        out[(blockIdx.x * TILE + dy) * n + ox] = tile[threadIdx.x][dy];
}
''',
    "block_sum": r'''
extern "C" __global__ void block_sum(const float* x, float* out, int n) {
    __shared__ float s[256];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    s[t] = (i < n) ? x[i] : 0.0f;
    __syncthreads();
    for (int stride = 1; stride < blockDim.x; stride *= 2) {
        if (t % (2 * stride) == 0)                  // interleaved: active threads spread out
            s[t] += s[t + stride];
        __syncthreads();
    }
    if (t == 0)
        out[blockIdx.x] = s[0];
}
''',
    "copy4": r'''
extern "C" __global__ void copy4(const float* in, float* out, int n) {
    // TODO: copy n floats, four at a time through float4, and the last n % 4 one by one
}
''',
}


def _same_code(a: str, b: str) -> bool:
    strip = lambda s: re.sub(r"\s+", "", re.sub(r"//[^\n]*", "", s))
    return strip(a) == strip(b)


def _kernel(name: str, source, kernel_name: str):
    """(kernel, None) or (None, reported False) for an untouched stub or a compile error."""
    from course import cuda

    if not isinstance(source, str) or "__global__" not in source or _same_code(source, STARTERS[kernel_name]):
        return None, checks.not_a_kernel(name, source, kernel_name)  # (a starter left as it is: not attempted)
    try:
        return cuda.RawKernel(source, kernel_name, backend="cpu"), None
    except Exception as error:
        return None, checks._report(name, False, f"does not compile: {error}")


def _run(name, kernel, grid, block, args, shared_mem=0):
    """Profile one launch (which also runs it); (profile, None) or (None, reported False)."""
    try:
        return kernel.profile(grid, block, args, shared_mem=shared_mem), None
    except Exception as error:
        return None, checks._report(name, False, f"{type(error).__name__}: {error}")


def _also_right(name, kernel, grid, block, args, expected, what) -> bool | None:
    """A second launch on other sizes (a kernel that hard-codes the first one's, or that is right only with
    an exact grid, shows there): None when `args[1]` comes out as `expected`, else the reported ❌."""
    try:
        kernel(grid, block, args)
    except Exception as error:
        return checks._report(name, False, f"on {what}: {type(error).__name__}: {error}")
    return _wrong(name, args[1], expected, f"out on {what}")


def _wrong(name, got, expected, what) -> bool | None:
    bad = ~np.isclose(got, expected, rtol=1e-5, atol=1e-5)
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        return checks._report(name, False, f"{what}: {int(bad.sum())} of {bad.size} values wrong; first at "
                              f"{index if len(index) > 1 else index[0]}: expected {expected[index].item()!r}, "
                              f"got {got[index].item()!r}")  # (.item(): 0.6579, not np.float32(0.6579))
    return None


def check_coalesced(source: str) -> bool:
    """Exercise 1: ``scale(a, out, rows, cols)`` doubles a row-major matrix with coalesced reads."""
    name = "coalesced scale"
    checks.register_hints(name, [
        "Look at which addresses the 32 threads of a warp touch in the same iteration of the loop.",
        "In one step of the loop, neighbouring threads must touch neighbouring floats. Which of the two "
        "indices (row, column) should come from the thread, and which from the loop?"])
    kernel, failed = _kernel(name, source, "scale")
    if kernel is None:
        return failed
    rows, cols = 64, 256
    a = np.random.default_rng(0).standard_normal((rows, cols)).astype(np.float32)
    out = np.zeros_like(a)
    profile, failed = _run(name, kernel, (cols // 128,), (128,), (a, out, np.int32(rows), np.int32(cols)))
    if profile is None:
        return failed
    if (w := _wrong(name, out, 2 * a, "out")) is not None:
        return w
    # 300 columns on 3 blocks of 128 threads: the 84 threads past the last column must do nothing (a missing
    # guard, or `c <= cols`, runs past the end of the matrix here)
    b = np.random.default_rng(1).standard_normal((37, 300)).astype(np.float32)
    if (w := _also_right(name, kernel, ((300 + 127) // 128,), (128,), (b, np.zeros_like(b), np.int32(37),
                                                                        np.int32(300)),
                         2 * b, "a 37 × 300 matrix, with 384 threads for its 300 columns")) is not None:
        return w
    loads = [s for s in profile.lines if s.kind == "global load"]
    worst = max(loads, key=lambda s: s.sectors_per_request, default=None)
    if worst is None:
        return checks._report(name, False, "the kernel never reads `a` from global memory")
    if worst.sectors_per_request > 4:
        return checks._report(name, False, f"right answer, but line {worst.line} reads "
                              f"{worst.sectors_per_request:.1f} sectors per request (coalesced float reads need 4)")
    return checks._report(name, True, f"right, and every global load takes {worst.sectors_per_request:.0f} "
                          "sectors per request.")


def check_no_bank_conflicts(source: str) -> bool:
    """Exercise 2: ``transpose32`` through a shared tile without bank conflicts."""
    name = "conflict-free transpose"
    checks.register_hints(name, [
        "Which bank does tile[i][c] fall in, for i = 0…31 and a fixed c? (bank = word index mod 32)",
        "Change the tile's shape (not the code that uses it) so that one step down a column moves to the next "
        "bank: what row length, in 4-byte words, does that take modulo 32?"])
    kernel, failed = _kernel(name, source, "transpose32")
    if kernel is None:
        return failed
    n = 64
    a = np.arange(n * n, dtype=np.float32).reshape(n, n)
    out = np.zeros_like(a)
    profile, failed = _run(name, kernel, (n // 32, n // 32), (32, 8), (a, out, np.int32(n)))
    if profile is None:
        return failed
    if (w := _wrong(name, out, a.T, "out")) is not None:
        return w
    b = np.arange(96 * 96, dtype=np.float32).reshape(96, 96)
    if (w := _also_right(name, kernel, (3, 3), (32, 8), (b, np.zeros_like(b), np.int32(96)), b.T,
                         "a 96 × 96 matrix")) is not None:
        return w
    shared = [s for s in profile.lines if s.kind.startswith("shared")]
    if not shared:
        return checks._report(name, False, "the kernel uses no shared memory: keep the tile")
    conflicts = sum(s.bank_conflicts for s in shared)
    if conflicts:
        worst = max(shared, key=lambda s: s.bank_conflicts)
        return checks._report(name, False, f"right answer, but {conflicts} bank conflicts remain; line "
                              f"{worst.line} ({worst.kind}) is {worst.conflict_ways:.0f}-way on average")
    return checks._report(name, True, "right, and no shared-memory access has a bank conflict.")


def check_smallest_full_block(fn) -> bool:
    """Exercise 3: ``smallest_best_block(gpu, registers, shared_bytes)`` from the occupancy rules."""
    name = "smallest block with the best occupancy"
    checks.register_hints(name, [
        "course.cuda.occupancy.occupancy(threads, gpu_name=..., registers_per_thread=..., shared_bytes=...) "
        "tells you the occupancy of one block size; which block sizes are worth trying?",
        "Try every block size a whole number of warps fills; some cannot run at all (the function says so "
        "by raising). Then think about ties: several sizes may reach the same best occupancy."])

    def reference(gpu, registers, shared):
        best, best_size = -1.0, None
        for threads in range(32, 1025, 32):
            try:
                o = occ.occupancy(threads, gpu_name=gpu, registers_per_thread=registers, shared_bytes=shared).occupancy
            except ValueError:
                continue
            if o > best + 1e-12:
                best, best_size = o, threads
        return best_size

    # (T4, 32, 40000) and (A100, 32, 100000): only 1024 threads reach the best (a range that stops at 512 or 992
    # misses it); (A100, 128, 0) and (T4, 200, 6000): 32, the smallest
    cases = [("T4", 64, 6144), ("T4", 32, 0), ("A100", 128, 0), ("H100", 40, 48 * 1024), ("A100", 32, 20_000),
             ("T4", 32, 40_000), ("A100", 32, 100_000), ("T4", 200, 6000)]
    return checks.check_function(fn, reference, cases, name=name)


def check_divergence_free_reduction(source: str) -> bool:
    """Exercise 4: ``block_sum`` whose loop keeps the active threads contiguous (little divergence)."""
    name = "reduction without divergence"
    checks.register_hints(name, [
        "In `if (t % (2 * s) == 0)`, which lanes of warp 0 are active at s = 1? And at s = 2?",
        "Keep the same number of additions per step, but give them to the lowest-numbered threads: start with "
        "half the block adding the other half, and halve that each step. Which warps are then fully idle?"])
    kernel, failed = _kernel(name, source, "block_sum")
    if kernel is None:
        return failed
    blocks, threads = 4, 256
    x = np.random.default_rng(1).standard_normal(blocks * threads).astype(np.float32)
    out = np.zeros(blocks, np.float32)
    profile, failed = _run(name, kernel, (blocks,), (threads,), (x, out, np.int32(x.size)))
    if profile is None:
        return failed
    expected = x.reshape(blocks, threads).astype(np.float64).sum(axis=1).astype(np.float32)
    if (w := _wrong(name, out, expected, "out")) is not None:
        return w
    m = 1000  # (not a multiple of the block: the last block's threads past n contribute 0, and read nothing)
    y = np.random.default_rng(2).standard_normal(m).astype(np.float32)
    padded = np.zeros(blocks * threads, np.float64)
    padded[:m] = y
    if (w := _also_right(name, kernel, (blocks,), (threads,), (y, np.zeros(blocks, np.float32), np.int32(m)),
                         padded.reshape(blocks, threads).sum(axis=1).astype(np.float32), f"n = {m}")) is not None:
        return w
    # A tree: each step halves the active threads, so no thread reads more than a few values per step. One
    # thread that reads the block's values one after another (a serial loop in thread 0) has no divergence
    # to speak of, and no parallel tree either.
    from course.cuda import transactions as tx

    loads = profile.trace[np.isin(profile.trace["kind"], (tx.GLOBAL_LOAD, tx.SHARED_LOAD))]
    if len(loads):
        thread = loads["block"] * threads + loads["warp"].astype(np.int64) * 32 + loads["lane"]
        counts = np.bincount(thread)
        busiest = int(counts.argmax())
        if counts[busiest] > threads // 4:
            return checks._report(name, False, f"right sums, but thread {busiest % threads} of block "
                                  f"{busiest // threads} reads {int(counts[busiest])} values by itself: one thread "
                                  "does the block's work serially, with no parallel tree. Each step should halve "
                                  "the number of active threads, every active thread adding two values.")
    # A branch fails when it diverges in more than 1 warp in 8 of those that reach it. Two patterns of every
    # reduction do not count: a branch only one lane of a warp takes (the warp's result stored by its lane 0,
    # `if ((t & 31) == 0) w[t >> 5] = v;`, in every warp), and one that diverges in one warp execution a block
    # (the single writer at the end, `if (t == 0)` inside `if (t < 32)`, which only one warp reaches)
    branches = profile.branches
    key = np.stack([branches["line"].astype(np.int64), branches["block"], branches["warp"].astype(np.int64),
                    branches["instance"]], axis=1)
    executions, inverse = np.unique(key, axis=0, return_inverse=True)
    inverse = np.asarray(inverse).reshape(-1)
    taken = np.bincount(inverse, weights=branches["taken"].astype(np.float64), minlength=len(executions))
    total = np.bincount(inverse, minlength=len(executions))
    split = (taken > 1) & (taken < total)  # (diverged, and not a single lane's store)
    worst = None
    for line in np.unique(executions[:, 0]) if len(executions) else ():
        at = executions[:, 0] == line
        divergent, reached = int(split[at].sum()), int(at.sum())
        if divergent > blocks and divergent / reached > 1 / 8 + 1e-9 and (
                worst is None or divergent / reached > worst[1]):
            worst = (int(line), divergent / reached)
    if worst is not None:
        return checks._report(name, False, f"right sums, but the branch at line {worst[0]} diverges in "
                              f"{worst[1]:.0%} of the warps that reach it (goal: at most 1 in 8)")
    return checks._report(name, True, "right sums, by a tree; no branch diverges in more than 1 warp in 8.")


def _stored_by_several_blocks(name, profile, argument: int, what: str) -> bool | None:
    """The reported ❌ when some float of argument ``argument`` is stored by more than one block (None if none is):
    the rule ``course.checks.check_kernel`` applies to notebook 01's kernels, here on every element — a tail of
    three floats stored by every block is too few for the emulator's own warning, but the blocks still repeat one
    another's work (and on a GPU they race to store it)."""
    from course.cuda import transactions as tx

    trace = profile.trace
    stores = trace[np.isin(trace["kind"], (tx.GLOBAL_STORE, tx.GLOBAL_ATOMIC)) & (trace["array"] == argument)]
    if not len(stores):
        return None
    words_each = np.maximum(stores["size"].astype(np.int64) // 4, 1)   # a float4 store covers 4 floats
    first = stores["address"].astype(np.int64) // 4 - int(profile.bases.get(argument, 0)) // 4
    word = np.repeat(first, words_each) + (np.arange(words_each.sum()) - np.repeat(np.cumsum(words_each)
                                                                                     - words_each, words_each))
    block = np.repeat(stores["block"].astype(np.int64), words_each)
    pairs = np.unique(np.stack([word, block], axis=1), axis=0)           # (element, a block that stored it)
    elements, count = np.unique(pairs[:, 0], return_counts=True)
    repeated = elements[count > 1]
    if not len(repeated):
        return None
    blocks = pairs[pairs[:, 0] == repeated[0], 1]
    return checks._report(name, False, f"right copy, but {len(repeated)} element(s) of {what} were each stored by "
                          f"more than one block (first {what}[{int(repeated[0])}], by blocks "
                          f"{', '.join(str(int(b)) for b in blocks[:4])}{' …' if len(blocks) > 4 else ''}): the "
                          "blocks repeat one another's work, and on a GPU they race to store it. Give each element "
                          "to one thread of the whole grid (an index built from blockIdx as well as threadIdx).")


def check_vectorised_copy(source: str) -> bool:
    """Exercise 5: ``copy4`` copies n floats with float4 loads and stores (and a scalar tail)."""
    name = "float4 copy"
    checks.register_hints(name, [
        "A float4 moves 16 bytes in one instruction: how many instructions does a warp need for 512 floats?",
        "View the arrays as float4 for the bulk (how many whole float4s are there?), and give the few floats "
        "left over to a few threads with plain float accesses."])
    kernel, failed = _kernel(name, source, "copy4")
    if kernel is None:
        return failed
    n = 4 * 1024 + 3
    x = np.random.default_rng(2).standard_normal(n).astype(np.float32)
    out = np.zeros_like(x)
    # (a block more than the float4s need: threads past the end must do nothing, as on a GPU with a rounded-up grid)
    profile, failed = _run(name, kernel, ((n // 4 + 255) // 256 + 1,), (256,), (x, out, np.int32(n)))
    if profile is None:
        return failed
    if (w := _wrong(name, out, x, "out")) is not None:
        return w
    m = 4 * 300 + 1
    y = np.random.default_rng(3).standard_normal(m).astype(np.float32)
    if (w := _also_right(name, kernel, ((m // 4 + 255) // 256 + 1,), (256,), (y, np.zeros_like(y), np.int32(m)), y,
                         f"n = {m}")) is not None:
        return w
    if (w := _stored_by_several_blocks(name, profile, 1, "out")) is not None:
        return w
    requests = sum(s.requests for s in profile.lines if s.kind == "global load")
    scalar = -(-n // 32)
    if requests > scalar // 3:
        return checks._report(name, False, f"right copy, but it takes {requests} load requests; a scalar copy "
                              f"takes {scalar} and float4 about a quarter of that")
    return checks._report(name, True, f"right, with {requests} load requests instead of {scalar}.")
