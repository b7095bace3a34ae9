"""What :func:`~ultr_core.counterfactual.evaluate.evaluate_ranking` returns, as typed, frozen records: one
:class:`RankingReport` per valued candidate, whose ``to_json()`` is ``evaluate --json`` (its keys, in their order).
The estimators' entries are :class:`~ultr_core.counterfactual.estimators.EstimatorResult` and the log's own value an
:class:`~ultr_core.evaluation.intervals.Interval`, as before."""
from __future__ import annotations

from dataclasses import dataclass, fields, replace

__all__ = ["CandidateSummary", "SlotSupport", "LogPositionBias", "PropensitySource", "RankingReport"]


class _Record:
    def with_(self, **changes):
        """A copy with ``changes`` (the record is frozen)."""
        return replace(self, **changes)

    def to_json(self) -> dict:
        return {f.name: list(v) if isinstance(v, tuple) else v
                for f in fields(self) if (v := getattr(self, f.name)) is not None}


@dataclass(frozen=True, kw_only=True)
class CandidateSummary(_Record):
    """The candidate ranking: its label, what reading it counted (scored pairs, ties, …) and its notes."""

    label: str
    counts: dict
    notes: tuple = ()

    def to_json(self) -> dict:
        return {"label": self.label, "counts": self.counts, "notes": list(self.notes)}


@dataclass(frozen=True, kw_only=True)
class SlotSupport(_Record):
    """Shares of the candidate's top-k slots (session-weighted) that each support rule accepts."""

    any_position: float
    identified: float
    at_position: float
    examined: float
    impressed: float


@dataclass(frozen=True, kw_only=True)
class LogPositionBias(_Record):
    """The PBM fit's examination per rank, relative to rank 1, and the components the log's positions form."""

    theta: tuple
    components: int


@dataclass(frozen=True, kw_only=True)
class PropensitySource(_Record):
    """Where the policy-aware estimators' logging propensities π₀ come from, in words."""

    source: str
    text: str
    varied_cells: int | None = None

    def to_json(self) -> dict:
        head = {"source": self.source}
        if self.varied_cells is not None:
            head["varied_cells"] = self.varied_cells
        return {**head, "text": self.text}


@dataclass(frozen=True, kw_only=True)
class RankingReport(_Record):
    """A candidate valued on a log: the log, the settings, the notes, the candidate, the log's own value, one
    :class:`~ultr_core.counterfactual.estimators.EstimatorResult` per estimator (key → result), the support, the
    position bias, the propensities' source and — with judgements — the judged DCG (``judged``, as
    :func:`~ultr_core.counterfactual.judged_dcg.judged_value` gives it)."""

    log: str
    sessions: int
    queries: int
    k: int
    model: str
    n_boot: int
    seed: int
    level: float
    notes: tuple
    candidate: CandidateSummary
    logged: object                       #: Interval
    estimators: dict
    support: SlotSupport
    position_bias: LogPositionBias
    logging_propensities: PropensitySource
    judged: dict | None = None

    @property
    def all_notes(self) -> tuple:
        """The run's notes, then the candidate's."""
        return (*self.notes, *self.candidate.notes)
