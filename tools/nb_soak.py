"""Run one notebook again and again under nbclient, as ``make html`` does, and count kernel deaths.

    python tools/nb_soak.py notebooks/11_distributed.ipynb --runs 20 --mode cpu
    python tools/nb_soak.py notebooks/11_distributed.ipynb --runs 3 --mode fast --strace build/soak/strace

Each run starts a fresh kernel (``python -m ipykernel_launcher``, the ``python3`` kernel of this
interpreter), executes every cell top to bottom, and records whether it passed, how long it took,
and — when it failed — the error (nbclient's ``DeadKernelError`` when the kernel died) and the
kernel's own stderr (where a ``zmq.error.ZMQError`` would be printed). The summary goes to
stdout and to ``build/soak/<notebook>-<mode>.json``; the exit code is 1 when any run failed.

``--strace DIR`` runs the kernel under ``strace -f`` and writes, per run, every ``close``/``dup2``/
``socket``/``pipe`` call of the kernel and its children to ``DIR/run-K.trace``: when a kernel dies,
``--explain`` reads that trace and names the thread or child that closed one of the kernel's ZeroMQ
file descriptors. This is how notebook 11's intermittent kernel death was diagnosed (issue 17).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODES = ("fast", "cpu", "gpu")
TRACED = "close,dup2,dup3,socket,socketpair,pipe2,eventfd2,openat,accept4,clone,clone3,execve,exit_group"


def _kernel_spec(directory: Path, strace_file: Path | None) -> str:
    """Write a kernelspec for this interpreter (optionally under strace) into ``directory``; its name."""
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    if strace_file is not None:
        strace = shutil.which("strace")
        if strace is None:
            raise SystemExit("--strace needs the strace program (apt-get install strace)")
        argv = [strace, "-f", "-tt", "--seccomp-bpf", "-e", f"trace={TRACED}", "-o", str(strace_file)] + argv
    name = "soak-python3"
    spec_dir = directory / "kernels" / name
    spec_dir.mkdir(parents=True, exist_ok=True)
    (spec_dir / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": name, "language": "python"}))
    return name


def run_once(path: Path, mode: str, timeout: int, stderr_file: Path, strace_file: Path | None) -> dict:
    """Execute ``path`` once in a fresh kernel; a dict with ok, seconds, error and the kernel's stderr tail."""
    import nbformat
    from nbclient import NotebookClient

    os.environ.pop("COURSE_FAST", None)
    os.environ["COURSE_MODE"] = mode  # the kernel inherits it
    notebook = nbformat.read(path, as_version=4)
    started = time.perf_counter()
    error = None
    with tempfile.TemporaryDirectory(prefix="soak-kernelspec-") as spec_root, open(stderr_file, "w") as err:
        old_path = os.environ.get("JUPYTER_PATH")
        os.environ["JUPYTER_PATH"] = spec_root + (os.pathsep + old_path if old_path else "")
        try:
            name = _kernel_spec(Path(spec_root), strace_file)
            client = NotebookClient(notebook, timeout=timeout, kernel_name=name,
                                    resources={"metadata": {"path": str(path.parent)}})
            client.execute(stderr=err)  # passed on to the kernel's Popen: its stderr lands in the file
        except Exception as exc:  # noqa: BLE001 — a soak records every failure and goes on
            lines = [line for line in str(exc).strip().splitlines() if line.strip()]
            error = f"{type(exc).__name__}: " + "\n".join(lines[-12:])
        finally:
            if old_path is None:
                os.environ.pop("JUPYTER_PATH", None)
            else:
                os.environ["JUPYTER_PATH"] = old_path
    stderr_text = stderr_file.read_text(errors="replace")
    zmq_lines = [line for line in stderr_text.splitlines() if "ZMQError" in line or "non-socket" in line]
    return {"ok": error is None, "seconds": round(time.perf_counter() - started, 1), "error": error,
            "zmq_errors": zmq_lines[:5], "stderr": str(stderr_file)}


_LINE = re.compile(r"^(\d+)\s+[\d:.]+\s+(.*)$")
_CALL = re.compile(r"^(\w+)\((.*)$")
_RESULT = re.compile(r"\)\s+=\s+(-?\d+)")
_RESUMED = re.compile(r"^<\.\.\. (\w+) resumed>(.*)$")


def explain(trace_file: Path) -> list[str]:
    """Closes of a socket file descriptor by a thread that did not make it (in a ``strace -f`` trace).

    Per process (threads are grouped through their ``clone`` flags), we follow which numbers are
    sockets and which thread made them; a ``close(N)`` of such a number in the kernel by another
    thread, and a ``close`` anywhere that fails with EBADF (a double close), are reported with their
    line in the trace.
    """
    findings, owner, process, pending, kernel = [], {}, {}, {}, None
    for number, line in enumerate(trace_file.read_text(errors="replace").splitlines(), 1):
        match = _LINE.match(line)
        if not match:
            continue
        tid, text = match.groups()
        process.setdefault(tid, tid)
        kernel = kernel or tid  # the first process in the trace is the kernel
        resumed = _RESUMED.match(text)
        if resumed:
            call, rest = resumed.group(1), pending.pop(tid, "") + resumed.group(2)
        else:
            call_match = _CALL.match(text)
            if not call_match:
                continue
            call, rest = call_match.groups()
            if rest.endswith("<unfinished ...>"):
                pending[tid] = rest
                continue
        returned = _RESULT.findall(rest)
        result = returned[-1] if returned else ""
        pid = process[tid]
        if call in ("clone", "clone3") and result.isdigit():
            process[result] = pid if "CLONE_THREAD" in rest else result
        elif call in ("socket", "socketpair", "eventfd2", "accept4") and result.isdigit():
            owner[(pid, int(result))] = (tid, call, number)
        elif call == "close":
            fd = rest.split(")")[0]
            if not fd.isdigit():
                continue
            made = owner.pop((pid, int(fd)), None)
            if made and made[0] != tid and pid == kernel:
                findings.append(f"line {number}: process {pid}, thread {tid} closed fd {fd}, a {made[1]} "
                                f"made by thread {made[0]} (line {made[2]})")
            if result == "-1" and "EBADF" in rest:
                findings.append(f"line {number}: process {pid}, thread {tid} closed fd {fd}, already closed (EBADF)")
    return findings


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebook", type=Path)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--mode", choices=MODES, default="cpu")
    parser.add_argument("--timeout", type=int, default=900, help="seconds per cell, as make html")
    parser.add_argument("--stop-on-failure", action="store_true", help="stop at the first failed run")
    parser.add_argument("--strace", type=Path, help="run the kernel under strace -f, traces in this folder")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    if not args.notebook.is_file():
        parser.error(f"no notebook at {args.notebook}")
    out = ROOT / "build" / "soak"
    out.mkdir(parents=True, exist_ok=True)
    if args.strace:
        args.strace.mkdir(parents=True, exist_ok=True)
    runs = []
    for k in range(1, args.runs + 1):
        stem = f"{args.notebook.stem}-{args.mode}-run{k}"
        trace = args.strace / f"{stem}.trace" if args.strace else None
        result = run_once(args.notebook.resolve(), args.mode, args.timeout, out / f"{stem}.stderr", trace)
        if trace is not None and not result["ok"] and trace.exists():
            result["explain"] = explain(trace)[:20]
        runs.append(result)
        status = "ok" if result["ok"] else "FAILED\n    " + result["error"].replace("\n", "\n    ")
        print(f"run {k}/{args.runs}: {status} in {result['seconds']:.0f} s", flush=True)
        for line in result["zmq_errors"] + result.get("explain", []):
            print("    " + line, flush=True)
        if not result["ok"] and args.stop_on_failure:
            break
    failed = [r for r in runs if not r["ok"]]
    deaths = [r for r in failed if r["error"].startswith("DeadKernelError")]
    summary = {"notebook": str(args.notebook), "mode": args.mode, "runs": len(runs), "failed": len(failed),
               "dead_kernels": len(deaths), "details": runs}
    report = out / f"{args.notebook.stem}-{args.mode}.json"
    report.write_text(json.dumps(summary, indent=1))
    print(f"{len(runs)} run(s) of {args.notebook.name} in {args.mode} mode: {len(failed)} failed, "
          f"{len(deaths)} with a dead kernel; details in {report.relative_to(ROOT)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
