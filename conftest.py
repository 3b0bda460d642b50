"""Pytest hooks for the whole repository: how long each notebook took under nbval."""

import collections
import os

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
    mode = "fast" if os.environ.get("COURSE_FAST") == "1" else os.environ.get("COURSE_MODE", "default")
    terminalreporter.section(f"notebook timings ({mode} mode)")
    for path, seconds in sorted(_notebook_seconds.items()):
        status = "FAILED" if path in _notebook_failed else "ok"
        terminalreporter.write_line(f"{seconds:7.1f} s  {status:6}  {path}")
    terminalreporter.write_line(f"{sum(_notebook_seconds.values()):7.1f} s  total")
