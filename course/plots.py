"""Pictures of what GPU threads do: thread maps, a reduction tree, SMs and warps (notebook 01).

Notebook 01 draws every kernel's work with these; notebooks 06 and 10 reuse them.

- ``thread_map``     — which block (colour) and thread (shade, number) computed each element, 1D or 2D;
- ``reduction_tree`` — how a block sums its shared memory in log2(n) halving steps;
- ``gpu_diagram``    — a kernel's blocks queued onto a GPU's SMs, each block split into warps;
- ``tiled_matmul``   — which tiles of A and B one block of a tiled matrix multiply loads, step by step;
- ``warp_request``   — which lanes of one warp touch which 32-byte sectors or shared-memory banks in one
  request (notebook 03; ``Profile.plot_warp`` draws it from a kernel's access profile).

Everything is plain matplotlib; each function draws on ``ax`` (a new figure when None) and
returns it, so a notebook can add titles or put several maps side by side.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["thread_map", "reduction_tree", "gpu_diagram", "tiled_matmul", "block_colours", "warp_request"]

IDLE = (0.86, 0.86, 0.86)       # a launched thread with no element (i >= n): the guard's work
UNWRITTEN = (1.0, 0.78, 0.78)   # an element no thread wrote: a bug, or a grid too small
OUTSIDE = (1.0, 1.0, 1.0)       # padding past the last launched thread


def block_colours(block_ids, thread_ids, threads_per_block: int | None = None) -> np.ndarray:
    """RGB colours (shape + (3,)): hue per block, lighter for higher thread ids (notebook 01).

    Entries with a negative block id get ``UNWRITTEN``. ``threads_per_block`` sets the shading
    scale (default: the largest thread id + 1).
    """
    import matplotlib

    blocks = np.asarray(block_ids)
    threads = np.asarray(thread_ids)
    if blocks.shape != threads.shape:
        raise ValueError(f"block_ids {blocks.shape} and thread_ids {threads.shape} must have the same shape")
    palette = np.array(matplotlib.colormaps["tab10"].colors)
    written = blocks >= 0
    span = threads_per_block or (int(threads[written].max()) + 1 if written.any() else 1)
    colours = palette[np.where(written, blocks, 0) % len(palette)]
    # thread 0 has the block's full colour, the last thread is mixed halfway to white
    light = 0.6 * np.clip(threads, 0, None) / max(span - 1, 1)
    colours = colours + (1 - colours) * light[..., None]
    colours[~written] = UNWRITTEN
    return colours


def _linear(ids, name: str):
    """An int array from an int array or an (x, y) tuple of arrays; plus the (x, y) parts or None."""
    if isinstance(ids, tuple):
        if len(ids) != 2:
            raise ValueError(f"{name} as a tuple must be (x, y) arrays, got {len(ids)} arrays")
        x, y = (np.asarray(part) for part in ids)
        if x.shape != y.shape:
            raise ValueError(f"{name}: x {x.shape} and y {y.shape} must have the same shape")
        width = int(x.max()) + 1 if x.size else 1
        return np.where((x >= 0) & (y >= 0), y * width + x, -1), (x, y)
    ids = np.asarray(ids)
    if ids.dtype.kind not in "iu":
        raise ValueError(f"{name} must hold integers (block or thread numbers), got dtype {ids.dtype}")
    return ids, None


def _new_axes(ax, figsize):
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=figsize)
    return ax


def thread_map(block_ids, thread_ids, *, launched: int | None = None, row_length: int | None = None,
               annotate: bool | None = None, threads_per_block: int | None = None, ax=None,
               title: str | None = None, xlabel: str | None = None, ylabel: str | None = None):
    """Colour each element by the block (hue) and thread (shade) that computed it (notebook 01).

    1D: ``block_ids`` and ``thread_ids`` have one entry per element, as a kernel records them
    (``block_of[i] = blockIdx.x; thread_of[i] = threadIdx.x``); a negative block id means no
    thread wrote that element. ``launched`` (the grid's total threads) adds grey cells for the
    threads past the end that the ``if (i < n)`` guard keeps idle. Long arrays wrap into rows of
    ``row_length`` elements.

    2D: arrays of shape (rows, columns); either ids are ints or ``(x, y)`` tuples of arrays,
    e.g. ``(blockIdx.x map, blockIdx.y map)``, which label blocks as "(x,y)".
    Thread numbers are written in the cells when there are few (``annotate``).
    """
    blocks, block_parts = _linear(block_ids, "block_ids")
    threads, thread_parts = _linear(thread_ids, "thread_ids")
    if blocks.shape != threads.shape:
        raise ValueError(f"block_ids {blocks.shape} and thread_ids {threads.shape} must have the same "
                         "shape: one block and one thread number per element")
    if blocks.ndim == 1:
        return _thread_map_1d(blocks, threads, launched, row_length, annotate, threads_per_block, ax,
                              title, xlabel, ylabel)
    if blocks.ndim == 2:
        if launched is not None:
            raise ValueError("launched= is for 1D maps; a 2D map shows the elements only")
        return _thread_map_2d(blocks, threads, block_parts, thread_parts, annotate, threads_per_block, ax,
                              title, xlabel, ylabel)
    raise ValueError(f"thread_map draws 1D or 2D maps, got {blocks.ndim}D arrays of shape {blocks.shape}")


def _legend(ax, idle: bool, unwritten: bool):
    from matplotlib.patches import Patch

    handles = []
    if idle:
        handles.append(Patch(facecolor=IDLE, edgecolor="0.4", label="idle thread (i ≥ n)"))
    if unwritten:
        handles.append(Patch(facecolor=UNWRITTEN, edgecolor="0.4", label="no thread wrote here"))
    if handles:
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)


def _thread_map_1d(blocks, threads, launched, row_length, annotate, threads_per_block, ax, title, xlabel, ylabel):
    from matplotlib.collections import LineCollection

    n = blocks.size
    total = n if launched is None else int(launched)
    if total < n:
        raise ValueError(f"launched={launched} threads cannot cover {n} elements: launch at least n threads")
    if total == 0:
        raise ValueError("nothing to draw: no elements and no threads")
    if threads_per_block:
        span = int(threads_per_block)
    elif launched is not None and n and blocks.max() >= 0:
        span = max(total // (int(blocks.max()) + 1), 1)  # a standard launch: total = blocks × span
    else:
        span = max(int(threads.max()) + 1 if n else 1, 1)
    row_length = int(row_length or min(total, 64))
    if row_length < 1:
        raise ValueError(f"row_length must be at least 1, got {row_length}")
    rows = math.ceil(total / row_length)
    # data rows at odd indices; the even rows above them hold the block labels
    picture = np.ones((2 * rows, row_length, 3))
    # idle threads: their block and thread follow from the launch (i = block * span + thread)
    index = np.arange(total)
    all_blocks = np.concatenate([blocks, index[n:] // span])
    all_threads = np.concatenate([threads, index[n:] % span])
    colours = np.full((total, 3), IDLE)
    colours[:n] = block_colours(blocks, threads, span)
    picture[2 * (index // row_length) + 1, index % row_length] = colours
    ax = _new_axes(ax, (min(0.28 * row_length + 1.5, 14), 0.75 * rows + 1.2))
    ax.imshow(picture, aspect="auto", interpolation="nearest", extent=(-0.5, row_length - 0.5, 2 * rows - 0.5, -0.5))
    if annotate is None:
        annotate = total <= 256 and row_length <= 64
    borders, separators = [], []  # segments: black between blocks, white between threads
    for r in range(rows):
        y = 2 * r + 1
        borders += [[(-0.5, y - 0.5), (row_length - 0.5, y - 0.5)], [(-0.5, y + 0.5), (row_length - 0.5, y + 0.5)]]
        start, stop = r * row_length, min((r + 1) * row_length, total)
        run_start = start
        for i in range(start, stop + 1):
            if i == stop or all_blocks[i] != all_blocks[run_start]:
                x0, x1 = run_start - start - 0.5, i - start - 0.5
                borders += [[(x0, y - 0.5), (x0, y + 0.5)], [(x1, y - 0.5), (x1, y + 0.5)]]
                block = all_blocks[run_start]
                label = f"block {block}" if block >= 0 else "?"
                if (i - run_start) * 8 >= len(label) * 3 or i - run_start >= 6:
                    ax.text((x0 + x1) / 2, y - 0.75, label, ha="center", va="center", fontsize=8)
                run_start = i
            elif i > start:
                separators.append([(i - start - 0.5, y - 0.5), (i - start - 0.5, y + 0.5)])
        if annotate:
            for i in range(start, stop):
                text = "?" if i < n and blocks[i] < 0 else str(all_threads[i])
                ax.text(i - start, y, text, ha="center", va="center", fontsize=7, color="0.15")
    ax.add_collection(LineCollection(separators, colors="white", linewidths=0.5))
    ax.add_collection(LineCollection(borders, colors="black", linewidths=1.2))
    step = max(1, row_length // 8)
    ax.set_xticks(range(0, row_length, step))
    ax.set_yticks([2 * r + 1 for r in range(rows)], [f"{r * row_length}…" for r in range(rows)])
    ax.set_xlabel(xlabel or ("element index i" if rows == 1 else "i − (first index of the row)"))
    ax.set_ylabel(ylabel or ("" if rows == 1 else "row starts at i ="))
    ax.set_title(title or f"who computed each of {n} element{'s' * (n != 1)}: colour = block, number = thread")
    ax.tick_params(length=0)
    for side in ax.spines.values():
        side.set_visible(False)
    _legend(ax, idle=total > n, unwritten=bool((blocks < 0).any()))
    return ax


def _thread_map_2d(blocks, threads, block_parts, thread_parts, annotate, threads_per_block, ax, title, xlabel, ylabel):
    from matplotlib.collections import LineCollection
    from matplotlib.patches import Rectangle

    height, width = blocks.shape
    ax = _new_axes(ax, (min(0.3 * width + 2, 9), min(0.3 * height + 1.5, 7)))
    ax.imshow(block_colours(blocks, threads, threads_per_block), interpolation="nearest")
    # block borders: wherever two neighbours belong to different blocks
    segments = []
    for r, c in zip(*np.nonzero(blocks[:, 1:] != blocks[:, :-1])):
        segments.append([(c + 0.5, r - 0.5), (c + 0.5, r + 0.5)])
    for r, c in zip(*np.nonzero(blocks[1:, :] != blocks[:-1, :])):
        segments.append([(c - 0.5, r + 0.5), (c + 0.5, r + 0.5)])
    ax.add_collection(LineCollection(segments, colors="black", linewidths=1.4))
    ax.add_patch(Rectangle((-0.5, -0.5), width, height, fill=False, edgecolor="black", linewidth=1.4))
    if annotate is None:
        annotate = blocks.size <= 256
    if annotate:
        for r in range(height):
            for c in range(width):
                if blocks[r, c] < 0:
                    text = "?"
                elif thread_parts is not None:
                    text = f"{thread_parts[0][r, c]},{thread_parts[1][r, c]}"
                else:
                    text = str(threads[r, c])
                ax.text(c, r, text, ha="center", va="center", fontsize=6 if thread_parts else 7, color="0.15")
    # block labels at the centre of each block, when they fit
    ids = np.unique(blocks[blocks >= 0])
    if len(ids) <= 64:
        for b in ids:
            rows_b, cols_b = np.nonzero(blocks == b)
            if np.ptp(cols_b) + 1 < 3:  # too narrow for a label
                continue
            if block_parts is not None:
                label = f"({block_parts[0][rows_b[0], cols_b[0]]},{block_parts[1][rows_b[0], cols_b[0]]})"
            else:
                label = str(b)
            ax.text(cols_b.mean(), rows_b.mean(), label, ha="center", va="center", fontsize=9,
                    fontweight="bold", color="black", alpha=0.35 if annotate else 0.9)
    ax.set_xlabel(xlabel or "column (x = blockIdx.x·blockDim.x + threadIdx.x)")
    ax.set_ylabel(ylabel or "row (y = blockIdx.y·blockDim.y + threadIdx.y)")
    ax.set_title(title or "who computed each element: colour = block, shade = thread")
    _legend(ax, idle=False, unwritten=bool((blocks < 0).any()))
    return ax


def reduction_tree(values, *, ax=None, title: str | None = None) -> list:
    """Draw a shared-memory tree sum of ``values`` (a power of 2 of them); return each step's array (notebook 01).

    Step k halves the stride: thread t < stride adds ``cache[t + stride]`` into ``cache[t]``,
    then ``__syncthreads()``; after log2(n) steps ``cache[0]`` holds the block's sum.
    """
    from matplotlib.patches import Rectangle

    cache = np.array(values, dtype=float).ravel()
    n = cache.size
    if n < 2 or n & (n - 1):
        raise ValueError(f"a tree reduction halves the stride each step: give a power of 2 (≥ 2) values, got {n}")
    levels, strides = [cache.copy()], [None]
    stride = n // 2
    while stride > 0:
        cache[:stride] += cache[stride:2 * stride]
        levels.append(cache.copy())
        strides.append(stride)
        stride //= 2
    ax = _new_axes(ax, (min(0.75 * n + 2, 12), 0.75 * len(levels) + 1))
    fmt = (lambda v: f"{v:g}") if np.allclose(levels[0], np.round(levels[0])) else (lambda v: f"{v:.2g}")
    for k, (level, stride) in enumerate(zip(levels, strides)):
        active = n if stride is None else stride
        for t in range(n):
            live = t < active
            ax.add_patch(Rectangle((t - 0.4, k - 0.3), 0.8, 0.6, facecolor="tab:blue" if live else "0.92",
                                   alpha=0.35 if live else 1.0, edgecolor="0.3"))
            ax.text(t, k, fmt(level[t]), ha="center", va="center", fontsize=8, color="black" if live else "0.6")
        if stride is not None:
            for t in range(stride):
                ax.annotate("", xy=(t, k - 0.3), xytext=(t + stride, k - 0.7),
                            arrowprops=dict(arrowstyle="->", color="tab:orange", lw=1.0))
                ax.annotate("", xy=(t, k - 0.3), xytext=(t, k - 0.7),
                            arrowprops=dict(arrowstyle="->", color="0.4", lw=0.8))
    ax.set_xlim(-0.6, n - 0.4)
    ax.set_ylim(len(levels) - 0.4, -0.6)
    ax.set_yticks(range(len(levels)), ["loaded"] + [f"stride {s}" for s in strides[1:]])
    ax.set_xticks(range(n))
    ax.set_xlabel("threadIdx.x = index in shared memory")
    ax.set_ylabel("after __syncthreads()")
    ax.set_title(title or f"tree sum of {n} values in shared memory: {len(levels) - 1} steps, sum = {fmt(levels[-1][0])}")
    for side in ax.spines.values():
        side.set_visible(False)
    return levels


def gpu_diagram(n_sms: int = 4, n_blocks: int = 10, threads_per_block: int = 128, *, blocks_per_sm: int = 2,
                warp_size: int = 32, ax=None, title: str | None = None):
    """A launch's blocks queued onto SMs; each resident block split into warps of 32 threads (notebook 01).

    Block ``i`` runs on SM ``i % n_sms``; at most ``blocks_per_sm`` blocks are resident on an SM
    at once and the rest wait until one finishes. Each warp is a row of ``warp_size`` threads
    that issue one instruction together.
    """
    import matplotlib
    from matplotlib.collections import PatchCollection
    from matplotlib.patches import FancyBboxPatch, Rectangle

    for name, value in (("n_sms", n_sms), ("n_blocks", n_blocks), ("threads_per_block", threads_per_block),
                        ("blocks_per_sm", blocks_per_sm), ("warp_size", warp_size)):
        if not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    if threads_per_block > 1024:
        raise ValueError(f"threads_per_block={threads_per_block}: CUDA allows at most 1024 threads per block")
    shown_sms = min(n_sms, 6)  # draw at most six SMs; the title says how many there are
    warps = math.ceil(threads_per_block / warp_size)
    shown_warps = min(warps, 8)
    palette = matplotlib.colormaps["tab10"].colors
    sm_w, gap = 3.0, 0.3
    block_h = 0.25 + 0.16 * shown_warps
    sm_h = 0.6 + blocks_per_sm * (block_h + 0.15) + 0.45
    width_units = 2.4 + shown_sms * (sm_w + gap) + gap + 0.3
    height_units = sm_h + 2.1
    scale = min(0.72, 12 / width_units)  # inches per data unit
    ax = _new_axes(ax, (width_units * scale, height_units * scale + 0.4))

    # the grid: one kernel launch = n_blocks blocks
    cols = 2
    grid_rows = math.ceil(min(n_blocks, 16) / cols)
    ax.text(0.9, sm_h + 0.55, "grid = one launch", ha="center", fontsize=9, fontweight="bold")
    for i in range(min(n_blocks, 16)):
        x, y = (i % cols) * 0.9 + 0.05, sm_h - 0.1 - (i // cols + 1) * 0.5
        resident = i // n_sms < blocks_per_sm  # on an SM now (drawn or not), else waiting for one
        ax.add_patch(Rectangle((x, y), 0.8, 0.4, facecolor=palette[i % 10], alpha=0.8 if resident else 0.25,
                               edgecolor="0.3", hatch=None if resident else "//"))
        ax.text(x + 0.4, y + 0.2, f"block {i}", ha="center", va="center", fontsize=7)
    if n_blocks > 16:
        ax.text(0.9, sm_h - 0.25 - (grid_rows + 1) * 0.5, f"… {n_blocks} blocks", ha="center", fontsize=8)
    ax.text(0.9, -0.5, "hatched: waiting for\na free SM", ha="center", va="top", fontsize=7, color="0.3")

    # the GPU: SMs side by side over the global memory
    x0 = 2.4
    gpu_w = shown_sms * (sm_w + gap) + gap
    ax.add_patch(FancyBboxPatch((x0, -0.9), gpu_w, sm_h + 1.3, boxstyle="round,pad=0.05",
                                facecolor="0.97", edgecolor="0.2"))
    drawn = f", {shown_sms} drawn" if shown_sms < n_sms else ""
    ax.text(x0 + gpu_w / 2, sm_h + 0.55, f"GPU: {n_sms} SMs (streaming multiprocessors{drawn})", ha="center",
            fontsize=9, fontweight="bold")
    ax.add_patch(Rectangle((x0 + gap, -0.75), gpu_w - 2 * gap, 0.45, facecolor="tab:gray", alpha=0.35, edgecolor="0.3"))
    ax.text(x0 + gpu_w / 2, -0.525, "global memory (DRAM/HBM): every block of every SM reads and writes here",
            ha="center", va="center", fontsize=8)
    cell = (sm_w - 0.4) / warp_size
    thread_cells, thread_faces = [], []  # one collection for every thread square: fast to draw
    for s in range(shown_sms):
        sx = x0 + gap + s * (sm_w + gap)
        ax.add_patch(Rectangle((sx, 0.0), sm_w, sm_h, facecolor="white", edgecolor="0.2"))
        ax.text(sx + sm_w / 2, sm_h - 0.2, f"SM {s}", ha="center", va="center", fontsize=8, fontweight="bold")
        for slot in range(blocks_per_sm):
            i = slot * n_sms + s
            by = sm_h - 0.45 - (slot + 1) * (block_h + 0.15)
            if i >= n_blocks:
                ax.text(sx + sm_w / 2, by + block_h / 2, "(free slot)", ha="center", va="center", fontsize=7, color="0.5")
                continue
            ax.add_patch(Rectangle((sx + 0.1, by), sm_w - 0.2, block_h, facecolor=palette[i % 10], alpha=0.25,
                                   edgecolor="0.3"))
            ax.text(sx + 0.15, by + block_h - 0.12, f"block {i}: {warps} warp{'s' * (warps > 1)}",
                    fontsize=6.5, va="center")
            for w in range(shown_warps):
                wy = by + block_h - 0.3 - w * 0.16
                threads_here = min(warp_size, threads_per_block - w * warp_size)
                for t in range(warp_size):
                    thread_cells.append(Rectangle((sx + 0.2 + t * cell, wy - 0.05), cell * 0.85, 0.1))
                    thread_faces.append(palette[i % 10] if t < threads_here else (1.0, 1.0, 1.0))
        ax.add_patch(Rectangle((sx + 0.1, 0.08), sm_w - 0.2, 0.3, facecolor="tab:green", alpha=0.3, edgecolor="0.3"))
        ax.text(sx + sm_w / 2, 0.23, "shared memory, registers (on chip)", ha="center", va="center", fontsize=6)
    ax.add_collection(PatchCollection(thread_cells, facecolors=thread_faces, edgecolors="none"))
    ax.set_xlim(-0.1, x0 + gpu_w + 0.2)
    ax.set_ylim(-1.2, sm_h + 0.9)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(title or f"{n_blocks} blocks of {threads_per_block} threads on {n_sms} SMs "
                 f"(each row of small squares is one warp of {warp_size} threads)", fontsize=10)
    return ax


def tiled_matmul(n: int = 8, tile: int = 4, block: tuple = (1, 0), *, axes=None, title: str | None = None):
    """The tiled matrix multiply C = A·B for one block, one row of pictures per step (notebook 01).

    Block ``(bx, by)`` computes the ``tile``×``tile`` tile of C at tile-row ``by``, tile-column ``bx``.
    At step k it loads tile (by, k) of A and tile (k, bx) of B into shared memory (dark), after the
    tiles of earlier steps (light): a row band of A and a column band of B, one tile at a time.
    Returns the axes (``steps`` rows × 3).
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    for label, value in (("n", n), ("tile", tile)):
        if not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{label} must be a positive int, got {value!r}")
    if n % tile:
        raise ValueError(f"n={n} must be a multiple of tile={tile} for the picture (the kernel itself pads)")
    steps = n // tile
    bx, by = block
    if not (0 <= bx < steps and 0 <= by < steps):
        raise ValueError(f"block {block} is outside the {steps}×{steps} grid of blocks for n={n}, tile={tile}")
    if axes is None:
        _, axes = plt.subplots(steps, 3, figsize=(8.4, 2.8 * steps + 0.4), squeeze=False)
    axes = np.asarray(axes).reshape(steps, 3)
    loaded, earlier, idle = (0.12, 0.42, 0.76), (0.62, 0.78, 0.92), (0.95, 0.95, 0.95)
    result = (0.95, 0.55, 0.2)
    for k in range(steps):
        pictures = {"A": np.ones((n, n, 3)) * idle, "B": np.ones((n, n, 3)) * idle, "C": np.ones((n, n, 3)) * idle}
        for j in range(k + 1):
            colour = loaded if j == k else earlier
            pictures["A"][by * tile:(by + 1) * tile, j * tile:(j + 1) * tile] = colour
            pictures["B"][j * tile:(j + 1) * tile, bx * tile:(bx + 1) * tile] = colour
        pictures["C"][by * tile:(by + 1) * tile, bx * tile:(bx + 1) * tile] = result
        for ax, name in zip(axes[k], ("A", "B", "C")):
            ax.imshow(pictures[name], extent=(0, n, n, 0))
            for edge in range(0, n + 1, tile):
                ax.axhline(edge, color="0.3", lw=1)
                ax.axvline(edge, color="0.3", lw=1)
            ax.add_patch(Rectangle((0, 0), n, n, fill=False, lw=1.5, color="0.1"))
            ax.set_xticks(range(0, n + 1, tile))
            ax.set_yticks(range(0, n + 1, tile))
            ax.set_xlabel("column")
            ax.set_ylabel("row")
            what = {"A": f"A: tile ({by}, {k}) into A_tile", "B": f"B: tile ({k}, {bx}) into B_tile",
                    "C": f"C: block ({bx}, {by}) adds to its tile"}[name]
            ax.set_title(f"step {k}: {what}", fontsize=9)
    fig = axes[0, 0].figure
    fig.suptitle(title or f"Tiled matmul (n = {n}, TILE = {tile}), block (x={bx}, y={by}): one tile of A and one of B "
                 f"per step\n(dark: loaded now; light: earlier steps; tiles named (tile row, tile column))", fontsize=10)
    fig.tight_layout()
    return axes


def warp_request(lanes, addresses, *, shared: bool, ax=None, title: str = "", summary: str = ""):
    """One warp-level request: lane (x) against the 32-byte sector (global memory, the distinct sectors
    in address order) or the 4-byte bank (shared memory) it touches (y). A column with one mark per lane
    and few rows is a coalesced or conflict-free request; a diagonal is 32 sectors, or a 32-way conflict
    when the marks of one bank row are different words."""
    import matplotlib.pyplot as plt

    lanes = np.asarray(lanes).astype(int)
    addresses = np.asarray(addresses).astype(np.int64)
    if shared:
        slot, what, n_slots = (addresses // 4 % 32).astype(int), "bank", 32
    else:
        sector = addresses // 32
        distinct = np.unique(sector)
        slot, what, n_slots = np.searchsorted(distinct, sector), "sector (distinct, in address order)", len(distinct)
    if ax is None:
        _, ax = plt.subplots(figsize=(9, 3.6))
    grid = np.zeros((max(n_slots, 1), 32))
    grid[slot, lanes] = 1
    ax.imshow(grid, aspect="auto", cmap="Blues", origin="lower", interpolation="nearest")
    ax.set_xlabel("lane of the warp")
    ax.set_ylabel(what)
    ax.set_title(f"{title}: {summary}" if title and summary else title or summary)
    return ax

