import numpy as np
import pandas as pd
import pytest

from ultr_core.data.synthetic import make_identifiability_data
from ultr_core.errors import ConfigError, DataFormatError
from ultr_core.logs.clicklog import ClickLog
from ultr_core.simulation.clickmodel import EYE_TRACKING, ClickModelConfig, position_observation, relevance_probability
from ultr_core.simulation.simulator import ClickSimulator


def test_relevance_probability_matches_spec():
    assert np.allclose(relevance_probability(range(5), 4, 0.1), [0.1, 0.16, 0.28, 0.52, 1.0])


def test_observation_conventions():
    assert np.allclose(position_observation(12, eta=1.0), list(EYE_TRACKING) + [0.06, 0.06])
    assert np.allclose(position_observation(3, eta=2.0), EYE_TRACKING[:3] ** 2)
    assert np.allclose(position_observation(4, eta=1.0, convention="reciprocal", topk=3), [1, 1 / 2, 1 / 3, 0])
    assert np.allclose(position_observation(3, eta=0.0), 1)


def test_ctr_by_position_matches_truth_within_binomial_error(synthetic):
    sim = ClickSimulator(ClickModelConfig(eta=1.0), seed=0).fit(synthetic)
    log = sim.simulate(synthetic.train, 200_000)
    ctr = log.ctr_by_position()
    # expected CTR at p = o_p · mean r of the documents the logging ranker puts at p
    rows, _ = sim.logged_order(synthetic.train)
    r = relevance_probability(synthetic.train.labels, 4, 0.1)[rows].mean(axis=0)
    expected = EYE_TRACKING * r
    z = (ctr["ctr"].to_numpy() - expected) / ctr["se"].to_numpy()
    assert np.all(np.abs(z) < 4.5), z
    assert np.allclose(ctr["expected_ctr"], expected, rtol=0.02)


def test_topk_shows_exactly_k_and_keeps_the_rest(synthetic):
    sim = ClickSimulator(ClickModelConfig(topk=3, convention="reciprocal", eta=1), seed=1).fit(synthetic)
    log = sim.simulate(synthetic.train, 5_000)
    df = log.frame
    assert (df.groupby("session_id")["shown"].sum() == 3).all()
    assert (df.groupby("session_id").size() == 10).all()       # unshown candidates stay
    hidden = df[~df["shown"]]
    assert (hidden["click"] == 0).all() and (hidden["true_observation"] == 0).all()
    assert hidden["position"].min() == 4


def test_one_seed_one_log(synthetic):
    cfg = ClickModelConfig(coupling=0.3, n_contexts=7, topk=5)
    a = ClickSimulator(cfg, seed=5).fit(synthetic).simulate(synthetic.train, 3000)
    b = ClickSimulator(cfg, seed=5).fit(synthetic).simulate(synthetic.train, 3000)
    c = ClickSimulator(cfg, seed=6).fit(synthetic).simulate(synthetic.train, 3000)
    pd.testing.assert_frame_equal(a.frame, b.frame)
    assert not a.frame["click"].equals(c.frame["click"])


def test_coupling_makes_observation_document_dependent(synthetic):
    log = ClickSimulator(ClickModelConfig(coupling=0.5), seed=0).fit(synthetic).simulate(synthetic.train, 2000)
    per_pos = log.frame.groupby("position")["true_observation"].nunique()
    assert (per_pos > 10).all()
    flat = ClickSimulator(ClickModelConfig(coupling=0.0), seed=0).fit(synthetic).simulate(synthetic.train, 2000)
    assert (flat.frame.groupby("position")["true_observation"].nunique() == 1).all()


def test_contexts_fixed_per_query_and_position(synthetic):
    log = ClickSimulator(ClickModelConfig(n_contexts=50), seed=0).fit(synthetic).simulate(synthetic.train, 5000)
    df = log.frame
    assert df["context"].between(0, 49).all()
    assert (df.groupby(["query_id", "position"])["context"].nunique() == 1).all()
    assert df.groupby(["context", "position"])["true_observation"].nunique().max() == 1


def test_given_order_on_fully_synthetic_data():
    from ultr_core.data.dataset import LTRDataset
    d = make_identifiability_data(n_components=1, n_docs=500, n_queries=100, seed=0)
    ds = LTRDataset("ig", d, d, d)
    log = ClickSimulator(ClickModelConfig(logging="given"), seed=0).fit(ds).simulate(d, 1000)
    first = log.frame.groupby("session_id").first()
    assert (first["row"].to_numpy() == d.offsets[:-1][first["query_id"].to_numpy()]).all()
    assert (log.frame["doc_id"].to_numpy() == d.doc_ids[log.frame["row"].to_numpy()]).all()


def test_shuffle_off_keeps_the_logged_order_and_the_random_stream(synthetic):
    a = ClickSimulator(ClickModelConfig(), seed=3).fit(synthetic).simulate(synthetic.train, 2000).frame
    b = ClickSimulator(ClickModelConfig(shuffle=0.0, shuffle_blocks=4), seed=3).fit(synthetic).simulate(
        synthetic.train, 2000).frame
    pd.testing.assert_frame_equal(a, b)
    # a fixed logging ranker shows every document at one position only
    assert (a.groupby("doc_id")["position"].nunique() == 1).all()


def test_shuffle_share_and_uniform_positions(synthetic):
    """share = 1, one block: every candidate equally likely at every position (within 4.5 SE);
    share = 0.3: about 30 % of the sessions differ from the logged order."""
    full = ClickSimulator(ClickModelConfig(shuffle=1.0), seed=0).fit(synthetic).simulate(synthetic.train, 20_000).frame
    freq = pd.crosstab(full["doc_id"], full["position"], normalize="index")
    n_per_doc = full.groupby("doc_id").size().to_numpy()[:, None]
    se = np.sqrt(0.1 * 0.9 / n_per_doc)
    assert (np.abs(freq.to_numpy() - 0.1) < 4.5 * se).mean() > 0.999
    fixed = ClickSimulator(ClickModelConfig(), seed=0).fit(synthetic).simulate(synthetic.train, 3000).frame
    logged = fixed.groupby(["query_id", "doc_id"], as_index=False)["position"].first()
    part = ClickSimulator(ClickModelConfig(shuffle=0.3),
                          seed=0).fit(synthetic).simulate(synthetic.train, 5000, seed=7).frame
    both = part.merge(logged, on=["query_id", "doc_id"], suffixes=("", "_logged"), validate="many_to_one")
    differs = (both["position"] != both["position_logged"]).groupby(both["session_id"]).any().mean()
    expected = 0.3 * (1 - 1 / np.prod(np.arange(1, 11)))
    assert abs(differs - expected) < 4.5 * np.sqrt(expected * (1 - expected) / 5000)


@pytest.mark.parametrize("blocks", [1, 2, 3])
def test_shuffle_blocks_give_that_many_ig_components(synthetic, blocks):
    from ultr_core.identifiability import IdentifiabilityGraph
    log = ClickSimulator(ClickModelConfig(shuffle=0.2, shuffle_blocks=blocks), seed=0).fit(synthetic).simulate(
        synthetic.train, 5000)
    g = IdentifiabilityGraph.from_log(log, ["position"])
    assert g.n_components == blocks
    # never across blocks: every document's positions lie in one array_split block
    block_of = {p: b for b, ps in enumerate(np.array_split(np.arange(1, 11), blocks)) for p in ps}
    assert (log.frame.assign(b=log.frame["position"].map(block_of)).groupby("doc_id")["b"].nunique() == 1).all()


@pytest.mark.parametrize("kw, field", [
    (dict(eta=-1), "eta"), (dict(noise=1.5), "noise"), (dict(topk=0), "topk"),
    (dict(convention="x"), "convention"), (dict(n_contexts=-2), "n_contexts"),
    (dict(coupling=float("nan")), "coupling"), (dict(shuffle=1.5),
                                                "shuffle"), (dict(shuffle_blocks=0), "shuffle_blocks"),
])
def test_config_validation(kw, field):
    with pytest.raises(ConfigError) as e:
        ClickModelConfig(**kw)
    assert e.value.field == field


def test_simulate_rejects_bad_sessions(synthetic):
    sim = ClickSimulator(seed=0).fit(synthetic)
    with pytest.raises(ConfigError, match="n_sessions"):
        sim.simulate(synthetic.train, 0)


def test_clicklog_roundtrip_parquet_and_csv(tmp_path, synthetic):
    log = ClickSimulator(ClickModelConfig(n_contexts=3), seed=0).fit(synthetic).simulate(synthetic.train, 500)
    log.to_parquet(tmp_path / "l.parquet")
    back = ClickLog.load(tmp_path / "l.parquet")
    pd.testing.assert_frame_equal(back.frame, log.frame)
    assert back.meta["click_model"]["n_contexts"] == 3
    log.to_csv(tmp_path / "l.csv")
    pd.testing.assert_frame_equal(ClickLog.load(tmp_path / "l.csv").frame, log.frame)


def test_clicklog_validation_messages(tmp_path):
    base = dict(session_id=[0, 0], query_id=[1, 1], doc_id=[3, 4], position=[1, 2],
                shown=[1, 1], click=[0, 1])
    ClickLog(pd.DataFrame(base))
    with pytest.raises(DataFormatError, match="missing column"):
        ClickLog(pd.DataFrame({k: v for k, v in base.items() if k != "click"}))
    with pytest.raises(DataFormatError, match="'position' is not numeric"):
        ClickLog(pd.DataFrame({**base, "position": ["a", 2]}))
    with pytest.raises(DataFormatError, match="1-based"):
        ClickLog(pd.DataFrame({**base, "position": [0, 1]}))
    with pytest.raises(DataFormatError, match="missing values"):
        ClickLog(pd.DataFrame({**base, "click": [np.nan, 1]}))
    with pytest.raises(DataFormatError, match="clicked but not shown"):
        ClickLog(pd.DataFrame({**base, "shown": [1, 0]}))
    (tmp_path / "x.parquet").write_bytes(b"not parquet")
    with pytest.raises(DataFormatError, match="x.parquet"):
        ClickLog.load(tmp_path / "x.parquet")


def test_true_observation_curve(synthetic):
    log = ClickSimulator(ClickModelConfig(topk=4), seed=0).fit(synthetic).simulate(synthetic.train, 500)
    assert np.allclose(log.true_observation_curve(), EYE_TRACKING[:4])


def test_binarised_relevance_clicks_as_cld_section_6():
    """relevance="binary": grades ≥ 3 of 0–4 are clicked with probability o_p, the others with ε·o_p;
    MAP then counts grades ≥ 3 as relevant."""
    from ultr_core.algorithms import TrainConfig, evaluate, fit
    from ultr_core.data.sources import load_dataset
    from ultr_core.simulation.simulated import simulate_log
    ds = load_dataset("synthetic:200:24")
    assert ds.train.offsets[1] - ds.train.offsets[0] == 24
    cfg = ClickModelConfig(topk=5, convention="reciprocal", eta=1.0, noise=0.1, relevance="binary")
    ds, _, log = simulate_log("synthetic:200:24", cfg, n_sessions=20_000, seed=0)
    f = log.frame
    shown = f[f["shown"]]
    rel = ds.train.labels[shown["row"].to_numpy()] >= 3
    o = (1.0 / shown["position"].to_numpy())
    for mask, r in ((rel, 1.0), (~rel, 0.1)):
        expected = (r * o[mask]).mean()
        got = shown["click"].to_numpy()[mask].mean()
        se = np.sqrt(expected * (1 - expected) / mask.sum())
        assert abs(got - expected) < 4 * se + 1e-3
    res = fit(log, ds, TrainConfig(algorithm="naive", steps=20, eval_every=10))
    m_bin, m_graded = evaluate(res, ds.test, binary=True), evaluate(res, ds.test)
    assert m_bin["ndcg@3"] == m_graded["ndcg@3"] and m_bin["map"] != m_graded["map"]
    with pytest.raises(ConfigError, match="relevance"):
        ClickModelConfig(relevance="ordinal")


@pytest.mark.parametrize("source,cut", [("synthetic:200:24", 2), ("mq2008", 1)])
def test_official_binarisation_thresholds(source, cut, request):
    """relevance="binary_official" (hyz20/CLD): grade ≥ 2 relevant on 0–4 grades (synthetic, Yahoo!),
    ≥ 1 on MQ2008's 0–2 — clicks at o_p on those, ε·o_p below; evaluation counts the same grades."""
    from ultr_core.simulation.clickmodel import binary_threshold
    from ultr_core.simulation.simulated import simulate_log
    spec = source if source != "mq2008" else f"mq2008:{request.getfixturevalue('data_dir') / 'mq2008'}"
    cfg = ClickModelConfig(topk=5, convention="reciprocal", eta=1.0, noise=0.1, relevance="binary_official")
    ds, _, log = simulate_log(spec, cfg, n_sessions=20_000, seed=0)
    assert binary_threshold(ds.max_label, "binary_official") == cut
    assert binary_threshold(ds.max_label, "binary") == (3 if ds.max_label == 4 else 2)     # the paper's text
    shown = log.frame[log.frame["shown"]]
    rel = ds.train.labels[shown["row"].to_numpy()] >= cut
    o = 1.0 / shown["position"].to_numpy()
    for mask, r in ((rel, 1.0), (~rel, 0.1)):
        expected = (r * o[mask]).mean()
        got = shown["click"].to_numpy()[mask].mean()
        assert abs(got - expected) < 4 * np.sqrt(expected * (1 - expected) / mask.sum()) + 1e-3
