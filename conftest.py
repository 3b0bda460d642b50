"""Pytest hooks for the whole repository: notebook timings under nbval, and checks that can fail."""

import collections
import os
import shutil
import signal
import threading
import time

import pytest

# Without an NVIDIA driver, Triton kernels run in Triton's CPU interpreter. It must be switched on
# before anything imports Triton (torch.compile and torch._dynamo do), and in one pytest process
# many test files import those first; course.kernels_triton refuses to run otherwise.
if shutil.which("nvidia-smi") is None:
    os.environ.setdefault("TRITON_INTERPRET", "1")

_notebook_seconds = collections.defaultdict(float)
_notebook_failed = set()


def pytest_runtest_logreport(report):
    path = report.nodeid.split("::")[0]
    if path.endswith(".ipynb"):
        _notebook_seconds[path] += report.duration
        if report.failed:
            _notebook_failed.add(path)


def pytest_terminal_summary(terminalreporter):
    if not _notebook_seconds:
        return
    mode = os.environ.get("COURSE_MODE") or ("fast" if os.environ.get("COURSE_FAST") == "1" else "default")
    extra = "".join(f", {label} {os.environ[name]}" for name, label in
                    (("COURSE_DEVICE", "device"), ("COURSE_MAX_STEPS", "steps capped at")) if os.environ.get(name))
    terminalreporter.section(f"notebook timings ({mode} mode{extra})")
    for path, seconds in sorted(_notebook_seconds.items()):
        status = "FAILED" if path in _notebook_failed else "ok"
        terminalreporter.write_line(f"{seconds:7.1f} s  {status:6}  {path}")
    terminalreporter.write_line(f"{sum(_notebook_seconds.values()):7.1f} s  total")



def pytest_collection_modifyitems(session, config, items):
    """Notebooks first, the longest first (their order otherwise kept), then the test files as collected:
    `make test` hands whole files to its worker processes in this order (pytest-xdist's loadfile), and a
    45-second notebook handed out last keeps one worker busy while the other waits; the short test files
    at the end fill the gaps instead."""
    if not any(str(item.fspath).endswith(".ipynb") for item in items):
        return
    slow = ["11_distributed", "05_cifar10_cnn", "09_onnx_export", "02_cuda_kernel_puzzles", "08_unet_road_segmentation"]
    def rank(item):
        path = str(item.fspath)
        if not path.endswith(".ipynb"):
            return (1, 0)
        return (0, next((k for k, name in enumerate(slow) if name in path), len(slow)))
    items.sort(key=rank)  # (stable: each file's own order stays)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """An exercise's check cell runs right after the untouched stub: it must report ❌ there.

    nbval proves that the check does not raise and that the folded solution passes; this proves
    the check can fail, so a check that passes whatever the learner writes is caught.
    """
    outcome = yield
    report = outcome.get_result()
    cell = getattr(item, "cell", None)
    if call.when != "call" or not report.passed or cell is None:
        return
    if "check" not in cell.get("metadata", {}).get("tags", []):
        return
    printed = "".join(o.get("text", "") for o in (item.test_outputs or []) if o.get("output_type") == "stream")
    if "❌" not in printed:
        report.outcome = "failed"
        report.longrepr = (f"the check cell of an exercise printed no ❌ on the untouched stub "
                           f"(it printed {printed.strip()[:300]!r}); a check must fail on the stub")


@pytest.fixture
def stopped_by_ctrl_c():
    """``stopped_by_ctrl_c(call)``: run ``call`` with a SIGINT (Jupyter's interrupt button) sent 0.3 s
    in, and assert that it ends in KeyboardInterrupt within 5 s."""
    def run(call):
        timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
        timer.start()
        started = time.perf_counter()
        try:
            with pytest.raises(KeyboardInterrupt):
                call()
        finally:
            timer.cancel()
        assert time.perf_counter() - started < 5

    return run


@pytest.fixture
def private_kernel_cache(tmp_path, monkeypatch):
    """A kernel cache of the test's own (tmp_path, set as COURSE_CUDA_CACHE), with the runtime objects that the
    regular cache has built already copied in: each build kind's runtime.o and runtime.h.gch take seconds to build,
    and a test of how the cache keeps modules does not need them built again (one that tests the runtime's own
    build uses tmp_path as it is)."""
    from course.cuda import cpu

    try:
        for folder in cpu.cache_dir().glob("runtime-*"):
            if not folder.name.startswith("runtime-build-") and (folder / "runtime.o").is_file():
                shutil.copytree(folder, tmp_path / folder.name)
    except OSError:
        pass  # (built again where needed)
    monkeypatch.setenv("COURSE_CUDA_CACHE", str(tmp_path))
    return tmp_path
