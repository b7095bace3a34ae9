"""Ranking models: Linear and DNN (ELU MLP, optionally with LayerNorm), with any number of outputs."""
from __future__ import annotations

from torch import nn

__all__ = ["make_model"]


def make_model(kind: str, n_in: int, n_out: int = 1, hidden=(64, 32), layer_norm: bool = False) -> nn.Module:
    """``linear``: one affine layer; ``dnn``: ELU MLP with the given hidden sizes.  With
    ``layer_norm`` a LayerNorm precedes every affine layer, the input one included (the official
    LBD ranker, ``ultra/ranking_model/DNN_multi.py``, ``norm="layer"``)."""
    if kind == "linear":
        return nn.Linear(n_in, n_out)
    layers, width = [], n_in
    for h in hidden:
        layers += ([nn.LayerNorm(width)] if layer_norm else []) + [nn.Linear(width, h), nn.ELU()]
        width = h
    layers += ([nn.LayerNorm(width)] if layer_norm else []) + [nn.Linear(width, n_out)]
    return nn.Sequential(*layers)
