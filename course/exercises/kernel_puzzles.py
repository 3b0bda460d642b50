"""Twenty CUDA C kernel puzzles with their specs, launches, references and rules (notebook 02).

In the spirit of Sasha Rush's GPU-Puzzles, but in CUDA C: each puzzle gives a spec (a NumPy
reference), the launch the kernel will get, a stub to fill in, and a check that runs the kernel
on the CPU backend on several sizes, compares every element, and enforces the puzzle's rules —
from the source as the compiler sees it ("use `__shfl_down_sync`", "no atomics": macros expanded,
#if branches not taken left out) and, through ``kernel.profile`` on the CPU backend, from the
access trace ("each thread reads `a` at most once", "coalesced: 4 sectors per request", and that
a required barrier or shuffle ran, not only appears). On a GPU the check also runs the kernel with CuPy and compares.

    from course.exercises import kernel_puzzles as kp
    kp.show(1)                      # the spec, the launch and a picture of the expected result
    kp.check(1, MAP)                # ✅ or ❌ with the first wrong element or the rule broken
    kp.scoreboard(globals())        # which puzzles pass, from the learner's own kernels

Hints: ``course.checks.hint()`` after a check gives a nudge, then the method; the answers are
only in the notebook's folded solution cells.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import subprocess
import warnings
from typing import Callable

import numpy as np

from course import checks

WARP = 32
ROUNDS = [1]   # random inputs per size in every check (the notebook sets it with set_rounds)


PICTURES = [True]  # after a check whose kernel ran, draw who touched what (in a notebook only)


def set_pictures(on: bool) -> None:
    """Whether ``check`` draws, after a run, which thread read and wrote which element (on by default
    in a notebook; ``show_accesses`` draws it on demand)."""
    PICTURES[0] = bool(on)


def set_rounds(rounds: int) -> None:
    """How many random inputs of each size every check tries (more catch rarer bugs, take longer)."""
    if not isinstance(rounds, int) or rounds < 1:
        raise ValueError(f"rounds must be a whole number >= 1, got {rounds!r}")
    ROUNDS[0] = rounds


# --------------------------------------------------------------------------- rules


@dataclasses.dataclass(frozen=True)
class Rule:
    """One rule a puzzle's kernel must keep, besides the right answer."""

    text: str                                      # the rule in the learner's words
    source_pattern: str | None = None              # regex the kernel source must match ...
    source_forbidden: str | None = None            # ... or must not match
    trace: Callable | None = None                  # f(profile, case) -> None or what broke it
    marked: bool = False                           # the trace comes from a build whose shuffles leave a mark
    nudge: str | None = None                       # the first hint after this rule is broken (else the puzzle's)

    def broken_in_source(self, source: str) -> str | None:
        code = _preprocessed(source)
        if self.source_pattern and not re.search(self.source_pattern, code):
            return self.text
        if self.source_forbidden and re.search(self.source_forbidden, code):
            return self.text
        return None


def _strip_comments(source: str) -> str:
    """The source without comments, string literals and `#if 0` blocks (a rule's word inside "..." or
    in code the compiler never sees is no use of it)."""
    code = re.sub(r"//[^\n]*|/\*.*?\*/|\"(?:[^\"\\\n]|\\.)*\"", "", source, flags=re.S)
    kept, open_ifs = [], []  # for each open #if: [the branch read now is left out, a branch was taken]
    for line in code.split("\n"):  # (only `#if 0` / `#if 1` are known here: any other keeps both branches)
        directive = re.match(r"\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b(.*)", line)
        if directive:
            word, condition = directive.group(1), directive.group(2).strip().strip("()").strip()
            known = {"0": False, "false": False, "1": True, "true": True}.get(condition) if word == "if" else None
            if word in ("if", "ifdef", "ifndef"):
                open_ifs.append([None, None] if known is None else [not known, known])
            elif word == "endif" and open_ifs:
                open_ifs.pop()
            elif open_ifs and open_ifs[-1][1] is not None:  # #else / #elif after what is known
                taken = open_ifs[-1][1]
                open_ifs[-1] = [True, True] if taken else ([False, True] if word == "else" else [None, None])
            continue
        if not any(left_out for left_out, _ in open_ifs):
            kept.append(line)
    return "\n".join(kept)


@functools.lru_cache(maxsize=256)
def _preprocessed(source: str) -> str:
    """The source as the compiler sees it, for the source rules: macros expanded (`#define ADD atomicAdd`,
    `#define WAIT __syncthreads()`), the #if/#ifdef branches not taken left out, comments and string
    literals gone. The CPU backend's compiler (``course.cuda.cpu.find_compiler``) preprocesses it with
    the macros the backend defines (``__CUDA_ARCH__``, ``__CUDACC__``, ...); includes are left out (the
    rules are about the kernel's own code). Without a compiler, or where it refuses the directives, the
    comments and `#if 0` blocks are stripped by hand (``_strip_comments``)."""
    try:
        from course.cuda.cpu import find_compiler
        from course.cuda.source import PREDEFINED

        compiler = find_compiler()
    except Exception:  # no compiler: the CPU backend cannot run the kernel either, and says so
        return _strip_comments(source)
    text = re.sub(r"(?m)^[ \t]*#[ \t]*include\b.*$", "", source)
    defines = [f"-D{name}={value}" for name, value in PREDEFINED.items() if name != "__cplusplus"]
    try:
        done = subprocess.run([compiler, "-E", "-P", "-x", "c++", "-std=c++17", *defines, "-"], input=text,
                              capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return _strip_comments(source)
    return _strip_comments(done.stdout if done.returncode == 0 else source)


# The build whose trace shows that a shuffle ran: __shfl_down_sync and __shfl_xor_sync go through wrappers
# whose `if` records a branch at line _MARK_LINE or later (the profile records every thread's branches);
# `#line 1` keeps the learner's line numbers. Only the trace rules read this build.
_MARK_LINE = 1_000_000
_MARKS = (f"#line {_MARK_LINE}\n"
          "__device__ unsigned __kp_ran(unsigned mask) { if (mask | 1u) return 0u; return 0u; }\n"
          "template <class T> __device__ T __kp_shfl_down_sync(unsigned mask, T v, unsigned d, int w = 32) "
          "{ return __shfl_down_sync(mask + __kp_ran(mask), v, d, w); }\n"
          "template <class T> __device__ T __kp_shfl_xor_sync(unsigned mask, T v, int d, int w = 32) "
          "{ return __shfl_xor_sync(mask + __kp_ran(mask), v, d, w); }\n"
          "#line 1\n")


def _marked(source: str) -> str:
    return _MARKS + re.sub(r"\b__shfl_(down|xor)_sync\b", r"__kp_shfl_\1_sync", source)


# A block-wide barrier as a kernel spells it: __syncthreads() (and its _count/_and/_or forms), a
# cooperative group's block.sync() or cg::sync(block).
_BLOCK_BARRIER = r"__syncthreads(_count|_and|_or)?\s*\(|\.\s*sync\s*\(|\bsync\s*\(\s*\w+\s*\)"


def waits_after_storing(text: str, nudge: str | None = None) -> Rule:
    """A block barrier that RAN between the stores into shared memory and the reads from it: the source
    names one (as the compiler sees it), and the trace shows, in every block, each thread's first store
    before any other thread's first read. The CPU backend runs a block's threads one after another up to
    each barrier they reach, so without one (a `__syncthreads()` under `if (0)`, in a function nobody
    calls, or before the store) thread 0 reads before thread 1 has stored. Threads that returned before
    the barrier store nothing and are not waited for (as on a GPU since Volta)."""
    def check(profile, case):
        from course.cuda import transactions as tx

        trace = profile.trace
        position = np.arange(len(trace))
        stores, loads = trace["kind"] == tx.SHARED_STORE, trace["kind"] == tx.SHARED_LOAD
        if not stores.any() or not loads.any():
            return f"no thread {'stored into' if not stores.any() else 'read'} a __shared__ array"
        for block in np.unique(trace["block"][stores]):
            here = trace["block"] == block
            if not (here & loads).any():
                continue
            writers, first = np.unique(_thread_in_block(trace[here & stores]), return_index=True)
            first_store = position[here & stores][first]
            read = int(position[here & loads][0])
            reader = int(_thread_in_block(trace[read]))
            late = (first_store > read) & (writers != reader)
            if late.any():
                writer, at = int(writers[late][0]), int(first_store[late][0])
                return (f"thread {reader} of block {int(block)} read the shared array (line {int(trace['line'][read])}) "
                        f"before thread {writer} had stored into it (line {int(trace['line'][at])}): no barrier ran "
                        "between the stores and the reads (one the threads never reach, under `if (0)` or in code "
                        "not called, does not count)")
        return None

    return Rule(text, source_pattern=_BLOCK_BARRIER, trace=check, nudge=nudge)


def shuffles(text: str) -> Rule:
    """__shfl_down_sync or __shfl_xor_sync (or a cooperative-groups tile's shfl_down / shfl_xor) named in
    the source as the compiler sees it, and, for the two intrinsics, run: the marked build's trace shows
    their wrappers' branch (a call under `if (0)` is named but never runs)."""
    pattern = r"__shfl_(down|xor)_sync\s*\(|\.\s*shfl_(down|xor)\s*\("

    def check(profile, case):
        source = getattr(profile, "marked_from", None)
        if source is None:  # the marked build did not compile: the source rule has to do
            return None
        if (profile.branches["line"] >= _MARK_LINE).any():
            return None
        if re.search(r"\.\s*shfl_(down|xor)\s*\(", _preprocessed(source)):  # (a tile's shfl_down is not marked)
            return None
        return ("no __shfl_down_sync or __shfl_xor_sync ran: the lanes must add what they receive from them (a "
                "call the threads never reach, under `if (0)` or in code not called, does not count)")

    return Rule(text, source_pattern=pattern, trace=check, marked=True)


def no_atomics(text: str) -> Rule:
    """No atomic function in the source (as the compiler sees it: `#define ADD atomicAdd` is one) nor in the
    run's trace."""
    def check(profile, case):
        from course.cuda import transactions as tx

        trace = profile.trace
        atomic = trace[np.isin(trace["kind"], (tx.GLOBAL_ATOMIC, tx.SHARED_ATOMIC))]
        if len(atomic):
            return (f"thread {int(_thread_in_block(atomic[0]))} of block {int(atomic[0]['block'])} makes an "
                    f"atomic update at line {int(atomic[0]['line'])}")
        return None

    return Rule(text, source_forbidden=r"\batomic\w*\s*\(", trace=check)


def uses(token: str, text: str) -> Rule:
    return Rule(text, source_pattern=re.escape(token))


def avoids(pattern: str, text: str) -> Rule:
    return Rule(text, source_forbidden=pattern)


def _per_thread_at_most(text: str, limit, what: str, writes: bool, array: str | None = None) -> Rule:
    """A rule on how many global accesses (reads, or writes and atomics) one thread makes.

    ``array`` limits the count to one argument; ``limit`` may depend on the case (a function).
    """
    def check(profile, case):
        from course.cuda import transactions as tx

        trace = profile.trace
        sel = np.isin(trace["kind"], (tx.GLOBAL_STORE, tx.GLOBAL_ATOMIC) if writes else (tx.GLOBAL_LOAD,))
        if array is not None:
            sel &= trace["array"] == profile.argument_index(array)
        t = trace[sel]
        if not len(t):
            return None
        thread = _thread_in_block(t)
        keys, counts = np.unique(np.stack([t["block"], thread], axis=1), axis=0, return_counts=True)
        allowed = limit(case) if callable(limit) else limit
        worst = int(counts.argmax())
        if counts[worst] > allowed:
            block, thread = (int(v) for v in keys[worst])
            return f"thread {thread} of block {block} {what} {int(counts[worst])} times (at most {allowed} here)"
        return None

    return Rule(text, trace=check)


def _times(limit: int) -> str:
    return "once" if limit == 1 else f"{limit} times"


def reads_at_most(array: str, limit: int) -> Rule:
    return _per_thread_at_most(f"each thread reads `{array}` at most {_times(limit)}", limit,
                               f"reads `{array}`", writes=False, array=array)


def writes_at_most(array: str, limit: int) -> Rule:
    return _per_thread_at_most(f"each thread writes `{array}` at most {_times(limit)}", limit,
                               f"writes `{array}`", writes=True, array=array)


def _thread_in_block(records):
    """The thread's linear index in its block, of trace records (an array of them, or one)."""
    return np.asarray(records["warp"]).astype(np.int64) * WARP + records["lane"]


def one_writer_per_block(array: str) -> Rule:
    """Only one thread of each block writes `array` (the block's result, written once it is complete)."""
    def check(profile, case):
        from course.cuda import transactions as tx

        trace = profile.trace
        t = trace[np.isin(trace["kind"], (tx.GLOBAL_STORE, tx.GLOBAL_ATOMIC))
                  & (trace["array"] == profile.argument_index(array))]
        for block in np.unique(t["block"]):
            writers = np.unique(_thread_in_block(t[t["block"] == block]))
            if len(writers) > 1:
                return (f"threads {int(writers[0])} and {int(writers[1])} of block {int(block)} both write `{array}` "
                        "(only one thread writes the result, once the block has combined everyone's part)")
        return None

    return Rule(f"only one thread of a block writes `{array}`", trace=check)


def each_element_written_once(array: str, nudge: str | None = None) -> Rule:
    """No element of `array` is stored by two threads. Two threads that store the same value give the
    right answer, so only the trace shows it: a flat guard `if (i < n * n)` in a 2-D kernel, whose
    threads past the row's end write the next row's elements again."""
    def check(profile, case):
        from course.cuda import transactions as tx

        trace = profile.trace
        t = trace[(trace["kind"] == tx.GLOBAL_STORE) & (trace["array"] == profile.argument_index(array))]
        addresses, counts = np.unique(t["address"], return_counts=True)
        if not len(t) or counts.max() <= 1:
            return None
        twice = t[t["address"] == addresses[counts.argmax()]]
        bx, by = profile.block[0], profile.block[1] if len(profile.block) > 1 else 1

        def thread(record):  # threadIdx as (x, y) in 2-D blocks
            linear = int(_thread_in_block(record))
            at = f"({linear % bx}, {linear // bx % by})" if by > 1 else str(linear)
            return f"thread {at} of block {int(record['block'])}"

        who = [thread(record) for record in twice[:2]]
        element = (int(twice["address"][0]) - int(profile.bases.get(profile.argument_index(array), 0))) \
            // max(int(twice["size"][0]), 1)
        return (f"{who[0]} and {who[1]} both store `{array}[{element}]` (flat index): each element belongs to one "
                "thread (guard each coordinate on its own, not the flat index)")

    return Rule(f"each element of `{array}` is written by one thread", trace=check, nudge=nudge)


def computes_from_shared(array: str) -> Rule:
    """Every thread that writes `array` read shared memory first (it computes from the shared copy, not
    from the value it loaded into a register)."""
    def check(profile, case):
        from course.cuda import transactions as tx

        trace = profile.trace
        thread = trace["block"].astype(np.int64) * 1_000_000 + _thread_in_block(trace)
        writes = (trace["kind"] == tx.GLOBAL_STORE) & (trace["array"] == profile.argument_index(array))
        readers = set(thread[trace["kind"] == tx.SHARED_LOAD].tolist())
        for who in np.unique(thread[writes]):
            if int(who) not in readers:
                block, rest = divmod(int(who), 1_000_000)
                return (f"thread {rest} of block {block} writes `{array}` without reading the __shared__ array: "
                        "compute from the shared copy (after the barrier), not from the value in a register")
        return None

    return Rule(f"each thread computes `{array}` from the shared copy", trace=check)


def global_reads_at_most(limit: Callable[[dict], int] | int, text: str) -> Rule:
    return _per_thread_at_most(text, limit, "reads global memory", writes=False)


def coalesced(kind: str = "global load", slack: float = 1.0) -> Rule:
    """Each warp-level request moves about the sectors its bytes need (4 for 32 floats), plus at most
    ``slack`` on average: a row that starts mid-sector costs one sector more, as on a GPU."""
    def check(profile, case):
        for s in profile.lines:
            if s.kind == kind and s.sectors > s.ideal_sectors + slack * s.requests + 1e-9:
                return (f"line {s.line}: {s.sectors_per_request:.1f} sectors per request for a {kind}, where "
                        f"its bytes need {s.ideal_sectors_per_request:.1f}: consecutive threads should touch "
                        "consecutive addresses")
        return None

    return Rule(f"coalesced {kind}s: about the sectors per request the bytes need (4 for 32 floats; "
                "one more when a row starts mid-sector)", trace=check)


def no_bank_conflicts() -> Rule:
    def check(profile, case):
        for s in profile.lines:
            if s.kind.startswith("shared") and s.bank_conflicts:
                return (f"line {s.line}: {s.bank_conflicts} bank conflicts in {s.requests} shared-memory "
                        f"requests ({s.conflict_ways:.0f}-way on average)")
        return None

    return Rule("no shared-memory bank conflicts", trace=check)


def global_atomics_per_block_at_most(limit: int) -> Rule:
    def check(profile, case):
        from course.cuda import transactions as tx

        t = profile.trace[profile.trace["kind"] == tx.GLOBAL_ATOMIC]
        if len(t):
            blocks, counts = np.unique(t["block"], return_counts=True)
            if counts.max() > limit:
                return (f"block {int(blocks[counts.argmax()])} makes {int(counts.max())} atomic updates of "
                        f"global memory (at most {limit}: one per bin, after the block's own histogram)")
        return None

    return Rule(f"at most {limit} global atomics per block", trace=check)


# --------------------------------------------------------------------------- puzzles


@dataclasses.dataclass(frozen=True)
class Puzzle:
    number: int
    name: str                 # the kernel's name; the notebook's variable is NAME.upper()
    title: str
    spec: str                 # one paragraph, Markdown
    learn: str                # what the learner will have learned
    stub: str                 # the CUDA C stub, with TODOs that do not give the answer
    make: Callable            # make(rng, size) -> case dict: inputs, outputs, scalars
    args: tuple               # the kernel's arguments, by name, in order
    outputs: tuple            # names of the arrays the kernel writes and the check compares
    launch: Callable          # launch(case) -> (grid, block, shared_mem)
    reference: Callable       # reference(case) -> {output name: expected array}
    sizes: tuple              # the sizes the check runs
    rules: tuple = ()
    hints: tuple = ()
    tolerance: float = 1e-5   # relative tolerance for floats (0: exact)
    # (pattern, replacement): the emulator's hints that would spell out this puzzle's answer (the guard
    # puzzle's "guard the access: `if (i < n)`"), replaced in its verdict by a question
    spoilers: tuple = ()

    @property
    def variable(self) -> str:
        return self.name.upper()

    def case(self, size, seed: int = 0) -> dict:
        return self.make(np.random.default_rng(seed), size)


def _f32(rng, *shape):
    """Quarters from -9 to 9 (-9.0, -8.75, ..., 9.0): sums and products of them are exact in float32 at these
    sizes, and a kernel that cuts them to int (`int v = a[i];`, a `__shared__ int` buffer) is wrong."""
    return (rng.integers(-36, 37, size=shape) / 4).astype(np.float32)


def _blocks(n, threads):
    return (n + threads - 1) // threads


def _stub(signature: str, todo: str) -> str:
    body = "\n".join(f"    // {line}" if line else "" for line in todo.strip().splitlines())
    return f'extern "C" __global__ void {signature} {{\n{body}\n}}\n'


PUZZLES: list[Puzzle] = []

# The nudge after a 2-D kernel's threads store one element twice (a flat guard): the index was right, the guard
# lets through threads whose column is past the row's end.
_FLAT_GUARD_NUDGE = ("Your index finds each element; look at your guard instead: which threads does it let through "
                     "whose column lies past the end of the row, and whose element do they write?")


def _add(**kw):
    PUZZLES.append(Puzzle(number=len(PUZZLES) + 1, **kw))


_add(name="map", title="Map",
     spec="Add 10 to every element: `out[i] = a[i] + 10`. One block with exactly one thread per element.",
     learn="how a thread finds its element from `threadIdx.x`",
     stub=_stub("map(const float* a, float* out)", "TODO: each thread handles one element"),
     make=lambda rng, n: {"a": _f32(rng, n), "out": np.zeros(n, np.float32)},
     args=("a", "out"), outputs=("out",),
     launch=lambda c: ((1,), (c["a"].size,), 0),
     reference=lambda c: {"out": c["a"] + 10}, sizes=(4, 32, 100),
     rules=(reads_at_most("a", 1), writes_at_most("out", 1)),
     hints=("Which built-in variable is different in every thread of the block?",
            "Use the thread's x index as the element index, read that element of a once and write the same index "
            "of out."))

_add(name="zip", title="Zip",
     spec="Add two arrays element by element: `out[i] = a[i] + b[i]`. One thread per element.",
     learn="that threads of one kernel read several arrays at the same index",
     stub=_stub("zip(const float* a, const float* b, float* out)", "TODO: one element per thread"),
     make=lambda rng, n: {"a": _f32(rng, n), "b": _f32(rng, n), "out": np.zeros(n, np.float32)},
     args=("a", "b", "out"), outputs=("out",),
     launch=lambda c: ((1,), (c["a"].size,), 0),
     reference=lambda c: {"out": c["a"] + c["b"]}, sizes=(4, 32, 100),
     rules=(reads_at_most("a", 1), reads_at_most("b", 1), writes_at_most("out", 1), each_element_written_once("out")),
     hints=("The same index works for all three arrays.",
            "Compute the index once from threadIdx.x and use it for a, b and out."))

_add(name="guard", title="Guard",
     spec="The same map, `out[i] = a[i] + 10`, but the block has more threads (64) than elements (`n`). "
          "Threads past the end must not touch memory.",
     learn="why every kernel needs a bounds guard",
     stub=_stub("guard(const float* a, float* out, int n)", "TODO: some threads have no element: make them do nothing"),
     make=lambda rng, n: {"a": _f32(rng, n), "out": np.zeros(n, np.float32), "n": n},
     args=("a", "out", "n"), outputs=("out",),
     launch=lambda c: ((1,), (64,), 0),
     reference=lambda c: {"out": c["a"] + 10}, sizes=(1, 10, 63, 64),
     rules=(reads_at_most("a", 1), writes_at_most("out", 1)),
     hints=("What happens to the threads whose index is n or more?",
            "Wrap the read and the write in a test that the index is smaller than n."),
     spoilers=((r"Check how the index is computed; where threads past the end are expected \(the last block's, "
                r"in a grid rounded up to whole blocks\), guard the access: [^\n]*",
                "Which threads have an element of the array, and what should the others do?"),))

_add(name="map_2d", title="Map 2D",
     spec="`a` is an `n × n` matrix stored row by row; `out[r][c] = a[r][c] + 10`. One block of 16 × 16 threads, "
          "`n ≤ 16`: `threadIdx.x` is the column, `threadIdx.y` the row.",
     learn="2D thread indices and row-major indexing with a guard on both axes",
     stub=_stub("map_2d(const float* a, float* out, int n)", "TODO: a 2D index, a guard on both coordinates"),
     make=lambda rng, n: {"a": _f32(rng, n, n), "out": np.zeros((n, n), np.float32), "n": n},
     args=("a", "out", "n"), outputs=("out",),
     launch=lambda c: ((1,), (16, 16), 0),
     # (the access rules read the last size's launch: 5 leaves threads past the row's end)
     reference=lambda c: {"out": c["a"] + 10}, sizes=(1, 16, 5),
     rules=(reads_at_most("a", 1), writes_at_most("out", 1), each_element_written_once("out", _FLAT_GUARD_NUDGE)),
     hints=("A row-major matrix is one long array: where does row r start?",
            "The flat index is row times the row length plus the column; guard row and column against n."))

_add(name="broadcast", title="Broadcast",
     spec="`a` is a column of `rows` values and `b` a row of `cols` values; "
          "`out[r][c] = a[r] + b[c]` (`rows × cols`, row-major). One block of 16 × 16 threads.",
     learn="broadcasting by index arithmetic: each operand is read at its own index",
     stub=_stub("broadcast(const float* a, const float* b, float* out, int rows, int cols)",
                "TODO: a is indexed by the row only, b by the column only"),
     make=lambda rng, s: {"a": _f32(rng, s[0]), "b": _f32(rng, s[1]), "out": np.zeros(s, np.float32),
                          "rows": s[0], "cols": s[1]},
     args=("a", "b", "out", "rows", "cols"), outputs=("out",),
     launch=lambda c: ((1,), (16, 16), 0),
     reference=lambda c: {"out": c["a"][:, None] + c["b"][None, :]}, sizes=((1, 1), (3, 7), (16, 16), (15, 2)),
     rules=(reads_at_most("a", 1), reads_at_most("b", 1), writes_at_most("out", 1)),
     hints=("Which of the two coordinates does each input depend on?",
            "Give each thread one element of `out` from its two thread coordinates and keep only the threads "
            "inside both the row count and the column count; the element's place in the row-major output comes "
            "from its row and its column, and each input is read with the one coordinate it changes along."))

_add(name="blocks", title="Blocks",
     spec="`out[i] = a[i] + 10` for `n` elements, with blocks of 32 threads — fewer threads per block than "
          "elements, so the grid has several blocks.",
     learn="the global index `blockIdx.x * blockDim.x + threadIdx.x`",
     stub=_stub("blocks(const float* a, float* out, int n)", "TODO: the index across all blocks, and a guard"),
     make=lambda rng, n: {"a": _f32(rng, n), "out": np.zeros(n, np.float32), "n": n},
     args=("a", "out", "n"), outputs=("out",),
     launch=lambda c: ((_blocks(c["n"], 32),), (32,), 0),
     # (256 fills whole blocks: blocks that overlap, an index with a stride short of the block, leave the last
     # elements unwritten there, where a part-filled last block would hide it)
     reference=lambda c: {"out": c["a"] + 10}, sizes=(1, 32, 33, 200, 256),
     rules=(reads_at_most("a", 1), writes_at_most("out", 1)),
     hints=("Thread 0 of block 1 must not redo the work of thread 0 of block 0.",
            "Skip the elements of the blocks before this one: block number times block size, plus the thread index; "
            "then guard."))

_add(name="blocks_2d", title="Blocks 2D",
     spec="`out[r][c] = a[r][c] + 10` for a `rows × cols` matrix, with a 2D grid of 8 × 8-thread blocks.",
     learn="2D grids: a global row and a global column",
     stub=_stub("blocks_2d(const float* a, float* out, int rows, int cols)",
                "TODO: global row and column from the block and thread indices; guard both"),
     make=lambda rng, s: {"a": _f32(rng, *s), "out": np.zeros(s, np.float32), "rows": s[0], "cols": s[1]},
     args=("a", "out", "rows", "cols"), outputs=("out",),
     launch=lambda c: ((_blocks(c["cols"], 8), _blocks(c["rows"], 8)), (8, 8), 0),
     reference=lambda c: {"out": c["a"] + 10}, sizes=((1, 1), (8, 8), (16, 24), (9, 17), (30, 5)),
     rules=(reads_at_most("a", 1), writes_at_most("out", 1), each_element_written_once("out", _FLAT_GUARD_NUDGE),
            coalesced("global load")),
     hints=("x goes along a row (the column index), y goes down (the row index) — for blocks too.",
            "Build the column from the x indices of block and thread, the row from the y indices; guard both; "
            "index row-major."))

_add(name="shared", title="Shared",
     spec="`out[i] = a[i] + 10` again, but through shared memory: each block of 32 threads first copies its "
          "32 elements of `a` into a `__shared__` array, waits, and computes from the shared copy.",
     learn="the load → `__syncthreads()` → use pattern of shared memory",
     stub=_stub("shared(const float* a, float* out, int n)",
                "TODO: declare a __shared__ array of 32 floats\n"
                "TODO: each thread loads its element (when inside)\n"
                "TODO: wait for the whole block, then compute from the shared array"),
     make=lambda rng, n: {"a": _f32(rng, n), "out": np.zeros(n, np.float32), "n": n},
     args=("a", "out", "n"), outputs=("out",),
     launch=lambda c: ((_blocks(c["n"], 32),), (32,), 0),
     reference=lambda c: {"out": c["a"] + 10}, sizes=(1, 32, 70, 128),
     rules=(uses("__shared__", "use a __shared__ array"),
            waits_after_storing("wait with __syncthreads() (or a cooperative-groups block's sync()) after storing "
                                "into the shared array and before reading it"),
            reads_at_most("a", 1), writes_at_most("out", 1), computes_from_shared("out")),
     hints=("Shared memory belongs to the block: which index does a thread use for its own slot?",
            "Three phases: every thread puts its element into a shared array as big as the block (guarded, as "
            "before); then the block waits at one barrier that every thread still running reaches (guard the work "
            "around it, never the barrier; a thread that has returned is not waited for); then each reads its "
            "slot back and writes the result."))


def _pool(a):
    out = a.copy()
    out[1:] += a[:-1]
    out[2:] += a[:-2]
    return out


_add(name="pooling", title="Pooling",
     spec="A sliding sum of the last three elements: `out[i] = a[i-2] + a[i-1] + a[i]` (terms before the start "
          "count as 0). Blocks of 32 threads; each thread may read global memory at most twice, so neighbours "
          "come from shared memory.",
     learn="a shared tile with a halo: threads load for each other",
     stub=_stub("pooling(const float* a, float* out, int n)",
                "TODO: a shared tile for the block's 32 elements and the 2 before them\n"
                "TODO: fill it (the first threads also load the halo), wait, then sum from the tile"),
     make=lambda rng, n: {"a": _f32(rng, n), "out": np.zeros(n, np.float32), "n": n},
     args=("a", "out", "n"), outputs=("out",),
     launch=lambda c: ((_blocks(c["n"], 32),), (32,), 0),
     reference=lambda c: {"out": _pool(c["a"])}, sizes=(1, 2, 32, 33, 100, 128),
     rules=(uses("__shared__", "use a __shared__ tile"), global_reads_at_most(2, "at most 2 global reads per thread"),
            writes_at_most("out", 1)),
     hints=("Element i needs i-1 and i-2; for the first two threads of a block those belong to the previous block.",
            "Give the shared tile room for the block's elements and for the two that come before the block's "
            "first one; let two threads fetch those extra elements (zero before the array's start), meet at a "
            "barrier, and sum three neighbouring slots."))

_add(name="dot", title="Dot product",
     spec="`out[0] = sum(a[i] * b[i])` for `n` elements with one block of 64 threads (`n ≤ 64`). Each thread "
          "reads `a` and `b` once; only one thread writes the result.",
     learn="a tree reduction in shared memory, with a barrier after every step",
     stub=_stub("dot(const float* a, const float* b, float* out, int n)",
                "TODO: each thread puts its product (or 0 past n) in shared memory\n"
                "TODO: halve the number of active threads at each step, summing pairs; barrier each step\n"
                "TODO: one thread writes the total"),
     make=lambda rng, n: {"a": _f32(rng, n), "b": _f32(rng, n), "out": np.zeros(1, np.float32), "n": n},
     args=("a", "b", "out", "n"), outputs=("out",),
     launch=lambda c: ((1,), (64,), 0),
     reference=lambda c: {"out": np.array([np.dot(c["a"].astype(np.float64), c["b"])], np.float32)},
     sizes=(1, 7, 64),
     rules=(reads_at_most("a", 1), reads_at_most("b", 1),
            waits_after_storing("barriers between the steps (__syncthreads(), or a cooperative-groups block's sync())"),
            one_writer_per_block("out")),
     hints=("Sixty-four partial products, one total: how many steps if every step sums pairs?",
            "Each thread stores its product (zero past the end) in a shared slot; then halve the number of active"
            " threads each step, the lower half adding in the upper half's slots, with a barrier that every "
            "thread reaches between steps; the first slot ends up holding the block's total."))


def _conv(a, b):
    n, k = a.size, b.size
    padded = np.concatenate([a, np.zeros(k, np.float32)])
    return np.array([np.dot(padded[i:i + k].astype(np.float64), b) for i in range(n)], np.float32)


_add(name="conv1d", title="1D convolution",
     spec="`out[i] = sum_j a[i + j] * b[j]` for `j < k` (`k ≤ 8`; `a` past its end counts as 0). Blocks of 32 "
          "threads; each thread reads `a` at most twice and `b` at most once.",
     learn="tiles with a halo on the right, and a small filter kept in shared memory",
     stub=_stub("conv1d(const float* a, const float* b, float* out, int n, int k)",
                "TODO: shared tiles: the block's 32 elements of a plus the k - 1 after them, and the filter b\n"
                "TODO: load (some threads load twice), wait, then each thread sums its k products"),
     make=lambda rng, s: {"a": _f32(rng, s[0]), "b": _f32(rng, s[1]), "out": np.zeros(s[0], np.float32),
                          "n": s[0], "k": s[1]},
     args=("a", "b", "out", "n", "k"), outputs=("out",),
     launch=lambda c: ((_blocks(c["n"], 32),), (32,), 0),
     reference=lambda c: {"out": _conv(c["a"], c["b"])}, sizes=((1, 1), (10, 3), (32, 8), (70, 4)),
     rules=(reads_at_most("a", 2), reads_at_most("b", 1), writes_at_most("out", 1)),
     hints=("The last threads of a block need elements that the next block's threads would load.",
            "Put the block's slice of `a` into a shared tile followed by the few elements after it that the last "
            "threads' windows reach (some threads load a second element for them, 0 past the end of `a`), and the "
            "filter into a second shared array; wait at a barrier; then each thread sums its products from the "
            "two shared arrays, its window starting at its own slot of the tile."))


def _scan(a):
    return np.cumsum(a.astype(np.float64)).astype(np.float32)


_add(name="prefix_sum", title="Prefix sum",
     spec="An inclusive scan within one block of 64 threads: `out[i] = a[0] + … + a[i]` (`n ≤ 64`). Each thread "
          "reads `a` once and writes `out` once. (Watch for races: the race checker is on.)",
     learn="the Hillis–Steele scan, and why it needs two buffers or two barriers per step",
     stub=_stub("prefix_sum(const float* a, float* out, int n)",
                "TODO: load into shared memory (0 past n)\n"
                "TODO: for offsets 1, 2, 4, …: each element adds the one `offset` places to its left\n"
                "TODO: beware: a thread must not overwrite a value another thread has yet to read"),
     make=lambda rng, n: {"a": _f32(rng, n), "out": np.zeros(n, np.float32), "n": n},
     args=("a", "out", "n"), outputs=("out",),
     launch=lambda c: ((1,), (64,), 0),
     reference=lambda c: {"out": _scan(c["a"])}, sizes=(1, 5, 64),
     rules=(reads_at_most("a", 1), writes_at_most("out", 1)),
     hints=("After step s, element i holds the sum of the 2^s elements ending at i.",
            "For offset = 1, 2, 4, … < 64: read the left neighbour (if t >= offset) into a register, "
            "__syncthreads(), add it to your own slot, __syncthreads() — or ping-pong between two buffers."))

_add(name="axis_sum", title="Axis sum",
     spec="Sum each row of a `rows × cols` matrix: `out[r] = sum(a[r][:])`. One block of 128 threads per row; "
          "a row can be longer than the block. Reads must be coalesced.",
     learn="a strided loop that keeps neighbouring threads on neighbouring addresses, then a block reduction",
     stub=_stub("axis_sum(const float* a, float* out, int rows, int cols)",
                "TODO: each thread sums the elements of its row it is responsible for\n"
                "TODO: reduce the 128 partial sums in shared memory; one thread writes out[row]"),
     make=lambda rng, s: {"a": _f32(rng, *s), "out": np.zeros(s[0], np.float32), "rows": s[0], "cols": s[1]},
     args=("a", "out", "rows", "cols"), outputs=("out",),
     launch=lambda c: ((c["rows"],), (128,), 0),
     reference=lambda c: {"out": c["a"].astype(np.float64).sum(axis=1).astype(np.float32)},
     sizes=((1, 1), (3, 128), (4, 300), (2, 1000), (1, 1300), (1, 2900)),
     rules=(coalesced("global load"),
            _per_thread_at_most("each thread reads each of its elements of `a` once",
                                lambda c: _blocks(c["cols"], 128), "reads `a`", writes=False, array="a"),
            one_writer_per_block("out")),
     hints=("Which threads should read neighbouring elements at the same time: one thread's chunk, or one "
            "element per thread per round?",
            "Let the block walk along its row together: in each round every thread takes one element, "
            "neighbouring threads neighbouring elements, then the whole block moves on by its width; each thread "
            "keeps a running sum in a register. Then combine the per-thread sums with the tree reduction of the "
            "dot product, and let one thread write the row's total."))

_add(name="matmul", title="Matrix multiply (tiled)",
     spec="`C = A @ B` for `A` of `m × k` and `B` of `k × n` (row-major), with 16 × 16 blocks and 16 × 16 "
          "shared tiles, for any sizes (not only multiples of 16). Each thread computes one element of `C` "
          "and reads each of its tiles' elements from global memory once.",
     learn="shared-memory tiling: load a tile of A and of B, sync, multiply, sync, slide",
     stub=_stub("matmul(const float* A, const float* B, float* C, int m, int k, int n)",
                "TODO: two 16 x 16 shared tiles\n"
                "TODO: slide along k in steps of 16: load (0 outside), sync, accumulate, sync\n"
                "TODO: write C when inside"),
     make=lambda rng, s: {"A": _f32(rng, s[0], s[1]), "B": _f32(rng, s[1], s[2]),
                          "C": np.zeros((s[0], s[2]), np.float32), "m": s[0], "k": s[1], "n": s[2]},
     args=("A", "B", "C", "m", "k", "n"), outputs=("C",),
     launch=lambda c: ((_blocks(c["n"], 16), _blocks(c["m"], 16)), (16, 16), 0),
     reference=lambda c: {"C": (c["A"].astype(np.float64) @ c["B"]).astype(np.float32)},
     sizes=((1, 1, 1), (16, 16, 16), (20, 33, 17), (40, 8, 50), (9, 70, 7)),  # (k = 70: 5 tiles)
     rules=(global_reads_at_most(lambda c: 2 * _blocks(c["k"], 16), "at most 2 global reads per thread per tile"),
            writes_at_most("C", 1)),
     hints=("Each element of a tile is needed by 16 threads: load it once, share it.",
            "Walk along the shared dimension one tile at a time. Each step, every thread copies one element of "
            "the tile of A and one of the tile of B into shared memory (0 where the tile hangs over a matrix's "
            "edge); the block waits; each thread adds up the products of its row of A's tile with its column of "
            "B's tile; and the block waits again before the next tiles overwrite these. After the last step, the "
            "threads inside C write their sums."))

_add(name="warp_sum", title="Warp-shuffle sum",
     spec="Sum each group of 32 consecutive elements: `out[w] = sum(a[32w : 32w + 32])` (the last group may be "
          "short: missing elements count 0). Blocks of 128 threads. No shared memory: the lanes of a warp "
          "exchange values with `__shfl_down_sync` (or `__shfl_xor_sync`).",
     learn="warp-level reduction with shuffles — no shared memory, no `__syncthreads()`",
     stub=_stub("warp_sum(const float* a, float* out, int n)",
                "TODO: each lane starts from its element (0 past n)\n"
                "TODO: five shuffle steps halve the distance each time; lane 0 then holds the warp's sum"),
     make=lambda rng, n: {"a": _f32(rng, n), "out": np.zeros(_blocks(n, 32), np.float32), "n": n},
     args=("a", "out", "n"), outputs=("out",),
     launch=lambda c: ((_blocks(c["n"], 128),), (128,), 0),
     reference=lambda c: {"out": np.add.reduceat(
         np.concatenate([c["a"], np.zeros((-c["n"]) % 32, np.float32)]).astype(np.float64),
         np.arange(0, _blocks(c["n"], 32) * 32, 32)).astype(np.float32)},
     sizes=(1, 32, 100, 256),
     rules=(shuffles("use __shfl_down_sync (or __shfl_xor_sync, or a cooperative-groups tile's shfl_down / shfl_xor)"),
            avoids(r"__shared__", "no shared memory"),
            reads_at_most("a", 1)),
     hints=("A shuffle reads a register of another lane of the same warp, without memory.",
            "Give a lane past the end a value that changes no sum, let every lane take part in each shuffle "
            "(halving the distance from 16 down to 1, each lane adding what the lane that far above it holds), "
            "and let one lane per warp write the warp's total."))


def _softmax_input(rng, shape):
    """Values up to about ±90; from the second row on, one row far below 0 (about -400): exp of every value
    there underflows to 0, so a running max that starts at 0, or at -100 (not -INFINITY), gives 0/0; and
    from the third row on, in a row longer than a block, one value 150 above the rest past column 128: a
    max taken over part of the row overflows exp there."""
    x = (rng.standard_normal(shape) * 30).astype(np.float32)
    if shape[0] > 1:
        x[1] = np.clip(x[1], -90, 90) - 400
    if shape[0] > 2 and shape[1] > 128:
        x[2, 128 + int(rng.integers(0, shape[1] - 128))] = x[2].max() + 150
    return x


def _softmax(x):
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)


_add(name="softmax", title="Block-wide softmax",
     spec="Softmax of each row of a `rows × cols` matrix: `out[r][c] = exp(x[r][c] - max_r) / sum_c exp(x[r][c] - "
          "max_r)`. One block of 128 threads per row (a row can be longer than the block): a max reduction, "
          "then a sum reduction, then the division.",
     learn="two block reductions in a row, and the max trick that keeps exp from overflowing",
     stub=_stub("softmax(const float* x, float* out, int rows, int cols)",
                "TODO: the row's max (strided loop + shared-memory reduction)\n"
                "TODO: the row's sum of exp(x - max) (the same pattern)\n"
                "TODO: write exp(x - max) / sum for your elements"),
     make=lambda rng, s: {"x": _softmax_input(rng, s), "out": np.zeros(s, np.float32), "rows": s[0], "cols": s[1]},
     args=("x", "out", "rows", "cols"), outputs=("out",),
     launch=lambda c: ((c["rows"],), (128,), 0),
     reference=lambda c: {"out": _softmax(c["x"])}, sizes=((1, 1), (2, 128), (3, 300), (2, 1000)),
     rules=(coalesced("global load"), global_reads_at_most(lambda c: 3 * _blocks(c["cols"], 128),
                                                           "at most 3 reads of each of a thread's elements")),
     hints=("exp(88) overflows a float: what can you subtract from every element without changing the result?",
            "Three passes over the row, each with the strided loop of the axis sum: each thread's maximum, "
            "combined across the block into the row's maximum (a reduction that keeps the larger value, starting "
            "from minus infinity); then each thread's sum of the exponentials of its values minus that maximum, "
            "combined the same way; then each element's exponential divided by that total. Let every thread read "
            "a reduction's result before the shared array is used for the next one: a barrier between."),
     tolerance=1e-5)

_add(name="histogram", title="Histogram with privatisation",
     spec="Count the values of `a` (integers in `[0, 16)`) into `bins[16]`. Blocks of 128 threads. Each block first "
          "builds its own histogram in shared memory with `atomicAdd`, then adds it to the global one: at most 16 "
          "atomic updates of global memory per block.",
     learn="privatisation: contended atomics on fast shared memory, few on global memory",
     stub=_stub("histogram(const int* a, unsigned int* bins, int n)",
                "TODO: a zeroed __shared__ histogram (then a barrier)\n"
                "TODO: count your element(s) into it with atomicAdd; barrier\n"
                "TODO: a few threads add the block's counts to bins"),
     make=lambda rng, n: {"a": rng.integers(0, 16, n).astype(np.int32), "bins": np.zeros(16, np.uint32), "n": n},
     args=("a", "bins", "n"), outputs=("bins",),
     launch=lambda c: ((_blocks(c["n"], 128),), (128,), 0),
     reference=lambda c: {"bins": np.bincount(c["a"], minlength=16).astype(np.uint32)},
     sizes=(1, 128, 1000), tolerance=0.0,
     rules=(uses("atomicAdd", "use atomicAdd"), uses("__shared__", "a shared-memory histogram per block"),
            global_atomics_per_block_at_most(16)),
     hints=("Thousands of threads adding to 16 global counters queue up; 128 threads on 16 shared counters much less.",
            "Keep a small histogram per block in shared memory: clear it, barrier, count each element into it "
            "with a shared-memory atomic, barrier, then let one thread per bin add the block's count into the "
            "global bin."))


def _laplace(a):
    p = np.pad(a.astype(np.float64), 1)
    return (4 * p[1:-1, 1:-1] - p[:-2, 1:-1] - p[2:, 1:-1] - p[1:-1, :-2] - p[1:-1, 2:]).astype(np.float32)


_add(name="stencil", title="Stencil with halo cells",
     spec="A 5-point Laplacian of a `rows × cols` image: `out = 4·a[r][c] − a[r−1][c] − a[r+1][c] − a[r][c−1] − "
          "a[r][c+1]`, with 0 outside the image. 16 × 16 blocks; a block loads its 16 × 16 tile plus a one-cell "
          "halo into shared memory, so each thread reads `a` at most three times: its own cell, and the halo "
          "cells beside it (two for a thread in a corner of the block), not its four neighbours.",
     learn="2D tiles with halo cells: the pattern behind every image filter and PDE solver",
     stub=_stub("stencil(const float* a, float* out, int rows, int cols)",
                "TODO: a (16 + 2) x (16 + 2) shared tile; thread (tx, ty) owns tile[ty + 1][tx + 1]\n"
                "TODO: edge threads also load the halo cell next to them (0 outside the image)\n"
                "TODO: barrier, then the 5-point formula from the tile"),
     make=lambda rng, s: {"a": _f32(rng, *s), "out": np.zeros(s, np.float32), "rows": s[0], "cols": s[1]},
     args=("a", "out", "rows", "cols"), outputs=("out",),
     launch=lambda c: ((_blocks(c["cols"], 16), _blocks(c["rows"], 16)), (16, 16), 0),
     # (the access rules read the last size's launch: 2 × 3 blocks, whose corner threads have image cells on
     # two sides; (33, 7), one block wide, has none on the left or right)
     reference=lambda c: {"out": _laplace(c["a"])}, sizes=((1, 1), (16, 16), (33, 7), (20, 35)),
     rules=(uses("__shared__", "a shared tile with a halo"),
            _per_thread_at_most("each thread reads `a` at most 3 times (its own cell, and the halo cells beside it: "
                                "two for a corner thread of the block)", 3, "reads `a`", writes=False, array="a"),
            writes_at_most("out", 1)),
     hints=("A cell on the tile's edge needs a neighbour that belongs to the next block.",
            "Give the shared tile a border one cell wide on every side. Each thread copies its own cell into the "
            "tile's interior; the threads on the block's edges also copy the cell just outside their edge into "
            "the border (0 outside the image); the tile's corners are never read. Wait at a barrier, then compute "
            "the formula from the tile alone."))


def _compact(a):
    kept = a[a > 0]
    out = np.full(a.size, -1, np.float32)
    out[:kept.size] = kept
    return out, np.array([kept.size], np.int32)


_add(name="compact", title="Stream compaction",
     spec="Keep the positive elements of `a`, in order, at the front of `out`, and their number in `count[0]` "
          "(the rest of `out` stays as it was, -1). One block of 256 threads, `n ≤ 256`: a scan of the keep-flags "
          "gives each kept element its place, then a scatter.",
     learn="compaction = scan + scatter, the building block of filtering and sorting on a GPU",
     stub=_stub("compact(const float* a, float* out, int* count, int n)",
                "TODO: flag = 1 if a[i] > 0 (0 past n)\n"
                "TODO: an exclusive scan of the flags in shared memory gives each kept element its place\n"
                "TODO: scatter; the last thread writes the total"),
     make=lambda rng, n: {"a": _f32(rng, n), "out": np.full(n, -1, np.float32), "count": np.zeros(1, np.int32),
                          "n": n},
     args=("a", "out", "count", "n"), outputs=("out", "count"),
     launch=lambda c: ((1,), (256,), 0),
     reference=lambda c: dict(zip(("out", "count"), _compact(c["a"]))), sizes=(1, 10, 256), tolerance=0.0,
     rules=(reads_at_most("a", 1), writes_at_most("out", 1), one_writer_per_block("count"),
            no_atomics("no atomics: the order of the kept elements must be kept")),
     hints=("Where does a kept element go? Count the kept elements before it.",
            "Give each thread a 0/1 flag (kept or not, 0 past the end), scan the flags in shared memory as in the "
            "prefix-sum puzzle, and turn a kept element's inclusive sum into its place at the front of `out`: how "
            "many kept elements come before it. The scan's last value is the count, written by one thread."))

_add(name="matmul_reg", title="Matrix multiply with register tiling",
     spec="`C = A @ B` again, now with 16 × 16 threads computing a 32 × 32 tile of `C`: each thread computes a "
          "2 × 2 patch in registers, so each value loaded from shared memory is used twice. Any sizes.",
     learn="register tiling: more work per thread, fewer loads per multiply-add",
     stub=_stub("matmul_reg(const float* A, const float* B, float* C, int m, int k, int n)",
                "TODO: 32 x 32 shared tiles of A and B (each thread loads 4 elements of each)\n"
                "TODO: a 2 x 2 accumulator in registers per thread\n"
                "TODO: write the 4 results that are inside C"),
     make=lambda rng, s: {"A": _f32(rng, s[0], s[1]), "B": _f32(rng, s[1], s[2]),
                          "C": np.zeros((s[0], s[2]), np.float32), "m": s[0], "k": s[1], "n": s[2]},
     args=("A", "B", "C", "m", "k", "n"), outputs=("C",),
     launch=lambda c: ((_blocks(c["n"], 32), _blocks(c["m"], 32)), (16, 16), 0),
     reference=lambda c: {"C": (c["A"].astype(np.float64) @ c["B"]).astype(np.float32)},
     sizes=((1, 1, 1), (32, 32, 32), (40, 33, 50), (6, 101, 10)),  # (k = 101: 4 tiles)
     rules=(writes_at_most("C", 4), global_reads_at_most(lambda c: 8 * _blocks(c["k"], 32),
                                                         "at most 8 global reads per thread per 32-wide tile")),
     hints=("A 2 × 2 patch needs 2 values from a row of A's tile and 2 from a column of B's tile per step.",
            "Each thread owns a 2 × 2 patch of the block's 32 × 32 tile of C and keeps its four sums in "
            "registers. Each step along the shared dimension, the 256 threads fill the 32 × 32 tiles of A and B "
            "(four elements each, 0 outside the matrices) and wait; then, for each position along the tiles, "
            "every thread reads the two values of A's tile in its rows and the two of B's tile in its columns and "
            "does the four multiply-adds they allow; wait again before the next tiles. Finally each thread writes "
            "the elements of its patch that lie inside C."))

assert len(PUZZLES) == 20, len(PUZZLES)
BY_NAME = {p.name: p for p in PUZZLES}


def puzzle(key: int | str) -> Puzzle:
    """Puzzle ``key``: its number (1–20) or its kernel's name."""
    if isinstance(key, int) and 1 <= key <= len(PUZZLES):
        return PUZZLES[key - 1]
    if isinstance(key, str) and key in BY_NAME:
        return BY_NAME[key]
    raise ValueError(f"no puzzle {key!r}: use a number from 1 to {len(PUZZLES)} or one of {', '.join(BY_NAME)}")


# --------------------------------------------------------------------------- running and checking


def _launch(p: Puzzle, kernel, case: dict) -> dict:
    """Run ``kernel`` on ``case`` with the puzzle's launch; returns the output arrays (NumPy)."""
    from course import cuda

    xp = cuda.xp
    device = {name: xp.asarray(v) if isinstance(v, np.ndarray) else np.int32(v) for name, v in case.items()}
    grid, block, shared = p.launch(case)
    kernel(grid, block, tuple(device[name] for name in p.args), shared_mem=shared)
    return {name: cuda.asnumpy(device[name]) for name in p.outputs}


def run(key: int | str, source: str, size=None, seed: int = 0) -> dict:
    """Run a puzzle's kernel once (on ``course.cuda``'s current backend) and return its outputs."""
    from course import cuda

    p = puzzle(key)
    case = p.case(size if size is not None else p.sizes[-1], seed)
    return _launch(p, cuda.RawKernel(source, p.name), case)


def _compare(p: Puzzle, got: dict, expected: dict, size) -> str | None:
    for name in p.outputs:
        g, e = np.asarray(got[name]), np.asarray(expected[name])
        if p.tolerance == 0 or e.dtype.kind in "iu":
            bad = g != e
        else:
            bad = ~np.isclose(g, e, rtol=p.tolerance, atol=1e-4)
        if bad.any():
            index = tuple(int(i) for i in np.argwhere(bad)[0])
            where = index if len(index) > 1 else index[0]
            return (f"with size {size}: {int(bad.sum())} of {bad.size} elements of `{name}` are wrong; first at "
                    f"{where}: expected {e[index].item()!r}, got {g[index].item()!r}")
    return None


def check(key: int | str, source: str) -> bool:
    """Check a puzzle's kernel: every size right on the CPU backend, the source rules, the access rules.

    Prints ✅ or ❌ with the first wrong element or the rule broken (thread and line); never raises.
    On a GPU the kernel also runs with CuPy and must give the same answers. The emulator's warnings
    (a variable read before it has a value, say) come after the verdict, pointing at the learner's
    cell; not the ones about blocks that repeat each other's work (elements stored by more than one
    block, a kernel that never uses blockIdx), which the wrong elements show, and which would spell
    out the answer of the blocks puzzles.
    """
    from course import cuda

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", cuda.KernelWarning)
        verdict = _check(key, source)
    shown = set()
    for warning in caught:
        text = str(warning.message)
        if issubclass(warning.category, cuda.KernelWarning) and ("stored by more than one block" in text
                                                                 or "never uses blockIdx" in text):
            continue
        if text not in shown:
            shown.add(text)
            warnings.warn(text, warning.category, stacklevel=2)
    return verdict


# The emulator's hints that would spell out a puzzle's answer, for every puzzle: the diagnosis stays, the
# fix becomes a question (a puzzle's own `spoilers` come first).
_SPOILERS = (
    # a grid-wide index into a block's __shared__ array (the shared-memory puzzles)
    (r"index it with the thread's place in its block, `\w+\[threadIdx\.x\]` \(`threadIdx\.y \* blockDim\.x \+ "
     r"threadIdx\.x` in 2-D\), and keep the grid-wide index for the arrays in global memory\.",
     "which index tells a thread's place within its own block, and which one its element of the whole array?"),
    # row and column swapped in a row-major index (the 2-D puzzles)
    (r"In a row-major array, rows of \w+ elements, the element at row `[^`]+` and column `[^`]+` is `[^`]+` \(row "
     r"times width, plus column\); with the two swapped, the index runs past the end whenever the rows and the "
     r"columns differ in number\.",
     "In a row-major array, where does a row start, and which of your two indices says which row?"),
    # a 2-D index without a guard (the 2-D puzzles): the guard on both coordinates is the answer
    (r"guard the access: `if \(\w+ < \w+ && \w+ < \w+\)`, each coordinate against its own size[^\n]*",
     "guard the access: which rows and columns lie inside the array, and what should the other threads do?"),
    # a tile as large as the block with a halo (the stencil puzzle)
    (r"a tile with a halo of (\d+) needs \d+ \+ \d+ elements there \(\d+ on each side\), as in `\[[^\]]+\]` \(a "
     r"#define such as `TILE \+ 2 \* R`\)\.",
     r"how many extra elements does a halo of \1 add to each dimension of the tile?"),
)


def _check(key: int | str, source: str) -> bool:
    from course import cuda

    try:
        p = puzzle(key)
    except ValueError as error:
        return checks._report(f"puzzle {key!r}", False, str(error))
    name = f"puzzle {p.number} ({p.name})"
    checks.register_hints(name, list(p.hints))
    if isinstance(source, bytes):
        return checks._report(name, False, "the source is bytes: pass it as a str (a Python string of CUDA C, "
                                           "e.g. r\"\"\"extern \"C\" __global__ void ...\"\"\"), not b\"...\"")
    if isinstance(source, str) and (_is_stub(p, source) or not source.strip()):
        return checks.not_attempted(name)
    if not isinstance(source, str) or "__global__" not in source:  # Python code, a function, other text
        return checks.not_a_kernel(name, source, p.name)
    for rule in p.rules:
        broken = rule.broken_in_source(source)
        if broken:
            _hints_for(p, name, rule)
            return checks._report(name, False, f"rule broken: {broken}.")
    backends = ["cpu"] + (["cupy"] if cuda.backend() == "cupy" else [])
    for backend in backends:
        with checks._kernel_backend(backend):
            try:
                kernel = cuda.RawKernel(source, p.name, backend=backend, sanitize=(backend == "cpu"))
                for seed, size in enumerate(s for s in p.sizes for _ in range(ROUNDS[0])):
                    case = p.case(size, seed)
                    expected = p.reference(case)
                    got = _launch(p, kernel, case)
                    wrong = _compare(p, got, expected, size)
                    if wrong:
                        where = "" if backend == "cpu" else " on the GPU (the CPU backend agreed with the reference)"
                        result = checks._report(name, False, wrong + where)
                        _picture_after_run(p, source)
                        return result
            except Exception as error:  # the learner's kernel: compile errors, faults, races
                text = f"{type(error).__name__}: {error}"
                if "shared_mem" in text and re.search(r"\bextern\s+__shared__", source) \
                        and not p.launch(p.case(p.sizes[-1], 0))[2]:
                    text += ("\n(The puzzle launches the kernel itself, without dynamic shared memory: declare an "
                             "array of fixed size, `__shared__ float buffer[32];`, instead of `extern __shared__`.)")
                for pattern, question in (*p.spoilers, *_SPOILERS):
                    text = re.sub(pattern, question, text)
                return checks._report(name, False, text)
    try:
        broken = _trace_rules(p, source)
    except Exception as error:  # the profiled launch faulted (its case differs from the ones above)
        return checks._report(name, False, f"{type(error).__name__}: {error}")
    if broken:
        rule, broken = broken
        _hints_for(p, name, rule)
        result = checks._report(name, False, f"right answer, but a rule is broken: {broken}.")
    else:
        note = f" Rules kept: {'; '.join(r.text for r in p.rules)}." if p.rules else ""
        result = checks._report(name, True, f"right on sizes {', '.join(map(str, p.sizes))}.{note}")
    _picture_after_run(p, source)
    return result


def _picture_after_run(p: Puzzle, source: str) -> None:
    """In a notebook, after a kernel ran to the end: the picture of which thread touched what."""
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:
        return
    if not PICTURES[0] or get_ipython() is None:
        return
    import matplotlib.pyplot as plt

    try:
        fig = show_accesses(p.number, source)
    except Exception as error:  # never let the picture hide the verdict above it
        print(f"(no access picture: {type(error).__name__}: {error})")
        return
    display(fig)
    plt.close(fig)


def _is_stub(p: Puzzle, source: str) -> bool:
    body = _strip_comments(source)
    return re.sub(r"\s+", "", body) == re.sub(r"\s+", "", _strip_comments(p.stub))


def _profile(p: Puzzle, source: str, case: dict):
    """The access profile of one launch of the learner's kernel on `case`, its arguments known by the
    puzzle's names: they go by position, so `map(const float* input, float* output)` is as good as
    the stub's `a` and `out`."""
    from course import cuda

    kernel = cuda.RawKernel(source, p.name, backend="cpu")
    grid, block, shared = p.launch(case)
    args = tuple(np.int32(case[a]) if isinstance(case[a], int) else case[a] for a in p.args)
    profile = kernel.profile(grid, block, args, shared_mem=shared)
    if len(profile.arguments) == len(p.args):
        profile.arguments = tuple(p.args)
    return profile


def _trace_rules(p: Puzzle, source: str) -> tuple[Rule, str] | None:
    """The first access rule the kernel breaks and what broke it (with the thread or line), or None.

    The access rules read ``course.cuda``'s access profile of one launch on the CPU backend.
    """
    from course import cuda

    trace_rules = [r for r in p.rules if r.trace is not None]
    if not trace_rules:
        return None
    case = p.case(p.sizes[-1], len(p.sizes))
    profile = None
    if any(r.marked for r in trace_rules):
        try:  # (its own case: the launch writes its outputs)
            profile = _profile(p, _marked(source), case)
            profile.marked_from = source
        except cuda.CompileError:  # a wrapper the kernel's calls do not fit: the source rule has to do
            case = p.case(p.sizes[-1], len(p.sizes))
    if profile is None:
        profile = _profile(p, source, case)
    for rule in trace_rules:
        broken = rule.trace(profile, case)
        if broken:
            return rule, f"{rule.text} — {broken}"
    return None


def _hints_for(p: Puzzle, name: str, rule: Rule) -> None:
    """After ``rule`` is broken: the puzzle's hints, with the rule's own nudge first where it has one (the
    puzzle's nudge may point at what the kernel already does right)."""
    if rule.nudge:
        checks.register_hints(name, [rule.nudge, *p.hints[1:]])


def show(key: int | str):
    """The puzzle's spec, launch and rules as Markdown, and a picture of the expected result."""
    from IPython.display import Markdown, display

    p = puzzle(key)
    case = p.case(p.sizes[min(1, len(p.sizes) - 1)], 0)
    grid, block, shared = p.launch(case)
    rules = "".join(f"\n- {r.text}" for r in p.rules) or "\n- (none besides the right answer)"
    display(Markdown(f"### Puzzle {p.number} — {p.title}\n\n{p.spec}\n\n**You will learn:** {p.learn}.\n\n"
                     f"**Launch** (for the example below): grid `{grid}`, block `{block}`"
                     f"{f', {shared} bytes of dynamic shared memory' if shared else ''}.\n\n**Rules:**{rules}"))
    return picture(p, case)


def show_accesses(key: int | str, source: str, size=None):
    """Which thread read (and wrote) which element of each array, in one launch of ``source``.

    Reads the access profile of one launch on the CPU backend (a small size, so the picture stays
    legible): one panel per array argument, threads across, elements down; ○ read, ● written.
    """
    import matplotlib.pyplot as plt

    p = puzzle(key)
    if size is None:  # the largest of the puzzle's sizes that still makes a legible picture
        legible = [s for s in p.sizes if np.prod(s) <= 64]
        size = max(legible, key=np.prod) if legible else min(p.sizes, key=np.prod)
    case = p.case(size, 0)
    profile = _profile(p, source, case)
    arrays = [a for a in p.args if isinstance(case[a], np.ndarray)]
    fig, axes = plt.subplots(1, len(arrays), figsize=(4 * len(arrays), 3.4), squeeze=False)
    for ax, name in zip(axes[0], arrays):
        acc = profile.element_accesses(name, case[name].itemsize)
        reads = acc[acc["kind"] == 0]
        writes = acc[acc["kind"] != 0]
        ax.scatter(reads["thread"], reads["element"], s=22, facecolors="none", edgecolors="C0", label="read")
        ax.scatter(writes["thread"], writes["element"], s=10, color="C3", label="written")
        ax.set_title(f"`{name}` ({case[name].size} elements)")
        ax.set_xlabel("thread (global index)")
        ax.set_ylabel("element (flat index)")
        ax.legend(fontsize=7, loc="upper left")
    fig.suptitle(f"Puzzle {p.number} — who touched what, in one launch")
    fig.tight_layout()
    return fig


def picture(p: Puzzle, case: dict):
    """Inputs and expected outputs of one case, as small annotated grids."""
    import matplotlib.pyplot as plt

    arrays = [(n, np.asarray(case[n])) for n in p.args if isinstance(case[n], np.ndarray) and n not in p.outputs]
    expected = p.reference(case)
    arrays += [(f"{n} (expected)", np.asarray(v)) for n, v in expected.items()]
    fig, axes = plt.subplots(1, len(arrays), figsize=(3.2 * len(arrays), 2.6), squeeze=False)
    for ax, (title, a) in zip(axes[0], arrays):
        grid = a.reshape(1, -1) if a.ndim == 1 else a
        ax.imshow(grid.astype(np.float64), cmap="coolwarm", aspect="auto")
        if grid.size <= 64:
            for (r, c), v in np.ndenumerate(grid):
                ax.text(c, r, f"{v:g}", ha="center", va="center", fontsize=7)
        ax.set_title(f"{title} {tuple(a.shape)}")
        ax.set_xlabel("column index")
        ax.set_ylabel("row index" if a.ndim > 1 else "")
        ax.set_yticks([] if a.ndim == 1 else ax.get_yticks())
    fig.suptitle(f"Puzzle {p.number} — {p.title}: inputs and the expected result")
    fig.tight_layout()
    return fig


def scoreboard(namespace: dict) -> dict:
    """Run every puzzle's check on the learner's kernels (``MAP``, ``ZIP``, … in ``namespace``)."""
    import contextlib
    import io

    results, pictures = {}, PICTURES[0]
    PICTURES[0] = False  # the verdicts only
    try:
        for p in PUZZLES:
            source = namespace.get(p.variable)
            with contextlib.redirect_stdout(io.StringIO()):
                ok = check(p.number, source) if isinstance(source, str) else False
            results[p.number] = ok
    finally:
        PICTURES[0] = pictures
    solved = sum(results.values())
    lines = [f"{'✅' if results[p.number] else '⬜'} {p.number:2d}. {p.title}" for p in PUZZLES]
    print("\n".join(lines))
    print(f"\n{solved} of {len(PUZZLES)} puzzles solved.")
    return results
