"""Notebook 00's exercise checks: the answer passes, the stub is "not attempted", the usual mistake fails."""

import os
import statistics
import time

import pytest
import torch

import course
from course import checks
from course.exercises import setup_and_tour as ex


def stub(*args, **kwargs):
    raise NotImplementedError


# --- right answers (the notebook's solution cells hold the same) ----------------------------

def gflops(n, seconds):
    return 2 * n**3 / seconds / 1e9


def matmul_sizes():
    return course.env.pick(fast=[64, 128, 256], cpu=[2**k for k in range(6, 11)], gpu=[2**k for k in range(6, 13)])


def time_it(work, sync, repeat=5):
    work()
    sync()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        work()
        sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def largest_batch(make_batch, sizes):
    for size in sorted(sizes, reverse=True):
        try:
            make_batch(size)
            return size
        except torch.OutOfMemoryError:
            pass
    raise MemoryError(f"even {min(sizes)} does not fit: use a smaller model")


RIGHT = [(ex.check_gflops, gflops), (ex.check_matmul_sizes, matmul_sizes), (ex.check_time_it, time_it),
         (ex.check_largest_batch, largest_batch)]


@pytest.mark.parametrize("check,fn", RIGHT, ids=lambda v: getattr(v, "__name__", ""))
def test_the_answer_passes_and_the_stub_is_not_attempted(capsys, check, fn):
    mode_before = os.environ.get("COURSE_MODE")
    assert check(fn), capsys.readouterr().out
    assert "✅" in capsys.readouterr().out
    assert not check(stub)
    out = capsys.readouterr().out
    assert "not attempted yet" in out and "💡" not in out, out
    assert os.environ.get("COURSE_MODE") == mode_before  # the sizes check restores the mode


def test_each_exercise_has_a_nudge_then_a_method(capsys):
    for check, _ in RIGHT:
        check(stub)
    for name in ("gflops", "matmul_sizes", "time_it", "largest_batch"):
        assert "hint 1 of 2" in checks.hint(name) and "hint 2 of 2" in checks.hint(name)
    capsys.readouterr()


# --- the most common wrong answer of each exercise ------------------------------------------

def test_n_squared_instead_of_two_n_cubed(capsys):
    assert not ex.check_gflops(lambda n, s: n**3 / s / 1e9)
    assert "with input (256, 0.001)" in (out := capsys.readouterr().out) and "expected 33.554432, got 16.777216" in out


def test_one_list_for_every_mode_is_rejected(capsys):
    assert not ex.check_matmul_sizes(lambda: [64, 128, 256, 512, 1024])
    out = capsys.readouterr().out
    assert "in every mode" in out and "in fast mode expected [64, 128, 256]" in out, out


def test_sizes_picked_once_at_import_are_rejected(capsys):
    os.environ["COURSE_MODE"] = "cpu"
    try:
        sizes = matmul_sizes()  # picked once, outside the function
    finally:
        os.environ.pop("COURSE_MODE")
    assert not ex.check_matmul_sizes(lambda: sizes)
    assert "ask course.env.pick inside the function" in capsys.readouterr().out


def test_a_timer_without_sync_is_rejected(capsys):
    def no_sync(work, sync, repeat=5):
        work()
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            work()
            times.append(time.perf_counter() - t0)
        return statistics.median(times)

    assert not ex.check_time_it(no_sync)
    out = capsys.readouterr().out
    assert "the clock stopped before the device finished" in out and "busy for 20 ms" in out, out


def test_a_timer_without_warm_up_is_rejected(capsys):
    def no_warm_up(work, sync, repeat=5):
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            work()
            sync()
            times.append(time.perf_counter() - t0)
        return statistics.median(times)

    assert not ex.check_time_it(no_warm_up)
    assert "call fn once before timing" in capsys.readouterr().out


def test_a_timer_that_starts_while_the_warm_up_runs_is_rejected(capsys):
    def no_sync_after_warm_up(work, sync, repeat=5):
        work()
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            work()
            sync()
            times.append(time.perf_counter() - t0)
        return statistics.median(times)

    assert not ex.check_time_it(no_sync_after_warm_up)
    assert "before the clock starts" in capsys.readouterr().out


def test_catching_every_error_is_rejected(capsys):
    def catch_all(make_batch, sizes):
        for size in sorted(sizes, reverse=True):
            try:
                make_batch(size)
                return size
            except Exception:
                pass
        raise MemoryError("nothing fits")

    assert not ex.check_largest_batch(catch_all)
    assert "catch only out-of-memory errors" in capsys.readouterr().out


def test_trying_in_the_given_order_is_rejected(capsys):
    def given_order(make_batch, sizes):
        best = None
        for size in sizes:
            try:
                make_batch(size)
                best = size if best is None else max(best, size)
            except torch.OutOfMemoryError:
                pass
        return best

    assert not ex.check_largest_batch(given_order)
    assert "try from the largest down" in capsys.readouterr().out
