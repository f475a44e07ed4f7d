"""L-BFGS against PyTorch's: the same path (losses, parameters, evaluation and iteration counts)
in float64, with and without the strong Wolfe line search, across the history limit; its state,
state dict and errors."""

from __future__ import annotations

import numpy as np
import pytest

import tensorgrad as tg

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
A, B = RNG.standard_normal((20, 5)), RNG.standard_normal(20)


def _problem(m, dtype):
    """Two parameters and a closure over a smooth, non-quadratic loss, in library `m`."""
    w = m.zeros(5, dtype=dtype, requires_grad=True)
    v = m.ones(2, dtype=dtype, requires_grad=True)
    a, b = m.tensor(A, dtype=dtype), m.tensor(B, dtype=dtype)

    def loss_of():
        r = a @ w - b
        return (r * r).mean() + ((v - 3) ** 4).sum() + (w ** 4).sum() * 0.1
    return [w, v], loss_of


def _run(m, steps=3, **options):
    params, loss_of = _problem(m, m.float64)
    opt = m.optim.LBFGS(params, **options)

    def closure():
        opt.zero_grad()
        loss = loss_of()
        loss.backward()
        return loss
    losses = [float(opt.step(closure).detach()) for _ in range(steps)]
    state = opt.state[params[0]]
    return opt, params, losses, (state["func_evals"], state["n_iter"])


@pytest.mark.parametrize("options", [
    dict(),
    dict(line_search_fn="strong_wolfe"),
    dict(history_size=2, max_iter=7),
    dict(history_size=2, line_search_fn="strong_wolfe", lr=0.5),
    dict(max_iter=4, max_eval=6, line_search_fn="strong_wolfe"),
    dict(tolerance_change=1e-3, lr=0.3),
])
def test_lbfgs_follows_pytorchs_path(options):
    _, ours, our_losses, our_counts = _run(tg, **options)
    _, theirs, their_losses, their_counts = _run(torch, **options)
    assert our_counts == their_counts
    np.testing.assert_allclose(our_losses, their_losses, rtol=1e-12)
    for mine, reference in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(mine.detach().numpy(), reference.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_lbfgs_finds_the_minimum_of_rosenbrocks_valley():
    def minimise(m):
        xy = m.tensor([-1.5, 2.0], dtype=m.float64, requires_grad=True)
        opt = m.optim.LBFGS([xy], line_search_fn="strong_wolfe", max_iter=100)

        def closure():
            opt.zero_grad()
            x, y = xy[0], xy[1]
            loss = (1 - x) ** 2 + 100 * (y - x ** 2) ** 2
            loss.backward()
            return loss
        first = opt.step(closure).item()
        return first, xy.detach().numpy(), opt.state[xy]["func_evals"]
    first, ours, evaluations = minimise(tg)
    assert first == pytest.approx(2.5 ** 2 + 100 * 0.25 ** 2)
    np.testing.assert_allclose(ours, [1.0, 1.0], atol=1e-5)
    _, theirs, their_evaluations = minimise(torch)
    np.testing.assert_allclose(ours, theirs, rtol=1e-10)
    assert evaluations == their_evaluations


def test_lbfgs_keeps_pytorchs_state_and_resumes_from_a_state_dict():
    opt, params, _, _ = _run(tg, steps=2, history_size=3)
    _, their_params, _, _ = _run(torch, steps=2, history_size=3)
    reference = torch.optim.LBFGS(their_params, history_size=3)
    assert set(opt.state[params[0]]) == {"func_evals", "n_iter", "d", "t", "old_dirs", "old_stps", "ro",
                                         "H_diag", "prev_flat_grad", "prev_loss", "al"}
    assert set(opt.state_dict()["param_groups"][0]) == set(reference.state_dict()["param_groups"][0])

    # Resume: a fresh optimizer loaded from the state dict goes on exactly as the first one.
    saved = opt.state_dict()
    copies = [p.detach().clone().requires_grad_() for p in params]
    resumed = tg.optim.LBFGS(copies, history_size=3)
    resumed.load_state_dict(saved)
    for optimizer, (w, v) in ((opt, params), (resumed, copies)):
        def closure(optimizer=optimizer, w=w, v=v):
            optimizer.zero_grad()
            r = tg.tensor(A) @ w - tg.tensor(B)
            loss = (r * r).mean() + ((v - 3) ** 4).sum() + (w ** 4).sum() * 0.1
            loss.backward()
            return loss
        optimizer.step(closure)
    for a, b in zip(params, copies, strict=True):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def test_lbfgs_calls_the_closure_with_gradients_on_and_returns_the_first_loss():
    w = tg.tensor([3.0], dtype=tg.float64, requires_grad=True)
    opt = tg.optim.LBFGS([w])
    seen = []

    def closure():
        seen.append(tg.is_grad_enabled())
        opt.zero_grad()
        loss = ((w - 1) ** 2).sum()
        loss.backward()
        return loss
    with tg.no_grad():
        first = opt.step(closure)
    assert all(seen) and len(seen) > 1
    assert first.item() == 4.0
    assert w.item() == pytest.approx(1.0)


def test_lbfgs_errors_are_pytorchs():
    w, v = tg.zeros(2, requires_grad=True), tg.zeros(2, requires_grad=True)
    with pytest.raises(ValueError, match="parameter groups"):
        tg.optim.LBFGS([{"params": [w]}, {"params": [v]}])
    with pytest.raises(ValueError):
        tg.optim.LBFGS([w], lr=-1.0)
    with pytest.raises(ValueError):
        torch.optim.LBFGS([torch.zeros(2, requires_grad=True)], lr=-1.0)
    opt = tg.optim.LBFGS([w], line_search_fn="armijo")

    def closure():
        opt.zero_grad()
        loss = ((w - 1) ** 2).sum()
        loss.backward()
        return loss
    with pytest.raises(RuntimeError, match="strong_wolfe"):
        opt.step(closure)
    with pytest.raises(ValueError, match="parameter groups"):
        tg.optim.LBFGS([w]).add_param_group({"params": [v]})


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_keeps_foreign_arrays(line_search_fn):
    """On the GPU stand-in (`foreign_array.py`) the path is the same and the arrays stay foreign."""
    from foreign_array import foreign, is_foreign

    def minimise(convert):
        w = tg.from_numpy(convert(np.zeros(5))).requires_grad_()
        a, b = tg.from_numpy(convert(A)), tg.from_numpy(convert(B))
        opt = tg.optim.LBFGS([w], line_search_fn=line_search_fn, history_size=3)

        def closure():
            opt.zero_grad()
            r = a @ w - b
            loss = (r * r).mean() + (w ** 4).sum() * 0.1
            loss.backward()
            return loss
        for _ in range(2):
            opt.step(closure)
        return w, opt.state[w]
    plain, _ = minimise(np.array)
    moved, state = minimise(foreign)
    assert is_foreign(moved.data) and is_foreign(state["d"].data) and is_foreign(state["prev_flat_grad"].data)
    np.testing.assert_allclose(np.asarray(moved.data), plain.detach().numpy(), rtol=1e-12)
