"""Notebook 06's exercise checks: the answer passes, the stub is "not attempted", the usual mistake fails."""

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import ndimage

from course import checks, sharpen
from course.exercises import image_sharpening as ex

ROOT = Path(__file__).resolve().parent.parent

CLAMPED = r"""
extern "C" __global__ void sharpen_clamped(const unsigned char* image, unsigned char* out,
                                           const float* weights, int height, int width) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    float sum = 0.0f;
    for (int dy = -1; dy <= 1; ++dy) {
        int yy = min(max(y + dy, 0), height - 1);
        for (int dx = -1; dx <= 1; ++dx) {
            int xx = min(max(x + dx, 0), width - 1);
            sum += weights[(dy + 1) * 3 + (dx + 1)] * image[yy * width + xx];
        }
    }
    out[y * width + x] = (unsigned char)rintf(fminf(fmaxf(sum, 0.0f), 255.0f));
}
"""
LOAD = """    for (int ty = threadIdx.y; ty < tile_height; ty += blockDim.y) {
        int yy = min(max(y0 + ty, 0), height - 1);
        for (int tx = threadIdx.x; tx < tile_width; tx += blockDim.x) {
            int xx = min(max(x0 + tx, 0), width - 1);
            tile[ty * tile_width + tx] = image[yy * width + xx];
        }
    }
"""
TILE = r"""
extern "C" __global__ void sharpen_tile(const unsigned char* image, unsigned char* out,
                                        const float* weights, int height, int width) {
    extern __shared__ float tile[];
    int tile_width = blockDim.x + 2, tile_height = blockDim.y + 2;
    int x0 = blockIdx.x * blockDim.x - 1, y0 = blockIdx.y * blockDim.y - 1;
""" + LOAD + r"""    __syncthreads();
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    float sum = 0.0f;
    for (int dy = 0; dy < 3; ++dy)
        for (int dx = 0; dx < 3; ++dx)
            sum += weights[dy * 3 + dx] * tile[(threadIdx.y + dy) * tile_width + threadIdx.x + dx];
    out[y * width + x] = (unsigned char)rintf(fminf(fmaxf(sum, 0.0f), 255.0f));
}
"""


def seed_fixed(image, kernel):
    k = np.asarray(kernel)
    r = k.shape[0] // 2
    out = np.zeros(image.shape, np.uint8)
    padded = np.pad(image, r, mode="edge").astype(np.int64)
    for i in range(image.shape[0]):
        for j in range(image.shape[1]):
            out[i, j] = np.clip(np.sum(k * padded[i:i + k.shape[0], j:j + k.shape[1]]), 0, 255)
    return out


def slices(image, kernel):
    kh, kw = kernel.shape
    h, w = image.shape
    padded = np.pad(image.astype(np.float64), ((kh // 2,) * 2, (kw // 2,) * 2), mode="edge")
    out = sum(kernel[dy, dx] * padded[dy:dy + h, dx:dx + w] for dy in range(kh) for dx in range(kw))
    return sharpen.to_uint8(out)


def unsharp(image, sigma, amount):
    pixels = image.astype(np.float64)
    kernel = sharpen.gaussian_kernel(sigma)
    blurred = ndimage.correlate(pixels, kernel[:, :, None] if image.ndim == 3 else kernel, mode="nearest")
    return np.rint(np.clip(pixels + amount * (pixels - blurred), 0, 255)).astype(np.uint8)


def stub(*args):
    raise NotImplementedError


RIGHT = [(ex.check_seed_fixed, seed_fixed, stub), (ex.check_slices, slices, stub),
         (ex.check_clamped, CLAMPED, ex.CLAMPED_STUB), (ex.check_tile, TILE, ex.TILE_STUB),
         (ex.check_unsharp, unsharp, stub)]


@pytest.mark.parametrize("check,answer,untouched", RIGHT, ids=lambda v: getattr(v, "__name__", "x"))
def test_the_answer_passes_and_the_stub_is_not_attempted(capsys, check, answer, untouched):
    assert check(answer), capsys.readouterr().out
    assert not check(untouched)
    out = capsys.readouterr().out
    assert "not attempted yet" in out and "💡" not in out, out


def test_the_notebook_shows_the_stubs_the_checks_know():
    cells = ["".join(c["source"]) for c in json.loads((ROOT / "notebooks/06_image_sharpening.ipynb").read_text())["cells"]
             if "exercise" in c.get("metadata", {}).get("tags", [])]
    shown = [c.split('r"""', 1)[1].split('"""', 1)[0] for c in cells if 'r"""' in c]
    assert {ex._strip(s) for s in shown} == {ex._strip(ex.CLAMPED_STUB), ex._strip(ex.TILE_STUB)}


def test_every_exercise_has_a_nudge_then_a_method(capsys):
    for check, _, untouched in RIGHT:
        check(untouched)
    for name in ("sharpen_seed_fixed", "my_sharpen_slices", "sharpen_clamped", "sharpen_tile", "my_unsharp_mask"):
        assert "hint 1 of 2" in checks.hint(name) and "hint 2 of 2" in checks.hint(name)
    capsys.readouterr()


# --- the most common wrong answer of each exercise ------------------------------------------

def test_casting_without_clipping_is_diagnosed_as_wrap_around(capsys):
    def cast_only(image, kernel):  # the sum stored into uint8 without a clip: wraps modulo 256
        return np.mod(ex._exact_sums(image, kernel), 256).astype(np.uint8)

    assert not ex.check_seed_fixed(cast_only)
    assert "it wrapped around. Clip to [0, 255]" in capsys.readouterr().out


def test_zero_padding_is_diagnosed_at_the_border(capsys):
    def zero_pad(image, kernel):
        kh, kw = kernel.shape
        h, w = image.shape
        padded = np.pad(image.astype(np.float64), ((kh // 2,) * 2, (kw // 2,) * 2))  # constant 0
        return sharpen.to_uint8(sum(kernel[dy, dx] * padded[dy:dy + h, dx:dx + w] for dy in range(kh) for dx in range(kw)))

    assert not ex.check_slices(zero_pad)
    out = capsys.readouterr().out
    assert "on the border" in out and "every inside pixel is right" in out, out


def test_a_kernel_without_its_guard_is_caught_on_the_cpu_backend(capsys):
    assert not ex.check_clamped(CLAMPED.replace("    if (x >= width || y >= height) return;\n", ""))
    out = capsys.readouterr().out  # the CPU backend names the fault (out of bounds, or a write race) and where
    assert "❌ sharpen_clamped" in out and "KernelError" in out and "block (" in out and "out[" in out, out


def test_a_tile_without_its_halo_is_rejected(capsys):
    no_halo = TILE.replace(LOAD, "    tile[(threadIdx.y + 1) * tile_width + threadIdx.x + 1] = image[min((int)(y0 + 1 + threadIdx.y), height - 1) * width + min((int)(x0 + 1 + threadIdx.x), width - 1)];\n")
    assert not ex.check_tile(no_halo)
    out = capsys.readouterr().out  # wrong border values, or the backend's report of unwritten shared memory
    assert "❌ sharpen_tile" in out and ("values differ" in out or "KernelError" in out), out


def test_a_guard_before_the_barrier_is_caught(capsys):
    guard_first = TILE.replace("    __syncthreads();\n    int x", "    int x").replace(
        "    if (x >= width || y >= height) return;\n", "    if (x >= width || y >= height) return;\n    __syncthreads();\n")
    guard_first = guard_first.replace(LOAD, "    if (blockIdx.x * blockDim.x + threadIdx.x >= width) return;\n" + LOAD)
    assert not ex.check_tile(guard_first)
    # Since Volta a barrier waits only for the threads that have not returned, so the block goes on;
    # the returned threads' halo pixels were never loaded, and the report says why.
    out = capsys.readouterr().out
    assert "which no thread of block" in out and "returned at line" in out and "put the return after the barrier" in out


def test_a_tile_kernel_that_reads_global_memory_is_rejected(capsys):
    assert not ex.check_tile(CLAMPED.replace("sharpen_clamped", "sharpen_tile"))
    assert "no __syncthreads()" in capsys.readouterr().out


def test_rounding_the_blur_is_rejected(capsys):
    def round_blur(image, sigma, amount):
        pixels = image.astype(np.float64)
        kernel = sharpen.gaussian_kernel(sigma)
        blurred = np.rint(ndimage.correlate(pixels, kernel[:, :, None] if image.ndim == 3 else kernel, mode="nearest"))
        return np.rint(np.clip(pixels + amount * (pixels - blurred), 0, 255)).astype(np.uint8)

    assert not ex.check_unsharp(round_blur)
    assert "values differ; first at index" in capsys.readouterr().out


def test_a_tile_of_fixed_width_is_told_to_follow_blockdim_not_to_change_the_launch(capsys):
    """probe 14: the emulator's advice ("pass shared_mem=... to the launch") is about a launch the check makes."""
    fixed = TILE.replace("int tile_width = blockDim.x + 2", "int tile_width = 18")
    assert fixed != TILE and not ex.check_tile(fixed)
    out = capsys.readouterr().out
    assert "size and index the tile from blockDim" in out and "pass shared_mem=" not in out, out


def test_the_tile_rules_follow_the_learners_own_names(capsys):
    """The stub names the shared array `tile` and the image `image`; a learner's `cache` and `img` are the same
    kernel (the rule that looked for `tile[` after the barrier rejected it), and reading `img[...]` again after
    the barrier still breaks the rule."""
    renamed = (TILE.replace("tile", "cache").replace("sharpen_cache", "sharpen_tile")
               .replace("const unsigned char* image", "const unsigned char* img").replace("image[", "img["))
    assert ex.check_tile(renamed), capsys.readouterr().out
    rereads = renamed.replace("sum += weights[dy * 3 + dx] * cache[", "sum += weights[dy * 3 + dx] * img[0] * cache[")
    assert not ex.check_tile(rereads)
    assert "reads `img` " in capsys.readouterr().out


def test_a_tile_loaded_by_edge_threads_passes_and_truncating_fails(capsys):
    """The classic tile (every thread its own pixel, the edge threads the halo: `image[` in nine statements, each
    pixel loaded once) was rejected by a count of `image[` in the source; the rule now counts each block's loads in
    the access trace. Truncating the sum instead of rounding passed both stencils (every weight was an integer)."""
    halo = r"""
    int tx = threadIdx.x, ty = threadIdx.y;
    int px = blockIdx.x * blockDim.x + tx, py = blockIdx.y * blockDim.y + ty;
    int cx = min(max(px, 0), width - 1), cy = min(max(py, 0), height - 1);
    int lx = min(max(px - 1, 0), width - 1), rx = min(max(px + 1, 0), width - 1);
    int uy = min(max(py - 1, 0), height - 1), dy_ = min(max(py + 1, 0), height - 1);
    int tw = tile_width, last_x = blockDim.x - 1, last_y = blockDim.y - 1;
    tile[(ty + 1) * tw + tx + 1] = image[cy * width + cx];
    if (tx == 0) tile[(ty + 1) * tw] = image[cy * width + lx];
    if (tx == last_x) tile[(ty + 1) * tw + tx + 2] = image[cy * width + rx];
    if (ty == 0) tile[tx + 1] = image[uy * width + cx];
    if (ty == last_y) tile[(ty + 2) * tw + tx + 1] = image[dy_ * width + cx];
    if (tx == 0 && ty == 0) tile[0] = image[uy * width + lx];
    if (tx == last_x && ty == 0) tile[tx + 2] = image[uy * width + rx];
    if (tx == 0 && ty == last_y) tile[(ty + 2) * tw] = image[dy_ * width + lx];
    if (tx == last_x && ty == last_y) tile[(ty + 2) * tw + tx + 2] = image[dy_ * width + rx];
"""
    classic = TILE.replace(LOAD, halo)
    assert ex.check_tile(classic), capsys.readouterr().out
    truncating = CLAMPED.replace("(unsigned char)rintf(", "(unsigned char)(")
    assert not ex.check_clamped(truncating)
    assert "dtype float64" in capsys.readouterr().out   # (the weights in thirds)


def test_a_tile_index_past_the_end_keeps_the_index_advice_when_blockdim_is_used(capsys):
    """The advice to size the tile from blockDim, not a fixed 16 or 18, was given to a kernel that has no 16 or 18."""
    past = TILE.replace("tile[(threadIdx.y + dy) * tile_width + threadIdx.x + dx]",
                        "tile[(threadIdx.y + dy) * tile_width + threadIdx.x + dx + 1]")
    assert not ex.check_tile(past)
    out = capsys.readouterr().out
    assert "fixed 16 or 18" not in out and "runs past them" in out, out
