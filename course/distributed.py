"""Launch torchrun from a notebook and read what rank 0 wrote (notebook 11).

A notebook cell cannot be one of torchrun's workers, so notebook 11 writes its training script
to a file and starts ``python -m torch.distributed.run`` — the program behind the ``torchrun``
command, found even when the environment's ``bin/`` is not on PATH — as a child process.
``launch`` streams the workers' output into the notebook line by line, stops the whole job
(torchrun and every worker) when it runs past its timeout or the cell is interrupted, and
raises with the last lines of output when torchrun reports a failure.

Nothing of a launch stays behind in the notebook's kernel: the child gets no stdin and none of
the kernel's file descriptors (its ZeroMQ sockets among them), the one thread that reads the
child's output owns that pipe and closes it itself, and workers that torchrun started in
sessions of their own are found and stopped too — no process group is ever created in the
kernel.
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


def _family(pid: int) -> dict:
    """``{pid: start time}`` of every process that ``pid`` started, and theirs (Linux ``/proc``; else empty).

    torchrun starts each worker in a session of its own, so stopping torchrun's process group
    does not reach them; we remember them while they run and stop them one by one. The start
    time tells a still-running worker from an unrelated process that got its number later.
    """
    proc = Path("/proc")
    if not proc.is_dir():
        return {}
    children: dict[int, list] = {}
    for entry in proc.iterdir():
        if entry.name.isdigit():
            stat = _stat(int(entry.name))
            if stat:
                children.setdefault(stat[0], []).append((int(entry.name), stat[1]))
    found, todo = {}, [pid]
    while todo:
        for child, started in children.get(todo.pop(), []):
            if child not in found:
                found[child] = started
                todo.append(child)
    return found


def _stat(pid: int):
    """(parent pid, start time in clock ticks) of ``pid`` from /proc, or None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rsplit(")", 1)[1].split()  # the name in parentheses may hold spaces; fields follow
    return int(fields[1]), int(fields[19])


def _stop(process: subprocess.Popen, family: dict | None = None) -> None:
    """Stop a child started in its own session, its process group, and every process it started."""
    if os.name == "nt":  # no process groups on Windows: stop the launcher, whose workers then exit
        if process.poll() is None:
            process.kill()
            process.wait()
        return
    family = dict(family or {})
    family.update(_family(process.pid))
    if process.poll() is not None:
        try:  # the launcher is gone; a process it left behind in its group would still be there
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    else:
        for sig, grace in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(process.pid, sig)  # torchrun forwards SIGTERM to its workers and waits for them
            except ProcessLookupError:
                break
            try:
                process.wait(timeout=grace)
                break
            except subprocess.TimeoutExpired:
                continue
    for pid, started in family.items():  # whatever outlived the launcher (workers in their own sessions)
        stat = _stat(pid)
        if stat and stat[1] == started:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


def run_streaming(command: list, *, timeout: float, env: dict | None = None, echo: bool = True,
                  cwd=None) -> LaunchResult:
    """Run ``command``, printing its output as it comes; stop it, TimeoutError, after ``timeout`` s (notebook 11).

    The child reads nothing (stdin is /dev/null) and inherits none of this process's other file
    descriptors. One thread reads its output pipe and alone closes it, at the end of the output;
    when this function returns, the child and every process it started are gone and that thread
    has finished — nothing is left running in the notebook's kernel.
    """
    if not timeout or timeout <= 0:
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    start = time.perf_counter()
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, bufsize=1, env=env, cwd=cwd,
                               start_new_session=True, close_fds=True, errors="replace")
    lines: queue.Queue = queue.Queue()

    def read(pipe):
        with pipe:  # the reader owns the pipe: it is closed here, after the last line, by this thread only
            for line in pipe:
                lines.put(line)
        lines.put(None)

    reader = threading.Thread(target=read, args=(process.stdout,), daemon=True, name="run_streaming reader")
    reader.start()
    output, exited_at, family, looked_at = [], None, {}, 0.0
    try:
        while True:
            now = time.perf_counter()
            left = timeout - (now - start)
            if left <= 0:
                _stop(process, family)
                raise TimeoutError(
                    f"`{_pretty(command)}` ran longer than {timeout:.0f} s and was stopped. Its last lines:\n"
                    + "".join(output[-15:])
                    + "\nRaise the timeout, or make the run smaller (fewer epochs or processes)."
                )
            if now - looked_at > 1.0 and process.poll() is None:
                family.update(_family(process.pid))  # remember the workers while their parent lives
                looked_at = now
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
        _stop(process, family)  # on an error or a KeyboardInterrupt too: no orphaned workers
        reader.join(timeout=5)  # with every writer gone the pipe ends, and the reader with it
    while True:  # lines that arrived after we stopped waiting
        try:
            line = lines.get_nowait()
        except queue.Empty:
            break
        if line is not None:
            output.append(line)
            if echo:
                print(line, end="", flush=True)
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
