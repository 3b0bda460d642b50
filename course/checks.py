"""Exercise checks, one way for every notebook (introduced in notebook 00).

A check runs the learner's function (or CUDA C kernel) and a reference on several inputs,
edge sizes included, prints ✅ or ❌ with a specific hint — the first mismatching index,
expected vs got — and returns a bool. It never raises because of the learner's code: an
untouched stub (``raise NotImplementedError``) or a bug reports ❌ and the notebook goes on.
"""

from __future__ import annotations

import traceback
from typing import Any, Callable, Iterable, Sequence

import numpy as np

PASS, FAIL = "✅", "❌"


class Mismatch(Exception):
    """Raised inside a comparison to carry the hint to the learner."""


def _describe(value: Any) -> str:
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return f"{type(value).__name__} of shape {tuple(value.shape)} and dtype {value.dtype}"
    return f"{type(value).__name__} {value!r}"[:120]


def compare(got: Any, expected: Any, *, rtol: float = 1e-5, atol: float = 1e-6, path: str = "result") -> None:
    """Raise ``Mismatch`` with a learner-friendly hint unless ``got`` matches ``expected``."""
    if isinstance(expected, dict):
        if not isinstance(got, dict) or set(got) != set(expected):
            raise Mismatch(f"{path}: expected a dict with keys {sorted(expected)}, got {_describe(got)}")
        for key in expected:
            compare(got[key], expected[key], rtol=rtol, atol=atol, path=f"{path}[{key!r}]")
        return
    if isinstance(expected, (tuple, list)) and not np.isscalar(expected) and _is_structured(expected):
        if not isinstance(got, (tuple, list)) or len(got) != len(expected):
            raise Mismatch(f"{path}: expected {len(expected)} values, got {_describe(got)}")
        for i, (g, e) in enumerate(zip(got, expected)):
            compare(g, e, rtol=rtol, atol=atol, path=f"{path}[{i}]")
        return
    if got is None:
        raise Mismatch(f"{path}: got None — did the function forget to `return` its result?")
    from course.cuda import asnumpy  # NumPy from NumPy, CuPy, torch tensors and lists

    g, e = asnumpy(got), asnumpy(expected)
    if g.shape != e.shape:
        raise Mismatch(f"{path}: expected shape {e.shape}, got shape {g.shape}")
    if e.dtype.kind in "biu" and g.dtype.kind in "biu" or e.dtype.kind in "OUSb":
        bad = g != e
    else:
        if g.dtype.kind not in "biufc":
            raise Mismatch(f"{path}: expected numbers, got {_describe(got)}")
        bad = ~np.isclose(g.astype(np.float64), e.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True)
    bad = np.asarray(bad)
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0]) if bad.ndim else ()
        where = f" at index {index}" if index else ""
        n_bad = int(bad.sum())
        e_first = (e[index] if index else e).item()  # .item(): print 4.0, not np.float64(4.0)
        g_first = (g[index] if index else g).item()
        raise Mismatch(
            f"{path}: {n_bad} of {bad.size} values differ; first{where}: expected {e_first!r}, got {g_first!r}"
        )


def _is_structured(values: Sequence) -> bool:
    # A list of arrays/tuples is compared element by element; a flat list of numbers as one array.
    return any(hasattr(v, "shape") or isinstance(v, (tuple, list, dict)) for v in values)


def _report(name: str, ok: bool, detail: str) -> bool:
    print(f"{PASS if ok else FAIL} {name}: {detail}")
    return ok


def _learner_error(name: str, case_text: str, error: BaseException, hint: str | None) -> bool:
    if isinstance(error, NotImplementedError):
        return _report(name, False, "not implemented yet — fill in the exercise cell and run this check again."
                       + (f" Hint: {hint}" if hint else ""))
    last = traceback.extract_tb(error.__traceback__)[-1:] if error.__traceback__ else []
    where = f" (line {last[0].lineno})" if last else ""
    return _report(name, False, f"{case_text} raised {type(error).__name__}{where}: {error}"
                   + (f" Hint: {hint}" if hint else ""))


def _case_text(args: tuple) -> str:
    parts = [_describe(a) if hasattr(a, "shape") else repr(a)[:40] for a in args]
    return f"with input ({', '.join(parts)})"


def check_function(fn: Callable, reference: Callable, cases: Iterable[tuple], *, name: str | None = None,
                   rtol: float = 1e-5, atol: float = 1e-6, hint: str | None = None,
                   copy_inputs: bool = True) -> bool:
    """Compare ``fn(*case)`` with ``reference(*case)`` for every case; print ✅/❌, return a bool.

    ``cases`` are argument tuples; include edge sizes (empty, one element, not a multiple of
    the block size). Inputs are copied before each call so an in-place bug cannot hide.
    """
    name = name or getattr(fn, "__name__", "exercise")
    if not callable(fn):
        return _report(name, False, f"expected a function, got {_describe(fn)}")
    cases = [c if isinstance(c, tuple) else (c,) for c in cases]
    if not cases:
        raise ValueError("check_function needs at least one case")  # the notebook author's mistake
    for args in cases:
        expected = reference(*_copy(args))
        try:
            got = fn(*(_copy(args) if copy_inputs else args))
        except Exception as error:  # the learner's code: report, never raise
            return _learner_error(name, _case_text(args), error, hint)
        try:
            compare(got, expected, rtol=rtol, atol=atol)
        except Mismatch as mismatch:
            return _report(name, False, f"{_case_text(args)}: {mismatch}" + (f" Hint: {hint}" if hint else ""))
    return _report(name, True, f"matches the reference on all {len(cases)} inputs.")


def check_value(got: Any, expected: Any, *, name: str = "answer", rtol: float = 1e-5, atol: float = 1e-6,
                hint: str | None = None) -> bool:
    """Compare one value (a number, array, tensor or tuple of them) with the expected one."""
    if got is ... or got is NotImplemented:
        return _report(name, False, "not answered yet — replace the `...` and run this check again.")
    try:
        compare(got, expected, rtol=rtol, atol=atol, path=name)
    except Mismatch as mismatch:
        return _report(name, False, f"{mismatch}" + (f" Hint: {hint}" if hint else ""))
    except Exception as error:
        return _report(name, False, f"could not compare {_describe(got)}: {error}")
    return _report(name, True, "correct.")


def check_true(condition_fn: Callable[[], bool], *, name: str, fail: str, success: str = "correct.") -> bool:
    """Run a learner-dependent condition (e.g. "accuracy above 80 %"); ❌ with ``fail`` when false."""
    try:
        ok = bool(condition_fn())
    except Exception as error:
        return _learner_error(name, "the check", error, None)
    return _report(name, ok, success if ok else fail)


def check_kernel(source: str, kernel_name: str, run: Callable, reference: Callable, cases: Iterable[tuple], *,
                 name: str | None = None, rtol: float = 1e-5, atol: float = 1e-6, hint: str | None = None) -> bool:
    """Compile the learner's CUDA C ``source``, then compare ``run(kernel, *case)`` with ``reference(*case)``.

    ``run`` allocates the arrays, launches the kernel and returns its output. Compile errors,
    out-of-bounds accesses and wrong arguments are reported as ❌ with the kernel's own message.
    """
    from course import cuda

    name = name or kernel_name
    if not isinstance(source, str) or "__global__" not in source:
        return _report(name, False, "not written yet — put your kernel's CUDA C in the string and run again.")
    try:
        kernel = cuda.RawKernel(source, kernel_name)
    except Exception as error:
        return _report(name, False, f"does not compile: {error}" + (f" Hint: {hint}" if hint else ""))

    def launch(*args):
        return run(kernel, *args)

    return check_function(launch, reference, cases, name=name, rtol=rtol, atol=atol, hint=hint)


def _copy(args: tuple) -> tuple:
    out = []
    for a in args:
        if hasattr(a, "clone") and hasattr(a, "detach"):
            out.append(a.detach().clone())
        elif hasattr(a, "copy") and hasattr(a, "shape"):
            out.append(a.copy())
        else:
            out.append(a)
    return tuple(out)
