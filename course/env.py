"""Where the course runs and how big the work is: mode, sizes, device, seeds (notebook 00).

Three sizes, one notebook:

- ``fast`` — ``COURSE_FAST=1`` (CI): the smallest sizes that still prove the point;
- ``gpu``  — a usable CUDA device: the real sizes;
- ``cpu``  — no GPU: sizes a laptop finishes in a few minutes.

``COURSE_MODE=fast|cpu|gpu`` forces a mode (``make gpu-check`` uses it). Nothing here imports
torch or CuPy until a function needs it, so ``import course`` stays fast.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import platform
import random
import sys
from pathlib import Path

MODES = ("fast", "cpu", "gpu")

#: The package's source checkout, when it is installed from one (``pip install -e .``).
REPO_ROOT = Path(__file__).resolve().parent.parent


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in {"1", "true", "yes", "on"}


@functools.lru_cache(maxsize=None)
def torch_cuda_usable() -> bool:
    """True when PyTorch can run on a CUDA device (imports torch)."""
    try:
        import torch
    except ImportError:
        return False
    try:
        return bool(torch.cuda.is_available()) and torch.cuda.device_count() > 0
    except Exception:  # a broken driver counts as no GPU
        return False


@functools.lru_cache(maxsize=None)
def cupy_usable() -> bool:
    """True when CuPy is installed *and* can run a kernel; never raises.

    CuPy installed without a driver (Colab's CPU runtime, most laptops) imports fine and only
    fails at first use, so we try a tiny computation instead of trusting the import.
    """
    if importlib.util.find_spec("cupy") is None:
        return False
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() < 1:
            return False
        return int((cupy.arange(4, dtype=cupy.int32) * 2).sum()) == 12
    except Exception:
        return False


def mode() -> str:
    """The current size: ``COURSE_MODE`` when set, else ``"fast"`` (COURSE_FAST=1), else ``"gpu"``
    when the course computes on a GPU (``device()``), else ``"cpu"``.

    So ``COURSE_DEVICE=cpu`` on a GPU machine gives cpu sizes; ``COURSE_MODE=gpu COURSE_DEVICE=cpu``
    gives gpu sizes on the CPU (with ``COURSE_MAX_STEPS``, the size check of ``make test-gpu-sizes``).
    """
    forced = os.environ.get("COURSE_MODE", "").strip().lower()
    if forced:
        if forced not in MODES:
            raise ValueError(
                f"COURSE_MODE={forced!r} is not a mode; use one of {', '.join(MODES)} or unset it."
            )
        return forced
    if _truthy(os.environ.get("COURSE_FAST")):
        return "fast"
    return "gpu" if _wanted_device()[0] == "cuda" else "cpu"


def pick(*, fast, cpu, gpu):
    """Return the value for the current mode, e.g. ``EPOCHS = course.env.pick(fast=1, cpu=3, gpu=30)``."""
    return {"fast": fast, "cpu": cpu, "gpu": gpu}[mode()]


def is_fast() -> bool:
    """True in fast (CI) mode."""
    return mode() == "fast"


def max_steps() -> int | None:
    """The cap on training/evaluation steps from ``COURSE_MAX_STEPS`` (None when unset).

    ``make gpu-check`` and the size-check tests run notebooks with gpu-mode *sizes* on a CPU and a
    few steps each, so that a shape or memory-layout error of the real sizes shows up without a
    GPU; cells that assert a quality floor report instead when a cap is set.
    """
    raw = os.environ.get("COURSE_MAX_STEPS", "").strip()
    if not raw:
        return None
    try:
        steps = int(raw)
    except ValueError:
        steps = 0
    if steps < 1:
        raise ValueError(f"COURSE_MAX_STEPS={raw!r}: set a whole number of steps >= 1, or unset it")
    return steps


def limit(iterable):
    """Yield the items of ``iterable``, at most ``max_steps()`` of them when a cap is set.

    Training loops write ``for x, y in course.env.limit(loader):``; without a cap it is the
    loader itself.
    """
    cap = max_steps()
    if cap is None:
        yield from iterable
        return
    for step, item in enumerate(iterable):
        if step >= cap:
            return
        yield item


def _wanted_device() -> tuple[str, int | None]:
    """(type, index) of the course's device, from COURSE_DEVICE or what is usable; no torch import
    unless COURSE_DEVICE is unset (then ``torch_cuda_usable`` decides)."""
    from course import gpu

    wanted = os.environ.get("COURSE_DEVICE", "")
    if not wanted.strip():
        return ("cuda", None) if torch_cuda_usable() else ("cpu", None)
    try:
        kind, index = gpu._parse(wanted)
    except (TypeError, ValueError) as error:
        raise ValueError(f"COURSE_DEVICE: {error}; or unset COURSE_DEVICE") from None
    if kind == "cuda" and not torch_cuda_usable():
        raise RuntimeError(
            f"COURSE_DEVICE={wanted!r} but no CUDA device is usable here; unset COURSE_DEVICE "
            "or, on Colab, pick Runtime > Change runtime type > GPU."
        )
    return kind, index


def capped(count: int, per_step: int = 1) -> int:
    """``count``, or only what ``max_steps()`` steps of ``per_step`` items use when a cap is set.

    For builders of data sets and stand-ins: ``N = course.env.capped(course.env.pick(...), per_step=BATCH)``
    builds the full set normally and, in a size check (``COURSE_MAX_STEPS=2``), just the batches
    the capped loops will take, instead of a full-size set for two steps.
    """
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise ValueError(f"count must be a whole number >= 0, got {count!r}")
    if isinstance(per_step, bool) or not isinstance(per_step, int) or per_step < 1:
        raise ValueError(f"per_step must be a whole number >= 1, got {per_step!r}")
    cap = max_steps()
    return count if cap is None else min(count, cap * per_step)


def device():
    """The ``torch.device`` the course computes on: ``cuda`` when PyTorch can use a GPU, else ``cpu``.

    ``COURSE_DEVICE`` ("cpu", "cuda" or "cuda:N") chooses instead; ``COURSE_DEVICE=cpu`` forces the
    CPU on a GPU machine (and cpu sizes, see ``mode()``). Every course helper whose ``device`` is
    left out (None) uses this device.
    """
    import torch

    kind, index = _wanted_device()
    return torch.device(kind, index) if index is not None else torch.device(kind)


def in_colab() -> bool:
    """True inside Google Colab."""
    return "google.colab" in sys.modules or "COLAB_RELEASE_TAG" in os.environ


def seed_everything(seed: int = 0) -> int:
    """Seed Python, NumPy and PyTorch (CPU and all GPUs) so a run can be repeated."""
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    random.seed(seed)
    os.environ["PYTHONHASHSEED"] = str(seed)
    try:
        import numpy as np

        np.random.seed(seed % 2**32)
    except ImportError:
        pass
    if "torch" in sys.modules or importlib.util.find_spec("torch") is not None:
        import torch

        torch.manual_seed(seed)  # seeds every CUDA device too
    return seed


def data_dir() -> Path:
    """Shipped small files: ``data/`` of the checkout (``COURSE_DATA`` overrides)."""
    root = os.environ.get("COURSE_DATA")
    path = Path(root).expanduser() if root else REPO_ROOT / "data"
    if not path.exists() and not root:
        path = cache_dir().parent / "data"
    path.mkdir(parents=True, exist_ok=True)
    return path


def cache_dir() -> Path:
    """Where downloads go (git-ignored): ``data/downloads`` of the checkout, or ``COURSE_CACHE``."""
    root = os.environ.get("COURSE_CACHE")
    if root:
        path = Path(root).expanduser()
    elif (REPO_ROOT / "pyproject.toml").exists():
        path = REPO_ROOT / "data" / "downloads"
    else:  # installed from a wheel: no checkout to write into
        path = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "torch-cuda-course"
    path.mkdir(parents=True, exist_ok=True)
    return path


def output_dir(*parts: str) -> Path:
    """A git-ignored folder for what notebooks write (``build/outputs/...``)."""
    root = os.environ.get("COURSE_OUTPUT")
    base = Path(root).expanduser() if root else REPO_ROOT / "build" / "outputs"
    if not root and not (REPO_ROOT / "pyproject.toml").exists():
        base = Path.cwd() / "course-outputs"
    path = base.joinpath(*parts)
    path.mkdir(parents=True, exist_ok=True)
    return path


def _version(module: str) -> str:
    """A package's version: from its distribution's metadata, else from the imported module
    (CuPy's distribution is named cupy-cuda12x, cupy-cuda13x, ..., not cupy)."""
    try:
        from importlib.metadata import version

        return version(module)
    except Exception:
        pass
    if importlib.util.find_spec(module) is None:
        return "not installed"
    try:
        return str(getattr(importlib.import_module(module), "__version__", "installed (version unknown)"))
    except Exception as error:
        return f"installed, but import fails ({type(error).__name__})"


def info() -> dict:
    """Facts about this machine and installation, as a dict (imports torch)."""
    facts = {
        "mode": mode(),
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
        "cpu cores": os.cpu_count(),
        "torch": _version("torch"),
        "torchvision": _version("torchvision"),
        "colab": in_colab(),
    }
    try:
        import torch

        facts["torch CUDA build"] = torch.version.cuda or "none (CPU build)"
        facts["cuDNN"] = torch.backends.cudnn.version() if torch_cuda_usable() else "n/a"
    except ImportError:
        facts["torch CUDA build"] = "torch not installed"
    where = device()
    if where.type == "cuda":
        import torch

        props = torch.cuda.get_device_properties(where)
        facts["device"] = f"{where} {props.name}"
        facts["GPU memory"] = f"{props.total_memory / 2**30:.1f} GiB"
        facts["compute capability"] = f"{props.major}.{props.minor}"
        facts["GPUs"] = torch.cuda.device_count()
    else:
        facts["device"] = f"cpu ({platform.processor() or platform.machine()})" + (
            ", told by COURSE_DEVICE=cpu" if torch_cuda_usable() else "")
        facts["GPU memory"] = "n/a"
    if importlib.util.find_spec("cupy") is None:
        facts["CuPy"] = "not installed: CUDA C kernels run on the CPU backend"
    elif cupy_usable():
        facts["CuPy"] = f"{_version('cupy') if _version('cupy') != 'not installed' else 'installed'}, runs kernels"
    else:
        facts["CuPy"] = "installed, but no usable GPU/driver: kernels run on the CPU backend"
    try:
        from course.cuda import backend

        facts["kernel backend"] = backend()
    except (RuntimeError, ValueError) as error:  # a COURSE_CUDA_BACKEND that cannot be honoured
        facts["kernel backend"] = f"none: {error}"
    return facts


class EnvironmentTable:
    """The full description, shown as a table in notebooks and as text elsewhere."""

    def __init__(self, facts: dict):
        self.facts = facts

    def __str__(self) -> str:
        width = max(len(k) for k in self.facts)
        return "\n".join(f"{k:<{width}}  {v}" for k, v in self.facts.items())

    __repr__ = __str__

    def _repr_html_(self) -> str:
        from html import escape

        rows = "".join(
            f"<tr><th style='text-align:left'>{escape(str(k))}</th>"
            f"<td style='text-align:left'>{escape(str(v))}</td></tr>"
            for k, v in self.facts.items()
        )
        return f"<table>{rows}</table>"


def describe(full: bool = False):
    """One line saying where the course runs; ``full=True`` gives the whole table (notebook 00)."""
    facts = info()
    if full:
        return EnvironmentTable(facts)
    cuda = facts.get("torch CUDA build")
    return (
        f"course {__import__('course').__version__} | mode {facts['mode']} | device {facts['device']}"
        f" | GPU memory {facts['GPU memory']} | torch {facts['torch']} (CUDA {cuda})"
        f" | kernels on {facts['kernel backend']} | Python {facts['python']}"
        + (" | Colab" if facts["colab"] else "")
    )
