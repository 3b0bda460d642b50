"""course.roofline: measured peaks, kernel points and the plot."""

import matplotlib
import pytest

matplotlib.use("Agg")

from course import roofline  # noqa: E402


def test_roof_and_ridge():
    peaks = roofline.Peaks(flops_per_s=100e9, bytes_per_s=20e9, device="test")
    assert peaks.ridge == 5
    assert peaks.roof(1) == 20e9 and peaks.roof(5) == 100e9 and peaks.roof(50) == 100e9
    assert "ridge at 5" in str(peaks)


def test_kernel_point_intensity_bound_and_fraction():
    peaks = roofline.Peaks(flops_per_s=100e9, bytes_per_s=20e9, device="test")
    add = roofline.KernelPoint("vector add", flops=1e6, bytes=12e6, seconds=1e-3)
    assert add.intensity == pytest.approx(1 / 12)
    assert add.bound(peaks) == "memory"
    assert add.flops_per_s == pytest.approx(1e9) and add.bytes_per_s == pytest.approx(12e9)
    assert add.fraction_of_roof(peaks) == pytest.approx(12e9 / 20e9)
    matmul = roofline.KernelPoint("matmul", flops=2e9, bytes=12e6, seconds=0.04)
    assert matmul.bound(peaks) == "compute"
    assert matmul.fraction_of_roof(peaks) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="must all be > 0"):
        roofline.KernelPoint("copy", flops=0, bytes=8, seconds=1)


def test_measure_peaks_on_the_cpu_is_plausible():
    peaks = roofline.measure_peaks("cpu", matmul_n=128, copy_bytes=2**22, repeat=2)
    assert peaks.device == "cpu"
    assert 1e7 < peaks.flops_per_s < 1e14  # between a very slow core and a large server
    assert 1e7 < peaks.bytes_per_s < 1e13
    assert "n=128" in peaks.how
    with pytest.raises(ValueError):
        roofline.measure_peaks("cpu", matmul_n=-1)


def test_plot_roofline_draws_roof_and_points():
    peaks = roofline.Peaks(flops_per_s=100e9, bytes_per_s=20e9, device="test")
    points = [roofline.KernelPoint("a", 1e6, 12e6, 1e-3), roofline.KernelPoint("b", 2e9, 12e6, 0.04)]
    ax = roofline.plot_roofline(peaks, points)
    labels = [line.get_label() for line in ax.get_lines()]
    assert any(label.startswith("a (") for label in labels) and any(label.startswith("b (") for label in labels)
    assert ax.get_xscale() == "log" and "FLOP / byte" in ax.get_xlabel() and ax.get_title()
