"""Trust bias's affine click probabilities for the estimators beyond examination (issue #48): a document of
relevance R shown at position k is clicked with β_k + α_k R, α_k = θ_k (ε⁺_k − ε⁻_k), β_k = θ_k ε⁻_k (Vardasbi,
Oosterhuis & de Rijke, CIKM 2020; PBM is β = 0, α = θ).

:func:`true_affine` reads (α, β) off the simulated log's users; :func:`estimated_affine` estimates them as Agarwal,
Wang, Li, Bendersky & Najork (WWW 2019) do — from swap interventions (position 1 swapped with a random rank, the
simulator's ``intervention``) — by maximum likelihood on the swap log's counts
(:func:`~ultr_core.clickmodels.trust.fit_affine_counts`; their EM maximises the same likelihood).  Clicks fix (α, β)
only up to the affine map of docs/identifiability_trust_bias.md, so :func:`swap_recovery` reports the quantities
that map leaves alone, with bootstrap intervals: the signal ratios α_k/α_1 and the noise-to-signal steps
(β_k/α_k − β_1/α_1)/(β_2/α_2 − β_1/α_1).
"""
from __future__ import annotations

import collections
import hashlib
from dataclasses import dataclass, replace

import numpy as np

from ultr_core.clickmodels.trust import fit_affine_counts
from ultr_core.errors import ConfigError
from ultr_core.evaluation.intervals import bootstrap_intervals

__all__ = ["true_affine", "estimated_affine", "swap_counts", "swap_recovery", "SwapRecovery", "invariants",
           "SWAP_SESSIONS"]

#: sessions of the simulated swap-intervention log the estimated (α, β) come from
SWAP_SESSIONS = 50_000
_CACHE: "collections.OrderedDict[tuple, tuple]" = collections.OrderedDict()


def true_affine(click_model: dict, theta, n_positions: int) -> tuple[np.ndarray, np.ndarray]:
    """(α_k, β_k) for k = 1 … n of users described by a log's ``click_model`` metadata with examination ``theta``
    (the log's mean true examination per position): :func:`~ultr_core.simulation.clickmodel.affine_curves`.

    >>> a, b = true_affine({"user_model": "trust"}, np.array([1.0, 0.5]), 2)
    >>> a.round(4).tolist(), b.round(4).tolist()                     # ε⁺ = 0.98, 0.97; ε⁻ = 0.65, 0.325
    ([0.33, 0.3225], [0.65, 0.1625])
    >>> true_affine({"user_model": "pbm"}, np.array([1.0, 0.5]), 2)[1].tolist()
    [0.0, 0.0]
    """
    if theta is None:
        raise ConfigError("propensity", "the true trust-bias curves need a simulated log; set propensity='estimated'")
    from ultr_core.simulation.clickmodel import affine_curves
    return affine_curves(click_model, np.asarray(theta, np.float64)[:n_positions])


def swap_counts(log, depth: int, sessions=None) -> tuple:
    """(pair, position, clicks, shown, n_pairs) of a swap log's shown rows at positions ≤ ``depth``, optionally
    over a (bootstrap) multiset of ``sessions`` (codes 0 … S − 1 in file order)."""
    f = log.shown()
    f = f[f["position"].to_numpy() <= depth]
    sess = f["session_id"].to_numpy()
    pair, uniq = np.unique(f["row"].to_numpy() if "row" in f else f["doc_id"].to_numpy(), return_inverse=True)
    cell = uniq * depth + f["position"].to_numpy(np.int64) - 1
    weight = np.ones(len(f))
    if sessions is not None:
        codes, inv = np.unique(sess, return_inverse=True)
        weight = np.bincount(sessions, minlength=len(codes))[inv].astype(np.float64)
    size = len(pair) * depth
    shown = np.bincount(cell, weights=weight, minlength=size)
    clicks = np.bincount(cell, weights=weight * f["click"].to_numpy(), minlength=size)
    keep = np.flatnonzero(shown > 0)
    return keep // depth, keep % depth + 1, clicks[keep], shown[keep], len(pair)


def _swap_log(click_model: dict, dataset, split, seed: int, n_sessions: int = SWAP_SESSIONS):
    from ultr_core.simulation.clickmodel import ClickModelConfig
    from ultr_core.simulation.simulator import ClickSimulator
    cfg = replace(ClickModelConfig.from_meta(click_model), intervention=True, shuffle=0.0)
    return ClickSimulator(cfg, seed=int(seed)).fit(dataset).simulate(split, n_sessions, seed=int(seed) + 11)


def estimated_affine(log, dataset, split, *, data, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(α̂_k, β̂_k) for the shown positions of ``log``: the affine model fitted on a swap-intervention log of
    :data:`SWAP_SESSIONS` sessions drawn from the same users (the way the estimated propensities of IPS come from
    result randomisation), computed once per process for the same split content, users, positions and seed."""
    meta = log.meta.get("click_model")
    if meta is None or "seed" not in log.meta:
        raise ConfigError("log", "estimated trust-bias curves need a simulated log (its users are in its metadata)")
    digest = hashlib.blake2b(np.ascontiguousarray(split.labels).tobytes(), digest_size=16).hexdigest()
    key = (digest, repr(sorted(meta.items())), int(data.n_positions), int(seed))
    if key not in _CACHE:
        depth = int(data.n_positions)
        pair, pos, clicks, shown, n_pairs = swap_counts(_swap_log(meta, dataset, split, seed), depth)
        fit = fit_affine_counts(pair, pos, clicks, shown=shown, n_pairs=n_pairs, depth=depth)
        _CACHE[key] = (fit.signal, fit.noise)
        while len(_CACHE) > 16:
            _CACHE.popitem(last=False)
    return tuple(x.copy() for x in _CACHE[key])


def invariants(alpha, beta) -> tuple[np.ndarray, np.ndarray]:
    """What clicks identify of (α, β) under trust bias (unchanged by r → a·r + t): α_k/α_1 and the noise-to-signal
    steps (β_k/α_k − β_1/α_1)/(β_2/α_2 − β_1/α_1).

    >>> r, n = invariants(np.array([0.4, 0.2, 0.1]), np.array([0.4, 0.1, 0.02]))
    >>> r.tolist(), (n.round(4) + 0.0).tolist()
    ([1.0, 0.5, 0.25], [0.0, 1.0, 1.6])
    """
    alpha, beta = np.asarray(alpha, np.float64), np.asarray(beta, np.float64)
    ratio = beta / alpha
    return alpha / alpha[0], (ratio - ratio[0]) / (ratio[1] - ratio[0])


@dataclass(frozen=True)
class SwapRecovery:
    """Estimated invariants (:func:`invariants`) with 90 % bootstrap intervals (the one interval engine's
    percentile, over sessions; NaN where no interval is supported)."""

    signal_ratio: np.ndarray
    signal_lower: np.ndarray
    signal_upper: np.ndarray
    noise_step: np.ndarray
    noise_lower: np.ndarray
    noise_upper: np.ndarray
    n_boot: int


def swap_recovery(log, depth: int, *, n_boot: int = 30, seed: int = 0) -> SwapRecovery:
    """The invariants of the affine model fitted on the swap log ``log`` up to ``depth``, with percentile bootstrap
    intervals over sessions (``n_boot`` resamples, seeded, each refit started from the full
    log's fit)."""
    pair, pos, c, n, n_pairs = swap_counts(log, depth)
    fit = fit_affine_counts(pair, pos, c, shown=n, n_pairs=n_pairs, depth=depth)
    point = invariants(fit.signal, fit.noise)
    n_sess = int(log.frame["session_id"].nunique())
    rng = np.random.default_rng([int(seed), 19])
    draws = []
    for _ in range(int(n_boot)):
        pair, pos, c, n, n_pairs = swap_counts(log, depth, rng.integers(0, n_sess, n_sess))
        f = fit_affine_counts(pair, pos, c, shown=n, n_pairs=n_pairs, depth=depth, start=fit)
        draws.append(np.concatenate(invariants(f.signal, f.noise)))
    lo, hi, _ = bootstrap_intervals(np.concatenate(point), np.array(draws))
    return SwapRecovery(point[0], lo[:depth], hi[:depth], point[1], lo[depth:], hi[depth:], int(n_boot))
