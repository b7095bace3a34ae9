import itertools

import networkx as nx
import numpy as np
import pandas as pd
import pytest

from ultr_core.errors import ConfigError
from ultr_core.identifiability import (
    IdentifiabilityGraph,
    bias_feature_vectors,
    components_by_edge_enumeration,
    identifiability_probability,
    identifiability_probability_mc,
    plan_interventions,
    plan_merges,
)
from ultr_core.logs.clicklog import ClickLog


def make_log(pairs, **extra):
    """pairs: (doc, position) shown rows, one session each."""
    d, p = zip(*pairs)
    n = len(d)
    return ClickLog(pd.DataFrame({"session_id": range(n), "query_id": 0, "doc_id": d, "position": p,
                                  "shown": True, "click": 0, **extra}))


HAND = [(0, 1), (0, 2), (1, 2), (1, 3), (2, 5), (3, 5), (3, 6)]


def test_components_by_hand():
    g = IdentifiabilityGraph.from_log(make_log(HAND))
    assert g.n_factors == 5 and g.n_components == 2 and not g.identifiable
    assert g.sizes.tolist() == [3, 2]
    comp = dict(zip(g.factors["position"], g.component))
    assert comp[1] == comp[2] == comp[3] == 0 and comp[5] == comp[6] == 1
    assert g.edge_count() == 3
    assert sorted(map(tuple, g.edges().tolist())) == [(0, 1), (1, 2), (3, 4)]
    st = g.statistics()
    assert st["n_documents"] == 4 and st["largest_share"] == pytest.approx(0.6)
    assert g.components_table()["members"][1] == "position=5, 6"            # the column named once


def test_unshown_rows_do_not_connect():
    log = ClickLog(pd.DataFrame({"session_id": [0, 0], "query_id": 0, "doc_id": [7, 7],
                                 "position": [1, 2], "shown": [True, False], "click": 0}))
    assert IdentifiabilityGraph.from_log(log).n_components == 1   # position 2 never shown
    assert IdentifiabilityGraph.from_log(log).n_factors == 1


@pytest.mark.parametrize("seed", range(5))
def test_components_agree_with_networkx(seed):
    rng = np.random.default_rng(seed)
    n = 400
    ctx = rng.integers(0, 30, n)
    log = make_log(list(zip(rng.integers(0, 150, n), rng.integers(1, 11, n))), context=ctx)
    g = IdentifiabilityGraph.from_log(log)
    assert g.n_components == components_by_edge_enumeration(log)
    ref = nx.Graph()
    ref.add_nodes_from(range(g.n_factors))
    ref.add_edges_from(map(tuple, g.edges().tolist()))
    assert sorted(len(c) for c in nx.connected_components(ref))[::-1] == g.sizes.tolist()
    # edges by brute force over documents
    facs = log.frame.groupby("doc_id").apply(lambda x: set(zip(x.context, x.position)), include_groups=False)
    brute = {tuple(sorted(p)) for s in facs for p in itertools.combinations(s, 2)}
    assert g.edge_count() == len(brute)


def test_bad_bias_column_and_empty():
    with pytest.raises(ConfigError, match="not in the log"):
        IdentifiabilityGraph.from_log(make_log(HAND), bias=["vertical"])
    log = ClickLog(pd.DataFrame({"session_id": [0], "query_id": 0, "doc_id": [1], "position": [1],
                                 "shown": [False], "click": 0}))
    with pytest.raises(ConfigError, match="no shown rows"):
        IdentifiabilityGraph.from_log(log)


def test_merging_by_hand():
    g = IdentifiabilityGraph.from_log(make_log([(0, 1), (0, 2), (1, 4), (2, 7), (2, 8)]))
    plan = plan_merges(g)
    got = sorted((a, b, c) for a, b, c in zip(plan.pairs.label_a, plan.pairs.label_b, plan.pairs.cost))
    assert [(c) for *_, c in got] == [2.0, 3.0]
    assert {frozenset((a, b)) for a, b, _ in got} == {frozenset(("position=2", "position=4")),
                                                     frozenset(("position=4", "position=7"))}
    assert plan.merged_graph().n_components == 1
    groups = plan.factor_groups()
    pos = g.factors["position"].tolist()
    assert groups[pos.index(2)] == groups[pos.index(4)] == groups[pos.index(7)]
    assert len(set(groups)) == 3          # {1}, {2, 4, 7}, {8}: only merged factors share a parameter


def _brute_force_mst_cost(g, X):
    K = g.n_components
    W = np.full((K, K), np.inf)
    for a in range(g.n_factors):
        for b in range(g.n_factors):
            ca, cb = g.component[a], g.component[b]
            if ca != cb:
                W[ca, cb] = min(W[ca, cb], np.linalg.norm(X[a] - X[b]))
    G = nx.Graph()
    for a in range(K):
        for b in range(a + 1, K):
            G.add_edge(a, b, weight=W[a, b])
    return sum(d["weight"] for *_, d in nx.minimum_spanning_edges(G, data=True))


@pytest.mark.parametrize("seed", range(4))
def test_merging_matches_brute_force_mst(seed):
    rng = np.random.default_rng(seed)
    n = 120
    log = make_log(list(zip(rng.integers(0, 200, n), rng.integers(1, 6, n))), context=rng.integers(0, 12, n))
    g = IdentifiabilityGraph.from_log(log)
    cv = rng.normal(0, 0.35, (12, 10))
    X = bias_feature_vectors(g, cv)
    assert X.shape == (g.n_factors, 11)
    assert np.allclose(X[:, -1], 10 * g.factors["position"])
    plan = plan_merges(g, vectors=X, k=4)     # small k forces the exact Borůvka fallback too
    assert len(plan.pairs) == g.n_components - 1
    assert plan.merged_graph().n_components == 1
    assert plan.total_cost == pytest.approx(_brute_force_mst_cost(g, X))


def test_intervention_by_hand_and_brute_force():
    g = IdentifiabilityGraph.from_log(make_log(HAND))
    rel = np.array([0.9, 0.2, 0.5, 0.7])
    obs = np.array([0.7, 0.5, 0.4, 0.3, 0.2])     # positions 1, 2, 3, 5, 6
    plan = plan_interventions(g, rel, obs)
    assert len(plan.swaps) == 1 and plan.intervened_graph().n_components == 1

    def cost(p):
        return (1 - p) / p
    best = min((cost(rel[x] * obs[t]) + cost(rel[x] * obs[t2]), x, t, t2)
               for x, t in zip(g.doc, g.fac) for t2 in range(5) if g.component[t2] != g.component[t])
    s = plan.swaps.iloc[0]
    assert s["cost"] == pytest.approx(best[0])
    assert (s["document"], s["from_factor"], s["to_factor"]) == best[1:]
    # document 0 (r = 0.9) at position 1 (o = 0.7) moved to position 5 (o = 0.3)
    assert (s["from_label"], s["to_label"]) == ("position=1", "position=5")


def test_intervention_k_minus_one_swaps_and_random_ablation():
    rng = np.random.default_rng(3)
    n = 300
    log = make_log(list(zip(rng.integers(0, 2000, n), rng.integers(1, 31, n))))
    g = IdentifiabilityGraph.from_log(log)
    assert g.n_components > 3
    r, o = rng.uniform(0.1, 1, g.n_documents), rng.uniform(0.1, 1, g.n_factors)
    for random_cost in (False, True):
        plan = plan_interventions(g, r, o, random_cost=random_cost, seed=1)
        assert len(plan.swaps) == g.n_components - 1
        assert plan.intervened_graph().n_components == 1


def test_probability_formula_and_monte_carlo():
    # SPEC §5 worked numbers: N=2500 → formula 0.80, simulation ≈ 0.67; N=3000 → 0.99 vs ≈ 0.97.  SPEC writes the
    # formula twice, chained by ≈: with the factor (|T|−1)/|T| (Gilbert's bound as derived, the default) and without
    # it; by hand: 1 − 100·exp(−2500²·99/(10⁴·100²)) = 0.79450, 1 − 100·exp(−2500²/(10⁴·100)) = 0.80695
    assert identifiability_probability(2500, 10_000, 100) == pytest.approx(0.79450, abs=1e-5)
    assert identifiability_probability(2500, 10_000, 100, form="simplified") == pytest.approx(0.80695, abs=1e-5)
    assert identifiability_probability(3000, 10_000, 100) == pytest.approx(0.98650, abs=1e-5)
    assert identifiability_probability(3000, 10_000, 100, form="simplified") == pytest.approx(0.98766, abs=1e-5)
    mc = identifiability_probability_mc(2500, 10_000, 100, n_trials=600, seed=0)
    assert abs(mc - 0.67) < 0.06
    mc = identifiability_probability_mc(3000, 10_000, 100, n_trials=600, seed=0)
    assert abs(mc - 0.96) < 0.04
    assert identifiability_probability(10, 10_000, 100) == 0.0
    # falls as factors grow (Example 2)
    p = identifiability_probability(3000, 10_000, np.array([10, 100, 1000]))
    assert p[0] > p[1] > p[2]


def test_display_graph_rules():
    g = IdentifiabilityGraph.from_log(make_log(HAND))
    small = g.display_graph()
    assert small.number_of_nodes() == 5 and small.number_of_edges() == 3
    rng = np.random.default_rng(0)
    big = IdentifiabilityGraph.from_log(make_log(list(zip(rng.integers(0, 50_000, 3000),
                                                          rng.integers(1, 400, 3000)))))
    assert big.n_components > 60
    view = big.display_graph(max_nodes=50)
    assert view.graph["contracted"] and view.number_of_nodes() == 50
    assert "other" in view.nodes


@pytest.mark.parametrize("seed", range(4))
def test_onehot_merging_matches_brute_force_mst(seed):
    rng = np.random.default_rng(seed)
    n = 150
    log = make_log(list(zip(rng.integers(0, 220, n), rng.integers(1, 7, n))), context=rng.integers(0, 9, n))
    g = IdentifiabilityGraph.from_log(log)
    X = bias_feature_vectors(g)                    # explicit one-hot + 10·p
    assert X.shape[1] == g.factors["context"].nunique() + 1
    plan = plan_merges(g)                          # structured one-hot candidates, no vectors
    assert plan.merged_graph().n_components == 1
    assert plan.total_cost == pytest.approx(_brute_force_mst_cost(g, X))


def test_intervention_apply_connects_and_collects_clicks():
    from ultr_core.data.sources import load_dataset
    from ultr_core.simulation.clickmodel import ClickModelConfig
    from ultr_core.simulation.simulator import ClickSimulator
    ds = load_dataset("ig:2", seed=0)
    log = ClickSimulator(ClickModelConfig(logging="given"), seed=0).fit(ds).simulate(ds.train, 5000)
    g = IdentifiabilityGraph.from_log(log)
    assert g.n_components == 2
    plan = plan_interventions(g, np.full(g.n_documents, 0.5), np.linspace(0.9, 0.1, g.n_factors))
    new = plan.apply(log, impressions=4000, seed=1)
    assert len(new) == len(log) + 4000
    assert IdentifiabilityGraph.from_log(new).n_components == 1
    added = new.frame.iloc[len(log):]
    p = added["true_relevance"].iloc[0] * added["true_observation"].iloc[0]
    assert abs(added["click"].mean() - p) < 4 * np.sqrt(p * (1 - p) / 4000)


def test_probability_table_falls_with_contexts():
    from ultr_core.identifiability import probability_table
    t = probability_table(3000, 10_000, [1, 10, 20], n_positions=10, n_trials=100, seed=0)
    assert t["n_factors"].tolist() == [10, 100, 200]
    assert t["formula"].is_monotonic_decreasing and t["monte_carlo"].is_monotonic_decreasing
    assert t["monte_carlo"].iloc[0] == 1.0 and t["monte_carlo"].iloc[-1] < 0.5


def test_interactive_graph_html_is_offline_and_carries_no_markup():
    import re

    from ultr_core.app.graph_figures import identifiability_graph_html
    from ultr_core.logs.ingestion import CountTable
    frame = pd.DataFrame({"doc": [0, 0, 1, 2], "position": [1, 2, 3, 4],
                          "v": ["<b>x</b>", "</script><script>alert(1)</script>", "a", '<img src=x onerror="y">'],
                          "impressions": 1, "clicks": 0})
    g = IdentifiabilityGraph.from_counts(CountTable(frame, ("doc",), ("position", "v")))
    html = identifiability_graph_html(g.display_graph(), merges=plan_merges(g).pairs)
    assert "vis.DataSet" in html and "vis-network" in html                      # vis-network inlined
    assert not re.findall(r'(?:src|href)="https?://', html)                      # nothing fetched
    for raw in ("<b>x</b>", "</script><script>alert(1)", "<img src=x"):
        assert raw not in html                                                  # only as \u003c… JSON
    assert "\\u003cb\\u003ex" in html
    assert html.count('"dashes"') >= 3                                          # the proposed merges
    # the wheel belongs to the page: vis-network's zoom is off, ctrl + wheel zooms, and the frame
    # itself cannot scroll (a scrollable frame would latch the wheel; the browser test checks both)
    assert '"zoomView": false' in html and "e.ctrlKey || e.metaKey" in html
    assert "html, body {margin: 0; overflow: hidden;} center {display: none;}" in html.split("</head>")[0]
    assert '"randomSeed": 0' in html                                           # the same drawing on every rerun
    assert '"background": "#ffffff"' in html                                  # a proposal's cost on a white label
