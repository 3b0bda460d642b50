"""The roofline: what limits a kernel, its arithmetic or its memory traffic (notebook 10).

A kernel that does ``flops`` operations while moving ``bytes`` to and from memory has an
*arithmetic intensity* of ``flops / bytes`` (FLOP per byte). On a device that can do at most
``P`` FLOP/s and move at most ``B`` bytes/s, the kernel can reach at most
``min(P, intensity × B)`` FLOP/s: the roof. Left of the *ridge point* ``P / B`` a kernel is
memory-bound, right of it compute-bound.

``measure_peaks(device)`` measures ``P`` and ``B`` on this device instead of quoting a data
sheet: a large float32 matmul for FLOP/s and a large copy for bytes/s, both timed with
``course.timing.benchmark``. They are *attainable* peaks (what PyTorch reaches), a little
below the vendor's numbers. ``plot_roofline`` places measured kernels (``KernelPoint``) under
that roof.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Peaks", "KernelPoint", "measure_peaks", "plot_roofline"]


@dataclass(frozen=True)
class Peaks:
    """The device's measured ceilings: FLOP/s and bytes/s."""

    flops_per_s: float
    bytes_per_s: float
    device: str
    how: str = ""

    @property
    def ridge(self) -> float:
        """The arithmetic intensity (FLOP/byte) where memory stops being the limit."""
        return self.flops_per_s / self.bytes_per_s

    def roof(self, intensity: float) -> float:
        """The most FLOP/s a kernel of this arithmetic intensity can reach here."""
        return min(self.flops_per_s, intensity * self.bytes_per_s)

    def __str__(self) -> str:
        return (f"{self.device}: {self.flops_per_s / 1e9:.3g} GFLOP/s, {self.bytes_per_s / 1e9:.3g} GB/s, "
                f"ridge at {self.ridge:.3g} FLOP/byte" + (f" ({self.how})" if self.how else ""))


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
    if str(getattr(device, "type", device)).startswith("cuda"):
        return 8192, 2**30
    return 1024, 2**27  # 128 MiB: well past a CPU's last-level cache


def measure_peaks(device, matmul_n: int | None = None, copy_bytes: int | None = None,
                  repeat: int = 10) -> Peaks:
    """Measure FLOP/s (float32 matmul, 2n³ FLOP) and bytes/s (copy, 2 × bytes moved) on ``device``."""
    import torch

    from course.timing import benchmark

    device = torch.device(device)
    default_n, default_bytes = _default_sizes(device)
    n = matmul_n or default_n
    nbytes = copy_bytes or default_bytes
    if n < 1 or nbytes < 4:
        raise ValueError(f"matmul_n must be >= 1 and copy_bytes >= 4, got {n} and {nbytes}")
    a = torch.randn(n, n, device=device)
    b = torch.randn(n, n, device=device)
    matmul = benchmark(torch.matmul, a, b, device=device, repeat=repeat, label="peak matmul")
    del a, b
    source = torch.empty(nbytes // 4, device=device)
    target = torch.empty_like(source)
    copy = benchmark(target.copy_, source, device=device, repeat=repeat, label="peak copy")
    moved = 2 * source.numel() * 4  # every byte is read once and written once
    # The best call, not the median: a ceiling is what the device *can* do, and on a shared
    # machine the slow calls measure the neighbours.
    return Peaks(flops_per_s=2 * n**3 / matmul.best, bytes_per_s=moved / copy.best, device=str(device),
                 how=f"float32 matmul n={n}, copy of {nbytes / 2**20:.0f} MiB")


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
    ax.plot(x, [peaks.roof(i) / 1e9 for i in x], color="black", linewidth=2, label="roof (measured peaks)")
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
