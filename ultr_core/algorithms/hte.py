"""Heterogeneous treatment effect (HTE) debiasing for LBD's Figure 3c (Chen et al., NeurIPS 2022, §6.3,
following Tian et al.'s intervention experiment).

An intervention log swaps the document at position 1 with the one at a uniformly random shown
position k in every session (``ClickModelConfig(intervention=True)``).  The treatment effect of
showing x at k instead of 1 is the observation ratio ``τ_k(x) = o_k(x) / o_1(x)``:

* :func:`estimate_tau` — a **T-learner**: one ExtraTrees regressor per position k fitted to the
  clicks of the documents shown at k in the intervention log, ``m_k(x) ≈ P(click | x at k)``, and
  ``τ̂_k(x) = m_k(x) / m_1(x)`` (clipped to [0.01, 1]);
* :func:`oracle_tau` — the simulator's true ``o_k(x)/o_1(x)`` (HTE-oracle's upper bound).

Both return a table over (split row, position) that the ``hte``, ``hte_oracle`` and
``lbd_hte_oracle`` learners use to weight each click by ``1/τ``.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ultr_core.data.dataset import RankingData
from ultr_core.simulation.clickmodel import EYE_TRACKING

__all__ = ["estimate_tau", "oracle_tau"]

TAU_FLOOR = 0.01


def oracle_tau(sim, data: RankingData, n_positions: int) -> np.ndarray:
    """True ``o_k(x)/o_1(x)`` for every row of ``data`` and position k = 1..n (contexts ignored;
    without coupling this is the position curve ``(v_k/v_1)^η`` for every row)."""
    cfg = sim.config
    p = np.arange(1, n_positions + 1)
    base = EYE_TRACKING[np.minimum(p, 10) - 1] if cfg.convention == "eye_tracking" else 1.0 / p
    expo = cfg.eta * np.maximum(1.0 + sim.coupling_term(data), 0.0)          # (n_rows,)
    return (base[None, :] / base[0]) ** expo[:, None]


def estimate_tau(sim, data: RankingData, n_positions: int, *, n_sessions: int, seed: int = 0,
                 n_estimators: int = 20, min_samples_leaf: int = 50) -> np.ndarray:
    """T-learner estimate ``τ̂_k(x) = m_k(x)/m_1(x)`` from ``n_sessions`` intervention sessions
    simulated with ``sim``'s click model on ``data`` (see the module docstring)."""
    from sklearn.ensemble import ExtraTreesRegressor

    from ultr_core.simulation.simulator import ClickSimulator
    isim = ClickSimulator(replace(sim.config, intervention=True), seed=sim.seed)
    for name in ("max_label_", "ranker_weights_", "crux_", "crux_lo_", "crux_span_", "coupling_w_",
                 "context_z_", "context_w_"):
        if hasattr(sim, name):
            setattr(isim, name, getattr(sim, name))
    rng = np.random.default_rng([int(seed), 11])
    d = isim.draw_sessions(data, rng.integers(0, data.n_queries, size=int(n_sessions)), rng)
    rows, shown, clicks = d["rows"], d["shown"], d["clicks"]
    X = data.features
    m = np.zeros((data.n_rows, n_positions))
    for k in range(min(n_positions, rows.shape[1])):
        at_k = shown[:, k]
        if at_k.sum() < 2 * min_samples_leaf:
            m[:, k] = np.nan
            continue
        model = ExtraTreesRegressor(n_estimators=n_estimators, min_samples_leaf=min_samples_leaf,
                                    max_features="sqrt", random_state=int(seed) + k, n_jobs=1)
        model.fit(X[rows[at_k, k]], clicks[at_k, k].astype(np.float32))
        m[:, k] = model.predict(X)
    with np.errstate(divide="ignore", invalid="ignore"):
        tau = m / m[:, :1]
    tau = np.where(np.isfinite(tau), tau, 1.0)
    return np.clip(tau, TAU_FLOOR, 1.0)
