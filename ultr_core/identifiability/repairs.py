"""Repairs evaluated the way the identifiability paper evaluates them (Table 1, Fig. 3): fit an
embedding model to convergence on a click-through table, plain, after node merging, or after
node intervention (the swapped documents shown at their new factor with fresh binomial clicks),
and score the relevance estimate against the truth.

>>> from ultr_core.data.synthetic import make_paper_identifiability_data
>>> from ultr_core.simulation.synthetic_logs import binomial_ctr_table
>>> data = make_paper_identifiability_data(n_components=2, seed=0)
>>> table, r, o = binomial_ctr_table(data, seed=0)
>>> plain = fit_repaired(table, r, o, data=data, repair="none")
>>> fixed = fit_repaired(table, r, o, data=data, repair="intervene")
>>> (plain["components"], plain["mcc"] < 0.9, fixed["components_after"], fixed["mcc"] > 0.99)
(2, True, 1, True)
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ultr_core.errors import ConfigError
from ultr_core.evaluation.metrics import mcc, ndcg
from ultr_core.identifiability.embedding import fit_counts
from ultr_core.identifiability.graph import IdentifiabilityGraph
from ultr_core.identifiability.intervention import plan_interventions
from ultr_core.identifiability.merging import (
    MergePlan,
    bias_feature_vectors,
    plan_merges,
)
from ultr_core.logs.ingestion import CountTable

__all__ = ["fit_repaired", "REPAIRS", "fit_source"]

REPAIRS = ("none", "merge", "intervene")


def _fit(g: IdentifiabilityGraph, method, groups, init, seed, tol, max_iter):
    fac = g.fac if groups is None else groups[g.fac]
    n_groups = g.n_factors if groups is None else int(groups.max()) + 1
    return fit_counts(g.doc, fac, g.impressions, c=g.clicks, D=g.n_documents, G=n_groups, method=method,
                      n_iter=max_iter,
                      seed=seed, tol=tol, init=init)


def fit_repaired(table: CountTable, true_relevance: pd.Series, true_observation: np.ndarray, *, data=None,
                 method: str = "dla", repair: str = "none", init: str = "random", seed: int = 0,
                 tol: float = 1e-9, max_iter: int | None = None, impressions: int = 1_000_000,
                 random_intervention: bool = False, merge_positions=None, context_vectors=None,
                 test=None, factor_groups=None) -> dict:
    """Fit ``method`` (an embedding method, or ``no_debias``: one observation parameter shared
    by every factor) on ``table`` (documents × positions, with impressions and clicks) after
    ``repair`` and return its scores: MCC of r̂ against ``true_relevance`` (indexed by
    doc_id), nDCG@5/10 over the lists of ``data`` (a :class:`RankingData` of doc_ids) when
    given, the click MSE over the table's rows, iterations and convergence, and the component
    counts before and after.

    * ``merge`` — node merging on the position (the paper's 1-D bias feature), then one
      observation parameter per merged group; ``merge_positions`` = [(a, b), …] merges these
      positions instead of the planned pairs (Fig. 4b's strategies).  With a ``context`` bias
      column and ``context_vectors``, the merge distance is over the paper's bias features
      (context vector, 10·position; App. C.3), else contexts are one-hot coded.
      ``factor_groups`` (one label per factor of ``IdentifiabilityGraph.from_counts(table)``,
      in its factor order) gives the observation parameters directly instead — e.g. another
      implementation's merge map.
    * ``intervene`` — r̂, ô from a fit after node merging (App. C.3), the minimum-cost swaps
      (``random_intervention``: the paper's random ablation), each shown at its target position
      for ``impressions`` impressions with Binomial(impressions, r·o_target) clicks; then a
      plain fit on the enlarged table.

    ``test`` = (features per document code, test :class:`RankingData`) adds ``test_ndcg@5/10`` of
    the paper's test-set ranker (:func:`~.semisynthetic.score_on_test`).
    """
    if repair not in REPAIRS:
        raise ConfigError("repair", f"must be one of {', '.join(REPAIRS)}, got {repair!r}")
    if repair == "intervene" and true_observation is None:
        raise ConfigError("repair", "node intervention needs the true observation curve to collect clicks "
                                    "(paper:K or an ULTRA directory)")
    fit_method = "dla" if method == "no_debias" else method
    g = IdentifiabilityGraph.from_counts(table)
    out = {"components": g.n_components}
    groups = _repair_groups(g, repair, merge_positions, context_vectors, factor_groups)
    if repair == "intervene":
        est = _fit(g, fit_method, groups, init, seed, tol, max_iter)
        plan = plan_interventions(g, est.relevance, est.observation[groups], random_cost=random_intervention,
                                  seed=seed)
        g = _intervened_graph(g, table, plan.swaps, true_relevance, true_observation, impressions, seed)
        groups = None
        out["interventions"] = len(plan.swaps)
    out["components_after"] = g.n_components if groups is None else g.with_factor_groups(groups).n_components
    if method == "no_debias":                        # one observation parameter for every factor
        groups = np.zeros(g.n_factors, np.int64)
    fit = _fit(g, fit_method, groups, init, seed, tol, max_iter)
    out["observation_parameters"] = g.n_factors if groups is None else int(groups.max()) + 1
    out.update(_fit_scores(g, fit, groups, true_relevance, data, test, seed))
    return out


def _repair_groups(g: IdentifiabilityGraph, repair: str, merge_positions, context_vectors, factor_groups):
    """The observation parameter of every factor after ``repair`` (None: one per factor): a given merge map,
    the merged position pairs, or the planned node merging (also the estimate an intervention starts from)."""
    if factor_groups is not None:
        if repair != "merge" or merge_positions is not None:
            raise ConfigError("factor_groups", "is a merge of its own: use it with repair='merge' and no "
                                               "merge_positions")
        labels = np.asarray(factor_groups)
        if labels.shape != (g.n_factors,):
            raise ConfigError("factor_groups", f"needs one label per factor ({g.n_factors}), got shape "
                                               f"{labels.shape}")
        return np.unique(labels, return_inverse=True)[1].astype(np.int64)
    if repair not in ("merge", "intervene"):
        return None
    if merge_positions is not None and repair == "merge":
        pos = g.factors["position"].tolist()
        missing = [p for ab in merge_positions for p in ab if p not in pos]
        if missing:
            raise ConfigError("merge_positions", f"position(s) {missing} not in the table")
        pairs = pd.DataFrame({"factor_a": [pos.index(a) for a, _ in merge_positions],
                              "factor_b": [pos.index(b) for _, b in merge_positions]})
        return MergePlan(g, pairs).factor_groups()
    vectors = None
    if context_vectors is not None and "context" in g.bias_columns:
        vectors = bias_feature_vectors(g, context_vectors)
    return plan_merges(g, vectors=vectors).factor_groups()


def _intervened_graph(g: IdentifiabilityGraph, table: CountTable, swaps: pd.DataFrame, true_relevance,
                      true_observation, impressions: int, seed: int) -> IdentifiabilityGraph:
    """The graph of ``table`` plus every swap shown at its target position for ``impressions`` impressions, with
    Binomial(impressions, r·o_target) clicks drawn from the truth."""
    docs = g.documents[swaps["document"].to_numpy()]
    pos = g.factors["position"].to_numpy()[swaps["to_factor"].to_numpy()]
    rng = np.random.default_rng([seed, 6])
    p = true_relevance.loc[docs].to_numpy() * np.asarray(true_observation)[pos.astype(np.int64) - 1]
    extra = pd.DataFrame({"doc_id": docs, "position": pos, "impressions": impressions,
                          "clicks": rng.binomial(impressions, p)})
    frame = pd.concat([table.frame, extra.astype(table.frame.dtypes.to_dict())], ignore_index=True)
    return IdentifiabilityGraph.from_counts(CountTable(frame, table.document, table.bias, table.source))


def _fit_scores(g: IdentifiabilityGraph, fit, groups, true_relevance, data, test, seed: int) -> dict:
    """MCC against the truth, click MSE, iterations, the normalised curve and, with ``data`` / ``test``, nDCG."""
    r_hat = fit.relevance
    truth = true_relevance.reindex(g.documents).to_numpy()
    o_hat = fit.observation if groups is None else fit.observation[groups]
    ctr = g.clicks / np.maximum(g.impressions, 1)
    out = dict(mcc=mcc(r_hat, truth), click_mse=float(np.mean((ctr - r_hat[g.doc] * o_hat[g.fac]) ** 2)),
               iterations=fit.iterations, converged=fit.converged,
               observation=(o_hat / o_hat[0] if o_hat[0] > 0 else o_hat).tolist())
    if data is not None:
        score = pd.Series(r_hat, index=g.documents).reindex(data.doc_ids).fillna(0).to_numpy()
        out["ndcg@5"] = ndcg(score, data.labels, data.offsets, k=5)
        out["ndcg@10"] = ndcg(score, data.labels, data.offsets, k=10)
    if test is not None:
        from ultr_core.identifiability.semisynthetic import score_on_test
        out.update(score_on_test(test[0], g.documents[g.doc], ctr, observation=o_hat[g.fac], test=test[1], seed=seed))
    return out


def fit_source(path: str, *, seed: int = 0, impressions: int = 1_000_000, name: str | None = None):
    """(table, true r per document, true o per position, ranked lists or None) for ``ig-fit``:

    * ``paper:K`` — the paper's fully synthetic data with K components
      (:func:`~ultr_core.data.synthetic.make_paper_identifiability_data`), clicks as
      :func:`~ultr_core.simulation.synthetic_logs.binomial_ctr_table`;
    * an ULTRA directory — its ``train/`` split only (a document is a distinct feature vector, as the
      official check; :func:`~ultr_core.logs.ultra.ultra_frame`), clicks simulated from the labels the same way;
    * a click log (CSV/Parquet) with a ``label`` column — its own clicks; the truth is
      r = 0.1 + 0.9·(2^y − 1)/(2^ymax − 1) of the labels, o unknown.
    """
    from pathlib import Path

    from ultr_core.data.dataset import RankingData
    from ultr_core.data.synthetic import make_paper_identifiability_data
    from ultr_core.logs.clicklog import ClickLog
    from ultr_core.simulation.clickmodel import relevance_probability
    from ultr_core.simulation.synthetic_logs import binomial_ctr_table
    text = str(path)
    if text.startswith("paper:"):
        try:
            k = int(text.partition(":")[2])
        except ValueError:
            raise ConfigError("path", f"{text[:20]!r}: use paper:K with K = 1–4") from None
        if k not in (1, 2, 3, 4):
            raise ConfigError("path", f"the paper's layouts have K = 1–4, got {k}")
        data = make_paper_identifiability_data(n_components=k, seed=seed)
        table, r, o = binomial_ctr_table(data, impressions=impressions, seed=seed)
        return table, r, o, data
    p = Path(text)
    if p.is_dir():
        from ultr_core.logs.ultra import ultra_frame
        df, _ = ultra_frame(p, name or p.name, labels=True)     # train/ only; a document is a feature vector
        data = RankingData(np.zeros((len(df), 0), np.float32), df["session_id"].to_numpy(np.int64),
                           df["label"].to_numpy(np.int64), df["doc_id"].to_numpy(np.int64))
        table, r, o = binomial_ctr_table(data, impressions=impressions, seed=seed)
        return table, r, o, data
    log = ClickLog.load(p)
    if "label" not in log.frame:
        raise ConfigError("path", f"{p.name}: ig-fit needs a 'label' column (the truth to score against), or use "
                                  "paper:K or an ULTRA directory")
    shown = log.frame[log.frame["shown"]]
    table = CountTable.from_log(log, ["position"])
    labels = shown.groupby("doc_id")["label"].first()
    r = pd.Series(relevance_probability(labels.to_numpy(), max(int(labels.max()), 1), 0.1), index=labels.index)
    return table, r, None, None
