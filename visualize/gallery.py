"""The pictures of the README and the docs, made again by one command.

    python -m visualize.gallery docs/images

writes `expression.png` (micrograd's classic expression after backward), `neuron.png` (one
tanh neuron, parameters told apart from inputs), `mlp_tensor.png` (a two-layer tensorgrad MLP
whose parameters carry their names), `backprop_strip.png` (every step of a backward pass, one
under the other) and `backprop.gif` (the same steps, animated). Stacking frames needs Pillow,
which matplotlib (the `examples` and `dev` extras) brings.
"""

from __future__ import annotations

import argparse
import io
from collections.abc import Callable, Sequence
from pathlib import Path

from scalargrad import Value
from visualize.dot import Picture, draw_dot, render, run_layout
from visualize.steps import backprop_steps

__all__ = ["PICTURES", "main"]


def expression() -> Picture:
    """micrograd's README expression, after backward."""
    a, b = Value(-4.0, label="a"), Value(2.0, label="b")
    c = a * b + b**3
    c.label = "c"
    d = (c - a).relu() + c.tanh()
    d.label = "d"
    d.backward()
    return draw_dot(d)


def neuron() -> Picture:
    """One neuron, o = tanh(x1*w1 + x2*w2 + b), after backward: micrograd's lecture example."""
    x1, x2 = Value(2.0, label="x1"), Value(0.0, label="x2")
    w1, w2, b = Value(-3.0, label="w1"), Value(1.0, label="w2"), Value(6.8813735870195432, label="b")
    n = x1 * w1 + x2 * w2 + b
    n.label = "n"
    o = n.tanh()
    o.label = "o"
    o.backward()
    return draw_dot(o, names={"w1": w1, "w2": w2, "b": b})


def mlp_tensor() -> Picture:
    """A two-layer tensorgrad MLP on a batch of four points, with its parameters' names."""
    import tensorgrad as tg
    from tensorgrad import nn
    from tensorgrad.nn.functional import cross_entropy

    tg.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 2))
    x = tg.randn(4, 2)
    x.label = "x"
    loss = cross_entropy(model(x), tg.tensor([0, 1, 1, 0]))
    loss.label = "loss"
    loss.backward(retain_graph=True)  # keep the graph to draw it
    return draw_dot(loss, names=model, rankdir="TB")


def _small_expression() -> Value:
    """L = tanh(a*b + a): `a` is used twice, so its gradient arrives in two steps."""
    a, b = Value(0.5, label="a"), Value(-1.5, label="b")
    L = (a * b + a).tanh()
    L.label = "L"
    return L


def _frames() -> list:
    """Every frame of `backprop_steps` for the small expression, as an RGB image."""
    return [_png(picture) for picture in backprop_steps(_small_expression())]


def backprop_strip(path: Path) -> None:
    """Every frame of `backprop_steps` for the small expression, one under the other."""
    frames = _frames()
    width = max(frame.width for frame in frames)
    strip = _image().new("RGB", (width, sum(frame.height for frame in frames)), "white")
    top = 0
    for frame in frames:
        strip.paste(frame, (0, top))
        top += frame.height
    strip.save(path)


def backprop_gif(path: Path) -> None:
    """The frames of `backprop_strip`, animated: 2.5 s a step, then round again."""
    frames = _frames()
    size = (max(frame.width for frame in frames), max(frame.height for frame in frames))
    padded = []
    for frame in frames:  # frames differ in caption length: give them one size
        canvas = _image().new("RGB", size, "white")
        canvas.paste(frame, (0, 0))
        padded.append(canvas.convert("P", palette=_image().Palette.ADAPTIVE))
    padded[0].save(path, save_all=True, append_images=padded[1:], duration=2500, loop=0)


def _image():
    """Pillow's Image module, with a clear error where it is missing."""
    try:
        from PIL import Image
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("the backprop strip needs Pillow: pip install pillow (matplotlib has it)") from None
    return Image


def _png(picture: Picture):
    return _image().open(io.BytesIO(run_layout(picture.source, "png"))).convert("RGB")


PICTURES: dict[str, Callable[[], Picture]] = {
    "expression.png": expression,
    "neuron.png": neuron,
    "mlp_tensor.png": mlp_tensor,
}
FRAMES: dict[str, Callable[[Path], None]] = {
    "backprop_strip.png": backprop_strip,
    "backprop.gif": backprop_gif,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Write every picture into the folder given on the command line."""
    p = argparse.ArgumentParser(prog="python -m visualize.gallery", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("folder", type=Path, help="where to write the pictures, e.g. docs/images")
    folder = p.parse_args(argv).folder
    folder.mkdir(parents=True, exist_ok=True)
    for name, make in PICTURES.items():
        print("wrote", render(make(), folder / name))
    for name, make_frames in FRAMES.items():
        make_frames(folder / name)
        print("wrote", folder / name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
