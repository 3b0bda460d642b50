"""GPU-only calls behind small helpers that also run (and say so) on a CPU (notebooks 08 and 10).

Each helper takes a ``device`` and does the right thing on both: on a CPU the memory
statistics are None and a stream context does nothing. ``make gpu-check`` exercises the GPU
side of every helper here on a lent GPU.
"""

from __future__ import annotations

import contextlib


def is_cuda(device) -> bool:
    """True for "cuda", "cuda:1" or a CUDA torch.device; False for "cpu" and the like."""
    return str(getattr(device, "type", device)).startswith("cuda")


def synchronize(device=None) -> None:
    """Wait for all queued GPU work on ``device``; nothing to wait for on a CPU."""
    import torch

    if is_cuda(device if device is not None else ("cuda" if torch.cuda.is_available() else "cpu")):
        torch.cuda.synchronize(device)


def memory_stats(device) -> dict | None:
    """Current and peak memory held by PyTorch's caching allocator on ``device``, in MiB.

    Returns None on a CPU (PyTorch keeps no such statistics there).
    """
    import torch

    if not is_cuda(device):
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

    if is_cuda(device):
        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)


def empty_cache(device=None) -> None:
    """Hand cached, unused GPU memory back to the driver (no-op on a CPU)."""
    import torch

    if (device is None or is_cuda(device)) and torch.cuda.is_available():
        torch.cuda.empty_cache()


@contextlib.contextmanager
def stream(device):
    """Run the block on a new CUDA stream of ``device``; on a CPU, just run it.

    Yields the stream (None on a CPU) so the caller can wait for it.
    """
    import torch

    if not is_cuda(device):
        yield None
        return
    side = torch.cuda.Stream(device=device)
    with torch.cuda.stream(side):
        yield side


# cudaDeviceGetAttribute numbers (stable in CUDA's enum): 13 SM clock, 16 SMs, 36 memory clock,
# 37 memory bus width, 75/76 compute capability. CUDA 13 dropped some of them from the device
# properties struct, so we ask for the attributes one by one.
_ATTRIBUTES = {"clock_khz": 13, "sms": 16, "memory_clock_khz": 36, "bus_bits": 37, "major": 75, "minor": 76}


def device_properties() -> dict | None:
    """The GPU's theoretical peaks from its properties (CuPy), or None without a usable GPU (notebook 01).

    ``peak GB/s`` = 2 (double data rate) × memory clock × bus width in bytes;
    ``peak GFLOP/s`` (FP32) = 2 (a fused multiply-add) × FP32 lanes per SM × SMs × SM clock.
    A figure the driver does not report is None.
    """
    from course import env

    if not env.cupy_usable():
        return None
    import cupy

    def attribute(number):
        try:
            return cupy.cuda.runtime.deviceGetAttribute(number, cupy.cuda.Device().id) or None
        except Exception:  # an attribute this CUDA version no longer reports
            return None

    a = {name: attribute(number) for name, number in _ATTRIBUTES.items()}
    major, minor = a["major"], a["minor"] or 0
    # FP32 lanes per SM by compute capability (CUDA C++ Programming Guide, "Arithmetic Instructions")
    lanes = {(6, 1): 128, (6, 2): 128, (8, 6): 128, (8, 7): 128, (8, 9): 128}.get(
        (major, minor), {5: 128, 6: 64, 7: 64, 8: 64}.get(major, 128 if (major or 0) >= 9 else None))
    name = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)["name"]
    return {
        "name": name.decode() if isinstance(name, bytes) else str(name),
        "compute capability": f"{major}.{minor}",
        "SMs": a["sms"],
        "peak GB/s": (2 * a["memory_clock_khz"] * 1e3 * a["bus_bits"] / 8 / 1e9
                      if a["memory_clock_khz"] and a["bus_bits"] else None),
        "peak GFLOP/s": (2 * lanes * a["sms"] * a["clock_khz"] * 1e3 / 1e9
                         if lanes and a["sms"] and a["clock_khz"] else None),
    }
