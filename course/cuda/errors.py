"""The two errors of ``course.cuda`` (notebook 01): a kernel that does not compile, and one
that faults while it runs; and its warning, for a kernel that compiles but looks wrong."""

from __future__ import annotations


class CompileError(RuntimeError):
    """The kernel source does not compile, or uses something the CPU backend cannot run."""


class KernelError(RuntimeError):
    """A fault in a running kernel: a bad memory access, a barrier, the time limit, a crash.

    ``kernel``, ``block`` and ``thread`` say who faulted; ``line`` is the line of the kernel
    source (1 = its first line) or None when unknown.
    """

    def __init__(self, message: str, *, kernel: str, block=None, thread=None, line=None):
        super().__init__(message)
        self.kernel = kernel
        self.block = block
        self.thread = thread
        self.line = line


class KernelWarning(UserWarning):
    """The kernel compiles, but the compiler saw a likely bug (a variable read before it is given
    a value): nvcc warns about the same."""
