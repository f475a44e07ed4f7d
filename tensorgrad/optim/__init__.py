"""`tensorgrad.optim`: PyTorch's optimizers and learning-rate schedules (tutorial chapter 9).

`SGD`, `Adam`, `AdamW`, `RMSprop`, `Adagrad`, `Adamax`, `NAdam`, `RAdam`, `Adadelta`, `Rprop`,
`ASGD`, `Adafactor`, `Muon` and `LBFGS` (which calls the model itself, through a closure) follow PyTorch's
update rules exactly, with PyTorch 2.13's constructor signatures
(`lr` may be a Tensor; `foreach` and `fused` are accepted, one numpy path), parameter groups
(`param_groups`, `add_param_group`) and state dicts in PyTorch's layout, so a model trained with
either library from the same initial weights follows the same path, a state dict saved by either
loads into the other, and training resumed from a state dict continues bit for bit.
`optim.lr_scheduler` holds the schedules that change a group's learning rate as training goes;
`optim.swa_utils` averages the weights over training (SWA, EMA).
"""

from tensorgrad.optim import lr_scheduler, swa_utils
from tensorgrad.optim.adadelta import Adadelta
from tensorgrad.optim.adafactor import Adafactor
from tensorgrad.optim.adagrad import Adagrad
from tensorgrad.optim.adam import Adam, AdamW
from tensorgrad.optim.adamax import Adamax
from tensorgrad.optim.asgd import ASGD
from tensorgrad.optim.lbfgs import LBFGS
from tensorgrad.optim.muon import Muon
from tensorgrad.optim.nadam import NAdam
from tensorgrad.optim.optimizer import Optimizer
from tensorgrad.optim.radam import RAdam
from tensorgrad.optim.rmsprop import RMSprop
from tensorgrad.optim.rprop import Rprop
from tensorgrad.optim.sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adamax", "NAdam", "RAdam", "Adadelta",
           "Rprop", "ASGD", "LBFGS", "Adafactor", "Muon", "lr_scheduler", "swa_utils"]
