"""Each notebook's named exercise checks, one module per notebook (``course.exercises.cuda_basics``, …).

A check cell calls one function from here, e.g. ``ex.check_transpose(transpose_tiled)``: the
check holds the reference and the rules, prints ✅/❌ with a specific diagnosis, and registers
the exercise's hints for ``course.checks.hint()``. The answers live only in the notebooks'
folded solution cells; ``tests/test_exercises_*.py`` prove that each check rejects the stub and
the most common wrong answer.
"""
