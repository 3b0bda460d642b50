"""Notebook 03's exercise checks: the stub is "not attempted", the notebook's solution passes, and the
wrong answers learners give — right results with the old memory behaviour, racy kernels, wrong values —
fail with a diagnosis that names the line or the figure."""

import json
import pathlib
import re

import pytest

from course import checks
from course.exercises import inside_the_gpu as ex

NOTEBOOK = pathlib.Path(__file__).resolve().parent.parent / "notebooks" / "03_inside_the_gpu.ipynb"


@pytest.fixture(autouse=True)
def cpu_backend(monkeypatch):
    monkeypatch.setenv("COURSE_CUDA_BACKEND", "cpu")


def notebook_solutions() -> dict:
    """The kernels (by variable name) and functions the notebook's folded solution cells define."""
    found = {}
    for cell in json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]:
        text = "".join(cell["source"])
        if cell["cell_type"] == "code" and text.startswith("# @title Solution"):
            body = "\n".join(line for line in text.splitlines() if not line.startswith("assert ex."))
            namespace = {}
            exec(compile(body, "solution", "exec"), {"occupancy": ex.occ.occupancy}, namespace)
            found.update(namespace)
    return found


SOLUTIONS = notebook_solutions()
CHECKS = {"SCALE": ex.check_coalesced, "TRANSPOSE32": ex.check_no_bank_conflicts,
          "BLOCK_SUM": ex.check_divergence_free_reduction, "COPY4": ex.check_vectorised_copy,
          "smallest_best_block": ex.check_smallest_full_block}
STARTER_OF = {"SCALE": "scale", "TRANSPOSE32": "transpose32", "BLOCK_SUM": "block_sum", "COPY4": "copy4"}


def run(check, answer, capsys):
    ok = check(answer)
    return ok, capsys.readouterr().out


def test_every_exercise_has_a_solution_cell():
    assert set(SOLUTIONS) >= set(CHECKS)


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_notebook_solution_passes(name, capsys):
    ok, out = run(CHECKS[name], SOLUTIONS[name], capsys)
    assert ok, out


@pytest.mark.parametrize("name", sorted(STARTER_OF))
def test_starter_is_not_attempted_and_matches_the_notebook(name, capsys):
    cells = ["".join(c["source"]) for c in json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]]
    assert any(ex._same_code(re.sub(r"^\w+ = r'''|'''\s*$", "", c.strip()), ex.STARTERS[STARTER_OF[name]])
               for c in cells if c.startswith(f"{name} = r'''")), "the notebook's stub differs from STARTERS"
    ok, out = run(CHECKS[name], ex.STARTERS[STARTER_OF[name]], capsys)
    assert not ok and "not attempted" in out


def test_a_starter_rewritten_but_not_fixed_is_judged_by_its_memory_behaviour(capsys):
    ok, out = run(ex.check_coalesced, ex.STARTERS["scale"].replace("2.0f * a[r * cols + c]", "a[r * cols + c] * 2.0f"), capsys)
    assert not ok and "right answer, but line 6 reads" in out and "sectors per request" in out
    given = checks.hint() + checks.hint()  # the nudge, then the method: never the code itself
    assert "Look at which addresses" in given and "Which of the two" in given and "cols + c]" not in given


def test_unpadded_tile_and_wrong_transpose_are_told_apart(capsys):
    unpadded = ex.STARTERS["transpose32"].replace("int ox = blockIdx.y * TILE", "int ox = TILE * blockIdx.y")
    ok, out = run(ex.check_no_bank_conflicts, unpadded, capsys)
    assert not ok and "bank conflicts remain" in out and "32-way" in out and "line 11" in out
    not_transposed = SOLUTIONS["TRANSPOSE32"].replace("tile[threadIdx.x][dy]", "tile[dy][threadIdx.x]")
    ok, out = run(ex.check_no_bank_conflicts, not_transposed, capsys)
    assert not ok and "values wrong" in out


def test_interleaved_reduction_diverges_and_a_racy_one_is_caught(capsys):
    ok, out = run(ex.check_divergence_free_reduction, ex.STARTERS["block_sum"].replace("if (t % (2 * stride) == 0)",
                                                                                "if ((t % (2 * stride)) == 0)"), capsys)
    assert not ok and "diverges in" in out and "line 8" in out
    racy = SOLUTIONS["BLOCK_SUM"].replace("            s[t] += s[t + stride];\n        __syncthreads();",
                                          "            s[t] += s[t + stride];")
    assert racy != SOLUTIONS["BLOCK_SUM"]
    ok, out = run(ex.check_divergence_free_reduction, racy, capsys)
    assert not ok and "KernelError" in out and "__syncthreads" in out


def test_scalar_copy_is_not_a_vectorised_one(capsys):
    scalar = r'''
extern "C" __global__ void copy4(const float* in, float* out, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        out[i] = in[i];
}'''
    ok, out = run(ex.check_vectorised_copy, scalar, capsys)
    assert not ok and "load requests" in out
    no_tail = SOLUTIONS["COPY4"].replace("if (i < n % 4)", "if (false)")
    ok, out = run(ex.check_vectorised_copy, no_tail, capsys)
    assert not ok and "values wrong" in out


def test_occupancy_answers_that_ignore_ties_or_limits_fail(capsys):
    ok, out = run(ex.check_smallest_full_block, lambda gpu, registers, shared: 1024, capsys)
    assert not ok

    def largest_best(gpu, registers, shared):  # keeps the last size that reaches the best, not the first
        best, size = -1.0, None
        for threads in range(32, 1025, 32):
            try:
                o = ex.occ.occupancy(threads, gpu_name=gpu, registers_per_thread=registers,
                                     shared_bytes=shared).occupancy
            except ValueError:
                continue
            if o >= best:
                best, size = o, threads
        return size

    ok, out = run(ex.check_smallest_full_block, largest_best, capsys)
    assert not ok


def test_a_guard_one_too_far_and_hard_coded_sizes_are_caught(capsys):
    """probe 14: `i <= n / 4` (a float4 past the end) passed because the grid had exactly n / 4 threads, and
    kernels that hard-code the check's one size passed; the checks now launch a spare block and a second size."""
    ok, out = run(ex.check_vectorised_copy, SOLUTIONS["COPY4"].replace("if (i < n / 4)", "if (i <= n / 4)"), capsys)
    assert not ok and "accessed in[" in out and "float4" not in out.split("❌")[0], out
    hard = SOLUTIONS["COPY4"].replace("if (i < n / 4)", "if (i < 1024)").replace("(n / 4) * 4 + i", "4096 + i") \
        .replace("if (i < n % 4)", "if (i < 3)")
    ok, out = run(ex.check_vectorised_copy, hard, capsys)
    assert not ok and "n = 1201" in out, out
    ok, out = run(ex.check_coalesced, SOLUTIONS["SCALE"].replace("r * cols + c", "r * 256 + c"), capsys)
    assert not ok and "37 × 300" in out, out
    ok, out = run(ex.check_no_bank_conflicts, SOLUTIONS["TRANSPOSE32"].replace("* n +", "* 64 +"), capsys)
    assert not ok and "96 × 96" in out, out


def test_a_reduction_that_finishes_with_warp_shuffles_is_divergence_free(capsys):
    """The tree down to 32, then one warp's shuffles and one writer: the writer's `if (t == 0)`, reached by that
    warp only, diverges there in every block, which is no divergence to remove (probe 14: refused)."""
    finish = r'''
extern "C" __global__ void block_sum(const float* x, float* out, int n) {
    __shared__ float s[256];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride >= 32; stride >>= 1) {
        if (t < stride) s[t] += s[t + stride];
        __syncthreads();
    }
    if (t < 32) {
        float v = s[t];
        for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
        if (t == 0) out[blockIdx.x] = v;
    }
}'''
    ok, out = run(ex.check_divergence_free_reduction, finish, capsys)
    assert ok, out


SHUFFLE_SUM = r'''
extern "C" __global__ void block_sum(const float* x, float* out, int n) {
    __shared__ float w[8];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    float v = (i < n) ? x[i] : 0.0f;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
    if ((t & 31) == 0) w[t >> 5] = v;
    __syncthreads();
    if (t < 32) {
        v = (t < (int)(blockDim.x >> 5)) ? w[t] : 0.0f;
        for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
        if (t == 0) out[blockIdx.x] = v;
    }
}'''


def test_a_shuffle_reduction_passes_and_one_thread_summing_the_block_does_not(capsys):
    """Each warp's lane 0 storing its sum is a branch one lane per warp takes, in every warp: part of the pattern
    (it was 100 % divergent). Thread 0 adding all 256 values serially has no divergence, and no tree."""
    ok, out = run(ex.check_divergence_free_reduction, SHUFFLE_SUM, capsys)
    assert ok, out
    serial = SOLUTIONS["BLOCK_SUM"]
    serial = serial[:serial.index("for")] + ("if (t == 0) { float a = 0; for (int k = 0; k < blockDim.x; ++k) "
                                             "a += s[k]; out[blockIdx.x] = a; }\n}\n")
    ok, out = run(ex.check_divergence_free_reduction, serial, capsys)
    assert not ok and "reads 257 values by itself" in out and "no parallel tree" in out, out


def test_a_column_guard_one_too_far_and_a_tail_every_block_stores_are_caught(capsys):
    """The second launch of check_coalesced has more threads than columns (`c <= cols` passed with exactly cols
    threads); copy4's tail stored by every block's first threads is the blocks repeating each other's work."""
    ok, out = run(ex.check_coalesced, SOLUTIONS["SCALE"].replace("c < cols", "c <= cols"), capsys)
    assert not ok and "37 × 300" in out and "accessed" in out, out
    every_block = SOLUTIONS["COPY4"].replace("if (i < n % 4)", "if (threadIdx.x < n % 4)") \
        .replace("(n / 4) * 4 + i", "(n / 4) * 4 + threadIdx.x")
    assert every_block != SOLUTIONS["COPY4"]
    ok, out = run(ex.check_vectorised_copy, every_block, capsys)
    assert not ok and "stored by more than one block" in out, out


def test_an_occupancy_search_that_stops_short_of_1024_fails(capsys):
    def stops_at(stop):
        def search(gpu, registers, shared_bytes):
            best, size = -1.0, None
            for threads in range(32, stop, 32):
                try:
                    o = ex.occ.occupancy(threads, gpu_name=gpu, registers_per_thread=registers,
                                         shared_bytes=shared_bytes).occupancy
                except ValueError:
                    continue
                if o > best + 1e-12:
                    best, size = o, threads
            return size
        return search

    assert run(ex.check_smallest_full_block, stops_at(1025), capsys)[0]
    for stop in (513, 1024):
        ok, out = run(ex.check_smallest_full_block, stops_at(stop), capsys)
        assert not ok and "expected 1024" in out, out


def test_a_wrong_value_is_printed_as_a_number(capsys):
    import numpy as np

    ex._wrong("x", np.float32([1, 2]), np.float32([1, 3]), "out")
    out = capsys.readouterr().out
    assert "expected 3.0, got 2.0" in out and "np.float32" not in out, out
