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

from dataclasses import dataclass, field

import numpy as np

__all__ = ["scores", "score_models", "LikelihoodMoments", "FitComparison", "fit_comparison", "FIT_RULE"]

#: how the held-out fits are told apart (:func:`fit_comparison`)
FIT_RULE = ("log-likelihood: a model fits best when the 90 % interval of its difference from each other model "
            "(paired over the same test sessions, normal approximation) lies above 0; one whose interval reaches 0 "
            "is tied with it")

_TINY = 1e-300           # log of a zero probability: PyClick prints an error and skips the term; we floor it


def scores(model, t) -> dict:
    """Log-likelihood, perplexity (overall and by rank) and conditional perplexity of ``model`` on ``t``; with lists
    of varying length each session's mean runs over the ranks it shows and each rank's perplexity over the sessions
    that show it."""
    return score_models({"m": model}, t)[0]["m"]


def _per_session(cond, m) -> np.ndarray:
    return (np.log(cond) * m).sum(1) / np.maximum(m.sum(1), 1)


def _conditional(model, c) -> np.ndarray:
    """P(observed c_r | c_<r) of a chunk, floored at ``_TINY``."""
    return np.clip(model.conditional(c), _TINY, 1.0)


def _probabilities(model, c) -> tuple[np.ndarray, np.ndarray]:
    """(P(observed c_r | c_<r), P(observed c_r)) of a chunk, floored at ``_TINY``."""
    full = model.full(c)
    return _conditional(model, c), np.clip(np.where(c.clicks, full, 1 - full), _TINY, 1.0)


def score_models(models: dict, t, *, log_likelihood_only: bool = False) -> tuple[dict, "LikelihoodMoments", dict]:
    """Every model of ``models`` (key → fitted model) scored on the test patterns ``t`` in one pass over its chunks
    (:meth:`~ultr_core.clickmodels.sessions.SessionTable.chunks`; a table on disk is read chunk by chunk and never
    held): (key → :func:`scores`' record, the sums of the per-session log-likelihoods that
    :func:`fit_comparison` reads, key → seconds spent scoring it).  ``log_likelihood_only``: each record holds only
    its log-likelihood (the same bits), the marginal probabilities and perplexities left out — what a choice among
    priors on held-out sessions reads (:func:`~ultr_core.clickmodels.prior.learned_prior`)."""
    import time
    keys, d = list(models), t.depth
    rank_w, full_s, cond_s = np.zeros(d), np.zeros((len(keys), d)), np.zeros((len(keys), d))
    moments, seconds = LikelihoodMoments.empty(keys), dict.fromkeys(keys, 0.0)
    for c in t.chunks():
        wr = c.weight[:, None] * c.mask
        rank_w += wr.sum(0)
        lls = np.empty((len(keys), len(c.weight)))
        for i, k in enumerate(keys):
            t0 = time.perf_counter()
            if log_likelihood_only:
                lls[i] = _per_session(_conditional(models[k], c), c.mask)
                seconds[k] += time.perf_counter() - t0
                continue
            cond, full = _probabilities(models[k], c)
            full_s[i] += (wr * np.log2(full)).sum(0)
            cond_s[i] += (wr * np.log2(cond)).sum(0)
            lls[i] = _per_session(cond, c.mask)
            seconds[k] += time.perf_counter() - t0
        moments.add(lls, c.weight)
    if log_likelihood_only:
        return {k: {"log_likelihood": moments.mean(k)} for k in keys}, moments, seconds
    out = {}
    for i, k in enumerate(keys):
        by_rank = 2.0 ** (-full_s[i] / np.maximum(rank_w, 1e-300))
        cond_rank = 2.0 ** (-cond_s[i] / np.maximum(rank_w, 1e-300))
        out[k] = {"log_likelihood": moments.mean(k), "perplexity": float(by_rank.mean()),
                  "perplexity_by_rank": by_rank.tolist(), "conditional_perplexity": float(cond_rank.mean()),
                  "conditional_perplexity_by_rank": cond_rank.tolist()}
    return out, moments, seconds


class LikelihoodMoments:
    """The sums a paired comparison of held-out log-likelihoods reads, over test sessions of weight w: N = Σw,
    Σw·ℓ_k per model and Σw·ℓ_k·ℓ_j per pair of models — so that the difference of any two models has its mean and
    spread without the per-session values being held (a test log of any size)."""

    def __init__(self, keys, n: float, total: np.ndarray, products: np.ndarray):
        self.keys, self.n, self.total, self.products = list(keys), float(n), total, products

    @classmethod
    def empty(cls, keys) -> "LikelihoodMoments":
        return cls(keys, 0.0, np.zeros(len(keys)), np.zeros((len(keys), len(keys))))

    @classmethod
    def of(cls, lls: dict, weight) -> "LikelihoodMoments":
        """From per-row log-likelihoods (key → array, rows weighted by ``weight``)."""
        out = cls.empty(list(lls))
        out.add(np.stack([np.asarray(v, np.float64) for v in lls.values()]), weight)
        return out

    def add(self, lls: np.ndarray, weight) -> None:
        """Add rows: ``lls`` (models, rows) in the order of ``keys``."""
        w = np.asarray(weight, np.float64)
        self.n += float(w.sum())
        self.total += lls @ w
        self.products += (lls * w) @ lls.T

    def mean(self, key) -> float:
        i = self.keys.index(key)
        return float(self.total[i] / self.n) if self.n > 0 else float("nan")

    def difference(self, a, b):
        """The interval of mean(ℓ_a − ℓ_b), paired over the same sessions (:func:`mean_interval_of_sums`)."""
        from ultr_core.evaluation.intervals import mean_interval_of_sums
        i, j = self.keys.index(a), self.keys.index(b)
        p = self.products
        return mean_interval_of_sums(self.n, float(self.total[i] - self.total[j]),
                                     float(p[i, i] - 2 * p[i, j] + p[j, j]))


@dataclass(frozen=True)
class FitComparison:
    """Which model fits the held-out clicks best, and is it resolved (:func:`fit_comparison`): ``best`` and
    ``runner_up`` (keys), ``versus`` key → the :class:`~ultr_core.evaluation.intervals.Interval` of the best model's
    log-likelihood minus that model's, paired over the same sessions; ``tied``: the models whose interval reaches 0
    (:data:`FIT_RULE`), best-fitting first; ``labels`` key → name."""

    best: str
    runner_up: str
    versus: dict
    tied: tuple
    labels: dict
    rule: str = field(default=FIT_RULE)

    @property
    def label(self) -> str:
        return self.labels[self.best]

    def to_json(self) -> dict:
        """``{best, label, runner_up, versus: {key: interval}, tied, labels, rule}`` — the reports' ``best_fit``."""
        return {"best": self.best, "label": self.label, "runner_up": self.runner_up,
                "versus": {k: iv.to_json() for k, iv in self.versus.items()}, "tied": list(self.tied),
                "labels": dict(self.labels), "rule": self.rule}

    def sentence(self, keys=None) -> str:
        """The comparison as a sentence naming what it compares: "Held-out clicks: A fits best (log-likelihood
        A − B = d [lo, hi])", or "A tied with B, … (…, not resolved)"; ``keys``: only these models are named."""
        others = [k for k in self.versus if keys is None or k in keys]
        runner = self.runner_up if self.runner_up in others else others[0]
        name = lambda k: self.labels.get(k, k)          # noqa: E731
        diff = f"log-likelihood {self.label} − {name(runner)} = {self.versus[runner].text('{:+.4f}')}"
        tied = [name(k) for k in self.tied if k in others]
        if not tied:
            return f"Held-out clicks: {self.label} fits best ({diff})"
        return f"Held-out clicks: {self.label} tied with {', '.join(tied)} ({diff}, not resolved)"


def fit_comparison(lls, labels: dict, weight=None) -> FitComparison | None:
    """Which model fits the held-out clicks best, and is it resolved: ``lls`` key → per-row log-likelihood (each
    row's mean over its ranks of ln P(c_r | c_<r), rows weighted by ``weight``) or their :class:`LikelihoodMoments`;
    ``labels`` key → name.  The best by mean, and its difference from every other model paired over the same
    sessions with a 90 % interval (:func:`~ultr_core.evaluation.intervals.mean_interval_of_sums`); ``tied``: the
    models whose interval reaches 0 (:data:`FIT_RULE`).  None with fewer than two models.

    >>> a = np.random.default_rng(0).normal(-0.3, 0.05, 100)       # b: a with noise, c: clearly worse
    >>> b, c = a + np.random.default_rng(1).normal(0.0, 0.01, 100), a - 0.2
    >>> out = fit_comparison({"a": a, "b": b, "c": c}, {"a": "A", "b": "B", "c": "C"}, np.ones(100))
    >>> out.best, out.tied, out.versus["c"].lower > 0
    ('a', ('b',), True)
    """
    m = lls if isinstance(lls, LikelihoodMoments) else LikelihoodMoments.of(lls, weight)
    if len(m.keys) < 2:
        return None
    means = {k: m.mean(k) for k in m.keys}
    best = max(means, key=means.get)
    versus = {k: m.difference(best, k) for k in m.keys if k != best}
    tied = [k for k, iv in versus.items() if not iv.supported or iv.lower <= 0]
    runner = max(versus, key=lambda k: means[k])
    return FitComparison(best, runner, versus, tuple(sorted(tied, key=lambda k: -means[k])), dict(labels))
