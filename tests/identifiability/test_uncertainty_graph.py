"""Issue #46 at scale and on awkward logs: every factor's standard error block by block (against a dense
pseudo-inverse, on every solver path), documents and links checked independently, Theorem 1's null space on the
paper's layouts, and bad input answered with a stated result — never NaN, never a silent drop."""
import json

import numpy as np
import pytest
from scipy import sparse
from scipy.sparse.csgraph import connected_components

from ultr_core.identifiability import grounded
from ultr_core.identifiability.resistance import document_log_se, pair_log_se, weakest_links
from ultr_core.identifiability.uncertainty import factor_uncertainty, fisher_information, identification


def _components(doc, fac, D, F):
    A = sparse.coo_matrix((np.ones(len(doc)), (doc, fac + D)), shape=(D + F, D + F))
    return np.unique(connected_components(A, directed=False)[1][D:], return_inverse=True)[1].reshape(-1)


def _blocks_log(seed: int, sizes=(1, 2, 3, 5, 9, 70)):
    """Independent components of the given factor counts, documents shown at 2–3 factors of their own component,
    every one clicked and missed."""
    rng = np.random.default_rng(seed)
    doc, fac, d0, f0 = [], [], 0, 0
    for m in sizes:
        n_docs = 6 * m
        for d in range(n_docs):
            k = rng.choice(m, size=min(m, int(rng.integers(2, 4))), replace=False)
            doc += [d0 + d] * len(k)
            fac += list(f0 + k)
        d0, f0 = d0 + n_docs, f0 + m
    doc, fac = np.array(doc), np.array(fac)
    n = rng.poisson(300, len(doc)).astype(float) + 20
    r, o = rng.uniform(0.2, 0.8, d0), rng.uniform(0.2, 0.9, f0)
    c = rng.binomial(n.astype(int), r[doc] * o[fac]).astype(float)
    c = np.clip(c, 1, n - 1)
    return doc, fac, n, c, d0, f0


def _dense_se(u, doc, fac, n, D, F):
    cov = np.linalg.pinv(fisher_information(doc, fac, n, p=u.r[doc] * u.o[fac], n_docs=D, n_factors=F).toarray(),
                         rcond=1e-11)
    ref = D + u.reference
    k = D + np.arange(F)
    return np.sqrt(np.maximum(cov[k, k] + cov[ref, ref] - 2 * cov[k, ref], 0)), cov


@pytest.mark.parametrize("small, dense", [(64, 4000), (2, 4000), (2, 4)])
def test_every_factor_of_every_component_matches_the_dense_pseudo_inverse(monkeypatch, small, dense):
    """Components of 1…70 factors; the batched, Cholesky and sparse-LU paths (forced by lowering the limits) give
    the dense pseudo-inverse's standard errors for every factor; the null space has one direction per component."""
    monkeypatch.setattr(grounded, "SMALL_MAX", small)
    monkeypatch.setattr(grounded, "DENSE_MAX", dense)
    doc, fac, n, c, D, F = _blocks_log(0)
    comp = _components(doc, fac, D, F)
    u = factor_uncertainty(doc, fac, n, c=c, n_docs=D, n_factors=F, component=comp)
    want, cov = _dense_se(u, doc, fac, n, D, F)
    assert u.converged and np.isfinite(u.log_se).all()
    assert np.allclose(u.log_se, want, rtol=1e-6, atol=1e-9)
    ev = np.linalg.eigvalsh(fisher_information(doc, fac, n, p=u.r[doc] * u.o[fac], n_docs=D, n_factors=F).toarray())
    assert int((ev < 1e-9 * ev.max()).sum()) == comp.max() + 1 == 6


def test_documents_and_their_pairs_match_the_dense_pseudo_inverse():
    """Var log r_d with the reference held: the variance of log(r_d·o_ref) — the identified product, so the
    covariance enters with a plus — is the effective resistance between d and the reference factor."""
    doc, fac, n, c, D, F = _blocks_log(1, sizes=(4, 7))
    comp = _components(doc, fac, D, F)
    u = factor_uncertainty(doc, fac, n, c=c, n_docs=D, n_factors=F, component=comp)
    _, cov = _dense_se(u, doc, fac, n, D, F)
    ref = D + u.reference[fac[np.searchsorted(doc, np.arange(D))]]
    d = np.arange(D)
    want = np.sqrt(cov[d, d] + cov[ref, ref] + 2 * cov[d, ref])
    assert np.allclose(document_log_se(u), want, rtol=1e-6)
    pairs = np.array([(0, 5), (3, 20), (30, 40), (0, 40)])            # the last two: across components
    se = pair_log_se(u, pairs)
    a, b = pairs[:2, 0], pairs[:2, 1]
    assert np.allclose(se[:2], np.sqrt(cov[a, a] + cov[b, b] - 2 * cov[a, b]), rtol=1e-6)
    assert np.isfinite(se[2]) and np.isinf(se[3])


def _chain(seed=0, n_docs=120, n_pos=5, swap=0.05):
    rng = np.random.default_rng(seed)
    home = np.arange(n_docs) % n_pos
    nxt = np.minimum(home + 1, n_pos - 1)
    doc = np.r_[np.arange(n_docs), np.arange(n_docs)[home < n_pos - 1]]
    fac = np.r_[home, nxt[home < n_pos - 1]]
    n = np.r_[rng.poisson(400, n_docs), rng.poisson(400 * swap, (home < n_pos - 1).sum())].astype(float) + 2
    r, o = rng.uniform(0.2, 0.9, n_docs), 0.9 / np.arange(1, n_pos + 1)
    c = np.clip(rng.binomial(n.astype(int), r[doc] * o[fac]), 1, None).astype(float)
    c = np.minimum(c, n - 1)
    return doc, fac, n, c, n_docs, n_pos


def test_the_weakest_link_is_what_its_removal_costs():
    """On a chain 1–2–…–5 every link is a bridge: the weakest factor (5) is cut off by losing any of them, and the
    link list says so; on a graph with a cycle the Sherman–Morrison prediction equals refitting the information
    without that link (dense)."""
    doc, fac, n, c, D, F = _chain()
    u = factor_uncertainty(doc, fac, n, c=c, n_docs=D, n_factors=F, component=np.zeros(F, int), references={0: 0})
    labels = [f"p{k + 1}" for k in range(F)]
    links = [x for x in weakest_links(u, labels, top=20) if x.kind == "link"]
    assert np.argmax(u.log_se) == F - 1 and all(x.disconnects for x in links)
    assert {x.link for x in links} == {"p1 — p2", "p2 — p3", "p3 — p4", "p4 — p5"}
    assert sum(x.share for x in links) == pytest.approx(1.0)
    doc2 = np.r_[doc, D + np.arange(20), D + np.arange(20)]            # 20 more documents at positions 1 and 5
    fac2 = np.r_[fac, np.zeros(20, int), np.full(20, F - 1)]
    rng = np.random.default_rng(3)
    n2 = np.r_[n, np.full(40, 30.0)]
    c2 = np.r_[c, rng.integers(3, 12, 40).astype(float)]
    u = factor_uncertainty(doc2, fac2, n2, c=c2, n_docs=D + 20, n_factors=F, component=np.zeros(F, int),
                           references={0: 0})
    top = next(x for x in weakest_links(u, labels, top=20) if x.kind == "link")
    from ultr_core.identifiability.newton import schur as _schur
    S = _schur(doc2, fac2, u.cells[2], n_docs=D + 20, n_factors=F)[0].toarray()
    a, b = (labels.index(x) for x in top.link.split(" — "))
    S[a, b] = S[b, a] = 0.0
    S[a, a], S[b, b] = S[a, a] - S[a, :].sum(), S[b, b] - S[b, :].sum()   # rows sum to 0 again
    ref, worst = int(u.reference[0]), int(np.argmax(u.log_se))
    keep = np.arange(F) != ref
    inv = np.linalg.inv(S[np.ix_(keep, keep)])
    assert not top.disconnects
    assert top.log_se_after == pytest.approx(np.sqrt(inv[keep[:worst].sum(), keep[:worst].sum()]), rel=1e-6)


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_the_null_space_is_the_component_count_on_the_papers_layouts(k):
    """The identifiability paper's fully synthetic layouts (App. C.1, K = 1…4 components, one-hot documents shared
    along sparse edges) with PBM clicks: the Fisher information's null space has K directions, factors of other
    components are unidentified and those linked to the reference have finite errors."""
    from ultr_core.data.synthetic import make_paper_identifiability_data
    d = make_paper_identifiability_data(n_components=k, n_queries=200, docs_per_position=40, shared_per_edge=8, seed=k)
    doc_ids = np.asarray(d.doc_ids).reshape(-1)
    pos = np.tile(np.arange(10), len(doc_ids) // 10)
    key, first = np.unique(doc_ids * 10 + pos, return_index=True)
    doc, fac = np.unique(key // 10, return_inverse=True)[1].reshape(-1), key % 10
    D = doc.max() + 1
    rng = np.random.default_rng(k)
    r, o = rng.uniform(0.2, 0.9, D), 1 / np.arange(1, 11)
    n = np.full(len(doc), 2_000.0)
    c = rng.binomial(2_000, r[doc] * o[fac]).astype(float)
    comp = _components(doc, fac, D, 10)
    u = factor_uncertainty(doc, fac, n, c=c, n_docs=D, n_factors=10, component=comp)
    ev = np.linalg.eigvalsh(fisher_information(doc, fac, n, p=u.r[doc] * u.o[fac], n_docs=D, n_factors=10).toarray())
    assert int((ev < 1e-9 * ev.max()).sum()) == comp.max() + 1 == k
    assert u.converged and np.isfinite(u.log_se).all()


def test_awkward_logs_get_a_stated_result_never_nan(tmp_path, capsys):
    """A factor never clicked, a factor linked only by documents clicked on one side (its ratio runs off: separated
    or at the boundary, whichever the fit meets first), a document
    clicked at every impression, a one-document component: each factor a level, each count stated; strict JSON."""
    import pandas as pd

    from ultr_core.__main__ import main
    rows = []
    rng = np.random.default_rng(0)
    for d in range(60):                                   # positions 1–3 well mixed
        for p in (1, 2, 3):
            rows += [(d, d, p, int(rng.random() < 0.5 / p)) for _ in range(20)]
    for d in range(60, 64):                               # position 4: shown, never clicked
        rows += [(d, d, 4, 0)] * 10 + [(d, d, 1, 1)] * 5 + [(d, d, 1, 0)] * 5
    for d in range(64, 70):                               # position 5: its documents clicked there, never at 1
        rows += [(d, d, 5, 1)] * 3 + [(d, d, 1, 0)] * 30
    rows += [(70, 70, 2, 1)] * 4 + [(70, 70, 3, 1)] * 4   # clicked at every impression
    frame = pd.DataFrame(rows, columns=["query_id", "doc_id", "position", "click"])
    frame.insert(0, "session_id", np.arange(len(frame)))
    frame.to_csv(tmp_path / "awkward.csv", index=False)
    assert main(["ig", str(tmp_path / "awkward.csv"), "--json", "--bootstrap", "0", "--document", "global",
                 "--documents", str(tmp_path / "docs.csv")]) == 0
    out = capsys.readouterr().out
    pi = json.loads(out)["position_bias"]["practical_identifiability"]
    levels = dict(zip(pi["factors"]["label"], pi["factors"]["identification"]))
    assert levels["position=4"] == levels["position=5"] == "unidentified"
    assert levels["position=2"] == levels["position=3"] == "identified"
    assert pi["separated_factors"] + pi["documents"]["at_the_boundary"] >= 2        # position 5's documents, 70
    assert pi["documents"]["never_clicked"] == 0
    assert "NaN" not in out and "Infinity" not in out
    docs = pd.read_csv(tmp_path / "docs.csv")
    assert docs.loc[docs.doc_id == 70, "status"].item() == "clicked at every impression"
    assert set(docs["status"]) <= {"ok", "no clicks", "clicked at every impression", "not linked"}
    assert len(docs) == 71 and docs.loc[docs.status == "ok", "lower"].notna().all()
    ok = docs[docs.status == "ok"]                        # a click probability never passes 1 inside the interval
    assert (ok.upper <= np.maximum(1.0, ok.relevance) + 1e-12).all() and (ok.lower <= ok.relevance).all()


def test_levels_follow_the_stated_rule():
    span = np.exp(2 * 1.6448536 * np.array([0.21, 0.22]))
    assert span[0] < 2 < span[1]
    assert identification(np.array([0.21, 0.22])).tolist() == ["identified", "weak"]


def test_a_ratio_the_clicks_push_to_zero_is_separated_not_a_number():
    """Position 2 is linked to 1 only by documents clicked at 1 and never at 2, and 3 to 2 likewise: the likelihood
    rises without end as o_2/o_1 → 0 — no finite estimate: no document clicked at both links them, both are
    unidentified, and nothing is NaN."""
    doc = np.array([0, 0, 1, 1, 2, 2, 3, 3])
    fac = np.array([0, 1, 0, 1, 1, 2, 1, 2])
    n = np.full(8, 20.0)
    c = np.array([10, 0, 8, 0, 10, 0, 9, 0], float)
    u = factor_uncertainty(doc, fac, n, c=c, n_docs=4, n_factors=3, component=np.zeros(3, int), references={0: 0})
    assert u.converged and identification(u.log_se).tolist() == ["identified", "unidentified", "unidentified"]
    assert np.isfinite(u.r).all() and np.isfinite(u.o).all()


def test_the_profile_interval_agrees_with_fisher_when_clicks_are_many_and_not_when_few():
    """Many clicks: the likelihood is quadratic and the profile interval is the Fisher one (within 2 %); few
    clicks: the profile interval is asymmetric about the estimate (the log ratio's likelihood is skewed) and the
    deviance at its ends is the χ²₁ 90 % quantile."""
    from scipy.stats import chi2

    from ultr_core.identifiability.profile import profile_interval
    doc, fac = np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1])
    many = factor_uncertainty(doc, fac, np.full(4, 40_000.0), c=np.array([16e3, 8e3, 8e3, 4e3]), n_docs=2,
                              n_factors=2, component=np.zeros(2, int))
    p = profile_interval(many, 1)
    assert p.lower == pytest.approx(p.fisher_lower, rel=0.02) and p.upper == pytest.approx(p.fisher_upper, rel=0.02)
    few = factor_uncertainty(doc, fac, np.full(4, 20.0), c=np.array([8.0, 2.0, 6.0, 1.0]), n_docs=2, n_factors=2,
                             component=np.zeros(2, int))
    p = profile_interval(few, 1)
    left, right = np.log(p.estimate / p.lower), np.log(p.upper / p.estimate)
    assert abs(left - right) > 0.05 and p.lower < p.estimate < p.upper
    ends = [v for r, v in p.curve if min(abs(r - p.lower), abs(r - p.upper)) < 1e-6 * r]
    assert ends and all(v == pytest.approx(chi2.ppf(0.9, 1), abs=1e-4) for v in ends)


def test_ig_profile_and_documents_from_the_command_line(tmp_path, capsys):
    """`ig --profile position=6` prints both intervals (JSON: `profile`); a factor name it does not know, or the
    reference, is refused with a message naming the option."""
    from test_uncertainty import _chain_log, _click_log

    from ultr_core.__main__ import main
    doc, fac, n, c, D, F, _ = _chain_log(3, swap=0.01)
    _click_log(tmp_path / "chain.csv", doc, fac, n, c)
    assert main(["ig", str(tmp_path / "chain.csv"), "--bootstrap", "0", "--profile", "position=6"]) == 0
    text = capsys.readouterr().out
    assert "Profile likelihood of o(position=6) / o(position=1)" in text and "Fisher interval" in text
    assert main(["ig", str(tmp_path / "chain.csv"), "--bootstrap", "0", "--json", "--profile", "6"]) == 0
    p = json.loads(capsys.readouterr().out)["profile"]
    assert p["factor"] == "position=6" and p["lower"] < p["estimate"] < p["upper"]
    assert main(["ig", str(tmp_path / "chain.csv"), "--profile", "position=60"]) == 2
    assert "--profile" in capsys.readouterr().err
    assert main(["ig", str(tmp_path / "chain.csv"), "--profile", "position=1"]) == 2
    assert "reference" in capsys.readouterr().err


def test_a_swap_predicted_by_sherman_morrison_equals_the_information_with_that_cell():
    """The plan's predicted standard errors after two swaps equal the Fisher standard errors computed afresh with the
    swapped cells added at their expected clicks (same fit), to 1e-8."""
    from ultr_core.identifiability.design import certainty_plan
    doc, fac, n, c, D, F = _chain(seed=2)
    u = factor_uncertainty(doc, fac, n, c=c, n_docs=D, n_factors=F, component=np.zeros(F, int), references={0: 0})
    plan = certainty_plan(u, steps=2, impressions=200)
    d2, f2 = doc, fac
    w2 = u.cells[2].copy()
    for s in plan.swaps:
        p = u.r[s["document"]] * u.o[s["factor"]]
        d2, f2 = np.r_[d2, s["document"]], np.r_[f2, s["factor"]]
        w2 = np.r_[w2, 200 * p / (1 - p)]
    from ultr_core.identifiability.newton import schur as _schur
    S = _schur(d2, f2, w2, n_docs=D, n_factors=F)[0].toarray()
    inv = np.linalg.inv(S[1:, 1:])
    order = np.array(plan.factors)
    want = np.sqrt(np.r_[0.0, np.diag(inv)])[order]
    assert np.allclose(plan.se_after[-1], want, rtol=1e-8)
    assert plan.worst_after[1] < plan.worst_after[0] < plan.worst_before


def test_the_predicted_certainty_is_realised_when_the_swaps_are_simulated():
    """Five swaps planned on a rare-swap chain, then drawn from the true model and refitted: the weakest factor's
    realised standard error is within 20 % of the prediction on every one of 5 seeds, and well below where it
    started."""
    from ultr_core.identifiability.design import certainty_plan
    for seed in range(5):
        rng = np.random.default_rng(100 + seed)
        D, F = 150, 5
        home = np.arange(D) % F
        moved = home < F - 1
        doc = np.r_[np.arange(D), np.arange(D)[moved]]
        fac = np.r_[home, home[moved] + 1]
        n = np.r_[rng.poisson(300, D), rng.poisson(3, moved.sum())].astype(float) + 1
        r, o = rng.uniform(0.2, 0.8, D), 0.9 / np.arange(1, F + 1)
        c = rng.binomial(n.astype(int), r[doc] * o[fac]).astype(float)
        u = factor_uncertainty(doc, fac, n, c=c, n_docs=D, n_factors=F, component=np.zeros(F, int), references={0: 0})
        plan = certainty_plan(u, steps=5, impressions=300)
        sd = np.array([s["document"] for s in plan.swaps])
        sf = np.array([s["factor"] for s in plan.swaps])
        sc = rng.binomial(300, r[sd] * o[sf]).astype(float)
        after = factor_uncertainty(np.r_[doc, sd], np.r_[fac, sf], np.r_[n, np.full(5, 300.0)], c=np.r_[c, sc],
                                   n_docs=D, n_factors=F,
                                   component=np.zeros(F, int), references={0: 0})
        realised = after.log_se[plan.worst_factor]
        assert abs(realised / plan.worst_after[-1] - 1) < 0.2, (seed, realised, plan.worst_after[-1])
        assert realised < 0.7 * plan.worst_before


def test_ig_certainty_plans_swaps_from_the_command_line(capsys, tmp_path):
    """`ig --certainty 3 --json`: three swaps, each predicted to lower the weakest factor's error further, named by
    the log's own document keys and factor labels."""
    from test_uncertainty import _chain_log, _click_log

    from ultr_core.__main__ import main
    doc, fac, n, c, D, F, _ = _chain_log(3, swap=0.01)
    _click_log(tmp_path / "chain.csv", doc, fac, n, c)
    assert main(["ig", str(tmp_path / "chain.csv"), "--bootstrap", "0", "--json", "--certainty", "3"]) == 0
    plan = json.loads(capsys.readouterr().out)["certainty_plan"]
    after = [s["worst_se_after"] for s in plan["swaps"]]
    assert len(after) == 3 and plan["worst_se_before"] > after[0] > after[1] > after[2]
    assert plan["weakest_factor"] == "position=6" and plan["swaps"][0]["document"].startswith("query_id=0, doc_id=")


def test_a_component_held_together_by_one_document_gets_its_series_resistance(capsys, tmp_path):
    """Positions 7 and 8 share one document and nothing else: a two-factor component whose only link is that
    document — its standard error is the two cells' resistances in series, and the component's level and least
    certain factor are reported with the per-component summary."""
    rng = np.random.default_rng(1)
    doc, fac = [np.arange(40)], [np.arange(40) % 6]
    doc += [np.arange(40)]
    fac += [(np.arange(40) + 1) % 6]
    doc, fac = np.concatenate(doc + [[40, 40]]), np.concatenate(fac + [[6, 7]])
    n = np.r_[np.full(80, 300.0), 500.0, 500.0]
    c = np.r_[rng.binomial(300, 0.3, 80), 150, 60].astype(float)
    comp = _components(doc, fac, 41, 8)
    u = factor_uncertainty(doc, fac, n, c=c, n_docs=41, n_factors=8, component=comp)
    k = 6 if u.reference[7] == 7 else 7
    p = c[-2:] / n[-2:]
    w = n[-2:] * p / (1 - p)
    assert u.log_se[k] == pytest.approx(np.sqrt(1 / w[0] + 1 / w[1]), rel=1e-9)
    from ultr_core.identifiability.precision import _component_levels
    levels = identification(u.log_se)
    summary = _component_levels(comp, levels, u.log_se, [f"f{i}" for i in range(8)])
    assert summary.single_factor == 0 and sorted(summary.table["factors"]) == [2, 6]


def test_each_curve_factor_shows_the_interval_its_level_is_about():
    """Every curve entry carries PBM's maximum-likelihood ratio and its 90 % Fisher interval next to the level, and a
    curve whose band misses that interval is named in a note (the two estimators disagree)."""
    import pandas as pd

    from ultr_core.identifiability import IdentifiabilityGraph
    from ultr_core.identifiability.precision import _apart, practical_report
    from ultr_core.logs.ingestion import CountTable
    doc, fac, n, c, D, F, o = _chain_log_local()
    frame = pd.DataFrame({"doc_id": doc, "position": fac + 1, "impressions": n.astype(int), "clicks": c.astype(int)})
    g = IdentifiabilityGraph.from_counts(CountTable(frame, ("doc_id",), ("position",)))
    curves = [{"factor": k, "label": f"position={k + 1}", "lower": 0.0, "upper": 0.01} for k in range(F)]
    curves, pi = practical_report(g, curves)
    r = curves[-1]
    assert r["fisher_lower"] < o[-1] / o[0] < r["fisher_upper"] and r["fisher_lower"] < r["pbm_ml"]
    assert "do not overlap" in pi.disagreement and _apart(r) and not _apart({**r, "upper": 1.0})


def _chain_log_local():
    from test_uncertainty import _chain_log
    return _chain_log(5, swap=0.05)


def test_a_weakest_document_is_what_its_removal_costs():
    """A document's entry among the weakest links: its share is the power its star dissipates (≤ 1), and the
    standard error without it (Woodbury) equals recomputing the information without its cells (dense)."""
    from ultr_core.identifiability.newton import schur as _schur
    doc, fac, n, c, D, F = _chain()
    rng = np.random.default_rng(5)
    doc = np.r_[doc, D + np.repeat(np.arange(10), 3)]                  # 10 documents at three positions each
    fac = np.r_[fac, np.concatenate([rng.choice(F, 3, replace=False) for _ in range(10)])]
    n = np.r_[n, np.full(30, 40.0)]
    c = np.r_[c, rng.integers(4, 20, 30).astype(float)]
    u = factor_uncertainty(doc, fac, n, c=c, n_docs=D + 10, n_factors=F, component=np.zeros(F, int), references={0: 0})
    labels = [f"p{k + 1}" for k in range(F)]
    docs = [x for x in weakest_links(u, labels, top=40, document_label=lambda d: f"d{d}") if x.kind == "document"]
    assert docs and all(0 < x.share <= 1 for x in docs)
    worst, ref = int(np.argmax(u.log_se)), int(u.reference[0])
    keep = np.arange(F) != ref
    for x in docs[:3]:
        d = int(x.link.split(" ")[0][1:])
        mask = u.cells[0] != d
        S = _schur(u.cells[0][mask], u.cells[1][mask], u.cells[2][mask], n_docs=D + 10, n_factors=F)[0].toarray()
        var = np.linalg.inv(S[np.ix_(keep, keep)])[np.flatnonzero(keep) == worst][0][np.flatnonzero(keep) == worst]
        assert x.log_se_after == pytest.approx(float(np.sqrt(var[0])), rel=1e-6)

