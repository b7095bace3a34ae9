"""Issue #48, items 1 and 3 (first part): trust-bias users in the simulator (Vardasbi et al.'s trust_1 policy) and the
trust-bias click model in the click-model table — its clicks, its fit, its Fisher null space (an affine map of
relevance, as docs/identifiability_trust_bias.md states) and the CLI."""
import numpy as np
import pytest

from ultr_core.clickmodels.registry import MODEL_BY_KEY
from ultr_core.clickmodels.trust import Trust


def test_trust_users_click_as_vardasbi_et_al_policy():
    """P(click) = θ_p (ε⁻_p + (ε⁺_p − ε⁻_p) α) with ε⁺_p = 0.98 − (p − 1)/100, ε⁻_p = 0.65/p: a relevant result
    (α = 1) at position 2 with θ = 0.5 is clicked with 0.5·0.97, a non-relevant one with 0.5·0.325."""
    rng = np.random.default_rng(0)
    S = 200_000
    a = np.tile([1.0, 1.0, 0.0, 0.0], (S, 1))
    curve = np.array([1.0, 0.5, 0.5, 0.25])
    clicks, exam = MODEL_BY_KEY["trust"].sampler(a, np.ones_like(a, bool), curve, gamma=0.65, rng=rng)
    want = np.array([0.98, 0.5 * 0.97, 0.5 * 0.65 / 3, 0.25 * 0.65 / 4])
    assert np.allclose(clicks.mean(0), want, atol=4 * np.sqrt(want * (1 - want) / S))
    assert (exam == curve).all()


def test_the_trust_model_explains_its_own_clicks_best_and_recovers_the_click_probabilities():
    from ultr_core.clickmodels.recovery import recovery_scores, sample_sessions
    from ultr_core.clickmodels.sessions import SessionArrays
    r = recovery_scores("trust", 20_000, seed=0)
    assert r["best"] == "trust", r["scores"]
    t = SessionArrays.from_frame(sample_sessions("trust", 20_000, seed=1)).compress()
    m = Trust().fit(t)
    p = m.full(t)
    emp = np.average(t.clicks, axis=0, weights=t.weight)
    assert np.allclose(np.average(p, axis=0, weights=t.weight), emp, atol=0.01)
    assert (m.noise > 0).all() and (m.signal + m.noise <= 1).all()


def test_its_fisher_null_space_is_the_affine_map_of_relevance():
    """On a log where every document appears at every position, the fitted trust model's information has exactly
    two null directions (scale and shift of relevance); PBM's on the same log has one."""
    from ultr_core.clickmodels.information import model_information
    from ultr_core.clickmodels.recovery import sample_sessions
    from ultr_core.clickmodels.sessions import SessionArrays
    t = SessionArrays.from_frame(sample_sessions("trust", 3_000, n_queries=5, depth=6, seed=2)).compress()
    trust = model_information(Trust().fit(t), t, "trust")
    pbm = model_information(MODEL_BY_KEY["pbm"].cls().fit(t), t, "pbm")
    assert trust.null_dimension == 2 and pbm.null_dimension == 1


def test_simulate_draws_trust_bias_and_refuses_what_only_pbm_has(tmp_path):
    from ultr_core.errors import ConfigError
    from ultr_core.simulation.clickmodel import ClickModelConfig
    from ultr_core.simulation.logspec import LogSpec
    _, _, log = LogSpec.parse("synthetic:60/user=trust/shuffle=0.3/sessions=2000/seed=1").simulate()
    assert log.meta["click_model"]["user_model"] == "trust" and log.frame["click"].any()
    with pytest.raises(ConfigError, match="user_model"):
        ClickModelConfig(user_model="trust", coupling=0.5)


def test_the_playground_says_what_the_verdict_means_for_trust_bias_users():
    from apphelp import no_crash, page
    at = page("playground.py", timeout=120)
    at.query_params["users"] = "trust"
    at.run(timeout=120)
    assert no_crash(at)
    box = " ".join(x.value for x in list(at.success) + list(at.warning) if "IG:" in x.value)
    assert "Trust users click with trust bias" in box and "affine map" in box


def test_the_ctr_tile_draws_the_true_click_probability_of_the_users():
    """Under PBM the truth line is r·o as before; under trust bias it is o·(ε⁻ + (ε⁺ − ε⁻)·r), which the observed
    CTR matches within 4 binomial standard errors at every position (r·o does not: it misses ε⁻'s clicks)."""
    from ultr_core.simulation.logspec import LogSpec
    _, sim, log = LogSpec.parse("synthetic:60/shuffle=0.3/sessions=20000/seed=3").simulate()
    ctr = log.ctr_by_position()
    assert np.allclose(sim.true_ctr(log, ctr)["expected_ctr"], ctr["expected_ctr"])
    _, sim, log = LogSpec.parse("synthetic:60/user=trust/shuffle=0.3/sessions=20000/seed=3").simulate()
    ctr = log.ctr_by_position()
    true = sim.true_ctr(log, ctr)
    z = (true["ctr"] - true["expected_ctr"]) / true["se"]
    assert (np.abs(z) < 4).all(), z.tolist()
    assert (np.abs((ctr["ctr"] - ctr["expected_ctr"]) / ctr["se"]) > 4).any()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_affine_fit_on_independent_count_tables_reaches_the_truths_likelihood(seed):
    """Issue #58 item 4: count tables drawn here from trust_1 users (b_p = θ_p ε⁻_p, s_p = θ_p (ε⁺_p − ε⁻_p), θ_p = 1/p,
    200 documents, 10 ranks, 60 % of the cells shown): the fit converges, its log-likelihood is at least the truth's,
    no fitted probability leaves [0, 1] and the signal ratio s_10/s_1 (free of the affine map) is within 0.03 of the
    true 0.25."""
    from ultr_core.clickmodels.trust import affine_log_likelihood, fit_affine_counts
    rng = np.random.default_rng(seed)
    n_docs, depth = 200, 10
    p = np.arange(1, depth + 1)
    theta, plus, minus = 1 / p, 0.98 - (p - 1) / 100, 0.65 / p
    s_true, b_true = theta * (plus - minus), theta * minus
    a = rng.uniform(0, 1, n_docs)
    pair, pos = np.repeat(np.arange(n_docs), depth), np.tile(p, n_docs)
    keep = rng.random(len(pair)) < 0.6
    pair, pos = pair[keep], pos[keep]
    n = rng.integers(20, 400, len(pair)).astype(float)
    truth = b_true[pos - 1] + s_true[pos - 1] * a[pair]
    c = rng.binomial(n.astype(int), truth).astype(float)
    fit = fit_affine_counts(pair, pos, c, shown=n, n_pairs=n_docs, depth=depth)
    fitted = fit.probability(pair, pos)
    assert fit.converged, fit.message
    assert fit.log_likelihood >= affine_log_likelihood(truth, c, n)
    assert fitted.min() >= 0 and fitted.max() <= 1
    assert abs(fit.signal[-1] / fit.signal[0] - 0.25) < 0.03


def test_affine_fit_keeps_a_cell_clicked_at_every_impression_a_probability():
    """A document clicked at every impression at rank 1 and most at rank 2: p stays ≤ 1 and the fit says it
    converged."""
    from ultr_core.clickmodels.trust import fit_affine_counts
    fit = fit_affine_counts([0, 0, 1, 1, 2, 2], [1, 2, 1, 2, 1, 2], [50, 45, 20, 8, 5, 1],
                            shown=[50, 50, 50, 50, 50, 50], n_pairs=3, depth=2)
    assert fit.converged and fit.probability([0, 0, 1, 1, 2, 2], [1, 2, 1, 2, 1, 2]).max() <= 1.0
