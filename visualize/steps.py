"""Backprop step by step: one picture per node the backward pass runs (tutorial chapter 4).

`backprop_steps(root)` runs the engine's own backward pass (`scalargrad.engine.backward` with
its `on_step` hook, never a second loop) and records, after each node's `_backward`, the
gradient that node passed down and what its parents hold now. From those records it draws one
picture before the first step and one per step: the node being processed in red, the gradient
flowing into each parent on its edge ("+= ..."), the parents that just received one filled in
yellow, and only the gradients known at that moment (the others blank). A node used twice gets
a gradient on two steps, so a reader watches `+=` add them up.

Every frame has the same layout: each gradient cell is as wide as the longest text it ever
shows, and each edge carries its label in every frame, transparent but on its step, so nothing
moves while the player steps through.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from scalargrad import engine
from visualize import style
from visualize.dot import (
    MAX_NODES,
    Look,
    Picture,
    Scene,
    check_rankdir,
    emit,
    make_scene,
    mark_backpropagated,
)

__all__ = ["backprop_steps", "MAX_STEPS"]

MAX_STEPS = 1000  # a player of more frames than this teaches nothing; cut the graph smaller


@dataclass
class Step:
    """What one step of the pass did: the node that ran, its gradient, and each parent's after."""

    node: Any
    grad: Any
    parents: list[tuple[Any, Any]]  # (parent, its grad right after this step), duplicates kept


def backprop_steps(
    root: Any,
    names: Any = None,
    rankdir: str = "LR",
    max_nodes: int = MAX_NODES,
    preview: int = 3,
    retain_graph: bool = True,
    caption_in_picture: bool = True,
    max_steps: int = MAX_STEPS,
) -> list[Picture]:
    """Run the backward pass of `root` and return one picture per step, plus one before the first.

    `len(result) == number of inner nodes the pass runs + 1`. Each picture's `caption` explains
    its step in words ("d = c * e: dd/dc = e = -2.0, so c.grad += -2.0 x 1.0"), and is written
    into the picture too unless `caption_in_picture=False` (the HTML player shows it as text).
    Afterwards the leaves hold the gradients a plain `backward()` gives; with the default
    `retain_graph=True` the graph is kept, so it can still be drawn. `names`, `rankdir`,
    `max_nodes` and `preview` are `draw_dot`'s.
    """
    check_rankdir(rankdir, "backprop_steps")
    seed = _seed(root)
    scene = make_scene(root, names, max_nodes)  # before the pass: a freeing pass drops parents
    runs = len(engine.topological_order(root, leaves=False))
    if runs > max_steps:
        raise ValueError(
            f"backprop_steps: the pass has {runs} steps, more than max_steps={max_steps}; "
            "draw a smaller graph or pass a larger max_steps"
        )
    # Every node's, not only the drawn ones': a caption may speak of a node cut from the picture.
    before = {id(node): _copy(_start_grad(node, root, seed)) for node in engine.topological_order(root)}
    steps: list[Step] = []

    def record(node: Any, grad: Any) -> None:
        steps.append(Step(node, _copy(grad), [(parent, _copy(parent._grad)) for parent in node.parents]))

    engine.backward(root, seed, retain_graph=retain_graph, on_step=record)
    if retain_graph:  # a picture drawn of it later shows these gradients as computed
        mark_backpropagated(root)
    return _Frames(scene, root, seed, steps, before, names_for(scene)).pictures(
        rankdir, preview, caption_in_picture
    )


def _seed(root: Any) -> Any:
    """The gradient the pass starts from: 1 in the root's own type, as `backward()` uses."""
    if isinstance(root.data, float):
        return 1.0
    if not getattr(root, "requires_grad", True):
        raise RuntimeError("backprop_steps: the root does not require grad: no input of the graph "
                           "has requires_grad=True, so there is nothing to backpropagate")
    if root.data.size != 1:
        raise RuntimeError(f"backprop_steps: grad can be implicitly created only for scalar outputs; "
                           f"the root has shape {tuple(root.data.shape)}")
    return np.ones_like(root.data)


def _start_grad(node: Any, root: Any, seed: Any) -> Any:
    """A node's gradient once the pass has seeded the root and reset the inner nodes.

    An inner node starts from nothing (the engine resets it to 0.0 or None: either way, what it
    holds later is what the steps added); a leaf keeps what earlier passes accumulated.
    """
    if node is root:
        return seed
    return None if node.op else node._grad


def _copy(grad: Any) -> Any:
    """A snapshot of a gradient: arrays are updated in place by later steps, floats are not."""
    return grad.copy() if hasattr(grad, "copy") else grad


def names_for(scene: Scene) -> dict[int, str]:
    """A name for every node a caption may mention: its own, a constant's value, else n1, n2, ..."""
    names, count = {}, 0
    for shown in scene.nodes:
        if shown.name:
            names[id(shown.node)] = shown.name
        elif shown.kind == "constant":
            names[id(shown.node)] = f"({style.value_text(shown.node.data, 3)})"
        else:
            count += 1
            names[id(shown.node)] = f"n{count}"
    return names


@dataclass
class _State:
    """The gradients at one frame: every node's, which are known, and what this step added."""

    step: Step | None
    deltas: dict[int, tuple[Any, Any]]  # position of a parent's first edge: (parent, added)
    grads: dict[int, Any]  # id(node): its gradient now
    known: set[int]  # ids of the nodes whose gradient has been computed by now
    words: str  # the caption


class _Frames:
    """Turns the recorded steps into pictures: the state of every gradient, frame by frame."""

    def __init__(self, scene: Scene, root: Any, seed: Any, steps: list[Step], before: dict, names: dict):
        self.scene, self.root, self.seed, self.steps, self.names = scene, root, seed, steps, names
        self.index = {id(shown.node): i for i, shown in enumerate(scene.nodes)}
        self.states = self._replay(before)

    def _replay(self, before: dict) -> list[_State]:
        """The state before the first step and after each one, replayed from the records."""
        grads, known = dict(before), {id(self.root)}
        states = [_State(None, {}, dict(grads), set(known), self._opening())]
        for number, step in enumerate(self.steps, start=1):
            was_known = set(known)
            deltas = _deltas(step, grads)
            known |= {id(parent) for parent, _ in deltas.values()}
            words = self._explain(number, step, deltas, grads, was_known)
            states.append(_State(step, deltas, dict(grads), set(known), words))
        return states

    def pictures(self, rankdir: str, preview: int, caption_in_picture: bool) -> list[Picture]:
        """One picture per state, all laid out alike (cells sized for their longest text)."""
        texts = [self._grad_texts(state, preview) for state in self.states]
        widths = [max(len(frame[i]) for frame in texts) for i in range(len(self.scene.nodes))]
        titles = [self.names[id(shown.node)] for shown in self.scene.nodes]
        labels = self._edge_labels()
        frames = []
        for state, grad_texts in zip(self.states, texts, strict=True):
            looks = self._looks(state, grad_texts, widths)
            story = state.words if caption_in_picture else ""
            picture = emit(self.scene, looks, rankdir, preview, story=story, flowing=self._flowing(state),
                           edge_labels=labels, titles=titles)
            picture.caption = state.words
            frames.append(picture)
        return frames

    def _grad_texts(self, state: _State, preview: int) -> list[str]:
        """Each node's gradient cell at one frame."""
        return [style.value_text(state.grads.get(id(shown.node)), preview) for shown in self.scene.nodes]

    def _looks(self, state: _State, grad_texts: list[str], widths: list[int]) -> list[Look]:
        received = {id(parent) for parent, _ in state.deltas.values()}
        active = state.step.node if state.step is not None else None
        return [
            Look(grad=text, visible=id(shown.node) in state.known, received=id(shown.node) in received,
                 active=shown.node is active, grad_width=width)
            for shown, text, width in zip(self.scene.nodes, grad_texts, widths, strict=True)
        ]

    def _flowing(self, state: _State) -> set[tuple[int, int]]:
        """The edges the gradient goes back along on this frame's step: all of the node's inputs."""
        if state.step is None or id(state.step.node) not in self.index:
            return set()
        i = self.index[id(state.step.node)]
        return {(i, position) for position in range(len(state.step.parents))}

    def _edge_labels(self) -> dict[tuple[int, int], str]:
        """What each edge carries back on its step ('+= 2.0'): every frame labels every edge."""
        labels = {}
        for state in self.states[1:]:
            i = self.index.get(id(state.step.node))
            if i is not None:
                for position, (_, delta) in state.deltas.items():
                    # An array's label shows its first value: the cell it flows into shows more.
                    labels[(i, position)] = "+= " + style.value_text(delta, 1)
        return labels

    # --- captions ---------------------------------------------------------------------------------

    def _opening(self) -> str:
        name = self._name(self.root)
        return (f"Before the first step: the pass seeds {name}.grad = {style.value_text(self.seed, 3)} "
                f"(d{name}/d{name} = 1). The other gradients are not known yet: each appears when "
                "a step sends it down. Steps run from the root towards the leaves.")

    def _name(self, node: Any) -> str:
        return self.names.get(id(node), "a node not shown")

    def _explain(self, number: int, step: Step, deltas: dict, grads: dict, was_known: set) -> str:
        """Step `number` in words: which node ran and what it added to each parent."""
        node, out = step.node, self._name(step.node)
        if id(node) not in self.names:  # cut at max_nodes: its formula would name only unseen nodes
            last = number == len(self.steps)
            return (f"Step {number} of {len(self.steps)}: a node not shown (op '{node.op}'; the picture is "
                    f"cut at max_nodes) sends its gradient to its inputs."
                    + (" Done: every leaf now holds the gradient backward() gives." if last else ""))
        words = [f"Step {number} of {len(self.steps)}: {out} = {self._formula(node)}."]
        for parent, delta in deltas.values():
            words.append(self._flow(node, step.grad, parent, delta, grads, id(parent) in was_known))
        receiving = {id(parent) for parent, _ in deltas.values()}
        for parent in dict.fromkeys(parent for parent, _ in step.parents):
            if id(parent) not in receiving:
                words.append(f"{self._name(parent)} gets no gradient (it does not require grad).")
        if number == len(self.steps):
            words.append("Done: every leaf now holds the gradient backward() gives.")
        return " ".join(words)

    def _formula(self, node: Any) -> str:
        names = [self._name(parent) for parent in node.parents]
        if node.op in ("+", "*", "**") and len(names) >= 2:
            return f" {node.op} ".join(names)
        if node.op.startswith("**") and len(names) == 1:
            return f"{names[0]}{node.op}"
        return f"{node.op}({', '.join(names)})"

    def _flow(self, node: Any, grad: Any, parent: Any, delta: Any, grads: dict, was_known: bool) -> str:
        """One parent's share, with the local derivative where the op is a scalar primitive."""
        out, name = self._name(node), self._name(parent)
        now = ""  # a first gradient is what it received; a later one shows the sum
        if was_known:
            total = style.value_text(grads.get(id(parent)), 3)
            if isinstance(delta, float):
                total = f"{style.number(grads[id(parent)] - delta)} + {style.number(delta)} = {total}"
            now = f" (now {total})"
        local = _local_derivative(node, parent, self._name) if isinstance(grad, float) else None
        if local is not None and math.isclose(local[1] * grad, delta, rel_tol=1e-9, abs_tol=1e-12):
            formula, value = local
            equals = "" if _is_number(formula, value) else f" = {style.number(value)}"
            return (f"d{out}/d{name} = {formula}{equals}, so {name}.grad += "
                    f"{style.number(value)} x {style.number(grad)}{now}.")
        return f"{name}.grad += {style.value_text(delta, 3)}{now}."


def _is_number(formula: str, value: float) -> bool:
    """Whether `formula` is already the number `value` ('1', '(-1.0)'): no need to repeat it."""
    try:
        return float(formula.strip("()")) == value
    except ValueError:
        return False


def _deltas(step: Step, grads: dict) -> dict[int, tuple[Any, Any]]:
    """{position of a parent's first edge: (parent, what this step added)}; updates `grads`."""
    deltas = {}
    for position, (parent, after) in enumerate(step.parents):
        if any(earlier is parent for earlier, _ in step.parents[:position]):
            continue  # a parent read twice (a * a) gets one sum: shown on its first edge
        if after is None:
            continue  # a tensor that needs no gradient: nothing flows into it
        old = grads.get(id(parent))
        deltas[position] = (parent, after if old is None else after - old)
        grads[id(parent)] = after
    return deltas


def _local_derivative(node: Any, parent: Any, name: Any) -> tuple[str, float] | None:
    """d node / d parent of a scalar primitive, as (formula, value); None for other ops.

    `name(node)` is how the caption calls a node. Only for captions: the gradients themselves
    come from the engine's pass, and a caption shows this formula only where it agrees.
    """
    parents, op, x, out = node.parents, node.op, parent.data, node.data
    if sum(p is parent for p in parents) != 1:
        return None  # a parent read twice: its share is the sum of two formulas
    if op == "+":
        return "1", 1.0
    if op == "*" and len(parents) == 2:
        other = parents[1] if parents[0] is parent else parents[0]
        return name(other), other.data
    if op.startswith("**") and len(parents) == 1 and op[2:]:
        k = float(op[2:])
        try:
            value = k * x ** (k - 1)
        except (ZeroDivisionError, OverflowError):
            return None
        if not isinstance(value, float):  # a negative base to a fractional power is complex
            return None
        return f"{k:g} * {name(parent)}**{k - 1:g}", value
    x_name, out_name = name(parent), name(node)
    table = {
        "relu": (f"(1 if {x_name} > 0 else 0)", 1.0 if x > 0 else 0.0),
        "tanh": (f"1 - {out_name}**2", 1 - out**2),
        "exp": (out_name, out),
        "log": (f"1 / {x_name}", 1 / x if x else math.inf),
        "sigmoid": (f"{out_name} * (1 - {out_name})", out * (1 - out)),
    }
    return table.get(op)
