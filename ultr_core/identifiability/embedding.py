"""Embedding ULTR models for the identifiability study (SPEC §3; identifiability paper App. C.3).

One free relevance parameter r̂_d per document and one observation parameter ô_g per bias
factor *group* (a factor, or a group of merged factors — pass ``groups`` from a
:class:`~ultr_core.identifiability.MergePlan`).  They are fitted on the click-through table
(document, group, impressions n, clicks c) of the shown rows, all vectorised with
``numpy.bincount``; parameters start uniform in [0, 1] (seeded) as in the paper and stay
clipped to [0, 1].

* ``dla`` — the identifiability paper's DLA (SPEC §3; its official ``algorithm/dla.py``):
  r̂_d = Σ_g n·ctr·ô_g / Σ_g n·ô_g² (least squares for r̂), then ô_g = the impression-weighted
  mean of ctr/r̂_d over the documents shown with g (0 where r̂_d = 0).  With equal impressions per
  row, as in the paper's data, these are its per-row sums and means.
* ``dla_ls`` — alternating least squares for both (ô_g = Σ_d n·ctr·r̂_d / Σ_d n·r̂_d²), the
  project's earlier variant, kept as an option.
* ``regression_em`` — as the paper's official ``algorithm/regression_em.py`` updates it: its
  E-step takes ctr/ô as the row's relevance, so P(R=1 | row) = ctr + (1−ctr)(1−ô)(ctr/ô)/(1−ctr)
  = ctr/ô and r̂_d = mean(ctr/ô_g); then ô_g = mean(ctr + (1−ctr)·ô(1−r̂)/(1−ô r̂)) (EM step 1,
  r̂ initialised U(0, 0.5)).
* ``em`` — the textbook PBM EM (Wang et al. 2018's E-step with the current r̂):
  P(R=1|C=0) = (1−ô)r̂/(1−ô r̂), P(E=1|C=0) = ô(1−r̂)/(1−ô r̂); r̂_d, ô_g the posterior means
  (the project's earlier ``regression_em``; the position-bias estimator uses it).
* ``two_tower`` — Guo et al. 2019 as the official ``algorithm/two_tower.py``: ĉ = σ(a_d)·σ(b_g),
  binary cross-entropy (impression-weighted mean), full-batch Adam (``lr`` 0.01) on the logits,
  a_d starting at 0 and b_g at N(0, 1).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pandas as pd

from ultr_core.clickmodels.pbm import PBMCells, pbm_em_step
from ultr_core.errors import ConfigError
from ultr_core.logs.clicklog import ClickLog

__all__ = ["ctr_table", "fit_embedding", "fit_counts", "EmbeddingResult", "CountFit", "COUNT_FITS", "COUNT_FIT",
           "EMBEDDING_METHODS", "MAX_ITERS"]

#: iteration cap of a fit to convergence for DLA and Two-Tower (the official code runs 20,000 epochs)
MAX_ITER = 20_000


def ctr_table(log: ClickLog, *, bias=None, groups: np.ndarray | None = None, factors: pd.DataFrame | None = None):
    """Aggregate shown rows into (doc, group, n, c).  ``factors`` (the IG's factor table) with
    ``groups`` maps bias-column tuples to merged groups; without them each distinct bias tuple
    is its own group.  Returns (doc codes, group codes, n, c, n_docs, n_groups, doc_ids)."""
    frame = log.frame[log.frame["shown"]]
    bias = list(bias or log.bias_columns)
    if factors is not None:
        from ultr_core.logs.coding import lookup_codes
        fac = lookup_codes(frame, factors[bias])
        if (fac < 0).any():
            raise ConfigError("factors", "the log has bias factors the factor table lacks")
        g = np.asarray(groups)[fac] if groups is not None else fac
        n_groups = int(np.max(groups)) + 1 if groups is not None else len(factors)
    else:
        g, uniq = pd.MultiIndex.from_frame(frame[bias]).factorize() if len(bias) > 1 else \
            pd.factorize(frame[bias[0]], sort=True)
        n_groups = len(uniq)
    d, doc_ids = pd.factorize(frame["doc_id"], sort=True)
    key = d.astype(np.int64) * n_groups + np.asarray(g, np.int64)
    uk, inv = np.unique(key, return_inverse=True)
    n = np.bincount(inv).astype(np.float64)
    c = np.bincount(inv, weights=frame["click"].to_numpy(np.float64))
    return uk // n_groups, uk % n_groups, n, c, len(doc_ids), n_groups, np.asarray(doc_ids)


@dataclass
class EmbeddingResult:
    relevance: np.ndarray        #: r̂ per document (aligned with ``doc_ids``)
    observation: np.ndarray      #: ô per group
    doc_ids: np.ndarray
    history: list
    iterations: int = 0          #: iterations run
    converged: bool = False      #: the largest parameter change fell below ``tol``


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _ratio(num, den):
    """``num / den`` where ``den > 0``, else 0 (the same bits either way; a masked ``np.divide(where=)`` is
    the faster form for short arrays, a full division and ``np.where`` for long ones: 23 → 13 µs at 10 k)."""
    if np.size(num) < 1000:
        return np.divide(num, den, out=np.zeros_like(num), where=den > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.true_divide(num, den)
    return np.where(den > 0, q, 0.0)


def fit_embedding(log: ClickLog, *, method: str = "dla", bias=None, groups=None, factors=None,
                  n_iter: int | None = None, seed: int = 0, lr: float = 0.01, on_step=None, stop=None,
                  every: int = 10, tol: float = 1e-9, init=None) -> EmbeddingResult:
    """Fit an embedding model (see module docstring) on a click log.  ``on_step(record)`` is
    called every ``every`` iterations with {step, loss}; ``stop`` (a threading.Event) ends early."""
    d, g, n, c, D, G, doc_ids = ctr_table(log, bias=bias, groups=groups, factors=factors)
    return fit_counts(d, g, n, c=c, D=D, G=G, method=method, n_iter=n_iter, seed=seed, lr=lr, tol=tol, init=init,
                      on_step=on_step, stop=stop, every=every, doc_ids=doc_ids)


def fit_counts(d, g, n, *, c, D: int, G: int, method: str = "dla", n_iter: int | None = None, seed: int = 0,
               lr: float = 0.01, tol: float = 1e-9, init=None, on_step=None, stop=None, every: int = 10,
               doc_ids=None, prior: tuple = (0.0, 0.0)) -> EmbeddingResult:
    """Fit on (document code ``d``, group code ``g``, impressions ``n``, clicks ``c``) arrays —
    the click-through table of a log or of an IG built from counts.  Stops after ``n_iter``
    iterations or when the largest change of r̂ and ô falls below ``tol`` (> 0): by default a
    fit to convergence (tolerance 1e-9, at most :data:`MAX_ITERS` of the method — 20,000, or
    100,000 for Regression-EM, as the official code — when ``n_iter`` is None; ``iterations`` and
    ``converged`` on the result say which).  ``init``: ``"random"`` (uniform, the default: DLA_R),
    ``"ones"`` (observations start at 1: DLA_I, the paper's Table 6) or (r, o) arrays.  ``prior`` (EM only):
    (pseudo-successes, pseudo-trials) added to every parameter's update — PyClick's PBM uses (1, 2)."""
    if method not in EMBEDDING_METHODS:
        raise ConfigError("method", f"unknown embedding method {method!r}; use one of {EMBEDDING_METHODS}")
    spec = COUNT_FIT[method]
    n_iter = spec.max_iter if n_iter is None else int(n_iter)
    d, g = np.asarray(d, np.int64), np.asarray(g, np.int64)
    n, c = np.asarray(n, np.float64), np.asarray(c, np.float64)
    if len(n) == 0 or n.sum() == 0:
        raise ConfigError("log", "no shown rows to fit")
    r, o, a, b = _start(spec.start, init, D, G, np.random.default_rng(seed))
    ctr = _ratio(c, n)
    t = _Table(d, g, n, c, ctr, np.bincount(d, n, D), np.bincount(g, n, G), D, G, tuple(prior), n * ctr)
    adam = {k: 0.0 for k in ("ma", "va", "mb", "vb")}
    history, converged, step = [], False, 0
    for step in range(1, n_iter + 1):
        r_old, o_old = r, o
        if spec.step is None:
            r, o = _two_tower_step(t, a, b, adam, step, lr)
        else:
            r, o = spec.step(t, r, o)
        if step % every == 0 or step == n_iter:
            rec = {"step": step, "loss": float(np.sum(n * (t.ctr - r[d] * o[g]) ** 2) / n.sum())}
            history.append(rec)
            if on_step is not None:
                on_step(rec)
        if tol > 0 and max(np.abs(r - r_old).max(initial=0), np.abs(o - o_old).max(initial=0)) < tol:
            converged = True
            break
        if stop is not None and stop.is_set():
            break
    ids = np.arange(D) if doc_ids is None else doc_ids
    return EmbeddingResult(r, o, ids, history, step, converged)


class _Table(NamedTuple):
    """A click-through table as :func:`fit_counts`'s steps read it: codes, impressions, clicks, CTR and the
    impressions per document and per group."""

    d: np.ndarray
    g: np.ndarray
    n: np.ndarray
    c: np.ndarray
    ctr: np.ndarray
    nd: np.ndarray
    ng: np.ndarray
    D: int
    G: int
    prior: tuple = (0.0, 0.0)    #: EM's (pseudo-successes, pseudo-trials) per parameter
    nc: np.ndarray | None = None  #: ``n * ctr``, the weights of DLA's relevance update (computed once per fit)


def _start(kind: str, init, D: int, G: int, rng):
    """The starting (r, o) and their logits (a, b): ``init`` "random" (DLA_R), "ones" (DLA_I) or (r, o) arrays."""
    if isinstance(init, str) and init not in ("random", "ones"):
        raise ConfigError("init", f"must be 'random', 'ones' or (r, o), got {init!r}")
    random_start = init is None or isinstance(init, str)
    if random_start:
        r, o = rng.uniform(0, 1, D), rng.uniform(0, 1, G)
        if kind == "half":                       # Regression-EM's official initialisation: r̂ ~ U(0, 0.5)
            r = r / 2
        if init == "ones":                       # DLA_I of the paper's Table 6: observations start at 1
            o = np.ones(G)
    else:
        r, o = np.asarray(init[0], np.float64).copy(), np.asarray(init[1], np.float64).copy()
    a = np.log(np.clip(r, 1e-3, 1 - 1e-3) / (1 - np.clip(r, 1e-3, 1 - 1e-3)))
    b = np.log(np.clip(o, 1e-3, 1 - 1e-3) / (1 - np.clip(o, 1e-3, 1 - 1e-3)))
    if kind == "logits" and random_start:       # Two-Tower's official start: σ(0) = 0.5 relevance, N(0, 1) logits
        a = np.zeros(D)
        b = rng.normal(0, 1, G) if init != "ones" else np.full(G, 20.0)
        r, o = _sigmoid(a), _sigmoid(b)
    return r, o, a, b


def _dla_step(t: _Table, r, o, least_squares: bool = False):
    """DLA (the paper's update rule; ``least_squares``: both towers by least squares, DLA_LS).  ``t.nc`` is
    ``n * ctr`` computed once, and each gather is made once: the same operations in the same order as
    ``n * ctr * o[g]``, so the same bits, in ≈ 20 % less time per iteration (a fit runs up to 20,000)."""
    d, g, n, ctr, D, G = t.d, t.g, t.n, t.ctr, t.D, t.G
    og = o[g]
    r = np.clip(_ratio(np.bincount(d, t.nc * og, D), np.bincount(d, n * og ** 2, D)), 0, 1)
    rd = r[d]
    if not least_squares:
        return r, np.clip(_ratio(np.bincount(g, n * _ratio(ctr, rd), G), t.ng), 0, 1)
    return r, np.clip(_ratio(np.bincount(g, t.nc * rd, G), np.bincount(g, n * rd ** 2, G)), 0, 1)


def _regression_em_step(t: _Table, r, o):
    d, g, n, ctr = t.d, t.g, t.n, t.ctr
    og = o[g]
    r = np.clip(_ratio(np.bincount(d, n * _ratio(ctr, og), t.D), t.nd), 0, 1)
    rd = r[d]
    p = np.clip(og * rd, 0, 1 - 1e-9)
    o = np.clip(_ratio(np.bincount(g, n * (ctr + (1 - ctr) * og * (1 - rd) / (1 - p)), t.G), t.ng), 0, 1)
    return r, o


def _em_step(t: _Table, r, o):
    """PBM's EM update (:func:`ultr_core.clickmodels.pbm.pbm_em_step`, the one copy) with the fit's prior on both
    the relevance and the observation, estimates in [0, 1]."""
    a, b = t.prior
    return pbm_em_step(PBMCells(t.d, t.g, t.c, t.n - t.c, t.D, t.G, b + t.nd, b + t.ng, a, a, 1.0), r, o)


@dataclass(frozen=True)
class CountFit:
    """One way to fit the click-through table: ``key`` (where it is a key of the algorithm table —
    :data:`~ultr_core.algorithms.specs.ALGORITHM_SPECS` — it is that same method with one free parameter per
    document instead of a ranker over features), ``label``, ``step`` (one closed-form update; None: the two-tower
    gradient step), ``max_iter`` (its cap to convergence), ``start`` (how a random start differs: ``"half"`` r̂ ~
    U(0, 0.5), ``"logits"`` the two-tower logits)."""

    key: str
    label: str
    step: object
    max_iter: int = MAX_ITER
    start: str = "uniform"


def _dla_ls_step(t: _Table, r, o):
    return _dla_step(t, r, o, least_squares=True)


#: the table of count-table fits (the module docstring says what each is)
COUNT_FITS = (
    CountFit("dla", "DLA", _dla_step),
    CountFit("dla_ls", "DLA (least squares)", _dla_ls_step),
    CountFit("regression_em", "Regression-EM", _regression_em_step, 100_000, "half"),   # official: 100,000 epochs
    CountFit("em", "EM", _em_step),
    CountFit("two_tower", "Two-Tower", None, start="logits"),
)
COUNT_FIT = {f.key: f for f in COUNT_FITS}
EMBEDDING_METHODS = tuple(COUNT_FIT)
#: the cap per method (a view of the table)
MAX_ITERS = {f.key: f.max_iter for f in COUNT_FITS}


def _two_tower_step(t: _Table, a, b, adam: dict, step: int, lr: float):
    """One Adam step on the logits ``a``, ``b`` (updated in place) of the two-tower BCE fit."""
    d, g, n = t.d, t.g, t.n
    sa, sb = _sigmoid(a), _sigmoid(b)
    p = np.clip(sa[d] * sb[g], 1e-9, 1 - 1e-9)
    dp = (p - t.ctr) / (p * (1 - p)) * n / n.sum()          # d BCE / d p
    ga = np.bincount(d, dp * sb[g] * sa[d] * (1 - sa[d]), t.D)
    gb = np.bincount(g, dp * sa[d] * sb[g] * (1 - sb[g]), t.G)
    for name, grad, par in (("a", ga, a), ("b", gb, b)):
        adam["m" + name] = 0.9 * adam["m" + name] + 0.1 * grad
        adam["v" + name] = 0.999 * adam["v" + name] + 0.001 * grad ** 2
        mh = adam["m" + name] / (1 - 0.9 ** step)
        vh = adam["v" + name] / (1 - 0.999 ** step)
        par -= lr * mh / (np.sqrt(vh) + 1e-8)
    return _sigmoid(a), _sigmoid(b)
