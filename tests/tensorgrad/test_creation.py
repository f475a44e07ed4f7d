"""Creation and randomness: PyTorch's signatures, dtypes, errors, and distributions that hold."""

import numpy as np
import pytest

import tensorgrad as tg


@pytest.mark.parametrize("alias, name", [
    ("float", "float32"), ("double", "float64"), ("half", "float16"), ("long", "int64"), ("int", "int32"),
    ("short", "int16"), ("bool", "bool"), ("int8", "int8"), ("uint8", "uint8"), ("float16", "float16"),
])
def test_dtype_aliases_are_pytorchs(alias, name):
    assert getattr(tg, alias) == np.dtype(name)
    torch = pytest.importorskip("torch")
    assert str(getattr(torch, alias)) == f"torch.{name}"


@pytest.mark.parametrize("build", [
    lambda m: m.linspace(0, 1, 5),
    lambda m: m.linspace(-2.5, 3, 7, dtype=m.float64),
    lambda m: m.linspace(0, 10, 5, dtype=m.int64),
    lambda m: m.linspace(3, 3, 1),
    lambda m: m.linspace(0, 1, 0),
    lambda m: m.logspace(0, 2, 3),
    lambda m: m.logspace(-1, 1, 5, base=2.0, dtype=m.float64),
    lambda m: m.empty(2, 3).shape,
    lambda m: m.empty((0, 4), dtype=m.int64).shape,
])
def test_deterministic_creation_matches_pytorch(build):
    torch = pytest.importorskip("torch")
    ours, theirs = build(tg), build(torch)
    if isinstance(ours, tuple):
        assert ours == tuple(theirs)
        return
    assert str(ours.dtype) == str(theirs.dtype).replace("torch.", "")
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


@pytest.mark.parametrize("build, error", [
    (lambda m: m.linspace(0, 1, -1), RuntimeError),
    (lambda m: m.linspace(0, 1, 2.5), TypeError),
    (lambda m: m.randint(5, 3, (2,)), RuntimeError),
    (lambda m: m.randint(5, (2.5,)), TypeError),
    (lambda m: m.randperm(-1), RuntimeError),
    (lambda m: m.empty(-2), RuntimeError),
    (lambda m: m.multinomial(m.tensor([-1.0, 1.0]), 1), RuntimeError),
    (lambda m: m.multinomial(m.tensor([0.5, 0.5]), 3), RuntimeError),
    (lambda m: m.multinomial(m.tensor([[[0.5]]]), 1), RuntimeError),
    (lambda m: m.zeros(3, requires_grad=True).normal_(), RuntimeError),
    (lambda m: m.zeros(3, requires_grad=True).uniform_(), RuntimeError),
    (lambda m: m.bernoulli(m.tensor([1.5])), RuntimeError),
])
def test_bad_arguments_raise_pytorchs_error(build, error):
    torch = pytest.importorskip("torch")
    with pytest.raises(error):
        build(torch)
    with pytest.raises(error):
        build(tg)


def test_randint_and_randperm_give_int64_in_range_and_follow_their_generator():
    g1, g2 = tg.Generator().manual_seed(3), tg.Generator().manual_seed(3)
    a = tg.randint(-2, 5, (1000,), generator=g1)
    assert a.dtype == tg.int64 and a.shape == (1000,)
    assert a.numpy().min() == -2 and a.numpy().max() == 4
    np.testing.assert_array_equal(a.numpy(), tg.randint(-2, 5, (1000,), generator=g2).numpy())
    assert tg.randint(7, (2, 3)).shape == (2, 3)
    perm = tg.randperm(50, generator=g1)
    assert perm.dtype == tg.int64 and sorted(perm.tolist()) == list(range(50))
    tg.manual_seed(1)
    first = tg.randperm(10).tolist()
    tg.manual_seed(1)
    assert tg.randperm(10).tolist() == first


def test_multinomial_with_replacement_follows_the_weights():
    tg.manual_seed(0)
    weights = tg.tensor([1.0, 0.0, 3.0])           # unnormalised, as PyTorch allows
    draws = tg.multinomial(weights, 20000, replacement=True)
    assert draws.dtype == tg.int64 and draws.shape == (20000,)
    freq = np.bincount(draws.numpy(), minlength=3) / 20000
    np.testing.assert_allclose(freq, [0.25, 0.0, 0.75], atol=0.015)


def test_multinomial_without_replacement_never_repeats_and_favours_heavy_categories():
    g = tg.Generator().manual_seed(0)
    rows = tg.tensor([[10.0, 1.0, 1.0, 0.0], [0.0, 0.0, 1.0, 1.0]])
    firsts = []
    for _ in range(400):
        draws = tg.multinomial(rows, 2, generator=g)
        assert draws.shape == (2, 2)
        assert all(len(set(row)) == 2 for row in draws.tolist())
        assert set(draws.tolist()[1]) == {2, 3}    # a zero weight is never drawn while others remain
        firsts.append(draws.tolist()[0][0])
    assert np.mean(np.array(firsts) == 0) == pytest.approx(10 / 12, abs=0.06)


def test_bernoulli_draws_ones_with_the_given_probability():
    tg.manual_seed(0)
    p = tg.full((20000,), 0.3)
    draws = tg.bernoulli(p)
    assert draws.dtype == tg.float32 and set(np.unique(draws.numpy())) <= {0.0, 1.0}
    assert draws.numpy().mean() == pytest.approx(0.3, abs=0.015)
    assert tg.zeros(5).bernoulli(1.0).tolist() == [1.0] * 5
    assert tg.tensor([0.0, 1.0]).bernoulli().tolist() == [0.0, 1.0]


def test_normal_and_uniform_fill_in_place_with_the_right_moments():
    tg.manual_seed(0)
    t = tg.zeros(20000, dtype=tg.float64)
    version = t._version
    assert t.normal_(2.0, 0.5) is t and t._version == version + 1
    assert t.numpy().mean() == pytest.approx(2.0, abs=0.02)
    assert t.numpy().std() == pytest.approx(0.5, abs=0.02)
    t.uniform_(-1.0, 3.0)
    assert t.numpy().min() >= -1.0 and t.numpy().max() < 3.0
    assert t.numpy().mean() == pytest.approx(1.0, abs=0.05)
    w = tg.zeros(4, requires_grad=True)
    with tg.no_grad():
        w.normal_()
    assert w.requires_grad and np.all(w.data != 0)
