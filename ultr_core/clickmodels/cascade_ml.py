"""The cascade models fitted by maximum likelihood: DCM-ML (DCM's likelihood maximised, where :class:`~.models.DCM`
counts), and the two with a latent state after a click, DBN (Chapelle & Zhang, WWW 2009) and CCM (Guo et al., WWW
2009).  DBN and CCM are by default fitted by maximum likelihood (:mod:`~ultr_core.clickmodels.gradient`);
``pyclick=True`` runs PyClick's EM (``pyclick/click_models/DBN.py``, ``CCM.py``) exactly — its joint posterior of
(E_r, S_r, E_{r+1}), its marginal examination in the attractiveness update and its tail-click indexing — which
agrees with PyClick to 10⁻¹⁵ but does not maximise the likelihood (docs/click_models.md)."""
from __future__ import annotations

import numpy as np

from ultr_core.clickmodels.base import EM_ITERATIONS, PROB_MIN, Cascade, _last_click
from ultr_core.clickmodels.models import DCM, PYCLICK_PRIOR
from ultr_core.clickmodels.sessions import chunk_sums, pair_mean as _pair_mean, rank_sums

__all__ = ["DBN", "CCM", "DCMML"]


class DBN(Cascade):
    """Dynamic Bayesian network (Chapelle & Zhang, WWW 2009): examined top-down; attracted with α_qd, satisfied after
    a click with σ_qd (then stops), else goes on with γ.  Maximum likelihood by default; ``pyclick=True``: PyClick's
    ``DBN.py`` EM, 50 iterations."""

    N_PER, DEFAULT_GAMMA = 2, 0.9
    PER_NAMES, SHARED_NAMES = ("attr", "sat"), ("cont",)

    def __init__(self, pyclick: bool = False):
        self.pyclick = pyclick

    @staticmethod
    def transition(per, shared):
        """After a click go on with γ(1 − σ) (satisfied: stop), after none with γ."""
        return shared[0] * (1 - per[1]), shared[0]

    @staticmethod
    def form(shared):
        return 1, shared[0], -shared[0], shared[0]          # γ + (−γ)·σ, γ

    @classmethod
    def shared(cls, gamma):
        return (gamma,)

    @classmethod
    def generating(cls, alpha, curve, gamma):
        return {"attr": alpha, "sat": alpha, "cont": np.array([gamma])}

    def use_generating(self, alpha, gamma):
        self.attr, self.sat, self.cont = alpha.copy(), alpha.copy(), gamma
        return self

    def fit(self, t, n_iter: int = EM_ITERATIONS):
        if not self.pyclick:
            from ultr_core.clickmodels.gradient import fit_cascade
            (self.attr, self.sat), g, self.converged = fit_cascade(t, 2, 1, form=self.form)
            self.cont = float(g[0])
            return self
        self.attr, self.sat, self.cont = np.full(t.n_pairs, 0.5), np.full(t.n_pairs, 0.5), 0.5
        last = _last_click(t.clicks)
        ranks = np.arange(t.depth)[None, :]
        w = t.weight[:, None] * t.mask
        for _ in range(n_iter):
            a, s, g = self.attr[t.pairs], self.sat[t.pairs], self.cont
            exam, car = self._exam(a, self.transition((a, s), (g,))), _dbn_car(a, g)
            post_a = np.where(t.clicks, 1.0, np.where(ranks >= last[:, None],
                                                       (1 - exam) * a / (1 - exam * car[:, :-1]), 0.0))
            post_s = np.where(ranks == last[:, None], s / (1 - (1 - s) * g * car[:, 1:]), 0.0)
            num, den = _dbn_cont_posterior(t, a, s, g, last, pyclick=True)
            self.attr = np.minimum(_pair_mean(t, np.ones(t.pairs.shape), post_a), 1 - PROB_MIN)
            self.sat = np.minimum(_pair_mean(t, t.clicks, post_s, prior=PYCLICK_PRIOR), 1 - PROB_MIN)
            self.cont = float(min((1 + (w * num).sum()) / (2 + (w * den).sum()), 1 - PROB_MIN))
        return self

    def relevance(self):
        return self.attr * self.sat

    def full(self, t):
        a = self.attr[t.pairs]
        return a * self._exam(a, self.transition((a, self.sat[t.pairs]), (self.cont,)))

    def conditional(self, t):
        a = self.attr[t.pairs]
        return _tail(a, *self.transition((a, self.sat[t.pairs]), (self.cont,)), t.clicks, 0)[0]

    @staticmethod
    def _exam(a, go_on):
        """Marginal P(E_r = 1) of a cascade with the transition ``go_on``."""
        return _marginal_exam(a * go_on[0] + (1 - a) * go_on[1])

    def bias(self):
        return {"continuation": self.cont}


def _dbn_car(a, g) -> np.ndarray:
    """(P, D + 1): P(a click at or below r | E_r = 1), 0 past the last rank."""
    car = np.zeros((a.shape[0], a.shape[1] + 1))
    for r in range(a.shape[1] - 1, -1, -1):
        car[:, r] = a[:, r] + (1 - a[:, r]) * g * car[:, r + 1]
    return car


def _tail(a, after_click, go_on: float, clicks, start: int, pyclick: bool = False):
    """P(c_k | c_start … c_{k−1}, E_start = 1) for k ≥ start, and P(E_k = 1 | the same): PyClick's tail clicks for
    a cascade that, after a click at rank j, goes on with ``after_click[:, j]`` and, after no click, with
    ``go_on``; with the parameters of the ranks they describe (``pyclick``: of ranks 0, 1, … as PyClick's loop
    indexes them)."""
    exam = np.ones(len(a))
    probs, exams = np.ones(a.shape), np.ones(a.shape)
    for r in range(start, a.shape[1]):
        c, j = clicks[:, r], r - start if pyclick else r
        exams[:, r] = exam
        probs[:, r] = np.where(c, a[:, j] * exam, 1 - a[:, j] * exam)
        exam = np.where(c, after_click[:, j], exam * go_on * (1 - a[:, j]) / probs[:, r])
    return probs, exams


def _exam_and_tails(a, after_click, go_on: float, clicks, pyclick: bool):
    """P(E_r = 1 | clicks above r) and (P, D) P(the clicks below r | E_{r+1} = 1) — the parts of PyClick's
    continuation factor that depend on the other ranks."""
    d = a.shape[1]
    tail = np.ones(a.shape)
    for r in range(d - 1):
        tail[:, r] = np.prod(_tail(a, after_click, go_on, clicks, r + 1, pyclick)[0][:, r + 1:], axis=1)
    return _tail(a, after_click, go_on, clicks, 0)[1], tail


def _marginal_exam(step) -> np.ndarray:
    """E_0 = 1, E_{r+1} = E_r · step_r."""
    return np.cumprod(np.concatenate([np.ones((len(step), 1)), step[:, :-1]], axis=1), axis=1)


def _dbn_cont_posterior(t, a, s, g, last, pyclick: bool = False):
    """Per (pattern, rank): P(E_r = 1, S_r = 0, E_{r+1} = 1 | clicks) and P(E_r = 1, S_r = 0 | clicks), from the
    eight joint states (E_r, S_r, E_{r+1}) as PyClick's ``_get_continuation_factor`` enumerates them."""
    d, c = t.depth, t.clicks
    exam, tail = _exam_and_tails(a, *DBN.transition((a, s), (g,)), c, pyclick)
    num, den = np.zeros(a.shape), np.zeros(a.shape)
    for r in range(d):
        f = {}
        for x, y, z in ((x, y, z) for x in (0, 1) for y in (0, 1) for z in (0, 1)):
            p = np.where(c[:, r], _clicked(a[:, r], s[:, r], g, x, y, z), _skipped(a[:, r], g, x, y, z))
            p = p * (np.where(last >= r + 1, 0.0, 1.0) if z == 0 else (tail[:, r] if r + 1 < d else 1.0))
            f[x, y, z] = p * (exam[:, r] if x else 1 - exam[:, r])
        total = sum(f.values())
        num[:, r] = f[1, 0, 1] / total
        den[:, r] = (f[1, 0, 0] + f[1, 0, 1]) / total
    return num, den


def _clicked(a, s, g, x, y, z):
    if not x or (y and z):
        return np.zeros_like(a)
    return a * (s if y else (1 - s) * (g if z else 1 - g))


def _skipped(a, g, x, y, z):
    if y or (not x and z):
        return np.zeros_like(a)
    return (1 - a) * ((g if z else 1 - g) if x else 1.0)


class CCM(Cascade):
    """Click chain model (Guo et al., WWW 2009): examined top-down; attracted with α_qd; after no click the user goes
    on with τ₁, after a click with τ₂(1 − α) + τ₃α (a click on a relevant result: α).  Relevance α² as PyClick.
    Maximum likelihood by default; ``pyclick=True``: PyClick's ``CCM.py`` EM, 50 iterations."""

    DEFAULT_GAMMA = 0.9
    SHARED_NAMES = ("tau",)

    def __init__(self, pyclick: bool = False):
        self.pyclick = pyclick

    @staticmethod
    def transition(per, shared):
        """After a click go on with τ₂(1 − α) + τ₃α, after none with τ₁."""
        return shared[1] * (1 - per[0]) + shared[2] * per[0], shared[0]

    @staticmethod
    def form(shared):
        return 0, shared[1], shared[2] - shared[1], shared[0]   # τ₂ + (τ₃ − τ₂)·α, τ₁

    @classmethod
    def shared(cls, gamma):
        """τ₁ = τ₂ = γ, τ₃ = γ/2 for simulated users."""
        return (gamma, gamma, gamma / 2)

    @classmethod
    def generating(cls, alpha, curve, gamma):
        return {"attr": alpha, "tau": np.array(cls.shared(gamma))}

    def use_generating(self, alpha, gamma):
        self.attr, self.tau = alpha.copy(), np.array(self.shared(gamma))
        return self

    def fit(self, t, n_iter: int = EM_ITERATIONS):
        if not self.pyclick:
            from ultr_core.clickmodels.gradient import fit_cascade
            (self.attr,), self.tau, self.converged = fit_cascade(t, 1, 3, form=self.form)
            return self
        self.attr, self.tau = np.full(t.n_pairs, 0.5), np.full(3, 0.5)
        last = _last_click(t.clicks)
        ranks = np.arange(t.depth)[None, :]
        w = t.weight[:, None] * t.mask
        for _ in range(n_iter):
            a = self.attr[t.pairs]
            cont, t1 = self.transition((a,), self.tau)
            exam, car = DBN._exam(a, (cont, t1)), _dbn_car(a, t1)
            post = np.where(t.clicks, 1.0, np.where(ranks >= last[:, None], (1 - exam) * a / (1 - exam * car[:, :-1]),
                                                     0.0))
            post = post + np.where(t.clicks & (ranks == last[:, None]), a / (1 - cont * car[:, 1:]), 0.0)
            f = _ccm_factors(t, a, self.tau, last, pyclick=True)
            total = sum(f.values())
            self.attr = np.minimum(_pair_mean(t, 1.0 + t.clicks, post / (1.0 + t.clicks)), 1 - PROB_MIN)
            self.tau = np.array([
                _tau(w, ~t.clicks, f[1, 0, 1] + f[1, 1, 1], f[1, 0, 0] + f[1, 0, 1] + f[1, 1, 0] + f[1, 1, 1], total),
                _tau(w, t.clicks, f[1, 0, 1], f[1, 0, 0] + f[1, 0, 1], total),
                _tau(w, t.clicks, f[1, 1, 1], f[1, 1, 0] + f[1, 1, 1], total)])
        return self

    def relevance(self):
        return self.attr ** 2

    def full(self, t):
        a = self.attr[t.pairs]
        return a * DBN._exam(a, self.transition((a,), self.tau))

    def conditional(self, t):
        a = self.attr[t.pairs]
        return _tail(a, *self.transition((a,), self.tau), t.clicks, 0)[0]

    def bias(self):
        return {"tau_no_click": self.tau[0], "tau_click_nonrelevant": self.tau[1], "tau_click_relevant": self.tau[2]}


class DCMML(DCM):
    """DCM by maximum likelihood (issue #47, item 6): the same model as :class:`~ultr_core.clickmodels.models.DCM`
    — after a click at rank r go on with λ_r, always without one — fitted by L-BFGS on the exact likelihood of the
    click vectors (:func:`~ultr_core.clickmodels.gradient.fit_cascade`, as CLAX fits it) instead of PyClick's
    counting, which takes every rank above the last click as examined and every click but the last as a
    continuation: exact only if users never stop after a non-last click without clicking again."""

    USER_MODEL = False                   # simulated DCM users are the DCM record's; this is another fit of them

    def statistics(self, t):
        return None                        # fitted iteratively: counting's sums are only its start

    def fit(self, t):
        from ultr_core.clickmodels.gradient import fit_cascade
        count = DCM().fit(t)               # PyClick's counting: a start close to the optimum (4× fewer steps)
        clicks = chunk_sums(t, lambda c: [rank_sums(c, 1, c.clicks)[0]])[0]     # weighted clicks per rank
        (self.attr,), self.cont, self.converged = fit_cascade(
            t, 1, t.depth, form=lambda shared: DCM.form([shared]),
            start=(count.attr[None, :], count.cont),
            shared_counts=clicks)          # λ_r is learnt from the clicks at rank r: scaled by them, as pairs are
        return self


def _tau(w, mask, num, den, total) -> float:
    """(1 + Σ posterior) / (2 + Σ trials) over the (pattern, rank) cells where the parameter is updated."""
    ww = w * mask
    return float(min((1 + (ww * num / total).sum()) / (2 + (ww * den / total).sum()), 1 - PROB_MIN))


def _ccm_factors(t, a, tau, last, pyclick: bool) -> dict:
    """(E_r, S_r, E_{r+1}) → (P, D) joint probabilities up to a constant, as PyClick's continuation factor."""
    d, c = t.depth, t.clicks
    t1, t2, t3 = tau
    exam, tail = _exam_and_tails(a, *CCM.transition((a,), tau), c, pyclick)
    ranks = np.arange(d)[None, :]
    out = {}
    for x, y, z in ((x, y, z) for x in (0, 1) for y in (0, 1) for z in (0, 1)):
        go_on = lambda p, z=z: p if z else 1 - p                                       # noqa: E731
        clicked = (a * ((1 - a) * go_on(t2) if not y else a * go_on(t3))) if x else np.zeros_like(a)
        skipped = np.zeros_like(a) if y or (not x and z) else (1 - a) * (go_on(t1) if x else 1.0)
        p = np.where(c, clicked, skipped)
        p = p * (np.where(last[:, None] >= ranks + 1, 0.0, 1.0) if z == 0 else np.where(ranks + 1 < d, tail, 1.0))
        out[x, y, z] = p * (exam if x else 1 - exam)
    return out
