"""The identifiability report as typed, frozen records: one :class:`IdentifiabilityReport` per log, whose ``to_json()``
is ``ig --json`` and the pages' download (the keys of the JSON before these records, in their order).

A record's ``to_json()`` gives its JSON object, leaving out the optional parts it does not have; tables (the curves,
every factor's figures) are data frames and become lists (rows or columns) there.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields

import pandas as pd

from ultr_core.logs.outputs import JsonRecord

__all__ = ["AlternativeDocument", "Merge", "MergeSummary", "Swap", "InterventionSummary", "WeakLink",
           "DocumentCounts", "DocumentOrders", "ComponentLevels", "PracticalIdentifiability", "BiasCurves",
           "UsersReading", "PlannedSwap", "CertaintyPlanReport", "DocumentsFile", "IdentifiabilityReport"]


def _rows(frame: pd.DataFrame) -> list:
    return frame.to_dict("records")


def _columns(frame: pd.DataFrame) -> dict:
    return {c: frame[c].tolist() for c in frame.columns}


@dataclass(frozen=True, kw_only=True)
class AlternativeDocument(JsonRecord):
    """The components under the table's other document key, and whether that key changes the verdict."""

    document: str
    flag: str
    n_components: int
    n_documents: int
    identifiable: bool
    changes_verdict: bool
    message: str


@dataclass(frozen=True, kw_only=True)
class Merge(JsonRecord):
    """One proposed node merge (§4.1, eq. 3): two factors and their distance."""

    label_a: str
    label_b: str
    cost: float


@dataclass(frozen=True, kw_only=True)
class MergeSummary(JsonRecord):
    """Node merging's plan: the merges listed (at most the report's ``max_listed``), how many in all, their cost and
    the components after."""

    merges: tuple
    n_merges: int
    total_cost: float
    n_components_after: int

    def to_json(self) -> dict:
        return {"merges": list(self.merges), "n_merges": self.n_merges, "merge_total_cost": self.total_cost,
                "n_components_after_merge": self.n_components_after}


@dataclass(frozen=True, kw_only=True)
class Swap(JsonRecord):
    """One proposed node intervention (§4.2): show ``document`` (the file's own id) at ``to_label``."""

    document: object
    from_label: str
    to_label: str
    cost: float


@dataclass(frozen=True, kw_only=True)
class InterventionSummary(JsonRecord):
    """Node intervention's plan: the swaps listed, how many in all, their cost, the components after, and a warning
    where the costs could not be estimated."""

    swaps: tuple
    n_swaps: int
    total_cost: float
    n_components_after: int
    warning: str | None = None

    def to_json(self) -> dict:
        head = {} if self.warning is None else {"intervention_warning": self.warning}
        return {**head, "interventions": list(self.swaps), "n_interventions": self.n_swaps,
                "intervention_total_cost": self.total_cost, "n_components_after_intervention": self.n_components_after}


@dataclass(frozen=True, kw_only=True)
class WeakLink(JsonRecord):
    """A link (two factors, or one document) whose loss would raise the weakest factor's standard error most
    (``factor``: that factor, the one with the largest finite standard error)."""

    kind: str
    link: str
    share: float
    log_se_after: float | None
    disconnects: bool
    factor: str | None = None
    ALWAYS = ("log_se_after",)


@dataclass(frozen=True, kw_only=True)
class DocumentCounts(JsonRecord):
    never_clicked: int
    at_the_boundary: int


@dataclass(frozen=True, kw_only=True)
class DocumentOrders(JsonRecord):
    """Within-query document pairs and how many the log orders at 90 % (None where they were not compared)."""

    pairs: int | None
    resolved: int | None
    share: float | None
    note: str | None = None
    ALWAYS = ("pairs", "resolved", "share")


@dataclass(frozen=True, kw_only=True)
class ComponentLevels(JsonRecord):
    """Per component of two factors or more (``table``: component, factors, level, least_certain); components of one
    factor only counted."""

    single_factor: int
    table: pd.DataFrame = field(compare=False)

    def to_json(self) -> dict:
        return {"single_factor": self.single_factor, **_columns(self.table)}


@dataclass(frozen=True, kw_only=True)
class PracticalIdentifiability(JsonRecord):
    """How sure the log is, per factor (:func:`~ultr_core.identifiability.precision.practical_report`): the rule,
    the count per level, the weakest factors and links, the fit's convergence, the documents it left out, every
    factor's figures (``factors``: label, component, reference, log_se, identification, pbm_ml, fisher_lower,
    fisher_upper) and the document orders resolved."""

    rule: str
    band: str | None = None
    counts: dict = field(default_factory=dict)            #: level → factors
    reference_factors: int | None = None
    separated_factors: int | None = None
    weakest: tuple = ()
    weakest_links: tuple = ()                             #: WeakLink
    converged: bool | None = None
    decrement: float | None = None
    documents: DocumentCounts | None = None
    factors: pd.DataFrame | None = field(default=None, compare=False)
    components: ComponentLevels | None = None
    disagreement: str | None = None
    #: the curve factors drawn without a band (no information reaches them), said in a sentence
    no_band: str | None = None
    note: str | None = None
    document_orders: DocumentOrders | None = None

    def to_json(self) -> dict:
        out = super().to_json()
        if self.factors is not None:
            out["factors"] = _columns(self.factors)
        return out


@dataclass(frozen=True, kw_only=True)
class BiasCurves(JsonRecord):
    """The observation curve of every component (``curves``: one row per factor — component, factor, label, the bias
    columns, estimate and band, impressions and the practical figures) by ``method``, with its notes."""

    method: str
    n_bootstrap: int
    alpha: float
    notes: tuple
    curves: pd.DataFrame = field(compare=False)
    practical: PracticalIdentifiability | None = None

    def to_json(self) -> dict:
        out = {"method": self.method, "n_bootstrap": self.n_bootstrap, "alpha": self.alpha,
               "notes": list(self.notes), "curves": _rows(self.curves)}
        if self.practical is not None:
            out["practical_identifiability"] = self.practical
        return out


@dataclass(frozen=True, kw_only=True)
class UsersReading(JsonRecord):
    """What the verdict means for users who click as ``model`` (a key of the click-model table)."""

    model: str
    label: str
    meaning: str
    condition: str | None
    factors_with_fewer_than_two_documents: int | None = None
    thin_factors: tuple | None = None
    verdict: str = ""
    ALWAYS = ("condition",)


@dataclass(frozen=True, kw_only=True)
class PlannedSwap(JsonRecord):
    """One step of the certainty plan: show ``document`` at ``show_at`` and the standard errors predicted after."""

    document: str
    show_at: str
    shown_at: tuple
    impressions: int
    worst_se_after: float
    mean_se_after: float


@dataclass(frozen=True, kw_only=True)
class CertaintyPlanReport(JsonRecord):
    """``ig --certainty N``: the greedy plan of swaps that buys the most certainty, in the log's labels."""

    objective: str
    impressions_per_swap: int
    weakest_factor: str
    reference: str
    worst_se_before: float
    mean_se_before: float
    swaps: tuple                                          #: PlannedSwap
    factors: tuple
    se_before: tuple
    se_after: tuple
    rule: str
    #: why the plan is short or leaves factors out (no candidate left; factors no informative document reaches)
    note: str | None = None


@dataclass(frozen=True, kw_only=True)
class DocumentsFile(JsonRecord):
    """``ig --documents FILE``: where the relevance table went, its rows and the count per status."""

    path: str
    rows: int
    status: dict


@dataclass(frozen=True, kw_only=True)
class IdentifiabilityReport(JsonRecord):
    """One log's identifiability report: the graph's statistics and verdict, the document key's alternative, the
    repairs asked for, the curves with their practical identifiability, and — from
    :func:`~ultr_core.tasks.check_log` — the reader's notes, the source, the users' reading, the profile, the
    certainty plan, the documents file and the judges' agreement."""

    n_rows: int
    n_documents: int
    n_nodes: int                                          #: bias factors
    n_components: int
    identifiable: bool
    largest_share: float
    component_sizes: tuple
    bias_columns: tuple
    n_clicks: int
    document_columns: tuple
    document_key: str
    alternative_document: AlternativeDocument | None = None
    merge_features: str = ""
    merge: MergeSummary | None = None
    intervention_skipped: str | None = None
    intervention: InterventionSummary | None = None
    position_bias: BiasCurves | None = None
    notes: tuple | None = None
    source: str | None = None
    users: UsersReading | None = None
    profile: object = None                                #: ProfileInterval, in the log's labels
    certainty_plan: CertaintyPlanReport | None = None
    documents_file: DocumentsFile | None = None
    judgements: object = None                     #: JudgedRelevance (:func:`~.judgement_agreement.ig_judgements`)

    def to_json(self) -> dict:
        """``ig --json``'s object (strict JSON through :func:`ultr_core.logs.outputs.json_text`)."""
        out = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if v is None:
                continue
            if f.name in ("merge", "intervention"):
                out.update(v.to_json())
            else:
                out[f.name] = list(v) if isinstance(v, tuple) else v
        return out
