"""The one PBM fit (ultr_core/identifiability/newton.py): its active set is the one its final factors imply, not its
path's — a document left out early returns once the final factors put its maximum inside the bound (issue #58)."""
import numpy as np
import pytest

from ultr_core.identifiability.newton import RELEASE_MARGIN, cap_slope
from ultr_core.identifiability.uncertainty import factor_uncertainty

DEPTH = 10


def _sparse_counts(seed: int, n_docs: int = 3000):
    """PBM clicks on documents each shown at 2–4 random ranks 1–4 times: many cells clicked at every impression."""
    rng = np.random.default_rng(seed)
    o = 1 / np.arange(1, DEPTH + 1) ** 0.7
    r = rng.beta(1, 3, n_docs)
    k = rng.integers(2, 5, n_docs)
    doc = np.repeat(np.arange(n_docs), k)
    fac = np.concatenate([rng.choice(DEPTH, m, replace=False) for m in k])
    n = rng.integers(1, 5, len(doc)).astype(float)
    c = rng.binomial(n.astype(int), r[doc] * o[fac]).astype(float)
    return doc, fac, n, c


def _fit(counts, exclude=None):
    doc, fac, n, c = counts
    z = np.zeros(DEPTH, np.int64)
    return factor_uncertainty(doc, fac, n, c=c, n_docs=int(doc.max()) + 1, n_factors=DEPTH, component=z, references=z,
                              with_se=False,
                              exclude=exclude)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_fit_started_with_interior_documents_left_out_readmits_them(seed):
    counts = _sparse_counts(seed)
    cold = _fit(counts)
    boundary, separated = cold.excluded
    assert cold.converged and 0 < boundary.sum() < len(boundary) / 2
    # leave out, from the start, every tenth document the cold fit kept: a start the fit used to keep to the end
    forced = boundary.copy()
    forced[np.flatnonzero(~boundary & (np.bincount(counts[0], counts[3]) > 0))[::10]] = True
    warm = _fit(counts, (forced, separated.copy()))
    assert warm.converged
    assert np.array_equal(warm.excluded[0], boundary)
    np.testing.assert_allclose(warm.o, cold.o, rtol=0, atol=1e-6)


@pytest.mark.parametrize("seed", [0, 1])
def test_every_document_left_out_rises_at_its_cap_but_a_few_readmitted_once(seed):
    doc, fac, n, c = _sparse_counts(seed)
    fit = _fit((doc, fac, n, c))
    left = fit.excluded[0] & ~fit.saturated
    rows = left[doc] & (np.bincount(fac, c, DEPTH)[fac] > 0)
    slope = cap_slope(doc[rows], fac[rows], n[rows], c=c[rows], o=fit.o, n_docs=len(left))
    shown = np.bincount(doc[rows], n[rows], len(left))
    assert left.sum() > 20
    inside = slope[left] < -RELEASE_MARGIN * shown[left]
    # the few inside are documents readmitted once that left again: in, their own cells move the factors across
    # their cap (fit_newton readmits a document once, so that it cannot leave and return on every round)
    assert inside.sum() <= 0.05 * left.sum()
    assert (slope[left] > 0).mean() > 0.9
