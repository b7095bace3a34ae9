"""Issue #58: a log that carries its logging policy's propensities (a ``propensity`` column, as the Open Bandit data
and stochastic-logging practitioners record them) is read by every reader and used by the policy-aware estimators
(DR, Affine-DR, policy-aware IPS); without it they take the display frequencies.  Checked on logs drawn from a
Plackett–Luce logging policy whose exact π₀(d at r | q) is enumerated, with PBM users and a known value."""
import itertools

import numpy as np
import pandas as pd
import pytest

from ultr_core.__main__ import main
from ultr_core.clickmodels.sessions import SessionArrays
from ultr_core.counterfactual.evaluate import evaluate_ranking
from ultr_core.errors import DataFormatError
from ultr_core.logs.scores import read_scores

D, DOCS, QUERIES = 4, 5, 30
PERMS = np.array(list(itertools.permutations(range(DOCS), D)))
THETA = 1 / np.arange(1, D + 1)


def _plackett_luce(logits: np.ndarray) -> np.ndarray:
    """Each top-D list's probability under Plackett–Luce, exactly."""
    e, p = np.exp(logits), np.ones(len(PERMS))
    left = np.full(len(PERMS), e.sum())
    for r in range(D):
        x = e[PERMS[:, r]]
        p, left = p * x / left, left - x
    return p


def stochastic_log(seed: int, sessions: int = 6000):
    """(click table with the exact ``propensity`` of each row, scores of the ideal ranking, its true value at k=D)."""
    rng = np.random.default_rng(seed)
    alpha = rng.uniform(0.05, 0.9, (QUERIES, DOCS))
    probs = [_plackett_luce(rng.normal(0, 1, DOCS)) for _ in range(QUERIES)]
    pi = np.zeros((QUERIES, DOCS, D))
    for q in range(QUERIES):
        for r in range(D):
            np.add.at(pi[q, :, r], PERMS[:, r], probs[q])
    query = rng.integers(0, QUERIES, sessions)
    lists = np.stack([PERMS[rng.choice(len(PERMS), p=probs[q])] for q in query])
    clicks = rng.random(lists.shape) < THETA[None, :] * alpha[query[:, None], lists]
    frame = pd.DataFrame({"session_id": np.repeat(np.arange(sessions), D), "query_id": np.repeat(query, D),
                          "doc_id": lists.ravel(), "position": np.tile(np.arange(1, D + 1), sessions),
                          "click": clicks.ravel().astype(int),
                          "propensity": pi[np.repeat(query, D), lists.ravel(), np.tile(np.arange(D), sessions)]})
    text = "query_id,doc_id,score\n" + "\n".join(f"{q},{d},{alpha[q, d]}" for q in range(QUERIES) for d in range(DOCS))
    share = np.bincount(query, minlength=QUERIES) / sessions
    truth = float((share * (np.sort(alpha, 1)[:, ::-1][:, :D] * THETA).sum(1)).sum())
    return frame, read_scores(text.encode(), "scores.csv"), truth


def _value(frame, scores, n_boot=50, estimators=("dr", "policy_ips")):
    return evaluate_ranking(frame, "log", ranking="scores", scores=scores, k=D, n_boot=n_boot,
                            estimators=list(estimators))


def test_logged_propensities_are_read_and_said():
    frame, scores, _ = stochastic_log(0, 2000)
    arrays = SessionArrays.from_frame(frame)
    assert arrays.propensity is not None and np.allclose(arrays.propensity.ravel(), frame["propensity"])
    out = _value(frame, scores, n_boot=20)
    assert out.logging_propensities.source == "logged" and out.logging_propensities.varied_cells == 0
    bare = _value(frame.drop(columns="propensity"), scores, n_boot=20)
    assert bare.logging_propensities.source == "display frequencies"
    assert out.estimators["dr"].estimate != bare.estimators["dr"].estimate      # the column is used


def test_dr_with_the_display_frequencies_logged_is_dr_without_them():
    """Writing π̂₀ (each cell's share of its query's sessions) into the column gives DR's point estimate to 1e-12."""
    frame, scores, _ = stochastic_log(1, 3000)
    n_q = frame.groupby("query_id")["session_id"].transform("nunique")
    cell = frame.groupby(["query_id", "doc_id", "position"])["session_id"].transform("size")
    empirical = frame.assign(propensity=cell / n_q)
    a = _value(empirical, scores, n_boot=20).estimators
    b = _value(frame.drop(columns="propensity"), scores, n_boot=20).estimators
    assert a["dr"].estimate == pytest.approx(b["dr"].estimate, abs=1e-12)
    assert a["policy_ips"].estimate == pytest.approx(b["policy_ips"].estimate, abs=1e-12)


@pytest.mark.slow
def test_policy_aware_estimators_recover_the_true_value_over_seeds():
    """Under PBM users and a stochastic logging policy, DR and policy-aware IPS with the logged π₀ are unbiased:
    over 20 seeds their mean error is within 3 standard errors of 0 and their 90 % intervals cover the truth in at
    least 15 of 20 (below that has chance ≈ 1 % at a true 90 %); position-based IPS, which needs every candidate
    document in every session, does not."""
    err = {"dr": [], "policy_ips": [], "ips": []}
    covered = {"dr": 0, "policy_ips": 0}
    for seed in range(20):
        frame, scores, truth = stochastic_log(seed)
        out = _value(frame, scores, estimators=("dr", "policy_ips", "ips")).estimators
        for key in err:
            err[key].append(out[key].estimate - truth)
        for key in covered:
            covered[key] += out[key].lower <= truth <= out[key].upper
    for key in covered:
        e = np.asarray(err[key])
        assert abs(e.mean()) <= 3 * e.std(ddof=1) / np.sqrt(len(e)), (key, e)
        assert covered[key] >= 15, (key, covered)
    assert np.mean(err["ips"]) < -0.05                     # documents left out of some lists: IPS undervalues them


def test_a_propensity_column_is_read_from_a_file_and_checked(tmp_path, capsys):
    frame, _, _ = stochastic_log(2, 400)
    path = tmp_path / "log.csv"
    frame.to_csv(path, index=False)
    assert main(["evaluate", str(path), "--n-boot", "20", "--estimators", "dr,policy_ips"]) == 0
    text = capsys.readouterr().out
    assert "logging propensities (DR, policy-aware IPS): π₀(d at r | q): the log's 'propensity' column" in text
    assert main(["evaluate", str(path), "--n-boot", "20", "--json"]) == 0      # the default set, as the page's
    import json
    assert list(json.loads(capsys.readouterr().out)["estimators"]) == ["dm", "ips", "snips", "dr", "policy_ips"]
    for bad, why in ((0.0, "in (0, 1]"), (1.5, "in (0, 1]"), (float("nan"), "in (0, 1]")):
        frame.loc[frame.index[7], "propensity"] = bad
        frame.to_csv(path, index=False)
        assert main(["evaluate", str(path), "--n-boot", "20"]) != 0
        err = capsys.readouterr().err
        assert "'propensity'" in err and why in err and "1 shown row(s)" in err and "Traceback" not in err
    with pytest.raises(DataFormatError, match="shown row 8"):
        SessionArrays.from_frame(frame)


def test_sessions_that_disagree_on_a_cells_propensity_are_counted():
    frame, scores, _ = stochastic_log(3, 1500)
    first = frame.groupby(["query_id", "doc_id", "position"]).head(1).index[:5]
    frame.loc[first, "propensity"] = frame.loc[first, "propensity"] * 0.5
    out = _value(frame, scores, n_boot=20)
    assert out.logging_propensities.varied_cells == 5 and "5 (document, rank) cells disagree" in \
        out.logging_propensities.text


def test_the_upload_page_uses_the_logged_propensities_as_the_cli_does(tmp_path, capsys):
    """One log, one truth: the Upload page values the production order with DR and policy-aware IPS from the
    column, says so, and gives the CLI's numbers."""
    import json

    from apphelp import no_crash, page, wait
    frame, _, _ = stochastic_log(4, 800)
    data = frame.to_csv(index=False).encode()
    at = page("upload.py").run()
    at.file_uploader(key="upload_click_log").set_value(("log.csv", data, "text/csv")).run()
    at = wait(at, "upload_cf_job", 120)
    assert no_crash(at) and not at.error
    assert "propensity" not in at.multiselect(key="upload_bias_factor_columns").options   # not a bias factor
    table = next(d.value for d in at.dataframe if "90 % interval" in d.value.columns)
    assert list(table["estimator"])[-1] == "Policy-aware IPS"
    assert any("the log's 'propensity' column" in c.value for c in at.caption)
    (tmp_path / "log.csv").write_bytes(data)
    assert main(["evaluate", str(tmp_path / "log.csv"), "--estimators", "dm,ips,snips,dr,policy_ips", "--k",
                 str(D), "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)["estimators"]
    page_values = dict(zip(table["estimator"], table["estimate"]))
    for e in cli.values():             # a refused estimator (DM, on a log this small) has no value in either
        shown = page_values[e["label"]]
        assert shown == "" if e["estimate"] is None else float(shown) == pytest.approx(e["estimate"], abs=1e-4)
    assert sum(e["estimate"] is not None for e in cli.values()) >= 4
