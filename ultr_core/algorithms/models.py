"""Ranking models: Linear and DNN (ELU MLP), with any number of outputs."""
from __future__ import annotations

from torch import nn

__all__ = ["make_model"]


def make_model(kind: str, n_in: int, n_out: int = 1, hidden=(64, 32)) -> nn.Module:
    """``linear``: one affine layer; ``dnn``: ELU MLP with the given hidden sizes."""
    if kind == "linear":
        return nn.Linear(n_in, n_out)
    layers, width = [], n_in
    for h in hidden:
        layers += [nn.Linear(width, h), nn.ELU()]
        width = h
    layers.append(nn.Linear(width, n_out))
    return nn.Sequential(*layers)
