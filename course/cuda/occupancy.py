"""Theoretical occupancy of a launch on a named GPU, by NVIDIA's rules (notebook 03).

Occupancy is the share of an SM's warp slots that a launch can keep resident at once. Four
resources limit how many blocks fit on one SM: warp slots, the block-slot count, registers
(allocated per warp, in units of 256, in each of the SM's four sub-partitions) and shared
memory (allocated per block, rounded up to the allocation unit, plus 1 KiB the system reserves
per block on sm_80 and newer). The smallest limit wins. These are the rules of NVIDIA's
occupancy calculator (``cuda_occupancy.h``, the *CUDA Occupancy Calculator* in Nsight
Compute), with the shared-memory carve-out the driver picks by default (as much as the SM has).

It is *theoretical* occupancy: what fits, not what a running kernel achieves (Nsight Compute's
"achieved occupancy" also depends on how long blocks live and on the tail of the grid).
"""

from __future__ import annotations

import dataclasses
import math

WARP_SIZE = 32


@dataclasses.dataclass(frozen=True)
class GPU:
    """The per-SM limits of one GPU that occupancy depends on (from NVIDIA's tables)."""

    name: str
    compute_capability: tuple[int, int]
    sms: int
    max_threads_per_sm: int
    max_blocks_per_sm: int
    registers_per_sm: int = 65536
    registers_per_block: int = 65536
    max_registers_per_thread: int = 255
    register_unit: int = 256          # registers are given to a warp in units of this many
    sub_partitions: int = 4           # an SM's register file is split in four
    shared_per_sm: int = 65536        # bytes, the largest carve-out
    shared_per_block: int = 49152     # bytes a block may use (with the opt-in attribute)
    shared_reserved_per_block: int = 0
    shared_unit: int = 256            # bytes: a block's shared memory is rounded up to this

    @property
    def max_warps_per_sm(self) -> int:
        return self.max_threads_per_sm // WARP_SIZE


#: The GPUs the course names. Figures from NVIDIA's CUDA C++ Programming Guide (compute
#: capability tables) and each GPU's whitepaper/datasheet.
GPUS = {
    "T4": GPU("NVIDIA T4", (7, 5), sms=40, max_threads_per_sm=1024, max_blocks_per_sm=16,
              shared_per_sm=65536, shared_per_block=65536, shared_unit=256),
    "A100": GPU("NVIDIA A100", (8, 0), sms=108, max_threads_per_sm=2048, max_blocks_per_sm=32,
                shared_per_sm=167936, shared_per_block=166912, shared_reserved_per_block=1024,
                shared_unit=128),
    "H100": GPU("NVIDIA H100 SXM", (9, 0), sms=132, max_threads_per_sm=2048, max_blocks_per_sm=32,
                shared_per_sm=233472, shared_per_block=232448, shared_reserved_per_block=1024,
                shared_unit=128),
    "H200": GPU("NVIDIA H200", (9, 0), sms=132, max_threads_per_sm=2048, max_blocks_per_sm=32,
                shared_per_sm=233472, shared_per_block=232448, shared_reserved_per_block=1024,
                shared_unit=128),
}

#: Registers per thread assumed when the caller does not say (a typical small kernel; nvcc's
#: ``-Xptxas -v`` or Nsight Compute's "Registers Per Thread" gives the real figure).
DEFAULT_REGISTERS = 32


def gpu(name: str | GPU) -> GPU:
    """The ``GPU`` called ``name`` ("T4", "A100", "H100", "H200"; case does not matter)."""
    if isinstance(name, GPU):
        return name
    key = str(name).strip().upper().removeprefix("NVIDIA ").split()[0] if str(name).strip() else ""
    if key not in GPUS:
        raise ValueError(f"unknown GPU {name!r}: use one of {', '.join(GPUS)} "
                         "(or build a course.cuda.occupancy.GPU with its limits)")
    return GPUS[key]


def _round_up(value: int, unit: int) -> int:
    return -(-value // unit) * unit


@dataclasses.dataclass(frozen=True)
class Occupancy:
    """How many blocks of a launch fit on one SM, what limits them, and the occupancy."""

    gpu: str
    threads_per_block: int
    registers_per_thread: int
    shared_bytes_per_block: int
    warps_per_block: int
    blocks_per_sm: int
    limits: dict            # resource -> blocks per SM it alone allows
    limited_by: tuple       # the resources whose limit is the smallest

    @property
    def active_warps(self) -> int:
        return self.blocks_per_sm * self.warps_per_block

    @property
    def occupancy(self) -> float:
        """Resident warps over the SM's warp slots, 0 to 1."""
        return self.active_warps / gpu(self.gpu).max_warps_per_sm

    def __str__(self) -> str:
        return (f"{self.gpu}: {self.blocks_per_sm} blocks of {self.threads_per_block} threads per SM = "
                f"{self.active_warps} of {gpu(self.gpu).max_warps_per_sm} warps, occupancy "
                f"{self.occupancy:.0%} (limited by {', '.join(self.limited_by)})")

    def to_dict(self) -> dict:
        out = dataclasses.asdict(self)
        out.update(active_warps=self.active_warps, occupancy=self.occupancy, limited_by=list(self.limited_by))
        return out


def occupancy(threads_per_block: int, *, gpu_name: str | GPU = "T4", registers_per_thread: int = DEFAULT_REGISTERS,
              shared_bytes: int = 0) -> Occupancy:
    """Theoretical occupancy of blocks of ``threads_per_block`` threads on ``gpu_name``.

    ``shared_bytes`` is the block's shared memory (static + dynamic). A launch that cannot run at
    all (too many threads, registers or bytes) is a ``ValueError`` that says which limit it breaks.
    """
    g = gpu(gpu_name)
    for what, value in (("threads_per_block", threads_per_block), ("registers_per_thread", registers_per_thread),
                        ("shared_bytes", shared_bytes)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ValueError(f"{what} must be a whole number >= 0, got {value!r}")
    if not 1 <= threads_per_block <= 1024:
        raise ValueError(f"a block has 1 to 1024 threads on every current GPU, got {threads_per_block}")
    if registers_per_thread > g.max_registers_per_thread:
        raise ValueError(f"{g.name} gives a thread at most {g.max_registers_per_thread} registers, "
                         f"asked for {registers_per_thread}")
    warps = math.ceil(threads_per_block / WARP_SIZE)

    by_warps = g.max_warps_per_sm // warps
    by_blocks = g.max_blocks_per_sm

    registers_per_warp = _round_up(max(registers_per_thread, 1) * WARP_SIZE, g.register_unit)
    # the hardware checks a block's registers as if its warps were spread over all sub-partitions
    if registers_per_warp * _round_up(warps, g.sub_partitions) > g.registers_per_block:
        raise ValueError(f"{threads_per_block} threads × {registers_per_thread} registers do not fit the "
                         f"{g.registers_per_block} registers a block may have on {g.name}: use fewer "
                         "threads per block or fewer registers (__launch_bounds__, -maxrregcount)")
    warps_per_sub_partition = (g.registers_per_sm // g.sub_partitions) // registers_per_warp
    by_registers = warps_per_sub_partition * g.sub_partitions // warps

    shared_allocated = _round_up(shared_bytes + g.shared_reserved_per_block, g.shared_unit) if shared_bytes or \
        g.shared_reserved_per_block else 0
    if shared_bytes > g.shared_per_block:
        raise ValueError(f"{shared_bytes} bytes of shared memory per block: {g.name} allows at most "
                         f"{g.shared_per_block} bytes per block")
    by_shared = g.shared_per_sm // shared_allocated if shared_allocated else g.max_blocks_per_sm

    limits = {"warps": by_warps, "blocks": by_blocks, "registers": by_registers, "shared memory": by_shared}
    blocks = min(limits.values())
    return Occupancy(gpu=next(k for k, v in GPUS.items() if v == g) if g in GPUS.values() else g.name,
                     threads_per_block=threads_per_block, registers_per_thread=registers_per_thread,
                     shared_bytes_per_block=shared_bytes, warps_per_block=warps, blocks_per_sm=blocks,
                     limits=limits, limited_by=tuple(k for k, v in limits.items() if v == blocks))
