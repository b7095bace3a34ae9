"""The click models (Chuklin, Markov & de Rijke, *Click Models for Web Search*, 2015) on session patterns
(:class:`~ultr_core.clickmodels.sessions.SessionTable`) with PyClick's conventions (docs/click_models.md): every
parameter starts as 1 success in 2 trials (½, also for a pair never seen in training), counting where a closed form
exists (CTR models, CM, DCM, SDBN), else 50 EM iterations with M-step (1 + Σ posterior) / (2 + Σ trials), capped at
1 − 10⁻⁶ (a table's learned attractiveness prior, :mod:`~ultr_core.clickmodels.prior`, replaces the 1 in 2).

>>> import numpy as np
>>> from ultr_core.clickmodels.sessions import SessionTable
>>> t = SessionTable(np.array([[0, 1], [0, 1]]), np.array([[1, 0], [0, 0]], bool), np.array([1.0, 1.0]), 2, 2)
>>> DCTR().fit(t).attr.tolist()          # pair 0: (1 + 1) / (2 + 2); pair 1: (1 + 0) / (2 + 2)
[0.5, 0.25]
>>> CM().fit(t).attr.tolist()            # session 1 stops at its click: pair 1 is seen once, unclicked
[0.5, 0.3333333333333333]
"""
from __future__ import annotations

import numpy as np

from ultr_core.clickmodels import pbm as _pbm, samplers as smp
from ultr_core.clickmodels.base import (
    EM_ITERATIONS,
    PROB_MIN,
    PYCLICK_CAP,
    Cascade,
    ClickModel,
    _first_click,
    _last_click,
    _observed,
)
from ultr_core.clickmodels.sessions import PYCLICK_PRIOR, chunk_sums, pair_sums, prior_mean, rank_sums

__all__ = ["ClickModel", "Cascade", "GCTR", "RCTR", "DCTR", "PBM", "CM", "DCM", "SDBN", "EM_ITERATIONS",
           "PROB_MIN", "PYCLICK_CAP", "PYCLICK_PRIOR"]


class GCTR(ClickModel):
    """Global CTR (random click model): one click probability for every result."""

    INFO_PARAMS = ("ctr",)

    def torch_click_probability(self, P, t):
        return P["ctr"].expand(*t.pairs.shape)

    def fit(self, t):
        clicks, shown = chunk_sums(t, lambda c: [(c.weight[:, None] * c.clicks * c.mask).sum(),
                                                  (c.weight[:, None] * c.mask).sum()])
        self.ctr = float((1 + clicks) / (2 + shown))
        self.attr = np.full(t.n_pairs, self.ctr)
        return self

    def full(self, t):
        return np.full(t.pairs.shape, self.ctr)


class RCTR(ClickModel):
    """Rank CTR: one click probability per rank; no relevance (PyClick's predict_relevance returns 0)."""

    INFO_PARAMS = ("ctr",)

    def torch_click_probability(self, P, t):
        return P["ctr"][None, :].expand(*t.pairs.shape)

    def fit(self, t):
        self.ctr = prior_mean(chunk_sums(t, lambda c: rank_sums(c, 1.0, c.clicks)))
        self.attr = np.zeros(t.n_pairs)
        return self

    def full(self, t):
        return np.broadcast_to(self.ctr, t.pairs.shape).copy()

    def bias(self):
        return {"ctr_by_rank": self.ctr.tolist()}


class DCTR(ClickModel):
    """Document CTR: one click probability per (query, document) pair."""

    def torch_click_probability(self, P, t):
        return P["attr"][np.asarray(t.pairs, np.int64)]

    def fit(self, t):
        return self.from_statistics(self.statistics(t), t.attr_prior)

    def statistics(self, t):
        return chunk_sums(t, lambda c: pair_sums(c, 1.0, c.clicks))

    def from_statistics(self, stats, attr_prior):
        self.attr = prior_mean(stats, attr_prior)
        return self

    def full(self, t):
        return self.attr[t.pairs]


class PBM(ClickModel):
    """Position-based model (Craswell et al., WSDM 2008; Chuklin et al. 2015 §3.4): P(c_r) = α_qd · γ_r."""

    USER_MODEL = POSITION_ONLY = True
    INFO_PARAMS = ("attr", "exam")
    sample = staticmethod(smp.sample_pbm)

    def torch_click_probability(self, P, t):
        return P["attr"][np.asarray(t.pairs, np.int64)] * P["exam"][None, :]

    @staticmethod
    def examination(attract, shown, curve, *, gamma):
        return np.broadcast_to(curve, np.shape(attract))

    @classmethod
    def generating(cls, alpha, curve, gamma):
        return {"exam": curve / curve[0]}

    def recovered(self, name):
        return self.exam / self.exam[0]

    def fit(self, t, n_iter: int = EM_ITERATIONS, start: tuple | None = None):     # start: (attr, exam) to go on from
        """PyClick's EM on the (pair, rank) cells (:meth:`SessionTable.cells`, :func:`~.pbm.pbm_em`)."""
        pair, rank, n, c = t.cells()
        self.attr, self.exam = _pbm.pbm_em(pair, rank, n, c=c, n_pairs=t.n_pairs, depth=t.depth, prior=t.attr_prior,
                                           n_iter=n_iter, cap=PYCLICK_CAP, start=start)
        return self

    def full(self, t):
        return self.attr[t.pairs] * self.exam[None, :]

    def bias(self):
        return {"examination": self.exam.tolist()}


class CM(Cascade):
    """Cascade model (Craswell et al., WSDM 2008): results are examined top-down until the first click.

    Until the first click every result is examined, so P(c_r = 1 | no click above) = α_r; below the first click
    the user has left: P(no click) = 1 (a click there is impossible: ``PROB_MIN``).  PyClick's
    ``CM.get_conditional_click_probs`` uses the marginal α_r·Π(1 − α) above and ``PROB_MIN`` for every rank below,
    clicked or not (ln 10⁻⁶ a rank even on logs CM generated); ``pyclick_conditional=True`` reproduces it."""

    def __init__(self, pyclick_conditional: bool = False):
        self.pyclick_conditional = pyclick_conditional

    @staticmethod
    def transition(per, shared):
        """Go on only without a click."""
        return 0.0 * per[0], 1.0

    @staticmethod
    def form(shared):
        return 0, 0.0, 0.0, 1.0

    def fit(self, t):
        return self.from_statistics(self.statistics(t), t.attr_prior)

    def statistics(self, t):
        def sums(c):                       # examined: the ranks down to the first click
            return pair_sums(c, np.arange(c.depth)[None, :] <= _first_click(c.clicks)[:, None], c.clicks)
        return chunk_sums(t, sums)

    def from_statistics(self, stats, attr_prior):
        self.attr = prior_mean(stats, attr_prior)
        return self

    def full(self, t):
        a = self.attr[t.pairs]
        return a * np.cumprod(np.concatenate([np.ones((len(a), 1)), 1 - a[:, :-1]], axis=1), axis=1)

    def conditional(self, t):
        """Up to the first click the user examines every result: P(c_r | no click above) = α (1 − α without a
        click); below it 1 for no click, PROB_MIN for a click.  PyClick uses the marginal α·Π(1 − α_above) up to the
        first click and PROB_MIN for everything below it (``pyclick_conditional=True``)."""
        below = np.arange(t.depth)[None, :] > _first_click(t.clicks)[:, None]
        if self.pyclick_conditional:
            return np.where(below, PROB_MIN, _observed(self.full(t), t.clicks))
        return np.where(below, np.where(t.clicks, PROB_MIN, 1.0), _observed(self.attr[t.pairs], t.clicks))


class DCM(Cascade):
    """Dependent click model (Guo, Liu & Wang, WSDM 2009): after a click at rank r the user goes on with λ_r."""

    DEFAULT_GAMMA = 0.6
    SHARED_NAMES = ("cont",)

    def _shared(self, P):
        return [P["cont"]]                     # λ per rank: transition reads shared[0] as a vector

    @staticmethod
    def transition(per, shared):
        """After a click at r go on with λ_r (``shared[0]``, one value per rank), always without one."""
        return shared[0] + 0.0 * per[0], 1.0

    @staticmethod
    def form(shared):
        return 0, shared[0], 0.0, 1.0                         # λ_r, always on without a click

    @classmethod
    def shared(cls, gamma):
        return (gamma,)

    @classmethod
    def continuation_by_rank(cls, gamma, eta, n):
        """λ_r = γ·(1/r)^η (the official CM-IPS code's ``DCM_binary``: ``mult · (1/(i+1))^eta``).

        >>> DCM.continuation_by_rank(0.6, 1.0, 3).round(3).tolist()
        [0.6, 0.3, 0.2]
        """
        if gamma is None:
            return None
        return gamma * (1.0 / np.arange(1, n + 1, dtype=np.float64)) ** eta

    @classmethod
    def generating(cls, alpha, curve, gamma):
        return {"attr": alpha, "cont": cls.continuation_by_rank(gamma, 1.0, len(curve))}

    def fit(self, t):
        return self.from_statistics(self.statistics(t), t.attr_prior)

    def statistics(self, t):
        def sums(c):                       # examined down to the last click; every click but the last goes on
            last, ranks = _last_click(c.clicks)[:, None], np.arange(c.depth)[None, :]
            return [*pair_sums(c, ranks <= last, c.clicks), *rank_sums(c, c.clicks, ranks != last)]
        return chunk_sums(t, sums)

    def from_statistics(self, stats, attr_prior):
        attr_n, attr_d, cont_n, cont_d = stats
        self.attr, self.cont = prior_mean((attr_n, attr_d), attr_prior), prior_mean((cont_n, cont_d))
        return self

    def full(self, t):
        a, out, exam = self.attr[t.pairs], np.zeros(t.pairs.shape), np.ones(len(t.pairs))
        for r in range(t.depth):
            out[:, r] = a[:, r] * exam
            exam = exam * (self.cont[r] * a[:, r] + 1 - a[:, r])
        return out

    def conditional(self, t):
        a, out, exam = self.attr[t.pairs], np.zeros(t.pairs.shape), np.ones(len(t.pairs))
        for r in range(t.depth):
            c = t.clicks[:, r]
            out[:, r] = np.where(c, a[:, r] * exam, 1 - a[:, r] * exam)
            exam = np.where(c, self.cont[r], exam * (1 - a[:, r]) / out[:, r])
        return out

    def bias(self):
        return {"continuation_after_click": self.cont.tolist()}


class SDBN(Cascade):
    """Simplified DBN (Chapelle & Zhang, WWW 2009): examined down to the last click; satisfaction σ_qd ends it."""

    N_PER, PER_NAMES = 2, ("attr", "sat")

    @staticmethod
    def transition(per, shared):
        """A click satisfies with σ and ends the session; no click: go on."""
        return 1.0 - per[1], 1.0

    @staticmethod
    def form(shared):
        return 1, 1.0, -1.0, 1.0

    def fit(self, t):
        return self.from_statistics(self.statistics(t), t.attr_prior)

    def statistics(self, t):
        def sums(c):                       # examined down to the last click, which satisfied
            last, ranks = _last_click(c.clicks)[:, None], np.arange(c.depth)[None, :]
            return [*pair_sums(c, ranks <= last, c.clicks), *pair_sums(c, c.clicks, ranks == last)]
        return chunk_sums(t, sums)

    def from_statistics(self, stats, attr_prior):
        attr_n, attr_d, sat_n, sat_d = stats
        self.attr, self.sat = prior_mean((attr_n, attr_d), attr_prior), prior_mean((sat_n, sat_d))
        return self

    def relevance(self):
        return self.attr * self.sat

    def full(self, t):
        a, s = self.attr[t.pairs], self.sat[t.pairs]
        out, exam = np.zeros(t.pairs.shape), np.ones(len(t.pairs))
        for r in range(t.depth):
            out[:, r] = a[:, r] * exam
            exam = exam * ((1 - s[:, r]) * a[:, r] + 1 - a[:, r])
        return out

    def conditional(self, t):
        a, s = self.attr[t.pairs], self.sat[t.pairs]
        out, exam = np.zeros(t.pairs.shape), np.ones(len(t.pairs))
        for r in range(t.depth):
            c = t.clicks[:, r]
            out[:, r] = np.where(c, a[:, r] * exam, 1 - a[:, r] * exam)
            exam = np.where(c, 1 - s[:, r], exam * (1 - a[:, r]) / out[:, r])
        return out

