"""The estimators' PBM (issue #58, one PBM fit): θ̂ is the identifiability fit's maximum likelihood — the number `ig`
reports for the same log — α̂ is each pair's maximum given θ̂, and a fit that stops early says so."""
import json

import numpy as np
import pandas as pd
import pytest

from ultr_core.clickmodels.pbm import PBMCells, pbm_em_step
from ultr_core.counterfactual.position_bias import fit_position_bias
from ultr_core.simulation.edge_logs import sparse_log


def _cells(frame: pd.DataFrame):
    """(n, c, n_pairs, depth) of the (pair, rank) cells, pairs numbered by (query, document)."""
    pair = pd.factorize(pd.MultiIndex.from_frame(frame[["query_id", "doc_id"]]))[0]
    depth = int(frame["position"].max())
    cell = pair * depth + frame["position"].to_numpy() - 1
    size = (pair.max() + 1) * depth
    return (np.bincount(cell, minlength=size).astype(float), np.bincount(cell, frame["click"], size),
            int(pair.max()) + 1, depth)


def test_evaluate_reports_the_position_bias_ig_reports(tmp_path, capsys):
    """One log, one truth: on the edge corpus's Yandex-like log (lists barely change) `evaluate`'s θ̂ is `ig`'s PBM
    maximum likelihood for every position, to the last bit.  Before, `evaluate` ran 200 EM updates: θ̂₂ = 0.86
    where `ig` said 0.96."""
    from clihelp import cli
    log = tmp_path / "sparse.csv"
    sparse_log(0, n_sessions=6000, n_queries=60)[0].to_csv(log, index=False)
    code, out, err = cli(["ig", str(log), "--json"], capsys)
    assert code == 0, err
    ig = {r["position"]: r["pbm_ml"] for r in json.loads(out)["position_bias"]["curves"]}
    code, out, err = cli(["evaluate", str(log), "--json"], capsys)
    assert code == 0, err
    theta = json.loads(out)["position_bias"]["theta"]
    assert len(ig) == len(theta) == 10
    assert theta == pytest.approx([ig[p] for p in range(1, 11)], rel=1e-12, abs=0)


@pytest.mark.parametrize("seed", [0, 1])
def test_each_attractiveness_is_its_maximum_given_the_position_bias(seed):
    """α̂ (Newton in a bracket) equals PBM's EM update with θ held, iterated to its fixed point, under the same prior;
    and it never makes a click probability exceed 1."""
    n, c, n_pairs, depth = _cells(sparse_log(seed, n_sessions=3000, n_queries=40)[0])
    fit = fit_position_bias(n, c, n_pairs=n_pairs, depth=depth, strength=0.1)
    assert fit.converged
    cells = np.flatnonzero(n > 0)
    table = PBMCells.of(cells // depth, cells % depth, n[cells], c=c[cells], n_pairs=n_pairs, depth=depth,
                        attr_prior=(0.1 * fit.mean_attr, 0.1), cap=1.0)
    alpha = np.full(n_pairs, 0.5)
    for _ in range(20_000):
        alpha = pbm_em_step(table, alpha, fit.theta)[0]
    assert np.abs(fit.alpha - alpha).max() < 1e-6
    assert (fit.alpha[cells // depth] * fit.theta[cells % depth]).max() <= 1 + 1e-12


def test_a_document_clicked_at_every_impression_does_not_move_the_position_bias():
    """A document shown twice at rank 6 and clicked both times carries no information about θ (at the maximum its
    click probability is 1 whatever θ₆ is); it leaves θ̂ as it was, and its own α̂ stays a probability."""
    frame = sparse_log(0, n_sessions=3000, n_queries=40, always=0.0)[0]
    extra = pd.DataFrame({"session_id": [10**6, 10**6 + 1], "query_id": [0, 0], "doc_id": [99, 99],
                          "position": [6, 6], "click": [1, 1]})
    before = fit_position_bias(*_cells(frame)[:2], n_pairs=_cells(frame)[2], depth=10, strength=0.1)
    n, c, n_pairs, depth = _cells(pd.concat([frame, extra], ignore_index=True))
    after = fit_position_bias(n, c, n_pairs=n_pairs, depth=depth, strength=0.1)
    assert np.abs(after.theta - before.theta).max() < 1e-9
    assert 0 < after.alpha.max() <= 1


def test_a_fit_that_stops_early_is_said(monkeypatch):
    """The output names the resamples whose PBM fit did not converge (here: every Newton decrement counts as too
    large, so some do), and says nothing on the same log under the real criterion's point fit."""
    import ultr_core.counterfactual.position_bias as position_bias
    from ultr_core.counterfactual.evaluate import evaluate_ranking
    frame = sparse_log(0, n_sessions=3000, n_queries=40)[0]
    assert not any("the log did not converge" in n for n in evaluate_ranking(frame, "log", n_boot=20).notes)
    monkeypatch.setattr(position_bias, "STALLED", 0.0)
    monkeypatch.setattr(position_bias, "ATTR_MAX_ITER", 2)
    notes = evaluate_ranking(frame, "log", n_boot=20).notes
    assert any("PBM's fit on the log did not converge" in n for n in notes), notes
    assert any("did not converge in 20 of 20 bootstrap resamples" in n for n in notes), notes
