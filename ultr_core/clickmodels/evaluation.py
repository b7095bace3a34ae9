"""Held-out scores of a click model, with the definitions of PyClick's ``Evaluation.py`` (Dupret & Piwowarski,
SIGIR 2008), weighted by the sessions each pattern stands for:

* log-likelihood — the mean over sessions of the mean over ranks of ln P(c_r | c_<r);
* perplexity at rank r — 2^(−mean over sessions of log₂ P(observed c_r)), P from the *marginal* click probability;
  perplexity — its mean over ranks (1 is perfect, 2 is a coin);
* conditional perplexity — the same with P(c_r | c_<r).

>>> import numpy as np
>>> from ultr_core.clickmodels.models import GCTR
>>> from ultr_core.clickmodels.sessions import SessionTable
>>> t = SessionTable(np.array([[0, 1]]), np.array([[1, 0]], bool), np.array([2.0]), 2, 2)
>>> s = scores(GCTR().fit(t), t)            # ctr = (1 + 2) / (2 + 4) = 0.5 at both ranks
>>> round(s["log_likelihood"], 4), s["perplexity"], s["perplexity_by_rank"]
(-0.6931, 2.0, [2.0, 2.0])
"""
from __future__ import annotations

import numpy as np

__all__ = ["scores"]

_TINY = 1e-300           # log of a zero probability: PyClick prints an error and skips the term; we floor it


def scores(model, t) -> dict:
    """Log-likelihood, perplexity (overall and by rank) and conditional perplexity of ``model`` on ``t``; with lists
    of varying length each session's mean runs over the ranks it shows and each rank's perplexity over the sessions
    that show it."""
    m = t.mask
    w = t.weight / t.weight.sum()
    wr = w[:, None] * m
    wr = wr / np.maximum(wr.sum(0), 1e-300)
    cond = np.clip(model.conditional(t), _TINY, 1.0)
    full = np.clip(np.where(t.clicks, model.full(t), 1 - model.full(t)), _TINY, 1.0)
    by_rank = 2.0 ** (-(wr * np.log2(full)).sum(0))
    cond_rank = 2.0 ** (-(wr * np.log2(cond)).sum(0))
    ll = (np.log(cond) * m).sum(1) / np.maximum(m.sum(1), 1)
    return {"log_likelihood": float((w * ll).sum()), "perplexity": float(by_rank.mean()),
            "perplexity_by_rank": by_rank.tolist(), "conditional_perplexity": float(cond_rank.mean()),
            "conditional_perplexity_by_rank": cond_rank.tolist()}
