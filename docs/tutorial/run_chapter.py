"""Run the tutorial's chapters: every ```python block, in order, in one namespace per chapter.

Two uses, both from the root of a checkout:

    python docs/tutorial/run_chapter.py docs/tutorial/01-a-value.md
        runs one chapter in the current directory (the files its blocks write land there) and
        exits with status 1, naming the chapter, the block's line and the error, if a block raises.

    python docs/tutorial/run_chapter.py --images docs/images/tutorial
        runs every chapter, each in a fresh process and a fresh temporary directory, and copies
        the pictures the chapters show (`../images/tutorial/NAME.png`) from what their own
        blocks wrote into the given folder: the one command that makes the tutorial's pictures.

Fences: ```python blocks run; ```text (output, formulas) and ```console (shell commands) are
shown, not run. Any other fence is an error, so no block is skipped without saying so. Line
numbers in tracebacks are the Markdown file's own.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
RUN, SHOWN = "python", ("text", "console")
FENCE = re.compile(r"^```(.*)$")
IMAGE = re.compile(r"\]\(\.\./images/tutorial/([\w.-]+\.png)\)")


@dataclass
class Block:
    """One fenced block: its language, its first code line (1-based) and its code."""

    language: str
    line: int
    code: str


class FenceError(ValueError):
    """A fence whose language says neither "run" nor "show", or one that is never closed."""


def chapters(folder: Path = HERE) -> list[Path]:
    """The chapters, in order: `NN-title.md`."""
    return sorted(folder.glob("[0-9][0-9]-*.md"))


def blocks(path: Path) -> list[Block]:
    """Every fenced block of a chapter, in order; a FenceError for an unmarked or unclosed one."""
    found, current, start = [], None, 0
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        fence = FENCE.match(line.strip())
        if fence is None:
            if current is not None:
                current.append(line)
        elif current is None:
            language, start, current = fence.group(1).strip(), number + 1, []
            if language != RUN and language not in SHOWN:
                raise FenceError(f"{path.name}, line {number}: a fence must say python (run) or "
                                 f"{' or '.join(SHOWN)} (shown, not run), got {language!r}")
        else:
            found.append(Block(language, start, "\n".join(current) + "\n"))
            current = None
    if current is not None:
        raise FenceError(f"{path.name}, line {start - 1}: this fence is never closed")
    return found


def images(path: Path) -> list[str]:
    """The file names of the pictures a chapter shows from `docs/images/tutorial/`."""
    return IMAGE.findall(path.read_text(encoding="utf-8"))


def run(path: Path) -> int:
    """Run a chapter's python blocks in order in one namespace; 0, or 1 after naming the error."""
    namespace: dict = {"__name__": "__main__"}
    for block in blocks(path):
        if block.language != RUN:
            continue
        try:
            # Padding with newlines makes tracebacks cite the Markdown file's own line numbers.
            exec(compile("\n" * (block.line - 1) + block.code, str(path), "exec"), namespace)
        except BaseException as error:  # noqa: BLE001 - SystemExit from a block is a failure too
            traceback.print_exc()
            print(f"{path.name}, block at line {block.line}: {type(error).__name__}: {error}",
                  file=sys.stderr)
            return 1
    return 0


def make_images(out: Path) -> int:
    """Run each chapter in a fresh process and directory; copy the pictures it shows to `out`."""
    out.mkdir(parents=True, exist_ok=True)
    for chapter in chapters():
        with tempfile.TemporaryDirectory() as workdir:
            done = subprocess.run([sys.executable, __file__, str(chapter)], cwd=workdir,
                                  capture_output=True, text=True)
            if done.returncode != 0:  # what the chapter printed, to see where it failed
                print(done.stdout, done.stderr, sep="\n", file=sys.stderr)
                return done.returncode
            for name in images(chapter):
                shutil.copyfile(Path(workdir) / name, out / name)
                print(f"wrote {out / name}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run one chapter, or (with --images) every chapter, keeping the pictures they show."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("chapter", nargs="?", type=Path, help="a chapter to run here")
    parser.add_argument("--images", type=Path, metavar="FOLDER",
                        help="run every chapter and copy the pictures they show into FOLDER")
    args = parser.parse_args(argv)
    if args.images is not None:
        return make_images(args.images)
    if args.chapter is None:
        parser.error("give a chapter to run, or --images FOLDER")
    return run(args.chapter.resolve())


if __name__ == "__main__":
    sys.exit(main())
