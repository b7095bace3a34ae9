"""A learned attractiveness prior (issue #47, item 6): empirical-Bayes shrinkage towards a shared baseline instead of
PyClick's one success in two trials for every (query, document) pair.

Each pair's attractiveness gets the prior (m·μ, m) — m pseudo-impressions at the baseline μ — where μ is one
:class:`PriorBaseline` record of :data:`BASELINES` (the impression-weighted mean attractiveness over the log, over the
pair's query, or over the pairs shown at the pair's mean rank), computed from a fit with PyClick's prior.  The
baseline and m ∈ :data:`STRENGTHS` are chosen on validation: a random fifth of the training sessions (a binomial
thinning of each pattern's count, seeded) is held out, each (baseline, m) fitted on the rest and scored by held-out
log-likelihood, PyClick's prior competing as one more candidate.  A pair never seen in training then gets μ, not ½.
The training table may be in memory or on disk (:class:`~ultr_core.clickmodels.patterns.PatternFile`): the held-out
fifth is drawn pattern by pattern in file order either way (:func:`hold_out`), so both give the same choice.

Which prior a model gets by default (``--prior auto``) is its record's (``ClickModelSpec.prior``,
:mod:`~ultr_core.clickmodels.registry`): the learned one for DCM and DCM-ML, which fit held-out sessions better with
it on every sparse log measured (docs/click_models.md, "Sparse logs beside CLAX"), PyClick's ½ for the rest.

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

from ultr_core.clickmodels.evaluation import score_models
from ultr_core.clickmodels.sessions import PYCLICK_PRIOR, SessionTable
from ultr_core.logs.outputs import JsonRecord

__all__ = ["PriorBaseline", "BASELINES", "BASELINE_BY_KEY", "STRENGTHS", "VALID_SHARE", "learned_prior",
           "prior_from", "PRIORS", "PRIOR_LABELS", "DEFAULT_PRIOR", "MODEL_PRIORS", "model_prior", "prior_text",
           "PriorChoice", "hold_out", "file_order"]

#: pseudo-impressions m of the learned prior tried on validation
STRENGTHS = (1.0, 4.0, 16.0, 64.0)
#: the share of the training sessions held out to choose the prior
VALID_SHARE = 0.2
#: the priors a comparison can use (CLI ``--prior``) and the label a page shows; "auto": each model its record's
PRIOR_LABELS = {"auto": "each model's own", "pyclick": "PyClick's ½ for all", "learned": "learned for all"}
PRIORS = tuple(PRIOR_LABELS)
#: what every command, page and task uses unless a prior is chosen
DEFAULT_PRIOR = "auto"
#: the priors one model can be fitted with (a model record's ``prior``)
MODEL_PRIORS = ("pyclick", "learned")


def model_prior(spec, prior: str) -> str:
    """The prior ``spec``'s model is fitted with under the comparison's ``prior``: its record's under "auto".

    >>> from ultr_core.clickmodels.registry import MODEL_BY_KEY
    >>> [model_prior(MODEL_BY_KEY[k], "auto") for k in ("pbm", "dcm", "dcm_ml")]
    ['pyclick', 'learned', 'learned']
    >>> model_prior(MODEL_BY_KEY["dcm"], "pyclick")
    'pyclick'
    """
    return spec.prior if prior == "auto" else prior


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
        return "PyClick's ½"
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
               strength: float, impressions: tuple | None = None) -> tuple:
    """(m·μ, m) per pair from a fit's attractiveness on ``t`` (PyClick's prior); ``impressions``: ``t``'s
    (impressions, mean rank) per pair where the caller has them (a pass over ``t`` otherwise)."""
    n, mean_rank = _impressions(t) if impressions is None else impressions
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
    fit_t, valid, held = hold_out(train, seed)
    fit = _fitter(cls, fit_t)
    base, impressions = fit(fit_t.attr_prior), _impressions(fit_t)
    priors = {(b.key, m): prior_from(base.attr, fit_t, pair_query, baseline=b.key, strength=m,
                                     impressions=impressions) for b in BASELINES for m in STRENGTHS}
    fits = {("pyclick", 2.0): base, **{k: fit(p) for k, p in priors.items()}}
    ll = {k: s["log_likelihood"] for k, s in score_models(fits, valid, log_likelihood_only=True)[0].items()}
    best = max(ll, key=ll.get)
    out = PriorChoice(baseline=best[0], strength=best[1], validation_sessions=held,
                      validation_log_likelihood=ll[best], pyclick_validation_log_likelihood=ll[("pyclick", 2.0)])
    return (PYCLICK_PRIOR if best[0] == "pyclick" else priors[best]), out


def _fitter(cls, t) -> Callable:
    """prior → ``cls`` fitted on ``t`` under it: a counting model sums ``t`` once and divides under each prior
    (:meth:`~ultr_core.clickmodels.models.ClickModel.statistics`), another refits."""
    stats = cls().statistics(t)
    if stats is None:
        return lambda prior: cls().fit(replace(t, attr_prior=prior))
    return lambda prior: cls().from_statistics(stats, prior)


def hold_out(train, seed: int) -> tuple:
    """(the fitting part, the held-out part, its sessions) of ``train``: each pattern's sessions thinned binomially
    (share :data:`VALID_SHARE`, ``seed``), drawn pattern by pattern in the order DuckDB writes pattern files
    (:func:`file_order`) — an in-memory table at once, a :class:`~ultr_core.clickmodels.patterns.PatternFile` chunk
    by chunk into two weight files beside it (the same draws: a generator's binomials do not depend on how the
    array is cut), so that a log gives the same choice read by a page, by the CLI or from disk."""
    rng = np.random.default_rng(seed)
    if isinstance(train, SessionTable):
        order = file_order(train)
        held = np.empty(len(train.weight))
        held[order] = rng.binomial(train.weight[order].astype(np.int64), VALID_SHARE)
        return replace(train, weight=train.weight - held), train.reweighted(held), int(held.sum())
    paths, sums = (f"{train.path}.{part}-{seed}" for part in ("fit", "held")), [0.0, 0.0]
    paths = tuple(paths)
    with open(paths[0], "wb") as fit_f, open(paths[1], "wb") as held_f:
        for c in train.chunks():
            held = rng.binomial(c.weight.astype(np.int64), VALID_SHARE).astype(np.float64)
            (c.weight - held).tofile(fit_f)
            held.tofile(held_f)
            sums[0] += float((c.weight - held).sum())
            sums[1] += float(held.sum())
    return (replace(train, weight_file=paths[0], total_weight=sums[0]),
            replace(train, weight_file=paths[1], total_weight=sums[1]), int(sums[1]))


def file_order(t: SessionTable) -> np.ndarray:
    """The order of ``t``'s patterns in a pattern file (``clickmodels/patterns.py: _write_patterns``): by pair code
    rank by rank (−1 past a list's end), then by the clicks as a bit mask (rank r: bit r − 1).

    >>> t = SessionTable(np.array([[1, 0], [0, 1], [0, 1]]), np.array([[0, 0], [0, 1], [1, 0]], bool),
    ...                  np.ones(3), 2, 3)
    >>> file_order(t).tolist()                 # (0, 1) clicked at rank 1 (bits 1), at rank 2 (bits 2), then (1, 0)
    [2, 1, 0]
    """
    pairs = np.where(t.mask, t.pairs, -1)
    bits = (t.clicks.astype(np.int64) << np.arange(t.depth)[None, :]).sum(1)
    return np.lexsort((bits, *pairs.T[::-1]))
