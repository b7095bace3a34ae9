"""PBM's EM on cell counts — the one copy every PBM fit by EM runs (Chuklin, Markov & de Rijke 2015, §4.2; PyClick's
``PBM``): the click-model table's PBM, the counterfactual direct model's refits in every bootstrap resample, and the
identifiability paper's EM curve method (:mod:`ultr_core.identifiability.embedding`).  PBM's clicks are independent
given (α, γ), so the impressions ``n`` and clicks ``c`` of each (pair, rank) cell are all its likelihood needs.  The
maximum-likelihood fit with standard errors (Newton, constrained at p = 1) is
:func:`ultr_core.identifiability.newton.fit_newton`, on the same counts.

One EM update, with (pseudo-successes, pseudo-trials) added to each parameter's M-step and estimates capped at
``cap``:  α_q ← (a + Σ_cells [c + (n − c)·(1 − γ)α / (1 − γα)]) / (b + Σ n), and γ_r likewise.

>>> import numpy as np
>>> cells = PBMCells.of(np.array([0, 0, 1]), np.array([0, 1, 1]), np.array([10., 10., 10.]), c=np.array([8., 4., 2.]),
...                     n_pairs=2, depth=2)
>>> attr, exam = pbm_em_step(cells, np.full(2, 0.5), np.full(2, 0.5))
>>> attr.round(4).tolist(), exam.round(4).tolist()     # α_0 = (8 + 2·(¼/¾) + 4 + 6·(¼/¾)) / 20
([0.7333, 0.4667], [0.8667, 0.5333])
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["PBMCells", "pbm_em_step", "pbm_em"]

#: cells an EM update reads at a time: its temporaries, a few arrays of this length, stay in the processor's cache
#: (2,000,000 a slice took 0.50 s a step on 20 M cells, 65,536 0.38 s; issue #62)
SLICE = 65_536
#: cells a sum of whole-number trials widens at a time (:func:`_trials`): 64 MB of temporaries
TRIALS_SLICE = 4_000_000
#: the largest examined-and-attractive probability an update divides by 1 − it (keeps 1 − γα away from 0)
P_MAX = 1 - 1e-9


class PBMCells(NamedTuple):
    """One table of (pair, rank) cells as PBM's EM reads it, with each parameter's trials (prior included).  The
    cells keep the compact types :func:`~ultr_core.clickmodels.cells.cell_sums` gives them (int32 pairs, int16
    ranks, uint32 counts); the update computes in float64."""

    pair: np.ndarray
    rank: np.ndarray
    clicks: np.ndarray
    skips: np.ndarray          #: impressions − clicks
    n_pairs: int
    depth: int
    attr_trials: np.ndarray    #: b + impressions per pair (b: one, or one per pair: a learned prior)
    exam_trials: np.ndarray    #: b + impressions per rank
    attr_successes: float | np.ndarray    #: the attractiveness prior's pseudo-successes a (one, or one per pair)
    exam_successes: float
    cap: float                 #: estimates are capped here (PyClick: 1 − 10⁻⁶)

    @classmethod
    def of(cls, pair, rank, n, *, c, n_pairs: int, depth: int, attr_prior: tuple = (0.0, 0.0),
           exam_prior: tuple = (0.0, 0.0), cap: float = 1.0) -> "PBMCells":
        pair, rank = (x if x.dtype.kind in "iu" else x.astype(np.int64) for x in map(np.asarray, (pair, rank)))
        n, c = (x if x.dtype.kind in "fu" else x.astype(np.float64) for x in map(np.asarray, (n, c)))
        return cls(pair, rank, c, n - c, int(n_pairs), int(depth), attr_prior[1] + _trials(pair, n, n_pairs),
                   exam_prior[1] + _trials(rank, n, depth), attr_prior[0], exam_prior[0], float(cap))


def _trials(index: np.ndarray, n: np.ndarray, size: int) -> np.ndarray:
    """Σ n per index.  Whole-number counts are summed in slices of :data:`TRIALS_SLICE` cells — the sums are exact,
    so the same bits — because one bincount widens the whole index and count arrays to 8 bytes each: 1.8 GB at
    once for a 1 B-row log's 115 M UBM cells (issue #62's 4 GB peak); other counts in one bincount as before."""
    if n.dtype.kind == "f" or len(n) <= TRIALS_SLICE:
        return np.bincount(index, n, size)
    out = np.zeros(size)
    for lo in range(0, len(n), TRIALS_SLICE):
        out += np.bincount(index[lo:lo + TRIALS_SLICE], n[lo:lo + TRIALS_SLICE], size)
    return out


def _share(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num / den`` where ``den > 0``, else 0 (a parameter with no trials and no prior)."""
    return np.divide(num, den, out=np.zeros_like(num), where=den > 0)


def pbm_em_step(cells: PBMCells, attr: np.ndarray, exam: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One EM update of (α per pair, γ per rank); see the module docstring.  The numerators are summed by one
    compiled loop over the cells (:func:`~ultr_core.clickmodels.kernels.pbm_em_sums`) in slices of :data:`SLICE`,
    each slice's sums from 0 and then added — the grouping of the numpy update it replaced, so the same bits."""
    from ultr_core.clickmodels.kernels import pbm_em_sums
    num_a, num_g = np.zeros(cells.n_pairs), np.zeros(cells.depth)
    if len(cells.pair):
        pbm_em_sums(cells, np.asarray(attr, np.float64), np.asarray(exam, np.float64), out=(num_a, num_g), step=SLICE,
                    p_max=P_MAX)
    attr = _share(cells.attr_successes + num_a, cells.attr_trials)
    exam = _share(cells.exam_successes + num_g, cells.exam_trials)
    return np.minimum(attr, cells.cap), np.minimum(exam, cells.cap)


def pbm_em(pair, rank, n, *, c, n_pairs: int, depth: int, prior: tuple, n_iter: int, cap: float,
           start: tuple | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``n_iter`` EM updates from ``start`` (default ½ everywhere) with the attractiveness prior ``prior`` and
    PyClick's examination prior (1 in 2): (α, γ)."""
    cells = PBMCells.of(pair, rank, n, c=c, n_pairs=n_pairs, depth=depth, attr_prior=prior, exam_prior=(1.0, 2.0),
                        cap=cap)
    attr, exam = start or (np.full(n_pairs, 0.5), np.full(depth, 0.5))
    for _ in range(n_iter):
        attr, exam = pbm_em_step(cells, attr, exam)
    return attr, exam
