"""The gpu-size check on a CPU: every notebook with gpu-mode sizes and every loop capped at 2 steps.

Shape and memory-layout errors of the gpu sizes (a batch that no longer divides, an image size a
network cannot halve four times, a view of a non-contiguous tensor) show up without a GPU; times
and accuracies mean nothing here (issue 17's guard rail).

    python tools/gpu_sizes.py                  # every notebook (make test-gpu-sizes), about 6 minutes
    python tools/gpu_sizes.py --part 2/7       # one of the parts of about equal time
    python tools/gpu_sizes.py --rotate         # the part whose turn it is at this commit (make test)
    python tools/gpu_sizes.py --list           # the parts and their estimated times

The whole check takes longer than CI's test budget allows, so `make test` runs one part, chosen by the
commit (the number of commits, modulo the number of parts): consecutive commits cover every
notebook, and `make test-gpu-sizes` runs them all. COURSE_GPU_SIZES_PART=K/N picks a part by hand.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

from gpu_check import Item, parse_part, partition  # noqa: E402  (one partitioner for both checks)

ENV = {"COURSE_MODE": "gpu", "COURSE_DEVICE": "cpu", "COURSE_CUDA_BACKEND": "cpu", "COURSE_MAX_STEPS": "2"}

#: Seconds per notebook under this check on the 2-core CI machine, idle (make test-gpu-sizes, 2026-12-01;
#: 342 s in all). A notebook missing here counts as SLOW until it is measured and added.
SECONDS = {
    "00_setup_and_tour.ipynb": 5, "01_cuda_basics.ipynb": 12, "02_cuda_kernel_puzzles.ipynb": 24,
    "03_inside_the_gpu.ipynb": 5, "04_tensors_and_autograd.ipynb": 9, "05_cifar10_cnn.ipynb": 17,
    "06_image_sharpening.ipynb": 20, "07_dcgan.ipynb": 18, "08_unet_road_segmentation.ipynb": 95,
    "09_onnx_export.ipynb": 48, "10_gpu_performance.ipynb": 39, "11_distributed.ipynb": 59,
}
SLOW = 300
#: What one part may cost: make test's fast-mode run (one process per core) took 340 to 440 s in fresh clones
#: on 2026-12-01 and 500 to 560 s on 2026-12-06 (more tests, a cold kernel cache), which leaves 40 to 100 s of
#: CI's 10 minutes; parts of 45 estimated seconds (about 30 s as measured in make test; 60 until 2026-12-07, when
#: the red team's tests made the fast-mode run longer again) keep most commits under it.
BUDGET = 45


def parts(paths: list[Path], budget: float = BUDGET) -> list[list[Path]]:
    """The fewest parts of about equal estimated time whose estimates fit ``budget`` (a notebook
    longer than that gets a part of its own)."""
    work = [Item("notebook", p.name, p) for p in paths]
    estimates = {p.name: SECONDS.get(p.name, SLOW) for p in paths}
    for n in range(1, len(work) + 1):
        groups = partition(work, n, estimates)
        if all(sum(estimates[i.name] for i in g) <= budget or len(g) == 1 for g in groups):
            return [[i.path for i in g] for g in groups]
    return [[p] for p in paths]


def commit_turn(n: int) -> int:
    """This commit's part, 1..n: the number of commits modulo n (day of the year without git)."""
    try:
        count = int(subprocess.run(["git", "rev-list", "--count", "HEAD"], cwd=ROOT, capture_output=True,
                                   text=True, timeout=30, check=True).stdout.strip())
    except (OSError, ValueError, subprocess.SubprocessError):
        import datetime

        count = datetime.date.today().timetuple().tm_yday
    return count % n + 1


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    choose = parser.add_mutually_exclusive_group()
    choose.add_argument("--part", type=parse_part, help="K/N: run part K of N")
    choose.add_argument("--rotate", action="store_true", help="run the part whose turn it is at this commit")
    parser.add_argument("--list", action="store_true", help="show the parts and their estimated times")
    parser.add_argument("--notebooks", nargs="*", type=Path, help="notebooks or folders (default: notebooks/)")
    parser.add_argument("pytest_args", nargs="*", help="passed on to pytest (after --)")
    args = parser.parse_args(argv)

    paths = []
    for given in args.notebooks or [ROOT / "notebooks"]:
        given = given.resolve()
        if not given.exists():
            parser.error(f"no such notebook or folder: {given}")
        paths += sorted(given.glob("[0-9][0-9]_*.ipynb")) if given.is_dir() else [given]
    groups = parts(paths)
    if args.list:
        for k, g in enumerate(groups, 1):
            total = sum(SECONDS.get(p.name, SLOW) for p in g)
            print(f"part {k}/{len(groups)}: about {total} s: {', '.join(p.name for p in g)}")
        return 0
    chosen, label = paths, "every notebook"
    wanted = os.environ.get("COURSE_GPU_SIZES_PART")
    if args.part or wanted or args.rotate:
        if args.part or wanted:
            try:
                k, n = args.part or parse_part(wanted)
            except argparse.ArgumentTypeError as error:
                parser.error(f"COURSE_GPU_SIZES_PART: {error}")
            if n != len(groups):
                parser.error(f"there are {len(groups)} parts now (tools/gpu_sizes.py --list), not {n}")
            why = "as asked"
        else:
            n = len(groups)
            k, why = commit_turn(n), "this commit's turn; make test-gpu-sizes runs them all"
        chosen, label = groups[k - 1], f"part {k}/{n} ({why})"
    print(f"gpu-size check on the CPU, {label}: {', '.join(p.name for p in chosen)}", flush=True)
    command = [sys.executable, "-m", "pytest", *map(str, chosen), "--nbval-lax", "--nbval-cell-timeout=600",
               "-p", "no:cacheprovider", *args.pytest_args]
    return subprocess.run(command, cwd=ROOT, env={**os.environ, **ENV}).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
