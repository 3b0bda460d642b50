"""Timing, right on the CPU and on a GPU: ``benchmark``, ``Timing``, CUDA events, the profiler's timeline.

GPU work is asynchronous: a Python timer around a kernel launch measures the launch, not the
work. ``benchmark`` therefore warms up first (compilation, caches, cuDNN autotuning), then on
a GPU brackets each call with CUDA events (``CudaEvents``) and waits for the end event; on the
CPU it uses ``time.perf_counter``. It reports the median and the spread of many repeats,
because one measurement on a shared machine is noise (notebook 00; used everywhere).

``profile_timeline`` runs a function under ``torch.profiler`` and returns what ran when, per
CPU thread and GPU stream; ``plot_timeline`` draws it (notebook 10).

Devices follow ``course.gpu``: "cpu", "cuda", "cuda:N" or a torch.device; None means
``course.env.device()``. CuPy work is "cuda" too.
"""

from __future__ import annotations

import json
import math
import os
import re
import statistics
import tempfile
import time
from dataclasses import dataclass, field

from course import gpu

__all__ = ["Timing", "format_seconds", "CudaEvents", "benchmark", "profiler", "trace_events", "Span",
           "profile_timeline", "plot_timeline"]

#: The clock of CPU timings and of the stopping rule (a test replaces it with a fake one).
_clock = time.perf_counter


@dataclass
class Timing:
    """Seconds per call over the timed calls of ``benchmark``."""

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
        """How much the calls varied, in seconds: the interquartile range (the middle half of the
        calls lies within it) with 4 or more calls, the full range (slowest − fastest) with fewer."""
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


def format_seconds(seconds: float) -> str:
    """A duration with a readable unit and 3 significant digits: 1.2e-05 → '12 µs', 0.9999 → '1 s'."""
    if not math.isfinite(seconds):
        return f"{seconds} s"
    rounded = float(f"{seconds:.3g}")  # round first, so 0.9999 s is '1 s', not '1e+03 ms'
    if abs(rounded) >= 1000:
        return f"{rounded:,.0f} s"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if abs(rounded) >= scale:
            return f"{rounded / scale:.3g} {unit}"
    return f"{rounded / 1e-9:.3g} ns"


class CudaEvents:
    """Times calls on a CUDA ``device`` with CUDA events: marks in the GPU's own queue.

    Uses PyTorch's events when PyTorch can reach the GPU, else CuPy's. The events are recorded
    on the current stream; PyTorch's and CuPy's default streams are the same legacy default
    stream, which waits for the other (blocking) streams, so either library's events time
    either library's work.
    """

    def __init__(self, device="cuda"):
        from course import env

        if not gpu.is_cuda(device):
            raise ValueError(f"CUDA events time GPU work; {device!r} is not a CUDA device (time CPU work "
                             "with benchmark(..., device='cpu'))")
        self.device = device
        self.index = gpu._index(device)
        if env.torch_cuda_usable():
            self.library = "torch"
        elif env.cupy_usable():
            self.library = "cupy"
        else:
            raise gpu._no_gpu(device)

    def _event(self):
        if self.library == "torch":
            import torch

            return torch.cuda.Event(enable_timing=True)
        import cupy

        with cupy.cuda.Device(self.index):
            return cupy.cuda.Event()

    def _stream(self):
        if self.library == "torch":
            import torch

            return torch.cuda.current_stream(self.index)
        import cupy

        return cupy.cuda.get_current_stream()

    def _milliseconds(self, start, end) -> float:
        if self.library == "torch":
            return start.elapsed_time(end)
        import cupy

        return cupy.cuda.get_elapsed_time(start, end)

    def time(self, fn, *args, **kwargs) -> float:
        """Seconds the GPU spent on ``fn(*args, **kwargs)``, measured between two events."""
        start, end = self._event(), self._event()
        start.record(self._stream())  # a mark in the GPU's queue, before the work
        fn(*args, **kwargs)           # the CPU queues the work and returns at once
        end.record(self._stream())    # a mark after the work
        end.synchronize()             # the CPU waits until the GPU has passed the end mark
        return self._milliseconds(start, end) / 1e3


def benchmark(fn, *args, device=None, warmup: int = 2, repeat: int | None = None,
              min_time: float = 0.2, max_time: float = 10.0, label: str | None = None, **kwargs) -> Timing:
    """Time ``fn(*args, **kwargs)`` correctly on ``device`` and return a ``Timing``.

    ``warmup`` calls are not timed; on a GPU the device is then synchronised. The timed calls
    stop by one rule: with ``repeat=None``, when at least 5 calls and ``min_time`` seconds have
    passed; with ``repeat=N``, after N calls; in both cases as soon as ``max_time`` seconds have
    passed (at least one call is always timed). ``device``: "cpu", "cuda", "cuda:N", a
    torch.device, or None for ``course.env.device()``; CuPy work is "cuda".

    Under a step cap (``COURSE_MAX_STEPS``, ``course.env.max_steps()``) at most that many calls
    run in all, warm-ups included: at most one warm-up (none under a cap of 1), then at least
    one timed call. Such a run checks that the code works at its sizes; its times mean nothing.
    """
    if not callable(fn):
        raise TypeError(f"benchmark needs a function to call, got {type(fn).__name__}")
    if repeat is not None and (not isinstance(repeat, int) or repeat < 1):
        raise ValueError(f"repeat must be a whole number >= 1 (or None to time until min_time), got {repeat!r}")
    if not isinstance(warmup, int) or warmup < 0:
        raise ValueError(f"warmup must be a whole number >= 0, got {warmup!r}")
    if not min_time >= 0 or not max_time > 0 or max_time < min_time:
        raise ValueError(f"need 0 <= min_time <= max_time and max_time > 0, got min_time={min_time!r}, "
                         f"max_time={max_time!r}")
    from course import env

    cap = env.max_steps()
    if cap is not None:  # a size check (COURSE_MAX_STEPS): a few calls prove the code runs, not its speed
        warmup = min(warmup, 1, cap - 1)
        repeat = min(repeat or cap, cap - warmup)
    events = CudaEvents(device) if gpu.is_cuda(device) else None
    for _ in range(warmup):
        fn(*args, **kwargs)
    if events:
        gpu.synchronize(device)

    times: list[float] = []
    started = _clock()
    while True:
        if events:
            times.append(events.time(fn, *args, **kwargs))
        else:
            t0 = _clock()
            fn(*args, **kwargs)
            times.append(_clock() - t0)
        elapsed = _clock() - started
        enough = len(times) >= repeat if repeat is not None else (len(times) >= 5 and elapsed >= min_time)
        if enough or elapsed >= max_time:
            break
    where = "cpu" if events is None else f"{gpu.parse_device(device)} ({events.library} events)"
    return Timing(label or getattr(fn, "__name__", "call"), where, times)


# ----------------------------------------------------------------------------------------
# A profiler timeline
# ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Span:
    """One bar of a timeline: a row (CPU thread or GPU stream), a name, start and length in µs."""

    row: str
    name: str
    start_us: float
    duration_us: float
    kind: str  # "cpu", "cpu copy", "kernel" or "copy"


#: CPU work drawn as a copy: PyTorch's copying ops and regions labelled "copy...".
_COPY_NAME = re.compile(r"^copy|aten::(to|_to_copy|copy_|clone)$", re.I)


def profiler(device=None, **options):
    """``torch.profiler.profile`` recording the CPU and, on a CUDA ``device``, the GPU's kernels and copies.

    On a CPU, Kineto (the profiler's backend) would print start/stop lines and a GPU-count error
    into the notebook: quieted. ``options`` go to ``torch.profiler.profile`` (``profile_memory=True``...).
    """
    from torch.profiler import ProfilerActivity, profile

    on_gpu = gpu.is_cuda(device)
    if not on_gpu:
        os.environ.setdefault("KINETO_LOG_LEVEL", "6")  # read when the profiler first starts
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if on_gpu else [])
    return profile(activities=activities, **options)


def trace_events(prof, keep_at=None) -> list:
    """The events of a finished torch.profiler run, read from its Chrome trace (exported once:
    to ``keep_at`` when given, else to a temporary file)."""
    if keep_at is not None:
        path = str(keep_at)
    else:
        handle, path = tempfile.mkstemp(suffix=".json")
        os.close(handle)
    try:
        prof.export_chrome_trace(path)
        with open(path, encoding="utf-8") as f:
            trace = json.load(f)
    finally:
        if keep_at is None:
            os.unlink(path)
    return trace["traceEvents"] if isinstance(trace, dict) else trace


def _top_level(spans: list[Span]) -> list[Span]:
    """Drop spans nested inside another span of the same row (an op's sub-ops)."""
    kept, end_of = [], {}
    for span in sorted(spans, key=lambda s: (s.row, s.start_us, -s.duration_us)):
        if span.start_us < end_of.get(span.row, float("-inf")):
            continue
        kept.append(span)
        end_of[span.row] = span.start_us + span.duration_us
    return kept


def profile_timeline(fn, *args, device=None, trace_path=None, **kwargs) -> list[Span]:
    """Run ``fn`` under torch.profiler and return its timeline: top-level CPU work per thread and,
    on a GPU, every kernel and copy per CUDA stream. On a CPU there are only CPU rows.

    ``trace_path``: also save the Chrome trace there (open it in https://ui.perfetto.dev).
    Label parts of ``fn`` with ``torch.profiler.record_function("name")`` to see them by name.
    """
    device = gpu.parse_device(device)
    with profiler(device) as prof:
        fn(*args, **kwargs)
        gpu.synchronize(device)  # the GPU's work belongs to the trace: wait for it inside
    spans = []
    for event in trace_events(prof, keep_at=trace_path):
        if event.get("ph") != "X" or "dur" not in event:
            continue
        category = event.get("cat", "")
        if category in ("cpu_op", "user_annotation"):
            row, kind = f"CPU thread {event.get('tid')}", "cpu"
            if _COPY_NAME.search(event.get("name", "")):
                kind = "cpu copy"
        elif category == "kernel":
            row, kind = f"GPU stream {event.get('tid')}", "kernel"
        elif category in ("gpu_memcpy", "gpu_memset"):
            row, kind = f"GPU stream {event.get('tid')}", "copy"
        else:
            continue
        spans.append(Span(row, event.get("name", "?"), float(event["ts"]), float(event["dur"]), kind))
    if not spans:
        return []
    spans = _top_level(spans)
    start = min(s.start_us for s in spans)
    threads = sorted({s.row for s in spans if s.row.startswith("CPU thread")})
    names = {row: ("CPU" if len(threads) == 1 else f"CPU {k}") for k, row in enumerate(threads)}
    return [Span(names.get(s.row, s.row), s.name, s.start_us - start, s.duration_us, s.kind) for s in spans]


_KIND_LABELS = {"cpu": "CPU op", "cpu copy": "CPU copy", "kernel": "GPU kernel", "copy": "GPU copy"}


def plot_timeline(spans: list[Span], ax=None, title: str = "Timeline (torch.profiler)", label_min_fraction=0.06):
    """Draw ``profile_timeline``'s spans as bars, one row per CPU thread or GPU stream; returns the axes."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(9, 2.5))
    rows = sorted({s.row for s in spans}, key=lambda r: (not r.startswith("CPU"), r))
    colours = {"cpu": "tab:blue", "cpu copy": "tab:olive", "kernel": "tab:orange", "copy": "tab:green"}
    total = max((s.start_us + s.duration_us for s in spans), default=1.0)
    for y, row in enumerate(rows):
        for s in (s for s in spans if s.row == row):
            ax.broken_barh([(s.start_us / 1e3, max(s.duration_us, total * 1e-3) / 1e3)], (y - 0.4, 0.8),
                           facecolors=colours[s.kind], edgecolor="white", linewidth=0.5)
            if s.duration_us > label_min_fraction * total:
                ax.text((s.start_us + s.duration_us / 2) / 1e3, y, s.name[:18], ha="center", va="center",
                        fontsize=7, color="white", clip_on=True)
    ax.set_yticks(range(len(rows)), rows)
    ax.set_ylim(-0.6, len(rows) - 0.4)
    ax.invert_yaxis()
    ax.set_xlabel("time (ms)")
    ax.set_title(title)
    from matplotlib.patches import Patch

    kinds = sorted({s.kind for s in spans}, key=list(colours).index)
    ax.legend(handles=[Patch(color=colours[k], label=_KIND_LABELS[k]) for k in kinds],
              fontsize=7, loc="upper right")
    return ax
