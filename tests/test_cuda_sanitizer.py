"""course.cuda as a sanitizer: races, uninitialised shared memory, global write races and
writes into read-only arrays are caught on the CPU backend (each with a correct twin that
raises nothing), and every parity-suite and notebook kernel runs clean with all checks on."""

import json
import os
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import course.cuda as cuda
from course.cuda import source as cuda_source

ROOT = Path(__file__).resolve().parent.parent
SOURCE = (Path(__file__).parent / "cuda_kernels" / "sanitizer.cu").read_text()


def line_of(marker: str, source: str = SOURCE) -> int:
    (line,) = [i for i, text in enumerate(source.split("\n"), 1) if f"// {marker}" in text]
    return line


def kernel(name, source=SOURCE, **kwargs):
    return cuda.RawKernel(source, name, backend="cpu", **kwargs)


def test_reduction_without_its_barrier_is_a_race_with_both_threads_lines_and_the_fix():
    x = np.ones(256, np.float32)
    with pytest.raises(cuda.KernelError) as info:
        kernel("tree_sum_no_barrier")((2,), (128,), (x, np.zeros(2, np.float32)))
    message = str(info.value)
    line = line_of("RACE: no barrier in the loop")
    assert "data race on shared memory s[" in message
    assert re.search(r"thread \(\d+, 0, 0\) read it at line %d, and thread \(\d+, 0, 0\) writes it at line %d" % (line, line), message)
    assert f"Add __syncthreads() at the end of the loop's body, after line {line}" in message
    assert f"between line {line}" not in message  # (it said "between line 12 ... and line 12")
    # threads 0 and 1 share a warp, but the loop's other passes span warps: __syncwarp() is no general fix
    assert "can use __syncwarp() instead" not in message and "lanes of one warp, __syncwarp() is enough" in message
    assert info.value.line == line and info.value.block == (0, 0, 0)
    # what the race does: run to its end in both orders of the threads, the sums differ (128 is right)
    effect = re.search(r"effect: Run to its end with the race let go, this launch gives partial\[0\] = (\d+) with the "
                       r"threads in launch order, and partial\[0\] = (\d+) with the blocks, and each block's threads, "
                       r"in the opposite order: the result depends on the order\.", message)
    assert effect and effect.group(1) != effect.group(2) and "128" in effect.groups()
    partial = np.zeros(2, np.float32)
    kernel("tree_sum")((2,), (128,), (x, partial))  # the twin: no report
    assert list(partial) == [128, 128]


WARP_TAIL = r"""
extern "C" __global__ void warp_tail(const float* x, float* out, int n) {
    __shared__ float s[256];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int k = 128; k > 16; k >>= 1) { if (t < k) s[t] += s[t + k]; __syncthreads(); }
    if (t < 32) {
        float v = s[t] + s[t + 16];
        s[t] = v;                                                           // STORE
        for (int o = 8; o > 0; o >>= 1) { v += s[t + o]; s[t] = v; }        // STEPS
    }
    if (t == 0) atomicAdd(out, s[0]);
}
"""


def test_a_race_between_lanes_inside_a_one_warp_if_is_told_to_use_syncwarp_not_syncthreads():
    """The last warp's steps of a reduction, `if (t < 32) { ... }`: a __syncthreads() cannot go inside that if, so
    the hint leads with __syncwarp(); with it (and between each step's read and write) the sum is right."""
    x = np.random.default_rng(3).random(1000).astype(np.float32)
    with pytest.raises(cuda.KernelError) as info:
        cuda.RawKernel(WARP_TAIL, "warp_tail", backend="cpu", sanitize=True)((4,), (256,), (x, np.zeros(1, np.float32), 1000))
    store, steps = line_of("STORE", WARP_TAIL), line_of("STEPS", WARP_TAIL)
    assert (f"hint: Add __syncwarp() between line {store}, where thread (1, 0, 0) writes `s[1]`, and line {steps}"
            in str(info.value)), str(info.value)
    assert "both lines run inside an if that not every thread of the block enters" in str(info.value)
    fixed = WARP_TAIL.replace("s[t] = v;                                                           // STORE",
                              "__syncwarp(); s[t] = v; __syncwarp();").replace(
        "{ v += s[t + o]; s[t] = v; }", "{ v += s[t + o]; __syncwarp(); s[t] = v; __syncwarp(); }")
    out = np.zeros(1, np.float32)
    cuda.RawKernel(fixed, "warp_tail", backend="cpu", sanitize=True)((4,), (256,), (x, out, 1000))
    assert np.isclose(out[0], x.sum(dtype=np.float64), rtol=1e-5)


def test_a_race_whose_order_changes_no_result_has_no_effect_line():
    """Two threads store different values into s[0], which nothing reads: a race (reported), but both orders
    give the same results, so the message shows no effect. The memory is as before the launch."""
    source = r"""
extern "C" __global__ void k(float* out) {
    __shared__ int s[1];
    s[0] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = 1.0f;
}"""
    out = np.full(64, 7.0, np.float32)
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory s\[0\]") as info:
        kernel("k", source)((1,), (64,), (out,))
    assert "effect:" not in str(info.value)
    assert (out == 7.0).all()


def test_read_before_the_writers_ran_and_write_after_read():
    with pytest.raises(cuda.KernelError) as info:
        kernel("reverse_no_barrier")((1,), (64,), (np.arange(64, dtype=np.int32), np.zeros(64, np.int32)))
    # Thread 31 reads s[32] before thread 32 writes it: the reader ran first, a race that names both
    # lines and where the barrier goes (a read that no write follows is initcheck's, below).
    message, read = str(info.value), line_of("READ: before the others wrote")
    assert "data race on shared memory s[32]: thread (31, 0, 0) read it at line %d before thread (32, 0, 0) wrote " \
           "it at line" % read in message
    write = info.value.line
    assert write < read and f"Add __syncthreads() between line {write}, where thread (32, 0, 0) writes `s[32]`, " \
                            f"and line {read}, where thread (31, 0, 0) reads it" in message
    # what it does: in launch order thread 0 reads s[63] before thread 63 wrote it (shared memory's fill, -1 as an
    # int); the other way round every value is there
    assert ("effect: Run to its end with the race let go, this launch gives out[0] = -1 with the threads in launch "
            "order, and out[0] = 63 with the blocks, and each block's threads, in the opposite order") in message
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory s\[1\]: thread \(1, 0, 0\) wrote it at "
                                               rf"line \d+, and thread \(0, 0, 0\) reads it at line {line_of('RACE-WAR')}|"
                                               r"data race on shared memory s\[\d+\]") as info:
        kernel("shift_left_no_barrier")((1,), (64,), (np.arange(64, dtype=np.int32),))
    assert info.value.line == line_of("RACE-WAR: thread t+1 may have written first")


def test_shared_memory_is_never_silently_zero_or_the_previous_blocks():
    out = np.zeros(64, np.float32)
    with pytest.raises(cuda.KernelError) as info:
        kernel("only_block_zero_fills")((2,), (32,), (out,))
    assert info.value.block == (1, 0, 0) and info.value.line == line_of("UNINIT: block 1 never wrote s")
    assert "which no thread of block (1, 0, 0) has written in this launch" in str(info.value)


HALO_BLUR = r"""
#define T 16
#define R 1
extern "C" __global__ void blur(const float* in, float* out, int w, int h) {
    __shared__ float tile[T + 2 * R][T + 2 * R];
    int x = blockIdx.x * T + threadIdx.x, y = blockIdx.y * T + threadIdx.y;
    int lx = threadIdx.x + R, ly = threadIdx.y + R;
    tile[ly][lx] = (x < w && y < h) ? in[y * w + x] : 0.0f;
    if (threadIdx.x < R) {
        tile[ly][lx - R] = (x >= R && y < h) ? in[y * w + x - R] : 0.0f;
        tile[ly][lx + T] = (x + T < w && y < h) ? in[y * w + x + T] : 0.0f;              // RIGHT
    }
    if (threadIdx.y < R) {
        tile[ly - R][lx] = (y >= R && x < w) ? in[(y - R) * w + x] : 0.0f;
        tile[ly + T][lx] = (y + T < h && x < w) ? in[(y + T) * w + x] : 0.0f;
    }
    if (threadIdx.x < R && threadIdx.y < R) {                                           // HALO-CORNERS
        tile[ly - R][lx - R] = (x >= R && y >= R) ? in[(y - R) * w + x - R] : 0.0f;
        tile[ly - R][lx + T] = (x + T < w && y >= R) ? in[(y - R) * w + x + T] : 0.0f;
        tile[ly + T][lx - R] = (x >= R && y + T < h) ? in[(y + T) * w + x - R] : 0.0f;
        tile[ly + T][lx + T] = (x + T < w && y + T < h) ? in[(y + T) * w + x + T] : 0.0f;
    }                                                                                   // CORNERS-END
    __syncthreads();
    if (x < w && y < h) {
        float s = 0;
        for (int dy = -R; dy <= R; dy++)
            for (int dx = -R; dx <= R; dx++) s += tile[ly + dy][lx + dx];
        out[y * w + x] = s / 9;
    }
}
"""


def test_a_halo_left_out_of_a_tile_names_its_side_or_corner():
    """A tiled 3×3 blur whose 18×18 tile is the 16×16 block plus a halo of 1: the halo's right column left out,
    or its corners, is an unwritten read, and the hint says which part of the halo no write reached."""
    image = np.random.default_rng(0).random((32, 32)).astype(np.float32)
    lines = HALO_BLUR.split("\n")
    start, end = line_of("HALO-CORNERS", HALO_BLUR), line_of("CORNERS-END", HALO_BLUR)
    no_corners = "\n".join(lines[:start - 1] + lines[end:])
    with pytest.raises(cuda.KernelError, match=r"reads shared memory tile\[0\]\[0\], which no thread") as info:
        cuda.RawKernel(no_corners, "blur", backend="cpu")((2, 2), (16, 16), (image, np.zeros_like(image), 32, 32))
    assert ("hint: tile[0][0] lies in the halo of tile: tile holds the block's 16 × 16 threads' elements with 1 more "
            "on each side (18 × 18), and tile[0][0] is in its top-left corner, which no write of the block reaches. "
            "The corners are the halo elements most often left out") in str(info.value)
    right = line_of("RIGHT", HALO_BLUR)
    no_right = "\n".join(lines[:right - 1] + lines[right:])
    with pytest.raises(cuda.KernelError) as info:
        cuda.RawKernel(no_right, "blur", backend="cpu")((2, 2), (16, 16), (image, np.zeros_like(image), 32, 32))
    assert re.search(r"tile\[\d+\]\[17\] is in its right side, which no write of the block reaches\. Load every "
                     r"side: as threads with threadIdx\.x < 1 load the left halo", str(info.value))
    interior = "\n".join(lines[:line_of("RIGHT", HALO_BLUR) - 3] + lines[end:])  # the tile's middle alone
    with pytest.raises(cuda.KernelError, match=r"reads shared memory tile\[0\]\[0\], which no thread") as info:
        cuda.RawKernel(interior, "blur", backend="cpu")((2, 2), (16, 16), (image, np.zeros_like(image), 32, 32))
    assert ("is in its top-left corner, which no write of the block reaches. No part of the halo is loaded: the "
            "block's only store into tile is `tile[ly][lx]` (line 8), one element per thread, the tile's middle. Load "
            "the halo too: its sides") in str(info.value)
    out = np.zeros_like(image)
    cuda.RawKernel(HALO_BLUR, "blur", backend="cpu")((2, 2), (16, 16), (image, out, 32, 32))  # the twin
    padded = np.pad(image, 1)
    expected = sum(padded[1 + dy:33 + dy, 1 + dx:33 + dx] for dy in (-1, 0, 1) for dx in (-1, 0, 1)) / 9
    np.testing.assert_allclose(out, expected, rtol=1e-5)


PRIVATE_HISTOGRAM = r"""
extern "C" __global__ void histogram(const unsigned char* image, unsigned* bins, int w, int h) {
    __shared__ unsigned s[256];
    int t = threadIdx.y * blockDim.x + threadIdx.x;
    if (t < 256) s[t] = 0;                                             // ZERO
    __syncthreads();
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) atomicAdd(&s[image[y * w + x]], 1u);
    __syncthreads();
    if (t < 256) atomicAdd(&bins[t], s[t]);                            // FLUSH
}
"""


def test_a_shared_array_filled_one_element_per_thread_by_too_few_threads_is_told_to_loop():
    """A privatised 256-bin histogram that zeroes its bins one per thread, in 8×8 blocks: bins 64 and up get
    no value, and the hint says so, and how to fill them all (the copy out has the same flaw)."""
    image = np.random.default_rng(0).integers(0, 256, (32, 32)).astype(np.uint8)
    with pytest.raises(cuda.KernelError, match=r"reads shared memory s\[\d+\], which no thread") as info:
        cuda.RawKernel(PRIVATE_HISTOGRAM, "histogram", backend="cpu")((4, 4), (8, 8), (image, np.zeros(256, np.uint32),
                                                                                     32, 32))
    zero, flush = line_of("ZERO", PRIVATE_HISTOGRAM), line_of("FLUSH", PRIVATE_HISTOGRAM)
    assert (f"hint: Line {zero} writes one element of s per thread (`s[t]`), and the block has 64 threads, so it sets "
            "s[0] to s[63] of its 256") in str(info.value)
    assert ("`for (int k = t; k < 256; k += blockDim.x * blockDim.y) s[k] = ...;`, then __syncthreads(). The same goes "
            f"for line {flush}, which also takes one element of s per thread.") in str(info.value)
    bins = np.zeros(256, np.uint32)  # the twin: 16 × 16 blocks, one thread per bin
    cuda.RawKernel(PRIVATE_HISTOGRAM, "histogram", backend="cpu")((2, 2), (16, 16), (image, bins, 32, 32))
    np.testing.assert_array_equal(bins, np.bincount(image.ravel(), minlength=256))


def test_an_unwritten_shared_read_points_at_the_writes_that_should_have_filled_it():
    """A block reduction whose per-warp partial is stored by thread 0 alone (`threadIdx.x == 0` for
    `lane == 0`): the fault is the read of partial[1]; the hint points at the write of line 7."""
    source = r"""
extern "C" __global__ void block_sum(const float* x, float* out) {
    __shared__ float partial[8];
    int lane = threadIdx.x % 32, wid = threadIdx.x / 32;
    float v = x[blockIdx.x * blockDim.x + threadIdx.x];
    for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffff, v, o);
    if (threadIdx.x == 0) partial[wid] = v;
    __syncthreads();
    if (wid == 0) {
        v = lane < blockDim.x / 32 ? partial[lane] : 0;
        for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffff, v, o);
        if (lane == 0) out[blockIdx.x] = v;
    }
}"""
    with pytest.raises(cuda.KernelError, match=r"reads shared memory partial\[1\], which no thread") as info:
        kernel("block_sum", source)((2,), (256,), (np.ones(512, np.float32), np.zeros(2, np.float32)))
    assert info.value.line == 10
    assert ("The kernel writes partial at line 7 (`if (threadIdx.x == 0) partial[wid] = v;`): check which threads "
            "of the block reach that write and which elements they write; none wrote partial[1].") in str(info.value)
    fixed = source.replace("threadIdx.x == 0", "lane == 0")
    out = np.zeros(2, np.float32)
    kernel("block_sum", fixed)((2,), (256,), (np.ones(512, np.float32), out))
    assert out.tolist() == [256, 256]


def test_two_threads_writing_one_global_element_without_an_atomic():
    values = np.array([3, 1, 3, 2] * 16, np.int32)
    with pytest.raises(cuda.KernelError) as info:
        kernel("histogram_without_atomics")((1,), (64,), (values, np.zeros(16, np.int32), 64))
    message = str(info.value)
    assert "updates bins[3] (reads it and writes it back), which thread (0, 0, 0) also wrote at line" in message
    assert "Make the update atomic: `atomicAdd(&bins[values[i]], 1)`" in message and info.value.thread == (2, 0, 0)
    bins = np.zeros(16, np.int32)
    kernel("histogram_with_atomics")((2,), (64,), (np.tile(values, 2), bins, 128))  # twin: atomics are fine
    np.testing.assert_array_equal(bins, np.bincount(np.tile(values, 2), minlength=16))


@pytest.mark.parametrize("how", ["const cast away", "writeable=False"])
def test_writes_into_read_only_arrays(how):
    x = np.arange(8, dtype=np.float32)
    if how == "writeable=False":
        x.flags.writeable = False
    with pytest.raises(cuda.KernelError, match=r"writes x\[0\], but x is read-only") as info:
        kernel("writes_its_input")((1,), (8,), (x, np.zeros(8, np.float32), 8))
    assert info.value.line == line_of("READONLY: x is const")
    np.testing.assert_array_equal(x, np.arange(8))  # the check stopped the write
    y = np.zeros(8, np.float32)
    kernel("scale")((1,), (8,), (x, y, 8))
    np.testing.assert_array_equal(y, 2 * np.arange(8))


def test_lanes_of_a_warp_are_ordered_by_syncwarp_only():
    out = np.zeros(32, np.int32)
    kernel("warp_exchange")((1,), (32,), (out, 1))
    np.testing.assert_array_equal(out, (31 - np.arange(32)) ** 2)
    with pytest.raises(cuda.KernelError, match=r"read it at line %d before thread" % line_of("WARP-READ")):
        kernel("warp_exchange")((1,), (32,), (out, 0))
    with pytest.raises(cuda.KernelError, match="data race on shared memory s") as info:
        kernel("legacy_warp_reduce")((1,), (32,), (np.ones(64, np.int32), np.zeros(1, np.int32)))
    assert info.value.line in (line_of("LEGACY: lanes read what others write in the same step"),
                               line_of("LEGACY: lanes read what others write in the same step") - 1)


WARP_REGIONS = r"""
extern "C" __global__ void rotate(const float* x, float* o) {
    __shared__ float s[128];
    int t = threadIdx.x, lane = t & 31, w = t >> 5;
    float* mine = s + w * 32;                   // each warp works in its own 32 elements
    mine[lane] = x[t];                          // REGION-WRITE
    __syncwarp();                               // REGION-SYNC
    float v = mine[(lane + 1) & 31];            // REGION-READ
    __syncwarp();
    mine[lane] = v * 2;
    __syncwarp();
    o[t] = mine[31 - lane];
}
"""


def test_a_kernel_whose_warps_work_apart_is_told_the_missing_barrier_is_a_syncwarp():
    x, out = np.arange(128, dtype=np.float32), np.zeros(128, np.float32)
    cuda.RawKernel(WARP_REGIONS, "rotate", backend="cpu")((1,), (128,), (x, out))  # the twin
    np.testing.assert_array_equal(out.reshape(4, 32), 2 * np.roll(x.reshape(4, 32), -1, axis=1)[:, ::-1])
    racy = WARP_REGIONS.replace("__syncwarp();                               // REGION-SYNC", "")
    with pytest.raises(cuda.KernelError, match=r"with no __syncwarp\(\) \(or __syncthreads\(\)\) between them") as info:
        cuda.RawKernel(racy, "rotate", backend="cpu")((1,), (128,), (x, out))
    write, read = line_of("REGION-WRITE", WARP_REGIONS), line_of("REGION-READ", WARP_REGIONS)
    assert str(info.value).split("hint: ")[1].startswith(
        f"Add __syncwarp() between line {write}, where thread (1, 0, 0) writes `s[1]`, and line {read}, where thread "
        "(0, 0, 0) reads it: threads (0, 0, 0) and (1, 0, 0) are lanes of one warp, and the kernel orders a warp's "
        "lanes with __syncwarp() elsewhere")
    # the __syncwarp() there, but inside an if that half the warp skips: the hint says that, not "add one"
    half = WARP_REGIONS.replace("__syncwarp();                               // REGION-SYNC",
                                "if (lane < 16) __syncwarp();")
    with pytest.raises(cuda.KernelError, match=r"with no __syncwarp\(\) \(or __syncthreads\(\)\) between them") as info:
        cuda.RawKernel(half, "rotate", backend="cpu")((1,), (128,), (x, out))
    assert (f"hint: The __syncwarp() at line {write + 1} lies between the two accesses, but inside the if at line "
            f"{write + 1}, which some lanes of the warp skip") in str(info.value)
    assert "Call it outside the if, where every lane of the warp passes." in str(info.value)


def test_sanitizer_switches():
    assert kernel("scale").sanitize is True  # backend="cpu": a debugging run
    auto = cuda.RawKernel(SOURCE, "scale", backend="auto")
    assert auto.sanitize is False or cuda.backend() == "cupy"
    racy = kernel("tree_sum_no_barrier", sanitize=False)
    racy((1,), (128,), (np.ones(128, np.float32), np.zeros(1, np.float32)))  # plain run: no checks, no error


def test_sanitizer_follows_the_environment(monkeypatch):
    monkeypatch.setenv("COURSE_CUDA_SANITIZE", "1")
    assert cuda.RawKernel(SOURCE, "scale").sanitize is True
    monkeypatch.setenv("COURSE_CUDA_SANITIZE", "0")
    assert kernel("scale").sanitize is False
    monkeypatch.setenv("COURSE_CUDA_SANITIZE", "maybe")
    with pytest.raises(ValueError, match="COURSE_CUDA_SANITIZE"):
        kernel("scale")


def test_exercise_check_catches_a_racy_solution(capsys):
    from course.exercises import cuda_basics as ex

    racy = ex.BLOCK_SUM_BUGGY.replace("""            cache[t] += cache[t + stride];
            __syncthreads();
        }""", """            cache[t] += cache[t + stride];
        }""").replace("cache[t] = (i < n) ? x[i] : 0.0f;", "cache[t] = (i < n) ? x[i] : 0.0f;\n    __syncthreads();")
    assert racy != ex.BLOCK_SUM_BUGGY
    assert ex.check_block_sum_fixed(racy) is False
    assert "data race on shared memory cache[" in capsys.readouterr().out


# ---------------------------------------------------------------------------------------
# Zero false reports: the parity suite's kernels (tests/test_cuda_*.py run them with backend="cpu",
# so with every check on) and the notebooks' kernels compile and their exercise solutions pass.
# ---------------------------------------------------------------------------------------

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def notebook_sources():
    found = []
    for path in NOTEBOOKS:
        for cell in json.loads(path.read_text())["cells"]:
            if cell["cell_type"] != "code":
                continue
            text = "".join(cell["source"])
            for match in re.finditer(r"r?('''|\"\"\")(.*?)\1", text, re.S):
                if "__global__" in match.group(2):
                    found.append((path.name, match.group(2)))
    return found


def test_every_notebook_kernel_compiles_with_every_check_on():
    from concurrent.futures import ThreadPoolExecutor

    sources = [(name, text) for name, text in notebook_sources()
               if not ("{" in text and "%" in text and "{{" in text)]  # a Python format template is not CUDA C yet
    assert len(sources) >= 10

    def compile_checked(item):
        name, text = item
        for kernel_name in cuda_source.parse(text).kernels:
            k = cuda.RawKernel(text, kernel_name, backend="cpu", sanitize=True)
            assert not k._kernel.unsupported, (name, kernel_name)
            try:
                k.compile()
            except cuda.CompileError:
                # a fragment the notebook completes later fails without the checks too; nothing else may fail
                with pytest.raises(cuda.CompileError):
                    cuda.RawKernel(text, kernel_name, backend="cpu", sanitize=False).compile()
                continue
            return  # one compile per source covers all its kernels (the notebooks build the plain ones they run)

    with ThreadPoolExecutor(max_workers=max(2, len(os.sched_getaffinity(0)))) as pool:
        list(pool.map(compile_checked, sources))  # re-raises the first failure


def test_notebook_01_exercise_solutions_pass_with_every_check_on(capsys):
    from course.exercises import cuda_basics as ex

    cells = json.loads((ROOT / "notebooks" / "01_cuda_basics.ipynb").read_text())["cells"]
    solutions = ["".join(c["source"]) for c in cells if "solution" in c.get("metadata", {}).get("tags", [])
                 and "__global__" in "".join(c["source"])]
    assert len(solutions) >= 5
    for code in solutions:
        exec(compile(code, "solution", "exec"), {"ex": ex, "np": np})  # each asserts its check passes
    assert "❌" not in capsys.readouterr().out


def test_the_transpose_check_names_the_race_of_a_tile_without_its_barrier(capsys):
    # That check runs the values itself before its rule about the barrier: with the sanitizer, so
    # that the learner reads which threads race, not "got nan".
    from course.exercises import cuda_basics as ex

    cells = json.loads((ROOT / "notebooks" / "01_cuda_basics.ipynb").read_text())["cells"]
    (code,) = ["".join(c["source"]) for c in cells if "solution" in c.get("metadata", {}).get("tags", [])
               and "ex.check_transpose" in "".join(c["source"])]
    source = re.search(r"r'''(.*?)'''", code, re.S).group(1)
    assert source.count("__syncthreads();") == 1
    assert ex.check_transpose(source.replace("__syncthreads();", "")) is False
    out = capsys.readouterr().out
    assert "data race on shared memory" in out and "values differ" not in out and "got nan" not in out
    # (the race's effect may show a nan, shared memory's fill, read before the other thread wrote it)


HELPER_RACE = r"""
__device__ inline void order(float& a, float& b) {
    if (a > b) { float t = a; a = b; b = t; }                  // COMPARE
}
extern "C" __global__ void pairs(float* x, int barrier) {
    __shared__ float s[64];
    s[threadIdx.x] = x[threadIdx.x];                           // LOAD
    if (barrier) __syncthreads();
    if (threadIdx.x < 32) order(s[2 * threadIdx.x], s[2 * threadIdx.x + 1]);  // CALL
    __syncthreads();
    x[threadIdx.x] = s[threadIdx.x];
}
"""


def test_a_race_inside_a_helper_names_the_line_that_called_it_and_puts_the_barrier_there():
    x = np.arange(64, 0, -1).astype(np.float32)
    cuda.RawKernel(HELPER_RACE, "pairs", backend="cpu", sanitize=True)((1,), (64,), (x, 1))
    assert list(x[:4]) == [63, 64, 61, 62]
    with pytest.raises(cuda.KernelError) as info:
        cuda.RawKernel(HELPER_RACE, "pairs", backend="cpu", sanitize=True)((1,), (64,), (x, 0))
    message, line = str(info.value), lambda marker: line_of(marker, HELPER_RACE)
    assert f"at line {line('COMPARE')} (in a function called at line {line('CALL')})" in message
    assert f"between line {line('LOAD')}" in message and f"and line {line('CALL')}, where thread" in message


WARP_REDUCE = r"""
__device__ void warp_reduce(volatile float* s, int t) {
    s[t] += s[t + 32]; s[t] += s[t + 16]; s[t] += s[t + 8];    // FIRST
    s[t] += s[t + 4]; s[t] += s[t + 2]; s[t] += s[t + 1];      // SECOND
}
extern "C" __global__ void block_sums(const float* x, float* out) {
    __shared__ float s[128];
    int t = threadIdx.x;
    s[t] = x[blockIdx.x * 128 + t];
    __syncthreads();
    if (t < 64) s[t] += s[t + 64];
    __syncthreads();
    if (t < 32) warp_reduce(s, t);                             // CALL
    if (t == 0) out[blockIdx.x] = s[0];
}
"""


def test_a_race_between_two_lines_of_one_call_of_a_helper_puts_the_barrier_inside_it():
    """The pre-Volta reduction sample's warp_reduce: both accesses lie in one call of the helper, so
    the hint names its lines, not the kernel's line that calls it (and, these being one warp's
    volatile steps, the warp-synchronous fix: a __syncthreads() cannot go inside `if (t < 32)`)."""
    with pytest.raises(cuda.KernelError) as info:
        cuda.RawKernel(WARP_REDUCE, "block_sums", backend="cpu", sanitize=True)(
            (2,), (128,), (np.ones(256, np.float32), np.zeros(2, np.float32)))
    message, line = str(info.value), lambda marker: line_of(marker, WARP_REDUCE)
    called = f"(in a function called at line {line('CALL')})"
    assert f"read it at line {line('SECOND')} {called}" in message
    assert f"writes it at line {line('FIRST')} {called}" in message
    assert f"running lines {line('FIRST')} and {line('SECOND')} as warp-synchronous steps" in message
    # copied without its volatile: the same steps, the same fix (not a __syncthreads() inside `if (t < 32)`)
    with pytest.raises(cuda.KernelError) as info:
        cuda.RawKernel(WARP_REDUCE.replace("volatile float* s", "float* s"), "block_sums", backend="cpu",
                       sanitize=True)((2,), (128,), (np.ones(256, np.float32), np.zeros(2, np.float32)))
    assert "as warp-synchronous steps" in str(info.value) and "Add __syncthreads()" not in str(info.value)



NEIGHBOUR_STEP = r"""
__device__ void add_next(float* s, int i) { s[i] += s[i + 1]; }   // STEP
extern "C" __global__ void smooth(const float* x, float* out) {
    __shared__ float s[65];
    s[threadIdx.x] = x[threadIdx.x];
    if (threadIdx.x == 0) s[64] = 0;
    __syncthreads();
    add_next(s, threadIdx.x);
    __syncthreads();
    out[threadIdx.x] = s[threadIdx.x];
}
"""


def test_a_fixed_step_run_by_the_whole_block_is_not_called_a_warp_synchronous_step():
    """`s[i] += s[i + 1]` by every thread of a 64-thread block: the first pair the checker meets is two lanes
    of one warp, but lanes 31 and 32 share s[32] too, so __syncwarp() is no fix: the block-wide one is."""
    with pytest.raises(cuda.KernelError) as info:
        cuda.RawKernel(NEIGHBOUR_STEP, "smooth", backend="cpu", sanitize=True)(
            (1,), (64,), (np.arange(64, dtype=np.float32), np.zeros(64, np.float32)))
    message = str(info.value)
    assert "warp-synchronous" not in message and "__syncwarp" not in message
    assert "read it into a variable, then __syncthreads(), then write" in message


def test_course_helpers_time_plain_kernels():
    """course.sharpen and friends pass backend="cpu" to time their kernels: no sanitizer there."""
    make = "import course.cuda as cuda\nk = cuda.RawKernel(code, 'scale', backend='cpu')"
    scope = {"__name__": "course.some_helper", "code": SOURCE}
    exec(compile(make, "helper", "exec"), scope)
    assert scope["k"].sanitize is False


def test_memset_in_a_kernel_counts_as_writing():
    code = r"""
extern "C" __global__ void count(float* out) {
    __shared__ float s[64];
    if (threadIdx.x == 0) memset(s, 0, sizeof(s));
    __syncthreads();
    s[threadIdx.x] += 1.0f;
    __syncthreads();
    out[threadIdx.x] = s[threadIdx.x];
}"""
    out = np.zeros(64, np.float32)
    cuda.RawKernel(code, "count", backend="cpu")((1,), (64,), (out,))
    assert (out == 1).all()
    with pytest.raises(cuda.KernelError, match=r"reads shared memory s\[0\]"):
        cuda.RawKernel(code.replace("if (threadIdx.x == 0) memset(s, 0, sizeof(s));", ""), "count", backend="cpu")(
            (1,), (64,), (out,))


def test_shared_memory_is_never_silently_zero_even_without_the_sanitizer():
    code = r"""
extern "C" __global__ void half_filled(float* out) {
    __shared__ float s[64];
    if (threadIdx.x < 32) s[threadIdx.x] = 1.0f;
    __syncthreads();
    out[blockIdx.x * 64 + threadIdx.x] = s[threadIdx.x];
}"""
    out = np.zeros(128, np.float32)
    cuda.RawKernel(code, "half_filled", backend="cpu", sanitize=False)((2,), (64,), (out,))
    rows = out.reshape(2, 64)
    assert (rows[:, :32] == 1).all() and np.isnan(rows[:, 32:]).all()  # each block: garbage, not 0 or the last block's


SCALARS = r'''
extern "C" __global__ void block_total(const float* x, float* out, int n, int racy) {
    __shared__ float sum;
    if (threadIdx.x == 0) sum = 0.0f;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        if (racy) sum += x[i];                  // RACE: every thread updates one scalar
        else atomicAdd(&sum, x[i]);
    }
    __syncthreads();
    if (threadIdx.x == 0) out[blockIdx.x] = sum;
}
extern "C" __global__ void count_uninitialised(int* out) {
    __shared__ unsigned int count;
    atomicAdd(&count, 1u);                      // UNINIT: nobody set count to 0
    __syncthreads();
    if (threadIdx.x == 0) out[blockIdx.x] = count;
}
extern "C" __global__ void broadcast_flag(int* out, int barrier) {
    __shared__ volatile int flag;
    if (threadIdx.x == 0) flag = 7;             // FLAG WRITE
    if (barrier) __syncthreads();
    out[threadIdx.x] = flag;                    // FLAG READ
}'''


def scalar_line(marker: str) -> int:
    (line,) = [i for i, text in enumerate(SCALARS.split("\n"), 1) if f"// {marker}" in text]
    return line


def test_shared_scalars_are_race_and_init_checked_like_arrays():
    x = np.ones(256, np.float32)
    total = cuda.RawKernel(SCALARS, "block_total", backend="cpu")
    with pytest.raises(cuda.KernelError) as info:
        total((2,), (128,), (x, np.zeros(2, np.float32), np.int32(256), np.int32(1)))
    message, line = str(info.value), scalar_line("RACE")
    assert "data race on shared memory sum:" in message and f"at line {line}" in message
    assert "use atomicAdd(&sum, value)" in message
    out = np.zeros(2, np.float32)
    total((2,), (128,), (x, out, np.int32(256), np.int32(0)))  # the twin: atomics, no report
    assert list(out) == [128, 128]
    with pytest.raises(cuda.KernelError, match=r"reads shared memory count, which no thread") as info:
        cuda.RawKernel(SCALARS, "count_uninitialised", backend="cpu")((2,), (64,), (np.zeros(2, np.int32),))
    assert info.value.line == scalar_line("UNINIT")
    flag = cuda.RawKernel(SCALARS, "broadcast_flag", backend="cpu")
    with pytest.raises(cuda.KernelError) as info:
        flag((1,), (64,), (np.zeros(64, np.int32), np.int32(0)))
    assert f"wrote it at line {scalar_line('FLAG WRITE')}" in str(info.value)
    assert f"reads it at line {scalar_line('FLAG READ')}" in str(info.value)
    out = np.zeros(64, np.int32)
    flag((1,), (64,), (out, np.int32(1)))
    assert (out == 7).all()


def test_shared_scalars_start_poisoned_without_the_sanitizer():
    out = np.zeros(2, np.int32)
    cuda.RawKernel(SCALARS, "count_uninitialised", backend="cpu", sanitize=False)((2,), (64,), (out,))
    assert (out != 64).all()  # 0xFFFFFFFF + 64 wraps to 63: visibly wrong, not the lucky 64


def test_accesses_through_references_are_noted_where_they_happen():
    # add_to(total[0], v) from every thread: the race is in add_to's `total += v`.
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory total\[0\]") as info:
        kernel("sum_through_a_reference")((1,), (64,), (np.ones(64, np.float32), np.zeros(1, np.float32)))
    assert info.value.line == line_of("REF: every thread adds into one total")
    assert "atomicAdd(&total[0], value)" in str(info.value)
    # Binding a reference (`store(s[t], v)`, `float& mine = s[63 - t]`) reads nothing: no false alarm.
    y = np.zeros(64, np.float32)
    kernel("reverse_through_references")((1,), (64,), (np.arange(64, dtype=np.float32), y, 1))
    np.testing.assert_array_equal(y, np.arange(64)[::-1])
    y[:] = 0
    kernel("reverse_through_a_method")((1,), (64,), (np.arange(64, dtype=np.float32), y))  # obj.set(s[t], v) too
    np.testing.assert_array_equal(y, np.arange(64)[::-1])
    with pytest.raises(cuda.KernelError, match=r"read it at line %d before thread \(32, 0, 0\) wrote it at line %d"
                       % (line_of("LOCALREF: s[63 - t] read through a reference"), line_of("writes only"))):
        kernel("reverse_through_references")((1,), (64,), (np.arange(64, dtype=np.float32), y, 0))


def test_accesses_inside_macros_are_checked_like_the_kernels_own():
    with pytest.raises(cuda.KernelError, match=r"writes seen\[3\], which thread \(0, 0, 0\) also wrote") as info:
        kernel("mark_through_a_macro")((1,), (4,), (np.array([3, 3, 1, 0], np.int32), np.zeros(4, np.int32)))
    assert info.value.line == line_of("MACRO-PUT: two threads, one element")
    seen = np.zeros(4, np.int32)
    kernel("mark_through_a_macro")((1,), (4,), (np.array([3, 2, 1, 0], np.int32), seen))
    np.testing.assert_array_equal(seen, [4, 3, 2, 1])
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory s\[\d+\]") as info:
        kernel("swap_halves_through_a_macro")((1,), (64,), (np.arange(64, dtype=np.float32), 0))
    assert info.value.line == line_of("MACRO-SWAP: read while another thread swaps")
    x = np.arange(64, dtype=np.float32)
    kernel("swap_halves_through_a_macro")((1,), (64,), (x, 1))
    np.testing.assert_array_equal(x, np.roll(np.arange(64), 32))


def test_two_tiles_in_one_declaration_and_the_missing_second_barrier():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((16, 16), np.float32), rng.standard_normal((16, 16), np.float32)
    c = np.zeros((16, 16), np.float32)
    kernel("tiled_matmul")((2, 2), (8, 8), (a, b, c, 16, 1))
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)
    with pytest.raises(cuda.KernelError) as info:
        kernel("tiled_matmul")((2, 2), (8, 8), (a, b, c, 16, 0))
    message = str(info.value)
    assert re.search(r"data race on shared memory [AB]s\[\d+\]\[\d+\]", message)
    assert info.value.line == line_of("TILE-READ")
    # The barrier between the write and the read is there: the fix is the one after the inner loop.
    read, write = line_of("TILE-READ"), line_of("TILE-WRITE")
    assert (f"at the end of the loop's body, after line {read + 1}, before the closing brace of the loop at line "
            f"{write - 1}: there is a barrier between line {write} and line {read} already") in message
    assert "went round the loop again" in message


NBODY = r"""
#define TILE 32
extern "C" __global__ void nbody(const float4* pos, float4* acc, int n) {
    __shared__ float4 sh[TILE];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float4 me = pos[i];
    float3 a = make_float3(0, 0, 0);
    for (int t = 0; t < n / TILE; t++) {                                           // NBODY-LOOP
        sh[threadIdx.x] = pos[t * TILE + threadIdx.x];
        __syncthreads();
        for (int j = 0; j < TILE; j++) {
            float3 r = make_float3(sh[j].x - me.x, sh[j].y - me.y, sh[j].z - me.z);
            float inv = rsqrtf(powf(r.x * r.x + r.y * r.y + r.z * r.z + 1e-3f, 3.0f));
            a.x += r.x * sh[j].w * inv; a.y += r.y * sh[j].w * inv; a.z += r.z * sh[j].w * inv;
        }                                                                          // NBODY-INNER-END
    }
    acc[i] = make_float4(a.x, a.y, a.z, 0);
}
"""


def test_a_tile_refilled_before_an_inner_loop_is_done_is_told_where_the_loops_body_ends_and_shows_float4s():
    """All-pairs n-body with a float4 tile and no barrier after its inner loop: the barrier goes after the inner
    loop, at the end of the outer loop's body (not after the read, inside the inner loop); the effect shows the
    float4 result as its four lanes."""
    pos = np.random.default_rng(0).random((64, 4)).astype(np.float32)
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory sh\[\d+\]") as info:
        cuda.RawKernel(NBODY, "nbody", backend="cpu")((2,), (32,), (pos, np.zeros((64, 4), np.float32), 64))
    loop, inner_end = line_of("NBODY-LOOP", NBODY), line_of("NBODY-INNER-END", NBODY)
    assert (f"Add __syncthreads() at the end of the loop's body, after line {inner_end}, before the closing brace of "
            f"the loop at line {loop}") in str(info.value)
    assert re.search(r"effect: Run to its end with the race let go, this launch gives acc\[0\] = \(-?[\d.]+, -?[\d.]+, "
                     r"-?[\d.]+, 0\) with the threads in launch order", str(info.value))
    fixed = NBODY.replace("// NBODY-INNER-END", "\n        __syncthreads();")
    acc = np.zeros((64, 4), np.float32)
    cuda.RawKernel(fixed, "nbody", backend="cpu")((2,), (32,), (pos, acc, 64))  # the twin
    r = pos[None, :, :3] - pos[:, None, :3]
    expected = (r * pos[None, :, 3:] / np.sqrt((r ** 2).sum(-1, keepdims=True) + 1e-3) ** 3).sum(1)
    np.testing.assert_allclose(acc[:, :3], expected, rtol=1e-3)


SLOT_APART = r"""
extern "C" __global__ void keep_positive(const int* x, int* out, int* count, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] > 0) {
        out[*count] = x[i];                   // SLOT-READ
        atomicAdd(count, 1);
    }
}
"""


def test_a_slot_read_apart_from_its_atomic_is_caught_even_when_every_value_kept_is_the_same():
    """A compaction whose threads read the count, then add to it: with every value alike no order of whole
    threads changes the results, but a read that comes before another thread's atomicAdd (as on a GPU) gives
    two threads one slot and leaves the last one empty: the rerun with stale reads shows it."""
    ones = np.ones(64, np.int32)
    with pytest.raises(cuda.KernelError, match=r"reads count\[0\], which thread \(0, 0, 0\) updates atomically") as info:
        cuda.RawKernel(SLOT_APART, "keep_positive", backend="cpu")((1,), (64,), (ones, np.zeros(64, np.int32),
                                                                                 np.zeros(1, np.int32), 64))
    assert info.value.line == line_of("SLOT-READ", SLOT_APART)
    assert ("effect: Run again with each such read seeing the value from before the other thread's write (or atomic "
            "update), this launch gives out[63] = 0 instead of 1.") in str(info.value)
    assert "`out[atomicAdd(count, 1)] = ...;`" in str(info.value)
    fixed = SLOT_APART.replace("out[*count] = x[i];                   // SLOT-READ\n        atomicAdd(count, 1);",
                               "out[atomicAdd(count, 1)] = x[i];")
    out, count = np.zeros(64, np.int32), np.zeros(1, np.int32)
    cuda.RawKernel(fixed, "keep_positive", backend="cpu")((1,), (64,), (ones, out, count, 64))  # the twin
    assert count[0] == 64 and (out == 1).all()
    # the other order, the count taken first and read back as the slot (`out[*count - 1]`): the same fix
    after = SLOT_APART.replace("out[*count] = x[i];                   // SLOT-READ\n        atomicAdd(count, 1);",
                               "atomicAdd(count, 1);\n        out[*count - 1] = x[i];")
    with pytest.raises(cuda.KernelError, match=r"count\[0\]") as info:
        cuda.RawKernel(after, "keep_positive", backend="cpu")((1,), (64,), (np.arange(1, 65, dtype=np.int32),
                                                                            np.zeros(64, np.int32), np.zeros(1, np.int32), 64))
    assert ("The slot is read (`out[*count - 1]`) apart from the atomicAdd that takes it, so two threads can get the "
            "same one: take it with the atomic's own return value, `out[atomicAdd(count, 1)] = ...;`") in str(info.value)


BLOCK_ONLY_INDEX = r"""
extern "C" __global__ void first_of_block(float* a, int n) {
    int i = blockIdx.x * blockDim.x;
    if (i < n) a[i] = threadIdx.x;                          // BLOCK-ONLY
}
"""


def test_stores_whose_index_has_no_thread_in_it_are_told_to_add_the_thread_or_let_one_thread_store():
    module = cuda.RawModule(code=BLOCK_ONLY_INDEX, backend="cpu")
    with pytest.raises(cuda.KernelError, match=r"writes a\[0\], which thread \(0, 0, 0\) also wrote") as info:
        module.get_function("first_of_block")((4,), (256,), (np.zeros(1000, np.float32), 1000))
    assert (f"hint: The index `i` (`i = blockIdx.x * blockDim.x` at line {line_of('BLOCK-ONLY', BLOCK_ONLY_INDEX) - 1}) "
            "uses blockIdx but not threadIdx, so every thread of block (0, 0, 0) gets the same element. Add the thread's "
            "place in its block: `blockIdx.x * blockDim.x + threadIdx.x`") in str(info.value)
    # THREADS_THAT_REPEAT's block sum, every thread storing a value of its own as its block's one result
    every = THREADS_THAT_REPEAT.replace("out[blockIdx.x] = s[0];", "out[blockIdx.x] = s[0] + 0.5f * t;")
    with pytest.raises(cuda.KernelError, match=r"writes out\[0\], which thread \(0, 0, 0\) also wrote") as info:
        cuda.RawKernel(every, "block_sum", backend="cpu")((2,), (64,), (np.ones(128, np.float32), np.zeros(2, np.float32)))
    assert info.value.line == line_of("every thread stores its block's one result", every)
    assert ("hint: The index `blockIdx.x` is the block's, the same for every thread of block (0, 0, 0), so each of them "
            "stores into that element. If it holds the block's one result, let one thread store it, once the block has "
            "combined its threads' values: `if (threadIdx.x == 0) out[blockIdx.x] = ...;`") in str(info.value)
    out = np.zeros(2, np.float32)  # the twin: one thread stores the block's result
    twin = THREADS_THAT_REPEAT.replace("out[blockIdx.x] = s[0];", "if (t == 0) out[blockIdx.x] = s[0];")
    cuda.RawKernel(twin, "block_sum", backend="cpu")((2,), (64,), (np.ones(128, np.float32), out))
    assert list(out) == [64, 64]


IN_PLACE_BLUR = r"""
extern "C" __global__ void blur(float* a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > 0 && i < n - 1) a[i] = (a[i - 1] + a[i] + a[i + 1]) / 3.0f;      // BLUR
}
extern "C" __global__ void blur_into(const float* a, float* b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > 0 && i < n - 1) b[i] = (a[i - 1] + a[i] + a[i + 1]) / 3.0f;
}
extern "C" __global__ void mark(const float* x, float* flag, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { flag[0] = 1.0f; out[i] = x[i] * flag[0]; }
}
"""


def test_a_race_that_this_launchs_data_hides_is_found_with_other_values():
    """An in-place blur of a straight line leaves it as it is: each store writes the value the element held,
    so no order of the threads changes the results. With other values in the array the order does: the race
    is reported, with that effect, and the array is as it was before the launch. The out-of-place blur is
    silent, and so is a flag every thread sets to 1 and reads (the value stored never depends on the data)."""
    module = cuda.RawModule(code=IN_PLACE_BLUR, backend="cpu", sanitize=True)
    ramp = np.arange(256, dtype=np.float32)
    with pytest.raises(cuda.KernelError, match=r"reads a\[1\], which thread \(1, 0, 0\) wrote at line \d+ in this "
                                               r"launch, with no __syncthreads\(\) between them") as info:
        module.get_function("blur")((2,), (128,), (ramp, 256))
    message = str(info.value)
    assert info.value.line == line_of("BLUR", IN_PLACE_BLUR)
    assert ("(here the store wrote the value the element held already, so this launch's results are the same either "
            "way; with other data they are not)") in message
    assert re.search(r"effect: With this launch's values the store leaves the element as it was, so the results show "
                     r"nothing; with other values in a \(random numbers from 0 to 1\), the launch gives a\[\d+\] = "
                     r"[\d.]+ with the threads in launch order and a\[\d+\] = [\d.]+ with the blocks", message)
    np.testing.assert_array_equal(ramp, np.arange(256, dtype=np.float32))
    out = np.zeros(256, np.float32)
    module.get_function("blur_into")((2,), (128,), (ramp, out, 256))  # the twin: out of place
    np.testing.assert_allclose(out[1:-1], ramp[1:-1])
    flag, out = np.zeros(1, np.float32), np.zeros(256, np.float32)
    module.get_function("mark")((2,), (128,), (np.full(256, 2, np.float32), flag, out, 256))
    assert flag[0] == 1 and (out == 2).all()


def test_an_integer_race_that_this_launchs_data_hides_is_found_with_the_arrays_own_values_shuffled():
    """The integer blur of a straight line (`(x[i - 1] + x[i] + x[i + 1]) / 3` of multiples of 3) stores what each
    element held too. Its rerun takes the array's own values in another order (random numbers could be indices
    past the end of something); a union-find's root search over pairs, whose stores keep the value too and
    whose shuffled parents may never reach a root, stays silent (a rerun that does not end gives up at its time
    limit, and says nothing)."""
    source = r"""
extern "C" __global__ void blur(int* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > 0 && i < n - 1) x[i] = (x[i - 1] + x[i] + x[i + 1]) / 3;  // BLUR
}
extern "C" __global__ void roots(int* parent, int* root, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int r = i;
    while (parent[r] != r) r = parent[r];
    parent[i] = r;
    root[i] = r;
}"""
    module = cuda.RawModule(code=source, backend="cpu", sanitize=True)
    line = 3 * np.arange(256, dtype=np.int32)
    with pytest.raises(cuda.KernelError, match=r"reads x\[1\], which thread \(1, 0, 0\) wrote") as info:
        module.get_function("blur")((2,), (128,), (line, 256))
    assert info.value.line == line_of("BLUR", source)
    assert re.search(r"with other values in x \(its own values, shuffled\), the launch gives x\[\d+\] = \d+ with the "
                     r"threads in launch order and x\[\d+\] = \d+ with the blocks", str(info.value))
    np.testing.assert_array_equal(line, 3 * np.arange(256))
    parent, root = np.arange(256, dtype=np.int32) // 2 * 2, np.full(256, -1, np.int32)
    module.get_function("roots")((2,), (128,), (parent, root, 256))
    np.testing.assert_array_equal(root, np.arange(256) // 2 * 2)


def test_a_race_on_an_element_whose_index_comes_from_data_says_so():
    """`bins[x[i]]++` (a histogram by hand) and `out[idx[i]] = v[i]` (a scatter whose destinations repeat): the
    index is read from data, so "check how the index is computed" does not help; the histogram takes atomicAdd,
    the scatter distinct destinations or an atomic that combines."""
    source = r"""
extern "C" __global__ void hist(const int* x, int* bins, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) bins[x[i]]++;
}
extern "C" __global__ void scatter(const float* v, const int* idx, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[idx[i]] = v[i];
}"""
    module = cuda.RawModule(code=source, backend="cpu", sanitize=True)
    values = np.arange(256, dtype=np.int32) % 8
    with pytest.raises(cuda.KernelError, match=r"updates bins\[\d\] \(reads it and writes it back\)") as info:
        module.get_function("hist")((2,), (128,), (values, np.zeros(8, np.int32), 256))
    assert ("hint: The index comes from data, `x[i]`: threads that read the same value there update the same element, "
            "as a histogram's do. Make the update atomic: `atomicAdd(&bins[x[i]], 1)`") in str(info.value)
    with pytest.raises(cuda.KernelError, match=r"writes out\[0\], which thread \(0, 0, 0\) also wrote") as info:
        module.get_function("scatter")((1,), (64,), (np.arange(64, dtype=np.float32), (np.arange(64) // 2).astype(np.int32),
                                                     np.zeros(64, np.float32), 64))
    assert ("hint: The index comes from data, `idx[i]`: two threads read the same destination from it (its values "
            "repeat), and one write is lost. A scatter needs destinations that differ (a permutation)") in str(info.value)
    out = np.zeros(64, np.float32)
    module.get_function("scatter")((1,), (64,), (np.arange(64, dtype=np.float32), np.arange(64)[::-1].astype(np.int32),
                                                 out, 64))  # a permutation: no race
    np.testing.assert_array_equal(out, np.arange(64)[::-1])


def test_a_shared_histogram_updated_without_atomics_is_told_to_use_atomicadd_on_its_data_index():
    """`local[data[i]] += 1` in shared memory (a privatized histogram by hand): a race between threads that read the
    same value; the hint names the atomic with the kernel's own index, not a sum's `atomicAdd(&local[3], value)`."""
    source = r"""
extern "C" __global__ void histo(const int* data, int* bins, int n) {
    __shared__ int local[16];
    if (threadIdx.x < 16) local[threadIdx.x] = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) local[data[i]] += 1;
    __syncthreads();
    if (threadIdx.x < 16) atomicAdd(&bins[threadIdx.x], local[threadIdx.x]);
}"""
    module = cuda.RawModule(code=source, backend="cpu", sanitize=True)
    data = (np.arange(512) * 7 % 16).astype(np.int32)
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory local\[\d+\]") as info:
        module.get_function("histo")((2,), (256,), (data, np.zeros(16, np.int32), 512))
    assert ("hint: The index comes from data, `data[i]`: threads that read the same value there update the same "
            "element, as a histogram's do, and one update is lost. No barrier can help: make the update atomic, "
            "`atomicAdd(&local[data[i]], 1)`") in str(info.value)
    # a radix sort's digit count, `local[(data[i] >> shift) & 15]++`: the shift is no comparison of a maximum kept by
    # hand (the hint said atomicMax; red team 12-07)
    digits = source.replace("local[data[i]] += 1;", "local[(data[i] >> shift) & 15]++;").replace("int n)", "int n, int shift)")
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory local\[\d+\]") as info:
        cuda.RawKernel(digits, "histo", backend="cpu", sanitize=True)((2,), (256,), (data, np.zeros(16, np.int32), 512, 0))
    assert "make the update atomic, `atomicAdd(&local[(data[i] >> shift) & 15], 1)`" in str(info.value)
    assert "atomicMax" not in str(info.value)
    bins = np.zeros(16, np.int32)
    kernel("histogram_with_atomics")((2,), (256,), (data, bins, 512))  # the twin (sanitizer.cu's): right counts
    np.testing.assert_array_equal(bins, np.bincount(data, minlength=16))


def test_vector_loads_must_be_aligned_as_on_a_gpu():
    a = np.arange(20, dtype=np.float32)
    out = np.zeros(4, np.float32)
    kernel("sum_float4")((1,), (4,), (a, out, 4))
    np.testing.assert_array_equal(out, a[4:20].reshape(4, 4).sum(1))
    with pytest.raises(cuda.KernelError, match=r"16-byte element at byte 4 of a .* 'misaligned address'") as info:
        kernel("sum_float4")((1,), (4,), (a, out, 1))
    assert info.value.line == line_of("VEC: a float4 load") and info.value.thread == (0, 0, 0)
    with pytest.raises(cuda.KernelError, match="misaligned address"):
        kernel("sum_float4", sanitize=False)((1,), (4,), (a, out, 2))  # a plain build checks it too
    shared = """extern "C" __global__ void k(float* out) {
    __shared__ float s[16];
    s[threadIdx.x] = 1.0f;
    __syncthreads();
    out[threadIdx.x] = reinterpret_cast<float4*>(&s[1])[0].x;
}"""
    with pytest.raises(cuda.KernelError, match=r"16-byte element at byte 4 of s through a cast pointer"):
        cuda.RawKernel(shared, "k", backend="cpu")((1,), (16,), (np.zeros(16, np.float32),))  # named, like arguments


def test_storing_the_value_already_there_is_no_race():
    x = np.array([0, 1, 1, 0] * 16, np.int32)
    found_any, first = np.zeros(1, np.int32), np.zeros(2, np.int32)
    kernel("any_positive")((2,), (64,), (x, found_any, first, 0))  # `found = 1` by many threads: fine
    assert found_any[0] == 1 and list(first) == [1, 1]
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory found: thread \(1, 0, 0\) wrote it") as info:
        kernel("any_positive")((2,), (64,), (x, found_any, first, 1))  # each its own thread index: a race
    assert info.value.line == line_of("FLAG: same value, or the thread's own")


def test_a_plain_access_and_another_threads_atomic_need_a_barrier_between_them():
    x = np.tile(np.array([1, 0, 1, 1], np.int32), 16)
    out = np.zeros(2, np.int32)
    kernel("count_positive")((2,), (64,), (x, out, 1, 1))  # atomics among themselves: no hazard
    assert list(out) == [48, 48]
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory count: thread \(0, 0, 0\) wrote it at "
                                               rf"line {line_of('COUNT-INIT')}, and thread \(\d+, 0, 0\) atomically "
                                               r"updates it") as info:
        kernel("count_positive")((2,), (64,), (x, out, 0, 1))
    assert info.value.line == line_of("COUNT-ADD")
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory count") as info:
        kernel("count_positive")((2,), (64,), (x, out, 1, 0))  # thread 0 reads before the others added
    assert info.value.line in (line_of("COUNT-ADD"), line_of("COUNT-READ"))
    # (the barrier between them is the body of `if (barrier_after)`, which no thread met: named as such)
    assert f"There is a __syncthreads() at line {line_of('COUNT-READ') - 1}, between the two lines, but it runs under " \
           "a condition" in str(info.value)


def test_a_shared_structs_pointer_member_set_by_one_thread_and_used_by_all_without_a_barrier_is_a_race():
    """`__shared__ View v;` (`struct View { float* p; int n; };`) that thread 0 points at a buffer, member by member
    or whole, and every thread uses, `v.p[t] = ...`, with no barrier between: the read of v.p races with its write,
    as for a plain `__shared__ float* p` (the member's read went unnoted: red team 12-07). The twin has the barrier."""
    source = r"""
struct View { float* p; int n; };
extern "C" __global__ void mirror(const float* x, float* out) {
    __shared__ float buf[64];
    __shared__ View v;
    if (threadIdx.x == 0) { v.p = buf; v.n = 64; }                      // SET
    v.p[threadIdx.x] = x[threadIdx.x];                                  // USE
    __syncthreads();
    out[threadIdx.x] = buf[v.n - 1 - threadIdx.x];
}
"""
    x, out = np.arange(64, dtype=np.float32), np.zeros(64, np.float32)
    for spelled in (source, source.replace("{ v.p = buf; v.n = 64; }", "v = View{buf, 64};")):
        with pytest.raises(cuda.KernelError, match=r"data race on shared memory v\.p: thread \(0, 0, 0\) wrote it at line "
                                                   rf"{line_of('SET', source)}, and thread \(\d+, 0, 0\) reads it at line "
                                                   rf"{line_of('USE', source)}"):
            kernel("mirror", spelled)((1,), (64,), (x, out))
    fixed = source.replace("    v.p[threadIdx.x]", "    __syncthreads();\n    v.p[threadIdx.x]")
    kernel("mirror", fixed)((1,), (64,), (x, out))
    np.testing.assert_array_equal(out, x[::-1])


def test_compare_and_swaps_whose_pairs_overlap_are_told_to_give_each_element_one_pair():
    """Odd-even transposition sort with a thread per element (not per pair): two threads swap pairs that share an
    element. The hint spoke of a warp-synchronous step, which a learner followed into the same race (red team 12-07;
    a bitonic sort without its partner test: test_cuda_faults)."""
    odd_even = r"""
extern "C" __global__ void oddeven(float* a, int n) {
    __shared__ float s[8];
    int tid = threadIdx.x;
    s[tid] = a[tid];
    __syncthreads();
    for (int phase = 0; phase < n; phase++) {
        int i = tid + (phase & 1);
        if (i + 1 < n) {
            if (s[i] > s[i + 1]) { float t = s[i]; s[i] = s[i + 1]; s[i + 1] = t; }
        }
        __syncthreads();
    }
    a[tid] = s[tid];
}
"""
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory s\[\d\]") as info:
        kernel("oddeven", odd_even)((1,), (8,), (np.arange(8, 0, -1).astype(np.float32), 8))
    assert "hint: Line 10 compares and swaps a pair of elements" in str(info.value)
    assert "__syncwarp" not in str(info.value)
    fixed = odd_even.replace("int i = tid + (phase & 1);", "int i = 2 * tid + (phase & 1);")
    a = np.arange(8, 0, -1).astype(np.float32)
    kernel("oddeven", fixed.replace("a[tid] = s[tid];", "a[tid] = s[tid]; a[tid + 4] = s[tid + 4];").replace(
        "s[tid] = a[tid];", "s[tid] = a[tid]; s[tid + 4] = a[tid + 4];"))((1,), (4,), (a, 8))  # a thread per pair
    np.testing.assert_array_equal(a, np.arange(1, 9))


def test_a_scatter_on_a_loops_line_is_told_its_data_index_not_a_warp_step():
    """`for (int e = row[u]; e < row[u + 1]; ++e) acc[col[e]] += 1.0f;` in one warp: `row` read twice on the line, with
    `row[u + 1]`, made it look like a warp's unrolled step (`v[tid] += v[tid + 16]`); the race is on acc, whose index
    comes from data (red team 12-07)."""
    source = r"""
extern "C" __global__ void push(const int* row, const int* col, float* out, int n) {
    __shared__ float acc[32];
    acc[threadIdx.x] = 0.0f;
    __syncthreads();
    int u = threadIdx.x;
    if (u < n)
        for (int e = row[u]; e < row[u + 1]; ++e) acc[col[e]] += 1.0f;
    __syncthreads();
    out[threadIdx.x] = acc[threadIdx.x];
}
"""
    row, col = np.arange(33, dtype=np.int32), (np.arange(32) % 4).astype(np.int32)  # every vertex points at 0 to 3
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory acc\[\d\]") as info:
        kernel("push", source)((1,), (32,), (row, col, np.zeros(32, np.float32), 32))
    assert "hint: The index comes from data, `col[e]`" in str(info.value) and "__syncwarp" not in str(info.value)


def test_a_race_between_the_two_branches_of_an_if_else_is_not_told_to_put_a_barrier_between_them():
    """A Hillis-Steele scan whose double buffer never doubles (`pin = 1 - pout; pout = 1 - pout;` leaves pin == pout):
    the if and the else branch of one step read and write one half. The hint said to put __syncthreads() between the
    two lines, the branches of one if/else (red team 12-07); it says why none fits, and what a double buffer needs."""
    source = r"""
extern "C" __global__ void hs(float* out, const float* in, int n) {
    __shared__ float temp[2 * 64];
    int thid = threadIdx.x, pout = 0, pin = 1;
    temp[thid] = in[thid];
    __syncthreads();
    for (int offset = 1; offset < n; offset *= 2) {
        pin = 1 - pout; pout = 1 - pout;
        if (thid >= offset)
            temp[pout * n + thid] = temp[pin * n + thid] + temp[pin * n + thid - offset];
        else
            temp[pout * n + thid] = temp[pin * n + thid];
        __syncthreads();
    }
    out[thid] = temp[pout * n + thid];
}
"""
    x, out = np.ones(64, np.float32), np.zeros(64, np.float32)
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory temp\[\d+\]") as info:
        kernel("hs", source)((1,), (64,), (out, x, 64))
    assert "hint: Lines 10 and 12 are the two branches of one if/else, which threads take in the same step, so no " \
           "barrier can go between them" in str(info.value)
    kernel("hs", source.replace("pin = 1 - pout; pout = 1 - pout;", "pout = 1 - pout; pin = 1 - pout;"))(
        (1,), (64,), (out, x, 64))
    np.testing.assert_array_equal(out, np.arange(1, 65))  # the twin


def test_a_race_in_a_method_of_a_shared_struct_names_the_member_the_method_uses():
    """`c.inc()` with `void inc() { n++; }` (the member bare, or `this->n`) run by many threads of a `__shared__
    Counter c`: the race names `c.n` and the hint atomicAdd(&c.n, ...), not the whole struct `c` (the test for the
    struct's name on the method's line matched the letter c of `struct Counter`)."""
    source = r"""
struct Counter { int n; __device__ void inc() { n++; } };
extern "C" __global__ void count(const float* x, int* out) {
    __shared__ Counter c;
    if (threadIdx.x == 0) c.n = 0;
    __syncthreads();
    if (x[threadIdx.x] > 0.5f) c.inc();
    __syncthreads();
    if (threadIdx.x == 0) out[0] = c.n;
}
"""
    x = np.linspace(0, 1, 64, dtype=np.float32)
    for spelled in (source, source.replace("{ n++; }", "{ this->n++; }")):
        with pytest.raises(cuda.KernelError, match=r"data race on shared memory c\.n: ") as info:
            kernel("count", spelled)((1,), (64,), (x, np.zeros(1, np.int32)))
        assert "use atomicAdd(&c.n, value)" in str(info.value)
    out = np.zeros(1, np.int32)
    kernel("count", source.replace("{ n++; }", "{ atomicAdd(&n, 1); }"))((1,), (64,), (x, out))  # the twin
    assert out[0] == (x > 0.5).sum()


def test_structs_in_shared_memory_are_race_checked_member_by_member():
    out = np.zeros(1, np.float32)
    kernel("struct_totals")((1,), (64,), (np.ones(64, np.float32), out, 0))
    assert out[0] == 64
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory stats\.sum: ") as info:
        kernel("struct_totals")((1,), (64,), (np.ones(64, np.float32), out, 1))
    assert info.value.line == line_of("STRUCT: every thread adds into one member")
    assert "atomicAdd(&stats.sum, value)" in str(info.value)
    # (the kernel alone, with the first race turned off: not the whole file compiled again)
    start = SOURCE.index("struct Stats")
    source = SOURCE[start:SOURCE.index("\n}\n", start) + 3].replace("if (racy) stats.sum", "if (racy == 1) stats.sum").replace(
        "else atomicAdd(&stats.sum", "else if (!racy) atomicAdd(&stats.sum")
    assert "if (racy == 1) stats.sum" in source and "else if (!racy) atomicAdd" in source and "kogge" not in source
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory per_half\[0\]\.count: "):
        cuda.RawKernel(source, "struct_totals", backend="cpu")((1,), (64,), (np.ones(64, np.float32), out, 2))


VECTOR_STORES = {  # ways optimised kernels move four floats at once into shared memory
    "deref of a cast address": "*(float4*)&s[4 * t] = *(const float4*)&x[4 * t];",
    "deref of a cast, in parentheses": "*(float4*)(&s[4 * t]) = *(const float4*)(&x[4 * t]);",
    "reinterpret_cast of an address": "reinterpret_cast<float4*>(&s[4 * t])[0] = reinterpret_cast<const float4*>(&x[4 * t])[0];",
    "reinterpret_cast of the array": "reinterpret_cast<float4*>(s)[t] = reinterpret_cast<const float4*>(x)[t];",
    "C cast of the array": "((float4*)s)[t] = ((const float4*)x)[t];",
    "a local float4 pointer": "float4* d = reinterpret_cast<float4*>(s); d[t] = reinterpret_cast<const float4*>(x)[t];",
    "a macro, as SGEMM code writes it": "FETCH_FLOAT4(s[4 * t]) = CFETCH_FLOAT4(x[4 * t]);",
    "elements in parentheses": "(s[4 * t]) = x[4 * t]; (s[4 * t + 1]) = x[4 * t + 1]; (s[4 * t + 2]) = x[4 * t + 2]; "
                               "(s[4 * t + 3]) = x[4 * t + 3];",
}


@pytest.mark.parametrize("how", sorted(VECTOR_STORES))
def test_vector_stores_into_shared_memory_are_writes(how):
    """No false alarm when the barrier is there (each form is a write, not a read), the race when it
    is not, and the bounds of the array as float4 elements."""
    template = """
#define FETCH_FLOAT4(pointer) (reinterpret_cast<float4*>(&(pointer))[0])
#define CFETCH_FLOAT4(pointer) (reinterpret_cast<const float4*>(&(pointer))[0])
extern "C" __global__ void k(const float* x, float* out, int extra) {
    __shared__ float s[64];
    int t = threadIdx.x;
    STORE
    BARRIER
    out[t] = s[63 - t];
    if (extra) out[t] = reinterpret_cast<float4*>(s)[t + 1].x;  // BOUNDS
}"""
    source = template.replace("STORE", VECTOR_STORES[how])
    x, out = np.arange(64, dtype=np.float32), np.zeros(16, np.float32)
    cuda.RawKernel(source.replace("BARRIER", "__syncthreads();"), "k", backend="cpu")((1,), (16,), (x, out, 0))
    np.testing.assert_array_equal(out, np.arange(63, 47, -1))
    with pytest.raises(cuda.KernelError, match=r"race on shared memory s\[\d+\]: thread \(\d+, 0, 0\) read it at line "
                                               r"\d+ before thread \(\d+, 0, 0\) wrote it"):
        cuda.RawKernel(source.replace("BARRIER", ""), "k", backend="cpu")((1,), (16,), (x, out, 0))
    with pytest.raises(cuda.KernelError, match=r"s\[16\] .*16 elements|16-byte elements") as info:
        cuda.RawKernel(source.replace("BARRIER", "__syncthreads();"), "k", backend="cpu")((1,), (16,), (x, out, 1))
    assert info.value.thread == (15, 0, 0)


def test_textbook_style_kernels_run_clean_with_every_check_on():
    source = (Path(__file__).parent / "cuda_kernels" / "textbook.cu").read_text()
    module = cuda.RawModule(code=source, backend="cpu", sanitize=True, name_expressions=["block_sum<float, 256>"])
    mask = np.ndarray((5, 5), np.float32, module.get_global("mask"))  # as with CuPy: wrap the memory
    mask[...] = 1 / 25
    image, out = np.ones((40, 40), np.float32), np.zeros((40, 40), np.float32)
    module.get_function("convolve_tiled")((4, 4), (16, 16), (image, out, 40, 40))
    np.testing.assert_allclose(out[2:-2, 2:-2], 1.0, rtol=1e-5)
    text = np.frombuffer(b"shared memory and atomics make a fast histogram " * 8, np.int8).copy()
    histogram = np.zeros(7, np.uint32)
    module.get_function("letter_histogram")(((len(text) + 255) // 256,), (64,), (text, np.uint32(len(text)), histogram))
    letters = text[(text >= ord("a")) & (text <= ord("z"))] - ord("a")
    np.testing.assert_array_equal(histogram, np.bincount(letters // 4, minlength=7))
    x, sums = np.ones(4000, np.float32), np.zeros(16, np.float32)
    module.get_function("block_sum<float, 256>")((16,), (256,), (x, sums, np.uint32(4000)), shared_mem=256 * 4)
    np.testing.assert_array_equal(sums, [256] * 15 + [4000 - 15 * 256])
    a, b = np.random.default_rng(1).random((2, 16, 16), np.float32)
    c = np.zeros((16, 16), np.float32)
    module.get_function("matmul_macro_tiles")((2, 2), (8, 8), (a, b, c, 16))
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


CASTS_AND_MEMBERS = r"""
template <class T> struct Span {          // built in device code: its pointer is checked
    T* data; int n;
    __device__ T& operator[](int i) const { return data[i]; }  // SPAN: the access
};
struct Node { Node* next; int value; };  // a pointer to its own type: checked too
struct Launch { float* buffer; int n; };  // a kernel parameter's type: the host's layout
extern "C" __global__ void forget_const(const float* in, float* out, int n) {
    int i = threadIdx.x;
    float* scratch = const_cast<float*>(in);
    if (i < n) { scratch[i] = 0.0f; out[i] = in[i]; }  // CONST: writes the input
}
extern "C" __global__ void read_through_const_cast(const float* in, float* out, int n) {
    int i = threadIdx.x;
    if (i < n) out[i] = *const_cast<float*>(in + i) + (*reinterpret_cast<const float2*>(in + (i & ~1))).y;
}
extern "C" __global__ void quad_sum(const int* in, int* out, int offset) {
    int4 v = *reinterpret_cast<const int4*>(in + offset + 4 * threadIdx.x);  // QUAD: a vector load
    out[threadIdx.x] = v.x + v.y + v.z + v.w;
}
extern "C" __global__ void span_sum(const float* in, float* out, int n, int reach) {
    Span<const float> s{in, n};
    Node last{nullptr, 1}, first{&last, 2};
    float total = first.next->value;
    for (int k = 0; k < reach; ++k) total += s[k];
    out[threadIdx.x] = total;
}
extern "C" __global__ void fill_launch(Launch job) { }
"""


@pytest.mark.filterwarnings("ignore:kernel source kernel.cu, line 7. .Launch..buffer. is a pointer inside a struct")
@pytest.mark.parametrize("sanitize", [False, True])
def test_const_casts_vector_derefs_and_struct_members_stay_checked(sanitize):
    line = lambda marker: line_of(marker, CASTS_AND_MEMBERS)
    module = cuda.RawModule(code=CASTS_AND_MEMBERS, backend="cpu", sanitize=sanitize)
    x, out = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    module.get_function("read_through_const_cast")((1,), (8,), (x, out, 8))
    np.testing.assert_array_equal(out, x + x.reshape(4, 2)[:, 1].repeat(2))
    if sanitize:  # the read-only check is the sanitizer's
        with pytest.raises(cuda.KernelError, match=r"writes in\[0\], but in is read-only") as info:
            module.get_function("forget_const")((1,), (8,), (x, out, 8))
        assert info.value.line == line("CONST: writes the input")
    sums = np.zeros(2, np.int32)
    module.get_function("quad_sum")((1,), (2,), (np.arange(16, dtype=np.int32), sums, 4))
    np.testing.assert_array_equal(sums, [22, 38])
    with pytest.raises(cuda.KernelError, match="misaligned address") as info:
        module.get_function("quad_sum")((1,), (2,), (np.arange(16, dtype=np.int32), sums, 2))
    assert info.value.line == line("QUAD: a vector load")
    totals = np.zeros(4, np.float32)
    module.get_function("span_sum")((1,), (4,), (x, totals, 8, 8))
    np.testing.assert_array_equal(totals, 1 + x.sum())  # last.value, through first.next
    with pytest.raises(cuda.KernelError, match=r"accessed in\[8\], but in has 8 elements") as info:
        module.get_function("span_sum")((1,), (4,), (x, totals, 8, 9))
    assert info.value.line == line("SPAN: the access")
    parsed = cuda_source.parse(CASTS_AND_MEMBERS)
    assert "float* buffer;" in parsed.cpu_text  # a host-facing struct's layout kept
    assert "__cc_ptr<Node> next;" in parsed.cpu_text  # a list's link, checked
    assert "operator" not in parsed.globals  # a member operator is a function, not a __device__ variable


def test_an_unwritten_read_is_reported_before_the_fault_its_garbage_causes():
    source = r"""
extern "C" __global__ void gather(const float* x, float* out, int fill) {
    __shared__ int where[32];
    if (fill) where[threadIdx.x] = 31 - threadIdx.x;
    __syncwarp();
    int j = where[threadIdx.x];  // READ
    out[threadIdx.x] = x[j];     // garbage as an index: out of bounds, but the read above is the bug
}"""
    x, out = np.arange(32, dtype=np.float32), np.zeros(32, np.float32)
    gather = cuda.RawKernel(source, "gather", backend="cpu")
    gather((1,), (32,), (x, out, 1))
    np.testing.assert_array_equal(out, x[::-1])
    with pytest.raises(cuda.KernelError, match=r"reads shared memory where\[0\], which no thread of block") as info:
        gather((1,), (32,), (x, out, 0))
    assert info.value.line == line_of("READ", source)
    with pytest.raises(cuda.KernelError, match=r"accessed x\[-1\]"):  # without the sanitizer: the fault itself
        cuda.RawKernel(source, "gather", backend="cpu", sanitize=False)((1,), (32,), (x, out, 0))


HANDOVER = r"""
__device__ unsigned int retired = 0;
__device__ void sum_into_first(float* s, unsigned t) {  // a block's tree sum, after its values are in s
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (t < stride) s[t] += s[t + stride];
        __syncthreads();
    }
}
extern "C" __global__ void last_block_sum(const float* in, float* partial, int fence) {
    __shared__ float s[64];
    __shared__ bool last;
    unsigned t = threadIdx.x;
    s[t] = in[blockIdx.x * blockDim.x + t];
    sum_into_first(s, t);
    if (t == 0) {
        partial[blockIdx.x] = s[0];                       // block 0 writes partial[0] ...
        if (fence) __threadfence();                       // ... makes it visible ...
        last = atomicInc(&retired, gridDim.x) == gridDim.x - 1;  // ... and hands over
    }
    __syncthreads();
    if (last) {
        s[t] = t < gridDim.x ? partial[t] : 0.0f;        // PARTIALS: every thread reads one block's
        sum_into_first(s, t);
        if (t == 0) { partial[0] = s[0]; retired = 0; }   // LAST: the last block overwrites partial[0]
    }
}
extern "C" __global__ void last_block_sum_volatile(const float* in, volatile float* partial, int fence) {
    // The Programming Guide's version: partial is volatile, which keeps each access in memory but
    // orders nothing; the fence is still what makes the partial visible before the ticket.
    __shared__ bool last;
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = in[blockIdx.x];            // STORE
        if (fence) __threadfence();
        last = atomicInc(&retired, gridDim.x) == gridDim.x - 1;
    }
    __syncthreads();
    if (last && threadIdx.x == 0) {
        float total = 0.0f;
        for (int b = 0; b < gridDim.x; b++) total += partial[b];  // SUM
        partial[gridDim.x] = total;
        retired = 0;
    }
}
extern "C" __global__ void chained_total(const float* in, volatile unsigned long long* state) {
    // Each block adds its value to the total of the block before it and publishes the pair (ready
    // bit, total) in one 64-bit store: the word is its own news, and needs no fence.
    if (threadIdx.x != 0) return;
    unsigned b = blockIdx.x, before = 0;
    if (b > 0) {
        unsigned long long w;
        do { w = state[b - 1]; } while ((w >> 32) == 0);
        before = (unsigned)w;
    }
    state[b] = (1ull << 32) | (before + (unsigned)in[b]);
    atomicInc(&retired, gridDim.x);                      // published after the word, unrelated to it
}
extern "C" __global__ void count_after_directive(int* total) {
#if 1
    *total = *total + 1;                                 // DIRECTIVE: a lost update, after a preprocessor line
#endif
}
extern "C" __global__ void locked_add(int* lock, float* total, const float* x, int fence) {
    if (threadIdx.x == 0) {
        while (atomicCAS(lock, 0, 1) != 0) { }
        total[0] += x[blockIdx.x];                        // LOCKED: one block at a time
        if (fence) __threadfence();
        atomicExch(lock, 0);
    }
}
"""


def test_a_fence_and_an_atomic_hand_a_global_element_from_block_to_block():
    module = cuda.RawModule(code=HANDOVER, backend="cpu", sanitize=True)
    line = lambda marker: line_of(marker, HANDOVER)
    partial = np.zeros(8, np.float32)
    module.get_function("last_block_sum")((8,), (64,), (np.ones(512, np.float32), partial, 1))
    assert partial[0] == 512
    # Without the fence nothing orders block 0's write before the last block's reads (thread 0 took the
    # ticket; the others follow it through __syncthreads()).
    with pytest.raises(cuda.KernelError, match=r"(?s)reads partial\[0\], which thread \(0, 0, 0\) of block \(0, 0, 0\) "
                                               r"stored at line \d+ in this launch and then handed over to other blocks through an atomic or a "
                                               r"volatile flag, with no __threadfence\(\) between the store and the handover") as info:
        module.get_function("last_block_sum")((8,), (64,), (np.ones(512, np.float32), partial, 0))
    assert info.value.line == line("PARTIALS") and info.value.block == (7, 0, 0)
    lock, total = np.zeros(1, np.int32), np.zeros(1, np.float32)
    module.get_function("locked_add")((4,), (32,), (lock, total, np.ones(4, np.float32), 1))
    assert total[0] == 4 and lock[0] == 0
    with pytest.raises(cuda.KernelError, match=r"updates total\[0\] \(reads it and writes it back\)") as info:
        module.get_function("locked_add")((4,), (32,), (lock, total, np.ones(4, np.float32), 0))
    assert info.value.line == line("LOCKED")


EVERY_THREAD_FENCES = r"""
__device__ unsigned int tickets = 0;
extern "C" __global__ void parts_then_ticket(const float* x, float* part, float* out, int n, int mode) {
    __shared__ bool last;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    part[i] = 2.0f * x[i];                                  // PART
    if (mode != 2) __threadfence();                         // each thread fences its own part ...
    if (mode != 3) __syncthreads();                         // ... before the barrier ...
    if (threadIdx.x == 0) last = atomicInc(&tickets, gridDim.x) == gridDim.x - 1;  // ... then one ticket
    __syncthreads();
    if (mode == 1) __threadfence();                         // (a fence on the reading side too)
    if (last && threadIdx.x == 0) {
        float s = 0.0f;
        for (int j = 0; j < n; j++) s += part[j];           // SUM
        out[0] = s;
        tickets = 0;
    }
}
"""


@pytest.mark.parametrize("mode", [0, 1, 2, 3])
def test_every_thread_fencing_its_part_before_the_barrier_hands_it_over_with_one_ticket(mode):
    """Each thread writes its part and fences, __syncthreads(), thread 0 takes the last-block ticket: the fences
    came before the barrier and the ticket after it, so every part is handed over, as on a GPU (red team 12-06:
    reported as a race, "needs __threadfence()" where every thread had one). Without the fences (mode 2), or
    without the barrier, so that thread 0 may take the ticket before the others wrote (mode 3), it is a race."""
    module = cuda.RawModule(code=EVERY_THREAD_FENCES, backend="cpu", sanitize=True)
    np.ndarray((1,), np.uint32, module.get_global("tickets"))[...] = 0
    part, out = np.zeros(512, np.float32), np.zeros(1, np.float32)
    args = (np.ones(512, np.float32), part, out, 512, mode)
    if mode < 2:
        module.get_function("parts_then_ticket")((8,), (64,), args)
        assert out[0] == 1024
        return
    with pytest.raises(cuda.KernelError, match=r"reads part\[\d+\], which thread") as info:
        module.get_function("parts_then_ticket")((8,), (64,), args)
    assert info.value.line == line_of("SUM", EVERY_THREAD_FENCES)


GLOBAL_IDIOMS = r"""
extern "C" __global__ void chained_and_found(const int* in, volatile int* flags, volatile int* sums, int* found,
                                             int key, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (!*found && i < n && in[i] == key) *found = 1;   // a flag many threads set to one value: no bug
    __shared__ int total;
    if (threadIdx.x == 0) total = 0;
    __syncthreads();
    atomicAdd(&total, i < n ? in[i] : 0);
    __syncthreads();
    if (threadIdx.x == 0) {                              // block b waits for block b - 1 (a chained scan)
        int p = 0;
        if (blockIdx.x > 0) { while (flags[blockIdx.x - 1] == 0) { } p = sums[blockIdx.x - 1]; }
        sums[blockIdx.x] = p + total;
        __threadfence();
        flags[blockIdx.x] = 1;
    }
}
extern "C" __global__ void set_by_one(int* out, int* scale, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int s = scale[0];
    if (blockIdx.x == 0 && threadIdx.x == 0) scale[0] = 2;   // SET
    if (i < n) out[i] = s;
}
extern "C" __global__ void plain_unlock(int* mutex, int* total) {
    if (threadIdx.x == 0) {
        while (atomicCAS(mutex, 0, 1) != 0) { }
        __threadfence();
        *total = *total + blockIdx.x;
        __threadfence();
        *mutex = 0;                                          // UNLOCK
    }
}
extern "C" __global__ void scatter(const int* idx, const float* v, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[idx[i]] = v[i];
}
extern "C" __global__ void wait_for_later_block(int* flag, int* out) {
    if (blockIdx.x == 1 && threadIdx.x == 0) { out[1] = 7; __threadfence(); atomicExch(flag, 1); }
    if (blockIdx.x == 0 && threadIdx.x == 0) { while (flag[0] == 0) { } out[0] = out[1]; }   // WAIT
}
"""


def test_global_memory_idioms_and_their_messages(recwarn):
    """Red team 12-06: a correct chained scan beside a benign `*found = 1` was reported after a full time limit
    (the rerun in the opposite order waits for ever: blocks wait for the block before them); one thread setting
    a value every thread reads was called a lost update; a lock released with a plain store was told to set the
    lock before the launch; a scatter whose data repeat an index with one value was told to check blockIdx; a
    wait on a plain read that timed out did not say the read may be hoisted when the compile-time warning had
    been given before."""
    module = cuda.RawModule(code=GLOBAL_IDIOMS, backend="cpu", sanitize=True)
    line = lambda marker: line_of(marker, GLOBAL_IDIOMS)
    x = (np.arange(1024) % 5).astype(np.int32)
    flags, sums, found = np.zeros(16, np.int32), np.zeros(16, np.int32), np.zeros(1, np.int32)
    module.get_function("chained_and_found")((16,), (64,), (x, flags, sums, found, 3, 1024))
    assert sums[-1] == x.sum() and found[0] == 1
    with pytest.raises(cuda.KernelError, match=r"(?s)reads scale\[0\], which thread \(0, 0, 0\) set at line \d+ in this "
                                               r"launch: the other threads may read it before that store or after it.*"
                                               r"hint: A value that one thread sets for the others") as info:
        module.get_function("set_by_one")((4,), (64,), (np.zeros(256, np.int32), np.ones(1, np.int32), 256))
    assert "lost" not in str(info.value).split("effect:")[0] and f"at line {line('SET')}" in str(info.value)
    with pytest.raises(cuda.KernelError, match=r"(?s)released with a plain store.*hint: Release the lock atomically, after "
                                               r"a fence.*`__threadfence\(\); atomicExch\(&mutex\[0\], 0\);`"):
        module.get_function("plain_unlock")((8,), (32,), (np.zeros(1, np.int32), np.zeros(1, np.int32)))
    idx = np.arange(1024, dtype=np.int32) % 700
    out = np.zeros(700, np.float32)
    module.get_function("scatter")((4,), (256,), (idx, (2 * idx).astype(np.float32), out, 1024))
    assert out.tolist() == (2 * np.arange(700)).tolist()
    assert not [w for w in recwarn if "repeat one another's work" in str(w.message)]
    waits = cuda.RawModule(code=GLOBAL_IDIOMS, backend="cpu", sanitize=True, time_limit=0.3)
    with pytest.raises(cuda.KernelError, match=rf"(?s)ran longer than its time limit.*hint: Line {line('WAIT')}: The loop "
                                               r"waits for `flag\[0\] == 0` to change, with a plain read"):
        waits.get_function("wait_for_later_block")((2,), (32,), (np.zeros(1, np.int32), np.zeros(2, np.int32)))


CHAIN = r"""
extern "C" __global__ void chain(const int* in, int* sums, int* flags) {
    int b = blockIdx.x;
    if (threadIdx.x != 0) return;
    int p = 0;
    if (b > 0) {
        while (((volatile int*)flags)[b - 1] == 0) { }  // WAIT
        __threadfence();
        p = ((volatile int*)sums)[b - 1];  // READ
    }
    sums[b] = p + in[b];  // STORE
    PUBLISH  // FLAG
}
"""


@pytest.mark.parametrize("publish, told", [
    ("__threadfence(); ((volatile int*)flags)[b] = 1;", None),
    ("__threadfence(); atomicExch(&flags[b], 1);", None),
    ("__threadfence(); flags[b] = 1;", "Line {FLAG} sets the flag with a plain store, `flags[b] = 1;`, while line "
                                       "{WAIT} waits for it with a volatile (or atomic) read"),
    ("((volatile int*)flags)[b] = 1;", "Line {STORE}'s store is handed over by line {FLAG}'s `((volatile int*)flags)[b] "
                                       "= 1` with no __threadfence() between them"),
    ("((volatile int*)flags)[b] = 1; __threadfence();", "the fence after the flag comes too late")])
def test_a_chain_of_blocks_handing_over_through_a_flag_is_told_what_its_publishing_side_lacks(publish, told):
    """Block b waits for block b - 1's flag, fences and reads its sum: a flag stored plainly, a flag with no fence
    before it and a fence after the flag are each named as what they are, not as 'blocks cannot wait'."""
    source = CHAIN.replace("PUBLISH", publish)
    sums, flags = np.zeros(4, np.int32), np.zeros(4, np.int32)
    if told is None:
        kernel("chain", source, sanitize=True)((4,), (32,), (np.arange(1, 5, dtype=np.int32), sums, flags))
        assert sums.tolist() == [1, 3, 6, 10]
        return
    with pytest.raises(cuda.KernelError) as info:
        kernel("chain", source, sanitize=True)((4,), (32,), (np.arange(1, 5, dtype=np.int32), sums, flags))
    lines = {m: line_of(m, source) for m in ("WAIT", "READ", "STORE", "FLAG")}
    assert told.format(**lines) in str(info.value)
    assert "Blocks cannot wait for each other" not in str(info.value)


# Block 0 stores its part, orders the stores (BARRIER), and its thread 0 publishes a flag (PUBLISH); block 1's thread
# 0 waits for the flag (WAIT), a barrier, and every thread reads block 0's part backwards.
HANDOFF = r"""
#include <cuda/atomic>
extern "C" __global__ void k(const float* x, float* data, int* flag, float* out) {
    int t = threadIdx.x;
    if (blockIdx.x == 0) {
        data[t] = x[t];  // STORE
        BARRIER
        if (t == 0) { PUBLISH }  // PUBLISH
    } else {
        if (t == 0) { WAIT }  // WAIT
        __syncthreads();
        out[t] = data[blockDim.x - 1 - t];  // READ
    }
}"""
DEVICE_FLAG = "cuda::atomic_ref<int, cuda::thread_scope_device> f(*flag);"


def handoff(publish, wait, barrier="__syncthreads();"):
    return HANDOFF.replace("BARRIER", barrier).replace("PUBLISH }", publish + " }").replace("WAIT }", wait + " }")


def handoff_args(threads=32):
    x = np.arange(threads, dtype=np.float32)
    return x, np.zeros(threads, np.float32), np.zeros(1, np.int32), np.zeros(threads, np.float32)


@pytest.mark.parametrize("fence, scoped", [
    ("__threadfence_block();", "__threadfence_block()"),
    ("cuda::atomic_thread_fence(cuda::memory_order_release, cuda::thread_scope_block);",
     "cuda::atomic_thread_fence(cuda::memory_order_release, cuda::thread_scope_block)"),
    ("__threadfence();", None),
    ("cuda::atomic_thread_fence(cuda::memory_order_release, cuda::thread_scope_device);", None)])
def test_a_fence_of_block_scope_before_a_flag_for_another_block_is_named(fence, scoped):
    """The block stores, __syncthreads(), thread 0 fences and sets a device-scope flag that another block waits for:
    a fence of block scope there is named as the bug (it orders the stores for its own block only)."""
    source = handoff(f"{fence} {DEVICE_FLAG} f.store(1, cuda::memory_order_relaxed);",
                     f"{DEVICE_FLAG} while (f.load(cuda::memory_order_relaxed) == 0) {{}} "
                     "cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_device);")
    args = handoff_args()
    if scoped is None:
        kernel("k", source, sanitize=True)((2,), (32,), args)
        np.testing.assert_array_equal(args[3], args[0][::-1])
        return
    with pytest.raises(cuda.KernelError) as info:
        kernel("k", source, sanitize=True)((2,), (32,), args)
    assert (f"Line {line_of('PUBLISH', source)}'s `{scoped}` is a fence of block scope: it orders line "
            f"{line_of('STORE', source)}'s store before the flag only for the threads of its own block") in str(info.value)


def test_a_flag_between_blocks_through_a_block_scope_atomic_ref_is_called_a_flag_not_a_lost_update():
    """A cuda::atomic_ref of thread_scope_block stored (release) by one block and loaded by another: the message says
    it is used as a flag between blocks, whose orders hold within one block only, not that an update is lost."""
    flag = DEVICE_FLAG.replace("thread_scope_device", "thread_scope_block")
    source = handoff(f"{flag} f.store(1, cuda::memory_order_release);",
                     f"{flag} while (f.load(cuda::memory_order_acquire) == 0) {{}}")
    args = handoff_args()
    with pytest.raises(cuda.KernelError) as info:
        kernel("k", source, sanitize=True)((2,), (32,), args)
    message = str(info.value)
    assert "reads flag[0], which thread (0, 0, 0) of block (0, 0, 0) also used at line" in message
    assert "as a flag between blocks, through a cuda::atomic_ref of cuda::thread_scope_block" in message
    assert "one is lost" not in message and info.value.line == line_of("WAIT", source)
    assert "Use cuda::thread_scope_device" in message
    kernel("k", source.replace("thread_scope_block", "thread_scope_device"), sanitize=True)((2,), (32,), args)
    np.testing.assert_array_equal(args[3], args[0][::-1])


def test_a_lock_released_without_a_fence_is_told_to_fence_after_the_last_store_it_guards():
    """Two stores under a lock and no fence before atomicExch releases it: the fence goes after the second store,
    just before the release, not after the first (which would leave the second unguarded)."""
    source = r"""
extern "C" __global__ void k(int* lock, float* total, const float* x) {
    if (threadIdx.x != 0) return;
    while (atomicCAS(lock, 0, 1) != 0) { }
    total[0] = total[0] + x[blockIdx.x];  // FIRST
    total[1] = total[1] + 1.0f;           // SECOND
    atomicExch(lock, 0);                  // RELEASE
}"""
    with pytest.raises(cuda.KernelError, match=r"no __threadfence\(\) between the store and the handover") as info:
        kernel("k", source, sanitize=True)((4,), (32,), (np.zeros(1, np.int32), np.zeros(2, np.float32),
                                                         np.ones(4, np.float32)))
    assert (f"Add __threadfence() after line {line_of('SECOND', source)}, just before line "
            f"{line_of('RELEASE', source)}'s `atomicExch(lock, 0)`") in str(info.value)
    fenced = source.replace("atomicExch(lock, 0);  ", "__threadfence(); atomicExch(lock, 0);")
    total = np.zeros(2, np.float32)
    kernel("k", fenced, sanitize=True)((4,), (32,), (np.zeros(1, np.int32), total, np.ones(4, np.float32)))
    assert total.tolist() == [4, 4]


def test_a_volatile_store_handed_over_without_a_fence_is_reported_where_it_is_read():
    module = cuda.RawModule(code=HANDOVER, backend="cpu", sanitize=True)
    line = lambda marker: line_of(marker, HANDOVER)
    retired = np.ndarray((1,), np.uint32, module.get_global("retired"))
    retired[...] = 0  # (a launch stopped by a report leaves the ticket counter where it was)
    partial = np.zeros(9, np.float32)
    module.get_function("last_block_sum_volatile")((8,), (32,), (np.arange(8, dtype=np.float32), partial, 1))
    assert partial[8] == 28
    with pytest.raises(cuda.KernelError, match=r"(?s)reads partial\[0\], which thread \(0, 0, 0\) of block \(0, 0, 0\) "
                                               r"stored at line (\d+) in this launch and then handed over.*no "
                                               r"__threadfence\(\) between the store and the handover") as info:
        module.get_function("last_block_sum_volatile")((8,), (32,), (np.arange(8, dtype=np.float32),
                                                                     np.zeros(9, np.float32), 0))
    assert info.value.line == line("SUM") and info.value.block == (7, 0, 0)
    assert f"stored at line {line('STORE')}" in str(info.value) and f"Add __threadfence() after line {line('STORE')}" \
        in str(info.value)
    # A word that holds both the news and the value needs no fence, whatever its writer does next.
    retired[...] = 0
    state = np.zeros(6, np.uint64)
    module.get_function("chained_total")((6,), (32,), (np.ones(6, np.float32), state))
    assert list(state & 0xFFFFFFFF) == [1, 2, 3, 4, 5, 6]


def test_a_handover_without_a_fence_is_reported_when_the_store_leaves_the_value_as_it_was():
    """The fenceless last-block sum launched on the partials a finished launch left: each block stores the
    partial that is there already, so a stale read gives this launch's answer, but the missing fence is the
    bug all the same (the next data shows it). The fenced one, launched so, raises nothing."""
    module = cuda.RawModule(code=HANDOVER, backend="cpu", sanitize=True)
    retired = np.ndarray((1,), np.uint32, module.get_global("retired"))
    partial = np.zeros(8, np.float32)
    for fence in (1, 1):  # (the second launch stores the partials the first one left)
        retired[...] = 0
        partial[0] = 0
        module.get_function("last_block_sum")((8,), (64,), (np.ones(512, np.float32), partial, fence))
        assert partial[0] == 512 and all(partial[1:] == 64)
    partial[0] = 64  # (block 0's partial, which the last block had overwritten with the total)
    retired[...] = 0
    with pytest.raises(cuda.KernelError, match=r"(?s)reads partial\[0\], which thread \(0, 0, 0\) of block \(0, 0, 0\) "
                                               r"stored at line \d+ in this launch and then handed over.*no "
                                               r"__threadfence\(\) between the store and the handover") as info:
        module.get_function("last_block_sum")((8,), (64,), (np.ones(512, np.float32), partial, 0))
    assert info.value.line == line_of("PARTIALS", HANDOVER) and info.value.block == (7, 0, 0)


def test_an_access_right_after_a_preprocessor_line_is_checked_like_any_other():
    module = cuda.RawModule(code=HANDOVER, backend="cpu", sanitize=True)
    with pytest.raises(cuda.KernelError, match=r"total\[0\].*a read-modify-write without an atomic") as info:
        module.get_function("count_after_directive")((1,), (32,), (np.zeros(1, np.int32),))
    assert info.value.line == line_of("DIRECTIVE", HANDOVER)
    assert "hands the element over" not in str(info.value)  # a lost update: no handover to fence (the source has atomics)


IN_PLACE = r"""
extern "C" __global__ void normalize(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] / x[0];                   // IN-PLACE: thread 0 overwrites what all read
}
"""


def test_an_in_place_update_that_reads_another_element_is_not_called_a_counter():
    """`x[i] = x[i] / x[0]`: every thread reads x[0], and thread 0 overwrites it. That is no counter
    kept by hand (which atomicAdd would fix): the hint says to write into another array."""
    x = np.arange(2, 66, dtype=np.float32)  # (x[0] = 2 becomes 1: the others' results depend on when they read it)
    with pytest.raises(cuda.KernelError, match=r"reads x\[0\], which thread \(0, 0, 0\) overwrote at line \d+ in this "
                                               r"launch: the statement writes x\[i\] in place and reads x\[0\]") as info:
        kernel("normalize", IN_PLACE)((2,), (32,), (x, 64))
    assert "atomicAdd" not in str(info.value) and "Write the results into another array" in str(info.value)
    assert info.value.line == line_of("IN-PLACE", IN_PLACE)


UNION_AND_POINTER_ARRAYS = r"""
extern "C" __global__ void reuse(const float* in, float* out, int barriers) {
    __shared__ union { float f[32]; int i[32]; } u;  // one buffer, two uses
    u.f[threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    float v = u.f[31 - threadIdx.x];
    if (barriers) __syncthreads();
    u.i[threadIdx.x] = (int)v;                       // REUSE: overwrites what others still read
    if (barriers) __syncthreads();
    out[threadIdx.x] = (float)u.i[(threadIdx.x + 1) % 32];
}
extern "C" __global__ void struct_member_race(float* out) {
    __shared__ struct { int n; double d; float v[4][2]; } acc;
    acc.v[2][1] = (float)threadIdx.x;                // both threads write one element
    __syncthreads();
    out[threadIdx.x] = acc.v[2][1];
}
extern "C" __global__ void two_rows(float* out, int width) {
    __shared__ float a[4], b[4];
    float* rows[2] = {a, b};
    struct Pair { float v[2]; int n; } pair;          // a local struct: its members stay as written
    pair.v[0] = 1.0f, pair.n = 1;
    rows[threadIdx.x % 2][threadIdx.x / 2 * width] = pair.v[0] * pair.n;  // ROWS
    __syncthreads();
    if (threadIdx.x == 0) out[0] = a[0] + a[1] + b[0] + b[1];
}
"""


def test_a_shared_union_and_an_array_of_pointers_are_checked():
    line = lambda marker: line_of(marker, UNION_AND_POINTER_ARRAYS)
    module = cuda.RawModule(code=UNION_AND_POINTER_ARRAYS, backend="cpu", sanitize=True)
    out = np.zeros(32, np.float32)
    module.get_function("reuse")((1,), (32,), (np.arange(32, dtype=np.float32), out, 1))
    np.testing.assert_array_equal(out, (31 - (np.arange(32) + 1) % 32))
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory u\.i\[1\]: thread \(0, 0, 0\) read it") as info:
        module.get_function("reuse")((1,), (32,), (np.arange(32, dtype=np.float32), out, 0))
    assert info.value.line == line("REUSE")
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory acc\.v\[2\]\[1\]: thread \(0, 0, 0\) wrote"):
        module.get_function("struct_member_race")((1,), (2,), (out,))  # the member's index, past acc.n
    total = np.zeros(1, np.float32)
    module.get_function("two_rows")((1,), (4,), (total, 1))
    assert total[0] == 4
    with pytest.raises(cuda.KernelError, match=r"accessed a\[4\] through a pointer into the __shared__ array a") as info:
        module.get_function("two_rows")((1,), (4,), (total, 4))
    assert info.value.line == line("ROWS")


LOCAL_ARRAYS = r"""
struct Pair { float lo, hi; };
__device__ void fill(float* a, float& last) { a[0] = 1.0f; last = 2.0f; }
// A register-tiled product: each thread keeps a 2×2 tile of sums in a local array.
extern "C" __global__ void tile_sums(const float* x, float* out, int zeroed) {
    float acc[2][2];
    if (zeroed)
        for (int i = 0; i < 2; ++i)
            for (int j = 0; j < 2; ++j) acc[i][j] = 0.0f;
    for (int k = 0; k < 4; ++k)
        for (int i = 0; i < 2; ++i)
            for (int j = 0; j < 2; ++j) acc[i][j] += x[k] * (i + j);  // ACCUMULATE
    out[threadIdx.x] = acc[1][1];
}
// The same forgotten zero in a kernel with barriers: every thread declares its tile before any reads it.
extern "C" __global__ void staged(const float* x, float* out) {
    __shared__ float s[256];
    float acc[2];
    s[threadIdx.x] = x[threadIdx.x];
    __syncthreads();
    acc[1] += s[255 - threadIdx.x];  // STAGED
    out[threadIdx.x] = acc[1];
}
// Elements written where the sanitizer cannot see the write (by sincosf through &a[i], through a
// reference parameter), a struct copied whole, -1 written in a loop: no report.
extern "C" __global__ void written_other_ways(const float* x, float* out, int extra) {
    float trig[2], head[3], tail[4];
    Pair p[2];
    int best[3];
    sincosf(x[0], &trig[0], &trig[1]);
    fill(head, head[2]);
    head[1] = 0.5f;
    p[0].lo = 1.0f, p[0].hi = 2.0f;
    p[1] = p[0];
    for (int i = 0; i < 3; ++i) best[i] = -1;
    for (int i = 0; i < 3; ++i) tail[i] = i;
    float t = trig[0] + trig[1] + head[0] + head[1] + head[2] + p[1].hi + best[2] + tail[2];
    if (extra) t += tail[3];  // TAIL
    out[threadIdx.x] = t;
}
"""


def test_a_local_array_read_before_the_thread_wrote_it_is_reported():
    """initcheck for local arrays (compute-sanitizer checks shared memory only): the accumulator
    a learner forgot to zero; elements written by a library call or through a reference are no
    false alarm."""
    line = lambda marker: line_of(marker, LOCAL_ARRAYS)
    module = cuda.RawModule(code=LOCAL_ARRAYS, backend="cpu", sanitize=True)
    x, out = np.ones(4, np.float32), np.zeros(8, np.float32)
    module.get_function("tile_sums")((2,), (8,), (x, out, 1))
    np.testing.assert_array_equal(out, 8.0)
    with pytest.raises(cuda.KernelError, match=r"(?s)reads element 0 of its local array acc \(of 4\), which this thread "
                                               r"has not written.*hint: Give acc its first values where you declare "
                                               r"it \(`= \{\}` makes every element 0\)") as info:
        module.get_function("tile_sums")((2,), (8,), (x, out, 0))
    assert info.value.line == line("ACCUMULATE") and info.value.thread == (0, 0, 0)
    with pytest.raises(cuda.KernelError, match=r"reads element 1 of its local array acc \(of 2\)") as info:
        module.get_function("staged")((1,), (256,), (np.ones(256, np.float32), np.zeros(256, np.float32)))
    assert info.value.line == line("STAGED") and info.value.thread == (0, 0, 0)  # the first thread, as always
    others = module.get_function("written_other_ways")
    others((1,), (4,), (np.zeros(1, np.float32), out := np.zeros(4, np.float32), 0))
    np.testing.assert_array_equal(out, 0 + 1 + 1 + 0.5 + 2 + 2 - 1 + 2)
    with pytest.raises(cuda.KernelError, match=r"reads element 3 of its local array tail \(of 4\)") as info:
        others((1,), (4,), (np.zeros(1, np.float32), out, 1))
    assert info.value.line == line("TAIL")
    # Without the sanitizer the same kernel runs (as on a GPU, the sum is whatever was there).
    cuda.RawModule(code=LOCAL_ARRAYS, backend="cpu", sanitize=False).get_function("tile_sums")(
        (2,), (8,), (x, np.zeros(8, np.float32), 0))


GLOBAL_HAZARDS = r"""
extern "C" __global__ void sum_zeroed_inside(const float* x, float* total, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0) *total = 0.0f;                        // ZERO: a plain write, unordered with the atomics
    if (i < n) atomicAdd(total, x[i]);                // ATOMIC
}
extern "C" __global__ void sum(const float* x, float* total, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(total, x[i]);
}
__device__ float atomic_max_float(float* at, float v) {
    int* bits = (int*)at;
    int old = *bits, assumed;
    do {
        assumed = old;
        if (__int_as_float(assumed) >= v) break;
        old = atomicCAS(bits, assumed, __float_as_int(v));
    } while (assumed != old);
    return __int_as_float(old);
}
extern "C" __global__ void float_max(const float* x, float* top, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomic_max_float(top, x[i]);
}
extern "C" __global__ void mean_of(const float* total, float* mean, int n) { *mean = *total / n; }
extern "C" __global__ void shift_left_in_place(float* a, int n, int lane) {  // lane: only that lane of each warp
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i + 1 < n && (lane < 0 || threadIdx.x % 32 == lane || threadIdx.x % 32 == 0))
        a[i] = a[i + 1];                              // SHIFT: thread i+1 may write a[i+1] first
}
extern "C" __global__ void shift_left(const float* a, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i + 1 < n) out[i] = a[i + 1];
}
extern "C" __global__ void neighbours_in_place(float* a, int n, int barrier) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float left = i > 0 && i < n ? a[i - 1] : 0.0f;    // NEIGHBOUR: written by thread i-1
    if (barrier) __syncthreads();
    if (i < n) a[i] += left;                          // NEIGHBOUR-WRITE
}
extern "C" __global__ void scratch_then_neighbour(const float* x, float* tmp, float* y, int barrier) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tmp[i] = 2.0f * x[i];                             // SCRATCH-WRITE
    if (barrier) __syncthreads();
    y[i] = tmp[blockIdx.x * blockDim.x + (threadIdx.x + 1) % blockDim.x];   // SCRATCH-READ: within the block
}
extern "C" __global__ void publish(float* data, float* out, int* flag, int fence) {
    if (threadIdx.x != 0) return;
    if (blockIdx.x == 0) {
        data[0] = 42.0f;
        if (fence) __threadfence();
        *(volatile int*)flag = 1;                     // a volatile store: a relaxed atomic, as in PTX
    } else {
        while (*(volatile int*)flag == 0) { }
        if (fence) __threadfence();
        out[0] = data[0];                             // CONSUME
    }
}
extern "C" __global__ void volatile_found(const float* x, int* out, float target) {
    __shared__ int found;
    if (threadIdx.x == 0) found = 0;
    __syncthreads();
    volatile int* flag = &found;
    if (x[threadIdx.x] == target) *flag = 1;          // every finder stores the same 1
    __syncthreads();
    if (threadIdx.x == 0) out[blockIdx.x] = found;
}
extern "C" __global__ void compact(const float* x, float* out, int* count, int n, int atomic) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n || x[i] <= 0.0f) return;
    int slot = atomic ? atomicAdd(count, 1) : *count;  // SLOT: a counter kept by hand
    out[slot] = x[i];
    if (!atomic) *count = slot + 1;
}
extern "C" __global__ void warp_handoff(float* a, int sync) {
    unsigned t = threadIdx.x;
    a[t] = (float)t;
    if (sync) __syncwarp();
    float v = a[t ^ 1];                               // WARP: lanes read their neighbour's element
    if (sync) __syncwarp();
    a[t] = v + 1.0f;
}
"""


def test_an_accumulator_zeroed_in_the_kernel_loses_the_atomics_before_it():
    x, total = np.ones(128, np.float32), np.zeros(1, np.float32)
    with pytest.raises(cuda.KernelError) as info:  # (total is 0 already: the store changes nothing here, on a GPU it can)
        kernel("sum_zeroed_inside", GLOBAL_HAZARDS)((4,), (32,), (x, total, 128))
    message = str(info.value)
    assert info.value.line == line_of("ATOMIC", GLOBAL_HAZARDS) and info.value.thread == (1, 0, 0)
    assert (f"atomically updates total[0], which thread (0, 0, 0) wrote (a plain write) at line "
            f"{line_of('ZERO', GLOBAL_HAZARDS)}") in message and "Set total before the launch" in message
    total[:] = 0
    kernel("sum", GLOBAL_HAZARDS)((4,), (32,), (x, total, 128))  # the twin: zeroed by the host
    assert total[0] == 128


def test_the_atomiccas_loop_reads_what_other_threads_update_atomically():
    # A plain read of an element that other threads update atomically is no hazard: the CAS loop
    # (NVIDIA's atomicAdd for double, a float max) reads, then swaps only if nobody came between.
    x, top = np.random.default_rng(0).random(100).astype(np.float32), np.full(1, -1, np.float32)
    kernel("float_max", GLOBAL_HAZARDS)((4,), (32,), (x, top, 100))
    assert top[0] == x.max()
    x, total, mean = np.ones(100, np.float32), np.zeros(1, np.float32), np.zeros(1, np.float32)
    kernel("sum", GLOBAL_HAZARDS)((4,), (32,), (x, total, 100))
    kernel("mean_of", GLOBAL_HAZARDS)(1, 1, (total, mean, 100))  # the total is read by the next launch
    assert mean[0] == 1



ATOMIC_TOTALS = r"""
extern "C" __global__ void mean_in_kernel(const float* x, float* total, float* mean, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(total, x[i]);                // ADD
    __syncthreads();                                  // (orders the block's own threads only)
    if (i == 0) *mean = *total / n;                   // MEAN: the other blocks may not have added yet
}
__device__ float add_by_cas(float* at, float v) {
    unsigned* bits = (unsigned*)at;
    unsigned old = *bits, assumed;                    // a plain read, then a compare-and-swap until it sticks
    do {
        assumed = old;
        old = atomicCAS(bits, assumed, __float_as_uint(v + __uint_as_float(assumed)));
    } while (assumed != old);
    return __uint_as_float(old);
}
extern "C" __global__ void sum_by_cas(const float* x, float* total, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) add_by_cas(total, x[i]);
}
"""


def test_a_total_read_in_the_launch_that_other_blocks_still_add_to_is_reported():
    """`atomicAdd(total, x[i]); __syncthreads(); if (i == 0) *mean = *total / n;`: __syncthreads() orders
    one block's threads, and the other blocks may add after the read. The read of an atomically updated
    element is a race only where the results depend on it: an atomicCAS loop reads the same way and
    ends right whatever it read (its sum differs from run to run only by the rounding of another order)."""
    x = np.random.default_rng(4).random(1024).astype(np.float32)
    with pytest.raises(cuda.KernelError, match=r"atomically updates total\[0\], which thread \(0, 0, 0\) of block "
                                               r"\(0, 0, 0\) read at line \d+ in this launch, and blocks run in any "
                                               r"order: the read may come before some of the updates") as info:
        kernel("mean_in_kernel", ATOMIC_TOTALS, sanitize=True)(
            (4,), (256,), (x, np.zeros(1, np.float32), np.zeros(1, np.float32), 1024))
    assert info.value.line == line_of("ADD", ATOMIC_TOTALS) and info.value.block == (1, 0, 0)
    assert f"read at line {line_of('MEAN', ATOMIC_TOTALS)}" in str(info.value)
    assert "complete only when the launch ends" in str(info.value)
    assert re.search(r"effect: Run again with the blocks, and each block's threads, in the opposite order, this launch "
                     r"gives mean\[0\] = [\d.]+ instead of [\d.]+\.", str(info.value))
    mean = np.zeros(1, np.float32)  # the twin: one block, whose barrier orders every update before the read
    kernel("mean_in_kernel", ATOMIC_TOTALS, sanitize=True)((1,), (1024,), (x, np.zeros(1, np.float32), mean, 1024))
    assert abs(mean[0] - x.mean()) < 1e-5
    total = np.zeros(1, np.float32)
    kernel("sum_by_cas", ATOMIC_TOTALS, sanitize=True)((4,), (256,), (x, total, 1024))
    assert abs(total[0] - x.sum()) < 1e-2
    # values that cancel: the sum is near 0, and another order's rounding is large beside it (no race)
    half = np.random.default_rng(5).standard_normal(512).astype(np.float32)
    total[:] = 0
    kernel("sum_by_cas", ATOMIC_TOTALS, sanitize=True)((4,), (256,), (np.concatenate([half, -half[::-1]]), total, 1024))
    assert abs(total[0]) < 1e-3


def test_in_place_updates_that_read_other_threads_elements():
    a = np.arange(64, dtype=np.float32)
    # Thread 0 reads a[1] before thread 1 overwrites it (a write after a read); between blocks too.
    with pytest.raises(cuda.KernelError, match=r"writes a\[1\], which thread \(0, 0, 0\) read at line \d+ in this "
                                               r"launch, with no __syncthreads\(\) between them") as info:
        kernel("shift_left_in_place", GLOBAL_HAZARDS)((2,), (32,), (a, 64, -1))
    assert info.value.line == line_of("SHIFT", GLOBAL_HAZARDS) and info.value.thread == (1, 0, 0)
    assert "read from one array and write to another" in str(info.value)
    with pytest.raises(cuda.KernelError, match=r"writes a\[32\], which thread \(31, 0, 0\) of block \(0, 0, 0\) read "
                                               r"at line \d+ in this launch, and blocks run in any order") as info:
        kernel("shift_left_in_place", GLOBAL_HAZARDS)((2,), (32,), (np.arange(64, dtype=np.float32), 64, 31))
    assert info.value.block == (1, 0, 0)
    a, out = np.arange(64, dtype=np.float32), np.zeros(64, np.float32)
    kernel("shift_left", GLOBAL_HAZARDS)((2,), (32,), (a, out, 64))  # the twin: out of place
    np.testing.assert_array_equal(out[:63], a[1:])
    # A read after another thread's write in one block: the barrier goes between the two lines.
    with pytest.raises(cuda.KernelError) as info:
        kernel("neighbours_in_place", GLOBAL_HAZARDS)((1,), (32,), (np.ones(32, np.float32), 32, 0))
    write, read = line_of("NEIGHBOUR-WRITE", GLOBAL_HAZARDS), line_of("NEIGHBOUR:", GLOBAL_HAZARDS)
    assert (f"reads a[0], which thread (0, 0, 0) wrote at line {write} in this launch, with no __syncthreads() "
            f"between them") in str(info.value) and info.value.line == read
    assert f"Add __syncthreads() between line {write} (the write) and line {read}" in str(info.value)
    # with several blocks, a barrier cannot reach the neighbours at a block's edge: two arrays first
    with pytest.raises(cuda.KernelError) as info:
        kernel("neighbours_in_place", GLOBAL_HAZARDS)((2,), (16,), (np.ones(32, np.float32), 32, 0))
    assert str(info.value).split("hint: ")[1].startswith(
        "If each thread needs its neighbours' old values (a stencil, the Game of Life, a Jacobi step), read from one "
        "array and write to another (swap them between launches)")
    a = np.ones(32, np.float32)
    kernel("neighbours_in_place", GLOBAL_HAZARDS)((1,), (32,), (a, 32, 1))  # the twin: one block, a barrier between
    np.testing.assert_array_equal(a, [1] + [2] * 31)
    # The code writes a scratch array, then reads what other threads of the block wrote there: the barrier
    # between the two lines is the fix, even with several blocks (a second launch when the reads cross blocks)
    x, tmp, y = np.arange(64, dtype=np.float32), np.zeros(64, np.float32), np.zeros(64, np.float32)
    with pytest.raises(cuda.KernelError) as info:
        kernel("scratch_then_neighbour", GLOBAL_HAZARDS)((2,), (32,), (x, tmp, y, 0))
    write, read = line_of("SCRATCH-WRITE", GLOBAL_HAZARDS), line_of("SCRATCH-READ", GLOBAL_HAZARDS)
    assert str(info.value).split("hint: ")[1].startswith(
        f"Add __syncthreads() between line {write} (the write) and line {read} (the read)")
    assert "read it in a second launch" in str(info.value) and "a stencil" not in str(info.value)
    kernel("scratch_then_neighbour", GLOBAL_HAZARDS)((2,), (32,), (x, tmp, y, 1))  # the twin
    np.testing.assert_array_equal(y, 2 * x.reshape(2, 32)[:, (np.arange(32) + 1) % 32].ravel())


ODD_EVEN = r"""
extern "C" __global__ void odd_even(float* d, int n, int barrier) {
    int t = threadIdx.x;
    for (int phase = 0; phase < n; phase++) {
        int i = 2 * t + (phase & 1);
        if (i + 1 < n && d[i] > d[i + 1]) { float x = d[i]; d[i] = d[i + 1]; d[i + 1] = x; }   // SWAP
        if (barrier) __syncthreads();
    }
}
"""


def test_an_odd_even_sort_in_global_memory_without_its_barrier_is_told_to_end_each_phase_with_one():
    """Its threads share elements from one phase to the next, never within one: the race is across passes of
    the loop, and the fix is a barrier at the end of the loop's body (one block: global memory is ordered too)."""
    data = np.random.default_rng(3).random(64).astype(np.float32)
    sort = cuda.RawKernel(ODD_EVEN.replace("        if (barrier) __syncthreads();\n", ""), "odd_even", backend="cpu")
    with pytest.raises(cuda.KernelError, match=r"kernel 'odd_even' writes d\[\d+\], which thread") as info:
        sort((1,), (32,), (data.copy(), 64, 0))
    swap = line_of("SWAP", ODD_EVEN)
    assert str(info.value).split("hint: ")[1].startswith(
        f"Line {swap} runs in a loop (lines {swap - 2} to {swap + 1}) with no barrier in it, so one thread can be "
        "several passes ahead of another.")
    assert f"put __syncthreads() at the end of the loop's body, after line {swap}" in str(info.value)
    fixed = data.copy()
    cuda.RawKernel(ODD_EVEN, "odd_even", backend="cpu")((1,), (32,), (fixed, 64, 1))  # the twin
    np.testing.assert_array_equal(fixed, np.sort(data))



BREADTH_FIRST = r"""
extern "C" __global__ void bfs_level(const unsigned* row_start, const unsigned* neighbours, unsigned vertices,
                                     unsigned* level, unsigned* visited_new, unsigned current) {
    unsigned v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= vertices || level[v] != current - 1) return;   // FRONTIER: other threads may be setting level[v]
    for (unsigned e = row_start[v]; e < row_start[v + 1]; ++e) {
        unsigned u = neighbours[e];
        if (level[u] == 0xFFFFFFFFu) {                      // SEEN
            level[u] = current;                             // MARK: every writer stores the same level
            *visited_new = 1;
        }
    }
    if (v == vertices - 1) printf("last vertex %u expanded at level %u\n", v, current);
}
extern "C" __global__ void bfs_level_in_steps(const unsigned* row_start, const unsigned* neighbours, unsigned vertices,
                                             unsigned* level, unsigned* visited_new, unsigned current) {
    __shared__ unsigned frontier[64];                       // the same, with a barrier: threads as fibers
    unsigned v = blockIdx.x * blockDim.x + threadIdx.x;
    frontier[threadIdx.x] = v < vertices && level[v] == current - 1;
    __syncthreads();
    if (!frontier[threadIdx.x]) return;
    for (unsigned e = row_start[v]; e < row_start[v + 1]; ++e) {
        unsigned u = neighbours[e];
        if (level[u] == 0xFFFFFFFFu) {
            level[u] = current;
            *visited_new = 1;
        }
    }
    if (v == vertices - 1) printf("last vertex %u expanded at level %u\n", v, current);
}
extern "C" __global__ void count_distinct(const int* v, int* seen, int* count, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && !seen[v[i]]) {                             // TEST
        seen[v[i]] = 1;                                     // SET
        atomicAdd(count, 1);
    }
}
extern "C" __global__ void running_max(const float* x, float* top, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] > *top) *top = x[i];                  // MAX: a maximum kept by hand
}
"""


def _graph(vertices=150, seed=5):
    rng = np.random.default_rng(seed)
    lists = [sorted(set(rng.integers(0, vertices, rng.integers(1, 4)).tolist())) for _ in range(vertices)]
    lists[vertices - 2].append(vertices - 1)  # the last vertex is reached, and expanded
    row_start = np.cumsum([0] + [len(n) for n in lists]).astype(np.uint32)
    return row_start, np.concatenate(lists).astype(np.uint32), lists


def test_a_race_whose_order_cannot_change_the_results_is_no_bug(capfd):
    """The breadth-first search of PMPP's chapter on graphs: a thread tests level[v] while another thread
    may be marking it, and several threads store the same level. On a GPU either order gives the same
    levels, so the sanitized launch runs again with blocks and threads in the opposite order and stays
    quiet; the same kind of race that does change a result is still reported."""
    row_start, neighbours, lists = _graph()
    vertices = len(lists)
    levels = {}
    for name in ("bfs_level", "bfs_level_in_steps"):
        level = np.full(vertices, 0xFFFFFFFF, np.uint32)
        level[0] = 0
        search = kernel(name, BREADTH_FIRST, sanitize=True)
        current, printed = 1, ""
        while True:
            visited_new = np.zeros(1, np.uint32)
            search(((vertices + 63) // 64,), (64,), (row_start, neighbours, np.uint32(vertices), level, visited_new,
                                                     np.uint32(current)))
            printed += capfd.readouterr().out
            if not visited_new[0]:
                break
            current += 1
        levels[name] = level
        assert current > 3  # several levels, each with the race (the first has it already: vertex 0's neighbours)
        # printf output of the launch that met the race comes once and whole (the first run's part is not repeated)
        assert printed.count("last vertex") == 1 and printed.count("\n") == 1
    expected, frontier = np.full(vertices, 0xFFFFFFFF, np.uint32), [0]
    expected[0] = 0
    while frontier:  # the levels, one frontier at a time
        following = []
        for v in frontier:
            for u in lists[v]:
                if expected[u] == 0xFFFFFFFF:
                    expected[u] = expected[v] + 1
                    following.append(u)
        frontier = following
    for level in levels.values():
        np.testing.assert_array_equal(level, expected)
    # The twin whose order matters: a maximum kept by hand. In launch order over descending values
    # only thread 0 writes (each later thread reads its value: a read and a write); in the opposite
    # order every thread writes, so the runs differ and the first race found is reported.
    x = np.sort(np.random.default_rng(1).random(128).astype(np.float32))[::-1].copy()
    with pytest.raises(cuda.KernelError, match=r"reads top\[0\], which thread \(0, 0, 0\) also read here and then "
                                               r"wrote back") as info:
        kernel("running_max", BREADTH_FIRST, sanitize=True)((4,), (32,), (x, np.zeros(1, np.float32), 128))
    assert info.value.line == line_of("MAX", BREADTH_FIRST) and info.value.thread == (1, 0, 0)
    assert "atomicMax" in str(info.value)
    # A check-then-set: in any order of whole threads one thread finds the flag unset, so each value
    # counts once; on a GPU two threads can both read it before either sets it. The run in which the
    # racing read sees the value from before the other thread's write counts twice: reported.
    v = np.random.default_rng(2).integers(0, 16, 256).astype(np.int32)
    with pytest.raises(cuda.KernelError, match=r"reads seen\[\d+\], which thread \(\d+, 0, 0\) also tested here and "
                                               rf"then set at line {line_of('SET', BREADTH_FIRST)} in this launch: a "
                                               r"check-then-set without an atomic") as info:
        kernel("count_distinct", BREADTH_FIRST, sanitize=True)(
            (4,), (64,), (v, np.zeros(16, np.int32), np.zeros(1, np.int32), 256))
    assert info.value.line == line_of("TEST", BREADTH_FIRST)
    assert "if (atomicExch(&seen[v[i]], 1) != 1)" in str(info.value)
    assert re.search(r"effect: Run again with each such read seeing the value from before the other thread's write "
                     r"\(or atomic update\), "
                     r"this launch gives count\[0\] = \d+ instead of 16\.", str(info.value))
    # Past a race that changes nothing, a real bug further on is the message (not the race)
    past = BREADTH_FIRST.replace('if (v == vertices - 1) printf("last vertex %u expanded at level %u\\n", v, current);',
                                 "if (v == vertices - 1) level[vertices] = current;      // PAST-THE-END", 1)
    assert past != BREADTH_FIRST
    level = np.where(expected <= 1, expected, 0xFFFFFFFF).astype(np.uint32)  # levels 0 and 1 known
    level[vertices - 1] = 1  # (the last vertex is expanded in this launch)
    with pytest.raises(cuda.KernelError, match=rf"accessed level\[{vertices}\], but level has {vertices} elements") as info:
        kernel("bfs_level", past, sanitize=True)(((vertices + 63) // 64,), (64,), (
            row_start, neighbours, np.uint32(vertices), level, np.zeros(1, np.uint32), np.uint32(2)))
    assert info.value.line == line_of("PAST-THE-END", past)
    # Past it, two threads storing different parents of one vertex (`parent[u] = v`): that race is the message,
    # not the harmless test of a level that the other threads' writes of parent made the order matter for
    parents = BREADTH_FIRST.replace("unsigned* visited_new, unsigned current) {\n    unsigned v",
                                    "unsigned* visited_new, unsigned current, unsigned* parent) {\n    unsigned v", 1)
    parents = parents.replace("            level[u] = current;                             // MARK: every writer stores "
                              "the same level\n",
                              "            level[u] = current;\n            parent[u] = v;                     "
                              "             // PARENT\n", 1)
    # (a vertex found at this level again is given a parent again: two stores of different values)
    parents = parents.replace("if (level[u] == 0xFFFFFFFFu) {                      // SEEN",
                              "if (level[u] == 0xFFFFFFFFu || level[u] == current) {", 1)
    assert parents.count("parent[u] = v;") == 1 and "|| level[u] == current" in parents
    level, parent = np.full(vertices, 0xFFFFFFFF, np.uint32), np.zeros(vertices, np.uint32)
    level[0] = 0
    with pytest.raises(cuda.KernelError, match=r"writes parent\[\d+\], which thread \(\d+, 0, 0\)(?: of block "
                                               r"\(\d+, 0, 0\))? also wrote at line \d+ in this launch, without an "
                                               r"atomic") as info:
        for current in range(1, vertices):  # (until two vertices of a frontier share an unseen neighbour)
            kernel("bfs_level", parents, sanitize=True)(((vertices + 63) // 64,), (64,), (
                row_start, neighbours, np.uint32(vertices), level, np.zeros(1, np.uint32), np.uint32(current), parent))
    assert info.value.line == line_of("PARENT", parents)
    # The in-place shift changes results with the order of its read and write: still a race (see above).
    with pytest.raises(cuda.KernelError, match=r"writes a\[1\], which thread \(0, 0, 0\) read"):
        kernel("shift_left_in_place", GLOBAL_HAZARDS, sanitize=True)((2,), (32,), (np.arange(64, dtype=np.float32), 64, -1))



@pytest.mark.parametrize("far", [1e9, np.inf, np.nan])
def test_a_race_that_changes_results_is_found_beside_a_huge_or_infinite_element(far):
    """Whether a race changes the results is judged element by element (rounding relative to each
    value and to the array's typical magnitude): one huge, infinite or NaN element that no thread
    touches hides nothing, and the effect names an element that changed."""
    a = np.ones(65, np.float32)
    a[64] = far  # (the launch covers a[0..63])
    with pytest.raises(cuda.KernelError, match=r"reads a\[31\], which thread \(31, 0, 0\)") as info:
        kernel("neighbours_in_place", GLOBAL_HAZARDS, sanitize=True)((2,), (32,), (a, 64, 1))
    assert "effect: Run again with the blocks, and each block's threads, in the opposite order, this launch " \
           "gives a[32] = 2 instead of 3." in str(info.value)


CHAINED_SCAN = r"""
extern "C" __global__ void chained_scan(const int* in, int* out, int* flags, int* sums, int* ticket, int n, int fence) {
    __shared__ int order, s[128], before;
    if (threadIdx.x == 0) order = atomicAdd(ticket, 1);   // blocks numbered in the order they start
    __syncthreads();
    int b = order, i = b * blockDim.x + threadIdx.x;
    s[threadIdx.x] = i < n ? in[i] : 0;
    __syncthreads();
    for (int step = 1; step < blockDim.x; step *= 2) {
        int v = threadIdx.x >= step ? s[threadIdx.x - step] : 0;
        __syncthreads();
        s[threadIdx.x] += v;
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        int p = 0;
        if (b > 0) {
            while (atomicAdd(&flags[b - 1], 0) == 0) { }      // wait for the block before
            p = sums[b - 1];                                 // SUM-READ
        }
        sums[b] = p + s[blockDim.x - 1];                     // SUM-WRITE
        if (fence) __threadfence();
        atomicExch(&flags[b], 1);                            // tell the next block
        before = p;
    }
    __syncthreads();
    if (i < n) out[i] = s[threadIdx.x] + before;
}
"""


def test_a_store_handed_over_through_an_atomic_without_a_fence_is_reported_as_the_missing_fence():
    """The single-pass (chained) scan: each block waits for the one before through an atomic flag and
    reads its running sum. Without __threadfence() between storing the sum and setting the flag, a GPU
    may show the flag first. The order of the blocks changes nothing in the results here, so this is
    no question of order: the read counted on a handover that nothing orders."""
    x = np.random.default_rng(3).integers(0, 10, 128 * 12).astype(np.int32)
    scan = kernel("chained_scan", CHAINED_SCAN, sanitize=True)
    args = lambda fence: (x, out, np.zeros(12, np.int32), np.zeros(12, np.int32), np.zeros(1, np.int32), x.size, fence)
    out = np.zeros_like(x)
    scan((12,), (128,), args(1))
    np.testing.assert_array_equal(out, np.cumsum(x))
    with pytest.raises(cuda.KernelError, match=r"reads sums\[0\], which thread \(0, 0, 0\) of block \(0, 0, 0\) stored "
                                               rf"at line {line_of('SUM-WRITE', CHAINED_SCAN)} in this launch and then "
                                               r"handed over to other blocks through an atomic") as info:
        scan((12,), (128,), args(0))
    assert info.value.line == line_of("SUM-READ", CHAINED_SCAN) and info.value.block == (1, 0, 0)
    assert f"Add __threadfence() after line {line_of('SUM-WRITE', CHAINED_SCAN)}" in str(info.value)
    # without the sanitizer, on every worker thread, the scan with its fence is right too
    out[:] = 0
    kernel("chained_scan", CHAINED_SCAN, sanitize=False)((12,), (128,), args(1))
    np.testing.assert_array_equal(out, np.cumsum(x))


def test_an_unwritten_shared_value_converted_to_bytes_is_reported_as_the_race_or_the_unwritten_read():
    """CUDA by Example's shared bitmap without its barrier: the converted value is shared memory's poison (a NaN)
    and does not fit an unsigned char, but the bug is the missing __syncthreads(): the thread goes on, and the
    race is reported when another thread writes the element it read (it said "no thread has written", which
    sent the learner to the writes). The twin where no thread ever writes the element: the unwritten read."""
    source = r"""
extern "C" __global__ void bitmap(unsigned char* ptr) {
    __shared__ float shared[16][16];
    int x = threadIdx.x + blockIdx.x * blockDim.x, y = threadIdx.y + blockIdx.y * blockDim.y;
    shared[threadIdx.x][threadIdx.y] = 255 * (sinf(x * 0.05f) + 1.0f) * (sinf(y * 0.05f) + 1.0f) / 4.0f;  // WRITE
    ptr[x + y * blockDim.x * gridDim.x] = shared[15 - threadIdx.x][15 - threadIdx.y];  // READ (no __syncthreads())
}
extern "C" __global__ void half_written(unsigned char* ptr) {
    __shared__ float shared[16][16];
    int x = threadIdx.x + blockIdx.x * blockDim.x, y = threadIdx.y + blockIdx.y * blockDim.y;
    if (threadIdx.x < 8) shared[threadIdx.x][threadIdx.y] = 255 * (sinf(x * 0.05f) + 1.0f) / 2.0f;
    __syncthreads();
    ptr[x + y * blockDim.x * gridDim.x] = shared[15 - threadIdx.x][15 - threadIdx.y];  // UNWRITTEN
}
"""
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory shared\[0\]\[8\]: thread \(15, 7, 0\) "
                                               r"read it at line \d+ before thread \(0, 8, 0\) wrote it") as info:
        kernel("bitmap", source)((2, 2), (16, 16), (np.zeros(32 * 32, np.uint8),))
    message = str(info.value)
    assert (f"Add __syncthreads() between line {line_of('WRITE', source)}, where thread (0, 8, 0) writes `shared[0][8]`, "
            f"and line {line_of('READ', source)}, where thread (15, 7, 0) reads it") in message
    assert "converted" not in message and "does not fit" not in message
    with pytest.raises(cuda.KernelError, match=r"reads shared memory shared\[15\]\[15\], which no thread of block "
                                               r"\(0, 0, 0\) has written") as info:
        kernel("half_written", source)((2, 2), (16, 16), (np.zeros(32 * 32, np.uint8),))
    assert info.value.line == line_of("UNWRITTEN", source) and "converted" not in str(info.value)
    # A plain launch (no initcheck) still stops at the conversion, as before, with the likely cause in its hint
    with pytest.raises(cuda.KernelError, match=r"converted the float NaN to unsigned char") as info:
        kernel("half_written", source, sanitize=False)((2, 2), (16, 16), (np.zeros(32 * 32, np.uint8),))
    assert "a read of a value never written" in str(info.value)


def test_a_loop_bounded_by_an_unwritten_shared_value_that_runs_out_of_time_reports_the_unwritten_read():
    """The thread goes on after converting an unwritten element's fill (above); where the garbage count keeps it
    looping past the time limit, the unwritten read is what is reported, not "an endless loop?"."""
    source = r"""
extern "C" __global__ void spin(float* out) {
    __shared__ float s[64];
    s[threadIdx.x] = 1.0f;
    __syncthreads();
    int reps = (int)s[threadIdx.x + 32];  // READ
    float acc = 0.0f;
    for (unsigned k = 0; k != (unsigned)reps; k++) acc += out[k % 32];
    out[threadIdx.x] = acc;
}
"""
    with pytest.raises(cuda.KernelError, match=r"reads shared memory s\[32\], which no thread of block") as info:
        kernel("spin", source, time_limit=1)((1,), (32,), (np.zeros(32, np.float32),))
    assert info.value.line == line_of("READ", source) and "time limit" not in str(info.value)


def test_an_unwritten_read_whose_garbage_faults_before_the_writer_runs_is_told_the_missing_barrier():
    """`idx[t] = perm[t]; int j = idx[63 - t]; out[j] = ...` with no barrier: thread 0 reads idx[63] before
    thread 63 writes it, and its garbage index stops it at once (so the write that would make it a race never
    runs): the hint names the writer and the barrier to add (it said "check which threads reach that write").
    The twin whose element no thread ever writes keeps that hint; a 2-D tile, `[threadIdx.y][threadIdx.x]`, too."""
    source = r"""
extern "C" __global__ void gather(const int* perm, const float* in, float* out) {
    __shared__ int idx[64];
    idx[threadIdx.x] = perm[threadIdx.x];  // WRITE
    int j = idx[63 - threadIdx.x];         // READ
    out[j] = in[threadIdx.x];
}
extern "C" __global__ void half_filled(const int* perm, const float* in, float* out) {
    __shared__ int idx[64];
    if (threadIdx.x < 32) idx[threadIdx.x] = perm[threadIdx.x];
    __syncthreads();
    int j = idx[63 - threadIdx.x];
    out[j] = in[threadIdx.x];
}
extern "C" __global__ void half_unbraced(const int* perm, const float* in, float* out) {
    __shared__ int idx[64];
    if (threadIdx.x < 32)
        idx[threadIdx.x] = perm[threadIdx.x];
    int j = idx[63 - threadIdx.x];
    out[j] = in[threadIdx.x];
}
extern "C" __global__ void tile(const int* perm, float* out) {
    __shared__ int t[8][8];
    t[threadIdx.y][threadIdx.x] = perm[threadIdx.y * 8 + threadIdx.x];  // TILE
    out[t[7 - threadIdx.y][7 - threadIdx.x]] = 1.0f;                    // CORNER
}
"""
    perm = np.arange(64, dtype=np.int32)[::-1].copy()
    with pytest.raises(cuda.KernelError, match=r"reads shared memory idx\[63\] before any thread of block \(0, 0, 0\) "
                                               r"has written it") as info:
        kernel("gather", source)((1,), (64,), (perm, np.ones(64, np.float32), np.zeros(64, np.float32)))
    write, read = line_of("WRITE", source), line_of("READ", source)
    assert (f"hint: Thread (63, 0, 0) writes idx[63] at line {write} (`idx[threadIdx.x] = perm[threadIdx.x];  // WRITE`), "
            f"but thread (0, 0, 0) read it at line {read} before that") in str(info.value)
    assert f"Add __syncthreads() between line {write} and line {read}" in str(info.value)
    with pytest.raises(cuda.KernelError, match=r"reads shared memory idx\[63\], which no thread of block") as info:
        kernel("half_filled", source)((1,), (64,), (perm, np.ones(64, np.float32), np.zeros(64, np.float32)))
    assert "check which threads of the block reach that write" in str(info.value)
    # (a write under an if on the line before, no barrier: thread 63 never writes idx[63], so no barrier is the fix)
    with pytest.raises(cuda.KernelError, match=r"reads shared memory idx\[63\], which no thread of block") as info:
        kernel("half_unbraced", source)((1,), (64,), (perm, np.ones(64, np.float32), np.zeros(64, np.float32)))
    assert "Add __syncthreads() between" not in str(info.value)
    with pytest.raises(cuda.KernelError, match=r"reads shared memory t\[7\]\[7\] before any thread") as info:
        kernel("tile", source)((1,), (8, 8), (perm, np.zeros(64, np.float32)))
    assert (f"Thread (7, 7, 0) writes t[7][7] at line {line_of('TILE', source)}") in str(info.value)


def test_every_block_storing_its_result_into_one_element_is_told_to_give_each_block_its_own_or_add_atomically():
    """`if (threadIdx.x == 0) out[0] = s[0];` (a block sum's last line, from every block) and CUDA by Example's
    dot product with `*c += cache[0];`: the blocks overwrite (or lose) each other's results. The hint names
    `out[blockIdx.x]` or `atomicAdd(&out[0], s[0])`, and `atomicAdd(c, cache[0])`, with the kernel's own names."""
    source = r"""
extern "C" __global__ void block_sum(const float* x, float* out, int n, int per_block) {
    __shared__ float s[128];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        if (per_block) out[blockIdx.x] = s[0];
        else out[0] = s[0];
    }
}
extern "C" __global__ void dot(const float* a, const float* b, float* c, int n) {
    __shared__ float cache[128];
    int tid = threadIdx.x + blockIdx.x * blockDim.x;
    float temp = 0;
    while (tid < n) { temp += a[tid] * b[tid]; tid += blockDim.x * gridDim.x; }
    cache[threadIdx.x] = temp;
    __syncthreads();
    for (int i = blockDim.x / 2; i != 0; i /= 2) {
        if (threadIdx.x < i) cache[threadIdx.x] += cache[threadIdx.x + i];
        __syncthreads();
    }
    if (threadIdx.x == 0) *c += cache[0];
}
"""
    module = cuda.RawModule(code=source, backend="cpu", sanitize=True)
    x = np.linspace(0, 1, 512, dtype=np.float32)
    with pytest.raises(cuda.KernelError, match=r"writes out\[0\], which thread \(0, 0, 0\) of block \(0, 0, 0\)") as info:
        module.get_function("block_sum")((4,), (128,), (x, np.zeros(4, np.float32), 512, 0))
    assert ("hint: Every block stores its result into `out[0]`, so the blocks overwrite one another and the last to run "
            "wins. Give each block its own element, `out[blockIdx.x] = s[0];`") in str(info.value)
    assert "`atomicAdd(&out[0], s[0]);`" in str(info.value)
    out = np.zeros(4, np.float32)
    module.get_function("block_sum")((4,), (128,), (x, out, 512, 1))  # the twin: one element per block
    np.testing.assert_allclose(out, x.reshape(4, 128).sum(axis=1), rtol=1e-5)
    with pytest.raises(cuda.KernelError, match=r"updates c\[0\] \(reads it and writes it back\)") as info:
        module.get_function("dot")((4,), (128,), (x, x, np.zeros(1, np.float32), 512))
    assert ("hint: Every block adds its result into `*c` with a plain `+=`, so two blocks can read the same old value "
            "and one block's part is lost. Make it one atomic: `atomicAdd(c, cache[0]);`") in str(info.value)


@pytest.mark.parametrize("dims", [3, 4])
def test_a_race_on_an_array_of_three_or_four_dimensions_names_every_subscript(dims):
    """`s[4][8][8]`: the element is s[1][2][5] (it was named s[1][21], a row's flat index)."""
    outer = "[2]" if dims == 4 else ""
    source = f"""
extern "C" __global__ void k(const float* in, float* out) {{
    __shared__ float s{outer}[4][8][8];
    int x = threadIdx.x, y = threadIdx.y, z = threadIdx.z;
    s{"[1]" if dims == 4 else ""}[z][(y + 2) & 7][(x + 5) & 7] = in[(z * 8 + y) * 8 + x];  // WRITE
    float up = s{"[1]" if dims == 4 else ""}[(z + 1) & 3][y ^ 1][x ^ 3];    // READ
    __syncthreads();
    out[(z * 8 + y) * 8 + x] = up;
}}
"""
    # thread (6, 3, 0) reads s[1][2][5] (z + 1, y ^ 1, x ^ 3) before thread (0, 0, 1) writes it
    named = "s[1][1][2][5]" if dims == 4 else "s[1][2][5]"
    with pytest.raises(cuda.KernelError, match=rf"data race on shared memory {re.escape(named)}: thread "
                                               r"\(6, 3, 0\) read it at line 6 before thread \(0, 0, 1\) wrote it"):
        kernel("k", source)((1,), (8, 8, 4), (np.ones(256, np.float32), np.zeros(256, np.float32)))


ALIASED = r"""
extern "C" __global__ void shift_right(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i + 1 < n) out[i + 1] = in[i];               // SHIFT
}
extern "C" __global__ void reverse_block(const float* in, float* out) {  // one block: all reads, a barrier, writes
    __shared__ float s[32];
    s[threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    out[31 - threadIdx.x] = s[threadIdx.x];
}
extern "C" __global__ void axpy(const float* x, const float* y, float* out, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * x[i] + y[i];
}
"""


@pytest.mark.parametrize("views", [False, True])
def test_one_array_passed_as_input_and_output_is_one_memory_for_the_race_checker(views):
    """k(x, x) (or x[:-1] and x[1:]): a thread writes through out what another reads through in. That
    is a race, not a write into the const input; each thread using its own elements in place is fine."""
    x = np.arange(65, dtype=np.float32)
    args = (x[:64], x[1:]) if views else (x[:64], x[:64])
    with pytest.raises(cuda.KernelError, match=r"reads in\[\d+\], which thread \(\d+, 0, 0\) wrote at line") as info:
        kernel("shift_right", ALIASED)((2,), (32,), (*args, 64))
    message = str(info.value)
    assert info.value.line == line_of("SHIFT", ALIASED) and "read-only" not in message
    assert "in and out are the same memory here" in message and "empty_like(x)" in message
    x, y = np.arange(64, dtype=np.float32), np.ones(64, np.float32)
    kernel("axpy", ALIASED)((2,), (32,), (x, y, x, np.float32(2), 64))  # the twin: x = 2x + y in place
    np.testing.assert_array_equal(x, 2 * np.arange(64) + 1)
    kernel("axpy", ALIASED)((2,), (32,), (x, x, x, np.float32(1), 64))  # x passed three times
    np.testing.assert_array_equal(x, 2 * (2 * np.arange(64) + 1))
    x = np.arange(32, dtype=np.float32)
    kernel("reverse_block", ALIASED)((1,), (32,), (x, x))  # in place through shared memory and a barrier
    np.testing.assert_array_equal(x, np.arange(32)[::-1])


def test_one_array_passed_for_two_restrict_parameters_is_told_it_breaks_their_promise():
    """An in-place blur whose parameters say __restrict__: the hint adds that the promise is broken; the
    same kernel without __restrict__ gets the plain hint, and neither reads as a same-value write (the
    data are random: the mean of an arithmetic progression's neighbours is the element itself)."""
    blur = r"""
extern "C" __global__ void blur(const float* %s in, float* %s out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > 0 && i < n - 1) out[i] = (in[i - 1] + in[i] + in[i + 1]) / 3.0f;
}"""
    for restrict in ("__restrict__", ""):
        x = np.random.default_rng(3).random(128).astype(np.float32)
        with pytest.raises(cuda.KernelError, match=r"reads in\[\d+\], which thread \(\d+, 0, 0\) wrote") as info:
            cuda.RawKernel(blur % (restrict, restrict), "blur", backend="cpu")((2,), (64,), (x, x, 128))
        message = str(info.value)
        assert "in and out are the same memory here" in message
        assert ("The kernel declares `in` and `out` __restrict__, a promise to the compiler" in message) == bool(restrict)
    x, y = np.random.default_rng(4).random(128).astype(np.float32), np.zeros(128, np.float32)
    cuda.RawKernel(blur % ("__restrict__", "__restrict__"), "blur", backend="cpu", sanitize=True)((2,), (64,), (x, y, 128))
    np.testing.assert_allclose(y[1:-1], (x[:-2] + x[1:-1] + x[2:]) / 3, rtol=1e-6)


def test_an_in_place_stencil_that_reads_its_own_element_is_not_called_a_counter_kept_by_hand():
    """A clamped blur given one array for in and out: thread 0 reads in[0] and writes it back as out[0], thread 1
    reads in[0] too. Not a lost update of a counter: a write through the other parameter, said so."""
    blur = r"""
extern "C" __global__ void blur(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float s = 0.0f;
    for (int d = -1; d <= 1; d++) s += in[min(max(i + d, 0), n - 1)];   // READ
    out[i] = s / 3.0f;
}"""
    x = np.random.default_rng(5).random(128).astype(np.float32)
    with pytest.raises(cuda.KernelError) as info:
        cuda.RawKernel(blur, "blur", backend="cpu", sanitize=True)((2,), (64,), (x, x, 128))
    message = str(info.value)
    assert re.search(r"reads in\[\d+\], which thread \(\d+, 0, 0\) also read here and then wrote at line \d+ through "
                     r"`out` in this launch", message), message
    assert "counter" not in message and "in and out are the same memory here" in message
    y = np.zeros(128, np.float32)  # the twin: separate arrays
    cuda.RawKernel(blur, "blur", backend="cpu", sanitize=True)((2,), (64,), (x, y, 128))
    padded = np.concatenate([x[:1], x, x[-1:]])
    np.testing.assert_allclose(y, (padded[:-2] + padded[1:-1] + padded[2:]) / 3, rtol=1e-6)


def test_a_counter_read_and_written_back_by_hand_is_a_lost_update_not_a_missing_barrier():
    x = np.ones(64, np.float32)
    with pytest.raises(cuda.KernelError, match=r"reads count\[0\], which thread \(0, 0, 0\) also read here and then "
                                               r"wrote back at line \d+ in this launch: a read-modify-write without "
                                               r"an atomic") as info:
        kernel("compact", GLOBAL_HAZARDS)((2,), (32,), (x, np.zeros(64, np.float32), np.zeros(1, np.int32), 64, 0))
    assert info.value.line == line_of("SLOT", GLOBAL_HAZARDS) and info.value.thread == (1, 0, 0)
    assert "`int old = atomicAdd(&count[0], 1);`" in str(info.value) and "__syncthreads() between" not in str(info.value)
    out, count = np.zeros(64, np.float32), np.zeros(1, np.int32)
    kernel("compact", GLOBAL_HAZARDS)((2,), (32,), (x, out, count, 64, 1))  # the twin: one atomic per thread
    assert count[0] == 64 and out.sum() == 64


def test_a_race_in_a_cooperative_groups_kernel_names_block_sync():
    source = r"""
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void tile_sums(const float* x, float* out) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<16> tile = cg::tiled_partition<16>(block);
    __shared__ float part[4];
    float v = x[block.thread_rank()];
    for (int o = tile.size() / 2; o > 0; o /= 2) v += tile.shfl_down(v, o);
    if (tile.thread_rank() == 0) part[block.thread_rank() / 16] = v;  // PART
    tile.sync();                                      // a tile's barrier: the other tiles' parts may not be there
    if (block.thread_rank() == 0) out[0] = part[0] + part[1] + part[2] + part[3];
}"""
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory part\[\d\]: thread \(\d+, 0, 0\) wrote it "
                                               r"at line 10, and thread \(0, 0, 0\) reads it at line 12") as info:
        kernel("tile_sums", source)((1,), (64,), (np.ones(64, np.float32), np.zeros(1, np.float32)))
    assert "Add __syncthreads() (`block.sync()` with cooperative groups) between line 10" in str(info.value)



def test_a_tiles_sync_used_as_the_blocks_barrier_is_named():
    """t32.sync() between a store and another warp's read: the hint says it orders only its tile's threads."""
    source = r"""
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void mirror(const float* x, float* y) {
    cg::thread_block b = cg::this_thread_block();
    auto t32 = cg::tiled_partition<32>(b);
    __shared__ float s[64];
    s[threadIdx.x] = x[threadIdx.x];
    t32.sync();
    y[threadIdx.x] = s[63 - threadIdx.x];
}"""
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory s\[63\]") as info:
        kernel("mirror", source)((1,), (64,), (np.ones(64, np.float32), np.zeros(64, np.float32)))
    assert "t32.sync() orders only the 32 threads of one tile, and threads (0, 0, 0) and (63, 0, 0) are in " \
           "different tiles." in str(info.value)

@pytest.mark.parametrize("declaration, name", [("cg::thread_group cta = cg::this_thread_block();", "cta"),
                                               ("auto g = cooperative_groups::this_thread_block();", "g")])
def test_a_race_hint_names_the_kernels_own_block_group(declaration, name):
    """The hint spells the barrier with the name the kernel gave its thread block (a `thread_group g`
    too), not with another name."""
    source = r"""
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void shift(const float* x, float* out) {
    DECLARATION
    __shared__ float s[64];
    s[threadIdx.x] = x[threadIdx.x];
    out[threadIdx.x] = s[(threadIdx.x + 1) % 64];
}""".replace("DECLARATION", declaration)
    with pytest.raises(cuda.KernelError, match="data race on shared memory s") as info:
        kernel("shift", source)((1,), (64,), (np.ones(64, np.float32), np.zeros(64, np.float32)))
    assert f"Add __syncthreads() (`{name}.sync()` with cooperative groups) between line 7" in str(info.value)


def test_a_race_in_a_helper_of_a_thread_group_names_its_sync():
    """The CG blog's reduce_sum(thread_group g, ...) without its first g.sync(): the hint names g.sync()."""
    source = r"""
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__device__ int reduce_sum(cg::thread_group g, int* temp, int val) {
    int lane = g.thread_rank();
    for (int i = g.size() / 2; i > 0; i /= 2) {
        temp[lane] = val;
        if (lane < i) val += temp[lane + i];
        g.sync();
    }
    return val;
}
extern "C" __global__ void total(const int* x, int* out) {
    extern __shared__ int temp[];
    auto block = cg::this_thread_block();
    int sum = reduce_sum(block, temp, x[threadIdx.x]);
    if (block.thread_rank() == 0) out[0] = sum;
}"""
    with pytest.raises(cuda.KernelError, match="data race on shared memory") as info:
        kernel("total", source)((1,), (64,), (np.ones(64, np.int32), np.zeros(1, np.int32)), shared_mem=256)
    assert "(with cooperative groups `g.sync()`, if g is the whole block)" in str(info.value)


WARP_STEPS = r"""
extern "C" __global__ void two_steps(const float* x, float* out) {
    __shared__ float s[64];
    unsigned t = threadIdx.x;
    s[t] = x[t];
    __syncthreads();
    if (t < 32) {
        s[t] += s[t + 32]; __syncwarp();              // lane 16 reads and writes its own s[16] here
        s[t] += s[t + 16]; __syncwarp();              // STEP: lane 0 reads s[16], which lane 16 writes
    }
    if (t == 0) out[0] = s[0];
}
extern "C" __global__ void read_then_syncwarp(const float* x, float* out) {
    __shared__ float s[32];
    unsigned t = threadIdx.x;
    s[t] = x[t];
    __syncthreads();
    float a = 0.0f;
    if (t == 0) a = s[16];                            // lane 0 reads s[16] ...
    __syncwarp();                                     // ... and the warp syncs before lane 16 writes it
    if (t == 16) { float b = s[16]; s[16] = b + 1.0f; }
    __syncthreads();
    out[t] = s[t] + a;
}
"""


def test_a_write_is_checked_against_every_recent_reader_not_only_the_first():
    """The race names the reader that is unordered with the write (not the writer's own earlier read),
    and a read that a __syncwarp() orders before the write is no race."""
    x = np.ones(64, np.float32)
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory s\[16\]: thread \(0, 0, 0\) read it at "
                                               r"line %d, and thread \(16, 0, 0\) writes it" % line_of("STEP", WARP_STEPS)):
        kernel("two_steps", WARP_STEPS)((1,), (64,), (x, np.zeros(1, np.float32)))
    out = np.zeros(32, np.float32)
    kernel("read_then_syncwarp", WARP_STEPS)((1,), (32,), (x[:32], out))
    assert out[0] == 2 and out[16] == 2 and out[1] == 1


def test_lanes_of_a_warp_hand_global_elements_over_with_syncwarp():
    a = np.zeros(32, np.float32)
    kernel("warp_handoff", GLOBAL_HAZARDS)((1,), (32,), (a, 1))
    np.testing.assert_array_equal(a, (np.arange(32) ^ 1) + 1)
    with pytest.raises(cuda.KernelError, match=r"writes a\[1\], which thread \(0, 0, 0\) read at line (\d+)") as info:
        kernel("warp_handoff", GLOBAL_HAZARDS)((1,), (32,), (np.zeros(32, np.float32), 0))  # thread 1's first store
    assert f"read at line {line_of('WARP', GLOBAL_HAZARDS)}" in str(info.value) and info.value.thread == (1, 0, 0)


def test_a_volatile_flag_and_fences_hand_data_from_block_to_block():
    data, out, flag = np.zeros(1, np.float32), np.zeros(1, np.float32), np.zeros(1, np.int32)
    kernel("publish", GLOBAL_HAZARDS)((2,), (32,), (data, out, flag, 1))
    assert out[0] == 42
    data[:], flag[:] = 0, 0  # (a store of the 42 that data holds already would change nothing)
    with pytest.raises(cuda.KernelError, match=r"(?s)reads data\[0\], which thread \(0, 0, 0\) of block \(0, 0, 0\) "
                                               r"stored at line \d+ in this launch and then handed over to other blocks through an atomic or a "
                                               r"volatile flag, with no __threadfence\(\)") as info:
        kernel("publish", GLOBAL_HAZARDS)((2,), (32,), (data, out, flag, 0))
    assert info.value.line == line_of("CONSUME", GLOBAL_HAZARDS) and info.value.block == (1, 0, 0)


CHAINED_SUMS = r"""
extern "C" __global__ void chained(const int* x, int* sums, volatile int* flags, int wait_first) {
    __shared__ int total;
    int t = threadIdx.x, b = blockIdx.x;
    if (t == 0) total = 0;
    __syncthreads();
    atomicAdd(&total, x[b * 64 + t]);
    __syncthreads();
    if (t == 0) {
        if (b > 0) {
            while (flags[wait_first ? 0 : b - 1] == 0) { }
            __threadfence();
        }
        int prev = b > 0 ? sums[b - 1] : 0;  // PREV
        sums[b] = prev + total;              // SUM
        __threadfence();
        flags[b] = 1;
    }
}
"""


def test_a_wait_on_another_blocks_flag_does_not_hand_over_what_a_later_flag_released():
    """A chained sum whose blocks all wait for block 0's flag, then read block b - 1's sum: block b - 1 fenced
    and set its own flag after storing it, but block b never waited for that flag, so on a GPU it may read
    the sum before it is there. (A wait hands over what was released up to the value it sees.)"""
    x, flags = np.arange(256, dtype=np.int32), np.zeros(4, np.int32)
    sums = np.zeros(4, np.int32)
    kernel("chained", CHAINED_SUMS)((4,), (64,), (x, sums, flags, np.int32(0)))
    np.testing.assert_array_equal(sums, np.cumsum(x.reshape(4, 64).sum(1)))
    flags[:], sums[:] = 0, 0  # (a store of the value an element holds already would be no hazard)
    with pytest.raises(cuda.KernelError, match=r"(?s)reads sums\[1\], which thread \(0, 0, 0\) of block \(1, 0, 0\) "
                                               r"stored at line \d+ in this launch and then handed over to other blocks "
                                               r"\(a __threadfence\(\), then an atomic or a volatile flag\), but this "
                                               r"thread did not wait for that handover") as info:
        kernel("chained", CHAINED_SUMS)((4,), (64,), (x, sums, flags, np.int32(1)))
    assert info.value.line == line_of("PREV", CHAINED_SUMS) and info.value.block == (2, 0, 0)
    assert f"that thread (0, 0, 0) of block (1, 0, 0) sets after line {line_of('SUM', CHAINED_SUMS)}" in str(info.value)


LOOK_BACK = r"""
extern "C" __global__ void look_back(const int* x, int* agg, volatile int* flags, int* out, int all) {
    if (threadIdx.x != 0) return;
    int b = blockIdx.x;
    agg[b] = x[b];                                           // AGG
    __threadfence();
    flags[b] = 1;
    int total = 0;
    if (all) {
        for (int p = 0; p < b; p++) { while (flags[p] == 0) { } __threadfence(); total += agg[p]; }
    } else {
        if (b > 0) { while (flags[0] == 0) { } __threadfence(); }
        for (int p = 0; p < b; p++) total += agg[p];         // SUM
    }
    out[b] = total + x[b];
}
"""


def test_a_look_back_that_waits_for_each_predecessor_is_no_race_and_one_that_waits_for_block_0_is():
    """Each block publishes its value (store, fence, flag), then waits for every predecessor's flag, fencing
    after each: its own later fences do not take back the handover its readers wait for. Waiting for block
    0's flag only and reading every predecessor's value is the race."""
    x = np.arange(1, 6, dtype=np.int32)
    agg, flags, out = np.zeros(5, np.int32), np.zeros(5, np.int32), np.zeros(5, np.int32)
    kernel("look_back", LOOK_BACK)((5,), (32,), (x, agg, flags, out, np.int32(1)))
    np.testing.assert_array_equal(out, np.cumsum(x))
    agg[:], flags[:] = 0, 0
    with pytest.raises(cuda.KernelError, match=r"reads agg\[1\], which thread \(0, 0, 0\) of block \(1, 0, 0\) stored "
                                               r"at line \d+ .*did not wait for that handover") as info:
        kernel("look_back", LOOK_BACK)((5,), (32,), (x, agg, flags, out, np.int32(0)))
    assert info.value.line == line_of("SUM", LOOK_BACK) and info.value.block == (2, 0, 0)
    assert f"sets after line {line_of('AGG', LOOK_BACK)}" in str(info.value)


def test_a_wait_for_a_first_handover_does_not_cover_what_was_written_after_it():
    """Block 0 hands over two phases, each with a fence and its own flag; a reader that waits for the first flag
    may not read the second phase's data."""
    source = r"""
extern "C" __global__ void k(int* data, volatile int* flags, int* out, int wait) {
    if (blockIdx.x == 0) {
        data[threadIdx.x] = threadIdx.x + 1;
        __syncthreads();
        if (threadIdx.x == 0) { __threadfence(); flags[0] = 1; }
        data[32 + threadIdx.x] = threadIdx.x + 100;
        __syncthreads();
        if (threadIdx.x == 0) { __threadfence(); flags[1] = 1; }
    } else {
        if (threadIdx.x == 0) { while (flags[wait] == 0) { } __threadfence(); }
        __syncthreads();
        out[threadIdx.x] = data[32 + threadIdx.x];  // READ
    }
}
"""
    out = np.zeros(32, np.int32)
    kernel("k", source)((2,), (32,), (np.zeros(64, np.int32), np.zeros(2, np.int32), out, np.int32(1)))
    np.testing.assert_array_equal(out, np.arange(32) + 100)
    with pytest.raises(cuda.KernelError, match=r"reads data\[32\], .*did not wait for that handover") as info:
        kernel("k", source)((2,), (32,), (np.zeros(64, np.int32), np.zeros(2, np.int32), out, np.int32(0)))
    assert info.value.line == line_of("READ", source)
    # the first phase's data after the first phase's flag is no race, though the block handed over again since
    first = source.replace("data[32 + threadIdx.x];  // READ", "data[threadIdx.x];  // READ")
    for wait in (0, 1):
        out[:] = 0
        kernel("k", first)((2,), (32,), (np.zeros(64, np.int32), np.zeros(2, np.int32), out, np.int32(wait)))
        np.testing.assert_array_equal(out, np.arange(32) + 1)


TRANSFERS = r"""
__device__ void lock(int* m) { while (atomicCAS(m, 0, 1) != 0) { } __threadfence(); }
__device__ void unlock(int* m) { __threadfence(); atomicExch(m, 0); }
extern "C" __global__ void transfer(float* balance, int* locks, int n, int ordered) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int j = (i + 1) % n;                               // each account pays the next
    int first = ordered ? min(i, j) : i, second = ordered ? max(i, j) : j;
    lock(&locks[first]);                               // FIRST
    lock(&locks[second]);                              // SECOND
    balance[i] -= 1.0f;
    balance[j] += 1.0f;
    unlock(&locks[second]);
    unlock(&locks[first]);
}
extern "C" __global__ void transfer_stored(float* balance, volatile int* locks, int n) {   // released by a store
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int j = (i + 1) % n;
    while (atomicCAS((int*)&locks[i], 0, 1) != 0) { }
    while (atomicCAS((int*)&locks[j], 0, 1) != 0) { }
    balance[i] -= 1.0f;
    balance[j] += 1.0f;
    __threadfence();
    locks[j] = 0;
    locks[i] = 0;
}
extern "C" __global__ void try_both(int* locks, int* degree, const int* u, const int* v) {  // backs off: no deadlock
    int a = u[threadIdx.x], b = v[threadIdx.x];
    for (bool done = false; !done;) {
        if (atomicCAS(&locks[a], 0, 1) == 0) {
            if (atomicCAS(&locks[b], 0, 1) == 0) {
                degree[a] += 1, degree[b] += 1;
                __threadfence();
                atomicExch(&locks[b], 0);
                done = true;
            }
            __threadfence();
            atomicExch(&locks[a], 0);
        }
    }
}
extern "C" __global__ void up_and_down(int* count) {   // CAS counters put back what they read: no locks
    int a = threadIdx.x % 2, b = 1 - a;
    for (int step : {1, -1}) {
        int* first = step > 0 ? &count[a] : &count[b];
        int* second = step > 0 ? &count[b] : &count[a];
        for (int* c : {first, second}) {
            int old = *c, seen;
            do { seen = old; old = atomicCAS(c, seen, seen + step); } while (old != seen);
        }
    }
}
extern "C" __global__ void shared_lock_global_data(float* total, const float* x) {
    __shared__ int lock;
    if (threadIdx.x == 0) lock = 0;
    __syncthreads();
    for (bool done = false; !done;) {
        if (atomicCAS(&lock, 0, 1) == 0) {
            __threadfence_block();
            total[blockIdx.x] += x[blockIdx.x * blockDim.x + threadIdx.x];   // global data, one block's lock
            __threadfence_block();
            atomicExch(&lock, 0);
            done = true;
        }
    }
}
extern "C" __global__ void two_float_sums(float* x, float* y) {   // CAS loops: updates, not locks
    for (float* p : {x, y}) {
        int old = *(int*)p, assumed;
        do {
            assumed = old;
            old = atomicCAS((int*)p, assumed, __float_as_int(__int_as_float(assumed) + 1.0f));
        } while (assumed != old);
    }
}
"""


def test_locks_taken_in_a_cycle_are_a_potential_deadlock_as_threadsanitizer_reports_it():
    """Each thread locks its account, then the next one's: on a GPU every thread can hold its first lock
    and wait for the second for ever. Here the threads ran one by one (the launch ends): the lock-order
    graph has a cycle, and a KernelWarning names it with the caller's lines. Taking the lower index first
    breaks the cycle; CAS loops (no lock: nothing is put back) are no locks."""
    module = cuda.RawModule(code=TRANSFERS, backend="cpu")
    balance, locks = np.zeros(8, np.float32), np.zeros(8, np.int32)
    first, second = line_of("FIRST", TRANSFERS), line_of("SECOND", TRANSFERS)
    with pytest.warns(cuda.KernelWarning, match=rf"kernel 'transfer' can deadlock on a GPU: its locks are taken in a "
                                                rf"cycle. thread \(0, 0, 0\) of block 0 took locks\[0\] \(line {first}\) "
                                                rf"and then, holding it, locks\[1\] \(line {second}\); thread \(1, 0, 0\)"
                                                r"(?s:.*)and 4 more threads so: the last lock taken, locks\[0\], is the "
                                                r"one the first thread holds(?s:.*)the lower index first"):
        module.get_function("transfer")((1,), (8,), (balance, locks, 8, 0))
    np.testing.assert_array_equal(balance, 0)
    with pytest.warns(cuda.KernelWarning, match=r"kernel 'transfer_stored' can deadlock on a GPU"):  # (`locks[j] = 0;`)
        module.get_function("transfer_stored")((1,), (8,), (balance, locks, 8))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        module.get_function("transfer")((1,), (8,), (balance, locks, 8, 1))
        x, y = np.zeros(1, np.float32), np.zeros(1, np.float32)
        module.get_function("two_float_sums")((1,), (32,), (x, y))
        assert x[0] == y[0] == 32
        u, v, degree = np.arange(8, dtype=np.int32), (np.arange(8, dtype=np.int32) + 1) % 8, np.zeros(8, np.int32)
        module.get_function("try_both")((1,), (8,), (np.zeros(8, np.int32), degree, u, v))
        assert list(degree) == [2] * 8
        count = np.zeros(2, np.int32)
        module.get_function("up_and_down")((1,), (32,), (count,))
        assert list(count) == [0, 0]
        total = np.zeros(2, np.float32)
        module.get_function("shared_lock_global_data")((2,), (64,), (total, np.ones(128, np.float32)))
        assert list(total) == [64, 64]


ATOMIC_REF = r"""
#include <cuda/atomic>
#include <cuda/std/atomic>
extern "C" __global__ void count(int* c, float* f, unsigned long long* u) {
    cuda::atomic_ref<int, cuda::thread_scope_device> r(c[0]);
    r.fetch_add(1, cuda::std::memory_order_relaxed);
    cuda::memory_order relaxed = cuda::memory_order_relaxed;   // <cuda/atomic>'s own names too
    r.fetch_sub(1, relaxed), r.fetch_add(1, cuda::memory_order_relaxed);
    cuda::std::atomic_ref<float> g(f[0]);
    g.fetch_add(0.5f);
    cuda::atomic_ref<unsigned long long, cuda::thread_scope_block> m(u[blockIdx.x]);
    m.fetch_max((unsigned long long)threadIdx.x);
    int expected = 0;
    if (cuda::atomic_ref<int>(c[1]).compare_exchange_strong(expected, 7)) c[2] += 1;
}
extern "C" __global__ void publish(int* data, int* flag, int* out, int ordered) {
    cuda::atomic_ref<int, cuda::thread_scope_device> f(flag[0]);
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        data[0] = 42;
        f.store(1, ordered ? cuda::std::memory_order_release : cuda::std::memory_order_relaxed);
    }
    if (blockIdx.x == 1 && threadIdx.x == 0 && f.load(cuda::std::memory_order_acquire) == 1)
        out[0] = data[0];                                            // CONSUME
}
"""


@pytest.mark.parametrize("sanitize", [False, True])
def test_libcuxx_atomic_ref_with_memory_orders(sanitize):
    """cuda::atomic_ref<T, scope> (<cuda/atomic>) and cuda::std::atomic_ref: fetch_add on int and float,
    fetch_max, compare_exchange; a release store and an acquire load hand data from block to block
    (the sanitizer sees their fences), and a relaxed store does not."""
    module = cuda.RawModule(code=ATOMIC_REF, backend="cpu", sanitize=sanitize)
    c, f, u = np.zeros(3, np.int32), np.zeros(1, np.float32), np.zeros(2, np.uint64)
    module.get_function("count")((2,), (64,), (c, f, u))
    assert list(c) == [128, 7, 1] and f[0] == 64 and list(u) == [63, 63]
    data, flag, out = np.zeros(1, np.int32), np.zeros(1, np.int32), np.zeros(1, np.int32)
    module.get_function("publish")((2,), (32,), (data, flag, out, 1))
    assert out[0] == 42
    if sanitize:
        data[:], flag[:] = 0, 0
        with pytest.raises(cuda.KernelError, match=r"no __threadfence\(\)") as info:
            module.get_function("publish")((2,), (32,), (data, flag, out, 0))
        assert info.value.line == line_of("CONSUME", ATOMIC_REF)


LDG = r"""
extern "C" __global__ void pairs(float* buf, const float* in, int n, int plain) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    if (i % 2 == 0) buf[i] = 2.0f * __ldg(&in[i]);          // __ldg of an input: fine
    __syncthreads();
    if (i % 2 == 1) buf[i] = (plain ? buf[i - 1] : __ldg(&buf[i - 1])) + 1.0f;   // LDG
}
extern "C" __global__ void counted(int* count, int* seen) {
    atomicAdd(&count[0], 1);
    __syncthreads();
    seen[threadIdx.x] = __ldg(&count[0]);                    // COUNT
}
"""


def test_ldg_of_an_element_written_in_the_launch_is_reported():
    """__ldg reads through the read-only cache, which is not coherent with the kernel's own writes: the
    element must stay unwritten for the whole launch. A plain load after the barrier is right."""
    buf, data = np.zeros(64, np.float32), np.arange(64, dtype=np.float32)
    kernel("pairs", LDG)((1,), (64,), (buf, data, 64, 1))
    np.testing.assert_array_equal(buf[1::2], 2 * data[0::2] + 1)
    with pytest.raises(cuda.KernelError, match=r"reads buf\[0\] with __ldg, which thread \(0, 0, 0\) wrote at line "
                                               r"\d+ in this launch: __ldg loads through the read-only") as info:
        kernel("pairs", LDG)((1,), (64,), (buf, data, 64, 0))
    assert info.value.line == line_of("LDG", LDG) and info.value.thread == (1, 0, 0)
    with pytest.raises(cuda.KernelError, match=r"reads count\[0\] with __ldg, which thread \(\d+, 0, 0\) updated "
                                               r"atomically at line \d+ in this launch") as info:
        kernel("counted", LDG)((1,), (32,), (np.zeros(1, np.int32), np.zeros(32, np.int32)))
    assert info.value.line == line_of("COUNT", LDG)


TWO_CALLS = r"""
__device__ float block_sum(float v, float* buf) {
    int t = threadIdx.x;
    buf[t] = v;                                                    // STORE
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) { if (t < s) buf[t] += buf[t + s]; __syncthreads(); }
    float r = buf[0];                                              // LOAD
    return r;
}
extern "C" __global__ void mean_and_square(const float* x, float* out) {
    __shared__ float buf[64];
    float v = x[threadIdx.x];
    float mean = block_sum(v, buf) / 64;                           // FIRST
    float square = block_sum(v * v, buf) / 64;                     // SECOND
    if (threadIdx.x == 0) out[0] = square - mean * mean;
}
"""


def test_a_race_between_two_calls_of_one_helper_names_both_calls_and_the_barrier_before_it_returns():
    """block_sum called twice on one buffer, without a barrier after its last read: the write of the second
    call races with the read of the first. The other thread's call is not known (only its line): the message
    names the lines that call the helper, and the hint the barrier before it returns (not one between the
    store and the read, which is there)."""
    with pytest.raises(cuda.KernelError, match=r"race on shared memory buf\[0\]") as info:
        kernel("mean_and_square", TWO_CALLS)((1,), (64,), (np.ones(64, np.float32), np.zeros(1, np.float32)))
    message, lines = str(info.value), {m: line_of(m, TWO_CALLS) for m in ("STORE", "LOAD", "FIRST", "SECOND")}
    assert (f"wrote it at line {lines['STORE']} (in block_sum, which lines {lines['FIRST']} and {lines['SECOND']} "
            f"call)") in message
    assert (f"hint: Add __syncthreads() after line {lines['LOAD']}, before block_sum returns (or between its calls, "
            f"at lines {lines['FIRST']} and {lines['SECOND']})") in message
    # a template helper with a __shared__ array of its own, `block_sum<64>(v)`: its calls name template arguments
    template = (TWO_CALLS.replace("__device__ float block_sum(float v, float* buf) {",
                                  "template <int N> __device__ float block_sum(float v) {\n    __shared__ float buf[N];")
                .replace("block_sum(v, buf)", "block_sum<64>(v)").replace("block_sum(v * v, buf)", "block_sum<64>(v * v)")
                .replace("    __shared__ float buf[64];\n", ""))
    with pytest.raises(cuda.KernelError, match=r"race on shared memory buf\[0\]") as info:
        kernel("mean_and_square", template)((1,), (64,), (np.ones(64, np.float32), np.zeros(1, np.float32)))
    lines = {m: line_of(m, template) for m in ("STORE", "LOAD", "FIRST", "SECOND")}
    assert (f"wrote it at line {lines['STORE']} (in block_sum, which lines {lines['FIRST']} and {lines['SECOND']} "
            f"call)") in str(info.value)


def test_two_calls_of_one_helper_on_one_line_get_the_barrier_before_it_returns():
    """`float m = block_sum(v, buf) / 64, q = block_sum(v * v, buf) / 64;` (or the classic blockReduceSum called
    twice): both calls on one line, so the other thread's call cannot be told from the lines; the barrier
    between the store and the read is there already, and the hint said to add one there."""
    source = TWO_CALLS.replace("block_sum(v, buf) / 64;                           // FIRST\n    float square =",
                               "block_sum(v, buf) / 64, square =")
    with pytest.raises(cuda.KernelError, match=r"race on shared memory buf\[0\]") as info:
        kernel("mean_and_square", source)((1,), (64,), (np.ones(64, np.float32), np.zeros(1, np.float32)))
    message, lines = str(info.value), {m: line_of(m, source) for m in ("STORE", "LOAD", "SECOND")}
    assert (f"hint: Add __syncthreads() after line {lines['LOAD']}, before block_sum returns (or between its calls, "
            f"at line {lines['SECOND']}): there is a barrier between line {lines['STORE']} and line {lines['LOAD']} "
            "already") in message
    # the other order: one warp's lane 0 stores in the second call (line 5) after a thread of the first warp
    # read that slot in the first call (line 7): blockReduceSum as often posted, called twice in a row
    warp_sums = r"""
__device__ float block_reduce(float val, float* slots) {
    for (int o = 16; o > 0; o /= 2) val += __shfl_down_sync(0xffffffff, val, o);
    int lane = threadIdx.x % 32, wid = threadIdx.x / 32;
    if (lane == 0) slots[wid] = val;
    __syncthreads();
    val = (threadIdx.x < blockDim.x / 32) ? slots[lane] : 0.0f;
    if (wid == 0) for (int o = 16; o > 0; o /= 2) val += __shfl_down_sync(0xffffffff, val, o);
    return val;
}
extern "C" __global__ void sums(const float* x, float* out) {
    __shared__ float slots[32];
    float v = x[threadIdx.x];
    float a = block_reduce(v, slots), b = block_reduce(v * v, slots);
    if (threadIdx.x == 0) { out[0] = a; out[1] = b; }
}
"""
    with pytest.raises(cuda.KernelError, match=r"race on shared memory slots\[1\]") as info:
        kernel("sums", warp_sums)((1,), (64,), (np.arange(64, dtype=np.float32), np.zeros(2, np.float32)))
    assert ("Add __syncthreads() after line 7, before block_reduce returns (or between its calls, at line 14): "
            "there is a barrier between line 5 and line 7 already") in str(info.value)
    assert f"between line {lines['STORE']}, where" not in message


SHARED_LOCK = r"""
extern "C" __global__ void block_max(const float* x, float* out, int fenced, int unlocked) {
    __shared__ int lock;
    __shared__ float m;
    int t = threadIdx.x;
    if (t == 0) { m = -1e30f; if (unlocked) lock = 0; }
    __syncthreads();
    for (bool done = false; !done;) {
        if (atomicCAS(&lock, 0, 1) == 0) {                             // TAKE
            if (fenced) __threadfence_block();
            float v = x[blockIdx.x * blockDim.x + t];
            if (v > m) m = v;                                          // UPDATE
            if (fenced) __threadfence_block();
            atomicExch(&lock, 0);
            done = true;
        }
    }
    __syncthreads();
    if (t == 0) out[blockIdx.x] = m;
}
"""


FLOAT_EXTREMES = r"""
extern "C" __global__ void max_as_int(const float* x, float* m, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicMax((int*)m, __float_as_int(x[i]));   // AS INT
}
extern "C" __global__ void max_as_uint(const float* x, float* m, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicMax((unsigned int*)m, __float_as_uint(x[i]));   // AS UINT
}
__device__ void lower(double* m, double v) { atomicMin((long long*)m, __double_as_longlong(v)); }   // AS LONG LONG
extern "C" __global__ void min_as_longlong(const double* x, double* m, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) lower(m, x[i]);
}
extern "C" __global__ void max_by_cas(const float* x, float* m, int n) {   // any sign: compare the floats
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int old = __float_as_int(*m), assumed;
    do {
        assumed = old;
        old = atomicCAS((int*)m, assumed, __float_as_int(fmaxf(x[i], __int_as_float(assumed))));
    } while (assumed != old);
}
extern "C" __global__ void max_of_keys(const float* x, int* key, unsigned int* ukey, int n) {   // order-preserving bits
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int b = __float_as_int(x[i]);
    atomicMax(key, b >= 0 ? b : b ^ 0x7fffffff);
    unsigned int u = __float_as_uint(x[i]);
    atomicMax(ukey, (u >> 31) ? ~u : u | 0x80000000u);
}
"""


def test_a_float_max_or_min_taken_on_the_bits_as_ints_is_told_where_the_order_flips():
    """atomicMax((int*)m, __float_as_int(v)) is right while every value is >= 0: as ints, negative floats
    come in the opposite order (and as unsigned ints above every positive one). The sanitizer warns at the
    first atomic that kept the other value than a float max would, with the thread, both values and the line
    (a helper's caller's); a CAS loop on fmaxf and order-preserving keys raise nothing, nor does the trick on
    values >= 0."""
    module = cuda.RawModule(code=FLOAT_EXTREMES, backend="cpu")
    negative = -np.linspace(1, 2, 64, dtype=np.float32)
    m = np.full(1, -np.inf, np.float32)
    with pytest.warns(cuda.KernelWarning, match=rf"kernel 'max_as_int' at line {line_of('AS INT', FLOAT_EXTREMES)}, "
                                                r"`if \(i < n\) atomicMax\(\(int\*\)m, __float_as_int\(x\[i\]\)\);[^`]*`: "
                                                r"atomicMax orders the bits of floating-point values \(__float_as_int\) "
                                                r"as ints, and as signed ints negative floats come in the opposite order"
                                                r"(?s:.*)thread \(0, 0, 0\) of block 0 offered -1 to m, which held -inf, "
                                                r"and atomicMax kept -inf, though -1 is the larger"
                                                r"(?s:.*)b >= 0 \? b : b \^ 0x7fffffff"):
        module.get_function("max_as_int")((2,), (32,), (negative, m, 64))
    assert m[0] == -np.inf  # what a GPU gives too: the bug, not the emulator
    mixed, m = np.concatenate([negative[:32], -negative[:32]]), np.zeros(1, np.float32)
    with pytest.warns(cuda.KernelWarning, match=r"kernel 'max_as_uint' at line \d+(?s:.*)as unsigned ints the bits of "
                                                r"every negative float(?s:.*)offered -1 to m, which held 0, and atomicMax "
                                                r"stored -1, though 0 is the larger(?s:.*)\(b >> 31\) \? ~b : b \| 0x80000000u"):
        module.get_function("max_as_uint")((2,), (32,), (mixed, m, 64))
    m = np.full(1, np.inf)
    with pytest.warns(cuda.KernelWarning, match=rf"kernel 'min_as_longlong' at line {line_of('AS LONG LONG', FLOAT_EXTREMES)}"
                                                r"(?s:.*)__double_as_longlong(?s:.*)thread \(1, 0, 0\) of block 0 offered "
                                                r"-1.01587 to m, which held -1, and atomicMin kept -1, though -1.01587 is "
                                                r"the smaller"):
        module.get_function("min_as_longlong")((2,), (32,), (negative.astype(np.float64), m, 64))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = np.full(1, -np.inf, np.float32)
        module.get_function("max_by_cas")((2,), (32,), (negative, m, 64))
        assert m[0] == -1
        key, ukey = np.full(1, np.iinfo(np.int32).min, np.int32), np.zeros(1, np.uint32)
        module.get_function("max_of_keys")((2,), (32,), (mixed, key, ukey, 64))
        assert np.array([key[0]], np.int32).view(np.float32)[0] == mixed.max()
        assert np.array([ukey[0] ^ 0x80000000], np.uint32).view(np.float32)[0] == mixed.max()
        m = np.zeros(1, np.float32)
        module.get_function("max_as_int")((2,), (32,), (-negative, m, 64))
        assert m[0] == 2
        m = np.zeros(1, np.float32)
        module.get_function("max_as_int")((2,), (32,), (mixed, m, 64))  # negatives lose to 0 either way
        assert m[0] == mixed.max()
        cuda.RawKernel(FLOAT_EXTREMES, "max_as_int", backend="cpu", sanitize=False)((2,), (32,), (negative, m, 64))


def test_a_lock_in_shared_memory_orders_its_holders_reads_and_writes():
    """The holder reads m, fences, releases; the next holder acquires, then writes m: no race (it was
    reported as one: only writes handed over so were known). Without the fences it is one."""
    x, out = np.random.default_rng(3).random(128).astype(np.float32), np.zeros(2, np.float32)
    kernel("block_max", SHARED_LOCK)((2,), (64,), (x, out, 1, 1))
    np.testing.assert_array_equal(out, x.reshape(2, 64).max(axis=1))
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory m") as info:
        kernel("block_max", SHARED_LOCK)((2,), (64,), (x, out, 0, 1))
    assert info.value.line == line_of("UPDATE", SHARED_LOCK)
    # a lock word that no thread set to 0: the CAS never succeeds, and the time limit is that initcheck report
    with pytest.raises(cuda.KernelError, match=r"reads shared memory lock, which no thread of block \(0, 0, 0\) has "
                                               r"written") as info:
        kernel("block_max", SHARED_LOCK, time_limit=0.5)((2,), (64,), (x, out, 1, 0))
    assert info.value.line == line_of("TAKE", SHARED_LOCK)


def test_many_threads_storing_the_same_value_through_a_volatile_pointer_is_no_race():
    out = np.zeros(1, np.int32)
    kernel("volatile_found", GLOBAL_HAZARDS)((1,), (32,), (np.full(32, 7, np.float32), out, np.float32(7)))
    assert out[0] == 1


PARTICLES = r"""
struct Particle { float pos[3]; float vel[3]; float mass; };
extern "C" __global__ void pull(Particle* ps, int n, float dt) {   // reads every pos, writes its own vel
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc[3] = {0, 0, 0};
    for (int j = 0; j < n; j++)
        for (int k = 0; k < 3; k++) acc[k] += ps[j].mass * (ps[j].pos[k] - ps[i].pos[k]);
    for (int k = 0; k < 3; k++) ps[i].vel[k] += acc[k] * dt;
}
extern "C" __global__ void crowd(Particle* ps, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) ps[i % 4].vel[1] = ps[i].pos[0];       // CROWD: four threads per particle
}
"""


def test_threads_using_different_members_of_one_struct_do_not_race():
    """In an array of structs the race checker's unit is the member, not the struct: reading the
    others' `pos` while writing one's own `vel` is fine, and a race names `ps[0].vel[1]`."""
    record = np.dtype([("pos", np.float32, (3,)), ("vel", np.float32, (3,)), ("mass", np.float32)])
    ps = np.zeros(32, record)
    ps["pos"] = np.random.default_rng(1).random((32, 3))
    ps["mass"] = 1
    module = cuda.RawModule(code=PARTICLES, backend="cpu", sanitize=True)
    module.get_function("pull")((2,), (16,), (ps, 32, np.float32(0.5)))
    expected = 0.5 * (ps["pos"].sum(axis=0) - 32 * ps["pos"])
    np.testing.assert_allclose(ps["vel"], expected, rtol=1e-4, atol=1e-5)
    with pytest.raises(cuda.KernelError, match=r"writes ps\[0\]\.vel\[1\], which thread \(0, 0, 0\) also wrote") as info:
        module.get_function("crowd")((1,), (8,), (ps, 8))
    assert info.value.line == line_of("CROWD", PARTICLES) and info.value.thread == (4, 0, 0)


PADDED_STRUCTS = r"""
struct Key { char tag; float value; };                 // 3 bytes of padding after tag
struct Body { float3 pos; float3 vel; };
extern "C" __global__ void shift(float* out, int mode) {
    __shared__ Key keys[64];
    __shared__ Body bodies[64];
    int t = threadIdx.x, next = (t + 1) % 64;
    if (mode == 0) { keys[t].tag = 1; keys[t].value = t; }
    if (mode == 1) bodies[t].pos = make_float3(t, 0, 0);  // vel is never loaded
    if (mode == 2 && t > 0) { keys[t].tag = 1; keys[t].value = t; }
    __syncthreads();
    if (mode == 0 || mode == 2) { Key k = keys[next]; out[t] = k.value; }  // COPY
    if (mode == 1) { Body b = bodies[next]; out[t] = b.pos.x; }
}
"""


def test_a_copy_of_a_written_struct_with_padding_or_unused_fields_is_no_initcheck_report():
    """`Key k = keys[j];` reads the struct's padding, which no thread writes, and a GPU copies a
    struct field by field, loading only the fields used: a struct element with some of its bytes
    written is no unwritten read. One that no thread wrote at all still is."""
    out = np.full(64, -1, np.float32)
    shift = kernel("shift", PADDED_STRUCTS, sanitize=True)
    for mode in (0, 1):
        out[:] = -1
        shift((1,), (64,), (out, np.int32(mode)))
        assert np.array_equal(out, (np.arange(64) + 1) % 64)
    with pytest.raises(cuda.KernelError, match=r"reads shared memory keys\[0\], which no thread") as info:
        shift((1,), (64,), (out, np.int32(2)))
    assert info.value.line == line_of("COPY", PADDED_STRUCTS) and info.value.thread == (63, 0, 0)
    # mode 3: the copy's unwritten field is used: the result depends on it (a run with another fill says so)
    used = PADDED_STRUCTS.replace("out[t] = b.pos.x; }", "out[t] = b.pos.x; }\n    if (mode == 3) { bodies[t].pos = "
                                  "make_float3(t, 0, 0); __syncthreads(); Body b = bodies[next]; out[t] = b.vel.y; }  // USED")
    with pytest.raises(cuda.KernelError, match=r"stores a value computed from shared memory that no thread wrote: at "
                                               r"line \d+, thread \(0, 0, 0\) read the whole element bodies\[1\] "
                                               r"\(24 bytes\), and no thread of block \(0, 0, 0\) had written "
                                               r"`bodies\[1\].vel` in this launch") as info:
        kernel("shift", used, sanitize=True)((1,), (64,), (out, np.int32(3)))
    assert info.value.line == line_of("USED", used)


HALF_WRITTEN = r"""
struct P { float x, y; };                              // two members in one declaration
extern "C" __global__ void halves(const float* in, float* out, int vector) {
    __shared__ P ps[32];
    __shared__ float2 vs[32];
    ps[threadIdx.x].x = in[threadIdx.x];
    vs[threadIdx.x].x = in[threadIdx.x];
    __syncthreads();
    if (vector) out[threadIdx.x] = vs[threadIdx.x].x + vs[threadIdx.x].y;
    else out[threadIdx.x] = ps[threadIdx.x].x + ps[threadIdx.x].y;
}
"""


@pytest.mark.parametrize("vector, element", [(0, "ps[0].y"), (1, "vs[0].y")])
def test_an_unwritten_member_is_named_among_the_members_a_line_reads(vector, element):
    """`s[t].x + s[t].y` with only .x written: the report names .y (it said `s[0]`), in a struct whose members share
    a declaration (`float x, y;`) and in a CUDA vector type."""
    with pytest.raises(cuda.KernelError, match=rf"reads shared memory {re.escape(element)}, which no thread of block"):
        kernel("halves", HALF_WRITTEN, sanitize=True)((1,), (32,), (np.ones(32, np.float32), np.zeros(32, np.float32),
                                                                     np.int32(vector)))


PARTLY_WRITTEN_VECTORS = r"""
extern "C" __global__ void lanes(const float* x, float* out, int mode) {
    __shared__ float4 s[32];
    int t = threadIdx.x;
    s[t].x = x[t]; s[t].y = 2 * x[t]; s[t].z = 0;
    if (mode == 2) s[t].w = 1;
    __syncthreads();
    float4 v = s[31 - t];                               // WHOLE
    out[t] = mode == 1 ? v.x + v.w : v.x + v.y;
}
"""


@pytest.mark.parametrize("mode", [0, 1, 2])
def test_a_vector_read_whole_with_a_lane_no_thread_wrote_is_reported_where_the_lane_is_used(mode):
    """`float4 v = s[j];` with s[j].w never written: no report while only written lanes are used (the GPU may
    load only those), one where v.w goes into a result (whose value then depends on what shared memory held)."""
    x, out = np.arange(32, dtype=np.float32), np.zeros(32, np.float32)
    run = kernel("lanes", PARTLY_WRITTEN_VECTORS, sanitize=True)
    if mode != 1:
        run((1,), (32,), (x, out, np.int32(mode)))
        assert np.array_equal(out, x[::-1] + (2 * x[::-1] if mode == 0 else 2 * x[::-1]))
        return
    with pytest.raises(cuda.KernelError) as info:
        run((1,), (32,), (x, out, np.int32(mode)))
    message = str(info.value)
    assert ("read the whole element s[31] (16 bytes), and no thread of block (0, 0, 0) had written `s[31].w` in this "
            "launch. The result out[0] is nan in this run, and ") in message
    assert info.value.line == line_of("WHOLE", PARTLY_WRITTEN_VECTORS) and info.value.thread == (0, 0, 0)
    assert np.array_equal(x, np.arange(32)) and "Write every member of s[31] before it is read whole" in message


DEVICE_VARIABLES = r"""
__device__ float total;
struct Stats { int count; float sum; };
__device__ Stats stats;
__device__ unsigned int retired = 0;
__device__ const int ROWS = 32;                       // a const one sizes arrays: it stays a constant
extern "C" __global__ void add_all(const float* x, int n, int atomic) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    if (atomic) atomicAdd(&total, x[i]);
    else total += x[i];                               // TOTAL: every thread reads and writes it back
}
extern "C" __global__ void count_and_sum(const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    atomicAdd(&stats.count, 1);
    stats.sum += x[i];                                // STATS: the count is atomic, the sum is not
}
extern "C" __global__ void zero_then_add(const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0) total = 0.0f;                         // ZERO
    if (i < n) atomicAdd(&total, x[i]);
}
extern "C" __global__ void last_block_sums(const float* x, float* partial, int n) {
    __shared__ float s[ROWS];
    __shared__ bool last;
    unsigned t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (unsigned k = blockDim.x / 2; k > 0; k >>= 1) { if (t < k) s[t] += s[t + k]; __syncthreads(); }
    if (t == 0) partial[blockIdx.x] = s[0];
    __threadfence();
    if (t == 0) last = atomicInc(&retired, gridDim.x) == gridDim.x - 1;
    __syncthreads();
    if (last && t == 0) {
        float sum = 0.0f;
        for (unsigned b = 0; b < gridDim.x; b++) sum += partial[b];
        partial[0] = sum;
        retired = 0;                                  // the ticket taker resets it for the next launch
    }
}
"""


FILE_SCOPE_SHARED = r"""
__shared__ float cache[64];                           // at file scope: still one array per block
__device__ float neighbour(int t) { return cache[(t + 1) % blockDim.x]; }
extern "C" __global__ void rotate(const float* x, float* out, int barrier) {
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    cache[t] = x[i];
    if (barrier) __syncthreads();
    out[i] = neighbour(t);                            // NEIGHBOUR
}
extern "C" __global__ void past_end(float* out) { cache[threadIdx.x + 1] = 1.0f; out[threadIdx.x] = 0.0f; }  // PAST
__shared__ int seen;
extern "C" __global__ void count_unset(float* out) {
    atomicAdd(&seen, 1);                              // SEEN: no thread set it to 0 first
    __syncthreads();
    out[threadIdx.x] = seen;
}
"""


def test_a_file_scope_shared_array_is_one_per_block_and_fully_checked():
    x = np.arange(256, dtype=np.float32)
    for sanitize in (False, True):  # blocks on every worker (plain), and the sanitizer's one
        out = np.zeros(256, np.float32)
        kernel("rotate", FILE_SCOPE_SHARED, sanitize=sanitize)((4,), (64,), (x, out, 1))
        np.testing.assert_array_equal(out.reshape(4, 64), np.roll(x.reshape(4, 64), -1, axis=1))
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory cache\[1\]: thread \(0, 0, 0\) read it at "
                                               r"line 3 before thread \(1, 0, 0\) wrote it at line 6") as info:
        kernel("rotate", FILE_SCOPE_SHARED)((1,), (64,), (x, np.zeros(256, np.float32), 0))  # (read in neighbour())
    assert "and before thread (0, 0, 0) reads it at line 3, where every thread" in str(info.value)
    with pytest.raises(cuda.KernelError, match=r"accessed cache\[64\], but that dimension of the __shared__ array cache "
                                               r"has 64 elements") as info:
        kernel("past_end", FILE_SCOPE_SHARED, sanitize=False)((1,), (64,), (np.zeros(64, np.float32),))
    assert info.value.line == line_of("PAST", FILE_SCOPE_SHARED) and info.value.thread == (63, 0, 0)
    with pytest.raises(cuda.KernelError, match=r"reads shared memory seen, which no thread of block \(0, 0, 0\) has "
                                               r"written in this launch") as info:
        kernel("count_unset", FILE_SCOPE_SHARED)((1,), (32,), (np.zeros(32, np.float32),))
    assert info.value.line == line_of("SEEN", FILE_SCOPE_SHARED)


def test_a_block_that_waits_for_a_later_block_is_told_why_it_never_ends():
    """Blocks run one at a time under the sanitizer (and in no promised order on a GPU): block 0
    spinning on a flag that block 1 sets never sees it."""
    source = r"""
__device__ volatile int ready = 0;
extern "C" __global__ void wait_for_next(float* out) {
    if (blockIdx.x == 0) { while (ready == 0) { } out[0] = 1.0f; }
    else if (threadIdx.x == 0) ready = 1;
}"""
    with pytest.raises(cuda.KernelError, match=r"time limit of 0\.5 s") as info:
        kernel("wait_for_next", source, time_limit=0.5)((2,), (32,), (np.zeros(1, np.float32),))
    assert "If a block waits in a loop for a flag or a count that another block sets" in str(info.value)
    assert info.value.block == (0, 0, 0)


def test_device_variables_get_the_global_race_checks():
    """A `__device__` variable is global memory: `total += x[i]` in every thread loses updates, an atomic
    count beside a plain sum is caught per member, and NVIDIA's last-block ticket, reset by the thread
    that took the last ticket, is no race."""
    module = cuda.RawModule(code=DEVICE_VARIABLES, backend="cpu", sanitize=True)
    x = np.ones(128, np.float32)
    with pytest.raises(cuda.KernelError, match=r"updates total \(reads it and writes it back\), which thread "
                                               r"\(0, 0, 0\) also wrote at line \d+ in this launch") as info:
        module.get_function("add_all")((4,), (32,), (x, 128, 0))
    assert info.value.line == line_of("TOTAL", DEVICE_VARIABLES) and "atomicAdd(&total, value)" in str(info.value)
    total = module.get_global("total").view(np.float32)
    total[:] = 0
    module.get_function("add_all")((4,), (32,), (x, 128, 1))  # the twin: atomic
    assert total[0] == 128
    with pytest.raises(cuda.KernelError, match=r"updates stats\.sum \(reads it and writes it back\)") as info:
        module.get_function("count_and_sum")((4,), (32,), (x, 128))
    assert info.value.line == line_of("STATS", DEVICE_VARIABLES)
    with pytest.raises(cuda.KernelError, match=r"atomically updates total, which thread \(0, 0, 0\) wrote \(a plain "
                                               r"write\) at line %d" % line_of("ZERO", DEVICE_VARIABLES)) as info:
        module.get_function("zero_then_add")((4,), (32,), (x, 128))
    assert "Set total before the launch (its __device__ variable's memory from get_global()" in str(info.value)
    for launch in range(2):  # the reset lets a second launch count from 0 again
        partial = np.zeros(4, np.float32)
        module.get_function("last_block_sums")((4,), (32,), (np.arange(128, dtype=np.float32), partial, 128))
        assert partial[0] == 127 * 128 / 2
    assert module.get_global("retired").view(np.uint32)[0] == 0


def test_a_scan_step_that_reads_a_neighbour_gets_the_barrier_between_its_read_and_its_write():
    # The barrier at the top of the loop is there: the missing one goes between the read and the
    # write of one pass, not at the end of the body (which would stand next to the first).
    x, y = np.ones(200, np.float32), np.zeros(200, np.float32)
    with pytest.raises(cuda.KernelError) as info:
        kernel("kogge_stone_one_barrier")((2,), (128,), (x, y, 200, 1))
    message = str(info.value)
    assert re.search(r"data race on shared memory xy\[\d+\]", message)
    assert {info.value.line, line_of("KS-WRITE: its neighbour may not have read it yet")} == {
        line_of("KS-READ"), line_of("KS-WRITE: its neighbour may not have read it yet")}
    assert (f"between line {line_of('KS-READ')}, where thread" in message and "in the same pass through the loop"
            in message), message
    assert "end of the loop's body" not in message
    # One statement that reads the neighbour's element and writes its own: split it, and no atomics.
    with pytest.raises(cuda.KernelError) as info:
        kernel("kogge_stone_one_barrier")((2,), (128,), (x, y, 200, 0))
    message = str(info.value)
    assert f"inside line {line_of('KS-ONE')}" in message and "Read the value into a variable" in message
    assert "atomicAdd" not in message and "end of the loop's body" not in message


ONE_LINE_SCAN = r"""
extern "C" __global__ void scan(const int* flags, int* out) {
    __shared__ int s[128];
    int t = threadIdx.x;
    s[t] = flags[t];
    __syncthreads();
    for (int o = 1; o < 128; o *= 2) { if (t >= o) s[t] += s[t - o]; __syncthreads(); }   // SCAN
    out[t] = s[t];
}
"""


def test_a_scan_loop_written_on_one_line_with_its_barrier_is_told_to_split_the_step():
    """The loop and its barrier on one line: "add a barrier at the end of the loop's body" would name the barrier that
    is there; the race is within one pass (a puzzle's compaction scan, as a learner wrote it)."""
    with pytest.raises(cuda.KernelError) as info:
        kernel("scan", ONE_LINE_SCAN, sanitize=True)(1, 128, (np.ones(128, np.int32), np.zeros(128, np.int32)))
    message = str(info.value)
    assert f"inside line {line_of('SCAN', ONE_LINE_SCAN)}" in message and "Read the value into a variable" in message
    assert "end of the loop's body" not in message
    # a tile refilled on one line, its barrier between the fill and the read: the race is across passes
    refill = ONE_LINE_SCAN.replace("if (t >= o) s[t] += s[t - o]; __syncthreads();",
                                   "s[t] = flags[t] + o; __syncthreads(); out[t] += s[127 - t];")
    with pytest.raises(cuda.KernelError) as info:
        kernel("scan", refill, sanitize=True)(1, 128, (np.ones(128, np.int32), np.zeros(128, np.int32)))
    assert f"at the end of the loop's body, after line {line_of('SCAN', refill)}" in str(info.value)
    assert "inside line" not in str(info.value)


def test_a_grid_stride_loop_that_steps_by_one_block_is_told_to_step_by_the_grid():
    src = r'''
    extern "C" __global__ void scale(float* y, int n) {
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
             i += blockDim.x)
            y[i] *= 2.0f;
    }'''
    y = np.random.default_rng(1).random(1000).astype(np.float32)
    with pytest.raises(cuda.KernelError) as info, pytest.warns(cuda.KernelWarning, match="steps by one block"):
        cuda.RawKernel(src, "scale", backend="cpu", sanitize=True)((4,), (128,), (y, 1000))
    message = str(info.value)
    assert "updates y[128]" in message and "blockDim.x * gridDim.x" in message and "atomicAdd" not in message
    y = np.ones(1000, np.float32)
    cuda.RawKernel(src.replace("i += blockDim.x", "i += blockDim.x * gridDim.x"), "scale", backend="cpu",
                   sanitize=True)((4,), (128,), (y, 1000))
    np.testing.assert_array_equal(y, 2)


def test_two_threads_storing_to_places_they_compute_are_told_a_barrier_only_picks_the_survivor():
    # Each thread puts two values at places it computes (a merge, a scatter); the second place is off by
    # one, so thread t's second store lands on thread t + 1's first: a barrier would not fix it.
    src = r'''
    extern "C" __global__ void interleave(const int* a, const int* b, int* out) {
        __shared__ int s[66];
        int t = threadIdx.x;
        int posA = 2 * t, posB = 2 * t + 2;
        s[posA] = a[t];
        s[posB] = b[t];
        __syncthreads();
        out[t] = s[t];
    }'''
    a, b = np.arange(32, dtype=np.int32), -np.arange(1, 33, dtype=np.int32)
    with pytest.raises(cuda.KernelError) as info:
        cuda.RawKernel(src, "interleave", backend="cpu", sanitize=True)((1,), (32,), (a, b, np.zeros(32, np.int32)))
    message = str(info.value)
    assert "data race on shared memory s[2]" in message
    assert "a barrier would only decide which value stays" in message and "both threads reached `s[2]`" in message
    fixed = src.replace("2 * t + 2", "2 * t + 1")
    out = np.zeros(32, np.int32)
    cuda.RawKernel(fixed, "interleave", backend="cpu", sanitize=True)((1,), (32,), (a, b, out))
    np.testing.assert_array_equal(out, np.stack([a, b], 1).ravel()[:32])


def test_two_stores_into_one_element_and_a_maximum_kept_by_hand_get_their_own_fixes():
    src = r'''
    extern "C" __global__ void pairs(const float* x, float* y) {
        __shared__ float s[32];
        s[threadIdx.x / 2] = x[threadIdx.x];
        __syncthreads();
        y[threadIdx.x] = s[threadIdx.x / 2];
    }
    extern "C" __global__ void running_max(const float* x, float* m) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (x[i] > m[0]) m[0] = x[i];
    }'''
    x = np.random.default_rng(2).random(64).astype(np.float32)
    with pytest.raises(cuda.KernelError) as info:
        cuda.RawKernel(src, "pairs", backend="cpu", sanitize=True)((1,), (64,), (x, np.zeros(64, np.float32)))
    message = str(info.value)
    assert "data race on shared memory s[0]" in message and "Two threads store into `s[0]`" in message
    assert "add into the same" not in message
    with pytest.raises(cuda.KernelError) as info:
        cuda.RawKernel(src, "running_max", backend="cpu", sanitize=True)((1,), (64,), (x, np.zeros(1, np.float32)))
    message = str(info.value)
    assert "a maximum or minimum kept by hand" in message and "atomicMax(&m[0], v)" in message


BLOCKS_THAT_REPEAT = r"""
extern "C" __global__ void no_block_offset(const float* x, float* y, int n) {
    int i = threadIdx.x;  // BUG: every block takes the same elements
    if (i < n) y[i] = 2.0f * x[i];
}
extern "C" __global__ void with_block_offset(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i];
}
extern "C" __global__ void any_above(const float* x, int* found, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] > 0.5f) *found = 1;
}
extern "C" __global__ void wrong_factor(const float* x, float* y, int n) {
    int i = blockIdx.x * 32 + threadIdx.x;                      // blocks of 256 overlap
    if (i < n) y[i] = 2.0f * x[i];
}
extern "C" __global__ void stride_of_one_block(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int stride = blockDim.x;                                   // BUG: one block's threads, not the grid's
    while (i < n) {
        y[i] = 2.0f * x[i];
        i += stride;
    }
}
extern "C" __global__ void grid_stride(const float* x, float* y, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) y[i] = 2.0f * x[i];
}
extern "C" __global__ void block_stride(const float* x, float* y, int n) {
    for (int k = threadIdx.x; k < n; k += blockDim.x) y[k] = 2.0f * x[k];   // BUG: every block, every element
}
"""


def test_a_grid_stride_loop_that_steps_by_one_block_is_named_in_the_warning():
    # Block 0's second pass does block 1's part, with the same values: the warning says the step is
    # the bug (not the block offset, which is there), and how a grid-stride loop steps.
    x = np.arange(1, 1001, dtype=np.float32)
    y = np.zeros_like(x)
    with pytest.warns(cuda.KernelWarning, match=r"'stride_of_one_block': 936 elements of y") as caught:
        kernel("stride_of_one_block", BLOCKS_THAT_REPEAT, sanitize=True)((4,), (64,), (x, y, 1000))
    message = str(caught[0].message)
    assert "The loop steps by blockDim.x (`i += stride`)" in message
    assert "i += blockDim.x * gridDim.x" in message and "does use blockIdx" not in message
    np.testing.assert_array_equal(y, 2 * x)
    y[:] = 0
    with pytest.warns(cuda.KernelWarning, match=r"'block_stride'(?s:.*)The loop steps by blockDim.x \(`k \+= "
                                                r"blockDim.x`\), one block's threads and starts without blockIdx"
                                                r"(?s:.*)k = blockIdx.x \* blockDim.x \+ threadIdx.x"):
        kernel("block_stride", BLOCKS_THAT_REPEAT, sanitize=True)((4,), (64,), (x, y, 1000))
    y[:] = 0
    import warnings
    with warnings.catch_warnings():  # the twin: each element once
        warnings.simplefilter("error", cuda.KernelWarning)
        kernel("grid_stride", BLOCKS_THAT_REPEAT, sanitize=True)((4,), (64,), (x, y, 1000))
    np.testing.assert_array_equal(y, 2 * x)


def test_blocks_that_store_the_same_values_in_the_same_elements_get_a_warning_that_names_the_block_offset():
    # The learner's index left out blockIdx: every block writes y[0..255] with the same values (no
    # race: the values agree), and y[256:] is never written, on a GPU too. A warning says why.
    x = np.arange(1, 1001, dtype=np.float32)  # (no 0: storing the 0 an element holds is no store to count)
    y = np.zeros_like(x)
    line = line_of("BUG: every block takes the same elements", BLOCKS_THAT_REPEAT)
    with pytest.warns(cuda.KernelWarning, match=rf"'no_block_offset': 256 elements of y were each stored by more than "
                                                rf"one block, with the same value at line {line + 1}") as caught:
        kernel("no_block_offset", BLOCKS_THAT_REPEAT, sanitize=True)((4,), (256,), (x, y, 1000))
    message = str(caught[0].message)
    assert "first y[0], by block (1, 0, 0) after block (0, 0, 0)" in message
    assert "int i = blockIdx.x * blockDim.x + threadIdx.x;" in message
    assert (y[256:] == 0).all()
    # run again on its own output (a notebook cell run twice): y[0:256] holds the values already, still a warning
    with pytest.warns(cuda.KernelWarning, match=r"'no_block_offset': 256 elements of y were each stored by more "):
        kernel("no_block_offset", BLOCKS_THAT_REPEAT, sanitize=True)((4,), (256,), (x, y, 1000))
    # the offset is there, with the wrong factor: the warning says what to check, not to add blockIdx
    with pytest.warns(cuda.KernelWarning, match=r"'wrong_factor'(?s:.*)The index does use blockIdx, so check what "
                                                r"multiplies it"):
        kernel("wrong_factor", BLOCKS_THAT_REPEAT, sanitize=True)((4,), (256,), (x, y, 1000))
    # The twins: each block its own part; and a flag that many threads of many blocks set (one element).
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error", cuda.KernelWarning)
        kernel("with_block_offset", BLOCKS_THAT_REPEAT, sanitize=True)((4,), (256,), (x, y, 1000))
        found = np.zeros(1, np.int32)
        kernel("any_above", BLOCKS_THAT_REPEAT, sanitize=True)((64,), (64,), (np.random.rand(4096).astype(np.float32),
                                                                             found, 4096))
    np.testing.assert_array_equal(y, 2 * x)
    assert found[0] == 1


THREADS_THAT_REPEAT = r"""
extern "C" __global__ void rows_by_warp(const float* x, float* out, int rows, int cols) {
    int row = blockIdx.x * (blockDim.x / 32) + threadIdx.y / 32;   // BUG: threadIdx.y in a 1-D block
    int lane = threadIdx.x % 32;
    if (row >= rows) return;
    for (int c = lane; c < cols; c += 32) out[row * cols + c] = 2.0f * x[row * cols + c];   // STORE
}
extern "C" __global__ void column_per_block(const float* a, float* out, int w) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y;                                           // a 2-D block's threadIdx.y never used
    out[row * w + col] = a[row * w + col] + 1.0f;
}
extern "C" __global__ void mark_neighbours(const int* row_ptr, const int* cols, int* visited, int* level, int depth) {
    int v = threadIdx.x;                                            // a dense graph: threads share neighbours
    for (int e = row_ptr[v]; e < row_ptr[v + 1]; e++) {
        visited[cols[e]] = 1;
        level[cols[e]] = depth;
    }
}
extern "C" __global__ void block_sum(const float* x, float* out) {
    __shared__ float s[64];
    int t = threadIdx.x;
    s[t] = x[blockIdx.x * 64 + t];
    __syncthreads();
    for (int h = 32; h > 0; h >>= 1) { if (t < h) s[t] += s[t + h]; __syncthreads(); }
    out[blockIdx.x] = s[0];                                         // every thread stores its block's one result
}
"""


def test_threads_of_a_block_that_store_the_same_values_in_the_same_elements_get_a_warning():
    """The block-level warning's twin inside a block: a warp-per-row kernel that takes its warp from threadIdx.y in
    a 1-D block gives every warp row 0 (the 4 warps store the same values; rows 1 to 3 of each block are never
    written), and a kernel that ignores threadIdx.y in a 2-D block has its 16 rows of threads store the same
    elements. No store races (the values agree) and none is out of bounds: a KernelWarning names the axis."""
    x, out = np.ones((12, 50), np.float32), np.zeros((12, 50), np.float32)
    line = line_of("STORE", THREADS_THAT_REPEAT)
    with pytest.warns(cuda.KernelWarning, match=rf"'rows_by_warp': 150 elements of out were each stored by more than "
                                                rf"one thread of a block, with the same value at line {line}") as caught:
        kernel("rows_by_warp", THREADS_THAT_REPEAT, sanitize=True)((3,), (128,), (x, out, 12, 50))
    message = str(caught[0].message)
    assert "(first out[0], by thread (32, 0, 0) after thread (0, 0, 0) of block (0, 0, 0))" in message
    assert "uses threadIdx.y, which is 0 for every thread of this launch's blocks (blockDim = (128, 1, 1))" in message
    assert (out[1:4] == 0).all() and (out[0] == 2).all()
    a, out = np.arange(1, 257, dtype=np.float32), np.zeros(256, np.float32)
    with pytest.warns(cuda.KernelWarning, match=r"'column_per_block': 256 elements of out were each stored by more "
                                                r"than one thread of a block.* by thread \(0, 1, 0\) after thread "
                                                r"\(0, 0, 0\).*never uses threadIdx\.y.*threadIdx\.y;\), or launch "
                                                r"blocks without that axis"):
        kernel("column_per_block", THREADS_THAT_REPEAT, sanitize=True)((2, 8), (16, 16), (a, out, 32))
    import warnings
    with warnings.catch_warnings():  # the twins: each warp its row, a 1-D block; many threads setting one flag
        warnings.simplefilter("error", cuda.KernelWarning)
        out = np.zeros((12, 50), np.float32)
        kernel("rows_by_warp", THREADS_THAT_REPEAT.replace("threadIdx.y / 32", "threadIdx.x / 32"), sanitize=True)(
            (3,), (128,), (x, out, 12, 50))
        assert (out == 2).all()
        out = np.zeros(256, np.float32)
        kernel("column_per_block", THREADS_THAT_REPEAT, sanitize=True)((2, 8), (16, 1), (a, out, 32))
        assert np.array_equal(out, a + 1)
        found = np.zeros(1, np.int32)
        kernel("any_above", BLOCKS_THAT_REPEAT, sanitize=True)((1,), (256,), (np.ones(256, np.float32), found, 256))
        assert found[0] == 1
        # a search's threads that mark the neighbours they share: stores after one thread here, another there
        rng = np.random.default_rng(0)
        neighbours = [np.unique(rng.integers(0, 400, 40)) for _ in range(200)]
        row_ptr = np.cumsum([0] + [len(n) for n in neighbours]).astype(np.int32)
        visited, level = np.zeros(400, np.int32), np.zeros(400, np.int32)
        kernel("mark_neighbours", THREADS_THAT_REPEAT, sanitize=True)(
            (1,), (200,), (row_ptr, np.concatenate(neighbours).astype(np.int32), visited, level, 3))
        assert visited.sum() == len(np.unique(np.concatenate(neighbours))) and level.max() == 3
        sums = np.zeros(64, np.float32)  # every thread storing its block's one result: one element a block
        kernel("block_sum", THREADS_THAT_REPEAT, sanitize=True)((64,), (64,), (np.ones(64 * 64, np.float32), sums))
        assert (sums == 64).all()


def test_a_block_whose_threads_the_code_cannot_tell_apart_gets_a_warning_at_launch():
    """`int t = threadIdx.y;` in a 1-D block, or no threadIdx at all in a block of 32: every thread of a block
    does the same work (the same stores, the same atomics again), which no sanitizer calls wrong. A KernelWarning
    at the launch (either backend) says so; the same kernels launched along the axis they use, one thread a block,
    or told apart by cooperative groups, get none."""
    only_y = 'extern "C" __global__ void k(const float* x, float* out) { int t = threadIdx.y; out[t] = 2 * x[t]; }'
    x, out = np.ones(64, np.float32), np.zeros(64, np.float32)
    with pytest.warns(cuda.KernelWarning, match=r"kernel 'k' uses threadIdx\.y but its blocks have threads only along "
                                                 r"x: threadIdx\.y is 0 for every thread of this launch's blocks "
                                                 r"\(blockDim = \(64, 1, 1\)\), so all 64 threads of a block do the "
                                                 r"same work.*\(threadIdx\.x\), or launch blocks along y"):
        cuda.RawKernel(only_y, "k", backend="cpu", sanitize=False)((1,), (64,), (x, out))
    assert out[0] == 2 and (out[1:] == 0).all()
    counter = 'extern "C" __global__ void count(int* total, int n) { for (int i = 0; i < n; i++) atomicAdd(total, 1); }'
    total = np.zeros(1, np.int32)
    with pytest.warns(cuda.KernelWarning, match=r"'count' never uses threadIdx, and this launch has 32 threads in "
                                                 r"each block, so all 32 threads .* the same atomics again"):
        cuda.RawKernel(counter, "count", backend="cpu")((1,), (32,), (total, 10))
    assert total[0] == 320
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error", cuda.KernelWarning)
        cuda.RawKernel(only_y, "k", backend="cpu")((1,), (1, 64), (x, out))
        cuda.RawKernel(counter, "count", backend="cpu")((1,), (1,), (total, 10))
        ranked = ('#include <cooperative_groups.h>\n'
                  'extern "C" __global__ void k(float* out) { '
                  'out[cooperative_groups::this_thread_block().thread_rank()] = 1.0f; }')
        cuda.RawKernel(ranked, "k", backend="cpu")((1,), (64,), (out,))
        whole = 'extern "C" __global__ void k(float* out) { dim3 t = threadIdx; out[t.x] = 2.0f; }'
        cuda.RawKernel(whole, "k", backend="cpu")((1,), (64,), (out,))
    assert (out == 2).all()


def test_a_grid_whose_blocks_the_code_cannot_tell_apart_gets_a_warning_at_launch():
    """A histogram whose index forgot the block's offset (`int i = threadIdx.x;`) launched with several blocks:
    every block counts the same elements, atomics that no sanitizer calls wrong. A KernelWarning at the launch
    says so; one block, or blocks that take their work from a ticket (an atomic's value) or name themselves
    through cooperative groups, get none."""
    import warnings

    source = r"""
extern "C" __global__ void hist(const int* x, int* bins, int n) {
    int i = INDEX;
    if (i < n) atomicAdd(&bins[x[i] & 15], 1);
}"""
    x = np.arange(256, dtype=np.int32)
    bins = np.zeros(16, np.int32)
    for sanitize in (True, False):
        bins[:] = 0
        with pytest.warns(cuda.KernelWarning, match=r"kernel 'hist' never uses blockIdx, and this launch has 4 blocks, "
                                                     r"so all 4 blocks do the same work: .* the same atomics again .* "
                                                     r"comes out 4 times too large\). Give each block its part"):
            cuda.RawKernel(source.replace("INDEX", "threadIdx.x"), "hist", backend="cpu", sanitize=sanitize)(
                (4,), (64,), (x, bins, 256))
        assert bins.sum() == 256  # (64 elements counted 4 times)
    ticket = r"""
extern "C" __global__ void hist(const int* x, int* bins, int* next, int n) {
    __shared__ int base;
    if (threadIdx.x == 0) base = atomicAdd(next, blockDim.x);   // blocks take their part in turn
    __syncthreads();
    int i = base + threadIdx.x;
    if (i < n) atomicAdd(&bins[x[i] & 15], 1);
}"""
    ranked = ('#include <cooperative_groups.h>\n'
              'extern "C" __global__ void hist(const int* x, int* bins, int n) {\n'
              '    int i = cooperative_groups::this_grid().thread_rank();\n'
              '    if (i < n) atomicAdd(&bins[x[i] & 15], 1);\n}')
    with warnings.catch_warnings():
        warnings.simplefilter("error", cuda.KernelWarning)
        bins[:] = 0
        cuda.RawKernel(source.replace("INDEX", "threadIdx.x"), "hist", backend="cpu")((1,), (256,), (x, bins, 256))
        cuda.RawKernel(source.replace("INDEX", "blockIdx.x * blockDim.x + threadIdx.x"), "hist", backend="cpu")(
            (4,), (64,), (x, bins, 256))
        cuda.RawKernel(ticket, "hist", backend="cpu")((4,), (64,), (x, bins, np.zeros(1, np.int32), 256))
        cuda.RawKernel(ranked, "hist", backend="cpu")((4,), (64,), (x, bins, 256))
    assert (bins == 64).all()


def test_an_atomic_whose_value_is_used_is_told_from_one_that_stands_alone():
    from course.cuda.kernel import _uses_an_atomics_value

    assert _uses_an_atomics_value("int b = atomicAdd(&t, 1);")
    assert _uses_an_atomics_value("if (atomicInc(&r, n) == n - 1) last = 1;")
    assert _uses_an_atomics_value("out[atomicAdd(count, 1)] = v;")
    assert _uses_an_atomics_value("int s = ref.fetch_add(1);")
    assert not _uses_an_atomics_value("if (i < n) atomicAdd(&bins[x[i]], 1);")
    assert not _uses_an_atomics_value("{ atomicAdd(total, v); } else atomicSub(total, v);")
    assert not _uses_an_atomics_value("for (int k = 0; k < n; k++) atomicMax(m, x[k]);")


PRIVATE_QUEUE = r"""
#define CAPACITY 16
// A block-private queue that spills to a global one when full (PMPP's BFS frontier): the
// overflow branch clamps the shared count back to the capacity, beside other threads' atomicAdds.
extern "C" __global__ void enqueue_odd(const int* x, int* spill, int* spilled, int* out, int n) {
    __shared__ int queue[CAPACITY];
    __shared__ int count;
    if (threadIdx.x == 0) count = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] % 2) {
        int slot = atomicAdd(&count, 1);
        if (slot < CAPACITY) {
            queue[slot] = x[i];
        } else {
            CLAMP;
            spill[atomicAdd(spilled, 1)] = x[i];
        }
    }
    __syncthreads();
    for (int k = threadIdx.x; k < count; k += blockDim.x) out[blockIdx.x * CAPACITY + k] = queue[k];
}
"""


def test_a_plain_store_beside_other_threads_atomics_is_a_race_and_the_hint_says_make_it_atomic():
    odd = np.arange(1, 128, 2, dtype=np.int32)  # 32 odd numbers a block: 16 overflow the queue
    spill, spilled, out = np.zeros(64, np.int32), np.zeros(1, np.int32), np.full(32, -1, np.int32)
    racy = PRIVATE_QUEUE.replace("CLAMP", "count = CAPACITY")
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory count") as info:
        cuda.RawKernel(racy, "enqueue_odd", backend="cpu")((2,), (32,), (odd, spill, spilled, out, 64))
    assert "atomicExch(&count, v)" in str(info.value) and "atomicMin/atomicMax" in str(info.value)
    fixed = cuda.RawKernel(PRIVATE_QUEUE.replace("CLAMP", "atomicExch(&count, CAPACITY)"), "enqueue_odd",
                           backend="cpu")
    spilled[:], out[:] = 0, -1
    fixed((2,), (32,), (odd, spill, spilled, out, 64))
    assert spilled[0] == 32 and sorted(list(out) + list(spill[:32])) == list(range(1, 128, 2))
    half = np.arange(64, dtype=np.int32)  # 16 odd numbers a block: all fit
    spilled[:], out[:] = 0, -1
    fixed((2,), (32,), (half, spill, spilled, out, 64))
    assert spilled[0] == 0 and sorted(out) == list(range(1, 64, 2))


SHARED_HANDOVER = r"""
// Thread 0 hands `data` to thread 32 through a flag in shared memory: the write, a fence, the
// flag; the reader waits for the flag, then reads. No __syncthreads() between them.
extern "C" __global__ void hand_over(float* out, int variant) {
    __shared__ float data;
    __shared__ volatile int flag;
    __shared__ int atomic_flag;
    if (threadIdx.x == 0) { flag = 0; atomic_flag = 0; }
    __syncthreads();
    if (threadIdx.x == 0) {
        if (variant == 0) { data = 42.f; __threadfence_block(); flag = 1; }
        if (variant == 1) { data = 42.f; __threadfence_block(); atomicExch(&atomic_flag, 1); }
        if (variant == 2) { data = 42.f; flag = 1; }                         // no fence
        if (variant == 3) { __threadfence_block(); data = 42.f; flag = 1; }  // the fence before the write
        if (variant == 4) { data = 42.f; __threadfence_block(); flag = 1; }  // and the reader does not wait
    }
    if (threadIdx.x == 32) {
        if (variant == 1) { while (atomicAdd(&atomic_flag, 0) == 0) { } }
        else if (variant != 4) { while (flag == 0) { } }
        __threadfence_block();
        out[0] = data;  // READ
    }
}
"""


@pytest.mark.parametrize("variant, ordered", [(0, True), (1, True), (2, False), (3, False), (4, False)])
def test_a_handover_through_a_fence_and_a_shared_flag_orders_the_write(variant, ordered):
    out = np.zeros(1, np.float32)
    kernel = cuda.RawKernel(SHARED_HANDOVER, "hand_over", backend="cpu", sanitize=True)
    if ordered:
        kernel((1,), (64,), (out, variant))
        assert out[0] == 42
        return
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory data: thread \(0, 0, 0\) wrote it") as info:
        kernel((1,), (64,), (out, variant))
    assert info.value.thread == (32, 0, 0) and info.value.line == line_of("READ", SHARED_HANDOVER)


BYTES = r"""
extern "C" __global__ void bytes(float* x, int n, int step) {
    int i = threadIdx.x;
    unsigned char* b = (unsigned char*)x;
    if (i < 4 * n) b[i / step] = (unsigned char)(i + 1);  // BUG when step is 2: two threads per byte
}
"""


def test_threads_writing_different_bytes_of_one_element_do_not_race():
    x = np.ones(16, np.float32)
    cuda.RawKernel(BYTES, "bytes", backend="cpu", sanitize=True)((1,), (64,), (x, 16, 1))
    assert x.view(np.uint8).tolist() == list(range(1, 65))
    with pytest.raises(cuda.KernelError, match=r"writes x\[0\], which thread \(0, 0, 0\) also wrote at line 5") as info:
        cuda.RawKernel(BYTES, "bytes", backend="cpu", sanitize=True)((1,), (64,), (np.ones(16, np.float32), 16, 2))
    assert info.value.thread == (1, 0, 0)


GLOBAL_WARP_REDUCE = r"""
extern "C" __global__ void reduce(int* g, int* out) {
    unsigned int tid = threadIdx.x;
    int* data = g + blockIdx.x * blockDim.x;
    if (tid < 32) data[tid] += data[tid + 32];
    __syncthreads();
    if (tid < 32) {
        volatile int* v = data;
STEPS
    }
    if (tid == 0) out[blockIdx.x] = data[0];
}
extern "C" __global__ void search(const int* x, int n, int target, volatile int* found) {
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        if (*found) return;                       // another thread's store may or may not be seen yet: fine
        if (x[i] == target) *found = i + 1;
    }
}
"""


def test_warp_synchronous_volatile_steps_on_a_global_array_are_races():
    # The old samples' unrolled last warp, in place in global memory (Cheng's reduceCompleteUnrollWarps8):
    # a volatile pointer orders nothing between the lanes of a warp since Volta.
    racy = "\n".join(f"        v[tid] += v[tid + {o}];" for o in (16, 8, 4, 2, 1))
    with pytest.raises(cuda.KernelError) as info:
        cuda.RawKernel(GLOBAL_WARP_REDUCE.replace("STEPS", racy), "reduce", backend="cpu", sanitize=True)(
            (4,), (64,), (np.ones(256, np.int32), np.zeros(4, np.int32)))
    message = str(info.value)
    # thread 1's first step writes g[1], which thread 0 read in its last step
    assert "writes g[1], which thread (0, 0, 0) read at line 13" in message and "no __syncwarp()" in message
    assert info.value.thread == (1, 0, 0) and info.value.line == 9
    assert "float other = v[tid + 16]; __syncwarp(); v[tid] += other; __syncwarp();" in message
    fixed = "\n".join(f"        {{ int t = v[tid + {o}]; __syncwarp(); v[tid] += t; __syncwarp(); }}" for o in (16, 8, 4, 2, 1))
    out = np.zeros(4, np.int32)
    cuda.RawKernel(GLOBAL_WARP_REDUCE.replace("STEPS", fixed), "reduce", backend="cpu", sanitize=True)(
        (4,), (64,), (np.ones(256, np.int32), out))
    assert (out == 64).all()
    # every thread bumping one volatile counter: updates are lost (volatile is no atomic)
    counter = GLOBAL_WARP_REDUCE.replace("STEPS", "").replace("if (x[i] == target) *found = i + 1;", "found[1] += 1;")
    with pytest.raises(cuda.KernelError, match=r"(?s)updates found\[1\] \(reads it and writes it back\), which thread "
                                               r"\(0, 0, 0\) also wrote at line 16.*use atomicAdd\(&found\[1\], value\)"):
        cuda.RawKernel(counter, "search", backend="cpu", sanitize=True)((1,), (64,), (np.ones(64, np.int32), 64, 7,
                                                                                      np.zeros(2, np.int32)))
    # a volatile flag that threads of one block set and read is how such flags work: no report
    found = np.zeros(1, np.int32)
    cuda.RawKernel(GLOBAL_WARP_REDUCE.replace("STEPS", ""), "search", backend="cpu", sanitize=True)(
        (1,), (64,), (np.arange(1000, dtype=np.int32), 1000, 700, found))
    assert found[0] == 701


def test_a_plain_launch_runs_warp_synchronous_volatile_steps_in_step_as_a_gpu_does():
    # The unrolled last warp of the old samples, as published (Harris's reduction #6 on shared memory,
    # Cheng's on global memory), launched plainly, the default on a machine without a GPU: each step's
    # reads come before its writes in every lane, as a GPU's warp gives it in practice. Run one thread
    # after another, lane 0 read v[16] before lane 16 added to it, and the sums came out wrong with no
    # message. The sanitizer still reports the race (Volta's lanes need not keep in step).
    racy = "\n".join(f"        v[tid] += v[tid + {o}];" for o in (16, 8, 4, 2, 1))
    values = np.random.default_rng(5).integers(0, 100, 256).astype(np.int32)
    out = np.zeros(4, np.int32)
    kernel = cuda.RawKernel(GLOBAL_WARP_REDUCE.replace("STEPS", racy), "reduce", backend="cpu", sanitize=False)
    kernel((4,), (64,), (values.copy(), out))
    np.testing.assert_array_equal(out, values.reshape(4, 64).sum(axis=1))
    shared = r"""
template <unsigned blockSize>
__device__ void warpReduce(volatile float* sdata, unsigned tid) {
    if (blockSize >= 64) sdata[tid] += sdata[tid + 32];
    if (blockSize >= 32) sdata[tid] += sdata[tid + 16];
    if (blockSize >= 16) sdata[tid] += sdata[tid + 8];
    if (blockSize >= 8) sdata[tid] += sdata[tid + 4];
    if (blockSize >= 4) sdata[tid] += sdata[tid + 2];
    if (blockSize >= 2) sdata[tid] += sdata[tid + 1];
}
// one warp's block, no __syncthreads(): each thread loads two elements and the warp adds them up
extern "C" __global__ void warp_sum(const float* x, float* out) {
    __shared__ float sdata[64];
    unsigned tid = threadIdx.x;
    volatile float* v = sdata;
    v[tid] = x[blockIdx.x * 64 + tid];
    v[tid + 32] = x[blockIdx.x * 64 + tid + 32];
    warpReduce<64>(sdata, tid);
    if (tid == 0) out[blockIdx.x] = sdata[0];
}"""
    x = np.random.default_rng(6).random(256).astype(np.float32)
    sums = np.zeros(4, np.float32)
    cuda.RawKernel(shared, "warp_sum", backend="cpu", sanitize=False)((4,), (32,), (x, sums))
    np.testing.assert_allclose(sums, x.reshape(4, 64).sum(axis=1), rtol=1e-5)
    with pytest.raises(cuda.KernelError, match=r"(?s)data race on shared memory sdata\[1\].*__syncwarp\(\)"):
        cuda.RawKernel(shared, "warp_sum", backend="cpu", sanitize=True)((4,), (32,), (x, sums))
    # through a volatile alias, `typedef volatile int vint;`, the same
    aliased = r"""
typedef volatile int vint;
__device__ void steps(vint* s, int t) { s[t] += s[t + 32]; s[t] += s[t + 16]; s[t] += s[t + 8]; s[t] += s[t + 4];
                                        s[t] += s[t + 2]; s[t] += s[t + 1]; }
extern "C" __global__ void warp_sum(const int* a, int* o) {
    __shared__ int s[64];
    int t = threadIdx.x;
    s[t] = a[blockIdx.x * 64 + t]; s[t + 32] = a[blockIdx.x * 64 + t + 32];
    steps(s, t);
    if (t == 0) o[blockIdx.x] = s[0];
}"""
    totals = np.zeros(4, np.int32)
    cuda.RawKernel(aliased, "warp_sum", backend="cpu", sanitize=False)((4,), (32,), (values, totals))
    np.testing.assert_array_equal(totals, values.reshape(4, 64).sum(axis=1))
    # a volatile local (the thread's own) takes no step, and a volatile flag still works
    found = np.zeros(1, np.int32)
    cuda.RawKernel(GLOBAL_WARP_REDUCE.replace("STEPS", ""), "search", backend="cpu", sanitize=False)(
        (1,), (64,), (np.arange(1000, dtype=np.int32), 1000, 700, found))
    assert found[0] == 701


def test_only_warp_synchronous_steps_are_taken_in_step_not_locks_flags_or_a_threads_own_volatile():
    # A lock whose holder updates volatile data while the others spin in a loop with no waiting point of the
    # emulator's (`while (!leave)`), lanes that meet at __activemask() after a branch with a volatile store,
    # and two warps backing off each other's volatile flags: plain launches finish as before, with a GPU's
    # results (taking every volatile access in step hung the first, split the second's mask, livelocked the third)
    source = r"""
extern "C" __global__ void locked(int* lock, volatile int* data) {
    bool leave = false;
    while (!leave) {
        if (atomicCAS(lock, 0, 1) == 0) { data[0] = data[0] + 1; __threadfence(); leave = true; atomicExch(lock, 0); }
    }
}
extern "C" __global__ void active(const int* in, volatile int* v, unsigned* out) {
    int t = threadIdx.x, x = in[t];
    if (x % 3 == 0) v[t] = x;
    out[t] = __activemask();
}
extern "C" __global__ void backoff(volatile int* flag, int* done) {
    int me = threadIdx.x / 32, other = 1 - me;
    if (threadIdx.x % 32) return;
    for (int k = 0; ; k++) {
        flag[me] = 1;
        if (flag[other] && me == (k & 1)) { flag[me] = 0; continue; }
        break;
    }
    atomicAdd(done, 1);
    flag[me] = 0;
}"""
    module = cuda.RawModule(code=source, backend="cpu", sanitize=False, time_limit=20)
    lock, data = np.zeros(1, np.int32), np.zeros(1, np.int32)
    module.get_function("locked")((2,), (32,), (lock, data))
    assert data[0] == 64
    out = np.zeros(32, np.uint32)
    module.get_function("active")((1,), (32,), (np.arange(32, dtype=np.int32), np.zeros(32, np.int32), out))
    assert (out == 0xFFFFFFFF).all()
    done = np.zeros(1, np.int32)
    module.get_function("backoff")((1,), (64,), (np.zeros(2, np.int32), done))
    assert done[0] == 2


def test_a_cas_loop_of_the_sources_own_on_unset_shared_memory_gets_the_atomics_hint():
    source = r"""
__device__ float atomicMaxF(float* a, float v) {
    int* ai = (int*)a; int old = *ai, as;
    do { as = old; if (__int_as_float(as) >= v) break; old = atomicCAS(ai, as, __float_as_int(v)); } while (as != old);
    return __int_as_float(old);
}
extern "C" __global__ void k(const float* in, float* out) {
    __shared__ float m;
    atomicMaxF(&m, in[threadIdx.x]);
    __syncthreads();
    if (threadIdx.x == 0) out[0] = m;
}"""
    with pytest.raises(cuda.KernelError, match=r"reads shared memory m, which no thread") as info:
        cuda.RawKernel(source, "k", backend="cpu", sanitize=True)((1,), (64,), (np.arange(64, dtype=np.float32),
                                                                                 np.zeros(1, np.float32)))
    assert "atomicMaxF starts from the value `m` holds, and shared memory holds none" in str(info.value)


def test_activemask_orders_nothing_and_syncwarp_with_its_mask_does():
    # __activemask() says which lanes run here: lanes that stored before it and read another lane's
    # element after it race (it was taken as a warp-level sync, which it is not on a GPU)
    source = r"""
extern "C" __global__ void leader_sum(const float* in, float* out) {
    __shared__ float s[32];
    int lane = threadIdx.x;
    if (in[lane] > 3.0f) {
        s[lane] = in[lane];                               // STORE
        unsigned m = __activemask();
        SYNC
        if (lane == __ffs(m) - 1) {
            float t = 0;
            for (int j = 0; j < 32; j++) if (m >> j & 1) t += s[j];  // READ
            out[0] = t;
        }
    }
}"""
    x = np.arange(32, dtype=np.float32)
    out = np.zeros(1, np.float32)
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory s\[5\]") as info:
        cuda.RawKernel(source.replace("SYNC", ""), "leader_sum", backend="cpu", sanitize=True)((1,), (32,), (x, out))
    assert info.value.line == line_of("READ", source)
    cuda.RawKernel(source.replace("SYNC", "__syncwarp(m);"), "leader_sum", backend="cpu", sanitize=True)((1,), (32,),
                                                                                                       (x, out))
    assert out[0] == x[4:].sum()


def test_a_read_of_several_elements_names_the_first_one_no_thread_wrote():
    # a float4 over a float array, a memcpy: the report names the unwritten element (s[3], s[32]), not the
    # first one the read covers (s[0], s[16]), which a thread did write
    source = r"""
extern "C" __global__ void vec(const float* in, float* out) {
    __shared__ float s[128];
    if (threadIdx.x != 3) s[threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    float4 v = reinterpret_cast<float4*>(s)[threadIdx.x];  // VEC
    out[threadIdx.x] = v.x + v.y + v.z + v.w;
}
extern "C" __global__ void copy(const float* in, float* out) {
    __shared__ float s[64];
    if (threadIdx.x < 32) s[threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    if (threadIdx.x == 0) memcpy(out, s + 16, 32 * sizeof(float));  // COPY
}"""
    module = cuda.RawModule(code=source, backend="cpu", sanitize=True)
    x, out = np.arange(128, dtype=np.float32), np.zeros(128, np.float32)
    with pytest.raises(cuda.KernelError, match=r"reads shared memory s\[3\], which no thread of block \(0, 0, 0\)") as info:
        module.get_function("vec")((1,), (128,), (x, out))
    assert info.value.line == line_of("VEC", source)
    with pytest.raises(cuda.KernelError, match=r"reads shared memory s\[32\], which no thread") as info:
        module.get_function("copy")((1,), (64,), (x, out))
    assert info.value.line == line_of("COPY", source)


def test_a_maximum_kept_by_hand_in_one_statement_is_told_to_use_an_atomic_not_a_barrier():
    source = r"""
extern "C" __global__ void biggest(const int* in, int* m) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (in[i] > m[0]) m[0] = in[i];
}"""
    with pytest.raises(cuda.KernelError) as info:
        cuda.RawKernel(source, "biggest", backend="cpu", sanitize=True)((2,), (64,), (np.arange(128, dtype=np.int32),
                                                                                      np.zeros(1, np.int32)))
    message = str(info.value)
    assert "without an atomic (a maximum or minimum kept by hand)" in message and "__syncthreads" not in message
    assert "Use atomicMax(&m[0], v)" in message


def test_a_race_after_another_threads_wait_for_a_flag_gets_the_barrier_hint_not_the_flags():
    # thread 0 waits for `flag` inside its own if; threads 1 and 2 race on s[] after it, never having waited
    source = r"""
extern "C" __global__ void k(const float* in, float* out) {
    __shared__ volatile int flag;
    __shared__ float s[64];
    __shared__ float cfg;
    if (threadIdx.x == 0) flag = 0;
    __syncthreads();
    if (threadIdx.x == 63) { cfg = 2.0f; __threadfence_block(); flag = 1; }
    if (threadIdx.x == 0) { while (flag == 0) { } out[64] = cfg; }
    s[threadIdx.x] = in[threadIdx.x];
    out[threadIdx.x] = s[(threadIdx.x + 1) % 64];
}"""
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory s\[") as info:
        cuda.RawKernel(source, "k", backend="cpu", sanitize=True)((1,), (64,), (np.arange(64, dtype=np.float32),
                                                                                np.zeros(65, np.float32)))
    message = str(info.value)
    assert "Add __syncthreads() between line 10" in message and "waited for `flag`" not in message


def test_a_return_in_a_helper_before_its_barrier_is_named_as_what_skips_it():
    source = r"""
__device__ void stage(float* s, const float* in, float* out, int t, int n) {
    if (t >= n) return;
    s[t] = in[t];
    __syncthreads();
    out[t] = s[n - 1 - t];
}
extern "C" __global__ void k(const float* in, float* out, int n) {
    __shared__ float s[64];
    stage(s, in, out, threadIdx.x, n);
    __syncthreads();
    out[threadIdx.x] += 1.0f;
}"""
    for sanitize in (False, True):
        with pytest.raises(cuda.KernelError, match="wait at different __syncthreads") as info:
            cuda.RawKernel(source, "k", backend="cpu", sanitize=sanitize)((1,), (64,), (
                np.arange(64, dtype=np.float32), np.zeros(64, np.float32), 40))
        assert "line 3 (`if (t >= n) return;`) returns from stage() before it" in str(info.value)


def test_the_address_one_past_the_end_of_dynamic_shared_memory_is_no_access():
    source = r"""
struct P2 { float x, y; };
extern "C" __global__ void walk(const float* a, float* o) {
    extern __shared__ float s[];
    int t = threadIdx.x;
    s[t] = a[t];
    __syncthreads();
    float* end = &s[blockDim.x];                          // one past the end: an address, no access
    float acc = 0;
    for (float* p = s; p != end; ++p) acc += *p;
    o[t] = acc + *(end - 1) - s[blockDim.x - 1];
}
extern "C" __global__ void walk_past(const float* a, float* o) {
    extern __shared__ float s[];
    int t = threadIdx.x;
    s[t] = a[t];
    __syncthreads();
    float* end = &s[blockDim.x];
    o[t] = *end;                                          // PAST
}"""
    a, o = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    for sanitize in (False, True):
        module = cuda.RawModule(code=source, backend="cpu", sanitize=sanitize)
        module.get_function("walk")((1,), (8,), (a, o), shared_mem=32)
        assert (o == a.sum()).all()
        with pytest.raises(cuda.KernelError, match=r"accessed s\[8\]") as info:
            module.get_function("walk_past")((1,), (8,), (a, o), shared_mem=32)
        assert info.value.line == line_of("PAST", source)


def test_a_warp_synchronous_step_in_shared_memory_is_told_to_split_read_and_write():
    steps = "\n".join(f"        v[tid] += v[tid + {o}]; __syncwarp();" for o in (32, 16, 8, 4, 2, 1))
    code = GLOBAL_WARP_REDUCE.replace("int* data = g + blockIdx.x * blockDim.x;",
                                      "__shared__ int data[64]; data[tid] = g[blockIdx.x * blockDim.x + tid];"
                                      " __syncthreads();").replace("STEPS", steps)
    with pytest.raises(cuda.KernelError) as info:
        cuda.RawKernel(code, "reduce", backend="cpu", sanitize=True)((1,), (64,), (np.ones(64, np.int32), np.zeros(1, np.int32)))
    message = str(info.value)
    assert "data race on shared memory data[" in message and "one warp" in message
    assert "float other = v[tid + 16]; __syncwarp(); v[tid] += other; __syncwarp();" in message


PLANE_SHIFT = r"""
#define IN 8
#define OUT (IN - 2)
// PMPP's 3-D stencil with thread coarsening in z: halo threads outside the grid load nothing, and
// every thread shifts the planes at the end of each step, unwritten corners included
extern "C" __global__ void stencil(const float* in, float* out, unsigned int N) {
    int iStart = blockIdx.z * OUT;
    int j = blockIdx.y * OUT + threadIdx.y - 1, k = blockIdx.x * OUT + threadIdx.x - 1;
    __shared__ float prev[IN][IN], curr[IN][IN], next[IN][IN];
    bool inside = j >= 0 && j < N && k >= 0 && k < N;
    if (iStart >= 1 && iStart - 1 < N && inside) prev[threadIdx.y][threadIdx.x] = in[(iStart - 1) * N * N + j * N + k];
    if (iStart < N && inside) curr[threadIdx.y][threadIdx.x] = in[iStart * N * N + j * N + k];
    for (int i = iStart; i < iStart + OUT; ++i) {
        if (i + 1 < N && inside) next[threadIdx.y][threadIdx.x] = in[(i + 1) * N * N + j * N + k];
        __syncthreads();
        if (i >= 1 && i < N - 1 && j >= 1 && j < N - 1 && k >= 1 && k < N - 1 && threadIdx.y >= 1 &&
            threadIdx.y < IN - 1 && threadIdx.x >= 1 && threadIdx.x < IN - 1)
            out[i * N * N + j * N + k] = 0.4f * curr[threadIdx.y][threadIdx.x]
                + 0.1f * (curr[threadIdx.y][threadIdx.x - 1] + curr[threadIdx.y][threadIdx.x + 1]
                          + curr[threadIdx.y - 1][threadIdx.x] + curr[threadIdx.y + 1][threadIdx.x]
                          + prev[threadIdx.y][threadIdx.x] + next[threadIdx.y][threadIdx.x]);
        __syncthreads();
        prev[threadIdx.y][threadIdx.x] = curr[threadIdx.y][threadIdx.x];
        curr[threadIdx.y][threadIdx.x] = next[threadIdx.y][threadIdx.x];
    }
}
extern "C" __global__ void copies(float* out, int mode) {
    __shared__ float a[64], b[64];
    int t = threadIdx.x;
    if (t < 32) a[t] = t;
    __syncthreads();
    b[t] = a[t];                                   // COPY: half of a was never written
    __syncthreads();
    if (mode == 0) out[t] = b[t ^ 1] * (t < 32);   // USE: reads copies of a[32..63] too
    if (mode == 1 && t < 32) out[t] = b[t];        // only copies of written elements
    if (mode == 2) out[t] = a[t];                  // OUT: copies an unwritten a[t] into the output
}
"""


def test_copying_unwritten_shared_memory_is_no_read_until_the_copy_is_used():
    n = 14
    x = np.random.default_rng(0).random((n, n, n), dtype=np.float32)
    out = np.zeros_like(x)
    blocks = ((n + 5) // 6,) * 3
    kernel("stencil", PLANE_SHIFT, sanitize=True)(blocks, (8, 8, 1), (x, out, np.uint32(n)))
    c = x[1:-1, 1:-1, 1:-1]
    expected = 0.4 * c + 0.1 * (x[1:-1, 1:-1, :-2] + x[1:-1, 1:-1, 2:] + x[1:-1, :-2, 1:-1] + x[1:-1, 2:, 1:-1]
                                + x[:-2, 1:-1, 1:-1] + x[2:, 1:-1, 1:-1])
    np.testing.assert_allclose(out[1:-1, 1:-1, 1:-1], expected, rtol=1e-5)

    out = np.zeros(64, np.float32)
    kernel("copies", PLANE_SHIFT, sanitize=True)(1, 64, (out, np.int32(1)))
    assert list(out[:32]) == list(range(32))
    with pytest.raises(cuda.KernelError) as info:
        kernel("copies", PLANE_SHIFT, sanitize=True)(1, 64, (out, np.int32(0)))
    copy = line_of("COPY", PLANE_SHIFT)
    assert re.search(rf"reads shared memory b\[(3[2-9]|[4-6]\d)\], which thread \(\d+, 0, 0\) set at line {copy} to a "
                     r"copy of an element that no thread of block \(0, 0, 0\) had written", str(info.value))
    assert info.value.line == line_of("USE", PLANE_SHIFT) and f"harmless (line {copy})" in str(info.value)
    with pytest.raises(cuda.KernelError, match=r"reads shared memory a\[32\], which no thread of block") as info:
        kernel("copies", PLANE_SHIFT, sanitize=True)(1, 64, (out, np.int32(2)))
    assert info.value.line == line_of("OUT", PLANE_SHIFT)


def test_a_race_between_warps_with_syncwarp_between_says_syncwarp_orders_one_warp_only():
    code = r"""
extern "C" __global__ void k(const float* x, float* out, int other) {
    __shared__ float s[64];
    int t = threadIdx.x;
    s[t] = x[t];
    __syncwarp();
    out[t] = s[(t + other) % 64];
}
"""
    x, out = np.arange(64, dtype=np.float32), np.zeros(64, np.float32)
    with pytest.raises(cuda.KernelError) as info:
        kernel("k", code, sanitize=True)(1, 64, (x, out, np.int32(32)))
    assert "__syncwarp() orders only the lanes of one warp, and threads (0, 0, 0) and (32, 0, 0) are in different " \
           "warps" in str(info.value) and "Threads of one warp can use" not in str(info.value)
    kernel("k", code, sanitize=True)(1, 64, (x, out, np.int32(0)))  # each thread its own element: no race


ACCESSORS = r"""
template <typename T> struct Tile {
    T* data; int ld;
    __device__ T& operator[](int i) { return data[i]; }
    __device__ const T& get(int r, int c) const { return data[r * ld + c]; }
    __device__ T& ref(int r, int c) { return *(data + r * ld + c); }
};
__device__ float& cell(float* base, int i) { return base[i]; }
extern "C" __global__ void accessors(float* out, int mode) {
    __shared__ float s[64];
    Tile<float> t{s, 8};
    int i = threadIdx.x;
    if (mode == 0) t[i] = i;
    if (mode == 1) t.ref(i / 8, i % 8) = i;
    if (mode == 2) cell(s, i) = i;
    if (mode == 3) { if (i == 0) for (float& v : s) v = 0; }  // one thread fills the array by reference
    if (mode == 4) cell(s, i / 2) = i;                         // TWO WRITERS
    __syncthreads();
    float total = 0;
    for (float v : s) total += v;                             // EACH
    out[i] = t.get(7 - i / 8, i % 8) + cell(s, i) - total / 64;
}
"""


def test_writes_through_functions_that_return_references_and_range_for_loops_are_noted():
    """A function returning a reference (`float& at(int)`, `T& operator[]`) is an access where it is
    called, not where it returns; `for (float& v : s)` notes v's uses and `for (float v : s)` reads."""
    i = np.arange(64)
    for mode in range(3):
        out = np.zeros(64, np.float32)
        kernel("accessors", ACCESSORS, sanitize=True)(1, 64, (out, np.int32(mode)))
        np.testing.assert_array_equal(out, (63 - i) // 8 * 8 + i % 8 + i - 31.5)
    out = np.zeros(64, np.float32)
    kernel("accessors", ACCESSORS, sanitize=True)(1, 64, (out, np.int32(3)))
    assert not out.any()
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory s\[0\]") as info:
        kernel("accessors", ACCESSORS, sanitize=True)(1, 64, (out, np.int32(4)))
    assert info.value.line == line_of("TWO WRITERS", ACCESSORS)
    with pytest.raises(cuda.KernelError, match=r"reads shared memory s\[0\], which no thread") as info:
        kernel("accessors", ACCESSORS, sanitize=True)(1, 64, (out, np.int32(5)))
    assert info.value.line == line_of("EACH", ACCESSORS)


EXPLICIT_TEMPLATE_CALLS = r"""
template <class T> __device__ T* at(T* p, int k) { return p + k; }
template <class T> __device__ T& ref(T* p, int k) { return p[k]; }
extern "C" __global__ void explicit_calls(const float* a, float* out, int mode) {
    __shared__ float s[32];
    int t = threadIdx.x;
    if (mode == 0) at<float>(s, 0)[t] = a[t];            // AT
    if (mode == 1) ref<float>(s, t) = a[t];              // REF
    if (mode == 2 && t < 16) at<float>(s, t)[0] = a[t];  // HALF
    if (mode == 3) { at<float>(out, 0)[t % 4] = a[t]; return; }  // GLOBAL
    SYNC
    out[t] = at<float>(s, 0)[31 - t] + ref<float>(s, 31 - t);  // READ
}
"""


def test_accesses_through_template_calls_with_explicit_arguments_are_noted():
    """`at<float>(s, 0)[t] = v` and `ref<float>(s, t) = v` (a template function returning a pointer or a reference,
    its arguments written out) are accesses as `at(s, 0)[t]` is: a race, a read of what no thread wrote and two
    threads storing into one global element are reported through them (they went unseen)."""
    a = np.arange(32, dtype=np.float32)
    ordered = kernel("explicit_calls", EXPLICIT_TEMPLATE_CALLS.replace("SYNC", "__syncthreads();"), sanitize=True)
    racy = kernel("explicit_calls", EXPLICIT_TEMPLATE_CALLS.replace("SYNC", ""), sanitize=True)
    for mode in (0, 1):
        out = np.zeros(32, np.float32)
        ordered(1, 32, (a, out, np.int32(mode)))
        np.testing.assert_array_equal(out, 2 * a[::-1])
        with pytest.raises(cuda.KernelError, match=r"data race on shared memory s\[\d+\]") as info:
            racy(1, 32, (a, out, np.int32(mode)))
        assert f"line {line_of('READ', EXPLICIT_TEMPLATE_CALLS)}" in str(info.value)
        assert f"line {line_of('AT' if mode == 0 else 'REF', EXPLICIT_TEMPLATE_CALLS)}" in str(info.value)
    with pytest.raises(cuda.KernelError, match=r"reads shared memory s\[31\], which no thread") as info:
        ordered(1, 32, (a, np.zeros(32, np.float32), np.int32(2)))
    assert info.value.line == line_of("READ", EXPLICIT_TEMPLATE_CALLS)
    with pytest.raises(cuda.KernelError, match=r"out\[\d\]") as info:
        ordered(1, 32, (a, np.zeros(32, np.float32), np.int32(3)))
    assert info.value.line == line_of("GLOBAL", EXPLICIT_TEMPLATE_CALLS)


ACCESSOR_CALLS = r"""
namespace ns { __device__ float& ref(float* p, int k) { return p[k]; } }
struct Grid {
    float* d; int w;
    __device__ float& operator()(int r, int c) { return d[r * w + c]; }
    __device__ float* row(int r) { return d + r * w; }
};
extern "C" __global__ void accessor_calls(const float* a, float* out, int mode) {
    __shared__ float s[32];
    int t = threadIdx.x, u = 31 - t;
    auto at = [&](int k) -> float& { return s[k]; };
    Grid g{s, 8};
    if (mode == 0) ns::ref(s, t) = a[t];          // WRITE 0
    if (mode == 1) at(t) = a[t];                  // WRITE 1
    if (mode == 2) g(t / 8, t % 8) = a[t];        // WRITE 2
    if (mode == 3) g.row(t / 8)[t % 8] = a[t];    // WRITE 3
    SYNC
    if (mode == 0) out[t] = ns::ref(s, u);
    if (mode == 1) out[t] = at(u);
    if (mode == 2) out[t] = g(u / 8, u % 8);
    if (mode == 3) out[t] = g.row(u / 8)[u % 8];
}
"""


@pytest.mark.parametrize("mode", range(4))
def test_accesses_through_lambdas_functors_methods_and_qualified_calls_are_noted(mode):
    """A lambda returning a reference (`at(t) = v`), an object whose operator() returns one (`g(r, c) = v`), a method
    returning a pointer (`g.row(r)[c] = v`) and a qualified call (`ns::ref(s, t) = v`) are accesses where they are
    called. They went unseen (no race), and the lambda's `return s[k];` was taken for a read of s[k] at the call
    of `at(t) = v`: "reads shared memory s[0], which no thread ... has written" on the correct kernel."""
    a = np.arange(32, dtype=np.float32)
    out = np.zeros(32, np.float32)
    kernel("accessor_calls", ACCESSOR_CALLS.replace("SYNC", "__syncthreads();"), sanitize=True)(
        1, 32, (a, out, np.int32(mode)))
    np.testing.assert_array_equal(out, a[::-1])
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory s\[\d+\]") as info:
        kernel("accessor_calls", ACCESSOR_CALLS.replace("SYNC", ""), sanitize=True)(1, 32, (a, out, np.int32(mode)))
    assert f"line {line_of(f'WRITE {mode}', ACCESSOR_CALLS)}" in str(info.value)


PRODUCER_WARP = r"""
extern "C" __global__ void produce(const int* data, int* out, int syncwarp) {
    __shared__ volatile int stage;
    __shared__ int buf[32];
    if (threadIdx.x == 0) stage = 0;
    __syncthreads();
    if (threadIdx.x >= 32) {                 // warp 1 fills the buffer, lane 0 of it says so
        buf[threadIdx.x - 32] = data[threadIdx.x - 32] * 2;  // FILL
        if (syncwarp) __syncwarp();
        if (threadIdx.x == 32) { __threadfence_block(); stage = 1; }
    } else {                                 // warp 0 waits for it
        // WAIT
        __threadfence_block();
        out[threadIdx.x] = buf[threadIdx.x];  // USE
    }
}
"""


@pytest.mark.parametrize("wait", ["while (stage == 0);", "for (;;) { if (stage == 1) break; }",
                                  "while (true) { if (stage) break; }", "do { } while (stage != 1);"])
def test_a_handover_from_a_producer_warp_through_syncwarp_and_one_flag(wait):
    """Lanes of warp 1 write, meet at __syncwarp(), and one of them fences and sets a volatile flag
    that warp 0 waits for (in any of the loop forms): ordered. Without the __syncwarp(), the other
    lanes' writes are not: a race. (The endless loop forms used to spin unseen or time out.)"""
    code = PRODUCER_WARP.replace("// WAIT", wait)
    data, out = np.arange(32, dtype=np.int32), np.zeros(32, np.int32)
    kernel("produce", code, sanitize=True)(1, 64, (data, out, np.int32(1)))
    np.testing.assert_array_equal(out, 2 * data)
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory buf\[1\]: thread \(33, 0, 0\) wrote it") as info:
        kernel("produce", code, sanitize=True)(1, 64, (data, out, np.int32(0)))
    assert info.value.line == line_of("USE", code)


LAMBDAS_AND_METHODS = r"""
struct Acc { float sum; int n; __device__ void add(float v) { sum += v; n++; } __device__ void reset() { sum = 0; n = 0; } };
extern "C" __global__ void lambdas(float* out, int share) {
    __shared__ float s[64];
    __shared__ Acc acc[64];
    int t = threadIdx.x;
    auto set = [](float& v, float x) { v = x; };  // SET
    set(s[t], t);
    acc[t].reset();
    acc[t].add(t);
    __syncthreads();
    auto bump = [&](float& v) { v += 1; };  // BUMP
    if (share) bump(s[t / 2]);
    __syncthreads();
    out[t] = s[63 - t] + acc[63 - t].sum;
}
"""


def test_lambda_reference_parameters_and_methods_of_shared_structs():
    """A lambda's `float& v` parameter is a reference like a __device__ function's (its uses are the
    accesses; `set(s[t], t)` writes), and a method called on an element (`acc[t].reset()`) is no read
    of it: what its body does to the members is (see the next test). No false alarm. Two threads
    bumping one element through the lambda race."""
    out = np.zeros(64, np.float32)
    kernel("lambdas", LAMBDAS_AND_METHODS, sanitize=True)(1, 64, (out, np.int32(0)))
    np.testing.assert_array_equal(out, 2 * (63 - np.arange(64)))
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory s\[0\]") as info:
        kernel("lambdas", LAMBDAS_AND_METHODS, sanitize=True)(1, 64, (out, np.int32(1)))
    assert info.value.line == line_of("BUMP", LAMBDAS_AND_METHODS)


METHODS = r"""
struct Acc {
    float sum;
    int n;
    __device__ void reset() { sum = 0; n = 0; }
    __device__ void add(float v) {
        sum += v;                                     // ADD
        n++;
    }
    __device__ float mean() const { return n ? sum / n : 0.0f; }  // MEAN
    __device__ void set(float sum, int count) { this->sum = sum; n = count; }  // a parameter hides the member
    __device__ float scaled(float k) const { float n = k; return sum * n; }     // so does a local
};
struct Complex {                                      // only ever a local: its members are not noted
    float re, im;
    __device__ Complex operator*(const Complex& o) const { return {re * o.re - im * o.im, re * o.im + im * o.re}; }
};
extern "C" __global__ void methods(float* out, Acc* global, int mode) {
    __shared__ Acc acc[8];
    int t = threadIdx.x;
    if (mode != 1 && t < 8) acc[t].reset();
    __syncthreads();
    if (mode == 0 && t < 8) { acc[t].add(t); acc[t].set(acc[t].mean() + 1, 1); }
    if (mode == 1 && t < 8) acc[t].add(t);            // no thread reset them: sum is read unwritten
    if (mode == 2) acc[t % 8].add(1.0f);              // eight threads per element, no atomic
    if (mode == 3) out[t] = acc[(t + 1) % 8].mean();  // reads what another thread's reset wrote: a barrier between
    if (mode == 4) global[t % 4].add(1.0f);           // sixteen threads per element of an argument array
    if (mode == 5 && t < 4) global[t].add(t);
    __syncthreads();
    if (t < 8 && mode != 3) out[t] = acc[t].scaled(2);
}
"""


def test_the_bodies_of_methods_note_what_they_do_to_the_members():
    """`acc[t].add(v)` with `sum += v;` in the method: the member's read and write are the method's
    accesses, checked like any other (races, unwritten reads), in shared memory and in argument arrays.
    A parameter or a local of the member's name is not the member."""
    record = np.dtype([("sum", np.float32), ("n", np.int32)])
    out, ps = np.zeros(32, np.float32), np.zeros(4, record)
    methods = kernel("methods", METHODS, sanitize=True)
    methods((1,), (32,), (out, ps, np.int32(0)))
    np.testing.assert_array_equal(out[:8], 2 * (np.arange(8) + 1))
    for mode in (3, 5):
        methods((1,), (32,), (out, ps, np.int32(mode)))
    np.testing.assert_array_equal(ps["sum"], np.arange(4))
    with pytest.raises(cuda.KernelError, match=r"reads shared memory acc\[0\]\.sum, which no thread") as info:
        methods((1,), (32,), (out, ps, np.int32(1)))
    assert info.value.line == line_of("ADD", METHODS)
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory acc\[0\]\.sum: thread \(0, 0, 0\) wrote it "
                                               r"at line \d+ \(in a function called at line (\d+)\), and thread "
                                               r"\(8, 0, 0\) reads it") as info:
        methods((1,), (32,), (out, ps, np.int32(2)))
    assert info.value.line == line_of("ADD", METHODS)
    called = int(re.search(r"called at line (\d+)", str(info.value)).group(1))
    assert "add(" in METHODS.split("\n")[called - 1]  # the kernel's line that calls the method
    with pytest.raises(cuda.KernelError, match=r"global\[0\]\.sum") as info:
        methods((1,), (32,), (out, ps, np.int32(4)))
    assert info.value.line == line_of("ADD", METHODS) and info.value.thread == (4, 0, 0)
    source = cuda_source.parse(METHODS)
    assert "this->sum = sum;" in source.cpu_text.replace("__cc_w(this->sum)", "this->sum") and \
        "float n = k; return __cc_r(sum) * n;" in source.cpu_text
    assert "return {re * __cc_r(o.re) - im * __cc_r(o.im)" in source.cpu_text  # (a sanitized Julia set stays fast)


TEMPLATE_STRUCTS = r"""
template <class T> struct Acc { T sum; int n; __device__ void add(T v) { sum += v; ++n; } };
struct Vec { float x, y; __device__ float dot(const Vec& o) const { return x * o.x + y * o.y; } };
extern "C" __global__ void tally(float* out, const Vec* vs, int share) {
    __shared__ Acc<float> acc[64];                    // a template's instance as the element type
    __shared__ Acc<int> count;
    __shared__ Vec sv[64];
    int t = threadIdx.x;
    acc[t].sum = 0; acc[t].n = 0;
    if (t == 0) { count.sum = 0; count.n = 0; }
    sv[t] = vs[t];
    __syncthreads();
    acc[share ? t / 2 : t].add(sv[63 - t].dot(vs[t]));  // TALLY
    __syncthreads();
    out[t] = acc[t].sum + acc[t].n;
}
"""


def test_shared_arrays_of_a_template_struct_are_views_and_their_methods_are_checked():
    """`__shared__ Acc<float> acc[64];` is declared as written (it was wrapped as an access and did
    not compile), checked like any array, and its methods' member accesses are noted."""
    record = np.dtype([("x", np.float32), ("y", np.float32)])
    vs = np.zeros(64, record)
    vs["x"], vs["y"] = np.arange(64), 1
    out = np.zeros(64, np.float32)
    assert '__cc_shared_scalar((void*)&count, sizeof count, "count")' in cuda_source.parse(TEMPLATE_STRUCTS).cpu_text
    tally = kernel("tally", TEMPLATE_STRUCTS, sanitize=True)
    tally((1,), (64,), (out, vs, np.int32(0)))
    np.testing.assert_array_equal(out, (63 - np.arange(64)) * np.arange(64) + 1 + 1)
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory acc\[0\]: ") as info:  # (sum or n)
        tally((1,), (64,), (out, vs, np.int32(1)))
    assert info.value.line == 2  # (the line of `add`'s body: `sum += v`)


def test_a_store_through_a_conditional_goes_to_the_element_it_picks():
    # `(flip ? a[t] : b[t]) = v` reads neither element: it stores into the one the condition picks.
    source = r"""
    extern "C" __global__ void pick(float* out, float* g, int flip) {
        __shared__ float a[64], b[64];
        int t = threadIdx.x;
        (flip ? a[t] : b[t]) = t;
        (flip ? b[t] : a[t]) = -t;
        (flip ? a[t] : b[t]) += 1;
        (flip ? g[t] : out[t]) = 3;
        __syncthreads();
        out[t] = a[63 - t] + b[t];  // READ
    }
    """
    out, g = np.zeros(64, np.float32), np.zeros(64, np.float32)
    kernel = cuda.RawKernel(source, "pick", backend="cpu", sanitize=True)
    kernel((1,), (64,), (out, g, 1))
    t = np.arange(64)
    assert out.tolist() == (63 - t + 1 - t).tolist() and (g == 3).all()
    racy = source.replace("__syncthreads();", "")
    line = next(i for i, text in enumerate(source.split("\n"), 1) if text.endswith("// READ"))
    with pytest.raises(cuda.KernelError, match=rf"a\[32\]: thread \(31, 0, 0\) read it at line {line} before "
                                               r"thread \(32, 0, 0\) wrote it at line 5"):
        cuda.RawKernel(racy, "pick", backend="cpu", sanitize=True)((1,), (64,), (out, g, 1))


HELD_MAXIMUM = r"""
extern "C" __global__ void held_max(const float* x, float* m, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float cur = *m;                          // HELD
        if (x[i] > cur) *m = x[i];
    }
}
extern "C" __global__ void guarded_sum(const float* x, float* total, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float s = *total;                            // SUM-READ
    if (i < n) *total = s + x[i];
}
"""


def test_a_maximum_kept_by_hand_over_two_lines_gets_the_atomic_max_hint():
    """`float cur = *m; if (x[i] > cur) *m = x[i];`: a maximum (atomicMax or a CAS loop), not a sum
    (atomicAdd); a sum whose write sits under `if (i < n)` stays a sum."""
    x = np.random.default_rng(4).random(256).astype(np.float32)
    with pytest.raises(cuda.KernelError, match=r"\(a maximum or minimum kept by hand\)") as info:
        kernel("held_max", HELD_MAXIMUM, sanitize=True)((2,), (128,), (x, np.zeros(1, np.float32), 256))
    assert info.value.line == line_of("HELD", HELD_MAXIMUM) and "atomicCAS loop" in str(info.value)
    with pytest.raises(cuda.KernelError, match=r"\(a counter or a sum kept by hand\)") as info:
        kernel("guarded_sum", HELD_MAXIMUM, sanitize=True)((2,), (128,), (x, np.zeros(1, np.float32), 256))
    assert "atomicAdd(&total[0], v) adds v" in str(info.value)


NO_VALUE_YET = r"""
extern "C" __global__ void gather_half(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j;
    if (i < n / 2) j = 2 * i;
    if (i < n) y[i] = x[j + 1];                  // GATHER
}
"""


def test_an_index_read_before_it_has_a_value_is_caught_with_its_cause():
    """`int j; if (i < n / 2) j = 2 * i; ... x[j + 1]`: for the other threads j has no value (on a GPU,
    whatever its register held, often an index in range). A sanitized launch fills such variables with
    0xFE bytes, so the access faults and the hint names the cause."""
    x, y = np.random.default_rng(0).random(256).astype(np.float32), np.zeros(256, np.float32)
    with pytest.raises(cuda.KernelError, match=r"accessed x\[-16843009\], but x has 256 elements") as info:
        kernel("gather_half", NO_VALUE_YET, sanitize=True)((2,), (128,), (x, y, 256))
    assert info.value.line == line_of("GATHER", NO_VALUE_YET) and info.value.block == (1, 0, 0)
    assert "is near 0xFEFEFEFE, the bytes 0xFE that a sanitized launch puts in a local variable before it has a " \
           "value" in str(info.value)
    kernel("gather_half", NO_VALUE_YET.replace("int j;", "int j = 0;"), sanitize=True)((2,), (128,), (x, y, 256))
    assert y[128:].tolist() == [x[1]] * 128


CARRIED = r"""
extern "C" __global__ void carried(const float* x, float* part) {
    __shared__ float s[64];
    s[threadIdx.x] = x[blockIdx.x * blockDim.x + threadIdx.x];
    __syncthreads();
    if (threadIdx.x == 0) {
        float total = 0.0f;
        for (int k = 0; k < 64; k++) total += s[k];
        part[blockIdx.x] = total + (blockIdx.x > 0 ? part[blockIdx.x - 1] : 0.0f);     // CARRY
    }
}
"""


def test_a_total_carried_from_block_to_block_gets_the_second_launch_hint():
    """`part[b] = total + part[b - 1]`: block b needs block b-1's new value, which exists only once that
    block is done; reading from another array would not fix it."""
    x = np.ones(256, np.float32)
    with pytest.raises(cuda.KernelError, match=r"reads part\[\d\], which thread \(0, 0, 0\) of block \(\d, 0, 0\) "
                                               r"wrote") as info:
        kernel("carried", CARRIED, sanitize=True)((4,), (64,), (x, np.zeros(4, np.float32)))
    assert info.value.line == line_of("CARRY", CARRIED)
    assert "add it in a second launch (or on the host), or hand it over with a flag" in str(info.value)


LAST_BLOCK_BY_COUNT = r"""
extern "C" __global__ void last_by_count(const float* x, float* part, int* count, float* total) {
    if (threadIdx.x == 0) {
        part[blockIdx.x] = x[blockIdx.x];
        __threadfence();
        CHOOSE {                                         // LAST
            float s = 0.0f;
            for (int j = 0; j < gridDim.x; ++j) s += part[j];
            atomicAdd(total, s);
        }
    }
}
"""


def test_a_count_read_back_after_its_own_atomic_is_no_ticket():
    """`atomicAdd(count, 1); if (*count == gridDim.x)`: blocks one after another always give one last
    block, but on a GPU two blocks can both read the full count (the total doubles), or none: the
    re-read is reported with the ticket (the value atomicAdd returns) as the fix."""
    x = np.arange(16, dtype=np.float32)
    racy = LAST_BLOCK_BY_COUNT.replace("CHOOSE", "atomicAdd(count, 1);\n        if (*count == gridDim.x)")
    args = lambda: (x, np.zeros(16, np.float32), np.zeros(1, np.int32), np.zeros(1, np.float32))
    with pytest.raises(cuda.KernelError, match=r"atomically updates count\[0\], which thread \(0, 0, 0\) of block "
                                               r"\(0, 0, 0\) read at line \d+ after its block's own atomic update of "
                                               r"it") as info:
        kernel("last_by_count", racy, sanitize=True)((16,), (32,), args())
    assert "`int ticket = atomicAdd(&count[0], 1); if (ticket == gridDim.x - 1)" in str(info.value)
    every_thread = r"""
extern "C" __global__ void counted(int* count, int* last) {
    atomicAdd(count, 1);                                   // every thread of every block
    __syncthreads();
    if (threadIdx.x == 1 && *count == gridDim.x * blockDim.x) *last = blockIdx.x;    // ANOTHER THREAD READS
}
"""
    with pytest.raises(cuda.KernelError, match=r"after its block's own atomic update of it") as info:
        kernel("counted", every_thread, sanitize=True)((4,), (32,), (np.zeros(1, np.int32), np.zeros(1, np.int32)))
    ticket = LAST_BLOCK_BY_COUNT.replace("CHOOSE", "if (atomicAdd(count, 1) == gridDim.x - 1)")
    values = args()
    kernel("last_by_count", ticket, sanitize=True)((16,), (32,), values)
    assert values[3][0] == x.sum()


CARVED = r"""
extern "C" __global__ void carved(const float* x, float* y) {
    extern __shared__ float sm[];
    float* a = sm;
    float* b = sm + OFFSET;
    int t = threadIdx.x;
    a[t] = x[t];
    b[t] = 2.0f * x[t];
    __syncthreads();
    y[t] = a[t] + b[t];
}
"""


def test_arrays_carved_out_of_extern_shared_memory_that_overlap_are_named():
    """`float* b = sm + blockDim.x / 2` puts b inside a: the stores race, and the fix is the layout (b
    after a's elements), not a barrier between them (which would hide the overlap)."""
    x, y = np.random.default_rng(2).random(64).astype(np.float32), np.zeros(64, np.float32)
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory sm\[32\]") as info:
        kernel("carved", CARVED.replace("OFFSET", "blockDim.x / 2"), sanitize=True)((1,), (64,), (x, y),
                                                                                    shared_mem=512)
    assert "both carved out of the extern __shared__ memory (`b = sm + blockDim.x / 2`, `a = sm`): the two arrays " \
           "overlap" in str(info.value)
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory sm\[32\]") as info:  # (quoted as written)
        kernel("carved", CARVED.replace("sm + OFFSET", "&sm[blockDim.x / 2]"), sanitize=True)((1,), (64,), (x, y),
                                                                                           shared_mem=512)
    assert "(`b = &sm[blockDim.x / 2]`, `a = sm`): the two arrays overlap" in str(info.value)
    kernel("carved", CARVED.replace("OFFSET", "blockDim.x"), sanitize=True)((1,), (64,), (x, y), shared_mem=512)
    np.testing.assert_allclose(y, 3 * x, rtol=1e-6)


def test_a_counter_carved_into_a_halo_is_named_as_an_overlap():
    """`int* cnt = (int*)(sm + blockDim.x + 1)` over a halo of blockDim.x + 2 floats: thread 0's
    `*cnt = 0` and the last thread's halo store meet in one element; the fix is the carve's offset."""
    source = r"""
extern "C" __global__ void halo(const float* x, float* y, int* counts) {
    extern __shared__ float sm[];
    float* h = sm;
    int* cnt = (int*)(sm + blockDim.x + OFFSET);
    int t = threadIdx.x;
    if (t == 0) *cnt = 0;
    h[t + 1] = x[t];
    if (t == 0) h[0] = x[blockDim.x - 1];
    if (t == blockDim.x - 1) h[t + 2] = x[0];  // (a ring)
    __syncthreads();
    y[t] = h[t] + h[t + 1] + h[t + 2];
    if (y[t] > 1.0f) atomicAdd(cnt, 1);
    __syncthreads();
    if (t == 0) counts[0] = *cnt;
}
"""
    x, y, counts = np.random.default_rng(3).random(64).astype(np.float32), np.zeros(64, np.float32), np.zeros(1, np.int32)
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory sm\[65\]") as info:
        kernel("halo", source.replace("OFFSET", "1"), sanitize=True)((1,), (64,), (x, y, counts), shared_mem=66 * 4 + 4)
    assert "line 7 stores through `cnt` and line 10 through `h`, both carved out of the extern __shared__ memory " \
           "(`cnt = (int*)(sm + blockDim.x + 1)`, `h = sm`)" in str(info.value).replace("Line", "line")
    kernel("halo", source.replace("OFFSET", "2"), sanitize=True)((1,), (64,), (x, y, counts), shared_mem=66 * 4 + 4)
    padded = np.concatenate([x[-1:], x, x[:1]])
    assert counts[0] == np.count_nonzero(padded[:-2] + padded[1:-1] + padded[2:] > 1)


def test_a_class_template_holding_a_reference_to_shared_storage_is_no_race():
    """CUB's TempStorage idiom: `BlockLoad<4>(temp).Load(in, items)` binds the __shared__ struct to the
    object's reference member (no read of it at the call); the method's own accesses are checked."""
    src = r'''
struct TempStorage { int buf[128]; };
template <int ITEMS> struct BlockLoad {
    TempStorage& temp;
    __device__ BlockLoad(TempStorage& t) : temp(t) {}
    __device__ void Load(const int* p, int* items, int barrier) {
        for (int k = 0; k < ITEMS; ++k) temp.buf[k * 32 + threadIdx.x] = p[k * 32 + threadIdx.x];  // striped
        if (barrier) __syncthreads();
        for (int k = 0; k < ITEMS; ++k) items[k] = temp.buf[threadIdx.x * ITEMS + k];            // blocked
    }
};
extern "C" __global__ void k(const int* in, int* out, int barrier) {
    __shared__ TempStorage t;
    int items[4];
    BlockLoad<4>(t).Load(in, items, barrier);
    out[threadIdx.x] = items[0] + items[1] + items[2] + items[3];
}'''
    x, y = np.arange(128, dtype=np.int32), np.zeros(32, np.int32)
    cuda.RawKernel(src, "k", backend="cpu")((1,), (32,), (x, y, 1))
    np.testing.assert_array_equal(y, x.reshape(32, 4).sum(1))
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory t\b.*line 9 \(in a function called at line 15\)"):
        cuda.RawKernel(src, "k", backend="cpu")((1,), (32,), (x, y, 0))
    # through a type alias (`using Load = BlockLoad<4>;`, `typedef`), of a member of a union of storages
    aliased = src.replace("__shared__ TempStorage t;", "using Load = BlockLoad<4>;\n    typedef BlockLoad<4> Loader;\n"
                          "    __shared__ union { TempStorage load; int other[8]; } t;") \
        .replace("BlockLoad<4>(t).Load(in, items, barrier);", "if (barrier < 2) Load(t.load).Load(in, items, barrier);"
                 " else Loader(t.load).Load(in, items, 1);")
    for barrier in (1, 2):
        y[:] = 0
        cuda.RawKernel(aliased, "k", backend="cpu")((1,), (32,), (x, y, barrier))
        np.testing.assert_array_equal(y, x.reshape(32, 4).sum(1))


HINTS_FROM_PROBES = r"""
extern "C" __global__ void claim(const int* next, unsigned* level, unsigned* found, int n, unsigned depth) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int v = next[i];
        if (level[v] == 0xFFFFFFFFu) {          // TEST
            level[v] = depth;                   // SET
            atomicAdd(found, 1u);
        }
    }
}
__device__ void order(unsigned& a, unsigned& b) { if (a > b) { unsigned t = a; a = b; b = t; } }   // ORDER
extern "C" __global__ void pairs(unsigned* keys) {
    __shared__ unsigned s[64];
    s[threadIdx.x] = keys[threadIdx.x];
    s[threadIdx.x + 32] = keys[threadIdx.x + 32];
    __syncthreads();
    unsigned pos = 2 * threadIdx.x - (threadIdx.x & 1);   // (threadIdx.x & 0): pairs of their own
    order(s[pos], s[pos + 1]);                            // PAIR
    __syncthreads();
    keys[threadIdx.x] = s[threadIdx.x];
}
extern "C" __global__ void scale(const float* in, float* out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (y * w + x < w * h) out[y * w + x] = in[y * w + x] * x;   // STORE (a flat guard)
}
"""


def test_hints_for_a_claimed_flag_an_overlapping_pair_and_a_column_past_the_row():
    """Three races whose usual hints misled (probe 11): a BFS level claimed by a test and a store of a variable
    (atomicCAS, not "a counter kept by hand"), a compare-and-swap whose pairs overlap in one statement (no
    barrier fits inside one call), and a 2-D store whose x runs past the row into the next one."""
    with pytest.raises(cuda.KernelError, match=r"check-then-set without an atomic") as info:
        kernel("claim", HINTS_FROM_PROBES, sanitize=True)(
            (1,), (32,), (np.array([5, 5] * 16, np.int32), np.full(8, 0xFFFFFFFF, np.uint32), np.zeros(1, np.uint32),
                          32, np.uint32(3)))
    assert info.value.line == line_of("TEST", HINTS_FROM_PROBES)
    assert "`if (atomicCAS(&level[v], 0xFFFFFFFFu, depth) == 0xFFFFFFFFu) { ... }`" in str(info.value)
    assert "atomicAdd(&level" not in str(info.value)
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory s\[1\]") as info:
        kernel("pairs", HINTS_FROM_PROBES, sanitize=True)((1,), (32,), (np.arange(64, dtype=np.uint32)[::-1].copy(),))
    text = str(info.value)
    order, pair = line_of("ORDER", HINTS_FROM_PROBES), line_of("PAIR", HINTS_FROM_PROBES)
    assert text.count(f"at line {order} (in a function called at line {pair})") >= 3  # both threads, and where
    assert f"hint: Both accesses are at line {order} (in a function called at line {pair})" in text
    assert "no barrier can go between them" in text and "check how the index is computed" in text
    assert f"between line {order}" not in text and "atomicAdd" not in text
    fixed = HINTS_FROM_PROBES.replace("(threadIdx.x & 1);", "(threadIdx.x & 0);")
    keys = np.arange(64, dtype=np.uint32)[::-1].copy()
    kernel("pairs", fixed, sanitize=True)((1,), (32,), (keys,))
    np.testing.assert_array_equal(keys[:32], [62 - t if t % 2 == 0 else 64 - t for t in range(32)])  # pairs sorted
    image = np.ones((20, 20), np.float32)
    with pytest.raises(cuda.KernelError, match=r"writes out\[20\]") as info:
        kernel("scale", HINTS_FROM_PROBES, sanitize=True)((3, 3), (8, 8), (image, np.zeros_like(image), 20, 20))
    assert info.value.line == line_of("STORE", HINTS_FROM_PROBES)
    assert "a row 20 wide: the thread at column 20, row 0 is past the row's end" in str(info.value)
    assert "`if (x < w && y < h)`" in str(info.value)
    # a guard with <= (`x <= w`): it is there, and lets the column equal to the width through
    inclusive = HINTS_FROM_PROBES.replace("if (y * w + x < w * h)", "if (x <= w && y < h)")
    assert inclusive != HINTS_FROM_PROBES
    with pytest.raises(cuda.KernelError, match=r"writes out\[20\]") as info:
        kernel("scale", inclusive, sanitize=True)((3, 3), (8, 8), (image, np.zeros_like(image), 20, 20))
    assert "the guard `x <= w` lets it through (column 20 is one past the last, 19). Compare with <: `x < w`" \
        in str(info.value)


CAS_LOOPS = GLOBAL_HAZARDS + r"""
__device__ void add_float(float* address, float v) {   // the Programming Guide's atomicAdd for double, on floats
    int* word = (int*)address; int old = *word, assumed;
    do { assumed = old; old = atomicCAS(word, assumed, __float_as_int(v + __int_as_float(assumed))); } while (assumed != old);
}
extern "C" __global__ void sums_and_maxima(const float* x, float* sums, float* maxima) {
    __shared__ float sum;
    __shared__ float largest;
    __shared__ int seen[64];
    if (threadIdx.x == 0) sum = 0.0f, largest = -1e30f;
    atomicExch(&seen[threadIdx.x], 1);        // an exchange into unwritten memory is a write
    __syncthreads();
    float v = x[blockIdx.x * blockDim.x + threadIdx.x];
    add_float(&sum, v);
    atomic_max_float(&largest, v);            // a CAS loop that stops once the value is larger
    __syncthreads();
    if (threadIdx.x == 0) sums[blockIdx.x] = sum + seen[63] - 1, maxima[blockIdx.x] = largest;
}
extern "C" __global__ void max_then_reset(const float* x, float* maxima) {
    __shared__ float largest;
    if (threadIdx.x == 0) largest = -1e30f;
    __syncthreads();
    atomic_max_float(&largest, x[threadIdx.x]);
    if (threadIdx.x == 63) largest = 0;   // no barrier after the other threads' updates
    __syncthreads();
    maxima[0] = largest;
}
"""


def test_cas_loops_on_shared_memory_are_no_race_and_an_exchange_is_a_write():
    """A CAS loop's plain first read beside other threads' atomicCAS is no hazard in shared memory,
    as in global memory (the Guide's atomicAdd for double, here on floats; a float max that stops
    early); an atomicExch into unwritten shared memory counts as writing it."""
    x = np.random.default_rng(3).random(128).astype(np.float32)
    sums, maxima = np.zeros(2, np.float32), np.zeros(2, np.float32)
    kernel("sums_and_maxima", CAS_LOOPS)((2,), (64,), (x, sums, maxima))
    np.testing.assert_allclose(sums, x.reshape(2, 64).sum(1, dtype=np.float64), rtol=1e-5)
    np.testing.assert_array_equal(maxima, x.reshape(2, 64).max(1))
    # a plain write beside the CAS updates is still a race (the first thread's CAS found its value)
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory largest"):
        kernel("max_then_reset", CAS_LOOPS)(
            (1,), (64,), (x[:64], np.zeros(1, np.float32)))


SUB_MASKS = r"""
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
extern "C" __global__ void halves(const int* x, int* out) {   // one warp
    __shared__ int s[32];
    int lane = threadIdx.x;
    if (lane >= 16) s[lane - 16] = x[lane];        // the upper half writes for the lower half
    if (lane < 16) {
        __syncwarp(0x0000ffff);                    // orders only the lower half: the writers are not in it
        out[lane] = s[lane];
    }
}
extern "C" __global__ void tile_partials(const int* x, int* out) {   // one warp of two tiles of 16
    __shared__ int part[2];
    cg::thread_block_tile<16> t16 = cg::tiled_partition<16>(cg::this_thread_block());
    int v = cg::reduce(t16, x[threadIdx.x], cg::plus<int>());
    if (t16.thread_rank() == 0) part[t16.meta_group_rank()] = v;
    t16.sync();                                    // the other tile's part may not be there
    if (threadIdx.x == 0) out[0] = part[0] + part[1];
}
extern "C" __global__ void same_half(const int* x, int* out) {   // one warp: ordered within the half
    __shared__ int s[32];
    int lane = threadIdx.x;
    s[lane] = x[lane];
    __syncwarp(lane < 16 ? 0x0000ffffu : 0xffff0000u);
    out[lane] = s[lane ^ 1];
}
"""


@pytest.mark.parametrize("name, line", [("halves", 8), ("tile_partials", 18)])
def test_a_warp_call_of_a_sub_mask_orders_only_its_lanes(name, line):
    """`__syncwarp(0xffff)` and a tile<16>'s sync() order the lanes they name, not the whole warp."""
    x = np.arange(32, dtype=np.int32)
    with pytest.raises(cuda.KernelError, match="data race on shared memory") as info:
        kernel(name, SUB_MASKS)((1,), (32,), (x, np.zeros(32, np.int32)))
    assert line in (info.value.line, int(re.search(r"at line (\d+)", str(info.value)).group(1)))
    out = np.zeros(32, np.int32)
    kernel("same_half", SUB_MASKS)((1,), (32,), (x, out))   # each lane reads a lane of its own half
    np.testing.assert_array_equal(out, x ^ 1)


EXCHANGES = r"""
extern "C" __global__ void flags(const int* x, int* out) {
    __shared__ int seen[64];
    atomicExch(&seen[threadIdx.x], x[threadIdx.x] > 0);     // a statement: a write of an unwritten element
    __syncthreads();
    out[threadIdx.x] = seen[63 - threadIdx.x];
}
extern "C" __global__ void swaps(const int* x, int* out) {
    __shared__ int slot[64];
    out[threadIdx.x] = atomicExch(&slot[threadIdx.x], x[threadIdx.x]);   // the old value: never written
}
"""


def test_an_exchange_statement_writes_and_an_exchanges_old_value_is_read():
    x = np.arange(-32, 32, dtype=np.int32)
    out = np.zeros(64, np.int32)
    kernel("flags", EXCHANGES)((1,), (64,), (x, out))
    np.testing.assert_array_equal(out, (x > 0)[::-1])
    with pytest.raises(cuda.KernelError, match=r"reads shared memory slot\[0\], which no thread"):
        kernel("swaps", EXCHANGES)((1,), (64,), (x, out))
    # a source with an atomicExch of its own (for double) keeps calling it
    own = r"""
__device__ double atomicExch(double* address, double val) {
    unsigned long long* p = (unsigned long long*)address;
    return __longlong_as_double(atomicExch(p, (unsigned long long)__double_as_longlong(val)));
}
extern "C" __global__ void set(double* out) {
    __shared__ int flag;
    atomicExch(&out[threadIdx.x], 2.0);
    atomicExch(&flag, 1);
    __syncthreads();
    out[threadIdx.x] += flag;
}"""
    doubles = np.zeros(4)
    kernel("set", own)((1,), (4,), (doubles,))
    assert doubles.tolist() == [3.0] * 4


LOCAL_ATOMICS = r"""
extern "C" __global__ void count_positive(const int* x, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int count = 0;
    if (i < n && x[i] > 0) atomicAdd(&count, 1);      // each thread's own count
    if (i < n) out[i] = count;
}
extern "C" __global__ void block_total(const float* x, float* out) {
    __shared__ float s[64];
    float total = 0.0f;
    s[threadIdx.x] = x[threadIdx.x];
    __syncthreads();
    atomicAdd(&total, s[63 - threadIdx.x]);
    out[threadIdx.x] = total;
}
"""


@pytest.mark.parametrize("name, line, variable", [("count_positive", 5, "count"), ("block_total", 13, "total")])
def test_an_atomic_on_a_local_variable_is_reported(name, line, variable):
    """CUDA's atomics work on global and shared memory: one on a thread's local variable shares nothing
    (the learner meant a __shared__ or global counter). Loops and fibers (a kernel with a barrier) alike."""
    args = ((np.ones(64, np.int32), np.zeros(64, np.int32), 64) if name == "count_positive"
            else (np.ones(64, np.float32), np.zeros(64, np.float32)))
    with pytest.raises(cuda.KernelError, match=rf"calls atomicAdd on a local variable `{variable}` of thread "
                                               r"\(0, 0, 0\): CUDA's atomic functions work on global and shared") as info:
        kernel(name, LOCAL_ATOMICS)((1,), (64,), args)
    assert info.value.line == line and "declare it `__shared__`" in str(info.value)


def test_the_classic_volatile_warp_reduce_is_told_to_split_its_steps_with_syncwarp():
    """The unrolled last warp of the old reductions (volatile, no __syncwarp): a race between two of its
    lines, whose hint is the warp-synchronous fix (a __syncthreads() cannot go inside `if (t < 32)`); each
    step on a line of its own here."""
    source = re.sub(r"; (?=s\[t\])", ";\n    ", WARP_REDUCE)
    with pytest.raises(cuda.KernelError, match="data race on shared memory s") as info:
        kernel("block_sums", source)((2,), (128,), (np.ones(256, np.float32), np.zeros(2, np.float32)))
    message = str(info.value)
    assert "as warp-synchronous steps, with no __syncwarp() between them" in message
    assert "Add __syncthreads()" not in message


HAND_KEPT = r"""
extern "C" __global__ void largest(const float* x, float* out) {
    __shared__ float m;
    if (threadIdx.x == 0) m = 0.0f;
    __syncthreads();
    float v = fabsf(x[threadIdx.x]);
    if (v > m) m = v;                          // a maximum kept by hand
    __syncthreads();
    if (threadIdx.x == 0) out[0] = m;
}
extern "C" __global__ void byte_counts(const unsigned char* x, unsigned char* out) {
    __shared__ unsigned char h[16];
    if (threadIdx.x < 16) h[threadIdx.x] = 0;
    __syncthreads();
    h[x[threadIdx.x] % 16]++;                   // 8-bit counts: CUDA has no 8-bit atomicAdd
    __syncthreads();
    if (threadIdx.x < 16) out[threadIdx.x] = h[threadIdx.x];
}
"""


def test_a_hand_kept_maximum_and_8_bit_counts_get_hints_that_fit_them():
    """Not atomicAdd for a maximum kept with `if (v > m) m = v;` (atomicMax, a CAS loop for floats), and
    not an 8-bit atomicAdd, which CUDA lacks (count in ints)."""
    with pytest.raises(cuda.KernelError, match="data race on shared memory m") as info:
        kernel("largest", HAND_KEPT)((1,), (64,), (np.linspace(0, 1, 64, dtype=np.float32), np.zeros(1, np.float32)))
    assert "keep the largest (or smallest) value in `m`" in str(info.value) and "atomicMax(&m, v)" in str(info.value)
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory h\[") as info:
        kernel("byte_counts", HAND_KEPT)((1,), (64,), (np.arange(64, dtype=np.uint8), np.zeros(16, np.uint8)))
    assert "CUDA has no atomicAdd for 8-bit integers: count in an array of int" in str(info.value)


def test_a_flag_set_without_a_fence_is_told_to_fence_before_the_flag():
    """Producer lanes write, __syncwarp(), lane 0 sets a volatile flag with no fence; the consumer warp
    waits for it and reads: the hint is the fence before the flag (a __syncthreads() would not fit the
    protocol), and with the fence the kernel is silent."""
    source = r"""
extern "C" __global__ void hand_over(const float* x, float* y) {
    __shared__ float data[32];
    __shared__ volatile int ready;
    int t = threadIdx.x;
    if (t == 0) ready = 0;
    __syncthreads();
    if (t < 32) {
        data[t] = x[t] * 3.0f;
        __syncwarp();
        if (t == 0) ready = 1;
    } else {
        while (ready == 0) { }
        __threadfence_block();
        y[t - 32] = data[63 - t];
    }
}"""
    x = np.arange(32, dtype=np.float32)
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory data\[\d+\]") as info:
        kernel("hand_over", source)((1,), (64,), (x, np.zeros(32, np.float32)))
    assert ("The reading thread waited for `ready` (line 13), which line 11 sets: a flag hands over only what was "
            "written before a fence. Put __threadfence_block()") in str(info.value)
    y = np.zeros(32, np.float32)
    kernel("hand_over", source.replace("if (t == 0) ready = 1;", "__threadfence_block(); if (t == 0) ready = 1;"))(
        (1,), (64,), (x, y))
    np.testing.assert_array_equal(y, 3 * x[::-1])


def test_a_wait_for_a_flag_that_is_not_volatile_names_the_flag_at_the_time_limit():
    source = r"""
extern "C" __global__ void hand_over(const float* x, float* y) {
    __shared__ float data[32];
    __shared__ int ready;
    int t = threadIdx.x;
    if (t == 0) ready = 0;
    __syncthreads();
    if (t < 32) {
        data[t] = x[t];
        __syncwarp();
        if (t == 0) { __threadfence_block(); ready = 1; }
    } else {
        while (ready == 0) { }
        __threadfence_block();
        y[t - 32] = data[63 - t];
    }
}"""
    with pytest.raises(cuda.KernelError, match="ran longer than its time limit") as info:
        kernel("hand_over", source, time_limit=1)((1,), (64,), (np.ones(32, np.float32), np.zeros(32, np.float32)))
    assert "The loop at line 13 waits for `ready`, which is not volatile" in str(info.value)


@pytest.mark.parametrize("fence", ["", "__threadfence_block(); "])
def test_a_race_on_the_flag_itself_asks_for_a_volatile_flag_fenced_or_not(fence):
    """A plain `__shared__ int ready` that one thread sets and the others wait for: the race is on the flag, and
    the fix is a volatile (or atomic) flag, with the fence before the store; a fence alone changes nothing (the hint
    used to ask for the fence the kernel had already). With `volatile` and the fence: silent."""
    source = r"""
extern "C" __global__ void k(float* out) {
    __shared__ VOLATILE int ready;
    __shared__ float v;
    if (threadIdx.x == 0) ready = 0;
    __syncthreads();
    if (threadIdx.x == 0) { v = 42.0f; FENCEready = 1; }   // SET
    while (ready == 0) { }
    out[threadIdx.x] = v;
}""".replace("FENCE", fence)
    out = np.zeros(32, np.float32)
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory ready") as info:
        kernel("k", source.replace("VOLATILE ", ""))((1,), (32,), (out,))
    assert ("hint: The loop at line 8 waits for `ready`, which is not volatile: the compiler may read it once and "
            "never again") in str(info.value)
    assert "Put __threadfence_block()" not in str(info.value)
    if fence:
        kernel("k", source.replace("VOLATILE", "volatile"))((1,), (32,), (out,))
        assert (out == 42).all()
    else:
        with pytest.raises(cuda.KernelError, match=r"data race on shared memory v") as info:
            kernel("k", source.replace("VOLATILE", "volatile"))((1,), (32,), (out,))
        assert f"Put __threadfence_block() (__threadfence() between blocks) just before line {line_of('SET', source)}" \
            in str(info.value)


def test_a_block_waiting_for_a_plain_device_flag_is_told_to_make_it_volatile_and_which_blocks_it_may_wait_for():
    source = r"""
__device__ int ready;
__device__ float v;
extern "C" __global__ void k(float* out) {
    if (blockIdx.x == 0 && threadIdx.x == 0) { v = 42.0f; __threadfence(); ready = 1; }
    if (blockIdx.x == 1) { while (ready == 0) { } out[threadIdx.x] = v; }
}"""
    with pytest.raises(cuda.KernelError, match=r"reads ready, which thread \(0, 0, 0\) of block \(0, 0, 0\) wrote") as info:
        kernel("k", source, time_limit=1)((2,), (32,), (np.zeros(32, np.float32),))
    assert ("hint: The loop at line 6 waits for `ready`, which is not volatile: the compiler may read it once and never "
            "again") in str(info.value)
    assert ("And a block may wait only for blocks before it in launch order (a lower blockIdx): a later one may not have "
            "started yet, and then the wait never ends.") in str(info.value)


def test_a_race_names_a_reader_the_writer_is_not_ordered_with():
    """Every thread reads s[0]; warp 0's reads are ordered before thread 0's write by its __syncwarp()s,
    warp 1's are not: the message names a thread of warp 1 (the last two readers kept were of warp 0)."""
    source = r"""
extern "C" __global__ void reread(const int* x, int* y) {
    __shared__ int s[1];
    int t = threadIdx.x;
    if (t == 0) s[0] = x[0];
    __syncthreads();
    if (t < 32) __syncwarp();
    int v = s[0];
    if (t < 32) __syncwarp();
    if (t == 0) s[0] = x[1];
    y[t] = v;
}"""
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory s\[0\]: thread \((3[2-9]|[4-5]\d|6[0-3]), 0, 0\) "
                                               r"read it at line 8, and thread \(0, 0, 0\) writes it at line 10"):
        kernel("reread", source)((1,), (64,), (np.array([5, 7], np.int32), np.zeros(64, np.int32)))


@pytest.mark.parametrize("sanitize", [False, True])
def test_elements_of_pointer_arrays_take_null_pointer_constants(sanitize):
    """`p[i] = 0;`, `= NULL`, `= 0L` into __device__, __shared__ and local arrays of pointers compile in a
    sanitized build too (its store wrapper took the 0 for an int)."""
    source = r"""
__device__ int* kept[64];
extern "C" __global__ void nulls(int* out) {
    __shared__ int* sp[64];
    int* loc[2];
    kept[threadIdx.x] = 0;
    sp[threadIdx.x] = NULL;
    loc[0] = 0L; loc[1] = 0;
    out[threadIdx.x] = (kept[threadIdx.x] == nullptr) + (sp[threadIdx.x] == 0) + (loc[1] == 0) + (loc[0] == 0);
}"""
    out = np.zeros(64, np.int32)
    kernel("nulls", source, sanitize=sanitize)((1,), (64,), (out,))
    assert (out == 4).all()


@pytest.mark.parametrize("sanitize", [False, True])
def test_a_loop_waiting_on_an_atomic_ref_load_lets_the_setting_thread_run(sanitize):
    """`while (f.load(acquire) == 0) {}` for a flag thread 63 sets: a waiting loop, like one on a
    volatile flag (it spun for ever: the other threads of the block never got to run)."""
    source = r"""
#include <cuda/atomic>
extern "C" __global__ void wait_for_63(int* flag, int* data, int* out) {
    cuda::atomic_ref<int, cuda::thread_scope_block> f(flag[0]);
    if (threadIdx.x == 63) { data[0] = 7; f.store(1, cuda::std::memory_order_release); }
    else if (threadIdx.x == 0) { while (f.load(cuda::std::memory_order_acquire) == 0) {} out[0] = data[0]; }
}"""
    flag, data, out = np.zeros(1, np.int32), np.zeros(1, np.int32), np.zeros(1, np.int32)
    kernel("wait_for_63", source, sanitize=sanitize, time_limit=5)((1,), (64,), (flag, data, out))
    assert out[0] == 7


def test_an_in_place_relaxation_is_told_to_read_atomically_and_then_is_silent():
    """Bellman-Ford in place: plain reads of dist beside other threads' atomicMin are a race; the hint
    offers the atomic read for an algorithm that takes whichever value is there, which is then silent."""
    source = r"""
extern "C" __global__ void sssp(const int* eu, const int* ev, const int* ew, int* dist, int* changed, int m, int inf) {
    int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= m) return;
    int du = READ;
    if (du == inf) return;
    int nd = du + ew[e];
    if (nd < atomicMin(&dist[ev[e]], nd)) *changed = 1;
}"""
    rng = np.random.default_rng(1)
    vertices, edges, inf = 40, 160, 1 << 29
    eu, ev = (rng.integers(0, vertices, edges).astype(np.int32) for _ in range(2))
    ew = rng.integers(1, 10, edges).astype(np.int32)

    def relax(read):
        dist = np.full(vertices, inf, np.int32)
        dist[0] = 0
        for _ in range(vertices):
            changed = np.zeros(1, np.int32)
            kernel("sssp", source.replace("READ", read))((2,), (128,), (eu, ev, ew, dist, changed, edges, inf))
            if not changed[0]:
                return dist

    with pytest.raises(cuda.KernelError) as info:
        relax("dist[eu[e]]")
    # (said first: what such a kernel most likely means; red team 12-07)
    assert re.search(r"hint: If the algorithm is meant to read whichever value is there \(a relaxation repeated until "
                     r"nothing changes: Bellman-Ford in place, connected components by label propagation\), say so with "
                     r"an atomic read, which the sanitizer takes as meant: `atomicAdd\(&dist\[\.\.\.\], 0\)`, or a read "
                     r"through a volatile pointer\. If each read must see the final value instead: ", str(info.value))
    dist = relax("atomicAdd(&dist[eu[e]], 0)")
    expected = np.full(vertices, inf, np.int64)
    expected[0] = 0
    for _ in range(vertices):
        for u, v, w in zip(eu, ev, ew):
            if expected[u] < inf:
                expected[v] = min(expected[v], expected[u] + w)
    np.testing.assert_array_equal(dist, expected)


SHARED_POINTER = r"""
extern "C" __global__ void pick(const float* x, float* y, int which) {
    __shared__ float A[64], B[64];
    __shared__ float* buffer;                       // one thread chooses, the others follow
    int t = threadIdx.x;
    if (t == 0) buffer = which ? B : A;
    BARRIER
    float* p = buffer;
    __syncthreads();
    p[t] = x[t];
    __syncthreads();
    y[t] = p[63 - t];
}
"""


def test_a_shared_pointer_variable_is_race_and_init_checked_like_a_shared_scalar():
    x, y = np.arange(64, dtype=np.float32), np.zeros(64, np.float32)
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory buffer: thread \(0, 0, 0\) wrote it at "
                                               r"line 6, and thread \(1, 0, 0\) reads it at line 8"):
        kernel("pick", SHARED_POINTER.replace("BARRIER", ""))((1,), (64,), (x, y, 1))
    with pytest.raises(cuda.KernelError, match=r"reads shared memory buffer, which no thread of block"):
        kernel("pick", SHARED_POINTER.replace("BARRIER", "").replace("if (t == 0) buffer", "if (t == 64) buffer"))(
            (1,), (64,), (x, y, 1))
    for sanitize in (True, False):
        y[:] = 0
        kernel("pick", SHARED_POINTER.replace("BARRIER", "__syncthreads();"), sanitize=sanitize)((1,), (64,), (x, y, 1))
        np.testing.assert_array_equal(y, x[::-1])


# probe 20: global memory between blocks and threads.
@pytest.mark.parametrize("statement", ["if (x[i] < 0.5f) (*count)++;", "if (x[i] < 0.5f) (count[0])++;",
                                       "for (int r = 0; r < 1; ++r) (*count)--;",
                                       "if (x[i] > 2.0f) count[1] = 0; else (*count)++;"])
def test_a_counter_updated_in_parentheses_after_an_if_or_a_loop_header_is_race_checked(statement):
    """`if (c) (*count)++;`: the parentheses after a statement's header were taken for a call's, and the
    update went unnoted (the braced form was caught)."""
    source = f"""
extern "C" __global__ void k(const float* x, int* count) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    {statement}  // COUNT
}}
"""
    with pytest.raises(cuda.KernelError, match=r"count\[0\] \(reads it and writes it back\).*without an atomic") as info:
        kernel("k", source)((2,), (32,), (np.zeros(64, np.float32), np.zeros(2, np.int32)))
    assert info.value.line == line_of("COUNT", source)


TILES = r"""
extern "C" __global__ void last_block_sums(const float* x, float* tiles, unsigned* count, float* out) {
    __shared__ bool last;
    int t = threadIdx.x, b = blockIdx.x;
    BODY
    if (last) {
        float s = 0.0f;
        for (int j = 0; j < gridDim.x; j++) s += tiles[j * 32 + t];  // READ
        out[t] = s;
    }
}
"""
TILE_PUBLISHED = """tiles[b * 32 + t] = 2.0f * x[b * 32 + t];
    __syncthreads();
    if (t == 0) { __threadfence(); last = atomicInc(count, gridDim.x) == gridDim.x - 1; }
    __syncthreads();"""


@pytest.mark.parametrize("how", ["a barrier, then thread 0 fences", "without the barrier", "without the fence",
                                 "only a barrier before the writes"])
def test_a_tile_written_by_every_thread_and_handed_over_by_thread_0_after_a_barrier(how):
    """Every thread writes its part, __syncthreads(), then thread 0 fences and takes the last-block ticket:
    the barrier orders the other threads' writes before thread 0's fence (PTX causality order), so the last
    block reads them safely. Without the barrier, or without the fence, it is a race."""
    body = {"a barrier, then thread 0 fences": TILE_PUBLISHED,
            "without the barrier": TILE_PUBLISHED.replace("__syncthreads();\n    if (t == 0) { __threadfence();",
                                                          "if (t == 0) { __threadfence();"),
            "without the fence": TILE_PUBLISHED.replace("__threadfence(); ", ""),
            "only a barrier before the writes": "__syncthreads();\n    " + TILE_PUBLISHED.replace(
                "__syncthreads();\n    if (t == 0) { __threadfence();", "if (t == 0) { __threadfence();", 1)}[how]
    source = TILES.replace("BODY", body)
    x, out = np.random.default_rng(4).random(128).astype(np.float32), np.zeros(32, np.float32)
    args = (x, np.zeros(128, np.float32), np.zeros(1, np.uint32), out)
    if how.startswith("a barrier"):
        kernel("last_block_sums", source)((4,), (32,), args)
        np.testing.assert_allclose(out, 2 * x.reshape(4, 32).sum(0), rtol=1e-6)
        return
    with pytest.raises(cuda.KernelError, match=r"reads tiles\[\d+\], which thread \(\d+, 0, 0\) of block \(0, 0, 0\)") as info:
        kernel("last_block_sums", source)((4,), (32,), args)
    assert info.value.line == line_of("READ", source)


def test_lanes_handing_global_data_to_another_warp_through_lane_0s_flag_after_syncwarp():
    """Lanes write, __syncwarp(), lane 0 fences and sets a flag that another warp of the block waits for:
    as with a __shared__ buffer, no race (the warp-level call orders the lanes before lane 0's fence)."""
    source = r"""
extern "C" __global__ void k(const float* x, float* buf, int* flag, float* y) {
    int t = threadIdx.x;
    if (t < 32) {
        buf[t] = 3.0f * x[t];
        __syncwarp();
        if (t == 0) { __threadfence_block(); atomicExch(flag, 1); }
    } else {
        while (*(volatile int*)flag == 0) { }
        __threadfence_block();
        y[t - 32] = buf[(t - 31) % 32];
    }
}
"""
    x, y = np.random.default_rng(5).random(32).astype(np.float32), np.zeros(32, np.float32)
    kernel("k", source)((1,), (64,), (x, np.zeros(32, np.float32), np.zeros(1, np.int32), y))
    np.testing.assert_allclose(y, 3 * np.roll(x, -1), rtol=1e-6)


@pytest.mark.parametrize("case", ["broadcast", "bit set", "float4 part", "lock", "slot", "stack push", "bits packed",
                                  "plain += beside atomics", "ticket", "bin fill", "block's space", "stack pop",
                                  "minimum by hand"])
def test_global_races_get_the_fix_that_fits_them(case):
    """The hint of a global race names the fix of its kind of bug, not the counter's atomicAdd."""
    source, setup, wanted = {
        "broadcast": (r"""
__device__ float scale;
extern "C" __global__ void k(const float* x, float* y, const float* p) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0) scale = p[0] / p[1];
    y[i] = x[i] * scale;
}""", lambda: ((2,), (32,), (np.ones(64, np.float32), np.zeros(64, np.float32), np.array([3, 2], np.float32))),
            ["which thread (0, 0, 0) set at line 5", "compute it before the launch and pass it as an argument"]),
        "bit set": (r"""
extern "C" __global__ void k(const int* v, unsigned* bits) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    bits[v[i] >> 5] |= 1u << (v[i] & 31);
}""", lambda: ((1,), (64,), (np.arange(64, dtype=np.int32) % 8, np.zeros(1, np.uint32))),
            ["`atomicOr(&bits[0], 1u << (v[i] & 31));`"]),
        "float4 part": (r"""
extern "C" __global__ void k(const float* s, float4* v) {
    int t = threadIdx.x;
    float4 a = v[t / 2];
    if (t % 2 == 0) a.x = s[t]; else a.y = s[t];
    v[t / 2] = a;
}""", lambda: ((1,), (64,), (np.ones(64, np.float32), np.zeros(128, np.float32))),
            ["wrote back whole at line 6", "let each thread store only its own part"]),
        "lock": (r"""
extern "C" __global__ void k(const float* x, int* lock, float* best) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    bool done = false;
    while (!done) {
        if (atomicCAS(lock, 0, 1) == 0) {
            if (x[i] < best[0]) best[0] = x[i];
            atomicExch(lock, 0);
            done = true;
        }
    }
}""", lambda: ((2,), (32,), (np.random.default_rng(6).random(64).astype(np.float32), np.zeros(1, np.int32),
                              np.full(1, 9, np.float32))),
            ["Put __threadfence() before the atomicExch that releases the lock"]),
        "slot": (r"""
extern "C" __global__ void k(const float* x, float* out, int* count) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (x[i] > 0.5f) { out[*count] = x[i]; atomicAdd(count, 1); }
}""", lambda: ((2,), (32,), (np.linspace(1, 2, 64, dtype=np.float32), np.zeros(64, np.float32), np.zeros(1, np.int32))),
            ["`out[atomicAdd(count, 1)] = ...;`"]),
        "stack push": (r"""
extern "C" __global__ void k(int* head, int* next) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    next[i] = *head;
    *head = i;
}""", lambda: ((1,), (64,), (np.array([-1], np.int32), np.zeros(64, np.int32))),
            ["`old = atomicExch(head, new_value);`"]),
        "bits packed": (r"""
extern "C" __global__ void k(const int* flags, unsigned* words) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned w = words[i >> 2];
    w |= (unsigned)(flags[i] & 0xff) << (8 * (i & 3));
    words[i >> 2] = w;
}""", lambda: ((1,), (64,), (np.arange(64, dtype=np.int32), np.zeros(16, np.uint32))),
            ["`atomicOr(&words[0], (unsigned)(flags[i] & 0xff) << (8 * (i & 3)));`"]),
        "plain += beside atomics": (r"""
extern "C" __global__ void k(const int* bin, const int* w, int* h) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (w[i] == 1) atomicAdd(&h[bin[i]], 1);
    else h[bin[i]] += w[i];
}""", lambda: ((1,), (64,), (np.zeros(64, np.int32), np.arange(64, dtype=np.int32) % 2 + 1, np.zeros(1, np.int32))),
            ["with a plain `+=` while other threads update it atomically", "`atomicAdd(&h[0], value)`"]),
        # (red team 12-07: a ticket, a bin's fill count and a block's space kept by hand were told to check the index,
        # or to add a barrier; a pop was told atomicAdd)
        "ticket": (r"""
extern "C" __global__ void k(const int* in, int* out, int* count) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (in[i] > 0) { int pos = (*count)++; out[pos] = in[i]; }
}""", lambda: ((1,), (16,), (np.arange(-8, 8, dtype=np.int32), np.zeros(16, np.int32), np.zeros(1, np.int32))),
            ["`pos = atomicAdd(&count[0], 1);` gives each thread its own old value"]),
        "bin fill": (r"""
extern "C" __global__ void k(const int* bin, const int* off, int* fill, int* sorted) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int b = bin[i];
    int slot = off[b] + fill[b];
    fill[b] = fill[b] + 1;
    sorted[slot] = i;
}""", lambda: ((1,), (16,), (np.arange(16, dtype=np.int32) % 2, np.array([0, 8], np.int32), np.zeros(2, np.int32),
                              np.zeros(16, np.int32))),
            ["`slot = off[b] + atomicAdd(&fill[b], 1);` (atomicAdd returns the old value"]),
        "block's space": (r"""
extern "C" __global__ void k(int* tail, int* out, int count) {
    __shared__ int start;
    if (threadIdx.x == 0) { start = *tail; *tail += count; }
    __syncthreads();
    if (threadIdx.x < count) out[start + threadIdx.x] = blockIdx.x;
}""", lambda: ((2,), (32,), (np.zeros(1, np.int32), np.zeros(64, np.int32), 32)),
            ["`start = atomicAdd(tail, count);`"]),
        "stack pop": (r"""
extern "C" __global__ void k(int* head, const int* next, int* out) {
    int h = *head;
    *head = next[h];
    out[threadIdx.x] = h;
}""", lambda: ((1,), (8,), (np.zeros(1, np.int32), np.arange(1, 10, dtype=np.int32), np.zeros(8, np.int32))),
            ["one atomicCAS loop: `int h = *head, seen; while ((seen = atomicCAS(head, h, next[h])) != h) h = seen;`"]),
        "minimum by hand": (r"""
extern "C" __global__ void k(const int* row, const int* col, int* label, int* changed) {
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    for (int e = row[v]; e < row[v + 1]; ++e) {
        int u = col[e];
        if (label[v] < label[u]) { label[u] = label[v]; *changed = 1; }
    }
}""", lambda: ((1,), (4,), (np.arange(5, dtype=np.int32), np.array([3, 3, 3, 0], np.int32), np.arange(4, dtype=np.int32),
                             np.zeros(1, np.int32))),
            ["Line 6 keeps a minimum by hand in `label[u]`", "`atomicMin(&label[u], label[v]);`"]),
    }[case]
    with pytest.raises(cuda.KernelError) as info:
        kernel("k", source)(*setup())
    for text in wanted:
        assert text in str(info.value)
    assert "atomicAdd(&" not in str(info.value).split("hint:")[1] or case in ("lock", "plain += beside atomics", "ticket",
                                                                               "bin fill")


def test_a_block_scope_atomic_on_an_element_several_blocks_update_is_a_race():
    """atomicAdd_block is atomic only among one block's threads: on a total that every block updates, two
    blocks' updates can meet. On an element of the block's own (partial sums by blockIdx), it is right."""
    source = r"""
extern "C" __global__ void k(const int* x, int* totals, int per_block) {
    int slot = per_block ? blockIdx.x : 0;
    atomicAdd_block(&totals[slot], x[blockIdx.x * blockDim.x + threadIdx.x]);  // ADD
}
"""
    x, totals = np.arange(256, dtype=np.int32), np.zeros(4, np.int32)
    with pytest.raises(cuda.KernelError, match=r"updates totals\[0\] atomically, and so does thread \(63, 0, 0\) of "
                                               r"block \(0, 0, 0\).*atomicAdd_block, atomic only among the threads of "
                                               r"one block") as info:
        kernel("k", source)((4,), (64,), (x, totals, np.int32(0)))
    assert info.value.line == line_of("ADD", source) and "Use atomicAdd (device scope)" in str(info.value)
    totals[:] = 0
    kernel("k", source)((4,), (64,), (x, totals, np.int32(1)))
    np.testing.assert_array_equal(totals, x.reshape(4, 64).sum(1))


@pytest.mark.parametrize("update", ["ref.fetch_add(x[i])", "ref += x[i]",
                                    "int seen = ref.load(); while (!ref.compare_exchange_weak(seen, seen + x[i])) { }"])
def test_an_atomic_ref_of_block_scope_on_an_element_several_blocks_update_is_a_race(update):
    """cuda::atomic_ref<T, cuda::thread_scope_block> is atomic among one block's threads only, as
    atomicAdd_block: two blocks' updates of one global total can meet; on the block's own slot it is right."""
    source = r"""
#include <cuda/atomic>
extern "C" __global__ void k(const int* x, int* totals, int per_block) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    cuda::atomic_ref<int, cuda::thread_scope_block> ref(totals[per_block ? blockIdx.x : 0]);
    UPDATE;  // ADD
}
""".replace("UPDATE", update)
    x, totals = np.arange(256, dtype=np.int32), np.zeros(4, np.int32)
    with pytest.raises(cuda.KernelError, match=r"updates totals\[0\] atomically, and so does thread \(\d+, 0, 0\) of "
                                               r"block \(0, 0, 0\).*made through a cuda::atomic_ref of "
                                               r"cuda::thread_scope_block, atomic only among the threads of one block") as info:
        kernel("k", source)((4,), (64,), (x, totals, np.int32(0)))
    assert info.value.line == line_of("ADD", source)
    assert "Use cuda::thread_scope_device (cuda::atomic_ref<T, cuda::thread_scope_device>)" in str(info.value)
    totals[:] = 0
    kernel("k", source)((4,), (64,), (x, totals, np.int32(1)))
    np.testing.assert_array_equal(totals, x.reshape(4, 64).sum(1))
    device = source.replace("thread_scope_block", "thread_scope_device")
    totals[:] = 0
    kernel("k", device)((4,), (64,), (x, totals, np.int32(0)))
    assert totals[0] == x.sum()


@pytest.mark.parametrize("barrier, threads, handed_over", [("__syncthreads();", 32, True), ("__syncwarp();", 32, True),
                                                          ("", 32, False), ("__syncwarp();", 64, False),
                                                          ("__syncthreads();", 64, True)])
def test_a_one_warp_blocks_syncwarp_before_lane_0s_fence_and_flag_hands_its_writes_to_another_block(
        barrier, threads, handed_over):
    """Every lane stores, __syncwarp(), lane 0 fences and sets a volatile flag; another block waits for it: in a block
    of one warp the __syncwarp() orders every thread's store before lane 0's fence, as __syncthreads() would (it was
    reported as a race). In a block of two warps it orders only warp 0's, and without it nothing orders the others'."""
    source = handoff("__threadfence(); ((volatile int*)flag)[0] = 1;",
                     "while (((volatile int*)flag)[0] == 0) { } __threadfence();", barrier)
    args = handoff_args(threads)
    if handed_over:
        kernel("k", source)((2,), (threads,), args)
        np.testing.assert_array_equal(args[3], args[0][::-1])
    else:
        with pytest.raises(cuda.KernelError, match=r"reads data\[\d+\], which thread \(\d+, 0, 0\) of block \(0, 0, 0\) "
                                                   r"wrote at line %d" % line_of("STORE", source)) as info:
            kernel("k", source)((2,), (threads,), args)
        assert info.value.line == line_of("READ", source)


@pytest.mark.parametrize("wait, warned", [("while (flag[0] == 0) { }", True), ("while (*flag == 0);", True),
                                          ("do { __nanosleep(32); } while (flag[0] == 0);", True),
                                          ("while (*(volatile int*)flag == 0) { }", False),
                                          ("while (atomicAdd(flag, 0) == 0) { }", False)])
def test_a_loop_waiting_on_a_plain_read_is_warned_about(wait, warned):
    """`while (flag[0] == 0) { }`: nvcc reads the flag once and spins forever; here the block that sets it ran
    first, so the loop never even waited. A volatile or atomic read is the fix, and is silent."""
    source = f"""
extern "C" __global__ void k(float* data, int* flag, int* tickets, float* y) {{
    __shared__ int ticket;
    if (threadIdx.x == 0) ticket = atomicAdd(tickets, 1);
    __syncthreads();
    if (threadIdx.x != 0) return;
    if (ticket == 0) {{ data[0] = 42.0f; __threadfence(); atomicExch(flag, 1); }}
    else {{ {wait} __threadfence(); y[ticket] = data[0]; }}  // WAIT
}}
"""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = np.zeros(3, np.float32)
        kernel("k", source)((3,), (32,), (np.zeros(1, np.float32), np.zeros(1, np.int32), np.zeros(1, np.int32), y))
    assert y.tolist() == [0, 42, 42]
    messages = [str(w.message) for w in caught if issubclass(w.category, cuda.KernelWarning)]
    if warned:
        assert len(messages) == 1 and f"line {line_of('WAIT', source)}: the loop waits for" in messages[0], messages
        assert "with a plain read" in messages[0] and "volatile" in messages[0]
    else:
        assert messages == []
    # Shown once per source, as a GPU's compiler warns once per compile (CuPy compiles a source once): the same
    # source again says nothing, an edited one (a comment added: a learner's next try) is warned about again
    for again, shown in ((source, 0), (source + "// next try\n", int(warned))):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            kernel("k", again)((3,), (32,), (np.zeros(1, np.float32), np.zeros(1, np.int32), np.zeros(1, np.int32), y))
        assert len([w for w in caught if issubclass(w.category, cuda.KernelWarning)]) == shown


@pytest.mark.parametrize("uses_ticket", [False, True])
def test_a_last_block_picked_by_its_index_instead_of_its_ticket_is_warned_about(uses_ticket):
    source = """
extern "C" __global__ void sum(const float* x, float* part, unsigned* count, float* out) {
    if (threadIdx.x != 0) return;
    part[blockIdx.x] = x[blockIdx.x];
    __threadfence();
    TICKET
        float total = 0.0f;
        for (int b = 0; b < gridDim.x; b++) total += part[b];
        out[0] = total;
    }
}
""".replace("TICKET", "if (atomicInc(count, gridDim.x) == gridDim.x - 1) {" if uses_ticket else
            "atomicInc(count, gridDim.x);  // TICKET\n    if (blockIdx.x == gridDim.x - 1) {")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = np.zeros(1, np.float32)
        kernel("sum", source)((6,), (32,), (np.arange(6, dtype=np.float32), np.zeros(6, np.float32),
                                            np.zeros(1, np.uint32), out))
    assert out[0] == 15
    messages = [str(w.message) for w in caught if issubclass(w.category, cuda.KernelWarning)]
    if uses_ticket:
        assert messages == []
    else:
        assert len(messages) == 1 and f"line {line_of('TICKET', source)}: atomicInc takes a ticket whose value is " \
                                      "not used" in messages[0]
        assert "`unsigned ticket = atomicInc(count, gridDim.x); if (ticket == gridDim.x - 1)" in messages[0]


# probe 19 (mutants of correct kernels): messages that named the right bug but the wrong fix.
def test_a_private_histogram_merged_without_atomics_gets_the_atomic_not_a_grid_stride_step():
    """`for (b = threadIdx.x; b < BINS; b += blockDim.x) hist[b] += h[b];`: every block is meant to add into
    every bin (a block-stride loop from threadIdx alone), so the fix is atomicAdd, not a grid-wide step."""
    source = r"""
#define BINS 64
extern "C" __global__ void k(const unsigned char* data, unsigned int* hist, int n) {
    __shared__ unsigned int h[BINS];
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) h[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&h[data[i] % BINS], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += blockDim.x)
        hist[b] += h[b];  // MERGE
}
"""
    data = np.random.default_rng(7).integers(0, 256, 3001).astype(np.uint8)
    with pytest.raises(cuda.KernelError, match=r"updates hist\[0\]") as info:
        kernel("k", source)((5,), (32,), (data, np.zeros(64, np.uint32), np.int32(3001)))
    assert "use atomicAdd(&hist[0], value)" in str(info.value) and "gridDim" not in str(info.value).split("hint:")[1]


def test_a_wrapping_ticket_counter_kept_by_hand_is_a_counter_not_a_maximum():
    source = r"""
__device__ unsigned int count = 0;
extern "C" __global__ void k(unsigned int* tickets) {
    if (threadIdx.x == 0) {
        unsigned int ticket = count;
        count = (ticket >= gridDim.x - 1) ? 0 : ticket + 1;
        tickets[blockIdx.x] = ticket;
    }
}
"""
    with pytest.raises(cuda.KernelError, match=r"\(a counter or a sum kept by hand\)") as info:
        kernel("k", source)((8,), (32,), (np.zeros(8, np.uint32),))
    assert "atomicAdd(&count, 1)" in str(info.value) and "atomicMax" not in str(info.value)


def test_a_barrier_inside_an_if_of_straight_line_code_is_not_said_to_be_in_a_loop():
    source = r"""
#include <climits>
extern "C" __global__ void k(const int* x, int* result, int n) {
    __shared__ int block_max;
    if (threadIdx.x == 0) { block_max = INT_MIN; __syncthreads(); }  // IF
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicMax(&block_max, x[i]);
    __syncthreads();
    if (threadIdx.x == 0) atomicMax(result, block_max);
}
"""
    with pytest.raises(cuda.KernelError, match=r"do not all reach .*inside the if at line 5, which thread \(0, 0, 0\) "
                                               r"went into and thread \(1, 0, 0\) did not") as info:
        kernel("k", source)((2,), (64,), (np.arange(100, dtype=np.int32), np.zeros(1, np.int32), np.int32(100)))
    assert "different passes" not in str(info.value) and "loop" not in str(info.value)


def test_a_race_past_a_barrier_inside_an_if_names_that_barrier():
    """A tiled transpose with its __syncthreads() inside the load's `if (r < M && c < N)`: a thread outside the matrix
    skips it and reads the tile early. The sanitized launch reports the race (the plain one the divergent barrier);
    its hint said to add a barrier between the lines, where there is one: it names the barrier in the if now."""
    source = r"""
#define TD 16
extern "C" __global__ void transpose(const float* a, float* b, int M, int N) {
    __shared__ float tile[TD][TD + 1];
    int c = blockIdx.x * TD + threadIdx.x, r = blockIdx.y * TD + threadIdx.y;
    if (r < M && c < N) {
        tile[threadIdx.y][threadIdx.x] = a[r * N + c];
        __syncthreads();
    }
    int oc = blockIdx.y * TD + threadIdx.x, orow = blockIdx.x * TD + threadIdx.y;
    if (orow < N && oc < M) b[orow * M + oc] = tile[threadIdx.x][threadIdx.y];
}
"""
    with pytest.raises(cuda.KernelError, match=r"(?s)data race on shared memory tile.*with no __syncthreads\(\) between "
                                               r"them that both threads reached.*There is a __syncthreads\(\) at line 8, "
                                               r"between the two lines, but it runs under a condition"):
        kernel("transpose", source)((2, 3), (16, 16), (np.ones((40, 24), np.float32), np.zeros((24, 40), np.float32),
                                                       np.int32(40), np.int32(24)))


def test_a_shared_scalar_every_warp_reads_gets_no_syncwarp_aside():
    """Thread 0 broadcasts through a __shared__ scalar in a loop with no barrier at the loop's end: the two racing
    threads are lanes of warp 0, but every warp reads the scalar, so __syncwarp() would not do."""
    source = r"""
extern "C" __global__ void k(const float* x, float* out, int n) {
    __shared__ float sv;
    float acc = 0;
    for (int it = 0; it < n; it++) {
        if (threadIdx.x == 0) sv = x[it];
        __syncthreads();
        acc += sv * threadIdx.x;  // READ
    }
    out[threadIdx.x] = acc;
}"""
    with pytest.raises(cuda.KernelError) as info:
        kernel("k", source, sanitize=True)((1,), (64,), (np.arange(4, dtype=np.float32), np.zeros(64, np.float32),
                                                         np.int32(4)))
    message = str(info.value)
    assert f"Add __syncthreads() at the end of the loop's body, after line {line_of('READ', source)}" in message
    assert "__syncwarp() is enough" not in message


@pytest.mark.parametrize("element", ["unsigned char", "short", "int"])
def test_a_local_array_of_narrow_elements_read_before_it_is_written_is_reported(element):
    """A 3x3 median filter whose load loop stops one column short (`dx < 1`): v[6..8] are read by the sort before
    anything wrote them. Caught for an unsigned char (or short) array as for an int one; the twin is silent."""
    source = f"""
extern "C" __global__ void med(const unsigned char* in, unsigned char* out, int w, int h) {{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < 1 || y < 1 || x >= w - 1 || y >= h - 1) return;
    {element} v[9];
    int k = 0;
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx < LAST; dx++) v[k++] = in[(y + dy) * w + x + dx];
    for (int a = 0; a < 9; a++)
        for (int j = 0; j < 8 - a; j++)
            if (v[j] > v[j + 1]) {{ {element} t = v[j]; v[j] = v[j + 1]; v[j + 1] = t; }}  // SORT
    out[y * w + x] = (unsigned char)v[4];
}}"""
    image = np.random.default_rng(3).integers(0, 256, (8, 8), dtype=np.uint8)
    with pytest.raises(cuda.KernelError, match=r"reads element 6 of its local array v \(of 9\), which this thread has "
                                               r"not written") as info:
        kernel("med", source.replace("LAST", "1"), sanitize=True)((1, 1), (8, 8), (image, np.zeros_like(image), 8, 8))
    assert info.value.line == line_of("SORT", source)
    out = np.zeros_like(image)
    kernel("med", source.replace("LAST", "2"), sanitize=True)((1, 1), (8, 8), (image, out, 8, 8))
    windows = np.lib.stride_tricks.sliding_window_view(image, (3, 3)).reshape(6, 6, 9)
    np.testing.assert_array_equal(out[1:-1, 1:-1], np.sort(windows, axis=2)[:, :, 4])


def test_a_column_scan_without_its_column_guard_is_told_to_keep_columns_inside_the_row():
    """An integral image's column pass with no `if (x >= w) return;`: a thread of the rounded-up grid has x = w and
    reads the next row's element that another thread writes. The hint is the guard, not 'write into another array'."""
    source = r"""
extern "C" __global__ void colscan(int* a, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    for (int y = 1; y < h; ++y) a[y * w + x] += a[(y - 1) * w + x];  // SCAN
}"""
    a = np.arange(20 * 45, dtype=np.int32).reshape(20, 45) % 7
    with pytest.raises(cuda.KernelError) as info:
        kernel("colscan", source, sanitize=True)((2,), (32,), (a.copy(), np.int32(45), np.int32(20)))
    message = str(info.value)
    assert "has x = 45, past the row" in message and "`if (x >= w) return;`" in message
    assert "into another array" not in message
    guarded = source.replace("int x = blockIdx.x * blockDim.x + threadIdx.x;",
                             "int x = blockIdx.x * blockDim.x + threadIdx.x;\n    if (x >= w) return;")
    b = a.copy()
    kernel("colscan", guarded, sanitize=True)((2,), (32,), (b, np.int32(45), np.int32(20)))
    np.testing.assert_array_equal(b, np.cumsum(a, axis=0))


def test_an_output_indexed_with_the_inputs_width_under_an_early_return_guard_is_told_the_rows_length():
    """A resize whose store steps the input's width, `out[y * w + x]`, where `if (x >= ow || y >= oh) return;` keeps
    the coordinates inside the output: the row's length in the index is named (not 'guard x < w', which would drop
    output columns)."""
    source = r"""
extern "C" __global__ void resize(const float* in, float* out, int w, int h, int ow, int oh) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= ow || y >= oh) return;
    int sx = x * w / ow, sy = y * h / oh;
    out[y * w + x] = in[sy * w + sx];  // STORE
}"""
    image = np.random.default_rng(8).random((17, 23), dtype=np.float32)
    with pytest.raises(cuda.KernelError) as info:
        kernel("resize", source, sanitize=True)((2, 3), (16, 16), (image, np.zeros((40, 31), np.float32), np.int32(23),
                                                                  np.int32(17), np.int32(31), np.int32(40)))
    message = str(info.value)
    assert "the guard says a row is ow long (`x < ow`) while the index steps w elements a row" in message
    assert "`y * ow + x`" in message and "if (x < w && y < h)" not in message


HIST_2D = r"""
extern "C" __global__ void hist(const unsigned char* img, unsigned int* bins, int w, int h) {
    __shared__ unsigned int sh[256];
    int t = RANK;
    for (int i = t; i < 256; i += STEP) sh[i] = 0;  // ZERO
    __syncthreads();
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) atomicAdd(&sh[img[y * w + x]], 1u);
    __syncthreads();
    for (int i = t; i < 256; i += STEP) atomicAdd(&bins[i], sh[i]);
}"""


@pytest.mark.parametrize("rank, step, block, warned", [
    ("threadIdx.x", "blockDim.x", (8, 8), True),
    ("threadIdx.x", "blockDim.x", (64, 1), False),
    ("threadIdx.y * blockDim.x + threadIdx.x", "blockDim.x * blockDim.y", (8, 8), False)])
def test_a_block_loop_by_threadIdx_x_alone_in_a_block_of_several_rows_is_warned_about(rank, step, block, warned):
    """A shared histogram's zeroing and merge loops hand out bins by threadIdx.x and step by blockDim.x: in an 8×8
    block the 8 threads of a column repeat each other (every count 8 times, and no access is wrong). Numbered by the
    block's rank, or in a block of one row, nothing is said and the counts are right."""
    source = HIST_2D.replace("RANK", rank).replace("STEP", step)
    image = np.random.default_rng(4).integers(0, 256, (21, 33), dtype=np.uint8)
    bins = np.zeros(256, np.uint32)
    grid = (-(-33 // block[0]), -(-21 // block[1]))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kernel("hist", source, sanitize=True)(grid, block, (image, bins, np.int32(33), np.int32(21)))
    said = [str(w.message) for w in caught if issubclass(w.category, cuda.KernelWarning)]
    if warned:
        assert len(said) == 1 and (f"line {line_of('ZERO', source)}: `for (int i = t; i < 256; i += blockDim.x)` hands "
                                   "out the elements by threadIdx.x alone, but this launch's blocks are 8×8 threads: "
                                   "the 8 threads that share a threadIdx.x") in said[0], said
        assert bins.sum() == 8 * image.size
    else:
        assert said == []
        np.testing.assert_array_equal(bins, np.bincount(image.ravel(), minlength=256))


def test_a_barrier_that_is_the_body_of_a_one_line_if_is_named():
    """`if (threadIdx.x == 0) __syncthreads();`: only thread 0 waits, the others read their neighbours' elements
    early; the hint names that barrier (not 'add one between the lines', nor __syncwarp())."""
    source = r"""
extern "C" __global__ void k(const int* x, int* out) {
    __shared__ int s[128];
    s[threadIdx.x] = x[blockIdx.x * blockDim.x + threadIdx.x];
    if (threadIdx.x == 0) __syncthreads();  // BARRIER
    out[blockIdx.x * blockDim.x + threadIdx.x] = s[(threadIdx.x + 1) % blockDim.x];
}
"""
    with pytest.raises(cuda.KernelError) as info:
        kernel("k", source, sanitize=True)((2,), (128,), (np.arange(256, dtype=np.int32), np.zeros(256, np.int32)))
    message = str(info.value)
    assert f"There is a __syncthreads() at line {line_of('BARRIER', source)}, between the two lines, but it runs under " \
           "a condition" in message
    assert "__syncwarp() is enough" not in message


@pytest.mark.parametrize("declared, index, said", [("t[B + 1][B + 2]", "t[B + 1][tx]", "B + 1 is 17 for every thread"),
                                                   ("t[B + 2][B + 2]", "t[tx + 18][0]", "tx + 18 is 18 or more")])
def test_an_index_no_thread_can_keep_inside_the_array_gets_no_guard(declared, index, said):
    """`t[B + 1][tx]` of `t[B + 1][B + 2]`: a guard `if (B + 1 < 17)` would never be true; the array is too small
    (or the index wrong)."""
    source = f"""
#define B 16
extern "C" __global__ void k(float* out) {{
    __shared__ float {declared};
    int tx = threadIdx.x;
    if (threadIdx.y == B - 1) {index} = 0.0f;
    __syncthreads();
    out[0] = 1.0f;
}}
"""
    with pytest.raises(cuda.KernelError, match="No thread can reach") as info:
        kernel("k", source)((1,), (16, 16), (np.zeros(1, np.float32),))
    assert said in str(info.value) and "Guard the access" not in str(info.value)


def test_an_index_through_a_const_copy_of_the_thread_index_is_not_called_the_same_for_every_thread():
    """FDTD3d's `const int ltidy = threadIdx.y;` is a const int, but not a constant: `tile[ltidy + worky + RADIUS]`
    past a tile declared too small differs from thread to thread (it said "is 10 for every thread")."""
    source = """
#define RADIUS 2
#define ROWS 4
__constant__ const int EXTRA = RADIUS + 1;
extern "C" __global__ void k(float* out) {
    __shared__ float tile[ROWS + 2 * RADIUS][8];
    const int ltidy = threadIdx.y;
    const int worky = blockDim.y;
    if (ltidy < RADIUS) tile[ltidy + worky + RADIUS][threadIdx.x] = 1.0f;
    if (ltidy == 0) tile[ROWS + 2 * EXTRA][threadIdx.x] = 1.0f;
    out[0] = 1.0f;
}
"""
    with pytest.raises(cuda.KernelError, match=r"accessed tile\[10\]") as info:
        kernel("k", source)((1,), (8, 8), (np.zeros(1, np.float32),))
    assert "for every thread" not in str(info.value) and "ltidy + worky + RADIUS < 8" in str(info.value)
    with pytest.raises(cuda.KernelError, match=r"ROWS \+ 2 \* EXTRA is 10 for every thread"):
        kernel("k", source.replace("ltidy < RADIUS", "ltidy < 0"))((1,), (8, 8), (np.zeros(1, np.float32),))


HALVING_REDUCTION = r"""
extern "C" __global__ void block_sum(const float* x, float* out, int n) {
    extern __shared__ float s[];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (unsigned int stride = blockDim.x / 2; stride > 0; stride >>= 1) {   // HALVING
        if (t < stride) s[t] += s[t + stride];
        __syncthreads();
    }
    if (t == 0) atomicAdd(out, s[0]);
}
"""


@pytest.mark.parametrize("sanitize", [False, True])
def test_a_halving_reduction_in_a_block_that_is_not_a_power_of_two_gets_a_warning(sanitize):
    """`stride = blockDim.x / 2; stride >>= 1` with 48 threads: 24, 12, 6, 3, then 1 adds s[1] and s[2] is never
    added. No access is wrong (no sanitizer can see it), the sum is: a KernelWarning at the launch says why, once
    per block size; a power-of-two block gets none."""
    kernel = cuda.RawKernel(HALVING_REDUCTION, "block_sum", backend="cpu", sanitize=sanitize)
    x, out = np.ones(96, np.float32), np.zeros(1, np.float32)
    with pytest.warns(cuda.KernelWarning, match=r"blockDim\.x = 48 is not a power of two, and the loop at line "
                                                 rf"{line_of('HALVING', HALVING_REDUCTION)} \(`stride = blockDim\.x / 2`"
                                                 r".*at 3 elements \(stride 1\).*element 2 is never added"):
        kernel((2,), (48,), (x, out, np.int32(96)), shared_mem=48 * 4)
    assert out[0] == 64  # (what the warning explains)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kernel((2,), (48,), (x, out, np.int32(96)), shared_mem=48 * 4)  # (said once)
        out[0] = 0
        kernel((3,), (32,), (x, out, np.int32(96)), shared_mem=32 * 4)
    assert out[0] == 96


UNCOVERED = r"""
extern "C" __global__ void add(const float* a, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + 1.0f;                                          // GUARD
}
extern "C" __global__ void copy2d(const float* in, float* out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;                                           // RETURN
    out[y * w + x] = in[y * w + x];
}
extern "C" __global__ void strided(const float* a, float* c, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) c[i] = a[i];
}
"""


@pytest.mark.parametrize("backend_sanitize", [False, True])
def test_a_grid_rounded_down_gets_a_warning_naming_the_indices_without_a_thread(backend_sanitize):
    """`grid = n // 256`: the last n % 256 elements get no thread, and no access is wrong (no sanitizer sees it).
    A KernelWarning names the guard and the indices left out; a grid rounded up, or a grid-stride loop, gets none."""
    module = cuda.RawModule(code=UNCOVERED, backend="cpu", sanitize=backend_sanitize)
    a, c = np.ones(1000, np.float32), np.zeros(1000, np.float32)
    with pytest.warns(cuda.KernelWarning, match=rf"kernel 'add': the launch has 768 threads along x \(grid\.x = 3 "
                                                 rf"blocks of 256\), but the guard at line {line_of('GUARD', UNCOVERED)} "
                                                 r"\(`i < n`\) lets n = 1,000 of them work, so i = 768 to 999 gets no "
                                                 r"thread.*\(n \+ 255\) // 256 blocks"):
        module.get_function("add")((1000 // 256,), (256,), (a, c, 1000))
    assert (c[768:] == 0).all() and (c[:768] == 2).all()
    image, out = np.ones((50, 70), np.float32), np.zeros((50, 70), np.float32)
    with pytest.warns(cuda.KernelWarning, match=rf"the guard at line {line_of('RETURN', UNCOVERED)} \(`x >= w`\) lets "
                                                 r"w = 70 of them work, so x = 64 to 69 gets no thread; and 48 threads "
                                                 r"along y.*\(w \+ 15\) // 16 and \(h \+ 15\) // 16 blocks"):
        module.get_function("copy2d")((70 // 16, 50 // 16), (16, 16), (image, out, 70, 50))
    # the axes the other way round from the launch's (a column from blockIdx.y): the launch has the threads
    swapped = UNCOVERED.replace("int x = blockIdx.x * blockDim.x + threadIdx.x;", "int x = blockIdx.y * blockDim.y + threadIdx.y;"
                                ).replace("int y = blockIdx.y * blockDim.y + threadIdx.y;", "int y = blockIdx.x * blockDim.x + threadIdx.x;")
    with pytest.warns(cuda.KernelWarning, match=r"so x = 64 to 69 gets no thread.*Or are the kernel's axes the other way "
                                                 r"round from the launch's\? It would take x from blockIdx\.x and "
                                                 r"threadIdx\.x \(the launch has 80 threads along x\)"):
        cuda.RawKernel(swapped, "copy2d", backend="cpu")((5, 4), (16, 16), (image, out, 70, 50))
    stencil = UNCOVERED.replace("x >= w || y >= h", "x < 1 || x >= w - 1 || y >= h")
    with pytest.warns(cuda.KernelWarning, match=r"\(`x >= w - 1`\) lets w - 1 = 69 of them work, so x = 64 to 68 gets no "
                                                 r"thread; and 48 threads along y .*so y = 48 to 49 gets no thread"):
        cuda.RawKernel(stencil, "copy2d", backend="cpu", sanitize=backend_sanitize)(
            (70 // 16, 50 // 16), (16, 16), (image, out, 70, 50))
    # a tile's width in a constant (`blockIdx.y * TD + threadIdx.y`), as tiled kernels write it: the same warning for
    # blocks TD threads wide, none for blocks of another width (a mismatch of its own; red team 12-07)
    tiled = "#define TD 16\n" + UNCOVERED.replace("blockIdx.x * blockDim.x + threadIdx.x;\n    int y", "blockIdx.x * TD + "
                                                   "threadIdx.x;\n    int y").replace("blockIdx.y * blockDim.y", "TD * blockIdx.y")
    with pytest.warns(cuda.KernelWarning, match=r"so x = 64 to 69 gets no thread; and 48 threads along y .*so y = 48 to 49 "
                                                 r"gets no thread"):
        cuda.RawKernel(tiled, "copy2d", backend="cpu")((70 // 16, 50 // 16), (16, 16), (image, out, 70, 50))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # (blocks of 32 along x overlap: the warning of that, not of the grid)
        cuda.RawKernel(tiled, "copy2d", backend="cpu")((5, 4), (32, 16), (image, out, 70, 50))
    assert not any("gets no thread" in str(w.message) for w in caught)
    # the index from a __device__ helper (`int i = global_id();`)
    helper = UNCOVERED.replace("int i = blockIdx.x * blockDim.x + threadIdx.x;", "int i = global_id();").replace(
        'extern "C" __global__ void add(', "__device__ inline int global_id() { return blockIdx.x * blockDim.x + "
                                           'threadIdx.x; }\nextern "C" __global__ void add(')
    with pytest.warns(cuda.KernelWarning, match=r"kernel 'add': the launch has 768 threads along x .*\(`i < n`\) lets "
                                                 r"n = 1,000 of them work, so i = 768 to 999 gets no thread"):
        cuda.RawKernel(helper, "add", backend="cpu", sanitize=backend_sanitize)((1000 // 256,), (256,), (a, c, 1000))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cuda.RawKernel(helper, "add", backend="cpu", sanitize=backend_sanitize)((4,), (256,), (a, c, 1000))
        module.get_function("add")(((1000 + 255) // 256,), (256,), (a, c, 1000))
        assert (c == 2).all()
        module.get_function("copy2d")((5, 4), (16, 16), (image, out, 70, 50))
        module.get_function("strided")((2,), (64,), (a, c, 1000))
    assert (c == 1).all() and (out == 1).all()


def test_a_thread_of_several_elements_gets_no_grid_warning_from_one_of_its_guards():
    """Each thread handles i and i + n / 2 under `if (i < n) { if (i < half) ... }`, or elements 4i to 4i + 3 in a
    loop (an `if constexpr` branch, or a flag's): a grid of n / 2 or n / 4 threads covers every element, and the
    warning that read `i < n` said i = 1,024 to 1,999 got no thread (red team 12-07). A thread of one element
    behind the same guards still gets it."""
    halves = r"""
extern "C" __global__ void relu2(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int half = n / 2;
    if (i < n) {
        if (i < half) { y[i] = fmaxf(x[i], 0.f); y[i + half] = fmaxf(x[i + half], 0.f); }
    }
}
"""
    fours = r"""
template <typename T>
__global__ void scale(const T* in, T* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if constexpr (sizeof(T) == 4) {
        for (int k = 4 * i; k < 4 * i + 4; ++k)
            if (k < n) out[k] = in[k] * 2;
    } else {
        if (i < n) out[i] = in[i] * 2;
    }
}
"""
    x = np.linspace(-1, 1, 2000, dtype=np.float32)
    y = np.zeros_like(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cuda.RawKernel(halves, "relu2", backend="cpu")((4,), (256,), (x, y, np.int32(2000)))
        np.testing.assert_array_equal(y, np.maximum(x, 0))
        cuda.RawModule(code=fours, backend="cpu", name_expressions=["scale<float>"]).get_function("scale<float>")(
            (2,), (256,), (x, y, np.int32(2000)))
        np.testing.assert_array_equal(y, 2 * x)
    with pytest.warns(cuda.KernelWarning, match=r"the guard at line 4 \(`i < n`\) lets n = 2,000 of them work, so i = "
                                                 r"1,024 to 1,999 gets no thread"):  # (one element a thread)
        cuda.RawKernel(UNCOVERED, "add", backend="cpu")((4,), (256,), (x, y, 2000))


def test_a_global_index_that_adds_another_axis_threadidx_gets_a_warning():
    """`blockIdx.x * blockDim.x + threadIdx.y` in a 1-D launch: threadIdx.y is 0, every thread of a block gets one
    index and stores the same value there (no race, no bad access); in a block with fewer threads along y than
    along x, the last indices of each block get none. A square block (a transpose's tile may mean it), or a flat
    thread index (threadIdx.y * blockDim.x + threadIdx.x), gets no warning."""
    source = UNCOVERED.replace("int i = blockIdx.x * blockDim.x + threadIdx.x;", "int i = blockIdx.x * blockDim.x + threadIdx.y;")
    a, c = np.ones(64, np.float32), np.zeros(64, np.float32)
    with pytest.warns(cuda.KernelWarning, match=r"kernel 'add', line 3: `blockIdx\.x \* blockDim\.x \+ threadIdx\.y` adds "
                                                 r"threadIdx\.y, which is 0 for every thread of this launch's blocks "
                                                 r"\(blockDim\.y = 1\): the 32 threads of a block all get the same index"
                                                 r".*Use threadIdx\.x"):
        cuda.RawKernel(source, "add", backend="cpu")((2,), (32,), (a, c, 64))
    assert np.count_nonzero(c) == 2
    # fewer threads along y than the block's share along x: the last indices of each block get none
    with pytest.warns(cuda.KernelWarning, match=r"threadIdx\.y, which runs from 0 to 7 in this launch \(blockDim\.y = "
                                                 r"8\), while each block's share along x is blockDim\.x = 32 wide: the "
                                                 r"last 24 of each block's indices get no thread"):
        cuda.RawKernel(source, "add", backend="cpu")((2,), (32, 8), (a, c, 64))
    flat = UNCOVERED.replace("int i = blockIdx.x * blockDim.x + threadIdx.x;", "int i = threadIdx.y * blockDim.x + threadIdx.x;")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cuda.RawKernel(source, "add", backend="cpu")((2,), (8, 8), (a, c, 64))  # (square: a transpose may mean it)
        cuda.RawKernel(flat, "add", backend="cpu")((1,), (32,), (a, c, 32))


BLOCK_STEP = r"""
extern "C" __global__ void hist(const int* v, int* bins, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x)   // LOOP
        atomicAdd(&bins[v[i]], 1);
}
extern "C" __global__ void scale(float* y, int n) {
    int stride = blockDim.x;
    for (int i = threadIdx.x + blockIdx.x * blockDim.x; i < n; i += stride) y[i] *= 2.0f;   // SCALE
}
"""


def test_a_grid_stride_loop_that_steps_by_one_block_warns_at_launch_even_with_atomics():
    """Block b starts at b * blockDim.x and steps by blockDim.x: it goes over every later block's elements. With
    atomics nothing is a race (the counts are just too high): the launch warns; a one-block launch or a step of the
    whole grid does not. A plain update through a step variable (`int stride = blockDim.x;`) is a race, whose hint
    says the same."""
    module = cuda.RawModule(code=BLOCK_STEP, backend="cpu")
    v, bins = np.zeros(1000, np.int32), np.zeros(4, np.int32)
    with pytest.warns(cuda.KernelWarning, match=rf"kernel 'hist', line {line_of('LOOP', BLOCK_STEP)}: the loop starts i "
                                                 r"at the thread's index in the whole grid .* steps by one block "
                                                 r"\(`i \+= blockDim\.x`\), and this launch has 4 blocks along x.*"
                                                 r"`i \+= blockDim\.x \* gridDim\.x`"):
        module.get_function("hist")((4,), (128,), (v, bins, 1000))
    assert bins[0] > 1000
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bins[:] = 0
        module.get_function("hist")((1,), (128,), (v, bins, 1000))
        assert bins[0] == 1000
        fixed = BLOCK_STEP.replace("i += blockDim.x)", "i += blockDim.x * gridDim.x)")
        cuda.RawKernel(fixed, "hist", backend="cpu")((4,), (128,), (v, bins, 1000))
    with pytest.warns(cuda.KernelWarning, match=r"steps by one block \(`i \+= stride`\)"), \
            pytest.raises(cuda.KernelError, match=r"updates y\[128\]") as info:
        cuda.RawKernel(BLOCK_STEP, "scale", backend="cpu", sanitize=True)((4,), (128,), (np.ones(1000, np.float32), 1000))
    assert "this grid-stride loop steps by blockDim.x only" in str(info.value)
    # the global index spelled with a variable for threadIdx.x, or kept in one (red team 12-07: no warning)
    for spelling in ("int t = threadIdx.x;\n    for (int i = blockIdx.x * blockDim.x + t; i < n; i += blockDim.x)",
                     "int gid = blockIdx.x * blockDim.x + threadIdx.x;\n    for (int i = gid; i < n; i += blockDim.x)"):
        bins[:] = 0
        source = BLOCK_STEP.replace("for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x)", spelling)
        with pytest.warns(cuda.KernelWarning, match=r"the loop starts i at the thread's index in the whole grid .* steps "
                                                     r"by one block"):
            cuda.RawKernel(source, "hist", backend="cpu")((4,), (128,), (v, bins, 1000))
        assert bins[0] > 1000


def test_a_block_total_that_every_thread_adds_gets_a_warning():
    """`atomicAdd(out, s[0])` after a reduction, with the `if (t == 0)` before it forgotten: every thread adds the
    block's total (atomics are no race, no access is wrong). A KernelWarning asks which thread should; with a test
    of the thread's index (`if (t == 0)`, `if (!t)`, or one enclosing the call in braces) there is none."""
    source = HALVING_REDUCTION.replace("if (t == 0) atomicAdd(out, s[0]);", "atomicAdd(out, s[0]);   // TOTAL")
    assert source != HALVING_REDUCTION
    x, out = np.ones(256, np.float32), np.zeros(1, np.float32)
    with pytest.warns(cuda.KernelWarning, match=rf"kernel 'block_sum', line {line_of('TOTAL', source)}: `atomicAdd\(out, "
                                                 r"s\[0\]\)` is made by more than one thread of each block \(no test "
                                                 r"before it keeps it to one of the 128\): s\[0\] is one value for the "
                                                 r"whole block"):
        cuda.RawKernel(source, "block_sum", backend="cpu")((2,), (128,), (x, out, np.int32(256)), shared_mem=512)
    assert out[0] == 256 * 128
    copied = source.replace("atomicAdd(out, s[0]);   // TOTAL", "float total = s[0];\n    atomicAdd(out, total);")
    with pytest.warns(cuda.KernelWarning, match=r"`atomicAdd\(out, total\)` is made by more than one thread of each "
                                                 r"block .*: total \(= s\[0\]\) is one value for the whole block"):
        cuda.RawKernel(copied, "block_sum", backend="cpu")((2,), (128,), (x, out, np.int32(256)), shared_mem=512)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for guarded in ("if (!t) atomicAdd(out, s[0]);", "if (threadIdx.x == 0) {\n        atomicAdd(out, s[0]);\n    }",
                        "float total = 0.0f;\n    if (t == 0) total = s[0];\n    atomicAdd(out, total);"):
            out[0] = 0
            cuda.RawKernel(source.replace("atomicAdd(out, s[0]);   // TOTAL", guarded), "block_sum", backend="cpu")(
                (2,), (128,), (x, out, np.int32(256)), shared_mem=512)
            assert out[0] == 256
        # a __shared__ scalar that holds the block's total, added by every thread (red team 12-07: only arrays warned)
        scalar = source.replace("atomicAdd(out, s[0]);   // TOTAL", "__shared__ float total;\n    if (t == 0) total = s[0];\n"
                                "    __syncthreads();\n    atomicAdd(out, total);")
        out[0] = 0
        with pytest.warns(cuda.KernelWarning, match=r"`atomicAdd\(out, total\)` is made by more than one thread of each "
                                                     r"block .*: total is one value for the whole block"):
            cuda.RawKernel(scalar, "block_sum", backend="cpu")((2,), (128,), (x, out, np.int32(256)), shared_mem=512)
        # the total cast or scaled as it is added (`(double)s[0]`, a mean `s[0] / n`): still one value for the block
        # (red team 12-07b: a 64-bit counter's cast hid it); scaled by what each thread has, it is not
        for added in ("atomicAdd(out, (float)s[0] / n);", "atomicAdd(out, static_cast<float>(s[0]));",
                      "atomicAdd(out, 0.5f * s[0]);"):
            out[0] = 0
            with pytest.warns(cuda.KernelWarning, match=r"is made by more than one thread of each block .*: s\[0\] is one "
                                                         r"value for the whole block"):
                cuda.RawKernel(source.replace("atomicAdd(out, s[0]);   // TOTAL", added), "block_sum", backend="cpu")(
                    (2,), (128,), (x, out, np.int32(256)), shared_mem=512)
        out[0] = 0
        cuda.RawKernel(source.replace("atomicAdd(out, s[0]);   // TOTAL", "atomicAdd(out, s[0] * x[t] / 128.0f);"),
                       "block_sum", backend="cpu")((2,), (128,), (x, out, np.int32(256)), shared_mem=512)
        assert out[0] == 256
        # a maximum made again changes nothing (the largest block total, 128, either way): no warning (red team 12-07)
        out[0] = 0
        cuda.RawKernel(source.replace("atomicAdd(out, s[0]);   // TOTAL", "atomicMax((int*)out, __float_as_int(s[0]));"),
                       "block_sum", backend="cpu")((2,), (128,), (x, out, np.int32(256)), shared_mem=512)
        assert out[0] == 128
    # one thread of each warp (a lane's test, `lane = t % 32` or `t & 31`): 4 warps add it, unless the block is one warp
    for per_warp in ("int lane = t % 32;\n    if (lane == 0) atomicAdd(out, s[0]);", "if ((t & 31) == 0) atomicAdd(out, s[0]);"):
        out[0] = 0
        with pytest.warns(cuda.KernelWarning, match=r"is made by one thread of each warp .* each of the 4 warps of a "
                                                     r"128-thread block makes it: s\[0\] is one value .* counts it 4 "
                                                     r"times .*\(`threadIdx\.x == 0`\), not its lane"):
            cuda.RawKernel(source.replace("atomicAdd(out, s[0]);   // TOTAL", per_warp), "block_sum", backend="cpu")(
                (2,), (128,), (x, out, np.int32(256)), shared_mem=512)
        assert out[0] == 4 * 256
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for guarded in ("int lane = t % 32, warp = t / 32;\n    if (warp == 0 && lane == 0) atomicAdd(out, s[0]);",
                        "int lane = t & 31;\n    if (t < 32) { if (!lane) atomicAdd(out, s[0]); }"):
            out[0] = 0
            cuda.RawKernel(source.replace("atomicAdd(out, s[0]);   // TOTAL", guarded), "block_sum", backend="cpu")(
                (2,), (128,), (x, out, np.int32(256)), shared_mem=512)
            assert out[0] == 256
        out[0] = 0
        cuda.RawKernel(source.replace("atomicAdd(out, s[0]);   // TOTAL", "if (t % 32 == 0) atomicAdd(out, s[0]);"),
                       "block_sum", backend="cpu")((8,), (32,), (x, out, np.int32(256)), shared_mem=512)
        assert out[0] == 256  # (a block of one warp)


def test_a_kernel_on_one_line_has_its_hint_from_the_access_not_the_declaration():
    """`__shared__ float t[4][4]; t[threadIdx.y][threadIdx.x] = 1;` on one line: the hint is about the
    access's threadIdx.x, not the declaration's 4 (which said "4 is 4 for every thread")."""
    source = (r'extern "C" __global__ void k(float* out) { __shared__ float t[4][4]; t[threadIdx.y][threadIdx.x] = 1; '
              r'__syncthreads(); out[threadIdx.y * 8 + threadIdx.x] = t[threadIdx.y][threadIdx.x]; }')
    with pytest.raises(cuda.KernelError, match=r"accessed t\[\.\.\.\]\[4\]") as info:
        kernel("k", source)((1,), (8, 4), (np.zeros(64, np.float32),))
    assert "if (threadIdx.x < 4)" in str(info.value) and "every thread" not in str(info.value)


def test_an_unwritten_shared_key_is_reported_before_the_collision_it_causes():
    """A rank sort whose keys were stored one place off (`s[t + 1] = x[t]`): thread 0 reads s[0], which no
    thread wrote, and its rank then collides with another thread's store into y. The read is the bug."""
    source = r"""
extern "C" __global__ void rank_sort(const float* x, float* y, int n) {
    __shared__ float s[128];
    int t = threadIdx.x;
    if (t < n) s[t + 1] = x[t];
    __syncthreads();
    if (t < n) {
        float v = s[t];  // KEY
        int r = 0;
        for (int j = 0; j < n; j++)
            if (s[j] < v || (s[j] == v && j < t)) r++;
        y[r] = v;
    }
}
"""
    x = np.random.default_rng(8).permutation(100).astype(np.float32)
    with pytest.raises(cuda.KernelError, match=r"reads shared memory s\[0\], which no thread of block") as info:
        kernel("rank_sort", source)((1,), (128,), (x, np.zeros(100, np.float32), np.int32(100)))
    assert info.value.line == line_of("KEY", source)


FLAG_HANDOVER = r"""
extern "C" __global__ void handover(const float* x, float* y, int everyone) {
    __shared__ float buf[32];
    __shared__ volatile int ready;
    if (threadIdx.x == 0) ready = 0;
    __syncthreads();
    if (threadIdx.x < 32 && (everyone || threadIdx.x == 0)) {
        for (int j = everyone ? threadIdx.x : 0; j < (everyone ? threadIdx.x + 1 : 32); ++j) buf[j] = 2.0f * x[j];
        __threadfence_block();
        if (threadIdx.x == 0) ready = 1;                            // SET
    } else if (threadIdx.x >= 32) {
        while (!ready) { } y[threadIdx.x - 32] = buf[threadIdx.x - 32];   // READ
    }
}
"""


def test_a_flag_hands_over_only_its_setters_stores_after_a_fence():
    # One thread stores the whole buffer, fences, sets the flag: the waiting threads read it, no report. With
    # other threads storing too (the flag is set by thread 0 alone), or without the fence, the read races,
    # and the hint says why the flag did not order it (the wait and the read on one line here).
    x, y = np.arange(32, dtype=np.float32), np.zeros(32, np.float32)
    kernel("handover", FLAG_HANDOVER, sanitize=True)((1,), (64,), (x, y, 0))
    np.testing.assert_array_equal(y, 2 * x)
    read, set_ = line_of("READ", FLAG_HANDOVER), line_of("SET", FLAG_HANDOVER)
    with pytest.raises(cuda.KernelError) as info:
        kernel("handover", FLAG_HANDOVER, sanitize=True)((1,), (64,), (x, y, 1))
    assert info.value.line == read
    assert (f"hint: The reading thread waited for `ready` (line {read}), which line {set_} sets after a fence, but a "
            "flag hands over only the stores of the thread that sets it") in str(info.value)
    no_fence = FLAG_HANDOVER.replace("        __threadfence_block();\n", "")
    with pytest.raises(cuda.KernelError) as info:
        kernel("handover", no_fence, sanitize=True)((1,), (64,), (x, y, 0))
    assert (f"hint: The reading thread waited for `ready` (line {read - 1}), which line {set_ - 1} sets: a flag hands "
            "over only what was written before a fence") in str(info.value)


INTO = r"""
extern "C" __global__ void add_into(const float* a, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] += a[i];  // READ: c never cleared
}
extern "C" __global__ void add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
extern "C" __global__ void histogram(const int* x, unsigned int* bins, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&bins[x[i]], 1u);  // ATOMIC: bins never cleared
}
extern "C" __global__ void scale4(const float4* a, float4* out) {
    int i = threadIdx.x;
    float4 v = out[i];  // VECTOR
    out[i] = make_float4(v.x * a[i].x, v.y * a[i].y, v.z * a[i].z, 0.0f);
}
"""


def test_xp_empty_holds_garbage_as_cupy_empty_does_and_its_reads_are_initchecks():
    xp = cuda.xp
    # NumPy's own, but a new array's bytes are 0xFE (a large np.empty is zeroed pages: c[i] += ... would pass)
    assert xp.float32 is np.float32 and xp.asarray is np.asarray and "empty" in dir(xp)
    assert (xp.empty(4, xp.float32).view(np.uint32) == 0xFEFEFEFE).all()
    assert (xp.empty_like(np.zeros((2, 3), np.int32)) == -16843010).all()
    assert (xp.empty(3, np.dtype([("x", np.float32), ("k", np.int32)])).view(np.uint8) == 0xFE).all()
    assert xp.empty(3, object).tolist() == [None] * 3 and xp.empty(0, np.float32).size == 0
    a = np.arange(1, 301, dtype=np.float32)
    add_into = kernel("add_into", INTO)
    with pytest.raises(cuda.KernelError) as info:
        add_into((2,), (256,), (a, xp.empty_like(a), np.int32(300)))
    message = str(info.value)
    assert "reads c[0], which holds -1.6947e38: the bytes 0xFE that course.cuda.xp.empty fills" in message
    assert "compute-sanitizer's initcheck" in message and "`c.fill(0)`" in message and "rather than `c[i] += ...`" in message
    assert info.value.line == line_of("READ: c never cleared", INTO) and info.value.thread == (0, 0, 0)
    plain = xp.empty_like(a)  # unchecked, the garbage is there to see, as on a GPU
    kernel("add_into", INTO, sanitize=False)((2,), (256,), (a, plain, np.int32(300)))
    assert (plain < -1e38).all()
    # the twins: an output from xp.zeros, one the host filled, a view of one filled, np.empty (unknown), writes only
    for c in (xp.zeros_like(a), xp.full_like(a, 2.0), np.empty_like(a)):
        c[:] = 2.0
        add_into((2,), (256,), (a, c, np.int32(300)))
        assert np.array_equal(c, a + 2)
    c = xp.empty(400, np.float32)
    c[50:350] = 0
    add_into((2,), (256,), (a, c[50:350], np.int32(300)))
    assert np.array_equal(c[50:350], a)
    with pytest.raises(cuda.KernelError, match=r"reads c\[0\], which holds -1.6947e38"):
        add_into((2,), (256,), (a, c[10:310], np.int32(300)))  # (a view of the unwritten part)
    c = xp.empty_like(a)
    kernel("add", INTO)((2,), (256,), (a, a, c, np.int32(300)))
    assert np.array_equal(c, 2 * a)
    b = xp.empty_like(a)
    b[:299] = 1.0  # an input the host filled but for its last element
    with pytest.raises(cuda.KernelError, match=r"(?s)reads b\[299\], which holds -1\.6947e38.*`b` is only read: give it its "
                                               r"values before the launch"):
        kernel("add", INTO)((2,), (256,), (a, b, c, np.int32(300)))
    # an atomic reads the old value: a histogram's bins never cleared
    x = np.random.default_rng(0).integers(0, 16, 500).astype(np.int32)
    with pytest.raises(cuda.KernelError) as info:
        kernel("histogram", INTO)((2,), (256,), (x, xp.empty(16, np.uint32), np.int32(500)))
    assert re.search(r"calls atomicAdd on bins\[\d+\], whose old value is 4278124286 \(0xFEFEFEFE\)", str(info.value))
    assert "`bins.fill(0)`" in str(info.value) and info.value.line == line_of("ATOMIC: bins never cleared", INTO)
    bins = xp.zeros(16, np.uint32)
    kernel("histogram", INTO)((2,), (256,), (x, bins, np.int32(500)))
    assert np.array_equal(bins, np.bincount(x, minlength=16))
    # a vector: reported when no part of it was written; a lane the host left unset (padding) is no read of garbage
    scale4 = kernel("scale4", INTO)
    out = xp.empty((8, 4), np.float32)
    out[:, :3] = 2.0
    scale4((1,), (8,), (np.ones((8, 4), np.float32), out))
    assert (out[:, :3] == 2).all()
    out[5] = xp.empty(4, np.float32)
    with pytest.raises(cuda.KernelError, match=r"reads out\[5\], every byte of which is 0xFE: the bytes") as info:
        scale4((1,), (8,), (np.ones((8, 4), np.float32), out))
    assert info.value.line == line_of("VECTOR", INTO) and info.value.thread == (5, 0, 0)


NARROW_INTO = r"""
#include <cuda_fp16.h>
extern "C" __global__ void blend(const uchar4* src, uchar4* dst, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        uchar4 s = src[i], d = dst[i];  // BLEND: dst never written
        dst[i] = make_uchar4((s.x + d.x) / 2, (s.y + d.y) / 2, (s.z + d.z) / 2, 255);
    }
}
extern "C" __global__ void hacc(const __half* x, __half* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = __hadd(y[i], x[i]);  // HALF: y never cleared
}
extern "C" __global__ void count(const short* x, short* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] += x[i];  // SHORT
}
extern "C" __global__ void write_then_read(unsigned char* out, int* seen, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 254;
    __syncthreads();
    if (i < n) seen[i] = out[(i + 1) % n];
}
"""


def test_initcheck_reads_of_one_and_two_byte_elements_that_nothing_wrote():
    """uchar4, __half, short: their fill (0xFE, 0xFEFE) is a value real data holds (a pixel of 254), so such a
    read is reported only in an array that held nothing but the fill when the launch began, at an element no
    thread of the launch wrote."""
    xp = cuda.xp
    image = np.random.default_rng(1).integers(0, 256, (300, 4)).astype(np.uint8)
    blend = kernel("blend", NARROW_INTO)
    with pytest.raises(cuda.KernelError) as info:
        blend((2,), (256,), (image, xp.empty_like(image), np.int32(300)))
    assert "reads dst[0], every byte of which is 0xFE: the bytes 0xFE that course.cuda.xp.empty fills" in str(info.value)
    assert info.value.line == line_of("BLEND: dst never written", NARROW_INTO) and info.value.thread == (0, 0, 0)
    x = np.linspace(-1, 1, 300).astype(np.float16)
    with pytest.raises(cuda.KernelError) as info:
        kernel("hacc", NARROW_INTO)((2,), (256,), (x, xp.empty(300, np.float16), np.int32(300)))
    assert "reads y[0], which holds the bits 0xFEFE (a NaN as a __half" in str(info.value)
    assert info.value.line == line_of("HALF: y never cleared", NARROW_INTO)
    with pytest.raises(cuda.KernelError, match=r"reads out\[0\], which holds -258 \(0xFEFE\)"):
        kernel("count", NARROW_INTO)((2,), (256,), (np.ones(300, np.int16), xp.empty(300, np.int16), np.int32(300)))
    # the twins: 254 is a pixel here, not garbage. An array the host wrote (even all of it 254 but one element), one
    # a kernel wrote in this launch, one an earlier launch wrote: none reported
    dst = xp.empty_like(image)
    dst[:] = 254
    dst[7, 1] = 3
    blend((2,), (256,), (image, dst, np.int32(300)))
    assert (dst[:, 3] == 255).all() and dst[7, 1] == (image[7, 1] + 3) // 2
    out, seen = xp.empty(200, np.uint8), np.zeros(200, np.int32)
    kernel("write_then_read", NARROW_INTO)((1,), (200,), (out, seen, np.int32(200)))
    assert (seen == 254).all()
    y = xp.empty(300, np.float16)
    kernel("hacc", NARROW_INTO, sanitize=False)((2,), (256,), (x, y, np.int32(300)))  # garbage in: NaNs, unchecked
    y[:] = 0
    kernel("hacc", NARROW_INTO)((2,), (256,), (x, y, np.int32(300)))
    assert np.array_equal(y, x)
    part = xp.empty(300, np.int16)
    part[:299] = 1  # all but the last: the array is not all fill, so its last element (-258 to the check) passes
    kernel("count", NARROW_INTO)((2,), (256,), (np.ones(300, np.int16), part, np.int32(300)))
    assert (part[:299] == 2).all()


SPARSE_SOLVE = r"""
extern "C" __global__ void solve_level(const int* rowptr, const int* cols, const float* vals, const float* b,
                                       float* x, const int* rows, int count) {
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= count) return;
    int i = rows[k];
    float s = b[i], d = 1.0f;
    for (int p = rowptr[i]; p <= rowptr[i + 1]; ++p) {   // ROW: one entry too many
        int j = cols[p];
        if (j < i) s -= vals[p] * x[j];                  // READ
        else if (j == i) d = vals[p];
    }
    x[i] = s / d;
}
"""


def test_an_initcheck_read_through_a_rows_loop_that_runs_one_entry_past_the_row_names_the_loop():
    """A sparse triangular solve by levels whose row loop runs while `p <= rowptr[i + 1]`: the extra pass reads the
    next row's first entry, whose column points at an x not solved yet. The sanitized run meets that read first: the
    hint is the loop's `<`, not 'give x its starting values' (zeros would hide the bug); with `<` the solve is right."""
    rowptr = np.array([0, 1, 3, 4, 6], np.int32)  # rows: [0], [0, 1], [2], [1, 3]; levels {0, 2}, {1}, {3}
    cols, vals = np.array([0, 0, 1, 2, 1, 3], np.int32), np.array([2, 1, 2, 2, 1, 2], np.float32)
    b, levels = np.ones(4, np.float32), ([0, 2], [1], [3])

    def solve(source):
        x = cuda.xp.empty(4, np.float32)
        for rows in levels:
            cuda.RawKernel(source, "solve_level", backend="cpu", sanitize=True)(
                (1,), (32,), (rowptr, cols, vals, b, x, np.array(rows, np.int32), len(rows)))
        return x

    with pytest.raises(cuda.KernelError, match=r"reads x\[1\], which holds -1\.6947e38") as info:
        solve(SPARSE_SOLVE)
    assert info.value.line == line_of("READ", SPARSE_SOLVE)
    assert (f"hint: The loop at line {line_of('ROW', SPARSE_SOLVE)} goes on while `p <= rowptr[i + 1]`" in str(info.value)
            and "Compare with <: `p < rowptr[i + 1]`" in str(info.value) and "xp.zeros" not in str(info.value))
    dense = np.zeros((4, 4), np.float32)
    for i in range(4):
        dense[i, cols[rowptr[i]:rowptr[i + 1]]] = vals[rowptr[i]:rowptr[i + 1]]
    np.testing.assert_allclose(solve(SPARSE_SOLVE.replace("p <= rowptr", "p < rowptr")), np.linalg.solve(dense, b),
                               rtol=1e-6)


def test_a_read_of_a_heap_element_nothing_stored_is_an_initcheck_too():
    source = r"""
    struct Counter { int hits; float total; };
    extern "C" __global__ void partial_fill(float* out, int n, int all) {
        float* buf = (float*)malloc(n * sizeof(float));  // MALLOC
        for (int j = 0; j < n - 1 + all; j++) buf[j] = j;
        float s = 0.0f;
        for (int j = 0; j < n; j++) s += buf[j];  // SUM
        out[threadIdx.x] = s;
        free(buf);
    }
    extern "C" __global__ void count(const float* x, int* out, int zeroed) {
        Counter* c = zeroed ? new Counter() : new Counter;
        c->hits += x[threadIdx.x] > 0.5f;  // HITS
        out[threadIdx.x] = c->hits;
        delete c;
    }"""
    out = np.zeros(4, np.float32)
    with pytest.raises(cuda.KernelError) as info:
        kernel("partial_fill", source)((1,), (4,), (out, np.int32(8), np.int32(0)))
    message = str(info.value)
    assert (f"reads element 7 (4 bytes each) of the 32-byte block that malloc or new made at line "
            f"{line_of('MALLOC', source)}, which holds -1.6947e38") in message
    assert "`new float[n]()`" in message and info.value.line == line_of("SUM", source)
    kernel("partial_fill", source)((1,), (4,), (out, np.int32(8), np.int32(1)))
    assert (out == 28).all()
    x = np.linspace(0, 1, 4, dtype=np.float32)
    with pytest.raises(cuda.KernelError, match=r"reads element 0 \(4 bytes each\) of the 8-byte block .* which holds "
                                               r"-16843010") as info:
        kernel("count", source)((1,), (4,), (x, np.zeros(4, np.int32), np.int32(0)))
    assert info.value.line == line_of("HITS", source)
    hits = np.zeros(4, np.int32)
    kernel("count", source)((1,), (4,), (x, hits, np.int32(1)))
    assert list(hits) == [0, 0, 1, 1]


HELPER_LOCK = r"""
__device__ void acquire(int* m) { while (atomicCAS(m, 0, 1) != 0) { } FENCE }
__device__ void release(int* m) { FENCE atomicExch(m, 0); }
extern "C" __global__ void guarded(const float* x, float* total, int* mutex) {
    __shared__ float part;
    if (threadIdx.x == 0) part = 0;
    __syncthreads();
    atomicAdd(&part, x[blockIdx.x * blockDim.x + threadIdx.x]);
    __syncthreads();
    if (threadIdx.x == 0) {
        BODY
    }
}
"""


@pytest.mark.parametrize("fence, body, hint", [
    ("__threadfence();", "acquire(mutex); total[0] += part; release(mutex);", None),
    ("", "acquire(mutex); total[0] += part; release(mutex);", r"inside a lock .* Put __threadfence\(\) before the atomicExch"),
    ("__threadfence();", "acquire(mutex); release(mutex); total[0] += part;",
     r"Every block adds its result into `total\[0\]` with a plain `\+=`.* `atomicAdd\(&total\[0\], part\);`"),
])
def test_a_lock_taken_through_helpers_is_seen_around_the_update_it_guards(fence, body, hint):
    """A lock taken and released by helpers (`acquire(m); total += x; release(m);`) orders the update when it fences;
    without the fences the hint says so. An update after the release is outside the lock: its hint is atomicAdd's,
    not the lock's (which was given wherever the source had a lock)."""
    code = HELPER_LOCK.replace("FENCE", fence).replace("BODY", body.replace("; ", ";\n        "))  # a statement a line
    x, total = np.arange(256, dtype=np.float32), np.zeros(1, np.float32)
    run = kernel("guarded", code, sanitize=True)
    if hint is None:
        run(8, 32, (x, total, np.zeros(1, np.int32)))
        assert total[0] == x.sum()
        return
    with pytest.raises(cuda.KernelError, match=r"updates total\[0\]") as info:
        run(8, 32, (x, total, np.zeros(1, np.int32)))
    assert re.search(hint, str(info.value), re.S)
    assert ("inside a lock" in str(info.value)) == ("inside a lock" in hint)



EVERY_THREAD_COUNTS = r"""
extern "C" __global__ void count_in_turn(int* lock, int* total) {
    while (atomicCAS(lock, 0, 1) != 0) { }
    FENCE
    total[0] += 1;   // COUNT
    FENCE
    atomicExch(lock, 0);
}
"""


def test_a_lock_that_every_thread_takes_gets_the_locks_hint_not_the_unread_threadidx_one():
    """Every thread adding 1 in turn never reads threadIdx, by design: without the fences the hint is the lock's
    (not "threads along x compute the same index"), and with them the count is right and nothing is reported."""
    with pytest.raises(cuda.KernelError, match=r"updates total\[0\]") as info:
        kernel("count_in_turn", EVERY_THREAD_COUNTS.replace("FENCE", ""), sanitize=True)(
            2, 32, (np.zeros(1, np.int32), np.zeros(1, np.int32)))
    assert info.value.line == line_of("COUNT", EVERY_THREAD_COUNTS)
    assert "inside a lock" in str(info.value) and "never reads" not in str(info.value)
    total = np.zeros(1, np.int32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cuda.KernelWarning)  # (all 32 threads of a block do the same work: said)
        kernel("count_in_turn", EVERY_THREAD_COUNTS.replace("FENCE", "__threadfence();"), sanitize=True)(
            2, 32, (np.zeros(1, np.int32), total))
    assert total[0] == 64


BINDINGS = r"""
struct P { float x, y; };
extern "C" __global__ void bindings(const float* a, float* out, int mode) {
    __shared__ P ps[32];
    int t = threadIdx.x;
    if (mode == 0) { auto& [x, y] = ps[t]; x = a[t]; y = 0.0f; }         // BIND
    if (mode >= 1) { P* p = &ps[t]; p->x = a[t]; p->y = 0.0f; }           // POINT
    SYNC
    float total = 0.0f;
    if (mode == 2) for (auto [x, y] : ps) total += x + y;                 // EACH
    out[t] = mode == 0 ? ps[31 - t].x : mode == 1 ? (&ps[0] + (31 - t))->x : total - 496.0f + a[31 - t];  // READ
}
"""


@pytest.mark.parametrize("mode", [0, 1, 2])
def test_structured_bindings_and_members_of_a_moved_pointer_are_accesses(mode):
    """`auto& [x, y] = ps[t]; x = v;` writes ps[t].x: it was no access, so a correct kernel's later read of ps[31 - t].x
    was "a read of shared memory no thread has written"; `(&ps[0] + k)->x` read ps[k].x unseen (no race), and so
    did `for (auto [x, y] : ps)`, each element's copy."""
    a = np.arange(32, dtype=np.float32)
    out = np.zeros(32, np.float32)
    kernel("bindings", BINDINGS.replace("SYNC", "__syncthreads();"), sanitize=True)(1, 32, (a, out, np.int32(mode)))
    np.testing.assert_array_equal(out, a[::-1])
    with pytest.raises(cuda.KernelError, match=r"data race on shared memory ps\[\d+\]") as info:
        kernel("bindings", BINDINGS.replace("SYNC", ""), sanitize=True)(1, 32, (a, out, np.int32(mode)))
    assert f"line {line_of(('READ', 'READ', 'EACH')[mode], BINDINGS)}" in str(info.value)
    assert f"line {line_of('BIND' if mode == 0 else 'POINT', BINDINGS)}" in str(info.value)


def test_a_race_on_a_global_array_between_lanes_of_one_warp_says_syncwarp_is_enough():
    """Threads that swap neighbours through a global array with no barrier: the hint adds __syncwarp() as enough
    when the two threads are lanes of one warp (as it does for shared memory), not when they are in two warps."""
    source = r"""
extern "C" __global__ void swap(float* g, float* out) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    g[t] = t * 1.0f;
    SYNC
    out[t] = g[t ^ PARTNER];
}"""
    g, out = np.zeros(64, np.float32), np.zeros(64, np.float32)
    with pytest.raises(cuda.KernelError, match=r"(?s)writes g\[1\], which thread \(0, 0, 0\) read.*hint: Add "
                                               r"__syncthreads\(\) between line 4 .* lanes of one warp, __syncwarp\(\) "
                                               r"is enough\."):
        cuda.RawKernel(source.replace("SYNC", "").replace("PARTNER", "1"), "swap", backend="cpu")((1,), (64,), (g, out))
    with pytest.raises(cuda.KernelError, match=r"Add __syncthreads\(\) between line 4") as info:
        cuda.RawKernel(source.replace("SYNC", "").replace("PARTNER", "32"), "swap", backend="cpu")((1,), (64,), (g, out))
    assert "__syncwarp" not in str(info.value)
    cuda.RawKernel(source.replace("SYNC", "__syncwarp();").replace("PARTNER", "1"), "swap", backend="cpu")(
        (1,), (64,), (g, out))
    assert (out == np.arange(64) ^ 1).all()
