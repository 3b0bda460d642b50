"""The GPU packages that fit this machine's NVIDIA driver: CuPy and ONNX Runtime's GPU build.

    python tools/gpu_extras.py             # say what fits here, install nothing
    python tools/gpu_extras.py --install   # install it into the running Python (make lab and make test do this)

``make lab`` and ``make test`` call it after installing the course. Without an NVIDIA driver
(no ``nvidia-smi``, or one that cannot reach a driver) it installs nothing and says so. With
one, it reads the highest CUDA version the driver supports from ``nvidia-smi``'s header
("CUDA Version: 13.0") and chooses:

- CuPy, which runs the course's CUDA C kernels on the GPU: ``cupy-cuda13x[ctk]`` for a CUDA 13
  driver or newer, ``cupy-cuda12x[ctk]`` for a CUDA 12 driver (the ``ctk`` extra brings the CUDA
  libraries CuPy needs from PyPI, so no CUDA toolkit has to be installed); none below CUDA 12.
- ``onnxruntime-gpu[cuda,cudnn]`` instead of ``onnxruntime`` (notebook 09's CUDA provider) on
  Linux x86_64 with a CUDA 13 driver: the PyPI build of onnxruntime-gpu links CUDA 13's libraries.
  The CPU ``onnxruntime`` is uninstalled first (both provide the ``onnxruntime`` module).

It also warns when PyTorch was built for a newer CUDA than the driver supports (PyTorch then
cannot use the GPU at all). The choice is a pure function (``choose``), tested with recorded
``nvidia-smi`` outputs.
"""

from __future__ import annotations

import argparse
import platform
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field

#: The oldest versions that work with the course (CuPy 14 has the ``ctk`` extra).
CUPY_FLOOR = "14"
ORT_GPU_FLOOR = "1.23"


@dataclass
class Plan:
    """What to install for one driver, and why (one line per decision)."""

    driver_cuda: tuple | None
    install: list = field(default_factory=list)
    uninstall: list = field(default_factory=list)
    notes: list = field(default_factory=list)


def driver_cuda_version(smi_output: str | None) -> tuple | None:
    """(major, minor) of the highest CUDA version the driver supports, from ``nvidia-smi``'s header;
    None when the text has none (no driver, or nvidia-smi failed)."""
    match = re.search(r"CUDA Version\s*:\s*(\d+)\.(\d+)", smi_output or "")
    return (int(match.group(1)), int(match.group(2))) if match else None


def read_nvidia_smi() -> str | None:
    """``nvidia-smi``'s output, or None without the tool or when it cannot reach a driver."""
    tool = shutil.which("nvidia-smi")
    if tool is None:
        return None
    try:
        result = subprocess.run([tool], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return result.stdout if result.returncode == 0 else None


def torch_cuda_build() -> tuple | None:
    """(major, minor) of the CUDA version the installed PyTorch was built for; None for a CPU build."""
    try:
        import torch
    except ImportError:
        return None
    version = torch.version.cuda
    match = re.match(r"(\d+)\.(\d+)", version or "")
    return (int(match.group(1)), int(match.group(2))) if match else None


def choose(driver_cuda: tuple | None, *, system: str = "Linux", machine: str = "x86_64",
           torch_cuda: tuple | None = None) -> Plan:
    """The packages that fit a driver supporting CUDA ``driver_cuda`` (None: no driver) on this platform."""
    plan = Plan(driver_cuda)
    if driver_cuda is None:
        plan.notes.append("no NVIDIA driver found (nvidia-smi missing or failing): nothing to add; CUDA C "
                          "kernels run on the course's CPU backend")
        return plan
    major, minor = driver_cuda
    if torch_cuda is not None and torch_cuda[0] > major:
        instead = (" or install a PyTorch built for CUDA 12: pip install torch torchvision --index-url "
                   "https://download.pytorch.org/whl/cu126" if major == 12 else "")
        plan.notes.append(
            f"warning: PyTorch was built for CUDA {torch_cuda[0]}.{torch_cuda[1]}, but the driver supports CUDA "
            f"{major}.{minor} at most, so PyTorch cannot use this GPU. Update the NVIDIA driver{instead}")
    if major >= 13:
        plan.install.append(f"cupy-cuda13x[ctk]>={CUPY_FLOOR}")
        plan.notes.append(f"driver supports CUDA {major}.{minor}: CuPy for CUDA 13 (cupy-cuda13x)")
    elif major == 12:
        plan.install.append(f"cupy-cuda12x[ctk]>={CUPY_FLOOR}")
        plan.notes.append(f"driver supports CUDA {major}.{minor}: CuPy for CUDA 12 (cupy-cuda12x)")
    else:
        plan.notes.append(f"driver supports only CUDA {major}.{minor}: CuPy 14 needs CUDA 12 or newer; update the "
                          "NVIDIA driver to run kernels on the GPU (they run on the CPU backend meanwhile)")
        return plan
    if system == "Linux" and machine in ("x86_64", "AMD64") and major >= 13:
        plan.uninstall.append("onnxruntime")
        plan.install.append(f"onnxruntime-gpu[cuda,cudnn]>={ORT_GPU_FLOOR}")
        plan.notes.append("onnxruntime-gpu replaces onnxruntime: ONNX Runtime's CUDA provider for notebook 09")
    else:
        why = ("it is built for CUDA 13 and this driver supports CUDA 12" if major < 13
               else f"PyPI has no onnxruntime-gpu for {system} {machine}")
        plan.notes.append(f"onnxruntime stays the CPU build ({why}); notebook 09 runs ONNX Runtime on the CPU")
    return plan


def install(plan: Plan, python: str = sys.executable) -> int:
    """Carry out ``plan`` with pip; returns pip's exit status (0 when there is nothing to do)."""
    pip = [python, "-m", "pip"]
    if plan.uninstall:
        subprocess.run(pip + ["uninstall", "-y", "-q", *plan.uninstall], check=False)
    if not plan.install:
        return 0
    return subprocess.run(pip + ["install", "-q", "--disable-pip-version-check", *plan.install]).returncode


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--install", action="store_true", help="install what fits (default: only say it)")
    parser.add_argument("--smi-output", help="read this file instead of running nvidia-smi (for tests)")
    args = parser.parse_args(argv)
    text = open(args.smi_output, encoding="utf-8").read() if args.smi_output else read_nvidia_smi()
    plan = choose(driver_cuda_version(text), system=platform.system(), machine=platform.machine(),
                  torch_cuda=torch_cuda_build())
    for note in plan.notes:
        print(f"gpu extras: {note}")
    if plan.install:
        print(f"gpu extras: {'installing' if args.install else 'would install'}: {' '.join(plan.install)}")
    if args.install:
        code = install(plan)
        if code:
            print("gpu extras: pip failed; the course still works, with CUDA C kernels on the CPU backend. "
                  "Run `python tools/gpu_extras.py --install` again to retry.", file=sys.stderr)
        return code
    return 0


if __name__ == "__main__":
    sys.exit(main())
