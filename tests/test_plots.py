"""course.plots: thread maps, the reduction tree and the SM/warp diagram (notebook 01)."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from course.plots import IDLE, UNWRITTEN, block_colours, gpu_diagram, reduction_tree, thread_map, tiled_matmul  # noqa: E402


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_block_colours_share_a_hue_per_block_and_lighten_with_the_thread():
    i = np.arange(16)
    colours = block_colours(i // 8, i % 8)
    assert colours.shape == (16, 3)
    # thread 0 of each block has the full colour; later threads are lighter (closer to white)
    assert not np.allclose(colours[0], colours[8])
    assert (colours[7].sum() > colours[0].sum()) and (colours[15].sum() > colours[8].sum())
    assert np.allclose(block_colours(np.array([-1]), np.array([0]))[0], UNWRITTEN)
    with pytest.raises(ValueError, match="same shape"):
        block_colours(np.zeros(3, int), np.zeros(4, int))


def test_1d_map_draws_elements_idle_threads_and_thread_numbers():
    i = np.arange(10)
    ax = thread_map(i // 4, i % 4, launched=12)
    picture = ax.images[0].get_array()
    assert picture.shape == (2, 12, 3)                      # one label row, one row of cells
    assert np.allclose(picture[1, 10], IDLE) and np.allclose(picture[1, 11], IDLE)
    assert not np.allclose(picture[1, 9], IDLE)
    numbers = [t.get_text() for t in ax.texts if t.get_text().isdigit()]
    assert numbers == ["0", "1", "2", "3"] * 3              # 10 elements + 2 idle threads, by thread
    assert {"block 0", "block 1", "block 2"} <= {t.get_text() for t in ax.texts}
    assert "idle" in ax.get_legend().get_texts()[0].get_text()


def test_1d_map_wraps_long_arrays_and_marks_unwritten_elements():
    block_of = np.full(100, -1)
    thread_of = np.full(100, -1)
    block_of[:16], thread_of[:16] = np.arange(16) // 8, np.arange(16) % 8
    ax = thread_map(block_of, thread_of, row_length=32)
    picture = ax.images[0].get_array()
    assert picture.shape == (8, 32, 3)                      # 4 rows of 32 cells, each under a label row
    assert np.allclose(picture[1, 20], UNWRITTEN) and np.allclose(picture[7, 3], UNWRITTEN)
    assert not ax.texts or all(t.get_text() != "" for t in ax.texts)
    assert "no thread wrote here" in [t.get_text() for t in ax.get_legend().get_texts()]


def test_1d_map_rejects_bad_input():
    with pytest.raises(ValueError, match="same"):
        thread_map(np.zeros(3, int), np.zeros(4, int))
    with pytest.raises(ValueError, match="cannot cover"):
        thread_map(np.zeros(8, int), np.arange(8), launched=4)
    with pytest.raises(ValueError, match="integers"):
        thread_map(np.zeros(3), np.zeros(3))


def test_2d_map_with_xy_tuples_labels_blocks_and_draws_borders():
    rows, cols = np.indices((6, 10))
    ax = thread_map((cols // 4, rows // 4), (cols % 4, rows % 4))
    picture = ax.images[0].get_array()
    assert picture.shape == (6, 10, 3)
    labels = {t.get_text() for t in ax.texts}
    assert {"(0,0)", "(1,0)", "(0,1)", "(1,1)"} <= labels   # blocks wide enough to label
    assert "3,2" in labels                                  # thread (x, y) in the cells
    borders = ax.collections[0].get_segments()
    # vertical borders at x = 3.5 and 7.5 in every row, horizontal at y = 3.5 in every column
    assert len(borders) == 2 * 6 + 10
    with pytest.raises(ValueError, match="1D maps"):
        thread_map(cols // 4, rows, launched=100)


def test_reduction_tree_returns_every_step_and_the_sum():
    values = [3, 1, 4, 1, 5, 9, 2, 6]
    levels = reduction_tree(values)
    assert len(levels) == 4                                 # loaded + strides 4, 2, 1
    assert levels[1][:4].tolist() == [8, 10, 6, 7]
    assert levels[-1][0] == sum(values)
    with pytest.raises(ValueError, match="power of 2"):
        reduction_tree([1, 2, 3])


def test_gpu_diagram_draws_warps_and_rejects_impossible_blocks():
    ax = gpu_diagram(n_sms=2, n_blocks=5, threads_per_block=64, blocks_per_sm=2)
    squares = [c for c in ax.collections if len(c.get_paths()) > 0]
    # 4 resident blocks × 2 warps × 32 thread squares
    assert sum(len(c.get_paths()) for c in squares) == 4 * 2 * 32
    assert "block 4" in {t.get_text() for t in ax.texts}      # the fifth block waits in the grid
    with pytest.raises(ValueError, match="1024"):
        gpu_diagram(threads_per_block=2048)
    with pytest.raises(ValueError, match="positive"):
        gpu_diagram(n_sms=0)


def test_gpu_diagram_hatches_only_blocks_that_wait():
    # 40 SMs (a T4) hold 10 blocks at once: none waits, even though only six SMs are drawn
    ax = gpu_diagram(n_sms=40, n_blocks=10)
    assert not [p for p in ax.patches if p.get_hatch()]
    # 3 SMs × 2 resident blocks: blocks 6–8 of 9 wait
    ax = gpu_diagram(n_sms=3, n_blocks=9, blocks_per_sm=2)
    assert len([p for p in ax.patches if p.get_hatch()]) == 3


def test_tiled_matmul_marks_the_band_one_tile_per_step():
    axes = tiled_matmul(n=8, tile=4, block=(1, 0))
    assert axes.shape == (2, 3)
    # step 1: A's tile (0, 1) is the loaded one (dark), tile (0, 0) was loaded before (light)
    a_step1 = axes[1, 0].images[0].get_array()
    assert a_step1[0, 4, 0] < a_step1[0, 0, 0] < a_step1[4, 0, 0]   # dark < light < untouched
    b_step0 = axes[0, 1].images[0].get_array()
    assert b_step0[0, 4, 0] < b_step0[4, 4, 0]                     # B's tile (0, 1) loaded at step 0, (1, 1) not yet
    assert "step 1" in axes[1, 2].get_title()
    with pytest.raises(ValueError, match="multiple of tile"):
        tiled_matmul(n=10, tile=4)
    with pytest.raises(ValueError, match="outside"):
        tiled_matmul(n=8, tile=4, block=(2, 0))


def test_warp_request_shows_sectors_and_banks():
    import numpy as np

    from course.plots import warp_request

    lanes = np.arange(32)
    coalesced = warp_request(lanes, 4 * lanes, shared=False, title="unit stride", summary="4 sectors")
    assert coalesced.get_images()[0].get_array().shape == (4, 32) and coalesced.get_title() == "unit stride: 4 sectors"
    strided = warp_request(lanes, 128 * lanes, shared=False)
    assert strided.get_images()[0].get_array().shape == (32, 32)
    column = warp_request(lanes, 128 * lanes, shared=True)   # a column of a 32×32 float tile: one bank
    image = np.asarray(column.get_images()[0].get_array())
    assert image.shape == (32, 32) and image[0].sum() == 32 and image[1:].sum() == 0
