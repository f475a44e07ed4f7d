"""micrograd's own two tests, with exact expected values, and again against PyTorch (float64).

The expressions are copied from micrograd's test suite.
"""

import pytest

from scalargrad import Value


def sanity_check(value):
    x = value(-4.0)
    z = 2 * x + 2 + x
    q = z.relu() + z * x
    h = (z * z).relu()
    y = h + q + q * x
    return x, y


def more_ops(value):
    a = value(-4.0)
    b = value(2.0)
    c = a + b
    d = a * b + b**3
    c += c + 1
    c += 1 + c + (-a)
    d += d * 2 + (b + a).relu()
    d += 3 * d + (b - a).relu()
    e = c - d
    f = e**2
    g = f / 2.0
    g += 10.0 / f
    return a, b, g


def test_sanity_check_exact():
    x, y = sanity_check(Value)
    y.backward()
    assert y.data == -20.0
    assert x.grad == 46.0


def test_more_ops_exact():
    a, b, g = more_ops(Value)
    g.backward()
    assert g.data == pytest.approx(24.70408163265306, rel=1e-14)
    assert a.grad == pytest.approx(138.83381924198252, rel=1e-14)
    assert b.grad == pytest.approx(645.5772594752186, rel=1e-14)
    assert f"{g.data:.4f} {a.grad:.4f} {b.grad:.4f}" == "24.7041 138.8338 645.5773"


def torch_leaf(torch):
    return lambda x: torch.tensor([x], dtype=torch.float64, requires_grad=True)


def test_sanity_check_against_pytorch():
    torch = pytest.importorskip("torch")
    x, y = sanity_check(Value)
    y.backward()
    xt, yt = sanity_check(torch_leaf(torch))
    yt.backward()
    assert y.data == yt.item()
    assert x.grad == xt.grad.item()


def test_more_ops_against_pytorch():
    torch = pytest.importorskip("torch")
    a, b, g = more_ops(Value)
    g.backward()
    at, bt, gt = more_ops(torch_leaf(torch))
    gt.backward()
    assert g.data == pytest.approx(gt.item(), rel=1e-12)
    assert a.grad == pytest.approx(at.grad.item(), rel=1e-12)
    assert b.grad == pytest.approx(bt.grad.item(), rel=1e-12)
