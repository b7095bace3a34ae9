"""Propensities estimated by result randomisation, as the official CLD code estimates them.

The official CLD code (github hyz20/CLD) does not hand its learners the click model's
examination curve: it simulates 10⁶ sessions on **shuffled** candidate lists with the same click
model and divides each position's click-through rate by the first position's.  With the
position-based model the shuffled lists make relevance independent of position, so the ratio
estimates o_p / o_1 up to sampling noise.
"""
from __future__ import annotations

import numpy as np

from ultr_core.simulation.clickmodel import ClickModelConfig, binary_rule, position_observation, relevance_probability

__all__ = ["randomised_propensity"]


def randomised_propensity(labels: np.ndarray, offsets: np.ndarray, max_label: int, *, click: ClickModelConfig,
                          n_positions: int, n_sessions: int = 1_000_000,
                          rng: np.random.Generator | None = None) -> np.ndarray:
    """ρ̂_p = CTR_p / CTR_1 for p = 1..``n_positions`` over ``n_sessions`` sessions, each a uniformly
    drawn query whose candidates are shown in a uniformly random order (vectorised: the document
    at position p of a random permutation is uniform over the query's candidates; a query shorter
    than p leaves that position empty).  Clicks follow ``click`` — o_p from its convention and η
    (positions past its top-k are never examined) and its relevance r(y) with noise ε.

    >>> from ultr_core.simulation.clickmodel import ClickModelConfig
    >>> cm = ClickModelConfig(convention="reciprocal", eta=1.0, noise=0.1, relevance="binary")
    >>> rho = randomised_propensity(np.tile([0, 4, 1], 50), np.arange(0, 151, 3), 4, click=cm, n_positions=3,
    ...                             n_sessions=200_000, rng=np.random.default_rng(0))
    >>> bool(np.abs(rho - [1, 1 / 2, 1 / 3]).max() < 0.02)     # o_p = 1/p, estimated
    True
    """
    rng = rng if rng is not None else np.random.default_rng(0)
    offsets = np.asarray(offsets)
    sizes = np.diff(offsets)
    r = relevance_probability(labels, max_label, click.noise, binary=binary_rule(click.relevance))
    o = position_observation(n_positions, eta=click.eta, convention=click.convention, topk=click.topk)
    q = rng.integers(0, len(sizes), size=n_sessions)
    n_q = sizes[q]
    ctr = np.zeros(n_positions)
    for p in range(n_positions):                     # positions, not sessions: ≤ a few dozen columns
        has = n_q > p
        doc = offsets[q[has]] + (rng.random(int(has.sum())) * n_q[has]).astype(np.int64)
        clicks = rng.random(len(doc)) < o[p] * r[doc]
        ctr[p] = clicks.mean() if len(doc) else np.nan
    return ctr / ctr[0] if ctr[0] > 0 else np.full(n_positions, np.nan)
