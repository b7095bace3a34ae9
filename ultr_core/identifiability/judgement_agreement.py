"""``ig LOG --judgements FILE`` (issue #47, item 1): the identifiability fit's relevance per document scored against
editorial judgements — over all judged documents, where documents of different components of the graph are
compared on scales the log does not tie together (Identifiability Matters, Thm 1), and within each component, where
it does.  Documents whose relevance has no interval (``no clicks``, ``clicked at every impression``, ``not linked``)
are counted and left out.

>>> import pandas as pd
>>> from ultr_core.logs.judgements import read_judgements
>>> frame = pd.DataFrame({"query_id": ["q"] * 4, "doc_id": list("abcd"), "component": [0, 0, 0, 1],
...                       "relevance": [0.9, 0.5, 0.1, 0.99], "status": ["ok"] * 4})
>>> j = read_judgements(b"q 0 a 2\\nq 0 b 1\\nq 0 c 0\\nq 0 d 0\\n", name="qrels")
>>> r = ig_judgements(frame, j, n_boot=20)
>>> r.pairs_scored, r.within_components.components, r.within_components.mean_spearman
(4, 1, 1.0)

A relevance equal within every query ranks nothing: the figure says so rather than failing.

>>> flat = ig_judgements(frame.assign(relevance=0.5), j, n_boot=20)
>>> judgement_lines(flat)[-1].count("— (constant estimate)")
3
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from ultr_core.clickmodels.agreement_records import FIGURES, JudgedRelevance, JudgementsFile, WithinComponents
from ultr_core.clickmodels.judgement_agreement import agreement

__all__ = ["ig_judgements", "judgement_lines", "MIN_PER_COMPONENT"]

#: judged documents a component needs for its own Spearman correlation
MIN_PER_COMPONENT = 3


def ig_judgements(frame: pd.DataFrame, judgements, *, seed: int = 0, n_boot: int = 200) -> JudgedRelevance:
    """Agreement of ``frame``'s relevance (:func:`~ultr_core.identifiability.precision.documents_frame`) with the
    judgements, joined on (query_id, doc_id) as text."""
    if "query_id" not in frame or "doc_id" not in frame:
        return JudgedRelevance(note="judgements are per (query, document): run ig with --document query")
    keys = pd.MultiIndex.from_frame(frame[["query_id", "doc_id"]].astype(str))
    j = judgements.frame
    idx = keys.get_indexer(pd.MultiIndex.from_frame(j[["query_id", "doc_id"]].astype(str)))
    rows = frame.iloc[idx[idx >= 0]].assign(grade=j["grade"].to_numpy()[idx >= 0])
    usable = rows["status"].isin(["ok"]).to_numpy()
    out = JudgedRelevance(file=JudgementsFile.of(judgements, with_counts=False), matched=int((idx >= 0).sum()),
                          unmatched=int((idx < 0).sum()), left_out=rows.loc[~usable, "status"].value_counts().to_dict(),
                          pairs_scored=int(usable.sum()))
    rows = rows[usable]
    if len(rows) < 3 or rows["grade"].nunique() < 2:
        return out.with_(note="fewer than 3 judged documents with an estimate, or one grade only: nothing to score")
    agree = agreement({"ig": rows["relevance"].to_numpy()}, rows["grade"].to_numpy(), rows["query_id"].to_numpy(),
                      logged_rank=np.zeros(len(rows)), n_boot=n_boot, seed=seed)["ig"]
    per = [stats.spearmanr(g["relevance"], g["grade"]).statistic for _, g in rows.groupby("component")
           if len(g) >= MIN_PER_COMPONENT and g["grade"].nunique() > 1 and g["relevance"].nunique() > 1]
    within = WithinComponents(components=len(per), mean_spearman=float(np.mean(per)) if per else None,
                              rule=f"Spearman within each component with ≥ {MIN_PER_COMPONENT} judged documents of "
                                   "two grades or more, averaged")
    return out.with_(agreement=agree, within_components=within)


def judgement_lines(rep: JudgedRelevance) -> list[str]:
    """The text report's lines."""
    lines = [] if rep.file is None else [f"note: judgements: {n}" for n in rep.file.notes]
    if rep.matched is not None:
        left = ", ".join(f"{v} {k}" for k, v in rep.left_out.items())
        lines.append(f"judgements: {rep.matched:,} matched, {rep.unmatched:,} not in the log; "
                     f"{rep.pairs_scored:,} scored" + (f" ({left} left out)" if left else ""))
    if rep.note is not None:
        return lines + [rep.note]
    figures = ", ".join(f"{title} {rep.agreement.text(key)}" for title, key in FIGURES)
    w = rep.within_components
    lines.append(f"IG relevance against the judges: {figures} (90 % intervals over queries; across components the "
                 "scales are not tied together)")
    if w.components:
        lines.append(f"within components: mean Spearman {w.mean_spearman:+.3f} over {w.components} "
                     f"component(s) ({w.rule})")
    return lines
