"""A tiny GPT on tensorgrad: a character-level transformer that learns to make up names.

makemore's transformer: a name is read as '.' followed by its characters, and at every position
the model scores the 27 possible next characters (the last target is the closing '.'). Character
and position embeddings go through pre-norm transformer blocks (causal multi-head self-attention,
then a GELU MLP, each added back to its input) and a last LayerNorm and Linear layer. The same
class definitions build the model in PyTorch (`define_gpt(torch)`), so `--compare-torch` trains
PyTorch's copy from the same weights on the same batches. Trained with AdamW on batches of 32 of
the 32,033 shipped names (makemore's 80/10/10 split); then it makes up 20 names. The data, the
split, the batches and the side-by-side timing are those of `names_mlp.py`. Tutorial chapter 15
builds the model step by step.

    python examples/names_gpt.py                     # the full run: dev loss about 2.05
    python examples/names_gpt.py --compare-torch     # PyTorch's copy, from the same weights
    python examples/names_gpt.py --device cuda       # on a GPU (with CuPy): the same code, the same batches
    python examples/names_gpt.py --device cuda --amp # mixed precision: float16 products, a GradScaler
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

import tensorgrad as tg

sys.path.insert(0, str(Path(__file__).resolve().parent))  # names_mlp.py, beside this script
from names_mlp import (  # noqa: E402 - after the path line above
    CHARACTERS,
    INDEX,
    add_run_arguments,
    batch_indices,
    learning_rate,
    one_torch_thread,
    pick,
    plot_losses,
    print_summary,
    run,
    split_names,
    torch_twin_if_asked,
)


def encode(names: list[str], context: int) -> tuple[tg.Tensor, tg.Tensor]:
    """(inputs, targets), each (len(names), context) int64: '.' then the name, padded with '.';
    the name then '.', padded with -1, which the loss ignores.

    "emma" with a context of 6 gives inputs . e m m a . and targets e m m a . -1
    """
    inputs = np.zeros((len(names), context), dtype=np.int64)
    targets = np.full((len(names), context), -1, dtype=np.int64)
    for row, name in enumerate(names):
        ids = [INDEX[c] for c in name][:context - 1]
        inputs[row, 1:len(ids) + 1] = ids
        targets[row, :len(ids) + 1] = ids + [0]
    return tg.from_numpy(inputs), tg.from_numpy(targets)


def define_gpt(lib: Any) -> type:
    """The GPT class built from `lib`, tensorgrad or torch: the same code makes either model."""
    nn, F = lib.nn, lib.nn.functional

    class Block(nn.Module):
        """A pre-norm transformer block: x + attention(norm(x)), then x + mlp(norm(x))."""

        def __init__(self, width: int, heads: int) -> None:
            super().__init__()
            self.heads = heads
            self.norm1, self.norm2 = nn.LayerNorm(width), nn.LayerNorm(width)
            self.qkv = nn.Linear(width, 3 * width)  # queries, keys and values in one product
            self.proj = nn.Linear(width, width)
            self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(approximate="tanh"),
                                     nn.Linear(4 * width, width))

        def forward(self, x: Any) -> Any:
            B, T, C = x.shape  # noqa: N806 - the usual names: batch, time, channels
            q, k, v = self.qkv(self.norm1(x)).split(C, dim=2)
            q, k, v = (t.view(B, T, self.heads, C // self.heads).transpose(1, 2) for t in (q, k, v))
            mixed = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(mixed.transpose(1, 2).reshape(B, T, C))
            return x + self.mlp(self.norm2(x))

    class GPT(nn.Module):
        """Character and position embeddings, `layers` blocks, and scores for the next character."""

        def __init__(self, vocab: int, context: int, width: int, heads: int, layers: int) -> None:
            super().__init__()
            self.tokens, self.positions = nn.Embedding(vocab, width), nn.Embedding(context, width)
            self.blocks = nn.Sequential(*[Block(width, heads) for _ in range(layers)])
            self.norm, self.head = nn.LayerNorm(width), nn.Linear(width, vocab)

        def forward(self, idx: Any) -> Any:
            positions = lib.arange(idx.shape[1], device=idx.device)
            return self.head(self.norm(self.blocks(self.tokens(idx) + self.positions(positions))))

    return GPT


def make_model(args: argparse.Namespace, context: int) -> tg.nn.Module:
    """tensorgrad's GPT of the sizes asked for."""
    return define_gpt(tg)(len(CHARACTERS), context, args.width, args.heads, args.layers)


def sequence_loss(F: Any, logits: Any, targets: Any) -> Any:  # noqa: N803 - torch's or tensorgrad's F
    """Mean cross-entropy over every real (not padding) position."""
    return F.cross_entropy(logits.reshape(-1, len(CHARACTERS)), targets.reshape(-1), ignore_index=-1)


def adamw_stepper(lib: Any, model: Any, x: Any, y: Any, lr: float, steps: int,
                  amp: bool = False) -> Callable[[int, np.ndarray], float]:
    """One AdamW step of `model` (either library's) on the rows given: (step number, rows) -> loss.
    With `amp`, in mixed precision as PyTorch's recipe has it: the forward pass under
    `autocast(dtype=float16)`, the loss scaled by a GradScaler (which skips a step that overflowed)."""
    optimizer = lib.optim.AdamW(model.parameters(), lr=lr)
    as_index = tg.from_numpy if lib is tg else lib.from_numpy
    device = x.device.type
    scaler = lib.amp.GradScaler(device, enabled=amp)
    model.train()

    def step(number: int, rows: np.ndarray) -> float:
        optimizer.param_groups[0]["lr"] = learning_rate(number, steps, lr)
        index = as_index(rows)
        if lib is tg:
            index = index.to(x.device)  # drawn on the host, used where the data lives
        with lib.autocast(device, dtype=lib.float16, enabled=amp):
            loss = sequence_loss(lib.nn.functional, model(x[index]), y[index])
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        return loss.item()

    return step


@tg.no_grad()
def evaluate(model: tg.nn.Module, x: tg.Tensor, y: tg.Tensor, chunk: int = 2000) -> float:
    """The mean cross-entropy over every real position of (x, y)."""
    model.eval()
    total, count = 0.0, 0
    for start in range(0, len(x), chunk):
        logits, targets = model(x[start:start + chunk]), y[start:start + chunk]
        total += tg.nn.functional.cross_entropy(logits.reshape(-1, len(CHARACTERS)), targets.reshape(-1),
                                                ignore_index=-1, reduction="sum").item()
        count += int((targets != -1).sum().item())
    model.train()
    return total / count


@tg.no_grad()
def make_up_names(model: tg.nn.Module, count: int, context: int) -> list[str]:
    """`count` new names: from '.', each next character drawn from the last position's softmax."""
    model.eval()
    device = next(model.parameters()).device
    names = []
    for _ in range(count):
        ids = [0]
        while len(ids) < context:
            logits = model(tg.tensor([ids], device=device))[0, -1]
            index = pick(tg.nn.functional.softmax(logits, dim=0))
            if index == 0:
                break
            ids.append(index)
        names.append("".join(CHARACTERS[i] for i in ids[1:]))
    model.train()
    return names


def torch_twin(model: tg.nn.Module, args: argparse.Namespace, context: int) -> Any:
    """PyTorch's GPT from the same definition, holding `model`'s weights."""
    import torch

    twin = define_gpt(torch)(len(CHARACTERS), context, args.width, args.heads, args.layers)
    twin.load_state_dict({k: torch.from_numpy(v.cpu().numpy().copy()) for k, v in model.state_dict().items()})
    return twin


def evaluate_torch(twin: Any, x: tg.Tensor, y: tg.Tensor) -> float:
    """`evaluate` for the PyTorch twin."""
    import torch

    twin.eval()
    with torch.no_grad():
        logits = twin(torch.from_numpy(x.cpu().numpy()))
        loss = sequence_loss(torch.nn.functional, logits, torch.from_numpy(y.cpu().numpy()))
    twin.train()
    return loss.item()


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3000, help="training steps (default 3000)")
    parser.add_argument("--batch-size", type=int, default=32, help="names per step (default 32)")
    parser.add_argument("--lr", type=float, default=5e-3,
                        help="AdamW's learning rate (default 0.005), a tenth of it in the second half")
    parser.add_argument("--width", type=int, default=64, help="numbers per position (default 64)")
    parser.add_argument("--heads", type=int, default=4, help="attention heads per block (default 4)")
    parser.add_argument("--layers", type=int, default=2, help="transformer blocks (default 2)")
    parser.add_argument("--amp", action="store_true",
                        help="mixed precision: autocast to float16, a GradScaler (for a GPU; slow on a CPU)")
    add_run_arguments(parser, "names_gpt.png")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> dict[str, float]:
    """Train, report train/dev loss and step time, make up names, draw the loss curve."""
    args = parse_args(argv)
    tg.manual_seed(args.seed)
    train_names, dev_names, _ = split_names()
    context = max(len(name) for name in train_names + dev_names) + 1  # 16: the longest name and a '.'
    x_train, y_train = encode(train_names, context)
    x_dev, y_dev = encode(dev_names, context)
    model = make_model(args, context)
    batches = batch_indices(args.steps, args.batch_size, len(x_train))
    # PyTorch's copy from the weights as made, on the CPU
    twin = torch_twin_if_asked(args.compare_torch, lambda: torch_twin(model, args, context))
    model.to(args.device)  # made on the CPU (the same weights for a seed on any device), moved once
    x_train, y_train, x_dev, y_dev = (t.to(args.device) for t in (x_train, y_train, x_dev, y_dev))

    steppers = {"tensorgrad": adamw_stepper(tg, model, x_train, y_train, args.lr, args.steps, args.amp)}
    if twin is not None:
        import torch

        xt, yt = torch.from_numpy(x_train.cpu().numpy()), torch.from_numpy(y_train.cpu().numpy())
        steppers["PyTorch"] = adamw_stepper(torch, twin, xt, yt, args.lr, args.steps, args.amp)
    with one_torch_thread() if twin is not None else contextlib.nullcontext():
        curves, step_seconds = run(steppers, batches, not args.no_progress)
    # The training loss over as many names as the dev set (all 25,626 cost more than a hundred steps)
    x_seen, y_seen = x_train[:len(x_dev)], y_train[:len(y_dev)]
    result = {"train": evaluate(model, x_seen, y_seen), "dev": evaluate(model, x_dev, y_dev),
              "step_ms": step_seconds["tensorgrad"] * 1e3, "seconds": step_seconds["tensorgrad"] * args.steps}
    print(model)
    print(f"parameters: {sum(p.numel() for p in model.parameters())}")
    print(f"tensorgrad: train loss {result['train']:.4f} (on {len(x_seen)} names), "
          f"dev loss {result['dev']:.4f}, {result['step_ms']:.2f} ms per step")
    print("made-up names:", ", ".join(make_up_names(model, args.samples, context)))
    if twin is not None:
        result.update(torch_train=evaluate_torch(twin, x_seen, y_seen),
                      torch_dev=evaluate_torch(twin, x_dev, y_dev),
                      torch_step_ms=step_seconds["PyTorch"] * 1e3)
        print(f"PyTorch:    train loss {result['torch_train']:.4f}, dev loss {result['torch_dev']:.4f}, "
              f"{result['torch_step_ms']:.2f} ms per step")
    plot_losses(curves, args.output, every=max(1, min(250, args.steps // 10)),
                title="a tiny GPT on 32,033 names")
    print_summary(args, result)
    return result


if __name__ == "__main__":
    main()
