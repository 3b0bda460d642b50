"""tools/nb_soak.py: the repeated-run loop for intermittent kernel deaths (issue 17, notebook 11).

The 20-run soak itself is slow (minutes per run), so it runs only when asked:

    COURSE_SOAK_RUNS=20 python -m pytest tests/test_nb_soak.py -k soak      # or: python tools/nb_soak.py ...
"""

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import nb_soak  # noqa: E402


def test_explain_names_a_foreign_close_of_a_kernel_socket_and_a_double_close(tmp_path):
    trace = tmp_path / "k.trace"
    trace.write_text(
        "100 06:00:00.000001 socket(AF_INET, SOCK_STREAM|SOCK_CLOEXEC, IPPROTO_TCP) = 9\n"
        "100 06:00:00.000002 clone3({flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD, "
        "exit_signal=0}, 88 <unfinished ...>\n"
        "100 06:00:00.000003 <... clone3 resumed>) = 101\n"
        "100 06:00:00.000004 clone(child_stack=NULL, flags=CLONE_CHILD_SETTID|SIGCHLD) = 200\n"
        "200 06:00:00.000005 close(9)          = 0\n"              # a forked child: its own copy, harmless
        "101 06:00:00.000006 close(9)          = 0\n"              # another thread of the kernel: suspicious
        "101 06:00:00.000007 close(9)          = -1 EBADF (Bad file descriptor)\n"
    )
    findings = nb_soak.explain(trace)
    assert any("thread 101 closed fd 9, a socket made by thread 100" in f for f in findings), findings
    assert any("already closed (EBADF)" in f for f in findings), findings
    assert not any("process 200" in f and "socket" in f for f in findings), findings


def test_the_loop_rejects_bad_arguments(tmp_path, capsys):
    with pytest.raises(SystemExit):
        nb_soak.main([str(tmp_path / "missing.ipynb")])
    with pytest.raises(SystemExit):
        nb_soak.main([str(ROOT / "notebooks" / "11_distributed.ipynb"), "--runs", "0"])


@pytest.mark.skipif(not os.environ.get("COURSE_SOAK_RUNS"), reason="slow: set COURSE_SOAK_RUNS=20 to run the soak")
def test_soak_notebook_11_never_kills_its_kernel():
    runs = os.environ["COURSE_SOAK_RUNS"]
    mode = os.environ.get("COURSE_SOAK_MODE", "cpu")
    code = nb_soak.main([str(ROOT / "notebooks" / "11_distributed.ipynb"), "--runs", runs, "--mode", mode])
    assert code == 0, f"see build/soak/11_distributed-{mode}.json"
