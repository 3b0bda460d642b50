"""Reading CUDA C source: kernel signatures, constructs the CPU cannot run, and the small
rewrite the CPU backend compiles (notebook 01).

Both backends read each kernel's parameter list from its source, so that arguments are
checked before a launch (CuPy checks none). The CPU backend also rewrites a few things
before compiling the source as C++ after ``runtime.h``:

- pointer parameters of ``__global__`` and ``__device__`` functions become checked pointers
  (``float* x`` → ``__cc_ptr<float> x``), so every access is bounds-checked;
- ``extern __shared__ float s[];`` becomes the launch's dynamic shared memory;
- ``#pragma unroll`` and includes of headers the runtime already provides are blanked out.

No rewrite adds or removes a line, so compiler errors and faults name the learner's own
line numbers.
"""

from __future__ import annotations

import ctypes
import re
from dataclasses import dataclass, field

from .errors import CompileError

__all__ = ["Param", "Kernel", "Source", "parse"]


# ----------------------------------------------------------------------------------------
# Tokens
# ----------------------------------------------------------------------------------------

_TOKEN = re.compile(
    r"""
     (?P<space>[ \t\r\f\v]+|\\\n)
    |(?P<newline>\n)
    |(?P<comment>//[^\n]*|/\*.*?(?:\*/|\Z))
    |(?P<pp>\#(?:[^\n\\]|\\.|\\\n)*)
    |(?P<string>"(?:[^"\\\n]|\\.)*"?)
    |(?P<char>'(?:[^'\\\n]|\\.)*'?)
    |(?P<number>\.?\d(?:[eEpP][+-]|[\w.])*)
    |(?P<ident>[A-Za-z_]\w*)
    |(?P<punct><<=|>>=|::|->|\+\+|--|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^!~<>=]=?|[(){}\[\];,.?:])
    |(?P<other>.)
    """,
    re.S | re.X,
)


@dataclass(frozen=True)
class Token:
    kind: str  # ident, number, string, char, punct, pp (a whole preprocessor line), other
    text: str
    start: int  # character offsets in the source
    end: int
    line: int  # 1-based, as the learner counts lines of the source string


def tokenize(source: str) -> list[Token]:
    """The tokens of ``source``, without whitespace and comments."""
    tokens, line = [], 1
    for match in _TOKEN.finditer(source):
        kind, text = match.lastgroup, match.group()
        if kind not in ("space", "newline", "comment"):
            tokens.append(Token(kind, text, match.start(), match.end(), line))
        line += text.count("\n")
    return tokens


# ----------------------------------------------------------------------------------------
# Types
# ----------------------------------------------------------------------------------------

_LONG = "int64" if ctypes.sizeof(ctypes.c_long) == 8 else "int32"
_SIZE = "uint64" if ctypes.sizeof(ctypes.c_size_t) == 8 else "uint32"

#: C type → NumPy dtype of a scalar or of an array's elements.
SCALAR_DTYPES = {
    "bool": "bool",
    "char": "int8",  # signed, as on a GPU with an x86 host (the CPU backend uses -fsigned-char)
    "signed char": "int8",
    "unsigned char": "uint8",
    "short": "int16",
    "unsigned short": "uint16",
    "int": "int32",
    "unsigned int": "uint32",
    "long": _LONG,
    "unsigned long": "u" + _LONG,
    "long long": "int64",
    "unsigned long long": "uint64",
    "float": "float32",
    "double": "float64",
    "size_t": _SIZE,
    "ptrdiff_t": _SIZE[1:],
    "intptr_t": _SIZE[1:],
    "uintptr_t": _SIZE,
    **{f"int{bits}_t": f"int{bits}" for bits in (8, 16, 32, 64)},
    **{f"uint{bits}_t": f"uint{bits}" for bits in (8, 16, 32, 64)},
}

#: CUDA vector types (pointer parameters only): float4 → four float32 per element.
VECTOR_TYPES = {
    f"{name}{lanes}": (dtype, lanes)
    for name, dtype in [
        ("float", "float32"), ("double", "float64"), ("int", "int32"), ("uint", "uint32"),
        ("short", "int16"), ("ushort", "uint16"), ("char", "int8"), ("uchar", "uint8"),
        ("longlong", "int64"), ("ulonglong", "uint64"),
    ]
    for lanes in (2, 3, 4)
}

_QUALIFIERS = {"const", "volatile", "__restrict__", "__restrict", "restrict", "struct"}
_INTEGER_WORDS = {"unsigned", "signed", "short", "long", "int", "char"}
_TYPE_WORDS = _INTEGER_WORDS | _QUALIFIERS | {"float", "double", "bool", "void"} | set(SCALAR_DTYPES) | set(VECTOR_TYPES)


def _type_name(words: list[str]) -> str:
    """Canonical spelling: ['long', 'unsigned', 'int'] → 'unsigned long'."""
    if words and all(w in _INTEGER_WORDS for w in words):
        unsigned = "unsigned" in words
        if "char" in words:
            return "unsigned char" if unsigned else ("signed char" if "signed" in words else "char")
        longs = words.count("long")
        base = "short" if "short" in words else {0: "int", 1: "long"}.get(longs, "long long")
        return ("unsigned " if unsigned else "") + base
    return " ".join(words)


# ----------------------------------------------------------------------------------------
# Parameters and kernels
# ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Param:
    """One kernel parameter, as declared: ``const float* __restrict__ x`` → pointer to float."""

    name: str
    ctype: str  # the type as written without qualifiers or '*': "float", "unsigned int", "real"
    pointer: bool
    const: bool  # a pointer to const elements
    dtype: str | None  # NumPy dtype of the scalar or of the array elements; None for void*
    lanes: int = 1  # elements of `dtype` per element of a vector type (float4 → 4)

    def __str__(self) -> str:
        return f"{'const ' if self.const else ''}{self.ctype}{'*' if self.pointer else ''} {self.name}"


@dataclass(frozen=True)
class Kernel:
    """An ``extern "C" __global__`` function of the source."""

    name: str
    params: tuple[Param, ...]
    line: int
    uses_barriers: bool = True  # calls __syncthreads() (itself or through __device__ functions)

    def signature(self) -> str:
        return f"{self.name}({', '.join(str(p) for p in self.params)})"


@dataclass
class Source:
    """What the backends need to know about one kernel source string."""

    text: str
    kernels: dict[str, Kernel]
    problems: dict[str, str]  # kernel name → why its parameters cannot be checked
    not_extern_c: set[str]  # __global__ functions without extern "C"
    unsupported: tuple[str, int, str] | None  # (construct, line, what it is)
    uses_barriers: bool
    dynamic_shared: list[str]  # names of extern __shared__ arrays
    cpu_text: str = ""  # the rewritten source the CPU backend compiles
    lines: list[str] = field(default_factory=list)

    def kernel(self, name: str) -> Kernel:
        """The kernel called ``name``, or a CompileError saying what the source defines."""
        if name in self.kernels:
            if name in self.problems:
                raise CompileError(f"kernel '{name}': {self.problems[name]}")
            return self.kernels[name]
        if name in self.not_extern_c:
            raise CompileError(
                f"kernel '{name}' is not declared extern \"C\": CuPy finds a kernel by its C name, "
                f'so write  extern "C" __global__ void {name}(...)'
            )
        found = ", ".join(sorted(self.kernels)) or "none"
        raise CompileError(
            f"the source defines no extern \"C\" __global__ function named '{name}' "
            f"(kernels found: {found})"
        )

    def line_text(self, line: int) -> str:
        """Line ``line`` (1-based) of the learner's source, stripped."""
        return self.lines[line - 1].strip() if 0 < line <= len(self.lines) else ""


# Constructs a CPU that runs one thread at a time cannot emulate, by what they are.
_WARP = "a warp-level intrinsic (the 32 threads of a warp exchanging values in lockstep)"
_UNSUPPORTED_NAMES = {
    **{n: _WARP for n in ("__activemask", "__syncwarp", "__lanemask_lt", "__lanemask_le",
                          "__lanemask_eq", "__lanemask_gt", "__lanemask_ge")},
    **{n: "texture or surface memory" for n in ("cudaTextureObject_t", "cudaSurfaceObject_t")},
    **{n: "cooperative groups" for n in ("cooperative_groups", "this_thread_block", "this_grid",
                                         "tiled_partition", "coalesced_threads", "grid_group",
                                         "thread_block")},
    **{n: "inline PTX assembly" for n in ("asm", "__asm__", "__asm")},
    **{n: "half-precision floats" for n in ("__half", "__half2", "half2", "__nv_bfloat16",
                                            "__nv_bfloat162", "nv_bfloat16")},
    **{n: "tensor-core (WMMA) operations" for n in ("wmma", "nvcuda")},
    "__nanosleep": "__nanosleep (a GPU thread sleeping)",
}
_UNSUPPORTED_PATTERNS = [
    (re.compile(r"__(shfl\w*|ballot\w*|any(_sync)?|all(_sync)?|uni_sync|match_\w+|reduce_\w+_sync)$"), _WARP),
    (re.compile(r"(tex|surf)(1D|2D|3D|Cubemap)\w*$"), "texture or surface memory"),
    (re.compile(r"__(h(add|sub|mul|div|fma|neg|abs|max|min|eq|ne|lt|le|gt|ge|isnan|isinf|sqrt|exp|log"
                r"|sin|cos|rcp)\w*|float2half\w*|half2float\w*|float22half2\w*|half22float2\w*"
                r"|floats2half2\w*|low2float|high2float|float2bfloat16\w*|bfloat162float)$"),
     "half-precision floats"),
    (re.compile(r"__pipeline\w*$|__cluster_dims__$"), "asynchronous copies and thread-block clusters"),
]
_UNSUPPORTED_HEADERS = {
    "cuda_fp16.h": "half-precision floats", "cuda_bf16.h": "half-precision floats",
    "cooperative_groups.h": "cooperative groups", "mma.h": "tensor-core (WMMA) operations",
    "cuda_pipeline.h": "asynchronous copies and thread-block clusters",
}
# Headers runtime.h already provides: their #include is blanked out on the CPU.
_PROVIDED_HEADERS = {
    "stdio.h", "cstdio", "math.h", "cmath", "stdint.h", "cstdint", "stdlib.h", "cstdlib",
    "assert.h", "cassert", "cuda_runtime.h", "cuda.h", "device_launch_parameters.h",
    "math_constants.h", "float.h", "cfloat", "limits.h", "climits", "stddef.h", "cstddef",
}

_BARRIERS = {"__syncthreads", "__syncthreads_count", "__syncthreads_and", "__syncthreads_or"}


def find_unsupported(tokens: list[Token]) -> tuple[str, int, str] | None:
    """The first construct the CPU backend cannot emulate: (spelling, line, what it is)."""
    declared_names = set()  # a variable named `half` is fine; the type `half` is not
    for i, tok in enumerate(tokens):
        if tok.kind == "pp":
            include = re.match(r"#\s*include\s*[<\"]([^>\"]+)[>\"]", tok.text)
            if include and include.group(1).split("/")[-1] in _UNSUPPORTED_HEADERS:
                return include.group(1), tok.line, _UNSUPPORTED_HEADERS[include.group(1).split("/")[-1]]
            continue
        if tok.text == "<<" and i + 1 < len(tokens) and tokens[i + 1].text == "<":
            return "<<<...>>>", tok.line, "a kernel launch from inside a kernel (dynamic parallelism)"
        if tok.kind != "ident":
            continue
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        after = tokens[i + 2] if i + 2 < len(tokens) else None
        if tok.text in _TYPE_WORDS and nxt is not None:  # `int half`: a variable called half
            if nxt.kind == "ident":
                declared_names.add(nxt.text)
            elif nxt.text in ("*", "&") and after is not None and after.kind == "ident":
                declared_names.add(after.text)
        what = _UNSUPPORTED_NAMES.get(tok.text)
        if what is None and tok.text == "texture" and nxt is not None and nxt.text == "<":
            what = "texture or surface memory"
        if what is None and tok.text == "cg" and nxt is not None and nxt.text == "::":
            what = "cooperative groups"
        if what is None and tok.text == "half" and "half" not in declared_names and nxt is not None and (
            nxt.kind == "ident" or nxt.text == "*"
        ):
            what = "half-precision floats"
        if what is None:
            what = next((w for pattern, w in _UNSUPPORTED_PATTERNS if pattern.match(tok.text)), None)
        if what is not None and tok.text not in declared_names:
            return tok.text, tok.line, what
    return None


def _matching(tokens: list[Token], i: int) -> int:
    """Index of the bracket closing the one at tokens[i]."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    opening, closing, depth = tokens[i].text, pairs[tokens[i].text], 0
    for j in range(i, len(tokens)):
        if tokens[j].text == opening:
            depth += 1
        elif tokens[j].text == closing:
            depth -= 1
            if depth == 0:
                return j
    raise CompileError(f"line {tokens[i].line}: '{opening}' is never closed")


def _split_commas(tokens: list[Token]) -> list[list[Token]]:
    parts, depth, current = [], 0, []
    for tok in tokens:
        if tok.text in "([{<" and tok.kind == "punct":
            depth += 1
        elif tok.text in ")]}>" and tok.kind == "punct":
            depth -= 1
        if tok.text == "," and depth == 0:
            parts.append(current)
            current = []
        else:
            current.append(tok)
    if current:
        parts.append(current)
    return parts


@dataclass
class _RawParam:
    name: str | None
    words: list[str]  # type words, qualifiers removed
    stars: int
    const_elements: bool
    const_pointer: bool
    volatile: bool
    array: bool  # declared as x[]
    complex: bool  # references, function pointers, 2-D arrays: left as written
    default: str  # "= 3" of a __device__ parameter, or ""
    start: int
    end: int


def _parse_param(tokens: list[Token], source: str) -> _RawParam | None:
    if not tokens or (len(tokens) == 1 and tokens[0].text == "void"):
        return None
    default = ""
    for k, tok in enumerate(tokens):
        if tok.text == "=":
            default = source[tok.start:tokens[-1].end]
            tokens = tokens[:k]
            break
    start, end = tokens[0].start, tokens[-1].end  # the span a rewrite replaces, `x[]` included
    texts = [t.text for t in tokens]
    complex_ = "&" in texts or "&&" in texts or "(" in texts or texts.count("[") > 1
    array = "[" in texts
    if array:
        tokens = tokens[: texts.index("[")]
        texts = texts[: texts.index("[")]
    name = texts[-1] if len(texts) > 1 and tokens[-1].kind == "ident" and texts[-1] not in _TYPE_WORDS else None
    type_tokens = texts[:-1] if name else texts
    stars = type_tokens.count("*")
    last_star = max((k for k, t in enumerate(type_tokens) if t == "*"), default=-1)
    before, after = type_tokens[: last_star + 1], type_tokens[last_star + 1:]
    words = [t for t in type_tokens if t not in _QUALIFIERS and t != "*"]
    return _RawParam(
        name=name,
        words=words,
        stars=stars + array,
        const_elements="const" in (before if stars else type_tokens),
        const_pointer=stars > 0 and "const" in after,
        volatile="volatile" in type_tokens,
        array=array,
        complex=complex_,
        default=default,
        start=start,
        end=end,
    )


def _aliases(tokens: list[Token]) -> dict[str, list[str]]:
    """typedef / using / #define names for plain types: {'real': ['float']}."""
    aliases = {}
    type_words = _INTEGER_WORDS | {"float", "double", "bool"} | set(SCALAR_DTYPES) | set(VECTOR_TYPES)
    for i, tok in enumerate(tokens):
        if tok.kind == "pp":
            m = re.match(r"#\s*define\s+(\w+)\s+([\w ]+?)\s*$", tok.text)
            if m and all(w in type_words for w in m.group(2).split()):
                aliases[m.group(1)] = m.group(2).split()
        elif tok.text == "typedef":
            j = i + 1
            while j < len(tokens) and tokens[j].text != ";":
                j += 1
            words = [t.text for t in tokens[i + 1: j] if t.text not in _QUALIFIERS]
            if len(words) >= 2 and all(w in type_words or w in aliases for w in words[:-1]):
                aliases[words[-1]] = words[:-1]
        elif tok.text == "using" and i + 2 < len(tokens) and tokens[i + 2].text == "=":
            j = i + 3
            while j < len(tokens) and tokens[j].text != ";":
                j += 1
            words = [t.text for t in tokens[i + 3: j] if t.text not in _QUALIFIERS]
            if words and all(w in type_words or w in aliases for w in words):
                aliases[tokens[i + 1].text] = words
    return aliases


def _resolve(words: list[str], aliases: dict[str, list[str]]) -> list[str]:
    for _ in range(10):  # aliases of aliases, without looping forever
        expanded = [x for w in words for x in aliases.get(w, [w])]
        if expanded == words:
            break
        words = expanded
    return words


def _kernel_param(raw: _RawParam, aliases, kernel: str) -> tuple[Param | None, str | None]:
    """A checked Param, or why this parameter cannot be checked."""
    where = f"parameter {raw.name or '?'}"
    if raw.name is None:
        return None, f"{where} has no name"
    if raw.complex or raw.stars > 1:
        return None, f"{where} has a type the course cannot pass ({' '.join(raw.words)} with " \
                     f"{raw.stars} '*'): pass each array as its own T* parameter"
    spelled = " ".join(raw.words)
    canonical = _type_name(_resolve(raw.words, aliases))
    if raw.stars == 1 and canonical == "void":
        return Param(raw.name, "void", True, raw.const_elements, None), None
    if canonical in SCALAR_DTYPES:
        dtype, lanes = SCALAR_DTYPES[canonical], 1
    elif raw.stars == 1 and canonical in VECTOR_TYPES:
        dtype, lanes = VECTOR_TYPES[canonical]
    else:
        return None, (
            f"{where} has type '{spelled}{'*' if raw.stars else ''}', which the course cannot check: "
            "use float, double, int, unsigned int, long long, unsigned char, ... (or a pointer to one)"
        )
    return Param(raw.name, spelled, raw.stars == 1, raw.const_elements, dtype, lanes), None


def parse(text: str) -> Source:
    """Read a kernel source: its kernels and their parameters, and what the CPU backend needs."""
    tokens = tokenize(text)
    aliases = _aliases(tokens)
    # Which `{` opens an `extern "C" { ... }` block.
    extern_c_depth = []
    inside_extern_c = [False] * len(tokens)
    for i, tok in enumerate(tokens):
        inside_extern_c[i] = any(extern_c_depth)
        if tok.text == "{":
            extern_c_depth.append(i >= 2 and tokens[i - 1].text == '"C"' and tokens[i - 2].text == "extern")
        elif tok.text == "}" and extern_c_depth:
            extern_c_depth.pop()

    kernels, problems, not_extern_c = {}, {}, set()
    replacements: list[tuple[int, int, str]] = []  # (start, end, new text) for the CPU
    bodies: dict[str, set[str]] = {}  # function → identifiers in its body, to find barriers
    body_spans: list[tuple[int, int]] = []
    for i, tok in enumerate(tokens):
        if tok.kind != "ident" or tok.text not in ("__global__", "__device__"):
            continue
        # Find the function name: the identifier before the first '(' that is not an attribute.
        j = i + 1
        while j < len(tokens) and tokens[j].text not in ("(", ";", "=", "{", "["):
            j += 1
            if j < len(tokens) and tokens[j].text == "(" and tokens[j - 1].text in (
                "__launch_bounds__", "__align__", "__attribute__", "alignas"
            ):
                j = _matching(tokens, j) + 1
        if j >= len(tokens) or tokens[j].text != "(" or tokens[j - 1].kind != "ident":
            continue  # a __device__ variable, not a function
        name_tok, close = tokens[j - 1], _matching(tokens, j)
        body = close + 1
        while body < len(tokens) and tokens[body].text not in ("{", ";"):
            body += 1  # skip `const`, attributes, ... up to the body
        if body < len(tokens) and tokens[body].text == "{":
            end = _matching(tokens, body)
            bodies.setdefault(name_tok.text, set()).update(
                t.text for t in tokens[body:end] if t.kind == "ident")
            body_spans.append((body, end))
        raws = [_parse_param(p, text) for p in _split_commas(tokens[j + 1: close])]
        raws = [r for r in raws if r is not None]
        for raw in raws:  # checked pointers for every T* parameter
            if raw.stars == 1 and not raw.complex and _resolve(raw.words, aliases) != ["void"]:
                element = ("const " if raw.const_elements else "") + ("volatile " if raw.volatile else "")
                new = f"{'const ' if raw.const_pointer else ''}__cc_ptr<{element}{' '.join(raw.words)}> " \
                      f"{raw.name or ''}{' ' + raw.default if raw.default else ''}"
                replacements.append((raw.start, raw.end, new + "\n" * text.count("\n", raw.start, raw.end)))
        if tok.text != "__global__":
            continue
        # Walk back to the start of the declaration to look for extern "C".
        k = i - 1
        while k >= 0 and tokens[k].text not in (";", "{", "}") and tokens[k].kind != "pp":
            k -= 1
        prefix = [t.text for t in tokens[k + 1: j - 1]]
        extern_c = inside_extern_c[i] or any(
            a == "extern" and b == '"C"' for a, b in zip(prefix, prefix[1:])
        )
        name = name_tok.text
        if not extern_c:
            not_extern_c.add(name)
            continue
        if close + 1 < len(tokens) and tokens[close + 1].text == ";" and name in kernels:
            continue  # a prototype of a kernel already read
        if "void" not in prefix:
            problems[name] = "a __global__ function must return void"
        params = []
        for raw in raws:
            param, problem = _kernel_param(raw, aliases, name)
            if problem:
                problems.setdefault(name, problem)
            else:
                params.append(param)
        kernels[name] = Kernel(name, tuple(params), name_tok.line)

    # A kernel needs barrier support if it, or a function it calls, uses __syncthreads. A
    # barrier outside every function body we found (in a macro, say) counts for all kernels.
    uses = {name for name, idents in bodies.items() if idents & _BARRIERS}
    changed = True
    while changed:
        grown = {name for name, idents in bodies.items() if idents & uses} | uses
        changed, uses = grown != uses, grown
    stray = any(
        t.kind == "pp" and any(b in t.text for b in _BARRIERS)
        or (t.text in _BARRIERS and not any(a <= i <= b for a, b in body_spans))
        for i, t in enumerate(tokens)
    )
    for name, k in kernels.items():
        kernels[name] = Kernel(k.name, k.params, k.line, stray or name in uses)

    dynamic_shared = []
    for i, tok in enumerate(tokens):
        if tok.kind == "pp":
            directive = re.match(r"#\s*(\w+)\s*[<\"]?([^>\"\s]*)", tok.text)
            blank = directive and (
                (directive.group(1) == "pragma" and directive.group(2) == "unroll")
                or (directive.group(1) == "include" and directive.group(2) in _PROVIDED_HEADERS)
            )
            if blank:
                replacements.append((tok.start, tok.end, "\n" * tok.text.count("\n")))
        elif tok.text == "extern" and i + 1 < len(tokens) and tokens[i + 1].text in ("__shared__", "__align__"):
            end = i
            while end < len(tokens) and tokens[end].text != ";":
                end += 1
            words, k = [], i + 1
            while k < end and tokens[k].text != "[":
                if tokens[k].text in ("__align__", "__attribute__", "alignas"):
                    k = _matching(tokens, k + 1) + 1
                    continue
                if tokens[k].text not in ("__shared__", "extern"):
                    words.append(tokens[k].text)
                k += 1
            if len(words) < 2 or end >= len(tokens):
                continue
            name = words[-1]
            dynamic_shared.append(name)
            new = f"static __cc_dynamic_shared<{' '.join(words[:-1])}> {name};"
            replacements.append((tok.start, tokens[end].end, new + "\n" * text.count("\n", tok.start, tokens[end].end)))

    cpu_text, position = [], 0
    for start, end, new in sorted(replacements):
        if start < position:
            continue  # overlapping rewrites cannot happen in valid code; keep the first
        cpu_text.append(text[position:start])
        cpu_text.append(new)
        position = end
    cpu_text.append(text[position:])

    return Source(
        text=text,
        kernels=kernels,
        problems=problems,
        not_extern_c=not_extern_c - set(kernels),
        unsupported=find_unsupported(tokens),
        uses_barriers=any(t.kind == "ident" and t.text in _BARRIERS for t in tokens),
        dynamic_shared=dynamic_shared,
        cpu_text="".join(cpu_text),
        lines=text.split("\n"),
    )
