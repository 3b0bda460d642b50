"""Executed HTML pages and reveal.js slides of the notebooks, offline (`make html`, `make slides`).

    python tools/site.py html   [--mode fast|cpu|gpu] [--out build/html]   [notebooks ...]
    python tools/site.py slides [--mode fast|cpu|gpu] [--out build/slides] [notebooks ...]

Each notebook is executed once per mode into ``build/executed/<mode>/`` (reused while the
notebook is unchanged), then rendered. Pages embed their images; slides use the reveal.js,
require.js and jQuery copies in ``tools/vendor/``, so nothing is fetched from a CDN.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENDOR = ROOT / "tools" / "vendor"
MODES = ("fast", "cpu", "gpu")


def notebook_info(path: Path) -> dict:
    """Title, number and learning goals, read from the notebook's first cell."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    first = "".join(cells[0]["source"]) if cells else ""
    heading = re.match(r"#\s*(.+)", first)
    if heading is None:
        raise ValueError(f"{path.name}: the first cell must start with the notebook's title ('# NN — Title'), "
                         f"got {first[:60]!r}")
    title = heading.group(1).strip()
    learn = re.findall(r"^- (.+)$", first.split("**What you will learn**")[-1].split("**Time:**")[0], re.M)
    time_needed = re.search(r"\*\*Time:\*\*\s*([^·\n]+)", first)
    return {"stem": path.stem, "title": title, "learn": learn,
            "time": time_needed.group(1).strip() if time_needed else ""}


def _newest_source(path: Path) -> float:
    """The newest modification time of the notebook and of the course package it imports."""
    return max([path.stat().st_mtime] + [p.stat().st_mtime for p in (ROOT / "course").rglob("*") if p.is_file()])


def execute(path: Path, mode: str, timeout: int = 900, target_dir: Path | None = None) -> Path:
    """Run ``path`` top to bottom in ``mode`` and return the executed copy.

    The copy is reused while neither the notebook nor ``course/`` changed. The kernel gets
    ``COURSE_MODE=mode`` in its own environment; this process's environment is left alone.
    ``timeout``: seconds each cell may run.
    """
    import nbformat
    from nbclient import NotebookClient

    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    target = (target_dir or ROOT / "build" / "executed" / mode) / path.name
    if target.exists() and target.stat().st_mtime >= _newest_source(path):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    kernel_env = {k: v for k, v in os.environ.items() if k != "COURSE_FAST"}
    kernel_env["COURSE_MODE"] = mode
    notebook = nbformat.read(path, as_version=4)
    started = time.perf_counter()
    # store_widget_state=False would crash nbclient on Output widgets (interact); keep the state,
    # then drop it: a page that embeds widget state loads the widget JavaScript from a CDN.
    NotebookClient(notebook, timeout=timeout, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute(env=kernel_env)
    notebook.metadata.pop("widgets", None)
    tmp = target.with_suffix(".part")
    nbformat.write(notebook, tmp)
    os.replace(tmp, target)
    print(f"executed {path.name} in {mode} mode: {time.perf_counter() - started:.1f} s")
    return target


def _copy_vendor(out: Path) -> None:
    dest = out / "vendor"
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(VENDOR, dest, ignore=shutil.ignore_patterns("README.md"))


def _exporter(kind: str):
    from nbconvert import HTMLExporter, SlidesExporter

    if kind == "html":
        exporter = HTMLExporter(template_name="lab")
    else:
        exporter = SlidesExporter()
        exporter.reveal_url_prefix = "vendor/reveal.js"
        exporter.reveal_theme = "white"
        exporter.reveal_scroll = True
    exporter.require_js_url = "vendor/require.js"
    exporter.jquery_url = "vendor/jquery.min.js"
    exporter.exclude_input_prompt = kind == "slides"
    exporter.exclude_output_prompt = kind == "slides"
    return exporter


def render(kind: str, notebooks: list[Path], mode: str, out: Path) -> list[Path]:
    """Execute and render ``notebooks`` as ``kind`` ("html" or "slides") into ``out``; write an index."""
    out.mkdir(parents=True, exist_ok=True)
    _copy_vendor(out)
    exporter = _exporter(kind)
    suffix = ".html" if kind == "html" else ".slides.html"
    written, infos = [], []
    for path in notebooks:
        executed = execute(path, mode)
        body, _ = exporter.from_filename(str(executed))
        page = out / f"{path.stem}{suffix}"
        page.write_text(body, encoding="utf-8")
        written.append(page)
        infos.append({**notebook_info(path), "href": page.name})
    index = out / "index.html"
    index.write_text(index_page(infos, kind, mode), encoding="utf-8")
    print(f"wrote {len(written)} {kind} page(s) and {index.relative_to(ROOT) if index.is_relative_to(ROOT) else index}")
    return [index, *written]


def index_page(infos: list[dict], kind: str, mode: str) -> str:
    """The course map: one card per notebook, linking to its page or slides."""
    cards = []
    for info in infos:
        goals = "".join(f"<li>{_inline_md(g)}</li>" for g in info["learn"])
        cards.append(
            f'<article><h2><a href="{html.escape(info["href"])}">{html.escape(info["title"])}</a></h2>'
            f'<p class="time">{html.escape(info["time"])}</p><ul>{goals}</ul></article>'
        )
    what = "executed notebooks" if kind == "html" else "slides for instructors (press S for speaker notes)"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Torch × CUDA — {what}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body {{ font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; color: #222; }}
h1 {{ margin-bottom: 0.2rem; }} .sub {{ color: #555; margin-top: 0; }}
main {{ display: grid; grid-template-columns: repeat(auto-fill, minmax(18rem, 1fr)); gap: 1rem; }}
article {{ border: 1px solid #ddd; border-radius: 8px; padding: 0.8rem 1rem; }}
article h2 {{ font-size: 1.1rem; margin: 0 0 0.3rem; }} .time {{ color: #777; margin: 0; font-size: 0.9rem; }}
ul {{ padding-left: 1.2rem; font-size: 0.9rem; }} a {{ color: #b0300f; text-decoration: none; }}
</style></head><body>
<h1>Torch × CUDA — an interactive course</h1>
<p class="sub">{len(infos)} {what}, run in <b>{html.escape(mode)}</b> mode.</p>
<main>{''.join(cards)}</main>
</body></html>
"""


def _inline_md(text: str) -> str:
    text = html.escape(text)
    text = re.sub(r"`([^`]+)`", r"<code>\1</code>", text)
    text = re.sub(r"\*\*([^*]+)\*\*", r"<b>\1</b>", text)
    return re.sub(r"\*([^*]+)\*", r"<em>\1</em>", text)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("kind", choices=("html", "slides"))
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--mode", choices=MODES, default=os.environ.get("COURSE_MODE") or
                        ("fast" if os.environ.get("COURSE_FAST") == "1" else None))
    parser.add_argument("--out", type=Path)
    args = parser.parse_intermixed_args(argv)
    if args.mode is None:
        sys.path.insert(0, str(ROOT))
        from course import env

        args.mode = env.mode()
    notebooks = [p.resolve() for p in args.notebooks] or sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    missing = [str(p) for p in notebooks if not p.exists()]
    if missing:
        parser.error(f"no such notebook: {', '.join(missing)}")
    out = args.out or ROOT / "build" / args.kind
    render(args.kind, notebooks, args.mode, out.resolve())
    return 0


if __name__ == "__main__":
    sys.exit(main())
