"""Drawing clicks from a click model — the user-behaviour side of :mod:`ultr_core.clickmodels` (issue #34, item 4).

Every sampler has one signature: ``sample(attract, shown, curve, gamma, rng) -> (clicks, examination)`` over
(sessions × positions) arrays, vectorised over sessions:

* ``attract`` — the attractiveness α of the document at each position (the simulator passes the relevance
  probability r(y) of :mod:`ultr_core.simulation`, noise ε included); the cascade models with satisfaction (SDBN,
  DBN, CCM) use the same value as satisfaction σ = α (Chuklin et al. 2015 §8.2 simulate the same way: one
  relevance drives both);
* ``shown`` — which positions are displayed (a prefix of each list: the top-k cut and the padding end it);
* ``curve`` — the position curve o_p of the position-based model (η and the convention), broadcastable to the
  arrays; PBM examines position p with o_p, UBM examines p with o_d, d = p − (position of the last click above p,
  0 when there is none) — distance-based, so that UBM without clicks is PBM;
* ``gamma`` — the continuation parameter of the cascade family, a number or one value per position
  (``continuation_by_rank`` of the model's class): DCM's λ_r (go on after a click at r; λ_r = γ·(1/r)^η as the official
  CM-IPS code
  draws DCM clicks, ``prepare_data/clicks_gen.py``), DBN's γ (go on after any document), CCM's τ₁ = γ (no click),
  τ₂ = γ (a click on an unattractive document), τ₃ = γ/2 (a click on an attractive one);
* ``examination`` — the probability that each position is examined given the shown list (the marginal over the
  user's earlier clicks), what ``true_observation`` holds in a simulated log; under every model
  P(c_p = 1) = α_p · examination_p, because attraction is independent of examination.

The cascade family is drawn without a loop over positions: attraction A_p ~ Bern(α_p) and a continuation draw per
position are independent, the user goes on after p with P(go on | A_p) (the model class's ``transition``, which its fit
uses too), and
position p is examined iff every earlier step went on — an exclusive cumulative product.

>>> a = np.array([[0.5, 0.5, 0.5]])
>>> shown = np.ones_like(a, bool)
>>> cascade_examination((0.0 * a, 1.0), a, shown).tolist()      # CM: go on only without a click
[[1.0, 0.5, 0.25]]
>>> cascade_examination((0.8 * (1 - a), 0.8), a, shown).round(4).tolist()  # DBN: γ(1 − α·σ) per step, σ = α
[[1.0, 0.6, 0.36]]
>>> ubm_examination(np.array([[1.0, 1.0, 1.0]]), shown, np.array([0.9, 0.5, 0.2])).round(4).tolist()
[[0.9, 0.86, 0.829]]
"""
from __future__ import annotations

import numpy as np

#: eye-tracking examination probabilities of positions 1..10 (Joachims et al. 2005) — the simulations' PBM curve
#: (``ultr_core.simulation.clickmodel`` re-exports it) and the recovery study's examination
EYE_TRACKING = np.array([0.68, 0.61, 0.48, 0.34, 0.28, 0.2, 0.11, 0.1, 0.08, 0.06])

__all__ = ["cascade_examination", "sample_cascade", "ubm_examination", "sample_pbm", "sample_ubm", "EYE_TRACKING"]


def _exclusive_cumprod(x: np.ndarray) -> np.ndarray:
    """Π_{i<p} x_i along the positions (1 at the first)."""
    out = np.ones_like(x)
    out[:, 1:] = np.cumprod(x[:, :-1], axis=1)
    return out


def cascade_examination(go_on, attract: np.ndarray, shown: np.ndarray) -> np.ndarray:
    """P(position p is examined | the shown list) of a cascade whose users go on after p with ``go_on`` =
    (P(go on | clicked), P(go on | not clicked)) — the transition rule of the model's class
    (:meth:`ultr_core.clickmodels.models.Cascade.go_on`)."""
    a = np.asarray(attract, np.float64)
    on_click, on_skip = go_on
    return _exclusive_cumprod(a * on_click + (1 - a) * on_skip) * shown


def sample_cascade(go_on, attract, shown, *, rng):
    """Clicks of a cascade with the transition ``go_on`` (see :func:`cascade_examination`): attraction and a
    continuation draw per position, examined iff every earlier step went on; returns (clicks, examination)."""
    a = np.asarray(attract, np.float64)
    attracted = rng.random(a.shape, dtype=np.float32) < a
    on_click, on_skip = go_on
    went_on = rng.random(a.shape, dtype=np.float32) < np.where(attracted, on_click, on_skip)
    examined = _exclusive_cumprod(went_on.astype(np.int8)).astype(bool) & shown
    return examined & attracted, cascade_examination(go_on, a, shown)


def sample_pbm(attract, shown, curve, *, gamma, rng):
    """PBM (Craswell et al. 2008): click ~ Bern(α_p · o_p); ``curve`` may be per row (LBD's coupling, contexts).
    One uniform draw per cell, as the simulator has always drawn them."""
    exam = np.broadcast_to(curve, np.shape(attract))
    clicks = (rng.random(np.shape(attract), dtype=np.float32) < attract * exam) & shown
    return clicks, exam


def _distance_curve(curve, n: int) -> np.ndarray:
    """o_1 … o_n of a per-position curve (UBM reads it by distance, so a per-row curve is not accepted)."""
    c = np.asarray(curve, np.float64)
    if c.ndim == 2:
        if not (c == c[:1]).all():
            raise ValueError("UBM needs one position curve for every session")
        c = c[0]
    return np.concatenate([c[:n], np.zeros(max(n - len(c), 0))])


def sample_ubm(attract, shown, curve, *, gamma, rng):
    """UBM (Dupret & Piwowarski 2008): position p examined with o_{p − last click above p}; one pass over the
    positions, vectorised over sessions."""
    a = np.asarray(attract, np.float64)
    S, L = a.shape
    o = _distance_curve(curve, L)
    last = np.zeros(S, np.int64)                      # 1-based position of the last click, 0 when none
    clicks = np.zeros((S, L), bool)
    u = rng.random((S, L, 2), dtype=np.float32)
    for p in range(1, L + 1):
        c = (u[:, p - 1, 0] < o[p - last - 1]) & (u[:, p - 1, 1] < a[:, p - 1]) & shown[:, p - 1]
        clicks[:, p - 1] = c
        last = np.where(c, p, last)
    return clicks, ubm_examination(a, shown, o)


def ubm_examination(attract, shown, curve) -> np.ndarray:
    """P(position p is examined | the shown list) under UBM: a forward pass over the distribution of the last
    click's position (S × L state; O(S·L²))."""
    a = np.asarray(attract, np.float64) * shown
    S, L = a.shape
    o = _distance_curve(curve, L)
    last = np.zeros((S, L + 1))                       # P(last click at j), j = 0 … L (0: none yet)
    last[:, 0] = 1.0
    exam = np.zeros((S, L))
    for p in range(1, L + 1):
        o_p = o[p - np.arange(p) - 1]                 # o at distance p − j for j = 0 … p − 1
        e = last[:, :p] * o_p[None, :]
        exam[:, p - 1] = e.sum(1)
        last[:, :p] -= e * a[:, p - 1:p]
        last[:, p] = exam[:, p - 1] * a[:, p - 1]
    return exam * shown
