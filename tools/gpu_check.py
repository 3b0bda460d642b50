"""One prepared check for a lent GPU (`make gpu-check`): kernels, notebooks and benchmarks.

    python tools/gpu_check.py [--out DIR] [--budget MINUTES] [--notebooks NB ...] [--quick]

On a GPU it runs, within the time budget:
1. the unit tests that have GPU cases, so the course.cuda parity and fault suites and the GPU
   helpers run on CuPy;
2. every notebook: in gpu mode those listed in GPU_MODE (the ones that fit the budget), the
   others in cpu mode;
3. `tools/bench.py` at full size.
Without a GPU it says so and runs the same steps degraded (CuPy cases skipped, notebooks in
fast mode, `bench --quick`), which is how CI keeps this script working.

Everything lands in one folder (default ``$OUT`` when set, else build/gpu-check), as at most
eight files: summary.md, summary.json, steps.log (tests and benchmarks), notebooks.log, notebooks.tar.gz, bench.md,
bench.json and environment.txt.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# Notebooks whose gpu size fits a 15-minute lease; the rest run in cpu mode on the GPU machine.
GPU_MODE = {"00_setup_and_tour", "01_cuda_basics", "04_tensors_and_autograd", "06_image_sharpening",
            "10_gpu_performance"}


# The unit tests that have GPU cases (CuPy parity and faults, CUDA helpers, GPU paths of modules).
GPU_TESTS = ["tests/test_cuda_api.py", "tests/test_cuda_faults.py", "tests/test_cuda_kernels.py",
             "tests/test_digits_and_gpu_helpers.py", "tests/test_env.py", "tests/test_kernels_torch.py",
             "tests/test_devices.py", "tests/test_sharpen.py", "tests/test_timing.py"]


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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT") or ROOT / "build" / "gpu-check"))
    parser.add_argument("--budget", type=float, default=11.0, help="minutes for all steps together")
    parser.add_argument("--notebooks", nargs="*", type=Path, help="default: every notebook")
    parser.add_argument("--quick", action="store_true", help="bench --quick even on a GPU")
    parser.add_argument("--bench-only", nargs="*", help="bench sections to run (default: all)")
    parser.add_argument("--skip-tests", action="store_true", help="leave out the unit tests (CI runs them anyway)")
    args = parser.parse_args(argv)

    from course import env

    gpu = env.torch_cuda_usable() and env.cupy_usable()
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    for stale in ("steps.log", "notebooks.log"):
        (out / stale).unlink(missing_ok=True)
    deadline = time.monotonic() + args.budget * 60
    left = lambda: max(10.0, deadline - time.monotonic())
    python = sys.executable
    facts = str(env.describe(full=True))
    (out / "environment.txt").write_text(facts + "\n", encoding="utf-8")
    banner = ("GPU found: running kernels on CuPy, notebooks at gpu size where they fit, full benchmarks."
              if gpu else "No usable GPU here: running the degraded check (CuPy cases skipped, notebooks in "
                          "fast mode, quick benchmarks). Run `make gpu-check` on a GPU machine for the real one.")
    print(banner, flush=True)
    steps = []

    if not args.skip_tests:
        steps.append(run_step("unit tests with GPU cases (course.cuda on every usable backend)",
                              [python, "-m", "pytest", *GPU_TESTS, "-q", "-p", "no:cacheprovider", "-rs"],
                              out / "steps.log", timeout=min(left(), 300), env={"COURSE_FAST": "1"}))

    notebooks = args.notebooks or sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    executed = []
    try:
        from tools import site
    except ImportError as error:  # nbclient missing on a bare GPU image: say how to carry it
        steps.append({"step": "notebooks", "status": f"skipped: {error} (carry nbclient, nbformat, ipykernel "
                      "as wheels; see the device tool's README)", "seconds": 0})
        notebooks = []
    for path in notebooks:
        mode = ("gpu" if path.stem in GPU_MODE else "cpu") if gpu else "fast"
        started = time.perf_counter()
        with open(out / "notebooks.log", "a", encoding="utf-8") as log:
            try:
                executed.append(site.execute(path.resolve(), mode, timeout=int(min(left(), 300)),
                                             target_dir=out / "executed" / mode))
                status = "passed"
            except Exception as error:
                status = f"failed: {type(error).__name__}: {str(error)[-1500:]}"
            seconds = time.perf_counter() - started
            log.write(f"{path.name} [{mode}] {status} in {seconds:.1f} s\n")
        steps.append({"step": f"notebook {path.name} ({mode} mode)", "status": status.split("\n")[0][:300],
                      "seconds": round(seconds, 1)})
        print(f"notebook {path.name} ({mode}): {status.splitlines()[0][:200]} in {seconds:.0f} s", flush=True)
    if executed:
        with tarfile.open(out / "notebooks.tar.gz", "w:gz") as tar:
            for path in executed:
                tar.add(path, arcname=f"{path.parent.name}/{path.name}")
        for path in executed:  # only the archive travels back
            path.unlink()

    bench_args = [python, "tools/bench.py", "--out", str(out / "bench-tmp")] + ([] if gpu and not args.quick else ["--quick"])
    if args.bench_only:
        bench_args += ["--only", *args.bench_only]
    steps.append(run_step("benchmarks", bench_args, out / "steps.log", timeout=left()))
    for produced in sorted((out / "bench-tmp").glob("*")) if (out / "bench-tmp").exists() else []:
        produced.replace(out / f"bench{produced.suffix}")
    if (out / "bench-tmp").exists():
        (out / "bench-tmp").rmdir()
    for folder in ("executed",):
        target = out / folder
        if target.exists():
            for sub in sorted(target.glob("**/*"), reverse=True):
                sub.rmdir() if sub.is_dir() else sub.unlink()
            target.rmdir()

    ok = all(s["status"] == "passed" or s["status"].startswith("skipped") for s in steps)
    summary = {"gpu": gpu, "banner": banner, "ok": ok, "steps": steps}
    (out / "summary.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    lines = ["# gpu-check", "", banner, "", "| step | status | seconds |", "|---|---|---|"]
    lines += [f"| {s['step']} | {s['status']} | {s['seconds']} |" for s in steps]
    (out / "summary.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    print(f"everything is in {out}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
