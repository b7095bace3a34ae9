"""A candidate ranking of a log's documents: each (query, document) pair of the log gets its rank within its query.
Three sources, one record each in :data:`SOURCES`: the production order (each document's mean logged rank), a scores
file (:mod:`ultr_core.logs.scores`) or a fitted click model's relevance.

A scores file can only re-rank what the log shows: every scored row the join cannot use is counted and named by line
— pairs of queries the log lacks, documents the log never shows for their query — and so is every query of the
log without a score (kept in production order) and every document of a scored query without one (after the scored
ones, in production order).  Ties are broken by the production order and counted.

>>> import numpy as np
>>> rank_within(np.array([0.2, 0.9, 0.5, 1.0]), np.array([0, 0, 0, 1]), np.array([1, 2, 3, 1])).tolist()
[3, 1, 2, 1]
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ultr_core.counterfactual.choices import SOURCES, CandidateSource
from ultr_core.errors import counted
from ultr_core.logs.judgements import line_list

__all__ = ["Candidate", "CandidateSource", "SOURCES", "rank_within", "production_rank", "from_scores",
           "from_values", "candidate_lists"]


@dataclass(frozen=True)
class Candidate:
    """``rank`` (n_pairs,): each pair's 1-based rank within its query; ``label``; what the join counted."""

    label: str
    rank: np.ndarray
    counts: dict
    notes: tuple = ()


def rank_within(value: np.ndarray, query: np.ndarray, tie_break: np.ndarray) -> np.ndarray:
    """1-based rank of each item within its query by ``value`` (descending), ties by ``tie_break`` (ascending)."""
    order = np.lexsort((tie_break, -np.asarray(value, np.float64), query))
    rank = np.empty(len(order), np.int64)
    q = query[order]
    start = np.r_[0, np.flatnonzero(q[1:] != q[:-1]) + 1]
    first = np.repeat(start, np.diff(np.r_[start, len(q)]))
    rank[order] = np.arange(len(order)) - first + 1
    return rank


def production_rank(t, pair_query: np.ndarray) -> np.ndarray:
    """Each pair's rank by its expected logged rank over its query's sessions, a session not showing it counting as
    rank D + 1 — the logging policy's order: a document shown once at the top of a query seen a thousand times
    ranks below one shown second every time (ties and never-shown pairs by code)."""
    n, _, rank_sum = t.per_pair()                           # padding cells (lists of varying length) count nothing
    sessions = np.bincount(pair_query[t.pairs[:, 0]], t.weight, int(pair_query.max()) + 1)[pair_query]
    expected = (rank_sum + (sessions - n) * (t.depth + 1)) / np.maximum(sessions, 1e-12)
    return rank_within(-np.where(n > 0, expected, np.inf), pair_query, np.arange(len(pair_query)))


def from_values(values: np.ndarray, label: str, pair_query: np.ndarray, *, production: np.ndarray) -> Candidate:
    """A candidate that ranks each query by ``values`` (one per pair; ties by the production order)."""
    return Candidate(label, rank_within(values, pair_query, production), {"ties": _ties(values, pair_query)})


def _ties(values, pair_query) -> int:
    """Queries with two documents of one value."""
    f = pd.DataFrame({"q": pair_query, "v": values})
    return int(f[f.duplicated(["q", "v"], keep=False)]["q"].nunique())


def from_scores(scores, pair_keys: pd.DataFrame, pair_query: np.ndarray, *, production: np.ndarray,
                label: str = "scores") -> Candidate:
    """The candidate of a scores file (:class:`~ultr_core.logs.scores.Scores`), joined to the log's pairs as text."""
    keys = pair_keys[["query_id", "doc_id"]].astype(str)
    s = scores.frame
    idx = pd.MultiIndex.from_frame(keys).get_indexer(pd.MultiIndex.from_frame(s[["query_id", "doc_id"]]))
    known_query = s["query_id"].isin(set(keys["query_id"])).to_numpy()
    no_query, no_doc = (idx < 0) & ~known_query, (idx < 0) & known_query
    value = np.full(len(keys), -np.inf)
    value[idx[idx >= 0]] = s["score"].to_numpy()[idx >= 0]
    scored_q = np.zeros(pair_query.max() + 1, bool)
    scored_q[pair_query[idx[idx >= 0]]] = True
    unscored_doc = scored_q[pair_query] & ~np.isfinite(value)
    unscored_q = int((~scored_q).sum())
    counts = {"scored_pairs": int((idx >= 0).sum()), "pairs_of_queries_not_in_the_log": int(no_query.sum()),
              "documents_the_log_never_shows": int(no_doc.sum()), "queries_without_scores": unscored_q,
              "unscored_documents_of_scored_queries": int(unscored_doc.sum()),
              "ties": _ties(value[np.isfinite(value)], pair_query[np.isfinite(value)]), **scores.counts}
    lines = s["line"].to_numpy()
    notes = list(scores.notes) + [n for n in (
        no_query.any() and f"{counted(no_query.sum(), 'scored pair')} of queries the log lacks left out "
                           f"({line_list(lines[no_query])})",
        no_doc.any() and f"{counted(no_doc.sum(), 'scored document')} the log never shows for their query left out — a "
                         f"candidate can only re-rank what the log shows ({line_list(lines[no_doc])})",
        unscored_q and f"{unscored_q:,} of the log's {scored_q.size:,} queries have no score: kept in production order",
        unscored_doc.any() and f"{counted(unscored_doc.sum(), 'document')} of scored queries have no score: ranked "
                               "after the scored ones, in production order",
        counts["ties"] and f"{counts['ties']:,} queries have tied scores: ties broken by the production order") if n]
    return Candidate(label, rank_within(value, pair_query, production), counts, tuple(notes))


def candidate_lists(rank: np.ndarray, pair_query: np.ndarray, n_queries: int, *, depth: int) -> np.ndarray:
    """(queries × depth) pair codes of each query's top ``depth`` under ``rank`` (−1 where a query has fewer)."""
    out = np.full((n_queries, depth), -1, np.int64)
    top = rank <= depth
    out[pair_query[top], rank[top] - 1] = np.flatnonzero(top)
    return out
