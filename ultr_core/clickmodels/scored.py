"""A ranker's scores read as a click model (issue #47, item 2), so that a ULTR method trained on a log with features
gets a held-out log-likelihood and perplexity beside the click models: P(c_r = 1) = γ_r · σ(a·z_qd + b), z the
ranker's score of the pair standardised over the log's pairs, a position-based model whose attractiveness is the
score through a logistic link (D + 2 parameters, fitted by maximum likelihood on the (pair, rank) cells, L-BFGS-B
with the analytic gradient).  Its relevance stays the ranker's own score — the judges see the ranker's order, never
one flipped by a negative link slope — and the link is a calibration, not a new ranker: a pair never shown gets a
probability from its features, and no pair is prior-dominated by its own impressions.

>>> import numpy as np
>>> from ultr_core.clickmodels.sessions import SessionTable
>>> rng = np.random.default_rng(0)
>>> pairs = np.stack([rng.permutation(6)[:3] for _ in range(4000)])
>>> alpha, gamma = np.linspace(0.1, 0.9, 6), np.array([1.0, 0.6, 0.3])
>>> clicks = rng.random(pairs.shape) < alpha[pairs] * gamma
>>> m = ScoredPBM(np.log(alpha / (1 - alpha))).fit(SessionTable(pairs, clicks, np.ones(4000), 6, 4000))
>>> bool(np.abs(m.attr * m.exam[0] - alpha).max() < 0.05), (m.exam / m.exam[0]).round(1).tolist()
(True, [1.0, 0.6, 0.3])
"""
from __future__ import annotations

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit

from ultr_core.clickmodels.models import PBM

__all__ = ["ScoredPBM", "RIDGE"]

#: an L2 penalty on (a, b, logit γ) per training session: keeps the link bounded where the clicks cannot tell a large
#: examination from a large attractiveness
RIDGE = 1e-6


def _standardised(score: np.ndarray) -> np.ndarray:
    s = np.nan_to_num(np.asarray(score, np.float64), nan=0.0, posinf=0.0, neginf=0.0)
    sd = s.std()
    return (s - s.mean()) / (sd if sd > 0 else 1.0)


class ScoredPBM(PBM):
    """PBM with α_qd = σ(a·z_qd + b) for a ranker's standardised score z (one per pair of the log)."""

    USER_MODEL = False

    def __init__(self, score):
        self.score = np.asarray(score, np.float64)
        self.link = (0.0, 0.0)

    def fit(self, t):
        z, (pair, rank, n, c) = _standardised(self.score), t.cells()
        zc, skip, total = z[pair], n - c, max(float(n.sum() / t.depth), 1.0)

        def loss(x):
            a, b, g = x[0], x[1], x[2:]
            A, G = expit(a * zc + b), expit(g[rank])
            p = np.clip(A * G, 1e-12, 1 - 1e-12)
            dp = c / p - skip / (1 - p)                               # ∂ ln L / ∂p per cell
            d_lin, d_g = dp * G * A * (1 - A), dp * A * G * (1 - G)
            ll = float((c * np.log(p) + skip * np.log1p(-p)).sum()) - RIDGE * total * float(x @ x)
            grad = np.r_[(d_lin * zc).sum(), d_lin.sum(), np.bincount(rank, d_g, t.depth)] - 2 * RIDGE * total * x
            return -ll / total, -grad / total

        res = minimize(loss, np.r_[1.0, 0.0, np.zeros(t.depth)], jac=True, method="L-BFGS-B",
                       options={"maxiter": 500})
        self.converged = bool(res.success)
        self.link = (float(res.x[0]), float(res.x[1]))
        self.attr, self.exam = expit(self.link[0] * z + self.link[1]), expit(res.x[2:])
        return self

    def relevance(self) -> np.ndarray:
        return self.score

    def bias(self) -> dict:
        return {"examination": self.exam.tolist(), "link": {"slope": self.link[0], "intercept": self.link[1]}}
