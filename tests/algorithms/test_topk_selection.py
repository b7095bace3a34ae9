import numpy as np
import pytest
import torch

from ultr_core.algorithms import TrainConfig, evaluate, fit
from ultr_core.algorithms.batches import PairBatch, SelectionBatch
from ultr_core.algorithms.cld_pair import CLDPair, official_pair_loss, query_pairs, session_pairs
from ultr_core.algorithms.data import session_data
from ultr_core.algorithms.topk_selection import CLD, borda, candidate_table
from ultr_core.errors import ConfigError
from ultr_core.simulation.clickmodel import ClickModelConfig, position_observation
from ultr_core.simulation.simulated import simulate_log

TOP5 = ClickModelConfig(topk=5, convention="reciprocal", eta=1.0)


@pytest.fixture(scope="module")
def top5():
    return simulate_log("synthetic", TOP5, n_sessions=20_000, seed=0)


def test_candidate_table_by_construction(top5):
    ds, sim, log = top5
    d = session_data(log)
    rho = position_observation(10, eta=1.0, convention="reciprocal")
    tab = candidate_table(d, rho)
    assert len(tab.rows) == ds.train.n_rows                      # every candidate once
    assert tab.selected.sum() == 5 * ds.train.n_queries          # top-5 of each query
    assert (tab.position[tab.selected] <= 5).all() and (tab.position[~tab.selected] > 5).all()
    # ĉ/ρ is unbiased for r: its mean per true label is close to r(y)
    from ultr_core.simulation.clickmodel import relevance_probability
    r = relevance_probability(ds.train.labels[tab.rows], 4, 0.1)
    sel = tab.selected
    assert abs(tab.target[sel].mean() - r[sel].mean()) < 0.02
    assert np.corrcoef(tab.target[sel], r[sel])[0, 1] > 0.5


def test_cld_loss_by_hand():
    cfg = TrainConfig(algorithm="cld", model="linear", cld_gamma=0.2, cld_form="paper_text")
    m = CLD(cfg, 1)
    with torch.no_grad():
        m.beta.weight.fill_(0.5)
        m.beta.bias.fill_(0.0)
        m.omega.weight.fill_(1.0)
        m.omega.bias.fill_(0.0)
    X = torch.tensor([[1.0], [2.0]])
    b = SelectionBatch(X=X, selected=torch.tensor([True, False]), target=torch.tensor([0.8, 0.0]))
    from scipy.stats import norm
    resid = 0.8 - 0.5
    sel = -resid ** 2 + norm.logcdf((1.0 + 0.2 * resid) / np.sqrt(1 - 0.04))
    unsel = np.log(1 - norm.cdf(2.0))
    loss, _ = m.loss(b)
    assert float(loss.detach()) == pytest.approx(-(sel + unsel) / 2, rel=1e-5)


def test_cld_log_phi_is_stable_in_the_tails():
    cfg = TrainConfig(algorithm="cld", model="linear")
    m = CLD(cfg, 1)
    with torch.no_grad():
        m.omega.weight.fill_(100.0)
    X = torch.tensor([[50.0], [-50.0]])
    loss, _ = m.loss(SelectionBatch(X=X, selected=torch.tensor([False, True]), target=torch.tensor([0.0, 0.5])))
    assert torch.isfinite(loss)


def test_cld_pair_loss_terms_by_hand():
    m = CLDPair(TrainConfig(algorithm="cld_pair", model="linear", pair_orientation="random"), 1)
    with torch.no_grad():
        m.beta.weight.fill_(1.0)
        m.beta.bias.fill_(0.0)
        m.omega.weight.fill_(0.5)
        m.omega.bias.fill_(0.0)

    def ls(z):
        return -np.log1p(np.exp(-z))
    Xi, Xj = torch.tensor([[2.0], [2.0], [2.0]]), torch.tensor([[1.0], [1.0], [1.0]])
    si, sj = torch.tensor([True, True, False]), torch.tensor([True, False, False])
    loss, _ = m.loss(PairBatch(Xi=Xi, Xj=Xj, si=si, sj=sj, delta=None))
    d, wi, wj = 1.0, 1.0, 0.5
    both = ls(d) + ls(wi + d) + ls(wj + d)
    one = ls(wi + d) + ls(1 - wj)
    none = ls(1 - wi) + ls(1 - wj)
    assert float(loss.detach()) == pytest.approx(-(both + one + none) / 3, rel=1e-5)


@pytest.mark.parametrize("orientation", ["random", "selected_first"])
def test_pairs_are_oriented(top5, orientation):
    _, _, log = top5
    tab = candidate_table(session_data(log), position_observation(10, eta=1.0, convention="reciprocal"))
    i, j = query_pairs(tab, np.random.default_rng(0), orientation=orientation)
    both = tab.selected[i] & tab.selected[j]
    assert (tab.target[i][both] > tab.target[j][both]).all()        # selected pairs: larger ĉ/ρ first
    mixed = tab.selected[i] != tab.selected[j]
    share_first = tab.selected[i][mixed].mean()
    if orientation == "selected_first":
        assert share_first == 1.0
    else:                                                           # a fair coin over ~10⁵ mixed pairs
        assert abs(share_first - 0.5) < 0.01
    assert (tab.query[i] == tab.query[j]).all()


def test_heckman_two_stages_match_an_independent_probit(top5):
    """Both stages against scipy's BFGS on a probit log-likelihood written here in numpy, and the
    ranking score = the outcome part xᵀβ (Mills term dropped), as Ovaisi et al.'s code ranks."""
    from scipy.optimize import minimize
    from scipy.stats import norm

    from ultr_core.algorithms.topk_selection import Heckman
    ds, _, log = top5
    tab = candidate_table(session_data(log), position_observation(10, eta=1.0, convention="reciprocal"))
    X = ds.train.features[tab.rows].astype(np.float64)[:, :6]          # a few features keep BFGS exact
    A = np.c_[X, np.ones(len(X))]

    def fit(A, y, u, ridge=1e-4):
        def f(w):
            z = A @ w
            return -(u * (y * norm.logcdf(z) + (1 - y) * norm.logcdf(-z))).sum() / u.sum() + ridge * w @ w
        return minimize(f, np.zeros(A.shape[1]), method="BFGS", options={"gtol": 1e-9}).x

    omega = fit(A, tab.selected.astype(float), np.ones(len(A)))
    z = A @ omega
    mills = norm.pdf(z) / norm.cdf(z)
    theta = fit(np.c_[A, mills], tab.ctr, tab.n_sessions.astype(float))
    h = Heckman(ds.train.features[:, :6], tab)
    assert np.allclose(h.omega, omega, atol=2e-4) and np.allclose(h.theta, theta, atol=2e-4)
    x = ds.test.features[:, :6]
    assert np.allclose(h.scores(x), x @ theta[:6], atol=1e-3)
    old = Heckman(ds.train.features[:, :6], tab, "ls_mills")              # the earlier variant keeps λ
    assert not np.allclose(old.scores(x), x @ old.theta[:6])


def test_no_import_cycle_between_selection_and_training():
    import ast
    from pathlib import Path
    src = Path(__file__).resolve().parents[2] / "ultr_core" / "algorithms" / "topk_selection.py"
    mods = {n.module for n in ast.walk(ast.parse(src.read_text())) if isinstance(n, ast.ImportFrom)}
    assert mods and not mods & {"ultr_core.algorithms.training", "training", ".training"}   # lazy imports included


def test_paper_optimiser_options_dropout_l2_xavier(top5):
    ds, _, log = top5
    cfg = TrainConfig(algorithm="naive", steps=30, eval_every=10, hidden=(16, 8), dropout=0.5, weight_decay=1e-3,
                      init="xavier", lr=1e-3)
    a, b = fit(log, ds, cfg), fit(log, ds, cfg)
    pa = a.predict(ds.test.features)
    assert np.array_equal(pa, b.predict(ds.test.features))        # dropout off when scoring: deterministic
    assert not a.model.training
    assert any(isinstance(m, torch.nn.Dropout) for m in a.model.modules())
    first = [m for m in a.model.modules() if isinstance(m, torch.nn.Linear)][0]
    assert first.weight.abs().max() <= np.sqrt(6 / (first.in_features + first.out_features)) + 0.05
    with pytest.raises(ConfigError, match="init"):
        TrainConfig(init="he")
    with pytest.raises(ConfigError, match="dropout"):
        TrainConfig(dropout=1.0)


def test_borda_by_hand():
    s = np.array([[3.0, 1.0], [2.0, 3.0], [1.0, 2.0], [5.0, 5.0], [4.0, 4.0]])
    # query 1 (rows 0–2): ranker A ranks 0,1,2 → points 3,2,1; ranker B ranks 1,2,0 → 3,2,1
    out = borda(s, np.array([0, 3, 5]))
    assert out.tolist() == [3 + 1, 2 + 3, 1 + 2, 2 + 2, 1 + 1]


@pytest.mark.parametrize("alg", ["cld", "cld_pair", "heckman", "rankagg"])
def test_selection_methods_train_and_are_deterministic(top5, alg):
    ds, _, log = top5
    cfg = TrainConfig(algorithm=alg, steps=60, eval_every=20, model="linear")
    a, b = fit(log, ds, cfg), fit(log, ds, cfg)
    assert np.array_equal(a.predict(ds.test.features, ds.test.offsets), b.predict(ds.test.features, ds.test.offsets))
    assert evaluate(a, ds.test)["ndcg@10"] > 0.8
    assert a.history and "valid_ndcg@10" in a.history[-1]


def test_selection_methods_need_a_cutoff():
    ds, _, log = simulate_log("synthetic", ClickModelConfig(), n_sessions=2000, seed=0)
    with pytest.raises(ConfigError, match="cut-off"):
        fit(log, ds, TrainConfig(algorithm="cld"))


@pytest.mark.slow
def test_cld_beats_naive_and_heckman_under_top5():
    """Seeded small version of CLD Table 2 (synthetic, top-5, η = 1, 10 % noise, 3 seeds), CLD in its
    default (official) form.  Measured: CLD 0.842, Naive 0.793, Heckman 0.793 (nDCG@1, mean of 3)."""
    from ultr_core.studies.experiment import ExperimentSpec, run_grid
    base = ExperimentSpec(click=TOP5, n_sessions=20_000)
    df = run_grid(base, {"train.algorithm": ["naive", "heckman", "cld"], "train.model": ["linear"]},
                  seeds=[0, 1, 2], n_jobs=2)
    m = df.groupby("algorithm")["ndcg@1"].mean()
    assert m["CLD"] > m["Naive"] + 0.03 and m["CLD"] > m["Heckman"] + 0.03


def test_official_cld_loss_by_hand_both_links():
    """cld_loss against a hand computation: the official logistic link (hyz20/CLD TobitLoss) and the
    paper's probit, on the same rows."""
    import math

    from scipy.stats import norm

    from ultr_core.algorithms.topk_selection import cld_loss
    xb, xw = torch.tensor([0.5, 0.1, -0.3]), torch.tensor([0.2, -1.0, 0.7])
    s, t = torch.tensor([True, True, False]), torch.tensor([2.0, 0.0, 0.0])
    g = 0.5
    r = [2.0 - 0.5, 0.0 - 0.1]
    z = [(0.2 + g * r[0]) / math.sqrt(1 - g * g), (-1.0 + g * r[1]) / math.sqrt(1 - g * g)]
    sig = lambda v: 1 / (1 + math.exp(-v))                                   # noqa: E731
    official = (r[0] ** 2 - math.log(sig(z[0])) + r[1] ** 2 - math.log(sig(z[1])) - math.log(1 - sig(0.7))) / 3
    probit = (r[0] ** 2 - norm.logcdf(z[0]) + r[1] ** 2 - norm.logcdf(z[1]) - norm.logcdf(-0.7)) / 3
    assert float(cld_loss(xb, xw, s, target=t, gamma=g, form="official")) == pytest.approx(official, rel=1e-6)
    assert float(cld_loss(xb, xw, s, target=t, gamma=g, form="paper_text")) == pytest.approx(probit, rel=1e-6)


def test_session_rows_are_one_per_session_and_candidate(top5):
    from ultr_core.algorithms.topk_selection import session_rows
    ds, _, log = top5
    d = session_data(log)
    rho = position_observation(10, eta=1.0, convention="reciprocal")
    rows, sel, target = session_rows(d, rho)
    assert len(rows) == int(d.candidate.sum())                  # every logged candidate of every session
    assert sel.sum() == int(d.shown.sum()) and (target[~sel] == 0).all()
    pos = np.nonzero(d.candidate)[1]
    clicked = d.clicks[d.candidate].astype(bool)
    np.testing.assert_allclose(target[clicked], 1 / rho[pos[clicked]], rtol=1e-6)   # w·c: 1/ρ_p when clicked
    assert set(np.unique(target[sel & ~clicked])) == {0.0}


@pytest.mark.slow
def test_official_cld_selection_term_moves_beta_but_not_the_ranking():
    """Issue #21's question on a toy top-5 log (synthetic, reciprocal η = 1, 20,000 sessions, linear
    β, 300 steps, 5 seeds): with the official per-(session, candidate) rows and logistic link, ρ = 0.5
    against ρ = 0 (same seed: same batches and initialisation, so only the coupling differs).
    Measured: 1 − cos(β₀, β₀.₅) = 0.007–0.023 per seed; nDCG@1 differences +0.001, −0.012, +0.010,
    +0.034, −0.033 (mean 0.000). The coupling changes β, but not how well it ranks."""
    cos, diff = [], []
    for seed in range(5):
        ds, _, log = simulate_log("synthetic", TOP5, n_sessions=20_000, seed=seed, data_seed=seed)
        fits = [fit(log, ds, TrainConfig(algorithm="cld", model="linear", cld_form="official", cld_gamma=g,
                                         steps=300, seed=seed, keep_best=False)) for g in (0.0, 0.5)]
        w = [f.model.beta.weight.detach().numpy().ravel() for f in fits]
        cos.append(float(w[0] @ w[1] / np.linalg.norm(w[0]) / np.linalg.norm(w[1])))
        diff.append(evaluate(fits[1], ds.test)["ndcg@1"] - evaluate(fits[0], ds.test)["ndcg@1"])
    assert min(1 - c for c in cos) > 0.004, cos               # the selection term reaches β in every seed
    assert abs(np.mean(diff)) < 0.02, diff                    # … without changing the ranking quality


def _toy_sessions():
    """Two queries, top-2 shown, ρ = (1, 0.5): query A (rows 0–3) in three sessions — a click at
    position 1; a click at position 2; no click — and query B (rows 4–6) in one session with a
    click at position 2."""
    from ultr_core.algorithms.data import SessionData
    rows = np.array([[0, 1, 2, 3], [0, 1, 2, 3], [0, 1, 2, 3], [4, 5, 6, -1]])
    cand = rows >= 0
    shown = cand & (np.arange(4) < 2)[None, :]
    clicks = np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 0, 0], [0, 1, 0, 0]], np.float32)
    return SessionData(rows, clicks, shown, cand, None, 2), np.array([1.0, 0.5, 1 / 3, 0.25])


def test_official_pairs_on_a_toy_log_by_hand():
    """Issue #21: per-session Δ-weighted pairs, Δ = 0 mixed pairs in both orders, drawn 1:1."""
    data, rho = _toy_sessions()
    tab = candidate_table(data, rho)
    ri, rj, si, sj, d = session_pairs(data, tab, rho, rng=np.random.default_rng(0), ratio=1.0)
    pos = d > 0
    # Δ > 0: session 1 (row 0 clicked, v = 1) → (0, 1) Δ 1; session 2 (row 1, v = 1/0.5 = 2) → (1, 0) Δ 2;
    # session 3 (no click) nothing; query B (row 5 clicked, v = 2) → (5, 4) Δ 2
    assert sorted(zip(ri[pos].tolist(), rj[pos].tolist(), d[pos].tolist())) == [(0, 1, 1.0), (1, 0, 2.0), (5, 4, 2.0)]
    assert si[pos].all() and sj[pos].all()
    # Δ = 0: as many as Δ > 0 pairs (ratio 1), each with exactly one selected member, within one query
    assert (~pos).sum() == 3 and (si[~pos] != sj[~pos]).all()
    assert all((a < 4) == (b < 4) for a, b in zip(ri[~pos], rj[~pos]))
    # the whole Δ = 0 pool (ratio large): query A {0,1}×{2,3} and B {4,5}×{6}, in both orders, once each
    ri, rj, si, sj, d = session_pairs(data, tab, rho, rng=np.random.default_rng(0), ratio=10.0)
    zero = sorted(zip(ri[d == 0].tolist(), rj[d == 0].tolist()))
    expect = [(a, b) for a in (0, 1) for b in (2, 3)] + [(a, 6) for a in (4, 5)]
    assert zero == sorted(expect + [(b, a) for a, b in expect])


def test_official_pair_loss_against_its_terms():
    """BPRLoss_sel3 (C = 1) written term by term in numpy on three pairs."""
    fi, fj = np.array([0.3, -0.2, 1.0]), np.array([0.1, 0.4, 0.0])
    wi, wj = np.array([0.5, -1.0, 0.2]), np.array([0.0, 0.7, -0.3])
    si, sj = np.array([True, True, False]), np.array([True, False, True])
    delta = np.array([1.5, 0.0, 0.0])
    sp = lambda z: np.log1p(np.exp(z))                                      # noqa: E731
    d = fi - fj
    bpr = np.mean(si * sj * delta * sp(-d))
    pos = np.mean(np.where(si, sp(-(wi + d)), sp(wi)))
    neg = np.mean(np.where(sj, sp(-(wj + d)), sp(wj)))
    t = lambda a: torch.tensor(a)                                           # noqa: E731
    got = official_pair_loss(t(fi), t(fj), t(wi), wj=t(wj), si=t(si), sj=t(sj), delta=t(delta))
    assert float(got) == pytest.approx(bpr + pos + neg, rel=1e-9)


def test_official_cld_pair_model_has_no_selection_bias_term(top5):
    ds, _, log = top5
    res = fit(log, ds, TrainConfig(algorithm="cld_pair", steps=40, eval_every=20, hidden=(16, 8)))
    assert res.model.omega.bias is None                                     # f_ω linear without bias
    old = CLDPair(TrainConfig(algorithm="cld_pair", pair_orientation="random"), 3)
    assert old.omega.bias is not None


def test_official_heckman_matches_logistic_regression_on_impression_rows():
    """heckman="official" aggregates impressions into weights; expanding the log into one row per
    (session, candidate) and fitting scikit-learn unweighted gives the same coefficients."""
    from sklearn.linear_model import LogisticRegression

    from ultr_core.algorithms.topk_selection import Heckman
    ds, _, log = simulate_log("synthetic:40:8", TOP5, n_sessions=400, seed=1)
    d = session_data(log)
    tab = candidate_table(d, position_observation(8, eta=1.0, convention="reciprocal"))
    h = Heckman(ds.train.features, tab, "official", max_iter=200)
    m = d.candidate
    X = ds.train.features[d.rows[m]].astype(np.float64)
    s1 = LogisticRegression(C=1.0, max_iter=200).fit(X, d.shown[m].astype(int))
    g = s1.coef_.ravel() / 1.6                                             # intercept dropped
    from scipy.stats import norm
    z = X @ g
    Z = np.c_[X, norm.pdf(z) / norm.cdf(z)]
    s2 = LogisticRegression(C=1.0, max_iter=200).fit(Z, d.clicks[m].astype(int))
    np.testing.assert_allclose(h.theta, s2.coef_.ravel() / 1.6, rtol=2e-3, atol=2e-4)


def test_estimated_propensities_recover_the_click_model(top5):
    """propensity="estimated": result randomisation (10⁶ shuffled sessions) estimates o_p = 1/p."""
    ds, _, log = top5
    res = fit(log, ds, TrainConfig(algorithm="ips", propensity="estimated", steps=20, eval_every=10, hidden=(8,)))
    np.testing.assert_allclose(res.observation(), 1 / np.arange(1, 6), atol=0.01)
    assert not np.allclose(res.observation(), 1 / np.arange(1, 6), atol=1e-6)   # estimated, not copied


def test_estimated_propensities_are_simulated_once_per_log_and_seed(top5):
    """Every method of a comparison asks for the same log's estimate: the second ask is the cached,
    read-only array, equal to a fresh randomisation with the same seed; another seed is another entry."""
    from ultr_core.algorithms import training
    from ultr_core.algorithms.data import session_data
    from ultr_core.simulation.randomisation import randomised_propensity
    ds, _, log = top5
    split, data = ds.split(log.meta.get("split", "train")), session_data(log)
    training._PROPENSITY_CACHE.clear()
    a = training._estimated_propensity(log, ds, split, data, seed=3)
    assert training._estimated_propensity(log, ds, split, data, seed=3) is a and not a.flags.writeable
    fresh = randomised_propensity(
        split.labels,
        split.offsets,
        ds.max_label,
        click=training.log_click_model(log, "x"),
        n_positions=data.n_positions,
        rng=np.random.default_rng([3, 7]),
    )
    np.testing.assert_array_equal(a, fresh)
    b = training._estimated_propensity(log, ds, split, data, seed=4)
    assert b is not a and not np.array_equal(a, b) and len(training._PROPENSITY_CACHE) == 2


def test_pairwise_ips_and_naive_train(top5):
    ds, _, log = top5
    for alg in ("naive", "ips"):
        res = fit(log, ds, TrainConfig(algorithm=alg, ips_form="pairwise", max_weight=None, steps=150,
                                       eval_every=50, model="linear", lr=0.05))
        assert evaluate(res, ds.test)["ndcg@10"] > 0.8, alg


def test_official_pairs_without_both_clicked_pairs():
    """pair_both_clicked=False drops the Δ > 0 pairs of two clicked documents (ordered by position
    alone) and keeps the (clicked, unclicked) ones."""
    from ultr_core.algorithms.data import SessionData
    rows = np.array([[0, 1, 2, 3]])
    cand = rows >= 0
    shown = cand & (np.arange(4) < 3)[None, :]
    clicks = np.array([[1, 1, 0, 0]], np.float32)                  # two clicks, at positions 1 and 2
    data, rho = SessionData(rows, clicks, shown, cand, None, 3), np.array([1.0, 0.5, 1 / 3, 0.25])
    tab = candidate_table(data, rho)
    for both, expect in ((True, [(0, 2, 1.0), (1, 0, 1.0), (1, 2, 2.0)]), (False, [(0, 2, 1.0), (1, 2, 2.0)])):
        ri, rj, _, _, d = session_pairs(data, tab, rho, rng=np.random.default_rng(0), ratio=0.0, both_clicked=both)
        assert sorted(zip(ri.tolist(), rj.tolist(), d.tolist())) == expect
