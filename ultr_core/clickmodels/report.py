"""The typed result of a click-model comparison: one :class:`ModelFit` per fitted model (or ranker read as one) and
the :class:`ClickModelComparison` that holds them — each writes the JSON keys ``click-models --json`` has always had.

>>> fit = ModelFit(label="PBM", log_likelihood=-0.31, perplexity=1.2, perplexity_by_rank=(1.3, 1.1),
...                conditional_perplexity=1.2, conditional_perplexity_by_rank=(1.3, 1.1), bias={}, seconds=0.01)
>>> sorted(fit.to_json())[:4], "converged" in fit.to_json()
(['bias', 'conditional_perplexity', 'conditional_perplexity_by_rank', 'label'], False)
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields, replace

__all__ = ["ModelFit", "ClickModelComparison", "SCORE_FIELDS"]

#: the held-out scores of :func:`~ultr_core.clickmodels.evaluation.score_models`, one field each of :class:`ModelFit`
SCORE_FIELDS = ("log_likelihood", "perplexity", "perplexity_by_rank", "conditional_perplexity",
                "conditional_perplexity_by_rank")


@dataclass(frozen=True, kw_only=True)
class ModelFit:
    """One fitted click model (or a ranker read as one) scored on the held-out sessions: its scores, its bias
    parameters (``model.bias()``: parameter name → values), the seconds its fit and scoring took, and what applies to
    it — the learned prior it chose, whether its optimiser converged (the models fitted by an optimiser only), its
    Fisher summary, its agreement with the judges, and for a ranker its colour and kind."""

    label: str
    log_likelihood: float
    perplexity: float
    perplexity_by_rank: tuple
    conditional_perplexity: float
    conditional_perplexity_by_rank: tuple
    bias: dict
    seconds: float
    prior: dict | None = None                #: the learned prior's choice (:mod:`~ultr_core.clickmodels.prior`)
    converged: bool | None = None            #: None: fitted by counting or a fixed number of EM steps
    identifiability: dict | None = None      #: :func:`~ultr_core.clickmodels.information.information_summary`
    judgements: dict | None = None           #: :func:`~ultr_core.clickmodels.judgement_agreement.agreement`'s figures
    colour: str | None = None                #: a ranker's colour (the algorithm table's)
    kind: str | None = None                  #: "ranker" for a ranker read as a click model

    @classmethod
    def scored(cls, label: str, scores: dict, **rest) -> "ModelFit":
        """From :func:`~ultr_core.clickmodels.evaluation.score_models`'s scores of one model."""
        return cls(label=label, **{k: tuple(v) if isinstance(v, list) else float(v)
                                   for k, v in scores.items() if k in SCORE_FIELDS}, **rest)

    def with_(self, **changes) -> "ModelFit":
        """A copy with ``changes`` (the record is frozen)."""
        return replace(self, **changes)

    def to_json(self) -> dict:
        """The entry ``models[key]`` (or ``rankers[key]``) of ``click-models --json``: what applies, in field order."""
        return {f.name: list(v) if isinstance(v, tuple) else v
                for f in fields(self) if (v := getattr(self, f.name)) is not None}


@dataclass(frozen=True, kw_only=True)
class ClickModelComparison:
    """:func:`~ultr_core.clickmodels.compare.compare_click_models`'s result: the sessions it trained and scored on,
    what the readers repaired (``notes``), every model's :class:`ModelFit` (and every ranker's), the best fit with
    its paired interval, the judgements report (with judgements) and ``relevance`` — one row per (query_id, doc_id)
    with training impressions, clicks and each model's estimate (not part of the JSON: a table of its own)."""

    train_sessions: int
    test_sessions: int
    dropped_test_sessions: int
    depth: int
    notes: tuple
    models: dict = field(default_factory=dict)           #: key → ModelFit
    rankers: dict = field(default_factory=dict)          #: key → ModelFit (rankers read as click models)
    best_fit: object = None                              #: FitComparison (None: no model scored)
    judgements: dict | None = None                       #: :func:`~.judgement_agreement.judgement_report`
    relevance: object = None                             #: pandas.DataFrame

    @property
    def scored(self) -> dict:
        """Every scored entry, the models' then the rankers': key → ModelFit."""
        return {**self.models, **self.rankers}

    def with_(self, **changes) -> "ClickModelComparison":
        """A copy with ``changes`` (the record is frozen)."""
        return replace(self, **changes)

    def to_json(self) -> dict:
        """``click-models --json``: the sessions, notes, ``models`` (and ``rankers`` when there are any),
        ``best_fit`` and ``judgements`` (with judgements); ``relevance`` is its own table."""
        out = {"train_sessions": self.train_sessions, "test_sessions": self.test_sessions,
               "dropped_test_sessions": self.dropped_test_sessions, "depth": self.depth, "notes": list(self.notes),
               "models": {k: m.to_json() for k, m in self.models.items()}}
        if self.rankers:
            out["rankers"] = {k: m.to_json() for k, m in self.rankers.items()}
        out["best_fit"] = self.best_fit
        if self.judgements is not None:
            out["judgements"] = self.judgements
        return out
