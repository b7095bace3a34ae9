"""The identifiability report is typed (issue #59): frozen records whose ``to_json()`` is ``ig --json`` with its
documented keys in their order, tables as data frames, and copies made with ``with_`` (the CLI adds the documents
file and the judges' agreement to a copy, never to the cached report)."""
from __future__ import annotations

import dataclasses
import json

import pandas as pd
import pytest
from loghelp import random_log

from ultr_core.identifiability.records import (
    BiasCurves,
    CertaintyPlanReport,
    IdentifiabilityReport,
    InterventionSummary,
    MergeSummary,
    PracticalIdentifiability,
    WeakLink,
)
from ultr_core.tasks import CheckOptions, check_log

TOP = ["n_rows", "n_documents", "n_nodes", "n_components", "identifiable", "largest_share", "component_sizes",
       "bias_columns", "n_clicks", "document_columns", "document_key", "alternative_document", "merge_features",
       "merges", "n_merges", "merge_total_cost", "n_components_after_merge", "interventions", "n_interventions",
       "intervention_total_cost", "n_components_after_intervention", "position_bias", "notes", "source", "users",
       "profile", "certainty_plan"]
REPAIRS = ["merges", "n_merges", "merge_total_cost", "n_components_after_merge", "interventions", "n_interventions",
           "intervention_total_cost", "n_components_after_intervention"]
PRACTICAL = ["rule", "band", "counts", "reference_factors", "separated_factors", "weakest", "weakest_links",
             "converged", "decrement", "documents", "factors", "components"]


@pytest.fixture(scope="module")
def check(tmp_path_factory):
    path = tmp_path_factory.mktemp("records") / "log.csv"
    df = random_log(n_sessions=600, seed=2)[0]          # positions 1–4 and 5–8 never share a document: two blocks
    pd.concat([df[df["position"] <= 4], df[df["position"] > 4].assign(doc_id=lambda x: x["doc_id"] + "_bottom")]) \
        .to_csv(path, index=False)
    return check_log(str(path), CheckOptions(merge=True, intervene=True, bootstrap=20, profile="position=3",
                                             certainty=2))


def test_the_report_is_typed_and_frozen(check):
    rep = check.report
    assert isinstance(rep, IdentifiabilityReport) and isinstance(rep.merge, MergeSummary)
    assert isinstance(rep.intervention, InterventionSummary) and isinstance(rep.position_bias, BiasCurves)
    assert isinstance(rep.position_bias.practical, PracticalIdentifiability)
    assert isinstance(rep.position_bias.curves, pd.DataFrame) and len(rep.position_bias.curves) == rep.n_nodes
    assert all(isinstance(x, WeakLink) for x in rep.position_bias.practical.weakest_links)
    assert isinstance(rep.certainty_plan, CertaintyPlanReport) and rep.profile.factor == "position=3"
    with pytest.raises(dataclasses.FrozenInstanceError):
        rep.n_rows = 0
    with pytest.raises(dataclasses.FrozenInstanceError):
        rep.position_bias.practical.rule = ""


def test_its_json_keeps_the_documented_keys_in_order(check):
    out = json.loads(check.to_json())
    assert list(out) == TOP
    pb = out["position_bias"]
    assert list(pb) == ["method", "n_bootstrap", "alpha", "notes", "curves", "practical_identifiability"]
    assert list(pb["practical_identifiability"])[:len(PRACTICAL)] == PRACTICAL
    labels = [f"position={k}" for k in range(1, out["n_nodes"] + 1)]
    assert pb["practical_identifiability"]["factors"]["label"] == labels
    assert list(out["merges"][0]) == ["label_a", "label_b", "cost"]
    assert list(out["interventions"][0]) == ["document", "from_label", "to_label", "cost"]
    assert list(out["certainty_plan"]["swaps"][0]) == ["document", "show_at", "shown_at", "impressions",
                                                       "worst_se_after", "mean_se_after"]
    assert pb["curves"][0]["label"] == "position=1"
    # the curve rows and the factors' columns carry the same figures
    assert [r["log_se"] for r in pb["curves"]] == pb["practical_identifiability"]["factors"]["log_se"]


def test_a_report_without_the_optional_parts_leaves_their_keys_out(tmp_path):
    path = tmp_path / "log.csv"
    random_log(n_sessions=200, seed=3)[0].to_csv(path, index=False)
    out = json.loads(check_log(str(path), CheckOptions(estimate=None)).to_json())
    assert list(out) == [k for k in TOP if k not in (*REPAIRS, "position_bias", "profile", "certainty_plan")]


def test_additions_go_to_a_copy(check):
    rep = check.report
    from ultr_core.clickmodels.agreement_records import JudgedRelevance
    judged = rep.with_(judgements=JudgedRelevance(note="nothing to score"))
    assert check.report.judgements is None
    assert json.loads(check.to_json(judged))["judgements"] == {"note": "nothing to score"}
    assert "judgements" not in json.loads(check.to_json())
