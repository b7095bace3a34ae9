"""The identifiability paper's own procedures: its fully synthetic data (App. C.1), DLA's update
rule (SPEC §3) against an independent loop implementation, fits to convergence, and Table 1's
repairs on that data."""
import numpy as np
import pytest

from ultr_core.data.synthetic import PAPER_BLOCKS, PAPER_LABEL_SHARES, make_paper_identifiability_data
from ultr_core.errors import ConfigError
from ultr_core.identifiability import IdentifiabilityGraph
from ultr_core.identifiability.embedding import fit_counts
from ultr_core.identifiability.merging import plan_merges
from ultr_core.identifiability.repairs import fit_repaired
from ultr_core.simulation.clickmodel import EYE_TRACKING
from ultr_core.simulation.synthetic_logs import binomial_ctr_table


@pytest.mark.parametrize("K", [1, 2, 3, 4])
def test_paper_data_has_the_papers_blocks_as_components(K):
    data = make_paper_identifiability_data(n_components=K, seed=K)
    table, r, o = binomial_ctr_table(data, seed=K)
    g = IdentifiabilityGraph.from_counts(table)
    assert g.n_components == K
    blocks = {tuple(sorted(g.factors["position"].to_numpy()[g.component == c])) for c in range(K)}
    assert blocks == set(PAPER_BLOCKS[K])
    assert 9_800 <= g.n_documents <= 10_000 and data.n_queries == 1_150
    # sparse links, as in the official data: most documents are shown at one position only
    per_doc = table.frame.drop_duplicates(["doc_id", "position"]).groupby("doc_id").size()
    assert 0.85 < (per_doc == 1).mean() < 0.95


def test_paper_data_labels_relevance_and_binomial_ctrs():
    data = make_paper_identifiability_data(n_components=2, seed=0)
    shares = np.bincount(data.labels, minlength=5) / data.n_rows
    assert np.abs(shares - PAPER_LABEL_SHARES).max() < 0.03          # skewed: ≈ 39/34/23/4/1 %
    table, r, o = binomial_ctr_table(data, seed=0)
    labels = dict(zip(data.doc_ids, data.labels))
    y = np.array([labels[d] for d in r.index])
    assert np.allclose(r.to_numpy(), 0.1 + 0.9 * (2.0 ** y - 1) / 31)   # App. C.1: denominator 31
    f = table.frame
    assert (f["impressions"] == 1_000_000).all()
    p = r.loc[f["doc_id"]].to_numpy() * EYE_TRACKING[f["position"].to_numpy() - 1]
    z = (f["clicks"] / 1e6 - p) / np.sqrt(p * (1 - p) / 1e6)
    assert np.abs(z).max() < 5.5 and abs(z.mean()) < 0.1


def _dla_step_by_loops(d, g, n, c, r, o):
    """DLA one step written from the equations, row by row (independent of the vectorised code):
    r̂_d = Σ n·ctr·ô_g / Σ n·ô_g² over the rows of d, then ô_g = Σ n·(ctr / r̂_d) / Σ n over the rows of g."""
    r, o = r.copy(), o.copy()
    for doc in range(len(r)):
        num = den = 0.0
        for i in range(len(d)):
            if d[i] == doc:
                num += n[i] * (c[i] / n[i]) * o[g[i]]
                den += n[i] * o[g[i]] ** 2
        r[doc] = min(max(num / den if den > 0 else 0.0, 0.0), 1.0)
    for fac in range(len(o)):
        num = den = 0.0
        for i in range(len(g)):
            if g[i] == fac:
                num += n[i] * ((c[i] / n[i]) / r[d[i]] if r[d[i]] > 0 else 0.0)
                den += n[i]
        o[fac] = min(max(num / den if den > 0 else 0.0, 0.0), 1.0)
    return r, o


def test_dla_update_matches_the_equations_step_by_step():
    rng = np.random.default_rng(3)
    d = np.array([0, 0, 1, 1, 2, 2, 3, 0])
    g = np.array([0, 1, 1, 2, 2, 0, 1, 2])
    n = rng.integers(50, 500, size=8).astype(float)
    c = np.floor(n * rng.uniform(0.05, 0.6, size=8))
    r0, o0 = rng.uniform(0.1, 0.9, 4), rng.uniform(0.1, 0.9, 3)
    r, o = r0, o0
    for step in range(1, 6):
        r, o = _dla_step_by_loops(d, g, n, c, r, o)
        fit = fit_counts(d, g, n, c=c, D=4, G=3, method="dla", n_iter=step, tol=0.0, init=(r0, o0))
        assert np.allclose(fit.relevance, r, rtol=1e-12) and np.allclose(fit.observation, o, rtol=1e-12)
    ones = fit_counts(d, g, n, c=c, D=4, G=3, method="dla", n_iter=1, tol=0.0, init="ones", seed=1)
    r1 = np.random.default_rng(1).uniform(0, 1, 4)                 # DLA_I: r̂ random, ô starts at 1
    assert np.allclose(ones.relevance, _dla_step_by_loops(d, g, n, c, r1, np.ones(3))[0])
    with pytest.raises(ConfigError, match="init"):
        fit_counts(d, g, n, c=c, D=4, G=3, method="dla", init="zeros")


def test_regression_em_and_two_tower_follow_the_official_updates():
    """Regression-EM: its E-step uses ctr/ô as the row's relevance, so r̂_d = mean(ctr/ô_g) and
    ô_g = mean(ctr + (1−ctr)·ô(1−r̂)/(1−ô r̂)); Two-Tower starts at σ(0) = 0.5 relevance."""
    d = np.array([0, 0, 1, 1, 2])
    g = np.array([0, 1, 0, 1, 1])
    n = np.array([100.0, 200.0, 100.0, 300.0, 50.0])
    c = np.array([30.0, 20.0, 10.0, 45.0, 5.0])
    r0, o0 = np.array([0.3, 0.2, 0.4]), np.array([0.8, 0.5])
    r = np.array([sum(n[i] * c[i] / n[i] / o0[g[i]] for i in range(5) if d[i] == k) /
                  sum(n[i] for i in range(5) if d[i] == k) for k in range(3)]).clip(0, 1)
    o = np.array([sum(n[i] * (c[i] / n[i] + (1 - c[i] / n[i]) * o0[f] * (1 - r[d[i]]) / (1 - o0[f] * r[d[i]]))
                      for i in range(5) if g[i] == f) / sum(n[i] for i in range(5) if g[i] == f)
                  for f in range(2)]).clip(0, 1)
    fit = fit_counts(d, g, n, c=c, D=3, G=2, method="regression_em", n_iter=1, tol=0.0, init=(r0, o0))
    assert np.allclose(fit.relevance, r) and np.allclose(fit.observation, o)
    tt = fit_counts(d, g, n, c=c, D=3, G=2, method="two_tower", n_iter=1, tol=0.0, lr=0.0, seed=0)
    assert np.allclose(tt.relevance, 0.5)


def test_fits_run_to_convergence_and_say_so():
    data = make_paper_identifiability_data(n_components=1, seed=0)
    table, r, o = binomial_ctr_table(data, seed=0)
    out = fit_repaired(table, r, o, data=data)
    assert out["converged"] and 100 < out["iterations"] < 20_000 and out["mcc"] > 0.999
    capped = fit_repaired(table, r, o, data=data, max_iter=50)
    assert not capped["converged"] and capped["iterations"] == 50


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_table1_shape_on_the_papers_data(seed):
    """Identifiability Matters, Table 1 / Fig. 3b: DLA recovers relevance only for K = 1; node
    intervention reaches MCC ≥ 0.99 for K = 2–4 and is at least as good as node merging."""
    for K in (1, 2, 3, 4):
        data = make_paper_identifiability_data(n_components=K, seed=seed)
        table, r, o = binomial_ctr_table(data, seed=seed)
        plain = fit_repaired(table, r, o, data=data, seed=seed)
        if K == 1:
            assert plain["mcc"] > 0.99
            continue
        merged = fit_repaired(table, r, o, data=data, repair="merge", seed=seed)
        fixed = fit_repaired(table, r, o, data=data, repair="intervene", seed=seed)
        assert plain["mcc"] < 0.9, (K, plain["mcc"])
        assert fixed["components_after"] == 1 and fixed["interventions"] == K - 1
        assert fixed["mcc"] >= 0.99 and fixed["mcc"] >= merged["mcc"] - 1e-6, (K, fixed["mcc"], merged["mcc"])


def _cli(args, capsys):
    from ultr_core.__main__ import main
    rc = main(args)
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_ig_fit_cli_on_the_papers_data(capsys):
    import json
    rc, out, _ = _cli(["ig-fit", "paper:2", "--json"], capsys)
    rep = json.loads(out)
    assert rc == 0 and rep["n_components"] == 2 and rep["n_components_after_repair"] == 2
    assert set(rep) >= {"mcc", "ndcg@5", "ndcg@10", "click_mse", "iterations", "converged"}
    assert rep["converged"] and rep["mcc"] < 0.9
    rc, out, _ = _cli(["ig-fit", "paper:2", "--repair", "merge", "--init", "ones"], capsys)
    assert rc == 0 and "n_components_after_repair: 1" in out
    rc, _, err = _cli(["ig-fit", "paper:9"], capsys)
    assert rc == 2 and err.startswith("error: path") and "Traceback" not in err


def test_ig_fit_cli_on_an_ultra_directory_and_a_labelled_log(tmp_path, capsys):
    import json

    import pandas as pd

    from ultr_core.data.dataset import LTRDataset, RankingData
    from ultr_core.data.loaders import save_ultra
    d = make_paper_identifiability_data(n_components=1, n_queries=120, docs_per_position=100, shared_per_edge=10,
                                        seed=0)
    # one-hot documents as the official data: a document is its feature vector (rows repeat it)
    one = RankingData(np.eye(int(d.doc_ids.max()) + 1, dtype=np.float32)[d.doc_ids], d.qids, d.labels,
                      np.arange(d.n_rows).astype(str))
    save_ultra(LTRDataset("paper1", one, one, one), tmp_path / "ultra")
    rc, out, _ = _cli(["ig-fit", str(tmp_path / "ultra"), "--json"], capsys)
    rep = json.loads(out)
    assert rc == 0 and rep["n_components"] == 1 and rep["mcc"] > 0.99
    rows = [
        {
            "session_id": s,
            "query_id": 0,
            "doc_id": doc,
            "position": pos,
            "shown": True,
            "click": int((s + pos) % (pos + 1) == 0),
            "label": lab,
        }
        for s in range(200)
        for pos, (doc, lab) in enumerate([(7, 2), (8, 0), (9, 1)][s % 2 :] + [(7, 2), (8, 0)][: s % 2], 1)
    ]
    pd.DataFrame(rows).to_csv(tmp_path / "log.csv", index=False)
    rc, out, _ = _cli(["ig-fit", str(tmp_path / "log.csv"), "--json"], capsys)
    assert rc == 0 and json.loads(out)["n_components"] == 1
    rc, _, err = _cli(["ig-fit", str(tmp_path / "log.csv"), "--repair", "intervene"], capsys)
    assert rc == 2 and "needs the true observation curve" in err         # a real log: no clicks to collect
    pd.DataFrame(rows).drop(columns="label").to_csv(tmp_path / "nolabel.csv", index=False)
    rc, _, err = _cli(["ig-fit", str(tmp_path / "nolabel.csv")], capsys)
    assert rc == 2 and "'label' column" in err


def test_iteration_caps_per_method_follow_the_official_code(monkeypatch):
    import ultr_core.identifiability.embedding as emb
    assert emb.MAX_ITERS["regression_em"] == 100_000 and emb.MAX_ITERS["dla"] == emb.MAX_ITERS["two_tower"] == 20_000
    data = make_paper_identifiability_data(n_components=1, seed=0)
    table, r, o = binomial_ctr_table(data, seed=0)
    g = IdentifiabilityGraph.from_counts(table)
    import dataclasses
    monkeypatch.setitem(emb.COUNT_FIT, "regression_em", dataclasses.replace(emb.COUNT_FIT["regression_em"], max_iter=7))
    res = fit_counts(g.doc, g.fac, g.impressions, c=g.clicks, D=g.n_documents, G=g.n_factors, method="regression_em",
                     tol=0)
    assert res.iterations == 7 and not res.converged          # n_iter=None → the method's cap


def test_fig4b_merging_nearer_positions_recovers_more():
    """K = 2 (blocks {1–4}, {5–10}): merging 4 & 5 (planned) beats 3 & 5 beats 2 & 5, as the paper's
    Fig. 4b (its positions count from 0)."""
    data = make_paper_identifiability_data(n_components=2, seed=0)
    table, r, o = binomial_ctr_table(data, seed=0)
    m = {a: fit_repaired(table, r, o, data=data, repair="merge", merge_positions=[(a, 5)])["mcc"] for a in (2, 3, 4)}
    assert m[4] > m[3] + 0.05 > m[2] + 0.1
    with pytest.raises(ConfigError, match="merge_positions"):
        fit_repaired(table, r, o, data=data, repair="merge", merge_positions=[(4, 11)])


def test_explicit_factor_groups_are_a_merge():
    """``factor_groups`` (another implementation's merge map) fits one parameter per label: the planned
    merge's own groups give the planned result, one label for all factors gives No debias."""
    data = make_paper_identifiability_data(n_components=2, seed=0)
    table, r, o = binomial_ctr_table(data, seed=0)
    g = IdentifiabilityGraph.from_counts(table)
    planned = fit_repaired(table, r, o, data=data, repair="merge")
    same = fit_repaired(table, r, o, data=data, repair="merge", factor_groups=plan_merges(g).factor_groups() * 7 + 3)
    assert same["mcc"] == pytest.approx(planned["mcc"], abs=1e-12) and same["components_after"] == 1
    one = fit_repaired(table, r, o, data=data, repair="merge", factor_groups=np.full(g.n_factors, "x"))
    assert one["mcc"] == pytest.approx(fit_repaired(table, r, o, data=data, method="no_debias")["mcc"], abs=1e-12)
    assert one["observation_parameters"] == 1
    with pytest.raises(ConfigError, match="one label per factor"):
        fit_repaired(table, r, o, data=data, repair="merge", factor_groups=[0, 1])
    with pytest.raises(ConfigError, match="factor_groups"):
        fit_repaired(table, r, o, data=data, factor_groups=np.zeros(g.n_factors))


@pytest.mark.slow
def test_fig4a_random_cost_interventions_are_worse_than_min_cost():
    data = make_paper_identifiability_data(n_components=2, seed=0)
    table, r, o = binomial_ctr_table(data, seed=0)
    best = fit_repaired(table, r, o, data=data, repair="intervene")
    rand = fit_repaired(table, r, o, data=data, repair="intervene", random_intervention=True)
    assert best["components_after"] == rand["components_after"] == 1
    assert best["mcc"] > 0.99 and rand["mcc"] < best["mcc"] - 0.1


def test_repairs_sweep_reports_each_strategy_and_refuses_unknown_ones():
    from ultr_core.studies.identifiability_sweeps import repairs_sweep
    done = []
    df = repairs_sweep(seeds=(0,), strategies=("DLA (disconnected)", "merge 4 & 5 (planned)"), report=done.append)
    m = df.set_index("strategy")["mcc"]
    assert m["merge 4 & 5 (planned)"] > m["DLA (disconnected)"] + 0.2
    assert df["components_after"].tolist() == [2, 1] and done[-1] == {"done": 2, "total": 2}
    with pytest.raises(ConfigError, match="unknown strategy"):
        repairs_sweep(strategies=("merge 1 & 9",))
