"""`tg.random` and `tg.default_generator`: PyTorch's names for the default stream, its state, and
`fork_rng`; a `Generator`'s own state."""

from __future__ import annotations

import pytest

import tensorgrad as tg

torch = pytest.importorskip("torch")


def test_manual_seed_returns_the_default_generator_as_pytorch():
    assert (torch.manual_seed(0) is torch.default_generator) and (tg.manual_seed(0) is tg.default_generator)
    assert tg.random.default_generator is tg.default_generator
    assert tg.default_generator.initial_seed() == tg.initial_seed() == 0
    tg.default_generator.manual_seed(7)          # reseeding the object reseeds the functions' stream
    first = tg.rand(4)
    tg.manual_seed(7)
    assert tg.rand(4).equal(first) and tg.initial_seed() == 7


def test_seed_draws_a_fresh_seed_and_reports_it():
    chosen = tg.random.seed()
    assert isinstance(chosen, int) and tg.initial_seed() == chosen
    again = tg.default_generator.seed()
    assert again != chosen and tg.default_generator.initial_seed() == again


def test_fork_rng_restores_the_stream_and_can_be_disabled():
    tg.manual_seed(3)
    expected = tg.randn(5)
    tg.manual_seed(3)
    with tg.random.fork_rng():
        tg.randn(100)                              # draws inside the block don't move the stream
    assert tg.randn(5).equal(expected)
    tg.manual_seed(3)
    with tg.random.fork_rng(enabled=False):
        tg.randn(100)
    assert not tg.randn(5).equal(expected)
    tg.manual_seed(3)
    with pytest.raises(ValueError, match="inside"), tg.random.fork_rng(devices=[]):
        tg.randn(3)
        raise ValueError("raised inside the block")
    assert tg.randn(5).equal(expected)             # restored on the way out of an exception too


@pytest.mark.parametrize("lib", ["torch", "tg"])
def test_generator_state_round_trip(lib):
    m = torch if lib == "torch" else tg
    generator = m.Generator().manual_seed(11)
    state = generator.get_state()
    assert state.dtype == m.uint8 and state.ndim == 1
    first = m.rand(3, generator=generator)
    assert generator.set_state(state) is generator
    assert m.rand(3, generator=generator).equal(first)
    assert str(generator.device) == "cpu"


def test_default_generator_state_matches_get_rng_state():
    tg.manual_seed(5)
    assert tg.default_generator.get_state().equal(tg.get_rng_state())
    saved = tg.get_rng_state()
    values = tg.rand(3)
    tg.default_generator.set_state(saved)
    assert tg.rand(3).equal(values)


def test_bad_state_is_refused_with_pytorchs_types():
    with pytest.raises(TypeError, match="set_state"):
        tg.Generator().set_state([1, 2])
    with pytest.raises(RuntimeError, match="set_rng_state"):
        tg.set_rng_state(tg.zeros(3, dtype=tg.uint8))
