"""Every number right at the edges of real logs (issue #58): documents clicked at every impression or never, deep
leaves clicked more often than their position allows, rare swaps.  On a Yandex-like log (many queries with few
sessions, lists mostly fixed, 8 % adjacent swaps, 5 % of the documents nearly always clicked) the identifiability
report gives one standard error per factor, shares in [0, 1], relevance within [0, 1] with intervals that contain
it, and a certainty plan that never buys certainty from a document at the boundary."""
import json

import numpy as np
import pandas as pd
import pytest

from ultr_core.__main__ import main


def yandex_like(path, seed: int, n_sessions: int = 6000, n_queries: int = 600, depth: int = 10):
    rng = np.random.default_rng(seed)
    q = rng.zipf(1.6, n_sessions) % n_queries
    alpha = rng.beta(0.5, 1.2, (n_queries, 20))
    alpha[rng.random((n_queries, 20)) < 0.05] = 0.995
    theta = np.array([1, .85, .7, .55, .45, .37, .3, .25, .22, .2])[:depth]
    docs = np.argsort(rng.random((n_queries, 20)), axis=1)[:, :depth][q]
    swap = np.flatnonzero(rng.random(n_sessions) < 0.08)
    i = rng.integers(0, depth - 1, len(swap))
    docs[swap, i], docs[swap, i + 1] = docs[swap, i + 1], docs[swap, i].copy()
    clicks = rng.random(docs.shape) < alpha[q[:, None], docs] * theta[None, :]
    pd.DataFrame({"session_id": np.repeat(np.arange(n_sessions), depth), "query_id": np.repeat(q, depth),
                  "doc_id": docs.ravel(), "position": np.tile(np.arange(1, depth + 1), n_sessions),
                  "click": clicks.ravel().astype(int)}).to_csv(path, index=False)
    return path


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_identifiability_report_at_the_boundary(tmp_path, capsys, seed):
    log = yandex_like(tmp_path / "log.csv", seed)
    docs = tmp_path / "docs.csv"
    assert main(["ig", str(log), "--certainty", "3", "--json", "--bootstrap", "20", "--documents", str(docs)]) == 0
    out = json.loads(capsys.readouterr().out)
    pb, plan = out["position_bias"], out["certainty_plan"]
    se = {c["label"]: c["log_se"] for c in pb["curves"]}
    # one report, one standard error per factor: the plan starts from the curve's
    assert plan["worst_se_before"] == pytest.approx(se[plan["weakest_factor"]], rel=1e-9)
    for label, s in zip(plan["factors"], plan["se_before"]):
        assert s == pytest.approx(se[label], rel=1e-9, abs=1e-12)
    # shares in [0, 1]
    for link in pb["practical_identifiability"]["weakest_links"]:
        assert 0 <= link["share"] <= 1
    # relevance as a click probability: within [0, 1], intervals containing it
    frame = pd.read_csv(docs)
    assert (frame["relevance"] >= 0).all() and (frame["relevance"] <= 1).all()
    ok = frame["lower"].notna()
    assert (frame.loc[ok, "lower"] <= frame.loc[ok, "relevance"] + 1e-12).all()
    assert (frame.loc[ok, "relevance"] <= frame.loc[ok, "upper"] + 1e-12).all() and (frame["upper"].dropna() <= 1).all()
    assert (frame["status"] == "clicked at every impression").any()          # the edge is there …
    # … and the plan never moves a document at the boundary, nor predicts more than its information allows: a swap of
    # 100 impressions cuts the weakest factor's error by at most a factor of 20 here
    status = dict(zip(frame["query_id"].astype(str) + "/" + frame["doc_id"].astype(str), frame["status"]))
    for s in plan["swaps"]:
        keys = dict(kv.split("=") for kv in s["document"].split(", "))
        assert status[f"{keys['query_id']}/{keys['doc_id']}"] == "ok", s
    assert plan["swaps"][0]["worst_se_after"] > plan["worst_se_before"] / 20
