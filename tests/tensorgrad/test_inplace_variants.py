"""PyTorch's in-place variants (`acos_`, `divide_`, `lt_`, `cumsum_`, ...) and NumPy's alias names
(`arccos`, `divide`, `less`, ...), each checked against PyTorch from one table.

An in-place op is its out-of-place op written back into self: the values, self's dtype kept (a
comparison writes 0 and 1 in it), an error where the result can't be stored in self's dtype
(`int_t.sqrt_()`), the gradient through a non-leaf, the refusal on a leaf that requires grad,
and the version counter that makes a backward pass which saved the old values raise.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from foreign_array import is_foreign
from test_foreign_arrays import check_same, run_twice

import tensorgrad as tg

torch = pytest.importorskip("torch")

DTYPES = {"float32": (tg.float32, torch.float32), "float64": (tg.float64, torch.float64),
          "int64": (tg.int64, torch.int64)}

# Self's values by domain, as floats and as integers; shape (2, 4), no element at a kink or a jump.
DOMAINS = {
    "any": ([[-2.3, -0.7, 0.2, 0.4], [1.6, 2.5, -1.2, 3.1]], [[-3, -1, 0, 2], [1, 4, -2, 3]]),
    "zeros": ([[-2.3, 0.0, 0.0, 0.4], [1.6, 0.0, -1.2, 3.1]], [[-3, 0, 0, 2], [1, 0, -2, 3]]),
    "unit": ([[-0.9, -0.5, 0.1, 0.3], [0.6, 0.8, -0.2, 0.7]], [[-1, 0, 1, 0], [1, 0, -1, 1]]),
    "pos": ([[0.3, 0.7, 1.2, 2.5], [0.1, 3.2, 1.7, 0.9]], [[1, 2, 3, 4], [5, 1, 2, 7]]),
    "gt1": ([[1.3, 1.7, 2.2, 3.5], [1.1, 4.2, 2.7, 1.9]], [[2, 3, 4, 5], [6, 2, 3, 8]]),
    "prob": ([[0.1, 0.3, 0.45, 0.6], [0.7, 0.85, 0.25, 0.55]], [[0, 1, 0, 1], [1, 0, 1, 0]]),
    "bits": ([[1.0, 6.0, 0.0, 5.0], [3.0, 12.0, 7.0, 2.0]], [[1, 6, 0, 5], [3, 12, 7, 2]]),
}
WEIGHTS = np.arange(1.0, 9.0).reshape(2, 4)  # so that every element's gradient differs


@dataclass(frozen=True)
class Arg:
    """A tensor argument: `values`, in self's dtype unless `dtype` names one ("int64" for an index)."""

    values: Any
    dtype: str | None = None

    def make(self, lib: Any, dtype_name: str, requires_grad: bool = False) -> Any:
        name = self.dtype or dtype_name
        dtype = DTYPES[name][0 if lib is tg else 1]
        values = self.values if name != "int64" else np.rint(np.asarray(self.values)).astype(int).tolist()
        t = lib.tensor(values, dtype=dtype)
        return t.requires_grad_() if requires_grad and self.carries_grad(dtype_name) else t

    def carries_grad(self, dtype_name: str) -> bool:
        return (self.dtype or dtype_name) != "int64"


ANY4 = Arg([1.5, -2.5, 2.0, -0.75])  # nonzero as integers too (2, -2, 2, -1)
POS4 = Arg([0.5, 1.5, 2.0, 0.25])
CMP4 = Arg([0.4, -0.7, 1.0, 3.1])  # equal to some of self's elements ("any" domain's last column)
LOGIC4 = Arg([0.0, 1.5, 0.0, -2.0])
BITS4 = Arg([1, 2, 3, 5], "int64")
SHIFT4 = Arg([1, 2, 0, 3], "int64")
INDEX = Arg([[0, 1, 0], [2, 0, 2]], "int64")
SRC = Arg([[0.5, -1.5, 2.0], [1.25, -0.75, 3.0]])


@dataclass(frozen=True)
class Case:
    """`self.name(*args, **kwargs)` on a tensor of `domain`'s values.

    grad: "yes" (the gradient equals PyTorch's), "raises" (backward raises in both: no derivative),
    "outofplace" (PyTorch has no derivative for the in-place form: equal to its out-of-place op's),
    "zero" (0, where PyTorch does not record the op at all), None (no float input).
    """

    name: str
    domain: str = "any"
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    grad: str | None = "yes"
    smooth: bool = True  # finite differences apply (not a step, whose derivative is 0)
    key: str = ""

    @property
    def id(self) -> str:
        return self.name + (f"-{self.key}" if self.key else "")


STEP = {"smooth": False}
COMPARE = {"grad": "yes", "smooth": False}

CASES = [
    Case("absolute_"), Case("acos_", "unit"), Case("arccos_", "unit"), Case("asin_", "unit"),
    Case("arcsin_", "unit"), Case("atan_"), Case("arctan_"),
    Case("acosh_", "gt1", grad="outofplace"), Case("arccosh_", "gt1", grad="outofplace"),
    Case("asinh_", grad="outofplace"), Case("arcsinh_", grad="outofplace"),
    Case("atanh_", "unit", grad="outofplace"), Case("arctanh_", "unit", grad="outofplace"),
    Case("cosh_"), Case("sinh_"), Case("tan_", "unit"), Case("deg2rad_"), Case("rad2deg_"),
    Case("erf_"), Case("erfc_"), Case("exp2_"), Case("expm1_"), Case("fix_", **STEP), Case("frac_"),
    Case("log10_", "pos"), Case("log1p_", "pos"), Case("log2_", "pos"), Case("logit_", "prob"),
    Case("logit_", "prob", kwargs={"eps": 0.2}, key="eps"), Case("negative_"), Case("rsqrt_", "pos"),
    Case("sgn_", **STEP), Case("sinc_"),
    Case("atan2_", args=(ANY4,)), Case("arctan2_", args=(ANY4,)),
    Case("copysign_", args=(ANY4,)), Case("copysign_", args=(-1.0,), key="scalar"),
    Case("float_power_", args=(2,), key="int"), Case("float_power_", "pos", args=(POS4,)),
    Case("floor_divide_", args=(ANY4,), grad="raises"),
    Case("floor_divide_", args=(2,), grad="raises", key="scalar"),
    Case("heaviside_", "zeros", args=(Arg([0.5, 0.25, 1.0, 0.0]),), grad="raises"),
    Case("hypot_", args=(ANY4,)), Case("xlogy_", "zeros", args=(POS4,)),
    Case("xlogy_", args=(2.0,), key="scalar"),
    Case("true_divide_", args=(ANY4,)), Case("true_divide_", args=(2,), key="scalar"),
    Case("divide_", args=(ANY4,)), Case("divide_", args=(2,), key="scalar"),
    Case("divide_", args=(ANY4,), kwargs={"rounding_mode": "floor"}, key="floor", **STEP),
    Case("divide_", args=(-2,), kwargs={"rounding_mode": "trunc"}, key="trunc", **STEP),
    Case("multiply_", args=(ANY4,)), Case("multiply_", args=(2.5,), key="float"),
    Case("multiply_", args=(3,), key="int"),
    Case("subtract_", args=(ANY4,)), Case("subtract_", args=(ANY4,), kwargs={"alpha": 3}, key="alpha"),
    Case("cumsum_", args=(1,)), Case("cumsum_", args=(0,), key="dim0"),
    Case("cumsum_", args=(-1,), kwargs={"dtype": tg.float64}, key="dtype64"),
    Case("cumprod_", args=(1,)),
    Case("cumprod_", args=(0,), kwargs={"dtype": tg.int64}, grad=None, key="dtype_int"),
    Case("tril_"), Case("tril_", args=(1,), key="1"), Case("triu_"),
    Case("triu_", kwargs={"diagonal": -1}, key="-1"),
    Case("logical_and_", args=(LOGIC4,), grad="zero", smooth=False),
    Case("logical_or_", args=(LOGIC4,), grad="zero", smooth=False),
    Case("logical_xor_", args=(LOGIC4,), grad="zero", smooth=False),
    Case("logical_xor_", args=(0,), grad=None, key="scalar"),  # a TypeError: other must be a tensor
    Case("atan2_", args=(2.0,), grad=None, key="scalar"),
    Case("heaviside_", args=(0.5,), grad=None, key="scalar"),
    Case("logical_not_", "zeros", grad="zero", smooth=False),
    *(Case(name, "bits", args=(BITS4,), grad=None)
      for name in ("bitwise_and_", "bitwise_or_", "bitwise_xor_")),
    Case("bitwise_and_", "bits", args=(6,), grad=None, key="scalar"),
    Case("bitwise_not_", "bits", grad=None),
    Case("bitwise_left_shift_", "bits", args=(SHIFT4,), grad=None),
    Case("bitwise_right_shift_", "bits", args=(SHIFT4,), grad=None),
    *(Case(name, args=(CMP4,), **COMPARE) for name in (
        "eq_", "ne_", "lt_", "le_", "gt_", "ge_", "greater_", "greater_equal_", "less_", "less_equal_",
        "not_equal_")),
    Case("lt_", args=(0.4,), key="scalar", **COMPARE), Case("eq_", args=(2,), key="int", **COMPARE),
    *(Case("scatter_reduce_", args=(1, INDEX, SRC, reduce), key=reduce)
      for reduce in ("sum", "prod", "mean", "amax", "amin")),
    Case("scatter_reduce_", args=(1, INDEX, SRC, "sum"), kwargs={"include_self": False}, key="exclude"),
]
IDS = [case.id for case in CASES]
assert len(set(IDS)) == len(IDS)


def _self(lib: Any, case: Case, dtype_name: str, requires_grad: bool = False) -> Any:
    floats, ints = DOMAINS[case.domain]
    t = lib.tensor(ints if dtype_name == "int64" else floats, dtype=DTYPES[dtype_name][0 if lib is tg else 1])
    return t.requires_grad_() if requires_grad else t


def _args(lib: Any, case: Case, dtype_name: str, requires_grad: bool = False) -> tuple[list, list]:
    """The call's arguments for `lib`, and those of them that are tensors asked to carry a gradient."""
    args, leaves = [], []
    for a in case.args:
        if isinstance(a, Arg):
            t = a.make(lib, dtype_name, requires_grad)
            args.append(t)
            if requires_grad and a.carries_grad(dtype_name):
                leaves.append(t)
        else:
            args.append(a)
    return args, leaves


def _kwargs(lib: Any, case: Case) -> dict:
    if lib is tg:
        return case.kwargs
    return {k: (torch.float64 if v is tg.float64 else torch.int64 if v is tg.int64 else v)
            for k, v in case.kwargs.items()}


def _run(fn: Any) -> tuple[Any, BaseException | None]:
    try:
        return fn(), None
    except Exception as error:  # noqa: BLE001 - the error is the answer compared
        return None, error


def _assert_same_error(ours: BaseException | None, theirs: BaseException, what: str) -> None:
    assert ours is not None, f"{what}: PyTorch raises {type(theirs).__name__} ({theirs}), tensorgrad doesn't"
    assert isinstance(ours, type(theirs)), f"{what}: {type(ours).__name__} ({ours}) vs PyTorch's {theirs!r}"


def _close(ours: np.ndarray, theirs: Any) -> None:
    theirs = theirs.detach().numpy() if hasattr(theirs, "detach") else np.asarray(theirs)
    assert ours.dtype == theirs.dtype, (ours.dtype, theirs.dtype)
    tight = ours.dtype == np.float64
    np.testing.assert_allclose(ours, theirs, rtol=1e-12 if tight else 1e-6, atol=1e-12 if tight else 1e-6)


# --- the table: values and dtypes, on float32, float64 and int64 ------------------------------


@pytest.mark.parametrize("dtype_name", list(DTYPES))
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_inplace_values_and_errors_match_torch(case, dtype_name):
    expected, error = _run(lambda: _call(torch, case, dtype_name))
    got, ours = _run(lambda: _call(tg, case, dtype_name))
    if error is not None:
        _assert_same_error(ours, error, f"{case.id} on {dtype_name}")
        if isinstance(error, RuntimeError) and "cast" in str(error):
            assert case.name in str(ours)  # the message names the op
        return
    assert ours is None, f"{case.id} on {dtype_name}: {ours!r}"
    t, out = got
    assert out is t, "an in-place op returns self"
    assert t.dtype == DTYPES[dtype_name][0] and t.shape == (2, 4)
    _close(t.numpy(), expected[1])


def _call(lib: Any, case: Case, dtype_name: str) -> tuple[Any, Any]:
    t = _self(lib, case, dtype_name)
    args, _ = _args(lib, case, dtype_name)
    return t, getattr(t, case.name)(*args, **_kwargs(lib, case))


# --- gradients through a non-leaf -------------------------------------------------------------

GRAD_CASES = [case for case in CASES if case.grad is not None]
GRAD_IDS = [case.id for case in GRAD_CASES]


def _grads(lib: Any, case: Case, dtype_name: str, view: bool = False, name: str | None = None):
    """x leaf, y = x * 1, y.OP_(...) (through a view of y with `view`), backward of (y * WEIGHTS).sum():
    the values and the gradients of x and of every float tensor argument."""
    x = _self(lib, case, dtype_name, requires_grad=True)
    args, leaves = _args(lib, case, dtype_name, requires_grad=True)
    y = x * 1
    target = (y[:, :] if case.name == "scatter_reduce_" else y[1:]) if view else y
    if name is None:
        # (PyTorch's sgn_ backward takes seconds to set up its zero gradient: sign_ is the same op on reals)
        method = "sign_" if lib is torch and case.name == "sgn_" else case.name
        getattr(target, method)(*args, **_kwargs(lib, case))
    else:  # the out-of-place op, written back by hand
        y = getattr(y, name)(*args, **_kwargs(lib, case))
    weights = lib.tensor(WEIGHTS, dtype=x.dtype)
    (y * weights).sum().backward()
    grads = [t.grad if lib is tg or t.grad is None else t.grad.numpy() for t in (x, *leaves)]
    return y.detach().numpy() if lib is torch else y.data.copy(), grads


@pytest.mark.parametrize("dtype_name", ["float32", "float64"])
@pytest.mark.parametrize("case", GRAD_CASES, ids=GRAD_IDS)
def test_inplace_gradient_through_a_non_leaf_matches_torch(case, dtype_name):
    name = case.name.rstrip("_") if case.grad == "outofplace" else None
    expected, error = _run(lambda: _grads(torch, case, dtype_name, name=name))
    got, ours = _run(lambda: _grads(tg, case, dtype_name))
    assert (error is not None) == (case.grad == "raises") or case.name in ("float_power_", "cumsum_")
    if error is not None:  # no derivative (backward raises), or a result dtype self can't hold
        _assert_same_error(ours, error, case.id)
        return
    assert ours is None, f"{case.id}: {ours!r}"
    (values, theirs), (got, ours) = expected, got
    _close(got, values)
    if case.grad == "zero":
        # PyTorch records no node for logical_*_ (the old gradient passes as if nothing happened):
        # here, as for its comparisons (lt_), the slope of a step, 0.
        assert all(g is not None and not g.any() for g in ours)
        return
    assert len(ours) == len(theirs)
    for i, (g, expected) in enumerate(zip(ours, theirs, strict=True)):
        assert (g is None) == (expected is None), f"input {i}"
        if g is not None:
            _close(g, expected)


# (PyTorch has no derivative for acosh_, asinh_, atanh_ in place: compared out of place above)
@pytest.mark.parametrize("case", [c for c in GRAD_CASES if c.grad == "yes"],
                         ids=[c.id for c in GRAD_CASES if c.grad == "yes"])
def test_inplace_gradient_through_a_view_matches_torch(case):
    values, theirs = _grads(torch, case, "float64", view=True)
    got, ours = _grads(tg, case, "float64", view=True)
    _close(got, values)
    for g, expected in zip(ours, theirs, strict=True):
        _close(g, expected)


SMOOTH = [case for case in GRAD_CASES if case.grad in ("yes", "outofplace") and case.smooth]


@pytest.mark.parametrize("case", SMOOTH, ids=[case.id for case in SMOOTH])
def test_inplace_gradient_matches_finite_differences(case):
    x = _self(tg, case, "float64", requires_grad=True)
    args, leaves = _args(tg, case, "float64", requires_grad=True)
    positions = [i for i, a in enumerate(args) if any(a is leaf for leaf in leaves)]

    def fn(x, *grad_args):
        call = list(args)
        for i, a in zip(positions, grad_args, strict=True):
            call[i] = a
        return getattr(x * 1, case.name)(*call, **case.kwargs)

    assert tg.gradcheck(fn, [x, *leaves])


# --- what an in-place op refuses, and the version counter --------------------------------------


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_inplace_on_a_leaf_that_requires_grad_raises_as_in_torch(case):
    def change(lib):
        x = _self(lib, case, "float64", requires_grad=True)
        args, _ = _args(lib, case, "float64")
        getattr(x, case.name)(*args, **_kwargs(lib, case))

    _, error = _run(lambda: change(torch))
    _, ours = _run(lambda: change(tg))
    if case.grad == "zero":
        # PyTorch records nothing for logical_*_ and lets them change the leaf; here they are
        # recorded (zero gradient), so the leaf is refused as for every other recorded op.
        assert error is None and isinstance(ours, RuntimeError) and "leaf" in str(ours)
    else:
        _assert_same_error(ours, error, case.id)
    # Outside the graph the leaf may change, as an optimizer's step changes it.
    with torch.no_grad():
        expected, error = _run(lambda: change(torch))
    with tg.no_grad():
        _, ours = _run(lambda: change(tg))
    if error is not None:
        _assert_same_error(ours, error, case.id + " under no_grad")
    else:
        assert ours is None, f"{case.id} under no_grad: {ours!r}"


@pytest.mark.parametrize("case", [c for c in GRAD_CASES if c.grad != "raises"],
                         ids=[c.id for c in GRAD_CASES if c.grad != "raises"])
def test_inplace_bumps_the_version_counter(case):
    def change_saved(lib):
        x = _self(lib, case, "float64", requires_grad=True)
        args, _ = _args(lib, case, "float64")
        y = x * 1
        z = y.sin()  # saves y
        getattr(y, case.name)(*args, **_kwargs(lib, case))
        z.sum().backward()

    _, error = _run(lambda: change_saved(torch))
    _, ours = _run(lambda: change_saved(tg))
    assert isinstance(error, RuntimeError)
    _assert_same_error(ours, error, case.id)
    assert "modified" in str(ours) or "changed" in str(ours)


def test_results_that_do_not_fit_self_s_dtype_raise_runtime_error():
    for lib in (torch, tg):
        i = lib.tensor([4, 9])
        with pytest.raises(RuntimeError, match="sqrt_|cast"):
            i.sqrt_()
        with pytest.raises(RuntimeError, match="divide_|cast"):
            i.divide_(2)
        with pytest.raises(RuntimeError, match="float_power_"):
            lib.tensor([1.5, 2.0]).float_power_(2)
        with pytest.raises(RuntimeError, match="float_power_"):
            i.float_power_(2.0)
        with pytest.raises(RuntimeError, match="cumsum_|in-place"):
            lib.tensor([1.0, 2.0]).cumsum_(0, dtype=lib.float64)
        with pytest.raises(RuntimeError):  # the broadcast result is bigger than self
            lib.tensor([1.0, 2.0]).lt_(lib.ones(3, 2))
        with pytest.raises(RuntimeError):  # no float into a bool tensor, nor an int
            lib.tensor([True, False]).cumsum_(0)
        assert i.tolist() == [4, 9]  # a refused op changes nothing
    assert tg.tensor([4, 9]).divide_(2, rounding_mode="floor").tolist() == [2, 4]
    # an int64 result into a uint8 tensor and a float64 one into float32 are stored, as in PyTorch
    u = tg.tensor([250, 3], dtype=tg.uint8).cumsum_(0)
    assert u.dtype == tg.uint8 and u.tolist() == torch.tensor([250, 3], dtype=torch.uint8).cumsum_(0).tolist()
    f = tg.tensor([1.0, 2.0]).multiply_(tg.tensor([0.1, 0.2], dtype=tg.float64))
    assert f.dtype == tg.float32 and np.allclose(f.numpy(), [0.1, 0.4])


def test_comparisons_in_place_keep_self_s_dtype_and_its_gradient():
    x = tg.tensor([-1.5, 0.0, 2.0], requires_grad=True)
    y = x * 1
    assert y.lt_(0) is y and y.dtype == tg.float32 and y.tolist() == [1.0, 0.0, 0.0]
    assert y.requires_grad and not y.is_leaf
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]
    other = tg.tensor([0.5, 0.0, 1.0], requires_grad=True)
    z = tg.tensor([1.0, 0.0, 2.0])
    z.ge_(other)  # self needs no grad, other does: recorded, as in PyTorch
    assert z.requires_grad and z.tolist() == [1.0, 1.0, 1.0]
    z.sum().backward()
    assert other.grad.tolist() == [0.0, 0.0, 0.0]
    assert tg.tensor([3, 1]).logical_and_(tg.tensor([0.5, 0.0])).tolist() == [1, 0]
    assert tg.tensor([True, False]).eq_(tg.tensor([1.0, 1.0])).tolist() == [True, False]


def test_an_argument_that_requires_grad_is_recorded_when_self_does_not():
    for lib in (torch, tg):
        other = lib.tensor([0.5, 2.0], dtype=lib.float64, requires_grad=True)
        y = lib.tensor([1.0, 3.0], dtype=lib.float64)
        y.xlogy_(other).multiply_(other).subtract_(other, alpha=2).atan2_(other)
        assert y.requires_grad
        y.sum().backward()
        if lib is torch:
            expected = other.grad.numpy()
        else:
            _close(other.grad, expected)


# --- NumPy's alias names, as Tensor methods and tg functions -------------------------------------

ALIASES = [  # alias, the op it names, domain, args, kwargs
    ("arccos", "acos", "unit", (), {}), ("arcsin", "asin", "unit", (), {}), ("arctan", "atan", "any", (), {}),
    ("arccosh", "acosh", "gt1", (), {}), ("arcsinh", "asinh", "any", (), {}),
    ("arctanh", "atanh", "unit", (), {}), ("fix", "trunc", "any", (), {}),
    ("divide", "div", "any", (ANY4,), {}), ("divide", "div", "any", (ANY4,), {"rounding_mode": "floor"}),
    ("divide", "div", "any", (3,), {"rounding_mode": "trunc"}),
    ("multiply", "mul", "any", (ANY4,), {}), ("subtract", "sub", "any", (ANY4,), {"alpha": 2}),
    ("greater", "gt", "any", (CMP4,), {}), ("greater_equal", "ge", "any", (CMP4,), {}),
    ("less", "lt", "any", (CMP4,), {}), ("less_equal", "le", "any", (CMP4,), {}),
    ("not_equal", "ne", "any", (0.4,), {}), ("negative", "neg", "any", (), {}),
]


@pytest.mark.parametrize("dtype_name", list(DTYPES))
@pytest.mark.parametrize(("alias", "op", "domain", "args", "kwargs"), ALIASES,
                         ids=[f"{a[0]}-{i}" for i, a in enumerate(ALIASES)])
def test_alias_matches_torch_as_method_and_function(alias, op, domain, args, kwargs, dtype_name):
    case = Case(alias, domain, args, kwargs)
    grad = dtype_name != "int64"
    results = {}
    for lib in (torch, tg):
        x = _self(lib, case, dtype_name, requires_grad=grad)
        call_args, leaves = _args(lib, case, dtype_name, requires_grad=grad)
        method = getattr(x, alias)(*call_args, **kwargs)
        function = getattr(lib, alias)(x, *call_args, **kwargs)
        others = [function, getattr(lib, op)(x, *call_args, **kwargs)]
        if alias != "negative":  # (tg.negative, older than these names, calls its argument x)
            keywords = {"input": x, **dict(zip(("other",), call_args, strict=False)), **kwargs}
            others.append(getattr(lib, alias)(**keywords))
        out = method.detach() if lib is torch else method
        for same in others:
            assert (same.detach() if lib is torch else same).tolist() == out.tolist()
        grads = []
        if method.requires_grad:
            (method * lib.tensor(WEIGHTS, dtype=method.dtype)).sum().backward()
            grads = [t.grad for t in (x, *leaves)]
        results[lib] = (out, grads)
    (theirs, their_grads), (ours, our_grads) = results[torch], results[tg]
    _close(ours.detach().numpy(), theirs)
    assert len(our_grads) == len(their_grads)
    for g, expected in zip(our_grads, their_grads, strict=True):
        assert (g is None) == (expected is None)
        if g is not None:
            _close(g, expected)


# --- GPU readiness: ForeignArray data stays ForeignArray ----------------------------------------

FOREIGN = [case for case in CASES if case.grad is not None]


@pytest.mark.parametrize("case", FOREIGN, ids=[case.id for case in FOREIGN])
def test_inplace_variant_keeps_foreign_arrays(case):
    floats = [np.asarray(DOMAINS[case.domain][0])]
    floats += [np.asarray(a.values, float) for a in case.args if isinstance(a, Arg) and a.dtype is None]

    def fn(m, x, *others):
        rest = iter(others)
        call = [next(rest) if isinstance(a, Arg) and a.dtype is None
                else m.tensor(a.values) if isinstance(a, Arg) else a for a in case.args]
        y = x * 1
        getattr(y, case.name)(*call, **case.kwargs)
        return y.detach() if case.grad == "raises" else y

    runs = run_twice(fn, floats)
    check_same(runs)
    (_, _), (outs, leaves) = runs
    assert all(is_foreign(out.data) for out in outs)
    if case.grad != "raises":
        assert is_foreign(leaves[0].grad)
