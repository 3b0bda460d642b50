"""GPU-only calls behind small helpers that also run (and say so) on a CPU (notebooks 06 and 08).

Each helper takes a ``device`` and does the right thing on both: on a CPU the memory
statistics are None and a stream context does nothing. ``make gpu-check`` exercises the GPU
side of every helper here on a lent GPU.
"""

from __future__ import annotations

import contextlib


def _is_cuda(device) -> bool:
    return str(getattr(device, "type", device)).startswith("cuda")


def synchronize(device=None) -> None:
    """Wait for all queued GPU work on ``device``; nothing to wait for on a CPU."""
    import torch

    if _is_cuda(device if device is not None else ("cuda" if torch.cuda.is_available() else "cpu")):
        torch.cuda.synchronize(device)


def memory_stats(device) -> dict | None:
    """Current and peak memory held by PyTorch's caching allocator on ``device``, in MiB.

    Returns None on a CPU (PyTorch keeps no such statistics there).
    """
    import torch

    if not _is_cuda(device):
        return None
    mib = 2**20
    return {
        "allocated_MiB": torch.cuda.memory_allocated(device) / mib,
        "reserved_MiB": torch.cuda.memory_reserved(device) / mib,
        "peak_allocated_MiB": torch.cuda.max_memory_allocated(device) / mib,
    }


def reset_peak_memory(device) -> None:
    """Start a new peak-memory measurement on ``device`` (no-op on a CPU)."""
    import torch

    if _is_cuda(device):
        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)


def empty_cache(device=None) -> None:
    """Hand cached, unused GPU memory back to the driver (no-op on a CPU)."""
    import torch

    if (device is None or _is_cuda(device)) and torch.cuda.is_available():
        torch.cuda.empty_cache()


@contextlib.contextmanager
def stream(device):
    """Run the block on a new CUDA stream of ``device``; on a CPU, just run it.

    Yields the stream (None on a CPU) so the caller can wait for it.
    """
    import torch

    if not _is_cuda(device):
        yield None
        return
    side = torch.cuda.Stream(device=device)
    with torch.cuda.stream(side):
        yield side
