"""Position bias per IG component (Agarwal et al., WSDM 2019 intervention harvesting; a PBM fitted by EM): an
independent implementation, recovery with intervals, per-component curves, the CLI."""

from collections import defaultdict

import numpy as np
import pandas as pd
import pytest
from loghelp import random_log

from ultr_core.identifiability import IdentifiabilityGraph
from ultr_core.identifiability.estimation import estimate_bias, estimate_bias_full
from ultr_core.identifiability.reports import analyse_identifiability
from ultr_core.logs.ingestion import CountTable


# --------------------------------------------------------------------------- estimation
def _oracle(df: pd.DataFrame, method: str) -> dict:
    """Agarwal et al.'s pivot-one and adjacent-chain, written directly from the paper with
    dictionaries and loops (independent of the vectorised implementation)."""
    n, c = defaultdict(int), defaultdict(int)
    for q, d, p, k in df[["query_id", "doc_id", "position", "click"]].itertuples(index=False):
        n[(q, d, p)] += 1
        c[(q, d, p)] += k
    ctr = {key: c[key] / n[key] for key in n}
    at = defaultdict(set)
    for (q, d, p) in ctr:
        at[(q, d)].add(p)

    def ratio(a, b):          # o(b)/o(a) from the documents shown at both a and b
        docs = [qd for qd, ps in at.items() if a in ps and b in ps]
        return sum(ctr[qd + (b,)] for qd in docs) / sum(ctr[qd + (a,)] for qd in docs)

    positions = sorted({p for (_, _, p) in ctr})
    if method == "pivot_one":
        return {p: 1.0 if p == 1 else ratio(1, p) for p in positions}
    out, acc = {1: 1.0}, 1.0
    for a, b in zip(positions[:-1], positions[1:]):
        acc *= ratio(a, b)
        out[b] = acc
    return out


@pytest.mark.parametrize("method", ["pivot_one", "adjacent_chain"])
def test_intervention_harvesting_matches_an_independent_implementation(method):
    df, _ = random_log(seed=1, n_sessions=800)
    g = IdentifiabilityGraph.from_counts(CountTable.from_log(df, ["position"], ["query_id", "doc_id"]))
    got = estimate_bias(g, method=method, n_bootstrap=0).set_index("position")["estimate"]
    want = _oracle(df, method)
    np.testing.assert_allclose(got.loc[list(want)].to_numpy(), list(want.values()), rtol=1e-10)


@pytest.mark.parametrize("method", ["pivot_one", "adjacent_chain", "all_pairs", "em"])
def test_estimators_recover_the_true_curve_with_intervals(method):
    df, truth = random_log(seed=2, n_sessions=20_000)
    g = IdentifiabilityGraph.from_counts(CountTable.from_log(df, ["position"], ["query_id", "doc_id"]))
    est = estimate_bias_full(g, method=method, n_bootstrap=40, seed=0)
    t = est.table.sort_values("position")
    assert np.abs(t["estimate"].to_numpy() - truth).max() < 0.04
    inside = (t["lower"] - 0.01 <= truth) & (truth <= t["upper"] + 0.01)
    assert inside.mean() >= 0.75                                   # 90 % intervals, 8 factors
    assert (t["upper"] - t["lower"]).iloc[1:].min() > 0            # real uncertainty, not a point


def test_curves_are_per_component_and_cross_component_ratios_refused():
    df, _ = random_log(seed=3, n_sessions=4000)
    # positions 1–4 and 5–8 never share a document: split each list into two halves by rank
    df = pd.concat([df[df["position"] <= 4],
                    df[df["position"] > 4].assign(doc_id=lambda x: x["doc_id"] + "_bottom")])
    an = analyse_identifiability(CountTable.from_log(df, ["position"], ["query_id", "doc_id"]),
                                 estimate="pivot_one", n_bootstrap=10)
    pb = an.report.position_bias
    curves = pb.curves
    assert an.report.n_components == 2 and set(curves["component"]) == {0, 1}
    for _, grp in curves.groupby("component"):
        assert grp.sort_values("position")["estimate"].iloc[0] == 1.0     # normalised within the component
    assert any("not identifiable" in n for n in pb.notes)


def test_cli_prints_curves_with_intervals(tmp_path):
    import subprocess
    import sys
    from pathlib import Path
    df, _ = random_log(seed=4, n_sessions=2000)
    f = tmp_path / "log.parquet"
    df.to_parquet(f)
    r = subprocess.run([sys.executable, "-m", "ultr_core", "ig", str(f), "--bootstrap", "30"], capture_output=True,
                       text=True, cwd=Path(__file__).resolve().parents[2])
    assert r.returncode == 0, r.stderr
    assert "IDENTIFIABLE" in r.stdout and "bands (document bootstrap" in r.stdout
    assert "position=8" in r.stdout and "[" in r.stdout.split("position=8")[1].splitlines()[0]


def test_all_pairs_bootstrap_interval_contains_its_estimate_when_bias_exceeds_one():
    # position 2 clicked twice as often as 1 and 3 for the same documents: ratios above 1, where a
    # saturated bootstrap start once returned [1, 1] around an estimate of 2
    rows = [("q0", f"d{(s + p) % 3}", p, int((s * p) % 4 == 0)) for s in range(300) for p in (1, 2, 3)]
    df = pd.DataFrame(rows, columns=["query_id", "doc_id", "position", "click"])
    g = IdentifiabilityGraph.from_counts(CountTable.from_log(df, ["position"], ["query_id", "doc_id"]))
    t = estimate_bias(g, method="all_pairs", n_bootstrap=30)
    assert t["estimate"].max() > 1.5
    assert ((t["lower"] <= t["estimate"] + 1e-6) & (t["estimate"] <= t["upper"] + 1e-6)).all()
