"""The compiled loops of the fits (``clickmodels/kernels.py``, issue #62) against the numpy code they replaced and
against plain sums of logarithms: PBM's EM update keeps every bit; the cascade log-likelihood's ln Π p equals Σ ln p
where the product underflows."""
import numpy as np
import pytest

import ultr_core.clickmodels.pbm as pbm
from ultr_core.clickmodels.kernels import cascade_pass


def _numpy_em_step(cells, attr, exam, step):
    """The numpy EM update the compiled sums replaced (pbm.py before issue #62's kernels), kept here as the
    reference: slices of ``step`` cells, each slice's bincounts added to the totals."""
    num_a, num_g = np.zeros(cells.n_pairs), np.zeros(cells.depth)
    for lo in range(0, len(cells.pair), step):
        part = slice(lo, lo + step)
        pair = cells.pair[part]
        first, last = int(pair.min()), int(pair.max()) + 1
        local = np.subtract(pair, first, dtype=np.intp)
        rank = cells.rank[part].astype(np.intp, copy=False)
        clicks = cells.clicks[part].astype(np.float64, copy=False)
        a, g = attr[first:last][local], exam[rank]
        odds = cells.skips[part].astype(np.float64, copy=False) / (1 - np.minimum(g * a, pbm.P_MAX))
        num_a[first:last] += np.bincount(local, clicks + odds * (1 - g) * a, last - first)
        num_g += np.bincount(rank, clicks + odds * (1 - a) * g, cells.depth)
    attr = pbm._share(cells.attr_successes + num_a, cells.attr_trials)
    exam = pbm._share(cells.exam_successes + num_g, cells.exam_trials)
    return np.minimum(attr, cells.cap), np.minimum(exam, cells.cap)


@pytest.mark.parametrize("step", [pbm.SLICE, 37])
@pytest.mark.parametrize("compact", [True, False])
def test_the_compiled_em_step_is_the_numpy_update_bit_for_bit(step, compact, monkeypatch):
    monkeypatch.setattr(pbm, "SLICE", step)
    rng = np.random.default_rng(step)
    n_pairs, depth, n_cells = 300, 10, 2_000
    key = np.unique(rng.integers(0, n_pairs * depth, n_cells))
    pair, rank = key // depth, key % depth
    n = rng.integers(1, 50, len(key))
    c = rng.binomial(n, 0.3)
    if compact:
        pair, rank, n, c = pair.astype(np.int32), rank.astype(np.int16), n.astype(np.uint32), c.astype(np.uint32)
    else:
        n, c = n * 0.5, c * 0.5                                  # fractional weights stay float64
    cells = pbm.PBMCells.of(pair, rank, n, c=c, n_pairs=n_pairs, depth=depth, attr_prior=(1.0, 2.0),
                            exam_prior=(1.0, 2.0), cap=1 - 1e-6)
    attr, exam = rng.uniform(0.01, 0.99, n_pairs), rng.uniform(0.01, 0.99, depth)
    attr[0], exam[0] = 1.0, 1.0                                  # γα at 1: capped at P_MAX, as numpy did
    for _ in range(3):
        mine, reference = pbm.pbm_em_step(cells, attr, exam), _numpy_em_step(cells, attr, exam, step)
        assert all(np.array_equal(x, y) for x, y in zip(mine, reference))
        attr, exam = mine
    assert not np.allclose(attr, 0.5)                            # the update moved something


@pytest.mark.parametrize("case", ["thirty small", "small then tiny"])
def test_a_pattern_whose_probabilities_underflow_keeps_its_log_likelihood(case):
    """The product of a pattern's probabilities would underflow a double; the loop takes logarithms before it can, so
    the total is Σ ln p.  "thirty small": thirty skipped ranks each of probability about 10⁻¹⁵ (attracted almost
    surely, always examined; about 10⁻⁴⁵⁰ in all); "small then tiny": ten of them, then a click of probability
    10⁻²⁵⁰ (10⁻¹⁵⁰ · 10⁻²⁵⁰ underflowed before the tiny probability was taken apart)."""
    d = 30 if case == "thirty small" else 11
    a = np.full((1, d), 1 - 1e-15)                               # skipped: p = 1 − a, and the user goes on
    clicks = np.zeros((1, d), bool)
    if case == "small then tiny":
        a[0, -1], clicks[0, -1] = 1e-250, True
    after, go, shown = np.zeros((1, d)), np.full((1, d), 1.0), np.ones((1, d), bool)
    sums = [np.zeros((1, d)), np.zeros(d), np.zeros(d), np.zeros(d)]           # pair r shown at rank r
    total = [cascade_pass(a, np.arange(d)[None, :], clicks, shown=shown, weight=np.ones(1),
                          form=(0, after[0], np.zeros(d), go[0]), sums=sums)]
    e, want = 1.0, 0.0
    for r in range(d):                                           # the recursion by hand
        p = max(a[0, r] * e if clicks[0, r] else 1 - a[0, r] * e, 1e-300)
        want += np.log(p)
        e = after[0, r] if clicks[0, r] else e * go[0, r] * (1 - a[0, r]) / p
    assert np.isfinite(total[0]) and total[0] == pytest.approx(want, rel=1e-12)
    assert want < -709                                           # the product alone would have underflowed
