"""Issue #61, item 7: every per-upload computation of the certainty report within a bound counted before it runs
(the within-query orders) or under the app's analysis budget (the profile likelihood)."""
import numpy as np
import pytest
from test_uncertainty_graph import _blocks_log, _chain, _components

from ultr_core.identifiability.resistance import pair_log_se
from ultr_core.identifiability.uncertainty import factor_uncertainty


def test_pair_errors_are_computed_in_chunks_of_bounded_work_and_a_costly_comparison_is_refused(monkeypatch):
    """Issue #61, item 7: the within-query orders cost Σ c_d·c_e cell products (a 756 KB upload, 2,000 documents of
    one query shown at 25 of 500 positions each, asked for 3.6e9 and held the server at 12 GB): the work is counted
    before any pair is built, and refused above the bound; below it, chunks by work give the same numbers."""
    from ultr_core.identifiability import resistance as certainty
    doc, fac, n, c, D, F = _blocks_log(2, sizes=(4, 7))
    u = factor_uncertainty(doc, fac, n, c=c, n_docs=D, n_factors=F, component=_components(doc, fac, D, F))
    groups = np.zeros(D, int)
    whole = certainty.resolved_orders(u, groups)
    pairs = np.array([(i, j) for i in range(D) for j in range(i + 1, D)])
    se = pair_log_se(u, pairs)
    monkeypatch.setattr(certainty, "_CHUNK_PRODUCTS", 7)              # many chunks, none splitting a pair
    assert np.array_equal(pair_log_se(u, pairs), se)
    assert certainty.resolved_orders(u, groups) == whole and whole.pairs > 0
    cells = np.diff(certainty._cells(u)[1]).astype(float)          # each document's free cells
    products = sum(cells[i] ** 2 + cells[j] ** 2 + cells[i] * cells[j] for i, j in pairs)
    out = certainty.resolved_orders(u, groups, max_products=products - 1)
    assert out.pairs is None and f"{products:.3g} cell products" in out.note
    assert certainty.resolved_orders(u, groups, max_products=products).pairs == whole.pairs


def test_the_profile_keeps_to_its_budget_and_says_so():
    """Issue #61, item 7: the profile ran 70 s by itself on a 756 KB upload, outside the server's budget; now a
    budget's seconds are checked before every refit and the interval is left out with a note, and a closed tab
    stops it."""
    from ultr_core.identifiability.pairs import Budget, Stopped
    from ultr_core.identifiability.profile import profile_interval
    doc, fac, n, c, D, F = _chain(3)
    u = factor_uncertainty(doc, fac, n, c=c, n_docs=D, n_factors=F, component=np.zeros(F, int))
    k = int(np.argmax(np.where(np.isfinite(u.log_se), u.log_se, -1)))
    full = profile_interval(u, k)
    assert full.note is None and full.lower is not None and len(full.curve) > 13
    cut = profile_interval(u, k, budget=Budget(seconds=0.0))
    assert cut.lower is None and cut.upper is None and "budget of 0 s" in cut.note
    assert cut.fisher_lower == full.fisher_lower and cut.estimate == full.estimate
    with pytest.raises(Stopped):
        profile_interval(u, k, budget=Budget(stop=lambda: True))


def test_the_plan_scores_its_candidates_in_chunks_of_bounded_memory_with_the_same_swaps(monkeypatch):
    """Issue #61, item 7: the plan held every candidate's factor vector at once (50,000 × the block's factors: 0.96 GB
    on a 500-position upload, more on larger blocks); in chunks the plan is the same."""
    from ultr_core.identifiability import design
    doc, fac, n, c, D, F = _chain(5, n_docs=300, n_pos=8)
    u = factor_uncertainty(doc, fac, n, c=c, n_docs=D, n_factors=F, component=np.zeros(F, int))
    whole = design.certainty_plan(u, steps=4, impressions=100)
    monkeypatch.setattr(design, "_CHUNK_NUMBERS", 50)            # a few candidates per chunk
    chunked = design.certainty_plan(u, steps=4, impressions=100)
    assert chunked.swaps == whole.swaps and len(whole.swaps) == 4
    assert np.allclose(chunked.worst_after, whole.worst_after, rtol=1e-9)
