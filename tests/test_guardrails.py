"""Guard rails for GPU-only code, checked without a GPU: static rules over every notebook and course/.

CI never runs a line that needs a GPU, so the patterns that break there are caught by reading
the code (Python's ast, not regular expressions over text):

1. ``torch.load`` without ``map_location``: a checkpoint saved on a GPU loads back onto the GPU,
   and comparing it with CPU tensors then fails ("Expected all tensors to be on the same device").
2. Deprecated precision switches: ``allow_tf32`` and ``torch.set_float32_matmul_precision`` are the
   legacy TF32 API; PyTorch ≥ 2.9 wants ``torch.backends.cuda.matmul.fp32_precision`` and
   ``torch.backends.cudnn.conv.fp32_precision`` ("tf32" or "ieee"), and mixing the two APIs raises
   ("you have used a mix of the legacy and new APIs"). ``torch.cuda.amp.*`` is deprecated for ``torch.amp.*``.
3. Accuracy targets asserted in gpu mode with no GPU run behind them: an ``assert`` against a
   ``*FLOOR*``/``*TARGET*`` name that can run in gpu mode needs a recorded gpu-mode run of that
   notebook at full size (``docs/gpu-runs/<device>.md``, written by ``make gpu-check``) that
   passed; otherwise the cell must report (``course.checks.check_true``), not assert.
4. ``autocast`` in float16 (written, CUDA's default when no dtype is given, or a name assigned
   float16) in a notebook or module that never chooses by the hardware: bf16 where the GPU has it
   (``course.gpu.amp_dtype(device)``, ``torch.cuda.is_bf16_supported()``), fp16 plus a
   ``GradScaler`` on a T4.
5. Device strings ``course.gpu.parse_device`` rejects ("gpu", "cupy", "CUDA"), given as
   ``device=`` or assigned to a ``*DEVICE`` name — typically in a branch only a GPU takes.

Each rule is one test per notebook (and one for course/), so a failure names the notebook and
the rule; its message gives the cell and line and what to write instead.
"""

from __future__ import annotations

import ast
import json
import re
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
MODULES = sorted((ROOT / "course").rglob("*.py"))
GPU_RUNS = ROOT / "docs" / "gpu-runs"


# ---------------------------------------------------------------- reading code

class Unit:
    """One piece of code: a notebook cell or a module, parsed, with where it comes from."""

    def __init__(self, where: str, source: str):
        self.where, self.source = where, source
        self.tree = ast.parse(source)
        for node in ast.walk(self.tree):  # parents, to find the cell/function/if around a node
            for child in ast.iter_child_nodes(node):
                child.parent = node

    def at(self, node) -> str:
        line = self.source.splitlines()[node.lineno - 1].strip()
        return f"{self.where}, line {node.lineno}: {line[:120]}"


def _python_of_cell(source: str) -> str | None:
    """A code cell as Python: IPython's ``!shell`` and ``%magic`` lines become ``pass``; cell magics are skipped."""
    if source.lstrip().startswith("%%"):
        return None
    lines = []
    for line in source.splitlines():
        stripped = line.lstrip()
        lines.append(line[: len(line) - len(stripped)] + "pass" if stripped.startswith(("!", "%")) else line)
    return "\n".join(lines)


def notebook_units(path: Path) -> list[Unit]:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    units = []
    for index, cell in enumerate(cells):
        if cell["cell_type"] != "code":
            continue
        python = _python_of_cell("".join(cell["source"]))
        if python is not None:
            units.append(Unit(f"{path.name} cell {index}", python))
    return units


def module_units() -> list[Unit]:
    return [Unit(str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")) for path in MODULES]


def dotted(node) -> str:
    """'torch.cuda.amp.autocast' for an attribute chain, '' for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def calls(unit: Unit, *names: str):
    """Calls whose function's dotted name ends with one of ``names`` (``load`` matches ``torch.load``)."""
    for node in ast.walk(unit.tree):
        if isinstance(node, ast.Call):
            name = dotted(node.func)
            if any(name == n or name.endswith("." + n) for n in names):
                yield node, name


TARGETS = [pytest.param(path, id=path.stem) for path in NOTEBOOKS] + [pytest.param(None, id="course")]


def units_of(target) -> list[Unit]:
    return module_units() if target is None else notebook_units(target)


def fail_with(problems: list[str], rule: str):
    if problems:
        pytest.fail(f"{rule}:\n  " + "\n  ".join(problems), pytrace=False)


# ---------------------------------------------------------------- rule 1: torch.load

@pytest.mark.parametrize("target", TARGETS)
def test_torch_load_says_where_tensors_go(target):
    problems = []
    for unit in units_of(target):
        for node, name in calls(unit, "torch.load"):
            if not any(k.arg == "map_location" for k in node.keywords):
                problems.append(unit.at(node))
    fail_with(problems, "torch.load without map_location (write torch.load(path, map_location=\"cpu\" or DEVICE, "
                        "weights_only=True): a checkpoint saved on a GPU otherwise loads onto the GPU)")


# ---------------------------------------------------------------- rule 2: precision switches

DEPRECATED = {
    "allow_tf32": "torch.backends.cuda.matmul.fp32_precision / torch.backends.cudnn.conv.fp32_precision = \"tf32\" or \"ieee\"",
    "set_float32_matmul_precision": "torch.backends.cuda.matmul.fp32_precision = \"tf32\" (or \"ieee\")",
    "get_float32_matmul_precision": "torch.backends.cuda.matmul.fp32_precision",
}


@pytest.mark.parametrize("target", TARGETS)
def test_no_deprecated_precision_switches(target):
    problems = []
    for unit in units_of(target):
        for node in ast.walk(unit.tree):
            if isinstance(node, ast.Attribute) and node.attr in DEPRECATED:
                problems.append(f"{unit.at(node)}  → use {DEPRECATED[node.attr]}")
            elif isinstance(node, ast.Attribute) and dotted(node) in ("torch.cuda.amp.autocast", "torch.cuda.amp.GradScaler"):
                problems.append(f"{unit.at(node)}  → use torch.amp.{node.attr}(\"cuda\", ...)")
    fail_with(problems, "deprecated precision switches (the legacy TF32 API; mixing it with fp32_precision raises)")


# ---------------------------------------------------------------- rule 3: gpu-mode accuracy targets

FLOOR_NAME = re.compile(r"^[A-Z0-9_]*(FLOOR|TARGET)[A-Z0-9_]*$")


def recorded_gpu_runs() -> dict:
    """{notebook stem: [device file, ...]} of full-size gpu-mode runs that passed, from docs/gpu-runs/*.md.

    A record's table rows read ``| notebook | mode | steps | status | seconds |``.
    """
    passed: dict = {}
    for path in sorted(GPU_RUNS.glob("*.md")) if GPU_RUNS.is_dir() else []:
        for line in path.read_text(encoding="utf-8").splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) >= 4 and cells[1] == "gpu" and cells[2] == "full" and cells[3] == "passed":
                passed.setdefault(Path(cells[0]).stem, []).append(path.name)
    return passed


class _GpuMode:
    """Stands in for the names a guard may read, with the values they have in a full gpu-mode run."""

    def __init__(self):
        env = types.SimpleNamespace(mode=lambda: "gpu", max_steps=lambda: None, is_fast=lambda: False,
                                    pick=lambda **sizes: sizes["gpu"])
        self.names = {"course": types.SimpleNamespace(env=env), "env": env, "ON_GPU": True, "GPU": True,
                      "DEVICE": types.SimpleNamespace(type="cuda"), "MODE": "gpu", "True": True, "False": False,
                      "None": None}

    def holds(self, test) -> bool | None:
        """The value of ``test`` in gpu mode, or None when it reads something else."""
        try:
            return bool(eval(compile(ast.Expression(test), "<guard>", "eval"), {"__builtins__": {}}, dict(self.names)))
        except Exception:
            return None


def runs_in_gpu_mode(node) -> bool:
    """False when an enclosing ``if`` (or its ``else``) keeps ``node`` from running in a full gpu-mode run."""
    gpu = _GpuMode()
    child, parent = node, getattr(node, "parent", None)
    while parent is not None:
        if isinstance(parent, ast.If):
            holds = gpu.holds(parent.test)
            if holds is False and child in parent.body or holds is True and child in parent.orelse:
                return False
        child, parent = parent, getattr(parent, "parent", None)
    return True


def floor_asserts(unit: Unit):
    for node in ast.walk(unit.tree):
        if isinstance(node, ast.Assert):
            names = {n.id for n in ast.walk(node.test) if isinstance(n, ast.Name) and FLOOR_NAME.match(n.id)}
            compares = any(isinstance(n, ast.Compare) for n in ast.walk(node.test))
            if names and compares:
                yield node, sorted(names)


@pytest.mark.parametrize("target", [pytest.param(p, id=p.stem) for p in NOTEBOOKS])
def test_gpu_mode_accuracy_targets_have_a_recorded_gpu_run(target):
    records = recorded_gpu_runs()
    if target.stem in records:
        return  # a full gpu-mode run of this notebook passed, its asserts included
    problems = [f"{unit.at(node)}  (floor {', '.join(names)})"
                for unit in notebook_units(target) for node, names in floor_asserts(unit) if runs_in_gpu_mode(node)]
    fail_with(problems, f"accuracy targets asserted in gpu mode, but docs/gpu-runs/ records no passing full-size "
                        f"gpu-mode run of {target.name}: run `make gpu-check` on a GPU and commit its record, or in "
                        f"gpu mode report with course.checks.check_true instead of asserting")


# ---------------------------------------------------------------- rule 4: fp16 autocast

#: Calls and names that choose the autocast dtype by the hardware.
DECISIONS = ("is_bf16_supported", "amp_dtype", "get_device_capability")


def _fp16(node) -> bool:
    return any(dotted(n) in ("torch.float16", "torch.half") for n in ast.walk(node))


def fp16_autocasts(units: list[Unit]) -> list[str]:
    """Autocasts that run in float16 on a GPU — written (``dtype=torch.float16``), CUDA's default
    (no dtype), or through a name assigned float16 — in code that never decides by the hardware."""
    decided = any(isinstance(n, ast.Attribute) and n.attr in DECISIONS or isinstance(n, ast.Name) and n.id in DECISIONS
                  for unit in units for n in ast.walk(unit.tree))
    if decided:
        return []
    fp16_names = {t.id for unit in units for n in ast.walk(unit.tree) if isinstance(n, ast.Assign) and _fp16(n.value)
                  for t in n.targets if isinstance(t, ast.Name)}
    problems = []
    for unit in units:
        for node, _ in calls(unit, "autocast"):
            dtype = next((k.value for k in node.keywords if k.arg == "dtype"), None)
            device = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "device_type"), None)
            on_cpu_only = isinstance(device, ast.Constant) and device.value == "cpu"
            if (dtype is None and not on_cpu_only or dtype is not None and _fp16(dtype)
                    or isinstance(dtype, ast.Name) and dtype.id in fp16_names):
                problems.append(unit.at(node))
    return problems


@pytest.mark.parametrize("target", TARGETS)
def test_fp16_autocast_comes_with_a_bf16_or_gradscaler_decision(target):
    fail_with(fp16_autocasts(units_of(target)),
              "float16 autocast on a GPU, but nothing here chooses bf16 where the GPU has it: use "
              "dtype=course.gpu.amp_dtype(device) (bf16 on Ampere+ and the CPU; fp16 on a T4, with torch.amp.GradScaler)")


# ---------------------------------------------------------------- rule 5: device strings

def bad_device_strings(unit: Unit) -> list[str]:
    """String constants given as a device (``device="..."``, or assigned to a ``*DEVICE`` name, in
    either branch of a conditional) that ``course.gpu.parse_device`` would reject — often in a
    branch that runs only on a GPU, where CI never sees the error."""
    from course import gpu

    problems = []
    places = [k.value for n in ast.walk(unit.tree) if isinstance(n, ast.Call) for k in n.keywords if k.arg == "device"]
    places += [n.value for n in ast.walk(unit.tree) if isinstance(n, ast.Assign)
               and any(isinstance(t, ast.Name) and t.id.endswith("DEVICE") for t in n.targets)]
    def results(node):  # the strings the expression can evaluate to (not those it compares with)
        if isinstance(node, ast.IfExp):
            return results(node.body) + results(node.orelse)
        if isinstance(node, ast.BoolOp):
            return [c for value in node.values for c in results(value)]
        return [node] if isinstance(node, ast.Constant) and isinstance(node.value, str) else []

    for place in places:
        for constant in results(place):
            try:
                gpu._parse(constant.value)
            except ValueError as error:
                problems.append(f"{unit.at(constant)}  → {error}")
    return problems


@pytest.mark.parametrize("target", TARGETS)
def test_device_strings_are_ones_the_course_accepts(target):
    fail_with([p for unit in units_of(target) for p in bad_device_strings(unit)],
              "device strings course.gpu.parse_device rejects (write 'cpu', 'cuda' or 'cuda:N'; CuPy work is 'cuda')")


# ---------------------------------------------------------------- the rules themselves can fail

def _unit(source: str) -> Unit:
    return Unit("example cell", source)


def test_the_rules_catch_what_they_are_for(tmp_path, monkeypatch):
    load = _unit("sd = torch.load(path, weights_only=True)\nok = torch.load(path, map_location='cpu')")
    assert [n.lineno for n, _ in calls(load, "torch.load") if not any(k.arg == "map_location" for k in n.keywords)] == [1]
    switch = _unit("torch.backends.cuda.matmul.allow_tf32 = True\ntorch.set_float32_matmul_precision('high')")
    assert sum(isinstance(n, ast.Attribute) and n.attr in DEPRECATED for n in ast.walk(switch.tree)) == 2
    floors = _unit("FLOOR = course.env.pick(fast=0.1, cpu=0.5, gpu=0.94)\n"
                   "assert acc >= FLOOR\n"
                   "if course.env.mode() != 'gpu':\n    assert acc >= FLOOR\n"
                   "if course.env.max_steps() is None:\n    assert acc >= FLOOR\n"
                   "if ON_GPU:\n    print(acc)\nelse:\n    assert acc > FLOOR\n"
                   "assert len(x) == 3\n")
    running = sorted(n.lineno for n, _ in floor_asserts(floors) if runs_in_gpu_mode(n))
    assert running == [2, 6], running  # the gpu-excluded ones are not flagged, the max_steps-guarded one is
    fp16 = [_unit("with torch.autocast('cuda', dtype=torch.float16):\n    pass"),
            _unit("with torch.autocast(DEVICE.type):\n    pass"),
            _unit("AMP = torch.float16 if DEVICE.type == 'cuda' else torch.bfloat16"),
            _unit("with torch.autocast(DEVICE.type, dtype=AMP):\n    pass"),
            _unit("with torch.autocast('cpu'):\n    pass")]
    assert len(fp16_autocasts(fp16)) == 3 and all("line 1:" in p for p in fp16_autocasts(fp16))
    decided = fp16 + [_unit("AMP = course.gpu.amp_dtype(DEVICE)")]
    assert fp16_autocasts(decided) == []
    devices = _unit("BENCH_DEVICE = 'cupy' if ON_GPU else 'cpu'\nt = benchmark(f, device='gpu')\n"
                    "ok = benchmark(f, device='cuda:0')\nOTHER = 'cuda' if ON_GPU else 'cpu'\nprint(device_name)")
    assert sorted(p.split(":")[0] for p in bad_device_strings(devices)) == ["example cell, line 1", "example cell, line 2"]
    runs = tmp_path / "gpu-runs"
    runs.mkdir()
    (runs / "NVIDIA_T4.md").write_text("| notebook | mode | steps | status | seconds |\n|---|---|---|---|---|\n"
                                       "| 05_cifar10_cnn.ipynb | gpu | full | passed | 312.0 |\n"
                                       "| 08_unet_road_segmentation.ipynb | gpu | 2 | passed | 40.0 |\n"
                                       "| 09_onnx_export.ipynb | gpu | full | failed: AssertionError | 50.0 |\n")
    monkeypatch.setattr(sys.modules[__name__], "GPU_RUNS", runs)
    assert recorded_gpu_runs() == {"05_cifar10_cnn": ["NVIDIA_T4.md"]}  # capped or failed runs do not count
