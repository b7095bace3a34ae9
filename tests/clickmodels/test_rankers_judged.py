"""Issue #47, item 2 for logs with features: ULTR rankers trained on a log's training sessions, read as click models
through a logistic link (ScoredPBM) and judged beside the click models by the data set's own labels."""
import json
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats
from scipy.optimize import check_grad
from scipy.special import expit

from ultr_core.clickmodels.evaluation import scores
from ultr_core.clickmodels.scored import ScoredPBM
from ultr_core.clickmodels.sessions import SessionTable


def _pbm_table(seed: int, n: int = 20_000, docs: int = 8, depth: int = 4):
    rng = np.random.default_rng(seed)
    score = rng.normal(size=docs)
    alpha, gamma = expit(1.5 * score - 0.5), np.array([0.95, 0.7, 0.45, 0.3])[:depth]
    pairs = np.argsort(rng.random((n, docs)), axis=1)[:, :depth]
    clicks = rng.random(pairs.shape) < alpha[pairs] * gamma
    return SessionTable(pairs, clicks, np.ones(n), docs, n), score, alpha, gamma


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_scored_pbm_recovers_the_link_and_the_examination_of_pbm_clicks(seed):
    t, score, alpha, gamma = _pbm_table(seed)
    m = ScoredPBM(score).fit(t)
    # P(click) per (document, rank) is identified (the split of a product between γ and α is not, exactly)
    assert np.abs(np.outer(m.attr, m.exam) - np.outer(alpha, gamma)).max() < 0.03
    assert np.allclose(m.exam / m.exam[0], gamma / gamma[0], atol=0.06)
    assert m.link[0] > 0 and np.array_equal(m.relevance(), score)          # the judges see the ranker's own order
    # a reversed score gets a negative slope and the same click fit; its relevance stays reversed
    r = ScoredPBM(-score).fit(t)
    assert r.link[0] < 0 and abs(scores(r, t)["log_likelihood"] - scores(m, t)["log_likelihood"]) < 1e-6


def test_scored_pbm_gradient_matches_finite_differences():
    t, score, _, _ = _pbm_table(3, n=500)
    m = ScoredPBM(score)
    captured = {}
    import ultr_core.clickmodels.scored as sc
    real = sc.minimize

    def spy(fun, x0, **kw):
        captured["fun"] = fun
        return real(fun, x0, **kw)
    sc.minimize = spy
    try:
        m.fit(t)
    finally:
        sc.minimize = real
    fun = captured["fun"]
    for x in (np.r_[0.7, -0.3, 0.1, -0.2, 0.4, 0.0], np.r_[-1.0, 0.5, 1.0, 1.0, -1.0, 0.3]):
        assert check_grad(lambda v: fun(v)[0], lambda v: fun(v)[1], x) < 1e-6


@pytest.fixture(scope="module")
def judged_rankers():
    from ultr_core.algorithms.config import TrainConfig
    from ultr_core.simulation.clickmodel import ClickModelConfig
    from ultr_core.simulation.simulated import simulate_log
    from ultr_core.studies.rankers import rankers_beside_click_models
    ds, _, log = simulate_log("synthetic", ClickModelConfig(topk=5), n_sessions=3000, seed=0)
    out = rankers_beside_click_models(ds, log, algorithms=("naive", "dla"), models=["dctr", "pbm"], seed=0,
                                      base=TrainConfig(steps=60), include_prior=True)
    return ds, log, out


def test_rankers_are_scored_beside_the_click_models_and_judged_on_the_same_pairs(judged_rankers):
    ds, log, out = judged_rankers
    assert set(out.models) == {"dctr", "pbm"} and set(out.rankers) == {"naive", "dla"}
    rel, j = out.relevance, out.judgements
    shown = log.frame[log.frame["shown"]]
    assert j.matched_pairs == len(shown.groupby(["query_id", "doc_id"])) == j.pairs_scored
    for key, m in out.rankers.items():
        assert -1 < m.log_likelihood < 0 and 1 < m.perplexity < 2 and m.seconds > 0
        assert m.judgements.pairs == j.pairs_scored
        # Spearman recomputed independently: the ranker's score of each pair's feature row against its label
        first = shown.groupby(["query_id", "doc_id"], sort=True)[["row", "label"]].first()
        from ultr_core.algorithms import TrainConfig, fit
        from ultr_core.studies.rankers import training_log
        res = fit(training_log(log, 0.75), ds, TrainConfig(steps=60, algorithm=key, seed=0))
        pred = res.predict(ds.train.features, ds.train.offsets)[first["row"].to_numpy()]
        rho = stats.spearmanr(pred, first["label"].to_numpy()).statistic
        assert m.judgements.spearman.estimate == pytest.approx(rho, abs=1e-9)
        assert np.allclose(rel[m.label].to_numpy(), pred)
    assert out.judgements.verdict.text


def test_the_rankers_never_see_a_test_session(judged_rankers):
    from ultr_core.studies.rankers import training_log
    _, log, out = judged_rankers
    train = training_log(log, 0.75)
    ids = np.unique(log.frame["session_id"])
    assert set(np.unique(train.frame["session_id"])) == set(ids[:int(len(ids) * 0.75)])
    assert out.train_sessions == int(len(ids) * 0.75)


def test_rankers_cli_prints_both_tables_and_refuses_unknown_names():
    run = lambda *a: subprocess.run([sys.executable, "-m", "ultr_core", "rankers", *a],  # noqa: E731
                                    capture_output=True, text=True, timeout=300)
    bad = run("--algorithms", "dla,bogus")
    assert bad.returncode == 2 and "unknown algorithm 'bogus'" in bad.stderr and "Traceback" not in bad.stderr
    ok = run("--sessions", "2000", "--topk", "5", "--algorithms", "naive", "--models", "pbm", "--set", "steps=30",
             "--json")
    assert ok.returncode == 0, ok.stderr
    out = json.loads(ok.stdout)
    # 8 queries scored here: fewer than the interval engine's MIN_UNITS, so the agreement has an estimate and no
    # interval (a bootstrap of 8 queries is ≥ 15 % too narrow), and says so
    spearman = out["rankers"]["naive"]["judgements"]["spearman"]
    assert spearman["estimate"] is not None and spearman["lower"] is None and not spearman["supported"]
    assert spearman["note"] == "only 8 queries (a bootstrap interval needs 10)"
    assert out["rankers"]["naive"]["bias"]["link"]["slope"] != 0
    # the text: on this log the logged order's Spearman has no value in any resample; its row says so instead of
    # failing on the missing interval (the command ended in "unexpected TypeError")
    text = run("--sessions", "2000", "--topk", "5", "--algorithms", "naive", "--models", "pbm", "--set", "steps=30")
    assert text.returncode == 0, text.stderr
    assert out["judgements"]["logged_order"]["spearman"]["estimate"] is None
    logged = [line for line in text.stdout.splitlines() if line.startswith("logged ")]
    assert len(logged) == 1 and logged[0].count("— (constant estimate)") == 3, text.stdout
