"""The backprop player: every step of `backprop_steps` in one self-contained HTML page.

`save_backprop_html(root, path)` writes a page with the frames embedded as SVG, previous /
next / play buttons, a slider whose value is the frame index, left and right arrow keys, and
the step's caption in words under the picture. Nothing is fetched: no network, no external
scripts, styles or fonts, so the page works offline and from an e-mail attachment.
`backprop_player(root)` shows the same page inline in Jupyter (tutorial chapter 4).
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

from visualize.dot import run_layout
from visualize.steps import backprop_steps

__all__ = ["backprop_html", "save_backprop_html", "backprop_player", "Player"]

PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title}</title>
<style>
  body {{ font-family: Helvetica, Arial, sans-serif; margin: 16px; color: #111827; }}
  h1 {{ font-size: 18px; margin: 0 0 8px 0; }}
  .controls {{ display: flex; align-items: center; gap: 8px; margin: 8px 0; }}
  .controls button {{ font-size: 14px; padding: 4px 12px; min-width: 84px; }}
  .controls input[type=range] {{ flex: 1; max-width: 480px; }}
  #caption {{ font-size: 15px; line-height: 1.4; min-height: 3em; max-width: 900px; }}
  /* As wide as the window allows while the whole frame stays in view. */
  .frame svg {{ display: block; width: 100%; height: auto; max-height: calc(100vh - 190px); }}
</style>
</head>
<body>
<h1>{title}</h1>
<div class="controls">
  <button id="previous" type="button" aria-label="previous">&#9664; Previous</button>
  <button id="play" type="button" aria-label="play">Play</button>
  <button id="next" type="button" aria-label="next">Next &#9654;</button>
  <input id="slider" type="range" min="0" max="{last}" value="0" step="1" aria-label="step">
  <span id="counter"></span>
</div>
<p id="caption"></p>
{frames}
<script>
(function () {{
  var captions = {captions};
  var frames = document.querySelectorAll(".frame");
  var slider = document.getElementById("slider");
  var play = document.getElementById("play");
  var counter = document.getElementById("counter");
  var caption = document.getElementById("caption");
  var current = 0, timer = null;
  function show(index) {{
    current = Math.max(0, Math.min(frames.length - 1, index));
    for (var i = 0; i < frames.length; i++) frames[i].hidden = (i !== current);
    slider.value = current;
    counter.textContent = "frame " + current + " of " + (frames.length - 1);
    caption.textContent = captions[current];
  }}
  function stop() {{
    if (timer !== null) {{ clearInterval(timer); timer = null; play.textContent = "Play"; }}
  }}
  function step(by) {{ show(current + by); }}
  document.getElementById("previous").addEventListener("click", function () {{ stop(); step(-1); }});
  document.getElementById("next").addEventListener("click", function () {{ stop(); step(1); }});
  slider.addEventListener("input", function () {{ stop(); show(parseInt(slider.value, 10)); }});
  play.addEventListener("click", function () {{
    if (timer !== null) {{ stop(); return; }}
    if (current === frames.length - 1) show(0);
    play.textContent = "Pause";
    timer = setInterval(function () {{
      if (current === frames.length - 1) {{ stop(); return; }}
      step(1);
    }}, {interval});
  }});
  document.addEventListener("keydown", function (event) {{
    if (event.key === "ArrowRight") {{ stop(); step(1); event.preventDefault(); }}
    if (event.key === "ArrowLeft") {{ stop(); step(-1); event.preventDefault(); }}
  }});
  show(0);
}})();
</script>
</body>
</html>
"""


def backprop_html(root: Any, title: str = "Backpropagation, step by step", interval_ms: int = 1500,
                  **options: Any) -> str:
    """The player page for `root` as a string (see `save_backprop_html`)."""
    pictures = backprop_steps(root, caption_in_picture=False, **options)
    frames = "\n".join(
        f'<div class="frame" id="frame-{i}"{" hidden" if i else ""}>{_inline_svg(picture.source)}</div>'
        for i, picture in enumerate(pictures)
    )
    captions = json.dumps([picture.caption for picture in pictures]).replace("</", "<\\/")
    return PAGE.format(title=html.escape(title), last=len(pictures) - 1, frames=frames,
                       captions=captions, interval=int(interval_ms))


def save_backprop_html(root: Any, path: str | Path, **options: Any) -> Path:
    """Run the backward pass of `root` and write its step-by-step player to `path` (one HTML file).

    The page has previous / next / play buttons, a slider over the frames, arrow keys, and a
    caption per step in words. Options go to `backprop_steps` (`names=`, `rankdir=`, ...) or
    set the page's `title=` and the play speed `interval_ms=`. Returns the path.
    """
    path = Path(path)
    path.write_text(backprop_html(root, **options), encoding="utf-8")
    return path


class Player:
    """The backprop player shown inline in Jupyter, in a frame of its own (its ids stay apart)."""

    def __init__(self, page: str, height: int) -> None:
        self.page = page
        self.height = height

    def _repr_html_(self) -> str:
        return (f'<iframe srcdoc="{html.escape(self.page, quote=True)}" style="width: 100%; '
                f'height: {self.height}px; border: 1px solid #e5e7eb;"></iframe>')

    def save(self, path: str | Path) -> Path:
        """Write the page to `path`."""
        path = Path(path)
        path.write_text(self.page, encoding="utf-8")
        return path


def backprop_player(root: Any, **options: Any) -> Player:
    """Run the backward pass of `root` and return the step-by-step player, shown inline in Jupyter."""
    page = backprop_html(root, **options)
    heights = [float(h) for h in re.findall(r'<svg width="[\d.]+pt" height="([\d.]+)pt"', page)]
    return Player(page, height=int(max(heights, default=300) * 4 / 3) + 200)  # pt to px, plus controls


def _inline_svg(source: str) -> str:
    """A frame laid out as SVG, ready to sit inside HTML: no XML prolog, doctype or namespaces.

    An HTML page puts `<svg>` in the SVG namespace by itself, so the declarations (URLs that a
    reader might take for network access) are dropped.
    """
    svg = run_layout(source, "svg").decode("utf-8")
    svg = svg[svg.index("<svg"):]
    svg = re.sub(r"<!--.*?-->", "", svg, flags=re.S)
    return re.sub(r'\s+xmlns(:xlink)?="[^"]*"', "", svg)
