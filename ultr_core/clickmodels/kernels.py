"""Compiled loops (numba) of the two fits that read a table many times: the cascade log-likelihood with its
gradient, which every gradient fit of a cascade model (DBN, CCM, DCM-ML) evaluates a few dozen times, and the sums
of PBM's EM update (:mod:`~ultr_core.clickmodels.pbm`), which PBM, UBM, the direct model's refits and the
identifiability EM curve run 50 times a fit.  Torch's and numpy's versions ran a dozen array operations per rank or
per cell, each a pass over memory: at 100 M rows the cascade recursion took 66 of DBN's 124 s and the EM 39 of PBM's
and UBM's 70 s (issue #62).  Imported where a fit runs (numba takes 0.3 s to import).

The cascade recursion is :func:`~ultr_core.clickmodels.gradient.cascade_log_likelihood`'s — P(c_r | c_<r) with the
examination going on after a click with ``after_click`` and after a skipped examined rank with ``go_on`` — and its
reverse pass is the adjoint of that recursion written out, checked against torch's autograd of the plain recursion
(``tests/clickmodels/test_cascade_gradient.py``).  A pattern's log-likelihood Σ_r ln p_r is taken as ln Π_r p_r
(one logarithm a pattern instead of one a rank: the logarithms were half of the loop), the product renormalised
before it could underflow.  The EM sums add each cell's terms in the order and grouping numpy's ``bincount`` did,
so PBM's and UBM's fits keep every bit.

>>> import numpy as np
>>> per = np.array([[0.5, 0.2], [0.0, 0.0]])       # attractiveness of pairs 0 and 1 (one more parameter, unread)
>>> sums = [np.zeros((2, 2)), np.zeros(2), np.zeros(2), np.zeros(2)]
>>> ll = cascade_pass(per, np.array([[0, 1]]), np.array([[False, True]]), shown=np.zeros((0, 0), bool),
...                   weight=np.ones(1), form=(0, np.zeros(2), np.zeros(2), np.full(2, 0.9)), sums=sums)
>>> round(float(np.exp(ll)), 12)     # a skip (1 − ½), then a click examined with 0.9·(1 − ½)/½: ½ · 0.9·0.2
0.09
"""
from __future__ import annotations

import math

import numba
import numpy as np

__all__ = ["cascade_pass", "pbm_em_sums", "CLAMP"]

#: a probability is kept at least this (the clamp passes no gradient), as the torch recursion clamps it
CLAMP = 1e-300
#: the running product of a pattern's probabilities is turned into its logarithm below this, and a probability
#: below _TINY is taken as its own logarithm, so that the product never underflows
_RENORMALISE, _TINY = 1e-200, 1e-100


def cascade_pass(per, pairs, clicks, *, shown, weight, form, sums) -> float:
    """:func:`_cascade_pass` with its options named: ``form`` = (k, u, v, g), ``sums`` = (d_per, du, dv, dg)."""
    k, u, v, g = form
    return _cascade_pass(per, pairs, clicks, shown, weight, int(k), u, v, g, *sums)


@numba.njit(cache=True, nogil=True)
def _cascade_pass(per, pairs, clicks, shown, weight, k, u, v, g, d_per, du, dv, dg):    # pragma: no cover (compiled)
    """One chunk of a cascade fit's objective: Σ weight · Σ_r ln P(c_r | c_<r) over the patterns ``pairs`` (P, D)
    with ``clicks`` and ``shown`` (bool (P, D); ``shown`` of shape (0, 0): every rank) — returned — and its gradient
    added to ``d_per`` (the per-pair probabilities ``per`` (n_per, n_pairs), attractiveness first) and to ``du``,
    ``dv``, ``dg`` (D,).  After a click at rank r the user goes on with u_r + v_r · ``per[k]`` of the pair there,
    after a skipped examined rank with g_r (:attr:`~ultr_core.clickmodels.base.Cascade.form`).  The probabilities
    are gathered, the recursion run and its adjoint scattered in one loop: the gathers, transitions and scatters
    done as torch operations took longer than the recursion itself (issue #62)."""
    n, d = pairs.shape
    exam, p, inv, attr, x_k = np.empty(d), np.empty(d), np.empty(d), np.empty(d), np.empty(d)
    every = shown.shape[0] == 0
    value = 0.0
    for i in range(n):
        e, log_sum, prod = 1.0, 0.0, 1.0
        for r in range(d):                  # forward: P(c_r | c_<r) and the examination after rank r
            j = pairs[i, r]
            a, x = per[0, j], per[k, j]
            attr[r], x_k[r], exam[r] = a, x, e
            c = clicks[i, r]
            pr = max(a * e if c else 1.0 - a * e, CLAMP)
            p[r], inv[r] = pr, 1.0 / pr
            if every or shown[i, r]:
                if pr < _TINY:
                    log_sum += math.log(pr)     # a product of it could underflow: its own logarithm
                else:
                    prod *= pr                  # ≥ 10⁻²⁰⁰ · 10⁻¹⁰⁰: never below the smallest normal double
                    if prod < _RENORMALISE:
                        log_sum += math.log(prod)
                        prod = 1.0
            e = u[r] + v[r] * x if c else e * g[r] * (1.0 - a) * inv[r]
        w = weight[i]
        value += w * (log_sum + math.log(prod))
        nxt = 0.0                               # the adjoint of the examination after rank r
        for r in range(d - 1, -1, -1):          # reverse: the adjoint of the recursion, scaled by the weight
            e, a, iv, j = exam[r], attr[r], inv[r], pairs[i, r]
            own = w if every or shown[i, r] else 0.0
            if clicks[i, r]:
                dp = own * iv if p[r] > CLAMP else 0.0      # the clamp passes no gradient
                d_per[k, j] += nxt * v[r]
                du[r] += nxt
                dv[r] += nxt * x_k[r]
                da, nxt = dp * e, dp * a
            else:
                eg, skip = e * g[r] * iv, 1.0 - a
                dp = -((own - nxt * eg * skip) * iv) if p[r] > CLAMP else 0.0
                dg[r] += nxt * e * skip * iv
                da, nxt = dp * e - nxt * eg, dp * a + nxt * g[r] * skip * iv
            d_per[0, j] += da
    return value


def pbm_em_sums(cells, attr, exam, *, out, step: int, p_max: float) -> None:
    """:func:`_pbm_em_sums` over a :class:`~ultr_core.clickmodels.pbm.PBMCells` table, adding to ``out`` =
    (num_a, num_g)."""
    _pbm_em_sums(cells.pair, cells.rank, cells.clicks, cells.skips, attr, exam, *out, step, p_max)


@numba.njit(cache=True, nogil=True)
def _pbm_em_sums(pair, rank, clicks, skips, attr, exam, num_a, num_g, step, p_max):    # pragma: no cover (compiled)
    """Add PBM's EM numerators to ``num_a`` (per pair) and ``num_g`` (per rank): for each cell
    c + (n − c)·(1 − γ)α / (1 − min(γα, p_max)) and c + (n − c)·(1 − α)γ / (1 − min(γα, p_max)), summed in slices
    of ``step`` cells as :func:`~ultr_core.clickmodels.pbm.pbm_em_step` describes (each slice's sums from 0, then
    added)."""
    n, depth = len(pair), len(num_g)
    local_g = np.empty(depth)
    for lo in range(0, n, step):
        hi = min(lo + step, n)
        first, last = pair[lo], pair[lo]
        for i in range(lo, hi):
            first, last = min(first, pair[i]), max(last, pair[i])
        local_a = np.zeros(last - first + 1)
        local_g[:] = 0.0
        for i in range(lo, hi):
            a, g, c = attr[pair[i]], exam[rank[i]], float(clicks[i])
            odds = float(skips[i]) / (1 - min(g * a, p_max))
            local_a[pair[i] - first] += c + odds * (1 - g) * a
            local_g[rank[i]] += c + odds * (1 - a) * g
        for j in range(last - first + 1):
            num_a[first + j] += local_a[j]
        for r in range(depth):
            num_g[r] += local_g[r]
