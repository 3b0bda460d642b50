"""Authoring tools for the course's notebooks: build cells with the course's conventions, strip outputs.

    python tools/nb.py strip notebooks/*.ipynb    # remove outputs before committing
    python tools/nb.py check notebooks/*.ipynb    # the conventions tests/test_notebook_format.py enforces
    python tools/nb.py readme                     # rewrite the README's notebook table from the notebooks

From Python (e.g. a scratch script that writes a new lesson):

    from tools.nb import header, setup, md, code, exercise, write
    write("notebooks/10_x.ipynb", [header(10, "Title", ...), setup(10), md("..."), code("...")])

Conventions (every notebook):
- cell 0: markdown title ``# NN — Title``, the Open-in-Colab badge, what you will learn, time, prerequisites;
- cell 1: the setup cell (tag ``setup``): installs the course only on Colab, imports it, prints where it runs;
- every cell carries ``slideshow.slide_type`` (slide / subslide / fragment / skip / notes / -);
- exercises: a stub cell (tag ``exercise``), a check cell (tag ``check``) that reports ✅/❌ and
  never raises on the stub, a folded solution cell (tag ``solution``, ``# @title Solution``)
  that runs the reference and asserts the same check passes;
- the last cells: ``## Summary`` and ``## Further reading``.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK_NAMES = {
    0: "00_setup_and_tour",
    1: "01_cuda_basics",
    2: "02_cuda_kernel_puzzles",
    3: "03_inside_the_gpu",
    4: "04_tensors_and_autograd",
    5: "05_cifar10_cnn",
    6: "06_image_sharpening",
    7: "07_dcgan",
    8: "08_unet_road_segmentation",
    9: "09_onnx_export",
    10: "10_gpu_performance",
    11: "11_distributed",
}
SLIDE_TYPES = {"slide", "subslide", "fragment", "skip", "notes", "-"}


def repo_url() -> str:
    """The repository's address: pyproject.toml's [project.urls] Repository, the one place it is written."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    return re.search(r'^Repository\s*=\s*"([^"]+)"', text, re.M).group(1).rstrip("/")


def colab_url(number: int) -> str:
    path = repo_url().removeprefix("https://github.com/")
    return f"https://colab.research.google.com/github/{path}/blob/main/notebooks/{NOTEBOOK_NAMES[number]}.ipynb"


def badge(number: int) -> str:
    return f"[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]({colab_url(number)})"


def _lines(text: str) -> list[str]:
    text = text.strip("\n")
    lines = text.split("\n")
    return [line + "\n" for line in lines[:-1]] + [lines[-1]]


def md(text: str, slide: str = "-") -> dict:
    """A markdown cell; ``slide`` is its slideshow type ("slide" starts a new slide)."""
    assert slide in SLIDE_TYPES, slide
    return {"cell_type": "markdown", "metadata": {"slideshow": {"slide_type": slide}}, "source": _lines(text)}


def code(text: str, slide: str = "-", tags: tuple = (), hidden: bool = False) -> dict:
    """A code cell; ``hidden=True`` folds it in JupyterLab (``# @title`` folds it on Colab)."""
    assert slide in SLIDE_TYPES, slide
    meta: dict = {"slideshow": {"slide_type": slide}}
    if tags:
        meta["tags"] = list(tags)
    if hidden:
        meta["jupyter"] = {"source_hidden": True}
    return {"cell_type": "code", "execution_count": None, "metadata": meta, "outputs": [], "source": _lines(text)}


def header(number: int, title: str, learn: list[str], minutes: str, prerequisites: str) -> dict:
    """Cell 0: title, badge, objectives, time and prerequisites."""
    items = "\n".join(f"- {item}" for item in learn)
    return md(
        f"# {number:02d} — {title}\n\n{badge(number)}\n\n"
        f"**What you will learn**\n\n{items}\n\n"
        f"**Time:** {minutes} · **Prerequisites:** {prerequisites}",
        slide="slide",
    )


def setup(number: int, extras: str = "") -> dict:
    """Cell 1: on Colab only, clone the course and install it (leaving Colab's torch alone)."""
    target = "/content/torch-cuda-course"
    spec = f"{target}[{extras}]" if extras else target
    return code(
        "# @title Setup: on Colab, install the course package; everywhere, say where we run\n"
        "import sys\n"
        'if "google.colab" in sys.modules:  # Colab only; elsewhere `make lab` installed it\n'
        f"    !git clone -q --depth 1 {repo_url()} {target} 2>/dev/null || git -C {target} pull -q\n"
        f'    %pip install -q -e "{spec}"\n'
        f'    sys.path.insert(0, "{target}")  # an editable install is seen after a restart only\n'
        "import course\n"
        "print(course.env.describe())",
        slide="skip",
        tags=("setup",),
    )


def exercise(stub: str, check: str, solution: str) -> list[dict]:
    """The three cells of an exercise: stub, check (✅/❌, never raises), folded solution."""
    assert "# @title Solution" in solution.splitlines()[0], "solution cells start with '# @title Solution'"
    return [
        code(stub, slide="fragment", tags=("exercise",)),
        code(check, slide="-", tags=("check",)),
        code(solution, slide="skip", tags=("solution",), hidden=True),
    ]


def write(path: str | Path, cells: list[dict]) -> Path:
    """Write a clean (output-free) notebook with the course's kernel metadata."""
    notebook = {
        "cells": cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
            "accelerator": "GPU",
            "colab": {"provenance": [], "gpuType": "T4"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    for i, cell in enumerate(cells):
        cell.setdefault("id", f"c{i:03d}")
    path = Path(path)
    path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def strip(path: str | Path) -> bool:
    """Remove outputs and execution counts in place; True when the file changed."""
    path = Path(path)
    before = path.read_text(encoding="utf-8")
    notebook = json.loads(before)
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"], cell["execution_count"] = [], None
        cell.get("metadata", {}).pop("execution", None)
    after = json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"
    if after != before:
        path.write_text(after, encoding="utf-8")
    return after != before


def problems(path: str | Path) -> list[str]:
    """The course conventions that a notebook breaks (empty when it meets them all)."""
    path = Path(path)
    found = []
    match = re.fullmatch(r"(\d\d)_[a-z0-9_]+\.ipynb", path.name)
    if not match:
        return [f"{path.name}: name must be NN_words.ipynb"]
    number = int(match.group(1))
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    if NOTEBOOK_NAMES.get(number) != path.stem:
        found.append(f"expected the name {NOTEBOOK_NAMES.get(number)}.ipynb for lesson {number:02d}")
    for i, cell in enumerate(cells):
        if cell["cell_type"] == "code" and (cell.get("outputs") or cell.get("execution_count")):
            found.append(f"cell {i} has stored outputs: run `python tools/nb.py strip {path}`")
        slide = cell.get("metadata", {}).get("slideshow", {}).get("slide_type")
        if slide not in SLIDE_TYPES:
            found.append(f"cell {i} has no slideshow.slide_type metadata")
    first = "".join(cells[0]["source"]) if cells else ""
    if not first.startswith(f"# {number:02d} — "):
        found.append(f"cell 0 must start with the title '# {number:02d} — ...'")
    if colab_url(number) not in first:
        found.append(f"cell 0 lacks the Open-in-Colab badge pointing at {colab_url(number)}")
    for needed in ("What you will learn", "Time:", "Prerequisites:"):
        if needed not in first:
            found.append(f"cell 0 lacks '{needed}'")
    setup_cells = [c for c in cells if "setup" in c.get("metadata", {}).get("tags", [])]
    if len(cells) < 2 or "setup" not in cells[1].get("metadata", {}).get("tags", []) or len(setup_cells) != 1:
        found.append("cell 1 must be the one setup cell (tag 'setup')")
    else:
        src = "".join(cells[1]["source"])
        for needed in ('"google.colab" in sys.modules', "import course", "course.env.describe()", repo_url()):
            if needed not in src:
                found.append(f"the setup cell lacks {needed!r}")
    text = ["".join(c["source"]) for c in cells]
    by_tag = {tag: [i for i, c in enumerate(cells) if tag in c.get("metadata", {}).get("tags", [])]
              for tag in ("exercise", "check", "solution")}
    if not (len(by_tag["exercise"]) == len(by_tag["check"]) == len(by_tag["solution"])):
        found.append(f"exercise/check/solution cells do not pair up: {by_tag}")
    for i in by_tag["solution"]:
        if not text[i].startswith("# @title Solution") or "assert " not in text[i]:
            found.append(f"solution cell {i} must start with '# @title Solution' and assert its check")
        if not cells[i].get("metadata", {}).get("jupyter", {}).get("source_hidden"):
            found.append(f"solution cell {i} must be folded (jupyter.source_hidden)")
    if not any(t.lstrip().startswith("## Summary") for t in text):
        found.append("no '## Summary' cell")
    if not any("## Further reading" in t for t in text):
        found.append("no '## Further reading' cell")
    if "env.pick(" not in "".join(text):
        found.append("sizes are not chosen with course.env.pick(...)")
    return [f"{path}: {p}" for p in found]


def readme_table() -> str:
    """The README's notebook table, read from the notebooks' first cells (title, time, goals)."""
    rows = ["| # | notebook | you will | time | Colab |", "|---|---|---|---|---|"]
    for number, stem in NOTEBOOK_NAMES.items():
        path = ROOT / "notebooks" / f"{stem}.ipynb"
        if not path.exists():
            rows.append(f"| {number:02d} | *{stem[3:].replace('_', ' ')} — being written* | | | |")
            continue
        first = "".join(json.loads(path.read_text(encoding="utf-8"))["cells"][0]["source"])
        title = re.match(r"#\s*\d\d — (.+)", first).group(1).strip()
        goals = re.findall(r"^- (.+)$", first, re.M)
        minutes = re.search(r"\*\*Time:\*\*\s*([^·\n]+)", first)
        rows.append(f"| {number:02d} | [{title}](notebooks/{stem}.ipynb) | {goals[0] if goals else ''} | "
                    f"{minutes.group(1).strip() if minutes else ''} | {badge(number)} |")
    return "\n".join(rows)


def update_readme() -> bool:
    """Rewrite the table between the README's notebook markers; True when it changed."""
    readme = ROOT / "README.md"
    text = readme.read_text(encoding="utf-8")
    start, end = "<!-- notebooks:start -->", "<!-- notebooks:end -->"
    new = re.sub(f"{start}.*?{end}", lambda m: f"{start}\n{readme_table()}\n{end}", text, flags=re.S)
    if new != text:
        readme.write_text(new, encoding="utf-8")
    return new != text


def main(argv: list[str]) -> int:
    if argv[:1] == ["readme"]:
        print("README.md updated" if update_readme() else "README.md is up to date")
        return 0
    if len(argv) < 2 or argv[0] not in {"strip", "check"}:
        print(__doc__)
        return 2
    command, paths = argv[0], argv[1:]
    if command == "strip":
        for p in paths:
            if strip(p):
                print(f"stripped {p}")
        return 0
    issues = [problem for p in paths for problem in problems(p)]
    print("\n".join(issues) or f"{len(paths)} notebook(s) follow the conventions")
    return 1 if issues else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
