"""Issue #46, item 6: numerical identifiability of any click model — the Fisher information of the fitted model on
the session patterns (autograd).  For PBM its null space is the graph's component count (Theorem 1); the scale is
nobody's fault (spread evenly); DBN's satisfaction is weaker than its attractiveness; the CLI reports it."""
import json

import numpy as np
import pytest
from scipy import sparse
from scipy.sparse.csgraph import connected_components

from ultr_core.clickmodels.information import model_information
from ultr_core.clickmodels.registry import CLICK_MODELS, MODEL_BY_KEY
from ultr_core.clickmodels.sessions import SessionTable


def _log(seed: int, blocks: int, n: int = 2400, P: int = 30, D: int = 6):
    """Sessions whose lists take pairs of block b only at the ranks of block b: ``blocks`` components."""
    rng = np.random.default_rng(seed)
    alpha, gam = rng.uniform(0.2, 0.8, P), 0.95 / np.arange(1, D + 1)
    pair_block, rank_block = np.arange(P) % blocks, np.arange(D) * blocks // D
    rows = []
    for _ in range(n):
        row = np.empty(D, int)
        for b in range(blocks):
            ranks = np.flatnonzero(rank_block == b)
            row[ranks] = rng.choice(np.flatnonzero(pair_block == b), len(ranks), replace=False)
        rows.append(row)
    pairs = np.array(rows)
    clicks = rng.random(pairs.shape) < alpha[pairs] * gam
    return SessionTable(pairs, clicks, np.ones(n), P, n)


def _components(t) -> int:
    P, D = t.n_pairs, t.depth
    r = np.broadcast_to(np.arange(D), t.pairs.shape).ravel()
    A = sparse.coo_matrix((np.ones(r.size), (t.pairs.ravel(), P + r)), shape=(P + D, P + D))
    return connected_components(A, directed=False)[0]


@pytest.mark.parametrize("seed, blocks", [(0, 1), (1, 2), (2, 3)])
def test_pbm_null_space_is_the_component_count(seed, blocks):
    t = _log(seed, blocks)
    info = model_information(MODEL_BY_KEY["pbm"].cls().fit(t), t, "pbm")
    assert info.null_dimension == _components(t) == blocks
    assert info.rank == len(info.names) - blocks and info.set_aside == 0
    assert info.counts["unidentified"] == 0 and np.allclose(info.null_share, info.null_share.mean(), atol=0.03)


def test_every_click_model_of_the_table_has_an_information():
    """Each record's class gives a likelihood in torch: its information is finite, positive semi-definite (no
    negative eigenvalue beyond rounding), and the cascades with latent satisfaction find satisfaction the weaker."""
    t = _log(3, 1, n=600)
    for spec in CLICK_MODELS:
        info = model_information(spec.cls().fit(t), t, spec.key)
        assert info.eigenvalues.min() > -1e-9 and np.isfinite(info.log_se).all(), spec.key
    dbn = model_information(MODEL_BY_KEY["dbn"].cls().fit(t), t, "dbn")
    se = dict(zip(dbn.names, dbn.log_se))
    sat = np.median([v for k, v in se.items() if k.startswith("sat")])
    attr = np.median([v for k, v in se.items() if k.startswith("attr")])
    assert sat > attr


def test_click_models_identifiability_from_the_command_line(tmp_path, capsys):
    import pandas as pd

    from ultr_core.__main__ import main
    t = _log(4, 2, n=800)
    s, r = np.meshgrid(np.arange(len(t.pairs)), np.arange(t.depth), indexing="ij")
    pd.DataFrame({"session_id": s.ravel(), "query_id": 0, "doc_id": t.pairs.ravel(), "position": r.ravel() + 1,
                  "click": t.clicks.ravel().astype(int)}).to_csv(tmp_path / "log.csv", index=False)
    assert main(["click-models", str(tmp_path / "log.csv"), "--models", "pbm,dbn", "--identifiability",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)["models"]
    assert out["pbm"]["identifiability"]["null_dimension"] == 2
    assert out["dbn"]["identifiability"]["rank"] > 0 and "rule" in out["dbn"]["identifiability"]
    assert main(["click-models", str(tmp_path / "log.csv"), "--models", "pbm", "--identifiability"]) == 0
    assert "PBM: Fisher rank" in capsys.readouterr().out


def test_the_summary_is_a_frozen_record_whose_json_keeps_its_keys():
    """Issue #59: the summary ``click-models --identifiability`` prints is typed; its JSON keys are the ones the CLI
    always wrote, in order, and its text line is built from the record."""
    import dataclasses

    from ultr_core.clickmodels.information import InformationSummary, WeakParameter, information_summary
    t = _log(1, 2)
    s = information_summary(model_information(MODEL_BY_KEY["pbm"].cls().fit(t), t, "pbm"))
    assert isinstance(s, InformationSummary) and all(isinstance(w, WeakParameter) for w in s.weakest)
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.rank = 0
    assert list(s.to_json()) == ["parameters", "rank", "null_dimension", "smallest_eigenvalues", "counts",
                                 "unidentified", "weakest", "set_aside", "not_analysed", "rule"]
    assert s.null_dimension == 2 and s.line("PBM").startswith(f"PBM: Fisher rank {s.rank} of {s.parameters} ")
