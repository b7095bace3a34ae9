"""Probability that the IG is connected under uniform sampling (Example 2 of
*Identifiability Matters*; Lemma A.1 and Gilbert's random-graph bound), formula and Monte Carlo."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ultr_core.identifiability.graph import _components

__all__ = ["identifiability_probability", "identifiability_probability_mc", "probability_table"]


def identifiability_probability(n_pairs, n_features, n_factors, *, form: str = "gilbert"):
    """P(IG connected) under uniform sampling (Example 2), clipped to [0, 1].  ``form="gilbert"`` (default): Lemma
    A.1's edge probability in Gilbert's bound, ``1 − |T|·exp(−N²(|T|−1)/(|X|·|T|²))``; ``"simplified"``: the same
    with (|T| − 1)/|T| ≈ 1, ``1 − |T|·exp(−N²/(|X|·|T|))`` — SPEC §5 writes both, chained by ≈.  The default is the
    one nearer the Monte Carlo truth (docs/conventions.md).

    >>> round(float(identifiability_probability(2500, 10_000, 100)), 4)
    0.7945
    >>> round(float(identifiability_probability(2500, 10_000, 100, form="simplified")), 4)
    0.807
    """
    N = np.asarray(n_pairs, np.float64)
    X, T = float(n_features), np.asarray(n_factors, np.float64)
    if form not in ("gilbert", "simplified"):
        from ultr_core.errors import ConfigError
        raise ConfigError("form", f"must be 'gilbert' or 'simplified', got {form!r}")
    share = (T - 1) / T if form == "gilbert" else 1.0
    p = 1 - T * np.exp(-N ** 2 * share / (X * T))
    return np.clip(p, 0.0, 1.0)


def identifiability_probability_mc(n_pairs: int, n_features: int, n_factors: int,
                                   *, n_trials: int = 200, seed: int = 0) -> float:
    """Monte Carlo estimate of the same probability: draw ``n_pairs`` (x, t) uniformly from
    X × T, build the IG over all T factors, count how often it is connected."""
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(n_trials):
        x = rng.integers(0, n_features, n_pairs)
        t = rng.integers(0, n_factors, n_pairs)
        if len(np.unique(t)) < n_factors:
            continue                      # an unseen factor is an isolated node
        lab = _components(x, t, n_features, n_factors)
        hits += bool(lab.min() == lab.max())
    return hits / n_trials


def probability_table(n_pairs: int, n_features: int, contexts, *, n_positions: int = 10, n_trials: int = 200,
                      seed: int = 0) -> pd.DataFrame:
    """Formula and Monte Carlo identifiability probability against the number of context
    types: the bias factors are (context, position) pairs, |T| = contexts × positions."""
    rows = []
    for c in contexts:
        T = int(c) * n_positions
        rows.append({"contexts": int(c), "n_factors": T,
                     "formula": float(identifiability_probability(n_pairs, n_features, T)),
                     "monte_carlo": identifiability_probability_mc(n_pairs, n_features, T, n_trials=n_trials,
                                                                   seed=seed)})
    return pd.DataFrame(rows)
