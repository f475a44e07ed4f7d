"""`LBFGS`: limited-memory BFGS, a quasi-Newton method that calls the model several times a step.

Each `step(closure)` runs up to `max_iter` iterations. One iteration, on the parameters
flattened into one vector x with gradient g:

    d = -H g                        H: the inverse Hessian estimated from the last
                                    `history_size` pairs (s = x_new - x, y = g_new - g),
                                    by the two-loop recursion (Nocedal and Wright, alg. 7.4)
    x = x + t d                     t = lr, or a step that meets the strong Wolfe
                                    conditions (`line_search_fn="strong_wolfe"`)

and it stops early when the gradient or the change of the loss or of x falls below the
tolerances. The first step is scaled by min(1, 1 / sum|g|), as in PyTorch, whose rule
(after minFunc) this follows decision for decision, so both libraries take the same path.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from scalargrad.engine import enable_grad, no_grad
from tensorgrad.autograd import bump_version
from tensorgrad.device import namespace
from tensorgrad.optim.optimizer import Optimizer, ParamsT, check_options, hyper
from tensorgrad.tensor import Tensor, new_leaf

__all__ = ["LBFGS"]


class LBFGS(Optimizer):
    """L-BFGS, PyTorch's `torch.optim.LBFGS`: `step(closure)` re-evaluates the model through
    `closure` (which zeroes the gradients, computes the loss, calls `backward()` and returns the
    loss) as often as it needs, and returns the loss of the first evaluation.

    One parameter group only (the method works on all parameters as one vector); all on one
    device. Options: `lr` (the step, 1 by default), `max_iter` iterations and `max_eval`
    evaluations per step (max_iter * 5 // 4 by default), `tolerance_grad` (stop when every
    |g| is below it), `tolerance_change` (stop when the loss or x barely moves),
    `history_size` pairs kept, and `line_search_fn` (None or "strong_wolfe"). Its state,
    kept under the first parameter as in PyTorch: `func_evals`, `n_iter`, the direction `d`,
    the step `t`, the history `old_dirs`/`old_stps`/`ro`, `H_diag`, `prev_flat_grad`,
    `prev_loss` and the two-loop buffer `al`.
    """

    def __init__(self, params: ParamsT, lr: float | Tensor = 1, max_iter: int = 20,
                 max_eval: int | None = None, tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9,
                 history_size: int = 100, line_search_fn: str | None = None) -> None:
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {"lr": lr, "max_iter": max_iter, "max_eval": max_eval, "tolerance_grad": tolerance_grad,
                    "tolerance_change": tolerance_change, "history_size": history_size,
                    "line_search_fn": line_search_fn}
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    def _check_group(self, group: dict[str, Any]) -> None:
        check_options("LBFGS", group, "lr")

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Refused after construction: L-BFGS works on one vector of all its parameters."""
        if self.param_groups:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        super().add_param_group(param_group)

    # --- the parameters as one flat vector ------------------------------------------------------

    def _flat_grad(self) -> Any:
        """Every parameter's gradient, flattened and joined (zeros for a parameter without one)."""
        pieces = []
        for p in self._params:
            grad = p.grad.data if isinstance(p.grad, Tensor) else p.grad
            pieces.append(namespace(p.data).zeros(p.data.size, p.data.dtype) if grad is None
                          else grad.reshape(-1))
        return namespace(self._params[0].data).concatenate(pieces)

    def _move(self, step: Any, direction: Any) -> None:
        """x += step * direction, parameter by parameter (an in-place change each)."""
        offset = 0
        for p in self._params:
            n = p.data.size
            p.data += step * direction[offset:offset + n].reshape(p.data.shape)
            bump_version(p)
            offset += n

    def _set(self, values: list[Any]) -> None:
        for p, value in zip(self._params, values, strict=True):
            p.data[...] = value
            bump_version(p)

    def _evaluate_at(self, closure: Callable[[], Any], x: list[Any], t: Any, d: Any) -> tuple[float, Any]:
        """The loss and flat gradient at x + t d; the parameters are put back to x after."""
        self._move(t, d)
        loss = float(closure())
        flat_grad = self._flat_grad()
        self._set(x)
        return loss, flat_grad

    # --- the step -------------------------------------------------------------------------------

    def step(self, closure: Callable[[], Any]) -> Any:  # type: ignore[override]
        """Run up to `max_iter` L-BFGS iterations; returns the loss `closure()` gave first."""
        if closure is None:
            raise RuntimeError("LBFGS.step needs a closure that re-evaluates the model and returns the loss")
        group = self.param_groups[0]
        lr, max_iter, max_eval = float(hyper(group["lr"])), group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]

        def evaluate() -> Any:
            with enable_grad():
                return closure()

        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        with no_grad():
            orig_loss = evaluate()
            loss = float(orig_loss)
            current_evals = 1
            state["func_evals"] += 1
            flat_grad = self._flat_grad()
            if abs(flat_grad).max() <= tolerance_grad:  # already optimal
                return orig_loss
            d, t = _array(state.get("d")), state.get("t")
            old_dirs = [_array(v) for v in state.get("old_dirs", [])]
            old_stps = [_array(v) for v in state.get("old_stps", [])]
            ro, H_diag = list(state.get("ro", [])), state.get("H_diag")  # noqa: N806 - PyTorch's name
            prev_flat_grad, prev_loss = _array(state.get("prev_flat_grad")), state.get("prev_loss")

            n_iter = 0
            while n_iter < max_iter:
                n_iter += 1
                state["n_iter"] += 1
                # The direction: steepest descent at first, then the two-loop recursion.
                if state["n_iter"] == 1:
                    d, old_dirs, old_stps, ro, H_diag = -flat_grad, [], [], [], 1  # noqa: N806
                else:
                    y, s = flat_grad - prev_flat_grad, d * t
                    ys = y.dot(s)
                    if ys > 1e-10:  # keep the pair only where it gives a positive curvature
                        if len(old_dirs) == history_size:
                            old_dirs.pop(0), old_stps.pop(0), ro.pop(0)
                        old_dirs.append(y)
                        old_stps.append(s)
                        ro.append(1.0 / ys)
                        H_diag = ys / y.dot(y)  # noqa: N806 - the initial inverse Hessian's scale
                    if "al" not in state:
                        state["al"] = [None] * history_size
                    d = _two_loop(flat_grad, old_dirs, old_stps, ro, H_diag, state["al"])
                prev_flat_grad = flat_grad.copy()
                prev_loss = loss

                # The step length.
                t = min(1.0, 1.0 / abs(flat_grad).sum()) * lr if state["n_iter"] == 1 else lr
                gtd = flat_grad.dot(d)  # the directional derivative
                if gtd > -tolerance_change:
                    break
                if line_search_fn is not None:
                    if line_search_fn != "strong_wolfe":
                        raise RuntimeError("LBFGS: only 'strong_wolfe' is supported as line_search_fn, got "
                                           f"{line_search_fn!r}")
                    x_init = [p.data.copy() for p in self._params]

                    def along(x: list[Any], step: Any, direction: Any) -> tuple[float, Any]:
                        return self._evaluate_at(evaluate, x, step, direction)

                    loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                        along, x_init, t, d, loss, flat_grad, gtd, max_ls=max_eval - current_evals)
                    self._move(t, d)
                    opt_cond = abs(flat_grad).max() <= tolerance_grad
                else:
                    self._move(t, d)
                    ls_func_evals = 0
                    if n_iter != max_iter:  # the last iteration's loss is not needed
                        loss = float(evaluate())
                        flat_grad = self._flat_grad()
                        opt_cond = abs(flat_grad).max() <= tolerance_grad
                        ls_func_evals = 1
                current_evals += ls_func_evals
                state["func_evals"] += ls_func_evals

                if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                    break
                if abs(d * t).max() <= tolerance_change or abs(loss - prev_loss) < tolerance_change:
                    break  # no progress

        state.update(d=_tensor(d), t=t, old_dirs=[_tensor(v) for v in old_dirs],
                     old_stps=[_tensor(v) for v in old_stps], ro=ro, H_diag=H_diag,
                     prev_flat_grad=_tensor(prev_flat_grad), prev_loss=prev_loss)
        return orig_loss


def _two_loop(flat_grad: Any, old_dirs: list[Any], old_stps: list[Any], ro: list[Any], H_diag: Any,  # noqa: N803
              al: list[Any]) -> Any:
    """-H g by the two-loop recursion over the kept (s, y) pairs, newest first then oldest first."""
    q = -flat_grad
    for i in range(len(old_dirs) - 1, -1, -1):
        al[i] = old_stps[i].dot(q) * ro[i]
        q -= al[i] * old_dirs[i]
    r = q * H_diag
    for i in range(len(old_dirs)):
        be_i = old_dirs[i].dot(r) * ro[i]
        r += (al[i] - be_i) * old_stps[i]
    return r


def _cubic_minimum(x1: float, f1: float, g1: float, x2: float, f2: float, g2: float,
                   bounds: tuple[float, float] | None = None) -> float:
    """The minimiser of the cubic through (x1, f1) and (x2, f2) with slopes g1 and g2, clipped to
    `bounds` (the interval between the points by default); its middle if the cubic has none."""
    low, high = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square < 0:
        return (low + high) / 2.0
    d2 = np.sqrt(d2_square)
    if x1 <= x2:
        at = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        at = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(at, low), high)


def _strong_wolfe(along: Callable, x: list[Any], t: Any, d: Any, f: float, g: Any, gtd: Any,
                  c1: float = 1e-4, c2: float = 0.9, tolerance_change: float = 1e-9,
                  max_ls: int = 25) -> tuple[float, Any, Any, int]:
    """A step t along d meeting the strong Wolfe conditions (sufficient decrease, c1, and a
    flattened slope, c2), found by bracketing and then zooming with cubic interpolation
    (Nocedal and Wright, alg. 3.5-3.6; minFunc's rules). Returns (loss, gradient, t, evaluations)."""
    d_norm = abs(d).max()
    f_new, g_new = along(x, t, d)
    evals = 1
    gtd_new = g_new.dot(d)

    # Bracket: grow t until an interval holds a point that meets the conditions.
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done, ls_iter = False, 0
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket = [[t_prev, f_prev, g_prev, gtd_prev], [t, f_new, g_new, gtd_new]]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, done = [[t, f_new, g_new, gtd_new]], True
            break
        if gtd_new >= 0:
            bracket = [[t_prev, f_prev, g_prev, gtd_prev], [t, f_new, g_new, gtd_new]]
            break
        t_next = _cubic_minimum(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                                bounds=(t + 0.01 * (t - t_prev), t * 10))
        t_prev, f_prev, g_prev, gtd_prev = t, f_new, g_new, gtd_new
        t = t_next
        f_new, g_new = along(x, t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket = [[0, f, g, None], [t, f_new, g_new, None]]

    # Zoom: shrink the bracket until its low end meets the conditions.
    low, high = (0, 1) if bracket[0][1] <= bracket[-1][1] else (1, 0)
    insufficient_progress = False
    while not done and ls_iter < max_ls:
        ends = (bracket[0][0], bracket[1][0])
        if abs(ends[1] - ends[0]) * d_norm < tolerance_change:
            break
        t = _cubic_minimum(bracket[0][0], bracket[0][1], bracket[0][3], bracket[1][0], bracket[1][1],
                           bracket[1][3])
        # A trial too near an end twice (or at it) moves a tenth of the bracket inside instead.
        eps = 0.1 * (max(ends) - min(ends))
        if min(max(ends) - t, t - min(ends)) < eps:
            if insufficient_progress or t >= max(ends) or t <= min(ends):
                t = max(ends) - eps if abs(t - max(ends)) < abs(t - min(ends)) else min(ends) + eps
                insufficient_progress = False
            else:
                insufficient_progress = True
        else:
            insufficient_progress = False
        f_new, g_new = along(x, t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket[low][1]:
            bracket[high] = [t, f_new, g_new, gtd_new]
            low, high = (0, 1) if bracket[0][1] <= bracket[1][1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high][0] - bracket[low][0]) >= 0:
                bracket[high] = bracket[low]
            bracket[low] = [t, f_new, g_new, gtd_new]
    t, f_new, g_new = bracket[low][0], bracket[low][1], bracket[low][2]
    return f_new, g_new, t, evals


def _array(value: Any) -> Any:
    return value.data if isinstance(value, Tensor) else value


def _tensor(value: Any) -> Any:
    """A state vector as a tensor (what state_dict() hands out), None as it is."""
    return None if value is None else new_leaf(value)
