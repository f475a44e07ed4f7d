"""The docs pictures: one command makes them all, each fitting a page's width."""

from __future__ import annotations

import pytest

pytest.importorskip("graphviz")
image = pytest.importorskip("PIL.Image")

from visualize_helpers import needs_layout  # noqa: E402

from visualize import gallery  # noqa: E402


@pytest.mark.slow  # about 3 s: a dozen layouts
@needs_layout
def test_the_gallery_command_writes_every_picture_within_a_page_width(tmp_path, capsys):
    assert gallery.main([str(tmp_path)]) == 0
    names = sorted(path.name for path in tmp_path.iterdir())
    assert names == sorted([*gallery.PICTURES, *gallery.FRAMES])
    for name in names:
        with image.open(tmp_path / name) as picture:
            assert 300 <= picture.width <= 820, name  # about 800 pixels: a page, read without zooming
    with image.open(tmp_path / "backprop.gif") as animation:
        assert animation.n_frames == 4  # before the first step, then tanh, +, *
    assert capsys.readouterr().out.count("wrote") == len(names)
