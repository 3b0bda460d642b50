"""The memory-transaction model on cases with known answers (NVIDIA's documented rules)."""

import numpy as np
import pytest

from course.cuda import transactions as tx
from course.cuda.occupancy import occupancy


def warp_trace(addresses, *, kind=tx.GLOBAL_LOAD, size=4, line=10, warps=1, lanes=32):
    """One request per warp: lane i of warp w touches addresses(w, i)."""
    rows = [(line, kind, 0, w, 0, lane, addresses(w, lane), size, 0) for w in range(warps) for lane in range(lanes)]
    return np.array(rows, dtype=tx.ACCESS)


def only(stats):
    assert len(stats) == 1, stats
    return stats[0]


@pytest.mark.parametrize("stride, expected", [(1, 4), (2, 8), (4, 16), (8, 32), (32, 32), (1000, 32)])
def test_float_loads_by_stride(stride, expected):
    s = only(tx.analyse_accesses(warp_trace(lambda w, i: 4096 + 4 * stride * i)))
    assert s.requests == 1 and s.sectors_per_request == expected and s.ideal_sectors_per_request == 4


def test_double_unit_stride_and_float4():
    assert only(tx.analyse_accesses(warp_trace(lambda w, i: 8 * i, size=8))).sectors_per_request == 8
    assert only(tx.analyse_accesses(warp_trace(lambda w, i: 16 * i, size=16))).sectors_per_request == 16


def test_broadcast_read_is_one_sector():
    s = only(tx.analyse_accesses(warp_trace(lambda w, i: 256)))
    assert s.sectors_per_request == 1 and s.ideal_sectors_per_request == 1


def test_misaligned_unit_stride_costs_one_more_sector():
    assert only(tx.analyse_accesses(warp_trace(lambda w, i: 4 + 4 * i))).sectors_per_request == 5


def test_naive_transpose_writes_32_sectors_per_request():
    n = 64  # out[x * n + y] with x = lane: every lane writes its own row
    s = only(tx.analyse_accesses(warp_trace(lambda w, i: 4 * (i * n + w), kind=tx.GLOBAL_STORE, warps=4)))
    assert s.requests == 4 and s.sectors_per_request == 32


def test_shared_tile_column_read_conflicts_and_padding_fixes_it():
    column = only(tx.analyse_accesses(warp_trace(lambda w, i: 4 * (i * 32 + 5), kind=tx.SHARED_LOAD)))
    assert column.wavefronts == 32 and column.bank_conflicts == 31 and column.conflict_ways == 32
    padded = only(tx.analyse_accesses(warp_trace(lambda w, i: 4 * (i * 33 + 5), kind=tx.SHARED_LOAD)))
    assert padded.wavefronts == 1 and padded.bank_conflicts == 0
    row = only(tx.analyse_accesses(warp_trace(lambda w, i: 4 * (5 * 32 + i), kind=tx.SHARED_LOAD)))
    assert row.bank_conflicts == 0


def test_shared_broadcast_and_two_way_conflict():
    assert only(tx.analyse_accesses(warp_trace(lambda w, i: 0, kind=tx.SHARED_LOAD))).bank_conflicts == 0
    two_way = only(tx.analyse_accesses(warp_trace(lambda w, i: 8 * i, kind=tx.SHARED_STORE)))
    assert two_way.wavefronts == 2 and two_way.bank_conflicts == 1
    doubles = only(tx.analyse_accesses(warp_trace(lambda w, i: 8 * i, kind=tx.SHARED_LOAD, size=8)))
    assert doubles.wavefronts == 2 and doubles.bank_conflicts == 0  # 64-bit words need two passes anyway


def test_requests_group_by_line_kind_warp_and_instance():
    a = warp_trace(lambda w, i: 4 * i, warps=2)
    b = warp_trace(lambda w, i: 4 * i, kind=tx.GLOBAL_STORE, line=11)
    again = a.copy()
    again["instance"] = 1
    stats = {(s.line, s.kind): s for s in tx.analyse_accesses(np.concatenate([a, b, again]))}
    assert stats[(10, "global load")].requests == 4 and stats[(11, "global store")].requests == 1
    totals = tx.counters(list(stats.values()))
    assert totals["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] == 4
    assert totals["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == 16
    assert totals["sectors per request (global loads)"] == 4


def test_partial_warp_ideal_counts_only_active_lanes():
    s = only(tx.analyse_accesses(warp_trace(lambda w, i: 4 * i, lanes=8)))
    assert s.accesses == 8 and s.sectors == 1 and s.ideal_sectors == 1


def branch_trace(taken, warps=4):
    rows = [(20, 0, w, 0, lane, taken(w * 32 + lane)) for w in range(warps) for lane in range(32)]
    return np.array(rows, dtype=tx.BRANCH)


def test_divergence_by_lane_and_by_warp():
    by_lane = tx.analyse_branches(branch_trace(lambda t: t % 2 == 0))[0]
    assert by_lane.divergent_fraction == 1.0 and by_lane.warp_executions == 4
    by_warp = tx.analyse_branches(branch_trace(lambda t: (t // 32) % 2 == 0))[0]
    assert by_warp.divergent == 0


# Theoretical occupancy, worked out by hand with the rules of NVIDIA's occupancy calculator
# (cuda_occupancy.h: warps, block slots, registers per sub-partition, shared memory + reserve):
@pytest.mark.parametrize("gpu, threads, regs, smem, blocks, percent", [
    ("A100", 256, 32, 0, 8, 100.0),        # warps and registers both allow 8 blocks
    ("T4", 1024, 64, 0, 1, 100.0),
    ("H100", 128, 128, 0, 4, 25.0),        # 128 registers: 16 warps fit the register file
    ("T4", 96, 40, 0, 10, 93.75),          # 3 warps a block: 10 blocks use 30 of 32 slots
    ("A100", 128, 32, 48 * 1024, 3, 18.75),  # 48 KiB + 1 KiB reserved per block: 3 fit in 164 KiB
    ("H200", 256, 64, 16 * 1024, 4, 50.0),
    ("H100", 32, 16, 0, 32, 50.0),         # one-warp blocks: the 32-block limit binds
])
def test_occupancy_matches_the_calculator(gpu, threads, regs, smem, blocks, percent):
    occ = occupancy(threads, gpu_name=gpu, registers_per_thread=regs, shared_bytes=smem)
    assert occ.blocks_per_sm == blocks and occ.occupancy * 100 == pytest.approx(percent)


def test_occupancy_rejects_launches_that_cannot_run():
    with pytest.raises(ValueError, match="at most 255"):
        occupancy(128, gpu_name="T4", registers_per_thread=300)
    with pytest.raises(ValueError, match="registers a block may have"):
        occupancy(1024, gpu_name="A100", registers_per_thread=128)
    with pytest.raises(ValueError, match="unknown GPU"):
        occupancy(128, gpu_name="V100x")
    with pytest.raises(ValueError, match="at most"):
        occupancy(128, gpu_name="T4", shared_bytes=100_000)


def test_profile_totals_table_and_picture():
    import matplotlib

    matplotlib.use("Agg")
    from course.cuda.profile import Profile

    n = 64  # one warp reads a row (coalesced), writes a column (strided), and reads shared by column
    rows = [(3, tx.GLOBAL_LOAD, 0, 0, 0, i, 4 * i, 4, 0) for i in range(32)]
    rows += [(4, tx.GLOBAL_STORE, 0, 0, 0, i, 10_000 + 4 * n * i, 4, 1) for i in range(32)]
    rows += [(5, tx.SHARED_LOAD, 0, 0, 0, i, 4 * 32 * i, 4, 0) for i in range(32)]
    branches = np.array([(6, 0, 0, 0, i, i % 2 == 0) for i in range(32)], dtype=tx.BRANCH)
    p = Profile("demo", (1, 1, 1), (32, 1, 1), 4096, np.array(rows, dtype=tx.ACCESS), branches,
                arguments=("a", "out"), source_lines={3: "x = a[i];"}, flops=64)
    d = p.to_dict()
    assert d["counters"]["sectors per request (global loads)"] == 4
    assert d["counters"]["sectors per request (global stores)"] == 32
    assert d["counters"]["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] == 31
    assert d["branches"][0]["divergent_fraction"] == 1.0
    assert p.bytes_requested == 3 * 32 * 4 and p.unique_bytes == 2 * 32 * 4
    assert p.dram_bytes_model == (4 + 32) * 32 and p.arithmetic_intensity == 64 / ((4 + 32) * 32)
    assert p.argument_index("out") == 1 and "not a measurement" in d["model"]
    assert p.occupancy("T4").blocks_per_sm == 16  # 64 KiB / 4 KiB of shared memory = 16 = the block-slot limit
    table = p.table()
    assert len(table) == 4
    assert "4 sector(s)" in p.plot_warp(3).get_title()
    assert "31 bank conflict" in p.plot_warp(5).get_title()
    with pytest.raises(ValueError, match="no access at line 9"):
        p.warp_accesses(9)
    with pytest.raises(KeyError, match="no parameter"):
        p.argument_index("b")
