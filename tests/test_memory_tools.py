"""course.memory_tools: the snapshot's timeline from a made-up snapshot, the CPU timeline from the profiler."""

import pytest
import torch

from course import memory_tools


def test_snapshot_timeline_adds_allocations_and_frees():
    snapshot = {"device_traces": [[
        {"action": "alloc", "size": 100, "time_us": 1000},
        {"action": "segment_alloc", "size": 2**21, "time_us": 1001},  # the cache's segments are not tensors
        {"action": "alloc", "size": 50, "time_us": 1500},
        {"action": "free_requested", "size": 100, "time_us": 1800},
        {"action": "free_completed", "size": 100, "time_us": 2000},
    ]]}
    times, held = memory_tools.snapshot_timeline(snapshot)
    assert held == [100, 150, 50]
    assert times == pytest.approx([0.0, 0.0005, 0.001])
    with pytest.raises(ValueError, match="device 1"):
        memory_tools.snapshot_timeline(snapshot, device_index=1)
    assert memory_tools.snapshot_timeline({"device_traces": [[]]}) == ([], [])


def test_profiler_timeline_sees_a_tensor_come_and_go():
    def work():
        big = torch.ones(2**20)  # 4 MiB
        return float(big.sum())

    result, times, held = memory_tools.profiler_timeline(work)
    assert result == 2**20
    assert max(held) >= 4 * 2**20 and held[-1] < max(held)
    assert times == sorted(times)


@pytest.mark.skipif(torch.cuda.is_available(), reason="the CPU's error")
def test_record_memory_history_needs_a_gpu():
    with pytest.raises(RuntimeError, match="profiler_timeline"):
        with memory_tools.record_memory_history("cpu"):
            pass


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (run by make gpu-check)")
def test_the_snapshot_on_a_gpu(tmp_path):
    with memory_tools.record_memory_history("cuda"):
        x = torch.ones(2**20, device="cuda")
        del x
        snapshot = torch.cuda.memory._snapshot()
    times, held = memory_tools.snapshot_timeline(snapshot, torch.cuda.current_device())
    assert max(held) >= 4 * 2**20
    paths = memory_tools.save_snapshot(snapshot, tmp_path)
    assert paths["pickle"].stat().st_size > 0 and paths["html"].stat().st_size > 0
