"""course.checks: ✅ on a right answer, ❌ with a specific hint otherwise, never raising."""

import numpy as np
import pytest
import torch

from course import checks


def stub(x):
    raise NotImplementedError


def square(x):
    return x * x


def test_right_answer_passes(capsys):
    assert checks.check_function(square, np.square, [(np.arange(5.0),), (np.zeros(0),)]) is True
    assert "✅" in capsys.readouterr().out


def test_untouched_stub_reports_without_raising(capsys):
    assert checks.check_function(stub, np.square, [(np.arange(3.0),)], hints="multiply x by itself") is False
    out = capsys.readouterr().out
    assert "❌" in out and "not attempted yet" in out
    assert "multiply x by itself" not in out and "hint()" not in out  # an untouched stub gets no hint


def test_first_mismatch_is_named(capsys):
    def almost(x):
        y = x * x
        y[2] += 1
        return y

    assert checks.check_function(almost, np.square, [(np.arange(5.0),)]) is False
    out = capsys.readouterr().out
    assert "1 of 5 values differ" in out and "index (2,)" in out and "expected 4.0, got 5.0" in out


def test_shape_none_and_exceptions_are_explained(capsys):
    assert not checks.check_function(lambda x: x[:-1] ** 2, np.square, [(np.arange(4.0),)])
    assert "expected shape (4,), got shape (3,)" in capsys.readouterr().out
    assert not checks.check_function(lambda x: None, np.square, [(np.arange(4.0),)])
    assert "forget to `return`" in capsys.readouterr().out
    assert not checks.check_function(lambda x: x / "a", np.square, [(np.arange(4.0),)])
    assert "raised TypeError" in capsys.readouterr().out


def test_in_place_bug_cannot_corrupt_the_reference():
    def in_place(x):
        x *= x
        return x

    data = np.arange(4.0)
    assert checks.check_function(in_place, np.square, [(data,)])
    assert np.array_equal(data, np.arange(4.0)), "the caller's input must be left alone"


def test_tensors_tuples_and_tolerances(capsys):
    ref = lambda t: (t.sum(), t * 2)
    assert checks.check_function(lambda t: (t.sum() + 1e-9, t * 2), ref, [(torch.arange(3.0),)])
    assert not checks.check_function(lambda t: (t.sum() + 1, t * 2), ref, [(torch.arange(3.0),)])
    assert "result[0]" in capsys.readouterr().out


def test_integer_results_must_be_exact():
    assert not checks.check_function(lambda x: x + 1, lambda x: x, [(np.arange(3, dtype=np.uint8),)])


def test_check_value_handles_unanswered_and_wrong(capsys):
    assert checks.check_value(..., 3.0) is False
    assert "not attempted yet" in capsys.readouterr().out
    assert checks.check_value(2.0, 3.0, name="speed") is False
    assert "speed" in capsys.readouterr().out
    assert checks.check_value(3.0 + 1e-9, 3.0) is True


def test_check_true_reports_failure_message(capsys):
    assert checks.check_true(lambda: 0.5 > 0.8, name="accuracy", fail="accuracy is below 80 %") is False
    assert "accuracy is below 80 %" in capsys.readouterr().out
    assert checks.check_true(lambda: 1 / 0, name="boom", fail="x") is False


def test_notebook_author_errors_still_raise():
    with pytest.raises(ValueError):
        checks.check_function(square, np.square, [])


def test_hints_are_progressive_and_never_printed_by_the_check(capsys):
    hints = ["nudge: what does squaring mean?", "method: multiply the array by itself, element by element"]
    assert not checks.check_function(lambda x: x * 2, np.square, [(np.arange(4.0),)], name="square_ex", hints=hints)
    out = capsys.readouterr().out
    assert "❌" in out and "expected" in out and "hint()" in out
    assert hints[0] not in out and hints[1] not in out
    assert hints[0] in checks.hint()
    assert hints[1] in checks.hint("square_ex")
    assert "No more hints" in checks.hint()
    assert "run the exercise's check cell first" in checks.hint("nothing_like_this")


def test_check_value_and_check_true_take_hints(capsys):
    assert not checks.check_value(3, 4, name="four", hints=["count again"])
    assert "hint()" in capsys.readouterr().out
    assert "count again" in checks.hint()
    assert not checks.check_value(..., 4, name="four_stub", hints=["x"])
    assert "not attempted yet" in capsys.readouterr().out


def test_a_kernel_is_compiled_before_its_cases_and_bytes_are_named(capsys):
    """A syntax error is "does not compile" with the compiler's message, not the first case's CompileError;
    a source given as bytes is told to be a str (it was "not attempted yet")."""
    broken = 'extern "C" __global__ void k(float* y, int n) { int i = threadIdx.x if (i < n) y[i] = 1.0f; }'
    assert not checks.check_kernel(broken, "k", lambda kernel, y: y, lambda y: y, [(np.zeros(3, np.float32),)])
    out = capsys.readouterr().out
    assert "does not compile" in out and "error:" in out and "with input" not in out, out
    assert not checks.check_kernel(broken.encode(), "k", lambda kernel, y: y, lambda y: y, [(np.zeros(3),)])
    out = capsys.readouterr().out
    assert "bytes" in out and "str" in out and checks.NOT_ATTEMPTED not in out, out
