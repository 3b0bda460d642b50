"""make html / make slides: executed pages and offline reveal.js slides, checked in a real browser."""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tools import site

ROOT = Path(__file__).resolve().parent.parent
ORIGINAL_ENV = dict(__import__("os").environ)  # before anything here executes a notebook
NOTEBOOK = ROOT / "notebooks" / "00_setup_and_tour.ipynb"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    site.render("html", [NOTEBOOK], "fast", out / "html")
    site.render("slides", [NOTEBOOK], "fast", out / "slides")
    return out


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    pytest.skip("Chromium is not installed here (apt-get install chromium): the browser checks were skipped")


def dump_dom(page: Path) -> str:
    """The page's DOM after its scripts ran, from headless Chromium with no network access."""
    result = subprocess.run(
        [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
         f"--user-data-dir={page.parent / '.chromium'}", "--virtual-time-budget=10000", "--dump-dom",
         page.as_uri()],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def test_index_lists_the_notebooks_with_their_goals(built):
    index = (built / "html" / "index.html").read_text(encoding="utf-8")
    assert 'href="00_setup_and_tour.html"' in index and "00 — Setup and tour" in index
    assert "how to time a matrix multiply" in index and "fast</b> mode" in index


def test_pages_carry_outputs_and_images(built):
    page = (built / "html" / "00_setup_and_tour.html").read_text(encoding="utf-8")
    assert "data:image/png;base64," in page, "figures must be embedded in the page"
    assert "mode fast" in page and "✅ gflops" in page, "executed outputs must be on the page"


def test_slides_use_local_reveal_and_skip_setup_cells(built):
    slides = (built / "slides" / "00_setup_and_tour.slides.html").read_text(encoding="utf-8")
    assert 'vendor/reveal.js/dist/reveal.js' in slides and "unpkg.com" not in slides
    assert (built / "slides" / "vendor" / "reveal.js" / "dist" / "reveal.js").is_file()
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    n_slides = sum(c["metadata"]["slideshow"]["slide_type"] == "slide" for c in cells)
    assert slides.count("<section") >= n_slides
    assert 'sys.path.insert(0, "/content/torch-cuda-course")' not in slides, "the setup cell must be skipped"
    assert "class=\"fragment\"" in slides


def test_pages_render_in_headless_chromium(built):
    index_dom = dump_dom(built / "html" / "index.html")
    assert "00_setup_and_tour.html" in index_dom
    page_dom = dump_dom(built / "html" / "00_setup_and_tour.html")
    assert len(re.findall(r"<img[^>]+src=\"data:image/png", page_dom)) >= 1
    assert "mode fast" in page_dom


def test_slides_start_reveal_offline_in_headless_chromium(built):
    dom = dump_dom(built / "slides" / "00_setup_and_tour.slides.html")
    # reveal.js marks its root "ready" once it has loaded and laid out the slides
    assert re.search(r'class="reveal[^"]*\bready\b', dom), "reveal.js did not start from the local copy"


def test_executing_leaves_this_process_environment_alone(built):
    import os

    page = (built / "html" / f"{NOTEBOOK.stem}.html").read_text(encoding="utf-8")
    assert "mode fast" in page  # the kernel got COURSE_MODE=fast ...
    assert os.environ.get("COURSE_MODE") == ORIGINAL_ENV.get("COURSE_MODE")  # ... and this process kept its own
    assert os.environ.get("COURSE_FAST") == ORIGINAL_ENV.get("COURSE_FAST")


def test_a_malformed_first_cell_gets_a_clear_error(tmp_path):
    bad = tmp_path / "99_untitled.ipynb"
    bad.write_text(json.dumps({"cells": [{"cell_type": "markdown", "source": ["no title here"], "metadata": {}}],
                               "metadata": {}, "nbformat": 4, "nbformat_minor": 5}), encoding="utf-8")
    with pytest.raises(ValueError, match="first cell must start with the notebook's title"):
        site.notebook_info(bad)
    with pytest.raises(ValueError, match="mode must be one of"):
        site.execute(bad, "turbo")
