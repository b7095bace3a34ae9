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
