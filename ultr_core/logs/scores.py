"""A candidate ranking as a scores file (issue #47, item 4): one row per (query, document) with a score, CSV or TSV
with a header (``query_id, doc_id, score``; the judgements' name aliases and ``score``, ``prediction``, ``pred``).
Every row that is not kept is counted and named by its line numbers, never its content: unreadable rows, scores
that are NaN or infinite, duplicates (the first is kept).  Joining the scores to a log (pairs the log never shows,
queries it lacks, ties) is :mod:`ultr_core.counterfactual.candidate`'s count.

>>> s = read_scores(b"qid,docid,score\\nq1,a,2.5\\nq1,b,nan\\nq1,a,1\\n", "scores.csv")
>>> len(s.frame), s.counts["not_finite"], s.counts["duplicates"]
(1, 1, 1)
>>> s.notes[0]
'1 row with a NaN or infinite score left out (line 3)'
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ultr_core.errors import DataFormatError
from ultr_core.logs.ids import ID_TRIM
from ultr_core.logs.judgements import DOC_NAMES, QUERY_NAMES, _count_note, _text_table, read_text

__all__ = ["Scores", "read_scores", "SCORE_NAMES", "PAGE_MAX_BYTES", "side_file_problem"]

#: header names the score column may carry (lower case)
SCORE_NAMES = ("score", "scores", "prediction", "pred", "predicted")
#: the largest scores or judgements file a page parses (≈ 2.5 M rows; pandas holds a few times the text): larger ones
#: go through the CLI, which reads up to 512 MB
PAGE_MAX_BYTES = 64 * 2**20


def side_file_problem(n_bytes: int, what: str) -> str | None:
    """Why a page will not parse a ``what`` file of ``n_bytes`` (None: it will).

    >>> side_file_problem(10, "scores") is None, side_file_problem(PAGE_MAX_BYTES + 1, "scores")[:30]
    (True, 'the scores file is larger than')
    """
    if n_bytes <= PAGE_MAX_BYTES:
        return None
    return (f"the {what} file is larger than {PAGE_MAX_BYTES // 2**20} MB, the most a page reads beside a log; "
            f"the command line reads up to 512 MB")


@dataclass(frozen=True)
class Scores:
    """The scores kept (``frame``: query_id, doc_id as text, score float, line), the counts of every row left out
    and one sentence per kind (``notes``)."""

    frame: pd.DataFrame
    counts: dict
    notes: tuple


def _frame(text: str, name: str) -> pd.DataFrame:
    f, bad = _text_table(text, name)
    cols = {str(c).strip().lower(): c for c in f.columns}
    wanted = (QUERY_NAMES, DOC_NAMES, SCORE_NAMES)
    pick = [next((cols[n] for n in names if n in cols), None) for names in wanted]
    if None in pick:
        i = pick.index(None)
        raise DataFormatError(name, f"the header names no {['query', 'document', 'score'][i]} column (accepted: "
                                    f"{', '.join(wanted[i])})")
    out = f[pick + ["line"]].set_axis(["query_id", "doc_id", "score", "line"], axis=1)
    out.attrs["bad_lines"] = bad
    return out


def read_scores(data: bytes, name: str = "scores") -> Scores:
    """The scores in ``data`` (UTF-8 CSV/TSV text with a header)."""
    text = read_text(data, name, "scores")
    f = _frame(text, name)
    ragged = f.attrs["bad_lines"]
    blank = (f["query_id"].str.strip() == "") | (f["doc_id"].str.strip() == "")
    number = pd.to_numeric(f["score"].str.strip(), errors="coerce").to_numpy(np.float64)
    unreadable = blank | (pd.isna(number) & ~f["score"].str.strip().str.lower().isin(["nan", "inf", "-inf"]))
    not_finite = ~unreadable & ~np.isfinite(number)
    keep = f[~unreadable & ~not_finite].assign(score=number[~unreadable & ~not_finite])
    keep = keep.assign(query_id=keep["query_id"].str.strip(ID_TRIM), doc_id=keep["doc_id"].str.strip(ID_TRIM))
    dup = keep.duplicated(["query_id", "doc_id"], keep="first")
    kept = keep[~dup].reset_index(drop=True)
    if kept.empty:
        raise DataFormatError(name, "no score is left: every row was unreadable, NaN or infinite")
    counts = {"unreadable": int(unreadable.sum()) + len(ragged), "not_finite": int(not_finite.sum()),
              "duplicates": int(dup.sum())}
    notes = [_count_note(counts["unreadable"], "unreadable (not query, document, score)",
                         sorted([*f.loc[unreadable, "line"], *ragged])),
             _count_note(counts["not_finite"], "with a NaN or infinite score left out", f.loc[not_finite, "line"]),
             _count_note(counts["duplicates"], "repeating a (query, document) pair left out, the first kept",
                         keep.loc[dup, "line"])]
    return Scores(kept, counts, tuple(n for n in notes if n))
