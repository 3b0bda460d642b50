"""course.perf on the CPU (what every learner without a GPU runs) and, when there is one, on a GPU."""

import matplotlib
import pytest
import torch

matplotlib.use("Agg")

from course import perf  # noqa: E402


def test_cpu_side_of_transfers_and_streams():
    x = torch.randn(10)
    assert perf.pinned(x, "cpu") is x
    assert perf.record_event("cpu") is None
    perf.wait_for(None, x)  # no-op
    assert perf.has_tf32("cpu") is False
    with pytest.raises(ValueError, match="CPU tensors"):
        perf.pinned(torch.randn(2, device="meta"), "cuda")


def test_captured_graph_runs_eagerly_on_a_cpu():
    x = torch.randn(8)
    graph = perf.CapturedGraph(lambda t: t * 2 + 1, x, device="cpu")
    assert graph.captured is False
    x.copy_(torch.arange(8.0))
    assert torch.equal(graph.replay(), torch.arange(8.0) * 2 + 1)


def test_peak_memory_on_a_cpu_sees_intermediates_and_in_place():
    x = torch.randn(2**18)  # 1 MiB
    result, peak = perf.peak_memory(lambda t: torch.relu(t * 2 + 1), x, device="cpu")
    assert torch.equal(result, torch.relu(x * 2 + 1))
    assert 2 * 2**20 <= peak <= 3 * 2**20  # two 1 MiB tensors alive at once, not more
    _, in_place = perf.peak_memory(lambda t: t.mul_(2).add_(1).relu_(), x.clone(), device="cpu")
    assert in_place < 2**16


def test_out_of_memory_is_recognised_and_recovered_from():
    with pytest.raises(RuntimeError) as caught:
        torch.empty(2**62, dtype=torch.uint8)  # 4 EiB: fails at once, allocates nothing
    assert perf.is_out_of_memory(caught.value)
    assert not perf.is_out_of_memory(ValueError("out of memory"))
    assert not perf.is_out_of_memory(RuntimeError("shape mismatch"))
    fit = perf.largest_that_fits(lambda n: torch.empty(n, 1024, 1024).shape[0], [2**40, 4, 1], "cpu")
    assert fit.size == 4 and fit.result == 4 and [s for s, _ in fit.too_big] == [2**40]
    with pytest.raises(ZeroDivisionError):  # other errors are not swallowed
        perf.largest_that_fits(lambda n: 1 / 0, [2, 1], "cpu")
    with pytest.raises(MemoryError, match="smallest size"):
        perf.largest_that_fits(lambda n: torch.empty(2**62, dtype=torch.uint8), [2, 1], "cpu")


def test_memory_summary_on_a_cpu_says_why_there_is_none():
    assert "CPU" in perf.memory_summary("cpu")


def test_profile_timeline_on_a_cpu():
    x = torch.randn(2**16)

    def work():
        with torch.profiler.record_function("copy 0"):
            y = x.clone()
        with torch.profiler.record_function("compute 0"):
            return (y * 2).sum()

    spans = perf.profile_timeline(work, device="cpu")
    names = [s.name for s in spans]
    assert names.index("copy 0") < names.index("compute 0")
    assert {s.row for s in spans} == {"CPU"}
    assert [s.kind for s in spans if s.name == "copy 0"] == ["cpu copy"]
    assert min(s.start_us for s in spans) == 0 and all(s.duration_us >= 0 for s in spans)
    ax = perf.plot_timeline(spans)
    assert ax.get_xlabel() == "time (ms)"


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (run by make gpu-check)")
def test_gpu_side():
    device = torch.device("cuda")
    host = perf.pinned(torch.randn(2**20), device)
    assert host.is_pinned()
    x = torch.randn(4096, device=device)
    graph = perf.CapturedGraph(lambda t: t * 2 + 1, x, device=device)
    assert graph.captured
    x.copy_(torch.arange(4096.0, device=device))
    assert torch.equal(graph.replay(), torch.arange(4096.0, device=device) * 2 + 1)
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        y = host.to(device, non_blocking=True)
        event = perf.record_event(device)
    perf.wait_for(event, y)
    assert torch.equal(y.cpu(), host)
    _, peak = perf.peak_memory(lambda t: t * 2, x, device=device)
    assert peak >= 4096 * 4
    with pytest.raises(torch.OutOfMemoryError) as caught:
        torch.empty(2**62, dtype=torch.uint8, device=device)
    assert perf.is_out_of_memory(caught.value)
    spans = perf.profile_timeline(lambda: (host.to(device, non_blocking=True) * 2).sum(), device=device)
    assert {"kernel", "copy"} <= {s.kind for s in spans}
    assert "allocated" in perf.memory_summary(device).lower()
