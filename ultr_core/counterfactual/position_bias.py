"""PBM on a log's (pair, rank) counts for the estimators: the position bias θ̂ from the one maximum-likelihood PBM
fit (:func:`ultr_core.identifiability.uncertainty.factor_uncertainty`: Newton to convergence, documents at the
boundary p = 1 left out, r·o ≤ 1) — the fit ``ig`` reports for the same log — and each pair's attractiveness α̂
given θ̂ under the estimators' prior (the maximum of each pair's concave log-posterior with θ held).

Until issue #58 the estimators ran 200 EM updates of (α, θ) together.  Where lists barely change that is far from
the EM's fixed point (on the edge corpus's Yandex-like log θ̂_r/θ̂_1 moved by up to 0.31 after it; on PyClick's
Yandex sample by 0.02), and the fixed point itself is pulled by documents clicked at every impression (α·θ → 1
raises θ̂ at the ranks they sit at): its θ̂ missed the truth by up to 0.44 where Newton's misses by 0.19.

>>> import numpy as np
>>> n = np.array([100., 100., 100., 100.]); c = np.array([60., 30., 40., 20.])   # pair 0 at ranks 1, 2; pair 1 too
>>> fit = fit_position_bias(n, c, n_pairs=2, depth=2, strength=0.0)
>>> fit.theta.round(3).tolist(), fit.alpha.round(3).tolist(), fit.converged      # θ₂/θ₁ = ½ on both pairs
([1.0, 0.5], [0.6, 0.4], True)
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ultr_core.identifiability.uncertainty import STALLED, factor_uncertainty

__all__ = ["PositionBiasFit", "fit_position_bias", "ATTR_TOL", "ATTR_MAX_ITER"]

#: α̂ given θ̂ has converged when an EM update moves no α by more than this …
ATTR_TOL = 1e-10
#: … within this many steps (each pair's α is a one-dimensional concave problem: Newton's steps in a bracket)
ATTR_MAX_ITER = 200


class PositionBiasFit(NamedTuple):
    """θ̂ per rank (1 at rank 1, each information component of ranks grounded at its first rank), α̂ per pair, the
    impression-weighted mean attractiveness the prior was centred on, and whether both fits converged."""

    theta: np.ndarray
    alpha: np.ndarray
    mean_attr: float
    converged: bool


def fit_position_bias(n: np.ndarray, c: np.ndarray, *, n_pairs: int, depth: int, strength: float,
                      mean_attr: float | None = None, first: tuple = (0.01, 0.02)) -> PositionBiasFit:
    """PBM on the impressions ``n`` and clicks ``c`` of each (pair, rank) cell, indexed pair·depth + rank.  α̂ has
    ``strength`` pseudo-impressions at ``mean_attr`` (None: the impression-weighted mean of a first α̂ under the
    nearly flat prior ``first``).  A rank never clicked has o = 0 at the maximum: it keeps the value of PyClick's
    one-in-two examination prior, 1/(2 + its impressions), so that no weight divides by 0."""
    cells = np.flatnonzero(n > 0)
    pair, rank, nn, cc = cells // depth, cells % depth, n[cells], c[cells]
    fit = factor_uncertainty(pair, rank, nn, c=cc, n_docs=n_pairs, n_factors=depth, component=np.zeros(depth, np.int64),
                             references=np.zeros(depth, np.int64), with_se=False)
    theta = np.where(fit.o > 0, fit.o, 1.0 / (2.0 + np.bincount(rank, nn, depth)))
    # converged unless it stalled (STALLED: the last Newton decrement still above 10⁻⁸; the fit's own 10⁻¹² is not
    # always met in 100 steps on resamples of sparse logs: 12 of 101 fits on the Yandex-like log stopped between
    # 2·10⁻¹¹ and 3·10⁻⁶)
    converged = bool(fit.converged or abs(fit.decrement) < STALLED)
    if mean_attr is None:
        alpha, ok = _alpha_given(pair, rank, nn, cc, theta, n_pairs, first)
        shown = np.bincount(pair, nn, n_pairs)
        mean_attr, converged = float((alpha * shown).sum() / max(shown.sum(), 1e-300)), converged and ok
    alpha, ok = _alpha_given(pair, rank, nn, cc, theta, n_pairs, (strength * mean_attr, strength))
    return PositionBiasFit(theta, alpha, mean_attr, converged and ok)


def _alpha_given(pair, rank, n, c, theta, n_pairs: int, prior: tuple) -> tuple[np.ndarray, bool]:
    """α̂ per pair with θ held: each pair's log-posterior Σ c·ln(αθ) + (n − c)·ln(1 − αθ) + a·ln α + (b − a)·ln(1 − α)
    is concave in α on (0, min(1, 1/max θ)), so Newton's method inside a bisection bracket (the sign of the score
    moves the bracket; a step that leaves it bisects) finds its maximum, all pairs at once.  (α̂, converged)."""
    a, b = (float(v) for v in prior)
    th = theta[rank]
    lo = np.zeros(n_pairs)
    hi = np.minimum(1.0, 1.0 / np.maximum(_max_by(pair, th, n_pairs), 1e-300))      # α ≤ 1 and α·θ ≤ 1
    alpha = np.minimum(np.full(n_pairs, 0.5), hi / 2)
    skips = n - c
    for _ in range(ATTR_MAX_ITER):
        x, p = alpha[pair], np.minimum(alpha[pair] * th, 1 - 1e-15)
        with np.errstate(divide="ignore", invalid="ignore"):
            g = np.bincount(pair, c / x - skips * th / (1 - p), n_pairs) + a / alpha - (b - a) / (1 - alpha)
            h = np.bincount(pair, -c / x ** 2 - skips * (th / (1 - p)) ** 2, n_pairs) - a / alpha ** 2 - (b - a) / (
                1 - alpha) ** 2
        lo, hi = np.where(g > 0, alpha, lo), np.where(g > 0, hi, alpha)
        step = np.where(h < 0, alpha - g / h, np.nan)
        new = np.where((step > lo) & (step < hi), step, (lo + hi) / 2)
        moved = float(np.max(np.abs(new - alpha), initial=0.0))
        alpha = new
        if moved <= ATTR_TOL:
            return alpha, True
    return alpha, False


def _max_by(key, values, size) -> np.ndarray:
    out = np.zeros(size)
    np.maximum.at(out, key, values)
    return out
