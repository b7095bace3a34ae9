"""A repair evaluated on a log without true relevance: held-out click likelihood as logged vs after node merging."""
import numpy as np
import pandas as pd
import pytest

from ultr_core.errors import ConfigError
from ultr_core.identifiability.heldout import (
    HeldOutRepair,
    em_with_prior,
    heldout_repair,
    merge_verdict,
    paired_difference,
    session_split,
)
from ultr_core.identifiability.reports import analyse_identifiability
from ultr_core.logs.clicklog import ClickLog


def two_block_log(obs: np.ndarray, sessions: int = 4000, seed: int = 0, rel=None) -> ClickLog:
    """Documents 0–9 are shown only at positions 1–5 and documents 10–19 only at 6–10 (shuffled inside the block):
    a graph with two components, whose cheapest merge ties positions 5 and 6.  PBM clicks with examination ``obs``."""
    rng = np.random.default_rng(seed)
    rel = np.linspace(0.9, 0.1, 20) if rel is None else rel
    a = rng.permuted(np.tile(np.arange(10), (sessions, 1)), axis=1)[:, :5]
    b = 10 + rng.permuted(np.tile(np.arange(10), (sessions, 1)), axis=1)[:, :5]
    docs = np.hstack([a, b])
    clicks = rng.random(docs.shape) < rel[docs] * obs[None, :]
    return ClickLog(pd.DataFrame({"session_id": np.repeat(np.arange(sessions), 10), "query_id": 0,
                                  "doc_id": docs.ravel(), "position": np.tile(np.arange(1, 11), sessions),
                                  "shown": True, "click": clicks.ravel().astype(int)}))


def _evaluate(obs, seed, rel=None):
    log = two_block_log(np.asarray(obs), seed=seed, rel=rel)
    an = analyse_identifiability(log, ["position"], merge=True)
    assert an.graph.n_components == 2
    return log, an, heldout_repair(log, an)


SMOOTH = [1.0, 0.9, 0.8, 0.7, 0.6, 0.6, 0.5, 0.4, 0.3, 0.2]     # positions 5 and 6 share their examination
CLIFF = [1.0, 0.9, 0.8, 0.7, 0.6, 0.06, 0.05, 0.04, 0.03, 0.02]  # position 6 is examined ten times less


#: the two blocks interleave: document 0 (block A) 0.9, document 10 (block B) 0.85, document 1 0.8, …
INTERLEAVED = np.ravel(np.column_stack([np.linspace(0.9, 0.18, 10), np.linspace(0.86, 0.14, 10)]), order="F")


@pytest.mark.parametrize("seed", range(5))
def test_clicks_cannot_tell_a_right_merge_from_a_wrong_one(seed):
    """Identifiability Matters §1 (after Oosterhuis 2022): one tie joining two components leaves every predicted
    click unchanged, so the held-out likelihood is the same whether positions 5 and 6 share their examination
    (SMOOTH) or not (CLIFF) — while the order across the blocks is right in one case and wrong in the other."""
    orders = {}
    for name, obs in (("smooth", SMOOTH), ("cliff", CLIFF)):
        _, _, h = _evaluate(obs, seed, INTERLEAVED)
        mean, lo, hi = h.difference
        assert abs(mean) < 1e-3 and lo <= 1e-4 and hi >= -1e-4, h.difference
        assert h.testable_ties == 0
        assert merge_verdict(h).startswith("The clicks cannot test this merge")
        assert h.table["components"].tolist() == [2, 1]
        assert h.table["observation parameters"].tolist() == [10, 9]
        r = h.documents["relevance (after node merging)"].to_numpy()
        orders[name] = np.corrcoef(np.argsort(np.argsort(r)), np.argsort(np.argsort(INTERLEAVED)))[0, 1]
    assert orders["smooth"] > 0.9 > 0.6 > orders["cliff"], orders


def test_held_out_likelihood_matches_an_independent_computation():
    log, an, h = _evaluate(SMOOTH, 0)
    train, test = session_split(log, 0.75)
    rel = h.documents.set_index("doc_id")
    obs = h.observation.assign(position=np.arange(1, 11)).set_index("position")
    for label in ("as logged", "after node merging"):
        p = (rel[f"relevance ({label})"].reindex(test.frame["doc_id"]).to_numpy()
             * obs[f"observation ({label})"].reindex(test.frame["position"]).to_numpy())
        c = test.frame["click"].to_numpy()
        p = np.clip(p, 1e-6, 1 - 1e-6)
        expected = np.mean(np.where(c == 1, np.log(p), np.log(1 - p)))
        got = h.table.set_index("strategy").loc[label, "held-out log-likelihood"]
        assert got == pytest.approx(expected, abs=1e-12)
    assert h.scored_rows == len(test.frame) and h.unscored_rows == 0
    assert (h.train_sessions, h.test_sessions) == (3000, 1000)
    merged = h.observation["observation (after node merging)"]
    assert merged[4] == merged[5] and h.observation["observation (as logged)"][4] != merged[5]


def test_flips_measure_how_much_order_the_merge_decides():
    _, _, h = _evaluate(SMOOTH, 0, INTERLEAVED)
    assert 0.1 < h.flips[2.0] < 1 and 0.1 < h.flips[0.5] < 1
    _, _, far = _evaluate(SMOOTH, 0)                   # block A all above block B: ×2 changes fewer pairs
    assert far.flips[2.0] < h.flips[2.0]


def test_the_verdict_names_ties_the_clicks_contradict():
    base = dict(table=None, documents=None, observation=None, train_sessions=1, test_sessions=1, scored_rows=1,
                unscored_rows=0, flips={0.5: 0.1, 2.0: 0.25})
    bad = HeldOutRepair(difference=(-0.01, -0.02, -0.005), testable_ties=2, **base)
    assert merge_verdict(bad).startswith("The merge costs fit") and "2 ties" in merge_verdict(bad)
    ok = HeldOutRepair(difference=(0.0, -0.01, 0.01), testable_ties=1, **base)
    assert merge_verdict(ok).startswith("The clicks do not contradict the 1 tie ")
    assert "25% of the document pairs" in merge_verdict(ok)


def test_the_merge_puts_both_blocks_on_one_scale():
    """Truth: relevance falls from 0.9 (document 0) to 0.1 (document 19); after the merge the top block's documents
    all rank above the bottom block's, which the components' free scales as logged do not promise."""
    _, _, h = _evaluate(SMOOTH, 1)
    after = h.documents["relevance (after node merging)"].to_numpy()
    assert after[:10].min() > after[10:].max()
    assert set(h.documents["component"]) == {0, 1}


def test_unseen_documents_are_counted_not_scored():
    log = two_block_log(np.asarray(SMOOTH), sessions=400, seed=0)
    f = log.frame.copy()
    f.loc[f["session_id"] == 399, "doc_id"] += 100          # the last (held-out) session shows new documents
    log = ClickLog(f)
    h = heldout_repair(log, analyse_identifiability(log, ["position"], merge=True))
    assert h.unscored_rows == 10
    assert h.documents["relevance (as logged)"].isna().sum() == 10


def test_em_with_prior_reaches_maximum_likelihood_when_counts_are_large():
    d, g = np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1])
    r, o = np.array([0.8, 0.4]), np.array([1.0, 0.5])
    n = np.full(4, 1e7)
    f = em_with_prior(d, g, n, c=n * r[d] * o[g], n_docs=2, n_groups=2)
    assert f.relevance * f.observation[0] == pytest.approx(r * o[0], abs=1e-4)
    assert f.observation[1] / f.observation[0] == pytest.approx(0.5, abs=1e-4)


def test_paired_difference_against_hand_values():
    mean, lo, hi = paired_difference(np.array([3, 3, 7]), np.zeros(3), np.array([0.3, 0.3, 0.0]))
    assert mean == pytest.approx(0.2)
    # sessions: Δ = (0.6, 0.0), n = (2, 1); se = sqrt(2 · ((0.6 − 0.4)² + (0 − 0.2)²)) / 3
    assert hi - mean == pytest.approx(1.6449 * np.sqrt(2 * (0.04 + 0.04)) / 3)


def test_refusals_name_the_field():
    log = two_block_log(np.asarray(SMOOTH), sessions=10)
    with pytest.raises(ConfigError, match="split"):
        session_split(log, 1.0)
    an = analyse_identifiability(log, ["position"])
    with pytest.raises(ConfigError, match="merge plan"):
        heldout_repair(log, an)


def test_the_split_follows_the_files_order_not_the_ids():
    f = two_block_log(np.asarray(SMOOTH), sessions=4).frame
    f["session_id"] = f["session_id"].map({0: 9, 1: 2, 2: 5, 3: 1})
    train, test = session_split(ClickLog(f), 0.5)
    assert train.frame["session_id"].unique().tolist() == [9, 2]
    assert test.frame["session_id"].unique().tolist() == [5, 1]
