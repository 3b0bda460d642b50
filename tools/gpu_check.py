"""The prepared check for a GPU machine (`make gpu-check`), in parts that each fit a 10-minute slot.

    python tools/gpu_check.py [--part K/N] [--list] [--out DIR] [--budget MINUTES] [--notebooks NB ...]
                              [--quick] [--bench-only SECTION ...] [--skip-tests]
    python tools/gpu_check.py --fetch-wheels [PYTHON_VERSION]

A bare GPU image may lack Jupyter (the lent H200's has none, and fetches nothing): run
``--fetch-wheels`` here first, carry the .whl/ folder it fills with the call, and the notebook
items install what is missing from it.

The work is a list of items, split into N parts of about equal (estimated) time; ``--part K/N``
runs the K-th (default 1/1: everything), ``--list`` shows the parts without running anything:

1. the unit tests with GPU cases and the exercise tests: the course.cuda parity and fault suites
   on CuPy, the GPU helpers, every exercise check (which check CUDA C kernels on the CPU backend
   and on CuPy);
2. every notebook, each its own item, at gpu size (full steps) on a GPU;
3. ``tools/bench.py``, GPU sections included.

Estimates come from the slowest recorded run of each item in ``docs/gpu-runs/*.md``, else from
``DEFAULT_SECONDS``. An item whose part has less than 30 s left is skipped and says so; each
item's time limit is what is left of the part's budget, so a part never outlasts it.

Without a GPU it says so and runs the same items degraded (CuPy cases skipped, notebooks in fast
mode, ``bench --quick``), which is how CI keeps this script working.

Everything lands in one folder (default ``$OUT`` when set, else build/gpu-check), as at most nine
files: summary.md, summary.json, steps.log (tests and benchmarks), notebooks.log, notebooks.tar.gz,
bench.md, bench.json, environment.txt and record.md — the run's record (date, device, driver,
torch/CuPy versions, command, one row per item: ``| item | mode | steps | status | seconds |``).
On a GPU the record's rows are also merged into ``docs/gpu-runs/<device>.md`` of this checkout
(commit it); ``tests/test_guardrails.py`` reads those files.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

GPU_RUNS = ROOT / "docs" / "gpu-runs"

#: Guessed seconds of each item on a data-centre GPU, until a recorded run gives real ones.
DEFAULT_SECONDS = {"tests": 300, "bench": 300, "00": 60, "01": 180, "02": 150, "03": 150, "04": 120, "05": 420,
                   "06": 120, "07": 300, "08": 480, "09": 240, "10": 300, "11": 180}
#: A part's budget: a 10-minute slot less the machine's start and the files' way back.
PART_BUDGET_MINUTES = 9.0
#: An item is not started with less than this left of its part's budget.
MIN_SECONDS = 30

#: What marks a test file that has GPU cases (CuPy or CUDA paths that skip without a GPU).
GPU_CASES = re.compile(r"cuda\.is_available|usable GPU|cupy_usable|needs a CUDA")


def gpu_test_files() -> list[str]:
    """The unit-test files with GPU cases, and every exercise test (checks run kernels on CuPy too)."""
    files = []
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        if path.name == "test_gpu_check.py":
            continue
        if GPU_CASES.search(path.read_text(encoding="utf-8")) or path.name.startswith("test_exercises_") \
                or path.name == "test_checks.py":
            files.append(f"tests/{path.name}")
    return files


@dataclass(frozen=True)
class Item:
    """One piece of the check: ``kind`` is "tests", "notebook" or "bench"; ``name`` is what the record shows."""

    kind: str
    name: str
    path: Path | None = None

    @property
    def key(self) -> str:
        return self.path.stem[:2] if self.path is not None else self.kind


def items(notebooks: list[Path], skip_tests: bool = False) -> list[Item]:
    work = [] if skip_tests else [Item("tests", "unit tests with GPU cases and exercise checks")]
    work += [Item("notebook", path.name, path) for path in notebooks]
    return work + [Item("bench", "tools/bench.py")]


def recorded_seconds(folder: Path = GPU_RUNS) -> dict:
    """{record row name: the slowest recorded seconds} over every device's record."""
    seconds: dict = {}
    for path in sorted(folder.glob("*.md")) if folder.is_dir() else []:
        for line in path.read_text(encoding="utf-8").splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) == 5:
                try:
                    value = float(cells[4])
                except ValueError:
                    continue
                seconds[cells[0]] = max(seconds.get(cells[0], 0.0), value)
    return seconds


def estimate(item: Item, recorded: dict) -> float:
    return recorded.get(item.name) or DEFAULT_SECONDS.get(item.key, 300)


def partition(work: list[Item], parts: int, recorded: dict | None = None) -> list[list[Item]]:
    """``work`` in ``parts`` groups of about equal estimated time (longest first, each to the lightest group),
    each group in the original order. Deterministic: the same input always gives the same parts."""
    if parts < 1:
        raise ValueError(f"need at least one part, got {parts}")
    recorded = recorded_seconds() if recorded is None else recorded
    groups: list[list[Item]] = [[] for _ in range(parts)]
    load = [0.0] * parts
    for item in sorted(work, key=lambda i: (-estimate(i, recorded), work.index(i))):
        k = min(range(parts), key=lambda j: (load[j], j))
        groups[k].append(item)
        load[k] += estimate(item, recorded)
    return [sorted(g, key=work.index) for g in groups]


def parts_needed(work: list[Item], budget_seconds: float, recorded: dict | None = None) -> int:
    """The fewest parts whose estimated times all fit ``budget_seconds`` (an item longer than that gets a part alone)."""
    recorded = recorded_seconds() if recorded is None else recorded
    for parts in range(1, len(work) + 1):
        loads = [sum(estimate(i, recorded) for i in g) for g in partition(work, parts, recorded)]
        if all(load <= budget_seconds or len(g) == 1 for load, g in zip(loads, partition(work, parts, recorded))):
            return parts
    return len(work)


def parse_part(text: str) -> tuple[int, int]:
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text or "")
    if not match or not 1 <= int(match.group(1)) <= int(match.group(2)):
        raise argparse.ArgumentTypeError(f"PART must read K/N with 1 <= K <= N, e.g. 1/3; got {text!r}")
    return int(match.group(1)), int(match.group(2))


def run_step(name: str, command: list[str], log: Path, timeout: float, env: dict | None = None) -> dict:
    """Run one step, appending its output to ``log``; never raises."""
    started = time.perf_counter()
    with open(log, "a", encoding="utf-8") as out:
        out.write(f"\n$ {' '.join(command)}\n")
        out.flush()
        try:
            code = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT, timeout=timeout,
                                  env={**os.environ, **(env or {})}).returncode
            status = "passed" if code == 0 else f"failed (exit {code})"
        except subprocess.TimeoutExpired:
            status = f"timed out after {timeout:.0f} s"
    seconds = time.perf_counter() - started
    print(f"{name}: {status} in {seconds:.0f} s", flush=True)
    return {"step": name, "status": status, "seconds": round(seconds, 1)}


def _failure(log: Path) -> str:
    """The last error line of a notebook's log, for the summary."""
    lines = [l for l in log.read_text(encoding="utf-8", errors="replace").splitlines() if l.strip()] if log.exists() else []
    errors = [l for l in lines if re.search(r"Error|Exception|Timeout", l)]
    return (errors or lines or ["no output"])[-1].strip()[:200]


# What the notebook items need that a bare GPU image may lack (the lent H200's has torch, CuPy,
# matplotlib and pytest, and no Jupyter): `--fetch-wheels` downloads them here into .whl/
# (git-ignored), the call carries the folder, and the run installs them where they are missing.
WHEELS = ROOT / ".whl"
NOTEBOOK_PACKAGES = ["nbformat", "nbclient", "ipykernel", "ipywidgets"]
# Of their requirements, those such images have already: not downloaded.
IMAGE_HAS = {"attrs", "coverage", "iniconfig", "packaging", "pluggy", "psutil", "pygments", "pytest",
             "python_dateutil", "typing_extensions", "six", "setuptools"}


def fetch_wheels(python_version: str) -> int:
    """Download the notebook packages and their requirements for a Linux x86-64 CPython into .whl/."""
    platforms = [f"--platform={p}" for p in ("manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_26_x86_64",
                                             "manylinux_2_17_x86_64", "manylinux2014_x86_64", "manylinux2010_x86_64",
                                             "manylinux1_x86_64")]
    shutil.rmtree(WHEELS, ignore_errors=True)
    code = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--only-binary=:all:", "--implementation", "cp",
                           "--python-version", python_version, *platforms, "-d", str(WHEELS), *NOTEBOOK_PACKAGES]).returncode
    if code:
        return code
    for wheel in WHEELS.glob("*.whl"):
        if wheel.name.split("-")[0].lower() in IMAGE_HAS:
            wheel.unlink()
    wheels = sorted(WHEELS.glob("*.whl"))
    size = sum(w.stat().st_size for w in wheels) / 2**20
    print(f"{len(wheels)} wheels, {size:.1f} MiB, in {WHEELS.relative_to(ROOT)}/: carry it with the call")
    return 0


def carried_packages() -> dict:
    """Install the carried wheels where the notebook packages are missing: the environment for the
    steps that need them ({} when nothing was needed or carried)."""
    import importlib.util

    if all(importlib.util.find_spec(name) for name in ("nbformat", "nbclient", "ipykernel")) or not WHEELS.is_dir():
        return {}
    target = Path(os.environ.get("TMPDIR", "/tmp")) / "course-gpu-site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile",
                    "--no-cache-dir", "--upgrade", "--target", str(target), *map(str, sorted(WHEELS.glob("*.whl")))],
                   check=False)
    path = os.pathsep.join(filter(None, [str(target), os.environ.get("PYTHONPATH", "")]))
    print(f"notebook packages installed from {WHEELS.name}/ into {target}", flush=True)
    return {"PYTHONPATH": path}


def device_facts(gpu: bool) -> dict:
    """Device, driver, versions: what a record needs to be read later."""
    from course import env

    facts = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
             "device": "cpu (no usable GPU)", "driver": "none", "torch": env._version("torch"),
             "CuPy": env._version("cupy") if env.cupy_usable() else "not usable"}
    if gpu:
        import torch

        facts["device"] = torch.cuda.get_device_name(0)
        facts["torch"] += f" (CUDA {torch.version.cuda})"
        smi = shutil.which("nvidia-smi")
        if smi:
            try:
                header = subprocess.run([smi], capture_output=True, text=True, timeout=30).stdout
                match = re.search(r"Driver Version:\s*(\S+).*?CUDA Version:\s*(\S+)", header)
                if match:
                    facts["driver"] = f"{match.group(1)} (CUDA {match.group(2)})"
            except (OSError, subprocess.TimeoutExpired):
                pass
    # A copy of the checkout on a lent machine may carry a stale .git: COURSE_COMMIT, set by the
    # command that sends it, says which commit it is.
    facts["commit"] = os.environ.get("COURSE_COMMIT", "")
    if not facts["commit"]:
        try:
            facts["commit"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                             text=True, timeout=10).stdout.strip() or "unknown"
        except (OSError, subprocess.TimeoutExpired):
            facts["commit"] = "unknown"
    return facts


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.-]+", "_", text).strip("_") or "device"


def record_text(facts: dict, command: str, rows: dict) -> str:
    """A record: facts, the command, and one row per item (``rows``: name → (mode, steps, status, seconds))."""
    lines = [f"# GPU run: {facts['device']}", ""]
    lines += [f"- {key}: {value}" for key, value in facts.items() if key != "device"]
    lines += [f"- command: `{command}`", "", "| item | mode | steps | status | seconds |", "|---|---|---|---|---|"]
    lines += [f"| {name} | {mode} | {steps} | {status} | {seconds} |"
              for name, (mode, steps, status, seconds) in rows.items()]
    return "\n".join(lines) + "\n"


def read_rows(path: Path) -> dict:
    rows = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) == 5 and line.startswith("|") and cells[0] not in ("item", "---"):
                rows[cells[0]] = tuple(cells[1:])
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT") or ROOT / "build" / "gpu-check"))
    parser.add_argument("--part", type=parse_part, default=(1, 1), help="K/N: run the K-th of N parts (default 1/1)")
    parser.add_argument("--list", action="store_true", help="show the parts and their estimated times, run nothing")
    parser.add_argument("--budget", type=float, default=PART_BUDGET_MINUTES, help="minutes for this part")
    parser.add_argument("--notebooks", nargs="*", type=Path, help="default: every notebook")
    parser.add_argument("--quick", action="store_true", help="bench --quick even on a GPU")
    parser.add_argument("--bench-only", nargs="*", help="bench sections to run (default: all)")
    parser.add_argument("--skip-tests", action="store_true", help="leave out the unit tests (CI runs them anyway)")
    parser.add_argument("--fetch-wheels", metavar="PYTHON_VERSION", nargs="?", const="3.12",
                        help="download the notebook packages for the GPU machine's Python (default 3.12) into .whl/, run nothing")
    args = parser.parse_args(argv)
    if args.fetch_wheels:
        return fetch_wheels(args.fetch_wheels)

    notebooks = args.notebooks or sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    work = items(notebooks, args.skip_tests)
    recorded = recorded_seconds()
    k, n = args.part
    parts = partition(work, n, recorded)
    if args.list:
        needed = parts_needed(work, args.budget * 60, recorded)
        print(f"{needed} parts of at most {args.budget:g} min each cover everything (by the estimates): "
              f"make gpu-check PART=1/{needed} ... PART={needed}/{needed}. The parts of {n}:")
        for index, group in enumerate(parts, 1):
            total = sum(estimate(i, recorded) for i in group)
            warning = "  (over the budget: split into more parts)" if total > args.budget * 60 else ""
            print(f"part {index}/{n}: about {total / 60:.1f} min{warning}")
            for item in group:
                print(f"    {item.name}  ~{estimate(item, recorded):.0f} s")
        return 0
    mine = parts[k - 1]

    from course import env

    gpu = env.torch_cuda_usable() and env.cupy_usable()
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    for stale in ("steps.log", "notebooks.log"):
        (out / stale).unlink(missing_ok=True)
    deadline = time.monotonic() + args.budget * 60
    left = lambda: deadline - time.monotonic()  # noqa: E731
    python = sys.executable
    (out / "environment.txt").write_text(str(env.describe(full=True)) + "\n", encoding="utf-8")
    banner = (f"GPU found: part {k}/{n}, kernels on CuPy, notebooks at gpu size (full steps), full benchmarks."
              if gpu else f"No usable GPU here: part {k}/{n} of the degraded check (CuPy cases skipped, notebooks "
                          "in fast mode, quick benchmarks). Run `make gpu-check` on a GPU machine for the real one.")
    print(banner, flush=True)
    steps, rows, executed = [], {}, []
    mode = "gpu" if gpu else "fast"
    carried = carried_packages() if any(item.kind == "notebook" for item in mine) else {}

    for item in mine:
        if left() < MIN_SECONDS:
            status = f"skipped: part budget ({args.budget:.0f} min) used up; run it in another part or with --budget"
            steps.append({"step": item.name, "status": status, "seconds": 0})
            rows[item.name] = ("-" if item.kind != "notebook" else mode, "full", "skipped", 0)
            continue
        if item.kind == "tests":
            step = run_step(item.name, [python, "-m", "pytest", *gpu_test_files(), "-q", "-p", "no:cacheprovider", "-rs"],
                            out / "steps.log", timeout=left(), env={"COURSE_FAST": "1"})
        elif item.kind == "bench":
            command = [python, "tools/bench.py", "--out", str(out / "bench-tmp")] + ([] if gpu and not args.quick else ["--quick"])
            if args.bench_only:
                command += ["--only", *args.bench_only]
            step = run_step("benchmarks", command, out / "steps.log", timeout=left())
            for produced in sorted((out / "bench-tmp").glob("*")) if (out / "bench-tmp").exists() else []:
                produced.replace(out / f"bench{produced.suffix}")
            if (out / "bench-tmp").exists():
                (out / "bench-tmp").rmdir()
        else:
            target = out / "executed" / mode
            code = ("import sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]); from tools import site; "
                    "site.execute(Path(sys.argv[2]), sys.argv[3], timeout=int(float(sys.argv[4])), target_dir=Path(sys.argv[5]))")
            step = run_step(f"notebook {item.name} ({mode} mode)",
                            [python, "-c", code, str(ROOT), str(item.path.resolve()), mode, str(min(left(), 600)), str(target)],
                            out / "notebooks.log", timeout=left(), env=carried)
            if step["status"] != "passed":
                step["status"] += f": {_failure(out / 'notebooks.log')}"
            if (target / item.path.name).exists():
                executed.append(target / item.path.name)
        steps.append(step)
        status = "passed" if step["status"] == "passed" else step["status"].split(":")[0]
        rows[item.name] = (mode if item.kind == "notebook" else "-", "full", status, step["seconds"])

    if executed:
        with tarfile.open(out / "notebooks.tar.gz", "w:gz") as tar:
            for path in executed:
                tar.add(path, arcname=f"{path.parent.name}/{path.name}")
    if (out / "executed").exists():
        shutil.rmtree(out / "executed")  # only the archive travels back

    facts = device_facts(gpu)
    command = f"make gpu-check PART={k}/{n}" + (" (degraded: no GPU)" if not gpu else "")
    (out / "record.md").write_text(record_text(facts, command, rows), encoding="utf-8")
    if gpu:  # merged with the other parts' rows of this device, for the repository
        GPU_RUNS.mkdir(parents=True, exist_ok=True)
        kept = GPU_RUNS / f"{slug(facts['device'])}.md"
        merged = {**read_rows(kept), **rows}
        kept.write_text(record_text(facts, f"make gpu-check (last: PART={k}/{n})", merged), encoding="utf-8")
        print(f"record: {kept.relative_to(ROOT)} (commit it)")

    ok = all(s["status"] == "passed" for s in steps)
    summary = {"gpu": gpu, "part": f"{k}/{n}", "banner": banner, "ok": ok, "steps": steps}
    (out / "summary.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    lines = ["# gpu-check", "", banner, "", "| step | status | seconds |", "|---|---|---|"]
    lines += [f"| {s['step']} | {s['status']} | {s['seconds']} |" for s in steps]
    (out / "summary.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    print(f"everything is in {out}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
