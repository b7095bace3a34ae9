"""Click fit beside ranking quality (issue #47): each click model's relevance estimates scored against editorial
judgements — Spearman and Kendall over the labelled (query, document) pairs, and nDCG@k of re-ranking each query's
labelled documents by the estimate (beside the logged order's) — with 90 % intervals from a bootstrap over queries;
and which estimates the data cannot support (*prior-dominated*), left out of the agreement by default.

The prior-dominated rule: a pair with fewer than :data:`MIN_EXAMINED` examination-weighted training impressions,
Σ over its impressions of ctr(rank)/ctr(1) (each rank's click rate relative to rank 1: a model-free share of the
attention it had) — the one-in-two prior, not the clicks, then decides its estimate (PyClick's α = (c + 1)/(n + 2)
is the prior's ½ at n = 0).  Pairs never shown in training are prior-dominated by the rule.

>>> import numpy as np
>>> est = {"A": np.array([0.9, 0.5, 0.1, 0.8, 0.2]), "B": np.array([0.1, 0.5, 0.9, 0.2, 0.8])}
>>> grade = np.array([2.0, 1.0, 0.0, 1.0, 0.0]); query = np.array([0, 0, 0, 1, 1])
>>> out = agreement(est, grade, query, logged_rank=np.array([1.0, 2, 3, 1, 2]), n_boot=50)
>>> round(out["A"].spearman.estimate, 3), round(out["B"].spearman.estimate, 3), out["A"].pairs   # 9/√90
(0.949, -0.949, 5)
>>> out["A"].figure("ndcg@10").estimate, out["logged"].ndcg.estimate
(1.0, 1.0)
"""
from __future__ import annotations

import numpy as np

from ultr_core.clickmodels.agreement_records import (
    FIGURES,
    Agreement,
    JudgementReport,
    JudgementsFile,
    JudgeVerdict,
    PriorDominated,
)
from ultr_core.clickmodels.evaluation import FitComparison
from ultr_core.errors import counted
from ultr_core.evaluation.intervals import Interval, bootstrap_interval, interval_text

__all__ = ["judgement_lines", "MIN_EXAMINED", "examined_impressions", "prior_dominated", "agreement", "ndcg_per_query",
           "judge_verdict", "RULE", "JUDGE_RULE", "judgement_report", "judge_comparison", "score_judgements",
           "judgement_rows"]

#: fewer examination-weighted training impressions than this: the estimate is the prior's, not the data's
MIN_EXAMINED = 10.0
#: how the clicks-vs-judges difference is read: the one verdict rule, its interval a bootstrap over queries
JUDGE_RULE = ("Spearman: *reproduced* when the whole 90 % interval of the paired difference (the same resamples of "
              "the queries for both) lies above 0, *opposite* below 0, else *not resolved* (tied)")
RULE = (f"prior-dominated: fewer than {MIN_EXAMINED:g} examination-weighted training impressions (Σ ctr(rank)/ctr(1) "
        "over the pair's impressions), never-shown pairs included — left out of the agreement unless asked for")


def examined_impressions(train) -> np.ndarray:
    """Per pair of a :class:`~ultr_core.clickmodels.sessions.SessionTable`: Σ over its training impressions of
    ctr(rank)/ctr(1)."""
    from ultr_core.clickmodels.sessions import chunk_sums
    clicks, shown = chunk_sums(train, lambda c: [(c.weight[:, None] * c.mask * c.clicks).sum(0),
                                                 (c.weight[:, None] * c.mask).sum(0)])
    ctr = clicks / np.maximum(shown, 1e-12)
    share = ctr / ctr[0] if ctr[0] > 0 else np.ones_like(ctr)
    return chunk_sums(train, lambda c: [np.bincount(c.pairs.ravel(), (c.weight[:, None] * c.mask * share[None, :])
                                                    .ravel(), train.n_pairs)])[0]


def prior_dominated(train) -> np.ndarray:
    return examined_impressions(train) < MIN_EXAMINED


def ndcg_per_query(score, grade, query, *, k: int = 10) -> np.ndarray:
    """nDCG@k (gain 2^g − 1, log2 discount) of each query's labelled documents ordered by ``score`` (ties: the
    order given); NaN for a query without a positive grade.  A negative grade (TREC's junk, −2) counts as 0, as
    trec_eval counts it: nDCG stays in [0, 1]."""
    order = np.lexsort((-np.asarray(score, np.float64), query))
    grade = np.maximum(np.asarray(grade, np.float64), 0.0)
    q, g = np.asarray(query)[order], grade[order]
    ideal = np.lexsort((-grade, query))
    starts = np.r_[0, np.flatnonzero(q[1:] != q[:-1]) + 1]
    rank = np.arange(len(q)) - np.repeat(starts, np.diff(np.r_[starts, len(q)]))
    disc = np.where(rank < k, 1.0 / np.log2(rank + 2.0), 0.0)
    dcg = np.add.reduceat((2 ** g - 1) * disc, starts)
    idcg = np.add.reduceat((2 ** grade[ideal] - 1) * disc, starts)
    return np.where(idcg > 0, dcg / np.where(idcg > 0, idcg, 1), np.nan)


def _interval(point: float, draws: np.ndarray, queries: int, bounds: tuple = (-1.0, 1.0)) -> Interval:
    """The one interval engine's percentile interval over resamples of the ``queries`` (a correlation
    and an nDCG lie in [−1, 1])."""
    return bootstrap_interval(point, draws, bounds=bounds, what="resample of the queries", units=queries)


def _finite(x, default: float) -> float:
    """``x`` as a float, ``default`` where it is None or NaN (an interval with no estimate)."""
    return default if x is None or not np.isfinite(x) else float(x)


def _resample_pairs(query, rng, n_boot: int):
    """Per bootstrap draw, the pair indices of a sample of queries drawn with replacement."""
    codes, inv = np.unique(query, return_inverse=True)
    members = np.split(np.argsort(inv, kind="stable"), np.cumsum(np.bincount(inv))[:-1])
    for _ in range(n_boot):
        pick = rng.integers(0, len(codes), len(codes))
        yield np.concatenate([members[i] for i in pick]), pick


def agreement(estimates: dict, grade, query, *, logged_rank, n_boot: int = 200, seed: int = 0, k: int = 10) -> dict:
    """Per estimate (label → one value per labelled pair), and for the logged order (by mean logged rank): the number
    of pairs, Spearman and Kendall with the grades over the pairs, mean nDCG@k over queries, each with a 90 %
    percentile interval over ``n_boot`` resamples of the queries (seeded): label (and "logged") → :class:`Agreement`
    (its Spearman resamples kept for paired differences)."""
    import warnings

    from scipy import stats  # here, not at the top: `evaluate` imports this module's rule, not the agreement
    with warnings.catch_warnings():                  # a constant estimate (GCTR) has no rank correlation: NaN
        warnings.simplefilter("ignore", stats.ConstantInputWarning)
        return _agreement(estimates, grade, query, logged_rank, n_boot, seed, k)


def _agreement(estimates: dict, grade, query, logged_rank, n_boot: int, seed: int, k: int) -> dict:
    from scipy import stats
    grade, query = np.asarray(grade, np.float64), np.asarray(query)
    scores = {**{k_: np.asarray(v, np.float64) for k_, v in estimates.items()},
              "logged": -np.asarray(logged_rank, np.float64)}
    per_q = {m: ndcg_per_query(s, grade, query, k=k) for m, s in scores.items()}
    out = {m: {"pairs": int(len(grade)), "spearman": stats.spearmanr(s, grade).statistic,
               "kendall": stats.kendalltau(s, grade).statistic, f"ndcg@{k}": np.nanmean(per_q[m])}
           for m, s in scores.items()}
    draws = {m: {"spearman": [], "kendall": [], f"ndcg@{k}": []} for m in scores}
    for idx, pick in _resample_pairs(query, np.random.default_rng([int(seed), 47]), n_boot):
        for m, s in scores.items():
            draws[m]["spearman"].append(stats.spearmanr(s[idx], grade[idx]).statistic)
            draws[m]["kendall"].append(stats.kendalltau(s[idx], grade[idx]).statistic)
            draws[m][f"ndcg@{k}"].append(np.nanmean(per_q[m][pick]))
    n_q = len(np.unique(query))
    figures = {m: {name: _interval(out[m][name], np.asarray(d, np.float64), n_q) for name, d in draws[m].items()}
               for m in scores}
    return {m: Agreement(pairs=out[m]["pairs"], spearman=figures[m]["spearman"], kendall=figures[m]["kendall"],
                         ndcg=figures[m][f"ndcg@{k}"], k=k, queries=n_q,
                         draws=np.asarray(draws[m]["spearman"], np.float64))
            for m in scores}


def judge_verdict(models: dict, agree: dict, fit: FitComparison | None = None) -> JudgeVerdict | None:
    """The verdict read as sentences that name what they compare: which model fits the held-out clicks best (``fit``,
    :func:`~ultr_core.clickmodels.evaluation.fit_comparison`: "tied" where the paired log-likelihood difference is
    not resolved), which agrees best with the judges (Spearman, its difference from the runner-up over the same
    query resamples), and — when the two differ — the Spearman difference between them read by the one verdict rule
    (``verdict``); raw CTR is named when it agrees more than every model.  None with fewer than two models."""
    keys = [m for m in models if m in agree]
    if len(keys) < 2:
        return None
    clicks = fit.best if fit and fit.best in keys else max(keys, key=lambda m: models[m].log_likelihood)
    by_judges = sorted(keys, key=lambda m: -_finite(agree[m].spearman.estimate, -np.inf))
    judges = by_judges[0]
    label = {m: models[m].label for m in keys}
    parts = [fit.sentence(keys) if fit and fit.best == clicks else
             f"Held-out clicks: {label[clicks]} has the highest log-likelihood (no paired interval)"]
    out = {"clicks": clicks, "judges": judges, "rule": JUDGE_RULE + (f"; {fit.rule}" if fit else "")}
    if clicks == judges:
        iv = _spearman_difference(agree, judges, by_judges[1])
        tied = iv.supported and iv.lower <= 0
        parts.append(f"Judges: {label[judges]} agrees best too" + (f", tied with {label[by_judges[1]]}" if tied
                                                                     else "")
                     + f" (Spearman {label[judges]} − {label[by_judges[1]]} = {iv.text('{:+.3f}')})")
    else:
        iv = _spearman_difference(agree, judges, clicks)
        lo, hi = (iv.lower, iv.upper) if iv.supported else (np.nan, np.nan)
        verdict = "reproduced" if lo > 0 else "opposite" if hi < 0 else "not resolved"
        a, b = label[judges], label[clicks]
        parts.append(f"Judges: {a} agrees more than {b}" if verdict == "reproduced" else
                     f"Judges: {a} and {b} tied" if verdict == "not resolved" else f"Judges: {b} agrees more")
        parts[-1] += f" (Spearman {a} − {b} = {iv.text('{:+.3f}')}) — {verdict}"
        out.update({"difference": iv.estimate, "lower": iv.lower, "upper": iv.upper, "verdict": verdict})
    ctr = agree["ctr"].spearman if "ctr" in agree else None
    if ctr is not None and _finite(ctr.estimate, -np.inf) > _finite(agree[judges].spearman.estimate, -np.inf):
        parts.append(f"Raw CTR agrees more than every model (Spearman {interval_text(ctr, '{:+.3f}')}, "
                     f"{label[judges]} {interval_text(agree[judges].spearman, '{:+.3f}')})")
    return JudgeVerdict(**out, text=". ".join(parts))


def _spearman_difference(agree: dict, a: str, b: str):
    """Spearman of ``a`` minus ``b`` with the interval of their paired differences over the same query resamples."""
    diff = _finite(agree[a].spearman.estimate, np.nan) - _finite(agree[b].spearman.estimate, np.nan)
    return bootstrap_interval(diff, agree[a].draws - agree[b].draws, bounds=(-2.0, 2.0),
                              what="resample of the queries", units=agree[a].queries)


def judgement_report(rel, models: dict, judgements, *, include_prior: bool = False, n_boot: int = 200,
                     seed: int = 0, fit: FitComparison | None = None) -> tuple[JudgementReport, dict]:
    """Join ``judgements`` (:class:`~ultr_core.logs.judgements.Judgements`) onto the log's pairs (``rel``: one row
    per (query_id, doc_id) of the log with impressions, clicks, mean_rank and prior_dominated, ids compared as text),
    score every model's column of ``rel`` (``models``: key → :class:`~ultr_core.clickmodels.compare.ModelFit`) and
    raw CTR against them (:func:`agreement`): (the :class:`JudgementReport` — the file's counts, the prior-dominated
    rule and counts, the logged order's and CTR's figures and the verdict —, key → that model's :class:`Agreement`;
    empty when too few pairs are judged).  ``rel`` gains ``grade`` (NaN where no judgement)."""
    keys = judgements.frame.assign(grade=judgements.frame["grade"].astype(np.float64))
    pairs = rel[["query_id", "doc_id"]].astype(str)
    joined = pairs.merge(keys, on=["query_id", "doc_id"], how="left")
    rel["grade"] = joined["grade"].to_numpy()
    matched = np.isfinite(rel["grade"].to_numpy(np.float64))
    log_queries = set(pairs["query_id"])
    in_log = keys.merge(pairs, on=["query_id", "doc_id"], how="left", indicator=True)["_merge"] == "both"
    unknown_q = int((~keys["query_id"].isin(log_queries)).sum())
    flagged = rel["prior_dominated"].to_numpy(bool)
    use = matched & (include_prior | ~flagged)
    mean_rank = rel["mean_rank"].fillna(rel["mean_rank"].max()).to_numpy(np.float64)     # never shown: last
    labels = {key: m.label for key, m in models.items()}
    est = {key: rel[label].to_numpy(np.float64)[use] for key, label in labels.items()}
    est["ctr"] = (rel["clicks"] / rel["impressions"].clip(lower=1)).to_numpy(np.float64)[use]
    qcode = pairs["query_id"].to_numpy()[use]
    out = JudgementReport(
        file=JudgementsFile.of(judgements), matched_pairs=int(matched.sum()), unmatched_judgements=int((~in_log).sum()),
        judgements_of_queries_not_in_the_log=unknown_q,
        prior_dominated=PriorDominated(rule=RULE, matched_and_flagged=int((matched & flagged).sum()),
                                       included=bool(include_prior)), pairs_scored=int(use.sum()))
    if use.sum() < 3 or len(np.unique(qcode)) < 2:
        nq = counted(len(np.unique(qcode)), "query", "queries")
        return out.with_(note=f"{counted(use.sum(), 'judged pair')} in {nq} to score: too few for an agreement "
                              "figure" + ("" if include_prior else " (prior-dominated pairs left out)")), {}
    agree = agreement(est, rel["grade"].to_numpy(np.float64)[use], qcode, logged_rank=mean_rank[use], n_boot=n_boot,
                      seed=seed)
    out = out.with_(verdict=judge_verdict(models, agree, fit), logged_order=agree["logged"], ctr=agree["ctr"])
    return out, {key: agree[key] for key in labels}


def judge_comparison(result, judgements, *, include_prior: bool = False, seed: int = 0):
    """A click-model comparison (:class:`~ultr_core.clickmodels.compare.ClickModelComparison`, left unchanged) scored
    against ``judgements`` (:func:`judgement_report`): a copy whose models and rankers carry their figures
    (``judgements``), with the report under ``judgements`` and each pair's ``grade`` in ``relevance``."""
    rel = result.relevance.copy()
    report, figures = judgement_report(rel, result.scored, judgements, include_prior=include_prior, seed=seed,
                                       fit=result.best_fit)
    judged = {k: m.with_(judgements=figures[k]) if k in figures else m for k, m in result.scored.items()}
    return result.with_(models={k: judged[k] for k in result.models}, rankers={k: judged[k] for k in result.rankers},
                        judgements=report, relevance=rel)


def score_judgements(result, judgements, *, name: str = "judgements", include_prior: bool = False, seed: int = 0):
    """A finished click-model comparison (left unchanged) scored against ``judgements`` (a parsed
    :class:`~ultr_core.logs.judgements.Judgements`, or a file's bytes): :func:`judge_comparison` — what the pages
    call, one call per file and toggle."""
    from ultr_core.logs.judgements import read_judgements
    if isinstance(judgements, (bytes, bytearray, memoryview)):
        judgements = read_judgements(bytes(judgements), name=name)
    return judge_comparison(result, judgements, include_prior=include_prior, seed=seed)


def judgement_rows(models: dict, report: JudgementReport) -> list[dict]:
    """One row per model (and raw CTR, the logged order) for a table: click fit beside the three agreements."""
    rows = [{"model": m.label, "held-out log-likelihood": round(m.log_likelihood, 4),
             **{title: m.judgements.text(key) for title, key in FIGURES}}
            for m in models.values() if m.judgements is not None]
    for label, ref in (("raw CTR", report.ctr), ("logged order", report.logged_order)):
        if ref:
            rows.append({"model": label, "held-out log-likelihood": None,
                         **{title: ref.text(key) for title, key in FIGURES}})
    return rows


def judgement_lines(out) -> list[str]:
    """The --judgements part of the text output of a judged comparison
    (:class:`~ultr_core.clickmodels.compare.ClickModelComparison`): the file's counts, the rule, one line per model,
    the verdict."""
    j = out.judgements
    lines = [f"note: judgements: {n}" for n in j.file.notes]
    lines.append(f"judgements: {j.file.rows:,} kept, {j.matched_pairs:,} matched to the log's pairs, "
                 f"{j.unmatched_judgements:,} not in the log ({j.judgements_of_queries_not_in_the_log:,} of "
                 f"queries the log lacks); {j.pairs_scored:,} scored")
    lines.append(f"{j.prior_dominated.rule}: {j.prior_dominated.matched_and_flagged:,} judged pairs "
                 + ("included" if j.prior_dominated.included else "left out"))
    if j.note is not None:
        return lines + [j.note]
    rows = [(m.label, m.judgements) for m in out.scored.values() if m.judgements is not None] + [
        ("CTR", j.ctr), ("logged", j.logged_order)]
    w = max(7, *(len(label) + 1 for label, _ in rows))
    lines.append(f"{'model':<{w}} " + " ".join(f"{title + ' [90 %]':>25}" for title, _ in FIGURES))
    for label, a in rows:
        lines.append(f"{label:<{w}} " + " ".join(f"{a.text(key):>25}" for _, key in FIGURES))
    if j.verdict:
        lines.append(j.verdict.text)
    return lines
