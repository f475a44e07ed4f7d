"""What a short run of a names example (names_mlp.py, names_gpt.py) must show."""

from __future__ import annotations

from pathlib import Path

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def check_a_names_run(printed: str, picture: Path, steps: int, samples: int) -> None:
    """The loss picture was written, `samples` made-up names of letters were printed, and the
    summary line names the steps."""
    assert picture.read_bytes()[:8] == PNG_SIGNATURE
    made_up = printed.split("made-up names: ")[1].splitlines()[0].split(", ")
    assert len(made_up) == samples and all(set(name) <= set("abcdefghijklmnopqrstuvwxyz") for name in made_up)
    assert f"summary: {steps} steps of batch 32" in printed
