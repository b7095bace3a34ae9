"""Parameter recovery (issue #34, item 6; docs/results/click_model_recovery.md): logs drawn from a user model with known
parameters, every session in a random order, the zoo refitted and scored on held-out sessions."""
import numpy as np
import pytest

from ultr_core.clickmodels.recovery import fitted_vs_generating, pbm_curve_bootstrap, recovery_scores, sample_sessions


@pytest.mark.slow
@pytest.mark.parametrize("model", ["pbm", "ubm", "cm", "dcm", "ccm"])
def test_the_generating_model_explains_its_own_clicks_best(model):
    """20,000 sessions (15,000 train): the generator has the best held-out log-likelihood of the twelve models (Trust
    with noise 0 is PBM, and DCM-ML is DCM fitted by maximum likelihood: each may tie within 0.001, never gain
    more)."""
    r = recovery_scores(model, 20_000, seed=0)
    nests = {"pbm": ("trust",), "dcm": ("dcm_ml",)}.get(model, ())     # the same model: may tie, never gain more
    assert r["best"] == model or (r["best"] in nests and r["scores"][model] > r["scores"][r["best"]] - 0.001), \
        r["scores"]
    assert r["test_sessions"] == 5_000


@pytest.mark.slow
@pytest.mark.parametrize("model", ["sdbn", "dbn"])
def test_sdbn_and_dbn_clicks_are_explained_as_well_by_ccm_which_nests_them(model):
    """Simulated satisfaction is the attractiveness (σ = α), which CCM (τ₂ = γ, τ₃ = 0; SDBN: γ = 1) expresses with
    fewer parameters: the generator is within 0.003 of the best, not always first."""
    r = recovery_scores(model, 20_000, seed=0)
    assert 0 <= r["gap"] < 0.003 and r["best"] in ("ccm", "dbn", "sdbn")


@pytest.mark.slow
def test_dbn_and_ccm_recover_their_continuation_by_maximum_likelihood():
    """20,000 sessions drawn with γ = 0.9 (CCM: τ = 0.9, 0.9, 0.45): the fitted continuation is within 0.02 and the
    held-out log-likelihood within 0.005 of the generating parameters'."""
    r = fitted_vs_generating("dbn", 20_000, seed=0)
    assert abs(r["fitted_bias"]["continuation"] - 0.9) < 0.02 and abs(r["fitted"] - r["generating"]) < 0.005
    c = fitted_vs_generating("ccm", 20_000, seed=0)
    tau = [c["fitted_bias"][k] for k in ("tau_no_click", "tau_click_nonrelevant", "tau_click_relevant")]
    assert np.allclose(tau, [0.9, 0.9, 0.45], atol=0.02) and abs(c["fitted"] - c["generating"]) < 0.005


@pytest.mark.slow
def test_pyclick_em_for_dbn_does_not_increase_the_likelihood():
    """PyClick's DBN EM (``pyclick=True``, reproduced to 1e-15): the training log-likelihood rises, then falls while
    γ runs to 1 — why maximum likelihood is the default."""
    from ultr_core.clickmodels.cascade_ml import DBN
    from ultr_core.clickmodels.evaluation import scores
    from ultr_core.clickmodels.sessions import SessionArrays
    t = SessionArrays.from_frame(sample_sessions("dbn", 20_000, seed=0)).compress()
    ll = {n: scores(DBN(pyclick=True).fit(t, n_iter=n), t)["log_likelihood"] for n in (5, 50)}
    assert ll[50] < ll[5] - 0.01
    assert DBN(pyclick=True).fit(t).cont > 0.99
    assert scores(DBN().fit(t), t)["log_likelihood"] > ll[5]


@pytest.mark.slow
def test_pbm_recovers_its_examination_curve_within_bootstrap_intervals():
    r = pbm_curve_bootstrap(20_000, n_boot=20, seed=0)
    covered = (r["lo"] - 1e-9 <= r["truth"]) & (r["truth"] <= r["hi"] + 1e-9)
    assert covered[1:].sum() >= 8                      # 90 % intervals: about 9 of the 9 free positions
    assert np.abs(r["estimate"] - r["truth"]).max() < 0.03


def test_sampled_logs_show_every_document_at_every_position():
    f = sample_sessions("pbm", 2_000, n_queries=5, depth=4, seed=1)
    per_doc = f.groupby("doc_id")["position"].nunique()
    assert (per_doc == 4).all() and f.groupby("session_id").size().eq(4).all()


@pytest.mark.slow
@pytest.mark.parametrize("model, floor", [("ubm", 0.8), ("cm", 0.7), ("dcm", 0.7)])
def test_parameters_fall_inside_their_bootstrap_intervals(model, floor):
    """90 % session-bootstrap intervals (20 bootstraps, 20,000 sessions) hold most generating values: UBM's
    examination ratios, CM's and DCM's attractiveness and DCM's λ_r (docs/results/click_model_recovery.md: 50
    bootstraps)."""
    from ultr_core.clickmodels.recovery import bootstrap_coverage
    for row in bootstrap_coverage(model, n_sessions=20_000, n_boot=20, seed=0):
        assert row["covered"] >= floor, row
