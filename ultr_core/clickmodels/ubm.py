"""The user browsing model (Dupret & Piwowarski, SIGIR 2008), fitted by PyClick's EM as the models of
:mod:`~ultr_core.clickmodels.models` (re-exported there)."""
from __future__ import annotations

import numpy as np

from ultr_core.clickmodels import samplers as smp
from ultr_core.clickmodels.base import EM_ITERATIONS, PYCLICK_CAP, ClickModel, _observed
from ultr_core.clickmodels.cells import previous_click as _previous_click
from ultr_core.clickmodels.pbm import pbm_em

__all__ = ["UBM"]


class UBM(ClickModel):
    """User browsing model (Dupret & Piwowarski, SIGIR 2008): P(c_r) = α_qd · γ_{r, r′}, r′ the rank of the last
    click above r (D − 1 when there is none, as PyClick)."""

    USER_MODEL = True
    INFO_PARAMS = ("attr", "exam")
    sample = staticmethod(smp.sample_ubm)

    def torch_click_probability(self, P, t):
        d = t.depth
        cell = np.arange(d)[None, :] * d + _previous_click(t.clicks)
        return P["attr"][np.asarray(t.pairs, np.int64)] * P["exam"].reshape(-1)[cell]

    @staticmethod
    def examination(attract, shown, curve, *, gamma):
        return smp.ubm_examination(attract, shown, curve)

    @classmethod
    def generating(cls, alpha, curve, gamma):
        """γ(r, r′) = o at distance r − r′ (o_r without a click above), ÷ γ(1, none); impossible cells NaN."""
        depth = len(curve)
        r, prev = np.meshgrid(np.arange(depth), np.arange(depth), indexing="ij")
        g = np.where(prev == depth - 1, curve[r], curve[np.clip(r - prev - 1, 0, depth - 1)])
        return {"exam": np.where((prev < r) | (prev == depth - 1), g / curve[0], np.nan)}

    def recovered(self, name):
        return self.exam / self.exam[0, -1]

    def fit(self, t, n_iter: int = EM_ITERATIONS):
        """PyClick's EM, which reads only the (pair, rank, rank of the last click above) cells' impressions and
        clicks: PBM's EM (:func:`~ultr_core.clickmodels.pbm.pbm_em`, the one copy) with (rank, last click) as the
        examination index."""
        d = t.depth
        pair, index, n, c = t.cells(previous_click=True)
        self.attr, exam = pbm_em(pair, index, n, c=c, n_pairs=t.n_pairs, depth=d * d, prior=t.attr_prior, n_iter=n_iter,
                                 cap=PYCLICK_CAP)
        self.exam = exam.reshape(d, d)
        return self

    def conditional(self, t):
        cell = np.arange(t.depth)[None, :] * t.depth + _previous_click(t.clicks)
        return _observed(self.attr[t.pairs] * self.exam.ravel()[cell], t.clicks)

    def full(self, t):
        """P(c_r = 1) = Σ_j P(c_j = 1) Π_{j<k<r} (1 − α_k γ_{k,j}) α_r γ_{r,j}, j = −1 (no click: column D − 1)."""
        d, a = t.depth, self.attr[t.pairs]
        out = np.zeros(t.pairs.shape)
        for r in range(d):
            for j in range(-1, r):
                col = d - 1 if j < 0 else j
                none_between = np.prod(1 - a[:, j + 1:r] * self.exam[j + 1:r, col][None, :], axis=1)
                out[:, r] += (1.0 if j < 0 else out[:, j]) * none_between * a[:, r] * self.exam[r, col]
        return out

    def bias(self):
        return {"examination_by_rank_and_last_click": self.exam.tolist()}
