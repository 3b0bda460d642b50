"""Helpers for the Torch × CUDA course.

The notebooks build each idea in the open first; this package then offers it as a helper
for later notebooks. ``import course`` is light: torch, torchvision and CuPy load only
when a helper that needs them is used.

Submodules (each loads on first use):

- ``course.env``      — where the course runs and how big the work is (notebook 00)
- ``course.gpu``      — the device model: one device parser ("cpu", "cuda", "cuda:N"), device facts,
  synchronisation for PyTorch and CuPy, memory (notebooks 00, 01, 10)
- ``course.timing``   — timing right on CPU and GPU (``benchmark``, CUDA events), profiler timelines (notebook 00)
- ``course.checks``   — the exercise checks every notebook uses (notebook 00)
- ``course.download`` — atomic, checksummed downloads (notebook 05)
- ``course.cuda``     — CUDA C kernels on CuPy or on the CPU (notebook 01)
- ``course.datasets`` — real data sets and their offline stand-ins (notebooks 05, 07, 08)
- ``course.models``   — the course's networks (notebooks 05, 07, 08)
- ``course.plots``    — thread and block maps (notebook 01)
- ``course.sharpen``  — five sharpening implementations, one answer (notebook 06)
- ``course.segmentation`` — losses and metrics for segmentation: IoU, mIoU, Dice (notebook 08)
- ``course.deploy``   — ONNX export, graph summaries, ONNX Runtime sessions and parity (notebook 09)
- ``course.streams`` — streams, events, pinned memory, CUDA Graphs (notebook 10)
- ``course.roofline`` — the one definition of peak bandwidth and FLOP/s (measured or theoretical), the roofline (notebooks 06, 10)
- ``course.kernels_torch`` — CUDA C kernels inside PyTorch's autograd (notebook 10)
- ``course.distributed`` — launching torchrun from a notebook (notebook 11)
"""

from course._lazy import lazy_package

__version__ = "0.1.0"

# PEP 562: a submodule is imported the first time ``course.<name>`` is used.
__getattr__, _dir = lazy_package(__name__, __path__, names=False)


def __dir__():
    return sorted(set(globals()) | set(_dir()))
