"""Reading CUDA C source: kernel signatures, constructs the CPU cannot run, and the small
rewrite the CPU backend compiles (notebook 01).

Both backends read each kernel's parameter list from its source, so that arguments are
checked before a launch (CuPy checks none). The CPU backend also rewrites a few things
before compiling the source as C++ after ``runtime.h``:

- a macro whose body reads or writes memory (``#define PUT(a, i, v) a[i] = v``) is expanded
  where it is used, and ``__shared__ float a[8], b[8];`` becomes one declaration per array, so
  that the rewrites below see them;
- pointer parameters of ``__global__`` and ``__device__`` functions, local pointer variables
  pointer casts (C casts, ``reinterpret_cast``, ``const_cast``) and the pointer members of
  structs built in device code, file-scope ``__device__ float* g;`` variables (also with an
  initializer, ``= table + 2``) and ``__shared__ float* p;`` ones become checked pointers
  (``float* x`` → ``__cc_ptr<float> x``), and so do the type-ids that name a stored pointer
  (``sizeof(float*)``, ``new float*[n]``, ``(float**)malloc(...)``), so every access through a
  pointer derived from an argument array is bounds-checked (structs whose bytes come from the
  host, as kernel parameters or ``__constant__`` variables, keep their layout);
- ``__shared__``, local and file-scope ``__constant__``/``__device__`` arrays get a checked view,
  and so does a ``__device__`` function's array reference parameter (``float (&r)[4]``, or
  ``T (&r)[N]`` of a template); a pointer made from a row, ``float* p = tile[0];``, keeps the
  whole array's bounds, as on a GPU;
- a template ``__device__`` function's ``T*`` parameters take any pointer-like argument and
  deduce ``T`` without its ``const``; its prototype, if any, gets the same rewrite, and each
  overload its own;
- every access is wrapped for the sanitizer (``s[i] = v`` → ``__cc_w(s[i]) = v``), the uses of
  references included;
- ``extern __shared__ float s[];`` becomes the launch's dynamic shared memory;
- ``#pragma unroll`` and includes of headers the runtime already provides are blanked out;
- the body of a function that uses something the CPU cannot run (inline PTX, textures, ...)
  is emptied, so that only the kernels that call it are refused.

No rewrite adds or removes a line, so compiler errors and faults name the learner's own
line numbers. ``#if``/``#ifdef`` blocks are read as the compiler will (``__CUDA_ARCH__`` is
``EMULATED_ARCH``), so a construct in a block the preprocessor drops refuses nothing.
"""

from __future__ import annotations

import bisect
import ctypes
import dataclasses
import difflib
import re
from dataclasses import dataclass, field

from .errors import CompileError

__all__ = ["Param", "Kernel", "Source", "parse", "instantiate", "EMULATED_ARCH"]

#: The GPU architecture the CPU backend emulates: __CUDA_ARCH__ is 800 (sm_80, Ampere), so
#: `#if __CUDA_ARCH__ >= 800` code is compiled, as on an A100.
EMULATED_ARCH = 800
#: Macros NVRTC (and so CuPy) defines, which the CPU backend defines too (runtime.h).
PREDEFINED = {"__CUDA_ARCH__": str(EMULATED_ARCH), "__CUDACC__": "1", "__CUDACC_RTC__": "1",
              "__CUDACC_VER_MAJOR__": "12", "__CUDACC_VER_MINOR__": "0", "CUDART_VERSION": "12000",
              "CUDA_VERSION": "12000", "__cplusplus": "201703"}


# ----------------------------------------------------------------------------------------
# Tokens
# ----------------------------------------------------------------------------------------

_TOKEN = re.compile(
    r"""
     (?P<space>[ \t\r\f\v]+|\\\n)
    |(?P<newline>\n)
    |(?P<comment>//[^\n]*|/\*.*?(?:\*/|\Z))
    |(?P<pp>\#(?:[^\n\\/]|\\.|\\\n|/(?![/*])|/\*.*?\*/)*)
    |(?P<string>"(?:[^"\\\n]|\\.)*"?)
    |(?P<char>'(?:[^'\\\n]|\\.)*'?)
    |(?P<number>\.?\d(?:[eEpP][+-]|[\w.]|'(?=[0-9A-Fa-f]))*)
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


def without_comments(source: str) -> str:
    """``source`` with each comment a space (its newlines kept, so lines keep their numbers); a ``//`` inside a
    string or a character literal is no comment."""
    return _TOKEN.sub(lambda m: " " + "\n" * m.group().count("\n") if m.lastgroup == "comment" else m.group(), source)


# ----------------------------------------------------------------------------------------
# The preprocessor's #if blocks, as far as they can be decided here
# ----------------------------------------------------------------------------------------

def _define_options(options) -> dict[str, str]:
    """-DNAME=VALUE / --define-macro=NAME=VALUE options → {NAME: VALUE} ("1" without a value)."""
    defines, options = {}, list(options)
    for i, option in enumerate(options):
        value = None
        if option.startswith("--define-macro="):
            value = option.split("=", 1)[1]
        elif option.startswith("-D") and len(option) > 2:
            value = option[2:]
        elif option in ("-D", "--define-macro") and i + 1 < len(options):
            value = options[i + 1]
        if value:
            name, _, text = value.partition("=")
            defines[name.strip()] = text.strip() if _ else "1"
    return defines


def _evaluate(expression: str, defines: dict) -> bool | None:
    """The value of an #if expression, or None when it cannot be decided here."""
    expression = re.sub(r"/\*.*?\*/|//.*", " ", expression)
    expression = re.sub(r"\bdefined\s*\(\s*(\w+)\s*\)|\bdefined\s+(\w+)",
                        lambda m: " 1 " if (m.group(1) or m.group(2)) in defines else " 0 ", expression)

    if re.search(r"\b[A-Za-z_]\w*\s*\(", expression):
        return None  # a function-like macro: only the compiler knows

    def value(match):
        name = match.group()
        if name not in defines:
            return " 0 "  # an undefined name is 0 in #if, as in C
        text = defines[name].strip()
        text = re.sub(r"(?<=\d)[uUlL]+\b", "", text)
        return f" ({text}) " if re.fullmatch(r"[-+]?(0x[0-9a-fA-F]+|\d+)", text) else " @ "
    expression = re.sub(r"\b[A-Za-z_]\w*\b", value, expression)
    expression = re.sub(r"(?<=[0-9a-fA-F])[uUlL]+\b", "", expression)
    if "@" in expression or not re.fullmatch(r"[\s\d()xXa-fA-F<>=!&|+\-*/%~^]*", expression):
        return None
    expression = expression.replace("&&", " and ").replace("||", " or ")
    expression = re.sub(r"!(?!=)", " not ", expression).replace("/", "//")
    try:
        return bool(eval(expression, {"__builtins__": {}}, {}))  # digits and operators only
    except Exception:
        return None


def _live_tokens(tokens: list[Token], defines: dict) -> list[bool]:
    """Whether each token survives the preprocessor's #if/#ifdef blocks (True when undecidable)."""
    defines = dict(defines)
    live, stack, current = [], [], True  # stack: (live before the block, a branch was taken, decided)
    for tok in tokens:
        if tok.kind != "pp":
            live.append(current)
            continue
        live.append(True)
        m = re.match(r"#\s*(\w+)\s*(.*)", tok.text, re.S)
        if not m:
            continue
        directive, rest = m.group(1), m.group(2).replace("\\\n", " ").strip()
        if directive in ("if", "ifdef", "ifndef"):
            if directive == "if":
                decided = _evaluate(rest, defines)
            else:
                name = rest.split()[0] if rest.split() else ""
                decided = (name in defines) == (directive == "ifdef")
            stack.append((current, bool(decided), decided is not None))
            current = current and decided is not False
        elif directive in ("elif", "else") and stack:
            before, taken, decided = stack[-1]
            if not decided:
                current = before
                continue
            if directive == "else":
                value = not taken
            else:
                result = _evaluate(rest, defines)
                if result is None:
                    stack[-1] = (before, taken, False)
                    current = before and not taken
                    continue
                value = not taken and result
            stack[-1] = (before, taken or value, decided)
            current = before and value
        elif directive == "endif" and stack:
            current = stack.pop()[0]
        elif current and directive == "define":
            d = re.match(r"(\w+)(\([^)]*\))?\s*(.*)", rest, re.S)
            if d and not d.group(2):
                defines[d.group(1)] = d.group(3).strip() or "1"
        elif current and directive == "undef":
            defines.pop(rest.split()[0] if rest.split() else "", None)
    return live


# ----------------------------------------------------------------------------------------
# Before the rewrite: macros that hide memory accesses, and several arrays in one declaration
# ----------------------------------------------------------------------------------------

# A macro whose body contains one of these may read or write memory where its callers cannot
# see it (`#define STORE(a, i, v) a[i] = v`): the CPU backend expands it, so that its accesses
# are bounds-checked, noted by the sanitizer and named by the learner's line like any other.
_ACCESS_MARKS = {"[", "->", "++", "--", "=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="}


@dataclass(frozen=True)
class _Macro:
    params: tuple[str, ...] | None  # None: an object-like macro
    body: tuple[str, ...]  # its tokens' texts
    expandable: bool  # hides an access, and uses no #, ## or variadic arguments


def _macro_of(directive: str) -> tuple[str, _Macro] | None:
    m = re.match(r"#\s*define\s+([A-Za-z_]\w*)(\([^)]*\))?", directive)
    if not m:
        return None
    # `a ## b` (pasting) and `#p` (a parameter as a string) as words of their own: the tokenizer would
    # read `#` as the start of a directive
    parts = re.split(r"(\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*')", directive[m.end():].replace("\\\n", " "))
    for k in range(0, len(parts), 2):  # (outside string and character literals)
        parts[k] = re.sub(r"#\s*([A-Za-z_]\w*)", r" __CC_STRING__ \1", re.sub(r"\s*##\s*", " __CC_PASTE__ ", parts[k]))
    body = tokenize("".join(parts))
    params = None
    ok = not any(t.kind in ("pp", "other") or t.text == "__VA_ARGS__" for t in body)
    if m.group(2) is not None:
        inside = m.group(2)[1:-1].strip()
        params = tuple(p.strip() for p in inside.split(",")) if inside else ()
        ok = ok and all(re.fullmatch(r"[A-Za-z_]\w*", p) for p in params)
    depth = 0
    for t in body:
        if t.kind == "punct" and t.text in "([{":
            depth += 1
        elif t.kind == "punct" and t.text in ")]}":
            depth -= 1
            ok = ok and depth >= 0
    # (and a macro that declares a kernel, `#define GLOBAL extern "C" __global__`, `#define KERNEL(name)
    # extern "C" __global__ void name(float* y, int n)`: the kernel is found where it is used)
    ok = ok and depth == 0 and any(t.text in _ACCESS_MARKS or t.text in ("__global__", "__CC_PASTE__") for t in body)
    return m.group(1), _Macro(params, tuple(t.text for t in body), ok)


def _call_arguments(tokens: list[Token], open_: int) -> tuple[list[tuple[int, int]], int] | None:
    """The (first, last + 1) token ranges of a call's arguments (a macro's or a function's), and the
    index of its `)`; None when the call does not close before the statement ends."""
    depth, parts, first = 0, [], open_ + 1
    for j in range(open_, len(tokens)):
        t = tokens[j]
        if t.kind == "pp" or t.text == ";" and depth == 1:
            return None
        if t.kind == "punct" and t.text in "([{":
            depth += 1
        elif t.kind == "punct" and t.text in ")]}":
            depth -= 1
            if depth == 0:
                parts.append((first, j))
                return parts, j
        elif t.text == "," and depth == 1:
            parts.append((first, j))
            first = j + 1
    return None


def _expand_text(text: str, macros: dict[str, _Macro], hidden: frozenset = frozenset(), depth: int = 0,
                 defines: dict | None = None) -> str:
    """`text` with the expandable macros in it expanded (C's rescanning, `hidden` excluded). With
    `defines` (a whole source): its #define and #undef lines update `macros` as they come, blocks
    the preprocessor drops stay as written, and each expansion keeps its lines' newlines."""
    tokens = tokenize(text)
    if defines is None and (depth > 32 or not any(t.text in macros and t.text not in hidden for t in tokens)):
        return text
    live = _live_tokens(tokens, defines) if defines is not None else None
    out, position, i = [], 0, 0
    while i < len(tokens):
        tok = tokens[i]
        if live is not None and (not live[i] or tok.kind == "pp"):
            if live[i]:
                _track_directive(tok.text, macros)
            i += 1
            continue
        found = _expansion_at(tokens, i, text, macros, hidden, depth)
        if found is None:
            i += 1
            continue
        end, new = found
        last = tokens[end - 1].end
        if live is not None:  # the learner's line numbers stay
            new = new.replace("\n", " ") + "\n" * text.count("\n", tok.start, last)
        out += [text[position:tok.start], new]
        position, i = last, end
    out.append(text[position:])
    return "".join(out)


def _track_directive(directive: str, macros: dict[str, _Macro]) -> None:
    found = _macro_of(directive)
    if found:
        macros[found[0]] = found[1]
    undef = re.match(r"#\s*undef\s+(\w+)", directive)
    if undef:
        macros.pop(undef.group(1), None)


def _expansion_at(tokens, i, text, macros, hidden, depth) -> tuple[int, str] | None:
    """A use of an expandable macro at tokens[i]: (the token after it, its expansion)."""
    tok = tokens[i]
    macro = macros.get(tok.text)
    if tok.kind != "ident" or macro is None or tok.text in hidden or (i > 0 and tokens[i - 1].text in (".", "->", "::")):
        return None
    if not macro.expandable and not (
            # an X-macro: `#define OPS(X) X(add, +) X(sub, -)` calls its parameter, and `#define LIST
            # X(a) X(b)` a macro that is expanded (one that declares a kernel, say)
            any(t in (macro.params or ()) and k + 1 < len(macro.body) and macro.body[k + 1] == "("
                for k, t in enumerate(macro.body))
            or any(t != tok.text and t in macros and macros[t].expandable for t in macro.body)):
        return None
    inner = hidden | {tok.text}
    if macro.params is None:
        return i + 1, " " + _expand_text(" ".join(macro.body), macros, inner, depth + 1) + " "
    if i + 1 >= len(tokens) or tokens[i + 1].text != "(":
        return None
    found = _call_arguments(tokens, i + 1)
    if found is None:
        return None
    parts, close = found
    args = [text[tokens[a].start:tokens[b - 1].end] if b > a else "" for a, b in parts]
    if args == [""] and not macro.params:
        args = []
    if len(args) != len(macro.params):
        return None
    values = dict(zip(macro.params, (_expand_text(a, macros, hidden, depth + 1).replace("\n", " ") for a in args)))
    written = dict(zip(macro.params, (a.replace("\n", " ").strip() for a in args)))  # (`#` and `##` take them as written)
    words, k = [], 0
    body = macro.body
    while k < len(body):
        t = body[k]
        if t == "__CC_STRING__" and k + 1 < len(body) and body[k + 1] in written:
            words.append('"' + written[body[k + 1]].replace("\\", "\\\\").replace('"', '\\"') + '"')
            k += 2
            continue
        if t == "__CC_PASTE__" and words and k + 1 < len(body):
            words[-1] = words[-1] + written.get(body[k + 1], body[k + 1])
            k += 2
            continue
        pasted = k + 1 < len(body) and body[k + 1] == "__CC_PASTE__"
        words.append((written if pasted else values).get(t, t))
        k += 1
    return close + 1, " " + _expand_text(" ".join(words), macros, inner, depth + 1) + " "


def _prepare(text: str, defines: dict) -> str:
    """The source the rewrite reads: the same lines, with the macros that hide memory accesses
    expanded where they are used, `__shared__ float a[8], b[8];` split into one declaration
    per array (`__shared__ float a[8]; __shared__ float b[8];`), and an asm statement that reads
    one of PTX's special registers made a call (_ptx_special_registers)."""
    return _split_declarations(_canonical_shared(_own_half_names(_ptx_special_registers(
        _long_double_as_double(_expand_text(text, {}, defines=defines))))), defines)


def _long_double_as_double(text: str) -> str:
    """`long double` is double in device code (NVRTC: "'long double' is treated as 'double' in device
    code"): the source's `long double` becomes `double`, and a floating literal's L suffix (1e-17L) goes,
    so that its arithmetic is in double here too, not in x87's 80 bits. (runtime.h's own helpers keep it.)"""
    if "long" not in text and "L" not in text:
        return text
    tokens = tokenize(text)
    out, at = [], 0
    for i, tok in enumerate(tokens):
        if tok.kind == "ident" and tok.text == "long" and i + 1 < len(tokens) and tokens[i + 1].text == "double":
            out += [text[at:tok.start], "\n" * text.count("\n", tok.start, tokens[i + 1].start)]
            at = tokens[i + 1].start  # (`long double` → `double`)
        elif tok.kind == "ident" and tok.text == "double" and i + 1 < len(tokens) and tokens[i + 1].text == "long":
            out += [text[at:tok.end], "\n" * text.count("\n", tok.end, tokens[i + 1].end)]
            at = tokens[i + 1].end  # (`double long`)
        elif tok.kind == "number" and tok.text[-1] in "lL" and (
                "p" in tok.text.lower() if tok.text[:2].lower() == "0x" else re.search(r"[.eE]", tok.text)):
            out += [text[at:tok.end - 1]]
            at = tok.end
        elif tok.kind == "pp" and re.search(r"\blong\s+double\b", tok.text):  # (#define REAL long double)
            out += [text[at:tok.start], re.sub(r"\blong\s+double\b", "double", tok.text)]
            at = tok.end
    if not out:
        return text
    return "".join(out) + text[at:]


def _ptx_special_registers(text: str) -> str:
    """`asm("mov.u32 %0, %%laneid;" : "=r"(lane));` (the samples' way of reading the lane, the lane masks
    of warp-aggregated atomics, %clock64) → `lane = __cc_ptx_laneid();`, on the same lines. Only a read of
    one register into one variable, with the register's width: any other asm stays, and is refused."""
    if "asm" not in text:
        return text

    def call(found: re.Match) -> str:
        register, letter, target = found.groups()
        if (letter == "l") != (register in _PTX_WIDE):
            return found.group(0)  # (a 64-bit register into a 32-bit operand, or the other way: left to nvcc)
        return f"{target} = __cc_ptx_{register}();" + "\n" * found.group(0).count("\n")

    # (and `asm("trap;");`, `asm volatile("brkpt;");`: CUDA C's __trap() and __brkpt())
    text = re.sub(r"\basm\s*(?:volatile\s*|__volatile__\s*)?\(\s*\"\s*(trap|brkpt)\s*;?\s*\"\s*\)",
                  lambda m: f"__{m.group(1)}()", text)
    return _PTX_MOVE.sub(call, text)


def _canonical_shared(text: str) -> str:
    """`__shared__` declarations with their words in the order the rewrite reads: `extern float
    __shared__ s[];` (the threadFenceReduction sample), `__shared__ extern float s[];` →
    `extern __shared__ float s[];`; `__device__ __shared__ float s[64];` (both are allowed) →
    `__shared__ float s[64];`; alignment specifiers among or after the words (`float __align__(16)
    s[64]`, `s[64] __attribute__((aligned(16)))`) → right after `__shared__`. Only one-line
    declarations; the line's length may change, never the line count."""
    if "__shared__" not in text:
        return text
    tokens = tokenize(text)
    edits = []
    for at, tok in enumerate(tokens):
        if tok.text != "__shared__":
            continue
        start = at
        while start > 0 and tokens[start - 1].text not in (";", "{", "}") and tokens[start - 1].kind != "pp":
            start -= 1
        words, groups, k = [], [], start
        while k < len(tokens):  # the specifiers and type words, up to the declarator's `[`, `;`, `=` or `,`
            if tokens[k].text in _ALIGNMENT_WORDS and k + 1 < len(tokens) and tokens[k + 1].text == "(":
                close = _matching(tokens, k + 1)
                groups.append((k, close))
                k = close + 1
            elif tokens[k].kind == "ident":
                words.append(k)
                k += 1
            else:
                break
        if k >= len(tokens) or tokens[k].text not in ("[", ";", "=", ",") or len(words) < 3:
            continue
        name, end = words[-1], k
        while end < len(tokens) and tokens[end].text == "[":
            end = _matching(tokens, end) + 1
        trailing = []  # `s[64] __attribute__((aligned(16)))`
        while end + 1 < len(tokens) and tokens[end].text in _ALIGNMENT_WORDS and tokens[end + 1].text == "(":
            trailing.append((end, _matching(tokens, end + 1)))
            end = trailing[-1][1] + 1
        if end >= len(tokens) or tokens[end].line != tokens[start].line or tokens[end].text not in (";", "=", ","):
            continue
        texts = [tokens[w].text for w in words[:-1]]
        others = [tokens[w].text for w in words[:-1] if tokens[w].text not in ("__shared__", "extern", "__device__")]
        aligned = [text[tokens[a].start:tokens[c].end] for a, c in groups + trailing]
        wanted = (["extern"] if "extern" in texts else []) + ["__shared__"] + aligned + others
        written = sorted([(w, tokens[w].text) for w in words[:-1]] + [(a, text[tokens[a].start:tokens[c].end])
                                                                       for a, c in groups])
        if trailing or [piece for _, piece in written] != wanted:
            edits.append((tokens[start].start, tokens[name].start, " ".join(wanted) + " "))
            edits += [(tokens[a].start, tokens[c].end, "") for a, c in trailing]
    out, position = [], 0
    for begin, finish, new in sorted(set(edits)):
        if begin < position:
            continue
        out += [text[position:begin], new]
        position = finish
    out.append(text[position:])
    return "".join(out)


# cuda_fp16.h's and cuda_bf16.h's short type names, which runtime.h always defines: a source that
# does not include those headers may use the names for its own functions and variables.
_HALF_NAMES = {"half": "cuda_fp16.h", "half2": "cuda_fp16.h", "nv_bfloat16": "cuda_bf16.h",
               "nv_bfloat162": "cuda_bf16.h"}


def _own_half_names(text: str) -> str:
    """`__device__ float half(float v)` (no cuda_fp16.h): the source's own `half` is renamed
    `__cc_user_half` everywhere, so that it does not clash with runtime.h's type."""
    if not any(name in text for name in _HALF_NAMES):
        return text
    tokens = tokenize(text)
    included = {m.group(1) for t in tokens if t.kind == "pp"
                for m in [re.match(r"#\s*include\s*[<\"]([^>\"]+)", t.text)] if m}
    own, scopes = set(), []  # scopes: per open `{`, whether it opens a namespace or extern "C" block
    for i, tok in enumerate(tokens):
        if tok.text == "{":
            scopes.append(i >= 1 and (tokens[i - 1].text == '"C"' or (i >= 2 and tokens[i - 2].text == "namespace")))
        elif tok.text == "}":
            scopes = scopes[:-1]
        elif tok.text in _HALF_NAMES and _HALF_NAMES[tok.text] not in included and 0 < i < len(tokens) - 1 \
                and (tokens[i - 1].kind == "ident" or tokens[i - 1].text in ("*", "&")) \
                and tokens[i + 1].text in ("(", ";", "=", "[", ",") and all(scopes):  # (a file-scope name)
            own.add(tok.text)
    if not own:
        return text
    out, at = [], 0
    for tok in tokens:
        if tok.kind == "ident" and tok.text in own:
            out += [text[at:tok.start], f"__cc_user_{tok.text}"]
            at = tok.end
    return "".join(out) + text[at:]


def _split_declarations(text: str, defines: dict) -> str:
    tokens = tokenize(text)
    live = _live_tokens(tokens, defines)
    edits = []
    for i, tok in enumerate(tokens):
        if not live[i] or tok.kind != "ident" or tok.text in _NOT_DECLARATION \
                or (i > 0 and tokens[i - 1].text not in (";", "{", "}") and tokens[i - 1].kind != "pp"):
            continue
        j = i
        while j < len(tokens) and tokens[j].kind == "ident" and tokens[j].text not in _NOT_DECLARATION:
            if tokens[j].text in _ALIGNMENT_WORDS and j + 1 < len(tokens) and tokens[j + 1].text == "(":
                j = _matching(tokens, j + 1)  # `__shared__ __align__(16) float a[64], b[64];`
            j += 1
        if j >= len(tokens) or j == i:
            continue
        if tokens[j].text == "*":
            type_end = j  # `float *p, *q;`
        elif j - i >= 2 and tokens[j].text in ("[", "=", ","):
            type_end = j - 1  # `float a[4], b[4];`
        else:
            continue
        parts, depth, k, angle = [], 0, type_end, False
        while k < len(tokens):
            t = tokens[k]
            if t.kind == "pp" or (t.text in ("{",) and depth == 0 and tokens[k - 1].text != "="):
                break
            if t.kind == "punct" and t.text in "([{":
                depth += 1
            elif t.kind == "punct" and t.text in ")]}":
                depth -= 1
            elif t.text in ("<", ">", ">>"):
                angle = True
            elif t.text == "," and depth == 0:
                parts.append(k)
            elif t.text == ";" and depth == 0:
                break
            k += 1
        if k >= len(tokens) or tokens[k].text != ";" or not parts or angle or depth:
            continue
        starts = [type_end] + [c + 1 for c in parts]
        arrays = any(tokens[s].text == "*" or (s + 1 < k and tokens[s].kind == "ident" and tokens[s + 1].text == "[")
                     for s in starts)
        if not (arrays or any(t.text in ("__shared__", "__constant__", "__device__", "__managed__")
                              for t in tokens[i:type_end])):
            continue  # (`__constant__ float c0, c1;`: one declaration each, so that get_global finds both)
        prefix = text[tok.start:tokens[type_end - 1].end].replace("\n", " ")
        for c in parts:
            edits.append((tokens[c].start, tokens[c].end, f"; {prefix} "))
    out, position = [], 0
    for start, end, new in edits:
        out += [text[position:start], new]
        position = end
    out.append(text[position:])
    return "".join(out)


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
    "uint": "uint32",  # CUDA's own short names (sm headers, many samples)
    "ushort": "uint16",
    "uchar": "uint8",
    "ulong": "u" + _LONG,
    **{f"int{bits}_t": f"int{bits}" for bits in (8, 16, 32, 64)},
    **{f"uint{bits}_t": f"uint{bits}" for bits in (8, 16, 32, 64)},
}

#: Half-precision element types: NumPy dtype name and lanes (bfloat16 arrives as uint16 bits).
HALF_TYPES = {
    "__half": ("float16", 1), "half": ("float16", 1), "__half2": ("float16", 2), "half2": ("float16", 2),
    "__nv_bfloat16": ("bfloat16", 1), "nv_bfloat16": ("bfloat16", 1),
    "__nv_bfloat162": ("bfloat16", 2), "nv_bfloat162": ("bfloat16", 2),
}

#: CUDA vector types: float4 → four float32 per element.
VECTOR_TYPES = {
    f"{name}{lanes}": (dtype, lanes)
    for name, dtype in [
        ("float", "float32"), ("double", "float64"), ("int", "int32"), ("uint", "uint32"),
        ("short", "int16"), ("ushort", "uint16"), ("char", "int8"), ("uchar", "uint8"),
        ("long", _LONG), ("ulong", "u" + _LONG),
        ("longlong", "int64"), ("ulonglong", "uint64"),
    ]
    for lanes in (1, 2, 3, 4)
}

_QUALIFIERS = {"const", "volatile", "__restrict__", "__restrict", "restrict", "struct", "class", "typename",
               "__grid_constant__"}
_INTEGER_WORDS = {"unsigned", "signed", "short", "long", "int", "char"}
_TYPE_WORDS = (_INTEGER_WORDS | _QUALIFIERS | {"float", "double", "bool", "void", "auto"} | set(SCALAR_DTYPES)
               | set(VECTOR_TYPES) | set(HALF_TYPES))


def _common(values: set):
    """The one value of `values`, or None (none, several, or None among them)."""
    return next(iter(values)) if len(values) == 1 else None


def _element_dtype(name: str) -> tuple[str | None, int]:
    """NumPy dtype and lanes of a C type's canonical name: 'float4' → ('float32', 4); None for a
    struct, or a type only the compiler knows."""
    if name in SCALAR_DTYPES:
        return SCALAR_DTYPES[name], 1
    return VECTOR_TYPES.get(name) or HALF_TYPES.get(name) or (None, 1)


def _item_bytes(words: list[str]) -> int | None:
    """Bytes of one element of a C type spelled in words (`unsigned char`, `float4`, `__half`), or
    None for a type this module does not size (a struct)."""
    import numpy as np

    words = [w for w in words if w not in _QUALIFIERS]
    dtype, lanes = _element_dtype(_type_name(words) if words else "")
    if dtype is None:
        return None
    return lanes * (2 if dtype == "bfloat16" else np.dtype(dtype).itemsize)  # (NumPy has no bfloat16)


def _type_name(words: list[str]) -> str:
    """Canonical spelling: ['long', 'unsigned', 'int'] → 'unsigned long'."""
    if words and all(w in _INTEGER_WORDS for w in words):
        unsigned = "unsigned" in words
        if "char" in words:
            return "unsigned char" if unsigned else ("signed char" if "signed" in words else "char")
        longs = words.count("long")
        base = "short" if "short" in words else {0: "int", 1: "long"}.get(longs, "long long")
        return ("unsigned " if unsigned else "") + base
    return re.sub(r"\s*::\s*", "::", " ".join(words))  # (`geo::Point`, as written)


# ----------------------------------------------------------------------------------------
# Parameters and kernels
# ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Param:
    """One kernel parameter, as declared: ``const float* __restrict__ x`` → pointer to float.

    ``dtype`` is the NumPy dtype of a scalar or of an array's elements, or None for a type
    the course cannot check (``void*``, a pointer to a struct, a struct passed by value):
    such an argument is passed as raw memory.
    """

    name: str
    ctype: str  # the type as written without qualifiers or '*': "float", "unsigned int", "real"
    pointer: bool
    const: bool  # a pointer to const elements
    dtype: str | None
    lanes: int = 1  # elements of `dtype` per element of a vector type (float4 → 4)
    cpp_type: str = ""  # the C++ type the CPU launcher declares (typedefs resolved by the compiler)
    rows: str = ""  # `float A[N][M]`: "[M]", each element of the array A points into is a row of M floats
    row_shape: tuple = ()  # the row's extents as numbers, (M,), where the source's constants give them
    # a struct passed by value whose members are all numbers: ((member, NumPy dtype name, count), ...) in
    # their order, to compare with a structured argument's fields (kernel.py); () when unknown
    fields: tuple = ()

    @property
    def by_value_struct(self) -> bool:
        """A struct or vector passed by value: the argument is its bytes."""
        return not self.pointer and (self.dtype is None or self.lanes > 1)

    def __str__(self) -> str:
        if self.rows:
            return f"{'const ' if self.const else ''}{self.ctype} {self.name}[]{self.rows}"
        return f"{'const ' if self.const else ''}{self.ctype}{'*' if self.pointer else ''} {self.name}"


@dataclass(frozen=True)
class Kernel:
    """A ``__global__`` function of the source (``name`` is how Python asks for it)."""

    name: str
    params: tuple[Param, ...]
    line: int
    uses_barriers: bool = True  # calls __syncthreads() or a warp-level function (needs fibers)
    unsupported: tuple | None = None  # (spelling, line, what it is, what to do instead)
    call: str = ""  # the C++ name the launcher calls: `name`, or `reduce<float, 256>`
    max_threads: int | None = None  # __launch_bounds__(N): a launch of more threads per block fails

    def signature(self) -> str:
        return f"{self.name}({', '.join(str(p) for p in self.params)})"


@dataclass
class _Function:
    name: str
    is_global: bool
    extern_c: bool
    line: int
    template: list[str]  # names of template parameters ([] for a plain function)
    template_kinds: list[str]  # "type" or "value" per template parameter
    raws: list
    body: tuple[int, int] | None  # token indices of `{` and `}`
    returns_void: bool
    launch_bounds: str = ""  # the first argument of __launch_bounds__(...), as written
    template_angles: tuple[int, int] | None = None  # token indices of the template header's `<` and `>`
    returns_reference: bool = False  # `float& at(int i)`: a call is an access, `return data[i];` is not
    qualifier: str = ""  # `ns::` of a function in namespace ns (or written `void ns::k(...) {...}`)
    template_defaults: list = field(default_factory=list)  # per template parameter: its default (text) or None
    returns_pointer: bool = False  # `__device__ const float* row_of(...)`: a raw pointer (_check_returned_pointers)
    return_star: int = -1  # the token index of that return type's `*`
    return_end: int = -1  # the token index of its return type's last token (`__restrict__` after the `*`)
    constexpr_at: int = -1  # the token index of its `constexpr` (-1: none)
    extent: tuple[int, int] = (0, 0)  # token indices of its declaration's first token and its `}` (or `;`)
    variadic: bool = False  # its template has a parameter pack (`typename... Ts`)


@dataclass
class Source:
    """What the backends need to know about one kernel source string."""

    text: str
    kernels: dict[str, Kernel]
    problems: dict[str, str]  # kernel name → why its parameters cannot be checked
    not_extern_c: set[str]  # __global__ functions without extern "C"
    uses_barriers: bool
    dynamic_shared: list[str]  # names of extern __shared__ arrays
    dynamic_shared_item: int | None = None  # bytes of their declared element, where they all agree on a known type
    cpu_text: str = ""  # the rewritten source the CPU backend compiles
    trace_text: str = ""  # the same with every `if` condition reported (kernel.profile's build)
    lines: list[str] = field(default_factory=list)
    overloaded: set = field(default_factory=set)  # C++ kernels defined with two parameter lists (`k(float*)`, `k(int*)`)
    templates: dict = field(default_factory=dict)  # kernel name → _Function (template or C++ name)
    globals: dict = field(default_factory=dict)  # __constant__/__device__ variable → line
    global_scopes: dict = field(default_factory=dict)  # those of them in a namespace → `ns::`
    global_pointers: set = field(default_factory=set)  # `__device__ float* g;` of them: checked pointers
    global_arrays: set = field(default_factory=set)  # those of them that are arrays (stored as __cc_raw_NAME)
    constant_globals: set = field(default_factory=set)  # those of them that are __constant__ (read-only in kernels)
    const_globals: set = field(default_factory=set)  # those of them declared const (read-only memory here)
    renamed: list = field(default_factory=list)  # names the source declares that the C library has (_C_LIBRARY_NAMES)
    puns: bool = False  # it casts pointers, or views dynamic shared memory as two types (_type_puns)
    std_headers: list = field(default_factory=list)  # the host's C++ headers for its <cuda/std/...> ones (_LIBCU_STD)
    host_code: list = field(default_factory=list)  # (spelling, line) of host code: main, cudaMalloc, <<<...>>>
    host_only: list = field(default_factory=list)  # (what, line, fix): host functions or variables device code uses
    nvcc_refuses: list = field(default_factory=list)  # (what, line, fix): __shared__ initializers, dynamic initialization
    cas_misuse: list = field(default_factory=list)  # (line, message): atomicCAS used so that contention breaks it
    # line -> the variable that moves an atomicCAS's address on in its loop (a hash table's probe, not a lock)
    cas_probes: dict = field(default_factory=dict)
    dangling: list = field(default_factory=list)  # (function, name, line, "array"/"variable"): `return x;` of a
                                                   # local array x, `return &m;` of a local variable m
    aliased_shared: list = field(default_factory=list)  # (function, names, lines, types): 2+ extern __shared__
    raw_members: list = field(default_factory=list)  # (struct, member, line, "host"/"union"): unchecked pointers
    aliases: dict = field(default_factory=dict)
    bit_fields: frozenset = frozenset()  # names of the structs' bit-field members (no address of their own)
    unsupported_of: dict = field(default_factory=dict)  # function → (spelling, line, what, instead)
    fiber_functions: set = field(default_factory=set)  # functions that reach a barrier or warp call
    constants: dict = field(default_factory=dict)  # `#define TILE 16` and -D options, for __launch_bounds__
    method_members: set = field(default_factory=set)  # members that methods name bare (`sum += v;`): messages

    @property
    def dynamic_shared_name(self) -> str:
        """How messages name the extern __shared__ arrays: 'smem', or 'xs / ys' (one memory)."""
        return " / ".join(self.dynamic_shared)

    def kernel(self, name: str) -> Kernel:
        """The kernel called ``name``, or a CompileError saying what the source defines."""
        if name in self.kernels:
            if name in self.problems:
                raise CompileError(f"kernel '{name}': {self.problems[name]}")
            return self.kernels[name]
        if name in self.overloaded:
            raise CompileError(
                f"kernel '{name}' is defined twice, with different parameters (C++ overloads): CuPy finds a kernel "
                f"by one name, and neither a RawKernel nor a name expression can tell which '{name}' it means (NVRTC: "
                f"'cannot determine which instance of overloaded function'). Give each kernel its own name, "
                f'extern "C" __global__ void {name}_float(...), {name}_int(...).')
        if name in self.not_extern_c or name in self.templates:
            raise CompileError(
                f"kernel '{name}' is not declared extern \"C\": CuPy finds a kernel by its C name, "
                f'so write  extern "C" __global__ void {name}(...)  — or, for a C++ or template kernel, '
                f"use course.cuda.RawModule(code=..., name_expressions=['{name}<...>']) and "
                f"module.get_function('{name}<...>'), as with CuPy"
            )
        base = name.split("<", 1)[0].strip()
        if "<" in name and (base in self.templates or base in self.not_extern_c):
            raise CompileError(
                f"'{name}' is an instance of the template kernel '{base}': CuPy's RawKernel finds only "
                f'extern "C" kernels by name, so instantiate it the way CuPy does: '
                f"module = course.cuda.RawModule(code=..., name_expressions=['{name}']), then "
                f"module.get_function('{name}')"
            )
        found = ", ".join(sorted(self.kernels)) or "none"
        raise CompileError(
            f"the source defines no extern \"C\" __global__ function named '{name}' "
            f"(kernels found: {found})"
        )

    @property
    def unsupported(self):
        """The first construct of any kernel that the CPU cannot run (spelling, line, what), or None."""
        found = [k.unsupported for k in self.kernels.values() if k.unsupported]
        return min(found, key=lambda u: u[1])[:3] if found else None

    def line_text(self, line: int) -> str:
        """Line ``line`` (1-based) of the learner's source, stripped."""
        return self.lines[line - 1].strip() if 0 < line <= len(self.lines) else ""


# Constructs the CPU backend cannot run: what they are, and what to do instead.
_PTX = ("inline PTX assembly",
        "write the operation in CUDA C (most PTX instructions have an intrinsic: __popc, __brev, "
        "__funnelshift_l, atomicAdd, __shfl_sync, __trap, ...), or run on a GPU")
# PTX's special registers that kernels read with inline asm, and their CUDA C (lane = threadIdx.x % 32 for a
# block whose x is a multiple of 32; in general the thread's index in the block % 32). A read of one in the
# samples' form runs (_ptx_special_registers, runtime.h's __cc_ptx_*); the CUDA C is the advice for any other.
_PTX_REGISTERS = {
    "lanemask_lt": "`(1u << lane) - 1` with `unsigned lane = threadIdx.x % 32` (the lanes below this one)",
    "lanemask_le": "`(2u << lane) - 1` with `unsigned lane = threadIdx.x % 32`",
    "lanemask_gt": "`~((2u << lane) - 1)` with `unsigned lane = threadIdx.x % 32`",
    "lanemask_ge": "`~((1u << lane) - 1)` with `unsigned lane = threadIdx.x % 32`",
    "lanemask_eq": "`1u << lane` with `unsigned lane = threadIdx.x % 32`",
    "laneid": "`threadIdx.x % 32` (the thread's index in the block, % 32)",
    "warpid": "`threadIdx.x / 32` (the thread's index in the block, / 32)",
    "globaltimer": "clock64() counts cycles on the device; time a launch from Python (course.timing)",
    "clock64": "clock64()",
    "clock": "clock()",
}
#: `asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));`: one move from a special register that runtime.h
#: provides (__cc_ptx_laneid, ...), its type's letter (r: 32 bits, l: 64) and the variable it sets
_PTX_MOVE = re.compile(
    r"\b(?:asm|__asm__|__asm)\s*(?:volatile\b|__volatile__\b)?\s*\(\s*\"\s*mov\.(?:u32|s32|b32|u64|s64|b64)\s+%0\s*,"
    rf"\s*%%({'|'.join(sorted(_PTX_REGISTERS, key=len, reverse=True))})\s*;?\s*\"\s*:\s*\"=([rl])\"\s*"
    r"\(\s*([A-Za-z_][\w.\[\]]*)\s*\)\s*\)\s*;")
_PTX_WIDE = {"clock64", "globaltimer"}

_TEXTURE = ("texture or surface memory",
            "pass the image as a plain `const float*` array and index it yourself (clamp the "
            "coordinates with min/max; tex2D's linear filtering is (1-a)*p0 + a*p1), or run on a GPU")
_DYNAMIC = ("a kernel launch from inside a kernel (dynamic parallelism)",
            "launch the second kernel from Python after the first one returns")
_GRID_SYNC = ("a grid-wide barrier (cooperative launch)",
              "split the kernel in two at the grid-wide sync and launch the halves one after the other "
              "from Python (the end of a launch is a barrier for the whole grid), or run on a GPU with "
              "RawKernel(..., enable_cooperative_groups=True), as with CuPy, and a grid whose blocks all fit on "
              "the GPU at once")
_WMMA = ("tensor-core (WMMA/MMA) operations",
         "write the tile product with ordinary loops over a __shared__ tile (same result up to "
         "rounding), or run on a GPU")
_ASYNC = ("asynchronous copies with cuda::pipeline or cuda::barrier, and thread-block clusters",
          "cooperative_groups::memcpy_async(block, dst, src, bytes) and cooperative_groups::wait(block), or "
          "ordinary loads into __shared__ memory followed by __syncthreads(), or run on a GPU")

_CURAND = ("a cuRAND generator or distribution that only a GPU provides here (the CPU backend has XORWOW, "
           "i.e. curandState, and Philox4_32_10, with curand_init, curand, curand4, skipahead, skipahead_sequence, "
           "curand_uniform, curand_normal, curand_log_normal and their 2, 4 and _double forms)",
           "use curandState or curandStatePhilox4_32_10_t (the same calls), make Poisson or discrete numbers from "
           "curand_uniform yourself, or run on a GPU, where CuPy runs all of cuRAND")
_CUB = ("this part of CUB or Thrust (block- and device-wide primitives in C++ templates; of CUB, the CPU backend "
        "has cub::BlockReduce, cub::BlockScan and cub::WarpReduce)",
        "write the block reduction or scan with __shared__ memory and __syncthreads() (or warp "
        "shuffles), as notebook 01 does; on the host side, xp.sum / xp.cumsum / xp.sort do the same")

# cuda::memcpy_async with a pipeline or a barrier, cuda::barrier<cuda::thread_scope_block>, cuda::pipeline
# (<cuda/barrier> and <cuda/pipeline> are blanked: without this, their names were a bare compiler error)
_CUDA_ASYNC_NAMES = {"memcpy_async", "barrier", "pipeline", "make_pipeline", "pipeline_shared_state", "pipeline_role"}
_UNSUPPORTED_NAMES = {
    **{n: _TEXTURE for n in ("cudaTextureObject_t", "cudaSurfaceObject_t")},
    **{n: _PTX for n in ("asm", "__asm__", "__asm")},
    **{n: _WMMA for n in ("wmma", "nvcuda")},
    **{n: _GRID_SYNC for n in ("this_grid", "grid_group", "this_multi_grid", "multi_grid_group")},
}
# cuRAND's generators and distributions that runtime.h does not provide (it provides XORWOW and Philox)
_CURAND_MISSING = re.compile(
    r"curand_(poisson|discrete|mtgp32|MRG32k3a|box_muller|normal_icdf)\w*$|skipahead_subsequence$|"
    r"curandState(MRG32k3a|Sobol|ScrambledSobol|Mtgp32|Test)\w*$|curandDirectionVectors\w*$|"
    r"curandDiscreteDistribution\w*$|curandMakeMTGP32\w*$|mtgp32\w*$")
_UNSUPPORTED_PATTERNS = [
    (re.compile(r"(tex|surf)(1D|2D|3D|Cubemap)\w*$"), _TEXTURE),
    (re.compile(r"__pipeline\w*$|__cluster_dims__$|this_cluster$|cluster_group$"), _ASYNC),
    (_CURAND_MISSING, _CURAND),
    (re.compile(r"(cub|thrust)$"), _CUB),
]
_UNSUPPORTED_HEADERS = {"mma.h": _WMMA, "cuda_pipeline.h": _ASYNC, "cuda/pipeline": _ASYNC,
                        "cuda/barrier": _ASYNC, "curand_mtgp32_kernel.h": _CURAND, "curand_mtgp32_host.h": _CURAND,
                        "curand_mtgp32dc_p_11213.h": _CURAND, "curand_mrg32k3a.h": _CURAND,
                        "curand_poisson.h": _CURAND, "curand_discrete.h": _CURAND, "curand_discrete2.h": _CURAND}


def _cub_aliases(tokens: list[Token]) -> set[str]:
    """The names a source gives CUB's collectives, `typedef cub::BlockReduce<float, 128> BlockReduce;` or
    `using Scan = cub::BlockScan<int, 128>;`: what `BlockReduce(temp)` constructs (and where its barrier is)."""
    names = set()
    for k, tok in enumerate(tokens):
        if tok.text not in ("typedef", "using"):
            continue
        end = k
        while end < len(tokens) and tokens[end].text != ";":
            end += 1
        statement = tokens[k:end]
        if any(t.text == "cub" or t.text in _CUB_CLASSES for t in statement):  # (after `using namespace cub;` too)
            name = statement[1] if tok.text == "using" and len(statement) > 2 and statement[2].text == "=" else statement[-1]
            if name.kind == "ident":
                names.add(name.text)
    return names


def _pointer_variables(tokens: list[Token]) -> set[str]:
    """The names declared as __shared__, __device__ or __managed__ pointers (`__shared__ float* buffer;`,
    `__device__ float* g = table;`), anywhere in the source."""
    names = set()
    for k in range(1, len(tokens) - 2):
        if tokens[k].text == "*" and tokens[k + 1].kind == "ident" and tokens[k + 2].text in (";", "=", "["):
            q = k - 1
            while q >= 0 and tokens[q].text not in (";", "{", "}", "(", ","):
                q -= 1
            if any(tokens[w].text in ("__shared__", "__device__", "__managed__") for w in range(q + 1, k)):
                names.add(tokens[k + 1].text)
    return names


# CUB's collectives that runtime.h provides, and the names that go with them (anything else of CUB's, or
# Thrust, is refused where it is used)
_CUB_CLASSES = {"BlockReduce", "BlockScan", "WarpReduce"}  # (`using namespace cub;` names them alone)
_CUB_COLLECTIVES = _CUB_CLASSES | {
    "Sum", "Max", "Min", "BlockReduceAlgorithm", "BlockScanAlgorithm", "BLOCK_REDUCE_RAKING_COMMUTATIVE_ONLY",
    "BLOCK_REDUCE_RAKING", "BLOCK_REDUCE_WARP_REDUCTIONS", "BLOCK_SCAN_RAKING", "BLOCK_SCAN_RAKING_MEMOIZE",
    "BLOCK_SCAN_WARP_SCANS"}
_CUB_HEADERS = {"cub/cub.cuh", "cub/block/block_reduce.cuh", "cub/block/block_scan.cuh", "cub/warp/warp_reduce.cuh"}


def _unsupported_header(header: str):
    """What an #include names that the CPU cannot run (its #include is blanked), or None."""
    if header in _UNSUPPORTED_HEADERS:
        return _UNSUPPORTED_HEADERS[header]
    if header in _CUB_HEADERS:
        return None  # (blanked as a provided one: what of it the kernel uses is checked name by name)
    return _CUB if header.split("/")[0] in ("cub", "thrust") else None
# Headers runtime.h already provides: their #include is blanked out on the CPU.
_PROVIDED_HEADERS = {
    "stdio.h", "cstdio", "math.h", "cmath", "stdint.h", "cstdint", "stdlib.h", "cstdlib",
    "assert.h", "cassert", "cuda_runtime.h", "cuda.h", "device_launch_parameters.h",
    "math_constants.h", "float.h", "cfloat", "limits.h", "climits", "stddef.h", "cstddef",
    "cuda_runtime_api.h", "device_functions.h", "sm_20_atomic_functions.h", "sm_30_intrinsics.h",
    "sm_32_intrinsics.h", "vector_types.h", "vector_functions.h", "limits", "type_traits",
    "utility", "algorithm", "cstring", "string.h", "stdbool.h", "cuda_fp16.h", "cuda_bf16.h",
    "cooperative_groups.h", "cooperative_groups/reduce.h", "cooperative_groups/scan.h",
    "cooperative_groups/memcpy_async.h",
    "crt/host_defines.h", "crt/math_functions.h", "crt/device_functions.h", "math_functions.h",
    "device_atomic_functions.h", "sm_32_atomic_functions.h", "sm_35_intrinsics.h", "sm_60_atomic_functions.h",
    "sm_61_intrinsics.h", "builtin_types.h", "driver_types.h", "host_defines.h", "cuda_fp16.hpp", "cuda_bf16.hpp",
    # (libcu++'s <cuda/std/...>: _LIBCU_STD; its cuda::atomic_ref: runtime.h)
    "cuda/atomic", "cuda/functional",
    # cuRAND's device API: XORWOW and Philox (runtime.h)
    "curand_kernel.h", "curand.h", "curand_philox4x32_x.h", "curand_uniform.h", "curand_normal.h",
    "curand_lognormal.h", "curand_globals.h", "curand_precalc.h",
}

# libcu++'s headers whose cuda::std:: names are the host's std:: ones here (`namespace cuda { namespace std {
# using namespace ::std; } }` in runtime.h, which adds its atomics): their #include is blanked, and the translation unit includes the host's
# header before the source (cpu.translation_unit). <cuda/std/bit> is C++20's <bit>, which the C++17 of this
# build lacks: cpu.CUDA_STD_BIT defines its functions. (Not <cuda/std/span>.)
_LIBCU_STD = {f"cuda/std/{name}": name for name in (
    "array", "complex", "tuple", "functional", "numeric", "atomic", "optional", "variant", "initializer_list",
    "iterator", "ratio", "cassert", "cstring", "cstdlib", "cstdio", "climits", "cfloat", "cstdint", "cstddef",
    "limits", "type_traits", "utility", "cmath", "algorithm", "bit")}

_BARRIERS = {"__syncthreads", "__syncthreads_count", "__syncthreads_and", "__syncthreads_or"}
# Warp-level calls: like barriers, the threads of a warp meet there (they need fibers).
_WARP_CALLS = {
    "__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync", "__ballot_sync",
    "__any_sync", "__all_sync", "__uni_sync", "__activemask", "__syncwarp", "__match_any_sync",
    "__match_all_sync", "__reduce_add_sync", "__reduce_min_sync", "__reduce_max_sync",
    "__reduce_and_sync", "__reduce_or_sync", "__reduce_xor_sync", "__shfl", "__shfl_up", "__shfl_down",
    "__shfl_xor", "__ballot", "__any", "__all",
    # cooperative groups: any of these may sync or exchange
    "sync", "shfl", "shfl_up", "shfl_down", "shfl_xor", "ballot", "any", "all", "match_any",
    "match_all", "reduce", "inclusive_scan", "exclusive_scan", "coalesced_threads", "tiled_partition",
    "this_thread_block", "binary_partition", "labeled_partition", "barrier_wait", "barrier_arrive",
    "wait", "wait_prior",
}


def _is_launch(tokens: list[Token], i: int) -> bool:
    """tokens[i] starts `<<<` (the tokenizer reads it as `<<` `<`): a kernel launch."""
    return tokens[i].text == "<<" and i + 1 < len(tokens) and tokens[i + 1].text == "<"


def _unsupported_at(tokens: list[Token], i: int):
    """(spelling, line, what, instead) if tokens[i] starts a construct the CPU cannot run."""
    tok = tokens[i]
    if _is_launch(tokens, i):
        return ("<<<...>>>", tok.line) + _DYNAMIC
    if tok.kind != "ident":
        return None
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    what = _UNSUPPORTED_NAMES.get(tok.text)
    if what is None and tok.text in ("texture", "surface") and nxt is not None and nxt.text == "<":
        what = _TEXTURE
    if what is None and tok.text in _CUDA_ASYNC_NAMES and i > 1 and tokens[i - 1].text == "::" \
            and tokens[i - 2].text == "cuda":  # libcu++'s pipelines and barriers (cg's memcpy_async runs)
        what = _ASYNC
    if what is None:
        what = next((w for pattern, w in _UNSUPPORTED_PATTERNS if pattern.match(tok.text)), None)
    if what is _CUB and tok.text == "cub" and i + 2 < len(tokens) and tokens[i + 1].text == "::" \
            and tokens[i + 2].text in _CUB_COLLECTIVES:
        return None  # cub::BlockReduce, BlockScan, WarpReduce and the functors: runtime.h has them
    if what is None:
        return None
    if i > 0 and tokens[i - 1].text in (".", "->"):  # a member called `asm`, say
        return None
    if what is _PTX:  # a special register read in the asm: its CUDA C
        text = " ".join(t.text for t in tokens[i:i + 12] if t.kind == "string")
        register = next((r for r in _PTX_REGISTERS if f"%{r}" in text), None)
        if register:
            what = (what[0], f"read %{register} in CUDA C: {_PTX_REGISTERS[register]}")
    return (tok.text, tok.line) + what


def _same_signature(f: "_Function", g: "_Function") -> bool:
    """Whether f and g declare one function (a prototype and its definition, say): the same
    template parameters (kinds) and the same parameter types, whatever their names."""
    def shape(h):
        return (bool(h.template_angles), tuple(h.template_kinds), len(h.raws),
                tuple((r.stars, r.const_elements, r.reference, r.complex,
                       tuple(h.template.index(w) if w in h.template else w for w in r.words)) for r in h.raws))
    return shape(f) == shape(g)


def _grid_sync(tokens: list[Token], a: int, b: int, params=()) -> Token | None:
    """The `sync` token where the function body tokens[a:b] syncs the whole grid, or None:
    `this_grid().sync()`, or `g.sync()` / `cg::sync(g)` of a `grid_group g` (a variable or a
    parameter) or of `auto g = cg::this_grid();`."""
    grids = {p.name for p in params if p.name and "grid_group" in p.words}
    for q in range(a, b):
        if tokens[q].text == "grid_group":
            k = q + 1
            while k < b and tokens[k].text in ("&", "*", "const"):
                k += 1
            if k < b and tokens[k].kind == "ident":
                grids.add(tokens[k].text)
        elif tokens[q].text == "this_grid":  # `auto g = cg::this_grid();`: the name before the `=`
            k = q - 1
            while k > a and (tokens[k].kind == "ident" or tokens[k].text == "::") and tokens[k - 1].text != "=":
                k -= 1
            if k > a + 1 and tokens[k - 1].text == "=" and tokens[k - 2].kind == "ident":
                grids.add(tokens[k - 2].text)
    for q in range(a + 1, b):
        if tokens[q].text != "sync":
            continue
        before = tokens[q - 1].text
        if before in (".", "->") and (tokens[q - 2].text in grids or (
                tokens[q - 2].text == ")" and q >= 4 and tokens[q - 4].text == "this_grid")):
            return tokens[q]
        if q + 2 < b and tokens[q + 1].text == "(" and (tokens[q + 2].text in grids or tokens[q + 2].text == "this_grid"):
            return tokens[q]
    return None


# Words before a function's return type that are not part of it
_FUNCTION_SPECIFIERS = {"__device__", "__host__", "__forceinline__", "__noinline__", "__inline__", "inline", "static",
                        "extern", "constexpr", "__global__"}


def _opening_angle(tokens: list[Token], close: int) -> int:
    """Index of the `<` that the `>` at tokens[close] closes (a template's arguments), or -1."""
    depth = 0
    for k in range(close, -1, -1):
        text = tokens[k].text
        depth += 2 if text == ">>" else 1 if text == ">" else -1 if text == "<" else 0
        if depth == 0:
            return k
        if text in (";", "{", "}", "(", ")"):
            return -1
    return -1


def _returned_pointer_plan(tokens: list[Token], f) -> tuple | None:
    """For _check_returned_pointers: (start, end, checked, returns): where function f's `T*` return type is,
    the checked pointer type for it (`__cc_ptr<T>`; `__cc_ptr<T>*` for `T**`, as a `T**` parameter becomes)
    and the (start, end) of each returned value; None where the return type is not one this reads
    (`float***`, `void*`)."""
    if f.return_star < 2:
        return None
    # `float** f(...)`: `__cc_ptr<float>*`, as a `float**` parameter; `float* const* f(...)`: `__cc_ptr<float> const*`
    inner_const = tokens[f.return_star - 1].text == "const" and tokens[f.return_star - 2].text == "*"
    double = 1 + inner_const if tokens[f.return_star - 1 - inner_const].text == "*" else 0
    if double and (f.return_star - double < 1 or tokens[f.return_star - double - 1].text == "*"):
        return None
    first = f.return_star - double  # the element type: words, `::`, const and volatile, back to a specifier
    while first > 0:
        prev = tokens[first - 1]
        if prev.kind == "ident" and prev.text not in _FUNCTION_SPECIFIERS or prev.text == "::":
            first -= 1
        elif prev.text == ">" and not (f.template_angles and f.template_angles[1] == first - 1):
            opening = _opening_angle(tokens, first - 1)  # (`typename Box<T>::type*`: a template's arguments)
            if opening < 1 or tokens[opening - 1].kind != "ident":
                return None
            first = opening
        else:
            break
    stop = tokens[first - 1] if first > 0 else None
    if stop is not None and stop.text not in _FUNCTION_SPECIFIERS | {";", "{", "}", '"C"', "->"} \
            and not (stop.text == "]" and tokens[first - 2].text == "]") \
            and not (stop.text == ">" and f.template_angles and f.template_angles[1] == first - 1):
        return None
    if tokens[first].text == "::" or first >= f.return_star - double \
            or tokens[f.return_star - 1 - double].text == "void":
        return None  # (a `void*` stays raw, as void* parameters do)
    inserts = []
    if f.body and not double:  # (a pointer to checked pointers needs no conversion)
        a, b = f.body
        r = a + 1
        while r < b:
            if tokens[r].text == "return" and tokens[r + 1].text != ";":
                end = _statement_end(tokens, r + 1, b)
                value = [t.text for t in tokens[r + 1:end]]
                if tokens[end].text != ";":
                    return None
                if value not in (["0"], ["NULL"], ["nullptr"]):
                    inserts.append((tokens[r + 1].start, tokens[end - 1].end))
                r = end
            r += 1
    element = " ".join(t.text for t in tokens[first:f.return_star - double])
    pointer = f"__cc_ptr<{element}>" + (" const*" if inner_const else "*" if double else "")
    return tokens[first].start, tokens[max(f.return_star, f.return_end)].end, pointer, inserts


def _check_returned_pointers(tokens: list[Token], functions: list, replacements: list, returning: set) -> None:
    """A __device__ function that returns a pointer (`const float* row_of(const float* m, int r) { return m +
    r * n; }`) returns a checked one, `__cc_ptr<const float>`, its `return`s made checked pointers by
    __cc_as_pointer (a raw address, a view of a local or __shared__ array, a checked pointer), so that
    `row_of(a, r)[j]` keeps a's bounds. As a raw pointer its result was unchecked where used at once (a
    local `float* p = f(...)` finds the array from the address, but not an address two or more past its
    end). A return type the rewrite does not read (`void*`, which the caller casts: a cast adopts the
    address; `float***`), or that another rewrite covers, stays raw, as do all of that name's declarations.
    `returning`: the names of the functions that return a pointer (and have no overload that does not)."""
    if not returning:
        return
    edits = _Edits(replacements)
    plans: dict[str, list] = {}  # name → each declaration's rewrite (None: one that this cannot read)
    for f in functions:
        if f.name not in returning:
            continue
        plans.setdefault(f.name, []).append(_returned_pointer_plan(tokens, f))
    for name, found in plans.items():
        # (all of a function's declarations or none: a prototype and its definition must agree)
        if any(plan is None or edits.overlap(plan[0], plan[1]) or any(edits.meet(x) or edits.meet(y)
                                                                      for x, y in plan[3]) for plan in found):
            continue
        for first, last, checked, inserts in found:
            replacements.append((first, last, checked))
            for x, y in inserts:
                replacements.append((x, x, "__cc_as_pointer("))
                replacements.append((y, y, ")"))


def _drop_checked_constexpr(tokens: list[Token], functions: list, replacements: list) -> None:
    """A `constexpr` __device__ function that the rewrite changed (a pointer parameter or return type made a
    checked pointer, a checked access in its body: `constexpr float at(int i) const { return p[i]; }`) is
    constexpr no more here: g++ refuses a checked pointer as a constexpr function's parameter ("invalid type
    for parameter 1 of 'constexpr' function") and a call to a check inside one. Such a function reads memory
    through a pointer and runs when the kernel runs, so nothing needed it at compile time. A prototype of a
    name whose definition lost its constexpr loses it too; the others (`constexpr int twice(int x)`, which
    an array's size may call) keep it."""
    if not any(f.constexpr_at >= 0 for f in functions):
        return
    edits = _Edits(replacements)
    changed = [f for f in functions if f.constexpr_at >= 0
               and edits.overlap(tokens[f.extent[0]].start, tokens[f.extent[1]].end)]
    names = {f.name for f in changed if f.body}
    for f in functions:
        word = tokens[f.constexpr_at] if f.constexpr_at >= 0 else None
        if word and (f in changed or f.name in names and not f.body) and not edits.overlap(word.start, word.end):
            replacements.append((word.start, word.end, ""))


class _Edits:
    """The spans of the rewrite's edits so far (`replacements`), to test where another one may go."""

    def __init__(self, replacements: list):
        self.spans = sorted((start, end) for start, end, _ in replacements)
        self.starts = [start for start, _ in self.spans]

    def _up_to(self, last: int):  # the edits that start at or before `last`
        return self.spans[:bisect.bisect_right(self.starts, last)]

    def overlap(self, first: int, last: int) -> bool:
        """Whether an edit lies in the span (an insertion at its ends does not count)."""
        return any(start < last and end > first for start, end in self._up_to(last))

    def meet(self, point: int) -> bool:
        """Whether an insertion at `point` would be lost in an edit, or be out of order with another insertion."""
        return any(start < point < end or start == end == point for start, end in self._up_to(point))


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


def _opening(tokens: list[Token], j: int) -> int:
    """Index of the `(` that the `)` at tokens[j] closes, or the `[` of a `]`, the `{` of a `}` (or -1)."""
    closing = tokens[j].text
    opening, depth = {"]": "[", "}": "{"}.get(closing, "("), 0
    for k in range(j, -1, -1):
        if tokens[k].text == closing:
            depth += 1
        elif tokens[k].text == opening:
            depth -= 1
            if depth == 0:
                return k
    return -1


def _used_in_phases(tokens: list[Token], body: tuple[int, int], names) -> bool:
    """Whether the names (arrays over the same memory) are used in phases in the body (token indices of its
    braces): in some order, every use of each comes after a barrier that follows every use of the one
    before, and no loop holds uses of two of them (its next round would start a phase before the last ended)."""
    first, last = body
    declared = lambda k: tokens[k + 1].text == "[" and tokens[k + 2].text == "]"  # (`sf[]` of its declaration)
    uses = {n: [k for k in range(first, last) if tokens[k].text == n and not declared(k)] for n in names}
    if not all(uses.values()):
        return False
    barriers = [k for k in range(first, last) if tokens[k].text in _BARRIERS or (
        tokens[k].text == "sync" and k >= 2 and tokens[k - 1].text == "." and k + 1 < last and tokens[k + 1].text == "(")]
    phases = sorted(uses.values(), key=lambda found: found[0])
    for before, after in zip(phases, phases[1:]):
        if not any(before[-1] < b < after[0] for b in barriers):
            return False
    for k in range(first, last):
        if tokens[k].text in ("for", "while", "do"):
            end = k + 1
            if tokens[k].text != "do":  # past the header's parentheses
                end = _matching(tokens, k + 1) + 1 if end < last and tokens[end].text == "(" else end
            if end < last and tokens[end].text == "{":
                end = _matching(tokens, end)
            else:
                while end < last and tokens[end].text != ";":
                    end += 1
            if sum(any(k < u <= end for u in found) for found in uses.values()) > 1:
                return False
    return True


def _after_header(tokens: list[Token], i: int) -> bool:
    """Whether tokens[i] comes right after the `)` of an if, for, while or switch header: it starts the
    statement that the header governs (`if (c) (*count)++;`, `if (c) *p = v;`)."""
    if tokens[i - 1].text != ")":
        return False
    opening = _opening(tokens, i - 1)
    return opening > 0 and tokens[opening - 1].text in ("if", "for", "while", "switch")


def _matching_angle(tokens: list[Token], i: int) -> int:
    """Index of the `>` closing the template `<` at tokens[i] (or -1)."""
    depth = 0
    for j in range(i, len(tokens)):
        t = tokens[j].text
        if t == "<":
            depth += 1
        elif t == ">":
            depth -= 1
        elif t == ">>":
            depth -= 2
        elif t in (";", "{", "}"):
            return -1
        if depth <= 0:
            return j
    return -1


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
    template_args: str = ""  # `<float, 4>` of a templated struct type
    reference: bool = False  # `float& x`: the function reads and writes its caller's variable
    rows: str = ""  # `float A[N][M]` (complex only for that): "[M]", the row type's extents (A is a float (*)[M])


_NOT_ROWS = {"&", "&&", "(", "::", "...", "."}  # in a parameter's type: not a pointer to rows


def _parse_param(tokens: list[Token], source: str) -> _RawParam | None:
    if not tokens or (len(tokens) == 1 and tokens[0].text == "void"):
        return None
    default = ""
    for k, tok in enumerate(tokens):
        if tok.text == "=":
            default = source[tok.start:tokens[-1].end]
            tokens = tokens[:k]
            break
    if not tokens:
        return None
    start, end = tokens[0].start, tokens[-1].end  # the span a rewrite replaces, `x[]` included
    # `std::size_t n`, `::uint32_t* u`, `[[maybe_unused]] int n`: the C library's types by their plain
    # names (the C++ headers declare both), and attributes left out
    kept, k = [], 0
    while k < len(tokens):
        if tokens[k].text == "[" and k + 1 < len(tokens) and tokens[k + 1].text == "[":
            k = _matching(tokens, k) + 1
            continue
        if tokens[k].text == "::" and k + 1 < len(tokens) and tokens[k + 1].text in SCALAR_DTYPES \
                and (not kept or kept[-1].text == "std" and (len(kept) == 1 or kept[-2].text != "::")):
            kept = kept[:-1] if kept and kept[-1].text == "std" else kept
            k += 1
            continue
        kept.append(tokens[k])
        k += 1
    if not kept:
        return None
    tokens = kept
    texts = [t.text for t in tokens]
    template_args, args_at = "", -1
    if "<" in texts:  # `Vec<float, 3> v`: keep the arguments with the type's name
        a = args_at = texts.index("<")
        b = _matching_angle(tokens, a)
        if b > a:
            template_args = source[tokens[a].start:tokens[b].end]
            tokens = tokens[:a] + tokens[b + 1:]
            texts = texts[:a] + texts[b + 1:]
    # (`const geo::Point* p`: a type named with its namespaces is no complex one; `A::*`, `T::template`, are)
    scoped = any(t == "::" and (k + 1 == len(tokens) or tokens[k + 1].kind != "ident"
                                or k > 0 and tokens[k - 1].kind != "ident") for k, t in enumerate(texts)) \
        or bool(template_args) and "::" in texts[args_at:]  # (`Box<T>::type* p`: the arguments are not the last word's)
    complex_ = ("&" in texts or "&&" in texts or "(" in texts or texts.count("[") > 1 or scoped
                or "..." in texts or "." in texts)
    # Rows: `float A[N][M]` or `float (*A)[M]`, a pointer to rows of M floats (the type is otherwise
    # a plain one); rows is "[M]", the text of the extents after the first.
    def extents_end(k: int) -> int:  # the end of the `[...][...]` that starts at tokens[k]
        while k < len(tokens) and texts[k] == "[":
            k = _matching(tokens, k) + 1
        return k

    rows = ""
    if complex_ and "(" in texts:  # `float (*A)[N]`
        k = texts.index("(")
        name_at = k + 2
        while name_at < len(texts) and texts[name_at] in _QUALIFIERS:  # `(* __restrict__ A)`
            name_at += 1
        if texts[k + 1:k + 2] == ["*"] and name_at + 2 < len(texts) and tokens[name_at].kind == "ident" \
                and texts[name_at + 1] == ")" and texts[name_at + 2] == "[" \
                and extents_end(name_at + 2) == len(tokens) and not _NOT_ROWS & set(texts[:k]):
            rows = source[tokens[name_at + 2].start:tokens[-1].end]
            tokens = tokens[:k] + [tokens[k + 1], tokens[name_at]]
            texts = [t.text for t in tokens]
    array = "[" in texts
    if array:
        first = texts.index("[")
        second = _matching(tokens, first) + 1
        if second < len(tokens) and extents_end(second) == len(tokens) and not _NOT_ROWS & set(texts[:first]):
            rows = source[tokens[second].start:tokens[-1].end]
        tokens = tokens[:first]
        texts = texts[:first]
    name = texts[-1] if len(texts) > 1 and tokens[-1].kind == "ident" and texts[-1] not in _TYPE_WORDS else None
    type_tokens = texts[:-1] if name else texts
    stars = type_tokens.count("*")
    last_star = max((k for k, t in enumerate(type_tokens) if t == "*"), default=-1)
    before, after = type_tokens[: last_star + 1], type_tokens[last_star + 1:]
    words = [t for t in type_tokens if t not in _QUALIFIERS and t != "*"]
    if template_args and words:
        words[-1] += template_args
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
        template_args=template_args,
        reference="&" in texts and "(" not in texts,
        rows=rows,
    )


def _aliases(tokens: list[Token], defines: dict, structs=frozenset()) -> dict[str, list[str]]:
    """typedef / using / #define / -D names for types: {'real': ['float']}; and typedef / using names of the
    source's `structs`, by the struct's own name (`using Pt = geo::Point;`, `typedef Acc<float> AF;`:
    {'Pt': ['Point'], 'AF': ['Acc']}), so that a kernel taking one takes that struct."""
    aliases = {}
    type_words = _INTEGER_WORDS | {"float", "double", "bool"} | set(SCALAR_DTYPES) | set(VECTOR_TYPES) | set(HALF_TYPES)
    for name, value in defines.items():
        if value.split() and all(w in type_words for w in value.split()):
            aliases[name] = value.split()
    for i, tok in enumerate(tokens):
        if tok.kind == "pp":
            m = re.match(r"#\s*define\s+(\w+)\s+([\w ]+?)\s*(\*?)\s*$", tok.text)
            named = m.group(2).split() if m else []
            if m and all(w in type_words or w in aliases for w in named if w != "const") and named != ["const"]:
                aliases[m.group(1)] = named + ["*"] * bool(m.group(3))  # (`#define FPTR float*`: a pointer type)
        elif tok.text == "typedef":
            j = i + 1
            while j < len(tokens) and tokens[j].text not in (";", "{"):
                j += 1
            words = [t.text for t in tokens[i + 1: j] if t.text not in _QUALIFIERS or t.text == "const"]
            named = [w for w in words[:-1] if w != "const"]
            if len(words) >= 2 and named and all(w in type_words or w in aliases for w in named if w != "*") \
                    and named.count("*") <= 1 and named[0] != "*":  # (`typedef float* fptr;`: a pointer type)
                aliases[words[-1]] = words[:-1] if "*" in named else named
            elif len(words) >= 2 and (struct := _struct_named(tokens[i + 1:j - 1], structs)):
                aliases[words[-1]] = [struct]
        elif tok.text == "enum":  # `enum class Mode : int {`, `enum Op {`: passed as its underlying integer
            j = i + 1 + (i + 1 < len(tokens) and tokens[i + 1].text in ("class", "struct"))
            if j < len(tokens) and tokens[j].kind == "ident" and tokens[j].text not in _QUALIFIERS:
                k = j + 1
                while k < len(tokens) and tokens[k].text not in (";", "{"):
                    k += 1
                under = [t.text for t in tokens[j + 2:k] if t.text not in _QUALIFIERS] \
                    if j + 1 < len(tokens) and tokens[j + 1].text == ":" else []
                if under and all(w in type_words or w in aliases for w in under):
                    aliases[tokens[j].text] = under
                elif not under and k < len(tokens) and tokens[k].text == "{":
                    aliases[tokens[j].text] = ["int"]
        elif tok.text == "using" and i + 2 < len(tokens) and tokens[i + 2].text == "=":
            j = i + 3
            while j < len(tokens) and tokens[j].text != ";":
                j += 1
            words = [t.text for t in tokens[i + 3: j] if t.text not in _QUALIFIERS or t.text == "const"]
            named = [w for w in words if w != "const"]
            # (`template <class T> using Ptr = T*;`: an alias template of a pointer, T one of its own parameters)
            own = set(_template_params(tokens, i)[0]) if "*" in named else set()
            if named and all(w in type_words or w in aliases or w in own for w in named if w != "*") \
                    and named.count("*") <= 1 and named[0] != "*":  # (`using fptr = float*;`)
                aliases[tokens[i + 1].text] = words if "*" in named else named
            elif struct := _struct_named(tokens[i + 3:j], structs):
                aliases[tokens[i + 1].text] = [struct]
    return aliases


def _struct_named(tokens: list[Token], structs) -> str | None:
    """The struct a typedef's or using's type names (`geo::Point`, `const Acc<float>`: its last word outside
    template arguments), when it is one of `structs` and no pointer to it; else None."""
    depth, last = 0, None
    for t in tokens:
        if t.text == "*":
            return None
        depth += {"<": 1, ">": -1, ">>": -2}.get(t.text, 0)
        if depth == 0 and t.kind == "ident":
            last = t.text
    return last if last in structs else None


def _resolve(words: list[str], aliases: dict[str, list[str]]) -> list[str]:
    for _ in range(10):  # aliases of aliases, without looping forever
        expanded = [x for w in words for x in aliases.get(w, [w])]
        if expanded == words:
            break
        words = expanded
    return words


def _complex_number(raw: _RawParam) -> tuple[str, str] | None:
    """A pointer to libcu++'s, the C++ library's or Thrust's complex<float> (or <double>): its type as
    written without const, and float or double."""
    spelled = "".join(w for w in raw.words if w != "const")
    found = re.fullmatch(r"(?:(?:::)?(?:cuda::std|std|thrust|cuda)::)?complex<\s*(float|double)\s*>", spelled)
    return (spelled, found.group(1)) if found and raw.stars == 1 and not raw.rows and not raw.reference else None


def _kernel_param(raw: _RawParam, aliases, kernel: str, types: set, position: int = 0) -> tuple[Param | None, str | None]:
    """A Param (checked when its type is known), or why this parameter cannot be passed. A parameter
    without a name (`int` of `void k(float* x, int)`, unused) is named by its `position` (from 1)."""
    if raw.name is None and position and raw.words and raw.words != ["void"]:
        raw = dataclasses.replace(raw, name=f"unnamed_{position}")
    where = f"parameter {raw.name or '?'}"
    if raw.name is None:
        return None, f"{where} has no name"
    if raw.words and raw.words[0] in ("torch", "at", "c10") and (
            raw.complex or raw.stars == 0 or raw.words[1:2] == ["::"]):  # (`torch::Tensor* t`: no course type either)
        spelled = "".join(raw.words)
        return None, (f"{where} is a PyTorch C++ type ({spelled}), from PyTorch's C++/CUDA extension API "
                      f"(torch/extension.h), which course.cuda does not have: pass the tensor as a raw pointer "
                      f"(const float* x, or a template's const scalar_t* x) with its sizes as int parameters, and "
                      f"index it as x[row * cols + col]. A tensor passes straight to such a kernel; "
                      f"torch.utils.cpp_extension.load_inline builds the extension as written, on a GPU.")
    complex_number = _complex_number(raw)
    if complex_number:  # `cuda::std::complex<float>* z`: complex64 elements, as a float2* takes them
        spelled, part = complex_number
        dtype, lanes = _element_dtype("float2" if part == "float" else "double2")
        return Param(raw.name, spelled, True, raw.const_elements, dtype, lanes, spelled), None
    if (raw.complex and not raw.rows) or raw.stars > 1:
        return None, f"{where} has a type the course cannot pass ({' '.join(raw.words)} with " \
                     f"{raw.stars} '*'): pass each array as its own T* parameter"
    # `geo::Point`; `geo::Mode` of an enum or a typedef in a namespace: its own name's type
    qualified = "::" in raw.words
    spelled = _type_name(raw.words) if qualified else " ".join(raw.words)
    resolved = _resolve([raw.words[-1]] if qualified and raw.words[-1] in aliases else raw.words, aliases)
    const_elements = raw.const_elements
    if "*" in resolved:  # `fptr b` with `typedef const float* fptr;`: the alias is the pointer type
        qualified = False
        if raw.stars or resolved.count("*") > 1:
            return None, f"{where} has a type the course cannot pass ({spelled}, a pointer to pointers): pass " \
                         f"each array as its own T* parameter"
        const_elements = const_elements or "const" in resolved[:resolved.index("*")]
        resolved = [w for w in resolved if w not in ("*", "const")]
        raw = dataclasses.replace(raw, stars=1, words=resolved)
    resolved = [w for w in resolved if w != "const"]
    canonical = _type_name(resolved)
    cpp = (spelled if qualified or (raw.template_args or len(raw.words) == 1) and raw.words == spelled.split()
           else canonical) + raw.rows  # `float[N]`: rows
    pointer = raw.stars == 1
    if canonical == "void":
        if not pointer:
            return None, f"{where} is void"
        return Param(raw.name, "void", True, const_elements, None, cpp_type="void"), None
    dtype, lanes = _element_dtype(canonical)  # (no dtype: a struct, passed as raw memory)
    return Param(raw.name, spelled, pointer, const_elements, dtype, lanes, cpp, raw.rows), None


def _template_params(tokens: list[Token], decl_start: int) -> tuple[list[str], list[str], int]:
    """Names and kinds of `template <class T, int N>` just before tokens[decl_start]."""
    k = decl_start - 1
    if k < 0 or tokens[k].text != ">":
        return [], [], decl_start
    depth, j = 0, k
    while j >= 0:
        if tokens[j].text == ">":
            depth += 1
        elif tokens[j].text == "<":
            depth -= 1
            if depth == 0:
                break
        j -= 1
    if j < 1 or tokens[j - 1].text != "template":
        return [], [], decl_start
    names, kinds = [], []
    for part in _split_commas(tokens[j + 1:k]):
        texts = [t.text for t in part if t.text != "..."]
        if "=" in texts:
            texts = texts[: texts.index("=")]
        if not texts:
            continue
        names.append(texts[-1])
        kinds.append("type" if texts[0] in ("class", "typename") else "value")
    return names, kinds, j - 1


def _split_template_closers(tokens: list[Token]) -> list[Token]:
    """`template <typename S = Sm<>>`: a `>>` that closes two angle brackets of a template header (outside
    parentheses, where it would be a shift) as the two `>` it is (C++11), so that the header's end is found."""
    out, depth, parens = [], 0, 0
    for tok in tokens:
        if depth == 0:
            if tok.text == "<" and out and out[-1].text == "template":
                depth, parens = 1, 0
            out.append(tok)
            continue
        if tok.text in ("(", "["):
            parens += 1
        elif tok.text in (")", "]"):
            parens -= 1
        elif tok.text in (";", "{", "}"):
            depth = 0
        elif parens == 0 and tok.text == "<":
            depth += 1
        elif parens == 0 and tok.text == ">":
            depth -= 1
        elif parens == 0 and tok.text == ">>":
            out += [Token("punct", ">", tok.start, tok.start + 1, tok.line),
                    Token("punct", ">", tok.start + 1, tok.end, tok.line)]
            depth = max(0, depth - 2)
            continue
        out.append(tok)
    return out


def _check_global_pointer(tokens: list[Token], start: int, space: int, after: int, replace) -> bool:
    """`__device__ float* g_buf;` (or `= nullptr;`, or `__managed__`): a checked pointer, so that what a
    kernel stores there (`g_buf = buf;`) keeps the argument's bounds for the launches that read through it.
    One declarator (an array of them too), one `*` before the name, and an initializer (`= table;`: checked
    from it, located again at each launch); `extern`, a const pointer and __constant__ (set by the host only)
    keep the raw pointer. Its host bytes (get_global) start with the address: a launch takes an address the
    host wrote there afresh (runtime.h's __cc_recheck_global)."""
    if tokens[space].text not in ("__device__", "__managed__") or tokens[after - 2].text != "*":
        return False
    end = after
    while end < len(tokens) and tokens[end].text == "[":  # `__device__ float* g_list[4];`: each one checked
        end = _matching(tokens, end) + 1
    initializer = None  # `= table;`, `= &table[4];`: the checked pointer made from it (located at launch)
    if end == after and tokens[end].text == "=" and end + 2 < len(tokens) \
            and tokens[end + 1].text in ("nullptr", "0", "NULL") and tokens[end + 2].text == ";":
        end += 2
    elif end == after and tokens[end].text == "=":
        close = end + 1  # (to the `;`, or a `,` of a second declarator, outside brackets)
        while close < len(tokens) and tokens[close].text not in (";", ","):
            close = _matching(tokens, close) + 1 if tokens[close].text in ("(", "[", "{") else close + 1
        if close == end + 1 or close >= len(tokens) or tokens[close].text != ";" or tokens[end + 1].text == "{":
            return False
        initializer, end = (end + 1, close), close
    if end >= len(tokens) or tokens[end].text != ";":
        return False
    words = [t.text for t in tokens[start:after - 2]]
    storage = ("static", "__device__", "__managed__")
    last = max(n for n, w in enumerate(words) if w in storage)
    kept = words[last + 1:]
    if any(w not in storage for w in words[:last]) or not kept or "*" in kept or "extern" in kept \
            or any(w in ("(", "[", "<", "struct", "union", "enum", "class", "typename", "decltype") for w in kept):
        return False
    first = start + last + 1
    replace(tokens[first].start, tokens[after - 2].end,
            f"__cc_ptr<{' '.join(kept)}> ")
    if initializer:  # (a __device__ array's view converts only explicitly)
        replace(tokens[initializer[0]].start, tokens[initializer[0]].start, f"__cc_ptr<{' '.join(kept)}>(")
        replace(tokens[initializer[1] - 1].end, tokens[initializer[1] - 1].end, ")")
    return True


def _namespaces(tokens: list) -> list[str]:
    """Per token, `outer::inner::` when it lies in named namespaces (`namespace a { ...`, `namespace
    a::b { ...`, `inline namespace v1 { ...`; an anonymous one adds nothing), else ''."""
    scopes: list[str] = []  # per open `{`, the qualification inside it
    prefixes = []
    for i, tok in enumerate(tokens):
        prefixes.append(scopes[-1] if scopes else "")
        if tok.text == "{":
            k, names = i - 1, []
            while k >= 0 and (tokens[k].kind == "ident" or tokens[k].text == "::") and tokens[k].text != "namespace":
                k -= 1
            if k >= 0 and tokens[k].text == "namespace":
                names = [t.text for t in tokens[k + 1:i] if t.kind == "ident" and t.text != "inline"]
            scopes.append(prefixes[-1] + "".join(f"{name}::" for name in names))
        elif tok.text == "}" and scopes:
            scopes.pop()
    return prefixes


def parse(text: str, options=()) -> Source:
    """Read a kernel source: its kernels and their parameters, and what the CPU backend needs."""
    defines = {**PREDEFINED, **_define_options(options)}
    original, text = text, _prepare(text, defines)
    all_tokens = _split_template_closers(tokenize(text))
    live = _live_tokens(all_tokens, defines)
    live_tokens = [t for t, alive in zip(all_tokens, live) if alive]
    # A directive is a line of its own that C's grammar never sees: what comes after `#endif` follows
    # what came before the #if (`#define TILE 16` then `__shared__ float s[TILE];` is a declaration, and
    # `*p = v;` after `#endif` a store). The analysis walks the tokens without them; `directives` keeps them.
    directives = [t for t in live_tokens if t.kind == "pp"]
    tokens = [t for t in live_tokens if t.kind != "pp"]
    structs = {tokens[i + 1].text for i, t in enumerate(tokens[:-1])
               if t.text in ("struct", "class", "union") and tokens[i + 1].kind == "ident"}
    aliases = _aliases(live_tokens, defines, structs)
    bit_fields = _bit_fields(tokens)
    if any(re.match(r"#\s*include\s*[<\"]cuComplex\.h[>\"]", t.text) for t in directives):
        for name, vector in (("cuFloatComplex", "float2"), ("cuComplex", "float2"), ("cuDoubleComplex", "double2")):
            aliases.setdefault(name, [vector])  # (parameters of these types take complex arrays: kernel.py)
    known_types = (set(_TYPE_WORDS) - _QUALIFIERS - {"auto"}) | set(aliases) | structs

    # Which `{` opens an `extern "C" { ... }` block.
    extern_c_depth = []
    inside_extern_c = [False] * len(tokens)
    for i, tok in enumerate(tokens):
        inside_extern_c[i] = any(extern_c_depth)
        if tok.text == "{":
            extern_c_depth.append(i >= 2 and tokens[i - 1].text == '"C"' and tokens[i - 2].text == "extern")
        elif tok.text == "}" and extern_c_depth:
            extern_c_depth.pop()

    replacements: list[tuple[int, int, str]] = []  # (start, end, new text) for the CPU
    static_kernels: set[str] = set()  # __global__ functions declared static

    def replace(start: int, end: int, new: str) -> None:
        replacements.append((start, end, new + "\n" * text.count("\n", start, end)))

    branch_notes: list[tuple[int, int, str]] = []  # insertions for the traced build only
    uniform_ifs: list[int] = []  # lines of the ifs around barriers (_note_uniform_ifs)

    functions: list[_Function] = []
    namespaces = _namespaces(tokens) if any(t.text == "namespace" for t in tokens) else None
    global_variables: dict[str, int] = {}
    global_scopes: dict[str, str] = {}  # (`ns::` of one declared in a namespace)
    global_pointers: set[str] = set()  # (`__device__ float* g;`: _check_global_pointer)
    constant_variables: set[str] = set()
    read_only_variables: set[str] = set()  # `__device__ const int N = 4;`: no stores to note
    array_candidates: list[tuple[int, int]] = []  # (name token, 2 __constant__ / 3 __device__) of file-scope arrays
    for i, tok in enumerate(tokens):
        if tok.kind != "ident" or tok.text not in ("__global__", "__device__", "__constant__", "__managed__"):
            continue
        # Find the function name: the identifier before the first '(' that is not an attribute.
        j = i + 1
        operator = None  # `__device__ T& operator[](int i)`: a member function, named by its symbol
        bounds = ""
        while j < len(tokens) and (tokens[j].text not in ("(", ";", "=", "{", "[", ",")
                                   or tokens[j].text == "[" and j + 1 < len(tokens) and tokens[j + 1].text == "["):
            if tokens[j].text == "[":  # `__device__ [[nodiscard]] float f(...)`: an attribute
                j = _matching(tokens, j) + 1
                continue
            if tokens[j].text == "<" and tokens[j - 1].kind == "ident" and tokens[j - 1].text != "operator":
                close = _matching_angle(tokens, j)  # `__device__ P<T, int> make(...)`: a template's arguments
                if close > j:
                    j = close + 1
                    continue
            if tokens[j].text == "operator":
                operator = j
                j += 3 if j + 2 < len(tokens) and tokens[j + 1].text in ("(", "[") else 1
                while j < len(tokens) and tokens[j].text not in ("(", ";", "{"):
                    j += 1
                break
            j += 1
            if j < len(tokens) and tokens[j].text == "(" and tokens[j - 1].text in (
                "__launch_bounds__", "__maxnreg__", "__align__", "__attribute__", "alignas", "__cluster_dims__",
                "decltype"
            ):  # (`decltype(auto) f(...)`: the return type's parentheses)
                if tokens[j - 1].text == "__launch_bounds__":
                    first = _split_commas(tokens[j + 1:_matching(tokens, j)])
                    bounds = " ".join(t.text for t in first[0]) if first else ""
                j = _matching(tokens, j) + 1
        if j >= len(tokens):
            continue
        if operator is not None and tokens[j].text == "(":
            first = tokens[operator]
            name_tok = Token("ident", "operator" + "".join(t.text for t in tokens[operator + 1:j]), first.start,
                             tokens[j - 1].end, first.line)
        elif tokens[j].text != "(" or tokens[j - 1].kind != "ident" or tok.text in ("__constant__", "__managed__"):
            # A __device__/__constant__ variable: its name is the identifier before `=`, `;`, `[`.
            if tokens[j - 1].kind == "ident" and tokens[j - 1].text not in _TYPE_WORDS:
                k = i - 1
                while k >= 0 and tokens[k].text not in (";", "{", "}"):
                    k -= 1
                if not any(t.text == "(" for t in tokens[k + 1:i]):  # not inside a parameter list
                    global_variables.setdefault(tokens[j - 1].text, tokens[j - 1].line)
                    if namespaces and namespaces[j - 1]:
                        global_scopes.setdefault(tokens[j - 1].text, namespaces[j - 1])
                    if any(t.text in ("const", "constexpr") for t in tokens[k + 1:j - 1]):
                        read_only_variables.add(tokens[j - 1].text)  # (sizes: `__shared__ float s[N];`)
                    if tok.text == "__constant__":
                        constant_variables.add(tokens[j - 1].text)
                    if tokens[j].text == "[" and j + 1 < len(tokens) and tokens[j + 1].text != "]":
                        array_candidates.append((j - 1, 2 if tok.text == "__constant__" else 3))
                    if _check_global_pointer(tokens, k + 1, i, j, replace):
                        global_pointers.add(tokens[j - 1].text)
            continue
        else:
            name_tok = tokens[j - 1]
        close = _matching(tokens, j)
        if name_tok.text in ("__launch_bounds__", "__maxnreg__", "__align__"):
            continue
        body = close + 1
        while body < len(tokens) and tokens[body].text not in ("{", ";"):
            body += 1  # skip `const`, attributes, ... up to the body
        span = (body, _matching(tokens, body)) if body < len(tokens) and tokens[body].text == "{" else None
        # Walk back to the start of the declaration to look for extern "C" and template <...>.
        k = i - 1
        while k >= 0 and tokens[k].text not in (";", "{", "}"):
            if tokens[k].text == ">" :
                names, kinds, before = _template_params(tokens, k + 1)
                if names or before != k + 1:
                    k = before
                    continue
            k -= 1
        start = k + 1
        template, kinds, close_angle = [], [], -1
        if tokens[start].text == "template":
            close_angle = _matching_angle(tokens, start + 1)
            template, kinds, _ = _template_params(tokens, close_angle + 1)
        prefix = [t.text for t in tokens[start: j - 1]]
        if "__global__" in prefix or tok.text == "__global__":
            for q in range(start, j - 1):  # `__global__ static void k(...)` (the clock sample): see kernel()
                if tokens[q].text == "static":
                    replace(tokens[q].start, tokens[q].end, "")
                    static_kernels.add(name_tok.text)
        extern_c = inside_extern_c[i] or any(a == "extern" and b == '"C"' for a, b in zip(prefix, prefix[1:]))
        raws = [r for r in (_parse_param(p, text) for p in _split_commas(tokens[j + 1: close])) if r is not None]
        functions.append(_Function(name_tok.text, tok.text == "__global__" or "__global__" in prefix, extern_c,
                                   name_tok.line, template, kinds, raws, span, "void" in prefix, bounds,
                                   (start + 1, close_angle) if template else None,
                                   tokens[(operator if operator is not None else j - 1) - 1].text in ("&", "&&")))
        if [t.text for t in tokens[j - 5:j - 1]] == ["decltype", "(", "auto", ")"] and span and any(
                tokens[r].text == "return" and tokens[r + 1].text == "("
                and tokens[_matching(tokens, r + 1) + 1].text == ";" for r in range(span[0] + 1, span[1])):
            functions[-1].returns_reference = True  # `decltype(auto) at(int i) { return (d[i]); }`: a reference
        star = j - 2  # (`const float* __restrict__ f(...)`: the `*` before the qualifier, which the rewrite drops)
        while star > 0 and tokens[star].text in ("__restrict__", "__restrict") and tokens[star - 1].text == "*":
            star -= 1
        functions[-1].returns_pointer = operator is None and tokens[star].text == "*"
        functions[-1].return_star = star if functions[-1].returns_pointer else -1
        functions[-1].return_end = j - 2
        arrow = close + 1  # `auto f(...) -> const float* {`: a trailing return type
        while arrow < len(tokens) and tokens[arrow].text in ("const", "noexcept", "volatile", "__restrict__"):
            arrow += 1
        if operator is None and arrow + 2 < len(tokens) and tokens[arrow].text == "->" and tokens[j - 2].text == "auto":
            end = arrow + 1
            while end < len(tokens) and tokens[end].text not in ("{", ";", "(", "="):
                end += 1
            if tokens[end - 1].text == "*" and end - 2 > arrow:
                functions[-1].returns_pointer, functions[-1].return_star = True, end - 1
                functions[-1].return_end = end - 1
        functions[-1].constexpr_at = next((q for q in range(start, j - 1) if tokens[q].text == "constexpr"), -1)
        functions[-1].extent = (start, span[1] if span else min(body, len(tokens) - 1))
        q = j - 1
        while q >= 2 and tokens[q - 1].text == "::" and tokens[q - 2].kind == "ident":
            q -= 2
        functions[-1].qualifier = (namespaces[i] if namespaces else "") + "".join(t.text for t in tokens[q:j - 1])
        if template:  # `template <int S = 2, typename T = float>`: what a name expression may leave out
            functions[-1].variadic = any(t.text == "..." for t in tokens[start + 2:close_angle])
            functions[-1].template_defaults = [
                text[part[part.index(next(t for t in part if t.text == "="), 0) + 1].start:part[-1].end]
                if any(t.text == "=" for t in part) else None
                for part in _split_commas(tokens[start + 2:close_angle]) if part]

    raw_members = _check_struct_members(tokens, functions, aliases, replace)

    # `typedef float* fptr;`, `using fptr = const float*;`: the alias of a checked pointer, so that a
    # parameter `fptr x` is one (as `float* x` becomes) and a local `fptr p` keeps its array's bounds.
    for i, tok in enumerate(tokens):
        if tok.text not in ("typedef", "using"):
            continue
        end = i + 1
        while end < len(tokens) and tokens[end].text not in (";", "{"):
            end += 1
        if end >= len(tokens) or tokens[end].text != ";":
            continue
        if tok.text == "typedef":
            name_at, first = end - 1, i + 1
        elif i + 2 < len(tokens) and tokens[i + 2].text == "=":
            name_at, first = i + 1, i + 3
        else:
            continue
        alias = aliases.get(tokens[name_at].text, [])
        stars = [q for q in range(first, end) if tokens[q].text == "*"]
        if "*" not in alias or len(stars) != 1:
            continue
        last = end - 1 if tok.text == "using" else name_at - 1  # (`float* __restrict__ rptr`: up to the name)
        element = text[tokens[first].start:tokens[stars[0]].start].strip()
        replace(tokens[first].start, tokens[last].end, f"__cc_ptr<{element}>")
    for tok in directives:  # `#define FPTR float*`
        m = re.match(r"(#\s*define\s+(\w+)\s+)([\w ]+?)\s*\*\s*$", tok.text)
        if m and "*" in aliases.get(m.group(2), []):
            replace(tok.start, tok.end, f"{m.group(1)}__cc_ptr<{m.group(3).strip()}>")

    # `__constant__ float w[9] = {...};` at file scope: raw storage and a checked view, as a
    # local array gets (get_global finds the storage, __cc_raw_w).
    global_arrays: set[str] = set()
    for at, kind in array_candidates:
        if any(f.body and f.body[0] < at < f.body[1] for f in functions):
            continue
        end = at + 1
        while end < len(tokens) and tokens[end].text == "[":
            end = _matching(tokens, end) + 1
        if end + 1 < len(tokens) and tokens[end].text == "=" and tokens[end + 1].text == "{":
            end = _matching(tokens, end + 1) + 1
        if end < len(tokens) and tokens[end].text == ";":
            name = tokens[at].text
            replace(tokens[at].start, tokens[at].end, f"__cc_raw_{name}")
            replace(tokens[end].start, tokens[end].end,
                    f'; static const auto {name} = __cc_make_view(__cc_raw_{name}, "{name}", {kind});')
            global_arrays.add(name)

    # `__shared__ float cache[64];` at file scope: one per block, as a __shared__ array in a function
    # is. Each function that uses it makes the checked view (poisoned once per block) as it starts.
    file_shared: list[str] = []
    file_shared_scalars: list[str] = []
    for at, tok in enumerate(tokens):
        if tok.text != "__shared__" or (at > 0 and tokens[at - 1].text == "extern") \
                or any(f.body and f.body[0] < at < f.body[1] for f in functions):
            continue
        end = at + 1
        while end < len(tokens) and tokens[end].kind == "ident" and tokens[end + 1].kind == "ident":
            end += 1
        if end + 1 < len(tokens) and tokens[end].kind == "ident" and tokens[end + 1].text == "[":
            close = end + 1
            while close < len(tokens) and tokens[close].text == "[":
                close = _matching(tokens, close) + 1
            if close < len(tokens) and tokens[close].text == ";":
                replace(tokens[end].start, tokens[end].end, f"__cc_raw_{tokens[end].text}")
                file_shared.append(tokens[end].text)
                global_arrays.add(tokens[end].text)
        elif scalar := _shared_scalar_at(tokens, at, len(tokens)):  # `__shared__ int count;`: poisoned and noted per block
            file_shared_scalars.append(scalar)
            star = next((k for k in range(at + 1, len(tokens)) if tokens[k].text in ("*", ";")), None)
            if star is not None and tokens[star].text == "*" and tokens[star + 1].text == scalar:
                # `__shared__ float* buffer;`: a checked pointer, as in a function (what a thread sets it to
                # keeps its array's bounds for the others)
                words = [tok.text for tok in tokens[at + 1:star] if tok.text != "volatile"]
                volatile = "volatile " if any(tok.text == "volatile" for tok in tokens[at + 1:star]) else ""
                replace(tokens[at + 1].start, tokens[star].end, f"{volatile}__cc_ptr<{' '.join(words)}> ")

    # Per function: its identifiers (to follow calls), what it uses that the CPU cannot run.
    bodies: dict[str, set[str]] = {}
    unsupported_of: dict[str, tuple] = {}
    body_spans = [f.body for f in functions if f.body]
    for f in functions:
        if not f.body:
            continue
        a, b = f.body
        bodies.setdefault(f.name, set()).update(t.text for t in tokens[a:b] if t.kind == "ident")
        for m in range(a, b):
            found = _unsupported_at(tokens, m)
            if found and f.name not in unsupported_of:
                if found[0] in ("this_grid", "grid_group"):
                    continue  # a grid group that only reports its size is fine; its sync is not (below)
                unsupported_of[f.name] = found
        missing = next((w for r in f.raws for w in r.words if _CURAND_MISSING.match(w)), None)
        if missing and f.name not in unsupported_of:  # a parameter `curandStateMRG32k3a* states`, say
            unsupported_of[f.name] = (missing, f.line) + _CURAND
        grid_sync = _grid_sync(tokens, a, b, f.raws)
        if grid_sync is not None and (f.name not in unsupported_of or unsupported_of[f.name][1] > grid_sync.line):
            unsupported_of[f.name] = ("the grid's sync()", grid_sync.line) + _GRID_SYNC
        if f.name in unsupported_of:  # keep the compiler away from what it cannot compile
            replace(tokens[a].start, tokens[b].end, "{ __cc_unsupported_body(); }")
    for tok_index, tok in enumerate(tokens):  # file-scope texture references
        if tok.text in ("texture", "surface") and tok_index + 1 < len(tokens) and tokens[tok_index + 1].text == "<" \
                and not any(a <= tok_index <= b for a, b in body_spans):
            end = tok_index
            while end < len(tokens) and tokens[end].text != ";":
                end += 1
            if end < len(tokens):
                replace(tok.start, tokens[end].end, "")
    _drop_explicit_instantiations(tokens, functions, body_spans, replace)

    def reach(seed: set[str]) -> set[str]:
        """Functions that use something in `seed`, themselves or through the functions they call."""
        uses = {name for name, idents in bodies.items() if idents & seed}
        while True:
            grown = {name for name, idents in bodies.items() if idents & uses} | uses
            if grown == uses:
                return uses
            uses = grown

    volatile_names = _volatile_names(tokens)
    plain_waits = _plain_waits(tokens, functions, volatile_names)  # (warned about; their loops wait all the same)
    waiting = {line for line, _ in plain_waits}
    spin_edits = {f.body: _spin_loops(tokens, f, volatile_names, waiting) for f in functions if f.body}
    for f in functions:  # a function that waits for other threads needs them to run meanwhile: fibers
        if f.body and spin_edits[f.body]:
            bodies[f.name].add("__cc_spin_point")
    # and one with warp-synchronous steps (`vs[tid] += vs[tid + 16];` on a volatile pointer) takes them in step
    # with the other threads (runtime.h's __cc_volatile_step)
    step_edits = {f.body: _warp_synchronous_steps(tokens, f, volatile_names) for f in functions if f.body}
    extern_shared = _extern_shared_names(tokens)
    for f in functions:
        if f.body and step_edits[f.body]:
            bodies[f.name].add("__cc_volatile_step")
    # (CUB's collectives meet at a barrier inside: `cub::BlockReduce<...>`, or an alias of one made elsewhere)
    collectives = _CUB_CLASSES | _cub_aliases(tokens)
    fiber_functions = reach(_BARRIERS | _WARP_CALLS | {"__cc_spin_point", "__cc_volatile_step", "cub"} | collectives)
    pointer_variables = _pointer_variables(tokens)
    stray = any(any(b in t.text for b in _BARRIERS | {"__shfl", "__syncwarp", "_sync("}) for t in directives) or any(
        t.text in _BARRIERS and not any(a <= i <= b for a, b in body_spans) for i, t in enumerate(tokens))
    # A barrier or a warp call inside an operator (a functor's operator(), a type's operator+=): its calls
    # (`Bar{}()`, `acc += v`) do not name it, so every kernel may reach it, as with one in a macro
    stray = stray or any(name.startswith("operator") for name in fiber_functions)
    unsupported_users = {}
    for name in bodies:
        if name in unsupported_of:
            unsupported_users[name] = unsupported_of[name]
    changed = True
    while changed:
        changed = False
        for name, idents in bodies.items():
            if name in unsupported_users:
                continue
            callee = next((c for c in sorted(idents) if c in unsupported_users and c != name), None)
            if callee:
                unsupported_users[name] = unsupported_users[callee]
                changed = True

    # Which parameters of each function are references (`float& dst`): a call passes them an
    # element without touching it, and the function's own uses of `dst` are the accesses.
    references: dict[str, set[int]] = {}
    for f in functions:
        for position, raw in enumerate(f.raws):
            if raw.reference:
                references.setdefault(f.name, set()).add(position)
    # Functions that return a reference (`float& at(int i) { return data[i]; }`): a call, `m.at(i) = v`,
    # is the access (operators are called by `m[i]`, an access already)
    returning = {f.name for f in functions if f.returns_reference and not f.name.startswith("operator")}
    # Functions that return a pointer (not one of whose overloads returns a value): `*f(p) = v` and
    # `f(p)[i] = v` are accesses of what it points to, and the pointer is a checked one (_check_returned_pointers)
    pointing = {f.name for f in functions if f.returns_pointer and not f.is_global} \
        - {f.name for f in functions if not f.returns_pointer}
    # Where each function takes a plain pointer (`float* x`, every overload of its name): a member array passed
    # there becomes a checked pointer (_pointer_argument); where each takes an array reference (`const float
    # (&x)[N]`): a member array passed there becomes a view of it (which a template's N is deduced from); where
    # each takes a pointer to rows (`float (*m)[N]`, `T m[][N]`): an array passed there decays (N is deduced)
    def positions(takes) -> dict[str, set]:  # function name → the argument positions where all its overloads do
        found: dict[str, set] = {}
        for g in functions:
            taken = {k for k, raw in enumerate(g.raws) if takes(raw)}
            found[g.name] = found[g.name] & taken if g.name in found else taken
        return found

    pointer_params = positions(lambda raw: raw.stars == 1 and not raw.reference and not raw.complex)
    array_params = positions(lambda raw: _array_reference(raw, text))
    row_params = positions(lambda raw: raw.rows and not raw.reference and not _array_reference(raw, text))
    host_code = _host_code(tokens, [f.body for f in functions if f.body])
    host_only = _host_only_uses(tokens, functions, known_types, directives, bool(_RELAXED_CONSTEXPR & set(options)))
    nvcc_refuses = _nvcc_refusals(tokens, functions, known_types,
                                  {macro[0] for macro in (_macro_of(t.text) for t in directives) if macro})
    nvcc_refuses += _missing_headers(tokens, directives)
    cas_probes = {}
    cas_misuse = (_cas_misuse(tokens, functions, cas_probes) + plain_waits + _unused_tickets(tokens, functions) + _whole_cub(directives)
                  + _sizeof_pointers(tokens, functions, known_types))
    _exchange_stores(tokens, functions, replace)
    _function_pointer_types(tokens, text, aliases, replace)
    _checked_deduction_guides(tokens, text, replace)
    kernels, problems, not_extern_c, templates, signatures = {}, {}, set(), {}, {}
    constants = _numeric_defines(all_tokens, defines)
    type_bodies = {open_: close for _, open_, close in _struct_definitions(tokens, ("struct", "class", "union"))}
    # Structs whose `operator()` returns a reference (`float& operator()(int r, int c) { return d[r * w + c]; }`):
    # a call of an object of one, `g(r, c) = v`, is the access (_note_accesses)
    structs_defined = list(_struct_definitions(tokens))  # (structs and classes: names, opening and closing brace)
    functors = {name for names, open_, close in structs_defined for name in names
                if any(g.name == "operator()" and g.returns_reference and g.body and open_ < g.body[0] < close
                       for g in functions)}
    constants = _integer_constants(tokens, type_bodies, constants)
    member_arrays, array_members = _member_arrays(tokens, type_bodies, constants)
    struct_fields = _struct_fields(tokens, aliases)
    # The pointer members of the source's structs (`struct View { float* p; int n; };`): `v.p[i]` of a __shared__
    # or __device__ View reads the member v.p before the element, a hazard with the thread that sets it
    struct_names = {n for names, _, _ in structs_defined for n in names}
    pointer_members = {name.text for _, open_, close in structs_defined
                       for _, name, _, _ in _pointer_members(tokens, open_, close, struct_names, aliases)}
    # Member functions defined in the source's structs: their bodies note what they do to the
    # members (`sum += v;`), so a call on an element (`acc[t].add(v)`) is no access of its own.
    # Only structs that live in shared or global memory (`__shared__ Acc acc[8];`, `Particle* ps`): a
    # struct only ever local (a complex number's operator*) has nothing to race on, and noting its
    # members would slow a sanitized run down for nothing.
    shared_or_global = {open_ for names, open_, close in structs_defined
                        if any(re.search(rf"__shared__[^;{{}}]*\b{re.escape(n)}\b|\b{re.escape(n)}\s*\*|"
                                         rf"__(?:device|managed)__\s+(?:volatile\s+)?{re.escape(n)}\s+\w+\s*[;=\[{{]", text)
                               for n in names)}
    method_bodies = {o: c for o, c in type_bodies.items() if o in shared_or_global}
    methods = {f.name for f in functions
               if f.body and any(o < f.body[0] and f.body[1] < c for o, c in method_bodies.items())}
    method_members: set[str] = set()
    dangling = []
    # Functions defined more than once (overloads): `f(&s[i])` of a __shared__ array passes them a
    # checked pointer, which picks `f(float*)` over `f(const float*)` (a raw address would fit both).
    defined = [g.name for g in functions if g.body]
    overloaded = {name for name in defined if defined.count(name) > 1}
    for f in functions:
        # Checked pointers for every T* parameter. A parameter whose element type is a template
        # parameter drops its `const`, so that deduction from a checked pointer still works.
        # A template __device__ function's `[const] [volatile] T* x` parameters take any pointer-like
        # argument (a checked pointer, a __shared__ or local array, extern __shared__ memory, a raw
        # pointer) and deduce T from it as nvcc does, without its const: `template <class T> T
        # sum(const T* x, int n)` becomes `template <class __cc_given_T = __cc_auto, class __cc_P0,
        # class T = __cc_pick<__cc_given_T, __cc_P0>> T sum(__cc_P0 __cc_a_x, int n)`, and the body
        # starts with `__cc_ptr<const T> x = __cc_pointer_from<const T>(__cc_a_x);`. An explicit
        # `sum<float>(x)` gives T, which the argument then need not match exactly (a const one).
        # A prototype and the definition after it get the same rewrite (the template arguments'
        # defaults only in the first); overloads each get their own, and a guard that keeps a
        # call away from an overload whose pointer parameter would get a number.
        same_name = [g for g in functions if g.name == f.name]
        declarations = [g for g in same_name if _same_signature(g, f)]
        generic = {position: (f"__cc_P{position}", raw.words[0]) for position, raw in _generic_pointers(f, tokens).items()} \
            if any(g.body for g in declarations) else {}  # parameter position → (the parameter's type name, T)
        if generic:
            opening, closing = f.template_angles
            first_declaration = declarations[0] is f
            elements = list(dict.fromkeys(t for _, t in generic.values()))
            for q in range(opening + 1, closing):
                if tokens[q].text in elements and tokens[q - 1].text in ("class", "typename"):
                    default = "" if tokens[q + 1].text == "=" or not first_declaration else " = __cc_auto"
                    replace(tokens[q].start, tokens[q].end, f"__cc_given_{tokens[q].text}{default}")
            # T comes from the first parameter of type T* that has no default (`T* also = nullptr`
            # may be left out: its type is then std::nullptr_t)
            first = {t: min(((bool(f.raws[k].default), name, k) for k, (name, u) in generic.items() if u == t))[1:]
                     for t in elements}
            # (`const T* x` deduces T without the argument's const; `T* x` with it, as C++ does)
            pick = {t: "__cc_pick" if f.raws[k].const_elements or f.raws[k].volatile else "__cc_pick_cv"
                    for t, (_, k) in first.items()}
            first = {t: name for t, (name, _) in first.items()}
            guard = "".join(f", class = __cc_if_pointer_like<{name}>" for name, _ in generic.values()) \
                if len(same_name) > len(declarations) else ""
            # `f(T* p)` beside `f(const T* p)`: each takes the arguments C++ would pick it for (the first a
            # non-const element, the second a const one), where both would take any pointer-like argument
            # (non-type parameters whose types differ: two templates differing only in a default template
            # argument would be one template defined twice)
            siblings = [_generic_pointers(g, tokens) for g in same_name if not _same_signature(g, f)]
            constness = ""
            for position, (name, _) in generic.items():
                const = f.raws[position].const_elements
                if any(position in other and other[position].const_elements != const for other in siblings):
                    constness += f", __cc_if_const_element<{name}, {'true' if const else 'false'}>*"
            guard += constness.replace(">*", ">* = nullptr") if first_declaration else constness
            replace(tokens[closing].start, tokens[closing].start,
                    "".join(f", class {name}" + (" = decltype(nullptr)" if f.raws[k].default and first_declaration
                                                 else "")
                            for k, (name, _) in generic.items())
                    + "".join(f", class {t}" + (f" = {pick[t]}<__cc_given_{t}, {first[t]}>" if first_declaration
                                                else "") for t in elements)
                    + (guard if first_declaration else ", class" * guard.count(", class = ") + constness))
            starts = []
            for position, (name, t) in generic.items():
                raw = f.raws[position]
                if not f.body:
                    replace(raw.start, raw.end, name)
                    continue
                replace(raw.start, raw.end, f"{name} __cc_a_{raw.name}")
                element = ("const " if raw.const_elements else "") + ("volatile " if raw.volatile else "") + t
                starts.append(f" {'const ' if raw.const_pointer else ''}__cc_ptr<{element}> {raw.name} = "
                              f"__cc_pointer_from<{element}>(__cc_a_{raw.name});")
            if f.body:
                replace(tokens[f.body[0]].end, tokens[f.body[0]].end, "".join(starts))
        # `float (&r)[4]` parameters and local references, which become views: sizeof(r) is the array's
        array_views = _local_array_references(tokens, f, known_types | set(f.template), replace)
        for position, raw in enumerate(f.raws):
            dependent = any(w in f.template for w in re.findall(r"\w+", text[raw.start:raw.end]))  # T, or [N]
            new = None if position in generic else _checked_pointer(
                raw, text, aliases, dependent=dependent, double=not f.is_global)
            if new is not None:
                replace(raw.start, raw.end, new)  # (a default, `= NULL`, stays where it is, after the span)
                if new.startswith("__cc_array_view<"):
                    array_views.add(new.split()[-1])
        if f.body:
            used = [n for n in file_shared if n in bodies.get(f.name, ())]
            scalars = [n for n in file_shared_scalars if n in bodies.get(f.name, ())]
            if used or scalars:
                replace(tokens[f.body[0]].end, tokens[f.body[0]].end, "".join(
                    [f' auto {n} = __cc_make_view(__cc_raw_{n}, "{n}", 1);' for n in used]
                    + [f' __cc_shared_scalar((void*)&{n}, sizeof {n}, "{n}");' for n in scalars]))
            array_views |= _auto_array_references(tokens, f, set(array_views) | set(used) | global_arrays)
            _auto_row_references(tokens, f, replace)
            method = any(o < f.body[0] and f.body[1] < c for o, c in type_bodies.items()) \
                or f.qualifier.rstrip(":").rsplit("::", 1)[-1] in structs
            _rewrite_body(tokens, f, known_types | set(f.template), replace, global_arrays, type_bodies, dangling,
                          member_arrays, array_views, overloaded, array_members, method, pointer_params, array_params,
                          row_params, extern_shared)
            named_members = _method_members(tokens, f, method_bodies)
            method_members |= named_members
            _note_accesses(tokens, f, replace, references, known_types | set(f.template),
                           set(global_variables) - global_arrays - constant_variables - read_only_variables
                           | set(file_shared_scalars), returning, named_members, methods, bit_fields, pointing,
                           functors, pointer_variables, collectives, pointer_members)
            _note_branches(tokens, f, branch_notes)
            _note_uniform_ifs(tokens, f, replace, uniform_ifs)
            for edit in spin_edits[f.body] + step_edits[f.body]:
                replace(*edit)
            if f.is_global and (stray or f.name in fiber_functions):  # (threads run as fibers)
                _note_returns(tokens, f, replace)
        if not f.is_global:
            continue
        if f.template or not f.extern_c:
            if f.body and not f.template and not f.extern_c:  # (C++ overloads: `k(float*)` and `k(int*)`)
                signatures.setdefault(f.name, set()).add(tuple((tuple(r.words), r.stars) for r in f.raws))
            if f.body or f.name not in templates:
                templates[f.name] = f
            if not f.extern_c:
                not_extern_c.add(f.name)
            continue
        if not f.body and f.name in kernels:
            continue  # a prototype of a kernel already read
        params = []
        for position, raw in enumerate(f.raws, 1):
            param, problem = _kernel_param(raw, aliases, f.name, known_types, position)
            if problem:
                problems.setdefault(f.name, problem)
            else:
                extents = [_constant(e, constants) for e in re.findall(r"\[([^\]]*)\]", param.rows)]
                if extents and None not in extents:
                    param = dataclasses.replace(param, row_shape=tuple(extents))
                params.append(param)
        if not f.returns_void:
            problems.setdefault(f.name, "a __global__ function must return void")
        if f.name in static_kernels:
            problems.setdefault(f.name, "it is declared static, which hides its name outside the source, and "
                                        "CuPy (like the CPU backend) finds a kernel by its name: remove `static`")
        # (an extern "C" kernel in a namespace keeps its C name for CuPy; the launcher calls it by its C++ one)
        call = f.qualifier + f.name
        params = [dataclasses.replace(q, fields=struct_fields[q.ctype]) if (q.by_value_struct and q.lanes == 1 or
                  q.pointer and q.dtype is None and not q.rows) and q.ctype in struct_fields else q for q in params]
        kernels[f.name] = Kernel(f.name, tuple(params), f.line, stray or f.name in fiber_functions,
                                 unsupported_users.get(f.name), call, _constant(f.launch_bounds, constants))

    dynamic_shared, dynamic_lines = [], {}
    kernel_words = {t.text for f in functions if f.is_global and f.body and (stray or f.name in fiber_functions)
                    for t in tokens[f.body[0]:f.body[1]] if t.kind == "ident"}  # what their bodies name
    for tok in directives:
        directive = re.match(r"#\s*(\w+)\s*[<\"]?([^>\"\s]*)", tok.text)
        header = directive.group(2) if directive else ""
        blank = directive and (
            (directive.group(1) == "pragma" and header == "unroll")
            or (directive.group(1) == "include" and (header in _PROVIDED_HEADERS or header in _LIBCU_STD
                                                     or header in _CUB_HEADERS or _unsupported_header(header)))
        )
        if blank:
            replace(tok.start, tok.end, "")
        elif directive and directive.group(1) == "include" and header == "cuComplex.h":
            replace(tok.start, tok.end, "__CC_CUCOMPLEX_H")  # (runtime.h: one line, the line count stays)
        guard = re.match(r"#\s*define\s+(\w+)", tok.text)
        macro = tok.text
        if guard and guard.group(1) in kernel_words and re.search(r"\breturn\s*;", macro):
            # `#define GUARD(i, n) if ((i) >= (n)) return;` used in a kernel: a return, as _note_returns
            macro = re.sub(r"\breturn\s*;", "{ __cc_thread_returns(__LINE__); return; }", macro)
        if guard:
            # `#define ADDR(p) reinterpret_cast<uintptr_t>(p)`: the casts that keep a checked pointer's
            # bounds, as in code (static_cast stays: a macro may be a constant, `static_cast<int>(256)`)
            macro = re.sub(r"(?<![\w:])(reinterpret_cast|const_cast)\s*<", r"__cc_\1<", macro)
        if macro != tok.text:
            replace(tok.start, tok.end, macro)
    for i, tok in enumerate(tokens):
        if tok.text == "decltype" and 0 < i and i + 1 < len(tokens) and tokens[i + 1].text == "(" \
                and tokens[i - 1].text in ("<", ","):
            # `is_ptr<decltype(p)>`, `std::is_same<decltype(p), const float*>`: a trait sees the pointer
            # type the source declared, not the checked pointer that stands for it here
            close = _matching(tokens, i + 1)
            if 0 < close + 1 < len(tokens) and tokens[close + 1].text in (">", ",", ">>"):
                replace(tok.start, tok.start, "__cc_plain_t<")
                replace(tokens[close].end, tokens[close].end, ">")
        if tok.text == "alignas" and i + 1 < len(tokens) and tokens[i + 1].text == "(":
            # `__shared__ alignas(16) float s[64];`: GCC takes a C++ attribute only before `static`
            # (what __shared__ is here), a GNU one anywhere
            close = _matching(tokens, i + 1)
            inside = text[tokens[i + 1].end:tokens[close].start].strip()
            alignment = inside if re.fullmatch(r"\d+", inside) else f"alignof({inside})"
            replace(tok.start, tokens[close].end, f"__attribute__((aligned({alignment})))")
        if tok.text == "static" and any(0 <= k < len(tokens) and tokens[k].text in ("__shared__", "__constant__")
                                        for k in (i - 1, i + 1)):
            replace(tok.start, tok.end, "")  # `static __shared__`: runtime.h's __shared__ is static already
        if tok.text == "extern" and i + 1 < len(tokens) and tokens[i + 1].text in ("__shared__", "__align__", "volatile"):
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
            if len(words) < 2 or end >= len(tokens) or "__shared__" not in [t.text for t in tokens[i:end]]:
                continue
            name = words[-1]
            if name not in dynamic_shared:  # (one name declared in several kernels is one name)
                dynamic_shared.append(name)
            dynamic_lines.setdefault(name, (tok.line, " ".join(w for w in words[:-1] if w != "volatile")))
            # and a C++ extern declaration of its own (never defined, never used): in CUDA, every extern __shared__
            # array of one name is one variable, so two of different types (`float s[]` in one kernel, `int s[]` in
            # another, `T s[]` in a template instantiated for two types) are refused, by NVRTC as by the compiler
            # here (cpu.py explains its "conflicting declaration")
            dims = text[tokens[k].start:tokens[end].start] if tokens[k].text == "[" else "[]"
            # `extern __shared__ float tile[][TILE];`: rows of TILE floats, each checked where it lands
            rows = text[tokens[_matching(tokens, k)].end:tokens[end].start].strip() if tokens[k].text == "[" else ""
            replace(tok.start, tokens[end].end, f"static __cc_dynamic_shared<{' '.join(words[:-1])}{rows}> {name}; "
                                                f"extern {' '.join(words[:-1])} __cc_xs_{name}{dims};")

    # Two extern __shared__ arrays in one function both start at the start of the dynamic shared
    # memory: `ys` overwrites `xs` (a learner's classic; nvcc says nothing).
    # (Not when the function uses them in phases, on purpose: every use of one before a __syncthreads()
    # that comes before every use of the other, and no loop around uses of both.)
    aliased_shared = []
    for f in functions:
        # (this body's own names: explicit specializations share their name, `SharedMemory<int>::getPointer` and
        # `SharedMemory<float>::getPointer` of the CUDA samples, each with its own array)
        own = {t.text for t in tokens[f.body[0]:f.body[1]] if t.kind == "ident"} if f.body else set()
        used = sorted({n for n in dynamic_shared if n in own}, key=lambda n: dynamic_lines[n][0])
        if f.body and len(used) > 1 and not _used_in_phases(tokens, f.body, used):
            aliased_shared.append((f.name, tuple(used), tuple(dynamic_lines[n][0] for n in used),
                                   tuple(dynamic_lines[n][1] for n in used)))

    def rewritten(edits) -> tuple[str, list]:
        out, position, skipped = [], 0, []
        for edit in sorted(edits):
            start, end, new = edit
            if start < position:
                skipped.append(edit)
                continue  # overlapping rewrites (a body emptied after its parameters were rewritten)
            out.append(text[position:start])
            out.append(new)
            position = end
        out.append(text[position:])
        return "".join(out), skipped

    if re.search(r"#\s*include\s*[<\"]cuda/std/array[>\"]", text):
        _check_std_array_subscripts(tokens, replace, _Edits(replacements))
    _check_returned_pointers(tokens, functions, replacements, pointing)
    _drop_checked_constexpr(tokens, functions, replacements)
    cpu_text, skipped = rewritten(replacements)
    trace_text, skipped_too = rewritten(replacements + branch_notes)
    if len(skipped_too) != len(skipped):
        trace_text = cpu_text  # a condition inside another rewrite: leave the branches unrecorded

    return Source(
        text=original,
        kernels=kernels,
        problems=problems,
        not_extern_c=not_extern_c - set(kernels),
        overloaded={name for name, kinds in signatures.items() if len(kinds) > 1},
        uses_barriers=any(t.kind == "ident" and t.text in _BARRIERS for t in tokens),
        dynamic_shared=dynamic_shared,
        dynamic_shared_item=_common({_item_bytes(dynamic_lines[name][1].split()) for name in dynamic_shared}),
        cpu_text=cpu_text,
        trace_text=trace_text,
        lines=original.split("\n"),
        templates=templates,
        globals=global_variables,
        global_scopes=global_scopes,
        global_pointers=global_pointers,
        constant_globals=constant_variables,
        const_globals=read_only_variables,
        host_code=host_code,
        host_only=host_only,
        nvcc_refuses=nvcc_refuses,
        dangling=dangling,
        cas_misuse=cas_misuse,
        cas_probes=cas_probes,
        aliased_shared=aliased_shared,
        raw_members=raw_members,
        global_arrays=global_arrays,
        aliases=aliases,
        bit_fields=frozenset(bit_fields),
        unsupported_of=unsupported_users,
        fiber_functions=fiber_functions | ({f.name for f in functions} if stray else set()),
        constants=constants,
        method_members=method_members,
        renamed=_declared_library_names(tokens),
        puns=_type_puns(tokens) or any(_type_puns(tokenize(t.text[1:])) for t in directives)  # (casts in macros)
        or len({dynamic_lines[name][1] for name in dynamic_shared}) > 1,
        std_headers=sorted({_LIBCU_STD[m.group(1)] for t in directives
                            if (m := re.match(r"#\s*include\s*[<\"]([^>\"\s]*)", t.text)) and m.group(1) in _LIBCU_STD}),
    )


# Names of the C library's functions and variables that runtime.h's headers declare (unistd.h,
# stdlib.h, stdio.h, time.h, signal.h, ...) and CUDA device code does not have: a kernel named
# `read` or `random`, a `__device__ int index;` would clash with them here (or, `daylight`, silently
# be the library's), not on a GPU, where device code sees none of these headers. (Not `sync`, which
# cooperative groups' block.sync() and cg::sync() use: a variable of that name would rename them.)
_C_LIBRARY_NAMES = frozenset("""
    read write close select time random remove kill signal div qsort system index rindex environ stdin
    stdout stderr timezone tzname daylight exit abort sleep usleep pipe fork dup dup2 link unlink access
    alarm pause getpid rand srand atoi atof atol strlen strcpy strcmp bsearch ldiv rename tmpfile fopen
    fclose puts putchar getchar scanf sprintf calloc realloc difftime mktime strftime gmtime localtime
    ctime asctime raise execv nice truncate ftruncate lseek fsync isatty sbrk brk chdir chown chroot getenv
    setenv putenv clearenv mkstemp mktemp tmpnam random_r srandom initstate setstate drand48 erand48
    lrand48 nrand48 mrand48 jrand48 srand48 seed48 lcong48 atexit on_exit quick_exit _exit strtol strtod
    strtof strtoul qsort_r bcopy bzero bcmp strdup strndup strtok strsep basename setjmp longjmp nanosleep
    crypt ctermid cuserid getlogin ttyname confstr sysconf pathconf fpathconf getcwd getwd gethostname
    sethostname getdomainname daemon getpass fdatasync syscall lockf ualarm vfork profil acct madvise
    mincore mlock munlock mlockall getpagesize getdtablesize mmap munmap mprotect msync optarg getopt swab
    fadd faddl daddl fsub fsubl dsubl fmul fmull dmull fdiv fdivl ddivl fsqrt fsqrtl dsqrtl ffma ffmal dfmal
    gamma gammaf gammal ffs ffsl ffsll scalb scalbf scalbl drem dremf dreml lgamma_r lgammaf_r signgam
    finite finitef significand significandf pow10 exp10f
""".split())


_CAST_WORDS = {"const", "volatile", "unsigned", "signed", "long", "short", "struct", "::", "<", ">", ",", "*"}


def _type_puns(tokens: list[Token]) -> bool:
    """Whether the source casts a pointer to another type (`(int*)s`, `reinterpret_cast<float4*>(p)`,
    `static_cast<T*>(v)`) or has a union: its memory may then be written as one type and read as another,
    which C++ leaves undefined and GCC's -O3 (strict aliasing) takes at its word, reordering a float store
    and an int load of one address, where nvcc's code does them in order (the CPU backend builds such a
    source without strict aliasing)."""
    for i, tok in enumerate(tokens):
        if tok.text in ("reinterpret_cast", "union") or tok.text == "static_cast" and i + 1 < len(tokens) \
                and tokens[i + 1].text == "<" and "*" in (t.text for t in tokens[i + 2:_matching_angle(tokens, i + 1)]):
            return True
        if tok.text != "(" or i == 0 or tokens[i - 1].kind == "ident" or i + 2 >= len(tokens) \
                or tokens[i + 1].kind != "ident":
            continue
        k = i + 1
        while k < len(tokens) and (tokens[k].kind == "ident" or tokens[k].text in _CAST_WORDS):
            k += 1
        inner = [t.text for t in tokens[i + 1:k]]
        if k + 1 < len(tokens) and tokens[k].text == ")" and "*" in inner and inner[0] != "*" \
                and (tokens[k + 1].kind in ("ident", "number") or tokens[k + 1].text in ("(", "&", "*")):
            return True  # `(float4*)&s[k]`, `(const int*)(p + 1)`
    return False


def _declared_library_names(tokens: list[Token]) -> list[str]:
    """The C library's names (_C_LIBRARY_NAMES) that the source declares itself, as a kernel, a
    function, a variable or a parameter (`__global__ void random(...)`, `int index = ...`): the CPU
    build renames them (translation_unit), so that they are the source's own."""
    found = set()
    for i, tok in enumerate(tokens[1:-1], 1):
        if tok.kind != "ident" or tok.text not in _C_LIBRARY_NAMES \
                or tokens[i + 1].text not in ("(", "[", ";", "=", ",", ")"):
            continue
        before = tokens[i - 1]
        if (before.kind == "ident" and before.text not in _NOT_DECLARATION and before.text not in ("goto", "case")) \
                or (before.text in ("*", "&") and i >= 2 and tokens[i - 2].kind == "ident"):
            found.add(tok.text)
    return sorted(found)


def _drop_explicit_instantiations(tokens: list[Token], functions: list, body_spans, replace) -> None:
    """`template __global__ void reduce<float, 256>(const float*, float*, unsigned);` (and `extern
    template ...`): an explicit instantiation of a kernel or __device__ template, which CUDA code
    writes to make nvcc emit an instance. Here the parameters are rewritten (checked pointers), so
    the declaration would match no template; and it is not needed, since a launch instantiates what
    it names (get_function, name_expressions). It is removed; its lines stay."""
    templates = {f.name for f in functions if f.template}
    for i, tok in enumerate(tokens):
        if tok.text != "template" or i + 1 >= len(tokens) or tokens[i + 1].text == "<":
            continue
        first = i - 1 if i > 0 and tokens[i - 1].text == "extern" else i
        if first > 0 and tokens[first - 1].text not in (";", "{", "}"):
            continue  # `x.template f<T>()`, `typename A::template B<T>`: not a declaration
        if any(a < i < b for a, b in body_spans):
            continue
        end = i + 1
        while end < len(tokens) and tokens[end].text not in (";", "{", "}"):
            end += 1
        if end >= len(tokens) or tokens[end].text != ";":
            continue
        words = {t.text for t in tokens[i + 1:end]}
        if words & {"__global__", "__device__"} or words & templates:
            replace(tokens[first].start, tokens[end].end, "")


def _struct_definitions(tokens: list[Token], kinds=("struct", "class")):
    """(names, `{`, `}`) of each struct or class (or union) definition: its tag, and its typedef name."""
    for i, tok in enumerate(tokens):
        if tok.text not in kinds or (i and tokens[i - 1].text in ("enum", "<", ",")):
            continue
        names, j = [], i + 1
        while j < len(tokens) and tokens[j].text not in ("{", ";", "(", ")", ",", ">", "=", ":"):
            if tokens[j].text in ("__align__", "alignas", "__attribute__") and j + 1 < len(tokens) \
                    and tokens[j + 1].text == "(":
                j = _matching(tokens, j + 1) + 1
                continue
            if tokens[j].kind == "ident":
                names.append(tokens[j].text)
            j += 1
        while j < len(tokens) and tokens[j].text not in ("{", ";", ")", ">", "="):
            j += 1  # `: Base`, `: public Base<T>`
        if j >= len(tokens) or tokens[j].text != "{":
            continue
        close = _matching(tokens, j)
        if i and tokens[i - 1].text == "typedef" and close + 1 < len(tokens) and tokens[close + 1].kind == "ident":
            names.append(tokens[close + 1].text)
        yield names, j, close


def _struct_fields(tokens: list[Token], aliases: dict) -> dict[str, tuple]:
    """Per struct name, its data members when every one is a number or an array of numbers of a known
    size: ((member, NumPy dtype name, count), ...) in declaration order (vector types as their lanes)."""
    layouts = {}
    for names, open_, close in _struct_definitions(tokens, ("struct", "class")):
        fields, words, known = [], [], True
        for name, declarator, end in _member_declarators(tokens, open_, close):
            own = [t.text for t in declarator[:-1] if t.text not in _QUALIFIERS and t.text != "__align__"]
            words = own or words  # `float lo, hi;`: hi has lo's type
            dtype, lanes = _element_dtype(_type_name(_resolve(words, aliases)) if words else "")
            if dtype is None or any(t.text in ("*", "&") for t in declarator) or end == ":":
                known = False
                break
            count = lanes
            if end == "[":  # `float v[4];`: its extents, when they are numbers
                k = next(q for q in range(open_, close) if tokens[q] is declarator[-1]) + 1
                while k < close and tokens[k].text == "[":
                    extent = tokens[k + 1].text if tokens[k + 2].text == "]" else ""
                    if not extent.isdigit():
                        known = False
                        break
                    count *= int(extent)
                    k += 3
            if not known:
                break
            fields.append((name, dtype, count))
        if known and fields:
            for n in names:
                layouts[n] = tuple(fields)
    return layouts


def _bit_fields(tokens: list[Token]) -> set[str]:
    """Names of the bit-field members of the source's structs (`unsigned flag : 1;`)."""
    return {name for _, open_, close in _struct_definitions(tokens, ("struct", "class", "union"))
            for name, _, end in _member_declarators(tokens, open_, close) if end == ":"}


def _check_struct_members(tokens: list[Token], functions: list, aliases: dict, replace) -> list:
    """`struct View { float* data; int n; };` built in device code: its pointer members become
    checked pointers, so `v.data[i]` is bounds-checked like a pointer variable. Structs whose
    bytes come from the host keep their layout: the types of kernel parameters and of
    __constant__/__device__ variables and extern __shared__ arrays, and the structs inside them:
    their pointer members are returned as (struct, member, line)."""
    definitions = list(_struct_definitions(tokens))
    unions = list(_struct_definitions(tokens, ("union",)))
    if not definitions and not unions:
        return []
    host_facing = {w for f in functions if f.is_global for raw in f.raws for w in _resolve(raw.words, aliases)}
    statement = []
    for i, tok in enumerate(tokens):  # file-scope variables, and extern __shared__ anywhere
        if tok.text in (";", "{", "}"):
            texts = {t.text for t in statement}
            if texts & {"__constant__", "__managed__", "__device__", "extern"} and "(" not in texts \
                    or {"extern", "__shared__"} <= texts:
                host_facing |= {t.text for t in statement if t.kind == "ident"}
            statement = []
        else:
            statement.append(tok)
    for alias, words in aliases.items():
        if alias in host_facing:
            host_facing |= set(words)
    grown = True
    while grown:  # a struct inside a host-facing struct is host-facing too
        grown = False
        for names, a, b in definitions:
            if set(names) & host_facing:
                inner = {t.text for t in tokens[a:b] if t.kind == "ident"} - host_facing
                inner &= {n for ns, _, _ in definitions for n in ns}
                if inner:
                    host_facing |= inner
                    grown = True
    raw_members = []  # (struct, member, line, why) of host-facing structs and unions: their pointers stay raw
    for names, a, b in definitions:  # (a struct a function defines, `struct S { float* p; } s{out};`, too)
        complete = {n for ns, _, end in definitions if end < a for n in ns}  # defined before this one
        template = set()
        k = a
        while k > 0 and tokens[k].text not in (";", "}") and tokens[k].text != "template":
            k -= 1
        if tokens[k].text == "template":
            template = set(_template_params(tokens, _matching_angle(tokens, k + 1) + 1)[0])
        # (the struct's own name too: `struct Node { Node* next; };`, a list or a tree)
        for first, name, words, const in _pointer_members(tokens, a, b, complete | template | set(names), aliases):
            if set(names) & host_facing:
                raw_members.append((names[0] if names else "", name.text, name.line, "host"))
            else:
                replace(first.start, name.end, f"{const}__cc_ptr<{' '.join(words)}> {name.text}")
    # A union's pointer member stays a raw address (a checked pointer has a constructor, which a union's
    # member may not have), and a union is how code reads a pointer's bits as a number and back.
    for names, a, b in unions:
        known = {n for ns, _, _ in definitions + unions for n in ns}
        for first, name, words, const in _pointer_members(tokens, a, b, known, aliases):
            raw_members.append((names[0] if names else "", name.text, name.line, "union"))
    return raw_members


def _pointer_members(tokens: list[Token], a: int, b: int, known: set, aliases: dict):
    """(first token, name token, element type words, "const " or "") of each `T* name;` member
    declared between the braces tokens[a] and tokens[b] (member functions and nested braces skipped)."""
    i = a + 1
    while i < b:
        tok = tokens[i]
        if tok.text in ("{", "(", "["):
            i = _matching(tokens, i) + 1
            continue
        if tokens[i - 1].text not in ("{", ";", "}", ":") or tok.kind != "ident":
            i += 1
            continue
        end = i
        while end < b and tokens[end].text not in (";", "{", "(", "}"):
            end += 1
        if end >= b or tokens[end].text != ";":
            i = end
            continue
        decl = tokens[i:end]
        star = next((q for q, t in enumerate(decl) if t.text == "*"), None)
        words = [t.text for t in decl[:star]] if star else []
        # (`const geo::Point* p;`: the type's namespaces aside, its own name is known)
        named = [w for q, w in enumerate(words) if w != "::" and (q + 1 == len(words) or words[q + 1] != "::")]
        usable = star and decl[star - 1].kind == "ident" and all(
            w in _TYPE_WORDS or w in known or all(x in _TYPE_WORDS for x in _resolve([w], aliases)) for w in named) \
            and not {"static", "typedef", "using", "friend", "template", "operator", "auto"} & set(words)
        rest = decl[star + 1:] if star else []
        while rest and rest[0].text in ("const", "__restrict__", "__restrict", "restrict"):
            rest = rest[1:]
        if usable and rest and rest[0].kind == "ident" and (len(rest) == 1 or rest[1].text in ("=", "[")):
            yield decl[0], rest[0], words, "const " if decl[star + 1].text == "const" else ""  # `float* const p;`
        i = end + 1


def _numeric_defines(tokens: list[Token], defines: dict) -> dict[str, str]:
    """Object-like macros (`#define TILE 16`) and -D options: what a __launch_bounds__ may name."""
    found = {name: str(value) for name, value in defines.items()}
    for macro in (_macro_of(t.text) for t in tokens if t.kind == "pp"):
        if macro and macro[1].params is None and macro[1].body:
            found[macro[0]] = " ".join(macro[1].body)
    return found


def _constant(expression: str, names: dict) -> int | None:
    """The value of an integer constant expression such as `TILE * TILE` or `256`, or None."""
    text = expression
    for _ in range(8):  # macros that name macros
        text = re.sub(r"\b[A-Za-z_]\w*\b", lambda m: f"({names[m.group()]})" if m.group() in names else m.group(),
                      re.sub(r"\b0[xX][0-9a-fA-F]+", lambda m: str(int(m.group(), 16)), text))
        if not re.search(r"[A-Za-z_]", re.sub(r"(\d)[uUlL]+", r"\1", text)):
            break
    text = re.sub(r"(\d)[uUlL]+", r"\1", text)
    if not re.fullmatch(r"[\d\s+\-*/%()<>]*\d[\d\s+\-*/%()<>]*", text):
        return None
    try:
        value = eval(text.replace("/", "//"), {"__builtins__": {}}, {})  # digits and operators only
    except Exception:
        return None
    return value if isinstance(value, int) and value > 0 else None


def template_example(f) -> str:
    """A name expression for the template kernel `f`: its defaults, else float for a type, 256 for a value."""
    defaults = f.template_defaults or [None] * len(f.template)
    values = [d.strip() if d else ("float" if kind == "type" else "256") for d, kind in zip(defaults, f.template_kinds)]
    return f"{f.qualifier}{f.name}<{', '.join(values)}>"


#: Type names a template argument may be (besides the source's own): for the typo check of a name expression.
_BUILTIN_TYPES = ("float", "double", "int", "unsigned", "char", "short", "long", "bool", "half", "__half",
                  "__nv_bfloat16", "float2", "float4", "int2", "int4", "double2", "uint", "size_t")


def _unknown_type(source: Source, value: str) -> str | None:
    """For a type argument of a name expression that is one word the source never uses and that is
    close to a built-in type's name (`flaot`): the message that says so; else None."""
    words = value.split()
    if len(words) != 1 or not re.fullmatch(r"[A-Za-z_]\w*", words[0]):
        return None
    word = words[0]
    known = set(_TYPE_WORDS) | set(SCALAR_DTYPES) | set(VECTOR_TYPES) | set(HALF_TYPES) | set(source.aliases)
    if word in known or re.search(rf"\b{re.escape(word)}\b", source.text):
        return None
    close = difflib.get_close_matches(word, _BUILTIN_TYPES + tuple(sorted(known)), n=1, cutoff=0.7)
    return f"'{word}' is not a type (did you mean '{close[0]}'?)" if close else None


def instantiate(source: Source, expression: str) -> Kernel:
    """The kernel a CuPy name expression names: 'reduce<float, 256>' (a template kernel with its
    arguments), or the plain name of a kernel that is not extern "C"."""
    m = re.fullmatch(r"\s*((?:::)?\s*(?:[A-Za-z_]\w*\s*::\s*)*)([A-Za-z_]\w*)\s*(?:<(.*)>)?\s*", expression, re.S)
    if not m:
        raise CompileError(f"name expression {expression!r}: write a kernel's name, e.g. 'reduce<float, 256>'")
    written, name, arguments = re.sub(r"\s+", "", m.group(1)).lstrip(":"), m.group(2), m.group(3)
    if arguments is None and name in source.kernels:
        return source.kernel(name)
    if name in source.overloaded:  # (NVRTC: "cannot determine which instance of overloaded function")
        raise CompileError(f"name expression {expression!r}: the source defines two or more "
                           f"__global__ functions named '{name}' (C++ overloads, with different parameters), and a name "
                           "expression cannot tell which one it means (NVRTC refuses it too: 'cannot determine which "
                           "instance of overloaded function'). Give each kernel its own name (`k_float`, `k_int`).")
    f = source.templates.get(name)
    if f is not None and written and written != f.qualifier:  # `ops::fill<float>`: the namespace must be its own
        raise CompileError(f"name expression {expression!r}: the source's '{name}' is "
                           f"'{f.qualifier}{name}', not '{written}{name}'")
    if f is None:
        found = ", ".join(sorted(set(source.templates) | set(source.kernels))) or "none"
        raise CompileError(f"name expression {expression!r}: the source defines no __global__ function "
                           f"named '{name}' (kernels found: {found})")
    values = [" ".join(t.text for t in part) for part in _split_commas(tokenize(arguments or ""))]
    defaults = f.template_defaults[len(values):len(f.template)] if arguments is not None else []
    if len(values) < len(f.template) and len(defaults) == len(f.template) - len(values) and None not in defaults:
        # `k<3>` of `template <int S = 2, typename T = float>`: T is float; a default that names an earlier parameter
        # (`typename Op = Plus<T>`) gets that parameter's value (`Plus<float>`)
        for default in defaults:
            given = dict(zip(f.template, values))
            values.append(re.sub(r"\b\w+\b", lambda w: given.get(w.group(0), w.group(0)), default))
    # (each argument given, or its default: a kernel's name expression names one instance, whose arguments
    # nothing deduces; a parameter pack may be left empty)
    if len(values) > len(f.template) or (f.template and arguments is None) \
            or len(values) < len(f.template) and not f.variadic:
        missing = [t for t, d in zip(f.template[len(values):], f.template_defaults[len(values):]) if d is None]
        raise CompileError(f"name expression {expression!r}: '{name}' takes {len(f.template)} template "
                           f"argument(s) <{', '.join(f.template)}>, got {len(values)}"
                           + (f": give {', '.join(missing)} too, e.g. '{name}<{', '.join(values + missing)}>' with "
                              f"{' and '.join(missing)} replaced by {'their values' if len(missing) > 1 else 'its value'}"
                              if missing and len(values) < len(f.template) and arguments is not None else ""))
    for v, kind in zip(values, f.template_kinds):
        if kind == "type" and (unknown := _unknown_type(source, v)):
            raise CompileError(f"name expression {expression!r}: {unknown}")
    substitution = {t: v.split() for t, v, kind in zip(f.template, values, f.template_kinds) if kind == "type"}
    params, problems = [], []
    for position, raw in enumerate(f.raws, 1):
        words = [x for w in raw.words for x in substitution.get(w, [w])]
        param, problem = _kernel_param(dataclasses.replace(raw, words=words), source.aliases, name, set(), position)
        if problem:
            problems.append(problem)
        else:
            params.append(param)
    if problems:
        raise CompileError(f"kernel '{expression}': {problems[0]}")
    call = f"{f.qualifier}{name}<{', '.join(values)}>" if f.template else f.qualifier + name
    constants = {**source.constants, **{t: v for t, v, kind in zip(f.template, values, f.template_kinds)
                                        if kind != "type"}}
    return Kernel(expression.strip(), tuple(params), f.line, name in source.fiber_functions,
                  source.unsupported_of.get(name), call, _constant(f.launch_bounds, constants))


_NOT_DECLARATION = {"extern", "else", "do", "return", "case", "goto", "throw", "delete", "new", "while", "if",
                    "for", "switch", "sizeof", "typedef", "using"}

# Tokens after which a statement (and so a declaration) may start.
_STATEMENT_START = {";", "{", "}"}
_CAST_OPERAND = {"(", "&", "*", "this", "-", "+", "!", "~"}


_DEVICE_HEAP_CALLS = {"malloc": "__cc_device_malloc", "free": "__cc_device_free"}


def _generic_pointers(f: _Function, tokens: list[Token]) -> dict:
    """A template __device__ function's `[const] T* x` parameters (T a type parameter of its
    template), by position: those that take any pointer-like argument (see parse)."""
    if not f.template_angles or f.is_global \
            or any(t.text == "..." for t in tokens[f.template_angles[0]:f.template_angles[1]]):
        return {}
    return {position: raw for position, raw in enumerate(f.raws)
            if raw.stars == 1 and not raw.complex and not raw.reference and (raw.name or not f.body)
            and len(raw.words) == 1 and raw.words[0] in f.template
            and f.template_kinds[f.template.index(raw.words[0])] == "type"}


_ARRAY_REFERENCE = re.compile(r"((?:const\s+|volatile\s+)*[\w\s:<>,]*?\w)\s*\(\s*&\s*(\w+)\s*\)\s*((?:\[[^\]]+\]\s*)+)")


def _array_reference(raw: _RawParam, text: str):
    """The match of a parameter that is a reference to an array, `const float (&x)[N]`: its element type,
    name and extents."""
    return _ARRAY_REFERENCE.fullmatch(text[raw.start:raw.end].strip()) if raw.complex else None


def _checked_pointer(raw: _RawParam, text: str, aliases: dict, dependent: bool = False,
                     double: bool = True) -> str | None:
    """What a pointer parameter becomes in the CPU rewrite, or None where it stays as written:
    `const float* x` → `__cc_ptr<const float> x` (a parameter whose element type is a template's
    parameter, `dependent`, drops its const, so that deduction from a checked pointer still works);
    with `double`, `float** p` → `__cc_ptr<float>* p`, what `&q` of a checked pointer q gives, so that
    `swap(&p, &q)` compiles and p keeps its bounds (a kernel's `T**` comes from the host: not so)."""
    array_reference = _array_reference(raw, text)
    if double and array_reference:  # a __device__ function's `float (&r)[4]`: a view of r
        element, name, extents = array_reference.groups()
        extents = re.sub(r"\s+", "", extents)
        if dependent:  # `const T (&v)[N]`: T is deduced from a view of float, not of const float
            element = re.sub(r"\bconst\s+", "", element)
        return f"__cc_array_view<{element}{extents}> {name}"
    pointer_reference = re.fullmatch(r"((?:const\s+|volatile\s+)*[\w\s:<>,]*?\w)\s*\*\s*(const\s+)?(?:__restrict__\s+)?&"
                                     r"\s*(\w+)?", text[raw.start:raw.end].strip())
    if raw.complex and double and pointer_reference:  # `float*& p`, `T*& p`: a reference to a checked pointer
        element, const, name = pointer_reference.groups()
        if dependent:
            element = re.sub(r"\bconst\s+", "", element)
        return f"{const or ''}__cc_ptr<{element}>&" + (f" {name}" if name else "")
    if (complex_number := _complex_number(raw)) and raw.name:  # `const cuda::std::complex<float>* z`
        element = ("const " if raw.const_elements and not dependent else "") + ("volatile " if raw.volatile else "")
        return f"{'const ' if raw.const_pointer else ''}__cc_ptr<{element}{complex_number[0]}> {raw.name}"
    if raw.complex and not raw.rows:  # (`float A[N][M]`, `float (*A)[M]`: a checked pointer to rows)
        return None
    if raw.stars == 2 and double:  # (`const float* const* rows`: `__cc_ptr<const float> const* rows`)
        pointer_to_pointer = re.fullmatch(r"(const\s+)?(\w+)\s*(const\b\s*)?\*\s*(const\b\s*)?\*\s*(const\b\s*)?"
                                          r"(?:__restrict__\s+)?(\w+)?", text[raw.start:raw.end].strip())
        if not pointer_to_pointer:
            return None
        const, element, const_after, inner_const, outer_const, name = pointer_to_pointer.groups()
        return (f"__cc_ptr<{'const ' if const or const_after else ''}{element}>{' const' if inner_const else ''}*"
                + (" const" if outer_const else "") + (f" {name}" if name else ""))
    if raw.stars != 1 or _resolve(raw.words, aliases) == ["void"]:
        return None
    element = ("const " if raw.const_elements and not dependent else "") + ("volatile " if raw.volatile else "")
    return f"{'const ' if raw.const_pointer else ''}__cc_ptr<{element}{' '.join(raw.words)}{raw.rows}> {raw.name or ''}"


def _function_pointer_types(tokens: list[Token], text: str, aliases: dict, replace) -> None:
    """A function pointer type (`typedef void (*stage_fn)(float*, int);`, `using`, a __device__
    function's parameter `float (*op)(const float*, int)`, a local `void (*f)(float*) = g;` or a cast
    to one): its pointer parameters become checked pointers, as the parameters of the functions it
    points to have, so that `stage_fn f = stage;` compiles. A call through such a pointer,
    `(*op)(a * b, n)`, is not a declaration: the `(` follows no return type."""
    not_types = {"return", "case", "sizeof", "else", "do", "throw", "co_return", "co_yield"}
    for i in range(1, len(tokens) - 3):
        if tokens[i].text != "(" or tokens[i + 1].text != "*":
            continue
        before = tokens[i - 1]
        if before.kind != "ident" or before.text in not_types:  # (`x * (*op)(a * b)` is a product)
            continue
        close = _matching(tokens, i)
        name = tokens[i + 2:close]
        if len(name) > 1 or (name and name[0].kind != "ident") or close + 1 >= len(tokens) \
                or tokens[close + 1].text != "(":
            continue
        end = _matching(tokens, close + 1)
        for group in _split_commas(tokens[close + 2:end]):
            raw = _parse_param(group, text)
            new = _checked_pointer(raw, text, aliases) if raw else None
            if new is not None:
                replace(raw.start, raw.end, new.rstrip())


def _checked_deduction_guides(tokens: list[Token], text: str, replace) -> None:
    """A deduction guide that takes pointers, `template <class T> View(T*, int) -> View<T>;`, gets a twin that takes
    checked ones (`View(__cc_ptr<T>, int)`), so that `View v{out, n};` of a checked pointer deduces T as nvcc does
    from a raw one (the guide as written stays, for raw pointers)."""
    for i, tok in enumerate(tokens):
        if tok.text != "->" or i < 3 or tokens[i - 1].text != ")" or i + 2 >= len(tokens):
            continue
        open_ = _opening(tokens, i - 1)
        if open_ < 1 or tokens[open_ - 1].kind != "ident" or tokens[i + 1].text != tokens[open_ - 1].text \
                or tokens[i + 2].text != "<":
            continue
        close = _matching_angle(tokens, i + 2)
        if close < 0 or close + 1 >= len(tokens) or tokens[close + 1].text != ";":
            continue
        first = open_ - 1
        if tokens[first - 1].text == ">" and (start := _opening_angle(tokens, first - 1)) > 0 \
                and tokens[start - 1].text == "template":
            first = start - 1
        params = _split_commas(tokens[open_ + 1:i - 1])
        checked, changed = [], False
        for part in params:
            words = [t.text for t in part]
            star = words.index("*") if words.count("*") == 1 else -1
            if star > 0 and all(w == "const" or t.kind == "ident" for w, t in zip(words[:star], part)) \
                    and len(words) - star <= 2:
                checked.append(f"__cc_ptr<{' '.join(words[:star])}>")
                changed = True
            else:
                checked.append(text[part[0].start:part[-1].end] if part else "")
        if changed:
            head = text[tokens[first].start:tokens[open_].end]
            tail = text[tokens[i - 1].start:tokens[close + 1].end]
            replace(tokens[close + 1].end, tokens[close + 1].end, f" {head}{', '.join(checked)}{tail}")


def _host_code(tokens: list[Token], device_bodies: list[tuple[int, int]]) -> list[tuple[str, int]]:
    """Host code pasted with the kernels (a sample's whole .cu file): `main`, CUDA runtime calls
    (cudaMalloc, cudaMemcpy, ...) and `<<<...>>>` launches outside device functions, which
    neither NVRTC nor the CPU backend compiles."""
    found, body = [], 0
    bodies = sorted(device_bodies)
    for i, tok in enumerate(tokens):
        while body < len(bodies) and bodies[body][1] < i:
            body += 1
        if body < len(bodies) and bodies[body][0] <= i <= bodies[body][1]:
            continue  # device code: dynamic parallelism there is reported as such
        following = tokens[i + 1].text if i + 1 < len(tokens) else ""
        if tok.text == "main" and following == "(" and i > 0 and tokens[i - 1].text in ("int", "void"):
            found.append(("int main()", tok.line))
        elif tok.kind == "ident" and re.fullmatch(r"cuda[A-Z]\w*", tok.text) and following == "(":
            found.append((tok.text, tok.line))
        elif _is_launch(tokens, i):
            found.append(("a <<<grid, block>>> launch", tok.line))
    return found


# Host library calls nvcc and NVRTC refuse in device code (`rand()`, `std::vector`): each with what a
# kernel uses instead.
_HOST_LIBRARY = {
    "rand": "cuRAND's curand_init and curand_uniform (curand_kernel.h), or numbers drawn on the host and passed in",
    "srand": "cuRAND's curand_init (curand_kernel.h), with a seed passed as an argument",
    "random": "cuRAND's curand_init and curand_uniform (curand_kernel.h)",
    "time": "a value passed in as an argument (or clock64() to time a stretch of the kernel)",
    **dict.fromkeys(("exit", "quick_exit", "_Exit", "_exit"), "__trap() to stop the kernel, or return from it"),
    **dict.fromkeys(("abort", "__builtin_abort", "raise", "kill"), "__trap() to stop the kernel"),
    "fopen": "files are read on the host: pass the data in as an array", "fprintf": "printf",
    "fputs": "printf", "puts": "printf", "putchar": "printf", "scanf": "an argument passed in",
    "sleep": "__nanosleep(ns)", "usleep": "__nanosleep(ns)",
    # <string.h> and <stdlib.h> functions CUDA's device library lacks (memcpy, memset, malloc, free are in it)
    "strlen": "a loop up to the '\\0', or the length passed in as an argument",
    "strcmp": "a loop comparing the characters", "strncmp": "a loop comparing the characters",
    "strcpy": "a loop copying the characters", "strncpy": "a loop copying the characters",
    "strcat": "a loop copying the characters", "sprintf": "printf", "snprintf": "printf",
    "atoi": "numbers converted on the host and passed in", "atof": "numbers converted on the host and passed in",
    "strtol": "numbers converted on the host and passed in", "strtof": "numbers converted on the host and passed in",
    "qsort": "a sort written for the kernel (or sort on the host)",
    # (with exit and abort above: what would end or signal the Python process running the CPU backend)
    "signal": "nothing: kernels have no signals", "system": "work done on the host, before or after the launch",
    "fork": "the kernel's own threads",
    # the CUDA runtime's host API (a kernel's own allocation comes from the device heap)
    "cudaMalloc": "an array allocated on the host (np.zeros, or xp.zeros for the GPU) and passed in, or malloc(bytes) "
                  "in the kernel (the device heap)",
    "cudaMallocManaged": "an array allocated on the host and passed in, or malloc(bytes) in the kernel",
    "cudaFree": "free(p) for what malloc gave the kernel (arrays passed in are freed by Python)",
    "cudaMemcpy": "memcpy(dst, src, bytes) in the kernel, or a copy on the host before or after the launch",
    "cudaMemcpyAsync": "memcpy(dst, src, bytes) in the kernel, or a copy on the host",
    "cudaMemset": "memset(p, value, bytes) in the kernel, or arrays filled on the host",
    "cudaDeviceSynchronize": "__syncthreads() within a block; across the grid, end the kernel and launch the next one",
    "cudaStreamSynchronize": "__syncthreads() within a block; across the grid, end the kernel and launch the next one",
    "cudaGetLastError": "a check on the host after the launch (a fault the CPU backend finds raises KernelError "
                        "there)",
    "cudaPeekAtLastError": "a check on the host after the launch",
    "cudaGetErrorString": "printf of your own message, or a check on the host after the launch",
}
_HOST_STD = {
    "vector": "a fixed-size local array (float a[8];), or an argument array", "string": "a char array",
    "map": "an argument array indexed by key", "unordered_map": "an argument array indexed by key",
    "set": "an argument array", "list": "an array", "deque": "an array", "cout": "printf",
    "cerr": "printf", "cin": "an argument passed in", "endl": "printf(\"\\n\")", "thread": "the kernel's own threads",
    "mutex": "atomicCAS", "sort": "a sort written for the kernel (or sort on the host)",
    "rand": "cuRAND (curand_kernel.h)", "random_device": "cuRAND (curand_kernel.h)",
    "mt19937": "cuRAND (curand_kernel.h)", "function": "a template parameter or a __device__ function pointer",
    "swap": "a swap by hand (float t = a; a = b; b = t;), or cuda::std::swap (#include <cuda/std/utility>)",
    "accumulate": "a loop", "fill": "a loop", "copy": "a loop", "iota": "a loop",
}
# Constexpr host functions of the C++ library: nvcc refuses them in device code ("calling a constexpr
# __host__ function from a __global__ function is not allowed") unless given --expt-relaxed-constexpr,
# and NVRTC has them only from libcu++ (cuda::std::, which kernels may use).
_HOST_CONSTEXPR_STD = {
    "min": "min(a, b) (CUDA's device min; fminf for floats), or cuda::std::min (#include <cuda/std/algorithm>)",
    "max": "max(a, b) (CUDA's device max; fmaxf for floats), or cuda::std::max (#include <cuda/std/algorithm>)",
    "clamp": "min(max(v, lo), hi)",
    "numeric_limits": "FLT_MAX, INT_MAX, ... (<cfloat>, <climits>), or cuda::std::numeric_limits "
                      "(#include <cuda/std/limits>)",
}
_RELAXED_CONSTEXPR = {"--expt-relaxed-constexpr", "-expt-relaxed-constexpr"}
_ACCESS = {"public", "private", "protected"}
_ATTRIBUTE_CALLS = {"__launch_bounds__", "__maxnreg__", "__align__", "__attribute__", "alignas", "__declspec", "decltype",
                    "sizeof", "alignof", "__cluster_dims__", "noexcept", "static_assert", "__builtin_offsetof"}


def _declarator_name(tokens: list[Token], a: int, b: int) -> int | None:
    """In the declaration tokens[a:b] (before its body's `{` or its `;`), the index of the name of
    the function it declares (the identifier before its parameter list), or None when it declares
    no function (a variable, `int x = f(3);`)."""
    i = a
    if i < b and tokens[i].text == "template" and i + 1 < b and tokens[i + 1].text == "<":
        i = _matching_angle(tokens, i + 1) + 1
    while i < b:
        t = tokens[i]
        if t.text in ("=", "{"):
            return None
        if t.text == "(":
            if i > a and tokens[i - 1].kind == "ident" and tokens[i - 1].text not in _ATTRIBUTE_CALLS:
                return i - 1
            i = _matching(tokens, i) + 1
            continue
        if t.text == "operator":
            return None  # operators are called as `a + b`: not followed here
        i += 1
    return None


def _constructed_with(tokens: list[Token], k: int, b: int) -> int | None:
    """How many arguments construct the type named at tokens[k]: `T(a, b)`, `T{a, b}`, `T x(a, b)`,
    `T x{a, b}`, `T x = {a, b}` (None when tokens[k] constructs nothing so)."""
    at = k + 1
    if at + 1 < b and tokens[at].kind == "ident":
        at += 1
        if tokens[at].text == "=" and at + 1 < b and tokens[at + 1].text == "{":
            at += 1
    if at >= b or tokens[at].text not in ("(", "{"):
        return None
    close = _matching(tokens, at)
    return len([p for p in _split_commas(tokens[at + 1:close]) if p])


_SPACE_WORDS = {"__device__", "__global__", "__host__", "__constant__", "__shared__", "__managed__", "constexpr"}


def _host_only_uses(tokens: list[Token], functions: list, known_types: set,
                    directives: list[Token], relaxed_constexpr: bool = False) -> list[tuple[str, int, str]]:
    """Host code that device code uses, which nvcc and CuPy's NVRTC refuse, though g++ compiles it:
    a function declared without __device__ (a member function or a constructor too), a library call
    such as rand() or std::vector, a file-scope variable without __device__ or __constant__.
    (message, line, what to do) for each, in source order. `directives`: the source's #define lines
    (`#define HD __host__ __device__` marks what it precedes; a macro's name is no function)."""
    macro_words: dict[str, set] = {}
    for directive in directives:
        m = re.match(r"#\s*define\s+([A-Za-z_]\w*)", directive.text)
        if m:
            macro_words[m.group(1)] = {t.text for t in tokenize(directive.text[m.end():])} & _SPACE_WORDS

    def spelled(part) -> set:  # the words of a declaration, with the execution spaces its macros stand for
        words = {t.text for t in part}
        for word in list(words):
            words |= macro_words.get(word, set())
        return words

    device_bodies = sorted(f.body for f in functions if f.body)
    device_names = {f.name for f in functions}
    device_starts = {body[0] for body in device_bodies}
    host_functions: dict[str, int] = {}  # free functions: name → line
    host_members: dict[str, int] = {}  # member functions (and `T::f` definitions): name → line
    host_constructors: dict[str, tuple] = {}  # struct name → (line, parameter counts) of constructors without __device__
    device_constructors: set[str] = set()
    host_variables: dict[str, int] = {}  # file-scope variables device code cannot use
    host_constexpr: dict[str, int] = {}  # constexpr functions without __device__ (NVRTC refuses them all the same)
    const_arrays: set[str] = set()  # `const float taps[3] = {...};`: host memory, but NVRTC refuses only a use
    namespaces: set[str] = set()

    def record_function(a: int, b: int, class_name: str | None) -> None:
        name_at = _declarator_name(tokens, a, b)
        if name_at is None:
            return
        words = spelled(tokens[a:b])
        name = tokens[name_at].text
        if name in macro_words or words & {"typedef", "using", "friend"}:
            return
        if words & {"constexpr", "consteval"}:  # (a constexpr function may run at compile time: not followed)
            if not words & {"__device__", "__global__"}:
                host_constexpr.setdefault(name, tokens[name_at].line)
            return
        constructor = class_name is not None and name == class_name or (
            name_at >= 2 and tokens[name_at - 1].text == "::" and tokens[name_at - 2].text == name)
        if "__device__" in words or "__global__" in words:
            if constructor:
                device_constructors.add(name)
            return
        close = _matching(tokens, name_at + 1)
        after = [t.text for t in tokens[close + 1:b]]
        if "=" in after and ("default" in after or "delete" in after or "0" in after):
            return  # `P() = default;`: host and device; `= delete`, pure virtual: nothing to call
        if constructor:
            parameters = [p for p in _split_commas(tokens[name_at + 2:close]) if p and [t.text for t in p] != ["void"]]
            host_constructors.setdefault(name, (tokens[name_at].line, set()))[1].add(len(parameters))
        elif class_name is not None or (name_at >= 1 and tokens[name_at - 1].text == "::"):
            host_members.setdefault(name, tokens[name_at].line)
        elif name != "main":
            host_functions.setdefault(name, tokens[name_at].line)

    def record_variables(a: int, b: int) -> None:
        words = [t.text for t in tokens[a:b]]
        if not words or spelled(tokens[a:b]) & {"__device__", "__constant__", "__shared__", "__managed__", "typedef", "using",
                                       "template", "static_assert", "namespace", "struct", "class", "union",
                                       "enum", "constexpr", "__global__", "friend", "operator"}:
            return
        if words[0] == "extern" and len(words) > 1 and words[1] == '"C"':
            return
        const = "const" in words
        depth, start = 0, a
        for k in range(a, b + 1):  # each declarator: `int a = 1, b[4];`
            text = tokens[k].text if k < b else ","
            if text in ("(", "[", "{", "<"):
                depth += 1
            elif text in (")", "]", "}", ">"):
                depth -= 1
            if text == "," and depth == 0 or k == b:
                part = tokens[start:k]
                cut = next((q for q, t in enumerate(part) if t.text == "="), len(part))
                head = part[:cut]
                is_array = any(t.text == "[" for t in head)
                names = [q for q, t in enumerate(head) if t.kind == "ident" and t.text not in _TYPE_WORDS
                         and (q + 1 == len(head) or head[q + 1].text in ("[",))]
                if names and not any(t.text == "(" for t in head[:names[-1]]):
                    name_tok = head[names[-1]]
                    if name_tok.text not in known_types and name_tok.text not in macro_words and (not const or is_array):
                        host_variables.setdefault(name_tok.text, name_tok.line)
                        if const:
                            const_arrays.add(name_tok.text)  # (NVRTC takes one that device code does not use)
                start = k + 1

    def scan(a: int, b: int, class_name: str | None) -> None:
        i, start = a, a
        while i < b:
            t = tokens[i]
            if t.text == ";":
                # (a function's declaration without its body is no evidence: `extern "C" int printf(...);`)
                if start < i and class_name is None and _declarator_name(tokens, start, i) is None:
                    record_variables(start, i)
                i += 1
                start = i
            elif t.text in _ACCESS and i + 1 < b and tokens[i + 1].text == ":":
                i += 2
                start = i
            elif t.text == "{":
                close = _matching(tokens, i)
                words = [x.text for x in tokens[start:i]]
                if i in device_starts:  # a __device__ or __global__ function's body
                    i = close + 1
                    start = i
                    continue
                elif words[:1] == ["namespace"] or words[-2:] == ["extern", '"C"']:
                    namespaces.update(words[1:2])
                    scan(i + 1, close, None)
                elif (set(words) & {"struct", "class", "union"}) and "(" not in words and "=" not in words:
                    keyword = next(q for q, w in enumerate(words) if w in ("struct", "class", "union"))
                    name = next((w for w in words[keyword + 1:] if w not in _QUALIFIERS and re.fullmatch(r"[A-Za-z_]\w*", w)
                                 and not w.startswith("__align")), None)
                    scan(i + 1, close, name or "")  # ("": an anonymous struct's members are no file-scope variables)
                elif "=" not in words and "enum" not in words:
                    record_function(start, i, class_name)  # a function's body: host code, not followed
                    i = close + 1
                    start = i
                    continue
                i = close + 1
                if words and words[0] in ("namespace", "extern"):
                    start = i
            elif t.text in ("(", "["):
                i = _matching(tokens, i) + 1
            else:
                i += 1

    scan(0, len(tokens), None)
    for name in device_names:
        host_functions.pop(name, None)
        host_members.pop(name, None)
    for name in device_constructors:
        host_constructors.pop(name, None)

    found: list[tuple[str, int, str]] = []
    said: set = set()
    by_function = {f.body: f for f in functions if f.body}
    kernels = {f.name for f in functions if f.is_global}
    for body in device_bodies:
        f = by_function[body]
        kind = "__global__ function" if f.is_global else "__device__ function"
        a, b = body
        start = a - 1
        while start >= 0 and tokens[start].text not in (";", "}") and not (
                tokens[start].text == "{" and start not in device_starts):
            start -= 1
        if "__host__" in spelled(tokens[start + 1:a]):
            continue  # __host__ __device__: nvcc only warns, and `#ifdef __CUDA_ARCH__` may keep host calls apart
        # names the function declares (parameters, locals, lambdas): they hide a host one
        declared = {raw.name for raw in f.raws if raw.name} | set(f.template)
        for k in range(a + 1, b):
            t = tokens[k]
            if t.kind == "ident" and k + 1 < b and tokens[k + 1].text in ("=", ";", "[", ",", ")", "{", "(", ":") \
                    and (tokens[k - 1].text in known_types or tokens[k - 1].text in ("*", "&", "auto")
                         or (tokens[k - 1].kind == "ident" and tokens[k - 1].text not in (
                             "return", "case", "else", "do", "sizeof", "new", "delete", "goto", "throw"))):
                if tokens[k + 1].text != "(" or tokens[k - 1].text in known_types:
                    declared.add(t.text)
            elif t.kind == "ident" and tokens[k - 1].text == "," and k + 1 < b and tokens[k + 1].text in (
                    "=", ";", "[", ","):  # `float a = 1, y = 2;`: y is declared if the statement starts with a type
                q = k - 1
                while q > a and tokens[q].text not in (";", "{", "}", "("):
                    q -= 1
                if tokens[q + 1].text in known_types or tokens[q + 1].text in ("static", "register"):
                    declared.add(t.text)
        attributes = set()  # `__attribute__((aligned(16)))`: words of an attribute, not calls
        for k in range(a + 1, b - 1):
            if tokens[k].text in _ALIGNMENT_WORDS and tokens[k + 1].text == "(":
                attributes.update(range(k + 1, _matching(tokens, k + 1)))
        for k in range(a + 1, b):
            t = tokens[k]
            if t.kind != "ident" or t.text in declared or k in attributes:
                continue
            previous = tokens[k - 1].text
            following = tokens[k + 1].text if k + 1 < b else ""
            if following == "<" and k + 1 < b:  # `sq<float>(x)`
                end = _matching_angle(tokens, k + 1)
                if 0 < end < b - 1 and tokens[end + 1].text == "(":
                    following = "("
            what = fix = None
            in_std = previous == "::" and k >= 2 and tokens[k - 2].text == "std" and not (
                k >= 4 and tokens[k - 3].text == "::" and tokens[k - 4].text == "cuda")  # (cuda::std:: is device code)
            if in_std and t.text in _HOST_STD:
                what, fix = f"std::{t.text} (host code from the C++ library)", f"use {_HOST_STD[t.text]}"
            elif in_std and t.text in _HOST_CONSTEXPR_STD and not relaxed_constexpr:
                what = (f"std::{t.text} (constexpr host code of the C++ library: nvcc allows it in device code "
                        "only with the option --expt-relaxed-constexpr)")
                fix = f"use {_HOST_CONSTEXPR_STD[t.text]}"
            elif following == "(" and t.text in _HOST_LIBRARY and t.text not in host_functions and (
                    in_std or previous == "::" and (k < 2 or tokens[k - 2].kind != "ident")  # `std::exit`, `::exit`
                    or previous not in (".", "->", "::") and t.text not in device_names):
                qualifier = "std::" if in_std else "::" if previous == "::" else ""
                what, fix = f"{qualifier}{t.text}() (a host library function)", f"use {_HOST_LIBRARY[t.text]}"
            elif previous in (".", "->") and following == "(" and t.text in host_members:
                what = f"the member function {t.text} (line {host_members[t.text]}), which is declared without __device__"
                fix = f"declare it __device__ {t.text}(...) (or __host__ __device__ to call it from both sides)"
            elif (previous in (".", "->") or previous == "::" and tokens[k - 2].text not in namespaces) or (
                    t.text in device_names and t.text not in kernels):
                continue
            elif following == "(" and t.text in host_functions:
                what = f"the function {t.text} (line {host_functions[t.text]}), which is declared without __device__"
                fix = f"declare it __device__ (or __host__ __device__ to call it from both the host and kernels)"
            elif previous not in (".", "->") and following == "(" and t.text in kernels and \
                    tokens[k + 1].text != "<<<":
                what = (f"the __global__ function {t.text} as a function: a kernel is launched from the host, not "
                        "called")
                fix = (f"move the work both need into a __device__ function that {t.text} and {f.name} call")
            elif t.text in host_constructors and _constructed_with(tokens, k, b) in host_constructors[t.text][1]:
                what = (f"a constructor of {t.text} (line {host_constructors[t.text][0]}), which is declared "
                        "without __device__")
                fix = f"declare the constructor __device__ {t.text}(...) (or __host__ __device__)"
            elif t.text in host_variables and following != "(":
                what = (f"the variable {t.text} (line {host_variables[t.text]}), which lives in host memory (it "
                        "has no __device__ or __constant__)")
                fix = (f"declare it __constant__ (read-only in kernels, set from the host) or __device__, or "
                       "pass it in as an argument")
            if what and (t.text, f.name) not in said:
                said.add((t.text, f.name))
                found.append((f"the {kind} {f.name} uses {what}", t.line, fix))
    # NVRTC, CuPy's compiler, refuses host code in the source whether device code uses it or not ("A function
    # without execution space annotations ... is considered a host function, and host functions are not allowed in
    # JIT mode"; "... host variables are not allowed"): what no device code used is refused too (nvcc would take it)
    used = {name for name, _ in said}
    jit = ("NVRTC, CuPy's compiler, refuses host code anywhere in the source, used or not (nvcc would compile it "
           "for the host)")
    unused = ([(n, line, f"the function {n}") for n, line in host_functions.items()]
              + [(n, line, f"the member function {n}") for n, line in host_members.items()]
              + [(n, line, f"a constructor of {n}") for n, (line, _) in host_constructors.items()]
              + [(n, line, f"the constexpr function {n}") for n, line in host_constexpr.items()])
    # (a prototype alone is not refused: NVRTC takes `int printf(const char*, ...);`, a function it declares itself)
    for name, line, what in unused:
        if name not in used:
            found.append((f"{what}, declared without __device__: {jit}", line, "declare it __device__ (or __host__ "
                          "__device__ to keep it for both sides), remove it, or pass the option -default-device, "
                          "which makes unannotated code device code as NVRTC does"))
    for name, line in host_variables.items():
        if name not in used and name not in const_arrays:
            found.append((f"the variable {name}, declared without __device__ or __constant__: {jit}", line,
                          "declare it __device__ or __constant__, make it const, remove it, or pass -default-device"))
    # A generic lambda (`[](auto p, auto q) { ... }`) in device code: NVRTC takes its templated operator() for a
    # host function ("A function without execution space annotations ... is considered a host function")
    for f in functions:
        if not f.body:
            continue
        for _, open_, close, _ in _lambdas(tokens, *f.body):
            if any(tokens[k].text == "auto" and tokens[k - 1].text in ("(", ",", "const")
                   for k in range(open_ + 1, close)):
                found.append(("a generic lambda (a parameter declared `auto`), which NVRTC, CuPy's compiler, takes for "
                              "a host function (\"A function without execution space annotations ... is considered a "
                              "host function, and host functions are not allowed in JIT mode\")", tokens[open_].line,
                              "give its parameters types (`[](float p, float q) { ... }`), or pass the option "
                              "-default-device"))
                break
    return sorted(found, key=lambda item: item[1])


def _calls_in_bodies(tokens: list[Token], functions: list, names: set):
    """Each `name (` in a function body with `name` one of `names` (a call, or a `while (`): its token
    index and the body's braces (token indices)."""
    for f in functions:
        if f.body:
            a, b = f.body
            yield from ((i, f.body) for i in range(a + 1, b - 1)
                        if tokens[i].text in names and tokens[i + 1].text == "(")


def _sizeof_pointers(tokens: list[Token], functions: list, known_types: set) -> list[tuple[int, str]]:
    """`sizeof(x)` (or `sizeof x`) of a pointer x, a parameter `float* x` (or `float x[]`) or a local `float* x`: the
    size of a pointer, 8 bytes on a GPU (and 32 here, where a pointer carries its bounds), not of the array it points
    to. The C habit `sizeof(x) / sizeof(x[0])` for an array's length, and `malloc(sizeof(a))`, `memset(p, 0,
    sizeof(p))` (clang's -Wsizeof-pointer-memaccess): on a GPU they overrun, here they would not. A pointer copied,
    `memcpy(&q, &p, sizeof(p))`, means the pointer's own size. (line, what and how to fix it)."""
    found = []
    for f in functions:
        if not f.body:
            continue
        a, b = f.body
        pointers = {raw.name for raw in f.raws if raw and raw.name and raw.stars and not raw.reference and not raw.rows}
        pointers |= {tokens[k + 1].text for k in range(a + 1, b - 2) if tokens[k].text == "*"
                     and tokens[k - 1].text in known_types and tokens[k + 1].kind == "ident"
                     and tokens[k + 2].text in ("=", ";", ",")}  # (`float* a = ...;`, `Node* n;`)
        for i in range(a + 1, b - 1):
            if tokens[i].text != "sizeof":
                continue
            named = i + 1 + (tokens[i + 1].text == "(")
            if named >= b or tokens[named].text not in pointers or (named > i + 1 and tokens[named + 1].text != ")") \
                    or (named == i + 1 and tokens[named + 1].text in ("[", ".", "->", "(")):
                continue
            name = tokens[named].text
            if tokens[named + 1 + (named > i + 1)].text == "/":
                found.append((tokens[i].line,
                              f"sizeof({name}) is the size of a pointer (8 bytes on a GPU; here, where a pointer "
                              f"carries its bounds, 32), not of the array {name} points to: a kernel cannot learn an "
                              f"array's length from its pointer, so `sizeof({name}) / sizeof({name}[0])` is no element "
                              "count. Pass the length as a parameter (`int n`)."))
                continue
            first = next(k for k in range(i, a - 1, -1) if tokens[k].text in (";", "{", "}")) + 1
            last = next((k for k in range(i, b) if tokens[k].text == ";"), b)
            if any(tokens[k].text == "&" and tokens[k + 1].text == name and tokens[k + 2].text != "["
                   for k in range(first, last - 1)):
                continue  # `memcpy(&q, &p, sizeof(p))`: a pointer copied, whose own size is meant
            found.append((tokens[i].line,
                          f"sizeof({name}) is the size of the pointer {name} (8 bytes on a GPU; 32 here, where a "
                          "pointer carries its array's bounds), not of the array it points to: pass the number of "
                          f"elements as a parameter and multiply by sizeof({name}[0])."))
    return found


def _cas_misuse(tokens: list[Token], functions: list, probes: dict) -> list[tuple[int, str]]:
    """atomicCAS used in a way that only contention breaks, which threads run one after another here
    never show (on a GPU, updates are lost or a loop never ends): (line, what and how to fix it). Each
    atomicCAS in a loop that moves its address on (`atomicCAS(&table[h], ...)` with `h = (h + 1) % cap;`: a
    hash table's probe, no lock) goes into `probes`, by line, with the variable that moves.
    - its result ignored, with a compare value that is no constant: when another thread changed the
      element first, the swap does not happen, and nothing notices;
    - a loop around it whose compare value is never read again inside the loop: after another
      thread's change every try fails, forever (the value to compare with must be refreshed from
      what atomicCAS returns: `assumed = old;`)."""
    found = []
    for i, (a, b) in _calls_in_bodies(tokens, functions, {"atomicCAS"}):
        args = _call_arguments(tokens, i + 1)
        if args is None or len(args[0]) != 3:
            continue
        (c0, c1), close = args[0][1], args[1]
        compare = tokens[c0:c1]
        constant = all(t.kind == "number" or t.text in ("-", "(", ")") for t in compare)
        loop = _enclosing_loop(tokens, i, a, b)  # (first, last) tokens of the loop statement around the call
        (p0, p1) = args[0][0]  # (the address: `&table[h]`, whose & is no assignment of table)
        assigned = lambda word: loop is not None and any(
            tokens[q].text == word and q + 1 <= loop[1] and tokens[q + 1].text in _ASSIGNMENTS | {"++", "--"}
            or tokens[q].text == word and tokens[q - 1].text in ("++", "--", "&") and not p0 <= q < p1
            for q in range(loop[0], loop[1] + 1))
        compared = compare[0].text if len(compare) == 1 else None
        moved = next((t.text for t in tokens[p0:p1] if t.kind == "ident" and t.text != compared and assigned(t.text)),
                     None)
        if moved:
            probes[tokens[i].line] = moved
        if _result_unused(tokens, i, close, b) and not constant:
            found.append((tokens[i].line,
                          "the value atomicCAS returns is not used: when another thread has changed the element "
                          "since it was read, the swap does not happen, and nothing notices (on a GPU, that "
                          "update is lost). Keep the result and try again until it is the value you compared "
                          "with: `old = atomicCAS(p, assumed, f(assumed));` in a loop `while (old != assumed)`, "
                          "with `assumed = old;` at the top of each pass."))
            continue
        if constant or len(compare) != 1 or compare[0].kind != "ident":
            continue
        name = compare[0].text
        if loop is None or not _read_from_memory(tokens, name, a, loop[0]):
            continue  # (a constant compare value, `EMPTY` or `const int empty = -1`, is no stale read)
        if not assigned(name) and not moved:  # (a loop that moves the address on, a hash table's probe, tries anew)
            found.append((tokens[i].line,
                          f"the loop around atomicCAS never refreshes `{name}`, the value it compares with: once "
                          f"another thread has changed the element, every try fails, and the loop never ends "
                          f"(on a GPU, under contention). Give `{name}` what atomicCAS returned before the next "
                          f"try, and compute the new value from it again: `int seen = atomicCAS(p, {name}, "
                          f"f({name})); if (seen == {name}) break; {name} = seen;`."))
    return found


_IDLE_CALLS = {"__nanosleep", "__threadfence", "__threadfence_block", "__threadfence_system"}


def _plain_waits(tokens: list[Token], functions: list, volatile_names: set) -> list[tuple[int, str]]:
    """Loops that wait for another thread with a plain read: `while (flag[0] == 0) { }` (or `;`, a
    `do { } while`, a body of __nanosleep or fences only). Nothing in the loop changes what its condition
    reads, so a compiler may read it once, and the loop never ends on a GPU (nvcc hoists the load), even
    when another thread sets it; here threads and blocks take turns, so it may never even wait.
    (line, what and how to fix it)."""
    found = []
    for j, (a, b) in _calls_in_bodies(tokens, functions, {"while"}):
        close = _matching(tokens, j + 1)
        condition = tokens[j + 2:close]
        if tokens[j - 1].text == "}":  # `do { ... } while (c);`: the body before it
            start = _opening(tokens, j - 1)
            if start < 1 or tokens[start - 1].text != "do":
                continue
            body = tokens[start + 1:j - 1]
        elif close + 1 < b and tokens[close + 1].text == ";":
            body = []
        elif close + 1 < b and tokens[close + 1].text == "{":
            body = tokens[close + 2:_matching(tokens, close + 1)]
        else:
            continue
        idle = all(t.text in _IDLE_CALLS or t.text in ("(", ")", ";") or t.kind == "number" for t in body)
        reads = any(t.text in ("[", "->") or t.text == "*" and _unary_star(tokens, q)
                    for q, t in enumerate(condition, j + 2))
        changes = any(t.text in _ASSIGNMENTS | {"++", "--", "volatile"} or t.text in volatile_names
                      or t.kind == "ident" and q + 1 < close and tokens[q + 1].text in ("(", "<", ".")
                      for q, t in enumerate(condition, j + 2))
        if idle and reads and not changes:
            what = " ".join(t.text for t in condition).replace(" [ ", "[").replace(" ]", "]").replace("* ", "*")
            found.append((tokens[j].line,
                          f"the loop waits for `{what}` to change, with a plain read: nothing in the loop changes "
                          "it, so the compiler may read it once, and then the loop never ends on a GPU (nvcc does "
                          "so), even after another thread sets it. Read it through a volatile pointer "
                          "(`*(volatile int*)&flag` for a flag `flag`) or with an atomic (`atomicAdd(&flag, 0)`, "
                          "cuda::atomic_ref's load()), and let the thread that sets it do so with an atomic "
                          "after __threadfence()."))
    return found


def _unused_tickets(tokens: list[Token], functions: list) -> list[tuple[int, str]]:
    """A last-block ticket taken but not used (`atomicInc(count, gridDim.x);` as a statement) and then the
    last block picked by its index (`if (blockIdx.x == gridDim.x - 1)`): blocks run in any order, so that block
    may run before the others are done; here they run in launch order, which never shows it. (line, what)."""
    found = []
    for i, (a, b) in _calls_in_bodies(tokens, functions, {"atomicInc", "atomicAdd"}):
        close = _matching(tokens, i + 1)
        if not _result_unused(tokens, i, close, b):
            continue
        for k in range(close, b - 2):
            if tokens[k].text != "if" or tokens[k + 1].text != "(":
                continue
            condition = "".join(t.text for t in tokens[k + 2:_matching(tokens, k + 1)])
            if re.search(r"(?<![\w.])blockIdx\.x==gridDim\.x-1(?![\w.(])|(?<![\w.])gridDim\.x-1==blockIdx\.x(?![\w.(])",
                         condition):
                found.append((tokens[i].line,
                              f"{tokens[i].text} takes a ticket whose value is not used, and line {tokens[k].line} "
                              "picks the last block by its index: blocks run in any order, so block gridDim.x - 1 "
                              "may run before the others have written their parts (here blocks run in launch "
                              "order, which never shows it). Let the ticket pick the block: `unsigned ticket = "
                              "atomicInc(count, gridDim.x); if (ticket == gridDim.x - 1) { ... }` (after "
                              "__threadfence(), as before)."))
                break
    return found


def _result_unused(tokens: list[Token], i: int, close: int, end: int) -> bool:
    """Whether the call whose name is tokens[i] and whose `)` is tokens[close] is a statement of its
    own (`atomicCAS(p, a, b);` after a `;`, a brace, an `if (...)` or an `else`): its value unused."""
    start = tokens[i - 1].text in (";", "{", "}", "else") or _after_header(tokens, i)
    return start and close + 1 < end and tokens[close + 1].text == ";"


def _exchange_stores(tokens: list[Token], functions: list, replace) -> None:
    """`atomicExch(&s[t], v);` as a statement of its own, the old value unused: runtime.h's
    __cc_exchange_next() before it makes initcheck take it for a write (setting a flag or a slot that no thread
    wrote before is no read of it; `old = atomicExch(...)` of such an element still is). The call itself
    stays (`__cc_exchange_next(), atomicExch(...);`): the source's own atomicExch for double is called too."""
    for f in functions:
        if not f.body:
            continue
        a, b = f.body
        for i in range(a + 1, b - 1):
            if tokens[i].text == "atomicExch" and tokens[i + 1].text == "(" and tokens[i - 1].text not in (".", "->", "::"):
                args = _call_arguments(tokens, i + 1)
                if args is not None and _result_unused(tokens, i, args[1], b):
                    replace(tokens[i].start, tokens[i].end, "__cc_exchange_next(), atomicExch")


def _read_from_memory(tokens: list[Token], name: str, a: int, before: int, depth: int = 0) -> bool:
    """Whether the variable `name` gets a value read from memory (`int assumed = *p;`, `old = a[i]`,
    or a copy of such a variable: `assumed = old`) in tokens[a:before], and is no const."""
    for q in range(a + 1, before):
        if tokens[q].text != name or tokens[q + 1].text != "=":
            continue
        start = q
        while start > a and tokens[start - 1].text not in (";", "{", "}"):
            start -= 1
        if any(tokens[w].text in ("const", "constexpr") for w in range(start, q)):
            return False
        end = q + 2
        while end < before and tokens[end].text not in (";", ","):
            end = _matching(tokens, end) + 1 if tokens[end].text in ("(", "[") else end + 1
        value = tokens[q + 2:end]
        if any(t.text in ("*", "[", "->") for t in value):
            return True
        if len(value) == 1 and value[0].kind == "ident" and value[0].text != name and depth < 3 \
                and _read_from_memory(tokens, value[0].text, a, q, depth + 1):
            return True
    return False


def _enclosing_loop(tokens: list[Token], i: int, a: int, b: int) -> tuple[int, int] | None:
    """The tokens (first, last) of the innermost `for`/`while`/`do` statement around tokens[i] in the
    body tokens[a:b], its condition and step included; None outside any loop."""
    best, tails = None, set()  # tails: the `while` of each do-while
    for k in range(a + 1, i):
        if tokens[k].text not in ("for", "while", "do") or k in tails:
            continue
        if tokens[k].text == "do":
            body_end = _statement_end(tokens, k + 1, b)
            end = body_end
            if end + 1 < b and tokens[end + 1].text == "while" and tokens[end + 2].text == "(":
                tails.add(end + 1)
                end = _matching(tokens, end + 2)
        elif tokens[k + 1].text == "(":
            close = _matching(tokens, k + 1)
            if close + 1 < b and tokens[close + 1].text == ";" and tokens[k].text == "while":
                end = close + 1  # `while (c);` (or the tail of a do-while: its `do` is found on its own)
            else:
                end = _statement_end(tokens, close + 1, b)
        else:
            continue
        if k < i <= end:
            best = (k, end)  # (the later one is the inner)
    return best


#: CUDA's headers the CPU backend builds in, which nvcc and NVRTC need included: (what, the headers that declare
#: it, a test of a token and the tokens around it). A kernel that uses one without its header runs here and then
#: does not compile on a GPU ("identifier "__half" is undefined"), so it is refused here too.
_HALF_FUNCTIONS = re.compile(r"__(?:float2half|half2float|floats2half2|float22half2|half22float2|low2float|high2float|"
                             r"half2half2|halves2half2|int2half|half2int|uint2half|half2uint|hsub|hmul|hdiv|hfma|"
                             r"hneg|habs|hmax|hmin|heq|hne|hlt|hle|hgt|hge|hadd2|hmul2|hfma2|h2div)(?:_\w+)?")
_BF16_FUNCTIONS = re.compile(r"__(?:float2bfloat16|bfloat162float|floats2bfloat162|float22bfloat162|bfloat1622float2|"
                             r"low2bfloat16|high2bfloat16)(?:_\w+)?")


def _is_type_use(tokens: list[Token], i: int) -> bool:
    """Whether the name at i stands as a type in a declaration (`half x`, `const half* p`, `half& r` after `(`, `,`,
    `;`, a brace or a qualifier) or a template argument (`<half>`): not a variable of that name (`int half = n / 2;`,
    `t < half`, `half * x`)."""
    at = lambda k: tokens[k].text if 0 <= k < len(tokens) else ""
    starts = ("(", ",", ";", "{", "}", "const", "volatile", "static", "__shared__", "extern", "")
    if at(i - 1) in starts and i + 1 < len(tokens) and tokens[i + 1].kind == "ident" \
            and at(i + 1) not in ("return", "break", "continue", "else"):
        return True
    if at(i - 1) in starts and at(i + 1) in ("*", "&") and i + 2 < len(tokens) and tokens[i + 2].kind == "ident":
        return at(i - 1) not in ("(", ",") or at(i + 3) in (",", ")", "=", ";", "[")  # (a parameter, not `f(half * x)`)
    return at(i - 1) == "<" and at(i + 1) in (">", ",")


#: <type_traits>'s names (std::is_same, is_same_v, enable_if_t, ...)
_TYPE_TRAITS = re.compile(r"(?:is_\w+|enable_if|conditional|remove_\w+|add_\w+|decay|integral_constant|true_type|"
                          r"false_type|common_type|underlying_type|make_signed|make_unsigned|void_t|conjunction|"
                          r"disjunction|negation)(?:_t|_v)?")
_HEADER_FAMILIES = [
    ("the half-precision type and its functions (`__half`, `half2`, `__float2half`, ...)", ("cuda_fp16.h", "cuda_bf16.h"),
     lambda t, i: t[i].text in ("__half", "__half2") or t[i].text in ("half", "half2") and _is_type_use(t, i)
     or bool(_HALF_FUNCTIONS.fullmatch(t[i].text)) and i + 1 < len(t) and t[i + 1].text == "("),
    ("bfloat16 (`__nv_bfloat16`, `__float2bfloat16`, ...)", ("cuda_bf16.h",),
     lambda t, i: t[i].text in ("__nv_bfloat16", "__nv_bfloat162", "nv_bfloat16", "nv_bfloat162")
     or bool(_BF16_FUNCTIONS.fullmatch(t[i].text)) and i + 1 < len(t) and t[i + 1].text == "("),
    ("cuRAND's device API (`curandState`, `curand_init`, ...)", ("curand_kernel.h",),
     lambda t, i: t[i].text.startswith("curand") and (t[i].text.startswith("curandState") or i + 1 < len(t)
                                                     and t[i + 1].text == "(" and t[i].text.startswith("curand_"))),
    ("cooperative groups (`cooperative_groups::`)", ("cooperative_groups.h", "cooperative_groups/"),
     lambda t, i: t[i].text == "cooperative_groups"),
    ("CUB (`cub::`)", ("cub/",), lambda t, i: t[i].text == "cub" and i + 1 < len(t) and t[i + 1].text == "::"),
    ("libcu++'s atomics (`cuda::atomic_ref`, `cuda::atomic`, `cuda::atomic_thread_fence`)", ("cuda/atomic",),
     lambda t, i: t[i].text == "cuda" and i + 2 < len(t) and t[i + 1].text == "::"
     and t[i + 2].text in ("atomic_ref", "atomic", "atomic_thread_fence")),
    ("libcu++'s function objects (`cuda::maximum`, `cuda::minimum`)", ("cuda/functional",),
     lambda t, i: t[i].text == "cuda" and i + 2 < len(t) and t[i + 1].text == "::"
     and t[i + 2].text in ("maximum", "minimum")),
    ("the type traits (`std::is_same`, `std::enable_if`, ...)", ("type_traits", "cuda/std/type_traits"),
     lambda t, i: t[i].text == "std" and (i == 0 or t[i - 1].text != "::") and i + 2 < len(t) and t[i + 1].text == "::"
     and bool(_TYPE_TRAITS.fullmatch(t[i + 2].text))),
    ("libcu++'s `cuda::thread_scope`", ("cuda/",),  # (every libcu++ header declares it)
     lambda t, i: t[i].text == "cuda" and i + 2 < len(t) and t[i + 1].text == "::" and t[i + 2].text.startswith("thread_scope")),
]
#: cooperative groups' collectives that need a header of their own besides <cooperative_groups.h>
_CG_PARTS = {"reduce": "cooperative_groups/reduce.h", "plus": "cooperative_groups/reduce.h",
             "less": "cooperative_groups/reduce.h", "greater": "cooperative_groups/reduce.h",
             "bit_and": "cooperative_groups/reduce.h", "bit_or": "cooperative_groups/reduce.h",
             "bit_xor": "cooperative_groups/reduce.h", "reduce_store_async": "cooperative_groups/reduce.h",
             "inclusive_scan": "cooperative_groups/scan.h", "exclusive_scan": "cooperative_groups/scan.h",
             "memcpy_async": "cooperative_groups/memcpy_async.h", "wait": "cooperative_groups/memcpy_async.h",
             "wait_prior": "cooperative_groups/memcpy_async.h"}


def _whole_cub(directives: list[Token]) -> list[tuple[int, str]]:
    """`#include <cub/cub.cuh>`: it compiles here and with nvcc, but NVRTC, CuPy's compiler, refuses it (it brings
    in Thrust's host-side launch code: "A function explicitly marked as a __host__ function is not allowed in JIT
    mode"), so a warning says to include each collective's own header. (line, message)."""
    return [(t.line, "<cub/cub.cuh> compiles here, but NVRTC (CuPy's compiler on a GPU) cannot compile it whole: it "
                     "includes Thrust's host-side code. Include the headers of the collectives you use instead, e.g. "
                     "<cub/block/block_reduce.cuh>, <cub/block/block_scan.cuh>, <cub/warp/warp_reduce.cuh>.")
            for t in directives if re.match(r"#\s*include\s*[<\"]cub/cub\.cuh[>\"]", t.text)][:1]


def _missing_headers(tokens: list[Token], directives: list[Token]) -> list[tuple[str, int, str]]:
    """Uses of what CUDA declares in a header the source does not include (`__half` without <cuda_fp16.h>,
    `cg::reduce` without <cooperative_groups/reduce.h>): the CPU backend builds them in, nvcc and NVRTC do not.
    (what, line, fix) each, the first use of each family."""
    included = [m.group(1).strip() for t in directives
                if (m := re.match(r"#\s*include\s*[<\"]([^>\"]+)[>\"]", t.text))]
    has = lambda headers: any(h == want or want.endswith("/") and h.startswith(want) or h.endswith("/" + want)
                              for h in included for want in headers)
    # names the source declares itself (`struct half2 { ... };`, `typedef float half;`): its own, not CUDA's
    declared = {tokens[i + 1].text for i, t in enumerate(tokens[:-1]) if t.text in ("struct", "class", "union", "enum",
                                                                                   "using", "namespace")}
    declared |= {tokens[k - 1].text for i, t in enumerate(tokens) if t.text == "typedef"
                 for k in [next((k for k in range(i + 1, min(len(tokens), i + 64)) if tokens[k].text == ";"), 0)] if k}
    found = []
    for what, headers, uses in _HEADER_FAMILIES:
        if has(headers):
            continue
        first = next((t.line for i, t in enumerate(tokens) if t.kind == "ident" and t.text not in declared
                      and uses(tokens, i)), None)
        if first is not None:
            header = {"cooperative_groups/": "cooperative_groups.h", "cub/": "cub/block/block_reduce.cuh",
                      "cuda/": "cuda/atomic"}.get(headers[0], headers[0])
            fix = (f"add `#include <{header}>` at the top" if headers[0] != "cub/" else
                   "include the CUB header of each collective you use, e.g. `#include <cub/block/block_reduce.cuh>` "
                   "or `<cub/warp/warp_reduce.cuh>`")
            found.append((f"uses {what}, declared in <{header}>, which this source does not include (the CPU "
                          "backend has it built in; nvcc and NVRTC say the name is undefined)", first, fix))
    # cooperative groups' parts with headers of their own, through the namespace or an alias of it
    aliases = {"cooperative_groups"} | {tokens[i + 1].text for i, t in enumerate(tokens[:-3]) if t.text == "namespace"
                                         and tokens[i + 2].text == "=" and tokens[i + 3].text == "cooperative_groups"}
    wanted = {}
    for i, t in enumerate(tokens[:-2]):
        if t.text in aliases and tokens[i + 1].text == "::" and tokens[i + 2].text in _CG_PARTS:
            header = _CG_PARTS[tokens[i + 2].text]
            if not has((header,)) and header not in wanted:
                wanted[header] = (f"{t.text}::{tokens[i + 2].text}", tokens[i + 2].line)
    for header, (name, line) in wanted.items():
        found.append((f"uses `{name}`, declared in <{header}>, which this source does not include (<cooperative_groups.h> "
                      "alone does not declare it: nvcc and NVRTC say the namespace has no such member)", line,
                      f"add `#include <{header}>`"))
    return found


def _nvcc_refusals(tokens: list[Token], functions: list, known_types: set,
                   macros: set = frozenset()) -> list[tuple[str, int, str]]:
    """Declarations g++ compiles but nvcc refuses: a `__shared__` variable with an initializer
    (`__shared__ int count = 0;`: shared memory has no value when a block starts), and a file-scope
    `__device__`/`__constant__` variable initialized by a call (`= sqrtf(2.0f)`: dynamic
    initialization, which would run on the host); the warp functions without a mask (`__shfl_down`),
    unless the source defines them (`macros`: the names it #defines). (what, line, fix) each."""
    constexpr_functions = set()
    for i, t in enumerate(tokens):
        if t.text in ("constexpr", "consteval"):
            name_at = _declarator_name(tokens, i, min(len(tokens), i + 64))
            if name_at is not None:
                constexpr_functions.add(tokens[name_at].text)
    bodies = [f.body for f in functions if f.body]
    found = []
    for i, t in enumerate(tokens):
        if t.text == "extern" and i + 1 < len(tokens) and tokens[i + 1].text in ("__shared__", "__align__", "volatile"):
            # `extern __shared__ float s;` (or `float* s`): only an array of unknown size names the launch's
            # dynamic shared memory; nvcc refuses other extern __shared__ variables
            end = i + 1
            while end < len(tokens) and tokens[end].text not in (";", "["):
                end += 1
            if end < len(tokens) and tokens[end].text == ";" and any(
                    tokens[q].text == "__shared__" for q in range(i + 1, end)) and tokens[end - 1].kind == "ident":
                name, kind = tokens[end - 1].text, " ".join(
                    x.text for x in tokens[i + 1:end - 1] if x.text not in ("__shared__", "volatile", "*"))
                found.append((f"extern __shared__ {name} is not an array of unknown size, which nvcc refuses (extern "
                              "__shared__ declares the launch's dynamic shared memory, sized by shared_mem=)", t.line,
                              f"declare `extern __shared__ {kind} {name}[];` and use {name}[0], or for one shared "
                              f"variable of a fixed size `__shared__ {kind} {name};`"))
            continue
        if t.text not in ("__shared__", "__device__", "__constant__", "__managed__") or (
                i > 0 and tokens[i - 1].text == "extern"):
            continue
        end, depth, equals = i + 1, 0, None
        while end < len(tokens) and not (depth == 0 and tokens[end].text in (";", ")")):
            if tokens[end].text in ("(", "[", "{"):
                if depth == 0 and tokens[end].text == "(" and equals is None:
                    break  # a function: `__device__ float f(...)`
                if depth == 0 and tokens[end].text == "{" and equals is None and tokens[end - 1].kind == "ident" \
                        and tokens[end - 1].text not in ("struct", "class", "union"):
                    equals = end  # `__shared__ int count{0};`
                depth += 1
            elif tokens[end].text in (")", "]", "}"):
                depth -= 1
            elif depth == 0 and tokens[end].text == "=" and equals is None:
                equals = end
            end += 1
        if equals is None or end >= len(tokens) or tokens[end].text != ";":
            continue
        name = next((tokens[q].text for q in range(equals - 1, i, -1) if tokens[q].kind == "ident"
                     and tokens[q].text not in _TYPE_WORDS), "the variable")
        if t.text == "__shared__":
            array = any(tokens[q].text == "[" for q in range(i, equals))
            how = (f"`for (int j = threadIdx.x; j < SIZE; j += blockDim.x) {name}[j] = ...;`" if array
                   else f"`if (threadIdx.x == 0) {name} = ...;`")
            found.append((f"the __shared__ variable {name} has an initializer, which nvcc refuses (shared "
                          "memory has no value when a block starts, and no initializer gives it one)", t.line,
                          f"give it its value in the kernel, {how}, then __syncthreads() before any thread "
                          "reads it"))
            continue
        if any(a < i < b for a, b in bodies) or tokens[equals + 1].text == "[":
            continue  # (a function's own static or local variable, or a lambda: not followed)
        for q in range(equals + 1, end - 1):
            callee = tokens[q]
            if callee.kind == "ident" and tokens[q + 1].text == "(" and callee.text not in known_types \
                    and callee.text not in constexpr_functions and callee.text not in _ATTRIBUTE_CALLS \
                    and not callee.text.endswith("_cast") and tokens[q - 1].text not in (".", "->"):
                found.append((f"the {t.text} variable {name} is initialized by calling {callee.text}(), which "
                              "nvcc refuses (dynamic initialization: the call would have to run before any "
                              "kernel, on the host)", t.line,
                              f"initialize it with a constant (a number, or braces of numbers), set it from the "
                              f"host (module.get_global('{name}')[...] = value, or cudaMemcpyToSymbol), or "
                              "compute the value in the kernel"))
                break
    # The warp functions without a mask, which CUDA 9 replaced: nvcc and NVRTC refuse them for compute
    # capability 7.0 and later (every GPU since Volta: Colab's T4, an A100, an H100), where a warp's
    # lanes need not run together and the mask says which take part.
    declared = {f.name for f in functions} | macros  # (a source's own shim: `#define __shfl_down(v, d) ...`)
    for i, t in enumerate(tokens[:-1]):
        if t.text in _LEGACY_WARP and tokens[i + 1].text == "(" and t.text not in declared \
                and (i == 0 or tokens[i - 1].text not in (".", "->", "::")):
            vote = t.text in ("__ballot", "__any", "__all")
            found.append((f"{t.text}() has no mask: CUDA 9 replaced it with {t.text}_sync(), and " + (
                              "nvcc and NVRTC compile it only with a deprecation warning: on GPUs of compute "
                              "capability 7.0 and later (every GPU since Volta, Colab's T4 too) the lanes need not "
                              "run together, so which of them vote is not defined (the CPU backend refuses it)"
                              if vote else "nvcc refuses it for GPUs of compute capability 7.0 and later (every GPU "
                              "since Volta, Colab's T4 too), whose lanes need not run together"), t.line,
                          f"write {t.text}_sync(0xffffffff, ...) with the same arguments after the mask, which names the "
                          "lanes that take part (all 32 here; __activemask() for the lanes that got there)"))
    # __grid_constant__ (CUDA 11.7): a kernel parameter that the GPU reads where the launch put it, so no thread may
    # change it; NVRTC refuses it on a parameter that is not const, and on a parameter of any other function.
    for i, t in enumerate(tokens):
        if t.text != "__grid_constant__":
            continue
        opening = next((q for q in _outer_tokens(tokens, i, -1) if tokens[q].text in ("(", "[", "{", ";")), None)
        open_at = opening if opening is not None and tokens[opening].text == "(" else None  # (its parameter list's)
        start = open_at
        if start is not None:
            while start > 0 and tokens[start - 1].text not in (";", "{", "}"):
                start -= 1
        if start is None or not any(x.text == "__global__" for x in tokens[start:open_at]):
            found.append(("__grid_constant__ is only for a parameter of a __global__ function (NVRTC: \"__grid_constant__ "
                          "annotation is only allowed on a parameter of a __global__ function\")", t.line,
                          "delete it here: a __device__ function's parameter is its own copy already"))
            continue
        first, last = i, i
        while first > open_at + 1 and tokens[first - 1].text != ",":
            first -= 1
        while last + 1 < len(tokens) and tokens[last + 1].text not in (",", ")"):
            last += 1
        words = [x.text for x in tokens[first:last + 1]]
        stars = [k for k, w in enumerate(words) if w in ("*", "&")]
        if not any(w == "const" and (not stars or k > stars[-1]) for k, w in enumerate(words)):
            shown = " ".join(words)
            found.append((f"the __grid_constant__ parameter `{shown}` is not const (NVRTC: \"a parameter annotated with "
                          "__grid_constant__ must have const-qualified type\"): no thread may change it", t.line,
                          "write `const __grid_constant__ T name` (for a pointer, `T* const __grid_constant__ name`), "
                          "or delete __grid_constant__ to give each thread its own copy"))
    # A lambda annotated __device__ or __host__ (`[] __device__ (float v) { ... }`): nvcc needs --extended-lambda for
    # it, an option NVRTC does not have, so CuPy's compiler refuses it always
    for f in functions:
        if not f.body:
            continue
        for k in range(f.body[0] + 1, f.body[1] - 1):  # (`[] __device__ (...)`, `[=] __host__ __device__ {`)
            if tokens[k].text in ("__device__", "__host__") and tokens[k - 1].text == "]" \
                    and tokens[k + 1].text in ("(", "{", "__device__", "__host__"):
                found.append(("a lambda annotated __device__ (or __host__), which NVRTC, CuPy's compiler, refuses "
                              "(\"__host__ or __device__ annotation on lambda requires --extended-lambda nvcc flag\", "
                              "an option NVRTC does not have)", tokens[k].line,
                              "delete the annotation: a lambda written in a kernel or a __device__ function is device "
                              "code already"))
                break
    # A warp-level call with an argument too many (`__activemask(0xffffffff)`, `__syncwarp(mask, 32)`): nvcc
    # refuses it, where g++ here would take the extra number as the line runtime.h's functions report.
    for i, t in enumerate(tokens[:-1]):
        most = _WARP_ARGUMENTS.get(t.text)
        if most is None or tokens[i + 1].text != "(" or t.text in declared or (
                i > 0 and tokens[i - 1].text in (".", "->", "::")):
            continue
        call = _call_arguments(tokens, i + 1)
        count = len([part for part in call[0] if part[0] < part[1]]) if call else 0  # (`f()`: one empty part)
        if count > most:
            found.append((f"{t.text}() is called with {count} argument{'s' * (count > 1)}, but it takes "
                          + (f"at most {most}" if t.text in _WARP_OPTIONAL else f"{most}" if most else "none")
                          + " (nvcc: too many arguments in function call)", t.line,
                          f"write {_WARP_SIGNATURES[t.text]}"))
    return found


_LEGACY_WARP = {"__shfl", "__shfl_up", "__shfl_down", "__shfl_xor", "__ballot", "__any", "__all"}
#: The warp-level functions and their parameters (runtime.h gives each a hidden last one: the caller's line).
_WARP_SIGNATURES = {
    "__syncwarp": "__syncwarp() or __syncwarp(mask)", "__activemask": "__activemask(), with no argument",
    **{f"__{vote}_sync": f"__{vote}_sync(mask, predicate)" for vote in ("ballot", "any", "all", "uni")},
    **{f"__shfl{kind}_sync": f"__shfl{kind}_sync(mask, value, {what}) or __shfl{kind}_sync(mask, value, {what}, width)"
       for kind, what in (("", "lane"), ("_up", "delta"), ("_down", "delta"), ("_xor", "lane_mask"))},
    **{f"__reduce_{op}_sync": f"__reduce_{op}_sync(mask, value)" for op in ("add", "min", "max", "and", "or", "xor")},
    "__match_any_sync": "__match_any_sync(mask, value)", "__match_all_sync": "__match_all_sync(mask, value, &pred)",
}
#: How many arguments each takes at most.
_WARP_ARGUMENTS = {"__syncwarp": 1, "__activemask": 0, "__match_all_sync": 3,
                   **{name: 4 if name.startswith("__shfl") else 2 for name in _WARP_SIGNATURES
                      if name not in ("__syncwarp", "__activemask", "__match_all_sync")}}
_WARP_OPTIONAL = {name for name, text in _WARP_SIGNATURES.items() if " or " in text}


def _member_declarators(tokens: list[Token], open_: int, close: int):
    """Each data member a struct body declares (`float sum; int n, m[4]; unsigned flag : 1;`), not its
    methods, types, static members or typedefs: its name, the tokens of its declaration up to the name's
    end, and what ends it: `[` (an array), `=`, `:` (a bit-field), or "" (`,` or `;`)."""
    statement, k = [], open_ + 1
    while k < close:
        text = tokens[k].text
        if text in ("{", "(", "["):  # a method's body or parameters, a nested type, an extent
            statement.append(k)
            if text == "{":  # the end of a method (or a nested type, whose members are its own)
                k, statement = _matching(tokens, k) + 1, []
                if k < close and tokens[k].text == ";":
                    k += 1
                continue
            k = _matching(tokens, k) + 1
            continue
        if text == ":" and statement and tokens[statement[-1]].text in ("public", "private", "protected"):
            k, statement = k + 1, []
            continue
        if text != ";":
            statement.append(k)
            k += 1
            continue
        words = [tokens[q].text for q in statement]
        if statement and "(" not in words and not set(words) & {"static", "typedef", "using", "friend", "enum",
                                                                 "struct", "class", "union", "template"}:
            part = []
            for q in statement + [k]:
                if tokens[q].text in (",", ";"):
                    # the name: the identifier before `[`, `=`, `:` (a bit-field) or the end
                    cut = next((n for n, r in enumerate(part) if tokens[r].text in ("[", "=", ":")), len(part))
                    declarator = [tokens[r] for r in part[:cut]]
                    named = [t for t in declarator if t.kind == "ident"]
                    if named:
                        yield named[-1].text, declarator, tokens[part[cut]].text if cut < len(part) else ""
                    part = []
                else:
                    part.append(q)
        statement = []
        k += 1


def _data_members(tokens: list[Token], open_: int, close: int) -> set[str]:
    """The names of a struct body's data members that are neither pointers, references nor arrays:
    `*hits = 1` is an access through a pointer member, noted as such, and `v[i]` of an array member
    is an access as in any function (`v` alone only its address)."""
    return {name for name, declarator, end in _member_declarators(tokens, open_, close)
            if end != "[" and not any(t.text in ("*", "&", "&&") for t in declarator)}


def _method_members(tokens: list[Token], f, type_bodies: dict) -> set[str]:
    """For a member function defined in its struct's body: the struct's data members that its body
    names without `this->` (`sum += v;`), less the names a parameter or a local declaration hides."""
    if not f.body:
        return set()
    inside = [(o, c) for o, c in type_bodies.items() if o < f.body[0] and f.body[1] < c]
    if not inside:
        return set()
    open_, close = max(inside)  # the innermost struct
    members = _data_members(tokens, open_, close)
    hidden = {r.name for r in f.raws if r.name}
    a, b = f.body
    for i in range(a + 1, b):
        tok, prev = tokens[i], tokens[i - 1]
        if tok.text in members and (prev.kind == "ident" and prev.text not in _NOT_DECLARATION
                                    or prev.text in ("*", "&", "&&") and tokens[i - 2].kind == "ident"
                                    and tokens[i - 3].text in (";", "{", "}", "(", ",", "const")):
            hidden.add(tok.text)  # `float sum = 0;`, `float* sum`: a local of that name
    return members - hidden


def _object_start(tokens: list[Token], dot: int, a: int) -> int | None:
    """The first token of the object expression before the `.` or `->` at tokens[dot] (`w`, `ps[i]`,
    `get(i)`, `s.inner`, `(*p)`, `this`), or None where it is not one of these."""
    k = dot - 1
    while k > a:
        if tokens[k].text in ("]", ")"):
            k = _opening(tokens, k)
            if k < 0:
                return None
            if tokens[k].text == "(" and tokens[k - 1].kind != "ident":  # `(*p).v`: the parenthesis is the start
                return k
            k -= 1
            continue
        if tokens[k].kind == "ident":
            if tokens[k - 1].text in (".", "->", "::"):
                k -= 2
                continue
            return k
        return None
    return None


def _integer_constants(tokens: list[Token], type_bodies: dict, constants: dict) -> dict[str, str]:
    """`constants` (the macros and -D options) and the source's `const int N = 20;` / `constexpr` integer
    names outside a struct (a struct's template parameter or its `static const int N` stays unknown):
    what an array's extent may name."""
    inside = set()
    for open_, close in type_bodies.items():
        inside.update(range(open_, close + 1))
    text = " ".join(tok.text for k, tok in enumerate(tokens) if k not in inside)
    names = dict(constants)
    for match in re.finditer(r"\b(?:constexpr|const)\s+(?:static\s+)?(?:int|unsigned|long|size_t|auto)\s+(\w+)\s*=\s*"
                             r"([^;]+);", text):
        names.setdefault(match.group(1), match.group(2))
    return names


def _member_arrays(tokens: list[Token], type_bodies: dict,
                   constants: dict) -> tuple[dict[str, list[int]], set[str]]:
    """Array members of the source's structs and unions (`float v[TILE];` → {"v": [16]}), by name,
    with their extents' values (`constants`: _integer_constants). A name that is also a member
    of another kind, or an array of other extents, in some struct is left out: `x.v[i]` must mean one
    thing. And the names of every array member (templates' too, whatever their extents)."""
    found, other, arrays = {}, set(), set()
    for open_, close in type_bodies.items():
        start = open_ - 1
        while start > 0 and tokens[start].text not in (";", "{", "}"):
            start -= 1
        template = any(tokens[q].text == "template" for q in range(start, open_))  # its extents may be parameters
        k = open_ + 1
        while k < close:
            text = tokens[k].text
            if text in ("{", "("):  # a method's body or parameters, a nested type: not members
                k = _matching(tokens, k) + 1
                continue
            if tokens[k].kind == "ident" and tokens[k - 1].text not in (".", "->", "::") and k + 1 < close:
                after = tokens[k + 1].text
                if after == "[" and (tokens[k - 1].kind == "ident" or tokens[k - 1].text in ("*", ",", ">")):
                    arrays.add(text)
                    extents, q = [], k + 1
                    while q < close and tokens[q].text == "[":
                        end = _matching(tokens, q)
                        extents.append(" ".join(x.text for x in tokens[q + 1:end]))
                        q = end + 1
                    if all(extents) and tokens[q].text in (";", ",", "=") and not template:
                        if found.setdefault(text, extents) != extents:
                            other.add(text)
                    else:
                        other.add(text)
                    k = q
                    continue
                # (any other member: `float w;`, `float* w;`, `T& w;`, `float a, *w;`)
                if after in (";", ",", "=", ":", "{") and (tokens[k - 1].kind == "ident" or tokens[k - 1].text in (
                        "*", "&", "&&", ">", ",")) or after == "(":
                    other.add(text)
            k += 1
    # An extent needs a value that holds at every use: numbers, macros, and constants declared
    sized = {}
    for name, extents in found.items():
        values = [_constant(extent, constants) for extent in extents]
        if name not in other and all(value is not None and value > 0 for value in values):
            sized[name] = values
    return sized, arrays


def _address_of(tokens: list[Token], dot: int) -> bool:
    """Whether the member access at `dot` (`.` or `->`) is the operand of a unary `&`: `&acc.v[n]`,
    `&ps[i].v[0]`, the address one past the end included."""
    j, depth = dot - 1, 0
    while j > 0:  # back over the object: names, subscripts, calls and parentheses, `.` and `->`
        text = tokens[j].text
        if text in ("]", ")"):
            depth += 1
        elif text in ("[", "("):
            depth -= 1
            if depth < 0:
                break
        elif depth == 0 and not (tokens[j].kind == "ident" or text in (".", "->", "::")):
            break
        j -= 1
    return _address_operator(tokens, j)


def _declared_type(tokens: list[Token], i: int, a: int, types: set) -> int | None:
    """Where the type words before tokens[i] start (`const float` of `const float& x = ...`), when
    they start a statement and name a type: a declaration's; else None."""
    start = i - 1
    while start > a and (tokens[start].kind == "ident" or tokens[start].text == "::"):
        start -= 1
    words = [t.text for t in tokens[start + 1:i] if t.kind == "ident"]
    if tokens[start].text not in _STATEMENT_START or not words or any(w in _NOT_DECLARATION for w in words) \
            or not any(w in types or w in _TYPE_WORDS for w in words):
        return None
    return start + 1


def _local_array_references(tokens: list[Token], f: _Function, types: set, replace) -> set[str]:
    """`float (&row)[32] = s[i];`, `const float (&c)[4] = r;` in a body: a view of that array, as an
    array reference parameter is (local, __shared__ and member arrays are views here, which a C++
    array reference cannot bind to). Their names."""
    names = set()
    if not f.body:
        return names
    a, b = f.body
    for i in range(a + 1, b - 5):
        if not (tokens[i].text == "(" and tokens[i + 1].text == "&" and tokens[i + 2].kind == "ident"
                and tokens[i + 3].text == ")" and tokens[i + 4].text == "["):
            continue
        start = _declared_type(tokens, i, a, types)  # the element type
        if start is None:
            continue
        end = i + 4
        while end < b and tokens[end].text == "[":
            end = _matching(tokens, end) + 1
        if end >= b or tokens[end].text not in ("=", "{", "("):
            continue
        element = " ".join(t.text for t in tokens[start:i] if t.text not in ("__shared__", "static"))
        extents = "".join(t.text for t in tokens[i + 4:end])
        name = tokens[i + 2].text
        replace(tokens[start].start, tokens[end - 1].end, f"__cc_array_view<{element}{extents}> {name}")
        names.add(name)
    return names


def _body_arrays(tokens: list[Token], f: _Function) -> dict[str, int]:
    """The arrays function f declares in its body (`float r[4];`, `__shared__ int s[8][8];`) and their dimensions."""
    a, b = f.body
    dims = {}
    for k in range(a + 2, b - 1):
        if tokens[k].kind == "ident" and tokens[k + 1].text == "[" and tokens[k - 1].kind == "ident" \
                and tokens[k - 1].text not in _NOT_DECLARATION:
            count, q = 0, k + 1
            while q < b and tokens[q].text == "[":
                count, q = count + 1, _matching(tokens, q) + 1
            dims.setdefault(tokens[k].text, count)
    return dims


def _auto_array_references(tokens: list[Token], f: _Function, views: set) -> set[str]:
    """`auto& q = r;` (or `const auto&`, `auto&&`) of an array r of the body or one in `views`: q is
    a reference to r's view, so sizeof(q) must be the array's, as sizeof(r) is. Their names."""
    a, b = f.body
    arrays = set(views) | set(_body_arrays(tokens, f))
    names = set()
    for i in range(a + 1, b - 4):
        if tokens[i].text == "auto" and tokens[i + 1].text in ("&", "&&") and tokens[i + 2].kind == "ident" \
                and tokens[i + 3].text == "=" and tokens[i + 4].text in arrays and tokens[i + 5].text == ";":
            names.add(tokens[i + 2].text)
    return names


def _auto_row_references(tokens: list[Token], f: _Function, replace) -> None:
    """`auto& row = tile[threadIdx.y];` (or `const auto&`, `auto&&`) of a 2-D (or deeper) array of the body: a row of
    a checked array is a view, a value that refers to the row as a reference does, so `auto row = ...` binds it
    (a reference cannot: the view is made by the subscript). An element (`auto& e = s[i];` of a 1-D s) stays a
    reference."""
    a, b = f.body
    dims = _body_arrays(tokens, f)
    for i in range(a + 1, b - 5):
        if tokens[i].text == "auto" and tokens[i + 1].text in ("&", "&&") and tokens[i + 2].kind == "ident" \
                and tokens[i + 3].text == "=" and dims.get(tokens[i + 4].text, 0) >= 2 and tokens[i + 5].text == "[":
            count, q = 0, i + 5
            while q < b and tokens[q].text == "[":
                count, q = count + 1, _matching(tokens, q) + 1
            if q < b and tokens[q].text == ";" and count < dims[tokens[i + 4].text]:
                replace(tokens[i + 1].start, tokens[i + 1].end, "")


def _sizeof_array(tokens: list[Token], i: int, b: int, arrays: set) -> int | None:
    """When tokens[i] is `sizeof` of one of `arrays` (`sizeof(tile)`, `sizeof tile`) or of a row of it
    (`sizeof(tile[0])`, `sizeof tile[0]`, `sizeof(*tile)`), the index of the array's name: sizeof does not
    evaluate its operand, so the array's own storage can stand there (a row of a view is a view)."""
    if tokens[i].text != "sizeof" or i + 2 >= b:
        return None
    named = i + 1 + (tokens[i + 1].text == "(")
    starred = named + 1 < b and tokens[named].text == "*" and named == i + 2
    named += starred
    if named + 1 >= b or tokens[named].text not in arrays:
        return None
    after = tokens[named + 1].text
    if starred:
        return named if after == ")" else None
    return named if after in (")", "[") or (named == i + 1 and after not in (".", "->")) else None


def _array_itself(name: str, array_views) -> str:
    """What stands for a checked array `name` where its own bytes are meant (sizeof): its raw storage,
    or the array an array reference's view holds."""
    return f"({name}.__cc_array())" if name in array_views else f"__cc_raw_{name}"


def _outer_tokens(tokens: list[Token], k: int, a: int):
    """The indices of the tokens before tokens[k] at its own bracket depth, nearest first, up to (and
    with) the bracket that opens its group or the statement's `;`."""
    depth = 0
    for q in range(k - 1, a, -1):
        text = tokens[q].text
        if text in (")", "]", "}"):
            depth += 1
        elif text in ("(", "[", "{") and depth:
            depth -= 1
        elif not depth:
            yield q
            if text in ("(", "[", "{", ";"):
                return


def _ternary_colon(tokens: list[Token], k: int, a: int) -> bool:
    """Whether the `:` at tokens[k] is the one of a `?:` (not a label's, a case's or a range-for's)."""
    return any(tokens[q].text == "?" for q in _outer_tokens(tokens, k, a))


def _called_at(tokens: list[Token], i: int, a: int) -> str | None:
    """The name of the function whose call has tokens[i] among its arguments, or None."""
    for q in _outer_tokens(tokens, i, a):
        if tokens[q].text == "(" and tokens[q - 1].kind == "ident":
            return tokens[q - 1].text
    return None


def _pointer_argument(tokens: list[Token], first: int, after: int, pointer_params: dict | None) -> bool:
    """Whether tokens[first:after] is a whole argument of a call `f(..., x, ...)` where every function of the
    source named f takes a pointer at that position (`pointer_params`: name → those positions)."""
    if not pointer_params or tokens[first - 1].text not in ("(", ",") or tokens[after].text not in (",", ")"):
        return False
    close = after  # the call's `)`: past the arguments after this one
    while close < len(tokens) and tokens[close].text not in (")", ";"):
        close = _matching(tokens, close) + 1 if tokens[close].text in ("(", "[", "{") else close + 1
    open_ = _opening(tokens, close) if close < len(tokens) and tokens[close].text == ")" else -1
    if open_ < 2 or tokens[open_ - 1].kind != "ident" or tokens[open_ - 2].text in (".", "->"):
        return False
    found = _call_arguments(tokens, open_)
    position = next((k for k, part in enumerate(found[0]) if part == (first, after)), None) if found else None
    return position is not None and position in pointer_params.get(tokens[open_ - 1].text, ())


def _rewrite_body(tokens: list[Token], f: _Function, types: set, replace, global_arrays=frozenset(),
                  type_bodies: dict | None = None, dangling: list | None = None,
                  member_arrays: dict | None = None, array_views=frozenset(), overloaded=frozenset(),
                  array_members=frozenset(), method: bool = False, pointer_params: dict | None = None,
                  array_params: dict | None = None, row_params: dict | None = None,
                  extern_shared=frozenset()) -> None:
    """Inside a function body: local pointer variables and pointer casts become checked pointers.
    A `return x;` of a local array x goes into `dangling` (nvcc warns of it too). Each subscript of
    an array member (`acc.v[i]`, `p->m[r][c]`) is checked against its extent; in a method, so is one
    of a member named bare (`v[i]`), and of a template struct's member (its extent from its type)."""
    a, b = f.body
    arrays = set(global_arrays)
    local_arrays = {}  # the function's own arrays (not __shared__, not static) → rank: gone when it returns
    declared_at = {}  # each of them → the tokens that name it in its declarations
    block_arrays = {}  # its __shared__ and static arrays → rank
    # Pointer parameters and local pointer variables (checked pointers in the rewrite): `&x[i]` is an
    # address, not an access.
    pointers = {r.name for r in f.raws if r.name and (r.stars == 1 or r.array) and not r.complex
                      and not r.reference}
    # extern __shared__ arrays (`&s[blockDim.x]`, one past the end of the launch's dynamic shared memory, is
    # an address too, as it is of a static array)
    pointers |= extern_shared
    type_bodies = type_bodies or {}  # `{` → `}` of struct and union definitions (`__shared__ union {...} u;`)
    # `auto* p = &y[i];`, `const auto* q = x + i;`, `auto p = &s[0];`: a checked pointer is no T* that
    # `auto*` could deduce from, and `&s[0]` of an array is a raw one: `auto p = __cc_as_pointer(...)`, a
    # checked pointer either way (the pointer's own constness aside, the same pointer)
    for k in range(a + 1, b - 5):
        star = tokens[k + 1].text == "*"
        if tokens[k].text == "auto" and star and tokens[k + 2].text == "const" and tokens[k + 3].kind == "ident" \
                and tokens[k + 4].text == "=":
            replace(tokens[k + 1].start, tokens[k + 1].end, "")  # `auto* const q = out + i;`: `auto const q`
            continue
        if tokens[k].text == "auto" and tokens[k + 1 + star].kind == "ident" and tokens[k + 2 + star].text == "=" \
                and tokens[k - 1].text in (";", "{", "}", "(", "const") \
                and (star or (tokens[k + 3].text == "&" and tokens[k + 4].kind == "ident" and tokens[k + 5].text == "[")):
            end = _declarator_end(tokens, k + 3 + star, b)
            if end >= b or tokens[end].text != ";":
                continue
            if star:
                replace(tokens[k + 1].start, tokens[k + 1].end, "")
            if tokens[k - 1].text == "const":
                replace(tokens[k - 1].start, tokens[k - 1].end, "")
            replace(tokens[k + 2 + star].start, tokens[k + 2 + star].end, "= __cc_as_pointer(")
            replace(tokens[end].start, tokens[end].end, ");")
    # Local variables of a struct type (`Particle p;`, not __shared__ or static): `&p.v[k]` and `q = p.v;` of
    # their member arrays become checked pointers with the member's bounds (a raw address into the stack
    # would be unchecked: no allocation holds it)
    local_structs = set()
    for k in range(a + 1, b - 2):
        if tokens[k].kind == "ident" and tokens[k].text not in _NOT_DECLARATION and tokens[k + 1].kind == "ident" \
                and tokens[k + 2].text in (";", "=", "{", ",") \
                and tokens[k - 1 - (tokens[k - 1].text in ("const", "struct"))].text in _STATEMENT_START | {")"}:
            local_structs.add(tokens[k + 1].text)
    _checked_lambda_parameters(tokens, a, b, replace)
    i = a + 1
    while i < b:
        tok = tokens[i]
        if i in type_bodies:  # a struct or union defined in the function: its members stay as written
            i = type_bodies[i]
            continue
        if tok.text == "decltype" and i + 4 < b and tokens[i + 1].text == "(" and tokens[i + 3].text == ")" \
                and (tokens[i + 2].text in arrays or tokens[i + 2].text in array_views) \
                and tokens[i + 4].kind == "ident":  # `decltype(l) copy;`: an array of l's type, not a view
            replace(tok.start, tok.start, "__cc_plain_t<")
            replace(tokens[i + 3].end, tokens[i + 3].end, ">")
            i += 4
            continue
        # `c ? s : t`, `c ? s : p` of arrays (views of their own lengths here), and an array passed for a pointer to
        # rows: each a pointer to its first element
        lo, hi = i - 1, i + 1  # (the branch's own parentheses aside: `c ? (s) : (l)`)
        while tok.kind == "ident" and a < lo and hi < b and tokens[lo].text == "(" and tokens[hi].text == ")" \
                and tokens[lo - 1].kind != "ident":
            lo, hi = lo - 1, hi + 1
        if tok.kind == "ident" and (tok.text in arrays or tok.text in array_views) \
                and tokens[i - 1].text not in (".", "->", "::") and hi < b \
                and (tokens[lo].text == "?" and tokens[hi].text == ":"
                     or tokens[lo].text == ":" and tokens[hi].text in (")", ";", ",", ":", "]", "}")
                     and _ternary_colon(tokens, lo, a)
                     or _pointer_argument(tokens, i, i + 1, row_params)):  # `tsum(m, r)` of a template's `T (*m)[N]`
            replace(tok.start, tok.start, "__cc_as_pointer(")
            replace(tok.end, tok.end, ")")
        one_extent = tok.text == "." and i + 2 < b and tokens[i - 1].text in local_structs and member_arrays \
            and len(member_arrays.get(tokens[i + 1].text, ())) == 1
        if one_extent and tokens[i + 2].text == "[" and _address_operator(tokens, i - 2):
            close = _matching(tokens, i + 2)  # `&p.v[k]` → `__cc_member_pointer(p.v, k)`
            if close < b and tokens[close + 1].text not in ("[", ".", "->", "(", "++", "--"):
                replace(tokens[i - 2].start, tokens[i - 2].end, "__cc_member_pointer(")
                replace(tokens[i + 2].start, tokens[i + 2].end, ", ")
                replace(tokens[close].start, tokens[close].end, ")")
                i = close + 1
                continue
        if one_extent and tokens[i + 2].text == ";" and tokens[i - 2].text == "=" and tokens[i - 3].kind == "ident" \
                and tokens[i - 4].text not in ("&", "&&"):  # `float* q = p.v;` (not `auto& r = p.v;`)
            replace(tokens[i - 1].start, tokens[i - 1].start, "__cc_member_pointer(")
            replace(tokens[i + 1].end, tokens[i + 1].end, ", 0)")
            i += 2
            continue
        # `f(p.v)`, `f(ps[k].v)`, `f(q->v)` where each of the source's functions named f takes an array reference
        # there (`const float (&x)[N]`, a view in the rewrite): a view of the member, with its name and bounds
        if tok.text in (".", "->") and array_params and i + 1 < b and tokens[i + 1].text in (member_arrays or ()) \
                and (first := _object_start(tokens, i, a)) is not None \
                and _pointer_argument(tokens, first, i + 2, array_params):
            replace(tokens[first].start, tokens[first].start, "__cc_member_view(")
            replace(tokens[i + 1].end, tokens[i + 1].end, f', ".{tokens[i + 1].text}")')
            i += 2
            continue
        # `p.v + 2` (the array as a pointer, moved on), and `f(p.v, n)` where each of the source's functions
        # named f takes a pointer there: a checked pointer with the member's bounds too
        if one_extent and not _address_operator(tokens, i - 2) and tokens[i - 2].text not in ("sizeof", ".", "->") \
                and (tokens[i + 2].text in ("+", "-") and tokens[i - 2].text not in ("*", "++", "--")
                     or _pointer_argument(tokens, i - 1, i + 2, pointer_params)):
            replace(tokens[i - 1].start, tokens[i - 1].start, "__cc_member_pointer(")
            replace(tokens[i + 1].end, tokens[i + 1].end, ", 0)")
            i += 2
            continue
        # sizeof(tile) / sizeof tile of an array made checked below, or of an array reference parameter
        # `float (&r)[4]` (a view): the size of the array, not of its view. (Every other sizeof is the
        # CPU's: 32 bytes for a checked pointer, which memcpy and malloc of pointers must agree with.)
        named = _sizeof_array(tokens, i, b, arrays | array_views) if i + 2 < b else None
        if named is not None:
            replace(tokens[named].start, tokens[named].end, _array_itself(tokens[named].text, array_views))
            i = named + 1
            continue
        # `acc.v[i]`: the index checked against v's extent where the struct declares it (__cc_index).
        if tok.text in (".", "->") and member_arrays and i + 2 < b and tokens[i + 1].text in member_arrays \
                and tokens[i + 2].text == "[" and not _address_of(tokens, i):
            extents, q, subscript = member_arrays[tokens[i + 1].text], i + 2, 0
            while q < b and tokens[q].text == "[" and subscript < len(extents):
                close = _matching(tokens, q)
                replace(tokens[q].start, tokens[q].end, "[__cc_index(")
                replace(tokens[close].start, tokens[close].end,
                        f', {extents[subscript]}, ".{tokens[i + 1].text}", {subscript})]')
                q, subscript = close + 1, subscript + 1
            i += 2
            continue
        # `w.v[i]` of a member array whose extent is not one number here (a template struct's `float v[N]`),
        # and `v[i]` named bare in a method (`operator[](int i) { return v[i]; }`): checked against the
        # extent of the member's type, `decltype(w.v)` (nothing for a member that is a pointer there)
        bare = method and tok.kind == "ident" and tok.text in array_members \
            and tokens[i - 1].text not in (".", "->", "::") and i + 1 < b and tokens[i + 1].text == "[" \
            and not _address_operator(tokens, i - 1) \
            and not (tokens[i - 1].kind == "ident" and tokens[i - 1].text not in ("return", "case", "else", "do"))
        # (not a declaration, `float v[8];` of a local named as the member)
        if bare or (tok.text in (".", "->") and i + 2 < b and tokens[i + 1].text in array_members
                    and tokens[i + 2].text == "[" and not _address_of(tokens, i)):
            name_at = i if bare else i + 1
            start = name_at if bare else _object_start(tokens, i, a)
            if start is not None:
                whole = " ".join(t.text for t in tokens[start:name_at + 1])
                q, subscript = name_at + 1, 0
                while q < b and tokens[q].text == "[" and subscript < 4:
                    close = _matching(tokens, q)
                    replace(tokens[q].start, tokens[q].end, f"[__cc_member_index<decltype({whole}{'[0]' * subscript})>(")
                    replace(tokens[close].start, tokens[close].end, f', ".{tokens[name_at].text}", {subscript})]')
                    q, subscript = close + 1, subscript + 1
                i = name_at + 1
                continue
        # `c ? &x[i] : &dummy`: the address of a variable as a branch of `?:` is a checked pointer too
        # (a raw one and a checked one have no common type there)
        if _address_operator(tokens, i) and i + 2 < b and tokens[i + 1].kind == "ident" \
                and tokens[i + 2].text in (":", ";", ")", ",") and tokens[i + 1].text not in arrays | array_views \
                and (tokens[i - 1].text == "?" or tokens[i - 1].text == ":" and _ternary_colon(tokens, i - 1, a)):
            replace(tok.start, tok.start, "__cc_as_pointer(")
            replace(tokens[i + 1].end, tokens[i + 1].end, ")")
            i += 2
            continue
        # `&x[i]` of a local array: `(x + (i))`, a checked pointer with x's bounds (a raw address into a
        # thread's own stack is found in no table of allocations, as argument and __shared__ arrays are).
        # `&x[i][j]` of a 2-D one: __cc_address_in(x, &x[i][j]), the address with all of x's bounds
        # (`float* flat = &x[0][0]; flat[5]` is fine), each subscript checked as an access's is.
        # (And of a __shared__ or static array the function declares: `p < &s[256]` makes the address one past
        # its end, which is fine, where s[256] would be an access. Not as a call's argument, `f(&s[i])`:
        # there the element's address is what the callee gets, its use noted at this line.)
        if _address_operator(tokens, i) and i + 2 < b and (tokens[i + 1].text in local_arrays or (
                tokens[i + 1].text in block_arrays and (tokens[i - 1].text not in ("(", ",")
                                                        or _called_at(tokens, i, a) in overloaded))) \
                and tokens[i + 2].text == "[":
            ranks = local_arrays if tokens[i + 1].text in local_arrays else block_arrays
            closes = [_matching(tokens, i + 2)]
            while closes[-1] + 1 < b and tokens[closes[-1] + 1].text == "[":
                closes.append(_matching(tokens, closes[-1] + 1))
            name, after = tokens[i + 1].text, tokens[closes[-1] + 1].text if closes[-1] + 1 < b else ";"
            if after not in (".", "->") and len(closes) == 1 == ranks[name]:
                replace(tok.start, tok.end, "(")
                replace(tokens[i + 2].start, tokens[i + 2].end, " + (")
                replace(tokens[closes[0]].start, tokens[closes[0]].end, "))")
                i += 3
                continue
            if after not in (".", "->") and len(closes) == ranks[name] > 1:
                replace(tok.start, tok.end, f"__cc_address_in({name}, &")
                replace(tokens[closes[-1]].start, tokens[closes[-1]].end, "])")
                i += 2
                continue
        # `&x[i]` of a pointer parameter or variable: `(x + (i))`, the checked pointer at i, as x + i is. Making an
        # address is no access, so `&c[k]` one past the end (or further: PMPP's merge hands
        # `&C[k_curr]` with nothing to copy to its helper) is fine; an access through it is checked.
        if _address_operator(tokens, i) and i + 2 < b and tokens[i + 1].text in pointers \
                and tokens[i + 1].text not in arrays and tokens[i + 2].text == "[":
            close = _matching(tokens, i + 2)
            if close + 1 < b and tokens[close + 1].text not in (".", "->", "[", "(", "++", "--"):
                replace(tok.start, tok.end, "(")
                replace(tokens[i + 2].start, tokens[i + 2].end, " + (")
                replace(tokens[close].start, tokens[close].end, "))")
                i += 3
                continue
        # A __shared__ scalar `__shared__ int count;` is poisoned once per block and known to the
        # sanitizer, like the arrays (its uses are noted by _note_accesses).
        name = _shared_scalar_at(tokens, i, b)
        if name is not None:
            end = i + 1
            while tokens[end].text != ";":
                end = _matching(tokens, end) + 1 if tokens[end].text == "{" else end + 1
            if tokens[end - 2].text == "*":  # `__shared__ float* buffer;`: a checked pointer, as any pointer
                words = " ".join(t.text for t in tokens[i + 1:end - 2])
                replace(tokens[i + 1].start, tokens[end - 2].end, f"__cc_ptr<{words}>")
            replace(tokens[end].start, tokens[end].end,
                    f'; __cc_shared_scalar((void*)&{name}, sizeof {name}, "{name}");')
            i = end + 1
            continue
        # A local or __shared__ array `__shared__ float tile[32][33];` gets a checked view:
        # every subscript is checked against its dimension.
        if tokens[i - 1].text in (";", "{", "}") and tok.kind == "ident" and tok.text not in ("return", "extern", "typedef", "using", "goto", "case", "delete", "throw"):
            j = _declaration_name(tokens, i, b, types)
            element = None  # `float* rows[2] = {a, b};`: an array of pointers, each one a checked pointer
            if tokens[j + 1].text == "*" and j + 3 < b and tokens[j + 2].kind == "ident" and tokens[j + 3].text == "[" \
                    and all(t.text in _TYPE_WORDS or t.text in types or t.text == "__shared__" for t in tokens[i:j + 1]):
                words = [t.text for t in tokens[i:j + 1] if t.text not in ("__shared__", "static")]
                element = (i, j + 1, f"__cc_ptr<{' '.join(words)}> ")
                j += 2
            if (j > i and j + 1 < b and tokens[j].kind == "ident" and tokens[j + 1].text == "["
                    and tokens[j].text not in _TYPE_WORDS and not any(t.text in _NOT_DECLARATION for t in tokens[i:j])):
                k = j + 1
                while k < b and tokens[k].text == "[":
                    k = _matching(tokens, k) + 1
                end = k
                if end < b and tokens[end].text == "=" and end + 1 < b and tokens[end + 1].text == "{":
                    end = _matching(tokens, end + 1) + 1
                # (`float a[] = {...}`: the size comes from the initializer, which the view's type deduces)
                if end < b and tokens[end].text == ";" and (tokens[j + 2].text != "]" or end != k):
                    name = tokens[j].text
                    shared = int(any(t.text == "__shared__" for t in tokens[i:j]))
                    if element:
                        first = next(q for q in range(element[0], element[1]) if tokens[q].text not in ("__shared__", "static"))
                        replace(tokens[first].start, tokens[element[1]].end, element[2])
                    replace(tokens[j].start, tokens[j].end, f"__cc_raw_{name}")
                    for q in range(j + 2, k):  # `float b[sizeof(a) / sizeof(a[0])]`: a's size, not its view's
                        named = _sizeof_array(tokens, q, k, arrays | array_views)
                        if named is not None:
                            replace(tokens[named].start, tokens[named].end,
                                    _array_itself(tokens[named].text, array_views))
                    raw = f"__cc_raw_{name}"
                    rank = sum(1 for q in range(j + 1, k)
                               if tokens[q].text == "[" and tokens[q - 1].text in (tokens[j].text, "]"))
                    if not shared and not any(t.text == "static" for t in tokens[i:j]):
                        local_arrays[name] = rank
                        declared_at.setdefault(name, []).append(j)
                    else:
                        block_arrays[name] = rank
                    if not shared and end == k and not any(t.text == "static" for t in tokens[i:j]):
                        raw = f'__cc_fresh_local({raw}, "{name}")'  # no initializer: the sanitizer's initcheck
                    replace(tokens[end].start, tokens[end].end,
                            f'; auto {name} = __cc_make_view({raw}, "{name}", {shared});')
                    arrays.add(name)
                    i = end + 1
                    continue
        # A pointer stored in memory (an element of a `float**`, of `float* rows[4]`, a struct's member) is a
        # checked pointer here, of sizeof(__cc_ptr<float>) bytes: so the type-ids that name such an element are
        # the checked type too, `sizeof(float*)`, `new float*[n]`, `(float**)malloc(...)`,
        # `static_cast<float**>(...)`, and `float** rows = (float**)malloc(n * sizeof(float*));` holds n of them.
        if tok.text in ("sizeof", "new", "(", "<") and i + 3 < b and (
                tok.text != "(" or tokens[i - 1].kind == "punct" and tokens[i - 1].text not in (")", "]")
                or tokens[i - 1].text == "return") and (
                tok.text != "<" or tokens[i - 1].text in _CASTS):
            at = i + 1 + (tok.text == "sizeof" and tokens[i + 1].text == "(")
            found = _pointer_type_id(tokens, at, b, types) if at > i + 1 or tok.text != "sizeof" else None
            if found:
                element, star = found
                stars = 1 + (star + 1 < b and tokens[star + 1].text == "*")
                after = tokens[star + stars].text if star + stars < b else ""
                if tok.text == "sizeof" and stars == 1 and after == ")":  # sizeof(float*)
                    replace(tokens[at].start, tokens[star].end, f"__cc_ptr<{element}>")
                elif tok.text == "new" and stars == 1 and after in ("[", ";", "(", "{", ")", ","):  # new float*[n]
                    replace(tok.start, tokens[star].end, f"new (__cc_heap) __cc_ptr<{element}>")
                elif tok.text == "<" and stars == 2 and after == ">":  # static_cast<float**>(...)
                    replace(tokens[at].start, tokens[star].end, f"__cc_ptr<{element}>")
                elif tok.text == "(" and stars == 2 and after == ")" and star + 3 < b and (
                        tokens[star + 3].kind in ("ident", "number") or tokens[star + 3].text in _CAST_OPERAND):
                    replace(tokens[at].start, tokens[star + 1].end, f"__cc_ptr<__cc_ptr<{element}>>")  # (float**)p
                else:
                    found = None
                if found:
                    i = star + stars
                    continue
        # reinterpret_cast<T*>(p), const_cast<T*>(p) and static_cast<T*>(p) keep p's bounds (as T elements).
        if tok.text in _CASTS and i + 1 < b and tokens[i + 1].text == "<":
            replace(tok.start, tok.end, "__cc_" + tok.text)
            i += 1
            continue
        # malloc, free, new and delete use runtime.h's device heap, which knows each block: malloc
        # returns a checked pointer (`(float*)malloc(n * 4)` is bounds-checked), and a double free or
        # the free of a pointer no malloc returned is a fault with its line, not a crash of the process.
        # printf with its line: a time limit that stops the thread anywhere inside names it (runtime.h)
        if tok.text == "printf" and i + 2 < b and tokens[i + 1].text == "(" and tokens[i + 2].text != ")" \
                and tokens[i - 1].text not in (".", "->", "::"):
            replace(tok.start, tokens[i + 1].end, "__cc_printf_at(__LINE__, ")
            i += 2
            continue
        if tok.text in _DEVICE_HEAP_CALLS and i + 1 < b and tokens[i + 1].text == "(" \
                and tokens[i - 1].text not in (".", "->", "::"):
            replace(tok.start, tok.end, _DEVICE_HEAP_CALLS[tok.text])
            i += 1
            continue
        if tok.text == "new" and i + 1 < b and tokens[i + 1].text != "(" and tokens[i - 1].text not in ("operator", "::"):
            replace(tok.start, tok.end, "new (__cc_heap)")
            i += 1
            continue
        if tok.text == "delete" and tokens[i - 1].text not in ("operator", "=", "::"):
            array = i + 2 < b and tokens[i + 1].text == "[" and tokens[i + 2].text == "]"
            end, depth = i + (3 if array else 1), 0
            while end < b and not (depth == 0 and tokens[end].text in (";", ",", ")", "}")):
                if tokens[end].text in ("(", "[", "{"):
                    depth += 1
                elif tokens[end].text in (")", "]", "}"):
                    depth -= 1
                end += 1
            if end < b and tokens[end].text == ";":
                replace(tok.start, tokens[i + (2 if array else 0)].end, "__cc_device_delete(")
                replace(tokens[end].start, tokens[end].end, f", {'true' if array else 'false'});")
                i += 1
                continue
        prev = tokens[i - 1]
        # A C-style cast `(const float4*)p`: `(`, a type, one `*`, `)`, then an operand.
        if tok.text == "(" and (prev.kind == "punct" and prev.text not in (")", "]") or prev.text == "return"):
            # (`(const geo::Point*)raw`, `(struct Point*)raw` too)
            words, type_text, j = _qualified_type(tokens, i + 1, b, types, ("struct",)) or ([], "", i + 1)
            rows = _row_extents(tokens, j + 3, b) if type_text and j + 3 < b and tokens[j].text == "(" \
                and tokens[j + 1].text == "*" and tokens[j + 2].text == ")" else None
            if rows and rows[1] + 1 < b and tokens[rows[1]].text == ")" and (
                    tokens[rows[1] + 1].kind in ("ident", "number") or tokens[rows[1] + 1].text in _CAST_OPERAND):
                quals = " ".join(w for w in words if w in ("const", "volatile"))  # (const float (*)[4])a
                replace(tokens[i].start, tokens[rows[1]].end, f"(__cc_ptr<{quals + ' ' if quals else ''}{type_text}{rows[0]}>)")
                i = rows[1] + 1
                continue
            if (type_text and j + 2 < b and tokens[j].text == "*" and tokens[j + 1].text == ")"
                    and (tokens[j + 2].kind in ("ident", "number") or tokens[j + 2].text in _CAST_OPERAND)):
                quals = " ".join(w for w in words if w in ("const", "volatile"))
                replace(tokens[i].start, tokens[j + 1].end, f"(__cc_ptr<{quals + ' ' if quals else ''}{type_text}>)")
                i = j + 2
                continue
        # A local pointer variable `const float* p = ...;` (one declarator).
        if prev.text in _STATEMENT_START or (prev.text == "(" and i >= 2 and tokens[i - 2].text == "for"):
            shared = tokens[i].text == "__shared__"  # `__shared__ float* p;`: a checked pointer in shared memory
            qualified = _qualified_type(tokens, i + shared, b, types)  # (`const geo::Point* p = ...;` too)
            if qualified is None:
                i += 1
                continue
            words, type_text, j = qualified
            # A pointer to rows `const float (*m)[4] = (const float (*)[4])a;`: a checked pointer whose
            # m[i] is a checked pointer to row i (so m[i][j] keeps the allocation's bounds).
            extents = _row_extents(tokens, j + 4, b) if j + 4 < b and tokens[j].text == "(" \
                and tokens[j + 1].text == "*" and tokens[j + 2].kind == "ident" and tokens[j + 3].text == ")" else None
            if extents and tokens[extents[1]].text in ("=", ";"):
                quals = " ".join(w for w in words if w in ("const", "volatile"))
                replace(tokens[i].start, tokens[extents[1] - 1].end,
                        f"__cc_ptr<{quals + ' ' if quals else ''}{type_text}{extents[0]}> {tokens[j + 2].text}")
                i = extents[1]
                continue
            inner_const = j + 1 < b and tokens[j + 1].text == "const"  # `float* const* cr = rows;`
            at = j + inner_const
            if at + 3 < b and tokens[j].text == "*" and tokens[at + 1].text == "*" and tokens[at + 2].kind == "ident" \
                    and tokens[at + 3].text in ("=", ";") and not shared:
                # `float** pp = &p;`: a pointer to a checked pointer (what `&p` gives, and `rows` of an array
                # of pointers), itself checked where it points into an array
                quals = " ".join(w for w in words if w in ("const", "volatile"))
                replace(tokens[i].start, tokens[at + 2].end,
                        f"__cc_ptr<{'const ' if inner_const else ''}__cc_ptr<{quals + ' ' if quals else ''}{type_text}>> "
                        f"{tokens[at + 2].text}")
                pointers.add(tokens[at + 2].text)
                i = at + 3
                continue
            if j + 1 < b and tokens[j].text == "*":
                k = j + 1
                const_pointer = False
                while k < b and tokens[k].text in ("const", "__restrict__", "__restrict", "restrict"):
                    const_pointer |= tokens[k].text == "const"
                    k += 1
                if k + 1 < b and tokens[k].kind == "ident" and tokens[k + 1].text in ("=", ";", ","):
                    end = _declarator_end(tokens, k + 1, b)
                    # `for (float* p = x, *e = x + n; ...)`: more pointer declarators, one declaration
                    more, stars = end, []
                    while more < b and tokens[more].text == "," and more + 2 < b and tokens[more + 1].text == "*" \
                            and tokens[more + 2].kind == "ident" and tokens[more + 3].text in ("=", ";", ","):
                        stars.append(more + 1)
                        more = _declarator_end(tokens, more + 3, b)
                    if more < b and tokens[more].text == ";":
                        quals = " ".join(w for w in words if w in ("const", "volatile"))
                        new = f"{'__shared__ ' if shared else ''}{'const ' if const_pointer else ''}" \
                              f"__cc_ptr<{quals + ' ' if quals else ''}{type_text}> {tokens[k].text}"
                        replace(tokens[i].start, tokens[k].end, new)
                        for star in stars:
                            replace(tokens[star].start, tokens[star].end, "")
                        pointers.update([tokens[k].text] + [tokens[star + 1].text for star in stars])
                        i = k + 1
                        continue
        i += 1
    # `return &m;` of a local variable m (not __shared__ or static: those outlive the call) or of a
    # parameter passed by value, also as a branch of `?:` (`return a > b ? &a : &b;`)
    if dangling is not None:
        by_value = {r.name for r in f.raws if r.name and not r.stars and not r.array and not r.reference
                    and not r.complex}
        for r in range(a + 1, b - 3):
            if tokens[r].text != "return":
                continue
            end = _statement_end(tokens, r, b)
            for q in range(r + 1, end - 1):
                if not (tokens[q].text == "&" and tokens[q - 1].text in ("return", "?", ":", "(")
                        and tokens[q + 1].kind == "ident" and tokens[q + 2].text in (";", ":", ")", "?")
                        and tokens[q + 1].text not in local_arrays):
                    continue
                name = tokens[q + 1].text
                for d in range(a + 1, r):  # its declaration in this body: `float m = ...;`, `int m;`
                    if tokens[d].text == name and tokens[d - 1].kind == "ident" and tokens[d + 1].text in ("=", ";", ",") \
                            and (tokens[d - 1].text in _TYPE_WORDS or tokens[d - 1].text in types):
                        start = d - 1
                        while start > a and tokens[start - 1].text not in (";", "{", "}", "("):
                            start -= 1
                        if not any(tokens[s].text in ("__shared__", "static", "extern") for s in range(start, d)) \
                                and tokens[start - 1].text != "(":
                            dangling.append((f.name, name, tokens[r].line, "variable"))
                        break
                else:
                    if name in by_value:
                        dangling.append((f.name, name, tokens[r].line, "parameter"))
    if declared_at:
        _copy_captured_arrays(tokens, a, b, declared_at, replace)
    # `return x;`, `return x + 1;`, `return &x[0];`, `return (float*)x;` of a local array x
    if dangling is not None and local_arrays:
        for r in range(a + 1, b):
            if tokens[r].text != "return":
                continue
            q = r + 1
            if tokens[q].text == "(" and _matching(tokens, q) + 1 < b and tokens[q + 1].kind == "ident" \
                    and tokens[q + 1].text not in local_arrays:
                q = _matching(tokens, q) + 1  # a cast
            address = tokens[q].text == "&"
            q += address
            if tokens[q].text in local_arrays and q + 1 < b and (
                    tokens[q + 1].text in (";", "+", "-") and not address or tokens[q + 1].text == "[" and address):
                dangling.append((f.name, tokens[q].text, tokens[r].line, "array"))


def _copy_captured_arrays(tokens: list[Token], a: int, b: int, declared_at: dict, replace) -> None:
    """A lambda that captures a local array by copy, `[=]` using it or `[buf]`, gets a copy of its
    own: `[=, buf = __cc_copy_of(buf)]`, `[buf = __cc_copy_of(buf)]` (the array is a view in the
    rewrite, which a plain capture would copy as a pointer, sharing the caller's elements).
    `declared_at`: each local array (not __shared__ or static) → the tokens naming it where declared."""
    for j, open_, params_end, k in _lambdas(tokens, a, b, bare=True):
        close = _matching(tokens, j)
        while k < b and tokens[k].text not in ("{", ";", ")", ","):
            k += 1  # (`-> float`)
        if k >= b or tokens[k].text != "{":
            continue
        body = (k, _matching(tokens, k))
        items = _split_commas(tokens[j + 1:close])
        texts = [" ".join(t.text for t in item) for item in items]
        used = []
        for q in range(body[0] + 1, body[1]):
            name = tokens[q].text
            if name in declared_at and tokens[q - 1].text not in (".", "->", "::") and name not in used \
                    and any(d < j for d in declared_at[name]) \
                    and not any(body[0] < d < body[1] for d in declared_at[name]):
                used.append(name)
        params = {t.text for t in tokens[open_ + 1:params_end] if t.kind == "ident"}  # (none when bare: -1, -1)
        for item in items:
            if len(item) == 1 and item[0].text in declared_at and any(d < j for d in declared_at[item[0].text]):
                name = item[0].text
                replace(item[0].start, item[0].end, f"{name} = __cc_copy_of({name})")
        if "=" in texts:
            listed = {item[item[0].text == "&"].text for item in items if len(item) > (item[0].text == "&")}
            more = [name for name in used if name not in listed and name not in params]
            if more:
                replace(tokens[close].start, tokens[close].start,
                        "".join(f", {name} = __cc_copy_of({name})" for name in more))


def _check_std_array_subscripts(tokens: list[Token], replace, edits: "_Edits") -> None:
    """`a[i]` of a `cuda::std::array<float, 4> a` (a local, a parameter): i checked against its size, as a
    local array's is (std::array's operator[] checks nothing: a[12] read the thread's stack), each
    subscript of a nested one too: `a[__cc_std_index<decltype(a)>(i, "a", 0)]`. Names are found by their
    declarations; the index of anything else that has such a name is left as it is (__cc_std_index
    checks only a std::array). `edits`: the rewrite's edits so far (a subscript they rewrite is theirs)."""
    names = set()
    for i in range(len(tokens) - 5):
        if [t.text for t in tokens[i:i + 6]] == ["cuda", "::", "std", "::", "array", "<"]:
            k = _matching_angle(tokens, i + 5) + 1
            while 0 < k < len(tokens) and tokens[k].text in ("const", "&", "&&", "volatile"):
                k += 1
            if 0 < k + 1 < len(tokens) and tokens[k].kind == "ident" \
                    and tokens[k + 1].text in ("{", "=", ";", ",", ")"):
                names.add(tokens[k].text)
    for i, tok in enumerate(tokens[:-1]):
        if tok.text not in names or tokens[i + 1].text != "[" or i and (
                tokens[i - 1].text in (".", "->", "::") or tokens[i - 1].kind == "ident"
                and tokens[i - 1].text not in ("return", "case", "else", "do")):
            continue
        q, subscript = i + 1, 0
        while q < len(tokens) and tokens[q].text == "[" and subscript < 4 \
                and not edits.overlap(tokens[q].start, tokens[q].end):
            close = _matching(tokens, q)
            replace(tokens[q].start, tokens[q].end, f"[__cc_std_index<decltype({tok.text}{'[0]' * subscript})>(")
            replace(tokens[close].start, tokens[close].end, f', "{tok.text}", {subscript})]')
            q, subscript = close + 1, subscript + 1


def _qualified_last(tokens: list[Token], j: int, b: int) -> int:
    """The last word of the name `a::b::c` that starts with the identifier tokens[j] (j itself for one word)."""
    while j + 2 < b and tokens[j + 1].text == "::" and tokens[j + 2].kind == "ident":
        j += 2
    return j


def _known_type_end(tokens: list[Token], j: int, b: int, types) -> int:
    """Past the type named at tokens[j], one of `types` (not void), also with its namespaces (`geo::Point`,
    `::geo::Point`); j itself where there is none."""
    first = j + (tokens[j].text == "::")
    last = _qualified_last(tokens, first, b) if tokens[first].kind == "ident" else first
    if last < b and tokens[last].text in types and tokens[last].text != "void" and (last == j or last > first):
        return last + 1
    return j


def _qualified_type(tokens: list[Token], j: int, b: int, types, leading=()) -> tuple[list[str], str, int] | None:
    """The type named from tokens[j] with its qualifiers, `const unsigned int`, `float const`, `geo::Point`:
    (the qualifiers before and after it, the type's own words as text, the index past them); None where
    tokens[j] starts no type (one of `types`, or integer words). `leading`: more words that may come first
    (`struct`), kept with the qualifiers."""
    words, k = [], j
    while k < b and (tokens[k].text in ("const", "volatile") or tokens[k].text in leading):
        words.append(tokens[k].text)
        k += 1
    start = k
    while k < b and tokens[k].text in _INTEGER_WORDS:
        k += 1
    if k == start and k < b:
        k = _known_type_end(tokens, k, b, types)
    if k == start:
        return None
    type_text = " ".join(t.text for t in tokens[start:k])
    while k < b and tokens[k].text in ("const", "volatile"):
        words.append(tokens[k].text)
        k += 1
    return words, type_text, k


def _pointer_type_id(tokens: list[Token], j: int, b: int, types) -> tuple[str, int] | None:
    """A pointer type-id from tokens[j], `float*`, `const unsigned int*`, `geo::Point*`: the pointed-to type
    as text (with its qualifiers) and the index of its first `*`; None where tokens[j] starts none."""
    qualified = _qualified_type(tokens, j, b, types)
    if qualified is None:
        return None
    words, type_text, k = qualified
    return (" ".join(words + [type_text]), k) if k < b and tokens[k].text == "*" else None


def _row_extents(tokens: list[Token], at: int, end: int) -> tuple[str, int] | None:
    """The extents `[4]`, `[N][M]` from token `at` (a pointer to rows' declarator or cast), as text,
    and the index of the token after them; None if there are none."""
    text, k = "", at
    while k < end and tokens[k].text == "[":
        close = _matching(tokens, k)
        if close <= k + 1 or close >= end:
            return None
        text += "[" + " ".join(t.text for t in tokens[k + 1:close]) + "]"
        k = close + 1
    return (text, k) if text else None


_ASSIGNMENTS = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="}
_CASTS = ("reinterpret_cast", "static_cast", "const_cast")
_UNARY_BEFORE = {"=", "(", ",", "{", "}", ";", "?", ":", "!", "~", "+", "-", "*", "/", "%", "<", ">", "<=", ">=",
                 "==", "!=", "&&", "||", "&", "|", "^", "<<", ">>", "[", "return"} | _ASSIGNMENTS


def _address_operator(tokens: list[Token], j: int) -> bool:
    """tokens[j] is a unary `&` (an address, `&s[i]`, `(float4*)&s[i]`), not a bitwise and."""
    return tokens[j].text == "&" and (tokens[j - 1].text in _UNARY_BEFORE
                                      or tokens[j - 1].text == ")" and tokens[j - 2].text == "*")


def _note_branches(tokens: list[Token], f: _Function, notes: list) -> None:
    """For the traced build: `if (c)` → `if (__cc_branch(c))`, so that every thread's outcome is
    recorded (the profile's divergence). `if constexpr`, and conditions that declare a variable
    (`if (int n = f())`, `if (init; c)`), stay as written."""
    a, b = f.body
    for i in range(a + 1, b - 1):
        close = _plain_if(tokens, i, b)
        if close is not None:
            notes.append((tokens[i + 1].end, tokens[i + 1].end, "__cc_branch("))
            notes.append((tokens[close].start, tokens[close].start, ")"))


def _plain_if(tokens: list[Token], i: int, b: int) -> int | None:
    """When tokens[i] starts `if (c)` with a plain condition, the index of its `)`: not `if constexpr`,
    nor a condition that declares a variable (`if (int n = f())`, `if (init; c)`) or holds a comma,
    which a call around it would read as two arguments."""
    if tokens[i].text != "if" or tokens[i].kind != "ident" or tokens[i + 1].text != "(":
        return None
    close = _matching(tokens, i + 1)
    inside = tokens[i + 2:close]
    if not inside or close + 1 >= b or inside[0].text in _TYPE_WORDS or inside[0].text in ("auto", "const") \
            or any(t.text in (";", ",") for t in inside) or (len(inside) > 1 and inside[0].kind == "ident"
                                                            and inside[1].kind == "ident"):
        return None
    return close


def _statement_end(tokens: list[Token], i: int, b: int) -> int:
    """The last token of the statement that starts at tokens[i] (a block `{...}`, or up to its `;`;
    an `if` with its `else`)."""
    if tokens[i].text == "{":
        return _matching(tokens, i)
    if tokens[i].text in ("if", "for", "while", "switch") and i + 1 < b and tokens[i + 1].text == "(":
        end = _statement_end(tokens, _matching(tokens, i + 1) + 1, b)
        if tokens[i].text == "if" and end + 1 < b and tokens[end + 1].text == "else":
            end = _statement_end(tokens, end + 2, b)
        return end
    j = i
    while j < b and tokens[j].text != ";":
        j = _matching(tokens, j) + 1 if tokens[j].text in ("(", "[", "{") else j + 1
    return j


def _note_uniform_ifs(tokens: list[Token], f: _Function, replace, sites: list) -> None:
    """`if (c) { ...; __syncthreads(); }` → `if (__cc_uniform_site{k, line} = c)`: runtime.h counts
    each thread's outcomes, and a barrier checks that every thread took the if alike (CUDA allows a
    barrier in conditional code only where the condition is the same for the whole block). `sites`:
    the lines of the ifs so far (the first 8 of a module are checked)."""
    a, b = f.body
    for i in range(a + 1, b - 1):
        close = _plain_if(tokens, i, b)
        if close is None or len(sites) >= 8:
            continue
        end = _statement_end(tokens, i, b)  # (its else included)
        if any(t.kind == "ident" and t.text in _BARRIERS and q + 1 < b and tokens[q + 1].text == "("
               for q, t in enumerate(tokens[close + 1:end + 1], close + 1)):
            # (the `(` itself is replaced: insertions at the condition's start, `__cc_r(`, go after it)
            replace(tokens[i + 1].start, tokens[i + 1].end,
                    f"(__cc_uniform_site{{{len(sites)}, {tokens[i].line}, {tokens[end].line}}} = ")
            sites.append(tokens[i].line)


def _note_returns(tokens: list[Token], f: _Function, replace) -> None:
    """In a kernel's body, `return;` → `{ __cc_thread_returns(line); return; }`: a thread that
    returns is done with the block, and a __syncthreads() the others reach then waits only for
    them (sm_70+); a thread that skips a barrier and runs on to the kernel's end is a fault.
    Returns inside a lambda's body stay as written."""
    a, b = f.body
    lambdas = []
    for j in range(a + 1, b):
        if tokens[j].text != "[" or tokens[j - 1].text not in ("=", "(", ",", "{", ";", "return", "}"):
            continue
        k = _matching(tokens, j) + 1
        if k < b and tokens[k].text == "(":
            k = _matching(tokens, k) + 1
        while k < b and k < j + 40 and tokens[k].text not in ("{", ";"):
            k += 1
        if k < b and tokens[k].text == "{":
            lambdas.append((k, _matching(tokens, k)))
    for j in range(a + 1, b - 1):
        if tokens[j].text == "return" and tokens[j + 1].text == ";" \
                and not any(start < j < end for start, end in lambdas):
            replace(tokens[j].start, tokens[j].start, f"{{ __cc_thread_returns({tokens[j].line}); ")
            replace(tokens[j + 1].end, tokens[j + 1].end, " }")


def _volatile_names(tokens: list[Token]) -> set[str]:
    """Names declared volatile anywhere in the source: `__shared__ volatile int ready;`,
    `volatile int* flag = ...`, a `volatile float* sdata` parameter (not a cast's type), and those declared with
    a volatile alias (`vint* s` of `typedef volatile int vint;`)."""
    names = set()
    for i, tok in enumerate(tokens):
        if tok.text != "volatile":
            continue
        for j in range(i + 1, min(i + 10, len(tokens))):
            if tokens[j].text in ("=", ";", "[", ",", ")", "{", "(", "}"):
                if tokens[j - 1].kind == "ident" and j - 1 > i + 1 and tokens[j].text != "(":
                    names.add(tokens[j - 1].text)
                break
    return names | _volatile_aliased(tokens)


def _volatile_aliased(tokens: list[Token]) -> set[str]:
    """Names declared with a volatile alias of a type (`typedef volatile int vint;` or `using vint = volatile
    int;`, then `vint* s`, `vint s[32]`)."""
    aliases = {tokens[k - 1].text for k in range(2, len(tokens)) if tokens[k].text == ";" and tokens[k - 1].kind == "ident"
               and any(t.text == "typedef" for t in tokens[max(0, k - 6):k - 1])
               and any(t.text == "volatile" for t in tokens[max(0, k - 6):k - 1])}
    aliases |= {tokens[k + 1].text for k in range(len(tokens) - 3) if tokens[k].text == "using"
                and tokens[k + 2].text == "=" and tokens[k + 3].text == "volatile"}
    if not aliases:
        return set()
    return {tokens[k].text for k in range(2, len(tokens) - 1) if tokens[k].kind == "ident"
            and (tokens[k - 1].text in aliases or tokens[k - 1].text == "*" and tokens[k - 2].text in aliases)}


def _extern_shared_names(tokens: list[Token]) -> frozenset:
    """The names of the source's `extern __shared__` arrays."""
    names = set()
    for k, t in enumerate(tokens):
        if t.text == "extern" and any(tokens[q].text == "__shared__" for q in range(k + 1, min(k + 6, len(tokens)))):
            q = k + 1
            while q < len(tokens) and tokens[q].text not in (";", "[", "{", "("):
                q += 1
            if q < len(tokens) and tokens[q].text == "[" and tokens[q - 1].kind == "ident":
                names.add(tokens[q - 1].text)
    return frozenset(names)


def _warp_synchronous_steps(tokens: list[Token], f: _Function, volatile_names: set[str]) -> list[tuple[int, int, str]]:
    """The warp-synchronous steps of a function's body: a statement that stores into an element of a volatile
    array or pointer and reads another element of it (`vs[tid] += vs[tid + 16];`, `s[t] = fminf(s[t], s[t + 8]);`,
    a warp scan's `s[t] += s[t - 1];`), as the unrolled last warp of older reductions writes them. Each becomes
    `{ __cc_step_on(); ...; __cc_step_off(); }`: in a plain launch its volatile accesses are taken in step by the
    block's threads (runtime.h's __cc_volatile_step), as a warp's lanes take them on a GPU. Edits (start, end, text)."""
    a, b = f.body
    edits, assignments = [], {"=", "+=", "-=", "*=", "/=", "|=", "&=", "^=", "<<=", ">>="}
    for i in range(a + 1, b - 3):
        tok = tokens[i]
        if tok.text not in volatile_names or tokens[i + 1].text != "[" or tokens[i - 1].text not in (
                ";", "{", "}", ")", "else", ":"):
            continue
        close = _matching(tokens, i + 1)
        if close + 1 >= b or tokens[close + 1].text not in assignments:
            continue
        end, depth = close + 2, 0
        while end < b and not (tokens[end].text == ";" and depth == 0):
            depth += tokens[end].text in ("(", "[", "{") and 1 or -(tokens[end].text in (")", "]", "}"))
            end += 1
        if end >= b:
            continue
        mine = " ".join(t.text for t in tokens[i + 2:close])
        others = [" ".join(t.text for t in tokens[k + 2:_matching(tokens, k + 1)]) for k in range(close + 2, end - 1)
                  if tokens[k].text == tok.text and tokens[k + 1].text == "["]
        if any(other != mine for other in others):
            # (" {" sorts before the other insertions at that point, `__cc_rw(` among them)
            edits.append((tok.start, tok.start, " { __cc_step_on(); "))
            edits.append((tokens[end].end, tokens[end].end, " __cc_step_off(); }"))
    return edits


#: libcu++'s atomic_ref / atomic methods that read the value: a loop whose condition calls one waits.
_ATOMIC_METHODS = {"load", "exchange", "compare_exchange_strong", "compare_exchange_weak", "fetch_add", "fetch_sub",
                   "fetch_and", "fetch_or", "fetch_xor", "fetch_min", "fetch_max", "test", "test_and_set"}


def _spin_loops(tokens: list[Token], f: _Function, volatile_names: set[str],
                plain_waits: set[int]) -> list[tuple[int, int, str]]:
    """The loops of a function's body that wait for other threads: their condition reads a volatile
    or an atomic value (`while (flag == 0)` of a volatile flag, `while (atomicCAS(&lock, 0, 1))`), or
    is one of `plain_waits` (the lines of loops that wait with a plain read, `while (flag[0] == 0) { }`:
    warned about at compile time, and their reads are a wait's too, as the learner means them).
    Each condition gets `__cc_spin_point(line) && __cc_polled((...))`, so that a waiting thread lets the
    others of its block run now and then, and its reads of the flag are not hazards (runtime.h).
    Edits (start, end, new text)."""
    def waits(first: int, last: int) -> bool:  # (an atomic_ref's or cuda::atomic's `f.load(...)` too)
        return any(t.text == "volatile" or t.text in volatile_names or
                   (t.kind == "ident" and (t.text.startswith("atomic") or
                                           (t.text in _ATOMIC_METHODS and tokens[q - 1].text in (".", "->"))))
                   for q, t in enumerate(tokens[first:last], first))
    a, b = f.body
    edits = []
    for j in range(a + 1, b):
        if tokens[j].text not in ("while", "for") or j + 1 >= b or tokens[j + 1].text != "(":
            continue
        close = _matching(tokens, j + 1)
        body_end = _matching(tokens, close + 1) if close + 1 < b and tokens[close + 1].text == "{" else close + 1
        if tokens[j].text == "while":
            if tokens[j].line in plain_waits and close > j + 2:
                edits.append((tokens[j + 1].start, tokens[j + 1].end,
                              f"(__cc_spin_point({tokens[j].line}) && __cc_polled(("))
                edits.append((tokens[close].start, tokens[close].end, ")))"))
            elif close == j + 3 and tokens[j + 2].text in ("true", "1") and waits(close + 1, body_end):
                # `while (true) { if (flag) break; }`: a loop whose body waits and breaks out
                edits.append((tokens[j + 2].start, tokens[j + 2].end, f"__cc_spin_point({tokens[j].line}, false)"))
                edits += _polled_exits(tokens, close + 1, body_end, waits)
            elif close > j + 2 and waits(j + 2, close):
                edits.append((tokens[j + 1].start, tokens[j + 1].end,
                              f"(__cc_spin_point({tokens[j].line}) && __cc_polled(("))
                edits.append((tokens[close].start, tokens[close].end, ")))"))
            continue
        semis, depth = [], 0
        for k in range(j + 2, close):
            depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(tokens[k].text, 0)
            if depth == 0 and tokens[k].text == ";":
                semis.append(k)
        if len(semis) != 2:  # a range-for, or something else
            continue
        first, second = semis
        if second == first + 1:  # `for (;;)`: a loop whose body waits, perhaps, and breaks out
            if waits(second + 1, body_end):
                edits.append((tokens[first].start, tokens[first].end, f"; __cc_spin_point({tokens[j].line}, false)"))
                edits += _polled_exits(tokens, close + 1, body_end, waits)
        elif waits(first + 1, second):
            edits.append((tokens[first].start, tokens[first].end,
                          f"; __cc_spin_point({tokens[j].line}) && __cc_polled(("))
            edits.append((tokens[second].start, tokens[second].end, "));"))
    return edits


def _polled_exits(tokens: list[Token], first: int, last: int, waits) -> list[tuple[int, int, str]]:
    """In the body of an endless loop (tokens[first:last]), each `if (flag == 1) break;` (or return)
    whose condition waits: it polls the flag, as a waiting loop's own condition would."""
    edits = []
    for k in range(first, last):
        if tokens[k].text != "if" or k + 1 >= last or tokens[k + 1].text != "(":
            continue
        close = _matching(tokens, k + 1)
        then = close + 1 + (close + 1 < last and tokens[close + 1].text == "{")
        if then < last and tokens[then].text in ("break", "return") and waits(k + 2, close):
            edits.append((tokens[k + 1].start, tokens[k + 1].end, f"(__cc_spin_point({tokens[k].line}) && __cc_polled(("))
            edits.append((tokens[close].start, tokens[close].end, ")))"))
    return edits


def _declares_template_type(tokens: list[Token], close: int, types) -> bool:
    """Whether tokens[close], a `>`, ends a declaration's template type: `__shared__ Acc<float> acc[64];`."""
    depth = 0
    for q in range(close, max(close - 64, 1), -1):
        depth += {">": 1, ">>": 2, "<": -1}.get(tokens[q].text, 0)
        if tokens[q].text in (";", "{", "}"):
            return False
        if depth == 0:
            first = q - 1  # (a qualified name, `cuda::std::array<float, 64> s`, of any template)
            while first >= 2 and tokens[first - 1].text == "::" and tokens[first - 2].kind == "ident":
                first -= 2
            return (tokens[q - 1].text in types or first < q - 1) and (first < 1 or tokens[first - 1].text in (
                ";", "{", "}", "(", ",", "__shared__", "static", "const", "volatile", "constexpr"))
    return False


# Alignment specifiers and attributes among a declaration's type words (skipped when finding its name)
_ALIGNMENT_WORDS = {"__align__", "alignas", "__attribute__", "__declspec"}


def _declaration_name(tokens: list[Token], i: int, b: int, types=None) -> int:
    """Where the type words starting at tokens[i] end (`__shared__ float tile[...]` → at `tile`): each
    word an identifier, a template's arguments after a known type included (`__shared__ Acc<float> acc[64]`;
    `types` None: any name may take them)."""
    j = i
    while j + 1 < b and tokens[j].kind == "ident":
        if tokens[j].text in _ALIGNMENT_WORDS and tokens[j + 1].text == "(":  # `__shared__ __align__(16) float s[64]`
            close = _matching(tokens, j + 1)
            if close + 1 >= b or tokens[close + 1].kind != "ident":
                break
            j = close + 1
        elif tokens[j + 1].kind == "ident":
            j += 1
        elif (last := _qualified_last(tokens, j, b)) > j:
            j = last  # a qualified type, `ns::Point pts[4]`, `cuda::std::array<float, 64> s`
        elif tokens[j + 1].text == "<" and (types is None or tokens[j].text in types):
            close = _matching_angle(tokens, j + 1)
            if close < 0 or close + 1 >= b or tokens[close + 1].kind != "ident":
                break
            j = close + 1
        else:
            break
    return i if j > i and tokens[j - 1].text == "::" else j  # (`ns::table[k] = v;` declares nothing)


def _shared_scalar_at(tokens: list[Token], i: int, b: int) -> str | None:
    """The name declared by `__shared__ [volatile] <type> name;` at tokens[i] (an arithmetic type, a
    vector type such as float2, a struct, a template parameter), else None."""
    if tokens[i].text != "__shared__":
        return None
    j = i + 1
    while j < b and tokens[j].text == "volatile":
        j += 1
    if j < b and tokens[j].text in ("struct", "union"):  # `__shared__ union { float f[32]; int i[32]; } u;`
        k = j + 1 + (j + 1 < b and tokens[j + 1].kind == "ident")
        if k < b and tokens[k].text == "{":
            close = _matching(tokens, k)
            if close + 2 < b and tokens[close + 1].kind == "ident" and tokens[close + 2].text == ";":
                return tokens[close + 1].text
            return None
    start = j
    # `__shared__ float* buffer;`: a pointer that one thread sets for the others (its reads and writes
    # are checked as a scalar's; `float* a[4];`, an array of pointers, is not this)
    q = j
    while q < b and (tokens[q].text in _TYPE_WORDS or tokens[q].text in ("const", "unsigned", "signed")):
        q += 1
    if q > j and q + 2 < b and tokens[q].text == "*" and tokens[q + 1].kind == "ident" and tokens[q + 2].text == ";":
        return tokens[q + 1].text
    j = _declaration_name(tokens, start, b)  # (`__shared__ Acc<int> count;`: after __shared__ a name is a type)
    depth, words, q = 0, [], start
    while q < j:  # the type's words, without its template arguments and alignment specifiers
        t = tokens[q]
        if t.text in _ALIGNMENT_WORDS and tokens[q + 1].text == "(":
            q = _matching(tokens, q + 1) + 1
            continue
        depth += {"<": 1, ">": -1, ">>": -2}.get(t.text, 0)
        if depth == 0 and t.kind == "ident" and tokens[q + 1].text != "::":  # (`cuda::std::array<float, 64>`)
            words.append(t.text)
        q += 1
    typed = words and (all(w in _TYPE_WORDS for w in words)
                       or (words[-1] not in _NOT_DECLARATION and all(w in _TYPE_WORDS for w in words[:-1])))
    if (j + 1 < b and typed and tokens[j].kind == "ident"
            and tokens[j].text not in _TYPE_WORDS and tokens[j + 1].text == ";"):
        return tokens[j].text
    return None


def _declarator_end(tokens: list[Token], i: int, b: int) -> int:
    """Index of the `;` or `,` that ends the declarator (or its initializer) at tokens[i]."""
    depth = 0
    while i < b and not (depth == 0 and tokens[i].text in (";", ",")):
        depth += tokens[i].kind == "punct" and tokens[i].text in "([{"
        depth -= tokens[i].kind == "punct" and tokens[i].text in ")]}"
        i += 1
    return i


def _declares(tokens: list[Token], i: int, a: int, types: set) -> bool:
    """Whether tokens[i], after a comma, is in a declaration (`float* p = x, *e = y`): the comma's
    statement (or `for (` clause) starts with a type."""
    depth, k = 0, i - 1
    while k > a:
        text = tokens[k].text
        if text in (")", "]", "}"):
            depth += 1
        elif text in ("(", "[", "{"):
            if depth == 0:
                break
            depth -= 1
        elif text == ";" and depth == 0:
            break
        k -= 1
    first = k + 1
    while first < i and tokens[first].text in ("const", "volatile", "static", "__shared__", "unsigned", "signed"):
        first += 1
    return first < i and tokens[first].text in types and first + 1 < i and tokens[first + 1].text in ("*", "&") \
        or first + 1 < i and tokens[first].text in types and tokens[first + 1].kind == "ident"


def _reference_cast(tokens: list[Token], i: int, b: int, types: set) -> tuple[int, int, int] | None:
    """A C-style cast to a reference at tokens[i], `(float4&)s[4 * i]` or `(const int2&)(p[k])`: its `)`,
    and where its operand (a name with subscripts and members, or a parenthesized one) starts and ends."""
    close = _matching(tokens, i)
    if close <= i + 2 or close + 1 >= b or tokens[close - 1].text not in ("&", "&&"):
        return None
    inside = tokens[i + 1:close - 1]
    if not all(t.kind == "ident" or t.text in ("::", "<", ">", ",") for t in inside) \
            or not any(t.text in types or t.text in _TYPE_WORDS for t in inside):
        return None
    operand = close + 1
    if tokens[operand].kind == "ident" and tokens[operand].text not in _TYPE_WORDS:
        end = _postfix_chain(tokens, operand, b)
        return None if end < b and tokens[end].text == "(" else (close, operand, end)
    if tokens[operand].text == "(":
        return close, operand, _postfix_chain(tokens, _matching(tokens, operand), b)
    return None


def _inside_parentheses(tokens: list[Token], start: int, end: int) -> tuple[int, int]:
    """`((s[i]))` → where `s[i]` starts and ends."""
    while end - start > 2 and tokens[start].text == "(" and _matching(tokens, start) == end - 1:
        start, end = start + 1, end - 1
    return start, end


def _postfix_chain(tokens: list[Token], i: int, b: int, calls=frozenset(), pointers=frozenset()) -> int:
    """End (exclusive) of `name[...][...].x->y` starting at tokens[i] (a qualified name `ns::table[i]`
    whole), through calls of functions that return a reference (`m.at(i).x`, `at(i)`, `ns::at<float>(i)`:
    `calls`) and of those that return a pointer where the call is subscripted or followed by `->`
    (`row(r)[c]`, `g.row(r)[c]`: `pointers`)."""
    j = i + 1
    while j + 1 < b and tokens[j].text == "::" and tokens[j + 1].kind == "ident":
        j += 2
    j = _past_call(tokens, j, b, calls, pointers)
    while j < b:
        if tokens[j].text == "[":
            j = _matching(tokens, j) + 1
        elif tokens[j].text in (".", "->") and j + 1 < b and tokens[j + 1].kind == "ident":
            j = _past_call(tokens, j + 2, b, calls, pointers)
        else:
            break
    return j


def _checked_lambda_parameters(tokens: list[Token], a: int, b: int, replace) -> None:
    """A lambda's pointer parameters, `[](float* p, int i) { p[i] = v; }`, become checked pointers, as a __device__
    function's do (they stayed raw: a store past the array through p went unchecked); `auto* p` and `const auto* p`
    become `auto p`, which deduces the checked pointer it is given (a checked pointer is no T*)."""
    for _, open_, close, _ in _lambdas(tokens, a, b):
        for part in _split_commas(tokens[open_ + 1:close]):
            words = [t.text for t in part]
            if "(" in words or "&" in words or "&&" in words or "[" in words or words.count("*") != 1 \
                    or "=" in words or part[-1].kind != "ident" or words[-2] != "*" or words[0] == "void":
                continue
            element = " ".join(w for w in words[:-2] if w not in ("__restrict__", "__restrict"))
            if not element or not all(t.kind == "ident" or t.text == "::" for t in part[:-2]):
                continue
            name = part[-1].text
            if element.split()[-1] == "auto":
                replace(part[0].start, part[-1].end, f"auto {name}")
            elif element.split()[-1] != "void":
                replace(part[0].start, part[-1].end, f"__cc_ptr<{element}> {name}")


def _reference_lambdas(tokens: list[Token], a: int, b: int) -> list[tuple[str, int, int]]:
    """(name, `{`, `}`) of each lambda in tokens a..b that is named and returns a reference:
    `auto at = [&](int k) -> float& { return s[k]; };`."""
    found = []
    for i, _, _, arrow in _lambdas(tokens, a, b):
        if i < a + 3 or tokens[i - 1].text != "=" or tokens[i - 2].kind != "ident" \
                or tokens[i - 3].text not in ("auto", "const") or tokens[arrow].text != "->":
            continue
        k = arrow
        while k < b and tokens[k].text not in ("{", ";"):
            k += 1
        if k < b and tokens[k].text == "{" and tokens[k - 1].text in ("&", "&&"):
            found.append((tokens[i - 2].text, k, _matching(tokens, k)))
    return found


def _lambdas(tokens: list[Token], a: int, b: int, bare: bool = False):
    """(`[`, `(`, `)`, and the `{` or `->` after the parameters and their specifiers) of each lambda in tokens
    a..b that has a parameter list: `[&](float* p, int i) mutable { ... }`; with `bare`, also of each one
    without (`[=] { ... }`: its `(` and `)` are -1)."""
    for j in range(a + 1, b):
        prev = tokens[j - 1]
        if tokens[j].text != "[" or prev.kind == "ident" and prev.text != "return" or prev.text in ("]", ")", "["):
            continue
        open_ = _matching(tokens, j) + 1
        if bare and open_ < b and tokens[open_].text == "{":
            yield j, -1, -1, open_
        if open_ >= b or tokens[open_].text != "(":
            continue
        close = _matching(tokens, open_)
        after = close + 1
        while after < b and tokens[after].text in ("mutable", "constexpr", "noexcept", "__device__", "__host__"):
            after += 1
        if after < b and tokens[after].text in ("{", "->"):
            yield j, open_, close, after


def _objects_of(tokens: list[Token], f, types: set) -> set[str]:
    """The names function f declares (parameters and locals: `Grid g{s, 8};`, `const Grid& g`) of the types."""
    if not types:
        return set()
    names = {raw.name for raw in f.raws if raw.name and raw.words and raw.words[-1] in types}
    a, b = f.body
    for i in range(a + 1, b - 1):
        if tokens[i].text in types and tokens[i - 1].text not in (".", "->", "::", "struct"):
            k = i + 1
            while k < b and tokens[k].text in ("&", "&&", "*", "const"):
                k += 1
            if k < b and tokens[k].kind == "ident" and tokens[k + 1].text in ("{", "(", "=", ";", ","):
                names.add(tokens[k].text)
    return names


def _past_call(tokens: list[Token], j: int, b: int, calls, pointers) -> int:
    """For _postfix_chain, j just past a name: past that name's call (template arguments and all) where the
    name is one of `calls`, or one of `pointers` and the call is followed by `[` or `->`; else j."""
    name = tokens[j - 1].text
    if name not in calls and name not in pointers:
        return j
    k = j
    if k < b and tokens[k].text == "<":  # `f<float>(p)[i]`: a template's call
        angle = _matching_angle(tokens, k)
        if k < angle < b - 1 and tokens[angle + 1].text == "(":
            k = angle + 1
    if k < b and tokens[k].text == "(":
        close = _matching(tokens, k)
        if name in calls or close + 1 < b and tokens[close + 1].text in ("[", "->"):
            return close + 1
    return j


def _range_for(tokens: list[Token], colon: int) -> int | None:
    """The `)` of the range-based for loop whose `:` is tokens[colon], or None."""
    depth, k = 0, colon - 1
    while k > 0 and not (tokens[k].text == "(" and depth == 0):
        depth += tokens[k].text in (")", "]", "}") or 0
        depth -= tokens[k].text in ("[", "{") or 0
        if tokens[k].text in (";", "{", "}", "?") and depth <= 0:
            return None
        k -= 1
    if k <= 0 or tokens[k - 1].text != "for":
        return None
    return _matching(tokens, k)


def _reference_uses(tokens: list[Token], f: _Function, references: dict, types: set, calls=frozenset()):
    """Names that are references in `f` (its `float& dst` parameters, its `float& x = s[i];`
    locals), the tokens that declare them, and the first tokens of the elements that a reference
    is bound to (at its declaration, or by a call to a function with a reference parameter):
    binding reads nothing; the reference's own uses are noted instead."""
    a, b = f.body
    names = {raw.name for raw in f.raws if raw.reference and raw.name}
    declaring, bound = set(), set()

    def one_chain(first: int, last: int) -> bool:  # tokens[first:last] is one `s[i].x` or `*p`
        if first >= last:
            return False
        if tokens[first].text == "*" and first + 1 < last and tokens[first + 1].kind == "ident" \
                and tokens[first + 1].text not in _CASTS:
            return _postfix_chain(tokens, first + 1, b) == last
        if tokens[first].text == "*" and first + 2 < last and tokens[first + 1].text in _CASTS \
                and tokens[first + 2].text == "<":
            # `auto& st = *reinterpret_cast<Storage*>(smem);` (CUTLASS's shared storage): the object the cast points at
            angle = _matching_angle(tokens, first + 2)
            if 0 < angle < last - 1 and tokens[angle + 1].text == "(":
                return _postfix_chain(tokens, _matching(tokens, angle + 1), b) == last
            return False
        if tokens[first].text == "*" and first + 1 < last and tokens[first + 1].text == "(":
            # `*(Storage*)smem`, `*(p + 1)`: the object at that address
            close = _matching(tokens, first + 1)
            if close + 1 < last and tokens[close + 1].kind == "ident":
                return _postfix_chain(tokens, close + 1, b) == last
            return close + 1 == last
        if tokens[first].text in _CASTS and first + 1 < last and tokens[first + 1].text == "<":
            # `float4& r = reinterpret_cast<float4*>(s)[t];`: the element of the cast pointer
            angle = _matching_angle(tokens, first + 1)
            if 0 < angle < last - 1 and tokens[angle + 1].text == "(":
                close = _matching(tokens, angle + 1)
                return close + 1 < last and tokens[close + 1].text in ("[", "->") and _postfix_chain(tokens, close, b) == last
        return tokens[first].kind == "ident" and _postfix_chain(tokens, first, b, calls) == last

    # A lambda's reference parameters, `auto set = [](float& v, float x) { v = x; };`, are references
    # too, and a call `set(s[t], t)` binds the element, as a __device__ function's call does.
    references = dict(references)
    # A type alias of a class whose constructor takes references, `using Load = cub::BlockLoad<int, 128>;`
    # (or `typedef ... Load;`): `Load(temp_storage.load)` is that constructor.
    for i, tok in enumerate(tokens[:-3]):
        if tok.text == "using" and tokens[i + 1].kind == "ident" and tokens[i + 2].text == "=":
            alias, k = tokens[i + 1].text, i + 3
        elif tok.text == "typedef":
            alias, k = None, i + 1
        else:
            continue
        end = k
        while end < len(tokens) and tokens[end].text != ";":
            end += 1
        if alias is None:
            if end - 1 <= k or tokens[end - 1].kind != "ident":
                continue
            alias = tokens[end - 1].text
        named = next((tokens[q].text for q in range(k, end) if tokens[q].kind == "ident" and tokens[q].text in references
                      and (q + 1 >= end or tokens[q + 1].text in ("<", ";")) and tokens[q].text != alias), None)
        if named and alias not in references:
            references[alias] = references[named]
    for i, open_, params_end, _ in _lambdas(tokens, a, b):
        if tokens[i - 1].text not in ("=", "(", ",", "return"):
            continue
        position, depth, k = 0, 0, open_ + 1
        while k < params_end:
            depth += {"(": 1, "<": 1, "[": 1, ")": -1, ">": -1, "]": -1}.get(tokens[k].text, 0)
            if tokens[k].text == "," and depth == 0:
                position += 1
            elif tokens[k].kind == "ident" and tokens[k - 1].text == "&" and tokens[k + 1].text in (",", ")"):
                names.add(tokens[k].text)
                declaring.add(k)
                if tokens[i - 1].text == "=" and tokens[i - 2].kind == "ident":
                    references.setdefault(tokens[i - 2].text, set()).add(position)
            k += 1
    for i in range(a + 1, b - 2):
        tok = tokens[i]
        if tok.text == "&" and tokens[i + 1].kind == "ident" and tokens[i + 2].text == ":" \
                and _range_for(tokens, i + 2):  # for (float& v : s): v's uses are the accesses
            names.add(tokens[i + 1].text)
            declaring.add(i + 1)
        elif tokens[i + 1].text == "[" \
                and (tok.text == "auto" or tok.text in ("&", "&&") and tokens[i - 1].text == "auto"):
            # `auto& [x, y] = ps[t];`: x and y name the element's members, their uses are the accesses (a binding
            # by value, `auto [x, y] = ...`, declares copies: its names are no accesses where they are declared)
            close = _matching(tokens, i + 1)
            if close + 1 < b and tokens[close + 1].text in ("=", ":"):
                for k in range(i + 2, close):
                    if tokens[k].kind == "ident":
                        declaring.add(k)
                        if tok.text != "auto":
                            names.add(tokens[k].text)
                if tok.text != "auto" and tokens[close + 1].text == "=" \
                        and one_chain(close + 2, _declarator_end(tokens, close + 2, b)):
                    bound.add(close + 2)
        elif tok.text == "&" and tokens[i + 1].kind == "ident" and tokens[i + 2].text == "=":
            if _declared_type(tokens, i, a, types) is not None:
                names.add(tokens[i + 1].text)
                declaring.add(i + 1)
                if one_chain(i + 3, _declarator_end(tokens, i + 3, b)):
                    bound.add(i + 3)
        elif tok.kind == "ident" and (tok.text in references or tok.text == "atomic_ref") \
                and tokens[i + 1].text in ("(", "<"):
            # f(...), obj.f(...), and a template's: `f<4>(...)`, the constructor `BL<4>(t)`; and
            # libcu++'s `cuda::atomic_ref<int, scope> r(x[i]);` (or a temporary), which binds x[i]
            open_ = i + 1
            if tokens[open_].text == "<":
                angle = _matching_angle(tokens, open_)
                if angle >= 0 and tok.text == "atomic_ref" and angle + 2 < b and tokens[angle + 1].kind == "ident" \
                        and tokens[angle + 2].text in ("(", "{"):
                    angle += 1  # the declaration `atomic_ref<int> r(x[i])`: its variable's name
                if angle < 0 or angle + 1 >= b or tokens[angle + 1].text not in ("(", "{"):
                    continue
                open_ = angle + 1
            if tokens[open_].text == "{":
                close_brace = _matching(tokens, open_)
                inner = (open_ + 1, close_brace)
                if tok.text == "atomic_ref" and one_chain(*inner):
                    bound.add(inner[0])
                continue
            found = _call_arguments(tokens, open_)
            if found is None:
                continue
            parts, _ = found
            for position in references.get(tok.text, {0}):
                if position < len(parts) and one_chain(*parts[position]):
                    bound.add(parts[position][0])
    return names, declaring, bound


def _conditional_branches(tokens: list[Token], first: int, last: int) -> list[tuple[int, int]]:
    """The two branches (token ranges) of `c ? x : y` when tokens[first:last] is one conditional
    expression at its top level, else []."""
    depth, question, colon, nested = 0, None, None, 0
    for k in range(first, last):
        text = tokens[k].text
        depth += (text in ("(", "[", "{")) - (text in (")", "]", "}"))
        if depth or text not in ("?", ":", ",", "="):
            continue
        if text in (",", "="):
            return []  # `a, b` or an assignment at the top level: not one conditional
        if text == "?":
            if question is None:
                question = k
            else:
                nested += 1
        elif question is not None:
            if nested:
                nested -= 1
            elif colon is None:
                colon = k
    if question is None or colon is None or question == first or colon + 1 >= last:
        return []
    return [(question + 1, colon), (colon + 1, last)]


def _unary_star(tokens: list[Token], i: int) -> bool:
    """Whether the `*` at tokens[i] dereferences (`*p`, `= *rows[i]`), not multiplies."""
    prev = tokens[i - 1]
    return prev.text in _UNARY_BEFORE and prev.kind in ("punct", "ident") or prev.text in ("else", "do") or \
        _after_header(tokens, i)


def _note_accesses(tokens: list[Token], f: _Function, replace, references: dict, types: set,
                   named_scalars: set = frozenset(), calls: set = frozenset(), members: set = frozenset(),
                   methods: set = frozenset(), bit_fields: set = frozenset(), pointing: set = frozenset(),
                   functors: set = frozenset(), pointer_variables: set = frozenset(),
                   collectives: set = frozenset(), pointer_members: set = frozenset()) -> None:
    """Wrap each memory access of a body: `s[i]` → `__cc_r(s[i])`, `s[i] = v` → `__cc_w(s[i]) = v`,
    `s[i] += v` → `__cc_rw(s[i]) += v`, and the same for `*p`, `p->x`, the uses of a reference
    (`dst = v` → `__cc_w(dst) = v`) and of a __device__ variable or file-scope __shared__ one that
    is not an array (`total += x`, `st.count = 0`: `named_scalars`). The wrappers cost nothing in a
    plain build and feed the sanitizer in a sanitized one. `pointer_variables`: the source's __shared__ and
    __device__ pointers (_pointer_variables); `collectives`: the names of CUB's collectives, whose storage
    argument is no access; `pointer_members`: the names of the source's structs' pointer members."""
    a, b = f.body
    scalars = {name for i in range(a + 1, b) if (name := _shared_scalar_at(tokens, i, b))}  # __shared__ int n;
    scalars |= named_scalars
    # those of them declared as pointers (`__shared__ float* buffer;`, `__device__ float* g;`), not structs
    # with an operator[] (`__shared__ cuda::std::array<float, 64> s;`, whose s[t] reads one element)
    pointer_scalars = scalars & pointer_variables
    # Lambdas that return a reference (`auto at = [&](int k) -> float& { return s[k]; };`) and objects of a
    # struct whose operator() does (`Grid g{s, 8};`, a `Grid g` parameter): a call, `at(t) = v`, `g(r, c)`, is
    # the access, as of a function returning a reference; the lambda's `return s[k];` is only an address
    lambdas = _reference_lambdas(tokens, a, b)
    calls = set(calls) | {name for name, _, _ in lambdas} | _objects_of(tokens, f, functors)
    refs, declaring, bound = _reference_uses(tokens, f, references, types, calls)
    quiet = set()  # inside assert(...): its text is the message, keep it as written
    stores = set()  # the `=` of each `__cc_w(...) = ...`
    addresses = {}  # accesses that are only addresses, start → end

    def only_address(first: int, last: int) -> None:
        """tokens[first:last] (in parentheses, perhaps), when it is one access `s[i].x`, `*p` or
        `*(p + k)`, is an address: the operand of a reference cast, what `float& at(int i)` returns."""
        first, last = _inside_parentheses(tokens, first, last)
        star = tokens[first].text == "*"
        if first + star < last and tokens[first + star].kind == "ident" \
                and _postfix_chain(tokens, first + star, b, calls) == last \
                or star and tokens[first + 1].text == "(" and _matching(tokens, first + 1) == last - 1:
            addresses[first] = last
        elif tokens[first].text in _CASTS and first + 1 < last and tokens[first + 1].text == "<":
            # `return reinterpret_cast<float4*>(d)[i];` of a function returning float4&: the element's address
            angle = _matching_angle(tokens, first + 1)
            if 0 < angle < last - 1 and tokens[angle + 1].text == "(":
                close = _matching(tokens, angle + 1)
                if close + 1 < last and tokens[close + 1].text in ("[", "->") and _postfix_chain(tokens, close, b) == last:
                    addresses[first] = last

    returned = [(a, b)] if f.returns_reference else []  # `return data[i];` of `float& at(int i)`: the caller's
    for first, last in returned + [(x, y) for _, x, y in lambdas]:  # use is the access
        for i in range(first + 1, last):
            if tokens[i].text == "return":
                end = i + 1
                while end < b and tokens[end].text != ";":
                    end = _matching(tokens, end) + 1 if tokens[end].text in ("(", "[") else end + 1
                only_address(i + 1, end)
    for i in range(a + 1, b):  # (and inside decltype(...), which evaluates nothing: `decltype(m[0]) row = m[1];`)
        if tokens[i].text in ("assert", "decltype") and i + 1 < b and tokens[i + 1].text == "(":
            quiet.update(range(i, _matching(tokens, i + 1) + 1))
    for i in range(a + 1, b):
        tok, prev = tokens[i], tokens[i - 1]
        start = end = None
        method = False  # acc[t].add(v): what the method does to the element, its body says
        if i in quiet:
            continue
        # for (float v : s), for (auto [k, v] : ps): each copy is a read
        copied = tok.text == ":" and (
            tokens[i - 1].kind == "ident" and tokens[i - 2].text not in ("&", "&&")
            or tokens[i - 1].text == "]" and tokens[_opening(tokens, i - 1) - 1].text == "auto")
        if copied and tokens[i + 1].text != "{" and (close := _range_for(tokens, i)):
            replace(tokens[i + 1].start, tokens[i + 1].start, "__cc_each(")
            replace(tokens[close - 1].end, tokens[close - 1].end, ")")
            continue
        after_control = _after_header(tokens, i)
        cast = _reference_cast(tokens, i, b, types) if tok.text == "(" and prev.kind != "ident" \
            and prev.text not in (")", "]") else None
        if cast:  # (float4&)s[4 * i]: reinterpret_cast<float4&>(s[4 * i]) (see the reference casts below)
            close, operand, end = cast
            replace(tokens[i].start, tokens[close].end,
                    f"__cc_reinterpret_cast<{' '.join(t.text for t in tokens[i + 1:close])}>(")
            replace(tokens[end - 1].end, tokens[end - 1].end, ")")
            only_address(operand, end)
            start = i
        elif tok.text == "(" and prev.kind != "ident" and (prev.text not in (")", "]", ">") or after_control):
            close = _matching(tokens, i)
            if close + 1 < b and tokens[close + 1].text in ("[", "->"):  # (&tile[0][0])[k], (p + k)->x
                end, start = _postfix_chain(tokens, close, b), i
                if end < b and tokens[end].text == "(" and end - 2 > close and tokens[end - 2].text in (".", "->"):
                    end -= 2  # a method called through the pointer, `(ps + i)->scale(2.0f)`: its body notes the accesses
                    if end == close + 1:
                        continue
            elif close + 1 < b and (tokens[close + 1].text in _ASSIGNMENTS or tokens[close + 1].text in ("++", "--")) \
                    and (branches := _conditional_branches(tokens, i + 1, close)):
                # `(flip ? a[t] : b[t]) = v;`: the store goes to the element the condition picks, and
                # neither branch is read: the group is the access, its branches only addresses
                for first, last in branches:
                    only_address(first, last)
                start, end = i + 1, close
        elif tok.text in _CASTS and i + 1 < b and tokens[i + 1].text == "<":
            # reinterpret_cast<float4*>(&s[i])[0]: the subscript of the cast pointer is the access
            angle = _matching_angle(tokens, i + 1)
            if angle < 0 or angle + 1 >= b or tokens[angle + 1].text != "(":
                continue
            close = _matching(tokens, angle + 1)
            if tokens[angle - 1].text in ("&", "&&"):
                # reinterpret_cast<float4&>(s[i]): an access of the cast's type at the operand's address
                # (runtime.h's reference rule checks it), the operand itself only an address
                only_address(angle + 2, close)
                start, end = i, _postfix_chain(tokens, close, b)
            elif close + 1 >= b or tokens[close + 1].text not in ("[", "->"):
                continue
            else:
                start, end = i, _postfix_chain(tokens, close, b)
                if end < b and tokens[end].text == "(" and end - 2 > close and tokens[end - 2].text in (".", "->"):
                    end -= 2  # a method called through the cast pointer: `static_cast<const S*>(p)->get(v)`
                    if end == close + 1:
                        continue
        elif tok.kind == "ident" and prev.text not in (".", "->", "::") and tok.text not in _TYPE_WORDS \
                and tok.text not in ("delete", "new") and prev.text != "new" \
                and (prev.kind != "ident" or prev.text in _NOT_DECLARATION) \
                and not (prev.text == "}" and tokens[i + 1].text == ";") \
                and not (prev.text == ">" and _declares_template_type(tokens, i - 1, types)) \
                and not (prev.text == "*" and tokens[i - 2].text in types and tokens[i - 3].text in {";", "{", "}"}
                         | _TYPE_WORDS | {"__shared__", "static"}):  # `float* rows[2]` declares
            # (`f(p)[i]`, `f(p)->x`, `g.row(r)[c]` of a function that returns a pointer: `pointing`)
            end = _postfix_chain(tokens, i, b, calls, pointing)
            chain = tokens[i:end]
            last = _qualified_last(tokens, i, end)  # (`ns::count`: the qualified name's last word)
            called = tokens[end - 1].text == ")"  # m.at(i): a function that returns a reference
            if end < b and tokens[end].text == "(" and len(chain) > 1 and chain[-2].text in (".", "->"):
                if chain[-1].text in methods:
                    continue  # acc[t].add(v): the method's body notes what it does to the members
                end -= 2  # a method call: g.sync() — only what comes before it is an access
                chain = tokens[i:end]
                method = True
            # `count`, `acc.sum`, `dst` (a reference), `sum` in a method of the struct that has it
            named = tokens[last].text in scalars or tok.text in refs or called or tok.text in members
            if not (named or any(t.text in ("[", "->") for t in chain)) or (end < b and tokens[end].text == "(") \
                    or i in declaring:
                continue
            start = i
        elif tok.text == "*" and (prev.text == "(" and tokens[i - 2].text in types or prev.text == ","
                                  and _declares(tokens, i, a, types)):
            continue  # `float (*rows)[16] = s;`, `float* p = x, *e = x + n;`: declarators, not accesses
        elif tok.text == "*" and (prev.text == "*" and (tokens[i - 2].text in types or tokens[i - 2].text in _TYPE_WORDS)
                                  or prev.text == "const" and tokens[i - 2].text == "*"
                                  and (tokens[i - 3].text in types or tokens[i - 3].text in _TYPE_WORDS)):
            continue  # `float** pp = &p;`, `float* const* cr = rows;`: declarators
        elif tok.text == "*" and _unary_star(tokens, i) and i + 1 < b:
            nxt = tokens[i + 1]
            if nxt.text == "(":
                end = _matching(tokens, i + 1) + 1
                if tokens[end - 2].text == "*":  # *(float4*)&s[i], *(float4*)p: the cast's operand follows
                    operand = end + (end < b and tokens[end].text == "&")
                    if operand < b and tokens[operand].text == "(":
                        end = _matching(tokens, operand) + 1
                        while end < b and (tokens[end].kind in ("number", "ident") or tokens[end].text == "("):
                            # `*(int*)(size_t)16`: that group was a cast too; its operand follows
                            end = (_matching(tokens, end) + 1 if tokens[end].text == "("
                                   else _postfix_chain(tokens, end, b) if tokens[end].kind == "ident" else end + 1)
                    elif operand < b and tokens[operand].kind == "ident":
                        end = _postfix_chain(tokens, operand, b)
                        if end < b and tokens[end].text == "(":
                            continue
                    else:
                        continue
            elif nxt.text in _CASTS and i + 2 < b and tokens[i + 2].text == "<":
                angle = _matching_angle(tokens, i + 2)  # *reinterpret_cast<const int4*>(p + k)
                if angle < 0 or angle + 1 >= b or tokens[angle + 1].text != "(":
                    continue
                end = _postfix_chain(tokens, _matching(tokens, angle + 1), b)
            elif nxt.kind == "ident" and nxt.text not in _TYPE_WORDS:
                last = _qualified_last(tokens, i + 1, b)  # (`*ns::p`, `*ns::f(p)`: the qualified name's last word)
                # (`*f(p)` of a function that returns a pointer: what it points to)
                name = tokens[last].text
                end = _postfix_chain(tokens, last, b, {name} if name in pointing else ())
                if end < b and _past_call(tokens, end, b, {tokens[end - 1].text}, ()) > end:
                    continue  # a call of another function, `*g(p)`, `*g<float>(p)` (its template's too)
            else:
                continue
            if end < b and tokens[end].text in ("++", "--"):
                end += 1
            start = i
        if start is None or start in bound or addresses.get(start) == end:
            continue
        # Look through parentheses around the access: (s[i]) = v, &(s[i]), (*(float4*)p) = v.
        # (Not the parentheses of a call or a cast, `f(s[i])`, `(int)(s[i])`; those after a statement's
        # keyword or an if/for/while header are: `if (c) (*count)++;`, `return (*p)++;`.)
        left, right = start - 1, end
        while left > a and right < b and tokens[left].text == "(" and tokens[right].text == ")" \
                and _matching(tokens, left) == right and (
                    tokens[left - 1].kind != "ident" and tokens[left - 1].text not in (")", "]", ">")
                    or tokens[left - 1].text in ("else", "return", "do", "case") or _after_header(tokens, left)):
            left, right = left - 1, right + 1
        before, after = tokens[left], tokens[right] if right < b else tokens[b]
        if _address_operator(tokens, left):
            continue  # &s[i]: an address, not an access (atomics note their own)
        if method:
            wrapper = "__cc_touch"  # (an element a method works on: no read, no hazard, written from now on)
        elif before.text == "*" and start > left and _unary_star(tokens, left):
            wrapper = "__cc_r"  # `*rows[i] = v`: rows[i] is read; the store is through it (the `*` access)
        elif before.text in ("++", "--") or after.text in ("++", "--"):
            wrapper = "__cc_rw"
        elif after.text in _ASSIGNMENTS:
            wrapper = "__cc_w" if after.text == "=" else "__cc_rw"
            if after.text == "=":
                stores.add(right)
        elif before.text == "=" and left in stores and after.text == ";":
            wrapper = "__cc_rc"  # `s[i] = t[j];`: t[j] is copied, not used (runtime.h's __cc_copy)
        else:
            wrapper = "__cc_r"
        if tokens[end - 1].text in bit_fields and not method and (
                end - start == 1 and tokens[start].text in members
                or end - start > 2 and tokens[end - 2].text in (".", "->")):
            # A bit-field has no address of its own: the access is to the element that holds it
            # (`__cc_r(f[i]).id`, `__cc_r(*p).id`, `__cc_r(*this).id` in a method), and a store into
            # it rewrites that element's storage (a write: two threads storing bit-fields of one
            # element race, on a GPU one store can undo the other).
            wrapper = {"__cc_w": "__cc_wbits", "__cc_rc": "__cc_r"}.get(wrapper, wrapper)
            if end - start == 1:
                replace(tokens[start].start, tokens[start].start, wrapper + "(*this).")
            elif tokens[end - 2].text == "->":
                replace(tokens[start].start, tokens[start].start, wrapper + "(*")
                replace(tokens[end - 2].start, tokens[end - 2].end, ").")
            else:
                replace(tokens[start].start, tokens[start].start, wrapper + "(")
                replace(tokens[end - 3].end, tokens[end - 3].end, ")")
            continue
        if start >= 2 and tokens[start - 1].text == "(" and end < b and tokens[end].text == ")" and (
                tokens[start - 2].text in collectives or tokens[start - 2].text == ">" and any(
                    tokens[q].text == "cub" for q in range(max(a, start - 16), start))):
            continue  # `BlockReduce(temp)`, `WarpReduce(temp[warp])`: CUB's storage, bound to a reference
        pointer = start + (tokens[start].text == "*" and end == start + 2)  # `buffer[t]`, `buffer->x`, `*buffer`
        read_first = tokens[pointer].text in pointer_scalars and tokens[pointer].kind == "ident" and (
            pointer > start or start + 1 < end and tokens[start + 1].text in ("[", "->"))
        if read_first:
            # (of `__shared__ float* buffer;`, or a __device__ pointer): the pointer itself is read first, a hazard
            # with the thread that sets it (`if (t == 0) buffer = a;`) where no barrier is between them. (One
            # text where the access's wrapper starts too: texts put at one place are sorted, not kept in order.)
            replace(tokens[pointer].start, tokens[pointer].start,
                    (wrapper + "(" if pointer == start else "") + "__cc_r(")
            replace(tokens[pointer].end, tokens[pointer].end, ")")
        # `v.p[i]`, `v.p->x` of a __shared__ (or __device__) struct v: its pointer member is read first (`*v.p` is
        # a use of v.p, noted as one)
        member_first = not read_first and start + 3 < end and tokens[start].kind == "ident" \
            and tokens[start].text in scalars and tokens[start + 1].text == "." \
            and tokens[start + 2].text in pointer_members and tokens[start + 3].text in ("[", "->")
        if member_first:
            replace(tokens[start].start, tokens[start].start, wrapper + "(__cc_r(")
            replace(tokens[start + 2].end, tokens[start + 2].end, ")")
        if not (read_first or member_first) or pointer > start:
            replace(tokens[start].start, tokens[start].start, wrapper + "(")
        replace(tokens[end - 1].end, tokens[end - 1].end, ")")
