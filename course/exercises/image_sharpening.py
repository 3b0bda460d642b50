"""Notebook 06's exercise checks (image sharpening): the seed's bug, slicing, two CUDA C stencils, unsharp masking.

Each ``check_*`` compares the learner's function or CUDA C kernel with ``course.sharpen``'s
reference on crops whose sides are not multiples of 16, prints ✅ or ❌ with a diagnosis (which
pixel, border or inside, expected vs got, which rule) through ``course.checks``, registers the
exercise's hints for ``course.checks.hint()`` and returns a bool. Kernels always run on the CPU
backend, where out-of-bounds accesses, races and uninitialised shared memory are caught, and on
CuPy too when there is a GPU.
"""

from __future__ import annotations

import math
import re

import numpy as np

from course import checks, sharpen
from course.checks import called as _called, verdict as _verdict

__all__ = ["check_seed_fixed", "check_slices", "check_clamped", "check_tile", "check_unsharp",
           "CLAMPED_STUB", "TILE_STUB"]

# The stubs as the notebook shows them: a source equal to one of these (comments and spacing
# aside) is "not attempted yet".
CLAMPED_STUB = r"""
extern "C" __global__ void sharpen_clamped(const unsigned char* image, unsigned char* out,
                                           const float* weights, int height, int width) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
}
"""
TILE_STUB = r"""
extern "C" __global__ void sharpen_tile(const unsigned char* image, unsigned char* out,
                                        const float* weights, int height, int width) {
    extern __shared__ float tile[];
    int tile_width = blockDim.x + 2, tile_height = blockDim.y + 2;
    int x0 = blockIdx.x * blockDim.x - 1, y0 = blockIdx.y * blockDim.y - 1;
}
"""


def _strip(source: str) -> str:
    source = re.sub(r"/\*.*?\*/", " ", source, flags=re.S)
    return " ".join(re.sub(r"//[^\n]*", "", source).split())


def _photo():
    import skimage.data

    return skimage.data.camera()


#: Weights in thirds (summing to 1): every sum is a whole number of thirds, so most are not integers, and none
#: is half-way between two (float32 and float64 round them alike): a kernel that truncates instead of
#: rounding (or floors after adding a fudge) gets many pixels one too low.
THIRDS = np.array([[1, -1, 0], [-2, 5, -1], [0, 1, 0]]) / 3


def _exact_sums(image, kernel):
    """The int64 sums before clipping (what the seed's loop computes before storing uint8)."""
    k = np.asarray(kernel)
    ry, rx = k.shape[0] // 2, k.shape[1] // 2
    padded = np.pad(np.asarray(image).astype(np.float64), ((ry, ry), (rx, rx)), mode="edge")
    return np.einsum("yxij,ij->yx", np.lib.stride_tricks.sliding_window_view(padded, k.shape), k)


def _compare_images(got, image, kernel, expected, *, where: str):
    """A diagnosis for an image that differs from ``expected`` (None when equal)."""
    from course import cuda

    got = cuda.asnumpy(got)
    if got.shape != expected.shape:
        return f"{where}: expected an image of shape {expected.shape}, got {got.shape}."
    if got.dtype != np.uint8:
        return f"{where}: return uint8 pixels (an image), got dtype {got.dtype}; clip to [0, 255] first."
    bad = got != expected
    if not bad.any():
        return None
    y, x = (int(v) for v in np.argwhere(bad)[0])
    sums = _exact_sums(image, kernel)
    ry, rx = np.asarray(kernel).shape[0] // 2, np.asarray(kernel).shape[1] // 2
    h, w = expected.shape
    border = y < ry or x < rx or y >= h - ry or x >= w - rx
    text = (f"{where}: {int(bad.sum())} of {bad.size} pixels differ; first at (row {y}, column {x}), "
            f"{'on the border' if border else 'inside'}: expected {expected[y, x]}, got {got[y, x]}")
    wrapped = (sums < 0) | (sums > 255)
    if np.array_equal(bad, wrapped & bad) and bad.sum() and np.all(got[bad] == np.mod(sums[bad], 256).astype(np.uint8)):
        return text + f" — the exact sum there is {sums[y, x]:.0f}: it wrapped around. Clip to [0, 255] before storing uint8."
    if border and not bad[ry:h - ry, rx:w - rx].any():
        return text + " — every inside pixel is right: look at how you pad (the edge mode) or index near the border."
    return text + "."


# --- Exercise 1: fix the seed's loop -----------------------------------------------------------

def check_seed_fixed(fn) -> bool:
    """``fn(image, kernel)``: the seed's per-pixel loop with its overflow fixed; equal to the reference."""
    image = _photo()
    tilted = np.array([[1, 0, -2], [0, 2, 0], [1, -1, 0]])
    cases = [(image[330:342, 280:292], sharpen.SHARPEN_KERNEL), (image[:5, :9], sharpen.SHARPEN_KERNEL),
             (image[300:309, 250:263], tilted)]

    def judge():
        for img, k in cases:
            got = _called(fn, img.copy(), k.copy())
            problem = _compare_images(got, img, k, sharpen.sharpen_reference(img, k),
                                      where=f"on a {img.shape[0]}×{img.shape[1]} crop")
            if problem:
                return problem
        return None

    return _verdict("sharpen_seed_fixed", [
        "The sum itself is right (int64); the damage happens when it is stored. What happens to −37 in a "
        "uint8 array, and what should a pixel darker than black become?",
        "Keep the loop and its int64 sums; change only what happens between a sum and the uint8 array: every "
        "value must already lie in the range a uint8 can hold when it is stored (darker than black becomes black, "
        "brighter than white becomes white). Either limit each sum as it is stored, or keep a wider output and "
        "limit the whole image once, converting to uint8 at the very end.",
    ], judge, "the seed's loop, now right on every pixel (its speed is still the seed's).")


# --- Exercise 2: sharpen by slicing -------------------------------------------------------------

def check_slices(fn) -> bool:
    """``fn(image, kernel)``: the correlation by whole-image slices, for any odd-sided kernel."""
    image = _photo()
    asymmetric = np.array([[0, 1, 0, 0, 0], [2, -3, 0, 1, 0], [0, 0, 1, 0, -1]])
    laplace5 = -np.ones((5, 5))
    laplace5[2, 2] = 25
    cases = [(image[300:333, 250:267], sharpen.SHARPEN_KERNEL), (image[:7, :5], sharpen.SHARPEN_KERNEL),
             (image[100:121, 200:240], asymmetric), (image[400:431, 10:41], laplace5)]

    def judge():
        for img, k in cases:
            got = _called(fn, img.copy(), k.copy())
            problem = _compare_images(got, img, k, sharpen.sharpen_reference(img, k),
                                      where=f"{img.shape[0]}×{img.shape[1]} image, {k.shape[0]}×{k.shape[1]} kernel")
            if problem:
                return problem
        return None

    return _verdict("my_sharpen_slices", [
        "Each weight kernel[dy, dx] multiplies the whole image shifted by (dy, dx): after padding, that "
        "shifted image is one slice of the padded array. How wide must the padding be for a kh×kw kernel?",
        "Pad once, in float, by half the kernel's height above and below and half its width left and right, "
        "repeating the edge pixels (the reference's border rule). Then one loop over the kernel's positions: each "
        "adds its weight times the padded image's window of the original H×W size that starts at that position. "
        "Convert to pixels only at the end, as the reference does (course.sharpen has the helper).",
    ], judge, "equal to the reference on every pixel, for 3×3, 3×5 and 5×5 kernels.")


# --- Exercise 3: a 3×3 stencil in CUDA C: guard and clamp --------------------------------------

def _run_clamped(kernel, image, weights):
    from course import cuda

    xp = cuda.xp
    image_xp, out_xp = xp.ascontiguousarray(xp.asarray(image)), xp.zeros(image.shape, dtype=xp.uint8)
    height, width = image.shape
    kernel((math.ceil(width / 16), math.ceil(height / 16)), (16, 16),
           (image_xp, out_xp, xp.asarray(weights, dtype=xp.float32).ravel(), height, width))
    return cuda.asnumpy(out_xp)


def check_clamped(source) -> bool:
    """The learner's ``sharpen_clamped`` kernel: one thread per pixel, edge borders by clamping."""
    image = _photo()
    tilted = np.array([[1, 0, -2], [0, 2, 0], [1, -1, 0]])
    cases = [(image[300:337, 250:300], sharpen.SHARPEN_KERNEL), (image[:1, :1], sharpen.SHARPEN_KERNEL),
             (image[:16, :16], tilted), (image[200:233, 100:119], tilted), (image[100:121, 150:190], THIRDS)]
    hints = [
        "Three rules: a thread whose (x, y) is outside the image must do nothing; a neighbour outside the "
        "image is read from the nearest pixel inside; the sum is clipped before it becomes a uint8.",
        "Leave first if the pixel is outside the image. Then visit the 3 × 3 neighbours with two loops over "
        "the offsets -1 to 1; clamp each neighbour's row and column into the image (between 0 and the last "
        "one) before reading it, and pair it with the weight at the same place in the 3 × 3 grid. Round the "
        "sum to the nearest integer and keep it between 0 and 255 before storing it.",
    ]
    if not isinstance(source, str) or _strip(source) == _strip(CLAMPED_STUB) or "__global__" not in source:
        checks.register_hints("sharpen_clamped", hints)
        return checks.not_a_kernel("sharpen_clamped", source, "sharpen_clamped")
    return checks.check_kernel(source, "sharpen_clamped", _run_clamped, sharpen.sharpen_reference, cases,
                               name="sharpen_clamped", hints=hints)


# --- Exercise 4: the same stencil from a shared-memory tile with a halo ------------------------

def _run_tile(kernel, image, weights, block=(16, 16)):
    from course import cuda

    xp = cuda.xp
    image_xp, out_xp = xp.ascontiguousarray(xp.asarray(image)), xp.zeros(image.shape, dtype=xp.uint8)
    height, width = image.shape
    try:
        kernel((math.ceil(width / block[0]), math.ceil(height / block[1])), block,
               (image_xp, out_xp, xp.asarray(weights, dtype=xp.float32).ravel(), height, width),
               shared_mem=(block[0] + 2) * (block[1] + 2) * 4)
    except cuda.KernelError as error:
        # (the emulator's advice for dynamic shared memory is about the launch, which the check makes here: say
        # what the kernel can change — a fixed 16 or 18 where it has one, else the tile's index itself)
        room = f"The check launches {block[0]} × {block[1]} blocks with room for ({block[0]} + 2) × ({block[1]} + 2) floats"
        fixed = re.search(r"(?<![\w.])1[68](?![\w.])", _strip(getattr(kernel, "code", "") or ""))
        advice = (f"{room}: size and index the tile from blockDim (tile_width = blockDim.x + 2), not from a fixed "
                  "16 or 18." if fixed else
                  f"{room}, and this index runs past them: check the offsets in the tile's index (its rows are "
                  "blockDim.x + 2 floats long, and cell (0, 0) is the pixel above and left of the block's first, so "
                  "a thread's own pixel is one row and one column in).")
        text = re.sub(r"hint: The launch passed shared_mem=\d+ bytes: pass shared_mem=<elements × element size> to "
                      r"the launch, or index less\.", lambda _: f"hint: {advice}", str(error))
        if text == str(error):
            raise
        raise cuda.KernelError(text, kernel=error.kernel, block=error.block, thread=error.thread,
                               line=error.line) from None
    return cuda.asnumpy(out_xp)


def _tile_loads(source: str, tile: str) -> str | None:
    """From the access trace of one launch (37 × 50 pixels, 16 × 16 blocks): a block that reads the image more
    often than its tile has cells ((16 + 2) × (16 + 2): each cell loaded once, a clamped border pixel once per
    cell it fills), as the rule's message; None when every block keeps to it, or when the launch fails (the
    values' check then names the fault). Counted, not read from the source: loads in a loop, in several
    statements (the halo by the edge threads) or through a helper are all fine."""
    from course import cuda
    from course.cuda import transactions as tx

    image = _photo()[300:337, 250:300]
    height, width = image.shape
    block = (16, 16)
    grid = (math.ceil(width / block[0]), math.ceil(height / block[1]))
    try:
        kernel = cuda.RawKernel(source, "sharpen_tile", backend="cpu")
        profile = kernel.profile(grid, block, (np.ascontiguousarray(image), np.zeros_like(image),
                                               sharpen.SHARPEN_KERNEL.astype(np.float32).ravel(), np.int32(height),
                                               np.int32(width)), shared_mem=(block[0] + 2) * (block[1] + 2) * 4)
    except Exception:
        return None
    trace = profile.trace
    loads = trace[(trace["kind"] == tx.GLOBAL_LOAD) & (trace["array"] == 0)]
    if not len(loads):
        return None
    blocks, counts = np.unique(loads["block"], return_counts=True)
    cells = (block[0] + 2) * (block[1] + 2)
    if counts.max() <= cells:
        return None
    worst = int(blocks[counts.argmax()])
    name = profile.arguments[0] if profile.arguments else "image"
    return (f"block ({worst % grid[0]}, {worst // grid[0]}) reads `{name}` {int(counts.max())} times for a tile of "
            f"(16 + 2) × (16 + 2) = {cells} cells: load each pixel once into the tile, and after the barrier read "
            f"the nine neighbours from `{tile}`, not from global memory.")


def _tile_rules(source: str) -> str | None:
    """The source rules of the tiled kernel, with the learner's own names for the image parameter and the
    shared tile (the stub's `image` and `tile`, or any others)."""
    body = _strip(source)
    if "__syncthreads" not in body:
        return ("the kernel has no __syncthreads(): a thread may read a tile cell before the thread that "
                "loads it has written it. Wait for the whole tile between loading and computing.")
    tiles = re.findall(r"__shared__\s+(?:\w+\s+)*?(\w+)\s*\[", body) or ["tile"]
    tile = tiles[0]
    if (loads := _tile_loads(source, tile)) is not None:
        return loads
    after = body.split("__syncthreads", 1)[1]
    if not any(re.search(rf"\b{re.escape(name)}\s*\[", after) for name in tiles):
        return f"after the barrier, compute from `{tile}[...]`: that is the point of the shared-memory tile."
    return None


def check_tile(source) -> bool:
    """The learner's ``sharpen_tile`` kernel: load an 18×18 tile (edge-clamped halo), sync, compute from it."""
    image = _photo()
    tilted = np.array([[1, 0, -2], [0, 2, 0], [1, -1, 0]])
    cases = [(image[300:337, 250:300], sharpen.SHARPEN_KERNEL), (image[:5, :3], sharpen.SHARPEN_KERNEL),
             (image[200:233, 100:119], tilted), (image[100:121, 150:190], THIRDS)]
    hints = [
        "The tile is (16 + 2) × (16 + 2) pixels but the block has only 16 × 16 threads, so some threads load "
        "more than one pixel; tile cell (ty, tx) holds image pixel (y0 + ty, x0 + tx), clamped into the image. "
        "Every thread must reach the barrier — where does the guard go?",
        "Let the block's threads sweep the tile together: each starts at its own (y, x) in the tile and steps by "
        "the block's height and width, clamping each pixel into the image as in the previous exercise and "
        "storing it as a float. After the barrier, a thread inside the image sums its 3 × 3 neighbourhood from "
        "the tile, where its own pixel sits one row and one column in from the tile's corner.",
    ]
    name = "sharpen_tile"
    if not isinstance(source, str) or _strip(source) == _strip(TILE_STUB) or "__global__" not in source:
        checks.register_hints(name, hints)
        return checks.not_a_kernel(name, source, "sharpen_tile")
    rule = _tile_rules(source)
    if rule:
        checks.register_hints(name, hints)
        return checks.check_true(lambda: False, name=name, fail=rule)
    # 16 × 16 blocks, and a second block shape (the last case): the loads must stride by blockDim, not assume 16.
    # One check, one verdict (the block shape is the last item of each case it names).
    blocked = [(img, w, (16, 16)) for img, w in cases] + [(cases[0][0], cases[0][1], (8, 4))]
    return checks.check_kernel(source, name, lambda kernel, img, w, block: _run_tile(kernel, img, w, block=block),
                               lambda img, w, block: sharpen.sharpen_reference(img, w), blocked, name=name,
                               hints=hints)


# --- Exercise 5: unsharp masking ----------------------------------------------------------------

def check_unsharp(fn) -> bool:
    """``fn(image, sigma, amount)``: image + amount × (image − Gaussian blur), grey or colour."""
    import skimage.data

    grey, colour = _photo(), skimage.data.astronaut()
    face, portrait = grey[60:220, 170:330], colour[30:230, 140:340]
    cases = [(face, 2.0, 1.5), (face[:31, :45], 1.0, 0.0), (portrait[:64, :48], 1.5, 2.5), (portrait, 3.0, 1.0)]
    return checks.check_function(fn, sharpen.unsharp_mask, cases, name="my_unsharp_mask", hints=[
        "Three steps, all in float: blur, detail = image − blurred, image + amount × detail; round only once, "
        "at the very end. For colour, the blur must not mix the three channels.",
        "Build the blur kernel from sigma with course.sharpen's helper and correlate the float image with it, "
        "repeating the edge pixels at the border (scipy.ndimage calls that mode 'nearest'). For a colour image the "
        "kernel needs one more axis, of length 1, so that each channel is blurred on its own. Then combine as in "
        "the first hint, clip to the pixel range, round to the nearest integer and convert to uint8.",
    ])
