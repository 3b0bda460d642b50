"""More GPU-only performance calls behind helpers that also run on a CPU (notebook 10).

Like ``course.gpu``, each helper takes a ``device`` and does the right thing on both; its
docstring says what it does on a CPU:

- ``pinned``: page-locked host memory for fast, asynchronous host→GPU copies;
- ``record_event`` / ``wait_for``: order work between two CUDA streams;
- ``CapturedGraph``: capture a sequence of kernels once as a CUDA Graph, replay it with one launch;
- ``memory_summary`` and ``peak_memory``: what the caching allocator holds, the peak of a call;
- ``is_out_of_memory`` and ``largest_that_fits``: catch an out-of-memory error and recover;
- ``profile_timeline`` and ``plot_timeline``: a torch.profiler trace drawn as a timeline;
- ``has_tf32``: whether float32 matmuls can use TF32 tensor cores.
"""

from __future__ import annotations

import gc
import json
import os
import re
import tempfile
from dataclasses import dataclass, field

from course.gpu import is_cuda

__all__ = [
    "pinned", "record_event", "wait_for", "CapturedGraph", "memory_summary", "peak_memory",
    "is_out_of_memory", "Fit", "largest_that_fits", "Span", "profile_timeline", "plot_timeline", "has_tf32",
]


# ----------------------------------------------------------------------------------------
# Transfers and streams
# ----------------------------------------------------------------------------------------


def pinned(tensor, device):
    """A page-locked (pinned) copy of a CPU ``tensor``, for copies to the GPU ``device``.

    The GPU's copy engine reads pinned memory directly, so the copy is faster and can be
    asynchronous (``non_blocking=True``). On a CPU there is no copy engine (and pinning needs
    a GPU driver): the tensor itself is returned.
    """
    if tensor.device.type != "cpu":
        raise ValueError(f"only CPU tensors can be pinned, got one on {tensor.device}")
    return tensor.pin_memory() if is_cuda(device) else tensor


def record_event(device):
    """A CUDA event marking the work queued so far on the current stream; None on a CPU.

    On a CPU every operation has finished when it returns, so there is nothing to mark.
    """
    if not is_cuda(device):
        return None
    import torch

    event = torch.cuda.Event()
    event.record()
    return event


def wait_for(event, *tensors):
    """Make the current stream wait for ``event`` before using ``tensors`` made on another stream.

    Also tells PyTorch's caching allocator that the tensors are used on this stream, so their
    memory is not reused before this stream is done with it. No-op when ``event`` is None (CPU).
    """
    if event is None:
        return
    import torch

    stream = torch.cuda.current_stream()
    stream.wait_event(event)
    for tensor in tensors:
        tensor.record_stream(stream)


# ----------------------------------------------------------------------------------------
# CUDA Graphs
# ----------------------------------------------------------------------------------------


class CapturedGraph:
    """``fn(*static_inputs)`` captured once as a CUDA Graph on ``device``, replayed with one launch.

    Put new data into the *same* input tensors (``x.copy_(new)``) and call ``replay()``: it
    reruns the recorded kernels and returns the same output tensor, overwritten. On a CPU
    there are no graphs: ``captured`` is False and ``replay()`` just calls ``fn`` again.
    """

    def __init__(self, fn, *static_inputs, device, warmup: int = 3):
        import torch

        self.fn, self.static_inputs = fn, static_inputs
        self.captured = is_cuda(device)
        self._graph = None
        if not self.captured:
            self.output = fn(*static_inputs)
            return
        # Warm up on a side stream first (lazy initialisation, cuBLAS workspaces), as the
        # PyTorch documentation advises, then record one call.
        side = torch.cuda.Stream(device=device)
        side.wait_stream(torch.cuda.current_stream(device))
        with torch.cuda.stream(side):
            for _ in range(warmup):
                fn(*static_inputs)
        torch.cuda.current_stream(device).wait_stream(side)
        self._graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self._graph):
            self.output = fn(*static_inputs)

    def replay(self):
        """Run the captured kernels again on the inputs' current contents; returns the output."""
        if self._graph is None:
            self.output = self.fn(*self.static_inputs)
        else:
            self._graph.replay()
        return self.output


# ----------------------------------------------------------------------------------------
# Memory
# ----------------------------------------------------------------------------------------


def memory_summary(device) -> str:
    """The caching allocator's table for a GPU ``device``; on a CPU, a line saying why there is none."""
    if is_cuda(device):
        import torch

        return torch.cuda.memory_summary(device, abbreviated=True)
    return ("No allocator table on a CPU: PyTorch gets CPU memory from the system allocator (malloc) "
            "and gives it back at once, so there is no cache to summarise.")


def peak_memory(fn, *args, device, **kwargs) -> tuple:
    """``(fn(*args, **kwargs), peak bytes)``: the most memory the call held above what was held before.

    On a GPU, from the caching allocator's peak statistic. On a CPU, from torch.profiler's
    memory events (every allocation and free of a tensor's memory), added up in order.
    """
    import torch

    if is_cuda(device):
        torch.cuda.synchronize(device)
        before = torch.cuda.memory_allocated(device)
        torch.cuda.reset_peak_memory_stats(device)
        result = fn(*args, **kwargs)
        torch.cuda.synchronize(device)
        return result, max(0, torch.cuda.max_memory_allocated(device) - before)
    with _profile("cpu", profile_memory=True) as prof:
        result = fn(*args, **kwargs)
    events = [e for e in _trace_events(prof) if e.get("name") == "[memory]"
              and e.get("args", {}).get("Device Type") == 0]  # 0: CPU
    held = peak = 0
    for event in sorted(events, key=lambda e: e["ts"]):
        held += event["args"]["Bytes"]
        peak = max(peak, held)
    return result, peak


def is_out_of_memory(error: BaseException) -> bool:
    """True for a GPU's ``torch.OutOfMemoryError`` and for the CPU allocator's "can't allocate memory"."""
    import torch

    if isinstance(error, torch.OutOfMemoryError):
        return True
    text = str(error).lower()
    return isinstance(error, RuntimeError) and ("can't allocate memory" in text or "out of memory" in text)


@dataclass
class Fit:
    """What ``largest_that_fits`` found: the size that ran, its result, the sizes that did not fit."""

    size: int
    result: object = field(repr=False)
    too_big: list = field(default_factory=list)


def largest_that_fits(run, sizes, device) -> Fit:
    """Call ``run(size)`` for the sizes from largest to smallest until one does not run out of memory.

    After an out-of-memory error it frees what the failed try held (Python garbage, then the
    GPU's cache: ``course.gpu.empty_cache``, a no-op on a CPU) before the next try. Other errors
    are raised. On a CPU, list only sizes the machine can really hold, or impossible ones: a
    CPU allocation that fits in RAM succeeds, and the machine may then swap.
    """
    from course import gpu

    sizes = sorted(sizes, reverse=True)
    if not sizes:
        raise ValueError("give at least one size to try")
    too_big = []
    for size in sizes:
        failure = None
        try:
            return Fit(size, run(size), too_big)
        except Exception as error:  # an OOM is handled below, outside this block
            if not is_out_of_memory(error):
                raise
            failure = f"{type(error).__name__}: {str(error).splitlines()[0][:160]}"
        # Outside the `except` block: the exception and its traceback (which keeps the failed
        # try's tensors alive) are gone, so the memory can really be freed.
        too_big.append((size, failure))
        gc.collect()
        gpu.empty_cache(device)
    raise MemoryError(f"even the smallest size, {sizes[-1]}, does not fit on {device}: "
                      "use a smaller model or batch, or another device")


def has_tf32(device) -> bool:
    """True when float32 matmuls on ``device`` can use TF32 tensor cores (an NVIDIA GPU of compute
    capability 8.0 or newer: Ampere, Hopper...); False on a CPU and on older GPUs such as the T4."""
    if not is_cuda(device):
        return False
    import torch

    return torch.cuda.get_device_capability(device)[0] >= 8


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


def _profile(device, **options):
    """torch.profiler.profile for ``device``'s activities. On a CPU, Kineto (the profiler's
    backend) would print start/stop lines and a GPU-count error into the notebook: quieted."""
    from torch.profiler import ProfilerActivity, profile

    if not is_cuda(device):
        os.environ.setdefault("KINETO_LOG_LEVEL", "6")  # read when the profiler first starts
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if is_cuda(device) else [])
    return profile(activities=activities, **options)


def _trace_events(prof, keep_at=None) -> list:
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


def profile_timeline(fn, *args, device, trace_path=None, **kwargs) -> list[Span]:
    """Run ``fn`` under torch.profiler and return its timeline: top-level CPU work per thread and,
    on a GPU, every kernel and copy per CUDA stream. On a CPU there are only CPU rows.

    ``trace_path``: also save the Chrome trace there (open it in https://ui.perfetto.dev).
    Label parts of ``fn`` with ``torch.profiler.record_function("name")`` to see them by name.
    """
    with _profile(device) as prof:
        fn(*args, **kwargs)
        if is_cuda(device):
            import torch

            torch.cuda.synchronize(device)
    spans = []
    for event in _trace_events(prof, keep_at=trace_path):
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
