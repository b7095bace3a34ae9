"""Ranking models: Linear and DNN (ELU MLP, optionally with LayerNorm), with any number of outputs."""
from __future__ import annotations

from torch import nn

__all__ = ["make_model", "ranker", "xavier_init"]


def make_model(kind: str, n_in: int, *, n_out: int = 1, hidden=(64, 32), layer_norm: bool = False,
               dropout: float = 0.0) -> nn.Module:
    """``linear``: one affine layer; ``dnn``: ELU MLP with the given hidden sizes.  With
    ``layer_norm`` a LayerNorm precedes every affine layer, the input one included (the official
    LBD ranker, ``ultra/ranking_model/DNN_multi.py``, ``norm="layer"``); with ``dropout`` > 0 a
    dropout layer follows every hidden activation (the CLD paper's rankers: 0.5).

    >>> make_model("dnn", 4, n_out=1, hidden=(8,), dropout=0.5)
    Sequential(
      (0): Linear(in_features=4, out_features=8, bias=True)
      (1): ELU(alpha=1.0)
      (2): Dropout(p=0.5, inplace=False)
      (3): Linear(in_features=8, out_features=1, bias=True)
    )
    """
    if kind == "linear":
        return nn.Linear(n_in, n_out)
    layers, width = [], n_in
    for h in hidden:
        layers += ([nn.LayerNorm(width)] if layer_norm else []) + [nn.Linear(width, h), nn.ELU()]
        layers += [nn.Dropout(dropout)] if dropout > 0 else []
        width = h
    layers += ([nn.LayerNorm(width)] if layer_norm else []) + [nn.Linear(width, n_out)]
    return nn.Sequential(*layers)


def ranker(cfg, n_in: int, n_out: int = 1) -> nn.Module:
    """The ranking network a :class:`~ultr_core.algorithms.config.TrainConfig` asks for."""
    return make_model(cfg.model, n_in, n_out=n_out, hidden=cfg.hidden, layer_norm=cfg.layer_norm, dropout=cfg.dropout)


def xavier_init(module: nn.Module, normal: bool = False) -> None:
    """Glorot-uniform weights and zero biases for every affine layer (the CLD paper's
    initialisation, Algorithms 1–2 line 2), or with ``normal`` Glorot-normal weights and torch's
    default biases (the official CLD code, ``models/toy_model.py: weight_init``); draws from
    torch's seeded global generator."""
    for m in module.modules():
        if isinstance(m, nn.Linear):
            if normal:
                nn.init.xavier_normal_(m.weight)
                continue
            nn.init.xavier_uniform_(m.weight)
            if m.bias is not None:
                nn.init.zeros_(m.bias)
