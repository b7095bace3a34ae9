"""What :func:`~ultr_core.counterfactual.evaluate.evaluate_ranking` returns, as typed, frozen records: one
:class:`RankingReport` per valued candidate, whose ``to_json()`` is ``evaluate --json`` (its keys, in their order).
The estimators' entries are :class:`~ultr_core.counterfactual.estimators.EstimatorResult` and the log's own value an
:class:`~ultr_core.evaluation.intervals.Interval`, as before."""
from __future__ import annotations

from dataclasses import dataclass

from ultr_core.logs.outputs import JsonRecord

__all__ = ["CandidateSummary", "SlotSupport", "LogPositionBias", "PropensitySource", "RankingReport"]


@dataclass(frozen=True, kw_only=True)
class CandidateSummary(JsonRecord):
    """The candidate ranking: its label, what reading it counted (scored pairs, ties, …) and its notes."""

    label: str
    counts: dict
    notes: tuple = ()


@dataclass(frozen=True, kw_only=True)
class SlotSupport(JsonRecord):
    """Shares of the candidate's top-k slots (session-weighted) that each support rule accepts."""

    any_position: float
    identified: float
    at_position: float
    examined: float
    impressed: float


@dataclass(frozen=True, kw_only=True)
class LogPositionBias(JsonRecord):
    """The PBM fit's examination per rank, relative to rank 1, and the components the log's positions form."""

    theta: tuple
    components: int


@dataclass(frozen=True, kw_only=True)
class PropensitySource(JsonRecord):
    """Where the policy-aware estimators' logging propensities π₀ come from, in words."""

    source: str
    varied_cells: int | None = None
    text: str


@dataclass(frozen=True, kw_only=True)
class RankingReport(JsonRecord):
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
