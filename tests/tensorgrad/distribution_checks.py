"""What the tg.distributions tests share: one method of a distribution (log_prob, cdf, icdf,
entropy, mean, ...) evaluated in both libraries, compared in value, shape and dtype, then
differentiated with the same random weights and compared leaf by leaf."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import tensorgrad as tg


def evaluate(dist: Any, method: str, value: Any) -> Any:
    """dist's `method` at `value` (icdf at sigmoid(value), a probability), or its property."""
    attribute = getattr(dist, method)
    if method in ("log_prob", "cdf"):
        return attribute(value)
    if method == "icdf":
        return attribute(value.sigmoid() if hasattr(value, "sigmoid") else value)
    return attribute() if callable(attribute) else attribute


def finite_part(t: Any, lib: Any) -> Any:
    """t with its infinite entries zeroed (they get zero weight, and inf * 0 is NaN)."""
    return lib.where(lib.isfinite(t), t, 0.0)


def assert_method_matches(method: str, ours: Any, our_leaves: dict, our_value: Any, theirs: Any,
                          their_leaves: dict, their_value: Any, rng: np.random.Generator) -> None:
    """The same method of both distributions: PyTorch's outcome (an error, or a value of some shape
    and dtype), then the gradient of a random weighting of it with respect to every leaf."""
    try:
        expected = evaluate(theirs, method, their_value)
    except (NotImplementedError, AttributeError):
        with pytest.raises((NotImplementedError, AttributeError)):
            evaluate(ours, method, our_value)
        return
    got = evaluate(ours, method, our_value)
    assert tuple(got.shape) == tuple(expected.shape)
    assert str(got.dtype) == str(expected.dtype).removeprefix("torch.")
    np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=1e-9, atol=1e-12)
    if not expected.requires_grad:
        return
    weights = np.where(np.isfinite(expected.detach().numpy()), rng.normal(size=tuple(expected.shape)), 0.0)
    try:
        finite_part(expected, torch).mul(torch.tensor(weights)).sum().backward()
    except (NotImplementedError, RuntimeError):  # gammainc's derivative in a: neither library has it
        with pytest.raises(NotImplementedError):
            finite_part(got, tg).mul(tg.tensor(weights)).sum().backward()
        return
    finite_part(got, tg).mul(tg.tensor(weights)).sum().backward()
    for key, leaf in our_leaves.items():
        their_grad = their_leaves[key].grad
        if their_grad is None:
            assert leaf.grad is None or not np.any(leaf.grad), key
            continue
        np.testing.assert_allclose(leaf.grad, their_grad.numpy(), rtol=1e-7, atol=1e-10, err_msg=key)


def assert_samples_fit(dist: Any, dtype: Any) -> None:
    """Draws of several sample shapes: the shape sample_shape + batch + event, the dtype, no graph,
    inside the support, a log_prob of the batch's shape; rsample the same where it exists, else
    NotImplementedError."""
    for sample_shape in ((), (5,), (4, 1)):
        shape = sample_shape + tuple(dist.batch_shape) + tuple(dist.event_shape)
        x = dist.sample(sample_shape)
        assert x.shape == shape and x.dtype == dtype and not x.requires_grad
        assert bool(dist.support.check(x).all())
        assert dist.log_prob(x).shape == sample_shape + tuple(dist.batch_shape)
        if dist.has_rsample:
            assert dist.rsample(sample_shape).shape == shape
        else:
            with pytest.raises(NotImplementedError):
                dist.rsample(sample_shape)


def assert_kl_matches(got: Any, expected: Any, leaf_pairs: list, rng: np.random.Generator) -> None:
    """KL(p || q) from both libraries: value and shape, then the gradient of a random weighting with
    respect to every leaf of p and q (`leaf_pairs`: (ours, theirs) dicts of leaves by name)."""
    assert tuple(got.shape) == tuple(expected.shape)
    np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=1e-9, atol=1e-12)
    if not expected.requires_grad:
        return
    weights = np.where(np.isfinite(expected.detach().numpy()), rng.normal(size=tuple(expected.shape)), 0.0)
    finite_part(got, tg).mul(tg.tensor(weights)).sum().backward()
    finite_part(expected, torch).mul(torch.tensor(weights)).sum().backward()
    for ours, theirs in leaf_pairs:
        for key, leaf in ours.items():
            our_grad = np.zeros(leaf.shape) if leaf.grad is None else leaf.grad
            their_grad = np.zeros(leaf.shape) if theirs[key].grad is None else theirs[key].grad.numpy()
            np.testing.assert_allclose(our_grad, their_grad, rtol=1e-7, atol=1e-10, err_msg=key)


def both_raise(make: Any) -> str:
    """`make(module, lib)` fails in PyTorch (torch.distributions, torch) and here with the same
    exception class; our message, for the caller to check."""
    with pytest.raises(Exception) as theirs:  # noqa: PT011 - the class is PyTorch's answer
        make(torch.distributions, torch)
    from tensorgrad import distributions

    with pytest.raises(theirs.type) as ours:
        make(distributions, tg)
    return str(ours.value)
