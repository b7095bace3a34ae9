"""A learned attractiveness prior (issue #47, item 6): empirical-Bayes shrinkage towards a shared baseline instead of
PyClick's one success in two trials for every (query, document) pair.

Each pair's attractiveness gets the prior (m·μ, m) — m pseudo-impressions at the baseline μ — where μ is one
:class:`PriorBaseline` record of :data:`BASELINES` (the impression-weighted mean attractiveness over the log, over the
pair's query, or over the pairs shown at the pair's mean rank), computed from a fit with PyClick's prior.  The
baseline and m ∈ :data:`STRENGTHS` are chosen on validation: a random fifth of the training sessions (a binomial
thinning of each pattern's count, seeded) is held out, each (baseline, m) fitted on the rest and scored by held-out
log-likelihood, PyClick's prior competing as one more candidate.  A pair never seen in training then gets μ, not ½.

>>> import numpy as np
>>> from ultr_core.clickmodels.sessions import SessionTable
>>> t = SessionTable(np.array([[0, 1], [0, 2]]), np.array([[1, 0], [1, 0]], bool), np.array([30.0, 10.0]), 4, 40)
>>> mu = BASELINE_BY_KEY["global"].baseline(np.array([0.9, 0.1, 0.2, 0.5]), np.array([40.0, 30, 10, 0]),
...                                         np.zeros(4, int), np.array([1.0, 2, 2, np.nan]))
>>> mu.round(3).tolist()                 # (0.9·40 + 0.1·30 + 0.2·10) / 80 for every pair, the unseen one too
[0.512, 0.512, 0.512, 0.512]
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

import numpy as np

from ultr_core.clickmodels.evaluation import scores
from ultr_core.clickmodels.sessions import PYCLICK_PRIOR, SessionTable
from ultr_core.logs.outputs import JsonRecord

__all__ = ["PriorBaseline", "BASELINES", "BASELINE_BY_KEY", "STRENGTHS", "VALID_SHARE", "learned_prior",
           "prior_from", "PRIORS", "PRIOR_LABELS", "prior_text", "PriorChoice"]

#: pseudo-impressions m of the learned prior tried on validation
STRENGTHS = (1.0, 4.0, 16.0, 64.0)
#: the share of the training sessions held out to choose the prior
VALID_SHARE = 0.2
#: the priors a comparison can use (CLI ``--prior``) and the label a page shows
PRIOR_LABELS = {"pyclick": "PyClick's ½", "learned": "learned"}
PRIORS = tuple(PRIOR_LABELS)


@dataclass(frozen=True, kw_only=True)
class PriorChoice(JsonRecord):
    """What a model's learned prior chose: the baseline's key ("pyclick": PyClick's ½) and its strength in
    pseudo-impressions — found on held-out sessions (how many, the chosen and PyClick's held-out log-likelihood) or
    taken from another model's search (``chosen_by``)."""

    baseline: str
    strength: float
    chosen_by: str | None = None
    validation_sessions: int | None = None
    validation_log_likelihood: float | None = None
    pyclick_validation_log_likelihood: float | None = None

    def text(self) -> str:
        """In a table's words: "per query × 4" or "PyClick's ½"."""
        return prior_text(self)

    def short(self) -> str:
        """In the CLI's words: "query × 4" or "pyclick"."""
        return self.baseline + (f" × {self.strength:g}" if self.baseline != "pyclick" else "")


def prior_text(chosen: PriorChoice) -> str:
    """What a model's learned prior chose, in words: "per query × 4" or "PyClick's ½"."""
    if chosen.baseline not in BASELINE_BY_KEY:
        return PRIOR_LABELS["pyclick"]
    return f"{BASELINE_BY_KEY[chosen.baseline].label} × {chosen.strength:g}"


def _mean_by(group: np.ndarray, attr: np.ndarray, n: np.ndarray, fallback: float) -> np.ndarray:
    """Impression-weighted mean of ``attr`` within each group, the fallback where a group has no impressions."""
    size = int(group.max()) + 1 if len(group) else 0
    num, den = np.bincount(group, attr * n, size), np.bincount(group, n, size)
    return np.where(den > 0, num / np.maximum(den, 1e-300), fallback)[group]


def _global(attr, n, pair_query, mean_rank):
    return np.full(len(attr), float((attr * n).sum() / max(n.sum(), 1e-300)))


def _query(attr, n, pair_query, mean_rank):
    return _mean_by(pair_query, attr, n, _global(attr, n, pair_query, mean_rank)[0])


def _rank(attr, n, pair_query, mean_rank):
    g = _global(attr, n, pair_query, mean_rank)[0]
    r = np.where(np.isfinite(mean_rank), np.rint(np.nan_to_num(mean_rank, nan=0.0)), 0).astype(np.int64)
    return np.where(r > 0, _mean_by(r, attr, n, g), g)


@dataclass(frozen=True)
class PriorBaseline:
    """One shared baseline μ: ``key``, ``label``, ``help`` and ``baseline(attr, impressions, pair_query,
    mean_rank) -> μ per pair``."""

    key: str
    label: str
    help: str
    baseline: Callable


BASELINES = (
    PriorBaseline("global", "global mean", "the impression-weighted mean attractiveness of the log", _global),
    PriorBaseline("query", "per query", "the mean over the pair's query (the global mean for a query without "
                  "impressions)", _query),
    PriorBaseline("rank", "per mean rank", "the mean over the pairs shown, on average, at the pair's rank",
                  _rank),
)
BASELINE_BY_KEY = {b.key: b for b in BASELINES}


def _impressions(t: SessionTable) -> tuple[np.ndarray, np.ndarray]:
    n, _, rank_sum = t.per_pair()
    return n, np.where(n > 0, rank_sum / np.maximum(n, 1e-300), np.nan)


def prior_from(base_attr: np.ndarray, t: SessionTable, pair_query: np.ndarray, *, baseline: str,
               strength: float) -> tuple:
    """(m·μ, m) per pair from a fit's attractiveness on ``t`` (PyClick's prior)."""
    n, mean_rank = _impressions(t)
    mu = np.clip(BASELINE_BY_KEY[baseline].baseline(base_attr, n, pair_query, mean_rank), 1e-4, 1 - 1e-4)
    return strength * mu, np.full(len(mu), float(strength))


def learned_prior(cls, train: SessionTable, pair_query: np.ndarray, *, seed: int = 0,
                  choice: PriorChoice | None = None, base_cls=None) -> tuple:
    """(the prior, what was chosen): the (baseline, strength) of best held-out log-likelihood for ``cls`` on a
    random fifth of ``train``'s sessions — or ``choice``'s (baseline, strength) without a search, its baseline from a
    ``base_cls`` fit (the gradient models take PBM's choice and baseline: a search would refit them 13 times).
    What was chosen is a :class:`PriorChoice`."""
    if choice is not None:
        info = PriorChoice(baseline=choice.baseline, strength=choice.strength, chosen_by=choice.chosen_by)
        if choice.baseline == "pyclick":
            return PYCLICK_PRIOR, info
        base = (base_cls or cls)().fit(train)
        return prior_from(base.attr, train, pair_query, baseline=choice.baseline, strength=choice.strength), info
    rng = np.random.default_rng(seed)
    held = rng.binomial(train.weight.astype(np.int64), VALID_SHARE).astype(np.float64)
    fit_t, valid = replace(train, weight=train.weight - held), replace(train, weight=held)
    keep = held > 0
    valid = replace(valid, pairs=valid.pairs[keep], clicks=valid.clicks[keep], weight=held[keep],
                    shown=None if valid.shown is None else valid.shown[keep])
    base = cls().fit(fit_t)
    ll = {("pyclick", 2.0): scores(base, valid)["log_likelihood"]}
    for b in BASELINES:
        for m in STRENGTHS:
            model = cls().fit(replace(fit_t, attr_prior=prior_from(base.attr, fit_t, pair_query, baseline=b.key,
                                                                   strength=m)))
            ll[(b.key, m)] = scores(model, valid)["log_likelihood"]
    best = max(ll, key=ll.get)
    out = PriorChoice(baseline=best[0], strength=best[1], validation_sessions=int(held.sum()),
                      validation_log_likelihood=ll[best], pyclick_validation_log_likelihood=ll[("pyclick", 2.0)])
    if best[0] == "pyclick":
        return PYCLICK_PRIOR, out
    return prior_from(base.attr, fit_t, pair_query, baseline=best[0], strength=best[1]), out
