"""The course's device model: which device, what it can do, and its memory (notebooks 00, 01, 10).

One way to name a device everywhere in the course: ``"cpu"``, ``"cuda"``, ``"cuda:N"`` or a
``torch.device`` of those types; ``parse_device`` turns it into a ``torch.device`` and rejects
anything else ("gpu", "CUDA", "cupy", typos) with an error that says what to write. Every
helper that takes a ``device`` reads it through ``parse_device``, and every one follows the same
rule when ``device`` is left out: **None means ``course.env.device()``** — the GPU when PyTorch
can use one, unless ``COURSE_DEVICE`` says otherwise.

CuPy arrays live on a CUDA device too, so CuPy work is ``"cuda"`` as well: ``synchronize`` and
``course.timing.benchmark`` use PyTorch's CUDA calls when PyTorch can reach the GPU and CuPy's
otherwise. Both libraries share the device (one CUDA context per process), so a device-wide
synchronisation from either waits for the work of both.

Here: device facts (``parse_device``, ``is_cuda``, ``device_properties``, ``fp32_lanes``,
``has_tf32``, ``amp_dtype``), ``synchronize``, and memory (``memory_stats``,
``reset_peak_memory``, ``empty_cache``, ``memory_summary``, ``peak_memory``,
``is_out_of_memory``, ``largest_that_fits``). Streams and CUDA Graphs are in ``course.streams``
(``course.gpu.stream`` is the same function), timing in ``course.timing``, peaks and the
roofline in ``course.roofline``. On a CPU each helper does what makes sense there and says so in
its docstring; ``make gpu-check`` runs the GPU side on a lent GPU.
"""

from __future__ import annotations

import contextlib
import gc
import re
from dataclasses import dataclass, field

__all__ = [
    "parse_device", "is_cuda", "synchronize", "device_properties", "fp32_lanes", "has_tf32", "amp_dtype",
    "memory_stats", "reset_peak_memory", "empty_cache", "memory_summary", "peak_memory",
    "is_out_of_memory", "Fit", "largest_that_fits", "stream",
]

_CUDA_INDEX = re.compile(r"cuda:(\d+)")

#: What to write instead of a spelling the course does not accept.
_INSTEAD = {
    "gpu": "write 'cuda' (or 'cuda:0'): PyTorch calls NVIDIA GPUs CUDA devices",
    "cupy": "CuPy arrays live on a CUDA device: write 'cuda' (CuPy and PyTorch share it)",
    "mps": "the course runs on NVIDIA GPUs ('cuda') or on the CPU ('cpu'); Apple's 'mps' is not supported",
    "auto": "leave device out (None) to use course.env.device()",
}


def _parse(device) -> tuple[str, int | None]:
    """(type, index) of a device the course accepts; raises a ValueError/TypeError that says what to write."""
    if device is not None and type(device).__name__ == "device" and type(device).__module__.startswith("torch"):
        kind, index = device.type, device.index
        if kind in ("cpu", "cuda"):
            return kind, (index if kind == "cuda" else None)
        raise ValueError(f"device {device!r}: " + _INSTEAD.get(kind, "the course runs on 'cpu' or 'cuda'"))
    if isinstance(device, bool) or not isinstance(device, str):
        hint = f"write 'cuda:{device}'" if isinstance(device, int) and not isinstance(device, bool) else \
            "write 'cpu', 'cuda', 'cuda:N' or pass a torch.device"
        raise TypeError(f"device must be a string or a torch.device, got {type(device).__name__} {device!r}: {hint}")
    if device == "cpu":
        return "cpu", None
    if device == "cuda":
        return "cuda", None
    match = _CUDA_INDEX.fullmatch(device)
    if match:
        return "cuda", int(match.group(1))
    text = device.strip().lower()
    if text != device and (text in ("cpu", "cuda") or _CUDA_INDEX.fullmatch(text)):
        instead = f"write {text!r} (lower case, no spaces)"
    else:
        instead = _INSTEAD.get(text.split(":")[0], "write 'cpu' or 'cuda' (or 'cuda:N', N: the GPU's number from 0)")
    raise ValueError(f"device {device!r} is not one the course knows: {instead}")


def parse_device(device=None):
    """The ``torch.device`` for ``device``: "cpu", "cuda", "cuda:N" or a torch.device of those types.

    None means the course's device, ``course.env.device()``. Anything else raises an error that
    says what to write: ``parse_device("gpu")`` → "write 'cuda'". Imports torch.
    """
    import torch

    if device is None:
        from course import env

        return env.device()
    kind, index = _parse(device)
    return torch.device(kind, index) if index is not None else torch.device(kind)


def is_cuda(device=None) -> bool:
    """True for a CUDA device ("cuda", "cuda:1", torch.device("cuda")), False for "cpu".

    Rejects what ``parse_device`` rejects (``is_cuda("gpu")`` raises instead of answering False).
    """
    if device is None:
        from course import env

        return env.device().type == "cuda"
    return _parse(device)[0] == "cuda"


def _index(device) -> int:
    """The CUDA device number of a CUDA ``device`` ("cuda" is the current device)."""
    index = _parse(device)[1]
    if index is not None:
        return index
    from course import env

    if env.torch_cuda_usable():
        import torch

        return torch.cuda.current_device()
    import cupy

    return cupy.cuda.Device().id


def _no_gpu(device) -> RuntimeError:
    return RuntimeError(f"device {str(device)!r} is a GPU, but neither PyTorch nor CuPy can use a CUDA GPU here; "
                        "use 'cpu', or on Colab pick Runtime > Change runtime type > GPU")


def synchronize(device=None) -> None:
    """Wait until all queued GPU work on ``device`` has finished — PyTorch's and CuPy's alike.

    A CUDA device runs work asynchronously: a launch returns before the kernel is done. This
    waits for the whole device (``cudaDeviceSynchronize``), through PyTorch when it can reach
    the GPU, else through CuPy. On a CPU every operation has finished when it returns: nothing to do.
    """
    if not is_cuda(device):
        return
    from course import env

    if env.torch_cuda_usable():
        import torch

        torch.cuda.synchronize(_index(device))
    elif env.cupy_usable():
        import cupy

        cupy.cuda.Device(_index(device)).synchronize()
    else:
        raise _no_gpu(device)


# ----------------------------------------------------------------------------------------
# What the device can do
# ----------------------------------------------------------------------------------------

#: FP32 lanes (CUDA cores) per SM by compute capability: CUDA C++ Programming Guide, "Arithmetic
#: Instructions" throughput table. Exceptions first, then the rule of each major version.
_LANES_EXCEPTIONS = {(6, 1): 128, (6, 2): 128, (8, 6): 128, (8, 7): 128, (8, 9): 128}
_LANES_BY_MAJOR = {5: 128, 6: 64, 7: 64, 8: 64}


def fp32_lanes(major: int | None, minor: int | None) -> int | None:
    """FP32 lanes per SM for compute capability ``major.minor`` (None when unknown).

    7.5 (T4) and 8.0 (A100): 64; 8.6/8.9 (RTX 30xx/40xx, L4): 128; 9.0 (H100/H200) and newer: 128.
    """
    if major is None:
        return None
    minor = minor or 0
    if (major, minor) in _LANES_EXCEPTIONS:
        return _LANES_EXCEPTIONS[(major, minor)]
    if major in _LANES_BY_MAJOR:
        return _LANES_BY_MAJOR[major]
    return 128 if major >= 9 else None


# cudaDeviceGetAttribute numbers (stable in CUDA's enum): 13 SM clock, 16 SMs, 36 memory clock,
# 37 memory bus width, 75/76 compute capability. CUDA 13 dropped some of them from the device
# properties struct, so CuPy is asked for the attributes one by one.
_ATTRIBUTES = {"clock_khz": 13, "sms": 16, "memory_clock_khz": 36, "bus_bits": 37, "major": 75, "minor": 76}


def _raw_properties(index: int) -> dict | None:
    """name, major, minor, sms, clock_khz, memory_clock_khz, bus_bits of GPU ``index``, through
    PyTorch when it reaches the GPU, else CuPy; None without a usable GPU. A figure the driver
    does not report is None."""
    from course import env

    if env.torch_cuda_usable():
        import torch

        p = torch.cuda.get_device_properties(index)
        figure = lambda name: getattr(p, name, 0) or None  # noqa: E731  (0: not reported)
        return {"name": p.name, "major": p.major, "minor": p.minor, "sms": p.multi_processor_count,
                "clock_khz": figure("clock_rate"), "memory_clock_khz": figure("memory_clock_rate"),
                "bus_bits": figure("memory_bus_width")}
    if env.cupy_usable():
        import cupy

        def attribute(number):
            try:
                return cupy.cuda.runtime.deviceGetAttribute(number, index) or None
            except Exception:  # an attribute this CUDA version no longer reports
                return None

        raw = {name: attribute(number) for name, number in _ATTRIBUTES.items()}
        name = cupy.cuda.runtime.getDeviceProperties(index)["name"]
        raw["name"] = name.decode() if isinstance(name, bytes) else str(name)
        return raw
    return None


def _properties_from(raw: dict) -> dict:
    """The table of ``device_properties`` from raw figures (pure: tested with made-up figures)."""
    major, minor = raw.get("major"), raw.get("minor") or 0
    lanes = fp32_lanes(major, minor)
    sms, clock, memory_clock, bus = raw.get("sms"), raw.get("clock_khz"), raw.get("memory_clock_khz"), raw.get("bus_bits")
    return {
        "name": raw.get("name"),
        "compute capability": f"{major}.{minor}",
        "SMs": sms,
        "FP32 lanes per SM": lanes,
        "peak GB/s": 2 * memory_clock * 1e3 * bus / 8 / 1e9 if memory_clock and bus else None,
        "peak GFLOP/s": 2 * lanes * sms * clock * 1e3 / 1e9 if lanes and sms and clock else None,
    }


def device_properties(device=None) -> dict | None:
    """The GPU's facts and theoretical peaks, or None on a CPU or without a usable GPU (notebook 01).

    ``peak GB/s`` = 2 (double data rate) × memory clock × bus width in bytes;
    ``peak GFLOP/s`` (FP32) = 2 (a fused multiply-add) × FP32 lanes per SM × SMs × SM clock.
    A figure the driver does not report is None. These are data-sheet ceilings;
    ``course.roofline.peak_bandwidth``/``peak_flops`` also measure what the device reaches.
    """
    if not is_cuda(device):
        return None
    from course import env

    if not (env.torch_cuda_usable() or env.cupy_usable()):
        return None
    raw = _raw_properties(_index(device))
    return None if raw is None else _properties_from(raw)


def has_tf32(device=None) -> bool:
    """True when float32 matmuls and convolutions on ``device`` can use TF32 tensor cores: an NVIDIA
    GPU of compute capability 8.0 or newer (Ampere, Ada, Hopper...). False on a CPU and on older
    GPUs such as the T4 (7.5)."""
    if not is_cuda(device):
        return False
    import torch

    return torch.cuda.get_device_capability(_index(device))[0] >= 8


def amp_dtype(device=None):
    """The autocast dtype the course uses on ``device``: bfloat16 where the hardware computes it
    (compute capability 8.0+ and the CPU), float16 on older GPUs such as the T4.

    bfloat16 has float32's range, so it needs no loss scaling; float16 needs a
    ``torch.amp.GradScaler`` when training. ``amp_dtype(d) == torch.float16`` is the test for "use a GradScaler".
    """
    import torch

    if not is_cuda(device):
        return torch.bfloat16
    major, _ = torch.cuda.get_device_capability(_index(device))
    return torch.bfloat16 if major >= 8 else torch.float16


# ----------------------------------------------------------------------------------------
# Memory
# ----------------------------------------------------------------------------------------


def memory_stats(device=None) -> dict | None:
    """Current and peak memory held by PyTorch's caching allocator on ``device``, in MiB.

    Returns None on a CPU (PyTorch keeps no such statistics there).
    """
    if not is_cuda(device):
        return None
    import torch

    index, mib = _index(device), 2**20
    return {
        "allocated_MiB": torch.cuda.memory_allocated(index) / mib,
        "reserved_MiB": torch.cuda.memory_reserved(index) / mib,
        "peak_allocated_MiB": torch.cuda.max_memory_allocated(index) / mib,
    }


def reset_peak_memory(device=None) -> None:
    """Start a new peak-memory measurement on ``device`` (nothing to do on a CPU)."""
    if is_cuda(device):
        import torch

        torch.cuda.synchronize(_index(device))
        torch.cuda.reset_peak_memory_stats(_index(device))


def empty_cache(device=None) -> None:
    """Hand cached, unused GPU memory back to the driver (nothing to do on a CPU)."""
    if is_cuda(device):
        from course import env

        if env.torch_cuda_usable():
            import torch

            torch.cuda.empty_cache()


def memory_summary(device=None) -> str:
    """The caching allocator's table for a GPU ``device``; on a CPU, a line saying why there is none."""
    if is_cuda(device):
        import torch

        return torch.cuda.memory_summary(_index(device), abbreviated=True)
    return ("No allocator table on a CPU: PyTorch gets CPU memory from the system allocator (malloc) "
            "and gives it back at once, so there is no cache to summarise.")


def peak_memory(fn, *args, device=None, **kwargs) -> tuple:
    """``(fn(*args, **kwargs), peak bytes)``: the most memory the call held above what was held before.

    On a GPU, from the caching allocator's peak statistic. On a CPU, from torch.profiler's
    memory events (every allocation and free of a tensor's memory), added up in order.
    """
    import torch

    if is_cuda(device):
        index = _index(device)
        torch.cuda.synchronize(index)
        before = torch.cuda.memory_allocated(index)
        torch.cuda.reset_peak_memory_stats(index)
        result = fn(*args, **kwargs)
        torch.cuda.synchronize(index)
        return result, max(0, torch.cuda.max_memory_allocated(index) - before)
    from course.timing import profiler, trace_events

    with profiler("cpu", profile_memory=True) as prof:
        result = fn(*args, **kwargs)
    events = [e for e in trace_events(prof) if e.get("name") == "[memory]"
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


def largest_that_fits(run, sizes, device=None) -> Fit:
    """Call ``run(size)`` for the sizes from largest to smallest until one does not run out of memory.

    After an out-of-memory error it frees what the failed try held (Python garbage, then the
    GPU's cache: ``empty_cache``, nothing to do on a CPU) before the next try. Other errors are
    raised. On a CPU, list only sizes the machine can really hold, or impossible ones: a CPU
    allocation that fits in RAM succeeds, and the machine may then swap.
    """
    device = parse_device(device)
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
        empty_cache(device)
    raise MemoryError(f"even the smallest size, {sizes[-1]}, does not fit on {device}: "
                      "use a smaller model or batch, or another device")


# ----------------------------------------------------------------------------------------
# A side stream (the other stream helpers are in course.streams)
# ----------------------------------------------------------------------------------------


@contextlib.contextmanager
def stream(device=None):
    """Run the block on a new CUDA stream of ``device``; on a CPU, just run it.

    Yields the stream (None on a CPU) so the caller can wait for it. Creating a stream costs a
    little: in a timed loop, create it once (``torch.cuda.Stream``) and enter it with
    ``torch.cuda.stream(s)``.
    """
    device = parse_device(device)
    if device.type != "cuda":
        yield None
        return
    import torch

    side = torch.cuda.Stream(device=device)
    with torch.cuda.stream(side):
        yield side
