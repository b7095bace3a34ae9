"""How sure is it? (issue #46, item 1, PBM): the Fisher information of the count table is the signless Laplacian of
the weighted document–factor graph — its null space has one dimension per IG component — and the standard error of
log(o_k/o_ref) is an effective resistance, checked by hand, against a dense computation, and for coverage on logs
drawn with a known truth."""
import numpy as np
import pytest
from scipy.sparse.csgraph import connected_components

from ultr_core.identifiability.uncertainty import factor_uncertainty, fisher_information


def test_the_standard_error_is_the_effective_resistance_by_hand():
    """2 documents × 2 factors: two paths between the factors, each two resistors 1/w in series, in parallel."""
    doc, fac = np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1])
    n, c = np.full(4, 10_000.0), np.array([4_000.0, 2_000.0, 2_000.0, 1_000.0])
    u = factor_uncertainty(doc, fac, n, c=c, n_docs=2, n_factors=2, component=np.zeros(2, int))
    w = n * (c / n) / (1 - c / n)                     # the fit is exact here: p = c / n
    path_a, path_b = 1 / w[0] + 1 / w[1], 1 / w[2] + 1 / w[3]
    assert u.converged and u.log_se[1] == pytest.approx(np.sqrt(1 / (1 / path_a + 1 / path_b)), rel=1e-9)
    assert u.o[1] / u.o[0] == pytest.approx(0.5) and u.log_se[0] == 0


def _chain_log(seed: int, n_docs: int = 240, n_pos: int = 6, swap: float = 0.04, blocks: int = 1):
    """A logged ranking that shows each document at one position, with rare swaps to the next one (never across a
    block boundary): a weakly connected graph (or ``blocks`` components), known r and o."""
    rng = np.random.default_rng(seed)
    r = rng.uniform(0.2, 0.9, n_docs)
    o = 0.9 / np.arange(1, n_pos + 1) ** 0.8
    home = np.arange(n_docs) % n_pos
    block = home * blocks // n_pos
    nxt = np.minimum(home + 1, n_pos - 1)
    nxt = np.where(nxt * blocks // n_pos == block, nxt, home)
    doc = np.concatenate([np.arange(n_docs), np.arange(n_docs)])
    fac = np.concatenate([home, nxt])
    n = np.concatenate([rng.poisson(400, n_docs), rng.poisson(400 * swap, n_docs)]).astype(float)
    keep = (n > 0) & ~((fac == np.concatenate([home, home])) & (np.arange(2 * n_docs) >= n_docs))
    doc, fac, n = doc[keep], fac[keep], n[keep]
    c = rng.binomial(n.astype(int), r[doc] * o[fac]).astype(float)
    return doc, fac, n, c, n_docs, n_pos, o


def _components(doc, fac, n_docs, n_factors):
    from scipy import sparse
    N = n_docs + n_factors
    m = sparse.coo_matrix((np.ones(len(doc)), (doc, fac + n_docs)), shape=(N, N))
    return connected_components(m, directed=False)[1][n_docs:]


@pytest.mark.parametrize("blocks", [1, 2, 3])
def test_the_information_has_one_null_direction_per_component(blocks):
    """Theorem 1 numerically: at the fit, the Fisher information's null space has the graph's component count."""
    doc, fac, n, c, D, F, _ = _chain_log(0, n_docs=60, blocks=blocks)
    comp = _components(doc, fac, D, F)
    u = factor_uncertainty(doc, fac, n, c=c, n_docs=D, n_factors=F, component=np.unique(comp, return_inverse=True)[1])
    p = u.r[doc] * u.o[fac]
    ev = np.linalg.eigvalsh(fisher_information(doc, fac, n, p=p, n_docs=D, n_factors=F).toarray())
    assert int((ev < 1e-9 * ev.max()).sum()) == len(np.unique(comp)) == blocks
    assert u.converged and np.isfinite(u.log_se).all()


def test_the_90_percent_fisher_intervals_cover_the_truth_on_a_weak_chain():
    """40 logs of a rare-swap chain drawn with known o: the 90 % intervals of log(o_k/o_ref) hold 85–95 % of the
    time, and the deep positions, linked by few swaps, are the least certain."""
    hits, widths = [], []
    for seed in range(40):
        doc, fac, n, c, D, F, o = _chain_log(seed)
        u = factor_uncertainty(doc, fac, n, c=c, n_docs=D, n_factors=F, component=np.zeros(F, int))
        ref = u.reference[0]
        est, truth = np.log(u.o / u.o[ref]), np.log(o / o[ref])
        k = np.arange(F) != ref
        hits.extend(np.abs(est[k] - truth[k]) <= 1.645 * u.log_se[k])
        widths.append(u.log_se)
    assert 0.85 <= np.mean(hits) <= 0.95, np.mean(hits)
    se = np.mean(widths, axis=0)
    assert se[-1] > se[1] > 0                           # errors propagate along the chain


def test_the_standard_errors_equal_the_dense_pseudo_inverse_of_the_information():
    """An independent computation: Var(log o_k − log o_ref) = (e_k − e_ref)ᵀ I⁺ (e_k − e_ref) with the dense
    pseudo-inverse of the whole Fisher information (documents and factors), on a random graph."""
    rng = np.random.default_rng(5)
    D, F = 80, 12
    key = np.unique(rng.integers(0, D, 500) * F + rng.integers(0, F, 500))
    doc, fac = key // F, key % F
    n = rng.poisson(60, len(doc)).astype(float) + 1
    c = rng.binomial(n.astype(int), rng.uniform(0.1, 0.9, D)[doc] * rng.uniform(0.1, 0.9, F)[fac]).astype(float)
    u = factor_uncertainty(doc, fac, n, c=c, n_docs=D, n_factors=F, component=np.zeros(F, int))
    cov = np.linalg.pinv(fisher_information(doc, fac, n, p=u.r[doc] * u.o[fac], n_docs=D, n_factors=F).toarray())
    ref = D + u.reference[0]
    want = [np.sqrt(cov[D + k, D + k] + cov[ref, ref] - 2 * cov[D + k, ref]) for k in range(F)]
    assert np.allclose(u.log_se, want, rtol=1e-6, atol=1e-12)


def _click_log(path, doc, fac, n, c):
    """One row per impression: (session, query 0, document, position = factor + 1, click)."""
    import pandas as pd
    d, f = np.repeat(doc, n.astype(int)), np.repeat(fac, n.astype(int))
    first = np.repeat(np.cumsum(n.astype(int)) - n.astype(int), n.astype(int))
    clicked = (np.arange(len(d)) - first) < np.repeat(c.astype(int), n.astype(int))
    pd.DataFrame({"session_id": np.arange(len(d)), "query_id": 0, "doc_id": d, "position": f + 1,
                  "click": clicked.astype(int)}).to_csv(path, index=False)


def test_ig_gives_every_curve_factor_a_standard_error_and_a_level(tmp_path, capsys):
    """`ig --json` on a rare-swap chain: the graph says identifiable, the measure says the deep positions are weakly
    identified — each curve entry has `log_se` and `identification`, the report the rule, counts and weakest factors;
    strict JSON.  A log whose documents visit several positions is identified throughout."""
    import json

    from ultr_core.__main__ import main
    doc, fac, n, c, D, F, _ = _chain_log(3, swap=0.01)
    _click_log(tmp_path / "chain.csv", doc, fac, n, c)
    assert main(["ig", str(tmp_path / "chain.csv"), "--json", "--bootstrap", "0"]) == 0
    pb = json.loads(capsys.readouterr().out)["position_bias"]
    levels = {r["label"]: r["identification"] for r in pb["curves"]}
    pi = pb["practical_identifiability"]
    assert levels["position=1"] == "identified" and levels["position=6"] == "weak"
    assert sum(pi["counts"].values()) == len(pb["curves"]) and pi["weakest"][0] == "position=6"
    assert pi["converged"] and "×2" in pi["rule"]
    assert pi["components"]["level"] == ["weak"] and pi["components"]["least_certain"] == ["position=6"]
    assert pi["weakest_links"][0]["link"] == "position=5 — position=6" and pi["weakest_links"][0]["disconnects"]
    orders = pi["document_orders"]                     # one query: every pair of its 240 documents
    assert orders["pairs"] == 240 * 239 // 2 and 0 < orders["resolved"] < orders["pairs"]
    ses = [r["log_se"] for r in pb["curves"]]
    assert ses[0] == 0 and all(b > a for a, b in zip(ses[1:], ses[2:]))       # errors grow along the chain
    doc, fac, n, c, D, F, _ = _chain_log(4, swap=1.0)                         # every document at two positions
    _click_log(tmp_path / "mixed.csv", doc, fac, n, c)
    assert main(["ig", str(tmp_path / "mixed.csv"), "--json", "--bootstrap", "0"]) == 0
    pb = json.loads(capsys.readouterr().out)["position_bias"]
    assert {r["identification"] for r in pb["curves"]} == {"identified"}


def _random_log(seed, D=80, F=12, r=None):
    rng = np.random.default_rng(seed)
    key = np.unique(rng.integers(0, D, 8 * D) * F + rng.integers(0, F, 8 * D))
    doc, fac = key // F, key % F
    n = rng.poisson(200, len(doc)).astype(float) + 1
    r = rng.uniform(0.1, 0.9, D) if r is None else r
    c = rng.binomial(n.astype(int), r[doc] * rng.uniform(0.2, 0.9, F)[fac]).astype(float)
    return doc, fac, n, c, D, F


def test_document_pairs_have_the_effective_resistance_between_them():
    """log(r_d / r_e): the same elimination gives the dense pseudo-inverse's variance, pair by pair."""
    from ultr_core.identifiability.resistance import pair_log_se
    doc, fac, n, c, D, F = _random_log(5)
    u = factor_uncertainty(doc, fac, n, c=c, n_docs=D, n_factors=F, component=np.zeros(F, int))
    cov = np.linalg.pinv(fisher_information(doc, fac, n, p=u.r[doc] * u.o[fac], n_docs=D, n_factors=F).toarray())
    pairs = np.array([(0, 1), (2, 7), (10, 40), (5, 79)])
    want = [np.sqrt(cov[a, a] + cov[b, b] - 2 * cov[a, b]) for a, b in pairs]
    assert np.allclose(pair_log_se(u, pairs), want, rtol=1e-6)


def test_the_log_resolves_the_orders_it_should_and_rarely_those_it_cannot():
    """Queries of 4 documents: with relevance 0.2, 0.4, 0.6, 0.8 most within-query orders are resolved at 90 %; with
    equal relevance about one pair in ten is (the intervals' error rate), never most."""
    from ultr_core.identifiability.resistance import resolved_orders
    groups = np.arange(80) // 4
    spread = np.tile([0.2, 0.4, 0.6, 0.8], 20)
    doc, fac, n, c, D, F = _random_log(6, r=spread)
    u = factor_uncertainty(doc, fac, n, c=c, n_docs=D, n_factors=F, component=np.zeros(F, int))
    far = resolved_orders(u, groups)
    doc, fac, n, c, D, F = _random_log(7, r=np.full(80, 0.5))
    u = factor_uncertainty(doc, fac, n, c=c, n_docs=D, n_factors=F, component=np.zeros(F, int))
    same = resolved_orders(u, groups)
    assert far.pairs == same.pairs == 120
    assert far.share > 0.8 and same.share < 0.25, (far, same)


def test_a_resample_drawn_twice_is_fitted_once_and_gives_the_fit_of_its_own_counts(monkeypatch):
    """The bootstrap refits each distinct resample once (a small log's resamples repeat): the curves equal one fit
    per row made independently, and the repeated rows are not refitted."""
    import ultr_core.identifiability.uncertainty as unc
    doc, fac, n, c, D, F, _ = _chain_log(1, n_docs=40)
    rng = np.random.default_rng(0)
    W = rng.poisson(1.0, (3, D)).astype(float)[[0, 1, 0, 2, 1]]          # rows 2 and 4 repeat rows 0 and 1
    N, C = W[:, doc] * n, W[:, doc] * c
    start = np.zeros(F, np.int64)
    own = np.array([unc.converged_curves(doc, fac, D, F=F, N=N[[b]], C=C[[b]], start=start)[0][0]
                    for b in range(len(N))])
    calls = []
    real = unc.factor_uncertainty
    monkeypatch.setattr(unc, "factor_uncertainty", lambda *a, **k: calls.append(1) or real(*a, **k))
    curves, _, stalled = unc.converged_curves(doc, fac, D, F=F, N=N, C=C, start=start)
    assert len(calls) == 3 and stalled == 0
    np.testing.assert_array_equal(curves, own)
    assert np.isfinite(curves).all() and not np.array_equal(curves[0], curves[1])
