"""Click models (issue #34): hand-computed parameters on toy logs, marginal click probabilities against an
independent enumeration of every click vector, scores by their definitions, recovery on PBM clicks, the CLI and
its refusals.  Agreement with PyClick itself is benchmarks/pyclick_agreement.py (docs/click_models.md)."""
import itertools
import json

import numpy as np
import pandas as pd
import pytest
from clihelp import cli, refused

from ultr_core.clickmodels import CLICK_MODELS, MODEL_BY_KEY, SessionArrays, compare_click_models
from ultr_core.clickmodels.cascade_ml import CCM, DBN
from ultr_core.clickmodels.evaluation import scores
from ultr_core.clickmodels.models import CM, DCM, PBM, RCTR, SDBN
from ultr_core.clickmodels.sessions import SessionTable
from ultr_core.clickmodels.ubm import UBM


def toy(rows, depth):
    """Sessions (query, docs, clicks) as a click table."""
    recs = [{"session_id": s, "query_id": q, "doc_id": d, "position": r + 1, "click": c}
            for s, (q, docs, clicks) in enumerate(rows) for r, (d, c) in enumerate(zip(docs, clicks))]
    return pd.DataFrame(recs)


TWO = toy([("q", "ab", (1, 0)), ("q", "ab", (0, 1))], 2)


def test_every_model_record_is_complete_and_named_once():
    assert len({s.key for s in CLICK_MODELS}) == len({s.label for s in CLICK_MODELS}) == len(CLICK_MODELS)
    for s in CLICK_MODELS:
        assert s.key and s.label and s.cite and s.params and s.relevance and s.inference in ("mle", "em", "gradient")
        assert hasattr(s.cls, "fit") and hasattr(s.cls, "full") and s.colour.startswith("#")
    assert len({s.colour for s in CLICK_MODELS}) == len(CLICK_MODELS)          # every model its own colour


def test_counting_models_by_hand_on_two_sessions():
    t = SessionArrays.from_frame(TWO).compress()          # pairs: a = 0, b = 1
    assert RCTR().fit(t).ctr.tolist() == [(1 + 1) / (2 + 2), (1 + 1) / (2 + 2)]
    cm = CM().fit(t)                                        # session 1 stops at a; session 2 sees a, b
    assert cm.attr.tolist() == [(1 + 1) / (2 + 2), (1 + 1) / (2 + 1)]
    dcm = DCM().fit(t)                                      # both sessions examined down to their last click
    assert dcm.attr.tolist() == [(1 + 1) / (2 + 2), (1 + 1) / (2 + 1)]
    assert dcm.cont.tolist() == [(1 + 0) / (2 + 1), (1 + 0) / (2 + 1)]   # each click is its session's last
    sdbn = SDBN().fit(t)
    assert sdbn.sat.tolist() == [(1 + 1) / (2 + 1), (1 + 1) / (2 + 1)]


def test_pbm_em_first_step_by_hand():
    t = SessionArrays.from_frame(TWO).compress()
    m = PBM().fit(t, n_iter=1)                             # from α = γ = ½: a non-click's posterior is ⅓
    assert np.allclose(m.attr, [(1 + 1 + 1 / 3) / 4, (1 + 1 + 1 / 3) / 4])
    assert np.allclose(m.exam, [(1 + 1 + 1 / 3) / 4] * 2)


def _enumerated_marginals(model, pairs, depth):
    """P(c_r = 1) by summing the model's joint probability Π_r P(c_r | c_<r) over all 2^D click vectors."""
    out = np.zeros(depth)
    for clicks in itertools.product([0, 1], repeat=depth):
        t = SessionTable(pairs[None, :], np.array([clicks], bool), np.ones(1), model.attr.size, 1)
        out += np.prod(model.conditional(t)) * np.array(clicks)
    return out


@pytest.mark.parametrize("cls", [PBM, UBM, DCM, SDBN, DBN, CCM])
def test_marginal_click_probabilities_match_an_enumeration_of_every_click_vector(cls):
    rng = np.random.default_rng(3)
    rows = [("q", "abcd", tuple(rng.integers(0, 2, 4))) for _ in range(30)]
    t = SessionArrays.from_frame(toy(rows, 4)).compress()
    model = cls().fit(t)
    pairs = np.arange(4)
    full = model.full(SessionTable(pairs[None, :], np.zeros((1, 4), bool), np.ones(1), 4, 1))[0]
    assert np.allclose(full, _enumerated_marginals(model, pairs, 4), atol=1e-12)


def test_scores_by_their_definitions():
    t = SessionArrays.from_frame(TWO).compress()
    m = PBM().fit(t)
    cond, full = m.conditional(t), m.full(t)
    s = scores(m, t)
    assert np.isclose(s["log_likelihood"], np.mean(np.log(cond).mean(1)))
    obs = np.where(t.clicks, full, 1 - full)
    assert np.allclose(s["perplexity_by_rank"], 2 ** (-np.log2(obs).mean(0)))


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_on_pbm_clicks_pbm_explains_held_out_sessions_best_and_recovers_the_curve(seed):
    from ultr_core.simulation.logspec import LogSpec
    ds, sim, log = LogSpec.parse(f"synthetic:100/noise=0.0/shuffle=1.0/sessions=40000/seed={seed}").simulate()
    out = compare_click_models(log.frame, "sim", models=None, split=0.75)
    ll = {k: v.log_likelihood for k, v in out.models.items()}
    assert max(ll, key=ll.get) in ("pbm", "ubm", "trust")         # UBM and Trust (noise 0) nest PBM …
    assert ll["pbm"] > max(ll.values()) - 0.001                   # … and gain next to nothing on PBM's clicks
    assert ll["pbm"] > max(ll[k] for k in ("gctr", "rctr", "dctr", "cm", "dcm", "sdbn"))
    exam = np.array(out.models["pbm"].bias["examination"])
    truth = sim.observation_curve(10)
    assert np.allclose(exam / exam[0], truth / truth[0], atol=0.05)


def test_cli_prints_json_and_writes_relevance(tmp_path, capsys):
    path = tmp_path / "log.csv"
    rng = np.random.default_rng(0)
    rows = [(f"q{i % 20}", [f"d{(i + k) % 7}" for k in range(5)], tuple(rng.integers(0, 2, 5))) for i in range(400)]
    recs = [{"session_id": s, "query_id": q, "doc_id": d, "position": r + 1, "click": c}
            for s, (q, docs, clicks) in enumerate(rows) for r, (d, c) in enumerate(zip(docs, clicks))]
    pd.DataFrame(recs).to_csv(path, index=False)
    rc, out, _ = cli(["click-models", path, "--models", "pbm,dctr", "--relevance", tmp_path / "rel.csv",
                      "--json"], capsys)
    rep = json.loads(out)
    assert rc == 0 and set(rep["models"]) == {"pbm", "dctr"} and rep["train_sessions"] == 300
    for key in ("log_likelihood", "perplexity", "perplexity_by_rank", "conditional_perplexity", "seconds"):
        assert key in rep["models"]["pbm"]
    rel = pd.read_csv(tmp_path / "rel.csv")
    assert {"query_id", "doc_id", "impressions", "clicks", "PBM", "DCTR"} <= set(rel.columns)
    assert rel["query_id"].astype(str).str.startswith("q").all()       # the file's own ids


def test_the_typed_comparison_writes_the_json_keys_it_had(tmp_path):
    """Issue #59: the comparison is a frozen record of frozen ModelFit records; its JSON keeps the keys the dicts had
    (what applies only: ``converged`` for the gradient fits, ``prior`` with the learned prior), and the records cannot
    be changed in place — the judges' figures come on a copy."""
    import dataclasses

    from ultr_core.clickmodels.compare import ClickModelComparison, ModelFit
    from ultr_core.clickmodels.judgement_agreement import judge_comparison
    from ultr_core.logs.judgements import read_judgements
    from ultr_core.simulation.logspec import LogSpec
    _, _, log = LogSpec.parse("synthetic:40/shuffle=1.0/sessions=3000/seed=1").simulate()
    out = compare_click_models(log.frame, "sim", models=["pbm", "dbn"])
    assert isinstance(out, ClickModelComparison) and all(isinstance(m, ModelFit) for m in out.models.values())
    js = out.to_json()
    assert list(js) == ["train_sessions", "test_sessions", "dropped_test_sessions", "depth", "notes", "models",
                        "best_fit"]
    scores = ["label", "log_likelihood", "perplexity", "perplexity_by_rank", "conditional_perplexity",
              "conditional_perplexity_by_rank", "bias", "seconds"]
    assert list(js["models"]["pbm"]) == scores and list(js["models"]["dbn"]) == scores + ["converged"]
    assert "prior" in compare_click_models(log.frame, "sim", models=["pbm"], prior="learned").to_json()[
        "models"]["pbm"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        out.models["pbm"].seconds = 0.0
    f = log.frame.drop_duplicates(["query_id", "doc_id"])
    qrels = "".join(f"{q} 0 {d} {int(g)}\n" for q, d, g in zip(f["query_id"], f["doc_id"], f["label"]))
    judged = judge_comparison(out, read_judgements(qrels.encode(), name="qrels"), include_prior=True)
    assert out.judgements is None and out.models["pbm"].judgements is None and "grade" not in out.relevance
    assert judged.models["pbm"].judgements.pairs == judged.judgements.pairs_scored > 0
    assert list(judged.to_json())[-1] == "judgements" and "grade" in judged.relevance


@pytest.mark.parametrize("args, words", [
    (["--models", "pbm,nope"], ["unknown click model 'nope'", "pbm"]),
    (["--split", "1.5"], ["split", "(0, 1)"]),
    (["--split", "0"], ["split", "(0, 1)"]),
])
def test_cli_refuses_bad_options(tmp_path, capsys, args, words):
    path = tmp_path / "log.csv"
    TWO.to_csv(path, index=False)
    refused(["click-models", path, *args], capsys, *words)


def test_cli_refuses_gaps_too_long_lists_and_logs_without_sessions(tmp_path, capsys):
    gap = tmp_path / "gap.csv"
    toy([("q", "ab", (1, 0)), ("q", "abc", (0, 1, 0))], 3).assign(
        position=[1, 2, 1, 3, 4]).to_csv(gap, index=False)
    refused(["click-models", gap], capsys, "session 2", "ranks 1 to 3 once each")
    nosess = tmp_path / "nosess.csv"
    TWO.drop(columns="session_id").to_csv(nosess, index=False)
    refused(["click-models", nosess], capsys, "session_id")
    deep = tmp_path / "deep.csv"
    docs = [f"d{i}" for i in range(51)]
    toy([("q", docs, (0,) * 51)] * 2, 51).to_csv(deep, index=False)
    refused(["click-models", deep], capsys, "51 exceed the 50 ranks")


#: sessions of varying length: [a b c] clicks (1 0 1), [a b] (0 1), [b a c d] (0 0 0 1), [c] (1)
RAGGED = toy([("q", "abc", (1, 0, 1)), ("q", "ab", (0, 1)), ("q", "bacd", (0, 0, 0, 1)), ("q", "c", (1,))], 4)


def test_lists_of_varying_length_by_hand():
    """Issue #47, item 6: ragged lists are padded and masked — GCTR's CTR counts shown cells only (1 + 5 clicks in
    2 + 10 shown), and a session's log-likelihood is the mean over the ranks it shows."""
    from ultr_core.clickmodels.models import GCTR
    t = SessionArrays.from_frame(RAGGED).compress()
    assert t.depth == 4 and t.mask.sum() == 10
    m = GCTR().fit(t)
    assert m.ctr == pytest.approx(6 / 12)
    assert scores(m, t)["log_likelihood"] == pytest.approx(np.log(0.5))        # every shown cell: ½
    dcm = DCM().fit(t)                         # ranks up to the last click: a 3×, b 3×, c 3×, d 1×; clicks a1 b1 c2 d1
    assert dcm.attr[:4] == pytest.approx([(1 + 1) / (2 + 3), (1 + 1) / (2 + 3), (1 + 2) / (2 + 3), (1 + 1) / (2 + 1)])


@pytest.mark.parametrize("seed", [0, 1])
def test_pbm_on_ragged_lists_equals_em_on_cell_counts(seed):
    """PBM on a log whose lists were cut at random lengths equals an independent EM on the (document, rank) counts
    of the shown cells (the EM on counts, PyClick's prior, 50 iterations)."""
    from ultr_core.clickmodels.pbm import pbm_em
    from ultr_core.clickmodels.recovery import sample_sessions
    f = sample_sessions("pbm", 3000, n_queries=20, depth=8, seed=seed)
    cut = np.random.default_rng(seed).integers(3, 9, f["session_id"].max() + 1)
    f = f[f["position"] <= cut[f["session_id"]]]
    t = SessionArrays.from_frame(f).compress()
    assert t.shown is not None and not t.shown.all()
    m = PBM().fit(t)
    cells = (t.pairs * t.depth + np.arange(t.depth))[t.mask]
    w = np.broadcast_to(t.weight[:, None], t.pairs.shape)[t.mask]
    size = t.n_pairs * t.depth
    n, c = np.bincount(cells, w, size), np.bincount(cells, w * t.clicks[t.mask], size)
    k = np.flatnonzero(n > 0)
    attr, exam = pbm_em(k // t.depth, k % t.depth, n[k], c=c[k], n_pairs=t.n_pairs, depth=t.depth, n_iter=50,
                        prior=(1.0, 2.0), cap=1 - 1e-6)
    seen = np.bincount(cells, w, size).reshape(t.n_pairs, t.depth).sum(1) > 0
    assert np.allclose(m.exam, exam, atol=1e-10) and np.allclose(m.attr[seen], attr[seen], atol=1e-10)


def test_ragged_and_deep_lists_through_the_out_of_core_reader_agree_with_memory(tmp_path, capsys):
    """The CLI's DuckDB patterns and the in-memory sessions give one comparison on a ragged log with lists of up to
    15 results (deeper than PyClick's 10)."""
    from ultr_core.clickmodels.recovery import sample_sessions
    f = sample_sessions("dbn", 2000, n_queries=10, depth=15, seed=4)
    cut = np.random.default_rng(4).integers(5, 16, f["session_id"].max() + 1)
    f = f[f["position"] <= cut[f["session_id"]]].reset_index(drop=True)
    path = tmp_path / "ragged.csv"
    f.to_csv(path, index=False)
    rc, out, err = cli(["click-models", path, "--models", "pbm,dcm,dbn", "--json"], capsys)
    assert rc == 0, err
    cli_ll = {k: m["log_likelihood"] for k, m in json.loads(out)["models"].items()}
    mem = compare_click_models(f, "ragged", models=["pbm", "dcm", "dbn"])
    assert mem.depth == 15
    for k, m in mem.models.items():
        assert cli_ll[k] == pytest.approx(m.log_likelihood, abs=1e-6), k
    fit, said = mem.best_fit, json.loads(out)["best_fit"]        # the typed comparison; the JSON keys it had
    assert set(said) == {"best", "label", "runner_up", "versus", "tied", "labels", "rule"}
    assert said["best"] == fit.best and said["tied"] == list(fit.tied) and set(said["versus"]) == set(fit.versus)
    for k, iv in fit.versus.items():
        assert iv.lower <= iv.estimate <= iv.upper
        assert said["versus"][k]["estimate"] == pytest.approx(iv.estimate, abs=1e-6)
    learned = compare_click_models(f, "ragged", models=["pbm", "ubm", "sdbn"], prior="learned")   # its held-out fifth
    assert all(np.isfinite(m.log_likelihood) for m in learned.models.values())


def test_model_keys_are_the_cli_choices():
    assert list(MODEL_BY_KEY) == [s.key for s in CLICK_MODELS]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_on_a_fixed_ranking_dctr_explains_clicks_as_well_as_pbm(seed):
    """docs/click_models.md: every query always shown in one order — position and document are confounded, so
    a per-document CTR fits held-out sessions as well as PBM (within 0.002 nats per rank)."""
    from ultr_core.simulation.logspec import LogSpec
    ds, sim, log = LogSpec.parse(f"synthetic:100/noise=0.0/sessions=20000/seed={seed}").simulate()
    fitted = compare_click_models(log.frame, "sim", models=["pbm", "dctr"], split=0.75).models
    ll = {k: v.log_likelihood for k, v in fitted.items()}
    assert abs(ll["dctr"] - ll["pbm"]) < 0.002, ll


def test_cli_reads_a_pyclick_session_file(tmp_path, capsys):
    rng = np.random.default_rng(1)
    lines = []
    for i in range(120):
        docs = [f"d{(i + k) % 6}" for k in range(3)]
        lines.append(f"q{i % 4}\t{','.join(docs)} : {' , '.join(d for d in docs if rng.random() < 0.3)}")
    path = tmp_path / "sessions.txt"
    path.write_text("; ".join(lines))
    rc, out, _ = cli(["click-models", path, "--format", "pyclick", "--models", "pbm", "--json"], capsys)
    rep = json.loads(out)
    assert rc == 0 and rep["train_sessions"] == 90 and rep["test_sessions"] == 30 and rep["depth"] == 3


def test_relevance_joins_each_document_with_its_ig_component(tmp_path):
    """x, y swap between ranks 1–2 and z, w between ranks 3–4, never across: two IG components, named per
    (query, document) in the file's ids."""
    from ultr_core.identifiability.reports import analyse_identifiability, document_components
    from ultr_core.logs.mapping import read_user_log
    rows = [("qa", "xyzw", (1, 0, 0, 0)), ("qa", "yxwz", (0, 1, 1, 0))] * 20
    path = tmp_path / "log.csv"
    toy(rows, 4).to_csv(path, index=False)
    log, _ = read_user_log(str(path))
    comp = document_components(analyse_identifiability(log), log)
    by = dict(zip(comp["query_id"] + "/" + comp["doc_id"], comp["component"]))
    assert sorted(by) == ["qa/w", "qa/x", "qa/y", "qa/z"]
    assert by["qa/x"] == by["qa/y"] != by["qa/z"] == by["qa/w"]


def test_cm_below_the_first_click_is_certain_not_a_penalty():
    """Under CM the user examines everything down to the first click and leaves after it: P(c_r | no click above)
    = α_r, no click below the first has probability 1 (PyClick: the marginal above, 10⁻⁶ below, reproduced by
    ``pyclick_conditional=True``)."""
    from ultr_core.clickmodels.sessions import SessionTable
    t = SessionTable(np.array([[0, 1, 2]]), np.array([[True, False, False]]), np.array([1.0]), 3, 1)
    cm = CM().fit(t)
    a = cm.attr[0]
    assert cm.conditional(t)[0].tolist() == [a, 1.0, 1.0]
    assert CM(pyclick_conditional=True).fit(t).conditional(t)[0].tolist() == [a, 1e-6, 1e-6]
    skip = SessionTable(np.array([[0, 1, 2]]), np.array([[False, True, False]]), np.array([1.0]), 3, 1)
    a0, a1 = cm.attr[0], cm.attr[1]                  # rank 2 is examined for sure after no click at rank 1
    assert np.allclose(cm.conditional(skip)[0], [1 - a0, a1, 1.0])
    assert np.allclose(CM(pyclick_conditional=True).fit(t).conditional(skip)[0], [1 - a0, (1 - a0) * a1, 1e-6])
    clicked_below = SessionTable(np.array([[0, 1, 2]]), np.array([[True, True, False]]), np.array([1.0]), 3, 1)
    assert cm.conditional(clicked_below)[0, 1] == 1e-6                        # impossible under CM


def test_duckdb_patterns_score_as_the_in_memory_sessions(tmp_path):
    """The CLI's default path (DuckDB groups sessions into patterns, clickmodels.patterns) gives the scores, counts
    and relevance table of the in-memory path (SessionArrays → compress)."""
    from ultr_core.clickmodels.compare import compare_click_models
    from ultr_core.clickmodels.outofcore import sessions_from_source
    from ultr_core.clickmodels.patterns import patterns_from_source
    rng = np.random.default_rng(3)
    S, D = 3000, 5
    q = rng.integers(0, 40, S)
    docs = np.argsort(rng.random((S, D)), axis=1)
    frame = pd.DataFrame({"session_id": np.repeat(np.arange(S) * 7 + 3, D), "query_id": np.repeat(q, D),
                          "doc_id": (docs + 10 * q[:, None]).ravel(), "position": np.tile(np.arange(1, D + 1), S),
                          "click": (rng.random(S * D) < 0.3).astype(int)})
    path = tmp_path / "log.parquet"
    frame.sample(frac=1, random_state=0).to_parquet(path)   # sessions in the order of their first row (file order)
    a = compare_click_models(patterns_from_source(str(path), "parquet", "log", split=0.75), "log")
    b = compare_click_models(sessions_from_source(str(path), "parquet", "log"), "log")
    assert (a.train_sessions, a.test_sessions, a.dropped_test_sessions) == \
           (b.train_sessions, b.test_sessions, b.dropped_test_sessions)
    for k in b.models:
        for m in ("log_likelihood", "perplexity", "conditional_perplexity"):
            # L-BFGS sums in pattern order: on these random clicks DBN's likelihood has a nearly flat ridge, and the
            # converged stop moves along it by up to 2e-8 with that rounding (seeds 4–6: 1e-15)
            assert getattr(a.models[k], m) == pytest.approx(getattr(b.models[k], m), abs=5e-8), (k, m)
    ridge = [c for c in b.relevance if c.startswith("DBN")]     # one rarely shown pair: attr·sat moves along it
    pd.testing.assert_frame_equal(a.relevance.drop(columns=ridge), b.relevance.drop(columns=ridge),
                                  check_exact=False, atol=1e-6)
    pd.testing.assert_frame_equal(a.relevance[ridge], b.relevance[ridge], check_exact=False, atol=2e-5)


def _sparse_log(seed: int, n_sessions: int = 3000, n_queries: int = 150, depth: int = 5):
    """PBM clicks on many queries seen few times each, whose documents share a query-level attractiveness (some
    queries' results are all good, others all poor): the setting where a shared baseline beats ½."""
    import pandas as pd
    rng = np.random.default_rng(seed)
    level = rng.uniform(0.05, 0.9, n_queries)
    alpha = np.clip(level[:, None] + rng.normal(0, 0.05, (n_queries, 3 * depth)), 0.01, 0.99)
    q = rng.integers(0, n_queries, n_sessions)
    docs = np.argsort(rng.random((n_sessions, 3 * depth)), axis=1)[:, :depth]
    a = np.take_along_axis(alpha[q], docs, axis=1)
    exam = np.array([1.0, 0.7, 0.5, 0.35, 0.25])[:depth]
    clicks = rng.random(a.shape) < a * exam
    return pd.DataFrame({"session_id": np.repeat(np.arange(n_sessions), depth), "query_id": np.repeat(q, depth),
                         "doc_id": docs.ravel(), "position": np.tile(np.arange(1, depth + 1), n_sessions),
                         "click": clicks.ravel().astype(int)})


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_learned_prior_beats_one_in_two_on_sparse_logs_and_fills_unseen_pairs(seed):
    """Issue #47, item 6: on a sparse log the learned prior (chosen on a held-out fifth) raises every per-pair
    model's held-out log-likelihood, chooses the per-query baseline, and gives a pair never seen in training its
    query's baseline rather than ½."""
    from ultr_core.clickmodels.compare import compare_click_models
    f = _sparse_log(seed)
    keys = ["dctr", "pbm", "dcm", "sdbn"]
    base = compare_click_models(f, models=keys, prior="pyclick").models
    out = compare_click_models(f, models=keys, prior="learned", seed=seed)
    for k in keys:
        assert out.models[k].log_likelihood > base[k].log_likelihood + 1e-3, k
    assert out.models["pbm"].prior.baseline == "query"
    rel = out.relevance
    unseen = rel[rel["impressions"] == 0]
    assert len(unseen) > 0 and not np.isclose(unseen["PBM"], 0.5).all()


def test_dcm_by_maximum_likelihood_fits_the_training_clicks_at_least_as_well_as_counting():
    """DCM-ML maximises the likelihood (with the same prior) that PyClick's counting approximates: its training
    log-likelihood is never below the counting fit's, and on DCM clicks it recovers λ₁ … λ₃ within 0.05."""
    from ultr_core.clickmodels.cascade_ml import DCMML
    from ultr_core.clickmodels.evaluation import scores
    from ultr_core.clickmodels.models import DCM
    from ultr_core.clickmodels.recovery import sample_sessions
    t = SessionArrays.from_frame(sample_sessions("dcm", 8000, seed=3)).compress()
    ml, count = DCMML().fit(t), DCM().fit(t)
    assert scores(ml, t)["log_likelihood"] >= scores(count, t)["log_likelihood"] - 1e-6
    assert np.allclose(ml.cont[:3], DCM.continuation_by_rank(0.6, 1.0, 3), atol=0.05)


def test_every_gradient_fit_says_whether_it_converged():
    """Issue #58: each optimiser's result is checked — the comparison carries `converged` for the models fitted by
    gradient (None-free: counting and EM models have no entry), and a fit stopped by its iteration cap says so."""
    from ultr_core.clickmodels.compare import compare_click_models
    from ultr_core.clickmodels.gradient import fit_cascade
    from ultr_core.clickmodels.sessions import SessionArrays
    from ultr_core.clickmodels.trust import Trust
    from ultr_core.studies.counterfactual import simulate_log
    frame, _ = simulate_log("dbn", 1500, n_queries=10, seed=0)
    out = compare_click_models(frame, models=["dbn", "trust", "pbm"])
    assert out.models["dbn"].converged is True and out.models["trust"].converged is True
    assert out.models["pbm"].converged is None and "converged" not in out.to_json()["models"]["pbm"]
    assert not any("iteration cap" in n for n in out.notes)
    t = SessionArrays.from_frame(frame, "x").compress()
    assert Trust().fit(t, max_iter=2).converged is False
    assert fit_cascade(t, 2, 1, form=MODEL_BY_KEY["dbn"].cls().form, max_iter=2)[2] is False

