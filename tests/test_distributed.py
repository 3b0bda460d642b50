"""course.distributed: launching torchrun from a notebook, reading rank 0's results (notebook 11)."""

import os
import sys
import textwrap
import time

import pytest

from course import distributed


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def test_torchrun_command_is_python_dash_m(tmp_path):
    script = write(tmp_path, "s.py", "pass\n")
    cmd = distributed.torchrun_command(script, "--epochs", 3, nproc=2, max_restarts=1)
    assert cmd[:3] == [sys.executable, "-m", "torch.distributed.run"]
    assert "--standalone" in cmd and "--nproc_per_node=2" in cmd and "--max_restarts=1" in cmd
    assert cmd[-3:] == [str(script), "--epochs", "3"]  # script arguments come after the script


@pytest.mark.parametrize("nproc", [0, -1, 1.5, True])
def test_torchrun_command_rejects_bad_nproc(tmp_path, nproc):
    with pytest.raises(ValueError, match="nproc"):
        distributed.torchrun_command(write(tmp_path, "s.py", ""), nproc=nproc)


def test_torchrun_command_needs_the_script(tmp_path):
    with pytest.raises(FileNotFoundError, match="writefile"):
        distributed.torchrun_command(tmp_path / "missing.py")


def test_run_streaming_captures_output_and_exit_code(capsys):
    result = distributed.run_streaming([sys.executable, "-c", "print('a'); print('b'); raise SystemExit(3)"],
                                       timeout=30)
    assert result.returncode == 3 and not result.ok
    assert result.output.splitlines() == ["a", "b"]
    assert capsys.readouterr().out.splitlines() == ["a", "b"]  # streamed as it came


def test_run_streaming_stops_a_job_that_runs_too_long(tmp_path):
    pid_file = tmp_path / "pid"
    child = (f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); "
             "print('started', flush=True); time.sleep(60)")
    t0 = time.perf_counter()
    with pytest.raises(TimeoutError, match="started"):  # the message quotes the last lines
        distributed.run_streaming([sys.executable, "-c", child], timeout=2, echo=False)
    assert time.perf_counter() - t0 < 20
    pid = int(pid_file.read_text())
    time.sleep(0.2)
    with pytest.raises(ProcessLookupError):  # the child is gone, not orphaned
        os.kill(pid, 0)


def test_launch_runs_two_workers_that_all_reduce(tmp_path, capsys):
    script = write(tmp_path, "w.py", """
        import os, torch, torch.distributed as dist
        dist.init_process_group("gloo")
        t = torch.tensor([float(dist.get_rank() + 1)])
        dist.all_reduce(t)
        threads = os.environ["OMP_NUM_THREADS"]
        print(f"rank {dist.get_rank()} of {dist.get_world_size()} sum {t.item():.0f} threads {threads}")
        dist.destroy_process_group()
    """)
    result = distributed.launch(script, nproc=2, timeout=120)
    assert result.ok
    assert "rank 0 of 2 sum 3 threads 1" in result.output and "rank 1 of 2 sum 3 threads 1" in result.output
    assert capsys.readouterr().out.startswith("$ python -m torch.distributed.run")


def test_launch_reports_a_failing_worker(tmp_path):
    script = write(tmp_path, "bad.py", """
        import os
        if os.environ["RANK"] == "1":
            raise RuntimeError("boom on rank 1")
    """)
    result = distributed.launch(script, nproc=2, timeout=120, check=False, echo=False)
    assert result.returncode == 1
    assert "ChildFailedError" in result.output
    assert "rank      : 1" in distributed.root_cause(result.output)


def test_launch_raises_on_failure_when_asked(tmp_path, monkeypatch):
    failed = distributed.LaunchResult(["x"], 1, "line\nChildFailedError\n", 1.0)
    monkeypatch.setattr(distributed, "run_streaming", lambda *a, **k: failed)
    script = write(tmp_path, "s.py", "")
    with pytest.raises(RuntimeError, match="exited with code 1"):
        distributed.launch(script, echo=False)
    assert distributed.launch(script, echo=False, check=False) is failed


def test_root_cause_is_empty_without_a_failure():
    assert distributed.root_cause("all good\n") == ""


def test_read_result_and_load_weights(tmp_path):
    import torch

    with pytest.raises(FileNotFoundError, match="rank 0 wrote no result.json"):
        distributed.read_result(tmp_path)
    (tmp_path / "result.json").write_text('{"world_size": 2}')
    assert distributed.read_result(tmp_path) == {"world_size": 2}
    torch.save({"w": torch.ones(2)}, tmp_path / "model.pt")
    assert torch.equal(distributed.load_weights(tmp_path)["w"], torch.ones(2))


def test_relative_difference():
    import torch

    a = {"w": torch.tensor([3.0, 0.0]), "b": torch.tensor([4.0])}
    b = {"w": torch.tensor([3.0, 0.5]), "b": torch.tensor([4.0])}
    assert distributed.relative_difference(a, a) == 0
    assert distributed.relative_difference(a, b) == pytest.approx(0.5 / 5)
    with pytest.raises(ValueError, match="different keys"):
        distributed.relative_difference(a, {"w": a["w"]})
    with pytest.raises(ValueError, match="shapes differ"):
        distributed.relative_difference(a, {"w": torch.zeros(3), "b": a["b"]})


def test_run_streaming_returns_when_the_child_exits_but_a_grandchild_holds_the_pipe(tmp_path):
    # the child starts a grandchild that keeps stdout open, then exits: we must not wait for the timeout
    child = ("import subprocess, sys; "
             "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); print('bye')")
    t0 = time.perf_counter()
    result = distributed.run_streaming([sys.executable, "-c", child], timeout=30, echo=False)
    assert result.ok and result.output == "bye\n"
    assert time.perf_counter() - t0 < 15


def test_run_streaming_stops_workers_in_their_own_sessions(tmp_path):
    # torchrun starts every worker with start_new_session=True: stopping the launcher's process
    # group does not reach them, so run_streaming must find and stop them itself
    pid_file = tmp_path / "worker.pid"
    worker = write(tmp_path, "worker.py", f"""
        import os, time
        open({str(pid_file)!r}, "w").write(str(os.getpid()))
        time.sleep(60)
    """)
    launcher = write(tmp_path, "launcher.py", f"""
        import subprocess, sys, time
        subprocess.Popen([sys.executable, {str(worker)!r}], start_new_session=True)
        time.sleep(3)
        print("launcher done", flush=True)
    """)
    child = str(launcher)
    result = distributed.run_streaming([sys.executable, child], timeout=30, echo=False)
    assert result.ok and "launcher done" in result.output
    pid = int(pid_file.read_text())
    for _ in range(50):  # SIGKILL is asynchronous; the orphan is reaped by init
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"the worker {pid} in its own session outlived run_streaming")


def test_run_streaming_leaves_no_thread_and_gives_the_child_no_stdin():
    import threading

    before = {t.ident for t in threading.enumerate()}
    result = distributed.run_streaming([sys.executable, "-c", "import sys; print(repr(sys.stdin.read()))"],
                                       timeout=30, echo=False)
    assert result.output.strip() == "''"  # /dev/null: the kernel's own stdin is never shared
    left = [t for t in threading.enumerate() if t.ident not in before and t.is_alive()]
    assert not left, f"threads left running after run_streaming: {left}"
