"""Image sharpening five ways, one answer — introduced in notebook 06 (image sharpening).

A sharpening filter replaces every pixel by a weighted sum of its neighbourhood (a
*correlation* with a small kernel), then clips to [0, 255] and rounds back to uint8. This
module holds each way of computing it that notebook 06 compares, all on the same contract:

- ``sharpen_seed_loop``: the seed article's code, a Python loop over pixels, fixed only where
  needed to run; its uint8 result still wraps around (the seed's second bug);
- ``sharpen_reference``: the definition, in float64 NumPy — every other result must equal it;
- ``sharpen_vectorised``: one whole-image slice per kernel weight (NumPy or CuPy);
- ``sharpen_ndimage``: ``scipy.ndimage.correlate`` (``cupyx.scipy.ndimage`` on a GPU);
- ``sharpen_conv2d``: PyTorch ``F.conv2d`` (a correlation too, despite its name);
- ``sharpen_rawkernel`` and ``sharpen_shared_tile``: CUDA C through ``course.cuda.RawKernel``,
  one thread per output pixel, reading the image directly or from a shared-memory tile.

Images are uint8 arrays, H×W (grey) or H×W×C (colour, filtered per channel); kernels are
2-D with odd sides. Edge modes use ``numpy.pad``'s names (see ``EDGE_MODES``).
"""

from __future__ import annotations

import math

import numpy as np

from course.cuda import asnumpy as to_numpy  # NumPy from NumPy, CuPy or torch

__all__ = [
    "SHARPEN_KERNEL", "EDGE_MODES", "BORDER_INDEX_SOURCE", "SHARPEN_SOURCE", "SHARED_TILE_SOURCE", "BLOCK",
    "sharpen_seed_loop", "sharpen_reference", "sharpen_vectorised", "sharpen_ndimage",
    "sharpen_conv2d", "sharpen_rawkernel", "sharpen_shared_tile", "unsharp_mask",
    "gaussian_kernel", "to_uint8", "to_numpy", "bytes_moved", "peak_bandwidth",
]

#: The seed's sharpening kernel: 5 × the pixel minus its four neighbours (the weights sum to 1,
#: so flat regions keep their brightness). Integer weights, like the seed's ``cp.array``.
SHARPEN_KERNEL = np.array([[0, -1, 0], [-1, 5, -1], [0, -1, 0]], dtype=np.int64)
SHARPEN_KERNEL.setflags(write=False)

#: What a filter reads beyond the border, by ``numpy.pad`` name, for a row ``a b c d``:
EDGE_MODES = {
    "edge": "a a | a b c d | d d  (repeat the last pixel)",
    "reflect": "c b | a b c d | c b  (mirror about the last pixel)",
    "symmetric": "b a | a b c d | d c  (mirror about the border, edge pixel repeated)",
    "wrap": "c d | a b c d | a b  (the image tiles the plane)",
    "constant": "0 0 | a b c d | 0 0  (zeros outside)",
}
# The same modes under scipy.ndimage's and torch.nn.functional.pad's names. Beware: ndimage's
# "reflect" is numpy's "symmetric", and numpy's "reflect" is ndimage's "mirror".
_NDIMAGE_MODE = {"edge": "nearest", "reflect": "mirror", "symmetric": "reflect", "wrap": "wrap",
                 "constant": "constant"}
_TORCH_MODE = {"edge": "replicate", "reflect": "reflect", "wrap": "circular", "constant": "constant"}
# The edge modes as the CUDA kernels number them (see border_index in SHARPEN_SOURCE).
_KERNEL_MODE = {"edge": 0, "reflect": 1, "symmetric": 2, "wrap": 3, "constant": 4}

#: Threads per block (x, y) of the CUDA kernels: 16 × 16 = 256, a common choice for 2-D images.
BLOCK = (16, 16)


# ----------------------------------------------------------------------------------------
# Checking inputs and converting results
# ----------------------------------------------------------------------------------------


def _module_of(a):
    """The array library of ``a``: cupy for a CuPy array, else numpy."""
    if type(a).__module__.split(".")[0] == "cupy":
        import cupy

        return cupy
    return np


def _check_image(image, name: str = "image"):
    shape, dtype = tuple(getattr(image, "shape", ())), getattr(image, "dtype", None)
    if dtype is None or len(shape) not in (2, 3):
        raise ValueError(f"{name} must be an H×W (grey) or H×W×C (colour) array, got "
                         f"{type(image).__name__} of shape {shape}")
    if str(dtype) not in ("uint8", "torch.uint8"):
        raise TypeError(f"{name} must hold uint8 pixels (0..255), got {dtype}; convert it first, e.g. "
                        "skimage.util.img_as_ubyte(image) or np.clip(image, 0, 255).astype(np.uint8)")
    if 0 in shape:
        raise ValueError(f"{name} is empty: shape {shape}")


def _check_kernel(kernel) -> np.ndarray:
    """The kernel as a float64 NumPy array, after checking it is 2-D with odd sides."""
    k = to_numpy(kernel)
    if k.ndim != 2 or k.shape[0] % 2 == 0 or k.shape[1] % 2 == 0:
        raise ValueError(f"kernel must be 2-D with odd sides (3×3, 5×5, 3×5, ...) so that it has a "
                         f"centre pixel, got shape {k.shape}")
    if k.dtype.kind not in "biuf":
        raise TypeError(f"kernel must hold real numbers, got {k.dtype}")
    k = k.astype(np.float64)
    if not np.isfinite(k).all():
        raise ValueError("kernel holds inf or nan")
    return k


def _check_mode(mode: str, allowed=tuple(EDGE_MODES)) -> str:
    if mode not in allowed:
        raise ValueError(f"mode must be one of {', '.join(map(repr, allowed))} (numpy.pad's names), got {mode!r}")
    return mode


def to_uint8(values, xp=None):
    """Clip float results to [0, 255], round half to even (like NumPy) and store as uint8."""
    xp = xp or _module_of(values)
    return xp.rint(xp.clip(values, 0, 255)).astype(xp.uint8)


# ----------------------------------------------------------------------------------------
# 1. The seed's loop, and the definition
# ----------------------------------------------------------------------------------------


def sharpen_seed_loop(image, kernel=SHARPEN_KERNEL):
    """The seed's per-pixel Python loop over ``course.cuda.xp`` arrays, bugs kept (notebook 06).

    Changed from the seed only so that it runs: ``xp`` (CuPy on a GPU, NumPy on the CPU)
    replaces ``cp``, the image is moved to the device before ``xp.pad``, and the result comes
    back with ``course.cuda.asnumpy`` (NumPy arrays have no ``.get()``). Still there: one
    Python iteration (several tiny array operations) per pixel, and a uint8 output array
    that the int64 sum is written into — negative sums and sums above 255 wrap around.
    Grey images only, like the seed.
    """
    from course import cuda

    xp = cuda.xp
    image, kernel = xp.asarray(image), xp.asarray(kernel)
    img_height, img_width = image.shape
    kernel_size = kernel.shape[0]
    border = kernel_size // 2

    sharpened_image = xp.zeros((img_height, img_width), dtype=xp.uint8)
    padded_image = xp.pad(image, ((border, border), (border, border)), mode="edge")

    for i in range(img_height):
        for j in range(img_width):
            sharpened_image[i, j] = xp.sum(kernel * padded_image[i:i + kernel_size, j:j + kernel_size])

    return cuda.asnumpy(sharpened_image)


def sharpen_reference(image, kernel=SHARPEN_KERNEL, mode: str = "edge") -> np.ndarray:
    """The definition, in float64 NumPy: out[y, x] = sum(kernel * window around (y, x)), clipped, rounded, uint8.

    Every other implementation in notebook 06 is asserted equal to this one. Colour images
    are filtered channel by channel. CuPy arrays and tensors are copied to the host first.
    """
    image = to_numpy(image)
    _check_image(image)
    k = _check_kernel(kernel)
    _check_mode(mode)
    if image.ndim == 3:
        return np.stack([sharpen_reference(image[..., c], k, mode) for c in range(image.shape[2])], axis=-1)
    ry, rx = k.shape[0] // 2, k.shape[1] // 2
    padded = np.pad(image.astype(np.float64), ((ry, ry), (rx, rx)), mode=mode)
    # windows[y, x] is the kh×kw neighbourhood of pixel (y, x): a view, no copy.
    windows = np.lib.stride_tricks.sliding_window_view(padded, k.shape)
    return to_uint8(np.einsum("yxij,ij->yx", windows, k), np)


# ----------------------------------------------------------------------------------------
# 2. Vectorised: one whole-image operation per kernel weight
# ----------------------------------------------------------------------------------------


def sharpen_vectorised(image, kernel=SHARPEN_KERNEL, xp=None, mode: str = "edge"):
    """Correlation by slicing: for each weight, add weight × (the padded image shifted) (notebook 06).

    A 3×3 kernel costs 9 whole-image operations instead of 9 × H × W tiny ones. ``xp``: numpy
    or cupy (default: the library of ``image``); the result stays there. float32 arithmetic.
    """
    xp = xp or _module_of(image)
    _check_image(image)
    k = _check_kernel(kernel)
    _check_mode(mode)
    x = xp.asarray(image)
    height, width = x.shape[:2]
    ry, rx = k.shape[0] // 2, k.shape[1] // 2
    pad = ((ry, ry), (rx, rx)) + ((0, 0),) * (x.ndim - 2)
    padded = xp.pad(x.astype(xp.float32), pad, mode=mode)
    out = xp.zeros(x.shape, dtype=xp.float32)
    for dy in range(k.shape[0]):
        for dx in range(k.shape[1]):
            if k[dy, dx] != 0:
                out += np.float32(k[dy, dx]) * padded[dy:dy + height, dx:dx + width]
    return to_uint8(out, xp)


# ----------------------------------------------------------------------------------------
# 3. A library call: scipy.ndimage / cupyx.scipy.ndimage
# ----------------------------------------------------------------------------------------


def sharpen_ndimage(image, kernel=SHARPEN_KERNEL, mode: str = "edge"):
    """``ndimage.correlate`` from SciPy (NumPy input) or cupyx.scipy (CuPy input) (notebook 06).

    Not ``convolve``: a convolution flips the kernel first. ``mode`` uses numpy.pad's names
    and is translated (numpy "edge" is ndimage "nearest", numpy "reflect" is ndimage "mirror").
    """
    _check_image(image)
    k = _check_kernel(kernel)
    _check_mode(mode)
    xp = _module_of(image)
    if xp is np:
        from scipy import ndimage
    else:
        from cupyx.scipy import ndimage
    weights = xp.asarray(k, dtype=xp.float32)
    if image.ndim == 3:
        weights = weights[:, :, None]  # a 1-deep kernel: each channel on its own
    out = ndimage.correlate(image.astype(xp.float32), weights, mode=_NDIMAGE_MODE[mode], cval=0.0)
    return to_uint8(out, xp)


# ----------------------------------------------------------------------------------------
# 4. PyTorch: F.conv2d
# ----------------------------------------------------------------------------------------

_torch_weights: dict = {}


def sharpen_conv2d(image, kernel=SHARPEN_KERNEL, device=None, mode: str = "edge"):
    """PyTorch ``F.conv2d`` (which computes a correlation, like every deep-learning "convolution").

    ``image``: NumPy, CuPy or a torch tensor (H×W or H×W×C uint8). ``device``: where to compute
    (default: the tensor's device, else ``course.env.device()``). Returns a uint8 tensor on that
    device. Channels become a batch of 1-channel images. numpy's "symmetric" mode has no
    ``F.pad`` equivalent. float32 (on a GPU, cuDNN may use TF32 — exact here for integer kernels).
    """
    import torch
    import torch.nn.functional as F

    _check_image(image)
    k = _check_kernel(kernel)
    _check_mode(mode, tuple(_TORCH_MODE))
    if isinstance(image, torch.Tensor):
        x = image
    elif _module_of(image) is not np:
        x = torch.from_dlpack(image)  # a CuPy array: zero-copy, stays on the GPU
    else:
        x = torch.from_numpy(np.ascontiguousarray(image))
    if device is None:
        from course import env

        device = x.device if x.device.type != "cpu" else env.device()
    device = torch.device(device)
    x = x.to(device)
    height, width = x.shape[:2]
    ry, rx = k.shape[0] // 2, k.shape[1] // 2
    if mode == "reflect" and (ry >= height or rx >= width):
        raise ValueError(f"F.pad's 'reflect' needs the image larger than the kernel radius; got "
                         f"{height}×{width} for a {k.shape[0]}×{k.shape[1]} kernel")
    key = (k.tobytes(), k.shape, str(device))
    if key not in _torch_weights:  # a kernel sent to the GPU once, not at every call
        _torch_weights[key] = torch.as_tensor(k, dtype=torch.float32, device=device)[None, None]
    weights = _torch_weights[key]
    # (H, W) → (1, 1, H, W); (H, W, C) → (C, 1, H, W): one grey image per channel.
    batch = x[None, None] if x.ndim == 2 else x.permute(2, 0, 1)[:, None]
    padded = F.pad(batch.float(), (rx, rx, ry, ry), mode=_TORCH_MODE[mode])
    out = F.conv2d(padded, weights)
    out = out.clamp_(0, 255).round_().to(torch.uint8)
    return out[0, 0] if x.ndim == 2 else out[:, 0].permute(1, 2, 0).contiguous()


# ----------------------------------------------------------------------------------------
# 5. CUDA C through course.cuda.RawKernel
# ----------------------------------------------------------------------------------------

#: ``border_index``: where a kernel reads for row/column ``i`` of an axis ``n`` long (any ``i``).
BORDER_INDEX_SOURCE = r"""
// Where to read for row (or column) i of an axis n pixels long, for any i;
// -1 means "outside, read 0". mode: 0 edge, 1 reflect, 2 symmetric, 3 wrap, 4 constant.
__device__ int border_index(int i, int n, int mode) {
    if (i >= 0 && i < n) return i;
    if (mode == 0) return i < 0 ? 0 : n - 1;               // edge: repeat the last pixel
    if (mode == 1) {                                       // reflect: c b | a b c d | c b
        if (n == 1) return 0;
        int period = 2 * n - 2;
        i = ((i % period) + period) % period;
        return i < n ? i : period - i;
    }
    if (mode == 2) {                                       // symmetric: b a | a b c d | d c
        int period = 2 * n;
        i = ((i % period) + period) % period;
        return i < n ? i : period - 1 - i;
    }
    if (mode == 3) return ((i % n) + n) % n;               // wrap: c d | a b c d | a b
    return -1;                                             // constant: zeros outside
}
"""

#: One thread per output pixel (and channel), reading its neighbourhood straight from the image.
SHARPEN_SOURCE = BORDER_INDEX_SOURCE + r"""
extern "C" __global__ void sharpen(const unsigned char* image, unsigned char* out, const float* weights,
                                   int height, int width, int channels,
                                   int radius_y, int radius_x, int mode) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;   // this thread's column
    int y = blockIdx.y * blockDim.y + threadIdx.y;   // row
    int c = blockIdx.z;                              // channel
    if (x >= width || y >= height) return;           // the grid overhangs the image
    int kernel_width = 2 * radius_x + 1;
    float sum = 0.0f;
    for (int dy = -radius_y; dy <= radius_y; ++dy) {
        int yy = border_index(y + dy, height, mode);
        for (int dx = -radius_x; dx <= radius_x; ++dx) {
            int xx = border_index(x + dx, width, mode);
            if (yy < 0 || xx < 0) continue;          // constant mode: a zero outside
            float w = weights[(dy + radius_y) * kernel_width + (dx + radius_x)];
            sum += w * image[(yy * width + xx) * channels + c];
        }
    }
    out[(y * width + x) * channels + c] = (unsigned char)rintf(fminf(fmaxf(sum, 0.0f), 255.0f));
}
"""

#: The same filter with a shared-memory tile: the block loads its pixels and a halo once.
SHARED_TILE_SOURCE = BORDER_INDEX_SOURCE + r"""
extern "C" __global__ void sharpen_shared_tile(const unsigned char* image, unsigned char* out,
                                               const float* weights, int height, int width, int channels,
                                               int radius_y, int radius_x, int mode) {
    // The block's pixels plus a halo of radius_y rows and radius_x columns all round;
    // shared_mem = tile_height * tile_width * sizeof(float) bytes at launch.
    extern __shared__ float tile[];
    int tile_width = blockDim.x + 2 * radius_x;
    int tile_height = blockDim.y + 2 * radius_y;
    int x0 = blockIdx.x * blockDim.x - radius_x;     // image column of the tile's column 0
    int y0 = blockIdx.y * blockDim.y - radius_y;     // image row of the tile's row 0
    int c = blockIdx.z;

    // 1. Load: the tile has more pixels than the block has threads, so each thread loads
    //    every blockDim-th one. Halo pixels outside the image follow the edge mode.
    for (int ty = threadIdx.y; ty < tile_height; ty += blockDim.y) {
        int yy = border_index(y0 + ty, height, mode);
        for (int tx = threadIdx.x; tx < tile_width; tx += blockDim.x) {
            int xx = border_index(x0 + tx, width, mode);
            tile[ty * tile_width + tx] = (yy < 0 || xx < 0) ? 0.0f : (float)image[(yy * width + xx) * channels + c];
        }
    }
    __syncthreads();   // the whole tile is loaded before any thread reads its neighbours

    // 2. Compute, reading neighbours from shared memory. The guard comes after the barrier:
    //    threads outside the image still load their share of the tile (its halo) above.
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    int kernel_width = 2 * radius_x + 1;
    float sum = 0.0f;
    for (int dy = 0; dy <= 2 * radius_y; ++dy)
        for (int dx = 0; dx <= 2 * radius_x; ++dx)
            sum += weights[dy * kernel_width + dx] * tile[(threadIdx.y + dy) * tile_width + threadIdx.x + dx];
    out[(y * width + x) * channels + c] = (unsigned char)rintf(fminf(fmaxf(sum, 0.0f), 255.0f));
}
"""

_kernels: dict = {}
_device_weights: dict = {}


def _launch(source: str, name: str, image, kernel, mode: str, block, shared: bool):
    from course import cuda

    _check_image(image)
    k = _check_kernel(kernel)
    _check_mode(mode)
    backend = cuda.backend()
    if (backend, name) not in _kernels:
        _kernels[backend, name] = cuda.RawKernel(source, name, backend=backend)
    raw = _kernels[backend, name]
    xp = cuda.xp
    x = xp.ascontiguousarray(xp.asarray(image))      # a NumPy image goes to the GPU here
    key = (backend, k.tobytes(), k.shape)
    if key not in _device_weights:                   # the kernel's weights go to the GPU once
        _device_weights[key] = xp.asarray(k.astype(np.float32).ravel())
    weights = _device_weights[key]
    height, width = x.shape[:2]
    channels = x.shape[2] if x.ndim == 3 else 1
    ry, rx = k.shape[0] // 2, k.shape[1] // 2
    out = xp.empty_like(x)
    grid = (math.ceil(width / block[0]), math.ceil(height / block[1]), channels)
    shared_mem = (block[1] + 2 * ry) * (block[0] + 2 * rx) * 4 if shared else 0
    raw(grid, tuple(block), (x, out, weights, height, width, channels, ry, rx, _KERNEL_MODE[mode]),
        shared_mem=shared_mem)
    return out


def sharpen_rawkernel(image, kernel=SHARPEN_KERNEL, mode: str = "edge", block=BLOCK):
    """``SHARPEN_SOURCE`` through ``course.cuda.RawKernel``: one thread per output pixel (notebook 06).

    Runs on CuPy with a GPU, else on the CPU backend; returns a ``course.cuda.xp`` uint8 array.
    """
    return _launch(SHARPEN_SOURCE, "sharpen", image, kernel, mode, block, shared=False)


def sharpen_shared_tile(image, kernel=SHARPEN_KERNEL, mode: str = "edge", block=BLOCK):
    """``SHARED_TILE_SOURCE``: each block stages its pixels and a halo in shared memory first (notebook 06)."""
    return _launch(SHARED_TILE_SOURCE, "sharpen_shared_tile", image, kernel, mode, block, shared=True)


# ----------------------------------------------------------------------------------------
# Unsharp masking
# ----------------------------------------------------------------------------------------


def gaussian_kernel(sigma: float, radius: int | None = None) -> np.ndarray:
    """A normalised 2-D Gaussian blur kernel (float64), ``radius`` default ceil(3·sigma) (notebook 06)."""
    if not sigma > 0:
        raise ValueError(f"sigma must be a positive number of pixels, got {sigma!r}")
    radius = math.ceil(3 * sigma) if radius is None else int(radius)
    if radius < 0:
        raise ValueError(f"radius must be >= 0, got {radius}")
    offsets = np.arange(-radius, radius + 1, dtype=np.float64)
    g = np.exp(-offsets**2 / (2 * sigma**2))
    kernel = np.outer(g, g)
    return kernel / kernel.sum()


def unsharp_mask(image, sigma: float = 1.0, amount: float = 1.0, mode: str = "edge") -> np.ndarray:
    """Unsharp masking in float64 NumPy: image + amount × (image − Gaussian blur), clipped, uint8 (notebook 06).

    The blur keeps the coarse picture; ``image − blur`` is the fine detail; adding ``amount`` of
    it back sharpens. Colour images per channel. The blur is not rounded before subtracting.
    """
    image = to_numpy(image)
    _check_image(image)
    _check_mode(mode)
    if not amount >= 0:
        raise ValueError(f"amount must be >= 0 (0 leaves the image unchanged), got {amount!r}")
    k = gaussian_kernel(sigma)
    r = k.shape[0] // 2
    pixels = image.astype(np.float64)
    pad = ((r, r), (r, r)) + ((0, 0),) * (image.ndim - 2)
    windows = np.lib.stride_tricks.sliding_window_view(np.pad(pixels, pad, mode=mode), k.shape, axis=(0, 1))
    blurred = np.einsum("yx...ij,ij->yx...", windows, k)
    return to_uint8(pixels + amount * (pixels - blurred), np)


# ----------------------------------------------------------------------------------------
# Bandwidth: what a memory-bound filter should be measured against
# ----------------------------------------------------------------------------------------


def bytes_moved(image) -> int:
    """The least memory traffic of one filter pass: every pixel read once and written once (uint8)."""
    return 2 * int(np.prod(image.shape))


def peak_bandwidth(device=None, size_mb: int = 64, method: str = "measured"):
    """(GB/s, how it was found) for ``device`` (notebook 06): ``course.roofline.peak_bandwidth``.

    ``device``: "cpu", "cuda" (CuPy arrays are on "cuda" too) or a torch.device; None means
    ``course.env.device()``. ``method="measured"``: the best copy of ``size_mb`` MB (read +
    written); ``"theoretical"``: from the GPU's properties. ``how`` names the method.
    """
    from course import roofline

    if isinstance(size_mb, bool) or not isinstance(size_mb, int) or size_mb < 1:
        raise ValueError(f"size_mb must be a whole number of MB >= 1, got {size_mb!r}")
    peak = roofline.peak_bandwidth(device, method=method, nbytes=size_mb * 2**20)
    return peak.per_s / 1e9, f"{peak.method}: {peak.how}"
