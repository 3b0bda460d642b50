"""An access profile of one launch: what the memory system would do, per source line (notebook 03).

``Profile`` holds the trace of one launch on the CPU backend (every access of every thread, every
branch outcome) and reads it with ``course.cuda.transactions``: per line, the warp-level requests,
32-byte sectors per request against the ideal, shared-memory bank conflicts, branch divergence;
totals under Nsight Compute's counter names; bytes requested against unique bytes touched;
arithmetic intensity; and the theoretical occupancy of the launch on a named GPU.

It is a model of memory transactions, not a measurement: no L2/DRAM caches beyond the L1
sectors, no timing. Numbers are exact for the model; a GPU's profiler measures the real thing.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from . import occupancy as occ
from . import transactions as tx

LIMITS = ("a model of memory transactions, not a measurement: it counts the 32-byte sectors and "
          "shared-memory wavefronts that NVIDIA's documented rules give for every warp-level access; "
          "it leaves out the L2 and DRAM caches (a sector counted twice may be an L2 hit), timing, "
          "instruction replays for atomics, and the order in which warps really run.")


class Table(list):
    """Rows (dicts) that show as an HTML table in a notebook and as aligned text elsewhere."""

    def __init__(self, rows, title: str = ""):
        super().__init__(rows)
        self.title = title
        self.columns = list(dict.fromkeys(k for row in rows for k in row))

    @property
    def rows(self) -> list[dict]:
        return list(self)

    @staticmethod
    def _cell(value) -> str:
        return "" if value is None else f"{value:g}" if isinstance(value, float) else str(value)

    def _repr_html_(self) -> str:
        import html

        head = "".join(f"<th>{html.escape(c)}</th>" for c in self.columns)
        body = "".join("<tr>" + "".join(f"<td style='text-align:left'><code>{html.escape(self._cell(r.get(c)))}</code></td>"
                                         if c == "source" else f"<td>{html.escape(self._cell(r.get(c)))}</td>"
                                         for c in self.columns) + "</tr>" for r in self)
        caption = f"<caption>{html.escape(self.title)}</caption>" if self.title else ""
        return f"<table>{caption}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"

    def __repr__(self) -> str:
        cells = [[self._cell(r.get(c)) for c in self.columns] for r in self]
        widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(self.columns)]
        lines = [self.title] if self.title else []
        lines.append("  ".join(c.ljust(w) for c, w in zip(self.columns, widths)).rstrip())
        lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip() for row in cells]
        return "\n".join(lines)

    def _repr_pretty_(self, printer, cycle):
        printer.text(repr(self))

    def to_pandas(self):
        """A pandas DataFrame indexed by line (pandas is not a dependency of the course)."""
        import pandas

        return pandas.DataFrame(list(self)).set_index("line")


@dataclasses.dataclass
class Profile:
    """The modelled memory behaviour of one launch (see the module's docstring)."""

    kernel: str
    grid: tuple
    block: tuple
    shared_bytes: int
    trace: np.ndarray                  # ACCESS records
    branches: np.ndarray               # BRANCH records
    arguments: tuple = ()              # the kernel's parameter names, in order
    source_lines: dict = dataclasses.field(default_factory=dict)   # line -> its text
    flops: int | None = None           # floating-point operations, when the caller knows them
    bases: dict = dataclasses.field(default_factory=dict)          # argument index -> its first byte's address

    def __post_init__(self):
        self.trace = np.asarray(self.trace, dtype=tx.ACCESS)
        self.branches = np.asarray(self.branches, dtype=tx.BRANCH)
        self.lines = tx.analyse_accesses(self.trace)
        self.divergence = tx.analyse_branches(self.branches)

    def argument_index(self, name: str) -> int:
        """The position of parameter ``name`` (the ``array`` field of its global accesses)."""
        if name not in self.arguments:
            raise KeyError(f"kernel '{self.kernel}' has no parameter {name!r} (it has {', '.join(self.arguments)})")
        return self.arguments.index(name)

    def element_accesses(self, name: str, itemsize: int) -> np.ndarray:
        """The global accesses of argument ``name`` with an ``element`` index: (thread, element, kind) rows.

        ``thread`` is the thread's global linear index (block × threads per block + thread in block).
        """
        index = self.argument_index(name)
        t = self.trace[(self.trace["array"] == index)
                       & np.isin(self.trace["kind"], (tx.GLOBAL_LOAD, tx.GLOBAL_STORE, tx.GLOBAL_ATOMIC))]
        threads_per_block = int(np.prod(self.block))
        out = np.zeros(len(t), dtype=[("thread", np.int64), ("element", np.int64), ("kind", np.uint8)])
        out["thread"] = t["block"] * threads_per_block + t["warp"].astype(np.int64) * tx.WARP_SIZE + t["lane"]
        out["element"] = (t["address"].astype(np.int64) - int(self.bases.get(index, 0))) // itemsize
        out["kind"] = t["kind"]
        return out

    # ----------------------------------------------------------------- totals

    @property
    def bytes_requested(self) -> int:
        """Bytes the threads asked for (every access counted)."""
        return int(self.trace["size"].astype(np.int64).sum())

    @property
    def unique_bytes(self) -> int:
        """Distinct global bytes touched: what a perfect cache would move from DRAM."""
        g = self.trace[np.isin(self.trace["kind"], (tx.GLOBAL_LOAD, tx.GLOBAL_STORE, tx.GLOBAL_ATOMIC))]
        if not len(g):
            return 0
        starts = np.unique(np.stack([g["address"], g["size"].astype(np.uint64)], axis=1), axis=0)
        # merge overlapping [start, start + size) ranges
        order = np.argsort(starts[:, 0])
        lo, size = starts[order, 0].astype(np.int64), starts[order, 1].astype(np.int64)
        hi = lo + size
        reach = np.maximum.accumulate(hi)
        new_run = np.r_[True, lo[1:] >= reach[:-1]]
        run = np.cumsum(new_run) - 1
        run_lo = lo[new_run]
        run_hi = np.zeros(run.max() + 1, np.int64)
        np.maximum.at(run_hi, run, hi)
        return int((run_hi - run_lo).sum())

    @property
    def dram_bytes_model(self) -> int:
        """Global sectors moved × 32 bytes: the traffic of the model (no cache reuse across requests)."""
        return sum(s.sectors for s in self.lines if s.kind.startswith("global")) * tx.SECTOR_BYTES

    @property
    def arithmetic_intensity(self) -> float | None:
        """FLOPs per byte of modelled global traffic (None unless ``flops`` was given)."""
        if self.flops is None or not self.dram_bytes_model:
            return None
        return self.flops / self.dram_bytes_model

    def counters(self) -> dict:
        """Totals under Nsight Compute's counter names."""
        return tx.counters(self.lines)

    def occupancy(self, gpu: str = "T4", registers_per_thread: int = occ.DEFAULT_REGISTERS) -> occ.Occupancy:
        """Theoretical occupancy of this launch's block size and shared memory on ``gpu``."""
        threads = int(np.prod(self.block))
        return occ.occupancy(threads, gpu_name=gpu, registers_per_thread=registers_per_thread,
                             shared_bytes=self.shared_bytes)

    # ----------------------------------------------------------------- views

    def to_dict(self) -> dict:
        """Everything as plain numbers (for tests and checks)."""
        return {
            "kernel": self.kernel, "grid": list(self.grid), "block": list(self.block),
            "shared_bytes": self.shared_bytes,
            "lines": [s.to_dict() for s in self.lines],
            "branches": [b.to_dict() for b in self.divergence],
            "counters": self.counters(),
            "bytes_requested": self.bytes_requested, "unique_bytes": self.unique_bytes,
            "dram_bytes_model": self.dram_bytes_model, "arithmetic_intensity": self.arithmetic_intensity,
            "model": LIMITS,
        }

    def table(self) -> "Table":
        """The per-line table: one row per (line, kind of access) and per branch, shown as a table
        in a notebook (``.rows`` for the plain dicts; ``.to_pandas()`` when pandas is installed)."""
        rows = []
        for s in self.lines:
            is_global = s.kind.startswith("global")
            rows.append({
                "line": s.line, "source": self.source_lines.get(s.line, "").strip()[:60], "access": s.kind,
                "requests": s.requests,
                "sectors/request": round(s.sectors_per_request, 2) if is_global else None,
                "ideal": round(s.ideal_sectors_per_request, 2) if is_global else None,
                "bank conflicts": None if is_global else s.bank_conflicts,
                "wavefronts/request": None if is_global else round(s.wavefronts / s.requests, 2),
            })
        for b in self.divergence:
            rows.append({"line": b.line, "source": self.source_lines.get(b.line, "").strip()[:60],
                         "access": "branch", "requests": b.warp_executions,
                         "divergent warps": f"{b.divergent_fraction:.0%}"})
        rows.sort(key=lambda r: r["line"])
        return Table(rows, title=f"{self.kernel}: grid {self.grid}, block {self.block} (model, not a measurement)")

    def __repr__(self) -> str:
        c = self.counters()
        parts = [f"{k.split(' (')[1][:-1]}: {v:.1f} sectors/request" for k, v in c.items()
                 if k.startswith("sectors per request")]
        conflicts = sum(s.bank_conflicts for s in self.lines if s.kind.startswith("shared"))
        return (f"<Profile of {self.kernel} grid={self.grid} block={self.block}: "
                f"{'; '.join(parts) or 'no global accesses'}; {conflicts} bank conflicts>")

    # ----------------------------------------------------------------- picture

    def warp_accesses(self, line: int, kind: str | None = None, block: int = 0, warp: int = 0, instance: int = 0):
        """(lane, address, size) of one warp-level request: the lanes of one warp at one line."""
        t = self.trace
        sel = (t["line"] == line) & (t["block"] == block) & (t["warp"] == warp) & (t["instance"] == instance)
        if kind is not None:
            sel &= t["kind"] == tx.KINDS.index(kind)
        req = t[sel]
        if not len(req):
            raise ValueError(f"no access at line {line} by warp {warp} of block {block} (instance {instance}); "
                             f"lines with accesses: {sorted({s.line for s in self.lines})}")
        return req

    def plot_warp(self, line: int, kind: str | None = None, block: int = 0, warp: int = 0, instance: int = 0, ax=None):
        """Which lanes of one warp touch which 32-byte sectors (global) or banks (shared), at one line."""
        from course import plots

        req = self.warp_accesses(line, kind, block, warp, instance)
        shared = req["kind"][0] in tx.SHARED_KINDS
        if shared:
            stats = tx.analyse_accesses(req)[0]
            summary = f"{stats.wavefronts} wavefront(s), {stats.bank_conflicts} bank conflict(s)"
        else:
            summary = f"{len(np.unique(req['address'] // tx.SECTOR_BYTES))} sector(s) for {len(req)} lane(s)"
        title = f"{self.kernel}, line {line} ({tx.KINDS[req['kind'][0]]}), warp {warp} of block {block}"
        return plots.warp_request(req["lane"], req["address"], shared=shared, ax=ax, title=title, summary=summary)


# ----------------------------------------------------------------- from the CPU backend's records

#: Where the model places argument arrays: each starts on a 512-byte boundary, as cudaMalloc's
#: allocations do (NumPy aligns to 16 or 64 bytes, which would shift sector boundaries).
ALLOCATION_ALIGNMENT = 512
#: Where it places __shared__ arrays in a block's shared memory: one after another, 16-byte aligned,
#: the static arrays first and the launch's extern __shared__ memory last.
SHARED_ALIGNMENT = 16


def _occurrence(keys: np.ndarray) -> np.ndarray:
    """For each element, how many earlier elements have the same key (0, 1, 2, ... in order)."""
    if not len(keys):
        return np.zeros(0, np.int64)
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    starts = np.r_[0, np.flatnonzero(sorted_keys[1:] != sorted_keys[:-1]) + 1]
    first = np.repeat(starts, np.diff(np.r_[starts, len(keys)]))
    out = np.empty(len(keys), np.int64)
    out[order] = np.arange(len(keys)) - first
    return out


def from_records(records: np.ndarray, lines_of, arrays: list, regions: list, threads_per_block: int):
    """ACCESS and BRANCH traces from the CPU backend's raw records.

    ``lines_of``: code offset → source line (a dict); ``arrays``: (address, bytes) of each pointer
    argument by parameter index (None for scalars); ``regions``: the module's shared regions
    (base, bytes, name, dynamic) by region index. Returns (accesses, branches, bases, shared_bytes,
    shared_names): the model's address of each argument's first byte, and the static + dynamic
    shared bytes and the names of the __shared__ arrays the launch touched.
    """
    records = np.asarray(records)
    sites = np.unique(records["site"])
    site_line = np.zeros(len(sites), np.int32)
    for k, site in enumerate(sites):
        site_line[k] = lines_of.get(int(site)) or 0
    line = site_line[np.searchsorted(sites, records["site"])] if len(records) else np.zeros(0, np.int32)
    thread_global = records["block"].astype(np.int64) * threads_per_block + records["thread"]

    is_branch = (records["kind"] & 8) != 0
    br = records[is_branch]
    branches = np.zeros(len(br), tx.BRANCH)
    branches["line"] = line[is_branch]
    branches["block"] = br["block"]
    branches["warp"] = br["thread"] // tx.WARP_SIZE
    branches["lane"] = br["thread"] % tx.WARP_SIZE
    branches["taken"] = (br["kind"] & 1) != 0
    branches["instance"] = _occurrence(thread_global[is_branch] * (1 << 20) + branches["line"])

    acc = records[~is_branch]
    acc_line = line[~is_branch]
    accesses = np.zeros(len(acc), tx.ACCESS)
    accesses["line"] = acc_line
    accesses["block"] = acc["block"]
    accesses["warp"] = acc["thread"] // tx.WARP_SIZE
    accesses["lane"] = acc["thread"] % tx.WARP_SIZE
    accesses["size"] = acc["size"]
    shared = acc["region"] >= 0
    raw_kind = acc["kind"]
    kind = np.where(shared, np.select([raw_kind == 1, raw_kind == 2], [tx.SHARED_LOAD, tx.SHARED_STORE], tx.SHARED_ATOMIC),
                    np.select([raw_kind == 1, raw_kind == 2], [tx.GLOBAL_LOAD, tx.GLOBAL_STORE], tx.GLOBAL_ATOMIC))
    accesses["kind"] = kind
    accesses["instance"] = _occurrence(thread_global[~is_branch] * (1 << 24) + acc_line.astype(np.int64) * 8 + kind)

    # global: the argument each address lies in, moved to the model's cudaMalloc-like layout
    bases, next_base = {}, ALLOCATION_ALIGNMENT
    address = np.zeros(len(acc), np.uint64)
    array = np.full(len(acc), -1, np.int16)
    g = ~shared
    for index, extent in enumerate(arrays):
        if extent is None:
            continue
        start, size = extent
        bases[index] = next_base
        inside = g & (acc["address"] >= start) & (acc["address"] < start + size) & (array == -1)
        address[inside] = acc["address"][inside] - np.uint64(start) + np.uint64(next_base)
        array[inside] = index
        next_base += -(-max(size, 1) // ALLOCATION_ALIGNMENT) * ALLOCATION_ALIGNMENT
    # shared: the regions this launch touched, laid out one after another
    used = sorted(set(acc["region"][shared].tolist()), key=lambda r: (regions[r][3], r))
    offset, names = 0, []
    for k, region in enumerate(used):
        sel = shared & (acc["region"] == region)
        address[sel] = acc["address"][sel] + np.uint64(offset)
        array[sel] = k
        names.append(regions[region][2])
        offset += -(-regions[region][1] // SHARED_ALIGNMENT) * SHARED_ALIGNMENT
    accesses["address"] = address
    accesses["array"] = array
    static_bytes = sum(regions[r][1] for r in used if not regions[r][3])
    return accesses, branches, bases, static_bytes, names

