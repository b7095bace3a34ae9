"""What a learned attractiveness prior chose (ultr_core.clickmodels.prior), as a record."""
import pytest


def test_a_learned_prior_choice_is_a_frozen_record_whose_json_keeps_its_keys():
    """Issue #59: what a learned prior chose is typed — found on held-out sessions, or taken from PBM's search by a
    model fitted by gradient (``chosen_by``) — and its JSON has the keys the CLI always wrote."""
    import dataclasses

    from ultr_core.clickmodels.prior import PriorChoice, prior_text
    found = PriorChoice(baseline="query", strength=4.0, validation_sessions=10, validation_log_likelihood=-0.2,
                        pyclick_validation_log_likelihood=-0.21)
    assert list(found.to_json()) == ["baseline", "strength", "validation_sessions", "validation_log_likelihood",
                                     "pyclick_validation_log_likelihood"]
    taken = found.with_(chosen_by="pbm", validation_sessions=None, validation_log_likelihood=None,
                        pyclick_validation_log_likelihood=None)
    assert taken.to_json() == {"baseline": "query", "strength": 4.0, "chosen_by": "pbm"}
    with pytest.raises(dataclasses.FrozenInstanceError):
        found.strength = 2.0
    assert found.short() == "query × 4" and prior_text(found) == found.text() != prior_text(
        found.with_(baseline="pyclick")) == "PyClick's ½"


def test_a_counting_model_fitted_from_its_statistics_equals_its_fit_under_every_prior():
    """The learned prior's search sums a counting model's log once and divides under each of its 13 priors
    (``ClickModel.statistics``): for every model whose record counts, that equals fitting the table under the
    prior, bit for bit; a model fitted iteratively has no statistics and is refitted."""
    from dataclasses import replace

    import numpy as np

    from ultr_core.clickmodels.recovery import sample_sessions
    from ultr_core.clickmodels.registry import CLICK_MODELS
    from ultr_core.clickmodels.sessions import SessionArrays
    t = SessionArrays.from_frame(sample_sessions("dbn", 2000, seed=1)).compress()
    rng = np.random.default_rng(0)
    prior = (rng.uniform(0.1, 3, t.n_pairs), rng.uniform(3, 6, t.n_pairs))
    counted = 0
    for spec in CLICK_MODELS:
        stats = spec.cls().statistics(t)
        if stats is None:
            continue
        counted += 1
        a, b = spec.cls().from_statistics(stats, prior), spec.cls().fit(replace(t, attr_prior=prior))
        assert {k: v.tolist() for k, v in vars(a).items() if isinstance(v, np.ndarray)} == {
            k: v.tolist() for k, v in vars(b).items() if isinstance(v, np.ndarray)}, spec.key
        assert not np.allclose(a.attr, spec.cls().fit(t).attr), spec.key          # the prior moved it
    assert counted == 4                                                           # DCTR, CM, DCM, SDBN


def test_the_prior_searchs_log_likelihood_only_scores_are_the_full_scores_log_likelihoods():
    """The learned prior's search scores its 13 candidates by held-out log-likelihood alone (issue #62: the marginal
    probabilities and perplexities of every candidate took half of DCM's search); the figure is the full scoring's,
    bit for bit, for a counting, an EM and a gradient model."""
    from ultr_core.clickmodels.cascade_ml import DBN
    from ultr_core.clickmodels.evaluation import score_models
    from ultr_core.clickmodels.models import DCM, PBM
    from ultr_core.clickmodels.sessions import SessionArrays
    from ultr_core.simulation.edge_logs import shuffled_log
    frame, _ = shuffled_log(2, n_sessions=3_000, n_queries=300)
    t = SessionArrays.from_frame(frame).compress()
    models = {"dcm": DCM().fit(t), "pbm": PBM().fit(t), "dbn": DBN().fit(t)}
    full, only = score_models(models, t)[0], score_models(models, t, log_likelihood_only=True)[0]
    assert {k: v["log_likelihood"] for k, v in full.items()} == {k: v["log_likelihood"] for k, v in only.items()}
    assert set(only["dcm"]) == {"log_likelihood"} and "perplexity" in full["dcm"]
