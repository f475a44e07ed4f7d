"""The README's Python examples run as written and print what their comments say."""

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_has_examples():
    assert len(python_blocks()) >= 3


def test_readme_examples_run_and_print_what_they_promise(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the files an example writes land here
    namespace: dict = {}
    for block in python_blocks():
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(block, str(README), "exec"), namespace)
        printed = out.getvalue().splitlines()
        # A print line whose comment shows its output must print exactly that.
        promised = [m.group(1).strip() for m in re.finditer(r"^print\(.*\)\s+#\s*(.+)$", block, flags=re.M)]
        assert printed == promised, f"README block printed {printed}, its comments say {promised}"
