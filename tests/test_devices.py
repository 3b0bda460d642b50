"""course.gpu (the device model, device facts, memory) and course.streams, on the CPU and, when there is one, on a GPU."""

import matplotlib
import pytest
import torch

matplotlib.use("Agg")

from course import env, gpu, roofline, streams, timing  # noqa: E402

# ---------------------------------------------------------------- the one device parser

ACCEPTED = [
    ("cpu", "cpu", None), ("cuda", "cuda", None), ("cuda:0", "cuda", 0), ("cuda:3", "cuda", 3),
    (torch.device("cpu"), "cpu", None), (torch.device("cuda"), "cuda", None), (torch.device("cuda", 1), "cuda", 1),
]

REJECTED = [  # (value, error type, what the message must tell the learner to write)
    ("gpu", ValueError, "write 'cuda'"),
    ("GPU", ValueError, "write 'cuda'"),
    ("CUDA", ValueError, "write 'cuda' (lower case"),
    ("Cpu", ValueError, "write 'cpu' (lower case"),
    (" cuda", ValueError, "no spaces"),
    ("cupy", ValueError, "CuPy arrays live on a CUDA device: write 'cuda'"),
    ("cuda:", ValueError, "'cuda:N'"),
    ("cuda:-1", ValueError, "'cuda:N'"),
    ("cuda:one", ValueError, "'cuda:N'"),
    ("cdua", ValueError, "write 'cpu' or 'cuda'"),
    ("mps", ValueError, "not supported"),
    ("", ValueError, "write 'cpu' or 'cuda'"),
    (torch.device("meta"), ValueError, "'cpu' or 'cuda'"),
    (0, TypeError, "write 'cuda:0'"),
    (True, TypeError, "a string or a torch.device"),
    (1.0, TypeError, "a string or a torch.device"),
]


@pytest.mark.parametrize("value, kind, index", ACCEPTED, ids=str)
def test_parse_device_accepts_the_course_spellings(value, kind, index):
    parsed = gpu.parse_device(value)
    assert isinstance(parsed, torch.device) and (parsed.type, parsed.index) == (kind, index)
    assert gpu.is_cuda(value) is (kind == "cuda")


@pytest.mark.parametrize("value, error, says", REJECTED, ids=repr)
def test_parse_device_rejects_everything_else_and_says_what_to_write(value, error, says):
    with pytest.raises(error) as caught:
        gpu.parse_device(value)
    assert says in str(caught.value), str(caught.value)
    with pytest.raises(error):
        gpu.is_cuda(value)  # no helper treats a typo as "not a GPU" any more


@pytest.mark.parametrize("call", [
    lambda d: gpu.synchronize(d), lambda d: gpu.memory_stats(d), lambda d: gpu.reset_peak_memory(d),
    lambda d: gpu.empty_cache(d), lambda d: gpu.memory_summary(d), lambda d: gpu.has_tf32(d),
    lambda d: gpu.device_properties(d), lambda d: gpu.amp_dtype(d), lambda d: gpu.largest_that_fits(len, [1], d),
    lambda d: gpu.peak_memory(len, [], device=d), lambda d: streams.pinned(torch.zeros(1), d),
    lambda d: streams.record_event(d), lambda d: streams.CapturedGraph(len, [], device=d),
    lambda d: streams.stream(d).__enter__(), lambda d: timing.benchmark(len, [], device=d, repeat=1),
    lambda d: timing.profile_timeline(len, [], device=d), lambda d: roofline.peak_bandwidth(d, nbytes=8),
    lambda d: roofline.peak_flops(d, n=2),
])
def test_every_helper_that_takes_a_device_uses_the_parser(call):
    with pytest.raises(ValueError, match="write 'cuda'"):
        call("gpu")


def test_left_out_device_means_the_course_device(monkeypatch):
    monkeypatch.delenv("COURSE_DEVICE", raising=False)
    assert gpu.parse_device(None) == env.device()
    monkeypatch.setenv("COURSE_DEVICE", "cpu")
    assert gpu.parse_device(None) == torch.device("cpu") and gpu.is_cuda(None) is False
    assert timing.benchmark(len, [], repeat=1).device == "cpu"


# ---------------------------------------------------------------- device facts

@pytest.mark.parametrize("capability, lanes", [
    ((5, 2), 128), ((6, 0), 64), ((6, 1), 128), ((7, 0), 64), ((7, 5), 64), ((8, 0), 64), ((8, 6), 128),
    ((8, 9), 128), ((9, 0), 128), ((10, 0), 128), ((12, 0), 128), ((3, 5), None), ((None, None), None),
])
def test_fp32_lanes_per_sm_follow_the_programming_guide(capability, lanes):
    assert gpu.fp32_lanes(*capability) == lanes


def test_device_properties_from_made_up_figures(monkeypatch):
    t4 = {"name": "Tesla T4", "major": 7, "minor": 5, "sms": 40, "clock_khz": 1_590_000,
          "memory_clock_khz": 5_001_000, "bus_bits": 256}
    monkeypatch.setattr(env, "torch_cuda_usable", lambda: True)
    monkeypatch.setattr(gpu, "_raw_properties", lambda index: dict(t4))
    props = gpu.device_properties("cuda:0")
    assert props["name"] == "Tesla T4" and props["compute capability"] == "7.5" and props["SMs"] == 40
    assert props["FP32 lanes per SM"] == 64
    assert props["peak GB/s"] == pytest.approx(320.064)           # 2 × 5.001 GHz × 32 bytes
    assert props["peak GFLOP/s"] == pytest.approx(8140.8)         # 2 × 64 × 40 × 1.59 GHz
    h100 = dict(t4, name="H100", major=9, minor=0, sms=132, clock_khz=1_980_000, memory_clock_khz=2_619_000,
                bus_bits=5120)
    monkeypatch.setattr(gpu, "_raw_properties", lambda index: dict(h100))
    props = gpu.device_properties("cuda:0")
    assert props["FP32 lanes per SM"] == 128 and props["peak GFLOP/s"] == pytest.approx(2 * 128 * 132 * 1.98)  # GFLOP/s
    monkeypatch.setattr(gpu, "_raw_properties", lambda index: dict(t4, memory_clock_khz=None, clock_khz=None))
    props = gpu.device_properties("cuda:0")
    assert props["peak GB/s"] is None and props["peak GFLOP/s"] is None  # not reported: None, not a guess
    assert gpu.device_properties("cpu") is None


def test_theoretical_peaks_come_from_the_properties_and_name_their_method(monkeypatch):
    monkeypatch.setattr(gpu, "device_properties", lambda device=None: {"peak GB/s": 320.0, "peak GFLOP/s": 8000.0})
    bandwidth = roofline.peak_bandwidth("cuda", method="theoretical")
    flops = roofline.peak_flops("cuda", method="theoretical")
    assert bandwidth.per_s == 320e9 and bandwidth.method == "theoretical" and "bus width" in bandwidth.how
    assert flops.per_s == 8e12 and flops.method == "theoretical"
    both = roofline.peaks("cuda", method="theoretical")
    assert both.ridge == pytest.approx(25) and "theoretical" in str(both)
    with pytest.raises(ValueError, match="method='measured'"):
        roofline.peak_bandwidth("cpu", method="theoretical")
    with pytest.raises(ValueError, match="'measured', 'theoretical'"):
        roofline.peak_bandwidth("cpu", method="data sheet")
    monkeypatch.setattr(gpu, "device_properties", lambda device=None: {"peak GB/s": None})
    with pytest.raises(RuntimeError, match="method='measured'"):
        roofline.peak_bandwidth("cuda", method="theoretical")


def test_cpu_answers_of_the_precision_helpers():
    assert gpu.has_tf32("cpu") is False
    assert gpu.amp_dtype("cpu") == torch.bfloat16


# ---------------------------------------------------------------- memory, streams, graphs on a CPU

def test_memory_helpers_on_a_cpu():
    assert gpu.memory_stats("cpu") is None
    gpu.reset_peak_memory(torch.device("cpu"))
    gpu.empty_cache("cpu")
    gpu.synchronize("cpu")
    assert "system allocator" in gpu.memory_summary("cpu")


def test_synchronize_of_a_gpu_without_one_says_so(monkeypatch):
    monkeypatch.setattr(env, "torch_cuda_usable", lambda: False)
    monkeypatch.setattr(env, "cupy_usable", lambda: False)
    with pytest.raises(RuntimeError, match="neither PyTorch nor CuPy"):
        gpu.synchronize("cuda:0")


def test_peak_memory_on_a_cpu_sees_intermediates_and_in_place():
    x = torch.randn(2**18)  # 1 MiB
    result, peak = gpu.peak_memory(lambda t: torch.relu(t * 2 + 1), x, device="cpu")
    assert torch.equal(result, torch.relu(x * 2 + 1))
    assert 2 * 2**20 <= peak <= 3 * 2**20  # two 1 MiB tensors alive at once, not more
    _, in_place = gpu.peak_memory(lambda t: t.mul_(2).add_(1).relu_(), x.clone(), device="cpu")
    assert in_place < 2**16


def test_out_of_memory_is_recognised_and_recovered_from():
    with pytest.raises(RuntimeError) as caught:
        torch.empty(2**62, dtype=torch.uint8)  # 4 EiB: fails at once, allocates nothing
    assert gpu.is_out_of_memory(caught.value)
    assert not gpu.is_out_of_memory(ValueError("out of memory"))
    assert not gpu.is_out_of_memory(RuntimeError("shape mismatch"))
    fit = gpu.largest_that_fits(lambda n: torch.empty(n, 1024, 1024).shape[0], [2**40, 4, 1], "cpu")
    assert fit.size == 4 and fit.result == 4 and [s for s, _ in fit.too_big] == [2**40]
    with pytest.raises(ZeroDivisionError):  # other errors are not swallowed
        gpu.largest_that_fits(lambda n: 1 / 0, [2, 1], "cpu")
    with pytest.raises(MemoryError, match="smallest size"):
        gpu.largest_that_fits(lambda n: torch.empty(2**62, dtype=torch.uint8), [2, 1], "cpu")
    with pytest.raises(ValueError, match="at least one size"):
        gpu.largest_that_fits(len, [], "cpu")


def test_streams_and_graphs_on_a_cpu():
    x = torch.randn(10)
    assert streams.pinned(x, "cpu") is x
    assert streams.record_event("cpu") is None
    streams.wait_for(None, x)  # nothing to wait for
    with pytest.raises(ValueError, match="CPU tensors"):
        streams.pinned(torch.randn(2, device="meta"), "cuda")
    with gpu.stream("cpu") as side:  # the name notebooks 08 and 10 use
        assert side is None
    assert gpu.stream is streams.stream
    graph = streams.CapturedGraph(lambda t: t * 2 + 1, x, device="cpu")
    assert graph.captured is False
    x.copy_(torch.arange(10.0))
    assert torch.equal(graph.replay(), torch.arange(10.0) * 2 + 1)


# ---------------------------------------------------------------- the same on a GPU (make gpu-check)

@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (run by make gpu-check)")
def test_gpu_side():
    device = torch.device("cuda")
    props = gpu.device_properties(device)
    major, minor = torch.cuda.get_device_capability()
    assert props["compute capability"] == f"{major}.{minor}" and props["SMs"] == torch.cuda.get_device_properties(0).multi_processor_count
    assert gpu.has_tf32(device) is (major >= 8)
    assert gpu.amp_dtype(device) == (torch.bfloat16 if major >= 8 else torch.float16)
    if props["peak GB/s"]:  # measured copy bandwidth lies below the data sheet and above a tenth of it
        measured = roofline.peak_bandwidth(device, nbytes=2**28).per_s / 1e9
        assert props["peak GB/s"] / 10 < measured < props["peak GB/s"] * 1.05, (measured, props)
    gpu.reset_peak_memory(device)
    x = torch.empty(2**20, device=device)
    assert gpu.memory_stats("cuda:0")["peak_allocated_MiB"] >= 4 - 1e-6
    host = streams.pinned(torch.randn(2**20), device)
    assert host.is_pinned()
    with gpu.stream(device) as side:
        assert side is not None
        y = host.to(device, non_blocking=True)
        event = streams.record_event(device)
    streams.wait_for(event, y)
    assert torch.equal(y.cpu(), host)
    static = torch.randn(4096, device=device)
    graph = streams.CapturedGraph(lambda t: t * 2 + 1, static, device=device)
    assert graph.captured
    static.copy_(torch.arange(4096.0, device=device))
    assert torch.equal(graph.replay(), torch.arange(4096.0, device=device) * 2 + 1)
    _, peak = gpu.peak_memory(lambda t: t * 2, x, device=device)
    assert peak >= 2**20 * 4
    with pytest.raises(torch.OutOfMemoryError) as caught:
        torch.empty(2**62, dtype=torch.uint8, device=device)
    assert gpu.is_out_of_memory(caught.value)
    assert "allocated" in gpu.memory_summary(device).lower()
    gpu.synchronize("cuda")
    gpu.empty_cache(device)
