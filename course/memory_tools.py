"""Memory over time (notebook 10): the CUDA memory snapshot drawn as a timeline on your own machine,
and the same picture on a CPU from ``torch.profiler``'s memory events.

On a GPU, ``torch.cuda.memory._record_memory_history()`` makes the caching allocator log every
allocation and free with its Python stack; ``torch.cuda.memory._snapshot()`` returns the log.
``snapshot_timeline`` turns it into (seconds, bytes held) for a matplotlib figure, and
``save_snapshot`` writes the pickle that https://pytorch.org/memory_viz opens — a page that
reads the file in your browser, uploading nothing — plus PyTorch's own HTML rendering of it.
"""

from __future__ import annotations

import contextlib
import pickle
from pathlib import Path

__all__ = ["record_memory_history", "snapshot_timeline", "profiler_timeline", "plot_memory_timeline",
           "save_snapshot"]


@contextlib.contextmanager
def record_memory_history(device=None, max_entries: int = 100_000):
    """Inside the block, the CUDA allocator logs each allocation and free (GPU only; a CPU raises)."""
    import torch

    from course import gpu

    if not gpu.is_cuda(device):
        raise RuntimeError("the memory snapshot records the CUDA caching allocator: it needs a GPU. "
                           "On a CPU, use profiler_timeline(fn) (torch.profiler's memory events) instead.")
    torch.cuda.memory._record_memory_history(max_entries=max_entries)
    try:
        yield
    finally:
        torch.cuda.memory._record_memory_history(enabled=None)  # stop recording


def snapshot_timeline(snapshot: dict, device_index: int = 0) -> tuple[list[float], list[int]]:
    """(seconds since the first event, bytes held by tensors allocated while recording) after each event."""
    traces = snapshot.get("device_traces") or []
    if device_index >= len(traces):
        raise ValueError(f"the snapshot has traces for {len(traces)} device(s), not for device {device_index}")
    events = [e for e in traces[device_index] if e.get("action") in ("alloc", "free_completed")]
    if not events:
        return [], []
    start = events[0]["time_us"]
    times, held, total = [], [], 0
    for event in events:
        total += event["size"] if event["action"] == "alloc" else -event["size"]
        times.append((event["time_us"] - start) / 1e6)
        held.append(total)
    return times, held


def profiler_timeline(fn, *args, **kwargs) -> tuple:
    """``(fn(*args), seconds, bytes held)`` on the CPU, from torch.profiler's memory events (the CPU's snapshot)."""
    from course.timing import profiler, trace_events

    with profiler("cpu", profile_memory=True) as prof:
        result = fn(*args, **kwargs)
    events = sorted((e for e in trace_events(prof) if e.get("name") == "[memory]"
                     and e.get("args", {}).get("Device Type") == 0), key=lambda e: e["ts"])
    if not events:
        return result, [], []
    start = events[0]["ts"]
    times, held, total = [], [], 0
    for event in events:
        total += event["args"]["Bytes"]
        times.append((event["ts"] - start) / 1e6)
        held.append(total)
    return result, times, held


def plot_memory_timeline(times, held, ax=None, title: str = "Memory held over time", label: str | None = None):
    """A step plot of MiB held against milliseconds."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(8, 3))
    ax.step([t * 1e3 for t in times], [b / 2**20 for b in held], where="post", label=label)
    ax.set_xlabel("time since the first allocation (ms)")
    ax.set_ylabel("memory held by tensors (MiB)")
    ax.set_title(title)
    if label:
        ax.legend()
    return ax


def save_snapshot(snapshot: dict, folder, name: str = "memory_snapshot") -> dict:
    """Write ``name.pickle`` (for pytorch.org/memory_viz, opened locally) and ``name.html``; return their paths."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = {"pickle": folder / f"{name}.pickle", "html": folder / f"{name}.html"}
    with open(paths["pickle"], "wb") as f:
        pickle.dump(snapshot, f)
    from torch.cuda import _memory_viz

    # PyTorch's page: the data is inside the file; the viewer's JavaScript is fetched from a CDN.
    paths["html"].write_text(_memory_viz.trace_plot(snapshot), encoding="utf-8")
    return paths
