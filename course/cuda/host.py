"""``course.cuda.xp`` on the CPU backend: NumPy, with the one difference that a GPU's memory has too.

``cupy.empty`` (``cudaMalloc``) gives memory that holds whatever it held before: often the last
array's values, sometimes zeros. ``numpy.empty`` of a large array gives fresh pages, which the
operating system zeroes, so a kernel that adds into an output it never cleared (``c[i] += ...``
with ``c = xp.empty(n)``) would be right on the CPU and wrong on a GPU. Here ``empty`` and
``empty_like`` fill the new array with the bytes 0xFE (-1.6947e38 as a float32, -16843010 as an
int32) — what a sanitized launch puts in a variable before it has a value — so that the bug shows
on the CPU as well, and a sanitized launch (``backend="cpu"``, every exercise check) reports the
first read of such an element that no kernel or host code wrote: compute-sanitizer's initcheck.

Everything else is NumPy's own (``xp.float32``, ``xp.asarray``, ``xp.ndarray``, ...).
"""

from __future__ import annotations

import ctypes
import weakref

import numpy as _np

#: The byte that fills a new array (runtime.h's fill of a variable without a value).
FILL = 0xFE

# id(array) -> (first byte, end) of each live array that empty() or empty_like() made and filled
_filled: dict[int, tuple[int, int]] = {}


def _fill(array: _np.ndarray) -> _np.ndarray:
    # numbers and records of numbers only: an object array's bytes are pointers, a string's characters,
    # a bool's must be 0 or 1
    if array.nbytes and array.dtype.kind in "iufcV" and not array.dtype.hasobject:
        start = array.__array_interface__["data"][0]
        ctypes.memset(start, FILL, array.nbytes)  # (one block of memory, whatever its order)
        key = id(array)
        _filled[key] = (start, start + array.nbytes)
        weakref.finalize(array, _filled.pop, key, None)
    return array


def empty(shape, dtype=float, order="C", **keywords):
    """``numpy.empty``, its bytes 0xFE: garbage, as ``cupy.empty`` gives on a GPU (see the module's text)."""
    made = _np.empty(shape, dtype, order, **keywords)
    return _fill(made) if type(made) is _np.ndarray else made  # (not an array of another library: like=...)


def empty_like(prototype, dtype=None, order="K", subok=True, shape=None, **keywords):
    """``numpy.empty_like``, its bytes 0xFE (see ``empty``)."""
    made = _np.empty_like(prototype, dtype, order, subok, shape, **keywords)
    return _fill(made) if type(made) is _np.ndarray else made


def unwritten_from_empty(start: int, nbytes: int) -> bool:
    """Whether the memory [start, start + nbytes) lies in an array that ``empty``/``empty_like`` made
    (what a sanitized launch checks its reads of for the fill)."""
    end = start + nbytes
    return any(low <= start and end <= high for low, high in list(_filled.values()))


def __getattr__(name):
    return getattr(_np, name)


def __dir__():
    return sorted(set(dir(_np)) | {"empty", "empty_like"})
