"""Notebook 02's puzzle checks: stubs are "not attempted", the usual mistakes are rejected with a
specific diagnosis, and the access rules read a profile's trace correctly."""

import re

import numpy as np
import pytest

from course import checks
from course.cuda import transactions as tx
from course.exercises import kernel_puzzles as kp


def test_twenty_puzzles_each_with_spec_rules_and_two_hints():
    assert [p.number for p in kp.PUZZLES] == list(range(1, 21))
    for p in kp.PUZZLES:
        assert p.spec and p.learn and len(p.hints) >= 2 and p.sizes
        assert f"void {p.name}(" in p.stub and "TODO" in p.stub
        for size in p.sizes:  # every reference runs on every size
            expected = p.reference(p.case(size))
            assert set(expected) == set(p.outputs)


@pytest.mark.parametrize("number", range(1, 21))
def test_untouched_stub_is_not_attempted(number, capsys):
    assert kp.check(number, kp.puzzle(number).stub) is False
    out = capsys.readouterr().out
    assert "not attempted yet" in out and "hint" not in out.lower()


def shared_puzzle(declaration="__shared__ float buffer[32];", between="    __syncthreads();\n") -> str:
    """Puzzle 8's kernel (each thread stores its element, a barrier, reads it back) with another declaration
    of the buffer, or something else between the store and the read."""
    return ('extern "C" __global__ void shared(const float* a, float* out, int n) {\n'
            f"    {declaration}\n"
            "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            "    if (i < n) buffer[threadIdx.x] = a[i];\n"
            f"{between}"
            "    if (i < n) out[i] = buffer[threadIdx.x] + 10.0f;\n}\n")


def run_check(number, source, capsys):
    ok = kp.check(number, source)
    return ok, capsys.readouterr().out


def test_missing_guard_is_an_out_of_bounds_fault(capsys):
    ok, out = run_check(3, r'''
extern "C" __global__ void guard(const float* a, float* out, int n) {
    int i = threadIdx.x;
    out[i] = a[i] + 10.0f;
}''', capsys)
    assert not ok and "KernelError" in out and "thread" in out and "hint()" in out
    # the emulator's usual hint for an index past the end spells out this puzzle's answer: a question instead
    assert "if (i < n)" not in out and "guard the access" not in out and "what should the others do?" in out


def test_block_index_forgotten_gives_the_first_wrong_element(capsys):
    ok, out = run_check(6, r'''
extern "C" __global__ void blocks(const float* a, float* out, int n) {
    int i = threadIdx.x;
    if (i < n) out[i] = a[i] + 10.0f;
}''', capsys)
    # Every block writes the same values into out[0:32]: no race (the values agree), but the
    # elements past the first block are never written, and the check names the first of them.
    assert not ok and "KernelError" not in out and "first at 32" in out
    ok, out = run_check(6, r'''
extern "C" __global__ void blocks(const float* a, float* out, int n) {
    int i = threadIdx.x;
    if (i < n) out[i] = a[i] + 10.0f * (blockIdx.x + 1);
}''', capsys)
    # different values into one element from two blocks: the sanitizer names the second writer
    assert not ok and "KernelError" in out and "also wrote" in out and "out[0]" in out


def test_rows_and_columns_swapped_is_wrong(capsys):
    ok, out = run_check(5, r'''
extern "C" __global__ void broadcast(const float* a, const float* b, float* out, int rows, int cols) {
    int col = threadIdx.x, row = threadIdx.y;
    if (row < rows && col < cols) out[row * cols + col] = a[col] + b[row];
}''', capsys)
    assert not ok and ("wrong" in out or "KernelError" in out)


def test_barrier_inside_the_if_is_reported(capsys):
    ok, out = run_check(10, r'''
extern "C" __global__ void dot(const float* a, const float* b, float* out, int n) {
    __shared__ float cache[64];
    int t = threadIdx.x;
    cache[t] = (t < n) ? a[t] * b[t] : 0.0f;
    __syncthreads();
    for (int stride = 32; stride > 0; stride /= 2) {
        if (t < stride) { cache[t] += cache[t + stride]; __syncthreads(); }
    }
    if (t == 0) out[0] = cache[0];
}''', capsys)
    assert not ok and "syncthreads" in out.replace("__syncthreads", "syncthreads")


def test_source_rules(capsys):
    no_barrier = r'''
extern "C" __global__ void shared(const float* a, float* out, int n) {
    __shared__ float buffer[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { buffer[threadIdx.x] = a[i]; out[i] = buffer[threadIdx.x] + 10.0f; }
}'''
    ok, out = run_check(8, no_barrier, capsys)
    assert not ok and "rule broken: wait with __syncthreads()" in out
    global_atomics = r'''
extern "C" __global__ void histogram(const int* a, unsigned int* bins, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&bins[a[i]], 1u);
}'''
    ok, out = run_check(17, global_atomics, capsys)
    assert not ok and "a shared-memory histogram per block" in out
    commented_out = r'''
extern "C" __global__ void warp_sum(const float* a, float* out, int n) {
    // __shfl_down_sync would go here
    __shared__ float s[128];
}'''
    ok, out = run_check(15, commented_out, capsys)
    assert not ok and "use __shfl_down_sync" in out


def test_wrong_answers_register_hints_and_hint_gives_nudge_then_method(capsys):
    run_check(1, r'''
extern "C" __global__ void map(const float* a, float* out) { out[threadIdx.x] = a[threadIdx.x]; }''', capsys)
    nudge, method = kp.puzzle(1).hints
    assert nudge in checks.hint() and method in checks.hint()


class FakeProfile:
    """What the rules read from ``course.cuda``'s access profile: the trace, per-line stats, argument names."""

    def __init__(self, rows, args):
        self.trace = np.array(rows, dtype=tx.ACCESS)
        self.lines = tx.analyse_accesses(self.trace)
        self.args = args

    def argument_index(self, name):
        return self.args.index(name)


def test_access_rules_from_a_trace():
    # thread 3 of block 0 reads `a` twice; everyone else once
    rows = [(5, tx.GLOBAL_LOAD, 0, 0, 0, lane, 4 * lane, 4, 0) for lane in range(32)]
    rows.append((6, tx.GLOBAL_LOAD, 0, 0, 0, 3, 4 * 3, 4, 0))
    profile = FakeProfile(rows, ["a", "out"])
    assert "thread 3 of block 0 reads `a` 2 times (at most 1 here)" in kp.reads_at_most("a", 1).trace(profile, {})
    assert "reads global memory 2 times" in kp.global_reads_at_most(lambda case: 1, "x").trace(profile, {})
    assert kp.writes_at_most("out", 1).trace(profile, {}) is None
    assert kp.reads_at_most("a", 2).trace(profile, {}) is None
    strided = FakeProfile([(5, tx.GLOBAL_LOAD, 0, 0, 0, lane, 128 * lane, 4, 0) for lane in range(32)], ["a"])
    assert "32.0 sectors per request for a global load, where its bytes need 4.0" in kp.coalesced().trace(strided, {})
    assert kp.coalesced().trace(profile, {}) is None
    column = FakeProfile([(7, tx.SHARED_LOAD, 0, 0, 0, lane, 128 * lane, 4, 0) for lane in range(32)], [])
    assert "bank conflicts" in kp.no_bank_conflicts().trace(column, {})
    atomics = FakeProfile([(9, tx.GLOBAL_ATOMIC, 1, 0, i, 0, 0, 4, 1) for i in range(20)], ["a", "bins"])
    assert "block 1 makes 20 atomic updates" in kp.global_atomics_per_block_at_most(16).trace(atomics, {})


def test_puzzle_lookup_and_rounds_errors():
    assert kp.puzzle("matmul").number == 14
    with pytest.raises(ValueError, match="no puzzle"):
        kp.puzzle(21)
    with pytest.raises(ValueError, match="rounds"):
        kp.set_rounds(0)


def test_shuffle_inside_the_guard_is_caught(capsys):
    ok, out = run_check(15, r'''
extern "C" __global__ void warp_sum(const float* a, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = a[i];
        for (int offset = 16; offset > 0; offset /= 2)
            v += __shfl_down_sync(0xffffffff, v, offset);
        if (threadIdx.x % 32 == 0) out[i / 32] = v;
    }
}''', capsys)
    assert not ok and "KernelError" in out and "__shfl_down_sync" in out and "line 7" in out


def test_element_accesses_from_a_profile():
    from course.cuda.profile import Profile

    rows = [(5, tx.GLOBAL_LOAD, b, 0, 0, lane, 1000 + 4 * (32 * b + lane), 4, 0) for b in range(2) for lane in range(32)]
    rows += [(6, tx.GLOBAL_STORE, b, 0, 0, lane, 9000 + 4 * (32 * b + lane), 4, 1) for b in range(2) for lane in range(32)]
    p = Profile("map", (2, 1, 1), (32, 1, 1), 0, np.array(rows, dtype=tx.ACCESS), np.zeros(0, dtype=tx.BRANCH),
                arguments=("a", "out"), bases={0: 1000, 1: 9000})
    reads = p.element_accesses("a", 4)
    assert np.array_equal(reads["thread"], reads["element"]) and reads["element"].max() == 63
    assert set(p.element_accesses("out", 4)["kind"]) == {tx.GLOBAL_STORE}


def test_in_place_scan_race_is_caught(capsys):
    ok, out = run_check(12, r'''
extern "C" __global__ void prefix_sum(const float* a, float* out, int n) {
    __shared__ float s[64];
    int t = threadIdx.x;
    s[t] = (t < n) ? a[t] : 0.0f;
    __syncthreads();
    for (int offset = 1; offset < 64; offset *= 2) {
        if (t >= offset) s[t] += s[t - offset];
        __syncthreads();
    }
    if (t < n) out[t] = s[t];
}''', capsys)
    assert not ok and "KernelError" in out and "s[" in out


def test_access_rules_are_enforced_on_right_answers(capsys):
    """A right answer that breaks an access rule fails, naming the rule and the thread or line."""
    reads_twice = r'''
extern "C" __global__ void map(const float* a, float* out) {
    float v = a[threadIdx.x];
    if (a[threadIdx.x] == v) out[threadIdx.x] = v + 10.0f;
}'''
    ok, out = run_check(1, reads_twice, capsys)
    assert not ok and "right answer, but a rule is broken" in out and "reads `a` 2 times" in out
    transposed_in_block = r'''
extern "C" __global__ void blocks_2d(const float* a, float* out, int rows, int cols) {
    int c = blockIdx.x * 8 + threadIdx.y;   // lanes of a warp walk down a column
    int r = blockIdx.y * 8 + threadIdx.x;
    if (r < rows && c < cols) out[r * cols + c] = a[r * cols + c] + 10.0f;
}'''
    ok, out = run_check(7, transposed_in_block, capsys)
    assert not ok and "coalesced global loads" in out and "sectors per request" in out and "line 5" in out
    ok, out = run_check(7, transposed_in_block.replace("threadIdx.y;   //", "threadIdx.x;   //")
                        .replace("8 + threadIdx.x;\n", "8 + threadIdx.y;\n"), capsys)
    assert ok and "Rules kept" in out and "Not checked" not in out


def test_show_accesses_draws_the_halo_loads_of_pooling():
    import matplotlib

    matplotlib.use("Agg")
    pooling = r'''
extern "C" __global__ void pooling(const float* a, float* out, int n) {
    __shared__ float tile[34];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x + 2] = (i < n) ? a[i] : 0.0f;
    if (threadIdx.x < 2) tile[threadIdx.x] = (i - 2 >= 0 && i - 2 < n) ? a[i - 2] : 0.0f;
    __syncthreads();
    if (i < n) out[i] = tile[threadIdx.x] + tile[threadIdx.x + 1] + tile[threadIdx.x + 2];
}'''
    fig = kp.show_accesses(9, pooling)
    (reads, writes) = [ax.collections for ax in fig.axes[:1]][0][:2]
    points = reads.get_offsets()
    assert len(fig.axes) == 2 and "33 elements" in fig.axes[0].get_title()
    assert len(points) == 33 + 2  # every element once, and the two halo elements of the second block again
    assert sorted(map(tuple, points[(points[:, 0] == 32)].tolist())) == [(32.0, 30.0), (32.0, 32.0)]


WRONG_BUT_PLAUSIBLE = [  # (puzzle, what is wrong, source): each gave the right numbers on the old sizes
    (8, "shared copy never read", r"""
extern "C" __global__ void shared(const float* a, float* out, int n) {
__shared__ float buf[32];
int t = threadIdx.x; int i = blockIdx.x * blockDim.x + t;
float v = 0; if (i < n) { v = a[i]; buf[t] = v; }
__syncthreads();
if (i < n) out[i] = v + 10.0f;
}
"""),
    (8, "the barrier only in a string", r"""
extern "C" __global__ void shared(const float* a, float* out, int n) {
__shared__ float buf[32];
int t = threadIdx.x; int i = blockIdx.x * blockDim.x + t;
if (i < n) buf[t] = a[i];
const char* s = "__syncthreads"; (void)s;
if (i < n) out[i] = buf[t] + 10.0f;
}
"""),
    (10, 'all threads write out', r"""
extern "C" __global__ void dot(const float* a, const float* b, float* out, int n) {
__shared__ float c[64];
int t = threadIdx.x;
c[t] = (t < n) ? a[t] * b[t] : 0.0f;
__syncthreads();
for (int s = 32; s > 0; s /= 2) { if (t < s) c[t] += c[t + s]; __syncthreads(); }
out[0] = c[0];
}
"""),
    (10, 'atomicAdd, no reduction', r"""
extern "C" __global__ void dot(const float* a, const float* b, float* out, int n) {
__shared__ float c[64];
int t = threadIdx.x;
if (t < n) atomicAdd(out, a[t] * b[t]);
__syncthreads();
}
"""),
    (13, 'atomicAdd per thread', r"""
extern "C" __global__ void axis_sum(const float* a, float* out, int rows, int cols) {
__shared__ float p[128];
int row = blockIdx.x, t = threadIdx.x;
float sum = 0.0f;
for (int c = t; c < cols; c += blockDim.x) sum += a[row * cols + c];
atomicAdd(&out[row], sum);
}
"""),
    (16, 'm init 0', r"""
extern "C" __global__ void softmax(const float* x, float* out, int rows, int cols) {
__shared__ float s[128];
int row = blockIdx.x, t = threadIdx.x;
const float* xr = x + row * cols;
float m = 0.0f;
for (int c = t; c < cols; c += blockDim.x) m = fmaxf(m, xr[c]);
s[t] = m;
__syncthreads();
for (int st = 64; st > 0; st /= 2) { if (t < st) s[t] = fmaxf(s[t], s[t + st]); __syncthreads(); }
float mx = s[0];
__syncthreads();
float sum = 0.0f;
for (int c = t; c < cols; c += blockDim.x) sum += expf(xr[c] - mx);
s[t] = sum;
__syncthreads();
for (int st = 64; st > 0; st /= 2) { if (t < st) s[t] += s[t + st]; __syncthreads(); }
float tot = s[0];
for (int c = t; c < cols; c += blockDim.x) out[row * cols + c] = expf(xr[c] - mx) / tot;
}
"""),
    (19, 'count written by every thread', r"""
extern "C" __global__ void compact(const float* a, float* out, int* count, int n) {
__shared__ int s[256];
int t = threadIdx.x;
float v = (t < n) ? a[t] : 0.0f;
int flag = (t < n && v > 0.0f) ? 1 : 0;
s[t] = flag;
__syncthreads();
for (int o = 1; o < 256; o *= 2) { int l = (t >= o) ? s[t - o] : 0; __syncthreads(); s[t] += l; __syncthreads(); }
if (flag) out[s[t] - 1] = v;
count[0] = s[255];
}
"""),
    (19, 'serial thread-0 compaction from shared', r"""
extern "C" __global__ void compact(const float* a, float* out, int* count, int n) {
__shared__ int s[256];
int t = threadIdx.x;
__shared__ float vals[256];
vals[t] = (t < n) ? a[t] : 0.0f;
__syncthreads();
if (t == 0) { int c = 0; for (int j = 0; j < n; ++j) if (vals[j] > 0.0f) out[c++] = vals[j]; count[0] = c; }
}
"""),
    (16, 'registers for 3 elements only (cols <= 384)', r"""
extern "C" __global__ void softmax(const float* x, float* out, int rows, int cols) {
__shared__ float s[128];
int row = blockIdx.x, t = threadIdx.x;
const float* xr = x + row * cols;
float v[3]; float m = -INFINITY;
for (int q = 0; q < 3; ++q) { int c = t + q * 128; v[q] = (c < cols) ? xr[c] : -INFINITY; m = fmaxf(m, v[q]); }
s[t] = m; __syncthreads();
for (int st = 64; st > 0; st /= 2) { if (t < st) s[t] = fmaxf(s[t], s[t + st]); __syncthreads(); }
float mx = s[0]; __syncthreads();
float sum = 0.0f;
for (int q = 0; q < 3; ++q) { v[q] = expf(v[q] - mx); sum += v[q]; }
s[t] = sum; __syncthreads();
for (int st = 64; st > 0; st /= 2) { if (t < st) s[t] += s[t + st]; __syncthreads(); }
float tot = s[0];
for (int q = 0; q < 3; ++q) { int c = t + q * 128; if (c < cols) out[row * cols + c] = v[q] / tot; }
}
"""),
    (13, 'fixed 8 rounds (cols <= 1024)', r"""
extern "C" __global__ void axis_sum(const float* a, float* out, int rows, int cols) {
__shared__ float p[128];
int row = blockIdx.x, t = threadIdx.x;
float sum = 0.0f;
for (int q = 0; q < 8; ++q) { int c = t + q * 128; if (c < cols) sum += a[row * cols + c]; }
p[t] = sum; __syncthreads();
for (int s = 64; s > 0; s /= 2) { if (t < s) p[t] += p[t + s]; __syncthreads(); }
if (t == 0) out[row] = p[0];
}
"""),
]


@pytest.mark.parametrize("number, wrong, source", WRONG_BUT_PLAUSIBLE, ids=[w for _, w, _ in WRONG_BUT_PLAUSIBLE])
def test_plausible_wrong_solutions_are_rejected(number, wrong, source, capsys):
    """Solutions that broke the spec but passed: a softmax max that starts at 0 (a row below -88 gives 0/0),
    loops fixed to the tested row lengths, every thread writing or adding into the one result, thread 0
    compacting alone; the sizes (a far-negative row, longer rows) and the one-writer rules catch them."""
    ok, out = run_check(number, source, capsys)
    assert not ok, out


def test_parameters_may_have_the_learners_own_names_and_a_block_sync_is_a_barrier(capsys):
    """Arguments go by position: `dot(const float* x, const float* y, float* result, int n)` is checked
    against the access rules for `a`, `b` and `out` (it was a KeyError); a cooperative-groups block's
    sync() is a barrier between the steps."""
    ok, out = run_check(10, r'''
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void dot(const float* x, const float* y, float* result, int n) {
    __shared__ float partial[64];
    cg::thread_block block = cg::this_thread_block();
    int t = threadIdx.x;
    partial[t] = t < n ? x[t] * y[t] : 0.0f;
    block.sync();
    for (int stride = 32; stride > 0; stride /= 2) {
        if (t < stride) partial[t] += partial[t + stride];
        block.sync();
    }
    if (t == 0) result[0] = partial[0];
}''', capsys)
    assert ok, out
    ok, out = run_check(1, r'''
extern "C" __global__ void map(const float* input, float* output) {
    output[threadIdx.x] = input[threadIdx.x] + 10.0f;
}''', capsys)
    assert ok, out


def test_code_the_compiler_never_sees_keeps_no_rule(capsys):
    """A barrier inside `#if 0` is no barrier: the source rules read what the compiler reads."""
    ok, out = run_check(8, shared_puzzle(between="#if 0\n    __syncthreads();\n#endif\n"), capsys)
    assert not ok and "rule broken: wait with __syncthreads()" in out


@pytest.mark.parametrize("number, source", [
    (8, r'''
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void shared(const float* a, float* out, int n) {
    cg::thread_block block = cg::this_thread_block();
    __shared__ float buffer[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) buffer[threadIdx.x] = a[i];
    block.sync();
    if (i < n) out[i] = buffer[threadIdx.x] + 10.0f;
}'''),
    (15, r'''
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void warp_sum(const float* a, float* out, int n) {
    auto warp = cg::tiled_partition<32>(cg::this_thread_block());
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? a[i] : 0.0f;
    for (int offset = 16; offset > 0; offset /= 2) v += warp.shfl_down(v, offset);
    if (warp.thread_rank() == 0 && i < n) out[i / 32] = v;
}'''),
    (15, r'''
extern "C" __global__ void warp_sum(const float* a, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? a[i] : 0.0f;
    for (int mask = 16; mask > 0; mask >>= 1) v += __shfl_xor_sync(0xffffffff, v, mask);
    if (threadIdx.x % 32 == 0 && i < n) out[i / 32] = v;
}'''),
])
def test_the_cooperative_groups_and_butterfly_spellings_pass(number, source, capsys):
    ok, out = run_check(number, source, capsys)
    assert ok, out


def test_the_shared_puzzles_barrier_must_come_between_the_store_and_the_read(capsys):
    """Each thread reads back its own slot, so a barrier before the store gives the right answer and
    no race: the rule reads the order in the source."""
    early = r'''
extern "C" __global__ void shared(const float* a, float* out, int n) {
    __shared__ float buffer[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    __syncthreads();
    if (i < n) buffer[threadIdx.x] = a[i];
    if (i < n) out[i] = buffer[threadIdx.x] + 10.0f;
}'''
    ok, out = run_check(8, early, capsys)
    assert not ok and "after storing into the shared array and before reading it" in out
    ok, out = run_check(8, early.replace("    __syncthreads();\n", "").replace(
        "a[i];\n", "a[i];\n    __syncthreads();\n"), capsys)
    assert ok, out


@pytest.mark.parametrize("number, source", [
    (4, r'''
extern "C" __global__ void map_2d(const float* a, float* out, int n) {
    int i = threadIdx.y * n + threadIdx.x;
    if (i < n * n) out[i] = a[i] + 10.0f;
}'''),
    (7, r'''
extern "C" __global__ void blocks_2d(const float* a, float* out, int rows, int cols) {
    int r = blockIdx.y * blockDim.y + threadIdx.y, c = blockIdx.x * blockDim.x + threadIdx.x;
    int i = r * cols + c;
    if (i < rows * cols) out[i] = a[i] + 10.0f;
}'''),
])
def test_a_flat_guard_in_a_2d_puzzle_is_caught(number, source, capsys):
    """Threads past a row's end store the next row's elements again, with the same values: the
    answer is right, and the trace shows two threads storing one element."""
    ok, out = run_check(number, source, capsys)
    assert not ok and "each element of `out` is written by one thread" in out and "guard each coordinate" in out
    # f12: the nudge fits the failure (the puzzle's own points at the indexing, which is right here)
    checks._hints_given.pop(f"puzzle {number} ({kp.puzzle(number).name})", None)
    assert "look at your guard" in checks.hint() and kp.puzzle(number).hints[1] in checks.hint()


def test_source_rules_read_what_the_compiler_reads():
    """`#if 0` / `#if 1` branches (and their #elif / #else) as the preprocessor takes them; any other
    condition keeps both branches."""
    source = "\n".join(["a", "#if 0", "x", "#else", "b", "#endif", "#if 1", "c", "#elif X", "d", "#else", "e",
                        "#endif", "#if 0", "f", "#elif Y", "g", "#else", "h", "#endif", "#ifdef Z", "i", "#else", "j",
                        "#endif", "#if 0", "#if 1", "k", "#endif", "#endif", "end // __syncthreads()"])
    assert kp._strip_comments(source).split() == ["a", "b", "c", "g", "h", "i", "j", "end"]


def test_the_shared_puzzles_barrier_rule_takes_a_pointer_and_a_2d_array(capsys):
    """Correct kernels that store through `float* s = buffer[0];` (or into buffer[0][t]) keep the rule."""
    through_pointer = r'''
extern "C" __global__ void shared(const float* a, float* out, int n) {
    __shared__ float buffer[1][32];
    float* s = buffer[0];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) s[threadIdx.x] = a[i];
    __syncthreads();
    if (i < n) out[i] = s[threadIdx.x] + 10.0f;
}'''
    ok, out = run_check(8, through_pointer, capsys)
    assert ok, out
    ok, out = run_check(8, through_pointer.replace("s[threadIdx.x] = a[i]", "buffer[0][threadIdx.x] = a[i]"), capsys)
    assert ok, out


def test_float_puzzles_use_fractions_so_an_int_on_the_way_is_wrong(capsys):
    """The inputs are quarters: a kernel that keeps a value in an int (a copied `__shared__ int` buffer)
    gives a wrong element, which integer-valued inputs never showed."""
    assert np.any(kp.puzzle(1).case(100)["a"] % 1 != 0)
    ok, out = run_check(1, r'''
extern "C" __global__ void map(const float* a, float* out) {
    int v = a[threadIdx.x];
    out[threadIdx.x] = v + 10;
}''', capsys)
    assert not ok and "elements of `out` are wrong" in out


@pytest.mark.parametrize("number, sizes", [(13, (1, 2900)), (14, (9, 70, 7)), (20, (6, 101, 10))])
def test_tiled_puzzles_have_a_size_past_a_few_tiles(number, sizes):
    """A kernel that loops over a fixed number of tiles (or rows unrolled to a fixed length) fails somewhere."""
    assert sizes in kp.puzzle(number).sizes


def test_softmax_data_catches_a_max_that_starts_too_high_or_sees_part_of_the_row():
    case = kp.puzzle(16).case((3, 300), 0)
    x = case["x"]
    assert x[1].max() < -200  # a running max that starts at -100 gives 0/0 there
    assert x[2, 128:].max() > x[2, :128].max() + 100  # a max over the first 128 columns overflows exp


def test_check_explains_bad_input_instead_of_calling_it_not_attempted(capsys):
    assert kp.check(21, "x") is False and "no puzzle 21" in capsys.readouterr().out
    assert kp.check(1, b'extern "C" __global__ void map() {}') is False
    assert "pass it as a str" in capsys.readouterr().out
    assert kp.check(1, "def map(a):\n    return a + 10") is False
    assert "no kernel in the source" in capsys.readouterr().out
    ok, out = run_check(8, shared_puzzle(declaration="extern __shared__ float buffer[];"), capsys)
    assert not ok and "declare an array of fixed size" in out


def test_the_repeated_blocks_warning_is_not_shown_by_the_grader(capsys):
    """The wrong elements say it, and the warning's fix would spell out the blocks puzzle's answer."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ok, out = run_check(6, r'''
extern "C" __global__ void blocks(const float* a, float* out, int n) {
    int i = threadIdx.x;
    if (i < n) out[i] = a[i] + 10.0f;
}''', capsys)
    assert not ok and not [w for w in caught if "more than one block" in str(w.message)
                           or "blockIdx" in str(w.message)]


@pytest.mark.parametrize("number", [5, 8, 9, 10, 11, 13, 14, 15, 16, 17, 18, 19, 20])
def test_the_second_hint_is_the_method_not_the_code(number):
    """probe 14 and f12: these second hints were the solution statement by statement (`__shared__ float
    buffer[32]; ...`, `place = inclusive - flag`, `row * cols + col`)."""
    method = kp.puzzle(number).hints[1]
    assert not any(code in method for code in ("[", "+=", "==", "__", "(0x", "i < n", "threadIdx", " = ", " * ",
                                               " < ", " - ", "expf", "fmaxf")), method


MAP_2D = kp.puzzle("map_2d").number
SPOILING_FAULTS = [
    (8, r'''
extern "C" __global__ void shared(const float* a, float* out, int n) {
    __shared__ float s[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) s[i] = a[i];
    __syncthreads();
    if (i < n) out[i] = s[i] + 10;
}''', "each block has its own s", "s[threadIdx.x]", "which index tells a thread's place within its own block"),
    (7, r'''
extern "C" __global__ void blocks_2d(const float* a, float* out, int rows, int cols) {
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows && c < cols) out[c * cols + r] = a[c * cols + r] + 10;
}''', "`c` counts columns", "r * cols + c", "which of your two indices says which row?"),
    (18, r'''
extern "C" __global__ void stencil(const float* a, float* out, int rows, int cols) {
    __shared__ float tile[16][16];
    int r = blockIdx.y * 16 + threadIdx.y, c = blockIdx.x * 16 + threadIdx.x;
    tile[threadIdx.y + 1][threadIdx.x + 1] = (r < rows && c < cols) ? a[r * cols + c] : 0.0f;
    __syncthreads();
    if (r < rows && c < cols) out[r * cols + c] = 4 * tile[threadIdx.y + 1][threadIdx.x + 1];
}''', "`threadIdx.x + 1` reaches 16", "16 + 2", "how many extra elements does a halo of 1 add"),
    (MAP_2D, r'''
extern "C" __global__ void map_2d(const float* a, float* out, int n) {
    int r = threadIdx.y, c = threadIdx.x;
    out[r * n + c] = a[r * n + c] + 10.0f;
}''', "but a has 1 element", "r < n && c < n", "which rows and columns lie inside the array"),
]


@pytest.mark.parametrize("number, source, diagnosis, answer, question", SPOILING_FAULTS,
                         ids=["shared", "blocks_2d", "stencil", "map_2d"])
def test_fault_hints_that_spell_out_an_answer_keep_the_diagnosis_and_ask_instead(number, source, diagnosis, answer,
                                                                                 question, capsys):
    """The emulator's hints for a grid-wide index into shared memory, a row-major index with row and column
    swapped, and a tile without room for its halo say the fix in code; the grader keeps what is wrong and asks."""
    ok, out = run_check(number, source, capsys)
    assert not ok and diagnosis in out and question in out and answer not in out


def test_the_shared_puzzles_barrier_rule_reads_the_run_not_the_spelling(capsys):
    """f01/f13: a store made by a __device__ helper through `*(s + t)`, the barrier behind `#define WAIT`, and
    threads past the end that return before it (exited threads are not waited for: accepted, as the hint says)
    are a correct kernel; the rule checks that a barrier ran between the stores and the reads."""
    ok, out = run_check(8, r'''
#define WAIT __syncthreads()
__device__ void put(float* s, float v) { *(s + threadIdx.x) = v; }
extern "C" __global__ void shared(const float* a, float* out, int n) {
    __shared__ float buffer[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    put(buffer, a[i]);
    WAIT;
    out[i] = *(buffer + threadIdx.x) + 10.0f;
}''', capsys)
    assert ok, out
    method = kp.puzzle(8).hints[1]
    assert "no `if` hides" not in method and "returned" in method


def test_a_barrier_or_shuffle_in_dead_code_or_a_forbidden_call_behind_a_macro_breaks_the_rule(capsys):
    """f02/f03/f04: the source rules read the preprocessed source (an #ifdef of an undefined macro is gone,
    `#define ADD atomicAdd` is an atomic), and the barrier and the shuffle must run (`if (0)` is no use)."""
    barrier, shuffle = kp.puzzle(8).rules[1], kp.puzzle(15).rules[0]
    assert barrier.broken_in_source(shared_puzzle(between="#ifdef DEBUG_SYNC\n    __syncthreads();\n#endif\n"))
    assert barrier.broken_in_source(shared_puzzle(between="#define WAIT __syncthreads()\n    WAIT;\n")) is None
    down = "    v += __shfl_down_sync(0xffffffff, v, 1);\n"
    warp_sum = ('extern "C" __global__ void warp_sum(const float* a, float* out, int n) {\n'
                "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                "    float v = i < n ? a[i] : 0.f;\nDEAD"
                "    float total = 0;\n"
                "    for (int k = 0; k < 32; ++k) total += __shfl_sync(0xffffffff, v, k);\n"
                "    if (threadIdx.x % 32 == 0 && i < n) out[i / 32] = total;\n}\n")
    assert shuffle.broken_in_source(warp_sum.replace("DEAD", "#ifdef USE_DOWN\n" + down + "#endif\n"))
    atomics = [r for r in kp.puzzle(19).rules if "no atomics" in r.text][0]
    assert atomics.broken_in_source('#define ADD atomicAdd\nextern "C" __global__ void compact(int* c) { ADD(c, 1); }')
    ok, out = run_check(8, shared_puzzle(between="    if (0) __syncthreads();\n"), capsys)
    assert not ok and "no barrier ran between the stores and the reads" in out
    ok, out = run_check(15, warp_sum.replace("DEAD", "    if (0)" + down[3:]), capsys)
    assert not ok and "no __shfl_down_sync or __shfl_xor_sync ran" in out


def test_the_stencil_read_rule_is_traced_where_a_corner_thread_has_cells_on_two_sides():
    """f05: a corner thread of the notebook's solution loads its cell and two halo cells: the rule allows 3
    and is traced on a size where a block's corner has image cells on both sides, so a kernel that also
    loads the (unneeded) diagonal corner cell, 4 reads there, breaks it."""
    p = kp.puzzle(18)
    corners = r'''
#define T 16
extern "C" __global__ void stencil(const float* a, float* out, int rows, int cols) {
    __shared__ float tile[T + 2][T + 2];
    int tx = threadIdx.x, ty = threadIdx.y, col = blockIdx.x * T + tx, row = blockIdx.y * T + ty;
    #define AT(r, c) (((r) >= 0 && (r) < rows && (c) >= 0 && (c) < cols) ? a[(r) * cols + (c)] : 0.0f)
    tile[ty + 1][tx + 1] = AT(row, col);
    if (tx == 0) tile[ty + 1][0] = AT(row, col - 1);
    if (tx == T - 1) tile[ty + 1][T + 1] = AT(row, col + 1);
    if (ty == 0) tile[0][tx + 1] = AT(row - 1, col);
    if (ty == T - 1) tile[T + 1][tx + 1] = AT(row + 1, col);
    if (tx == T - 1 && ty == T - 1) tile[T + 1][T + 1] = AT(row + 1, col + 1);
    __syncthreads();
    if (row < rows && col < cols)
        out[row * cols + col] = 4.0f * tile[ty + 1][tx + 1] - tile[ty][tx + 1] - tile[ty + 2][tx + 1]
                                - tile[ty + 1][tx] - tile[ty + 1][tx + 2];
}'''
    broken = kp._trace_rules(p, corners)
    assert broken and "reads `a` 4 times (at most 3 here)" in broken[1], broken
    assert "at most three times" in p.spec and "at most 3 times" in broken[0].text


def test_a_histogram_counted_before_its_zeroing_is_a_missing_barrier(capsys):
    """Puzzle 17 without the barrier after zeroing: thread 0 counted into h[13] before thread 13 zeroed it. The
    hint said no thread wrote h[13] (check which threads reach the write), where the zeroing's guard `t < 16` holds
    for thread 13: the missing __syncthreads() is the fix (red team 12-06)."""
    ok, out = run_check(17, r'''
extern "C" __global__ void histogram(const int* a, unsigned int* bins, int n) {
    __shared__ unsigned int h[16];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    if (t < 16) h[t] = 0;
    if (i < n) atomicAdd(&h[a[i]], 1u);
    __syncthreads();
    if (t < 16) atomicAdd(&bins[t], h[t]);
}''', capsys)
    assert not ok
    assert re.search(r"Thread \((\d+), 0, 0\) writes h\[\1\] at line 5 .* Add __syncthreads\(\) between line 5 and line 6", out), out
