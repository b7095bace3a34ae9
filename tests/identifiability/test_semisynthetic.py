"""The identifiability paper's semi-synthetic study (§5.2, Table 2): contextual PBM on real lists,
documents identified by features, node merging over the paper's bias features, the test regressor."""
import numpy as np
import pandas as pd
import pytest

from ultr_core.data.sources import load_dataset
from ultr_core.data.synthetic import make_synthetic_ltr
from ultr_core.errors import ConfigError
from ultr_core.identifiability import IdentifiabilityGraph
from ultr_core.identifiability.repairs import fit_repaired
from ultr_core.identifiability.semisynthetic import contextual_study_data, score_on_test
from ultr_core.simulation.clickmodel import EYE_TRACKING


@pytest.fixture(scope="module")
def small():
    return make_synthetic_ltr(n_queries=120, list_size=14, seed=3)


def test_clicks_follow_the_contextual_pbm_and_documents_are_feature_vectors(small):
    d = contextual_study_data(small, n_contexts=7, impressions=200_000, seed=1)
    f = d.table.frame
    assert set(f["position"]) == set(range(1, 11)) and f["context"].between(0, 6).all()
    assert (f["impressions"] == 200_000).all() and len(d.context_vectors) == 7
    # observation: a power of the eye-tracking value of the position, the same power for one context
    expo = np.log(d.true_observation) / np.log(EYE_TRACKING[f["position"].to_numpy() - 1])
    per_ctx = pd.Series(expo).groupby(f["context"].to_numpy()).agg(["min", "max"])
    assert np.allclose(per_ctx["min"], per_ctx["max"]) and (per_ctx["min"] >= 0).all()
    # r = 0.1 + 0.9·(2^y − 1)/(2^ymax − 1); CTRs within 5 binomial standard deviations of r·o
    y = d.lists.labels
    r = 0.1 + 0.9 * (2.0 ** y - 1) / (2.0 ** small.max_label - 1)
    assert np.allclose(d.true_relevance.loc[f["doc_id"]].to_numpy(), r)      # continuous features: one row a doc
    p = r * d.true_observation
    ctr = f["clicks"] / f["impressions"]
    assert (np.abs(ctr - p) <= 5 * np.sqrt(p * (1 - p) / 200_000) + 1e-12).all()
    # the displayed lists are the top 10 of each query (every query has 14 candidates)
    assert (np.bincount(pd.factorize(d.lists.qids)[0]) == 10).all()


def test_documents_by_a_feature_prefix_share_ids_and_mean_truth(small):
    data = small.map_features(lambda F: np.hstack([np.round(F[:, :2]), F[:, 2:]]))
    d = contextual_study_data(data, n_contexts=3, identity_features=2, seed=0)
    f = d.table.frame
    assert f["doc_id"].nunique() < 60 < len(f)         # rows pooled by their (rounded) first two features
    ys = pd.Series(0.1 + 0.9 * (2.0 ** d.lists.labels - 1) / (2.0 ** small.max_label - 1))
    assert np.allclose(d.true_relevance.to_numpy(), ys.groupby(f["doc_id"].to_numpy()).mean().to_numpy())
    assert d.doc_features.shape == (f["doc_id"].nunique(), small.n_features)


@pytest.mark.parametrize("kw, field", [(dict(n_contexts=0), "n_contexts"), (dict(n_contexts=2.5), "n_contexts"),
                                       (dict(identity_features=0), "identity_features"),
                                       (dict(list_size=11), "list_size")])
def test_bad_settings_name_the_field(small, kw, field):
    with pytest.raises(ConfigError) as e:
        contextual_study_data(small, **kw)
    assert e.value.field == field


def test_merging_uses_context_vectors_and_connects(small):
    d = contextual_study_data(small, n_contexts=50, seed=2)
    g = IdentifiabilityGraph.from_counts(d.table)
    assert g.n_components > 50                         # unique documents: shattered by 50 contexts
    out = fit_repaired(d.table, d.true_relevance, None, data=d.lists, method="dla_ls", repair="merge", init="ones",
                       context_vectors=d.context_vectors)
    assert out["components_after"] == 1 and out["observation_parameters"] < g.n_factors
    plain = fit_repaired(d.table, d.true_relevance, None, data=d.lists, method="dla_ls", init="ones")
    assert plain["observation_parameters"] == g.n_factors and plain["components_after"] == g.n_components


def test_dla_recovers_relevance_when_the_real_lists_connect_the_graph(data_dir):
    """MQ2008, positions only, documents = first 10 features: the IG is connected and DLA
    recovers relevance far better than ranking by CTR (seed 0: MCC 0.93 vs 0.55)."""
    ds = load_dataset(f"mq2008:{data_dir / 'mq2008'}")
    d = contextual_study_data(ds, n_contexts=1, identity_features=10, seed=0)
    assert IdentifiabilityGraph.from_counts(d.table).n_components == 1
    dla = fit_repaired(d.table, d.true_relevance, None, data=d.lists, method="dla_ls", init="ones")
    naive = fit_repaired(d.table, d.true_relevance, None, data=d.lists, method="no_debias")
    assert dla["mcc"] > 0.85 and naive["mcc"] < 0.7 and dla["ndcg@10"] > naive["ndcg@10"] + 0.1


def test_test_regressor_ranks_by_the_target(small):
    """A target that is the label ranks the test split far better than a shuffled one."""
    train, test = small.train, small.test
    docs = np.arange(train.n_rows)
    good = score_on_test(train.features, docs, train.labels.astype(float), observation=np.ones(train.n_rows), test=test)
    rng = np.random.default_rng(0)
    bad = score_on_test(train.features, docs, rng.permutation(train.labels).astype(float),
                        observation=np.ones(train.n_rows), test=test)
    assert set(good) == {"test_ndcg@5", "test_ndcg@10"}
    assert 0 <= bad["test_ndcg@10"] < good["test_ndcg@10"] - 0.1 <= 1
