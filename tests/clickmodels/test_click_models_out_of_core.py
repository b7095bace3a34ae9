"""Click models on logs larger than memory (issue #62, item 1): patterns written to disk by DuckDB and read chunk by
chunk give the in-memory figures, the counting fits sum chunk statistics, UBM's EM on cells is PyClick's EM on
patterns, and the paired comparison from sums is the comparison from the per-session values."""
import numpy as np
import pandas as pd
import pytest

from ultr_core.clickmodels.compare import compare_click_models
from ultr_core.clickmodels.evaluation import LikelihoodMoments
from ultr_core.clickmodels.patterns import PatternFile, patterns_from_source
from ultr_core.clickmodels.sessions import SessionTable
from ultr_core.clickmodels.ubm import UBM
from ultr_core.errors import ConfigError
from ultr_core.evaluation.intervals import mean_interval

#: every model of the table, the gradient fits included (a small log keeps them quick)
ALL = ["gctr", "rctr", "dctr", "pbm", "ubm", "cm", "dcm", "dcm_ml", "sdbn", "dbn", "ccm", "trust"]
SCORES = ("log_likelihood", "perplexity", "conditional_perplexity")


def _varied_log(path, seed: int, n_sessions: int = 1500, ragged: bool = False):
    """PBM clicks on lists that vary (each session 4 of its query's 8 documents in random order); ``ragged``: some
    sessions show fewer ranks (padding cells), one document shown under two queries (a bridging document)."""
    rng = np.random.default_rng(seed)
    q = rng.integers(0, 60, n_sessions)
    docs = np.argsort(rng.random((n_sessions, 8)), axis=1)[:, :4]
    alpha = rng.uniform(0.05, 0.8, (60, 8))
    clicks = rng.random((n_sessions, 4)) < alpha[q[:, None], docs] / np.arange(1, 5)
    f = pd.DataFrame({"session_id": np.repeat(np.arange(n_sessions), 4), "query_id": np.repeat(q, 4),
                      "doc_id": (docs + 8 * q[:, None]).ravel(), "position": np.tile(np.arange(1, 5), n_sessions),
                      "click": clicks.ravel().astype(int)})
    f.loc[f["doc_id"] == 0, "doc_id"] = 9            # query 1's document 9 also shown under query 0
    if ragged:
        short = np.repeat(rng.random(n_sessions) < 0.3, 4) & (f["position"].to_numpy() == 4)
        f = f[~short]
    f.to_parquet(path)
    return path


@pytest.mark.parametrize("seed,ragged", [(0, False), (1, True), (2, True)])
def test_patterns_read_from_disk_give_the_in_memory_figures(tmp_path, seed, ragged):
    """Every model: the fit on a pattern file read in chunks of 97 patterns equals the fit on the patterns held, to
    1e-9 (the same sums in the same order; the gradient fits the same chunks), and so do the counts, the relevance
    table and the paired comparison."""
    import ultr_core.clickmodels.gradient as gradient
    import ultr_core.clickmodels.sessions as sessions
    path = str(_varied_log(tmp_path / "log.parquet", seed, ragged=ragged))
    with patterns_from_source(path, "parquet", "log") as whole:        # the default chunks: one here
        c = compare_click_models(whole, "log", models=ALL)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sessions, "CHUNK_ROWS", 97)
        mp.setattr(gradient, "CHUNK", 97)
        with patterns_from_source(path, "parquet", "log") as held:
            assert isinstance(held.train, SessionTable)
            a = compare_click_models(held, "log", models=ALL)
        with patterns_from_source(path, "parquet", "log", in_memory=0) as disk:
            assert isinstance(disk.train, PatternFile) and disk.train.rows > 97 * 3
            assert sum(len(c.weight) for c in disk.train.chunks()) == disk.train.rows
            b = compare_click_models(disk, "log", models=ALL)
    for k in ALL:                       # one chunk or many: the gradient fits' sums differ in their last bits
        assert c.models[k].log_likelihood == pytest.approx(a.models[k].log_likelihood, abs=1e-6), k
    for k in ALL:
        for m in SCORES:
            assert getattr(b.models[k], m) == pytest.approx(getattr(a.models[k], m), abs=1e-9), (k, m)
    assert (a.train_sessions, a.test_sessions, a.dropped_test_sessions) == \
           (b.train_sessions, b.test_sessions, b.dropped_test_sessions)
    pd.testing.assert_frame_equal(a.relevance, b.relevance, check_exact=False, atol=1e-9)
    assert a.best_fit.best == b.best_fit.best
    for k, iv in a.best_fit.versus.items():
        assert b.best_fit.versus[k].lower == pytest.approx(iv.lower, abs=1e-9)


def test_pattern_files_leave_nothing_behind(tmp_path):
    import os
    path = str(_varied_log(tmp_path / "log.parquet", 3))
    sp = patterns_from_source(path, "parquet", "log", in_memory=0)
    folder = os.path.dirname(sp.train.path)
    assert os.path.exists(sp.train.path)
    sp.close()
    assert not os.path.exists(folder)


def test_the_fisher_information_is_refused_on_disk_with_the_flag_named(tmp_path):
    path = str(_varied_log(tmp_path / "log.parquet", 4))
    with patterns_from_source(path, "parquet", "log", in_memory=10) as disk:
        with pytest.raises(ConfigError) as e:
            compare_click_models(disk, "log", models=["pbm"], identifiability=True)
        assert e.value.field == "--identifiability" and "--memory-limit" in str(e.value)


@pytest.mark.parametrize("prior", ["learned", "auto"])
def test_the_learned_prior_on_disk_chooses_and_fits_as_in_memory(tmp_path, prior):
    """The learned prior's held-out fifth drawn chunk by chunk from a pattern file (two weight files beside it) is
    the in-memory draw: the same choice per model, the same validation sessions, the same fits to 1e-9; the
    weight files go with the folder.  "auto" (the default) gives DCM and DCM-ML their learned prior and every other
    model PyClick's."""
    import os

    import ultr_core.clickmodels.sessions as sessions
    path = str(_varied_log(tmp_path / "log.parquet", 5, ragged=True))
    keys = ["pbm", "dcm", "dcm_ml", "ubm"]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sessions, "CHUNK_ROWS", 97)
        with patterns_from_source(path, "parquet", "log") as held:
            a = compare_click_models(held, "log", models=keys, prior=prior, seed=3)
        with patterns_from_source(path, "parquet", "log", in_memory=0) as disk:
            b = compare_click_models(disk, "log", models=keys, prior=prior, seed=3)
            folder = os.path.dirname(disk.train.path)
            assert any("held" in f for f in os.listdir(folder))
    assert not os.path.exists(folder)
    learned = {k for k in keys if a.models[k].prior is not None}
    assert learned == (set(keys) if prior == "learned" else {"dcm", "dcm_ml"})
    assert any(a.models[k].prior.baseline != "pyclick" for k in learned)      # a search that chose, not ½
    for k in keys:
        pa, pb = a.models[k].prior, b.models[k].prior
        assert (pa is None) == (pb is None), k
        if pa is not None:
            assert (pa.baseline, pa.strength, pa.chosen_by, pa.validation_sessions) == \
                   (pb.baseline, pb.strength, pb.chosen_by, pb.validation_sessions), k
            if pa.validation_log_likelihood is not None:
                assert pb.validation_log_likelihood == pytest.approx(pa.validation_log_likelihood, abs=1e-9)
        for m in SCORES:
            assert getattr(b.models[k], m) == pytest.approx(getattr(a.models[k], m), abs=1e-9), (k, m)
    pd.testing.assert_frame_equal(a.relevance, b.relevance, check_exact=False, atol=1e-9)


def _ubm_em_on_patterns(t: SessionTable, n_iter: int = 50):
    """PyClick's UBM EM written over patterns (the form before cells; an independent check of the cell EM)."""
    from ultr_core.clickmodels.cells import previous_click
    from ultr_core.clickmodels.sessions import pair_mean
    d = t.depth
    attr, exam = np.full(t.n_pairs, 0.5), np.full((d, d), 0.5)
    cell = np.arange(d)[None, :] * d + previous_click(t.clicks)
    one = np.ones(t.pairs.shape)
    for _ in range(n_iter):
        a, g = attr[t.pairs], exam.ravel()[cell]
        post_a = np.where(t.clicks, 1.0, (1 - g) * a / (1 - g * a))
        post_g = np.where(t.clicks, 1.0, (1 - a) * g / (1 - g * a))
        attr = np.minimum(pair_mean(t, one, post_a), 1 - 1e-6)
        w = t.weight[:, None] * t.mask
        num = 1 + np.bincount(cell.ravel(), (w * post_g).ravel(), d * d)
        exam = np.minimum(num / (2 + np.bincount(cell.ravel(), w.ravel(), d * d)), 1 - 1e-6).reshape(d, d)
    return attr, exam


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ubm_em_on_cells_is_pyclicks_em_on_patterns(seed):
    rng = np.random.default_rng(seed)
    n, d, pairs = 400, 4, 30
    clicks = rng.random((n, d)) < 0.3
    clicks[:20] = True                                  # documents clicked at every impression
    clicks[20:40] = False
    t = SessionTable(rng.integers(0, pairs, (n, d)), clicks, rng.integers(1, 5, n).astype(float), pairs + 5, n)
    attr, exam = _ubm_em_on_patterns(t)
    m = UBM().fit(t)
    assert np.abs(m.attr - attr).max() < 1e-12 and np.abs(m.exam - exam).max() < 1e-12
    assert np.all((m.attr > 0) & (m.attr < 1)) and np.all(m.attr[pairs:] == 0.5)   # never shown: the prior's ½


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_comparison_from_sums_is_the_comparison_from_the_values(seed):
    rng = np.random.default_rng(seed)
    a = rng.normal(-0.3, 0.05, 500)
    lls = {"a": a, "b": a + rng.normal(0.001, 0.01, 500), "c": a - 0.05 + rng.normal(0, 0.02, 500)}
    w = rng.integers(1, 9, 500).astype(float)
    m = LikelihoodMoments.of(lls, w)
    half = LikelihoodMoments.empty(list(lls))           # summed in two parts: the same sums
    for part in (slice(0, 250), slice(250, 500)):
        half.add(np.stack([v[part] for v in lls.values()]), w[part])
    for x, y in (("a", "b"), ("a", "c"), ("b", "c")):
        ref = mean_interval(lls[x] - lls[y], w)
        for got in (m.difference(x, y), half.difference(x, y)):
            assert got.estimate == pytest.approx(ref.estimate, abs=1e-12)
            assert (got.lower, got.upper) == pytest.approx((ref.lower, ref.upper), abs=1e-10)
            assert got.lower <= got.estimate <= got.upper


def test_memory_limit_of_the_command_is_checked_and_used(tmp_path, capsys, monkeypatch):
    """The flag is refused when it is not a size; a budget below the log's patterns reads them from disk, and one
    below its cells sums them in several passes over the patterns, and both print the held figures."""
    from clihelp import cli, refused

    import ultr_core.clickmodels.cells as cells
    import ultr_core.clickmodels.patterns as patterns
    path = str(_varied_log(tmp_path / "log.parquet", 5))
    refused(["click-models", path, "--memory-limit", "lots"], capsys, "--memory-limit")
    held = cli(["click-models", path, "--models", "pbm,ubm,dcm", "--json"], capsys)[1]
    monkeypatch.setattr(patterns, "PATTERN_BYTES", 10 ** 6)          # 100 MB: 100 patterns held
    monkeypatch.setattr(patterns, "CELL_BYTES", 10 ** 6)             # and 100 cells summed at a time
    passes, one_pass = [], cells._one_pass
    monkeypatch.setattr(cells, "_one_pass", lambda *a, **k: passes.append(k["budget"]) or one_pass(*a, **k))
    rc, disk, _ = cli(["click-models", path, "--models", "pbm,ubm,dcm", "--memory-limit", "100MB", "--json"], capsys)
    assert rc == 0 and len(passes) > 4 and set(passes) == {100}
    import json
    a, b = json.loads(held)["models"], json.loads(disk)["models"]
    assert all(a[k][m] == pytest.approx(b[k][m], abs=1e-12) for k in a for m in SCORES)


@pytest.mark.parametrize("budget", [None, 600])
@pytest.mark.parametrize("previous", [False, True])
def test_cell_sums_in_key_ranges_are_one_groupby_of_every_cell(previous, budget, monkeypatch):
    """``cell_sums`` merges each chunk's cells per range of the cell key (issue #62: a merge of all cells at once took
    about 95 bytes per cell), and where the ranges hold more cells than its budget it leaves the highest to later
    passes over the table (a 1 B-row log's UBM cells held 4.24 GB in one pass); with 40-pattern chunks, many merges
    and, under a 600-cell budget, several passes, its result is, bit for bit, pandas' group-by of every shown (pair,
    rank index) cell of the whole table, sorted by key."""
    import pandas as pd

    import ultr_core.clickmodels.cells as C
    import ultr_core.clickmodels.sessions as S
    from ultr_core.simulation.edge_logs import shuffled_log
    frame, _ = shuffled_log(5, n_sessions=3000, n_queries=300)
    t = S.SessionArrays.from_frame(frame).compress()
    d = t.depth
    index = np.arange(d)[None, :] * (d if previous else 1) + (C.previous_click(t.clicks) if previous else 0)
    w = t.weight[:, None] * t.mask
    cells = pd.DataFrame({"pair": np.broadcast_to(t.pairs, w.shape).ravel().astype(np.int64),
                          "rank": np.broadcast_to(index, w.shape).ravel(), "n": w.ravel(),
                          "c": (w * t.clicks).ravel()})[w.ravel() > 0]
    want = cells.groupby(["pair", "rank"], sort=True)[["n", "c"]].sum().reset_index()
    monkeypatch.setattr(S, "CHUNK_ROWS", 40)
    monkeypatch.setattr(C, "MERGE_MIN", 25)
    n_chunks = len(list(t.chunks()))
    assert n_chunks > 20
    passes = []
    chunks = type(t).chunks
    monkeypatch.setattr(type(t), "chunks", lambda self, rows=None: passes.append(1) or chunks(self, rows))
    pair, rank, n, c = C.cell_sums(t, previous, budget=budget)
    assert len(passes) == 1 if budget is None else len(passes) >= 3
    assert len(want) > (budget or 0)
    assert np.array_equal(pair, want["pair"]) and np.array_equal(rank, want["rank"])
    assert np.array_equal(n, want["n"]) and np.array_equal(c, want["c"])


@pytest.mark.parametrize("trials_slice", [None, 100])
def test_cell_sums_are_compact_where_exact_and_the_fits_do_not_change_a_bit(trials_slice, monkeypatch):
    """Cells of whole-number weights come as int32 pairs, int16 ranks and uint32 counts (14 bytes a cell, not 32 —
    issue #62's 1 B-row peak); fractional weights keep float64 sums.  PBM's and UBM's EM on the compact cells equal,
    bit for bit, the EM on the same cells cast to int64 and float64 — also where the compact cells' trials are summed
    in slices of 100 cells (at 1 B rows one bincount widened 115 M cells to 1.8 GB at once)."""
    import ultr_core.clickmodels.cells as C
    import ultr_core.clickmodels.pbm as pbm
    import ultr_core.clickmodels.sessions as S
    from ultr_core.clickmodels.pbm import pbm_em
    if trials_slice:
        monkeypatch.setattr(pbm, "TRIALS_SLICE", trials_slice)
    from ultr_core.simulation.edge_logs import shuffled_log
    frame, _ = shuffled_log(3, n_sessions=2000, n_queries=200)
    t = S.SessionArrays.from_frame(frame).compress()
    for previous, width in ((False, t.depth), (True, t.depth * t.depth)):
        pair, rank, n, c = C.cell_sums(t, previous)
        assert (pair.dtype, rank.dtype, n.dtype, c.dtype) == (np.int32, np.int16, np.uint32, np.uint32)
        kw = dict(n_pairs=t.n_pairs, depth=width, prior=(1.0, 2.0), n_iter=20, cap=1 - 1e-6)
        compact = pbm_em(pair, rank, n, c=c, **kw)
        wide = pbm_em(pair.astype(np.int64), rank.astype(np.int64), n.astype(float), c=c.astype(float), **kw)
        assert all(np.array_equal(x, y) for x, y in zip(compact, wide))
    from dataclasses import replace
    half = replace(t, weight=t.weight * 0.5)
    _, _, n_half, c_half = C.cell_sums(half)
    assert n_half.dtype == c_half.dtype == np.float64
    assert np.array_equal(n_half * 2, C.cell_sums(t)[2].astype(float))
    assert np.array_equal(c_half * 2, C.cell_sums(t)[3].astype(float))
