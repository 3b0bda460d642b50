"""course.env: modes, sizes, devices, and the CuPy-without-driver case."""

import subprocess
import sys
import types

import pytest

from course import env


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for name in ("COURSE_FAST", "COURSE_MODE", "COURSE_DEVICE", "COURSE_MAX_STEPS"):
        monkeypatch.delenv(name, raising=False)
    cached = (env.torch_cuda_usable, env.cupy_usable)
    for function in cached:
        function.cache_clear()
    yield
    for function in cached:  # tests may replace these; clear the real ones
        function.cache_clear()


def test_import_course_is_light():
    code = "import course, sys; course.env; course.checks; course.timing; assert 'torch' not in sys.modules, 'torch'; assert 'cupy' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("value, expected", [("1", "fast"), ("true", "fast"), ("0", "cpu"), ("", "cpu")])
def test_mode_follows_course_fast(monkeypatch, value, expected):
    monkeypatch.setattr(env, "torch_cuda_usable", lambda: False)
    monkeypatch.setenv("COURSE_FAST", value)
    assert env.mode() == expected


def test_mode_is_gpu_with_a_usable_gpu(monkeypatch):
    monkeypatch.setattr(env, "torch_cuda_usable", lambda: True)
    assert env.mode() == "gpu"
    monkeypatch.setenv("COURSE_FAST", "1")
    assert env.mode() == "fast"


def test_course_mode_forces_and_rejects_nonsense(monkeypatch):
    monkeypatch.setenv("COURSE_FAST", "1")
    monkeypatch.setenv("COURSE_MODE", "gpu")
    assert env.mode() == "gpu"
    monkeypatch.setenv("COURSE_MODE", "turbo")
    with pytest.raises(ValueError, match="fast, cpu, gpu"):
        env.mode()


def test_pick_returns_the_value_of_the_mode(monkeypatch):
    monkeypatch.setattr(env, "torch_cuda_usable", lambda: False)
    assert env.pick(fast=1, cpu=3, gpu=30) == 3
    monkeypatch.setenv("COURSE_FAST", "1")
    assert env.pick(fast=1, cpu=3, gpu=30) == 1
    monkeypatch.setenv("COURSE_MODE", "gpu")
    assert env.pick(fast=1, cpu=3, gpu=30) == 30
    with pytest.raises(TypeError):
        env.pick(fast=1, cpu=3)  # every size must be given


def test_device_is_cpu_here_and_course_device_is_checked(monkeypatch):
    monkeypatch.setattr(env, "torch_cuda_usable", lambda: False)
    assert env.device().type == "cpu"
    monkeypatch.setenv("COURSE_DEVICE", "cuda")
    with pytest.raises(RuntimeError, match="no CUDA device"):
        env.device()


def test_cupy_without_driver_counts_as_no_gpu(monkeypatch):
    """CuPy imports fine without a driver and fails at first use: that must read as False."""

    class NoDriver(Exception):
        pass

    def no_device_count():
        raise NoDriver("cudaErrorNoDevice: no CUDA-capable device is detected")

    fake = types.ModuleType("cupy")
    fake.cuda = types.SimpleNamespace(runtime=types.SimpleNamespace(getDeviceCount=no_device_count))
    monkeypatch.setitem(sys.modules, "cupy", fake)
    monkeypatch.setattr(env.importlib.util, "find_spec", lambda name: object())
    assert env.cupy_usable() is False
    facts_line = env.describe()
    assert "kernels on cpu" in facts_line


def test_cupy_missing_counts_as_no_gpu(monkeypatch):
    monkeypatch.setattr(env.importlib.util, "find_spec", lambda name: None)
    assert env.cupy_usable() is False


def test_seed_everything_repeats_random_numbers():
    import numpy as np
    import torch

    env.seed_everything(7)
    first = (np.random.rand(3), torch.rand(3))
    env.seed_everything(7)
    second = (np.random.rand(3), torch.rand(3))
    assert np.array_equal(first[0], second[0]) and torch.equal(first[1], second[1])
    with pytest.raises(ValueError):
        env.seed_everything(-1)


def test_describe_is_one_line_and_full_is_a_table(monkeypatch):
    monkeypatch.setenv("COURSE_FAST", "1")
    line = env.describe()
    assert "\n" not in line and "mode fast" in line and "torch" in line
    table = env.describe(full=True)
    assert "<table>" in table._repr_html_() and "kernel backend" in str(table)


def test_output_and_cache_dirs_are_created(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_OUTPUT", str(tmp_path / "out"))
    monkeypatch.setenv("COURSE_CACHE", str(tmp_path / "cache"))
    assert env.output_dir("nb05").is_dir() and env.output_dir("nb05").parent == tmp_path / "out"
    assert env.cache_dir() == tmp_path / "cache" and env.cache_dir().is_dir()


def test_limit_caps_steps_only_when_asked(monkeypatch):
    monkeypatch.delenv("COURSE_MAX_STEPS", raising=False)
    assert env.max_steps() is None and list(env.limit(range(5))) == [0, 1, 2, 3, 4]
    monkeypatch.setenv("COURSE_MAX_STEPS", "2")
    assert env.max_steps() == 2 and list(env.limit(range(5))) == [0, 1]
    monkeypatch.setenv("COURSE_MAX_STEPS", "zero")
    with pytest.raises(ValueError, match="COURSE_MAX_STEPS"):
        env.max_steps()


def test_course_device_cpu_gives_cpu_sizes_on_a_gpu_machine(monkeypatch):
    monkeypatch.setattr(env, "torch_cuda_usable", lambda: True)
    assert env.mode() == "gpu"
    monkeypatch.setenv("COURSE_DEVICE", "cpu")
    assert env.mode() == "cpu" and env.device().type == "cpu"
    monkeypatch.setenv("COURSE_MODE", "gpu")  # the size check: gpu sizes, computed on the CPU
    assert env.mode() == "gpu" and env.device().type == "cpu"
    monkeypatch.setenv("COURSE_DEVICE", "cuda:1")
    assert env.device() == __import__("torch").device("cuda", 1)


@pytest.mark.parametrize("value", ["gpu", "CUDA", "cupy", "cuda:x"])
def test_course_device_is_read_by_the_one_parser(monkeypatch, value):
    monkeypatch.setenv("COURSE_DEVICE", value)
    with pytest.raises(ValueError, match="COURSE_DEVICE.*write"):
        env.device()
    with pytest.raises(ValueError, match="COURSE_DEVICE"):
        env.mode()


def test_capped_sizes_follow_the_step_cap(monkeypatch):
    monkeypatch.delenv("COURSE_MAX_STEPS", raising=False)
    assert env.capped(50_000, per_step=128) == 50_000
    monkeypatch.setenv("COURSE_MAX_STEPS", "2")
    assert env.capped(50_000, per_step=128) == 256 and env.capped(100, per_step=128) == 100
    assert env.capped(7) == 2
    for bad in ({"count": -1}, {"count": 2.5}, {"count": 10, "per_step": 0}):
        with pytest.raises(ValueError, match="whole number"):
            env.capped(**bad)
