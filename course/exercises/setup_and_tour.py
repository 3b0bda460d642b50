"""Notebook 00's exercise checks (setup and tour): GFLOP/s, sizes per mode, an honest timer, OOM fallback.

Each ``check_*`` prints ✅ or ❌ with a diagnosis through ``course.checks``, registers the
exercise's hints for ``course.checks.hint()`` and returns a bool; it never raises because of the
learner's code. ``PretendGPU`` lets a CPU show what a GPU's asynchronous launches do to a timer.
"""

from __future__ import annotations

import os
import statistics
import time

from course import checks
from course.checks import called as _called, verdict as _verdict

__all__ = ["PretendGPU", "check_gflops", "check_matmul_sizes", "check_time_it", "check_largest_batch"]


# --- Exercise 1: GFLOP/s ----------------------------------------------------------------------

def check_gflops(fn) -> bool:
    """``fn(n, seconds)``: billions of floating-point operations per second of an n×n matmul."""
    cases = [(1, 1.0), (256, 1e-3), (1000, 0.5), (4096, 0.0123)]
    return checks.check_function(fn, lambda n, s: 2 * n**3 / s / 1e9, cases, name="gflops", hints=[
        "Count the work first: each of the n² outputs is a dot product of two length-n vectors, and "
        "each step of a dot product is one multiply and one add.",
        "operations = 2 × n³; divide them by the seconds for operations per second, then by 10⁹ for G.",
    ])


# --- Exercise 2: sizes for each mode ----------------------------------------------------------

_SIZE_LIMITS = {"fast": 256, "cpu": 1024, "gpu": 4096}


def check_matmul_sizes(fn) -> bool:
    """``fn()``: matrix sizes doubling from 64 up to 256 (fast), 1024 (cpu) or 4096 (gpu) — in every mode."""

    def judge():
        saved, answers = os.environ.get("COURSE_MODE"), {}
        try:
            for mode in _SIZE_LIMITS:  # force each mode in turn, as COURSE_MODE=... would
                os.environ["COURSE_MODE"] = mode
                answers[mode] = _called(fn)
        finally:
            if saved is None:
                os.environ.pop("COURSE_MODE", None)
            else:
                os.environ["COURSE_MODE"] = saved
        for mode, top in _SIZE_LIMITS.items():
            got, expected = answers[mode], [2**k for k in range(6, top.bit_length())]
            if not isinstance(got, (list, tuple)) or list(got) != expected:
                if len({repr(a) for a in answers.values()}) == 1:
                    return (f"you return {got!r} in every mode: in {mode} mode expected {expected}. The sizes "
                            "must follow the mode: ask course.env.pick inside the function.")
                return f"in {mode} mode you return {got!r}; expected {expected} (doubling from 64 up to {top})."
        return None

    return _verdict("matmul_sizes", [
        "The function must answer differently in each mode, so it has to ask which mode this run is in "
        "— every time it is called, not once when the notebook starts.",
        "Return course.env.pick(fast=..., cpu=..., gpu=...) with one list per mode; each list starts at "
        "64 and doubles (a list comprehension over powers of two, or the numbers written out).",
    ], judge, "right in fast, cpu and gpu mode (the check forced each one with COURSE_MODE).")


# --- Exercise 3: an honest timer --------------------------------------------------------------

class PretendGPU:
    """A stand-in for a GPU's asynchrony, on any machine (notebook 00).

    ``launch()`` queues ``seconds`` of work and returns at once, like a CUDA kernel launch (the
    first launch also pays a one-time ``first_extra``, like a GPU's warm-up); ``synchronize()``
    waits until all queued work is done, like ``torch.cuda.synchronize()``.
    """

    def __init__(self, seconds: float = 0.02, first_extra: float = 0.1):
        self.seconds, self.first_extra = seconds, first_extra
        self._busy_until = time.perf_counter()
        self.log: list[str] = []

    def launch(self) -> None:
        cost = self.seconds + (0.0 if "launch" in self.log else self.first_extra)
        self._busy_until = max(time.perf_counter(), self._busy_until) + cost
        self.log.append("launch")

    def synchronize(self) -> None:
        wait = self._busy_until - time.perf_counter()
        if wait > 0:
            time.sleep(wait)
        self.log.append("sync")


def _timer_problem(log: list[str], repeat: int) -> str | None:
    launches = [i for i, event in enumerate(log) if event == "launch"]
    if len(launches) < repeat + 1:
        return (f"you called fn {len(launches)} time(s) for repeat={repeat}: the first call pays one-time costs "
                "(here an extra 100 ms), so call fn once before timing and do not count that call.")
    if len(launches) > repeat + 3:
        return f"you called fn {len(launches)} times for repeat={repeat}: time exactly `repeat` calls."
    timed = launches[-repeat:]
    before_first = log[launches[-repeat - 1]:timed[0]]
    if "sync" not in before_first:
        return ("the warm-up call was still running on the device when your first timed call started, so "
                "its work was counted: wait for the device (sync) after the warm-up, before the clock starts.")
    for a, b in zip(timed, timed[1:] + [len(log)]):
        if "sync" not in log[a:b]:
            return ("a timed call was not followed by sync before the next one (or the end): the clock stopped "
                    "while the device was still working.")
    return None


def check_time_it(fn) -> bool:
    """``fn(work, sync, repeat)`` must warm up, synchronise around each timed call and return the median."""

    def judge():
        for repeat in (5, 3):
            device = PretendGPU()
            got = _called(fn, device.launch, device.synchronize, repeat)
            if not isinstance(got, (int, float)):
                return f"return the median time in seconds as a number; got {type(got).__name__}."
            if got < 0.5 * device.seconds:
                return (f"you measured {got * 1e3:.2f} ms per call, but each call keeps the (pretend) GPU busy for "
                        f"{device.seconds * 1e3:.0f} ms: the clock stopped before the device finished. "
                        "Wait for the device before reading the clock.")
            problem = _timer_problem(device.log, repeat)
            if problem:
                return f"with repeat={repeat}: {problem}"
            if got > 1.8 * device.seconds:
                return (f"you measured {got * 1e3:.1f} ms per call for {device.seconds * 1e3:.0f} ms of work: "
                        "return the median of the per-call times (not their sum, and without the warm-up).")
        return None

    return _verdict("time_it", [
        "On a GPU a call returns when the work is *queued*. Where must you wait for the device so that "
        "the clock measures the work — and what should run once before any timing?",
        "Call work() once and sync(); then, `repeat` times: read time.perf_counter(), call work(), "
        "sync(), read the clock again and keep the difference. Return statistics.median of the differences.",
    ], judge, "warm-up, a sync before the clock starts and before it stops, and the median — an honest timer.")


# --- Exercise 4: the largest batch that fits ---------------------------------------------------

def _out_of_memory(size):
    import torch

    return torch.OutOfMemoryError(f"CUDA out of memory. Tried to allocate {size * 0.6:.0f} MiB (a pretend GPU)")


def check_largest_batch(fn) -> bool:
    """``fn(make_batch, sizes)``: the largest size whose make_batch does not run out of memory, tried large to small."""

    def judge():
        for sizes, limit in [([64, 16, 1024, 256], 300), ([8, 32], 100), ([512, 128], 128)]:
            tried = []

            def make_batch(size):
                tried.append(size)
                if size > limit:
                    raise _out_of_memory(size)
                return [0] * 3  # a stand-in for the batch

            got = _called(fn, make_batch, list(sizes))
            expected = max(s for s in sizes if s <= limit)
            if got != expected:
                return (f"with sizes {sizes} on a device that holds {limit}: you returned {got!r}, "
                        f"expected {expected} (the largest that fits).")
            order = sorted(sizes, reverse=True)
            if tried != order[:order.index(expected) + 1]:
                return (f"with sizes {sizes}: you tried {tried}; try from the largest down and stop at the first "
                        f"that fits ({order[:order.index(expected) + 1]}): every try costs time.")
        tried = []

        def never_fits(size):
            tried.append(size)
            raise _out_of_memory(size)

        try:
            got = fn(never_fits, [4, 2])
        except NotImplementedError:
            raise
        except Exception as error:  # an error that says so is right here
            if not str(error):
                return "when nothing fits, raise an error with a message that says what to do."
        else:
            return (f"when no size fits you returned {got!r}: raise an error (e.g. MemoryError) that says what "
                    "to do, so that nobody trains with a batch of None.")

        def buggy(size):
            raise ValueError("a bug in make_batch, not a lack of memory")

        try:
            fn(buggy, [4, 2])
        except ValueError:
            return None
        except Exception as error:
            return (f"make_batch raised ValueError (a bug, not out-of-memory) and your function turned it into "
                    f"{type(error).__name__}: catch only out-of-memory errors, let every other error through.")
        return ("make_batch raised ValueError (a bug, not out-of-memory) and your function swallowed it: catch "
                "only out-of-memory errors (torch.OutOfMemoryError), let every other error through.")

    return _verdict("largest_batch", [
        "Try the biggest size first; an out-of-memory error is the signal to try the next smaller one. "
        "But not every error means 'too big' — which ones should you catch?",
        "Loop over sorted(sizes, reverse=True); in a try block return the size as soon as make_batch(size) "
        "succeeds; catch only torch.OutOfMemoryError (then free the cache: torch.cuda.empty_cache() on a "
        "GPU). After the loop, raise MemoryError with a message.",
    ], judge, "largest first, stops at the first fit, only out-of-memory errors caught, a clear error when nothing fits.")
