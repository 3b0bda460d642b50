"""course.cuda's CPU backend runs the blocks of a launch on several worker threads at once
(COURSE_CUDA_THREADS): results, printf output and fault messages must be those of a serial run.

The kernels here are launched with sanitize=False: a sanitized launch always runs on one worker
(see runtime.h), so only plain launches show that the workers agree with each other.
"""

import os
import time

import numpy as np
import pytest

import course.cuda as cuda
from course.cuda import cpu

KERNELS = r"""
extern "C" __global__ void histogram(const int* x, unsigned int* counts, int n, int bins) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&counts[x[i] % bins], 1u);
}

// Every thread takes a ticket: the tickets must be 0 .. n-1, each once.
extern "C" __global__ void tickets(int* counter, int* ticket_of, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) ticket_of[i] = atomicAdd(counter, 1);
}

extern "C" __global__ void integer_atomics(const int* x, int* stats, unsigned long long* big, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    atomicMax(&stats[0], x[i]);
    atomicMin(&stats[1], x[i]);
    atomicXor(&stats[2], x[i]);
    atomicOr(&stats[3], 1 << (x[i] % 31));
    atomicSub(&stats[4], x[i] % 7);
    atomicAdd(&big[0], (unsigned long long)x[i] * 4096ull);
    atomicInc((unsigned int*)&stats[5], 1000u);
    int seen = stats[6], wanted;
    do {  // an add made of compare-and-swap, as CUDA's own examples do
        wanted = seen + 1;
        seen = atomicCAS(&stats[6], wanted - 1, wanted);
    } while (seen != wanted - 1);
}

extern "C" __global__ void float_sum(const float* x, float* total, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(total, x[i]);
}

// Block sums with a static __shared__ array and barriers (fibers), and dynamic shared memory.
extern "C" __global__ void block_sums(const float* x, float* sums, int n) {
    __shared__ float partial[128];
    extern __shared__ float scratch[];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    partial[t] = i < n ? x[i] : 0.0f;
    scratch[t] = (float)blockIdx.x;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (t < stride) partial[t] += partial[t + stride];
        __syncthreads();
    }
    if (t == 0) sums[blockIdx.x] = partial[0] + scratch[blockDim.x - 1] - (float)blockIdx.x;
}

// Blocks 5, 9, 13, ... write past the end. Block 5 waits (a while at most) until block 9 is
// about to fault, so that with two workers a later block faults first in time.
extern "C" __global__ void late_faults(float* out, int n, volatile int* flag) {
    int b = blockIdx.x;
    if (b == 9 && threadIdx.x == 0) atomicExch((int*)&flag[0], 1);
    if (b == 5 && threadIdx.x == 0) {
        for (int k = 0; k < 300000000 && flag[0] == 0; k++) flag[2] = k;
        flag[1] = flag[0];  // 1: block 9 ran (and faulted) while block 5 waited
    }
    if (b % 4 == 1 && b >= 5 && threadIdx.x == 0) out[n + threadIdx.x] = 1.0f;  // BUG: past the end
    if (threadIdx.x == 0) out[b] = (float)b;
}

// Blocks 0 and 1 meet, then every thread of every block adds 1 to one counter many times.
extern "C" __global__ void hammer(unsigned long long* counter, volatile int* met, int rounds) {
    if (blockIdx.x < 2 && threadIdx.x == 0) {
        atomicAdd((int*)&met[0], 1);
        for (int k = 0; k < 300000000 && met[0] < 2; k++) met[2] = k;
        if (met[0] >= 2) met[1] = 1;  // both were running at once
    }
    for (int k = 0; k < rounds; k++) atomicAdd(counter, 1ull);
}

extern "C" __global__ void say(int* dummy, int detour) {
    int b = blockIdx.x;
    int s = 0;
    for (int k = 0; k < detour * ((b * 7) % 13); k++) s += dummy[k % 4];  // uneven work per block
    printf("block %d thread %d says %d\n", b, threadIdx.x, s * 0 + b * 10 + threadIdx.x);
}

extern "C" __global__ void say_then_fault(int* out, int bad_block) {
    printf("block %d thread %d\n", blockIdx.x, threadIdx.x);
    if (blockIdx.x == bad_block && threadIdx.x == 1) out[1000000] = 1;  // BUG
}

extern "C" __global__ void spin_in_one_block(volatile int* flag, int block) {
    if (blockIdx.x == block)
        while (flag[0] == 0) flag[1] += 1;  // BUG: nobody sets the flag
}

extern "C" __global__ void spin_everywhere(volatile int* flag) {
    while (flag[0] == 0) {  // BUG: endless
        flag[1] += 1;
        __syncthreads();
    }
}

extern "C" __global__ void crash_in_block(int* out, int block) {
    int* p = (int*)(size_t)16;  // BUG: not an address
    if (blockIdx.x == block && threadIdx.x == 3) *p = 1;
    out[blockIdx.x] = 1;
}

__device__ int deep(int n, int* trail) {
    int local[64];
    local[n % 64] = n;
    trail[0] = n;
    int r = deep(n + 1, trail);  // BUG: never stops
    return local[(r + n * 7) % 64];  // (after the call: each call keeps its own frame)
}

extern "C" __global__ void recurse_in_block(int* trail, int block) {
    if (blockIdx.x == block) trail[1] = deep(0, trail);
}

extern "C" __global__ void recurse_in_block_with_barrier(int* trail, int block) {
    __syncthreads();
    if (blockIdx.x == block) trail[1] = deep(0, trail);
}

// Block 1 faults while block 0 waits for it: the fault happens on a worker the launch started.
extern "C" __global__ void fault_on_second_worker(volatile int* flag, int* trail, int overflow) {
    if (blockIdx.x == 0)
        for (int k = 0; k < 1000000000 && flag[0] == 0; k++) flag[1] = k;  // until block 1 says hello
    if (blockIdx.x == 1) {
        atomicExch((int*)&flag[0], 1);
        if (overflow) trail[1] = deep(0, trail);  // BUG: endless recursion
        else *(int*)(size_t)16 = 1;  // BUG: not an address
    }
}

// Block 0 waits for block 1: only blocks that really run at the same time get past this.
extern "C" __global__ void wait_for_next_block(volatile int* flag) {
    if (blockIdx.x == 1 && threadIdx.x == 0) {
        __threadfence();
        atomicExch((int*)&flag[0], 1);
    }
    if (blockIdx.x == 0 && threadIdx.x == 0)
        while (flag[0] == 0) flag[1] += 1;
}

extern "C" __global__ void fill(float* out, float value, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = value;
}
"""


def kernel(name, **kwargs):
    return cuda.RawKernel(KERNELS, name, backend="cpu", sanitize=False, **kwargs)


@pytest.fixture
def threads(monkeypatch):
    """Set COURSE_CUDA_THREADS for the rest of the test: threads(2)."""

    def use(count):
        monkeypatch.setenv("COURSE_CUDA_THREADS", str(count))

    return use


def assert_alive():
    out = np.zeros(3000, np.float32)
    kernel("fill")((12,), (256,), (out, 1.5, 3000))
    assert (out == 1.5).all()


# ---------------------------------------------------------------------------------------
# COURSE_CUDA_THREADS
# ---------------------------------------------------------------------------------------


def test_default_is_every_core_this_process_may_use(monkeypatch):
    monkeypatch.delenv("COURSE_CUDA_THREADS", raising=False)
    expected = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert cpu.worker_threads() == min(expected, cpu.cgroup_cpu_limit() or expected)


@pytest.fixture
def cgroups(tmp_path, monkeypatch):
    """A made-up /sys/fs/cgroup and /proc/self/cgroup: write(path, text) fills them."""
    monkeypatch.setattr(cpu, "CGROUP_ROOT", tmp_path / "sys")
    monkeypatch.setattr(cpu, "PROC_CGROUP", tmp_path / "proc_self_cgroup")
    monkeypatch.delenv("COURSE_CUDA_THREADS", raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(64)), raising=False)  # a 64-core node
    monkeypatch.setattr(cpu, "_CORES", [1, -1e9])  # (worker_threads reads the affinity afresh)
    cpu.cgroup_cpu_limit.cache_clear()

    def write(path, text):
        file = tmp_path / path
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(text)

    yield write
    cpu.cgroup_cpu_limit.cache_clear()


def test_a_containers_cpu_quota_caps_the_worker_threads_cgroup_v2(cgroups):
    """A JupyterHub or Binder pod sees all 64 cores of its node but may use 1.5 of them: two workers, not 64."""
    cgroups("proc_self_cgroup", "0::/kubepods/pod7/notebook\n")
    cgroups("sys/kubepods/pod7/notebook/cpu.max", "max 100000\n")
    cgroups("sys/kubepods/pod7/cpu.max", "150000 100000\n")  # the pod's limit, one group up
    cgroups("sys/kubepods/cpu.max", "800000 100000\n")
    assert cpu.cgroup_cpu_limit() == 2 and cpu.worker_threads() == 2


def test_a_containers_cpu_quota_caps_the_worker_threads_cgroup_v1(cgroups):
    cgroups("proc_self_cgroup", "4:memory:/docker/abc\n3:cpu,cpuacct:/docker/abc\n")
    cgroups("sys/cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "300000\n")
    cgroups("sys/cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000\n")
    assert cpu.worker_threads() == 3


@pytest.mark.parametrize("files", [{}, {"proc_self_cgroup": "0::/\n", "sys/cpu.max": "max 100000\n"},
                                   {"proc_self_cgroup": "1:cpu:/\n", "sys/cpu/cpu.cfs_quota_us": "-1\n",
                                    "sys/cpu/cpu.cfs_period_us": "100000\n"},
                                   {"proc_self_cgroup": "0::/x\n", "sys/x/cpu.max": "garbage\n"}])
def test_no_quota_leaves_every_core(cgroups, files):
    for path, text in files.items():
        cgroups(path, text)
    assert cpu.cgroup_cpu_limit() is None and cpu.worker_threads() == 64


def test_the_thread_count_setting_overrides_a_quota(cgroups, monkeypatch):
    cgroups("proc_self_cgroup", "0::/\n")
    cgroups("sys/cpu.max", "50000 100000\n")  # half a CPU: one worker
    assert cpu.worker_threads() == 1
    monkeypatch.setenv("COURSE_CUDA_THREADS", "4")
    assert cpu.worker_threads() == 4


@pytest.mark.parametrize("value", ["0", "-2", "two", "1.5", "100000"])
def test_bad_thread_count_is_a_clear_error(threads, value):
    threads(value)
    with pytest.raises(ValueError, match=r"COURSE_CUDA_THREADS=.*whole number of worker threads from 1 to 256"):
        kernel("fill")((2,), (32,), (np.zeros(64, np.float32), 1.0, 64))


def test_blocks_really_run_at_the_same_time(threads):
    threads(2)
    flag = np.zeros(2, np.int32)
    kernel("wait_for_next_block", time_limit=20)((2,), (32,), (flag,))
    assert flag[0] == 1
    threads(1)  # one worker: block 0 waits for a block that runs after it
    flag[:] = 0
    with pytest.raises(cuda.KernelError, match="time limit"):
        kernel("wait_for_next_block", time_limit=0.3)((2,), (32,), (flag,))


def test_kernels_named_like_the_emulators_own_variables():
    """Each kernel gets an exported launcher __cc_launch_<name>: no name of the emulator's own
    may clash with it."""
    for name in ("count", "id", "started", "ing"):
        code = f'extern "C" __global__ void {name}(int* out) {{ out[blockIdx.x] = (int)blockIdx.x + 1; }}'
        out = np.zeros(8, np.int32)
        cuda.RawKernel(code, name, backend="cpu", sanitize=False)((8,), (1,), (out,))
        assert out.tolist() == list(range(1, 9))


# ---------------------------------------------------------------------------------------
# Results: bit-identical to a serial run
# ---------------------------------------------------------------------------------------


def run_integer_atomics(threads, count):
    threads(count)
    rng = np.random.default_rng(0)
    n = 200_000
    x = rng.integers(0, 1_000_000, n).astype(np.int32)
    counts = np.zeros(97, np.uint32)
    kernel("histogram")(((n + 255) // 256,), (256,), (x, counts, n, 97))
    counter, ticket_of = np.zeros(1, np.int32), np.full(n, -1, np.int32)
    kernel("tickets")(((n + 127) // 128,), (128,), (counter, ticket_of, n))
    stats = np.array([np.iinfo(np.int32).min, np.iinfo(np.int32).max, 0, 0, 0, 0, 0], np.int32)
    big = np.zeros(1, np.uint64)
    kernel("integer_atomics")(((n + 255) // 256,), (256,), (x, stats, big, n))
    return x, counts, counter, ticket_of, stats, big


@pytest.mark.parametrize("count", [2, 3, 8])
def test_integer_atomics_give_the_serial_results(threads, count):
    x, counts, counter, ticket_of, stats, big = run_integer_atomics(threads, 1)
    n = x.size
    np.testing.assert_array_equal(counts, np.bincount(x % 97, minlength=97))
    assert counter[0] == n and np.array_equal(np.sort(ticket_of), np.arange(n))
    xor = np.bitwise_xor.reduce(x)
    bits = np.bitwise_or.reduce(np.left_shift(1, x % 31).astype(np.int32))
    expected = [x.max(), x.min(), xor, bits, -int((x % 7).sum()), n % 1001, n]
    assert stats.tolist() == [int(v) for v in expected]
    assert int(big[0]) == int(x.astype(np.uint64).sum()) * 4096

    parallel = run_integer_atomics(threads, count)
    for serial_result, parallel_result in zip((counts, counter, stats, big), parallel[1:2] + parallel[2:3] + parallel[4:]):
        np.testing.assert_array_equal(parallel_result, serial_result)
    assert np.array_equal(np.sort(parallel[3]), np.arange(n))  # each ticket once (the order varies, as on a GPU)


@pytest.mark.parametrize("count", [2, 4])
def test_atomics_are_atomic_between_workers(threads, count):
    threads(count)
    counter, met = np.zeros(1, np.uint64), np.zeros(3, np.int32)
    kernel("hammer", time_limit=60)((16,), (64,), (counter, met, 2000))
    assert met[1] == 1, "blocks 0 and 1 should have run at the same time"
    assert int(counter[0]) == 16 * 64 * 2000  # no update lost


def test_float_atomic_add_loses_nothing(threads):
    threads(2)
    x = np.random.default_rng(1).random(300_000).astype(np.float32)
    total = np.zeros(1, np.float32)
    kernel("float_sum")(((x.size + 255) // 256,), (256,), (x, total, x.size))
    assert abs(float(total[0]) - float(x.sum(dtype=np.float64))) < 1e-3 * x.size * 1e-2


def test_shared_memory_is_per_worker(threads):
    """Static and dynamic __shared__ memory: each worker has its own, so blocks do not mix."""
    x = np.random.default_rng(2).random(128 * 400).astype(np.float32)
    results = []
    for count in (1, 2, 4):
        threads(count)
        sums = np.zeros(400, np.float32)
        kernel("block_sums")((400,), (128,), (x, sums, x.size), shared_mem=128 * 4)
        results.append(sums)
    np.testing.assert_allclose(results[0], x.reshape(400, 128).sum(axis=1), rtol=1e-5)
    for other in results[1:]:
        np.testing.assert_array_equal(other, results[0])  # same order of additions: same bits


# ---------------------------------------------------------------------------------------
# printf: whole lines, in block order
# ---------------------------------------------------------------------------------------


def test_printf_lines_come_in_block_order(threads, capsys):
    dummy = np.ones(4, np.int32)
    expected = "".join(f"block {b} thread {t} says {b * 10 + t}\n" for b in range(40) for t in range(8))
    for count in (1, 2, 4):
        threads(count)
        for _ in range(3):
            kernel("say")((40,), (8,), (dummy, 20_000))
            assert capsys.readouterr().out == expected


def test_printf_past_its_mib_keeps_the_same_first_lines_on_any_number_of_workers(threads, capsys):
    """128 × 128 lines of 70 bytes (1.1 MiB): the output is the serial run's first MiB up to its last whole
    line, with the note, whichever worker ran which block (the workers took the MiB's room as they
    came, and the text had gaps)."""
    source = r"""
extern "C" __global__ void chatty(int* dummy) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    printf("%06d 0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmn\n", i);
}"""
    line = lambda i: f"{i:06d} 0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmn\n"  # noqa: E731
    whole = (1 << 20) // len(line(0))
    expected = "".join(line(i) for i in range(whole)) + "\n[printf output past 1 MiB was dropped, as on a GPU]\n"
    chatty = cuda.RawKernel(source, "chatty", backend="cpu", sanitize=False)
    for count in (1, 2, 1, 2):
        threads(count)
        chatty((128,), (128,), (np.zeros(1, np.int32),))
        assert capsys.readouterr().out == expected


def test_printf_after_a_fault_stops_at_the_faulting_block(threads, capsys):
    threads(2)
    out = np.zeros(4, np.int32)
    with pytest.raises(cuda.KernelError, match=r"block \(6, 0, 0\), thread \(1, 0, 0\)"):
        kernel("say_then_fault")((30,), (4,), (out, 6))
    printed = capsys.readouterr().out
    expected = "".join(f"block {b} thread {t}\n" for b in range(6) for t in range(4)) + "block 6 thread 0\nblock 6 thread 1\n"
    assert printed == expected  # what a serial run prints: nothing from the blocks after the fault


# ---------------------------------------------------------------------------------------
# Faults: the first faulting block in launch order, whatever the timing
# ---------------------------------------------------------------------------------------


def test_fault_message_names_the_first_faulting_block_every_time(threads):
    threads(2)
    n = 64
    messages = set()
    for _ in range(10):
        out, flag = np.zeros(n, np.float32), np.zeros(3, np.int32)
        with pytest.raises(cuda.KernelError) as info:
            kernel("late_faults", time_limit=30)((64,), (32,), (out, n, flag))
        assert flag[1] == 1, "block 9 should have faulted while block 5 waited, on the other worker"
        messages.add(str(info.value))
        assert info.value.block == (5, 0, 0) and info.value.thread == (0, 0, 0)
        assert (out[:5] == np.arange(5)).all()  # the blocks before it ran to the end
    assert len(messages) == 1, messages
    (message,) = messages
    assert "out[64]" in message and "BUG: past the end" in message


def test_serial_and_parallel_fault_messages_are_the_same(threads):
    messages = []
    for count in (2, 3, 1):
        threads(count)
        with pytest.raises(cuda.KernelError) as info:
            kernel("late_faults", time_limit=30)((64,), (32,), (np.zeros(64, np.float32), 64, np.zeros(3, np.int32)))
        messages.append(str(info.value))
    assert messages[0] == messages[1] == messages[2]


def test_crash_on_another_worker_is_caught(threads):
    threads(2)
    for block in (0, 37, 63):  # on the calling thread or on a started worker, whichever takes it
        out = np.zeros(64, np.int32)
        with pytest.raises(cuda.KernelError, match="invalid memory access") as info:
            kernel("crash_in_block")((64,), (32,), (out, block))
        assert info.value.block == (block, 0, 0) and info.value.thread == (3, 0, 0)
        assert out[:block].all()
    assert_alive()


@pytest.mark.parametrize("name", ["recurse_in_block", "recurse_in_block_with_barrier"])
def test_stack_overflow_on_another_worker_is_caught(threads, name):
    """Each worker thread has its own signal stack, so a stack overflow on any of them is reported."""
    threads(2)
    for block in (1, 30):
        with pytest.raises(cuda.KernelError, match="ran out of stack") as info:
            kernel(name)((32,), (4,), (np.zeros(2, np.int32), block))
        assert info.value.block == (block, 0, 0)
    assert_alive()


@pytest.mark.parametrize("overflow", [0, 1])
def test_fault_on_a_started_worker_thread(threads, overflow):
    threads(2)
    flag, trail = np.zeros(2, np.int32), np.zeros(2, np.int32)
    with pytest.raises(cuda.KernelError, match="ran out of stack" if overflow else "invalid memory access") as info:
        kernel("fault_on_second_worker", time_limit=30)((2,), (1,), (flag, trail, overflow))
    assert info.value.block == (1, 0, 0)
    assert flag[0] == 1 and flag[1] < 999_999_999  # block 0 saw block 1 run: on the other worker
    assert_alive()


# ---------------------------------------------------------------------------------------
# The time limit and Ctrl-C stop every worker
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("block", [0, 50])
def test_time_limit_stops_every_worker(threads, block):
    threads(2)
    flag = np.zeros(2, np.int32)
    started = time.perf_counter()
    with pytest.raises(cuda.KernelError, match=r"time limit of 0\.3 s") as info:
        kernel("spin_in_one_block", time_limit=0.3)((64,), (32,), (flag, block))
    assert time.perf_counter() - started < 3
    assert info.value.block == (block, 0, 0)
    assert_alive()


def test_time_limit_stops_workers_waiting_at_barriers(threads):
    threads(2)
    flag = np.zeros(2, np.int32)
    with pytest.raises(cuda.KernelError, match=r"time limit of 0\.3 s") as info:
        kernel("spin_everywhere", time_limit=0.3)((16,), (64,), (flag,))
    assert info.value.block == (0, 0, 0)  # every block spins: the first one is named
    assert_alive()


@pytest.mark.parametrize("sanitize", [False, True])
def test_a_time_limit_in_a_waiting_loop_names_the_same_thread_every_time(threads, sanitize):
    """Threads 5 to 39 wait for a flag nobody sets: the message names thread 5, the first of them, whichever
    waiting thread had its turn when the limit came (it named thread 7, 17 or 0 from run to run)."""
    source = r"""
extern "C" __global__ void wait_for_nobody(volatile int* flag, float* out) {
    if (threadIdx.x >= 5 && threadIdx.x < 40) {
        while (flag[0] == 0) { }
        out[threadIdx.x] = 1;
    }
}"""
    threads(2)
    seen = set()
    for _ in range(3):
        with pytest.raises(cuda.KernelError, match=r"time limit of 0\.2 s") as info:
            cuda.RawKernel(source, "wait_for_nobody", backend="cpu", sanitize=sanitize, time_limit=0.2)(
                (3,), (64,), (np.zeros(1, np.int32), np.zeros(64, np.float32)))
        seen.add((info.value.block, info.value.thread, info.value.line))
    assert seen == {((0, 0, 0), (5, 0, 0), 4)}
    assert_alive()


@pytest.mark.parametrize("block", [0, 50])
def test_interrupt_stops_every_worker(threads, block, stopped_by_ctrl_c):
    threads(2)
    flag = np.zeros(2, np.int32)
    stopped_by_ctrl_c(lambda: kernel("spin_in_one_block", time_limit=20)((64,), (32,), (flag, block)))
    assert_alive()


# ---------------------------------------------------------------------------------------
# The course's sample kernels: one worker and two give the same results
# ---------------------------------------------------------------------------------------


def test_sample_kernels_same_results_on_one_and_two_workers(threads):
    from pathlib import Path

    source = (Path(__file__).parent / "cuda_kernels" / "samples.cu").read_text()
    rng = np.random.default_rng(11)
    x = rng.random(100_000, dtype=np.float32)
    a, b = rng.random((96, 64), dtype=np.float32), rng.random((64, 64), dtype=np.float32)
    words = rng.integers(0, 2**32, 50_000, dtype=np.uint32)
    img = rng.random((60, 90), dtype=np.float32)
    rows = rng.standard_normal((40, 100)).astype(np.float32)

    def run():
        module = cuda.RawModule(code=source, backend="cpu", sanitize=False, options=("-DALPHA=2.0f",),
                                name_expressions=["reduce_multi<256>", "matrix_mul<16>"])
        out = {}
        out["reduce"] = np.zeros(24, np.float32)
        module.get_function("reduce_multi<256>")((24,), (256,), (x, out["reduce"], x.size))
        out["matmul"] = np.zeros((96, 64), np.float32)
        module.get_function("matrix_mul<16>")((4, 6), (16, 16), (out["matmul"], a, b, 64, 64))
        out["transpose"] = np.zeros((90, 60), np.float32)
        module.get_function("transpose_no_bank_conflicts")((3, 2), (32, 8), (out["transpose"], img, 90, 60))
        out["histogram"] = np.zeros(64, np.uint32)
        module.get_function("histogram64_per_warp")((24,), (128,), (words, out["histogram"], words.size))
        out["sgemm"] = np.zeros((96, 64), np.float32)
        module.get_function("sgemm_float4")((4, 6), (16, 16), (a, b, out["sgemm"], 96, 64, 64))
        out["softmax"] = np.zeros_like(rows)
        module.get_function("softmax_rows")((10,), (128,), (rows, out["softmax"], 40, 100))
        return out

    threads(1)
    serial = run()
    threads(2)
    parallel = run()
    np.testing.assert_allclose(serial["matmul"], a @ b, rtol=1e-5)
    for name in serial:
        np.testing.assert_array_equal(parallel[name], serial[name], err_msg=name)


# ---------------------------------------------------------------------------------------
# The worker threads wait between launches (a pool per module) and end when idle
# ---------------------------------------------------------------------------------------


def pool_threads() -> int:
    """This process's worker threads that wait between launches (runtime.h names them)."""
    count = 0
    for task in os.listdir("/proc/self/task"):
        try:
            count += open(f"/proc/self/task/{task}/comm").read().strip() == "course.cuda"
        except OSError:  # it ended meanwhile
            pass
    return count


def wait_for_pool_threads(wanted: int, seconds: float = 6.0) -> int:
    deadline = time.monotonic() + seconds
    while pool_threads() != wanted and time.monotonic() < deadline:
        time.sleep(0.05)
    return pool_threads()


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads through Linux's /proc")
def test_worker_threads_stay_between_launches_and_end_when_idle(threads):
    assert wait_for_pool_threads(0) == 0, "pool threads of earlier tests did not end"
    source = KERNELS + "\n// a module of its own: its pool starts empty\n"
    fill = cuda.RawKernel(source, "fill", backend="cpu", sanitize=False)
    out = np.zeros(4096, np.float32)
    threads(3)
    for value in range(5):  # later launches reuse the two threads the first one started
        fill((16,), (256,), (out, float(value), out.size))
        assert (out == value).all()
        assert pool_threads() == 2
    threads(2)  # fewer workers: the third thread waits, unused
    fill((16,), (256,), (out, 7.0, out.size))
    assert (out == 7).all() and pool_threads() == 2
    threads(1)
    fill((16,), (256,), (out, 8.0, out.size))
    assert (out == 8).all()
    assert wait_for_pool_threads(0) == 0, "idle worker threads did not end"
    threads(2)  # and a launch after that starts one again
    fill((16,), (256,), (out, 9.0, out.size))
    assert (out == 9).all() and pool_threads() == 1


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_launches_without_the_parents_worker_threads(threads):
    """A DataLoader worker (or multiprocessing) forks the process: the child has none of the
    parent's pool threads; its launches must neither wait for them nor run on one core for good."""
    threads(2)
    out = np.zeros(3000, np.float32)
    kernel("fill")((12,), (256,), (out, 1.0, 3000))  # the parent's pool now has a thread
    pid = os.fork()
    if pid == 0:  # the child: exit 0 only if two launches there give the right answers
        code = 1
        try:
            import signal

            signal.alarm(30)  # a deadlock ends the child, not the test run
            right = True
            for value in (2.0, 3.0):
                kernel("fill")((12,), (256,), (out, value, 3000))
                right = right and bool((out == value).all())
            if os.path.isdir("/proc/self/task"):  # and it starts worker threads of its own
                right = right and pool_threads() == 1
            code = 0 if right else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, f"the child failed: status {status}"
    assert (out == 1.0).all()  # the child's memory is its own
    assert_alive()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_child_forked_while_another_thread_launches_can_launch(threads):
    """Red team 12-07: a fork while another thread of the parent held the launch lock (inside a launch: a
    DataLoader worker forked meanwhile) left the child a lock that nothing would release: its first launch waited
    forever. Here the parent holds the lock itself across the fork."""
    from course.cuda import cpu

    threads(2)
    out = np.zeros(3000, np.float32)
    kernel("fill")((12,), (256,), (out, 1.0, 3000))
    with cpu._launch_lock, cpu._lock:  # (as another thread inside a launch, or loading a module, would hold them)
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                import signal

                signal.alarm(30)  # a deadlock ends the child, not the test run
                kernel("fill")((12,), (256,), (out, 2.0, 3000))
                code = 0 if (out == 2.0).all() else 2
            finally:
                os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, f"the child failed: status {status}"
    assert_alive()


def test_a_block_waiting_for_a_later_block_is_explained_by_the_workers_that_ran(threads):
    """Block 0 waits for a flag the last block sets: on one worker it never ends, and the hint says why
    in terms of this launch (one worker thread), not of the sanitizer, which was off."""
    source = r"""
extern "C" __global__ void wait_for_last(int* flag, int* data) {
    if (blockIdx.x == 0 && threadIdx.x == 0) { while (atomicAdd(flag, 0) == 0) {} data[0] = 7; }
    if (blockIdx.x == gridDim.x - 1 && threadIdx.x == 0) atomicExch(flag, 1);
}"""
    threads(1)
    with pytest.raises(cuda.KernelError, match="time limit") as info:
        cuda.RawKernel(source, "wait_for_last", backend="cpu", sanitize=False, time_limit=1)(
            (2,), (32,), (np.zeros(1, np.int32), np.zeros(1, np.int32)))
    assert "blocks run one at a time here on one worker thread (COURSE_CUDA_THREADS=1)" in str(info.value)


@pytest.mark.parametrize("body", [r'printf("%d\n", k++);', "int* p = (int*)malloc(16); free(p);"])
def test_a_time_limit_met_inside_printf_or_malloc_names_the_kernels_line(body, capsys):
    """The stop waits until printf or malloc is done (a thread must not stop inside them), and then names
    the line that called them (it named none)."""
    source = r"""
extern "C" __global__ void spin(int* out) {
    int k = 0;
    while (out[0] == 0) { BODY }
}""".replace("BODY", body)
    for sanitize in (False, True):
        with pytest.raises(cuda.KernelError, match="time limit") as info:
            cuda.RawKernel(source, "spin", backend="cpu", sanitize=sanitize, time_limit=0.5)((1,), (1,), (np.zeros(1, np.int32),))
        assert info.value.line == 4
    capsys.readouterr()
