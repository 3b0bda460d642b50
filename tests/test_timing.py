"""course.timing: Timing, format_seconds, the stopping rule of benchmark (with a fake clock), CUDA events, timelines."""

import time

import matplotlib
import pytest
import torch

matplotlib.use("Agg")

from course import env, timing  # noqa: E402


def test_spread_is_the_range_below_four_samples_and_the_iqr_from_four():
    assert timing.Timing("x", "cpu", [3.0]).spread == 0
    assert timing.Timing("x", "cpu", [1.0, 4.0]).spread == 3.0
    assert timing.Timing("x", "cpu", [2.0, 1.0, 4.0]).spread == 3.0
    many = timing.Timing("x", "cpu", [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 100.0])
    assert many.spread < 10 and many.median == 4.5 and many.best == 1.0  # the outlier does not widen the IQR
    assert many.rate(9.0) == 2.0
    assert str(timing.Timing("add", "cpu", [1e-3, 3e-3])) == "add: 2 ms ± 1 ms (median of 2, cpu)"


@pytest.mark.parametrize("seconds, text", [
    (0, "0 ns"), (1e-9, "1 ns"), (999e-9, "999 ns"), (999.9e-9, "1 µs"), (1e-6, "1 µs"), (1.2e-5, "12 µs"),
    (999.4e-6, "999 µs"), (999.6e-6, "1 ms"), (1e-3, "1 ms"), (0.9994, "999 ms"), (0.9999, "1 s"),
    (1.0, "1 s"), (12.345, "12.3 s"), (999.7, "1,000 s"), (3600, "3,600 s"), (-2e-3, "-2 ms"),
    (float("inf"), "inf s"),
])
def test_format_seconds_at_unit_boundaries(seconds, text):
    assert timing.format_seconds(seconds) == text


class FakeClock:
    """time.perf_counter that advances only when the timed function runs."""

    def __init__(self, step):
        self.now, self.step, self.calls = 0.0, step, 0

    def __call__(self):
        return self.now

    def work(self):
        self.calls += 1
        self.now += self.step


@pytest.fixture
def clock(monkeypatch):
    monkeypatch.delenv("COURSE_MAX_STEPS", raising=False)
    fake = FakeClock(0.1)
    monkeypatch.setattr(timing, "_clock", fake)
    return fake


def test_until_min_time_but_at_least_five_calls(clock):
    t = timing.benchmark(clock.work, device="cpu", warmup=2, min_time=0.2)
    assert len(t.times) == 5 and clock.calls == 7  # 2 warm-up calls are not timed
    assert t.times == pytest.approx([0.1] * 5)


def test_min_time_beyond_five_calls(clock):
    t = timing.benchmark(clock.work, device="cpu", warmup=0, min_time=0.75)
    assert len(t.times) == 8  # 0.8 s >= 0.75 s


def test_max_time_stops_both_rules(clock):
    assert len(timing.benchmark(clock.work, device="cpu", warmup=0, min_time=0.2, max_time=0.35).times) == 4
    assert len(timing.benchmark(clock.work, device="cpu", warmup=0, repeat=50, max_time=0.35).times) == 4
    assert len(timing.benchmark(clock.work, device="cpu", warmup=0, repeat=3).times) == 3
    slow = FakeClock(20.0)
    timing._clock = slow  # one call longer than max_time: still one timing, never zero
    assert len(timing.benchmark(slow.work, device="cpu", warmup=0, max_time=10).times) == 1


@pytest.mark.parametrize("kwargs, message", [
    ({"repeat": 0}, "repeat"), ({"repeat": 2.5}, "repeat"), ({"warmup": -3}, "warmup"),
    ({"min_time": -1}, "min_time"), ({"max_time": 0}, "max_time"), ({"min_time": 5, "max_time": 1}, "min_time"),
    ({"device": "gpu"}, "write 'cuda'"), ({"device": "cupy"}, "write 'cuda'"), ({"device": "CPU"}, "lower case"),
])
def test_bad_arguments_get_a_clear_error(kwargs, message):
    with pytest.raises(ValueError, match=message):
        timing.benchmark(len, [], **kwargs)
    with pytest.raises(TypeError, match="function to call"):
        timing.benchmark(42)


def test_cuda_events_refuse_a_cpu_and_a_missing_gpu(monkeypatch):
    with pytest.raises(ValueError, match="not a CUDA device"):
        timing.CudaEvents("cpu")
    monkeypatch.setattr(env, "torch_cuda_usable", lambda: False)
    monkeypatch.setattr(env, "cupy_usable", lambda: False)
    with pytest.raises(RuntimeError, match="neither PyTorch nor CuPy"):
        timing.CudaEvents("cuda:0")


def test_profile_timeline_on_a_cpu():
    x = torch.randn(2**16)

    def work():
        with torch.profiler.record_function("copy 0"):
            y = x.clone()
        with torch.profiler.record_function("compute 0"):
            return (y * 2).sum()

    spans = timing.profile_timeline(work, device="cpu")
    names = [s.name for s in spans]
    assert names.index("copy 0") < names.index("compute 0")
    assert {s.row for s in spans} == {"CPU"}
    assert [s.kind for s in spans if s.name == "copy 0"] == ["cpu copy"]
    assert min(s.start_us for s in spans) == 0 and all(s.duration_us >= 0 for s in spans)
    ax = timing.plot_timeline(spans)
    assert ax.get_xlabel() == "time (ms)"


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (run by make gpu-check)")
def test_gpu_timing_waits_for_the_work():
    a = torch.randn(4096, 4096, device="cuda")
    t = timing.benchmark(torch.matmul, a, a, device="cuda", repeat=5)
    assert t.device == "cuda (torch events)" and t.median > 1e-5  # the work, not the ~µs launch
    events = timing.CudaEvents("cuda:0")
    assert events.time(torch.matmul, a, a) == pytest.approx(t.median, rel=0.5)
    if env.cupy_usable():
        import cupy

        b = cupy.random.rand(4096, 4096, dtype=cupy.float32)
        assert timing.benchmark(cupy.matmul, b, b, device="cuda", repeat=5).median > 1e-5
    spans = timing.profile_timeline(lambda: (a * 2).sum(), device="cuda")
    assert "kernel" in {s.kind for s in spans}


def test_a_step_cap_limits_every_call_warmups_included(clock, monkeypatch):
    monkeypatch.setenv("COURSE_MAX_STEPS", "2")
    t = timing.benchmark(clock.work, device="cpu", warmup=5, repeat=50)
    assert len(t.times) == 1 and clock.calls == 2  # one warm-up, one timed: the cap counts every call
    assert len(timing.benchmark(clock.work, device="cpu", min_time=5.0).times) == 1
    assert len(timing.benchmark(clock.work, device="cpu", warmup=0).times) == 2  # no warm-up asked: two timed
    monkeypatch.setenv("COURSE_MAX_STEPS", "1")
    clock.calls = 0
    t = timing.benchmark(clock.work, device="cpu", warmup=3, max_time=0.5)
    assert len(t.times) == 1 and clock.calls == 1  # a cap of 1: the one call is timed


def test_a_step_cap_keeps_the_warmup_that_hides_a_slow_first_call(monkeypatch):
    monkeypatch.setenv("COURSE_MAX_STEPS", "2")
    calls = []

    def slow_first():  # 50 ms the first time (compiling, allocating), then at once
        calls.append(1)
        if len(calls) == 1:
            time.sleep(0.05)

    assert timing.benchmark(slow_first, device="cpu", warmup=2).median < 0.04


def test_cuda_events_bracket_the_work_and_wait_for_the_end(monkeypatch):
    """The order of the event calls, with stand-in events (the real ones run in make gpu-check)."""
    log = []

    class Event:
        def __init__(self, name):
            self.name = name

        def record(self, stream):
            log.append(f"{self.name}.record({stream})")

        def synchronize(self):
            log.append(f"{self.name}.synchronize")

    names = iter(["start", "end"])
    events = object.__new__(timing.CudaEvents)
    monkeypatch.setattr(events, "_event", lambda: Event(next(names)), raising=False)
    monkeypatch.setattr(events, "_stream", lambda: "current stream", raising=False)
    monkeypatch.setattr(events, "_milliseconds", lambda start, end: 2.5, raising=False)
    seconds = events.time(lambda x: log.append(f"work({x})"), 7)
    assert log == ["start.record(current stream)", "work(7)", "end.record(current stream)", "end.synchronize"]
    assert seconds == 0.0025
