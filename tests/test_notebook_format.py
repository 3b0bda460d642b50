"""Every notebook follows the course conventions (tools/nb.py lists them)."""

import json
from pathlib import Path

import pytest

from tools import nb

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks():
    assert NOTEBOOKS and NOTEBOOKS[0].name == "00_setup_and_tour.ipynb"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_follows_the_conventions(path):
    assert nb.problems(path) == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_valid_nbformat(path):
    import nbformat

    nbformat.validate(nbformat.read(path, as_version=4))


def test_checker_catches_outputs_and_missing_badge(tmp_path):
    source = json.loads(NOTEBOOKS[0].read_text(encoding="utf-8"))
    source["cells"][1]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "hi"}]
    source["cells"][0]["source"] = ["# 00 — Setup and tour\n", "no badge here"]
    bad = tmp_path / NOTEBOOKS[0].name
    bad.write_text(json.dumps(source), encoding="utf-8")
    found = "\n".join(nb.problems(bad))
    assert "stored outputs" in found and "badge" in found
    assert nb.strip(bad) and "stored outputs" not in "\n".join(nb.problems(bad))


def test_readme_links_every_notebook_with_the_one_repository_url():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert nb.readme_table() in readme, "the README's notebook table is stale: run `python tools/nb.py readme`"
    for path in NOTEBOOKS:
        number = int(path.name[:2])
        assert nb.colab_url(number) in readme, f"README lacks the Colab link of {path.name}"
