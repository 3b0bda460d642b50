"""make gpu-check in its no-GPU form, and the bench tool it calls."""

import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def check_output(tmp_path_factory):
    out = tmp_path_factory.mktemp("gpu-check")
    result = subprocess.run(
        [sys.executable, "tools/gpu_check.py", "--out", str(out), "--skip-tests", "--quick",
         "--notebooks", "notebooks/00_setup_and_tour.ipynb", "--bench-only", "emulator"],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    return out, result


def test_runs_degraded_and_says_so(check_output):
    out, result = check_output
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    if summary["gpu"]:
        pytest.skip("a GPU is usable here: the degraded form is not what runs")
    assert "No usable GPU" in summary["banner"] and "No usable GPU" in result.stdout
    assert [s["status"] for s in summary["steps"]] == ["passed", "passed"]


def test_everything_lands_in_at_most_eight_files(check_output):
    out, _ = check_output
    files = [p for p in out.rglob("*") if p.is_file()]
    assert len(files) <= 8 and all(p.parent == out for p in files), files
    names = {p.name for p in files}
    assert {"summary.md", "summary.json", "environment.txt", "bench.md", "bench.json", "notebooks.tar.gz"} <= names
    with tarfile.open(out / "notebooks.tar.gz") as tar:
        assert tar.getnames() == ["fast/00_setup_and_tour.ipynb"]


def test_bench_table_has_the_emulator_figures(check_output):
    out, _ = check_output
    data = json.loads((out / "bench.json").read_text())
    rows = data["sections"]["CPU emulator (course.cuda, CPU backend)"]
    names = " | ".join(r["name"] for r in rows)
    assert "tiled shared-memory matmul" in names and "vector add: emulated kernel / plain C" in names
    assert all(r["value"] and r["value"] > 0 for r in rows)
    assert "quick sizes" in (out / "bench.md").read_text()


def test_gpu_check_runs_every_test_file_that_has_gpu_cases():
    import re

    from tools.gpu_check import GPU_TESTS

    with_gpu_cases = {f"tests/{p.name}" for p in (ROOT / "tests").glob("test_*.py")
                      if p.name != "test_gpu_check.py"
                      and re.search(r"cuda\.is_available|usable GPU|cupy_usable|needs a CUDA", p.read_text())}
    assert with_gpu_cases == set(GPU_TESTS), "update GPU_TESTS in tools/gpu_check.py"
