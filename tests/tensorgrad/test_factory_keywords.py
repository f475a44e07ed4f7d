"""Factory keywords (`layout=`, `pin_memory=`, keyword-only arguments, `generator=` on the random
`*_like` functions), memory-format corners (channels-last tensors with no elements or with size-1
dimensions) and the small Tensor methods `dim_order`, `to_dense`, `const_data_ptr`, `as_subclass`
and `is_set_to`, each against PyTorch."""

import numpy as np
import pytest

import tensorgrad as tg

torch = pytest.importorskip("torch")


def _factories(lib):
    """name -> a call of lib's factory with its required arguments, taking keywords."""
    x = lib.zeros(2, 3)
    return {
        "full": lambda **k: lib.full((2,), 1.5, **k),
        "arange": lambda **k: lib.arange(3, **k),
        "eye": lambda **k: lib.eye(2, **k),
        "linspace": lambda **k: lib.linspace(0, 1, 3, **k),
        "logspace": lambda **k: lib.logspace(0, 1, 3, **k),
        "randint": lambda **k: lib.randint(3, (2,), **k),
        "randperm": lambda **k: lib.randperm(3, **k),
        "zeros_like": lambda **k: lib.zeros_like(x, **k),
        "ones_like": lambda **k: lib.ones_like(x, **k),
        "empty_like": lambda **k: lib.empty_like(x, **k),
        "full_like": lambda **k: lib.full_like(x, 2.0, **k),
        "rand_like": lambda **k: lib.rand_like(x, **k),
        "randn_like": lambda **k: lib.randn_like(x, **k),
        "randint_like": lambda **k: lib.randint_like(x, 3, **k),
        "hann_window": lambda **k: lib.hann_window(3, **k),
        "hamming_window": lambda **k: lib.hamming_window(3, **k),
        "blackman_window": lambda **k: lib.blackman_window(3, **k),
        "bartlett_window": lambda **k: lib.bartlett_window(3, **k),
        "kaiser_window": lambda **k: lib.kaiser_window(3, **k),
        "scalar_tensor": lambda **k: lib.scalar_tensor(3, **k),
        "tril_indices": lambda **k: lib.tril_indices(3, 3, **k),
        "triu_indices": lambda **k: lib.triu_indices(3, 3, **k),
        "normal": lambda **k: lib.normal(0.0, 1.0, (2,), **k),
        "zeros": lambda **k: lib.zeros(2, **k),
        "rand": lambda **k: lib.rand(2, **k),
    }


NAMES = list(_factories(tg))
GPU = tg.cuda.is_available()


def _outcome(call, **keywords):
    """The result's (shape, dtype) or the exception class a call gives."""
    try:
        out = call(**keywords)
    except Exception as error:  # noqa: BLE001 - the class is what is compared
        return type(error)
    return tuple(out.shape), str(out.dtype).replace("torch.", "")


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("keywords", [
    {"layout": "strided"}, {"layout": None}, {"layout": "x"}, {"pin_memory": False}, {"pin_memory": None},
    pytest.param({"pin_memory": True}, marks=pytest.mark.skipif(GPU, reason="pinning works with a GPU")),
], ids=str)
def test_layout_and_pin_memory_as_pytorch(name, keywords):
    def spelled(lib):
        return {k: (lib.strided if v == "strided" else v) for k, v in keywords.items()}

    ours = _outcome(_factories(tg)[name], **spelled(tg))
    theirs = _outcome(_factories(torch)[name], **spelled(torch))
    assert ours == theirs


@pytest.mark.parametrize("name", ["zeros_like", "full", "arange", "hann_window", "randperm", "tril_indices"])
def test_bad_layout_error_names_op_and_argument(name):
    with pytest.raises(TypeError, match=f"{name}.*layout"):
        _factories(tg)[name](layout=torch.strided)  # PyTorch's layout is not tensorgrad's


@pytest.mark.skipif(GPU, reason="pinning works with a GPU")
def test_pin_memory_error_names_op():
    with pytest.raises(RuntimeError, match="linspace.*pin_memory"):
        tg.linspace(0, 1, 3, pin_memory=True)


def test_tensor_takes_pin_memory_only_as_a_bool():
    for keywords in ({"pin_memory": False}, {"pin_memory": None}, {"pin_memory": 0}, {"layout": None}):
        assert _outcome(lambda **k: tg.tensor([1.0], **k), **keywords) == \
            _outcome(lambda **k: torch.tensor([1.0], **k), **keywords)
    with pytest.raises(TypeError, match="tensor.*pin_memory.*bool"):
        tg.tensor([1.0], pin_memory=None)


POSITIONAL = {  # the extra positional argument PyTorch refuses: its keyword-only dtype or generator
    "full": lambda lib: lib.full((2,), 1.0, lib.float64),
    "arange": lambda lib: lib.arange(0, 3, 1, lib.float64),
    "eye": lambda lib: lib.eye(2, 2, lib.float64),
    "linspace": lambda lib: lib.linspace(0, 1, 3, lib.float64),
    "logspace": lambda lib: lib.logspace(0, 1, 3, 2.0, lib.float64),
    "randperm": lambda lib: lib.randperm(3, lib.Generator()),
    "tensor": lambda lib: lib.tensor([1.0], lib.float64),
    "zeros_like": lambda lib: lib.zeros_like(lib.zeros(2), lib.float64),
    "ones_like": lambda lib: lib.ones_like(lib.zeros(2), lib.float64),
    "empty_like": lambda lib: lib.empty_like(lib.zeros(2), lib.float64),
    "rand_like": lambda lib: lib.rand_like(lib.zeros(2), lib.float64),
    "randn_like": lambda lib: lib.randn_like(lib.zeros(2), lib.float64),
    "full_like": lambda lib: lib.full_like(lib.zeros(2), 1.0, lib.float64),
    "hann_window": lambda lib: lib.hann_window(3, True, lib.float64),
    "scalar_tensor": lambda lib: lib.scalar_tensor(3, lib.float64),
    "tril_indices": lambda lib: lib.tril_indices(3, 3, 0, lib.int32),
}


@pytest.mark.parametrize("name", list(POSITIONAL))
def test_keyword_only_arguments_as_pytorch(name):
    with pytest.raises(TypeError):
        POSITIONAL[name](torch)
    with pytest.raises(TypeError):
        POSITIONAL[name](tg)


def test_positional_arguments_pytorch_allows_still_work():
    np.testing.assert_allclose(tg.hamming_window(5, False, 0.5, 0.5).numpy(),
                               torch.hamming_window(5, False, 0.5, 0.5).numpy(), rtol=1e-6)
    np.testing.assert_allclose(tg.kaiser_window(5, False, 5.0).numpy(),
                               torch.kaiser_window(5, False, 5.0).numpy(), rtol=1e-5)
    assert tg.arange(1, 7, 2).tolist() == torch.arange(1, 7, 2).tolist()
    assert tg.logspace(0, 2, 3, 2.0).tolist() == torch.logspace(0, 2, 3, 2.0).tolist()
    assert tg.tril_indices(3, 4, 1).tolist() == torch.tril_indices(3, 4, 1).tolist()
    assert tg.randint_like(tg.zeros(3), low=2, high=3).tolist() == [2, 2, 2]


@pytest.mark.parametrize("name", ["rand_like", "randn_like", "randint_like"])
def test_random_like_functions_take_a_generator(name):
    x = tg.zeros(2, 3, dtype=tg.float64)
    args = (10,) if name == "randint_like" else ()
    first = getattr(tg, name)(x, *args, generator=tg.Generator().manual_seed(7))
    again = getattr(tg, name)(x, *args, generator=tg.Generator().manual_seed(7))
    np.testing.assert_array_equal(first.numpy(), again.numpy())
    assert first.shape == (2, 3) and first.dtype == tg.float64
    tx = torch.zeros(2, 3, dtype=torch.float64)  # PyTorch takes the same keyword
    assert getattr(torch, name)(tx, *args, generator=torch.Generator().manual_seed(7)).shape == (2, 3)


@pytest.mark.parametrize("name", ["zeros_like", "ones_like", "empty_like", "full_like", "rand_like",
                                  "randn_like", "randint_like"])
@pytest.mark.parametrize("fmt", ["preserve_format", "contiguous_format", "channels_last"])
def test_like_memory_format_strides_as_pytorch(name, fmt):
    values = np.zeros((2, 3, 4, 5), np.float32)

    def made(lib):
        x = lib.tensor(values).permute(0, 3, 1, 2)  # a channels-last-like (2, 5, 3, 4) view
        args = {"full_like": (1.0,), "randint_like": (5,)}.get(name, ())
        return getattr(lib, name)(x, *args, memory_format=getattr(lib, fmt)).stride()

    assert made(tg) == made(torch)


def test_like_channels_last_needs_rank_4():
    for lib in (tg, torch):
        with pytest.raises(RuntimeError, match="rank 4"):
            lib.zeros_like(lib.zeros(2, 3), memory_format=lib.channels_last)


# --- memory-format corners -------------------------------------------------------------------------

EMPTY_SHAPES = [(2, 0, 3, 4), (2, 3, 4, 0), (0, 3, 4, 5), (2, 3, 0, 5), (0, 0, 2, 2), (0, 1, 1, 1)]


@pytest.mark.parametrize("shape", EMPTY_SHAPES)
def test_empty_channels_last_strides_as_pytorch(shape):
    t = tg.empty(shape, memory_format=tg.channels_last)
    tt = torch.empty(shape, memory_format=torch.channels_last)
    assert t.stride() == tt.stride()
    assert tg.empty_like(t).stride() == torch.empty_like(tt).stride()
    assert t.clone().stride() == tt.clone().stride()
    assert tg.zeros_like(tg.zeros(shape), memory_format=tg.channels_last).stride() == \
        torch.zeros_like(torch.zeros(shape), memory_format=torch.channels_last).stride()
    assert t.is_contiguous() == tt.is_contiguous()
    assert t.is_contiguous(memory_format=tg.channels_last) == \
        tt.is_contiguous(memory_format=torch.channels_last)
    assert t.dim_order() == tt.dim_order()
    assert tg.empty(shape).stride() == torch.empty(shape).stride()  # row-major ones are untouched


def test_empty_channels_last_3d_strides_as_pytorch():
    for shape in [(2, 0, 3, 4, 5), (2, 3, 4, 5, 0), (0, 1, 1, 1, 1)]:
        assert tg.empty(shape, memory_format=tg.channels_last_3d).stride() == \
            torch.empty(shape, memory_format=torch.channels_last_3d).stride()


@pytest.mark.parametrize("shape", [(2, 3, 1, 1), (1, 3, 1, 1), (2, 1, 3, 3), (1, 1, 1, 1), (4, 3, 1, 2)])
def test_preserve_format_keeps_size_one_strides(shape):
    values = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    t = tg.tensor(values).contiguous(memory_format=tg.channels_last)
    tt = torch.tensor(values).contiguous(memory_format=torch.channels_last)
    assert t.stride() == tt.stride()
    for ours, theirs in [(t.clone(), tt.clone()), (tg.empty_like(t), torch.empty_like(tt)),
                         (tg.zeros_like(t), torch.zeros_like(tt)), (t.to(tg.float64), tt.to(torch.float64)),
                         (t.clone(memory_format=tg.contiguous_format),
                          tt.clone(memory_format=torch.contiguous_format))]:
        assert ours.stride() == theirs.stride()
    np.testing.assert_array_equal(t.clone().numpy(), values)
    np.testing.assert_array_equal(t.to(tg.float64).numpy(), values)


@pytest.mark.parametrize("shape,strides", [
    ((4, 1, 3), (3, 99, 1)),  # dense, a size-1 dimension's stride anything
    ((3, 1, 4), (1, 7, 3)),  # dense in another order
    ((2, 3, 4), (1, 2, 6)),  # column-major
    ((3, 2), (1, 0)),  # a broadcast dimension: not dense
    ((2, 2), (4, 1)),  # a gap: not dense
])
def test_clone_strides_as_pytorch(shape, strides):
    values = np.arange(32, dtype=np.float64)
    t = tg.tensor(values).as_strided(shape, strides)
    tt = torch.tensor(values).as_strided(shape, strides)
    copy, theirs = t.clone(), tt.clone()
    assert copy.stride() == theirs.stride()
    assert tg.zeros_like(t).stride() == torch.zeros_like(tt).stride()
    np.testing.assert_array_equal(copy.numpy(), theirs.numpy())


def test_clone_with_size_one_dims_keeps_its_gradient():
    x = tg.tensor(np.random.default_rng(0).standard_normal((2, 3, 1, 1)), requires_grad=True)
    assert tg.gradcheck(lambda a: a.contiguous(memory_format=tg.channels_last).clone() * 2, [x])


# --- small Tensor methods ------------------------------------------------------------------------------


def _dim_orders(lib, make):
    t = make(lib)
    out = []
    for check in (False, True, [lib.contiguous_format, lib.channels_last], [lib.channels_last], []):
        try:
            out.append(t.dim_order(ambiguity_check=check))
        except RuntimeError as error:
            out.append(("RuntimeError", str(error)))
    return out


DIM_ORDER_CASES = {
    "row-major": lambda lib: lib.empty(2, 3, 5, 7),
    "transposed": lambda lib: lib.empty(2, 3, 5, 7).transpose(1, 2),
    "channels-last": lambda lib: lib.empty((2, 3, 5, 7), memory_format=lib.channels_last),
    "channels-last-3d": lambda lib: lib.empty((2, 3, 4, 5, 6), memory_format=lib.channels_last_3d),
    "size-1 batch": lambda lib: lib.empty(1, 2, 3, 4),
    "0-d": lambda lib: lib.empty(()),
    "1-d": lambda lib: lib.empty(4),
    "size-1 vector": lambda lib: lib.empty(1),
    "stepped": lambda lib: lib.empty(2, 3)[:, ::2],
    "expanded": lambda lib: lib.zeros(2, 3).expand(4, 2, 3),
    "empty": lambda lib: lib.empty(2, 0, 3),
    "column": lambda lib: lib.empty(3, 1),
    "all size-1": lambda lib: lib.empty(2, 1, 1, 1),
    "column-major": lambda lib: lib.empty(4, 3).t(),
    "permuted 3-d": lambda lib: lib.empty(2, 3, 4).permute(2, 0, 1),
    "equal strides": lambda lib: lib.empty(6).as_strided((2, 3), (1, 1)),
    "channels-last 1x1": lambda lib: lib.empty((2, 3, 1, 1), memory_format=lib.channels_last),
}


@pytest.mark.parametrize("case", list(DIM_ORDER_CASES))
def test_dim_order_as_pytorch(case):
    assert _dim_orders(tg, DIM_ORDER_CASES[case]) == _dim_orders(torch, DIM_ORDER_CASES[case])


@pytest.mark.parametrize("bad", ["x", [1], (tg.channels_last,), None])
def test_dim_order_bad_ambiguity_check(bad):
    theirs = [torch.channels_last] if isinstance(bad, tuple) else bad
    with pytest.raises(TypeError, match="ambiguity_check"):
        torch.empty(2, 3).dim_order(ambiguity_check=theirs if not isinstance(bad, tuple) else tuple(theirs))
    with pytest.raises(TypeError, match="ambiguity_check"):
        tg.empty(2, 3).dim_order(ambiguity_check=bad)
    with pytest.raises(TypeError):
        tg.empty(2, 3).dim_order(True)  # keyword-only, as PyTorch


def test_to_dense_is_self_or_a_recorded_copy():
    x = tg.arange(6.0).reshape(2, 3)
    assert x.to_dense() is x and x.to_dense(tg.float32) is x and x.to_dense(masked_grad=False) is x
    converted = x.to_dense(tg.float64)
    assert str(converted.dtype) == str(torch.arange(6.0).to_dense(torch.float64).dtype).replace("torch.", "")
    with pytest.raises(TypeError, match="to_dense.*dtype"):
        x.to_dense("float64")
    with pytest.raises(TypeError):
        torch.arange(6.0).to_dense("float64")
    leaf = tg.tensor([1.0, 2.0], dtype=tg.float32, requires_grad=True)
    (leaf.to_dense(tg.float64) * 3).sum().backward()
    np.testing.assert_array_equal(leaf.grad, [3.0, 3.0])


def test_const_data_ptr_is_data_ptr():
    x = tg.arange(6.0).reshape(2, 3)
    assert x.const_data_ptr() == x.data_ptr() and x[1].const_data_ptr() == x[1].data_ptr()
    assert x[1].const_data_ptr() - x.const_data_ptr() == 3 * x.element_size()


class Marked(tg.Tensor):
    """A Tensor subclass for as_subclass."""


class TorchMarked(torch.Tensor):
    """Its PyTorch counterpart."""


def test_as_subclass_shares_memory_and_graph():
    values = np.random.default_rng(1).standard_normal((2, 3))
    x, tx = tg.tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)
    s, ts = x.as_subclass(Marked), tx.as_subclass(TorchMarked)
    assert type(s) is Marked and type(ts) is TorchMarked
    assert s.data_ptr() == x.data_ptr() and s.requires_grad == ts.requires_grad and s.is_leaf == ts.is_leaf
    assert s._base is x and ts._base is tx
    (s * s).sum().backward()
    (ts * ts).sum().backward()
    np.testing.assert_allclose(x.grad, tx.grad.numpy())
    plain = tg.ones(2).as_subclass(Marked)
    assert plain.is_leaf == torch.ones(2).as_subclass(TorchMarked).is_leaf and not plain.requires_grad
    with tg.no_grad():
        s.data[0, 0] = 5.0  # the same memory
    assert x.data[0, 0] == 5.0
    assert tg.gradcheck(lambda a: a.as_subclass(Marked) * 2, [tg.tensor(values, requires_grad=True)])
    assert type(tg.ones(2).as_subclass(tg.Tensor)) is tg.Tensor


def test_as_subclass_refuses_a_class_outside_tensor():
    with pytest.raises(TypeError, match="inherit from Tensor"):
        torch.ones(2).as_subclass(int)
    with pytest.raises(TypeError, match="inherit from Tensor"):
        tg.ones(2).as_subclass(int)
    with pytest.raises(TypeError, match="inherit from Tensor"):
        tg.ones(2).as_subclass(3)


def test_is_set_to_as_pytorch():
    def cases(lib):
        x = lib.arange(6.0).reshape(2, 3)
        return [x.is_set_to(x), x.is_set_to(x.view(2, 3)), x.is_set_to(x.clone()), x.is_set_to(x.view(6)),
                x.view(lib.int32).is_set_to(x), x.is_set_to(x[:]), x.is_set_to(x.t().t()), x.is_set_to(x.t()),
                x[1].is_set_to(x[1]), x[1].is_set_to(x[0]), x.detach().is_set_to(x),
                x.is_set_to(lib.arange(6.0).reshape(2, 3))]

    assert cases(tg) == cases(torch)
    with pytest.raises(TypeError, match="is_set_to.*Tensor"):
        tg.ones(2).is_set_to(3)


@pytest.mark.parametrize("kwargs, error", [({"layout": "strided"}, TypeError),
                                           ({"pin_memory": True}, RuntimeError)])
def test_empty_strided_checks_layout_and_pin_memory_as_pytorch(kwargs, error):
    assert tg.empty_strided((2, 3), (3, 1), layout=tg.strided).stride() == (3, 1)
    if kwargs.get("pin_memory") and tg.cuda.is_available():
        return  # with a GPU, pinned memory is a hint tensorgrad takes
    for module in (torch, tg):
        with pytest.raises(error):
            module.empty_strided((2, 3), (3, 1), **kwargs)


@pytest.mark.filterwarnings("ignore:torch.range is deprecated")
def test_range_takes_only_the_strided_layout_as_pytorch():
    for module in (torch, tg):
        assert module.range(0, 3, layout=module.strided).tolist() == [0.0, 1.0, 2.0, 3.0]
        with pytest.raises(TypeError):
            module.range(0, 3, layout=None)
        with pytest.raises(TypeError):
            module.range(0, 3, pin_memory=False)
