"""Notebook 01's exercise checks: the stub is "not attempted", the most common wrong answer of each
exercise is ❌ with a specific diagnosis, and the reference passes (on the CPU backend)."""

import json
import pathlib
import warnings

import pytest

import course.cuda as cuda
from course import checks
from course.exercises import cuda_basics as ex

NOTEBOOK = pathlib.Path(__file__).resolve().parent.parent / "notebooks" / "01_cuda_basics.ipynb"


@pytest.fixture(autouse=True)
def cpu_backend(monkeypatch):
    monkeypatch.setenv("COURSE_CUDA_BACKEND", "cpu")


def kernel(signature: str, body: str, prelude: str = "") -> str:
    return f'{prelude}\nextern "C" __global__ void {signature} {{\n{body}\n}}\n'


SAXPY_SIG = "saxpy(float a, const float* x, float* y, int n)"
SAXPY_OK = kernel(SAXPY_SIG, "int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i];")
SAXPY_NO_GUARD = kernel(SAXPY_SIG, "int i = blockIdx.x * blockDim.x + threadIdx.x; y[i] = a * x[i] + y[i];")

ADD_SIG = "matrix_add(const float* a, const float* b, float* c, int rows, int cols)"
ADD_OK = kernel(ADD_SIG, """
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < rows && col < cols) c[row * cols + col] = a[row * cols + col] + b[row * cols + col];""")
ADD_SWAPPED = kernel(ADD_SIG, """
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    int col = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < rows && col < cols) c[row * cols + col] = a[row * cols + col] + b[row * cols + col];""")

STRIDE_SIG = "saxpy_grid_stride(float a, const float* x, float* y, int n)"
STRIDE_OK = kernel(STRIDE_SIG, """
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        y[i] = a * x[i] + y[i];""")
STRIDE_BLOCK_ONLY = kernel(STRIDE_SIG, """
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x)
        y[i] = a * x[i] + y[i];""")
STRIDE_NO_LOOP = SAXPY_OK.replace("saxpy(", "saxpy_grid_stride(")

T_SIG = "transpose(const float* in, float* out, int rows, int cols)"
T_PRE = "#define TILE 16"
TRANSPOSE_OK = kernel(T_SIG, """
    __shared__ float tile[TILE][TILE + 1];
    int col = blockIdx.x * TILE + threadIdx.x;
    int row = blockIdx.y * TILE + threadIdx.y;
    if (row < rows && col < cols) tile[threadIdx.y][threadIdx.x] = in[row * cols + col];
    __syncthreads();
    int out_row = blockIdx.x * TILE + threadIdx.y;
    int out_col = blockIdx.y * TILE + threadIdx.x;
    if (out_row < cols && out_col < rows) out[out_row * rows + out_col] = tile[threadIdx.x][threadIdx.y];""", T_PRE)
TRANSPOSE_NAIVE = kernel(T_SIG, """
    int col = blockIdx.x * TILE + threadIdx.x;
    int row = blockIdx.y * TILE + threadIdx.y;
    if (row < rows && col < cols) out[col * rows + row] = in[row * cols + col];""", T_PRE)
TRANSPOSE_DETOUR = kernel(T_SIG, """
    __shared__ float tile[TILE][TILE + 1];
    int col = blockIdx.x * TILE + threadIdx.x;
    int row = blockIdx.y * TILE + threadIdx.y;
    if (row < rows && col < cols) tile[threadIdx.y][threadIdx.x] = in[row * cols + col];
    __syncthreads();
    if (row < rows && col < cols) out[col * rows + row] = tile[threadIdx.y][threadIdx.x];""", T_PRE)
TRANSPOSE_SQUARE_ONLY = TRANSPOSE_OK.replace("out[out_row * rows + out_col]", "out[out_row * cols + out_col]")

SUM_FIXED = ex.BLOCK_SUM_BUGGY.replace(
    "    cache[t] = (i < n) ? x[i] : 0.0f;\n", "    cache[t] = (i < n) ? x[i] : 0.0f;\n    __syncthreads();\n"
).replace("""        if (t < stride) {
            cache[t] += cache[t + stride];
            __syncthreads();
        }""", """        if (t < stride)
            cache[t] += cache[t + stride];
        __syncthreads();""")
SUM_LOOP_ONLY = ex.BLOCK_SUM_BUGGY.replace("""        if (t < stride) {
            cache[t] += cache[t + stride];
            __syncthreads();
        }""", """        if (t < stride)
            cache[t] += cache[t + stride];
        __syncthreads();""")

MAX_SIG = "block_max(const float* x, float* partial, int n)"
MAX_BODY = """
    __shared__ float warp_maxes[THREADS / 32];
    int t = threadIdx.x, lane = t % 32, warp = t / 32;
    int i = blockIdx.x * blockDim.x + t;
    float v = (i < n) ? x[i] : __int_as_float(0xff800000);
    for (int offset = 16; offset > 0; offset /= 2)
        v = fmaxf(v, __shfl_down_sync(0xffffffff, v, offset));
    if (lane == 0) warp_maxes[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = (lane < blockDim.x / 32) ? warp_maxes[lane] : __int_as_float(0xff800000);
        for (int offset = 16; offset > 0; offset /= 2)
            v = fmaxf(v, __shfl_down_sync(0xffffffff, v, offset));
        if (lane == 0) partial[blockIdx.x] = v;
    }"""
MAX_OK = kernel(MAX_SIG, MAX_BODY, "#define THREADS 256")
MAX_ZERO_PADDING = kernel(MAX_SIG, MAX_BODY.replace("__int_as_float(0xff800000)", "0.0f"), "#define THREADS 256")
MAX_SHARED_TREE = kernel(MAX_SIG, """
    __shared__ float cache[THREADS];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    cache[t] = (i < n) ? x[i] : __int_as_float(0xff800000);
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (t < stride) cache[t] = fmaxf(cache[t], cache[t + stride]);
        __syncthreads();
    }
    if (t == 0) partial[blockIdx.x] = cache[0];""", "#define THREADS 256")

DOT_SIG = "dot(const float* x, const float* y, float* result, int n)"
DOT_BODY = """
    __shared__ float cache[THREADS];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    cache[t] = (i < n) ? x[i] * y[i] : 0.0f;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (t < stride) cache[t] += cache[t + stride];
        __syncthreads();
    }
    if (t == 0) atomicAdd(result, cache[0]);"""
DOT_OK = kernel(DOT_SIG, DOT_BODY, "#define THREADS 256")
DOT_PLAIN_STORE = kernel(DOT_SIG, DOT_BODY.replace("atomicAdd(result, cache[0])", "result[0] += cache[0]"),
                         "#define THREADS 256")

CASES = {
    "saxpy": (ex.check_saxpy, SAXPY_OK, SAXPY_NO_GUARD, "accessed x[1], but x has 1 element"),
    "matrix_add": (ex.check_matrix_add, ADD_OK, ADD_SWAPPED, "values differ; first at index"),
    "saxpy_grid_stride": (ex.check_saxpy_grid_stride, STRIDE_OK, STRIDE_BLOCK_ONLY, "values differ; first at index"),
    "transpose": (ex.check_transpose, TRANSPOSE_OK, TRANSPOSE_NAIVE, "declares no __shared__ tile"),
    "block_sum_fixed": (ex.check_block_sum_fixed, SUM_FIXED, SUM_LOOP_ONLY, "differ"),
    "block_max": (ex.check_block_max, MAX_OK, MAX_ZERO_PADDING, "expected"),
    "dot": (ex.check_dot, DOT_OK, DOT_PLAIN_STORE, "plain read-add-write"),
}


def stubs() -> dict:
    """The exercise cells of notebook 01, by kernel name."""
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    found = {}
    for cell in cells:
        if "exercise" in cell.get("metadata", {}).get("tags", []):
            source = "".join(cell["source"])
            start = source.index("r'''") + 4
            kernel_source = source[start:source.index("'''", start)]
            for name in CASES:
                if f"void {name}(" in kernel_source:
                    found[name] = kernel_source
    return found


@pytest.mark.parametrize("name", list(CASES))
def test_reference_passes(name, capsys):
    check, right, _, _ = CASES[name]
    assert check(right), capsys.readouterr().out
    assert "✅" in capsys.readouterr().out


# The CPU backend's race checker (when present) names a race before the values show it.
RACE_DIAGNOSES = {"saxpy_grid_stride": "check how the index is computed", "block_sum_fixed": "before thread"}


# The launch warnings (course.cuda.kernel.launch_warnings) that go with some wrong answers: a bug with no bad access
LAUNCH_WARNINGS = {"matrix_add": r"col = 32 gets no thread.*axes the other way round",
                   "saxpy_grid_stride": r"steps by one block \(`i \+= blockDim\.x`\)"}


@pytest.mark.parametrize("name", list(CASES))
def test_most_common_wrong_answer_fails_with_a_diagnosis(name, capsys):
    check, _, wrong, diagnosis = CASES[name]
    if name in LAUNCH_WARNINGS:
        with pytest.warns(cuda.KernelWarning, match=LAUNCH_WARNINGS[name]):
            assert check(wrong) is False
    else:
        assert check(wrong) is False
    out = capsys.readouterr().out
    assert "❌" in out and (diagnosis in out or RACE_DIAGNOSES.get(name, diagnosis) in out), out
    assert "💡" not in out  # a check never prints a hint


@pytest.mark.parametrize("name", list(CASES))
def test_notebook_stub_is_not_attempted(name, capsys):
    stub = stubs()[name]
    assert CASES[name][0](stub) is False
    assert checks.NOT_ATTEMPTED in capsys.readouterr().out


def test_grid_stride_without_a_loop_misses_the_tail(capsys):
    with pytest.warns(cuda.KernelWarning, match=r"i = 96 to 99 gets no thread.*or loop"):
        assert ex.check_saxpy_grid_stride(STRIDE_NO_LOOP) is False
    assert "values differ" in capsys.readouterr().out   # no race here: elements past the grid are never written


def test_transpose_through_the_tile_without_swapping_is_still_rejected(capsys):
    assert ex.check_transpose(TRANSPOSE_DETOUR) is False
    out = capsys.readouterr().out
    assert "the values are right, but line" in out and "sectors per request, where a coalesced access moves 4" in out
    assert "indices it was filled with" in out


@pytest.mark.parametrize("variant", [
    # a 1-D tile with padding, the load through a register, parameters named src and dst (probe 14: each was
    # rejected by a rule that read one way of writing the kernel; the rule now reads the access profile)
    TRANSPOSE_OK.replace("tile[TILE][TILE + 1]", "tile[TILE * (TILE + 1)]")
                .replace("tile[threadIdx.y][threadIdx.x]", "tile[threadIdx.y * (TILE + 1) + threadIdx.x]")
                .replace("tile[threadIdx.x][threadIdx.y]", "tile[threadIdx.x * (TILE + 1) + threadIdx.y]"),
    TRANSPOSE_OK.replace("if (row < rows && col < cols) tile[threadIdx.y][threadIdx.x] = in[row * cols + col];",
                         "float v = 0.0f;\n    if (row < rows && col < cols) v = in[row * cols + col];\n"
                         "    tile[threadIdx.y][threadIdx.x] = v;"),
    TRANSPOSE_OK.replace("const float* in, float* out", "const float* src, float* dst")
                .replace("in[", "src[").replace("out[", "dst["),
])
def test_transposes_written_other_ways_are_accepted(variant, capsys):
    assert ex.check_transpose(variant) is True, capsys.readouterr().out


def test_transpose_right_only_on_square_matrices_reports_the_values(capsys):
    assert ex.check_transpose(TRANSPOSE_SQUARE_ONLY) is False
    out = capsys.readouterr().out
    assert "❌" in out and ("differ" in out or "accessed out[" in out), out


def test_block_max_without_shuffles_is_rejected(capsys):
    assert ex.check_block_max(MAX_SHARED_TREE) is False
    assert "uses no warp shuffle" in capsys.readouterr().out


def test_block_sum_barrier_inside_the_branch_is_caught(capsys):
    only_first = ex.BLOCK_SUM_BUGGY.replace(
        "    cache[t] = (i < n) ? x[i] : 0.0f;\n", "    cache[t] = (i < n) ? x[i] : 0.0f;\n    __syncthreads();\n")
    assert ex.check_block_sum_fixed(only_first) is False
    assert "__syncthreads" in capsys.readouterr().out


def test_hints_are_progressive_and_never_code(capsys):
    ex.check_transpose(TRANSPOSE_NAIVE)
    first = checks.hint()
    second = checks.hint()
    assert "hint 1 of 2" in first and "hint 2 of 2" in second
    for text in (first, second):
        assert "out[" not in text and "tile[" not in text and " = " not in text


MAX_COOPERATIVE_GROUPS = kernel(MAX_SIG, """
    namespace cg = cooperative_groups;
    __shared__ float warps[THREADS / 32];
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : __int_as_float(0xff800000);
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, warp.shfl_down(v, o));
    if (warp.thread_rank() == 0) warps[threadIdx.x / 32] = v;
    block.sync();
    if (threadIdx.x < 32) {
        v = threadIdx.x < THREADS / 32 ? warps[threadIdx.x] : __int_as_float(0xff800000);
        for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, warp.shfl_down(v, o));
        if (threadIdx.x == 0) partial[blockIdx.x] = v;
    }""", "#include <cooperative_groups.h>\n#define THREADS 256")
DOT_ONE_ATOMIC_PER_ELEMENT = kernel(DOT_SIG, """
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(result, x[i] * y[i]);""")


def test_a_cooperative_groups_shuffle_is_a_warp_shuffle(capsys):
    """probe 14: `warp.shfl_down(v, o)` of a thread_block_tile<32> was refused as "uses no warp shuffle"."""
    assert ex.check_block_max(MAX_COOPERATIVE_GROUPS) is True, capsys.readouterr().out


def test_a_dot_product_without_a_block_reduction_is_rejected(capsys):
    """One atomicAdd per element gives the right value, but the exercise is the block reduction (probe 14)."""
    assert ex.check_dot(DOT_ONE_ATOMIC_PER_ELEMENT) is False
    assert "makes 256 atomic updates of result: the exercise asks for one per block" in capsys.readouterr().out
    assert ex.check_dot(DOT_OK) is True


MATRIX_FLAT_GUARD = kernel("matrix_add(const float* a, const float* b, float* c, int rows, int cols)", """
    int col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row * cols + col < rows * cols) c[row * cols + col] = a[row * cols + col] + b[row * cols + col];""")


def test_python_instead_of_cuda_and_blocks_that_repeat_each_others_work_are_verdicts(capsys):
    """Python code (or a function) is told what the exercise takes, not "not attempted" (probe 14); a flat
    guard, whose threads past a row's end store the next row's elements again (right values), is ❌ with the
    emulator's warning as the reason, not ✅ followed by the warning."""
    assert ex.check_saxpy("def saxpy(a, x, y):\n    return a * x + y") is False
    assert "this is Python code, and the exercise takes CUDA C" in capsys.readouterr().out
    assert ex.check_saxpy(lambda a, x, y: a * x + y) is False
    assert "this is a Python function" in capsys.readouterr().out
    assert ex.check_matrix_add(MATRIX_FLAT_GUARD) is False
    out = capsys.readouterr().out
    assert "❌" in out and "stored by more than one block" in out and "(line " not in out.split("KernelWarning")[0]


def test_a_grid_stride_loop_that_starts_at_thread_idx_is_told_where_to_start(capsys):
    """probe 14: the blocks met on y[0] and the hint said to make the update an atomic; the fix is the start."""
    every_block_from_zero = kernel("saxpy_grid_stride(float a, const float* x, float* y, int n)", """
    for (int i = threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        y[i] = a * x[i] + y[i];""")
    assert ex.check_saxpy_grid_stride(every_block_from_zero) is False
    out = capsys.readouterr().out
    assert "Every block starts the grid-stride loop at `i = threadIdx.x`" in out and "atomicAdd" not in out


def test_a_warning_of_the_kernel_is_shown_once_for_all_the_check_cases(capsys):
    """check_kernel records the launches' warnings (a repeated-blocks one becomes the verdict); the others pass
    through, each once, not once per case."""
    leaky = kernel(SAXPY_SIG, """
    float* scratch = (float*)malloc(sizeof(float));
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
    if (i == 0) scratch[0] = 0.0f;""")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert ex.check_saxpy(leaky) is True, capsys.readouterr().out
    leaks = [w for w in caught if "malloc" in str(w.message) or "leak" in str(w.message).lower()]
    assert len(leaks) == 1, [str(w.message)[:80] for w in caught]


def test_kernels_with_attributes_between_void_and_the_name_are_found():
    """`__global__ void __launch_bounds__(256) transpose(...)`, a template, a line break: the body is found (the
    transpose was "no kernel named transpose was found", and the dot product's plain-write rule was skipped)."""
    assert ex._body('template <int T> __global__ void k(float* __restrict__ a)\n{ a[0] = 1; }', "k") == " a[0] = 1; "
    assert ex._body('extern "C" __global__\nvoid __launch_bounds__(256, 2) k (int n) { n; }', "k") == " n; "
    bounded = DOT_PLAIN_STORE.replace("void dot(", "void __launch_bounds__(256) dot(")
    assert ex.dot_rule_broken(bounded) and "plain read-add-write" in ex.dot_rule_broken(bounded)
    assert ex.transpose_rule_broken(TRANSPOSE_OK.replace("void transpose(", "void __launch_bounds__(256) transpose("))\
        is None


def test_a_finite_padding_loses_to_data_near_the_bottom_of_float(capsys):
    """-1e30 (or -10, -1e9) as the padding passed while every value lay in [-2, -0.1]; -INFINITY passes."""
    assert not ex.check_block_max(MAX_OK.replace("__int_as_float(0xff800000)", "-1e30f"))
    assert "expected -" in capsys.readouterr().out


def test_a_column_major_matrix_add_is_rejected(capsys):
    """c = a + b comes out right with a column-major index too (a permutation of the same additions): the
    access profile shows the layout."""
    col_major = ADD_OK.replace("row * cols + col", "col * rows + row")
    assert not ex.check_matrix_add(col_major)
    out = capsys.readouterr().out
    assert "values are right" in out and "row-major" in out and "sectors per request" in out, out
