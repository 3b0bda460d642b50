"""The install files agree: pyproject.toml and environment.yml name the same packages."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# conda-forge names for the few packages that PyPI spells differently
CONDA_TO_PYPI = {"pytorch": "torch", "cupy": "cupy-cuda12x"}


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[ ;]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def pyproject_packages() -> set:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    names = set()
    for block in re.findall(r"^(?:dependencies|gpu|onnx|dev)\s*=\s*\[(.*?)\]\s*$", text, re.S | re.M):
        names |= {_name(r) for r in re.findall(r'"([^"]+)"', block)}
    names.discard("torch-cuda-course")  # the dev extra names the package's own extras
    return names


def environment_packages() -> set:
    names = set()
    text = (ROOT / "environment.yml").read_text(encoding="utf-8")
    for line in text.split("\ndependencies:", 1)[1].splitlines():
        match = re.match(r"^\s{2}- ([A-Za-z0-9_.-]+)", line)
        if match:
            name = _name(match.group(1))
            names.add(CONDA_TO_PYPI.get(name, name))
    return names - {"python", "pip"}


def test_environment_yml_and_pyproject_name_the_same_packages():
    py, conda = pyproject_packages(), environment_packages()
    assert len(py) >= 15, py  # the parser found the lists
    assert py == conda, f"only in pyproject.toml: {sorted(py - conda)}; only in environment.yml: {sorted(conda - py)}"


def test_colab_preinstalled_versions_satisfy_the_lower_bounds():
    """Colab ships torch 2.11, ipywidgets 7.7.1: pip must not replace them."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    bounds = dict(re.findall(r'"(torch|torchvision|ipywidgets)>=([\d.]+)"', text))
    as_tuple = lambda v: tuple(int(p) for p in v.split("."))
    assert as_tuple(bounds["torch"]) <= (2, 11)
    assert as_tuple(bounds["ipywidgets"]) <= (7, 7, 1)


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "make test" in readme and "make lab" in readme
    assert "make test" in ci
