"""What an NVIDIA GPU's memory system would do with a kernel's accesses: a model (notebook 03).

The CPU backend sees every address every thread touches. This module turns those accesses into
the quantities Nsight Compute reports, by the documented rules of the L1/shared-memory unit:

- a *request* is one load/store instruction executed by the active lanes of one warp;
- global memory moves 32-byte *sectors*: a request costs the number of distinct sectors its
  lanes touch (4 for 32 lanes reading consecutive floats, 32 when every lane hits its own
  sector); the ideal is the bytes the lanes ask for, in whole sectors;
- shared memory has 32 banks of 4 bytes: lanes reading different 4-byte words of one bank are
  served one after another (a *bank conflict*: extra *wavefronts*); lanes reading the same word
  share it (a broadcast, no conflict);
- a branch *diverges* in a warp when some of its active lanes take it and others do not.

It is a model of memory transactions, not a measurement: it leaves out the L2 and DRAM caches,
timing, and the hardware's replays for atomics and misaligned accesses. The trace it reads is a
NumPy structured array of ``ACCESS`` records (one per thread per access) and, for branches, of
``BRANCH`` records; ``course.cuda``'s CPU backend produces them.
"""

from __future__ import annotations

import dataclasses

import numpy as np

SECTOR_BYTES = 32
BANKS = 32
BANK_BYTES = 4
WARP_SIZE = 32

#: The kinds of access, with Nsight Compute's names for their request/sector counters.
KINDS = ("global load", "global store", "shared load", "shared store", "global atomic", "shared atomic")
GLOBAL_LOAD, GLOBAL_STORE, SHARED_LOAD, SHARED_STORE, GLOBAL_ATOMIC, SHARED_ATOMIC = range(len(KINDS))
SHARED_KINDS = (SHARED_LOAD, SHARED_STORE, SHARED_ATOMIC)

#: One thread's access: which source line, what kind, which warp (block, warp in block), which
#: dynamic execution of that line by that lane (``instance``: the n-th time the lane ran it),
#: the lane, the byte address (global: unique across the launch's arrays; shared: offset in the
#: block's shared memory), the access width in bytes, and which array it touched (the index of
#: the kernel's argument for global memory, of the ``__shared__`` array for shared memory).
ACCESS = np.dtype([("line", np.int32), ("kind", np.uint8), ("block", np.int64), ("warp", np.int32),
                   ("instance", np.int64), ("lane", np.int8), ("address", np.uint64), ("size", np.uint8),
                   ("array", np.int16)])
#: One lane's outcome at a branch (``taken`` true or false) in one dynamic execution.
BRANCH = np.dtype([("line", np.int32), ("block", np.int64), ("warp", np.int32), ("instance", np.int64),
                   ("lane", np.int8), ("taken", np.bool_)])

_NCU = {
    GLOBAL_LOAD: ("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"),
    GLOBAL_STORE: ("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"),
    GLOBAL_ATOMIC: ("l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum",
                    "l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum"),
    SHARED_LOAD: ("smsp__inst_executed_op_shared_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"),
    SHARED_STORE: ("smsp__inst_executed_op_shared_st.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"),
    SHARED_ATOMIC: ("smsp__inst_executed_op_shared_atom.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum"),
}
_NCU_CONFLICTS = {SHARED_LOAD: "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
                  SHARED_STORE: "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
                  SHARED_ATOMIC: "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_atom.sum"}


@dataclasses.dataclass
class LineStats:
    """The modelled traffic of one source line and one kind of access."""

    line: int
    kind: str
    requests: int          # warp-level instructions
    accesses: int          # thread-level accesses (lanes × requests)
    bytes_requested: int
    sectors: int = 0       # global: 32-byte sectors moved
    ideal_sectors: int = 0
    wavefronts: int = 0    # shared: passes through the banks
    ideal_wavefronts: int = 0

    @property
    def sectors_per_request(self) -> float:
        return self.sectors / self.requests if self.requests else 0.0

    @property
    def ideal_sectors_per_request(self) -> float:
        return self.ideal_sectors / self.requests if self.requests else 0.0

    @property
    def bank_conflicts(self) -> int:
        """Extra wavefronts beyond the ideal (Nsight Compute's bank-conflict count)."""
        return self.wavefronts - self.ideal_wavefronts

    @property
    def conflict_ways(self) -> float:
        """Average wavefronts per request over the ideal: 1 = conflict-free, 32 = 32-way."""
        return self.wavefronts / self.ideal_wavefronts if self.ideal_wavefronts else 0.0

    def to_dict(self) -> dict:
        out = dataclasses.asdict(self)
        out.update(sectors_per_request=self.sectors_per_request,
                   ideal_sectors_per_request=self.ideal_sectors_per_request,
                   bank_conflicts=self.bank_conflicts)
        return out


def _requests(acc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sort accesses into warp-level requests; returns (sorted accesses, start index of each request)."""
    if not len(acc):
        return acc, np.zeros(0, np.int64)
    fields = [acc["line"].astype(np.int64) * len(KINDS) + acc["kind"], acc["block"], acc["warp"].astype(np.int64),
              acc["instance"]]
    spans = [int(f.max()) + 1 for f in fields]
    if all(int(f.min()) >= 0 for f in fields) and np.prod([float(s) for s in spans]) < 2.0 ** 62:
        key = fields[0]
        for f, span in zip(fields[1:], spans[1:]):
            key = key * span + f      # one int64 per access: sorting it is several times faster
        order = np.argsort(key, kind="stable")
        key = key[order]
        starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    else:
        order = np.lexsort(fields[::-1])
        stacked = np.stack([f[order] for f in fields], axis=1)
        starts = np.flatnonzero(np.r_[True, np.any(stacked[1:] != stacked[:-1], axis=1)])
    return acc[order], starts


def _units(acc: np.ndarray, unit: int) -> tuple[np.ndarray, np.ndarray]:
    """Every ``unit``-byte unit each access touches: (index of the access, unit number)."""
    first = acc["address"] // unit
    last = (acc["address"] + np.maximum(acc["size"], 1).astype(np.uint64) - 1) // unit
    count = (last - first + 1).astype(np.int64)
    owner = np.repeat(np.arange(len(acc)), count)
    offset = np.arange(count.sum()) - np.repeat(np.cumsum(count) - count, count)
    return owner, np.repeat(first, count) + offset.astype(np.uint64)


def _distinct_pairs(a: np.ndarray, b: np.ndarray, weights: np.ndarray | None = None):
    """The distinct (a, b) pairs, sorted (faster than ``np.unique(axis=0)`` on millions of rows).

    With ``weights``, also returns the weight of the first row of each distinct pair.
    """
    if not len(a):
        order = np.zeros(0, np.int64)
    elif (int(a.max()) + 1) * (int(b.max()) + 1) < 2**62:
        order = np.argsort(a.astype(np.int64) * (int(b.max()) + 1) + b.astype(np.int64))
    else:
        order = np.lexsort((b, a))
    a, b = a[order], b[order]
    keep = np.r_[True, (a[1:] != a[:-1]) | (b[1:] != b[:-1])] if len(a) else np.zeros(0, bool)
    if weights is None:
        return a[keep], b[keep]
    return a[keep], b[keep], weights[order][keep]


def _distinct_per_request(request_of: np.ndarray, values: np.ndarray, n_requests: int) -> np.ndarray:
    """How many distinct ``values`` each request touches."""
    req, _ = _distinct_pairs(request_of.astype(np.int64), values.astype(np.uint64))
    return np.bincount(req, minlength=n_requests)


def analyse_accesses(accesses: np.ndarray) -> list[LineStats]:
    """Per (line, kind): requests, sectors (global) or wavefronts (shared), and their ideals."""
    accesses = np.asarray(accesses, dtype=ACCESS)
    acc, starts = _requests(accesses)
    n_req = len(starts)
    request_of = np.repeat(np.arange(n_req), np.diff(np.r_[starts, len(acc)]))
    req_line, req_kind = acc["line"][starts], acc["kind"][starts]
    bytes_per_req = np.bincount(request_of, weights=acc["size"].astype(np.float64), minlength=n_req)

    sectors = np.zeros(n_req, np.int64)
    ideal_sectors = np.zeros(n_req, np.int64)
    wavefronts = np.zeros(n_req, np.int64)
    ideal_wavefronts = np.zeros(n_req, np.int64)

    is_global = np.isin(acc["kind"], (GLOBAL_LOAD, GLOBAL_STORE, GLOBAL_ATOMIC))
    if is_global.any():
        owner, sector = _units(acc[is_global], SECTOR_BYTES)
        g_req = request_of[is_global][owner]
        sectors += _distinct_per_request(g_req, sector, n_req)
        # ideal: the bytes the lanes ask for (each distinct address once), packed into whole sectors
        g = acc[is_global]
        req, _, size = _distinct_pairs(request_of[is_global].astype(np.int64), g["address"],
                                       np.maximum(g["size"], 1).astype(np.float64))
        distinct_bytes = np.bincount(req, weights=size, minlength=n_req).astype(np.int64)
        ideal_sectors += np.where(np.isin(req_kind, (GLOBAL_LOAD, GLOBAL_STORE, GLOBAL_ATOMIC)),
                                  -(-distinct_bytes // SECTOR_BYTES), 0)

    is_shared = np.isin(acc["kind"], SHARED_KINDS)
    if is_shared.any():
        owner, word = _units(acc[is_shared], BANK_BYTES)
        s_req = request_of[is_shared][owner]
        # distinct words per (request, bank); the busiest bank sets the wavefronts
        req, word = _distinct_pairs(s_req.astype(np.int64), word.astype(np.uint64))
        req_bank = req * BANKS + (word % BANKS).astype(np.int64)
        bank_ids, counts = np.unique(req_bank, return_counts=True)
        worst = np.zeros(n_req, np.int64)
        np.maximum.at(worst, bank_ids // BANKS, counts)
        wavefronts += worst
        distinct_words = np.bincount(req, minlength=n_req)
        ideal_wavefronts += np.where(np.isin(req_kind, SHARED_KINDS),
                                     np.maximum(1, -(-distinct_words // BANKS)), 0)

    stats = []
    group = np.stack([req_line.astype(np.int64), req_kind.astype(np.int64)], axis=1) if n_req else np.zeros((0, 2), int)
    keys, inverse = np.unique(group, axis=0, return_inverse=True) if n_req else (group, np.zeros(0, int))
    inverse = np.asarray(inverse).reshape(-1)
    lanes_per_req = np.diff(np.r_[starts, len(acc)])
    for k, (line, kind) in enumerate(keys):
        sel = inverse == k
        stats.append(LineStats(line=int(line), kind=KINDS[int(kind)], requests=int(sel.sum()),
                               accesses=int(lanes_per_req[sel].sum()), bytes_requested=int(bytes_per_req[sel].sum()),
                               sectors=int(sectors[sel].sum()), ideal_sectors=int(ideal_sectors[sel].sum()),
                               wavefronts=int(wavefronts[sel].sum()),
                               ideal_wavefronts=int(ideal_wavefronts[sel].sum())))
    return stats


@dataclasses.dataclass
class BranchStats:
    """How often the warps that reached a branch split over it."""

    line: int
    warp_executions: int   # (warp, dynamic instance) pairs that evaluated the branch
    divergent: int         # of those, how many had lanes going both ways

    @property
    def divergent_fraction(self) -> float:
        return self.divergent / self.warp_executions if self.warp_executions else 0.0

    def to_dict(self) -> dict:
        return {**dataclasses.asdict(self), "divergent_fraction": self.divergent_fraction}


def analyse_branches(branches: np.ndarray) -> list[BranchStats]:
    """Per branch line: warp executions and how many of them diverged."""
    br = np.asarray(branches, dtype=BRANCH)
    if not len(br):
        return []
    key = np.stack([br["line"].astype(np.int64), br["block"], br["warp"].astype(np.int64), br["instance"]], axis=1)
    keys, inverse = np.unique(key, axis=0, return_inverse=True)
    inverse = np.asarray(inverse).reshape(-1)
    taken = np.bincount(inverse, weights=br["taken"].astype(np.float64), minlength=len(keys))
    total = np.bincount(inverse, minlength=len(keys))
    split = (taken > 0) & (taken < total)
    out = []
    for line in np.unique(keys[:, 0]):
        sel = keys[:, 0] == line
        out.append(BranchStats(line=int(line), warp_executions=int(sel.sum()), divergent=int(split[sel].sum())))
    return out


def counters(stats: list[LineStats]) -> dict:
    """Totals under Nsight Compute's counter names (requests, sectors, wavefronts, conflicts)."""
    out: dict[str, float] = {}
    for s in stats:
        kind = KINDS.index(s.kind)
        requests_name, volume_name = _NCU[kind]
        out[requests_name] = out.get(requests_name, 0) + s.requests
        out[volume_name] = out.get(volume_name, 0) + (s.sectors if kind in (GLOBAL_LOAD, GLOBAL_STORE, GLOBAL_ATOMIC)
                                                      else s.wavefronts)
        if kind in _NCU_CONFLICTS:
            out[_NCU_CONFLICTS[kind]] = out.get(_NCU_CONFLICTS[kind], 0) + s.bank_conflicts
    for op in ("ld", "st"):
        req = out.get(f"l1tex__t_requests_pipe_lsu_mem_global_op_{op}.sum", 0)
        if req:
            out[f"sectors per request (global {'loads' if op == 'ld' else 'stores'})"] = \
                out[f"l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum"] / req
    return out
