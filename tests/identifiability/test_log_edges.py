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
from ultr_core.identifiability.uncertainty import factor_uncertainty
from ultr_core.simulation.edge_logs import bridge_log, shuffled_log, sparse_log


def yandex_like(path, seed: int):
    sparse_log(seed)[0].to_csv(path, index=False)
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


def test_the_bridging_document_is_named_and_the_band_covers(tmp_path, capsys):
    """Positions 4–6 reach position 1 through one document (shown at 3 or 4 in 0.8 % of the sessions): the weakest
    links name it first (losing it cuts the factor off), and the band drawn with the curve spans at least the Fisher
    interval's ratio — the document bootstrap alone is far narrower (it resamples the bridge whole)."""
    frame, theta = bridge_log(0)
    frame.to_csv(tmp_path / "b.csv", index=False)
    assert main(["ig", str(tmp_path / "b.csv"), "--json", "--bootstrap", "20"]) == 0
    pb = json.loads(capsys.readouterr().out)["position_bias"]
    first = pb["practical_identifiability"]["weakest_links"][0]
    assert first["kind"] == "document" and first["link"].startswith("query_id=0, doc_id=7")
    assert first["disconnects"] and 0 < first["share"] <= 1
    for c in pb["curves"]:
        assert c["lower"] <= c["estimate"] <= c["upper"]
        if c["position"] >= 4:
            assert c["upper"] / c["lower"] >= c["fisher_upper"] / c["fisher_lower"] * (1 - 1e-9)
            if c["bootstrap_lower"] is not None:          # resamples without the bridge leave no ratio
                assert (c["bootstrap_upper"] - c["bootstrap_lower"]) < 0.5 * (c["upper"] - c["lower"])
            assert "fisher" in c["band"]


def _linked_only_by_an_always_clicked_document(path):
    """Positions 1–2 linked by ten documents clicked at random; position 3 reached only through document 99, clicked at
    every impression, and document 98, never clicked (each shown at 2 or 3; the others shown at 3 nowhere else)."""
    rng = np.random.default_rng(0)
    rows = []
    for s in range(400):
        a, b = rng.choice(10, 2, replace=False)
        rest = {0: (b, 1000 + s), 1: (99, 98), 2: (98, 99), 3: (b, 1000 + s)}[s % 4]
        for pos, d in enumerate((a, *rest), 1):
            p = {99: 1.0, 98: 0.0}.get(int(d), 0.6 / pos)
            rows.append((s, 0, int(d), pos, int(rng.random() < p)))
    pd.DataFrame(rows, columns=["session_id", "query_id", "doc_id", "position", "click"]).to_csv(path, index=False)


def test_no_band_where_only_an_always_clicked_document_links_a_factor(tmp_path, capsys):
    """Issue #58 (boundary documents carry no information): the curve's harvesting ratio of positions 3 and 2 comes
    from one document clicked at all of its impressions (and one never clicked), so every resample gives that link
    ratio ≈ 1 and the bootstrap drew position 3 about as sure as position 2 — beside a factor the same report calls
    unidentified (on a 4-row log: [1.000, 1.000]).  Now no band is drawn there, the report says why, and the
    bootstrap's bounds stay in the JSON; the informative factors keep theirs."""
    _linked_only_by_an_always_clicked_document(tmp_path / "log.csv")
    assert main(["ig", str(tmp_path / "log.csv"), "--json", "--bootstrap", "20"]) == 0
    pb = json.loads(capsys.readouterr().out)["position_bias"]
    by = {c["label"]: c for c in pb["curves"]}
    third = by["position=3"]
    assert third["identification"] == "unidentified" and third["log_se"] is None
    second = by["position=2"]
    assert third["estimate"] == pytest.approx(second["estimate"], rel=1e-9)
    assert third["bootstrap_upper"] / third["bootstrap_lower"] <= 2       # the bootstrap alone: "identified" by ×2
    assert third["lower"] is None and third["upper"] is None and third["band"] == "none"
    assert "position=3" in pb["practical_identifiability"]["no_band"]
    # the weakest links are about the weakest factor with a variance, and say which (the text said "the weakest
    # factor's variance" under "weakest factors: position=3")
    assert {x["factor"] for x in pb["practical_identifiability"]["weakest_links"]} == {"position=2"}
    assert second["identification"] == "identified" and second["lower"] <= second["estimate"] <= second["upper"]
    assert main(["ig", str(tmp_path / "log.csv"), "--bootstrap", "20"]) == 0
    text = capsys.readouterr().out
    assert "position=3" in next(line for line in text.splitlines() if "no band" in line)
    assert "[—]" in next(line for line in text.splitlines() if line.strip().startswith("position=3"))
    assert "carries 100% of position=2's variance" in text


@pytest.mark.slow
def test_band_coverage_at_a_bridging_document():
    """The claim of docs/results/edge_coverage.md over 8 seeds (the study runs 100): the band covers the true
    o_k/o_1 of positions 4–6 in at least 18 of 24 cases; the document bootstrap alone in at most 12."""
    import sys
    sys.path.insert(0, "experiments")
    from edge_coverage import one_seed
    hits = sum(one_seed(s, 20) for s in range(8))
    assert hits[:, 0].sum() >= 18 and hits[:, 1].sum() <= 12


def test_the_profile_reaches_zero_at_the_estimate_on_a_sparse_log(tmp_path, capsys):
    """Issue #58 item 1: on the Yandex-like log the profile of the weakest position had ~6 points, ran flat at 0
    between its bounds and never reached 0 at the estimate (its start was not the maximum).  Now: a curve of ≥ 10
    points, 0 at the estimate, rising on both sides, and an interval that contains the estimate."""
    log = yandex_like(tmp_path / "log.csv", 0)
    assert main(["ig", str(log), "--profile", "position=10", "--json", "--estimate", "none"]) == 0
    p = json.loads(capsys.readouterr().out)["profile"]
    x = np.array([a for a, _ in p["curve"]])
    y = np.array([b for _, b in p["curve"]])
    assert len(x) >= 10 and y[np.argmin(np.abs(np.log(x / p["estimate"])))] == pytest.approx(0.0, abs=1e-6)
    left, right = y[x < p["estimate"]], y[x > p["estimate"]]
    assert (np.diff(left) <= 1e-6).all() and (np.diff(right) >= -1e-6).all()
    assert p["lower"] < p["estimate"] < p["upper"]


def test_every_factor_has_its_fisher_interval_beyond_the_curves(tmp_path, capsys):
    """Issue #58 item 3: with more than 10 components only the 10 largest get curves, but every factor gets PBM's
    ratio and its Fisher interval in `practical_identifiability.factors` (equal to the curve's where both exist)."""
    rng = np.random.default_rng(0)
    rows = []
    for q in range(14):                               # 14 queries, each its own context: 14 components
        for s in range(120):
            order = rng.permutation(3)
            for p, d in enumerate(order, 1):
                rows.append((q * 1000 + s, q, d, p, q, int(rng.random() < 0.6 / p)))
    pd.DataFrame(rows, columns=["session_id", "query_id", "doc_id", "position", "context", "click"]).to_csv(
        tmp_path / "ctx.csv", index=False)
    assert main(["ig", str(tmp_path / "ctx.csv"), "--bias", "context,position", "--json", "--bootstrap", "0"]) == 0
    pb = json.loads(capsys.readouterr().out)["position_bias"]
    f = pb["practical_identifiability"]["factors"]
    assert len(f["label"]) == 42 and len({c["component"] for c in pb["curves"]}) == 10
    assert sum(x is not None for x in f["fisher_lower"]) == 42
    by_label = dict(zip(f["label"], f["fisher_upper"]))
    for c in pb["curves"]:
        assert c["fisher_upper"] == pytest.approx(by_label[c["label"]])


def test_an_output_that_appears_during_the_run_is_not_replaced(tmp_path, monkeypatch, capsys):
    """Issue #61 item 6: `--documents` (and `--relevance`, `simulate --out`) is checked before the fit and written
    after it; a file created in between is kept (exit 2, one message), and `--force` still overwrites."""
    from ultr_core.identifiability import precision as practical
    log = yandex_like(tmp_path / "log.csv", 0)
    out = tmp_path / "docs.csv"
    real = practical.documents_frame

    def appear(*args, **kw):                              # another process creates the file mid-run
        out.write_text("theirs\n")
        return real(*args, **kw)
    monkeypatch.setattr(practical, "documents_frame", appear)
    assert main(["ig", str(log), "--estimate", "none", "--documents", str(out)]) == 2
    assert out.read_text() == "theirs\n" and "appeared while the command ran" in capsys.readouterr().err
    assert not list(tmp_path.glob(".docs.csv.*"))         # no temporary left behind
    out.unlink()
    monkeypatch.setattr(practical, "documents_frame", real)
    assert main(["ig", str(log), "--estimate", "none", "--documents", str(out)]) == 0
    assert main(["ig", str(log), "--estimate", "none", "--documents", str(out), "--force"]) == 0


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_the_fit_converges_on_varied_lists(seed):
    """Lists that vary (few impressions per document, some clicked at each): the Newton fit used to stop at 100 steps
    with the scores still 5·10⁻³–10⁻² (a document's cell clicked at every impression weighed ~200× its curvature).
    Now it converges, and the scores computed here from the definition vanish at the fit on its active set: every
    fitted document's and every non-reference factor's Σ (c − n·p)/(1 − p) — the maximum of a concave problem."""
    frame, _ = shuffled_log(seed)
    cells = frame.groupby(["query_id", "doc_id", "position"], as_index=False)["click"].agg(["size", "sum"])
    doc = cells.groupby(["query_id", "doc_id"]).ngroup().to_numpy()
    fac = cells["position"].to_numpy() - 1
    n, c = cells["size"].to_numpy(float), cells["sum"].to_numpy(float)
    D, F = int(doc.max()) + 1, 10
    u = factor_uncertainty(doc, fac, n, c=c, n_docs=D, n_factors=F, component=np.zeros(F, np.int64))
    assert u.converged and abs(u.decrement) < 1e-10
    rows = u.counts[2]
    assert np.count_nonzero(c[rows] == n[rows]) > 0          # cells clicked at every impression are in the fit
    p = u.r_free[doc[rows]] * u.o[fac[rows]]
    assert p.max() < 1
    score = (c[rows] - n[rows] * p) / (1 - p)
    assert np.abs(np.bincount(doc[rows], score, D)).max() < 1e-4
    assert np.abs(np.bincount(fac[rows], score, F)[1:]).max() < 1e-4


def test_bootstrap_refits_that_stall_are_counted(tmp_path, capsys, monkeypatch):
    """Every fit says when it did not converge (issue #58): on the Yandex-like log (6,000 sessions, 60 queries) 2 of
    the EM curve's 100 bootstrap refits end their 100 Newton steps with a decrement above 10⁻⁸ (a block creeping
    towards p = 1 at a linear rate); the note counts them, and says nothing when none stalls."""
    import ultr_core.identifiability.uncertainty as uncertainty
    log = tmp_path / "log.csv"
    sparse_log(0, n_sessions=6000, n_queries=60)[0].to_csv(log, index=False)

    def notes():
        assert main(["ig", str(log), "--estimate", "em", "--json"]) == 0
        return " ".join(json.loads(capsys.readouterr().out)["position_bias"]["notes"])
    assert "2 of 100 stopped with it above 1e-08" in notes()
    monkeypatch.setattr(uncertainty, "STALLED", np.inf)
    assert "stopped with it above" not in notes()


def test_a_plan_with_nothing_to_propose_says_why_and_names_what_it_cannot_see(tmp_path, capsys):
    """On the same log every informative document is already shown at positions 1 and 2, and position 3 is reached
    only through a document clicked at every impression: `--certainty 3` printed the weakest factor's error and
    nothing else.  Now the plan says why it has no swap and names position 3, which no swap can be predicted at; a
    plan with its swaps has no such note."""
    _linked_only_by_an_always_clicked_document(tmp_path / "log.csv")
    assert main(["ig", str(tmp_path / "log.csv"), "--certainty", "3", "--bootstrap", "0", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)["certainty_plan"]
    assert plan["swaps"] == [] and plan["weakest_factor"] == "position=2"
    assert plan["note"].startswith("no swap to propose") and "(position=3)" in plan["note"]
    assert main(["ig", str(tmp_path / "log.csv"), "--certainty", "3", "--bootstrap", "0"]) == 0
    assert "  note: no swap to propose" in capsys.readouterr().out
    log = yandex_like(tmp_path / "y.csv", 0)
    assert main(["ig", str(log), "--certainty", "3", "--bootstrap", "0", "--json"]) == 0
    full = json.loads(capsys.readouterr().out)["certainty_plan"]
    assert len(full["swaps"]) == 3 and full.get("note") is None


def test_deep_curves_say_what_the_text_leaves_out(tmp_path, capsys):
    """Deep positions: the text lists 30 factors of a component and stopped there without a word, while its weakest
    factors (named below it) lay deeper.  Now the cut is said, with the factors it leaves out; the JSON has all."""
    rng = np.random.default_rng(1)
    rows = [(s, s % 5, int(d), k + 1, int(rng.random() < 0.7 / (k + 1) ** 0.8 * (0.3 + 0.01 * d)))
            for s in range(300) for k, d in enumerate(rng.permutation(60)[:36])]
    pd.DataFrame(rows, columns=["session_id", "query_id", "doc_id", "position", "click"]).to_csv(
        tmp_path / "deep.csv", index=False)
    assert main(["ig", str(tmp_path / "deep.csv"), "--bootstrap", "0"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert sum(line.strip().startswith("position=") for line in lines) == 30
    assert ("    … 6 more factors of this component (position=31 to position=36): the JSON report lists every one"
            in lines)
    assert main(["ig", str(tmp_path / "deep.csv"), "--bootstrap", "0", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["position_bias"]["curves"]) == 36


def test_the_curve_figure_draws_every_band_a_factor_has():
    """A factor without a band (no information reaches it) in the middle of a curve: one polygon through its NaN
    bounds drew no band at all (seen in chromium on the Upload page).  Now each run of factors with a band gets its
    polygon, and a lone factor with one an error bar; the estimates' line keeps every factor."""
    from ultr_core.app.graph_figures import bias_curves_figure
    nan = float("nan")
    curves = pd.DataFrame({"component": 0, "factor": range(6), "label": [f"position={k}" for k in range(1, 7)],
                           "position": range(1, 7), "estimate": [1.0, 0.6, 0.5, 0.4, 0.3, 0.2],
                           "lower": [1.0, 0.5, nan, 0.3, nan, nan], "upper": [1.0, 0.7, nan, 0.5, nan, nan],
                           "impressions": 100})
    fig = bias_curves_figure(curves)
    polygons = [t for t in fig.data if t.fill == "toself"]
    bars = [t for t in fig.data if t.error_y is not None and t.error_y.array is not None]
    assert len(polygons) == 1 and list(polygons[0].x) == [1, 2, 2, 1] and list(polygons[0].y) == [1.0, 0.7, 0.5, 1.0]
    assert len(bars) == 1 and list(bars[0].x) == [4] and bars[0].error_y.array[0] == pytest.approx(0.1)
    line = next(t for t in fig.data if t.name == "component 0")
    assert list(line.y) == [1.0, 0.6, 0.5, 0.4, 0.3, 0.2]
    assert [row[0] for row in line.customdata] == ["interval [1.000, 1.000]", "interval [0.500, 0.700]",
                                                   "no interval", "interval [0.300, 0.500]", "no interval",
                                                   "no interval"]      # the hover said "NaN"


def test_a_factor_without_an_estimate_is_told_the_true_reason(tmp_path, capsys):
    """Every document clicked at every impression, shuffled over four positions: the graph is connected, yet all_pairs
    estimates only the reference.  The note said the factors "share no document with the neighbouring factor" — they
    share all twelve; now it says that the documents they share carry no information.  A factor that really shares no
    document with the reference (a chain a: 1–2, b: 2–3) keeps pivot_one's structural reason."""
    rows = [(s, s % 3, f"d{s % 3}_{(s + p) % 4}", p + 1, 1) for s in range(60) for p in range(4)]
    pd.DataFrame(rows, columns=["session_id", "query_id", "doc_id", "position", "click"]).to_csv(
        tmp_path / "all.csv", index=False)
    assert main(["ig", str(tmp_path / "all.csv"), "--json", "--bootstrap", "20"]) == 0
    notes = json.loads(capsys.readouterr().out)["position_bias"]["notes"]
    assert any("3 factors share only documents clicked at every impression or at none with the neighbouring" in n
               for n in notes), notes
    assert not any("share no document" in n for n in notes), notes
    assert main(["ig", str(tmp_path / "all.csv"), "--bootstrap", "20"]) == 0          # the verdict says so at once
    text = capsys.readouterr().out.splitlines()
    verdict = next(i for i, line in enumerate(text) if "✔ IDENTIFIABLE" in line)
    assert text[verdict + 1].startswith("  but the clicks leave 3 of 4 factors unidentified: no document that carries "
                                        "information"), text[verdict + 1]
    rng = np.random.default_rng(0)
    chain = [(s, "q", d, p, int(rng.random() < 0.5 / p)) for s in range(200)          # a at 1 and 2, b at 2 and 3
             for d, p in ((("a", 1), ("b", 2)) if s % 2 else (("a", 2), ("b", 3)))]
    pd.DataFrame(chain, columns=["session_id", "query_id", "doc_id", "position", "click"]).to_csv(
        tmp_path / "chain.csv", index=False)
    assert main(["ig", str(tmp_path / "chain.csv"), "--json", "--bootstrap", "20", "--estimate", "pivot_one"]) == 0
    notes = json.loads(capsys.readouterr().out)["position_bias"]["notes"]
    assert any("1 factor shares no document with the reference factor: not estimated by pivot_one" in n
               for n in notes), notes
    assert main(["ig", str(tmp_path / "chain.csv"), "--bootstrap", "20"]) == 0        # every factor identified
    assert "but the clicks leave" not in capsys.readouterr().out
