"""The backprop player: a self-contained page, checked as text and in a real headless Chromium."""

from __future__ import annotations

import io
import re
import time

import pytest

pytest.importorskip("graphviz")

from chromium_pipe import Chromium, find_chromium  # noqa: E402
from visualize_helpers import classic, needs_layout  # noqa: E402

from scalargrad.engine import topological_order  # noqa: E402
from visualize import backprop_player, save_backprop_html  # noqa: E402

pytestmark = needs_layout


@pytest.fixture
def page(tmp_path):
    _, _, d = classic()
    frames = len(topological_order(d, leaves=False)) + 1
    return save_backprop_html(d, tmp_path / "backprop.html", interval_ms=150), frames


def test_the_page_is_self_contained_with_its_controls(page):
    path, frames = page
    text = path.read_text()
    assert text.startswith("<!DOCTYPE html>")
    for outside in ("http:", "https:", "//cdn", "<link", "src=", "@import", "url("):
        assert outside not in text, f"the page reaches outside itself: {outside}"
    assert len(re.findall(r'<div class="frame"', text)) == frames
    assert text.count("<svg") == frames
    for name in ("previous", "next", "play"):
        assert re.search(rf'<button id="{name}" type="button" aria-label="{name}">', text)
    assert f'<input id="slider" type="range" min="0" max="{frames - 1}" value="0"' in text
    assert "dd/dn5 = 1, so n5.grad += 1.0 x 1.0" in text  # the captions travel with the page


def test_the_notebook_player_is_the_same_page_in_a_frame():
    _, _, d = classic()
    player = backprop_player(d)
    shown = player._repr_html_()
    assert shown.startswith("<iframe srcdoc=") and "&lt;button id=&quot;next&quot;" in shown
    assert player.height > 200 and '<input id="slider" type="range"' in player.page


CHROMIUM = find_chromium()


@pytest.mark.slow  # about 3 s: a browser starts
@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on this machine (Debian: apt-get install chromium)")
def test_the_player_works_in_headless_chromium(page, tmp_path):
    image = pytest.importorskip("PIL.Image")
    path, frames = page
    shown = "[document.querySelector('.frame:not([hidden])').id, document.getElementById('slider').value, " \
            "document.getElementById('caption').textContent]"
    with Chromium(CHROMIUM, tmp_path / "profile") as browser:
        browser.open(path.resolve().as_uri())
        assert browser.evaluate("document.querySelectorAll('.frame:not([hidden])').length") == 1
        first = browser.evaluate(shown)
        assert first[:2] == ["frame-0", "0"] and first[2].startswith("Before the first step")

        browser.click("#next")
        after_next = browser.evaluate(shown)
        assert after_next[:2] == ["frame-1", "1"] and after_next[2].startswith("Step 1 of")

        browser.press("ArrowRight")
        browser.press("ArrowRight")
        assert browser.evaluate(shown)[:2] == ["frame-3", "3"]
        browser.click("#previous")
        assert browser.evaluate(shown)[:2] == ["frame-2", "2"]

        browser.evaluate("(s => { s.value = 5; s.dispatchEvent(new Event('input')); })"
                         "(document.getElementById('slider'))")
        assert browser.evaluate(shown)[:2] == ["frame-5", "5"]

        browser.click("#play")
        deadline = time.monotonic() + 10
        while browser.evaluate(shown)[0] != f"frame-{frames - 1}" and time.monotonic() < deadline:
            time.sleep(0.1)
        assert browser.evaluate(shown)[:2] == [f"frame-{frames - 1}", str(frames - 1)]

        screenshot = image.open(io.BytesIO(browser.screenshot())).convert("RGB")
    assert screenshot.size[0] >= 800
    colours = screenshot.getcolors(maxcolors=1 << 16)
    assert colours is None or len(colours) > 20  # text, boxes and fills, not a blank page
    assert screenshot.convert("L").getextrema()[0] < 60  # some dark text is drawn
