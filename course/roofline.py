"""Peaks and the roofline: what limits a kernel, its arithmetic or its memory traffic (notebooks 06, 10).

A kernel that does ``flops`` operations while moving ``bytes`` to and from memory has an
*arithmetic intensity* of ``flops / bytes`` (FLOP per byte). On a device that can do at most
``P`` FLOP/s and move at most ``B`` bytes/s, the kernel can reach at most
``min(P, intensity × B)`` FLOP/s: the roof. Left of the *ridge point* ``P / B`` a kernel is
memory-bound, right of it compute-bound.

The course's one definition of a device's peaks lives here, and every result names its method:

- ``method="measured"`` (the default): a large float32 matmul for FLOP/s and a large copy for
  bytes/s, timed with ``course.timing.benchmark``; the best call counts, because a ceiling is
  what the device *can* do. These are *attainable* peaks, a little below the data sheet.
- ``method="theoretical"``: the data-sheet figures computed from the GPU's properties
  (``course.gpu.device_properties``); a CPU has none.

``peak_bandwidth`` and ``peak_flops`` return one ``Peak`` each; ``peaks`` returns both as
``Peaks``, which ``plot_roofline`` draws with measured kernels (``KernelPoint``) under it.
Devices follow ``course.gpu``: "cpu", "cuda", "cuda:N", a torch.device; None means
``course.env.device()``.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["METHODS", "Peak", "Peaks", "KernelPoint", "peak_bandwidth", "peak_flops", "peaks", "plot_roofline"]

#: How a peak can be found.
METHODS = ("measured", "theoretical")


@dataclass(frozen=True)
class Peak:
    """One ceiling of a device: ``per_s`` units per second, found by ``method`` ("measured" or "theoretical")."""

    per_s: float
    unit: str      # "bytes" or "FLOP"
    method: str
    how: str
    device: str

    def __str__(self) -> str:
        scaled = f"{self.per_s / 1e9:.3g} G{'B' if self.unit == 'bytes' else 'FLOP'}/s"
        return f"{self.device}: {scaled} ({self.method}: {self.how})"


@dataclass(frozen=True)
class Peaks:
    """The device's ceilings: FLOP/s and bytes/s, and how they were found."""

    flops_per_s: float
    bytes_per_s: float
    device: str
    how: str = ""
    method: str = "measured"

    @property
    def ridge(self) -> float:
        """The arithmetic intensity (FLOP/byte) where memory stops being the limit."""
        return self.flops_per_s / self.bytes_per_s

    def roof(self, intensity: float) -> float:
        """The most FLOP/s a kernel of this arithmetic intensity can reach here."""
        return min(self.flops_per_s, intensity * self.bytes_per_s)

    def __str__(self) -> str:
        return (f"{self.device}: {self.flops_per_s / 1e9:.3g} GFLOP/s, {self.bytes_per_s / 1e9:.3g} GB/s, "
                f"ridge at {self.ridge:.3g} FLOP/byte ({self.method}" + (f": {self.how})" if self.how else ")"))


@dataclass(frozen=True)
class KernelPoint:
    """One measured kernel: its work (FLOP), its memory traffic (bytes) and its time (s)."""

    name: str
    flops: float
    bytes: float
    seconds: float

    def __post_init__(self):
        if not (self.flops > 0 and self.bytes > 0 and self.seconds > 0):
            raise ValueError(f"{self.name}: flops, bytes and seconds must all be > 0 to sit on a roofline "
                             f"(got {self.flops}, {self.bytes}, {self.seconds})")

    @property
    def intensity(self) -> float:
        """FLOP per byte moved."""
        return self.flops / self.bytes

    @property
    def flops_per_s(self) -> float:
        return self.flops / self.seconds

    @property
    def bytes_per_s(self) -> float:
        return self.bytes / self.seconds

    def bound(self, peaks: Peaks) -> str:
        """'memory' or 'compute': which roof is over this kernel."""
        return "memory" if self.intensity < peaks.ridge else "compute"

    def fraction_of_roof(self, peaks: Peaks) -> float:
        """Achieved FLOP/s over the roof at this intensity (1.0 = as fast as the device allows)."""
        return self.flops_per_s / peaks.roof(self.intensity)


def _default_sizes(device) -> tuple[int, int]:
    """(matmul n, copy bytes): large enough to leave the caches and hide call overheads."""
    if device.type == "cuda":
        return 8192, 2**30
    return 1024, 2**27  # 128 MiB: well past a CPU's last-level cache


def _check_method(method: str) -> None:
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(map(repr, METHODS))}, got {method!r}")


def _theoretical(device, key: str) -> float:
    from course import gpu

    if device.type != "cuda":
        raise ValueError(f"a CPU has no theoretical peak here (no data sheet to read): use method='measured' "
                         f"on {device}")
    properties = gpu.device_properties(device)
    if not properties or not properties.get(key):
        raise RuntimeError(f"this GPU's driver does not report what {key!r} needs (properties: {properties}); "
                           "use method='measured'")
    return properties[key] * 1e9


def _positive(name: str, value):
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise ValueError(f"{name} must be a whole number >= 1 (or None for the default), got {value!r}")


def peak_bandwidth(device=None, method: str = "measured", nbytes: int | None = None, repeat: int = 10) -> Peak:
    """The most bytes per second ``device``'s memory moves, found by ``method``.

    measured: a copy of ``nbytes`` (default 128 MiB on a CPU, 1 GiB on a GPU), counted as read
    once and written once, best of ``repeat`` calls; with PyTorch, or with CuPy on a GPU PyTorch
    cannot reach. theoretical: 2 (double data rate) × memory clock × bus width, from the GPU's properties.
    """
    from course import gpu

    _check_method(method)
    _positive("nbytes", nbytes)
    device = gpu.parse_device(device)
    if method == "theoretical":
        return Peak(_theoretical(device, "peak GB/s"), "bytes", method,
                    "memory clock × bus width × 2 (device properties)", str(device))
    from course import env
    from course.timing import benchmark

    nbytes = nbytes or _default_sizes(device)[1]
    if device.type == "cuda" and not env.torch_cuda_usable() and env.cupy_usable():
        import cupy

        source, target = cupy.ones(nbytes, cupy.uint8), cupy.empty(nbytes, cupy.uint8)
        copy = benchmark(cupy.copyto, target, source, device=device, repeat=repeat, label="peak copy")
        library = "CuPy"
    else:
        import torch

        source = torch.ones(nbytes, dtype=torch.uint8, device=device)
        target = torch.empty_like(source)
        copy = benchmark(target.copy_, source, device=device, repeat=repeat, label="peak copy")
        library = "PyTorch"
    del source, target
    # The best call, not the median: a ceiling is what the device *can* do, and on a shared
    # machine the slow calls measure the neighbours.
    return Peak(2 * nbytes / copy.best, "bytes", method,
                f"{library} copy of {nbytes / 2**20:.0f} MiB, best of {len(copy.times)}", str(device))


def peak_flops(device=None, method: str = "measured", n: int | None = None, repeat: int = 10) -> Peak:
    """The most float32 FLOP per second ``device`` computes, found by ``method``.

    measured: an n×n float32 matmul (2n³ FLOP; default n = 1024 on a CPU, 8192 on a GPU), best
    of ``repeat`` calls, with PyTorch's default precision (no TF32 unless enabled).
    theoretical: 2 (a fused multiply-add) × FP32 lanes per SM × SMs × SM clock (CUDA cores, not tensor cores).
    """
    from course import gpu

    _check_method(method)
    _positive("n", n)
    device = gpu.parse_device(device)
    if method == "theoretical":
        return Peak(_theoretical(device, "peak GFLOP/s"), "FLOP", method,
                    "2 × FP32 lanes × SMs × clock (device properties)", str(device))
    import torch

    from course.timing import benchmark

    n = n or _default_sizes(device)[0]
    a = torch.randn(n, n, device=device)
    b = torch.randn(n, n, device=device)
    matmul = benchmark(torch.matmul, a, b, device=device, repeat=repeat, label="peak matmul")
    return Peak(2 * n**3 / matmul.best, "FLOP", method, f"float32 matmul n={n}, best of {len(matmul.times)}",
                str(device))


def peaks(device=None, method: str = "measured", matmul_n: int | None = None, copy_bytes: int | None = None,
          repeat: int = 10) -> Peaks:
    """FLOP/s (``peak_flops``) and bytes/s (``peak_bandwidth``) of ``device``, both found by ``method``."""
    flops = peak_flops(device, method, n=matmul_n, repeat=repeat)
    memory = peak_bandwidth(device, method, nbytes=copy_bytes, repeat=repeat)
    return Peaks(flops_per_s=flops.per_s, bytes_per_s=memory.per_s, device=flops.device,
                 how=f"{flops.how}; {memory.how}", method=method)


def _percent(fraction: float) -> str:
    """0.884 → '88%', 0.0123 → '1.2%', 0.00044 → '0.044%'."""
    percent = 100 * fraction
    return f"{percent:.0f}%" if percent >= 10 else f"{percent:.2g}%"


def plot_roofline(peaks: Peaks, points=(), ax=None, title: str | None = None):
    """Draw the roof of ``peaks`` and each ``KernelPoint`` under it (log–log); returns the axes."""
    import matplotlib.pyplot as plt
    import numpy as np

    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4.5))
    points = list(points)
    intensities = [p.intensity for p in points] + [peaks.ridge]
    low = min(intensities) / 4
    high = max(intensities) * 4
    x = np.logspace(np.log10(low), np.log10(high), 200)
    ax.plot(x, [peaks.roof(i) / 1e9 for i in x], color="black", linewidth=2, label=f"roof ({peaks.method} peaks)")
    ax.axvline(peaks.ridge, color="grey", linestyle=":", linewidth=1)
    ax.annotate(f"ridge {peaks.ridge:.3g} FLOP/B", (peaks.ridge, 0), xycoords=("data", "axes fraction"),
                textcoords="offset points", xytext=(3, 4), fontsize=8, color="grey")
    markers = "osD^v<>Ph*X"
    for k, p in enumerate(points):
        ax.plot(p.intensity, p.flops_per_s / 1e9, markers[k % len(markers)], markersize=8,
                label=f"{p.name} ({_percent(p.fraction_of_roof(peaks))} of roof)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP / byte)")
    ax.set_ylabel("performance (GFLOP/s)")
    ax.set_title(title or f"Roofline of {peaks.device}")
    ax.legend(fontsize=7, loc="lower right")
    ax.grid(True, which="major", alpha=0.3)
    return ax
