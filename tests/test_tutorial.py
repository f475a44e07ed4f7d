"""The tutorial runs as written: every ```python block of every chapter, in order.

Each chapter runs in a fresh process with one namespace, in a temporary working directory, through
`docs/tutorial/run_chapter.py` (the command the reader and the picture command use too). A
failure names the chapter, the block's line and the error. Blocks that are not meant to run are
marked ```text or ```console; any other fence fails here, so nothing is skipped silently.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TUTORIAL = ROOT / "docs" / "tutorial"
IMAGES = ROOT / "docs" / "images" / "tutorial"
PART_ONE = ["01-a-value.md", "02-derivatives.md", "03-backward.md", "04-watching-backprop.md",
            "05-a-neural-net.md"]
MAKE_IMAGES = "make it with python docs/tutorial/run_chapter.py --images docs/images/tutorial"


def _load_runner():
    spec = importlib.util.spec_from_file_location("run_chapter", TUTORIAL / "run_chapter.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["run_chapter"] = module  # dataclasses look the module up while the class is made
    spec.loader.exec_module(module)
    return module


runner = _load_runner()
CHAPTERS = runner.chapters(TUTORIAL)


def _run(chapter: Path, workdir: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(TUTORIAL / "run_chapter.py"), str(chapter)],
                          cwd=workdir, capture_output=True, text=True, timeout=300)


def test_part_one_is_there_in_order():
    assert [chapter.name for chapter in CHAPTERS][:5] == PART_ONE


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda path: path.stem)
def test_every_fence_is_marked_and_the_chapter_has_its_parts(chapter):
    found = runner.blocks(chapter)  # raises FenceError, naming the line, for an unmarked fence
    assert any(block.language == "python" for block in found)
    text = chapter.read_text(encoding="utf-8")
    opening = text[:1500]  # the title and the first paragraphs
    assert re.search(r"you will be able to", opening, flags=re.I), \
        f"{chapter.name} does not open with what the reader will be able to do"
    exercises = text.split("\n## Exercises\n", 1)
    assert len(exercises) == 2, f"{chapter.name} has no '## Exercises' section"
    solutions = re.findall(r"<details>(.*?)</details>", exercises[1], flags=re.S)
    assert 2 <= len(solutions) <= 3, f"{chapter.name}: {len(solutions)} folded solutions"
    for solution in solutions:
        assert "```python" in solution and "assert " in solution, \
            f"{chapter.name}: each solution is a python block that checks itself"


def test_the_index_and_the_readme_link_every_chapter():
    index = (TUTORIAL / "README.md").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for chapter in CHAPTERS:
        assert f"]({chapter.name})" in index, f"docs/tutorial/README.md does not link {chapter.name}"
        assert f"](docs/tutorial/{chapter.name})" in readme, f"README.md does not link {chapter.name}"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda path: path.stem)
def test_every_picture_shown_is_committed(chapter):
    for name in runner.images(chapter):
        assert (IMAGES / name).is_file(), f"{chapter.name} shows {name}: {MAKE_IMAGES}"


@pytest.mark.slow  # the chapters together take about half a minute: every block, a short training run
@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda path: path.stem)
def test_every_block_runs_and_writes_the_pictures_shown(chapter, tmp_path):
    done = _run(chapter, tmp_path)
    assert done.returncode == 0, f"{chapter.name} failed:\n{done.stderr[-4000:]}"
    for name in runner.images(chapter):
        assert (tmp_path / name).is_file(), f"{chapter.name} shows {name} but none of its blocks writes it"


def test_a_failing_block_is_named_by_chapter_and_line(tmp_path):
    chapter = tmp_path / "99-broken.md"
    chapter.write_text("# Broken\n\n```python\nx = 1\n```\n\nText.\n\n```python\ny = x / 0\n```\n")
    done = _run(chapter, tmp_path)
    assert done.returncode == 1
    assert "99-broken.md, block at line 10: ZeroDivisionError" in done.stderr
    assert "line 10" in done.stderr  # the traceback cites the Markdown file's own line


def test_an_unmarked_fence_is_an_error(tmp_path):
    chapter = tmp_path / "99-unmarked.md"
    chapter.write_text("# Unmarked\n\n```\nprint('never run')\n```\n")
    with pytest.raises(runner.FenceError, match="99-unmarked.md, line 3"):
        runner.blocks(chapter)
