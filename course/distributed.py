"""Launch torchrun from a notebook and read what rank 0 wrote (notebook 11).

A notebook cell cannot be one of torchrun's workers, so notebook 11 writes its training script
to a file and starts ``python -m torch.distributed.run`` — the program behind the ``torchrun``
command, found even when the environment's ``bin/`` is not on PATH — as a child process.
``launch`` streams the workers' output into the notebook line by line, stops the whole job
(torchrun and every worker) when it runs past its timeout or the cell is interrupted, and
raises with the last lines of output when torchrun reports a failure.
"""

from __future__ import annotations

import json
import os
import queue
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "torchrun_command",
    "run_streaming",
    "launch",
    "LaunchResult",
    "root_cause",
    "read_result",
    "load_weights",
    "relative_difference",
]


@dataclass
class LaunchResult:
    """What a finished command left behind: its exit code, its whole output, its wall time (notebook 11)."""

    command: list
    returncode: int
    output: str
    seconds: float

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def tail(self, lines: int = 20) -> str:
        return "\n".join(self.output.rstrip("\n").splitlines()[-lines:])


def torchrun_command(script, *script_args, nproc: int = 2, max_restarts: int = 0,
                     launcher_args: tuple = ()) -> list:
    """The argument list of ``python -m torch.distributed.run --standalone ... script args`` (notebook 11)."""
    if not isinstance(nproc, int) or isinstance(nproc, bool) or nproc < 1:
        raise ValueError(f"nproc must be a positive int (processes on this machine), got {nproc!r}")
    if not isinstance(max_restarts, int) or max_restarts < 0:
        raise ValueError(f"max_restarts must be an int ≥ 0, got {max_restarts!r}")
    script = Path(script)
    if not script.is_file():
        raise FileNotFoundError(f"no training script at {script}: run the %%writefile cell first")
    return [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={nproc}",
            f"--max_restarts={max_restarts}", *map(str, launcher_args), str(script), *map(str, script_args)]


def _pretty(command: list) -> str:
    # Show `python` for the interpreter: the full path of a virtual environment hides the point.
    shown = ["python" if i == 0 and arg == sys.executable else arg for i, arg in enumerate(command)]
    return shlex.join(shown)


def _stop(process: subprocess.Popen) -> None:
    """Stop a child started in its own session, and everything it started (torchrun's workers)."""
    if process.poll() is not None:
        if os.name != "nt":
            try:  # the launcher is gone; a worker it left behind would still be in its group
                os.killpg(process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        return
    if os.name == "nt":  # no process groups on Windows: stop the launcher, whose workers then exit
        process.kill()
        process.wait()
        return
    for sig, grace in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(process.pid, sig)  # the group we created with start_new_session=True
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue


def run_streaming(command: list, *, timeout: float, env: dict | None = None, echo: bool = True,
                  cwd=None) -> LaunchResult:
    """Run ``command``, printing its output as it comes; stop it, TimeoutError, after ``timeout`` s (notebook 11)."""
    if not timeout or timeout <= 0:
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               bufsize=1, env=env, cwd=cwd, start_new_session=True, errors="replace")
    lines: queue.Queue = queue.Queue()

    def read():
        for line in process.stdout:
            lines.put(line)
        lines.put(None)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    output, exited_at = [], None
    try:
        while True:
            left = timeout - (time.perf_counter() - start)
            if left <= 0:
                _stop(process)
                raise TimeoutError(
                    f"`{_pretty(command)}` ran longer than {timeout:.0f} s and was stopped. Its last lines:\n"
                    + "".join(output[-15:])
                    + "\nRaise the timeout, or make the run smaller (fewer epochs or processes)."
                )
            try:
                line = lines.get(timeout=min(left, 0.5))
            except queue.Empty:
                if process.poll() is not None:  # the launcher is done; a straggler may hold the pipe open
                    exited_at = exited_at or time.perf_counter()
                    if time.perf_counter() - exited_at > 2:
                        break
                continue
            if line is None:
                break
            output.append(line)
            if echo:
                print(line, end="", flush=True)
        process.wait()
    finally:
        _stop(process)  # on an error or a KeyboardInterrupt, no orphaned workers
    return LaunchResult(command, process.returncode, "".join(output), time.perf_counter() - start)


def launch(script, *script_args, nproc: int = 2, timeout: float = 300, max_restarts: int = 0,
           threads_per_process: int | None = 1, check: bool = True, echo: bool = True,
           env: dict | None = None) -> LaunchResult:
    """Run ``script`` under torchrun with ``nproc`` processes, streaming its output (notebook 11).

    ``threads_per_process`` sets OMP_NUM_THREADS for every worker (torchrun itself sets 1 when
    nproc > 1; ``None`` leaves it alone). With ``check=True`` a failed run raises RuntimeError
    with its last lines; pass ``check=False`` to inspect a failure yourself.
    """
    command = torchrun_command(script, *script_args, nproc=nproc, max_restarts=max_restarts)
    child_env = {**os.environ, **(env or {}), "PYTHONUNBUFFERED": "1"}  # workers' prints arrive at once
    if threads_per_process is not None:
        child_env["OMP_NUM_THREADS"] = str(int(threads_per_process))
    if echo:
        print("$", _pretty(command), flush=True)
    result = run_streaming(command, timeout=timeout, env=child_env, echo=echo)
    if echo:
        print(f"[exit code {result.returncode} after {result.seconds:.1f} s]", flush=True)
    if check and not result.ok:
        raise RuntimeError(f"torchrun exited with code {result.returncode}. Its last lines:\n{result.tail()}\n"
                           "Read the 'Root Cause' section above: it names the rank that failed first.")
    return result


def root_cause(output: str) -> str:
    """The 'Root Cause (first observed failure)' block of torchrun's failure report, '' if none (notebook 11)."""
    match = re.search(r"Root Cause \(first observed failure\):\n(.*?)\n={20,}", output, re.S)
    return match.group(1).rstrip() if match else ""


def read_result(run_dir) -> dict:
    """The ``result.json`` that rank 0 wrote into ``run_dir`` at the end of training (notebook 11)."""
    path = Path(run_dir) / "result.json"
    if not path.is_file():
        raise FileNotFoundError(f"rank 0 wrote no {path.name} in {path.parent}: the run failed or did not "
                                "finish — read its output above.")
    return json.loads(path.read_text(encoding="utf-8"))


def load_weights(run_dir, name: str = "model.pt") -> dict:
    """Rank 0's ``state_dict`` from ``run_dir``, loaded safely (``weights_only=True``) on the CPU (notebook 11)."""
    import torch

    path = Path(run_dir) / name
    if not path.is_file():
        raise FileNotFoundError(f"no {name} in {path.parent}: the run failed or did not finish.")
    return torch.load(path, map_location="cpu", weights_only=True)


def relative_difference(a: dict, b: dict) -> float:
    """‖a − b‖ / ‖a‖ over all tensors of two state_dicts with the same keys and shapes (notebook 11)."""
    if set(a) != set(b):
        raise ValueError(f"the state_dicts have different keys: only in the first {sorted(set(a) - set(b))}, "
                         f"only in the second {sorted(set(b) - set(a))}")
    diff = norm = 0.0
    for key in a:
        if a[key].shape != b[key].shape:
            raise ValueError(f"{key}: shapes differ, {tuple(a[key].shape)} vs {tuple(b[key].shape)}")
        diff += float((a[key].double() - b[key].double()).pow(2).sum())
        norm += float(a[key].double().pow(2).sum())
    if norm == 0:
        raise ValueError("the first state_dict is all zeros: a relative difference is undefined")
    return (diff / norm) ** 0.5
