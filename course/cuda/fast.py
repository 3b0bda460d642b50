"""The fast path of a barrier-free kernel: blocks proved in bounds run without memcheck's checks.

Memcheck checks every access of every thread, and a check is a branch: the compiler then runs a
block's threads one by one, each a scalar pass through the kernel. Most of the course's kernels
index their arrays with arithmetic on the built-ins and the scalar arguments (`c[i]` with
`i = blockIdx.x * blockDim.x + threadIdx.x`, a stencil's `in[(y + dy) * w + (x + dx)]`), and
for those the range of every index over a whole block can be worked out before the block runs:
interval arithmetic over the block's threads and the loops' ranges. Where every index of a block
lies inside its array, no access of that block can fault, and the block runs as a loop over its
threads that has no checks in it (which the compiler vectorises); every other block runs the
checked thread loop, which reports the fault as before. Nothing is guessed: a kernel outside the
class this module understands, or a block it cannot prove, takes the checked path.

The class (`fast_path` returns None for anything else): an extern "C" kernel without barriers,
templates, shared memory, __device__/__constant__ variables or calls other than math functions;
parameters that are numbers or pointers to numbers; a body of declarations of numbers,
assignments, `if`/`else`, `for` loops that count a variable up or down to a bound, `return`,
`break` and `continue`. Every index must be made of integers the block knows (the built-ins,
integer arguments, integer constants and integer variables that are never assigned again): an
index read from memory (`a[idx[i]]`) keeps the kernel on the checked path.

Exactness: integer expressions made of those (the "pure" ones) are computed in the fast code with
signed types (int for 32-bit types, long long for 64-bit ones), which the compiler can vectorise;
the block's proof also checks that each of them stays inside its C type as the source computes it
(no unsigned wrap, no overflow, no negative value converted to unsigned, no division by zero), so
it has the same value both ways; where such a value meets the kernel's other values it is cast to
its source type. The kernel may contain nothing that the checked build stops at besides an
access (a float converted to an integer, an integer division outside pure expressions, a shift
by a variable count): a fast block cannot fault. `if` conditions that are pure have one outcome for
the whole block where the proof finds one; the first three such are template parameters of the
block's loop, so that a block where they are decided has no branch left (`if (i < n)`, a
stencil's border test).

A worker proves the blocks that follow in its chunk's row of the grid together where it can (a span: one proof
with blockIdx.x a range, the span's rows of threads run in turn, so that a 16-wide block's short rows continue
in memory), and one by one where a span's guards are not decided for all its blocks (the border's).

Where it runs: the launchers compile it in under -D__CC_FAST_PATH=1 only, which cpu.load(fast=True) sets: a
second module that a launch of cpu.FAST_PATH_THREADS threads or more uses (kernel.py), so that the small
launches of exercises and tests pay no second compile. A sanitized build never has it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .source import Kernel, Source, Token, tokenize


class _Reject(Exception):
    """The kernel is outside the class: it takes the checked path (the reason, for tests)."""


# C types: canonical keys, their range as the source computes them, and the fast type.
_INTS = ("int", "uint", "ll", "ull", "bool")
_FLOATS = ("float", "double")
_RANGE = {"int": (-(1 << 31), (1 << 31) - 1), "uint": (0, (1 << 32) - 1), "ll": (-(1 << 63), (1 << 63) - 1),
          "ull": (0, (1 << 64) - 1), "bool": (0, 1)}
_WIDE = {"int": False, "uint": False, "ll": True, "ull": True, "bool": False}
_SPELLED = {"int": "int", "uint": "unsigned", "ll": "long", "ull": "unsigned long", "bool": "bool",
            "float": "float", "double": "double"}
_CODE = {"int": 0, "uint": 1, "ll": 2, "ull": 3, "bool": 4}  # runtime.h's __cc_iv_fits
_TYPE_NAMES = {
    ("int",): "int", ("signed",): "int", ("signed", "int"): "int", ("int32_t",): "int",
    ("unsigned",): "uint", ("unsigned", "int"): "uint", ("uint32_t",): "uint", ("uint",): "uint",
    ("long",): "ll", ("long", "int"): "ll", ("long", "long"): "ll", ("long", "long", "int"): "ll",
    ("int64_t",): "ll", ("ptrdiff_t",): "ll", ("signed", "long"): "ll", ("signed", "long", "long"): "ll",
    ("unsigned", "long"): "ull", ("unsigned", "long", "int"): "ull", ("unsigned", "long", "long"): "ull",
    ("unsigned", "long", "long", "int"): "ull", ("size_t",): "ull", ("uint64_t",): "ull",
    ("float",): "float", ("double",): "double", ("bool",): "bool",
    # 1- and 2-byte integers: values only (promoted to int), never an index the proof computes
    ("char",): "small", ("signed", "char"): "small", ("unsigned", "char"): "small", ("short",): "small",
    ("short", "int"): "small", ("unsigned", "short"): "small", ("unsigned", "short", "int"): "small",
    ("signed", "short"): "small", ("int8_t",): "small", ("uint8_t",): "small", ("int16_t",): "small",
    ("uint16_t",): "small",
}
_TYPE_WORDS = {w for key in _TYPE_NAMES for w in key}
_DTYPES = {"int32": "int", "uint32": "uint", "int64": "ll", "uint64": "ull", "float32": "float",
           "float64": "double", "bool": "bool"}
# Arrays may hold 1- and 2-byte integers too (pixels): a loaded one is promoted to int, as in C.
_ELEMENTS = {**_DTYPES, "int8": "int", "uint8": "int", "int16": "int", "uint16": "int"}

# Math functions a fast body may call (the same runtime.h functions as the checked body's): none of them
# touches memory or stops a kernel. The `f` ones return float; the others the type of their arguments.
_FLOAT_FUNCTIONS = {
    "sqrtf", "rsqrtf", "cbrtf", "expf", "exp2f", "exp10f", "expm1f", "logf", "log2f", "log10f", "log1pf", "sinf",
    "cosf", "tanf", "asinf", "acosf", "atanf", "atan2f", "sinhf", "coshf", "tanhf", "fabsf", "fminf", "fmaxf",
    "powf", "floorf", "ceilf", "roundf", "truncf", "rintf", "fmaf", "fdividef", "__expf", "__logf", "__sinf",
    "__cosf", "__powf", "__fdividef", "__fmul_rn", "__fadd_rn", "__fsqrt_rn", "erff", "erfcf", "hypotf",
    "copysignf", "fmodf", "__saturatef", "__frcp_rn", "__fdiv_rn", "__fmaf_rn", "__tanf", "__log2f", "__exp10f",
}
_GENERIC_FUNCTIONS = {
    "sqrt", "rsqrt", "cbrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan",
    "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "fabs", "fmin", "fmax", "pow", "floor", "ceil",
    "round", "trunc", "rint", "fma", "erf", "erfc", "hypot", "copysign", "fmod",
}
_BUILT_INS = {"threadIdx": "t", "blockIdx": "b", "blockDim": "bd", "gridDim": "gd"}
_ASSIGN = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="}
_BINARY = [("||",), ("&&",), ("|",), ("^",), ("&",), ("==", "!="), ("<", "<=", ">", ">="), ("<<", ">>"),
           ("+", "-"), ("*", "/", "%")]
_TEMPLATED_GUARDS = 3


@dataclass(eq=False)
class _Var:
    name: str
    type: str
    spelled: str
    assigned: bool = False
    loop: bool = False  # a `for` loop's counter (assigned by its header only)
    tracked: bool = False  # pure: an integer the block knows (set by _Analysis)
    slot: str = ""  # its interval's C++ name in the proof


@dataclass(eq=False)
class _Node:
    kind: str  # num, var, param, builtin, load, call, cast, unary, binary, cond
    line: int
    args: list = field(default_factory=list)
    op: str = ""
    value: object = None  # num: (int or text); var: _Var; param: Param; builtin: (name, axis); load: Param
    type: str = ""
    pure: bool = False
    slot: str = ""  # its interval's C++ name in the proof (pure nodes)


@dataclass(eq=False)
class _Stmt:
    kind: str  # decl, assign, store, incdec, if, for, return, break, continue, block
    line: int
    var: _Var | None = None
    target: _Node | None = None  # assign/store/incdec: a var node or a load node
    op: str = ""
    expr: _Node | None = None
    body: list = field(default_factory=list)
    orelse: list = field(default_factory=list)
    # for: init (a decl), the bound and the step (nodes), the comparison, up or down
    bound: _Node | None = None
    step: _Node | None = None
    guard: int = -1  # an if with a pure condition: its guard number


def fast_path(source: Source, kernel: Kernel, index: int) -> str | None:
    """C++ for `kernel`'s fast path (namespace __cc_fast_<index>: its `__cc_block` function runs the current
    block, and the blocks after it in its row where it can, without checks, and says how many it ran, 0 where
    it cannot prove the block in bounds), or None where the kernel is outside the class."""
    code, _ = _generated(source, kernel)
    return code and code.replace("namespace __cc_fast_INDEX {", f"namespace __cc_fast_{index} {{", 1)


def reason(source: Source, kernel: Kernel) -> str | None:
    """Why `kernel` takes the checked path always (None: it has a fast path)."""
    return _generated(source, kernel)[1]


_GENERATED: dict = {}  # (source text, its CPU text, kernel) -> (code or None, why not)


def _generated(source: Source, kernel: Kernel) -> tuple[str | None, str | None]:
    """The fast path's code (with __cc_fast_INDEX for its namespace), or why there is none: made once per source
    and kernel (a large launch asks whether there is one, and the launchers ask for the code)."""
    key = (source.text, source.cpu_text, kernel)
    if key not in _GENERATED:
        try:
            _GENERATED[key] = (_Generator(source, kernel).code(), None)
        except Exception as e:  # (_Reject, or a construct this module does not know: the checked path, as ever)
            _GENERATED[key] = (None, str(e) or type(e).__name__)
    return _GENERATED[key]


def _body_tokens(source: Source, kernel: Kernel) -> list[Token]:
    if kernel.uses_barriers or (kernel.call and kernel.call != kernel.name) or "::" in (kernel.call or kernel.name) \
            or source.globals or source.dynamic_shared or kernel.name in source.problems:
        raise _Reject("barriers, templates, a namespace, shared memory or __device__ variables")
    everything = tokenize(source.cpu_text)
    tokens = [t for t in everything if t.kind != "pp"]
    for i, t in enumerate(tokens):
        if t.text == kernel.name and i >= 2 and tokens[i - 1].text in ("void", ")") and i + 1 < len(tokens) \
                and tokens[i + 1].text == "(" and any(x.text == "__global__" for x in tokens[max(0, i - 12):i]):
            j = _closing(tokens, i + 1, "(", ")")
            if j + 1 >= len(tokens) or tokens[j + 1].text != "{":
                continue
            if any(x.text in ("volatile", "__grid_constant__") for x in tokens[i:j]):
                raise _Reject("volatile parameter")  # (its accesses are steps of their own: __cc_in_step)
            k = _closing(tokens, j + 1, "{", "}")
            if k >= len(tokens):
                break
            start, end = tokens[j + 1].start, tokens[k].end
            if any(t.kind == "pp" and start < t.start < end and not re.match(r"#\s*pragma\b", t.text) for t in everything):
                raise _Reject("a preprocessor directive in the body")  # (the text holds every #if branch)
            return _unwrapped(tokens[j + 2:k])
    raise _Reject("kernel definition not found")


def _closing(tokens: list[Token], i: int, opening: str, closing: str) -> int:
    """The index of the token that closes tokens[i] (an `opening`), or len(tokens)."""
    depth = 0
    for k in range(i, len(tokens)):
        depth += 1 if tokens[k].text == opening else -1 if tokens[k].text == closing else 0
        if depth == 0:
            return k
    return len(tokens)


def _unwrapped(tokens: list[Token]) -> list[Token]:
    """The body without source.py's access notes (`__cc_r(x[i])` is `x[i]` in a plain build)."""
    out, closers, depth = [], [], 0
    i = 0
    while i < len(tokens):
        t = tokens[i]
        if t.text in ("__cc_r", "__cc_w", "__cc_rw", "__cc_rc") and i + 1 < len(tokens) and tokens[i + 1].text == "(":
            closers.append(depth)
            depth += 1
            i += 2
            continue
        if t.text == "(":
            depth += 1
        elif t.text == ")":
            depth -= 1
            if closers and closers[-1] == depth:
                closers.pop()
                i += 1
                continue
        out.append(t)
        i += 1
    return out


def _int_literal(text: str) -> tuple[int, str]:
    match = re.fullmatch(r"(0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)([uUlL]*)", text.replace("'", ""))
    if not match:
        raise _Reject(f"number {text}")
    digits, suffix = match.groups()
    value = int(digits, 0) if not re.fullmatch(r"0[0-7]+", digits) else int(digits, 8)
    unsigned, longs = "u" in suffix.lower(), suffix.lower().count("l")
    decimal = not digits.startswith("0") or digits == "0"
    if longs:
        candidates = ["ull"] if unsigned else (["ll"] if decimal else ["ll", "ull"])
    else:
        candidates = ["uint", "ull"] if unsigned else (["int", "ll"] if decimal else ["int", "uint", "ll", "ull"])
    for c in candidates:
        if _RANGE[c][0] <= value <= _RANGE[c][1]:
            return value, c
    raise _Reject(f"number {text}")


class _Parser:
    def __init__(self, tokens: list[Token], kernel: Kernel, constants: dict, text: str = ""):
        self.t, self.i, self.text = tokens, 0, text
        self.kernel_line = kernel.line
        self.macros: set = set()  # the integer macros used (the fast code checks their type)
        self.float_macros: set = set()
        self.params = {p.name: p for p in kernel.params}
        self.constants = constants
        self.scopes: list[dict] = [{}]
        self.vars: list[_Var] = []

    def macro_before(self, name: str) -> bool:
        """Whether macro `name` has one definition, before the kernel (or comes from the options): the fast code
        stands after every kernel, and reads it as the kernel does only then."""
        found = list(re.finditer(rf"^[ \t]*#[ \t]*(?:define|undef)[ \t]+{re.escape(name)}\b", self.text, re.M))
        return len(found) <= 1 and (not found or self.text.count("\n", 0, found[0].start()) + 1 < self.kernel_line)

    def integer_macro(self, name: str, depth: int = 0) -> bool:
        """Whether macro `name` reads as an int constant expression: int literals and such macros."""
        words = tokenize(self.constants.get(name, "").strip())
        if not words or depth > 8:
            return False
        for t in words:
            if t.kind == "number":
                if not re.fullmatch(r"0[xX][0-9a-fA-F]+|[0-9]+", t.text) or _int_literal(t.text)[1] != "int":
                    return False
            elif t.kind == "ident":
                if t.text == name or t.text not in self.constants or not self.macro_before(t.text) \
                        or not self.integer_macro(t.text, depth + 1):
                    return False
            elif t.text not in ("(", ")", "+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^", "~"):
                return False
        return True

    # tokens
    def peek(self, k: int = 0) -> str:
        return self.t[self.i + k].text if self.i + k < len(self.t) else ""

    def line(self) -> int:
        return self.t[min(self.i, len(self.t) - 1)].line if self.t else 0

    def take(self, text: str | None = None) -> Token:
        if self.i >= len(self.t):
            raise _Reject("unexpected end")
        tok = self.t[self.i]
        if text is not None and tok.text != text:
            raise _Reject(f"expected {text}, found {tok.text}")
        self.i += 1
        return tok

    def lookup(self, name: str) -> _Var | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    # types
    def type_at(self) -> tuple[str, str, int] | None:
        """(key, spelling, tokens) of a type name at the cursor (after `const`), or None."""
        k = self.i
        while self.peek(k - self.i) == "const":
            k += 1
        words = []
        while k < len(self.t) and self.t[k].text in _TYPE_WORDS:
            words.append(self.t[k].text)
            k += 1
        if not words:
            return None
        key = _TYPE_NAMES.get(tuple(words))
        if key is None:
            raise _Reject(f"type {' '.join(words)}")
        while k < len(self.t) and self.t[k].text == "const":
            k += 1
        return key, " ".join(words), k - self.i

    # statements
    def statements(self) -> list[_Stmt]:
        out = []
        while self.i < len(self.t):
            out += self.statement()
        return out

    def block(self) -> list[_Stmt]:
        if self.peek() == "{":
            self.take("{")
            self.scopes.append({})
            out = []
            while self.peek() != "}":
                out += self.statement()
            self.take("}")
            self.scopes.pop()
            return out
        self.scopes.append({})
        out = self.statement()
        self.scopes.pop()
        return out

    def statement(self) -> list[_Stmt]:
        word, line = self.peek(), self.line()
        if word == ";":
            self.take()
            return []
        if word == "{":
            return [_Stmt("block", line, body=self.block())]
        if word == "if":
            self.take()
            self.take("(")
            cond = self.expr()
            self.take(")")
            body = self.block()
            orelse = []
            if self.peek() == "else":
                self.take()
                orelse = self.block()
            return [_Stmt("if", line, expr=cond, body=body, orelse=orelse)]
        if word == "for":
            return [self.for_loop()]
        if word in ("return", "break", "continue"):
            self.take()
            self.take(";")
            return [_Stmt(word, line)]
        if self.type_at():
            out = self.declaration()
            self.take(";")
            return out
        out = self.simple()
        self.take(";")
        return [out]

    def declaration(self) -> list[_Stmt]:
        key, spelled, count = self.type_at()
        self.i += count
        out = []
        while True:
            line = self.line()
            name = self.take().text
            if not re.fullmatch(r"[A-Za-z_]\w*", name) or name in self.scopes[-1] or name in _TYPE_WORDS \
                    or name in self.params and len(self.scopes) == 1 or name in _BUILT_INS or name.startswith("__cc_"):
                raise _Reject(f"declaration of {name}")
            if self.peek() != "=":
                raise _Reject(f"{name} declared without a value")
            self.take("=")
            value = self.expr()
            var = _Var(name, key, spelled)
            self.vars.append(var)
            self.scopes[-1][name] = var
            out.append(_Stmt("decl", line, var=var, expr=value))
            if self.peek() != ",":
                return out
            self.take(",")

    def simple(self) -> _Stmt:
        line = self.line()
        if self.peek() in ("++", "--"):
            op = self.take().text
            target = self.lvalue()
            return _Stmt("incdec", line, target=target, op=op)
        target = self.lvalue()
        if self.peek() in ("++", "--"):
            return _Stmt("incdec", line, target=target, op=self.take().text)
        op = self.take().text
        if op not in _ASSIGN:
            raise _Reject(f"statement with {op}")
        value = self.expr()
        return _Stmt("store" if target.kind == "load" else "assign", line, target=target, op=op, expr=value)

    def lvalue(self) -> _Node:
        line = self.line()
        name = self.take().text
        var = self.lookup(name)
        if var is not None and self.peek() != "[":
            var.assigned = True
            return _Node("var", line, value=var)
        param = self.params.get(name)
        if param is not None and param.pointer and self.peek() == "[":
            if param.const:
                raise _Reject("store through a const pointer")
            self.take("[")
            index = self.expr()
            self.take("]")
            return _Node("load", line, [index], value=param)
        raise _Reject(f"assignment to {name}")

    def address(self):
        """`&p[e]`, `p + e` or `(p + e)` (source.py writes `&p[e]` so) of a pointer parameter p: (p, e)."""
        wrapped = self.peek() == "(" and self.peek(2) == "+"
        if wrapped:
            self.take("(")
        if self.peek() == "&":
            self.take("&")
            param = self.params.get(self.take().text)
            self.take("[")
            index = self.expr()
            self.take("]")
        else:
            param = self.params.get(self.take().text)
            self.take("+")
            index = self.expr()
        if wrapped:
            self.take(")")
        if param is None or not param.pointer:
            raise _Reject("address of something other than an array parameter's element")
        return param, index

    def for_loop(self) -> _Stmt:
        line = self.line()
        self.take("for")
        self.take("(")
        self.scopes.append({})
        if not self.type_at():
            raise _Reject("for loop without its own counter")
        init = self.declaration()
        if len(init) != 1:
            raise _Reject("for loop declaring several variables")
        var = init[0].var
        self.take(";")
        if self.take().text != var.name:
            raise _Reject("for loop condition")
        compare = self.take().text
        if compare not in ("<", "<=", ">", ">="):
            raise _Reject(f"for loop condition {compare}")
        bound = self.expr()
        self.take(";")
        if self.peek() in ("++", "--"):
            op = self.take().text
            if self.take().text != var.name:
                raise _Reject("for loop step")
            step = _Node("num", line, value=1, type="int")
        else:
            if self.take().text != var.name:
                raise _Reject("for loop step")
            op = self.take().text
            if op in ("++", "--"):
                step = _Node("num", line, value=1, type="int")
            elif op in ("+=", "-="):
                step = self.expr()
            else:
                raise _Reject(f"for loop step {op}")
        self.take(")")
        up = op in ("++", "+=")
        if up != (compare in ("<", "<=")):
            raise _Reject("for loop that counts away from its bound")
        body = self.block()
        self.scopes.pop()
        if var.assigned:
            raise _Reject("for loop counter assigned in its body")
        var.loop = True
        return _Stmt("for", line, var=var, expr=init[0].expr, bound=bound, step=step, op=compare, body=body)

    # expressions
    def expr(self) -> _Node:
        cond = self.binary(0)
        if self.peek() == "?":
            line = self.line()
            self.take("?")
            a = self.expr()
            self.take(":")
            b = self.expr()
            return _Node("cond", line, [cond, a, b])
        return cond

    def binary(self, level: int) -> _Node:
        if level == len(_BINARY):
            return self.unary()
        left = self.binary(level + 1)
        while self.peek() in _BINARY[level]:
            line = self.line()
            op = self.take().text
            right = self.binary(level + 1)
            left = _Node("binary", line, [left, right], op=op)
        return left

    def unary(self) -> _Node:
        word, line = self.peek(), self.line()
        if word in ("-", "+", "!", "~"):
            self.take()
            return _Node("unary", line, [self.unary()], op=word)
        if word == "(":
            saved = self.i
            self.take("(")
            found = self.type_at()
            if found:
                self.i += found[2]
                if self.peek() == ")":
                    self.take(")")
                    return _Node("cast", line, [self.unary()], value=found[0], op=found[1])
            self.i = saved
        if word in ("static_cast", "__cc_static_cast"):  # (source.py's name for it in the text compiled)
            self.take()
            self.take("<")
            found = self.type_at()
            if not found:
                raise _Reject("static_cast")
            self.i += found[2]
            self.take(">")
            self.take("(")
            inner = self.expr()
            self.take(")")
            return _Node("cast", line, [inner], value=found[0], op=found[1])
        return self.postfix()

    def postfix(self) -> _Node:
        tok = self.take()
        line = tok.line
        if tok.text == "(":
            inner = self.expr()
            self.take(")")
            return inner
        if tok.kind == "number":
            text = tok.text.replace("'", "")
            if re.fullmatch(r"0[xX][0-9a-fA-F]+[uUlL]*|[0-9]+[uUlL]*", text):
                value, key = _int_literal(text)
                return _Node("num", line, value=value, type=key)
            if re.fullmatch(r"(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?[fF]?", text) and not text.isdigit():
                return _Node("num", line, value=text, type="float" if text[-1] in "fF" else "double")
            raise _Reject(f"number {text}")
        if tok.kind != "ident":
            raise _Reject(f"token {tok.text}")
        name = tok.text
        if name in _BUILT_INS:
            self.take(".")
            axis = self.take().text
            if axis not in ("x", "y", "z"):
                raise _Reject(f"{name}.{axis}")
            return _Node("builtin", line, value=(_BUILT_INS[name], axis), type="uint")
        if name == "warpSize" and self.lookup(name) is None and name not in self.params:
            return _Node("num", line, value=32, type="int")
        if name in ("true", "false"):
            return _Node("num", line, value=int(name == "true"), type="bool")
        if name == "__ldg" and self.peek() == "(":  # (the read-only cache's load is a load)
            self.take("(")
            param, index = self.address()
            self.take(")")
            return _Node("load", line, [index], value=param)
        if self.peek() == "(":
            if name not in _FLOAT_FUNCTIONS and name not in _GENERIC_FUNCTIONS and name not in ("min", "max", "abs"):
                raise _Reject(f"call of {name}")
            if self.lookup(name) or name in self.params or re.search(
                    rf"(?:\b(?:__device__|__forceinline__|inline|static)\b|\btemplate\b[^;{{}}]*>)[^;{{}}]*\b{name}\s*\(|"
                    rf"#[ \t]*define[ \t]+{name}\b", self.text):
                raise _Reject(f"call of {name}, which the source defines")  # (not CUDA's function, then)
            self.take("(")
            args = []
            while self.peek() != ")":
                args.append(self.expr())
                if self.peek() == ",":
                    self.take(",")
            self.take(")")
            return _Node("call", line, args, value=name)
        var = self.lookup(name)
        if var is not None:
            if self.peek() in ("[", "++", "--", "."):
                raise _Reject(f"{name}{self.peek()}")
            return _Node("var", line, value=var)
        param = self.params.get(name)
        if param is not None:
            if param.pointer:
                if self.peek() != "[":
                    raise _Reject(f"pointer {name} used whole")
                self.take("[")
                index = self.expr()
                self.take("]")
                if self.peek() in ("[", ".", "++", "--"):
                    raise _Reject(f"{name}[...]{self.peek()}")
                return _Node("load", line, [index], value=param)
            if self.peek() in ("[", "++", "--", "."):
                raise _Reject(f"{name}{self.peek()}")
            return _Node("param", line, value=param, type=_DTYPES[param.dtype])
        if name in self.constants:
            text = self.constants[name].strip()
            if not self.macro_before(name):
                raise _Reject(f"macro {name} defined twice, or after the kernel")
            if self.integer_macro(name):  # (the fast code asserts that it is an int, and one number)
                self.macros.add(name)
                return _Node("num", line, value=0, type="int", op=name)
            if re.fullmatch(r"(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?[fF]?", text) and not text.isdigit():
                self.float_macros.add(name)
                return _Node("num", line, value=text, type="float" if text[-1] in "fF" else "double", op=name)
        raise _Reject(f"name {name}")


def _common(a: str, b: str) -> str:
    """C's usual arithmetic conversions (LP64)."""
    if "double" in (a, b):
        return "double"
    if "float" in (a, b):
        return "float"
    a, b = _promoted(a), _promoted(b)
    if "ull" in (a, b):
        return "ull"
    if "ll" in (a, b):
        return "ll"
    if "uint" in (a, b):
        return "uint"
    return "int"


def _fast_type(a: str) -> str:
    """The C type the fast code computes a pure integer of type `a` in."""
    return "long long" if _WIDE.get(a) else "int"


def _promoted(a: str) -> str:
    return "int" if a in ("bool", "small") else a


class _Generator:
    def __init__(self, source: Source, kernel: Kernel):
        self.source, self.kernel = source, kernel
        for p in kernel.params:
            if p.dtype not in (_ELEMENTS if p.pointer else _DTYPES) or p.lanes != 1 or p.rows or p.by_value_struct:
                raise _Reject(f"parameter {p.name}")
        tokens = _body_tokens(source, kernel)
        constants = {k: v for k, v in source.constants.items() if not k.startswith("__")}
        parser = _Parser(tokens, kernel, constants, source.text)
        self.macros, self.float_macros = parser.macros, parser.float_macros
        self.body = parser.statements()
        self.slots = 0
        self.guards = 0
        self.proof: list[str] = []
        self.vars = parser.vars
        # The body has an operation the checked build stops at besides an access (a float converted to an
        # integer, an integer division or a shift by values from memory): the fast loop keeps threadIdx
        # up to date, so that such a stop names its thread.
        self.stops = False
        self.fitted: set = set()  # (slot, type) pairs the proof has checked
        self.narrowed: dict = {}  # threadIdx's axes narrowed by a condition: their slots

    # typing and purity (in statement order: a variable's init before its uses)
    def typed(self, node: _Node) -> _Node:
        for a in node.args:
            self.typed(a)
        k = node.kind
        if k == "num":
            node.pure = node.type in _INTS
        elif k == "var":
            node.type, node.pure = node.value.type, node.value.tracked
        elif k == "param":
            node.pure = node.type in _INTS
        elif k == "builtin":
            node.pure = True
        elif k == "load":
            index = node.args[0]
            if not index.pure:
                raise _Reject("index not made of the block's integers")
            node.type = _ELEMENTS[node.value.dtype]
        elif k == "call":
            name, args = node.value, node.args
            if name == "abs":
                if len(args) != 1 or args[0].type not in ("int", "ll", "float", "double"):
                    raise _Reject("abs")
                node.type, node.pure = args[0].type, args[0].pure
            elif name in ("min", "max"):
                if len(args) != 2:
                    raise _Reject(f"{name} of {len(args)}")
                a, b = args
                if a.pure and b.pure:
                    if a.type != b.type:
                        raise _Reject(f"{name} of two integer types")
                    node.type, node.pure = _promoted(a.type), True
                else:
                    node.type = _common(a.type, b.type)
                    if node.type not in _FLOATS:
                        raise _Reject(f"{name} of integers from memory")
            else:
                if any(a.type not in _FLOATS and a.type not in _INTS for a in args):
                    raise _Reject(f"call of {name}")
                if name in _FLOAT_FUNCTIONS:
                    node.type = "float"
                else:
                    node.type = "double" if any(a.type == "double" or a.type in _INTS for a in args) else "float"
        elif k == "cast":
            inner = node.args[0]
            node.type = node.value
            self.check_conversion(node.type, inner)
            node.pure = inner.pure and node.type in _INTS
        elif k == "unary":
            a = node.args[0]
            if node.op == "!":
                node.type, node.pure = "int", a.pure
            else:
                node.type = _promoted(a.type)
                if node.op == "~" and (a.type in _FLOATS or (a.pure and node.type in ("uint", "ull"))):
                    raise _Reject("~ of an unsigned")
                node.pure = a.pure
        elif k == "binary":
            a, b = node.args
            op = node.op
            if op in ("&&", "||"):
                node.type, node.pure = "int", a.pure and b.pure
            elif op in ("<<", ">>"):
                if a.type in _FLOATS or b.type in _FLOATS:
                    raise _Reject("shift of a float")
                node.type, node.pure = _promoted(a.type), a.pure and b.pure
                if not node.pure:
                    self.stops = True  # (a shift by a count from memory: UBSan's shift-exponent check)
            else:
                common = _common(a.type, b.type)
                node.type = "int" if op in ("==", "!=", "<", "<=", ">", ">=") else common
                node.pure = a.pure and b.pure
                if op in ("%", "&", "|", "^") and common in _FLOATS:
                    raise _Reject(f"{op} of floats")
                if op in ("/", "%") and common in _INTS and not node.pure:
                    self.stops = True  # (integer-divide-by-zero)
                node.operand_type = common
        elif k == "cond":
            c, a, b = node.args
            node.type = _common(a.type, b.type) if a.type != b.type else a.type
            node.pure = c.pure and a.pure and b.pure
        if node.type == "":
            raise _Reject(f"type of {k}")
        return node

    def check_conversion(self, to: str, node: _Node) -> None:
        if (to in _INTS or to == "small") and to != "bool" and node.type in _FLOATS:
            self.stops = True  # (a float converted to an integer: float-cast-overflow)

    def analyse(self, stmts: list[_Stmt]) -> None:
        for s in stmts:
            k = s.kind
            if k == "decl":
                self.typed(s.expr)
                self.check_conversion(s.var.type, s.expr)
                s.var.tracked = s.var.type in _INTS and not s.var.assigned and s.expr.pure
            elif k in ("assign", "store"):
                if s.target.kind == "load":
                    self.typed(s.target)
                self.typed(s.expr)
                target_type = s.target.value.type if s.target.kind == "var" else _ELEMENTS[s.target.value.dtype]
                if s.op in ("%=", "&=", "|=", "^=", "<<=", ">>=") and (target_type in _FLOATS or s.expr.type in _FLOATS):
                    raise _Reject(f"{s.op} of floats")
                if s.op in ("<<=", ">>=") or s.op in ("/=", "%=") and target_type not in _FLOATS \
                        and s.expr.type not in _FLOATS:
                    self.stops = True
                if s.op != "=" and target_type not in _FLOATS and s.expr.type in _FLOATS:
                    self.stops = True  # (`k += 0.5f` converts the float sum back to an integer)
                self.check_conversion(target_type, s.expr)
            elif k == "incdec":
                if s.target.kind == "load":
                    self.typed(s.target)
            elif k == "if":
                self.typed(s.expr)
                if s.expr.pure:
                    s.guard = self.guards
                    self.guards += 1
                self.analyse(s.body)
                self.analyse(s.orelse)
            elif k == "for":
                self.typed(s.expr)
                self.check_conversion(s.var.type, s.expr)
                self.typed(s.bound)
                self.typed(s.step)
                if not (s.var.type in _INTS and s.var.type != "bool" and s.expr.pure and s.bound.pure and s.step.pure):
                    raise _Reject("for loop over values from memory")
                s.var.tracked = True
                self.analyse(s.body)
            elif k == "block":
                self.analyse(s.body)

    # the proof: C++ that computes every pure node's interval for the current block
    def slot(self) -> str:
        self.slots += 1
        return f"__cc_v{self.slots}"

    def fits(self, slot: str, type_: str) -> None:
        if (slot, type_) not in self.fitted:  # (once per value and type: the proof runs for every block)
            self.fitted.add((slot, type_))
            self.proof.append(f"    if (!__cc_iv_fits({slot}, {_CODE[type_]})) return false;")

    def interval(self, node: _Node) -> str:
        """The slot of pure `node`'s interval (emitting its computation and checks)."""
        k = node.kind
        if k == "var":  # (a variable's interval is computed once, where it is declared or narrowed)
            node.slot = node.value.slot
            return node.slot
        if k == "builtin" and node.value[0] == "t" and node.value[1] in self.narrowed:
            node.slot = self.narrowed[node.value[1]]
            return node.slot
        s = self.slot()
        node.slot = s
        line = f"    const __cc_iv {s} = "
        if k == "num":
            if node.op:  # a macro: its value where the fast code stands (a -D option or an #ifndef's default)
                self.proof.append(line + f"{{(__int128)__cc_fast_m_{node.op}, (__int128)__cc_fast_m_{node.op}}};")
            else:
                self.proof.append(line + f"{{(__int128){node.value}ll, (__int128){node.value}ll}};" if node.value >= 0
                                  else line + f"{{-(__int128){-node.value}ull, -(__int128){-node.value}ull}};")
            self.fits(s, node.type)  # (an unsigned literal past INT_MAX: no int in the fast code holds it)
            return s
        if k == "param":
            self.proof.append(line + f"{{(__int128){node.value.name}, (__int128){node.value.name}}};")
            self.fits(s, node.type)
            return s
        if k == "builtin":
            kind, axis = node.value
            value = {"t": f"{{0, (__int128)__cc_bd.{axis} - 1}}",
                     "b": f"{{(__int128)__cc_b.{axis}, (__int128)__cc_b.{axis}{' + __cc_extra' if axis == 'x' else ''}}}",
                     "bd": f"{{(__int128)__cc_bd.{axis}, (__int128)__cc_bd.{axis}}}",
                     "gd": f"{{(__int128)__cc_gd.{axis}, (__int128)__cc_gd.{axis}}}"}[kind]
            self.proof.append(line + value + ";")
            self.fits(s, "uint")
            return s
        args = [self.interval(a) for a in node.args]
        if k == "cast":
            self.proof.append(line + (f"__cc_iv_truth({args[0]});" if node.type == "bool" else f"{args[0]};"))
        elif k == "unary":
            op = node.op
            if op == "!":
                self.proof.append(line + f"__cc_iv_not({args[0]});")
            else:
                self.fits(args[0], node.type)
                self.proof.append(line + {"-": f"__cc_iv_neg({args[0]});", "+": f"{args[0]};",
                                          "~": f"__cc_iv_bnot({args[0]});"}[op])
        elif k == "call":
            self.proof.append(line + f"__cc_iv_{node.value}({', '.join(args)});")
        elif k == "cond":
            c, a, b = args
            self.fits(a, node.type)
            self.fits(b, node.type)
            self.proof.append(line + f"__cc_iv_select({c}, {a}, {b});")
        elif k == "binary":
            op, (a, b) = node.op, args
            if op in ("&&", "||"):
                self.proof.append(line + f"__cc_iv_{'and' if op == '&&' else 'or'}({a}, {b});")
            elif op in ("<<", ">>"):
                self.fits(a, node.type)
                width = 64 if _WIDE[node.type] else 32
                self.proof.append(line + f"__cc_iv_shift({a}, {b}, {width}, {int(op == '<<')}, __cc_ok);")
                self.proof.append("    if (!__cc_ok) return false;")
            else:
                common = node.operand_type
                self.fits(a, common)
                self.fits(b, common)
                names = {"+": "add", "-": "sub", "*": "mul", "/": "div", "%": "mod", "&": "band", "|": "bor",
                         "^": "bor", "<": "lt", "<=": "le", ">": "gt", ">=": "ge", "==": "eq", "!=": "ne"}
                if op in ("/", "%", "&", "|", "^"):
                    self.proof.append(line + f"__cc_iv_{names[op]}({a}, {b}, __cc_ok);")
                    self.proof.append("    if (!__cc_ok) return false;")
                else:
                    self.proof.append(line + f"__cc_iv_{names[op]}({a}, {b});")
        self.fits(s, node.type)
        return s

    def prove(self, stmts: list[_Stmt]) -> None:
        """The proof's lines for `stmts`: every index inside its array, every pure node inside its type.
        What a condition tells about a variable holds where the condition does: inside an `if`, and after
        an `if (...) return;` (or continue, break) for the rest of the statements (the statements' scope)."""
        saved = self.scope()
        for st in stmts:
            self.statement(st)
        self.restore(saved)

    def scope(self):
        return [v.slot for v in self.vars], dict(self.narrowed)

    def restore(self, saved) -> None:
        for v, slot in zip(self.vars, saved[0]):
            v.slot = slot
        self.narrowed = saved[1]

    def leaves(self, stmts: list[_Stmt]) -> bool:
        """Whether every path through `stmts` ends in a return, a continue or a break."""
        return bool(stmts) and (stmts[-1].kind in ("return", "continue", "break")
                                or stmts[-1].kind == "block" and self.leaves(stmts[-1].body)
                                or stmts[-1].kind == "if" and self.leaves(stmts[-1].body) and self.leaves(stmts[-1].orelse))

    def narrow(self, cond: _Node, truth: bool) -> None:
        """Narrow the intervals of the variables (and threadIdx) that `cond` compares, where it is `truth`."""
        if cond.kind == "unary" and cond.op == "!":
            self.narrow(cond.args[0], not truth)
        elif cond.kind == "binary" and cond.op == ("&&" if truth else "||"):
            self.narrow(cond.args[0], truth)
            self.narrow(cond.args[1], truth)
        elif cond.kind == "binary" and cond.op in ("<", "<=", ">", ">=", "=="):
            op = cond.op if truth else {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!="}[cond.op]
            a, b = cond.args
            self.narrow_one(a, op, b)
            self.narrow_one(b, {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}[op], a)

    def narrow_one(self, x: _Node, op: str, other: _Node) -> None:
        if op == "!=" or not (x.kind == "var" or x.kind == "builtin" and x.value[0] == "t"):
            return
        current = x.value.slot if x.kind == "var" else self.narrowed.get(x.value[1], x.slot)
        lo, hi = f"{current}.lo", f"{current}.hi"
        if op in ("<", "<="):
            hi = f"__cc_min128({hi}, {other.slot}.hi{' - 1' if op == '<' else ''})"
        if op in (">", ">="):
            lo = f"__cc_max128({lo}, {other.slot}.lo{' + 1' if op == '>' else ''})"
        if op == "==":
            lo, hi = f"__cc_max128({lo}, {other.slot}.lo)", f"__cc_min128({hi}, {other.slot}.hi)"
        s = self.slot()
        self.proof.append(f"    const __cc_iv {s} = {{{lo}, {hi}}};")
        if x.kind == "var":
            x.value.slot = s
        else:
            self.narrowed[x.value[1]] = s

    def statement(self, st: _Stmt) -> None:
        """The proof's lines for one statement (see prove)."""
        k = st.kind
        if k == "decl":
            self.walk(st.expr)
            if st.var.tracked:
                st.var.slot = st.expr.slot if st.var.type != "bool" else self.truth(st.expr.slot)
                self.fits(st.var.slot, st.var.type)
        elif k in ("assign", "store", "incdec"):
            if st.target.kind == "load":
                self.walk(st.target)
            if st.expr is not None:
                self.walk(st.expr)
        elif k == "if":
            self.walk(st.expr)
            if st.guard >= 0 and st.guard < _TEMPLATED_GUARDS:
                bit = 1 << st.guard
                s = self.truth(st.expr.slot)
                self.proof.append(f"    if ({s}.lo == {s}.hi) __cc_value |= ({s}.lo != 0 ? {bit}u : 0u);"
                                  f" else __cc_unknown |= {bit}u;")
            if st.guard >= 0:
                saved = self.scope()
                self.narrow(st.expr, True)
                self.prove(st.body)
                self.restore(saved)
                self.narrow(st.expr, False)
                self.prove(st.orelse)
                self.restore(saved)
                if self.leaves(st.body):  # (what follows runs where the condition is false)
                    self.narrow(st.expr, False)
                elif self.leaves(st.orelse):
                    self.narrow(st.expr, True)
            else:
                self.prove(st.body)
                self.prove(st.orelse)
        elif k == "for":
            start, bound, step = self.interval(st.expr), self.interval(st.bound), self.interval(st.step)
            var = st.var
            self.fits(start, var.type)
            self.proof.append(f"    if ({step}.lo < 1) return false;")
            body, tested = self.slot(), self.slot()
            if st.op in ("<", "<="):
                last = f"{bound}.hi" if st.op == "<=" else f"{bound}.hi - 1"
                self.proof.append(f"    const __cc_iv {body} = {{{start}.lo, {last}}};")
                self.proof.append(f"    const __cc_iv {tested} = {{{start}.lo, __cc_max128({start}.hi, {last} + {step}.hi)}};")
            else:
                first = f"{bound}.lo" if st.op == ">=" else f"{bound}.lo + 1"
                self.proof.append(f"    const __cc_iv {body} = {{{first}, {start}.hi}};")
                self.proof.append(f"    const __cc_iv {tested} = {{__cc_min128({start}.lo, {first} - {step}.hi), {start}.hi}};")
            self.fits(tested, var.type)
            # the comparison with the bound, in the types the source compares in
            common = _common(var.type, st.bound.type)
            self.fits(tested, common)
            self.fits(bound, common)
            var.slot = body
            self.prove(st.body)
        elif k == "block":
            self.prove(st.body)

    def truth(self, slot: str) -> str:
        s = self.slot()
        self.proof.append(f"    const __cc_iv {s} = __cc_iv_truth({slot});")
        return s

    def walk(self, node: _Node) -> None:
        """Intervals for the pure parts of `node`, and the bounds check of each load in it."""
        if node.pure:
            self.interval(node)
            return
        for a in node.args:
            self.walk(a)
        if node.kind == "load":
            p = self.kernel.params.index(node.value)
            self.proof.append(f"    if (!__cc_iv_inside({node.args[0].slot}, __cc_a{p})) return false;")

    # the fast body
    def fast(self, node: _Node) -> str:
        """Pure `node` in the fast types (int, long long)."""
        k = node.kind
        ft = _fast_type(node.type)
        if k == "num":
            if node.op:
                return f"(({ft})({node.op}))"
            return f"(({ft}){node.value}ll)" if node.value >= 0 else f"(({ft})(-{-node.value}ll))"
        if k == "var":
            return node.value.name
        if k == "param":
            return f"(({ft}){node.value.name})"
        if k == "builtin":
            kind, axis = node.value
            return f"__cc_{kind}{axis}"
        a = [self.fast(x) for x in node.args]
        if k == "cast":
            return f"((int)({a[0]} != 0))" if node.type == "bool" else f"(({ft}){a[0]})"
        if k == "unary":
            return f"({node.op}{a[0]})"
        if k == "call" and node.value == "abs":
            return f"({a[0]} < 0 ? -{a[0]} : {a[0]})"
        if k == "call":
            return f"({a[0]} {'<' if node.value == 'min' else '>'} {a[1]} ? {a[0]} : {a[1]})"
        if k == "cond":
            return f"({a[0]} ? {a[1]} : {a[2]})"
        return f"({a[0]} {node.op} {a[1]})"

    def value(self, node: _Node) -> str:
        """`node` in the source's types (a pure part cast to its type)."""
        if node.pure:
            return f"(({_SPELLED[node.type]}){self.fast(node)})"
        k = node.kind
        if k == "num":
            return node.op or str(node.value)
        if k == "var":
            return node.value.name
        if k == "param":
            return node.value.name
        if k == "load":
            return f"{node.value.name}[{self.fast(node.args[0])}]"
        a = [self.value(x) for x in node.args]
        here = f'\n#line {node.line} "kernel.cu"\n'  # (what may stop names its own line, in a statement of several)
        if k == "cast":
            return f"({here}({node.op}){a[0]})"
        if k == "unary":
            return f"({node.op}{a[0]})"
        if k == "call":
            return f"{node.value}({', '.join(a)})"
        if k == "cond":
            return f"({a[0]} ? {a[1]} : {a[2]})"
        if node.op in ("/", "%", "<<", ">>"):
            return f"({a[0]}{here}{node.op} {a[1]})"
        return f"({a[0]} {node.op} {a[1]})"

    def emit(self, stmts: list[_Stmt], depth: int) -> list[str]:
        pad = "    " * depth
        out = []
        for st in stmts:
            out.append(f'#line {st.line} "kernel.cu"')
            k = st.kind
            if k == "decl":
                if st.var.tracked:
                    ft = _fast_type(st.var.type)
                    init = f"({self.fast(st.expr)} != 0)" if st.var.type == "bool" else self.fast(st.expr)
                    out.append(f"{pad}const {ft} {st.var.name} = {init};")
                else:
                    init = self.value(st.expr)
                    if st.var.type == "bool":
                        init = f"(bool)({init})"
                    out.append(f"{pad}{st.var.spelled} {st.var.name} = {init};")
            elif k in ("assign", "store"):
                target = self.value(st.target) if st.target.kind == "load" else st.target.value.name
                out.append(f"{pad}{target} {st.op} {self.value(st.expr)};")
            elif k == "incdec":
                target = self.value(st.target) if st.target.kind == "load" else st.target.value.name
                out.append(f"{pad}{st.op}{target};")
            elif k == "if":
                if st.guard >= 0:
                    cond = self.fast(st.expr)
                    if st.guard < _TEMPLATED_GUARDS:
                        bit = 1 << st.guard
                        cond = f"((__CC_K & {bit}u) ? (__CC_V & {bit}u) != 0 : (bool){cond})"
                else:
                    cond = self.value(st.expr)
                out.append(f"{pad}if ({cond}) {{")
                out += self.emit(st.body, depth + 1)
                out.append(f"{pad}}} else {{" if st.orelse else f"{pad}}}")
                if st.orelse:
                    out += self.emit(st.orelse, depth + 1)
                    out.append(f"{pad}}}")
            elif k == "for":
                ft = _fast_type(st.var.type)
                name = st.var.name
                step = "++" if st.op in ("<", "<=") else "--"
                advance = f"{name} {'+=' if step == '++' else '-='} {self.fast(st.step)}"
                out.append(f"{pad}for ({ft} {name} = {self.fast(st.expr)}; {name} {st.op} {self.fast(st.bound)}; {advance}) {{")
                out += self.emit(st.body, depth + 1)
                out.append(f"{pad}}}")
            elif k == "return":
                out.append(f"{pad}goto __cc_next_thread;")
            elif k in ("break", "continue"):
                out.append(f"{pad}{k};")
            elif k == "block":
                out.append(f"{pad}{{")
                out += self.emit(st.body, depth + 1)
                out.append(f"{pad}}}")
        return out

    def code(self) -> str:
        self.analyse(self.body)
        self.prove(self.body)
        if not any(line.startswith("    if (!__cc_iv_inside(") for line in self.proof):
            raise _Reject("no access to prove")
        ns = "__cc_fast_INDEX"  # (fast_path names it)
        params = []
        for p in self.kernel.params:
            cpp = p.cpp_type or p.ctype
            params.append(f"{'const ' if p.const else ''}{cpp}* {p.name}" if p.pointer else f"{cpp} {p.name}")
        dims = ", ".join(["int __cc_bx0", "int __cc_bx1"] + [f"int __cc_{k}{a}" for k in ("b", "bd", "gd") for a in "xyz"
                                                            if (k, a) != ("b", "x")])
        guards = min(self.guards, _TEMPLATED_GUARDS)
        lines = [f"namespace {ns} {{"]
        # The macros it reads as numbers, as the preprocessor sees them where the fast code stands: an int, and
        # one number (a literal, or in parentheses); otherwise every block takes the checked path.
        macros = [f"std::is_same<decltype({name}), int>::value && __cc_primary(__CC_SPELLING({name}))"
                  for name in sorted(self.macros)]
        # (a constant expression: `#define T (10 / 0)` does not compile, and the module is built without the fast
        # path, rather than the proof dividing by zero)
        lines += [f"static constexpr long long __cc_fast_m_{name} = (long long)({name});" for name in sorted(self.macros)]
        macros += [f"__cc_primary(__CC_SPELLING({name}))" for name in sorted(self.float_macros)]
        lines.append(f"static constexpr bool __cc_macros_read = {' && '.join(macros) or 'true'};")
        lines += ["template <unsigned __CC_K, unsigned __CC_V>",
                 # (a function of its own: inlined into the launcher's loop over blocks, GCC vectorises it no more)
                 f"__attribute__((noinline)) static void __cc_run({', '.join(params + [dims])}) {{"]
        lines.append("    (void)__cc_by, (void)__cc_bz;")
        for name in ("bd", "gd"):
            lines.append(f"    (void)__cc_{name}x, (void)__cc_{name}y, (void)__cc_{name}z;")
        # (blocks bx0 to bx1 of one row of the grid, a row of threads of each in turn: a block's rows are short, and
        # the next block's row continues them in memory; the proof covers them all)
        lines += ["    for (int __cc_tz = 0; __cc_tz < __cc_bdz; __cc_tz++)",
                  "        for (int __cc_ty = 0; __cc_ty < __cc_bdy; __cc_ty++)",
                  "        for (int __cc_bx = __cc_bx0; __cc_bx <= __cc_bx1; __cc_bx++)",
                  "            for (int __cc_tx = 0; __cc_tx < __cc_bdx; __cc_tx++) {"]
        if self.stops:
            lines += ["                threadIdx = {(unsigned)__cc_tx, (unsigned)__cc_ty, (unsigned)__cc_tz};"]
        # (the body in the loop itself, a `return` a jump to the next thread: in a lambda, a stop's message would
        # read the body as a function called from the loop)
        lines.append("                {")
        lines += self.emit(self.body, 5)
        lines += ["                }", "            __cc_next_thread:;", "            }", "}"]
        checked = []
        for i, p in enumerate(self.kernel.params):
            cpp = p.cpp_type or p.ctype
            checked.append(f"const __cc_ptr<{cpp}>& __cc_a{i}" if p.pointer  # (as the launcher unpacks it)
                           else f"{cpp} {p.name}")
        lines += [f"static int __cc_try(unsigned __cc_extra, bool __cc_must_know, {', '.join(checked)}) {{",
                  "    const uint3 __cc_b = blockIdx;", "    const dim3 __cc_bd = blockDim, __cc_gd = gridDim;",
                  "    bool __cc_ok = true;", "    unsigned __cc_value = 0, __cc_unknown = 0;",
                  "    if (!__cc_macros_read) return false;"]
        lines += self.proof
        lines.append("    (void)__cc_ok;")
        call_args = [f"__cc_a{i}.p" if p.pointer else p.name for i, p in enumerate(self.kernel.params)]
        call_args += ["(int)__cc_b.x", "(int)(__cc_b.x + __cc_extra)"]
        call_args += [f"(int)__cc_{k}.{a}" for k in ("b", "bd", "gd") for a in "xyz" if (k, a) != ("b", "x")]
        call = ", ".join(call_args)
        lines.append("    if (__cc_unknown && __cc_must_know) return 0;  // (a shorter span may decide them)")
        lines.append(f"    if (__cc_unknown) {{ __cc_run<0u, 0u>({call}); return 1 + (int)__cc_extra; }}")
        lines.append("    switch (__cc_value) {")
        full = (1 << guards) - 1
        for v in range(1 << guards):
            lines.append(f"    case {v}u: __cc_run<{full}u, {v}u>({call}); break;")
        lines += ["    }", "    return 1 + (int)__cc_extra;", "}"]
        # The current block and the `extra` blocks after it in its row (runtime.h's __cc_run_in_loops): how many
        # of them ran, 0 where not even the one is proved. (One at a time where a stop must name its block.)
        names = [f"__cc_a{i}" if p.pointer else p.name for i, p in enumerate(self.kernel.params)]
        # A span is run only where the proof decides its guards for all its blocks (a border block's threads take
        # both ways: it runs alone, the blocks inside the border together); halved until it does, or is one block.
        lines += [f"static int __cc_block(unsigned __cc_extra, {', '.join(checked)}) {{",
                  f"    if ({int(self.stops)}) __cc_extra = 0;",
                  "    for (;; __cc_extra /= 2) {",
                  f"        int __cc_ran = __cc_try(__cc_extra, __cc_extra > 0, {', '.join(names)});",
                  "        if (__cc_ran || !__cc_extra) return __cc_ran;",
                  "    }", "}", "}"]
        return "\n".join(lines) + "\n"
