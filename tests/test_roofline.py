"""course.roofline: the one definition of peaks (measured on the CPU here; theoretical in test_devices), kernel points, the plot."""

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


def test_measured_peaks_on_the_cpu_name_their_method_and_sit_near_a_second_measurement():
    peaks = roofline.peaks("cpu", matmul_n=128, copy_bytes=2**22, repeat=3)
    assert peaks.device == "cpu" and peaks.method == "measured" and "measured" in str(peaks)
    assert "n=128" in peaks.how and "4 MiB" in peaks.how
    # the same copy timed by hand: the peak is the best call, so it is at least this fast (allow noise)
    import time

    import torch

    source, target = torch.ones(2**22, dtype=torch.uint8), torch.empty(2**22, dtype=torch.uint8)
    by_hand = []
    for _ in range(5):
        t0 = time.perf_counter()
        target.copy_(source)
        by_hand.append(2 * 2**22 / (time.perf_counter() - t0))
    assert peaks.bytes_per_s > 0.2 * sorted(by_hand)[2]
    bandwidth = roofline.peak_bandwidth("cpu", nbytes=2**22, repeat=2)
    assert bandwidth.unit == "bytes" and bandwidth.method == "measured" and "GB/s" in str(bandwidth)
    for bad in ({"matmul_n": -1}, {"matmul_n": 0}, {"copy_bytes": 2.5}):
        with pytest.raises(ValueError, match="whole number"):
            roofline.peaks("cpu", **bad)


def test_sharpen_reads_the_one_peak_bandwidth():
    from course import sharpen

    gbs, how = sharpen.peak_bandwidth("cpu", size_mb=4)
    assert gbs > 0 and how.startswith("measured: PyTorch copy of 4 MiB")
    with pytest.raises(ValueError, match="write 'cuda'"):
        sharpen.peak_bandwidth("cupy")
    with pytest.raises(ValueError, match="size_mb"):
        sharpen.peak_bandwidth("cpu", size_mb=0)


def test_plot_roofline_draws_roof_and_points():
    peaks = roofline.Peaks(flops_per_s=100e9, bytes_per_s=20e9, device="test")
    points = [roofline.KernelPoint("a", 1e6, 12e6, 1e-3), roofline.KernelPoint("b", 2e9, 12e6, 0.04)]
    ax = roofline.plot_roofline(peaks, points)
    labels = [line.get_label() for line in ax.get_lines()]
    assert any(label.startswith("a (") for label in labels) and any(label.startswith("b (") for label in labels)
    assert ax.get_xscale() == "log" and "FLOP / byte" in ax.get_xlabel() and ax.get_title()
