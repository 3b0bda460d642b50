"""course.sharpen: every implementation gives the reference's uint8 image, pixel for pixel.

Runs on whatever this machine has: the RawKernels on CuPy with a GPU, else on the CPU backend.
"""

import numpy as np
import pytest

from course import sharpen as s

RNG = np.random.default_rng(4)
ODD_SIZES = [(7, 5), (33, 17), (19, 40)]  # none a multiple of the 16×16 block
ASYMMETRIC = np.array([[0, 1, 0, 0, 0], [2, -3, 0, 1, 0], [0, 0, 1, 0, -1]])  # 3×5, integer
LAPLACE_5X5 = -np.ones((5, 5), dtype=np.int64)
LAPLACE_5X5[2, 2] = 25
INTEGER_KERNELS = {"seed 3×3": s.SHARPEN_KERNEL, "asymmetric 3×5": ASYMMETRIC, "5×5": LAPLACE_5X5}


def image(shape):
    return RNG.integers(0, 256, size=shape, dtype=np.uint8)


def conv2d(img, kernel, mode="edge"):
    return s.to_numpy(s.sharpen_conv2d(img, kernel, device="cpu", mode=mode))


def on_device(fn):
    """A RawKernel implementation, with its result copied back to NumPy."""
    return lambda img, kernel, mode="edge": s.to_numpy(fn(img, kernel, mode=mode))


IMPLEMENTATIONS = {
    "vectorised": (lambda img, k, mode="edge": s.sharpen_vectorised(img, k, mode=mode), tuple(s.EDGE_MODES)),
    "ndimage": (s.sharpen_ndimage, tuple(s.EDGE_MODES)),
    "conv2d": (conv2d, ("edge", "reflect", "wrap", "constant")),
    "rawkernel": (on_device(s.sharpen_rawkernel), tuple(s.EDGE_MODES)),
    "shared_tile": (on_device(s.sharpen_shared_tile), tuple(s.EDGE_MODES)),
}


@pytest.mark.parametrize("name", IMPLEMENTATIONS)
def test_every_implementation_equals_the_reference_exactly(name):
    fn, modes = IMPLEMENTATIONS[name]
    for shape in ODD_SIZES:
        img = image(shape)
        for kname, kernel in INTEGER_KERNELS.items():
            for mode in modes:
                expected = s.sharpen_reference(img, kernel, mode=mode)
                got = fn(img, kernel, mode=mode)
                assert got.dtype == np.uint8 and got.shape == img.shape
                assert np.array_equal(got, expected), f"{name}, {shape}, {kname}, mode {mode}"


@pytest.mark.parametrize("name", IMPLEMENTATIONS)
def test_colour_is_filtered_per_channel(name):
    fn, _ = IMPLEMENTATIONS[name]
    rgb = image((21, 13, 3))
    got = fn(rgb, s.SHARPEN_KERNEL)
    assert got.shape == rgb.shape
    for c in range(3):
        assert np.array_equal(got[..., c], s.sharpen_reference(rgb[..., c], s.SHARPEN_KERNEL)), f"channel {c}"


@pytest.mark.parametrize("name", IMPLEMENTATIONS)
def test_float_kernels_agree_within_one_grey_level(name):
    # float32 sums of non-integer weights may land on the other side of .5 than float64's
    fn, _ = IMPLEMENTATIONS[name]
    img = image((33, 17))
    for kernel in (np.full((3, 3), 1 / 9), s.gaussian_kernel(1.0)):
        diff = np.abs(fn(img, kernel).astype(int) - s.sharpen_reference(img, kernel).astype(int))
        assert diff.max() <= 1 and (diff > 0).mean() < 0.01


def test_reference_matches_the_definition_at_a_pixel():
    img = image((9, 11))
    out = s.sharpen_reference(img, ASYMMETRIC, mode="constant")
    padded = np.pad(img.astype(np.int64), ((1, 1), (2, 2)))
    y, x = 4, 6
    value = int((ASYMMETRIC * padded[y:y + 3, x:x + 5]).sum())
    assert out[y, x] == min(max(value, 0), 255)


def test_edge_modes_read_what_numpy_pad_writes():
    # A 1×5 kernel that picks the pixel 2 to the left: column 0 of the result is what mode puts at -2.
    pick_left = np.zeros((1, 5))
    pick_left[0, 0] = 1
    row = np.array([[10, 20, 30, 40]], dtype=np.uint8)
    expected_first = {"edge": 10, "reflect": 30, "symmetric": 20, "wrap": 30, "constant": 0}
    for mode, value in expected_first.items():
        for fn in (s.sharpen_reference, s.sharpen_rawkernel, s.sharpen_ndimage):
            assert s.to_numpy(fn(row, pick_left, mode=mode))[0, 0] == value, (fn.__name__, mode)


def test_halo_far_outside_small_images_stays_in_bounds():
    # A 16×16 block over a 5×3 image loads halo columns far past the image: border_index must
    # map all of them inside, or the CPU backend raises KernelError (out of bounds).
    img = image((3, 5))
    for mode in s.EDGE_MODES:
        for block in [(16, 16), (8, 4), (32, 2)]:
            got = s.to_numpy(s.sharpen_shared_tile(img, s.SHARPEN_KERNEL, mode=mode, block=block))
            assert np.array_equal(got, s.sharpen_reference(img, s.SHARPEN_KERNEL, mode=mode)), (mode, block)


def test_seed_loop_wraps_around_in_uint8():
    img = image((12, 10))
    kernel = s.SHARPEN_KERNEL
    got = s.sharpen_seed_loop(img)
    exact = np.einsum("yxij,ij->yx", np.lib.stride_tricks.sliding_window_view(
        np.pad(img.astype(np.int64), 1, mode="edge"), (3, 3)), kernel)
    assert ((exact < 0) | (exact > 255)).any(), "the test image must overflow somewhere"
    assert np.array_equal(got, exact % 256), "the seed's loop stores the sum modulo 256"
    fine = (exact >= 0) & (exact <= 255)
    reference = s.sharpen_reference(img)
    assert np.array_equal(got[fine], reference[fine])
    assert not np.array_equal(got[~fine], reference[~fine])


def test_convolve_flips_the_kernel():
    from scipy import ndimage

    img = image((15, 9)).astype(np.float64)
    k = ASYMMETRIC[:, 1:4].astype(np.float64)  # 3×3, asymmetric
    assert not np.allclose(ndimage.convolve(img, k), ndimage.correlate(img, k))
    assert np.allclose(ndimage.convolve(img, k), ndimage.correlate(img, k[::-1, ::-1]))


def test_unsharp_mask():
    rgb = image((20, 30, 3))
    assert np.array_equal(s.unsharp_mask(rgb, sigma=1.5, amount=0.0), rgb)
    strong = s.unsharp_mask(rgb, sigma=1.0, amount=2.0)
    for c in range(3):
        assert np.array_equal(strong[..., c], s.unsharp_mask(rgb[..., c], sigma=1.0, amount=2.0))
    grey = rgb[..., 0]
    blurred = np.einsum("yxij,ij->yx", np.lib.stride_tricks.sliding_window_view(
        np.pad(grey.astype(np.float64), 3, mode="edge"), (7, 7)), s.gaussian_kernel(1.0))
    expected = np.clip(np.rint(grey + 2.0 * (grey - blurred)), 0, 255).astype(np.uint8)
    assert np.array_equal(strong[..., 0], expected)
    assert np.isclose(s.gaussian_kernel(2.0).sum(), 1.0) and s.gaussian_kernel(2.0).shape == (13, 13)


def test_bad_input_gets_a_clear_error():
    img = image((8, 8))
    with pytest.raises(ValueError, match="odd sides"):
        s.sharpen_reference(img, np.ones((2, 2)))
    with pytest.raises(TypeError, match="uint8"):
        s.sharpen_vectorised(img.astype(np.float32))
    with pytest.raises(ValueError, match="mode must be one of"):
        s.sharpen_conv2d(img, mode="symmetric", device="cpu")
    with pytest.raises(ValueError, match="H×W"):
        s.sharpen_rawkernel(np.zeros(5, np.uint8))
    with pytest.raises(ValueError, match="sigma"):
        s.unsharp_mask(img, sigma=0)


def test_bandwidth_helpers():
    assert s.bytes_moved(np.zeros((4, 5, 3), np.uint8)) == 120
    gbs, how = s.peak_bandwidth("cpu", size_mb=4)
    assert gbs > 0 and "copy" in how


def test_gpu_paths_equal_the_reference():
    """On a GPU: CuPy slicing, cupyx.scipy.ndimage and F.conv2d on CUDA give the same pixels."""
    from course import env

    if not (env.cupy_usable() and env.torch_cuda_usable()):
        pytest.skip("no usable GPU (CuPy and PyTorch): the NumPy/CPU paths are tested above")
    import cupy

    for img in (image((33, 17)), image((21, 13, 3))):
        on_gpu = cupy.asarray(img)
        for mode in ("edge", "reflect", "wrap", "constant"):
            expected = s.sharpen_reference(img, s.SHARPEN_KERNEL, mode=mode)
            for got in (s.sharpen_vectorised(on_gpu, mode=mode), s.sharpen_ndimage(on_gpu, mode=mode),
                        s.sharpen_conv2d(on_gpu, mode=mode), s.sharpen_conv2d(img, device="cuda", mode=mode)):
                assert np.array_equal(s.to_numpy(got), expected), mode
    gbs, how = s.peak_bandwidth("cuda", size_mb=8)
    assert gbs > 10, how
