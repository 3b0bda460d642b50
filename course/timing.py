"""The course's one timing helper: right on the CPU and on a GPU (notebook 00, used everywhere).

GPU work is asynchronous: a Python timer around a kernel launch measures the launch, not the
work. ``benchmark`` therefore warms up first (compilation, caches, cuDNN autotuning), then on
a GPU brackets each call with CUDA events and synchronises; on the CPU it uses
``time.perf_counter``. It reports the median and the spread of many repeats, because one
measurement on a shared machine is noise.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field


@dataclass
class Timing:
    """Seconds per call over ``repeat`` calls, measured by ``benchmark``."""

    label: str
    device: str
    times: list = field(repr=False)

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def best(self) -> float:
        return min(self.times)

    @property
    def spread(self) -> float:
        """Interquartile range in seconds (half the calls fall within it)."""
        if len(self.times) < 4:
            return max(self.times) - min(self.times)
        q = statistics.quantiles(self.times, n=4)
        return q[2] - q[0]

    def rate(self, amount: float) -> float:
        """``amount`` per second at the median time, e.g. ``t.rate(bytes_moved) / 1e9`` for GB/s."""
        return amount / self.median

    def __str__(self) -> str:
        return (
            f"{self.label}: {format_seconds(self.median)} ± {format_seconds(self.spread / 2)}"
            f" (median of {len(self.times)}, {self.device})"
        )

    def as_dict(self) -> dict:
        return {
            "label": self.label,
            "device": self.device,
            "median_s": self.median,
            "iqr_s": self.spread,
            "best_s": self.best,
            "repeats": len(self.times),
        }


def format_seconds(seconds: float) -> str:
    """1.2e-05 → '12.0 µs'."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if abs(seconds) >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def _gpu_kind(device) -> str | None:
    """'torch' or 'cupy' when the timed work runs on a GPU, else None."""
    if device is None:
        # Default: the course's device — a GPU when torch or CuPy can use one.
        from course import env

        if env.torch_cuda_usable():
            return "torch"
        if env.cupy_usable():
            return "cupy"
        return None
    name = str(getattr(device, "type", device)).lower()
    if name.startswith("cuda") or name == "gpu":
        return "torch"
    if name == "cupy":
        return "cupy"
    if name == "cpu":
        return None
    raise ValueError(f"device must be 'cpu', 'cuda', 'cupy', a torch.device or None, got {device!r}")


class _Events:
    """CUDA events from torch or CuPy: the only GPU-only calls of this module."""

    def __init__(self, kind: str):
        if kind == "torch":
            import torch

            self._make = lambda: torch.cuda.Event(enable_timing=True)
            self.synchronize = torch.cuda.synchronize
        else:
            import cupy

            self._make = cupy.cuda.Event
            self.synchronize = cupy.cuda.Device().synchronize
        self.kind = kind

    def time(self, fn, args, kwargs) -> float:
        start, end = self._make(), self._make()
        start.record()
        fn(*args, **kwargs)
        end.record()
        end.synchronize()
        if self.kind == "torch":
            return start.elapsed_time(end) / 1e3
        import cupy

        return cupy.cuda.get_elapsed_time(start, end) / 1e3


def benchmark(fn, *args, device=None, warmup: int = 2, repeat: int | None = None,
              min_time: float = 0.2, max_time: float = 10.0, label: str | None = None, **kwargs) -> Timing:
    """Time ``fn(*args, **kwargs)`` correctly on ``device`` and return a ``Timing``.

    ``warmup`` calls are not timed. With ``repeat=None`` the call is repeated until
    ``min_time`` seconds have passed (at least 5 times, at most ``max_time`` seconds in all).
    ``device``: None (the course's device), "cpu", "cuda" / a torch.device, or "cupy".
    """
    if not callable(fn):
        raise TypeError(f"benchmark needs a function to call, got {type(fn).__name__}")
    if repeat is not None and repeat < 1:
        raise ValueError(f"repeat must be at least 1, got {repeat}")
    kind = _gpu_kind(device)
    events = _Events(kind) if kind else None
    for _ in range(max(0, warmup)):
        fn(*args, **kwargs)
    if events:
        events.synchronize()

    times: list[float] = []
    started = time.perf_counter()
    while True:
        if events:
            times.append(events.time(fn, args, kwargs))
        else:
            t0 = time.perf_counter()
            fn(*args, **kwargs)
            times.append(time.perf_counter() - t0)
        elapsed = time.perf_counter() - started
        if repeat is not None:
            if len(times) >= repeat:
                break
        elif (len(times) >= 5 and elapsed >= min_time) or elapsed >= max_time:
            break
    where = "cpu" if kind is None else ("cuda (events)" if kind == "torch" else "cupy (events)")
    return Timing(label or getattr(fn, "__name__", "call"), where, times)
