"""tools/gpu_sizes.py: the gpu-size check's parts cover every notebook once, fit CI's budget, and
make test's turn follows the commit."""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import gpu_sizes  # noqa: E402

NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def test_every_notebook_has_a_measured_time():
    assert {p.name for p in NOTEBOOKS} <= set(gpu_sizes.SECONDS), \
        "a notebook without a time in tools/gpu_sizes.py: run make test-gpu-sizes NOTEBOOKS=... and add it"


def test_parts_cover_every_notebook_once_and_fit_the_budget():
    parts = gpu_sizes.parts(NOTEBOOKS)
    flat = [p for part in parts for p in part]
    assert sorted(flat) == NOTEBOOKS
    for part in parts:
        assert sum(gpu_sizes.SECONDS[p.name] for p in part) <= gpu_sizes.BUDGET or len(part) == 1
    assert len(parts) == len(gpu_sizes.parts(NOTEBOOKS, gpu_sizes.BUDGET))  # deterministic
    assert gpu_sizes.parts(NOTEBOOKS, budget=10**6) == [NOTEBOOKS]


def test_turns_rotate_over_the_parts(monkeypatch):
    n = len(gpu_sizes.parts(NOTEBOOKS))
    turn = gpu_sizes.commit_turn(n)
    assert 1 <= turn <= n

    class Done:
        stdout = "41\n"

    monkeypatch.setattr(gpu_sizes.subprocess, "run", lambda *a, **k: Done())
    assert [gpu_sizes.commit_turn(k) for k in (1, 2, 3, 5)] == [1, 2, 3, 2]


def test_list_and_bad_parts(capsys, monkeypatch):
    assert gpu_sizes.main(["--list"]) == 0
    out = capsys.readouterr().out
    assert out.count("part ") == len(gpu_sizes.parts(NOTEBOOKS)) and "00_setup_and_tour.ipynb" in out
    with pytest.raises(SystemExit):
        gpu_sizes.main(["--part", "9/99"])
    assert "parts now" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        gpu_sizes.main(["--notebooks", "notebooks/99_missing.ipynb"])
    monkeypatch.setenv("COURSE_GPU_SIZES_PART", "zero")
    with pytest.raises(SystemExit):
        gpu_sizes.main([])
