"""visualize: pictures of any graph that scalargrad or tensorgrad builds, and backprop step by step.

Tutorial chapter 4 uses it. `draw_dot(root)` reads only the node protocol of `scalargrad.engine`
(`data`, `grad`, `parents`, `op`, `label`), so one function draws `Value` and `Tensor` graphs
alike. `render` writes the picture to an `.svg` or `.png` file with Graphviz's `dot` where it is
installed and with the `graphviz-pure` program from PyPI where it is not. In Jupyter, a drawn
graph shows inline.

`backprop_steps(root)` runs the backward pass through the engine's `on_step` hook and returns
one picture per step; `save_backprop_html(root, path)` puts them in one offline page with
previous / next / play controls, and `backprop_player(root)` shows that page in Jupyter.
`python -m visualize EXPR --values a=2,b=-3` does the same from the command line.

Needs the `graphviz` package: `pip install graphviz graphviz-pure` (the `viz` extra).
"""

from scalargrad import __version__ as __version__  # one distribution, one version
from visualize.dot import Picture, draw_dot, render
from visualize.player import backprop_player, save_backprop_html
from visualize.steps import backprop_steps

__all__ = ["Picture", "draw_dot", "render", "backprop_steps", "save_backprop_html", "backprop_player"]
