"""make gpu-check in its no-GPU form, and the bench tool it calls."""

import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tools import gpu_check  # noqa: E402


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


def test_everything_lands_in_at_most_nine_files(check_output):
    out, _ = check_output
    files = [p for p in out.rglob("*") if p.is_file()]
    assert len(files) <= 9 and all(p.parent == out for p in files), files
    names = {p.name for p in files}
    assert {"summary.md", "summary.json", "environment.txt", "bench.md", "bench.json", "notebooks.tar.gz",
            "record.md"} <= names
    with tarfile.open(out / "notebooks.tar.gz") as tar:
        assert tar.getnames() == ["fast/00_setup_and_tour.ipynb"]


def test_the_record_names_the_run_and_has_a_row_per_item(check_output):
    out, _ = check_output
    record = (out / "record.md").read_text()
    for fact in ("- date:", "- driver:", "- torch:", "- CuPy:", "- command: `make gpu-check PART=1/1"):
        assert fact in record, fact
    rows = gpu_check.read_rows(out / "record.md")
    assert rows["00_setup_and_tour.ipynb"][:3] == ("fast", "full", "passed")
    assert rows["tools/bench.py"][2] == "passed" and float(rows["tools/bench.py"][3]) > 0
    assert not (ROOT / "docs" / "gpu-runs" / "cpu_no_usable_GPU.md").exists()  # only GPU runs are kept


def test_bench_table_has_the_emulator_figures(check_output):
    out, _ = check_output
    data = json.loads((out / "bench.json").read_text())
    rows = data["sections"]["CPU emulator (course.cuda, CPU backend)"]
    names = " | ".join(r["name"] for r in rows)
    assert "tiled shared-memory matmul" in names and "vector add: emulated kernel / plain C" in names
    for kernel in ("vector add", "3×3 stencil"):
        assert f"{kernel}: emulated kernel / plain C not vectorised" in names
        assert f"{kernel}: every block checked / blocks proved in bounds" in names  # (what the fast path gives)
        assert f"{kernel}: checked thread loop with / without its bounds checks" in names
    assert "vector add: plain C with memcheck's checks / plain C" in names  # (the floor of a checked thread loop)
    assert "3×3 stencil: plain C thread loop without checks / plain C" in names  # (and of any thread loop)
    assert all(r["value"] and r["value"] > 0 for r in rows)
    assert "quick sizes" in (out / "bench.md").read_text()


def test_gpu_check_runs_every_test_file_that_has_gpu_cases_and_every_exercise_test():
    files = set(gpu_check.gpu_test_files())
    assert {"tests/test_cuda_faults.py", "tests/test_cuda_kernels.py", "tests/test_devices.py",
            "tests/test_timing.py", "tests/test_checks.py"} <= files
    assert {f"tests/{p.name}" for p in (ROOT / "tests").glob("test_exercises_*.py")} <= files
    assert "tests/test_gpu_check.py" not in files and "tests/test_packaging.py" not in files


NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


@pytest.mark.parametrize("parts", [1, 2, 3, 4])
def test_parts_cover_every_item_once_and_balance_the_estimates(parts):
    work = gpu_check.items(NOTEBOOKS)
    groups = gpu_check.partition(work, parts, recorded={})
    assert sorted((i.name for g in groups for i in g)) == sorted(i.name for i in work)
    loads = [sum(gpu_check.estimate(i, {}) for i in g) for g in groups]
    biggest = max(gpu_check.estimate(i, {}) for i in work)
    assert max(loads) - min(loads) <= biggest  # longest-first greedy: no part exceeds another by more than one item
    assert groups == gpu_check.partition(work, parts, recorded={})  # the same parts on every machine


def test_enough_parts_make_every_part_fit_its_slot():
    work = gpu_check.items(NOTEBOOKS)
    budget = gpu_check.PART_BUDGET_MINUTES * 60
    needed = gpu_check.parts_needed(work, budget, recorded={})
    groups = gpu_check.partition(work, needed, recorded={})
    assert all(sum(gpu_check.estimate(i, {}) for i in g) <= budget for g in groups)
    assert needed == 1 or any(sum(gpu_check.estimate(i, {}) for i in g) > budget
                              for g in gpu_check.partition(work, needed - 1, recorded={}))  # the fewest
    recorded = {"08_unet_road_segmentation.ipynb": 900.0}  # a recorded run overrides the guess
    assert gpu_check.estimate(gpu_check.Item("notebook", "08_unet_road_segmentation.ipynb", NOTEBOOKS[0]), recorded) == 900


def test_recorded_seconds_are_read_from_the_records(tmp_path):
    (tmp_path / "A.md").write_text("| item | mode | steps | status | seconds |\n|---|---|---|---|---|\n"
                                   "| 05_cifar10_cnn.ipynb | gpu | full | passed | 312.5 |\n| tests | - | full | passed | 80 |\n")
    (tmp_path / "B.md").write_text("| 05_cifar10_cnn.ipynb | gpu | full | passed | 400 |\n")
    assert gpu_check.recorded_seconds(tmp_path) == {"05_cifar10_cnn.ipynb": 400.0, "tests": 80.0}


@pytest.mark.parametrize("text", ["0/3", "4/3", "1-3", "", "a/b"])
def test_bad_part_gets_a_clear_error(text):
    with pytest.raises(Exception, match="K/N"):
        gpu_check.parse_part(text)


def test_list_shows_the_parts_and_runs_nothing(tmp_path):
    result = subprocess.run([sys.executable, "tools/gpu_check.py", "--list", "--part", "2/3", "--out", str(tmp_path)],
                            cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("\npart ") == 3 and "00_setup_and_tour.ipynb" in result.stdout
    assert "parts of at most 9 min each cover everything" in result.stdout
    assert not any(tmp_path.iterdir())


def test_the_bench_build_without_bounds_checks_has_none_and_nothing_else_turns_them_off():
    """bench.py's 'built without bounds checks' rows measure a kernel whose checks are really gone."""
    import numpy as np

    from course import cuda
    from tools import bench

    code = 'extern "C" __global__ void past(const float* x, float* out) { out[0] = x[4]; }'
    parent = np.arange(8, dtype=np.float32)  # x is its first half: x[4] lies inside the parent's memory
    out = np.zeros(1, np.float32)
    with pytest.raises(cuda.KernelError, match=r"accessed x\[4\], but x has 4 elements"):
        cuda.RawKernel(code, "past", backend="cpu", sanitize=False)(1, 1, (parent[:4], out))
    cuda.RawKernel(code, "past", backend="cpu", sanitize=False, options=bench.UNCHECKED)(1, 1, (parent[:4], out))
    assert out[0] == 4.0
