"""visualize: graphviz pictures of any graph that scalargrad or tensorgrad builds (tutorial chapter 2).

`draw_dot(root)` reads only the node protocol of `scalargrad.engine` (`data`, `grad`,
`parents`, `op`, `label`), so one function draws `Value` and `Tensor` graphs alike. `render`
writes the picture to an `.svg` or `.png` file with Graphviz's `dot` where it is installed and
with the `graphviz-pure` program from PyPI where it is not. In Jupyter, a drawn graph shows
inline.

Needs the `graphviz` package: `pip install graphviz graphviz-pure` (the `viz` extra).
"""

from visualize.dot import Picture, draw_dot, render

__version__ = "0.1.0"  # the same as scalargrad.__version__: one distribution
__all__ = ["Picture", "draw_dot", "render"]
