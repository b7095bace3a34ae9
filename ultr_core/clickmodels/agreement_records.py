"""The judges' agreement as typed records (issue #59): one ranking's :class:`Agreement` with editorial judgements, the
clicks-against-judges :class:`JudgeVerdict`, the click models' :class:`JudgementReport` (``click-models --judgements``)
and the identifiability fit's :class:`JudgedRelevance` (``ig --judgements``).  ``to_json()`` is the CLI's JSON and the
pages' downloads: the keys and their order as before (``ndcg@10`` included).

>>> from ultr_core.evaluation.intervals import Interval
>>> a = Agreement(pairs=5, spearman=Interval(0.9, 0.8, 1.0), kendall=Interval(0.8, 0.6, 1.0),
...               ndcg=Interval(1.0, 1.0, 1.0))
>>> list(a.to_json()), a.figure("ndcg@10").estimate, a.text("spearman")
(['pairs', 'spearman', 'kendall', 'ndcg@10'], 1.0, '+0.900 [+0.800, +1.000]')
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ultr_core.evaluation.intervals import Interval, interval_text
from ultr_core.logs.outputs import JsonRecord

__all__ = ["Agreement", "JudgeVerdict", "JudgementsFile", "PriorDominated", "JudgementReport", "WithinComponents",
           "JudgedRelevance", "FIGURES"]

#: the figures an agreement reports: (column title, key) — the key is the JSON's and :meth:`Agreement.figure`'s
FIGURES = (("Spearman", "spearman"), ("Kendall", "kendall"), ("nDCG@10", "ndcg@10"))


@dataclass(frozen=True, kw_only=True)
class Agreement(JsonRecord):
    """One ranking's agreement with the judges over ``pairs`` labelled (query, document) pairs: Spearman and Kendall
    with the grades, mean nDCG@k over queries, each a 90 % interval over resamples of the queries.  ``draws``: the
    Spearman resamples (for paired differences; not part of the JSON)."""

    pairs: int
    spearman: Interval
    kendall: Interval
    ndcg: Interval
    k: int = 10
    #: the queries the intervals resample
    queries: int | None = None
    draws: np.ndarray | None = field(default=None, repr=False, compare=False)

    def figure(self, key: str) -> Interval:
        """The figure named as in the JSON: ``spearman``, ``kendall`` or ``ndcg@k``."""
        return self.ndcg if key == f"ndcg@{self.k}" else getattr(self, key)

    def text(self, key: str) -> str:
        """One figure as ``est [lo, hi]``; "— (constant estimate)" where the Spearman has no value (an estimate
        constant within every query ranks nothing, and its nDCG would be the order the documents came in)."""
        s = self.spearman.estimate
        if s is None or not np.isfinite(s):
            return "— (constant estimate)"
        return interval_text(self.figure(key), "{:+.3f}")

    def to_json(self) -> dict:
        return {"pairs": self.pairs, "spearman": self.spearman.to_json(), "kendall": self.kendall.to_json(),
                f"ndcg@{self.k}": self.ndcg.to_json()}


@dataclass(frozen=True, kw_only=True)
class JudgeVerdict(JsonRecord):
    """Which model fits the held-out clicks best (``clicks``), which agrees best with the judges (``judges``), the
    rule; where the two differ, their Spearman difference with its interval and the verdict read by the rule; and
    the whole reading as sentences (``text``)."""

    clicks: str
    judges: str
    rule: str
    difference: float | None = None
    lower: float | None = None
    upper: float | None = None
    verdict: str | None = None
    text: str = ""

    def to_json(self) -> dict:
        head = {"clicks": self.clicks, "judges": self.judges, "rule": self.rule}
        if self.verdict is not None:        # the two differ: the difference read by the rule (bounds null if none)
            head.update(difference=self.difference, lower=self.lower, upper=self.upper, verdict=self.verdict)
        return {**head, "text": self.text}


@dataclass(frozen=True, kw_only=True)
class JudgementsFile(JsonRecord):
    """What was read of a judgements file: its format (when known), the judgements kept, the rows left out by kind
    and one sentence per kind."""

    format: str | None = None
    rows: int
    counts: dict = field(default_factory=dict)
    notes: tuple = ()

    @classmethod
    def of(cls, judgements, *, with_counts: bool = True) -> "JudgementsFile":
        """From a parsed :class:`~ultr_core.logs.judgements.Judgements` (``with_counts``: its format and counts)."""
        return cls(format=judgements.format if with_counts else None, rows=judgements.rows,
                   counts=dict(judgements.counts) if with_counts else {}, notes=tuple(judgements.notes))

    def to_json(self) -> dict:
        head = {} if self.format is None else {"format": self.format}
        return {**head, "rows": self.rows, **self.counts, "notes": list(self.notes)}


@dataclass(frozen=True, kw_only=True)
class PriorDominated(JsonRecord):
    """The prior-dominated rule, how many judged pairs it flags and whether they were scored anyway."""

    rule: str
    matched_and_flagged: int
    included: bool


@dataclass(frozen=True, kw_only=True)
class JudgementReport(JsonRecord):
    """``click-models --judgements``: the file's counts, how its pairs met the log's, the prior-dominated rule and
    counts, and — when enough pairs are scored — the verdict (None with fewer than two models) and the logged
    order's and raw CTR's agreement; else ``note`` says why nothing was scored.  Each model's own agreement is its
    :attr:`~ultr_core.clickmodels.compare.ModelFit.judgements`."""

    file: JudgementsFile
    matched_pairs: int
    unmatched_judgements: int
    judgements_of_queries_not_in_the_log: int
    prior_dominated: PriorDominated
    pairs_scored: int
    note: str | None = None
    verdict: JudgeVerdict | None = None
    logged_order: Agreement | None = None
    ctr: Agreement | None = None

    def to_json(self) -> dict:
        out = {"file": self.file.to_json(), "matched_pairs": self.matched_pairs,
               "unmatched_judgements": self.unmatched_judgements,
               "judgements_of_queries_not_in_the_log": self.judgements_of_queries_not_in_the_log,
               "prior_dominated": self.prior_dominated.to_json(), "pairs_scored": self.pairs_scored}
        if self.note is not None:
            return {**out, "note": self.note}
        return {**out, "verdict": None if self.verdict is None else self.verdict.to_json(),
                "logged_order": self.logged_order.to_json(), "ctr": self.ctr.to_json()}


@dataclass(frozen=True, kw_only=True)
class WithinComponents(JsonRecord):
    """The mean Spearman within the identifiability graph's components (where the log ties the scales together)."""

    components: int
    mean_spearman: float | None
    rule: str

    ALWAYS = ("mean_spearman",)


@dataclass(frozen=True, kw_only=True)
class JudgedRelevance(JsonRecord):
    """``ig --judgements``: the file's rows and notes, how many judgements met the log's documents, those left out
    by status and the pairs scored; the agreement over all of them (its figures flattened into the JSON) and within
    components — or ``note`` saying why nothing was scored (alone when the documents are not per query)."""

    file: JudgementsFile | None = None
    matched: int | None = None
    unmatched: int | None = None
    left_out: dict | None = None
    pairs_scored: int | None = None
    note: str | None = None
    agreement: Agreement | None = None
    within_components: WithinComponents | None = None

    def to_json(self) -> dict:
        out = {} if self.file is None else {
            "file": self.file.to_json(), "matched": self.matched, "unmatched": self.unmatched,
            "left_out": dict(self.left_out), "pairs_scored": self.pairs_scored}
        if self.note is not None:
            return {**out, "note": self.note}
        return {**out, **self.agreement.to_json(), "within_components": self.within_components.to_json()}
