"""Exercise checks, one way for every notebook (introduced in notebook 00).

A check runs the learner's function (or CUDA C kernel) and a reference on several inputs,
edge sizes included, prints ✅ or ❌ with a specific diagnosis — the first mismatching index,
expected vs got, or the rule broken — and returns a bool. It never raises because of the
learner's code: an untouched stub (``raise NotImplementedError`` or ``...``) reports
"not attempted yet", a bug reports ❌, and the notebook goes on.

Hints are progressive and never printed by a check: each exercise registers its hints (a
nudge, then the method — never the answer), and ``hint()`` hands out the next one for the
exercise checked last (``hint("name")`` for another). The answer is only in the notebook's
folded solution cell. Each notebook's named checks live in ``course.exercises``.
"""

from __future__ import annotations

import contextlib
import os
import re
import traceback
import warnings
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np

PASS, FAIL = "✅", "❌"
NOT_ATTEMPTED = "not attempted yet — fill in the exercise cell above and run this check again."

_hints: dict[str, list[str]] = {}   # exercise name -> its hints, nudge first
_hints_given: dict[str, int] = {}   # exercise name -> how many hint() has shown
_last_checked: list[str] = []       # the exercise whose check ran last (hint() with no name)


def register_hints(name: str, hints: Sequence[str] | str | None) -> None:
    """Give exercise ``name`` its hints, a nudge first and then the method (never the answer)."""
    if hints is None:
        return
    hints = [hints] if isinstance(hints, str) else [h for h in hints if h]
    if hints:
        _hints[name] = list(hints)


def hint(name: str | None = None) -> str:
    """Print (and return) the next hint of exercise ``name``, or of the one checked last."""
    if name is None:
        if not _last_checked:
            text = "Run an exercise's check first; then hint() gives a nudge for that exercise."
            print(text)
            return text
        name = _last_checked[-1]
    if name not in _hints:
        # (an exercise's hints are registered when its check runs: before that, the name is unknown here)
        known = f" (exercises with hints so far: {', '.join(sorted(_hints))})" if _hints else ""
        text = (f"No hints for {name!r} yet: run the exercise's check cell first; then hint({name!r}) gives a nudge "
                f"for it{known}.")
        print(text)
        return text
    hints, given = _hints[name], _hints_given.get(name, 0)
    if given >= len(hints):
        text = (f"No more hints for {name}: you have seen all {len(hints)}. The folded Solution cell "
                "below the check has the answer — try once more before you open it.")
    else:
        _hints_given[name] = given + 1
        label = "a nudge" if given == 0 else "the method" if given == len(hints) - 1 else f"hint {given + 1}"
        text = f"💡 {name}, hint {given + 1} of {len(hints)} ({label}): {hints[given]}"
    print(text)
    return text


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


def _report(name: str, ok: bool, detail: str, *, attempted: bool = True) -> bool:
    """Print ✅/❌ with the diagnosis; a wrong attempt points at ``hint()``, never prints a hint."""
    _last_checked[:] = [name]
    more = ""
    if not ok and attempted and name in _hints:
        more = " Stuck? Run hint() for a nudge." if not _hints_given.get(name) else " Run hint() for the next hint."
    print(f"{PASS if ok else FAIL} {name}: {detail}{more}")
    return ok


def not_attempted(name: str) -> bool:
    """Report an untouched stub: ❌ "not attempted yet", with no hint."""
    return _report(name, False, NOT_ATTEMPTED, attempted=False)


class NotAttempted(Exception):
    """Raised inside a check when the learner's function returned ``...``: an untouched stub."""


def called(fn: Callable, *args, **kwargs):
    """``fn(*args, **kwargs)``, raising ``NotAttempted`` when it returns ``...`` (an untouched stub)."""
    result = fn(*args, **kwargs)
    if result is ... or result is NotImplemented:
        raise NotAttempted
    return result


def verdict(name: str, hints: Sequence[str] | str | None, judge: Callable[[], str | None],
            success: str = "correct.") -> bool:
    """Report ``judge()``: None means right, a string is the diagnosis; never raises on learner code.

    The named checks of ``course.exercises`` are built on it: ``judge`` runs the learner's code
    (through ``called``) and returns what is wrong, in the learner's words.
    """
    register_hints(name, hints)
    try:
        problem = judge()
    except (NotImplementedError, NotAttempted):
        return not_attempted(name)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as error:  # the learner's code raised (some library errors are BaseExceptions)
        frames = traceback.extract_tb(error.__traceback__)
        where = f" (line {frames[-1].lineno})" if frames else ""
        lines = [line.strip() for line in str(error).splitlines() if line.strip()]
        # a wrapped error (a distributed checkpoint's per-rank report) says what went wrong last
        problem = f"your code raised {type(error).__name__}{where}: {lines[-1] if lines else ''}"
    return check_true(lambda: problem is None, name=name, fail=str(problem), success=success)


def _learner_error(name: str, case_text: str, error: BaseException) -> bool:
    if isinstance(error, NotImplementedError):
        return not_attempted(name)
    last = traceback.extract_tb(error.__traceback__)[-1:] if error.__traceback__ else []
    # (the line of the learner's own Python; not one inside the course's package, where course.cuda raises)
    ours = last and Path(last[0].filename).resolve().is_relative_to(Path(__file__).resolve().parent)
    where = f" (line {last[0].lineno})" if last and not ours else ""
    return _report(name, False, f"{case_text} raised {type(error).__name__}{where}: {error}")


def _case_text(args: tuple) -> str:
    parts = [_describe(a) if hasattr(a, "shape") else repr(a)[:40] for a in args]
    return f"with input ({', '.join(parts)})"


def check_function(fn: Callable, reference: Callable, cases: Iterable[tuple], *, name: str | None = None,
                   rtol: float = 1e-5, atol: float = 1e-6, hints: Sequence[str] | str | None = None,
                   copy_inputs: bool = True) -> bool:
    """Compare ``fn(*case)`` with ``reference(*case)`` for every case; print ✅/❌, return a bool.

    ``cases`` are argument tuples; include edge sizes (empty, one element, not a multiple of
    the block size). Inputs are copied before each call so an in-place bug cannot hide.
    ``hints`` (a nudge, then the method) are registered for ``hint()``, never printed here.
    """
    name = name or getattr(fn, "__name__", "exercise")
    register_hints(name, hints)
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
            return _learner_error(name, _case_text(args), error)
        if got is ... or got is NotImplemented:
            return not_attempted(name)
        try:
            compare(got, expected, rtol=rtol, atol=atol)
        except Mismatch as mismatch:
            return _report(name, False, f"{_case_text(args)}: {mismatch}")
    return _report(name, True, f"matches the reference on all {len(cases)} inputs.")


def check_value(got: Any, expected: Any, *, name: str = "answer", rtol: float = 1e-5, atol: float = 1e-6,
                hints: Sequence[str] | str | None = None) -> bool:
    """Compare one value (a number, array, tensor or tuple of them) with the expected one."""
    register_hints(name, hints)
    if got is ... or got is NotImplemented:
        return not_attempted(name)
    try:
        compare(got, expected, rtol=rtol, atol=atol, path=name)
    except Mismatch as mismatch:
        return _report(name, False, f"{mismatch}")
    except Exception as error:
        return _report(name, False, f"could not compare {_describe(got)}: {error}")
    return _report(name, True, "correct.")


def check_true(condition_fn: Callable[[], bool], *, name: str, fail: str, success: str = "correct.",
               hints: Sequence[str] | str | None = None) -> bool:
    """Run a learner-dependent condition (e.g. "accuracy above 80 %"); ❌ with ``fail`` when false."""
    register_hints(name, hints)
    try:
        ok = bool(condition_fn())
    except Exception as error:
        return _learner_error(name, "the check", error)
    return _report(name, ok, success if ok else fail)


def not_cuda_source(source, kernel_name: str) -> str | None:
    """What is wrong with a submission that is no CUDA C kernel (Python code, a function, text without a
    kernel), as a verdict's text; None for an empty one (not attempted yet) or one with a kernel."""
    needs = f'it needs `extern "C" __global__ void {kernel_name}(...)`, as the stub above has it'
    if callable(source):
        return ("no kernel in the source: this is a Python function, and the exercise takes the kernel's CUDA C "
                f"source as a string; {needs}")
    if isinstance(source, (bytes, bytearray)):
        return ("the source is bytes (b'...'): the exercise takes the kernel's CUDA C source as a str — drop the b "
                "before the quotes, or pass source.decode()")
    if not isinstance(source, str) or not source.strip() or "__global__" in source:
        return None
    python = re.search(r"^\s*(def |import |from \w+ import|@)|\bprint\(|\bnp\.", source, re.M)
    return "no kernel in the source: " + ("this is Python code, and the exercise takes CUDA C; " if python else "") + needs


def not_a_kernel(name: str, source, kernel_name: str) -> bool:
    """The verdict for a submission without a kernel: ❌ saying what the exercise takes (Python code, a function,
    other text), or "not attempted yet" for an empty one."""
    wrong = not_cuda_source(source, kernel_name)
    return _report(name, False, wrong) if wrong else not_attempted(name)


def check_kernel(source: str, kernel_name: str, run: Callable, reference: Callable, cases: Iterable[tuple], *,
                 name: str | None = None, rtol: float = 1e-5, atol: float = 1e-6,
                 hints: Sequence[str] | str | None = None) -> bool:
    """Compile the learner's CUDA C ``source``, then compare ``run(kernel, *case)`` with ``reference(*case)``.

    ``run`` allocates the arrays (with ``course.cuda.xp``), launches the kernel and returns its
    output. The kernel always runs on the CPU backend first, with every sanitizer check on, where
    out-of-bounds accesses, data races, reads of uninitialised shared memory, writes into read-only
    arrays and barriers that not every thread reaches are caught; on a GPU it then runs on CuPy too and
    must give the same answer there. Compile errors, faults and wrong arguments are ❌ with the
    kernel's own message.
    """
    from course import cuda

    name = name or kernel_name
    register_hints(name, hints)
    cases = list(cases)
    if not isinstance(source, str) or "__global__" not in source:
        return not_a_kernel(name, source, kernel_name)
    backends = ["cpu"] + (["cupy"] if cuda.backend() == "cupy" else [])
    for backend_name in backends:
        with _kernel_backend(backend_name):
            try:
                # On the CPU every check is on: bounds, barriers, races, uninitialised shared memory.
                kernel = cuda.RawKernel(source, kernel_name, backend=backend_name, sanitize=backend_name == "cpu")
                kernel.compile()  # (now, not at the first launch: a compile error is no case's fault)
            except Exception as error:
                text = str(error)
                return _report(name, False, text if "does not compile" in text else f"does not compile: {text}")

            shown = set()  # (each of the kernel's other warnings once, not once per case and size)

            def launch(*args, kernel=kernel, shown=shown):
                # Elements stored by more than one block (with the same value, so the values come out right):
                # the blocks repeat one another's work, and a kernel that does is no solution. The
                # emulator's warning says why; it becomes the verdict. Other warnings pass through.
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    result = run(kernel, *args)
                for warning in caught:
                    if issubclass(warning.category, cuda.KernelWarning) and "stored by more than one block" in str(
                            warning.message):
                        raise warning.message
                    key = re.sub(r"[\d,]+", "#", str(warning.message))  # (the same warning with other counts)
                    if key not in shown:
                        shown.add(key)
                        warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
                return result

            where = "" if len(backends) == 1 else f" [{'CPU backend, every check on' if backend_name == 'cpu' else 'GPU (CuPy)'}]"
            if not check_function(launch, reference, cases, name=f"{name}{where}", rtol=rtol, atol=atol,
                                  copy_inputs=True):
                _last_checked[:] = [name]
                return False
    if len(backends) > 1:
        return _report(name, True, "right on the CPU backend (with every check) and on the GPU.")
    return True


@contextlib.contextmanager
def _kernel_backend(backend_name: str):
    """Run ``course.cuda`` (its ``xp`` and new kernels) on one backend inside the block."""
    saved = os.environ.get("COURSE_CUDA_BACKEND")
    os.environ["COURSE_CUDA_BACKEND"] = backend_name
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("COURSE_CUDA_BACKEND", None)
        else:
            os.environ["COURSE_CUDA_BACKEND"] = saved


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
