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

__all__ = ["scores", "session_log_likelihood", "fit_comparison", "fit_sentence", "FIT_RULE"]

#: how the held-out fits are told apart (:func:`fit_comparison`)
FIT_RULE = ("log-likelihood: a model fits best when the 90 % interval of its difference from each other model "
            "(paired over the same test sessions, normal approximation) lies above 0; one whose interval reaches 0 "
            "is tied with it")

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
    ll = _per_session(cond, m)
    return {"log_likelihood": float((w * ll).sum()), "perplexity": float(by_rank.mean()),
            "perplexity_by_rank": by_rank.tolist(), "conditional_perplexity": float(cond_rank.mean()),
            "conditional_perplexity_by_rank": cond_rank.tolist()}


def _per_session(cond, m) -> np.ndarray:
    return (np.log(cond) * m).sum(1) / np.maximum(m.sum(1), 1)


def session_log_likelihood(model, t) -> np.ndarray:
    """Per row of ``t`` (a session, or a click pattern standing for ``t.weight`` sessions): the mean over its ranks
    of ln P(c_r | c_<r) — the terms whose weighted mean is :func:`scores`' ``log_likelihood``."""
    return _per_session(np.clip(model.conditional(t), _TINY, 1.0), t.mask)


def fit_comparison(lls: dict, labels: dict, weight) -> dict | None:
    """Which model fits the held-out clicks best, and is it resolved: ``lls`` key → per-row log-likelihood
    (:func:`session_log_likelihood`, rows weighted by ``weight``), ``labels`` key → name.  The best by mean, and its
    difference from every other model paired over the same sessions with a 90 % interval
    (:func:`~ultr_core.evaluation.intervals.mean_interval`); ``tied``: the models whose interval reaches 0
    (:data:`FIT_RULE`).  None with fewer than two models.

    >>> import numpy as np
    >>> a = np.random.default_rng(0).normal(-0.3, 0.05, 100)       # b: a with noise, c: clearly worse
    >>> b, c = a + np.random.default_rng(1).normal(0.0, 0.01, 100), a - 0.2
    >>> out = fit_comparison({"a": a, "b": b, "c": c}, {"a": "A", "b": "B", "c": "C"}, np.ones(100))
    >>> out["best"], out["tied"], out["versus"]["c"]["lower"] > 0
    ('a', ['b'], True)
    """
    from ultr_core.evaluation.intervals import mean_interval
    if len(lls) < 2:
        return None
    w = np.asarray(weight, np.float64)
    means = {k: float(v @ w / w.sum()) for k, v in lls.items()}
    best = max(means, key=means.get)
    versus = {k: mean_interval(lls[best] - v, w).to_json() for k, v in lls.items() if k != best}
    tied = [k for k, iv in versus.items() if not iv["supported"] or iv["lower"] <= 0]
    runner = max(versus, key=lambda k: means[k])
    return {"best": best, "label": labels[best], "runner_up": runner, "versus": versus,
            "tied": sorted(tied, key=lambda k: -means[k]), "labels": dict(labels), "rule": FIT_RULE}


def fit_sentence(fit: dict, keys=None) -> str:
    """:func:`fit_comparison` as a sentence naming what it compares: "Held-out clicks: A fits best (log-likelihood
    A − B = d [lo, hi])", or "A tied with B, … (…, not resolved)"; ``keys``: only these models are named."""
    from ultr_core.evaluation.intervals import interval_text
    label = dict(fit.get("labels", {}))
    others = [k for k in fit["versus"] if keys is None or k in keys]
    runner = fit["runner_up"] if fit["runner_up"] in others else others[0]
    name = lambda k: label.get(k, k)          # noqa: E731
    diff = f"log-likelihood {fit['label']} − {name(runner)} = {interval_text(fit['versus'][runner], '{:+.4f}')}"
    tied = [name(k) for k in fit["tied"] if k in others]
    if not tied:
        return f"Held-out clicks: {fit['label']} fits best ({diff})"
    return f"Held-out clicks: {fit['label']} tied with {', '.join(tied)} ({diff}, not resolved)"
